//! Verdicts that hold at every duration, on real processes with default
//! settings: a 2x difference comes out "slower" for commands of
//! 5 ms, 50 ms, 0.2 s and 1 s, and identical commands of 0.2 s and 1 s never
//! come out faster or slower. Sessions of slow commands end on the time
//! budget or the minimum run count, so their final analysis must spend the
//! alpha not yet spent; tests/verdicts.rs only covers 8-20 ms commands.
//!
//! Across sessions: two identical back-to-back sessions pass
//! `check --fail-if-slower 5` in at least 19 of 20 trials; on a quiet
//! machine (`quiet_machine_*`) they pass `compare --fail-if-slower 5` too,
//! a 20 % regression fails both, and the ratios of short sleeps are what
//! their durations say.
//!
//! The commands sleep (the fixture's `sleep` mode), so they need no CPU and
//! the sessions can run side by side: the whole binary takes about as long
//! as its slowest session (10 blocks of 1 s + 2 s, about 30 s).

mod common;

use common::*;
use std::path::Path;

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
        // Named apart: identical commands would be one benchmark twice.
        "-n",
        "a",
        a,
        "-n",
        "b",
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

/// The verdict and its direction hold on any machine; the ratio's size is
/// checked where the start-up of a run is known, on a quiet machine (on a
/// busy one a sleeper waits for a CPU when it wakes, which adds the same
/// few milliseconds to both sides and dilutes the ratio of short sleeps:
/// 5 ms against 10 ms measured 1.49 at load 8, not 1.83).
fn twice_as_slow(ms: f64) -> f64 {
    let (v, ratio) = verdict(&sleep(ms), &sleep(2.0 * ms));
    assert_eq!(
        v,
        "slower",
        "{ms} ms against {} ms: ratio {ratio}",
        2.0 * ms
    );
    assert!(ratio > 1.0, "slower with a ratio of {ratio}");
    ratio
}

/// Start-up (~1 ms) dilutes the ratio of short sleeps.
fn assert_ratio_of_twice_as_slow(ms: f64, ratio: f64) {
    let expected = (2.0 * ms + 1.0) / (ms + 1.0);
    assert!(
        (ratio / expected - 1.0).abs() < 0.15,
        "ratio {ratio}, expected about {expected}"
    );
}

#[test]
#[ignore = "needs a quiet machine: on a busy one the wait for a CPU at wake-up dilutes the ratio of short sleeps"]
fn quiet_machine_twice_as_slow_at_5_and_50_ms_has_the_ratio_of_its_sleeps() {
    for ms in [5.0, 50.0] {
        let ratio = twice_as_slow(ms);
        assert_ratio_of_twice_as_slow(ms, ratio);
    }
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
    // A few milliseconds of waiting for a CPU stay within the tolerance here.
    assert_ratio_of_twice_as_slow(200.0, twice_as_slow(200.0));
}

#[test]
fn twice_as_slow_at_1_s() {
    // A few milliseconds of waiting for a CPU stay within the tolerance here.
    assert_ratio_of_twice_as_slow(1000.0, twice_as_slow(1000.0));
}

#[test]
fn identical_at_200_ms() {
    identical(200.0);
}

#[test]
fn identical_at_1_s() {
    identical(1000.0);
}

/// One session of `sleep ms` labelled `label`, recorded in `store` and
/// exported to `json`.
fn session(store: &Path, json: &Path, label: &str, ms: f64) {
    let o = with_store(
        store,
        &[
            "run",
            "--runs",
            "20",
            "--style",
            "none",
            "--label",
            label,
            "-n",
            "work",
            "--export-json",
            json.to_str().unwrap(),
            &sleep(ms),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// (compare's exit code, check's exit code) for `base` against `cand`,
/// both gating at 5 %; check takes the latest session as the current one.
fn gates(store: &Path, base: &Path, cand: &Path) -> (Option<i32>, Option<i32>, String) {
    let c = cmdscope(&[
        "compare",
        "--fail-if-slower",
        "5",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
    ]);
    let k = with_store(
        store,
        &[
            "check",
            "--baseline",
            "branch=main",
            "--fail-if-slower",
            "5",
            "--format",
            "text",
        ],
    );
    let out = format!(
        "{}{}{}{}",
        String::from_utf8_lossy(&c.stdout),
        stderr(&c),
        String::from_utf8_lossy(&k.stdout),
        stderr(&k)
    );
    (c.status.code(), k.status.code(), out)
}

/// Identical back-to-back sessions, 20 times: how many passed compare's
/// gate and check's.
fn identical_trials() -> (usize, usize) {
    let dir = tempdir();
    let store = dir.path().join("gate.db");
    let (base, cand) = (
        dir.path().join("main.json"),
        dir.path().join("feature.json"),
    );
    let (mut compare_passed, mut check_passed) = (0, 0);
    for trial in 0..20 {
        session(&store, &base, "branch=main", 10.0);
        session(&store, &cand, "branch=feature", 10.0);
        let (c, k, out) = gates(&store, &base, &cand);
        assert!(
            matches!(c, Some(0 | 1)) && matches!(k, Some(0 | 1)),
            "{out}"
        );
        compare_passed += usize::from(c == Some(0));
        check_passed += usize::from(k == Some(0));
        if c != Some(0) || k != Some(0) {
            eprintln!("identical trial {trial} failed a gate:\n{out}");
        }
    }
    (compare_passed, check_passed)
}

/// check widens its intervals by the session-to-session variation it
/// estimates from the stored history, so load that comes and goes between
/// sessions is in its intervals and identical sessions pass its gate on a
/// busy machine too.
#[test]
fn identical_sessions_pass_checks_gate() {
    let (_, check_passed) = identical_trials();
    assert!(check_passed >= 19, "check passed {check_passed}/20");
}

/// compare's two files hold no session-to-session variation (its output
/// says so), so on a busy machine, where a 10 ms sleeper waits a few
/// milliseconds longer for a CPU in one session than in the next, its 5 %
/// gate sees a real difference between identical sessions.
#[test]
#[ignore = "needs a quiet machine: compare's intervals hold no session-to-session variation, and load that changes between two sessions is a real difference"]
fn quiet_machine_identical_sessions_pass_both_gates() {
    let (compare_passed, check_passed) = identical_trials();
    assert!(compare_passed >= 19, "compare passed {compare_passed}/20");
    assert!(check_passed >= 19, "check passed {check_passed}/20");
}

/// The power half needs a quiet machine: on a busy one a 10 ms sleeper
/// waits for a CPU when it wakes (10 ms measured as 13.6 ms at load 9 on
/// two CPUs, and 12 ms as 13.4 ms), so two sessions run at different moments
/// differ by more than the +20 % they are meant to show.
#[test]
#[ignore = "needs a quiet machine: a +20 % step of a 10 ms sleep across two sessions is smaller than what a loaded CPU adds to it"]
fn quiet_machine_a_20_percent_regression_fails_both_gates() {
    let dir = tempdir();
    let store = dir.path().join("gate.db");
    let (base, cand) = (
        dir.path().join("main.json"),
        dir.path().join("feature.json"),
    );
    // A history first, so that check estimates the session-to-session
    // variation from it, as after the identical trials above.
    for _ in 0..3 {
        session(&store, &base, "branch=main", 10.0);
        session(&store, &cand, "branch=feature", 10.0);
    }
    // +20 % of the wall time this machine measures for the 10 ms sleeper,
    // start-up included: a fixed 12 ms is +18 % where start-up takes 1 ms
    // but only +15 % where it takes 3 ms (a CI machine measured 13.3 ms).
    let measured_ms = 1e3 * median(&read_json(&base), 0, "time_wall_clock");
    let slower_ms = 10.0 + 0.2 * measured_ms;
    session(&store, &base, "branch=main", 10.0);
    session(&store, &cand, "branch=feature", slower_ms);
    let (c, k, out) = gates(&store, &base, &cand);
    let step = format!("+20 % ({measured_ms:.2} ms against a sleep of {slower_ms:.2} ms)");
    assert_eq!(c, Some(1), "compare must fail a {step} regression: {out}");
    assert_eq!(k, Some(1), "check must fail a {step} regression: {out}");
    assert!(
        out.contains("session-to-session variation"),
        "the output says what the interval holds: {out}"
    );
}
