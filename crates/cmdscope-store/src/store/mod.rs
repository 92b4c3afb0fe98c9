//! The results store: every session, its cells, every run's metrics and the
//! machine it ran on, in SQLite (embedded, the default) or PostgreSQL.
//!
//! One [`Backend`] trait with two implementations ([`sqlite`], [`postgres`])
//! that only execute SQL; everything else is written once against the
//! common dialect of [`schema`]: this file opens a store, migrates it and
//! runs its transactions; [`location`] says where a store is, [`model`]
//! what it keeps, [`write`] and [`read`] write and read it. See
//! docs/STORE.md for the schema, locations and guarantees.

pub mod history;
mod location;
pub mod machine;
mod model;
pub mod partitions;
pub(crate) mod postgres;
mod read;
pub mod record;
pub mod redact;
pub mod replay;
pub mod schema;
pub(crate) mod sqlite;
mod write;
pub mod writer;

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::metrics::Metric;
pub use location::Location;
pub use machine::{short_fingerprint, Machine};
pub use model::{
    identity, parse_label, parse_labels, with_parameters, CellRow, ExtraSeries, Filter, Finish,
    NewCell, NewSession, RaceRound, Setting, StoredCell, StoredRace, StoredSearch, StoredSession,
    FINISHED, RUNNING,
};
pub use redact::redact;
use schema::{Dialect, LATEST};

/// The error for a store of schema version `v`, newer than this
/// cmdscope's: refused before anything in it changes.
pub(crate) fn newer_schema(shown: &str, v: i64) -> StoreError {
    StoreError(format!(
        "store '{shown}' has schema version {v}, newer than this cmdscope {} understands \
         ({LATEST}): upgrade cmdscope (the store was left unchanged)",
        env!("CARGO_PKG_VERSION")
    ))
}

/// A store error: one line, with any password already removed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl From<StoreError> for crate::error::Error {
    fn from(e: StoreError) -> Self {
        crate::error::Error::Store(e.0)
    }
}

/// A value bound to or read from SQL.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Real(f) => Some(*f as i64),
            _ => None,
        }
    }
    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
    fn string(&self) -> String {
        self.text().unwrap_or_default().to_string()
    }
    fn opt_real(v: Option<f64>) -> Value {
        v.filter(|x| !x.is_nan()).map_or(Value::Null, Value::Real)
    }
    fn opt_text(v: Option<&str>) -> Value {
        v.map_or(Value::Null, |s| Value::Text(s.to_string()))
    }
}

/// What a backend does: run SQL. Placeholders are `$1`, `$2`, ... in both
/// dialects (the SQLite backend rewrites them).
pub trait Backend: Send {
    fn dialect(&self) -> Dialect;
    /// Runs statements separated by `;`, without parameters.
    fn batch(&mut self, sql: &str) -> Result<()>;
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>>;
    /// Runs a query of two columns, an integer and a number, handing each
    /// row to `f` as it comes, without building rows of [`Value`]s: the
    /// path of millions of run values. A row with either column NULL (or
    /// text) is skipped, as [`Value::int`] and [`Value::real`] skip it.
    fn query_pairs(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(i64, f64),
    ) -> Result<()>;
    /// Runs a query of two columns, an integer and an array of numbers,
    /// handing each element (NULLs skipped) to `f` with the integer, in
    /// the array's order: one row per cell instead of one per run, where
    /// rows cost more than their values. PostgreSQL only (SQLite has no
    /// arrays, and its rows are cheap): other backends refuse.
    fn query_lists(
        &mut self,
        sql: &str,
        _params: &[Value],
        _f: &mut dyn FnMut(i64, f64),
    ) -> Result<()> {
        Err(StoreError(format!("this store has no arrays: {sql}")))
    }
    /// Inserts many rows (`values` holds `columns.len()` values per row),
    /// inside the caller's transaction, as fast as the backend allows.
    fn insert_rows(&mut self, table: &str, columns: &[&str], values: &[Value]) -> Result<()>;
}

/// An open store: migrated to [`LATEST`], or, opened by a reader, of any
/// version up to it, read as it is.
pub struct Store {
    db: Box<dyn Backend>,
    /// Where it was opened, to open it again (a second reader).
    opened: Location,
    location: String,
    /// Inside [`Store::atomically`]: writes join its transaction.
    in_transaction: bool,
    /// A store of an older schema opened by a reader: the (table, column)
    /// pairs it has. None for a store of the latest schema, which has all.
    older: Option<OlderSchema>,
}

/// What a store of an older schema holds. Migrations only add tables and
/// columns, so a reader reads such a store as it is: an absent column reads
/// as NULL and an absent table as empty, which is what a session stored
/// before the migration holds in an upgraded store.
struct OlderSchema {
    version: i64,
    columns: HashSet<(String, String)>,
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Store {
    /// Opens (creating an SQLite file if needed) and migrates.
    pub fn open(location: &Location) -> Result<Store> {
        let mut store = Store::connect(location, false)?;
        if store.db.dialect() == Dialect::Postgres && store.foreign_postgres()? {
            return Err(StoreError(format!(
                "store '{}': not a cmdscope store (the database's schema holds other tables); \
                 it was left unchanged: give cmdscope a database of its own",
                store.location
            )));
        }
        store.migrate()?;
        Ok(store)
    }

    /// True when the current PostgreSQL schema has tables but none of
    /// cmdscope's: somebody else's database, not to be added to. (SQLite
    /// files are checked by their backend, before the journal mode changes.)
    fn foreign_postgres(&mut self) -> Result<bool> {
        let rows = self.db.query(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE table_name = 'schema_version') \
             FROM information_schema.tables WHERE table_schema = current_schema()",
            &[],
        )?;
        let count = |i: usize| {
            rows.first()
                .and_then(|r| r.get(i))
                .and_then(Value::int)
                .unwrap_or(0)
        };
        Ok(count(0) > 0 && count(1) == 0)
    }

    /// Opens an existing store for reading (history, check, report):
    /// nothing is created or changed, and a database that is not a cmdscope
    /// store is refused. A store of an older schema is read as it is, not
    /// upgraded: it may be shared with an older cmdscope, which would then
    /// refuse it, or be a copy meant to stay as it is, and it may be
    /// read-only. Migrations only add, so what it lacks reads as a session
    /// stored before them reads (see [`OlderSchema`]); the next writer
    /// upgrades it.
    pub fn open_read_only(location: &Location) -> Result<Store> {
        let mut store = Store::connect(location, true)?;
        match Self::version(store.db.as_mut()) {
            Ok(v) if v == LATEST => Ok(store),
            Ok(v) if v > LATEST => Err(store.newer(v)),
            Ok(v) if v > 0 => {
                let columns = store
                    .columns()
                    .map_err(|e| store.err("cannot read the schema", e))?;
                store.older = Some(OlderSchema {
                    version: v,
                    columns,
                });
                Ok(store)
            }
            _ => Err(StoreError(format!(
                "store '{}': not a cmdscope store (no schema version)",
                store.location
            ))),
        }
    }

    /// The backend for `location`, neither checked nor migrated yet (an
    /// SQLite file read-only opened so that nothing is created).
    fn connect(location: &Location, read_only: bool) -> Result<Store> {
        let shown = location.display();
        let db: Box<dyn Backend> = match location {
            Location::Sqlite(path) if read_only => {
                Box::new(sqlite::Sqlite::open_read_only(path, &shown)?)
            }
            Location::Sqlite(path) => Box::new(sqlite::Sqlite::open(path, &shown)?),
            Location::Postgres(url) => Box::new(postgres::Postgres::connect(url, &shown)?),
        };
        Ok(Store {
            db,
            opened: location.clone(),
            location: shown,
            in_transaction: false,
            older: None,
        })
    }

    /// The (table, column) pairs of the store's schema.
    fn columns(&mut self) -> Result<HashSet<(String, String)>> {
        let sql = match self.db.dialect() {
            Dialect::Sqlite => {
                "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p \
                 WHERE m.type = 'table'"
            }
            Dialect::Postgres => {
                "SELECT table_name::text, column_name::text FROM information_schema.columns \
                 WHERE table_schema = current_schema()"
            }
        };
        Ok(self
            .db
            .query(sql, &[])?
            .into_iter()
            .map(|r| {
                let text = |i: usize| r.get(i).map(Value::string).unwrap_or_default();
                (text(0), text(1))
            })
            .collect())
    }

    /// The schema version of a store of an older schema opened by a
    /// reader, which reads it as it is; None when it is the latest.
    pub fn older_schema(&self) -> Option<i64> {
        self.older.as_ref().map(|o| o.version)
    }

    /// For a store of an older schema opened by a reader, one line saying
    /// what it lacks and that it was read as it is.
    pub fn older_note(&self) -> Option<String> {
        let v = self.older_schema()?;
        Some(format!(
            "store '{}' has schema version {v}, older than this cmdscope's ({LATEST}): read as \
             it is, without {} (the next run or import with it upgrades it)",
            self.location,
            schema::lacks(v)
        ))
    }

    /// Whether the store has `table` (every table, unless it is older).
    fn has_table(&self, table: &str) -> bool {
        self.older
            .as_ref()
            .is_none_or(|o| o.columns.iter().any(|(t, _)| t == table))
    }

    /// Whether `runs` has the metric's column (an older store may lack a
    /// later metric's: it has no values of it).
    fn has_metric_column(&self, metric: Metric) -> bool {
        schema::has_column(metric)
            && self.older.as_ref().is_none_or(|o| {
                o.columns
                    .contains(&("runs".to_string(), metric.name().into()))
            })
    }

    /// `column` of `table` for a SELECT list: NULL where an older store
    /// lacks it.
    fn column(&self, table: &str, column: &str) -> String {
        match &self.older {
            Some(o) if !o.columns.contains(&(table.to_string(), column.to_string())) => {
                format!("NULL AS {column}")
            }
            _ => column.to_string(),
        }
    }

    /// Where the store was opened, as given (with a password if it had one).
    pub fn opened(&self) -> &Location {
        &self.opened
    }

    /// The location, password removed.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn err(&self, what: &str, e: StoreError) -> StoreError {
        StoreError(format!("store '{}': {what}: {}", self.location, e.0))
    }

    /// Runs `f` in a write transaction, rolled back on error; inside
    /// [`Store::atomically`], as part of its transaction.
    fn write<T>(&mut self, f: impl FnOnce(&mut dyn Backend) -> Result<T>) -> Result<T> {
        if self.in_transaction {
            return f(self.db.as_mut());
        }
        let begin = self.db.dialect().begin_write();
        self.db.batch(begin)?;
        let result = f(self.db.as_mut());
        self.end_transaction(result, |e| e)
    }

    /// Runs `f` in one write transaction: the store gets every write `f`
    /// makes or, when `f` fails or the process dies before the commit, none
    /// of them.
    pub fn atomically<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&mut Store) -> Result<T, E>,
    ) -> Result<T, E> {
        if self.in_transaction {
            return f(self);
        }
        let location = self.location.clone();
        let fail = move |what: &str, e: StoreError| {
            StoreError(format!("store '{location}': {what}: {}", e.0))
        };
        let begin = self.db.dialect().begin_write();
        self.db
            .batch(begin)
            .map_err(|e| E::from(fail("cannot start a transaction", e)))?;
        self.in_transaction = true;
        let result = f(self);
        self.in_transaction = false;
        self.end_transaction(result, |e| fail("cannot commit", e))
    }

    /// Commits after `result`, or rolls back after its error (returned as
    /// it is); a failed commit is rolled back and named by `commit_error`.
    fn end_transaction<T, E: From<StoreError>>(
        &mut self,
        result: Result<T, E>,
        commit_error: impl FnOnce(StoreError) -> StoreError,
    ) -> Result<T, E> {
        match result {
            Ok(v) => match self.db.batch("COMMIT") {
                Ok(()) => Ok(v),
                Err(e) => {
                    let _ = self.db.batch("ROLLBACK");
                    Err(commit_error(e).into())
                }
            },
            Err(e) => {
                let _ = self.db.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn version(db: &mut dyn Backend) -> Result<i64> {
        let rows = db.query("SELECT MAX(version) FROM schema_version", &[])?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(Value::int)
            .unwrap_or(0))
    }

    fn newer(&self, v: i64) -> StoreError {
        newer_schema(&self.location, v)
    }

    /// Applies the missing migrations, one transaction; concurrent openers
    /// wait for each other (SQLite's write lock, a PostgreSQL advisory lock).
    fn migrate(&mut self) -> Result<()> {
        // Fast path without the write lock: already current.
        if let Ok(v) = Self::version(self.db.as_mut()) {
            if v == LATEST {
                return Ok(());
            }
            if v > LATEST {
                return Err(self.newer(v));
            }
        }
        let dialect = self.db.dialect();
        let result = self.write(|db| {
            if dialect == Dialect::Postgres {
                db.batch("SELECT pg_advisory_xact_lock(7262001)")?;
            }
            db.batch(schema::VERSION_TABLE)?;
            let v = Self::version(db)?;
            if v > LATEST {
                return Ok(Some(v));
            }
            for m in schema::migrations(dialect).iter().skip(v.max(0) as usize) {
                db.batch(m)?;
            }
            if v < LATEST {
                db.execute("DELETE FROM schema_version", &[])?;
                db.execute(
                    "INSERT INTO schema_version (version) VALUES ($1)",
                    &[Value::Int(LATEST)],
                )?;
            }
            Ok(None)
        });
        match result {
            Ok(Some(v)) => Err(self.newer(v)),
            Ok(None) => Ok(()),
            Err(e) => Err(self.err("cannot create or migrate the schema", e)),
        }
    }
}
