//! Statistics over samples: pure functions on `&[f64]`, no I/O, no clock.
//!
//! CONTRACT (filled in by the stats work; signatures are fixed because the
//! runner, `compare` and the store call them).

/// Descriptive summary of one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for n = 1.
    pub stddev: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation, R type 7).
    pub q1: f64,
    pub q3: f64,
    /// Median absolute deviation, unscaled.
    pub mad: f64,
}

/// A point estimate with a confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
}

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

/// None for an empty slice. NaNs must be filtered by the caller.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    todo!()
}

/// Quantile of already sorted data, R type 7 (linear interpolation).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    todo!()
}

/// Distribution-free interval for the median from order statistics.
pub fn median_ci(xs: &[f64], level: f64) -> Result<Estimate, StatsError> {
    todo!()
}

/// Indices of outliers by a robust rule.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    todo!()
}

/// Result of a two-sample or paired rank test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestResult {
    pub statistic: f64,
    pub p_value: f64,
    pub exact: bool,
}

pub fn mann_whitney(a: &[f64], b: &[f64]) -> Result<TestResult, StatsError> {
    todo!()
}

pub fn wilcoxon_signed_rank(d: &[f64]) -> Result<TestResult, StatsError> {
    todo!()
}

pub fn hodges_lehmann_shift(a: &[f64], b: &[f64], level: f64) -> Result<Estimate, StatsError> {
    todo!()
}

pub fn hodges_lehmann_paired(d: &[f64], level: f64) -> Result<Estimate, StatsError> {
    todo!()
}

pub fn ratio_of_medians(
    a: &[f64],
    b: &[f64],
    level: f64,
    seed: u64,
) -> Result<Estimate, StatsError> {
    todo!()
}

pub fn holm(p_values: &[f64]) -> Vec<f64> {
    todo!()
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    pub tau: f64,
    pub p_value: f64,
    pub slope: f64,
}

pub fn trend(xs: &[f64]) -> Result<Trend, StatsError> {
    todo!()
}

pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    todo!()
}

pub fn bootstrap_ci(
    xs: &[f64],
    statistic: &dyn Fn(&[f64]) -> f64,
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Estimate, StatsError> {
    todo!()
}

pub fn sequential_alpha(alpha: f64, looks: usize) -> Vec<f64> {
    todo!()
}
