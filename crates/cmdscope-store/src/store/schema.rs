//! The one schema of the results store, for SQLite and PostgreSQL alike,
//! and its migrations.
//!
//! The SQL is written once in the common subset of both dialects: `BIGINT`
//! for every integer (so both give `i64`), `DOUBLE PRECISION` for every
//! real, `TEXT` for text and JSON. Booleans are `BIGINT` 0/1. The only
//! dialect-specific piece is the auto-numbered key, written `{id}` here and
//! replaced by [`Dialect::id_column`].
//!
//! Migrations are an ordered list; `schema_version` holds the highest one
//! applied. A store whose version is higher than [`LATEST`] was written by a
//! newer cmdscope and is refused, never modified.
//!
//! Runs are stored *wide*: one row per run with one column per cmdscope
//! metric ([`METRIC_COLUMNS`]). A million runs are a million rows, which keeps
//! inserting and reading them fast in both databases. Metrics that are not
//! cmdscope's (Go's `B/op`, custom units from imports) go to `extra_values`,
//! one row per value.

use crate::metrics::Metric;

/// SQL dialect of a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The auto-numbered primary key column type.
    pub fn id_column(self) -> &'static str {
        match self {
            Dialect::Sqlite => "INTEGER PRIMARY KEY",
            Dialect::Postgres => "BIGSERIAL PRIMARY KEY",
        }
    }

    /// Statement that starts a write transaction. SQLite takes the write
    /// lock up front (`IMMEDIATE`) so that a transaction never has to
    /// upgrade a read lock, which is what makes concurrent writers wait on
    /// the busy timeout instead of failing with "database is locked".
    pub fn begin_write(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// Turns `{id}` into the dialect's key type.
    pub fn render(self, sql: &str) -> String {
        sql.replace("{id}", self.id_column())
    }
}

/// Metric columns of `runs`, frozen by migration 1: the metrics cmdscope
/// measured when it was written. A metric added to [`Metric`] later needs a
/// migration that adds its column (until then it is kept in `extra_values`).
pub const METRIC_COLUMNS: &[&str] = &[
    "time_wall_clock",
    "time_user",
    "time_system",
    "time_cpu",
    "memory_peak_resident",
    "page_faults_minor",
    "page_faults_major",
    "context_switches_voluntary",
    "context_switches_involuntary",
    "io_read_bytes",
    "io_write_bytes",
    "io_read_chars",
    "io_write_chars",
    "task_clock",
    "cpu_migrations",
    "cpu_cycles",
    "instructions",
    "cache_references",
    "cache_misses",
    "branch_misses",
];

/// Metric columns added to `runs` by migration 7: the counts of
/// `run --simulate`.
pub const SIMULATED_COLUMNS: &[&str] = &[
    "sim_instructions",
    "sim_d1_misses",
    "sim_ll_misses",
    "sim_branch_mispredicts",
    "sim_estimated_cycles",
];

/// Columns added to `runs` by migration 8: what disturbed each run
/// (`metrics::Disturbance`, seconds), which the JSON export lists per run.
pub const DISTURBANCE_COLUMNS: &[&str] = &["cpu_wait", "cpu_steal"];

/// Every metric column of `runs` in the latest schema, in order.
pub fn run_metric_columns() -> impl Iterator<Item = &'static str> {
    METRIC_COLUMNS.iter().chain(SIMULATED_COLUMNS).copied()
}

/// True when the metric has its own column in `runs`.
pub fn has_column(metric: Metric) -> bool {
    run_metric_columns().any(|c| c == metric.name())
}

/// Migration 1: the whole schema.
const V1: &str = "
CREATE TABLE sessions (
    id {id},
    started TEXT NOT NULL,
    started_unix DOUBLE PRECISION NOT NULL,
    finished_unix DOUBLE PRECISION,
    status TEXT NOT NULL,
    stop_reason TEXT,
    source TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    command_line TEXT NOT NULL,
    run_order TEXT,
    seed TEXT,
    shell TEXT,
    shell_overhead DOUBLE PRECISION,
    fingerprint TEXT NOT NULL,
    hostname TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    cores BIGINT NOT NULL,
    memory_bytes BIGINT NOT NULL,
    kernel TEXT NOT NULL,
    governor TEXT,
    load_1m DOUBLE PRECISION,
    load_5m DOUBLE PRECISION,
    load_15m DOUBLE PRECISION
);
CREATE INDEX sessions_by_machine ON sessions (fingerprint, started_unix);
CREATE INDEX sessions_by_time ON sessions (started_unix);

CREATE TABLE labels (
    session_id BIGINT NOT NULL REFERENCES sessions (id),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE INDEX labels_by_value ON labels (key, value);

CREATE TABLE cells (
    id {id},
    session_id BIGINT NOT NULL REFERENCES sessions (id),
    position BIGINT NOT NULL,
    identity TEXT NOT NULL,
    name TEXT NOT NULL,
    command TEXT NOT NULL,
    parameters TEXT NOT NULL,
    variant TEXT NOT NULL,
    UNIQUE (session_id, position)
);
CREATE INDEX cells_by_identity ON cells (identity);

CREATE TABLE runs (
    cell_id BIGINT NOT NULL REFERENCES cells (id),
    seq BIGINT NOT NULL,
    run_index BIGINT NOT NULL,
    exit_code BIGINT,
    signal BIGINT,
    timed_out BIGINT NOT NULL,
    {metric_columns},
    PRIMARY KEY (cell_id, seq)
);

CREATE TABLE extra_values (
    cell_id BIGINT NOT NULL REFERENCES cells (id),
    seq BIGINT NOT NULL,
    metric TEXT NOT NULL,
    unit TEXT NOT NULL,
    higher_is_better BIGINT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (cell_id, metric, seq)
);
";

/// Migration 2: the partitions of suite runs (see store/partitions.rs).
const V2: &str = "
CREATE TABLE suite_partitions (
    run_id TEXT NOT NULL,
    partition_index BIGINT NOT NULL,
    partitions BIGINT NOT NULL,
    suite TEXT NOT NULL,
    status TEXT NOT NULL,
    hostname TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    pid BIGINT NOT NULL,
    started_unix DOUBLE PRECISION NOT NULL,
    last_seen_unix DOUBLE PRECISION NOT NULL,
    finished_unix DOUBLE PRECISION,
    planned_cells BIGINT NOT NULL,
    suite_cells BIGINT NOT NULL,
    done_cells BIGINT NOT NULL,
    PRIMARY KEY (run_id, partition_index)
);
";

/// Migration 6: concurrency mode's batches (`run --concurrency N`). One
/// row per batch: its block, N, the sequence number of its first run (its
/// runs follow in the order they ended), the stretch in which all N slots
/// were busy, its length, and the host's view over it (JSON, see
/// `run::host::HostView`); and per run of a batch its slot and when it ran,
/// in seconds from the batch's start. The throughput is computed from
/// these, as `run` computes it.
const V6: &str = "
CREATE TABLE batches (
    cell_id BIGINT NOT NULL REFERENCES cells (id),
    block_index BIGINT NOT NULL,
    concurrency BIGINT NOT NULL,
    first_seq BIGINT NOT NULL,
    busy_from DOUBLE PRECISION NOT NULL,
    busy_to DOUBLE PRECISION NOT NULL,
    elapsed DOUBLE PRECISION NOT NULL,
    host TEXT NOT NULL,
    PRIMARY KEY (cell_id, block_index)
);
CREATE TABLE batch_runs (
    cell_id BIGINT NOT NULL REFERENCES cells (id),
    seq BIGINT NOT NULL,
    slot BIGINT NOT NULL,
    started DOUBLE PRECISION NOT NULL,
    ended DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (cell_id, seq)
);
";

/// The migrations, in order: `MIGRATIONS[i]` brings a store to version i + 1.
pub fn migrations(dialect: Dialect) -> Vec<String> {
    let columns: Vec<String> = METRIC_COLUMNS
        .iter()
        .map(|c| format!("{c} DOUBLE PRECISION"))
        .collect();
    vec![
        dialect.render(&V1.replace("{metric_columns}", &columns.join(",\n    "))),
        dialect.render(V2),
        // 3: the machine checks made before the session (JSON list).
        "ALTER TABLE sessions ADD COLUMN preflight TEXT".to_string(),
        // 4: the answer of `run --minimize/--maximize` (JSON object, see
        // `StoredSearch`).
        "ALTER TABLE sessions ADD COLUMN search TEXT".to_string(),
        // 5: what a `run` session was run with (JSON object, see
        // `run::settings::Settings`); NULL for imports and older sessions.
        "ALTER TABLE sessions ADD COLUMN settings TEXT".to_string(),
        V6.to_string(),
        // 7: the simulated counts of `run --simulate`.
        SIMULATED_COLUMNS
            .iter()
            .map(|c| format!("ALTER TABLE runs ADD COLUMN {c} DOUBLE PRECISION"))
            .collect::<Vec<_>>()
            .join(";\n"),
        // 8: how a `run` session ended beyond its runs (JSON object, see
        // `run::session::Outcome`) and what disturbed each run: what a
        // replay of it needs.
        std::iter::once("ALTER TABLE sessions ADD COLUMN outcome TEXT".to_string())
            .chain(
                DISTURBANCE_COLUMNS
                    .iter()
                    .map(|c| format!("ALTER TABLE runs ADD COLUMN {c} DOUBLE PRECISION")),
            )
            .collect::<Vec<_>>()
            .join(";\n"),
        // 9: a search's race (JSON object, see `StoredRace`): its options
        // and rounds, which its replay cuts the stored runs by.
        "ALTER TABLE sessions ADD COLUMN race TEXT".to_string(),
    ]
}

/// The schema version this cmdscope writes.
pub const LATEST: i64 = 9;

/// What each migration keeps that the store did not keep before, in a
/// reader's words: `KEEPS[i]` came with migration i + 1 (readers say with
/// it what an older store lacks).
pub const KEEPS: &[&str] = &[
    "sessions",
    "suite partitions",
    "machine checks",
    "search answers",
    "session settings",
    "concurrency batches",
    "simulated counts",
    "session outcomes",
    "search races",
];

/// What a store of schema `version` lacks, in a reader's words (empty for
/// the latest): "search answers, session settings and concurrency batches".
pub fn lacks(version: i64) -> String {
    let missing: Vec<&str> = KEEPS
        .iter()
        .skip(version.max(0) as usize)
        .copied()
        .collect();
    match missing.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Creates the version table (idempotent; run inside the migration transaction).
pub const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_a_column_and_latest_matches() {
        for &m in Metric::ALL {
            assert!(
                has_column(m),
                "{} needs a column (and a migration)",
                m.name()
            );
        }
        assert_eq!(migrations(Dialect::Sqlite).len() as i64, LATEST);
        assert_eq!(KEEPS.len() as i64, LATEST, "say what a migration keeps");
        assert_eq!(
            lacks(3),
            "search answers, session settings, concurrency batches, simulated counts, session outcomes \
             and search races"
        );
        assert_eq!(
            lacks(5),
            "concurrency batches, simulated counts, session outcomes and search races"
        );
        assert_eq!(lacks(LATEST), "");
        let pg = &migrations(Dialect::Postgres)[0];
        assert!(pg.contains("BIGSERIAL") && !pg.contains("{id}") && !pg.contains("{metric"));
    }

    /// Readers read an older store as it is (an absent column as NULL, an
    /// absent table as empty), which holds only while every migration
    /// after the first adds and changes nothing.
    #[test]
    fn migrations_after_the_first_only_add() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            for m in &migrations(dialect)[1..] {
                for statement in m.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                    let adds = statement.starts_with("CREATE TABLE ")
                        || statement.starts_with("CREATE INDEX ")
                        || (statement.starts_with("ALTER TABLE ")
                            && statement.contains(" ADD COLUMN ")
                            && !statement.contains("NOT NULL"));
                    assert!(adds, "a migration that does not only add: {statement}");
                }
            }
        }
    }
}
