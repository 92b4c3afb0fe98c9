//! Steps the store's tests take again and again, on SQLite and on
//! PostgreSQL alike: recording sessions with `cmdscope run`, reading them
//! back, the concurrent writers and the killed run, a search, a check and a
//! report on a store. Shared by tests/store.rs and tests/store_postgres.rs;
//! `store` is an SQLite path or a PostgreSQL URL throughout.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cmdscope::store::{Filter, Location, Store, StoredSession};

use crate::common::{
    bin, fixture, lines, ok, one_line_error, stderr, tempdir, with_store, write_results_file,
};

/// cmdscope with no store chosen by the caller's environment.
pub fn isolated() -> Command {
    let mut command = Command::new(bin());
    command
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE");
    command
}

/// [`with_store`] after asserting that the command succeeded.
pub fn recorded(store: impl AsRef<OsStr>, args: &[&str]) -> Output {
    let o = with_store(store, args);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// A session of `runs` runs of `true` recorded into `store`.
pub fn record_true(store: impl AsRef<OsStr>, runs: &str) -> Output {
    recorded(store, &["run", "--runs", runs, "--style", "none", "true"])
}

/// `run` of `runs` runs of `true` into `store`, exporting its JSON to `out`.
pub fn run_true_exporting(store: impl AsRef<OsStr>, runs: &str, out: &Path) -> Output {
    let out = out.to_str().unwrap();
    let args = [
        "run",
        "--runs",
        runs,
        "--style",
        "none",
        "--export-json",
        out,
        "true",
    ];
    with_store(store, &args)
}

/// The store at `store`, opened (and migrated) through the API.
pub fn open_store(store: impl AsRef<OsStr>) -> Store {
    let text = store.as_ref().to_str().expect("a store named in UTF-8");
    Store::open(&Location::parse(text).expect("a store location")).expect("open store")
}

/// Every session in the store, newest first.
pub fn all_sessions(store: &mut Store) -> Vec<StoredSession> {
    store.sessions(&Filter::default()).expect("sessions")
}

/// (sessions, runs of all their cells) in the store.
pub fn sessions_and_runs(store: &mut Store) -> (usize, i64) {
    let sessions = all_sessions(store);
    let runs = sessions.iter().flat_map(|s| &s.cells).map(|c| c.runs).sum();
    (sessions.len(), runs)
}

/// Four `run`s at once into one store, each of `runs` runs of two
/// commands and labelled `writer=0` to `writer=3`; each must succeed.
pub fn four_concurrent_writers(store: impl AsRef<OsStr>, runs: i64) -> Vec<Output> {
    let children: Vec<_> = (0..4)
        .map(|i| {
            isolated()
                .args(["run", "--style", "none", "--runs", &runs.to_string()])
                .args(["--label", &format!("writer={i}")])
                .arg("--store")
                .arg(store.as_ref())
                .arg("true")
                .arg(format!("{} busy 1", fixture()))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            o
        })
        .collect()
}

/// A `run` of `runs` 5 ms sleeps into `store` (with `extra` options) whose
/// conclude hook adds a line to `counter` after each run is stored: spawn
/// it, and count its finished runs with [`finished_runs`].
pub fn counted_run(
    store: impl AsRef<OsStr>,
    runs: &str,
    counter: &Path,
    extra: &[&OsStr],
) -> Command {
    let mut command = isolated();
    command
        .args(["run", "--style", "none", "--runs", runs, "--store"])
        .arg(store.as_ref())
        .args(extra)
        .arg("--conclude")
        .arg(format!("echo x >> '{}'", counter.display()))
        .arg(format!("{} sleep 5", fixture()))
        .stdout(Stdio::null());
    command
}

/// The runs of a [`counted_run`] whose conclude hook ran.
pub fn finished_runs(counter: &Path) -> i64 {
    lines(counter).len() as i64
}

/// Waits (a minute at most) until `n` runs of a [`counted_run`] finished.
pub fn wait_for_finished_runs(counter: &Path, n: i64) {
    let start = Instant::now();
    while finished_runs(counter) < n {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "runs too slow: {} of {n} in a minute",
            finished_runs(counter)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The sessions once the first cell holds `finished` runs, or after 5 s:
/// a store writer orphaned by a `kill -9` commits what it has read on its
/// own schedule (runs gather for a moment between its commits), so the
/// reader gives it that moment, not more.
pub fn sessions_once_stored(store: &mut Store, finished: i64) -> Vec<StoredSession> {
    let waited = Instant::now();
    loop {
        let sessions = all_sessions(store);
        let stored = sessions.first().map_or(0, |s| s.cells[0].runs);
        if stored >= finished || waited.elapsed() > Duration::from_secs(5) {
            return sessions;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A session of `fixture log COUNTER x` into `store`, many runs and no
/// warm-up: nothing happens between two runs, so the spawner makes them
/// from schedules, and each run's line in `counter` says it ran.
pub fn scheduled_counted_run(store: impl AsRef<OsStr>, counter: &Path) -> Command {
    let mut command = isolated();
    command
        .args([
            "run", "--style", "none", "--warmup", "0", "--runs", "1000000",
        ])
        .arg("--store")
        .arg(store.as_ref())
        .arg(format!("{} log '{}' x", fixture(), counter.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// `kill -9` of a [`scheduled_counted_run`] once `at_least` runs wrote
/// their line; returns the lines written when everything has stopped
/// (the session's spawner, its runs and its store writer, which has then
/// stored all it will). With `stopped`,
/// cmdscope is stopped (SIGSTOP) that long before the kill: the spawner
/// goes on making the runs it was handed, whose reports no one reads.
pub fn kill_9_scheduled_run(
    store: impl AsRef<OsStr>,
    counter: &Path,
    at_least: i64,
    stopped: Option<Duration>,
) -> i64 {
    kill_9_counted(
        scheduled_counted_run(store, counter),
        counter,
        at_least,
        stopped,
    )
}

/// A concurrency session of `fixture log COUNTER x`, `n` instances at a
/// time, into `store`: batches far longer than the test, so that no batch
/// ends before the kill; each instance's line in `counter` says it ran.
pub fn concurrent_counted_run(store: impl AsRef<OsStr>, counter: &Path, n: usize) -> Command {
    let mut command = isolated();
    command
        .args([
            "run", "--style", "none", "--warmup", "0", "--runs", "1000000",
        ])
        .args(["--concurrency", &n.to_string(), "--store"])
        .arg(store.as_ref())
        .arg(format!("{} log '{}' x", fixture(), counter.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// `kill -9` of `command` (a counted session) once `at_least` runs wrote
/// their line, after stopping it for `stopped` if given; returns the lines
/// written once every process of the session is gone.
pub fn kill_9_counted(
    mut command: Command,
    counter: &Path,
    at_least: i64,
    stopped: Option<Duration>,
) -> i64 {
    // Marks cmdscope and all it starts (spawner, store writer, runs): once
    // none is left, no run can still write its line or be stored. The
    // spawner learns of cmdscope's death a moment after it, and may make
    // a run meanwhile.
    let mark = format!("CMDSCOPE_TEST_SESSION={}", counter.display());
    let mut child = command
        .env("CMDSCOPE_TEST_SESSION", counter)
        .spawn()
        .unwrap();
    wait_for_finished_runs(counter, at_least);
    if let Some(pause) = stopped {
        // SAFETY: a signal to our own child, not yet reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGSTOP) };
        std::thread::sleep(pause);
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let waited = Instant::now();
    while !crate::common::processes_with_env(&mark).is_empty() {
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "still running after the kill: {:?}",
            crate::common::processes_with_env(&mark)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    finished_runs(counter)
}

/// Instances of a concurrency session killed with `kill -9`: every one
/// that wrote its line is stored, but those killed after writing it,
/// before they ended: at most one per slot, `n`.
pub fn assert_instances_stored(stored: i64, lines: i64, n: i64) {
    assert!(
        stored <= lines && stored >= lines - n,
        "stored {stored} runs, {lines} instances wrote their line, {n} at a time"
    );
}

/// Runs made from a schedule: every run that wrote its line is stored,
/// but the one killed after writing it, before it ended.
pub fn assert_scheduled_runs_stored(stored: i64, lines: i64) {
    assert!(
        stored == lines || stored == lines - 1,
        "stored {stored} runs, {lines} wrote their line"
    );
}

/// A run is stored before its conclude hook runs: every run whose hook ran
/// is stored, plus at most the one killed between the two.
pub fn assert_finished_runs_stored(stored: i64, finished: i64) {
    assert!(
        stored >= finished && stored <= finished + 1,
        "stored {stored} runs, {finished} finished"
    );
}

/// Runs a search (`scan`: its parameters, goal and command) into `store`,
/// exporting its JSON to `out`.
pub fn search_into(store: impl AsRef<OsStr>, out: &Path, scan: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--style",
        "none",
        "--runs",
        "5",
        "--export-json",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(scan);
    recorded(store, &args)
}

/// `check --baseline <baseline> --fail-if-slower <percent>` and `extra`.
pub fn check_slower(
    store: impl AsRef<OsStr>,
    baseline: &str,
    percent: &str,
    extra: &[&str],
) -> Output {
    let mut args = vec!["check", "--baseline", baseline, "--fail-if-slower", percent];
    args.extend_from_slice(extra);
    with_store(store, &args)
}

/// `report` (with `extra` options) written to `html`, which must succeed:
/// its output and the page.
pub fn html_report(store: impl AsRef<OsStr>, html: &Path, extra: &[&str]) -> (Output, String) {
    let mut args = vec!["report"];
    args.extend_from_slice(extra);
    args.extend(["--html", html.to_str().unwrap()]);
    let o = recorded(store, &args);
    let page = std::fs::read_to_string(html).unwrap();
    (o, page)
}

/// A session of fixed times (`results`: each benchmark's times in
/// seconds) imported into `store` with `label`.
pub fn import_times(store: impl AsRef<OsStr>, label: &str, results: &[(&str, Vec<f64>)]) -> Output {
    let dir = tempdir();
    let file = dir.path().join("session.json");
    write_results_file(&file, results);
    recorded(store, &["import", "--label", label, file.to_str().unwrap()])
}

/// `cmdscope run ARGS --style basic --export-json A` into `store`, then
/// `report --session ID --terminal --style basic --export-json B` of the
/// session it stored: the same terminal report and the same JSON, byte
/// for byte. Returns the live terminal report.
pub fn assert_reports_as_run_did(store: impl AsRef<OsStr>, args: &[&str]) -> String {
    assert_reports_as_run_ended(store, args, 0)
}

/// [`assert_reports_as_run_did`] of a `run` that exits with `status`.
pub fn assert_reports_as_run_ended(store: impl AsRef<OsStr>, args: &[&str], status: i32) -> String {
    let dir = tempdir();
    let db = store.as_ref();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let mut all = vec![
        "run",
        "--style",
        "basic",
        "--export-json",
        a.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let live = with_store(db, &all);
    assert_eq!(live.status.code(), Some(status), "{}", stderr(&live));
    let id = all_sessions(&mut open_store(db)).remove(0).id.to_string();
    let replayed = ok(with_store(
        db,
        &[
            "report",
            "--session",
            &id,
            "--terminal",
            "--style",
            "basic",
            "--export-json",
            b.to_str().unwrap(),
        ],
    ));
    let (live, replayed) = (
        String::from_utf8(live.stdout).unwrap(),
        String::from_utf8(replayed.stdout).unwrap(),
    );
    assert!(!live.is_empty());
    assert_same_text("the terminal report", &replayed, &live);
    let (a, b) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
    );
    assert_same_text("the JSON export", &b, &a);
    live
}

/// `replayed` is `live`, byte for byte; else the first line that differs,
/// with the lines before it.
pub fn assert_same_text(what: &str, replayed: &str, live: &str) {
    if replayed == live {
        return;
    }
    let (r, l): (Vec<&str>, Vec<&str>) = (replayed.lines().collect(), live.lines().collect());
    let at = (0..r.len().max(l.len()))
        .find(|&i| r.get(i) != l.get(i))
        .unwrap_or(r.len());
    panic!(
        "{what} differs at line {}:\n  replayed: {:?}\n  live:     {:?}\nafter:\n{}",
        at + 1,
        r.get(at),
        l.get(at),
        l[at.saturating_sub(6)..at.min(l.len())].join("\n")
    );
}

/// A search recorded into `store` before the store kept its race
/// (`back_to_8` takes the store back to schema 8, which drops the race),
/// then the store upgraded by the next search: that one, stored with its
/// race, reports as `run` printed and exported it; the older one keeps its
/// answer and its HTML report, and `report --terminal` refuses it in one
/// line saying why.
pub fn search_stored_before_its_race(store: impl AsRef<OsStr>, back_to_8: impl FnOnce()) {
    const SEARCH: &[&str] = &[
        "--runs",
        "3",
        "-P",
        "n",
        "1",
        "3",
        "--minimize",
        "n",
        "sleep 0.00{n}",
    ];
    let store = store.as_ref();
    recorded(store, &[&["run", "--style", "none"][..], SEARCH].concat());
    back_to_8();
    let live = assert_reports_as_run_did(store, SEARCH);
    assert!(live.contains("Best: n = "), "{live}");
    let sessions = all_sessions(&mut open_store(store));
    assert_eq!(sessions.len(), 2);
    let (new, old) = (&sessions[0], &sessions[1]);
    assert!(new.race.is_some(), "the upgraded store keeps the race");
    assert!(old.race.is_none() && old.search.is_some(), "{old:?}");
    let old_id = old.id.to_string();
    let o = with_store(
        store,
        &[
            "report",
            "--session",
            &old_id,
            "--terminal",
            "--style",
            "basic",
        ],
    );
    one_line_error(
        &o,
        &format!(
            "session #{old_id} searched an optimum before the store kept the search's race \
             (store schema 9)"
        ),
    );
    let dir = tempdir();
    let html = dir.path().join("r.html");
    ok(with_store(
        store,
        &[
            "report",
            "--session",
            &old_id,
            "--html",
            html.to_str().unwrap(),
        ],
    ));
    assert!(std::fs::read_to_string(&html).unwrap().contains("Search"));
}
