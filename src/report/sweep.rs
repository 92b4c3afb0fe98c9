//! A parameter sweep as people read it: the table with the best value and
//! the set as good as it marked, a bar chart for the terminal, and an SVG
//! line chart drawn through [`svg::LineChart`]. Rendering only: the table
//! model and the decisions (which value is best, which are as good) are
//! `analysis::sweep`'s, and nothing here re-decides them.

use std::fmt::Write;

use crate::analysis::comparison::Verdict;
use crate::analysis::source::Source;
use crate::analysis::sweep::{Curve, Sweep};
use crate::error::{OptionError, Result};
use crate::metrics::Unit;
use crate::report::paint::Paint;
use crate::report::svg::{self, Format, LineChart, Mark, Series};
use crate::report::{Exporter, Report};
use crate::units;

/// Columns a text takes on a terminal: CJK characters take two.
fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// Right-aligns by display width (`{:>w$}` counts characters, which
/// misaligns wide characters).
fn pad_left(text: &str, width: usize) -> String {
    format!(
        "{}{text}",
        " ".repeat(width.saturating_sub(display_width(text)))
    )
}

/// The width of the value column: the widest value or the axis name, in
/// terminal columns.
fn label_width(curve: &Curve, axis: &str) -> usize {
    curve
        .points
        .iter()
        .map(|p| display_width(&p.label))
        .max()
        .unwrap_or(1)
        .max(display_width(axis))
}

/// The table and the terminal chart.
pub fn render_text(sweep: &Sweep, paint: Paint) -> String {
    let mut out = String::new();
    let source = &sweep.source;
    let center = source.center_name();
    let format = |v: f64| source.format(v);
    for curve in &sweep.curves {
        let _ = writeln!(
            out,
            "{} {} over {} ({}, {center} per value)",
            paint.bold("Sweep:"),
            paint.bold(&curve.command),
            sweep.axis,
            source.name()
        );
        let width = label_width(curve, &sweep.axis);
        let _ = writeln!(
            out,
            "  {}  {:>11}  {:>27}  {:>11}  {:>5}  {:>8}",
            pad_left(&sweep.axis, width),
            center,
            "95 % CI",
            "user+sys",
            if source.per_batch() {
                "batches"
            } else {
                "runs"
            },
            "vs best"
        );
        for (i, p) in curve.points.iter().enumerate() {
            let ci =
                p.ci.map(|(lo, hi)| format!("[{} … {}]", format(lo), format(hi)))
                    .unwrap_or_else(|| "(too few runs)".into());
            let mark = if curve.best == Some(i) {
                paint.green(" ◀ best")
            } else if curve.as_good.contains(&i) {
                paint.green(" ≈ as good")
            } else {
                String::new()
            };
            let vs = match curve.vs_best.get(i).and_then(Option::as_ref) {
                // No ratio yet (too few runs to compare), as the search's table says.
                Some(c) if !c.ratio.is_finite() => "n/a".into(),
                Some(c) => format!("{:.2}x {}", c.ratio, c.verdict.symbol()),
                None if curve.best == Some(i) => "1x".into(),
                // An optimum search dropped it against an earlier leader.
                None => "dropped".into(),
            };
            let _ = writeln!(
                out,
                "  {}  {:>11}  {:>27}  {:>11}  {:>5}  {:>8}{mark}",
                pad_left(&p.label, width),
                format(p.median),
                ci,
                p.cpu.map(units::time).unwrap_or_default(),
                p.runs,
                vs
            );
        }
        out.push('\n');
        out.push_str(&bar_chart(curve, &sweep.axis, &format, paint));
        if let Some(b) = curve.best.map(|b| &curve.points[b]) {
            let ci =
                b.ci.map(|(lo, hi)| format!(" (95 % CI {} … {})", format(lo), format(hi)))
                    .unwrap_or_default();
            // The set, by the engine's test (see `decide_set`), not by
            // overlapping intervals.
            let others: Vec<&str> = curve
                .as_good
                .iter()
                .filter(|&&i| Some(i) != curve.best)
                .map(|&i| curve.points[i].label.as_str())
                .collect();
            let band: Vec<&str> = curve
                .as_good
                .iter()
                .filter(|&&i| {
                    curve
                        .vs_best
                        .get(i)
                        .and_then(Option::as_ref)
                        .is_some_and(|c| c.verdict == Verdict::NoDifference)
                })
                .map(|&i| curve.points[i].label.as_str())
                .collect();
            let precision = curve.vs_best.iter().flatten().map(|c| c.precision).next();
            let tie_note = if others.is_empty() {
                if curve.points.len() > 1 {
                    "\n  Every other value is significantly worse (comparison test with the best)."
                        .to_string()
                } else {
                    String::new()
                }
            } else {
                let within = match precision {
                    Some(p) if !band.is_empty() => {
                        format!("; {} within ±{} % of it", band.join(", "), p * 100.0)
                    }
                    _ => String::new(),
                };
                format!(
                    "\n  As good: {} = {}: not significantly worse than the best (comparison test){within}.",
                    sweep.axis,
                    others.join(", ")
                )
            };
            let _ = writeln!(
                out,
                "  Best: {} = {} with a {center} of {}{ci}{tie_note}\n",
                sweep.axis,
                paint.green(&b.label),
                format(b.median)
            );
        }
    }
    out
}

/// Horizontal bars, one per value: the curve, readable in any terminal.
fn bar_chart(curve: &Curve, axis: &str, format: &dyn Fn(f64) -> String, paint: Paint) -> String {
    const WIDTH: f64 = 40.0;
    let max = curve.points.iter().map(|p| p.median).fold(0.0, f64::max);
    let width = label_width(curve, axis);
    let mut out = String::new();
    for (i, p) in curve.points.iter().enumerate() {
        let eighths = if max > 0.0 {
            (p.median / max * WIDTH * 8.0).round() as usize
        } else {
            0
        };
        let mut bar = "█".repeat(eighths / 8);
        const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
        bar.push_str(PARTS[eighths % 8]);
        let bar = if curve.as_good.contains(&i) {
            paint.green(&bar)
        } else {
            paint.cyan(&bar)
        };
        let _ = writeln!(
            out,
            "  {} │{bar} {}",
            pad_left(&p.label, width),
            format(p.median)
        );
    }
    out.push('\n');
    out
}

/// The sweep as an SVG line chart: median per value, the 95 % interval as a
/// band, the values as good as the best shaded, the best marked; log x axis
/// for geometric scans. Values that are not numbers are placed in order and
/// named on the axis.
pub fn render_svg(sweep: &Sweep) -> String {
    let all = || sweep.curves.iter().flat_map(|c| &c.points);
    let numeric = all().next().is_some() && all().all(|p| p.x.is_some());
    let log = numeric && sweep.geometric && all().all(|p| p.x.is_some_and(|x| x > 0.0));
    let at = |i: usize, p: &crate::analysis::sweep::Point| match p.x {
        Some(x) if numeric => x,
        _ => i as f64,
    };
    // Every value named once on the axis (curves share their values).
    let mut x_labels: Vec<(f64, String)> = Vec::new();
    let mut shade: Vec<(f64, f64)> = Vec::new();
    let mut marks = Vec::new();
    let mut series = Vec::new();
    for curve in &sweep.curves {
        for (i, p) in curve.points.iter().enumerate() {
            let x = at(i, p);
            if !x_labels.iter().any(|(t, _)| *t == x) {
                x_labels.push((x, p.label.clone()));
            }
            // One shaded strip per member, so each value of the set shows.
            if curve.as_good.contains(&i) && !shade.contains(&(x, x)) {
                shade.push((x, x));
            }
        }
        if let Some(b) = curve.best.and_then(|b| curve.points.get(b).map(|p| (b, p))) {
            let label = if sweep.curves.len() == 1 {
                format!("best: {}", b.1.label)
            } else {
                format!("best of {}: {}", curve.command, b.1.label)
            };
            marks.push(Mark {
                x: at(b.0, b.1),
                label,
            });
        }
        series.push(Series {
            name: curve.command.clone(),
            points: curve
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| svg::Point {
                    x: at(i, p),
                    y: p.median,
                    lo: p.ci.map(|c| c.0),
                    hi: p.ci.map(|c| c.1),
                })
                .collect(),
        });
    }
    let mut title = format!(
        "{} by {}, {} per value",
        sweep.source.name(),
        sweep.axis,
        sweep.source.center_name()
    );
    // One curve has no legend: its command goes in the title.
    if let [curve] = sweep.curves.as_slice() {
        let _ = write!(title, ": {}", curve.command);
    }
    let chart = LineChart {
        title,
        x_label: format!("{}{}", sweep.axis, if log { " (log scale)" } else { "" }),
        y_label: sweep.source.name().to_string(),
        log_x: log,
        x_format: Format::Number,
        y_format: match sweep.source.unit() {
            Unit::Seconds => Format::Seconds,
            Unit::Bytes => Format::Bytes,
            Unit::Count => Format::Number,
        },
        series,
        highlight: None,
        shade,
    };
    let mut out = chart.render_labelled(&marks, &x_labels);
    out.push('\n');
    out
}

/// The sweep's chart (`--plot`), an SVG curve with the interval band; for
/// a concurrency sweep, the throughput curve with its fitted law.
pub struct SweepSvg;

impl Exporter for SweepSvg {
    fn render(&self, report: &Report) -> Result<String> {
        // A concurrency sweep's chart is its throughput curve, unless the
        // sweep was asked for another measure than time or throughput.
        let measure = report.sweep.map(|s| &s.source);
        let throughput_chart = measure.is_none_or(|s| {
            matches!(
                s,
                Source::Throughput | Source::Run(crate::metrics::Metric::WallTime)
            )
        });
        if let Some(c) = report.concurrency.filter(|_| throughput_chart) {
            if let Some(s) = c.scaling.first() {
                return Ok(super::concurrency::render_svg(c, s, report.session));
            }
        }
        report
            .sweep
            .map(render_svg)
            .ok_or_else(|| OptionError::PlotNeedsSweep.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sweep::Point;
    use crate::metrics::Metric;

    fn sweep() -> Sweep {
        let points = [(1.0, 30.0), (2.0, 16.0), (4.0, 9.0), (8.0, 12.0)]
            .iter()
            .enumerate()
            .map(|(i, &(x, y))| Point {
                cell: i,
                label: format!("{x}"),
                x: Some(x),
                median: y * 1e-3,
                ci: Some((y * 0.95e-3, y * 1.05e-3)),
                cpu: None,
                runs: 7,
            })
            .collect();
        Sweep {
            source: Source::Run(Metric::WallTime),
            maximize: false,
            axis: "batch".into(),
            geometric: true,
            curves: vec![Curve {
                command: "<script>alert(1)</script> {batch}".into(),
                points,
                best: Some(2),
                as_good: vec![2],
                vs_best: vec![None; 4],
            }],
        }
    }

    #[test]
    fn text_marks_the_best_value() {
        let t = render_text(&sweep(), Paint { enabled: false });
        let best_line = t.lines().find(|l| l.contains("◀ best")).unwrap();
        assert!(best_line.trim_start().starts_with('4'), "{best_line}");
        assert!(t.contains("Best: batch = 4 with a median of 9.000 ms"));
        assert!(
            t.contains("Every other value is significantly worse"),
            "{t}"
        );
        assert!(!t.contains("as good"), "{t}");
        // The set is marked on every member's row and named below the chart.
        let mut s = sweep();
        s.curves[0].as_good = vec![2, 3];
        let t = render_text(&s, Paint { enabled: false });
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("8 "))
            .unwrap();
        assert!(row.ends_with("≈ as good"), "{row}");
        assert!(
            t.contains("As good: batch = 8: not significantly worse than the best"),
            "{t}"
        );
        assert!(render_svg(&s).matches(r#"class="as-good""#).count() == 2);
    }

    #[test]
    fn svg_is_escaped_and_log_scaled() {
        let svg = render_svg(&sweep());
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.contains("(log scale)"));
        assert!(svg.contains(r#"class="band""#));
        // On a log axis 1, 2, 4, 8 are evenly spaced.
        let xs: Vec<f64> = svg
            .split("<circle cx=\"")
            .skip(1)
            .map(|c| c.split('"').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(xs.len(), 4);
        assert!(((xs[1] - xs[0]) - (xs[3] - xs[2])).abs() < 0.2, "{xs:?}");
    }
}
