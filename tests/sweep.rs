//! Parameter sweeps and the optimum search on real processes.

mod common;

use common::*;

/// `run --style basic` with `args`, exported: its output and JSON.
fn basic_run(args: &[&str]) -> (std::process::Output, serde_json::Value) {
    exported(&[&["run", "--style", "basic"], args].concat())
}

/// The search's best value of the parameter `b`.
fn best_b(search: &serde_json::Value) -> f64 {
    search["best"]["b"].as_str().unwrap().parse().unwrap()
}

#[test]
fn minimize_finds_the_optimum_of_a_u_shaped_cost_with_few_runs() {
    // Cost A/b + B*b µs, slept, has its optimum at sqrt(A/B) = 64 (37.5
    // ms); 32 and 128 are 25 % above it, 16 and 256 113 %. Tens of ms, not
    // a few: on a busy machine a sleeper waits up to about 13 ms for a CPU,
    // which at 2 ms a run put the best two grid steps away.
    let (o, doc) = basic_run(&[
        "-P",
        "b",
        "1",
        "8192",
        "--parameter-factor",
        "2",
        "--minimize",
        "b",
        "--runs",
        "7",
        &format!("{} ushape-sleep {{b}} 1200000 293", fixture()),
    ]);
    let search = &doc["search"];
    let best = best_b(search);
    assert!(
        [32.0, 64.0, 128.0].contains(&best),
        "best {best} is not within one grid step of 64"
    );
    // The set holds the best and only values tried.
    let tried: Vec<&str> = search["values_tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["b"].as_str().unwrap())
        .collect();
    let as_good = search["as_good"].as_array().unwrap();
    assert!(as_good.iter().any(|v| v["b"] == search["best"]["b"]));
    assert!(as_good
        .iter()
        .all(|v| tried.contains(&v["b"].as_str().unwrap())));
    let runs = search["runs"]["total"].as_u64().unwrap() as f64;
    let full = search["grid_runs"].as_u64().unwrap() as f64;
    assert_eq!(full, 14.0 * 7.0);
    assert!(runs <= 0.4 * full, "{runs} runs of a {full}-run grid");
    let per_value: u64 = search["runs"]["per_value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["runs"].as_u64().unwrap())
        .sum();
    assert_eq!(per_value as f64, runs);
    assert!(!search["decisions"].as_array().unwrap().is_empty());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Best: b = "), "{stdout}");
    assert!(stdout.contains("% saved"));
    // The summary shows the search's own comparisons; its footer names one
    // Bonferroni family only when every line has the same.
    let families: std::collections::BTreeSet<u64> = comparisons_of(&doc, "time_wall_clock")
        .iter()
        .map(|c| c["family"].as_u64().unwrap())
        .collect();
    assert!(!families.is_empty());
    if families.len() > 1 {
        assert!(
            stdout.contains("each line's test and Bonferroni family"),
            "{stdout}"
        );
        assert!(!stdout.contains("Bonferroni over"), "{stdout}");
    }
    // Only the tried values are results, each with its parameter recorded.
    assert_eq!(doc["results"].as_array().unwrap().len(), tried.len());
    assert!(doc["results"][0]["parameters"]["b"].is_string());
}

#[test]
fn minimize_zooms_into_a_fine_linear_grid() {
    // 1600000/b + 400 b µs over b = 1 … 4096 (linear), slept: the
    // optimum is b = 63 at 50.6 ms; b = 47 … 87 are within 5 % of it. Tens
    // of ms, so that the up to 13 ms a sleeper waits for a CPU on a busy
    // machine does not flatten the 5 % band. A walk from a
    // coarse scan stops hundreds of values away; the zoom narrows the
    // bracket threefold per level, within 2 % of the grid's runs.
    let (o, doc) = basic_run(&[
        "-P",
        "b",
        "1",
        "4096",
        "--minimize",
        "b",
        &format!("{} ushape-sleep {{b}} 1600000 400", fixture()),
    ]);
    let s = &doc["search"];
    let cost = |b: f64| 1600000.0 / b + 400.0 * b;
    let best = best_b(s);
    assert!(
        cost(best) <= 1.05 * cost(63.0),
        "best b = {best}: {:.1} % above the optimum",
        (cost(best) / cost(63.0) - 1.0) * 100.0
    );
    let runs = s["runs"]["total"].as_u64().unwrap();
    assert!(runs * 50 <= 4096 * 10, "{runs} runs");
    // The bracket holds the best and every member of the set; settled
    // only without untried values in it.
    let (low, high): (f64, f64) = (
        s["bracket"][0]["low"].as_str().unwrap().parse().unwrap(),
        s["bracket"][0]["high"].as_str().unwrap().parse().unwrap(),
    );
    assert!(low <= best && best <= high, "{}", s["bracket"]);
    for v in s["as_good"].as_array().unwrap() {
        let b: f64 = v["b"].as_str().unwrap().parse().unwrap();
        assert!(low <= b && b <= high, "{b} outside {}", s["bracket"]);
    }
    let untried = s["bracket_untried"].as_u64().unwrap();
    assert_eq!(s["settled"], untried == 0 && s["status"] == "settled");
    assert_eq!(s["as_good_among"], "tried values");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Bracket: b = "), "{stdout}");
    assert!(
        stdout.contains("  Settled: ") || stdout.contains("  Not settled: "),
        "{stdout}"
    );
}

#[test]
fn search_on_a_flat_bottom_is_within_5_percent_of_the_grid_in_40_percent_of_its_runs() {
    // 60 ms + 120000/b + 29.3 b µs, slept: optimum at 64 (63.75 ms); 32
    // and 128 are 1.5 % above it, 16 and 256 6.6 %. Ten searches, each
    // judged by the true cost of its answer: a measured grid beside them
    // is no reference on a busy machine, where a sleeper waits up to about
    // 13 ms for a CPU (hence tens of ms here, not a few).
    let command = format!("{} ushape-sleep {{b}} 120000 29.3 60000", fixture());
    let cost = |b: f64| 60000.0 + 120000.0 / b + 29.3 * b;
    let grid_best = (0..14)
        .map(|k| cost(f64::from(1u32 << k)))
        .fold(f64::INFINITY, f64::min);
    let mut good = 0;
    let mut report = Vec::new();
    for _ in 0..10 {
        let (_, doc) = exported(&[
            "run",
            "--style",
            "none",
            "--runs",
            "10",
            "-P",
            "b",
            "1",
            "8192",
            "--parameter-factor",
            "2",
            "--minimize",
            "b",
            &command,
        ]);
        let s = &doc["search"];
        let best = best_b(s);
        let runs = s["runs"]["total"].as_u64().unwrap();
        let grid_runs = s["grid_runs"].as_u64().unwrap();
        assert_eq!(grid_runs, 140);
        let off = cost(best) / grid_best - 1.0;
        let ok = off <= 0.05 && runs as f64 <= 0.4 * grid_runs as f64;
        good += usize::from(ok);
        report.push(format!("best {best} ({:+.1} %), {runs} runs", off * 100.0));
    }
    assert!(
        good >= 9,
        "{good} of 10 searches met the target: {report:?}"
    );
}

#[test]
fn minimize_over_two_parameters_by_coordinate_search() {
    // 20 ms + 6000000/b + 100*c*b µs, slept: c = 1 is best for every b
    // (c = 2 costs 34 % more at its own best b), and with it b = 256 at
    // 69 ms (128 is 15 % above, 512 20 %). Tens of ms: a sleeper that
    // wakes on a busy machine waits up to about 13 ms for a CPU.
    let (o, doc) = basic_run(&[
        "-P",
        "b",
        "8",
        "1024",
        "--parameter-factor",
        "2",
        "-L",
        "c",
        "1,2,4,8,16",
        "--minimize",
        "b,c",
        // {c}00: the cost per item is 100 c µs.
        &format!("{} ushape-sleep {{b}} 6000000 {{c}}00 20000", fixture()),
    ]);
    let s = &doc["search"];
    assert_eq!(s["strategy"], "coordinate");
    assert_eq!(s["grid_runs"], 8 * 5 * 10);
    let best = &s["best"];
    assert!(
        ["128", "256", "512"].contains(&best["b"].as_str().unwrap()),
        "{best}"
    );
    assert_eq!(best["c"], "1", "{best}");
    assert!(s["as_good"].as_array().unwrap().contains(best));
    // The optimum (c = 1, b = 256) or its neighbour 128 is in the set.
    assert!(
        s["as_good"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["c"] == "1" && (p["b"] == "256" || p["b"] == "128")),
        "{}",
        s["as_good"]
    );
    assert!(s["runs"]["total"].as_u64().unwrap() <= 160);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("coordinate search"), "{stdout}");
    // Every parameter must be searched.
    let o = cmdscope(&[
        "run",
        "-P",
        "b",
        "1",
        "4",
        "-L",
        "c",
        "1,2",
        "--minimize",
        "b",
        "echo {b} {c}",
    ]);
    refused(&o, "--minimize b,c");
}

#[test]
fn minimize_over_two_scans_each_with_its_own_step() {
    // 20 ms + 6000000/b + 100*c*b µs over b = 8..512 (x2, 7 values) and
    // c = 1, 3, 5 (-D 2 after its -P): c = 1 is best for every b, and with
    // it b = 256 at 69 ms (128 is 15 % above, 512 20 %; c = 3 at its own
    // best b 52 %). Slept, tens of ms: a sleeper that wakes on a busy
    // machine waits up to about 13 ms for a CPU, which would flatten
    // differences of a few ms.
    let (_, doc) = basic_run(&[
        "-P",
        "b",
        "8",
        "512",
        "--parameter-factor",
        "2",
        "-P",
        "c",
        "1",
        "5",
        "-D",
        "2",
        "--minimize",
        "b,c",
        // {c}00: the cost per item is 100 c µs.
        &format!("{} ushape-sleep {{b}} 6000000 {{c}}00 20000", fixture()),
    ]);
    let s = &doc["search"];
    // Each step went to its own -P: 7 geometric values of b, 3 of c.
    assert_eq!(s["grid_runs"], 7 * 3 * 10, "{s}");
    let best = &s["best"];
    assert!(
        ["128", "256", "512"].contains(&best["b"].as_str().unwrap()),
        "{best}"
    );
    assert_eq!(best["c"], "1", "{best}");
    assert!(s["as_good"].as_array().unwrap().contains(best));
    assert!(s["runs"]["total"].as_u64().unwrap() < 7 * 3 * 10);
    // A step before the first of several -P is refused, with no run.
    let o = cmdscope(&[
        "run",
        "-D",
        "2",
        "-P",
        "b",
        "1",
        "4",
        "-P",
        "c",
        "1",
        "5",
        "echo {b} {c}",
    ]);
    refused(&o, "comes before any -P");
}

#[test]
fn minimize_searches_any_metric() {
    // Peak memory grows with the allocation: 8 MiB is best, the rest are
    // significantly larger by the exact rank test.
    let (_, doc) = basic_run(&[
        "-P",
        "mib",
        "8",
        "128",
        "--parameter-factor",
        "2",
        "--metric",
        "memory_peak_resident",
        "--minimize",
        "mib",
        &format!("{} alloc {{mib}}", fixture()),
    ]);
    let s = &doc["search"];
    assert_eq!(s["metric"], "memory_peak_resident");
    assert_eq!(s["best"]["mib"], "8");
    assert_eq!(
        s["as_good"].as_array().unwrap().len(),
        1,
        "{}",
        s["as_good"]
    );
    for v in s["runs"]["per_value"].as_array().unwrap() {
        if v["value"]["mib"] != "8" {
            assert_eq!(v["status"], "worse", "{v}");
            assert_eq!(v["comparison_with_best"]["test"], "mann-whitney-u");
        }
    }
    assert!(s["runs"]["total"].as_u64().unwrap() <= s["budget"].as_u64().unwrap());
}

#[test]
fn maximize_throughput_with_ops() {
    // b operations per run taking 20 ms + 60000/b + 146.5 b µs, slept:
    // operations per second rise with b towards 1/146.5 µs = 6.8 k/s
    // (5.4 k/s at 512, 6.0 k/s at 1024). Tens of ms: a sleeper that wakes
    // on a busy machine waits up to about 13 ms for a CPU.
    let command = format!("{} ushape-sleep {{b}} 60000 146.5 20000", fixture());
    let (o, doc) = basic_run(&[
        "-P",
        "b",
        "1",
        "1024",
        "--parameter-factor",
        "2",
        "--maximize",
        "b",
        "--ops",
        "{b}",
        &command,
    ]);
    let s = &doc["search"];
    assert_eq!(s["goal"], "maximize");
    assert_eq!(s["compared"], "operations_per_second");
    assert!(
        ["512", "1024"].contains(&s["best"]["b"].as_str().unwrap()),
        "{}",
        s["best"]
    );
    // The best's median is its operations per second: 1024 / ~170 ms, or
    // 512 / ~95 ms; a busy machine's wake-up delay lowers them by up to
    // 15 %.
    let best = s["runs"]["per_value"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["status"] == "best")
        .unwrap();
    let ops_per_s = best["median"].as_f64().unwrap();
    assert!((4e3..7e3).contains(&ops_per_s), "{ops_per_s} ops/s");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("ops/s"), "{stdout}");
    // Without --ops, maximising a time is refused.
    let o = cmdscope(&["run", "-P", "b", "1", "4", "--maximize", "b", &command]);
    refused(&o, "--ops");
}

#[test]
fn sweep_over_a_list_and_a_scan_with_table_and_plot() {
    let dir = tempdir();
    let svg = dir.path().join("sweep.svg");
    let f = fixture();
    let (o, doc) = exported(&[
        "run",
        "--runs",
        "6",
        "--style",
        "basic",
        // Steps of 3x and 5x the first: a busy machine that preempts a
        // spin for a few ms cannot reorder them at six runs.
        "-P",
        "ms",
        "5",
        "25",
        "-D",
        "10",
        "--plot",
        svg.to_str().unwrap(),
        &format!("{f} busy {{ms}}"),
    ]);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let medians: Vec<f64> = (0..3).map(|i| median(&doc, i, "time_wall_clock")).collect();
    for (i, ms) in [5.0, 15.0, 25.0].iter().enumerate() {
        assert_eq!(results[i]["parameters"]["ms"], format!("{ms}"));
        assert!(medians[i] >= ms / 1e3, "{medians:?}");
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    let best = stdout
        .lines()
        .find(|l| l.contains("◀ best"))
        .expect("a best row");
    assert!(best.trim_start().starts_with('5'), "{best}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.starts_with("<svg") && plot.contains("polyline") && plot.contains("class=\"band\"")
    );

    // -L with non-numeric values, combined with the command names.
    let o = cmdscope(&[
        "run",
        "--runs",
        "2",
        "--style",
        "basic",
        "-L",
        "mode",
        "busy,sleep",
        "-n",
        "{mode}-1ms",
        &format!("{f} {{mode}} 1"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("busy-1ms") && stdout.contains("sleep-1ms"),
        "{stdout}"
    );
}

#[test]
fn sweep_mistakes_are_clear_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "-P", "n", "1", "1e9", "sleep {n}"], "values"),
        (
            &["run", "-P", "n", "1", "5", "-D", "-1", "sleep {n}"],
            "positive step",
        ),
        (&["run", "-L", "n", "", "sleep {n}"], "empty value"),
        (&["run", "--plot", "x.svg", "true"], "parameter sweep"),
        (
            &["run", "-P", "n", "1", "5", "--minimize", "m", "sleep {n}"],
            "not a parameter",
        ),
        (&["run", "--metric", "speed", "true"], "unknown --metric"),
        (
            &[
                "run",
                "-P",
                "n",
                "1",
                "4",
                "--parameter-factor",
                "0.5",
                "sleep {n}",
            ],
            "greater than 1",
        ),
    ];
    for (args, needle) in cases {
        let o = cmdscope(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}
