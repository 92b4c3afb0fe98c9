//! Why a suite could not be read, partitioned, scheduled, locked or merged.

use std::path::PathBuf;

/// A suite file, partition, scheduler environment, host lock or suite run
/// that cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A problem at a place in a suite file (`position`: "FILE:LINE:COL").
    #[error("{position}: {problem}")]
    At {
        position: String,
        problem: SuiteProblem,
    },
    #[error("--suite needs a file")]
    NeedsFile,
    #[error("--suite takes the measurement settings from the file; remove {} (or set them in its [defaults])", .0.join(", "))]
    SettingsGiven(Vec<String>),
    #[error("--suite records into the store; exports and --plot are not available with it: remove {} (use `cmdscope report --run ID`)", .0.join(", "))]
    OutputsGiven(Vec<String>),
    #[error("{flag} is not available with --suite: {why}")]
    Unavailable {
        flag: &'static str,
        why: &'static str,
    },
    #[error("the number of partitions must be between 1 and {max}, got {count}")]
    PartitionCount { max: u32, count: u32 },
    #[error("partition {index}/{count}: K must be between 1 and {count}")]
    PartitionIndex { index: u32, count: u32 },
    #[error("--partition expects K/N (e.g. 2/8), got '{0}'")]
    BadPartition(String),
    /// As [`SuiteError::BadPartition`], where `auto` is also taken.
    #[error("--partition expects K/N (e.g. 2/8) or 'auto', got '{0}'")]
    BadPartitionOrAuto(String),
    #[error("--partitions goes with --partition auto")]
    PartitionsWithoutAuto,
    #[error("--partitions goes with --partition auto, not with K/N")]
    PartitionsWithKOfN,
    /// `partition`: as "K/N".
    #[error("partition {0}: give --run-id ID (the same for every partition) or run under a scheduler that names the run")]
    PartitionNeedsRunId(String),
    #[error("--partition auto: {name}='{value}' is not a number")]
    SchedulerNotANumber { name: String, value: String },
    /// `from`: the scheduler's variables that were read.
    #[error("--partition auto: {from} gives partition {index} of {count}")]
    SchedulerOutOfRange {
        from: String,
        index: i64,
        count: i64,
    },
    #[error("--partition auto ({from}): {source}")]
    SchedulerPartition {
        from: String,
        source: Box<SuiteError>,
    },
    #[error("--partition auto on Kubernetes (JOB_COMPLETION_INDEX) needs --partitions N, the Job's completions")]
    KubernetesNeedsPartitions,
    #[error("--partition auto: no scheduler variables found (SLURM_ARRAY_TASK_ID/_COUNT, JOB_COMPLETION_INDEX, CI_NODE_INDEX/CI_NODE_TOTAL, BUILDKITE_PARALLEL_JOB/_COUNT); give --partition K/N")]
    NoScheduler,
    #[error("run id '{0}': use 1 to 128 letters, digits, '-', '_', '.' or ':'")]
    BadRunId(String),
    #[error("--kubernetes needs --store-secret NAME (the Secret with the store URL)")]
    KubernetesNeedsSecret,
    #[error("--store-secret '{secret}' / --store-secret-key '{key}': not a valid Kubernetes Secret name (lower-case letters, digits, '-', '.') or key")]
    BadSecret { secret: String, key: String },
    #[error("cannot find this cmdscope's path: {0}")]
    OwnPath(std::io::Error),
    #[error("cannot lock '{}': {source} (use --no-host-lock to measure without it)", path.display())]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `store`: its location, without a password.
    #[error("no run '{run}' in store '{store}'")]
    NoRun { run: String, store: String },
    #[error("no session of run '{run}' in store '{store}'")]
    NoSessionOfRun { run: String, store: String },
    #[error("no baseline labelled {key}={value} other than run '{run}' in store '{store}'")]
    NoBaseline {
        key: String,
        value: String,
        run: String,
        store: String,
    },
}

/// What is wrong at a place in a suite file.
#[derive(Debug, thiserror::Error)]
pub enum SuiteProblem {
    /// The TOML reader's own message, on one line.
    #[error("{0}")]
    Toml(String),
    #[error("no [[benchmark]] table: a suite needs at least one benchmark")]
    NoBenchmark,
    #[error("benchmark name is empty")]
    EmptyName,
    #[error("benchmark '{name}' is defined twice (first at line {first_line})")]
    DefinedTwice { name: String, first_line: usize },
    #[error("'commands' is empty")]
    EmptyCommands,
    #[error("benchmark '{0}' has both 'command' and 'commands': give one")]
    CommandAndCommands(String),
    #[error("benchmark '{0}' needs 'command' (a string) or 'commands' (a list)")]
    NoCommand(String),
    #[error("parameter '{0}' has no values")]
    NoValues(String),
    #[error("parameter '{name}': value '{value}' contains ',' (values are listed as with -L)")]
    CommaInValue { name: String, value: String },
    #[error("a label needs a key")]
    LabelWithoutKey,
    /// One of the benchmark's settings (`name`: the benchmark's).
    #[error("benchmark '{name}': {setting}")]
    Setting { name: String, setting: SuiteSetting },
    /// What `run`'s own checks say of the benchmark's settings, as they
    /// would of the flags.
    #[error("benchmark '{name}': {source}")]
    Benchmark {
        name: String,
        source: Box<super::Error>,
    },
}

/// A benchmark's setting a suite refuses, by the rules of `run`'s flags.
#[derive(Debug, thiserror::Error)]
pub enum SuiteSetting {
    /// `flag`: the flag of the count (`--runs`, `--min-runs`, `--max-runs`).
    #[error("{0} must be at least 1, got 0")]
    ZeroRuns(&'static str),
    /// `what`: "simulate" or "counted".
    #[error("{0} needs runs = 2 or more: one run cannot show that the counts repeat")]
    OneCountedRun(&'static str),
    #[error("runs cannot be used with min_runs or max_runs: give the count or its bounds")]
    RunsAndBounds,
    #[error("invalid value '{given}' for order: one of {}", .known.join(", "))]
    UnknownOrder {
        given: String,
        known: Vec<&'static str>,
    },
    #[error("counted = '{0}': expected \"auto\", \"hardware\" or \"simulator\"")]
    UnknownCounted(String),
    #[error(
        "simulate and counted cannot both be given: simulate = true is counted = \"simulator\""
    )]
    SimulateAndCounted,
    #[error("counters and counted cannot both be given: counted chooses the counters")]
    CountersAndCounted,
    /// The geometry's key (`I1`, `D1`, `LL`).
    #[error("{0} is the simulated cache's geometry: it needs simulate = true or counted")]
    GeometryWithoutSimulation(String),
    /// `identity`: the cell's, as the store keys it.
    #[error("two cells are both '{0}': give the commands different names")]
    DuplicateCell(String),
}
