//! One benchmark of `cmdscope run`: from parsed arguments to an exit
//! code, in named steps: prepare (plan the cells, check every option),
//! measure, analyse, then the exports and the store's session end first
//! and the terminal report last. Formatting is the report's.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use super::analysed;
use super::blocks::Blocks;
use super::exports::{check_exports, export, export_paths, exports_asked, parse_output};
use crate::analysis;
use crate::analysis::comparison;
use crate::analysis::sequential::Sequential;
use crate::analysis::source::Source;
use crate::cli::run::{RunArgs, SortOrder, Style, TimeUnit};
use crate::error::{exit, Error, OptionError, Result, SearchError};
use crate::exec::{Input, Output};
use crate::explain::run_monitor::Counts;
use crate::report;
use crate::report::paint::Paint;
use crate::run::counted::{self, By, Counted};
use crate::run::events::Fanout;
use crate::run::plan::{self, Parameter};
use crate::run::progress::HyperfineBars;
use crate::run::request::Request;
use crate::run::runner::{self, IgnoreFailure, RunOptions};
use crate::run::schedule::{Order, RunPolicy};
use crate::run::session::Session;
use crate::run::settings::{CellSettings, Export, SearchGoal, Settings};
use crate::search::SearchResult;
use crate::store::record::{self, Choice, Recorder};
use crate::store::{self, Machine, NewSession};

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

/// Everything settled before the first run.
struct Prepared {
    opts: RunOptions,
    parameters: Vec<Parameter>,
    /// What sweeps and searches compare (`--metric`).
    source: Source,
    /// `--precision` as a fraction; None with `--runs` and no `--precision`.
    precision: Option<f64>,
    monitor_settle: Duration,
    /// ANSI colours in the terminal report.
    color: bool,
    /// No terminal report and no notes: `--style none`, or an export to stdout.
    quiet: bool,
    /// hyperfine's plain style, which its users pipe: `--style basic` or
    /// `none`, or `auto` where hyperfine picks basic (standard output not
    /// a terminal, or the commands' output shown).
    piped: bool,
    /// What the session runs with, as stored with it.
    settings: Settings,
}

/// What the session measured, and the store it was recorded in.
struct Measured {
    session: Session,
    /// With the front door's blocks printed as each benchmark ended: how
    /// many were, and whether the next one's header line was, as it began.
    shown: Option<(usize, bool)>,
    search: Option<SearchResult>,
    monitor: Option<Counts>,
    recorder: Recorder,
}

pub fn run(args: &RunArgs) -> Result<i32> {
    let request = crate::cli::cells::request(args)?;
    run_request(args, &request)
}

/// Measures what `request` asks for; `args` give the session's exports,
/// terminal, store and monitor (a suite's benchmarks share them).
pub fn run_request(args: &RunArgs, request: &Request) -> Result<i32> {
    if let Some(unit) = args.time_unit {
        crate::units::force_time_scale(match unit {
            TimeUnit::Microsecond => crate::units::TimeScale::Microsecond,
            TimeUnit::Millisecond => crate::units::TimeScale::Millisecond,
            TimeUnit::Second => crate::units::TimeScale::Second,
        });
    }
    let prepared = prepare(args, request)?;
    let measured = measure(args, request, &prepared)?;
    let Measured {
        mut session,
        shown,
        search,
        monitor,
        mut recorder,
    } = measured;
    let analysed = analysed::analyse(
        &prepared.settings,
        warning_rules(args, request),
        &mut session,
        search.as_ref().map(|result| analysed::Searched {
            result,
            cells: &prepared.opts.cells,
        }),
        monitor.as_ref(),
    )?;
    let report = analysed::report(
        &prepared.settings,
        &session,
        &analysed,
        search.as_ref(),
        monitor.as_ref(),
    );
    // Exports and the store come before the terminal report, which may
    // find its reader gone (`| head -1`).
    let export_error = export(args, &report);
    let store_error = finish_store(&mut recorder, &session);
    let paint = Paint {
        enabled: prepared.color,
    };
    let wording = if args.hyperfine_words {
        report::terminal::Wording::Hyperfine {
            by_command: args.sort == SortOrder::Command,
            cmdscope_line: !prepared.piped,
            details: args.hyperfine_details,
            warmup: args.warmup > 0,
            shown: shown.map_or(0, |s| s.0),
            headed: shown.is_some_and(|s| s.1),
        }
    } else {
        report::terminal::Wording::Cmdscope
    };
    // hyperfine stops at a failure with what it printed as the benchmarks
    // ended: no further block, no summary (the error follows).
    let stopped = shown.is_some() && session.failure.is_some();
    if prepared.quiet && args.hyperfine_words && !stopped {
        // hyperfine writes its warnings to standard error whatever the
        // style, `none` and an export to standard output included.
        for part in report::terminal::render_parts(&report, paint, wording) {
            if part.stderr {
                crate::output::print_err_text(&part.text);
            }
        }
    }
    if !prepared.quiet && !stopped {
        analysed::print(&report, paint, wording);
        if let Some(note) = args
            .hyperfine_words
            .then(|| report::terminal::zero_note(&report, paint))
            .flatten()
        {
            crate::eprint_line!("{note}");
        }
    }
    exit_status(args, session, export_error, store_error)
}

/// Plans the cells and checks every option, before anything runs.
fn prepare(args: &RunArgs, r: &Request) -> Result<Prepared> {
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
    let monitor_settle = check_goals(args, r, &cells, &parameters, &source)?;
    let stdout_exports = check_exports(args, r, &parameters)?;

    let stdout_term = std::io::stdout().is_terminal();
    let stderr_term = std::io::stderr().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let (color, progress) = match args.style {
        Style::Auto => (stdout_term && !no_color, stderr_term),
        Style::Full => (!no_color, true),
        Style::Basic | Style::None => (false, false),
        Style::Nocolor => (false, true),
        Style::Color => (!no_color, false),
    };
    let quiet = args.style == Style::None || stdout_exports > 0;
    let piped = match args.style {
        Style::Basic | Style::None => true,
        Style::Auto => {
            !stdout_term || args.show_output || args.output.iter().any(|o| o == "inherit")
        }
        Style::Full | Style::Nocolor | Style::Color => false,
    };

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
    let real: Vec<&crate::run::plan::Cell> = cells.iter().filter(|c| !c.calibration).collect();
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
        show_progress: match args.style {
            Style::Auto if args.hyperfine_words => !piped,
            _ => progress && args.style != Style::None,
        },
        machine_warnings: !args.hyperfine_words,
        // hyperfine draws its bars in its full and nocolor styles (`auto`
        // where it picks them), cmdscope's own where `run` would.
        hyperfine_bars: args.hyperfine_words.then_some(HyperfineBars {
            green: color.then_some(crate::report::paint::green as fn(&str) -> String),
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
        hyperfine_variables: args.hyperfine_words,
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
    let settings = settings(args, r, &opts, precision, &source);
    Ok(Prepared {
        opts,
        parameters,
        source,
        precision,
        monitor_settle,
        color,
        quiet,
        piped,
        settings,
    })
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

/// The session's settings, from the options as [`prepare`] decided them.
fn settings(
    args: &RunArgs,
    r: &Request,
    opts: &RunOptions,
    precision: Option<f64>,
    source: &Source,
) -> Settings {
    let exports = export_paths(&args.exports)
        .map(|(flag, path)| (flag.format, path))
        .chain(args.plot.as_ref().map(|path| ("svg", path)));
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
            .minimize
            .as_ref()
            .or(args.maximize.as_ref())
            .map(|parameters| SearchGoal {
                maximize: args.maximize.is_some(),
                parameters: parameters.clone(),
            }),
        shell: opts.shell.clone(),
        exports: exports
            .map(|(format, path)| Export {
                format: format.to_string(),
                path: path.display().to_string(),
            })
            .collect(),
        simulate: opts.simulate.clone(),
        counted: opts.counted.clone(),
        remove_outliers: r.remove_outliers,
        parameters: r.plan.parameters.clone(),
        commands: (r.plan.commands.iter())
            .map(|c| c.to_string_lossy().into_owned())
            .collect(),
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
        Some(_) => crate::explain::run_monitor::parse_matches(&args.matches)?
            .0
            .iter()
            .map(|n| format!("{}{n}", crate::analysis::source::MONITOR_PREFIX))
            .collect(),
        None => Vec::new(),
    };
    Source::parse(&r.metric, &series)
}

/// `--minimize`/`--maximize` and `--monitor`, alone and together; returns
/// the monitor's settle time.
fn check_goals(
    args: &RunArgs,
    r: &Request,
    cells: &[plan::Cell],
    parameters: &[Parameter],
    source: &Source,
) -> Result<Duration> {
    if source.per_batch()
        && cells
            .iter()
            .any(|c| !c.calibration && c.variant.concurrency.is_none())
    {
        return Err(OptionError::MetricNeedsConcurrency(source.name().to_string()).into());
    }
    let search_var = args.minimize.as_ref().or(args.maximize.as_ref());
    if let Some(var) = search_var {
        crate::search::check_searched(var, parameters, r.plan.commands.len())?;
        crate::search::check_goal(
            args.maximize.is_some(),
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
    if args.monitor.is_some() {
        crate::explain::run_monitor::parse_matches(&args.matches)?;
    }
    Duration::try_from_secs_f64(args.monitor_settle)
        .ok()
        .filter(|d| d.as_secs_f64() <= 60.0)
        .ok_or_else(|| OptionError::MonitorSettle(args.monitor_settle).into())
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

/// Runs the session (or the optimum search), recording every run.
fn measure(args: &RunArgs, r: &Request, p: &Prepared) -> Result<Measured> {
    let labels = store::parse_labels(&r.labels)?;
    // Started before the store is opened: one that cannot start ends the
    // session before anything is recorded.
    let mut monitor = match &args.monitor {
        Some(cmd) => Some(crate::explain::run_monitor::RunMonitor::start(
            cmd,
            &args.matches,
            p.monitor_settle,
            p.opts.cells.len(),
        )?),
        None => None,
    };
    let mut recorder = open_recorder(args, labels, &p.opts, &p.settings);
    let mut search = None;
    let mut blocks = early_blocks(args, r, p);
    let session = if args.minimize.is_some() || args.maximize.is_some() {
        let full_runs = r.runs.map_or(10, |n| n as usize);
        let sopts = crate::search::SearchOptions {
            source: p.source.clone(),
            maximize: args.maximize.is_some(),
            runs: full_runs,
            initial_runs: 3,
            alpha: r.alpha,
            precision: p.precision.unwrap_or(comparison::DEFAULT_PRECISION),
            per_op: r.plan.variant.ops.is_some()
                && p.source.unit() == crate::metrics::Unit::Seconds,
            budget: crate::search::SearchOptions::default_budget(
                &crate::search::dims(&p.parameters),
                full_runs,
            ),
            ordered: crate::search::ordered(&p.parameters),
        };
        let series = monitor
            .as_mut()
            .map(|m| m as &mut dyn crate::search::SeriesObserver);
        let mut result =
            crate::search::search(&p.opts, &sopts, &p.parameters, &mut recorder, series)?;
        recorder.keep_search(crate::search::stored_answer(&result, &p.parameters));
        let session = crate::search::as_session(&mut result, &p.opts.cells);
        search = Some(result);
        session
    } else if let Some(m) = monitor.as_mut() {
        runner::run_observed(&p.opts, &mut Fanout(vec![m, &mut recorder]))?
    } else if let Some(b) = blocks.as_mut() {
        runner::run_observed(&p.opts, &mut Fanout(vec![b, &mut recorder]))?
    } else {
        runner::run_observed(&p.opts, &mut recorder)?
    };
    let mut monitor = monitor.map(|m| m.finish());
    if let (Some(c), Some(result)) = (monitor.as_mut(), &search) {
        // The counts follow the grid's cells, as the stored runs do; the
        // report's session holds the tried values only.
        crate::explain::run_monitor::store(c, &mut recorder);
        c.select(&result.tried);
    } else if let Some(c) = &monitor {
        crate::explain::run_monitor::store(c, &mut recorder);
    }
    Ok(Measured {
        session,
        shown: blocks.as_ref().map(Blocks::shown),
        search,
        monitor,
        recorder,
    })
}

/// The front door's printer of each benchmark's block as it ends, where
/// hyperfine prints it then: in sequential order, for a plain session
/// (`--cmdscope-details`, the monitor, a search, concurrency and
/// simulation add lines that need the whole session: all at the end).
fn early_blocks(args: &RunArgs, r: &Request, p: &Prepared) -> Option<Blocks> {
    let plain = !args.hyperfine_details
        && args.monitor.is_none()
        && args.minimize.is_none()
        && args.maximize.is_none()
        && p.opts.simulate.is_none()
        && p.opts.cells.iter().all(|c| c.variant.concurrency.is_none());
    (args.hyperfine_words && p.opts.order == Order::Sequential && plain).then(|| {
        Blocks::new(
            &p.opts.cells,
            p.opts.timeout,
            super::blocks::Style {
                rules: warning_rules(args, r),
                remove_outliers: r.remove_outliers,
                paint: Paint { enabled: p.color },
                warmup: args.warmup > 0,
                quiet: p.quiet,
            },
        )
    })
}

/// The front door warns by hyperfine's rules, `run` by its own.
fn warning_rules(args: &RunArgs, r: &Request) -> analysis::warning::Rules {
    if args.hyperfine_words {
        analysis::warning::Rules::Hyperfine { made: !r.debug }
    } else {
        analysis::warning::Rules::Cmdscope
    }
}

/// Ends the store's session. A store failure is an error (exit 2) when the
/// user named the store, a warning when it is the default one; the flag
/// says the error was already announced before the first run.
fn finish_store(recorder: &mut Recorder, session: &Session) -> Option<(Error, bool)> {
    let store_error = recorder.finish(session).map(Error::Store);
    let store_error = match store_error {
        Some(e) if !recorder.explicit() => {
            if recorder.open_error().is_none() {
                crate::eprint_line!(
                    "cmdscope: warning: results not stored: {e} (use --no-store to skip the store)"
                );
            }
            None
        }
        other => other,
    };
    // A named store that could not be opened was reported as an error
    // before the first run: said once, it still decides the exit status.
    let announced = recorder.explicit() && recorder.open_error().is_some();
    store_error.map(|e| (e, announced))
}

/// The exit status: the session's failure, then the exports', then the
/// store's, then runs that all timed out.
fn exit_status(
    args: &RunArgs,
    session: Session,
    export_error: Option<Error>,
    store_error: Option<(Error, bool)>,
) -> Result<i32> {
    if let Some(failure) = session.failure {
        for e in export_error.iter() {
            crate::eprint_line!("cmdscope: error: {e}");
        }
        if let Some((e, false)) = &store_error {
            crate::eprint_line!("cmdscope: error: {e}");
        }
        if matches!(failure, Error::Interrupted) {
            // Say that finished runs were exported only when they were.
            let exported = export_error.is_none() && (exports_asked(args) || args.plot.is_some());
            crate::eprint_line!(
                "cmdscope: interrupted{}",
                if exported {
                    "; finished runs were exported"
                } else {
                    ""
                }
            );
            return Ok(exit::INTERRUPTED);
        }
        return Err(failure);
    }
    if let Some(e) = export_error {
        if let Some((s, false)) = &store_error {
            crate::eprint_line!("cmdscope: error: {s}");
        }
        return Err(e);
    }
    match store_error {
        Some((_, true)) => return Ok(exit::USAGE),
        Some((e, false)) => return Err(e),
        None => {}
    }
    // A benchmark whose every run was killed measured nothing: that is a
    // failure, not a result (its exports list the killed runs).
    let killed: Vec<String> = session
        .results
        .iter()
        .filter(|r| !r.cell.calibration && !r.samples.is_empty())
        .filter(|r| r.samples.iter().all(|s| s.timed_out))
        .map(|r| format!("'{}'", r.cell.name))
        .collect();
    if !killed.is_empty() {
        let limit = session
            .timeout
            .map(|t| format!(" (--timeout {} s)", t.as_secs_f64()))
            .unwrap_or_default();
        return Err(Error::Failed(format!(
            "every run of {} timed out{limit}: no time was measured",
            killed.join(", ")
        )));
    }
    Ok(exit::OK)
}

/// Opens the results store before the first run, so that a bad store is
/// reported at once; measuring goes on without it.
fn open_recorder(
    args: &RunArgs,
    labels: Vec<(String, String)>,
    opts: &RunOptions,
    settings: &Settings,
) -> Recorder {
    let choice = Choice::new(args.no_store, args.store.store.as_deref());
    if choice == Choice::Disabled {
        return Recorder::disabled();
    }
    let meta = NewSession {
        started: std::time::SystemTime::now(),
        source: "run".into(),
        command_line: record::command_line(),
        order: serde_json::to_value(opts.order)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string)),
        seed: Some(opts.seed.to_string()),
        shell: opts.shell.clone(),
        machine: Machine::current(),
        labels,
        settings: Some(settings.to_json()),
    };
    let recorder = Recorder::open(&choice, meta, &opts.cells);
    if let Some(e) = recorder.open_error() {
        if recorder.explicit() {
            crate::eprint_line!("cmdscope: error: {e} (measuring anyway; exit status 2)");
        } else {
            crate::eprint_line!(
                "cmdscope: warning: results will not be stored (measuring anyway): {e}"
            );
        }
    }
    recorder
}
