//! How commands are started: peak memory free of cmdscope's own size, a
//! clean start (signals, mask, descriptors), pinning errors and timeouts
//! that leave nothing behind.

mod common;

use common::*;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// scripts/`name`.c compiled with the system's C compiler: a minimal C
/// parent that cmdscope's readings are compared with. None (test skipped)
/// when there is no C compiler outside CI; in CI it must exist.
fn c_parent(dir: &std::path::Path, name: &str) -> Option<PathBuf> {
    let exe = dir.join(name);
    let source = format!("{}/scripts/{name}.c", env!("CARGO_MANIFEST_DIR"));
    let build = |extra: &[&str]| {
        Command::new("cc")
            .args(["-O2", "-o"])
            .arg(&exe)
            .arg(&source)
            .args(extra)
            .status()
    };
    // Static where a static C library exists: the smallest parent.
    let ok = |r: std::io::Result<std::process::ExitStatus>| matches!(r, Ok(s) if s.success());
    if ok(build(&["-static"])) || ok(build(&[])) {
        return Some(exe);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI needs a C compiler (cc) to build scripts/{name}.c"
    );
    eprintln!("skipped: no working C compiler (cc) to build the reference parent");
    None
}

/// Median ru_maxrss of `runs` runs of `argv` read by the minimal C parent.
fn c_parent_reading(parent: &std::path::Path, runs: usize, argv: &[&str]) -> f64 {
    let o = Command::new(parent)
        .arg(runs.to_string())
        .args(argv)
        .output()
        .expect("run the C parent");
    assert!(o.status.success(), "{}", stderr(&o));
    let values: Vec<f64> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.trim().parse().expect("a number"))
        .collect();
    assert_eq!(values.len(), runs);
    median_of(values)
}

/// I/O counts read as a minimal C parent reads them (scripts/procio.c:
/// the child's own /proc/<pid>/io as a zombie), to the byte: characters
/// read and written by `cat` of a file, and by `dd` writing with fsync
/// (and the bytes it stored at least its data), in
/// runs made back to back from a schedule and in runs made one at a time
/// (a prepare hook between them).
#[test]
fn io_counts_read_like_a_minimal_c_parent() {
    let dir = tempdir();
    let Some(reference) = c_parent(dir.path(), "procio") else {
        return;
    };
    let input = dir.path().join("in.bin");
    let data: Vec<u8> = (0..100_003u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&input, data).unwrap();
    let output = dir.path().join("out.bin");
    let (cat, dd) = ("/bin/cat", "/bin/dd");
    if !std::path::Path::new(dd).exists() || !std::path::Path::new(cat).exists() {
        eprintln!("skipped: no /bin/cat or /bin/dd");
        return;
    }
    let commands = [
        vec![cat.to_string(), input.display().to_string()],
        vec![
            dd.to_string(),
            format!("if={}", input.display()),
            format!("of={}", output.display()),
            "bs=4096".into(),
            "conv=fsync".into(),
            "status=none".into(),
        ],
    ];
    for argv in &commands {
        let o = Command::new(&reference).args(argv).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        let want: Vec<f64> = text
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        for extra in [&[][..], &["--prepare", "true"][..]] {
            let json = dir.path().join("io.json");
            let mut args = vec!["run", "-N", "--runs", "3", "--style", "none"];
            args.extend_from_slice(extra);
            let line = argv.join(" ");
            args.extend(["--export-json", json.to_str().unwrap(), &line]);
            let o = cmdscope(&args);
            assert!(o.status.success(), "{}", stderr(&o));
            let doc = read_json(&json);
            for run in doc["results"][0]["measurements"].as_array().unwrap() {
                let got = |k: &str| run[k]["value"].as_f64().unwrap();
                assert_eq!(
                    got("io_read_chars"),
                    want[0],
                    "{line} {extra:?}: characters read"
                );
                assert_eq!(
                    got("io_write_chars"),
                    want[1],
                    "{line} {extra:?}: characters written"
                );
                // Bytes that reached storage are the file system's to
                // count (blocks, metadata, the journal), not the same in
                // every run: none for cat to /dev/null, at least the data
                // for dd with fsync.
                let stored = got("io_write_bytes");
                if argv[0] == cat {
                    assert_eq!(stored, 0.0, "{line} {extra:?}: bytes written");
                } else {
                    assert!(
                        stored >= 100_003.0,
                        "{line} {extra:?}: bytes written {stored}"
                    );
                }
            }
        }
    }
}

#[test]
fn peak_memory_reads_like_a_minimal_c_parent_and_is_never_inherited() {
    let dir = tempdir();
    let Some(parent) = c_parent(dir.path(), "maxrss") else {
        return;
    };
    let f = fixture();
    let true_bin = if std::path::Path::new("/bin/true").exists() {
        "/bin/true"
    } else {
        "/usr/bin/true"
    };
    let out = dir.path().join("mem.json");
    // Sequential, the big allocation first: a later command must not
    // inherit its peak.
    let o = cmdscope(&[
        "run",
        "--runs",
        "9",
        "--order",
        "sequential",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{f} alloc 100"),
        true_bin,
        &format!("{f} alloc 1"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out);
    let ours = |i| median(&doc, i, "memory_peak_resident");
    let theirs_big = c_parent_reading(&parent, 9, &[&f, "alloc", "100"]);
    let theirs_true = c_parent_reading(&parent, 9, &[true_bin]);
    let theirs_small = c_parent_reading(&parent, 9, &[&f, "alloc", "1"]);
    assert_within(ours(0), theirs_big, 0.05, "100 MiB allocation");
    assert_within(ours(1), theirs_true, 0.20, "/bin/true after 100 MiB");
    assert_within(ours(2), theirs_small, 0.20, "1 MiB allocation");
    // The floor that remains is recorded, and is below what /bin/true needs.
    let floor = doc["session"]["memory_peak_resident_floor"]
        .as_f64()
        .unwrap();
    assert!(
        floor > 0.0 && floor < theirs_true,
        "spawner floor {floor} vs /bin/true {theirs_true}"
    );
    // Above the floor, no reading is marked as bounded by it.
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(shown.contains("Memory (peak RSS):"), "{shown}");
    assert!(!shown.contains('≤'), "{shown}");
}

/// The `hygiene` fixture's report: SigBlk, SigIgn, SigCgt and the fds.
fn hygiene_report(extra: &[&str]) -> String {
    let dir = tempdir();
    let out = dir.path().join("hygiene.txt");
    let mut args = vec!["run", "--runs", "1", "--output", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let cmd = format!("{} hygiene", fixture());
    args.push(&cmd);
    let mut c = Command::new(bin());
    c.args(&args)
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_NO_STORE", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"));
    // cmdscope is started the way a shell starts a background job under
    // `trap '' USR1` with SIGUSR2 blocked: SIGINT and SIGUSR1 ignored,
    // SIGUSR2 blocked. cmdscope handles SIGINT (its child must get the
    // default), not SIGUSR1 (stays ignored, as exec keeps it); the mask is
    // the original one.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            libc::signal(libc::SIGUSR1, libc::SIG_IGN);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR2);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
    let o = c.output().expect("run cmdscope");
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(&out).expect("fixture output")
}

fn field<'a>(report: &'a str, key: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in {report}"))
        .trim()
}

/// Signals this test process inherited as ignored (and passes on to
/// cmdscope), less the ones its own runtime or `hygiene_report` changes.
fn inherited_ignored() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let ign = u64::from_str_radix(field(&status, "SigIgn:"), 16).unwrap();
    // std's Command resets SIGPIPE for its children; SIGINT is set above.
    ign & !(1u64 << (libc::SIGPIPE - 1)) & !(1u64 << (libc::SIGINT - 1))
}

#[test]
fn commands_start_with_default_signals_original_mask_and_no_stray_fds() {
    let bit = |sig: i32| format!("{:016x}", 1u64 << (sig - 1));
    for extra in [&[][..], &["--counters"], &["--timeout", "10"]] {
        let report = hygiene_report(extra);
        assert_eq!(
            field(&report, "SigBlk:"),
            bit(libc::SIGUSR2),
            "mask {extra:?}: {report}"
        );
        // Not SIGPIPE (ignored by cmdscope's runtime) nor SIGINT (handled
        // by cmdscope): only what cmdscope was started with and never
        // touched, SIGUSR1 and whatever this test inherited.
        assert_eq!(
            field(&report, "SigIgn:"),
            format!("{:016x}", inherited_ignored() | 1u64 << (libc::SIGUSR1 - 1)),
            "ignored {extra:?}: {report}"
        );
        assert_eq!(field(&report, "SigCgt:"), "0000000000000000", "{report}");
        assert_eq!(field(&report, "fds:"), "0 1 2", "descriptors {extra:?}");
    }
}

#[test]
fn cpus_that_do_not_exist_are_a_usage_error() {
    // The first CPU this process may not use (on a 2-CPU machine, CPU 2).
    // SAFETY: sched_getaffinity fills a plain cpu_set_t.
    let missing = (0..1024)
        .find(|&c| unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            !libc::CPU_ISSET(c, &set)
        })
        .expect("a CPU outside the allowed set");
    let cpus = missing.to_string();
    for extra in [&[][..], &["--counters"]] {
        let mut args = vec!["run", "--runs", "1", "--cpus", &cpus];
        args.extend_from_slice(extra);
        args.push("true");
        let o = cmdscope(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("CPU {missing} is not available")),
            "{err}"
        );
    }
}

/// 100 timeouts of a command whose sleepers stay in its group, leave it
/// (setsid) and double-fork leave no process behind; with `no_cgroup`,
/// through the /proc scan alone (the path where cgroup v2 is not
/// available), else through the session cgroup where it is.
fn hundred_timeouts_leave_nothing(no_cgroup: bool) {
    let marker = format!("cmdscope-timeout-marker-{}-{no_cgroup}", std::process::id());
    let f = fixture();
    // One child in the group, one that setsids, one that double-forks;
    // all long sleepers carrying the marker. Each run notes in a file that
    // it got as far as starting them all.
    let dir = tempdir();
    let started = dir.path().join("started");
    let script = format!(
        "{f} sleep 77100 {marker} & setsid {f} sleep 77200 {marker} & {f} background {marker} & echo >> {}; wait",
        started.display()
    );
    let o = Command::new(bin())
        .args(["run", "--runs", "100", "--warmup", "0", "--timeout", "0.05"])
        .args(["--style", "none", "-i", &format!("sh -c '{script}'")])
        .env("CMDSCOPE_NO_STORE", "1")
        .env("CMDSCOPE_NO_CGROUP", if no_cgroup { "1" } else { "0" })
        .output()
        .expect("run cmdscope");
    // Every run is killed, so the benchmark fails by design (exit 1, one
    // line saying so); anything else is a real error.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("timed out"), "{}", stderr(&o));
    // Not vacuous: most runs had their whole tree running when killed.
    let runs = std::fs::read_to_string(&started)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(
        runs >= 50,
        "only {runs} of 100 runs started their processes"
    );
    let left = left_running(&marker);
    assert!(left.is_empty(), "{} processes left: {left:?}", left.len());
}

#[test]
fn a_hundred_timeouts_of_setsid_double_forks_leave_nothing() {
    hundred_timeouts_leave_nothing(false);
}

#[test]
fn a_hundred_timeouts_leave_nothing_without_a_cgroup_too() {
    hundred_timeouts_leave_nothing(true);
}

// What runs and hooks leave running: a run's leftovers are killed after
// that run, and said so; a hook's live through the session, and no longer.

/// `sleep 31.<pid><case>`: a sleeper no other test starts.
fn sleeper(case: u32) -> String {
    format!("sleep 31.{}{case} ", std::process::id())
}

fn daemon_left_by_runs(case: u32, extra: &[&str]) {
    let marker = sleeper(case);
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let o = Command::new(bin())
        .args(["run", "--runs", "2", "--style", "none"])
        .args(extra)
        .arg("--export-json")
        .arg(&json)
        .arg(format!("sh -c '(setsid {marker}&); exit 0'"))
        .env("CMDSCOPE_NO_STORE", "1")
        .output()
        .expect("run cmdscope");
    let left = left_running(&marker);
    assert!(left.is_empty(), "{} processes left: {left:?}", left.len());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(&json);
    let warnings = doc["results"][0]["warnings"].to_string();
    assert!(warnings.contains("left 2 processes running"), "{warnings}");
}

#[test]
fn a_daemon_started_by_a_run_that_ends_normally_is_killed_and_reported() {
    daemon_left_by_runs(1, &[]);
}

#[test]
fn a_daemon_left_by_runs_in_the_session_cgroup_is_killed_too() {
    daemon_left_by_runs(2, &["--timeout", "30"]);
}

#[test]
fn a_server_started_by_setup_lives_through_the_runs_and_not_beyond() {
    let marker = sleeper(3);
    let dir = tempdir();
    let pid = dir.path().join("pid");
    let p = pid.display();
    // Every run (and the prepare before it) checks that the server is alive.
    let o = Command::new(bin())
        .args(["run", "--runs", "3", "--style", "none"])
        .arg("--setup")
        .arg(format!("setsid {marker}& echo $! > {p}"))
        .arg("--prepare")
        .arg(format!("kill -0 $(cat {p})"))
        .arg(format!("sh -c 'kill -0 $(cat {p})'"))
        .env("CMDSCOPE_NO_STORE", "1")
        .output()
        .expect("run cmdscope");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("left"), "{}", stderr(&o));
    let left = left_running(&marker);
    assert!(left.is_empty(), "{} processes left: {left:?}", left.len());
}

/// The spawner of the cmdscope process `pid`: its child named
/// `cmdscope-spawn`, once it has started.
fn spawner_of(pid: u32) -> Option<u32> {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(10) {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        for child in children.split_whitespace() {
            let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
            if comm.trim() == "cmdscope-spawn" {
                return child.parse().ok();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

/// Whether process `pid` is gone (or a zombie) within five seconds.
fn gone(pid: u32) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(5) {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat
            .rsplit(')')
            .next()
            .is_none_or(|s| s.trim_start().starts_with('Z'))
        {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[test]
fn a_kill_9_while_the_spawner_makes_a_schedule_leaves_no_process() {
    // Short runs with a fixed count: the spawner makes them from
    // schedules, as the runs' subreaper. Each leaves a sleeper, which the
    // spawner kills after the run, and which must not survive cmdscope.
    let marker = sleeper(4);
    let mut child = Command::new(bin())
        .args(["run", "--runs", "100000", "--style", "none"])
        .arg(format!("sh -c '(setsid {marker}&); exit 0'"))
        .env("CMDSCOPE_NO_STORE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run cmdscope");
    let spawner = spawner_of(child.id()).expect("a spawner");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(gone(spawner), "the spawner outlived cmdscope");
    let left = left_running(&marker);
    assert!(left.is_empty(), "{} processes left: {left:?}", left.len());
}

#[test]
fn a_schedule_ends_at_the_failing_run_as_runs_alone_do() {
    // The 40th run fails: the session stops there, and the spawner, which
    // makes the short runs from schedules, makes no run after it.
    let dir = tempdir();
    let count = dir.path().join("count");
    let c = count.display();
    for alone in ["0", "1"] {
        let _ = std::fs::remove_file(&count);
        let o = Command::new(bin())
            .args(["run", "--runs", "500", "--style", "none"])
            .arg(format!("sh -c 'echo x >> {c}; test $(wc -l < {c}) -lt 40'"))
            .env("CMDSCOPE_NO_STORE", "1")
            .env("CMDSCOPE_NO_SCHEDULE", alone)
            .output()
            .expect("run cmdscope");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("exited with status 1"),
            "{}",
            stderr(&o)
        );
        let lines = std::fs::read_to_string(&count).unwrap().lines().count();
        assert_eq!(lines, 40, "runs made (CMDSCOPE_NO_SCHEDULE={alone})");
    }
}

// The spawner's program: the user's cached copy (spawn/program.rs), or a
// memory file when the copy cannot be used. Which one a session ran is
// read by the measured command itself, from its parent's (the spawner's)
// /proc/<pid>/exe.

/// A one-run session with `cache` as XDG_CACHE_HOME (inside a private
/// mount namespace with `mount` mounted on `cache` first, when given): its
/// output and the program the spawner ran.
fn spawner_exe(cache: &std::path::Path, mount: Option<&str>) -> (std::process::Output, String) {
    let seen = tempdir();
    let seen = seen.path().join("exe");
    let command = format!("sh -c 'readlink /proc/$PPID/exe > {}'", seen.display());
    let bin = bin();
    let session = [
        bin.to_str().unwrap(),
        "run",
        "-N",
        "--no-store",
        "--runs",
        "1",
        "--style",
        "none",
        &command,
    ];
    let mut c = match mount {
        None => {
            let mut c = Command::new(session[0]);
            c.args(&session[1..]);
            c
        }
        Some(options) => {
            let mut c = Command::new("unshare");
            c.args(["-m", "--propagation", "private", "sh", "-c"]);
            c.arg(format!(
                "mount -t tmpfs -o {options} cmdscope-test \"$0\" && exec \"$@\""
            ));
            c.arg(cache).args(session);
            c
        }
    };
    let o = c
        .env("XDG_CACHE_HOME", cache)
        .env("NO_COLOR", "1")
        .output()
        .expect("start the session");
    let exe = std::fs::read_to_string(&seen).unwrap_or_default();
    (o, exe.trim().to_string())
}

fn cached_copies(cache: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cache.join("cmdscope")) else {
        return Vec::new();
    };
    entries.map(|e| e.expect("an entry").path()).collect()
}

const IN_MEMORY: &str = "/memfd:cmdscope-spawner (deleted)";

#[test]
fn the_spawner_runs_from_the_users_cache_written_once_mode_0700() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let cache = tempdir();
    let (o, first) = spawner_exe(cache.path(), None);
    assert!(o.status.success(), "{}", stderr(&o));
    let copies = cached_copies(cache.path());
    assert_eq!(copies.len(), 1, "one copy, no temporary file: {copies:?}");
    let copy = &copies[0];
    assert!(copy
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("spawner-"));
    let meta = std::fs::symlink_metadata(copy).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
    let dir = std::fs::metadata(cache.path().join("cmdscope")).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
    assert_eq!(first, copy.display().to_string());
    // The next session executes the same file, not a new one nor a memory file.
    let (o, second) = spawner_exe(cache.path(), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(second, copy.display().to_string());
    assert_eq!(std::fs::metadata(copy).unwrap().ino(), meta.ino());
}

#[test]
fn a_tampered_copy_is_not_executed_nor_replaced_and_the_session_works() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let cache = tempdir();
    let (o, _) = spawner_exe(cache.path(), None);
    assert!(o.status.success(), "{}", stderr(&o));
    let copy = cached_copies(cache.path()).remove(0);
    let original = std::fs::read(&copy).unwrap();
    let elsewhere = tempdir();
    let real = elsewhere.path().join("program");
    std::fs::write(&real, &original).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The whole program, as cmdscope writes it.
    let put = |p: &std::path::Path| {
        std::fs::write(p, &original).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
    };
    type Tampering<'a> = Box<dyn Fn(&std::path::Path) + 'a>;
    let tamperings: Vec<(&str, Tampering)> = vec![
        (
            "writable by others",
            Box::new(|p| {
                put(p);
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap()
            }),
        ),
        (
            "truncated",
            Box::new(|p| {
                put(p);
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .unwrap()
                    .set_len(original.len() as u64 / 2)
                    .unwrap()
            }),
        ),
        (
            "a link",
            Box::new(|p| std::os::unix::fs::symlink(&real, p).unwrap()),
        ),
        (
            "owned by another user",
            Box::new(|p| {
                put(p);
                std::os::unix::fs::chown(p, Some(65534), None).unwrap();
            }),
        ),
    ];
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    for (what, tamper) in &tamperings {
        if *what == "owned by another user" && !root {
            eprintln!("SKIPPED: only root can give the copy to another user");
            continue;
        }
        std::fs::remove_file(&copy).unwrap();
        tamper(&copy);
        let before = std::fs::symlink_metadata(&copy).unwrap();
        let (o, exe) = spawner_exe(cache.path(), None);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert_eq!(exe, IN_MEMORY, "{what}");
        let after = std::fs::symlink_metadata(&copy).unwrap();
        assert_eq!(
            (before.ino(), before.mode(), before.size(), before.uid()),
            (after.ino(), after.mode(), after.size(), after.uid()),
            "{what}: left as it was"
        );
    }
}

#[test]
fn a_noexec_or_read_only_cache_falls_back_to_a_memory_file() {
    for options in ["noexec", "ro"] {
        let cache = tempdir();
        let (o, exe) = spawner_exe(cache.path(), Some(options));
        let err = stderr(&o);
        if err.contains("unshare") || err.contains("mount:") {
            eprintln!("SKIPPED: cannot mount a {options} tmpfs here: {err}");
            return;
        }
        assert!(o.status.success(), "{options}: {err}");
        assert_eq!(exe, IN_MEMORY, "{options}");
    }
}

#[test]
fn sessions_starting_together_on_an_empty_cache_all_work() {
    let cache = tempdir();
    let sessions: Vec<_> = (0..4)
        .map(|_| {
            let cache = cache.path().to_path_buf();
            std::thread::spawn(move || spawner_exe(&cache, None))
        })
        .collect();
    let exes: Vec<String> = sessions
        .into_iter()
        .map(|s| {
            let (o, exe) = s.join().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            exe
        })
        .collect();
    let copies = cached_copies(cache.path());
    assert_eq!(copies.len(), 1, "one copy, no temporary file: {copies:?}");
    // Each ran the one whole copy: whoever lost the race to rename found
    // the winner's.
    let copy = copies[0].display().to_string();
    assert!(exes.iter().all(|e| *e == copy), "{exes:?}");
}
