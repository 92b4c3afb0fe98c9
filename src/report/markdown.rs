//! Markup exports (Markdown, AsciiDoc, Org-mode): tables people paste into
//! pull requests and notes. hyperfine's columns first, with its meaning
//! (Mean ± σ, Min, Max in one unit; Relative: mean over the reference's
//! mean, with the propagated error), then cmdscope's: the median with its
//! 95 % interval, the peak memory and, with `--monitor`, each count's
//! median per run (`monitor_NAME`).

use super::{Exporter, Report};
use crate::analysis::{CellAnalysis, RelativeMean};
use crate::error::Result;
use crate::metrics::Metric;
use crate::units::{self, TimeScale};

/// Escapes text for Markdown, in a table cell or a line: a backslash, `|`
/// and a backtick are escaped (a `|` would end the cell, a backtick open a
/// code span, a backslash escape what follows), and line breaks fold into
/// spaces (one would end the row).
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '|' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text as a code span in a table cell. Inside backticks a backslash is
/// shown as it is, so only `|` (which the table splits on before it reads
/// the span) is escaped and line breaks folded; text holding a backtick
/// cannot be a plain span and is escaped as text instead.
pub fn code(text: &str) -> String {
    if text.contains('`') {
        cell(text)
    } else {
        format!("`{}`", text.replace('|', "\\|").replace(['\n', '\r'], " "))
    }
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

/// The table of one markup language (`--export-markdown`,
/// `--export-asciidoc`, `--export-orgmode`), rows in `rows` order.
pub struct Table {
    pub markup: Markup,
    pub rows: Rows,
}

impl Exporter for Table {
    fn render(&self, report: &Report) -> Result<String> {
        Ok(render(report, self.markup, self.rows))
    }
}

/// The Relative column is `analysis::relative_means`: over the report's
/// named reference, else over the fastest.
fn render(report: &Report, markup: Markup, rows_order: Rows) -> String {
    let (session, analyses) = (report.session, report.analyses);
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
    let relatives = crate::analysis::relative_means(analyses, report.named_reference);
    let monitor = |cell: usize| -> Vec<(String, String)> {
        report
            .monitor
            .map(|c| crate::monitor::medians(c, cell))
            .unwrap_or_default()
            .into_iter()
            .map(|(name, m)| (name, m.map(units::count).unwrap_or_default()))
            .collect()
    };
    let mut rows: Vec<Row> = Vec::new();
    for (i, (r, a)) in session.results.iter().zip(analyses).enumerate() {
        let counts = monitor(i).into_iter().map(|(_, v)| v);
        let Some(w) = a.get(Metric::WallTime) else {
            let mut cells = vec!["no completed runs".to_string()];
            cells.extend(std::iter::repeat_n(String::new(), 5));
            cells.extend(counts);
            rows.push(Row {
                command: r.cell.name.clone(),
                cells,
                mean: f64::INFINITY,
            });
            continue;
        };
        let s = &w.summary;
        let relative = match relatives[i] {
            Some(RelativeMean::Reference) => "1.00".to_string(),
            Some(RelativeMean::Ratio { ratio, error }) => format!("{ratio:.2} ± {error:.2}"),
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
        let mut cells = vec![
            format!("{} ± {}", v(s.mean), v(s.stddev)),
            v(s.min),
            v(s.max),
            relative,
            median,
            mem,
        ];
        cells.extend(counts);
        rows.push(Row {
            command: r.cell.name.clone(),
            cells,
            mean: s.mean,
        });
    }
    if rows_order == Rows::MeanTime {
        rows.sort_by(|a, b| a.mean.total_cmp(&b.mean));
    }
    let u = scale.symbol();
    let mut header = vec![
        "Command".to_string(),
        format!("Mean [{u}]"),
        format!("Min [{u}]"),
        format!("Max [{u}]"),
        "Relative".to_string(),
        format!("Median [{u}] (95 % CI)"),
        "Peak memory".to_string(),
    ];
    header.extend(
        monitor(0)
            .into_iter()
            .map(|(name, _)| format!("{name} (median)")),
    );
    // The command's column, then the numbers' (right-aligned).
    let numbers = header.len() - 1;
    match markup {
        Markup::Markdown => {
            let mut out = format!("| {} |\n", header.join(" | "));
            out.push_str(&format!("|:---|{}\n", "---:|".repeat(numbers)));
            for r in &rows {
                out.push_str(&format!(
                    "| {} | {} |\n",
                    code(&r.command),
                    r.cells.join(" | ")
                ));
            }
            out
        }
        Markup::AsciiDoc => {
            let esc = |t: &str| t.replace('|', "\\|");
            let mut out = format!("[cols=\"<{}\"]\n|===\n", ",>".repeat(numbers));
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
            out.push_str(&format!("|--{}|\n", "+--".repeat(numbers)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::two_cells;

    fn table(report: &Report, markup: Markup, rows: Rows) -> String {
        Table { markup, rows }.render(report).unwrap()
    }

    #[test]
    fn markdown_rows_escape_the_pipe_and_relate_to_the_fastest() {
        let f = two_cells();
        let text = table(&f.report(), Markup::Markdown, Rows::Command);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines[0],
            "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative | Median [ms] (95 % CI) | Peak memory |"
        );
        assert_eq!(lines[1], "|:---|---:|---:|---:|---:|---:|---:|");
        assert!(
            lines[2].starts_with("| `fast` | 10.0 ± 0.2 | 9.7 | 10.3 | 1.00 | "),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].starts_with("| `slow \\| grep x` | 21.0 ± 0.4 | 20.4 | 21.6 | 2.10 ± 0.06 | "),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn a_named_reference_is_the_one_divided_by() {
        let f = two_cells();
        let report = Report {
            named_reference: Some(1),
            ..f.report()
        };
        let text = table(&report, Markup::Markdown, Rows::Command);
        let fast = text.lines().nth(2).unwrap();
        let slow = text.lines().nth(3).unwrap();
        assert!(fast.contains(" | 0.48 ± 0.01 | "), "{fast}");
        assert!(slow.contains(" | 1.00 | "), "{slow}");
    }

    #[test]
    fn rows_sort_by_mean_time() {
        let mut f = two_cells();
        f.session.results.swap(0, 1);
        f.analyses.swap(0, 1);
        let by_command = table(&f.report(), Markup::Markdown, Rows::Command);
        assert!(by_command.lines().nth(2).unwrap().starts_with("| `slow"));
        let by_time = table(&f.report(), Markup::Markdown, Rows::MeanTime);
        assert!(by_time.lines().nth(2).unwrap().starts_with("| `fast`"));
    }

    #[test]
    fn asciidoc_and_org_escape_the_pipe_their_way() {
        let f = two_cells();
        let adoc = table(&f.report(), Markup::AsciiDoc, Rows::Command);
        assert!(adoc.starts_with("[cols=\"<,>,>,>,>,>,>\"]\n|===\n| Command \n"));
        assert!(
            adoc.contains("\n| `slow \\| grep x` \n| 21.0 ± 0.4 \n"),
            "{adoc}"
        );
        assert!(adoc.ends_with("|===\n"));
        let org = table(&f.report(), Markup::OrgMode, Rows::Command);
        assert!(
            org.contains("| =slow \\vert{} grep x=  |  21.0 ± 0.4 |  "),
            "{org}"
        );
        assert_eq!(org.lines().nth(1), Some("|--+--+--+--+--+--+--|"));
    }

    #[test]
    fn monitor_counts_get_a_column_each_in_every_markup() {
        let f = two_cells();
        let counts = crate::monitor::Counts {
            watch: crate::run::settings::MonitorSettings {
                names: vec!["hits".into()],
                ..Default::default()
            },
            per_run: vec![vec![vec![1.0, 3.0]], vec![vec![5.0, 7.0]]],
            ..Default::default()
        };
        let report = Report {
            monitor: Some(&counts),
            ..f.report()
        };
        let md = table(&report, Markup::Markdown, Rows::Command);
        let lines: Vec<&str> = md.lines().collect();
        assert!(
            lines[0].ends_with(" | Peak memory | monitor_hits (median) |"),
            "{md}"
        );
        assert_eq!(lines[1], "|:---|---:|---:|---:|---:|---:|---:|---:|");
        assert!(lines[2].ends_with(" | 2 |"), "{md}");
        assert!(lines[3].ends_with(" | 6 |"), "{md}");
        let adoc = table(&report, Markup::AsciiDoc, Rows::Command);
        assert!(adoc.starts_with("[cols=\"<,>,>,>,>,>,>,>\"]\n"), "{adoc}");
        assert!(adoc.contains("| monitor_hits (median) \n"), "{adoc}");
        let org = table(&report, Markup::OrgMode, Rows::Command);
        assert_eq!(org.lines().nth(1), Some("|--+--+--+--+--+--+--+--|"));
        assert!(org.lines().nth(3).unwrap().ends_with(" |  6 |"), "{org}");
    }

    #[test]
    fn cells_escape_pipes_backslashes_and_backticks_and_fold_lines() {
        assert_eq!(cell("a\\b|c`d\r\ne"), "a\\\\b\\|c\\`d  e");
        // In a code span a backslash is literal; only the table's `|` is escaped.
        assert_eq!(code("x\\y|z\nw"), "`x\\y\\|z w`");
        assert_eq!(code("a`b|"), "a\\`b\\|");
    }
}
