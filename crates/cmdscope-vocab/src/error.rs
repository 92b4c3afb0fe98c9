//! Errors that reach the user, each with its documented exit code.

use std::path::PathBuf;

mod cli;
mod exec;
mod explain;
mod gate;
mod options;
mod output;
mod plan;
mod profile;
mod search;
mod store;
mod suite;

pub use cli::CliError;
pub use exec::ExecError;
pub use explain::ExplainError;
pub use gate::GateError;
pub use options::OptionError;
pub use output::OutputError;
pub use plan::PlanError;
pub use profile::ProfileError;
pub use search::SearchError;
pub use store::StoreQueryError;
pub use suite::{SuiteError, SuiteProblem, SuiteSetting};

/// Exit codes (documented in README.md and `cmdscope --help`).
pub mod exit {
    pub const OK: i32 = 0;
    /// A benchmark failed (non-zero exit without `-i`), or a CI gate found a
    /// regression or a benchmark it could not compare.
    pub const FAILURE: i32 = 1;
    /// Bad usage or bad input: nothing was measured, or nothing trustworthy.
    pub const USAGE: i32 = 2;
    /// Interrupted by SIGINT or SIGTERM; finished runs were exported.
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    // Usage errors (exit 2), one enum per concern, worded where defined.
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Options(#[from] OptionError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Search(#[from] SearchError),
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error(transparent)]
    Explain(#[from] ExplainError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error(transparent)]
    Cli(#[from] CliError),
    #[error(transparent)]
    StoreQuery(#[from] StoreQueryError),
    #[error("command not found: {0}")]
    CommandNotFound(String),
    #[error("not executable: {0}")]
    NotExecutable(String),
    #[error("cannot start '{command}': {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read '{}': {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{0}")]
    Failed(String),
    /// More `-n` names than commands.
    #[error("{given} names (-n) for {commands} commands")]
    TooManyNames { given: usize, commands: usize },
    /// A per-command option (`--prepare`, `--output`...) given neither
    /// once nor once per command (`reference`: the added `--reference`
    /// command is among `commands`).
    #[error(
        "{flag} was given {given} times for {commands} commands{}: give it once (for all) or once per command",
        if *.reference { " (the --reference command counts, first)" } else { "" }
    )]
    PerCommandCount {
        flag: String,
        given: usize,
        commands: usize,
        reference: bool,
    },
    /// A `-P` or `-L` the parameter grammar refuses.
    #[error(transparent)]
    Parameter(ParameterError),
    /// A `--metric` that names nothing the session measured.
    #[error(transparent)]
    Metric(MetricError),
    /// Two parameters (-L, -P) of the same name.
    #[error("parameter '{0}' is defined twice")]
    DuplicateParameter(String),
    /// A run exited non-zero, or was killed, and `-i` did not tolerate it.
    #[error("{}", failed_run(.name, *.exit_code, *.signal, *.warmup))]
    RunFailed {
        /// The cell's display name.
        name: String,
        exit_code: Option<i32>,
        signal: Option<i32>,
        warmup: bool,
        /// Which of the cell's warm-up or measured runs it was, from 0.
        iteration: usize,
    },
    /// A hook (setup, prepare, conclude, cleanup) exited non-zero.
    #[error("{what} command '{hook}' failed ({status}) for '{name}'")]
    HookFailed {
        what: String,
        hook: String,
        /// How it ended, as the system words it ("exit status: 1").
        status: String,
        /// The display name of the cell it ran for.
        name: String,
    },
    /// The results store could not be opened, read or written (message
    /// already names the store, without its password).
    #[error("{0}")]
    Store(String),
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The process's exit code for this error: a failed run or hook and an
    /// I/O error are failures (1), an interruption is 130, and everything
    /// else, the per-concern usage errors among them, is usage (2).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Failed(_) | Error::RunFailed { .. } | Error::HookFailed { .. } => exit::FAILURE,
            Error::Interrupted => exit::INTERRUPTED,
            Error::Io(_) => exit::FAILURE,
            _ => exit::USAGE,
        }
    }
}

/// The words of [`Error::RunFailed`].
fn failed_run(name: &str, exit_code: Option<i32>, signal: Option<i32>, warmup: bool) -> String {
    let how = match (exit_code, signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "failed".to_string(),
    };
    format!(
        "'{name}' {how}{}; use -i/--ignore-failure to keep going",
        if warmup { " during warm-up" } else { "" }
    )
}

/// Why a `-P`/`-L` was refused: a usage error (exit 2) whose kind callers
/// can tell apart (the hyperfine front door words some as hyperfine does).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParameterError {
    #[error("parameter name '{0}' must be letters, digits and '_', not starting with a digit")]
    BadName(String),
    /// `what` names the flag and the bound ("--parameter-scan minimum").
    #[error("{what} '{text}' is not a number")]
    NotANumber { what: &'static str, text: String },
    /// `hint` says which flag to change.
    #[error("the scan would produce {} values (at most {max}): {hint}", value_count(*.count))]
    TooManyValues {
        count: f64,
        max: usize,
        hint: &'static str,
    },
    #[error("several -P scans: cannot tell which one {0} belongs to")]
    UnplacedStep(&'static str),
    #[error("{0} comes before any -P: with several -P, give it after the -P it steps")]
    StepBeforeScan(&'static str),
    #[error("-P {0} has more than one -D/--parameter-factor: give one step per -P, after it")]
    TwoSteps(String),
    #[error("a geometric scan (--parameter-factor) needs positive bounds")]
    GeometricNeedsPositiveBounds,
    #[error("--parameter-factor must be greater than 1, got {0}")]
    FactorNotAboveOne(String),
    /// A geometric scan's bounds the wrong way round.
    #[error("--parameter-scan minimum {min} is larger than maximum {max}")]
    MinAboveMax { min: String, max: String },
    #[error("a scan over non-integer bounds needs --parameter-step-size")]
    StepRequired,
    #[error("--parameter-step-size must not be 0")]
    ZeroStep,
    /// `ascending`: the bounds go up, so the step must be positive.
    #[error("a step of {step} never gets from {min} to {max}: use a {} step", if *.ascending { "positive" } else { "negative" })]
    StepAwayFromMax {
        step: f64,
        min: String,
        max: String,
        ascending: bool,
    },
    #[error("--parameter-scan {0}: the step is too small to tell the values apart at double precision; use a larger step")]
    StepBelowPrecision(String),
    #[error("--parameter-list {name}: empty value in '{list}'")]
    EmptyListValue { name: String, list: String },
}

/// Why a `--metric` was refused: a usage error (exit 2), each kind with
/// what the user can give instead.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MetricError {
    /// `monitor_NAME` in a session that kept no monitor counts.
    #[error("--metric {text}: no monitor counts in this session (give --monitor COMMAND --match {name}=REGEX)")]
    NoMonitor { text: String, name: String },
    /// `monitor_NAME` that is none of the session's counts (`series`);
    /// `closest`: the one it is probably a typo of.
    #[error("--metric {text}: not a monitor count of this session (it has {}){}", .series.join(", "), did_you_mean("; did you mean ", .closest.as_deref(), "?"))]
    NotAMonitorCount {
        text: String,
        series: Vec<String>,
        closest: Option<String>,
    },
    /// Neither a metric, throughput nor a monitor count (`names`: all the
    /// session has).
    #[error("unknown --metric '{text}'{}: one of {}, or monitor_NAME with --monitor", did_you_mean(" (did you mean ", .closest.as_deref(), "?)"), .names.join(", "))]
    Unknown {
        text: String,
        names: Vec<String>,
        closest: Option<String>,
    },
}

impl From<MetricError> for Error {
    fn from(e: MetricError) -> Self {
        Error::Metric(e)
    }
}

/// A suggestion between `before` and `after`, or nothing without one.
fn did_you_mean(before: &str, closest: Option<&str>, after: &str) -> String {
    closest.map_or_else(String::new, |c| format!("{before}{c}{after}"))
}

impl From<ParameterError> for Error {
    fn from(e: ParameterError) -> Self {
        Error::Parameter(e)
    }
}

/// Numbers as a list names them: "0,1,3".
fn comma_list(numbers: &[usize]) -> String {
    numbers
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A value count as the error says it: whole, or "too many" past f64's range.
fn value_count(count: f64) -> String {
    if count.is_finite() {
        format!("{count:.0}")
    } else {
        "too many".into()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
