//! `cmdscope history`: the stored sessions and their benchmarks, newest
//! first, one line per session and one per benchmark.

use std::fmt::Write as _;
use std::io::ErrorKind;

use crate::cli::store::HistoryArgs;
use crate::error::{exit, Result};
use crate::stats::median_finite;
use crate::store::history::time_values;
use crate::store::record::open_read_only;
use crate::store::{Location, StoredSession, RUNNING};

pub fn run(args: &HistoryArgs) -> Result<i32> {
    // Before the first `run` records anything, the default store does not
    // exist yet: that is an empty history, not an error. A store the user
    // named (--store, CMDSCOPE_STORE) must exist.
    if args.store.store.is_none() {
        if let Some(Location::Sqlite(path)) = Location::default_location() {
            if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
                crate::output::print(&crate::output::escape_controls(&format!(
                    "No sessions yet: the default store '{}' does not exist until a run records one.\n",
                    path.display()
                )));
                return Ok(exit::OK);
            }
        }
    }
    let mut store = open_read_only(args.store.store.as_deref())?;
    let mut filter = super::filter(&args.sessions)?;
    filter.command = args.filter.clone();
    filter.limit = Some(args.limit);
    let sessions = match &args.sessions.run {
        Some(run) => vec![crate::suite::merge::merged(&mut store, run)?],
        None => store.sessions(&filter)?,
    };
    if sessions.is_empty() {
        crate::output::print(&crate::output::escape_controls(&format!(
            "No sessions in store '{}' match.\n",
            store.location()
        )));
        return Ok(exit::OK);
    }
    let cells: Vec<_> = sessions.iter().flat_map(|s| s.cells.iter()).collect();
    let times = time_values(&mut store, &cells)?;
    let mut out = String::new();
    for s in &sessions {
        out.push_str(&session_line(s));
        out.push('\n');
        let width = s
            .cells
            .iter()
            .map(|c| c.identity.chars().count())
            .max()
            .unwrap_or(0)
            .min(60);
        for c in &s.cells {
            if let Some(f) = &args.filter {
                if !(c.identity.contains(f.as_str())
                    || c.name.contains(f.as_str())
                    || c.command.contains(f.as_str()))
                {
                    continue;
                }
            }
            let m = times
                .get(&c.id)
                .and_then(|v| median_finite(v))
                .map(|m| format!("median {}", crate::units::time(m)))
                .unwrap_or_else(|| "no time measured".into());
            let _ = writeln!(
                out,
                "    {:<width$}  {:>6} runs  {m}",
                shorten(&c.identity, 60),
                c.runs
            );
        }
    }
    crate::output::print(&crate::output::escape_controls(&out));
    Ok(exit::OK)
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let s: String = text.chars().take(max - 1).collect();
        format!("{s}…")
    }
}

/// `#12  2025-11-22 10:04:05Z  finished  host [fingerprint]  branch=main commit=abc`
pub fn session_line(s: &StoredSession) -> String {
    let status = match (s.status.as_str(), &s.stop_reason) {
        (RUNNING, _) => "unfinished (running, or killed)".to_string(),
        ("finished", Some(r)) => format!("finished ({})", r.replace('_', " ")),
        (st, _) => st.to_string(),
    };
    let labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let source = if s.source == "run" {
        String::new()
    } else {
        format!("  [{}]", s.source)
    };
    format!(
        "#{}  {}  {}  {} [{}]{}{}{}",
        s.id,
        s.started.replace('T', " "),
        status,
        s.machine.hostname,
        crate::store::short_fingerprint(&s.fingerprint),
        source,
        if labels.is_empty() { "" } else { "  " },
        labels.join(" ")
    )
}
