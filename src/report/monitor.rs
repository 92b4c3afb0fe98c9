//! `run --monitor` in the terminal: each pattern's matching lines per run,
//! the median per command and each command's range.

use std::fmt::Write as _;

use crate::monitor::{self, Counts};
use crate::run::session::Session;
use crate::units;

/// "NAME messages per run: 100 vs 0" per pattern (medians; each command's
/// range below), for the terminal after the results.
pub fn render_text(c: &Counts, session: &Session) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nMonitor '{}': matching lines per run (during the run + {} s):",
        c.watch.command, c.watch.settle
    );
    let cells: Vec<usize> = (0..session.results.len())
        .filter(|&i| !session.results[i].cell.calibration)
        .collect();
    let per_cell: Vec<Vec<(String, Option<f64>)>> =
        cells.iter().map(|&i| monitor::medians(c, i)).collect();
    for (p, name) in c.watch.names.iter().enumerate() {
        let medians: Vec<String> = per_cell
            .iter()
            .map(|m| m[p].1.map_or("-".to_string(), units::count))
            .collect();
        let _ = writeln!(out, "  monitor_{name}: {} (median)", medians.join(" vs "));
        for &i in &cells {
            let v: Vec<f64> = monitor::series(c, i, p)
                .into_iter()
                .filter(|x| x.is_finite())
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let range = if v.is_empty() {
                "no counted run".to_string()
            } else {
                format!(
                    "{}–{} over {} runs",
                    units::count(lo),
                    units::count(hi),
                    v.len()
                )
            };
            let _ = writeln!(out, "    {}: {range}", session.results[i].cell.name);
        }
    }
    if let Some((runs, how)) = &c.ended {
        let _ = writeln!(
            out,
            "  The monitor ended during the session ({how}) after {runs} measured runs: later runs have no counts."
        );
    }
    out
}
