//! Markdown export: a table people paste into pull requests.

use crate::analysis::CellAnalysis;
use crate::metrics::Metric;
use crate::runner::Session;
use crate::units;

/// Escapes text for a Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('\n', " ")
        .replace('`', "\\`")
}

pub fn render(session: &Session, analyses: &[CellAnalysis]) -> String {
    let mut out = String::from(
        "| Command | Median [95% CI] | Mean ± σ | Min … Max | User + Sys | Peak memory | Relative |\n\
         |:---|---:|---:|---:|---:|---:|---:|\n",
    );
    let fastest = analyses
        .iter()
        .filter_map(|a| a.get(Metric::WallTime).map(|m| m.summary.median))
        .filter(|m| *m > 0.0)
        .fold(f64::INFINITY, f64::min);
    for (r, a) in session.results.iter().zip(analyses) {
        let Some(w) = a.get(Metric::WallTime) else {
            out.push_str(&format!(
                "| `{}` | no runs | | | | | |\n",
                cell(&r.cell.name)
            ));
            continue;
        };
        let s = &w.summary;
        let ci = match &w.median_ci {
            Ok(e) => format!(" [{} … {}]", units::time(e.low), units::time(e.high)),
            Err(_) => String::new(),
        };
        let cpu = a
            .get(Metric::CpuTime)
            .map(|m| units::time(m.summary.median))
            .unwrap_or_default();
        let mem = a
            .get(Metric::PeakRss)
            .map(|m| units::bytes(m.summary.median))
            .unwrap_or_default();
        let rel = if fastest.is_finite() {
            format!("{:.2}", s.median / fastest)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "| `{}` | {}{} | {} ± {} | {} … {} | {} | {} | {} |\n",
            cell(&r.cell.name),
            units::time(s.median),
            ci,
            units::time(s.mean),
            units::time(s.stddev),
            units::time(s.min),
            units::time(s.max),
            cpu,
            mem,
            rel
        ));
    }
    out
}
