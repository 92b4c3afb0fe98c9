//! Bad inputs, table-driven (docs/RELIABILITY.md): arguments, files, stores
//! and environments that must each end in exit status 2 with exactly one
//! line on stderr, no panic, and every file in the working directory
//! exactly as it was (nothing changed, nothing created).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;

/// Every file under `dir` (recursively) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            let name = e.path().strip_prefix(dir).unwrap().display().to_string();
            if t.is_dir() {
                out.insert(format!("{name}/"), Vec::new());
                stack.push(e.path());
            } else if t.is_file() {
                out.insert(name, std::fs::read(e.path()).unwrap());
            } else {
                out.insert(name, b"<special>".to_vec());
            }
        }
    }
    out
}

fn setup(d: &Path) {
    let w = |name: &str, text: &str| std::fs::write(d.join(name), text).unwrap();
    w(
        "sentinel.json",
        r#"{"results":[{"command":"a","times":[0.1,0.2,0.3]}]}"#,
    );
    w("empty.json", "");
    w("bad.json", "{\"results\": [");
    w("shape.json", r#"{"x": 1}"#);
    w(
        "negative.json",
        r#"{"results":[{"command":"a","times":[0.1,-0.2]}]}"#,
    );
    w(
        "overflow.json",
        r#"{"results":[{"command":"a","measurements":[{"memory_peak_resident":{"value":1e308,"unit":"GiB"}}]}]}"#,
    );
    w(
        "future.json",
        r#"{"schema_version": 99, "tool": "cmdscope", "results": []}"#,
    );
    w("nounit.txt", "BenchmarkX 100 12.5\n");
    w("noiter.txt", "BenchmarkX abc 12.5 ns/op\n");
    w("prose.txt", "nothing to see here\n");
    w("bad.env", "A=1\nthis line has no equals sign\n");
    std::fs::write(d.join("binary.bin"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
    std::fs::write(d.join("garbage.db"), vec![0x5a; 4096]).unwrap();
    std::fs::create_dir(d.join("dir")).unwrap();
    let c = rusqlite::Connection::open(d.join("foreign.sqlite")).unwrap();
    c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    let fifo = std::ffi::CString::new(d.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: valid path string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
}

/// (arguments, environment) — the environment pairs are set; "-NAME"
/// removes NAME.
type Case = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

const NONE: &[(&str, &str)] = &[];

const CASES: &[Case] = &[
    // Arguments.
    (&["run"], NONE),
    (&["run", "--runs", "abc", "true"], NONE),
    (&["run", "--runs", "-1", "true"], NONE),
    (
        &[
            "run",
            "--runs",
            "18446744073709551615",
            "-P",
            "b",
            "1",
            "10",
            "--minimize",
            "b",
            "true",
        ],
        NONE,
    ),
    (&["run", "--warmup", "x", "true"], NONE),
    (&["run", "--timeout", "-1", "true"], NONE),
    (&["run", "--timeout", "nan", "true"], NONE),
    (&["run", "--timeout", "inf", "true"], NONE),
    (&["run", "--min-time", "-1", "true"], NONE),
    (&["run", "--min-runs", "5", "--max-runs", "2", "true"], NONE),
    (&["run", "--alpha", "0.7", "true"], NONE),
    (&["run", "--precision", "0", "true"], NONE),
    (&["run", "--precision", "200", "true"], NONE),
    (&["run", "--metric", "nope", "true"], NONE),
    (&["run", "--reference", "nope", "true"], NONE),
    (&["run", "--plot", "p.svg", "true"], NONE),
    (
        &["run", "--export-json", "-", "--export-csv", "-", "true"],
        NONE,
    ),
    (&["run", "-P", "x", "1", "abc", "echo {x}"], NONE),
    (&["run", "-P", "x", "1", "inf", "echo {x}"], NONE),
    (&["run", "-P", "x", "0.5", "2", "echo {x}"], NONE),
    (&["run", "-P", "x", "1", "5", "-D", "0", "echo {x}"], NONE),
    (&["run", "-P", "x", "1", "5", "-D", "-1", "echo {x}"], NONE),
    (&["run", "-P", "x", "1", "1e9", "echo {x}"], NONE),
    (
        &[
            "run",
            "-P",
            "x",
            "0",
            "4",
            "--parameter-factor",
            "2",
            "echo {x}",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "-P",
            "x",
            "1",
            "4",
            "--parameter-factor",
            "1",
            "echo {x}",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "-P",
            "x",
            "1",
            "1e300",
            "--parameter-factor",
            "1.0001",
            "echo {x}",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "-P",
            "x",
            "1e16",
            "1.0000000000001e16",
            "-D",
            "0.5",
            "echo {x}",
        ],
        NONE,
    ),
    (&["run", "-P", "9x", "1", "4", "echo {9x}"], NONE),
    (&["run", "-L", "x", "", "echo {x}"], NONE),
    (&["run", "-L", "x", "a,,b", "echo {x}"], NONE),
    (&["run", "--env", "NOEQUALS", "true"], NONE),
    (&["run", "--env-file", "missing.env", "true"], NONE),
    (&["run", "--env-file", "/dev/zero", "true"], NONE),
    (&["run", "--env-file", "dir", "true"], NONE),
    (&["run", "--env-file", "bad.env", "true"], NONE),
    (&["run", "--cpus", "abc", "true"], NONE),
    (&["run", "--cpus", "5-2", "true"], NONE),
    (&["run", "--nice", "abc", "true"], NONE),
    (&["run", "--env-size", "abc", "true"], NONE),
    (&["run", "--ignore-failure", "x,y", "true"], NONE),
    (&["run", "--export-json", "missing/x.json", "true"], NONE),
    (&["run", "--export-json", "dir", "true"], NONE),
    (&["run", "--export-csv", "sentinel.json/x", "true"], NONE),
    (&["run", "--order", "bogus", "true"], NONE),
    (&["run", "--style", "bogus", "true"], NONE),
    (&["run", "no-such-command-xyz"], NONE),
    (&["run", "./sentinel.json"], NONE),
    (&["run", "'unbalanced"], NONE),
    (&["run", "--label", "novalue", "true"], NONE),
    (
        &["run", "--minimize", "y", "-P", "x", "1", "3", "echo {x}"],
        NONE,
    ),
    (&["run", "--no-such-flag", "true"], NONE),
    (&["bogus-subcommand"], NONE),
    // Results files.
    (&["compare", "missing.json"], NONE),
    (&["compare", "/dev/zero"], NONE),
    (&["compare", "dir"], NONE),
    (&["compare", "fifo"], NONE),
    (&["compare", "empty.json"], NONE),
    (&["compare", "binary.bin"], NONE),
    (&["compare", "bad.json"], NONE),
    (&["compare", "shape.json"], NONE),
    (&["compare", "negative.json"], NONE),
    (&["compare", "overflow.json"], NONE),
    (&["compare", "future.json"], NONE),
    (&["compare", "nounit.txt"], NONE),
    (&["compare", "noiter.txt"], NONE),
    (&["compare", "prose.txt"], NONE),
    (&["compare", "--format", "bogus", "sentinel.json"], NONE),
    (
        &["compare", "--fail-if-slower", "abc", "sentinel.json"],
        NONE,
    ),
    // Stores.
    (&["history", "--store", "missing.sqlite"], NONE),
    (&["history", "--store", "foreign.sqlite"], NONE),
    (&["history", "--store", "garbage.db"], NONE),
    (&["history", "--store", "dir"], NONE),
    (&["history", "--store", "fifo"], NONE),
    (
        &["check", "--store", "foreign.sqlite", "--baseline", "a=b"],
        NONE,
    ),
    (
        &["check", "--store", "missing.sqlite", "--baseline", "a=b"],
        NONE,
    ),
    (&["report", "--store", "missing.sqlite"], NONE),
    (
        &["report", "--store", "foreign.sqlite", "--html", "r.html"],
        NONE,
    ),
    (
        &["import", "--store", "foreign.sqlite", "sentinel.json"],
        NONE,
    ),
    (&["import", "--store", "new.sqlite", "bad.json"], NONE),
    (&["import", "--store", "garbage.db", "sentinel.json"], NONE),
    (
        &["history", "--store", "postgres://u:pw@127.0.0.1:1/db"],
        NONE,
    ),
    (
        &["history", "--store", "postgres://u:pw/@127.0.0.1:1/db"],
        NONE,
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--store",
            "foreign.sqlite",
            "--style",
            "none",
            "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    // Environment.
    (&["history"], &[("CMDSCOPE_STORE", "missing.sqlite")]),
    (&["history"], &[("CMDSCOPE_STORE", "foreign.sqlite")]),
    (&["history"], &[("-HOME", ""), ("-XDG_DATA_HOME", "")]),
    (&["history"], &[("XDG_DATA_HOME", "dir")]),
    // explain.
    (&["explain"], NONE),
    (&["explain", "--timeout", "-1", "true"], NONE),
    (&["explain", "--json", "dir", "true"], NONE),
    (&["explain", "--json", "missing/x.json", "true"], NONE),
    (&["explain", "no-such-command-xyz"], NONE),
    (&["explain", "true", "no-such-command-xyz"], NONE),
    (&["explain", "--env-size", "x", "true"], NONE),
    (&["explain", "--user", "no-such-user-xyz", "true"], NONE),
    (
        &[
            "explain",
            "--workdir",
            "tmpfs",
            "--workdir-template",
            "missing",
            "true",
        ],
        NONE,
    ),
    // run --monitor.
    (
        &[
            "run",
            "--runs",
            "1",
            "--monitor",
            "exit 3",
            "--match",
            "a=b",
            "true",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--monitor",
            "true",
            "--match",
            "a=b",
            "true",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--monitor",
            "sleep 5",
            "--match",
            "a b",
            "true",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--monitor",
            "sleep 5",
            "--match",
            "a=(",
            "true",
        ],
        NONE,
    ),
    (
        &["run", "--runs", "1", "--monitor", "sleep 5", "true"],
        NONE,
    ),
    (&["run", "--runs", "1", "--match", "a=b", "true"], NONE),
    (
        &[
            "run",
            "--runs",
            "1",
            "--monitor",
            "sleep 5",
            "--match",
            "a=b",
            "--monitor-settle",
            "-1",
            "true",
        ],
        NONE,
    ),
];

#[test]
fn every_bad_input_is_one_line_and_exit_2_and_changes_nothing() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let dir = tempdir();
    let d = dir.path();
    setup(d);
    let mut failures = Vec::new();
    for (args, env) in CASES {
        let before = snapshot(d);
        let mut cmd = Command::new(bin());
        cmd.args(*args)
            .current_dir(d)
            .env("NO_COLOR", "1")
            .env("CMDSCOPE_NO_STORE", "1")
            .env("XDG_DATA_HOME", d.join("xdg"))
            .env_remove("CMDSCOPE_STORE")
            .stdin(std::process::Stdio::null());
        for (k, v) in *env {
            match k.strip_prefix('-') {
                Some(k) => cmd.env_remove(k),
                None => cmd.env(k, v),
            };
        }
        let o = cmd.output().expect("run cmdscope");
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().collect();
        let mut problems = Vec::new();
        if o.status.code() != Some(2) {
            problems.push(format!("exit {:?}", o.status.code()));
        }
        if lines.len() != 1 {
            problems.push(format!("{} stderr lines", lines.len()));
        }
        if err.contains("panicked") {
            problems.push("panic".into());
        }
        if snapshot(d) != before {
            problems.push("files changed".into());
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{args:?} {env:?}: {} -- {err}",
                problems.join(", ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs misbehaved:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
