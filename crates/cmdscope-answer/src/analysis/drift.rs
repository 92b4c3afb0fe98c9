//! Drift over run order, told in plain words: a trend (thermal throttling,
//! background load) or a fast start (turbo boost), and what it means for the
//! comparison.

use crate::analysis::values;
use crate::analysis::warning::{DriftEffect, Warning};
use crate::metrics::Metric;
use crate::run::schedule::Order;
use crate::run::session::CellResult;
use crate::stats;

/// Significance for calling a trend: strict, because it is a warning about
/// every benchmark, not a finding the user asked for.
/// Calibrated with scripts/warning-rates (docs/HYPERFINE.md): at 0.01 and
/// 2 %, background load alone fired it in about 1 session in 10.
const TREND_ALPHA: f64 = 0.001;
/// Smallest change over the whole session worth mentioning.
const MIN_CHANGE: f64 = 0.05;
/// A fast start: at least this many of the first five runs faster than
/// every later run (by rank, so that the false-alarm rate does not depend on
/// how noisy the command is: for independent runs about 0.2 % with 20 runs,
/// less with more), and 5 % faster than the median.
const FAST_START_RUNS: usize = 3;

pub fn warnings(result: &CellResult, order: Order, cells: usize) -> Vec<Warning> {
    let wall = values(&result.samples, Metric::WallTime);
    let mut out = Vec::new();
    let Some(summary) = stats::summarize(&wall) else {
        return out;
    };
    let median = summary.median;
    if median <= 0.0 || wall.len() < 8 {
        return out;
    }
    let name = &result.cell.name;
    let effect = if cells < 2 {
        DriftEffect::Alone
    } else if order == Order::Interleaved {
        DriftEffect::Interleaved
    } else {
        DriftEffect::Sequential
    };
    if let Ok(t) = stats::trend(&wall) {
        let change = t.slope * (wall.len() - 1) as f64 / median;
        if t.p_value < TREND_ALPHA && change.abs() >= MIN_CHANGE {
            out.push(Warning::Trend {
                name: name.clone(),
                change,
                effect,
            });
        }
    }
    // A fast start: early runs faster than every later one.
    let fast = fast_start(&wall, median);
    if fast.len() >= FAST_START_RUNS {
        let mean_fast = fast.iter().sum::<f64>() / fast.len() as f64;
        out.push(Warning::FastStart {
            name: name.clone(),
            runs: fast.len(),
            faster: 1.0 - mean_fast / median,
            effect,
        });
    }
    out
}

/// The runs among the first five that are faster than every later run and
/// 5 % faster than the median.
fn fast_start(wall: &[f64], median: f64) -> Vec<f64> {
    let head = wall.len().min(5);
    if wall.len() - head < 5 {
        return Vec::new();
    }
    let later_min = wall[head..].iter().copied().fold(f64::INFINITY, f64::min);
    wall[..head]
        .iter()
        .copied()
        .filter(|&v| v < later_min && v < median * 0.95)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(walls: &[f64]) -> CellResult {
        CellResult::from_wall_times("x", walls)
    }

    /// Deterministic jitter of +-0.5 %.
    fn jitter(i: usize) -> f64 {
        1.0 + 0.005 * (((i * 7919) % 11) as f64 / 5.0 - 1.0)
    }

    #[test]
    fn a_steady_slowdown_is_reported_with_its_size() {
        let walls: Vec<f64> = (0..40)
            .map(|i| 0.010 * (1.0 + 0.06 * i as f64 / 39.0) * jitter(i))
            .collect();
        // Typed: `report::warning` words them.
        let w = warnings(&cell(&walls), Order::Interleaved, 2);
        assert_eq!(w.len(), 1, "{w:?}");
        match &w[0] {
            Warning::Trend {
                name,
                change,
                effect,
            } => {
                assert_eq!(name, "x");
                // Printed as a whole percentage: 6 %.
                assert_eq!(format!("{:.0}", change * 100.0), "6", "{change}");
                assert_eq!(*effect, DriftEffect::Interleaved);
            }
            other => panic!("not a trend: {other:?}"),
        }
        let w = warnings(&cell(&walls), Order::Sequential, 2);
        assert!(
            matches!(
                w[0],
                Warning::Trend {
                    effect: DriftEffect::Sequential,
                    ..
                }
            ),
            "{w:?}"
        );
    }

    #[test]
    fn a_fast_start_is_reported_as_turbo() {
        let mut walls: Vec<f64> = (0..30).map(|i| 0.010 * jitter(i)).collect();
        walls[0] = 0.0092;
        walls[1] = 0.0091;
        walls[2] = 0.0093;
        let w = warnings(&cell(&walls), Order::Interleaved, 1);
        assert_eq!(w.len(), 1, "{w:?}");
        let median = stats::summarize(&walls).unwrap().median;
        let expected = (1.0 - 0.0092 / median) * 100.0;
        match &w[0] {
            Warning::FastStart {
                name, runs, faster, ..
            } => {
                assert_eq!((name.as_str(), *runs), ("x", 3));
                // Printed as a whole percentage, as the expected size.
                assert_eq!(
                    format!("{:.0}", faster * 100.0),
                    format!("{expected:.0}"),
                    "{faster} (expected {expected:.1} %)"
                );
            }
            other => panic!("not a fast start: {other:?}"),
        }
    }

    #[test]
    fn two_fast_runs_are_not_a_fast_start() {
        let mut walls: Vec<f64> = (0..30).map(|i| 0.010 * jitter(i)).collect();
        walls[0] = 0.0092;
        walls[1] = 0.0091;
        assert!(warnings(&cell(&walls), Order::Interleaved, 1).is_empty());
    }

    #[test]
    fn fast_starts_in_iid_noise_are_rare() {
        // Independent runs (uniform noise, any spread): a fast start is
        // called in far fewer than 1 % of sessions.
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let sessions = 2000;
        let fired = (0..sessions)
            .filter(|_| {
                let walls: Vec<f64> = (0..20).map(|_| 0.010 * (0.8 + 0.4 * next())).collect();
                let median = stats::summarize(&walls).unwrap().median;
                fast_start(&walls, median).len() >= FAST_START_RUNS
            })
            .count();
        assert!(fired * 100 < sessions, "{fired} of {sessions}");
    }

    #[test]
    fn stationary_noise_is_not_drift() {
        let walls: Vec<f64> = (0..60).map(|i| 0.010 * jitter(i)).collect();
        assert!(warnings(&cell(&walls), Order::Interleaved, 2).is_empty());
    }
}
