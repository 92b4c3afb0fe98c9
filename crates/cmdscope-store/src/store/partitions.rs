//! The partitions of suite runs: each one registers its start, progress and
//! end, its host and machine fingerprint (table `suite_partitions`), so
//! `cmdscope status` can tell which partitions of a run reported and where
//! the missing ones were last seen. Their sessions carry the run id as the
//! label `cmdscope.run`.

use std::collections::HashMap;

use super::{unix, Machine, Result, Store, Value};

/// A partition's row.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionRow {
    pub run_id: String,
    pub index: i64,
    pub partitions: i64,
    /// The suite file as given on the command line.
    pub suite: String,
    /// "running" (or killed), "finished", "failed" or "interrupted".
    pub status: String,
    pub hostname: String,
    pub fingerprint: String,
    pub pid: i64,
    pub started_unix: f64,
    pub last_seen_unix: f64,
    pub finished_unix: Option<f64>,
    /// Cells of this partition, and of the whole suite.
    pub planned_cells: i64,
    pub suite_cells: i64,
    /// Cells measured so far.
    pub done_cells: i64,
}

/// What a partition says when it starts.
#[derive(Clone, Debug)]
pub struct PartitionStart<'a> {
    pub run_id: &'a str,
    pub index: u32,
    pub partitions: u32,
    pub suite: &'a str,
    pub machine: &'a Machine,
    pub planned_cells: usize,
    pub suite_cells: usize,
}

const COLUMNS: &str = "run_id, partition_index, partitions, suite, status, hostname, fingerprint, \
    pid, started_unix, last_seen_unix, finished_unix, planned_cells, suite_cells, done_cells";

impl Store {
    /// Registers a partition as running; a partition run again (a retried
    /// array task) replaces its earlier row.
    pub fn start_partition(&mut self, p: &PartitionStart) -> Result<()> {
        let now = unix(std::time::SystemTime::now());
        let params = vec![
            Value::Text(p.run_id.to_string()),
            Value::Int(p.index.into()),
            Value::Int(p.partitions.into()),
            Value::Text(p.suite.to_string()),
            Value::Text(super::RUNNING.into()),
            Value::Text(p.machine.hostname.clone()),
            Value::Text(p.machine.fingerprint()),
            Value::Int(std::process::id().into()),
            Value::Real(now),
            Value::Real(now),
            Value::Int(p.planned_cells as i64),
            Value::Int(p.suite_cells as i64),
        ];
        self.write(|db| {
            db.execute(
                "DELETE FROM suite_partitions WHERE run_id = $1 AND partition_index = $2",
                &params[..2],
            )?;
            db.execute(
                &format!(
                    "INSERT INTO suite_partitions ({COLUMNS}) VALUES \
                     ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, $11, $12, 0)"
                ),
                &params,
            )
        })
        .map(drop)
        .map_err(|e| self.err("cannot register the partition", e))
    }

    /// Progress: cells measured so far; also the "last seen" time.
    pub fn partition_progress(&mut self, run_id: &str, index: u32, done: usize) -> Result<()> {
        let params = [
            Value::Real(unix(std::time::SystemTime::now())),
            Value::Int(done as i64),
            Value::Text(run_id.to_string()),
            Value::Int(index.into()),
        ];
        self.write(|db| {
            db.execute(
                "UPDATE suite_partitions SET last_seen_unix = $1, done_cells = $2 \
                 WHERE run_id = $3 AND partition_index = $4",
                &params,
            )
        })
        .map(drop)
        .map_err(|e| self.err("cannot record the partition's progress", e))
    }

    /// The partition ended with this status.
    pub fn finish_partition(&mut self, run_id: &str, index: u32, status: &str) -> Result<()> {
        let now = unix(std::time::SystemTime::now());
        let params = [
            Value::Real(now),
            Value::Text(status.to_string()),
            Value::Text(run_id.to_string()),
            Value::Int(index.into()),
        ];
        self.write(|db| {
            db.execute(
                "UPDATE suite_partitions SET last_seen_unix = $1, finished_unix = $1, status = $2 \
                 WHERE run_id = $3 AND partition_index = $4",
                &params,
            )
        })
        .map(drop)
        .map_err(|e| self.err("cannot finish the partition", e))
    }

    /// The registered partitions of a run, by index.
    pub fn partitions(&mut self, run_id: &str) -> Result<Vec<PartitionRow>> {
        if !self.has_table("suite_partitions") {
            return Ok(Vec::new());
        }
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM suite_partitions WHERE run_id = $1 \
                     ORDER BY partition_index"
                ),
                &[Value::Text(run_id.to_string())],
            )
            .map_err(|e| self.err("cannot read the run's partitions", e))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let g = |i: usize| r.get(i).cloned().unwrap_or(Value::Null);
                PartitionRow {
                    run_id: g(0).string(),
                    index: g(1).int().unwrap_or(0),
                    partitions: g(2).int().unwrap_or(0),
                    suite: g(3).string(),
                    status: g(4).string(),
                    hostname: g(5).string(),
                    fingerprint: g(6).string(),
                    pid: g(7).int().unwrap_or(0),
                    started_unix: g(8).real().unwrap_or(0.0),
                    last_seen_unix: g(9).real().unwrap_or(0.0),
                    finished_unix: g(10).real(),
                    planned_cells: g(11).int().unwrap_or(0),
                    suite_cells: g(12).int().unwrap_or(0),
                    done_cells: g(13).int().unwrap_or(0),
                }
            })
            .collect())
    }

    /// For each identity, the runs and the median wall time of its latest
    /// measurement (for time estimates), reading only the cells needed.
    pub fn latest_by_identity(
        &mut self,
        identities: &[String],
    ) -> Result<HashMap<String, (usize, f64)>> {
        let mut latest: HashMap<String, i64> = HashMap::new();
        for chunk in identities.chunks(500) {
            let list: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let params: Vec<Value> = chunk.iter().map(|s| Value::Text(s.clone())).collect();
            let rows = self
                .db
                .query(
                    &format!(
                        "SELECT identity, MAX(id) FROM cells WHERE identity IN ({}) GROUP BY identity",
                        list.join(", ")
                    ),
                    &params,
                )
                .map_err(|e| self.err("cannot read cells", e))?;
            for r in rows {
                if let (Some(Value::Text(i)), Some(id)) = (r.first(), r.get(1).and_then(Value::int))
                {
                    latest.insert(i.clone(), id);
                }
            }
        }
        let ids: Vec<i64> = latest.values().copied().collect();
        let values = self.metric_values(&ids, crate::metrics::Metric::WallTime)?;
        Ok(latest
            .into_iter()
            .filter_map(|(identity, id)| {
                let v = values.get(&id)?;
                let median = crate::stats::median_finite(v)?;
                Some((identity, (v.len(), median)))
            })
            .collect())
    }
}
