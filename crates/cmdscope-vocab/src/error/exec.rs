//! Why a command could not be made into a process: the spawner's, the
//! working directory's and the simulator's usage errors.

use std::path::PathBuf;

/// A command, user, CPU set, environment or working directory the
/// executor cannot run with (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("empty command")]
    EmptyCommand,
    /// `what`: the string's role ("program path", "argument").
    #[error("{what} contains a NUL byte")]
    NulByte { what: String },
    #[error("cannot look up user '{user}': {}", std::io::Error::from_raw_os_error(*.errno))]
    UserLookup { user: String, errno: i32 },
    #[error("no such user: {0}")]
    NoSuchUser(String),
    #[error("--user {user} needs root privileges to switch users (cmdscope runs as uid {uid})")]
    SwitchUserNeedsRoot { user: String, uid: u32 },
    /// One string longer than the kernel takes (`max` bytes).
    #[error("an argument or environment variable of {len} bytes can never be executed: the kernel takes at most {max} bytes per string")]
    StringTooLong { len: usize, max: usize },
    /// `room`: the largest `--env-size` that fits in `total`.
    #[error("--env-size {env_size} can never be executed: with it the command's arguments and environment take {needed} bytes, and exec takes at most {total} here (a quarter of the stack limit, `ulimit -s`, at most 6 MiB); --env-size {room} is the largest that fits")]
    EnvSizeTooLarge {
        env_size: usize,
        needed: usize,
        total: usize,
        room: usize,
    },
    #[error("--cpus: CPU {cpu} is not available to cmdscope (available: {})", super::comma_list(.available))]
    CpuUnavailable { cpu: usize, available: Vec<usize> },
    #[error("a run may set at most {0} variables of its own")]
    TooManyRunVariables(usize),
    #[error("'{0}' cannot be set in a command's environment")]
    BadVariableName(String),
    #[error("a run's variables are too large")]
    RunVariablesTooLarge,
    #[error("the command and its environment are too large")]
    CommandTooLarge,
    #[error("--workdir tmpfs: no memory filesystem found (/dev/shm is not tmpfs); mount one and pass --workdir DIR")]
    NoTmpfs,
    #[error("--workdir-template {} is not a directory", .0.display())]
    TemplateNotADirectory(PathBuf),
    /// `example`: the flag's default geometry.
    #[error("{flag} '{text}': expected SIZE,ASSOCIATIVITY,LINE in bytes, e.g. {example}")]
    BadCacheGeometry {
        flag: String,
        text: String,
        example: &'static str,
    },
    /// `flag`: the flag that asked for the simulator, as given.
    #[error("{flag} needs Valgrind on PATH: install it (apt-get install valgrind, dnf install valgrind, or from https://valgrind.org)")]
    NoValgrind { flag: String },
    #[error("--simulate: cannot create '{}': {source}", path.display())]
    SimulateDirectory {
        path: PathBuf,
        source: std::io::Error,
    },
}
