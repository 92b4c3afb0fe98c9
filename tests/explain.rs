//! `cmdscope explain` on real processes: creation methods counted exactly,
//! intermediate shells flagged, environment sizes, writes by directory, a
//! monitor's lines counted, the JSON schema, and the failure paths.

mod common;

use common::*;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `cmdscope explain --json FILE ARGS...` and returns the output and the document.
fn explain(args: &[&str]) -> (Output, Value) {
    explain_with_env(args, &[])
}

fn explain_with_env(args: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
    let dir = tempdir();
    let json = dir.path().join("explain.json");
    let mut cmd = Command::new(bin());
    cmd.arg("explain")
        .arg("--json")
        .arg(&json)
        .args(args)
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run cmdscope");
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
    (out, read_json(&json))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn spawns(doc: &Value) -> (u64, u64, u64) {
    let s = &doc["spawns"];
    (
        s["fork"].as_u64().unwrap(),
        s["vfork"].as_u64().unwrap(),
        s["thread"].as_u64().unwrap(),
    )
}

fn created_by(doc: &Value, method: &str) -> usize {
    doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["created_by"] == method && p["root"] == false)
        .count()
}

fn hint<'a>(doc: &'a Value, kind: &str) -> Option<&'a Value> {
    doc["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == kind)
}

#[test]
fn fork_children_are_counted_as_fork_style() {
    let (out, doc) = explain(&[&format!("{} fork 20", fixture())]);
    assert_eq!(spawns(&doc), (20, 0, 0));
    assert_eq!(created_by(&doc, "fork"), 20);
    // They did not exec: vfork could not replace fork, so no hint about it.
    assert!(hint(&doc, "fork").is_none(), "{}", doc["hints"]);
    let text = stdout(&out);
    assert!(text.contains("fork-style 20, vfork-style 0"), "{text}");
    assert!(text.contains("times are indicative"), "{text}");
}

#[test]
fn posix_spawn_children_are_counted_as_vfork_style() {
    let (_, doc) = explain(&[&format!("{} vfork 20", fixture())]);
    assert_eq!(spawns(&doc), (0, 20, 0));
    assert_eq!(created_by(&doc, "vfork"), 20);
    // Empirically (glibc >= 2.24): posix_spawn is clone3 or clone with
    // CLONE_VM|CLONE_VFORK, reported by the kernel as PTRACE_EVENT_VFORK.
    for d in doc["spawns"]["details"].as_array().unwrap() {
        assert_eq!(d["event"], "PTRACE_EVENT_VFORK", "{d}");
        assert!(d["syscall"] == "clone3" || d["syscall"] == "clone", "{d}");
    }
    assert_eq!(doc["execs"]["count"], 21);
    assert!(doc["intermediate_shells"].as_array().unwrap().is_empty());
}

#[test]
fn fork_then_exec_gets_the_vfork_hint() {
    let (_, doc) = explain(&[&format!("{} forkexec 12", fixture())]);
    assert_eq!(spawns(&doc), (12, 0, 0));
    let h = hint(&doc, "fork").expect("fork hint");
    let message = h["message"].as_str().unwrap();
    assert!(
        message.starts_with("12 processes were created with fork by fixture"),
        "{message}"
    );
    assert!(message.contains("vfork-style creation"), "{message}");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert_eq!(message.contains("(as root)"), root, "{message}");
    assert_eq!(h["numbers"]["processes"], 12.0);
    assert!(h["numbers"]["fork_seconds_mean"].as_f64().unwrap() > 0.0);
}

#[test]
fn threads_are_counted_as_threads() {
    let (_, doc) = explain(&[&format!("{} threads 4", fixture())]);
    assert_eq!(spawns(&doc), (0, 0, 4));
    let threads: Vec<&Value> = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["created_by"] == "thread")
        .collect();
    assert_eq!(threads.len(), 4);
    let root_pid = doc["processes"][0]["pid"].clone();
    for t in threads {
        assert_eq!(t["tgid"], root_pid);
    }
}

#[test]
fn intermediate_shells_are_flagged() {
    let (out, doc) = explain(&[&format!("{} shell 5", fixture())]);
    let shells = doc["intermediate_shells"].as_array().unwrap();
    assert_eq!(shells.len(), 5, "{shells:?}");
    for s in shells {
        assert_eq!(s["script"], "/bin/true");
        assert_eq!(s["then"], "/bin/true");
        assert_eq!(
            Path::new(s["shell"].as_str().unwrap()).file_name().unwrap(),
            "sh"
        );
    }
    let flagged = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["intermediate_shell"] == true)
        .count();
    assert_eq!(flagged, 5);
    let h = hint(&doc, "shell").expect("shell hint");
    let message = h["message"].as_str().unwrap();
    assert!(message.starts_with("every call went through "), "{message}");
    assert!(message.contains("sh -c"), "{message}");
    assert_eq!(h["numbers"]["intermediate_shells"], 5.0);
    assert!(stdout(&out).contains("Intermediate shells: 5"));
}

#[test]
fn environment_size_per_exec_is_reported() {
    // Two variables of 100,000 bytes (one string may not exceed 128 KiB).
    let big = "x".repeat(100_000);
    let (_, doc) = explain_with_env(
        &[&format!("{} vfork 3", fixture())],
        &[("CMDSCOPE_BIG_1", &big), ("CMDSCOPE_BIG_2", &big)],
    );
    let env = &doc["execs"]["env_bytes"];
    assert!(env["max"].as_u64().unwrap() >= 200_000, "{env}");
    assert!(env["min"].as_u64().unwrap() >= 200_000, "{env}");
    for r in doc["execs"]["records"].as_array().unwrap() {
        assert!(r["env_bytes"].as_u64().unwrap() >= 200_000, "{r}");
        assert!(r["env_vars"].as_u64().unwrap() >= 2, "{r}");
    }
    let h = hint(&doc, "environment").expect("environment hint");
    assert!(
        h["message"]
            .as_str()
            .unwrap()
            .starts_with("each exec copied a "),
        "{h}"
    );
    assert!(h["numbers"]["env_bytes_mean"].as_f64().unwrap() >= 200_000.0);
}

#[test]
fn writes_are_attributed_to_directories() {
    let dir = tempdir();
    let target = dir.path().join("out.bin");
    let bytes = 20 * 1024 * 1024;
    let (_, doc) = explain(&[&format!(
        "{} writefile {bytes} {}",
        fixture(),
        target.display()
    )]);
    let dirs = doc["io"]["written_by_directory"].as_array().unwrap();
    // The test's temporary directory is under target/, below the current directory.
    let entry = dirs
        .iter()
        .find(|d| d["directory"] == "./target")
        .unwrap_or_else(|| panic!("no ./target in {dirs:?}"));
    assert_eq!(entry["bytes"], bytes);
    let root = &doc["processes"][0];
    assert!(root["io"]["wchar"].as_u64().unwrap() >= bytes);
    let tmpfs = entry["tmpfs"].as_bool().unwrap();
    assert_eq!(hint(&doc, "tmpfs").is_some(), !tmpfs, "{}", doc["hints"]);
    if let Some(h) = hint(&doc, "tmpfs") {
        let m = h["message"].as_str().unwrap();
        assert!(
            m.starts_with("20.00 MiB written under ./target: try --workdir tmpfs"),
            "{m}"
        );
    }
}

#[test]
fn a_monitor_counts_the_lines_it_prints_during_the_run() {
    let (out, doc) = explain(&[
        "--monitor",
        "sleep 0.5; for i in 1 2 3; do echo Get; echo GetAll; done; sleep 5",
        "--match",
        "^Get$",
        "--match",
        "GetAll",
        "--monitor-wait",
        "0.1",
        &format!("{} sleep 1500", fixture()),
    ]);
    let m = &doc["monitor"];
    assert_eq!(m["patterns"][0]["regex"], "^Get$");
    assert_eq!(m["patterns"][0]["count"], 3, "{m}");
    assert_eq!(m["patterns"][1]["regex"], "GetAll");
    assert_eq!(m["patterns"][1]["count"], 3, "{m}");
    assert_eq!(m["lines"], 6);
    assert_eq!(m["killed_at_end"], true);
    let text = stdout(&out);
    assert!(text.contains("       3  ^Get$"), "{text}");
}

#[test]
fn json_has_the_documented_fields() {
    let (_, doc) = explain(&["--top", "3", &format!("{} forkexec 2", fixture())]);
    for key in [
        "schema",
        "command",
        "note",
        "wall",
        "exit_code",
        "processes",
        "spawns",
        "execs",
        "intermediate_shells",
        "syscalls",
        "io",
        "monitor",
        "hints",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}");
    }
    assert_eq!(doc["schema"], "cmdscope-explain/1");
    for p in doc["processes"].as_array().unwrap() {
        for key in [
            "pid",
            "ppid",
            "argv",
            "created_by",
            "wall",
            "user",
            "sys",
            "exit_code",
        ] {
            assert!(p.get(key).is_some(), "process without {key}: {p}");
        }
    }
    let procs = doc["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 3);
    assert_eq!(procs[1]["argv"][0], "/bin/true");
    assert_eq!(procs[1]["ppid"], procs[0]["pid"]);
    assert_eq!(procs[1]["exit_code"], 0);
    for key in ["fork", "vfork", "thread"] {
        assert!(doc["spawns"][key].is_u64(), "spawns.{key}");
    }
    let syscalls = doc["syscalls"].as_array().unwrap();
    assert!(
        syscalls.len() > 3,
        "all syscalls are in the JSON, not only --top"
    );
    let execve = syscalls
        .iter()
        .find(|s| s["name"] == "execve")
        .expect("execve counted");
    assert_eq!(execve["count"], 3);
    assert!(execve["seconds"].as_f64().unwrap() > 0.0);
    assert!(doc["execs"]["count"] == 3);
    assert!(doc["io"]["totals"]["rchar"].is_u64());
    assert!(doc["monitor"].is_null());
}

#[test]
fn a_failing_command_is_still_explained() {
    let (out, doc) = explain(&[&format!("{} exit 3", fixture())]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(doc["exit_code"], 3);
    assert!(stdout(&out).contains("exit code 3"));
}

/// The row `metric` of the side-by-side table: its cells, split on runs
/// of two or more spaces.
fn table_row(text: &str, metric: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.starts_with(metric) && l[metric.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row '{metric}' in:\n{text}"));
    line[metric.len()..]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

fn difference<'a>(doc: &'a Value, metric: &str) -> &'a Value {
    doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["metric"] == metric)
        .unwrap_or_else(|| panic!("no difference '{metric}'"))
}

#[test]
fn two_variants_show_fork_against_vfork_side_by_side() {
    // The creation method comes from the environment, as Ruby's comes from
    // the uid: one command, two variants, 12 processes each.
    let (out, doc) = explain(&[
        "-L",
        "m",
        "fork,vfork",
        "--env",
        "FIXTURE_SPAWN={m}",
        &format!("{} spawn 12", fixture()),
    ]);
    assert_eq!(doc["schema"], "cmdscope-explain-variants/1");
    let v = doc["variants"].as_array().unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["parameters"]["m"], "fork");
    assert_eq!(v[1]["parameters"]["m"], "vfork");
    assert_eq!(spawns(&v[0]), (12, 0, 0));
    assert_eq!(spawns(&v[1]), (0, 12, 0));
    assert_eq!(created_by(&v[0], "fork"), 12);
    assert_eq!(created_by(&v[1], "vfork"), 12);
    // Each creation timed to its child's exec, per method and creator.
    let to_exec = |x: &Value, method: &str| -> (u64, f64) {
        let t = x["spawns"]["to_exec"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["created_by"] == method)
            .unwrap_or_else(|| panic!("no {method} in {}", x["spawns"]));
        assert!(t["creator"].as_str().unwrap().ends_with("fixture"));
        (t["count"].as_u64().unwrap(), t["seconds"].as_f64().unwrap())
    };
    let (nf, sf) = to_exec(&v[0], "fork");
    let (nv, sv) = to_exec(&v[1], "vfork");
    assert_eq!((nf, nv), (12, 12));
    // Positive, and within the traced wall time of their run.
    assert!(sf > 0.0 && sf < v[0]["wall"].as_f64().unwrap(), "{sf}");
    assert!(sv > 0.0 && sv < v[1]["wall"].as_f64().unwrap(), "{sv}");

    let d = difference(&doc, "processes fork-style");
    assert_eq!(d["reference_value"], 12.0);
    assert_eq!(d["value"], 0.0);
    assert_eq!(d["difference"], -12.0);
    assert_eq!(
        difference(&doc, "processes vfork-style")["difference"],
        12.0
    );

    let h = doc["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "fork")
        .expect("a hint about the creation method");
    let msg = h["message"].as_str().unwrap();
    assert!(
        msg.contains("as m = fork, fixture created 12 processes with fork")
            && msg.contains("as m = vfork, fixture created 12 with vfork"),
        "{msg}"
    );
    assert_eq!(h["numbers"]["fork_processes"], 12.0);
    assert_eq!(h["numbers"]["vfork_processes"], 12.0);
    let each = h["numbers"]["fork_seconds_each"].as_f64().unwrap();
    assert!((each - sf / 12.0).abs() < 1e-9, "{each} vs {sf}");

    // The terminal: one column per variant, then the difference.
    let text = stdout(&out);
    assert!(text.contains("A  m = fork: "), "{text}");
    assert!(text.contains("B  m = vfork: "), "{text}");
    assert_eq!(table_row(&text, "processes fork-style"), ["12", "0", "-12"]);
    assert_eq!(
        table_row(&text, "processes vfork-style"),
        ["0", "12", "+12"]
    );
    assert!(text.contains(msg), "{text}");
}

#[test]
fn user_variants_differ_in_creation_method_like_ruby() {
    // Ruby forks as root and vforks otherwise; the fixture does the same
    // with FIXTURE_SPAWN=uid. The variant is the user the command runs as.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: --user needs root");
        return;
    }
    let Some(f) = fixture_for_any_user() else {
        return;
    };
    let (out, doc) = explain(&[
        "-L",
        "u",
        "root,nobody",
        "--user",
        "{u}",
        "--env",
        "FIXTURE_SPAWN=uid",
        &format!("{} spawn 8", f.path),
    ]);
    let v = doc["variants"].as_array().unwrap();
    assert_eq!(spawns(&v[0]), (8, 0, 0));
    assert_eq!(spawns(&v[1]), (0, 8, 0));
    let msg = doc["hints"][0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("as u = root, fixture created 8 processes with fork; as u = nobody, fixture created 8 with vfork"),
        "{msg}"
    );
    assert!(stdout(&out).contains(msg));
}

#[test]
fn env_size_variants_differ_by_the_padding_per_exec() {
    let (out, doc) = explain(&[
        "-L",
        "n",
        "0,5000",
        "--env-size",
        "{n}",
        &format!("{} forkexec 2", fixture()),
    ]);
    let v = doc["variants"].as_array().unwrap();
    let vars = |x: &Value| x["execs"]["env_vars_max"].as_u64().unwrap();
    // The same inherited environment plus exactly the padding.
    assert_eq!(vars(&v[1]) - vars(&v[0]), 5000);
    let mean = |x: &Value| x["execs"]["env_bytes"]["mean"].as_f64().unwrap();
    // Each padding variable is "CMDSCOPE_PAD_0000001=" + 32 bytes + NUL: 54 bytes.
    let grown = mean(&v[1]) - mean(&v[0]);
    assert!((grown - 5000.0 * 54.0).abs() < 1.0, "{grown}");
    assert_eq!(
        difference(&doc, "environment variables (max)")["difference"],
        5000.0
    );
    let h = doc["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "environment")
        .expect("an environment hint");
    let msg = h["message"].as_str().unwrap();
    assert!(msg.starts_with("n = 5000 passed a "), "{msg}");
    assert!(msg.contains("; n = 0 passed "), "{msg}");
    // The measured side: what an execve cost in each run, from its syscall row.
    let execve = |x: &Value| {
        let r = x["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "execve")
            .unwrap();
        r["seconds"].as_f64().unwrap() / r["count"].as_f64().unwrap()
    };
    // Equal up to the rounding of the JSON round trip.
    let same = |key: &str, want: f64| {
        let got = h["numbers"][key].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-12 * want, "{key}: {got} vs {want}");
    };
    same("execve_seconds_each_large", execve(&v[1]));
    same("execve_seconds_each_small", execve(&v[0]));
    assert!(stdout(&out).contains(msg));
}

#[test]
fn several_commands_are_several_cells() {
    let (_, doc) = explain(&[
        "-n",
        "forks",
        &format!("{} fork 2", fixture()),
        &format!("{} vfork 3", fixture()),
    ]);
    let v = doc["variants"].as_array().unwrap();
    assert_eq!(v[0]["name"], "forks");
    assert_eq!(v[0]["parameters"], serde_json::json!({}));
    assert_eq!(spawns(&v[0]).0, 2);
    assert_eq!(spawns(&v[1]).1, 3);
}

#[test]
fn variant_conditions_reach_the_traced_command() {
    // --nice, --cpus and --workdir tmpfs are applied in the traced child as
    // `run` applies them; its output (shown) comes before the report.
    let (out, _) = explain(&[
        "--show-output",
        "--workdir",
        "tmpfs",
        "--cpus",
        "0",
        "--nice",
        "3",
        &format!("{} whoami", fixture()),
        &format!("{} where", fixture()),
    ]);
    let text = stdout(&out);
    let mut lines = text.lines();
    let who: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(who[3..], ["3", "0"], "{text}");
    let place = lines.next().unwrap();
    assert!(place.starts_with("tmpfs /"), "{text}");
}

#[test]
fn a_command_that_does_not_exist_is_a_usage_error() {
    let o = cmdscope(&["explain", "/nonexistent/program --flag"]);
    one_line_error(&o, "command not found: /nonexistent/program");
    let o = cmdscope(&["explain", "no-such-program-cmdscope"]);
    one_line_error(&o, "command not found: no-such-program-cmdscope");
}

#[test]
fn an_invalid_regex_is_a_usage_error() {
    let o = cmdscope(&[
        "explain",
        "--monitor",
        "sleep 1",
        "--match",
        "(unclosed",
        "/bin/true",
    ]);
    one_line_error(&o, "--match '(unclosed' is not a valid regular expression");
}

#[test]
fn a_monitor_that_cannot_start_is_a_usage_error() {
    let o = cmdscope(&[
        "explain",
        "--monitor",
        "/nonexistent/monitor --system",
        "--monitor-wait",
        "5",
        "/bin/true",
    ]);
    one_line_error(
        &o,
        "monitor '/nonexistent/monitor --system' failed to start",
    );
}

#[test]
fn ptrace_refused_is_a_clear_error() {
    // A seccomp filter that makes ptrace(2) fail with EPERM, as container
    // runtimes do.
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JEQ_K: u16 = 0x15;
    const BPF_RET_K: u16 = 0x06;
    let filter = [
        libc::sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0, // seccomp_data.nr
        },
        libc::sock_filter {
            code: BPF_JEQ_K,
            jt: 0,
            jf: 1,
            k: libc::SYS_ptrace as u32,
        },
        libc::sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
        libc::sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    let mut cmd = Command::new(bin());
    cmd.args(["explain", "/bin/true"]);
    // SAFETY: only prctl calls between fork and exec; `filter` outlives the spawn.
    unsafe {
        let prog = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr() as *mut libc::sock_filter,
        };
        let addr = &prog as *const libc::sock_fprog as usize;
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    addr as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
        let o = cmd.output().expect("run cmdscope under seccomp");
        one_line_error(&o, "ptrace is not permitted here");
    }
}

#[test]
fn bad_numbers_are_usage_errors() {
    let o = cmdscope(&["explain", "--timeout", "-1", "/bin/true"]);
    one_line_error(&o, "--timeout must be a positive number of seconds");
    let o = cmdscope(&["explain", "--match", "x", "/bin/true"]);
    assert_eq!(o.status.code(), Some(2), "--match needs --monitor");
}

#[test]
fn a_timeout_kills_the_traced_tree() {
    let (out, doc) = explain(&["--timeout", "1", &format!("{} children 3 60000", fixture())]);
    assert_eq!(doc["timed_out"], true);
    assert!(doc["wall"].as_f64().unwrap() < 30.0);
    assert_eq!(doc["processes"].as_array().unwrap().len(), 4);
    assert!(stdout(&out).contains("killed at the timeout"));
}

#[test]
fn a_chain_of_wrapper_scripts_before_the_final_program_gets_the_wrapper_hint() {
    // Two wrapper scripts, each starting 20 processes before exec'ing the
    // next; the final program is /bin/true, which takes next to no time.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    let write = |name: &str, next: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\ni=0\nwhile [ $i -lt 20 ]; do x=$(/bin/true); i=$((i + 1)); done\nexec {next}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    write("wrap2.sh", "/bin/true");
    let first = write("wrap1.sh", dir.path().join("wrap2.sh").to_str().unwrap());
    let (out, doc) = explain(&[first.to_str().unwrap()]);
    let h = hint(&doc, "wrapper").expect("wrapper hint");
    let message = h["message"].as_str().unwrap();
    let n = &h["numbers"];
    let (before, wall, share) = (
        n["seconds_before_final_exec"].as_f64().unwrap(),
        n["wall_seconds"].as_f64().unwrap(),
        n["share_before_final_exec"].as_f64().unwrap(),
    );
    // 40 processes and two scripts before /bin/true, which only exits.
    assert!((0.5..=1.0).contains(&share), "{share}: {message}");
    assert!(before > 0.0 && before <= wall, "{before} of {wall}");
    assert!((share - before / wall).abs() < 1e-9);
    assert_eq!(n["execs_before_final"], 2.0);
    assert!(
        n["processes_before_final_exec"].as_f64().unwrap() >= 40.0,
        "{n}"
    );
    assert!(
        message.contains("wrap1.sh (sh) → wrap2.sh (sh) → true"),
        "{message}"
    );
    assert!(
        message.contains("passed before the final program, true, started"),
        "{message}"
    );
    assert!(
        message.starts_with(&format!("{:.0}% of the wall time", share * 100.0)),
        "{message}"
    );
    assert!(stdout(&out).contains("passed before the final program"));
    // A command that is its own final program has no wrapper.
    let (_, doc) = explain(&[&format!("{} vfork 3", fixture())]);
    assert!(hint(&doc, "wrapper").is_none(), "{}", doc["hints"]);
}

/// A command that starts a daemon and exits: the trace ends when the
/// command does, and the daemon is killed, as `run` kills what a run
/// leaves; so is the daemon a `--monitor` leaves.
#[test]
fn a_daemon_left_by_the_command_or_the_monitor_is_killed_not_waited_for() {
    let dir = tempdir();
    let token = format!("explain-daemon-{}", std::process::id());
    let script = daemon_script(dir.path(), &token);
    let script = script.to_str().unwrap();
    let limit = std::time::Duration::from_secs(60);
    let o = cmdscope_within(&["explain", script], limit);
    assert!(o.status.success(), "{}", stderr(&o));
    // In the tree, killed when the command exited (whether it had got as
    // far as its exec then or not).
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("sig 9"), "{text}");
    let left = left_running(&token);
    assert!(left.is_empty(), "left running: {left:?}");

    let monitor = format!("{script}; exec tail -f /dev/null");
    let o = cmdscope_within(
        &["explain", "--monitor", &monitor, "--match", "x=x", "true"],
        limit,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let left = left_running(&token);
    assert!(left.is_empty(), "left running: {left:?}");
}
