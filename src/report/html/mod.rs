//! The HTML report: one self-contained file with inline SVG charts and
//! inline CSS. No scripts at all, and a Content-Security-Policy that
//! forbids them and any network access, so the file opens offline and user
//! text (command lines, names, labels) can only ever be text: every such
//! string passes through [`svg::escape`].
//!
//! This file renders the page and its header; [`data`] is what it is made
//! from, and each section is a file of its own.

mod comparisons;
mod concurrency;
mod data;
mod gather;
mod history;
mod runs;
mod sweeps;

use std::fmt::Write as _;

use crate::report::svg::escape;
pub use data::{CellData, ConcurrencyData, ReportData, SweepSet, MAX_BARS};
pub use gather::{gather, merged_suite, stored_runs, word};
pub use sweeps::search_line;

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

    runs::summary_table(&mut out, d);
    runs::monitor_table(&mut out, d);
    runs::run_order(&mut out, d);
    runs::distributions(&mut out, d);
    comparisons::comparisons(&mut out, d);
    concurrency::concurrency(&mut out, d);
    sweeps::sweeps(&mut out, d);
    history::history(&mut out, d);

    let _ = write!(
        out,
        "<p class=\"note\">Generated by cmdscope {}. Medians with 95 % distribution-free intervals; \
         ratios, p-values and verdicts from one analysis per comparison (Bonferroni across the comparisons).</p>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// What the session's comparisons were decided with, as it was run.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{HistoryData, StoredCellFigures};
    use crate::store::StoredSearch;
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
            race: None,
            race_error: None,
            settings: None,
            settings_error: None,
            seed: None,
            outcome: None,
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
        concurrency::host_pressure(&mut out, &session);
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
