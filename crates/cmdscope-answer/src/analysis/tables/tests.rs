//! The table model: matching, cells, the engine's verdicts per column, the
//! geometric mean and the gate marks, on the datasets of `fixtures`.

use super::fixtures::*;
use super::*;

fn opts(gate: Option<f64>) -> CompareOptions {
    CompareOptions {
        fail_if_slower: gate,
        ..CompareOptions::default()
    }
}

fn run(datasets: &[Dataset], o: &CompareOptions) -> Tables {
    build(datasets, o)
}

fn only_table(out: &Tables) -> &MetricTable {
    assert_eq!(out.tables.len(), 1, "{:?}", out.tables);
    &out.tables[0]
}

// ----- pure helpers (no statistics needed) ---------------------------------------

#[test]
fn labels_hide_common_and_visible_parameters() {
    let p = |kv: &[(&str, &str)]| -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let common = p(&[("gomaxprocs", "8")]);
    assert_eq!(
        row_label(
            "Parse/size=10",
            &p(&[("size", "10"), ("gomaxprocs", "8")]),
            &common
        ),
        "Parse/size=10"
    );
    assert_eq!(
        row_label(
            "sleep {t}",
            &p(&[("t", "0.1"), ("gomaxprocs", "8")]),
            &common
        ),
        "sleep {t} (t=0.1)"
    );
}

// ----- comparisons (need the stats implementation) --------------------------------

#[test]
fn peak_memory_at_cmdscopes_floor_is_not_compared() {
    // Two sessions whose commands stayed under cmdscope's own resident
    // size: the kernel reports that floor, which varies by session.
    let mib = 1024.0 * 1024.0;
    let rss = |center: f64| series("memory_peak_resident", "B", false, spread(center));
    let mut old = dataset("old.json", vec![bench("true", vec![rss(5.0 * mib)])]);
    let mut new = dataset("new.json", vec![bench("true", vec![rss(5.4 * mib)])]);
    old.rss_floor = Some(5.2 * mib);
    new.rss_floor = Some(5.6 * mib);
    let out = run(&[old.clone(), new.clone()], &opts(None));
    let c = only_table(&out).rows[0].comparisons[1].clone().unwrap();
    assert_eq!(c.result.verdict, Verdict::NotComparable, "{c:?}");
    // Typed: `report::comparison` words it.
    assert_eq!(
        c.result.note,
        Some(crate::analysis::comparison::Note::one(
            crate::analysis::comparison::Caveat::AtFloor
        ))
    );
    // Above the floor it is a comparison like any other.
    new.benchmarks[0].series[0] = rss(9.0 * mib);
    let out = run(&[old, new], &opts(None));
    let c = only_table(&out).rows[0].comparisons[1].clone().unwrap();
    assert_eq!(c.result.verdict, Verdict::Slower, "{c:?}");
}

/// The typed reasons: what the report words (`report::tables`' test of
/// the same name reads the words).
#[test]
fn a_candidate_the_gate_compared_nothing_of_is_named() {
    let d = renamed_candidate();
    // Without a gate there is nothing to refuse.
    assert!(run(&d, &opts(None)).unjudged.is_empty());
    let out = run(&d, &opts(Some(5.0)));
    assert_eq!(
        out.unjudged,
        [Unjudged::NothingCompared(Unmatched {
            baseline: "old".into(),
            candidate: "renamed".into(),
            metric: None,
            only_baseline: vec!["a".into()],
            only_candidate: vec!["b".into()],
            without_values: Vec::new(),
        })]
    );
    // Only the baseline: nothing to gate.
    let out = run(&d[..1], &opts(Some(5.0)));
    assert_eq!(
        out.unjudged,
        [Unjudged::NoCandidate {
            baseline: "old".into()
        }]
    );
}

/// `--metric` moves the gate to the named metric: a candidate 2 % slower
/// in identical simulated counts (2 runs a side, read as cmdscope's JSON
/// import reads them: samples, not marked exact) fails a 1 % gate, while its wall time, 30 % noisier and
/// faster, is shown but does not gate; the same counts twice pass.
#[test]
fn a_named_metric_gates_instead_of_wall_time() {
    let counts = |v: f64| series("sim_estimated_cycles", "count", false, vec![v, v]);
    let side = |source: &str, cycles: f64, wall: f64| {
        dataset(
            source,
            vec![bench(
                "sha",
                vec![
                    counts(cycles),
                    series("time_wall_clock", "s", false, vec![wall, wall * 1.3]),
                ],
            )],
        )
    };
    let named = CompareOptions {
        metric: Some("sim_estimated_cycles".into()),
        ..opts(Some(1.0))
    };
    let slower = [side("a", 1.0e7, 0.5), side("b", 1.02e7, 0.4)];
    let out = run(&slower, &named);
    assert!(out.gate_failed(), "{:?}", out.gate);
    let gated: Vec<&str> = (out.tables.iter())
        .filter(|t| t.is_gated())
        .map(|t| t.metric.as_str())
        .collect();
    assert_eq!(gated, ["sim_estimated_cycles"]);
    assert!(out.unjudged.is_empty(), "{:?}", out.unjudged);
    // The same file twice passes; without --metric, wall time's 2 runs a
    // side are too few and the gate fails on them as not compared.
    let same = [side("a", 1.0e7, 0.5), side("b", 1.0e7, 0.5)];
    assert!(!run(&same, &named).gate_failed());
    let wall_gate = run(&same, &opts(Some(1.0)));
    assert!(wall_gate.gate_failed());
    let gated: Vec<&str> = (wall_gate.tables.iter())
        .filter(|t| t.is_gated())
        .map(|t| t.metric.as_str())
        .collect();
    assert_eq!(gated, ["time_wall_clock"]);
}
