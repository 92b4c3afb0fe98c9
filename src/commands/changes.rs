//! `cmdscope changes`: the change points in every stored benchmark's
//! history (found by `analysis::changes`; docs/CHANGES.md), as text,
//! Markdown or JSON, and a CI gate on the newest session.

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::changes::{analyse, Analysed, Change, Params};
use crate::analysis::comparison::format_p;
use crate::cli::store::{ChangesArgs, ChangesFormat, CheckArgs, CheckFormat, ReportArgs};
use crate::error::{exit, Error, Result};
use crate::report::changes::{change_text, direction, median_text};
use crate::report::markdown::cell as md;
use crate::store::history::{self, History, Point, Query};
use crate::store::record::open_read_only;

pub fn params(alpha: f64) -> Result<Params> {
    crate::cli::check_alpha(alpha)?;
    Ok(Params {
        alpha,
        ..Params::default()
    })
}

fn min_change(pct: f64) -> Result<f64> {
    if pct.is_finite() && (0.0..1000.0).contains(&pct) {
        Ok(pct / 100.0)
    } else {
        Err(Error::Usage(format!(
            "--min-change must be a percentage from 0 to 1000, got {pct}"
        )))
    }
}

pub fn run(args: &ChangesArgs) -> Result<i32> {
    crate::cli::check_percentage("--threshold", args.threshold)?;
    let p = Params {
        min_change: min_change(args.min_change)?,
        ..params(args.alpha)?
    };
    history::metric(args.metric.as_deref())?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let query = Query {
        benchmark: args.benchmark.clone(),
        labels: crate::store::parse_labels(&args.sessions.labels)?,
        machine: args.sessions.machine.clone(),
        metric: args.metric.clone(),
        order_by: args.order_by.clone(),
    };
    let histories = history::load(&mut store, &query)?;
    if histories.is_empty() {
        return Err(super::nothing_found(&store, "matching benchmark history"));
    }
    let analysed = analyse(histories, &p);
    let out = match args.format {
        ChangesFormat::Text => text(&analysed),
        ChangesFormat::Markdown => markdown(&analysed),
        ChangesFormat::Json => json(&analysed),
    };
    crate::output::print(&crate::output::escape_controls(&out));
    let failing = analysed.iter().any(|a| {
        a.newest
            .as_ref()
            .is_some_and(|c| c.fails_gate(args.threshold))
    });
    Ok(if args.fail_on_new_regression && failing {
        exit::FAILURE
    } else {
        exit::OK
    })
}

fn metric_name(h: &History) -> &str {
    if h.metric == crate::metrics::Metric::WallTime.name() {
        "wall time"
    } else {
        &h.metric
    }
}

fn point(h: &History, i: usize) -> String {
    h.points.get(i).map(Point::describe).unwrap_or_default()
}

fn heading(h: &History) -> String {
    format!(
        "{} — {} on {} [{}], {} {}",
        h.benchmark,
        metric_name(h),
        h.hostname,
        h.fingerprint.get(..12).unwrap_or(&h.fingerprint),
        h.points.len(),
        if h.points.len() == 1 {
            "point"
        } else {
            "points"
        }
    )
}

pub fn text(all: &[Analysed]) -> String {
    let mut out = String::new();
    for a in all {
        let h = &a.history;
        let _ = writeln!(out, "{}", heading(h));
        if a.changes.is_empty() {
            let _ = writeln!(out, "  no change points");
        }
        for c in &a.changes {
            let _ = writeln!(
                out,
                "  {} {}, {}\n    first after: {}\n    last before: {}\n    median before {} over {} sessions\n    median after  {} over {} sessions",
                direction(h, c),
                change_text(c),
                format_p(c.comparison.p_value),
                point(h, c.index),
                point(h, c.index.saturating_sub(1)),
                median_text(h, &c.before),
                c.before.last + 1 - c.before.first,
                median_text(h, &c.after),
                c.after.last + 1 - c.after.first,
            );
        }
        match &a.newest {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "  newest {}: {} {} than the {} before it, {}",
                    point(h, c.index),
                    direction(h, c),
                    change_text(c),
                    c.before.last + 1 - c.before.first,
                    format_p(c.comparison.p_value)
                );
            }
            None if h.points.len() >= 2 => {
                let _ = writeln!(
                    out,
                    "  newest {}: no significant change from the points before it",
                    point(h, h.points.len() - 1)
                );
            }
            None => {}
        }
    }
    out
}

pub fn markdown(all: &[Analysed]) -> String {
    let mut out = String::from("### cmdscope changes\n\n");
    out.push_str(
        "| Benchmark | Metric | Machine | First after | Last before | Before | After | Change | p | Direction |\n\
         |:---|:---|:---|:---|:---|---:|---:|---:|---:|:---|\n",
    );
    let mut any = false;
    for a in all {
        let h = &a.history;
        for (c, newest) in a
            .changes
            .iter()
            .map(|c| (c, false))
            .chain(a.newest.iter().map(|c| (c, true)))
        {
            any = true;
            let _ = writeln!(
                out,
                "| `{}` | {} | {} `{}` | {}{} | {} | {} | {} | {} | {} | {} |",
                md(&h.benchmark),
                md(metric_name(h)),
                md(&h.hostname),
                h.fingerprint.get(..12).unwrap_or(&h.fingerprint),
                md(&point(h, c.index)),
                if newest { " (newest)" } else { "" },
                md(&point(h, c.index.saturating_sub(1))),
                median_text(h, &c.before),
                median_text(h, &c.after),
                change_text(c),
                format_p(c.comparison.p_value),
                direction(h, c)
            );
        }
    }
    if !any {
        let _ = writeln!(
            out,
            "| no change points in {} histor{} | | | | | | | | | |",
            all.len(),
            if all.len() == 1 { "y" } else { "ies" }
        );
    }
    out
}

#[derive(Serialize)]
struct JsonChange<'a> {
    first_after: &'a Point,
    last_before: &'a Point,
    direction: &'static str,
    #[serde(flatten)]
    change: &'a Change,
}

#[derive(Serialize)]
struct JsonHistory<'a> {
    benchmark: &'a str,
    metric: &'a str,
    fingerprint: &'a str,
    hostname: &'a str,
    points: usize,
    changes: Vec<JsonChange<'a>>,
    newest: Option<JsonChange<'a>>,
}

fn entry<'a>(h: &'a History, c: &'a Change) -> Option<JsonChange<'a>> {
    Some(JsonChange {
        first_after: h.points.get(c.index)?,
        last_before: h.points.get(c.index.checked_sub(1)?)?,
        direction: direction(h, c),
        change: c,
    })
}

pub fn json(all: &[Analysed]) -> String {
    let list: Vec<JsonHistory> = all
        .iter()
        .map(|a| {
            let h = &a.history;
            JsonHistory {
                benchmark: &h.benchmark,
                metric: &h.metric,
                fingerprint: &h.fingerprint,
                hostname: &h.hostname,
                points: h.points.len(),
                changes: a.changes.iter().filter_map(|c| entry(h, c)).collect(),
                newest: a.newest.as_ref().and_then(|c| entry(h, c)),
            }
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&serde_json::json!({ "histories": list }))
        .unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// One benchmark of `check --against history`.
struct HistoryRow {
    benchmark: String,
    history: Option<History>,
    change: Option<Change>,
}

/// `check --against history`: each benchmark of the checked session
/// against the sessions since its history's last change point (at most
/// `Params::window`), on the same machine fingerprint. Bonferroni over the
/// session's benchmarks, the engine's gate rule for --fail-if-slower.
pub fn check_against_history(args: &CheckArgs) -> Result<i32> {
    crate::cli::check_percentage("--fail-if-slower", args.fail_if_slower)?;
    let base = params(args.alpha)?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let here = crate::store::Machine::current().fingerprint();
    let filter = crate::store::Filter {
        session: args.session,
        machine: args.session.is_none().then(|| here.clone()),
        limit: Some(1),
        ..Default::default()
    };
    let current = store.sessions(&filter)?.into_iter().next().ok_or_else(|| {
        super::nothing_found(
            &store,
            &match args.session {
                Some(id) => format!("session #{id}"),
                None => "results from this machine; run `cmdscope run` first".into(),
            },
        )
    })?;
    let histories = history::load(
        &mut store,
        &Query {
            machine: Some(current.fingerprint.clone()),
            ..Query::default()
        },
    )?;
    let mut names: Vec<&str> = Vec::new();
    for c in &current.cells {
        if !names.contains(&c.identity.as_str()) {
            names.push(&c.identity);
        }
    }
    let p = Params {
        alpha: args.alpha / names.len().max(1) as f64,
        ..base
    };
    let rows: Vec<HistoryRow> = names
        .iter()
        .map(|name| {
            let mut h = histories.iter().find(|h| h.benchmark == *name).cloned();
            let change = h.as_mut().and_then(|h| {
                // The history up to and including the checked session.
                let end = h
                    .points
                    .iter()
                    .position(|pt| pt.sessions.iter().any(|s| s.id == current.id))?;
                h.points.truncate(end + 1);
                let p = Params {
                    metric: crate::metrics::Metric::from_name(&h.metric),
                    ..p
                };
                crate::analysis::changes::newest_comparison(&h.runs(), &p)
            });
            HistoryRow {
                benchmark: name.to_string(),
                history: h,
                change,
            }
        })
        .collect();
    if rows.iter().all(|r| r.change.is_none()) {
        return Err(super::nothing_found(
            &store,
            &format!(
                "finished sessions before session #{} on machine {} [{}] with its benchmarks",
                current.id,
                current.machine.hostname,
                current
                    .fingerprint
                    .get(..12)
                    .unwrap_or(&current.fingerprint)
            ),
        ));
    }
    let pct = args.fail_if_slower;
    let failing = rows
        .iter()
        .filter(|r| r.change.as_ref().is_some_and(|c| c.fails_gate(pct)))
        .count();
    let headline = if failing > 0 {
        format!(
            "{failing} benchmark{} significantly slower than its history by more than {}%",
            if failing == 1 { " is" } else { "s are" },
            pct
        )
    } else {
        format!(
            "No significant slowdown beyond {}% against history ({} benchmark{})",
            pct,
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )
    };
    let label_text: Vec<String> = current
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let about = format!(
        "session #{} ({}{}{}) on {} [{}]; each benchmark against the sessions since its last change point (at most {}), runs compared with the session-to-session variation included, Bonferroni over {} benchmark{}, alpha {}",
        current.id,
        current.started.replace('T', " "),
        if label_text.is_empty() { "" } else { ", " },
        label_text.join(" "),
        current.machine.hostname,
        current.fingerprint.get(..12).unwrap_or(&current.fingerprint),
        p.window,
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        args.alpha
    );
    let verdict = |c: &Change| {
        if c.fails_gate(pct) {
            format!("❌ slower by more than {pct}%")
        } else {
            c.comparison.verdict.words().to_string()
        }
    };
    let mut out = String::new();
    let markdown = args.format == CheckFormat::Markdown;
    if markdown {
        let _ = writeln!(
            out,
            "### cmdscope check: {}\n\n{}\n",
            md(&headline),
            md(&about)
        );
        out.push_str("| Benchmark | History | Current | Change | p | Verdict |\n|:---|---:|---:|---:|---:|:---|\n");
    } else {
        let _ = writeln!(out, "{headline}\n{about}\n");
    }
    for r in &rows {
        let cells = match (&r.history, &r.change) {
            (Some(h), Some(c)) => [
                format!(
                    "{} ({} sessions)",
                    median_text(h, &c.before),
                    c.before.last + 1 - c.before.first
                ),
                median_text(h, &c.after),
                change_text(c),
                format_p(c.comparison.p_value),
                verdict(c),
            ],
            _ => [
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "no history before this session".into(),
            ],
        };
        if markdown {
            let _ = writeln!(
                out,
                "| `{}` | {} |",
                md(&r.benchmark),
                cells.map(|c| md(&c)).join(" | ")
            );
        } else {
            let named: Vec<String> = ["history", "current", "change", "", ""]
                .iter()
                .zip(&cells)
                .map(|(k, v)| {
                    if k.is_empty() {
                        v.clone()
                    } else {
                        format!("{k} {v}")
                    }
                })
                .collect();
            let _ = writeln!(out, "{}\n    {}", r.benchmark, named.join(" · "));
        }
    }
    crate::output::print(&crate::output::escape_controls(&out));
    Ok(if failing > 0 { exit::FAILURE } else { exit::OK })
}

/// `report --site DIR`: every history matching the report's filters,
/// analysed as `changes` does, written as a static site.
pub fn site(args: &ReportArgs, dir: &std::path::Path) -> Result<i32> {
    let mut store = open_read_only(args.store.store.as_deref())?;
    let query = Query {
        benchmark: args.command.clone(),
        labels: crate::store::parse_labels(&args.sessions.labels)?,
        machine: args.sessions.machine.clone(),
        ..Query::default()
    };
    let histories = history::load(&mut store, &query)?;
    if histories.is_empty() {
        return Err(super::nothing_found(&store, "matching benchmark history"));
    }
    let analysed = analyse(histories, &Params::default());
    let files = crate::report::site::render(&analysed, store.location());
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
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
