//! Why the commands, their parameters and their per-command options make
//! no plan.

/// A command line or per-command option the plan refuses (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("no command given")]
    NoCommand,
    #[error("{flag} expects a whole number, got '{text}'")]
    NotAWholeNumber { flag: String, text: String },
    #[error("--env-size must be from 0 to {max} (exec never takes more than 6 MiB of environment), got {got}")]
    EnvSize { max: usize, got: i64 },
    #[error("--nice must be between -20 and 19, got {0}")]
    Nice(i64),
    #[error("--ops must be at least 1, got {0}")]
    Ops(i64),
    #[error("--concurrency must be between 1 and {max}, got {got}")]
    Concurrency { max: usize, got: i64 },
    #[error("--workdir-template needs --workdir")]
    TemplateNeedsWorkdir,
    #[error("--user needs a user name or uid")]
    EmptyUser,
    #[error("--cpus expects a list like 0-3,6; got '{0}'")]
    BadCpuList(String),
    #[error("--shell '{0}' is not a shell command")]
    NotAShell(String),
    #[error("the parameters combine into more than {0} benchmarks")]
    TooManyCombinations(usize),
    #[error(
        "{commands} commands x {combinations} parameter combinations is more than {max} benchmarks"
    )]
    TooManyBenchmarks {
        commands: usize,
        combinations: usize,
        max: usize,
    },
    #[error("unbalanced quotes in command: {0}")]
    UnbalancedQuotes(String),
    #[error("--env expects KEY=VALUE, got '{0}'")]
    BadEnv(String),
}
