//! What a search is asked: the metric and goal, run counts, level,
//! precision, budget, and which parameters are ordered.

use super::grid::coarse_points;
use crate::analysis::source::Source;
use crate::run::plan::Parameter;

#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// What is compared (`--metric`): a per-run metric, a monitor count,
    /// or throughput per batch (then every count here counts batches).
    pub source: Source,
    pub maximize: bool,
    /// Runs per value of the full grid (and of the final candidates; with
    /// several parameters the closest get up to three times as many).
    pub runs: usize,
    /// Runs a value gets when first measured (at least 3: below that the
    /// engine gives no verdict).
    pub initial_runs: usize,
    pub alpha: f64,
    /// Relative half-width of the "no difference" band.
    pub precision: f64,
    /// Most runs the search may spend (the coarse round always runs).
    pub budget: usize,
    /// `--ops` with a time metric: compare per operation, operations per
    /// second when maximising, seconds per operation when minimising.
    pub per_op: bool,
    /// Per parameter, whether its values are ordered (a scan, or a list of
    /// numbers in order: the search zooms along it) or not (a list of
    /// words or unordered numbers: every value races). Empty: all ordered.
    pub ordered: Vec<bool>,
}

impl SearchOptions {
    /// What is compared, as named in comparisons and the JSON.
    pub fn quantity(&self) -> &'static str {
        match (self.per_op, self.maximize) {
            (true, true) => "operations_per_second",
            (true, false) => "time_per_operation",
            (false, _) => self.source.name(),
        }
    }

    /// How the compared values read: operations per second are a rate.
    pub fn format(&self, v: f64) -> String {
        if self.per_op && self.maximize {
            format!("{} ops/s", crate::units::count(v))
        } else {
            self.source.format(v)
        }
    }

    /// Whether "faster"/"slower" describe the compared values.
    pub fn is_time(&self) -> bool {
        self.source.unit() == crate::metrics::Unit::Seconds && !(self.per_op && self.maximize)
    }

    /// The default budget: 40 % of the full grid's runs, but on a small
    /// grid (up to about 8 values) at least the coarse scan and two values
    /// at the full run count (never more than the grid); on a large grid
    /// at most (8 + 6·log2 values) runs per value per parameter, which the
    /// zoom needs (a few values per level, log n levels): 2 % of a
    /// 4,096-value grid, 12 % of a 512-value one, 40 % up to 64 values.
    pub fn default_budget(dims: &[usize], runs: usize) -> usize {
        let values: usize = dims.iter().product();
        let floor = (coarse_points(values.max(1)).len() * 3).saturating_add(runs.saturating_mul(2));
        let grid = values.saturating_mul(runs);
        let forty = grid / 5 * 2 + grid % 5 * 2 / 5;
        let zoom =
            (8.0 + 6.0 * (values.max(1) as f64).log2()) * runs as f64 * dims.len().max(1) as f64;
        // `as` saturates: a huge run count gives a huge budget, not a wrap.
        forty.min(zoom as usize).max(floor.min(grid))
    }

    /// Whether parameter k is ordered (see `ordered`).
    pub(super) fn is_ordered(&self, k: usize) -> bool {
        self.ordered.get(k).copied().unwrap_or(true)
    }
}

/// Per parameter, whether the search may zoom along it: its values are
/// numbers in strictly increasing or decreasing order (every scan is).
pub fn ordered(params: &[Parameter]) -> Vec<bool> {
    params
        .iter()
        .map(|p| {
            p.numeric.as_ref().is_some_and(|v| {
                v.windows(2).all(|w| w[0] < w[1]) || v.windows(2).all(|w| w[0] > w[1])
            })
        })
        .collect()
}
