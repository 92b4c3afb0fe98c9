//! `cmdscope history`: the stored sessions and their benchmarks, newest
//! first, one line per session and one per benchmark (rendered by
//! `report::history`).

use std::io::ErrorKind;

use crate::cli::store::HistoryArgs;
use crate::error::{exit, Result};
use crate::store::history::{cell_values, shown_metric};
use crate::store::record::open_read_only;
use crate::store::Location;

pub fn run(args: &HistoryArgs) -> Result<i32> {
    // Before the first `run` records anything, the default store does not
    // exist yet: that is an empty history, not an error. A store the user
    // named (--store, CMDSCOPE_STORE) must exist.
    if args.store.store.is_none() {
        if let Some(Location::Sqlite(path)) = Location::default_location() {
            if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
                let out = crate::report::history::no_store_yet(&path);
                crate::output::print(&crate::output::escape_controls(&out));
                return Ok(exit::OK);
            }
        }
    }
    crate::store::history::metric(args.metric.as_deref())?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let mut filter = super::filter(&args.sessions)?;
    filter.command = args.filter.clone();
    filter.limit = Some(args.limit);
    let sessions = match &args.sessions.run {
        Some(run) => vec![crate::suite::merge::merged(&mut store, run)?],
        None => store.sessions(&filter)?,
    };
    if sessions.is_empty() {
        let out = crate::report::history::none_match(store.location());
        crate::output::print(&crate::output::escape_controls(&out));
        return Ok(exit::OK);
    }
    // Each session's benchmarks are summarised by the metric it is shown
    // with: a simulated session's by its counts unless one is asked for.
    let asked = args.metric.as_deref();
    let mut by_metric: std::collections::BTreeMap<Option<&str>, Vec<_>> = Default::default();
    for s in &sessions {
        by_metric
            .entry(shown_metric(s, asked))
            .or_default()
            .extend(s.cells.iter());
    }
    let mut medians = std::collections::HashMap::new();
    for (shown, cells) in by_metric {
        let values = cell_values(&mut store, &cells, shown)?;
        medians.extend(crate::analysis::changes::history_figures(&values, shown));
    }
    let out = crate::report::history::render(
        &sessions,
        &medians,
        args.filter.as_deref(),
        args.metric.as_deref(),
    );
    crate::output::print(&crate::output::escape_controls(&out));
    Ok(exit::OK)
}
