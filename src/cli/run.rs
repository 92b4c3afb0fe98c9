//! The arguments of `cmdscope run`: what to measure, how often, in which
//! order, and where the results go. Parsing only.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::suite::SuiteRunArgs;
use super::{CellArgs, Given, ParameterArgs, StoreArgs};
use crate::error::{OptionError, Result};
use crate::run::request;
use crate::run::schedule::Order;
use crate::runner::IgnoreFailure;

/// `--order`'s values, named and explained as the help shows them: `Order`
/// lives in a crate below this one, which alone depends on clap.
pub(crate) const ORDERS: [(Order, &str, &str); 2] = [
    (
        Order::Interleaved,
        "interleaved",
        "Blocks of one run per cell, shuffled within each block",
    ),
    (
        Order::Sequential,
        "sequential",
        "All runs of the first cell, then all of the second (hyperfine's way)",
    ),
];

/// The `Order` named `text` (as `--order` and a suite's `order` spell it).
pub(crate) fn order_named(text: &str) -> Option<Order> {
    ORDERS
        .iter()
        .find(|(_, name, _)| *name == text)
        .map(|(o, ..)| *o)
}

fn order_parser() -> impl clap::builder::TypedValueParser<Value = Order> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = ORDERS.map(|(_, name, help)| PossibleValue::new(name).help(help));
    // The parser admits only the names listed, so each maps to an order.
    PossibleValuesParser::new(values).map(|s: String| order_named(&s).unwrap_or(Order::Interleaved))
}

pub const RUN_EXAMPLES: &str = "\
Examples:
  cmdscope run 'sleep 0.1'
  cmdscope run -w 3 'grep -r TODO src' 'rg TODO src'
  cmdscope run --runs 50 --export-json out.json 'ls -la /usr/bin'
  cmdscope run 'echo hi | wc -c'   # through sh, its start-up subtracted
  cmdscope run -S bash 'echo $BASH_VERSION'   # all through bash (-N: no shell)
  cmdscope run --timeout 2 -i 'make -j2'
  cmdscope run -L vars 0,5000 --env-size {vars} ./container-init
  cmdscope run -L w tmpfs,/var/tmp --workdir {w} --workdir-template src \\
      'make -j2'
  cmdscope run -L u root,nobody --user {u} --ops 10000 'ruby spawn.rb'
  cmdscope run -P threads 1 8 'make -j{threads}'
  cmdscope run --concurrency 5 --workdir tmpfs --workdir-template src \\
      'make -j2'   # five builds at once, each in a fresh copy of src
  cmdscope run -P j 1 8 --concurrency {j} './request.sh'   # throughput curve
  cmdscope run -L sort quick,merge './bench --sort {sort}'
  cmdscope run -P batch 1 8192 --parameter-factor 2 --plot sweep.svg \\
      'find . -type f -print0 | xargs -0 -n {batch} sha256sum'
  cmdscope run -P batch 1 8192 --parameter-factor 2 --minimize batch \\
      'xargs -a files -n {batch} sha256sum'
  cmdscope run -P b 1 64 --parameter-factor 2 -P j 1 4 --minimize b,j \\
      './build -b {b} -j {j}'
  cmdscope run --monitor 'busctl --system monitor org.freedesktop.hostname1' \\
      --match Introspect=member=Introspect hostnamectl   # monitor_Introspect
  cmdscope run -P cache 1 64 --minimize cache --metric monitor_Introspect \\
      --monitor 'busctl --system monitor' \\
      --match Introspect=member=Introspect './client --cache {cache}'
  cmdscope run -P j 1 16 --concurrency {j} --maximize j --metric throughput \\
      './request.sh'
  cmdscope run --simulate --runs 2 'gzip -1 -c /etc/passwd' \\
      'gzip -9 -c /etc/passwd'   # cachegrind's counts: sim_estimated_cycles
  cmdscope run --counted --runs 6 'gzip -1 -c /etc/passwd' \\
      'gzip -9 -c /etc/passwd'   # exact hardware counters, or cachegrind
";

/// The `--export-*` files, one flag per format: `run`'s exports, and
/// `report`'s of a stored session (the same writers).
#[derive(Args, Clone, Debug, Default, PartialEq)]
pub struct ExportFiles {
    /// Export results as JSON (hyperfine-compatible superset); '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Export a CSV summary; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Export a Markdown table; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Export an AsciiDoc table; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_asciidoc: Option<PathBuf>,

    /// Export an Org-mode table; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_orgmode: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Style {
    /// Colours and progress bar on a terminal, plain otherwise.
    Auto,
    /// No colours, no progress bar.
    Basic,
    /// Colours and progress bar.
    Full,
    /// Progress bar without colours.
    Nocolor,
    /// Colours without progress bar.
    Color,
    /// Nothing but errors (and exports to stdout).
    None,
}

/// A count of runs: a whole number, at least 1 (clap's own range check
/// would print the type's bound, 18446744073709551615).
fn at_least_one(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number".into()),
    }
}

/// `--sort` (hyperfine's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortOrder {
    /// Tables in the commands' order.
    Auto,
    /// Tables in the commands' order.
    Command,
    /// Tables sorted by mean time, fastest first.
    MeanTime,
}

/// `-u/--time-unit` (hyperfine's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TimeUnit {
    Microsecond,
    Millisecond,
    Second,
}

/// `cmdscope hyperfine`'s arguments: `run`'s, and hyperfine's hidden
/// `--debug-mode`, a testing aid that `run` does not take. `-N` is named
/// `-N` in errors, as hyperfine names it (its `--no-shell` still works).
#[derive(Args, Clone, Debug)]
#[command(mut_arg("no_shell", |a| a.long(None).visible_alias("no-shell")))]
pub struct HyperfineArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// hyperfine's testing aid: nothing is run; every command, hook and
    /// --shell must be `sleep X`, which takes X seconds of wall time, no CPU
    /// time and exits 0 (a shell's X is its start-up). Not with -N, as in
    /// hyperfine.
    #[arg(long, hide = true, conflicts_with = "no_shell")]
    pub debug_mode: bool,
    /// Adds to each benchmark's block what `cmdscope run` shows beyond
    /// hyperfine's times: the median and its interval, peak memory, storage
    /// I/O, page faults and context switches, counters, and the warnings
    /// hyperfine has no words for (the JSON export has them regardless).
    #[arg(long)]
    pub cmdscope_details: bool,
    /// hyperfine's hidden `--min-benchmarking-time`: the seconds of runs
    /// its run count aims for (`--min-time`), as text, read as hyperfine
    /// reads it (`cli::hyperfine::check`).
    #[arg(long, hide = true, value_name = "SECONDS")]
    pub min_benchmarking_time: Option<String>,
}

#[derive(Args, Clone, Debug)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// The commands to benchmark. Each is split into words like a shell
    /// would (quotes, backslashes) and executed directly, without a shell,
    /// unless it is written in shell syntax (see --shell).
    #[arg(required_unless_present = "suite", value_name = "COMMAND")]
    pub commands: Vec<OsString>,

    #[command(flatten)]
    pub suite: SuiteRunArgs,

    /// What one benchmark measures and how: what a suite's file sets for
    /// each of its benchmarks, refused on the command line with --suite.
    #[command(flatten)]
    pub measure: Given<MeasureArgs>,

    /// Keep measuring until every comparison is decided (different, or
    /// equal within --precision) or --max-time ends the session, with
    /// sequential looks that keep the false-positive rate at --alpha.
    #[arg(long, conflicts_with_all = ["runs", "max_runs", "minimize", "maximize"])]
    pub until_decided: bool,

    /// Wall-clock seconds --until-decided measures for at most [default: 60].
    #[arg(long, value_name = "SECONDS", requires = "until_decided")]
    pub max_time: Option<f64>,

    /// Run the measured commands on CPUs that cmdscope and its helpers
    /// (spawner, store writer) do not use: cmdscope keeps the first CPU it
    /// may use, the commands get the others. Needs at least two CPUs.
    #[arg(long, conflicts_with = "cpus")]
    pub isolate: bool,

    /// How the results are shown and which files they are written to.
    #[command(flatten)]
    pub report: ReportArgs,

    /// Label the session in the results store, e.g. commit=abc123 (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Do not record this session in the results store (also when
    /// CMDSCOPE_NO_STORE=1; wins over --store).
    #[arg(long, env = "CMDSCOPE_NO_STORE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_store: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    /// A command run (through sh -c) for the whole session whose output
    /// lines are matched against each --match: the lines matching during a
    /// run (plus --monitor-settle) are that run's metric monitor_NAME.
    #[arg(long, value_name = "COMMAND")]
    pub monitor: Option<String>,

    /// NAME=REGEX counted in the monitor's lines per run, as monitor_NAME (repeatable).
    #[arg(long = "match", value_name = "NAME=REGEX", requires = "monitor")]
    pub matches: Vec<String>,

    /// Seconds the monitor's lines still count after each run ends (lines
    /// the run caused may be on their way); waited between runs, not timed.
    #[arg(
        long,
        default_value_t = 0.1,
        value_name = "SECONDS",
        requires = "monitor"
    )]
    pub monitor_settle: f64,
}

/// `run`'s flags of what one benchmark measures and how: the settings a
/// suite's file gives each of its benchmarks (`suite::file`), so that a
/// suite refuses the whole group on its command line.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct MeasureArgs {
    /// Runs of each command before measuring (caches, JITs, disk).
    #[arg(short = 'w', long, default_value_t = 0, value_name = "NUM")]
    pub warmup: usize,

    /// Exact number of measured runs per command.
    #[arg(short = 'r', long, value_name = "NUM", conflicts_with_all = ["min_runs", "max_runs"],
          value_parser = at_least_one)]
    pub runs: Option<u64>,

    /// Minimum measured runs per command, whatever stops the session
    /// (--precision, --max-time, the time budget); not with
    /// --minimize/--maximize, whose search decides each value's runs
    /// [default: 10].
    #[arg(short = 'm', long, value_name = "NUM", value_parser = at_least_one)]
    pub min_runs: Option<u64>,

    /// Maximum measured runs per command (in concurrency mode, completions;
    /// not with --minimize/--maximize) [default: unlimited].
    #[arg(short = 'M', long, value_name = "NUM", value_parser = at_least_one)]
    pub max_runs: Option<u64>,

    /// Seconds of measured runs to aim for per command, when --runs is not given.
    #[arg(long, default_value_t = request::DEFAULT_MIN_TIME, value_name = "SECONDS")]
    pub min_time: f64,

    /// Shell command run before each run (not timed). Once for all, or once per command.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Vec<String>,

    /// Shell command run after each run (not timed). Once for all, or once per command.
    #[arg(short = 'C', long, value_name = "CMD")]
    pub conclude: Vec<String>,

    /// Shell command run once before the runs of each command (setup a,
    /// runs of a, cleanup a, setup b, ...). With interleaved order and the
    /// same setup for all commands: once before all runs.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,

    /// Shell command run once after the runs of each command (after all
    /// runs with interleaved order and the same cleanup for all).
    #[arg(short = 'c', long, value_name = "CMD")]
    pub cleanup: Option<String>,

    /// Keep going when a command exits non-zero: all non-zero codes (no
    /// value, 'all' or 'all-non-zero'), or only these (--ignore-failure=1,2).
    #[arg(short = 'i', long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "all")]
    pub ignore_failure: Option<String>,

    /// Where the commands' stdout and stderr go: null (default), pipe (read
    /// and discarded by cmdscope, like a consumer would), inherit, or a FILE
    /// (emptied before each run). Once for all commands or once per command.
    #[arg(long, value_name = "WHERE")]
    pub output: Vec<String>,

    /// Where the commands' stdin comes from: null (default) or a FILE, read
    /// from its start by every run, warm-up and hook.
    #[arg(long, value_name = "WHERE", default_value = request::DEFAULT_INPUT)]
    pub input: String,

    /// Show the commands' output (same as --output=inherit).
    #[arg(long)]
    pub show_output: bool,

    /// The options that define what a cell runs (shared with `explain`).
    #[command(flatten)]
    pub cell: CellArgs,

    /// One run performs N operations: also report the time per operation.
    #[arg(long, value_name = "N")]
    pub ops: Option<String>,

    /// Run N instances at once, closed loop (when one ends the next
    /// starts); --runs counts completions of all instances together. Each
    /// instance is measured as a single run is; the cell also reports its
    /// throughput (completions per second while all N were busy), CPU use,
    /// I/O rates and the host's pressure. N may be a parameter
    /// (-P j 1 8 --concurrency {j}): the throughput curve then gets a
    /// Universal Scalability Law fit. 1 to 4096.
    #[arg(long, value_name = "N")]
    pub concurrency: Option<String>,

    /// Kill a run (its whole process tree) after this many seconds and record it as timed out.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,

    /// Stop the benchmark at the first run that times out.
    #[arg(long)]
    pub stop_on_timeout: bool,

    /// Collect perf counters (task clock, migrations; cycles, instructions,
    /// cache and branch misses where the kernel allows). Spawns with fork
    /// instead of vfork so counters are attached before exec.
    #[arg(long)]
    pub counters: bool,

    /// Run every command under Valgrind's cachegrind (the whole process
    /// tree) and record its simulated counts per run: sim_instructions,
    /// sim_d1_misses, sim_ll_misses, sim_branch_mispredicts and
    /// sim_estimated_cycles (L1 hits + 5 x LL hits + 35 x memory accesses).
    /// Exact counts that the machine's load cannot move, at 20-100x the
    /// run's time; user-space work only (no kernel work, waits or sleeps).
    /// Needs --runs (at least 2); wall times are the simulator's. In a
    /// suite file: simulate = true (and I1, D1, LL). The same as
    /// --counted=simulator.
    #[arg(long, group = "counting")]
    pub simulate: bool,

    /// Counted (deterministic) measurement, by the CPU's hardware counters
    /// or by the simulator of --simulate. auto (the default): hardware
    /// counters where the kernel gives a user-space instruction counter
    /// whose counts of a fixed loop repeat within 0.01 %, the simulator
    /// otherwise; hardware: the counters or exit 2; simulator: as
    /// --simulate. Hardware counts are stored as instructions, cpu_cycles,
    /// branch_misses, ... (user space only; they vary a little, so compare
    /// them with 6 runs or more), simulated ones as sim_*. One line before
    /// the session says which was used and why, and so do the JSON's
    /// counted_by and counted. Needs --runs (at least 2). In a suite file:
    /// counted = "auto".
    #[arg(long, group = "counting", value_name = "BY", num_args = 0..=1,
          require_equals = true, default_missing_value = "auto",
          value_parser = ["auto", "hardware", "simulator"],
          conflicts_with = "counters")]
    pub counted: Option<String>,

    /// The simulated caches of --simulate and --counted.
    #[command(flatten)]
    pub caches: CacheArgs,

    /// Run order with several commands: interleaved blocks, or sequential
    /// (hyperfine's). Default: interleaved, or sequential when the commands
    /// have different --setup/--cleanup (only sequential runs can be bracketed by them).
    #[arg(long, value_parser = order_parser())]
    pub order: Option<Order>,

    /// Seed for the interleaving shuffle (recorded in the JSON) [default: random].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Stop early once every median is known within PCT percent (one command)
    /// or every comparison is settled (different, or equal within PCT).
    /// Default 1 when no --runs is given; the time budget still caps the session.
    #[arg(long, value_name = "PCT")]
    pub precision: Option<f64>,

    /// A command benchmarked first, its own benchmark even when it is also
    /// one of the commands, and compared with every other (as hyperfine).
    /// It counts as the first command for per-command --prepare, --conclude
    /// and --output [default reference: the first command].
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,

    /// Name of the --reference command; without --reference, the name (or
    /// command line) of the command the others are compared with.
    #[arg(long, value_name = "NAME")]
    pub reference_name: Option<String>,

    /// Significance level of comparisons (false-positive rate, kept under adaptive stopping).
    #[arg(long, default_value_t = request::DEFAULT_ALPHA, value_name = "ALPHA")]
    pub alpha: f64,

    #[command(flatten)]
    pub params: ParameterArgs,

    /// Search for the value with the lowest METRIC instead of running the
    /// whole grid; answers with the best value and the values as good.
    /// Several parameters (-P and -L lists): --minimize a,b.
    #[arg(
        long,
        value_name = "VAR",
        conflicts_with = "maximize",
        requires = "parameter_scan"
    )]
    pub minimize: Option<String>,

    /// Like --minimize, for the highest value; for a time metric it needs
    /// --ops and maximises operations per second. --metric throughput is
    /// only maximised.
    #[arg(long, value_name = "VAR", requires = "parameter_scan")]
    pub maximize: Option<String>,

    /// What sweeps and searches compare [default: time_wall_clock]: a
    /// per-run metric (time_cpu, memory_peak_resident, ...), a monitor's
    /// count monitor_NAME (with --monitor and --match NAME=REGEX), or
    /// throughput (with --concurrency: completions per second, one value
    /// per batch; higher is better).
    #[arg(long, value_name = "NAME", default_value = request::DEFAULT_METRIC)]
    pub metric: String,

    /// Leave wall-time outliers (robust z-score > 3.5) out of the statistics.
    /// By default they are only flagged: the median is robust to them.
    #[arg(long)]
    pub remove_outliers: bool,
}

/// `run`'s flags of how the results are shown (the terminal's style and
/// unit) and written (the exports, the chart).
#[derive(Args, Clone, Debug, PartialEq)]
pub struct ReportArgs {
    /// Write the sweep curve as an SVG chart (median with its 95 % band).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    #[command(flatten)]
    pub exports: ExportFiles,

    /// Order of the markup tables (Markdown, AsciiDoc, Org-mode): 'auto' and
    /// 'command' keep the commands' order, 'mean-time' sorts by mean time.
    #[arg(long, value_enum, default_value_t = SortOrder::Auto, value_name = "METHOD")]
    pub sort: SortOrder,

    /// Not a flag: set by `cmdscope hyperfine`, whose terminal report is in
    /// hyperfine's words (`--sort` then also orders its summary, as
    /// hyperfine's: 'command' prints its relative-speed table).
    #[arg(skip)]
    pub hyperfine_words: bool,

    /// Not a flag: `cmdscope hyperfine --cmdscope-details`, which adds to
    /// hyperfine's block what `cmdscope run` shows beyond times.
    #[arg(skip)]
    pub hyperfine_details: bool,

    /// Time unit of the terminal output and markup tables (not of CSV and
    /// JSON, which are in seconds) [default: chosen per value].
    #[arg(short = 'u', long, value_enum, value_name = "UNIT")]
    pub time_unit: Option<TimeUnit>,

    /// Output style.
    #[arg(long, value_enum, default_value_t = Style::Auto)]
    pub style: Style,
}

// The grammar of -i/--ignore-failure lives here, next to the flag; the
// runner only applies the policy. (An inherent impl may sit in any module
// of the crate: callers keep writing `IgnoreFailure::parse`.)
impl IgnoreFailure {
    /// The value of `-i/--ignore-failure` (None: the flag was not given).
    pub fn parse(arg: Option<&str>) -> Result<IgnoreFailure> {
        match arg {
            None => Ok(IgnoreFailure::None),
            // hyperfine 1.20 spells "all" 'all-non-zero'.
            Some("all" | "all-non-zero") => Ok(IgnoreFailure::All),
            Some(list) => list
                .split(',')
                .map(|c| {
                    c.trim()
                        .parse::<i32>()
                        .map_err(|_| OptionError::IgnoreFailureCode(c.to_string()).into())
                })
                .collect::<Result<Vec<_>>>()
                .map(IgnoreFailure::Codes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ignore_failure() {
        assert_eq!(IgnoreFailure::parse(None).unwrap(), IgnoreFailure::None);
        assert_eq!(
            IgnoreFailure::parse(Some("all")).unwrap(),
            IgnoreFailure::All
        );
        assert_eq!(
            IgnoreFailure::parse(Some("1, 3")).unwrap(),
            IgnoreFailure::Codes(vec![1, 3])
        );
        assert!(IgnoreFailure::parse(Some("x")).is_err());
    }
}

/// The simulated cache geometry of `--simulate`, the same for `run` and
/// `explain --profile`: pinned, never the host's, so that two machines'
/// counts compare.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct CacheArgs {
    /// The simulator's first-level instruction cache: SIZE,ASSOC,LINE in bytes.
    #[arg(long = "I1", value_name = "SIZE,ASSOC,LINE", requires = "counting",
          default_value = crate::exec::simulate::DEFAULT_I1)]
    pub i1: String,

    /// The simulator's first-level data cache: SIZE,ASSOC,LINE in bytes.
    #[arg(long = "D1", value_name = "SIZE,ASSOC,LINE", requires = "counting",
          default_value = crate::exec::simulate::DEFAULT_D1)]
    pub d1: String,

    /// The simulator's last-level cache: SIZE,ASSOC,LINE in bytes.
    #[arg(long = "LL", value_name = "SIZE,ASSOC,LINE", requires = "counting",
          default_value = crate::exec::simulate::DEFAULT_LL)]
    pub ll: String,
}

impl CacheArgs {
    /// `--I1`, `--D1`, `--LL` as given (checked by `Simulation::find`).
    pub fn geometry(&self) -> (String, String, String) {
        (self.i1.clone(), self.d1.clone(), self.ll.clone())
    }
}
