//! `cmdscope report`: picks a stored session (or a suite run's sessions)
//! and writes the HTML report (`report::html` gathers it as `run` held
//! it), or replays it (`cli::stored::replay`) through `run`'s analysis to
//! `run`'s terminal report and export files; or with `--site` every
//! matching history as a static site.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::run::{analysed, exports};
use crate::cli::run::Style;
use crate::cli::store::ReportArgs;
use crate::error::{exit, OptionError, Result};
use crate::output::Named;
use crate::report::html;
use crate::store::record::{check_outputs, open_read_only};
use crate::store::{Store, StoredSession};

pub fn run(args: &ReportArgs) -> Result<i32> {
    if let Some(dir) = &args.site {
        return site(args, dir);
    }
    let exported = exports::export_paths(&args.exports).next().is_some();
    let html = (args.html.clone())
        .or_else(|| (!args.terminal && !exported).then(|| PathBuf::from("cmdscope-report.html")));
    let mut outputs: Vec<Named> = html.iter().map(|h| Named::flag("--html", h)).collect();
    outputs.extend(exports::named_exports(&args.exports));
    check_outputs(false, args.store.store.as_deref(), &outputs)?;
    let stdout_exports = exports::check_export_files(&args.exports)?;
    if exported && args.sessions.run.is_some() {
        return Err(OptionError::RunExports.into());
    }
    if let Some(h) = &html {
        crate::output::check_writable(h)?;
    }
    let mut store = open_read_only(args.store.store.as_deref())?;
    let sessions = match &args.sessions.run {
        Some(run) => crate::suite::merge::oldest_first(&mut store, run)?,
        None => {
            let mut filter = super::filter(&args.sessions)?;
            filter.session = args.session;
            filter.command = args.command.clone();
            filter.limit = Some(1);
            let one = (store.sessions(&filter)?.into_iter().next())
                .ok_or_else(|| super::nothing_found(&store, "matching session"))?;
            vec![one]
        }
    };
    for s in &sessions {
        super::checked_settings(&store, s)?;
    }
    if args.terminal || exported {
        replayed(args, &mut store, &sessions, stdout_exports > 0)?;
    }
    if let Some(h) = html {
        write_html(args, &mut store, sessions, &h)?;
    }
    Ok(exit::OK)
}

/// Each session replayed through `run`'s analysis: its terminal report
/// printed (with `--terminal`), its exports written. The terminal report
/// is in `run`'s words (a `hyperfine` session's too).
fn replayed(
    args: &ReportArgs,
    store: &mut Store,
    sessions: &[StoredSession],
    stdout_export: bool,
) -> Result<()> {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let color = match args.style {
        Style::Auto => std::io::stdout().is_terminal() && !no_color,
        Style::Full | Style::Color => !no_color,
        Style::Basic | Style::Nocolor | Style::None => false,
    };
    // As `run`: no terminal report beside an export to standard output.
    let quiet = args.style == Style::None || stdout_export;
    for (k, stored) in sessions.iter().enumerate() {
        let mut r = crate::cli::stored::replay(store, stored)?;
        let searched =
            (r.search.as_ref()).map(|(result, cells)| analysed::Searched { result, cells });
        let analysed = analysed::analyse(
            &r.settings,
            crate::analysis::warning::Rules::Cmdscope,
            &mut r.session,
            searched,
            r.monitor.as_ref(),
        )?;
        let search = r.search.as_ref().map(|(result, _)| result);
        let report = analysed::report(
            &r.settings,
            &r.session,
            &analysed,
            search,
            r.monitor.as_ref(),
        );
        let layout = exports::Layout::of(crate::cli::run::SortOrder::Auto, false);
        if let Some(e) = exports::write_exports(&args.exports, layout, None, &report) {
            return Err(e);
        }
        if args.terminal && !quiet {
            if args.sessions.run.is_some() {
                let heading = crate::suite::merge::heading(sessions, k);
                crate::output::print(&heading.unwrap_or_default());
            }
            let paint = crate::report::paint::Paint { enabled: color };
            analysed::print(&report, paint, crate::report::terminal::Wording::Cmdscope);
        }
    }
    Ok(())
}

/// The HTML report of the session, or of a suite run's sessions merged.
fn write_html(
    args: &ReportArgs,
    store: &mut Store,
    mut sessions: Vec<StoredSession>,
    path: &std::path::Path,
) -> Result<()> {
    let (session, merged) = match &args.sessions.run {
        Some(run) => {
            sessions.reverse(); // newest first, as the merge reads them
            let benchmarks = crate::suite::merge::benchmarks(&sessions);
            let settings = crate::suite::merge::settings(&sessions);
            let merged = crate::suite::merge::merged(store, run)?;
            (merged, Some((run, benchmarks, settings)))
        }
        None => match sessions.into_iter().next() {
            Some(s) => (s, None),
            None => return Ok(()),
        },
    };
    let how = crate::cli::stored::how_run(&session);
    let mut data = html::gather(store, session, &how, args.history, merged.is_none())?;
    if let Some((run, benchmarks, settings)) = merged {
        data.suite_settings = settings.settings;
        data.notes.extend(settings.note);
        html::merged_suite(&mut data, run, &benchmarks);
    }
    let text = html::render(&data);
    crate::output::write_file(path, text.as_bytes())?;
    if path != std::path::Path::new("-") {
        let what = match &args.sessions.run {
            Some(run) => format!("run {run}"),
            None => format!("session #{}", data.session.id),
        };
        crate::eprint_line!("cmdscope: report of {what} written to {}", path.display());
    }
    Ok(())
}
/// `report --site DIR`: every history matching the report's filters,
/// analysed as `changes` does, written as a static site.
fn site(args: &ReportArgs, dir: &std::path::Path) -> Result<i32> {
    let mut store = open_read_only(args.store.store.as_deref())?;
    let query = crate::store::history::Query {
        benchmark: args.command.clone(),
        labels: crate::store::parse_labels(&args.sessions.labels)?,
        machine: args.sessions.machine.clone(),
        ..crate::store::history::Query::default()
    };
    let histories = crate::store::history::load(&mut store, &query)?;
    if histories.is_empty() {
        return Err(super::nothing_found(&store, "matching benchmark history"));
    }
    let p = crate::analysis::changes::Params::default();
    let analysed = crate::analysis::changes::analyse(histories, &p);
    let shifts = crate::analysis::changes::machine_shifts(&analysed);
    // Benchmarks run with --concurrency: their throughput and latency too.
    let mut more = Vec::new();
    for d in crate::store::history::Derived::ALL {
        let q = crate::store::history::Query {
            metric: Some(d.name().to_string()),
            ..query.clone()
        };
        more.extend(crate::analysis::changes::analyse(
            crate::store::history::load(&mut store, &q)?,
            &p,
        ));
    }
    let files = crate::report::site::render(&analysed, &more, &shifts, store.location());
    let pages: Vec<Named> = files
        .iter()
        .map(|(name, _)| Named::flag("--site", &dir.join(name)))
        .collect();
    check_outputs(false, args.store.store.as_deref(), &pages)?;
    std::fs::create_dir_all(dir).map_err(|source| crate::error::Error::Write {
        path: dir.into(),
        source,
    })?;
    for (name, content) in &files {
        crate::output::replace_in_dir(dir, name, content.as_bytes())?;
    }
    crate::eprint_line!(
        "cmdscope: site of {} benchmark histor{} written to {}",
        analysed.len(),
        if analysed.len() == 1 { "y" } else { "ies" },
        dir.join("index.html").display()
    );
    Ok(exit::OK)
}
