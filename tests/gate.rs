//! The CI gates pass only on evidence, on real processes and stores:
//! `check` (against a baseline, a suite run, or history), `changes
//! --fail-on-new-regression` and `compare --fail-if-slower` fail when a
//! benchmark of the baseline was not compared — the candidate lacks it, or
//! its runs all timed out, failed or were interrupted, or a suite partition
//! is missing — unless `--allow-missing` says it may be; an inconclusive
//! row passes unless `--inconclusive fail`; a session naming a benchmark
//! twice is refused at `run`; and settings read back from a store are
//! checked as flags are.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `run` into `db` labelled `label`, asserting its exit status.
fn session(db: &Path, label: &str, args: &[&str], code: i32) -> Output {
    let mut all = vec!["run", "--style", "none", "--label", label];
    all.extend_from_slice(args);
    let o = with_store(db, &all);
    assert_eq!(o.status.code(), Some(code), "run {args:?}: {}", stderr(&o));
    o
}

/// A session labelled `label` of A running `a` and B running `sleep
/// 0.005`, with the flags `how`, asserting its exit status.
fn a_and_b(db: &Path, label: &str, how: &[&str], a: &str, code: i32) -> Output {
    let benchmarks = ["-n", "A", a, "-n", "B", "sleep 0.005"];
    session(db, label, &[how, &benchmarks[..]].concat(), code)
}

/// A baseline labelled branch=main: A and B, five runs each of `sleep
/// 0.005`.
fn baseline(db: &Path) {
    a_and_b(db, "branch=main", &["--runs", "5"], "sleep 0.005", 0);
}

/// A store of the baseline and a session labelled branch=feature of A
/// running `a` with the flags `how` (its exit status `code`) and B.
fn feature_after_baseline(dir: &Path, how: &[&str], a: &str, code: i32) -> PathBuf {
    let db = dir.join("s.db");
    baseline(&db);
    a_and_b(&db, "branch=feature", how, a, code);
    db
}

/// `changes --fail-on-new-regression --threshold 5` fails (exit 1) with
/// text holding each of `needles`.
fn changes_fails_on(db: &Path, needles: &[&str]) {
    let o = with_store(
        db,
        &["changes", "--fail-on-new-regression", "--threshold", "5"],
    );
    exits_1_saying(&o, needles);
}

/// `o` exited 1 with stdout holding each of `needles`.
fn exits_1_saying(o: &Output, needles: &[&str]) {
    let out = text(o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(o));
    for needle in needles {
        assert!(out.contains(needle), "no '{needle}' in:\n{out}");
    }
}

/// `check --baseline branch=main --fail-if-slower 5` with `extra`, text.
fn check(db: &Path, extra: &[&str]) -> Output {
    check_within(db, "5", extra)
}

/// `check --baseline branch=main --fail-if-slower PCT` with `extra`, text.
fn check_within(db: &Path, pct: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "--baseline",
        "branch=main",
        "--fail-if-slower",
        pct,
        "--format",
        "text",
    ];
    args.extend_from_slice(extra);
    with_store(db, &args)
}

/// The gate failed (exit 1) with a line naming `benchmark` not compared,
/// saying `why`, and never "Nothing significantly slower".
fn fails_on(o: &Output, benchmark: &str, why: &str) {
    let out = text(o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(o));
    assert!(
        out.lines()
            .any(|l| l.contains(&format!("{benchmark}: not compared: ")) && l.contains(why)),
        "no line naming {benchmark} with '{why}':\n{out}"
    );
    assert!(!out.contains("Nothing significantly"), "{out}");
}

#[test]
fn a_candidate_whose_runs_all_timed_out_fails_check_unless_allowed() {
    let dir = tempdir();
    // Every run of A is killed at 0.5 s: the session finishes with no run
    // of it; `run` says so and exits 1. (B's 5 ms runs stay far from the
    // timeout on a loaded machine.)
    let how = ["--runs", "3", "--timeout", "0.5"];
    let db = feature_after_baseline(dir.path(), &how, "sleep 3", 1);
    let o = check(&db, &[]);
    fails_on(
        &o,
        "A",
        "has 0 runs where the comparison needs 3 a side (3 timed out)",
    );
    // B's own verdict is noise's to decide (a loaded runner once made its
    // 5 ms sleep 18 ms, and the header then led with that slowdown); the
    // header counts A whichever it leads with.
    let header = text(&o).lines().next().unwrap_or_default().to_string();
    assert!(header.contains("1 not compared"), "{}", text(&o));
    // Markdown says it too.
    let md = text(&with_store(
        &db,
        &[
            "check",
            "--baseline",
            "branch=main",
            "--fail-if-slower",
            "5",
        ],
    ));
    assert!(
        md.contains("❌ not compared") && md.contains("A: not compared: "),
        "{md}"
    );
    // Allowed by name: the header counts it, B decides. B's threshold is
    // 100x here so that load on the runner cannot fail this step: what it
    // checks is how A is counted, not B's verdict.
    let o = check_within(&db, "10000", &["--allow-missing", "A"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    // B's three runs may or may not decide: counted either way.
    let header = out.lines().next().unwrap_or_default();
    assert!(
        header.contains("(1 benchmark compared, ")
            && header.contains(" inconclusive, 1 not compared, allowed by --allow-missing)"),
        "{out}"
    );
    assert!(
        out.contains("A: not compared (allowed by --allow-missing): "),
        "{out}"
    );
    // Another name does not allow it, and is said to match nothing.
    let o = check(&db, &["--allow-missing", "C"]);
    fails_on(&o, "A", "timed out");
    assert!(
        text(&o).contains("--allow-missing 'C' names no benchmark"),
        "{}",
        text(&o)
    );
    // `changes` and `check --against history` on the same store.
    changes_fails_on(
        &db,
        &["A: not compared: its newest session has 0 runs where"],
    );
}

#[test]
fn a_candidate_that_failed_after_one_run_fails_check() {
    let dir = tempdir();
    // A 90 ms run that exits 3: the session stops there, status failed.
    let failing = "sh -c 'sleep 0.09; exit 3'";
    let db = feature_after_baseline(dir.path(), &["--runs", "5"], failing, 1);
    let o = check(&db, &[]);
    fails_on(
        &o,
        "A",
        "has 1 run where the comparison needs 3 a side (1 failed, the session failed)",
    );
    let o = with_store(
        &db,
        &[
            "check",
            "--against",
            "history",
            "--fail-if-slower",
            "5",
            "--format",
            "text",
        ],
    );
    exits_1_saying(&o, &["A: not compared: this session has"]);
}

/// The runs stored in `db` by sessions after the first `after`.
fn newest_runs(db: &Path, after: i64) -> i64 {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let Ok(c) = rusqlite::Connection::open_with_flags(db, flags) else {
        return 0;
    };
    c.query_row(
        "SELECT COUNT(*) FROM runs WHERE cell_id IN (SELECT id FROM cells WHERE session_id > ?1)",
        [after],
        |r| r.get(0),
    )
    .unwrap_or(0)
}

#[test]
fn a_candidate_interrupted_after_its_first_runs_fails_check_and_changes() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    for _ in 0..3 {
        baseline(&db);
    }
    // A alone, 0.8 s a run; Ctrl-C once the first run is stored.
    let child = Command::new(bin())
        .args([
            "run",
            "--style",
            "none",
            "--label",
            "branch=feature",
            "--runs",
            "20",
            "-n",
            "A",
            "sleep 0.8",
            "--store",
        ])
        .arg(&db)
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while newest_runs(&db, 3) == 0 {
        assert!(start.elapsed() < Duration::from_secs(60), "no run stored");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let runs = newest_runs(&db, 3);
    assert!((1..=2).contains(&runs), "{runs} runs stored");
    let o = check(&db, &[]);
    fails_on(&o, "A", "the session was interrupted");
    // B is not in the candidate at all.
    fails_on(&o, "B", "not in the current session");
    changes_fails_on(
        &db,
        &[
            "A: not compared: its newest session has",
            "the session was interrupted",
        ],
    );
}

#[test]
fn a_benchmark_named_twice_is_refused_at_run_before_any_run() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    let start = Instant::now();
    let o = with_store(
        &db,
        &["run", "-n", "A", "sleep 0.002", "-n", "A", "sleep 0.09"],
    );
    one_line_error(
        &o,
        "two benchmarks would both be 'A' ('sleep 0.002' and 'sleep 0.09')",
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(!db.exists(), "the store was created");
    // The same command twice, unnamed, is refused too, with the way to
    // compare a command with itself; named apart it runs.
    let o = with_store(&db, &["run", "--runs", "3", "true", "true"]);
    one_line_error(&o, "name the two apart (-n a -n b)");
    ok(with_store(
        &db,
        &[
            "run", "--style", "none", "--runs", "3", "-n", "a", "true", "-n", "b", "true",
        ],
    ));
    // A parameter scan under one name.
    let o = with_store(
        &db,
        &["run", "-n", "x", "-P", "n", "1", "2", "sleep 0.00{n}"],
    );
    one_line_error(&o, "give each its own -n name");
}

#[test]
fn check_of_a_suite_run_missing_a_partition_fails_as_status_does() {
    let dir = tempdir();
    let d = dir.path();
    let db = d.join("s.db");
    let suite = d.join("s.toml");
    std::fs::write(
        &suite,
        "[defaults]\nruns = 4\nlabels = { branch = \"main\" }\n\
         [[benchmark]]\nname = \"one\"\ncommand = \"sleep 0.002\"\n\
         [[benchmark]]\nname = \"two\"\ncommand = \"sleep 0.003\"\n\
         [[benchmark]]\nname = \"three\"\ncommand = \"sleep 0.004\"\n\
         [[benchmark]]\nname = \"four\"\ncommand = \"sleep 0.005\"\n",
    )
    .unwrap();
    let s = suite.to_str().unwrap();
    let run = |id: &str, partition: Option<&str>| {
        let mut args = vec!["run", "--suite", s, "--run-id", id, "--style", "none"];
        if let Some(p) = partition {
            args.extend(["--partition", p]);
        }
        ok(Command::new(bin())
            .args(&args)
            .arg("--store")
            .arg(&db)
            .env("CMDSCOPE_HOST_LOCK", d.join("host.lock"))
            .env_remove("CMDSCOPE_STORE")
            .env_remove("CMDSCOPE_NO_STORE")
            .env_remove("CMDSCOPE_RUN_ID")
            .env_remove("GITHUB_RUN_ID")
            .output()
            .unwrap())
    };
    run("base", None);
    // Only the first of two partitions of run "half" reports.
    run("half", Some("1/2"));
    let status = with_store(&db, &["status", "--run", "half"]);
    assert_eq!(status.status.code(), Some(1), "{}", text(&status));
    // A limit no noise reaches: what fails here is the partition.
    let check = |extra: &[&str]| {
        let args = ["check", "--run", "half", "--baseline", "branch=main"];
        let limit = ["--fail-if-slower", "400", "--format", "text"];
        with_store(&db, &[&args[..], &limit, extra].concat())
    };
    let o = check(&[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains(
            "partition 2/2: not compared: the current run 'half' lacks this partition (never seen)"
        ),
        "{out}"
    );
    assert!(out.contains("not in the current run 'half'"), "{out}");
    // Allowing every missing benchmark allows the partition too.
    let o = check(&["--allow-missing", "all"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o), stderr(&o));
}

#[test]
fn compare_fails_on_a_benchmark_of_the_baseline_it_did_not_compare() {
    let dir = tempdir();
    let d = dir.path();
    let (old, new) = (d.join("old.json"), d.join("new.json"));
    write_results_file(
        &old,
        &[("a", times_around(0.01, 10)), ("b", times_around(0.02, 10))],
    );
    // b: one run left (the others failed).
    write_results_file(&new, &[("a", times_around(0.01, 10)), ("b", vec![0.5])]);
    let args = |extra: &[&str]| {
        let mut v = vec![
            "compare".to_string(),
            old.to_string_lossy().into_owned(),
            new.to_string_lossy().into_owned(),
            "--fail-if-slower".into(),
            "5".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        cmdscope(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run(&[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("gate FAILED: 1 not compared"), "{out}");
    assert!(
        out.contains("b: not compared: '")
            && out.contains("has 1 run where the comparison needs 3"),
        "{out}"
    );
    assert!(
        stderr(&o).contains("the gate failed: 1 not compared"),
        "{}",
        stderr(&o)
    );
    let o = run(&["--allow-missing", "b"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o), stderr(&o));
    assert!(
        text(&o).contains("1 not compared, allowed by --allow-missing"),
        "{}",
        text(&o)
    );
    // Absent altogether.
    write_results_file(&new, &[("a", times_around(0.01, 10))]);
    let o = run(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("b: not compared: not in '"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_inconclusive_row_passes_and_is_counted_unless_inconclusive_fail() {
    let dir = tempdir();
    let d = dir.path();
    let (old, new) = (d.join("old.json"), d.join("new.json"));
    // Four runs a side spread over a factor of two: data, but an interval
    // far wider than the ±1 % "no difference" band.
    write_results_file(&old, &[("a", vec![0.01, 0.02, 0.013, 0.017])]);
    write_results_file(&new, &[("a", vec![0.011, 0.019, 0.014, 0.016])]);
    let (o_, n_) = (old.to_str().unwrap(), new.to_str().unwrap());
    let o = cmdscope(&["compare", o_, n_, "--fail-if-slower", "5"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("gate passed, but nothing was decided"),
        "{out}"
    );
    assert!(
        out.contains("1 comparison compared, 1 inconclusive"),
        "{out}"
    );
    assert!(!out.contains("nothing significantly slower"), "{out}");
    let o = cmdscope(&[
        "compare",
        o_,
        n_,
        "--fail-if-slower",
        "5",
        "--inconclusive",
        "fail",
    ]);
    exits_1_saying(&o, &["1 inconclusive (--inconclusive fail)"]);
}

/// A store with a baseline and a candidate session of A and B, the
/// candidate's stored settings then set by `sql`.
fn settings_edited(dir: &Path, sql: &str) -> PathBuf {
    let db = feature_after_baseline(dir, &["--runs", "5"], "sleep 0.005", 0);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(sql).unwrap();
    db
}

#[test]
fn bad_settings_read_back_from_a_store_are_errors_naming_the_store_and_session() {
    let dir = tempdir();
    for (i, (sql, needle)) in [
        (
            "UPDATE sessions SET settings = json_set(settings, '$.precision', 1.0) WHERE id = 2",
            "precision must be a percentage above 0 and below 100, got 100 (stored as the fraction 1)",
        ),
        (
            "UPDATE sessions SET settings = json_set(settings, '$.precision', 1e300) WHERE id = 2",
            "precision must be a percentage",
        ),
        (
            "UPDATE sessions SET settings = json_set(settings, '$.alpha', 0.7) WHERE id = 2",
            "alpha must be above 0 and below 0.5, got 0.7",
        ),
        (
            "UPDATE sessions SET settings = json_set(settings, '$.reference', 9) WHERE id = 2",
            "reference 9 is not one of its 2 cells",
        ),
        (
            "UPDATE sessions SET settings = '{\"alpha\": ' WHERE id = 2",
            "not readable: EOF while parsing",
        ),
        (
            "UPDATE sessions SET settings = json_set(settings, '$.alpha', 'x') WHERE id = 2",
            "not readable: invalid type: string",
        ),
    ]
    .iter()
    .enumerate()
    {
        let d = dir.path().join(i.to_string());
        std::fs::create_dir(&d).unwrap();
        let db = settings_edited(&d, sql);
        let o = check(&db, &[]);
        one_line_error(&o, needle);
        let line = stderr(&o);
        assert!(
            line.contains(&format!(
                "store '{}': session #2 has invalid stored settings",
                db.display()
            )),
            "{line}"
        );
        assert!(
            !line.contains("--alpha") && !line.contains("--precision"),
            "{line}"
        );
        let html = d.join("r.html");
        let o = with_store(
            &db,
            &["report", "--session", "2", "--html", html.to_str().unwrap()],
        );
        one_line_error(&o, needle);
        assert!(!html.exists());
    }
}

#[test]
fn history_gates_fail_on_a_benchmark_the_previous_session_held() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    baseline(&db);
    // Another project's session in the same store, between the two: it
    // shares no benchmark, so its benchmark is not this gate's business.
    session(&db, "project=other", &["--runs", "3", "-n", "C", "true"], 0);
    session(
        &db,
        "branch=feature",
        &["--runs", "5", "-n", "B", "sleep 0.005"],
        0,
    );
    let history = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--against",
            "history",
            "--fail-if-slower",
            "5",
            "--format",
            "text",
        ];
        args.extend_from_slice(extra);
        with_store(&db, &args)
    };
    let o = history(&[]);
    fails_on(&o, "A", "not in this session");
    let out = text(&o);
    assert!(!out.contains("C:"), "{out}");
    // The correction counts the benchmarks tested, not the one absent.
    assert!(out.contains("Bonferroni over 1 benchmark,"), "{out}");
    let o = history(&["--allow-missing", "A"]);
    // changes' gate takes the same baseline: A fails it.
    changes_fails_on(&db, &["A: not compared: not in its newest session"]);
    // Allowed, A no longer fails it (B's verdict is noise's to decide).
    assert!(!text(&o).contains("❌ not compared"), "{}", text(&o));
    assert!(
        text(&o).contains("not compared (allowed by --allow-missing): not in this session"),
        "{}",
        text(&o)
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
}
