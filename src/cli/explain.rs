//! The arguments of `cmdscope explain`: the cells, defined as `run` defines
//! them, and what to trace and show. Parsing only.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use super::{CellArgs, ParameterArgs};

pub const EXPLAIN_EXAMPLES: &str = "\
Examples:
  cmdscope explain 'ruby -e \"100.times { system(%q(/bin/true)) }\"'
  cmdscope explain --json explain.json 'make -j2'
  cmdscope explain --profile --flamegraph prof/ ./old ./new   # why slower?
  cmdscope explain --profile --speedscope p.json ./old ./new  # in speedscope
  cmdscope explain --profile --jit-symbols 'node app.js'   # JS functions
  cmdscope explain --profile --simulate ./old ./new  # counted, exact
  cmdscope explain --profile --simulate --flamegraph prof/ ./old ./new
  cmdscope explain -L u root,nobody --user {u} 'ruby spawn.rb'   # side by side
  cmdscope explain -L vars 0,5000 --env-size {vars} ./container-init
  cmdscope explain \\
      --monitor 'busctl --system monitor org.freedesktop.hostname1' \\
      --match 'member=Introspect' --match 'member=Get;' \\
      --match 'member=GetAll' 'hostnamectl'

Tracing stops the program at every system call: the run is slower than
normal and the times shown are indicative. Measure with 'cmdscope run'.
";

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

    /// Sample CPU profiles instead of tracing: every cell runs --runs times
    /// in interleaved shuffled blocks, sampled over its whole process tree
    /// with perf_event_open (no ptrace); shows where the time goes per cell
    /// and, against the reference, which functions changed, with intervals.
    /// Frames are named from debug files where distributions put them
    /// (/usr/lib/debug or CMDSCOPE_DEBUG_DIRS, .gnu_debuglink,
    /// MiniDebugInfo; debuginfod only when DEBUGINFOD_URLS is set), with
    /// inlined functions as frames of their own.
    #[arg(long, conflicts_with_all = ["monitor", "full_tree"])]
    pub profile: bool,

    /// Runs per cell with --profile [default: 10; 2 with --simulate], at
    /// least 3 sampled or 2 simulated. Without --runs and --frequency, a
    /// difference in CPU time that the functions do not account for after
    /// 10 runs is sampled again at a raised rate, with more runs, for at
    /// most 15 s.
    #[arg(long, value_name = "N", requires = "profile",
          value_parser = clap::value_parser!(u64).range(2..=10000))]
    pub runs: Option<u64>,

    /// Samples per second of CPU time with --profile [default: 999], at
    /// most what the kernel allows (kernel.perf_event_max_sample_rate).
    #[arg(long, value_name = "HZ", requires = "profile",
          value_parser = clap::value_parser!(u64).range(1..=100000))]
    pub frequency: Option<u64>,

    /// How --profile finds callers: 'dwarf' copies 8 KiB of user stack
    /// with every sample and unwinds it with the binaries' .eh_frame
    /// (callers of code built without frame pointers are found; costs
    /// more); 'fp' follows frame pointers only (cheapest; loses callers in
    /// code built without them).
    #[arg(long, value_name = "METHOD", requires = "profile", default_value = "dwarf",
          value_parser = ["dwarf", "fp"])]
    pub unwind: String,

    /// With --profile: write folded stacks, a flame graph SVG and a pprof
    /// profile (gzipped profile.proto) per cell, a differential flame graph
    /// per pair, every cell in one file each for speedscope and the Firefox
    /// Profiler, and index.html showing them all, into DIR (created if
    /// missing).
    #[arg(long, value_name = "DIR", requires = "profile")]
    pub flamegraph: Option<PathBuf>,

    /// With --profile: ask the language runtimes cmdscope recognises to
    /// write the names of their interpreted and JIT-compiled functions, so
    /// that frames show them: Python >= 3.12 (-X perf; -X perf_jit on 3.13),
    /// Node (--perf-basic-prof, --interpreted-frames-native-stack through
    /// NODE_OPTIONS) and the JVM (-XX:+DumpPerfMapAtExit through
    /// JAVA_TOOL_OPTIONS). Costs each runtime some speed: see EXPLAIN.md.
    #[arg(long, requires = "profile")]
    pub jit_symbols: bool,

    /// With --profile: write every cell's profile to FILE in speedscope's
    /// file format, one profile per cell side by side (open it at
    /// speedscope.app or with the `speedscope` npm package, offline).
    #[arg(long, value_name = "FILE", requires = "profile")]
    pub speedscope: Option<PathBuf>,

    /// With --profile: write the profile to FILE in the Firefox Profiler's
    /// processed format (samply's), one track per cell (load it at
    /// profiler.firefox.com).
    #[arg(long, value_name = "FILE", requires = "profile")]
    pub firefox_profile: Option<PathBuf>,

    /// With --profile: count instead of sampling. Every profiled run is
    /// made under Valgrind's callgrind (the whole process tree, with the
    /// caches and cycle model of `run --simulate`), and a cell's profile is
    /// the instructions executed in each function and call chain, with
    /// estimated cycles. A deterministic program gives the same counts in
    /// every run, so its differences per function are exact from 2 runs per
    /// cell; counts that vary are compared by the usual tests. Work a
    /// process does before it execs is counted. User-space work only (no
    /// kernel work, waits or sleeps), at 20-100x the run's time; Go
    /// programs run with GODEBUG=asyncpreemptoff=1 (callgrind aborts on
    /// Go's preemption signals). --flamegraph and --speedscope weigh
    /// stacks in instructions; --firefox-profile (a timeline) is refused.
    #[arg(long, requires = "profile",
          conflicts_with_all = ["frequency", "unwind", "jit_symbols", "firefox_profile"],
          group = "counting")]
    pub simulate: bool,

    /// The simulated caches of --simulate.
    #[command(flatten)]
    pub caches: super::run::CacheArgs,
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
