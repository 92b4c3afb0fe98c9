//! A measurer that draws runs from a known cost per grid value with
//! log-normal noise (seeded), so the search's simulations (its unit tests
//! and `examples/search_figures.rs`) measure how often it finds the truth
//! without running processes. With `load`, a round is busy or quiet (a coin
//! toss per round) and a busy round slows every run in it by the same
//! factor, as load beside a benchmark slows every run of a round.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::measurer::{Block, Measurer};
use crate::error::Result;

/// Draws runs from a cost curve with log-normal noise.
pub struct Simulated {
    cost: Vec<f64>,
    sigma: f64,
    /// A busy round's runs take (1 + load) times as long.
    load: f64,
    rng: ChaCha8Rng,
    round: u64,
    /// The runs drawn so far, per grid value.
    pub samples: Vec<Vec<f64>>,
    blocks: Vec<Vec<Block>>,
}

impl Simulated {
    /// `cost[i]` is value i's median; each run is it times exp(sigma·Z).
    pub fn new(cost: Vec<f64>, sigma: f64, seed: u64) -> Simulated {
        Simulated::with_load(cost, sigma, 0.0, seed)
    }

    /// As `new`, and every round is busy with probability 1/2: its values
    /// are (1 + load) times what they would be in a quiet round.
    pub fn with_load(cost: Vec<f64>, sigma: f64, load: f64, seed: u64) -> Simulated {
        let n = cost.len();
        Simulated {
            cost,
            sigma,
            load,
            rng: ChaCha8Rng::seed_from_u64(seed),
            round: 0,
            samples: vec![Vec::new(); n],
            blocks: vec![Vec::new(); n],
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
    fn measure(&mut self, points: &[usize], blocks: usize) -> Result<()> {
        let factor = if self.load > 0.0 && self.rng.random::<bool>() {
            1.0 + self.load
        } else {
            1.0
        };
        for k in 0..blocks {
            for &i in points {
                let x = self.cost[i] * factor * (self.sigma * self.normal()).exp();
                self.samples[i].push(x);
                self.blocks[i].push((self.round, k));
            }
        }
        self.round += 1;
        Ok(())
    }
    fn values(&self, i: usize) -> Vec<f64> {
        self.samples[i].clone()
    }
    fn count(&self, i: usize) -> usize {
        self.samples[i].len()
    }
    fn tagged(&self, i: usize) -> Vec<(Block, Option<f64>)> {
        self.blocks[i]
            .iter()
            .zip(&self.samples[i])
            .map(|(&b, &v)| (b, Some(v)))
            .collect()
    }
}
