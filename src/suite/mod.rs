//! Suites: many benchmarks described in one file, split into partitions
//! that run on many machines (a Slurm array, a Kubernetes Indexed Job, a CI
//! matrix) and meet again in one store under a shared run id.
//! See docs/SUITES.md and docs/SCALE-OUT.md.

pub mod cells;
pub mod file;
pub mod lock;
pub mod manifest;
pub mod merge;
pub mod partition;
pub mod scheduler;
pub mod submit;

use std::collections::HashSet;
use std::path::PathBuf;

/// Labels cmdscope puts on the sessions of a suite run.
pub const RUN_LABEL: &str = "cmdscope.run";
pub const PARTITION_LABEL: &str = "cmdscope.partition";
pub const BENCHMARK_LABEL: &str = "cmdscope.benchmark";

/// The suite flags of `cmdscope run`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SuiteRunArgs {
    /// Run the benchmarks of a suite file (TOML; see docs/SUITES.md)
    /// instead of COMMANDs. Settings come from the file; --store,
    /// --no-store, --label and --style apply to every benchmark.
    #[arg(long, value_name = "FILE", conflicts_with = "commands")]
    pub suite: Option<PathBuf>,

    /// With --suite: run only partition K of N (cells are assigned by a
    /// hash of their identity), or 'auto' to take K and N from the
    /// scheduler (Slurm array, Kubernetes Indexed Job with --partitions,
    /// GitLab parallel, Buildkite parallelism).
    #[arg(long, value_name = "K/N|auto", requires = "suite")]
    pub partition: Option<String>,

    /// The number of partitions, for --partition auto where the scheduler
    /// gives only the index (Kubernetes: JOB_COMPLETION_INDEX).
    #[arg(long, value_name = "N", requires = "suite")]
    pub partitions: Option<u32>,

    /// The id all partitions of one suite execution share [default: from
    /// the scheduler: SLURM_ARRAY_JOB_ID, the Kubernetes job,
    /// GITHUB_RUN_ID, CI_PIPELINE_ID, BUILDKITE_BUILD_ID].
    #[arg(long, value_name = "ID", env = "CMDSCOPE_RUN_ID")]
    pub run_id: Option<String>,

    /// Do not take the host-wide lock that keeps two measuring cmdscope
    /// suites from running on one machine at the same time.
    #[arg(long, requires = "suite")]
    pub no_host_lock: bool,

    /// The identities of the cells to measure (set for each benchmark of a
    /// suite partition; not a flag).
    #[arg(skip)]
    pub only_cells: Option<HashSet<String>>,
}
