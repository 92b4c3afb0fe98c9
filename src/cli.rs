//! Command-line interface: every flag is documented here, where it is defined.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::Error;
use crate::run::schedule::Order;

const RUN_EXAMPLES: &str = "\
Examples:
  cmdscope run 'sleep 0.1'
  cmdscope run -w 3 'grep -r TODO src' 'rg TODO src'
  cmdscope run --runs 50 --export-json out.json 'ls -la /usr/bin'
  cmdscope run 'echo hi | wc -c'                 # shell syntax: through sh, start-up subtracted
  cmdscope run -S bash 'echo $BASH_VERSION'      # every command through bash (-N: no shell)
  cmdscope run --timeout 2 -i 'make -j2'
  cmdscope run -L vars 0,5000 --env-size {vars} ./container-init   # huge environments
  cmdscope run -L w tmpfs,/var/tmp --workdir {w} --workdir-template src 'make -j2'
  cmdscope run -L u root,nobody --user {u} --ops 10000 'ruby spawn.rb'
  cmdscope run -P threads 1 8 'make -j{threads}'
  cmdscope run -L sort quick,merge './bench --sort {sort}'
  cmdscope run -P batch 1 8192 --parameter-factor 2 --plot sweep.svg 'ls | xargs -n {batch} sha256sum'
  cmdscope run -P batch 1 8192 --parameter-factor 2 --minimize batch 'xargs -a files -n {batch} sha256sum'
  cmdscope run -P b 1 64 --parameter-factor 2 -P j 1 4 --minimize b,j './build -b {b} -j {j}'
  cmdscope run --monitor 'busctl --system monitor org.freedesktop.hostname1' \
      --match Introspect=member=Introspect hostnamectl   # messages per run: monitor_Introspect
";

/// cmdscope: a performance lab for commands.
///
/// Runs commands as whole processes and measures every run with the kernel's
/// own accounting: wall, user and system time, peak memory, page faults,
/// context switches, storage I/O and (with --counters) perf counters.
///
/// Exit status: 0 success; 1 a benchmarked command failed or a gate found a
/// regression; 2 bad usage or input; 130 interrupted (finished runs exported).
#[derive(Parser, Debug)]
#[command(name = "cmdscope", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parse as `try_parse_from` does, and record where each scan option
    /// stood: clap's derive keeps values but not their order, and the order
    /// says which -P a -D or --parameter-factor belongs to.
    pub fn parse_ordered<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let mut command = Cli::command();
        let matches = command.try_get_matches_from_mut(args)?;
        let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
        let order = |sub: &clap::ArgMatches| {
            let at = |id: &str| -> Vec<usize> {
                sub.indices_of(id).map(|i| i.collect()).unwrap_or_default()
            };
            crate::run::plan::ScanOrder {
                // Three values per -P: its position is its first value's.
                scans: at("parameter_scan").into_iter().step_by(3).collect(),
                steps: at("parameter_step_size"),
                factors: at("parameter_factor"),
            }
        };
        match (&mut cli.command, matches.subcommand()) {
            (Command::Run(run), Some(("run", sub))) => run.params.scan_order = order(sub),
            (Command::Explain(e), Some(("explain", sub))) => e.cells.params.scan_order = order(sub),
            _ => {}
        }
        Ok(cli)
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Benchmark one or more commands.
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// Compare saved results (cmdscope or hyperfine JSON, Go benchmark text) in a benchstat-style table.
    #[command(
        after_help = "Examples:\n  cmdscope compare before.json after.json\n  cmdscope compare --format markdown old.txt new.txt\n  cmdscope compare --fail-if-slower 5 main.json branch.json   # CI gate: exit 1 on a significant >5% slowdown\n"
    )]
    Compare(CompareArgs),
    /// Trace one run (ptrace) and explain where the time went: the process
    /// tree, how each process was created (fork, vfork, thread), execs,
    /// intermediate shells, syscalls, I/O, and hints backed by the numbers;
    /// several cells (commands, -L/-P, variants) side by side with their differences.
    #[command(after_help = EXPLAIN_EXAMPLES)]
    Explain(Box<ExplainArgs>),
    /// List the sessions and benchmarks in the results store, newest first.
    #[command(after_help = HISTORY_EXAMPLES)]
    History(HistoryArgs),
    /// CI gate: compare the latest results with a stored baseline on this machine.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Change points in every stored benchmark's history: which session made it slower or faster.
    #[command(after_help = CHANGES_EXAMPLES)]
    Changes(crate::commands::changes::ChangesArgs),
    /// Write a self-contained HTML report (SVG charts, no scripts) from the store.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Store results files (hyperfine JSON, cmdscope JSON, Go benchmark text) as sessions.
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(ImportArgs),
    /// Suites: list a suite's cells, submit its partitions to Slurm, or
    /// print a Kubernetes Job or CI snippet that runs them.
    Suite(crate::commands::suite::SuiteArgs),
    /// Which partitions of a suite run reported, and which are missing.
    Status(crate::commands::status::StatusArgs),
    /// Check whether this machine is fit to measure on (the checks every
    /// session records): governor, turbo, load, busy processes, stolen
    /// time, swapping, SMT siblings, throttling, battery. Exits 1 when any
    /// check warns.
    #[command(after_help = DOCTOR_EXAMPLES)]
    Doctor(DoctorArgs),
    /// Internal: the helper process that writes to the store during `run`.
    #[command(name = "__store-writer", hide = true)]
    StoreWriter,
}

const DOCTOR_EXAMPLES: &str = "\
Examples:
  cmdscope doctor                    # ok / WARN / unknown for each check
  cmdscope doctor --cpus 2,3         # the checks for the CPUs you will pin to
  cmdscope doctor --json | jq .status
  sudo cmdscope doctor --fix         # performance governor, turbo off; prints how to undo
";

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Print the checks as JSON: {status, checks: [{name, status, detail}], changes, failures}.
    #[arg(long)]
    pub json: bool,

    /// Set the performance governor and turn turbo off where the kernel
    /// allows (needs root; lasts until reboot; prints how to undo).
    #[arg(long)]
    pub fix: bool,

    /// Check these CPUs (as for `run --cpus`), e.g. 2,3 [default: all this process may use].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
}

const HISTORY_EXAMPLES: &str = "\
Examples:
  cmdscope history
  cmdscope history grep                     # benchmarks whose command or name contains 'grep'
  cmdscope history --label branch=main --machine myhost
";

const CHECK_EXAMPLES: &str = "\
Examples:
  cmdscope run --label branch=main 'make test'            # on main: record the baseline
  cmdscope run --label branch=feature 'make test'         # on the branch
  cmdscope check --baseline branch=main --fail-if-slower 5 >> \"$GITHUB_STEP_SUMMARY\"
  cmdscope check --against history --fail-if-slower 5   # vs the stable history before it

Exit status: 0 no significant regression beyond PCT; 1 a regression; 2 no
results, no baseline on this machine, or a store error.
";

const CHANGES_EXAMPLES: &str = "\
Examples:
  cmdscope changes                                   # every benchmark, ordered by session time
  cmdscope changes 'make test' --order-by commit --format markdown
  cmdscope changes --fail-on-new-regression --threshold 5   # CI gate on the newest session

Exit status: 0 done; 1 with --fail-on-new-regression, a benchmark's newest
session is significantly slower than the segment before it by more than PCT;
2 no history, or a store or usage error.
";

const REPORT_EXAMPLES: &str = "\
Examples:
  cmdscope report                            # latest session -> cmdscope-report.html
  cmdscope report --html out.html --session 42
  cmdscope report --label branch=main
";

const IMPORT_EXAMPLES: &str = "\
Examples:
  cmdscope import hyperfine.json
  cmdscope import --label commit=abc123 bench.txt     # go test -bench output
";

/// Where results are stored (shared by run, history, check, report, import).
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// Results store: an SQLite file, or postgres://user[:password]@host[:port]/db.
    /// Default: $XDG_DATA_HOME/cmdscope/results.sqlite3 (~/.local/share/cmdscope/...).
    /// Passwords are never printed.
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "CMDSCOPE_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
}

/// Which stored sessions a command looks at.
#[derive(Args, Debug, Clone, Default)]
pub struct SessionFilterArgs {
    /// Only sessions with this label (repeatable; all must match).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Only sessions on this machine: a fingerprint (or its prefix) or a hostname.
    #[arg(long, value_name = "FINGERPRINT|HOST")]
    pub machine: Option<String>,

    /// The partitions of this suite run, merged into one session.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
}

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

    #[command(flatten)]
    pub store: StoreArgs,
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
    pub against: Option<crate::commands::changes::Against>,

    /// Exit 1 when a benchmark is significantly slower by more than PCT percent (the lower end of its ratio interval above 1 + PCT/100).
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub fail_if_slower: f64,

    /// The results checked: this session [default: the latest session on this machine].
    #[arg(long, value_name = "ID")]
    pub session: Option<i64>,

    /// The results checked: the partitions of this suite run, merged; the
    /// baseline is then the latest other run with the baseline label.
    #[arg(long, value_name = "ID", conflicts_with = "session")]
    pub run: Option<String>,

    /// Significance level.
    #[arg(long, default_value_t = 0.05, value_name = "ALPHA")]
    pub alpha: f64,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Markdown)]
    pub format: CheckFormat,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The HTML file to write ('-' for stdout).
    #[arg(long, value_name = "FILE", default_value = "cmdscope-report.html")]
    pub html: PathBuf,

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

const EXPLAIN_EXAMPLES: &str = "\
Examples:
  cmdscope explain 'ruby -e \"100.times { system(%q(/bin/true)) }\"'
  cmdscope explain --json explain.json 'make -j2'
  cmdscope explain -L u root,nobody --user {u} 'ruby spawn.rb'   # side by side
  cmdscope explain -L n 0,5000 --env-size {n} ./container-init
  cmdscope explain --monitor 'busctl --system monitor org.freedesktop.hostname1' \\
      --match 'member=Introspect' --match 'member=Get;' --match 'member=GetAll' 'hostnamectl'

Tracing stops the program at every system call: the run is slower than
normal and the times shown are indicative. Measure with 'cmdscope run'.
";

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

#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// The commands to benchmark. Each is split into words like a shell
    /// would (quotes, backslashes) and executed directly, without a shell,
    /// unless it is written in shell syntax (see --shell).
    #[arg(required_unless_present = "suite", value_name = "COMMAND")]
    pub commands: Vec<OsString>,

    #[command(flatten)]
    pub suite: crate::suite::SuiteRunArgs,

    /// Runs of each command before measuring (caches, JITs, disk).
    #[arg(short = 'w', long, default_value_t = 0, value_name = "NUM")]
    pub warmup: usize,

    /// Exact number of measured runs per command.
    #[arg(short = 'r', long, value_name = "NUM", conflicts_with_all = ["min_runs", "max_runs"],
          value_parser = at_least_one)]
    pub runs: Option<u64>,

    /// Minimum measured runs per command [default: 10].
    #[arg(short = 'm', long, value_name = "NUM", value_parser = at_least_one)]
    pub min_runs: Option<u64>,

    /// Maximum measured runs per command [default: unlimited].
    #[arg(short = 'M', long, value_name = "NUM", value_parser = at_least_one)]
    pub max_runs: Option<u64>,

    /// Seconds of measured runs to aim for per command, when --runs is not given.
    #[arg(long, default_value_t = 3.0, value_name = "SECONDS")]
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
    #[arg(long, value_name = "WHERE", default_value = "null")]
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

    /// Run order with several commands: interleaved blocks, or sequential
    /// (hyperfine's). Default: interleaved, or sequential when the commands
    /// have different --setup/--cleanup (only sequential runs can be bracketed by them).
    #[arg(long, value_enum)]
    pub order: Option<Order>,

    /// Seed for the interleaving shuffle (recorded in the JSON) [default: random].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Stop early once every median is known within PCT percent (one command)
    /// or every comparison is settled (different, or equal within PCT).
    /// Default 1 when no --runs is given; the time budget still caps the session.
    #[arg(long, value_name = "PCT")]
    pub precision: Option<f64>,

    /// The command the others are compared with [default: the first]: the
    /// name or command line of one of the commands, or else (as hyperfine)
    /// another command, benchmarked first.
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,

    /// Name of the --reference command.
    #[arg(long, value_name = "NAME", requires = "reference")]
    pub reference_name: Option<String>,

    /// Significance level of comparisons (false-positive rate, kept under adaptive stopping).
    #[arg(long, default_value_t = 0.05, value_name = "ALPHA")]
    pub alpha: f64,

    #[command(flatten)]
    pub params: ParameterArgs,

    /// Write the sweep curve as an SVG chart (median with its 95 % band).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

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
    /// --ops and maximises operations per second.
    #[arg(long, value_name = "VAR", requires = "parameter_scan")]
    pub maximize: Option<String>,

    /// The metric sweeps and searches optimise [default: time_wall_clock].
    #[arg(long, value_name = "NAME", default_value = "time_wall_clock")]
    pub metric: String,

    /// Leave wall-time outliers (robust z-score > 3.5) out of the statistics.
    /// By default they are only flagged: the median is robust to them.
    #[arg(long)]
    pub remove_outliers: bool,

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

    /// Order of the markup tables (Markdown, AsciiDoc, Org-mode): 'auto' and
    /// 'command' keep the commands' order, 'mean-time' sorts by mean time.
    #[arg(long, value_enum, default_value_t = SortOrder::Auto, value_name = "METHOD")]
    pub sort: SortOrder,

    /// Time unit of the terminal output and markup tables (not of CSV and
    /// JSON, which are in seconds) [default: chosen per value].
    #[arg(short = 'u', long, value_enum, value_name = "UNIT")]
    pub time_unit: Option<TimeUnit>,

    /// Output style.
    #[arg(long, value_enum, default_value_t = Style::Auto)]
    pub style: Style,

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Markdown,
    Csv,
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

    /// Exit 1 when a gated time metric is significantly slower by more than PCT percent (the lower end of its ratio interval above 1 + PCT/100).
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,

    /// Significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
}

#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct ExplainArgs {
    /// The commands to trace, as `run` takes them: each is split into words
    /// like a shell would (quotes, backslashes) and executed directly,
    /// without a shell (unless -S). Each command and parameter combination
    /// is one cell, traced once; several cells are shown side by side.
    #[arg(required = true, value_name = "COMMAND")]
    pub commands: Vec<OsString>,

    /// The cells, defined as `run` defines them (see `cmdscope run --help`).
    #[command(flatten)]
    pub cells: ExplainCellArgs,

    /// Write everything (processes, spawns, execs, syscalls, io, monitor,
    /// hints) as JSON to FILE; '-' for stdout (the terminal report is then
    /// not printed).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// How many system calls to list, by time spent in them.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    /// A command run alongside (through sh -c) whose output lines are
    /// matched against each --match while the traced command runs, e.g.
    /// 'busctl --system monitor NAME'. Its stdout is read; its process group
    /// is killed at the end.
    #[arg(long, value_name = "COMMAND")]
    pub monitor: Option<String>,

    /// A regular expression counted in the monitor's output lines
    /// (repeatable; one count per pattern).
    #[arg(long = "match", value_name = "REGEX", requires = "monitor")]
    pub matches: Vec<String>,

    /// Seconds the monitor is given to get ready before the traced command
    /// starts. Lines it prints meanwhile are reported apart, not counted.
    #[arg(long, default_value_t = 0.2, value_name = "SECONDS")]
    pub monitor_wait: f64,

    /// Seconds the monitor keeps being read after the traced command ends.
    #[arg(long, default_value_t = 0.2, value_name = "SECONDS")]
    pub monitor_grace: f64,

    /// Kill the traced command (its whole traced tree) after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,

    /// Let the traced command write to cmdscope's stdout and stderr
    /// (default: /dev/null). Its stdin is cmdscope's, or /dev/null when
    /// that is a terminal (it runs in its own process group).
    #[arg(long)]
    pub show_output: bool,

    /// Show every process of the tree instead of summarising runs of
    /// similar siblings.
    #[arg(long)]
    pub full_tree: bool,
}

/// The options that define what each cell runs: its name, environment,
/// user, directory, CPUs, niceness and shell. Defined once for `run` and
/// `explain`, which plans its cells with `run`'s code.
#[derive(Args, Clone, Debug, Default)]
pub struct CellArgs {
    /// Name to show for a command, in order (repeatable).
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub names: Vec<String>,

    /// Set an environment variable for the commands (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<OsString>,

    /// Pad the commands' environment with N synthetic variables
    /// (CMDSCOPE_PAD_0000001=..., 32-byte values) to reproduce huge environments.
    #[arg(long, value_name = "N")]
    pub env_size: Option<String>,

    /// Add the KEY=VALUE lines of FILE to the environment ('#' starts a comment).
    #[arg(long, value_name = "FILE")]
    pub env_file: Option<PathBuf>,

    /// Start the commands with an empty environment (then --env-file, --env, --env-size apply).
    #[arg(long)]
    pub clear_env: bool,

    /// Run the commands (not cmdscope) as this user, with the user's groups. Needs root.
    #[arg(long, value_name = "NAME|UID")]
    pub user: Option<String>,

    /// Run every run in a fresh directory under DIR, or on a memory
    /// filesystem with 'tmpfs'; the directory is removed after the run.
    #[arg(long, value_name = "DIR|tmpfs")]
    pub workdir: Option<String>,

    /// Copy this directory into each fresh working directory (not measured).
    #[arg(long, value_name = "DIR")]
    pub workdir_template: Option<String>,

    /// Pin the commands to these CPUs, e.g. 0-3,6.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,

    /// Run the commands at this niceness (-20 to 19; below 0 needs root).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub nice: Option<String>,

    /// Run every command through SHELL with -c ('bash', 'bash --norc';
    /// 'none' = no shell). In `run` its start-up cost is measured interleaved
    /// with the runs and subtracted. Default: commands written in shell syntax (pipes,
    /// redirections, $, globs, builtins such as cd or exit) run through sh
    /// -c, the others are executed directly.
    #[arg(short = 'S', long, value_name = "SHELL")]
    pub shell: Option<String>,

    /// Execute every command directly, without a shell, even when it looks
    /// like shell syntax (same as --shell=none).
    #[arg(short = 'N', long = "no-shell", conflicts_with = "shell")]
    pub no_shell: bool,
}

/// The parameters that multiply cells (-P/-D/--parameter-factor, -L), for
/// `run` and `explain` alike.
#[derive(Args, Clone, Debug, Default)]
pub struct ParameterArgs {
    /// Scan a numeric parameter: {VAR} in the command (and in --env values,
    /// hooks and names) takes MIN, MIN+STEP, ... MAX. Integers step by 1
    /// unless -D is given; --parameter-factor makes the scan geometric.
    /// Repeatable (all parameters combine): with several -P, each -D or
    /// --parameter-factor applies to the -P before it
    /// (-P a 1 64 --parameter-factor 2 -P b 1 8).
    #[arg(short = 'P', long, num_args = 3, value_names = ["VAR", "MIN", "MAX"], allow_negative_numbers = true, action = clap::ArgAction::Append)]
    pub parameter_scan: Vec<String>,

    /// Step of --parameter-scan (may be negative or a decimal like 0.25).
    #[arg(
        short = 'D',
        long,
        value_name = "STEP",
        requires = "parameter_scan",
        allow_negative_numbers = true,
        action = clap::ArgAction::Append
    )]
    pub parameter_step_size: Vec<String>,

    /// Make --parameter-scan geometric: MIN, MIN*F, MIN*F², ... (1 2 4 ... 8192 with F = 2).
    #[arg(long, value_name = "F", requires = "parameter_scan", action = clap::ArgAction::Append)]
    pub parameter_factor: Vec<String>,

    /// Where each -P, -D and --parameter-factor stood on the command line
    /// (filled by `Cli::parse_ordered`): tells several scans' steps apart.
    #[arg(skip)]
    pub scan_order: crate::run::plan::ScanOrder,

    /// A parameter with listed values: -L VAR a,b,c (repeatable; all
    /// parameters combine into every combination).
    #[arg(short = 'L', long, num_args = 2, value_names = ["VAR", "VALUES"], action = clap::ArgAction::Append)]
    pub parameter_list: Vec<String>,
}

/// The options of `run` that define cells, for `explain` (same meaning;
/// turned into `run`'s arguments and planned by the same code).
#[derive(Args, Debug, Default)]
pub struct ExplainCellArgs {
    #[command(flatten)]
    pub cell: CellArgs,

    #[command(flatten)]
    pub params: ParameterArgs,
}

/// The one rule for `--alpha`, for every subcommand: a family-wise
/// significance level in (0, 0.5) (above that "significant" would mean less
/// than a coin flip).
pub fn check_alpha(alpha: f64) -> Result<(), Error> {
    if alpha > 0.0 && alpha < 0.5 {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "--alpha must be between 0 and 0.5, got {alpha}"
        )))
    }
}
