//! Bar charts: bars in a given order, coloured by group.

use std::fmt::Write as _;

use super::{
    colour, frame, label, legend, min_max, open, ticks, y_axis, Format, Scale, BOTTOM, H, LEFT,
    RIGHT, TOP, W,
};

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
