//! `run --monitor COMMAND --match NAME=REGEX`: a monitor for the whole
//! session whose matching lines are counted per run (metric monitor_NAME).

mod common;

use common::*;
use serde_json::Value;

fn counts(doc: &Value, result: usize, name: &str) -> Vec<Value> {
    doc["results"][result]["monitor"][format!("monitor_{name}")]
        .as_array()
        .unwrap_or_else(|| panic!("no monitor_{name} in result {result}"))
        .clone()
}

#[test]
fn a_monitor_following_a_file_counts_each_runs_lines_exactly() {
    let d = tempdir();
    std::fs::write(d.path().join("log"), "").unwrap();
    let o = run_in(
        d.path(),
        &[
            "-r",
            "6",
            "--export-json",
            "out.json",
            "--store",
            "results.sqlite3",
            // Above the default, so that a loaded CI machine's tail still
            // delivers a run's lines within its window.
            "--monitor-settle",
            "0.3",
            "--monitor",
            "exec tail -n0 -F log",
            "--match",
            "hits=^hit$",
            "--match",
            "lines=.",
            "--shell=sh",
            "echo hit >> log; echo hit >> log; echo miss >> log",
            "for i in 1 2 3 4 5; do echo hit >> log; done",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&d.path().join("out.json"));
    let exact = |v: Vec<Value>, n: f64| {
        assert_eq!(v.len(), 6, "{v:?}");
        assert!(v.iter().all(|x| x.as_f64() == Some(n)), "{v:?} != {n}");
    };
    exact(counts(&doc, 0, "hits"), 2.0);
    exact(counts(&doc, 0, "lines"), 3.0);
    exact(counts(&doc, 1, "hits"), 5.0);
    exact(counts(&doc, 1, "lines"), 5.0);
    assert_eq!(doc["monitor"]["settle_seconds"], 0.3);
    assert!(doc["monitor"]["ended"].is_null());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("monitor_hits: 2 vs 5 (median)"), "{text}");
    assert!(text.contains("monitor_lines: 3 vs 5 (median)"), "{text}");

    // Compared like any count metric: 6 paired blocks, every difference +3,
    // the exact signed-rank test's smallest two-sided p = 2/64.
    let cmp = doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "monitor_hits")
        .unwrap_or_else(|| panic!("no monitor_hits comparison: {}", doc["comparisons"]));
    assert_eq!(cmp["shift"], 3.0, "{cmp}");
    assert!(
        (cmp["p_value"].as_f64().unwrap() - 2.0 / 64.0).abs() < 1e-12,
        "{cmp}"
    );
    assert!(text.contains("monitor_hits: 2.50x (+3 per run"), "{text}");

    // Stored per run as monitor_NAME of each command's cell.
    let db = rusqlite::Connection::open(d.path().join("results.sqlite3")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT c.position, e.metric, e.seq, e.value FROM extra_values e \
             JOIN cells c ON c.id = e.cell_id ORDER BY c.position, e.metric, e.seq",
        )
        .unwrap();
    let rows: Vec<(i64, String, i64, f64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2 * 2 * 6, "{rows:?}");
    let stored = |pos: i64, metric: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.0 == pos && r.1 == metric)
            .map(|r| r.3)
            .collect()
    };
    assert_eq!(stored(0, "monitor_hits"), vec![2.0; 6]);
    assert_eq!(stored(1, "monitor_hits"), vec![5.0; 6]);
    assert_eq!(stored(0, "monitor_lines"), vec![3.0; 6]);

    // And shown by `report`, read back from the store.
    let o = std::process::Command::new(bin())
        .args(["report", "--store", "results.sqlite3", "--html", "r.html"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    let table = &html[html
        .find("<h2>Monitor counts per run</h2>")
        .expect("a monitor table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(
        table.contains("<th>monitor_hits median (min … max)</th>"),
        "{table}"
    );
    assert!(
        table.contains("<td class=\"num\">2 (2 … 2)</td><td class=\"num\">3 (3 … 3)</td>"),
        "{table}"
    );
    assert!(
        table.contains("<td class=\"num\">5 (5 … 5)</td><td class=\"num\">5 (5 … 5)</td>"),
        "{table}"
    );
}

#[test]
fn a_monitor_that_dies_mid_session_is_reported() {
    let d = tempdir();
    let o = run_in(
        d.path(),
        &[
            "-r",
            "40",
            "--export-json",
            "out.json",
            "--monitor",
            "echo tick; sleep 0.6; exit 3",
            "--match",
            "ticks=tick",
            &format!("{} sleep 20", fixture()),
        ],
    );
    // The runs themselves are fine: the session succeeds, the death is said.
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: the monitor ended during the session"),
        "{err}"
    );
    let doc = read_json(&d.path().join("out.json"));
    let after = doc["monitor"]["ended_after_runs"].as_u64().expect("ended");
    assert!((1..40).contains(&after), "{after}");
    let v = counts(&doc, 0, "ticks");
    assert_eq!(v.len(), 40);
    // Counted (zero: its one line came before the first run) until it
    // ended, nothing after.
    assert!(v[..after as usize].iter().all(|x| x == 0.0), "{v:?}");
    assert!(v[after as usize..].iter().all(Value::is_null), "{v:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("The monitor ended during the session"));
}

#[test]
fn a_monitor_that_cannot_start_or_ends_early_is_an_error_before_any_run() {
    let d = tempdir();
    for (monitor, needle) in [
        ("exit 1", "failed to start: exit status 1"),
        ("/nonexistent/monitor", "failed to start"),
        ("true", "ended before the first run"),
    ] {
        let o = run_in(
            d.path(),
            &[
                "-r",
                "2",
                "--monitor",
                monitor,
                "--match",
                "x=y",
                &format!("{} write 1 ran", fixture()),
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{monitor}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(needle), "{monitor}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!d.path().join("ran").exists(), "{monitor}: a run was made");
    }
    let o = run_in(d.path(), &["--monitor", "true", "--match", "bad", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected NAME=REGEX"), "{}", stderr(&o));
}

/// A monitor that starts a daemon (out of its process group and session)
/// takes it along when the session ends, whether the monitor runs for the
/// session or ends before the first run (an error); the daemon is the
/// monitor's, not counted as a run's leftover.
#[test]
fn a_daemon_the_monitor_started_goes_with_the_monitor() {
    let dir = tempdir();
    let token = format!("monitor-daemon-{}", std::process::id());
    let script = daemon_script(dir.path(), &token);
    let script = script.to_str().unwrap();
    let limit = std::time::Duration::from_secs(60);
    let staying = format!("{script}; exec tail -f /dev/null");
    let o = cmdscope_within(
        &[
            "run",
            "--runs",
            "3",
            "--style",
            "basic",
            "--monitor",
            &staying,
            "--match",
            "x=x",
            "true",
        ],
        limit,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        !said.contains("running (daemons or background jobs)"),
        "the monitor's daemon taken for a run's: {said}"
    );
    let left = left_running(&token);
    assert!(left.is_empty(), "left running: {left:?}");

    // Ends at once, leaving its daemon: refused, and the daemon killed.
    let o = cmdscope_within(
        &[
            "run",
            "--runs",
            "3",
            "--monitor",
            script,
            "--match",
            "x=x",
            "true",
        ],
        limit,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let left = left_running(&token);
    assert!(left.is_empty(), "left running: {left:?}");
}
