//! Box plots: one box per command, with the values beyond its whiskers.

use std::fmt::Write as _;

use super::{
    colour, escape, frame, label, min_max, open, y_axis, Format, Scale, BOTTOM, H, LEFT, RIGHT,
    TOP, W,
};

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
