//! PostgreSQL backend (the synchronous `postgres` crate, no TLS): for teams
//! sharing one store. Every write is a transaction; concurrent writers are
//! the server's business. Bulk inserts use binary `COPY` (small ones
//! multi-row `INSERT … VALUES`), which is what makes a million runs a
//! matter of seconds instead of one round trip per row.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::{Client, Config, NoTls, Statement};

use super::schema::Dialect;
use super::{Backend, Result, StoreError, Value};

/// Rows per multi-row INSERT (PostgreSQL allows 65,535 parameters).
const ROWS_PER_INSERT: usize = 1000;
/// From this many rows on, inserts use binary COPY.
const COPY_FROM_ROWS: usize = 200;

pub struct Postgres {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl Postgres {
    pub fn connect(url: &str, shown: &str) -> Result<Postgres> {
        let mut config = Config::from_str(url).map_err(|err| {
            StoreError(format!(
                "store '{shown}': not a valid PostgreSQL URL: {}",
                one_line(&err.to_string())
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let client = config.connect(NoTls).map_err(|err| {
            StoreError(format!(
                "store '{shown}': cannot connect to PostgreSQL: {}",
                one_line(&describe(&err))
            ))
        })?;
        let mut pg = Postgres {
            client,
            statements: HashMap::new(),
        };
        // A commit returns once the server has it, without waiting for its
        // disk: a killed cmdscope loses nothing committed, only a crash of
        // the server itself can lose the last fraction of a second. This
        // turns the per-run commit from milliseconds into a round trip.
        pg.batch("SET synchronous_commit = off")
            .map_err(|err| StoreError(format!("store '{shown}': {}", err.0)))?;
        Ok(pg)
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(pg_error)?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn bind(stmt: &Statement, params: &[Value]) -> Result<Vec<Box<dyn ToSql + Sync>>> {
        params
            .iter()
            .zip(stmt.params())
            .map(|(v, ty)| typed(v, ty))
            .collect()
    }

    /// A query's statement and all its rows at once (the synchronous
    /// client's row-by-row iterator waits on its runtime once per row,
    /// which costs more than the rows).
    fn rows(&mut self, sql: &str, params: &[Value]) -> Result<(Statement, Vec<postgres::Row>)> {
        let stmt = self.statement(sql)?;
        let bound = Self::bind(&stmt, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        let rows = self.client.query(&stmt, &refs).map_err(pg_error)?;
        Ok((stmt, rows))
    }
}

/// The first column of `row`, of type `ty`, as an integer.
fn first_integer(row: &postgres::Row, ty: &Type, sql: &str) -> Result<Option<i64>> {
    match *ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(0),
        Type::INT4 => row.try_get::<_, Option<i32>>(0).map(|x| x.map(i64::from)),
        _ => return Err(StoreError(format!("column 1 of {sql} is not an integer"))),
    }
    .map_err(pg_error)
}

fn pg_error(err: postgres::Error) -> StoreError {
    StoreError(one_line(&describe(&err)))
}

/// `Error`'s Display is terse ("db error", "error connecting to server");
/// the useful part (the server's message, "Connection refused") is its source.
fn describe(err: &postgres::Error) -> String {
    if let Some(db) = err.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    match std::error::Error::source(err) {
        Some(src) => format!("{err}: {src}"),
        None => err.to_string(),
    }
}

/// The driver's message on one line. Its text is never searched for the
/// password: the password is hidden where the location is printed (`shown`,
/// redacted by parsing), and replacing its characters elsewhere would both
/// mangle the message and tell them (a password `o` turns "connecting" into
/// "c***nnecting"). Neither the driver nor the server echoes a password.
fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

/// A value as the Rust type the parameter's SQL type wants.
fn typed(v: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync>> {
    let mismatch = || StoreError(format!("cannot bind {v:?} to a {ty} parameter"));
    Ok(match *ty {
        Type::INT8 => Box::new(match v {
            Value::Null => None,
            other => Some(other.int().ok_or_else(mismatch)?),
        }),
        Type::INT4 => Box::new(match v {
            Value::Null => None,
            other => {
                Some(i32::try_from(other.int().ok_or_else(mismatch)?).map_err(|_| mismatch())?)
            }
        }),
        Type::FLOAT8 => Box::new(match v {
            Value::Null => None,
            other => Some(other.real().ok_or_else(mismatch)?),
        }),
        Type::TEXT | Type::VARCHAR => Box::new(match v {
            Value::Null => None,
            Value::Text(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Real(f) => Some(f.to_string()),
        }),
        _ => return Err(mismatch()),
    })
}

fn read_row(row: &postgres::Row) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let bad = |err: postgres::Error| StoreError(format!("column {}: {err}", col.name()));
        let v = match *col.type_() {
            Type::INT8 => row
                .try_get::<_, Option<i64>>(i)
                .map_err(bad)?
                .map_or(Value::Null, Value::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)
                .map_err(bad)?
                .map_or(Value::Null, |x| Value::Int(x.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)
                .map_err(bad)?
                .map_or(Value::Null, |x| Value::Int(x.into())),
            Type::FLOAT8 => row
                .try_get::<_, Option<f64>>(i)
                .map_err(bad)?
                .map_or(Value::Null, Value::Real),
            Type::FLOAT4 => row
                .try_get::<_, Option<f32>>(i)
                .map_err(bad)?
                .map_or(Value::Null, |x| Value::Real(x.into())),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)
                .map_err(bad)?
                .map_or(Value::Null, |x| Value::Int(x.into())),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => row
                .try_get::<_, Option<String>>(i)
                .map_err(bad)?
                .map_or(Value::Null, Value::Text),
            ref other => {
                return Err(StoreError(format!(
                    "column {} has unsupported type {other}",
                    col.name()
                )))
            }
        };
        out.push(v);
    }
    Ok(out)
}

impl Backend for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(pg_error)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let stmt = self.statement(sql)?;
        let bound = Self::bind(&stmt, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        self.client.execute(&stmt, &refs).map_err(pg_error)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let (_, rows) = self.rows(sql, params)?;
        rows.iter().map(read_row).collect()
    }

    fn query_pairs(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(i64, f64),
    ) -> Result<()> {
        let (stmt, rows) = self.rows(sql, params)?;
        let [id_col, value_col] = stmt.columns() else {
            return Err(StoreError(format!("query_pairs needs two columns: {sql}")));
        };
        // Typed rows read straight into numbers: no row of values per run.
        for row in &rows {
            let id = first_integer(row, id_col.type_(), sql)?;
            let value = match *value_col.type_() {
                Type::FLOAT8 => row.try_get::<_, Option<f64>>(1),
                Type::INT8 => row
                    .try_get::<_, Option<i64>>(1)
                    .map(|x| x.map(|i| i as f64)),
                _ => return Err(StoreError(format!("column 2 of {sql} is not a number"))),
            }
            .map_err(pg_error)?;
            if let (Some(id), Some(value)) = (id, value) {
                f(id, value);
            }
        }
        Ok(())
    }

    fn query_lists(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(i64, f64),
    ) -> Result<()> {
        let (stmt, rows) = self.rows(sql, params)?;
        let Some(id_col) = stmt.columns().first() else {
            return Err(StoreError(format!("query_lists needs two columns: {sql}")));
        };
        for row in &rows {
            let id = first_integer(row, id_col.type_(), sql)?;
            let values = row
                .try_get::<_, Option<Vec<Option<f64>>>>(1)
                .map_err(pg_error)?;
            if let (Some(id), Some(values)) = (id, values) {
                for v in values.into_iter().flatten() {
                    f(id, v);
                }
            }
        }
        Ok(())
    }

    fn insert_rows(&mut self, table: &str, columns: &[&str], values: &[Value]) -> Result<()> {
        let width = columns.len();
        if width == 0 || values.is_empty() {
            return Ok(());
        }
        if values.len() / width >= COPY_FROM_ROWS {
            return self.copy_rows(table, columns, values);
        }
        for chunk in values.chunks(width * ROWS_PER_INSERT) {
            let rows = chunk.len() / width;
            let tuples: Vec<String> = (0..rows)
                .map(|r| {
                    let marks: Vec<String> =
                        (1..=width).map(|c| format!("${}", r * width + c)).collect();
                    format!("({})", marks.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO {table} ({}) VALUES {}",
                columns.join(", "),
                tuples.join(", ")
            );
            self.execute(&sql, chunk)?;
        }
        Ok(())
    }
}

impl Postgres {
    /// Bulk path: binary `COPY … FROM STDIN`, the fastest way in.
    fn copy_rows(&mut self, table: &str, columns: &[&str], values: &[Value]) -> Result<()> {
        let list = columns.join(", ");
        // The column types, from a statement that reads no row.
        let probe = self.statement(&format!("SELECT {list} FROM {table} LIMIT 0"))?;
        let types: Vec<Type> = probe.columns().iter().map(|c| c.type_().clone()).collect();
        let sink = self
            .client
            .copy_in(&format!("COPY {table} ({list}) FROM STDIN (FORMAT binary)"))
            .map_err(pg_error)?;
        let mut writer = BinaryCopyInWriter::new(sink, &types);
        for row in values.chunks(columns.len()) {
            let bound = row
                .iter()
                .zip(&types)
                .map(|(v, ty)| typed(v, ty))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
            writer.write(&refs).map_err(pg_error)?;
        }
        writer.finish().map(drop).map_err(pg_error)
    }
}
