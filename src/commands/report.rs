//! `cmdscope report`: gathers a session, its comparisons and its
//! benchmarks' history from the store and writes the HTML report.

use std::collections::HashMap;

use super::{thin, time_values, MAX_VALUES};
use crate::analysis::LEVEL;
use crate::cli::ReportArgs;
use crate::comparison::compare_metric;
use crate::error::{exit, Result};
use crate::report::html::{self, CellData, ComparisonData, HistoryData, HistoryPoint, ReportData};
use crate::store::record::open_required;
use crate::store::{Filter, Store, StoredSession};

pub fn run(args: &ReportArgs) -> Result<i32> {
    let mut store = open_required(false, args.store.store.as_deref())?;
    let mut filter = super::filter(&args.sessions)?;
    filter.session = args.session;
    filter.command = args.command.clone();
    filter.limit = Some(1);
    let session = match &args.sessions.run {
        Some(run) => crate::suite::merge::merged(&mut store, run)?,
        None => store
            .sessions(&filter)?
            .into_iter()
            .next()
            .ok_or_else(|| super::nothing_found(&store, "matching session"))?,
    };
    crate::report::check_writable(&args.html)?;
    let mut data = gather(&mut store, session, args.history)?;
    if let Some(run) = &args.sessions.run {
        // Cells of different benchmarks (and partitions, and machines) were
        // not measured interleaved: comparing them with the first would mislead.
        data.comparisons.clear();
        data.notes.push(format!(
            "This report merges the sessions of suite run {run}: its cells come from \
             different benchmarks, partitions and possibly machines, so they are not \
             compared with each other here. Each benchmark's comparisons are in the \
             report of its own session (cmdscope history --label cmdscope.run={run})."
        ));
    }
    let text = html::render(&data);
    crate::report::write_atomic(&args.html, text.as_bytes())?;
    if args.html != std::path::Path::new("-") {
        let what = match &args.sessions.run {
            Some(run) => format!("run {run}"),
            None => format!("session #{}", data.session.id),
        };
        eprintln!(
            "cmdscope: report of {what} written to {}",
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

    // Comparisons with the first benchmark, paired by block when the
    // session ran interleaved and the run counts match.
    let mut comparisons = Vec::new();
    if let Some(base) = data_cells.first() {
        let mut raw = Vec::new();
        for c in data_cells.iter().skip(1) {
            let paired = session.order.as_deref() == Some("interleaved")
                && c.times.len() == base.times.len();
            let (b, x) = if paired {
                let n = c.times.len().min(base.times.len());
                let stride = n.div_ceil(MAX_VALUES).max(1);
                let pick = |v: &[f64]| v.iter().step_by(stride).copied().collect::<Vec<_>>();
                (pick(&base.times), pick(&c.times))
            } else {
                (thin(&base.times, MAX_VALUES), thin(&c.times, MAX_VALUES))
            };
            if b.len() < 2 || x.len() < 2 {
                continue;
            }
            if let Some(r) = compare_metric(&b, &x, paired, LEVEL) {
                raw.push((c.name.clone(), r));
            }
        }
        let p: Vec<f64> = raw.iter().map(|(_, r)| r.p_value).collect();
        let adjusted = if p.is_empty() {
            Vec::new()
        } else {
            crate::stats::holm(&p)
        };
        for ((name, r), adj) in raw.into_iter().zip(adjusted) {
            comparisons.push(ComparisonData {
                name,
                reference: base.name.clone(),
                ratio: r.ratio,
                ratio_ci: r.ratio_ci,
                p_adjusted: adj,
                significant: adj < 0.05,
                test: r.test.to_string(),
            });
        }
        if data_cells.iter().any(|c| c.times.len() > MAX_VALUES) {
            notes.push(format!(
                "Benchmarks with more than {MAX_VALUES} runs are compared on an evenly spaced \
                 subsample of {MAX_VALUES} runs."
            ));
        }
    }

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
