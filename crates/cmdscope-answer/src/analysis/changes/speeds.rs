//! Histories of a machine whose runs fall into two speeds (a shared VM
//! that alternates between a fast and a slow state, run by run): each
//! session's median then jumps with the share of its runs that happened to
//! be slow, which hides a real step of a few percent. The runs of the slow
//! speed are brought to the fast one (divided by the ratio of the two
//! speeds) before anything is summarised or compared, so a session's level
//! is its speed, not its luck.
//!
//! The two speeds are looked for in the pooled runs of the history, each
//! over its session's lower quartile (`analysis::modes::speed_modes`, the
//! rule `compare` uses), so that steps of the level are no speeds; they
//! are the machine's only when most sessions hold runs of both. A session
//! whose runs are all at one level has none above its quartile times the
//! speeds' gap, so a real step of 30 % is left alone. Two speeds closer
//! than the smallest change reported are not looked at: they cannot move
//! a session's median by a change worth reporting, and a count's runs
//! that alternate between two neighbouring values (212 and 213 minor
//! faults) are the count's resolution, not a machine's speeds. A metric
//! known to be a count or a size is not looked at all (`detect::at_one_speed`).

use crate::analysis::modes::{speed_modes, SpeedModes};

/// Pooled runs at most in which the speeds are looked for.
const MAX_POOLED: usize = 4000;

/// Least share of sessions (of those with at least `MIN_RUNS` runs) with
/// runs of both speeds.
const MIXED_SHARE: f64 = 0.3;

/// Fewest runs in a session for it to tell whether both speeds occur.
const MIN_RUNS: usize = 3;

/// Fewest such sessions.
const MIN_SESSIONS: usize = 5;

/// The sessions with their slow runs brought to the fast speed, and the
/// speeds; None when the history's runs do not fall into two speeds that
/// every session shares and that are at least `min_change` apart.
pub fn normalised(sessions: &[Vec<f64>], min_change: f64) -> Option<(Vec<Vec<f64>>, SpeedModes)> {
    // Each session's runs over its lower quartile (a fast run unless three
    // quarters of its runs are slow): the two speeds are then the same
    // two values in every session, whatever level the history is at, so
    // steps of the level do not pass for speeds.
    let mut quartiles = Vec::with_capacity(sessions.len());
    let mut pooled: Vec<f64> = Vec::new();
    for runs in sessions {
        let mut finite: Vec<f64> = runs
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        finite.sort_unstable_by(f64::total_cmp);
        let q = (finite.len() >= MIN_RUNS).then(|| crate::stats::quantile_sorted(&finite, 0.25));
        if let Some(q) = q {
            pooled.extend(finite.iter().map(|v| v / q));
        }
        quartiles.push(q);
    }
    let mut modes = speed_modes(&crate::stats::thin(&pooled, MAX_POOLED))?;
    let ratio = modes.slow / modes.fast;
    if !(ratio.is_finite() && ratio >= 1.0 + min_change.max(0.0) && ratio > 1.0) {
        return None;
    }
    let gap = ratio.sqrt();
    let mut counted = 0;
    let mut mixed = 0;
    let mut out = Vec::with_capacity(sessions.len());
    for (runs, q) in sessions.iter().zip(quartiles) {
        let Some(q) = q else {
            out.push(runs.clone());
            continue;
        };
        let threshold = q * modes.fast * gap;
        counted += 1;
        mixed += usize::from(runs.iter().any(|&v| v > threshold));
        out.push(
            runs.iter()
                .map(|&v| if v > threshold { v / ratio } else { v })
                .collect(),
        );
    }
    let machine = counted >= MIN_SESSIONS && mixed as f64 >= MIXED_SHARE * counted as f64;
    // The speeds as the history's runs have them, not relative.
    let level =
        crate::stats::median_finite(&sessions.iter().flatten().copied().collect::<Vec<_>>())?;
    modes.threshold *= level;
    modes.fast *= level;
    modes.slow *= level;
    machine.then_some((out, modes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use crate::analysis::changes::simulated::normal;

    #[test]
    fn two_speeds_in_every_session_are_the_machines_and_a_large_step_is_not() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut runs = |level: f64, slow: f64| -> Vec<f64> {
            (0..10)
                .map(|_| {
                    let mode = if rng.random::<f64>() < slow { 1.3 } else { 1.0 };
                    level * mode * (0.02 * normal(&mut rng)).exp()
                })
                .collect()
        };
        let two: Vec<Vec<f64>> = (0..40).map(|i| runs(0.1, 0.1 + 0.01 * i as f64)).collect();
        let (out, modes) = normalised(&two, 0.02).expect("two speeds");
        assert!((modes.slow / modes.fast - 1.3).abs() < 0.05);
        // Every run within a few percent of the fast speed.
        assert!(out.iter().flatten().all(|v| (v / 0.1 - 1.0).abs() < 0.1));
        // One speed, then 30 % slower from the 20th session: a step.
        let step: Vec<Vec<f64>> = (0..40)
            .map(|i| runs(if i < 20 { 0.1 } else { 0.13 }, 0.0))
            .collect();
        assert!(normalised(&step, 0.02).is_none());
    }

    /// A count's runs that alternate between two neighbouring values (212
    /// and 213 minor faults in every session) are its resolution: below
    /// the smallest change reported they are no speeds; the same pattern
    /// 30 % apart is a machine's two speeds.
    #[test]
    fn neighbouring_counts_are_no_speeds_and_a_wide_gap_is() {
        let runs: Vec<Vec<f64>> = (0..12)
            .map(|i| {
                (0..5)
                    .map(|j| if (i + j) % 2 == 0 { 212.0 } else { 213.0 })
                    .collect()
            })
            .collect();
        assert!(normalised(&runs, 0.0).is_some());
        assert!(normalised(&runs, 0.01).is_none());
        let wide: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| {
                r.iter()
                    .map(|&v| if v > 212.0 { 275.6 } else { v })
                    .collect()
            })
            .collect();
        assert!(normalised(&wide, 0.01).is_some());
    }
}
