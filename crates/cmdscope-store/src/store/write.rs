//! Writing a session: its row, cells, runs, values without a column,
//! concurrency mode's batches, its end and a search's answer, each write
//! in a transaction of its own or of [`Store::atomically`]'s.

use std::time::SystemTime;

use super::model::{ExtraSeries, Finish, NewCell, NewSession, StoredRace, StoredSearch, RUNNING};
use super::{schema, unix, Result, Store, StoreError, Value};
use crate::metrics::{Metric, Sample};
use crate::run::session::BatchRecord;

const RUN_FIXED: &[&str] = &[
    "cell_id",
    "seq",
    "run_index",
    "exit_code",
    "signal",
    "timed_out",
];

const BATCH_COLUMNS: &[&str] = &[
    "cell_id",
    "block_index",
    "concurrency",
    "first_seq",
    "busy_from",
    "busy_to",
    "elapsed",
    "host",
];

const BATCH_RUN_COLUMNS: &[&str] = &["cell_id", "seq", "slot", "started", "ended"];

fn params_json(p: &[(String, String)]) -> String {
    serde_json::to_string(p).unwrap_or_else(|_| "[]".into())
}

impl Store {
    /// Records a new session with its machine and labels; returns its id.
    pub fn begin_session(&mut self, s: &NewSession) -> Result<i64> {
        let m = &s.machine;
        let load = m.load.unwrap_or([f64::NAN; 3]);
        let params = vec![
            Value::Text(humantime::format_rfc3339_seconds(s.started).to_string()),
            Value::Real(unix(s.started)),
            Value::Text(RUNNING.into()),
            Value::Text(s.source.clone()),
            Value::Text(env!("CARGO_PKG_VERSION").into()),
            Value::Text(s.command_line.clone()),
            Value::opt_text(s.order.as_deref()),
            Value::opt_text(s.seed.as_deref()),
            Value::opt_text(s.shell.as_deref()),
            Value::Text(m.fingerprint()),
            Value::Text(m.hostname.clone()),
            Value::Text(m.cpu_model.clone()),
            Value::Int(m.cores),
            Value::Int(m.memory_bytes),
            Value::Text(m.kernel.clone()),
            Value::opt_text(m.governor.as_deref()),
            Value::opt_real(Some(load[0])),
            Value::opt_real(Some(load[1])),
            Value::opt_real(Some(load[2])),
            Value::opt_text(s.settings.as_deref()),
        ];
        let labels = s.labels.clone();
        let r = self.write(|db| {
            let rows = db.query(
                "INSERT INTO sessions (started, started_unix, status, source, tool_version, \
                 command_line, run_order, seed, shell, fingerprint, hostname, cpu_model, cores, \
                 memory_bytes, kernel, governor, load_1m, load_5m, load_15m, settings) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
                 $20) \
                 RETURNING id",
                &params,
            )?;
            let id = rows
                .first()
                .and_then(|r| r.first())
                .and_then(Value::int)
                .ok_or_else(|| StoreError("no id returned for the new session".into()))?;
            for (k, v) in &labels {
                db.execute(
                    "INSERT INTO labels (session_id, key, value) VALUES ($1, $2, $3)",
                    &[Value::Int(id), Value::Text(k.clone()), Value::Text(v.clone())],
                )?;
            }
            Ok(id)
        });
        r.map_err(|e| self.err("cannot record the session", e))
    }

    /// Records the cells of a session; returns their ids in order. Position
    /// i is `cells[i]`.
    pub fn add_cells(&mut self, session: i64, cells: &[NewCell]) -> Result<Vec<i64>> {
        let cells = cells.to_vec();
        let r = self.write(|db| {
            let mut ids = Vec::with_capacity(cells.len());
            for (i, c) in cells.iter().enumerate() {
                let rows = db.query(
                    "INSERT INTO cells (session_id, position, identity, name, command, parameters, \
                     variant) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                    &[
                        Value::Int(session),
                        Value::Int(i as i64),
                        Value::Text(c.identity.clone()),
                        Value::Text(c.name.clone()),
                        Value::Text(c.command.clone()),
                        Value::Text(params_json(&c.parameters)),
                        Value::Text(c.variant.clone()),
                    ],
                )?;
                ids.push(
                    rows.first()
                        .and_then(|r| r.first())
                        .and_then(Value::int)
                        .ok_or_else(|| StoreError("no id returned for a new cell".into()))?,
                );
            }
            Ok(ids)
        });
        r.map_err(|e| self.err("cannot record the benchmark cells", e))
    }

    fn run_columns() -> Vec<&'static str> {
        RUN_FIXED
            .iter()
            .copied()
            .chain(schema::run_metric_columns())
            .chain(schema::DISTURBANCE_COLUMNS.iter().copied())
            .collect()
    }

    fn run_row(cell: i64, seq: i64, s: &Sample, out: &mut Vec<Value>) {
        out.push(Value::Int(cell));
        out.push(Value::Int(seq));
        out.push(Value::Int(s.run_index as i64));
        out.push(s.exit_code.map_or(Value::Null, |c| Value::Int(c.into())));
        out.push(s.signal.map_or(Value::Null, |c| Value::Int(c.into())));
        out.push(Value::Int(s.timed_out.into()));
        for col in schema::run_metric_columns() {
            let v = Metric::from_name(col).and_then(|m| s.get(m));
            out.push(Value::opt_real(v));
        }
        out.push(Value::opt_real(s.disturbance.cpu_wait));
        out.push(Value::opt_real(s.disturbance.steal));
    }

    /// Appends runs to a cell, numbered from `first_seq`, in one transaction.
    pub fn add_runs(&mut self, cell: i64, first_seq: i64, samples: &[Sample]) -> Result<()> {
        let columns = Self::run_columns();
        let mut values = Vec::with_capacity(samples.len() * columns.len());
        for (i, s) in samples.iter().enumerate() {
            Self::run_row(cell, first_seq + i as i64, s, &mut values);
        }
        self.write(|db| db.insert_rows("runs", &columns, &values))
            .map_err(|e| self.err("cannot record runs", e))
    }

    /// Replaces all runs of a cell (used when the final values differ from
    /// the streamed ones, e.g. after subtracting the shell's start-up).
    pub fn replace_runs(&mut self, cell: i64, samples: &[Sample]) -> Result<()> {
        let columns = Self::run_columns();
        let mut values = Vec::with_capacity(samples.len() * columns.len());
        for (i, s) in samples.iter().enumerate() {
            Self::run_row(cell, i as i64, s, &mut values);
        }
        self.write(|db| {
            db.execute("DELETE FROM runs WHERE cell_id = $1", &[Value::Int(cell)])?;
            db.insert_rows("runs", &columns, &values)
        })
        .map_err(|e| self.err("cannot record runs", e))
    }

    /// Stores a series of a metric that has no column (imports).
    pub fn add_extra(&mut self, cell: i64, series: &ExtraSeries) -> Result<()> {
        let mut values = Vec::with_capacity(series.values.len() * 6);
        for (i, v) in series.values.iter().enumerate() {
            if v.is_nan() {
                continue;
            }
            values.extend([
                Value::Int(cell),
                Value::Int(i as i64),
                Value::Text(series.metric.clone()),
                Value::Text(series.unit.clone()),
                Value::Int(series.higher_is_better.into()),
                Value::Real(*v),
            ]);
        }
        let columns = [
            "cell_id",
            "seq",
            "metric",
            "unit",
            "higher_is_better",
            "value",
        ];
        self.write(|db| db.insert_rows("extra_values", &columns, &values))
            .map_err(|e| self.err("cannot record values", e))
    }

    /// Stores one batch of a cell run N at a time (concurrency mode): its
    /// row and, per run, its slot and when it ran. The runs themselves are
    /// the cell's runs from `first_seq` on, stored as every run is.
    pub fn add_batch(&mut self, cell: i64, b: &BatchRecord) -> Result<()> {
        let host = serde_json::to_string(&b.host).unwrap_or_else(|_| "{}".into());
        let row = [
            Value::Int(cell),
            Value::Int(b.block as i64),
            Value::Int(b.concurrency as i64),
            Value::Int(b.first_sample as i64),
            Value::Real(b.busy.0),
            Value::Real(b.busy.1),
            Value::Real(b.elapsed),
            Value::Text(host),
        ];
        let mut runs = Vec::with_capacity(b.spans.len() * 5);
        for (k, span) in b.spans.iter().enumerate() {
            runs.extend([
                Value::Int(cell),
                Value::Int((b.first_sample + k) as i64),
                Value::Int(span.slot as i64),
                Value::Real(span.start),
                Value::Real(span.end),
            ]);
        }
        self.write(|db| {
            db.insert_rows("batches", BATCH_COLUMNS, &row)?;
            db.insert_rows("batch_runs", BATCH_RUN_COLUMNS, &runs)
        })
        .map_err(|e| self.err("cannot record a batch", e))
    }

    pub fn finish_session(&mut self, session: i64, f: &Finish) -> Result<()> {
        let params = [
            Value::Real(unix(SystemTime::now())),
            Value::Text(f.status.clone()),
            Value::opt_text(f.stop_reason.as_deref()),
            Value::opt_real(f.shell_overhead),
            Value::opt_text(f.preflight.as_deref()),
            Value::opt_text(f.outcome.as_deref()),
            Value::Int(session),
        ];
        self.write(|db| {
            db.execute(
                "UPDATE sessions SET finished_unix = $1, status = $2, stop_reason = $3, \
                 shell_overhead = $4, preflight = COALESCE($5, preflight), outcome = $6 \
                 WHERE id = $7",
                &params,
            )
        })
        .map(drop)
        .map_err(|e| self.err("cannot finish the session", e))
    }

    /// Keeps a search's answer, and its race when there is one, with its
    /// session.
    pub fn set_search(
        &mut self,
        session: i64,
        search: &StoredSearch,
        race: Option<&StoredRace>,
    ) -> Result<()> {
        let params = [
            Value::Text(search.to_json()),
            Value::opt_text(race.map(StoredRace::to_json).as_deref()),
            Value::Int(session),
        ];
        self.write(|db| {
            db.execute(
                "UPDATE sessions SET search = $1, race = $2 WHERE id = $3",
                &params,
            )
        })
        .map(drop)
        .map_err(|e| self.err("cannot record the search", e))
    }
}
