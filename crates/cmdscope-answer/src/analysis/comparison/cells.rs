//! The comparisons of a session's cells: every metric of every candidate
//! against the reference, live (`compare_cells`) or from the store
//! (`compare_stored`).

use crate::analysis::values;
use crate::metrics::Metric;
use crate::run::schedule::Order;
use crate::run::session::CellResult;
use crate::stats;

use super::Comparison;
use super::{add_time_to_advice, compare_values, Design, Settings, Verdict, COMPARED};

/// Compares every cell with the reference cell, for every metric measured
/// in both; wall time always appears for every candidate (with a note when
/// no verdict is possible). Bonferroni per metric over the candidates.
/// `alpha` is the family-wise level of the final analysis; `rss_floor` is
/// cmdscope's own peak resident size (peak memory at or below it is not
/// comparable).
pub fn compare_cells(
    results: &[CellResult],
    reference: usize,
    order: Order,
    alpha: f64,
    precision: f64,
    rss_floor: Option<f64>,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    if results.len() < 2 || reference >= results.len() {
        return out;
    }
    let design = if order == Order::Interleaved {
        Design::Paired
    } else {
        Design::Unpaired
    };
    let m = results.len() - 1;
    for &metric in COMPARED {
        let base_vals = values(&results[reference].samples, metric);
        let settings = Settings::for_metric(metric, alpha, m, precision, rss_floor);
        for (i, cand) in results.iter().enumerate() {
            if i == reference {
                continue;
            }
            let cand_vals = values(&cand.samples, metric);
            // A metric not measured (counters off, not on this system) is
            // no comparison at all; wall time is always reported.
            if (base_vals.is_empty() || cand_vals.is_empty()) && metric != Metric::WallTime {
                continue;
            }
            let (b, c) = match design {
                Design::Paired => paired_values(&results[reference], cand, metric),
                Design::Unpaired => (base_vals.clone(), cand_vals),
            };
            let mut c = compare_values(&b, &c, design, &settings).named(
                metric.name(),
                &results[reference].cell.name,
                &cand.cell.name,
            );
            if metric == Metric::WallTime && c.verdict == Verdict::Inconclusive {
                add_time_to_advice(&mut c, seconds_per_block(results));
            }
            out.push(c);
        }
    }
    out
}

/// One stored benchmark as [`compare_stored`] reads it: its runs in block
/// order and the wall times that count.
pub struct StoredRuns<'a> {
    pub name: &'a str,
    pub samples: &'a [crate::metrics::Sample],
    pub times: &'a [f64],
}

/// A stored session's wall-time comparisons of the `included` cells with
/// `reference`, as `run` made them: Bonferroni over the comparisons at
/// `alpha`, each pair paired by block when `by_block` (interleaved runs;
/// a block where either side timed out is dropped for that pair) and it
/// has blocks, else unpaired; more than [`MAX_VALUES`] values compared on
/// an evenly spaced subsample.
///
/// [`MAX_VALUES`]: crate::analysis::MAX_VALUES
pub fn compare_stored(
    cells: &[StoredRuns],
    included: &[usize],
    reference: usize,
    alpha: f64,
    precision: f64,
    by_block: bool,
) -> Vec<Comparison> {
    use crate::analysis::MAX_VALUES;
    let Some(base) = cells.get(reference) else {
        return Vec::new();
    };
    let settings = Settings::for_metric(
        Metric::WallTime,
        alpha,
        included.len().saturating_sub(1),
        precision,
        None,
    );
    let mut out = Vec::new();
    for &i in included {
        if i == reference {
            continue;
        }
        let c = &cells[i];
        let blocks = crate::metrics::block_pairs(base.samples, c.samples, Metric::WallTime);
        let (b, x, design) = if by_block && !blocks.0.is_empty() {
            (
                stats::thin(&blocks.0, MAX_VALUES),
                stats::thin(&blocks.1, MAX_VALUES),
                Design::Paired,
            )
        } else {
            (
                stats::thin(base.times, MAX_VALUES),
                stats::thin(c.times, MAX_VALUES),
                Design::Unpaired,
            )
        };
        out.push(compare_values(&b, &x, design, &settings).named(
            Metric::WallTime.name(),
            base.name,
            c.name,
        ));
    }
    out
}

/// Seconds one block of runs takes: the cells' mean wall times together.
fn seconds_per_block(results: &[CellResult]) -> f64 {
    results
        .iter()
        .map(|r| {
            let v = values(&r.samples, Metric::WallTime);
            v.iter().sum::<f64>() / v.len().max(1) as f64
        })
        .sum()
}

/// Values of the same blocks in both cells: the k-th measured run of each
/// cell ran in block k. Blocks where either run timed out are dropped.
pub fn paired_values(a: &CellResult, b: &CellResult, metric: Metric) -> (Vec<f64>, Vec<f64>) {
    crate::metrics::block_pairs(&a.samples, &b.samples, metric)
}
