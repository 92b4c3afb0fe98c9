//! `cmdscope import`: stores results files as sessions, one per file, all
//! of them in one transaction (every file's session, or none).
//!
//! Works on the format-neutral [`Dataset`]: series named after a cmdscope
//! metric (hyperfine's `time_wall_clock`, ...) become columns of the runs,
//! run i holding value i of every series; others (Go's `sec/op`, `B/op`,
//! custom units) are kept as they are in `extra_values`. Imported sessions
//! are recorded with this machine's fingerprint (results are normally
//! imported where they were measured) and `source` = `import:<format>`.
//! Exit codes, signals and time-outs are not in the Dataset: imported runs
//! have no exit code.

use std::path::Path;
use std::time::SystemTime;

use crate::cli::store::ImportArgs;
use crate::error::{exit, Result};
use crate::import::dataset::Dataset;
use crate::metrics::{Metric, Sample};
use crate::report::import::Imported;
use crate::store::record::open_required;
use crate::store::{
    parse_labels, with_parameters, ExtraSeries, Finish, Machine, NewCell, NewSession, Store,
};

/// The single call site of the importers (cmdscope/hyperfine JSON, Go text).
fn read_dataset(path: &Path) -> Result<Dataset> {
    crate::import::read_dataset(path)
}

pub fn run(args: &ImportArgs) -> Result<i32> {
    let labels = parse_labels(&args.labels)?;
    // Read every file first: a bad file imports nothing.
    let datasets = args
        .files
        .iter()
        .map(|f| read_dataset(f).map(|d| (f, d)))
        .collect::<Result<Vec<_>>>()?;
    let mut store = open_required(false, args.store.store.as_deref())?;
    let machine = Machine::current();
    // One transaction for the whole invocation: an import that fails or is
    // killed stores none of its files, so it can simply be run again.
    let imported = store.atomically(|store| -> Result<Vec<Imported>> {
        let mut imported = Vec::new();
        for (file, d) in &datasets {
            let (id, runs) = store_dataset(
                store,
                d,
                &labels,
                &machine,
                &format!("cmdscope import {}", file.display()),
            )?;
            imported.push(Imported {
                file: file.display().to_string(),
                format: d.format.clone(),
                session: id,
                benchmarks: d.benchmarks.len(),
                runs,
            });
        }
        Ok(imported)
    })?;
    let out = crate::report::import::render(store.location(), &imported);
    crate::output::print(&crate::output::escape_controls(&out));
    Ok(exit::OK)
}

/// Stores one dataset as a finished session; returns its id and the number
/// of runs. Run it inside [`Store::atomically`] to store all of it or nothing.
pub fn store_dataset(
    store: &mut Store,
    d: &Dataset,
    labels: &[(String, String)],
    machine: &Machine,
    command_line: &str,
) -> Result<(i64, usize)> {
    let id = store.begin_session(&NewSession {
        started: SystemTime::now(),
        source: format!("import:{}", d.format),
        command_line: command_line.to_string(),
        order: None,
        seed: None,
        shell: None,
        machine: machine.clone(),
        labels: labels.to_vec(),
        settings: None,
    })?;
    let cells: Vec<NewCell> = d
        .benchmarks
        .iter()
        .map(|b| NewCell {
            identity: with_parameters(&b.name, &b.parameters),
            name: b.name.clone(),
            command: b.name.clone(),
            parameters: b.parameters.clone(),
            variant: "{}".into(),
        })
        .collect();
    let ids = store.add_cells(id, &cells)?;
    let mut total = 0;
    for (b, &cell) in d.benchmarks.iter().zip(&ids) {
        let known: Vec<(Metric, &Vec<f64>)> = b
            .series
            .iter()
            .filter_map(|s| Metric::from_name(&s.metric).map(|m| (m, &s.values)))
            .collect();
        let n = known.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
        let samples: Vec<Sample> = (0..n)
            .map(|i| {
                let mut s = Sample::new(i as u64);
                for (m, v) in &known {
                    if let Some(&x) = v.get(i) {
                        s.set(*m, x);
                    }
                }
                s
            })
            .collect();
        store.add_runs(cell, 0, &samples)?;
        let mut runs = n;
        for s in b
            .series
            .iter()
            .filter(|s| Metric::from_name(&s.metric).is_none())
        {
            store.add_extra(
                cell,
                &ExtraSeries {
                    metric: s.metric.clone(),
                    unit: s.unit.clone(),
                    higher_is_better: s.higher_is_better,
                    values: s.values.clone(),
                },
            )?;
            runs = runs.max(s.values.len());
        }
        total += runs;
    }
    store.finish_session(
        id,
        &Finish {
            status: "finished".into(),
            stop_reason: Some("imported".into()),
            shell_overhead: None,
            preflight: None,
            outcome: None,
        },
    )?;
    Ok((id, total))
}
