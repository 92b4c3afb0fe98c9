//! `cmdscope report`: gathers a session, its comparisons and its
//! benchmarks' history from the store and writes the HTML report.

use std::collections::HashMap;

use super::{thin, time_values, MAX_VALUES};
use crate::analysis::comparison::{compare_values, Comparison, Design, Settings};
use crate::analysis::sequential::{Sequential, LOOKS};
use crate::analysis::LEVEL;
use crate::cli::ReportArgs;
use crate::cli::{Cli, Command, RunArgs};
use crate::error::{exit, Result};
use crate::metrics::{block_pairs, Metric};
use crate::report::html::{self, CellData, HistoryData, HistoryPoint, ReportData};
use crate::schedule::Order;
use crate::store::record::open_required;
use crate::store::{Filter, Store, StoredSession};
use clap::Parser;

pub fn run(args: &ReportArgs) -> Result<i32> {
    let mut store = open_required(false, args.store.store.as_deref())?;
    let mut filter = super::filter(&args.sessions)?;
    filter.session = args.session;
    filter.command = args.command.clone();
    filter.limit = Some(1);
    let session = store
        .sessions(&filter)?
        .into_iter()
        .next()
        .ok_or_else(|| super::nothing_found(&store, "matching session"))?;
    crate::report::check_writable(&args.html)?;
    let data = gather(&mut store, session, args.history)?;
    let text = html::render(&data);
    crate::report::write_atomic(&args.html, text.as_bytes())?;
    if args.html != std::path::Path::new("-") {
        eprintln!(
            "cmdscope: report of session #{} written to {}",
            data.session.id,
            args.html.display()
        );
    }
    Ok(exit::OK)
}

/// Everything the report shows about `session`, with the history of its
/// benchmarks over the last `history` sessions on the same machine.
pub fn gather(store: &mut Store, session: StoredSession, history: usize) -> Result<ReportData> {
    let mut notes = Vec::new();
    let cells: Vec<_> = session.cells.iter().collect();
    let mut times = time_values(store, &cells)?;
    let mut data_cells = Vec::new();
    for c in &session.cells {
        data_cells.push(CellData {
            name: c.name.clone(),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            samples: store.runs(c.id)?,
            times: times.remove(&c.id).unwrap_or_default(),
        });
    }
    if session.status == crate::store::RUNNING {
        notes.push(
            "This session did not finish (it is still running, or was killed): \
             only the runs completed so far are shown."
                .to_string(),
        );
    }

    let (comparisons, compare_notes) = compare(
        &session.command_line,
        &session.source,
        session.order.as_deref(),
        &data_cells,
    );
    notes.extend(compare_notes);

    // History: the same benchmarks in the latest sessions on this machine.
    let past = store.sessions(&Filter {
        machine: Some(session.fingerprint.clone()),
        ..Filter::default()
    })?;
    let identities: Vec<&str> = session.cells.iter().map(|c| c.identity.as_str()).collect();
    let mut recent: Vec<&StoredSession> = past
        .iter()
        .filter(|s| s.started_unix <= session.started_unix || s.id == session.id)
        .filter(|s| {
            s.cells
                .iter()
                .any(|c| identities.contains(&c.identity.as_str()))
        })
        .take(history.max(1))
        .collect();
    recent.reverse();
    let hist_cells: Vec<_> = recent
        .iter()
        .flat_map(|s| s.cells.iter())
        .filter(|c| identities.contains(&c.identity.as_str()))
        .collect();
    let hist_times = time_values(store, &hist_cells)?;
    let mut by_identity: HashMap<&str, Vec<HistoryPoint>> = HashMap::new();
    for s in &recent {
        for c in &s.cells {
            if !identities.contains(&c.identity.as_str()) {
                continue;
            }
            let Some(v) = hist_times.get(&c.id) else {
                continue;
            };
            let Some(m) = super::median(v) else { continue };
            let points = by_identity.entry(c.identity.as_str()).or_default();
            if points.iter().any(|p| p.session == s.id) {
                continue;
            }
            let ci = crate::stats::median_ci(v, LEVEL)
                .ok()
                .map(|e| [e.low, e.high]);
            points.push(HistoryPoint {
                session: s.id,
                started_unix: s.started_unix,
                median: m,
                ci,
            });
        }
    }
    let mut history_data = Vec::new();
    for id in &identities {
        if history_data.iter().any(|h: &HistoryData| h.identity == *id) {
            continue;
        }
        history_data.push(HistoryData {
            identity: id.to_string(),
            points: by_identity.remove(id).unwrap_or_default(),
        });
    }
    Ok(ReportData {
        store: store.location().to_string(),
        session,
        cells: data_cells,
        comparisons,
        history: history_data,
        notes,
    })
}

/// The `run` arguments a session was recorded with, read back from its
/// command line; None for imports or a line that no longer parses.
fn run_args(command_line: &str) -> Option<RunArgs> {
    let words = crate::plan::split_words(command_line.as_bytes()).ok()?;
    let args = words
        .into_iter()
        .map(|w| std::ffi::OsString::from(String::from_utf8_lossy(&w).into_owned()));
    match Cli::try_parse_from(args).ok()?.command {
        Command::Run(a) => Some(*a),
        _ => None,
    }
}

/// The session's wall-time comparisons, as `run` made them: the same
/// reference, family-wise alpha and precision (read back from its command
/// line), interleaved runs paired by block (a block where either side timed
/// out is dropped for that pair), and, for a session with adaptive
/// stopping, the level its final analysis had left after the looks (the
/// looks are replayed on the stored runs).
pub fn compare(
    command_line: &str,
    source: &str,
    order: Option<&str>,
    cells: &[CellData],
) -> (Vec<Comparison>, Vec<String>) {
    let mut notes = Vec::new();
    if cells.len() < 2 {
        return (Vec::new(), notes);
    }
    let args = run_args(command_line);
    if args.is_none() && source == "run" {
        notes.push(
            "The session's command line could not be read back: comparisons use alpha 0.05, \
             the first benchmark as reference and ±1 % as precision."
                .to_string(),
        );
    }
    let alpha = args.as_ref().map_or(0.05, |a| a.alpha);
    let interleaved = order == Some("interleaved");
    // As `run` decides: a precision unless --runs alone fixed the count.
    let precision = match args.as_ref().map(|a| (a.precision, a.runs)) {
        Some((Some(p), _)) => Some(p / 100.0),
        Some((None, Some(_))) => None,
        _ => Some(crate::app::DEFAULT_PRECISION),
    };
    let reference = args
        .as_ref()
        .and_then(|a| a.reference.as_deref())
        .and_then(|name| {
            cells
                .iter()
                .position(|c| c.name == name || c.command == name)
        })
        .unwrap_or(0);

    let mut final_alpha = alpha;
    let adaptive = args
        .as_ref()
        .is_some_and(|a| a.order == Order::Interleaved && source == "run");
    if let (true, true, Some(p)) = (adaptive, interleaved, precision) {
        let samples: Vec<&[crate::metrics::Sample]> =
            cells.iter().map(|c| c.samples.as_slice()).collect();
        let blocks = samples.iter().map(|s| s.len()).min().unwrap_or(0);
        let mut seq = Sequential::new(alpha, p);
        for &b in LOOKS.iter().take_while(|&&b| b <= blocks) {
            if !seq.is_look(b) {
                break;
            }
            let prefix: Vec<&[crate::metrics::Sample]> = samples.iter().map(|s| &s[..b]).collect();
            let walls = crate::metrics::complete_blocks(&prefix, Metric::WallTime);
            if seq.look(&walls, reference, true) {
                break;
            }
        }
        final_alpha = seq.final_level();
    }

    let settings = Settings {
        alpha: final_alpha,
        family: cells.len() - 1,
        precision: precision.unwrap_or(crate::app::DEFAULT_PRECISION),
        floor: None,
        cross_session: false,
    };
    let base = &cells[reference];
    let mut out = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        if i == reference {
            continue;
        }
        let blocks = block_pairs(&base.samples, &c.samples, Metric::WallTime);
        let paired = interleaved && !blocks.0.is_empty();
        let (b, x, design) = if paired {
            (
                thin(&blocks.0, MAX_VALUES),
                thin(&blocks.1, MAX_VALUES),
                Design::Paired,
            )
        } else {
            (
                thin(&base.times, MAX_VALUES),
                thin(&c.times, MAX_VALUES),
                Design::Unpaired,
            )
        };
        out.push(compare_values(&b, &x, design, &settings).named(
            Metric::WallTime.name(),
            &base.name,
            &c.name,
        ));
    }
    if cells.iter().any(|c| c.times.len() > MAX_VALUES) {
        notes.push(format!(
            "Benchmarks with more than {MAX_VALUES} runs are compared on an evenly spaced \
             subsample of {MAX_VALUES} runs."
        ));
    }
    (out, notes)
}
