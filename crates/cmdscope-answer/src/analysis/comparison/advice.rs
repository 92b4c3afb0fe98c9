//! What would decide an inconclusive comparison (how many runs, how long
//! they would take, and the way to get them), and what its noise looked
//! like.

use crate::metrics::Metric;
use crate::run::session::CellResult;
use crate::stats;

use super::{Advice, Caveat, Comparison, NoiseCause, Took, Verdict, Way};

/// Run longer, and by how much. On the log scale an interval's half-width h
/// shrinks about as 1/sqrt(n) (a little faster at small n, as the t
/// quantile falls); N is the fewer of the runs that would make the observed
/// ratio significant (h below |log ratio|) and those that would settle "no
/// difference" (h below log(1 + p) - |log ratio|, when the ratio is inside
/// the band). Rounded up, capped at 10,000.
pub(super) fn more_runs_advice(c: &Comparison) -> Advice {
    match runs_to_decide(c) {
        // --runs counts completions, not batches: the batches are said.
        Some(n) if c.counted != "runs" => Advice::MoreValues {
            per_cell: n,
            counted: c.counted,
        },
        Some(n) => Advice::RunLonger {
            runs: n,
            took: None,
        },
        None => Advice::TooMany { counted: c.counted },
    }
}

/// The runs per cell `more_runs_advice` names (None: more than 10,000).
/// Within speed modes only concordant blocks count: the blocks needed
/// grow by all blocks / concordant ones.
pub(super) fn runs_to_decide(c: &Comparison) -> Option<usize> {
    let (lo, hi, r) = (c.ratio_ci[0].ln(), c.ratio_ci[1].ln(), c.ratio.ln());
    let h = (hi - lo) / 2.0;
    let mut factor = f64::INFINITY;
    if h.is_finite() && h > 0.0 && r.is_finite() {
        if r != 0.0 {
            factor = factor.min((h / r.abs()).powi(2));
        }
        let room = (1.0 + c.precision).ln() - r.abs();
        if room > 0.0 {
            factor = factor.min((h / room).powi(2));
        }
    }
    if !factor.is_finite() {
        factor = 4.0;
    }
    let blocks_per_pair = match c.speed_modes {
        Some(m) if c.n > 0 => m.blocks as f64 / c.n as f64,
        _ => 1.0,
    };
    let have = (c.n as f64 * blocks_per_pair).round() as usize;
    let want = (c.n as f64 * factor.max(1.5) * blocks_per_pair).ceil();
    if want > 10_000.0 {
        return None;
    }
    Some((want as usize).max(have + 1))
}

/// Says how long the advice to run longer would take: each block runs
/// every cell once, `seconds_per_block` (their mean wall times together),
/// and that `--until-decided` is the way on. Other notes are left as
/// they are.
pub fn add_time_to_advice(c: &mut Comparison, seconds_per_block: f64) {
    let Some(n) = runs_to_decide(c) else {
        return;
    };
    if !(seconds_per_block.is_finite() && seconds_per_block > 0.0) {
        return;
    }
    if let Some(Advice::RunLonger { took, .. }) = advice_for(c, n) {
        *took = Some(Took {
            seconds: n as f64 * seconds_per_block,
            way: Way::UntilDecided,
        });
    }
}

/// The advice to run `n` runs per cell in `c`'s note, if it has one.
fn advice_for(c: &mut Comparison, n: usize) -> Option<&mut Advice> {
    c.note.as_mut()?.0.iter_mut().find_map(|r| match r {
        Caveat::TooWide { advice, .. } | Caveat::NotReached { advice, .. } => {
            matches!(advice, Advice::RunLonger { runs, .. } if *runs == n).then_some(advice)
        }
        _ => None,
    })
}

/// For a session that already ran `--until-decided`: its advice names a
/// longer `--max-time` instead.
pub fn advise_longer_max_time(c: &mut Comparison) {
    let Some(note) = c.note.as_mut() else {
        return;
    };
    for r in &mut note.0 {
        if let Caveat::TooWide { advice, .. } | Caveat::NotReached { advice, .. } = r {
            if let Advice::RunLonger { took: Some(t), .. } = advice {
                t.way = Way::LongerMaxTime;
                return;
            }
        }
    }
}

/// Median share of a run's wall time during which some task waited for a
/// CPU (`Disturbance::cpu_wait`) above which the machine is called busy.
pub const BUSY_SHARE: f64 = 0.5;

/// What the noise looked like, when it limited the answer: the
/// wall-time comparison is inconclusive, and either its runs fell into two
/// speeds or some task waited for a CPU during most of the two cells' run
/// time (`BUSY_SHARE`, from `results`). None otherwise, so a quiet machine
/// rarely sees it.
pub fn noise_cause(c: &Comparison, results: &[CellResult]) -> Option<NoiseCause> {
    if c.verdict != Verdict::Inconclusive || c.metric != Metric::WallTime.name() {
        return None;
    }
    let Some(m) = c.speed_modes else {
        let shares: Vec<f64> = results
            .iter()
            .filter(|r| r.cell.name == c.baseline || r.cell.name == c.candidate)
            .flat_map(|r| &r.samples)
            .filter(|s| s.counts())
            .filter_map(|s| Some(s.disturbance.cpu_wait? / s.get(Metric::WallTime)?))
            .filter(|v| v.is_finite())
            .collect();
        let busy = stats::median(&shares).filter(|&b| b >= BUSY_SHARE)?;
        return Some(NoiseCause::Busy { cpu_wait: busy });
    };
    Some(NoiseCause::TwoSpeeds(m))
}
