//! `changes --run`: what one session (or a suite run's sessions) did in
//! each history it is part of, as text, Markdown and JSON, in the words
//! and JSON objects of `changes` (`report::changes`).

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::changes::select::{AtPoint, Regime, Target};
use crate::analysis::changes::MachineShift;
use crate::report::changes::{
    change_text, direction, drift, drift_text, entry, episode, episode_text, markdown_with_shifts,
    point, shift, shift_text, JsonChange, JsonDrift, JsonEpisode, JsonShift,
};
use crate::report::table::{self, Cell, Column, Table};
use crate::store::history::{Point, SessionRef};
use crate::units::format_p;

fn title(t: &Target) -> String {
    match t {
        Target::Session(s) => format!("session {}", s.describe()),
        Target::SuiteRun { id, sessions } => format!(
            "suite run {id} ({} session{})",
            sessions.len(),
            if sessions.len() == 1 { "" } else { "s" }
        ),
    }
}

/// The level a point is at, in words.
fn regime_text(at: &AtPoint) -> String {
    let h = &at.analysed.history;
    match at.regime {
        Regime::First => "at the history's first level (no change in force before it)".into(),
        Regime::Since(c) if c.index == at.index => {
            "at the level this change set (from this point on)".into()
        }
        Regime::Since(c) => format!(
            "in a changed level: {} {} since {}",
            direction(h, c),
            change_text(h, c),
            point(h, c.index)
        ),
        Regime::Episode(e) => format!(
            "in an episode, points {} to {}: {}",
            e.start,
            e.end,
            episode_text(h, e)
        ),
        Regime::Drift(d) => format!(
            "in a drift's slide, points {} to {}: {}",
            d.start,
            d.end,
            drift_text(h, d)
        ),
        Regime::Newest(c) => format!(
            "the newest point, {} {} than the {} before it, {}",
            direction(h, c),
            change_text(h, c),
            c.before.last + 1 - c.before.first,
            format_p(c.comparison.p_value)
        ),
    }
}

pub fn text(target: &Target, all: &[AtPoint], shifts: &[&MachineShift]) -> String {
    let mut out = String::new();
    let introduced = all.iter().filter(|a| a.introduced()).count();
    let _ = writeln!(
        out,
        "{}: in {} benchmark histor{}, a change at {} of them",
        title(target),
        all.len(),
        if all.len() == 1 { "y" } else { "ies" },
        introduced
    );
    for at in all {
        let h = &at.analysed.history;
        let _ = writeln!(
            out,
            "{} on {} [{}]: {}",
            h.benchmark,
            h.hostname,
            crate::store::short_fingerprint(&h.fingerprint),
            point(h, at.index)
        );
        for c in &at.changes {
            let _ = writeln!(
                out,
                "  change here: {} {}, {} (last before: {})",
                direction(h, c),
                change_text(h, c),
                format_p(c.comparison.p_value),
                point(h, c.index.saturating_sub(1))
            );
        }
        for d in &at.drifts {
            let _ = writeln!(out, "  drift starts here: {}", drift_text(h, d));
        }
        for e in &at.entered {
            let _ = writeln!(out, "  episode starts here: {}", episode_text(h, e));
        }
        for e in &at.left {
            let _ = writeln!(
                out,
                "  episode ends before here (back at the level before it): {}",
                episode_text(h, e)
            );
        }
        let _ = writeln!(out, "  {}", regime_text(at));
    }
    for s in shifts {
        let _ = writeln!(out, "{}", shift_text(s));
    }
    out
}

pub fn markdown(target: &Target, all: &[AtPoint], shifts: &[&MachineShift]) -> String {
    let mut t = Table::new(vec![
        Column::left("Benchmark"),
        Column::left("Machine"),
        Column::left("Point"),
        Column::left("Change here"),
        Column::left("Level"),
    ])
    .title(format!("cmdscope changes: {}", title(target)));
    for at in all {
        let h = &at.analysed.history;
        let mut here: Vec<String> = at
            .changes
            .iter()
            .map(|c| format!("{} {}", direction(h, c), change_text(h, c)))
            .collect();
        here.extend(
            at.drifts
                .iter()
                .map(|d| format!("drift starts: {}", drift_text(h, d))),
        );
        here.extend(
            at.entered
                .iter()
                .map(|e| format!("episode starts: {}", episode_text(h, e))),
        );
        here.extend(
            at.left
                .iter()
                .map(|e| format!("episode ends: {}", episode_text(h, e))),
        );
        t.row(vec![
            Cell::code(h.benchmark.as_str()),
            Cell::Parts(vec![
                Cell::Text(format!("{} ", h.hostname)),
                Cell::code(crate::store::short_fingerprint(&h.fingerprint)),
            ]),
            point(h, at.index).into(),
            here.join("; ").into(),
            regime_text(at).into(),
        ]);
    }
    markdown_with_shifts(&t, shifts)
}

#[derive(Serialize)]
struct JsonAt<'a> {
    benchmark: &'a str,
    metric: &'a str,
    fingerprint: &'a str,
    hostname: &'a str,
    points: usize,
    index: usize,
    point: &'a Point,
    changes: Vec<JsonChange<'a>>,
    episodes_entered: Vec<JsonEpisode<'a>>,
    episodes_left: Vec<JsonEpisode<'a>>,
    drifts_started: Vec<JsonDrift<'a>>,
    /// `first`, `since_change`, `episode`, `drift` or `newest`.
    regime: &'static str,
    changed_regime: bool,
    /// The change whose level the point is at (`since_change`), or the
    /// newest point's comparison (`newest`).
    regime_change: Option<JsonChange<'a>>,
    regime_episode: Option<JsonEpisode<'a>>,
    regime_drift: Option<JsonDrift<'a>>,
}

#[derive(Serialize)]
struct JsonTarget<'a> {
    session: Option<&'a SessionRef>,
    suite_run: Option<&'a str>,
    sessions: Vec<&'a SessionRef>,
}

pub fn json(target: &Target, all: &[AtPoint], shifts: &[&MachineShift]) -> String {
    let list: Vec<JsonAt> = all
        .iter()
        .map(|at| {
            let h = &at.analysed.history;
            let (regime, regime_change, regime_episode, regime_drift) = match at.regime {
                Regime::First => ("first", None, None, None),
                Regime::Since(c) => ("since_change", entry(h, c), None, None),
                Regime::Episode(e) => ("episode", None, episode(h, e), None),
                Regime::Drift(d) => ("drift", None, None, drift(h, d)),
                Regime::Newest(c) => ("newest", entry(h, c), None, None),
            };
            JsonAt {
                benchmark: &h.benchmark,
                metric: &h.metric,
                fingerprint: &h.fingerprint,
                hostname: &h.hostname,
                points: h.points.len(),
                index: at.index,
                point: &h.points[at.index],
                changes: at.changes.iter().filter_map(|c| entry(h, c)).collect(),
                episodes_entered: at.entered.iter().filter_map(|e| episode(h, e)).collect(),
                episodes_left: at.left.iter().filter_map(|e| episode(h, e)).collect(),
                drifts_started: at.drifts.iter().filter_map(|d| drift(h, d)).collect(),
                regime,
                changed_regime: at.regime.changed(),
                regime_change,
                regime_episode,
                regime_drift,
            }
        })
        .collect();
    let target = match target {
        Target::Session(s) => JsonTarget {
            session: Some(s),
            suite_run: None,
            sessions: vec![s],
        },
        Target::SuiteRun { id, sessions } => JsonTarget {
            session: None,
            suite_run: Some(id),
            sessions: sessions.iter().collect(),
        },
    };
    let shifts: Vec<JsonShift> = shifts.iter().map(|s| shift(s)).collect();
    // Plain data with string keys: serializing it does not fail.
    table::json(&serde_json::json!({
        "run": target,
        "benchmarks": list,
        "machine_shifts": shifts,
    }))
    .unwrap_or_else(|_| "{}\n".into())
}
