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
}

pub const ALL: &[Noise] = &[Noise::Normal, Noise::Heavy, Noise::Skewed, Noise::Spiky];

pub struct Gen(ChaCha8Rng);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(ChaCha8Rng::seed_from_u64(seed))
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
        }
    }
}
