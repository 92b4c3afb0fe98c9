//! Verdicts that hold at every duration, on real processes with default
//! settings (issue 9): a 2x difference comes out "slower" for commands of
//! 5 ms, 50 ms, 0.2 s and 1 s, and identical commands of 0.2 s and 1 s never
//! come out faster or slower. Sessions of slow commands end on the time
//! budget or the minimum run count, so their final analysis must spend the
//! alpha not yet spent; tests/verdicts.rs only covers 8-20 ms commands.
//!
//! The commands sleep (the fixture's `sleep` mode), so they need no CPU and
//! the sessions can run side by side: the whole binary takes about as long
//! as its slowest session (10 blocks of 1 s + 2 s, about 30 s).

mod common;

use common::*;

/// Runs `a` (the reference) against `b` with default settings; returns the
/// wall-time comparison's verdict and ratio b/a.
fn verdict(a: &str, b: &str) -> (String, f64) {
    let dir = tempdir();
    let out = dir.path().join("v.json");
    let o = cmdscope(&[
        "run",
        "--style",
        "none",
        "--export-json",
        out.to_str().unwrap(),
        a,
        b,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out);
    let c = doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "time_wall_clock")
        .cloned()
        .unwrap_or_else(|| panic!("no wall-time comparison in {}", doc["comparisons"]));
    (
        c["verdict"].as_str().unwrap().to_string(),
        c["ratio"].as_f64().unwrap_or(f64::NAN),
    )
}

fn sleep(ms: f64) -> String {
    format!("{} sleep {ms}", fixture())
}

fn twice_as_slow(ms: f64) {
    let (v, ratio) = verdict(&sleep(ms), &sleep(2.0 * ms));
    assert_eq!(
        v,
        "slower",
        "{ms} ms against {} ms: ratio {ratio}",
        2.0 * ms
    );
    // Start-up (~1 ms) dilutes the ratio of short sleeps.
    let expected = (2.0 * ms + 1.0) / (ms + 1.0);
    assert!(
        (ratio / expected - 1.0).abs() < 0.15,
        "ratio {ratio}, expected about {expected}"
    );
}

fn identical(ms: f64) {
    let (v, ratio) = verdict(&sleep(ms), &sleep(ms));
    assert!(
        v != "faster" && v != "slower",
        "identical {ms} ms commands came out {v} (ratio {ratio})"
    );
}

#[test]
fn twice_as_slow_at_5_ms() {
    twice_as_slow(5.0);
}

#[test]
fn twice_as_slow_at_50_ms() {
    twice_as_slow(50.0);
}

#[test]
fn twice_as_slow_at_200_ms() {
    twice_as_slow(200.0);
}

#[test]
fn twice_as_slow_at_1_s() {
    twice_as_slow(1000.0);
}

#[test]
fn identical_at_200_ms() {
    identical(200.0);
}

#[test]
fn identical_at_1_s() {
    identical(1000.0);
}
