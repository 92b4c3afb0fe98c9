//! How fast and how long to sample: the kernel's limit on the rate, the
//! raised rate and the looks of a short command's second phase, and
//! whether sampling distorted the runs it measured.
//!
//! A short command (a few milliseconds apart) gets only a handful of
//! samples of its difference per run at the default rate, too few for any
//! function's change to be told from sampling noise. When the default
//! budget leaves the measured CPU difference unexplained, the profile is
//! taken again at a higher rate, within what the kernel allows, with
//! sequential looks (`analysis::sequential`, the rule of
//! `run --until-decided`) until the functions called real account for the
//! difference or the time budget ends.

use std::time::Duration;

use crate::analysis::comparison::{self, Comparison, Design};
use crate::error::{ProfileError, Result};

use super::PairDiff;

/// The raised rate: ten times the default's (not 10,000, for the
/// default's reason: no lockstep with programs' timers).
pub const RAISED_FREQUENCY: u64 = 9_999;
/// The raised rate stays this far below the kernel's limit: the kernel
/// throttles an event that comes near it on a busy machine.
const KERNEL_SHARE: f64 = 0.5;
/// Wall time the second phase may take, runs and analysis together.
pub const BUDGET: Duration = Duration::from_secs(15);
/// The share of the measured CPU difference the functions called real must
/// account for before a pair counts as explained.
pub const EXPLAINED_SHARE: f64 = 0.5;
/// Unsampled runs per cell made to tell whether sampling slowed the runs.
pub const PLAIN_RUNS: usize = 3;
/// Sampled runs slower than unsampled ones by more than this ratio (and
/// so by the engine) are said to be distorted.
pub const DISTORTED_RATIO: f64 = 1.2;

/// The kernel's limit, read once (`sampler::max_sample_rate`).
pub fn kernel_limit() -> Option<u64> {
    super::sampler::max_sample_rate()
}

/// Refuses a rate above what the kernel allows, in one line.
pub fn check_frequency(frequency: u64, limit: Option<u64>) -> Result<()> {
    match limit {
        Some(max) if frequency > max => {
            Err(ProfileError::FrequencyAboveLimit { frequency, max }.into())
        }
        _ => Ok(()),
    }
}

/// The rate of a short command's second phase: `RAISED_FREQUENCY`, or
/// half the kernel's limit when that is lower, never below `from`.
pub fn raised(from: u64, limit: Option<u64>) -> u64 {
    let cap = limit.map_or(u64::MAX, |m| (m as f64 * KERNEL_SHARE) as u64);
    RAISED_FREQUENCY.min(cap).max(from)
}

/// A pair is explained when its CPU difference is not real (nothing to
/// explain) or when the functions called real account for at least
/// `EXPLAINED_SHARE` of it.
pub fn explained(d: &PairDiff) -> bool {
    if !d.cpu.verdict.is_significant() || !d.cpu.shift.is_finite() || d.cpu.shift == 0.0 {
        return true;
    }
    d.explained() / d.cpu.shift >= EXPLAINED_SHARE
}

/// Why the second phase ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// A look found every pair explained.
    Explained,
    /// The time budget ended first.
    Budget,
    /// The last planned look passed without explaining them.
    Runs,
    /// SIGINT or SIGTERM.
    Interrupted,
}

/// What the second phase did, for the report.
#[derive(Clone, Debug)]
pub struct Raised {
    /// The first phase: runs per cell and rate.
    pub first_runs: usize,
    pub first_frequency: u64,
    /// The second phase's rate, its blocks and its wall time.
    pub frequency: u64,
    pub blocks: usize,
    pub seconds: f64,
    pub ended: Ended,
    /// The family-wise level of the analysis shown (the settling look's,
    /// or what the looks left).
    pub level: f64,
}

/// Whether sampling slowed one cell's runs: its sampled and unsampled
/// wall times compared by the engine (unpaired: the unsampled runs are
/// few).
#[derive(Clone, Debug)]
pub struct Distortion {
    pub cell: usize,
    pub sampled: f64,
    pub plain: f64,
}

/// The cells whose sampled runs the engine calls slower than their
/// unsampled ones, by more than `DISTORTED_RATIO`.
pub fn distortions(sampled: &[Vec<f64>], plain: &[Vec<f64>]) -> Vec<Distortion> {
    let settings = comparison::Settings {
        family: sampled.len().max(1),
        ..comparison::Settings::new(super::ALPHA, comparison::DEFAULT_PRECISION)
    };
    sampled
        .iter()
        .zip(plain)
        .enumerate()
        .filter_map(|(cell, (s, p))| {
            if s.is_empty() || p.is_empty() {
                return None;
            }
            let c: Comparison = comparison::compare_values(p, s, Design::Unpaired, &settings);
            let (ms, mp) = (
                crate::stats::median(s).unwrap_or(0.0),
                crate::stats::median(p).unwrap_or(0.0),
            );
            (c.verdict.is_significant() && c.shift > 0.0 && mp > 0.0 && ms / mp > DISTORTED_RATIO)
                .then_some(Distortion {
                    cell,
                    sampled: ms,
                    plain: mp,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_above_the_kernels_limit_is_refused_in_one_line() {
        assert!(check_frequency(1000, Some(1000)).is_ok());
        assert!(check_frequency(100_000, None).is_ok());
        let e = check_frequency(1001, Some(1000)).unwrap_err().to_string();
        assert!(
            e.contains("perf_event_max_sample_rate") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn the_raised_rate_stays_within_half_the_kernels_limit() {
        assert_eq!(raised(999, Some(100_000)), RAISED_FREQUENCY);
        assert_eq!(raised(999, None), RAISED_FREQUENCY);
        assert_eq!(raised(999, Some(4_000)), 2_000);
        // Never below the first phase's rate.
        assert_eq!(raised(999, Some(1_000)), 999);
    }
}
