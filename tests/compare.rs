//! `cmdscope compare` on files: our own exports, hyperfine's and Go's.

mod common;

use common::*;

#[test]
fn compares_two_exports_and_gates_on_a_slowdown() {
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
