//! How much a history's session summaries move when nothing changed, as a
//! function of how far apart the sessions are: a robust semivariogram.
//!
//! Successive differences alone (the noise of one session against the
//! next) are too small when the noise carries over from session to session
//! (a machine whose speed wanders slowly): two stretches ten sessions apart
//! then differ by much more than neighbouring sessions do. The variogram
//! γ(h) = ½ Var(y[t + h] − y[t]) measures that at every lag h, and the
//! variance of any difference of means over the history follows from it
//! without a model of the noise: for weights c summing to 0,
//! Var(Σ c_i y_i) = −Σ_i Σ_j c_i c_j γ(|i − j|). White noise gives a flat
//! γ, the old σ²; wander gives a γ that rises with the lag.
//!
//! Each γ(h) is the squared MAD (about the median) of the lag-h
//! differences, so a linear trend (a constant in the differences) and
//! isolated steps (which move h differences each) barely move it. Steps
//! the analysis has confirmed are taken out before the final estimate (the
//! residuals of the fitted levels), so a history with several steps is not
//! read as a wandering one.

use crate::stats::median_select;

/// Scale of the MAD that makes it a standard deviation for normal data.
const MAD_SCALE: f64 = 1.4826;

/// Largest lag measured; beyond it γ is taken as flat.
const MAX_LAG: usize = 64;

/// Differences per lag at most (evenly spaced): a history of 10,000
/// sessions costs what one of 2,000 does.
const MAX_DIFFERENCES: usize = 2048;

/// A variogram whose estimates at its four longest lags are on average
/// less than this many times those at its four shortest is taken as flat:
/// white noise.
const FLAT_RATIO: f64 = 1.5;

/// Points of the shortest episode the variogram stays robust to (the
/// default shortest segment): its two edges move `2 min(h, EPISODE)` of a
/// lag's differences.
const EPISODE: usize = 3;

/// A lag is measured only when such an episode moves at most one of this
/// many of its differences (the MAD breaks down at one in two). Histories
/// of 27 points or more keep every lag up to a third of their length.
const EPISODE_SHARE: usize = 3;

/// The lags measured: every one up to 20, then sparser.
const LAGS: [usize; 27] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 24, 28, 32, 40, 48, 56,
    64,
];

/// A history's variogram: γ at every lag from 0 to `gamma.len() - 1`, the
/// last value standing for every longer lag.
#[derive(Clone, Debug, PartialEq)]
pub struct Variogram {
    gamma: Vec<f64>,
    /// The estimates at the four shortest lags, averaged: the noise of
    /// neighbouring points, steadier than γ(1) alone.
    near: f64,
    /// Points the estimate came from.
    n: usize,
}

impl Variogram {
    /// From a series (finite values, oldest first), each γ(h) at least
    /// `floor²` (so that identical summaries do not make every tiny
    /// difference significant). Fewer than 4 points: flat at the lag-1
    /// estimate, or at the floor.
    pub fn of(y: &[f64], floor: f64) -> Variogram {
        Variogram::estimated(y, floor, None)
    }

    /// [`Variogram::of`], flat or rising as `shape` says (`Some(true)`:
    /// taken as flat whatever its rise; `Some(false)`: never taken as
    /// flat), or as the estimates say (`None`).
    pub(super) fn estimated(y: &[f64], floor: f64, shape: Option<bool>) -> Variogram {
        let n = y.len();
        let top = MAX_LAG.min(n / 3).max(1);
        let mut lags: Vec<(usize, f64, f64)> = Vec::new();
        let mut buf: Vec<f64> = Vec::with_capacity(MAX_DIFFERENCES);
        // Lag 1 always; a longer lag only where a shortest episode could
        // not break its MAD (in a short history most lag-3 differences
        // straddle a 3-point episode's edges, and a variogram read off
        // them hides the episode that made it).
        let robust = |h: usize| h == 1 || 2 * h.min(EPISODE) * EPISODE_SHARE <= n - h;
        for &h in LAGS.iter().filter(|&&h| h <= top && robust(h)) {
            if h >= n {
                break;
            }
            let count = n - h;
            let stride = count.div_ceil(MAX_DIFFERENCES);
            buf.clear();
            buf.extend((0..count).step_by(stride).map(|t| y[t + h] - y[t]));
            if buf.len() < 2 {
                break;
            }
            let m = median_select(&mut buf);
            for d in buf.iter_mut() {
                *d = (*d - m).abs();
            }
            let s = MAD_SCALE * median_select(&mut buf);
            lags.push((h, 0.5 * s * s, buf.len() as f64));
        }
        let mut monotone = non_decreasing(&lags);
        // A rise within what the estimates' own scatter gives white noise
        // (the shortest four lags against the longest four): flat, at the
        // estimates' weighted mean, which is far more precise than any one
        // lag's (and than their non-decreasing fit, which scatter pulls up).
        let mean = |ls: &[(usize, f64, f64)]| {
            let w: f64 = ls.iter().map(|l| l.2).sum();
            ls.iter().map(|l| l.1 * l.2).sum::<f64>() / w
        };
        let mut near = 0.0;
        if !lags.is_empty() {
            let k = lags.len().min(4);
            near = mean(&lags[..k]);
            if shape.unwrap_or_else(|| mean(&lags[lags.len() - k..]) < FLAT_RATIO * near) {
                let all = mean(&lags);
                monotone.iter_mut().for_each(|l| l.1 = all);
                near = all;
            }
        }
        let last = monotone.last().map_or(0, |l| l.0);
        let mut gamma = vec![0.0; last + 1];
        // Linear between the lags measured.
        for w in monotone.windows(2) {
            let ((h0, g0), (h1, g1)) = (w[0], w[1]);
            for (h, g) in gamma.iter_mut().enumerate().take(h1 + 1).skip(h0) {
                *g = g0 + (g1 - g0) * (h - h0) as f64 / (h1 - h0) as f64;
            }
        }
        if let Some(&(h, g)) = monotone.first() {
            for v in gamma.iter_mut().take(h + 1).skip(1) {
                *v = g;
            }
        }
        let fl = floor * floor;
        for g in gamma.iter_mut().skip(1) {
            *g = g.max(fl);
        }
        if gamma.len() < 2 {
            gamma = vec![0.0, fl];
        }
        let near = near.max(fl).min(gamma[gamma.len() - 1]);
        Variogram { gamma, near, n }
    }

    /// γ(h); the last lag measured stands for longer ones.
    pub fn at(&self, h: usize) -> f64 {
        if h == 0 {
            return 0.0;
        }
        self.gamma[h.min(self.gamma.len() - 1)]
    }

    /// The standard deviation of a session's summary about the level over
    /// `h` sessions: sqrt(γ(h)).
    pub fn over(&self, h: usize) -> f64 {
        self.at(h).sqrt()
    }

    /// Variance of mean(y[after]) − mean(y[before]) (point indices, the
    /// two ranges apart or adjacent, `before` first).
    pub fn var_of_difference(
        &self,
        before: std::ops::Range<usize>,
        after: std::ops::Range<usize>,
    ) -> f64 {
        let (na, nb) = (before.len() as f64, after.len() as f64);
        if na == 0.0 || nb == 0.0 {
            return f64::NAN;
        }
        // −Σ Σ c_i c_j γ(|i − j|): within each side (c_i c_j > 0) and
        // across (c_i c_j < 0).
        let within = |r: &std::ops::Range<usize>, n: f64| -> f64 {
            let len = r.len();
            let s: f64 = (1..len).map(|h| 2.0 * (len - h) as f64 * self.at(h)).sum();
            s / (n * n)
        };
        let mut across = 0.0;
        for i in before.clone() {
            for j in after.clone() {
                across += self.at(j - i);
            }
        }
        2.0 * across / (na * nb) - within(&before, na) - within(&after, nb)
    }

    /// Degrees of freedom of a variance read off this variogram over a
    /// span of `span` points: the effective number of independent points
    /// (n r / (2 − r) with r = γ(near) / γ(span), about n (1 − φ) / (1 + φ)
    /// for an AR(1) process of coefficient φ, and n for white noise) over
    /// 3, for a MAD-based estimate (about a third as efficient as the
    /// sample variance, and lag differences overlap). At least 2.
    pub fn df(&self, span: usize) -> f64 {
        let far = self.at(span.max(1));
        let r = if far > 0.0 {
            (self.near / far).clamp(1e-3, 1.0)
        } else {
            1.0
        };
        (self.n as f64 * r / (2.0 - r) / 3.0).max(2.0)
    }

    /// Session-to-session wander: the variogram at `span` sessions over
    /// its value between neighbouring points (the four shortest lags), as
    /// standard deviations (1 for noise that does not carry over).
    pub fn carry_over(&self, span: usize) -> f64 {
        if self.near > 0.0 {
            (self.at(span) / self.near).sqrt().max(1.0)
        } else {
            1.0
        }
    }

    /// The variance between neighbouring points (the four shortest lags'
    /// estimates averaged).
    pub fn near(&self) -> f64 {
        self.near
    }

    /// Whether γ is the same at every lag (white noise, or taken as such).
    pub fn is_flat(&self) -> bool {
        self.gamma
            .iter()
            .skip(1)
            .all(|g| *g == self.gamma[self.gamma.len() - 1])
    }

    /// Points the variogram was estimated from.
    pub fn points(&self) -> usize {
        self.n
    }

    /// The variogram with every γ multiplied by `factor` (its degrees of
    /// freedom unchanged): variances of differences priced `factor` times
    /// higher.
    pub fn scaled(&self, factor: f64) -> Variogram {
        Variogram {
            gamma: self.gamma.iter().map(|g| g * factor).collect(),
            near: self.near * factor,
            n: self.n,
        }
    }
}

/// The closest non-decreasing sequence to the lags' estimates (pool
/// adjacent violators, weighted by the differences behind each): noise
/// that carries over from one session to later ones only adds variance
/// with distance, and the estimates of neighbouring lags scatter.
fn non_decreasing(lags: &[(usize, f64, f64)]) -> Vec<(usize, f64)> {
    // Blocks of (value, weight, lags in it).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for &(_, g, w) in lags {
        blocks.push((g, w, 1));
        while blocks.len() > 1 {
            let k = blocks.len();
            if blocks[k - 2].0 <= blocks[k - 1].0 {
                break;
            }
            let (b, a) = (blocks[k - 1], blocks[k - 2]);
            let w = a.1 + b.1;
            blocks[k - 2] = ((a.0 * a.1 + b.0 * b.1) / w, w, a.2 + b.2);
            blocks.pop();
        }
    }
    let mut out = Vec::with_capacity(lags.len());
    let mut k = 0;
    for (g, _, count) in blocks {
        for _ in 0..count {
            out.push((lags[k].0, g));
            k += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use crate::analysis::changes::simulated::normal;

    #[test]
    fn white_noise_is_flat_and_gives_the_plain_variance_of_a_difference() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let y: Vec<f64> = (0..2000).map(|_| 0.01 * normal(&mut rng)).collect();
        let v = Variogram::of(&y, 0.0);
        for h in [1, 5, 20, 64, 200] {
            let g = v.at(h);
            assert!((g / 1e-4 - 1.0).abs() < 0.15, "γ({h}) = {g}");
        }
        // Two sides of 10: σ² (1/10 + 1/10).
        let d = v.var_of_difference(0..10, 10..20);
        assert!((d / 2e-5 - 1.0).abs() < 0.15, "{d}");
        assert!(v.carry_over(20) < 1.1);
    }

    #[test]
    fn wander_rises_with_the_lag_and_widens_the_difference_of_means() {
        // AR(1), φ = 0.9, stationary SD 1 %.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let phi: f64 = 0.9;
        let mut x = 0.0;
        let y: Vec<f64> = (0..4000)
            .map(|_| {
                x = phi * x + 0.01 * (1.0 - phi * phi).sqrt() * normal(&mut rng);
                x
            })
            .collect();
        let v = Variogram::of(&y, 0.0);
        // γ(h) = σ² (1 − φ^h).
        for h in [1, 4, 10, 40] {
            let want = 1e-4 * (1.0 - phi.powi(h as i32));
            assert!((v.at(h) / want - 1.0).abs() < 0.25, "γ({h}) = {}", v.at(h));
        }
        // Two adjacent sides of 10: 0.69 σ², against 0.2 σ² without the
        // carry-over.
        let d = v.var_of_difference(0..10, 10..20);
        assert!((d / 0.69e-4 - 1.0).abs() < 0.25, "{d}");
        assert!(v.carry_over(20) > 2.0);
        // Far fewer independent points than sessions.
        assert!(v.df(20) < 4000.0 / 3.0 / 5.0, "{}", v.df(20));
    }

    #[test]
    fn a_step_and_a_trend_barely_move_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let y: Vec<f64> = (0..300)
            .map(|i| {
                let step = if i >= 150 { 0.2 } else { 0.0 };
                step + 1e-4 * i as f64 + 0.01 * normal(&mut rng)
            })
            .collect();
        let v = Variogram::of(&y, 0.0);
        assert!(v.at(10) < 1.5e-4, "{}", v.at(10));
    }
}
