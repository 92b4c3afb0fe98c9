//! The HTML report: one self-contained file with inline SVG charts and
//! inline CSS. No scripts at all, and a Content-Security-Policy that
//! forbids them and any network access, so the file opens offline and user
//! text (command lines, names, labels) can only ever be text: every such
//! string passes through [`svg::escape`].

use std::fmt::Write as _;

use crate::analysis::{HistoryData, StoredCellFigures};
use crate::metrics::{Metric, Sample};
use crate::report::svg::{
    escape, Bar, BarChart, BoxPlot, BoxStats, Format, IntervalChart, IntervalRow, LineChart, Point,
    Series,
};
use crate::store::{StoredSearch, StoredSession};

/// Bars drawn at most in the run-order chart; more runs are averaged in
/// consecutive groups (and the chart says so).
pub const MAX_BARS: usize = 1500;

/// One benchmark of the reported session.
#[derive(Clone, Debug)]
pub struct CellData {
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    /// All runs (cmdscope metrics), in run order.
    pub samples: Vec<Sample>,
    /// The time values used for statistics (wall time, or Go's sec/op).
    pub times: Vec<f64>,
    /// `run --monitor` counts per run: (`monitor_NAME`, one value per run).
    pub monitor: Vec<(String, Vec<f64>)>,
    /// The figures shown of it, computed by `analysis`.
    pub figures: StoredCellFigures,
}

#[derive(Clone, Debug)]
pub struct ReportData {
    pub store: String,
    pub session: StoredSession,
    pub cells: Vec<CellData>,
    /// The session's comparisons by the comparison engine (wall time).
    pub comparisons: Vec<crate::analysis::comparison::Comparison>,
    pub history: Vec<HistoryData>,
    pub notes: Vec<String>,
    /// A one-parameter sweep's or search's values as good as the best (see
    /// `commands::report::sweep_set`), shaded on its curve.
    pub as_good: Option<SweepSet>,
    /// A session run in concurrency mode: its throughput, host view,
    /// throughput comparisons and scaling curves.
    pub concurrency: Option<ConcurrencyData>,
    /// A suite run's merged report: the settings its sessions were stored
    /// with, each set once, one "Settings" row each (a single session's
    /// are its `session.settings`).
    pub suite_settings: Vec<crate::run::settings::Settings>,
}

/// Concurrency mode's answers for a stored session (computed by
/// `analysis::concurrency` from its stored batches) and the session as
/// `run` held it, whose cells they index.
#[derive(Clone, Debug)]
pub struct ConcurrencyData {
    pub session: std::rc::Rc<crate::run::session::Session>,
    pub analysis: crate::analysis::concurrency::Concurrency,
}

/// The values of `parameter` not significantly worse than the best, as
/// ranges of neighbouring values on the curve.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSet {
    pub parameter: String,
    pub ranges: Vec<(f64, f64)>,
}

/// The page policy: no scripts, no network, inline styles and data: images only.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

pub const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 880px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
code { background: #f4f4f4; padding: 0 0.2em; word-break: break-all; }
svg.chart { display: block; margin: 0.5em 0; border: 1px solid #eee; }
p.note { color: #555; font-size: 0.9em; }
";

fn row(out: &mut String, key: &str, value: &str) {
    let _ = write!(
        out,
        "<tr><th>{}</th><td>{}</td></tr>",
        escape(key),
        escape(value)
    );
}

pub fn render(d: &ReportData) -> String {
    let s = &d.session;
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>cmdscope report: session #{id}</title><style>{STYLE}</style></head><body>\n\
         <h1>cmdscope report: session #{id}</h1>\n",
        id = s.id
    );

    // Session and machine.
    out.push_str("<table class=\"session\">");
    row(&mut out, "Started", &s.started.replace('T', " "));
    let status = match &s.stop_reason {
        Some(r) => format!("{} ({})", s.status, r.replace('_', " ")),
        None => s.status.clone(),
    };
    row(&mut out, "Status", &status);
    if !s.labels.is_empty() {
        let l: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        row(&mut out, "Labels", &l.join(", "));
    }
    row(&mut out, "Command line", &s.command_line);
    for settings in s.settings.iter().chain(&d.suite_settings) {
        row(&mut out, "Settings", &settings_line(settings));
    }
    row(&mut out, "Source", &s.source);
    let m = &s.machine;
    row(
        &mut out,
        "Machine",
        &format!(
            "{} — {}, {} CPUs, {}, kernel {}",
            m.hostname,
            m.cpu_model,
            m.cores,
            crate::units::bytes(m.memory_bytes as f64),
            m.kernel
        ),
    );
    row(
        &mut out,
        "At start",
        &format!(
            "governor {}, load {}",
            m.governor.as_deref().unwrap_or("unknown"),
            m.load
                .map(|l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]))
                .unwrap_or_else(|| "unknown".into())
        ),
    );
    if let Some(checks) = s
        .preflight
        .as_deref()
        .and_then(|j| serde_json::from_str::<Vec<crate::run::preflight::Check>>(j).ok())
    {
        use crate::run::preflight::Status;
        let names = |st: Status| -> Vec<&str> {
            checks
                .iter()
                .filter(|c| c.status == st)
                .map(|c| c.name.as_str())
                .collect()
        };
        let mut parts: Vec<String> = crate::run::preflight::warnings(&checks)
            .into_iter()
            .map(|w| format!("warning: {w}"))
            .collect();
        for (st, word) in [(Status::Ok, "ok"), (Status::Unknown, "not readable")] {
            let n = names(st);
            if !n.is_empty() {
                parts.push(format!("{word}: {}", n.join(", ")));
            }
        }
        row(&mut out, "Machine checks", &parts.join("; "));
    }
    row(&mut out, "Fingerprint", &s.fingerprint);
    row(&mut out, "cmdscope", &s.tool_version);
    row(&mut out, "Store", &d.store);
    out.push_str("</table>\n");
    for n in &d.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
    }

    summary_table(&mut out, d);
    monitor_table(&mut out, d);
    run_order(&mut out, d);
    distributions(&mut out, d);
    comparisons(&mut out, d);
    concurrency(&mut out, d);
    sweeps(&mut out, d);
    history(&mut out, d);

    let _ = write!(
        out,
        "<p class=\"note\">Generated by cmdscope {}. Medians with 95 % distribution-free intervals; \
         ratios, p-values and verdicts from one analysis per comparison (Bonferroni across the comparisons).</p>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn summary_table(out: &mut String, d: &ReportData) {
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
fn monitor_table(out: &mut String, d: &ReportData) {
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

fn run_order(out: &mut String, d: &ReportData) {
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

fn distributions(out: &mut String, d: &ReportData) {
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

/// What the session's comparisons were decided with, as it was run.
/// Concurrency mode: per cell its throughput with its interval, the
/// instances' CPU and I/O rates and the host's view; the throughput
/// comparisons in the terminal's words; each scaling curve drawn as
/// `--plot` draws it, with its fit or why it is withheld.
fn concurrency(out: &mut String, d: &ReportData) {
    use super::concurrency as words;
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
fn host_pressure(out: &mut String, session: &crate::run::session::Session) {
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

fn settings_line(s: &crate::run::settings::Settings) -> String {
    let precision = match s.precision {
        // Shortest form of the percentage: ±5 %, ±0.5 %.
        Some(p) => format!("precision ±{} %", (p * 1e6).round() / 1e4),
        None => "a fixed run count".to_string(),
    };
    let mut line = format!("alpha {}, {precision}", s.alpha);
    if let Some(reference) = s.cells.get(s.reference) {
        line.push_str(&format!(", reference '{}'", reference.name));
    }
    if let Some(b) = &s.benchmark {
        line.push_str(&format!(", suite benchmark '{b}'"));
    }
    line
}

fn comparisons(out: &mut String, d: &ReportData) {
    use crate::analysis::comparison::{format_confidence, format_p};
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
            Some(note) => format!("{}: {note}", c.verdict.words()),
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
fn sweeps(out: &mut String, d: &ReportData) {
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

fn history(out: &mut String, d: &ReportData) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Machine, StoredSession};

    fn session() -> StoredSession {
        StoredSession {
            id: 7,
            started: "2025-01-01T00:00:00Z".into(),
            started_unix: 1_735_689_600.0,
            finished_unix: None,
            status: "running".into(),
            stop_reason: None,
            source: "run".into(),
            tool_version: "0".into(),
            command_line: "cmdscope run '<x>'".into(),
            order: Some("interleaved".into()),
            shell_overhead: None,
            fingerprint: "0123456789abcdef".into(),
            machine: Machine {
                hostname: "<host>".into(),
                cpu_model: "cpu".into(),
                cores: 2,
                memory_bytes: 1 << 30,
                kernel: "6".into(),
                governor: None,
                load: None,
            },
            labels: vec![("k".into(), "<v>".into())],
            cells: vec![],
            preflight: Some(
                r#"[{"name":"load","status":"warn","detail":"load <9>"},{"name":"swap","status":"ok","detail":"no swapping"}]"#
                    .into(),
            ),
            search: None,
            settings: None,
            settings_error: None,
        }
    }

    fn cell(batch: u32) -> CellData {
        // A U-shaped sweep: fastest at batch 16.
        let t = 0.001 * (16.0 / batch as f64 + batch as f64 / 16.0);
        let times: Vec<f64> = (0..8).map(|i| t * (1.0 + 0.01 * i as f64)).collect();
        CellData {
            name: format!("sha256 batch={batch}"),
            command: "sha256".into(),
            parameters: vec![("batch".into(), batch.to_string())],
            samples: vec![],
            figures: StoredCellFigures::of(&times, &[], &[]),
            times,
            monitor: vec![],
        }
    }

    #[test]
    fn the_hosts_pressure_is_drawn_batch_by_batch_for_what_stalled() {
        use crate::run::host::{DiskRate, HostView, PressureShare};
        use crate::run::session::{BatchRecord, CellResult, Session};
        let host = |io: f64, disk: f64| HostView {
            pressure: vec![
                PressureShare {
                    resource: "cpu",
                    some: 0.0,
                    full: None,
                },
                PressureShare {
                    resource: "io",
                    some: io,
                    full: Some(io / 2.0),
                },
            ],
            disks: vec![DiskRate {
                device: "vda".into(),
                busy: disk,
                read_bytes_per_second: 0.0,
                written_bytes_per_second: 1e6,
            }],
            ..HostView::default()
        };
        let batch = |block: usize, io: f64, disk: f64| BatchRecord {
            concurrency: 2,
            block,
            first_sample: 0,
            spans: vec![],
            busy: (0.0, 1.0),
            elapsed: 1.0,
            host: host(io, disk),
        };
        let mut session = Session::empty();
        let mut disk = CellResult::from_wall_times("<on disk>", &[0.1]);
        disk.batches = vec![batch(1, 0.25, 0.8), batch(0, 0.5, 0.9)];
        let mut memory = CellResult::from_wall_times("in memory", &[0.1]);
        memory.batches = vec![batch(0, 0.0, 0.0), batch(1, 0.0, 0.0)];
        session.results = vec![disk, memory];
        let mut out = String::new();
        host_pressure(&mut out, &session);
        // CPU never stalled and memory was not read: no chart for them.
        assert!(!out.contains("CPU pressure") && !out.contains("memory pressure"));
        assert_eq!(out.matches("<svg").count(), 2, "I/O and the disk");
        let io = out.split("the busiest disk").next().unwrap();
        // Four bars, in block order: the disk cell's 50 %, then 0, 25, 0.
        let heights: Vec<f64> = io
            .split("class=\"bar\"")
            .skip(1)
            .map(|bar| {
                let h = bar.split("height=\"").nth(1).unwrap();
                h[..h.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(heights.len(), 4, "{io}");
        assert!(heights[0] > 0.0 && heights[1] == 0.0 && heights[3] == 0.0);
        assert!((heights[2] / heights[0] - 0.5).abs() < 0.01, "{heights:?}");
        assert!(out.contains("&lt;on disk&gt;"), "names escaped");
        assert!(!out.contains("<on disk>"));
    }

    #[test]
    fn sweeps_are_drawn_with_the_fastest_value_marked_and_text_escaped() {
        let data = ReportData {
            store: "s.db".into(),
            session: session(),
            cells: [1, 4, 16, 64, 256].into_iter().map(cell).collect(),
            comparisons: vec![],
            history: vec![HistoryData {
                identity: "<id>".into(),
                points: vec![crate::analysis::HistoryPoint {
                    session: 7,
                    started_unix: 1_735_689_600.0,
                    median: 0.002,
                    ci: Some([0.0019, 0.0021]),
                }],
            }],
            notes: vec!["<note>".into()],
            as_good: Some(SweepSet {
                parameter: "batch".into(),
                ranges: vec![(16.0, 64.0)],
            }),
            concurrency: None,
            suite_settings: vec![],
        };
        let html = render(&data);
        if let Some(dir) = std::env::var_os("CMDSCOPE_KEEP_REPORT") {
            let _ = std::fs::write(std::path::Path::new(&dir).join("sweep.html"), &html);
        }
        assert!(html.contains("<h2>Sweeps</h2>"));
        assert!(html.contains("Median wall time against batch"));
        assert!(html.contains("class=\"highlight\""), "optimum marked");
        assert!(html.contains("class=\"band\""), "interval band");
        assert!(html.contains("green: as good as the fastest"));
        assert!(html.contains("as good as the best: 16 – 64"), "set shaded");
        assert!(
            html.contains("warning: load: load &lt;9&gt;; ok: swap"),
            "machine checks"
        );
        for raw in ["<x>", "<host>", "<v>", "<id>", "<note>", "<9>"] {
            assert!(!html.contains(raw), "{raw} not escaped");
        }
        assert!(html.contains("&lt;note&gt;"));
        assert!(html.contains("Runs in order") && html.contains("Distributions"));
        assert!(!html.contains("Search:"), "not a search session");
    }

    fn search(parameters: &[&str], metric: &str) -> StoredSearch {
        let at = |vals: &[&str]| -> crate::store::Setting {
            parameters
                .iter()
                .zip(vals)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let tried: Vec<[&str; 2]> = ["1", "4", "16", "64", "<256>"]
            .iter()
            .map(|&b| [b, "2"])
            .collect();
        StoredSearch {
            parameters: parameters.iter().map(|p| p.to_string()).collect(),
            metric: metric.into(),
            compared: metric.into(),
            maximize: false,
            best: at(&tried[3]),
            as_good: vec![at(&tried[2]), at(&tried[3]), at(&tried[4])],
            values_tried: tried.iter().map(|t| at(t)).collect(),
            runs: 31,
            grid_runs: 50,
        }
    }

    #[test]
    fn a_search_session_marks_its_best_and_says_its_answer() {
        // The search's best (64) is not the fastest median (16): it is the
        // one marked, and the stored set is the one shaded.
        let mut s = session();
        s.search = Some(search(&["batch"], "time_wall_clock"));
        let data = ReportData {
            store: "s.db".into(),
            session: s,
            cells: [1, 4, 16, 64, 256].into_iter().map(cell).collect(),
            comparisons: vec![],
            history: vec![],
            notes: vec![],
            as_good: Some(SweepSet {
                parameter: "batch".into(),
                ranges: vec![(16.0, 64.0)],
            }),
            concurrency: None,
            suite_settings: vec![],
        };
        let html = render(&data);
        assert!(html.contains("dashed: the search&#39;s best; green: as good as it"));
        assert!(html.contains("as good as the best: 16 – 64"), "set shaded");
        let marked = |html: &str| -> f64 {
            let needle = "class=\"highlight\" x1=\"";
            let at = html.find(needle).unwrap() + needle.len();
            html[at..].split('"').next().unwrap().parse().unwrap()
        };
        let x = marked(&html);
        let x_fastest = marked(&render(&ReportData {
            session: session(),
            ..data.clone()
        }));
        assert!(x > x_fastest, "64 marked, right of 16: {x} vs {x_fastest}");
        assert!(
            html.contains(
                "Search: batch = 64; 16–&lt;256&gt; as good (minimize time_wall_clock: \
                 5 values tried, 31 of 50 grid runs)"
            ),
            "answer in words, escaped"
        );
        assert!(!html.contains("<256>"));

        // Two parameters: the answer in words; another metric's best is
        // not marked on the wall-time curves.
        let mut s = session();
        s.search = Some(search(&["batch", "k"], "memory_peak_resident"));
        let html = render(&ReportData {
            session: s,
            as_good: None,
            concurrency: None,
            ..data
        });
        assert!(html.contains("dashed: fastest)"), "fastest marked");
        assert!(html.contains(
            "Search: batch=64 k=2; batch=16 k=2–batch=&lt;256&gt; k=2 as good \
             (minimize memory_peak_resident: 5 values tried, 31 of 50 grid runs)"
        ));
    }
}
