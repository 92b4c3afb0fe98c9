//! Bad inputs, table-driven (docs/RELIABILITY.md): arguments, files, stores
//! and environments that must each end in exit status 2 with exactly one
//! line on stderr, no panic, and every file in the working directory
//! exactly as it was (nothing changed, nothing created).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use cmdscope::analysis::sequential::LOOKS;
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
    // A data directory whose default store is not a store.
    std::fs::create_dir_all(d.join("data/cmdscope")).unwrap();
    std::fs::write(d.join("data/cmdscope/results.sqlite3"), vec![0x5a; 4096]).unwrap();
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
    // Two benchmarks of one identity: whichever a gate compared, the other
    // would go unjudged (refused as `import` refuses it).
    (
        &["run", "-n", "A", "sleep 0.002", "-n", "A", "sleep 0.09"],
        NONE,
    ),
    (&["run", "--runs", "2", "true", "true"], NONE),
    (
        &["run", "-n", "x", "-P", "n", "1", "3", "sleep 0.00{n}"],
        NONE,
    ),
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
    (&["run", "--reference-name", "nope", "true"], NONE),
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
    (&["history"], &[("XDG_DATA_HOME", "data")]),
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
    // Hostile inputs: a directory as input, empty store locations (an
    // unset variable must not mean the default store).
    (&["run", "--runs", "1", "--input", "dir", "true"], NONE),
    (
        &[
            "run", "--runs", "1", "--store", "", "--style", "none", "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &["run", "--runs", "1", "--style", "none", "true"],
        &[("-CMDSCOPE_NO_STORE", ""), ("CMDSCOPE_STORE", "")],
    ),
    (&["import", "--store", "", "sentinel.json"], NONE),
    // Stores that would keep nothing (in memory, a blank name: not a file
    // named ' '), that are not files, and connection strings the driver
    // refuses (never taken for a file's name): refused, nothing created.
    (
        &[
            "run", "--runs", "1", "--store", "sqlite:", "--style", "none", "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &[
            "run", "--runs", "1", "--store", "sqlite: ", "--style", "none", "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &[
            "run", "--runs", "1", "--store", ":memory:", "--style", "none", "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &["run", "--runs", "1", "--style", "none", "true"],
        &[
            ("-CMDSCOPE_NO_STORE", ""),
            ("CMDSCOPE_STORE", "sqlite::memory:"),
        ],
    ),
    (
        &[
            "run", "--runs", "1", "--store", "fifo", "--style", "none", "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--store",
            "postgresql://h/db?user=u&PASSWORD=e",
            "--style",
            "none",
            "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--store",
            "runs=1.db",
            "--style",
            "none",
            "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (&["import", "--store", "sqlite:", "sentinel.json"], NONE),
    (&["import", "--store", "sqlite: ", "sentinel.json"], NONE),
    (&["import", "--store", ":memory:", "sentinel.json"], NONE),
    (
        &["import", "--store", "sqlite::memory:", "sentinel.json"],
        NONE,
    ),
    (
        &[
            "import",
            "--store",
            "file::memory:?cache=shared",
            "sentinel.json",
        ],
        NONE,
    ),
    (&["import", "--store", "fifo", "sentinel.json"], NONE),
    (&["import", "--store", "dir", "sentinel.json"], NONE),
    (
        &["import", "--store", "host=h password='e", "sentinel.json"],
        NONE,
    ),
    (&["history", "--store", "host=h PASSWORD=e"], NONE),
    (&["history", "--store", "host=h sslcert=x"], NONE),
    // Outputs that are the store, or each other: refused before anything.
    (
        &[
            "run",
            "--runs",
            "1",
            "--export-json",
            "x.json",
            "--export-csv",
            "x.json",
            "true",
        ],
        NONE,
    ),
    (
        &[
            "run",
            "--runs",
            "1",
            "--store",
            "garbage.db",
            "--export-json",
            "garbage.db",
            "true",
        ],
        &[("-CMDSCOPE_NO_STORE", "")],
    ),
    (
        &["report", "--store", "garbage.db", "--html", "garbage.db"],
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

// Hostile inputs: numbers, stores, flags and processes that once crashed,
// misled or left something behind. Each names the real problem in one line.

#[test]
fn a_huge_run_count_reserves_nothing_up_front_and_leaves_no_cgroup() {
    // Under a 2 GiB address-space limit: reserving room for every run
    // asked for would abort (or panic on the overflow) before the first run.
    for runs in ["100000000", "1000000000000", "18446744073709551615"] {
        let mut cmd = Command::new(bin());
        cmd.args(["run", "--runs", runs, "--timeout", "0.1", "--style", "none"])
            .arg("false")
            .env("NO_COLOR", "1")
            .env("CMDSCOPE_NO_STORE", "1")
            .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 2 << 30,
                    rlim_max: 2 << 30,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("run cmdscope");
        let pid = child.id();
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        // `false` fails its first run: the session ends there, as always.
        assert_eq!(o.status.code(), Some(1), "--runs {runs}: {err}");
        assert!(!err.contains("panicked"), "--runs {runs}: {err}");
        assert!(
            error_line(&o).contains("'false' exited with status 1"),
            "--runs {runs}: {err}"
        );
        if let Some(dir) = own_cgroup_dir() {
            let session = dir.join(format!("cmdscope-{pid}"));
            assert!(!session.exists(), "{} left behind", session.display());
        }
    }
}

#[test]
fn a_huge_timeout_is_called_too_large() {
    let o = cmdscope(&["run", "--timeout", "1e300", "true"]);
    one_line_error(&o, "--timeout is too large");
}

#[test]
fn an_empty_store_location_is_refused_not_read_as_the_default() {
    let dir = tempdir();
    let by_flag = Command::new(bin())
        .args(["history", "--store", ""])
        .env("XDG_DATA_HOME", dir.path())
        .env_remove("CMDSCOPE_STORE")
        .output()
        .unwrap();
    one_line_error(&by_flag, "the store location is empty");
    let by_env = Command::new(bin())
        .arg("history")
        .env("XDG_DATA_HOME", dir.path())
        .env("CMDSCOPE_STORE", "")
        .output()
        .unwrap();
    one_line_error(&by_env, "the store location is empty");
}

#[test]
fn a_directory_as_input_is_refused_before_the_first_run() {
    let dir = tempdir();
    let d = dir.path().display().to_string();
    let o = cmdscope(&["run", "--runs", "1", "--input", &d, "cat"]);
    one_line_error(&o, "Is a directory");
    assert!(error_line(&o).contains(&d), "{}", stderr(&o));
}

/// A store with one imported session, in a directory of its own.
fn store_with_a_session(dir: &Path) -> std::path::PathBuf {
    let results = dir.join("r.json");
    std::fs::write(
        &results,
        r#"{"results":[{"command":"a","times":[0.1,0.2,0.3]}]}"#,
    )
    .unwrap();
    let store = dir.join("s.sqlite");
    ok(with_store(&store, &["import", results.to_str().unwrap()]));
    std::fs::remove_file(&results).unwrap();
    store
}

#[test]
fn readers_of_a_store_leave_nothing_beside_it_and_change_nothing() {
    let dir = tempdir();
    let store = store_with_a_session(dir.path());
    let state = || {
        let (names, bytes) = beside_and_bytes(dir.path(), &store);
        let modified = std::fs::metadata(&store).unwrap().modified().unwrap();
        (names, bytes, modified)
    };
    let before = state();
    let out = tempdir();
    let html = out.path().join("r.html");
    let html = html.to_str().unwrap();
    for args in [&["history"][..], &["changes"], &["report", "--html", html]] {
        ok(with_store(&store, args));
        let after = state();
        assert_eq!(after.0, before.0, "{args:?} left files beside the store");
        assert!(after.1 == before.1, "{args:?} changed the store's bytes");
        assert_eq!(after.2, before.2, "{args:?} touched the store");
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// cmdscope as a user that permissions apply to: `nobody` when the tests
/// run as root, who may write anywhere.
fn unprivileged() -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin());
        c
    } else {
        Command::new(bin())
    }
}

/// `history` of a copy of `store` (file mode `mode`) in a read-only
/// directory under `dir`, read as a user permissions apply to (root
/// writes anywhere: nobody then, who may not write there).
fn history_of_a_copy_in_a_read_only_directory(store: &Path, dir: &Path, mode: u32) -> Output {
    use std::os::unix::fs::PermissionsExt;
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let copy = ro.join("s.sqlite");
    std::fs::copy(store, &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(mode)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let o = unprivileged()
        .args(["history", "--store"])
        .arg(&copy)
        .env("NO_COLOR", "1")
        .env_remove("CMDSCOPE_STORE")
        .output()
        .expect("run cmdscope");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    o
}

#[test]
fn a_store_in_a_directory_the_reader_cannot_write_is_read() {
    let dir = tempdir();
    let store = store_with_a_session(dir.path());
    let o = ok(history_of_a_copy_in_a_read_only_directory(
        &store,
        dir.path(),
        0o644,
    ));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("3 runs"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

// A store that cmdscope must not (or cannot) change: a killed import, a
// store file the user may not write, a store of an older schema.

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The names in `dir` and the bytes of `store`: what a reader or a refused
/// writer must leave as they were.
fn beside_and_bytes(dir: &Path, store: &Path) -> (Vec<String>, Vec<u8>) {
    (listing(dir), std::fs::read(store).unwrap())
}

#[test]
fn a_killed_import_leaves_each_session_whole_or_absent() {
    // Big enough that an import takes a while: kills land while it writes.
    const BENCHMARKS: usize = 200;
    const RUNS: usize = 1000;
    let dir = tempdir();
    let results = dir.path().join("big.json");
    let names: Vec<String> = (0..BENCHMARKS).map(|i| format!("bench {i}")).collect();
    let data: Vec<(&str, Vec<f64>)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), times_around(0.001 * (i + 1) as f64, RUNS)))
        .collect();
    write_results_file(&results, &data);
    let store = dir.path().join("s.sqlite");
    let import = || {
        Command::new(bin())
            .arg("import")
            .arg("--store")
            .arg(&store)
            .arg(&results)
            .env("NO_COLOR", "1")
            .env_remove("CMDSCOPE_STORE")
            .env_remove("CMDSCOPE_NO_STORE")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run cmdscope")
    };
    let started = std::time::Instant::now();
    assert!(import().wait().unwrap().success());
    let whole = started.elapsed();
    // Kills spread over an import's length; one that came too late (the
    // import finished: a whole session) is tried again sooner.
    let mut kills = 0;
    for k in 1..=6 {
        let mut delay = whole * k / 8;
        for _ in 0..8 {
            let mut child = import();
            std::thread::sleep(delay);
            // The import may end between a look and the kill: only a
            // SIGKILL it died of counts as a kill; a finished import is
            // one that came too late.
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap(); // SIGKILL
            }
            let status = child.wait().unwrap();
            match std::os::unix::process::ExitStatusExt::signal(&status) {
                Some(libc::SIGKILL) => {
                    kills += 1;
                    break;
                }
                other => assert!(
                    status.success(),
                    "an import not killed must succeed: {status:?} (signal {other:?})"
                ),
            }
            delay /= 2;
        }
    }
    assert_eq!(kills, 6, "imports killed");
    let conn = rusqlite::Connection::open(&store).unwrap();
    let mut sessions = conn
        .prepare(
            "SELECT s.id, s.status, \
             (SELECT COUNT(*) FROM cells c WHERE c.session_id = s.id), \
             (SELECT COUNT(*) FROM runs r JOIN cells c ON r.cell_id = c.id \
              WHERE c.session_id = s.id) FROM sessions s",
        )
        .unwrap();
    let sessions: Vec<(i64, String, i64, i64)> = sessions
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!sessions.is_empty());
    for s in &sessions {
        assert_eq!(
            (s.1.as_str(), s.2, s.3),
            ("finished", BENCHMARKS as i64, (BENCHMARKS * RUNS) as i64),
            "session #{} of {} is not whole",
            s.0,
            sessions.len()
        );
    }
    // No stray rows of a session that is gone.
    let orphans: i64 = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM cells WHERE session_id NOT IN (SELECT id FROM sessions)) \
             + (SELECT COUNT(*) FROM labels WHERE session_id NOT IN (SELECT id FROM sessions))",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
}

#[test]
fn a_read_only_store_file_is_refused_by_writers_and_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    // Not under target/, which may sit in a checkout nobody cannot enter;
    // the directory is writable by the user (only the store file is not),
    // so SQLite could leave its -wal and -shm files there.
    let dir = tempfile::Builder::new()
        .prefix("cmdscope-ro-store")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    let store = store_with_a_session(dir.path());
    std::fs::write(
        dir.path().join("more.json"),
        r#"{"results":[{"command":"b","times":[0.1,0.2,0.3]}]}"#,
    )
    .unwrap();
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if is_root() {
        std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
    }
    let before = beside_and_bytes(dir.path(), &store);
    for args in [
        &["run", "--runs", "1", "--style", "none", "true"][..],
        &["import", "more.json"],
    ] {
        let o = unprivileged()
            .args(args)
            .arg("--store")
            .arg(&store)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env_remove("CMDSCOPE_STORE")
            .env_remove("CMDSCOPE_NO_STORE")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run cmdscope");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("cannot write it"), "{args:?}: {err}");
        let after = beside_and_bytes(dir.path(), &store);
        assert_eq!(after.0, before.0, "{args:?} left files beside the store");
        assert!(after.1 == before.1, "{args:?} changed the store's bytes");
    }
}

#[test]
fn readers_read_a_store_of_an_older_schema_as_it_is_and_leave_it_unchanged() {
    let dir = tempdir();
    let store = store_with_a_session(dir.path());
    // Back to what cmdscope wrote before migration 4 (and 5, 6 and 7).
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch(&sql_back_to_version(3))
        .unwrap();
    let before = beside_and_bytes(dir.path(), &store);
    let out = tempdir();
    let html = out.path().join("r.html");
    let html = html.to_str().unwrap();
    let latest = cmdscope::store::schema::LATEST;
    let note = format!(
        "cmdscope: note: store '{}' has schema version 3, older than this cmdscope's \
         ({latest}): read as it is, without search answers, session settings, concurrency \
         batches, simulated counts, session outcomes and search races (the next run or \
         import with it \
         upgrades it)",
        store.display()
    );
    for (args, status) in [
        (&["history"][..], 0),
        (&["changes"], 0),
        (&["report", "--html", html], 0),
        // Read, then found wanting: no baseline, no run of that name.
        (&["check", "--baseline", "a=b"], 2),
        (&["status", "--run", "x"], 2),
    ] {
        let o = with_store(&store, args);
        assert_eq!(o.status.code(), Some(status), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().next(), Some(note.as_str()), "{args:?}");
        let after = beside_and_bytes(dir.path(), &store);
        assert_eq!(after.0, before.0, "{args:?} left files beside the store");
        assert!(after.1 == before.1, "{args:?} changed the store");
    }
    assert!(std::fs::read_to_string(html)
        .unwrap()
        .contains("<td>a</td>"));
    // Where the reader may write nothing (a read-only copy in a read-only
    // directory, read as a user permissions apply to), it is read too.
    let o = ok(history_of_a_copy_in_a_read_only_directory(
        &store,
        dir.path(),
        0o444,
    ));
    assert!(
        stderr(&o).contains("has schema version 3"),
        "{}",
        stderr(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("3 runs"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(listing(&dir.path().join("ro")), ["s.sqlite"]);
    // The next writer upgrades it; then it reads without a note.
    let more = dir.path().join("more.json");
    std::fs::write(&more, r#"{"results":[{"command":"b","times":[0.1,0.2]}]}"#).unwrap();
    ok(with_store(&store, &["import", more.to_str().unwrap()]));
    let o = ok(with_store(&store, &["history"]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("3 runs") && text.contains("2 runs"), "{text}");
    assert_eq!(stderr(&o), "");
}

/// The runs each benchmark of `run ARGS` made.
fn runs_made(args: &[&str]) -> Vec<u64> {
    let mut all = vec!["run"];
    all.extend(args);
    let (_, doc) = exported(&all);
    let results = doc["results"].as_array().expect("results");
    results
        .iter()
        .map(|r| r["runs"].as_u64().expect("runs"))
        .collect()
}

/// `--min-runs` is a floor, as in hyperfine, whatever stops the session:
/// a loose `--precision` (90 %, met on a loaded machine too) met after the
/// first look (10 runs) waits for it and stops as soon as it is made, as
/// does `--max-time`; in concurrency mode too, where the runs are batches'
/// completions; and `--max-runs` caps the completions, not only the
/// batches. A search, which decides each value's runs, refuses both.
#[test]
fn min_runs_and_max_runs_hold_in_every_mode() {
    let loose = ["--precision", "90", "--min-runs"];
    let two = ["-n", "a", "-n", "b", "true", "true"];
    assert_eq!(runs_made(&[&loose[..], &["60", "true"]].concat()), [60]);
    // The throughput's interval is within 90 % after the first few
    // batches, even on a loaded machine. Batches of 8 completions (four
    // per slot): the eighth makes 64.
    let concurrent = [&loose[..], &["60", "--concurrency", "2", "true"]].concat();
    assert_eq!(runs_made(&concurrent), [64]);
    assert_eq!(
        runs_made(&["--max-runs", "10", "--concurrency", "4", "true"]),
        [10]
    );
    // Two commands: the loose precision usually settles them at the first
    // look the sign-flip test can reach (40 blocks), and the session stops
    // at the minimum, 50; where a loaded machine leaves that look
    // unsettled, at the first look that settles them after it.
    for n in runs_made(&[&loose[..], &["50"], &two].concat()) {
        let n = n as usize;
        assert!(n == 50 || (n > 50 && LOOKS.contains(&n)), "{n} runs");
    }
    // --max-time long past (10 ms, under a tenth of the minimum's runs)
    // ends the session only once the minimum is made.
    let timed = ["--until-decided", "--max-time", "0.01", "--min-runs", "60"];
    assert_eq!(runs_made(&[&timed[..], &two].concat()), [60, 60]);
    // A search decides each value's runs: a floor or a cap is refused
    // rather than ignored.
    for flag in ["--min-runs", "--max-runs"] {
        let o = cmdscope(&[
            "run",
            "-P",
            "n",
            "1",
            "4",
            "--minimize",
            "n",
            flag,
            "50",
            "true",
        ]);
        one_line_error(
            &o,
            &format!("{flag} does not apply to --minimize/--maximize"),
        );
    }
}

/// `--env-size` that no exec can take is refused before anything is built
/// or run: past the most any stack limit allows (a usage error naming the
/// range, at once rather than after gigabytes of padding), and past what
/// this process's stack limit allows, with the largest size that fits,
/// which then runs.
#[test]
fn an_environment_no_exec_can_take_is_refused_up_front() {
    let started = std::time::Instant::now();
    for sub in ["run", "explain"] {
        let o = cmdscope(&[sub, "--env-size", "10000000", "true"]);
        one_line_error(&o, "--env-size must be from 0 to 100000");
    }
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    // An 8 MiB stack: exec takes 2 MiB, about 33,000 padding variables.
    let with_stack = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -s 8192 && exec \"$0\" {args}"))
            .arg(bin())
            .env("CMDSCOPE_NO_STORE", "1")
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let o = with_stack("run --runs 1 --env-size 90000 true");
    one_line_error(&o, "--env-size 90000 can never be executed");
    let err = stderr(&o);
    let room: usize = err
        .split("; --env-size ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no largest size: {err}"));
    assert!((25_000..34_000).contains(&room), "{err}");
    ok(with_stack(&format!(
        "run --runs 1 --style none --env-size {room} true"
    )));
    let o = with_stack(&format!("explain --env-size {} true", room + 1));
    one_line_error(&o, "can never be executed");
}

/// No refusal contradicts itself: a value refused by a range's check is
/// outside the range its message states ("from A to B", "at most B"), and
/// a message that lists what it expects does not list the value refused.
#[test]
fn range_messages_never_contradict_the_value_they_refuse() {
    let dir = tempdir();
    let suite = dir.path().join("s.toml");
    std::fs::write(&suite, "[[benchmark]]\nname = 'a'\ncommand = 'true'\n").unwrap();
    let suite = suite.to_str().unwrap();
    // (arguments, the value at stake)
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--alpha", "0.5", "true"], "0.5"),
        (&["run", "--alpha", "0", "true"], "0"),
        (&["run", "--precision", "100", "true"], "100"),
        (&["run", "--precision", "0", "true"], "0"),
        (&["run", "--timeout", "1e9", "--runs", "1", "true"], "1e9"),
        (&["run", "--timeout", "1000000001", "true"], "1000000001"),
        (&["run", "--min-time", "-1", "true"], "-1"),
        (&["run", "--nice", "20", "true"], "20"),
        (&["run", "--nice", "-21", "true"], "-21"),
        (&["run", "--concurrency", "0", "true"], "0"),
        (&["run", "--env-size", "100001", "true"], "100001"),
        (&["run", "--env-size", "-1", "true"], "-1"),
        (
            &[
                "run",
                "--monitor-settle",
                "60.5",
                "--monitor",
                "true",
                "true",
            ],
            "60.5",
        ),
        (&["changes", "--min-change", "1000"], "1000"),
        (&["changes", "--min-change", "1000.5"], "1000.5"),
        (&["suite", "list", suite, "--partition", "auto"], "auto"),
        (&["suite", "list", suite, "--partition", "0/2"], "0"),
        (&["run", "--suite", suite, "--partition", "x"], "x"),
        (&["run", "--suite", suite, "--partition", "3/2"], "3"),
        (
            &["run", "--suite", suite, "--partition", "1/100001"],
            "100001",
        ),
    ];
    let number = |t: &str| {
        t.trim_matches(|c: char| !c.is_ascii_digit() && c != '-' && c != '.')
            .parse::<f64>()
            .ok()
    };
    let mut contradictions = Vec::new();
    for (args, value) in cases {
        let o = cmdscope(args);
        if o.status.code() != Some(2) {
            continue;
        }
        let err = stderr(&o);
        let line = err
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or(&err)
            .to_string();
        let v = value.parse::<f64>().ok();
        // "from A to B" and "between A and B" state an inclusive range
        // (exclusive ones say "above A and below B").
        for (open, join) in [("from ", " to "), ("between ", " and ")] {
            for part in line.split(open).skip(1) {
                let Some((a, rest)) = part.split_once(join) else {
                    continue;
                };
                let b = rest.split([' ', ',', ';', ')']).next().unwrap_or("");
                if let (Some(a), Some(b), Some(v)) = (number(a), number(b), v) {
                    if (a..=b).contains(&v) {
                        contradictions.push(format!("{args:?}: {line}"));
                    }
                }
            }
        }
        if let (Some(rest), Some(v)) = (line.split("at most ").nth(1), v) {
            let b = rest.split(' ').next().unwrap_or("");
            if number(b).is_some_and(|b| v <= b) {
                contradictions.push(format!("{args:?}: {line}"));
            }
        }
        // A list of what is expected that holds the value refused.
        if let Some(expects) = line.split("expects ").nth(1) {
            let expected = expects.split(", got").next().unwrap_or("");
            if expected.contains(&format!("'{value}'")) {
                contradictions.push(format!("{args:?}: {line}"));
            }
        }
    }
    assert!(contradictions.is_empty(), "{}", contradictions.join("\n"));
}
