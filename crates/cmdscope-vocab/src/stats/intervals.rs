//! Distribution-free intervals from order statistics: the median's (sign
//! test) and the Hodges-Lehmann shift and one-sample intervals (inverted
//! rank tests), whose order statistics among the pairwise differences and
//! Walsh averages come from an implicit selection. Pure: no I/O, no clock;
//! the pivot sampling is seeded.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::LN_2;

use super::checks::{check_finite, check_level, too_few};
use super::descriptive::{lerp, median_ranks, median_select, select, sorted_copy};
use super::distributions::{choose_f64, ln_choose, normal_cdf, normal_quantile};
use super::rank::{mw_cdf_prefix, mw_use_exact, signed_rank_cdf_prefix, SIGNED_RANK_EXACT_MAX};
use super::StatsError;

/// A point estimate with a confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
}

/// Seed of the pivot sampling in `select_implicit`. The result is exact
/// whatever the seed; the seed only makes the running time reproducible.
const SELECT_SEED: u64 = 0x5e1e_c7ed;

/// Relative slack when comparing an exact tail mass with alpha, so that a
/// tail equal to alpha in exact arithmetic is not lost to rounding.
const REL_TOL: f64 = 1e-10;

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
pub(super) fn sign_test_min_n(alpha: f64) -> usize {
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

/// The Hodges-Lehmann estimate of paired differences' location, without
/// an interval: the median of the Walsh averages (d_i + d_j) / 2, i <= j,
/// found by selection (no list of the n(n+1)/2 averages). None when `d` is
/// empty or holds a non-finite value.
pub fn hodges_lehmann_estimate(d: &[f64]) -> Option<f64> {
    if d.is_empty() || check_finite(d).is_err() {
        return None;
    }
    let n = d.len();
    let sd = sorted_copy(d);
    let [m0, m1] = median_ranks(n * (n + 1) / 2);
    let v = walsh_average_order_stats(&sd, &[m0, m1], collect_threshold(n, n));
    Some(lerp(v[0], v[1], 0.5))
}

#[cfg(test)]
mod tests {
    //! Reference values come from R, published tables, exact arithmetic and
    //! brute-force enumeration (sources: `stats::tests`); simulations are seeded.

    use super::*;
    use crate::stats::tests::{
        assert_close, median_of_sorted, mw_null_counts, rate, signed_rank_null_counts, Dist, Gen,
        DEPRESSION_X, DEPRESSION_Y,
    };

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
    fn hodges_lehmann_estimate_is_the_median_of_every_walsh_average() {
        let mut g = Gen::new(23);
        // Small samples collect the averages; large ones select them
        // implicitly: both against the averages listed and sorted.
        for n in (1..=30).chain([200, 700]) {
            let d: Vec<f64> = (0..n).map(|_| g.normal() * 3.0 + 0.2).collect();
            let mut walsh = vec![];
            for i in 0..n {
                for j in i..n {
                    walsh.push((d[i] + d[j]) / 2.0);
                }
            }
            walsh.sort_by(f64::total_cmp);
            let e = hodges_lehmann_estimate(&d).unwrap();
            assert_close!(e, median_of_sorted(&walsh), 1e-12);
            if n >= 6 {
                assert_eq!(
                    Some(e),
                    hodges_lehmann_paired(&d, 0.95).ok().map(|e| e.value)
                );
            }
        }
        // R: wilcox.test(x, y, paired = TRUE, conf.int = TRUE) on the
        // depression data gives the (pseudo)median 0.46.
        let d: Vec<f64> = DEPRESSION_X
            .iter()
            .zip(&DEPRESSION_Y)
            .map(|(a, b)| a - b)
            .collect();
        assert_close!(hodges_lehmann_estimate(&d).unwrap(), 0.46, 1e-9);
        assert_eq!(hodges_lehmann_estimate(&[]), None);
        assert_eq!(hodges_lehmann_estimate(&[1.0, f64::NAN]), None);
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
}
