//! Trend over a sequence: the Mann-Kendall test with Kendall's tau-b and
//! the Theil-Sen slope. Pure: no I/O, no clock; pair subsampling is seeded.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::checks::{check_finite, too_few_for_test};
use super::descriptive::median_select;
use super::distributions::normal_two_sided_p;
use super::StatsError;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    pub tau: f64,
    pub p_value: f64,
    pub slope: f64,
}

/// Minimum length accepted by `trend`. Below 4 there are at most 3 pairs and
/// the Mann-Kendall statistic has 4 possible values; even at n = 4 the
/// smallest possible two-sided p-value is about 0.09 (0.083 exact), so a
/// trend is first detectable at 5% with n = 5.
pub const TREND_MIN_N: usize = 4;

/// Theil-Sen uses every pair up to this n (about 2 million pairs) ...
const THEIL_SEN_ALL_PAIRS_MAX_N: usize = 2000;
/// ... and this many seeded random pairs above it.
const THEIL_SEN_SAMPLED_PAIRS: usize = 1 << 20;
const THEIL_SEN_SEED: u64 = 0x7e11_5e17;

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

#[cfg(test)]
mod tests {
    //! Reference values come from R, published tables, exact arithmetic and
    //! brute-force enumeration (sources: `stats::tests`); simulations are seeded.

    use super::*;
    use crate::stats::descriptive::sorted_copy;
    use crate::stats::tests::{assert_close, rate, Dist, Gen};

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
