//! What one benchmark asks for, as typed values, before `run` decides
//! anything: its cells' input and the settings a suite benchmark may set.
//! Built from `run`'s flags (`cli::cells::request`) or directly from a
//! suite benchmark's TOML (`suite::file`), and measured by
//! `commands::run::bench`, which checks every value by one set of rules
//! whichever front end built it. Plain data: no flags, no parsing.

use std::collections::HashSet;

use crate::run::plan::PlanInput;
use crate::run::schedule::Order;

/// `--min-time`'s default, in seconds.
pub const DEFAULT_MIN_TIME: f64 = 3.0;
/// `--alpha`'s default.
pub const DEFAULT_ALPHA: f64 = 0.05;
/// `--metric`'s default.
pub const DEFAULT_METRIC: &str = "time_wall_clock";
/// `--input`'s default: no input.
pub const DEFAULT_INPUT: &str = "null";

#[derive(Clone, Debug)]
pub struct Request {
    /// The commands, their names, shell, environment, hooks, parameters
    /// and variants (the environment file already read).
    pub plan: PlanInput,
    /// `--reference-name` given without an added `--reference` command:
    /// the name or command line of the command the others are compared with.
    pub reference_name: Option<String>,
    pub warmup: usize,
    pub runs: Option<u64>,
    pub min_runs: Option<u64>,
    pub max_runs: Option<u64>,
    /// Seconds.
    pub min_time: f64,
    /// Seconds.
    pub timeout: Option<f64>,
    pub stop_on_timeout: bool,
    /// A percentage, as given.
    pub precision: Option<f64>,
    pub alpha: f64,
    pub order: Option<Order>,
    pub seed: Option<u64>,
    /// `--ignore-failure`'s value (`all` when given without one).
    pub ignore_failure: Option<String>,
    /// Where output goes: once for all commands, or once per command.
    pub output: Vec<String>,
    /// `--show-output`: `--output=inherit` for all.
    pub show_output: bool,
    pub input: String,
    pub counters: bool,
    /// `--simulate` or `--counted`: the simulator's `--I1`, `--D1` and
    /// `--LL` geometries, for when it is the one that counts.
    pub simulate: Option<(String, String, String)>,
    /// `--counted`'s choice (None with `simulate` set: `--simulate`).
    pub counted: Option<crate::run::counted::Ask>,
    pub remove_outliers: bool,
    /// `--until-decided`: keep measuring until the comparisons are decided
    /// or `max_time` (seconds; 60 when not given) has passed.
    pub until_decided: bool,
    pub max_time: Option<f64>,
    /// `--isolate`: cmdscope and its helpers on one CPU, the commands on
    /// the others.
    pub isolate: bool,
    pub metric: String,
    /// The session's labels, `KEY=VALUE`.
    pub labels: Vec<String>,
    /// The suite's name of the benchmark.
    pub benchmark: Option<String>,
    /// A suite partition's cells (by store identity): only these are measured.
    pub only_cells: Option<HashSet<String>>,
    /// hyperfine's run count (`RunPolicy::first_run`): fixed from each
    /// command's first run, the shell calibrated first.
    pub first_run: bool,
    /// hyperfine's `--debug-mode`, set by its front door only: nothing is
    /// run, a command `sleep X` takes X s (`run::executor::Debug`).
    pub debug: bool,
}

impl Default for Request {
    /// What `cmdscope run` does with no option given.
    fn default() -> Request {
        Request {
            plan: PlanInput::default(),
            reference_name: None,
            warmup: 0,
            runs: None,
            min_runs: None,
            max_runs: None,
            min_time: DEFAULT_MIN_TIME,
            timeout: None,
            stop_on_timeout: false,
            precision: None,
            alpha: DEFAULT_ALPHA,
            order: None,
            seed: None,
            ignore_failure: None,
            output: Vec::new(),
            show_output: false,
            input: DEFAULT_INPUT.to_string(),
            counters: false,
            simulate: None,
            counted: None,
            remove_outliers: false,
            until_decided: false,
            max_time: None,
            isolate: false,
            metric: DEFAULT_METRIC.to_string(),
            labels: Vec::new(),
            benchmark: None,
            only_cells: None,
            first_run: false,
            debug: false,
        }
    }
}
