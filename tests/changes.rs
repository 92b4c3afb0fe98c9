//! `cmdscope changes` and `check --against history` on a store filled by
//! real `cmdscope run` sessions: a fixture that gets 25 % slower from one
//! commit label on must be reported with that label.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

/// One session labelled `commit=<commit>`: `work` sleeps `ms`, `steady` 10 ms.
/// Sleeps, not busy loops: their wall time hardly depends on the load
/// other processes put on the machine, so the test's step is the only one.
fn session(db: &Path, commit: &str, ms: u32) {
    let o = with_store(
        db,
        &[
            "run",
            "--runs",
            "6",
            "--style",
            "none",
            "--label",
            &format!("commit={commit}"),
            "-n",
            "work",
            &format!("{} sleep {ms}", fixture()),
            "-n",
            "steady",
            &format!("{} sleep 10", fixture()),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn changes_names_the_commit_that_made_a_benchmark_25_percent_slower() {
    let dir = tempdir();
    let db = dir.path().join("history.db");
    for i in 1..=12 {
        session(&db, &format!("c{i:02}"), if i < 7 { 20 } else { 25 });
    }

    let o = with_store(&db, &["changes", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&out(&o)).expect("JSON");
    let histories = doc["histories"].as_array().unwrap();
    assert_eq!(histories.len(), 2, "{doc}");
    let work = histories.iter().find(|h| h["benchmark"] == "work").unwrap();
    let steady = histories
        .iter()
        .find(|h| h["benchmark"] == "steady")
        .unwrap();
    assert_eq!(work["points"], 12);
    assert_eq!(steady["changes"].as_array().unwrap().len(), 0, "{steady}");
    let changes = work["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{work}");
    let c = &changes[0];
    let labels = |p: &serde_json::Value| p["sessions"][0]["labels"].to_string();
    assert!(labels(&c["first_after"]).contains("c07"), "{c}");
    assert!(labels(&c["last_before"]).contains("c06"), "{c}");
    assert_eq!(c["direction"], "slower");
    let ratio = c["comparison"]["ratio"].as_f64().unwrap();
    // 25 ms / 20 ms, plus ~1 ms of process start-up on both sides.
    assert!((1.15..1.3).contains(&ratio), "ratio {ratio}");
    let before = c["before"]["median"].as_f64().unwrap();
    assert!((0.019..0.03).contains(&before), "before {before}");

    // Text and Markdown name the same commit; ordered by the commit label too.
    let o = with_store(&db, &["changes", "work", "--order-by", "commit"]);
    let text = out(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    assert!(
        text.contains("slower +")
            && text.contains("first after: #7 (")
            && text.contains("commit=c07)\n    last before: #6 (")
            && text.contains("commit=c06)\n"),
        "{text}"
    );
    let o = with_store(&db, &["changes", "--format", "markdown"]);
    let md = out(&o);
    let row = md.lines().find(|l| l.starts_with("| `work`")).expect(&md);
    assert!(row.contains("commit=c07") && row.contains("slower"), "{md}");
    // No change-point row for `steady` (a row marked "(newest)" may appear
    // when this machine's load makes the newest session slower than 2 %).
    assert!(
        !md.lines()
            .any(|l| l.starts_with("| `steady`") && !l.contains("(newest)")),
        "{md}"
    );

    // The newest session 60 % slower: the CI gate fails beyond 10 %, not
    // beyond 200 %, and check --against history agrees.
    session(&db, "c13", 40);
    let gate = |pct: &str| {
        with_store(
            &db,
            &["changes", "--fail-on-new-regression", "--threshold", pct],
        )
    };
    let o = gate("10");
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), stderr(&o));
    assert!(out(&o).contains("newest #13"), "{}", out(&o));
    assert_eq!(gate("200").status.code(), Some(0));
    let o = with_store(
        &db,
        &[
            "check",
            "--against",
            "history",
            "--fail-if-slower",
            "10",
            "--session",
            "13",
            "--format",
            "text",
        ],
    );
    let text = out(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    assert!(text.contains("work"), "{text}");

    // The first session has no history before it: exit 2, one line.
    let o = with_store(&db, &["check", "--against", "history", "--session", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(stderr(&o).contains("before session #1"), "{}", stderr(&o));

    // Usage errors: one line, exit 2.
    let o = with_store(&db, &["changes", "--metric", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown metric 'nope'"));
    let o = with_store(&db, &["changes", "no-such-benchmark"]);
    assert_eq!(o.status.code(), Some(2));
}
