//! The session's comparisons, as the comparison engine decided them.

use std::fmt::Write as _;

use super::data::ReportData;
use crate::report::svg::{escape, Format, IntervalChart, IntervalRow};

pub(super) fn comparisons(out: &mut String, d: &ReportData) {
    use crate::units::{format_confidence, format_p};
    let Some(first) = d.comparisons.first() else {
        return;
    };
    let reference = &first.baseline;
    let confidence = format_confidence(first.confidence);
    let _ = writeln!(out, "<h2>Comparisons with {}</h2>", escape(reference));
    out.push_str(
        &IntervalChart {
            title: format!("Wall time ratio to '{reference}' with {confidence} (below 1: faster)"),
            x_label: "ratio".into(),
            x_format: Format::Ratio,
            log_x: false,
            reference: Some(1.0),
            rows: d
                .comparisons
                .iter()
                .filter(|c| c.ratio.is_finite() && c.ratio_ci.iter().all(|x| x.is_finite()))
                .map(|c| IntervalRow {
                    label: c.candidate.clone(),
                    value: c.ratio,
                    lo: c.ratio_ci[0],
                    hi: c.ratio_ci[1],
                    highlight: c.significant,
                })
                .collect(),
        }
        .render(),
    );
    let _ = write!(
        out,
        "<table class=\"comparisons\"><tr><th>Benchmark</th><th>Verdict</th><th>Ratio [{}]</th><th>p</th><th>Test</th></tr>",
        escape(&confidence)
    );
    for c in &d.comparisons {
        let ratio = if c.ratio.is_finite() {
            format!(
                "{:.3} [{:.3} … {:.3}]",
                c.ratio, c.ratio_ci[0], c.ratio_ci[1]
            )
        } else {
            "–".into()
        };
        let verdict = match &c.note {
            Some(note) => format!("{}: {}", c.verdict.words(), crate::report::Words(note)),
            None => c.verdict.words().to_string(),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&c.candidate),
            escape(&verdict),
            escape(&ratio),
            escape(&format_p(c.p_value)),
            escape(c.test.name())
        );
    }
    out.push_str("</table>\n");
}
