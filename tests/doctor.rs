//! `cmdscope doctor` and the preflight record of every session.

mod common;

use common::*;

const CHECKS: [&str; 9] = [
    "governor",
    "turbo",
    "load",
    "busy_processes",
    "steal",
    "swap",
    "smt",
    "thermal",
    "power",
];

/// Every check named, in order, with a known status and a detail.
fn assert_checks(checks: &serde_json::Value) {
    let list = checks.as_array().expect("a list of checks");
    let names: Vec<&str> = list.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, CHECKS);
    for c in list {
        assert!(
            ["ok", "warn", "unknown"].contains(&c["status"].as_str().unwrap()),
            "{c}"
        );
        assert!(!c["detail"].as_str().unwrap().is_empty(), "{c}");
    }
}

#[test]
fn doctor_exits_1_exactly_when_a_check_warns_and_prints_json() {
    let o = cmdscope(&["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_checks(&doc["checks"]);
    let warned = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["status"] == "warn");
    assert_eq!(doc["status"], if warned { "warn" } else { "ok" });
    assert_eq!(o.status.code(), Some(if warned { 1 } else { 0 }), "{doc}");
    assert_eq!(doc["changes"], serde_json::json!([]));

    // The text form: one line per check, then the isolation advice.
    let o = cmdscope(&["doctor", "--cpus", "0"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    for name in CHECKS {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(name)),
            "{name} missing: {text}"
        );
    }
    assert!(text.contains("isolcpus="), "{text}");
    assert!(matches!(o.status.code(), Some(0 | 1)));

    let o = cmdscope(&["doctor", "--cpus", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--cpus expects a list"));
}

#[test]
fn every_exported_session_records_the_preflight() {
    let dir = tempdir();
    let out = dir.path().join("s.json");
    let o = cmdscope(&[
        "run",
        "--runs",
        "2",
        "--export-json",
        out.to_str().unwrap(),
        "true",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_checks(&read_json(&out)["session"]["preflight"]);
}

/// The machine checks watch the machine while the first runs go, not
/// before them: their window lasts until the first run that ends after
/// 50 ms, here the first 120 ms run, which a window before the runs would
/// not have covered.
#[test]
fn the_checks_window_spans_the_first_runs() {
    let dir = tempdir();
    let out = dir.path().join("s.json");
    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "--export-json",
        out.to_str().unwrap(),
        "sleep 0.12",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let checks = &read_json(&out)["session"]["preflight"];
    assert_checks(checks);
    let busy = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "busy_processes")
        .unwrap();
    let detail = busy["detail"].as_str().unwrap();
    // "... over 131 ms" (ok) or "... over 131 ms: name (pid) 40 %" (warn).
    let ms: f64 = detail
        .split(" over ")
        .nth(1)
        .and_then(|t| t.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no window in '{detail}'"));
    let walls: Vec<f64> = read_json(&out)["results"][0]["times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap() * 1e3)
        .collect();
    assert!(ms >= walls[0], "window {ms} ms, first run {} ms", walls[0]);
    let all: f64 = walls.iter().sum();
    assert!(
        ms < all,
        "window {ms} ms closed after the last run ({all} ms of runs)"
    );
}

fn run_with_store(db: &std::path::Path) {
    let o = with_store(db, &["run", "--runs", "2", "--style", "none", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn stored_sessions_keep_the_preflight_and_old_stores_migrate() {
    use cmdscope::store::{Filter, Location, Store};
    let dir = tempdir();
    let db = dir.path().join("s.db");
    run_with_store(&db);
    // Make it a version-2 store (before the preflight column, migration 3,
    // the search column, migration 4, and the settings, migration 5), as an
    // older cmdscope left it;
    // the next run migrates it and keeps the old session.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&sql_back_to_version(2)).unwrap();
    }
    run_with_store(&db);
    let sessions = Store::open(&Location::Sqlite(db.clone()))
        .unwrap()
        .sessions(&Filter::default())
        .unwrap();
    assert_eq!(sessions.len(), 2);
    // Newest first: the new session has its checks, the old one none.
    let checks: serde_json::Value =
        serde_json::from_str(sessions[0].preflight.as_deref().expect("preflight stored")).unwrap();
    assert_checks(&checks);
    assert_eq!(sessions[1].preflight, None);
}

/// The CPUs this process may run on, from /proc/self/status.
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim()
        .to_string();
    list.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

/// `doctor --cpus` with a CPU this process may not use has nothing to
/// report "ok" about: it is refused as `run --cpus` refuses it, naming the
/// CPUs there are.
#[test]
fn doctor_refuses_cpus_that_are_not_there() {
    let allowed = allowed_cpus();
    let missing = allowed.iter().max().unwrap() + 1;
    let list: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
    let o = cmdscope(&["doctor", "--cpus", &missing.to_string()]);
    one_line_error(
        &o,
        &format!(
            "--cpus: CPU {missing} is not available to cmdscope (available: {})",
            list.join(",")
        ),
    );
    let run = cmdscope(&["run", "--runs", "1", "--cpus", &missing.to_string(), "true"]);
    assert_eq!(stderr(&run), stderr(&o), "doctor and run refuse alike");
    // A CPU that is there is checked as before.
    let o = cmdscope(&["doctor", "--json", "--cpus", &allowed[0].to_string()]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_checks(&json(&o)["checks"]);
}
