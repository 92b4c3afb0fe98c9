//! The HTML report's model gathered from the store: a stored session
//! loaded as `run` held it (`store::replay`), its answers made by
//! `analysis::stored` as `run` made them, its benchmarks' history, and the
//! notes that say what the report could not show as `run` did.

use super::{CellData, ConcurrencyData, ReportData};
use crate::analysis::comparison::StoredRuns;
use crate::analysis::stored::{self, HowRun, ReadBack, StoredNote};
use crate::error::Result;
use crate::store::history::time_values;
use crate::store::{Filter, Store, StoredSession};

/// Everything the report shows about `session`, run as `how` says, with
/// the history of its benchmarks over the last `history` sessions on the
/// same machine; its cells compared with each other when `compare` says so.
pub fn gather(
    store: &mut Store,
    session: StoredSession,
    how: &HowRun,
    history: usize,
    compare: bool,
) -> Result<ReportData> {
    let mut notes = Vec::new();
    let replayed = crate::store::replay::session(store, &session)?;
    let cells: Vec<_> = session.cells.iter().collect();
    let mut times = time_values(store, &cells)?;
    let mut data_cells = Vec::new();
    for (c, r) in session.cells.iter().zip(&replayed.results) {
        let times = times.remove(&c.id).unwrap_or_default();
        let monitor: Vec<(String, Vec<f64>)> = store
            .extra_series(c.id)?
            .into_iter()
            .filter(|s| s.metric.starts_with("monitor_"))
            .map(|s| (s.metric, s.values))
            .collect();
        data_cells.push(CellData {
            // The name the session ran under (its settings', when kept).
            name: r.cell.name.clone(),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            figures: crate::analysis::StoredCellFigures::of(&times, &r.samples, &monitor),
            samples: r.samples.clone(),
            times,
            monitor,
        });
    }
    if session.status == crate::store::RUNNING {
        notes.push(
            "This session did not finish (it is still running, or was killed): \
             only the runs completed so far are shown."
                .to_string(),
        );
    }

    // A search's best, as it stored it, among the session's cells.
    let search_best = session.search.as_ref().and_then(|s| {
        data_cells.iter().position(|c| {
            c.parameters.len() == s.best.len() && s.best.iter().all(|b| c.parameters.contains(b))
        })
    });
    let concurrency = stored::concurrency(replayed, how);
    let concurrent = (0..session.cells.len()).any(|i| how.ran_concurrently(i));
    if concurrent && concurrency.is_none() {
        notes.push(
            "This session ran in concurrency mode before cmdscope stored its batches (store \
             schema 6): its throughput cannot be computed again, only its instances' runs are \
             shown."
                .to_string(),
        );
    }
    let runs = stored_runs(&data_cells);
    let (comparisons, compare_notes) = if compare {
        stored::compare(
            how,
            session.order.as_deref(),
            &runs,
            search_best,
            // In concurrency mode the looks were taken over batches.
            concurrency.as_ref().map(|(s, _)| s.final_alpha),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    notes.extend(compare_notes.iter().map(word));

    let history_data = history_of(store, &session, history)?;
    let concurrency = concurrency.map(|(s, analysis)| ConcurrencyData {
        session: std::rc::Rc::new(s),
        analysis,
    });
    let as_good = stored::as_good(
        how,
        session.order.as_deref(),
        session.search.as_ref(),
        &runs,
        &comparisons,
    );
    Ok(ReportData {
        concurrency,
        as_good,
        store: store.location().to_string(),
        session,
        cells: data_cells,
        comparisons,
        history: history_data,
        notes,
        suite_settings: Vec::new(),
    })
}

/// The runs the comparisons read, by cell.
pub fn stored_runs(cells: &[CellData]) -> Vec<StoredRuns<'_>> {
    cells
        .iter()
        .map(|c| StoredRuns {
            name: &c.name,
            samples: &c.samples,
            times: &c.times,
        })
        .collect()
}

/// The same benchmarks in the latest `history` sessions on this machine.
fn history_of(
    store: &mut Store,
    session: &StoredSession,
    history: usize,
) -> Result<Vec<crate::analysis::HistoryData>> {
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
    Ok(crate::analysis::stored_history(
        &recent,
        &identities,
        &hist_times,
    ))
}

/// A suite run's merged report: each cell under the name of the suite's
/// benchmark it was measured in (the same command may be a cell of
/// several), and no comparison between them, said in a note.
pub fn merged_suite(
    data: &mut ReportData,
    run: &str,
    benchmarks: &std::collections::HashMap<i64, String>,
) {
    for (c, stored) in data.cells.iter_mut().zip(&data.session.cells) {
        if let Some(b) = benchmarks.get(&stored.id) {
            c.name = format!("{b}: {}", c.name);
        }
    }
    // Cells of different benchmarks (and partitions, and machines) were
    // not measured interleaved: comparing them with the first would
    // mislead, so none is made.
    data.notes.push(format!(
        "This report merges the sessions of suite run {run}: its cells come from \
         different benchmarks, partitions and possibly machines, so they are not \
         compared with each other here. Each benchmark's comparisons are in the \
         report of its own session (cmdscope history --label cmdscope.run={run})."
    ));
}

/// A note of the stored answers, in the report's words.
pub fn word(note: &StoredNote) -> String {
    match note {
        StoredNote::ReadBack(ReadBack::Defaults) => {
            "The session's command line could not be read back: comparisons use alpha 0.05, \
             the first benchmark as reference and ±1 % as precision."
                .to_string()
        }
        StoredNote::ReadBack(ReadBack::CommandLine) => {
            "This session was stored before cmdscope kept a session's settings: its alpha, \
             precision, reference and adaptive stopping were read back from its command line \
             with today's defaults."
                .to_string()
        }
        StoredNote::Searched => {
            "A search session: each value it tried is compared with the search's best, \
             unpaired (its runs were measured in rounds of different values, not in common \
             blocks); values it did not try are left out."
                .to_string()
        }
        StoredNote::Subsampled(max) => format!(
            "Benchmarks with more than {max} runs are compared on an evenly spaced \
             subsample of {max} runs."
        ),
    }
}
