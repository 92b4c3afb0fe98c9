//! Why a `--minimize`/`--maximize` search was refused.

/// A search that cannot be made as asked (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error("--minimize/--maximize {0}: not a parameter (give it with -P or -L)")]
    NotAParameter(String),
    /// `all`: every parameter, as the flag takes them.
    #[error("--minimize/--maximize searches every parameter: add {} (--minimize {})", .missing.join(", "), .all.join(","))]
    MissingParameters {
        missing: Vec<String>,
        all: Vec<String>,
    },
    #[error("--minimize/--maximize searches at most three parameters")]
    TooManyParameters,
    #[error("--minimize/--maximize searches one command: remove the extra commands")]
    OneCommand,
    #[error("--minimize/--maximize searches one command: remove the added --reference command")]
    ReferenceAdded,
    /// `--min-runs` or `--max-runs`.
    #[error("{0} does not apply to --minimize/--maximize: the search gives each value the runs its race needs, up to --runs N (10 by default)")]
    RunsBound(String),
    #[error("--maximize on {0} would look for the slowest value: give --ops N to maximise operations per second, or use --minimize")]
    MaximizeTime(String),
    #[error("--minimize on {0} would look for the fewest completions per second: use --maximize")]
    MinimizeThroughput(String),
    #[error("nothing to search")]
    NothingToSearch,
    #[error("--runs {runs} over {values} values is more runs than can be counted")]
    TooManyRuns { runs: usize, values: usize },
    #[error("--metric {0}: no monitor counts in this search (give --monitor)")]
    NoMonitor(String),
    /// A stored search raced again asked at `round` (from 1) for other
    /// values or runs than its stored race measured there (or for a round
    /// past its end, or ended before its last).
    #[error("its stored race does not replay: round {round} differs from the race it keeps")]
    StoredRaceDiffers { round: usize },
}
