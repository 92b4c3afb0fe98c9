//! Concurrency mode on real processes: N instances at once, every
//! completion recorded, throughput that follows the work's own limits, I/O
//! rates that add up, nothing left running.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// A script under `dir` (its path marks its processes in /proc).
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let _ = Command::new("chmod").arg("+x").arg(&path).status();
    path.display().to_string()
}

fn throughput(doc: &serde_json::Value, i: usize) -> f64 {
    doc["results"][i]["throughput"]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no throughput for result {i}: {}", doc["results"][i]))
}

/// Work serialised by an exclusive lock cannot go faster with more
/// instances: throughput stays at one lock holder's rate whatever N, and
/// the law is fitted to it with contention near 1. The held work is a
/// sleep, so the rate holds on a busy machine too, and a long one (0.2 s),
/// so that a second instance starts `flock` while the first holds the
/// lock even when a loaded machine takes a tenth of a second to start it
/// (with 0.08 s the lock sat idle at N = 2 beside a fork storm).
#[test]
fn work_under_one_lock_does_not_scale() {
    let dir = tempdir();
    let lock = dir.path().join("lock");
    let work = script(
        dir.path(),
        "locked.sh",
        &format!("exec flock -x '{}' sleep 0.2", lock.display()),
    );
    let plot = dir.path().join("scaling.svg");
    let (_, doc) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "48",
        "-L",
        "j",
        "1,2,3,4",
        "--concurrency",
        "{j}",
        "--plot",
        plot.to_str().unwrap(),
        &work,
    ]);
    // The chart of a concurrency sweep is its throughput curve.
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("throughput by concurrency"),
        "{svg}"
    );
    let rates: Vec<f64> = (0..4).map(|i| throughput(&doc, i)).collect();
    for (i, r) in rates.iter().enumerate() {
        assert_eq!(doc["results"][i]["runs"], 48, "{}", doc["results"][i]);
        // Four batches of three completions per slot at N = 4: every
        // point has an interval, so the fit weighs the points by it.
        assert_eq!(doc["results"][i]["throughput"]["batches"], 4);
        assert_eq!(doc["results"][i]["concurrency"], i + 1);
        // One holder at a time: at most 5 completions a second (200 ms
        // each), and a busy machine only slows it. The throughput is never
        // above what the completions themselves allow (whole completions
        // between two of them at least one hold apart); 2 % is room for
        // completions seen late at a stretch's edges (a busy core beside
        // it read 5.3 when the slots' progress alone decided).
        assert!(*r <= 5.0 * 1.02, "N = {}: {r}/s", i + 1);
    }
    // From N = 2 on the lock is never idle: one holder's rate at every N.
    // N = 1 is slower by the start of `flock` outside the lock (see
    // below), which a loaded machine stretches.
    for r in &rates[2..] {
        assert_within(*r, rates[1], 0.15, "throughput against N = 2");
    }
    assert!(rates[0] <= rates[1] * 1.05, "{rates:?}");
    let usl = &doc["scaling"][0]["usl"];
    eprintln!("lock: {rates:?}, {usl}");
    // Where the fit is given, contention is near 1. Near, not at: each
    // instance starts `flock` outside the lock (a fork and an exec, s ms),
    // which a second instance overlaps with the holder's 200 ms. One
    // instance then makes 1 / (200 + s) a second, more make 1 / 200, and
    // the law through those points has contention (200 - s) / (200 + s):
    // at least 0.75 while s is under 28 ms (6 ms on a quiet machine, 20
    // with this file's other tests running beside it). A load that slows
    // the lock's hand-over as waiters grow bends the curve down, which
    // the law reads as coherency, not as less contention. The step from
    // one holder's rate to the lock's is sharper than the law's smooth
    // curve, and with tight intervals its lack-of-fit test may say so (2
    // sessions in 6 on a quiet machine): then the fit is withheld for
    // that reason, never for want of points or intervals.
    match usl["sigma"]["value"].as_f64() {
        Some(sigma) => assert!(
            (0.75..=1.0).contains(&sigma),
            "contention of a lock {sigma}: {usl}"
        ),
        None => assert!(
            usl["note"]
                .as_str()
                .is_some_and(|n| n.contains("lack of fit")),
            "the fit is withheld for another reason than lack of fit: {usl}"
        ),
    }
}

/// Every instance writes and syncs 256 KiB: the cell's aggregate write
/// rate is what the instances' own counts say they wrote per second,
/// checked against each batch's bytes over its whole length; the host's
/// disks saw the writes.
#[test]
fn aggregate_writes_are_the_instances_writes_per_second() {
    let dir = tempdir();
    let work = script(
        dir.path(),
        "writer.sh",
        &format!(
            "f=$(mktemp -p '{}'); dd if=/dev/zero of=\"$f\" bs=64k count=4 conv=fsync 2>/dev/null; rm -f \"$f\"",
            dir.path().display()
        ),
    );
    // Ten batches of eight completions per slot.
    let (_, doc) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "240",
        "--concurrency",
        "3",
        &work,
    ]);
    let r = &doc["results"][0];
    let written = r["io_rates"]["written_bytes_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no write rate: {r}"));
    let runs = r["measurements"].as_array().unwrap();
    let bytes = |i: usize| runs[i]["io_write_bytes"]["value"].as_f64().unwrap();
    for i in 0..runs.len() {
        assert!(bytes(i) >= 256.0 * 1024.0, "run {i} wrote {}", bytes(i));
    }
    // The independent figure: each batch's bytes, all its instances', over
    // its whole length, from its start to its last end. The rate counts
    // only the stretch in which all three were busy, so it differs by what
    // the batch's edges hold: the start, where all three begin together
    // (as busy as the stretch, or faster, on a disk queue that is empty),
    // and the tail, in which fewer than three run, at most one instance's
    // time in each slot. With eight per slot the stretch is about seven
    // instance times and the whole batch at most nine: the whole-batch
    // figure is between 7/9 of the rate (all tail) and a little above it
    // (a faster start), and the mean of ten batches is within that.
    let batches = r["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 10, "{r}");
    let whole: Vec<f64> = batches
        .iter()
        .map(|b| {
            let first = b["first_run"].as_u64().unwrap() as usize;
            let n = b["runs"].as_u64().unwrap() as usize;
            let total: f64 = (first..first + n).map(bytes).sum();
            total / b["elapsed"].as_f64().unwrap()
        })
        .collect();
    let whole = whole.iter().sum::<f64>() / whole.len() as f64;
    eprintln!("whole batches / rate: {}", whole / written);
    assert!(
        whole >= written * 7.0 / 9.0 && whole <= written * 1.15,
        "whole batches {whole} B/s against the rate {written} B/s"
    );
    // The disks: fsync put the bytes on one of them, so at least one was
    // busy or written to. A machine whose /proc/diskstats lists no disk
    // (a container on tmpfs alone) has nothing to show.
    let disks = r["host"]["disks"]
        .as_array()
        .unwrap_or_else(|| panic!("host view without disks: {}", r["host"]));
    if disks.is_empty() {
        eprintln!("skipped the disk check: /proc/diskstats lists no disk here");
        return;
    }
    assert!(
        disks.iter().any(|d| d["busy"].as_f64().unwrap_or(0.0) > 0.0
            || d["written_bytes_per_second"].as_f64().unwrap_or(0.0) > 0.0),
        "fsync wrote {written} B/s and no disk saw it: {disks:?}"
    );
}

/// 64 instances of a short command: every completion recorded, nothing
/// left running after the session; and nothing after `kill -9` of
/// cmdscope in the middle of one.
#[test]
fn sixty_four_at_once_record_every_run_and_leave_nothing() {
    let dir = tempdir();
    let work = script(dir.path(), "short.sh", "sleep 0.01");
    let (_, doc) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "200",
        "--concurrency",
        "64",
        &work,
    ]);
    assert_eq!(doc["results"][0]["runs"], 200);
    assert_eq!(
        doc["results"][0]["measurements"].as_array().unwrap().len(),
        200
    );
    let marker = dir.path().display().to_string();
    let left = left_running(&marker);
    assert!(left.is_empty(), "{left:?}");

    let long = script(dir.path(), "long.sh", "sleep 30");
    let mut child = Command::new(bin())
        .args(["run", "--style", "none", "--no-store", "--runs", "1000"])
        .args(["--concurrency", "16", &long])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while processes_with("long.sh").len() < 16 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "16 instances never ran: {:?}",
            processes_with("long.sh")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let left = left_running(&marker);
    assert!(left.is_empty(), "left running after kill -9: {left:?}");
}

/// `--timeout` at N = 2 kills the timed-out instance alone. The instance
/// that takes the lock sleeps past the timeout; its neighbour finds the
/// lock taken and sleeps 0.1 s. A timed-out instance is recorded as a
/// single run's timeout is (timed out, its exit code and signal those of a
/// timed-out single run, its wall time the timeout), every other instance
/// is an ordinary run (exit 0, no signal: never killed with its
/// neighbour), and the session carries on and succeeds, as single runs do.
#[test]
fn a_timeout_kills_the_timed_out_instance_alone() {
    let dir = tempdir();
    let lock = dir.path().join("lock");
    let work = script(
        dir.path(),
        "maybe_slow.sh",
        &format!("flock -n '{}' sleep 5 || sleep 0.1", lock.display()),
    );
    let timeout = 0.5;
    let wall = |m: &serde_json::Value| m["time_wall_clock"]["value"].as_f64().unwrap();
    let (_, doc) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "16",
        "--concurrency",
        "2",
        "--timeout",
        "0.5",
        &work,
    ]);
    let runs = doc["results"][0]["measurements"].as_array().unwrap();
    assert_eq!(runs.len(), 16);
    let (slow, fast): (Vec<_>, Vec<_>) = runs.iter().partition(|m| m["timed_out"] == true);
    // One lock holder at a time, 0.5 s each, beside 0.1 s neighbours.
    assert!(!slow.is_empty() && fast.len() > slow.len(), "{runs:?}");
    for m in &fast {
        assert_eq!(m["exit_code"], 0, "an ordinary run: {m}");
        assert!(m.get("signal").is_none(), "killed with its neighbour: {m}");
        assert!(wall(m) < timeout, "{m}");
    }
    // The per-instance latency is the ordinary runs' (0.1 s sleeps), the
    // timed-out ones left out as from every statistic; its median is the
    // cell's median.
    let r = &doc["results"][0];
    let latency = &r["latency"];
    assert_eq!(
        latency["count"].as_u64(),
        Some(fast.len() as u64),
        "{latency}"
    );
    let q = |k: &str| latency[k].as_f64().unwrap();
    assert!(q("p10") >= 0.1 && q("p99") < timeout, "{latency}");
    assert!(q("p10") <= q("median") && q("median") <= q("p90") && q("p90") <= q("p99"));
    assert_eq!(latency["median"], r["median"], "{latency}");
    // A timed-out single run, for its exit code and signal: the first run
    // takes the marker and sleeps past the timeout, the next do not.
    let marker = dir.path().join("marker");
    let first_slow = script(
        dir.path(),
        "first_slow.sh",
        &format!(
            "if [ -e '{0}' ]; then sleep 0.1; else touch '{0}'; sleep 5; fi",
            marker.display()
        ),
    );
    let (_, single) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "3",
        "--timeout",
        "0.5",
        &first_slow,
    ]);
    let single = single["results"][0]["measurements"].as_array().unwrap();
    let reference = single.iter().find(|m| m["timed_out"] == true).unwrap();
    for m in &slow {
        assert_eq!(m["exit_code"], reference["exit_code"], "{m}");
        assert_eq!(m["signal"], reference["signal"], "{m}");
        // Killed at the timeout: the deadline is set as the request goes
        // out, a moment before the spawner starts the clock, and the kill
        // and reap come within a poll's millisecond plus the scheduling
        // delays of a busy machine (tenths of a second at worst).
        assert!(
            wall(m) > timeout - 0.05 && wall(m) < timeout + 0.3,
            "wall of a timed-out instance: {m}"
        );
    }
}

/// The JSON's throughput comparison carries the throughput ratio the
/// terminal prints, with its interval, beside the engine's ratio of
/// seconds per completion (its inverse); a difference it finds has the
/// direction of the ratio: `sleep 0.04` makes fewer completions than
/// `sleep 0.02`, never more (a loaded machine may leave it undecided).
#[test]
fn the_json_throughput_ratio_is_the_one_printed() {
    let (o, doc) = exported(
        &[
            &["run", "--style", "basic", "--runs", "40"][..],
            &CONCURRENT_PAIR,
        ]
        .concat(),
    );
    let c = &doc["throughput_comparisons"][0];
    let f = |k: &str| c[k].as_f64().unwrap_or_else(|| panic!("no {k}: {c}"));
    let g = |k: &str, i: usize| c[k][i].as_f64().unwrap_or_else(|| panic!("no {k}: {c}"));
    let r = f("throughput_ratio");
    assert_ne!(c["verdict"], "faster", "{c}");
    if c["significant"] == true {
        assert!(c["verdict"] == "slower" && r < 1.0, "{c}");
    }
    assert!((r * f("ratio") - 1.0).abs() < 1e-12, "{c}");
    let (lo, hi) = (g("throughput_ratio_ci", 0), g("throughput_ratio_ci", 1));
    assert!(lo <= r && r <= hi, "{c}");
    assert!((lo * g("ratio_ci", 1) - 1.0).abs() < 1e-12, "{c}");
    assert!((hi * g("ratio_ci", 0) - 1.0).abs() < 1e-12, "{c}");
    // The sentence, whatever its verdict, gives the same ratio and interval.
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Throughput") && l.contains("'long'") && l.contains("'short'"))
        .unwrap_or_else(|| panic!("no comparison in:\n{text}"));
    assert!(line.contains(&format!("{r:.2}")), "{r:.2}: {line}");
    assert!(line.contains(&format!("{lo:.2}–{hi:.2}")), "{line}");
}

#[test]
fn concurrency_out_of_range_is_one_line() {
    one_line_error(
        &cmdscope(&["run", "--concurrency", "5000", "true"]),
        "--concurrency must be between 1 and 4096, got 5000",
    );
    one_line_error(
        &cmdscope(&["run", "--concurrency", "0", "true"]),
        "--concurrency must be between 1 and 4096, got 0",
    );
    one_line_error(
        &cmdscope(&["run", "--concurrency", "x", "true"]),
        "--concurrency expects a whole number, got 'x'",
    );
}

/// CPU-bound work on every CPU: two instances make about twice the
/// completions of one, four no more than two (the CPUs are full), and the
/// instances use about two CPUs. Needs the CPUs to itself.
#[test]
#[ignore = "needs a quiet machine: throughput of CPU-bound work follows the CPUs other processes leave free"]
fn quiet_machine_cpu_work_scales_to_the_cpus() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus != 2 {
        eprintln!("skipped: the figures are for 2 CPUs, this machine has {cpus}");
        return;
    }
    let work = format!("{} work 20", fixture());
    let (_, doc) = exported(&[
        "run",
        "--style",
        "none",
        "--runs",
        "80",
        "-L",
        "j",
        "1,2,4",
        "--concurrency",
        "{j}",
        &work,
    ]);
    let (one, two, four) = (
        throughput(&doc, 0),
        throughput(&doc, 1),
        throughput(&doc, 2),
    );
    // Two instances make at least 1.6 times the completions of one. Above
    // two, only as far as the instances' own run times explain: on a
    // 2-vCPU VM a lone instance ran 2-10 % slower than each of two (cause
    // not found: its context switches and migrations match a bare shell
    // loop's), so the ratio read 2.05-2.3; an estimator that counted
    // overlapping runs twice would read far above its run times' ratio.
    let mean = |i: usize| doc["results"][i]["mean"].as_f64().unwrap();
    let explained = 2.0 * mean(0) / mean(1);
    assert!(
        two / one >= 1.6 && two / one <= explained * 1.1,
        "N = 2 against N = 1: {two} / {one}, where the mean runs ({} s, {} s) explain {explained}",
        mean(0),
        mean(1)
    );
    assert_within(four, two, 0.15, "N = 4 against N = 2");
    let cpu = doc["results"][1]["cpu_utilisation"].as_f64().unwrap();
    assert!((1.6..=2.1).contains(&cpu), "CPU use at N = 2: {cpu}");
}

/// `--prepare` and `--conclude` run once per instance, in its slot, as
/// they run once per run without concurrency.
#[test]
fn hooks_run_once_per_instance() {
    let dir = tempdir();
    let before = dir.path().join("prepared");
    let after = dir.path().join("concluded");
    ok(cmdscope(&[
        "run",
        "--style",
        "none",
        "--runs",
        "12",
        "--concurrency",
        "3",
        "--prepare",
        &format!("echo x >> '{}'", before.display()),
        "--conclude",
        &format!("echo x >> '{}'", after.display()),
        "sleep 0.01",
    ]));
    assert_eq!(lines(&before).len(), 12);
    assert_eq!(lines(&after).len(), 12);
}

/// An instance that fails during a warm-up batch fails the session as a
/// failing measured instance does: exit 1, one line naming the warm-up.
#[test]
fn a_failure_while_warming_up_ends_the_session() {
    let dir = tempdir();
    // Exactly one invocation (the first to make the directory) fails.
    let flaky = script(
        dir.path(),
        "flaky.sh",
        &format!(
            "mkdir '{}' 2>/dev/null && exit 1\nexit 0",
            dir.path().join("failed").display()
        ),
    );
    let o = cmdscope(&[
        "run",
        "--style",
        "none",
        "--runs",
        "12",
        "--warmup",
        "1",
        "--concurrency",
        "2",
        &flaky,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exited with status 1 during warm-up"),
        "{}",
        stderr(&o)
    );
    assert!(dir.path().join("failed").is_dir(), "the failing run ran");
}

/// A pids cgroup of this test's own (cgroup v2, or v1's pids hierarchy),
/// removed when dropped; Err says why there is none here.
struct PidsCgroup(std::path::PathBuf);

impl PidsCgroup {
    fn new() -> Result<PidsCgroup, String> {
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
            return Err("not root: cannot make a cgroup".into());
        }
        let v2 = Path::new("/sys/fs/cgroup");
        let enabled = std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "pids"));
        let v1 = Path::new("/sys/fs/cgroup/pids");
        let base = if enabled {
            v2
        } else if v1.join("cgroup.procs").exists() {
            v1
        } else {
            return Err("no pids controller (cgroup v2 with pids enabled, or v1's pids)".into());
        };
        let dir = base.join(format!("cmdscope-test-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let made = PidsCgroup(dir);
        if !made.0.join("pids.max").exists() {
            return Err(format!("{} has no pids.max", made.0.display()));
        }
        Ok(made)
    }

    fn limit(&self, max: usize) {
        std::fs::write(self.0.join("pids.max"), max.to_string()).unwrap();
    }

    /// Tasks in the cgroup, once they have had a few seconds to exit.
    fn left(&self) -> usize {
        let start = Instant::now();
        loop {
            let n = std::fs::read_to_string(self.0.join("pids.current"))
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0);
            if n == 0 || start.elapsed() > Duration::from_secs(5) {
                return n;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// cmdscope with `args`, moved into the cgroup before it starts.
    fn cmdscope(&self, args: &[&str]) -> std::process::Output {
        let procs = self.0.join("cgroup.procs");
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                procs.display()
            ))
            .arg(bin())
            .args(args)
            .env("NO_COLOR", "1")
            .env("CMDSCOPE_NO_STORE", "1")
            .output()
            .unwrap()
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// When the system refuses another process at a large N (EAGAIN from
/// fork or clone, here a cgroup's pids.max), cmdscope says so in one line
/// with the N it reached, exits 1, and leaves nothing running. Limits from
/// too low for the slots themselves up to enough for all eight: both the
/// slots' start and an instance's start meet the limit, and the session
/// succeeds once the limit allows it.
#[test]
fn too_many_at_once_for_the_process_limit_is_one_line_and_leaves_nothing() {
    let cgroup = match PidsCgroup::new() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let (mut slots_refused, mut instance_refused) = (false, false);
    let mut succeeded = false;
    for max in 8..=48 {
        cgroup.limit(max);
        let o = cgroup.cmdscope(&[
            "run",
            "--style",
            "none",
            "--runs",
            "16",
            "--concurrency",
            "8",
            "sleep 0.05",
        ]);
        assert_eq!(cgroup.left(), 0, "pids.max {max}: processes left behind");
        if o.status.success() {
            succeeded = true;
            break;
        }
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "pids.max {max}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "pids.max {max}: {err}");
        let reached: usize = err
            .split("was reached at ")
            .nth(1)
            .and_then(|t| t.strip_suffix("\n").unwrap_or(t).split(" of 8 ").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("pids.max {max}: no N reached in: {err}"));
        assert!(reached < 8, "pids.max {max}: {err}");
        assert!(
            err.starts_with("cmdscope: error: --concurrency 8: the limit on processes")
                && err.contains("pids.max")
                && err.contains("Resource temporarily unavailable"),
            "pids.max {max}: {err}"
        );
        slots_refused |= err.contains("of 8 instance slots started");
        instance_refused |= err.contains("of 8 instances running at once");
    }
    assert!(succeeded, "eight instances never fit under pids.max 48");
    assert!(slots_refused, "no limit refused the slots themselves");
    assert!(instance_refused, "no limit refused an instance");
}

/// `--isolate` with `--concurrency`: the instances run on the commands'
/// CPUs (every CPU but cmdscope's), each instance slot's spawner being one
/// of cmdscope's helpers, pinned with it.
#[test]
fn isolate_gives_the_instances_the_commands_cpus() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("SKIPPED: --isolate needs two CPUs, this machine has {cpus}");
        return;
    }
    let dir = tempdir();
    let seen = dir.path().join("cpus");
    let cmd = format!(
        "sh -c 'grep Cpus_allowed_list /proc/self/status >> {}'",
        seen.display()
    );
    let o = cmdscope(&[
        "run",
        "--isolate",
        "--concurrency",
        "3",
        "--runs",
        "9",
        "--style",
        "basic",
        &cmd,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    // "1,2,3" or "1-3,5" as a set of CPUs.
    let set = |list: &str| -> std::collections::BTreeSet<usize> {
        list.split(',')
            .flat_map(|part| {
                let (a, b) = part.split_once('-').unwrap_or((part, part));
                let a: usize = a.trim().parse().expect("a CPU number");
                let b: usize = b.trim().parse().expect("a CPU number");
                a..=b
            })
            .collect()
    };
    let commands = said
        .lines()
        .find_map(|l| l.strip_prefix("cmdscope: isolated: the commands run on CPU "))
        .and_then(|l| l.split_whitespace().next())
        .map(|l| set(l.trim_end_matches(',')))
        .unwrap_or_else(|| panic!("no isolation line: {said}"));
    let lines = lines(&seen);
    assert!(lines.len() >= 9, "{lines:?}");
    for l in &lines {
        let list = l.split_whitespace().last().unwrap_or_default();
        assert_eq!(set(list), commands, "an instance ran on {list}: {said}");
    }
}
