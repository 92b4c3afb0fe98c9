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

pub mod exact;
pub mod ttest;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::function::erf::erfc_inv;
use statrs::function::gamma::ln_gamma;
use std::f64::consts::{LN_2, PI, SQRT_2};

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

/// Resamples drawn by `ratio_of_medians`, and by `bootstrap_ci` when asked
/// for 0. 2000 puts the Monte Carlo error of a 95% percentile bound well
/// below the sampling error of any benchmark-sized sample.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Minimum length accepted by `trend`. Below 4 there are at most 3 pairs and
/// the Mann-Kendall statistic has 4 possible values; even at n = 4 the
/// smallest possible two-sided p-value is about 0.09 (0.083 exact), so a
/// trend is first detectable at 5% with n = 5.
pub const TREND_MIN_N: usize = 4;

/// `level_pct` reported by the rank tests when they refuse (see module doc).
const TEST_LEVEL_PCT: f64 = 95.0;

/// Exact Mann-Whitney distribution when the smaller sample has at most this
/// many values (R uses exact below 50 per sample) ...
const MW_EXACT_MAX_SMALLER: usize = 50;
/// ... and the dynamic programme costs at most this many steps
/// (min(m, n) * m * n / 2); 50 vs 50 costs 62,500.
const MW_EXACT_MAX_WORK: usize = 2_000_000;
/// Exact signed-rank distribution up to this many non-zero differences.
const SIGNED_RANK_EXACT_MAX: usize = 50;
/// With ties, the exact conditional distribution (`exact.rs`) is used up
/// to this many non-zero differences (at most about 500,000 steps), and
/// the tie-corrected normal approximation above, where the statistic is a
/// sum of over 100 independent symmetric terms.
const SIGNED_RANK_TIES_EXACT_MAX: usize = 100;
/// With ties, Mann-Whitney uses the exact conditional distribution while
/// its dynamic programme costs at most this many steps (e.g. 50 vs 50,
/// 20 vs 230), the tie-corrected normal approximation above.
const MW_TIES_EXACT_MAX_WORK: f64 = 1e8;

/// Theil-Sen uses every pair up to this n (about 2 million pairs) ...
const THEIL_SEN_ALL_PAIRS_MAX_N: usize = 2000;
/// ... and this many seeded random pairs above it.
const THEIL_SEN_SAMPLED_PAIRS: usize = 1 << 20;
const THEIL_SEN_SEED: u64 = 0x7e11_5e17;

/// Seed of the pivot sampling in `select_implicit`. The result is exact
/// whatever the seed; the seed only makes the running time reproducible.
const SELECT_SEED: u64 = 0x5e1e_c7ed;

/// Relative slack when comparing an exact tail mass with alpha, so that a
/// tail equal to alpha in exact arithmetic is not lost to rounding.
const REL_TOL: f64 = 1e-10;

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

fn all_finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

fn check_finite(xs: &[f64]) -> Result<(), StatsError> {
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

fn too_few(needed: usize, have: usize, level: f64) -> StatsError {
    StatsError::TooFewSamples {
        needed,
        have,
        level_pct: level_pct(level),
    }
}

fn too_few_for_test(needed: usize, have: usize) -> StatsError {
    StatsError::TooFewSamples {
        needed,
        have,
        level_pct: TEST_LEVEL_PCT,
    }
}

/// Validates a confidence level and returns alpha = 1 - level.
fn check_level(level: f64, have: usize) -> Result<f64, StatsError> {
    if level.is_nan() {
        return Err(StatsError::NonFinite);
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(too_few(usize::MAX, have, level));
    }
    Ok(1.0 - level)
}

/// lo + frac (hi - lo), falling back to the weighted form when the
/// difference overflows (values near +-f64::MAX).
fn lerp(lo: f64, hi: f64, frac: f64) -> f64 {
    if frac == 0.0 || lo == hi {
        return lo;
    }
    let v = lo + frac * (hi - lo);
    if v.is_finite() {
        v
    } else {
        (1.0 - frac) * lo + frac * hi
    }
}

fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// k-th smallest (0-based) by selection, O(n). Caller ensures k < len.
fn select(buf: &mut [f64], k: usize) -> f64 {
    let (_, v, _) = buf.select_nth_unstable_by(k, f64::total_cmp);
    *v
}

/// Type-7 quantiles of unsorted, non-empty data by selection instead of a
/// full sort: each quantile is one O(n) selection plus an O(n) scan for its
/// right neighbour. `qs` must be ascending; `buf` is reordered.
fn quantiles_select(buf: &mut [f64], qs: &[f64]) -> Vec<f64> {
    let n = buf.len();
    let mut out = Vec::with_capacity(qs.len());
    // Everything before `base` is <= everything from `base` on, so later
    // (larger) quantiles only need to search buf[base..].
    let mut base = 0;
    for &q in qs {
        let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
        let lo = (h.floor() as usize).clamp(base, n - 1);
        let frac = h - lo as f64;
        let (_, v, right) = buf[base..].select_nth_unstable_by(lo - base, f64::total_cmp);
        let x_lo = *v;
        let value = if frac > 0.0 && !right.is_empty() {
            let x_hi = right.iter().copied().fold(f64::INFINITY, f64::min);
            lerp(x_lo, x_hi, frac)
        } else {
            x_lo
        };
        out.push(value);
        base = lo;
    }
    out
}

/// Median of a non-empty buffer of finite values, reordering it (selection,
/// not a full sort). The one median of the crate: `median` and every
/// caller that already owns a scratch buffer use it.
pub fn median_select(buf: &mut [f64]) -> f64 {
    quantiles_select(buf, &[0.5])[0]
}

/// Median (mean of the two middle values for an even count); None when
/// `xs` is empty or holds a non-finite value, like `summarize`.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || !all_finite(xs) {
        return None;
    }
    Some(median_select(&mut xs.to_vec()))
}

fn ln_choose(n: usize, k: usize) -> f64 {
    ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0)
}

fn choose_f64(n: usize, k: usize) -> f64 {
    (1..=k).fold(1.0, |c, i| c * (n - k + i) as f64 / i as f64)
}

/// Two-sided p-value of a statistic with the given null mean and variance
/// under the normal approximation, with a continuity correction of
/// `correction` (half the statistic's step: 1/2 for U and V, 1 for the
/// Mann-Kendall S, which moves in steps of 2).
fn normal_two_sided_p(stat: f64, mean: f64, var: f64, correction: f64) -> f64 {
    if var.is_nan() || var <= 0.0 {
        // No variability under the null (e.g. every value tied): no evidence.
        return 1.0;
    }
    let dev = ((stat - mean).abs() - correction).max(0.0);
    (2.0 * normal_cdf(-dev / var.sqrt())).min(1.0)
}

/// Number of leading entries of a cumulative distribution with
/// 2 * cdf <= alpha, i.e. the 1-based rank k of the lower bound of the
/// interval [X_(k), X_(N+1-k)]; None when even the extremes are not enough.
fn lower_rank_from_cdf(cdf: &[f64], alpha: f64) -> Option<usize> {
    let k = cdf.partition_point(|&c| 2.0 * c <= alpha * (1.0 + REL_TOL));
    (k > 0).then_some(k)
}

/// Lower rank k from the normal approximation of a rank statistic with
/// `total` possible values and null standard deviation `sd`:
/// P(W <= k - 1) ~ Phi((k - 1/2 - total/2) / sd) <= alpha / 2.
fn lower_rank_normal(total: f64, sd: f64, alpha: f64) -> Option<usize> {
    let z = normal_quantile(1.0 - alpha / 2.0);
    let k = (total / 2.0 + 0.5 - z * sd).floor();
    if k >= 1.0 {
        Some((k as usize).min(((total + 1.0) / 2.0) as usize))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Normal distribution
// ---------------------------------------------------------------------------

/// Complementary error function to about 1e-15 relative error.
///
/// Written here because statrs 0.18's erf/erfc carry interval constants
/// truncated to 10 digits (about 1e-10 relative error; statrs PR #412),
/// which showed up as 1e-12 mismatches against reference p-values. For x < 1.5:
/// erf(x) = 2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1) / (2n+1)!!, a series of
/// positive terms (no cancellation); for x >= 1.5, where 1 - erf would
/// cancel, Laplace's continued fraction
/// erfc(x) = e^(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
/// evaluated by the modified Lentz method (at most about 90 terms).
fn erfc_precise(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc_precise(-x);
    }
    let frac_2_sqrt_pi = 2.0 / PI.sqrt();
    if x < 1.5 {
        let x2 = x * x;
        let (mut term, mut sum) = (x, x);
        for n in 1..200 {
            term *= 2.0 * x2 / (2 * n + 1) as f64;
            sum += term;
            if term < sum * 1e-17 {
                break;
            }
        }
        return 1.0 - frac_2_sqrt_pi * (-x2).exp() * sum;
    }
    if x > 27.5 {
        return 0.0; // below the smallest subnormal
    }
    const TINY: f64 = 1e-300;
    let (mut f, mut c, mut d) = (x, x, 0.0f64);
    for k in 1..1000 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        if d == 0.0 {
            d = TINY;
        }
        c = x + a / c;
        if c == 0.0 {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / (PI.sqrt() * f)
}

/// Standard normal CDF, with relative accuracy in the far tails (via erfc,
/// not 1 - erf): about 1e-15 near the centre, 1e-14 at |x| = 10.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc_precise(-x / SQRT_2)
}

/// Standard normal quantile (inverse CDF); -inf at 0, +inf at 1, NaN for NaN.
/// statrs' inverse gives the start; one Newton step on the lower tail with
/// the accurate CDF removes its error (the step is quadratic, so one is
/// enough from ~1e-10).
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() {
        return f64::NAN;
    } else if p <= 0.0 {
        return f64::NEG_INFINITY;
    } else if p >= 1.0 {
        return f64::INFINITY;
    }
    // Work in the lower tail, where p is represented with full relative
    // precision (1 - p is exact for p >= 1/2).
    let (q, sign) = if p > 0.5 { (1.0 - p, -1.0) } else { (p, 1.0) };
    let mut x = -SQRT_2 * erfc_inv(2.0 * q);
    let density = (-0.5 * x * x).exp() / (2.0 * PI).sqrt();
    if density > 0.0 && x.is_finite() {
        x -= (normal_cdf(x) - q) / density;
    }
    sign * x
}

// ---------------------------------------------------------------------------
// Descriptive statistics
// ---------------------------------------------------------------------------

/// None for an empty slice, and for a slice holding NaN or infinity (filter
/// those first: a summary of them would be meaningless, not an error to
/// panic on). Quantiles and MAD come from O(n) selection, not a sort.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || !all_finite(xs) {
        return None;
    }
    let n = xs.len();
    let nf = n as f64;
    let (min, max) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    let (mean, stddev) = if min == max {
        // All equal: report the value and 0 exactly, not rounding noise.
        (min, 0.0)
    } else {
        let sum: f64 = xs.iter().sum();
        // Dividing first avoids overflow when values are near f64::MAX.
        let mean = if sum.is_finite() {
            sum / nf
        } else {
            xs.iter().map(|x| x / nf).sum()
        };
        // Two-pass variance: no cancellation of the kind sum(x^2) - n*mean^2 has.
        let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
        let sd = if n > 1 { (ss / (nf - 1.0)).sqrt() } else { 0.0 };
        (mean, sd)
    };
    let mut buf = xs.to_vec();
    let q = quantiles_select(&mut buf, &[0.25, 0.5, 0.75]);
    let median = q[1];
    for (b, &x) in buf.iter_mut().zip(xs) {
        *b = (x - median).abs();
    }
    let mad = median_select(&mut buf);
    Some(Summary {
        n,
        mean,
        stddev,
        median,
        min,
        max,
        q1: q[0],
        q3: q[2],
        mad,
    })
}

/// Quantile of already sorted data, R type 7 (linear interpolation):
/// h = (n - 1) q, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
/// NaN for empty data or a NaN q; q is clamped to [0, 1].
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || q.is_nan() {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(n - 1);
    let frac = h - lo as f64;
    if frac > 0.0 && lo + 1 < n {
        lerp(sorted[lo], sorted[lo + 1], frac)
    } else {
        sorted[lo]
    }
}

/// Geometric mean, exp(mean(ln x)). None for empty input or any value that
/// is not finite and strictly positive (the logarithm is undefined there).
pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
        return None;
    }
    let mean_ln = xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64;
    Some(mean_ln.exp())
}

// ---------------------------------------------------------------------------
// Median interval (sign test)
// ---------------------------------------------------------------------------

/// For B ~ Binomial(n, 1/2): the largest j with 2 P(B <= j) <= alpha, and
/// that two-sided tail mass. O(sqrt(n log(1/alpha))) work for any n.
fn sign_test_cut(n: usize, alpha: f64) -> Option<(usize, f64)> {
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    if n > 1_000_000_000 {
        // Beyond any real sample; ln_gamma loses digits there, and the
        // normal approximation with continuity correction is off by O(1/n).
        let z = normal_quantile(1.0 - alpha / 2.0);
        let j = (nf / 2.0 - 0.5 - z * nf.sqrt() / 2.0).floor();
        let tail = 2.0 * normal_cdf((j + 0.5 - nf / 2.0) / (nf.sqrt() / 2.0));
        return (j >= 0.0).then_some((j as usize, tail));
    }
    // Start the summation where the lower tail is provably negligible
    // (Hoeffding: P(B <= n/2 - t) <= exp(-2 t^2 / n) <= tol), so huge n
    // costs a few thousand steps instead of n/2.
    let tol = (alpha * 1e-9).max(1e-300);
    let skip = (nf * (1.0 / tol).ln() / 2.0).sqrt();
    let j0 = (nf / 2.0 - skip).floor().max(0.0) as usize;
    let mut pmf = (ln_choose(n, j0) - nf * LN_2).exp();
    let mut cdf = 0.0;
    let mut best = None;
    let mut j = j0;
    while j <= n / 2 {
        cdf += pmf;
        if 2.0 * cdf > alpha * (1.0 + REL_TOL) {
            break;
        }
        best = Some((j, 2.0 * cdf));
        pmf *= (n - j) as f64 / (j + 1) as f64;
        j += 1;
    }
    best
}

/// Smallest n for which the sign-test interval [min, max] reaches 1 - alpha:
/// 2 * 2^-n <= alpha (6 at 95%, 8 at 99%).
fn sign_test_min_n(alpha: f64) -> usize {
    let mut n = 1;
    let mut tail = 1.0;
    while n < 2000 && tail > alpha * (1.0 + REL_TOL) {
        n += 1;
        tail *= 0.5;
    }
    n
}

/// 1-based ranks (r, n + 1 - r) of the order statistics bounding the
/// distribution-free interval for the median, and its exact coverage
/// 1 - 2 P(B <= r - 1), B ~ Binomial(n, 1/2). The ranks are the tightest
/// symmetric pair whose coverage is at least `level` (n = 10 at 95%:
/// ranks 2 and 9, coverage 0.9785). None when no pair reaches the level.
pub fn median_ci_ranks(n: usize, level: f64) -> Option<(usize, usize, f64)> {
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let (j, tail) = sign_test_cut(n, 1.0 - level)?;
    Some((j + 1, n - j, 1.0 - tail))
}

/// Distribution-free interval for the median from order statistics.
///
/// Why order statistics and not a bootstrap: P(X_(r) <= median <= X_(n+1-r))
/// depends only on Binomial(n, 1/2), so the coverage is exact for every
/// continuous distribution (and at least nominal with ties, since the
/// interval is closed), at every n, with no resampling noise, and in O(n).
/// A bootstrap of the median is only asymptotically right and is known to
/// be erratic for small n because the median's bootstrap distribution is
/// lumpy. Refuses when no pair of order statistics reaches the level
/// (n < 6 at 95%, the classic sign-test limit).
pub fn median_ci(xs: &[f64], level: f64) -> Result<Estimate, StatsError> {
    check_finite(xs)?;
    let n = xs.len();
    let alpha = check_level(level, n)?;
    let Some((j, _)) = sign_test_cut(n, alpha) else {
        return Err(too_few(sign_test_min_n(alpha), n, level));
    };
    let mut buf = xs.to_vec();
    let low = select(&mut buf, j);
    let high = select(&mut buf, n - 1 - j);
    let value = median_select(&mut buf);
    Ok(Estimate {
        value,
        low,
        high,
        level,
    })
}

// ---------------------------------------------------------------------------
// Outliers
// ---------------------------------------------------------------------------

/// Indices (ascending) of outliers by a robust rule.
///
/// Iglewicz & Hoaglin's modified z-score: |x - median| / (1.4826 MAD) > 3.5.
/// Median and MAD are not dragged by the outliers themselves, unlike mean
/// and standard deviation (which a single wild run inflates enough to hide
/// itself). When MAD = 0 (at least half the values identical, common with
/// coarse timers), the score uses the mean absolute deviation instead,
/// |x - median| / (1.253314 MeanAD), the standard fallback (1.253314 =
/// sqrt(pi/2) makes it consistent for the normal); if that is 0 too, all
/// values are equal and none is an outlier. NaN and infinite values are
/// always reported, and excluded from the median and MAD.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    let mut finite: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let non_finite = |x: f64| !x.is_finite();
    if finite.is_empty() {
        return (0..xs.len()).filter(|&i| non_finite(xs[i])).collect();
    }
    let median = median_select(&mut finite);
    let mut dev: Vec<f64> = finite.iter().map(|x| (x - median).abs()).collect();
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    let mad = median_select(&mut dev);
    let scale = if mad > 0.0 {
        1.4826 * mad
    } else {
        1.253314 * mean_ad
    };
    xs.iter()
        .enumerate()
        .filter(|&(_, &x)| non_finite(x) || (scale > 0.0 && (x - median).abs() / scale > 3.5))
        .map(|(i, _)| i)
        .collect()
}

// ---------------------------------------------------------------------------
// Rank tests
// ---------------------------------------------------------------------------

/// Result of a two-sample or paired rank test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestResult {
    pub statistic: f64,
    pub p_value: f64,
    pub exact: bool,
}

/// U of sample a (pairs with a_i > b_j count 1, ties 1/2) and the tie term
/// sum(t^3 - t) over tie groups of the pooled sample, by one merge of the
/// two sorted samples: O(m + n) after sorting, no rank array.
fn u_statistic_sorted(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (mut i, mut j) = (0, 0);
    let (mut u, mut ties) = (0.0, 0.0);
    while i < a.len() || j < b.len() {
        let v = if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
            a[i]
        } else {
            b[j]
        };
        let b_below = j as f64;
        let i0 = i;
        while i < a.len() && a[i] == v {
            i += 1;
        }
        let j0 = j;
        while j < b.len() && b[j] == v {
            j += 1;
        }
        let (ta, tb) = ((i - i0) as f64, (j - j0) as f64);
        u += ta * (b_below + 0.5 * tb);
        let t = ta + tb;
        ties += t * t * t - t;
    }
    (u, ties)
}

fn mw_use_exact(m: usize, n: usize) -> bool {
    let small = m.min(n);
    small <= MW_EXACT_MAX_SMALLER
        && small.saturating_mul(m.saturating_mul(n) / 2) <= MW_EXACT_MAX_WORK
}

/// P(U <= u) for u = 0..=t under the null without ties.
///
/// The counts of U are the coefficients of the Gaussian binomial
/// [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); each factor
/// is one pass (multiply, then divide = running sum). Coefficients only flow
/// from low to high degree, so truncating at t is exact and the work is
/// O(min(m, n) t). Counts are kept in f64: they reach C(m+n, m), which
/// overflows integers (C(100, 50) ~ 1e29) but stays far below f64's range
/// under `mw_use_exact`'s limits (at most about C(4050, 50) ~ 1e116). The
/// subtraction never loses relative precision in the lower half because
/// the coefficients there are increasing.
fn mw_cdf_prefix(m: usize, n: usize, t: usize) -> Vec<f64> {
    let (m, n) = (m.min(n), m.max(n));
    let mut c = vec![0.0f64; t + 1];
    c[0] = 1.0;
    for i in 1..=m {
        // Multiply by (1 - q^s): c[k] -= c[k - s] needs the old c[k - s],
        // so walk down in chunks of at most s (sources lie below each chunk).
        let s = n + i;
        let mut end = t + 1;
        while end > s {
            let begin = (end - s).max(s);
            let (low, high) = c.split_at_mut(begin);
            for (x, y) in high[..end - begin].iter_mut().zip(&low[begin - s..end - s]) {
                *x -= *y;
            }
            end = begin;
        }
        // Divide by (1 - q^i): a running sum along each residue class mod i.
        for r in 0..i.min(t + 1) {
            let mut acc = c[r];
            for x in c[r..].iter_mut().step_by(i).skip(1) {
                acc += *x;
                *x = acc;
            }
        }
    }
    let total = choose_f64(m + n, m);
    let mut acc = 0.0;
    for v in c.iter_mut() {
        acc += v.max(0.0);
        *v = acc / total;
    }
    c
}

/// Two-sided Mann-Whitney U test (Wilcoxon rank-sum); `statistic` is U of
/// sample a (R's W): the number of pairs with a_i > b_j, ties counting 1/2.
///
/// Exact p-value, 2 P(U <= min(U, mn - U)) capped at 1, when there are no
/// ties and the smaller sample has at most 50 values (with a cap on the
/// work, see `mw_use_exact`; lopsided designs such as 3 vs 500 stay exact,
/// where the normal approximation is poor). With ties, the exact
/// conditional distribution given the tie pattern (`exact.rs`, as
/// benchstat) while its work stays under `MW_TIES_EXACT_MAX_WORK`
/// (50 vs 50 included). Otherwise the normal
/// approximation with tie-corrected variance
/// mn/12 ((N+1) - sum(t^3 - t) / (N(N-1))) and continuity correction, as R
/// does. Refuses when either sample is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Result<TestResult, StatsError> {
    if a.is_empty() || b.is_empty() {
        return Err(too_few_for_test(1, a.len().min(b.len())));
    }
    check_finite(a)?;
    check_finite(b)?;
    let (m, n) = (a.len(), b.len());
    let (u, ties) = u_statistic_sorted(&sorted_copy(a), &sorted_copy(b));
    let mn = m as f64 * n as f64;
    if ties > 0.0 && exact::mann_whitney_exact_work(m, n) <= MW_TIES_EXACT_MAX_WORK {
        let (u, p) = exact::mann_whitney_p(a, b);
        return Ok(TestResult {
            statistic: u,
            p_value: p,
            exact: true,
        });
    }
    if ties == 0.0 && mw_use_exact(m, n) {
        // No ties: U is an integer.
        let t = u.min(mn - u) as usize;
        let cdf = mw_cdf_prefix(m, n, t);
        return Ok(TestResult {
            statistic: u,
            p_value: (2.0 * cdf[t]).min(1.0),
            exact: true,
        });
    }
    Ok(TestResult {
        statistic: u,
        p_value: mw_normal_p(u, m, n, ties, 0.5),
        exact: false,
    })
}

fn mw_normal_p(u: f64, m: usize, n: usize, ties: f64, correction: f64) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let big_n = mf + nf;
    let var = mf * nf / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    normal_two_sided_p(u, mf * nf / 2.0, var, correction)
}

/// P(V <= v) for v = 0..=t, V the signed-rank statistic of n values without
/// ties: coefficients of prod_{i=1..n} (1 + q^i) / 2^n, truncated at t.
/// Integer counts are exact (at most 2^50 here).
fn signed_rank_cdf_prefix(n: usize, t: usize) -> Vec<f64> {
    let mut c = vec![0u64; t + 1];
    c[0] = 1;
    for i in 1..=n {
        for k in (i..=t).rev() {
            c[k] += c[k - i];
        }
    }
    let total = (n as f64).exp2();
    let mut acc = 0u64;
    c.iter()
        .map(|&v| {
            acc += v;
            acc as f64 / total
        })
        .collect()
}

/// Two-sided Wilcoxon signed-rank test on paired differences d; `statistic`
/// is V, the sum of the ranks of |d| over positive d (R's V).
///
/// Zeros are dropped before ranking (Wilcoxon's original method, as R does):
/// a zero carries no sign. Given the zeros, the signs of the rest are still
/// fair coins under the null, so the exact distribution for the remaining
/// n' values stays valid (R instead falls back to the normal approximation
/// when zeros exist). Exact for n' <= 50 without ties among |d|, exact
/// conditional on the ties (midranks, `exact.rs`) for n' <= 100; otherwise
/// the normal approximation with variance n'(n'+1)(2n'+1)/24 - sum(t^3-t)/48
/// and continuity correction. All-zero differences give V = 0, p = 1.
pub fn wilcoxon_signed_rank(d: &[f64]) -> Result<TestResult, StatsError> {
    if d.is_empty() {
        return Err(too_few_for_test(1, 0));
    }
    check_finite(d)?;
    let mut nz: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
    nz.sort_unstable_by(|x, y| x.abs().total_cmp(&y.abs()));
    let n = nz.len();
    let (mut v, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && nz[j].abs() == nz[i].abs() {
            j += 1;
        }
        // Midrank of ranks i+1..=j.
        let rank = (i + 1 + j) as f64 / 2.0;
        v += rank * nz[i..j].iter().filter(|&&x| x > 0.0).count() as f64;
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    let nf = n as f64;
    let total = nf * (nf + 1.0) / 2.0;
    if ties > 0.0 && n <= SIGNED_RANK_TIES_EXACT_MAX {
        let (v, p) = exact::signed_rank_p(&nz);
        return Ok(TestResult {
            statistic: v,
            p_value: p,
            exact: true,
        });
    }
    if ties == 0.0 && n <= SIGNED_RANK_EXACT_MAX {
        let t = v.min(total - v) as usize;
        let cdf = signed_rank_cdf_prefix(n, t);
        return Ok(TestResult {
            statistic: v,
            p_value: (2.0 * cdf[t]).min(1.0),
            exact: true,
        });
    }
    Ok(TestResult {
        statistic: v,
        p_value: signed_rank_normal_p(v, n, ties, 0.5),
        exact: false,
    })
}

fn signed_rank_normal_p(v: f64, n: usize, ties: f64, correction: f64) -> f64 {
    let nf = n as f64;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
    normal_two_sided_p(v, nf * (nf + 1.0) / 4.0, var, correction)
}

// ---------------------------------------------------------------------------
// Hodges-Lehmann estimates
// ---------------------------------------------------------------------------

/// Entries of the given ranks (0-based, any order) of an implicit matrix
/// M[r][c] = f(r, c), r in 0..rows, c in start(r)..cols, without
/// materialising it.
///
/// Requirements: every row is non-decreasing in c, and every column is
/// non-increasing in r (so the number of entries below a threshold in row
/// r, counted over 0..cols, never decreases with r and one two-pointer
/// sweep counts the whole matrix in O(rows + cols)).
///
/// A Floyd-Rivest-style selection in the spirit of Monahan (1984) for the
/// Hodges-Lehmann estimator: each row keeps a window [lo, hi) of candidate
/// columns; a seeded random sample of the candidates gives two pivots that
/// bracket the wanted ranks; one sweep counts the entries below and at each
/// pivot, and the windows shrink to the bracket (to about 5% per round for
/// one rank). Ranks that share a bracket share the rounds (the interval
/// bounds and the median of a Hodges-Lehmann estimate lie within a fraction
/// of a percent of each other in rank); when they drift apart the window is
/// split and each part continues on its own. Few candidates are collected
/// and selected directly. Exact; O((rows + cols) log N) time and O(rows)
/// memory per live window, so 10^12 pairs cost a few sweeps over the data
/// instead of 8 TB of differences.
#[allow(clippy::needless_range_loop)] // parallel per-row arrays indexed by row
fn select_implicit<F, S>(
    rows: usize,
    cols: usize,
    start: &S,
    f: &F,
    ranks: &[usize],
    collect_at: usize,
) -> Vec<f64>
where
    F: Fn(usize, usize) -> f64,
    S: Fn(usize) -> usize,
{
    const MAX_SAMPLE: usize = 4096;
    // Split targets that would need a bracket wider than this fraction.
    const SPLIT_SPAN: f64 = 0.2;
    struct Window {
        lo: Vec<usize>,
        hi: Vec<usize>,
        /// Entries left of every window: ranks below are relative to this.
        below: usize,
        /// (rank, output slot), sorted by rank.
        targets: Vec<(usize, usize)>,
    }

    let mut out = vec![f64::NAN; ranks.len()];
    if ranks.is_empty() {
        return out;
    }
    let mut targets: Vec<(usize, usize)> = ranks.iter().copied().zip(0..).collect();
    targets.sort_unstable();
    let mut stack = vec![Window {
        lo: (0..rows).map(|r| start(r).min(cols)).collect(),
        hi: vec![cols; rows],
        below: 0,
        targets,
    }];
    let mut rng = ChaCha8Rng::seed_from_u64(SELECT_SEED);
    let mut cum = vec![0usize; rows + 1];
    // Per row: entries < p_lo, <= p_lo, < p_hi, <= p_hi.
    let mut pos = vec![[0usize; 4]; rows];
    let mut picks = Vec::with_capacity(MAX_SAMPLE);
    let mut sample = Vec::with_capacity(MAX_SAMPLE);

    while let Some(mut w) = stack.pop() {
        loop {
            for r in 0..rows {
                cum[r + 1] = cum[r] + (w.hi[r] - w.lo[r]);
            }
            let cand = cum[rows];
            if cand <= collect_at.max(1) {
                let mut buf = Vec::with_capacity(cand);
                for r in 0..rows {
                    buf.extend((w.lo[r]..w.hi[r]).map(|c| f(r, c)));
                }
                if let Some(last) = buf.len().checked_sub(1) {
                    for &(k, i) in &w.targets {
                        out[i] = select(&mut buf, (k - w.below).min(last));
                    }
                }
                break;
            }
            // Full-size samples only pay off on big candidate sets (always
            // the case with the production `collect_threshold`).
            let sample_size = (cand / 16).clamp(64, MAX_SAMPLE);
            let s = sample_size as f64;
            // +-3 standard errors of a sample quantile bracket the wanted
            // rank almost surely.
            let delta = 1.5 / s.sqrt() + 1.0 / s;
            let first = w.targets[0].0 - w.below;
            let last = w.targets[w.targets.len() - 1].0 - w.below;
            let f_lo = first as f64 / cand as f64 - delta;
            let f_hi = last as f64 / cand as f64 + delta;
            if w.targets.len() > 1 && f_hi - f_lo > SPLIT_SPAN + 2.0 * delta {
                // Too far apart to share a bracket: split at the widest gap;
                // both halves continue from the windows narrowed so far.
                let gap = (1..w.targets.len())
                    .max_by_key(|&i| w.targets[i].0 - w.targets[i - 1].0)
                    .unwrap_or(1);
                let right = w.targets.split_off(gap);
                stack.push(Window {
                    lo: w.lo.clone(),
                    hi: w.hi.clone(),
                    below: w.below,
                    targets: right,
                });
                continue;
            }
            // Sorted positions make locating their rows one forward walk.
            picks.clear();
            picks.extend((0..sample_size).map(|_| rng.random_range(0..cand)));
            picks.sort_unstable();
            sample.clear();
            let mut r = 0;
            for &idx in &picks {
                while cum[r + 1] <= idx {
                    r += 1;
                }
                sample.push(f(r, w.lo[r] + idx - cum[r]));
            }
            sample.sort_unstable_by(f64::total_cmp);
            let i_lo = ((f_lo * s).floor().max(0.0) as usize).min(sample_size - 1);
            let i_hi = ((f_hi * s).ceil().max(0.0) as usize).min(sample_size - 1);
            let (p_lo, p_hi) = (sample[i_lo], sample[i_hi]);
            let mut c = [0usize; 4];
            let mut below = [0usize; 4];
            for r in 0..rows {
                while c[0] < cols && f(r, c[0]) < p_lo {
                    c[0] += 1;
                }
                while c[1] < cols && f(r, c[1]) <= p_lo {
                    c[1] += 1;
                }
                while c[2] < cols && f(r, c[2]) < p_hi {
                    c[2] += 1;
                }
                while c[3] < cols && f(r, c[3]) <= p_hi {
                    c[3] += 1;
                }
                // Clamp the full-row counts to the row's candidate window.
                let (lo, hi) = (w.lo[r], w.hi[r]);
                for q in 0..4 {
                    pos[r][q] = c[q].clamp(lo, hi);
                    below[q] += pos[r][q] - lo;
                }
            }
            // Three-way split on both pivots: every branch either settles a
            // rank or removes at least the pivot's own entries, so the loop
            // ends even when most values are tied.
            let mut groups: [Vec<(usize, usize)>; 3] = Default::default();
            for &(k, i) in &w.targets {
                let k_rel = k - w.below;
                if k_rel < below[0] {
                    groups[0].push((k, i));
                } else if k_rel < below[1] {
                    out[i] = p_lo;
                } else if k_rel < below[2] {
                    groups[1].push((k, i));
                } else if k_rel < below[3] {
                    out[i] = p_hi;
                } else {
                    groups[2].push((k, i));
                }
            }
            let shrink = |w: &mut Window, g: usize, targets: Vec<(usize, usize)>| {
                for r in 0..rows {
                    match g {
                        0 => w.hi[r] = pos[r][0],
                        1 => (w.lo[r], w.hi[r]) = (pos[r][1], pos[r][2]),
                        _ => w.lo[r] = pos[r][3],
                    }
                }
                w.below += [0, below[1], below[3]][g];
                w.targets = targets;
            };
            let live: Vec<usize> = (0..3).filter(|&g| !groups[g].is_empty()).collect();
            match live[..] {
                [] => break,
                [g] => {
                    let targets = std::mem::take(&mut groups[g]);
                    shrink(&mut w, g, targets);
                }
                _ => {
                    for &g in &live {
                        let mut part = Window {
                            lo: w.lo.clone(),
                            hi: w.hi.clone(),
                            below: w.below,
                            targets: Vec::new(),
                        };
                        shrink(&mut part, g, std::mem::take(&mut groups[g]));
                        stack.push(part);
                    }
                    break;
                }
            }
        }
    }
    out
}

/// Candidates below which `select_implicit` stops iterating and selects
/// directly: collecting costs about as much as one counting sweep then.
fn collect_threshold(rows: usize, cols: usize) -> usize {
    (4 * (rows + cols)).max(1 << 16)
}

/// Order statistics (0-based ranks) of all pairwise differences b_j - a_i.
fn pairwise_difference_order_stats(
    sa: &[f64],
    sb: &[f64],
    ranks: &[usize],
    collect_at: usize,
) -> Vec<f64> {
    // Rows are a ascending, columns b ascending: rows increase along c and
    // columns decrease along r, as select_implicit needs.
    let f = |r: usize, c: usize| sb[c] - sa[r];
    let start = |_: usize| 0;
    select_implicit(sa.len(), sb.len(), &start, &f, ranks, collect_at)
}

/// Order statistics (0-based ranks) of the Walsh averages (d_i + d_j) / 2,
/// i <= j, of sorted data.
fn walsh_average_order_stats(sd: &[f64], ranks: &[usize], collect_at: usize) -> Vec<f64> {
    let n = sd.len();
    // Row r holds d_(n-1-r) + d_c for c >= n-1-r: rows increase along c,
    // columns decrease along r. Halves first, so huge values cannot overflow.
    let f = |r: usize, c: usize| 0.5 * sd[n - 1 - r] + 0.5 * sd[c];
    let start = |r: usize| n - 1 - r;
    select_implicit(n, n, &start, &f, ranks, collect_at)
}

/// Ranks of the median of `total` ordered values (two when total is even).
fn median_ranks(total: usize) -> [usize; 2] {
    if total % 2 == 1 {
        [total / 2, total / 2]
    } else {
        [total / 2 - 1, total / 2]
    }
}

/// 1-based lower rank k of the Hodges-Lehmann shift interval
/// [D_(k), D_(mn+1-k)]: the largest k with 2 P(U <= k - 1) <= alpha.
fn mw_ci_rank(m: usize, n: usize, alpha: f64) -> Option<usize> {
    let total = m.checked_mul(n)?;
    if total == 0 {
        return None;
    }
    if mw_use_exact(m, n) {
        lower_rank_from_cdf(&mw_cdf_prefix(m, n, total / 2), alpha)
    } else {
        let (mf, nf) = (m as f64, n as f64);
        lower_rank_normal(
            total as f64,
            (mf * nf * (mf + nf + 1.0) / 12.0).sqrt(),
            alpha,
        )
    }
}

/// Smallest size of the smaller sample that lets a shift interval reach
/// 1 - alpha against `larger` values: 2 / C(k + larger, k) <= alpha.
fn mw_min_smaller(larger: usize, alpha: f64) -> usize {
    (1..4096)
        .find(|&k| 2.0 / choose_f64(larger.max(k) + k, k) <= alpha * (1.0 + REL_TOL))
        .unwrap_or(4096)
}

/// 1-based lower rank k of the one-sample interval over the n(n+1)/2 Walsh
/// averages: the largest k with 2 P(V <= k - 1) <= alpha.
fn signed_rank_ci_rank(n: usize, alpha: f64) -> Option<usize> {
    let total = n.checked_mul(n.checked_add(1)?)? / 2;
    if total == 0 {
        return None;
    }
    if n <= SIGNED_RANK_EXACT_MAX {
        lower_rank_from_cdf(&signed_rank_cdf_prefix(n, total / 2), alpha)
    } else {
        let nf = n as f64;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        lower_rank_normal(total as f64, sd, alpha)
    }
}

/// Hodges-Lehmann estimate of the shift b - a: the median of all m*n
/// differences b_j - a_i, with the distribution-free interval
/// [D_(k), D_(mn+1-k)] obtained by inverting the Mann-Whitney test
/// (Bauer 1972; what R's wilcox.test(b, a, conf.int = TRUE) reports).
///
/// k comes from the exact U distribution under the same size rule as
/// `mann_whitney`, else from its normal approximation. Ties in the data are
/// not corrected for: the interval is closed, which errs on the wide side
/// with ties. The order statistics are found exactly by implicit selection
/// (`select_implicit`), so even 10^6 x 10^6 samples need no approximation
/// and O(n + m) memory.
pub fn hodges_lehmann_shift(a: &[f64], b: &[f64], level: f64) -> Result<Estimate, StatsError> {
    check_finite(a)?;
    check_finite(b)?;
    let (m, n) = (a.len(), b.len());
    let (small, large) = (m.min(n), m.max(n));
    let alpha = check_level(level, small)?;
    let refuse = || too_few(mw_min_smaller(large, alpha).max(small + 1), small, level);
    // A pair count beyond usize cannot be held in memory in the first place.
    let total = m.checked_mul(n).ok_or(StatsError::NonFinite)?;
    let k = mw_ci_rank(m, n, alpha).ok_or_else(refuse)?;
    let (sa, sb) = (sorted_copy(a), sorted_copy(b));
    let [m0, m1] = median_ranks(total);
    let v = pairwise_difference_order_stats(
        &sa,
        &sb,
        &[k - 1, total - k, m0, m1],
        collect_threshold(m, n),
    );
    Ok(Estimate {
        value: lerp(v[2], v[3], 0.5),
        low: v[0],
        high: v[1],
        level,
    })
}

/// Hodges-Lehmann one-sample estimate on paired differences: the median of
/// the n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j (the pseudomedian),
/// with the interval [W_(k), W_(N+1-k)] from inverting the signed-rank test
/// (exact distribution for n <= 50, normal approximation above).
///
/// Unlike the test, zeros are kept: they are data about the location, and
/// the inverted test is evaluated at shifts where they are not zero.
/// Refuses below n = 6 at 95% (2^-n must fit in the tails).
pub fn hodges_lehmann_paired(d: &[f64], level: f64) -> Result<Estimate, StatsError> {
    check_finite(d)?;
    let n = d.len();
    let alpha = check_level(level, n)?;
    let k =
        signed_rank_ci_rank(n, alpha).ok_or_else(|| too_few(sign_test_min_n(alpha), n, level))?;
    let total = n * (n + 1) / 2;
    let sd = sorted_copy(d);
    let [m0, m1] = median_ranks(total);
    let v = walsh_average_order_stats(&sd, &[k - 1, total - k, m0, m1], collect_threshold(n, n));
    Ok(Estimate {
        value: lerp(v[2], v[3], 0.5),
        low: v[0],
        high: v[1],
        level,
    })
}

// ---------------------------------------------------------------------------
// Bootstrap
// ---------------------------------------------------------------------------

fn uniform_open(rng: &mut ChaCha8Rng) -> f64 {
    // (0, 1]: safe for ln.
    1.0 - rng.random::<f64>()
}

fn std_normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box-Muller; one of the pair is enough here.
    let u1 = uniform_open(rng);
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos()
}

/// Gamma(shape, 1) for shape >= 1 by Marsaglia & Tsang (2000).
fn gamma_sample(shape: f64, rng: &mut ChaCha8Rng) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    // Acceptance is above 95%; the cap only guarantees termination.
    for _ in 0..1000 {
        let x = std_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = uniform_open(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
    d
}

fn beta_sample(a: f64, b: f64, rng: &mut ChaCha8Rng) -> f64 {
    let x = gamma_sample(a, rng);
    let y = gamma_sample(b, rng);
    x / (x + y)
}

/// Bootstrap replicates of the median of `buf` (any order; reordered), and
/// the sample median itself.
///
/// Resampling n values and selecting their median costs O(n) per
/// replicate, 2000 x 10^6 operations for a million samples. Instead this
/// draws the resample's order statistics directly: a resample is
/// x_(ceil(n U_i)) for iid uniforms U_i, and x_(ceil(n u)) is monotone in u,
/// so the resample's k-th order statistic is x_(ceil(n U_(k))) with
/// U_(k) ~ Beta(k, n - k + 1). For even n the next order statistic is
/// U_(k+1) = U_(k) + (1 - U_(k)) W, W ~ Beta(1, n - k) (the minimum of the
/// n - k uniforms above U_(k)). That is exactly the distribution that
/// resampling produces, at O(1) per replicate; the needed order statistics
/// all lie in a narrow central window, which is partitioned and sorted.
fn bootstrap_medians(buf: &mut [f64], reps: usize, rng: &mut ChaCha8Rng) -> (Vec<f64>, f64) {
    let n = buf.len();
    let nf = n as f64;
    let to_index = |u: f64| ((nf * u).ceil() as usize).clamp(1, n) - 1;
    let k = n.div_ceil(2);
    let mut idx = Vec::with_capacity(reps);
    for _ in 0..reps {
        let u1 = beta_sample(k as f64, (n - k + 1) as f64, rng);
        if n % 2 == 1 {
            let j = to_index(u1);
            idx.push((j, j));
        } else {
            let w = -(uniform_open(rng).ln() / (n - k) as f64).exp_m1();
            let u2 = u1 + (1.0 - u1) * w;
            idx.push((to_index(u1), to_index(u2)));
        }
    }
    let mid = median_ranks(n);
    let lo = idx.iter().map(|p| p.0).min().unwrap_or(mid[0]).min(mid[0]);
    let hi = idx.iter().map(|p| p.1).max().unwrap_or(mid[1]).max(mid[1]);
    buf.select_nth_unstable_by(lo, f64::total_cmp);
    buf[lo..].select_nth_unstable_by(hi - lo, f64::total_cmp);
    buf[lo..=hi].sort_unstable_by(f64::total_cmp);
    let median_of = |i: usize, j: usize| lerp(buf[i], buf[j], 0.5);
    let reps = idx.iter().map(|&(i, j)| median_of(i, j)).collect();
    (reps, median_of(mid[0], mid[1]))
}

/// Percentile interval from bootstrap replicates (type-7 quantiles).
fn percentile_interval(reps: &mut [f64], alpha: f64) -> (f64, f64) {
    reps.sort_unstable_by(f64::total_cmp);
    (
        quantile_sorted(reps, alpha / 2.0),
        quantile_sorted(reps, 1.0 - alpha / 2.0),
    )
}

/// Ratio median(b) / median(a) with a seeded percentile-bootstrap interval
/// (a and b resampled independently, `BOOTSTRAP_RESAMPLES` replicates; see
/// `bootstrap_medians` for how each replicate costs O(1)).
///
/// Refuses `NonPositive` when either median is <= 0, or when a bootstrap
/// replicate of median(a) is <= 0 (the ratio's distribution then crosses
/// a pole). Refuses `TooFewSamples` where `median_ci` would (n < 6 at
/// 95%): a percentile interval from fewer points cannot honestly claim the
/// level either.
pub fn ratio_of_medians(
    a: &[f64],
    b: &[f64],
    level: f64,
    seed: u64,
) -> Result<Estimate, StatsError> {
    check_finite(a)?;
    check_finite(b)?;
    let small = a.len().min(b.len());
    let alpha = check_level(level, small)?;
    let needed = sign_test_min_n(alpha);
    if small < needed {
        return Err(too_few(needed, small, level));
    }
    let (mut ba, mut bb) = (a.to_vec(), b.to_vec());
    // Refuse before spending the resamples.
    if median_select(&mut ba) <= 0.0 || median_select(&mut bb) <= 0.0 {
        return Err(StatsError::NonPositive);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (ra, med_a) = bootstrap_medians(&mut ba, BOOTSTRAP_RESAMPLES, &mut rng);
    let (rb, med_b) = bootstrap_medians(&mut bb, BOOTSTRAP_RESAMPLES, &mut rng);
    if ra.iter().any(|&x| x <= 0.0) {
        return Err(StatsError::NonPositive);
    }
    let mut ratios: Vec<f64> = rb.iter().zip(&ra).map(|(b, a)| b / a).collect();
    let (low, high) = percentile_interval(&mut ratios, alpha);
    Ok(Estimate {
        value: med_b / med_a,
        low,
        high,
        level,
    })
}

/// Percentile-bootstrap interval for any statistic: `resamples` resamples
/// of xs with replacement (0 means `BOOTSTRAP_RESAMPLES`), drawn from a
/// ChaCha8 generator seeded with `seed`; bounds are the type-7 quantiles
/// alpha/2 and 1 - alpha/2 of the replicates, `value` the statistic of xs.
///
/// Costs O(resamples * n) plus the statistic's own cost; for the median of
/// a large sample `ratio_of_medians`' direct order-statistic method is far
/// cheaper. Refuses like `median_ci` for tiny samples (n < 6 at 95%), and
/// `NonFinite` if the statistic returns NaN or infinity on xs or on any
/// resample.
pub fn bootstrap_ci(
    xs: &[f64],
    statistic: &dyn Fn(&[f64]) -> f64,
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Estimate, StatsError> {
    check_finite(xs)?;
    let n = xs.len();
    let alpha = check_level(level, n)?;
    let needed = sign_test_min_n(alpha);
    if n < needed {
        return Err(too_few(needed, n, level));
    }
    let value = statistic(xs);
    if !value.is_finite() {
        return Err(StatsError::NonFinite);
    }
    let resamples = if resamples == 0 {
        BOOTSTRAP_RESAMPLES
    } else {
        resamples
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = vec![0.0; n];
    let mut reps = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in buf.iter_mut() {
            *slot = xs[rng.random_range(0..n)];
        }
        let s = statistic(&buf);
        if !s.is_finite() {
            return Err(StatsError::NonFinite);
        }
        reps.push(s);
    }
    let (low, high) = percentile_interval(&mut reps, alpha);
    Ok(Estimate {
        value,
        low,
        high,
        level,
    })
}

// ---------------------------------------------------------------------------
// Sequential testing
// ---------------------------------------------------------------------------

/// Per-look significance levels for `looks` interim analyses whose sum is
/// at most alpha, so "stop at the first look whose p-value is below its
/// level" has a family-wise false-positive rate <= alpha by the union
/// bound, whatever the correlation between looks and however they are
/// spaced.
///
/// Shape: the Lan-DeMets O'Brien-Fleming-type spending function
/// a(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)) at equally spaced information
/// fractions t = k / looks; look k gets a(t_k) - a(t_{k-1}). Early looks
/// get almost nothing (they stop only on overwhelming evidence) and the
/// final look keeps most of alpha, so a run that goes to the end loses
/// little power to the interim looks. The increments telescope to alpha
/// and are scaled by (1 - 1e-9) so rounding cannot push the sum above it.
/// Using the increments directly as levels (rather than group-sequential
/// boundaries that model the correlation) is conservative, and valid for
/// any test and any spacing. alpha is clamped to [0, 1] (NaN: 0).
pub fn sequential_alpha(alpha: f64, looks: usize) -> Vec<f64> {
    if looks == 0 {
        return Vec::new();
    }
    let alpha = if alpha.is_nan() {
        0.0
    } else {
        alpha.clamp(0.0, 1.0)
    };
    if alpha == 0.0 {
        return vec![0.0; looks];
    }
    let z = normal_quantile(1.0 - alpha / 2.0);
    let spent = |k: usize| {
        if k == looks {
            alpha
        } else {
            2.0 * normal_cdf(-z / (k as f64 / looks as f64).sqrt())
        }
    };
    let mut prev = 0.0;
    let mut levels: Vec<f64> = (1..=looks)
        .map(|k| {
            let c = spent(k);
            let level = (c - prev).max(0.0);
            prev = c;
            level
        })
        .collect();
    let sum: f64 = levels.iter().sum();
    let scale = if sum > 0.0 { alpha / sum } else { 0.0 } * (1.0 - 1e-9);
    for l in levels.iter_mut() {
        *l *= scale;
    }
    levels
}

// ---------------------------------------------------------------------------
// Trend
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    pub tau: f64,
    pub p_value: f64,
    pub slope: f64,
}

/// Pairs i < j with x_i > x_j (strictly), by bottom-up merge sort:
/// O(n log n), so the Mann-Kendall S of a million runs takes milliseconds.
/// Also returns the sorted values (the tie groups need them).
fn count_inversions(xs: &[f64]) -> (u64, Vec<f64>) {
    let n = xs.len();
    let mut a = xs.to_vec();
    let mut buf = vec![0.0; n];
    let mut inversions = 0u64;
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut o) = (start, mid, start);
            while i < mid && j < end {
                // Ties go left first and are not inversions.
                if a[i] <= a[j] {
                    buf[o] = a[i];
                    i += 1;
                } else {
                    buf[o] = a[j];
                    j += 1;
                    inversions += (mid - i) as u64;
                }
                o += 1;
            }
            buf[o..o + (mid - i)].copy_from_slice(&a[i..mid]);
            o += mid - i;
            buf[o..o + (end - j)].copy_from_slice(&a[j..end]);
            start = end;
        }
        std::mem::swap(&mut a, &mut buf);
        width *= 2;
    }
    (inversions, a)
}

/// Theil-Sen slope per step: median of (x_j - x_i) / (j - i), i < j.
/// All pairs up to n = 2000; above, the median of 2^20 pairs drawn
/// uniformly with a fixed seed. The subsampling error of that median is of
/// the order of 1/(n sqrt(2^20)) residual standard deviations, no more than
/// the Theil-Sen estimator's own standard error (order n^-1.5), so it
/// changes nothing a drift warning depends on, and costs O(2^20) instead of
/// O(n^2).
fn theil_sen(xs: &[f64]) -> f64 {
    let n = xs.len();
    let slope = |i: usize, j: usize| (xs[j] - xs[i]) / (j - i) as f64;
    let mut slopes = if n <= THEIL_SEN_ALL_PAIRS_MAX_N {
        let mut v = Vec::with_capacity(n * (n - 1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                v.push(slope(i, j));
            }
        }
        v
    } else {
        let mut rng = ChaCha8Rng::seed_from_u64(THEIL_SEN_SEED);
        (0..THEIL_SEN_SAMPLED_PAIRS)
            .map(|_| {
                let i = rng.random_range(0..n);
                let mut j = rng.random_range(0..n - 1);
                if j >= i {
                    j += 1;
                }
                slope(i.min(j), i.max(j))
            })
            .collect()
    };
    median_select(&mut slopes)
}

/// Mann-Kendall trend test over the sequence order.
///
/// S = sum over i < j of sign(x_j - x_i), computed in O(n log n) from the
/// inversion count; variance [n(n-1)(2n+5) - sum t(t-1)(2t+5)] / 18 with
/// tie groups t; two-sided p from the normal approximation with continuity
/// correction (exact tables are not needed for a drift warning). `tau` is
/// Kendall's tau-b between position and value, S / sqrt(n0 (n0 - n1)) with
/// n0 = n(n-1)/2 and n1 the tied pairs (as scipy.stats.kendalltau; equals
/// tau-a without ties; 0 when all values are equal). `slope` is the
/// Theil-Sen slope per step (see `theil_sen`). Refuses n < 4
/// (`TREND_MIN_N`).
pub fn trend(xs: &[f64]) -> Result<Trend, StatsError> {
    let n = xs.len();
    if n < TREND_MIN_N {
        return Err(too_few_for_test(TREND_MIN_N, n));
    }
    check_finite(xs)?;
    let (inversions, sorted) = count_inversions(xs);
    let (mut tied_pairs, mut tie_var) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        tied_pairs += t * (t - 1.0) / 2.0;
        tie_var += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j;
    }
    let nf = n as f64;
    let n0 = nf * (nf - 1.0) / 2.0;
    // Discordant pairs are the inversions; concordant are the rest minus ties.
    let inv = inversions as f64;
    let s = (n0 - tied_pairs - inv) - inv;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - tie_var) / 18.0;
    let p_value = normal_two_sided_p(s, 0.0, var, 1.0);
    let denom = (n0 * (n0 - tied_pairs)).sqrt();
    let tau = if denom > 0.0 { s / denom } else { 0.0 };
    Ok(Trend {
        tau,
        p_value,
        slope: theil_sen(xs),
    })
}

/// Every k-th value so that at most `max` remain (all of them when fewer).
pub fn thin(values: &[f64], max: usize) -> Vec<f64> {
    if values.len() <= max || max == 0 {
        return values.to_vec();
    }
    let stride = values.len().div_ceil(max);
    values.iter().step_by(stride).copied().collect()
}

/// Median of the finite values (stored data may hold NaN for a missing
/// measurement); None when there are none.
pub fn median_finite(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    median(&v)
}

#[cfg(test)]
mod tests {
    //! Reference values come from R (documented examples), from published
    //! tables, from exact rational arithmetic done by hand or in Python's
    //! `fractions`/`statistics.NormalDist`, and from brute-force enumeration
    //! of permutation distributions written here independently of the code
    //! under test. Simulations are seeded and deterministic.

    use super::*;

    #[test]
    fn thins_evenly() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(thin(&v, 20), v);
        assert_eq!(thin(&v, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(thin(&v, 3), vec![0.0, 4.0, 8.0]);
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr, $tol:expr) => {{
            let (a, b, tol): (f64, f64, f64) = ($a, $b, $tol);
            assert!(
                (a - b).abs() <= tol,
                "{} = {a} is not within {tol} of {b}",
                stringify!($a)
            );
        }};
    }

    // ----- generators, independent of the module under test -----

    /// SplitMix64: statistically sound for simulation and, unlike ChaCha,
    /// fast in unoptimised test builds (most simulation time was the RNG).
    struct Gen(u64);

    impl Gen {
        fn new(seed: u64) -> Self {
            Gen(seed)
        }
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// Uniform on (0, 1).
        fn unif(&mut self) -> f64 {
            ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            (-2.0 * self.unif().ln()).sqrt() * (2.0 * PI * self.unif()).cos()
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Dist {
        /// exp(N(0, 1)): strongly right-skewed.
        LogNormal,
        Exponential,
        /// Pareto with shape 1.5: infinite variance.
        Pareto,
        /// No mean at all.
        Cauchy,
    }

    impl Dist {
        const ALL: [Dist; 4] = [
            Dist::LogNormal,
            Dist::Exponential,
            Dist::Pareto,
            Dist::Cauchy,
        ];

        fn draw(self, g: &mut Gen) -> f64 {
            match self {
                Dist::LogNormal => g.normal().exp(),
                Dist::Exponential => -g.unif().ln(),
                Dist::Pareto => g.unif().powf(-1.0 / 1.5),
                Dist::Cauchy => (PI * (g.unif() - 0.5)).tan(),
            }
        }

        fn median(self) -> f64 {
            match self {
                Dist::LogNormal => 1.0,
                Dist::Exponential => LN_2,
                Dist::Pareto => 2f64.powf(1.0 / 1.5),
                Dist::Cauchy => 0.0,
            }
        }

        fn sample(self, g: &mut Gen, n: usize) -> Vec<f64> {
            (0..n).map(|_| self.draw(g)).collect()
        }
    }

    // ----- brute-force references -----

    fn u_by_definition(a: &[f64], b: &[f64]) -> f64 {
        let mut u = 0.0;
        for &x in a {
            for &y in b {
                u += if x > y {
                    1.0
                } else if x == y {
                    0.5
                } else {
                    0.0
                };
            }
        }
        u
    }

    /// Two-sided permutation p-value of U over all C(N, m) relabelings.
    fn mw_permutation_p(a: &[f64], b: &[f64]) -> f64 {
        let pooled = [a, b].concat();
        let (m, n) = (a.len(), b.len());
        let center = (m * n) as f64 / 2.0;
        let observed = (u_by_definition(a, b) - center).abs();
        let (mut hits, mut total) = (0u64, 0u64);
        for mask in 0u32..(1 << pooled.len()) {
            if mask.count_ones() as usize != m {
                continue;
            }
            let (mut x, mut y) = (vec![], vec![]);
            for (i, &v) in pooled.iter().enumerate() {
                if mask >> i & 1 == 1 {
                    x.push(v)
                } else {
                    y.push(v)
                }
            }
            total += 1;
            if (u_by_definition(&x, &y) - center).abs() >= observed - 1e-9 {
                hits += 1;
            }
        }
        hits as f64 / total as f64
    }

    /// Midranks of |d| by definition and the two-sided sign-flip p-value.
    fn signed_rank_permutation_p(d: &[f64]) -> (f64, f64) {
        let nz: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
        let ranks: Vec<f64> = nz
            .iter()
            .map(|x| {
                let below = nz.iter().filter(|y| y.abs() < x.abs()).count() as f64;
                let equal = nz.iter().filter(|y| y.abs() == x.abs()).count() as f64;
                below + (equal + 1.0) / 2.0
            })
            .collect();
        let v: f64 = nz
            .iter()
            .zip(&ranks)
            .filter(|(x, _)| **x > 0.0)
            .map(|(_, r)| r)
            .sum();
        let center = ranks.iter().sum::<f64>() / 2.0;
        let mut hits = 0u64;
        for signs in 0u32..(1 << nz.len()) {
            let w: f64 = (0..nz.len())
                .filter(|i| signs >> i & 1 == 1)
                .map(|i| ranks[i])
                .sum();
            if (w - center).abs() >= (v - center).abs() - 1e-9 {
                hits += 1;
            }
        }
        (v, hits as f64 / (1u64 << nz.len()) as f64)
    }

    /// Null counts of U for sizes m, n by enumerating rank subsets.
    fn mw_null_counts(m: usize, n: usize) -> Vec<u64> {
        let mut counts = vec![0u64; m * n + 1];
        for mask in 0u32..(1 << (m + n)) {
            if mask.count_ones() as usize == m {
                let rank_sum: usize = (0..m + n)
                    .filter(|i| mask >> i & 1 == 1)
                    .map(|i| i + 1)
                    .sum();
                counts[rank_sum - m * (m + 1) / 2] += 1;
            }
        }
        counts
    }

    /// Null counts of V for n values by enumerating sign vectors.
    fn signed_rank_null_counts(n: usize) -> Vec<u64> {
        let mut counts = vec![0u64; n * (n + 1) / 2 + 1];
        for signs in 0u32..(1 << n) {
            let v: usize = (0..n).filter(|i| signs >> i & 1 == 1).map(|i| i + 1).sum();
            counts[v] += 1;
        }
        counts
    }

    /// Largest k with 2 P(W <= k - 1) <= alpha, from raw counts.
    fn lower_rank_brute(counts: &[u64], alpha: f64) -> Option<usize> {
        let total: u64 = counts.iter().sum();
        let mut best = None;
        let mut below = 0u64;
        for (k, &c) in counts.iter().enumerate().skip(1) {
            below += counts[k - 1];
            if 2.0 * below as f64 / total as f64 <= alpha + 1e-12 {
                best = Some(k);
            }
            let _ = c;
        }
        best
    }

    fn median_of_sorted(v: &[f64]) -> f64 {
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }

    /// R's ?wilcox.test depression data (Hollander & Wolfe p. 29): first
    /// and second visit.
    const DEPRESSION_X: [f64; 9] = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
    #[allow(clippy::approx_constant)] // 3.14 is a measurement, not pi
    const DEPRESSION_Y: [f64; 9] = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];

    // ----- normal distribution -----

    #[test]
    fn normal_cdf_and_quantile_match_reference_values() {
        // R: pnorm(1.96), pnorm(-3), pnorm(-10); qnorm(.975), qnorm(.995),
        // qnorm(.05), qnorm(1e-10).
        assert_close!(normal_cdf(1.96), 0.9750021048517795, 1e-15);
        assert_close!(normal_cdf(-3.0), 0.0013498980316301035, 1e-17);
        assert_close!(normal_cdf(-10.0) / 7.619853024160527e-24, 1.0, 1e-12);
        assert_eq!(normal_cdf(0.0), 0.5);
        assert_close!(normal_quantile(0.975), 1.959963984540054, 1e-12);
        assert_close!(normal_quantile(0.995), 2.5758293035489004, 1e-12);
        assert_close!(normal_quantile(0.05), -1.6448536269514722, 1e-12);
        assert_close!(normal_quantile(1e-10), -6.361340902404056, 1e-9);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(f64::NAN).is_nan());
        for p in [1e-300, 1e-6, 0.2, 0.5, 0.7, 0.999999] {
            assert_close!(normal_cdf(normal_quantile(p)) / p, 1.0, 1e-12);
        }
        // erfc against Python's math.erfc (C library) across both branches.
        let erfc_reference = [
            (0.1, 0.8875370839817152),
            (0.5, 0.4795001221869535),
            (1.0, 0.15729920705028513),
            (1.4, 0.04771488023735121),
            (1.6, 0.023651616655355985),
            (2.0, 0.004677734981047265),
            (3.0, 2.2090496998585438e-05),
            (5.0, 1.5374597944280351e-12),
            (10.0, 2.088487583762545e-45),
            (26.0, 5.663192408856143e-296),
            (-2.0, 1.9953222650189528),
        ];
        for (x, want) in erfc_reference {
            assert_close!(erfc_precise(x) / want, 1.0, 5e-15);
        }
    }

    // ----- descriptive -----

    #[test]
    fn quantile_sorted_is_r_type_7() {
        // R: quantile(1:10, c(0, .1, .25, .5, .75, .9, 1))
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        let expected = [
            (0.0, 1.0),
            (0.1, 1.9),
            (0.25, 3.25),
            (0.5, 5.5),
            (0.75, 7.75),
            (0.9, 9.1),
            (1.0, 10.0),
        ];
        for (q, want) in expected {
            assert_close!(quantile_sorted(&x, q), want, 1e-12);
        }
        // R: quantile(c(2.5, 1, 7, 3.3)) -> 1.000 2.125 2.900 4.225 7.000
        let y = [1.0, 2.5, 3.3, 7.0];
        assert_close!(quantile_sorted(&y, 0.25), 2.125, 1e-12);
        assert_close!(quantile_sorted(&y, 0.5), 2.9, 1e-12);
        assert_close!(quantile_sorted(&y, 0.75), 4.225, 1e-12);
        assert!(quantile_sorted(&[], 0.5).is_nan());
        assert!(quantile_sorted(&y, f64::NAN).is_nan());
        assert_eq!(quantile_sorted(&[4.0], 0.3), 4.0);
        assert_eq!(quantile_sorted(&y, -1.0), 1.0);
        assert_eq!(quantile_sorted(&y, 2.0), 7.0);
    }

    #[test]
    fn summarize_matches_hand_computation() {
        // mean 22, var = (441+400+361+324+6084)/4 = 1902.5, median 3,
        // quartiles 2 and 4, |x - 3| = 2,1,0,1,97 -> MAD 1.
        let s = summarize(&[4.0, 100.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.n, 5);
        assert_close!(s.mean, 22.0, 1e-12);
        assert_close!(s.stddev, 1902.5f64.sqrt(), 1e-12);
        assert_eq!(
            (s.median, s.q1, s.q3, s.mad, s.min, s.max),
            (3.0, 2.0, 4.0, 1.0, 1.0, 100.0)
        );
        // Interpolated quartiles (R type 7, see above); |x - 2.9| sorted is
        // .4 .4 1.9 4.1 -> MAD 1.15; sd^2 = (.9025+6.0025+12.6025+.0225)/3.
        let s = summarize(&[2.5, 1.0, 7.0, 3.3]).unwrap();
        assert_close!(s.mean, 3.45, 1e-12);
        assert_close!(s.stddev, (19.53f64 / 3.0).sqrt(), 1e-12);
        assert_close!(s.q1, 2.125, 1e-12);
        assert_close!(s.median, 2.9, 1e-12);
        assert_close!(s.q3, 4.225, 1e-12);
        assert_close!(s.mad, 1.15, 1e-12);
    }

    #[test]
    fn summarize_edge_cases() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[1.0, f64::NAN]), None);
        assert_eq!(summarize(&[1.0, f64::INFINITY]), None);
        let one = summarize(&[5.0]).unwrap();
        assert_eq!(
            one,
            Summary {
                n: 1,
                mean: 5.0,
                stddev: 0.0,
                median: 5.0,
                min: 5.0,
                max: 5.0,
                q1: 5.0,
                q3: 5.0,
                mad: 0.0
            }
        );
        let same = summarize(&[0.1; 7]).unwrap();
        assert_eq!(
            (same.mean, same.stddev, same.mad, same.q1, same.q3),
            (0.1, 0.0, 0.0, 0.1, 0.1)
        );
        // Near f64::MAX the sum overflows; the mean must not.
        let big = summarize(&[f64::MAX, f64::MAX / 2.0]).unwrap();
        assert!(big.mean.is_finite() && big.mean > f64::MAX / 2.0);
    }

    #[test]
    fn geometric_mean_cases() {
        assert_close!(geometric_mean(&[2.0, 8.0]).unwrap(), 4.0, 1e-12);
        assert_close!(geometric_mean(&[1.0, 10.0, 100.0]).unwrap(), 10.0, 1e-12);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
        assert_eq!(geometric_mean(&[1.0, -2.0]), None);
        assert_eq!(geometric_mean(&[1.0, f64::NAN]), None);
        assert_eq!(geometric_mean(&[1.0, f64::INFINITY]), None);
    }

    // ----- median interval -----

    #[test]
    fn median_ci_ranks_match_binomial_tables() {
        // (n, level) -> ranks and exact coverage 1 - 2 P(B <= r - 1),
        // checked with exact integer arithmetic (Python math.comb) and the
        // usual tables (n = 10: 2nd and 9th; n = 100: 40th and 61st).
        let cases = [
            (6, 0.95, 1, 6, 0.96875),
            (10, 0.95, 2, 9, 0.978515625),
            (15, 0.95, 4, 12, 0.96484375),
            (20, 0.95, 6, 15, 0.9586105346679688),
            (40, 0.95, 14, 27, 0.9615226917157997),
            (100, 0.95, 40, 61, 0.9647997997822952),
        ];
        for (n, level, lo, hi, coverage) in cases {
            let (r, s, c) = median_ci_ranks(n, level).unwrap();
            assert_eq!((r, s), (lo, hi), "n = {n}");
            assert_close!(c, coverage, 1e-12);
        }
        assert_eq!(
            median_ci_ranks(1000, 0.95).map(|t| (t.0, t.1)),
            Some((469, 532))
        );
        assert_eq!(
            median_ci_ranks(101, 0.99).map(|t| (t.0, t.1)),
            Some((38, 64))
        );
        // Below n = 6 no pair reaches 95%: [min, max] covers 1 - 2/32.
        assert_eq!(median_ci_ranks(5, 0.95), None);
        assert_eq!(median_ci_ranks(0, 0.95), None);
        assert_eq!(median_ci_ranks(10, 1.0), None);
    }

    #[test]
    fn median_ci_ranks_for_huge_n_follow_the_normal_limit() {
        // r ~ n/2 + 1/2 - z sqrt(n)/2 = 499020.5 for n = 10^6.
        let (r, s, c) = median_ci_ranks(1_000_000, 0.95).unwrap();
        assert!((499_018..=499_022).contains(&r), "r = {r}");
        assert_eq!(s, 1_000_001 - r);
        assert!((0.95..0.9502).contains(&c), "coverage {c}");
        // Either side of the switch to the normal limit at n = 10^9 agrees:
        // r = n/2 - 1/2 - 1.959964 sqrt(n)/2 + O(1).
        for n in [1_000_000_000usize, 1_000_000_001, 4_000_000_000_000] {
            let (r, _, c) = median_ci_ranks(n, 0.95).unwrap();
            let expect = n as f64 / 2.0 - 1.959963984540054 * (n as f64).sqrt() / 2.0;
            assert!(
                (r as f64 - expect).abs() < 3.0,
                "n = {n}: r = {r}, expected ~{expect}"
            );
            assert!((0.95..0.95001).contains(&c), "coverage {c}");
        }
    }

    #[test]
    fn median_matches_r() {
        // R: median(c(3, 1, 2)) = 2; median(c(4, 1, 3, 2)) = 2.5.
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
        assert_eq!(median(&[1.0, f64::INFINITY]), None);
    }

    #[test]
    fn median_ci_picks_the_order_statistics() {
        // n = 10: ranks 2 and 9.
        let xs = [9.0, 2.0, 7.0, 4.0, 10.0, 1.0, 3.0, 8.0, 5.0, 6.0];
        let e = median_ci(&xs, 0.95).unwrap();
        assert_eq!((e.value, e.low, e.high, e.level), (5.5, 2.0, 9.0, 0.95));
        let all_same = median_ci(&[3.0; 12], 0.95).unwrap();
        assert_eq!(
            (all_same.value, all_same.low, all_same.high),
            (3.0, 3.0, 3.0)
        );
    }

    #[test]
    fn median_ci_refusals() {
        let five = [1.0, 2.0, 3.0, 4.0, 5.0];
        let err = median_ci(&five, 0.95).unwrap_err();
        assert_eq!(
            err,
            StatsError::TooFewSamples {
                needed: 6,
                have: 5,
                level_pct: 95.0
            }
        );
        assert_eq!(
            err.to_string(),
            "need at least 6 samples for a 95% interval, have 5"
        );
        assert_eq!(
            median_ci(&[], 0.99).unwrap_err(),
            StatsError::TooFewSamples {
                needed: 8,
                have: 0,
                level_pct: 99.0
            }
        );
        assert_eq!(median_ci(&[1.0; 10], f64::NAN), Err(StatsError::NonFinite));
        assert!(matches!(
            median_ci(&[1.0; 10], 1.0),
            Err(StatsError::TooFewSamples {
                needed: usize::MAX,
                ..
            })
        ));
        assert!(matches!(
            median_ci(&[1.0; 10], 0.0),
            Err(StatsError::TooFewSamples { .. })
        ));
        let mut with_nan = vec![1.0; 10];
        with_nan[3] = f64::NAN;
        assert_eq!(median_ci(&with_nan, 0.95), Err(StatsError::NonFinite));
    }

    // ----- outliers -----

    #[test]
    fn outliers_use_the_modified_z_score() {
        // median 10, |x - 10| = 0,1,1,2,2,3,3,15,60 -> MAD 2, scale 2.9652:
        // 25 scores 5.06 (out), 70 scores 20.2 (out), 13 scores 1.01 (in).
        let xs = [10.0, 11.0, 9.0, 12.0, 8.0, 13.0, 7.0, 25.0, 70.0];
        assert_eq!(outliers(&xs), vec![7, 8]);
        // 20 has |20 - 10| / 2.9652 = 3.37 < 3.5: kept.
        let ys = [10.0, 11.0, 9.0, 12.0, 8.0, 13.0, 7.0, 20.0];
        assert!(outliers(&ys).is_empty());
    }

    #[test]
    fn outliers_fall_back_to_mean_absolute_deviation_when_mad_is_zero() {
        // MAD = 0; MeanAD = 99/5 = 19.8, score 99 / (1.253314 * 19.8) = 3.99.
        assert_eq!(outliers(&[1.0, 1.0, 1.0, 1.0, 100.0]), vec![4]);
        // With 4 values the same outlier scores 3.19: too little evidence.
        assert!(outliers(&[1.0, 1.0, 1.0, 100.0]).is_empty());
        assert!(outliers(&[2.0; 9]).is_empty());
        assert!(outliers(&[]).is_empty());
        assert!(outliers(&[1.0]).is_empty());
        assert_eq!(outliers(&[1.0, f64::NAN, 1.0, f64::INFINITY]), vec![1, 3]);
        assert_eq!(outliers(&[f64::NAN]), vec![0]);
    }

    // ----- Mann-Whitney -----

    #[test]
    fn mann_whitney_matches_r_documentation_example() {
        // ?wilcox.test, Hollander & Wolfe p. 69: wilcox.test(x, y,
        // alternative = "g") gives W = 35, p = 0.1272; two-sided 764/3003.
        let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
        let y = [1.15, 0.88, 0.90, 0.74, 1.21];
        let r = mann_whitney(&x, &y).unwrap();
        assert_eq!(r.statistic, 35.0);
        assert!(r.exact);
        assert_close!(r.p_value, 764.0 / 3003.0, 1e-12);
        assert_close!(r.p_value, 0.2544, 1e-4);
        // Swapping the samples gives U = 50 - 35 and the same p.
        let s = mann_whitney(&y, &x).unwrap();
        assert_eq!(s.statistic, 15.0);
        assert_close!(s.p_value, r.p_value, 1e-12);
        // The enumeration reference agrees.
        assert_close!(mw_permutation_p(&x, &y), 764.0 / 3003.0, 1e-12);
    }

    #[test]
    fn mann_whitney_normal_approximation_matches_r() {
        // wilcox.test(x, y, "g", exact = FALSE, correct = FALSE): p = 0.1103.
        assert_close!(
            mw_normal_p(35.0, 10, 5, 0.0, 0.0),
            2.0 * 0.110335680959923,
            1e-9
        );
        // Ties, by hand: a = 1 2 2 3, b = 2 3 4 4 5: U = 2.5; tie groups of
        // 3, 2, 2 give sum(t^3 - t) = 36; var = 20/12 (10 - 36/72) = 15.83;
        // z = (7.5 - 0.5) / sqrt(var); p = 0.0785458509511907 (NormalDist).
        // (Small samples with ties now get the exact conditional p-value;
        // the approximation is checked directly.)
        assert_close!(
            mw_normal_p(2.5, 4, 5, 36.0, 0.5),
            0.07854585095119071,
            1e-12
        );
        let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 4.0, 5.0]).unwrap();
        assert_eq!(r.statistic, 2.5);
        assert!(r.exact);
    }

    #[test]
    fn mann_whitney_exact_matches_permutation_enumeration() {
        let mut g = Gen::new(11);
        for (m, n) in [
            (1, 1),
            (1, 6),
            (2, 9),
            (3, 3),
            (4, 7),
            (6, 6),
            (7, 5),
            (5, 9),
        ] {
            for _ in 0..3 {
                let a: Vec<f64> = (0..m).map(|_| g.normal()).collect();
                let b: Vec<f64> = (0..n).map(|_| g.normal() + 0.7).collect();
                let r = mann_whitney(&a, &b).unwrap();
                assert!(r.exact);
                assert_eq!(r.statistic, u_by_definition(&a, &b));
                assert_close!(r.p_value, mw_permutation_p(&a, &b), 1e-12);
            }
        }
    }

    #[test]
    fn mann_whitney_exact_distribution_matches_enumerated_counts() {
        // Every tail P(U <= t) of the DP against enumeration.
        for (m, n) in [(1, 1), (2, 3), (5, 5), (3, 10), (8, 7)] {
            let counts = mw_null_counts(m, n);
            let total: u64 = counts.iter().sum();
            let cdf = mw_cdf_prefix(m, n, m * n);
            let mut acc = 0;
            for t in 0..=m * n {
                acc += counts[t];
                assert_close!(cdf[t], acc as f64 / total as f64, 1e-13);
            }
        }
        // Large sizes against exact rational values (Python integers, same
        // product formula, total checked against C(m+n, m)): the f64 DP
        // keeps full relative precision deep into the tails.
        let exact = [
            (50, 50, 10, 1.3777197699771492e-27),
            (50, 50, 500, 3.5967866378289605e-08),
            (50, 50, 900, 0.007761972615356092),
            (50, 50, 1100, 0.15206980726517322),
            (50, 50, 1250, 0.5013688955007638),
            (20, 200, 100, 7.799054794383687e-20),
            (20, 200, 1000, 7.351984459924795e-05),
            (20, 200, 1600, 0.07095324174380897),
            (3, 500, 5, 7.588602507150954e-07),
            (3, 500, 37, 8.731635759790566e-05),
            (3, 500, 200, 0.011101793466602157),
        ];
        for (m, n, t, want) in exact {
            assert_close!(mw_cdf_prefix(m, n, t)[t] / want, 1.0, 1e-12);
        }
        // Large, lopsided: the DP stays a distribution (no overflow, no
        // negative mass) where integer counts would overflow.
        let cdf = mw_cdf_prefix(50, 2000, 50 * 2000);
        assert_close!(*cdf.last().unwrap(), 1.0, 1e-9);
        assert!(cdf.windows(2).all(|w| w[1] >= w[0]));
        assert_close!(
            cdf[50 * 1000 - 1] + (cdf[50 * 1000] - cdf[50 * 1000 - 1]) / 2.0,
            0.5,
            1e-9
        );
    }

    #[test]
    fn mann_whitney_edge_cases() {
        assert!(matches!(
            mann_whitney(&[], &[1.0]),
            Err(StatsError::TooFewSamples {
                needed: 1,
                have: 0,
                ..
            })
        ));
        assert!(mann_whitney(&[1.0], &[]).is_err());
        assert_eq!(
            mann_whitney(&[1.0, f64::NAN], &[1.0]),
            Err(StatsError::NonFinite)
        );
        let one = mann_whitney(&[1.0], &[2.0]).unwrap();
        assert_eq!((one.statistic, one.p_value), (0.0, 1.0));
        let tied = mann_whitney(&[3.0; 8], &[3.0; 5]).unwrap();
        assert_eq!(
            (tied.statistic, tied.p_value, tied.exact),
            (20.0, 1.0, true)
        );
        // Fully separated 50 vs 50: exact p = 2 / C(100, 50).
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        let b: Vec<f64> = (100..150).map(f64::from).collect();
        let r = mann_whitney(&a, &b).unwrap();
        assert!(r.exact);
        assert_close!(r.p_value / (2.0 / 1.0089134454556419e29), 1.0, 1e-9);
        // 51 vs 51 switches to the normal approximation.
        let a: Vec<f64> = (0..51).map(f64::from).collect();
        let b: Vec<f64> = (0..51).map(|i| f64::from(i) + 0.5).collect();
        assert!(!mann_whitney(&a, &b).unwrap().exact);
    }

    // ----- Wilcoxon signed rank -----

    #[test]
    fn wilcoxon_matches_r_depression_example() {
        // ?wilcox.test (Hollander & Wolfe p. 29): wilcox.test(x, y, paired =
        // TRUE) gives V = 40, p = 0.03906 (= 20/512); on y - x, V = 5.
        let (x, y) = (DEPRESSION_X, DEPRESSION_Y);
        let d: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        let r = wilcoxon_signed_rank(&d).unwrap();
        assert_eq!(r.statistic, 40.0);
        assert!(r.exact);
        assert_close!(r.p_value, 20.0 / 512.0, 1e-12);
        assert_close!(r.p_value, 0.03906, 1e-5);
        let e: Vec<f64> = d.iter().map(|v| -v).collect();
        let s = wilcoxon_signed_rank(&e).unwrap();
        assert_eq!(s.statistic, 5.0);
        assert_close!(s.p_value, 20.0 / 512.0, 1e-12);
        // wilcox.test(y - x, "less", exact = FALSE, correct = FALSE) gives
        // p = 0.01908 (one-sided).
        assert_close!(
            signed_rank_normal_p(5.0, 9, 0.0, 0.0),
            2.0 * 0.01907585508670756,
            1e-12
        );
    }

    #[test]
    fn wilcoxon_exact_matches_sign_flip_enumeration() {
        let mut g = Gen::new(12);
        for n in [1, 2, 5, 8, 12, 15] {
            for _ in 0..3 {
                let d: Vec<f64> = (0..n).map(|_| g.normal() + 0.5).collect();
                let r = wilcoxon_signed_rank(&d).unwrap();
                let (v, p) = signed_rank_permutation_p(&d);
                assert!(r.exact);
                assert_eq!(r.statistic, v);
                assert_close!(r.p_value, p, 1e-12);
            }
        }
        // The DP against enumerated counts for every tail.
        for n in [1, 4, 9, 13] {
            let counts = signed_rank_null_counts(n);
            let cdf = signed_rank_cdf_prefix(n, n * (n + 1) / 2);
            let mut acc = 0;
            for (t, c) in counts.iter().enumerate() {
                acc += c;
                assert_close!(cdf[t], acc as f64 / (1u64 << n) as f64, 1e-15);
            }
        }
    }

    #[test]
    fn wilcoxon_zeros_and_ties() {
        // Zeros dropped (Wilcoxon's method); the rest is exact and equals the
        // conditional sign-flip test on the non-zero values.
        let d = [0.0, 1.3, -0.4, 2.2, 0.0, 0.9, 1.7, -0.1, 3.1];
        let r = wilcoxon_signed_rank(&d).unwrap();
        let (v, p) = signed_rank_permutation_p(&d);
        assert!(r.exact);
        assert_eq!(r.statistic, v);
        assert_close!(r.p_value, p, 1e-12);
        // Ties, by hand: |d| = 1 1 2 2 3 3 4 (zero dropped), midranks
        // 1.5 1.5 3.5 3.5 5.5 5.5 7; positives 1, 2, 2, 3, 4 -> V = 24.5 - 3.5
        // = 21; var = 7*8*15/24 - 18/48; z = (7 - 0.5)/sd; p = 0.26931814709625.
        // (Exact conditional on the ties at this size; the approximation is
        // checked directly.)
        assert_close!(
            signed_rank_normal_p(21.0, 7, 18.0, 0.5),
            0.2693181470962549,
            1e-12
        );
        let t = wilcoxon_signed_rank(&[1.0, -1.0, 2.0, 2.0, 3.0, -3.0, 4.0, 0.0]).unwrap();
        assert_eq!(t.statistic, 21.0);
        assert!(t.exact);
    }

    #[test]
    fn wilcoxon_edge_cases() {
        assert!(matches!(
            wilcoxon_signed_rank(&[]),
            Err(StatsError::TooFewSamples {
                needed: 1,
                have: 0,
                ..
            })
        ));
        assert_eq!(
            wilcoxon_signed_rank(&[f64::NAN]),
            Err(StatsError::NonFinite)
        );
        let zeros = wilcoxon_signed_rank(&[0.0; 10]).unwrap();
        assert_eq!((zeros.statistic, zeros.p_value), (0.0, 1.0));
        let one = wilcoxon_signed_rank(&[2.0]).unwrap();
        assert_eq!((one.statistic, one.p_value), (1.0, 1.0));
        // All tied: exact conditional up to 100 values (only the all-positive
        // pattern is as extreme), the normal approximation above.
        let same = wilcoxon_signed_rank(&[2.0; 60]).unwrap();
        assert_eq!(same.statistic, 1830.0);
        assert!(same.exact);
        assert_close!(same.p_value, 2.0 * 0.5f64.powi(60), 1e-9);
        let same = wilcoxon_signed_rank(&[2.0; 120]).unwrap();
        assert_eq!(same.statistic, 7260.0);
        assert!(!same.exact && same.p_value < 1e-10);
    }

    // ----- Hodges-Lehmann -----

    #[test]
    fn hodges_lehmann_shift_matches_brute_force() {
        let mut g = Gen::new(13);
        for (m, n, level) in [
            (4, 4, 0.95),
            (5, 7, 0.95),
            (6, 6, 0.9),
            (3, 11, 0.95),
            (8, 6, 0.99),
            (7, 7, 0.8),
        ] {
            let a: Vec<f64> = (0..m).map(|_| g.normal().exp()).collect();
            let b: Vec<f64> = (0..n).map(|_| (g.normal() + 0.3).exp()).collect();
            let mut diffs: Vec<f64> = b
                .iter()
                .flat_map(|y| a.iter().map(move |x| y - x))
                .collect();
            diffs.sort_by(f64::total_cmp);
            let k = lower_rank_brute(&mw_null_counts(m, n), 1.0 - level).unwrap();
            let e = hodges_lehmann_shift(&a, &b, level).unwrap();
            assert_eq!(e.low, diffs[k - 1], "m={m} n={n}");
            assert_eq!(e.high, diffs[m * n - k]);
            assert_close!(e.value, median_of_sorted(&diffs), 1e-12);
            assert_eq!(e.level, level);
        }
    }

    #[test]
    fn hodges_lehmann_shift_refusals_and_edges() {
        // 3 vs 3 has C(6, 3) = 20 splits: 2/20 > 0.05. 4 vs 4 is the minimum.
        assert_eq!(
            hodges_lehmann_shift(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.95),
            Err(StatsError::TooFewSamples {
                needed: 4,
                have: 3,
                level_pct: 95.0
            })
        );
        assert!(hodges_lehmann_shift(&[1.0, 2.0, 3.0, 4.0], &[4.0, 5.0, 6.0, 7.0], 0.95).is_ok());
        assert!(matches!(
            hodges_lehmann_shift(&[], &[1.0; 50], 0.95),
            Err(StatsError::TooFewSamples { .. })
        ));
        // One value against 39: 2/40 = 0.05 is just enough.
        assert!(hodges_lehmann_shift(&[1.0], &[2.0; 39], 0.95).is_ok());
        assert!(hodges_lehmann_shift(&[1.0], &[2.0; 38], 0.95).is_err());
        assert_eq!(
            hodges_lehmann_shift(&[f64::NAN; 5], &[1.0; 5], 0.95),
            Err(StatsError::NonFinite)
        );
        let tied = hodges_lehmann_shift(&[3.0; 10], &[3.5; 12], 0.95).unwrap();
        assert_eq!((tied.value, tied.low, tied.high), (0.5, 0.5, 0.5));
        // Extreme magnitudes overflow differences to infinity but must not panic.
        let huge = hodges_lehmann_shift(&[-f64::MAX; 6], &[f64::MAX; 6], 0.95).unwrap();
        assert_eq!(huge.value, f64::INFINITY);
    }

    #[test]
    fn hodges_lehmann_shift_large_samples_use_normal_ranks_and_exact_selection() {
        // 300 x 300 = 90,000 pairs: beyond the collect threshold, so the
        // implicit selection iterates. k = floor(mn/2 + 1/2 - z sqrt(mn(m+n+1)/12))
        // = floor(45000.5 - 1.959964 * 2123.0874) = 40839.
        let mut g = Gen::new(14);
        let a: Vec<f64> = (0..300).map(|_| (g.normal() * 0.2).exp()).collect();
        let b: Vec<f64> = (0..300)
            .map(|_| ((g.normal() * 0.2).exp() * 20.0).round() / 20.0)
            .collect();
        let mut diffs: Vec<f64> = b
            .iter()
            .flat_map(|y| a.iter().map(move |x| y - x))
            .collect();
        diffs.sort_by(f64::total_cmp);
        let e = hodges_lehmann_shift(&a, &b, 0.95).unwrap();
        assert_eq!(e.low, diffs[40839 - 1]);
        assert_eq!(e.high, diffs[90000 - 40839]);
        assert_close!(e.value, median_of_sorted(&diffs), 1e-12);
    }

    #[test]
    fn implicit_selection_matches_sorting_for_every_rank() {
        let mut g = Gen::new(15);
        // Continuous data, and data with heavy ties (3 distinct values).
        for ties in [false, true] {
            let draw = |g: &mut Gen| {
                if ties {
                    (g.unif() * 3.0).floor()
                } else {
                    g.normal()
                }
            };
            let sa = sorted_copy(&(0..37).map(|_| draw(&mut g)).collect::<Vec<_>>());
            let sb = sorted_copy(&(0..41).map(|_| draw(&mut g)).collect::<Vec<_>>());
            let mut diffs: Vec<f64> = sb
                .iter()
                .flat_map(|y| sa.iter().map(move |x| y - x))
                .collect();
            diffs.sort_by(f64::total_cmp);
            // Every 7th rank plus both ends and the middle; collect_at = 8
            // forces many pivot rounds even on this small input.
            let ranks = |len: usize| -> Vec<usize> {
                let mut r: Vec<usize> = (0..len)
                    .step_by(7)
                    .chain([1, len / 2, len - 2, len - 1])
                    .collect();
                r.sort_unstable();
                r
            };
            let want: Vec<usize> = ranks(diffs.len());
            let got = pairwise_difference_order_stats(&sa, &sb, &want, 8);
            assert_eq!(
                got,
                want.iter().map(|&k| diffs[k]).collect::<Vec<_>>(),
                "ties = {ties}"
            );

            let sd = sorted_copy(&(0..45).map(|_| draw(&mut g)).collect::<Vec<_>>());
            let mut walsh = vec![];
            for i in 0..sd.len() {
                for j in i..sd.len() {
                    walsh.push(0.5 * sd[i] + 0.5 * sd[j]);
                }
            }
            walsh.sort_by(f64::total_cmp);
            let want = ranks(walsh.len());
            let got = walsh_average_order_stats(&sd, &want, 8);
            assert_eq!(
                got,
                want.iter().map(|&k| walsh[k]).collect::<Vec<_>>(),
                "ties = {ties}"
            );
        }
    }

    #[test]
    fn hodges_lehmann_paired_matches_brute_force_and_r_example() {
        let mut g = Gen::new(16);
        for (n, level) in [(6, 0.95), (9, 0.95), (12, 0.9), (15, 0.99), (10, 0.8)] {
            let d: Vec<f64> = (0..n).map(|_| g.normal() + 0.4).collect();
            let mut walsh = vec![];
            for i in 0..n {
                for j in i..n {
                    walsh.push((d[i] + d[j]) / 2.0);
                }
            }
            walsh.sort_by(f64::total_cmp);
            let k = lower_rank_brute(&signed_rank_null_counts(n), 1.0 - level).unwrap();
            let e = hodges_lehmann_paired(&d, level).unwrap();
            assert_close!(e.low, walsh[k - 1], 1e-12);
            assert_close!(e.high, walsh[walsh.len() - k], 1e-12);
            assert_close!(e.value, median_of_sorted(&walsh), 1e-12);
        }
        // Depression data (x - y): 45 Walsh averages, k = 6 at 95% (2 P(V <= 5)
        // = 20/512 <= 0.05 < 2 P(V <= 6) = 28/512).
        let (x, y) = (DEPRESSION_X, DEPRESSION_Y);
        let d: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        assert_eq!(signed_rank_ci_rank(9, 0.05), Some(6));
        let e = hodges_lehmann_paired(&d, 0.95).unwrap();
        assert!(e.low > 0.0 && e.low < e.value && e.value < e.high);
    }

    #[test]
    fn hodges_lehmann_paired_edges() {
        assert_eq!(
            hodges_lehmann_paired(&[1.0; 5], 0.95),
            Err(StatsError::TooFewSamples {
                needed: 6,
                have: 5,
                level_pct: 95.0
            })
        );
        assert!(hodges_lehmann_paired(&[], 0.95).is_err());
        assert_eq!(
            hodges_lehmann_paired(&[f64::INFINITY; 8], 0.95),
            Err(StatsError::NonFinite)
        );
        let zeros = hodges_lehmann_paired(&[0.0; 10], 0.95).unwrap();
        assert_eq!((zeros.value, zeros.low, zeros.high), (0.0, 0.0, 0.0));
        // Large n: normal ranks and implicit selection agree with brute force.
        // n = 400: N = 80,200; sd = sqrt(400*401*801/24) = 2313.7308;
        // k = floor(40100.5 - 1.959964 * 2313.7308) = 35565.
        let mut g = Gen::new(17);
        let d: Vec<f64> = (0..400).map(|_| g.normal() + 0.1).collect();
        let mut walsh = vec![];
        for i in 0..d.len() {
            for j in i..d.len() {
                walsh.push(0.5 * d[i] + 0.5 * d[j]);
            }
        }
        walsh.sort_by(f64::total_cmp);
        let e = hodges_lehmann_paired(&d, 0.95).unwrap();
        assert_eq!(e.low, walsh[35565 - 1]);
        assert_eq!(e.high, walsh[walsh.len() - 35565]);
    }

    // ----- bootstrap -----

    #[test]
    fn bootstrap_median_order_statistics_follow_the_exact_bootstrap_law() {
        // Odd n: the bootstrap median is <= x_(j) exactly when at least
        // (n+1)/2 of n draws are among the j smallest: P = P(Bin(n, j/n) >= 6).
        let n = 11;
        let xs: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let (reps, median) = bootstrap_medians(&mut xs.clone(), 40_000, &mut rng);
        assert_eq!(median, 6.0);
        for j in 1..n {
            let p = j as f64 / n as f64;
            let exact: f64 = (6..=n)
                .map(|i| choose_f64(n, i) * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32))
                .sum();
            let observed =
                reps.iter().filter(|&&r| r <= j as f64).count() as f64 / reps.len() as f64;
            assert_close!(observed, exact, 0.01);
        }
    }

    #[test]
    fn bootstrap_median_shortcut_matches_naive_resampling() {
        // Same law as literally resampling and taking the median (odd and
        // even n, skewed data): Kolmogorov-Smirnov distance of 4000 vs 4000
        // replicates below 0.05 (the 1% critical value is 0.036).
        let mut g = Gen::new(19);
        for n in [15, 16, 40] {
            let xs = Dist::LogNormal.sample(&mut g, n);
            let mut rng = ChaCha8Rng::seed_from_u64(20);
            let (mut fast, _) = bootstrap_medians(&mut xs.clone(), 4000, &mut rng);
            let mut naive: Vec<f64> = (0..4000)
                .map(|_| {
                    let mut r: Vec<f64> = (0..n).map(|_| xs[rng.random_range(0..n)]).collect();
                    r.sort_by(f64::total_cmp);
                    median_of_sorted(&r)
                })
                .collect();
            fast.sort_by(f64::total_cmp);
            naive.sort_by(f64::total_cmp);
            let ks = fast
                .iter()
                .chain(&naive)
                .map(|&t| {
                    let f = fast.partition_point(|&v| v <= t) as f64 / 4000.0;
                    let h = naive.partition_point(|&v| v <= t) as f64 / 4000.0;
                    (f - h).abs()
                })
                .fold(0.0, f64::max);
            assert!(ks < 0.05, "n = {n}: KS distance {ks}");
        }
    }

    #[test]
    fn ratio_of_medians_estimate_and_refusals() {
        let a: Vec<f64> = (1..=21).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let e = ratio_of_medians(&a, &b, 0.95, 7).unwrap();
        assert_eq!(e.value, 2.0);
        assert!(
            e.low < 2.0 && e.high > 2.0 && e.low > 1.0 && e.high < 4.0,
            "{e:?}"
        );
        assert_eq!(
            ratio_of_medians(&a, &b, 0.95, 7).unwrap(),
            e,
            "seeded: reproducible"
        );
        let same = ratio_of_medians(&[4.0; 10], &[5.0; 7], 0.9, 1).unwrap();
        assert_eq!((same.value, same.low, same.high), (1.25, 1.25, 1.25));
        assert_eq!(
            ratio_of_medians(&a[..5], &b, 0.95, 1),
            Err(StatsError::TooFewSamples {
                needed: 6,
                have: 5,
                level_pct: 95.0
            })
        );
        let neg: Vec<f64> = a.iter().map(|x| x - 15.0).collect();
        assert_eq!(
            ratio_of_medians(&neg, &b, 0.95, 1),
            Err(StatsError::NonPositive)
        );
        assert_eq!(
            ratio_of_medians(&b, &neg, 0.95, 1),
            Err(StatsError::NonPositive)
        );
        assert_eq!(
            ratio_of_medians(&[0.0; 8], &b, 0.95, 1),
            Err(StatsError::NonPositive)
        );
        let mut nan = a.clone();
        nan[0] = f64::NAN;
        assert_eq!(
            ratio_of_medians(&nan, &b, 0.95, 1),
            Err(StatsError::NonFinite)
        );
        assert!(ratio_of_medians(&a, &b, 1.5, 1).is_err());
    }

    #[test]
    fn bootstrap_ci_of_the_mean() {
        // 1..20: mean 10.5, sd 5.916; the percentile interval is about
        // 10.5 +- 1.96 * 5.916 / sqrt(20) * sqrt(19/20) = 10.5 +- 2.53.
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let e = bootstrap_ci(&xs, &mean, 0.95, 4000, 3).unwrap();
        assert_eq!(e.value, 10.5);
        assert_close!(e.low, 10.5 - 2.53, 0.3);
        assert_close!(e.high, 10.5 + 2.53, 0.3);
        assert_eq!(bootstrap_ci(&xs, &mean, 0.95, 4000, 3).unwrap(), e);
        // 0 resamples means the default.
        assert!(bootstrap_ci(&xs, &mean, 0.95, 0, 3).is_ok());
        assert_eq!(
            bootstrap_ci(&xs[..4], &mean, 0.95, 100, 3),
            Err(StatsError::TooFewSamples {
                needed: 6,
                have: 4,
                level_pct: 95.0
            })
        );
        assert_eq!(
            bootstrap_ci(&[f64::NAN; 10], &mean, 0.95, 100, 3),
            Err(StatsError::NonFinite)
        );
        let ln_first = |v: &[f64]| (v[0] - 10.0).ln();
        assert_eq!(
            bootstrap_ci(&xs, &ln_first, 0.95, 100, 3),
            Err(StatsError::NonFinite)
        );
    }

    // ----- sequential -----

    #[test]
    fn sequential_alpha_spends_at_most_alpha() {
        for alpha in [0.001, 0.01, 0.05, 0.1, 0.5, 1.0] {
            for looks in 1..=50 {
                let levels = sequential_alpha(alpha, looks);
                assert_eq!(levels.len(), looks);
                assert!(levels.iter().all(|&l| l >= 0.0));
                let sum: f64 = levels.iter().sum();
                assert!(sum <= alpha, "alpha {alpha}, {looks} looks: sum {sum}");
                assert!(sum > alpha * 0.999_999, "nearly all of alpha is used");
            }
        }
        // O'Brien-Fleming shape at 5% over 4 looks: increments of
        // 2 - 2 Phi(1.959964 / sqrt(t)) at t = .25, .5, .75, 1 (Python,
        // math.erfc): 8.857543832e-5, 0.005486021242, 0.018050524637,
        // 0.026374878682.
        let l = sequential_alpha(0.05, 4);
        assert_close!(l[0], 8.857543832130332e-05, 1e-12);
        assert_close!(l[1], 0.005486021242463224, 1e-10);
        assert_close!(l[2], 0.018050524636816778, 1e-10);
        assert_close!(l[3], 0.02637487868239874, 1e-10);
        for looks in 2..=20 {
            let l = sequential_alpha(0.05, looks);
            assert!(l.windows(2).all(|w| w[0] <= w[1]), "early looks get less");
        }
        assert!(sequential_alpha(0.05, 0).is_empty());
        assert_eq!(sequential_alpha(f64::NAN, 3), vec![0.0; 3]);
        assert_eq!(sequential_alpha(-1.0, 2), vec![0.0; 2]);
    }

    // ----- trend -----

    #[test]
    fn trend_matches_hand_computation() {
        // 1 3 2 5 4: 8 concordant, 2 discordant pairs -> S = 6, tau = 0.6;
        // var = 5*4*15/18; z = (6 - 1)/sqrt(var); p = 0.22067136191984682.
        // Pairwise slopes sorted: -1 -1 1/3 .5 .75 1 1 4/3 2 3 -> 0.875.
        let t = trend(&[1.0, 3.0, 2.0, 5.0, 4.0]).unwrap();
        assert_close!(t.tau, 0.6, 1e-12);
        assert_close!(t.p_value, 0.22067136191984682, 1e-12);
        assert_close!(t.slope, 0.875, 1e-12);
        // With ties: 1 2 2 3 2 4: S = 5 + 2 + 2 + 0 + 1 = 10; three 2s give
        // n1 = 3 tied pairs and sum t(t-1)(2t+5) = 66; var = (510 - 66)/18;
        // tau_b = 10 / sqrt(15 * 12) = 0.7453559924999299; p = 0.0699674482984456.
        let t = trend(&[1.0, 2.0, 2.0, 3.0, 2.0, 4.0]).unwrap();
        assert_close!(t.tau, 0.7453559924999299, 1e-12);
        assert_close!(t.p_value, 0.06996744829844559, 1e-12);
        // Slopes: 1 .5 .667 .25 .6 | 0 .5 0 .667 | 1 0 .667 | -1 .5 | 2 -> median 0.5.
        assert_close!(t.slope, 0.5, 1e-12);
    }

    #[test]
    fn inversion_count_matches_definition() {
        let mut g = Gen::new(21);
        for n in [0, 1, 2, 3, 7, 64, 100, 257] {
            let xs: Vec<f64> = (0..n).map(|_| (g.unif() * 10.0).floor()).collect();
            let mut brute = 0;
            for i in 0..n {
                for j in i + 1..n {
                    if xs[i] > xs[j] {
                        brute += 1;
                    }
                }
            }
            let (inversions, sorted) = count_inversions(&xs);
            assert_eq!(inversions, brute, "n = {n}");
            assert_eq!(sorted, sorted_copy(&xs));
        }
    }

    #[test]
    fn trend_edges_and_subsampled_slope() {
        assert!(matches!(
            trend(&[1.0, 2.0, 3.0]),
            Err(StatsError::TooFewSamples {
                needed: 4,
                have: 3,
                ..
            })
        ));
        assert!(trend(&[]).is_err());
        assert_eq!(
            trend(&[1.0, f64::NAN, 2.0, 3.0]),
            Err(StatsError::NonFinite)
        );
        let flat = trend(&[2.0; 10]).unwrap();
        assert_eq!((flat.tau, flat.p_value, flat.slope), (0.0, 1.0, 0.0));
        let up = trend(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!((up.tau, up.slope), (1.0, 1.0));
        // n = 5000 > 2000: slope from 2^20 sampled pairs. Line 0.003 i plus
        // N(0, 1) noise: the exact Theil-Sen slope has a standard error of
        // about 1.3e-5 here, and the subsample adds much less.
        let mut g = Gen::new(22);
        let xs: Vec<f64> = (0..5000).map(|i| 0.003 * i as f64 + g.normal()).collect();
        let t = trend(&xs).unwrap();
        assert_close!(t.slope, 0.003, 1e-4);
        assert!(t.p_value < 1e-10 && t.tau > 0.5);
    }

    #[test]
    fn no_function_panics_on_hostile_inputs() {
        let inputs: Vec<Vec<f64>> = vec![
            vec![],
            vec![f64::NAN],
            vec![f64::INFINITY, 1.0],
            vec![f64::NEG_INFINITY; 7],
            vec![f64::MAX, -f64::MAX, f64::MAX, -f64::MAX, 0.0, 1.0, -1.0],
            vec![0.0; 9],
            vec![-0.0, 0.0, -0.0, 0.0, 1.0, -1.0, 5e-324, -5e-324],
            vec![1e-300, 2e-300, 3e-300, 4e-300, 5e-300, 6e-300],
            vec![1e300; 64],
            (0..60).map(|i| f64::from(i % 3)).collect(),
            (0..7).map(f64::from).collect(),
        ];
        let levels = [
            f64::NAN,
            -1.0,
            0.0,
            1e-12,
            0.5,
            0.95,
            0.999_999,
            1.0,
            2.0,
            f64::INFINITY,
        ];
        let median = |v: &[f64]| quantile_sorted(&sorted_copy(v), 0.5);
        for a in &inputs {
            let _ = summarize(a);
            let _ = outliers(a);
            let _ = wilcoxon_signed_rank(a);
            let _ = trend(a);
            let _ = geometric_mean(a);
            for q in [f64::NAN, -1.0, 0.0, 0.3, 1.0, 7.0] {
                let _ = quantile_sorted(&sorted_copy(a), q);
            }
            for &level in &levels {
                let _ = median_ci(a, level);
                let _ = hodges_lehmann_paired(a, level);
                let _ = bootstrap_ci(a, &median, level, 50, 1);
                for b in &inputs {
                    let _ = hodges_lehmann_shift(a, b, level);
                    let _ = ratio_of_medians(a, b, level, 1);
                }
            }
            for b in &inputs {
                let _ = mann_whitney(a, b);
            }
        }
        for alpha in [f64::NAN, -1.0, 0.0, 1e-300, 0.05, 1.0, 3.0, f64::INFINITY] {
            for looks in [0, 1, 2, 1000] {
                let _ = sequential_alpha(alpha, looks);
            }
        }
        for p in [f64::NAN, -1.0, 0.0, 1e-320, 0.5, 1.0, 2.0] {
            let _ = normal_quantile(p);
        }
        for x in [f64::NAN, f64::NEG_INFINITY, -40.0, 0.0, 40.0, f64::INFINITY] {
            let _ = normal_cdf(x);
        }
        let _ = median_ci_ranks(usize::MAX, 0.95);
        let _ = median_ci_ranks(3, f64::NAN);
    }

    // ----- simulations -----

    fn rate(hits: usize, trials: usize) -> f64 {
        hits as f64 / trials as f64
    }

    #[test]
    fn sim_mann_whitney_false_positive_rate_is_nominal() {
        // A/A from skewed and heavy-tailed laws; small exact and large
        // approximate sizes, balanced and not. 1500 trials: sd 0.0056.
        let mut g = Gen::new(100);
        for dist in Dist::ALL {
            for (m, n) in [(8, 8), (12, 30), (70, 60)] {
                let trials = 1500;
                let hits = (0..trials)
                    .filter(|_| {
                        let a = dist.sample(&mut g, m);
                        let b = dist.sample(&mut g, n);
                        mann_whitney(&a, &b).unwrap().p_value < 0.05
                    })
                    .count();
                let r = rate(hits, trials);
                eprintln!("MW false positives {dist:?} {m}v{n}: {r}");
                assert!((0.02..=0.08).contains(&r), "{dist:?} {m}v{n}: {r}");
            }
        }
        // Heavily tied data (lognormal rounded to 0.5): the tie-corrected
        // normal approximation keeps the level.
        let trials = 1500;
        let hits = (0..trials)
            .filter(|_| {
                let a: Vec<f64> = (0..25)
                    .map(|_| (Dist::LogNormal.draw(&mut g) * 2.0).round() / 2.0)
                    .collect();
                let b: Vec<f64> = (0..25)
                    .map(|_| (Dist::LogNormal.draw(&mut g) * 2.0).round() / 2.0)
                    .collect();
                mann_whitney(&a, &b).unwrap().p_value < 0.05
            })
            .count();
        assert!(
            (0.02..=0.08).contains(&rate(hits, trials)),
            "tied: {}",
            rate(hits, trials)
        );
    }

    #[test]
    fn sim_wilcoxon_false_positive_rate_is_nominal() {
        // Paired A/A: x, y iid from a skewed law, so d = x - y is symmetric.
        let mut g = Gen::new(101);
        for dist in Dist::ALL {
            for n in [10, 25, 80] {
                let trials = 1500;
                let hits = (0..trials)
                    .filter(|_| {
                        let d: Vec<f64> = (0..n)
                            .map(|_| dist.draw(&mut g) - dist.draw(&mut g))
                            .collect();
                        wilcoxon_signed_rank(&d).unwrap().p_value < 0.05
                    })
                    .count();
                let r = rate(hits, trials);
                eprintln!("signed-rank false positives {dist:?} n={n}: {r}");
                assert!((0.02..=0.08).contains(&r), "{dist:?} n={n}: {r}");
            }
        }
    }

    #[test]
    fn sim_median_ci_coverage_is_exact() {
        // Coverage must be in [0.93, 0.99] and, since the interval is exact,
        // within 4 standard errors of the binomial coverage.
        let mut g = Gen::new(102);
        for dist in Dist::ALL {
            for n in [15, 40, 101] {
                let trials = 1500;
                let (_, _, exact) = median_ci_ranks(n, 0.95).unwrap();
                let hits = (0..trials)
                    .filter(|_| {
                        let e = median_ci(&dist.sample(&mut g, n), 0.95).unwrap();
                        e.low <= dist.median() && dist.median() <= e.high
                    })
                    .count();
                let r = rate(hits, trials);
                let se = (exact * (1.0 - exact) / trials as f64).sqrt();
                eprintln!("median_ci coverage {dist:?} n={n}: {r} (exact {exact:.4})");
                assert!((0.93..=0.99).contains(&r), "{dist:?} n={n}: {r}");
                assert!(
                    (r - exact).abs() < 4.0 * se,
                    "{dist:?} n={n}: {r} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn sim_hodges_lehmann_coverage() {
        // Location-shift model (the model the interval assumes): b = a' + 0.3
        // with a, a' iid. Under that model the coverage does not depend on
        // the law, so each configuration uses one law: exact ranks (10 v 12,
        // paired n = 12) and normal-approximation ranks (55 v 60, paired
        // n = 60). Paired differences are symmetric around 0.3. 1200 trials:
        // sd 0.0063.
        let mut g = Gen::new(103);
        let trials = 1200;
        for (dist, m, n) in [(Dist::LogNormal, 10, 12), (Dist::Cauchy, 55, 60)] {
            let hits = (0..trials)
                .filter(|_| {
                    let a = dist.sample(&mut g, m);
                    let b: Vec<f64> = dist.sample(&mut g, n).iter().map(|x| x + 0.3).collect();
                    let e = hodges_lehmann_shift(&a, &b, 0.95).unwrap();
                    e.low <= 0.3 && 0.3 <= e.high
                })
                .count();
            let r = rate(hits, trials);
            eprintln!("HL shift coverage {dist:?} {m}v{n}: {r}");
            assert!((0.93..=0.99).contains(&r), "shift {dist:?} {m}v{n}: {r}");
        }
        for (dist, n) in [(Dist::Exponential, 12), (Dist::Pareto, 60)] {
            let hits = (0..trials)
                .filter(|_| {
                    let d: Vec<f64> = (0..n)
                        .map(|_| dist.draw(&mut g) - dist.draw(&mut g) + 0.3)
                        .collect();
                    let e = hodges_lehmann_paired(&d, 0.95).unwrap();
                    e.low <= 0.3 && 0.3 <= e.high
                })
                .count();
            let r = rate(hits, trials);
            eprintln!("HL paired coverage {dist:?} n={n}: {r}");
            assert!((0.93..=0.99).contains(&r), "paired {dist:?} n={n}: {r}");
        }
    }

    fn ratio_coverage(trials: usize, seed: u64) -> f64 {
        // b / a with lognormal noise (sigma 0.2) and a true ratio of 1.1, n = 40.
        let mut g = Gen::new(seed);
        let hits = (0..trials)
            .filter(|t| {
                let a: Vec<f64> = (0..40).map(|_| (0.2 * g.normal()).exp()).collect();
                let b: Vec<f64> = (0..40).map(|_| 1.1 * (0.2 * g.normal()).exp()).collect();
                let e = ratio_of_medians(&a, &b, 0.95, *t as u64).unwrap();
                e.low <= 1.1 && 1.1 <= e.high
            })
            .count();
        rate(hits, trials)
    }

    #[test]
    fn sim_ratio_of_medians_coverage() {
        // A smoke test: 120 trials (sd ~0.02) keep the debug-mode run short
        // (the bootstrap's ChaCha generator is slow unoptimised). The
        // ignored test below is the real check.
        let r = ratio_coverage(120, 104);
        eprintln!("ratio_of_medians coverage (120 trials): {r}");
        assert!((0.88..=1.0).contains(&r), "{r}");
    }

    #[test]
    #[ignore = "heavy: 4000 bootstrap intervals; run with --ignored (about 3 s in release)"]
    fn sim_ratio_of_medians_coverage_heavy() {
        // The percentile bootstrap of a median is only asymptotically exact;
        // at n = 40 it errs on the safe side (about 0.967 observed, sd
        // 0.003), because the bootstrap law of a median is lumpy.
        let r = ratio_coverage(4000, 204);
        eprintln!("ratio_of_medians coverage (4000 trials): {r}");
        assert!((0.93..=0.98).contains(&r), "{r}");
    }

    #[test]
    fn sim_mann_whitney_power() {
        // Claim: n = 30 per side, lognormal noise sigma = 0.2 (about 20%):
        // a 5% multiplicative shift (d = ln 1.05 / 0.2 = 0.244) is detected
        // at 5% only about 15% of the time (normal theory with the 3/pi
        // efficiency: Phi(0.244 sqrt(15) sqrt(3/pi) - 1.96) = 0.15), so assert
        // [0.10, 0.22]; with 5% noise (d = 0.976) power is about 0.96,
        // assert >= 0.92. The first number is why the runner needs more runs
        // or quieter machines for 5% effects.
        let mut g = Gen::new(105);
        let trials = 1500;
        for (sigma, lo, hi) in [(0.2, 0.10, 0.22), (0.05, 0.92, 1.0)] {
            let hits = (0..trials)
                .filter(|_| {
                    let a: Vec<f64> = (0..30).map(|_| (sigma * g.normal()).exp()).collect();
                    let b: Vec<f64> = (0..30).map(|_| 1.05 * (sigma * g.normal()).exp()).collect();
                    mann_whitney(&a, &b).unwrap().p_value < 0.05
                })
                .count();
            let r = rate(hits, trials);
            eprintln!("MW power, 5% shift, sigma {sigma}, n = 30: {r}");
            assert!((lo..=hi).contains(&r), "sigma {sigma}: power {r}");
        }
    }

    #[test]
    fn sim_sequential_alpha_controls_peeking_and_naive_peeking_does_not() {
        // A/A, looks at n = 10, 20, 40, 80 per side, stop at the first
        // significant look. With sequential_alpha(0.05, 4) the false-positive
        // rate stays <= 0.05 (assert <= 0.06); testing every look at 0.05
        // inflates it well above 0.05 (assert > 0.08).
        let mut g = Gen::new(106);
        let levels = sequential_alpha(0.05, 4);
        let looks = [10, 20, 40, 80];
        let trials = 2000;
        let (mut guarded, mut naive) = (0, 0);
        for _ in 0..trials {
            let a = Dist::LogNormal.sample(&mut g, 80);
            let b = Dist::LogNormal.sample(&mut g, 80);
            let p: Vec<f64> = looks
                .iter()
                .map(|&n| mann_whitney(&a[..n], &b[..n]).unwrap().p_value)
                .collect();
            if p.iter().zip(&levels).any(|(p, l)| p < l) {
                guarded += 1;
            }
            if p.iter().any(|&p| p < 0.05) {
                naive += 1;
            }
        }
        let (guarded, naive) = (rate(guarded, trials), rate(naive, trials));
        eprintln!("peeking false positives: sequential_alpha {guarded}, naive {naive}");
        assert!(guarded <= 0.06, "sequential rule: {guarded}");
        assert!(naive > 0.08, "naive peeking: {naive}");
    }

    #[test]
    fn sim_trend_false_positive_rate_and_power() {
        // iid skewed noise has no trend: rate within [0.02, 0.08]. A drift of
        // 1% of the median per run over 30 runs with 5% noise is found
        // essentially always.
        let mut g = Gen::new(107);
        let trials = 1000;
        let fp = (0..trials)
            .filter(|_| trend(&Dist::LogNormal.sample(&mut g, 30)).unwrap().p_value < 0.05)
            .count();
        assert!(
            (0.02..=0.08).contains(&rate(fp, trials)),
            "{}",
            rate(fp, trials)
        );
        let tp = (0..200)
            .filter(|_| {
                let xs: Vec<f64> = (0..30)
                    .map(|i| (1.0 + 0.01 * i as f64) * (0.05 * g.normal()).exp())
                    .collect();
                let t = trend(&xs).unwrap();
                t.p_value < 0.05 && t.slope > 0.0
            })
            .count();
        assert!(tp >= 190, "{tp}");
    }
}
