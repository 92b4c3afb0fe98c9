//! Small hand-written SVG charts: line (optionally log x, with an interval
//! band, shaded ranges, labelled marks and named x values), bars, box plots
//! and intervals. Self-contained text, no scripts, no fonts or styles
//! fetched from anywhere; every piece of text passes through [`escape`], so
//! a label such as `<script>` renders as text.
//!
//! Written by hand rather than with a plotting crate because what is needed
//! is a few hundred lines of plain SVG whose escaping we control, and the
//! output must embed in one HTML file that opens without network access.
//!
//! This file holds what every chart shares (escaping, colours, number
//! formats, ticks, scales, axes, legend); each chart is a file of its own.

mod bar;
mod box_plot;
mod interval;
mod line;

use std::fmt::Write as _;

pub use bar::{Bar, BarChart};
pub use box_plot::{BoxPlot, BoxStats};
pub use interval::{IntervalChart, IntervalRow};
pub use line::{LineChart, Mark, Point, Series, Span};

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

fn min_max(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
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
