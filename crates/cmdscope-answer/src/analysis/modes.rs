//! Speed modes: runs of one command that fall into two clearly separated
//! speeds (a shared VM that alternates between a fast and a slow state),
//! and the comparison within them.
//!
//! The split is made on the pooled runs of both sides of a comparison, so
//! it is the same whichever run of a block was the baseline: under the
//! null hypothesis of the paired design (the order inside each block was
//! shuffled, the two commands are the same) swapping the two runs of a
//! block changes neither the split nor whether the block's runs fall in the
//! same mode; it only flips the sign of the block's difference. Keeping
//! the blocks whose two runs share a mode ("concordant" blocks) and testing
//! their differences by sign flips is therefore exact at any level, however
//! the split was found; the split only decides how much power is kept.
//! docs/STATISTICS.md ("Speed modes") gives the simulations.

use serde::Serialize;

use crate::stats;

/// Fewest pooled values in which modes are looked for.
pub const MIN_VALUES: usize = 20;

/// Least share of the pooled runs in the smaller mode.
pub const MIN_SHARE: f64 = 0.10;

/// Least separation (Ashman's D on robust spreads) between the two modes:
/// sqrt(2) |m1 - m2| / sqrt(s1^2 + s2^2) on logarithms, with each mode's
/// median and 1.4826 MAD. One normal sample cut at its median gives about
/// 2.3, and heavy or skewed tails cut off as a "mode" exceed 4 in 5 to 10 %
/// of samples but 5 in under 1 %; the two speeds of a shared VM (25 and
/// 42 ms with 7 % noise each) give about 7.
pub const MIN_SEPARATION: f64 = 5.0;

/// Discordant blocks beyond the share machine modes give (2f(1 - f)) that
/// are still read as the machine's: 0.1 of the blocks, ten standard errors
/// at 100 blocks.
pub const MODE_DISCORDANCE_SLACK: f64 = 0.1;

/// Two speeds found in the pooled runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SpeedModes {
    /// Runs at or below this value (metric unit) are in the fast mode.
    pub threshold: f64,
    /// Median of the fast mode's runs.
    pub fast: f64,
    /// Median of the slow mode's runs.
    pub slow: f64,
    /// Share of the pooled runs in the fast mode.
    pub fast_share: f64,
    /// Ashman's D of the split (robust form).
    pub separation: f64,
    /// Blocks whose two runs fell in different modes (left out of the test).
    pub discordant: usize,
    /// Blocks compared.
    pub blocks: usize,
}

/// Looks for two speed modes in `values` (all positive and finite): the
/// split of the sorted logarithms with the least within-group sum of
/// squares, kept when both sides hold at least `MIN_SHARE` of the values
/// and their separation is at least `MIN_SEPARATION`. `discordant` and
/// `blocks` are left at 0.
pub fn speed_modes(values: &[f64]) -> Option<SpeedModes> {
    let n = values.len();
    if n < MIN_VALUES || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let mut logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    logs.sort_unstable_by(f64::total_cmp);
    let min_side = ((n as f64 * MIN_SHARE).ceil() as usize).max(3);
    if n < 2 * min_side {
        return None;
    }
    // Prefix sums for the within-group sum of squares of every split.
    let mut s = vec![0.0; n + 1];
    let mut q = vec![0.0; n + 1];
    let shift = logs[n / 2];
    for (i, &l) in logs.iter().enumerate() {
        let x = l - shift;
        s[i + 1] = s[i] + x;
        q[i + 1] = q[i] + x * x;
    }
    let ss = |lo: usize, hi: usize| {
        let k = (hi - lo) as f64;
        let sum = s[hi] - s[lo];
        (q[hi] - q[lo]) - sum * sum / k
    };
    let k = (min_side..=n - min_side)
        .min_by(|&a, &b| (ss(0, a) + ss(a, n)).total_cmp(&(ss(0, b) + ss(b, n))))?;
    let (fast, slow) = (&logs[..k], &logs[k..]);
    let (mf, ms) = (sorted_median(fast), sorted_median(slow));
    let spread = |xs: &[f64], m: f64| {
        let mut dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
        1.4826 * stats::median_select(&mut dev)
    };
    let (sf, ss_) = (spread(fast, mf), spread(slow, ms));
    let pooled = (sf * sf + ss_ * ss_).sqrt();
    let separation = if pooled > 0.0 {
        std::f64::consts::SQRT_2 * (ms - mf) / pooled
    } else if ms > mf {
        f64::INFINITY
    } else {
        0.0
    };
    if separation < MIN_SEPARATION {
        return None;
    }
    Some(SpeedModes {
        // Halfway (on logarithms) between the last fast and the first slow
        // run: no run sits on the threshold.
        threshold: ((fast[k - 1] + slow[0]) / 2.0).exp(),
        fast: mf.exp(),
        slow: ms.exp(),
        fast_share: k as f64 / n as f64,
        separation,
        discordant: 0,
        blocks: 0,
    })
}

fn sorted_median(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The speed modes of a paired comparison's runs (`a[i]` and `b[i]` ran in
/// block i) and the blocks whose two runs share a mode: `None` when the
/// pooled runs show no two modes, else the modes (with the counts of
/// discordant and all blocks) and the concordant blocks' values.
pub fn concordant_blocks(a: &[f64], b: &[f64]) -> Option<(SpeedModes, Vec<f64>, Vec<f64>)> {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut modes = speed_modes(&pooled)?;
    let t = modes.threshold;
    let (ka, kb): (Vec<f64>, Vec<f64>) = a
        .iter()
        .zip(b)
        .filter(|(x, y)| (**x <= t) == (**y <= t))
        .map(|(x, y)| (*x, *y))
        .unzip();
    modes.blocks = n;
    modes.discordant = n - ka.len();
    // Modes of the machine fall on a block's two runs independently of
    // which command ran, so about 2f(1 - f) of the blocks are discordant
    // (f the fast mode's share), at most a half. Two commands that simply
    // differ by more than their noise also make two "modes", one command
    // in each: then nearly every block is discordant, and keeping the few
    // concordant ones (where one run was unusually slow or fast) would
    // shrink or even reverse the difference measured. The rule reads only
    // the pooled runs and the discordant count, which swapping a block's
    // two runs leaves unchanged, so the test stays exact.
    let f = modes.fast_share;
    if modes.discordant as f64 > (2.0 * f * (1.0 - f) + MODE_DISCORDANCE_SLACK) * n as f64 {
        return None;
    }
    Some((modes, ka, kb))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::simulation::{Gen, Noise, ALL};

    #[test]
    fn two_speeds_are_found_with_their_shares() {
        let mut g = Gen::new(41);
        let v: Vec<f64> = (0..400)
            .map(|_| {
                let base = if g.uniform() < 0.61 { 0.025 } else { 0.042 };
                base * (0.07 * g.normal()).exp()
            })
            .collect();
        let m = speed_modes(&v).expect("two modes");
        assert!((m.fast - 0.025).abs() < 0.001, "{m:?}");
        assert!((m.slow - 0.042).abs() < 0.002, "{m:?}");
        // 61 % with a binomial standard error of 2.4 % at 400 runs.
        assert!((m.fast_share - 0.61).abs() < 0.08, "{m:?}");
        assert!(m.separation > 5.0, "{m:?}");
    }

    #[test]
    fn one_speed_is_rarely_split() {
        // Every noise law of the engine's simulations, 200 samples each of
        // 20 to 400 runs: two modes in at most 2 % of unimodal samples
        // (spikes of 3x in 5 % of the runs are a second speed, and may be
        // split).
        let mut g = Gen::new(42);
        for &noise in ALL {
            let mut split = 0;
            for t in 0..200 {
                let n = 20 + (t * 7) % 380;
                let v: Vec<f64> = (0..n).map(|_| 0.01 * g.factor(noise)).collect();
                split += speed_modes(&v).is_some() as usize;
            }
            eprintln!("{noise:?}: {split}/200 split");
            if noise != Noise::Spiky {
                assert!(split <= 4, "{noise:?}: {split}/200 split");
            }
        }
    }

    #[test]
    fn bad_input_finds_nothing() {
        assert_eq!(speed_modes(&[]), None);
        assert_eq!(speed_modes(&[1.0; 100]), None);
        let mut v = vec![1.0; 50];
        v.extend([2.0; 50]);
        v[3] = f64::NAN;
        assert_eq!(speed_modes(&v), None);
        v[3] = -1.0;
        assert_eq!(speed_modes(&v), None);
        v[3] = 1.0;
        // Two constant speeds: infinitely separated.
        let m = speed_modes(&v).unwrap();
        assert_eq!((m.fast, m.slow, m.fast_share), (1.0, 2.0, 0.5));
    }

    #[test]
    fn two_commands_that_differ_are_not_two_modes() {
        // 5.8 and 6.8 ms with 1 % noise: the pooled runs split cleanly,
        // one command in each "mode", and almost every block is
        // discordant. No split: the comparison sees the whole difference.
        let mut g = Gen::new(7);
        let a: Vec<f64> = (0..200)
            .map(|_| 0.0058 * (0.01 * g.normal()).exp())
            .collect();
        let b: Vec<f64> = (0..200)
            .map(|_| 0.0068 * (0.01 * g.normal()).exp())
            .collect();
        let pooled: Vec<f64> = a.iter().chain(&b).copied().collect();
        assert!(speed_modes(&pooled).is_some());
        assert!(concordant_blocks(&a, &b).is_none());
    }

    #[test]
    fn concordant_blocks_are_those_in_one_mode() {
        let a = [1.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 2.0, 1.0];
        let b = [1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0];
        let (m, ka, kb) = concordant_blocks(&a, &b).unwrap();
        assert_eq!((m.blocks, m.discordant), (10, 2));
        assert_eq!(ka.len(), 8);
        assert!(ka.iter().zip(&kb).all(|(x, y)| x == y));
    }
}
