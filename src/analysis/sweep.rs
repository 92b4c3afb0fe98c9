//! Parameter sweeps as people read them: a table ordered by parameter value,
//! the best value and the set of values as good as it marked, a bar chart
//! in the terminal and an SVG curve with the interval band.
//!
//! The set is decided by the comparison engine, never by overlapping
//! intervals: every value is compared with the best (paired when the
//! session was interleaved, Bonferroni over the curve's values), and a
//! value is in the set unless it is significantly worse, either by that
//! test or by a comparison the report prints above the sweep (so the sweep
//! never calls "as good" what the summary calls slower).

use std::fmt::Write;

use crate::analysis::comparison::{self, Comparison, Design, Settings, Verdict};
use crate::analysis::CellAnalysis;
use crate::metrics::Metric;
use crate::report::terminal::Paint;
use crate::run::plan::Parameter;
use crate::run::session::Session;
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
    /// Indices into `points` of the values not significantly worse than
    /// the best, the best included.
    pub as_good: Vec<usize>,
    /// Each point's comparison with the best (None for the best itself).
    pub vs_best: Vec<Option<Comparison>>,
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

/// How the sweep decides its set: the printed comparisons it must agree
/// with, and the level and band of its own.
pub struct SetRules<'a> {
    pub comparisons: &'a [Comparison],
    pub alpha: f64,
    pub precision: f64,
}

/// Builds the sweep view of a session whose cells came from parameters.
pub fn build(
    session: &Session,
    analyses: &[CellAnalysis],
    params: &[Parameter],
    metric: Metric,
    maximize: bool,
    templates: &[String],
    rules: &SetRules,
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
        // The best median among the values no printed comparison shows
        // significantly worse than another (all values if none is left).
        let shown: Vec<bool> = points
            .iter()
            .map(|p| shown_worse(rules, &session.results[p.cell].cell.name, metric, maximize))
            .collect();
        let pick = |candidates: &mut dyn Iterator<Item = usize>| {
            candidates.reduce(|b, i| {
                if better(maximize, points[i].median, points[b].median) {
                    i
                } else {
                    b
                }
            })
        };
        let best = pick(&mut (0..points.len()).filter(|&i| !shown[i]))
            .or_else(|| pick(&mut (0..points.len())));
        let (as_good, vs_best) = decide_set(session, &points, best, metric, maximize, rules);
        let command = template.clone();
        curves.push(Curve {
            command,
            points,
            best,
            as_good,
            vs_best,
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

/// A printed comparison shows the cell `name` significantly worse than
/// another value.
fn shown_worse(rules: &SetRules, name: &str, metric: Metric, maximize: bool) -> bool {
    let (worse, better) = if maximize {
        (Verdict::Faster, Verdict::Slower)
    } else {
        (Verdict::Slower, Verdict::Faster)
    };
    rules.comparisons.iter().any(|pc| {
        pc.metric == metric.name()
            && ((pc.candidate == name && pc.verdict == worse)
                || (pc.baseline == name && pc.verdict == better))
    })
}

/// The set of values not significantly worse than the best (see the
/// module comment), and each value's comparison with the best.
fn decide_set(
    session: &Session,
    points: &[Point],
    best: Option<usize>,
    metric: Metric,
    maximize: bool,
    rules: &SetRules,
) -> (Vec<usize>, Vec<Option<Comparison>>) {
    let Some(b) = best else {
        return (Vec::new(), vec![None; points.len()]);
    };
    let worse = if maximize {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    let settings = Settings::for_metric(
        metric,
        rules.alpha,
        points.len().saturating_sub(1).max(1),
        rules.precision,
        session.rss_floor,
    );
    let best_cell = &session.results[points[b].cell];
    let mut as_good = Vec::new();
    let mut vs_best = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if i == b {
            as_good.push(i);
            vs_best.push(None);
            continue;
        }
        let cell = &session.results[p.cell];
        let c = if session.order == crate::run::schedule::Order::Interleaved {
            let (x, y) = comparison::paired_values(best_cell, cell, metric);
            comparison::compare_values(&x, &y, Design::Paired, &settings)
        } else {
            comparison::compare_values(
                &crate::analysis::values(&best_cell.samples, metric),
                &crate::analysis::values(&cell.samples, metric),
                Design::Unpaired,
                &settings,
            )
        };
        if c.verdict != worse && !shown_worse(rules, &cell.cell.name, metric, maximize) {
            as_good.push(i);
        }
        vs_best.push(Some(c.named(
            metric.name(),
            &best_cell.cell.name,
            &cell.cell.name,
        )));
    }
    (as_good, vs_best)
}

/// Replaces the curve's best and set with the optimum search's, so the
/// table shows the search's one analysis. `best`, `as_good` and the keys
/// of `vs_best` are session cell indices.
pub fn apply_search(
    sweep: &mut Sweep,
    best: usize,
    as_good: &[usize],
    vs_best: &[(usize, Comparison)],
) {
    for curve in &mut sweep.curves {
        curve.best = curve.points.iter().position(|p| p.cell == best);
        curve.as_good = (0..curve.points.len())
            .filter(|&i| as_good.contains(&curve.points[i].cell))
            .collect();
        curve.vs_best = curve
            .points
            .iter()
            .map(|p| {
                vs_best
                    .iter()
                    .find(|(cell, _)| *cell == p.cell)
                    .map(|(_, c)| c.clone())
            })
            .collect();
    }
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
            "  {}  {:>11}  {:>27}  {:>11}  {:>5}  {:>8}",
            pad_left(&sweep.axis, width),
            "median",
            "95 % CI",
            "user+sys",
            "runs",
            "vs best"
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
            } else if curve.as_good.contains(&i) {
                paint.green(" ≈ as good")
            } else {
                String::new()
            };
            let vs = match curve.vs_best.get(i).and_then(Option::as_ref) {
                Some(c) => format!("{:.2}x {}", c.ratio, c.verdict.symbol()),
                None if curve.best == Some(i) => "1x".into(),
                // An optimum search dropped it against an earlier leader.
                None => "dropped".into(),
            };
            let _ = writeln!(
                out,
                "  {}  {:>11}  {:>27}  {:>11}  {:>5}  {:>8}{mark}",
                pad_left(&p.label, width),
                units::quantity(p.median, unit),
                ci,
                p.cpu.map(units::time).unwrap_or_default(),
                p.runs,
                vs
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
        let bar = if curve.as_good.contains(&i) {
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
        crate::report::svg::escape(&title)
    );
    // Axes and grid.
    for t in crate::report::svg::ticks(0.0, ymax, 5) {
        let y = py(t);
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            w - right,
            left - 6.0,
            y + 4.0,
            crate::report::svg::escape(&if t == 0.0 {
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
                crate::report::svg::escape(&p.label)
            );
        }
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (left + w - right) / 2.0,
        h - 15.0,
        crate::report::svg::escape(&sweep.axis)
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
            // Members of the set get a green ring.
            let ring = if curve.as_good.contains(&i) {
                r##" class="as-good" stroke="#2ca02c" stroke-width="3""##
            } else {
                ""
            };
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{}" fill="{colour}"{ring}><title>{} = {}: {}</title></circle>"#,
                xpos(i, p),
                py(p.median),
                if best { 6 } else { 3 },
                crate::report::svg::escape(&sweep.axis),
                crate::report::svg::escape(&p.label),
                crate::report::svg::escape(&units::quantity(p.median, unit))
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
                    crate::report::svg::escape(&p.label)
                );
            }
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" fill="{colour}">{}</text>"#,
            left + 10.0,
            top + 16.0 * (k as f64 + 1.0),
            crate::report::svg::escape(&curve.command)
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

    /// A session of three values of x: 1 and 2 equal but for the noise,
    /// 3 30 % slower; 8 interleaved runs each with ±4 % jitter.
    fn three_values() -> (Session, Vec<CellAnalysis>, Vec<Parameter>) {
        let mk = |x: &str, base: f64| {
            // A different jitter pattern per value, so pairs differ by noise.
            let k: usize = x.parse().unwrap();
            let walls: Vec<f64> = (0..8)
                .map(|i| base * (1.0 + 0.02 * (((i * (2 * k + 1) + k) % 5) as f64 - 2.0)))
                .collect();
            let mut r = crate::run::session::CellResult::from_wall_times(&format!("x{x}"), &walls);
            r.cell.parameters = vec![("x".into(), x.into())];
            r
        };
        let mut session = Session::empty();
        session.results = vec![mk("1", 0.0100), mk("2", 0.0100), mk("3", 0.013)];
        let analyses = crate::analysis::analyse(&session);
        let params = vec![Parameter {
            name: "x".into(),
            values: vec!["1".into(), "2".into(), "3".into()],
            numeric: Some(vec![1.0, 2.0, 3.0]),
            geometric: false,
        }];
        (session, analyses, params)
    }

    #[test]
    fn the_set_is_decided_by_the_engine_and_agrees_with_the_summary() {
        let (session, analyses, params) = three_values();
        let build = |comparisons: &[Comparison]| {
            let rules = SetRules {
                comparisons,
                alpha: 0.05,
                precision: 0.01,
            };
            let t = ["cmd {x}".to_string()];
            build(
                &session,
                &analyses,
                &params,
                Metric::WallTime,
                false,
                &t,
                &rules,
            )
            .unwrap()
        };
        let sweep = build(&[]);
        let curve = &sweep.curves[0];
        assert_eq!(curve.best, Some(0));
        // 2 is not significantly worse than 1; 3 is, by the paired test.
        assert_eq!(curve.as_good, vec![0, 1]);
        let c3 = curve.vs_best[2].as_ref().unwrap();
        assert_eq!(c3.verdict, Verdict::Slower);
        assert!(c3.paired);
        // A printed comparison calling x2 slower than x1 keeps x2 out of
        // the set, whatever the sweep's own test says.
        let mut printed = c3.clone();
        printed.baseline = "x1".into();
        printed.candidate = "x2".into();
        let sweep = build(&[printed.clone()]);
        assert_eq!(sweep.curves[0].best, Some(0));
        assert_eq!(sweep.curves[0].as_good, vec![0]);
        // The same for a reference shown slower than a candidate.
        printed.baseline = "x2".into();
        printed.candidate = "x1".into();
        printed.verdict = Verdict::Faster;
        let sweep = build(&[printed]);
        assert_eq!(sweep.curves[0].best, Some(0));
        assert_eq!(sweep.curves[0].as_good, vec![0]);
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
