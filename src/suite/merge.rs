//! The partitions of a run, merged into one session: what `report`,
//! `check` and `history` show for `--run ID`.
//!
//! A cell measured more than once in the run (a partition retried after a
//! failure) counts once: its newest measurement wins.

use std::collections::HashSet;

use super::{BENCHMARK_LABEL, PARTITION_LABEL, RUN_LABEL};
use crate::error::{Result, SuiteError};
use crate::run::settings::Settings;
use crate::store::{Filter, Store, StoredSession, RUNNING};

/// The sessions of a run, newest first.
pub fn sessions(store: &mut Store, run_id: &str) -> Result<Vec<StoredSession>> {
    Ok(store.sessions(&Filter {
        labels: vec![(RUN_LABEL.to_string(), run_id.to_string())],
        ..Filter::default()
    })?)
}

/// The sessions of a run, oldest first (as `run --suite` ran them), or the
/// error that the store has none.
pub fn oldest_first(store: &mut Store, run_id: &str) -> Result<Vec<StoredSession>> {
    let mut all = sessions(store, run_id)?;
    if all.is_empty() {
        return Err(SuiteError::NoSessionOfRun {
            run: run_id.into(),
            store: store.location().into(),
        }
        .into());
    }
    all.reverse();
    Ok(all)
}

/// The line `run --suite` printed before session `k` of a run's sessions
/// (oldest first): its benchmark, its cells, and its place among its
/// partition's sessions. None for a session of no suite benchmark.
pub fn heading(sessions: &[StoredSession], k: usize) -> Option<String> {
    let s = sessions.get(k)?;
    let name = s.label(BENCHMARK_LABEL)?;
    let partition = s.label(PARTITION_LABEL).unwrap_or_default();
    let same: Vec<&StoredSession> = (sessions.iter())
        .filter(|o| o.label(PARTITION_LABEL).unwrap_or_default() == partition)
        .collect();
    let index = same.iter().position(|o| o.id == s.id)?;
    Some(crate::report::terminal::suite_benchmark(
        name,
        s.cells.len(),
        index,
        same.len(),
        partition,
    ))
}

/// One session holding every cell of the run (newest measurement of each),
/// or None when the store has no session of this run.
pub fn merge(sessions: &[StoredSession]) -> Option<StoredSession> {
    let newest = sessions.first()?;
    let oldest = sessions.last()?;
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut cells = Vec::new();
    // Oldest first, so cells keep the order partitions ran them in.
    let mut picked: Vec<(usize, &crate::store::StoredCell)> = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let bench = s.label(BENCHMARK_LABEL).unwrap_or_default().to_string();
        for c in &s.cells {
            if seen.insert((bench.clone(), c.identity.clone())) {
                picked.push((i, c));
            }
        }
    }
    picked.sort_by_key(|(i, c)| (std::cmp::Reverse(*i), c.position));
    for (position, (_, c)) in picked.into_iter().enumerate() {
        let mut c = c.clone();
        c.position = position as i64;
        cells.push(c);
    }
    // Labels every session shares, except the per-partition ones.
    let labels = newest
        .labels
        .iter()
        .filter(|(k, _)| k != PARTITION_LABEL && k != BENCHMARK_LABEL)
        .filter(|l| sessions.iter().all(|s| s.labels.contains(l)))
        .cloned()
        .collect();
    let hosts: HashSet<&str> = sessions
        .iter()
        .map(|s| s.machine.hostname.as_str())
        .collect();
    let unfinished = sessions.iter().any(|s| s.status == RUNNING);
    Some(StoredSession {
        id: oldest.id,
        started: oldest.started.clone(),
        started_unix: oldest.started_unix,
        finished_unix: sessions
            .iter()
            .filter_map(|s| s.finished_unix)
            .reduce(f64::max),
        status: if unfinished {
            RUNNING.to_string()
        } else {
            newest.status.clone()
        },
        stop_reason: None,
        source: oldest.source.clone(),
        tool_version: newest.tool_version.clone(),
        command_line: format!(
            "run {} ({} sessions on {} host{})",
            newest.label(RUN_LABEL).unwrap_or_default(),
            sessions.len(),
            hosts.len(),
            if hosts.len() == 1 { "" } else { "s" }
        ),
        // Cells from different sessions were not interleaved with each other.
        order: None,
        shell_overhead: None,
        fingerprint: oldest.fingerprint.clone(),
        machine: oldest.machine.clone(),
        labels,
        cells,
        // Each partition checked its own machine: no one list stands for all.
        preflight: None,
        search: None,
        race: None,
        race_error: None,
        // Each benchmark ran with its own settings: no one value stands for all.
        settings: None,
        settings_error: None,
        seed: None,
        outcome: None,
    })
}

/// The suite's name of the benchmark each cell of the run's sessions was
/// measured in, by stored cell id: from the session's stored settings, or
/// for a session stored before they were kept, its benchmark label.
pub fn benchmarks(sessions: &[StoredSession]) -> std::collections::HashMap<i64, String> {
    let mut names = std::collections::HashMap::new();
    for s in sessions {
        let name = s
            .settings
            .as_ref()
            .and_then(|settings| settings.benchmark.as_deref())
            .or(s.label(BENCHMARK_LABEL));
        if let Some(name) = name {
            names.extend(s.cells.iter().map(|c| (c.id, name.to_string())));
        }
    }
    names
}

/// What a merged report says of the settings of a run's sessions.
#[derive(Clone, Debug, Default)]
pub struct RunSettings {
    /// The settings the sessions were stored with, each set once, oldest
    /// session first.
    pub settings: Vec<Settings>,
    /// Which sessions were stored before cmdscope kept their settings, and
    /// so have none to show (their command lines are not read back here).
    pub note: Option<String>,
}

/// The stored settings of a run's sessions (`sessions` newest first, as
/// [`sessions`] returns them): each benchmark ran with its own, so the
/// merged session has no one set to stand for all.
pub fn settings(sessions: &[StoredSession]) -> RunSettings {
    let mut out = RunSettings::default();
    let mut without = Vec::new();
    for s in sessions.iter().rev() {
        match &s.settings {
            Some(settings) if !out.settings.contains(settings) => {
                out.settings.push(settings.clone())
            }
            Some(_) => {}
            None => without.push(format!("#{}", s.id)),
        }
    }
    if !without.is_empty() {
        out.note = Some(format!(
            "Session{} {} of this run {} stored before cmdscope kept a session's settings: \
             {} not shown here.",
            if without.len() == 1 { "" } else { "s" },
            without.join(", "),
            if without.len() == 1 { "was" } else { "were" },
            if without.len() == 1 {
                "its settings are"
            } else {
                "their settings are"
            },
        ));
    }
    out
}

/// The merged session of a run, or a usage error naming the store.
pub fn merged(store: &mut Store, run_id: &str) -> Result<StoredSession> {
    let sessions = sessions(store, run_id)?;
    merge(&sessions).ok_or_else(|| {
        SuiteError::NoSessionOfRun {
            run: run_id.into(),
            store: store.location().into(),
        }
        .into()
    })
}

/// The baseline of `check --run`: the latest other run whose sessions
/// carry the label KEY=VALUE, merged; else the latest session with it.
pub fn baseline(store: &mut Store, key: &str, value: &str, run_id: &str) -> Result<StoredSession> {
    let labelled = store.sessions(&Filter {
        labels: vec![(key.to_string(), value.to_string())],
        ..Filter::default()
    })?;
    let other = labelled.iter().find(|s| s.label(RUN_LABEL) != Some(run_id));
    match other {
        Some(s) => match s.label(RUN_LABEL) {
            Some(run) => merged(store, run),
            None => Ok(s.clone()),
        },
        None => Err(SuiteError::NoBaseline {
            key: key.into(),
            value: value.into(),
            run: run_id.into(),
            store: store.location().into(),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Machine, StoredCell};

    fn session(id: i64, bench: &str, cells: &[(&str, i64)], status: &str) -> StoredSession {
        StoredSession {
            id,
            started_unix: id as f64,
            finished_unix: Some(id as f64 + 1.0),
            status: status.into(),
            source: "run".into(),
            tool_version: "0".into(),
            order: Some("interleaved".into()),
            fingerprint: "f".into(),
            machine: Machine {
                hostname: format!("h{id}"),
                ..Machine::default()
            },
            labels: vec![
                (BENCHMARK_LABEL.into(), bench.into()),
                (PARTITION_LABEL.into(), format!("{id}/3")),
                (RUN_LABEL.into(), "r".into()),
                ("team".into(), "io".into()),
            ],
            cells: cells
                .iter()
                .enumerate()
                .map(|(i, (identity, runs))| StoredCell {
                    id: id * 100 + i as i64,
                    position: i as i64,
                    identity: identity.to_string(),
                    name: identity.to_string(),
                    command: identity.to_string(),
                    parameters: Vec::new(),
                    variant: String::new(),
                    runs: *runs,
                })
                .collect(),
            ..StoredSession::default()
        }
    }

    #[test]
    fn merges_partitions_and_keeps_the_newest_of_a_retried_cell() {
        // Newest first, as the store returns them: session 3 retried 'a'.
        let runs = vec![
            session(3, "x", &[("a", 9)], "finished"),
            session(2, "y", &[("a", 5), ("b", 5)], "finished"),
            session(1, "x", &[("a", 4), ("c", 4)], "finished"),
        ];
        let m = merge(&runs).unwrap();
        let cells: Vec<(&str, i64, i64)> = m
            .cells
            .iter()
            .map(|c| (c.identity.as_str(), c.runs, c.id))
            .collect();
        // x/a from session 3 (not 1), x/c from 1, y/a and y/b from 2.
        assert_eq!(
            cells,
            vec![("c", 4, 101), ("a", 5, 200), ("b", 5, 201), ("a", 9, 300)]
        );
        assert_eq!(m.id, 1);
        assert_eq!(m.order, None);
        assert_eq!(
            m.labels,
            vec![
                (RUN_LABEL.to_string(), "r".to_string()),
                ("team".into(), "io".into())
            ]
        );
        assert!(m.command_line.contains("3 sessions on 3 hosts"));
        assert_eq!(m.status, "finished");
        let mut with_killed = runs.clone();
        with_killed[1].status = RUNNING.into();
        assert_eq!(merge(&with_killed).unwrap().status, RUNNING);
        assert!(merge(&[]).is_none());
    }
}
