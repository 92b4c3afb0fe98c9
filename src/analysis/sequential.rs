//! Adaptive stopping: look at the data at planned points and stop once every
//! answer the user needs is settled, without breaking the promise of the
//! significance level.
//!
//! The rule: analyses happen at planned looks (after LOOKS blocks) and once
//! more at the end. Analysis i may declare a difference only if its p-value
//! is below level L_i, where the L_i come from an alpha-spending schedule
//! with sum L_i <= alpha (`stats::sequential_alpha`). Whatever the stopping
//! time, a false positive requires some analysis i with p_i < L_i, so by the
//! union bound the false-positive rate is at most alpha. The final verdict
//! of a session is the verdict of its last analysis, tested at that
//! analysis's own level: stopping early never lends it a larger one.
//!
//! Stopping also for "no difference" (the ratio interval lies within the
//! requested precision) cannot add false positives: it only ends sessions
//! without declaring anything.

use crate::analysis::comparison::compare_metric;
use crate::analysis::LEVEL;
use crate::stats;

/// Blocks (runs per cell) after which an interim analysis is made.
pub const LOOKS: &[usize] = &[10, 20, 40, 80, 160];

/// The outcome of one analysis for one comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Settled {
    Different,
    Equivalent,
    Open,
}

#[derive(Clone, Debug)]
pub struct Sequential {
    levels: Vec<f64>,
    analyses: usize,
    precision: f64,
}

impl Sequential {
    /// `precision` is relative (0.01 for 1 %).
    pub fn new(alpha: f64, precision: f64) -> Sequential {
        Sequential {
            levels: stats::sequential_alpha(alpha, LOOKS.len() + 1),
            analyses: 0,
            precision,
        }
    }

    /// Is an interim analysis due after `blocks` completed blocks?
    pub fn is_look(&self, blocks: usize) -> bool {
        self.analyses < LOOKS.len() && LOOKS.get(self.analyses) == Some(&blocks)
    }

    /// The level the next analysis will be tested at.
    pub fn next_level(&self) -> f64 {
        self.levels[self.analyses.min(self.levels.len() - 1)]
    }

    /// Runs one analysis of the wall times of every cell against cell
    /// `reference`; returns true when the session may stop.
    pub fn look(&mut self, cells: &[Vec<f64>], reference: usize, paired: bool) -> bool {
        let level = self.next_level();
        self.analyses += 1;
        if cells.len() == 1 {
            return self.precise(&cells[0]);
        }
        (0..cells.len())
            .filter(|&i| i != reference)
            .all(|i| self.settle(&cells[reference], &cells[i], paired, level) != Settled::Open)
    }

    fn precise(&self, xs: &[f64]) -> bool {
        match stats::median_ci(xs, LEVEL) {
            Ok(e) if e.value > 0.0 => (e.high - e.low) / 2.0 / e.value <= self.precision,
            _ => false,
        }
    }

    /// One comparison at one analysis.
    pub fn settle(&self, base: &[f64], cand: &[f64], paired: bool, level: f64) -> Settled {
        let Some(raw) = compare_metric(base, cand, paired, LEVEL) else {
            return Settled::Open;
        };
        let (p, ci) = (raw.p_value, raw.ratio_ci);
        if p < level {
            Settled::Different
        } else if ci[0] >= 1.0 - self.precision && ci[1] <= 1.0 + self.precision {
            Settled::Equivalent
        } else {
            Settled::Open
        }
    }

    /// The level for the session's final analysis (the next unused one).
    pub fn final_level(&self) -> f64 {
        self.next_level()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn lognormal(rng: &mut ChaCha8Rng, median: f64, sigma: f64) -> f64 {
        // Box-Muller; heavy enough right tail for timing noise.
        let u1: f64 = rng.random::<f64>().max(1e-300);
        let u2: f64 = rng.random();
        median * (sigma * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()).exp()
    }

    /// Simulates interleaved sessions of two cells with a common drift and
    /// the adaptive rule; returns the fraction declared significant.
    fn simulate(effect: f64, trials: usize, seed: u64) -> (f64, f64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut positives = 0;
        let mut runs = 0;
        for _ in 0..trials {
            let mut seq = Sequential::new(0.05, 0.01);
            let mut cells = vec![Vec::new(), Vec::new()];
            let budget = 200;
            let mut decided = false;
            for block in 1..=budget {
                // Drift: 10 % slower over the session, plus occasional spikes.
                let drift = 1.0 + 0.1 * block as f64 / budget as f64;
                for (c, cell) in cells.iter_mut().enumerate() {
                    let mut v = lognormal(&mut rng, 0.01 * drift, 0.05);
                    if rng.random::<f64>() < 0.03 {
                        v *= 3.0;
                    }
                    cell.push(if c == 1 { v * (1.0 + effect) } else { v });
                }
                if seq.is_look(block) && seq.look(&cells, 0, true) {
                    break;
                }
            }
            let level = seq.final_level();
            if seq.settle(&cells[0], &cells[1], true, level) == Settled::Different {
                decided = true;
            }
            positives += decided as usize;
            runs += cells[0].len();
        }
        (
            positives as f64 / trials as f64,
            runs as f64 / trials as f64,
        )
    }

    #[test]
    fn false_positive_rate_stays_at_alpha_with_drift_and_looks() {
        let (fpr, _) = simulate(0.0, 1000, 11);
        assert!(fpr <= 0.06, "A/A false-positive rate {fpr}");
    }

    #[test]
    fn finds_a_five_percent_difference_and_stops_early() {
        let (power, mean_runs) = simulate(0.05, 200, 12);
        assert!(power >= 0.9, "power {power}");
        assert!(
            mean_runs < 200.0,
            "adaptive stopping saved no runs ({mean_runs})"
        );
    }
}
