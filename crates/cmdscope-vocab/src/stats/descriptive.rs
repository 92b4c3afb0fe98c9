//! Descriptive statistics: selection-based quantiles and the one median of
//! the crate, summaries (mean, standard deviation, quartiles, MAD), the
//! geometric mean, thinning. Pure: no I/O, no clock.

use super::checks::all_finite;

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

/// lo + frac (hi - lo), falling back to the weighted form when the
/// difference overflows (values near +-f64::MAX).
pub(super) fn lerp(lo: f64, hi: f64, frac: f64) -> f64 {
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

pub(super) fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// k-th smallest (0-based) by selection, O(n). Caller ensures k < len.
pub(super) fn select(buf: &mut [f64], k: usize) -> f64 {
    let (_, v, _) = buf.select_nth_unstable_by(k, f64::total_cmp);
    *v
}

/// Type-7 quantiles of unsorted, non-empty data by selection instead of a
/// full sort: each quantile is one O(n) selection plus an O(n) scan for its
/// right neighbour. `qs` must be ascending; `buf` is reordered.
fn quantiles_select(buf: &mut [f64], qs: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(qs.len());
    // Everything before `base` is <= everything from `base` on, so later
    // (larger) quantiles only need to search buf[base..].
    let mut base = 0;
    for &q in qs {
        let (value, lo) = quantile_from(buf, base, q);
        out.push(value);
        base = lo;
    }
    out
}

/// One type-7 quantile of `buf[base..]`, whose values are all >= those
/// before `base`; returns it and the rank selected, the next call's base.
fn quantile_from(buf: &mut [f64], base: usize, q: f64) -> (f64, usize) {
    let n = buf.len();
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
    (value, lo)
}

/// Median of a non-empty buffer of finite values, reordering it (selection,
/// not a full sort). The one median of the crate: `median` and every
/// caller that already owns a scratch buffer use it.
pub fn median_select(buf: &mut [f64]) -> f64 {
    // No list of one quantile: medians of a few values are computed by the
    // million over a history.
    quantile_from(buf, 0, 0.5).0
}

/// The arithmetic mean; None without a value.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Median (mean of the two middle values for an even count); None when
/// `xs` is empty or holds a non-finite value, like `summarize`.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || !all_finite(xs) {
        return None;
    }
    Some(median_select(&mut xs.to_vec()))
}

/// The relative range, (largest − smallest) / median: how far counts
/// that should repeat are apart. None without a value, with a non-finite
/// one, or with a median that is not positive.
pub fn relative_range(xs: &[f64]) -> Option<f64> {
    let median = median(xs).filter(|&m| m > 0.0)?;
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    Some((hi - lo) / median)
}

/// Ranks of the median of `total` ordered values (two when total is even).
pub(super) fn median_ranks(total: usize) -> [usize; 2] {
    if total % 2 == 1 {
        [total / 2, total / 2]
    } else {
        [total / 2 - 1, total / 2]
    }
}

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
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| median_select(&mut v))
}

#[cfg(test)]
mod tests {
    //! Reference values come from R, published tables, exact arithmetic and
    //! brute-force enumeration (sources: `stats::tests`); simulations are seeded.

    use super::*;
    use crate::stats::tests::assert_close;

    #[test]
    fn relative_range_is_the_range_over_the_median() {
        // Exact arithmetic: range 4, median 200.
        assert_eq!(relative_range(&[198.0, 202.0, 200.0]), Some(0.02));
        assert_eq!(relative_range(&[7.0, 7.0]), Some(0.0));
        assert_eq!(relative_range(&[]), None);
        assert_eq!(relative_range(&[0.0, 0.0]), None);
        assert_eq!(relative_range(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn thins_evenly() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(thin(&v, 20), v);
        assert_eq!(thin(&v, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(thin(&v, 3), vec![0.0, 4.0, 8.0]);
    }

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
}
