//! How a stored session was run, read back: its stored settings, or for a
//! session stored before they were kept, its command line parsed again.

use crate::cli::run::RunArgs;
use crate::cli::{Cli, Command};
use crate::report::html::CellData;
use crate::run::schedule::Order;
use crate::store::StoredSession;

/// Whether cell `cell` of a stored session ran in concurrency mode: by its
/// stored settings, or for a session stored before they were kept (store
/// schema 5), by its command line read back (`--concurrency`).
pub fn ran_concurrently(session: &StoredSession, cell: usize) -> bool {
    match session.settings.as_ref() {
        Some(s) => (s.cells.get(cell)).is_some_and(|c| c.variant.concurrency.is_some()),
        None => run_args(&session.command_line).is_some_and(|a| a.concurrency.is_some()),
    }
}

/// The `run` arguments a session was recorded with, read back from its
/// command line; None for imports or a line that no longer parses.
pub(super) fn run_args(command_line: &str) -> Option<RunArgs> {
    let words = crate::run::plan::split_words(command_line.as_bytes()).ok()?;
    let args = words
        .into_iter()
        .map(|w| std::ffi::OsString::from(String::from_utf8_lossy(&w).into_owned()));
    match Cli::parse_ordered(args).ok()?.command {
        Command::Run(a) => Some(*a),
        _ => None,
    }
}

/// The alpha and precision (a fraction; None when `--runs` alone fixed the
/// count) a session's comparisons were made at, as `report` reads them: its
/// stored settings, or for a `run` session stored before they were kept,
/// its command line read back with today's defaults (then `true`).
pub fn levels(
    settings: Option<&crate::run::settings::Settings>,
    command_line: &str,
    source: &str,
) -> (f64, Option<f64>, bool) {
    match settings {
        Some(s) => {
            let d = Decided::stored(s);
            (d.alpha, d.precision, false)
        }
        None => {
            let (d, note) = Decided::inferred(command_line, source, &[]);
            (d.alpha, d.precision, note.is_some())
        }
    }
}

/// What the comparisons need of how a session was run.
pub(super) struct Decided {
    pub(super) alpha: f64,
    /// A fraction; None when `--runs` alone fixed the count.
    pub(super) precision: Option<f64>,
    /// The named reference's index, or None for the first cell.
    pub(super) reference: Option<usize>,
    /// Whether the runner stopped adaptively (its looks are replayed).
    pub(super) looks: bool,
    /// The looks were `--until-decided`'s.
    pub(super) until_decided: bool,
    pub(super) searched: bool,
}

impl Decided {
    pub(super) fn stored(s: &crate::run::settings::Settings) -> Decided {
        Decided {
            alpha: s.alpha,
            precision: s.precision,
            reference: Some(s.reference),
            looks: s.looks,
            until_decided: s.until_decided,
            searched: s.searched(),
        }
    }

    /// For a session stored without its settings: its command line read
    /// back as today's `run` parses it (so today's defaults), with the note
    /// that says so; the defaults when it does not parse.
    pub(super) fn inferred(
        command_line: &str,
        source: &str,
        cells: &[CellData],
    ) -> (Decided, Option<String>) {
        let Some(a) = run_args(command_line) else {
            let note = (source == "run").then(|| {
                "The session's command line could not be read back: comparisons use alpha 0.05, \
                 the first benchmark as reference and ±1 % as precision."
                    .to_string()
            });
            let decided = Decided {
                alpha: 0.05,
                precision: Some(crate::analysis::comparison::DEFAULT_PRECISION),
                reference: None,
                looks: false,
                until_decided: false,
                searched: false,
            };
            return (decided, note);
        };
        let searched = a.minimize.is_some() || a.maximize.is_some();
        // As `run` decides: a precision unless --runs alone fixed the count.
        let precision = match (a.precision, a.runs) {
            (Some(p), _) => Some(p / 100.0),
            (None, Some(_)) => None,
            (None, None) => Some(crate::analysis::comparison::DEFAULT_PRECISION),
        };
        let reference = a
            .reference
            .as_deref()
            .or(a.reference_name.as_deref())
            .and_then(|name| {
                cells
                    .iter()
                    .position(|c| c.name == name || c.command == name)
            });
        let decided = Decided {
            alpha: a.alpha,
            precision,
            reference,
            looks: a.order != Some(Order::Sequential)
                && source == "run"
                && !searched
                && precision.is_some(),
            until_decided: a.until_decided,
            searched,
        };
        let note = (source == "run").then(|| {
            "This session was stored before cmdscope kept a session's settings: its alpha, \
             precision, reference and adaptive stopping were read back from its command line \
             with today's defaults."
                .to_string()
        });
        (decided, note)
    }
}
