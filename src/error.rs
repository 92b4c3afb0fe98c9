//! Errors that reach the user, each with its documented exit code.

use std::path::PathBuf;

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
    #[error("{0}")]
    Usage(String),
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
    Parameter(crate::run::plan::ParameterError),
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

pub type Result<T, E = Error> = std::result::Result<T, E>;
