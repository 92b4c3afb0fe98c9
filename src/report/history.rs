//! `cmdscope history` as text: one line per stored session, newest first,
//! and one per benchmark with its runs and median time.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::report::table::{Column, Table};
use crate::store::{StoredSession, RUNNING};

/// Identities longer than this are cut with an ellipsis, so that a
/// benchmark with a long command line keeps the columns readable.
const IDENTITY_WIDTH: usize = 60;

/// The run count's column: six digits and " runs".
const RUNS_WIDTH: usize = 11;

/// What `history` says when the default store does not exist yet.
pub fn no_store_yet(path: &std::path::Path) -> String {
    format!(
        "No sessions yet: the default store '{}' does not exist until a run records one.\n",
        path.display()
    )
}

/// What `history` says when no stored session matches.
pub fn none_match(store: &str) -> String {
    format!("No sessions in store '{store}' match.\n")
}

/// The sessions with their benchmarks; `medians` by stored cell id (the
/// figure of the metric each session is shown with,
/// `store::history::shown_metric` of `metric`: None for wall time, a
/// simulated session's estimated cycles), `filter` keeps the
/// benchmarks whose identity, name or command holds it. Untrusted text
/// (names, commands, labels) is escaped by the caller's writer, not here.
pub fn render(
    sessions: &[StoredSession],
    medians: &HashMap<i64, f64>,
    filter: Option<&str>,
    metric: Option<&str>,
) -> String {
    let mut out = String::new();
    for s in sessions {
        out.push_str(&session_line(s));
        out.push('\n');
        // As wide as the session's longest identity, shown or not, so
        // that a filter keeps the columns where they were.
        let width = s
            .cells
            .iter()
            .map(|c| c.identity.chars().count())
            .max()
            .unwrap_or(0)
            .min(IDENTITY_WIDTH);
        let mut t = Table::new(vec![
            Column::left("").min_width(width).max_width(IDENTITY_WIDTH),
            Column::right("").min_width(RUNS_WIDTH),
            Column::left(""),
        ]);
        for c in &s.cells {
            if let Some(f) = filter {
                if !(c.identity.contains(f) || c.name.contains(f) || c.command.contains(f)) {
                    continue;
                }
            }
            let metric = crate::store::history::shown_metric(s, metric);
            let m = medians
                .get(&c.id)
                .map(|m| figure(metric, *m))
                .unwrap_or_else(|| match metric {
                    None => "no time measured".into(),
                    Some(name) => format!("no {name} measured"),
                });
            t.row(vec![
                c.identity.as_str().into(),
                format!("{} runs", c.runs).into(),
                m.into(),
            ]);
        }
        for line in t.text().lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

/// `median 12.3 ms`, `throughput 812/s`, `latency_p90 14.1 ms`,
/// `median memory_peak_resident 12.0 MiB`.
fn figure(metric: Option<&str>, v: f64) -> String {
    use crate::store::history::Derived;
    match metric {
        None => format!("median {}", crate::units::time(v)),
        Some(name) => match Derived::from_name(name) {
            Some(Derived::Throughput) => {
                format!("throughput {}/s", crate::units::significant(v, 4))
            }
            Some(Derived::Latency(_)) => format!("{name} {}", crate::units::time(v)),
            None => {
                let unit = crate::metrics::Metric::from_name(name)
                    .map_or(crate::metrics::Unit::Count, |m| m.unit());
                format!("median {name} {}", crate::units::quantity(v, unit))
            }
        },
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
    // Its wall times are the simulator's: say so where they are listed.
    let source = match s.simulation() {
        Some(sim) => format!("{source}  [simulated: {}]", sim.tool),
        None => source,
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
