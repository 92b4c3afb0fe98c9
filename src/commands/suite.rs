//! `cmdscope suite list|submit|manifest`: a suite's cells, and handing its
//! partitions to a scheduler.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use crate::cli::StoreArgs;
use crate::error::{exit, Error, Result};
use crate::store::record::Choice;
use crate::store::{Location, Store};
use crate::suite::cells::{self, Planned};
use crate::suite::partition::Partition;
use crate::suite::{file, manifest, submit};

const SUITE_EXAMPLES: &str = "\
Examples:
  cmdscope suite list bench.toml
  cmdscope suite list bench.toml --partition 2/8 --format json
  cmdscope suite submit bench.toml --slurm --partitions 8 --store postgres://bench@db/results --wait
  cmdscope suite manifest bench.toml --kubernetes --partitions 8 --store-secret cmdscope-store
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    Kubernetes,
    GithubActions,
    Gitlab,
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

/// One cell in `suite list --format json`.
#[derive(Serialize)]
struct ListedCell<'a> {
    id: &'a str,
    benchmark: &'a str,
    name: &'a str,
    parameters: serde_json::Map<String, serde_json::Value>,
    command: &'a str,
    argv: String,
    /// Runs and median wall time of its latest measurement in the store.
    estimated_seconds: Option<f64>,
}

pub fn run(args: &SuiteArgs) -> Result<i32> {
    match &args.command {
        SuiteCommand::List(a) => list(a),
        SuiteCommand::Submit(a) => submit::submit(a),
        SuiteCommand::Manifest(a) => {
            let suite = file::load(&a.file)?;
            Partition::new(1, a.partitions)?;
            crate::output::print(&manifest::render(a, &suite)?);
            Ok(exit::OK)
        }
    }
}

/// The store to estimate from: the one named, else the default one if it
/// exists (listing never creates a store).
fn estimate_store(args: &StoreArgs) -> Option<Store> {
    let location = match Choice::new(false, args.store.as_deref()) {
        Choice::Explicit(s) => Location::parse(&s),
        _ => match Location::default_location()? {
            Location::Sqlite(p) if p.exists() => Location::Sqlite(p),
            _ => return None,
        },
    };
    match Store::open(&location) {
        Ok(s) => Some(s),
        Err(e) => {
            crate::eprint_line!("cmdscope: warning: no time estimates: {e}");
            None
        }
    }
}

fn list(args: &ListArgs) -> Result<i32> {
    let suite = file::load(&args.file)?;
    let planned = cells::plan(&suite)?;
    let total = cells::count(&planned);
    let partition = args
        .partition
        .as_deref()
        .map(Partition::parse)
        .transpose()?;
    let shown: Vec<Planned> = match partition {
        Some(p) => cells::select(planned, p),
        None => planned,
    };
    let identities: Vec<String> = shown
        .iter()
        .flat_map(|p| p.cells.iter().map(|c| c.identity.clone()))
        .collect();
    let known: HashMap<String, (usize, f64)> = match estimate_store(&args.store) {
        Some(mut s) => s.latest_by_identity(&identities)?,
        None => HashMap::new(),
    };
    let estimate = |identity: &str| {
        known
            .get(identity)
            .map(|(runs, median)| *runs as f64 * median)
    };
    match args.format {
        ListFormat::Json => {
            let out: Vec<ListedCell> = shown
                .iter()
                .flat_map(|p| p.cells.iter())
                .map(|c| ListedCell {
                    id: &c.id,
                    benchmark: &c.benchmark,
                    name: &c.cell.name,
                    parameters: c
                        .cell
                        .parameters
                        .iter()
                        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                        .collect(),
                    command: &c.cell.command,
                    argv: c.argv_text(),
                    estimated_seconds: estimate(&c.identity),
                })
                .collect();
            crate::print_line!(
                "{}",
                serde_json::to_string_pretty(&out).map_err(|e| Error::Failed(e.to_string()))?
            );
        }
        ListFormat::Text => {
            let mut out = String::new();
            let mut sum = 0.0;
            let mut known_cells = 0;
            let mut count = 0;
            for p in &shown {
                let _ = writeln!(out, "{}  ({})", p.benchmark.name, p.benchmark.position);
                for c in &p.cells {
                    count += 1;
                    let e = estimate(&c.identity);
                    if let Some(e) = e {
                        sum += e;
                        known_cells += 1;
                    }
                    let _ = writeln!(
                        out,
                        "  {}  {}{}",
                        c.id,
                        c.identity,
                        e.map(|e| format!("  ~{}", crate::units::time(e)))
                            .unwrap_or_default()
                    );
                }
            }
            let _ = write!(
                out,
                "{count} cell{} in {} benchmark{}",
                if count == 1 { "" } else { "s" },
                shown.len(),
                if shown.len() == 1 { "" } else { "s" }
            );
            if let Some(p) = partition {
                let _ = write!(out, " (partition {p} of a suite of {total} cells)");
            }
            if known_cells > 0 {
                let _ = write!(
                    out,
                    "; measuring took {} for the {known_cells} cell{} the store knows",
                    crate::units::time(sum),
                    if known_cells == 1 { "" } else { "s" }
                );
            }
            out.push('\n');
            crate::output::print(&out);
        }
    }
    Ok(exit::OK)
}
