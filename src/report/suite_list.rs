//! `cmdscope suite list` as text and JSON: a suite's benchmarks and cells,
//! each with the time its latest stored measurement took.

use std::fmt::Write as _;

use serde::Serialize;

use crate::error::{Error, Result};

/// One benchmark of the list, with its cells.
pub struct ListedBenchmark<'a> {
    pub name: &'a str,
    /// Where the suite file defines it, for the text list.
    pub position: String,
    pub cells: Vec<ListedCell<'a>>,
}

/// One cell in `suite list` (its JSON form as is).
#[derive(Serialize)]
pub struct ListedCell<'a> {
    pub id: &'a str,
    pub benchmark: &'a str,
    pub name: &'a str,
    pub parameters: serde_json::Map<String, serde_json::Value>,
    pub command: &'a str,
    pub argv: String,
    #[serde(skip)]
    pub identity: &'a str,
    /// Runs and median wall time of its latest measurement in the store.
    pub estimated_seconds: Option<f64>,
}

/// The cells as one JSON array.
pub fn json(listed: &[ListedBenchmark]) -> Result<String> {
    let cells: Vec<&ListedCell> = listed.iter().flat_map(|b| b.cells.iter()).collect();
    serde_json::to_string_pretty(&cells).map_err(|e| Error::Failed(e.to_string()))
}

/// The text list; `partition` (as written, `2/4`) with the whole suite's
/// cell count when one partition is shown.
pub fn text(listed: &[ListedBenchmark], partition: Option<(String, usize)>) -> String {
    let mut out = String::new();
    let mut sum = 0.0;
    let mut known_cells = 0;
    let mut count = 0;
    for b in listed {
        let _ = writeln!(out, "{}  ({})", b.name, b.position);
        for c in &b.cells {
            count += 1;
            if let Some(e) = c.estimated_seconds {
                sum += e;
                known_cells += 1;
            }
            let _ = writeln!(
                out,
                "  {}  {}{}",
                c.id,
                c.identity,
                c.estimated_seconds
                    .map(|e| format!("  ~{}", crate::units::time(e)))
                    .unwrap_or_default()
            );
        }
    }
    let _ = write!(
        out,
        "{count} cell{} in {} benchmark{}",
        if count == 1 { "" } else { "s" },
        listed.len(),
        if listed.len() == 1 { "" } else { "s" }
    );
    if let Some((p, total)) = partition {
        let _ = write!(out, " (partition {p} of a suite of {total} cells)");
    }
    if known_cells > 0 {
        let _ = write!(
            out,
            "; measuring took {} for the {known_cells} cell{} the store knows",
            crate::units::time(sum),
            if known_cells == 1 { "" } else { "s" }
        );
    }
    out.push('\n');
    out
}
