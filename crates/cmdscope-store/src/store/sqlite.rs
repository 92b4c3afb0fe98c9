//! SQLite backend (rusqlite, SQLite bundled): one file, WAL journal so that
//! readers never block writers and a commit is one append to the log,
//! `synchronous = NORMAL` (a committed transaction survives the process
//! being killed; only a power loss can take the last ones), and a busy
//! timeout so that concurrent cmdscope processes wait for each other.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::schema::Dialect;
use super::{Backend, Result, StoreError, Value};

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Sqlite {
    conn: Connection,
    /// A reader that made SQLite create the store's `-wal` and `-shm`
    /// files: the store, to remove them again on close (see `Drop`).
    tidy: Option<std::path::PathBuf>,
}

/// `path` with `suffix` appended to its file name (`-wal`, `-shm`).
fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    name.into()
}

/// An SQLite URI opening `path` as immutable (`?`, `#`, `%` and bytes
/// outside printable ASCII escaped).
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_graphic() && !matches!(b, b'?' | b'#' | b'%') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push_str("?immutable=1");
    out
}

/// Whether we may write `path`.
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// A file that is not a regular one, in words.
fn file_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

impl Drop for Sqlite {
    /// A reader leaves nothing behind. SQLite removes `-wal` and `-shm`
    /// when the last connection closes, but only a connection that may
    /// write does: so when this reader created them, a writable connection
    /// is opened and closed, and SQLite itself, under its own lock, removes
    /// them if no other connection uses them (a writer that started
    /// meanwhile keeps them). The log holds nothing to copy back, so the
    /// store's bytes do not change.
    fn drop(&mut self) {
        let Some(path) = self.tidy.take() else {
            return;
        };
        if let Ok(memory) = Connection::open_in_memory() {
            drop(std::mem::replace(&mut self.conn, memory));
        }
        if let Ok(conn) = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ) {
            // A read joins the log, so that this close is the last one.
            let _ = conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()));
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

fn from_ref(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Text(String::from_utf8_lossy(b).into_owned()),
    }
}

fn e(err: rusqlite::Error) -> StoreError {
    let text = match &err {
        rusqlite::Error::SqliteFailure(f, Some(msg))
            if f.code == rusqlite::ErrorCode::NotADatabase =>
        {
            format!("{msg} (not a cmdscope store, or damaged)")
        }
        rusqlite::Error::SqliteFailure(f, None) if f.code == rusqlite::ErrorCode::NotADatabase => {
            "file is not a database (not a cmdscope store, or damaged)".into()
        }
        other => other.to_string(),
    };
    StoreError(text.replace('\n', " "))
}

/// `$N` placeholders to SQLite's `?N`.
fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

/// What the database holds, judged by its tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contents {
    /// No table at all: a new (or empty) file a writer may set up.
    Empty,
    /// cmdscope's `schema_version` table is there.
    Store,
    /// Tables, none of them cmdscope's: somebody else's database.
    Foreign,
}

fn contents(conn: &Connection) -> rusqlite::Result<Contents> {
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(if names.is_empty() {
        Contents::Empty
    } else if names.iter().any(|n| n == "schema_version") {
        Contents::Store
    } else {
        Contents::Foreign
    })
}

fn foreign(shown: &str) -> StoreError {
    StoreError(format!(
        "store '{shown}': not a cmdscope store (an SQLite database with other tables); \
         it was left unchanged"
    ))
}

impl Sqlite {
    /// Opens the store for reading only: the file must exist and be a
    /// cmdscope store; nothing is created, no journal mode is changed.
    pub fn open_read_only(path: &Path, shown: &str) -> Result<Sqlite> {
        let fail =
            |what: &str, err: StoreError| StoreError(format!("store '{shown}': {what}: {}", err.0));
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(m) => {
                return Err(StoreError(format!(
                    "store '{shown}': not a regular file ({})",
                    file_kind(&m)
                )))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError(format!(
                    "store '{shown}' does not exist (nothing recorded there yet?)"
                )))
            }
            Err(err) => return Err(StoreError(format!("store '{shown}': cannot open: {err}"))),
        }
        // A store in WAL mode is read through its `-wal` and `-shm` files,
        // which SQLite creates if they are missing. Missing, they mean no
        // connection has the store open; where we may not create them (a
        // read-only directory or store), nobody but root could write it
        // either, and it is opened as immutable: no lock, no files.
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let quiet = !beside(path, "-wal").exists() && !beside(path, "-shm").exists();
        let immutable = quiet && !(writable(dir) && writable(path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = if immutable {
            Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .map_err(|err| fail("cannot open", e(err)))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|err| fail("cannot open", e(err)))?;
        // Made before the first read, so that a store refused below (or
        // too damaged to read) is tidied too.
        let db = Sqlite {
            conn,
            tidy: (quiet && !immutable).then(|| path.to_path_buf()),
        };
        match contents(&db.conn).map_err(|err| fail("cannot open", e(err)))? {
            Contents::Store => Ok(db),
            Contents::Empty => Err(StoreError(format!(
                "store '{shown}': not a cmdscope store (an empty database)"
            ))),
            Contents::Foreign => Err(foreign(shown)),
        }
    }

    /// Opens the store for writing, creating the file if needed. A database
    /// with tables that are not cmdscope's is refused before anything in it
    /// changes (tables, journal mode).
    pub fn open(path: &Path, shown: &str) -> Result<Sqlite> {
        let fail =
            |what: &str, err: StoreError| StoreError(format!("store '{shown}': {what}: {}", err.0));
        // SQLite would open a device or FIFO and create its journal beside
        // it (`/dev/full-journal`): only a regular file, or none yet, is a
        // store.
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(StoreError(format!(
                    "store '{shown}': not a regular file ({}): an SQLite store is a file; \
                     it was left unchanged",
                    file_kind(&m)
                )))
            }
            _ => {}
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|err| fail("cannot open", e(err)))?;
        // SQLite quietly opens a file it may not write read-only; the first
        // read would then create `-wal` and `-shm` beside it and the first
        // write fail. Refused now, before anything is read, nothing is left.
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(StoreError(format!(
                "store '{shown}': cannot write it (the file, or its file system, is read-only \
                 for this user); it was left unchanged"
            )));
        }
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|err| fail("cannot open", e(err)))?;
        match contents(&conn).map_err(|err| fail("cannot open", e(err)))? {
            Contents::Foreign => return Err(foreign(shown)),
            // Refused before the journal mode changes, which rewrites the
            // file's header: a newer store is left byte for byte as it was.
            Contents::Store => {
                let newer = conn
                    .query_row("SELECT MAX(version) FROM schema_version", [], |r| {
                        r.get::<_, Option<i64>>(0)
                    })
                    .ok()
                    .flatten()
                    .filter(|&v| v > super::schema::LATEST);
                if let Some(v) = newer {
                    return Err(super::newer_schema(shown, v));
                }
            }
            Contents::Empty => {}
        }
        // Switching to WAL needs a moment of exclusive access; the busy
        // handler covers it, and a few retries cover the rest.
        let mut tries = 0;
        loop {
            match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
                Ok(_) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy && tries < 50 =>
                {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => return Err(fail("cannot open", e(err))),
            }
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|err| fail("cannot open", e(err)))?;
        Ok(Sqlite { conn, tidy: None })
    }
}

impl Backend for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(e)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let mut stmt = self.conn.prepare_cached(&placeholders(sql)).map_err(e)?;
        stmt.execute(rusqlite::params_from_iter(params.iter()))
            .map(|n| n as u64)
            .map_err(e)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let mut stmt = self.conn.prepare_cached(&placeholders(sql)).map_err(e)?;
        let n = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(e)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(e)? {
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(from_ref(row.get_ref(i).map_err(e)?));
            }
            out.push(r);
        }
        Ok(out)
    }

    fn query_pairs(
        &mut self,
        sql: &str,
        params: &[Value],
        f: &mut dyn FnMut(i64, f64),
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&placeholders(sql)).map_err(e)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(e)?;
        while let Some(row) = rows.next().map_err(e)? {
            let id = match row.get_ref(0).map_err(e)? {
                ValueRef::Integer(i) => i,
                ValueRef::Real(x) => x as i64,
                _ => continue,
            };
            match row.get_ref(1).map_err(e)? {
                ValueRef::Real(x) => f(id, x),
                ValueRef::Integer(i) => f(id, i as f64),
                _ => {}
            }
        }
        Ok(())
    }

    fn insert_rows(&mut self, table: &str, columns: &[&str], values: &[Value]) -> Result<()> {
        if columns.is_empty() || values.is_empty() {
            return Ok(());
        }
        let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            columns.join(", "),
            marks.join(", ")
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(e)?;
        for row in values.chunks(columns.len()) {
            stmt.execute(rusqlite::params_from_iter(row.iter()))
                .map_err(e)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_placeholders() {
        assert_eq!(
            placeholders("SELECT $1, $12 FROM t WHERE a = '$'"),
            "SELECT ?1, ?12 FROM t WHERE a = '$'"
        );
    }
}
