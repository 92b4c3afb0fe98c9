//! `cmdscope report`: picks a stored session (or a suite run's sessions),
//! has `report::html` gather it as `run` held it and writes the HTML
//! report, or with `--site` every matching history as a static site.

use crate::cli::store::ReportArgs;
use crate::error::{exit, Result};
use crate::output::Named;
use crate::report::html;
use crate::store::record::{check_outputs, open_read_only};

pub fn run(args: &ReportArgs) -> Result<i32> {
    if let Some(dir) = &args.site {
        return site(args, dir);
    }
    check_outputs(
        false,
        args.store.store.as_deref(),
        &[Named::flag("--html", &args.html)],
    )?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let mut filter = super::filter(&args.sessions)?;
    filter.session = args.session;
    filter.command = args.command.clone();
    filter.limit = Some(1);
    let (session, benchmarks, suite_settings) = match &args.sessions.run {
        Some(run) => {
            let sessions = crate::suite::merge::sessions(&mut store, run)?;
            for s in &sessions {
                super::checked_settings(&store, s)?;
            }
            let benchmarks = crate::suite::merge::benchmarks(&sessions);
            let settings = crate::suite::merge::settings(&sessions);
            (
                crate::suite::merge::merged(&mut store, run)?,
                Some(benchmarks),
                settings,
            )
        }
        None => (
            store
                .sessions(&filter)?
                .into_iter()
                .next()
                .ok_or_else(|| super::nothing_found(&store, "matching session"))?,
            None,
            Default::default(),
        ),
    };
    crate::output::check_writable(&args.html)?;
    super::checked_settings(&store, &session)?;
    let how = crate::cli::stored::how_run(&session);
    let merged = benchmarks.is_some();
    let mut data = html::gather(&mut store, session, &how, args.history, !merged)?;
    data.suite_settings = suite_settings.settings;
    data.notes.extend(suite_settings.note);
    if let (Some(run), Some(benchmarks)) = (&args.sessions.run, benchmarks) {
        html::merged_suite(&mut data, run, &benchmarks);
    }
    let text = html::render(&data);
    crate::output::write_file(&args.html, text.as_bytes())?;
    if args.html != std::path::Path::new("-") {
        let what = match &args.sessions.run {
            Some(run) => format!("run {run}"),
            None => format!("session #{}", data.session.id),
        };
        crate::eprint_line!(
            "cmdscope: report of {what} written to {}",
            args.html.display()
        );
    }
    Ok(exit::OK)
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
