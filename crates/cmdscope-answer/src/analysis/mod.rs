//! Turns a session's samples into summaries and plain-words warnings.

pub mod changes;
pub mod check;
pub mod comparison;
pub mod concurrency;
pub mod drift;
pub mod gate;
pub mod modes;
pub mod sequential;
#[cfg(any(test, feature = "test-support"))]
pub mod simulation;
pub mod source;
pub mod stored;
pub mod sweep;
pub mod tables;
pub mod warning;

use crate::metrics::{Metric, Sample};
use crate::run::session::{CellResult, Session};
use crate::stats;
use warning::{End, Rules, Warning};

/// Comparisons and intervals on more values than this use an evenly spaced
/// subsample (every k-th run): Hodges-Lehmann estimates cost n × m, and a
/// few thousand runs already pin a ratio down far more tightly than the
/// machine's drift does.
pub const MAX_VALUES: usize = 2000;

pub const LEVEL: f64 = 0.95;

#[derive(Clone, Debug)]
pub struct MetricSummary {
    pub metric: Metric,
    pub summary: stats::Summary,
    /// 95 % interval of the median, or why it cannot be given.
    pub median_ci: Result<stats::Estimate, stats::StatsError>,
    pub outliers: usize,
}

/// The median of each stored benchmark's times, by cell id; benchmarks with
/// no finite time are left out (`history` says "no time measured").
pub fn median_times(
    times: &std::collections::HashMap<i64, Vec<f64>>,
) -> std::collections::HashMap<i64, f64> {
    times
        .iter()
        .filter_map(|(id, v)| stats::median_finite(v).map(|m| (*id, m)))
        .collect()
}

/// What the HTML report shows of one stored benchmark, computed here so
/// that the report only formats: the summary of its times and their
/// median's interval, its median peak memory, and each `run --monitor`
/// count's median, least and greatest value per run.
#[derive(Clone, Debug, Default)]
pub struct StoredCellFigures {
    pub summary: Option<stats::Summary>,
    pub median_ci: Option<[f64; 2]>,
    pub peak_memory: Option<f64>,
    /// (`monitor_NAME`, [median, min, max] of its finite values).
    pub monitor: Vec<(String, Option<[f64; 3]>)>,
}

impl StoredCellFigures {
    pub fn of(times: &[f64], samples: &[Sample], monitor: &[(String, Vec<f64>)]) -> Self {
        let memory: Vec<f64> = samples
            .iter()
            .filter_map(|x| x.get(Metric::PeakRss))
            .collect();
        StoredCellFigures {
            summary: stats::summarize(times),
            median_ci: stats::median_ci(times, LEVEL).ok().map(|e| [e.low, e.high]),
            peak_memory: stats::median_finite(&memory),
            monitor: monitor
                .iter()
                .map(|(name, values)| {
                    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
                    let figures = stats::median_finite(&v).map(|m| {
                        [
                            m,
                            v.iter().copied().fold(f64::INFINITY, f64::min),
                            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                        ]
                    });
                    (name.clone(), figures)
                })
                .collect(),
        }
    }
}

/// Median time of one benchmark in one stored session, with its median's
/// interval (None when too few runs give one).
#[derive(Clone, Debug)]
pub struct HistoryPoint {
    pub session: i64,
    pub started_unix: f64,
    pub median: f64,
    pub ci: Option<[f64; 2]>,
}

/// One benchmark's points over the sessions the HTML report shows.
#[derive(Clone, Debug)]
pub struct HistoryData {
    pub identity: String,
    pub points: Vec<HistoryPoint>,
}

/// Each of `identities`' history (once per identity, in their order) over
/// `sessions` (in their order): one point per session holding a benchmark
/// of that identity with a finite time, from the session's first such
/// benchmark; `times` are the stored times by cell id.
pub fn stored_history(
    sessions: &[&crate::store::StoredSession],
    identities: &[&str],
    times: &std::collections::HashMap<i64, Vec<f64>>,
) -> Vec<HistoryData> {
    let mut by_identity: std::collections::HashMap<&str, Vec<HistoryPoint>> =
        std::collections::HashMap::new();
    for s in sessions {
        for c in &s.cells {
            if !identities.contains(&c.identity.as_str()) {
                continue;
            }
            let Some(v) = times.get(&c.id) else {
                continue;
            };
            let Some(m) = stats::median_finite(v) else {
                continue;
            };
            let points = by_identity.entry(c.identity.as_str()).or_default();
            if points.iter().any(|p| p.session == s.id) {
                continue;
            }
            let ci = stats::median_ci(v, LEVEL).ok().map(|e| [e.low, e.high]);
            points.push(HistoryPoint {
                session: s.id,
                started_unix: s.started_unix,
                median: m,
                ci,
            });
        }
    }
    let mut out: Vec<HistoryData> = Vec::new();
    for id in identities {
        if out.iter().any(|h| h.identity == *id) {
            continue;
        }
        out.push(HistoryData {
            identity: id.to_string(),
            points: by_identity.remove(id).unwrap_or_default(),
        });
    }
    out
}

#[derive(Clone, Debug, Default)]
pub struct CellAnalysis {
    pub metrics: Vec<MetricSummary>,
    /// Runs used for statistics (timed-out runs excluded: their times are cut short).
    pub runs: usize,
    pub timed_out: usize,
    /// Outliers excluded on request (--remove-outliers).
    pub removed: usize,
    pub failed: usize,
    /// Worded by `report::warning`.
    pub warnings: Vec<Warning>,
}

impl CellAnalysis {
    pub fn get(&self, metric: Metric) -> Option<&MetricSummary> {
        self.metrics.iter().find(|m| m.metric == metric)
    }
}

/// One command's entry in hyperfine's Relative column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RelativeMean {
    /// The command the others are divided by.
    Reference,
    /// Mean wall time over the reference's, with the standard deviations
    /// of both means propagated to the ratio to first order (hyperfine's
    /// formula): ratio × √((sd/mean)² + (sd_ref/mean_ref)²).
    Ratio { ratio: f64, error: f64 },
}

/// hyperfine's Relative column: each cell's mean wall time relative to the
/// `named` reference (`--reference`), else to the cell with the lowest
/// mean. None for a cell with no wall time, and for every cell when the
/// reference has no wall time or a mean that is not above zero.
pub fn relative_means(
    analyses: &[CellAnalysis],
    named: Option<usize>,
) -> Vec<Option<RelativeMean>> {
    let mean_of = |a: &CellAnalysis| {
        a.get(Metric::WallTime)
            .map(|m| (m.summary.mean, m.summary.stddev))
    };
    let index = named.or_else(|| {
        (0..analyses.len())
            .filter_map(|i| mean_of(&analyses[i]).map(|(m, _)| (i, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    });
    let reference = index.and_then(|i| analyses.get(i).and_then(mean_of).map(|r| (i, r)));
    let Some((index, (rm, rsd))) = reference.filter(|(_, (rm, _))| *rm > 0.0) else {
        return vec![None; analyses.len()];
    };
    analyses
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (mean, sd) = mean_of(a)?;
            if i == index {
                return Some(RelativeMean::Reference);
            }
            let ratio = mean / rm;
            let error = if mean > 0.0 {
                ratio * ((sd / mean).powi(2) + (rsd / rm).powi(2)).sqrt()
            } else {
                0.0
            };
            Some(RelativeMean::Ratio { ratio, error })
        })
        .collect()
}

/// Values of one metric over the runs that count for statistics.
pub fn values(samples: &[Sample], metric: Metric) -> Vec<f64> {
    samples
        .iter()
        .filter(|s| s.counts())
        .filter_map(|s| s.get(metric))
        .collect()
}

pub fn analyse_cell(result: &CellResult, session: &Session, rules: Rules) -> CellAnalysis {
    let samples = &result.samples;
    let mut a = CellAnalysis {
        runs: samples.iter().filter(|s| s.counts()).count(),
        removed: samples.iter().filter(|s| s.removed).count(),
        timed_out: samples.iter().filter(|s| s.timed_out).count(),
        failed: samples
            .iter()
            .filter(|s| !s.timed_out && s.exit_code != Some(0))
            .count(),
        ..CellAnalysis::default()
    };
    for &metric in Metric::ALL {
        let v = values(samples, metric);
        let Some(summary) = stats::summarize(&v) else {
            continue;
        };
        a.metrics.push(MetricSummary {
            metric,
            summary,
            median_ci: stats::median_ci(&v, LEVEL),
            outliers: if metric == Metric::WallTime {
                stats::outliers(&v).len()
            } else {
                0
            },
        });
    }
    a.warnings = warnings(result, &a, session, rules);
    a
}

/// The first simulated count whose runs did not all give one value, and
/// its spread: (largest − smallest) / median.
pub fn varying_count(samples: &[Sample]) -> Option<(Metric, f64)> {
    [
        Metric::SimInstructions,
        Metric::SimEstimatedCycles,
        Metric::SimD1Misses,
        Metric::SimLlMisses,
        Metric::SimBranchMispredicts,
    ]
    .into_iter()
    .find_map(|m| {
        let spread = stats::relative_range(&values(samples, m))?;
        (spread > 0.0).then_some((m, spread))
    })
}

/// An outlier is worth a warning beyond this share of the median...
const OUTLIER_WARN_SHARE: f64 = 0.10;
/// ...and this many seconds from it; two such runs, or one this share
/// of the median away.
const OUTLIER_WARN_SECONDS: f64 = 1e-3;
const OUTLIER_WARN_ALONE: f64 = 0.5;

fn warnings(
    result: &CellResult,
    a: &CellAnalysis,
    session: &Session,
    rules: Rules,
) -> Vec<Warning> {
    let mut w = Vec::new();
    let name = || result.cell.name.clone();
    let wall = values(&result.samples, Metric::WallTime);
    if let Some(m) = a.get(Metric::WallTime) {
        let median = m.summary.median;
        match rules {
            Rules::Cmdscope => cmdscope_time_warnings(&mut w, result, a, session, &wall, median),
            Rules::Hyperfine { made } => {
                hyperfine_time_warnings(&mut w, result, &wall, median, made)
            }
        }
    }
    if a.failed > 0 {
        let mut ends: Vec<End> = (result.samples.iter())
            .filter(|s| !s.timed_out && s.exit_code != Some(0))
            .map(|s| match (s.exit_code, s.signal) {
                (Some(c), _) => End::Status(c),
                (None, Some(sig)) => End::Signal(sig),
                _ => End::Unknown,
            })
            .collect();
        ends.sort();
        ends.dedup();
        w.push(Warning::Failed {
            name: name(),
            failed: a.failed,
            runs: a.runs,
            ends,
        });
    }
    if a.removed > 0 {
        w.push(Warning::Removed {
            name: name(),
            count: a.removed,
        });
    }
    if a.timed_out > 0 {
        w.push(Warning::TimedOut {
            name: name(),
            count: a.timed_out,
            after: session.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0),
        });
    }
    if let Some((_, n)) = session
        .leftovers
        .iter()
        .find(|(c, _)| *c == result.cell.name)
    {
        w.push(Warning::Leftovers {
            name: name(),
            processes: *n,
        });
    }
    if session.simulated.is_some() {
        if let Some((metric, spread)) = varying_count(&result.samples) {
            w.push(Warning::CountsVary {
                name: name(),
                metric: metric.name(),
                spread,
                cause: (session.count_causes.iter())
                    .find(|(c, _)| *c == result.cell.name)
                    .map(|(_, v)| *v),
            });
        }
    }
    if matches!(rules, Rules::Hyperfine { .. }) {
        // In the order hyperfine prints them: fast command, exit codes,
        // then the first run or the outliers.
        w.sort_by_key(|w| match w {
            Warning::UnderFiveMs { .. } => 0,
            Warning::Failed { .. } => 1,
            Warning::ColdFirstRun { .. } | Warning::Outliers { .. } => 2,
            _ => 3,
        });
    }
    w
}

/// `cmdscope run`'s rules for a slow first run, outliers and a command too
/// short to measure.
fn cmdscope_time_warnings(
    w: &mut Vec<Warning>,
    result: &CellResult,
    a: &CellAnalysis,
    session: &Session,
    wall: &[f64],
    median: f64,
) {
    let name = || result.cell.name.clone();
    if wall.len() >= 3 && median > 0.0 && wall[0] > 2.0 * median {
        w.push(Warning::ColdFirstRun {
            name: name(),
            ratio: wall[0] / median,
        });
    }
    // Worth a warning only when the outliers are also far in absolute
    // terms: on a steady command (a sleep) the robust rule flags runs
    // that differ by a scheduler tick. And one run delayed by a few
    // milliseconds is ordinary on a shared machine: it takes two such
    // runs, or one more than 50 % off. Calibrated with
    // scripts/warning-rates (docs/HYPERFINE.md).
    let far: Vec<f64> = stats::outliers(wall)
        .into_iter()
        .map(|i| (wall[i] - median).abs())
        .filter(|&off| {
            median > 0.0 && off > OUTLIER_WARN_SHARE * median && off > OUTLIER_WARN_SECONDS
        })
        .collect();
    let worst = far.iter().copied().fold(0.0, f64::max);
    if a.runs >= 6 && (far.len() >= 2 || worst > OUTLIER_WARN_ALONE * median) {
        w.push(Warning::Outliers {
            name: name(),
            count: far.len(),
            runs: a.runs,
        });
    }
    if let (Some(o), true) = (session.shell_overhead, result.cell.shell) {
        if median < 0.1 * o.wall || median == 0.0 {
            w.push(Warning::UnderShell {
                name: name(),
                shell: o.wall,
            });
        }
    } else if median < 50e-6 {
        w.push(Warning::TooShort { name: name() });
    }
}

/// hyperfine's modified z-score threshold: its 1.4826 × 10 over the raw
/// MAD is 10 over the scaled MAD that [`stats::modified_z_scores`] uses.
const HYPERFINE_OUTLIER_SCORE: f64 = 10.0;
/// hyperfine's `MIN_EXECUTION_TIME`: a run through the shell under this
/// is within the precision of its start-up's calibration.
const HYPERFINE_MIN_EXECUTION_TIME: f64 = 5e-3;

/// hyperfine 1.20's rules (its `benchmark::run`): the first run an outlier
/// above the others is a slow first run, else any outlier makes the
/// outlier warning; a run through the shell under 5 ms the fast-command
/// warning, when the runs were `made` (hyperfine's debug mode makes none
/// and gives no fast-command warning).
fn hyperfine_time_warnings(
    w: &mut Vec<Warning>,
    result: &CellResult,
    wall: &[f64],
    median: f64,
    made: bool,
) {
    let name = || result.cell.name.clone();
    let scores = stats::modified_z_scores(wall, stats::ZeroMad::Epsilon);
    let outliers = scores
        .iter()
        .filter(|z| z.abs() > HYPERFINE_OUTLIER_SCORE)
        .count();
    if scores.first().is_some_and(|&z| z > HYPERFINE_OUTLIER_SCORE) {
        w.push(Warning::ColdFirstRun {
            name: name(),
            ratio: wall[0] / median,
        });
    } else if outliers > 0 {
        w.push(Warning::Outliers {
            name: name(),
            count: outliers,
            runs: wall.len(),
        });
    }
    let fast = wall
        .iter()
        .filter(|&&t| t < HYPERFINE_MIN_EXECUTION_TIME)
        .count();
    if made && result.cell.shell && fast > 0 {
        w.push(Warning::UnderFiveMs {
            name: name(),
            runs: fast,
        });
    } else if !result.cell.shell && median < 50e-6 {
        w.push(Warning::TooShort { name: name() });
    }
}

/// Marks each cell's wall-time outliers (robust rule) as removed; with
/// interleaved order the whole block goes, so pairs stay pairs.
pub fn remove_outliers(session: &mut Session) {
    let paired =
        session.order == crate::run::schedule::Order::Interleaved && session.results.len() > 1;
    let mut blocks = std::collections::BTreeSet::new();
    for r in &mut session.results {
        let idx: Vec<usize> = (0..r.samples.len())
            .filter(|&i| r.samples[i].counts())
            .collect();
        let wall: Vec<f64> = idx
            .iter()
            .filter_map(|&i| r.samples[i].get(Metric::WallTime))
            .collect();
        if wall.len() != idx.len() {
            continue;
        }
        for o in stats::outliers(&wall) {
            r.samples[idx[o]].removed = true;
            blocks.insert(idx[o]);
        }
    }
    if paired {
        for r in &mut session.results {
            for &b in &blocks {
                if let Some(s) = r.samples.get_mut(b) {
                    s.removed = true;
                }
            }
        }
    }
}

pub fn analyse(session: &Session) -> Vec<CellAnalysis> {
    analyse_by(session, Rules::Cmdscope)
}

/// [`analyse`] with the warnings by `rules`.
/// A benchmark's analysis as `run` and the front door report it:
/// [`analyse_cell`] with the drift warnings, for one of `benchmarks`
/// benchmarks run in `session`'s order (the front door's blocks, printed
/// as each benchmark ends, and the final report share it).
pub fn analyse_reported(
    result: &CellResult,
    session: &Session,
    rules: Rules,
    benchmarks: usize,
) -> CellAnalysis {
    let mut a = analyse_cell(result, session, rules);
    a.warnings
        .extend(drift::warnings(result, session.order, benchmarks));
    a
}

pub fn analyse_by(session: &Session, rules: Rules) -> Vec<CellAnalysis> {
    session
        .results
        .iter()
        .map(|r| analyse_cell(r, session, rules))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::session::CellResult;

    fn session(cells: &[&[f64]]) -> Session {
        let mut s = Session::empty();
        s.results = cells
            .iter()
            .map(|w| CellResult::from_wall_times("x", w))
            .collect();
        s
    }

    #[test]
    fn outliers_are_flagged_not_removed_unless_asked() {
        let a = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 5.0];
        let b = [2.0, 2.01, 1.99, 2.0, 2.02, 1.98, 2.0, 2.0];
        let mut s = session(&[&a, &b]);
        let before = analyse(&s);
        assert_eq!(before[0].runs, 8);
        assert_eq!(before[0].get(Metric::WallTime).unwrap().outliers, 1);
        assert_eq!(before[0].get(Metric::WallTime).unwrap().summary.max, 5.0);
        remove_outliers(&mut s);
        let after = analyse(&s);
        assert_eq!(after[0].runs, 7);
        assert_eq!(after[0].get(Metric::WallTime).unwrap().summary.max, 1.02);
        // Interleaved: the whole block goes, so pairs stay aligned.
        assert_eq!(after[1].runs, 7);
        assert!(s.results[1].samples[7].removed);
        assert!(after[0]
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::Removed { count: 1, .. })));
    }

    #[test]
    fn hyperfines_rules_flag_what_its_own_tests_flag() {
        // hyperfine's outlier_detection tests: [0.5, 0.30, 0.29, 0.31, 0.30]
        // has one outlier; here it is the first run, so its slow-first-run
        // warning; moved to the end, its outlier warning. Under 5 ms through
        // the shell, the fast-command warning. cmdscope's rules see no
        // outliers in 5 runs.
        let kinds = |times: &[f64], shell: bool, rules: Rules| {
            let mut s = session(&[times]);
            s.results[0].cell.shell = shell;
            analyse_by(&s, rules)[0]
                .warnings
                .iter()
                .map(|w| match w {
                    Warning::ColdFirstRun { .. } => "first",
                    Warning::Outliers { .. } => "outliers",
                    Warning::UnderFiveMs { runs, .. } => ["", "fast 1", "fast 2"][*runs],
                    _ => "other",
                })
                .collect::<Vec<_>>()
        };
        let first = [0.5, 0.30, 0.29, 0.31, 0.30];
        assert_eq!(
            kinds(&first, false, Rules::Hyperfine { made: true }),
            ["first"]
        );
        assert!(kinds(&first, false, Rules::Cmdscope).is_empty());
        let last = [0.30, 0.29, 0.31, 0.30, 0.5];
        assert_eq!(
            kinds(&last, false, Rules::Hyperfine { made: true }),
            ["outliers"]
        );
        // A first run below the others is an outlier, not a slow first run.
        assert_eq!(
            kinds(
                &[0.1, 0.30, 0.29, 0.31, 0.30],
                false,
                Rules::Hyperfine { made: true }
            ),
            ["outliers"]
        );
        // Low variance: no outlier (hyperfine's [-0.2, 0.0, 0.2] shifted).
        assert!(kinds(&[0.8, 1.0, 1.2], true, Rules::Hyperfine { made: true }).is_empty());
        let fast = [0.0049, 0.0051, 0.0048];
        assert_eq!(
            kinds(&fast, true, Rules::Hyperfine { made: true }),
            ["fast 2"]
        );
        assert!(kinds(&fast, false, Rules::Hyperfine { made: true }).is_empty());
        // Nothing made (debug mode): no fast-command warning, as hyperfine's.
        assert!(kinds(&fast, true, Rules::Hyperfine { made: false }).is_empty());
    }

    fn stored(id: i64, cells: &[(&str, i64)]) -> crate::store::StoredSession {
        crate::store::StoredSession {
            id,
            started_unix: 100.0 * id as f64,
            status: "finished".into(),
            source: "run".into(),
            cells: cells
                .iter()
                .map(|&(identity, cell)| crate::store::StoredCell {
                    id: cell,
                    position: 0,
                    identity: identity.into(),
                    name: identity.into(),
                    command: identity.into(),
                    parameters: Vec::new(),
                    variant: String::new(),
                    runs: 1,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn stored_history_has_a_point_per_session_and_identity() {
        let one = stored(1, &[("a", 11), ("b", 12)]);
        let two = stored(2, &[("a", 21), ("a", 22), ("c", 23)]);
        let times = std::collections::HashMap::from([
            (11, (1..=10).map(f64::from).collect::<Vec<f64>>()),
            (12, vec![f64::NAN, f64::NAN]),
            (21, vec![3.0]),
            (22, vec![9.0]),
            (23, vec![1.0]),
        ]);
        let h = stored_history(&[&one, &two], &["a", "b", "a"], &times);
        let ids: Vec<&str> = h.iter().map(|d| d.identity.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        let a: Vec<(i64, f64, f64, Option<[f64; 2]>)> = h[0]
            .points
            .iter()
            .map(|p| (p.session, p.started_unix, p.median, p.ci))
            .collect();
        // 1..=10: median 5.5; the 95 % order-statistic interval is
        // [x(2), x(9)] (binomial(10, 1/2) tails: 1.1 % below 2, 5.5 % below 3).
        // One run gives no interval; the session's second "a" is not read.
        assert_eq!(
            a,
            [(1, 100.0, 5.5, Some([2.0, 9.0])), (2, 200.0, 3.0, None)]
        );
        assert!(h[1].points.is_empty(), "no finite time, no point");
    }

    #[test]
    fn relative_means_divide_by_the_named_reference_else_the_fastest() {
        let slow = [1.9, 2.0, 2.1]; // mean 2, sd 0.1
        let fast = [0.95, 1.0, 1.05]; // mean 1, sd 0.05
        let a = analyse(&session(&[&slow, &fast, &[]]));
        let r = relative_means(&a, None);
        assert_eq!(r[1], Some(RelativeMean::Reference));
        assert_eq!(r[2], None, "no runs, no entry");
        let Some(RelativeMean::Ratio { ratio, error }) = r[0] else {
            panic!("{r:?}")
        };
        // hyperfine's propagation: 2 × √(0.05² + 0.05²).
        assert!((ratio - 2.0).abs() < 1e-12, "{ratio}");
        assert!((error - 2.0 * 0.005f64.sqrt()).abs() < 1e-12, "{error}");
        let named = relative_means(&a, Some(0));
        assert_eq!(named[0], Some(RelativeMean::Reference));
        assert!(
            matches!(named[1], Some(RelativeMean::Ratio { ratio, .. }) if (ratio - 0.5).abs() < 1e-12),
            "{named:?}"
        );
        // A reference with no runs, or with a zero mean, relates nothing.
        assert_eq!(relative_means(&a, Some(2)), [None, None, None]);
        let zero = analyse(&session(&[&[0.0, 0.0], &slow]));
        assert_eq!(relative_means(&zero, None), [None, None]);
    }

    #[test]
    fn the_relative_error_is_the_spread_of_the_ratio() {
        use rand::{Rng, SeedableRng};
        // The propagated error is the standard deviation of the ratio of two
        // independent draws with those means and deviations (to first order:
        // within a few percent at 5 % relative spread).
        let a = analyse(&session(&[&[1.9, 2.0, 2.1], &[0.95, 1.0, 1.05]]));
        let Some(RelativeMean::Ratio { error, .. }) = relative_means(&a, None)[0] else {
            panic!()
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut normal = |mean: f64, sd: f64| {
            mean + sd * stats::normal_quantile(rng.random_range(1e-12..1.0 - 1e-12))
        };
        let ratios: Vec<f64> = (0..100_000)
            .map(|_| normal(2.0, 0.1) / normal(1.0, 0.05))
            .collect();
        let simulated = stats::summarize(&ratios).unwrap().stddev;
        assert!(
            (error / simulated - 1.0).abs() < 0.03,
            "propagated {error}, simulated {simulated}"
        );
    }
}
