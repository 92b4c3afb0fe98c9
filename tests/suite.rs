//! Suites end to end with real processes and an SQLite store: partitions
//! merged into the same run as one machine, a killed partition reported
//! missing, the host lock, errors with file positions, and the example of
//! docs/SUITES.md.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cmdscope::store::{Location, Store};
use common::*;

/// cmdscope with a store and a host lock file of the test's own.
fn cs(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .arg("--store")
        .arg(dir.join("store.db"))
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_HOST_LOCK", dir.join("host.lock"))
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .env_remove("CMDSCOPE_RUN_ID")
        .env_remove("SLURM_ARRAY_JOB_ID")
        .env_remove("GITHUB_RUN_ID")
        .env_remove("CI_PIPELINE_ID");
    c
}

/// 10 cells in 4 benchmarks.
fn suite(dir: &Path, extra: &str) -> PathBuf {
    let f = fixture();
    let text = format!(
        r#"
[defaults]
runs = 4
labels = {{ purpose = "test" }}

[[benchmark]]
name = "sleep"
command = "{f} sleep {{ms}}"
parameters = {{ ms = [1, 2, 3] }}

[[benchmark]]
name = "busy"
command = "{f} busy {{ms}}"
parameters = {{ ms = {{ min = 1, max = 4, factor = 2 }} }}

[[benchmark]]
name = "pair"
commands = ["{f} exit 0", "{f} sleep 1"]
names = ["exit", "sleep one"]

[[benchmark]]
name = "env"
command = "{f} env X"
env = {{ X = "1" }}
parameters = {{ size = [0, 1000] }}
env_size = "{{size}}"
{extra}"#
    );
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// (benchmark, identity) -> runs, of a run merged from the store.
fn cells_of(dir: &Path, run: &str) -> BTreeMap<String, i64> {
    let mut store = Store::open(&Location::Sqlite(dir.join("store.db"))).unwrap();
    let merged = cmdscope::suite::merge::merged(&mut store, run).unwrap();
    merged
        .cells
        .iter()
        .map(|c| (c.identity.clone(), c.runs))
        .collect()
}

#[test]
fn partitions_merge_into_the_same_run_as_one_machine() {
    let dir = tempdir();
    let d = dir.path();
    let s = suite(d, "");
    let s = s.to_str().unwrap();

    let listed = json(&ok(cs(d, &["suite", "list", s, "--format", "json"])
        .output()
        .unwrap()));
    let all: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(all.len(), 10);
    let env_cell = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["benchmark"] == "env" && c["parameters"]["size"] == "1000")
        .unwrap();
    assert!(env_cell["command"].as_str().unwrap().ends_with("env X"));
    assert!(
        env_cell["estimated_seconds"].is_null(),
        "nothing measured yet"
    );
    let mut union = BTreeSet::new();
    for k in 1..=3 {
        let part = json(&ok(cs(
            d,
            &[
                "suite",
                "list",
                s,
                "--format",
                "json",
                "--partition",
                &format!("{k}/3"),
            ],
        )
        .output()
        .unwrap()));
        for c in part.as_array().unwrap() {
            assert!(
                union.insert(c["id"].as_str().unwrap().to_string()),
                "cell in two partitions"
            );
        }
    }
    assert_eq!(union, all);

    ok(cs(
        d,
        &["run", "--suite", s, "--run-id", "whole", "--style", "none"],
    )
    .output()
    .unwrap());
    for k in 1..=3 {
        ok(cs(
            d,
            &[
                "run",
                "--suite",
                s,
                "--run-id",
                "split",
                "--partition",
                &format!("{k}/3"),
                "--style",
                "none",
            ],
        )
        .output()
        .unwrap());
    }
    let st = json(&ok(cs(
        d,
        &["status", "--run", "split", "--format", "json"],
    )
    .output()
    .unwrap()));
    assert_eq!(st["complete"], true, "{st}");
    assert_eq!(st["partitions"], 3);
    assert_eq!(st["reported"], serde_json::json!([1, 2, 3]));
    assert_eq!(st["missing"], serde_json::json!([]));
    assert_eq!(st["cells"], 10);
    assert_eq!(st["suite_cells"], 10);
    assert_eq!(st["runs"], 40);

    let whole = cells_of(d, "whole");
    let split = cells_of(d, "split");
    assert_eq!(whole.len(), 10);
    assert_eq!(
        whole, split,
        "the merged partitions hold the cells and runs of one machine's run"
    );
    assert!(whole.values().all(|&r| r == 4));

    // Estimates from the store: 4 runs of at least 3 ms for `sleep 3`.
    let listed = json(&ok(cs(d, &["suite", "list", s, "--format", "json"])
        .output()
        .unwrap()));
    for c in listed.as_array().unwrap() {
        assert!(c["estimated_seconds"].as_f64().unwrap() > 0.0, "{c}");
    }
    let sleep3 = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["benchmark"] == "sleep" && c["parameters"]["ms"] == "3")
        .unwrap();
    let est = sleep3["estimated_seconds"].as_f64().unwrap();
    assert!((0.012..1.0).contains(&est), "{est}");

    // The merged run through the commands that read the store.
    let h = ok(cs(d, &["history", "--run", "split"]).output().unwrap());
    let h = String::from_utf8_lossy(&h.stdout);
    assert_eq!(
        h.lines().filter(|l| l.contains(" runs  median")).count(),
        10,
        "{h}"
    );
    let html = d.join("r.html");
    ok(cs(
        d,
        &["report", "--run", "split", "--html", html.to_str().unwrap()],
    )
    .output()
    .unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("sleep one") && page.contains("env X"));
    assert!(page.contains("not compared with each other here"));
    let c = cs(
        d,
        &[
            "check",
            "--run",
            "split",
            "--baseline",
            "purpose=test",
            "--format",
            "text",
        ],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&c.stdout);
    assert!(
        text.contains("10 benchmarks compared") || text.contains("significantly"),
        "{text}{}",
        stderr(&c)
    );
    assert!(
        text.contains("cmdscope.run=whole"),
        "the other run is the baseline: {text}"
    );
}

#[test]
fn a_killed_partition_is_reported_missing_with_where_it_was_last_seen() {
    let dir = tempdir();
    let d = dir.path();
    let f = fixture();
    let s = suite(
        d,
        &format!("\n[[benchmark]]\nname = \"slow\"\ncommand = \"{f} sleep 8000\"\nruns = 1\n"),
    );
    let s = s.to_str().unwrap();
    // The partition the slow cell is in.
    let slow = (1..=2)
        .find(|k| {
            let o = ok(cs(
                d,
                &[
                    "suite",
                    "list",
                    s,
                    "--partition",
                    &format!("{k}/2"),
                    "--format",
                    "json",
                ],
            )
            .output()
            .unwrap());
            lists_benchmark(&o, "slow")
        })
        .unwrap();
    let other = 3 - slow;
    ok(cs(
        d,
        &[
            "run",
            "--suite",
            s,
            "--run-id",
            "k",
            "--partition",
            &format!("{other}/2"),
            "--style",
            "none",
        ],
    )
    .output()
    .unwrap());
    let mut child = cs(
        d,
        &[
            "run",
            "--suite",
            s,
            "--run-id",
            "k",
            "--partition",
            &format!("{slow}/2"),
            "--style",
            "none",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    // Wait until it has registered, then kill it as a node failure would.
    let start = Instant::now();
    loop {
        let st = json(
            &cs(d, &["status", "--run", "k", "--format", "json"])
                .output()
                .unwrap(),
        );
        if st["missing"]
            .as_array()
            .is_some_and(|m| m.iter().any(|p| p["status"] == "running"))
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "partition never registered: {st}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let o = cs(d, &["status", "--run", "k", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "incomplete is exit 1");
    let st = json(&o);
    assert_eq!(st["complete"], false);
    assert_eq!(st["reported"], serde_json::json!([other]));
    let missing = &st["missing"][0];
    assert_eq!(missing["partition"], slow);
    assert_eq!(missing["status"], "running");
    assert_eq!(
        missing["host"],
        cmdscope::store::Machine::current().hostname.as_str()
    );
    assert!(missing["last_seen"].as_str().unwrap().ends_with('Z'));
    let text = cs(d, &["status", "--run", "k"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("INCOMPLETE"), "{text}");
    assert!(
        text.contains(&format!(
            "missing: partition {slow}/2: unfinished (running, or killed) on "
        )),
        "{text}"
    );
}

#[test]
fn the_host_lock_keeps_partitions_on_one_machine_apart() {
    let dir = tempdir();
    let d = dir.path();
    let f = fixture();
    let text = format!(
        "[defaults]\nruns = 3\n[[benchmark]]\nname = \"a\"\ncommand = \"{f} sleep {{ms}}\"\nparameters = {{ ms = [150, 151, 152, 153, 154, 155, 156, 157] }}\n"
    );
    std::fs::write(d.join("s.toml"), text).unwrap();
    let s = d.join("s.toml");
    let s = s.to_str().unwrap();
    let spawn = |run: &str, k: u32, extra: &[&str]| {
        let mut args = vec!["run", "--suite", s, "--run-id", run, "--style", "basic"];
        let part = format!("{k}/2");
        args.extend(["--partition", &part]);
        args.extend(extra);
        cs(d, &args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let overlap = |run: &str| -> f64 {
        let mut store = Store::open(&Location::Sqlite(d.join("store.db"))).unwrap();
        let p = store.partitions(run).unwrap();
        assert_eq!(p.len(), 2);
        let end = |i: usize| p[i].finished_unix.unwrap();
        end(0).min(end(1)) - p[0].started_unix.max(p[1].started_unix)
    };

    let a = spawn("locked", 1, &[]);
    std::thread::sleep(Duration::from_millis(200));
    let b = spawn("locked", 2, &[]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    let waited = stderr(&b);
    assert!(
        waited.contains(&format!(
            "waiting for the host lock {} held by PID",
            d.join("host.lock").display()
        )) && waited.contains("(run locked, partition 1/2)"),
        "{waited}"
    );
    assert!(
        overlap("locked") <= 0.0,
        "partitions measured at the same time"
    );

    let a = spawn("free", 1, &["--no-host-lock"]);
    let b = spawn("free", 2, &["--no-host-lock"]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    assert!(!stderr(&b).contains("waiting"));
    assert!(overlap("free") > 0.0, "without the lock both ran at once");
}

#[test]
fn mistakes_are_one_line_errors_with_positions() {
    let dir = tempdir();
    let d = dir.path();
    let p = d.join("bad.toml");
    std::fs::write(
        &p,
        "[[benchmark]]\nname = \"a\"\ncommand = \"true\"\nwarmup = 1\nrnus = 3\n",
    )
    .unwrap();
    let p = p.to_str().unwrap();
    for args in [vec!["suite", "list", p], vec!["run", "--suite", p]] {
        let o = cs(d, &args).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(
            e.starts_with(&format!("cmdscope: error: {p}:5:1: unknown field `rnus`")),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let s = suite(d, "");
    let s = s.to_str().unwrap();
    let e = stderr(
        &cs(d, &["run", "--suite", s, "--partition", "1/3"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("give --run-id ID"), "{e}");
    let e = stderr(
        &cs(d, &["run", "--suite", s, "--export-json", "x.json"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("exports and --plot are not available"), "{e}");
    let e = stderr(
        &cs(d, &["run", "--suite", s, "--runs", "5"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("remove --runs"), "{e}");
    let o = cs(d, &["run", "--suite", s, "true"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = cs(d, &["run", "--suite", s, "--partition", "auto"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no scheduler variables"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_example_in_docs_suites_parses_and_plans() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/SUITES.md"))
        .unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```toml") => current = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            _ => {}
        }
    }
    assert!(!blocks.is_empty(), "docs/SUITES.md has no ```toml example");
    let full = blocks.iter().max_by_key(|b| b.len()).unwrap();
    let suite = cmdscope::suite::file::parse(Path::new("SUITES.md"), full).unwrap();
    let planned = cmdscope::suite::cells::plan(&suite).unwrap();
    assert!(planned.len() >= 3);
    assert!(cmdscope::suite::cells::count(&planned) >= 8);
}

#[test]
fn a_failing_benchmark_fails_its_partition_but_not_the_others_benchmarks() {
    let dir = tempdir();
    let d = dir.path();
    let f = fixture();
    std::fs::write(
        d.join("f.toml"),
        format!(
            "[defaults]\nruns = 2\n[[benchmark]]\nname = \"fails\"\ncommand = \"{f} exit 3\"\n\
             [[benchmark]]\nname = \"works\"\ncommand = \"{f} exit 0\"\n"
        ),
    )
    .unwrap();
    let s = d.join("f.toml");
    let o = cs(
        d,
        &[
            "run",
            "--suite",
            s.to_str().unwrap(),
            "--run-id",
            "f",
            "--style",
            "none",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("benchmark 'fails'"), "{}", stderr(&o));
    let st = cs(d, &["status", "--run", "f", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    let st = json(&st);
    assert_eq!(st["missing"][0]["partition"], 1);
    assert_eq!(st["missing"][0]["status"], "failed");
    assert_eq!(st["missing"][0]["cells_done"], 2);
    let cells = cells_of(d, "f");
    assert_eq!(cells.get(&format!("{f} exit 0")), Some(&2), "{cells:?}");
}

// ----- hostile suite files -------------------------------------------------

/// Runs `args` and gives up (killing it) after `limit`: a hang is a failure,
/// not a stuck test run.
fn within(mut c: Command, limit: Duration) -> std::process::Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn devices_and_fifos_without_writers_are_not_read_forever() {
    let dir = tempdir();
    let d = dir.path();
    let fifo = d.join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let fifo = fifo.to_str().unwrap();
    // Generous: each refusal takes milliseconds; only a hang reaches it.
    let limit = Duration::from_secs(60);
    for (file, needle) in [
        ("/dev/zero", "not a regular file"),
        (fifo, "no [[benchmark]] table"),
    ] {
        for args in [vec!["suite", "list", file], vec!["run", "--suite", file]] {
            let o = within(cs(d, &args), limit);
            one_line_error(&o, needle);
        }
    }
    // A file over the cap is refused, not read.
    let big = d.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(cmdscope::suite::file::MAX_SUITE_BYTES + 1)
        .unwrap();
    let o = within(cs(d, &["suite", "list", big.to_str().unwrap()]), limit);
    one_line_error(&o, "larger than");
}

#[test]
fn suite_list_shows_hostile_names_escaped() {
    let dir = tempdir();
    let d = dir.path();
    let p = d.join("evil.toml");
    std::fs::write(
        &p,
        "[[benchmark]]\nname = \"a\\u001b]0;owned\\u0007b\\u202ec\"\ncommand = \"true\"\n",
    )
    .unwrap();
    let o = ok(cs(d, &["suite", "list", p.to_str().unwrap()])
        .output()
        .unwrap());
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("a\\u{1b}]0;owned\\u{7}b\\u{202e}c"), "{out}");
    assert!(
        !out.contains(['\u{1b}', '\u{7}', '\u{202e}']),
        "raw controls reached the terminal: {out:?}"
    );
}

#[test]
fn numbers_run_refuses_are_refused_before_anything_runs_with_their_position() {
    let dir = tempdir();
    let d = dir.path();
    for (setting, line, column, needle) in [
        (
            "precision = nan",
            4,
            13,
            "--precision must be a percentage above 0 and below 100, got NaN",
        ),
        (
            "timeout = -inf",
            4,
            11,
            "--timeout must be a positive number of seconds, got -inf",
        ),
        (
            "alpha = 2",
            4,
            9,
            "--alpha must be above 0 and below 0.5, got 2",
        ),
        (
            "min_time = -1",
            4,
            12,
            "--min-time must be a non-negative number of seconds, got -1",
        ),
    ] {
        let p = d.join("bad.toml");
        std::fs::write(
            &p,
            format!("[[benchmark]]\nname = \"a\"\ncommand = \"true\"\n{setting}\n"),
        )
        .unwrap();
        let p = p.to_str().unwrap();
        for args in [vec!["suite", "list", p], vec!["run", "--suite", p]] {
            let o = cs(d, &args).output().unwrap();
            one_line_error(
                &o,
                &format!("cmdscope: error: {p}:{line}:{column}: benchmark 'a': {needle}"),
            );
        }
    }
    // A bad default is reported where it is written, in [defaults].
    let p = d.join("defaults.toml");
    std::fs::write(
        &p,
        "[defaults]\nalpha = 0.7\n[[benchmark]]\nname = \"a\"\ncommand = \"true\"\n",
    )
    .unwrap();
    let p = p.to_str().unwrap();
    let o = cs(d, &["suite", "list", p]).output().unwrap();
    one_line_error(&o, &format!("{p}:2:9: benchmark 'a': --alpha must be"));
    // Nothing was started: the store was never even opened.
    assert!(!d.join("store.db").exists());
}

#[test]
fn a_runs_merged_report_names_every_cell_by_its_benchmark() {
    // `sleep 0.001` is a cell of benchmark `a` and of the sweep: the merged
    // report tells them apart by the benchmarks' names. Their alphas are
    // not the default, and differ: the report shows each one's settings.
    let dir = tempdir();
    let d = dir.path();
    let s = d.join("named.toml");
    std::fs::write(
        &s,
        r#"
[defaults]
runs = 2
alpha = 0.02

[[benchmark]]
name = "a"
command = "sleep 0.001"

[[benchmark]]
name = "sweep"
command = "sleep 0.00{n}"
parameters = { n = [1, 2] }
alpha = 0.01
precision = 20
"#,
    )
    .unwrap();
    let s = s.to_str().unwrap();
    ok(cs(
        d,
        &["run", "--suite", s, "--run-id", "named", "--style", "none"],
    )
    .output()
    .unwrap());
    let html = d.join("named.html");
    ok(cs(
        d,
        &["report", "--run", "named", "--html", html.to_str().unwrap()],
    )
    .output()
    .unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    for name in ["a: sleep 0.001", "sweep: sleep 0.001", "sweep: sleep 0.002"] {
        assert!(page.contains(&format!("<td>{name}</td>")), "{name}: {page}");
    }
    assert!(!page.contains("could not be read back"), "{page}");
    let settings_rows = |page: &str| -> Vec<String> {
        page.split("<th>Settings</th><td>")
            .skip(1)
            .map(|rest| rest.split("</td>").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        settings_rows(&page),
        [
            "alpha 0.02, a fixed run count, reference &#39;sleep 0.001&#39;, \
             suite benchmark &#39;a&#39;",
            "alpha 0.01, precision ±20 %, reference &#39;sleep 0.001&#39;, \
             suite benchmark &#39;sweep&#39;"
        ],
        "{page}"
    );
    assert!(!page.contains("stored before cmdscope kept"), "{page}");
    // The settings are the stored ones, not read back from command lines:
    // a session stored without them has none to show, and says so.
    rusqlite::Connection::open(d.join("store.db"))
        .unwrap()
        .execute_batch(
            "UPDATE sessions SET settings = NULL WHERE id = \
             (SELECT session_id FROM labels WHERE key = 'cmdscope.benchmark' AND value = 'a')",
        )
        .unwrap();
    ok(cs(
        d,
        &["report", "--run", "named", "--html", html.to_str().unwrap()],
    )
    .output()
    .unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    let rows = settings_rows(&page);
    assert_eq!(rows.len(), 1, "{page}");
    assert!(rows[0].starts_with("alpha 0.01, "), "{page}");
    assert!(
        page.contains("of this run was stored before cmdscope kept a session&#39;s settings"),
        "{page}"
    );
    // A benchmark's own session reports the settings the suite gave it.
    let own = d.join("own.html");
    ok(cs(
        d,
        &[
            "report",
            "--label",
            "cmdscope.benchmark=sweep",
            "--html",
            own.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap());
    let page = std::fs::read_to_string(&own).unwrap();
    let settings = page
        .split("<th>Settings</th><td>")
        .nth(1)
        .and_then(|rest| rest.split("</td>").next())
        .unwrap_or_default();
    assert!(
        settings.starts_with("alpha 0.01, precision ±20 %, reference ")
            && settings.contains("sleep 0.001")
            && settings.ends_with("suite benchmark &#39;sweep&#39;"),
        "{settings}: {page}"
    );
}

#[test]
fn a_suites_merged_report_names_every_benchmark() {
    // Measured in two partitions, merged back into one run: every cell the
    // suite plans is in the report under its benchmark's name.
    let dir = tempdir();
    let d = dir.path();
    let s = suite(d, "");
    let planned = cmdscope::suite::cells::plan(&cmdscope::suite::file::load(&s).unwrap()).unwrap();
    let s = s.to_str().unwrap();
    for k in ["1/2", "2/2"] {
        ok(cs(
            d,
            &[
                "run",
                "--suite",
                s,
                "--partition",
                k,
                "--run-id",
                "both",
                "--style",
                "none",
            ],
        )
        .output()
        .unwrap());
    }
    let html = d.join("both.html");
    ok(cs(
        d,
        &["report", "--run", "both", "--html", html.to_str().unwrap()],
    )
    .output()
    .unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(planned.len(), 4);
    for p in &planned {
        for c in &p.cells {
            let row = format!("<td>{}: {}</td>", p.benchmark.name, c.cell.name);
            assert!(page.contains(&row), "{row} missing: {page}");
        }
    }
    assert_eq!(cmdscope::suite::cells::count(&planned), 10);
}

#[test]
fn exports_and_the_monitor_are_refused_with_a_suite_rather_than_ignored() {
    let dir = tempdir();
    let d = dir.path();
    let s = suite(d, "");
    let s = s.to_str().unwrap();
    let out = d.join("out.txt");
    let out = out.to_str().unwrap();
    for flag in [
        "--export-json",
        "--export-csv",
        "--export-markdown",
        "--export-asciidoc",
        "--export-orgmode",
    ] {
        let o = cs(d, &["run", "--suite", s, flag, out]).output().unwrap();
        one_line_error(&o, "exports and --plot are not available with it");
    }
    let o = cs(
        d,
        &["run", "--suite", s, "--monitor", "true", "--match", "a=b"],
    )
    .output()
    .unwrap();
    one_line_error(&o, "--monitor is not available with --suite");
    // Nothing ran: no store, no export.
    assert!(!d.join("store.db").exists());
    assert!(!Path::new(out).exists());
}

/// How `run --suite` treats each of `run`'s flags: refused with one line
/// naming it (the file sets it, or a suite has no such setting), or
/// applied to every benchmark of the partition. Every flag clap knows for
/// `run` must be here, so a new one is decided for suites when it is added
/// (the run pipeline changes; these decisions stay).
enum WithSuite {
    /// Refused: these words after `run --suite FILE`, and what the one
    /// error line says.
    Refused(&'static [&'static str], &'static str),
    /// Applied, for this reason (tested below or by the suite's own tests).
    Applied(&'static str),
}

const SET_IN_FILE: &str = "--suite takes the measurement settings from the file";

fn suite_decisions() -> Vec<(&'static str, WithSuite)> {
    use WithSuite::*;
    let file = |words: &'static [&'static str]| Refused(words, SET_IN_FILE);
    vec![
        ("commands", Refused(&["true"], "cannot be used with")),
        ("suite", Applied("the file")),
        ("partition", Applied("which of the file's partitions")),
        ("partitions", Applied("with --partition auto")),
        ("run_id", Applied("the run the partition belongs to")),
        (
            "no_host_lock",
            Applied("the host lock around the partition"),
        ),
        ("style", Applied("the terminal output of every benchmark")),
        (
            "time_unit",
            Applied("the unit of every benchmark's terminal output"),
        ),
        ("labels", Applied("added to every benchmark's session")),
        ("no_store", Applied("where the sessions go")),
        ("store", Applied("where the sessions go")),
        ("warmup", file(&["-w", "1"])),
        ("runs", file(&["--runs", "3"])),
        ("min_runs", file(&["--min-runs", "3"])),
        ("max_runs", file(&["--max-runs", "3"])),
        ("min_time", file(&["--min-time", "1"])),
        ("prepare", file(&["--prepare", "true"])),
        ("conclude", file(&["--conclude", "true"])),
        ("setup", file(&["--setup", "true"])),
        ("cleanup", file(&["--cleanup", "true"])),
        ("names", file(&["-n", "x"])),
        ("ignore_failure", file(&["-i"])),
        ("output", file(&["--output", "null"])),
        ("show_output", file(&["--show-output"])),
        ("input", file(&["--input", "/dev/null"])),
        ("env", file(&["--env", "A=1"])),
        ("env_size", file(&["--env-size", "1"])),
        ("env_file", file(&["--env-file", "/dev/null"])),
        ("clear_env", file(&["--clear-env"])),
        ("user", file(&["--user", "root"])),
        ("workdir", file(&["--workdir", "tmpfs"])),
        (
            "workdir_template",
            file(&["--workdir", "tmpfs", "--workdir-template", "/tmp"]),
        ),
        ("cpus", file(&["--cpus", "0"])),
        ("nice", file(&["--nice", "1"])),
        ("shell", file(&["-S", "bash"])),
        ("no_shell", file(&["-N"])),
        ("ops", file(&["--ops", "2"])),
        ("concurrency", file(&["--concurrency", "2"])),
        ("timeout", file(&["--timeout", "5"])),
        ("stop_on_timeout", file(&["--stop-on-timeout"])),
        ("counters", file(&["--counters"])),
        ("order", file(&["--order", "sequential"])),
        ("seed", file(&["--seed", "1"])),
        ("precision", file(&["--precision", "5"])),
        ("reference", file(&["--reference", "true"])),
        ("reference_name", file(&["--reference-name", "x"])),
        ("alpha", file(&["--alpha", "0.01"])),
        ("parameter_scan", file(&["-P", "n", "1", "2"])),
        (
            "parameter_step_size",
            file(&["-P", "n", "1", "3", "-D", "2"]),
        ),
        (
            "parameter_factor",
            file(&["-P", "n", "1", "4", "--parameter-factor", "2"]),
        ),
        ("parameter_list", file(&["-L", "n", "1,2"])),
        ("minimize", file(&["-P", "n", "1", "2", "--minimize", "n"])),
        ("maximize", file(&["-P", "n", "1", "2", "--maximize", "n"])),
        ("metric", file(&["--metric", "time_cpu"])),
        ("remove_outliers", file(&["--remove-outliers"])),
        (
            "export_json",
            Refused(
                &["--export-json", "OUT"],
                "exports and --plot are not available",
            ),
        ),
        (
            "export_csv",
            Refused(
                &["--export-csv", "OUT"],
                "exports and --plot are not available",
            ),
        ),
        (
            "export_markdown",
            Refused(
                &["--export-markdown", "OUT"],
                "exports and --plot are not available",
            ),
        ),
        (
            "export_asciidoc",
            Refused(
                &["--export-asciidoc", "OUT"],
                "exports and --plot are not available",
            ),
        ),
        (
            "export_orgmode",
            Refused(
                &["--export-orgmode", "OUT"],
                "exports and --plot are not available",
            ),
        ),
        (
            "plot",
            Refused(&["--plot", "OUT"], "exports and --plot are not available"),
        ),
        (
            "sort",
            Refused(
                &["--sort", "mean-time"],
                "--sort is not available with --suite",
            ),
        ),
        (
            "isolate",
            Refused(&["--isolate"], "--isolate is not available with --suite"),
        ),
        (
            "until_decided",
            Refused(
                &["--until-decided"],
                "--until-decided/--max-time is not available",
            ),
        ),
        (
            "max_time",
            Refused(
                &["--until-decided", "--max-time", "5"],
                "--until-decided/--max-time is not available",
            ),
        ),
        (
            "monitor",
            Refused(&["--monitor", "true"], "--monitor is not available"),
        ),
        (
            "matches",
            Refused(
                &["--monitor", "true", "--match", "a=b"],
                "--monitor is not available",
            ),
        ),
        ("simulate", file(&["--simulate"])),
        ("counted", file(&["--counted"])),
        ("i1", file(&["--simulate", "--I1", "32768,8,64"])),
        ("d1", file(&["--simulate", "--D1", "32768,8,64"])),
        ("ll", file(&["--simulate", "--LL", "8388608,16,64"])),
        (
            "monitor_settle",
            Refused(
                &["--monitor", "true", "--monitor-settle", "1"],
                "--monitor is not available",
            ),
        ),
    ]
}

#[test]
fn every_flag_of_run_is_applied_or_refused_with_a_suite() {
    use clap::CommandFactory;
    let decisions = suite_decisions();
    let cli = cmdscope::cli::Cli::command();
    let run = cli.find_subcommand("run").expect("run");
    let ids: BTreeSet<String> = run
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .collect();
    let decided: BTreeSet<String> = decisions.iter().map(|(id, _)| id.to_string()).collect();
    let undecided: Vec<&String> = ids.difference(&decided).collect();
    assert!(
        undecided.is_empty(),
        "flags of `run` neither applied nor refused with --suite: {undecided:?} \
         (apply each to a suite's benchmarks, or refuse it in commands/run/suite.rs, \
         and add it here)"
    );
    let gone: Vec<&String> = decided.difference(&ids).collect();
    assert!(gone.is_empty(), "no such flag of `run` any more: {gone:?}");

    // What is applied is documented where the suite's flags are.
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/SUITES.md"))
            .unwrap();
    for (id, decision) in &decisions {
        if let WithSuite::Applied(why) = decision {
            let flag = format!("`--{}", id.replace('_', "-"));
            let flag = flag.replace("`--labels", "`--label");
            assert!(
                *id == "suite" || docs.contains(&flag),
                "{flag}` ({why}) is applied with --suite: docs/SUITES.md must say so"
            );
        }
    }

    let dir = tempdir();
    let d = dir.path();
    let marker = d.join("ran");
    let file = d.join("s.toml");
    std::fs::write(
        &file,
        format!(
            "[[benchmark]]\nname = \"b\"\ncommand = \"touch {}\"\nruns = 2\n",
            marker.display()
        ),
    )
    .unwrap();
    let out = d.join("out.txt");
    for (id, decision) in &decisions {
        let WithSuite::Refused(words, says) = decision else {
            continue;
        };
        let words: Vec<&str> = (words.iter())
            .map(|w| {
                if *w == "OUT" {
                    out.to_str().unwrap()
                } else {
                    w
                }
            })
            .collect();
        let mut args = vec!["run", "--suite", file.to_str().unwrap()];
        args.extend(&words);
        let o = cs(d, &args).output().unwrap();
        if *id == "commands" {
            // clap's own refusal, with its usage lines.
            refused(&o, says);
        } else {
            one_line_error(&o, says);
            // The flag typed, by its long name; a flag that needs another
            // is refused with the one it needs.
            let long = (run.get_arguments())
                .find(|a| a.get_id().as_str() == *id)
                .and_then(|a| a.get_long())
                .expect("a long name");
            let named = match *id {
                "parameter_step_size" | "parameter_factor" => "--parameter-scan".to_string(),
                "matches" | "monitor_settle" => "--monitor".to_string(),
                _ => format!("--{long}"),
            };
            assert!(
                stderr(&o).contains(&named),
                "{id}: the refusal does not name {named}: {}",
                stderr(&o)
            );
        }
        assert!(!marker.exists(), "{id}: a benchmark ran");
        assert!(!d.join("store.db").exists(), "{id}: the store was opened");
        assert!(!out.exists(), "{id}: {out:?} was written");
    }

    // The session-wide flags that are applied: the unit, the labels.
    let o = ok(cs(
        d,
        &[
            "run",
            "--suite",
            file.to_str().unwrap(),
            "--style",
            "basic",
            "-u",
            "second",
            "--label",
            "flag=applied",
        ],
    )
    .output()
    .unwrap());
    assert!(marker.exists());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(" s ") && !text.contains(" ms ") && !text.contains(" µs "),
        "-u second not applied: {text}"
    );
    let mut store = Store::open(&Location::Sqlite(d.join("store.db"))).unwrap();
    let labelled = store
        .sessions(&Default::default())
        .unwrap()
        .into_iter()
        .filter(|s| s.labels.iter().any(|(k, v)| k == "flag" && v == "applied"))
        .count();
    assert_eq!(labelled, 1, "--label not applied");
}

/// A suite's names reach the terminal escaped in every line `run --suite`
/// prints about them: its banner (the file's path), each benchmark's
/// header, an error naming a benchmark, and the note that a command is
/// shell syntax.
#[test]
fn run_suite_shows_hostile_names_escaped() {
    let dir = tempdir();
    let d = dir.path();
    let evil = "a\\u001b]0;owned\\u0007b\\u202ec";
    let p = d.join("evil\u{1b}[31m.toml");
    std::fs::write(
        &p,
        format!(
            "[[benchmark]]\nname = \"{evil}\"\ncommand = \"echo '{evil}' | true\"\nruns = 2\n\n\
             [[benchmark]]\nname = \"{evil} fails\"\ncommand = \"/nonexistent/{evil}\"\nruns = 2\n"
        ),
    )
    .unwrap();
    let o = cs(
        d,
        &["run", "--suite", p.to_str().unwrap(), "--style", "basic"],
    )
    .output()
    .unwrap();
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    let shown = "a\\u{1b}]0;owned\\u{7}b\\u{202e}c";
    for expected in [
        "suite ".to_string() + &p.display().to_string().replace('\u{1b}', "\\u{1b}"),
        format!("== {shown} (1 cell"),
        format!("Benchmark 1: echo '{shown}' | true"),
        format!("benchmark '{shown} fails'"),
        format!("'echo '{shown}' | true' is shell syntax"),
    ] {
        assert!(all.contains(&expected), "{expected}: {all}");
    }
    assert!(
        !all.contains(['\u{1b}', '\u{7}', '\u{202e}']),
        "raw controls reached the terminal: {all:?}"
    );
}
