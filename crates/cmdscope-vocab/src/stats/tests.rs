//! Shared test support for the statistics families: generators independent
//! of the code under test, brute-force references, reference data, and the
//! one test that crosses every family (no function panics on hostile input).
//!
//! Reference values come from R (documented examples), from published
//! tables, from exact rational arithmetic done by hand or in Python's
//! `fractions`/`statistics.NormalDist`, and from brute-force enumeration
//! of permutation distributions written here independently of the code
//! under test. Simulations are seeded and deterministic.

use std::f64::consts::{LN_2, PI};

use super::descriptive::sorted_copy;
use super::*;

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
pub(super) use assert_close;

/// SplitMix64: statistically sound for simulation and, unlike ChaCha,
/// fast in unoptimised test builds (most simulation time was the RNG).
pub(super) struct Gen(u64);

impl Gen {
    pub(super) fn new(seed: u64) -> Self {
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
    pub(super) fn unif(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub(super) fn normal(&mut self) -> f64 {
        (-2.0 * self.unif().ln()).sqrt() * (2.0 * PI * self.unif()).cos()
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Dist {
    /// exp(N(0, 1)): strongly right-skewed.
    LogNormal,
    Exponential,
    /// Pareto with shape 1.5: infinite variance.
    Pareto,
    /// No mean at all.
    Cauchy,
}

impl Dist {
    pub(super) const ALL: [Dist; 4] = [
        Dist::LogNormal,
        Dist::Exponential,
        Dist::Pareto,
        Dist::Cauchy,
    ];

    pub(super) fn draw(self, g: &mut Gen) -> f64 {
        match self {
            Dist::LogNormal => g.normal().exp(),
            Dist::Exponential => -g.unif().ln(),
            Dist::Pareto => g.unif().powf(-1.0 / 1.5),
            Dist::Cauchy => (PI * (g.unif() - 0.5)).tan(),
        }
    }

    pub(super) fn median(self) -> f64 {
        match self {
            Dist::LogNormal => 1.0,
            Dist::Exponential => LN_2,
            Dist::Pareto => 2f64.powf(1.0 / 1.5),
            Dist::Cauchy => 0.0,
        }
    }

    pub(super) fn sample(self, g: &mut Gen, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.draw(g)).collect()
    }
}

/// Null counts of U for sizes m, n by enumerating rank subsets.
pub(super) fn mw_null_counts(m: usize, n: usize) -> Vec<u64> {
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
pub(super) fn signed_rank_null_counts(n: usize) -> Vec<u64> {
    let mut counts = vec![0u64; n * (n + 1) / 2 + 1];
    for signs in 0u32..(1 << n) {
        let v: usize = (0..n).filter(|i| signs >> i & 1 == 1).map(|i| i + 1).sum();
        counts[v] += 1;
    }
    counts
}

pub(super) fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// R's ?wilcox.test depression data (Hollander & Wolfe p. 29): first
/// and second visit.
pub(super) const DEPRESSION_X: [f64; 9] = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];

#[allow(clippy::approx_constant)] // 3.14 is a measurement, not pi
pub(super) const DEPRESSION_Y: [f64; 9] = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];

pub(super) fn rate(hits: usize, trials: usize) -> f64 {
    hits as f64 / trials as f64
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
