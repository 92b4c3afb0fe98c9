//! A sweep's or a search's curves, with the values as good as the best
//! shaded, and a stored search's answer in one line.

use super::data::{CellData, ReportData};
use crate::metrics::Metric;
use crate::report::svg::{escape, Format, LineChart, Point, Series};
use crate::store::StoredSearch;

/// A stored search's answer in one line (plain text, for the report and
/// the site): "batch = 1024; 256–4096 as good (minimize time_wall_clock:
/// 5 values tried, 62 of 140 grid runs)".
pub fn search_line(s: &StoredSearch) -> String {
    let one = s.parameters.len() == 1;
    let label = |v: &crate::store::Setting| -> String {
        if one {
            v.first().map(|(_, x)| x.clone()).unwrap_or_default()
        } else {
            let parts: Vec<String> = v.iter().map(|(k, x)| format!("{k}={x}")).collect();
            parts.join(" ")
        }
    };
    let best = if one {
        format!("{} = {}", s.parameters[0], label(&s.best))
    } else {
        label(&s.best)
    };
    // Set members by their position among the tried values, so that
    // neighbours read as one range, as in the terminal's answer.
    let set: Vec<usize> = (0..s.values_tried.len())
        .filter(|&k| s.as_good.contains(&s.values_tried[k]))
        .collect();
    let tried: Vec<usize> = (0..s.values_tried.len()).collect();
    let set_text = if set.len() > 1 {
        format!(
            "; {} as good",
            crate::report::search::describe_set(&set, &tried, |k| label(&s.values_tried[k]))
        )
    } else {
        "; no other value tried is as good".to_string()
    };
    format!(
        "{best}{set_text} ({} {}: {} value{} tried, {} of {} grid runs)",
        if s.maximize { "maximize" } else { "minimize" },
        s.compared,
        s.values_tried.len(),
        if s.values_tried.len() == 1 { "" } else { "s" },
        s.runs,
        s.grid_runs
    )
}

fn numeric(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Sweep curves: benchmarks with a numeric parameter, median against it,
/// one line per combination of the other parameters.
pub(super) fn sweeps(out: &mut String, d: &ReportData) {
    // The charts are of wall time: only a wall-time search's best is marked on them.
    let search = d
        .session
        .search
        .as_ref()
        .filter(|s| s.metric == Metric::WallTime.name());
    let with_params: Vec<&CellData> = d
        .cells
        .iter()
        .filter(|c| !c.parameters.is_empty())
        .collect();
    let answer = d.session.search.as_ref().map(|s| {
        format!(
            "<p class=\"note search\">Search: {}</p>\n",
            escape(&search_line(s))
        )
    });
    if with_params.len() < 2 {
        if let Some(a) = answer {
            out.push_str("<h2>Sweeps</h2>\n");
            out.push_str(&a);
        }
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for c in &with_params {
        for (k, _) in &c.parameters {
            if !names.contains(&k.as_str()) {
                names.push(k);
            }
        }
    }
    let mut charts = String::new();
    for x_name in names {
        let value = |c: &CellData| {
            c.parameters
                .iter()
                .find(|(k, _)| k == x_name)
                .and_then(|(_, v)| numeric(v))
        };
        let cells: Vec<&CellData> = with_params
            .iter()
            .copied()
            .filter(|c| value(c).is_some())
            .collect();
        let mut distinct: Vec<f64> = cells.iter().filter_map(|c| value(c)).collect();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        let mut series: Vec<Series> = Vec::new();
        for c in cells {
            let key: Vec<String> = c
                .parameters
                .iter()
                .filter(|(k, _)| k != x_name)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let key = if key.is_empty() {
                "median".to_string()
            } else {
                key.join(", ")
            };
            let Some(s) = &c.figures.summary else {
                continue;
            };
            let ci = c.figures.median_ci;
            let point = Point {
                x: value(c).unwrap_or(f64::NAN),
                y: s.median,
                lo: ci.map(|[lo, _]| lo),
                hi: ci.map(|[_, hi]| hi),
            };
            match series.iter_mut().find(|s| s.name == key) {
                Some(s) => s.points.push(point),
                None => series.push(Series {
                    name: key,
                    points: vec![point],
                }),
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        // A wall-time search's best is marked where it is (it is not
        // always the fastest median); otherwise the fastest median.
        let searched = search
            .and_then(|s| s.best.iter().find(|(k, _)| k == x_name))
            .and_then(|(_, v)| numeric(v));
        let best = searched.or_else(|| {
            series
                .iter()
                .flat_map(|s| s.points.iter())
                .min_by(|a, b| a.y.total_cmp(&b.y))
                .map(|p| p.x)
        });
        let lo = distinct[0];
        let hi = distinct[distinct.len() - 1];
        let shade = d
            .as_good
            .as_ref()
            .filter(|set| set.parameter == x_name)
            .map(|set| set.ranges.clone())
            .unwrap_or_default();
        let (marked, shaded) = match (searched.is_some(), shade.is_empty()) {
            (false, true) => ("fastest", ""),
            (false, false) => ("fastest", "; green: as good as the fastest"),
            (true, true) => ("the search's best", ""),
            (true, false) => ("the search's best", "; green: as good as it"),
        };
        charts.push_str(
            &LineChart {
                title: format!(
                    "Median wall time against {x_name} (band: 95 % interval; dashed: {marked}{shaded})"
                ),
                x_label: x_name.to_string(),
                y_label: "wall time".into(),
                log_x: lo > 0.0 && hi / lo >= 16.0,
                x_format: Format::Number,
                y_format: Format::Seconds,
                series,
                highlight: best,
                shade,
            }
            .render(),
        );
        charts.push('\n');
    }
    if !charts.is_empty() || answer.is_some() {
        out.push_str("<h2>Sweeps</h2>\n");
        out.push_str(&charts);
        out.push_str(answer.as_deref().unwrap_or_default());
    }
}
