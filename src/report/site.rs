//! `cmdscope report --site DIR`: a static site of the store's histories.
//! `index.html` lists every benchmark (latest value, trend sparkline, open
//! regression) and links one page per benchmark: a history chart per
//! metric (wall time, and for a benchmark run with --concurrency its
//! throughput and latency percentiles) with every event drawn as what it
//! is (a step as a dashed line; a drift as a sloped band from the level
//! before it to the level after it over its shaded slide, and an episode
//! as a shaded stretch, each with its size and the points at its edges; a
//! machine-wide shift as a line of its own colour on the benchmarks that
//! changed there; wander as a note), the distribution of the latest
//! points, the event list, and the newest search's answer.
//!
//! Like the HTML report: no scripts, no network (the same
//! Content-Security-Policy), inline SVG and CSS, every user string through
//! [`svg::escape`]. Pages link each other by relative names, so the
//! directory can be published as is.

use std::fmt::Write as _;

use crate::analysis::changes::{Analysed, Change, Event, MachineShift};
use crate::report::changes::{
    change_text, direction, drift_text, episode_text, median_text, metric_name, size_text,
    speeds_text, value, wander_text,
};
use crate::report::html::{CSP, STYLE};
use crate::report::svg::{self, escape, BoxPlot, BoxStats, Format, LineChart, Mark, Series, Span};
use crate::store::history::{History, Point};
use crate::units::format_p;

/// Points drawn in a benchmark's history chart (the newest ones).
pub const CHART_POINTS: usize = 500;
/// Points in an index sparkline.
pub const SPARK_POINTS: usize = 100;
/// Latest points whose runs the distribution chart shows.
pub const LATEST: usize = 5;

const SITE_STYLE: &str = "
svg.spark { vertical-align: middle; }
td.regression { color: #b00; }
p.wander { color: #555; }
";

/// Colours of the events drawn on a history chart.
const DRIFT: &str = "#e69f00";
const EPISODE: &str = "#cc79a7";
const SHIFT: &str = "#0072b2";

/// File name of a benchmark's page: stable for the same machine and
/// benchmark, and safe whatever the benchmark is called.
pub fn page_name(h: &History) -> String {
    let key = format!("{}\n{}", h.fingerprint, h.benchmark);
    format!(
        "bench-{:016x}.html",
        crate::store::machine::fnv1a(key.as_bytes())
    )
}

/// What a point is called on a chart: its commit, else its label value
/// (`--order-by`), else its labels, else its session.
pub fn point_label(p: &Point) -> String {
    if let Some(k) = &p.key {
        return k.clone();
    }
    let Some(s) = p.newest() else {
        return String::new();
    };
    if let Some((_, v)) = s.labels.iter().find(|(k, _)| k == "commit") {
        return v.clone();
    }
    if s.labels.is_empty() {
        format!("#{}", s.id)
    } else {
        let l: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        l.join(" ")
    }
}

fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}{SITE_STYLE}</style></head><body>\n",
        escape(title)
    );
}

fn machine(h: &History) -> String {
    format!(
        "{} [{}]",
        h.hostname,
        crate::store::short_fingerprint(&h.fingerprint)
    )
}

/// The site's files: (file name, content), `index.html` first. `all`
/// are the wall-time histories (one page each); `more` the other metrics'
/// histories (throughput and latency of concurrency benchmarks), drawn on
/// the page of the same machine and benchmark; `shifts` the machine-wide
/// shifts of `all`.
pub fn render(
    all: &[Analysed],
    more: &[Analysed],
    shifts: &[MachineShift],
    store: &str,
) -> Vec<(String, String)> {
    let mut files = vec![("index.html".to_string(), index(all, store))];
    for a in all {
        let h = &a.history;
        let others: Vec<&Analysed> = more
            .iter()
            .filter(|m| {
                m.history.fingerprint == h.fingerprint && m.history.benchmark == h.benchmark
            })
            .collect();
        files.push((page_name(h), page(a, &others, shifts)));
    }
    files
}

fn index(all: &[Analysed], store: &str) -> String {
    let mut out = String::with_capacity(256 * all.len() + 4096);
    head(&mut out, "cmdscope: benchmark history");
    let open = all.iter().filter(|a| a.open_regression().is_some()).count();
    let _ = write!(
        out,
        "<h1>cmdscope: benchmark history</h1>\n<p class=\"note\">Store {} · {} benchmark histor{} · {} open regression{}</p>\n",
        escape(store),
        all.len(),
        if all.len() == 1 { "y" } else { "ies" },
        open,
        if open == 1 { "" } else { "s" }
    );
    out.push_str(
        "<table class=\"benchmarks\"><tr><th>Benchmark</th><th>Machine</th><th>Points</th>\
         <th>Latest median</th><th>Trend</th><th>Open regression</th></tr>\n",
    );
    for a in all {
        let h = &a.history;
        let latest = h.points.last().zip(a.medians.last());
        let latest_text = latest
            .map(|(p, m)| {
                format!(
                    "{} ({})",
                    value(h, m.median.unwrap_or(f64::NAN)),
                    point_label(p)
                )
            })
            .unwrap_or_default();
        let regression = a
            .open_regression()
            .map(|c| {
                format!(
                    "{} {} since {}",
                    direction(h, c),
                    change_text(h, c),
                    h.points.get(c.index).map(point_label).unwrap_or_default()
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"regression\">{}</td></tr>",
            escape(&page_name(h)),
            escape(&h.benchmark),
            escape(&machine(h)),
            h.points.len(),
            escape(&latest_text),
            sparkline(a),
            escape(&regression)
        );
    }
    out.push_str("</table>\n<p class=\"note\">Change points: docs/CHANGES.md of cmdscope describes the method.</p>\n</body></html>\n");
    out
}

/// A small trend line of the latest points' medians (no axes).
fn sparkline(a: &Analysed) -> String {
    let h = &a.history;
    const W: f64 = 120.0;
    const H: f64 = 24.0;
    let start = a.medians.len().saturating_sub(SPARK_POINTS);
    let ys: Vec<f64> = a.medians[start..].iter().filter_map(|m| m.median).collect();
    if ys.len() < 2 {
        return String::new();
    }
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let step = W / (ys.len() - 1) as f64;
    let pts: Vec<String> = ys
        .iter()
        .enumerate()
        .map(|(i, y)| {
            format!(
                "{:.1},{:.1}",
                i as f64 * step,
                H - 2.0 - (y - lo) / span * (H - 4.0)
            )
        })
        .collect();
    format!(
        "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\"><title>{} … {}</title><polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/></svg>",
        escape(&value(h, lo)),
        escape(&value(h, hi)),
        pts.join(" "),
        svg::PALETTE[0]
    )
}

fn page(a: &Analysed, others: &[&Analysed], shifts: &[MachineShift]) -> String {
    let h = &a.history;
    let mut out = String::with_capacity(64 * 1024);
    head(&mut out, &format!("cmdscope: {}", h.benchmark));
    let _ = write!(
        out,
        "<p><a href=\"index.html\">← all benchmarks</a></p>\n<h1>{}</h1>\n<table class=\"session\">",
        escape(&h.benchmark)
    );
    for (k, v) in [
        ("Machine", machine(h)),
        ("Metric", h.metric.clone()),
        ("Points", h.points.len().to_string()),
    ] {
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(k),
            escape(&v)
        );
    }
    out.push_str("</table>\n");
    // The newest search among the points: its answer in a line.
    if let Some((r, search)) = h
        .points
        .iter()
        .rev()
        .flat_map(|p| p.sessions.iter().rev())
        .find_map(|r| Some((r, r.search.as_ref()?)))
    {
        let _ = writeln!(
            out,
            "<p class=\"search\">Search of session #{}: {}</p>",
            r.id,
            escape(&crate::report::html::search_line(search))
        );
    }

    out.push_str("<h2>History</h2>\n");
    history_chart(&mut out, a, shifts);

    // Distribution of the latest points' runs.
    let y_format = if h.is_time() {
        Format::Seconds
    } else {
        Format::Number
    };
    let first = h.points.len().saturating_sub(LATEST);
    let boxes: Vec<BoxStats> = h.points[first..]
        .iter()
        .filter_map(|p| BoxStats::from_values(&point_label(p), &p.runs))
        .collect();
    if !boxes.is_empty() {
        out.push_str("<h2>Latest points</h2>\n");
        out.push_str(
            &BoxPlot {
                title: format!("{}: runs of the latest points", h.benchmark),
                y_label: h.metric.clone(),
                y_format,
                boxes,
            }
            .render(),
        );
    }

    out.push_str("<h2>Events</h2>\n");
    events(&mut out, a);
    for o in others {
        let _ = writeln!(out, "<h2>{}</h2>", escape(metric_name(&o.history)));
        history_chart(&mut out, o, &[]);
        events(&mut out, o);
    }
    out.push_str("</body></html>\n");
    out
}

/// A history's chart: median and its interval per point (throughput as
/// completions per second), every event drawn as what it is.
fn history_chart(out: &mut String, a: &Analysed, shifts: &[MachineShift]) {
    let h = &a.history;
    let start = h.points.len().saturating_sub(CHART_POINTS);
    let shown = |v: f64| if h.is_throughput() { 1.0 / v } else { v };
    let points: Vec<svg::Point> = a.medians[start..]
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let (lo, hi) = match m.ci {
                Some([lo, hi]) if h.is_throughput() => (Some(shown(hi)), Some(shown(lo))),
                Some([lo, hi]) => (Some(lo), Some(hi)),
                None => (None, None),
            };
            Some(svg::Point {
                x: (start + i) as f64,
                y: shown(m.median?),
                lo,
                hi,
            })
        })
        .collect();
    let label_at = |i: usize| h.points.get(i).map(point_label).unwrap_or_default();
    let marks: Vec<Mark> = a
        .changes
        .iter()
        .filter(|c| c.index >= start)
        .map(|c| Mark {
            x: c.index as f64 - 0.5,
            label: label_at(c.index),
        })
        .collect();
    // A side's level as drawn: its median's interval (throughput as
    // completions per second, its ends swapped).
    let level = |side: &crate::analysis::changes::Side| {
        let [lo, hi] = side.ci.unwrap_or([side.median; 2]);
        if h.is_throughput() {
            (shown(hi), shown(lo))
        } else {
            (lo, hi)
        }
    };
    let mut spans: Vec<Span> = Vec::new();
    for d in a.drifts.iter().filter(|d| d.end >= start) {
        spans.push(Span {
            from: d.start.max(start) as f64 - 0.5,
            to: d.end as f64 + 0.5,
            class: "drift",
            colour: DRIFT,
            label: format!(
                "drift {}{}",
                size_text(h, &d.change),
                if d.ongoing { " so far" } else { "" }
            ),
            title: format!("drift: {}", drift_text(h, d)),
            edges: [label_at(d.start), label_at(d.end)],
            // From the level before the slide to the level after it; a
            // slide that starts before the chart has no level drawn at its
            // left edge.
            slide: (d.start >= start).then(|| [level(&d.change.before), level(&d.change.after)]),
        });
    }
    for e in a.episodes.iter().filter(|e| e.end >= start) {
        spans.push(Span {
            from: e.start.max(start) as f64 - 0.5,
            to: e.end as f64 + 0.5,
            class: "episode",
            colour: EPISODE,
            label: format!("episode {}, then back", size_text(h, &e.enter)),
            title: format!("episode: {}", episode_text(h, e)),
            edges: [label_at(e.start), label_at(e.end)],
            slide: None,
        });
    }
    // A machine-wide shift on the page of every benchmark that changed
    // there (the others of the machine did not).
    for s in shifts
        .iter()
        .filter(|s| s.fingerprint == h.fingerprint && s.benchmarks.contains(&h.benchmark))
    {
        let ids: Vec<i64> = s.point.sessions.iter().map(|r| r.id).collect();
        if let Some(i) = h
            .points
            .iter()
            .position(|p| p.sessions.iter().any(|r| ids.contains(&r.id)))
            .filter(|&i| i >= start)
        {
            let x = i as f64 - 0.5;
            spans.push(Span {
                from: x,
                to: x,
                class: "shift",
                colour: SHIFT,
                label: format!("machine-wide, {} of {}", s.benchmarks.len(), s.of),
                title: crate::report::changes::shift_text(s),
                edges: [label_at(i), String::new()],
                slide: None,
            });
        }
    }
    let (y_label, y_format) = if h.is_throughput() {
        ("throughput (completions/s)".to_string(), Format::Number)
    } else if h.is_time() {
        (h.metric.clone(), Format::Seconds)
    } else {
        (h.metric.clone(), Format::Number)
    };
    if start > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">The newest {CHART_POINTS} of {} points.</p>",
            h.points.len()
        );
    }
    out.push_str(
        &LineChart {
            title: format!(
                "{}: {} per point, 95 % interval",
                h.benchmark,
                metric_name(h)
            ),
            x_label: "point (oldest → newest)".into(),
            y_label,
            y_format,
            series: vec![Series {
                name: "median".into(),
                points,
            }],
            ..LineChart::default()
        }
        .render_spans(&marks, &spans),
    );
    if let Some(w) = &a.wander {
        let _ = writeln!(
            out,
            "<p class=\"wander\">Wander: {}.</p>",
            escape(&wander_text(w))
        );
    }
    if let Some(s) = speeds_text(h, a) {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(&s));
    }
}

/// The event list of a history: one row per step, drift and episode, and
/// the newest point's comparison when significant.
fn events(out: &mut String, a: &Analysed) {
    let h = &a.history;
    let list: Vec<Event> = a
        .events()
        .into_iter()
        .filter(|e| !matches!(e, Event::Wander(_) | Event::Newest(_)))
        .collect();
    if list.is_empty() {
        out.push_str("<p>No change points.</p>\n");
    } else {
        out.push_str(
            "<table class=\"changes\"><tr><th>Kind</th><th>First</th><th>Last</th><th>Before</th>\
             <th>After</th><th>Change</th><th>p</th><th>Direction</th></tr>\n",
        );
        for e in list {
            match e {
                Event::Step(c) => {
                    change_row(out, h, "step", c.index, c.index.saturating_sub(1), c, "")
                }
                Event::Drift(d) => change_row(
                    out,
                    h,
                    "drift",
                    d.start,
                    d.end,
                    &d.change,
                    if d.ongoing { ", still going on" } else { "" },
                ),
                Event::Episode(ep) => change_row(
                    out,
                    h,
                    "episode",
                    ep.start,
                    ep.end,
                    &ep.enter,
                    ", then back",
                ),
                Event::Newest(_) | Event::Wander(_) => {}
            }
        }
        out.push_str("</table>\n");
    }
    if let Some(c) = &a.newest {
        let _ = writeln!(
            out,
            "<p>Newest point {}: {} {} than the {} points before it ({}).</p>",
            escape(
                &h.points
                    .get(c.index)
                    .map(Point::describe)
                    .unwrap_or_default()
            ),
            direction(h, c),
            escape(&change_text(h, c)),
            c.before.last + 1 - c.before.first,
            escape(&format_p(c.comparison.p_value))
        );
    }
}

fn change_row(
    out: &mut String,
    h: &History,
    kind: &str,
    first: usize,
    last: usize,
    c: &Change,
    more: &str,
) {
    let describe = |i: usize| h.points.get(i).map(Point::describe).unwrap_or_default();
    let cells = [
        kind.to_string(),
        describe(first),
        describe(last),
        median_text(h, &c.before),
        median_text(h, &c.after),
        change_text(h, c),
        format_p(c.comparison.p_value),
        format!("{}{more}", direction(h, c)),
    ];
    let _ = write!(out, "<tr class=\"{kind}\">");
    for cell in cells {
        let _ = write!(out, "<td>{}</td>", escape(&cell));
    }
    out.push_str("</tr>\n");
}
