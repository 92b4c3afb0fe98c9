//! The one comparison engine: "is B slower than A, and by how much?" for
//! `run`, `compare`, `check`, `report` and the optimum search. One analysis
//! gives one test, one interval and one verdict per comparison, so a
//! verdict, its p-value and its interval shown together always agree.
//! docs/STATISTICS.md is the contract; in short:
//!
//! - **Design.** Interleaved blocks pair the k-th runs of two cells
//!   (`Design::Paired`): under the null the order inside a block was
//!   shuffled, so each per-block difference is as likely to be d as -d,
//!   even on a drifting machine. Sequential order and runs from different
//!   sessions have no pairing (`Design::Unpaired`).
//! - **Scale.** Positive metrics are compared on logarithms (ratio =
//!   exp(estimate), symmetric for faster and slower); metrics with zeros on
//!   raw differences (ratio = 1 + shift / baseline median).
//! - **Test, chosen by n and level only, never by the data.** A rank test
//!   (exact signed-rank / Mann-Whitney, exact conditional given ties) when
//!   its smallest attainable two-sided p is at most a tenth of the
//!   comparison's level, so its discreteness costs little; else the paired
//!   t-test or Welch's t-test, whose resolution does not collapse at small
//!   n (6 pairs: the signed-rank test cannot go below 2/64). Discrete
//!   metrics (counts, sizes) use the exact rank tests only.
//! - **Multiplicity.** Bonferroni within a metric's family of m comparisons:
//!   each comparison is tested at alpha/m and its interval has confidence
//!   1 - alpha/m, so the interval excludes "no change" exactly when the
//!   verdict is significant. (Holm has no such simple intervals.)
//! - **Verdict.** faster/slower when the test rejects; "no difference" when
//!   it does not and the ratio interval lies within [1 - p, 1 + p]
//!   (p = `--precision`); "inconclusive", with a note saying why, otherwise;
//!   "not comparable" when both sides sit at a metric's floor. A result is
//!   returned for every requested comparison, never dropped.

mod advice;
mod cells;
mod engine;
mod note;
mod sessions;

pub use advice::{add_time_to_advice, advise_longer_max_time, noise_cause, BUSY_SHARE};
pub use cells::{compare_cells, compare_stored, paired_values, StoredRuns};
pub use engine::{
    compare_values, constant, discrete_runs_needed, p_value, rank_test_resolution,
    repeated_by_chance, runs_to_trust_repeats, select_test, set_exact_change, verdict_only,
};
pub use note::{Advice, Caveat, Interval, NoiseCause, Note, Per, Took, Way};
pub use sessions::{session_sigma, widen_for_sessions, widen_to_variance};

use serde::Serialize;

use crate::analysis::modes::SpeedModes;
use crate::metrics::{Metric, Unit};

/// The outcome of one comparison, for the whole crate.
/// Relative precision adaptive stopping aims for when the user gives no run count.
pub const DEFAULT_PRECISION: f64 = 0.01;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// The candidate is significantly smaller (faster, less memory, ...).
    #[serde(rename = "faster")]
    Faster,
    /// The candidate is significantly larger.
    #[serde(rename = "slower")]
    Slower,
    /// Not significant, and the ratio interval lies within the precision band.
    #[serde(rename = "no difference")]
    NoDifference,
    /// Neither: the data cannot decide (see the comparison's `note`).
    #[serde(rename = "inconclusive")]
    Inconclusive,
    /// The metric cannot be compared (e.g. both sides at cmdscope's floor).
    #[serde(rename = "not comparable")]
    NotComparable,
}

impl Verdict {
    /// The verdict in words, as printed and exported.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no difference",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotComparable => "not comparable",
        }
    }

    /// A short form for tables.
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "~",
            Verdict::Inconclusive => "?",
            Verdict::NotComparable => "n/a",
        }
    }

    /// faster or slower: the test rejected "no change".
    pub fn is_significant(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }
}

/// How the two samples relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// Value i of both samples comes from the same block (interleaved order).
    Paired,
    /// Independent samples (sequential order, different sessions).
    Unpaired,
}

/// Whether the interval accounts for session-to-session variation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SessionVariation {
    /// Both sides come from one session: nothing to account for.
    SameSession,
    /// Runs from different sessions, tested as if sessions did not vary:
    /// the interval is too narrow by the between-session spread.
    NotIncluded,
    /// Widened by a between-session standard deviation (on the log scale
    /// for ratios) estimated from `sessions` baseline sessions; `df`: the
    /// degrees of freedom of that estimate when the interval and p-value
    /// carry its uncertainty (Student's t), absent when taken as known.
    Included {
        sigma: f64,
        sessions: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        df: Option<f64>,
    },
}

/// Everything one analysis needs besides the data. Build it with
/// `Settings::for_metric` (or `Settings::new`) and struct-update syntax,
/// so fields added later keep callers compiling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Family-wise significance level of this metric's family of comparisons
    /// (e.g. 0.05, or what a sequential session has left for its final look).
    pub alpha: f64,
    /// Number of comparisons of this metric in the analysis (Bonferroni m);
    /// at least 1.
    pub family: usize,
    /// Relative half-width of the "no difference" band (0.01 for ±1 %).
    pub precision: f64,
    /// A value at or below which the metric says nothing (cmdscope's own
    /// peak resident size for peak memory): both sides entirely at or
    /// below it are "not comparable".
    pub floor: Option<f64>,
    /// The two sides come from different sessions (sets
    /// `SessionVariation::NotIncluded` and says so in the note).
    pub cross_session: bool,
    /// The metric takes discrete values (counts, bytes, pages): only the
    /// exact rank tests are used, never the t-tests. A t-test's level below
    /// the sign-flip resolution rests on the differences' magnitudes being
    /// unequal, as continuous timing noise makes them; counts that differ
    /// by exactly ±1 in every pair would make it claim p = 0.016 at 5 pairs
    /// where only 1 in 16 sign patterns is as extreme.
    pub discrete: bool,
    /// Paired comparisons of positive continuous values look for two speed
    /// modes in the pooled runs and, when found, compare only the blocks
    /// whose two runs share a mode (`analysis::modes`). Off only to measure
    /// what it buys.
    pub speed_modes: bool,
    /// What one value stands for, as the notes count them: "runs", or
    /// "batches" for throughput (one value per batch of concurrency mode).
    pub counted: &'static str,
    /// The values are exact counts (a simulator's, `Metric::simulated`):
    /// when every run of each side gave the same count, from 2 runs a side
    /// on, the change is known, not estimated; counts that vary go to the
    /// test as any other values.
    pub exact_counts: bool,
    /// With `exact_counts`: the program's counts are known to vary between
    /// runs (a simulated profile whose totals or other counts differed), so
    /// a count that repeated in every run of each side may have done so by
    /// chance. Its change is then exact only when such a repetition is
    /// unlikely at the comparison's level (`repeated_by_chance`); with
    /// fewer runs the comparison is inconclusive and says how many decide.
    pub counts_vary: bool,
}

impl Settings {
    /// One comparison at alpha with the default precision band.
    pub fn new(alpha: f64, precision: f64) -> Settings {
        Settings {
            alpha,
            family: 1,
            precision,
            floor: None,
            cross_session: false,
            discrete: false,
            speed_modes: true,
            counted: "runs",
            exact_counts: false,
            counts_vary: false,
        }
    }

    /// The settings for one metric: discrete for counts and sizes, the
    /// floor only for peak memory (`rss_floor`: cmdscope's own peak
    /// resident size, if known). Every caller comparing a `Metric` should
    /// start from here so the rules are the same everywhere.
    pub fn for_metric(
        metric: Metric,
        alpha: f64,
        family: usize,
        precision: f64,
        rss_floor: Option<f64>,
    ) -> Settings {
        Settings {
            alpha,
            family,
            precision,
            floor: if metric == Metric::PeakRss {
                rss_floor.map(at_floor_limit)
            } else {
                None
            },
            cross_session: false,
            discrete: metric.unit() != Unit::Seconds,
            speed_modes: true,
            counted: "runs",
            exact_counts: metric.simulated(),
            counts_vary: false,
        }
    }

    /// The per-comparison level, alpha / m.
    pub fn level(&self) -> f64 {
        self.alpha / self.family.max(1) as f64
    }
}

/// Which test decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Test {
    #[serde(rename = "wilcoxon-signed-rank")]
    SignedRank,
    #[serde(rename = "paired-t")]
    PairedT,
    #[serde(rename = "mann-whitney-u")]
    MannWhitney,
    #[serde(rename = "welch-t")]
    WelchT,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::SignedRank => "Wilcoxon signed-rank",
            Test::PairedT => "paired t-test",
            Test::MannWhitney => "Mann-Whitney U",
            Test::WelchT => "Welch t-test",
        }
    }
}

/// The scale the test and the intervals work on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// log(candidate / baseline): positive metrics.
    LogRatio,
    /// candidate - baseline: metrics that can be 0.
    Difference,
}

/// One comparison: candidate against baseline on one metric. `report`
/// serializes it (`Words(&comparison)`), with the note in its words.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub metric: &'static str,
    pub baseline: String,
    pub candidate: String,
    pub verdict: Verdict,
    /// Why there is no faster/slower/no-difference verdict, or what limits
    /// it (worded, and serialized as that wording, by `report::comparison`).
    pub note: Option<Note>,
    /// candidate / baseline (below 1: the candidate is smaller, i.e. faster).
    pub ratio: f64,
    /// Interval of `ratio` at `confidence`.
    pub ratio_ci: [f64; 2],
    /// Shift candidate - baseline in the metric's unit (Hodges-Lehmann for
    /// the rank tests, mean difference for the t-tests).
    pub shift: f64,
    pub shift_ci: [f64; 2],
    /// The test's two-sided p-value, compared with `level` (not adjusted).
    pub p_value: f64,
    /// Per-comparison significance level: alpha / `family` (Bonferroni).
    pub level: f64,
    /// Confidence of the intervals: 1 - `level`.
    pub confidence: f64,
    /// Comparisons of this metric in the analysis (Bonferroni m).
    pub family: usize,
    /// Relative half-width of the "no difference" band.
    pub precision: f64,
    pub test: Test,
    pub scale: Scale,
    /// The p-value comes from an exact distribution (conditional on ties).
    pub exact: bool,
    /// Pairs (paired) or the smaller sample's size (unpaired) used.
    pub n: usize,
    pub paired: bool,
    /// What one value stands for (`Settings::counted`), for the notes.
    pub counted: &'static str,
    pub session_variation: SessionVariation,
    /// Same as `verdict.is_significant()`, for readers of the JSON.
    pub significant: bool,
    /// The runs fell into two speeds: test, estimate and intervals use the
    /// blocks whose two runs share a mode (`n` counts those).
    pub speed_modes: Option<SpeedModes>,
    /// Why the engine could not decide for lack of data, when it could
    /// not: the one rule of what a metric needs (see [`Lack`]), which the
    /// gates read (`analysis::gate`) rather than counting runs themselves.
    pub lack: Option<Lack>,
}

/// What kept the engine from deciding, as opposed to an interval that is
/// simply wide: the data were not enough for any verdict on the metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lack {
    /// Fewer values per side (or pairs) than the metric's test needs at
    /// the comparison's level: [`MIN_N`] for times, more for a discrete
    /// metric whose exact rank test cannot reach the level with fewer.
    Values { need: usize, have: usize },
    /// Values that are not finite numbers.
    NotFinite,
}

/// The rank tests are used when their smallest attainable two-sided
/// p-value is at most this fraction of the level: then their discreteness
/// costs little power. Otherwise the t-tests.
pub const RANK_RESOLUTION_FACTOR: f64 = 10.0;

/// Fewest pairs (paired) or values per side (unpaired) for any verdict:
/// below 3 a t-test has at most 1 degree of freedom and the sign-flip
/// distribution at most 4 outcomes; no honest verdict is possible.
pub const MIN_N: usize = 3;

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
    Metric::SimInstructions,
    Metric::SimD1Misses,
    Metric::SimLlMisses,
    Metric::SimBranchMispredicts,
    Metric::SimEstimatedCycles,
];

/// `--fail-if-slower PCT`, the one gate rule: fails only when the verdict is
/// slower AND the lower end of the ratio interval lies above 1 + PCT/100,
/// i.e. the regression is significantly larger than PCT.
pub fn fails_gate(c: &Comparison, pct: f64) -> bool {
    c.verdict == Verdict::Slower && c.ratio_ci[0] > 1.0 + pct / 100.0
}

impl Comparison {
    /// The change is known, not estimated: exact values (repeated counts)
    /// compared without a test, so no p-value. `exact` alone may also
    /// mean an exact rank test's p-value beside an estimated change.
    pub fn exact_change(&self) -> bool {
        self.exact && self.p_value.is_nan()
    }

    /// The note without [`Caveat::SessionVariationLeftOut`], for outputs
    /// that say it once for all their rows.
    pub fn own_note(&self) -> Option<Note> {
        let own: Vec<Caveat> = (self.note.as_ref()?.0.iter())
            .filter(|r| **r != Caveat::SessionVariationLeftOut)
            .cloned()
            .collect();
        (!own.is_empty()).then_some(Note(own))
    }

    /// Gives the comparison its metric and the two sides' names.
    pub fn named(mut self, metric: &'static str, baseline: &str, candidate: &str) -> Comparison {
        self.metric = metric;
        self.baseline = baseline.to_string();
        self.candidate = candidate.to_string();
        self
    }
}

/// Peak memory within 2 % of cmdscope's own resident size counts as the
/// floor (the same slack the terminal report uses for "≤ floor").
pub fn at_floor_limit(floor: f64) -> f64 {
    floor * 1.02
}

#[cfg(test)]
mod tests;
