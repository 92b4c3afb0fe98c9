//! `cmdscope run`: from parsed arguments to an exit code. Plans cells,
//! drives the runner, writes exports and the store first, the terminal
//! report last. `--suite` runs are in `suite.rs`.

pub mod suite;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use crate::analysis;
use crate::analysis::comparison;
use crate::analysis::sequential::Sequential;
use crate::cli::{RunArgs, SortOrder, Style};
use crate::error::{exit, Error, Result};
use crate::exec::{Input, Output};
use crate::report::markdown::{Markup, Rows};
use crate::report::{self, terminal::Paint};
use crate::run::cells::{added_reference, plan_cells, shell_mode};
use crate::run::plan;
use crate::run::runner::{self, IgnoreFailure, RunOptions};
use crate::run::schedule::{Order, RunPolicy};
use crate::store::record::{self, Choice, Recorder};
use crate::store::{self, Machine, NewSession};

fn positive_seconds(value: f64, flag: &str) -> Result<Duration> {
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(Error::Usage(format!(
            "{flag} must be a positive number of seconds, got {value}"
        )))
    }
}

fn parse_output(text: &str) -> Output {
    match text {
        "null" => Output::Null,
        "pipe" => Output::Pipe,
        "inherit" => Output::Inherit,
        path => Output::File(PathBuf::from(path)),
    }
}

/// `--output` once for all commands or once per command; `--show-output`
/// is `--output=inherit` for all.
fn outputs(args: &RunArgs) -> Result<(Output, Vec<Output>)> {
    let n = args.commands.len();
    if args.show_output {
        if !args.output.is_empty() {
            return Err(Error::Usage(
                "--show-output and --output both say where output goes: give one".into(),
            ));
        }
        return Ok((Output::Inherit, Vec::new()));
    }
    match args.output.len() {
        0 => Ok((Output::Null, Vec::new())),
        1 => Ok((parse_output(&args.output[0]), Vec::new())),
        k if k == n => Ok((
            Output::Null,
            args.output.iter().map(|o| parse_output(o)).collect(),
        )),
        k => Err(Error::Usage(format!(
            "--output was given {k} times for {n} commands: give it once (for all) or once per command"
        ))),
    }
}

/// Whether any export file was asked for.
fn exports_asked(args: &RunArgs) -> bool {
    [
        &args.export_json,
        &args.export_csv,
        &args.export_markdown,
        &args.export_asciidoc,
        &args.export_orgmode,
    ]
    .iter()
    .any(|e| e.is_some())
}

pub fn run(args: &RunArgs) -> Result<i32> {
    if args.suite.suite.is_some() {
        return crate::commands::run::suite::run(args);
    }
    let (mut cells, parameters) = plan_cells(args)?;
    let reference_cmd = added_reference(args);
    let shell = shell_mode(args)?;
    if let Some(keep) = &args.suite.only_cells {
        // A suite partition: only its cells (and the shell calibration).
        cells.retain(|c| c.calibration || keep.contains(&store::identity(c)));
    }
    if !(args.min_time.is_finite() && args.min_time >= 0.0) {
        return Err(Error::Usage(format!(
            "--min-time must be a non-negative number of seconds, got {}",
            args.min_time
        )));
    }
    if let (Some(min), Some(max)) = (args.min_runs, args.max_runs) {
        if min > max {
            return Err(Error::Usage(format!(
                "--min-runs {min} is larger than --max-runs {max}"
            )));
        }
    }
    let timeout = args
        .timeout
        .map(|t| positive_seconds(t, "--timeout"))
        .transpose()?;
    let policy = RunPolicy {
        exact: args.runs.map(|r| r as usize),
        min_runs: args.min_runs.map(|r| r as usize).unwrap_or_else(|| {
            // --max-runs below the default minimum lowers the minimum.
            args.max_runs.map_or(10, |m| (m as usize).min(10))
        }),
        max_runs: args.max_runs.map(|r| r as usize),
        min_time: args.min_time,
    };
    let metric = crate::metrics::Metric::from_name(&args.metric).ok_or_else(|| {
        let names: Vec<&str> = crate::metrics::Metric::ALL
            .iter()
            .map(|m| m.name())
            .collect();
        Error::Usage(format!(
            "unknown --metric '{}': one of {}",
            args.metric,
            names.join(", ")
        ))
    })?;
    let search_var = args.minimize.as_ref().or(args.maximize.as_ref());
    if let Some(var) = search_var {
        crate::search::check_searched(var, &parameters, args.commands.len())?;
        crate::search::check_goal(args.maximize.is_some(), metric, args.ops.is_some())?;
        if reference_cmd.is_some() {
            return Err(Error::Usage(
                "--minimize/--maximize searches one command: remove the added --reference command"
                    .into(),
            ));
        }
    }
    if args.monitor.is_some() {
        crate::explain::run_monitor::parse_matches(&args.matches)?;
        if search_var.is_some() {
            return Err(Error::Usage(
                "--monitor counts per run of a whole grid: it does not combine with --minimize/--maximize".into(),
            ));
        }
    }
    let monitor_settle = Duration::try_from_secs_f64(args.monitor_settle)
        .ok()
        .filter(|d| d.as_secs_f64() <= 60.0)
        .ok_or_else(|| {
            Error::Usage(format!(
                "--monitor-settle must be between 0 and 60 seconds, got {}",
                args.monitor_settle
            ))
        })?;
    if args.plot.is_some() && parameters.is_empty() {
        return Err(Error::Usage(
            "--plot needs a parameter sweep (-P or -L)".into(),
        ));
    }
    if let Some(p) = &args.plot {
        crate::output::check_writable(p)?;
    }
    let exports = [
        &args.export_json,
        &args.export_csv,
        &args.export_markdown,
        &args.export_asciidoc,
        &args.export_orgmode,
    ];
    let stdout_exports = exports
        .iter()
        .filter(|p| p.as_deref().is_some_and(crate::output::is_stdout))
        .count();
    if stdout_exports > 1 {
        return Err(Error::Usage(
            "only one export can go to stdout ('-')".into(),
        ));
    }
    for path in exports.into_iter().flatten() {
        crate::output::check_writable(path)?;
    }

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

    crate::cli::check_alpha(args.alpha)?;
    let order = match args.order {
        Some(Order::Interleaved) if !runner::hooks_shared(&cells) => {
            return Err(Error::Usage(
                "the commands have different --setup/--cleanup, which cannot bracket interleaved runs: use --order sequential".into(),
            ))
        }
        Some(order) => order,
        None if !runner::hooks_shared(&cells) => {
            if !quiet {
                crate::eprint_line!(
                    "cmdscope: note: the commands have different --setup/--cleanup: running them in sequential order (setup, runs, cleanup for each), as hyperfine does"
                );
            }
            Order::Sequential
        }
        None => Order::Interleaved,
    };
    let precision = match (args.precision, args.runs) {
        (Some(p), _) if !(p.is_finite() && p > 0.0 && p < 100.0) => {
            return Err(Error::Usage(format!(
                "--precision must be a percentage between 0 and 100, got {p}"
            )))
        }
        (Some(p), _) => Some(p / 100.0),
        (None, None) => Some(comparison::DEFAULT_PRECISION),
        (None, Some(_)) => None,
    };
    if args.precision.is_some() && order == Order::Sequential && args.commands.len() > 1 {
        return Err(Error::Usage(
            "--precision needs interleaved order: comparisons are settled block by block".into(),
        ));
    }
    let adaptive = match (precision, order) {
        (Some(p), Order::Interleaved) => Some(Sequential::new(args.alpha, p)),
        _ => None,
    };
    let real: Vec<&crate::run::plan::Cell> = cells.iter().filter(|c| !c.calibration).collect();
    let reference = match (&args.reference, reference_cmd) {
        (None, _) | (Some(_), Some(_)) => 0,
        (Some(name), None) => real
            .iter()
            .position(|c| &c.name == name || &c.command == name)
            .unwrap_or(0),
    };
    let (output, per_command_output) = outputs(args)?;
    let shell_name = match &shell {
        plan::ShellMode::Always(words) => Some(words.join(" ")),
        _ if cells.iter().any(|c| c.shell) => Some("sh".to_string()),
        _ => None,
    };
    let opts = RunOptions {
        cells,
        policy,
        order,
        warmup: args.warmup,
        seed: args.seed.unwrap_or_else(rand::random),
        timeout,
        stop_on_timeout: args.stop_on_timeout,
        ignore_failure: IgnoreFailure::parse(args.ignore_failure.as_deref())?,
        input: match args.input.as_str() {
            "null" => Input::Null,
            path => Input::File(PathBuf::from(path)),
        },
        output,
        outputs: per_command_output,
        counters: args.counters,
        show_progress: progress && args.style != Style::None,
        shell: shell_name,
        adaptive,
        reference,
        alpha: args.alpha,
    };
    if !quiet {
        let mut told = std::collections::HashSet::new();
        for c in &opts.cells {
            if let Some(reason) = &c.shell_reason {
                if told.insert(c.template) {
                    crate::eprint_line!(
                        "cmdscope: note: '{}' is shell syntax ({reason}): running it with sh -c, sh's start-up subtracted (-N runs it directly)",
                        args.commands
                            .get(c.template)
                            .map_or_else(|| c.command.clone(), |t| t.to_string_lossy().into_owned())
                    );
                }
            }
        }
    }
    let labels = store::parse_labels(&args.labels)?;
    // Started before the store is opened: one that cannot start ends the
    // session before anything is recorded.
    let mut monitor = match &args.monitor {
        Some(cmd) => Some(crate::explain::run_monitor::RunMonitor::start(
            cmd,
            &args.matches,
            monitor_settle,
            opts.cells.len(),
        )?),
        None => None,
    };
    let mut recorder = open_recorder(args, labels, &opts);
    let maximize = args.maximize.is_some();
    let mut search = None;
    let mut session = if search_var.is_some() {
        let full_runs = args.runs.map_or(10, |r| r as usize);
        let sopts = crate::search::SearchOptions {
            metric,
            maximize,
            runs: full_runs,
            initial_runs: 3,
            alpha: args.alpha,
            precision: precision.unwrap_or(comparison::DEFAULT_PRECISION),
            per_op: args.ops.is_some() && metric.unit() == crate::metrics::Unit::Seconds,
            budget: crate::search::SearchOptions::default_budget(
                parameters.iter().map(|p| p.values.len()).product(),
                full_runs,
            ),
        };
        let mut result = crate::search::search(&opts, &sopts, &parameters, &mut recorder)?;
        recorder.keep_search(record::search_answer(&result, &parameters));
        let session = crate::search::as_session(&mut result, &opts.cells);
        search = Some(result);
        session
    } else if let Some(m) = monitor.as_mut() {
        runner::run_with_sink(&opts, &mut m.sink(&mut recorder))?
    } else {
        runner::run_with_sink(&opts, &mut recorder)?
    };
    let monitor_counts = monitor.map(|m| m.finish());
    if args.remove_outliers {
        analysis::remove_outliers(&mut session);
    }
    let mut analyses = analysis::analyse(&session);
    for (a, r) in analyses.iter_mut().zip(&session.results) {
        a.warnings.extend(crate::analysis::drift::warnings(
            r,
            session.order,
            session.results.len(),
        ));
    }
    let mut comparisons = comparison::compare_cells(
        &session.results,
        session.reference,
        session.order,
        session.final_alpha,
        precision.unwrap_or(comparison::DEFAULT_PRECISION),
        session.rss_floor,
    );
    if let Some(result) = &search {
        // The searched metric's comparisons are the search's own (unpaired:
        // runs of different rounds are not pairs), so the summary and the
        // search's set come from one analysis.
        comparisons.retain(|c| c.metric != metric.name());
        comparisons.extend(result.comparisons(&opts.cells));
    }
    if let Some(c) = &monitor_counts {
        comparisons.extend(crate::explain::run_monitor::compare(
            c,
            &session,
            precision.unwrap_or(comparison::DEFAULT_PRECISION),
        ));
        crate::explain::run_monitor::store(c, &mut recorder);
    }

    let mut sweep = crate::analysis::sweep::build(
        &session,
        &analyses,
        &parameters,
        metric,
        maximize,
        &args
            .commands
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        &crate::analysis::sweep::SetRules {
            comparisons: &comparisons,
            alpha: session.final_alpha,
            precision: precision.unwrap_or(comparison::DEFAULT_PRECISION),
        },
    );
    if let (Some(result), Some(sweep)) = (&search, sweep.as_mut()) {
        crate::search::mark_sweep(result, sweep);
    }
    // Exports are written whatever happened, so an interrupted or failed
    // session still leaves its finished runs behind; but a session that
    // failed before its first run leaves existing exports as they were.
    // Exports and the store come before the terminal report, which may
    // find its reader gone (`| head -1`).
    let measured = session.results.iter().any(|r| !r.samples.is_empty());
    let write_exports = measured || session.failure.is_none();
    let mut export_error = None;
    if write_exports {
        if let Some(p) = &args.export_json {
            let search_json = search
                .as_ref()
                .map(|result| crate::search::to_json(result, &parameters, metric, maximize));
            let mut text = report::json::render_with_search(
                &session,
                &analyses,
                serde_json::to_value(&comparisons).unwrap_or_default(),
                search_json,
            );
            if let Some(c) = &monitor_counts {
                text = crate::explain::run_monitor::add_to_json(&text, c);
            }
            if let Err(e) = crate::output::write_file(p, text.as_bytes()) {
                export_error.get_or_insert(e);
            }
        }
        if let Some(p) = &args.export_csv {
            if let Err(e) = report::csv::render(&session, &analyses)
                .and_then(|t| crate::output::write_file(p, t.as_bytes()))
            {
                export_error.get_or_insert(e);
            }
        }
        let rows = match args.sort {
            SortOrder::Auto | SortOrder::Command => Rows::Command,
            SortOrder::MeanTime => Rows::MeanTime,
        };
        for (path, markup) in [
            (&args.export_markdown, Markup::Markdown),
            (&args.export_asciidoc, Markup::AsciiDoc),
            (&args.export_orgmode, Markup::OrgMode),
        ] {
            if let Some(p) = path {
                let reference = args.reference.is_some().then_some(session.reference);
                let text =
                    report::markdown::render_markup(&session, &analyses, markup, rows, reference);
                if let Err(e) = crate::output::write_file(p, text.as_bytes()) {
                    export_error.get_or_insert(e);
                }
            }
        }
        if let (Some(p), Some(sweep)) = (&args.plot, &sweep) {
            if let Err(e) =
                crate::output::write_file(p, crate::analysis::sweep::render_svg(sweep).as_bytes())
            {
                export_error.get_or_insert(e);
            }
        }
    }
    // A store failure is an error (exit 2) when the user named the store,
    // a warning when it is the default one; the exports are written either way.
    let store_error = recorder.finish(&session).map(Error::Store);
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
    let store_error = store_error.map(|e| (e, announced));
    if !quiet {
        let paint = Paint { enabled: color };
        crate::output::print(&report::terminal::render(
            &session,
            &analyses,
            &comparisons,
            paint,
        ));
        if let Some(sweep) = &sweep {
            crate::output::print(&crate::analysis::sweep::render_text(sweep, paint));
        }
        if let Some(result) = &search {
            crate::output::print(&crate::search::render_text(
                result,
                &parameters,
                metric,
                maximize,
                paint,
            ));
        }
        if let Some(c) = &monitor_counts {
            // The monitor command and the names are typed, not trusted to the terminal.
            crate::output::print(&crate::output::escape_controls(
                &crate::explain::run_monitor::render_text(c, &session),
            ));
        }
    }
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
fn open_recorder(args: &RunArgs, labels: Vec<(String, String)>, opts: &RunOptions) -> Recorder {
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
