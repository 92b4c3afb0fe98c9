//! Where a store is: an SQLite file or a PostgreSQL connection string,
//! never one taken for the other, and the files no output may write.

use std::path::PathBuf;

use super::redact::{self, redact};
use super::{Result, StoreError};

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
        let base = crate::dirs::user_dir("XDG_DATA_HOME", ".local/share")?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
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
    }
}
