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
            Error::Failed(_) => exit::FAILURE,
            Error::Interrupted => exit::INTERRUPTED,
            Error::Io(_) => exit::FAILURE,
            _ => exit::USAGE,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
