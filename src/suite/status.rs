//! The status of a suite run: which partitions reported, which are missing
//! (and where and when each was last seen), and how many cells and runs the
//! store holds for it. Read by `cmdscope status` and `suite submit --wait`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

use serde::Serialize;

use super::merge;
use crate::error::{Result, SuiteError};
use crate::store::partitions::PartitionRow;
use crate::store::Store;

/// A partition that has not reported: never started, still running (or
/// killed), failed or interrupted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Missing {
    pub partition: i64,
    /// "never seen", "running", "failed" or "interrupted".
    pub status: String,
    pub host: Option<String>,
    pub fingerprint: Option<String>,
    pub started: Option<String>,
    pub last_seen: Option<String>,
    pub cells_done: Option<i64>,
    pub cells_planned: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Status {
    pub run: String,
    pub suite: Option<String>,
    pub complete: bool,
    /// How many partitions the run was split into.
    pub partitions: i64,
    /// The partitions that finished.
    pub reported: Vec<i64>,
    pub missing: Vec<Missing>,
    /// Cells the store holds for the run, and cells in the suite.
    pub cells: i64,
    pub suite_cells: i64,
    /// Measured runs over all those cells.
    pub runs: i64,
    pub sessions: usize,
    pub hosts: Vec<String>,
}

fn time(unix: f64) -> String {
    // A damaged value in the store must not panic the status.
    let at = Duration::try_from_secs_f64(unix.max(0.0))
        .ok()
        .and_then(|d| UNIX_EPOCH.checked_add(d))
        .unwrap_or(UNIX_EPOCH);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// The status from the partition rows and the merged cells' run counts.
pub fn status(run: &str, rows: &[PartitionRow], cells: &[i64], sessions: usize) -> Status {
    let partitions = rows.iter().map(|r| r.partitions).max().unwrap_or(0);
    let reported: Vec<i64> = rows
        .iter()
        .filter(|r| r.status == "finished" && r.partitions == partitions)
        .map(|r| r.index)
        .collect();
    let mut missing = Vec::new();
    for k in 1..=partitions {
        if reported.contains(&k) {
            continue;
        }
        let row = rows
            .iter()
            .find(|r| r.index == k && r.partitions == partitions);
        missing.push(match row {
            Some(r) => Missing {
                partition: k,
                status: r.status.clone(),
                host: Some(r.hostname.clone()),
                fingerprint: Some(r.fingerprint.clone()),
                started: Some(time(r.started_unix)),
                last_seen: Some(time(r.last_seen_unix)),
                cells_done: Some(r.done_cells),
                cells_planned: Some(r.planned_cells),
            },
            None => Missing {
                partition: k,
                status: "never seen".into(),
                host: None,
                fingerprint: None,
                started: None,
                last_seen: None,
                cells_done: None,
                cells_planned: None,
            },
        });
    }
    let hosts: BTreeSet<String> = rows.iter().map(|r| r.hostname.clone()).collect();
    Status {
        run: run.to_string(),
        suite: rows.first().map(|r| r.suite.clone()),
        complete: partitions > 0 && missing.is_empty(),
        partitions,
        reported,
        missing,
        cells: cells.iter().filter(|&&r| r > 0).count() as i64,
        suite_cells: rows.iter().map(|r| r.suite_cells).max().unwrap_or(0),
        runs: cells.iter().sum(),
        sessions,
        hosts: hosts.into_iter().collect(),
    }
}

/// Reads the status of a run from the store.
pub fn read(store: &mut Store, run: &str) -> Result<Status> {
    let rows = store.partitions(run)?;
    let sessions = merge::sessions(store, run)?;
    if rows.is_empty() && sessions.is_empty() {
        return Err(SuiteError::NoRun {
            run: run.into(),
            store: store.location().into(),
        }
        .into());
    }
    let runs: Vec<i64> = merge::merge(&sessions)
        .map(|m| m.cells.iter().map(|c| c.runs).collect())
        .unwrap_or_default();
    Ok(status(run, &rows, &runs, sessions.len()))
}

/// The status as one JSON document, ending with a line break.
pub fn json(s: &Status) -> String {
    serde_json::to_string_pretty(s).unwrap_or_else(|_| "{}".into()) + "\n"
}

pub fn text(s: &Status) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Run {}{}: {} of {} partitions reported{}",
        s.run,
        s.suite
            .as_ref()
            .map(|f| format!(" ({f})"))
            .unwrap_or_default(),
        s.reported.len(),
        s.partitions,
        if s.complete {
            ", complete"
        } else {
            ", INCOMPLETE"
        }
    );
    let _ = writeln!(
        out,
        "  cells: {} of {} measured, {} runs, {} sessions on {}",
        s.cells,
        s.suite_cells,
        s.runs,
        s.sessions,
        if s.hosts.is_empty() {
            "no host".to_string()
        } else {
            s.hosts.join(", ")
        }
    );
    for m in &s.missing {
        match (&m.host, &m.last_seen) {
            (Some(host), Some(seen)) => {
                let _ = writeln!(
                    out,
                    "  missing: partition {}/{}: {} on {host}, last seen {seen} ({} of {} cells done)",
                    m.partition,
                    s.partitions,
                    if m.status == crate::store::RUNNING {
                        "unfinished (running, or killed)"
                    } else {
                        m.status.as_str()
                    },
                    m.cells_done.unwrap_or(0),
                    m.cells_planned.unwrap_or(0),
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  missing: partition {}/{}: never seen",
                    m.partition, s.partitions
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: i64, status: &str) -> PartitionRow {
        PartitionRow {
            run_id: "r".into(),
            index,
            partitions: 3,
            suite: "s.toml".into(),
            status: status.into(),
            hostname: format!("node{index}"),
            fingerprint: "f".into(),
            pid: 1,
            started_unix: 1_700_000_000.0,
            last_seen_unix: 1_700_000_060.0,
            finished_unix: None,
            planned_cells: 4,
            suite_cells: 12,
            done_cells: 2,
        }
    }

    #[test]
    fn missing_partitions_say_where_and_when() {
        let rows = vec![row(1, "finished"), row(3, "running")];
        let s = status("r", &rows, &[5, 5, 0, 5], 2);
        assert!(!s.complete);
        assert_eq!(s.partitions, 3);
        assert_eq!(s.reported, vec![1]);
        assert_eq!(s.missing.len(), 2);
        assert_eq!(s.missing[0].partition, 2);
        assert_eq!(s.missing[0].status, "never seen");
        assert_eq!(s.missing[1].host.as_deref(), Some("node3"));
        assert_eq!(
            s.missing[1].last_seen.as_deref(),
            Some("2023-11-14T22:14:20Z")
        );
        assert_eq!((s.cells, s.runs, s.suite_cells), (3, 15, 12));
        let t = text(&s);
        assert!(t.contains("1 of 3 partitions reported, INCOMPLETE"), "{t}");
        assert!(t.contains("partition 2/3: never seen"), "{t}");
        assert!(
            t.contains("partition 3/3: unfinished (running, or killed) on node3, last seen 2023-11-14T22:14:20Z (2 of 4 cells done)"),
            "{t}"
        );
        let all: Vec<PartitionRow> = (1..=3).map(|i| row(i, "finished")).collect();
        assert!(status("r", &all, &[1], 3).complete);
    }
}
