//! Concurrency mode's section: throughput, the instances' rates, the
//! host's view batch by batch, and the scaling curves.

use std::fmt::Write as _;

use super::data::ReportData;
use crate::report::svg::escape;

/// Concurrency mode: per cell its throughput with its interval, the
/// instances' CPU and I/O rates and the host's view; the throughput
/// comparisons in the terminal's words; each scaling curve drawn as
/// `--plot` draws it, with its fit or why it is withheld.
pub(super) fn concurrency(out: &mut String, d: &ReportData) {
    use crate::report::concurrency as words;
    let Some(data) = &d.concurrency else {
        return;
    };
    let (c, session) = (&data.analysis, &*data.session);
    out.push_str(
        "<h2>Concurrency</h2>\n<p class=\"note\">Throughput: completions per second while all \
         N instances were busy, the mean over batches with its 95 % interval. CPU: the \
         instances' CPU seconds per second.</p>\n<table class=\"concurrency\"><tr>\
         <th>Benchmark</th><th>N</th><th>Throughput [95% CI]</th><th>Batches</th>\
         <th>CPU</th><th>Storage read / written</th><th>Host</th></tr>",
    );
    for (r, t) in session.results.iter().zip(&c.cells) {
        let Some(t) = t else {
            if let Some(n) = r.cell.variant.concurrency {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td class=\"num\">{n}</td>\
                     <td colspan=\"5\">no batch had all its instances busy at once</td></tr>",
                    escape(&r.cell.name)
                );
            }
            continue;
        };
        let rate = |x: f64| format!("{}/s", crate::units::significant(x, 4));
        let throughput = match t.ci {
            Some([lo, hi]) => format!("{} [{} … {}]", rate(t.value), rate(lo), rate(hi)),
            None => format!("{} (one batch: no interval)", rate(t.value)),
        };
        let storage = match (t.read_bytes_per_second, t.written_bytes_per_second) {
            (Some(r), Some(w)) => format!(
                "{}/s / {}/s",
                crate::units::bytes(r),
                crate::units::bytes(w)
            ),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td>{}</td></tr>",
            escape(&r.cell.name),
            t.concurrency,
            escape(&throughput),
            t.batches,
            escape(
                &t.cpu_utilisation
                    .map(|u| format!("{u:.2} s per s"))
                    .unwrap_or_default()
            ),
            escape(&storage),
            escape(&words::host(&t.host).unwrap_or_default())
        );
    }
    out.push_str("</table>\n");
    for cmp in &c.comparisons {
        let _ = writeln!(out, "<p>{}</p>", escape(&words::sentence(cmp)));
    }
    for s in &c.scaling {
        out.push_str(&words::render_svg(c, s, session));
        let _ = writeln!(out, "<p>{}</p>", escape(&words::usl_line(&s.usl)));
    }
    host_pressure(out, session);
}

/// The host's view batch by batch, one bar per batch in the order of the
/// blocks, coloured by benchmark: the share of the batch's time some task
/// stalled on the CPU, I/O or memory (pressure stall information, "some"),
/// and the busiest disk's busy share: which benchmark's batches found the
/// machine, not the command, to be the limit. A chart per resource that
/// stalled at all.
pub(super) fn host_pressure(out: &mut String, session: &crate::run::session::Session) {
    use crate::report::svg::{Bar, BarChart, Format};
    let mut batches: Vec<(usize, &crate::run::session::BatchRecord)> = session
        .results
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.batches.iter().map(move |b| (i, b)))
        .collect();
    batches.sort_by_key(|&(cell, b)| (b.block, cell));
    let groups: Vec<String> = session
        .results
        .iter()
        .map(|r| r.cell.name.clone())
        .collect();
    type Share = fn(&crate::run::host::HostView, &str) -> Option<f64>;
    let pressure: Share = |h, resource| {
        h.pressure
            .iter()
            .find(|p| p.resource == resource)
            .map(|p| p.some)
    };
    let disk: Share = |h, _| h.disks.iter().map(|d| d.busy).reduce(f64::max);
    let charts: [(&str, &str, Share); 4] = [
        ("cpu", "CPU pressure: some task waiting for a CPU", pressure),
        (
            "io",
            "I/O pressure: some task waiting for storage",
            pressure,
        ),
        (
            "memory",
            "memory pressure: some task waiting for memory",
            pressure,
        ),
        ("disk", "the busiest disk: I/O in flight", disk),
    ];
    for (resource, title, share) in charts {
        let bars: Vec<Bar> = batches
            .iter()
            .map(|&(cell, b)| Bar {
                value: share(&b.host, resource).map_or(f64::NAN, |v| 100.0 * v),
                group: cell,
            })
            .collect();
        if !bars.iter().any(|b| b.value > 0.0) {
            continue;
        }
        let chart = BarChart {
            title: format!("{title}, batch by batch"),
            x_label: "batch, in the order of the blocks".into(),
            y_label: "% of the batch's time".into(),
            y_format: Format::Number,
            groups: groups.clone(),
            bars,
        };
        out.push_str(&chart.render());
        out.push('\n');
    }
}
