//! The words and numbers of a change point, as `changes`, `check --against
//! history` and the static site print them, and `changes`' text, Markdown
//! and JSON. Formatting only: the changes are found and confirmed in
//! `analysis::changes`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::changes::{
    Analysed, Change, Direction, Episode, MachineShift, NewestStatus, Side,
};
use crate::analysis::comparison::{format_confidence, format_p};
use crate::report::markdown::cell as md;
use crate::report::table::{self, Cell, Column, Table};
use crate::store::history::{History, Point};

/// A value of the history's metric with its unit.
pub fn value(h: &History, v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    match crate::metrics::Metric::from_name(&h.metric) {
        Some(m) if !h.is_time() => crate::units::quantity(v, m.unit()),
        _ => crate::units::time(v),
    }
}

pub fn direction(h: &History, c: &Change) -> &'static str {
    match (c.direction, h.is_time()) {
        (Direction::Slower, true) => "slower",
        (Direction::Faster, true) => "faster",
        (Direction::Slower, false) => "higher",
        (Direction::Faster, false) => "lower",
    }
}

/// `+25.1 % (99 % CI +23.0 % … +27.3 %)`
pub fn change_text(c: &Change) -> String {
    let pct = |r: f64| format!("{:+.1} %", (r - 1.0) * 100.0);
    let cmp = &c.comparison;
    format!(
        "{} ({} {} … {})",
        pct(cmp.ratio),
        format_confidence(cmp.confidence),
        pct(cmp.ratio_ci[0]),
        pct(cmp.ratio_ci[1])
    )
}

/// `102 ms (95 % CI 101 ms … 103 ms)`
pub fn median_text(h: &History, s: &Side) -> String {
    match s.ci {
        Some([lo, hi]) => format!(
            "{} (95 % CI {} … {})",
            value(h, s.median),
            value(h, lo),
            value(h, hi)
        ),
        None => value(h, s.median),
    }
}

fn metric_name(h: &History) -> &str {
    if h.metric == crate::metrics::Metric::WallTime.name() {
        "wall time"
    } else {
        &h.metric
    }
}

/// A point as text names it: its session(s) and its index, the `index` of
/// the JSON (from 0).
pub(crate) fn point(h: &History, i: usize) -> String {
    h.points
        .get(i)
        .map(|p| format!("{}, point {i}", p.describe()))
        .unwrap_or_default()
}

/// `11 of 12 benchmarks changed at #30 (…, commit=c15): …`
pub(crate) fn shift_text(s: &MachineShift) -> String {
    format!(
        "{} of {} benchmarks on {} [{}] changed at {}: the machine or its environment changed?",
        s.benchmarks.len(),
        s.of,
        s.hostname,
        crate::store::short_fingerprint(&s.fingerprint),
        s.point.describe()
    )
}

/// `faster −7.3 % (99 % CI …) for 4 points, p < 0.001, then back: +5.3 % (…), p = 0.002`
pub(crate) fn episode_text(h: &History, e: &Episode) -> String {
    let n = e.end + 1 - e.start;
    format!(
        "{} {} for {n} point{}, {}, then back: {}, {}",
        direction(h, &e.enter),
        change_text(&e.enter),
        if n == 1 { "" } else { "s" },
        format_p(e.enter.comparison.p_value),
        change_text(&e.leave),
        format_p(e.leave.comparison.p_value)
    )
}

fn heading(h: &History) -> String {
    format!(
        "{} — {} on {} [{}], {} {}",
        h.benchmark,
        metric_name(h),
        h.hostname,
        crate::store::short_fingerprint(&h.fingerprint),
        h.points.len(),
        if h.points.len() == 1 {
            "point"
        } else {
            "points"
        }
    )
}

pub fn text(all: &[Analysed], shifts: &[MachineShift]) -> String {
    let mut out = String::new();
    for a in all {
        let h = &a.history;
        let _ = writeln!(out, "{}", heading(h));
        if a.changes.is_empty() && a.episodes.is_empty() {
            let _ = writeln!(out, "  no change points");
        }
        for c in &a.changes {
            let _ = writeln!(
                out,
                "  {} {}, {}\n    first after: {}\n    last before: {}\n    median before {} over {} points\n    median after  {} over {} points",
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
        for e in &a.episodes {
            let _ = writeln!(
                out,
                "  episode: {}\n    first in: {}\n    last in:  {}\n    median before {}, during {}, after {}",
                episode_text(h, e),
                point(h, e.start),
                point(h, e.end),
                median_text(h, &e.enter.before),
                median_text(h, &e.enter.after),
                median_text(h, &e.leave.after),
            );
        }
        let last = h.points.len().saturating_sub(1);
        match (&a.newest, a.newest_status) {
            (Some(c), _) => {
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
            (None, NewestStatus::NotComputed) => {
                let _ = writeln!(
                    out,
                    "  newest {}: not compared (no earlier point with runs to compare it with)",
                    point(h, last)
                );
            }
            (None, _) => {
                let _ = writeln!(
                    out,
                    "  newest {}: no significant change from the points before it",
                    point(h, last)
                );
            }
        }
    }
    for s in shifts {
        let _ = writeln!(out, "{}", shift_text(s));
    }
    out
}

pub fn markdown(all: &[Analysed], shifts: &[MachineShift]) -> String {
    let mut t = Table::new(vec![
        Column::left("Benchmark"),
        Column::left("Metric"),
        Column::left("Machine"),
        Column::left("First after"),
        Column::left("Last before"),
        Column::right("Before"),
        Column::right("After"),
        Column::right("Change"),
        Column::right("p"),
        Column::left("Direction"),
    ])
    .title("cmdscope changes");
    for a in all {
        let h = &a.history;
        let machine = Cell::Parts(vec![
            format!("{} ", h.hostname).into(),
            Cell::code(crate::store::short_fingerprint(&h.fingerprint)),
        ]);
        for (c, newest) in a
            .changes
            .iter()
            .map(|c| (c, false))
            .chain(a.newest.iter().map(|c| (c, true)))
        {
            t.row(vec![
                Cell::code(&h.benchmark),
                metric_name(h).into(),
                machine.clone(),
                format!(
                    "{}{}",
                    point(h, c.index),
                    if newest { " (newest)" } else { "" }
                )
                .into(),
                point(h, c.index.saturating_sub(1)).into(),
                median_text(h, &c.before).into(),
                median_text(h, &c.after).into(),
                change_text(c).into(),
                format_p(c.comparison.p_value).into(),
                direction(h, c).into(),
            ]);
        }
        for e in &a.episodes {
            let n = e.end + 1 - e.start;
            t.row(vec![
                Cell::code(&h.benchmark),
                metric_name(h).into(),
                machine.clone(),
                format!("{} (episode start)", point(h, e.start)).into(),
                point(h, e.start.saturating_sub(1)).into(),
                median_text(h, &e.enter.before).into(),
                format!("{} (during)", median_text(h, &e.enter.after)).into(),
                change_text(&e.enter).into(),
                format_p(e.enter.comparison.p_value).into(),
                format!(
                    "episode: {} for {n} point{}, then back",
                    direction(h, &e.enter),
                    if n == 1 { "" } else { "s" }
                )
                .into(),
            ]);
        }
    }
    if all
        .iter()
        .all(|a| a.changes.is_empty() && a.newest.is_none() && a.episodes.is_empty())
    {
        t.span_row(format!(
            "no change points in {} histor{}",
            all.len(),
            if all.len() == 1 { "y" } else { "ies" }
        ));
    }
    markdown_with_shifts(&t, shifts)
}

/// A table's Markdown followed by the machine shifts, one item each.
pub(crate) fn markdown_with_shifts(
    t: &Table,
    shifts: &[impl std::borrow::Borrow<MachineShift>],
) -> String {
    let mut out = t.markdown();
    if !shifts.is_empty() {
        out.push('\n');
        for s in shifts {
            let _ = writeln!(out, "- {}", md(&shift_text(s.borrow())));
        }
    }
    out
}

#[derive(Serialize)]
pub(crate) struct JsonChange<'a> {
    first_after: &'a Point,
    last_before: &'a Point,
    direction: &'static str,
    #[serde(flatten)]
    change: &'a Change,
}

#[derive(Serialize)]
pub(crate) struct JsonEpisode<'a> {
    start: usize,
    end: usize,
    first_in: &'a Point,
    last_in: &'a Point,
    direction: &'static str,
    /// The entering change's ratio (during / before).
    ratio: f64,
    enter: JsonChange<'a>,
    leave: JsonChange<'a>,
}

#[derive(Serialize)]
struct JsonHistory<'a> {
    benchmark: &'a str,
    metric: &'a str,
    fingerprint: &'a str,
    hostname: &'a str,
    points: usize,
    changes: Vec<JsonChange<'a>>,
    episodes: Vec<JsonEpisode<'a>>,
    newest: Option<JsonChange<'a>>,
    newest_status: NewestStatus,
}

#[derive(Serialize)]
pub(crate) struct JsonShift<'a> {
    fingerprint: &'a str,
    hostname: &'a str,
    at: &'a Point,
    changed: usize,
    of: usize,
    benchmarks: &'a [String],
}

pub(crate) fn entry<'a>(h: &'a History, c: &'a Change) -> Option<JsonChange<'a>> {
    Some(JsonChange {
        first_after: h.points.get(c.index)?,
        last_before: h.points.get(c.index.checked_sub(1)?)?,
        direction: direction(h, c),
        change: c,
    })
}

pub(crate) fn episode<'a>(h: &'a History, e: &'a Episode) -> Option<JsonEpisode<'a>> {
    Some(JsonEpisode {
        start: e.start,
        end: e.end,
        first_in: h.points.get(e.start)?,
        last_in: h.points.get(e.end)?,
        direction: direction(h, &e.enter),
        ratio: e.ratio(),
        enter: entry(h, &e.enter)?,
        leave: entry(h, &e.leave)?,
    })
}

pub(crate) fn shift(s: &MachineShift) -> JsonShift<'_> {
    JsonShift {
        fingerprint: &s.fingerprint,
        hostname: &s.hostname,
        at: &s.point,
        changed: s.benchmarks.len(),
        of: s.of,
        benchmarks: &s.benchmarks,
    }
}

pub fn json(all: &[Analysed], shifts: &[MachineShift]) -> String {
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
                episodes: a.episodes.iter().filter_map(|e| episode(h, e)).collect(),
                newest: a.newest.as_ref().and_then(|c| entry(h, c)),
                newest_status: a.newest_status,
            }
        })
        .collect();
    let shifts: Vec<JsonShift> = shifts.iter().map(shift).collect();
    // Plain data with string keys: serializing it does not fail.
    table::json(&serde_json::json!({ "histories": list, "machine_shifts": shifts }))
        .unwrap_or_else(|_| "{}\n".into())
}
