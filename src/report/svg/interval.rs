//! Interval charts (forest plots): estimates with their intervals against
//! a reference line.

use std::fmt::Write as _;

use super::{escape, label, min_max, open, ticks, Format, Scale, BOTTOM, RIGHT, TOP, W};

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
