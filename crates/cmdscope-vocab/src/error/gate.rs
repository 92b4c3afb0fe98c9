//! Why `compare`, `check` or `changes` could not judge what they were given.

/// Options or sessions a gate or a change search refuses (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GateError {
    #[error("compare needs at least one results file")]
    NoResultsFiles,
    #[error("confidence level must be above 0 and below 1, got {0}")]
    Level(f64),
    #[error("the slowdown threshold must be a percentage >= 0, got {0}")]
    Threshold(f64),
    #[error("--metric {0}: higher is better for it, and the gate judges slowdowns of a metric where lower is better")]
    HigherIsBetter(String),
    /// `held`: the metrics the files hold.
    #[error("--metric {metric}: no such metric in the files (they hold {})", .held.join(", "))]
    MetricNotInFiles { metric: String, held: Vec<String> },
    /// Pairs the gate could not compare, in the report's words
    /// (`report::tables::unjudged`).
    #[error("{0}")]
    Unjudged(String),
    #[error("--metric {0} has a history but no runs to compare with a --baseline: use --against history (a concurrency benchmark's throughput is compared with the baseline beside its wall time)")]
    DerivedNeedsHistory(String),
    /// `current`/`baseline`: how each was simulated, or "not simulated".
    #[error("session #{current_id} was {current} and baseline session #{baseline_id} {baseline}: their simulated counts do not compare")]
    SimulatedApart {
        current_id: i64,
        current: String,
        baseline_id: i64,
        baseline: String,
    },
    /// `current`/`baseline`: what counted each ("counted by hardware
    /// counters", "counted by cachegrind, the simulator").
    #[error("session #{current_id} was {current} and baseline session #{baseline_id} {baseline}: their counts do not compare")]
    CountedApart {
        current_id: i64,
        current: String,
        baseline_id: i64,
        baseline: String,
    },
    /// `what`: "simulated" or "counted", the setting that differs.
    #[error(
        "suite run '{run}' was not {what} alike in all its sessions: its counts do not compare"
    )]
    SuiteCountedApart { run: String, what: String },
    #[error("session #{current} and baseline session #{baseline} have no benchmark in common")]
    NothingInCommon { current: i64, baseline: i64 },
    #[error("--min-change must be a percentage from 0 to 1000, got {0}")]
    MinChange(f64),
    #[error("session #{0} has not finished (or was killed): its runs are in no history")]
    SessionRunning(i64),
    #[error(
        "--since takes a session's id or a date (2026-11-01, 2026-11-01T12:00:00Z), got '{0}'"
    )]
    BadSince(String),
    /// `target`: "session #N" or "suite run 'ID'".
    #[error("{target} is in no matching benchmark history in store '{store}'")]
    NotInHistory { target: String, store: String },
}
