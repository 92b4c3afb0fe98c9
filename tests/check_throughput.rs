//! `check` on real concurrency sessions: a benchmark run N at a time is
//! gated on its throughput too (one value per stored batch), and says why
//! when its batches cannot be compared. The measured commands are sleeps,
//! whose completions per second hold on a busy machine.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

/// One at a time: the sessions' timing should not depend on another
/// test's load.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A session of `command` named "work", `runs` completions two at a time,
/// labelled `label`, into the store `db`.
fn concurrent(db: &Path, label: &str, command: &str, runs: &str) {
    let o = with_store(
        db,
        &[
            "run",
            "--style",
            "none",
            "--runs",
            runs,
            "--concurrency",
            "2",
            "--label",
            label,
            "-n",
            "work",
            command,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `check --baseline branch=main --fail-if-slower 10` on `db`, Markdown
/// or `--format text`.
fn check(db: &Path, extra: &[&str]) -> (Output, String) {
    let mut args = vec![
        "check",
        "--baseline",
        "branch=main",
        "--fail-if-slower",
        "10",
    ];
    args.extend_from_slice(extra);
    let o = with_store(db, &args);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    (o, out)
}

/// The Markdown row of `work` on `metric`.
fn row<'a>(md: &'a str, metric: &str) -> &'a str {
    let start = format!("| `work [concurrency=2]` | {metric} |");
    md.lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no {metric} row in:\n{md}"))
}

/// The throughput ratio a row states, "0.50x [0.47x … 0.53x]", as its
/// three numbers.
fn ratio(row: &str) -> [f64; 3] {
    let cell = row.split(" | ").nth(4).unwrap();
    let v: Vec<f64> = cell
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|t| t.parse().ok())
        .collect();
    assert_eq!(v.len(), 3, "{row}");
    [v[0], v[1], v[2]]
}

#[test]
fn a_throughput_drop_fails_the_gate_and_the_same_command_passes() {
    let _serial = serial();
    let dir = tempdir();
    let db = dir.path().join("c.db");
    // 48 completions at N = 2: six batches of four per slot.
    concurrency_pair(&db, "sleep 0.05", "sleep 0.1");
    let (o, md) = check(&db, &[]);
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    let throughput = row(&md, "throughput");
    assert!(
        throughput.contains("❌ throughput lower by more than 10%"),
        "{throughput}"
    );
    // Half the completions per second: 0.50x, the interval around it and
    // below the gate's 0.90x (a busy machine only adds to each cycle's
    // 50 and 100 ms, which brings the ratio nearer 1, not beyond 0.6).
    let [r, lo, hi] = ratio(throughput);
    assert!((0.4..=0.6).contains(&r), "{throughput}");
    assert!(lo <= r && r <= hi && hi < 0.9, "{throughput}");
    assert!(throughput.contains("(n=6 batches)"), "{throughput}");
    assert!(
        md.contains("wall time and throughput, unpaired tests"),
        "{md}"
    );
    assert!(md.contains("throughput lower: 1"), "{md}");
    assert!(
        md.contains("0.80x: 20% fewer completions per second"),
        "{md}"
    );
    // Text names it too.
    let (o, text) = check(&db, &["--format", "text"]);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("throughput") && l.contains("❌ throughput lower")),
        "{text}"
    );

    // The same command twice: nothing beyond the gate.
    let db = dir.path().join("same.db");
    concurrency_pair(&db, "sleep 0.1", "sleep 0.1");
    let (o, md) = check(&db, &[]);
    assert_eq!(o.status.code(), Some(0), "{md}{}", stderr(&o));
    let [r, lo, hi] = ratio(row(&md, "throughput"));
    assert!(lo <= r && r <= hi && hi >= 0.9, "{md}");
    // Decided rows say nothing is worse; rows all inconclusive say no
    // verdict (never "nothing worse" over a table that decided nothing).
    assert!(
        md.contains("Nothing significantly worse by more than 10%")
            || md.contains("No verdict: every comparison is inconclusive"),
        "{md}"
    );
}

/// A baseline session labelled branch=main running `base`, then a
/// session labelled branch=feature running `cand`, both at N = 2.
fn concurrency_pair(db: &Path, base: &str, cand: &str) {
    concurrent(db, "branch=main", base, "48");
    concurrent(db, "branch=feature", cand, "48");
}

#[test]
fn batches_not_stored_or_too_few_give_a_row_that_says_why() {
    let _serial = serial();
    let dir = tempdir();
    let db = dir.path().join("old.db");
    // A baseline stored before cmdscope kept batches (store schema 5).
    concurrent(&db, "branch=main", "sleep 0.02", "24");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&sql_back_to_version(5))
        .unwrap();
    concurrent(&db, "branch=feature", "sleep 0.02", "24");
    let (o, md) = check(&db, &[]);
    // Its throughput was not compared: the gate fails and says why.
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    let throughput = row(&md, "throughput");
    assert!(throughput.contains("❌ not compared"), "{throughput}");
    assert!(
        md.contains(
            "work [concurrency=2] (throughput): not compared: the baseline session #1's batches \
             are not stored (run before cmdscope kept them, store schema 6)"
        ),
        "{md}"
    );
    // Its wall time is compared as before.
    assert!(row(&md, "wall time").contains("(n=24)"), "{md}");
    assert!(md.contains("(1 comparison compared, "), "{md}");
    // Allowed to be missing, the gate stands on wall time.
    let (o, md) = check(&db, &["--allow-missing", "work [concurrency=2]"]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{md}");
    assert!(
        md.contains("1 not compared, allowed by --allow-missing)"),
        "{md}"
    );
    assert!(
        row(&md, "throughput").contains("not compared (allowed)"),
        "{md}"
    );

    // One batch a session (4 completions at N = 2).
    let db = dir.path().join("one.db");
    concurrent(&db, "branch=main", "sleep 0.02", "4");
    concurrent(&db, "branch=feature", "sleep 0.04", "4");
    let (o, md) = check(&db, &[]);
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    assert!(row(&md, "throughput").contains("❌ not compared"), "{md}");
    assert!(
        md.contains(
            "work [concurrency=2] (throughput): not compared: the baseline session #1 and the \
             current session #2 have fewer batches than the 3 a side the comparison needs"
        ),
        "{md}"
    );
}

#[test]
fn a_per_run_session_is_checked_as_before() {
    let _serial = serial();
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    for label in ["branch=main", "branch=feature"] {
        let o = with_store(
            &db,
            &[
                "run",
                "--style",
                "none",
                "--runs",
                "12",
                "--label",
                label,
                "-n",
                "work",
                "sleep 0.02",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (o, md) = check(&db, &[]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{md}");
    assert!(!md.to_lowercase().contains("throughput"), "{md}");
    assert!(
        md.contains("| Benchmark | Baseline | Current |") && md.contains("| `work` |"),
        "{md}"
    );
    assert!(
        md.contains("· wall time, unpaired tests, Bonferroni over 1 benchmark,"),
        "{md}"
    );
}
