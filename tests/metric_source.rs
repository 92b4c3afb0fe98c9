//! `--metric` beyond the per-run metrics, on real processes: a monitor's
//! count (`monitor_NAME`) and concurrency mode's throughput (per batch),
//! swept and searched.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// A script under `dir` that appends `(x - 7)² + 1` lines "hit" to `log`:
/// a count with its one minimum at x = 7, the same on every run.
fn valley(dir: &Path) -> String {
    let path = dir.join("valley.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nn=$(( ($1 - 7) * ($1 - 7) + 1 ))\ni=0\nwhile [ $i -lt $n ]; do echo hit >> log; i=$((i + 1)); done\n",
    )
    .unwrap();
    let _ = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status();
    std::fs::write(dir.join("log"), "").unwrap();
    path.display().to_string()
}

fn hits(x: f64) -> f64 {
    (x - 7.0) * (x - 7.0) + 1.0
}

/// `cmdscope run` in `dir` with the monitor following `dir/log`.
fn run_monitored(dir: &Path, args: &[&str]) -> std::process::Output {
    let monitor = [
        // Above the default, so a loaded machine's tail still delivers a
        // run's lines within its window.
        "--monitor-settle",
        "0.3",
        "--monitor",
        "exec tail -n0 -F log",
        "--match",
        "hits=^hit$",
    ];
    run_in(dir, &[&monitor[..], args].concat())
}

/// [`run_monitored`] with `args` and `--export-json out.json`, which must
/// succeed: its output and the JSON it exported.
fn monitored_export(dir: &Path, args: &[&str]) -> (std::process::Output, Value) {
    let o = ok(run_monitored(
        dir,
        &[args, &["--export-json", "out.json"]].concat(),
    ));
    (o, read_json(&dir.join("out.json")))
}

/// The count is deterministic, so the search must find its exact minimum,
/// and every count it read must be the script's: the monitor's counts are
/// attributed to the grid value that made them across the search's rounds
/// (in the export and in the store).
#[test]
fn a_search_of_a_monitor_count_finds_the_exact_optimum() {
    let d = tempdir();
    let script = valley(d.path());
    let (o, doc) = monitored_export(
        d.path(),
        &[
            "-P",
            "x",
            "1",
            "12",
            "--minimize",
            "x",
            "--metric",
            "monitor_hits",
            "--store",
            "results.sqlite3",
            &format!("{script} {{x}}"),
        ],
    );
    let search = &doc["search"];
    assert_eq!(search["metric"], "monitor_hits", "{search}");
    assert_eq!(search["counted"], "runs");
    assert_eq!(search["best"]["x"], "7", "{search}");
    // Every tried value's median is its exact count.
    for v in search["runs"]["per_value"].as_array().unwrap() {
        let x: f64 = v["value"]["x"].as_str().unwrap().parse().unwrap();
        assert_eq!(v["median"].as_f64(), Some(hits(x)), "{v}");
    }
    // Per run in the results too, each run's count exact.
    for r in doc["results"].as_array().unwrap() {
        let x: f64 = r["parameters"]["x"].as_str().unwrap().parse().unwrap();
        let counts = r["monitor"]["monitor_hits"].as_array().unwrap();
        assert!(!counts.is_empty(), "{r}");
        assert!(
            counts.iter().all(|c| c.as_f64() == Some(hits(x))),
            "x = {x}: {counts:?}"
        );
    }
    // The sweep table shows the count and marks the search's best.
    assert_eq!(doc["sweep"]["metric"], "monitor_hits");
    assert_eq!(doc["sweep"]["curves"][0]["best"], "7");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Search: the lowest monitor_hits over x"),
        "{text}"
    );
    // Stored under the grid's cells, one count per stored run.
    let db = rusqlite::Connection::open(d.path().join("results.sqlite3")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT c.position, e.value FROM extra_values e JOIN cells c ON c.id = e.cell_id \
             WHERE e.metric = 'monitor_hits'",
        )
        .unwrap();
    let rows: Vec<(i64, f64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!rows.is_empty());
    for (position, value) in rows {
        // Cell k of the grid is x = k + 1.
        assert_eq!(value, hits(position as f64 + 1.0), "cell {position}");
    }
    // The stored session, untried grid values included, reads back.
    let o = std::process::Command::new(bin())
        .args(["report", "--store", "results.sqlite3", "--html", "r.html"])
        .current_dir(d.path())
        .output()
        .unwrap();
    ok(o);
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(html.contains("monitor_hits"));
}

/// A sweep of a monitor count: the table, the JSON and the chart show the
/// count; with every run's count exact, each value's median is its count
/// and the best is the one lowest value.
#[test]
fn a_sweep_of_a_monitor_count_shows_the_count() {
    let d = tempdir();
    let script = valley(d.path());
    let (o, doc) = monitored_export(
        d.path(),
        &[
            "-L",
            "x",
            "5,7,8",
            "--runs",
            "5",
            "--metric",
            "monitor_hits",
            "--plot",
            "sweep.svg",
            &format!("{script} {{x}}"),
        ],
    );
    let sweep = &doc["sweep"];
    assert_eq!(sweep["metric"], "monitor_hits");
    assert_eq!(sweep["statistic"], "median");
    assert_eq!(sweep["goal"], "minimize");
    let curve = &sweep["curves"][0];
    assert_eq!(curve["best"], "7", "{curve}");
    for p in curve["points"].as_array().unwrap() {
        let x: f64 = p["value"].as_str().unwrap().parse().unwrap();
        assert_eq!(p["center"].as_f64(), Some(hits(x)), "{p}");
        assert_eq!(p["count"], 5, "{p}");
    }
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("over x (monitor_hits, median per value)"),
        "{text}"
    );
    assert!(text.contains("Best: x = 7 with a median of 1"), "{text}");
    let svg = std::fs::read_to_string(d.path().join("sweep.svg")).unwrap();
    assert!(svg.contains("monitor_hits by x"), "{svg}");
}

/// What cannot be compared is refused before anything runs, in one line.
#[test]
fn metrics_that_do_not_exist_here_are_one_line_errors() {
    let d = tempdir();
    // A typo of a monitor's name: the names it has, and the closest.
    let o = run_monitored(
        d.path(),
        &["-P", "x", "1", "3", "--metric", "monitor_hit", "true {x}"],
    );
    one_line_error(&o, "did you mean monitor_hits?");
    // A monitor count without a monitor.
    let o = cmdscope(&[
        "run",
        "-P",
        "x",
        "1",
        "3",
        "--metric",
        "monitor_hits",
        "true {x}",
    ]);
    one_line_error(&o, "--match hits=REGEX");
    // Throughput is measured per batch of concurrency mode.
    let o = cmdscope(&[
        "run",
        "-P",
        "x",
        "1",
        "3",
        "--metric",
        "throughput",
        "true {x}",
    ]);
    one_line_error(&o, "give --concurrency N");
    // Less throughput is never better.
    let o = cmdscope(&[
        "run",
        "-P",
        "j",
        "1",
        "3",
        "--concurrency",
        "{j}",
        "--minimize",
        "j",
        "--metric",
        "throughput",
        "true",
    ]);
    one_line_error(&o, "use --maximize");
    // A misspelt metric gets the suggestion too.
    let o = cmdscope(&["run", "--metric", "time_wall_clok", "true"]);
    one_line_error(&o, "did you mean time_wall_clock?");
}

/// Instances that sleep do not compete: four at a time complete about
/// four times as many a second as one, whatever else the machine runs.
/// The search maximising throughput must find the largest N, with N = 1
/// significantly worse. It compares batches: each tried value's batches
/// are in its result, as many as the search counted.
#[test]
fn a_throughput_search_finds_the_n_that_completes_most() {
    let (o, doc) = exported(&[
        "run",
        "--style",
        "basic",
        "-P",
        "j",
        "1",
        "4",
        "--concurrency",
        "{j}",
        "--maximize",
        "j",
        "--metric",
        "throughput",
        "sleep 0.05",
    ]);
    let search = &doc["search"];
    assert_eq!(search["metric"], "throughput", "{search}");
    assert_eq!(search["counted"], "batches");
    assert_eq!(search["goal"], "maximize");
    assert_eq!(search["best"]["j"], "4", "{search}");
    let as_good = search["as_good"].as_array().unwrap();
    assert!(!as_good.iter().any(|v| v["j"] == "1"), "{search}");
    let median = |j: &str| {
        search["runs"]["per_value"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["value"]["j"] == j)
            .and_then(|v| v["median"].as_f64())
            .unwrap_or_else(|| panic!("j = {j} not tried: {search}"))
    };
    // One instance makes at most 20 a second; four sleep side by side.
    assert!(median("1") <= 20.0, "{search}");
    assert!(median("4") > 2.0 * median("1"), "{search}");
    let batches: u64 = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["batches"].as_array().map_or(0, |b| b.len() as u64))
        .sum();
    assert_eq!(Some(batches), search["runs"]["total"].as_u64(), "{search}");
    // The sweep table shows throughput per N: the mean of the batches.
    let sweep = &doc["sweep"];
    assert_eq!(sweep["metric"], "throughput");
    assert_eq!(sweep["statistic"], "mean");
    assert_eq!(sweep["curves"][0]["best"], "4");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Search: the highest throughput over j"),
        "{text}"
    );
    assert!(text.contains("(throughput, mean per value)"), "{text}");
    assert!(text.contains(" batches "), "{text}");
}

/// A sweep of throughput without a search: higher is better without being
/// told, and each point is its result's throughput (one analysis).
#[test]
fn a_throughput_sweep_shows_throughput_per_n() {
    let d = tempdir();
    let lock = d.path().join("lock");
    let (_, doc) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "24",
        "-L",
        "j",
        "1,2",
        "--concurrency",
        "{j}",
        "--metric",
        "throughput",
        &format!("flock -x {} sleep 0.02", lock.display()),
    ]);
    let sweep = &doc["sweep"];
    assert_eq!(sweep["goal"], "maximize", "{sweep}");
    assert_eq!(sweep["counted"], "batches");
    let points = sweep["curves"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        let name = p["result"].as_str().unwrap();
        let r: &Value = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap();
        assert_eq!(p["center"], r["throughput"]["value"], "{p} {r}");
        assert_eq!(p["count"], r["throughput"]["batches"], "{p}");
    }
}
