//! Parameter sweeps as people read them: a table ordered by parameter value,
//! the best value marked with its interval, a bar chart in the terminal and
//! an SVG curve with the interval band.

use std::fmt::Write;

use crate::analysis::CellAnalysis;
use crate::metrics::Metric;
use crate::plan::Parameter;
use crate::report::terminal::Paint;
use crate::runner::Session;
use crate::units;

#[derive(Clone, Debug)]
pub struct Point {
    /// Index of the cell in the session.
    pub cell: usize,
    pub label: String,
    /// The swept parameter's value as a number, if it is numeric.
    pub x: Option<f64>,
    pub median: f64,
    pub ci: Option<(f64, f64)>,
    /// Median user + system time.
    pub cpu: Option<f64>,
    pub runs: usize,
}

/// One curve: one command template over all parameter combinations.
#[derive(Clone, Debug)]
pub struct Curve {
    pub command: String,
    pub points: Vec<Point>,
    /// Index into `points` of the best value.
    pub best: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Sweep {
    pub metric: Metric,
    pub maximize: bool,
    /// Name of the parameter on the x axis ("a, b" when several vary).
    pub axis: String,
    pub geometric: bool,
    pub curves: Vec<Curve>,
}

fn better(maximize: bool, a: f64, b: f64) -> bool {
    if maximize {
        a > b
    } else {
        a < b
    }
}

/// Builds the sweep view of a session whose cells came from parameters.
pub fn build(
    session: &Session,
    analyses: &[CellAnalysis],
    params: &[Parameter],
    metric: Metric,
    maximize: bool,
    templates: &[String],
) -> Option<Sweep> {
    let commands = templates.len();
    if params.is_empty() || session.results.is_empty() || commands == 0 {
        return None;
    }
    let varying: Vec<&Parameter> = params.iter().filter(|p| p.values.len() > 1).collect();
    let single = (varying.len() == 1).then(|| varying[0]);
    let axis = if varying.is_empty() {
        params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        varying
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut curves = Vec::new();
    for (g, template) in templates.iter().enumerate() {
        let mut points = Vec::new();
        // The cells of this command (a --reference command is on no curve).
        for (cell, r) in session.results.iter().enumerate() {
            if r.cell.template != g {
                continue;
            }
            let Some(m) = analyses.get(cell).and_then(|a| a.get(metric)) else {
                continue;
            };
            let label = match single {
                Some(p) => r
                    .cell
                    .parameters
                    .iter()
                    .find(|(k, _)| *k == p.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
                None => r
                    .cell
                    .parameters
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            let x = single.and_then(|_| label.trim().parse::<f64>().ok());
            points.push(Point {
                cell,
                label,
                x,
                median: m.summary.median,
                ci: m.median_ci.as_ref().ok().map(|e| (e.low, e.high)),
                cpu: analyses[cell]
                    .get(Metric::CpuTime)
                    .map(|c| c.summary.median),
                runs: analyses[cell].runs,
            });
        }
        if single.is_some_and(|p| p.numeric.is_some()) {
            points.sort_by(|a, b| a.x.unwrap_or(0.0).total_cmp(&b.x.unwrap_or(0.0)));
        }
        let best = (0..points.len()).reduce(|b, i| {
            if better(maximize, points[i].median, points[b].median) {
                i
            } else {
                b
            }
        });
        let command = template.clone();
        curves.push(Curve {
            command,
            points,
            best,
        });
    }
    Some(Sweep {
        metric,
        maximize,
        axis,
        geometric: single.is_some_and(|p| p.geometric),
        curves,
    })
}

/// The table and the terminal chart.
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

pub fn render_text(sweep: &Sweep, paint: Paint) -> String {
    let mut out = String::new();
    let unit = sweep.metric.unit();
    for curve in &sweep.curves {
        let _ = writeln!(
            out,
            "{} {} over {} ({}, median per value)",
            paint.bold("Sweep:"),
            paint.bold(&curve.command),
            sweep.axis,
            sweep.metric.name()
        );
        let width = curve
            .points
            .iter()
            .map(|p| display_width(&p.label))
            .max()
            .unwrap_or(1)
            .max(display_width(&sweep.axis));
        let _ = writeln!(
            out,
            "  {}  {:>11}  {:>27}  {:>11}  {:>5}",
            pad_left(&sweep.axis, width),
            "median",
            "95 % CI",
            "user+sys",
            "runs"
        );
        for (i, p) in curve.points.iter().enumerate() {
            let ci =
                p.ci.map(|(lo, hi)| {
                    format!(
                        "[{} … {}]",
                        units::quantity(lo, unit),
                        units::quantity(hi, unit)
                    )
                })
                .unwrap_or_else(|| "(too few runs)".into());
            let mark = if curve.best == Some(i) {
                paint.green(" ◀ best")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {}  {:>11}  {:>27}  {:>11}  {:>5}{mark}",
                pad_left(&p.label, width),
                units::quantity(p.median, unit),
                ci,
                p.cpu.map(units::time).unwrap_or_default(),
                p.runs
            );
        }
        out.push('\n');
        out.push_str(&bar_chart(curve, &sweep.axis, unit, paint));
        if let Some(b) = curve.best.map(|b| &curve.points[b]) {
            let ci =
                b.ci.map(|(lo, hi)| {
                    format!(
                        " (95 % CI {} … {})",
                        units::quantity(lo, unit),
                        units::quantity(hi, unit)
                    )
                })
                .unwrap_or_default();
            // Values whose interval overlaps the best one's are not shown to
            // be worse: say so rather than crown a winner by noise.
            let tied: Vec<&str> = match b.ci {
                Some((lo, hi)) => curve
                    .points
                    .iter()
                    .filter(|p| !std::ptr::eq(*p, b))
                    .filter(|p| p.ci.is_some_and(|(plo, phi)| plo <= hi && phi >= lo))
                    .map(|p| p.label.as_str())
                    .collect(),
                None => Vec::new(),
            };
            let tie_note = if tied.is_empty() {
                String::new()
            } else {
                format!(
                    "\n  Its interval overlaps those of {} = {}: within the noise, they are as good.",
                    sweep.axis,
                    tied.join(", ")
                )
            };
            let _ = writeln!(
                out,
                "  Best: {} = {} with a median of {}{ci}{tie_note}\n",
                sweep.axis,
                paint.green(&b.label),
                units::quantity(b.median, unit)
            );
        }
    }
    out
}

/// Horizontal bars, one per value: the curve, readable in any terminal.
fn bar_chart(curve: &Curve, axis: &str, unit: crate::metrics::Unit, paint: Paint) -> String {
    const WIDTH: f64 = 40.0;
    let max = curve.points.iter().map(|p| p.median).fold(0.0, f64::max);
    let width = curve
        .points
        .iter()
        .map(|p| display_width(&p.label))
        .max()
        .unwrap_or(1)
        .max(axis.len());
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
        let bar = if curve.best == Some(i) {
            paint.green(&bar)
        } else {
            paint.cyan(&bar)
        };
        let _ = writeln!(
            out,
            "  {} │{bar} {}",
            pad_left(&p.label, width),
            units::quantity(p.median, unit)
        );
    }
    out.push('\n');
    out
}

/// The sweep as an SVG line chart: median per value, the 95 % interval as a
/// band, the best value marked; log x axis for geometric scans.
pub fn render_svg(sweep: &Sweep) -> String {
    let (w, h) = (760.0, 440.0);
    let (left, right, top, bottom) = (80.0, 30.0, 50.0, 60.0);
    let unit = sweep.metric.unit();
    let all: Vec<&Point> = sweep.curves.iter().flat_map(|c| &c.points).collect();
    let numeric = all.iter().all(|p| p.x.is_some()) && !all.is_empty();
    let log = sweep.geometric && all.iter().all(|p| p.x.is_some_and(|x| x > 0.0));
    let fx = |x: f64| if log { x.log10() } else { x };
    let (xmin, xmax) = if numeric {
        let xs = all.iter().filter_map(|p| p.x).map(fx);
        let (a, b) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        if a == b {
            (a - 1.0, b + 1.0)
        } else {
            (a, b)
        }
    } else {
        (
            0.0,
            (sweep
                .curves
                .iter()
                .map(|c| c.points.len())
                .max()
                .unwrap_or(1)
                .max(2)
                - 1) as f64,
        )
    };
    let ymax = all
        .iter()
        .map(|p| p.ci.map_or(p.median, |(_, hi)| hi.max(p.median)))
        .fold(0.0, f64::max)
        * 1.08;
    let ymax = if ymax > 0.0 { ymax } else { 1.0 };
    let px = |x: f64| left + (x - xmin) / (xmax - xmin) * (w - left - right);
    let py = |y: f64| h - bottom - y / ymax * (h - top - bottom);
    let xpos = |i: usize, p: &Point| {
        if numeric {
            px(fx(p.x.unwrap_or(0.0)))
        } else {
            px(i as f64)
        }
    };

    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(s, r##"<rect width="{w}" height="{h}" fill="#ffffff"/>"##);
    let title = format!(
        "{} by {}{}",
        sweep.metric.name(),
        sweep.axis,
        if log { " (log scale)" } else { "" }
    );
    let _ = write!(
        s,
        r#"<text x="{left}" y="28" font-size="15" font-weight="bold">{}</text>"#,
        crate::svg::escape(&title)
    );
    // Axes and grid.
    for t in crate::svg::ticks(0.0, ymax, 5) {
        let y = py(t);
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            w - right,
            left - 6.0,
            y + 4.0,
            crate::svg::escape(&if t == 0.0 {
                "0".to_string()
            } else {
                units::quantity(t, unit)
            })
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{left}" x2="{left}" y1="{top}" y2="{}" stroke="#333"/><line x1="{left}" x2="{}" y1="{}" y2="{}" stroke="#333"/>"##,
        h - bottom,
        w - right,
        h - bottom,
        h - bottom
    );
    if let Some(curve) = sweep.curves.first() {
        let step = (curve.points.len() / 16).max(1);
        for (i, p) in curve
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| i % step == 0)
        {
            let x = xpos(i, p);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}" stroke="#333"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                h - bottom,
                h - bottom + 5.0,
                h - bottom + 18.0,
                crate::svg::escape(&p.label)
            );
        }
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (left + w - right) / 2.0,
        h - 15.0,
        crate::svg::escape(&sweep.axis)
    );
    const COLOURS: [&str; 6] = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
    ];
    for (k, curve) in sweep.curves.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let band: Vec<(f64, f64, f64)> = curve
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.ci.map(|(lo, hi)| (xpos(i, p), py(lo), py(hi))))
            .collect();
        if band.len() >= 2 {
            let mut d = String::new();
            for (x, _, hi) in &band {
                let _ = write!(d, "{x:.1},{hi:.1} ");
            }
            for (x, lo, _) in band.iter().rev() {
                let _ = write!(d, "{x:.1},{lo:.1} ");
            }
            let _ = write!(
                s,
                r#"<polygon class="band" points="{}" fill="{colour}" fill-opacity="0.18" stroke="none"/>"#,
                d.trim_end()
            );
        }
        let line: Vec<String> = curve
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{:.1},{:.1}", xpos(i, p), py(p.median)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline class="median" points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            line.join(" ")
        );
        for (i, p) in curve.points.iter().enumerate() {
            let best = curve.best == Some(i);
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{}" fill="{colour}"><title>{} = {}: {}</title></circle>"#,
                xpos(i, p),
                py(p.median),
                if best { 6 } else { 3 },
                crate::svg::escape(&sweep.axis),
                crate::svg::escape(&p.label),
                crate::svg::escape(&units::quantity(p.median, unit))
            );
            if best {
                // Keep the label inside the chart at either edge.
                let x = xpos(i, p);
                let anchor = if x > w - right - 60.0 {
                    "end"
                } else if x < left + 60.0 {
                    "start"
                } else {
                    "middle"
                };
                let _ = write!(
                    s,
                    r#"<text class="best" x="{:.1}" y="{:.1}" text-anchor="{anchor}" font-weight="bold">best: {}</text>"#,
                    x,
                    py(p.median) - 12.0,
                    crate::svg::escape(&p.label)
                );
            }
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" fill="{colour}">{}</text>"#,
            left + 10.0,
            top + 16.0 * (k as f64 + 1.0),
            crate::svg::escape(&curve.command)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
            metric: Metric::WallTime,
            maximize: false,
            axis: "batch".into(),
            geometric: true,
            curves: vec![Curve {
                command: "<script>alert(1)</script> {batch}".into(),
                points,
                best: Some(2),
            }],
        }
    }

    #[test]
    fn text_marks_the_best_value() {
        let t = render_text(&sweep(), Paint { enabled: false });
        let best_line = t.lines().find(|l| l.contains("◀ best")).unwrap();
        assert!(best_line.trim_start().starts_with('4'), "{best_line}");
        assert!(t.contains("Best: batch = 4 with a median of 9.000 ms"));
        // 8 (11.4 … 12.6 ms) does not overlap 4 (8.55 … 9.45 ms): no tie.
        assert!(!t.contains("overlaps"), "{t}");
        let mut s = sweep();
        s.curves[0].points[3].ci = Some((9.2e-3, 13e-3));
        let t = render_text(&s, Paint { enabled: false });
        assert!(
            t.contains("Its interval overlaps those of batch = 8"),
            "{t}"
        );
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
