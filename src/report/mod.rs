//! Output: the terminal report and the export formats. One file per format.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod site;
pub mod terminal;

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Checks up front that an export file can be written, so a long benchmark
/// does not end in "cannot write". Creates nothing that stays behind.
pub fn check_writable(path: &Path) -> Result<()> {
    if path == Path::new("-") {
        return Ok(());
    }
    if path.is_dir() {
        return Err(Error::Write {
            path: path.into(),
            source: std::io::Error::other("is a directory"),
        });
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    tempfile::NamedTempFile::new_in(dir)
        .map(drop)
        .map_err(|source| Error::Write {
            path: path.into(),
            source,
        })
}

/// Writes `content` to `path` atomically (temporary file + rename), or to
/// stdout for "-". An existing file is never left half-written.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<()> {
    let err = |source| Error::Write {
        path: path.into(),
        source,
    };
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(content)
            .and_then(|_| out.flush())
            .map_err(err);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(content).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_refuses_bad_paths() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(check_writable(&p).is_ok());
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(&dir.path().join("missing/x.json")).is_err());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp files left"
        );
    }
}
