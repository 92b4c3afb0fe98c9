//! Markup exports (Markdown, AsciiDoc, Org-mode): tables people paste into
//! pull requests and notes. hyperfine's columns first, with its meaning
//! (Mean ± σ, Min, Max in one unit; Relative: mean over the reference's
//! mean, with the propagated error), then cmdscope's: the median with its
//! 95 % interval and the peak memory.

use crate::analysis::CellAnalysis;
use crate::metrics::Metric;
use crate::run::session::Session;
use crate::units::{self, TimeScale};

/// Escapes text for a Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('\n', " ")
        .replace('`', "\\`")
}

/// The markup languages hyperfine exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Markup {
    Markdown,
    AsciiDoc,
    OrgMode,
}

/// Order of the rows (`--sort`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// As the commands were given.
    Command,
    /// By mean time, fastest first.
    MeanTime,
}

/// One table row, values already formatted.
struct Row {
    command: String,
    cells: Vec<String>,
    mean: f64,
}

/// A Markdown table (the `--export-markdown` file).
pub fn render(session: &Session, analyses: &[CellAnalysis]) -> String {
    render_markup(session, analyses, Markup::Markdown, Rows::Command, None)
}

/// `reference`: the result the Relative column divides by (`--reference`);
/// None: the fastest.
pub fn render_markup(
    session: &Session,
    analyses: &[CellAnalysis],
    markup: Markup,
    rows_order: Rows,
    reference: Option<usize>,
) -> String {
    let mean_of = |a: &CellAnalysis| a.get(Metric::WallTime).map(|m| m.summary.mean);
    // hyperfine's unit: the forced one, else ms unless the first command
    // takes a second or more.
    let first = analyses.iter().find_map(mean_of).unwrap_or(0.0);
    let scale = units::forced_scale().unwrap_or(if first < 1.0 {
        TimeScale::Millisecond
    } else {
        TimeScale::Second
    });
    let v = |x: f64| format!("{:.1}", scale.of(x));
    // Relative to the --reference command, else to the fastest (hyperfine's rule).
    let reference_index = reference.or_else(|| {
        (0..analyses.len())
            .filter(|&i| mean_of(&analyses[i]).is_some())
            .min_by(|&a, &b| {
                let m = |i: usize| mean_of(&analyses[i]).unwrap_or(f64::INFINITY);
                m(a).total_cmp(&m(b))
            })
    });
    let reference = reference_index
        .and_then(|i| analyses.get(i))
        .and_then(|a| a.get(Metric::WallTime))
        .map(|m| (m.summary.mean, m.summary.stddev));
    let mut rows: Vec<Row> = Vec::new();
    for (i, (r, a)) in session.results.iter().zip(analyses).enumerate() {
        let Some(w) = a.get(Metric::WallTime) else {
            rows.push(Row {
                command: r.cell.name.clone(),
                cells: vec![
                    "no completed runs".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ],
                mean: f64::INFINITY,
            });
            continue;
        };
        let s = &w.summary;
        let relative = match reference {
            Some((rm, _)) if Some(i) == reference_index || rm <= 0.0 => {
                if rm > 0.0 {
                    "1.00".to_string()
                } else {
                    String::new()
                }
            }
            Some((rm, rsd)) => {
                let ratio = s.mean / rm;
                let err = if s.mean > 0.0 {
                    ratio * ((s.stddev / s.mean).powi(2) + (rsd / rm).powi(2)).sqrt()
                } else {
                    0.0
                };
                format!("{ratio:.2} ± {err:.2}")
            }
            None => String::new(),
        };
        let median = match &w.median_ci {
            Ok(e) => format!("{} [{} … {}]", v(s.median), v(e.low), v(e.high)),
            Err(_) => v(s.median),
        };
        let mem = a
            .get(Metric::PeakRss)
            .map(|m| units::bytes(m.summary.median))
            .unwrap_or_default();
        rows.push(Row {
            command: r.cell.name.clone(),
            cells: vec![
                format!("{} ± {}", v(s.mean), v(s.stddev)),
                v(s.min),
                v(s.max),
                relative,
                median,
                mem,
            ],
            mean: s.mean,
        });
    }
    if rows_order == Rows::MeanTime {
        rows.sort_by(|a, b| a.mean.total_cmp(&b.mean));
    }
    let u = scale.symbol();
    let header = [
        "Command".to_string(),
        format!("Mean [{u}]"),
        format!("Min [{u}]"),
        format!("Max [{u}]"),
        "Relative".to_string(),
        format!("Median [{u}] (95 % CI)"),
        "Peak memory".to_string(),
    ];
    match markup {
        Markup::Markdown => {
            let mut out = format!("| {} |\n", header.join(" | "));
            out.push_str("|:---|---:|---:|---:|---:|---:|---:|\n");
            for r in &rows {
                out.push_str(&format!(
                    "| `{}` | {} |\n",
                    cell(&r.command),
                    r.cells.join(" | ")
                ));
            }
            out
        }
        Markup::AsciiDoc => {
            let esc = |t: &str| t.replace('|', "\\|");
            let mut out = String::from("[cols=\"<,>,>,>,>,>,>\"]\n|===\n");
            for h in &header {
                out.push_str(&format!("| {h} \n"));
            }
            for r in &rows {
                out.push('\n');
                out.push_str(&format!("| `{}` \n", esc(&r.command)));
                for c in &r.cells {
                    out.push_str(&format!("| {} \n", esc(c)));
                }
            }
            out.push_str("|===\n");
            out
        }
        Markup::OrgMode => {
            let esc = |t: &str| t.replace('|', "\\vert{}");
            let mut out = format!("| {}  |\n", header.join("  |  "));
            out.push_str("|--+--+--+--+--+--+--|\n");
            for r in &rows {
                out.push_str(&format!(
                    "| ={}=  |  {} |\n",
                    esc(&r.command),
                    r.cells
                        .iter()
                        .map(|c| esc(c))
                        .collect::<Vec<_>>()
                        .join(" |  ")
                ));
            }
            out
        }
    }
}
