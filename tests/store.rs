//! The results store with SQLite: recording real `cmdscope run` sessions,
//! concurrent writers, `kill -9`, bad stores, and the commands that read it
//! (history, check, report, import).

mod common;
#[path = "common/store.rs"]
mod stores;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cmdscope::import::dataset::{Benchmark, Dataset, Series};
use cmdscope::metrics::Metric;
use cmdscope::store::{Machine, StoredSession};
use common::*;
use stores::*;

/// The tests here measure and spawn a lot on a small machine: one at a
/// time, so that one test's load does not decide another's verdict.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A test's turn (see [`serial`]), its directory and the path `name` in it.
fn serial_db(
    name: &str,
) -> (
    std::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    PathBuf,
) {
    let serial = serial();
    let dir = tempdir();
    let db = dir.path().join(name);
    (serial, dir, db)
}

/// Every session in the SQLite store at `db`, newest first.
fn sessions_in(db: &Path) -> Vec<StoredSession> {
    all_sessions(&mut open_store(db))
}

/// (sessions, runs) in the store.
fn count(path: &Path) -> (usize, i64) {
    sessions_and_runs(&mut open_store(path))
}

/// cmdscope with `data` as XDG_DATA_HOME (where the default store is)
/// and no store chosen by the caller's environment.
fn in_data_home(data: &Path) -> Command {
    let mut command = isolated();
    command.env("XDG_DATA_HOME", data);
    command
}

/// The runs of the first command in the JSON export at `out`.
fn exported_runs(out: &Path) -> usize {
    read_json(out)["results"][0]["measurements"]
        .as_array()
        .unwrap()
        .len()
}

/// Runs SQL `statements` on the SQLite store at `db`, behind cmdscope's back.
fn sql(db: &Path, statements: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(statements)
        .unwrap();
}

/// The one number a SQL `query` on the SQLite store at `db` selects.
fn sql_number(db: &Path, query: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(query, [], |r| r.get(0))
        .unwrap()
}

/// The schema version of the SQLite store at `db`, read with SQL.
fn schema_version(db: &Path) -> i64 {
    sql_number(db, "SELECT version FROM schema_version")
}

/// Takes the SQLite store at `db` back to what cmdscope wrote at `version`.
fn back_to_version(db: &Path, version: i64) {
    sql(db, &sql_back_to_version(version));
}

#[test]
fn records_a_session_with_labels_machine_and_every_metric() {
    let (_serial, _dir, db) = serial_db("s.db");
    recorded(
        &db,
        &[
            "run",
            "--runs",
            "4",
            "--style",
            "none",
            "--label",
            "commit=abc123",
            "--label",
            "branch=main",
            "-n",
            "alloc",
            &format!("{} alloc 20", fixture()),
            &format!("{} busy 1", fixture()),
        ],
    );
    let mut store = open_store(&db);
    let sessions = all_sessions(&mut store);
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s.status, "finished");
    assert_eq!(s.stop_reason.as_deref(), Some("run_count"));
    assert_eq!(s.label("commit"), Some("abc123"));
    assert_eq!(s.label("branch"), Some("main"));
    let here = Machine::current();
    assert_eq!(s.fingerprint, here.fingerprint());
    assert_eq!(s.machine.hostname, here.hostname);
    assert!(s.machine.cores >= 1 && s.machine.memory_bytes > 0);
    assert_eq!(s.cells.len(), 2);
    assert_eq!(s.cells[0].identity, "alloc");
    assert_eq!(s.cells[1].identity, format!("{} busy 1", fixture()));
    let runs = store.runs(s.cells[0].id).unwrap();
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_eq!(r.exit_code, Some(0));
        let rss = r.get(Metric::PeakRss).unwrap();
        assert!(rss > 20.0 * 1048576.0, "peak RSS stored: {rss}");
        assert!(r.get(Metric::WallTime).unwrap() > 0.0);
        assert!(r.get(Metric::UserTime).is_some());
    }
    // run_index is the global order of runs: 8 distinct values 0..8.
    let mut idx: Vec<u64> = runs
        .iter()
        .chain(store.runs(s.cells[1].id).unwrap().iter())
        .map(|r| r.run_index)
        .collect();
    idx.sort();
    assert_eq!(idx, (0..8).collect::<Vec<u64>>());
}

#[test]
fn no_store_records_nothing_and_the_default_store_is_per_user() {
    let _serial = serial();
    let dir = tempdir();
    let o = in_data_home(dir.path())
        .args([
            "run",
            "--runs",
            "2",
            "--style",
            "none",
            "--no-store",
            "true",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let default = dir.path().join("cmdscope/results.sqlite3");
    assert!(!default.exists());
    let o = in_data_home(dir.path())
        .args(["run", "--runs", "2", "--style", "none", "true"])
        .env("CMDSCOPE_NO_STORE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!default.exists(), "CMDSCOPE_NO_STORE=1 records nothing");
    let o = in_data_home(dir.path())
        .args(["run", "--runs", "2", "--style", "none", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count(&default), (1, 2));
    // CMDSCOPE_STORE overrides the default.
    let other = dir.path().join("other.db");
    let o = in_data_home(dir.path())
        .args(["run", "--runs", "3", "--style", "none", "true"])
        .env("CMDSCOPE_STORE", &other)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count(&other), (1, 3));
    assert_eq!(count(&default), (1, 2));
}

/// `history` in a data directory, with CMDSCOPE_STORE set or not.
fn history_in(data: &Path, env_store: Option<&Path>, args: &[&str]) -> Output {
    let mut command = in_data_home(data);
    command.arg("history").args(args);
    if let Some(store) = env_store {
        command.env("CMDSCOPE_STORE", store);
    }
    command.output().unwrap()
}

#[test]
fn history_before_the_first_run_is_empty_but_a_named_store_must_exist() {
    let dir = tempdir();
    let default = dir.path().join("cmdscope/results.sqlite3");
    let o = history_in(dir.path(), None, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "No sessions yet: the default store '{}' does not exist until a run records one.\n",
            default.display()
        )
    );
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    assert!(
        !dir.path().join("cmdscope").exists(),
        "history created the store"
    );
    // A store the user named is an error when it is missing, given either way.
    let named = dir.path().join("named.db");
    let needle = format!("store '{}' does not exist", named.display());
    one_line_error(
        &history_in(dir.path(), None, &["--store", named.to_str().unwrap()]),
        &needle,
    );
    one_line_error(&history_in(dir.path(), Some(&named), &[]), &needle);
    assert!(!named.exists());
}

#[test]
fn four_concurrent_runs_lose_no_rows() {
    let (_serial, _dir, db) = serial_db("shared.db");
    let runs = 40;
    four_concurrent_writers(&db, runs);
    assert_eq!(count(&db), (4, 4 * 2 * runs));
    let sessions = sessions_in(&db);
    let mut writers: Vec<&str> = sessions.iter().filter_map(|s| s.label("writer")).collect();
    writers.sort();
    assert_eq!(writers, vec!["0", "1", "2", "3"]);
}

#[test]
fn kill_9_keeps_every_finished_run() {
    let (_serial, dir, db) = serial_db("killed.db");
    let counter = dir.path().join("finished-runs");
    let mut child = counted_run(&db, "100000", &counter, &[])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_finished_runs(&counter, 25);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let finished = finished_runs(&counter);
    let mut store = open_store(&db);
    let sessions = sessions_once_stored(&mut store, finished);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].status, "running", "never finished");
    let stored = sessions[0].cells[0].runs;
    assert_finished_runs_stored(stored, finished);
    assert_eq!(
        store.runs(sessions[0].cells[0].id).unwrap().len() as i64,
        stored
    );
    // The CLI reads it too.
    let o = recorded(&db, &["history"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("unfinished"));
}

/// Runs the spawner made from a schedule whose reports cmdscope had not
/// read (or read and not yet sent) when it was killed: the store writer
/// reads them from its copy of the spawner's socket and stores them.
/// Killed while running, and killed after being stopped for a while, as a
/// busy machine may leave it, while the spawner made up to a schedule's
/// worth of runs (a few hundred) that no one read.
#[test]
fn kill_9_during_a_schedule_keeps_every_finished_run() {
    for stopped in [None, Some(Duration::from_millis(400))] {
        kill_9_during_a_schedule(stopped);
    }
}

fn kill_9_during_a_schedule(stopped: Option<Duration>) {
    let (_serial, dir, db) = serial_db("killed.db");
    let counter = dir.path().join("runs-made");
    let lines = kill_9_scheduled_run(&db, &counter, 300, stopped);
    let mut store = open_store(&db);
    let sessions = sessions_once_stored(&mut store, lines - 1);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].status, "running", "never finished");
    let runs = store.runs(sessions[0].cells[0].id).unwrap();
    assert_scheduled_runs_stored(runs.len() as i64, lines);
    // In order, as cmdscope would have stored them.
    let indices: Vec<u64> = runs.iter().map(|r| r.run_index).collect();
    assert_eq!(indices, (0..runs.len() as u64).collect::<Vec<_>>());
    assert!(runs.iter().all(|r| r.exit_code == Some(0)));
}

#[test]
fn unreadable_store_is_a_clear_error_and_the_export_is_written() {
    let (_serial, dir, db) = serial_db("garbage.db");
    std::fs::write(&db, vec![0x5au8; 8192]).unwrap();
    let o = with_store(&db, &["history"]);
    assert_eq!(o.status.code(), Some(2));
    let line = error_line(&o);
    assert!(
        line.contains("garbage.db") && line.contains("not a database"),
        "{line}"
    );

    let out = dir.path().join("out.json");
    let o = run_true_exporting(&db, "3", &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(error_line(&o).contains("not a database"));
    assert_eq!(exported_runs(&out), 3);
    // The garbage was not touched.
    assert_eq!(std::fs::read(&db).unwrap(), vec![0x5au8; 8192]);
}

#[test]
fn newer_schema_is_refused_and_left_alone() {
    let (_serial, dir, db) = serial_db("new.db");
    record_true(&db, "2");
    sql(&db, "UPDATE schema_version SET version = 99");
    let o = with_store(&db, &["history"]);
    assert_eq!(o.status.code(), Some(2));
    let line = error_line(&o);
    assert!(
        line.contains("schema version 99") && line.contains("upgrade cmdscope"),
        "{line}"
    );
    let out = dir.path().join("out.json");
    let o = run_true_exporting(&db, "2", &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(out.exists());
    assert_eq!(schema_version(&db), 99);
    let n = sql_number(&db, "SELECT COUNT(*) FROM runs");
    assert_eq!(n, 2, "nothing written to a newer store");
}

#[test]
fn postgres_down_is_a_clear_error_without_the_password_and_the_export_is_written() {
    let _serial = serial();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempdir();
    let out = dir.path().join("out.json");
    let url = format!("postgres://bob:hunter2@127.0.0.1:{port}/results");
    let o = run_true_exporting(&url, "3", &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("hunter2"), "password printed: {err}");
    let line = error_line(&o);
    assert!(
        line.contains(&format!("postgres://bob:***@127.0.0.1:{port}/results"))
            && line.contains("cannot connect"),
        "{line}"
    );
    assert_eq!(exported_runs(&out), 3);
    // The other commands say the same, and so does the environment variable.
    let o = Command::new(bin())
        .arg("history")
        .env("CMDSCOPE_STORE", &url)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("hunter2"));
    // --help shows no value of CMDSCOPE_STORE.
    let o = Command::new(bin())
        .args(["run", "--help"])
        .env("CMDSCOPE_STORE", &url)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stdout).contains("hunter2"));
}

#[test]
fn the_default_store_failing_only_warns() {
    let (_serial, _dir, blocker) = serial_db("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let o = in_data_home(&blocker)
        .args(["run", "--runs", "2", "--style", "none", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning") && err.contains("not be stored"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn shell_mode_stores_the_values_it_reports() {
    let (_serial, dir, db) = serial_db("s.db");
    let out = dir.path().join("out.json");
    recorded(
        &db,
        &[
            "run",
            "-S",
            "sh",
            "--runs",
            "5",
            "--style",
            "none",
            "--export-json",
            out.to_str().unwrap(),
            "echo hi",
        ],
    );
    let doc = read_json(&out);
    let exported: Vec<f64> = doc["results"][0]["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["time_wall_clock"]["value"].as_f64().unwrap())
        .collect();
    let mut store = open_store(&db);
    let s = &all_sessions(&mut store)[0];
    assert_eq!(s.cells.len(), 1, "the calibration cell is not stored");
    assert!(s.shell_overhead.unwrap() > 0.0);
    let stored: Vec<f64> = store
        .runs(s.cells[0].id)
        .unwrap()
        .iter()
        .map(|r| r.get(Metric::WallTime).unwrap())
        .collect();
    // (The test reads the export with serde_json's default float parsing,
    // which may be one unit in the last place off.)
    assert_eq!(stored.len(), exported.len());
    for (s, e) in stored.iter().zip(&exported) {
        assert!((s - e).abs() <= 1e-12 * e.abs().max(1e-9), "{s} != {e}");
    }
}

/// One session of "work" (about `ms` milliseconds a run) and "steady" (2 ms),
/// imported with fixed times: `check` is tested on known values, because
/// load that comes and goes between real sessions on a busy machine is a
/// real change of wall time (real runs into the store are tested above).
fn run_labelled(db: &Path, label: &str, ms: &str) {
    let ms: f64 = ms.parse().unwrap();
    import_times(
        db,
        label,
        &[
            ("work", times_around(ms / 1e3, 12)),
            ("steady", times_around(0.002, 12)),
        ],
    );
}

#[test]
fn check_gates_on_a_significant_slowdown_against_the_baseline() {
    let (_serial, _dir, db) = serial_db("ci.db");
    run_labelled(&db, "branch=main", "3");
    run_labelled(&db, "branch=feature", "15");
    let o = check_slower(&db, "branch=main", "10", &[]);
    let md = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    assert!(
        md.starts_with("### cmdscope check: ")
            && md.contains("significantly slower by more than 10%"),
        "{md}"
    );
    assert!(md.contains("| Benchmark | Baseline | Current |"), "{md}");
    let work = md.lines().find(|l| l.starts_with("| `work`")).unwrap();
    assert!(work.contains("❌"), "{work}");
    assert!(md.lines().any(|l| l.starts_with("| `steady`")), "{md}");
    // A threshold above the slowdown passes; text output too.
    let o = check_slower(&db, "branch=main", "2000", &["--format", "text"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The latest session is the baseline itself: it is compared with the previous one.
    run_labelled(&db, "branch=main", "3");
    let o = check_slower(&db, "branch=main", "60", &[]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{md}");
    assert!(
        md.contains("Nothing significantly slower by more than 60%"),
        "{md}"
    );
    assert!(
        md.contains("session #3") && md.contains("session #1"),
        "{md}"
    );
    // No baseline: exit 2 with one line.
    let o = with_store(&db, &["check", "--baseline", "branch=nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(error_line(&o).contains("branch=nope"));
}

#[test]
fn history_filters_by_command_label_and_machine() {
    let (_serial, _dir, db) = serial_db("h.db");
    run_labelled(&db, "branch=main", "1");
    recorded(
        &db,
        &[
            "run", "--runs", "2", "--style", "none", "--label", "branch=x", "true",
        ],
    );
    let text = |o: Output| String::from_utf8_lossy(&o.stdout).to_string();
    let all = text(with_store(&db, &["history"]));
    assert!(
        all.find("#2").unwrap() < all.find("#1").unwrap(),
        "newest first: {all}"
    );
    assert!(all.contains("work") && all.contains("true"));
    let only = text(with_store(&db, &["history", "work"]));
    assert!(only.contains("#1") && !only.contains("#2"), "{only}");
    let labelled = text(with_store(&db, &["history", "--label", "branch=x"]));
    assert!(
        labelled.contains("#2") && !labelled.contains("#1"),
        "{labelled}"
    );
    let host = Machine::current().hostname;
    let here = text(with_store(&db, &["history", "--machine", &host]));
    assert!(here.contains("#1") && here.contains("#2"));
    let elsewhere = text(with_store(&db, &["history", "--machine", "no-such-host"]));
    assert!(elsewhere.contains("No sessions"), "{elsewhere}");
}

#[test]
fn report_is_self_contained_and_escapes_user_text() {
    let (_serial, dir, db) = serial_db("r.db");
    for _ in 0..2 {
        recorded(
            &db,
            &[
                "run",
                "--runs",
                "6",
                "--style",
                "none",
                "--label",
                "who=<b>bold</b>",
                "-n",
                "<script>alert(1)</script>",
                "true",
                "-n",
                "other & \"quoted\"",
                "sh -c 'exit 0'",
            ],
        );
    }
    let (_, html) = html_report(&db, &dir.path().join("r.html"), &[]);
    assert!(
        !html.to_lowercase().contains("<script"),
        "no script element at all"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;b&gt;bold&lt;/b&gt;") && !html.contains("<b>"));
    assert!(html.contains("other &amp; &quot;quoted&quot;"));
    for needle in [
        "Runs in order",
        "Distributions",
        "Comparisons with",
        "History on this machine",
    ] {
        assert!(html.contains(needle), "section {needle}");
    }
    assert!(html.matches("<svg").count() >= 4);
    // Nothing that would be fetched: no src= or href= attributes.
    assert!(!html.contains("src=") && !html.contains("href="));
}

fn series(metric: &str, unit: &str, values: &[f64]) -> Series {
    Series {
        metric: metric.into(),
        unit: unit.into(),
        higher_is_better: metric == "MB/s",
        exact: false,
        values: values.to_vec(),
    }
}

#[test]
fn imported_datasets_become_sessions_that_check_can_gate() {
    let (_serial, _dir, db) = serial_db("imp.db");
    let mut store = open_store(&db);
    let machine = Machine::current();
    let hyperfine = Dataset {
        source: "h.json".into(),
        format: "hyperfine-2".into(),
        rss_floor: None,
        benchmarks: vec![Benchmark {
            name: "sleep 0.1".into(),
            parameters: vec![("n".into(), "1".into())],
            series: vec![
                series("time_wall_clock", "s", &[0.10, 0.11, 0.10]),
                series("memory_peak_resident", "B", &[1e6, 1e6, 1e6]),
            ],
        }],
    };
    let (id, runs) = cmdscope::commands::import::store_dataset(
        &mut store,
        &hyperfine,
        &[("commit".into(), "a".into())],
        &machine,
        "cmdscope import h.json",
    )
    .unwrap();
    assert_eq!(runs, 3);
    let go = |ns: f64| Dataset {
        source: "go.txt".into(),
        format: "go".into(),
        rss_floor: None,
        benchmarks: vec![Benchmark {
            name: "BenchmarkEncode".into(),
            parameters: vec![],
            series: vec![
                series(
                    "sec/op",
                    "s",
                    &(0..10)
                        .map(|i| ns * 1e-9 * (1.0 + 0.001 * i as f64))
                        .collect::<Vec<_>>(),
                ),
                series("B/op", "B", &[512.0; 10]),
            ],
        }],
    };
    cmdscope::commands::import::store_dataset(
        &mut store,
        &go(100.0),
        &[("branch".into(), "main".into())],
        &machine,
        "x",
    )
    .unwrap();
    cmdscope::commands::import::store_dataset(&mut store, &go(150.0), &[], &machine, "y").unwrap();
    let sessions = all_sessions(&mut store);
    assert_eq!(sessions.len(), 3);
    let h = sessions.iter().find(|s| s.id == id).unwrap();
    assert_eq!(h.source, "import:hyperfine-2");
    assert_eq!(h.cells[0].identity, "sleep 0.1 [n=1]");
    let r = store.runs(h.cells[0].id).unwrap();
    assert_eq!(
        r.iter()
            .map(|s| s.get(Metric::WallTime).unwrap())
            .collect::<Vec<_>>(),
        vec![0.10, 0.11, 0.10]
    );
    let latest = &sessions[0];
    assert_eq!(latest.cells[0].runs, 10);
    let extra = store.extra_series(latest.cells[0].id).unwrap();
    assert_eq!(extra.len(), 2);
    assert_eq!(
        extra.iter().find(|s| s.metric == "B/op").unwrap().values,
        vec![512.0; 10]
    );
    drop(store);
    // The gate works on Go's sec/op.
    let o = check_slower(&db, "branch=main", "10", &[]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    assert!(
        md.contains("`BenchmarkEncode`") && md.contains("+50.0%"),
        "{md}"
    );
}

/// Needs the importers of the `compare` branch (`crate::import::read_dataset`).
#[test]
fn import_command_reads_hyperfine_json() {
    let (_serial, dir, db) = serial_db("i.db");
    let file = dir.path().join("hf.json");
    std::fs::write(
        &file,
        r#"{"results":[{"command":"sleep 0.1","mean":0.1,"stddev":0.0,"median":0.1,"user":0.0,"system":0.0,"min":0.1,"max":0.1,"times":[0.1,0.1,0.1],"exit_codes":[0,0,0]}]}"#,
    )
    .unwrap();
    recorded(
        &db,
        &["import", "--label", "commit=x", file.to_str().unwrap()],
    );
    assert_eq!(count(&db), (1, 3));
}

/// Children of `pid` whose command line contains `needle`.
fn children_with(pid: u32, needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        // pid (comm) state ppid ...
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
        if ppid == Some(pid) && String::from_utf8_lossy(&cmdline).contains(needle) {
            out.push(child);
        }
    }
    out
}

#[test]
fn a_store_failing_mid_run_keeps_measuring_and_exports() {
    let (_serial, dir, db) = serial_db("mid.db");
    let out = dir.path().join("out.json");
    let counter = dir.path().join("finished");
    let export = [OsStr::new("--export-json"), out.as_os_str()];
    let child = counted_run(&db, "150", &counter, &export)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_finished_runs(&counter, 10);
    // The store goes away in the middle of the session.
    let writers = children_with(child.id(), "__store-writer");
    assert_eq!(writers.len(), 1, "one store writer");
    unsafe { libc::kill(writers[0] as i32, libc::SIGKILL) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = error_line(&o);
    assert!(
        line.contains("mid.db") && line.contains("stopped unexpectedly"),
        "{line}"
    );
    // Measuring went on: all runs exported; the store kept those before.
    assert_eq!(exported_runs(&out), 150);
    // What the writer had committed when it died: runs are sent to it
    // without waiting for their commit, so on a busy machine it may be a
    // few runs behind the ten whose conclude hook ran.
    let (sessions, runs) = count(&db);
    assert_eq!(sessions, 1);
    assert!((1..150).contains(&runs), "{runs} runs stored");
}

#[test]
fn a_timeout_kills_the_benchmark_tree_but_not_the_store_writer() {
    let (_serial, _dir, store) = serial_db("t.sqlite3");
    let token = format!("cmdscope-store-timeout-{}", std::process::id());
    let o = with_store(
        &store,
        &[
            "run",
            "--runs",
            "3",
            "--timeout",
            "0.3",
            &format!("{} background {token}", fixture()),
        ],
    );
    // Every run timed out: exit 1, and still every run recorded.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        count(&store),
        (1, 3),
        "every timed-out run was recorded after the tree kill"
    );
    let o = with_store(
        &store,
        &[
            "run",
            "--runs",
            "2",
            "--timeout",
            "0.3",
            "--stop-on-timeout",
            &format!("{} sleep 5000", fixture()),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not stored"), "{}", stderr(&o));
    assert_eq!(count(&store).0, 2);
}

#[test]
fn a_search_keeps_its_answer_and_the_report_and_site_show_it() {
    let (_serial, dir, db) = serial_db("search.db");
    let out = dir.path().join("search.json");
    // One parameter by wall time: its set is shaded on the report's curve.
    search_into(
        &db,
        &out,
        &[
            "-P",
            "ms",
            "1",
            "12",
            "--minimize",
            "ms",
            &format!("{} sleep {{ms}}", fixture()),
        ],
    );
    let export = read_json(&out);
    let sessions = sessions_in(&db);
    let stored = sessions[0].search.clone().expect("the answer is stored");
    assert_stored_search(&stored, &export);
    assert!(stored.runs < stored.grid_runs, "{stored:?}");
    let best = &stored.best[0].1;

    let html_path = dir.path().join("r.html");
    let (_, html) = html_report(&db, &html_path, &[]);
    assert!(
        html.contains("dashed: the search&#39;s best; green: as good as it"),
        "best marked, set shaded"
    );
    // The shaded ranges are the stored set's (svg's label of a range:
    // "as good as the best: 4 – 16", or "… best: 4" for a single value).
    let low = stored
        .as_good
        .iter()
        .map(|p| p[0].1.parse::<f64>().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(
        html.contains(&format!("as good as the best: {low} – "))
            || html.contains(&format!("as good as the best: {low}<")),
        "range from {low}"
    );
    assert!(
        html.contains(&format!("Search: ms = {best}")),
        "the answer in words"
    );

    // Two parameters: nothing to shade on one curve; the answer is a line.
    search_into(
        &db,
        &out,
        &[
            "-P",
            "a",
            "1",
            "3",
            "-P",
            "b",
            "1",
            "3",
            "--minimize",
            "a,b",
            &format!("{} sleep {{a}}{{b}}", fixture()),
        ],
    );
    let export = read_json(&out);
    let sessions = sessions_in(&db);
    let two = sessions[0].search.clone().expect("the answer is stored");
    assert_stored_search(&two, &export);
    assert_eq!(two.parameters, ["a", "b"]);
    let (_, html) = html_report(&db, &html_path, &[]);
    let words = format!("a={} b={}", two.best[0].1, two.best[1].1);
    assert!(html.contains(&format!("Search: {words}")), "{words}");
    assert!(!html.contains("green: as good as"), "nothing shaded");

    // The site: each benchmark's page lists its newest search's answer.
    let site = dir.path().join("site");
    recorded(&db, &["report", "--site", site.to_str().unwrap()]);
    let mut pages = 0;
    for entry in std::fs::read_dir(&site).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() == "index.html" {
            continue;
        }
        let page = std::fs::read_to_string(&path).unwrap();
        let (id, answer) = if page.contains("[a=") {
            (sessions[0].id, format!("{words};"))
        } else {
            (sessions[1].id, format!("ms = {best};"))
        };
        assert!(
            page.contains(&format!("Search of session #{id}: {answer}")),
            "{}: {page}",
            path.display()
        );
        pages += 1;
    }
    assert!(pages >= 2, "{pages} benchmark pages");
}

#[test]
fn a_version_3_store_upgrades_and_keeps_its_sessions() {
    let (_serial, dir, db) = serial_db("v3.db");
    record_true(&db, "3");
    // Back to what cmdscope wrote before the search's column.
    back_to_version(&db, 3);
    let before = sessions_in(&db);
    assert_eq!(before.len(), 1);
    assert_eq!(
        schema_version(&db),
        cmdscope::store::schema::LATEST,
        "opening migrated it"
    );
    assert_eq!(before[0].search, None);
    assert_eq!(before[0].cells[0].runs, 3, "its runs kept");
    // A search lands in the upgraded store.
    let out = dir.path().join("s.json");
    search_into(
        &db,
        &out,
        &["-P", "n", "1", "6", "--minimize", "n", "sleep 0.00{n}"],
    );
    let after = sessions_in(&db);
    assert_eq!(after.len(), 2);
    assert_eq!(after[1], before[0], "the old session unchanged");
    assert_stored_search(after[0].search.as_ref().unwrap(), &read_json(&out));
}

#[test]
fn a_version_4_store_upgrades_and_new_sessions_keep_their_settings() {
    let (_serial, _dir, db) = serial_db("v4.db");
    record_true(&db, "3");
    // Back to what cmdscope wrote before the settings' column.
    back_to_version(&db, 4);
    // Readers read it as it is; the next run migrates it.
    let o = ok(with_store(&db, &["history"]));
    assert!(
        stderr(&o).contains("has schema version 4, older than this cmdscope's"),
        "{}",
        stderr(&o)
    );
    assert_eq!(schema_version(&db), 4, "history upgraded it");
    recorded(
        &db,
        &[
            "run",
            "--runs",
            "4",
            "--alpha",
            "0.01",
            "--precision",
            "5",
            "--style",
            "none",
            "-n",
            "yes",
            "true",
            "-n",
            "no",
            "false",
            "-i",
            "--reference-name",
            "no",
            "--export-json",
            "-",
        ],
    );
    assert_eq!(
        schema_version(&db),
        cmdscope::store::schema::LATEST,
        "the run migrated it"
    );
    let sessions = sessions_in(&db);
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1].settings, None, "the old session has none");
    let s = sessions[0]
        .settings
        .as_ref()
        .expect("the new session's settings");
    assert_eq!(s.alpha, 0.01);
    assert_eq!(s.precision, Some(0.05));
    assert!(s.looks, "interleaved with a precision: sequential looks");
    let names: Vec<&str> = s.cells.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["yes", "no"]);
    assert_eq!((s.reference, s.named_reference), (1, true));
    assert_eq!(s.policy.exact, Some(4));
    assert_eq!(s.metric, "time_wall_clock");
    assert_eq!(s.benchmark, None);
    assert_eq!(s.exports.len(), 1);
    assert_eq!(
        (s.exports[0].format.as_str(), s.exports[0].path.as_str()),
        ("json", "-")
    );
}

#[test]
fn a_report_shows_the_settings_its_session_ran_with() {
    let (_serial, dir, db) = serial_db("settings.db");
    recorded(
        &db,
        &[
            "run",
            "--runs",
            "6",
            "--alpha",
            "0.01",
            "--precision",
            "5",
            "--style",
            "none",
            "-n",
            "one",
            "true",
            "-n",
            "two",
            "true",
            "--reference-name",
            "two",
        ],
    );
    let settings_row = |page: &str| -> String {
        page.split("<th>Settings</th><td>")
            .nth(1)
            .and_then(|rest| rest.split("</td>").next())
            .unwrap_or_default()
            .to_string()
    };
    // The report is made without those flags: the stored settings, not
    // today's defaults (alpha 0.05, ±1 %, the first command).
    let html = dir.path().join("r.html");
    let (_, page) = html_report(&db, &html, &[]);
    assert_eq!(
        settings_row(&page),
        "alpha 0.01, precision ±5 %, reference &#39;two&#39;"
    );
    assert!(page.contains("Comparisons with two"), "{page}");
    assert!(!page.contains("read back"), "{page}");
    // The stored settings changed behind cmdscope's back while the stored
    // command line still says alpha 0.01, 5 % and 'two': the report
    // follows the settings, so it cannot be reading the command line.
    sql(
        &db,
        "UPDATE sessions SET settings = json_set(settings, '$.alpha', 0.002, \
         '$.precision', 0.03, '$.reference', 0)",
    );
    let (_, page) = html_report(&db, &html, &[]);
    assert_eq!(
        settings_row(&page),
        "alpha 0.002, precision ±3 %, reference &#39;one&#39;"
    );
    assert!(page.contains("Comparisons with one"), "{page}");
    // The same session without its stored settings (as stored before they
    // were kept): read back from its command line, and said so once.
    sql(&db, "UPDATE sessions SET settings = NULL");
    let (_, page) = html_report(&db, &html, &[]);
    assert_eq!(settings_row(&page), "");
    assert_eq!(
        page.matches("read back from its command line").count(),
        1,
        "{page}"
    );
}

#[test]
fn a_searchs_stored_runs_are_its_values_runs_with_the_shell_taken_out() {
    // A command that needs a shell: the runs streamed raw are replaced at
    // the end by the values with the shell's start-up subtracted, each in
    // the cell it was measured as (the search tries only some values).
    let (_serial, dir, db) = serial_db("search-shell.db");
    let out = dir.path().join("search-shell.json");
    search_into(
        &db,
        &out,
        &[
            "-P",
            "ms",
            "1",
            "12",
            "--minimize",
            "ms",
            &format!("{} sleep {{ms}} && true", fixture()),
        ],
    );
    let export = read_json(&out);
    let results = export["results"].as_array().unwrap();
    assert!(results.len() < 12, "the search tried fewer than 12 values");
    let mut store = open_store(&db);
    let session = all_sessions(&mut store).remove(0);
    let mut stored_with_runs = 0;
    for cell in &session.cells {
        let runs = store.runs(cell.id).unwrap();
        let exported = results
            .iter()
            .find(|r| r["parameters"]["ms"] == cell.parameters[0].1.as_str());
        let Some(r) = exported else {
            assert!(runs.is_empty(), "{} was not tried: {runs:?}", cell.name);
            continue;
        };
        stored_with_runs += 1;
        let times: Vec<f64> = r["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        let stored: Vec<f64> = runs
            .iter()
            .map(|s| s.get(Metric::WallTime).unwrap())
            .collect();
        assert_eq!(stored.len(), times.len(), "{}", cell.name);
        for (a, b) in stored.iter().zip(&times) {
            assert!(
                (a - b).abs() < 1e-9,
                "{}: stored {a}, exported {b}",
                cell.name
            );
        }
    }
    assert_eq!(stored_with_runs, results.len());
}

#[test]
fn a_one_letter_password_is_hidden_in_the_location_not_searched_for_in_messages() {
    // Nothing listens on port 1: the connection is refused at once.
    for password in ["o", "e", "r"] {
        let url = format!("postgres://bob:{password}@127.0.0.1:1/db");
        let o = isolated()
            .args(["history", "--store", &url])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let line = error_line(&o);
        // The driver's words arrive whole; the location has no password.
        assert!(
            line.contains("store 'postgres://bob:***@127.0.0.1:1/db'")
                && line.contains("error connecting to server")
                && line.contains("Connection refused"),
            "{line}"
        );
        assert!(!line.contains(&format!(":{password}@")), "{line}");
        assert_eq!(line.matches("***").count(), 1, "{line}");
    }
}

#[test]
fn the_site_replaces_a_planted_link_and_leaves_its_target_alone() {
    let dir = tempdir();
    let db = dir.path().join("s.db");
    record_true(&db, "3");
    // Someone who can write into the published directory plants a link.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let site = dir.path().join("public");
    std::fs::create_dir(&site).unwrap();
    std::os::unix::fs::symlink(&victim, site.join("index.html")).unwrap();
    recorded(&db, &["report", "--site", site.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let index = site.join("index.html");
    assert!(std::fs::symlink_metadata(&index).unwrap().is_file());
    assert!(std::fs::read_to_string(&index).unwrap().contains("<html"));
}

#[test]
fn check_compares_at_the_alpha_and_precision_the_checked_session_ran_with() {
    let (_serial, _dir, db) = serial_db("levels.db");
    // Session 1 the baseline; session 2 has `work` 10 % slower (fixed
    // times: a significant slowdown at any usual level).
    run_labelled(&db, "branch=main", "3");
    run_labelled(&db, "branch=feature", "3.3");
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--session", "2", "--baseline", "branch=main"];
        args.extend(extra);
        let o = with_store(&db, &args);
        let md = String::from_utf8_lossy(&o.stdout).to_string();
        (o.status.code(), md, stderr(&o))
    };
    // Imported: no settings; run's defaults (alpha 0.05, ±1 %): a regression.
    let (code, md, err) = check(&[]);
    assert_eq!(code, Some(1), "{md}{err}");
    assert!(md.contains("alpha 0.05"), "{md}");
    assert!(!md.contains("read back"), "{md}");
    // Session 2 as if run with --alpha 0.01 --precision 50: settings taken
    // from a real run that asked for them.
    recorded(
        &db,
        &[
            "run",
            "--runs",
            "2",
            "--alpha",
            "0.01",
            "--precision",
            "50",
            "--style",
            "none",
            "true",
        ],
    );
    sql(
        &db,
        "UPDATE sessions SET settings = (SELECT settings FROM sessions WHERE id = 3) WHERE id = 2",
    );
    // 10 % is within the ±50 % the session asked to resolve: no regression.
    let (code, md, err) = check(&[]);
    assert_eq!(code, Some(0), "{md}{err}");
    assert!(md.contains("alpha 0.01"), "{md}");
    let work = md.lines().find(|l| l.starts_with("| `work`")).unwrap();
    assert!(work.ends_with("| no difference |"), "{work}");
    // --alpha given wins over the stored one; the precision stays the session's.
    let (code, md, err) = check(&["--alpha", "0.02"]);
    assert_eq!(code, Some(0), "{md}{err}");
    assert!(
        md.contains("alpha 0.02") && !md.contains("alpha 0.01"),
        "{md}"
    );
    // A run session stored before settings were kept: read back from its
    // command line, and said so.
    sql(
        &db,
        "UPDATE sessions SET settings = NULL, source = 'run', \
         command_line = 'cmdscope run --alpha 0.01 --precision 50 -- work' WHERE id = 2",
    );
    let (code, md, err) = check(&[]);
    assert_eq!(code, Some(0), "{md}{err}");
    assert!(md.contains("alpha 0.01"), "{md}");
    assert_eq!(
        md.matches("Session #2 was stored before cmdscope kept a session's settings")
            .count(),
        1,
        "{md}"
    );
}

/// A concurrency session (8 runs of `true` at N = 2) as a cmdscope of
/// store schema `version` stored it.
fn old_concurrency_session(db: &Path, version: i64) {
    recorded(
        db,
        &[
            "run",
            "--runs",
            "8",
            "--concurrency",
            "2",
            "--style",
            "none",
            "true",
        ],
    );
    back_to_version(db, version);
}

/// A session in concurrency mode keeps its batches: read back, the
/// throughput, its interval and the throughput comparison are the run's;
/// the report shows them. A store of version 5 (before batches) upgrades
/// keeping its sessions.
#[test]
fn a_concurrency_session_keeps_its_throughput_from_version_5_on() {
    let (_serial, dir, db) = serial_db("v5.db");
    // A concurrency session stored by a cmdscope that kept no batches.
    old_concurrency_session(&db, 5);
    let out = dir.path().join("c.json");
    concurrency_session_into(db.to_str().unwrap(), &out);
    let doc = read_json(&out);
    let mut store = open_store(&db);
    let sessions = all_sessions(&mut store);
    assert_eq!(sessions.len(), 2, "the old session kept");
    assert_eq!(sessions[1].cells[0].runs, 8);
    assert!(store.batches(sessions[1].cells[0].id).unwrap().is_empty());
    // Its report says why it has no throughput.
    let old = dir.path().join("old.html");
    let id = sessions[1].id.to_string();
    let (_, page) = html_report(&db, &old, &["--session", &id]);
    assert!(!page.contains("<h2>Concurrency</h2>"));
    assert!(
        page.contains("ran in concurrency mode before cmdscope stored its batches"),
        "no note on the missing throughput"
    );
    assert_stored_throughput(&mut store, &doc);
    // The report says what the run said.
    let html = dir.path().join("r.html");
    let (_, page) = html_report(&db, &html, &[]);
    assert!(
        page.contains("<h2>Concurrency</h2>"),
        "no concurrency section"
    );
    let value = doc["results"][0]["throughput"]["value"].as_f64().unwrap();
    let shown = format!("{}/s", cmdscope::units::significant(value, 4));
    assert!(page.contains(&shown), "{shown} not in the report");
    assert!(
        page.contains("Throughput of &#39;long&#39; is"),
        "no comparison"
    );
}

/// A concurrency session stored before cmdscope kept its settings (store
/// schema 4) and its batches: its report says what it is, read from its
/// command line, rather than showing its instances as an ordinary
/// benchmark's runs.
#[test]
fn a_concurrency_session_of_a_version_4_store_is_said_to_be_one() {
    let (_serial, dir, db) = serial_db("v4.db");
    old_concurrency_session(&db, 4);
    let html = dir.path().join("old.html");
    let (_, page) = html_report(&db, &html, &[]);
    assert!(
        page.contains("ran in concurrency mode before cmdscope stored its batches"),
        "a v4 concurrency session shown without a note"
    );
    assert!(!page.contains("<h2>Concurrency</h2>"));
}

/// A concurrency session that stopped at a look over batches: the report
/// replays its looks on the stored batches and compares at the level the
/// run compared at, throughput and wall time alike.
#[test]
fn a_concurrency_session_that_stopped_at_a_look_is_reported_at_its_level() {
    let (_serial, dir, db) = serial_db("c.db");
    let out = dir.path().join("c.json");
    concurrency_session_with(
        db.to_str().unwrap(),
        &out,
        &["--until-decided", "--max-time", "120"],
    );
    let doc = read_json(&out);
    assert_eq!(doc["session"]["stop_reason"], "precision", "{doc}");
    let level = doc["throughput_comparisons"][0]["level"].as_f64().unwrap();
    assert!(level < 0.05, "a look's level, not alpha: {level}");
    let mut store = open_store(&db);
    assert_stored_throughput(&mut store, &doc);
    let session = all_sessions(&mut store).remove(0);
    let how = cmdscope::cli::stored::how_run(&session);
    let data = cmdscope::report::html::gather(&mut store, session, &how, 1, true).unwrap();
    let wall = &doc["comparisons"][0];
    assert_eq!(data.comparisons.len(), 1);
    // Equal up to the JSON's rounding of the last digit.
    let stored = data.comparisons[0].level;
    for (run, what) in [
        (wall["level"].as_f64().unwrap(), "wall time"),
        (level, "throughput"),
    ] {
        assert!(
            (stored - run).abs() <= 1e-12 * run,
            "{what}: report {stored}, run {run}"
        );
    }
}

/// A search in concurrency mode measures in rounds, each counting its
/// batches from 1: the store still keeps one row per batch, and each of a
/// cell's runs belongs to exactly one of its batches.
#[test]
fn a_searchs_batches_are_stored_one_row_each() {
    let (_serial, _dir, db) = serial_db("s.db");
    let o = recorded(
        &db,
        &[
            "run",
            "--style",
            "none",
            "-P",
            "n",
            "1",
            "4",
            "--minimize",
            "n",
            "--concurrency",
            "2",
            "sleep 0.0{n}",
        ],
    );
    assert!(!stderr(&o).contains("store"), "{}", stderr(&o));
    let mut store = open_store(&db);
    let session = all_sessions(&mut store).remove(0);
    let mut stored = 0;
    for c in &session.cells {
        let batches = store.batches(c.id).unwrap();
        let runs: usize = batches.iter().map(|b| b.spans.len()).sum();
        assert_eq!(runs as i64, c.runs, "{}: runs in batches", c.name);
        let mut next = 0;
        for (k, b) in batches.iter().enumerate() {
            assert_eq!((b.block, b.first_sample), (k + 1, next), "{}", c.name);
            next += b.spans.len();
        }
        stored += batches.len();
    }
    assert!(stored >= 4, "{stored} batches stored");
}

/// `kill -9` in concurrency mode in the middle of a batch: every instance
/// that had ended is stored, as single runs are, though its batch never
/// ended (each goes to the store as it ends, not with its batch).
#[test]
fn kill_9_during_a_concurrency_batch_keeps_every_finished_instance() {
    let (_serial, dir, db) = serial_db("killed.db");
    let counter = dir.path().join("instances");
    let n = 4;
    let lines = kill_9_counted(
        concurrent_counted_run(&db, &counter, n),
        &counter,
        100,
        None,
    );
    let mut store = open_store(&db);
    let sessions = sessions_once_stored(&mut store, lines - n as i64);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].status, "running", "never finished");
    let runs = store.runs(sessions[0].cells[0].id).unwrap();
    assert_instances_stored(runs.len() as i64, lines, n as i64);
    // Numbered in the order they ended, with no gap.
    let indices: Vec<u64> = runs.iter().map(|r| r.run_index).collect();
    assert_eq!(indices, (0..runs.len() as u64).collect::<Vec<_>>());
    assert!(runs.iter().all(|r| r.exit_code == Some(0)));
    // No batch ended: none is stored, and the runs wait for theirs.
    assert!(store.batches(sessions[0].cells[0].id).unwrap().is_empty());
}

/// `kill -9` in concurrency mode: every batch that ended is stored with
/// its runs (a batch goes to the store right after its runs), so the
/// unfinished session still has its throughput.
#[test]
fn kill_9_keeps_every_finished_batch() {
    let (_serial, _dir, db) = serial_db("killed.db");
    // A precision it cannot reach: only the kill ends it.
    let mut child = isolated()
        .args([
            "run",
            "--style",
            "none",
            "--until-decided",
            "--max-time",
            "600",
        ])
        .args(["--precision", "0.0001", "--concurrency", "2", "--store"])
        .arg(&db)
        .arg("sleep 0.02")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let batches = || -> i64 {
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM batches", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let start = Instant::now();
    while batches() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "batches too slow"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // What the orphaned writer had read, committed on its own schedule.
    std::thread::sleep(Duration::from_millis(500));
    let mut store = open_store(&db);
    let session = all_sessions(&mut store).remove(0);
    assert_eq!(session.status, "running", "never finished");
    let cell = &session.cells[0];
    let stored = store.batches(cell.id).unwrap();
    assert!(stored.len() >= 3, "{} batches", stored.len());
    // Each batch has its eight runs; at most one more batch's runs came
    // before the kill took its row.
    let in_batches: usize = stored.iter().map(|b| b.spans.len()).sum();
    assert_eq!(in_batches, 8 * stored.len());
    assert!(
        (in_batches as i64..=in_batches as i64 + 8).contains(&cell.runs),
        "{} runs for {} batches",
        cell.runs,
        stored.len()
    );
    let how = cmdscope::cli::stored::how_run(&session);
    let loaded = cmdscope::store::replay::session(&mut store, &session).unwrap();
    let (_, c) = cmdscope::analysis::stored::concurrency(loaded, &how).expect("batches read back");
    let t = c.cells[0].as_ref().expect("a throughput");
    assert_eq!(t.batches, stored.len());
    // Two instances of 20 ms at once make at most 100 a second.
    assert!(t.value > 0.0 && t.value <= 100.0 * 1.05, "{}/s", t.value);
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A store made by this cmdscope and taken back to version 4 (before
/// settings) or 5 (before batches) is read as it is by history, report,
/// check and changes: each works, says once what the store lacks, and
/// leaves it as it was (its version, its bytes, no file beside it).
#[test]
fn readers_read_stores_of_versions_4_and_5_as_they_are() {
    for version in [4, 5] {
        let (_serial, dir, db) = serial_db(&format!("v{version}.db"));
        for label in ["kind=base", "kind=new"] {
            recorded(
                &db,
                &[
                    "run",
                    "--runs",
                    "5",
                    "--alpha",
                    "0.02",
                    "--style",
                    "none",
                    "--label",
                    label,
                    "-n",
                    "one",
                    "true",
                    "-n",
                    "two",
                    "true",
                    "--reference-name",
                    "two",
                ],
            );
        }
        back_to_version(&db, version);
        let out = tempdir();
        let html = out.path().join("r.html");
        let before = (names_in(dir.path()), std::fs::read(&db).unwrap());
        let lacks = cmdscope::store::schema::lacks(version);
        let read = |args: &[&str]| -> String {
            let o = ok(with_store(&db, args));
            let err = stderr(&o);
            let note = format!(
                "has schema version {version}, older than this cmdscope's ({}): read as it is, \
                 without {lacks} (",
                cmdscope::store::schema::LATEST
            );
            assert_eq!(err.matches(&note).count(), 1, "{args:?}: {err}");
            assert_eq!(
                (names_in(dir.path()), std::fs::read(&db).unwrap()),
                before,
                "{args:?} changed the store or left files beside it"
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let history = read(&["history"]);
        assert!(
            history.contains("#2") && history.contains("#1") && history.contains("5 runs"),
            "{history}"
        );
        let check = read(&[
            "check",
            "--baseline",
            "kind=base",
            "--fail-if-slower",
            "1000",
        ]);
        assert!(
            check.contains("one") && check.contains("two"),
            "v{version}: {check}"
        );
        let changes = read(&["changes"]);
        assert!(
            changes.contains("one") && changes.contains("2 points"),
            "{changes}"
        );
        read(&["report", "--html", html.to_str().unwrap()]);
        let page = std::fs::read_to_string(&html).unwrap();
        if version >= 5 {
            // The settings stored with the session, in a store that keeps them.
            assert!(
                page.contains(
                    "<th>Settings</th><td>alpha 0.02, a fixed run count, reference &#39;two&#39;"
                ),
                "{page}"
            );
        } else {
            assert!(!page.contains("<th>Settings</th>"), "{page}");
            assert_eq!(
                page.matches("read back from its command line").count(),
                1,
                "{page}"
            );
        }
        assert!(page.contains("Comparisons with two"), "{page}");
        assert_eq!(schema_version(&db), version, "a reader upgraded it");
    }
}

// The history is never lost, nor written where it should not be: no
// output of any command is the store (or its journal files) or another
// output of the same command; a store that keeps nothing, is no file, or
// is newer is refused before anything changes.

/// cmdscope `args --store store` in the directory `dir`, with no store
/// from the caller's environment.
fn with_store_in<A: AsRef<OsStr>>(dir: &Path, store: impl AsRef<OsStr>, args: &[A]) -> Output {
    isolated()
        .args(args)
        .arg("--store")
        .arg(store)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// What must not change when a command is refused: the names in `dir`,
/// the bytes and mode of `store`.
fn untouched(dir: &Path, store: &Path) -> (Vec<String>, Vec<u8>, u32) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(store).unwrap().permissions().mode();
    (names_in(dir), std::fs::read(store).unwrap(), mode)
}

/// Asserts `o` was refused with one error line containing `needle`, and
/// that `before` (from [`untouched`]) still holds.
fn refused_leaving(
    o: &Output,
    needle: &str,
    what: &str,
    dir: &Path,
    store: &Path,
    before: &(Vec<String>, Vec<u8>, u32),
) {
    assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(o));
    let line = error_line(o);
    assert!(line.contains(needle), "{what}: {line}");
    assert!(!stderr(o).contains("panicked"), "{what}: {}", stderr(o));
    let after = untouched(dir, store);
    assert_eq!(after.0, before.0, "{what}: files appeared or went");
    assert!(after.1 == before.1, "{what}: the store's bytes changed");
    assert_eq!(after.2, before.2, "{what}: the store's mode changed");
}

#[test]
fn no_output_of_any_command_is_the_store_or_its_journal() {
    let (_serial, dir, db) = serial_db("s.db");
    let d = dir.path();
    record_true(&db, "3");
    std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("s.db", d.join("link.db")).unwrap();
    std::fs::hard_link(&db, d.join("hard.db")).unwrap();
    let suite = d.join("suite.toml");
    std::fs::write(&suite, "[[benchmark]]\nname = \"t\"\ncommand = \"true\"\n").unwrap();
    let before = untouched(d, &db);
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    let s = path("s.db");
    let run = |extra: &[&str]| -> Vec<String> {
        ["run", "--runs", "2", "--style", "none"]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    let cases: Vec<(String, Vec<String>)> = [
        ("--export-json", "s.db"),
        ("--export-csv", "s.db"),
        ("--export-markdown", "s.db"),
        ("--export-asciidoc", "s.db"),
        ("--export-orgmode", "s.db"),
        ("--export-json", "s.db-wal"),
        ("--export-csv", "s.db-shm"),
        ("--export-markdown", "s.db-journal"),
        ("--export-json", "link.db"),
        ("--export-json", "hard.db"),
        ("--output", "s.db"),
    ]
    .iter()
    .map(|(flag, name)| {
        let args = run(&[flag, &path(name), "true"]);
        (
            format!("run {flag} {name}"),
            args.iter().map(|a| a.to_string()).collect(),
        )
    })
    .chain([
        (
            "run --plot s.db".to_string(),
            run(&["-L", "x", "1,2", "--plot", &s, "true {x}"])
                .iter()
                .map(|a| a.to_string())
                .collect(),
        ),
        (
            "report --html s.db".to_string(),
            vec!["report".into(), "--html".into(), s.clone()],
        ),
        (
            "report --html s.db-wal".to_string(),
            vec!["report".into(), "--html".into(), path("s.db-wal")],
        ),
        (
            "suite submit --script s.db".to_string(),
            [
                "suite",
                "submit",
                "--slurm",
                "--partitions",
                "1",
                "--sbatch",
                "true",
            ]
            .iter()
            .map(|a| a.to_string())
            .chain(["--script".into(), s.clone(), path("suite.toml")])
            .collect(),
        ),
    ])
    .collect();
    // The store named by --store, through a link, with sqlite:, and in
    // CMDSCOPE_STORE: the same file each time.
    for (what, args) in &cases {
        for store in [s.clone(), path("link.db"), format!("sqlite:{s}")] {
            let o = with_store_in(d, &store, args);
            refused_leaving(
                &o,
                "results store",
                &format!("{what} --store {store}"),
                d,
                &db,
                &before,
            );
        }
        let o = isolated()
            .args(args)
            .env("CMDSCOPE_STORE", &s)
            .current_dir(d)
            .output()
            .unwrap();
        refused_leaving(
            &o,
            "results store",
            &format!("{what}, CMDSCOPE_STORE"),
            d,
            &db,
            &before,
        );
    }
    // --no-store records nothing, but the store it names keeps its history.
    let o = isolated()
        .args(run(&[
            "--no-store",
            "--store",
            &s,
            "--export-json",
            &s,
            "true",
        ]))
        .output()
        .unwrap();
    refused_leaving(&o, "results store", "--no-store", d, &db, &before);
    // Standard output appended to the store (`>> s.db`).
    for args in [vec!["history".to_string()], run(&["true"])] {
        let out = std::fs::OpenOptions::new().append(true).open(&db).unwrap();
        let o = isolated()
            .args(&args)
            .arg("--store")
            .arg(&s)
            .stdout(out)
            .output()
            .unwrap();
        refused_leaving(
            &o,
            "standard output is the results store",
            "history >> s.db",
            d,
            &db,
            &before,
        );
    }
    // The store still holds its session.
    assert_eq!(count(&db), (1, 3));
}

#[test]
fn the_default_store_and_the_reports_default_name_are_protected_too() {
    let (_serial, dir, _) = serial_db("unused");
    let d = dir.path();
    let data = d.join("data");
    ok(in_data_home(&data)
        .args(["run", "--runs", "2", "--style", "none", "true"])
        .output()
        .unwrap());
    let default = data.join("cmdscope/results.sqlite3");
    let before = untouched(&data.join("cmdscope"), &default);
    let o = in_data_home(&data)
        .args(["run", "--runs", "2", "--style", "none", "--export-json"])
        .arg(&default)
        .arg("true")
        .output()
        .unwrap();
    refused_leaving(
        &o,
        "results store",
        "the default store",
        &data.join("cmdscope"),
        &default,
        &before,
    );
    // `report` writes cmdscope-report.html unless told otherwise: a store
    // of that name in the working directory is not overwritten.
    let named = d.join("cmdscope-report.html");
    record_true(&named, "2");
    let before = untouched(d, &named);
    let o = isolated()
        .args(["report", "--store", "cmdscope-report.html"])
        .current_dir(d)
        .output()
        .unwrap();
    refused_leaving(
        &o,
        "--html 'cmdscope-report.html' is the results store",
        "report",
        d,
        &named,
        &before,
    );
    // `report --site DIR` with the store as one of the pages it writes.
    let site = d.join("public");
    std::fs::create_dir(&site).unwrap();
    let page = site.join("index.html");
    record_true(&page, "2");
    let before = untouched(&site, &page);
    let o = isolated()
        .args(["report", "--site"])
        .arg(&site)
        .arg("--store")
        .arg(&page)
        .output()
        .unwrap();
    refused_leaving(&o, "results store", "report --site", &site, &page, &before);
}

#[test]
fn two_outputs_of_one_command_are_never_one_file() {
    let dir = tempdir();
    let d = dir.path();
    let f = d.join("f.out");
    std::fs::write(&f, "precious\n").unwrap();
    std::os::unix::fs::symlink("f.out", d.join("link.out")).unwrap();
    let before = untouched(d, &f);
    let fs = f.to_str().unwrap();
    let link = d.join("link.out");
    let link = link.to_str().unwrap();
    let new = d.join("new.out");
    let new = new.to_str().unwrap();
    for (what, extra) in [
        (
            "json and csv",
            vec!["--export-json", fs, "--export-csv", fs],
        ),
        (
            "json and markdown through a link",
            vec!["--export-json", fs, "--export-markdown", link],
        ),
        (
            "two exports to a new file",
            vec!["--export-json", new, "--export-orgmode", new],
        ),
        (
            "an export and the commands' output",
            vec!["--export-csv", fs, "--output", fs],
        ),
        (
            "an export and the plot",
            vec!["-L", "x", "1,2", "--export-json", fs, "--plot", fs],
        ),
    ] {
        let mut args = vec!["run", "--no-store", "--runs", "2", "--style", "none"];
        let swept = extra.contains(&"-L");
        args.extend(extra);
        args.push(if swept { "true {x}" } else { "true" });
        let o = isolated().args(&args).output().unwrap();
        refused_leaving(&o, "are the same file", what, d, &f, &before);
    }
    // The commands' --output may be one file for all of them.
    let o = isolated()
        .args(["run", "--no-store", "--runs", "2", "--style", "none"])
        .args(["--output", new, "--output", new])
        .args(["-n", "a", "-n", "b", "true", "true"])
        .output()
        .unwrap();
    ok(o);
}

#[test]
fn a_store_that_is_not_a_regular_file_is_refused_and_nothing_appears_beside_it() {
    let (_serial, dir, _) = serial_db("unused");
    let d = dir.path();
    let results = d.join("r.json");
    write_results_file(&results, &[("a", vec![0.1, 0.2, 0.3])]);
    std::fs::create_dir(d.join("dir.db")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo.db").to_str().unwrap()).unwrap();
    // SAFETY: valid path string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let mut stores = vec![d.join("dir.db"), d.join("fifo.db")];
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        // Devices of its own, as /dev/null and /dev/full are (root only).
        for (name, minor) in [("null.db", 3), ("full.db", 7)] {
            let p = std::ffi::CString::new(d.join(name).to_str().unwrap()).unwrap();
            // SAFETY: valid path string; makedev of the memory devices.
            let made =
                unsafe { libc::mknod(p.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) };
            assert_eq!(made, 0, "mknod {name}");
            stores.push(d.join(name));
        }
    }
    // The system's own, where no journal was left beside them before.
    let system: Vec<PathBuf> = ["/dev/null", "/dev/full"]
        .iter()
        .map(PathBuf::from)
        .filter(|p| {
            ["-journal", "-wal", "-shm"]
                .iter()
                .all(|s| !Path::new(&format!("{}{s}", p.display())).exists())
        })
        .collect();
    let before = names_in(d);
    for store in stores.iter().chain(&system) {
        for args in [
            vec!["run", "--runs", "2", "--style", "none", "true"],
            vec!["import", results.to_str().unwrap()],
        ] {
            let o = isolated()
                .args(&args)
                .arg("--store")
                .arg(store)
                .output()
                .unwrap();
            let what = format!("{args:?} --store {}", store.display());
            assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
            let line = error_line(&o);
            assert!(line.contains("not a regular file"), "{what}: {line}");
            assert_eq!(names_in(d), before, "{what}: files appeared");
            for s in ["-journal", "-wal", "-shm"] {
                let beside = format!("{}{s}", store.display());
                assert!(!Path::new(&beside).exists(), "{what}: {beside} created");
            }
        }
    }
    // A new store in a writable directory is fine.
    ok(with_store(
        d.join("new.db"),
        &["import", results.to_str().unwrap()],
    ));
}

#[test]
fn a_store_of_a_newer_schema_is_left_byte_for_byte_as_it_was_by_every_command() {
    let (_serial, dir, db) = serial_db("newer.db");
    let d = dir.path();
    record_true(&db, "3");
    // A store in rollback-journal mode: switching it to WAL rewrites its
    // header, which is how `run` used to change a store it then refused.
    sql(
        &db,
        "PRAGMA journal_mode = DELETE; UPDATE schema_version SET version = 99",
    );
    let results = d.join("r.json");
    write_results_file(&results, &[("a", vec![0.1, 0.2, 0.3])]);
    let suite = d.join("suite.toml");
    std::fs::write(&suite, "[[benchmark]]\nname = \"t\"\ncommand = \"true\"\n").unwrap();
    let html = d.join("r.html");
    let before = untouched(d, &db);
    let r = results.to_str().unwrap();
    let h = html.to_str().unwrap();
    let sf = suite.to_str().unwrap();
    for args in [
        &["run", "--runs", "2", "--style", "none", "true"][..],
        &["import", r],
        &["history"],
        &["history", "--run", "x"],
        &["report", "--html", h],
        &["report", "--site", h],
        &["check", "--baseline", "a=b"],
        &["changes"],
        &["status", "--run", "x"],
        &["run", "--suite", sf, "--style", "none"],
    ] {
        let o = with_store(&db, args);
        refused_leaving(
            &o,
            "schema version 99",
            &format!("{args:?}"),
            d,
            &db,
            &before,
        );
    }
    // Listing a suite only estimates from the store: it warns, and leaves it.
    let o = with_store(&db, &["suite", "list", sf]);
    assert!(stderr(&o).contains("schema version 99"), "{}", stderr(&o));
    assert_eq!(untouched(d, &db), before, "suite list changed the store");
}

#[test]
fn connection_strings_cmdscope_cannot_use_are_refused_never_taken_for_files() {
    let dir = tempdir();
    let d = dir.path();
    let results = d.join("r.json");
    write_results_file(&results, &[("a", vec![0.1, 0.2, 0.3])]);
    let before = names_in(d);
    let secret = "Zq7-secret";
    for (store, needle) in [
        (
            format!("postgresql://h/db?user=u&PASSWORD={secret}"),
            "keys are lower case ('password')",
        ),
        (
            format!("host=h PASSWORD={secret}"),
            "keys are lower case ('password')",
        ),
        (
            format!("host=h password='{secret}"),
            "a quoted value is not closed",
        ),
        (
            format!("host=h sslcert=x password={secret}"),
            "'sslcert' is not one libpq knows",
        ),
        (format!("POSTGRESQL://u:{secret}@h/db"), "in lower case"),
        ("runs=1.db".to_string(), "give sqlite:NAME or ./NAME"),
    ] {
        for args in [
            &["run", "--runs", "2", "--style", "none", "true"][..],
            &["import", results.to_str().unwrap()],
            &["history"],
            &["report", "--html", "r.html"],
        ] {
            let o = with_store_in(d, &store, args);
            let what = format!("{args:?} --store {store}");
            assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
            let line = error_line(&o);
            assert_eq!(stderr(&o).lines().count(), 1, "{what}: {}", stderr(&o));
            assert!(
                line.contains(needle) && line.contains("not a PostgreSQL connection string"),
                "{what}: {line}"
            );
            assert!(!line.contains(secret), "{what}: password printed: {line}");
            assert_eq!(names_in(d), before, "{what}: a file was created");
        }
    }
}
