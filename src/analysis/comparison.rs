//! Comparisons between the cells of one session: ratio with interval,
//! Hodges-Lehmann shift, p-value, Holm correction and a verdict per metric.
//!
//! Design: with interleaved order the k-th run of every cell belongs to
//! block k, so runs are *paired* and the test is Wilcoxon's signed-rank test
//! on per-block differences. Pairing cancels drift that is slow compared to a
//! block (turbo, throttling, load): under the null hypothesis the two runs of
//! a block are exchangeable because their order was shuffled, which is
//! exactly the symmetry the signed-rank test needs, so the test keeps its
//! level even on a drifting machine. Sequential order has no pairing and
//! falls back to Mann-Whitney U (valid only without drift; we warn).
//!
//! Ratios are computed on logarithms (exp of the Hodges-Lehmann estimate of
//! the log-ratio), so the interval is consistent with the test and symmetric
//! for "faster" and "slower". Metrics with zeros (I/O bytes, faults) are
//! compared on raw differences and their ratio is the ratio of medians.

use serde::Serialize;

use crate::analysis::{values, LEVEL};
use crate::metrics::Metric;
use crate::runner::CellResult;
use crate::schedule::Order;
use crate::stats;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "faster")]
    Faster,
    #[serde(rename = "slower")]
    Slower,
    #[serde(rename = "no difference")]
    NoDifference,
}

impl Verdict {
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "~",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub metric: &'static str,
    pub baseline: String,
    pub candidate: String,
    /// candidate / baseline (below 1: the candidate is smaller, i.e. faster).
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    /// Hodges-Lehmann shift candidate - baseline, in the metric's unit.
    pub shift: f64,
    pub shift_ci: [f64; 2],
    /// Holm-adjusted p-value.
    pub p_value: f64,
    pub p_value_raw: f64,
    pub significant: bool,
    pub verdict: Verdict,
    /// "wilcoxon-signed-rank (paired by block)" or "mann-whitney-u".
    pub test: &'static str,
    pub n: usize,
}

/// Metrics worth comparing (counters only when measured).
pub const COMPARED: &[Metric] = &[
    Metric::WallTime,
    Metric::UserTime,
    Metric::SystemTime,
    Metric::CpuTime,
    Metric::PeakRss,
    Metric::MinorFaults,
    Metric::MajorFaults,
    Metric::VoluntaryCtx,
    Metric::InvoluntaryCtx,
    Metric::IoReadBytes,
    Metric::IoWriteBytes,
    Metric::IoReadChars,
    Metric::IoWriteChars,
    Metric::TaskClock,
    Metric::CpuCycles,
    Metric::Instructions,
    Metric::CacheReferences,
    Metric::CacheMisses,
    Metric::BranchMisses,
];

/// One metric compared, before multiplicity correction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Raw {
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    pub shift: f64,
    pub shift_ci: [f64; 2],
    pub p_value: f64,
    pub test: &'static str,
    pub n: usize,
}

/// Raw (unadjusted) comparison of one metric; None when the data cannot support one.
pub fn compare_metric(base: &[f64], cand: &[f64], paired: bool, level: f64) -> Option<Raw> {
    let n = base.len().min(cand.len());
    let (p_value, shift, test) = if paired {
        let diffs: Vec<f64> = (0..n).map(|i| cand[i] - base[i]).collect();
        if diffs.iter().all(|&d| d == 0.0) {
            return None;
        }
        let t = stats::wilcoxon_signed_rank(&diffs).ok()?;
        let shift = stats::hodges_lehmann_paired(&diffs, level).ok()?;
        (t.p_value, shift, "wilcoxon-signed-rank (paired by block)")
    } else {
        if base.iter().chain(cand).all(|&v| v == base[0]) {
            return None;
        }
        let t = stats::mann_whitney(base, cand).ok()?;
        let shift = stats::hodges_lehmann_shift(base, cand, level).ok()?;
        (t.p_value, shift, "mann-whitney-u")
    };
    let (ratio, ratio_ci) = ratio(base, cand, paired, level)?;
    Some(Raw {
        ratio,
        ratio_ci,
        shift: shift.value,
        shift_ci: [shift.low, shift.high],
        p_value,
        test,
        n,
    })
}

/// The ratio candidate/baseline with its interval: Hodges-Lehmann on
/// logarithms for positive data (consistent with the rank test), else a
/// bootstrap ratio of medians (NaN when even that is undefined).
fn ratio(base: &[f64], cand: &[f64], paired: bool, level: f64) -> Option<(f64, [f64; 2])> {
    if base.iter().chain(cand).all(|&v| v > 0.0) {
        let e = if paired {
            let logs: Vec<f64> = base.iter().zip(cand).map(|(a, b)| (b / a).ln()).collect();
            stats::hodges_lehmann_paired(&logs, level).ok()?
        } else {
            let la: Vec<f64> = base.iter().map(|v| v.ln()).collect();
            let lb: Vec<f64> = cand.iter().map(|v| v.ln()).collect();
            stats::hodges_lehmann_shift(&la, &lb, level).ok()?
        };
        return Some((e.value.exp(), [e.low.exp(), e.high.exp()]));
    }
    Some(
        stats::ratio_of_medians(base, cand, level, 0x5eed)
            .map(|e| (e.value, [e.low, e.high]))
            .unwrap_or((f64::NAN, [f64::NAN; 2])),
    )
}

/// Compares every cell with the reference cell, for every metric measured in
/// both. Holm's correction is applied per metric across the candidates (the
/// family is "which commands differ from the reference in this metric").
pub fn compare_cells(
    results: &[CellResult],
    reference: usize,
    order: Order,
    alpha: f64,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    if results.len() < 2 || reference >= results.len() {
        return out;
    }
    let paired = order == Order::Interleaved;
    for &metric in COMPARED {
        let base_vals = measured(&results[reference], metric);
        if base_vals.len() < 2 {
            continue;
        }
        let mut family = Vec::new();
        for (i, cand) in results.iter().enumerate() {
            if i == reference {
                continue;
            }
            let cand_vals = measured(cand, metric);
            if cand_vals.len() < 2 {
                continue;
            }
            let (b, c) = if paired {
                paired_values(&results[reference], cand, metric)
            } else {
                (base_vals.clone(), cand_vals)
            };
            if b.len() < 2 {
                continue;
            }
            if let Some(r) = compare_metric(&b, &c, paired, LEVEL) {
                family.push(Comparison {
                    metric: metric.name(),
                    baseline: results[reference].cell.name.clone(),
                    candidate: cand.cell.name.clone(),
                    ratio: r.ratio,
                    ratio_ci: r.ratio_ci,
                    shift: r.shift,
                    shift_ci: r.shift_ci,
                    p_value: r.p_value,
                    p_value_raw: r.p_value,
                    significant: false,
                    verdict: Verdict::NoDifference,
                    test: r.test,
                    n: r.n,
                });
            }
        }
        let raw: Vec<f64> = family.iter().map(|c| c.p_value_raw).collect();
        for (c, adj) in family.iter_mut().zip(stats::holm(&raw)) {
            c.p_value = adj;
            c.significant = adj < alpha;
            c.verdict = match (c.significant, c.shift < 0.0) {
                (false, _) => Verdict::NoDifference,
                (true, true) => Verdict::Faster,
                (true, false) => Verdict::Slower,
            };
        }
        out.extend(family);
    }
    out
}

fn measured(r: &CellResult, metric: Metric) -> Vec<f64> {
    values(&r.samples, metric)
}

/// Values of the same blocks in both cells: the k-th measured run of each
/// cell ran in block k. Blocks where either run timed out are dropped.
fn paired_values(a: &CellResult, b: &CellResult, metric: Metric) -> (Vec<f64>, Vec<f64>) {
    let n = a.samples.len().min(b.samples.len());
    let mut x = Vec::with_capacity(n);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let (sa, sb) = (&a.samples[i], &b.samples[i]);
        if !sa.counts() || !sb.counts() {
            continue;
        }
        if let (Some(va), Some(vb)) = (sa.get(metric), sb.get(metric)) {
            x.push(va);
            y.push(vb);
        }
    }
    (x, y)
}

/// "B is 1.23x faster than A (95 % CI 1.19–1.27, p < 0.001)".
pub fn sentence(c: &Comparison) -> String {
    let p = format_p(c.p_value);
    let pct = (LEVEL * 100.0).round();
    let (r, lo, hi) = match c.verdict {
        Verdict::Faster => (1.0 / c.ratio, 1.0 / c.ratio_ci[1], 1.0 / c.ratio_ci[0]),
        _ => (c.ratio, c.ratio_ci[0], c.ratio_ci[1]),
    };
    // Enough decimals that the interval's ends differ.
    let d = if (hi - lo).abs() >= 0.02 {
        2
    } else if (hi - lo).abs() >= 0.002 {
        3
    } else {
        4
    };
    let ci = format!("{pct:.0} % CI {lo:.d$}–{hi:.d$}, {p}");
    match c.verdict {
        Verdict::Faster => format!(
            "'{}' is {r:.d$}x faster than '{}' ({ci})",
            c.candidate, c.baseline
        ),
        Verdict::Slower => format!(
            "'{}' is {r:.d$}x slower than '{}' ({ci})",
            c.candidate, c.baseline
        ),
        Verdict::NoDifference => format!(
            "'{}' and '{}': no significant difference (ratio {r:.d$}, {ci})",
            c.candidate, c.baseline
        ),
    }
}

pub fn format_p(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}
