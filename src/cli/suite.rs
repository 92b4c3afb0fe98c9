//! The arguments of `cmdscope suite list|submit|manifest`, and of `run`'s
//! suite flags. Parsing only.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::StoreArgs;

const SUITE_EXAMPLES: &str = "\
Examples:
  cmdscope suite list bench.toml
  cmdscope suite list bench.toml --partition 2/8 --format json
  cmdscope suite submit bench.toml --slurm --partitions 8 \\
      --store postgres://bench@db/results --wait
  cmdscope suite manifest bench.toml --kubernetes --partitions 8 \\
      --store-secret cmdscope-store
  cmdscope suite manifest bench.toml --github-actions --partitions 4
";

#[derive(Args, Debug)]
#[command(after_help = SUITE_EXAMPLES)]
pub struct SuiteArgs {
    #[command(subcommand)]
    pub command: SuiteCommand,
}

#[derive(Subcommand, Debug)]
pub enum SuiteCommand {
    /// Print the cells of a suite (or of one partition), with the time they
    /// took when the store knows it.
    List(ListArgs),
    /// Submit a suite to Slurm as an array job, one task per partition.
    Submit(SubmitArgs),
    /// Print a Kubernetes Indexed Job, or a GitHub Actions or GitLab CI
    /// snippet, that runs the suite's partitions.
    Manifest(ManifestArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The suite file (TOML; see docs/SUITES.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Only the cells of partition K of N.
    #[arg(long, value_name = "K/N")]
    pub partition: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct SubmitArgs {
    /// The suite file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Submit to Slurm with sbatch (the only scheduler cmdscope submits to;
    /// see `suite manifest` for the others).
    #[arg(long, required = true)]
    pub slurm: bool,

    /// Number of partitions: array tasks 1..N.
    #[arg(long, value_name = "N")]
    pub partitions: u32,

    /// The store the partitions write to. Passed to the job in the
    /// environment (CMDSCOPE_STORE), never written into the job script.
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "CMDSCOPE_STORE",
        hide_env_values = true
    )]
    pub store: String,

    /// The run id [default: slurm-<array job id>].
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Wait for the job to end (sbatch --wait), then print the run's status.
    #[arg(long)]
    pub wait: bool,

    /// Let other jobs share the nodes (no --exclusive). Partitions on one
    /// node still take turns through the host lock.
    #[arg(long)]
    pub shared: bool,

    /// Keep the job script in this file (default: a temporary file).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,

    /// The sbatch program.
    #[arg(long, value_name = "PATH", default_value = "sbatch", hide = true)]
    pub sbatch: OsString,

    /// More sbatch arguments (after '--'), e.g. -- --partition=bench --time=2:00:00
    #[arg(last = true, value_name = "SBATCH-ARGS")]
    pub sbatch_args: Vec<OsString>,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["kubernetes", "github_actions", "gitlab"])))]
pub struct ManifestArgs {
    /// The suite file (as the job will see it: a path in the repository
    /// for CI; put into a ConfigMap for Kubernetes).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// A Kubernetes Indexed Job (with a ConfigMap holding the suite).
    #[arg(long)]
    pub kubernetes: bool,

    /// A GitHub Actions workflow with a matrix of partitions.
    #[arg(long)]
    pub github_actions: bool,

    /// A GitLab CI job with `parallel: N`.
    #[arg(long)]
    pub gitlab: bool,

    /// Number of partitions.
    #[arg(long, value_name = "N")]
    pub partitions: u32,

    /// Kubernetes: the Secret holding the store URL (never written inline).
    #[arg(long, value_name = "NAME", required_if_eq("kubernetes", "true"))]
    pub store_secret: Option<String>,

    /// Kubernetes: the key of the store URL in that Secret.
    #[arg(long, value_name = "KEY", default_value = "url")]
    pub store_secret_key: String,

    /// Kubernetes: the container image (with cmdscope and what the suite runs).
    #[arg(long, value_name = "IMAGE", default_value = "cmdscope:latest")]
    pub image: String,

    /// GitHub Actions: the runner labels (comma-separated).
    #[arg(long, value_name = "LABELS", default_value = "self-hosted,benchmark")]
    pub runs_on: String,

    /// The run id [default: the Kubernetes Job's name, GitHub's run id and
    /// attempt, GitLab's pipeline id].
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
}

/// The suite flags of `cmdscope run`.
#[derive(Args, Debug, Clone, Default)]
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
}
