//! Change points in a benchmark's history: where its level stepped, slid
//! or stepped and came back, found on one summary per session and
//! confirmed on the sessions' runs; and whether the machine's own level
//! wanders.
//!
//! Method (docs/CHANGES.md has the reasons):
//! 1. Runs that fall into two speeds in most sessions (a shared VM), at
//!    least the smallest change apart, are brought to the fast speed
//!    (`speeds`).
//! 2. Summary per session: the median of log time over the session's runs
//!    (log, so that a step is the same size at 1 ms and at 1 s).
//! 3. A Hampel filter (window of 5 sessions, 3 robust standard deviations)
//!    replaces isolated outlier sessions by their neighbours' median, so that
//!    one bad session is not a pair of change points.
//! 4. The noise as a function of distance (`noise::Variogram`): how much
//!    summaries 1, 2, … 64 sessions apart differ when nothing changed, so
//!    noise that carries over from session to session (wander) is measured
//!    as such, not as the small difference of neighbouring sessions.
//! 5. Optimal partitioning by PELT (Killick et al. 2012) with the Gaussian
//!    mean-shift cost and a BIC-type penalty `penalty × ln(n) × σ²` per
//!    change, σ² the variogram at `window` sessions.
//! 6. Neighbouring change points that step the same way are one slow drift
//!    (a ramp with a start and an end) when a slide fits them better
//!    (`segment::pieces`); the other steps are moved to the best split
//!    of their neighbouring segments within `window`.
//! 7. Each step and drift is confirmed on the runs of the sessions next to
//!    it (up to `window` sessions each side, within its neighbours) with the
//!    comparison engine's unpaired test, its variance at least that of the
//!    difference of the two sides' means the variogram gives, with Student's
//!    t on the variogram's degrees of freedom; it must be at least
//!    `min_change` in size (each metric's own floor by default). When the
//!    residuals of the candidates show noise that carries over, the
//!    search for the best split is paid for (`search`: the critical value
//!    raised to the quantile of the largest split statistic of histories
//!    simulated with their dependence).
//! 8. The noise is measured again without the confirmed steps and drifts,
//!    and the history partitioned again with it.
//! 9. A change followed by its opposite, with the level after not
//!    confirmed to differ from the level before, is an episode; most
//!    benchmarks of one machine changing at one session is a machine-wide
//!    shift; a variogram that keeps rising with distance is wander.

mod analysed;
mod detect;
pub mod gate;
mod noise;
pub mod oracle;
pub mod score;
mod search;
mod segment;
pub mod select;
pub mod simulated;
mod speeds;

pub use analysed::*;
pub use detect::*;

use crate::metrics::Metric;

/// Parameters of the detection; `Default` is what `cmdscope changes` uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Fewest sessions in a segment.
    pub min_segment: usize,
    /// Multiplier of `ln(n) σ²` a split must gain.
    pub penalty: f64,
    /// Sessions each side of a change whose runs confirm it.
    pub window: usize,
    /// Level of the confirming test.
    pub alpha: f64,
    /// Smallest relative change reported (0.02: 2 %); None: the metric's
    /// own ([`floor`]).
    pub min_change: Option<f64>,
    /// The metric, when it is a cmdscope metric: the engine's settings
    /// for it (counts and sizes are discrete). None: continuous values.
    pub metric: Option<Metric>,
    /// The metric's name in the comparisons (`value` when unknown).
    pub metric_name: &'static str,
    /// Histories up to this many points are partitioned over every point;
    /// longer ones over the locations seeded intervals propose.
    pub exact_up_to: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            min_segment: 3,
            penalty: 5.0,
            window: 10,
            alpha: 0.01,
            min_change: None,
            metric: None,
            metric_name: METRIC_LOG,
            exact_up_to: segment::EXACT_UP_TO,
        }
    }
}

impl Params {
    /// The smallest change reported: `min_change`, else the metric's floor.
    pub fn min_change(&self) -> f64 {
        self.min_change.unwrap_or_else(|| floor(self.metric_name))
    }

    /// Session-to-session noise below this (log units) is taken as this:
    /// identical summaries (coarse timers, exact counts) must not make
    /// every tiny difference a change. A twentieth of the smallest change
    /// reported, at most 0.1 %.
    fn min_sigma(&self) -> f64 {
        (self.min_change() / 20.0).min(1e-3)
    }
}

/// The smallest relative change of a metric worth reporting, when the
/// user does not say (`--min-change`): 2 % for times and what moves with
/// them (a wall-time figure: machines drift by about 1 % in stretches),
/// 1 % for sizes and minor page faults (a fixed allocation moves them
/// little), 0.1 % for counted instructions (nearly exact), 5 % for counts
/// that follow the scheduler (context switches, migrations, major
/// faults) and for the 99th latency percentile, 3 % for the 90th.
pub fn floor(metric: &str) -> f64 {
    match metric {
        "instructions" => 0.001,
        "memory_peak_resident"
        | "page_faults_minor"
        | "io_read_bytes"
        | "io_write_bytes"
        | "io_read_chars"
        | "io_write_chars" => 0.01,
        "context_switches_voluntary"
        | "context_switches_involuntary"
        | "cpu_migrations"
        | "page_faults_major"
        | crate::store::history::LATENCY_P99 => 0.05,
        crate::store::history::LATENCY_P90 => 0.03,
        _ => 0.02,
    }
}

/// The engine's "no difference" band; unused for the decision here (only
/// faster/slower confirm a change) but part of its settings.
const PRECISION: f64 = 0.01;

/// The comparisons' metric name when the history's metric is not known.
const METRIC_LOG: &str = "value";

/// Hampel filter: half-width of the window and threshold in robust SDs.
const HAMPEL_HALF: usize = 2;
const HAMPEL_K: f64 = 3.0;

/// Scale of the MAD that makes it a standard deviation for normal data.
const MAD_SCALE: f64 = 1.4826;

/// Wander is reported when the variogram over this many windows is at
/// least `WANDER_RATIO` times its value at one session (as standard
/// deviations) and the wander itself at least a quarter of the smallest
/// change: noise that carries over, large enough to matter.
const WANDER_WINDOWS: usize = 2;
const WANDER_RATIO: f64 = std::f64::consts::SQRT_2;

/// In the pass whose penalty is that of neighbouring points' noise, at
/// most this many pieces (a slide and a step beside it), whose residuals
/// do not wander, must take `1 - 1/EXPLAINED_ALL` of the variogram at
/// `WANDER_WINDOWS` windows.
const MAX_EXPLAINING: usize = 3;
const EXPLAINED_ALL: f64 = 10.0;

#[cfg(test)]
mod tests;
