//! Hostile conditions (docs/RELIABILITY.md): exports that must not destroy
//! files, closed pipes, leaked passwords, runaway scans, foreign databases,
//! untrusted text and inputs without limits. Every test runs the binary.

mod common;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

use common::*;

fn sh(script: &str, dir: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("CMDSCOPE", bin())
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .output()
        .expect("run sh")
}

/// cmdscope in `dir`, storing nothing unless a store is named.
fn in_dir(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE");
    if !args.contains(&"--store") {
        c.env("CMDSCOPE_NO_STORE", "1");
    }
    c.output().expect("run cmdscope")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn exports_write_through_links_and_keep_special_files() {
    let dir = tempdir();
    let d = dir.path();
    std::fs::write(d.join("target.json"), "old").unwrap();
    std::os::unix::fs::symlink("target.json", d.join("link.json")).unwrap();
    std::fs::write(d.join("a.csv"), "old").unwrap();
    std::fs::hard_link(d.join("a.csv"), d.join("b.csv")).unwrap();
    std::fs::write(d.join("kept.md"), "old").unwrap();
    std::fs::set_permissions(d.join("kept.md"), std::fs::Permissions::from_mode(0o604)).unwrap();
    let device = is_root() && {
        let c = std::ffi::CString::new(d.join("nulldev").to_str().unwrap()).unwrap();
        // SAFETY: valid path; creates the same device as /dev/null.
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) == 0 }
    };
    let o = in_dir(
        d,
        &[
            "run",
            "-r",
            "2",
            "--export-json",
            "link.json",
            "--export-csv",
            "a.csv",
            "--export-markdown",
            "kept.md",
            "true",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let link = std::fs::symlink_metadata(d.join("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert!(read_json(&d.join("target.json"))["results"].is_array());
    assert!(std::fs::read_to_string(d.join("b.csv"))
        .unwrap()
        .starts_with("command"));
    assert_eq!(std::fs::metadata(d.join("a.csv")).unwrap().nlink(), 2);
    assert_eq!(
        std::fs::metadata(d.join("kept.md")).unwrap().mode() & 0o777,
        0o604
    );
    if device {
        let o = in_dir(d, &["run", "-r", "2", "--export-json", "nulldev", "true"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let m = std::fs::symlink_metadata(d.join("nulldev")).unwrap();
        assert!(m.file_type().is_char_device(), "the device was replaced");
    }
    // A new export follows the umask, like hyperfine's (0644 under 022).
    let o = sh(
        "umask 022; \"$CMDSCOPE\" run --no-store -r 2 --export-json new.json true",
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(d.join("new.json")).unwrap().mode() & 0o777,
        0o644
    );
    // /dev/stdout is the descriptor the shell opened: an appending
    // redirection keeps what was there, and the file is not replaced.
    std::fs::write(d.join("log"), "earlier line\n").unwrap();
    let o = sh(
        "\"$CMDSCOPE\" run --no-store -r 2 --export-json /dev/stdout true >> log",
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let log = std::fs::read_to_string(d.join("log")).unwrap();
    let json = log
        .strip_prefix("earlier line\n")
        .expect("earlier line kept");
    let doc: serde_json::Value = serde_json::from_str(json).expect("only the JSON follows");
    assert!(doc["results"].is_array());
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

#[test]
fn a_failure_before_the_first_run_leaves_exports_alone() {
    let dir = tempdir();
    let d = dir.path();
    std::fs::write(d.join("old.json"), "precious").unwrap();
    let o = in_dir(
        d,
        &[
            "run",
            "-r",
            "2",
            "--export-json",
            "old.json",
            "--env-size",
            "200000",
            "true",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("old.json")).unwrap(),
        "precious"
    );
}

/// `| true` and `| head -1`: no panic, exports written, session finished.
#[test]
fn a_closed_stdout_never_panics_and_exports_come_first() {
    let dir = tempdir();
    let d = dir.path();
    let fixture = fixture();
    for round in 0..6 {
        let store = d.join(format!("s{round}.sqlite"));
        let _ = std::fs::remove_file(d.join("out.json"));
        // `true` may exit before or after cmdscope writes: both orders are
        // hostile, and repeating covers both. The last kind closes stderr
        // too, after a warning-free line, before the final error line.
        let (redirect, reader) = match round % 3 {
            0 => ("", "true"),
            1 => ("", "head -1"),
            _ => ("2>&1", "head -1"),
        };
        let script = format!(
            "{{ \"$CMDSCOPE\" run --store {} -r 3 --export-json out.json \
             -L x 1,2,3,4,5,6 '{fixture} sleep {{x}}' {redirect}; echo $? >status; }} | {reader}",
            store.display(),
        );
        let o = sh(&script, d);
        let status = std::fs::read_to_string(d.join("status")).unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(status.trim(), "0", "round {round}: {err}");
        assert!(!err.contains("panicked"), "round {round}: {err}");
        assert!(read_json(&d.join("out.json"))["results"].is_array());
        let conn = rusqlite::Connection::open(&store).unwrap();
        let state: String = conn
            .query_row("SELECT status FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_ne!(state, "running", "round {round}");
    }
    // The commands that only read and print, too.
    for cmd in [
        "history --store s0.sqlite",
        "report --html - --store s0.sqlite",
        "compare out.json out.json",
    ] {
        let script = format!("{{ \"$CMDSCOPE\" {cmd}; echo $? >status; }} | true");
        let o = sh(&script, d);
        let status = std::fs::read_to_string(d.join("status")).unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{cmd}: {err}");
        assert_ne!(status.trim(), "101", "{cmd}: {err}");
    }
}

/// Passwords holding URL delimiters, in URIs and key/value strings, never
/// reach the terminal (nothing listens on port 1, so connecting fails and
/// the location is printed in the error).
#[test]
fn passwords_are_never_printed() {
    let dir = tempdir();
    for location in [
        "postgres://bob:S3cr/etPW3@127.0.0.1:1/db",
        "postgres://bob:S3cr?etPW3@127.0.0.1:1/db",
        "postgres://bob:S3cr#et:PW3@127.0.0.1:1/db",
        "postgresql://bob@127.0.0.1:1/db?password=S3cretPW3",
        "host=127.0.0.1 port=1 user=bob password='S3cr etPW3'",
    ] {
        for args in [
            vec!["history", "--store", location],
            vec!["run", "-r", "1", "--store", location, "true"],
        ] {
            let o = in_dir(dir.path(), &args);
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(all.contains("***"), "{location}: {all}");
            assert!(
                !all.contains("S3cr") && !all.contains("PW3"),
                "{location}: {all}"
            );
        }
    }
    // Nothing was created for the key/value string: it is not a file name.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn error_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Somebody else's SQLite database is neither read as a store nor changed,
/// by any command; a mistyped path creates nothing.
#[test]
fn foreign_databases_and_missing_stores_are_left_alone() {
    let dir = tempdir();
    let d = dir.path();
    let places = d.join("places.sqlite");
    {
        let c = rusqlite::Connection::open(&places).unwrap();
        c.execute_batch(
            "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT);
             INSERT INTO moz_places (url) VALUES ('https://example.org');",
        )
        .unwrap();
    }
    let before = std::fs::read(&places).unwrap();
    let export = d.join("x.json");
    std::fs::write(
        &export,
        r#"{"results":[{"command":"a","times":[0.1,0.2]}]}"#,
    )
    .unwrap();
    let p = places.to_str().unwrap();
    let runs = [
        vec!["history", "--store", p],
        vec!["check", "--store", p, "--baseline", "branch=main"],
        vec!["report", "--store", p, "--html", "r.html"],
        vec!["run", "-r", "2", "--store", p, "true"],
        vec!["import", "--store", p, export.to_str().unwrap()],
    ];
    for args in &runs {
        let o = in_dir(d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let lines = error_lines(&o);
        assert!(
            lines.iter().any(|l| l.contains("not a cmdscope store")),
            "{args:?}: {lines:?}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("cmdscope: error"))
                .count(),
            1,
            "{args:?}: {lines:?}"
        );
        assert_eq!(
            std::fs::read(&places).unwrap(),
            before,
            "{args:?} changed it"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["places.sqlite", "x.json"], "no journal, no report");

    for cmd in ["history", "check", "report"] {
        let o = in_dir(
            d,
            &[cmd, "--store", "mistyped.sqlite", "--baseline", "a=b"]
                [..if cmd == "check" { 5 } else { 3 }],
        );
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("does not exist"),
            "{cmd}: {}",
            stderr(&o)
        );
        assert!(!d.join("mistyped.sqlite").exists(), "{cmd} created a store");
    }
}

/// A benchmark whose every run timed out fails (exit 1, one line saying
/// so); hyperfine's `times` holds only completed runs, in step with
/// `exit_codes`, and the killed ones are listed apart.
#[test]
fn timeouts_fail_loudly_and_stay_out_of_times() {
    let dir = tempdir();
    let out = dir.path().join("t.json");
    let fixture = fixture();
    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "--timeout",
        "0.3",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{fixture} sleep 10"),
        &format!("{fixture} sleep 5000"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("every run of") && lines[0].contains("sleep 5000' timed out"),
        "{err}"
    );
    let doc = read_json(&out);
    let ok = &doc["results"][0];
    assert_eq!(ok["times"].as_array().unwrap().len(), 3);
    assert_eq!(ok["exit_codes"].as_array().unwrap().len(), 3);
    assert_eq!(ok["timed_out_times"].as_array().unwrap().len(), 0);
    let killed = &doc["results"][1];
    assert_eq!(killed["times"].as_array().unwrap().len(), 0);
    assert_eq!(killed["exit_codes"].as_array().unwrap().len(), 0);
    assert_eq!(killed["timed_out_times"].as_array().unwrap().len(), 3);
    assert_eq!(killed["timed_out_runs"], 3);
    // Read back, the killed runs are not samples.
    let o = cmdscope(&["compare", "--format", "json", out.to_str().unwrap()]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let rows = rows.as_array().cloned().unwrap_or_default();
    assert!(
        rows.iter()
            .any(|r| r["benchmark"].as_str().unwrap().ends_with("sleep 10")),
        "{rows:?}"
    );
    for r in &rows {
        if r["benchmark"].as_str().unwrap().ends_with("sleep 5000") {
            assert_eq!(r["n"], 0, "killed runs read back as samples: {r}");
        }
    }
}

/// Inputs without limits: a device, a FIFO without a writer, a directory.
#[test]
fn inputs_are_refused_or_capped() {
    let dir = tempdir();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: valid path string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (args, expect) in [
        (vec!["compare", "/dev/zero"], "device"),
        (vec!["compare", fifo.to_str().unwrap()], "empty input"),
        (vec!["compare", "/"], "directory"),
        (vec!["import", "--store", "x.sqlite", "/dev/zero"], "device"),
        (vec!["run", "--env-file", "/dev/zero", "true"], "device"),
    ] {
        let start = std::time::Instant::now();
        let o = in_dir(dir.path(), &args);
        assert!(start.elapsed().as_secs() < 10, "{args:?} took too long");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

/// Names from a results file or a store reach the terminal with their
/// control characters made visible; the HTML report shows bidi overrides.
#[test]
fn untrusted_text_is_shown_not_obeyed() {
    let dir = tempdir();
    let d = dir.path();
    let hostile = "evil\u{1b}[2J\u{1b}]0;owned\u{7}\rcmd\u{202e}txt";
    let doc = serde_json::json!({"results": [{
        "command": hostile,
        "times": [0.1, 0.11, 0.12, 0.1, 0.11, 0.12],
    }]});
    let file = d.join("h.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let clean = |bytes: &[u8], what: &str| {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}']),
            "{what}: {text:?}"
        );
        assert!(text.contains("\\u{1b}[2J"), "{what}: {text:?}");
    };
    let f = file.to_str().unwrap();
    for format in ["text", "markdown", "csv"] {
        let o = in_dir(d, &["compare", "--format", format, f, f]);
        assert!(o.status.success(), "{}", stderr(&o));
        clean(&o.stdout, format);
    }
    let store = d.join("s.sqlite");
    let s = store.to_str().unwrap();
    let o = in_dir(d, &["import", "--store", s, f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = in_dir(d, &["history", "--store", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    clean(&o.stdout, "history");
    let o = in_dir(d, &["report", "--store", s, "--html", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("[U+202E]"), "bidi override not shown");
    assert!(!html.contains('\u{202e}') && !html.contains('\u{1b}'));
    // A traced program's name (here set with bash's `exec -a`) in explain.
    let o = in_dir(
        d,
        &[
            "explain",
            "-S",
            "bash",
            "exec -a \"$(printf 'ev\\033[2Jil')\" /bin/sleep 0.01",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    clean(&o.stdout, "explain");
    // An error quoting a file's text: Go benchmark lines are quoted.
    let go = d.join("bad.txt");
    std::fs::write(&go, "BenchmarkX\u{1b}[31m 10 abc ns/op\n").unwrap();
    let o = in_dir(d, &["compare", go.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains('\u{1b}'), "{}", stderr(&o));
}

/// `--workdir` under a missing path creates what it needs and removes
/// exactly that; `run --help` shows its examples on their lines.
#[test]
fn workdir_leaves_nothing_and_help_examples_are_whole() {
    let dir = tempdir();
    let base = dir.path().join("made/for/this");
    std::fs::write(dir.path().join("kept"), "x").unwrap();
    let o = in_dir(
        dir.path(),
        &[
            "run",
            "-r",
            "2",
            "-L",
            "x",
            "1,2",
            "--workdir",
            base.to_str().unwrap(),
            "true {x}",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["kept"]);

    let o = cmdscope(&["run", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    let line = help
        .lines()
        .find(|l| l.contains("--env-size {"))
        .unwrap_or_else(|| panic!("no --env-size example: {help}"));
    assert!(line.contains("./container-init"), "{line}");
}
