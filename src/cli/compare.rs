//! The arguments of `cmdscope compare`. Parsing only.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Output format of `compare` (`--format`): these names are the only ones
/// accepted. (Plain comments on the variants: doc comments would add
/// descriptions to the help's list of values.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    // Aligned columns for a terminal.
    Text,
    // One GitHub table per metric.
    Markdown,
    // One row per benchmark × metric × column, raw numbers.
    Csv,
    // A list of comparison objects (summaries when only one dataset is given).
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result files: the first is the baseline. cmdscope JSON, hyperfine JSON
    /// (schema 1 or 2) or `go test -bench` output, detected by content.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,

    /// Exit 1 when a gated time metric is significantly slower by more than PCT percent (the lower end of its ratio interval above 1 + PCT/100), or a benchmark of the baseline was not compared (see --allow-missing); exit 2 when a candidate had no wall time to compare with the baseline.
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,

    /// The metric the gate judges, by its name in the files [default: wall
    /// time, or sec/op for Go benchmarks], e.g. sim_estimated_cycles of
    /// `run --simulate` exports, whose identical counts decide from 2 runs
    /// a side.
    #[arg(long, value_name = "NAME", requires = "fail_if_slower")]
    pub metric: Option<String>,

    /// Significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,

    #[command(flatten)]
    pub gate: super::GateArgs,
}
