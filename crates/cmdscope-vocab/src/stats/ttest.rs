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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    /// Reference values from SciPy 1.17.1, printed by a throwaway script:
    /// `ttest_rel(b, a)` and `ttest_ind(b, a, equal_var=False)`, with
    /// `.confidence_interval(0.95)` (and 0.99 for the paired test).
    #[test]
    fn match_scipy() {
        type Case = (&'static [f64], &'static [f64], [f64; 5], [f64; 2], [f64; 5]);
        let cases: &[Case] = &[
            (
                &[1.0, 2.1, 3.3, 4.0, 5.2, 6.1],
                &[1.4, 2.0, 3.9, 4.6, 5.0, 6.9],
                [
                    2.09790314476,
                    0.089992406973,
                    -0.0788585222441,
                    0.778858522244,
                    5.0,
                ],
                [-0.322695518747, 1.02269551875],
                [
                    0.308550065978,
                    0.764021069437,
                    -2.17885981333,
                    2.87885981333,
                    9.95938799913,
                ],
            ),
            (
                &[0.101, 0.099, 0.103, 0.100, 0.098, 0.102, 0.097],
                &[0.111, 0.108, 0.112, 0.109, 0.113, 0.107, 0.110],
                [
                    8.23054891753,
                    0.000173731341989,
                    0.00702703686514,
                    0.0129729631349,
                    6.0,
                ],
                [0.00549552762705, 0.014504472373],
                [
                    8.66025403784,
                    1.65449435214e-06,
                    0.00748412365256,
                    0.0125158763474,
                    12.0,
                ],
            ),
            (
                &[5., 7., 6., 9., 8., 7., 6., 5., 8., 9., 7., 6.],
                &[6., 7., 8., 9., 9., 8., 7., 7., 8., 10., 8., 7.],
                [
                    4.74966546547,
                    0.000600014174934,
                    0.4918852279,
                    1.34144810543,
                    11.0,
                ],
                [0.317258281675, 1.51607505166],
                [
                    1.79087378552,
                    0.0876899294092,
                    -0.147565819231,
                    1.98089915256,
                    21.0738400614,
                ],
            ),
        ];
        for (a, b, rel, rel99, welch) in cases {
            let d: Vec<f64> = a.iter().zip(*b).map(|(x, y)| y - x).collect();
            let t = paired_t(&d, 0.95).unwrap();
            let got = [t.t, t.p_value, t.low, t.high, t.df];
            for (g, w) in got.iter().zip(rel) {
                assert!(close(*g, *w, 1e-8), "paired {got:?} vs {rel:?}");
            }
            let t = paired_t(&d, 0.99).unwrap();
            assert!(close(t.low, rel99[0], 1e-8) && close(t.high, rel99[1], 1e-8));
            let w = welch_t(a, b, 0.95).unwrap();
            let got = [w.t, w.p_value, w.low, w.high, w.df];
            for (g, want) in got.iter().zip(welch) {
                assert!(close(*g, *want, 1e-8), "welch {got:?} vs {welch:?}");
            }
        }
    }

    #[test]
    fn refusals_and_degenerate_data() {
        assert!(paired_t(&[1.0], 0.95).is_err());
        assert!(welch_t(&[1.0], &[1.0, 2.0], 0.95).is_err());
        assert!(paired_t(&[1.0, f64::NAN], 0.95).is_err());
        let flat = paired_t(&[0.5; 5], 0.95).unwrap();
        assert_eq!((flat.se, flat.p_value), (0.0, 0.0));
        let zero = paired_t(&[0.0; 5], 0.95).unwrap();
        assert_eq!(zero.p_value, 1.0);
    }
}
