//! Monitors: a command run beside the measured or traced one (say
//! `busctl --system monitor NAME`) whose output lines are counted per
//! pattern. `process` runs the monitor and counts its lines (used by
//! `explain --monitor` and by `run --monitor`); this file is `run`'s side.
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
    pub command: String,
    /// The NAMEs, in --match order.
    pub names: Vec<String>,
    pub regexes: Vec<String>,
    pub settle: f64,
    /// Per cell, per name: one value per measured run, in order (NaN for
    /// a run after the monitor ended).
    pub per_run: Vec<Vec<Vec<f64>>>,
    /// Measured runs made before the monitor ended, and how it ended,
    /// when it ended during the session.
    pub ended: Option<(usize, String)>,
}

impl Counts {
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

/// The counts as the sweep and the search read them (`monitor_NAME`).
impl RunSeries for Counts {
    fn series_names(&self) -> Vec<String> {
        self.names
            .iter()
            .map(|n| format!("{MONITOR_PREFIX}{n}"))
            .collect()
    }

    fn series(&self, name: &str, cell: usize) -> Vec<f64> {
        let pattern = name
            .strip_prefix(MONITOR_PREFIX)
            .and_then(|n| self.names.iter().position(|m| m == n));
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
    pub fn start(
        command: &str,
        matches: &[String],
        settle: Duration,
        cells: usize,
    ) -> Result<RunMonitor> {
        let (names, regexes) = parse_matches(matches)?;
        let compiled = process::compile(&regexes)?;
        let mut m = Monitor::start(command, &regexes, compiled, READY_WAIT)?;
        if m.ended() {
            let how = m.end_status();
            let _ = m.finish(Duration::ZERO, None);
            return Err(ExplainError::MonitorEndedEarly {
                command: command.into(),
                how,
            }
            .into());
        }
        let n = names.len();
        Ok(RunMonitor {
            monitor: Some(m),
            settle,
            window: None,
            measured: 0,
            counts: Counts {
                command: command.to_string(),
                names,
                regexes,
                settle: settle.as_secs_f64(),
                per_run: vec![vec![Vec::new(); n]; cells],
                ended: None,
            },
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
    c.names
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
/// (unit "count") of its cell.
pub fn store(c: &Counts, recorder: &mut crate::store::record::Recorder) {
    for (cell, per_name) in c.per_run.iter().enumerate() {
        for (name, values) in c.names.iter().zip(per_name) {
            if !values.is_empty() {
                recorder.add_extra(cell, &format!("monitor_{name}"), "count", values);
            }
        }
    }
}

/// Comparisons of each `monitor_NAME` between the reference and every other
/// command, by the analysis every other count metric gets (exact rank
/// tests; paired by block when interleaved).
pub fn compare(
    c: &Counts,
    session: &crate::run::session::Session,
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
    for (p, name) in c.names.iter().enumerate() {
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
    fn counts_are_series_by_full_name_and_follow_a_selection_of_cells() {
        let mut c = Counts {
            names: vec!["hits".into(), "lines".into()],
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
