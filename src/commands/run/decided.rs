//! `run`'s decisions, made once before the first run: from the command
//! line's arguments and the typed request to everything a session runs
//! with (its cells and run options, every check and default, the
//! terminal's look, exports, the store, the monitor, the search) and the
//! settings stored with it. The steps after it read these, never the
//! arguments.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use super::exports::{parse_output, Exports};
use crate::analysis::comparison;
use crate::analysis::sequential::Sequential;
use crate::analysis::source::Source;
use crate::analysis::warning::Rules;
use crate::cli::run::{RunArgs, SortOrder, Style, TimeUnit};
use crate::error::{OptionError, Result, SearchError};
use crate::exec::{Input, Output};
use crate::report::terminal::Wording;
use crate::run::counted::{self, By, Counted};
use crate::run::plan::{self, Parameter};
use crate::run::request::Request;
use crate::run::schedule::{Order, RunPolicy};
use crate::run::settings::{CellSettings, MonitorSettings, SearchGoal, Settings};
use crate::runner::progress::HyperfineBars;
use crate::runner::{self, IgnoreFailure, RunOptions};
use crate::search::SearchOptions;
use crate::store;
use crate::store::record::Choice;
use crate::units::TimeScale;

/// Everything a session runs with, decided before its first run by
/// [`Decided::new`] alone and read through its methods.
pub(super) struct Decided {
    opts: RunOptions,
    parameters: Vec<Parameter>,
    /// `--minimize`/`--maximize`'s search.
    search: Option<SearchOptions>,
    look: Look,
    words: Words,
    /// `-u/--time-unit`: one scale for every time shown.
    time_scale: Option<TimeScale>,
    rules: Rules,
    remove_outliers: bool,
    exports: Exports,
    store: Choice,
    /// The session's labels in the store.
    labels: Vec<(String, String)>,
    /// What the session runs with, as stored with it.
    settings: Settings,
}

/// How the terminal shows the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Look {
    /// ANSI colours in the terminal report.
    color: bool,
    /// A progress display while the runs go on.
    progress: bool,
    /// No terminal report and no notes: `--style none`, or an export to stdout.
    quiet: bool,
    /// hyperfine's plain style, which its users pipe: `--style basic` or
    /// `none`, or `auto` where hyperfine picks basic (standard output not
    /// a terminal, or the commands' output shown).
    piped: bool,
}

/// What the look depends on besides the flags.
#[derive(Clone, Copy, Debug)]
struct Terminal {
    stdout: bool,
    stderr: bool,
    /// `NO_COLOR` set and not empty.
    no_color: bool,
}

impl Terminal {
    fn current() -> Terminal {
        Terminal {
            stdout: std::io::stdout().is_terminal(),
            stderr: std::io::stderr().is_terminal(),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// Whose words the terminal report is in: `run`'s, or hyperfine's (set by
/// its front door; with `--cmdscope-details`, `details`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Words {
    Cmdscope,
    Hyperfine { details: bool, by_command: bool },
}

/// `--style` on these terminals. `output_shown`: the commands write to
/// the terminal; `stdout_exports`: an export goes to standard output;
/// `hyperfine`: the front door's words.
fn look(
    style: Style,
    t: Terminal,
    output_shown: bool,
    stdout_exports: usize,
    hyperfine: bool,
) -> Look {
    let (color, progress) = match style {
        Style::Auto => (t.stdout && !t.no_color, t.stderr),
        Style::Full => (!t.no_color, true),
        Style::Basic | Style::None => (false, false),
        Style::Nocolor => (false, true),
        Style::Color => (!t.no_color, false),
    };
    let piped = match style {
        Style::Basic | Style::None => true,
        Style::Auto => !t.stdout || output_shown,
        Style::Full | Style::Nocolor | Style::Color => false,
    };
    Look {
        color,
        progress: match style {
            Style::Auto if hyperfine => !piped,
            _ => progress && style != Style::None,
        },
        quiet: style == Style::None || stdout_exports > 0,
        piped,
    }
}

impl Decided {
    /// Plans the cells and checks every option, before anything runs;
    /// says what the user should know first (shell syntax, the order,
    /// what counts, the CPUs).
    pub(super) fn new(args: &RunArgs, r: &Request) -> Result<Decided> {
        let time_scale = args.report.time_unit.map(|unit| match unit {
            TimeUnit::Microsecond => TimeScale::Microsecond,
            TimeUnit::Millisecond => TimeScale::Millisecond,
            TimeUnit::Second => TimeScale::Second,
        });
        let mut cells = plan::expand(&r.plan)?;
        let parameters = r.plan.parameters.clone();
        let shell = &r.plan.shell;
        if let Some(keep) = &r.only_cells {
            // A suite partition: only its cells (and the shell calibration).
            cells.retain(|c| c.calibration || keep.contains(&store::identity(c)));
        }
        let (timeout, mut policy) = limits(r)?;
        let deadline = r
            .until_decided
            .then(|| crate::cli::seconds(r.max_time.unwrap_or(60.0), "--max-time", false))
            .transpose()?;
        if let Some(d) = deadline {
            // The wall clock decides (`RunOptions::deadline`); the measured-time
            // budget, which grows slower, must not end the session first.
            policy.min_time = d.as_secs_f64();
        }
        let isolate = r.isolate.then(crate::run::isolate::split).transpose()?;
        if let Some((_, commands)) = &isolate {
            for c in cells.iter_mut() {
                c.variant.cpus = Some(commands.clone());
            }
        }
        let source = parse_source(args, r)?;
        let monitor = check_goals(args, r, &cells, &parameters, &source)?;
        let (exports, stdout_exports) = Exports::decide(args, r, &parameters)?;
        let output_shown =
            args.measure.show_output || args.measure.output.iter().any(|o| o == "inherit");
        let look = look(
            args.report.style,
            Terminal::current(),
            output_shown,
            stdout_exports,
            args.report.hyperfine_words,
        );
        let quiet = look.quiet;

        crate::cli::check_alpha(r.alpha)?;
        let order = run_order(r, &cells, quiet)?;
        if r.first_run && order == Order::Sequential {
            // hyperfine measures its shell's start-up before the first command,
            // so each benchmark is final, and printed, as it ends.
            cells.sort_by_key(|c| !c.calibration);
        }
        let precision = parse_precision(r, order)?;
        if r.until_decided && order == Order::Sequential && r.plan.commands.len() > 1 {
            return Err(OptionError::UntilDecidedNeedsInterleaved.into());
        }
        let (simulate, counted) = counting(r, &cells)?;
        let compared = cells.iter().filter(|c| !c.calibration).count();
        if let Some(need) = hardware_runs(
            counted.as_ref().map(|c| c.by),
            policy.exact,
            order,
            r.alpha / compared.saturating_sub(1).max(1) as f64,
        ) {
            if !quiet {
                crate::eprint_line!(
                    "cmdscope: note: hardware counts vary a little from run to run and are compared by the rank test, which needs {need} runs per command at this level: making {need} runs, not {}",
                    policy.exact.unwrap_or_default()
                );
            }
            policy.exact = Some(need);
        }
        let adaptive = match (precision, order) {
            // Simulated counts are exact: --precision sets the band of "no
            // difference" only, and the run count is --runs.
            _ if simulate.is_some() => None,
            (Some(p), Order::Interleaved) if r.until_decided => {
                Some(Sequential::until_decided(r.alpha, p))
            }
            (Some(p), Order::Interleaved) => Some(Sequential::new(r.alpha, p)),
            _ => None,
        };
        // hyperfine runs a reference that repeats a command under one name;
        // its front door (hyperfine's run rule, `first_run`) keeps that when
        // nothing is stored, where no store or gate must tell the two apart.
        if !(r.first_run && args.no_store) {
            distinct_identities(&cells)?;
        }
        let real: Vec<&plan::Cell> = cells.iter().filter(|c| !c.calibration).collect();
        // The added --reference command comes first; --reference-name alone
        // picks one of the commands.
        let reference = match (&r.plan.reference, &r.reference_name) {
            (None, Some(name)) => real
                .iter()
                .position(|c| &c.name == name || &c.command == name)
                .ok_or_else(|| OptionError::UnknownReferenceName(name.clone()))?,
            _ => 0,
        };
        let (output, per_command_output) = outputs(r)?;
        let shell_name = match shell {
            plan::ShellMode::Always(words) => Some(words.join(" ")),
            _ if cells.iter().any(|c| c.shell) => Some("sh".to_string()),
            _ => None,
        };
        let opts = RunOptions {
            cells,
            policy,
            order,
            warmup: r.warmup,
            seed: r.seed.unwrap_or_else(rand::random),
            timeout,
            stop_on_timeout: r.stop_on_timeout,
            ignore_failure: IgnoreFailure::parse(r.ignore_failure.as_deref())?,
            input: match r.input.as_str() {
                "null" => Input::Null,
                path => Input::File(PathBuf::from(path)),
            },
            output,
            outputs: per_command_output,
            // Hardware counting is --counters' counting, user space only.
            counters: r.counters || counted.as_ref().is_some_and(|c| c.by == By::Hardware),
            show_progress: look.progress,
            machine_warnings: !args.report.hyperfine_words,
            // hyperfine draws its bars in its full and nocolor styles (`auto`
            // where it picks them), cmdscope's own where `run` would.
            hyperfine_bars: args.report.hyperfine_words.then_some(HyperfineBars {
                green: look
                    .color
                    .then_some(crate::report::paint::green as fn(&str) -> String),
            }),
            shell: shell_name,
            adaptive,
            reference,
            alpha: r.alpha,
            deadline,
            isolate: isolate.as_ref().map(|(own, _)| *own),
            simulate,
            counted,
            debug: r.debug,
            hyperfine_variables: args.report.hyperfine_words,
        };
        if !quiet {
            shell_notes(r, &opts.cells);
            if let (Some(c), Some(_)) = (&opts.counted, r.counted) {
                crate::eprint_line!("cmdscope: {}", counted_words(c));
            }
            if let Some((own, commands)) = &isolate {
                let list: Vec<String> = commands.iter().map(|c| c.to_string()).collect();
                crate::eprint_line!(
                    "cmdscope: isolated: the commands run on CPU {}, cmdscope and its helpers on CPU {own}",
                    list.join(",")
                );
            }
        }
        let search = search_options(args, r, &source, precision, &parameters);
        let settings = settings(args, r, &opts, precision, &source, &exports, monitor);
        let labels = store::parse_labels(&r.labels)?;
        Ok(Decided {
            opts,
            parameters,
            search,
            look,
            words: match args.report.hyperfine_words {
                true => Words::Hyperfine {
                    details: args.report.hyperfine_details,
                    by_command: args.report.sort == SortOrder::Command,
                },
                false => Words::Cmdscope,
            },
            time_scale,
            // The front door warns by hyperfine's rules, `run` by its own.
            rules: match args.report.hyperfine_words {
                true => Rules::Hyperfine { made: !r.debug },
                false => Rules::Cmdscope,
            },
            remove_outliers: r.remove_outliers,
            exports,
            store: Choice::new(args.no_store, args.store.store.as_deref()),
            labels,
            settings,
        })
    }

    /// The runner's options: the cells, in their order, and how they run.
    pub(super) fn opts(&self) -> &RunOptions {
        &self.opts
    }

    /// The parameters the cells sweep.
    pub(super) fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }

    /// The search of `--minimize`/`--maximize`, when one was asked for.
    pub(super) fn search(&self) -> Option<&SearchOptions> {
        self.search.as_ref()
    }

    /// `--monitor`, when given.
    pub(super) fn monitor(&self) -> Option<&MonitorSettings> {
        self.settings.monitor.as_ref()
    }

    /// ANSI colours in the terminal report.
    pub(super) fn color(&self) -> bool {
        self.look.color
    }

    /// No terminal report and no notes.
    pub(super) fn quiet(&self) -> bool {
        self.look.quiet
    }

    /// The terminal report in hyperfine's words (its front door).
    pub(super) fn hyperfine_words(&self) -> bool {
        matches!(self.words, Words::Hyperfine { .. })
    }

    /// `--cmdscope-details`: hyperfine's blocks with `run`'s figures added.
    pub(super) fn details(&self) -> bool {
        matches!(self.words, Words::Hyperfine { details: true, .. })
    }

    /// The terminal report's words; `shown`: the front door's blocks
    /// printed as each benchmark ended, and whether the next one's header
    /// line was, as it began.
    pub(super) fn wording(&self, shown: Option<(usize, bool)>) -> Wording {
        match self.words {
            Words::Cmdscope => Wording::Cmdscope,
            Words::Hyperfine {
                details,
                by_command,
            } => Wording::Hyperfine {
                by_command,
                cmdscope_line: !self.look.piped,
                details,
                warmup: self.opts.warmup > 0,
                shown: shown.map_or(0, |s| s.0),
                headed: shown.is_some_and(|s| s.1),
            },
        }
    }

    /// `-u/--time-unit`'s scale, when given.
    pub(super) fn time_scale(&self) -> Option<TimeScale> {
        self.time_scale
    }

    /// Whose rules decide the warnings.
    pub(super) fn warning_rules(&self) -> Rules {
        self.rules
    }

    /// `--remove-outliers`.
    pub(super) fn remove_outliers(&self) -> bool {
        self.remove_outliers
    }

    /// The files written after the last run.
    pub(super) fn exports(&self) -> &Exports {
        &self.exports
    }

    /// The store the session is recorded in, if any.
    pub(super) fn store(&self) -> &Choice {
        &self.store
    }

    /// The session's labels, `(key, value)`.
    pub(super) fn labels(&self) -> &[(String, String)] {
        &self.labels
    }

    /// What the session runs with, as stored with it.
    pub(super) fn settings(&self) -> &Settings {
        &self.settings
    }
}

/// `--output` once for all commands or once per command (an added
/// `--reference` command first, as for the hooks); `--show-output` is
/// `--output=inherit` for all.
fn outputs(r: &Request) -> Result<(Output, Vec<Output>)> {
    let reference = r.plan.reference.is_some();
    let n = r.plan.commands.len() + usize::from(reference);
    if r.show_output {
        if !r.output.is_empty() {
            return Err(OptionError::ShowOutputAndOutput.into());
        }
        return Ok((Output::Inherit, Vec::new()));
    }
    plan::per_command(&r.output, 0, n, reference, "--output")?;
    let mut each: Vec<Output> = r.output.iter().map(|o| parse_output(o)).collect();
    match each.len() {
        0 => Ok((Output::Null, each)),
        1 => Ok((each.remove(0), Vec::new())),
        // The runner gives a cell of no template of its own (the reference)
        // the output for all: the reference's.
        _ if reference => Ok((each.remove(0), each)),
        _ => Ok((Output::Null, each)),
    }
}

/// What counts the runs of `--simulate` or `--counted` (the simulator,
/// or the hardware counters that `--counters` opens) and why, or the one
/// error saying why it cannot count.
fn counting(
    r: &Request,
    cells: &[crate::run::plan::Cell],
) -> Result<(Option<crate::exec::simulate::Simulation>, Option<Counted>)> {
    let Some((i1, d1, ll)) = &r.simulate else {
        return Ok((None, None));
    };
    let flag = match r.counted {
        Some(ask) => format!("--counted={}", ask.name()),
        None => "--simulate".to_string(),
    };
    if r.runs.is_none_or(|n| n < 2) {
        return Err(OptionError::SimulateOneRun(flag).into());
    }
    if r.counters {
        return Err(OptionError::SimulateWithCounters(flag).into());
    }
    if r.until_decided {
        return Err(OptionError::SimulateWithUntilDecided(flag).into());
    }
    if cells.iter().any(|c| c.variant.concurrency.is_some()) {
        return Err(OptionError::SimulateWithConcurrency(flag).into());
    }
    let ask = r.counted.unwrap_or(counted::Ask::Simulator);
    let probe = (ask != counted::Ask::Simulator).then(crate::exec::perf::count_fixed_loop);
    let chosen = counted::decide(ask, probe.as_ref())?;
    let simulation = match chosen.by {
        By::Cachegrind => Some(crate::exec::simulate::Simulation::find(&flag, i1, d1, ll)?),
        By::Hardware => None,
    };
    Ok((simulation, Some(chosen)))
}

/// The runs per command a session counted by the hardware counters needs
/// when `runs` were asked and are fewer: its counts vary a little
/// (interrupts add to them), so they are compared by the exact rank test,
/// which cannot reach `level` (the per-comparison level) with fewer (6
/// pairs at 0.05). None for the simulator, whose repeated counts decide
/// from 2 runs.
fn hardware_runs(by: Option<By>, runs: Option<usize>, order: Order, level: f64) -> Option<usize> {
    if by != Some(By::Hardware) {
        return None;
    }
    let design = match order {
        Order::Interleaved => comparison::Design::Paired,
        Order::Sequential => comparison::Design::Unpaired,
    };
    let need = comparison::discrete_runs_needed(design, level);
    runs.filter(|&n| n < need).map(|_| need)
}

/// The line that says, before a counted session starts, what counts it
/// and why.
fn counted_words(c: &Counted) -> String {
    match c.by {
        By::Hardware => format!(
            "counted by the hardware counters (user space only: instructions, cpu_cycles, \
             branch_misses, ...): {}",
            c.reason
        ),
        By::Cachegrind => format!(
            "counted by cachegrind, the simulator (each run takes 20-100x the command's time; \
             the counts are sim_*): {}",
            c.reason
        ),
    }
}

/// `--minimize`/`--maximize`'s search: up to `--runs` (10 by default)
/// runs per value, at `--alpha` and the precision.
fn search_options(
    args: &RunArgs,
    r: &Request,
    source: &Source,
    precision: Option<f64>,
    parameters: &[Parameter],
) -> Option<SearchOptions> {
    if args.measure.minimize.is_none() && args.measure.maximize.is_none() {
        return None;
    }
    let full_runs = r.runs.map_or(10, |n| n as usize);
    Some(SearchOptions {
        source: source.clone(),
        maximize: args.measure.maximize.is_some(),
        runs: full_runs,
        initial_runs: 3,
        alpha: r.alpha,
        precision: precision.unwrap_or(comparison::DEFAULT_PRECISION),
        per_op: r.plan.variant.ops.is_some() && source.unit() == crate::metrics::Unit::Seconds,
        budget: SearchOptions::default_budget(&crate::search::dims(parameters), full_runs),
        ordered: crate::search::ordered(parameters),
    })
}

/// The session's settings, from the options as [`Decided::new`] decided them.
fn settings(
    args: &RunArgs,
    r: &Request,
    opts: &RunOptions,
    precision: Option<f64>,
    source: &Source,
    exports: &Exports,
    monitor: Option<MonitorSettings>,
) -> Settings {
    Settings {
        benchmark: r.benchmark.clone(),
        cells: opts
            .cells
            .iter()
            .filter(|c| !c.calibration)
            .map(CellSettings::of)
            .collect(),
        order: opts.order,
        policy: opts.policy,
        warmup: opts.warmup,
        timeout: opts.timeout.map(|t| t.as_secs_f64()),
        alpha: opts.alpha,
        precision,
        looks: opts.adaptive.is_some(),
        until_decided: r.until_decided,
        reference: opts.reference,
        named_reference: r.plan.reference.is_some() || r.reference_name.is_some(),
        metric: source.name().to_string(),
        search: args
            .measure
            .minimize
            .as_ref()
            .or(args.measure.maximize.as_ref())
            .map(|parameters| SearchGoal {
                maximize: args.measure.maximize.is_some(),
                parameters: parameters.clone(),
            }),
        shell: opts.shell.clone(),
        exports: exports.stored(),
        simulate: opts.simulate.clone(),
        counted: opts.counted.clone(),
        remove_outliers: r.remove_outliers,
        parameters: r.plan.parameters.clone(),
        commands: (r.plan.commands.iter())
            .map(|c| c.to_string_lossy().into_owned())
            .collect(),
        monitor,
    }
}

/// Two cells of one session with one identity (`store::identity`: the
/// name given with `-n`, else the command and its parameters) are refused
/// before any run, as `import` refuses a file naming a benchmark twice: the
/// store, `check` and the exports tell benchmarks apart by it, and a gate
/// comparing one of the two would leave the other unjudged.
fn distinct_identities(cells: &[plan::Cell]) -> Result<()> {
    let mut seen: Vec<(String, &plan::Cell)> = Vec::new();
    for c in cells.iter().filter(|c| !c.calibration) {
        let identity = store::identity(c);
        if let Some((_, first)) = seen.iter().find(|(i, _)| *i == identity) {
            return Err(OptionError::SameIdentity {
                identity,
                first: first.command.clone(),
                second: c.command.clone(),
                reference: first.template == plan::REFERENCE,
                custom_name: c.custom_name,
            }
            .into());
        }
        seen.push((identity, c));
    }
    Ok(())
}

/// `--min-time`, `--min-runs`/`--max-runs`, `--runs` and `--timeout`.
fn limits(r: &Request) -> Result<(Option<Duration>, RunPolicy)> {
    crate::cli::check_min_time(r.min_time)?;
    if let (Some(min), Some(max)) = (r.min_runs, r.max_runs) {
        if min > max {
            return Err(OptionError::MinRunsAboveMax { min, max }.into());
        }
    }
    let timeout = r
        .timeout
        .map(|t| crate::cli::seconds(t, "--timeout", false))
        .transpose()?;
    let policy = RunPolicy {
        exact: r.runs.map(|n| n as usize),
        min_runs: r.min_runs.map(|n| n as usize).unwrap_or_else(|| {
            // --max-runs below the default minimum lowers the minimum.
            r.max_runs.map_or(10, |m| (m as usize).min(10))
        }),
        max_runs: r.max_runs.map(|n| n as usize),
        min_time: r.min_time,
        first_run: r.first_run,
    };
    Ok((timeout, policy))
}

/// `--metric`: a per-run metric, throughput, or one of the monitor's
/// counts (`monitor_NAME`, with `--monitor`).
fn parse_source(args: &RunArgs, r: &Request) -> Result<Source> {
    let series: Vec<String> = match &args.monitor {
        Some(_) => crate::monitor::parse_matches(&args.matches)?
            .0
            .iter()
            .map(|n| format!("{}{n}", crate::analysis::source::MONITOR_PREFIX))
            .collect(),
        None => Vec::new(),
    };
    Source::parse(&r.metric, &series)
}

/// `--minimize`/`--maximize` and `--monitor`, alone and together; returns
/// the monitor, its patterns and settle time checked.
fn check_goals(
    args: &RunArgs,
    r: &Request,
    cells: &[plan::Cell],
    parameters: &[Parameter],
    source: &Source,
) -> Result<Option<MonitorSettings>> {
    if source.per_batch()
        && cells
            .iter()
            .any(|c| !c.calibration && c.variant.concurrency.is_none())
    {
        return Err(OptionError::MetricNeedsConcurrency(source.name().to_string()).into());
    }
    let search_var = args
        .measure
        .minimize
        .as_ref()
        .or(args.measure.maximize.as_ref());
    if let Some(var) = search_var {
        crate::search::check_searched(var, parameters, r.plan.commands.len())?;
        crate::search::check_goal(
            args.measure.maximize.is_some(),
            source,
            r.plan.variant.ops.is_some(),
        )?;
        if r.plan.reference.is_some() {
            return Err(SearchError::ReferenceAdded.into());
        }
        // The search gives each value the runs its race needs, up to
        // --runs: a floor or a cap on runs would be ignored.
        if let Some(flag) = [("--min-runs", r.min_runs), ("--max-runs", r.max_runs)]
            .into_iter()
            .find_map(|(flag, given)| given.map(|_| flag))
        {
            return Err(SearchError::RunsBound(flag.to_string()).into());
        }
    }
    let patterns = (args.monitor.as_ref())
        .map(|_| crate::monitor::parse_matches(&args.matches))
        .transpose()?;
    let settle = Duration::try_from_secs_f64(args.monitor_settle)
        .ok()
        .filter(|d| d.as_secs_f64() <= 60.0)
        .ok_or(OptionError::MonitorSettle(args.monitor_settle))?;
    Ok(args
        .monitor
        .clone()
        .zip(patterns)
        .map(|(command, (names, regexes))| MonitorSettings {
            command,
            names,
            regexes,
            settle: settle.as_secs_f64(),
        }))
}

/// `--order`, or interleaved unless the commands' hooks differ.
fn run_order(r: &Request, cells: &[plan::Cell], quiet: bool) -> Result<Order> {
    Ok(match r.order {
        Some(Order::Interleaved) => {
            runner::check_interleaved_hooks(cells)?;
            Order::Interleaved
        }
        Some(order) => order,
        None if !runner::hooks_shared(cells) => {
            if !quiet {
                crate::eprint_line!(
                    "cmdscope: note: the commands have different --setup/--cleanup: running them in sequential order (setup, runs, cleanup for each), as hyperfine does"
                );
            }
            Order::Sequential
        }
        None => Order::Interleaved,
    })
}

/// `--precision` as a fraction: the default unless `--runs` fixes the count.
fn parse_precision(r: &Request, order: Order) -> Result<Option<f64>> {
    let precision = match (r.precision, r.runs) {
        (Some(p), _) => {
            crate::cli::check_precision(p)?;
            Some(p / 100.0)
        }
        (None, None) => Some(comparison::DEFAULT_PRECISION),
        (None, Some(_)) => None,
    };
    if r.precision.is_some() && order == Order::Sequential && r.plan.commands.len() > 1 {
        return Err(OptionError::PrecisionNeedsInterleaved.into());
    }
    Ok(precision)
}

/// Says once per command template that it runs through `sh -c`, and why.
fn shell_notes(r: &Request, cells: &[plan::Cell]) {
    let mut told = std::collections::HashSet::new();
    for c in cells {
        if let Some(reason) = &c.shell_reason {
            if told.insert(c.template) {
                // The command may come from a suite's file: shown escaped.
                let command = r
                    .plan
                    .commands
                    .get(c.template)
                    .map_or_else(|| c.command.clone(), |t| t.to_string_lossy().into_owned());
                crate::eprint_line!(
                    "cmdscope: note: '{}' is shell syntax ({}): running it with sh -c, sh's start-up subtracted (-N runs it directly)",
                    crate::output::escape_line(&command),
                    crate::output::escape_line(reason)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cmdscope run` with these arguments (nothing stored).
    fn parse(argv: &[&str]) -> RunArgs {
        use clap::Parser;
        let argv = ["cmdscope", "run", "--no-store"].iter().chain(argv);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Run(a) => *a,
            _ => unreachable!(),
        }
    }

    fn decide(argv: &[&str]) -> Result<Decided> {
        let args = parse(argv);
        Decided::new(&args, &crate::cli::cells::request(&args)?)
    }

    const PIPE: Terminal = Terminal {
        stdout: false,
        stderr: false,
        no_color: false,
    };
    const TTY: Terminal = Terminal {
        stdout: true,
        stderr: true,
        no_color: false,
    };

    #[test]
    fn auto_style_off_a_terminal_is_plain_and_piped() {
        let piped = look(Style::Auto, PIPE, false, 0, false);
        assert_eq!(
            piped,
            Look {
                color: false,
                progress: false,
                quiet: false,
                piped: true
            }
        );
        let tty = look(Style::Auto, TTY, false, 0, false);
        assert_eq!((tty.color, tty.progress, tty.piped), (true, true, false));
        // NO_COLOR takes the colours, not the progress display.
        let no_color = Terminal {
            no_color: true,
            ..TTY
        };
        let plain = look(Style::Auto, no_color, false, 0, false);
        assert_eq!((plain.color, plain.progress), (false, true));
        // Output shown on the terminal: hyperfine's plain style, and its
        // bars are not drawn.
        let shown = look(Style::Auto, TTY, true, 0, true);
        assert_eq!((shown.piped, shown.progress), (true, false));
        // `run` keeps its own progress display there.
        assert!(look(Style::Auto, TTY, true, 0, false).progress);
    }

    #[test]
    fn none_and_an_export_to_stdout_are_quiet() {
        let none = look(Style::None, TTY, false, 0, false);
        assert!(none.quiet && none.piped && !none.progress && !none.color);
        let export = look(Style::Full, TTY, false, 1, false);
        assert!(export.quiet && export.color && export.progress);
        assert!(!look(Style::Full, TTY, false, 0, false).quiet);
        let basic = look(Style::Basic, TTY, false, 0, true);
        assert!(basic.piped && !basic.color && !basic.progress);
    }

    /// Hardware counts need the rank test's runs; the simulator, which
    /// `--counted` falls back to without a counter, keeps the runs asked
    /// for (`tests/simulate.rs` checks the fallback's runs).
    #[test]
    fn hardware_counting_makes_the_runs_its_rank_test_needs() {
        let hw = Some(By::Hardware);
        assert_eq!(
            hardware_runs(hw, Some(2), Order::Interleaved, 0.05),
            Some(6)
        );
        assert_eq!(hardware_runs(hw, Some(6), Order::Interleaved, 0.05), None);
        assert_eq!(hardware_runs(hw, Some(9), Order::Interleaved, 0.05), None);
        // Two candidates against the reference: Bonferroni's 0.025 needs 7.
        assert_eq!(
            hardware_runs(hw, Some(6), Order::Interleaved, 0.025),
            Some(7)
        );
        // Unpaired: 2 / C(8, 4) = 0.029 at 4 runs a side.
        assert_eq!(hardware_runs(hw, Some(2), Order::Sequential, 0.05), Some(4));
        assert_eq!(hardware_runs(hw, None, Order::Interleaved, 0.05), None);
        let sim = Some(By::Cachegrind);
        assert_eq!(hardware_runs(sim, Some(2), Order::Interleaved, 0.05), None);
        assert_eq!(hardware_runs(None, Some(2), Order::Interleaved, 0.05), None);
    }

    #[test]
    fn precision_defaults_unless_runs_fix_the_count() {
        let default = decide(&["true"]).unwrap();
        assert_eq!(
            default.settings().precision,
            Some(comparison::DEFAULT_PRECISION)
        );
        assert!(default.settings().looks);
        let fixed = decide(&["--runs", "5", "true"]).unwrap();
        assert_eq!(fixed.settings().precision, None);
        assert!(!fixed.settings().looks);
        assert_eq!(fixed.opts().policy.exact, Some(5));
        let given = decide(&["--runs", "5", "--precision", "2", "true"]).unwrap();
        assert_eq!(given.settings().precision, Some(0.02));
    }

    #[test]
    fn range_checks_refuse_before_anything_runs() {
        let message = |argv: &[&str]| decide(argv).err().map(|e| e.to_string());
        assert_eq!(
            message(&["--alpha", "0.7", "true"]).as_deref(),
            Some("--alpha must be above 0 and below 0.5, got 0.7")
        );
        assert!(
            message(&["--precision", "0", "true"]).is_some_and(|m| m.starts_with("--precision"))
        );
        assert!(message(&["--min-time", "-1", "true"]).is_some_and(|m| m.contains("--min-time")));
        assert!(message(&[
            "--monitor-settle",
            "61",
            "--monitor",
            "cat",
            "--match",
            "x=y",
            "true"
        ])
        .is_some());
        assert!(message(&["--min-runs", "5", "--max-runs", "3", "true"]).is_some());
    }

    #[test]
    fn the_store_the_search_and_the_words_are_decided_from_the_flags() {
        let d = decide(&[
            "-P",
            "n",
            "1",
            "4",
            "--maximize",
            "n",
            "--ops",
            "10",
            "echo {n}",
        ])
        .unwrap();
        assert!(d.search().is_some_and(|s| s.maximize));
        assert_eq!(d.search().map(|s| s.runs), Some(10));
        let goal = d.settings().search.as_ref().unwrap();
        assert_eq!((goal.maximize, goal.parameters.as_str()), (true, "n"));
        assert_eq!(*d.store(), Choice::Disabled);
        assert_eq!(d.wording(None), Wording::Cmdscope);
        assert_eq!(d.warning_rules(), Rules::Cmdscope);
        let plain = decide(&["--label", "k=v", "-u", "second", "true"]).unwrap();
        assert!(plain.search().is_none());
        assert_eq!(plain.labels(), [("k".to_string(), "v".to_string())]);
        assert_eq!(plain.time_scale(), Some(TimeScale::Second));
        assert!(!plain.exports().asked());
    }
}
