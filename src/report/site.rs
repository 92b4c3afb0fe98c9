//! `cmdscope report --site DIR`: a static site of the store's histories.
//! `index.html` lists every benchmark (latest value, trend sparkline, open
//! regression) and links one page per benchmark (history chart with its
//! change points marked, distribution of the latest points, change list,
//! the newest search's answer).
//!
//! Like the HTML report: no scripts, no network (the same
//! Content-Security-Policy), inline SVG and CSS, every user string through
//! [`svg::escape`]. Pages link each other by relative names, so the
//! directory can be published as is.

use std::fmt::Write as _;

use crate::analysis::changes::{Analysed, Change};
use crate::analysis::comparison::format_p;
use crate::report::changes::{change_text, direction, median_text, value};
use crate::report::html::{CSP, STYLE};
use crate::report::svg::{self, escape, BoxPlot, BoxStats, Format, LineChart, Mark, Series};
use crate::store::history::{History, Point};

/// Points drawn in a benchmark's history chart (the newest ones).
pub const CHART_POINTS: usize = 500;
/// Points in an index sparkline.
pub const SPARK_POINTS: usize = 100;
/// Latest points whose runs the distribution chart shows.
pub const LATEST: usize = 5;

const SITE_STYLE: &str = "
svg.spark { vertical-align: middle; }
td.regression { color: #b00; }
";

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

/// The site's files: (file name, content), `index.html` first.
pub fn render(all: &[Analysed], store: &str) -> Vec<(String, String)> {
    let mut files = vec![("index.html".to_string(), index(all, store))];
    for a in all {
        files.push((page_name(&a.history), page(a)));
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
                    change_text(c),
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

fn page(a: &Analysed) -> String {
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

    // History: median and its interval per point, change points marked.
    let start = h.points.len().saturating_sub(CHART_POINTS);
    let points: Vec<svg::Point> = a.medians[start..]
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            Some(svg::Point {
                x: (start + i) as f64,
                y: m.median?,
                lo: m.ci.map(|[lo, _]| lo),
                hi: m.ci.map(|[_, hi]| hi),
            })
        })
        .collect();
    let marks: Vec<Mark> = a
        .changes
        .iter()
        .filter(|c| c.index >= start)
        .map(|c| Mark {
            x: c.index as f64 - 0.5,
            label: h.points.get(c.index).map(point_label).unwrap_or_default(),
        })
        .collect();
    let y_format = if h.is_time() {
        Format::Seconds
    } else {
        Format::Number
    };
    out.push_str("<h2>History</h2>\n");
    if start > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">The newest {CHART_POINTS} of {} points.</p>",
            h.points.len()
        );
    }
    out.push_str(
        &LineChart {
            title: format!("{}: median per point, 95 % interval", h.benchmark),
            x_label: "point (oldest → newest)".into(),
            y_label: h.metric.clone(),
            y_format,
            series: vec![Series {
                name: "median".into(),
                points,
            }],
            ..LineChart::default()
        }
        .render_marked(&marks),
    );

    // Distribution of the latest points' runs.
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

    out.push_str("<h2>Changes</h2>\n");
    if a.changes.is_empty() {
        out.push_str("<p>No change points.</p>\n");
    } else {
        out.push_str(
            "<table class=\"changes\"><tr><th>First after</th><th>Last before</th><th>Before</th>\
             <th>After</th><th>Change</th><th>p</th><th>Direction</th></tr>\n",
        );
        for c in &a.changes {
            change_row(&mut out, h, c);
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
            escape(&change_text(c)),
            c.before.last + 1 - c.before.first,
            escape(&format_p(c.comparison.p_value))
        );
    }
    out.push_str("</body></html>\n");
    out
}

fn change_row(out: &mut String, h: &History, c: &Change) {
    let describe = |i: usize| h.points.get(i).map(Point::describe).unwrap_or_default();
    let cells = [
        describe(c.index),
        describe(c.index.saturating_sub(1)),
        median_text(h, &c.before),
        median_text(h, &c.after),
        change_text(c),
        format_p(c.comparison.p_value),
        direction(h, c).to_string(),
    ];
    out.push_str("<tr class=\"change\">");
    for cell in cells {
        let _ = write!(out, "<td>{}</td>", escape(&cell));
    }
    out.push_str("</tr>\n");
}
