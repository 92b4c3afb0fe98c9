//! The renderings, read as a user reads them: the tables are built from
//! datasets (`analysis::tables`) and rendered the way `cmdscope compare`
//! renders each format.

use std::collections::HashMap;

use super::*;
use crate::analysis::comparison::SessionVariation;
use crate::analysis::tables::fixtures::{bench, dataset, series, slowdown_pair, spread, wall};
use crate::analysis::tables::{build, CompareOptions};
use crate::cli::compare::CompareFormat;
use crate::import::dataset::Dataset;

/// What `cmdscope compare` prints and decides, as the assertions read it.
struct CompareOutput {
    rendered: String,
    gate_failed: bool,
    gate_failures: Vec<String>,
    tables: Vec<MetricTable>,
    notes: Vec<String>,
}

fn opts(format: CompareFormat, gate: Option<f64>) -> (CompareFormat, CompareOptions) {
    let o = CompareOptions {
        fail_if_slower: gate,
        ..CompareOptions::default()
    };
    (format, o)
}

fn run(datasets: &[Dataset], (format, o): &(CompareFormat, CompareOptions)) -> CompareOutput {
    let t = build(datasets, o);
    let rendered = match format {
        CompareFormat::Text => render_text(&t),
        CompareFormat::Markdown => render_markdown(&t),
        CompareFormat::Csv => render_csv(&t).expect("csv"),
        CompareFormat::Json => render_json(&t).expect("json"),
    };
    CompareOutput {
        rendered,
        gate_failed: t.gate_failed(),
        gate_failures: gate_failures(&t),
        tables: t.tables,
        notes: t.notes.iter().map(note).collect(),
    }
}

fn only_table(out: &CompareOutput) -> &MetricTable {
    assert_eq!(out.tables.len(), 1, "{:?}", out.tables);
    &out.tables[0]
}

/// The tables `compare` builds with this gate (None: no gate).
fn gated(datasets: &[Dataset], gate: Option<f64>) -> Tables {
    build(datasets, &opts(CompareFormat::Text, gate).1)
}

/// The words of the reasons `analysis::tables`' test of the same name
/// checks: what `compare` refuses a gate that judged nothing with.
#[test]
fn a_candidate_the_gate_compared_nothing_of_is_named() {
    let d = crate::analysis::tables::fixtures::renamed_candidate();
    // Without a gate there is nothing to refuse.
    assert!(gated(&d, None).unjudged.is_empty());
    let out = gated(&d, Some(5.0));
    assert_eq!(out.unjudged.len(), 1, "{:?}", out.unjudged);
    let line = &unjudged(&out.unjudged);
    assert!(
        line.starts_with("the gate compared nothing between 'old' and 'renamed'")
            && line.contains("only in 'old': 'a'; only in 'renamed': 'b'"),
        "{line}"
    );
    // Matched, but Go's sec/op against cmdscope's wall time.
    let go = dataset(
        "go",
        vec![bench("a", vec![series("sec/op", "s", false, spread(0.1))])],
    );
    let out = gated(&[d[0].clone(), go], Some(5.0));
    assert!(
        unjudged(&out.unjudged)
            .ends_with("(their wall times are not the same metric in the same unit)"),
        "{:?}",
        out.unjudged
    );
    // Many names are cut short, one line either way.
    let many: Vec<crate::import::dataset::Benchmark> = (0..10)
        .map(|i| bench(&format!("n{i}"), vec![wall(0.1)]))
        .collect();
    let d = vec![
        dataset("old", vec![bench("a", vec![wall(0.1)])]),
        dataset("new", many),
    ];
    let out = gated(&d, Some(5.0));
    assert!(
        unjudged(&out.unjudged).contains("'n0', 'n1', 'n2' and 7 more"),
        "{:?}",
        out.unjudged
    );
}

// ----- pure helpers (no statistics needed) ---------------------------------------

#[test]
fn human_units() {
    assert_eq!(crate::units::compact(1.234e-7, "s"), "123.4ns");
    assert_eq!(crate::units::compact(1.234e-6, "s"), "1.234µs");
    assert_eq!(crate::units::compact(0.1203, "s"), "120.3ms");
    assert_eq!(crate::units::compact(12.345, "s"), "12.35s");
    assert_eq!(crate::units::compact(0.0, "s"), "0s");
    assert_eq!(crate::units::compact(512.0, "B"), "512B");
    assert_eq!(crate::units::compact(1536.0, "B"), "1.500KiB");
    assert_eq!(crate::units::compact(24117248.0, "B"), "23.00MiB");
    assert_eq!(
        crate::units::compact(3.0 * 1024f64.powi(3), "B"),
        "3.000GiB"
    );
    assert_eq!(crate::units::compact(3.0, ""), "3");
    assert_eq!(crate::units::compact(2.5, ""), "2.500");
    assert_eq!(crate::units::compact(5012.0, ""), "5.012k");
    assert_eq!(crate::units::compact(4_100_000.0, ""), "4.100M");
    assert_eq!(crate::units::compact(12.5, "MB/s"), "12.50");
    assert_eq!(crate::units::compact(1967.0, "MB/s"), "1967");
    // Rounding that carries into a new digit keeps four significant digits.
    assert_eq!(crate::units::significant(999.96, 4), "1000");
    assert_eq!(crate::units::significant(9.99996, 4), "10.00");
}

// ----- comparisons (need the stats implementation) --------------------------------

#[test]
fn clear_slowdown_is_slower_and_gates() {
    let d = slowdown_pair();
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    let t = only_table(&out);
    assert_eq!(t.metric, "time_wall_clock");
    assert_eq!(t.rows.len(), 2);
    for r in &t.rows {
        let c = r.comparisons[1].as_ref().expect("compared");
        assert!(r.comparisons[0].is_none());
        let a = &c.result;
        assert_eq!(a.verdict, Verdict::Slower, "{r:?}");
        assert!(a.significant);
        // Bonferroni over the column's two rows.
        assert_eq!((a.family, a.level), (2, 0.025));
        assert!((a.confidence - 0.975).abs() < 1e-12);
        let delta = c.change_pct().unwrap();
        assert!((delta - 20.0).abs() < 1e-9, "{delta}");
        assert!((a.ratio - 1.2).abs() < 1e-9);
        let [lo, hi] = a.ratio_ci;
        assert!(lo <= 1.2 && 1.2 <= hi && lo > 1.1, "[{lo}, {hi}]");
        assert!(a.p_value < a.level, "{c:?}");
        assert_eq!(a.session_variation, SessionVariation::NotIncluded);
        assert!(c.gate_failed);
    }
    let g = t.geomean.as_ref().expect("geomean of two rows");
    assert_eq!(g.rows, 2);
    assert!((g.delta_pct[1].unwrap() - 20.0).abs() < 1e-6);

    assert!(out.gate_failed);
    assert_eq!(out.gate_failures.len(), 2);
    assert!(
        out.gate_failures[0].contains("sleep 0.1"),
        "{:?}",
        out.gate_failures
    );
    assert!(out.gate_failures[0].contains("+20.00%"));
    assert!(out
        .rendered
        .contains("gate FAILED: 2 comparisons significantly slower by more than +10%"));
    assert!(out
        .rendered
        .contains("  time_wall_clock  sleep 0.1  new.json: +20.00%"));
    assert!(out.rendered.contains("Bonferroni"), "{}", out.rendered);
    assert!(
        out.rendered.contains("ratio [97.5 % CI]"),
        "{}",
        out.rendered
    );
    assert!(
        out.rendered
            .contains("session-to-session variation is not in the interval"),
        "{}",
        out.rendered
    );

    let pass = run(&d, &opts(CompareFormat::Text, Some(30.0)));
    assert!(!pass.gate_failed);
    assert!(pass.gate_failures.is_empty());
    assert!(pass.rendered.contains(
        "gate passed: nothing significantly slower by more than +30% in time_wall_clock"
    ));

    let none = run(&d, &opts(CompareFormat::Text, None));
    assert!(!none.gate_failed);
    assert!(!none.rendered.contains("gate"));
}

#[test]
fn text_output_reads_like_benchstat() {
    let out = run(&slowdown_pair(), &opts(CompareFormat::Text, None));
    let text = &out.rendered;
    assert!(
        text.starts_with("time_wall_clock (wall) [s, lower is better]\n"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    // Column titles line up with their columns.
    let titles = lines[1];
    let header = lines[2];
    assert_eq!(titles.find("old.json"), header.find("median"));
    assert_eq!(titles.find("new.json"), header.rfind("median"));
    let row = lines
        .iter()
        .find(|l| l.starts_with("sleep 0.1"))
        .expect("row");
    assert!(row.contains("100.0ms ± "), "{row}");
    assert!(row.contains("120.0ms ± "), "{row}");
    assert!(row.contains("+20.00% (p"), "{row}");
    assert!(row.contains("1.200 ["), "{row}");
    let fast = lines.iter().find(|l| l.starts_with("./fast")).expect("row");
    assert!(fast.contains("2.000ms"), "{fast}");
    assert!(lines.iter().any(|l| l.starts_with("geomean")), "{text}");
}

#[test]
fn identical_datasets_are_not_different() {
    let mut d = slowdown_pair();
    d[1] = d[0].clone();
    d[1].source = "same.json".into();
    let out = run(&d, &opts(CompareFormat::Json, Some(10.0)));
    let t = only_table(&out);
    for r in &t.rows {
        let c = r.comparisons[1].as_ref().unwrap();
        // ±2.25 % of noise in ten runs cannot show equality within ±1 %.
        assert_eq!(c.result.verdict, Verdict::Inconclusive, "{c:?}");
        assert!(!c.result.significant);
        assert_eq!(c.change_pct(), Some(0.0));
        assert!(c.result.p_value > 0.5, "{c:?}");
        assert!(
            crate::report::Words(&c.result.own_note().unwrap())
                .to_string()
                .contains("too wide to tell"),
            "{c:?}"
        );
    }
    assert!(!out.gate_failed);
    let v: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    for item in v.as_array().unwrap() {
        assert_eq!(item["verdict"], "inconclusive");
        assert!(
            item["note"].as_str().unwrap().contains("too wide"),
            "{item}"
        );
    }
    let text = run(&d, &opts(CompareFormat::Text, None)).rendered;
    assert!(text.contains("? (p=1.000) ¹"), "{text}");

    // Tight data: the interval lies within ±1 %, so "no difference".
    let tight = |source: &str| {
        let values: Vec<f64> = spread(0.1).iter().map(|v| 0.1 + (v - 0.1) / 20.0).collect();
        dataset(
            source,
            vec![bench(
                "x",
                vec![series("time_wall_clock", "s", false, values)],
            )],
        )
    };
    let out = run(&[tight("a"), tight("b")], &opts(CompareFormat::Text, None));
    let c = only_table(&out).rows[0].comparisons[1].clone().unwrap();
    assert_eq!(c.result.verdict, Verdict::NoDifference, "{c:?}");
    assert!(out.rendered.contains("~ (p=1.000)"), "{}", out.rendered);
}

#[test]
fn higher_is_better_and_memory_do_not_gate_and_respect_direction() {
    let mbs = |c: f64| series("MB/s", "MB/s", true, spread(c));
    let bytes = |c: f64| series("B/op", "B", false, spread(c));
    let d = vec![
        dataset(
            "old.txt",
            vec![bench("Parse", vec![mbs(100.0), bytes(1000.0)])],
        ),
        dataset(
            "new.txt",
            vec![bench("Parse", vec![mbs(150.0), bytes(2000.0)])],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Json, Some(1.0)));
    assert!(
        out.gate_failures.is_empty(),
        "memory and throughput never gate"
    );
    // With nothing gated the gate compared nothing: it cannot pass (the
    // subcommand refuses it before, naming what was not matched).
    assert!(out.gate_failed);
    let verdicts: HashMap<String, Verdict> = out
        .tables
        .iter()
        .map(|t| {
            (
                t.metric.clone(),
                t.rows[0].comparisons[1].as_ref().unwrap().result.verdict,
            )
        })
        .collect();
    assert_eq!(verdicts["MB/s"], Verdict::Faster, "more MB/s is better");
    assert_eq!(verdicts["B/op"], Verdict::Slower, "more B/op is worse");
    // Lower throughput is a regression too.
    let d = vec![
        dataset("old.txt", vec![bench("Parse", vec![mbs(150.0)])]),
        dataset("new.txt", vec![bench("Parse", vec![mbs(100.0)])]),
    ];
    let out = run(&d, &opts(CompareFormat::Json, None));
    let v: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    assert_eq!(v[0]["verdict"], "slower");
    assert!(v[0]["change_pct"].as_f64().unwrap() < -33.0);
}

#[test]
fn gate_covers_sec_per_op_and_not_user_time() {
    let d = vec![
        dataset(
            "old.txt",
            vec![bench(
                "Parse",
                vec![
                    series("sec/op", "s", false, spread(1e-6)),
                    series("time_user", "s", false, spread(1.0)),
                ],
            )],
        ),
        dataset(
            "new.txt",
            vec![bench(
                "Parse",
                vec![
                    series("sec/op", "s", false, spread(1.5e-6)),
                    series("time_user", "s", false, spread(3.0)),
                ],
            )],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    assert!(out.gate_failed);
    assert_eq!(out.gate_failures.len(), 1, "{:?}", out.gate_failures);
    assert!(
        out.gate_failures[0].starts_with("sec/op  Parse  new.txt: +50.00%"),
        "{:?}",
        out.gate_failures
    );
}

#[test]
fn mismatched_benchmarks_are_shown_not_compared() {
    let d = vec![
        dataset(
            "old.json",
            vec![bench("a", vec![wall(0.1)]), bench("b", vec![wall(0.2)])],
        ),
        dataset(
            "new.json",
            vec![bench("b", vec![wall(0.2)]), bench("c", vec![wall(0.3)])],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    let t = only_table(&out);
    let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["a", "b", "c"]);
    assert!(t.rows[0].cells[1].is_none() && t.rows[0].comparisons[1].is_none());
    assert!(t.rows[1].comparisons[1].is_some());
    assert!(t.rows[2].cells[0].is_none() && t.rows[2].comparisons[1].is_none());
    assert!(t.geomean.is_none(), "only one benchmark is in both files");
    assert!(out.rendered.contains(MISSING_NOTE), "{}", out.rendered);
    // `a` of the baseline was not compared: the gate fails and says why,
    // unless told it may be missing. `c`, only in the candidate, is no matter.
    assert!(out.gate_failed);
    assert!(
        out.rendered.contains(
            "gate FAILED: 1 not compared (1 comparison compared, 1 inconclusive, 1 not compared):"
        ) && out
            .rendered
            .contains("  a: not compared: not in 'new.json'"),
        "{}",
        out.rendered
    );
    let allowed = CompareOptions {
        gate: crate::analysis::gate::Options {
            allow_missing: vec!["a".into()],
            ..Default::default()
        },
        ..opts(CompareFormat::Text, Some(10.0)).1
    };
    let out = run(&d, &(CompareFormat::Text, allowed));
    assert!(!out.gate_failed, "{}", out.rendered);
    assert!(
        out.rendered
            .contains("1 not compared, allowed by --allow-missing)")
            && out
                .rendered
                .contains("a: not compared (allowed by --allow-missing): not in 'new.json'"),
        "{}",
        out.rendered
    );

    let json = run(&d, &opts(CompareFormat::Json, None)).rendered;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["benchmark"], "a");
    assert!(items[0]["candidate_median"].is_null());
    assert_eq!(items[0]["verdict"], "not comparable");
    assert_eq!(items[0]["note"], "not in the candidate");
    assert_eq!(items[2]["benchmark"], "c");
    assert!(items[2]["baseline_median"].is_null());
    assert_eq!(items[2]["verdict"], "not comparable");
    assert_eq!(items[2]["note"], "not in the baseline");
}

#[test]
fn parameters_match_in_any_order() {
    let with_params = |source: &str, params: &[(&str, &str)], center: f64| {
        let mut b = bench("cmd", vec![wall(center)]);
        b.parameters = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        dataset(source, vec![b])
    };
    let d = vec![
        with_params("old", &[("a", "1"), ("b", "2")], 0.1),
        with_params("new", &[("b", "2"), ("a", "1")], 0.1),
    ];
    let out = run(&d, &opts(CompareFormat::Text, None));
    let t = only_table(&out);
    assert_eq!(t.rows.len(), 1);
    assert!(t.rows[0].comparisons[1].is_some());
    assert_eq!(t.rows[0].label, "cmd");
    assert!(
        out.rendered.contains("parameters: a=1 b=2"),
        "{}",
        out.rendered
    );
}

#[test]
fn too_few_samples_are_refused_plainly() {
    let d = vec![
        dataset(
            "old.json",
            vec![
                bench(
                    "one",
                    vec![series("time_wall_clock", "s", false, vec![0.1])],
                ),
                bench(
                    "three",
                    vec![series("time_wall_clock", "s", false, vec![0.1, 0.11, 0.12])],
                ),
            ],
        ),
        dataset(
            "new.json",
            vec![
                bench(
                    "one",
                    vec![series("time_wall_clock", "s", false, vec![0.5])],
                ),
                bench(
                    "three",
                    vec![series("time_wall_clock", "s", false, vec![0.5, 0.51, 0.52])],
                ),
            ],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    let t = only_table(&out);
    let one = &t.rows[0].comparisons[1].as_ref().unwrap().result;
    assert!(one.p_value.is_nan(), "n=1: no p-value");
    assert_eq!(one.verdict, Verdict::Inconclusive);
    assert_eq!(
        crate::report::Words(one.note.as_ref().unwrap()).to_string(),
        "need at least 3 runs per side for a verdict, have 1"
    );
    // Three runs a side 5x apart: too few for Mann-Whitney to reach
    // 0.025 (2/C(6,3) = 0.1), but Welch's t-test on logs can.
    let three = &t.rows[1].comparisons[1].as_ref().unwrap().result;
    assert_eq!(three.test, engine::Test::WelchT);
    assert_eq!(three.verdict, Verdict::Slower, "{three:?}");
    assert!(t.rows[1].cells[0].as_ref().unwrap().ci.is_none());
    assert_eq!(out.gate_failures.len(), 1, "only the decided row can fail");
    let text = &out.rendered;
    assert!(text.contains("samples for 95% interval"), "{text}");
    assert!(text.contains("± ∞¹"), "{text}");
    assert!(text.contains("need at least 3 runs per side for a verdict, have 1"));
}

#[test]
fn single_dataset_is_a_summary() {
    let d = vec![slowdown_pair().remove(0)];
    let out = run(&d, &opts(CompareFormat::Text, None));
    let t = only_table(&out);
    assert_eq!(t.columns, ["old.json"]);
    assert!(t
        .rows
        .iter()
        .all(|r| r.comparisons.iter().all(Option::is_none)));
    assert!(!out.rendered.contains("vs base"));
    assert!(out.rendered.contains("100.0ms ± "), "{}", out.rendered);

    let json = run(&d, &opts(CompareFormat::Json, None)).rendered;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["source"], "old.json");
    assert_eq!(v[0]["n"], 10);
    assert!(v[0]["ci"].as_array().is_some());
}

#[test]
fn metrics_get_one_table_each_in_cmdscope_order() {
    let rss = |c: f64| series("memory_peak_resident", "B", false, spread(c));
    let faults = |c: f64| series("page_faults_minor", "", false, spread(c));
    let cycles = |c: f64| series("cpu_cycles", "", false, spread(c));
    let d = vec![
        dataset(
            "old",
            vec![bench(
                "x",
                vec![faults(5000.0), rss(1e7), wall(0.1), cycles(1e6)],
            )],
        ),
        dataset(
            "new",
            vec![bench("x", vec![wall(0.1), rss(2e7), faults(5000.0)])],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Text, None));
    let metrics: Vec<&str> = out.tables.iter().map(|t| t.metric.as_str()).collect();
    assert_eq!(
        metrics,
        [
            "time_wall_clock",
            "memory_peak_resident",
            "page_faults_minor"
        ]
    );
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("cpu_cycles (only in old)")),
        "{:?}",
        out.notes
    );
    assert!(out.rendered.contains("9.537MiB"), "{}", out.rendered);
}

#[test]
fn several_candidates_are_columns() {
    let mut d = slowdown_pair();
    let mut third = d[0].clone();
    third.source = "third.json".into();
    d.push(third);
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    let t = only_table(&out);
    assert_eq!(t.columns.len(), 3);
    for r in &t.rows {
        let v = |ci: usize| r.comparisons[ci].as_ref().unwrap().result.verdict;
        assert_eq!(v(1), Verdict::Slower);
        assert!(!v(2).is_significant(), "{:?}", v(2));
    }
    assert_eq!(out.gate_failures.len(), 2);
    assert!(out.gate_failures.iter().all(|f| f.contains("new.json")));
}

// ----- machine-readable formats parse -----------------------------------------------

#[test]
fn markdown_tables_are_well_formed() {
    let mut d = slowdown_pair();
    // A pipe in a command must not break the table.
    d[0].benchmarks[0].name = "sh -c 'ls | wc -l'".into();
    d[1].benchmarks[0].name = "sh -c 'ls | wc -l'".into();
    let out = run(&d, &opts(CompareFormat::Markdown, Some(10.0)));
    let md = &out.rendered;
    assert!(
        md.starts_with("### time_wall_clock (wall) [s, lower is better]"),
        "{md}"
    );
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 2 + 3, "header, rule, two rows, geomean: {md}");
    let columns = |l: &str| {
        let unescaped = l.replace("\\|", "");
        unescaped.matches('|').count()
    };
    let n = columns(table[0]);
    assert_eq!(n, 8, "benchmark + 2 + 4 columns: {}", table[0]);
    for l in &table {
        assert!(l.ends_with(" |"), "{l}");
        assert_eq!(columns(l), n, "{l}");
    }
    assert!(table[1].split('|').all(|c| {
        let c = c.trim();
        c.is_empty() || c == ":--" || c == "--:"
    }));
    assert!(table[0].contains("old.json median"), "{}", table[0]);
    assert!(md.contains("`sh -c 'ls \\| wc -l'`"), "{md}");
    assert!(
        md.contains("**gate FAILED: 2 comparisons significantly slower by more than +10% (2 comparisons compared, 0 inconclusive):**"),
        "{md}"
    );
    assert!(md.contains("- time_wall_clock  sh -c 'ls \\| wc -l'  new.json: +20.00%"));
}

#[test]
fn csv_has_one_row_per_benchmark_metric_column() {
    let out = run(&slowdown_pair(), &opts(CompareFormat::Csv, Some(10.0)));
    let mut r = csv::Reader::from_reader(out.rendered.as_bytes());
    let headers = r.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2 * 2, "2 benchmarks x 1 metric x 2 columns");
    for row in &rows {
        assert_eq!(&row[col("metric")], "time_wall_clock");
        let median: f64 = row[col("median")].parse().unwrap();
        assert!(median > 0.0);
        match &row[col("role")] {
            "baseline" => {
                assert_eq!(&row[col("source")], "old.json");
                assert_eq!(&row[col("verdict")], "");
            }
            "candidate" => {
                assert_eq!(&row[col("source")], "new.json");
                assert_eq!(&row[col("verdict")], "slower");
                assert_eq!(&row[col("gate_failed")], "true");
                let delta: f64 = row[col("change_pct")].parse().unwrap();
                assert!((delta - 20.0).abs() < 1e-9);
                let p: f64 = row[col("p_value")].parse().unwrap();
                let level: f64 = row[col("level")].parse().unwrap();
                assert!(p < level && level == 0.025);
                assert_eq!(&row[col("test")], "mann-whitney-u");
                let lo: f64 = row[col("ratio_ci_low")].parse().unwrap();
                assert!(lo > 1.0);
            }
            other => panic!("role {other}"),
        }
    }
}

#[test]
fn json_is_a_list_of_comparisons() {
    let out = run(&slowdown_pair(), &opts(CompareFormat::Json, Some(10.0)));
    let v: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), 2);
    for item in items {
        for field in [
            "metric",
            "baseline",
            "candidate",
            "benchmark",
            "baseline_median",
            "candidate_median",
            "ratio",
            "ratio_ci",
            "confidence",
            "change_pct",
            "p_value",
            "level",
            "test",
            "significant",
            "verdict",
            "note",
            "session_variation",
        ] {
            assert!(item.get(field).is_some(), "{field} missing in {item}");
        }
        assert_eq!(item["metric"], "time_wall_clock");
        assert_eq!(item["baseline"], "old.json");
        assert_eq!(item["candidate"], "new.json");
        assert_eq!(item["verdict"], "slower");
        assert_eq!(item["significant"], true);
        assert_eq!(item["gate_failed"], true);
        let ci = item["ratio_ci"].as_array().unwrap();
        assert_eq!(ci.len(), 2);
        assert!(ci[0].as_f64().unwrap() <= 1.2 && ci[1].as_f64().unwrap() >= 1.2);
        assert!((item["ratio"].as_f64().unwrap() - 1.2).abs() < 1e-9);
    }
    assert_eq!(items[0]["benchmark"], "sleep 0.1");
}

#[test]
fn go_files_compare_end_to_end() {
    let old = crate::import::parse_dataset(
        &go_text(&[
            1234.0, 1250.0, 1241.0, 1238.0, 1245.0, 1236.0, 1240.0, 1248.0,
        ]),
        "old.txt",
    )
    .unwrap();
    let new = crate::import::parse_dataset(
        &go_text(&[
            1481.0, 1500.0, 1489.0, 1486.0, 1494.0, 1483.0, 1488.0, 1498.0,
        ]),
        "new.txt",
    )
    .unwrap();
    let out = run(&[old, new], &opts(CompareFormat::Text, Some(5.0)));
    let metrics: Vec<&str> = out.tables.iter().map(|t| t.metric.as_str()).collect();
    assert_eq!(metrics, ["sec/op", "B/op", "allocs/op"]);
    let secs = &out.tables[0];
    assert_eq!(
        secs.common_parameters,
        [("gomaxprocs".to_owned(), "8".to_owned())]
    );
    assert_eq!(secs.rows[0].label, "Parse/size=10");
    assert_eq!(
        secs.rows[0].comparisons[1].as_ref().unwrap().result.verdict,
        Verdict::Slower
    );
    // Identical B/op in every run: no change, and no division trouble.
    let bytes = &out.tables[1].rows[0].comparisons[1]
        .as_ref()
        .unwrap()
        .clone();
    assert_eq!(bytes.result.verdict, Verdict::NoDifference);
    assert_eq!(bytes.change_pct(), Some(0.0));
    assert!(out.gate_failed);
    assert!(
        out.rendered.contains("sec/op [s, lower is better]"),
        "{}",
        out.rendered
    );
    assert!(out.rendered.contains("parameters: gomaxprocs=8"));
    assert!(out.rendered.contains("1.240µs ± "), "{}", out.rendered);
}

fn go_text(ns: &[f64]) -> String {
    let mut s = String::from("goos: linux\ngoarch: amd64\npkg: example.com/p\n");
    for v in ns {
        s.push_str(&format!(
            "BenchmarkParse/size=10-8   \t 1000000\t {v} ns/op\t  512 B/op\t  3 allocs/op\n"
        ));
        s.push_str(&format!(
            "BenchmarkParse/size=100-8  \t  100000\t {} ns/op\t 4096 B/op\t 12 allocs/op\n",
            v * 10.0
        ));
    }
    s.push_str("PASS\nok  \texample.com/p\t9.9s\n");
    s
}

#[test]
fn zero_medians_and_non_finite_values_are_handled() {
    let allocs = |v: f64| series("allocs/op", "", false, vec![v; 8]);
    let mut noisy = wall(0.1);
    noisy.values.push(f64::NAN);
    noisy.values.push(f64::INFINITY);
    let d = vec![
        dataset(
            "old",
            vec![
                bench("a", vec![allocs(0.0), noisy]),
                bench("b", vec![allocs(0.0), wall(0.2)]),
            ],
        ),
        dataset(
            "new",
            vec![
                bench("a", vec![allocs(0.0), wall(0.1)]),
                bench("b", vec![allocs(2.0), wall(0.2)]),
            ],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    let wall_t = &out.tables[0];
    assert_eq!(wall_t.metric, "time_wall_clock");
    assert_eq!(
        wall_t.rows[0].cells[0].as_ref().unwrap().n,
        10,
        "NaN and inf dropped"
    );
    let allocs_t = &out.tables[1];
    let a = allocs_t.rows[0].comparisons[1].as_ref().unwrap();
    assert_eq!(a.change_pct(), Some(0.0), "0 to 0 is no change");
    assert_eq!(a.result.verdict, Verdict::NoDifference);
    let b = allocs_t.rows[1].comparisons[1].as_ref().unwrap();
    assert_eq!(b.change_pct(), None, "no finite relative change from 0");
    assert_eq!(b.result.ratio, f64::INFINITY);
    assert_eq!(b.result.verdict, Verdict::Slower, "0 -> 2 allocs is worse");
    let g = allocs_t.geomean.as_ref().unwrap();
    assert_eq!(g.values[0], None);
    assert!(
        out.rendered.contains("geomean needs medians > 0"),
        "{}",
        out.rendered
    );
    assert!(!out.gate_failed, "allocations never gate");
    // Machine formats stay valid with missing numbers.
    let json = run(&d, &opts(CompareFormat::Json, None)).rendered;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v.as_array().unwrap().iter().any(|i| i["ratio"].is_null()));
    let csv_text = run(&d, &opts(CompareFormat::Csv, None)).rendered;
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    assert_eq!(r.records().count(), 2 * 2 * 2);
}

#[test]
fn nothing_in_common() {
    let d = vec![
        dataset("old", vec![bench("a", vec![wall(0.1)])]),
        dataset(
            "new",
            vec![bench("a", vec![series("B/op", "B", false, spread(10.0))])],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Text, Some(10.0)));
    assert!(out.tables.is_empty());
    assert!(
        out.rendered.starts_with("no metric to compare"),
        "{}",
        out.rendered
    );
    assert!(out.rendered.contains("time_wall_clock (only in old)"));
    // A gate that compared nothing does not pass (the subcommand refuses
    // it before, naming what was not matched).
    assert!(
        out.rendered
            .contains("gate FAILED: nothing compared (0 comparisons compared, 0 inconclusive):"),
        "{}",
        out.rendered
    );
    assert!(out.gate_failed);
    let json = run(&d, &opts(CompareFormat::Json, None)).rendered;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json).unwrap(),
        serde_json::json!([])
    );
}

#[test]
fn exact_values_change_without_a_test() {
    // Go's `Unit text-bytes assume=exact`: one run each is enough, and any
    // change is a change.
    let go = |bytes: u32| {
        format!("BenchmarkBuild 1 5 ns/op {bytes} text-bytes\nUnit text-bytes assume=exact\n")
    };
    let old = crate::import::parse_dataset(&go(1000), "old.txt").unwrap();
    let new = crate::import::parse_dataset(&go(1001), "new.txt").unwrap();
    let same = crate::import::parse_dataset(&go(1000), "same.txt").unwrap();
    let out = run(&[old, new, same], &opts(CompareFormat::Json, None));
    let t = out
        .tables
        .iter()
        .find(|t| t.metric == "text-bytes")
        .unwrap();
    let c = t.rows[0].comparisons[1].as_ref().unwrap();
    assert_eq!(c.result.verdict, Verdict::Slower, "{c:?}");
    assert!(c.result.p_value.is_nan());
    assert!((c.result.ratio - 1.001).abs() < 1e-12);
    let s = t.rows[0].comparisons[2].as_ref().unwrap();
    assert_eq!(s.result.verdict, Verdict::NoDifference);
    // Not exact: one run a side decides nothing.
    let secs = out.tables.iter().find(|t| t.metric == "sec/op").unwrap();
    let c = secs.rows[0].comparisons[1].as_ref().unwrap();
    assert_eq!(c.result.verdict, Verdict::Inconclusive);
    let v: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    let item = v
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metric"] == "text-bytes" && i["candidate"] == "new.txt")
        .unwrap();
    assert_eq!(item["test"], "none");
    assert_eq!(item["verdict"], "slower");
    assert!(item["p_value"].is_null());
}

#[test]
fn the_issues_tied_reproducer_does_not_contradict_itself() {
    // allocs/op: ten 2s against six 2s and four 3s. The old table printed
    // "+0.00 % (p=0.034)" beside `~` with significant: true; benchstat's
    // exact test with ties gives p = 0.0867.
    let mut b = vec![2.0; 6];
    b.extend([3.0; 4]);
    let d = vec![
        dataset(
            "old.txt",
            vec![bench(
                "X",
                vec![series("allocs/op", "", false, vec![2.0; 10])],
            )],
        ),
        dataset(
            "new.txt",
            vec![bench("X", vec![series("allocs/op", "", false, b)])],
        ),
    ];
    let out = run(&d, &opts(CompareFormat::Json, None));
    let c = only_table(&out).rows[0].comparisons[1].clone().unwrap();
    assert!((c.result.p_value - 0.0867).abs() < 0.0005, "{c:?}");
    assert!(!c.result.significant);
    assert!(!c.result.verdict.is_significant(), "{c:?}");
    let v: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    assert_eq!(v[0]["significant"], false);
    assert_eq!(v[0]["verdict"], c.result.verdict.words());
    let text = run(&d, &opts(CompareFormat::Text, None)).rendered;
    assert!(text.contains("(p=0.087)"), "{text}");
    assert!(!text.contains("+0.00%"), "{text}");
}
