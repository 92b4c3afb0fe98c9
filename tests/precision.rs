//! Timing precision on real processes: tests that assert wall times to a
//! few percent. A test binary of its own, and serialised, so that no other
//! test competes for the two cores while they measure.

mod common;

use common::*;
use std::sync::Mutex;

static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn wall_time_of_a_busy_wait_is_exact() {
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
fn shell_mode_subtracts_interleaved_shell_startup() {
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
    // 20 ms of spinning plus the fixture's and cat's start-up, without sh's;
    // generous above because other tests share the two cores.
    assert!((0.019..0.030).contains(&wall), "corrected wall time {wall}");
    assert_eq!(
        doc["results"].as_array().unwrap().len(),
        1,
        "calibration is not a result"
    );
}
