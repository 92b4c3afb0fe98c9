//! Command-line interface: every flag is documented here, where it is defined.
//!
//! `mod.rs` holds the parser, the list of subcommands, the argument groups
//! several subcommands share and the rules shared flags follow everywhere
//! (`check_alpha`, `check_percentage`); each subcommand's own arguments
//! live in the file named after it. Parsing only: commands read these
//! types, and cli never uses `commands` (it may use lower modules' types
//! and rules for parsing).

pub mod cells;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod doctor;
pub(crate) mod explain;
pub mod hyperfine;
pub(crate) mod run;
pub(crate) mod store;
pub mod stored;
pub(crate) mod suite;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::{Error, OptionError};
use compare::CompareArgs;
use completions::{CompletionsArgs, ManArgs, COMPLETIONS_EXAMPLES, MAN_EXAMPLES};
use doctor::{DoctorArgs, DOCTOR_EXAMPLES};
use explain::{ExplainArgs, EXPLAIN_EXAMPLES};
use run::{HyperfineArgs, RunArgs, RUN_EXAMPLES};
use store::{
    ChangesArgs, CheckArgs, HistoryArgs, ImportArgs, ReportArgs, StatusArgs, CHANGES_EXAMPLES,
    CHECK_EXAMPLES, HISTORY_EXAMPLES, IMPORT_EXAMPLES, REPORT_EXAMPLES,
};
use suite::SuiteArgs;

const HYPERFINE_EXAMPLES: &str = "Examples:
  cmdscope hyperfine --warmup 3 'sleep 0.1' 'sleep 0.2'
  cmdscope hyperfine --export-json out.json -L t 1,2 'sleep 0.{t}'
  cmdscope hyperfine --cmdscope-details --runs 20 'make -j2' 'make -j4'

Invoked through a link named hyperfine, cmdscope is `cmdscope hyperfine`,
so scripts written for hyperfine run it unchanged:
  ln -s \"$(command -v cmdscope)\" ~/bin/hyperfine
";

/// The arguments as the parser reads them: invoked under the name
/// `hyperfine` (a link), cmdscope is `cmdscope hyperfine`.
pub fn front_door(mut args: Vec<OsString>) -> Vec<OsString> {
    let invoked_as = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_stem())
        .is_some_and(|name| name == "hyperfine");
    if invoked_as {
        args.insert(1, "hyperfine".into());
    }
    args
}

/// Whether the arguments (as [`front_door`] returns them) are the
/// hyperfine front door's.
pub fn is_front_door(args: &[OsString]) -> bool {
    args.get(1).is_some_and(|a| a == "hyperfine")
}

/// A parse error of the front door (clap's rendering, `rendered`) as
/// hyperfine 1.20 prints it, which scripts may match on: clap's block
/// as it is, with the usage naming `hyperfine` and the value names
/// hyperfine gives (cmdscope's are clearer for `run`, whose one-line
/// errors keep them).
pub fn hyperfine_parse_error(rendered: &str) -> String {
    const NAMES: [(&str, &str); 7] = [
        ("cmdscope hyperfine", "hyperfine"),
        ("<COMMAND>", "<command>"),
        // Optional for cmdscope (a suite needs none), required by hyperfine.
        ("[COMMAND]...", "<command>..."),
        ("--style <STYLE>", "--style <TYPE>"),
        (
            "--parameter-step-size <STEP>",
            "--parameter-step-size <DELTA>",
        ),
        ("-D <STEP>", "-D <DELTA>"),
        ("--reference-name <NAME>", "--reference-name <CMD>"),
    ];
    let text = NAMES
        .iter()
        .fold(rendered.to_string(), |text, (ours, theirs)| {
            text.replace(ours, theirs)
        });
    // clap's usage names `run`'s --no-store with an argument in conflict
    // with it; the front door never stores unless told, and hyperfine has
    // no such flag.
    text.lines()
        .map(|l| match l.strip_prefix("Usage: ") {
            Some(usage) => format!("Usage: {}\n", usage.replace(" --no-store", "")),
            None => format!("{l}\n"),
        })
        .collect()
}

/// cmdscope: a performance lab for commands.
///
/// Runs commands as whole processes and measures every run with the kernel's
/// own accounting: wall, user and system time, peak memory, page faults,
/// context switches, storage I/O and (with --counters) perf counters.
///
/// Exit status: 0 success; 1 a benchmarked command failed, or a gate found a
/// regression or could not compare a benchmark; 2 bad usage or input; 130
/// interrupted (finished runs exported).
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
        use clap::CommandFactory;
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        // Building every subcommand's flags is most of a short session's
        // parse; a command line that names `run` or `hyperfine` first is
        // parsed by that subcommand alone. Whatever it cannot take (help,
        // --version, any error) goes through the whole parser, so help,
        // errors and "did you mean" tips are the whole parser's own.
        if let Some(mut alone) = args.get(1).and_then(|s| Cli::subcommand_alone(s.to_str()?)) {
            if let Ok(cli) = Cli::parse_ordered_with(&mut alone, args.iter().cloned()) {
                return Ok(cli);
            }
        }
        Cli::parse_ordered_with(&mut Cli::command(), args)
    }

    /// The parser of `cmdscope NAME` with only that subcommand's flags, for
    /// the subcommands a session starts from.
    fn subcommand_alone(name: &str) -> Option<clap::Command> {
        let sub = match name {
            "run" => RunArgs::augment_args(clap::Command::new("run")),
            "hyperfine" => HyperfineArgs::augment_args(clap::Command::new("hyperfine")),
            _ => return None,
        };
        Some(clap::Command::new("cmdscope").subcommand(sub))
    }

    /// [`Cli::parse_ordered`] with a parser built once by the caller
    /// (`Cli::command()`): building it is most of the cost of parsing, and
    /// a suite parses one command line per benchmark.
    pub fn parse_ordered_with<I, T>(
        command: &mut clap::Command,
        args: I,
    ) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::FromArgMatches;
        let matches = command.try_get_matches_from_mut(args)?;
        let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(command))?;
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
            (Command::Run(run), Some(("run", sub))) => run.measure.params.scan_order = order(sub),
            (Command::Hyperfine(h), Some(("hyperfine", sub))) => {
                h.run.measure.params.scan_order = order(sub)
            }
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
    /// `run` with hyperfine's behaviour, for scripts written for hyperfine:
    /// sequential order, every command through `sh -c` (unless -N or
    /// --shell), hyperfine's run count (at least 10 runs and 3 s, fixed from
    /// each command's first run), nothing stored unless --store is given,
    /// hyperfine's block per benchmark and summary ("times faster than"),
    /// cmdscope's other figures with --cmdscope-details, then on a terminal one line
    /// of what `cmdscope run` would say (not with --style basic or none).
    /// Also what cmdscope does when invoked under the name `hyperfine`.
    #[command(after_help = HYPERFINE_EXAMPLES)]
    Hyperfine(Box<HyperfineArgs>),
    /// Compare saved results (cmdscope or hyperfine JSON, Go benchmark text) in a benchstat-style table.
    #[command(
        after_help = "Examples:\n  cmdscope compare before.json after.json\n  cmdscope compare --format markdown old.txt new.txt\n  cmdscope compare --fail-if-slower 5 main.json branch.json   # CI gate\n  cmdscope compare --fail-if-slower 5 --allow-missing slow-test \\\n      main.json branch.json\n  cmdscope compare --fail-if-slower 5 --inconclusive fail a.json b.json\n  cmdscope compare --fail-if-slower 0.5 --metric sim_estimated_cycles \\\n      main.json branch.json   # exports of run --simulate\n\nThe gate fails on a regression, and on a benchmark of the baseline it\ncould not compare (absent from a file, or too few runs) unless\n--allow-missing names it (or says all).\n"
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
    Changes(ChangesArgs),
    /// Write a self-contained HTML report (SVG charts, no scripts) from the store.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Store results files (hyperfine JSON, cmdscope JSON, Go benchmark text) as sessions.
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(ImportArgs),
    /// Suites: list a suite's cells, submit its partitions to Slurm, or
    /// print a Kubernetes Job or CI snippet that runs them.
    Suite(SuiteArgs),
    /// Which partitions of a suite run reported, and which are missing.
    Status(StatusArgs),
    /// Check whether this machine is fit to measure on (the checks every
    /// session records): governor, turbo, load, busy processes, stolen
    /// time, swapping, SMT siblings, throttling, battery. Exits 1 when any
    /// check warns.
    #[command(after_help = DOCTOR_EXAMPLES)]
    Doctor(DoctorArgs),
    /// Print a completion script for a shell, generated from cmdscope's own flags.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print cmdscope's manual page (roff), or a subcommand's, generated
    /// from cmdscope's own flags.
    #[command(after_help = MAN_EXAMPLES)]
    Man(ManArgs),
    /// Internal: the helper process that writes to the store during `run`.
    #[command(name = "__store-writer", hide = true)]
    StoreWriter,
}

/// Where results are stored (shared by run, history, check, report, import).
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// Results store: an SQLite file, or postgres://user[:password]@host[:port]/db,
    /// or a libpq key/value string ('host=h dbname=db user=u password=p').
    /// Default: $XDG_DATA_HOME/cmdscope/results.sqlite3 (~/.local/share/cmdscope/...).
    /// Passwords are never printed. Refused: an empty value (flag or
    /// variable; never read as the default), a store that keeps nothing
    /// (:memory:, SQLite file: URIs) or is not a file, a connection string
    /// the PostgreSQL driver refuses, and any output of the command that is
    /// the store.
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "CMDSCOPE_STORE",
        hide_env_values = true,
        value_parser = store_location
    )]
    pub store: Option<String>,
}

/// What a CI gate may let through (shared by compare, check and changes):
/// the gate's one rule is `analysis::gate`.
#[derive(Args, Debug, Clone, Default)]
pub struct GateArgs {
    /// A benchmark the gate may leave not compared: absent from the
    /// results checked, or without the successful runs a comparison needs
    /// (they timed out or failed, the session was interrupted). Without
    /// it such a benchmark fails the gate. Repeat for several (names may
    /// hold commas); `all` for every one, a missing suite partition too.
    /// The header says how many were not compared.
    #[arg(long, value_name = "NAME|all")]
    pub allow_missing: Vec<String>,

    /// What an inconclusive comparison (runs enough, an interval too wide
    /// to tell) does to the gate: `pass` counts it in the header, `fail`
    /// fails the gate.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = Inconclusive::Pass)]
    pub inconclusive: Inconclusive,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Inconclusive {
    #[default]
    Pass,
    Fail,
}

/// A store location is never empty: `--store "$UNSET"` (or an empty
/// CMDSCOPE_STORE, e.g. a missing CI secret) would otherwise quietly mean
/// the default store, and results would go somewhere nobody looks.
fn store_location(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err(
            "the store location is empty (an unset variable?): give a path or URL, \
             or leave out --store and CMDSCOPE_STORE for the default store"
                .into(),
        )
    } else {
        Ok(text.to_string())
    }
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

/// The options that define what each cell runs: its name, environment,
/// user, directory, CPUs, niceness and shell. Defined once for `run` and
/// `explain`, which plans its cells with `run`'s code.
#[derive(Args, Clone, Debug, Default, PartialEq)]
pub struct CellArgs {
    /// Name to show for a command, in order (repeatable).
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub names: Vec<String>,

    /// Set an environment variable for the commands (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<OsString>,

    /// Pad the commands' environment with N synthetic variables
    /// (CMDSCOPE_PAD_0000001=..., 32-byte values) to reproduce huge
    /// environments: at most 100000, and what exec takes (a quarter of
    /// `ulimit -s`, about 33000 with 8 MiB); more is refused before any run.
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
#[derive(Args, Clone, Debug, Default, PartialEq)]
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

/// A number of seconds given to `flag`: finite, at most 10⁹, positive (or
/// zero where `allow_zero`), as every duration flag checks it.
pub fn seconds(value: f64, flag: &str, allow_zero: bool) -> Result<std::time::Duration, Error> {
    // A billion seconds (31 years) is no duration anyone waits for; past
    // it, the value is a typo or a hostile input, and it is called too
    // large rather than not positive.
    const MAX: f64 = 1e9;
    if value.is_finite() && (value > 0.0 || (allow_zero && value == 0.0)) && value <= MAX {
        Ok(std::time::Duration::from_secs_f64(value))
    } else if value > MAX {
        Err(OptionError::SecondsTooLarge {
            flag: flag.into(),
            max: MAX,
            value,
        }
        .into())
    } else {
        Err(OptionError::NotSeconds {
            flag: flag.into(),
            value,
            allow_zero,
        }
        .into())
    }
}

/// The one rule for `--alpha`, for every subcommand: a family-wise
/// significance level in (0, 0.5) (above that "significant" would mean less
/// than a coin flip).
pub fn check_alpha(alpha: f64) -> Result<(), Error> {
    if alpha > 0.0 && alpha < 0.5 {
        Ok(())
    } else {
        Err(OptionError::Alpha(alpha).into())
    }
}

/// The one rule for `--precision`: a percentage strictly between 0 and 100.
pub fn check_precision(pct: f64) -> Result<(), Error> {
    if pct.is_finite() && pct > 0.0 && pct < 100.0 {
        Ok(())
    } else {
        Err(OptionError::Precision(pct).into())
    }
}

/// The one rule for `--min-time`: a finite number of seconds, not negative.
pub fn check_min_time(seconds: f64) -> Result<(), Error> {
    if seconds.is_finite() && seconds >= 0.0 {
        Ok(())
    } else {
        Err(OptionError::MinTime(seconds).into())
    }
}

/// The one rule for the percentage a gate allows (`check --fail-if-slower`,
/// `changes --threshold`): a finite number, not negative.
pub fn check_percentage(flag: &str, pct: f64) -> Result<(), Error> {
    if pct.is_finite() && pct >= 0.0 {
        Ok(())
    } else {
        Err(OptionError::NotAPercentage {
            flag: flag.into(),
            pct,
        }
        .into())
    }
}

/// A group of flags, with the long names of those given on the command
/// line (or by their variable), in the group's order: what a caller that
/// refuses the group names, decided by the group's type rather than by a
/// list kept next to it. Reads as the group itself.
#[derive(Clone, Debug)]
pub struct Given<T> {
    args: T,
    names: Vec<String>,
}

impl<T> Given<T> {
    /// The flags of the group that were given, as `--long` names.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

impl<T> std::ops::Deref for Given<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.args
    }
}

impl<T> std::ops::DerefMut for Given<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.args
    }
}

impl<T: Args> Args for Given<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        T::augment_args(cmd)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        T::augment_args_for_update(cmd)
    }
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: Args + clap::FromArgMatches> clap::FromArgMatches for Given<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }
    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        use clap::parser::ValueSource;
        // Read before the group takes its values out of the matches.
        let group = T::augment_args(clap::Command::new("group"));
        let names = (group.get_arguments())
            .filter(|a| {
                matches!(
                    matches.value_source(a.get_id().as_str()),
                    Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                )
            })
            .map(|a| match a.get_long() {
                Some(long) => format!("--{long}"),
                None => a.get_id().to_string(),
            })
            .collect();
        Ok(Given {
            args: T::from_arg_matches_mut(matches)?,
            names,
        })
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.args.update_from_arg_matches(matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole parser, as `parse_ordered` uses when the short path cannot.
    fn whole(argv: &[&str]) -> Result<Cli, clap::Error> {
        use clap::CommandFactory;
        Cli::parse_ordered_with(&mut Cli::command(), argv)
    }

    #[test]
    fn run_and_hyperfine_parsed_alone_read_as_the_whole_parser_does() {
        let lines: &[&[&str]] = &[
            &["cmdscope", "run", "true"],
            &[
                "cmdscope",
                "run",
                "--no-store",
                "--runs",
                "1",
                "--style",
                "none",
                "/bin/true",
            ],
            &[
                "cmdscope",
                "run",
                "-N",
                "-w",
                "2",
                "-m",
                "5",
                "-M",
                "9",
                "sleep 0.01",
                "true",
            ],
            &[
                "cmdscope",
                "run",
                "-P",
                "n",
                "1",
                "3",
                "-D",
                "1",
                "-P",
                "m",
                "2",
                "8",
                "--parameter-factor",
                "2",
                "sleep {n}.{m}",
            ],
            &[
                "cmdscope",
                "run",
                "-L",
                "x",
                "a,b",
                "--export-json",
                "o.json",
                "--export-markdown",
                "-",
                "echo {x}",
            ],
            &[
                "cmdscope",
                "run",
                "--prepare",
                "sync",
                "--cleanup",
                "true",
                "-n",
                "A",
                "true",
                "-n",
                "B",
                "false",
                "-i",
            ],
            &[
                "cmdscope",
                "run",
                "--timeout",
                "2",
                "--order",
                "interleaved",
                "--cpus",
                "0",
                "--",
                "ls",
                "-l",
            ],
            &[
                "cmdscope",
                "run",
                "--concurrency",
                "1,2,4",
                "--min-runs",
                "10",
                "true",
            ],
            &[
                "cmdscope",
                "hyperfine",
                "-N",
                "--runs",
                "3",
                "--export-json",
                "x.json",
                "true",
            ],
            &[
                "cmdscope",
                "hyperfine",
                "--warmup",
                "1",
                "-P",
                "t",
                "1",
                "2",
                "sleep {t}",
            ],
        ];
        for argv in lines {
            // The short path itself, not a fallback to the whole parser.
            let mut alone = Cli::subcommand_alone(argv[1]).expect("run and hyperfine");
            let short = Cli::parse_ordered_with(&mut alone, argv.iter().copied())
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let full = whole(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!(format!("{short:?}"), format!("{full:?}"), "{argv:?}");
        }
    }

    #[test]
    fn what_the_short_path_cannot_take_is_the_whole_parsers_to_answer() {
        let lines: &[&[&str]] = &[
            &["cmdscope", "run", "--help"],
            &["cmdscope", "run", "-h"],
            &["cmdscope", "run", "--version"],
            &["cmdscope", "run", "--rusn", "3", "true"],
            &["cmdscope", "run"],
            &["cmdscope", "hyperfine", "--debug-mode", "--nope", "true"],
        ];
        for argv in lines {
            let short = Cli::parse_ordered(argv.iter().copied()).map(|c| format!("{c:?}"));
            let full = whole(argv).map(|c| format!("{c:?}"));
            match (short, full) {
                (Err(a), Err(b)) => {
                    assert_eq!(a.kind(), b.kind(), "{argv:?}");
                    assert_eq!(a.to_string(), b.to_string(), "{argv:?}");
                }
                (a, b) => assert_eq!(a.ok(), b.ok(), "{argv:?}"),
            }
        }
        // The misspelled flag keeps clap's tip.
        let e = Cli::parse_ordered(["cmdscope", "run", "--rusn", "3", "true"]).unwrap_err();
        assert!(e.to_string().contains("--runs"), "{e}");
    }

    #[test]
    fn validates_seconds() {
        assert!(seconds(0.0, "--x", true).is_ok());
        assert!(seconds(0.0, "--x", false).is_err());
        assert!(seconds(f64::NAN, "--x", true).is_err());
        assert!(seconds(-1.0, "--x", true).is_err());
        // "at most 1e9" means 1e9 itself is taken.
        assert!(seconds(1e9, "--x", false).is_ok());
        assert!(seconds(1.000001e9, "--x", false).is_err());
        assert_eq!(
            seconds(0.25, "--x", false).unwrap(),
            std::time::Duration::from_millis(250)
        );
        let e = seconds(-1.0, "--timeout", false).unwrap_err().to_string();
        assert!(
            e.contains("--timeout must be a positive number of seconds, got -1"),
            "{e}"
        );
    }
}
