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

use serde::Serialize;

use crate::analysis::modes::{concordant_blocks, SpeedModes};
use crate::analysis::values;
use crate::metrics::{Metric, Unit};
use crate::run::schedule::Order;
use crate::run::session::CellResult;
use crate::stats;
use crate::stats::ttest;
use crate::units;

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

/// One comparison: candidate against baseline on one metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub metric: &'static str,
    pub baseline: String,
    pub candidate: String,
    pub verdict: Verdict,
    /// Why there is no faster/slower/no-difference verdict, or what limits it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    #[serde(skip)]
    pub counted: &'static str,
    pub session_variation: SessionVariation,
    /// Same as `verdict.is_significant()`, for readers of the JSON.
    pub significant: bool,
    /// The runs fell into two speeds: test, estimate and intervals use the
    /// blocks whose two runs share a mode (`n` counts those).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_modes: Option<SpeedModes>,
    /// Why the engine could not decide for lack of data, when it could
    /// not: the one rule of what a metric needs (see [`Lack`]), which the
    /// gates read (`analysis::gate`) rather than counting runs themselves.
    #[serde(skip)]
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

/// Smallest two-sided p-value the rank test of this design can give with
/// these sizes (no ties): 2 / 2^n paired, 2 / C(n_a + n_b, n_a) unpaired.
pub fn rank_test_resolution(design: Design, n_a: usize, n_b: usize) -> f64 {
    match design {
        Design::Paired => 2.0 * 0.5f64.powi(n_a.min(n_b).min(2000) as i32),
        Design::Unpaired => {
            let (k, n) = (n_a.min(n_b), n_a + n_b);
            // ln C(n, k) by a sum of logs: small k and n are all this needs
            // to be accurate, and large ones only need "tiny".
            let ln_c: f64 = (0..k)
                .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
                .sum();
            (2.0 * (-ln_c).exp()).min(1.0)
        }
    }
}

/// The test used for these sizes at this per-comparison level: by n and
/// level only, never by the data.
pub fn select_test(design: Design, n_a: usize, n_b: usize, level: f64) -> Test {
    let rank_ok = rank_test_resolution(design, n_a, n_b) <= level / RANK_RESOLUTION_FACTOR;
    match (design, rank_ok) {
        (Design::Paired, true) => Test::SignedRank,
        (Design::Paired, false) => Test::PairedT,
        (Design::Unpaired, true) => Test::MannWhitney,
        (Design::Unpaired, false) => Test::WelchT,
    }
}

/// One estimate with its interval and the test's p-value, on one scale.
struct Fit {
    estimate: f64,
    ci: [f64; 2],
    p: f64,
    exact: bool,
}

fn fit(
    test: Test,
    a: &[f64],
    b: &[f64],
    d: &[f64],
    confidence: f64,
    intervals: bool,
) -> Option<Fit> {
    match test {
        Test::SignedRank => {
            let t = stats::wilcoxon_signed_rank(d).ok()?;
            if !intervals {
                return Some(Fit::p_only(t.p_value, t.exact));
            }
            let e = stats::hodges_lehmann_paired(d, confidence).ok()?;
            Some(Fit {
                estimate: e.value,
                ci: [e.low, e.high],
                p: t.p_value,
                exact: t.exact,
            })
        }
        Test::MannWhitney => {
            let t = stats::mann_whitney(a, b).ok()?;
            if !intervals {
                return Some(Fit::p_only(t.p_value, t.exact));
            }
            let e = stats::hodges_lehmann_shift(a, b, confidence).ok()?;
            Some(Fit {
                estimate: e.value,
                ci: [e.low, e.high],
                p: t.p_value,
                exact: t.exact,
            })
        }
        Test::PairedT => {
            let t = ttest::paired_t(d, confidence).ok()?;
            // No spread at all: all n differences equal. The t statistic is
            // infinite, but sign flips of equal values can only prove as
            // much as their resolution, 2 / 2^n.
            Some(Fit::t(t, || {
                rank_test_resolution(Design::Paired, d.len(), d.len())
            }))
        }
        Test::WelchT => {
            let t = ttest::welch_t(a, b, confidence).ok()?;
            // Two constant samples: complete separation is all a
            // permutation argument can show.
            Some(Fit::t(t, || {
                rank_test_resolution(Design::Unpaired, a.len(), b.len())
            }))
        }
    }
}

impl Fit {
    /// A t-test's fit; without any spread (a zero standard error and a
    /// nonzero estimate) its p-value is the `resolution` of the matching
    /// rank test instead of what the infinite t statistic gives.
    fn t(t: ttest::TTest, resolution: impl FnOnce() -> f64) -> Fit {
        let p = if t.se == 0.0 && t.estimate != 0.0 {
            resolution()
        } else {
            t.p_value
        };
        Fit {
            estimate: t.estimate,
            ci: [t.low, t.high],
            p,
            exact: false,
        }
    }

    fn p_only(p: f64, exact: bool) -> Fit {
        Fit {
            estimate: f64::NAN,
            ci: [f64::NAN; 2],
            p,
            exact,
        }
    }
}

fn median(xs: &[f64]) -> f64 {
    stats::median(xs).unwrap_or(f64::NAN)
}

/// Compares `cand` with `base` (one metric, no names: see `Comparison::named`).
/// Always returns a comparison; where no verdict is possible it is
/// `Inconclusive` or `NotComparable` with a note.
pub fn compare_values(base: &[f64], cand: &[f64], design: Design, s: &Settings) -> Comparison {
    analyse(base, cand, design, s, Depth::Full)
}

/// How much of an analysis to compute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// The test's p-value only.
    PValue,
    /// The verdict: test, ratio interval and note, without the shift in the
    /// metric's unit (what sequential looks need).
    Verdict,
    Full,
}

/// The verdict of `compare_values` without the shift in the metric's
/// unit (`shift` and `shift_ci` are NaN): for the sequential looks, which
/// run it many times.
pub fn verdict_only(base: &[f64], cand: &[f64], design: Design, s: &Settings) -> Comparison {
    analyse(base, cand, design, s, Depth::Verdict)
}

/// The p-value of the test `compare_values` would use, without its
/// intervals (NaN where it gives none). For simulations that only need to
/// know whether a comparison could have been significant: p < level is
/// necessary for a faster/slower verdict.
pub fn p_value(base: &[f64], cand: &[f64], design: Design, s: &Settings) -> f64 {
    analyse(base, cand, design, s, Depth::PValue).p_value
}

fn analyse(base: &[f64], cand: &[f64], design: Design, s: &Settings, depth: Depth) -> Comparison {
    let intervals = depth != Depth::PValue;
    let family = s.family.max(1);
    let level = s.level();
    let confidence = 1.0 - level;
    let paired = design == Design::Paired;
    let (mut a, mut b): (&[f64], &[f64]) = if paired {
        let n = base.len().min(cand.len());
        (&base[..n], &cand[..n])
    } else {
        (base, cand)
    };
    let positive = a.iter().chain(b).all(|&v| v > 0.0 && v.is_finite());
    // Two speeds in the pooled runs: only blocks whose runs share a mode
    // are compared (exact under the paired null, see `analysis::modes`).
    let within = (paired && positive && !s.discrete && s.speed_modes)
        .then(|| concordant_blocks(a, b))
        .flatten()
        .filter(|(_, ka, _)| ka.len() >= MIN_N);
    if let Some((_, ka, kb)) = &within {
        (a, b) = (ka, kb);
    }
    let speed_modes = within.as_ref().map(|(m, _, _)| *m);
    let n = a.len().min(b.len());
    let scale = if positive {
        Scale::LogRatio
    } else {
        Scale::Difference
    };
    let test = if s.discrete {
        match design {
            Design::Paired => Test::SignedRank,
            Design::Unpaired => Test::MannWhitney,
        }
    } else {
        select_test(design, a.len(), b.len(), level)
    };
    let mut c = Comparison {
        metric: "",
        baseline: String::new(),
        candidate: String::new(),
        verdict: Verdict::Inconclusive,
        note: None,
        ratio: f64::NAN,
        ratio_ci: [f64::NAN; 2],
        shift: f64::NAN,
        shift_ci: [f64::NAN; 2],
        p_value: f64::NAN,
        level,
        confidence,
        family,
        precision: s.precision,
        test,
        scale,
        exact: false,
        n,
        paired,
        counted: s.counted,
        session_variation: if s.cross_session {
            SessionVariation::NotIncluded
        } else {
            SessionVariation::SameSession
        },
        significant: false,
        speed_modes,
        lack: None,
    };
    if let Some(floor) = s.floor {
        if !a.is_empty() && !b.is_empty() && a.iter().chain(b).all(|&v| v <= floor) {
            c.verdict = Verdict::NotComparable;
            c.note = Some("at cmdscope's floor, not comparable".into());
            return c;
        }
    }
    let what = if paired {
        format!("paired {}", s.counted)
    } else {
        format!("{} per side", s.counted)
    };
    if s.exact_counts && n >= 2 {
        if let (Some(va), Some(vb)) = (constant(a), constant(b)) {
            identical_counts(&mut c, va, vb, intervals, &what);
            return c;
        }
    }
    if n < MIN_N {
        c.note = Some(format!(
            "need at least {MIN_N} {what} for a verdict, have {n}"
        ));
        c.lack = Some(Lack::Values {
            need: MIN_N,
            have: n,
        });
        // Still say how the two compare, as hyperfine does: the ratio of
        // the medians, without an interval or a test.
        let (ma, mb) = (median(a), median(b));
        if ma > 0.0 && mb >= 0.0 {
            c.ratio = mb / ma;
        }
        return c;
    }
    if !(level > 0.0 && level < 1.0) {
        c.note = Some(format!("no verdict at significance level {level}"));
        return c;
    }
    if s.discrete && rank_test_resolution(design, a.len(), b.len()) > level {
        let need = (MIN_N..4096)
            .find(|&k| rank_test_resolution(design, k, k) <= level)
            .unwrap_or(4096);
        c.note = Some(format!(
            "need at least {need} {what} for a verdict on a discrete metric at level {}, have {n}",
            format_level(level)
        ));
        c.lack = Some(Lack::Values { need, have: n });
        return c;
    }
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        c.note = Some("values are not finite numbers".into());
        c.lack = Some(Lack::NotFinite);
        return c;
    }
    let raw_d: Vec<f64> = if paired {
        a.iter().zip(b).map(|(x, y)| y - x).collect()
    } else {
        Vec::new()
    };
    // Shift in the metric's unit, by the same test family.
    if let Some(f) = (depth == Depth::Full)
        .then(|| fit(test, a, b, &raw_d, confidence, true))
        .flatten()
    {
        c.shift = f.estimate;
        c.shift_ci = f.ci;
    }
    let main = if positive {
        let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
        let ld: Vec<f64> = if paired {
            la.iter().zip(&lb).map(|(x, y)| y - x).collect()
        } else {
            Vec::new()
        };
        fit(test, &la, &lb, &ld, confidence, intervals).map(|f| {
            let r = [f.estimate.exp(), f.ci[0].exp(), f.ci[1].exp()];
            (f, r)
        })
    } else {
        let m = median(a);
        fit(test, a, b, &raw_d, confidence, intervals).map(|f| {
            // From a baseline median of 0 any increase is infinitely
            // large (so a slowdown from 0 fails a gate), no change is 1.
            let rel = |x: f64| {
                if m > 0.0 {
                    1.0 + x / m
                } else if m == 0.0 && x >= 0.0 {
                    if x > 0.0 {
                        f64::INFINITY
                    } else {
                        1.0
                    }
                } else if m == 0.0 {
                    0.0
                } else {
                    f64::NAN
                }
            };
            let r = [rel(f.estimate), rel(f.ci[0]), rel(f.ci[1])];
            (f, r)
        })
    };
    let Some((f, r)) = main else {
        c.note = Some(format!(
            "the {} cannot be computed on these values",
            test.name()
        ));
        return c;
    };
    c.p_value = f.p;
    c.exact = f.exact;
    c.ratio = r[0];
    c.ratio_ci = [r[1], r[2]];
    if !intervals {
        return c;
    }
    let (est, ci) = (f.estimate, f.ci);
    decide(&mut c, est, ci);
    c
}

/// Every value of `v`, when they are all one.
fn constant(v: &[f64]) -> Option<f64> {
    let first = *v.first()?;
    v.iter().all(|&x| x == first).then_some(first)
}

/// The change of exact values, from each side's one value: known, so its
/// interval has no width.
pub fn set_exact_change(c: &mut Comparison, base: f64, cand: f64) {
    c.exact = true;
    c.ratio = if base > 0.0 { cand / base } else { f64::NAN };
    c.ratio_ci = [c.ratio; 2];
    c.shift = cand - base;
    c.shift_ci = [c.shift; 2];
}

/// Exact counts that repeated in every run of each side: the change is
/// decided as any other, by the precision band, with no test to run (the
/// p-value is "n/a").
fn identical_counts(c: &mut Comparison, base: f64, cand: f64, intervals: bool, what: &str) {
    set_exact_change(c, base, cand);
    if !intervals {
        c.p_value = if base == cand { 1.0 } else { 0.0 };
        return;
    }
    let estimate = if base > 0.0 && cand > 0.0 {
        (cand / base).ln()
    } else {
        cand - base
    };
    // Certain: significant unless there is no change at all.
    c.p_value = if base == cand { 1.0 } else { 0.0 };
    decide(c, estimate, [estimate; 2]);
    c.p_value = f64::NAN;
    let said = format!(
        "identical counts in every run ({} {what}): an exact change, no test",
        c.n
    );
    c.note = Some(match c.note.take() {
        Some(n) => format!("{said}; {n}"),
        None => said,
    });
}

/// Sets the verdict from the p-value and the interval (on the test's scale,
/// where 0 is "no change"), keeping the two in agreement.
fn decide(c: &mut Comparison, estimate: f64, ci: [f64; 2]) {
    let significant = c.p_value < c.level;
    let excludes = ci[0] > 0.0 || ci[1] < 0.0;
    let within = c.ratio_ci[0] >= 1.0 - c.precision && c.ratio_ci[1] <= 1.0 + c.precision;
    let identical = ci == [0.0, 0.0] && estimate == 0.0;
    let pct = format_confidence(c.confidence);
    // A ratio needs a positive baseline; otherwise speak of the change.
    let shown = if c.ratio_ci.iter().all(|v| v.is_finite()) {
        range(c.ratio_ci)
    } else {
        format!("of the change, {}", range(ci))
    };
    c.verdict = match (significant, excludes) {
        // The whole interval within ±precision: whatever the test says,
        // no difference the user asked to see (`--precision` says what
        // counts). A significant sliver (1.00004 on a 1 s command) is named
        // with its size rather than called "slower".
        (true, true) if within => {
            c.note = Some(format!(
                "the change is significant at {} but smaller than ±{}",
                format_level(c.level),
                trim_pct(c.precision)
            ));
            Verdict::NoDifference
        }
        (true, true) if estimate < 0.0 => Verdict::Faster,
        (true, true) => Verdict::Slower,
        (false, false) | (true, false) if within || identical => Verdict::NoDifference,
        (false, false) => {
            c.note = Some(format!(
                "the {pct} {shown} is too wide to tell a difference from none within ±{}; {}",
                trim_pct(c.precision),
                more_runs_advice(c)
            ));
            Verdict::Inconclusive
        }
        (false, true) => {
            c.note = Some(format!(
                "the {pct} {shown} suggests a difference, but the test did not reach its level {}; {}",
                format_level(c.level),
                more_runs_advice(c)
            ));
            Verdict::Inconclusive
        }
        (true, false) => {
            c.note = Some(format!(
                "the test reached its level but the {pct} {shown} includes no change \
                 (the rank statistics' discreteness at {} {}); run longer",
                c.n,
                if c.paired { "pairs" } else { c.counted }
            ));
            Verdict::Inconclusive
        }
    };
    c.significant = c.verdict.is_significant();
    if c.session_variation == SessionVariation::NotIncluded {
        c.note = Some(match c.note.take() {
            Some(n) => format!("{n}; {SESSION_NOTE}"),
            None => SESSION_NOTE.to_string(),
        });
    }
}

/// "run longer with --runs N". On the log scale an interval's half-width h
/// shrinks about as 1/sqrt(n) (a little faster at small n, as the t
/// quantile falls); N is the fewer of the runs that would make the observed
/// ratio significant (h below |log ratio|) and those that would settle "no
/// difference" (h below log(1 + p) - |log ratio|, when the ratio is inside
/// the band). Rounded up, capped at 10,000.
fn more_runs_advice(c: &Comparison) -> String {
    match runs_to_decide(c) {
        // --runs counts completions, not batches: the batches are said.
        Some(n) if c.counted != "runs" => format!("run longer: about {n} {} per cell", c.counted),
        Some(n) => format!("run longer with --runs {n}"),
        None => format!("deciding would take more than 10,000 {}", c.counted),
    }
}

/// The runs per cell `more_runs_advice` names (None: more than 10,000).
/// Within speed modes only concordant blocks count: the blocks needed
/// grow by all blocks / concordant ones.
fn runs_to_decide(c: &Comparison) -> Option<usize> {
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
/// every cell once, `seconds_per_block` (their mean wall times together).
/// "run longer with --runs 700 (about 52 s of runs at this noise, or
/// --until-decided)". Other notes are left as they are.
pub fn add_time_to_advice(c: &mut Comparison, seconds_per_block: f64) {
    let Some(n) = runs_to_decide(c) else {
        return;
    };
    if !(seconds_per_block.is_finite() && seconds_per_block > 0.0) {
        return;
    }
    let old = format!("run longer with --runs {n}");
    let new = format!(
        "{old} (about {} of runs at this noise, {UNTIL_DECIDED_HINT})",
        crate::units::time(n as f64 * seconds_per_block)
    );
    if let Some(note) = c.note.as_mut() {
        *note = note.replacen(&old, &new, 1);
    }
}

/// The way on that `add_time_to_advice` names.
const UNTIL_DECIDED_HINT: &str = "or --until-decided";

/// For a session that already ran `--until-decided`: its advice names a
/// longer `--max-time` instead.
pub fn advise_longer_max_time(c: &mut Comparison) {
    if let Some(note) = c.note.as_mut() {
        *note = note.replacen(UNTIL_DECIDED_HINT, "or a longer --max-time", 1);
    }
}

/// Median share of a run's wall time during which some task waited for a
/// CPU (`Disturbance::cpu_wait`) above which the machine is called busy.
pub const BUSY_SHARE: f64 = 0.5;

/// The noise's structure in one line, when it limited the answer: the
/// wall-time comparison is inconclusive, and either its runs fell into
/// two speeds ("runs fall into two speeds, 25.1 ms (61 %) and 42.3 ms
/// (39 %): the machine alternates between them; 41 of 400 blocks mixed
/// them and were left out") or some task waited for a CPU during most of
/// the two cells' run time (`BUSY_SHARE`, from `results`). None otherwise,
/// so a quiet machine rarely sees it.
pub fn noise_line(c: &Comparison, results: &[CellResult]) -> Option<String> {
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
        return Some(format!(
            "the machine is busy: some task was waiting for a CPU during {:.0} % of the runs' \
             time (CPU pressure), so wall times are mostly the machine's load",
            (busy * 100.0).min(100.0)
        ));
    };
    let share = (m.fast_share * 100.0).round();
    Some(format!(
        "runs fall into two speeds, {} ({share:.0} %) and {} ({:.0} %): the machine alternates \
         between them; {} of {} blocks mixed them and were left out",
        crate::units::time(m.fast),
        crate::units::time(m.slow),
        100.0 - share,
        m.discordant,
        m.blocks
    ))
}

/// `--fail-if-slower PCT`, the one gate rule: fails only when the verdict is
/// slower AND the lower end of the ratio interval lies above 1 + PCT/100,
/// i.e. the regression is significantly larger than PCT.
pub fn fails_gate(c: &Comparison, pct: f64) -> bool {
    c.verdict == Verdict::Slower && c.ratio_ci[0] > 1.0 + pct / 100.0
}

/// Widens a cross-session comparison by the between-session spread.
///
/// `sigma` is the standard deviation of a session's log-median (log-ratio
/// scale) between sessions of the baseline, estimated from history;
/// `baseline_sessions` is how many sessions the baseline pools. The
/// candidate's session and the baseline's mean then differ by session
/// effects of variance sigma^2 (1 + 1/k), added to the within-session
/// variance read back from the interval's half-width. The p-value becomes
/// the normal approximation of that combined model, and the verdict is
/// re-decided, so test and interval still agree. Only for `Scale::LogRatio`
/// comparisons (others are returned unchanged, with a note).
pub fn widen_for_sessions(c: &mut Comparison, sigma: f64, baseline_sessions: usize) {
    let Some((est, [lo, hi], z)) = widenable(c, sigma, baseline_sessions) else {
        return;
    };
    if sigma == 0.0 {
        // History shows no movement between sessions beyond their own
        // noise: the within-session analysis stands as it is (an exact
        // test stays exact); only the note changes.
        keep_within(c, est, [lo, hi], sigma, baseline_sessions, None);
        return;
    }
    let se_within = (hi - lo) / 2.0 / z;
    let between = sigma * sigma * (1.0 + 1.0 / baseline_sessions as f64);
    let se = (se_within * se_within + between).sqrt();
    widen_to_se(c, est, se, None, sigma, baseline_sessions);
}

/// Widens a cross-session comparison to `variance`, the variance (log-ratio
/// scale) of the difference between the two sides' session means, when it
/// is larger than the runs' own: that variance already holds the runs'
/// sampling noise (it is measured on session summaries), so it replaces
/// the runs' variance instead of being added to it. Estimated with `df`
/// degrees of freedom (None: as if known), the interval and p-value use
/// Student's t with them (Welch-Satterthwaite: the estimated part is all
/// of the variance), so an estimate from few sessions widens the interval
/// by its own uncertainty. `sigma` and `sessions` are reported in
/// `SessionVariation::Included`. Only for `Scale::LogRatio` comparisons.
pub fn widen_to_variance(
    c: &mut Comparison,
    variance: f64,
    df: Option<f64>,
    sigma: f64,
    sessions: usize,
) {
    let Some((est, [lo, hi], z)) = widenable(c, sigma, sessions) else {
        return;
    };
    let se_within = (hi - lo) / 2.0 / z;
    if !(variance.is_finite() && variance > se_within * se_within) {
        keep_within(c, est, [lo, hi], sigma, sessions, df);
        return;
    }
    widen_to_se(c, est, variance.sqrt(), df, sigma, sessions);
}

/// The estimate, log interval and normal quantile of a comparison the
/// session widening applies to (None: it does not, and `c` is unchanged).
fn widenable(c: &Comparison, sigma: f64, sessions: usize) -> Option<(f64, [f64; 2], f64)> {
    if c.verdict == Verdict::NotComparable || c.p_value.is_nan() {
        return None;
    }
    if c.scale != Scale::LogRatio || sigma.is_nan() || sigma < 0.0 || sessions == 0 {
        return None;
    }
    let z = stats::normal_quantile(1.0 - c.level / 2.0);
    let (lo, hi) = (c.ratio_ci[0].ln(), c.ratio_ci[1].ln());
    let est = c.ratio.ln();
    (lo.is_finite() && hi.is_finite() && est.is_finite()).then_some((est, [lo, hi], z))
}

/// The runs' own analysis stands; the note says the session variation was
/// looked at.
fn keep_within(
    c: &mut Comparison,
    est: f64,
    ci: [f64; 2],
    sigma: f64,
    sessions: usize,
    df: Option<f64>,
) {
    c.session_variation = SessionVariation::Included {
        sigma,
        sessions,
        df,
    };
    c.note = None;
    decide(c, est, ci);
}

/// Interval and p-value of `est` with standard error `se`: normal, or
/// Student's t with `df` degrees of freedom.
fn widen_to_se(
    c: &mut Comparison,
    est: f64,
    se: f64,
    df: Option<f64>,
    sigma: f64,
    sessions: usize,
) {
    let t = df
        .filter(|d| d.is_finite() && *d > 0.0)
        .and_then(|d| statrs::distribution::StudentsT::new(0.0, 1.0, d).ok());
    let q = match &t {
        Some(t) => statrs::distribution::ContinuousCDF::inverse_cdf(t, 1.0 - c.level / 2.0),
        None => stats::normal_quantile(1.0 - c.level / 2.0),
    };
    c.ratio_ci = [(est - q * se).exp(), (est + q * se).exp()];
    c.p_value = if se > 0.0 {
        let tail = match &t {
            Some(t) => statrs::distribution::ContinuousCDF::cdf(t, -est.abs() / se),
            None => stats::normal_cdf(-est.abs() / se),
        };
        (2.0 * tail).min(1.0)
    } else {
        c.p_value
    };
    c.exact = false;
    c.session_variation = SessionVariation::Included {
        sigma,
        sessions,
        df: df.filter(|_| t.is_some()),
    };
    c.note = None;
    decide(c, est, [est - q * se, est + q * se]);
}

/// The between-session standard deviation `widen_for_sessions` takes,
/// from the medians of several sessions of the same benchmark (the
/// baseline's history): the sample standard deviation of their logarithms,
/// with the number of sessions. None with fewer than 2 sessions or a
/// median that is not positive.
pub fn session_sigma(session_medians: &[f64]) -> Option<(f64, usize)> {
    let k = session_medians.len();
    if k < 2 || session_medians.iter().any(|&m| !(m > 0.0 && m.is_finite())) {
        return None;
    }
    let logs: Vec<f64> = session_medians.iter().map(|m| m.ln()).collect();
    let mean = logs.iter().sum::<f64>() / k as f64;
    let var = logs.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / (k - 1) as f64;
    Some((var.sqrt(), k))
}

/// What the engine appends to the note of a comparison whose interval
/// leaves out session-to-session variation.
pub const SESSION_NOTE: &str = "session-to-session variation is not in the interval";

impl Comparison {
    /// The note without [`SESSION_NOTE`], for outputs that say it once for
    /// all their rows.
    pub fn own_note(&self) -> Option<&str> {
        let note = self.note.as_deref()?;
        let note = note
            .strip_suffix(SESSION_NOTE)
            .map(|n| n.trim_end_matches("; "))
            .unwrap_or(note);
        (!note.is_empty()).then_some(note)
    }

    /// Gives the comparison its metric and the two sides' names.
    pub fn named(mut self, metric: &'static str, baseline: &str, candidate: &str) -> Comparison {
        self.metric = metric;
        self.baseline = baseline.to_string();
        self.candidate = candidate.to_string();
        self
    }
}

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

/// Peak memory within 2 % of cmdscope's own resident size counts as the
/// floor (the same slack the terminal report uses for "≤ floor").
pub fn at_floor_limit(floor: f64) -> f64 {
    floor * 1.02
}

/// Values of the same blocks in both cells: the k-th measured run of each
/// cell ran in block k. Blocks where either run timed out are dropped.
pub fn paired_values(a: &CellResult, b: &CellResult, metric: Metric) -> (Vec<f64>, Vec<f64>) {
    crate::metrics::block_pairs(&a.samples, &b.samples, metric)
}

fn range(ci: [f64; 2]) -> String {
    let d = decimals(ci[0], ci[1]);
    format!("{:.d$}–{:.d$}", ci[0], ci[1])
}

/// Enough decimals that an interval's ends differ.
fn decimals(lo: f64, hi: f64) -> usize {
    let w = (hi - lo).abs();
    if w >= 0.02 {
        2
    } else if w >= 0.002 {
        3
    } else {
        4
    }
}

fn trim_pct(p: f64) -> String {
    format!("{} %", units::trimmed(p * 100.0, 3))
}

/// "95 % CI", "97.5 % CI", "99.95 % CI": the interval's real confidence,
/// with two significant digits of its complement, rounded so that it never
/// overstates the confidence.
pub fn format_confidence(confidence: f64) -> String {
    let miss = (1.0 - confidence) * 100.0;
    if !(miss > 0.0 && miss < 100.0) {
        return format!("{:.0} % CI", confidence * 100.0);
    }
    let d = (1 - miss.log10().floor() as i32).clamp(0, 12);
    let scale = 10f64.powi(d);
    let shown = 100.0 - (miss * scale - 1e-6).ceil() / scale;
    format!("{} % CI", units::trimmed(shown, d as usize))
}

/// A significance level for humans: "0.05", "0.025", "0.0007".
pub fn format_level(a: f64) -> String {
    if a >= 0.01 {
        units::trimmed(a, 4)
    } else {
        format!("{a:.1e}")
            .parse::<f64>()
            .map_or_else(|_| a.to_string(), |v| format!("{v}"))
    }
}

/// "B is 1.23x faster than A (95 % CI 1.19–1.27, p < 0.001)", and the
/// other outcomes in words.
pub fn sentence(c: &Comparison) -> String {
    let p = format_p(c.p_value);
    let conf = format_confidence(c.confidence);
    let (r, lo, hi) = match c.verdict {
        Verdict::Faster => (1.0 / c.ratio, 1.0 / c.ratio_ci[1], 1.0 / c.ratio_ci[0]),
        _ => (c.ratio, c.ratio_ci[0], c.ratio_ci[1]),
    };
    let d = decimals(lo, hi);
    let ci = if c.exact && c.p_value.is_nan() {
        // Exact values: a known change, no interval and no test.
        "exact".to_string()
    } else {
        format!("{conf} {lo:.d$}–{hi:.d$}, {p}")
    };
    let note = c
        .note
        .as_deref()
        .map(|n| format!(": {n}"))
        .unwrap_or_default();
    if !c.ratio.is_finite() && c.shift.is_finite() {
        // No ratio without a positive baseline: the change in the unit.
        let d = decimals(c.shift_ci[0], c.shift_ci[1]);
        let change = format!(
            "change {:+.d$}, {conf} {:+.d$}–{:+.d$}, {p}",
            c.shift, c.shift_ci[0], c.shift_ci[1]
        );
        let (a, b) = (&c.candidate, &c.baseline);
        return match c.verdict {
            Verdict::Faster | Verdict::Slower => {
                format!("'{a}' is {} than '{b}' ({change}){note}", c.verdict.words())
            }
            v => format!("'{a}' and '{b}': {} ({change}){note}", v.words()),
        };
    }
    match c.verdict {
        Verdict::Faster => format!(
            "'{}' is {r:.d$}x faster than '{}' ({ci}){note}",
            c.candidate, c.baseline
        ),
        Verdict::Slower => format!(
            "'{}' is {r:.d$}x slower than '{}' ({ci}){note}",
            c.candidate, c.baseline
        ),
        Verdict::NoDifference => format!(
            "'{}' and '{}': no difference beyond ±{} (ratio {r:.d$}, {ci}){note}",
            c.candidate,
            c.baseline,
            trim_pct(c.precision)
        ),
        Verdict::Inconclusive if c.p_value.is_finite() => format!(
            "'{}' and '{}': inconclusive (ratio {r:.d$}, {ci}){note}",
            c.candidate, c.baseline
        ),
        Verdict::Inconclusive if c.ratio.is_finite() => format!(
            "'{}' and '{}': inconclusive (ratio of the medians {:.2}, no interval){note}",
            c.candidate, c.baseline, c.ratio
        ),
        Verdict::Inconclusive => {
            format!("'{}' and '{}': inconclusive{note}", c.candidate, c.baseline)
        }
        Verdict::NotComparable => format!(
            "'{}' and '{}': not comparable{note}",
            c.candidate, c.baseline
        ),
    }
}

/// The one p-value format: "p < 0.001", "p = 0.034".
pub fn format_p(p: f64) -> String {
    let bare = format_p_bare(p);
    // "< 0.001" and "n/a" follow the "p" without an "=".
    if bare.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p = {bare}")
    } else {
        format!("p {bare}")
    }
}

/// The p-value as a table column shows it, without the "p": "< 0.001",
/// "0.034", "n/a".
pub fn format_p_bare(p: f64) -> String {
    if p.is_nan() {
        "n/a".into()
    } else if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::simulation::{Gen, Noise, ALL};

    fn settings(alpha: f64, family: usize) -> Settings {
        Settings {
            family,
            ..Settings::new(alpha, 0.01)
        }
    }

    /// n blocks of `cells` commands with the given medians, paired noise.
    fn blocks(g: &mut Gen, medians: &[f64], n: usize, noise: Noise) -> Vec<Vec<f64>> {
        let mut cells = vec![Vec::new(); medians.len()];
        for _ in 0..n {
            for (c, m) in medians.iter().enumerate() {
                cells[c].push(m * g.factor(noise));
            }
        }
        cells
    }

    #[test]
    fn six_runs_call_a_ninefold_and_a_twentyfold_difference() {
        // `run --runs 6 'sleep 0.01' 'sleep 0.1' 'sleep 0.2'`: two
        // comparisons at 0.025 each; the signed-rank test cannot go below
        // 2/64 there, the t-test on log ratios can.
        let mut g = Gen::new(1);
        for noise in ALL {
            for _ in 0..20 {
                let cells = blocks(&mut g, &[0.011, 0.101, 0.201], 6, *noise);
                for c in &cells[1..] {
                    let r = compare_values(&cells[0], c, Design::Paired, &settings(0.05, 2));
                    assert_eq!(r.test, Test::PairedT);
                    assert_eq!(r.verdict, Verdict::Slower, "{noise:?}: {r:?}");
                    assert_eq!(format_confidence(r.confidence), "97.5 % CI");
                }
            }
        }
    }

    #[test]
    fn a_twelve_value_sweep_at_seven_runs_calls_the_extremes() {
        // 12 values over a 70x range at --runs 7: 11 comparisons with the
        // first, each at 0.05 / 11.
        let mut g = Gen::new(2);
        let medians: Vec<f64> = (0..12)
            .map(|i| 0.001 * 70f64.powf(i as f64 / 11.0))
            .collect();
        for noise in [Noise::Normal, Noise::Spiky] {
            let cells = blocks(&mut g, &medians, 7, noise);
            let r = compare_values(&cells[0], &cells[11], Design::Paired, &settings(0.05, 11));
            assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
            assert!(r.ratio > 40.0 && r.ratio < 120.0, "{}", r.ratio);
        }
    }

    #[test]
    fn the_issue_reproducer_is_not_significant() {
        // allocs/op: ten 2s against six 2s and four 3s; exact p = 0.087.
        let a = [2.0; 10];
        let b = [2., 2., 2., 2., 2., 2., 3., 3., 3., 3.];
        let r = compare_values(&a, &b, Design::Unpaired, &settings(0.05, 1));
        assert_eq!(r.test, Test::MannWhitney);
        assert!(r.exact);
        assert!((r.p_value - 0.0866873065).abs() < 1e-8, "{}", r.p_value);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.note.is_some());
    }

    #[test]
    fn tests_are_chosen_by_size_and_level() {
        // Signed-rank needs 2/2^n <= level/10.
        assert_eq!(select_test(Design::Paired, 9, 9, 0.05), Test::SignedRank);
        assert_eq!(select_test(Design::Paired, 8, 8, 0.05), Test::PairedT);
        assert_eq!(select_test(Design::Paired, 10, 10, 0.025), Test::SignedRank);
        assert_eq!(select_test(Design::Paired, 6, 6, 0.025), Test::PairedT);
        // Mann-Whitney needs 2/C(n+m, n) <= level/10: 2/C(10,5) = 0.0079.
        assert_eq!(select_test(Design::Unpaired, 5, 5, 0.05), Test::WelchT);
        assert_eq!(select_test(Design::Unpaired, 6, 6, 0.05), Test::MannWhitney);
        assert!((rank_test_resolution(Design::Unpaired, 10, 10) - 2.0 / 184756.0).abs() < 1e-15);
    }

    #[test]
    fn every_comparison_gets_a_verdict_or_a_reason() {
        let s = settings(0.05, 1);
        let r = compare_values(&[1.0, 1.1], &[2.0, 2.1], Design::Paired, &s);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert_eq!(
            r.note.as_deref(),
            Some("need at least 3 paired runs for a verdict, have 2")
        );
        let r = compare_values(&[], &[], Design::Unpaired, &s);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.note.unwrap().contains("have 0"));
        // Throughput's values are batches, and its notes count them so.
        let batches = Settings {
            counted: "batches",
            ..s
        };
        let r = compare_values(&[1.0, 1.1], &[2.0, 2.1], Design::Paired, &batches);
        assert_eq!(
            r.note.as_deref(),
            Some("need at least 3 paired batches for a verdict, have 2")
        );
        let noisy = |k: usize, c: f64| c * (1.0 + 0.3 * ((k * 7 % 5) as f64 - 2.0));
        let (a, b): (Vec<f64>, Vec<f64>) =
            (0..6).map(|k| (noisy(k, 1.0), noisy(k + 2, 1.05))).unzip();
        let r = compare_values(&a, &b, Design::Paired, &batches);
        let note = r.note.unwrap_or_default();
        assert!(
            note.contains("batches per cell") && !note.contains("--runs"),
            "{note}"
        );
        // Identical values: no difference, not "inconclusive".
        let r = compare_values(&[5.0; 8], &[5.0; 8], Design::Paired, &s);
        assert_eq!(r.verdict, Verdict::NoDifference, "{r:?}");
        // Constant 2x: as significant as sign flips allow (2/2^6 < 0.05).
        let r = compare_values(&[4.0; 6], &[8.0; 6], Design::Paired, &s);
        assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
        assert!((r.ratio - 2.0).abs() < 1e-12);
        // ... and at 5 pairs it cannot be (2/32 > 0.05): inconclusive, never
        // "no difference" for a 2x ratio.
        let r = compare_values(&[4.0; 5], &[8.0; 5], Design::Paired, &s);
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
    }

    #[test]
    fn counts_get_only_exact_rank_tests() {
        // Minor faults one lower in every pair but one: a t-test would say
        // p = 0.016 at 5 pairs, where 2 of 16 sign patterns are as extreme.
        let base = [80.0, 81.0, 80.0, 80.0, 81.0];
        let cand = [79.0, 80.0, 79.0, 80.0, 80.0];
        let counts = Settings {
            discrete: true,
            ..settings(0.05, 1)
        };
        let r = compare_values(&base, &cand, Design::Paired, &counts);
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert_eq!(
            r.note.as_deref(),
            Some("need at least 6 paired runs for a verdict on a discrete metric at level 0.05, have 5")
        );
        let t = compare_values(&base, &cand, Design::Paired, &settings(0.05, 1));
        assert_eq!(t.test, Test::PairedT);
        // Nine pairs, all one lower: the exact conditional p is 2/512.
        let r = compare_values(&[80.0; 9], &[79.0; 9], Design::Paired, &counts);
        assert_eq!(
            (r.test, r.verdict),
            (Test::SignedRank, Verdict::Faster),
            "{r:?}"
        );
        assert!((r.p_value - 2.0 / 512.0).abs() < 1e-12);
    }

    #[test]
    fn peak_memory_at_the_floor_is_not_compared() {
        let s = Settings {
            floor: Some(at_floor_limit(4.0e6)),
            ..settings(0.05, 1)
        };
        let r = compare_values(&[3.9e6; 10], &[4.05e6; 10], Design::Paired, &s);
        assert_eq!(r.verdict, Verdict::NotComparable);
        assert_eq!(
            r.note.as_deref(),
            Some("at cmdscope's floor, not comparable")
        );
        // One side above the floor: compared.
        let r = compare_values(&[3.9e6; 10], &[9.0e6; 10], Design::Paired, &s);
        assert_eq!(r.verdict, Verdict::Slower);
    }

    #[test]
    fn never_no_difference_for_a_large_ratio_and_the_interval_agrees_with_the_test() {
        let mut g = Gen::new(3);
        for trial in 0..400 {
            let noise = ALL[trial % ALL.len()];
            let n = 3 + trial % 30;
            let m = 1 + trial % 7;
            let effect = [1.0, 1.01, 1.05, 1.3, 2.0][trial % 5];
            let cells = blocks(&mut g, &[1.0, effect], n, noise);
            let design = if trial % 3 == 0 {
                Design::Unpaired
            } else {
                Design::Paired
            };
            let r = compare_values(&cells[0], &cells[1], design, &settings(0.05, m));
            let excludes = r.ratio_ci[0] > 1.0 || r.ratio_ci[1] < 1.0;
            match r.verdict {
                Verdict::Faster | Verdict::Slower => {
                    assert!(r.p_value < r.level && excludes, "{r:?}");
                    assert_eq!(r.verdict == Verdict::Slower, r.ratio > 1.0);
                }
                Verdict::NoDifference => {
                    assert!(r.p_value >= r.level && !excludes, "{r:?}");
                    assert!(r.ratio_ci[0] >= 0.99 && r.ratio_ci[1] <= 1.01, "{r:?}");
                }
                Verdict::Inconclusive => assert!(r.note.is_some(), "{r:?}"),
                Verdict::NotComparable => panic!("{r:?}"),
            }
            assert_eq!(r.significant, r.verdict.is_significant());
            assert!((r.level - 0.05 / m as f64).abs() < 1e-15);
            if effect >= 1.3 {
                assert_ne!(r.verdict, Verdict::NoDifference, "{r:?}");
            }
        }
    }

    /// Family-wise false-positive rate of identical commands at 3-10 runs
    /// and 1-20 comparisons against one reference, paired (interleaved) and
    /// unpaired (sequential order), under each noise law: at most alpha
    /// (plus three standard errors of the simulation).
    fn small_sample_fpr(trials: usize, sizes: &[usize], families: &[usize], seed: u64) {
        let mut g = Gen::new(seed);
        let alpha = 0.05;
        for design in [Design::Paired, Design::Unpaired] {
            for &noise in ALL {
                for &n in sizes {
                    for &m in families {
                        let mut false_pos = 0;
                        for _ in 0..trials {
                            let cells = blocks(&mut g, &vec![1.0; m + 1], n, noise);
                            let any = cells[1..].iter().any(|c| {
                                compare_values(&cells[0], c, design, &settings(alpha, m))
                                    .verdict
                                    .is_significant()
                            });
                            false_pos += any as usize;
                        }
                        let rate = false_pos as f64 / trials as f64;
                        eprintln!("fpr {design:?} {noise:?} n={n} m={m}: {rate:.4}");
                        let se = (alpha * (1.0 - alpha) / trials as f64).sqrt();
                        assert!(
                            rate <= alpha + 3.0 * se,
                            "{design:?} {noise:?} n = {n} m = {m}: false-positive rate {rate}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn small_samples_keep_the_false_positive_rate() {
        small_sample_fpr(400, &[3, 6, 10], &[1, 2, 5], 4);
    }

    /// The full grid (n = 3..10, m = 1, 2, 5, 10, 20); about a minute
    /// unoptimised: `cargo test --release -- --ignored small_samples`.
    #[test]
    #[ignore]
    fn small_samples_keep_the_false_positive_rate_full_grid() {
        small_sample_fpr(2000, &[3, 4, 5, 6, 7, 8, 9, 10], &[1, 2, 5, 10, 20], 5);
    }

    #[test]
    fn the_gate_judges_the_size() {
        let mut c = compare_values(
            &[1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0],
            &[1.2, 1.21, 1.19, 1.2, 1.22, 1.18, 1.2, 1.21, 1.19, 1.2],
            Design::Paired,
            &settings(0.05, 1),
        );
        assert_eq!(c.verdict, Verdict::Slower);
        assert!(fails_gate(&c, 5.0), "{c:?}");
        assert!(!fails_gate(&c, 25.0), "{c:?}");
        // Slower, but not significantly by more than 5 %.
        c.ratio_ci = [1.03, 1.09];
        assert!(!fails_gate(&c, 5.0));
        c.verdict = Verdict::Inconclusive;
        c.ratio_ci = [1.5, 1.9];
        assert!(!fails_gate(&c, 5.0));
    }

    #[test]
    fn session_variation_widens_the_interval_and_keeps_the_verdict_consistent() {
        let mut g = Gen::new(6);
        let a: Vec<f64> = (0..30).map(|_| g.factor(Noise::Normal)).collect();
        let b: Vec<f64> = (0..30).map(|_| 1.1 * g.factor(Noise::Normal)).collect();
        let s = Settings {
            cross_session: true,
            ..settings(0.05, 1)
        };
        let c = compare_values(&a, &b, Design::Unpaired, &s);
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.session_variation, SessionVariation::NotIncluded);
        assert!(c
            .note
            .as_deref()
            .unwrap()
            .contains("session-to-session variation"));
        // A between-session spread of 10 % on the log scale swamps a 10 %
        // difference: not significant any more, and the interval says so.
        let mut w = c.clone();
        widen_for_sessions(&mut w, 0.1, 5);
        assert_eq!(
            w.session_variation,
            SessionVariation::Included {
                sigma: 0.1,
                sessions: 5,
                df: None
            }
        );
        assert!(w.ratio_ci[0] < c.ratio_ci[0] && w.ratio_ci[1] > c.ratio_ci[1]);
        assert!(!w.verdict.is_significant() && w.ratio_ci[0] < 1.0, "{w:?}");
        // From history: medians 1.00, 1.10, 0.95 give sd(log) = 0.0744.
        let (sigma, k) = session_sigma(&[1.0, 1.1, 0.95]).unwrap();
        assert_eq!(k, 3);
        assert!((sigma - 0.07440).abs() < 1e-4, "{sigma}");
        assert_eq!(session_sigma(&[1.0]), None);
        assert_eq!(session_sigma(&[1.0, 0.0]), None);
        // No spread: unchanged verdict.
        let mut z = c.clone();
        widen_for_sessions(&mut z, 0.0, 5);
        assert_eq!(z.verdict, Verdict::Slower);
    }

    /// Simulated counts that repeat are the answer from 2 runs a side:
    /// the exact change, decided by the precision band, with no test; the
    /// same counts of a metric that is not exact (a hardware counter, page
    /// faults) still need the rank test's runs, and counts that vary go to
    /// the test too.
    #[test]
    fn identical_simulated_counts_decide() {
        let sim = |p: f64| Settings::for_metric(Metric::SimEstimatedCycles, 0.05, 1, p, None);
        let (a, b) = (vec![1_000_000.0; 2], vec![1_020_000.0; 2]);
        for design in [Design::Paired, Design::Unpaired] {
            let c = compare_values(&a, &b, design, &sim(DEFAULT_PRECISION));
            assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
            assert!((c.ratio - 1.02).abs() < 1e-12 && c.ratio_ci == [c.ratio; 2]);
            assert!(c.p_value.is_nan() && c.lack.is_none(), "{c:?}");
            assert!(fails_gate(&c, 1.0) && !fails_gate(&c, 2.5));
            let same = compare_values(&a, &a, design, &sim(DEFAULT_PRECISION));
            assert_eq!(same.verdict, Verdict::NoDifference);
            assert!(!fails_gate(&same, 0.0));
            // +0.5 %: inside the default ±1 % band, outside ±0.1 %.
            let half = vec![1_005_000.0; 2];
            let within = compare_values(&a, &half, design, &sim(DEFAULT_PRECISION));
            assert_eq!(within.verdict, Verdict::NoDifference, "{within:?}");
            let seen = compare_values(&a, &half, design, &sim(0.001));
            assert_eq!(seen.verdict, Verdict::Slower, "{seen:?}");
            assert!(
                sentence(&seen).contains("1.0050x slower"),
                "{}",
                sentence(&seen)
            );
        }
        // One run a side cannot show that the counts repeat.
        let one = compare_values(&a[..1], &b[..1], Design::Paired, &sim(0.01));
        assert_eq!(one.verdict, Verdict::Inconclusive);
        assert!(one.lack.is_some());
        // Counts that vary: the rank test's rule (6 pairs at 0.05).
        let varying = compare_values(
            &[1e6, 1.001e6, 1e6],
            &[1.02e6, 1.02e6, 1.021e6],
            Design::Paired,
            &sim(0.01),
        );
        assert_eq!(varying.verdict, Verdict::Inconclusive);
        assert!(
            matches!(varying.lack, Some(Lack::Values { need: 6, .. })),
            "{varying:?}"
        );
        // A hardware counter that repeated is not taken for exact.
        let hw = Settings::for_metric(Metric::Instructions, 0.05, 1, 0.01, None);
        let c = compare_values(&a, &b, Design::Paired, &hw);
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
    }

    #[test]
    fn sentences() {
        let s = settings(0.05, 1);
        let c = compare_values(&[1.0; 10], &[2.0; 10], Design::Paired, &s).named(
            "time_wall_clock",
            "a",
            "b",
        );
        assert_eq!(
            sentence(&c),
            "'b' is 2.0000x slower than 'a' (95 % CI 2.0000–2.0000, p = 0.002)"
        );
        // A zero baseline has no ratio: the change is spoken of instead.
        let c = compare_values(&[0.0; 10], &[3.0; 10], Design::Paired, &s).named(
            "page_faults_major",
            "a",
            "b",
        );
        assert_eq!(
            sentence(&c),
            "'b' is slower than 'a' (change +3.0000, 95 % CI +3.0000–+3.0000, p = 0.002)"
        );
        let c = compare_values(&[1.0, 2.0], &[1.0, 2.0], Design::Paired, &s).named(
            "time_wall_clock",
            "a",
            "b",
        );
        assert_eq!(
            sentence(&c),
            "'b' and 'a': inconclusive (ratio of the medians 1.00, no interval): need at least 3 paired runs for a verdict, have 2"
        );
    }

    /// Paired sessions of n blocks under bimodal noise, the candidate
    /// `effect` slower, the order inside each block shuffled as the
    /// scheduler does (the speed carries over from run to run, so the
    /// order matters); the share significant in the right direction (or
    /// at all, for effect 0), with and without speed modes.
    fn bimodal_rates(n: usize, effect: f64, trials: usize, seed: u64) -> (f64, f64) {
        let mut g = Gen::new(seed);
        let on = settings(0.05, 1);
        let off = Settings {
            speed_modes: false,
            ..on
        };
        let (mut with, mut without) = (0, 0);
        for _ in 0..trials {
            let mut cells = [Vec::with_capacity(n), Vec::with_capacity(n)];
            for _ in 0..n {
                let (first, second) = (g.factor(Noise::Bimodal), g.factor(Noise::Bimodal));
                let (a, b) = if g.uniform() < 0.5 {
                    (first, second)
                } else {
                    (second, first)
                };
                cells[0].push(a);
                cells[1].push(b * (1.0 + effect));
            }
            let hit = |s: &Settings| {
                let r = compare_values(&cells[0], &cells[1], Design::Paired, s);
                (effect == 0.0 && r.verdict.is_significant()) || r.verdict == Verdict::Slower
            };
            with += hit(&on) as usize;
            without += hit(&off) as usize;
        }
        (with as f64 / trials as f64, without as f64 / trials as f64)
    }

    #[test]
    fn speed_modes_keep_alpha_and_gain_power_on_a_bimodal_machine() {
        // Alpha: 1000 A/A sessions of 60 blocks, within 3 standard errors.
        let (fpr, fpr_all) = bimodal_rates(60, 0.0, 1000, 51);
        let se = (0.05f64 * 0.95 / 1000.0).sqrt();
        eprintln!("bimodal A/A: within modes {fpr}, all blocks {fpr_all}");
        assert!(fpr <= 0.05 + 3.0 * se, "{fpr}");
        // Power for 2 % at 200 blocks, 300 sessions: about 0.8 within
        // modes against 0.7 over all blocks (examples/power_sim at 500
        // sessions); the gain must show beyond the simulation's noise.
        let (power, power_all) = bimodal_rates(200, 0.02, 300, 52);
        eprintln!("bimodal 2 % at 200 blocks: within modes {power}, all blocks {power_all}");
        assert!(power >= 0.7, "{power}");
        assert!(power > power_all + 0.03, "{power} vs {power_all}");
    }

    #[test]
    fn the_comparison_says_it_used_speed_modes_and_the_noise_line_names_them() {
        let mut g = Gen::new(53);
        let cells = blocks(&mut g, &[0.025, 0.025], 400, Noise::Bimodal);
        let c = compare_values(&cells[0], &cells[1], Design::Paired, &settings(0.05, 1)).named(
            "time_wall_clock",
            "a",
            "b",
        );
        let m = c.speed_modes.expect("two speeds");
        assert_eq!(c.n, m.blocks - m.discordant);
        // About 10 % of the blocks mix the two speeds.
        assert!(m.discordant > 20 && m.discordant < 70, "{m:?}");
        let mut inconclusive = c.clone();
        inconclusive.verdict = Verdict::Inconclusive;
        let line = noise_line(&inconclusive, &[]).unwrap();
        assert!((0.024..0.026).contains(&m.fast) && (0.04..0.044).contains(&m.slow));
        let speeds = format!(
            "runs fall into two speeds, {} (",
            crate::units::time(m.fast)
        );
        assert!(line.starts_with(&speeds), "{line}");
        assert!(line.contains(&format!(" and {} (", crate::units::time(m.slow))));
        assert!(line.ends_with(&format!(
            "{} of 400 blocks mixed them and were left out",
            m.discordant
        )));
        // Decided, or another metric: nothing to explain.
        let mut decided = inconclusive.clone();
        decided.verdict = Verdict::NoDifference;
        assert_eq!(noise_line(&decided, &[]), None);
        let mut other = inconclusive.clone();
        other.metric = "time_user";
        assert_eq!(noise_line(&other, &[]), None);
        // Counts never look for modes.
        let counts = Settings {
            discrete: true,
            ..settings(0.05, 1)
        };
        assert_eq!(
            compare_values(&cells[0], &cells[1], Design::Paired, &counts).speed_modes,
            None
        );
    }

    #[test]
    fn advice_says_how_long_deciding_would_take() {
        let mut g = Gen::new(54);
        let cells = blocks(&mut g, &[1.0, 1.01], 30, Noise::Normal);
        let mut c = compare_values(&cells[0], &cells[1], Design::Paired, &settings(0.05, 1));
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        let n = runs_to_decide(&c).unwrap();
        assert!(c.note.as_deref().unwrap().contains(&format!("--runs {n}")));
        add_time_to_advice(&mut c, 0.5);
        let note = c.note.clone().unwrap();
        let want = format!(
            "--runs {n} (about {} of runs at this noise, or --until-decided)",
            crate::units::time(n as f64 * 0.5)
        );
        assert!(note.contains(&want), "{note}");
        advise_longer_max_time(&mut c);
        let note = c.note.unwrap();
        assert!(note.contains("noise, or a longer --max-time)"), "{note}");
    }

    #[test]
    fn formats() {
        assert_eq!(format_confidence(0.95), "95 % CI");
        assert_eq!(format_confidence(0.975), "97.5 % CI");
        assert_eq!(format_confidence(1.0 - 0.05 / 19.0), "99.73 % CI");
        assert_eq!(format_confidence(1.0 - 0.0182), "98.1 % CI");
        assert_eq!(format_p(0.0866), "p = 0.087");
        assert_eq!(format_p(0.0001), "p < 0.001");
        assert_eq!(format_p(f64::NAN), "p n/a");
        assert_eq!(format_p_bare(0.0866), "0.087");
        assert_eq!(format_p_bare(0.0001), "< 0.001");
        assert_eq!(format_level(0.025), "0.025");
        assert_eq!(format_level(0.00068), "0.00068");
        assert_eq!(format_level(0.0007), "0.0007");
    }

    #[test]
    fn stored_comparisons_pair_by_block_when_asked_and_thin_long_histories() {
        use crate::analysis::MAX_VALUES;
        use crate::metrics::Sample;
        let runs = |center: f64, n: usize, timed_out: Option<usize>| -> Vec<Sample> {
            let walls: Vec<f64> = (0..n)
                .map(|k| center * (1.0 + 0.01 * ((k * 7) % 5) as f64))
                .collect();
            let mut s = crate::run::session::CellResult::from_wall_times("", &walls).samples;
            if let Some(k) = timed_out {
                s[k].timed_out = true;
            }
            s
        };
        let (a, b, c) = (
            runs(1.0, 3000, None),
            runs(1.1, 3000, None),
            runs(1.2, 30, Some(4)),
        );
        let times: Vec<Vec<f64>> = [&a, &b, &c]
            .iter()
            .map(|s| crate::analysis::values(s, Metric::WallTime))
            .collect();
        let cells: Vec<StoredRuns> = [("a", &a), ("b", &b), ("c", &c)]
            .iter()
            .zip(&times)
            .map(|((name, s), t)| StoredRuns {
                name,
                samples: s,
                times: t,
            })
            .collect();
        let by_block = compare_stored(&cells, &[0, 1, 2], 0, 0.05, 0.01, true);
        let names: Vec<(&str, &str)> = by_block
            .iter()
            .map(|c| (c.baseline.as_str(), c.candidate.as_str()))
            .collect();
        assert_eq!(names, [("a", "b"), ("a", "c")]);
        for c in &by_block {
            assert!(c.paired, "{c:?}");
            // Bonferroni over the two comparisons.
            assert!((c.confidence - 0.975).abs() < 1e-12, "{}", c.confidence);
        }
        // 3000 blocks compared on an evenly spaced subsample; c's timed-out
        // run drops its block: 29 pairs of 30.
        assert!(
            (MAX_VALUES / 2..=MAX_VALUES).contains(&by_block[0].n),
            "{}",
            by_block[0].n
        );
        assert_eq!(by_block[1].n, 29);
        let unpaired = compare_stored(&cells, &[0, 2], 0, 0.05, 0.01, false);
        assert_eq!(unpaired.len(), 1);
        assert!(!unpaired[0].paired);
        assert!((unpaired[0].confidence - 0.95).abs() < 1e-12);
        assert_eq!(unpaired[0].n, 29, "the smaller sample: c's counted runs");
        assert!(compare_stored(&cells, &[0, 1], 5, 0.05, 0.01, true).is_empty());
    }
}
