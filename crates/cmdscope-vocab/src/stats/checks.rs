//! Input checks and refusals shared by every family: finite samples, valid
//! confidence levels, and the `TooFewSamples` refusal with the level it
//! names. Pure: no I/O, no clock.

use super::StatsError;

/// `level_pct` reported by the rank tests when they refuse (see the `stats`
/// module doc).
const TEST_LEVEL_PCT: f64 = 95.0;

pub(super) fn all_finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

pub(super) fn check_finite(xs: &[f64]) -> Result<(), StatsError> {
    if all_finite(xs) {
        Ok(())
    } else {
        Err(StatsError::NonFinite)
    }
}

fn level_pct(level: f64) -> f64 {
    // Round so that 0.95 prints as "95", not "94.99999999999999".
    (level * 100.0 * 1e9).round() / 1e9
}

pub(super) fn too_few(needed: usize, have: usize, level: f64) -> StatsError {
    StatsError::TooFewSamples {
        needed,
        have,
        level_pct: level_pct(level),
    }
}

pub(super) fn too_few_for_test(needed: usize, have: usize) -> StatsError {
    StatsError::TooFewSamples {
        needed,
        have,
        level_pct: TEST_LEVEL_PCT,
    }
}

/// Validates a confidence level and returns alpha = 1 - level.
pub(super) fn check_level(level: f64, have: usize) -> Result<f64, StatsError> {
    if level.is_nan() {
        return Err(StatsError::NonFinite);
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(too_few(usize::MAX, have, level));
    }
    Ok(1.0 - level)
}
