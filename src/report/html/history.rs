//! The history of each benchmark across stored sessions.

use super::data::ReportData;
use crate::analysis::HistoryData;
use crate::report::svg::{Format, LineChart, Point, Series};

pub(super) fn history(out: &mut String, d: &ReportData) {
    let shown: Vec<&HistoryData> = d.history.iter().filter(|h| !h.points.is_empty()).collect();
    if shown.is_empty() {
        return;
    }
    out.push_str("<h2>History on this machine</h2>\n");
    for h in shown {
        let points: Vec<Point> = h
            .points
            .iter()
            .map(|p| Point {
                x: p.started_unix,
                y: p.median,
                lo: p.ci.map(|c| c[0]),
                hi: p.ci.map(|c| c[1]),
            })
            .collect();
        out.push_str(
            &LineChart {
                title: format!("{} — median per session (dashed: this session)", h.identity),
                x_label: "session start (UTC)".into(),
                y_label: "wall time".into(),
                log_x: false,
                x_format: Format::Date,
                y_format: Format::Seconds,
                series: vec![Series {
                    name: h.identity.clone(),
                    points,
                }],
                highlight: Some(d.session.started_unix),
                shade: Vec::new(),
            }
            .render(),
        );
        out.push('\n');
    }
}
