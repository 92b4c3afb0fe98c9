//! The result model of a session: every measured run of every cell
//! ([`CellResult`]) and what the session was run with and how it ended
//! ([`Session`]). Plain data that the runner fills and that analysis, the
//! reports and the store read; it may not import any of them (nor the
//! runner), so that data flows one way.

use std::time::{Duration, SystemTime};

use crate::error::Error;
use crate::metrics::{Metric, Sample};
use crate::run::plan::Cell;
use crate::run::preflight::Check;
use crate::run::schedule::{Order, StopReason};

pub mod batch;

/// All measured runs of one cell.
#[derive(Clone, Debug)]
pub struct CellResult {
    pub cell: Cell,
    pub samples: Vec<Sample>,
    /// In concurrency mode, the batches the samples were made in, in order.
    pub batches: Vec<BatchRecord>,
}

/// When one instance of a batch ran, and in which of the N slots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Span {
    pub slot: usize,
    pub start: f64,
    pub end: f64,
}

/// One batch of a cell run N instances at a time: which samples it made
/// and when each ran, the stretch in which all N slots were busy, and the
/// host's view meanwhile. Times in seconds from the batch's start.
#[derive(Clone, Debug, Default)]
pub struct BatchRecord {
    pub concurrency: usize,
    /// The block (round of the schedule) the batch belongs to.
    pub block: usize,
    /// Index in `CellResult::samples` of the batch's first sample; its
    /// samples follow in the order their instances ended.
    pub first_sample: usize,
    /// When each of the batch's samples ran and in which slot, in the same
    /// order.
    pub spans: Vec<Span>,
    pub busy: (f64, f64),
    pub elapsed: f64,
    pub host: crate::run::host::HostView,
}

/// Shell start-up cost subtracted from each run (`-S`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShellOverhead {
    pub wall: f64,
    pub user: f64,
    pub system: f64,
    pub runs: usize,
}

impl ShellOverhead {
    /// The start-up a shell calibration's runs show: their median wall,
    /// user and system time (the median, so one slow start does not shift
    /// every result). None without a run.
    pub fn of(calibration: &[Sample]) -> Option<ShellOverhead> {
        let median = |metric| {
            let v: Vec<f64> = calibration.iter().filter_map(|s| s.get(metric)).collect();
            crate::stats::median(&v)
        };
        Some(ShellOverhead {
            wall: median(Metric::WallTime)?,
            user: median(Metric::UserTime).unwrap_or(0.0),
            system: median(Metric::SystemTime).unwrap_or(0.0),
            runs: calibration.len(),
        })
    }

    /// Takes the start-up out of a run made through the shell (clamped at
    /// zero), and its CPU time with it.
    pub fn subtract(&self, sample: &mut Sample) {
        for (m, o) in [
            (Metric::WallTime, self.wall),
            (Metric::UserTime, self.user),
            (Metric::SystemTime, self.system),
        ] {
            if let Some(v) = sample.get(m) {
                sample.set(m, (v - o).max(0.0));
            }
        }
        let cpu = sample.get(Metric::UserTime).unwrap_or(0.0)
            + sample.get(Metric::SystemTime).unwrap_or(0.0);
        sample.set(Metric::CpuTime, cpu);
    }
}

#[derive(Debug)]
pub struct Session {
    pub started: SystemTime,
    pub results: Vec<CellResult>,
    pub order: Order,
    pub seed: u64,
    pub stop_reason: Option<StopReason>,
    pub shell: Option<String>,
    pub shell_overhead: Option<ShellOverhead>,
    pub counters_unavailable: Vec<(Metric, String)>,
    pub timeout: Option<Duration>,
    /// Why the session ended badly, if it did: a failed command or an interruption.
    pub failure: Option<Error>,
    /// Level the final comparisons are tested at: alpha, or with adaptive
    /// stopping the level of the session's last analysis (see `adaptive`).
    pub final_alpha: f64,
    pub alpha: f64,
    pub reference: usize,
    /// Interim analyses made by adaptive stopping.
    pub looks: usize,
    /// The spawner's peak resident size while measuring: the kernel reports
    /// a child's peak memory as at least this (see exec/spawner.c).
    pub rss_floor: Option<f64>,
    /// The machine's state when the session began (see `preflight`).
    pub preflight: Vec<Check>,
    /// Processes that runs left running, killed after each such run: the
    /// count per cell name (cells that left none are not listed).
    pub leftovers: Vec<(String, usize)>,
    /// `--simulate`'s simulator: its runs' wall times are the simulator's.
    pub simulated: Option<crate::exec::simulate::Simulation>,
    /// `--counted` (or `--simulate`): what counted the runs, and why.
    pub counted: Option<crate::run::counted::Counted>,
    /// Of a simulated session: the causes of varying counts cmdscope can
    /// name from how a cell is run, per cell name (cells with none are not
    /// listed; whether the counts did vary is the analysis's to see).
    pub count_causes: Vec<(String, crate::exec::simulate::Varies)>,
}

/// How a session ended beyond its runs and its settings, as the reports
/// read it: kept with the session in the store (`sessions.outcome`), so
/// that a stored session replays into the [`Session`] `run` held.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// When the runner began, in seconds since the Unix epoch.
    pub started: f64,
    pub seed: u64,
    pub stop_reason: Option<StopReason>,
    pub shell_overhead: Option<ShellOverhead>,
    /// By metric name.
    pub counters_unavailable: Vec<(String, String)>,
    pub final_alpha: f64,
    pub looks: usize,
    pub rss_floor: Option<f64>,
    pub leftovers: Vec<(String, usize)>,
    /// Interrupted (SIGINT, SIGTERM).
    #[serde(default)]
    pub interrupted: bool,
    /// What failed, in the error's words (None when nothing did, or kept
    /// before they were).
    #[serde(default)]
    pub failure: Option<String>,
    /// `--monitor`'s, when it ended during the session: the measured runs
    /// made before and how it ended. Not the session's: the caller that ran
    /// the monitor sets it (None for a monitor that ran to the end, and in
    /// outcomes kept before it was).
    #[serde(default)]
    pub monitor_ended: Option<(usize, String)>,
}

impl Outcome {
    pub fn of(s: &Session) -> Outcome {
        Outcome {
            started: (s.started.duration_since(SystemTime::UNIX_EPOCH))
                .map_or(0.0, |d| d.as_secs_f64()),
            seed: s.seed,
            stop_reason: s.stop_reason,
            shell_overhead: s.shell_overhead,
            counters_unavailable: (s.counters_unavailable.iter())
                .map(|(m, why)| (m.name().to_string(), why.clone()))
                .collect(),
            final_alpha: s.final_alpha,
            looks: s.looks,
            rss_floor: s.rss_floor,
            leftovers: s.leftovers.clone(),
            interrupted: matches!(s.failure, Some(Error::Interrupted)),
            failure: (s.failure.as_ref())
                .filter(|e| !matches!(e, Error::Interrupted))
                .map(|e| e.to_string()),
            monitor_ended: None,
        }
    }

    /// Puts what it kept back into `s`.
    pub fn apply(&self, s: &mut Session) {
        s.started = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(self.started.max(0.0));
        s.seed = self.seed;
        s.stop_reason = self.stop_reason;
        s.shell_overhead = self.shell_overhead;
        s.counters_unavailable = (self.counters_unavailable.iter())
            .filter_map(|(m, why)| Some((Metric::from_name(m)?, why.clone())))
            .collect();
        s.final_alpha = self.final_alpha;
        s.looks = self.looks;
        s.rss_floor = self.rss_floor;
        s.leftovers = self.leftovers.clone();
        // The failure as the reports word it (its kind only for the exit
        // status, which a replay does not give).
        s.failure = match (self.interrupted, &self.failure) {
            (true, _) => Some(Error::Interrupted),
            (false, Some(words)) => Some(Error::Failed(words.clone())),
            (false, None) => None,
        };
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// None for text that is not a stored outcome.
    pub fn from_json(text: &str) -> Option<Outcome> {
        serde_json::from_str(text).ok()
    }
}

impl Session {
    /// A session with no results, for searches and tests to fill.
    pub fn empty() -> Session {
        Session {
            started: SystemTime::now(),
            results: Vec::new(),
            order: Order::Interleaved,
            seed: 0,
            stop_reason: None,
            shell: None,
            shell_overhead: None,
            counters_unavailable: Vec::new(),
            timeout: None,
            failure: None,
            final_alpha: 0.05,
            alpha: 0.05,
            reference: 0,
            looks: 0,
            rss_floor: None,
            preflight: Vec::new(),
            leftovers: Vec::new(),
            simulated: None,
            counted: None,
            count_causes: Vec::new(),
        }
    }
}

impl CellResult {
    /// A cell's runs, made one at a time (no batches).
    pub fn new(cell: Cell, samples: Vec<Sample>) -> CellResult {
        CellResult {
            cell,
            samples,
            batches: Vec::new(),
        }
    }

    /// A cell whose runs took these wall times and exited 0 (for tests and tools).
    pub fn from_wall_times(name: &str, walls: &[f64]) -> CellResult {
        CellResult::new(
            Cell {
                name: name.into(),
                ..Cell::default()
            },
            walls
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    let mut s = Sample::new(i as u64);
                    s.set(Metric::WallTime, w);
                    s.exit_code = Some(0);
                    s
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_session_has_no_results_and_the_default_level() {
        let s = Session::empty();
        assert!(s.results.is_empty());
        assert_eq!(s.order, Order::Interleaved);
        assert_eq!(s.final_alpha, s.alpha);
        assert!(s.failure.is_none() && s.stop_reason.is_none());
    }

    #[test]
    fn an_outcome_keeps_the_monitors_end_and_reads_one_kept_before_it() {
        let o = Outcome {
            monitor_ended: Some((7, "exit status 3".into())),
            ..Outcome::of(&Session::empty())
        };
        assert_eq!(Outcome::from_json(&o.to_json()), Some(o.clone()));
        // Kept before the monitor's end was: none.
        let mut old: serde_json::Value = serde_json::from_str(&o.to_json()).unwrap();
        old.as_object_mut().unwrap().remove("monitor_ended");
        let read = Outcome::from_json(&old.to_string()).unwrap();
        assert_eq!(read.monitor_ended, None);
        assert_eq!(read.seed, o.seed);
    }

    #[test]
    fn cell_from_wall_times_numbers_its_runs_and_exits_zero() {
        let r = CellResult::from_wall_times("a", &[0.5, 0.25]);
        assert_eq!(r.cell.name, "a");
        assert_eq!(r.samples.len(), 2);
        for (i, (s, w)) in r.samples.iter().zip([0.5, 0.25]).enumerate() {
            assert_eq!(s.run_index, i as u64);
            assert_eq!(s.get(Metric::WallTime), Some(w));
            assert_eq!(s.exit_code, Some(0));
        }
    }
}
