//! Monitors: a command run beside the measured or traced one (say
//! `busctl --system monitor NAME`) whose output lines are counted per
//! pattern. `process` runs the monitor and counts its lines (used by
//! `explain --monitor` and by `run --monitor`); this file is `run`'s side,
//! and `report`'s counts of a stored session, rebuilt as `run` held them.
//!
//! `cmdscope run --monitor COMMAND --match NAME=REGEX`: one monitor for the
//! whole session; the lines matching each pattern that arrive while a run
//! executes, plus a settle time after it, are that run's `monitor_NAME`.
//!
//! The monitor's output is read by its own thread (see `process`), never by
//! the thread that measures: a run is measured exactly as without it. The
//! settle time is waited after the run has been measured, before the next
//! one starts.

pub mod process;

use std::time::{Duration, Instant};

use self::process::Monitor;
use crate::analysis::source::{RunSeries, MONITOR_PREFIX};
use crate::error::{ExplainError, Result};
use crate::run::events::{Event, Observer};
use crate::run::session::Session;
use crate::run::settings::MonitorSettings;
use crate::store::ExtraSeries;

/// How long the monitor is given to get ready before the first run.
pub const READY_WAIT: Duration = Duration::from_millis(200);

/// `NAME=REGEX` arguments: the names (metric `monitor_NAME`) and the regexes.
pub fn parse_matches(args: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    let mut names: Vec<String> = Vec::new();
    let mut regexes = Vec::new();
    for a in args {
        let Some((name, re)) = a.split_once('=') else {
            return Err(ExplainError::MatchNotNameRegex(a.clone()).into());
        };
        let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(ExplainError::MatchBadName(a.clone()).into());
        }
        if names.iter().any(|n| n == name) {
            return Err(ExplainError::MatchTwice(name.into()).into());
        }
        names.push(name.to_string());
        regexes.push(re.to_string());
    }
    if names.is_empty() {
        return Err(ExplainError::MonitorNeedsMatch.into());
    }
    Ok((names, regexes))
}

/// What the monitor counted over a session.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// The monitor: its command, its patterns (NAMEs and regexes, in
    /// --match order) and its settle time, as the settings keep it.
    pub watch: MonitorSettings,
    /// Per cell, per name: one value per measured run, in order (NaN for
    /// a run after the monitor ended).
    pub per_run: Vec<Vec<Vec<f64>>>,
    /// Measured runs made before the monitor ended, and how it ended,
    /// when it ended during the session.
    pub ended: Option<(usize, String)>,
}

impl Counts {
    /// The counts of the monitor `watch`: per cell, per pattern, one value
    /// per measured run; `ended` as in [`Counts::ended`].
    pub fn of(
        watch: &MonitorSettings,
        per_run: Vec<Vec<Vec<f64>>>,
        ended: Option<(usize, String)>,
    ) -> Counts {
        Counts {
            watch: watch.clone(),
            per_run,
            ended,
        }
    }

    /// Keeps the counts of the listed cells only, in that order (a search's
    /// session holds its tried values, not the whole grid).
    pub fn select(&mut self, cells: &[usize]) {
        let mut all = std::mem::take(&mut self.per_run);
        self.per_run = cells
            .iter()
            .map(|&i| all.get_mut(i).map(std::mem::take).unwrap_or_default())
            .collect();
    }
}

/// The metric sweeps and searches compare, read from the settings as
/// `run` read `--metric`: a monitor's counts are `monitor_NAME`.
pub fn metric_source(
    settings: &crate::run::settings::Settings,
    monitor: Option<&Counts>,
) -> Result<crate::analysis::source::Source> {
    let series: Vec<String> = monitor.map(RunSeries::series_names).unwrap_or_default();
    crate::analysis::source::Source::parse(&settings.metric, &series)
}

/// The counts as the sweep and the search read them (`monitor_NAME`).
impl RunSeries for Counts {
    fn series_names(&self) -> Vec<String> {
        self.watch
            .names
            .iter()
            .map(|n| format!("{MONITOR_PREFIX}{n}"))
            .collect()
    }

    fn series(&self, name: &str, cell: usize) -> Vec<f64> {
        let pattern = name
            .strip_prefix(MONITOR_PREFIX)
            .and_then(|n| self.watch.names.iter().position(|m| m == n));
        pattern.map_or_else(Vec::new, |p| series(self, cell, p))
    }
}

/// While the session runs: what was counted so far.
impl RunSeries for RunMonitor {
    fn series_names(&self) -> Vec<String> {
        self.counts.series_names()
    }

    fn series(&self, name: &str, cell: usize) -> Vec<f64> {
        self.counts.series(name, cell)
    }
}

/// The running monitor and what it counted so far.
pub struct RunMonitor {
    monitor: Option<Monitor>,
    settle: Duration,
    window: Option<Vec<u64>>,
    measured: usize,
    counts: Counts,
}

impl RunMonitor {
    /// Starts the monitor; one that cannot start or ends before the first
    /// run is an error.
    pub fn start(watch: &MonitorSettings, cells: usize) -> Result<RunMonitor> {
        let compiled = process::compile(&watch.regexes)?;
        let mut m = Monitor::start(&watch.command, &watch.regexes, compiled, READY_WAIT)?;
        if m.ended() {
            let how = m.end_status();
            let _ = m.finish(Duration::ZERO, None);
            return Err(ExplainError::MonitorEndedEarly {
                command: watch.command.clone(),
                how,
            }
            .into());
        }
        Ok(RunMonitor {
            monitor: Some(m),
            settle: Duration::try_from_secs_f64(watch.settle).unwrap_or_default(),
            window: None,
            measured: 0,
            counts: Counts::of(
                watch,
                vec![vec![Vec::new(); watch.names.len()]; cells],
                None,
            ),
        })
    }

    /// Stops the monitor and returns the counts.
    pub fn finish(mut self) -> Counts {
        self.stop();
        std::mem::take(&mut self.counts)
    }

    fn stop(&mut self) {
        if let Some(m) = self.monitor.take() {
            let _ = m.finish(Duration::ZERO, None);
        }
    }
}

impl Drop for RunMonitor {
    /// A session that ends in an error must not leave the monitor running.
    fn drop(&mut self) {
        self.stop();
    }
}

/// The monitor observes the session: a run's window opens as it starts,
/// closes after it (and the settle time), and is counted with its sample.
impl Observer for RunMonitor {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::RunStarting { .. } => {
                if let Some(m) = &self.monitor {
                    m.mark_start(Instant::now());
                }
            }
            Event::RunEnded { .. } => self.run_ended(),
            Event::Sample { cell, .. } => self.sample(cell),
            _ => {}
        }
    }

    fn watches_runs(&self) -> bool {
        self.monitor.is_some()
    }
}

impl RunMonitor {
    fn run_ended(&mut self) {
        self.window = None;
        let Some(m) = &mut self.monitor else {
            return;
        };
        // Lines the run caused may still be on their way through the
        // monitor (a bus, a log follower): they count until the settle time.
        std::thread::sleep(self.settle);
        let window = m.take_window();
        if m.ended() {
            // Counts of a run the monitor did not see to its end are not kept.
            let how = m.end_status();
            crate::eprint_line!(
                "cmdscope: warning: the monitor ended during the session ({how}) after {} measured runs; later runs have no monitor counts",
                self.measured
            );
            self.counts.ended = Some((self.measured, how));
            if let Some(m) = self.monitor.take() {
                let _ = m.finish(Duration::ZERO, None);
            }
            return;
        }
        self.window = Some(window);
    }

    fn sample(&mut self, cell: usize) {
        self.measured += 1;
        if let Some(per_name) = self.counts.per_run.get_mut(cell) {
            for (i, series) in per_name.iter_mut().enumerate() {
                let v = self
                    .window
                    .as_ref()
                    .and_then(|w| w.get(i))
                    .map_or(f64::NAN, |&c| c as f64);
                series.push(v);
            }
        }
    }
}

/// Each pattern's metric name (`monitor_NAME`) and median count per run
/// for one cell (None: no counted run): the one summary every table and
/// the terminal show of a monitor count.
pub fn medians(c: &Counts, cell: usize) -> Vec<(String, Option<f64>)> {
    c.watch
        .names
        .iter()
        .enumerate()
        .map(|(p, name)| {
            (
                format!("monitor_{name}"),
                crate::stats::median_finite(&series(c, cell, p)),
            )
        })
        .collect()
}

/// One pattern's counts for one cell, one value per measured run (NaN for
/// a run without a count); empty for a cell or pattern out of range.
pub fn series(c: &Counts, cell: usize, pattern: usize) -> Vec<f64> {
    c.per_run
        .get(cell)
        .and_then(|p| p.get(pattern))
        .cloned()
        .unwrap_or_default()
}

/// Stores each command's counts as the per-run series `monitor_NAME`
/// (unit "count") of its cell, and how the monitor ended, if it did, for
/// the session's outcome (the monitor itself is the session's settings).
pub fn store(c: &Counts, recorder: &mut crate::store::record::Recorder) {
    for (cell, per_name) in c.per_run.iter().enumerate() {
        for (name, values) in c.watch.names.iter().zip(per_name) {
            if !values.is_empty() {
                recorder.add_extra(cell, &format!("monitor_{name}"), "count", values);
            }
        }
    }
    recorder.keep_monitor_end(c.ended.clone());
}

/// The counts `run` held, from what [`store`] kept: the monitor `watch`
/// (the stored settings'), each stored cell's series (`stored[i]`, of
/// `session`'s cell i) and how it ended. The store leaves out a run
/// without a count, and only runs after the monitor ended have none: each
/// series is its cell's first runs, and the later ones get NaN again.
pub fn replayed(
    watch: &MonitorSettings,
    session: &Session,
    stored: &[Vec<ExtraSeries>],
    ended: Option<(usize, String)>,
) -> Counts {
    let per_run = (session.results.iter().enumerate())
        .map(|(i, r)| {
            let runs = r.samples.len();
            (watch.names.iter())
                .map(|name| {
                    let metric = format!("{MONITOR_PREFIX}{name}");
                    let mut values = (stored.get(i).into_iter().flatten())
                        .find(|s| s.metric == metric)
                        .map(|s| s.values.clone())
                        .unwrap_or_default();
                    values.resize(runs.max(values.len()), f64::NAN);
                    values
                })
                .collect()
        })
        .collect();
    Counts::of(watch, per_run, ended)
}

/// Comparisons of each `monitor_NAME` between the reference and every other
/// command, by the analysis every other count metric gets (exact rank
/// tests; paired by block when interleaved).
pub fn compare(
    c: &Counts,
    session: &Session,
    precision: f64,
) -> Vec<crate::analysis::comparison::Comparison> {
    use crate::analysis::comparison::{compare_values, Design};
    use crate::analysis::source::Source;
    let mut out = Vec::new();
    let results = &session.results;
    let reference = session.reference;
    if results.len() < 2 || reference >= results.len() {
        return out;
    }
    let paired = session.order == crate::run::schedule::Order::Interleaved;
    for (p, name) in c.watch.names.iter().enumerate() {
        // A name for the session's lifetime: comparisons name metrics with
        // static strings; a handful of patterns per session.
        let metric: &'static str = Box::leak(format!("monitor_{name}").into_boxed_str());
        // A count's rules, as a sweep or search of it has them.
        let settings = Source::Series(metric).settings(
            session.final_alpha,
            results.len() - 1,
            precision,
            None,
        );
        let base = series(c, reference, p);
        for (i, r) in results.iter().enumerate() {
            if i == reference {
                continue;
            }
            let cand = series(c, i, p);
            // The k-th measured run of each command ran in block k.
            let (b, v): (Vec<f64>, Vec<f64>) = if paired {
                base.iter()
                    .zip(&cand)
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .map(|(x, y)| (*x, *y))
                    .unzip()
            } else {
                (
                    base.iter().copied().filter(|x| x.is_finite()).collect(),
                    cand.iter().copied().filter(|x| x.is_finite()).collect(),
                )
            };
            if b.is_empty() || v.is_empty() {
                continue;
            }
            let design = if paired {
                Design::Paired
            } else {
                Design::Unpaired
            };
            out.push(compare_values(&b, &v, design, &settings).named(
                metric,
                &results[reference].cell.name,
                &r.cell.name,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_named_patterns() {
        let (names, res) = parse_matches(&["hits=^hit$".into(), "any=a=b".into()]).unwrap();
        assert_eq!(names, ["hits", "any"]);
        assert_eq!(res, ["^hit$", "a=b"]);
        for bad in ["nohint", "=x", "a-b=x", "a b=x"] {
            let e = parse_matches(&[bad.into()]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
        assert!(parse_matches(&["a=1".into(), "a=2".into()]).is_err());
        assert!(parse_matches(&[]).is_err());
    }

    #[test]
    fn stored_counts_get_back_the_runs_the_store_left_out() {
        let watch = MonitorSettings {
            command: "mon".into(),
            names: vec!["hits".into(), "lines".into()],
            regexes: vec!["^hit$".into(), ".".into()],
            settle: 0.05,
        };
        let mut session = Session::empty();
        session.results = vec![
            crate::run::session::CellResult::from_wall_times("a", &[0.1; 4]),
            crate::run::session::CellResult::from_wall_times("b", &[0.1; 3]),
        ];
        let series = |metric: &str, values: &[f64]| ExtraSeries {
            metric: metric.into(),
            unit: "count".into(),
            higher_is_better: false,
            values: values.to_vec(),
        };
        // The monitor ended after the third run: cell a's fourth run and
        // cell b's third have no count, and b's lines were not stored at
        // all (another metric beside them is not the monitor's).
        let stored = vec![
            vec![
                series("monitor_hits", &[1.0, 2.0, 3.0]),
                series("monitor_lines", &[4.0, 5.0, 6.0]),
            ],
            vec![
                series("hits", &[9.0, 9.0, 9.0]),
                series("monitor_hits", &[7.0, 8.0]),
            ],
        ];
        let c = replayed(&watch, &session, &stored, Some((5, "exit status 3".into())));
        assert_eq!(c.watch, watch);
        assert_eq!(c.ended, Some((5, "exit status 3".into())));
        let shown = |cell: usize, p: usize| -> Vec<Option<f64>> { series_of(&c, cell, p) };
        assert_eq!(shown(0, 0), [Some(1.0), Some(2.0), Some(3.0), None]);
        assert_eq!(shown(0, 1), [Some(4.0), Some(5.0), Some(6.0), None]);
        assert_eq!(shown(1, 0), [Some(7.0), Some(8.0), None]);
        assert_eq!(shown(1, 1), [None, None, None]);
    }

    /// One pattern's counts of a cell, None for a run without one.
    fn series_of(c: &Counts, cell: usize, p: usize) -> Vec<Option<f64>> {
        (series(c, cell, p).into_iter())
            .map(|x| x.is_finite().then_some(x))
            .collect()
    }

    #[test]
    fn counts_are_series_by_full_name_and_follow_a_selection_of_cells() {
        let mut c = Counts {
            watch: MonitorSettings {
                names: vec!["hits".into(), "lines".into()],
                ..MonitorSettings::default()
            },
            per_run: vec![
                vec![vec![1.0, 2.0], vec![10.0]],
                vec![vec![3.0], vec![30.0]],
                vec![vec![5.0], vec![50.0]],
            ],
            ..Counts::default()
        };
        assert_eq!(c.series_names(), ["monitor_hits", "monitor_lines"]);
        assert_eq!(c.series("monitor_hits", 0), [1.0, 2.0]);
        assert_eq!(c.series("monitor_lines", 2), [50.0]);
        // Not a name of this monitor, or a cell out of range: no values.
        assert!(c.series("hits", 0).is_empty());
        assert!(c.series("monitor_other", 0).is_empty());
        assert!(c.series("monitor_hits", 9).is_empty());
        // A search's session holds its tried cells, in its own order.
        c.select(&[2, 0, 7]);
        assert_eq!(c.series("monitor_hits", 0), [5.0]);
        assert_eq!(c.series("monitor_hits", 1), [1.0, 2.0]);
        assert!(c.series("monitor_hits", 2).is_empty());
    }
}
