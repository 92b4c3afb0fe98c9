//! The results store: every session, its cells, every run's metrics and the
//! machine it ran on, in SQLite (embedded, the default) or PostgreSQL.
//!
//! One [`Backend`] trait with two implementations ([`sqlite`], [`postgres`])
//! that only execute SQL; everything else (the schema, migrations, what is
//! written and read) is here, written once against the common dialect of
//! [`schema`]. See docs/STORE.md for the schema, locations and guarantees.

pub mod history;
pub(crate) mod machine;
pub mod partitions;
pub(crate) mod postgres;
pub(crate) mod record;
pub mod redact;
pub mod schema;
pub(crate) mod sqlite;
pub mod writer;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::metrics::{Metric, Sample};
use crate::run::plan::Cell;
use crate::run::session::{BatchRecord, Span};
use crate::run::settings::Settings;
pub use machine::{short_fingerprint, Machine};
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

/// Where the store is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// Reads a store location. `postgres://…` / `postgresql://…` or a libpq
    /// key/value string (`host=h dbname=x`) is PostgreSQL, and must be one
    /// the driver accepts: text that looks like a connection string is
    /// never taken for a file's path. Anything else (with an optional
    /// `sqlite:` prefix) is the path of an SQLite file, which must name a
    /// file: in-memory databases, SQLite's `file:` URIs and blank names,
    /// which would keep nothing or not what was meant, are refused.
    pub fn parse(text: &str) -> Result<Location> {
        if let Some(path) = text.strip_prefix("sqlite:") {
            return Location::sqlite(text, path);
        }
        if redact::looks_like_connection(text) {
            return match redact::refusal(text) {
                None => Ok(Location::Postgres(text.to_string())),
                Some(why) => Err(StoreError(format!(
                    "store '{}' is not a PostgreSQL connection string cmdscope can use: {why}{}",
                    crate::output::escape_line(&redact(text)),
                    if redact::is_url(text) {
                        ""
                    } else {
                        " (for an SQLite file of that name, give sqlite:NAME or ./NAME)"
                    }
                ))),
            };
        }
        Location::sqlite(text, text)
    }

    /// The SQLite file `path` (`given` as typed, for messages).
    fn sqlite(given: &str, path: &str) -> Result<Location> {
        let shown = crate::output::escape_line(given);
        let refuse = |why: &str| Err(StoreError(format!("store '{shown}': {why}")));
        if path.trim().is_empty() {
            return refuse("names no file: an SQLite store is a file; give its path");
        }
        if path.trim() != path {
            return refuse(
                "the path begins or ends with white space (a typo?); give the file's path as it is",
            );
        }
        // SQLite reads these itself (cmdscope's SQLite takes URIs): an
        // in-memory database keeps nothing once cmdscope exits.
        if path == ":memory:" || path.starts_with("file:") {
            return refuse(
                "an in-memory database or a URI, not a file: the store must keep what is \
                 recorded; give the file's path (./NAME for a file named so)",
            );
        }
        Ok(Location::Sqlite(PathBuf::from(path)))
    }

    /// The files an SQLite store is made of (the database, its write-ahead
    /// log, shared-memory index and rollback journal, beside the file its
    /// links lead to, as SQLite puts them), named for messages; none for
    /// PostgreSQL. What no output of cmdscope may write.
    pub fn files(&self) -> Vec<crate::output::Named> {
        let Location::Sqlite(path) = self else {
            return Vec::new();
        };
        // A device or FIFO is no store (opening it is refused): nothing
        // to protect, and `--export-json /dev/null` stays allowed.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Vec::new();
        }
        let shown = crate::output::escape_line(&path.display().to_string());
        let mut files = vec![crate::output::Named {
            what: format!("the results store '{shown}'"),
            path: path.clone(),
        }];
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        for base in [path, &real] {
            for (suffix, what) in [
                ("-wal", "write-ahead log"),
                ("-shm", "shared-memory index"),
                ("-journal", "rollback journal"),
            ] {
                let mut name = base.as_os_str().to_os_string();
                name.push(suffix);
                files.push(crate::output::Named {
                    what: format!("the results store's {what} ('{shown}{suffix}')"),
                    path: name.into(),
                });
            }
        }
        files
    }

    /// `$XDG_DATA_HOME/cmdscope/results.sqlite3`, else
    /// `~/.local/share/cmdscope/results.sqlite3`.
    pub fn default_location() -> Option<Location> {
        let base = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/share"))
            })?;
        Some(Location::Sqlite(
            base.join("cmdscope").join("results.sqlite3"),
        ))
    }

    /// For messages: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => redact(url),
        }
    }
}

/// A session about to be recorded (also the writer's message for it).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct NewSession {
    #[serde(with = "writer::unix_seconds")]
    pub started: SystemTime,
    /// "run", or "import:<format>".
    pub source: String,
    pub command_line: String,
    pub order: Option<String>,
    pub seed: Option<String>,
    pub shell: Option<String>,
    pub machine: Machine,
    pub labels: Vec<(String, String)>,
    /// What a `run` session was run with: `run::settings::Settings` as
    /// JSON text (None for imports).
    pub settings: Option<String>,
}

/// A benchmark cell about to be recorded.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewCell {
    pub identity: String,
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    /// The variant's settings (environment) as JSON text.
    pub variant: String,
}

impl NewCell {
    pub fn from_cell(cell: &Cell) -> NewCell {
        let env: Vec<(String, String)> = cell
            .env
            .iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect();
        NewCell {
            identity: identity(cell),
            name: cell.name.clone(),
            command: cell.command.clone(),
            parameters: cell.parameters.clone(),
            variant: serde_json::json!({ "env": env }).to_string(),
        }
    }
}

/// A benchmark's identity across sessions: its name (`-n`) if it was
/// given one, else its command line with its parameters.
pub fn identity(cell: &Cell) -> String {
    // A name made from the command and its parameters ("cmd (u = root)")
    // is not a given name: the identity stays "cmd [u=root]".
    let made_name = cell.name == cell.command || (!cell.custom_name && !cell.parameters.is_empty());
    // Runs made N at a time are another benchmark than single runs: the
    // concurrency is part of the identity, as a parameter would be.
    let concurrency = cell
        .variant
        .concurrency
        .map(|n| ("concurrency".to_string(), n.to_string()));
    if !made_name {
        return match concurrency {
            Some(c) => with_parameters(&cell.name, &[c]),
            None => cell.name.clone(),
        };
    }
    match concurrency {
        Some(c) => {
            let mut params = cell.parameters.clone();
            params.push(c);
            with_parameters(&cell.command, &params)
        }
        None => with_parameters(&cell.command, &cell.parameters),
    }
}

/// `command` followed by ` [k=v, …]` when there are parameters.
pub fn with_parameters(command: &str, parameters: &[(String, String)]) -> String {
    if parameters.is_empty() {
        return command.to_string();
    }
    let p: Vec<String> = parameters.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{command} [{}]", p.join(", "))
}

/// How a session ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Finish {
    /// "finished", "interrupted" or "failed".
    pub status: String,
    pub stop_reason: Option<String>,
    pub shell_overhead: Option<f64>,
    /// The preflight checks (JSON list), when made.
    pub preflight: Option<String>,
}

/// Status of a session that has not finished (still running, or killed).
pub const RUNNING: &str = "running";

/// The status of a session that ended normally.
pub const FINISHED: &str = "finished";

/// Which sessions to list.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Substring of a cell's identity, name or command.
    pub command: Option<String>,
    /// Every one of these labels.
    pub labels: Vec<(String, String)>,
    /// A fingerprint (or its prefix) or a hostname.
    pub machine: Option<String>,
    pub session: Option<i64>,
    /// At most this many sessions, newest first.
    pub limit: Option<usize>,
}

/// A cell as histories list it (see [`Store::cells_in_range`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CellRow {
    pub id: i64,
    pub session: i64,
    pub identity: String,
    pub name: String,
    pub command: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StoredCell {
    pub id: i64,
    pub position: i64,
    pub identity: String,
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    pub variant: String,
    pub runs: i64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredSession {
    pub id: i64,
    pub started: String,
    pub started_unix: f64,
    pub finished_unix: Option<f64>,
    pub status: String,
    pub stop_reason: Option<String>,
    pub source: String,
    pub tool_version: String,
    pub command_line: String,
    pub order: Option<String>,
    pub shell_overhead: Option<f64>,
    pub fingerprint: String,
    pub machine: Machine,
    pub labels: Vec<(String, String)>,
    pub cells: Vec<StoredCell>,
    /// The preflight checks (JSON list of {name, status, detail}), if recorded.
    pub preflight: Option<String>,
    /// The answer of a search session (`run --minimize/--maximize`).
    pub search: Option<StoredSearch>,
    /// What the session was run with; None for imports and sessions
    /// stored before the settings were kept.
    pub settings: Option<Settings>,
    /// Why the stored settings could not be read, when they are there but
    /// damaged (`settings` is then None): readers that need them refuse
    /// the session rather than take it for one stored without them.
    pub settings_error: Option<String>,
}

impl StoredSession {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parameter values of one grid value, in the order of the search's
/// parameters: `[("batch", "1024")]`.
pub type Setting = Vec<(String, String)>;

/// The answer of `run --minimize/--maximize`, kept with its session: the
/// set comes from the search's race, which the stored runs do not replay.
/// Stored as a JSON object in `sessions.search`; the field names are those
/// of the `search` object of `--export-json`.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSearch {
    pub parameters: Vec<String>,
    /// The metric searched (`time_wall_clock`, `memory_peak_resident`, …).
    pub metric: String,
    /// What was compared: the metric, or per operation with `--ops`.
    pub compared: String,
    pub maximize: bool,
    pub best: Setting,
    /// The values not significantly worse than the best, the best included.
    pub as_good: Vec<Setting>,
    /// Every value measured, in scan order.
    pub values_tried: Vec<Setting>,
    pub runs: usize,
    /// Runs the full grid would have taken.
    pub grid_runs: usize,
}

impl StoredSearch {
    pub fn to_json(&self) -> String {
        let point = |s: &Setting| {
            serde_json::Value::Object(
                s.iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
            )
        };
        serde_json::json!({
            "parameters": self.parameters,
            "metric": self.metric,
            "compared": self.compared,
            "goal": if self.maximize { "maximize" } else { "minimize" },
            "best": point(&self.best),
            "as_good": self.as_good.iter().map(point).collect::<Vec<_>>(),
            "values_tried": self.values_tried.iter().map(point).collect::<Vec<_>>(),
            "runs": self.runs,
            "grid_runs": self.grid_runs,
        })
        .to_string()
    }

    /// None for text that is not a stored search (a damaged row is shown
    /// without its search, not refused).
    pub fn from_json(text: &str) -> Option<StoredSearch> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let parameters: Vec<String> = v["parameters"]
            .as_array()?
            .iter()
            .map(|p| p.as_str().map(str::to_string))
            .collect::<Option<_>>()?;
        // Objects come back in key order: put them in the parameters' order.
        let point = |p: &serde_json::Value| -> Option<Setting> {
            parameters
                .iter()
                .map(|k| Some((k.clone(), p.get(k)?.as_str()?.to_string())))
                .collect()
        };
        let points =
            |key: &str| -> Option<Vec<Setting>> { v[key].as_array()?.iter().map(point).collect() };
        Some(StoredSearch {
            metric: v["metric"].as_str()?.to_string(),
            compared: v["compared"].as_str()?.to_string(),
            maximize: v["goal"].as_str()? == "maximize",
            best: point(&v["best"])?,
            as_good: points("as_good")?,
            values_tried: points("values_tried")?,
            runs: v["runs"].as_u64()? as usize,
            grid_runs: v["grid_runs"].as_u64()? as usize,
            parameters,
        })
    }
}

/// One series of a metric that is not a cmdscope metric (from imports).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtraSeries {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub values: Vec<f64>,
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
];

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

fn unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn params_json(p: &[(String, String)]) -> String {
    serde_json::to_string(p).unwrap_or_else(|_| "[]".into())
}

fn parse_params(text: &str) -> Vec<(String, String)> {
    serde_json::from_str(text).unwrap_or_default()
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

    pub fn finish_session(&mut self, session: i64, f: &Finish) -> Result<()> {
        let params = [
            Value::Real(unix(SystemTime::now())),
            Value::Text(f.status.clone()),
            Value::opt_text(f.stop_reason.as_deref()),
            Value::opt_real(f.shell_overhead),
            Value::opt_text(f.preflight.as_deref()),
            Value::Int(session),
        ];
        self.write(|db| {
            db.execute(
                "UPDATE sessions SET finished_unix = $1, status = $2, stop_reason = $3, \
                 shell_overhead = $4, preflight = COALESCE($5, preflight) WHERE id = $6",
                &params,
            )
        })
        .map(drop)
        .map_err(|e| self.err("cannot finish the session", e))
    }

    /// Keeps a search's answer with its session.
    pub fn set_search(&mut self, session: i64, search: &StoredSearch) -> Result<()> {
        let params = [Value::Text(search.to_json()), Value::Int(session)];
        self.write(|db| db.execute("UPDATE sessions SET search = $1 WHERE id = $2", &params))
            .map(drop)
            .map_err(|e| self.err("cannot record the search", e))
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
                    settings: g(23).text().and_then(Settings::from_json),
                    settings_error: g(23).text().and_then(|t| Settings::parse_json(t).err()),
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
        let columns: Vec<&str> = schema::run_metric_columns().collect();
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
                    if let (Some(m), Some(v)) =
                        (Metric::from_name(col), r.get(4 + i).and_then(Value::real))
                    {
                        s.set(m, v);
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

/// Parses `KEY=VALUE` labels.
pub fn parse_labels(args: &[String]) -> crate::error::Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for a in args {
        let (k, v) = parse_label(a)?;
        out.retain(|(key, _)| key != &k);
        out.push((k, v));
    }
    Ok(out)
}

pub fn parse_label(a: &str) -> crate::error::Result<(String, String)> {
    match a.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(crate::error::Error::Usage(format!(
            "labels are KEY=VALUE (e.g. commit=abc123), got '{a}'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_and_labels() {
        let parse = |t: &str| Location::parse(t).unwrap();
        assert_eq!(
            parse("postgres://h/db"),
            Location::Postgres("postgres://h/db".into())
        );
        assert_eq!(
            parse("sqlite:/tmp/x.db"),
            Location::Sqlite("/tmp/x.db".into())
        );
        assert_eq!(parse("x.db"), Location::Sqlite("x.db".into()));
        assert_eq!(
            parse("host=h dbname=x password=p"),
            Location::Postgres("host=h dbname=x password=p".into())
        );
        assert_eq!(parse("./runs=1.db"), Location::Sqlite("./runs=1.db".into()));
        assert_eq!(
            parse("sqlite:runs=1.db"),
            Location::Sqlite("runs=1.db".into())
        );
        assert_eq!(parse("host=h password=p").display(), "host=h password=***");
        // Stores that keep nothing, or are not what was meant.
        for text in [
            "sqlite:",
            "sqlite: ",
            ":memory:",
            "sqlite::memory:",
            "file::memory:?cache=shared",
            "file:x.db?mode=memory",
            "sqlite:file:x.db",
            " x.db",
        ] {
            let e = Location::parse(text).unwrap_err().0;
            assert!(e.starts_with("store '"), "{text}: {e}");
        }
        // Connection strings the driver refuses are never paths, and their
        // passwords are not in the error.
        for text in [
            "postgresql://h/db?user=u&PASSWORD=e",
            "host=h PASSWORD=e",
            "host=h password='e",
            "runs=1.db",
            "host=h sslcert=x password=e",
        ] {
            let e = Location::parse(text).unwrap_err().0;
            assert!(
                e.contains("not a PostgreSQL connection string"),
                "{text}: {e}"
            );
            assert!(!e.contains("=e"), "{text}: {e}");
        }
        assert_eq!(
            parse_labels(&["a=1".into(), "b=x=y".into(), "a=2".into()]).unwrap(),
            vec![("b".into(), "x=y".into()), ("a".into(), "2".into())]
        );
        assert!(parse_label("=x").is_err());
        assert!(parse_label("novalue").is_err());
    }

    #[test]
    fn a_search_answer_survives_its_json_in_parameter_order() {
        let at = |z: &str, a: &str| vec![("z".to_string(), z.to_string()), ("a".into(), a.into())];
        let s = StoredSearch {
            // Not in key order: objects come back sorted, settings must not.
            parameters: vec!["z".into(), "a".into()],
            metric: "memory_peak_resident".into(),
            compared: "memory_peak_resident".into(),
            maximize: true,
            best: at("2", "<64>"),
            as_good: vec![at("2", "<64>"), at("4", "\"")],
            values_tried: vec![at("1", "8"), at("2", "<64>"), at("4", "\"")],
            runs: 41,
            grid_runs: 90,
        };
        let text = s.to_json();
        assert_eq!(StoredSearch::from_json(&text), Some(s.clone()));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["goal"], "maximize");
        assert_eq!(v["best"], serde_json::json!({"z": "2", "a": "<64>"}));
        // A damaged or foreign value is no answer, not an error.
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"parameters": ["z"]}"#,
            &text.replace("41", "-1"),
        ] {
            assert_eq!(StoredSearch::from_json(bad), None, "{bad}");
        }
    }

    #[test]
    fn identity_is_the_name_or_the_command_with_parameters() {
        let mut cell = Cell {
            name: "sort".into(),
            command: "sort -n f".into(),
            ..Cell::default()
        };
        assert_eq!(identity(&cell), "sort");
        cell.name = cell.command.clone();
        cell.parameters = vec![("n".into(), "4".into())];
        assert_eq!(identity(&cell), "sort -n f [n=4]");
    }
}
