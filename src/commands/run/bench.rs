//! One benchmark of `cmdscope run`: from parsed arguments to an exit
//! code, in named steps: decide (`decided`: plan the cells, check every
//! option, settle every default), measure, analyse, then the exports and
//! the store's session end first and the terminal report last. Formatting
//! is the report's.

use super::analysed;
use super::blocks::Blocks;
use super::decided::Decided;
use crate::cli::run::RunArgs;
use crate::error::{exit, Error, Result};
use crate::monitor::Counts;
use crate::report;
use crate::report::paint::Paint;
use crate::run::events::{Fanout, Observer};
use crate::run::request::Request;
use crate::run::schedule::Order;
use crate::run::session::Session;
use crate::runner;
use crate::search::SearchResult;
use crate::store::record::{self, Choice, Recorder};
use crate::store::{Machine, NewSession};

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
    let decided = Decided::new(args, request)?;
    if let Some(scale) = decided.time_scale() {
        crate::units::force_time_scale(scale);
    }
    let measured = measure(&decided)?;
    let Measured {
        mut session,
        shown,
        search,
        monitor,
        mut recorder,
    } = measured;
    let analysed = analysed::analyse(
        decided.settings(),
        decided.warning_rules(),
        &mut session,
        search.as_ref().map(|result| analysed::Searched {
            result,
            cells: &decided.opts().cells,
        }),
        monitor.as_ref(),
    )?;
    let report = analysed::report(
        decided.settings(),
        &session,
        &analysed,
        search.as_ref(),
        monitor.as_ref(),
    );
    // Exports and the store come before the terminal report, which may
    // find its reader gone (`| head -1`).
    let export_error = decided.exports().write(&report);
    let store_error = finish_store(&mut recorder, &session);
    let paint = Paint {
        enabled: decided.color(),
    };
    let wording = decided.wording(shown);
    // hyperfine stops at a failure with what it printed as the benchmarks
    // ended: no further block, no summary (the error follows).
    let stopped = shown.is_some() && session.failure.is_some();
    if decided.quiet() && decided.hyperfine_words() && !stopped {
        // hyperfine writes its warnings to standard error whatever the
        // style, `none` and an export to standard output included.
        for part in report::terminal::render_parts(&report, paint, wording) {
            if part.stderr {
                crate::output::print_err_text(&part.text);
            }
        }
    }
    if !decided.quiet() && !stopped {
        analysed::print(&report, paint, wording);
        if let Some(note) = decided
            .hyperfine_words()
            .then(|| report::terminal::zero_note(&report, paint))
            .flatten()
        {
            crate::eprint_line!("{note}");
        }
    }
    exit_status(&decided, session, export_error, store_error)
}

/// Runs the session (or the optimum search), recording every run.
fn measure(d: &Decided) -> Result<Measured> {
    let opts = d.opts();
    // Started before the store is opened: one that cannot start ends the
    // session before anything is recorded.
    let mut monitor = match d.monitor() {
        Some(m) => Some(crate::monitor::RunMonitor::start(m, opts.cells.len())?),
        None => None,
    };
    let mut recorder = open_recorder(d);
    let mut search = None;
    let mut blocks = early_blocks(d);
    let session = if let Some(sopts) = d.search() {
        let series = monitor
            .as_mut()
            .map(|m| m as &mut dyn crate::search::SeriesObserver);
        let mut result = crate::search::search(opts, sopts, d.parameters(), &mut recorder, series)?;
        recorder.keep_search(
            crate::search::stored_answer(&result, d.parameters()),
            crate::search::stored_race(&result),
        );
        let session = crate::search::as_session(&mut result, &opts.cells);
        search = Some(result);
        session
    } else {
        // The display first: it clears its bars before the front door's
        // blocks are printed.
        let mut progress = runner::progress_for(opts);
        let mut observers: Vec<&mut dyn Observer> = vec![&mut progress];
        if let Some(m) = monitor.as_mut() {
            observers.push(m);
        } else if let Some(b) = blocks.as_mut() {
            observers.push(b);
        }
        observers.push(&mut recorder);
        runner::run_observed(opts, &mut Fanout(observers))?
    };
    let mut monitor = monitor.map(|m| m.finish());
    if let (Some(c), Some(result)) = (monitor.as_mut(), &search) {
        // The counts follow the grid's cells, as the stored runs do; the
        // report's session holds the tried values only.
        crate::monitor::store(c, &mut recorder);
        c.select(&result.tried);
    } else if let Some(c) = &monitor {
        crate::monitor::store(c, &mut recorder);
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
fn early_blocks(d: &Decided) -> Option<Blocks> {
    let opts = d.opts();
    let plain = !d.details()
        && d.monitor().is_none()
        && d.search().is_none()
        && opts.simulate.is_none()
        && opts.cells.iter().all(|c| c.variant.concurrency.is_none());
    (d.hyperfine_words() && opts.order == Order::Sequential && plain).then(|| {
        Blocks::new(
            &opts.cells,
            opts.timeout,
            super::blocks::Style {
                rules: d.warning_rules(),
                remove_outliers: d.remove_outliers(),
                paint: Paint { enabled: d.color() },
                warmup: opts.warmup > 0,
                quiet: d.quiet(),
            },
        )
    })
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
    d: &Decided,
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
            let exported = export_error.is_none() && d.exports().asked();
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
fn open_recorder(d: &Decided) -> Recorder {
    let (choice, opts) = (d.store(), d.opts());
    if *choice == Choice::Disabled {
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
        labels: d.labels().to_vec(),
        settings: Some(d.settings().to_json()),
    };
    let recorder = Recorder::open(choice, meta, &opts.cells);
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
