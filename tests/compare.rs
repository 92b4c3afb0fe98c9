//! `cmdscope compare` on files: our own exports, hyperfine's and Go's.

mod common;

use common::*;

/// Held by the test that measures, and by the tests that start many
/// processes, so that those do not load the CPU while it measures.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn compares_two_exports_and_gates_on_a_slowdown() {
    let _serial = serial();
    let dir = tempdir();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let f = fixture();
    // Two sessions run at different times, so load that comes and goes
    // between them is in the comparison (on a busy machine a 6 ms sleep
    // measures up to 12 ms): the slowdown is 3x, so that a 10 % gate must
    // fail and a 500 % gate must pass whatever the machine does meanwhile.
    for (out, ms) in [(&a, "6"), (&b, "18")] {
        let o = cmdscope(&[
            "run",
            "--runs",
            "10",
            "--style",
            "none",
            "-n",
            "work",
            "--export-json",
            out.to_str().unwrap(),
            // Sleeping, so that other tests loading the CPU do not blur it.
            &format!("{f} sleep {ms}"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = cmdscope(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("time_wall_clock") && text.contains("work"),
        "{text}"
    );

    let o = cmdscope(&[
        "compare",
        "--fail-if-slower",
        "10",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a 200 % slowdown fails a 10 % gate: {}",
        stderr(&o)
    );
    let o = cmdscope(&[
        "compare",
        "--fail-if-slower",
        "500",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "but passes a 500 % gate: {}",
        stderr(&o)
    );

    let o = cmdscope(&[
        "compare",
        "--format",
        "json",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON output");
    let wall = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "time_wall_clock")
        .unwrap();
    assert_eq!(wall["verdict"], "slower");
    assert!(wall["ratio"].as_f64().unwrap() > 1.2);
}

#[test]
fn reads_hyperfine_and_go_files() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
    for (a, b) in [
        ("hyperfine_v1.json", "hyperfine_v2.json"),
        ("go_bench.txt", "go_bench.txt"),
    ] {
        let o = cmdscope(&[
            "compare",
            "--format",
            "markdown",
            &format!("{data}{a}"),
            &format!("{data}{b}"),
        ]);
        assert!(o.status.success(), "{a} {b}: {}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains('|'));
    }
}

#[test]
fn malformed_and_missing_files_are_clear_errors() {
    let dir = tempdir();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"results\": [ {\"command\": 1 ").unwrap();
    for path in [
        bad.to_str().unwrap(),
        "/nonexistent/file.json",
        "/etc/hostname",
    ] {
        let o = cmdscope(&["compare", path]);
        assert_eq!(o.status.code(), Some(2), "{path}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

// ----- a gate is only worth what it refuses ---------------------------------

/// hyperfine 1 JSON with one benchmark per (name, times) pair.
fn hyperfine_file(dir: &std::path::Path, file: &str, benches: &[(&str, &str)]) -> String {
    let results: Vec<String> = benches
        .iter()
        .map(|(name, times)| format!(r#"{{"command": "{name}", "times": [{times}]}}"#))
        .collect();
    let path = dir.join(file);
    std::fs::write(&path, format!(r#"{{"results": [{}]}}"#, results.join(", "))).unwrap();
    path.to_str().unwrap().to_owned()
}

const TEN: &str = "0.100, 0.101, 0.102, 0.099, 0.098, 0.100, 0.101, 0.102, 0.099, 0.098";
const SLOW: &str = "9.0, 9.1, 9.2, 8.9, 8.8, 9.0, 9.1, 9.2, 8.9, 8.8";

#[test]
fn a_gate_that_compared_nothing_does_not_pass() {
    let _serial = serial();
    let dir = tempdir();
    let base = hyperfine_file(dir.path(), "base.json", &[("a", TEN)]);
    // No benchmark name in common.
    let other = hyperfine_file(dir.path(), "other.json", &[("b", TEN)]);
    let o = cmdscope(&["compare", "--fail-if-slower", "5", &base, &other]);
    one_line_error(&o, "the gate compared nothing");
    let line = error_line(&o);
    assert!(
        line.contains("only in") && line.contains("'a'") && line.contains("'b'"),
        "{line}"
    );
    // The benchmark matched, but the candidate has no runs.
    let empty = hyperfine_file(dir.path(), "empty.json", &[("a", "")]);
    let o = cmdscope(&["compare", "--fail-if-slower", "5", &base, &empty]);
    one_line_error(&o, "without wall-time runs in both: 'a'");
    // One file has nothing to gate against.
    let o = cmdscope(&["compare", "--fail-if-slower", "5", &base]);
    one_line_error(&o, "the gate needs a baseline and a candidate");
    // Without a gate the same files are shown, not refused.
    assert!(cmdscope(&["compare", &base, &other]).status.success());
    // A gate that compared something still passes or fails on it.
    let same = hyperfine_file(dir.path(), "same.json", &[("a", TEN), ("c", TEN)]);
    let o = cmdscope(&["compare", "--fail-if-slower", "5", &base, &same]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn duplicate_names_and_mistyped_flags_are_refused() {
    let _serial = serial();
    let dir = tempdir();
    let base = hyperfine_file(dir.path(), "base.json", &[("x", TEN)]);
    // `x` twice, once 90x slower: neither may be dropped.
    let twice = hyperfine_file(dir.path(), "twice.json", &[("x", TEN), ("x", SLOW)]);
    let o = cmdscope(&["compare", "--fail-if-slower", "5", &base, &twice]);
    one_line_error(&o, "benchmark 'x' appears again");
    let flag = dir.path().join("flag.json");
    std::fs::write(
        &flag,
        r#"{"results": [{"command": "x", "measurements": [
            {"timed_out": "yes", "time_wall_clock": {"value": 9.0, "unit": "s"}}]}]}"#,
    )
    .unwrap();
    let o = cmdscope(&["compare", &base, flag.to_str().unwrap()]);
    one_line_error(&o, "timed_out: expected true or false, found a string");
}
