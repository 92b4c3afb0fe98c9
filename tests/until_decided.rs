//! `run --until-decided`, `--max-time` and `--isolate` on real processes.
//! Nothing here asserts a timing to better than a factor of two, so the
//! tests hold with a build running beside them.

mod common;

use common::*;
use std::time::Instant;

/// `run --style none --until-decided` with `args`: the JSON it exported.
fn until_decided(args: &[&str]) -> serde_json::Value {
    exported(&[&["run", "--style", "none", "--until-decided"], args].concat()).1
}

#[test]
fn a_clear_difference_stops_at_a_look_long_before_the_time_budget() {
    let start = Instant::now();
    let doc = until_decided(&["--max-time", "60", "sleep 0.01", "sleep 0.03"]);
    let took = start.elapsed().as_secs_f64();
    let c = &doc["comparisons"][0];
    assert_eq!(c["metric"], "time_wall_clock");
    assert_eq!(c["verdict"], "slower", "{c}");
    assert_eq!(doc["session"]["stop_reason"], "precision", "{doc}");
    // 20 blocks of 40 ms settle a 3x difference: about a second, and far
    // less than the budget even on a loaded machine.
    assert!(took < 30.0, "took {took} s");
}

#[test]
fn the_time_budget_ends_a_session_that_cannot_decide() {
    let start = Instant::now();
    // Identical commands cannot be told apart to ±0.01 % in 2 s: the
    // budget ends the session, whatever the verdict.
    let doc = until_decided(&[
        "--max-time",
        "2",
        "--precision",
        "0.01",
        "-n",
        "a",
        "sleep 0.005",
        "-n",
        "b",
        "sleep 0.005",
    ]);
    let took = start.elapsed().as_secs_f64();
    assert_eq!(doc["session"]["stop_reason"], "time_budget", "{doc}");
    let runs = doc["results"][0]["times"].as_array().unwrap().len();
    // 2 s of 5 ms runs, two per block: at most 200 blocks however fast
    // the machine, and more than the default session's 10.
    assert!(runs > 10 && runs <= 200, "{runs} runs");
    assert!((2.0..20.0).contains(&took), "took {took} s");
}

/// In concurrency mode the looks count batches: a twofold throughput
/// difference stops at the first look that can decide it (40 batches per
/// cell with `--until-decided`; see analysis::concurrency's simulation),
/// long before the budget, and says which has the higher throughput.
#[test]
fn concurrency_mode_stops_a_twofold_throughput_difference_at_a_look() {
    let start = Instant::now();
    let doc = until_decided(&[
        "--max-time",
        "120",
        "--concurrency",
        "2",
        "sleep 0.02",
        "sleep 0.04",
    ]);
    let took = start.elapsed().as_secs_f64();
    assert_eq!(doc["session"]["stop_reason"], "precision", "{doc}");
    let c = &doc["throughput_comparisons"][0];
    // The engine compares seconds per completion: "slower" is the lower
    // throughput, of 'sleep 0.04'.
    assert_eq!(c["verdict"], "slower", "{c}");
    for r in 0..2 {
        assert_eq!(doc["results"][r]["throughput"]["batches"], 40, "{doc}");
    }
    // 40 batches of 8 instances of at most 40 ms, two at once: about 11 s
    // on a quiet machine.
    assert!(took < 100.0, "took {took} s");
}

/// Identical commands in concurrency mode: the looks over batches do not
/// call them different (at alpha 0.001, so that this one session is a
/// fair test of it); the session ends on its budget or on "no
/// difference", and says so.
#[test]
fn concurrency_mode_does_not_stop_identical_commands_as_different() {
    let doc = until_decided(&[
        "--max-time",
        "8",
        "--alpha",
        "0.001",
        "--concurrency",
        "2",
        "-n",
        "a",
        "sleep 0.01",
        "-n",
        "b",
        "sleep 0.01",
    ]);
    let c = &doc["throughput_comparisons"][0];
    assert_eq!(c["significant"], false, "{c}");
    let reason = doc["session"]["stop_reason"].as_str().unwrap_or_default();
    match reason {
        "time_budget" => {}
        "precision" => assert_eq!(c["verdict"], "no difference", "{c}"),
        other => panic!("stopped for {other}: {doc}"),
    }
}

#[test]
fn until_decided_refuses_what_it_cannot_do() {
    let o = cmdscope(&["run", "--until-decided", "--runs", "5", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = cmdscope(&["run", "--max-time", "5", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    one_line_error(
        &cmdscope(&["run", "--until-decided", "--max-time", "0", "true"]),
        "--max-time must be a positive number of seconds",
    );
    one_line_error(
        &cmdscope(&[
            "run",
            "--until-decided",
            "--order",
            "sequential",
            "true",
            "true",
        ]),
        "--until-decided needs interleaved order",
    );
}

/// The CPUs cmdscope may use, from the kernel's list of this process.
fn allowed_cpus(status: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim()
        .to_string()
}

#[test]
fn isolate_runs_the_command_on_cpus_cmdscope_does_not_use() {
    let mine = std::fs::read_to_string("/proc/self/status").unwrap();
    let cpus = cmdscope::run::isolate::available().unwrap();
    let dir = tempdir();
    let status = dir.path().join("status");
    let o = cmdscope(&[
        "run",
        "--isolate",
        "--runs",
        "2",
        "--output",
        status.to_str().unwrap(),
        "cat /proc/self/status",
    ]);
    if cpus.len() < 2 {
        one_line_error(&o, "--isolate needs at least two CPUs");
        return;
    }
    let o = ok(o);
    let err = stderr(&o);
    let rest: Vec<String> = cpus[1..].iter().map(|c| c.to_string()).collect();
    assert!(
        err.contains(&format!(
            "isolated: the commands run on CPU {}, cmdscope and its helpers on CPU {}",
            rest.join(","),
            cpus[0]
        )),
        "{err}"
    );
    // The command saw only the others; the test process is unchanged.
    let seen = allowed_cpus(&std::fs::read_to_string(&status).unwrap());
    let expected = if rest.len() == 1 {
        rest[0].clone()
    } else {
        format!("{}-{}", rest[0], rest[rest.len() - 1])
    };
    if cpus[1..].windows(2).all(|w| w[1] == w[0] + 1) {
        assert_eq!(seen, expected);
    }
    assert!(!seen.split(',').any(|c| c == cpus[0].to_string()), "{seen}");
    assert_eq!(
        allowed_cpus(&mine),
        allowed_cpus(&std::fs::read_to_string("/proc/self/status").unwrap())
    );
}

#[test]
fn isolate_needs_two_cpus() {
    // taskset leaves cmdscope one CPU.
    let cpu = cmdscope::run::isolate::available().unwrap()[0].to_string();
    let o = std::process::Command::new("taskset")
        .args(["-c", &cpu])
        .arg(bin())
        .args(["run", "--isolate", "--runs", "2", "true"])
        .env("CMDSCOPE_NO_STORE", "1")
        .output();
    let Ok(o) = o else {
        eprintln!("no taskset on this machine: skipped");
        return;
    };
    one_line_error(
        &o,
        "--isolate needs at least two CPUs available to cmdscope, have 1",
    );
}
