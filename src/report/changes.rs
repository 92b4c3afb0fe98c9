//! The words and numbers of a change point, as `changes`, `check --against
//! history` and the static site print them. Formatting only: the changes
//! are found and confirmed in `analysis::changes`.

use crate::analysis::changes::{Change, Direction, Side};
use crate::analysis::comparison::format_confidence;
use crate::store::history::History;

/// A value of the history's metric with its unit.
pub fn value(h: &History, v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    match crate::metrics::Metric::from_name(&h.metric) {
        Some(m) if !h.is_time() => crate::units::quantity(v, m.unit()),
        _ => crate::units::time(v),
    }
}

pub fn direction(h: &History, c: &Change) -> &'static str {
    match (c.direction, h.is_time()) {
        (Direction::Slower, true) => "slower",
        (Direction::Faster, true) => "faster",
        (Direction::Slower, false) => "higher",
        (Direction::Faster, false) => "lower",
    }
}

/// `+25.1 % (99 % CI +23.0 % … +27.3 %)`
pub fn change_text(c: &Change) -> String {
    let pct = |r: f64| format!("{:+.1} %", (r - 1.0) * 100.0);
    let cmp = &c.comparison;
    format!(
        "{} ({} {} … {})",
        pct(cmp.ratio),
        format_confidence(cmp.confidence),
        pct(cmp.ratio_ci[0]),
        pct(cmp.ratio_ci[1])
    )
}

/// `102 ms (95 % CI 101 ms … 103 ms)`
pub fn median_text(h: &History, s: &Side) -> String {
    match s.ci {
        Some([lo, hi]) => format!(
            "{} (95 % CI {} … {})",
            value(h, s.median),
            value(h, lo),
            value(h, hi)
        ),
        None => value(h, s.median),
    }
}
