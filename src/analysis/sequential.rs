//! Adaptive stopping: look at the data at planned points and stop once every
//! answer the user needs is settled, without breaking the promise of the
//! significance level.
//!
//! The rule: interim analyses ("looks") are planned after LOOKS blocks;
//! look k may declare a difference only if its p-value is below its level
//! L_k, from an alpha-spending schedule (`stats::sequential_alpha`, whose
//! levels sum to alpha). A planned look is skipped, spending nothing, when
//! the per-comparison level L_k / m is below the sign-flip resolution 2/2^n
//! of n pairs: no test can honestly reach it there (see
//! `look_reachable`). The session's final analysis spends all alpha not yet
//! spent, alpha - sum of the levels of the looks actually made, whatever
//! ended the session (time budget, run cap, interruption) — except when a
//! look itself settled every comparison: then that look *is* the final
//! analysis, at its own level.
//!
//! Why the false-positive rate stays at most alpha: a false positive needs
//! some analysis i with p_i < L_i. When the session ends for a reason that
//! does not depend on the comparison's outcome (budget, cap, interruption),
//! the analyses made are the looks before the end plus the final one, whose
//! levels sum to alpha, so the union bound gives at most alpha. Stopping at
//! a look adds no analysis. Stopping for "no difference" (the interval lies
//! within the precision band) declares nothing.

use crate::analysis::comparison::{compare_values, rank_test_resolution, Design, Settings};
use crate::analysis::LEVEL;
use crate::stats;

/// Blocks (runs per cell) after which an interim analysis is planned.
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
    alpha: f64,
    /// Planned level of each look (the schedule's last entry is the final
    /// analysis's share and is never used as a look).
    levels: Vec<f64>,
    /// Planned looks passed (made or skipped).
    passed: usize,
    /// Levels of the looks actually made.
    made: Vec<f64>,
    /// Set when a look settled every comparison: the final analysis is that
    /// look, at its level.
    settled_at: Option<f64>,
    precision: f64,
}

/// Can a look at `n` pairs with per-comparison level `level` be honest?
/// Below the sign-flip resolution 2/2^n no test is distribution-free at
/// that level (a t-test's size there rests on the noise being continuous),
/// so interim looks, which are optional, are skipped instead.
pub fn look_reachable(n: usize, level: f64) -> bool {
    rank_test_resolution(Design::Paired, n, n) <= level
}

impl Sequential {
    /// `precision` is relative (0.01 for 1 %).
    pub fn new(alpha: f64, precision: f64) -> Sequential {
        Sequential {
            alpha,
            levels: stats::sequential_alpha(alpha, LOOKS.len() + 1),
            passed: 0,
            made: Vec::new(),
            settled_at: None,
            precision,
        }
    }

    /// Is a planned look due after `blocks` completed blocks?
    pub fn is_look(&self, blocks: usize) -> bool {
        self.settled_at.is_none() && LOOKS.get(self.passed) == Some(&blocks)
    }

    /// Interim looks actually made (skipped ones excluded).
    pub fn looks_made(&self) -> usize {
        self.made.len()
    }

    /// Alpha spent by the looks made so far.
    pub fn spent(&self) -> f64 {
        self.made.iter().sum()
    }

    /// The planned look's analysis of the wall times of every cell against
    /// cell `reference` (or skips it when unreachable); true when the
    /// session may stop.
    pub fn look(&mut self, cells: &[Vec<f64>], reference: usize, paired: bool) -> bool {
        let Some(&level) = self.levels.get(self.passed) else {
            return false;
        };
        let n = cells.iter().map(Vec::len).min().unwrap_or(0);
        self.passed += 1;
        if cells.len() == 1 {
            // One command: no test, no alpha; stop on the median's precision.
            return self.precise(&cells[0]);
        }
        let m = cells.len() - 1;
        if !look_reachable(n, level / m as f64) {
            return false;
        }
        self.made.push(level);
        let all = (0..cells.len())
            .filter(|&i| i != reference)
            .all(|i| self.settle(&cells[reference], &cells[i], paired, level, m) != Settled::Open);
        if all {
            self.settled_at = Some(level);
        }
        all
    }

    fn precise(&self, xs: &[f64]) -> bool {
        match stats::median_ci(xs, LEVEL) {
            Ok(e) if e.value > 0.0 => (e.high - e.low) / 2.0 / e.value <= self.precision,
            _ => false,
        }
    }

    /// One comparison out of `family` at one analysis with family-wise level `level`.
    pub fn settle(
        &self,
        base: &[f64],
        cand: &[f64],
        paired: bool,
        level: f64,
        family: usize,
    ) -> Settled {
        let design = if paired {
            Design::Paired
        } else {
            Design::Unpaired
        };
        let s = Settings {
            family,
            ..Settings::new(level, self.precision)
        };
        let c = compare_values(base, cand, design, &s);
        if c.verdict.is_significant() {
            Settled::Different
        } else if c.verdict == crate::analysis::comparison::Verdict::NoDifference {
            Settled::Equivalent
        } else {
            Settled::Open
        }
    }

    /// The family-wise level of the session's final analysis: the level of
    /// the look that settled everything, else all alpha not yet spent.
    pub fn final_level(&self) -> f64 {
        match self.settled_at {
            Some(l) => l,
            // The schedule's levels carry a (1 - 1e-9) safety factor; the
            // remainder keeps it so rounding cannot exceed alpha.
            None => ((self.alpha - self.spent()) * (1.0 - 1e-9)).max(0.0),
        }
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
            if seq.settle(&cells[0], &cells[1], true, level, 1) == Settled::Different {
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
