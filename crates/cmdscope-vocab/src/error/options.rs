//! Why a run's options, alone or together, were refused: the values every
//! subcommand checks alike, `run`'s combinations, its exports.

/// A flag's value, or a combination of flags, refused before anything
/// runs (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OptionError {
    /// A duration above `max` seconds.
    #[error("{flag} is too large: at most {max:e} seconds (about 31 years), got {value}")]
    SecondsTooLarge { flag: String, max: f64, value: f64 },
    #[error("{flag} must be a {} number of seconds, got {value}", if *.allow_zero { "non-negative" } else { "positive" })]
    NotSeconds {
        flag: String,
        value: f64,
        allow_zero: bool,
    },
    #[error("--alpha must be above 0 and below 0.5, got {0}")]
    Alpha(f64),
    #[error("--precision must be a percentage above 0 and below 100, got {0}")]
    Precision(f64),
    #[error("--min-time must be a non-negative number of seconds, got {0}")]
    MinTime(f64),
    #[error("{flag} must be a non-negative percentage, got {pct}")]
    NotAPercentage { flag: String, pct: f64 },
    #[error("--min-benchmarking-time: {0}")]
    MinBenchmarkingTime(std::num::ParseFloatError),
    #[error("--ignore-failure expects exit codes like 1,2; got '{0}'")]
    IgnoreFailureCode(String),
    #[error("--show-output and --output both say where output goes: give one")]
    ShowOutputAndOutput,
    #[error("--until-decided needs interleaved order: comparisons are settled block by block")]
    UntilDecidedNeedsInterleaved,
    #[error("--precision needs interleaved order: comparisons are settled block by block")]
    PrecisionNeedsInterleaved,
    #[error("the commands have different --setup/--cleanup, which cannot bracket interleaved runs: use --order sequential")]
    HooksDifferInterleaved,
    #[error("--reference-name '{0}' is not the name or command line of any command (give --reference CMD to add a command)")]
    UnknownReferenceName(String),
    #[error("{0} needs --runs 2 or more: one run cannot show that the counts repeat")]
    SimulateOneRun(String),
    #[error("{0} cannot be used with --counters: the counters would count the simulator")]
    SimulateWithCounters(String),
    #[error("{0} cannot be used with --until-decided: its runs are counted, not timed")]
    SimulateWithUntilDecided(String),
    #[error("{0} cannot be used with --concurrency: throughput is a time")]
    SimulateWithConcurrency(String),
    /// `--counted=hardware` where no counter can be used, and why.
    #[error("--counted=hardware: {0}")]
    HardwareCounterUnusable(String),
    /// Two benchmarks (commands `first`, `second`) with one identity;
    /// `reference`: the first is the added `--reference`, `custom_name`:
    /// the second was named with `-n`.
    #[error("two benchmarks would both be '{identity}' ('{first}' and '{second}'): the store, check and the exports tell benchmarks apart by it; {}", twin_hint(*.reference, *.custom_name))]
    SameIdentity {
        identity: String,
        first: String,
        second: String,
        reference: bool,
        custom_name: bool,
    },
    #[error("--min-runs {min} is larger than --max-runs {max}")]
    MinRunsAboveMax { min: u64, max: u64 },
    #[error("--metric {0} is measured per batch of concurrency mode: give --concurrency N (or -P j 1 8 --concurrency {{j}})")]
    MetricNeedsConcurrency(String),
    #[error("--monitor-settle must be between 0 and 60 seconds, got {0}")]
    MonitorSettle(f64),
    #[error("--plot needs a parameter sweep (-P or -L)")]
    PlotNeedsSweep,
    #[error("only one export can go to stdout ('-')")]
    OneStdoutExport,
    #[error("a suite run's sessions are exported one at a time: report --session ID --export-...")]
    RunExports,
    #[error("--debug-mode runs nothing: its times cannot be stored (drop --store)")]
    DebugModeStore,
    /// `what`: the command, hook or shell that is not a `sleep`.
    #[error("--debug-mode runs nothing and needs every command, hook and shell to be 'sleep SECONDS': {what} is '{command}'")]
    DebugModeNeedsSleep { what: String, command: String },
    #[error("--isolate needs at least two CPUs available to cmdscope, have {0}")]
    IsolateNeedsTwoCpus(usize),
}

/// How to tell two benchmarks of one identity apart.
fn twin_hint(reference: bool, custom_name: bool) -> &'static str {
    if reference {
        "name the reference apart (--reference-name NAME)"
    } else if custom_name {
        "give each its own -n name (with the parameters in it, as -n 'x {n}', for a parameter scan)"
    } else {
        "to compare a command with itself, name the two apart (-n a -n b)"
    }
}
