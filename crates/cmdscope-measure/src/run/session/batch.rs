//! A batch's throughput: completions per second while all its N
//! instances were busy, the smaller of two readings of that stretch, each
//! right where the other errs and each erring only upward (the slots'
//! progress, [`counted`], and whole completions, [`whole_completions`];
//! `analysis::concurrency`'s comment and docs/STATISTICS.md, "Throughput
//! of a batch", say where each errs). Here, beside the batch it reads,
//! so that the store can give a stored batch's throughput to `history`
//! without using the analysis that compares it.

use super::BatchRecord;
use crate::stats::mean;

/// The slots' progress: the seconds from the
/// moment every slot had made its first completion to the moment the
/// first slot made its last, the completions made between them (each
/// slot's progress read off its own completions, linear between two of
/// them), and the sample indices of the instances that ended in that
/// stretch.
pub fn counted(b: &BatchRecord) -> Option<(f64, f64, Vec<usize>)> {
    let slots = b.concurrency.max(1);
    let mut ends: Vec<Vec<f64>> = vec![Vec::new(); slots];
    for s in &b.spans {
        if let Some(e) = ends.get_mut(s.slot) {
            e.push(s.end);
        }
    }
    if ends.iter().any(Vec::is_empty) {
        return None;
    }
    for e in &mut ends {
        e.sort_by(f64::total_cmp);
    }
    let from = ends.iter().map(|e| e[0]).fold(f64::NEG_INFINITY, f64::max);
    // The busy stretch ends when the first slot made its last completion.
    let to = b.busy.1;
    if to.partial_cmp(&from) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let completions: f64 = ends
        .iter()
        .map(|e| progress(e, to) - progress(e, from))
        .sum();
    let instances: Vec<usize> = (b.spans.iter().enumerate())
        .filter(|(_, s)| s.end > from && s.end <= to)
        .map(|(k, _)| b.first_sample + k)
        .collect();
    (completions > 0.0).then_some((to - from, completions, instances))
}

/// Completions a slot had made by `t`, its ends sorted and `t` within
/// them: whole ones, plus the share of the cycle under way.
fn progress(ends: &[f64], t: f64) -> f64 {
    let done = ends.partition_point(|&e| e <= t);
    match (done.checked_sub(1).map(|i| ends[i]), ends.get(done)) {
        (Some(last), Some(&next)) if next > last => done as f64 + (t - last) / (next - last),
        _ => done as f64,
    }
}

/// Completions per second counted whole between two completions `m`
/// apart, `m` the largest multiple of N that the completions inside the
/// stretch in which every slot was running allow (from the latest first
/// start to the earliest last end), averaged over the windows of `m` that
/// fit. None with fewer than N + 1 completions there.
pub fn whole_completions(b: &BatchRecord) -> Option<f64> {
    let slots = b.concurrency.max(1);
    let (from, to) = b.busy;
    let mut ends: Vec<f64> = (b.spans.iter())
        .filter(|s| s.slot < slots && s.end >= from && s.end <= to)
        .map(|s| s.end)
        .collect();
    ends.sort_by(f64::total_cmp);
    let gaps = ends.len().checked_sub(1)?;
    let m = gaps / slots * slots;
    if m == 0 {
        return None;
    }
    let rates: Vec<f64> = (0..=gaps - m)
        .map(|a| ends[a + m] - ends[a])
        .filter(|&seconds| seconds > 0.0)
        .map(|seconds| m as f64 / seconds)
        .collect();
    mean(&rates)
}

/// Completions per second of a batch: the smaller of the slots' progress
/// ([`counted`]) and the whole completions ([`whole_completions`]), or
/// the one there is; and the sample indices of the instances its rates
/// count (those that ended in the slots' stretch, else in the stretch in
/// which every slot was running).
pub fn batch_rate(b: &BatchRecord) -> Option<(f64, Vec<usize>)> {
    let whole = whole_completions(b);
    match counted(b) {
        Some((seconds, completions, instances)) => {
            let progress = completions / seconds;
            Some((whole.map_or(progress, |w| w.min(progress)), instances))
        }
        None => {
            let (from, to) = b.busy;
            let instances = (b.spans.iter().enumerate())
                .filter(|(_, s)| s.end >= from && s.end <= to)
                .map(|(k, _)| b.first_sample + k)
                .collect();
            whole.map(|w| (w, instances))
        }
    }
}

/// Completions per second of a batch ([`batch_rate`]).
pub fn batch_throughput(b: &BatchRecord) -> Option<f64> {
    batch_rate(b).map(|(throughput, _)| throughput)
}

/// Seconds per completion of each batch, by block: the units the
/// throughput comparisons and their sequential looks compare (and
/// `check`'s, between sessions).
pub fn per_block(batches: &[BatchRecord]) -> Vec<(usize, f64)> {
    batches
        .iter()
        .filter_map(|b| batch_throughput(b).map(|t| (b.block, t)))
        .filter(|&(_, t)| t > 0.0)
        .map(|(block, t)| (block, 1.0 / t))
        .collect()
}
