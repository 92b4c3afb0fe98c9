//! `cmdscope run` on real processes: the measurements, the failure paths and
//! the clean-up guarantees (no process, cgroup or file left behind).

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn peak_memory_is_per_command_and_not_inherited() {
    let f = fixture();
    let (_, doc) = exported(&[
        "run",
        "--runs",
        "5",
        "--order",
        "sequential",
        &format!("{f} alloc 100"),
        &format!("{f} alloc 1"),
    ]);
    let big = median(&doc, 0, "memory_peak_resident");
    let small = median(&doc, 1, "memory_peak_resident");
    // 100 MiB touched plus the program's own few MiB of baseline.
    assert_within(
        big,
        100.0 * 1048576.0,
        0.05,
        "peak RSS of a 100 MiB allocation",
    );
    assert!(
        small < 10.0 * 1048576.0,
        "second command inherited the first's peak: {small}"
    );
    // Linux reports a child's peak as at least the harness's own resident
    // size: cmdscope records that floor, and keeps it small.
    let floor = doc["session"]["memory_peak_resident_floor"]
        .as_f64()
        .unwrap();
    assert!(
        floor > 0.0 && floor < 8.0 * 1048576.0,
        "harness floor {floor}"
    );
}

#[test]
fn storage_bytes_written_are_exact() {
    let dir = tempdir();
    let target = dir.path().join("data.bin");
    let bytes = 8 * 1048576;
    let (_, doc) = exported(&[
        "run",
        "--runs",
        "3",
        &format!("{} write {bytes} {}", fixture(), target.display()),
    ]);
    let written = median(&doc, 0, "io_write_bytes");
    assert_within(written, bytes as f64, 0.01, "bytes written with fsync");
    let chars = median(&doc, 0, "io_write_chars");
    assert_within(chars, bytes as f64, 0.01, "characters written");
}

#[test]
fn timeout_kills_the_whole_tree_including_escaped_children() {
    let token = format!("cmdscope-test-token-{}", std::process::id());
    let dir = tempdir();
    let out = dir.path().join("to.json");
    let start = std::time::Instant::now();
    let o = cmdscope(&[
        "run",
        "--runs",
        "2",
        "--timeout",
        "0.5",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{} background {token}", fixture()),
    ]);
    assert!(start.elapsed() < Duration::from_secs(20));
    // Timeouts go on by default; every run timing out is a failure.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("timed out"), "{}", stderr(&o));
    let doc = read_json(&out);
    let m = doc["results"][0]["measurements"].as_array().unwrap();
    assert_eq!(m.len(), 2);
    assert!(m.iter().all(|r| r["timed_out"] == true));
    let wall = m[0]["time_wall_clock"]["value"].as_f64().unwrap();
    assert!((0.5..1.5).contains(&wall), "timed out after {wall} s");
    let left = left_running(&token);
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn stop_on_timeout_ends_with_status_1() {
    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "--timeout",
        "0.2",
        "--stop-on-timeout",
        &format!("{} sleep 5000", fixture()),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("timed out"));
}

/// cmdscope started with `args`, recording nothing, its output discarded.
fn start(args: &[&str]) -> std::process::Child {
    Command::new(bin())
        .env("CMDSCOPE_NO_STORE", "1")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// `signal` to `child` after `ms` milliseconds.
fn signal_after(child: &std::process::Child, ms: u64, signal: libc::c_int) {
    std::thread::sleep(Duration::from_millis(ms));
    // SAFETY: kill has no memory effects; the child is not yet reaped, so
    // its pid is still its own.
    unsafe { libc::kill(child.id() as i32, signal) };
}

#[test]
fn sigint_exports_finished_runs_and_exits_130() {
    let dir = tempdir();
    let out = dir.path().join("int.json");
    let mut child = start(&[
        "run",
        "--runs",
        "1000",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{} sleep 50", fixture()),
    ]);
    signal_after(&child, 1200, libc::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let doc = read_json(&out);
    let runs = doc["results"][0]["measurements"].as_array().unwrap().len();
    assert!((5..1000).contains(&runs), "{runs} finished runs");
    assert_eq!(doc["session"]["interrupted"], true);
    // Every exported run is a finished one.
    for m in doc["results"][0]["measurements"].as_array().unwrap() {
        assert!(m["time_wall_clock"]["value"].as_f64().unwrap() >= 0.045);
    }
}

#[test]
fn sigterm_behaves_like_sigint() {
    let mut child = start(&[
        "run",
        "--runs",
        "1000",
        &format!("{} sleep 30000", fixture()),
    ]);
    signal_after(&child, 500, libc::SIGTERM);
    let start = std::time::Instant::now();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the running child must be killed, not awaited"
    );
}

#[test]
fn failing_command_stops_unless_ignored() {
    let f = fixture();
    let o = cmdscope(&["run", "--runs", "3", &format!("{f} exit 3")]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("exited with status 3") && e.contains("--ignore-failure"),
        "{e}"
    );

    let o = ok(cmdscope(&[
        "run",
        "--runs",
        "3",
        "-i",
        &format!("{f} exit 3"),
    ]));
    assert!(String::from_utf8_lossy(&o.stdout).contains("did not exit with status 0 (3)"));

    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "--ignore-failure=4",
        &format!("{f} exit 3"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "--ignore-failure=2,3",
        &format!("{f} exit 3"),
    ]);
    assert!(o.status.success());
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let o = cmdscope(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: expected '{needle}' in: {e}"
    );
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    assert_usage_error(
        &["run", "no-such-command-xyz"],
        "command not found: no-such-command-xyz",
    );
    assert_usage_error(&["run", "/etc/passwd"], "not executable");
    assert_usage_error(&["run", "/etc"], "not executable");
    assert_usage_error(&["run", ""], "empty command");
    assert_usage_error(&["run", "echo 'unbalanced"], "unbalanced quotes");
    assert_usage_error(
        &["run", "--runs", "5", "--min-runs", "3", "true"],
        "cannot be used with",
    );
    assert_usage_error(&["run", "--runs", "0", "true"], "0");
    assert_usage_error(
        &["run", "--min-runs", "9", "--max-runs", "3", "true"],
        "larger than",
    );
    assert_usage_error(&["run", "--timeout", "-1", "true"], "--timeout");
    assert_usage_error(&["run", "--env", "NOEQUALS", "true"], "KEY=VALUE");
    assert_usage_error(
        &["run", "--export-json", "/nonexistent-dir/x.json", "true"],
        "cannot write",
    );
    assert_usage_error(
        &["run", "--input", "/nonexistent-file", "true"],
        "cannot read",
    );
    assert_usage_error(
        &["run", "--export-json", "-", "--export-csv", "-", "true"],
        "stdout",
    );
    for o in [
        cmdscope(&["run", "no-such-command-xyz"]),
        cmdscope(&["run", ""]),
    ] {
        assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
    }
}

#[test]
fn bad_input_never_overwrites_an_existing_export() {
    let dir = tempdir();
    let out = dir.path().join("precious.json");
    std::fs::write(&out, "precious").unwrap();
    let o = cmdscope(&[
        "run",
        "--export-json",
        out.to_str().unwrap(),
        "no-such-command-xyz",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
}

#[test]
fn non_utf8_arguments_are_passed_as_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempdir();
    let out = dir.path().join("out.bin");
    let mut cmd = b"printf \xff\xfeok".to_vec();
    cmd.shrink_to_fit();
    let o = Command::new(bin())
        .env("CMDSCOPE_NO_STORE", "1")
        .args(["run", "--runs", "1", "--output", out.to_str().unwrap()])
        .arg(std::ffi::OsStr::from_bytes(&cmd))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"\xff\xfeok");
}

#[test]
fn output_that_is_closed_or_huge_keeps_memory_bounded() {
    let f = fixture();
    ok(cmdscope(&[
        "run",
        "--runs",
        "2",
        &format!("{f} closeout 5"),
    ]));
    // cmdscope measuring cmdscope: the inner one drains 256 MiB of output
    // through a pipe; its peak memory must stay small.
    let inner = format!(
        "{} run --runs 1 --output pipe --style none '{f} spew 268435456'",
        bin().display()
    );
    let (_, doc) = exported(&["run", "--runs", "1", &inner]);
    let rss = median(&doc, 0, "memory_peak_resident");
    assert!(rss < 32.0 * 1048576.0, "inner cmdscope peak RSS {rss}");
    assert!(
        median(&doc, 0, "io_read_chars") >= 268435456.0,
        "the pipe was drained"
    );
}

#[test]
fn env_hooks_and_names() {
    let dir = tempdir();
    let marks = dir.path().join("marks");
    let out = dir.path().join("h.json");
    let m = marks.display();
    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "--env",
        "CMDSCOPE_TEST_VAR=1",
        "--setup",
        &format!("echo setup >> {m}"),
        "--prepare",
        &format!("echo prepare >> {m}"),
        "--conclude",
        &format!("echo conclude >> {m}"),
        "--cleanup",
        &format!("echo cleanup >> {m}"),
        "-n",
        "env-check",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{} env CMDSCOPE_TEST_VAR", fixture()),
    ]);
    assert!(
        o.status.success(),
        "the variable reached the child: {}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&marks).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"setup"));
    assert_eq!(lines.last(), Some(&"cleanup"));
    assert_eq!(lines.iter().filter(|l| **l == "prepare").count(), 3);
    assert_eq!(lines.iter().filter(|l| **l == "conclude").count(), 3);
    assert_eq!(read_json(&out)["results"][0]["name"], "env-check");
}

#[test]
fn csv_and_markdown_exports() {
    let dir = tempdir();
    let csv = dir.path().join("r.csv");
    let md = dir.path().join("r.md");
    ok(cmdscope(&[
        "run",
        "--runs",
        "3",
        "--export-csv",
        csv.to_str().unwrap(),
        "--export-markdown",
        md.to_str().unwrap(),
        "true",
        "-n",
        "pipe|name",
    ]));
    let c = std::fs::read_to_string(&csv).unwrap();
    assert!(c.starts_with("command,mean,stddev,median,user,system,min,max"));
    assert_eq!(c.lines().count(), 2);
    let m = std::fs::read_to_string(&md).unwrap();
    assert!(m.contains("pipe\\|name"), "{m}");
}

#[test]
fn counters_are_collected_or_reported_unavailable() {
    let (o, doc) = exported(&[
        "run",
        "--runs",
        "3",
        "--counters",
        &format!("{} busy 10", fixture()),
    ]);
    // Software counters are always there: the task clock is the CPU time
    // of the command, so it agrees with the rusage user+system time.
    let task = median(&doc, 0, "task_clock");
    let cpu = median(&doc, 0, "time_cpu");
    assert!(task > 0.001, "task clock {task}");
    assert!(
        (task - cpu).abs() < 0.002 + 0.2 * cpu,
        "task clock {task} vs cpu time {cpu}"
    );
    let unavailable = doc["session"]["counters_unavailable"].as_array().unwrap();
    let has_cycles = doc["results"][0]["summary"]["cpu_cycles"].is_object();
    assert!(has_cycles || unavailable.iter().any(|u| u["metric"] == "cpu_cycles"));
    if !unavailable.is_empty() {
        assert!(String::from_utf8_lossy(&o.stdout).contains("Note: counters"));
    }
}

#[test]
fn a_single_command_stops_once_its_median_is_known_to_the_precision() {
    // Default settings: the session may stop as soon as the 95 % interval
    // of the median is within ±1 % (half its width over the median); with
    // one command nothing else is pending. Process start-up alone (`busy 0`,
    // like `true`) is noisy enough to need a few hundred runs, more than the
    // last planned look (160) of comparisons, and the 3 s budget allows
    // several thousand.
    let (_, doc) = exported(&["run", &format!("{} busy 0", fixture())]);
    let times = run_times(&doc, 0);
    let within = |n: usize| {
        cmdscope::stats::median_ci(&times[..n], 0.95)
            .is_ok_and(|e| (e.high - e.low) / 2.0 / e.value <= 0.01)
    };
    // The interval is checked after 10 runs and then after every ~10 % more
    // (n -> n + ceil(n / 10)): the session must end at the first check at
    // which the promise held, computed here from the runs in order.
    let mut check = 10;
    let mut first = None;
    while check <= times.len() {
        if within(check) {
            first = Some(check);
            break;
        }
        check += check.div_ceil(10);
    }
    let stop = doc["session"]["stop_reason"].as_str().unwrap_or("");
    match first {
        Some(n) => {
            assert_eq!(stop, "precision", "{} runs, precise at {n}", times.len());
            assert_eq!(times.len(), n, "known to 1 % after {n} runs");
        }
        None => assert!(
            matches!(stop, "time_budget" | "max_runs"),
            "never precise in {} runs, yet stopped for '{stop}'",
            times.len()
        ),
    }
}

#[test]
fn too_few_runs_still_give_a_summary_and_every_comparison() {
    // hyperfine prints a relative speed even from two runs; cmdscope says
    // how the medians compare and why there is no verdict yet.
    let f = fixture();
    let (o, doc) = exported(&[
        "run",
        "--runs",
        "2",
        // Long enough that a busy machine's late wake-ups (a few ms)
        // cannot bring the ratio of 3 near 1.
        &format!("{f} sleep 20"),
        &format!("{f} sleep 60"),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("inconclusive (ratio of the medians"))
        .unwrap_or_else(|| panic!("no summary line in {text}"));
    assert!(
        line.contains("need at least 3 paired runs for a verdict, have 2"),
        "{line}"
    );
    let wall = *comparisons_of(&doc, "time_wall_clock")
        .first()
        .expect("the requested comparison is exported");
    assert_eq!(wall["verdict"], "inconclusive");
    assert_eq!(
        wall["note"],
        "need at least 3 paired runs for a verdict, have 2"
    );
    let ratio = wall["ratio"].as_f64().unwrap();
    assert!(ratio > 1.5 && ratio < 3.5, "60 ms against 20 ms: {ratio}");
}

#[test]
fn sigint_while_the_spawner_makes_a_schedule_exports_finished_runs() {
    // Runs of /bin/true with a fixed count: made from schedules.
    let dir = tempdir();
    let out = dir.path().join("int.json");
    let mut child = start(&[
        "run",
        "--runs",
        "10000000",
        "--export-json",
        out.to_str().unwrap(),
        "/bin/true",
    ]);
    signal_after(&child, 1500, libc::SIGINT);
    let start = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(start.elapsed() < Duration::from_secs(5), "slow to stop");
    let doc = read_json(&out);
    let runs = doc["results"][0]["measurements"].as_array().unwrap();
    assert!(
        (100..10_000_000).contains(&runs.len()),
        "{} runs",
        runs.len()
    );
    assert_eq!(doc["session"]["interrupted"], true);
    for m in runs {
        assert_eq!(m["exit_code"], 0, "{m}");
        assert!(m["time_wall_clock"]["value"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn sigint_loses_no_run_the_spawner_finished_from_its_schedule() {
    // Each run appends a line; the spawner writes the reports of a few
    // runs at a time, so at Ctrl-C some finished runs are still on their
    // way to cmdscope: they are exported all the same.
    let dir = tempdir();
    let out = dir.path().join("int.json");
    let count = dir.path().join("count");
    let mut child = start(&[
        "run",
        "--runs",
        "10000000",
        "--style",
        "none",
        "--export-json",
        out.to_str().unwrap(),
        &format!("sh -c 'echo x >> {}'", count.display()),
    ]);
    signal_after(&child, 1500, libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let doc = read_json(&out);
    let exported = doc["results"][0]["measurements"].as_array().unwrap().len();
    let appended = std::fs::read_to_string(&count).unwrap().lines().count();
    // The run that Ctrl-C killed may have appended its line, and so may
    // one the spawner started as the signal reached it: at most two lines
    // more than runs exported, never fewer.
    assert!(exported >= 50, "{exported} runs");
    assert!(
        (exported..=exported + 2).contains(&appended),
        "{appended} runs made, {exported} exported"
    );
}

// A measured command that stops its parent (the spawner: `kill -STOP
// $PPID`) or keeps stopping it: the session ends in seconds, by itself, on
// a timeout, on SIGINT or SIGTERM, and a `kill -9` of cmdscope leaves no
// process and no cgroup behind.

/// cmdscope started with `args`, marked with `mark` in its environment (so
/// is everything it starts); stderr piped.
fn start_marked(args: &[&str], mark: &str) -> std::process::Child {
    Command::new(bin())
        .env("CMDSCOPE_NO_STORE", "1")
        .env("CMDSCOPE_TEST_SESSION", mark)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` up to `limit`: its exit code and stderr. If it is
/// still running then, it and everything it started (found by `mark`) are
/// continued and killed, so that a failing test leaves nothing behind, and
/// the test fails.
fn finish_within(
    mut child: std::process::Child,
    limit: Duration,
    mark: &str,
) -> (Option<i32>, String) {
    let waited = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return (status.code(), err);
        }
        if waited.elapsed() > limit {
            let marked = format!("CMDSCOPE_TEST_SESSION={mark}");
            for _ in 0..3 {
                for pid in processes_with_env(&marked) {
                    let pid: i32 = pid.parse().unwrap();
                    // SAFETY: signals to processes this test started.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::kill(pid, libc::SIGCONT);
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.wait();
            panic!("still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes marked `mark` once they have had 5 s to go.
fn marked_left(mark: &str) -> Vec<String> {
    let marked = format!("CMDSCOPE_TEST_SESSION={mark}");
    let waited = std::time::Instant::now();
    loop {
        let left = processes_with_env(&marked);
        if left.is_empty() || waited.elapsed() > Duration::from_secs(5) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the session cgroup of cmdscope `pid` (cgroup v2) is still there
/// once it has had 5 s to go.
fn cgroup_left(pid: u32) -> Option<std::path::PathBuf> {
    let dir = own_cgroup_dir()?.join(format!("cmdscope-{pid}"));
    let waited = std::time::Instant::now();
    while dir.exists() && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    dir.exists().then_some(dir)
}

#[test]
fn a_command_that_stops_its_parent_ends_the_session_in_one_clear_line() {
    for timeout in [Some("2"), None] {
        let mark = format!("stops-parent-{}-{timeout:?}", std::process::id());
        let mut args = vec!["run", "--runs", "3"];
        if let Some(t) = timeout {
            args.extend(["--timeout", t]);
        }
        args.push("sh -c 'kill -STOP $PPID'");
        let child = start_marked(&args, &mark);
        let pid = child.id();
        let (code, err) = finish_within(child, Duration::from_secs(30), &mark);
        // Its time would hold the stop: not a time of the command's.
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("stopped cmdscope's spawner, its parent process"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(marked_left(&mark).is_empty());
        assert_eq!(cgroup_left(pid), None);
    }
}

#[test]
fn sigint_and_sigterm_end_a_session_whose_command_keeps_stopping_its_parent() {
    let keeps_stopping = "sh -c 'while :; do kill -STOP $PPID; sleep 0.01; done'";
    for (signal, timeout) in [(libc::SIGINT, None), (libc::SIGTERM, Some("60"))] {
        let mark = format!("keeps-stopping-{}-{signal}", std::process::id());
        let mut args = vec!["run", "--runs", "3"];
        if let Some(t) = timeout {
            args.extend(["--timeout", t]);
        }
        args.push(keeps_stopping);
        let child = start_marked(&args, &mark);
        signal_after(&child, 1000, signal);
        let (code, err) = finish_within(child, Duration::from_secs(30), &mark);
        assert_eq!(code, Some(130), "{err}");
        assert!(marked_left(&mark).is_empty());
    }
    // A timeout ends each run the same way.
    let mark = format!("keeps-stopping-{}-timeout", std::process::id());
    let child = start_marked(
        &["run", "--runs", "2", "--timeout", "0.5", keeps_stopping],
        &mark,
    );
    let (code, err) = finish_within(child, Duration::from_secs(30), &mark);
    assert_eq!(code, Some(1), "{err}");
    assert!(marked_left(&mark).is_empty());
}

#[test]
fn kill_9_while_the_spawner_is_stopped_leaves_no_process_and_no_cgroup() {
    let mark = format!("killed-stopped-{}", std::process::id());
    let child = start_marked(
        &[
            "run",
            "--runs",
            "3",
            "--timeout",
            "60",
            "sh -c 'while :; do kill -STOP $PPID; sleep 0.01; done'",
        ],
        &mark,
    );
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a signal to our own child, not yet reaped.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let (code, _) = finish_within(child, Duration::from_secs(10), &mark);
    assert_eq!(code, None, "killed");
    let left = marked_left(&mark);
    assert!(left.is_empty(), "left running: {left:?}");
    assert_eq!(cgroup_left(pid), None);
}
