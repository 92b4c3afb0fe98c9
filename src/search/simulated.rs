//! A measurer that draws runs from a known cost per grid value with
//! log-normal noise (seeded), so the search's simulations (its unit tests
//! and `examples/search_figures.rs`) measure how often it finds the truth
//! without running processes.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Measurer;
use crate::error::Result;

/// Draws runs from a cost curve with log-normal noise.
pub struct Simulated {
    cost: Vec<f64>,
    sigma: f64,
    rng: ChaCha8Rng,
    /// The runs drawn so far, per grid value.
    pub samples: Vec<Vec<f64>>,
}

impl Simulated {
    /// `cost[i]` is value i's median; each run is it times exp(sigma·Z).
    pub fn new(cost: Vec<f64>, sigma: f64, seed: u64) -> Simulated {
        let n = cost.len();
        Simulated {
            cost,
            sigma,
            rng: ChaCha8Rng::seed_from_u64(seed),
            samples: vec![Vec::new(); n],
        }
    }

    fn normal(&mut self) -> f64 {
        // Box-Muller.
        let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
        let v: f64 = self.rng.random();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

impl Measurer for Simulated {
    fn measure(&mut self, points: &[usize], runs: usize) -> Result<()> {
        // One run count per round, as the real runner does.
        let k = points
            .iter()
            .map(|&i| runs.saturating_sub(self.samples[i].len()))
            .max()
            .unwrap_or(0);
        for &i in points {
            if self.samples[i].len() >= runs {
                continue;
            }
            for _ in 0..k {
                let x = self.cost[i] * (self.sigma * self.normal()).exp();
                self.samples[i].push(x);
            }
        }
        Ok(())
    }
    fn values(&self, i: usize) -> Vec<f64> {
        self.samples[i].clone()
    }
    fn count(&self, i: usize) -> usize {
        self.samples[i].len()
    }
}
