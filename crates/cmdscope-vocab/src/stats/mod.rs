//! Statistics over samples: pure functions on `&[f64]`, no I/O, no clock.
//!
//! CONTRACT (filled in by the stats work; signatures are fixed because the
//! runner, `compare` and the store call them).
//!
//! Conventions shared by every function here:
//! - Errors are values. Nothing panics, whatever the input: empty slices,
//!   n = 1, all-equal values, NaN/infinity (refused as `NonFinite`, or `None`
//!   where the signature has no error), huge n.
//! - Levels are two-sided confidence levels in (0, 1). A NaN level is
//!   `NonFinite`; a level outside (0, 1) is `TooFewSamples` with
//!   `needed = usize::MAX` (no sample is large enough for a 100% interval).
//! - Rank tests never need a level, but the contract's only "too few" refusal
//!   names one; they report the conventional 95%.
//! - Randomness (bootstrap, pivot sampling, pair subsampling) is always a
//!   `ChaCha8Rng` seeded from a fixed or caller-given seed: same input, same
//!   output, on every machine.
//! - Large inputs stay fast: quantiles come from selection (O(n)), not
//!   sorting; order statistics of the n*m pairwise differences come from an
//!   implicit selection that materialises at most a few million of them; the
//!   bootstrap of a median samples order statistics directly (O(1) per
//!   resample). `examples/stats_bench.rs` times all of it on 10^6 samples.
//!
//! One file per family; this module is their one face (every public item
//! is re-exported here, so callers name `crate::stats::median`):
//! - `descriptive`: selection, quantiles, the median, summaries, MAD;
//! - `distributions`: the normal CDF and quantile, binomial coefficients;
//! - `intervals`: order-statistic median intervals, Hodges-Lehmann;
//! - `rank`: Mann-Whitney and Wilcoxon signed-rank, exact without ties;
//! - `exact`: exact conditional distributions of the rank tests under ties;
//! - `ttest`: paired and Welch t-tests with their intervals;
//! - `resampling`: seeded bootstrap intervals;
//! - `spending`: alpha spending for sequential looks;
//! - `trend`: Mann-Kendall and Theil-Sen;
//! - `outliers`: the robust outlier rule;
//! - `usl`: the Universal Scalability Law fitted to a throughput curve;
//! - `checks`: input checks and refusals shared by all of them.

mod checks;
mod descriptive;
mod distributions;
pub mod exact;
mod intervals;
mod outliers;
mod rank;
mod resampling;
mod spending;
#[cfg(test)]
mod tests;
mod trend;
pub mod ttest;
mod usl;

pub use descriptive::{
    geometric_mean, mean, median, median_finite, median_select, quantile_sorted, relative_range,
    summarize, thin, Summary,
};
pub use distributions::{normal_cdf, normal_quantile};
pub use intervals::{
    hodges_lehmann_estimate, hodges_lehmann_paired, hodges_lehmann_shift, median_ci,
    median_ci_ranks, Estimate,
};
pub use outliers::{modified_z_scores, outliers, ZeroMad};
pub use rank::{mann_whitney, wilcoxon_signed_rank, TestResult};
pub use resampling::{bootstrap_ci, ratio_of_medians, BOOTSTRAP_RESAMPLES};
pub use spending::sequential_alpha;
pub use trend::{trend, Trend, TREND_MIN_N};
pub use usl::{
    fit_usl, usl_throughput, Param, Peak, UslFit, UslOutcome, UslPoint, Withheld, MIN_LEVELS,
};

/// Why a statistic cannot be computed; `Display` is a plain refusal users read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("need at least {needed} samples for a {level_pct}% interval, have {have}")]
    TooFewSamples {
        needed: usize,
        have: usize,
        level_pct: f64,
    },
    #[error("samples contain NaN or infinite values")]
    NonFinite,
    #[error("ratio needs positive values")]
    NonPositive,
}
