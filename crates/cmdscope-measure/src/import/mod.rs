//! Importers: results written by cmdscope, hyperfine (JSON schema 1 and 2)
//! and `go test -bench` text, read into the format-neutral [`Dataset`].
//!
//! The format is detected from the content, never from the file name:
//! text whose first non-blank character is `{` or `[` is JSON (cmdscope when
//! the top level says `"tool": "cmdscope"`, hyperfine 2 when the results
//! carry per-run `measurements`, hyperfine 1 when they carry `times`);
//! anything else is read as `go test -bench` output.
//!
//! Every problem in the input becomes one [`ImportError`] line that names
//! the JSON path (`results[0].measurements[3].time_wall_clock.value`) or the
//! line number where it was found. Nothing here panics on bad input.
//!
//! This module owns the detection, the entry points and what every parser
//! shares (the error type, `SeriesSet`); `json` reads cmdscope and
//! hyperfine JSON, `gobench` reads `go test -bench` text, `input` reads
//! files safely and `dataset` is what they all produce. The parsers take
//! text: the only I/O is `read_dataset`'s read through `input`.

use std::path::Path;

pub mod dataset;
mod gobench;
pub mod input;
mod json;

use crate::error::Error;
use crate::import::dataset::{Dataset, Series};
use gobench::parse_go;
use json::{json_line, parse_json};

/// Why a results file could not be read. `Display` is a single line.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("empty input: no benchmark results")]
    Empty,
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("unrecognized JSON: {0}")]
    UnknownJson(String),
    /// A value at a JSON path is missing, of the wrong type or out of range;
    /// `line` is where that value is in the file, when it is there.
    #[error("{}{path}: {message}", .line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Field {
        path: String,
        message: String,
        line: Option<usize>,
    },
    #[error(
        "unrecognized format: not JSON, and no `go test -bench` result lines \
         (lines like `BenchmarkName-8  1000  1234 ns/op`)"
    )]
    UnknownFormat,
    #[error(
        "`go test` output without benchmark result lines \
         (was it run with -bench, e.g. `go test -bench . -count 10`?)"
    )]
    NoGoBenchmarks,
    /// A malformed line in `go test -bench` output.
    #[error("line {line}: {message}")]
    GoLine { line: usize, message: String },
}

/// Reads and parses one results file. Unreadable files give
/// [`Error::Read`]; unparsable ones [`Error::Parse`] (exit code 2) with the
/// one-line [`ImportError`] as message.
pub fn read_dataset(path: &Path) -> Result<Dataset, Error> {
    let bytes = crate::import::input::read_limited(path, crate::import::input::MAX_RESULTS_BYTES)?;
    let text = String::from_utf8(bytes).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })?;
    parse_dataset(&text, &path.display().to_string()).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Parses results text of any supported format; `source` becomes
/// [`Dataset::source`] (the column title in comparisons).
pub fn parse_dataset(text: &str, source: &str) -> Result<Dataset, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(ImportError::Empty);
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // The line, in a document of more than one: `line 1` adds nothing.
        let lines = text.trim_end().contains('\n');
        parse_json(text, source).map_err(|e| match e {
            ImportError::Field {
                path,
                message,
                line: None,
            } if lines => ImportError::Field {
                line: json_line(text, &path),
                path,
                message,
            },
            other => other,
        })
    } else {
        parse_go(text, source)
    }
}

/// Accumulates per-metric series in order of first appearance.
#[derive(Default)]
struct SeriesSet {
    series: Vec<Series>,
}

impl SeriesSet {
    fn push(&mut self, metric: &str, unit: &str, higher_is_better: bool, value: f64) {
        if let Some(s) = self.series.iter_mut().find(|s| s.metric == metric) {
            s.values.push(value);
        } else {
            self.series.push(Series {
                metric: metric.to_owned(),
                unit: unit.to_owned(),
                higher_is_better,
                exact: false,
                values: vec![value],
            });
        }
    }

    fn ensure(&mut self, metric: &str, unit: &str, higher_is_better: bool) {
        if !self.series.iter().any(|s| s.metric == metric) {
            self.series.push(Series {
                metric: metric.to_owned(),
                unit: unit.to_owned(),
                higher_is_better,
                exact: false,
                values: Vec::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests;
