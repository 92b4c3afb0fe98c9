//! The sections about the runs themselves: the summary table, `run
//! --monitor` counts, the run-order chart and the distributions.

use std::fmt::Write as _;

use super::data::{ReportData, MAX_BARS};
use crate::metrics::Metric;
use crate::report::svg::{escape, Bar, BarChart, BoxPlot, BoxStats, Format};

pub(super) fn summary_table(out: &mut String, d: &ReportData) {
    out.push_str(
        "<h2>Benchmarks</h2>\n<table class=\"summary\"><tr><th>Benchmark</th><th>Command</th>\
         <th>Runs</th><th>Median [95% CI]</th><th>Mean ± σ</th><th>Min … Max</th><th>Peak memory</th></tr>",
    );
    for c in &d.cells {
        let ci = c
            .figures
            .median_ci
            .map(|[low, high]| {
                format!(
                    " [{} … {}]",
                    crate::units::time(low),
                    crate::units::time(high)
                )
            })
            .unwrap_or_default();
        let mem = c
            .figures
            .peak_memory
            .map(crate::units::bytes)
            .unwrap_or_default();
        let (median, mean, range) = match &c.figures.summary {
            Some(s) => (
                format!("{}{ci}", crate::units::time(s.median)),
                format!(
                    "{} ± {}",
                    crate::units::time(s.mean),
                    crate::units::time(s.stddev)
                ),
                format!(
                    "{} … {}",
                    crate::units::time(s.min),
                    crate::units::time(s.max)
                ),
            ),
            None => ("no runs".into(), String::new(), String::new()),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&c.name),
            escape(&crate::store::with_parameters(&c.command, &c.parameters)),
            c.times.len(),
            escape(&median),
            escape(&mean),
            escape(&range),
            escape(&mem)
        );
    }
    out.push_str("</table>\n");
}

/// `run --monitor` counts: each benchmark's median per run (and range) of
/// every `monitor_NAME` it has.
pub(super) fn monitor_table(out: &mut String, d: &ReportData) {
    let mut names: Vec<&str> = Vec::new();
    for c in &d.cells {
        for (n, _) in &c.monitor {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    if names.is_empty() {
        return;
    }
    out.push_str("<h2>Monitor counts per run</h2>\n<table><tr><th>Benchmark</th>");
    for n in &names {
        let _ = write!(out, "<th>{} median (min … max)</th>", escape(n));
    }
    out.push_str("</tr>");
    for c in &d.cells {
        let _ = write!(out, "<tr><td>{}</td>", escape(&c.name));
        for n in &names {
            let figures = c
                .figures
                .monitor
                .iter()
                .find(|(m, _)| m == n)
                .and_then(|(_, f)| *f);
            let text = match figures {
                Some([median, min, max]) => format!(
                    "{} ({} … {})",
                    crate::units::count(median),
                    crate::units::count(min),
                    crate::units::count(max)
                ),
                None => String::new(),
            };
            let _ = write!(out, "<td class=\"num\">{}</td>", escape(&text));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

pub(super) fn run_order(out: &mut String, d: &ReportData) {
    // Every run of every benchmark, in the order they ran.
    let mut runs: Vec<(u64, usize, f64)> = Vec::new();
    for (i, c) in d.cells.iter().enumerate() {
        if c.samples.is_empty() {
            runs.extend(c.times.iter().enumerate().map(|(j, &t)| (j as u64, i, t)));
        } else {
            runs.extend(
                c.samples
                    .iter()
                    .filter_map(|s| s.get(Metric::WallTime).map(|t| (s.run_index, i, t))),
            );
        }
    }
    if runs.is_empty() {
        return;
    }
    runs.sort_by_key(|r| r.0);
    let group = runs.len().div_ceil(MAX_BARS);
    let bars: Vec<Bar> = if group <= 1 {
        runs.iter()
            .map(|&(_, g, v)| Bar { value: v, group: g })
            .collect()
    } else {
        // Runs of several benchmarks interleave: average per benchmark
        // within each consecutive window, so colours stay meaningful.
        let mut bars = Vec::new();
        for window in runs.chunks(group) {
            for (g, _) in d.cells.iter().enumerate() {
                let v: Vec<f64> = window.iter().filter(|r| r.1 == g).map(|r| r.2).collect();
                if !v.is_empty() {
                    bars.push(Bar {
                        value: v.iter().sum::<f64>() / v.len() as f64,
                        group: g,
                    });
                }
            }
        }
        bars
    };
    out.push_str("<h2>Runs in order</h2>\n");
    if group > 1 {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} runs: each bar is the mean of one benchmark's runs within a window of {group} consecutive runs.</p>",
            runs.len()
        );
    }
    out.push_str(
        &BarChart {
            title: "Wall time of every run, in the order run (drift shows as a slope)".into(),
            x_label: "run".into(),
            y_label: "wall time".into(),
            y_format: Format::Seconds,
            groups: d.cells.iter().map(|c| c.name.clone()).collect(),
            bars,
        }
        .render(),
    );
    out.push('\n');
}

pub(super) fn distributions(out: &mut String, d: &ReportData) {
    let boxes: Vec<BoxStats> = d
        .cells
        .iter()
        .filter_map(|c| BoxStats::from_values(&c.name, &c.times))
        .collect();
    if boxes.is_empty() {
        return;
    }
    out.push_str("<h2>Distributions</h2>\n");
    out.push_str(
        &BoxPlot {
            title: "Wall time per benchmark (box: quartiles; whiskers: 1.5 IQR; circles: beyond)"
                .into(),
            y_label: "wall time".into(),
            y_format: Format::Seconds,
            boxes,
        }
        .render(),
    );
    out.push('\n');
}
