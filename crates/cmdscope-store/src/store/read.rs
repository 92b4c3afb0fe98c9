//! Reading a store back: sessions (with or without their cells), cells in
//! ranges of ids, runs, one metric's values for many cells, run outcomes,
//! values without a column and concurrency mode's batches. A store of an
//! older schema is read as it is (see [`Store::open_read_only`]).

use std::collections::HashMap;

use super::machine::Machine;
use super::model::{
    CellRow, ExtraSeries, Filter, StoredCell, StoredRace, StoredSearch, StoredSession,
};
use super::schema::{self, Dialect};
use super::{Result, Store, Value};
use crate::metrics::{Metric, Sample};
use crate::run::session::{BatchRecord, Span};
use crate::run::settings::Settings;

/// The columns of `sessions` readers read, in the order `sessions_inner`
/// takes them.
const SESSION_COLUMNS: &[&str] = &[
    "id",
    "started",
    "started_unix",
    "finished_unix",
    "status",
    "stop_reason",
    "source",
    "tool_version",
    "command_line",
    "run_order",
    "shell_overhead",
    "fingerprint",
    "hostname",
    "cpu_model",
    "cores",
    "memory_bytes",
    "kernel",
    "governor",
    "load_1m",
    "load_5m",
    "load_15m",
    "preflight",
    "search",
    "settings",
    "seed",
    "outcome",
    "race",
];

fn parse_params(text: &str) -> Vec<(String, String)> {
    serde_json::from_str(text).unwrap_or_default()
}

impl Store {
    /// A cell's batches, by block, as `run` made them (empty for a cell
    /// not run in concurrency mode). A batch's `first_sample` indexes the
    /// cell's runs as [`Store::runs`] returns them. A host view that cannot
    /// be read is left empty, not refused.
    pub fn batches(&mut self, cell: i64) -> Result<Vec<BatchRecord>> {
        if !self.has_table("batches") || !self.has_table("batch_runs") {
            return Ok(Vec::new());
        }
        let rows = self
            .db
            .query(
                "SELECT block_index, concurrency, first_seq, busy_from, busy_to, elapsed, host \
                 FROM batches WHERE cell_id = $1 ORDER BY block_index",
                &[Value::Int(cell)],
            )
            .map_err(|e| self.err("cannot read batches", e))?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let spans = self
            .db
            .query(
                "SELECT seq, slot, started, ended FROM batch_runs WHERE cell_id = $1 ORDER BY seq",
                &[Value::Int(cell)],
            )
            .map_err(|e| self.err("cannot read batches", e))?;
        let spans: Vec<(i64, Span)> = spans
            .into_iter()
            .map(|r| {
                let g = |i: usize| r.get(i).cloned().unwrap_or(Value::Null);
                (
                    g(0).int().unwrap_or(-1),
                    Span {
                        slot: g(1).int().unwrap_or(0).max(0) as usize,
                        start: g(2).real().unwrap_or(f64::NAN),
                        end: g(3).real().unwrap_or(f64::NAN),
                    },
                )
            })
            .collect();
        let mut batches: Vec<BatchRecord> = rows
            .into_iter()
            .map(|r| {
                let g = |i: usize| r.get(i).cloned().unwrap_or(Value::Null);
                let count = |i: usize| g(i).int().unwrap_or(0).max(0) as usize;
                BatchRecord {
                    block: count(0),
                    concurrency: count(1),
                    first_sample: count(2),
                    spans: Vec::new(),
                    busy: (g(3).real().unwrap_or(0.0), g(4).real().unwrap_or(0.0)),
                    elapsed: g(5).real().unwrap_or(0.0),
                    host: g(6)
                        .text()
                        .and_then(|t| serde_json::from_str(t).ok())
                        .unwrap_or_default(),
                }
            })
            .collect();
        // A batch's runs are the sequence numbers from its first up to the
        // next batch's first.
        let mut firsts: Vec<usize> = batches.iter().map(|b| b.first_sample).collect();
        firsts.sort_unstable();
        for b in &mut batches {
            let next = firsts
                .iter()
                .copied()
                .find(|&f| f > b.first_sample)
                .unwrap_or(usize::MAX);
            b.spans = spans
                .iter()
                .filter(|(seq, _)| *seq >= b.first_sample as i64 && (*seq as u64) < next as u64)
                .map(|(_, s)| *s)
                .collect();
        }
        Ok(batches)
    }

    /// Sessions matching the filter, newest first, with labels and cells.
    pub fn sessions(&mut self, filter: &Filter) -> Result<Vec<StoredSession>> {
        self.sessions_inner(filter, true)
            .map_err(|e| self.err("cannot read sessions", e))
    }

    /// [`Store::sessions`] without their cells (`cells` left empty), and so
    /// without `filter.command`: what histories read before they read one
    /// benchmark's cells at a time, in memory that does not grow with the
    /// number of cells.
    pub fn session_heads(&mut self, filter: &Filter) -> Result<Vec<StoredSession>> {
        self.sessions_inner(filter, false)
            .map_err(|e| self.err("cannot read sessions", e))
    }

    /// The cells run in concurrency mode (with stored batches), by id:
    /// the cells throughput and latency histories are read from.
    pub fn cells_with_batches(&mut self) -> Result<Vec<i64>> {
        if !self.has_table("batches") {
            return Ok(Vec::new());
        }
        let rows = self
            .db
            .query("SELECT DISTINCT cell_id FROM batches ORDER BY cell_id", &[])
            .map_err(|e| self.err("cannot read batches", e))?;
        Ok(rows
            .iter()
            .filter_map(|r| r.first().and_then(Value::int))
            .collect())
    }

    /// The smallest and largest cell id, if there is a cell.
    pub fn cell_ids(&mut self) -> Result<Option<(i64, i64)>> {
        let rows = self
            .db
            .query("SELECT MIN(id), MAX(id) FROM cells", &[])
            .map_err(|e| self.err("cannot read cells", e))?;
        let row = rows.first();
        let at = |i: usize| row.and_then(|r| r.get(i)).and_then(Value::int);
        Ok(at(0).zip(at(1)))
    }

    /// The cells with an id in `first..=last`, by id. Histories read the cells in such
    /// ranges, so that their memory does not grow with the store.
    pub fn cells_in_range(&mut self, first: i64, last: i64) -> Result<Vec<CellRow>> {
        let rows = self
            .db
            .query(
                "SELECT id, session_id, identity, name, command FROM cells \
                 WHERE id >= $1 AND id <= $2 ORDER BY id",
                &[Value::Int(first), Value::Int(last)],
            )
            .map_err(|e| self.err("cannot read cells", e))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                // Moved out of the row, not copied: a million cells are
                // read this way.
                let mut r = r.into_iter();
                let mut int = || r.next().and_then(|v| v.int()).unwrap_or(0);
                let (id, session) = (int(), int());
                let mut text = || match r.next() {
                    Some(Value::Text(t)) => t,
                    Some(other) => other.string(),
                    None => String::new(),
                };
                CellRow {
                    id,
                    session,
                    identity: text(),
                    name: text(),
                    command: text(),
                }
            })
            .collect())
    }

    fn sessions_inner(&mut self, filter: &Filter, with_cells: bool) -> Result<Vec<StoredSession>> {
        let columns: Vec<String> = SESSION_COLUMNS
            .iter()
            .map(|c| self.column("sessions", c))
            .collect();
        let mut sql = format!("SELECT {} FROM sessions s WHERE 1 = 1", columns.join(", "));
        let mut params = Vec::new();
        if let Some(id) = filter.session {
            params.push(Value::Int(id));
            sql.push_str(&format!(" AND s.id = ${}", params.len()));
        }
        for (k, v) in &filter.labels {
            params.push(Value::Text(k.clone()));
            params.push(Value::Text(v.clone()));
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM labels l WHERE l.session_id = s.id AND l.key = ${} AND l.value = ${})",
                params.len() - 1,
                params.len()
            ));
        }
        sql.push_str(" ORDER BY s.started_unix DESC, s.id DESC");
        let rows = self.db.query(&sql, &params)?;
        let mut sessions: Vec<StoredSession> = rows
            .into_iter()
            .map(|r| {
                let g = |i: usize| r.get(i).cloned().unwrap_or(Value::Null);
                let load = match (g(18).real(), g(19).real(), g(20).real()) {
                    (Some(a), Some(b), Some(c)) => Some([a, b, c]),
                    _ => None,
                };
                StoredSession {
                    id: g(0).int().unwrap_or(0),
                    started: g(1).string(),
                    started_unix: g(2).real().unwrap_or(0.0),
                    finished_unix: g(3).real(),
                    status: g(4).string(),
                    stop_reason: g(5).text().map(str::to_string),
                    source: g(6).string(),
                    tool_version: g(7).string(),
                    command_line: g(8).string(),
                    order: g(9).text().map(str::to_string),
                    shell_overhead: g(10).real(),
                    fingerprint: g(11).string(),
                    machine: Machine {
                        hostname: g(12).string(),
                        cpu_model: g(13).string(),
                        cores: g(14).int().unwrap_or(0),
                        memory_bytes: g(15).int().unwrap_or(0),
                        kernel: g(16).string(),
                        governor: g(17).text().map(str::to_string),
                        load,
                    },
                    labels: Vec::new(),
                    cells: Vec::new(),
                    preflight: g(21).text().map(str::to_string),
                    search: g(22).text().and_then(StoredSearch::from_json),
                    race: g(26).text().and_then(StoredRace::from_json),
                    race_error: g(26).text().and_then(|t| StoredRace::parse_json(t).err()),
                    settings: g(23).text().and_then(Settings::from_json),
                    settings_error: g(23).text().and_then(|t| Settings::parse_json(t).err()),
                    seed: g(24).text().map(str::to_string),
                    outcome: g(25)
                        .text()
                        .and_then(crate::run::session::Outcome::from_json),
                }
            })
            .collect();
        if let Some(m) = &filter.machine {
            sessions.retain(|s| s.fingerprint.starts_with(m.as_str()) || &s.machine.hostname == m);
        }
        // Without a command filter the limit applies now, before reading cells.
        if filter.command.is_none() {
            if let Some(n) = filter.limit {
                sessions.truncate(n);
            }
        }
        let ids: Vec<i64> = sessions.iter().map(|s| s.id).collect();
        let mut labels: HashMap<i64, Vec<(String, String)>> = HashMap::new();
        let mut cells: HashMap<i64, Vec<StoredCell>> = HashMap::new();
        for chunk in ids.chunks(500) {
            let (list, params) = in_list(chunk);
            for r in self.db.query(
                &format!("SELECT session_id, key, value FROM labels WHERE session_id IN ({list}) ORDER BY key"),
                &params,
            )? {
                let g = |i: usize| r.get(i).cloned().unwrap_or(Value::Null);
                labels
                    .entry(g(0).int().unwrap_or(0))
                    .or_default()
                    .push((g(1).string(), g(2).string()));
            }
            if !with_cells {
                continue;
            }
            for r in self.db.query(
                &format!(
                    "SELECT c.session_id, c.id, c.position, c.identity, c.name, c.command, \
                     c.parameters, c.variant, (SELECT COUNT(*) FROM runs r WHERE r.cell_id = c.id), \
                     (SELECT COUNT(DISTINCT e.seq) FROM extra_values e WHERE e.cell_id = c.id) \
                     FROM cells c WHERE c.session_id IN ({list}) ORDER BY c.position"
                ),
                &params,
            )? {
                let g = |i: usize| r.get(i).cloned().unwrap_or(Value::Null);
                cells
                    .entry(g(0).int().unwrap_or(0))
                    .or_default()
                    .push(StoredCell {
                        id: g(1).int().unwrap_or(0),
                        position: g(2).int().unwrap_or(0),
                        identity: g(3).string(),
                        name: g(4).string(),
                        command: g(5).string(),
                        parameters: parse_params(&g(6).string()),
                        variant: g(7).string(),
                        runs: g(8).int().unwrap_or(0).max(g(9).int().unwrap_or(0)),
                    });
            }
        }
        for s in &mut sessions {
            s.labels = labels.remove(&s.id).unwrap_or_default();
            s.cells = cells.remove(&s.id).unwrap_or_default();
        }
        if let (Some(c), true) = (&filter.command, with_cells) {
            sessions.retain(|s| {
                s.cells.iter().any(|cell| {
                    cell.identity.contains(c.as_str())
                        || cell.name.contains(c.as_str())
                        || cell.command.contains(c.as_str())
                })
            });
            if let Some(n) = filter.limit {
                sessions.truncate(n);
            }
        }
        Ok(sessions)
    }

    /// All runs of a cell, in order, as samples.
    pub fn runs(&mut self, cell: i64) -> Result<Vec<Sample>> {
        let columns: Vec<&str> = schema::run_metric_columns()
            .chain(schema::DISTURBANCE_COLUMNS.iter().copied())
            .collect();
        let sql = format!(
            "SELECT run_index, exit_code, signal, timed_out, {} FROM runs WHERE cell_id = $1 ORDER BY seq",
            columns
                .iter()
                .map(|c| self.column("runs", c))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let rows = self
            .db
            .query(&sql, &[Value::Int(cell)])
            .map_err(|e| self.err("cannot read runs", e))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut s = Sample::new(r.first().and_then(Value::int).unwrap_or(0) as u64);
                s.exit_code = r.get(1).and_then(Value::int).map(|c| c as i32);
                s.signal = r.get(2).and_then(Value::int).map(|c| c as i32);
                s.timed_out = r.get(3).and_then(Value::int).unwrap_or(0) != 0;
                for (i, col) in columns.iter().enumerate() {
                    let v = r.get(4 + i).and_then(Value::real);
                    match (*col, Metric::from_name(col), v) {
                        (_, Some(m), Some(v)) => s.set(m, v),
                        ("cpu_wait", None, v) => s.disturbance.cpu_wait = v,
                        ("cpu_steal", None, v) => s.disturbance.steal = v,
                        _ => {}
                    }
                }
                s
            })
            .collect())
    }

    /// Values of one metric column for many cells (runs that did not time
    /// out), in run order: what history and the gate need, without reading
    /// every column.
    pub fn metric_values(
        &mut self,
        cells: &[i64],
        metric: Metric,
    ) -> Result<HashMap<i64, Vec<f64>>> {
        let mut out: HashMap<i64, Vec<f64>> = HashMap::new();
        if !self.has_metric_column(metric) {
            return Ok(out);
        }
        for chunk in cells.chunks(500) {
            let (list, params) = in_list(chunk);
            self.db
                .query_pairs(
                    &format!(
                        "SELECT cell_id, {} FROM runs WHERE cell_id IN ({list}) AND timed_out = 0 \
                         ORDER BY cell_id, seq",
                        metric.name()
                    ),
                    &params,
                    &mut |c, v| out.entry(c).or_default().push(v),
                )
                .map_err(|e| self.err("cannot read runs", e))?;
        }
        Ok(out)
    }

    /// Per cell, its runs that timed out and those that failed (a non-zero
    /// exit or a signal, without a timeout): what a gate says of a side
    /// holding too few successful runs. Cells without such runs are absent.
    pub fn run_outcomes(&mut self, cells: &[i64]) -> Result<HashMap<i64, (usize, usize)>> {
        let mut out = HashMap::new();
        for chunk in cells.chunks(500) {
            let (list, params) = in_list(chunk);
            let rows = self
                .db
                .query(
                    &format!(
                        "SELECT cell_id, \
                         CAST(SUM(CASE WHEN timed_out <> 0 THEN 1 ELSE 0 END) AS BIGINT), \
                         CAST(SUM(CASE WHEN timed_out = 0 AND (exit_code <> 0 OR signal IS NOT \
                         NULL) THEN 1 ELSE 0 END) AS BIGINT) FROM runs WHERE cell_id IN ({list}) \
                         AND (timed_out <> 0 OR exit_code <> 0 OR signal IS NOT NULL) \
                         GROUP BY cell_id"
                    ),
                    &params,
                )
                .map_err(|e| self.err("cannot read runs", e))?;
            for r in rows {
                let n = |i: usize| r.get(i).and_then(Value::int).unwrap_or(0).max(0) as usize;
                if let Some(cell) = r.first().and_then(Value::int) {
                    out.insert(cell, (n(1), n(2)));
                }
            }
        }
        Ok(out)
    }

    /// Values of one metric column for every cell with an id in
    /// `first..=last` (runs that did not time out), read as index range
    /// scans of at most 20,000 ids (2,000 on PostgreSQL): for histories, which want most
    /// cells of the store, this is several times faster than lists of ids.
    /// Runs of a cell come in no particular order.
    pub fn metric_values_in_range(
        &mut self,
        first: i64,
        last: i64,
        metric: Metric,
    ) -> Result<HashMap<i64, Vec<f64>>> {
        let mut out: HashMap<i64, Vec<f64>> = HashMap::new();
        self.each_metric_value_in_range(first, last, metric, &mut |c, v| {
            out.entry(c).or_default().push(v)
        })?;
        Ok(out)
    }

    /// [`Store::metric_values_in_range`], each (cell id, value) handed to
    /// `f` as the backend reads it: no row of values and no map entry per
    /// run, which is what reading ten million runs costs.
    pub fn each_metric_value_in_range(
        &mut self,
        first: i64,
        last: i64,
        metric: Metric,
        f: &mut dyn FnMut(i64, f64),
    ) -> Result<()> {
        // PostgreSQL's client holds a query's rows until its end (see
        // `Backend::query_pairs`): shorter ranges keep that to about 2 MB.
        let range_cells: i64 = match self.db.dialect() {
            Dialect::Sqlite => 20_000,
            Dialect::Postgres => 2_000,
        };
        if !self.has_metric_column(metric) {
            return Ok(());
        }
        let column = metric.name();
        let postgres = self.db.dialect() == Dialect::Postgres;
        let sql = if postgres {
            // One row per cell: PostgreSQL's rows cost the client about
            // 150 ns each, more than their 16 bytes. The subquery's order
            // is the arrays' (array_agg's own ORDER BY sorts each group
            // again, which cost the server 40 % more).
            format!(
                "SELECT cell_id, array_agg(v) FROM (SELECT cell_id, {column}::float8 AS v FROM runs \
                 WHERE cell_id >= $1 AND cell_id <= $2 AND timed_out = 0 ORDER BY cell_id, seq) r \
                 GROUP BY cell_id ORDER BY cell_id"
            )
        } else {
            format!(
                "SELECT cell_id, {column} FROM runs WHERE cell_id >= $1 AND cell_id <= $2 AND timed_out = 0"
            )
        };
        let mut lo = first;
        while lo <= last {
            let hi = lo.saturating_add(range_cells - 1).min(last);
            let params = [Value::Int(lo), Value::Int(hi)];
            if postgres {
                self.db.query_lists(&sql, &params, f)
            } else {
                self.db.query_pairs(&sql, &params, f)
            }
            .map_err(|e| self.err("cannot read runs", e))?;
            lo = hi.saturating_add(1);
        }
        Ok(())
    }

    /// Series of metrics without a column (imports), per metric.
    pub fn extra_series(&mut self, cell: i64) -> Result<Vec<ExtraSeries>> {
        let rows = self
            .db
            .query(
                "SELECT metric, unit, higher_is_better, value FROM extra_values WHERE cell_id = $1 \
                 ORDER BY metric, seq",
                &[Value::Int(cell)],
            )
            .map_err(|e| self.err("cannot read values", e))?;
        let mut out: Vec<ExtraSeries> = Vec::new();
        for r in rows {
            let metric = r.first().map(Value::string).unwrap_or_default();
            let value = r.get(3).and_then(Value::real).unwrap_or(f64::NAN);
            match out.last_mut() {
                Some(s) if s.metric == metric => s.values.push(value),
                _ => out.push(ExtraSeries {
                    metric,
                    unit: r.get(1).map(Value::string).unwrap_or_default(),
                    higher_is_better: r.get(2).and_then(Value::int).unwrap_or(0) != 0,
                    values: vec![value],
                }),
            }
        }
        Ok(out)
    }
}

/// `$1, $2, …` for a list of ids.
fn in_list(ids: &[i64]) -> (String, Vec<Value>) {
    let list: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
    (
        list.join(", "),
        ids.iter().map(|&i| Value::Int(i)).collect(),
    )
}
