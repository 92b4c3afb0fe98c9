//! The words and numbers of a change point, as `changes`, `check --against
//! history` and the static site print them, and `changes`' text, Markdown
//! and JSON: every event of a history (step, drift, episode, the newest
//! point, wander) as what it is. Formatting only: the events are found and
//! confirmed in `analysis::changes`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::changes::{
    Analysed, Change, Direction, Drift, Episode, Event, MachineShift, NewestStatus, Rate, Side,
    Wander, EDGE_CONFIDENCE,
};
use crate::analysis::comparison::Comparison;
use crate::report::markdown::cell as md;
use crate::report::table::{self, Cell, Column, Table};
use crate::report::Words;
use crate::store::history::{History, Point};
use crate::units::{format_confidence, format_p};

/// A value of the history's metric with its unit (throughput's seconds
/// per completion as completions per second).
pub fn value(h: &History, v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if h.is_throughput() {
        return if v > 0.0 {
            format!("{}/s", crate::units::significant(1.0 / v, 4))
        } else {
            "–".into()
        };
    }
    match crate::metrics::Metric::from_name(&h.metric) {
        Some(m) if !h.is_time() => crate::units::quantity(v, m.unit()),
        _ => crate::units::time(v),
    }
}

pub fn direction(h: &History, c: &Change) -> &'static str {
    direction_of(h, c.direction)
}

/// The words of a direction in the history's metric: times are slower or
/// faster, throughput lower or higher (its values are seconds per
/// completion), other metrics higher or lower.
pub fn direction_of(h: &History, d: Direction) -> &'static str {
    match (d, h.is_throughput(), h.is_time()) {
        (Direction::Slower, true, _) => "lower throughput",
        (Direction::Faster, true, _) => "higher throughput",
        (Direction::Slower, false, true) => "slower",
        (Direction::Faster, false, true) => "faster",
        (Direction::Slower, false, false) => "higher",
        (Direction::Faster, false, false) => "lower",
    }
}

/// `+25.1 % (99 % CI +23.0 % … +27.3 %)`: the change of the metric as
/// shown (of throughput, not of its seconds per completion).
pub fn change_text(h: &History, c: &Change) -> String {
    let (r, ci) = shown_ratio(h, c);
    ratio_text(r, ci, c.comparison.confidence)
}

/// `+25.1 %`: [`change_text`] without its interval, for a chart's label.
pub fn size_text(h: &History, c: &Change) -> String {
    pct(shown_ratio(h, c).0)
}

/// The change's ratio and interval in the metric as shown.
fn shown_ratio(h: &History, c: &Change) -> (f64, [f64; 2]) {
    let cmp = &c.comparison;
    if h.is_throughput() {
        crate::analysis::concurrency::throughput_ratio(cmp)
    } else {
        (cmp.ratio, cmp.ratio_ci)
    }
}

fn pct(r: f64) -> String {
    format!("{:+.1} %", (r - 1.0) * 100.0)
}

/// `+25.1 % (99 % CI +23.0 % … +27.3 %)`
fn ratio_text(r: f64, ci: [f64; 2], confidence: f64) -> String {
    format!(
        "{} ({} {} … {})",
        pct(r),
        format_confidence(confidence),
        pct(ci[0]),
        pct(ci[1])
    )
}

/// When each point of the history was measured (its newest session's
/// start, Unix seconds).
fn times(h: &History) -> Vec<f64> {
    h.points
        .iter()
        .map(|p| p.newest().map_or(f64::NAN, |s| s.started_unix))
        .collect()
}

/// `slope +1.5 % (99 % CI +1.4 % … +1.6 %) per point, +0.8 % (…) per
/// day`: a drift's rate in the metric as shown (throughput's, not its
/// seconds per completion's); None when its size has no finite rate.
pub(crate) fn slope_text(h: &History, d: &Drift) -> Option<String> {
    let shown = |r: Rate| {
        if h.is_throughput() {
            (1.0 / r.ratio, [1.0 / r.ratio_ci[1], 1.0 / r.ratio_ci[0]])
        } else {
            (r.ratio, r.ratio_ci)
        }
    };
    let confidence = d.change.comparison.confidence;
    let (r, ci) = shown(d.per_point()?);
    let mut out = format!("slope {} per point", ratio_text(r, ci, confidence));
    if let Some(day) = d.per_day(&times(h)) {
        let (r, ci) = shown(day);
        let _ = write!(out, ", {} per day", ratio_text(r, ci, confidence));
    }
    Some(out)
}

/// `102 ms (95 % CI 101 ms … 103 ms)`
pub fn median_text(h: &History, s: &Side) -> String {
    match s.ci {
        Some([lo, hi]) => {
            let (lo, hi) = if h.is_throughput() {
                (hi, lo)
            } else {
                (lo, hi)
            };
            format!(
                "{} (95 % CI {} … {})",
                value(h, s.median),
                value(h, lo),
                value(h, hi)
            )
        }
        None => value(h, s.median),
    }
}

pub(crate) fn metric_name(h: &History) -> &str {
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

/// A drift's edge as text names it: [`point`], and the range of points it
/// could be at when that is more than the point itself
/// (`, point 15 (90 % range: points 13 … 18)`).
fn edge_text(h: &History, i: usize, range: Option<[usize; 2]>) -> String {
    match range {
        Some([lo, hi]) if lo < hi => format!(
            "{} ({:.0} % range: points {lo} … {hi})",
            point(h, i),
            EDGE_CONFIDENCE * 100.0
        ),
        _ => point(h, i),
    }
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
        change_text(h, &e.enter),
        if n == 1 { "" } else { "s" },
        format_p(e.enter.comparison.p_value),
        change_text(h, &e.leave),
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

/// `drift: slower +8.1 % (99 % CI …) over 23 points, p < 0.001`
pub(crate) fn drift_text(h: &History, d: &Drift) -> String {
    let n = d.end + 1 - d.start;
    format!(
        "{} {} over {n} point{}, {}{}",
        direction(h, &d.change),
        change_text(h, &d.change),
        if n == 1 { "" } else { "s" },
        format_p(d.change.comparison.p_value),
        if d.ongoing {
            ", still going on at the newest point (its size so far)"
        } else {
            ""
        }
    )
}

/// `the level moves by ±1.3 % over 20 points, ±0.4 % from one point to
/// the next: the machine, not a change`
pub(crate) fn wander_text(w: &Wander) -> String {
    let pct = |s: f64| format!("±{:.1} %", (s.exp() - 1.0) * 100.0);
    format!(
        "the level moves by {} over {} points, {} from one point to the next: the machine, not a change",
        pct(w.sigma),
        w.span,
        pct(w.short)
    )
}

/// `runs fall into two speeds, 10.2 ms and 13.3 ms: …`
pub(crate) fn speeds_text(h: &History, a: &Analysed) -> Option<String> {
    let m = a.speeds?;
    Some(format!(
        "runs fall into two speeds, {} and {}: each run compared at the fast one",
        value(h, m.fast),
        value(h, m.slow)
    ))
}

pub fn text(all: &[Analysed], shifts: &[MachineShift]) -> String {
    let mut out = String::new();
    for a in all {
        let h = &a.history;
        let _ = writeln!(out, "{}", heading(h));
        if let Some(s) = speeds_text(h, a) {
            let _ = writeln!(out, "  {s}");
        }
        if a.changes.is_empty() && a.episodes.is_empty() && a.drifts.is_empty() {
            let _ = writeln!(out, "  no change points");
        }
        for e in a.events() {
            match e {
                Event::Step(c) => {
                    let _ = writeln!(
                        out,
                        "  step: {} {}, {}\n    first after: {}\n    last before: {}\n    median before {} over {} points\n    median after  {} over {} points",
                        direction(h, c),
                        change_text(h, c),
                        format_p(c.comparison.p_value),
                        point(h, c.index),
                        point(h, c.index.saturating_sub(1)),
                        median_text(h, &c.before),
                        c.before.last + 1 - c.before.first,
                        median_text(h, &c.after),
                        c.after.last + 1 - c.after.first,
                    );
                }
                Event::Drift(d) => {
                    let _ = writeln!(
                        out,
                        "  drift: {}\n    first in: {}\n    last in:  {}\n    median before {} over {} points\n    median after  {} over {} points",
                        drift_text(h, d),
                        edge_text(h, d.start, d.edges.map(|e| e.start)),
                        edge_text(h, d.end, d.edges.map(|e| e.end)),
                        median_text(h, &d.change.before),
                        d.change.before.last + 1 - d.change.before.first,
                        median_text(h, &d.change.after),
                        d.change.after.last + 1 - d.change.after.first,
                    );
                    if let Some(s) = slope_text(h, d) {
                        let _ = writeln!(out, "    {s}");
                    }
                }
                Event::Episode(e) => {
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
                Event::Wander(w) => {
                    let _ = writeln!(out, "  wander: {}", wander_text(w));
                }
                Event::Newest(_) => {}
            }
        }
        let last = h.points.len().saturating_sub(1);
        match (&a.newest, a.newest_status) {
            (Some(c), _) => {
                let _ = writeln!(
                    out,
                    "  newest {}: {} {} than the {} before it, {}",
                    point(h, c.index),
                    direction(h, c),
                    change_text(h, c),
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
        Column::left("Kind"),
        Column::left("First after"),
        Column::left("Last before"),
        Column::right("Before"),
        Column::right("After"),
        Column::right("Change"),
        Column::right("p"),
        Column::left("Direction"),
    ])
    .title("cmdscope changes");
    let mut any = false;
    for a in all {
        let h = &a.history;
        let machine = Cell::Parts(vec![
            format!("{} ", h.hostname).into(),
            Cell::code(crate::store::short_fingerprint(&h.fingerprint)),
        ]);
        for e in a.events() {
            let row =
                |kind: &str, first: String, last: String, c: &Change, during: bool, dir: String| {
                    vec![
                        Cell::code(&h.benchmark),
                        metric_name(h).into(),
                        machine.clone(),
                        kind.to_string().into(),
                        first.into(),
                        last.into(),
                        median_text(h, &c.before).into(),
                        if during {
                            format!("{} (during)", median_text(h, &c.after))
                        } else {
                            median_text(h, &c.after)
                        }
                        .into(),
                        change_text(h, c).into(),
                        format_p(c.comparison.p_value).into(),
                        dir.into(),
                    ]
                };
            let cells = match e {
                Event::Step(c) => row(
                    "step",
                    point(h, c.index),
                    point(h, c.index.saturating_sub(1)),
                    c,
                    false,
                    direction(h, c).into(),
                ),
                Event::Newest(c) => row(
                    "newest",
                    format!("{} (newest)", point(h, c.index)),
                    point(h, c.index.saturating_sub(1)),
                    c,
                    false,
                    direction(h, c).into(),
                ),
                Event::Drift(d) => row(
                    "drift",
                    format!("{} (slide starts)", point(h, d.start)),
                    format!("{} (slide ends)", point(h, d.end)),
                    &d.change,
                    false,
                    format!(
                        "drift: {} over {} points{}",
                        direction(h, &d.change),
                        d.end + 1 - d.start,
                        if d.ongoing { ", still going on" } else { "" }
                    ),
                ),
                Event::Episode(ep) => {
                    let n = ep.end + 1 - ep.start;
                    row(
                        "episode",
                        format!("{} (episode start)", point(h, ep.start)),
                        point(h, ep.start.saturating_sub(1)),
                        &ep.enter,
                        true,
                        format!(
                            "episode: {} for {n} point{}, then back",
                            direction(h, &ep.enter),
                            if n == 1 { "" } else { "s" }
                        ),
                    )
                }
                Event::Wander(w) => {
                    t.span_row(format!(
                        "{} on {} [{}]: wander: {}",
                        h.benchmark,
                        h.hostname,
                        crate::store::short_fingerprint(&h.fingerprint),
                        wander_text(w)
                    ));
                    continue;
                }
            };
            any = true;
            t.row(cells);
        }
    }
    if !any {
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
    change: Words<'a, Change>,
}

/// A change's own fields, its comparison's note in report's words (the
/// direction is the history's, beside it).
impl Serialize for Words<'_, Change> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Fields<'a> {
            index: usize,
            before: &'a Side,
            after: &'a Side,
            comparison: Words<'a, Comparison>,
        }
        // No `..`: a field added to `Change` must be placed here.
        let Change {
            index,
            before,
            after,
            comparison,
            direction: _,
        } = self.0;
        Fields {
            index: *index,
            before,
            after,
            comparison: Words(comparison),
        }
        .serialize(s)
    }
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
pub(crate) struct JsonDrift<'a> {
    start: usize,
    end: usize,
    first_in: &'a Point,
    last_in: &'a Point,
    /// The point before the slide and the point after it (None at an
    /// end of the history).
    last_before: Option<&'a Point>,
    first_after: Option<&'a Point>,
    ongoing: bool,
    direction: &'static str,
    /// The points after the slide over the points before it.
    ratio: f64,
    /// The ratio spread evenly over the slide: per point, and per day
    /// when the slide took a day or more.
    slope_per_point: Option<Rate>,
    slope_per_day: Option<Rate>,
    /// The points the slide's first and last point could be at (each
    /// inclusive), at `range_confidence`: from the profile of the ramp's
    /// fit (docs/CHANGES.md); null when none could be made.
    start_range: Option<[usize; 2]>,
    end_range: Option<[usize; 2]>,
    range_confidence: f64,
    change: Words<'a, Change>,
}

#[derive(Serialize)]
struct JsonHistory<'a> {
    benchmark: &'a str,
    metric: &'a str,
    fingerprint: &'a str,
    hostname: &'a str,
    points: usize,
    /// The smallest change reported (a fraction).
    min_change: f64,
    changes: Vec<JsonChange<'a>>,
    episodes: Vec<JsonEpisode<'a>>,
    drifts: Vec<JsonDrift<'a>>,
    wander: Option<&'a Wander>,
    speeds: Option<&'a crate::analysis::modes::SpeedModes>,
    newest: Option<JsonChange<'a>>,
    newest_status: NewestStatus,
}

/// One event of the top-level `events` list: its kind, whose history it
/// is, and the kind's own fields.
#[derive(Serialize)]
struct JsonEvent<'a> {
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    benchmark: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metric: Option<&'a str>,
    fingerprint: &'a str,
    hostname: &'a str,
    #[serde(flatten)]
    what: JsonWhat<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum JsonWhat<'a> {
    Change(JsonChange<'a>),
    Drift(JsonDrift<'a>),
    Episode(JsonEpisode<'a>),
    Wander(&'a Wander),
    Shift(JsonShift<'a>),
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
        change: Words(c),
    })
}

pub(crate) fn drift<'a>(h: &'a History, d: &'a Drift) -> Option<JsonDrift<'a>> {
    Some(JsonDrift {
        start: d.start,
        end: d.end,
        first_in: h.points.get(d.start)?,
        last_in: h.points.get(d.end)?,
        last_before: d.start.checked_sub(1).and_then(|i| h.points.get(i)),
        first_after: h.points.get(d.end + 1),
        ongoing: d.ongoing,
        direction: direction(h, &d.change),
        ratio: d.ratio(),
        slope_per_point: d.per_point(),
        slope_per_day: d.per_day(&times(h)),
        start_range: d.edges.map(|e| e.start),
        end_range: d.edges.map(|e| e.end),
        range_confidence: EDGE_CONFIDENCE,
        change: Words(&d.change),
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
                min_change: a.min_change,
                changes: a.changes.iter().filter_map(|c| entry(h, c)).collect(),
                episodes: a.episodes.iter().filter_map(|e| episode(h, e)).collect(),
                drifts: a.drifts.iter().filter_map(|d| drift(h, d)).collect(),
                wander: a.wander.as_ref(),
                speeds: a.speeds.as_ref(),
                newest: a.newest.as_ref().and_then(|c| entry(h, c)),
                newest_status: a.newest_status,
            }
        })
        .collect();
    let mut events: Vec<JsonEvent> = Vec::new();
    for a in all {
        let h = &a.history;
        for e in a.events() {
            let what = match e {
                Event::Step(c) | Event::Newest(c) => entry(h, c).map(JsonWhat::Change),
                Event::Drift(d) => drift(h, d).map(JsonWhat::Drift),
                Event::Episode(ep) => episode(h, ep).map(JsonWhat::Episode),
                Event::Wander(w) => Some(JsonWhat::Wander(w)),
            };
            if let Some(what) = what {
                events.push(JsonEvent {
                    kind: e.kind(),
                    benchmark: Some(&h.benchmark),
                    metric: Some(&h.metric),
                    fingerprint: &h.fingerprint,
                    hostname: &h.hostname,
                    what,
                });
            }
        }
    }
    for s in shifts {
        events.push(JsonEvent {
            kind: "machine_shift",
            benchmark: None,
            metric: None,
            fingerprint: &s.fingerprint,
            hostname: &s.hostname,
            what: JsonWhat::Shift(shift(s)),
        });
    }
    let shifts: Vec<JsonShift> = shifts.iter().map(shift).collect();
    // Plain data with string keys: serializing it does not fail.
    table::json(&serde_json::json!({
        "events": events,
        "histories": list,
        "machine_shifts": shifts,
    }))
    .unwrap_or_else(|_| "{}\n".into())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::analysis::changes::{analyse, Params};
    use crate::store::history::SessionRef;

    /// A cost creeping 1 % a session after 15 steady ones, one session a
    /// day (runs 0.2 % apart): the drift says its slope per point and per
    /// day, the same rate, in the text and the JSON.
    #[test]
    fn a_drift_says_its_slope_per_point_and_per_day() {
        let points: Vec<Point> = (0..30usize)
            .map(|s| Point {
                sessions: vec![Arc::new(SessionRef {
                    id: s as i64 + 1,
                    started: format!("2026-01-{:02}T00:00:00Z", s + 1),
                    started_unix: 1.767e9 + s as f64 * 86_400.0,
                    labels: vec![],
                    search: None,
                })],
                key: None,
                runs: (0..5usize)
                    .map(|r| {
                        let level = 0.1 * 1.01f64.powi((s as i32 - 14).max(0));
                        level * (1.0 + 0.001 * ((r * 7 + s * 3) % 5) as f64 - 0.002)
                    })
                    .collect(),
            })
            .collect();
        let h = History {
            benchmark: "creep".into(),
            metric: crate::metrics::Metric::WallTime.name().into(),
            fingerprint: "0123456789abcdef".into(),
            hostname: "vm".into(),
            points,
        };
        let all = analyse(vec![h], &Params::default());
        let out = text(&all, &[]);
        assert!(
            out.contains("  drift: slower +") && out.contains("    slope +1.0 % ("),
            "{out}"
        );
        assert!(out.contains(") per point, +1.0 % ("), "{out}");
        assert!(
            out.trim_end().ends_with(") per day") || out.contains(") per day\n"),
            "{out}"
        );
        let doc: serde_json::Value = serde_json::from_str(&json(&all, &[])).unwrap();
        let d = &doc["histories"][0]["drifts"][0];
        let (point, day) = (
            d["slope_per_point"]["ratio"].as_f64().unwrap(),
            d["slope_per_day"]["ratio"].as_f64().unwrap(),
        );
        assert!((point - 1.01).abs() < 0.002, "{d}");
        assert!((day / point - 1.0).abs() < 1e-9, "{d}");
        // Where its ends could be: ranges holding the drift's own start
        // and end (the creep starts at point 15 and is still going on).
        assert_eq!(d["range_confidence"].as_f64(), Some(0.9), "{d}");
        let range = |k: &str| -> [u64; 2] {
            let r = d[k].as_array().unwrap_or_else(|| panic!("{k}: {d}"));
            [r[0].as_u64().unwrap(), r[1].as_u64().unwrap()]
        };
        let (start, end) = (d["start"].as_u64().unwrap(), d["end"].as_u64().unwrap());
        let [a, b] = range("start_range");
        assert!(a <= start && start <= b && b - a <= 6, "{d}");
        assert!(a <= 15 && 15 <= b, "{d}");
        let [a, b] = range("end_range");
        assert!(a <= end && end <= b && b == 29, "{d}");
    }
}
