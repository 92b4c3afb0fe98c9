//! Run variants: environment size, user, working directory,
//! CPUs, niceness and per-operation times, on real processes.

mod common;

use common::*;

fn run_and_read_output(args: &[&str]) -> String {
    let dir = tempdir();
    let out = dir.path().join("out.txt");
    let mut full = vec!["run", "--output", out.to_str().unwrap()];
    full.extend_from_slice(args);
    let o = cmdscope(&full);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    std::fs::read_to_string(&out).unwrap()
}

#[test]
fn env_size_pads_the_childs_environment() {
    let f = fixture();
    let text = run_and_read_output(&[
        "--runs",
        "1",
        "--env-size",
        "5000",
        &format!("{f} env CMDSCOPE_PAD_0004999"),
    ]);
    let count: usize = text.trim().parse().unwrap();
    assert!(count >= 5000, "the child saw {count} variables");
    let text = run_and_read_output(&[
        "--runs",
        "1",
        "--clear-env",
        "--env",
        "ONLY=1",
        &format!("{f} env ONLY"),
    ]);
    assert_eq!(text.trim(), "1", "a cleared environment holds just --env");
}

#[test]
fn env_size_as_a_parameter_is_compared() {
    let (_, doc) = exported(&[
        "run",
        "--runs",
        "8",
        "--style",
        "basic",
        "-L",
        "n",
        "0,20000",
        "--env-size",
        "{n}",
        &format!("{} busy 1", fixture()),
    ]);
    assert_eq!(doc["results"][1]["variant"]["env_size"], 20000);
    let c = doc["comparisons"].as_array().unwrap();
    assert!(c.iter().any(|c| c["metric"] == "time_wall_clock"));
}

#[test]
fn user_runs_the_command_as_that_user() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: --user needs root");
        return;
    }
    let Some(f) = fixture_for_any_user() else {
        return;
    };
    let text = run_and_read_output(&[
        "--runs",
        "1",
        "--user",
        "nobody",
        &format!("{} whoami", f.path),
    ]);
    let uid: u32 = text.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(uid, 65534, "{text}");
    let o = cmdscope(&["run", "--user", "no-such-user-xyz", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such user: no-such-user-xyz"));
}

#[test]
fn workdir_tmpfs_is_a_fresh_memory_directory_per_run() {
    let dir = tempdir();
    let template = dir.path().join("template");
    std::fs::create_dir(&template).unwrap();
    std::fs::write(template.join("input.txt"), "data").unwrap();
    let f = fixture();
    let text = run_and_read_output(&[
        "--runs",
        "3",
        "--workdir",
        "tmpfs",
        "--workdir-template",
        template.to_str().unwrap(),
        &format!("{f} where"),
    ]);
    let lines: Vec<&str> = text.lines().collect();
    // --output FILE is emptied before each run: the last run's line.
    assert_eq!(lines.len(), 1);
    for line in &lines {
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts[0], "tmpfs", "{line}");
        assert_eq!(
            parts[2], "input.txt",
            "only the template, nothing left by earlier runs: {line}"
        );
        assert!(
            !std::path::Path::new(parts[1]).exists(),
            "run directory removed: {line}"
        );
    }
    let on_disk = dir.path().join("runs");
    let text = run_and_read_output(&[
        "--runs",
        "1",
        "--workdir",
        on_disk.to_str().unwrap(),
        &format!("{f} where"),
    ]);
    assert!(text.starts_with("disk "), "{text}");
}

#[test]
fn workdir_that_cannot_be_created_is_a_clear_error() {
    let o = cmdscope(&["run", "--workdir", "/proc/cannot/create", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write '/proc/cannot/create'"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
}

#[test]
fn cpus_and_nice_apply_to_the_command() {
    let f = fixture();
    let text = run_and_read_output(&[
        "--runs",
        "1",
        "--cpus",
        "0",
        "--nice",
        "5",
        &format!("{f} whoami"),
    ]);
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(fields[3], "5", "niceness: {text}");
    assert_eq!(fields[4], "0", "cpus: {text}");
    // Pinning without a fork (posix_spawn path) must not leave the harness pinned.
    let text = run_and_read_output(&["--runs", "2", "--cpus", "0", &format!("{f} whoami")]);
    assert!(
        text.lines()
            .all(|l| l.split_whitespace().nth(4) == Some("0")),
        "{text}"
    );
}

#[test]
fn ops_reports_time_per_operation() {
    let (o, doc) = exported(&[
        "run",
        "--runs",
        "6",
        "--style",
        "basic",
        "--ops",
        "1000",
        &format!("{} busy 10", fixture()),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Per operation:"));
    let per = doc["results"][0]["per_operation"]["time_wall_clock"]["median"]
        .as_f64()
        .unwrap();
    let whole = median(&doc, 0, "time_wall_clock");
    assert!(
        (per * 1000.0 - whole).abs() < 1e-12,
        "{per} x 1000 != {whole}"
    );
}
