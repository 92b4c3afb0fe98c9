//! `explain --profile` on real processes: C fixtures built here with gcc,
//! a Go program built with go (each test says so loudly and returns when
//! its compiler is missing), the kernel's own sampling.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::*;
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/profile")
        .join(name)
}

fn build_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("profile-fixtures");
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// Builds a C fixture with gcc and `flags`, once per test binary (tests
/// run in parallel: rebuilding a binary another test runs breaks its
/// exec); None (said loudly) without gcc.
fn gcc(source: &str, out: &str, flags: &[&str]) -> Option<String> {
    static BUILT: std::sync::Mutex<Vec<(String, Option<String>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = built.iter().find(|(o, _)| o == out) {
        return p.clone();
    }
    let p = gcc_now(source, out, flags);
    built.push((out.to_string(), p.clone()));
    p
}

fn gcc_now(source: &str, out: &str, flags: &[&str]) -> Option<String> {
    let path = build_dir().join(out);
    let status = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(&path)
        .arg(data(source))
        .status();
    match status {
        Ok(s) if s.success() => Some(path.to_string_lossy().into_owned()),
        Ok(s) => panic!("gcc failed on {source}: {s}"),
        Err(e) => {
            skip(&format!(
                "gcc is not installed ({e}); the C fixture tests did not run"
            ));
            None
        }
    }
}

fn profile(args: &[&str]) -> Value {
    let mut all = vec!["explain", "--profile", "--json", "-"];
    all.extend_from_slice(args);
    let o = ok(cmdscope(&all));
    json(&o)["profile"].clone()
}

fn cell(p: &Value, i: usize) -> &Value {
    &p["cells"][i]
}

fn function<'a>(c: &'a Value, name: &str) -> Option<&'a Value> {
    c["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == name)
}

fn variants() -> Option<String> {
    gcc(
        "variants.c",
        "variants-fp",
        // Unoptimised: every function sets up its frame (gcc at -O1 gives
        // leaf functions none, whatever -fno-omit-frame-pointer says).
        &["-fno-omit-frame-pointer", "-fno-inline"],
    )
}

#[test]
fn the_extra_function_holds_the_difference_and_the_common_one_does_not_differ() {
    let Some(bin) = variants() else { return };
    let a = format!("{bin} a 60000000");
    let b = format!("{bin} b 60000000");
    let p = profile(&["--runs", "10", &a, &b]);
    // Hardware cycles where the machine has them; these VMs have none,
    // and the fallback says why.
    if p["event"] == "cpu-clock" {
        let why = p["event_fallback"].as_str().unwrap();
        assert!(why.contains("not available"), "{why}");
    } else {
        assert_eq!(p["event"], "cycles");
    }
    let pair = &p["pairs"][0];
    let cpu = pair["cpu"]["delta"].as_f64().unwrap();
    let diffs = pair["differences"].as_array().unwrap();
    let top = &diffs[0];
    assert_eq!(top["function"], "extra_work_b", "{pair:#}");
    assert_eq!(top["real"], true);
    let delta = top["delta"].as_f64().unwrap();
    let [lo, hi] = [
        top["delta_ci"][0].as_f64().unwrap(),
        top["delta_ci"][1].as_f64().unwrap(),
    ];
    // At least 80 % of the measured CPU difference, and its interval
    // within ±20 % of it: sampled and measured CPU time agree.
    assert!(delta >= 0.8 * cpu, "delta {delta} of {cpu}");
    assert!(lo >= 0.8 * cpu && hi <= 1.2 * cpu, "[{lo}, {hi}] vs {cpu}");
    // The common work is not called different: its interval holds 0.
    let common = diffs
        .iter()
        .find(|d| d["function"] == "common_work")
        .unwrap();
    assert_eq!(common["real"], false, "{common:#}");
    assert!(common["delta_ci"][0].as_f64().unwrap() <= 0.0);
    assert!(common["delta_ci"][1].as_f64().unwrap() >= 0.0);
    // The hot path ends in the extra function, called from main.
    let path: Vec<&str> = pair["hot_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert_eq!(
        &path[path.len() - 2..],
        ["main", "extra_work_b"],
        "{path:?}"
    );
    // Per cell: the work is where the source puts it.
    let cb = cell(&p, 1);
    assert_eq!(cb["runs"], 10);
    let e = function(cb, "extra_work_b").unwrap();
    let c = function(cb, "common_work").unwrap();
    let (es, cs) = (e["self"].as_f64().unwrap(), c["self"].as_f64().unwrap());
    assert!((es / cs - 1.0).abs() < 0.25, "extra {es} common {cs}");
    assert!(function(cell(&p, 0), "extra_work_b").is_none());
    let main = function(cb, "main").unwrap();
    assert!(main["total"].as_f64().unwrap() >= es + cs - 1e-9);
}

/// The wall-time side of the claim: needs the CPU to itself, since a
/// waiting process's wall time stretches with other processes' load.
#[test]
#[ignore = "needs a quiet machine: under load the wall difference stretches with other processes' CPU use while the sampled CPU time does not"]
fn quiet_machine_the_extra_function_explains_the_wall_difference() {
    let Some(bin) = variants() else { return };
    let a = format!("{bin} a 60000000");
    let b = format!("{bin} b 60000000");
    let p = profile(&["--runs", "10", &a, &b]);
    let pair = &p["pairs"][0];
    let wall = pair["wall"]["delta"].as_f64().unwrap();
    let top = &pair["differences"][0];
    assert_eq!(top["function"], "extra_work_b");
    assert!(top["delta_ci"][0].as_f64().unwrap() >= 0.8 * wall);
    assert!(top["delta_ci"][1].as_f64().unwrap() <= 1.2 * wall);
}

fn hot_path(pair: &Value) -> Vec<String> {
    pair["hot_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap().to_string())
        .collect()
}

fn hottest_stack(c: &Value) -> Vec<String> {
    c["hot_stacks"][0]["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dwarf_unwinding_finds_the_caller_without_frame_pointers() {
    let Some(bin) = gcc(
        "variants.c",
        "variants-o2",
        &["-O2", "-fomit-frame-pointer", "-fno-inline"],
    ) else {
        return;
    };
    let a = format!("{bin} a 60000000");
    let b = format!("{bin} b 60000000");
    let p = profile(&["--runs", "6", &a, &b]);
    assert_eq!(p["unwind"], "dwarf");
    let pair = &p["pairs"][0];
    assert_eq!(
        pair["differences"][0]["function"], "extra_work_b",
        "{pair:#}"
    );
    let path = hot_path(pair);
    assert!(
        path.ends_with(&["main".to_string(), "extra_work_b".to_string()]),
        "{path:?}"
    );
}

#[test]
fn a_rust_release_binary_without_frame_pointers_shows_its_callers() {
    let out = build_dir().join("hot-rs");
    let status = Command::new("rustc")
        .args(["-C", "opt-level=2", "-C", "force-frame-pointers=no", "-o"])
        .arg(&out)
        .arg(data("hot.rs"))
        .status();
    match status {
        Ok(s) => assert!(s.success(), "rustc failed"),
        Err(e) => {
            skip(&format!(
                "rustc is not on PATH ({e}); the Rust profile test did not run"
            ));
            return;
        }
    }
    let p = profile(&["--runs", "3", out.to_str().unwrap()]);
    let c = cell(&p, 0);
    // Demangled, without the hash.
    assert_eq!(c["functions"][0]["function"], "hot::hot_work", "{c:#}");
    let stack = hottest_stack(c);
    let n = stack.len();
    assert!(n >= 2, "{stack:?}");
    assert_eq!(stack[n - 1], "hot::hot_work");
    assert_eq!(stack[n - 2], "hot::caller_of_hot_work", "{stack:?}");
}

#[test]
fn a_a_sessions_rarely_call_a_function_different() {
    let Some(bin) = variants() else { return };
    let a = format!("{bin} a 20000000");
    let sessions = 20;
    let mut with_real = 0;
    for _ in 0..sessions {
        // The defaults: 10 runs, and a second phase at a raised rate when
        // a CPU difference is called real and left unexplained.
        let p = profile(&["-n", "a1", "-n", "a2", &a, &a]);
        let diffs = p["pairs"][0]["differences"].as_array().unwrap().clone();
        assert!(!diffs.is_empty());
        if diffs.iter().any(|d| d["real"] == true) {
            with_real += 1;
        }
    }
    // Family-wise alpha = 0.05 per session: 4 or more of 20 has
    // probability 1.6 % at exactly alpha (binomial), and the simulation in
    // src/profile/tests.rs shows the rate itself below alpha.
    assert!(with_real <= 3, "{with_real} of {sessions} A/A sessions");
}

#[test]
fn kernel_frames_show_a_syscall_heavy_program() {
    let Some(bin) = gcc(
        "syscalls.c",
        "syscalls",
        &["-O1", "-fno-omit-frame-pointer"],
    ) else {
        return;
    };
    let p = profile(&["--runs", "3", &bin]);
    assert_eq!(p["kernel_frames"], true);
    let c = cell(&p, 0);
    let kernel: f64 = c["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["module"] == "[kernel]")
        .map(|f| f["self"].as_f64().unwrap())
        .sum();
    let sampled = c["sampled_seconds"].as_f64().unwrap();
    assert!(kernel > 0.3 * sampled, "kernel {kernel} of {sampled}");
    assert!(function(c, "ksys_write").is_some() || function(c, "vfs_write").is_some());
}

#[test]
fn a_sleeping_program_is_off_the_cpu_in_its_sleep() {
    let p = profile(&["--runs", "3", "sleep 0.3"]);
    let c = cell(&p, 0);
    assert!(c["sampled_seconds"].as_f64().unwrap() < 0.03, "{c:#}");
    if p["off_cpu"] == false {
        // The kernel refused context-switch sampling: said plainly.
        assert!(p["note"].as_str().unwrap().contains("on-CPU time only"));
        return;
    }
    let blocked = c["off_cpu"]["blocked"].as_f64().unwrap();
    assert!((0.29..0.45).contains(&blocked), "{c:#}");
    let top: Vec<&str> = c["off_cpu"]["stacks"][0]["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(top.last(), Some(&"[off-CPU: blocked]"), "{top:?}");
    assert!(top.iter().any(|f| f.contains("nanosleep")), "{top:?}");
    let o = ok(cmdscope(&[
        "explain",
        "--profile",
        "--runs",
        "3",
        "sleep 0.3",
    ]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("blocked"), "{text}");
}

/// Builds the Go fixture `NAME.go` with go build; None (said loudly)
/// without go.
fn go_build(name: &str) -> Option<PathBuf> {
    let dir = build_dir().join(format!("go-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data(&format!("{name}.go")), dir.join(format!("{name}.go"))).unwrap();
    std::fs::write(dir.join("go.mod"), format!("module {name}\n\ngo 1.19\n")).unwrap();
    let out = dir.join(name);
    let status = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&dir)
        .status();
    match status {
        Ok(s) => assert!(s.success(), "go build failed"),
        Err(e) => {
            skip(&format!(
                "go is not installed ({e}); the Go profile test did not run"
            ));
            return None;
        }
    }
    Some(out)
}

#[test]
fn a_go_programs_hot_function_is_on_top() {
    let Some(out) = go_build("hot") else { return };
    let p = profile(&["--runs", "3", out.to_str().unwrap()]);
    let c = cell(&p, 0);
    assert_eq!(c["functions"][0]["function"], "main.hotLoop", "{c:#}");
    // Go keeps frame pointers: the runtime's frames below it are found
    // (the direct caller of a leaf function that sets up no frame is
    // not, as with any frame-pointer unwinder).
    let hot = &c["hot_stacks"][0]["stack"];
    let names: Vec<&str> = hot
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(names.last(), Some(&"main.hotLoop"), "{names:?}");
    assert!(names.contains(&"runtime.main"), "{names:?}");
}

#[test]
fn the_files_open_in_their_viewers() {
    let Some(bin) = variants() else { return };
    let dir = tempdir();
    let out = dir.path().join("prof");
    let a = format!("{bin} a 30000000");
    let b = format!("{bin} b 30000000");
    let o = ok(cmdscope(&[
        "explain",
        "--profile",
        "--runs",
        "4",
        "--flamegraph",
        out.to_str().unwrap(),
        &a,
        &b,
    ]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("extra_work_b"), "{text}");
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 10, "{names:?}");
    // The report page shows every flame graph, each linked to its SVG.
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("extra_work_b"), "{index}");
    for svg in names.iter().filter(|n| n.ends_with(".svg")) {
        assert!(
            index.contains(&format!("<img src=\"{svg}\"")),
            "{svg} not in {index}"
        );
    }
    // Folded stacks: `a;b;c N` lines, re-read by inferno into an SVG.
    let folded_b = names
        .iter()
        .find(|n| n.starts_with("2-") && n.ends_with(".folded"))
        .unwrap();
    let folded = std::fs::read_to_string(out.join(folded_b)).unwrap();
    assert!(
        folded.lines().any(|l| l.contains("main;extra_work_b ")),
        "{folded}"
    );
    for l in folded.lines() {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        assert!(!stack.is_empty());
        n.parse::<u64>().unwrap();
    }
    let mut opts = inferno::flamegraph::Options::default();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut svg).unwrap();
    assert!(String::from_utf8_lossy(&svg).contains("extra_work_b"));
    // The SVGs are SVG documents naming the functions.
    for n in names.iter().filter(|n| n.ends_with(".svg")) {
        let s = std::fs::read_to_string(out.join(n)).unwrap();
        assert!(s.contains("<svg") && s.contains("common_work"), "{n}");
    }
    // pprof: read by go tool pprof itself.
    let pb = names
        .iter()
        .find(|n| n.starts_with("2-") && n.ends_with(".pb.gz"))
        .unwrap();
    match Command::new("go")
        .args(["tool", "pprof", "-top"])
        .arg(out.join(pb))
        .output()
    {
        Ok(o) => {
            let top = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(top.contains("Type: cpu"), "{top}");
            let line = top.lines().find(|l| l.ends_with(" extra_work_b")).unwrap();
            assert!(
                line.trim_start()
                    .starts_with(|c: char| c.is_ascii_digit() && c != '0'),
                "{top}"
            );
        }
        Err(e) => skip(&format!(
            "go is not installed ({e}); pprof output not checked"
        )),
    }
}

#[test]
fn short_missing_and_failing_commands_are_one_line_errors() {
    // One sample per 50 ms of CPU time: `true` uses about a millisecond,
    // far from a sample even on a slow machine (at the default 999 Hz a
    // slow machine's exec and dynamic loading can reach one).
    let o = cmdscope(&["explain", "--profile", "--frequency", "20", "true"]);
    one_line_error(&o, "too short to sample");
    let o = cmdscope(&["explain", "--profile", "/nonexistent/program"]);
    one_line_error(&o, "command not found");
    let o = cmdscope(&["explain", "--profile", "sh -c 'sleep 0.05; exit 3'"]);
    one_line_error(&o, "failed with exit code 3");
    let o = cmdscope(&["explain", "--runs", "5", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--profile"), "{}", stderr(&o));
}

#[test]
fn profiled_runs_get_the_variants_nice_value_and_cpus() {
    let dir = tempdir();
    let out = dir.path().join("seen");
    // Each run appends what it was given; the loop makes it long enough
    // to be sampled.
    let cmd = format!(
        "sh -c 'nice >> {o}; grep Cpus_allowed_list /proc/self/status >> {o}; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'",
        o = out.display()
    );
    ok(cmdscope(&[
        "explain",
        "--profile",
        "--runs",
        "3",
        "--nice",
        "7",
        "--cpus",
        "0",
        &cmd,
    ]));
    let seen = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert!(lines.len() >= 6, "{seen}");
    for pair in lines.chunks(2) {
        assert_eq!(pair[0].trim(), "7", "{seen}");
        assert_eq!(
            pair[1].split(':').nth(1).map(str::trim),
            Some("0"),
            "{seen}"
        );
    }
}

#[test]
fn nothing_is_left_running_after_a_profile() {
    // The command leaves a child behind in its process group.
    let marker = "47.123";
    let cmd = format!("sh -c 'sleep {marker} & i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'");
    ok(cmdscope(&["explain", "--profile", "--runs", "3", &cmd]));
    let left = left_running(marker);
    assert!(left.is_empty(), "{:?}", left);
}

#[test]
fn a_daemon_the_command_started_is_killed_after_each_run() {
    // It leaves the command's process group and session (`setsid`).
    let dir = tempdir();
    let token = format!("profile-daemon-{}", std::process::id());
    let script = daemon_script(dir.path(), &token);
    let o = cmdscope_within(
        &[
            "explain",
            "--profile",
            "--runs",
            "3",
            script.to_str().unwrap(),
        ],
        std::time::Duration::from_secs(120),
    );
    ok(o);
    let left = left_running(&token);
    assert!(left.is_empty(), "{:?}", left);
}

/// Restores kernel.perf_event_paranoid when dropped.
struct Paranoid(String);

impl Drop for Paranoid {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/kernel/perf_event_paranoid", &self.0);
    }
}

#[test]
fn a_refusing_kernel_is_one_line_with_the_fix() {
    let Some(bin) = variants() else { return };
    let path = "/proc/sys/kernel/perf_event_paranoid";
    let Ok(before) = std::fs::read_to_string(path) else {
        eprintln!("SKIPPED: no {path}");
        return;
    };
    if std::fs::write(path, "3").is_err() {
        eprintln!("SKIPPED: cannot write {path} (not root, or /proc/sys read-only)");
        return;
    }
    let _restore = Paranoid(before.trim().to_string());
    let cmd = format!("{bin} a 20000000");
    // As an unprivileged user: refused (or, on kernels where level 3
    // means 2, user-space stacks only and said so).
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::bin())
        .args(["explain", "--profile", "--runs", "3", &cmd])
        .env("CMDSCOPE_NO_STORE", "1")
        .output();
    let Ok(o) = o else {
        eprintln!("SKIPPED: setpriv is not installed");
        return;
    };
    if o.status.code() == Some(2) {
        one_line_error(&o, "perf_event_paranoid");
        assert!(stderr(&o).contains("sysctl kernel.perf_event_paranoid=1"));
    } else {
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(text.contains("user (kernel frames need"), "{text}");
    }
}

#[test]
fn a_container_without_perf_events_is_one_line_with_the_fix() {
    let Some(noperf) = gcc("noperf.c", "noperf", &[]) else {
        return;
    };
    let marker = "0.2713";
    let cmd = format!("sleep {marker}");
    let run = |errno: &str, user: Option<&str>| {
        let mut c = match user {
            Some(uid) => {
                let mut c = Command::new("setpriv");
                c.args([&format!("--reuid={uid}"), "--regid=65534", "--clear-groups"])
                    .arg(&noperf);
                c
            }
            None => Command::new(&noperf),
        };
        c.arg(errno)
            .arg(common::bin())
            .args(["explain", "--profile", &cmd])
            .env("CMDSCOPE_NO_STORE", "1")
            .output()
            .expect("run noperf")
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let o = run("EPERM", None);
    if root {
        one_line_error(
            &o,
            "a container or seccomp policy may block perf_event_open",
        );
        let o = run("EPERM", Some("65534"));
        one_line_error(
            &o,
            "run as root, grant CAP_PERFMON, or 'sysctl kernel.perf_event_paranoid=1'",
        );
    } else {
        one_line_error(&o, "sysctl kernel.perf_event_paranoid=1");
    }
    let o = run("ENOSYS", None);
    one_line_error(&o, "perf events are not available");
    // Nothing left behind: the command was never left running.
    let left = left_running(marker);
    assert!(left.is_empty(), "{:?}", left);
}

/// The start-up of a container runtime in miniature (tests/data/profile/
/// setenv.go): 5,000 variables set with os.Setenv before an exec, against
/// the same environment handed to exec directly, a few milliseconds of CPU
/// apart. With the defaults, the first 10 runs at 999 Hz get a handful of
/// samples of the difference each; the second phase at a raised rate names
/// the functions that make it.
#[test]
fn a_short_commands_difference_is_named_with_the_defaults_within_30_seconds() {
    let Some(bin) = go_build("setenv") else {
        return;
    };
    let direct = format!("{} direct", bin.display());
    let setenv = format!("{} setenv", bin.display());
    let started = std::time::Instant::now();
    let p = profile(&[&direct, &setenv]);
    let took = started.elapsed().as_secs_f64();
    let pair = &p["pairs"][0];
    let real: Vec<&str> = pair["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["real"] == true && d["delta"].as_f64().unwrap() > 0.0)
        .map(|d| d["function"].as_str().unwrap())
        .collect();
    assert!(
        real.iter().any(|f| *f == "syscall.Setenv"
            || *f == "os.Setenv"
            || f.starts_with("runtime.map")
            || f.starts_with("internal/runtime/maps.")),
        "real differences {real:?} in {:#}",
        p
    );
    assert!(took < 30.0, "took {took:.1} s");
    // The report says how it got there.
    let raised = &p["raised"];
    assert!(raised.is_object(), "{p:#}");
    assert_eq!(raised["first_runs"], 10);
    assert!(raised["frequency"].as_u64().unwrap() > raised["first_frequency"].as_u64().unwrap());
    assert!(
        ["explained", "budget"].contains(&raised["ended"].as_str().unwrap()),
        "{raised:#}"
    );
}

#[test]
fn the_runs_or_the_rate_given_keep_the_first_phase_only() {
    let Some(bin) = go_build("setenv") else {
        return;
    };
    let direct = format!("{} direct", bin.display());
    let setenv = format!("{} setenv", bin.display());
    let p = profile(&["--runs", "5", &direct, &setenv]);
    assert!(p["raised"].is_null(), "{p:#}");
    assert_eq!(p["frequency"], 999);
    assert_eq!(cell(&p, 0)["runs"], 5);
}

#[test]
fn every_output_is_checked_before_the_first_run() {
    let dir = tempdir();
    let marker = dir.path().join("ran");
    let command = format!("sh -c 'touch {}; sleep 0.2'", marker.display());
    let file = dir.path().join("a-file");
    std::fs::write(&file, "kept").unwrap();
    let missing = dir.path().join("no/such/dir/out.json");
    for (flag, path) in [
        ("--flamegraph", &file),
        ("--speedscope", &missing),
        ("--firefox-profile", &missing),
        ("--json", &missing),
    ] {
        let o = cmdscope(&[
            "explain",
            "--profile",
            flag,
            path.to_str().unwrap(),
            &command,
        ]);
        one_line_error(&o, path.to_str().unwrap());
        assert!(!marker.exists(), "{flag}: the command ran before the check");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
}

#[test]
fn a_frequency_above_the_kernels_limit_is_refused_before_any_run() {
    let limit: u64 = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(u64::MAX);
    if limit >= 100_000 {
        eprintln!(
            "SKIPPED: kernel.perf_event_max_sample_rate is {limit}, at or above --frequency's own bound (100000): nothing to refuse here (src/profile/rate.rs tests the check)"
        );
        return;
    }
    let dir = tempdir();
    let marker = dir.path().join("ran");
    let command = format!("sh -c 'touch {}'", marker.display());
    let above = (limit + 1).to_string();
    let o = cmdscope(&["explain", "--profile", "--frequency", &above, &command]);
    one_line_error(&o, "perf_event_max_sample_rate");
    assert!(!marker.exists());
}

/// A Node script whose hot functions are JIT-compiled: with --jit-symbols
/// they appear by the names V8 gives them, with their JavaScript callers
/// (V8 keeps frame pointers in its code); without, they do not.
#[test]
fn a_node_scripts_functions_appear_by_name_with_jit_symbols() {
    let node = match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => "node",
        _ => {
            skip("node is not installed; the JIT symbols test did not run");
            return;
        }
    };
    let dir = tempdir();
    let script = dir.path().join("hot.js");
    std::fs::write(
        &script,
        "function hotLoop(n) {\n  let x = 0;\n  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;\n  return x;\n}\n\
         function outerCaller() {\n  let s = 0;\n  for (let k = 0; k < 30; k++) s += hotLoop(2000000);\n  return s;\n}\n\
         if (outerCaller() === 42) console.log('unlikely');\n",
    )
    .unwrap();
    let _one = one_runtime_at_a_time();
    let maps_before = perf_maps();
    let command = format!("{node} {}", script.display());
    let p = profile(&["--runs", "3", "--jit-symbols", &command]);
    let c = cell(&p, 0);
    let hot = hot_function(c, |n| n.contains("hotLoop"));
    assert_eq!(hot["module"], "[jit]");
    // Its caller is found through the JIT code's frames.
    assert!(
        called_from(c, |n| n.contains("outerCaller"), |n| n.contains("hotLoop")),
        "{c:#}"
    );
    // The maps the runtime wrote at our request are gone.
    assert_eq!(left_behind(&maps_before), Vec::<String>::new());
    // Without the option V8 writes no map: no JavaScript names.
    let p = profile(&["--runs", "3", &command]);
    let names = p["cells"][0]["functions"].to_string();
    assert!(!names.contains("hotLoop"), "{names}");
}

/// The tests that ask runtimes for their maps run one at a time: each
/// checks that no map is left behind, and another's run may have ended
/// and not yet had its maps removed.
static JIT_RUNTIMES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_runtime_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    JIT_RUNTIMES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The function of a cell `is` picks, holding more than 30 % of the
/// sampled time (a hot loop's share).
fn hot_function(c: &Value, is: impl Fn(&str) -> bool) -> &Value {
    let hot = c["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| is(f["function"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("no such function in {c:#}"));
    let sampled = c["sampled_seconds"].as_f64().unwrap();
    assert!(hot["total"].as_f64().unwrap() > 0.3 * sampled, "{c:#}");
    hot
}

/// Whether one of a cell's hot stacks has a frame `caller` picks below
/// (nearer the root than) one `callee` picks.
fn called_from(c: &Value, caller: impl Fn(&str) -> bool, callee: impl Fn(&str) -> bool) -> bool {
    c["hot_stacks"].as_array().unwrap().iter().any(|s| {
        let names: Vec<&str> = s["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let o = names.iter().position(|n| caller(n));
        let h = names.iter().position(|n| callee(n));
        matches!((o, h), (Some(o), Some(h)) if o < h)
    })
}

/// The perf maps, jitdumps and V8 logs written since `before` by
/// processes that have ended (another test's live runtime may be writing
/// its own).
fn left_behind(before: &BTreeSet<String>) -> Vec<String> {
    perf_maps()
        .difference(before)
        .filter(|n| {
            let pid = n
                .trim_end_matches("-v8.log")
                .rsplit(['-', '/'])
                .next()
                .unwrap_or("")
                .split('.')
                .next()
                .unwrap_or("");
            !Path::new("/proc").join(pid).exists()
        })
        .cloned()
        .collect()
}

/// What runtimes write for profilers: perf maps and jitdumps in /tmp, V8's
/// logs in the working directory.
fn perf_maps() -> BTreeSet<String> {
    let names = |dir: &str| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
            .collect()
    };
    let tmp = names("/tmp").into_iter().filter(|n| {
        (n.starts_with("/tmp/perf-") && n.ends_with(".map"))
            || (n.starts_with("/tmp/jit-") && n.ends_with(".dump"))
    });
    let here = names(".")
        .into_iter()
        .filter(|n| n.starts_with("./isolate-0x") && n.ends_with("-v8.log"));
    tmp.chain(here).collect()
}

/// A Python of at least 3.12: on PATH, or the one .ci/run unpacks from
/// Debian's archive into target/python (with its own C library, started
/// through its own loader by target/python/python3).
fn python_312() -> Option<String> {
    let unpacked = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/python/python3");
    let candidates = ["python3.14", "python3.13", "python3.12", "python3"]
        .into_iter()
        .map(String::from)
        .chain([unpacked.to_string_lossy().into_owned()]);
    for p in candidates {
        let ok = Command::new(&p)
            .args(["-c", "import sys; sys.exit(sys.version_info < (3, 12))"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(p);
        }
    }
    None
}

/// A Python script's functions by name: Python 3.12's perf trampolines
/// (named in a perf map), or 3.13's (described in a jitdump with unwind
/// tables, which wins when both are asked for).
#[test]
fn a_python_scripts_functions_appear_by_name_with_jit_symbols() {
    let Some(python) = python_312() else {
        skip("no Python 3.12 or later here (.ci/run unpacks one into target/python); the Python JIT symbols test did not run");
        return;
    };
    let dir = tempdir();
    let script = dir.path().join("hot.py");
    std::fs::write(
        &script,
        "def hot_loop(n):\n    x = 0\n    for i in range(n):\n        x = (x * 31 + i) % 1000003\n    return x\n\n\
         def outer_caller():\n    return sum(hot_loop(200000) for _ in range(6))\n\n\
         if outer_caller() == 42:\n    print('unlikely')\n",
    )
    .unwrap();
    let _one = one_runtime_at_a_time();
    let command = format!("{python} {}", script.display());
    let maps_before = perf_maps();
    let p = profile(&["--runs", "3", "--jit-symbols", &command]);
    let c = cell(&p, 0);
    hot_function(c, |n| n.starts_with("py::hot_loop:"));
    assert!(
        called_from(
            c,
            |n| n.starts_with("py::outer_caller:"),
            |n| n.starts_with("py::hot_loop:")
        ),
        "{c:#}"
    );
    assert_eq!(left_behind(&maps_before), Vec::<String>::new());
}

/// A Java program's JIT-compiled method by the name the JVM gives it
/// (`long Hot.hotLoop(long)`), from the perf map the JVM writes at exit
/// when --jit-symbols asks; its stacks walk through the compiled code's
/// frame pointers down to the JVM's own C++ frames that called into Java.
#[test]
fn a_java_programs_compiled_method_appears_by_name_with_jit_symbols() {
    let have = |tool: &str| {
        Command::new(tool)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("java") || !have("javac") {
        skip("no JDK here (.ci/run installs default-jdk-headless); the JVM JIT symbols test did not run");
        return;
    }
    let dir = tempdir();
    std::fs::write(
        dir.path().join("Hot.java"),
        "public class Hot {\n\
         \x20   static long hotLoop(long n) {\n\
         \x20       long x = 0;\n\
         \x20       for (long i = 0; i < n; i++) x = (x * 31 + i) % 1000003;\n\
         \x20       return x;\n\
         \x20   }\n\
         \x20   public static void main(String[] a) {\n\
         \x20       long s = 0;\n\
         \x20       for (int k = 0; k < 40; k++) s += hotLoop(2000000);\n\
         \x20       if (s == 42) System.out.println(\"unlikely\");\n\
         \x20   }\n\
         }\n",
    )
    .unwrap();
    let javac = Command::new("javac")
        .arg("Hot.java")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(javac.status.success(), "{javac:?}");
    let _one = one_runtime_at_a_time();
    let command = format!("java -cp {} Hot", dir.path().display());
    let maps_before = perf_maps();
    let p = profile(&["--runs", "3", "--jit-symbols", &command]);
    let c = cell(&p, 0);
    let hot = hot_function(c, |n| n == "long Hot.hotLoop(long)");
    assert_eq!(hot["module"], "[jit]");
    // Below the compiled method, the JVM's C++ frame that called into Java
    // (its interpreted frames are all named "Interpreter" by the JVM).
    assert!(
        called_from(
            c,
            |n| n.starts_with("JavaCalls::call_helper"),
            |n| n == "long Hot.hotLoop(long)"
        ),
        "{c:#}"
    );
    assert_eq!(left_behind(&maps_before), Vec::<String>::new());
    // Without the option the JVM writes no map: no Java method names.
    let p = profile(&["--runs", "3", &command]);
    let names = p["cells"][0]["functions"].to_string();
    assert!(!names.contains("Hot.hotLoop"), "{names}");
}

/// A callgrind out-file of `command` made by hand with the callers
/// cmdscope records, and `function`'s Ir in it as `callgrind_annotate`
/// reports it (the sum of its `file:function'callers…` rows).
fn callgrind_annotate_ir(command: &[&str], function: &str) -> (PathBuf, u64, tempfile::TempDir) {
    let dir = tempdir();
    let out = dir.path().join("callgrind.out");
    let o = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!(
            "--separate-callers={}",
            cmdscope::exec::simulate::CALLERS
        ))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .args(command)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("callgrind_annotate")
        .arg("--inclusive=no")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<u64> = text
        .lines()
        .filter(|l| {
            // "30,000,014 (49.87%)  file:function'callers… [object]"
            let row = l.split_once("%)").map_or("", |(_, r)| r.trim());
            let row = row.rsplit_once(" [").map_or(row, |(r, _)| r);
            let name = row.split_once(':').map_or(row, |(_, f)| f);
            name == function || name.starts_with(&format!("{function}'"))
        })
        .map(|l| {
            l.split_whitespace()
                .next()
                .unwrap()
                .replace(',', "")
                .parse()
                .unwrap()
        })
        .collect();
    assert!(!rows.is_empty(), "no {function} in {text}");
    (out, rows.iter().sum(), dir)
}

/// The folded stacks `--flamegraph DIR` wrote for cell `n` (from 1).
fn folded_stacks(dir: &Path, n: usize) -> String {
    let name = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|f| f.starts_with(&format!("{n}-")) && f.ends_with(".folded"))
        .unwrap_or_else(|| panic!("no folded stacks of cell {n} in {}", dir.display()));
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn simulated(args: &[&str]) -> Value {
    let mut all = vec!["--simulate"];
    all.extend_from_slice(args);
    let p = profile(&all);
    assert_eq!(p["unit"], "instructions", "{p:#}");
    p
}

/// A pair's difference of one function.
fn difference<'a>(pair: &'a Value, name: &str) -> &'a Value {
    pair["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["function"] == name)
        .unwrap_or_else(|| panic!("no {name} in {pair:#}"))
}

/// The differences of a pair called real, with their deltas.
fn real_differences(pair: &Value) -> Vec<(String, f64, bool)> {
    pair["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["real"] == true)
        .map(|d| {
            (
                d["function"].as_str().unwrap().to_string(),
                d["delta"].as_f64().unwrap(),
                d["exact"] == true,
            )
        })
        .collect()
}

/// Counted, not sampled: the extra function's instructions are the ones
/// `callgrind_annotate` reports for it, read by cmdscope from the same
/// out-file and counted alike in the profile, identical in both runs; its
/// difference is real and exact, the common function's exactly zero; and
/// the counted profile has the callers the flame graph draws.
#[test]
fn simulated_counts_equal_callgrind_annotates_and_the_difference_is_exact() {
    if !valgrind() {
        return;
    }
    let Some(bin) = variants() else { return };
    let (a, b) = (format!("{bin} a 3000000"), format!("{bin} b 3000000"));
    let (file, by_hand, _dir) = callgrind_annotate_ir(&[&bin, "b", "3000000"], "extra_work_b");
    let text = std::fs::read_to_string(&file).unwrap();
    let read = cmdscope::profile::simulated::read_out_file(&text).unwrap();
    let ours: u64 = read
        .chains
        .iter()
        .filter(|(names, _)| names.last().is_some_and(|f| f == "extra_work_b"))
        .map(|(_, c)| c.ir)
        .sum();
    assert_eq!(ours, by_hand, "the same out-file, read by cmdscope");
    let dir = tempdir();
    let fg = dir.path().join("fg");
    let started = std::time::Instant::now();
    let p = simulated(&["--flamegraph", fg.to_str().unwrap(), &a, &b]);
    eprintln!(
        "2 x 2 simulated runs took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(p["simulation"]["tool"], "callgrind", "{p:#}");
    let cb = cell(&p, 1);
    assert_eq!(cb["runs"], 2, "the default under --simulate");
    assert!(
        p["runs_raised_from"].is_null(),
        "a deterministic program's counts decide from 2 runs"
    );
    let e = function(cb, "extra_work_b").unwrap();
    assert_eq!(e["self"].as_f64().unwrap(), by_hand as f64, "{e:#}");
    assert!(e["estimated_cycles"].as_f64().unwrap() >= by_hand as f64);
    let main = function(cb, "main").unwrap();
    assert!(
        main["total"].as_f64().unwrap() >= 2.0 * by_hand as f64,
        "main's total holds both works: {main:#}"
    );
    let counted = cb["counted"]["instructions"].as_array().unwrap();
    assert_eq!(
        counted[0], counted[1],
        "a deterministic program's counts repeat"
    );
    let pair = &p["pairs"][0];
    let extra = difference(pair, "extra_work_b");
    assert_eq!(extra["real"], true, "{extra:#}");
    assert_eq!(extra["exact"], true, "{extra:#}");
    assert_eq!(extra["delta"].as_f64().unwrap(), by_hand as f64);
    assert_eq!(extra["delta_ci"][0], extra["delta_ci"][1]);
    let common = difference(pair, "common_work");
    assert_eq!(common["delta"].as_f64().unwrap(), 0.0, "{common:#}");
    assert_eq!(common["real"], false);
    assert_eq!(pair["counted"]["instructions"]["exact"], true);
    assert_eq!(pair["counted"]["instructions"]["verdict"], "slower");
    // Folded stacks in instructions per run: main calls extra_work_b,
    // with its whole count.
    let folded = folded_stacks(&fg, 2);
    let line = folded
        .lines()
        .find(|l| l.contains("main;extra_work_b "))
        .unwrap_or_else(|| panic!("{folded}"));
    assert!(line.ends_with(&format!(" {by_hand}")), "{line}");
    assert!(fg.join("index.html").exists());
    assert!(fg.join("profile.speedscope.json").exists());
    assert!(
        !fg.join("profile.firefox.json").exists(),
        "a timeline, not counts"
    );
    // The terminal says what the counts are and are not.
    let o = ok(cmdscope(&["explain", "--profile", "--simulate", &a, &b]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("user space only"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("extra_work_b") && l.contains("(exact)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&format!("+{by_hand} (exact)")), "{line}");
    assert!(line.ends_with("real"), "{line}");
}

/// The Go pair of the sampled test, counted as it runs: 5,000 os.Setenv
/// calls before `syscall.Exec` of /bin/true, against the same environment
/// handed to exec directly. The work is done before the exec, which
/// Valgrind does not write a tool's counts at: cmdscope has callgrind dump
/// them at `syscall.Exec`. The Go runtime's threads make some counts vary
/// from run to run, so a count that repeats in 2 runs of each cell may do
/// so by chance: the session makes the runs that let a repetition decide
/// at the family-wise level (at most 6 per cell for 30 functions), and
/// the functions of the difference that repeat in all of them are exact.
/// With `--runs 2` they are not called real.
#[test]
fn simulated_go_setenv_before_exec_is_named_exactly_with_the_runs_varying_counts_need() {
    if !valgrind() {
        return;
    }
    let Some(bin) = go_build("setenv") else {
        return;
    };
    let direct = format!("{} direct", bin.display());
    let setenv = format!("{} setenv", bin.display());
    let dir = tempdir();
    let fg = dir.path().join("fg");
    let started = std::time::Instant::now();
    let p = simulated(&["--flamegraph", fg.to_str().unwrap(), &direct, &setenv]);
    let cb = cell(&p, 1);
    eprintln!(
        "Go setenv pair, {} simulated runs per cell: {:.1} s",
        cb["runs"],
        started.elapsed().as_secs_f64()
    );
    let m = p["pairs"][0]["differences"].as_array().unwrap().len();
    let need = cmdscope::analysis::comparison::runs_to_trust_repeats(0.05 / m as f64);
    assert_eq!(p["runs_raised_from"], 2, "{p:#}");
    assert!(
        cb["runs"].as_u64().unwrap() >= need as u64,
        "{m} compared: {need} runs"
    );
    assert!(
        cb["runs"].as_u64().unwrap() <= 6,
        "never more than 30 functions need"
    );
    let own = function(cb, "syscall.Setenv").unwrap_or_else(|| panic!("{cb:#}"))["self"]
        .as_f64()
        .unwrap();
    assert!(own >= 5000.0 * 100.0, "counted before the exec: {own}");
    assert!(
        function(cell(&p, 0), "syscall.Setenv").is_none(),
        "never called directly"
    );
    // What syscall.Setenv calls, from the candidate's folded stacks.
    let folded = folded_stacks(&fg, 2);
    let beneath_setenv = |f: &str| {
        folded.lines().any(|l| {
            let stack = l.rsplit_once(' ').map_or(l, |(s, _)| s);
            stack
                .split_once("syscall.Setenv;")
                .is_some_and(|(_, below)| below.split(';').any(|g| g == f))
        })
    };
    let real = real_differences(&p["pairs"][0]);
    let named: Vec<&(String, f64, bool)> = real
        .iter()
        .filter(|(f, d, exact)| (f == "syscall.Setenv" || beneath_setenv(f)) && *d > 0.0 && *exact)
        .collect();
    assert!(!named.is_empty(), "real differences {real:?} in {p:#}");
    for (f, d, _) in &named {
        // Exact: the same count in both runs of each cell.
        let c = function(cb, f).unwrap();
        let base = function(cell(&p, 0), f).map_or(0.0, |b| b["self"].as_f64().unwrap());
        assert_eq!(c["self"].as_f64().unwrap() - base, *d, "{f}");
    }
    // The terminal says why it made more runs.
    let o = ok(cmdscope(&[
        "explain",
        "--profile",
        "--simulate",
        "--runs",
        "2",
        &direct,
        &setenv,
    ]));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("2 runs per cell"), "{text}");
    let changes = text.split("by function").nth(1).unwrap_or_default();
    assert!(
        !changes.lines().any(|l| l.ends_with(" real")),
        "2 runs of a program whose counts vary call nothing real: {text}"
    );
}

/// The same command twice: every function that repeats has a change of
/// exactly zero, and nothing is called real, for a deterministic C
/// program and for a Go program whose counts partly vary.
#[test]
fn simulated_a_a_has_no_real_difference() {
    if !valgrind() {
        return;
    }
    let Some(bin) = variants() else { return };
    let a = format!("{bin} b 1000000");
    let p = simulated(&[&a, &a]);
    let pair = &p["pairs"][0];
    assert!(real_differences(pair).is_empty(), "{pair:#}");
    for d in pair["differences"].as_array().unwrap() {
        assert_eq!(d["delta"].as_f64().unwrap(), 0.0, "{d:#}");
        assert_eq!(d["exact"], true, "{d:#}");
    }
    assert_eq!(pair["counted"]["instructions"]["verdict"], "no difference");
}

/// The same Go program twice. The Go runtime's threads make its totals
/// vary, and some functions' counts take a few values (by the collector's
/// timing, or where callgrind loses a stack: `main.main` 440,061 in most
/// runs, 331,103 in some): such a count can repeat in both runs of each
/// cell and still differ between the cells (seen once in three A/A
/// sessions when 2 runs a cell decided: `syscall.SlicePtrFromStrings`,
/// -350,177 "exact"). A repetition decides only from the runs that make
/// it unlikely by chance, so nothing is called real.
#[test]
fn simulated_a_a_of_a_go_program_has_no_real_difference() {
    if !valgrind() {
        return;
    }
    if let Some(go) = go_build("setenv") {
        let s = format!("{} setenv", go.display());
        for _ in 0..3 {
            let p = simulated(&[&s, &s]);
            let pair = &p["pairs"][0];
            assert!(real_differences(pair).is_empty(), "{pair:#}");
            eprintln!("Go A/A: {} runs per cell", cell(&p, 0)["runs"]);
        }
    }
}

/// What --simulate cannot do is refused before any run, in one line.
#[test]
fn simulated_profiles_refuse_what_makes_no_sense_for_counts() {
    for (extra, needle) in [
        (&["--frequency", "99"][..], "--frequency"),
        (&["--unwind", "fp"][..], "--unwind"),
        (&["--jit-symbols"][..], "--jit-symbols"),
        (
            &["--firefox-profile", "/tmp/never-written.json"][..],
            "--firefox-profile",
        ),
        (&["--I1", "32768,8"][..], "--I1"),
    ] {
        let mut args = vec!["explain", "--profile", "--simulate"];
        args.extend_from_slice(extra);
        args.push("/nonexistent/never-run");
        let o = cmdscope(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        let said = err
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or_default();
        assert!(said.contains(needle), "{extra:?}: {err}");
    }
    let o = cmdscope(&["explain", "--simulate", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--profile"), "{}", stderr(&o));
    // Two runs suffice for counts, not for samples.
    let o = cmdscope(&["explain", "--profile", "--runs", "2", "true"]);
    one_line_error(&o, "--runs 3 or more");
}
