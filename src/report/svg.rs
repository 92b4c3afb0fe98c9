//! Small hand-written SVG charts: line (optionally log x, with an interval
//! band, shaded ranges, labelled marks and named x values), bars, box plots
//! and intervals. Self-contained text, no scripts, no fonts or styles
//! fetched from anywhere; every piece of text passes through [`escape`], so
//! a label such as `<script>` renders as text.
//!
//! Written by hand rather than with a plotting crate because what is needed
//! is a few hundred lines of plain SVG whose escaping we control, and the
//! output must embed in one HTML file that opens without network access.

use std::fmt::Write as _;

/// Escapes text for XML/HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            // Shown, not obeyed: an override would reorder what is displayed.
            c if crate::output::is_bidi_control(c) => {
                let _ = write!(out, "[U+{:04X}]", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Shortens text to `max` characters (with an ellipsis), then escapes it.
fn label(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        escape(text)
    } else {
        let short: String = text.chars().take(max.saturating_sub(1)).collect();
        escape(&format!("{short}…"))
    }
}

/// Colours of series, in order (colour-blind safe palette).
pub const PALETTE: &[&str] = &[
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000",
];

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How axis values are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Number,
    Seconds,
    Bytes,
    /// Unix seconds, shown as a UTC date and time (to the minute).
    Date,
    /// Unix seconds, shown as a UTC time of day (to the second).
    TimeOfDay,
    /// A ratio, shown as `1.05×`.
    Ratio,
}

impl Format {
    pub fn show(self, v: f64) -> String {
        match self {
            Format::Number => crate::units::count(v),
            Format::Seconds => crate::units::time(v),
            Format::Bytes => crate::units::bytes(v),
            Format::Ratio => format!("{v:.3}×"),
            Format::Date | Format::TimeOfDay => {
                let secs = if v.is_finite() && v > 0.0 {
                    v as u64
                } else {
                    0
                };
                let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
                let s = humantime::format_rfc3339_seconds(t).to_string();
                if self == Format::Date {
                    s.get(..16).unwrap_or(&s).replace('T', " ")
                } else {
                    s.get(11..19).unwrap_or(&s).to_string()
                }
            }
        }
    }
}

const W: f64 = 820.0;
const H: f64 = 330.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 46.0;
const BOTTOM: f64 = 56.0;

/// "Nice" tick values covering [lo, hi].
pub fn ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    if hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / count.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    let mut out = Vec::new();
    let mut v = first;
    while v <= hi + step * 1e-9 && out.len() < 50 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// Ticks of a time axis (Unix seconds) on round clock values: every 1, 5,
/// 15 or 30 seconds or minutes, 1, 3, 6 or 12 hours, or whole days (UTC),
/// so labels read 18:15:00, not the decimal steps of [`ticks`] (18:53:20).
pub fn time_ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    const STEPS: [f64; 18] = [
        1.0,
        5.0,
        15.0,
        30.0,
        60.0,
        300.0,
        900.0,
        1800.0,
        3600.0,
        10800.0,
        21600.0,
        43200.0,
        86400.0,
        172_800.0,
        604_800.0,
        1_209_600.0,
        2_592_000.0,
        31_536_000.0,
    ];
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return ticks(lo, hi, count);
    }
    let raw = (hi - lo) / count.max(1) as f64;
    let Some(&step) = STEPS.iter().find(|s| **s >= raw) else {
        return ticks(lo, hi, count);
    };
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi && out.len() < 50 {
        out.push(v);
        v += step;
    }
    out
}

/// Ticks of a log axis: powers of 10, or of 2 over a small range.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > 0.0) {
        return Vec::new();
    }
    let base: f64 = if hi / lo > 1e4 { 10.0 } else { 2.0 };
    let mut step = 1.0;
    // Thin powers of two out to at most ~12 ticks.
    let n = (hi / lo).log(base).ceil().max(1.0);
    if n > 12.0 {
        step = (n / 12.0).ceil();
    }
    let start = lo.log(base).floor() as i32;
    let end = hi.log(base).ceil() as i32;
    (start..=end)
        .filter(|e| (e - start) % (step as i32) == 0)
        .map(|e| base.powi(e))
        .filter(|v| *v >= lo * 0.999 && *v <= hi * 1.001)
        .collect()
}

/// Maps data to pixels on one axis.
#[derive(Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    fn new(lo: f64, hi: f64, from: f64, to: f64, log: bool) -> Scale {
        let (mut lo, mut hi) = (lo, hi);
        if log {
            lo = lo.max(f64::MIN_POSITIVE);
            hi = hi.max(lo);
        }
        if !(lo.is_finite() && hi.is_finite()) {
            lo = 0.0;
            hi = 1.0;
        }
        if hi <= lo {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            if log {
                lo /= 2.0;
                hi *= 2.0;
            } else {
                lo -= pad;
                hi += pad;
            }
        }
        Scale {
            lo,
            hi,
            from,
            to,
            log,
        }
    }
    fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + t.clamp(-0.05, 1.05) * (self.to - self.from)
    }
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            ticks(self.lo, self.hi, 5)
        }
    }
}

fn open(out: &mut String, title: &str, height: f64) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img" font-family="sans-serif" font-size="12"><title>{t}</title><rect x="0" y="0" width="{W}" height="{height}" fill="#ffffff"/><text x="{LEFT}" y="20" font-size="14" font-weight="bold">{t}</text>"##,
        t = label(title, 110)
    );
}

fn y_axis(out: &mut String, y: &Scale, fmt: Format, name: &str, x0: f64, x1: f64) {
    for t in y.ticks() {
        let py = y.px(t);
        let _ = write!(
            out,
            r##"<line x1="{x0}" x2="{x1}" y1="{py:.1}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" fill="#333">{l}</text>"##,
            tx = x0 - 6.0,
            ty = py + 4.0,
            l = escape(&fmt.show(t))
        );
    }
    let _ = write!(
        out,
        r##"<text transform="translate(16 {cy}) rotate(-90)" text-anchor="middle" fill="#333">{n}</text>"##,
        cy = (TOP + (H - BOTTOM)) / 2.0,
        n = label(name, 50)
    );
}

/// The x axis; `labels` (value, text), when given, replace the scale's
/// ticks (a sweep names its values, which need not be numbers).
fn x_axis(out: &mut String, x: &Scale, fmt: Format, labels: &[(f64, String)], name: &str, y0: f64) {
    let mut last_end = f64::NEG_INFINITY;
    let ticks: Vec<(f64, String)> = if labels.is_empty() {
        let at = match fmt {
            Format::Date | Format::TimeOfDay => time_ticks(x.lo, x.hi, 5),
            _ => x.ticks(),
        };
        at.into_iter().map(|t| (t, fmt.show(t))).collect()
    } else {
        labels.to_vec()
    };
    for (t, text) in ticks {
        let px = x.px(t);
        // Skip labels that would overlap the previous one.
        let half = text.chars().count() as f64 * 3.4;
        if px - half < last_end {
            continue;
        }
        last_end = px + half;
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{y0}" y2="{y1}" stroke="#999"/><text x="{px:.1}" y="{ty}" text-anchor="middle" fill="#333">{l}</text>"##,
            y1 = y0 + 5.0,
            ty = y0 + 18.0,
            l = escape(&text)
        );
    }
    let _ = write!(
        out,
        r##"<text x="{cx}" y="{ty}" text-anchor="middle" fill="#333">{n}</text>"##,
        cx = (LEFT + W - RIGHT) / 2.0,
        ty = y0 + 40.0,
        n = label(name, 90)
    );
}

fn frame(out: &mut String, y0: f64) {
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" x2="{x1}" y1="{y0}" y2="{y0}" stroke="#333"/><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{y0}" stroke="#333"/>"##,
        x1 = W - RIGHT
    );
}

fn legend(out: &mut String, names: &[String]) {
    let mut x = LEFT;
    for (i, n) in names.iter().enumerate().take(8) {
        let text = label(n, 28);
        let _ = write!(
            out,
            r##"<rect x="{x}" y="27" width="10" height="10" fill="{c}"/><text x="{tx}" y="36" fill="#333">{text}</text>"##,
            c = colour(i),
            tx = x + 14.0
        );
        x += 24.0 + n.chars().count().min(28) as f64 * 6.5;
        if x > W - 60.0 {
            break;
        }
    }
}

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
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub from: f64,
    pub to: f64,
    /// The CSS class of the shape (`drift`, `episode`, `shift`).
    pub class: &'static str,
    pub colour: &'static str,
    /// Drawn above the chart (cut to 40 characters).
    pub label: String,
    /// The full description, as the shape's title.
    pub title: String,
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
            let _ = write!(
                out,
                r#"<g class="{}">{shape}<text x="{:.1}" y="{ty:.1}" font-size="11" fill="{}">{}</text><title>{}</title></g>"#,
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

fn min_max(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

/// One bar; `group` picks its colour and legend entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    pub value: f64,
    pub group: usize,
}

/// Bars in the given order (e.g. every run in run order, coloured by command).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub y_format: Format,
    pub groups: Vec<String>,
    pub bars: Vec<Bar>,
}

impl BarChart {
    pub fn render(&self) -> String {
        let values: Vec<f64> = self
            .bars
            .iter()
            .map(|b| b.value)
            .filter(|v| v.is_finite())
            .collect();
        let (_, ymax) = min_max(&values);
        let y0 = H - BOTTOM;
        let y = Scale::new(0.0, ymax.max(0.0) * 1.05, y0, TOP, false);
        let n = self.bars.len().max(1) as f64;
        let x = Scale::new(0.0, n, LEFT + 2.0, W - RIGHT - 2.0, false);
        let mut out = String::new();
        open(&mut out, &self.title, H);
        y_axis(&mut out, &y, self.y_format, &self.y_label, LEFT, W - RIGHT);
        let step = (W - RIGHT - LEFT - 4.0) / n;
        let width = (step * 0.85).max(0.5);
        for (i, b) in self.bars.iter().enumerate() {
            if !b.value.is_finite() {
                continue;
            }
            let top = y.px(b.value);
            let _ = write!(
                out,
                r#"<rect class="bar" x="{:.2}" y="{top:.1}" width="{width:.2}" height="{:.1}" fill="{}"/>"#,
                x.px(i as f64),
                (y0 - top).max(0.0),
                colour(b.group)
            );
        }
        // Run numbers on the x axis.
        for t in ticks(0.0, n, 8) {
            if t >= n {
                continue;
            }
            let px = x.px(t) + width / 2.0;
            let _ = write!(
                out,
                r##"<text x="{px:.1}" y="{ty}" text-anchor="middle" fill="#333">{}</text>"##,
                t as u64 + 1,
                ty = y0 + 18.0
            );
        }
        let _ = write!(
            out,
            r##"<text x="{cx}" y="{ty}" text-anchor="middle" fill="#333">{n}</text>"##,
            cx = (LEFT + W - RIGHT) / 2.0,
            ty = y0 + 40.0,
            n = label(&self.x_label, 90)
        );
        frame(&mut out, y0);
        legend(&mut out, &self.groups);
        out.push_str("</svg>");
        out
    }
}

/// The five numbers of a box plot (whiskers at the most extreme values
/// within 1.5 IQR of the box), plus the values beyond them.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxStats {
    pub label: String,
    pub low: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub high: f64,
    pub outliers: Vec<f64>,
}

impl BoxStats {
    /// None without finite values.
    pub fn from_values(label: &str, values: &[f64]) -> Option<BoxStats> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| crate::stats::quantile_sorted(&v, p);
        let (q1, median, q3) = (q(0.25), q(0.5), q(0.75));
        let fence = 1.5 * (q3 - q1);
        let inside: Vec<f64> = v
            .iter()
            .copied()
            .filter(|x| *x >= q1 - fence && *x <= q3 + fence)
            .collect();
        let low = inside.first().copied().unwrap_or(q1);
        let high = inside.last().copied().unwrap_or(q3);
        let outliers = v
            .iter()
            .copied()
            .filter(|x| *x < low || *x > high)
            .collect();
        Some(BoxStats {
            label: label.to_string(),
            low,
            q1,
            median,
            q3,
            high,
            outliers,
        })
    }
}

/// One box per command, side by side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoxPlot {
    pub title: String,
    pub y_label: String,
    pub y_format: Format,
    pub boxes: Vec<BoxStats>,
}

impl BoxPlot {
    pub fn render(&self) -> String {
        let all: Vec<f64> = self
            .boxes
            .iter()
            .flat_map(|b| {
                [b.low, b.high]
                    .into_iter()
                    .chain(b.outliers.iter().copied())
            })
            .collect();
        let (lo, hi) = min_max(&all);
        let y0 = H - BOTTOM;
        let pad = (hi - lo) * 0.05;
        let y = Scale::new(
            (lo - pad).max(if lo >= 0.0 { 0.0 } else { f64::MIN }),
            hi + pad,
            y0,
            TOP,
            false,
        );
        let mut out = String::new();
        open(&mut out, &self.title, H);
        y_axis(&mut out, &y, self.y_format, &self.y_label, LEFT, W - RIGHT);
        frame(&mut out, y0);
        let n = self.boxes.len().max(1) as f64;
        let slot = (W - RIGHT - LEFT) / n;
        let bw = (slot * 0.5).min(90.0);
        for (i, b) in self.boxes.iter().enumerate() {
            let cx = LEFT + slot * (i as f64 + 0.5);
            let c = colour(i);
            let (ylow, yq1, ymed, yq3, yhigh) = (
                y.px(b.low),
                y.px(b.q1),
                y.px(b.median),
                y.px(b.q3),
                y.px(b.high),
            );
            let _ = write!(
                out,
                r##"<g class="box"><line x1="{cx:.1}" x2="{cx:.1}" y1="{ylow:.1}" y2="{yq1:.1}" stroke="#333"/><line x1="{cx:.1}" x2="{cx:.1}" y1="{yq3:.1}" y2="{yhigh:.1}" stroke="#333"/><line x1="{a:.1}" x2="{b2:.1}" y1="{ylow:.1}" y2="{ylow:.1}" stroke="#333"/><line x1="{a:.1}" x2="{b2:.1}" y1="{yhigh:.1}" y2="{yhigh:.1}" stroke="#333"/><rect x="{bx:.1}" y="{yq3:.1}" width="{bw:.1}" height="{h:.1}" fill="{c}" fill-opacity="0.35" stroke="{c}"/><line x1="{bx:.1}" x2="{bx2:.1}" y1="{ymed:.1}" y2="{ymed:.1}" stroke="{c}" stroke-width="3"/><title>{t}: median {m}</title></g>"##,
                a = cx - bw / 4.0,
                b2 = cx + bw / 4.0,
                bx = cx - bw / 2.0,
                bx2 = cx + bw / 2.0,
                h = (yq1 - yq3).max(1.0),
                t = label(&b.label, 200),
                m = escape(&self.y_format.show(b.median))
            );
            for o in b.outliers.iter().take(300) {
                let _ = write!(
                    out,
                    r#"<circle cx="{cx:.1}" cy="{:.1}" r="2.5" fill="none" stroke="{c}"/>"#,
                    y.px(*o)
                );
            }
            let _ = write!(
                out,
                r##"<text x="{cx:.1}" y="{ty}" text-anchor="middle" fill="#333">{}</text>"##,
                label(&b.label, (slot / 7.0).max(4.0) as usize),
                ty = y0 + 18.0
            );
        }
        out.push_str("</svg>");
        out
    }
}

/// One estimate with its interval.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRow {
    pub label: String,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// Drawn in the accent colour (e.g. significant).
    pub highlight: bool,
}

/// Estimates with intervals, one row each (a forest plot), against a
/// reference line (1 for ratios).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalChart {
    pub title: String,
    pub x_label: String,
    pub x_format: Format,
    pub log_x: bool,
    pub reference: Option<f64>,
    pub rows: Vec<IntervalRow>,
}

impl IntervalChart {
    pub fn render(&self) -> String {
        let row_h = 26.0;
        let left = 260.0;
        let height = TOP + 20.0 + row_h * self.rows.len().max(1) as f64 + BOTTOM;
        let vals: Vec<f64> = self
            .rows
            .iter()
            .flat_map(|r| [r.value, r.lo, r.hi])
            .chain(self.reference)
            .filter(|v| v.is_finite() && (!self.log_x || *v > 0.0))
            .collect();
        let (lo, hi) = min_max(&vals);
        let pad = if self.log_x { 1.0 } else { (hi - lo) * 0.08 };
        let (slo, shi) = if self.log_x {
            (lo / 1.05, hi * 1.05)
        } else {
            (lo - pad, hi + pad)
        };
        let x = Scale::new(slo, shi, left, W - RIGHT - 10.0, self.log_x);
        let y0 = height - BOTTOM;
        let mut out = String::new();
        open(&mut out, &self.title, height);
        for t in ticks(x.lo, x.hi, 6) {
            let px = x.px(t);
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{y0}" stroke="#e4e4e4"/><text x="{px:.1}" y="{ty}" text-anchor="middle" fill="#333">{l}</text>"##,
                ty = y0 + 18.0,
                l = escape(&self.x_format.show(t))
            );
        }
        if let Some(r) = self.reference {
            let px = x.px(r);
            let _ = write!(
                out,
                r##"<line class="reference" x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{y0}" stroke="#333" stroke-dasharray="4 3"/>"##
            );
        }
        for (i, r) in self.rows.iter().enumerate() {
            let cy = TOP + 20.0 + row_h * (i as f64 + 0.5);
            let c = if r.highlight { "#d55e00" } else { "#0072b2" };
            let _ = write!(
                out,
                r##"<text x="{tx}" y="{ty:.1}" text-anchor="end" fill="#333">{l}</text>"##,
                tx = left - 10.0,
                ty = cy + 4.0,
                l = label(&r.label, 38)
            );
            if r.lo.is_finite() && r.hi.is_finite() {
                let _ = write!(
                    out,
                    r#"<line class="interval" x1="{:.1}" x2="{:.1}" y1="{cy:.1}" y2="{cy:.1}" stroke="{c}" stroke-width="2"/>"#,
                    x.px(r.lo),
                    x.px(r.hi)
                );
            }
            if r.value.is_finite() {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{cy:.1}" r="5" fill="{c}"><title>{}: {} [{} … {}]</title></circle>"#,
                    x.px(r.value),
                    label(&r.label, 200),
                    escape(&self.x_format.show(r.value)),
                    escape(&self.x_format.show(r.lo)),
                    escape(&self.x_format.show(r.hi))
                );
            }
        }
        let _ = write!(
            out,
            r##"<line x1="{left}" x2="{x1}" y1="{y0}" y2="{y0}" stroke="#333"/><text x="{cx}" y="{ty}" text-anchor="middle" fill="#333">{n}</text>"##,
            x1 = W - RIGHT,
            cx = (left + W - RIGHT) / 2.0,
            ty = y0 + 40.0,
            n = label(&self.x_label, 90)
        );
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVIL: &str = "<script>alert(1)</script>";

    fn no_raw_markup(svg: &str) {
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "escaped text present");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

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

    #[test]
    fn time_axes_tick_on_round_clock_values() {
        // 18:00:00 to 19:00:00 UTC on 2026-11-22: every 15 minutes.
        let t0 = 1_795_370_400.0;
        let at = time_ticks(t0, t0 + 3600.0, 5);
        assert_eq!(at, [0.0, 900.0, 1800.0, 2700.0, 3600.0].map(|d| t0 + d));
        assert_eq!(Format::TimeOfDay.show(at[1]), "18:15:00");
        // A week: whole days at midnight UTC.
        let days = time_ticks(t0, t0 + 7.0 * 86400.0, 5);
        assert!(days.iter().all(|t| t % 86400.0 == 0.0), "{days:?}");
        // One session: its chart spans an hour around it, labelled by the clock.
        let one = LineChart {
            x_format: Format::Date,
            series: vec![Series {
                name: "a".into(),
                points: vec![Point {
                    x: t0 + 1234.0,
                    y: 0.02,
                    lo: None,
                    hi: None,
                }],
            }],
            ..LineChart::default()
        }
        .render();
        for label in ["18:00:00", "18:15:00", "18:30:00", "18:45:00"] {
            assert!(one.contains(&format!(">{label}</text>")), "{label}: {one}");
        }
        assert!(!one.contains("08:00:00"), "{one}");
    }

    #[test]
    fn escapes_everything() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        let line = LineChart {
            title: EVIL.into(),
            x_label: EVIL.into(),
            y_label: EVIL.into(),
            log_x: true,
            series: vec![
                Series {
                    name: EVIL.into(),
                    points: (0..8)
                        .map(|i| Point {
                            x: 2f64.powi(i),
                            y: 1.0 + i as f64,
                            lo: Some(0.5 + i as f64),
                            hi: Some(1.5 + i as f64),
                        })
                        .collect(),
                },
                Series {
                    name: "b".into(),
                    points: vec![],
                },
            ],
            highlight: Some(4.0),
            ..LineChart::default()
        }
        .render();
        no_raw_markup(&line);
        assert!(line.contains("class=\"band\"") && line.contains("class=\"highlight\""));
        let bars = BarChart {
            title: EVIL.into(),
            groups: vec![EVIL.into()],
            bars: (0..100)
                .map(|i| Bar {
                    value: i as f64,
                    group: i % 2,
                })
                .collect(),
            ..BarChart::default()
        }
        .render();
        no_raw_markup(&bars);
        assert_eq!(bars.matches("class=\"bar\"").count(), 100);
        let boxes = BoxPlot {
            title: "t".into(),
            boxes: vec![BoxStats::from_values(EVIL, &[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap()],
            ..BoxPlot::default()
        }
        .render();
        no_raw_markup(&boxes);
        let iv = IntervalChart {
            title: "t".into(),
            rows: vec![IntervalRow {
                label: EVIL.into(),
                value: 1.1,
                lo: 1.0,
                hi: 1.2,
                highlight: true,
            }],
            reference: Some(1.0),
            ..IntervalChart::default()
        }
        .render();
        no_raw_markup(&iv);
    }

    #[test]
    fn ticks_are_nice_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(log_ticks(1.0, 8192.0).len(), 7);
        assert_eq!(
            log_ticks(1.0, 1e6),
            vec![1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
        );
        // Degenerate inputs render without panicking.
        let empty = LineChart::default().render();
        assert!(empty.ends_with("</svg>"));
        let flat = BoxStats::from_values("x", &[2.0; 5]).unwrap();
        assert_eq!(flat.outliers.len(), 0);
        assert!(BoxStats::from_values("x", &[f64::NAN]).is_none());
    }
}
