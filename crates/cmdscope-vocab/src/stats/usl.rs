//! The Universal Scalability Law fitted to throughput measured at several
//! concurrency levels: X(N) = λN / (1 + σ(N−1) + κN(N−1)), with λ the
//! throughput of one instance, σ contention (the serial share) and κ
//! coherency (the cost of instances keeping each other in step).
//!
//! Written here rather than taken from a crate because it is three
//! parameters and a dozen points: λ has a closed form once σ and κ are
//! fixed, so the search is two-dimensional (a grid, then Nelder–Mead inside
//! the bounds σ ∈ [0, 1], κ ≥ 0), and the intervals are the usual
//! nonlinear least-squares ones (the Jacobian's covariance scaled by the
//! residual variance, Student's t on n − 3 degrees of freedom), as R's
//! `nls` and scipy's `curve_fit` give them. Their coverage is checked by
//! simulation in the tests below.
//!
//! A fit is withheld, with the reason, where it would mislead: fewer than
//! four concurrency levels (no degree of freedom left to judge it), a
//! curve the law does not describe (a lack-of-fit test against the
//! points' own standard errors, or R² under 0.9 when there are none).

use statrs::distribution::{ChiSquared, ContinuousCDF, StudentsT};

use super::StatsError;

/// One measured point: throughput at `n` instances, with the standard error
/// of that throughput when it is known (from replicate windows).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UslPoint {
    pub n: f64,
    pub throughput: f64,
    pub se: Option<f64>,
}

/// A fitted parameter and its interval at the requested level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// Where throughput peaks: N* = √((1 − σ) / κ), with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    /// The estimate; `None` when the fitted κ is 0 (no peak estimated,
    /// though its interval still bounds it from below).
    pub n: Option<f64>,
    pub low: f64,
    /// Infinite when κ's interval reaches 0.
    pub high: f64,
    /// The law's throughput at `n`.
    pub throughput: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UslFit {
    pub lambda: Param,
    pub sigma: Param,
    pub kappa: Param,
    /// `None` when σ's interval reaches no lower than 1: throughput is flat
    /// and no level is a peak.
    pub peak: Option<Peak>,
    pub r_squared: f64,
    /// Lack-of-fit p-value against the points' standard errors, where known.
    pub lack_of_fit_p: Option<f64>,
    pub level: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum UslOutcome {
    Fitted(UslFit),
    Withheld(Withheld),
}

/// Why a fit is not shown; the report words it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Withheld {
    /// Fewer than `MIN_LEVELS` distinct concurrency levels.
    TooFewLevels { have: usize },
    /// The points disagree with the law by more than their own noise.
    LackOfFit { p: f64 },
    /// The law explains too little of the curve.
    LowRSquared { r_squared: f64 },
    /// Contention and coherency cannot be told apart by these points.
    Unidentifiable,
}

/// The fewest distinct concurrency levels a fit is shown for: three
/// parameters and at least one degree of freedom to judge the fit by.
pub const MIN_LEVELS: usize = 4;
/// Below this share of the throughput's variance explained, the law does not
/// describe a curve whose points carry no standard error (with them, the
/// lack-of-fit test judges: a flat curve explains little variance and is
/// still the law's, all contention).
const MIN_R_SQUARED: f64 = 0.9;
/// A lack-of-fit p-value under this says the points disagree with the law by
/// more than their own noise.
const LACK_OF_FIT_P: f64 = 0.001;

/// The law's throughput at `n` for the given parameters.
pub fn usl_throughput(n: f64, lambda: f64, sigma: f64, kappa: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Fits the law to `points` at confidence `level` (e.g. 0.95).
pub fn fit_usl(points: &[UslPoint], level: f64) -> Result<UslOutcome, StatsError> {
    if level.is_nan() || !(level > 0.0 && level < 1.0) {
        return Err(StatsError::NonFinite);
    }
    for p in points {
        if !p.n.is_finite() || !p.throughput.is_finite() || p.se.is_some_and(|s| !s.is_finite()) {
            return Err(StatsError::NonFinite);
        }
        if p.n < 1.0 || p.throughput <= 0.0 {
            return Err(StatsError::NonPositive);
        }
    }
    let mut levels: Vec<f64> = points.iter().map(|p| p.n).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    if levels.len() < MIN_LEVELS {
        return Ok(UslOutcome::Withheld(Withheld::TooFewLevels {
            have: levels.len(),
        }));
    }
    // Weights: the points' own standard errors when every point has a
    // positive one; otherwise every point counts alike.
    let weighted = points.iter().all(|p| p.se.is_some_and(|s| s > 0.0));
    let w: Vec<f64> = points
        .iter()
        .map(|p| match p.se {
            Some(s) if weighted => 1.0 / (s * s),
            _ => 1.0,
        })
        .collect();
    let ns: Vec<f64> = points.iter().map(|p| p.n).collect();
    let xs: Vec<f64> = points.iter().map(|p| p.throughput).collect();

    let (sigma, kappa) = minimise(&ns, &xs, &w);
    let lambda = best_lambda(&ns, &xs, &w, sigma, kappa);
    let fitted: Vec<f64> = ns
        .iter()
        .map(|&n| usl_throughput(n, lambda, sigma, kappa))
        .collect();
    let rss_w: f64 = (0..ns.len())
        .map(|i| w[i] * (xs[i] - fitted[i]).powi(2))
        .sum();
    let r_squared = r_squared(&xs, &fitted);
    let df = (ns.len() - 3) as f64;
    let lack_of_fit_p = if weighted {
        let chi = ChiSquared::new(df).map_err(|_| StatsError::NonFinite)?;
        Some(1.0 - chi.cdf(rss_w))
    } else {
        None
    };
    if let Some(p) = lack_of_fit_p {
        if p < LACK_OF_FIT_P {
            return Ok(UslOutcome::Withheld(Withheld::LackOfFit { p }));
        }
    }
    if !weighted && r_squared < MIN_R_SQUARED {
        return Ok(UslOutcome::Withheld(Withheld::LowRSquared { r_squared }));
    }

    // Covariance of (λ, σ, κ): (JᵀWJ)⁻¹ scaled by the weighted residual
    // variance, so intervals widen when the points scatter more than
    // their standard errors say (scipy's curve_fit, absolute_sigma=False).
    let jac: Vec<[f64; 3]> = ns
        .iter()
        .map(|&n| jacobian_row(n, lambda, sigma, kappa))
        .collect();
    let mut jtj = [[0.0; 3]; 3];
    for (i, row) in jac.iter().enumerate() {
        for a in 0..3 {
            for b in 0..3 {
                jtj[a][b] += w[i] * row[a] * row[b];
            }
        }
    }
    let scale = rss_w / df;
    let cov = match invert3(&jtj) {
        Some(inv) => inv.map(|r| r.map(|v| v * scale)),
        None => return Ok(UslOutcome::Withheld(Withheld::Unidentifiable)),
    };
    let t = StudentsT::new(0.0, 1.0, df)
        .map_err(|_| StatsError::NonFinite)?
        .inverse_cdf(0.5 + level / 2.0);
    let param = |value: f64, var: f64, floor: f64, ceil: f64| {
        let half = t * var.max(0.0).sqrt();
        Param {
            value,
            low: (value - half).max(floor),
            high: (value + half).min(ceil),
        }
    };
    let lambda_p = param(lambda, cov[0][0], 0.0, f64::INFINITY);
    let sigma_p = param(sigma, cov[1][1], 0.0, 1.0);
    let kappa_p = param(kappa, cov[2][2], 0.0, f64::INFINITY);

    // The interval spans N* over the box of σ's and κ's intervals (its upper
    // end infinite when κ may be 0): the delta method's interval covered
    // the true peak in a few per cent of curves whose peak lies beyond the
    // measured levels (see the tests).
    let at = |s: f64, k: f64| ((1.0 - s).max(0.0) / k).sqrt();
    let peak = (sigma_p.low < 1.0).then(|| {
        let n = (kappa > 0.0 && sigma < 1.0).then(|| at(sigma, kappa));
        Peak {
            n,
            low: at(sigma_p.high, kappa_p.high).min(n.unwrap_or(f64::INFINITY)),
            high: at(sigma_p.low, kappa_p.low).max(n.unwrap_or(0.0)),
            throughput: n.map(|n| usl_throughput(n, lambda, sigma, kappa)),
        }
    });
    Ok(UslOutcome::Fitted(UslFit {
        lambda: lambda_p,
        sigma: sigma_p,
        kappa: kappa_p,
        peak,
        r_squared,
        lack_of_fit_p,
        level,
    }))
}

fn denominator(n: f64, sigma: f64, kappa: f64) -> f64 {
    1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
}

fn jacobian_row(n: f64, lambda: f64, sigma: f64, kappa: f64) -> [f64; 3] {
    let d = denominator(n, sigma, kappa);
    [
        n / d,
        -lambda * n * (n - 1.0) / (d * d),
        -lambda * n * n * (n - 1.0) / (d * d),
    ]
}

/// λ minimising the weighted squares for fixed σ and κ: the model is linear
/// in λ, X = λ·g(N).
fn best_lambda(ns: &[f64], xs: &[f64], w: &[f64], sigma: f64, kappa: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..ns.len() {
        let g = ns[i] / denominator(ns[i], sigma, kappa);
        num += w[i] * xs[i] * g;
        den += w[i] * g * g;
    }
    num / den
}

fn profile_rss(ns: &[f64], xs: &[f64], w: &[f64], sigma: f64, kappa: f64) -> f64 {
    let lambda = best_lambda(ns, xs, w, sigma, kappa);
    (0..ns.len())
        .map(|i| w[i] * (xs[i] - usl_throughput(ns[i], lambda, sigma, kappa)).powi(2))
        .sum()
}

/// (σ, κ) minimising the profiled squares: a coarse grid (κ on a log scale,
/// and 0) for the basin, then Nelder–Mead clamped to the bounds.
fn minimise(ns: &[f64], xs: &[f64], w: &[f64]) -> (f64, f64) {
    let max_n = ns.iter().copied().fold(1.0, f64::max);
    // κ beyond 1/max_n² makes the curve peak before its second point: an
    // upper end that every useful fit lies below.
    let kappa_max = 10.0 / (max_n * max_n).max(1.0);
    let f = |s: f64, k: f64| profile_rss(ns, xs, w, s.clamp(0.0, 1.0), k.clamp(0.0, kappa_max));
    let mut best = (f64::INFINITY, 0.0, 0.0);
    let kappas: Vec<f64> = std::iter::once(0.0)
        .chain((0..=40).map(|i| kappa_max * 10f64.powf(-8.0 * (1.0 - i as f64 / 40.0))))
        .collect();
    for si in 0..=50 {
        let s = si as f64 / 50.0;
        for &k in &kappas {
            let v = f(s, k);
            if v < best.0 {
                best = (v, s, k);
            }
        }
    }
    // Nelder–Mead in (σ, κ/κ_max) so both axes have unit scale.
    let g = |p: [f64; 2]| f(p[0], p[1] * kappa_max);
    let start = [best.1, best.2 / kappa_max];
    let mut simplex = [
        start,
        [start[0] + 0.02, start[1]],
        [start[0], start[1] + 0.02 + start[1] * 0.2],
    ];
    let mut values = simplex.map(g);
    for _ in 0..400 {
        let mut order = [0usize, 1, 2];
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        simplex = order.map(|i| simplex[i]);
        values = order.map(|i| values[i]);
        if (values[2] - values[0]).abs() <= 1e-12 * values[0].abs().max(1e-300) {
            break;
        }
        let centroid = [
            (simplex[0][0] + simplex[1][0]) / 2.0,
            (simplex[0][1] + simplex[1][1]) / 2.0,
        ];
        let along = |t: f64| {
            let p = [
                centroid[0] + t * (simplex[2][0] - centroid[0]),
                centroid[1] + t * (simplex[2][1] - centroid[1]),
            ];
            [p[0].clamp(0.0, 1.0), p[1].clamp(0.0, 1.0)]
        };
        let reflected = along(-1.0);
        let fr = g(reflected);
        if fr < values[0] {
            let expanded = along(-2.0);
            let fe = g(expanded);
            if fe < fr {
                simplex[2] = expanded;
                values[2] = fe;
            } else {
                simplex[2] = reflected;
                values[2] = fr;
            }
        } else if fr < values[1] {
            simplex[2] = reflected;
            values[2] = fr;
        } else {
            let contracted = along(0.5);
            let fc = g(contracted);
            if fc < values[2] {
                simplex[2] = contracted;
                values[2] = fc;
            } else {
                for i in 1..3 {
                    simplex[i] = [
                        (simplex[0][0] + simplex[i][0]) / 2.0,
                        (simplex[0][1] + simplex[i][1]) / 2.0,
                    ];
                    values[i] = g(simplex[i]);
                }
            }
        }
    }
    let i = (0..3)
        .min_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap_or(0);
    (
        simplex[i][0].clamp(0.0, 1.0),
        (simplex[i][1] * kappa_max).clamp(0.0, kappa_max),
    )
}

fn r_squared(xs: &[f64], fitted: &[f64]) -> f64 {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let total: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    let resid: f64 = xs.iter().zip(fitted).map(|(x, f)| (x - f).powi(2)).sum();
    if total == 0.0 {
        if resid == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        1.0 - resid / total
    }
}

fn invert3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    let norm: f64 = m.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
    if !det.is_finite() || det.abs() <= 1e-14 * norm.powi(3) {
        return None;
    }
    let c =
        |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    Some([
        [
            c(1, 1, 2, 2) / det,
            -c(0, 1, 2, 2) / det,
            c(0, 1, 1, 2) / det,
        ],
        [
            -c(1, 0, 2, 2) / det,
            c(0, 0, 2, 2) / det,
            -c(0, 0, 1, 2) / det,
        ],
        [
            c(1, 0, 2, 1) / det,
            -c(0, 0, 2, 1) / det,
            c(0, 0, 1, 1) / det,
        ],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::Gen;

    /// Points of a known curve with multiplicative noise of `cv`, and the
    /// standard error each point would report.
    fn curve(
        rng: &mut Gen,
        levels: &[f64],
        (lambda, sigma, kappa): (f64, f64, f64),
        cv: f64,
    ) -> Vec<UslPoint> {
        levels
            .iter()
            .map(|&n| {
                let x = usl_throughput(n, lambda, sigma, kappa);
                UslPoint {
                    n,
                    throughput: x * (1.0 + cv * rng.normal()),
                    se: Some(x * cv),
                }
            })
            .collect()
    }

    fn fitted(outcome: UslOutcome) -> UslFit {
        match outcome {
            UslOutcome::Fitted(f) => f,
            UslOutcome::Withheld(why) => panic!("fit withheld: {why:?}"),
        }
    }

    #[test]
    fn exact_curve_is_recovered() {
        let levels: Vec<f64> = (1..=12).map(f64::from).collect();
        for &(l, s, k) in &[(100.0, 0.05, 0.002), (40.0, 0.3, 0.0001), (7.0, 0.0, 0.01)] {
            let points: Vec<UslPoint> = levels
                .iter()
                .map(|&n| UslPoint {
                    n,
                    throughput: usl_throughput(n, l, s, k),
                    se: None,
                })
                .collect();
            let fit = fitted(fit_usl(&points, 0.95).unwrap());
            assert!((fit.lambda.value - l).abs() < 1e-3 * l, "{fit:?}");
            assert!((fit.sigma.value - s).abs() < 1e-4, "{fit:?}");
            assert!((fit.kappa.value - k).abs() < 1e-6, "{fit:?}");
            let n_star = ((1.0 - s) / k).sqrt();
            let peak = fit.peak.and_then(|p| p.n).unwrap_or(f64::NAN);
            assert!((peak - n_star).abs() < 1e-2 * n_star, "{fit:?}");
        }
    }

    /// The intervals' promise, checked by simulation: the true σ and κ lie
    /// inside their 95 % intervals in at least 90 % of seeded curves
    /// (measured: see the assertion messages), over curves with a peak
    /// inside and beyond the measured range.
    #[test]
    fn intervals_cover_the_true_parameters() {
        let levels: Vec<f64> = (1..=8).map(f64::from).collect();
        for truth in [(50.0, 0.08, 0.02), (50.0, 0.3, 0.002), (10.0, 0.02, 0.05)] {
            let mut rng = Gen::new(7);
            let (mut sigma_in, mut kappa_in, mut peak_in, mut peaks) = (0, 0, 0, 0);
            let (mut seeds, mut withheld) = (0, 0);
            for _ in 0..400 {
                let points = curve(&mut rng, &levels, truth, 0.03);
                // On a true curve the lack-of-fit test withholds 1 in 1,000.
                let fit = match fit_usl(&points, 0.95).unwrap() {
                    UslOutcome::Fitted(fit) => fit,
                    UslOutcome::Withheld(_) => {
                        withheld += 1;
                        continue;
                    }
                };
                seeds += 1;
                sigma_in += usize::from(fit.sigma.low <= truth.1 && truth.1 <= fit.sigma.high);
                kappa_in += usize::from(fit.kappa.low <= truth.2 && truth.2 <= fit.kappa.high);
                // Every curve has a true peak: a fit without one misses it.
                let n_star = ((1.0 - truth.1) / truth.2).sqrt();
                peaks += 1;
                if let Some(peak) = fit.peak {
                    peak_in += usize::from(peak.low <= n_star && n_star <= peak.high);
                }
            }
            eprintln!(
                "{truth:?}: σ {sigma_in}/{seeds}, κ {kappa_in}/{seeds}, N* {peak_in}/{peaks}, withheld {withheld}"
            );
            assert!(
                withheld <= 4,
                "{truth:?}: {withheld} of 400 true curves withheld"
            );
            let share = |k: usize, of: usize| k as f64 / of.max(1) as f64;
            assert!(
                share(sigma_in, seeds) >= 0.90,
                "{truth:?}: σ covered {sigma_in}/{seeds}"
            );
            assert!(
                share(kappa_in, seeds) >= 0.90,
                "{truth:?}: κ covered {kappa_in}/{seeds}"
            );
            assert!(
                share(peak_in, peaks) >= 0.90,
                "{truth:?}: N* covered {peak_in}/{peaks}"
            );
        }
    }

    #[test]
    fn a_flat_curve_is_all_contention() {
        // Instances that wait for one lock: throughput does not grow.
        let mut rng = Gen::new(3);
        let levels = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0];
        let points: Vec<UslPoint> = levels
            .iter()
            .map(|&n| UslPoint {
                n,
                throughput: 20.0 * (1.0 + 0.02 * rng.normal()),
                se: Some(0.4),
            })
            .collect();
        let fit = fitted(fit_usl(&points, 0.95).unwrap());
        assert!(fit.sigma.value > 0.9, "{fit:?}");
        assert!(fit.sigma.high >= 0.99, "{fit:?}");
    }

    #[test]
    fn curves_the_law_cannot_draw_are_refused() {
        // Throughput that falls and rises again: no USL curve does that.
        let xs = [10.0, 18.0, 12.0, 8.0, 15.0, 22.0];
        let points: Vec<UslPoint> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| UslPoint {
                n: (i + 1) as f64,
                throughput: x,
                se: Some(0.3),
            })
            .collect();
        match fit_usl(&points, 0.95).unwrap() {
            UslOutcome::Withheld(why) => {
                assert!(matches!(why, Withheld::LackOfFit { .. }), "{why:?}")
            }
            UslOutcome::Fitted(f) => panic!("fitted a zigzag: {f:?}"),
        }
        let unweighted: Vec<UslPoint> =
            points.iter().map(|p| UslPoint { se: None, ..*p }).collect();
        assert!(matches!(
            fit_usl(&unweighted, 0.95).unwrap(),
            UslOutcome::Withheld(_)
        ));
        let three = &points[..3];
        match fit_usl(three, 0.95).unwrap() {
            UslOutcome::Withheld(why) => {
                assert_eq!(why, Withheld::TooFewLevels { have: 3 })
            }
            UslOutcome::Fitted(f) => panic!("fitted three points: {f:?}"),
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let p = |n: f64, x: f64| UslPoint {
            n,
            throughput: x,
            se: None,
        };
        assert_eq!(
            fit_usl(&[p(1.0, f64::NAN)], 0.95),
            Err(StatsError::NonFinite)
        );
        assert_eq!(fit_usl(&[p(0.0, 1.0)], 0.95), Err(StatsError::NonPositive));
        assert_eq!(fit_usl(&[p(1.0, -1.0)], 0.95), Err(StatsError::NonPositive));
        assert_eq!(fit_usl(&[p(1.0, 1.0)], 1.5), Err(StatsError::NonFinite));
        assert!(matches!(fit_usl(&[], 0.95), Ok(UslOutcome::Withheld(_))));
        // Identical points at every level: a degenerate but legal curve.
        let same: Vec<UslPoint> = (1..=5).map(|n| p(f64::from(n), 3.0)).collect();
        assert!(fit_usl(&same, 0.95).is_ok());
    }
}
