//! The arguments of the subcommands that read or fill the results store:
//! `history`, `check`, `changes`, `report`, `import`, `status`. Parsing only.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{GateArgs, SessionFilterArgs, StoreArgs};
use crate::analysis::changes::Params;

pub const HISTORY_EXAMPLES: &str = "\
Examples:
  cmdscope history
  cmdscope history grep   # benchmarks whose command or name contains 'grep'
  cmdscope history --label branch=main --machine myhost
";

pub const CHECK_EXAMPLES: &str = "\
Examples:
  cmdscope run --label branch=main 'make test'      # on main: the baseline
  cmdscope run --label branch=feature 'make test'   # on the branch
  cmdscope check --baseline branch=main --fail-if-slower 5 \\
      >> \"$GITHUB_STEP_SUMMARY\"
  cmdscope check --against history --fail-if-slower 5   # vs the history before
  cmdscope check --baseline branch=main --metric sim_estimated_cycles \\
      --fail-if-slower 1   # sessions of run --simulate
  cmdscope check --baseline branch=main --allow-missing 'make docs'
  cmdscope check --baseline branch=main --allow-missing all \\
      --inconclusive fail

A benchmark of the baseline the results checked lack, or hold without the
runs a comparison needs (they timed out or failed, the session was
interrupted, a suite partition is missing), fails the gate with a line
saying why, unless --allow-missing names it (repeat it for several) or
says all; the header counts it. An inconclusive comparison (runs enough,
an interval too wide to tell) passes and is counted, unless --inconclusive
fail.

Exit status: 0 no significant regression beyond PCT and every benchmark
compared (or allowed); 1 a regression, a benchmark not compared, or a gate
that compared nothing; 2 no results, no baseline on this machine, invalid
settings stored with a session, or a store error.
";

pub const CHANGES_EXAMPLES: &str = "\
Examples:
  cmdscope changes                      # every benchmark, by session time
  cmdscope changes 'make test' --order-by commit --format markdown
  cmdscope changes --fail-on-new-regression --threshold 5   # CI gate
  cmdscope changes --fail-on-new-regression --allow-missing flaky-test
  cmdscope changes --run 42              # what session #42 changed
  cmdscope changes --run $SLURM_JOB_ID   # the same for a suite run's sessions
  cmdscope changes --since 2026-11-01    # change points from that day on
  cmdscope changes --since 42 --format json   # at or after session #42

--run ID is a suite run's id (its partitions' sessions) or a session's id;
--since takes a session's id or a date (2026-11-01, 2026-11-01T12:00:00Z,
'2026-11-01 12:00:00', UTC). Either only selects: the change points are
found on whole histories, so they are the same with them as without.

Exit status: 0 done; 1 with --fail-on-new-regression, a benchmark's newest
session is significantly slower than the segment before it by more than PCT,
or holds too few runs to tell (they timed out or failed; --allow-missing
NAME|all lets it through); 2 no history, or a store or usage error.
";

pub const REPORT_EXAMPLES: &str = "\
Examples:
  cmdscope report                  # latest session -> cmdscope-report.html
  cmdscope report --html out.html --session 42
  cmdscope report --label branch=main
  cmdscope report --session 42 --terminal        # as `run` printed it
  cmdscope report --session 42 --export-json s.json --export-csv s.csv
";

pub const IMPORT_EXAMPLES: &str = "\
Examples:
  cmdscope import hyperfine.json
  cmdscope import --label commit=abc123 bench.txt     # go test -bench output
";

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Only benchmarks whose name or command line contains this text.
    #[arg(value_name = "FILTER")]
    pub filter: Option<String>,

    #[command(flatten)]
    pub sessions: SessionFilterArgs,

    /// At most this many sessions.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub limit: usize,

    /// Show each benchmark's median of this metric [default: wall time]:
    /// a run metric (time_cpu, memory_peak_resident, ...) or, for
    /// benchmarks run with --concurrency, throughput, latency_p50,
    /// latency_p90 or latency_p99.
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    #[command(flatten)]
    pub store: StoreArgs,
}

/// What `check --against` compares with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Against {
    /// The stable segment of the history before the results checked.
    History,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// A Markdown table (for a CI job summary).
    Markdown,
    /// Plain text.
    Text,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The baseline: the latest session with this label on the same machine
    /// fingerprint as the results checked.
    #[arg(
        long,
        value_name = "KEY=VALUE",
        required_unless_present = "against",
        conflicts_with = "against"
    )]
    pub baseline: Option<String>,

    /// `history`: compare with the stable segment of this machine's history
    /// before the results checked (since its last change point), not with
    /// one baseline session.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub against: Option<Against>,

    /// Exit 1 when a benchmark is significantly slower by more than PCT percent (the lower end of its ratio interval above 1 + PCT/100).
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub fail_if_slower: f64,

    /// The metric compared [default: wall time, or sec/op for imported Go
    /// benchmarks]: a run metric (time_cpu, memory_peak_resident, ...,
    /// sim_estimated_cycles of `run --simulate`, whose identical counts
    /// decide from 2 runs a side); with --against history also, for
    /// benchmarks run with --concurrency, throughput, latency_p50,
    /// latency_p90 or latency_p99 (a --baseline check compares a
    /// concurrency benchmark's throughput beside its wall time).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    /// The results checked: this session [default: the latest session on this machine].
    #[arg(long, value_name = "ID")]
    pub session: Option<i64>,

    /// The results checked: the partitions of this suite run, merged; the
    /// baseline is then the latest other run with the baseline label.
    #[arg(long, value_name = "ID", conflicts_with = "session")]
    pub run: Option<String>,

    /// Significance level [default: the one the checked results were
    /// measured with, as stored with them; 0.05 for imported results].
    #[arg(long, value_name = "ALPHA")]
    pub alpha: Option<f64>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Markdown)]
    pub format: CheckFormat,

    #[command(flatten)]
    pub gate: GateArgs,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ChangesFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Args, Debug)]
pub struct ChangesArgs {
    /// Only benchmarks whose name or command line contains this text.
    #[arg(value_name = "BENCHMARK")]
    pub benchmark: Option<String>,

    #[command(flatten)]
    pub sessions: SessionFilterArgs,

    /// The metric [default: wall time, or sec/op for imported Go
    /// benchmarks]: a run metric (time_cpu, memory_peak_resident,
    /// instructions, ...) or, for benchmarks run with --concurrency,
    /// throughput, latency_p50, latency_p90 or latency_p99.
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    /// Order the history by this label instead of session time: one point
    /// per label value (its sessions pooled), in the order the values first
    /// appear, or numerically when every value is a number.
    #[arg(long, value_name = "LABEL")]
    pub order_by: Option<String>,

    /// Only change points at or after this session (an id) or moment (a
    /// date, UTC): the histories are still analysed whole.
    #[arg(long, value_name = "ID|DATE", conflicts_with = "run")]
    pub since: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ChangesFormat::Text)]
    pub format: ChangesFormat,

    /// Exit 1 when the newest session of a benchmark is significantly slower
    /// than the stable segment before it by more than --threshold, or a
    /// drift still going on at the newest session is.
    #[arg(long)]
    pub fail_on_new_regression: bool,

    /// Percentage for --fail-on-new-regression: the lower end of the
    /// slowdown's interval must exceed it.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub threshold: f64,

    /// Significance level of each change's confirming comparison.
    #[arg(long, value_name = "ALPHA", default_value_t = Params::default().alpha)]
    pub alpha: f64,

    /// Smallest change reported, in percent: steps and drifts smaller than
    /// this are left out even when significant [default: the metric's own
    /// floor: 2 for times and throughput, 1 for peak memory and minor page
    /// faults, 0.1 for instructions, 3 and 5 for latency_p90 and
    /// latency_p99, 5 for scheduler counts].
    #[arg(long, value_name = "PCT")]
    pub min_change: Option<f64>,

    #[command(flatten)]
    pub gate: GateArgs,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The HTML file to write ('-' for stdout) [default:
    /// cmdscope-report.html, unless --terminal or an --export-* is given].
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Print the session's terminal report on standard output, as `run`
    /// printed it (through the same analysis); with --run, each of the
    /// run's sessions in turn.
    #[arg(long)]
    pub terminal: bool,

    /// Style of --terminal: 'auto' colours on a terminal, 'basic' and
    /// 'nocolor' never, 'full' and 'color' always ('none' prints nothing).
    #[arg(long, value_enum, default_value_t = crate::cli::run::Style::Auto)]
    pub style: crate::cli::run::Style,

    #[command(flatten)]
    pub exports: crate::cli::run::ExportFiles,

    /// Report this session [default: the latest matching one].
    #[arg(long, value_name = "ID")]
    pub session: Option<i64>,

    /// Only sessions whose benchmarks' name or command contains this text.
    #[arg(long, value_name = "TEXT")]
    pub command: Option<String>,

    #[command(flatten)]
    pub sessions: SessionFilterArgs,

    /// Sessions shown in the history charts.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub history: usize,

    /// Write a static site of every benchmark's history into DIR instead
    /// (index.html and one page per benchmark, change points marked).
    #[arg(long, value_name = "DIR")]
    pub site: Option<PathBuf>,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Files to import, one session each: hyperfine or cmdscope JSON, or
    /// `go test -bench` output (detected by content).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Label the imported sessions (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 every partition reported; 1 some are missing; 2 no such run."
)]
pub struct StatusArgs {
    /// The run id (printed by `suite submit`, or given to `run --suite --run-id`).
    #[arg(long, value_name = "ID")]
    pub run: String,

    /// Output format.
    #[arg(long, value_enum, default_value_t = StatusFormat::Text)]
    pub format: StatusFormat,

    #[command(flatten)]
    pub store: StoreArgs,
}
