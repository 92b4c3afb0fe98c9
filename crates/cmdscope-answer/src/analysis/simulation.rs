//! Timing-noise generators shared by the engine's and the sequential
//! rule's simulations (tests only).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Noise laws the statistics must keep their level under.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Noise {
    /// Log-normal, sigma 5 %.
    Normal,
    /// Student t with 2 degrees of freedom on the log scale (3 % scale):
    /// infinite variance.
    Heavy,
    /// A floor plus an exponential tail (mean 5 %): right-skewed.
    Skewed,
    /// Log-normal 2 % plus a 3x spike in 5 % of the runs.
    Spiky,
    /// Two speeds, 1 and 1.68 (25 and 42 ms), 61 % and 39 % of the runs, as
    /// a Markov chain from run to run leaving the fast speed with
    /// probability 0.082 (about 10 % of adjacent pairs mix them); 7 %
    /// log-normal noise within a speed. Not in `ALL`: it has two modes.
    Bimodal,
}

pub const ALL: &[Noise] = &[Noise::Normal, Noise::Heavy, Noise::Skewed, Noise::Spiky];

pub struct Gen(ChaCha8Rng, bool);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(ChaCha8Rng::seed_from_u64(seed), false)
    }

    pub fn uniform(&mut self) -> f64 {
        self.0.random::<f64>().max(1e-300)
    }

    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// One run's multiplicative noise factor (median about 1).
    pub fn factor(&mut self, noise: Noise) -> f64 {
        match noise {
            Noise::Normal => (0.05 * self.normal()).exp(),
            Noise::Heavy => {
                // t_2 = Z / sqrt(chi2_2 / 2), chi2_2 = -2 ln U.
                let z = self.normal();
                let chi = -2.0 * self.uniform().ln();
                (0.03 * z / (chi / 2.0).sqrt()).exp()
            }
            Noise::Skewed => 1.0 - 0.05 * self.uniform().ln(),
            Noise::Spiky => {
                let v = (0.02 * self.normal()).exp();
                if self.uniform() < 0.05 {
                    3.0 * v
                } else {
                    v
                }
            }
            Noise::Bimodal => {
                let u = self.uniform();
                // Stationary share of the slow speed: 0.082 / (0.082 + back) = 0.39.
                self.1 = if self.1 {
                    u >= 0.082 * 0.61 / 0.39
                } else {
                    u < 0.082
                };
                let speed = if self.1 { 1.68 } else { 1.0 };
                speed * (0.07 * self.normal()).exp()
            }
        }
    }
}
