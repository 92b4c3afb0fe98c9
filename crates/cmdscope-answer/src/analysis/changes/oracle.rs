//! The oracle of a slide and the bound of its ends: the least-squares
//! flat–slide–flat fit with exactly one slide, its ends searched over every
//! pair of points, and the chance the Cramér–Rao bound gives that both ends
//! fall within a tolerance. What any least-squares method told that a
//! history holds one slide can locate, for scoring cmdscope against it.

use super::simulated::Detected;

impl Detected {
    /// The oracle of a slide: the least-squares flat–slide–flat fit with
    /// exactly one slide (`oracle_fit`), reported as one drift of the
    /// fitted size. What any method that knows the history holds one
    /// slide, and fits it by least squares, can locate.
    pub fn by_oracle(sessions: &[Vec<f64>]) -> Detected {
        Detected {
            drifts: oracle_fit(sessions)
                .map(|f| (f.first, f.last, f.size.exp()))
                .into_iter()
                .collect(),
            ..Detected::default()
        }
    }
}

/// The oracle's fit of one history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OracleFit {
    /// First and last point of the slide (inclusive).
    pub first: usize,
    pub last: usize,
    /// The slide's size (log scale).
    pub size: f64,
    /// The SD of the summaries around the fit (residual sum of squares
    /// over n − 4: two levels and two edges fitted).
    pub sigma: f64,
}

/// The least-squares flat–slide–flat fit with exactly one slide, its start
/// and end searched over every pair of points (`segment::one_slide`), of
/// the summaries `segment::pieces` sees (two speeds brought to one,
/// Hampel-filtered log medians).
pub fn oracle_fit(sessions: &[Vec<f64>]) -> Option<OracleFit> {
    // The simulated histories are times: the default parameters.
    let p = super::Params::default();
    let (sessions, _) = super::detect::at_one_speed(sessions, &p);
    let y = super::hampel(&super::summaries(&sessions), p.min_sigma());
    let n = y.len();
    let sums = super::segment::Prefix::new(&y);
    let (rss, piece) = super::segment::one_slide(&sums)?;
    let (start, end) = (piece.left(), piece.right());
    let (_, size, _) = sums.ramp_fit(0, n, start, end - start)?;
    (n > 4).then(|| OracleFit {
        first: start,
        last: end - 1,
        size,
        sigma: (rss / (n - 4) as f64).sqrt(),
    })
}

/// The chance the Cramér–Rao bound gives that a slide's start and end are
/// both located within ±`tolerance` points (an error below `tolerance` +
/// ½ on the continuous scale: estimates are whole points) by an unbiased
/// estimate whose errors have the bound's SDs and correlation, under
/// independent normal noise of SD `sigma` (log scale) between sessions;
/// the slide is `(first, last, ratio)`, inclusive, in `n` points. None
/// where the bound is not defined (a slide at an end of the history).
pub fn edges_located_chance(
    n: usize,
    (first, last, ratio): (usize, usize, f64),
    sigma: f64,
    tolerance: usize,
) -> Option<f64> {
    let b = super::segment::edge_bound(n, first, last + 1, ratio.ln(), sigma)?;
    let h = tolerance as f64 + 0.5;
    // P(|X| ≤ h, |Y| ≤ h) for a bivariate normal: over x, the conditional
    // normal of Y given X = x (Simpson's rule, ±8 SD of X).
    let rho = b.correlation.clamp(-0.999_999, 0.999_999);
    let cond_sd = b.end_sd * (1.0 - rho * rho).sqrt();
    let phi = crate::stats::normal_cdf;
    let lim = h.min(8.0 * b.start_sd);
    let steps = 400;
    let dx = 2.0 * lim / steps as f64;
    let f = |x: f64| {
        let density = (-0.5 * (x / b.start_sd).powi(2)).exp()
            / (b.start_sd * (2.0 * std::f64::consts::PI).sqrt());
        let mean = rho * b.end_sd * x / b.start_sd;
        density * (phi((h - mean) / cond_sd) - phi((-h - mean) / cond_sd))
    };
    let sum: f64 = (0..=steps)
        .map(|i| {
            let w = if i == 0 || i == steps {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * f(-lim + i as f64 * dx)
        })
        .sum();
    Some((sum * dx / 3.0).clamp(0.0, 1.0))
}
