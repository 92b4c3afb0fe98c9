//! Line charts: lines with markers, interval bands, shaded ranges and
//! labelled marks, on a linear, log or time x axis.

use std::fmt::Write as _;

use super::{
    colour, escape, frame, label, legend, min_max, open, x_axis, y_axis, Format, Scale, BOTTOM, H,
    LEFT, RIGHT, TOP, W,
};

/// One point of a line: value `y` at `x`, with an optional interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// Lines with markers and, where points carry intervals, a shaded band.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub x_format: Format,
    pub y_format: Format,
    pub series: Vec<Series>,
    /// An x value to mark with a vertical line (an optimum, a change).
    pub highlight: Option<f64>,
    /// Ranges of x to shade (values as good as the best), each from its
    /// first to its last value.
    pub shade: Vec<(f64, f64)>,
}

/// A labelled vertical line on a line chart (a change point and its commit).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub label: String,
}

/// A labelled stretch of x shaded on a line chart (a drift's slide, an
/// episode), or a vertical line of another colour (a machine-wide shift),
/// each with its class, colour and a title saying what it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    pub from: f64,
    pub to: f64,
    /// The CSS class of the shape (`drift`, `episode`, `shift`).
    pub class: &'static str,
    pub colour: &'static str,
    /// Drawn at the foot of the chart (cut to 40 characters).
    pub label: String,
    /// The full description, as the shape's title.
    pub title: String,
    /// What the edges are (the first and last point in it), drawn at each
    /// edge above the label (cut to 24 characters); empty: none.
    pub edges: [String; 2],
    /// A level that slides across the span: the band (low, high) at
    /// `from` and at `to`, drawn as a sloped band over the shading.
    pub slide: Option<[(f64, f64); 2]>,
}

impl LineChart {
    pub fn render(&self) -> String {
        self.render_marked(&[])
    }

    /// The chart with `marks` drawn as labelled vertical lines.
    pub fn render_marked(&self, marks: &[Mark]) -> String {
        self.render_labelled(marks, &[])
    }

    /// The chart with `marks`, and the x axis labelled with `x_labels`
    /// (value, text) instead of numbers where that list is not empty.
    pub fn render_labelled(&self, marks: &[Mark], x_labels: &[(f64, String)]) -> String {
        self.render_with(marks, &[], x_labels)
    }

    /// The chart with `marks` and `spans` (shaded stretches, or lines
    /// where a span is one x wide).
    pub fn render_spans(&self, marks: &[Mark], spans: &[Span]) -> String {
        self.render_with(marks, spans, &[])
    }

    fn render_with(&self, marks: &[Mark], spans: &[Span], x_labels: &[(f64, String)]) -> String {
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let finite = |v: &f64| v.is_finite() && (!self.log_x || *v > 0.0);
        let xs: Vec<f64> = pts.clone().map(|p| p.x).filter(finite).collect();
        let ys: Vec<f64> = pts
            .flat_map(|p| [Some(p.y), p.lo, p.hi])
            .flatten()
            .filter(|v| v.is_finite())
            .collect();
        let (xmin, xmax) = match (min_max(&xs), self.x_format) {
            // One moment in time (a single session): half an hour either
            // side, not the scale's 10 % of the Unix time (years).
            ((lo, hi), Format::Date | Format::TimeOfDay) if hi <= lo => (lo - 1800.0, hi + 1800.0),
            (range, _) => range,
        };
        let (ymin, ymax) = min_max(&ys);
        let y0 = H - BOTTOM;
        let x = Scale::new(xmin, xmax, LEFT + 10.0, W - RIGHT - 10.0, self.log_x);
        let ylo = if ymin >= 0.0 { 0.0 } else { ymin };
        let y = Scale::new(ylo, ymax * 1.05, y0, TOP, false);
        let mut out = String::new();
        open(&mut out, &self.title, H);
        y_axis(&mut out, &y, self.y_format, &self.y_label, LEFT, W - RIGHT);
        // Dates within a few hours: the time of day tells the points apart.
        let x_format = if self.x_format == Format::Date && xmax - xmin < 6.0 * 3600.0 {
            Format::TimeOfDay
        } else {
            self.x_format
        };
        x_axis(&mut out, &x, x_format, x_labels, &self.x_label, y0);
        frame(&mut out, y0);
        // Under the lines; widened by a marker's size so one value shows.
        let show = |v: f64| {
            x_labels
                .iter()
                .find(|(t, _)| *t == v)
                .map_or_else(|| self.x_format.show(v), |(_, l)| l.clone())
        };
        for &(a, b) in self.shade.iter().filter(|(a, b)| finite(a) && finite(b)) {
            let (l, r) = (x.px(a).min(x.px(b)) - 6.0, x.px(a).max(x.px(b)) + 6.0);
            let range = if a == b {
                show(a)
            } else {
                format!("{} – {}", show(a), show(b))
            };
            let _ = write!(
                out,
                r##"<rect class="as-good" x="{l:.1}" y="{TOP}" width="{w:.1}" height="{h:.1}" fill="#009e73" fill-opacity="0.15"><title>as good as the best: {}</title></rect>"##,
                escape(&range),
                w = r - l,
                h = y0 - TOP
            );
        }
        for (i, s) in self.series.iter().enumerate() {
            let c = colour(i);
            let pts: Vec<&Point> = s
                .points
                .iter()
                .filter(|p| finite(&p.x) && p.y.is_finite())
                .collect();
            let band: Vec<(f64, f64, f64)> = pts
                .iter()
                .filter_map(|p| Some((p.x, p.lo?, p.hi?)))
                .collect();
            if band.len() >= 2 {
                let mut d = String::new();
                for (j, (px, _, hi)) in band.iter().enumerate() {
                    let _ = write!(
                        d,
                        "{}{:.1},{:.1} ",
                        if j == 0 { 'M' } else { 'L' },
                        x.px(*px),
                        y.px(*hi)
                    );
                }
                for (px, lo, _) in band.iter().rev() {
                    let _ = write!(d, "L{:.1},{:.1} ", x.px(*px), y.px(*lo));
                }
                let _ = write!(
                    out,
                    r#"<path class="band" d="{d}Z" fill="{c}" fill-opacity="0.18" stroke="none"/>"#
                );
            } else {
                for (px, lo, hi) in &band {
                    let _ = write!(
                        out,
                        r#"<line x1="{cx:.1}" x2="{cx:.1}" y1="{a:.1}" y2="{b:.1}" stroke="{c}"/>"#,
                        cx = x.px(*px),
                        a = y.px(*lo),
                        b = y.px(*hi)
                    );
                }
            }
            if pts.len() >= 2 {
                let d: Vec<String> = pts
                    .iter()
                    .map(|p| format!("{:.1},{:.1}", x.px(p.x), y.px(p.y)))
                    .collect();
                let _ = write!(
                    out,
                    r#"<polyline class="line" points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
                    d.join(" ")
                );
            }
            for p in pts.iter().take(2000) {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: {} at {}</title></circle>"#,
                    x.px(p.x),
                    y.px(p.y),
                    label(&s.name, 80),
                    escape(&self.y_format.show(p.y)),
                    escape(&self.x_format.show(p.x))
                );
            }
        }
        for (i, sp) in spans
            .iter()
            .filter(|s| finite(&s.from) && finite(&s.to))
            .enumerate()
        {
            let (l, r) = (x.px(sp.from), x.px(sp.to));
            let ty = y0 + 0.0 - 4.0 - 12.0 * (i % 2) as f64;
            let shape = if r - l < 1.0 {
                format!(
                    r#"<line x1="{l:.1}" x2="{l:.1}" y1="{TOP}" y2="{y0}" stroke="{c}" stroke-width="2" stroke-dasharray="2 2"/>"#,
                    c = sp.colour
                )
            } else {
                format!(
                    r#"<rect x="{l:.1}" y="{TOP}" width="{w:.1}" height="{h:.1}" fill="{c}" fill-opacity="0.18" stroke="{c}" stroke-opacity="0.6"/>"#,
                    w = r - l,
                    h = y0 - TOP,
                    c = sp.colour
                )
            };
            // A slide: a band from the level before to the level after,
            // at least a few pixels thick so an exact level shows.
            let slide = sp
                .slide
                .filter(|b| b.iter().all(|(lo, hi)| lo.is_finite() && hi.is_finite()))
                .map(|[(l0, h0), (l1, h1)]| {
                    let thick = |lo: f64, hi: f64| {
                        let (a, b) = (y.px(hi), y.px(lo));
                        let mid = (a + b) / 2.0;
                        (a.min(mid - 3.0), b.max(mid + 3.0))
                    };
                    let ((t0, b0), (t1, b1)) = (thick(l0, h0), thick(l1, h1));
                    format!(
                        r#"<polygon class="slide" points="{l:.1},{t0:.1} {r:.1},{t1:.1} {r:.1},{b1:.1} {l:.1},{b0:.1}" fill="{c}" fill-opacity="0.55" stroke="{c}"/>"#,
                        c = sp.colour
                    )
                })
                .unwrap_or_default();
            let edges: String = [(l, &sp.edges[0], "start"), (r, &sp.edges[1], "end")]
                .iter()
                .filter(|(_, text, _)| !text.is_empty())
                .enumerate()
                .map(|(k, (px, text, anchor))| {
                    format!(
                        r#"<text class="edge" x="{px:.1}" y="{:.1}" font-size="10" fill="{}" text-anchor="{}">{}</text>"#,
                        // Above the label at the foot: a chart of times
                        // starts at 0, so its data rarely reach down there.
                        y0 - 30.0 - 11.0 * ((i + k) % 2) as f64,
                        sp.colour,
                        // A line's label reads to the right of it.
                        if r - l < 1.0 { "start" } else { anchor },
                        label(text, 24)
                    )
                })
                .collect();
            let _ = write!(
                out,
                r#"<g class="{}">{shape}{slide}{edges}<text x="{:.1}" y="{ty:.1}" font-size="11" fill="{}">{}</text><title>{}</title></g>"#,
                sp.class,
                l + 2.0,
                sp.colour,
                label(&sp.label, 40),
                escape(&sp.title)
            );
        }
        if let Some(h) = self.highlight.filter(finite) {
            let px = x.px(h);
            let _ = write!(
                out,
                r##"<line class="highlight" x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{y0}" stroke="#d55e00" stroke-dasharray="4 3"/>"##
            );
        }
        for (i, m) in marks.iter().filter(|m| finite(&m.x)).enumerate() {
            let px = x.px(m.x);
            // Labels alternate between two rows so that neighbours overlap less.
            let ty = TOP - 4.0 - 12.0 * (i % 2) as f64;
            let anchor = if px > W * 0.7 { "end" } else { "start" };
            let _ = write!(
                out,
                r##"<g class="mark"><line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{y0}" stroke="#d55e00" stroke-width="1.5" stroke-dasharray="5 3"/><text x="{px:.1}" y="{ty:.1}" font-size="11" fill="#d55e00" text-anchor="{anchor}">{}</text><title>{}</title></g>"##,
                label(&m.label, 40),
                escape(&m.label)
            );
        }
        if self.series.len() > 1 {
            legend(
                &mut out,
                &self
                    .series
                    .iter()
                    .map(|s| s.name.clone())
                    .collect::<Vec<_>>(),
            );
        }
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `class` element's numeric attribute `name`s, in order.
    fn attrs(svg: &str, class: &str, name: &str) -> Vec<Vec<f64>> {
        svg.split(&format!("class=\"{class}\""))
            .skip(1)
            .map(|el| {
                let el = &el[..el.find('>').unwrap()];
                name.split(',')
                    .map(|n| {
                        let v = &el[el.find(&format!(" {n}=\"")).unwrap() + n.len() + 3..];
                        v[..v.find('"').unwrap()].parse().unwrap()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn shaded_ranges_cover_their_points_and_no_others() {
        let chart = LineChart {
            series: vec![Series {
                name: "median".into(),
                points: (0..8)
                    .map(|i| Point {
                        x: 2f64.powi(i),
                        y: (i as f64 - 4.0).powi(2) + 1.0,
                        lo: None,
                        hi: None,
                    })
                    .collect(),
            }],
            log_x: true,
            shade: vec![(8.0, 32.0), (128.0, 128.0)],
            ..LineChart::default()
        };
        let svg = chart.render();
        let rects = attrs(&svg, "as-good", "x,width");
        assert_eq!(rects.len(), 2, "{svg}");
        let circles: Vec<f64> = svg
            .split("<circle cx=\"")
            .skip(1)
            .map(|c| c[..c.find('"').unwrap()].parse().unwrap())
            .collect();
        assert_eq!(circles.len(), 8);
        let inside = |cx: f64| rects.iter().any(|r| cx >= r[0] && cx <= r[0] + r[1]);
        let shaded: Vec<bool> = circles.iter().map(|&cx| inside(cx)).collect();
        // x = 1 2 4 8 16 32 64 128: 8–32 and 128 alone.
        assert_eq!(
            shaded,
            [false, false, false, true, true, true, false, true],
            "{svg}"
        );
        // Drawn under the lines.
        assert!(svg.find("as-good").unwrap() < svg.find("<circle").unwrap());
        assert!(!LineChart::default().render().contains("as-good"));
    }
}
