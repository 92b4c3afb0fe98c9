//! Timing precision on real processes: tests that assert wall times to a
//! few percent. A test binary of its own, and serialised, so that no other
//! test competes for the two cores while they measure.
//!
//! The assertions of exactness need a quiet machine, and are `#[ignore]`d
//! for that reason: with another build beside them, a program that spins
//! for 20 ms has used its share of the CPU and waits for one before it can
//! exit, so the program itself takes longer than 20 ms plus its start-up,
//! and a measurement that is exact shows it. `.ci/run` runs them on their
//! own, one at a time (`cargo test -- --ignored quiet_machine
//! --test-threads=1`). What holds on any
//! machine, a clock that never reads less than the spin and the JSON's
//! shape, is tested by default.

mod common;

use common::*;
use std::sync::Mutex;

static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn no_run_of_a_busy_wait_reads_less_than_the_spin() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempdir();
    let out = dir.path().join("t.json");
    let o = cmdscope(&[
        "run",
        "--runs",
        "10",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{} busy 20", fixture()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out);
    // The fixture spins until 20 ms have passed on the monotonic clock: a
    // run measured shorter would be the harness's error, whatever the load.
    let times = doc["results"][0]["times"].as_array().unwrap();
    assert_eq!(times.len(), 10);
    for t in times {
        let t = t.as_f64().unwrap();
        assert!(t >= 0.020, "a 20 ms busy-wait measured as {t}");
    }
    // hyperfine-compatible flat fields are there too.
    assert_eq!(
        doc["results"][0]["measurements"].as_array().unwrap().len(),
        10
    );
    assert!(doc["results"][0]["measurements"][0]["time_wall_clock"]["value"].is_number());
}

#[test]
#[ignore = "needs a quiet machine: asserts a 20 ms wall time to 3 %, which a loaded CPU adds to the program itself"]
fn quiet_machine_wall_time_of_a_busy_wait_is_exact() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // The same program spinning 0 and 20 ms, interleaved: the difference of
    // medians isolates the busy-wait from process start-up.
    let dir = tempdir();
    let out = dir.path().join("t.json");
    let f = fixture();
    let o = cmdscope(&[
        "run",
        "--runs",
        "15",
        "--warmup",
        "2",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{f} busy 0"),
        &format!("{f} busy 20"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out);
    let startup = median(&doc, 0, "time_wall_clock");
    let busy = median(&doc, 1, "time_wall_clock");
    assert!(busy >= 0.020, "a 20 ms busy-wait measured as {busy}");
    assert_within(busy - startup, 0.020, 0.03, "20 ms busy-wait");
    let user = median(&doc, 1, "time_user");
    assert!(user > 0.015, "a busy-wait is user time: {user}");
    // hyperfine-compatible flat fields are there too.
    assert_eq!(doc["results"][1]["times"].as_array().unwrap().len(), 15);
    assert_eq!(
        doc["results"][1]["measurements"].as_array().unwrap().len(),
        15
    );
    assert!(doc["results"][1]["measurements"][0]["time_wall_clock"]["value"].is_number());
}

#[test]
#[ignore = "needs a quiet machine: asserts the shell-corrected wall time of a 20 ms spin to a few milliseconds"]
fn quiet_machine_shell_mode_subtracts_interleaved_shell_startup() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempdir();
    let out = dir.path().join("sh.json");
    let o = cmdscope(&[
        "run",
        "-S",
        "sh",
        "--runs",
        "10",
        "--export-json",
        out.to_str().unwrap(),
        &format!("{} busy 20 | cat", fixture()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out);
    let overhead = doc["session"]["shell_overhead"]["time_wall_clock"]
        .as_f64()
        .unwrap();
    assert!(overhead > 0.0 && overhead < 0.02, "sh start-up {overhead}");
    assert_eq!(doc["session"]["shell_overhead"]["runs"], 10);
    let wall = median(&doc, 0, "time_wall_clock");
    // 20 ms of spinning plus the fixture's and cat's start-up, without sh's.
    assert!((0.019..0.030).contains(&wall), "corrected wall time {wall}");
    assert_eq!(
        doc["results"].as_array().unwrap().len(),
        1,
        "calibration is not a result"
    );
}
