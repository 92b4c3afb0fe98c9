//! A stored session read back as `run` held it: real `cmdscope run`
//! sessions (plain, a sweep, concurrency mode) stored and exported as
//! JSON, then loaded by `store::replay::session` and answered by the same
//! analysis `report` uses. Each cell's name and every run's wall time must
//! be the export's (to the last digit either keeps), and the comparisons, a sweep's set as good as
//! the best and a concurrency session's throughput the run's own.
//!
//! And `report --terminal` and `report --export-json` of a stored session
//! (plain, adaptive, a sweep, concurrency mode, a search, a suite run's
//! sessions) against what `run --style basic --export-json` printed and
//! wrote: the same bytes, with nothing masked; a failed session's and a
//! failed search's too, and a session a monitor watched (its counts, its
//! end, a search of one of its counts). A search stored before the store
//! kept its race, and a monitored session stored before its settings kept
//! the monitor, are refused in one line.

mod common;
#[path = "common/store.rs"]
mod stores;

use cmdscope::metrics::Metric;
use common::*;
use serde_json::Value;
use stores::*;

/// `cmdscope run` into a fresh store with a JSON export, then its session
/// gathered back as `report` does: the export and the report's model.
fn live_and_replayed(args: &[&str]) -> (Value, cmdscope::report::html::ReportData) {
    let dir = tempdir();
    let (db, out) = (dir.path().join("s.db"), dir.path().join("s.json"));
    let mut all = vec![
        "run",
        "--style",
        "none",
        "--export-json",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    ok(with_store(&db, &all));
    let doc = read_json(&out);
    let data = replayed(&db, &doc);
    (doc, data)
}

/// The stored session loaded back: same cells, in the same order, under
/// the same names, every run's wall time the export's to 1e-12.
fn assert_same_runs(
    store: &mut cmdscope::store::Store,
    session: &cmdscope::store::StoredSession,
    doc: &Value,
) {
    let loaded = cmdscope::store::replay::session(store, session).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(loaded.results.len(), results.len());
    for (r, json) in loaded.results.iter().zip(results) {
        assert_eq!(json["name"], r.cell.name.as_str());
        let stored: Vec<f64> = (r.samples.iter())
            .filter(|s| s.counts())
            .filter_map(|s| s.get(Metric::WallTime))
            .collect();
        let exported: Vec<f64> = (json["times"].as_array().unwrap().iter())
            .map(|t| t.as_f64().unwrap())
            .collect();
        // The store and the export each keep a time to its last digit or
        // so, not to the bit: equal to 1e-12.
        assert_eq!(stored.len(), exported.len(), "{}", r.cell.name);
        for (s, e) in stored.iter().zip(&exported) {
            assert!(
                (s - e).abs() <= 1e-12 * e.abs(),
                "{}: {s} vs {e}",
                r.cell.name
            );
        }
    }
}

/// Loads the one stored session and gathers the HTML report's model from
/// it as `report` does.
fn replayed(db: &std::path::Path, doc: &Value) -> cmdscope::report::html::ReportData {
    let mut store = open_store(db);
    let session = all_sessions(&mut store).remove(0);
    assert!(
        session.settings.is_some(),
        "a session of today keeps its settings"
    );
    assert_same_runs(&mut store, &session, doc);
    let how = cmdscope::cli::stored::how_run(&session);
    assert_eq!(how.read_back, None, "nothing re-parsed");
    cmdscope::report::html::gather(&mut store, session, &how, 1, true).unwrap()
}

/// The report's wall-time comparisons are the run's: the same pairs, and
/// the same level, p-value and ratio up to the JSON's last digit.
fn assert_same_wall_comparisons(
    doc: &Value,
    replayed: &[cmdscope::analysis::comparison::Comparison],
) {
    let live = comparisons_of(doc, "time_wall_clock");
    assert_eq!(replayed.len(), live.len());
    for (r, l) in replayed.iter().zip(live) {
        assert_eq!(l["baseline"], r.baseline.as_str());
        assert_eq!(l["candidate"], r.candidate.as_str());
        for (what, stored) in [
            ("level", r.level),
            ("p_value", r.p_value),
            ("ratio", r.ratio),
        ] {
            let run = l[what].as_f64().unwrap();
            assert!(
                (stored - run).abs() <= 1e-12 * run.abs().max(1e-300),
                "{what}: report {stored}, run {run}"
            );
        }
    }
}

/// Rewrites the JSON column `column` of the store's only session, as a
/// cmdscope that wrote it otherwise would have.
fn edit_stored_json(db: &std::path::Path, column: &str, edit: impl FnOnce(&mut Value)) {
    let c = rusqlite::Connection::open(db).unwrap();
    let text: String = c
        .query_row(&format!("SELECT {column} FROM sessions"), [], |r| r.get(0))
        .unwrap();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    edit(&mut value);
    c.execute(
        &format!("UPDATE sessions SET {column} = ?1"),
        [value.to_string()],
    )
    .unwrap();
}

#[test]
fn a_plain_session_replays_as_run_held_it() {
    let (doc, data) = live_and_replayed(PLAIN_PAIR);
    assert_eq!(data.comparisons.len(), 1);
    assert_same_wall_comparisons(&doc, &data.comparisons);
    assert!(data.as_good.is_none() && data.concurrency.is_none());
}

#[test]
fn a_sweep_replays_its_set_from_its_stored_settings() {
    let (doc, data) = live_and_replayed(&[
        "--runs",
        "8",
        "-P",
        "ms",
        "1",
        "5",
        "-D",
        "4",
        "sleep 0.00{ms}",
    ]);
    assert_same_wall_comparisons(&doc, &data.comparisons);
    // The run's set as good as the best, as the report shades it.
    let curve = &doc["sweep"]["curves"][0];
    let live: Vec<f64> = (curve["as_good"].as_array().unwrap().iter())
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    let set = data.as_good.expect("a sweep's set");
    assert_eq!(set.parameter, "ms");
    let shaded: Vec<f64> = [1.0, 5.0]
        .into_iter()
        .filter(|x| set.ranges.iter().any(|(lo, hi)| lo <= x && x <= hi))
        .collect();
    assert_eq!(shaded, live, "{set:?}");
}

#[test]
fn a_concurrency_session_replays_its_throughput() {
    let dir = tempdir();
    let (db, out) = (dir.path().join("c.db"), dir.path().join("c.json"));
    concurrency_session_into(db.to_str().unwrap(), &out);
    let doc = read_json(&out);
    let mut store = open_store(&db);
    assert_stored_throughput(&mut store, &doc);
    let data = replayed(&db, &doc);
    assert!(data.concurrency.is_some());
    assert_same_wall_comparisons(&doc, &data.comparisons);
}

/// A plain session's two commands and their runs.
const PLAIN_PAIR: &[&str] = &[
    "--runs",
    "8",
    "-n",
    "fast",
    "true",
    "-n",
    "slow",
    "sleep 0.005",
];

/// `run ARGS` into a fresh store, then `report` of its session: the same
/// terminal report and JSON, byte for byte (see
/// `stores::assert_reports_as_run_did`). Returns the live terminal report.
fn assert_replays_byte_for_byte(args: &[&str]) -> String {
    let dir = tempdir();
    assert_reports_as_run_did(dir.path().join("s.db"), args)
}

#[test]
fn a_plain_session_reports_as_run_printed_and_exported_it() {
    let live = assert_replays_byte_for_byte(PLAIN_PAIR);
    assert!(live.contains("'slow' is"), "{live}");
}

#[test]
fn an_adaptive_session_reports_its_looks_as_run_did() {
    // No --runs: the runner stops by its looks, at the level they left.
    assert_replays_byte_for_byte(&[
        "--max-runs",
        "30",
        "-n",
        "fast",
        "true",
        "-n",
        "slow",
        "sleep 0.003",
    ]);
}

#[test]
fn a_sweep_reports_as_run_printed_and_exported_it() {
    let live = assert_replays_byte_for_byte(&[
        "--runs",
        "6",
        "-P",
        "ms",
        "1",
        "5",
        "-D",
        "4",
        "sleep 0.00{ms}",
    ]);
    assert!(live.contains("ms"), "{live}");
}

#[test]
fn a_concurrency_session_reports_as_run_printed_and_exported_it() {
    let live = assert_replays_byte_for_byte(&[&["--runs", "12"][..], &CONCURRENT_PAIR].concat());
    assert!(live.to_lowercase().contains("throughput"), "{live}");
}

#[test]
fn a_suite_run_reports_as_run_printed_it() {
    let dir = tempdir();
    let (db, suite) = (dir.path().join("s.db"), dir.path().join("s.toml"));
    std::fs::write(
        &suite,
        r#"
[defaults]
runs = 5

[[benchmark]]
name = "pair"
commands = ["true", "sleep 0.002"]
names = ["t", "s"]

[[benchmark]]
name = "sweep"
command = "sleep 0.00{ms}"
parameters = { ms = [1, 3] }
"#,
    )
    .unwrap();
    let live = ok(with_store(
        &db,
        &[
            "run",
            "--suite",
            suite.to_str().unwrap(),
            "--run-id",
            "r1",
            "--style",
            "basic",
        ],
    ));
    let replayed = ok(with_store(
        &db,
        &["report", "--run", "r1", "--terminal", "--style", "basic"],
    ));
    let live = String::from_utf8(live.stdout).unwrap();
    assert!(
        live.contains("== pair") && live.contains("== sweep"),
        "{live}"
    );
    let replayed = String::from_utf8(replayed.stdout).unwrap();
    assert_same_text("the suite's terminal reports", &replayed, &live);
}

#[test]
fn a_search_reports_as_run_printed_and_exported_it() {
    // Nine values: the coarse scan, then the zoom's rounds.
    let live = assert_replays_byte_for_byte(&[
        "--runs",
        "5",
        "-P",
        "ms",
        "1",
        "9",
        "--minimize",
        "ms",
        "sleep 0.00{ms}",
    ]);
    assert!(live.contains("Best: ms = "), "{live}");
}

#[test]
fn a_throughput_search_reports_its_batches_as_run_did() {
    // Concurrency mode: the race compares batches, each round cut by the
    // batches it ran.
    let live = assert_replays_byte_for_byte(&[
        "--runs",
        "4",
        "-P",
        "c",
        "1",
        "4",
        "--concurrency",
        "{c}",
        "--metric",
        "throughput",
        "--maximize",
        "c",
        "sleep 0.002",
    ]);
    assert!(live.contains("Best: c = "), "{live}");
}

/// A failed session's report, as `run` printed and exported it (its
/// JSON's `failure` in the failure's words, which the outcome keeps).
fn assert_failed_session_replays(args: &[&str]) -> String {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    let live = assert_reports_as_run_ended(&db, args, 1);
    let stored = all_sessions(&mut open_store(&db)).remove(0);
    let failure = stored.outcome.and_then(|o| o.failure).unwrap_or_default();
    assert!(failure.contains("exited with status 1"), "{failure:?}");
    live
}

#[test]
fn a_failed_session_reports_as_run_printed_and_exported_it() {
    assert_failed_session_replays(&["--runs", "4", "true", "sh -c 'exit 1'"]);
}

#[test]
fn a_search_stopped_by_a_failed_run_reports_as_run_did() {
    // The value 5 is in the coarse scan and fails there: the race stops
    // in its first round, with some runs of it taken in.
    let live = assert_failed_session_replays(&[
        "--runs",
        "4",
        "-P",
        "n",
        "1",
        "9",
        "--minimize",
        "n",
        "-N",
        "sh -c 'test {n} -ne 5 && sleep 0.00{n}'",
    ]);
    assert!(live.contains("Search: "), "{live}");
}

#[test]
fn a_search_stored_before_its_race_was_kept_is_refused_in_one_line() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    search_stored_before_its_race(&db, || {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(&sql_back_to_version(8))
            .unwrap();
    });
}

#[test]
fn a_stored_race_that_does_not_replay_or_is_damaged_is_refused_in_one_line() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    ok(with_store(
        &db,
        &[
            "run",
            "--style",
            "none",
            "--runs",
            "3",
            "-P",
            "n",
            "1",
            "9",
            "--minimize",
            "n",
            "sleep 0.00{n}",
        ],
    ));
    // The coarse round's values in another order than the search asks
    // for them.
    edit_stored_json(&db, "race", |race| {
        let first = race["rounds"][0]["points"].as_array_mut().unwrap();
        assert_eq!(first.len(), 5, "the coarse scan of nine values");
        first.reverse();
    });
    let o = with_store(&db, &["report", "--terminal", "--style", "basic"]);
    one_line_error(&o, "stored race does not replay: at round 1 ");
    // A race that is not one is said to be damaged, not missing.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE sessions SET race = '{\"runs\": 3'", [])
        .unwrap();
    let o = with_store(&db, &["report", "--terminal", "--style", "basic"]);
    one_line_error(&o, "has an invalid stored race (sessions.race): ");
}

/// A monitor printing `tick` and `tock` lines (100 a second each) for as
/// long as the session runs.
const TICKING: &str = "while true; do echo tick; echo tock; sleep 0.01; done";

#[test]
fn a_monitored_session_reports_as_run_printed_and_exported_it() {
    // Two patterns, two commands, a shell (its start-up's calibration runs
    // are not stored) and warmup runs (not counted).
    let live = assert_replays_byte_for_byte(&[
        "--runs",
        "5",
        "--warmup",
        "1",
        "--shell=sh",
        "--monitor-settle",
        "0.02",
        "--monitor",
        TICKING,
        "--match",
        "tick=^tick$",
        "--match",
        "tock=^to",
        "-n",
        "fast",
        "true",
        "-n",
        "slow",
        "sleep 0.005",
    ]);
    assert!(live.contains(&format!("\nMonitor '{TICKING}'")), "{live}");
    assert!(live.contains("(during the run + 0.02 s)"), "{live}");
    assert!(
        live.contains("  monitor_tick: ") && live.contains("  monitor_tock: "),
        "{live}"
    );
    assert!(live.contains("    slow: "), "{live}");
}

#[test]
fn a_monitor_that_ended_during_the_session_replays_its_end() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    let live = assert_reports_as_run_did(
        &db,
        &[
            "--runs",
            "30",
            "--monitor-settle",
            "0.02",
            "--monitor",
            "echo tick; sleep 0.6; exit 3",
            "--match",
            "ticks=tick",
            "sleep 0.02",
            "sleep 0.03",
        ],
    );
    assert!(
        live.contains("The monitor ended during the session (exit status 3) after "),
        "{live}"
    );
    let stored = all_sessions(&mut open_store(&db)).remove(0);
    let (runs, how) = (stored.outcome.and_then(|o| o.monitor_ended)).expect("its end is kept");
    assert!((1..60).contains(&runs), "{runs}");
    assert_eq!(how, "exit status 3");
}

#[test]
fn a_search_of_a_monitor_count_reports_as_run_printed_and_exported_it() {
    // The race reads each round's counts: replayed from the stored ones.
    let live = assert_replays_byte_for_byte(&[
        "--runs",
        "5",
        "--monitor-settle",
        "0.02",
        "--monitor",
        TICKING,
        "--match",
        "tick=^tick$",
        "--metric",
        "monitor_tick",
        "-P",
        "ms",
        "1",
        "9",
        "--minimize",
        "ms",
        "sleep 0.00{ms}",
    ]);
    assert!(
        live.contains("Search: the lowest monitor_tick over ms"),
        "{live}"
    );
    assert!(live.contains("\nMonitor '"), "{live}");
}

#[test]
fn a_monitored_session_stored_before_its_monitor_was_kept_is_refused_in_one_line() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    recorded(
        &db,
        &[
            "run",
            "--style",
            "none",
            "--runs",
            "3",
            "--monitor",
            TICKING,
            "--match",
            "tick=tick",
            "true",
        ],
    );
    // Its settings as a cmdscope that did not keep the monitor wrote them.
    edit_stored_json(&db, "settings", |settings| {
        assert!(settings["monitor"]["command"] == TICKING, "{settings}");
        settings.as_object_mut().unwrap().remove("monitor");
    });
    let o = with_store(&db, &["report", "--terminal", "--style", "basic"]);
    one_line_error(
        &o,
        "session #1 was watched by a monitor (its command, patterns and end), which the store \
         does not keep",
    );
    let o = with_store(&db, &["report", "--export-json", "-"]);
    one_line_error(&o, "session #1 was watched by a monitor");
}
