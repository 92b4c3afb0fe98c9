//! CSV export: one row per command, hyperfine's columns first.

use crate::analysis::CellAnalysis;
use crate::error::{Error, Result};
use crate::metrics::Metric;
use crate::run::session::Session;

pub fn render(session: &Session, analyses: &[CellAnalysis]) -> Result<String> {
    let mut params: Vec<String> = Vec::new();
    for r in &session.results {
        for (k, _) in &r.cell.parameters {
            if !params.contains(k) {
                params.push(k.clone());
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "command",
        "mean",
        "stddev",
        "median",
        "user",
        "system",
        "min",
        "max",
        "median_ci_low",
        "median_ci_high",
        "runs",
        "memory_peak_resident_median",
        "io_read_bytes_median",
        "io_write_bytes_median",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(params.iter().map(|p| format!("parameter_{p}")));
    let csv_err = |e: csv::Error| Error::Failed(format!("CSV export: {e}"));
    w.write_record(&header).map_err(csv_err)?;
    for (r, a) in session.results.iter().zip(analyses) {
        let get = |m: Metric, f: fn(&crate::stats::Summary) -> f64| {
            a.get(m)
                .map(|s| f(&s.summary).to_string())
                .unwrap_or_default()
        };
        let (lo, hi) = match a.get(Metric::WallTime).map(|m| &m.median_ci) {
            Some(Ok(e)) => (e.low.to_string(), e.high.to_string()),
            _ => (String::new(), String::new()),
        };
        let mut row = vec![
            super::json::hyperfine_command(&r.cell).to_string(),
            get(Metric::WallTime, |s| s.mean),
            get(Metric::WallTime, |s| s.stddev),
            get(Metric::WallTime, |s| s.median),
            get(Metric::UserTime, |s| s.mean),
            get(Metric::SystemTime, |s| s.mean),
            get(Metric::WallTime, |s| s.min),
            get(Metric::WallTime, |s| s.max),
            lo,
            hi,
            a.runs.to_string(),
            get(Metric::PeakRss, |s| s.median),
            get(Metric::IoReadBytes, |s| s.median),
            get(Metric::IoWriteBytes, |s| s.median),
        ];
        for p in &params {
            row.push(
                r.cell
                    .parameters
                    .iter()
                    .find(|(k, _)| k == p)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
            );
        }
        w.write_record(&row).map_err(csv_err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Failed(format!("CSV export: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
