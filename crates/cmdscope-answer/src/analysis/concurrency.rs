//! Concurrency mode's answers: each cell's throughput (completions per
//! second while all N instances were busy) with its interval, its CPU use
//! and I/O rates, the host's view; throughput comparisons between cells at
//! the same N through the one engine; and over a concurrency sweep the
//! scaling curve with a Universal Scalability Law fit.
//!
//! A batch's throughput (`run::session::batch`, beside the batch it
//! reads) is the smaller of two readings of the stretch in which every
//! slot was making completions, each right where the other
//! errs, and each erring only upward (docs/STATISTICS.md, "Throughput of a
//! batch"):
//! - the slots' progress: from the moment every slot had made its first
//!   completion to the moment the first slot made its last, each slot's
//!   progress read off its own completions, linear between two of them,
//!   over the stretch's length. Right where instances run side by side:
//!   completions that bunch together (N instances started at once on fewer
//!   CPUs end at once) count neither once too often nor once too few at
//!   either edge. Where they take turns (a lock that serves its waiters in
//!   no order), it reads high: the cycles under way at the stretch's end
//!   finish in the batch's tail, where the slot that left no longer
//!   competes, so they look further along than they were;
//! - whole completions between two completions a multiple of N apart
//!   inside the stretch in which every slot was running. Completions
//!   counted whole between two completions never come faster than the
//!   work allows (under one lock, one hold apart at least), and a multiple
//!   of N keeps the phase of instances that end in bunches; it reads high
//!   where independent instances started together (their first
//!   completions bunch).
//!
//! Its CPU use and I/O rates are the throughput times the counted
//! instances' mean CPU time and bytes: what the instances' own accounting
//! says they used, per second of the stretch. A cell's throughput is the
//! mean over its batches with Student's t interval: batches are the
//! independent units (one per block), the instances of one batch are not.

use serde::Serialize;

use crate::analysis::comparison::{self, Comparison, Design, Settings};
use crate::analysis::sequential::Sequential;
use crate::metrics::Metric;
use crate::run::host::{DiskRate, HostView, PressureShare};
use crate::run::session::batch::{batch_rate, batch_throughput};
use crate::run::session::{BatchRecord, CellResult, Session};
use crate::stats::{self, mean, UslOutcome, UslPoint};

/// Confidence of the per-cell throughput interval and the USL fit.
const LEVEL: f64 = 0.95;

/// What one batch did while all its instances were busy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchFigures {
    pub block: usize,
    pub throughput: f64,
    /// CPU seconds (user + system) per wall second.
    pub cpu: Option<f64>,
    pub read_bytes_per_second: Option<f64>,
    pub written_bytes_per_second: Option<f64>,
}

/// One cell run N at a time.
#[derive(Clone, Debug, Serialize)]
pub struct CellThroughput {
    pub concurrency: usize,
    /// Completions per second.
    pub value: f64,
    pub ci: Option<[f64; 2]>,
    pub batches: usize,
    /// CPU seconds per wall second, all instances together.
    pub cpu_utilisation: Option<f64>,
    pub read_bytes_per_second: Option<f64>,
    pub written_bytes_per_second: Option<f64>,
    /// The host over all the cell's batches (time-weighted).
    pub host: HostView,
    /// Each instance's wall time: what one user of N at once waits.
    pub latency: Option<Latency>,
}

/// Quantiles of the instances' wall times (R type 7), over the runs every
/// statistic counts (timed-out ones left out). The median's interval is
/// the cell's own (its wall-time summary).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Latency {
    pub count: usize,
    pub p10: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
}

fn latency(result: &CellResult) -> Option<Latency> {
    let mut walls = super::values(&result.samples, Metric::WallTime);
    if walls.is_empty() || walls.iter().any(|w| !w.is_finite()) {
        return None;
    }
    walls.sort_by(f64::total_cmp);
    let q = |p: f64| stats::quantile_sorted(&walls, p);
    Some(Latency {
        count: walls.len(),
        p10: q(0.10),
        median: q(0.5),
        p90: q(0.90),
        p99: q(0.99),
    })
}

/// Throughput against N for cells that differ only in their concurrency.
#[derive(Clone, Debug)]
pub struct Scaling {
    /// The cells of the curve, by increasing N.
    pub cells: Vec<usize>,
    pub points: Vec<UslPoint>,
    pub usl: UslOutcome,
}

#[derive(Clone, Debug, Default)]
pub struct Concurrency {
    /// One per result of the session (None: not run in concurrency mode,
    /// or no batch had all its slots busy).
    pub cells: Vec<Option<CellThroughput>>,
    /// Throughput comparisons with the reference at the same N. The engine
    /// compares seconds per completion (lower is better), so "faster" is
    /// the higher throughput; `report::concurrency` words it so.
    pub comparisons: Vec<Comparison>,
    pub scaling: Vec<Scaling>,
}

/// `--fail-if-slower PCT` for throughput: it fails when throughput is
/// significantly lower by more than PCT % (the upper end of the throughput
/// ratio's interval below 1 - PCT/100). On the seconds per completion the
/// engine compares that is a rise of more than 100 PCT / (100 - PCT) %,
/// the percentage the one gate rule (`fails_gate`) is given; a drop of
/// 100 % or more is impossible, so such a gate never fails.
pub fn per_completion_gate(pct: f64) -> f64 {
    if pct < 100.0 {
        100.0 * pct / (100.0 - pct)
    } else {
        f64::INFINITY
    }
}

/// A throughput comparison's throughput ratio (candidate over baseline)
/// and its interval: the engine compared seconds per completion, so they
/// are the inverses of its ratio and interval.
pub fn throughput_ratio(c: &Comparison) -> (f64, [f64; 2]) {
    (1.0 / c.ratio, [1.0 / c.ratio_ci[1], 1.0 / c.ratio_ci[0]])
}

/// The figures of one batch; None when neither reading has completions
/// to count.
pub fn batch_figures(result: &CellResult, b: &BatchRecord) -> Option<BatchFigures> {
    let (throughput, instances) = batch_rate(b)?;
    // Rates: throughput times the counted instances' mean amount.
    let per_completion = |metric: Metric| {
        let v = instances
            .iter()
            .map(|&i| result.samples.get(i).and_then(|s| s.get(metric)))
            .collect::<Option<Vec<f64>>>()?;
        mean(&v).map(|m| m * throughput)
    };
    Some(BatchFigures {
        block: b.block,
        throughput,
        cpu: per_completion(Metric::CpuTime),
        read_bytes_per_second: per_completion(Metric::IoReadBytes),
        written_bytes_per_second: per_completion(Metric::IoWriteBytes),
    })
}

/// The cell's throughput and the rest, from its batches.
pub fn cell_throughput(result: &CellResult) -> Option<CellThroughput> {
    let concurrency = result.cell.variant.concurrency?;
    let figures: Vec<BatchFigures> = result
        .batches
        .iter()
        .filter_map(|b| batch_figures(result, b))
        .collect();
    let values: Vec<f64> = figures.iter().map(|f| f.throughput).collect();
    let value = mean(&values)?;
    let ci = interval(&values);
    let all = |f: fn(&BatchFigures) -> Option<f64>| {
        figures
            .iter()
            .map(f)
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| mean(&v))
    };
    Some(CellThroughput {
        concurrency,
        value,
        ci,
        batches: values.len(),
        cpu_utilisation: all(|f| f.cpu),
        read_bytes_per_second: all(|f| f.read_bytes_per_second),
        written_bytes_per_second: all(|f| f.written_bytes_per_second),
        host: combined_host(&result.batches),
        latency: latency(result),
    })
}

/// The batches' host views as one, each weighted by its length.
fn combined_host(batches: &[BatchRecord]) -> HostView {
    let total: f64 = batches.iter().map(|b| b.host.seconds).sum();
    let Some(first) = batches.first() else {
        return HostView::default();
    };
    if total.is_nan() || total <= 0.0 {
        return first.host.clone();
    }
    // Over the batches that have the figure: a batch shorter than the
    // kernel's tick has no CPU figure, and the others still tell.
    let covered = |f: &dyn Fn(&HostView) -> Option<f64>| {
        batches
            .iter()
            .filter_map(|b| f(&b.host).map(|v| (v * b.host.seconds, b.host.seconds)))
            .fold((0.0, 0.0), |(s, t), (v, w)| (s + v, t + w))
    };
    let weighted = |f: &dyn Fn(&HostView) -> Option<f64>| {
        let (sum, seconds) = covered(f);
        (seconds > 0.0).then(|| sum / seconds)
    };
    // CPU busy is counted in ticks: only batches long enough together make
    // a figure (`host::cpu_resolved`).
    let cpu_busy = weighted(&|h| h.cpu_busy)
        .filter(|_| crate::run::host::cpu_resolved(covered(&|h| h.cpu_busy).1));
    HostView {
        seconds: total,
        cpu_busy,
        cpus: first.host.cpus,
        pressure: first
            .host
            .pressure
            .iter()
            .map(|p| PressureShare {
                resource: p.resource,
                some: weighted(&|h| {
                    h.pressure
                        .iter()
                        .find(|q| q.resource == p.resource)
                        .map(|q| q.some)
                })
                .unwrap_or(p.some),
                full: p.full.and_then(|_| {
                    weighted(&|h| {
                        h.pressure
                            .iter()
                            .find(|q| q.resource == p.resource)
                            .and_then(|q| q.full)
                    })
                }),
            })
            .collect(),
        disks: first
            .host
            .disks
            .iter()
            .map(|d| {
                let of = |h: &HostView| h.disks.iter().find(|e| e.device == d.device).cloned();
                DiskRate {
                    device: d.device.clone(),
                    busy: weighted(&|h| of(h).map(|e| e.busy)).unwrap_or(d.busy),
                    read_bytes_per_second: weighted(&|h| of(h).map(|e| e.read_bytes_per_second))
                        .unwrap_or(d.read_bytes_per_second),
                    written_bytes_per_second: weighted(&|h| {
                        of(h).map(|e| e.written_bytes_per_second)
                    })
                    .unwrap_or(d.written_bytes_per_second),
                }
            })
            .collect(),
    }
}

/// Everything concurrency mode answers for a session; None when no cell
/// ran in it.
pub fn analyse(session: &Session, precision: f64) -> Option<Concurrency> {
    if !session
        .results
        .iter()
        .any(|r| r.cell.variant.concurrency.is_some())
    {
        return None;
    }
    let cells: Vec<Option<CellThroughput>> = session.results.iter().map(cell_throughput).collect();
    Some(Concurrency {
        comparisons: compare(session, &cells, precision),
        scaling: scaling(session, &cells),
        cells,
    })
}

/// Seconds per completion of each batch, by block (with the batch's own
/// reading of throughput, beside the batch).
pub use crate::run::session::batch::per_block;

/// The reference's and a candidate's seconds per completion, paired by
/// block where the order interleaved them (blocks both have), else each
/// side's own.
fn pair_blocks(base: &[(usize, f64)], cand: &[(usize, f64)], paired: bool) -> (Vec<f64>, Vec<f64>) {
    if paired {
        base.iter()
            .filter_map(|(k, a)| cand.iter().find(|(j, _)| j == k).map(|(_, b)| (*a, *b)))
            .unzip()
    } else {
        (
            base.iter().map(|x| x.1).collect(),
            cand.iter().map(|x| x.1).collect(),
        )
    }
}

/// The cells compared with the reference: those at its concurrency.
fn compared(concurrency: &[Option<usize>], reference: usize) -> Vec<usize> {
    let Some(Some(n)) = concurrency.get(reference).copied() else {
        return Vec::new();
    };
    (0..concurrency.len())
        .filter(|&i| i != reference && concurrency[i] == Some(n))
        .collect()
}

/// Adaptive stopping in concurrency mode: the planned look after every
/// cell has made `blocks` batches, over batches (the comparisons' units),
/// not runs. `cells` holds each cell's concurrency and batches. With
/// cells to compare at the reference's N, the look is the sequential
/// rule's (`Sequential::look_pairs`, spending alpha); without (one cell,
/// or a sweep of N), the session may stop once every cell's throughput
/// interval is within the precision, which spends nothing. True when the
/// session may stop.
pub fn look(
    seq: &mut Sequential,
    cells: &[(Option<usize>, &[BatchRecord])],
    reference: usize,
    paired: bool,
) -> bool {
    let concurrency: Vec<Option<usize>> = cells.iter().map(|c| c.0).collect();
    let candidates = compared(&concurrency, reference);
    if candidates.is_empty() {
        return cells
            .iter()
            .filter(|c| c.0.is_some())
            .all(|c| precise(seq.precision(), c.1));
    }
    if !seq.is_look(cells[reference].1.len()) {
        return false;
    }
    let base = per_block(cells[reference].1);
    let pairs: Vec<(Vec<f64>, Vec<f64>)> = candidates
        .iter()
        .map(|&i| pair_blocks(&base, &per_block(cells[i].1), paired))
        .collect();
    let pairs: Vec<(&[f64], &[f64])> = pairs
        .iter()
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect();
    seq.look_pairs(&pairs, paired)
}

/// The level the throughput comparisons of a finished session are made
/// at when it stopped with sequential looks: its looks replayed on its
/// batches, as the runner made them (a stored session's report must say
/// what `run` said).
pub fn replay_looks(
    mut seq: Sequential,
    cells: &[(Option<usize>, &[BatchRecord])],
    reference: usize,
    paired: bool,
) -> f64 {
    let concurrency: Vec<Option<usize>> = cells.iter().map(|c| c.0).collect();
    if compared(&concurrency, reference).is_empty() {
        return seq.final_level();
    }
    let made = cells
        .iter()
        .filter(|c| c.0.is_some())
        .map(|c| c.1.len())
        .min()
        .unwrap_or(0);
    for blocks in 1..=made {
        if !seq.is_look(blocks) {
            continue;
        }
        let prefix: Vec<(Option<usize>, &[BatchRecord])> = cells
            .iter()
            .map(|&(n, b)| (n, &b[..blocks.min(b.len())]))
            .collect();
        if look(&mut seq, &prefix, reference, paired) {
            break;
        }
    }
    seq.final_level()
}

/// Whether a cell's throughput interval (the one `cell_throughput`
/// shows: Student's t over its batches) is within `precision` of it.
fn precise(precision: f64, batches: &[BatchRecord]) -> bool {
    let values: Vec<f64> = batches.iter().filter_map(batch_throughput).collect();
    match (mean(&values), interval(&values)) {
        (Some(v), Some([lo, hi])) if v > 0.0 => (hi - lo) / 2.0 / v <= precision,
        _ => false,
    }
}

/// Student's t interval of the batches' throughputs (clamped at 0).
fn interval(values: &[f64]) -> Option<[f64; 2]> {
    stats::ttest::paired_t(values, LEVEL)
        .ok()
        .filter(|t| t.low.is_finite() && t.high.is_finite())
        .map(|t| [t.low.max(0.0), t.high])
}

fn compare(session: &Session, cells: &[Option<CellThroughput>], precision: f64) -> Vec<Comparison> {
    let reference = session.reference;
    let Some(Some(base)) = cells.get(reference) else {
        return Vec::new();
    };
    let pairs: Vec<usize> = (0..cells.len())
        .filter(|&i| i != reference)
        .filter(|&i| {
            cells[i]
                .as_ref()
                .is_some_and(|c| c.concurrency == base.concurrency)
        })
        .collect();
    let base_blocks = per_block(&session.results[reference].batches);
    let settings = Settings {
        family: pairs.len().max(1),
        counted: "batches",
        ..Settings::new(session.final_alpha, precision)
    };
    pairs
        .into_iter()
        .map(|i| {
            let cand_blocks = per_block(&session.results[i].batches);
            // Paired by block where both have the block; the design is
            // paired only in interleaved order, as for single runs.
            let paired = session.order == crate::run::schedule::Order::Interleaved;
            let (a, b) = pair_blocks(&base_blocks, &cand_blocks, paired);
            let design = if paired {
                Design::Paired
            } else {
                Design::Unpaired
            };
            comparison::compare_values(&a, &b, design, &settings).named(
                "throughput",
                &session.results[reference].cell.name,
                &session.results[i].cell.name,
            )
        })
        .collect()
}

/// Cells that differ only in their concurrency form a curve: same command
/// template, same parameters but the ones whose value is the concurrency.
fn scaling(session: &Session, cells: &[Option<CellThroughput>]) -> Vec<Scaling> {
    let key = |i: usize| {
        let c = &session.results[i].cell;
        let n = c.variant.concurrency.unwrap_or(1).to_string();
        let params: Vec<&(String, String)> = c.parameters.iter().filter(|(_, v)| *v != n).collect();
        format!("{}\u{0}{:?}", c.template, params)
    };
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        if c.is_none() {
            continue;
        }
        let k = key(i);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(i),
            None => groups.push((k, vec![i])),
        }
    }
    groups
        .into_iter()
        .filter_map(|(_, mut members)| {
            members.sort_by_key(|&i| cells[i].as_ref().map_or(0, |c| c.concurrency));
            let mut levels: Vec<usize> = members
                .iter()
                .filter_map(|&i| cells[i].as_ref().map(|c| c.concurrency))
                .collect();
            levels.dedup();
            if levels.len() < 2 {
                return None;
            }
            let points: Vec<UslPoint> = members
                .iter()
                .filter_map(|&i| cells[i].as_ref())
                .map(|c| UslPoint {
                    n: c.concurrency as f64,
                    throughput: c.value,
                    // The interval's half-width over its t quantile is the
                    // standard error; without an interval, none.
                    se: c.ci.map(|[lo, hi]| (hi - lo) / 2.0 / t_95(c.batches)),
                })
                .collect();
            let usl = stats::fit_usl(&points, LEVEL)
                .unwrap_or(UslOutcome::Withheld(stats::Withheld::Unidentifiable));
            Some(Scaling {
                cells: members,
                points,
                usl,
            })
        })
        .collect()
}

/// Student's 97.5 % quantile for `n` batches (n − 1 degrees of freedom).
fn t_95(n: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, (n.max(2) - 1) as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(1.96)
}

#[cfg(test)]
mod tests;
