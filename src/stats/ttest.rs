//! Student's paired t-test and Welch's unequal-variance t-test, each with
//! the confidence interval that inverts it (so the interval excludes 0
//! exactly when the test rejects at 1 - level).
//!
//! cmdscope uses them on logarithms where a rank test cannot resolve the
//! level asked for (see `analysis::comparison`): at 6 pairs the exact
//! signed-rank test cannot go below p = 2/64, whatever the data.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::StatsError;

/// A t-test's result with the interval of the mean (difference) at the
/// requested confidence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TTest {
    /// Mean difference (paired) or difference of means (Welch), b - a.
    pub estimate: f64,
    /// Standard error of `estimate`.
    pub se: f64,
    pub df: f64,
    pub t: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// Two-sided p and interval for an estimate with standard error `se` and
/// `df` degrees of freedom. `se` = 0 (no spread at all) gives p = 0 for a
/// non-zero estimate and p = 1 for zero, and a zero-width interval: the
/// caller decides what such data may prove (`analysis::comparison` caps it
/// at the sign-flip resolution).
fn finish(estimate: f64, se: f64, df: f64, level: f64) -> Result<TTest, StatsError> {
    if !(level > 0.0 && level < 1.0) || level.is_nan() {
        return Err(StatsError::NonFinite);
    }
    if !estimate.is_finite() || !se.is_finite() || df.is_nan() || df <= 0.0 {
        return Err(StatsError::NonFinite);
    }
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|_| StatsError::NonFinite)?;
    let (t, p_value) = if se == 0.0 {
        if estimate == 0.0 {
            (0.0, 1.0)
        } else {
            (estimate.signum() * f64::INFINITY, 0.0)
        }
    } else {
        let t = estimate / se;
        (t, (2.0 * dist.sf(t.abs())).min(1.0))
    };
    let q = dist.inverse_cdf(1.0 - (1.0 - level) / 2.0);
    Ok(TTest {
        estimate,
        se,
        df,
        t,
        p_value,
        low: estimate - q * se,
        high: estimate + q * se,
        level,
    })
}

/// Paired t-test on differences d (b - a per pair): H0 mean(d) = 0.
/// Needs at least 2 differences.
pub fn paired_t(d: &[f64], level: f64) -> Result<TTest, StatsError> {
    if d.len() < 2 {
        return Err(StatsError::TooFewSamples {
            needed: 2,
            have: d.len(),
            level_pct: level * 100.0,
        });
    }
    if d.iter().any(|x| !x.is_finite()) {
        return Err(StatsError::NonFinite);
    }
    let (mean, var) = mean_var(d);
    let n = d.len() as f64;
    finish(mean, (var / n).sqrt(), n - 1.0, level)
}

/// Welch's t-test of mean(b) - mean(a) with Welch-Satterthwaite degrees of
/// freedom (what R's t.test and SciPy's ttest_ind(equal_var=False) do).
/// Needs at least 2 values per sample.
pub fn welch_t(a: &[f64], b: &[f64], level: f64) -> Result<TTest, StatsError> {
    let small = a.len().min(b.len());
    if small < 2 {
        return Err(StatsError::TooFewSamples {
            needed: 2,
            have: small,
            level_pct: level * 100.0,
        });
    }
    if a.iter().chain(b).any(|x| !x.is_finite()) {
        return Err(StatsError::NonFinite);
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    let df = if se2 == 0.0 {
        na + nb - 2.0
    } else {
        se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
    };
    finish(mb - ma, se2.sqrt(), df, level)
}
