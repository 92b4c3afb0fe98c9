//! Where a binary's debug information lives, looked for where the
//! distributions put it, in gdb's order:
//!
//! 1. the build-id tree: `ROOT/.build-id/xx/rest.debug` (Debian's
//!    `-dbgsym` packages, Fedora's `-debuginfo`);
//! 2. the file `.gnu_debuglink` names, with its CRC-32 checked, beside the
//!    binary, in `.debug/` beside it, and under `ROOT/` + the binary's
//!    directory;
//! 3. a debuginfod server, only when `DEBUGINFOD_URLS` names one
//!    (`debuginfod`);
//! 4. MiniDebugInfo: the xz-compressed ELF of function symbols that
//!    Fedora and others keep in `.gnu_debugdata` (symbols, no DWARF).
//!
//! ROOT is `/usr/lib/debug`, or the directories of `CMDSCOPE_DEBUG_DIRS`
//! (colon-separated) in its place.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

use super::debuginfod;
use super::identity::hex;

/// MiniDebugInfo is a few hundred KiB once unpacked; a bound on what a
/// hostile section can make cmdscope allocate.
const MINI_DEBUGINFO_MAX: usize = 256 << 20;

/// Where to look, decided once per profile.
pub struct Search {
    roots: Vec<PathBuf>,
    debuginfod: Option<debuginfod::Client>,
}

/// A debug file found, and how.
#[derive(Clone, Debug)]
pub struct Found {
    pub path: PathBuf,
    /// In words: "build-id tree", ".gnu_debuglink", "debuginfod (URL)",
    /// "debuginfod cache".
    pub how: String,
}

impl Search {
    pub fn from_env() -> Search {
        let roots = match std::env::var("CMDSCOPE_DEBUG_DIRS") {
            Ok(v) if !v.trim().is_empty() => v
                .split(':')
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .collect(),
            _ => vec![PathBuf::from("/usr/lib/debug")],
        };
        Search {
            roots,
            debuginfod: debuginfod::Client::from_env(),
        }
    }

    /// Whether debuginfod may be asked (`DEBUGINFOD_URLS` is set).
    pub fn debuginfod(&self) -> Option<&debuginfod::Client> {
        self.debuginfod.as_ref()
    }

    /// `ROOT/.build-id/xx/rest.debug`.
    pub fn by_build_id(&self, build_id: &[u8]) -> Option<Found> {
        if build_id.len() < 2 {
            return None;
        }
        let id = hex(build_id);
        self.roots.iter().find_map(|root| {
            let path = root
                .join(".build-id")
                .join(&id[..2])
                .join(format!("{}.debug", &id[2..]));
            path.is_file().then(|| Found {
                path,
                how: "build-id tree".into(),
            })
        })
    }

    /// The file `.gnu_debuglink` names, where gdb looks for it, the first
    /// whose CRC-32 matches. `binary` is the mapped file's path.
    pub fn by_debuglink(&self, binary: &Path, name: &str, crc: u32) -> Option<Found> {
        // A name is a file name, never a path out of the search directories.
        if name.is_empty() || name.contains('/') || name == ".." {
            return None;
        }
        let real = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
        let dir = real.parent()?;
        let mut candidates = vec![dir.join(name), dir.join(".debug").join(name)];
        for root in &self.roots {
            let rel = dir.strip_prefix("/").unwrap_or(dir);
            candidates.push(root.join(rel).join(name));
        }
        candidates.into_iter().find_map(|path| {
            if std::fs::canonicalize(&path).ok().as_deref() == Some(real.as_path()) {
                return None;
            }
            let data = std::fs::read(&path).ok()?;
            (crc32fast::hash(&data) == crc).then(|| Found {
                path,
                how: ".gnu_debuglink".into(),
            })
        })
    }

    /// The debug file of `build_id` from debuginfod: Ok(None) when no
    /// server has it or none is named, Err(why) when one could not be asked.
    pub fn by_debuginfod(&self, build_id: &[u8]) -> Result<Option<Found>, String> {
        let Some(client) = &self.debuginfod else {
            return Ok(None);
        };
        match client.debuginfo(build_id) {
            debuginfod::Fetched::File { path, url } => Ok(Some(Found {
                path,
                how: match url {
                    Some(u) => format!("debuginfod ({u})"),
                    None => "debuginfod cache".into(),
                },
            })),
            debuginfod::Fetched::Missing => Ok(None),
            debuginfod::Fetched::Failed(why) => Err(why),
        }
    }
}

/// `.gnu_debuglink`: the debug file's name and its CRC-32.
pub fn debuglink(file: &object::File) -> Option<(String, u32)> {
    let (name, crc) = file.gnu_debuglink().ok()??;
    Some((String::from_utf8_lossy(name).into_owned(), crc))
}

/// The ELF image MiniDebugInfo holds, unpacked.
pub fn mini_debuginfo(file: &object::File) -> Option<Vec<u8>> {
    let section = file.section_by_name(".gnu_debugdata")?;
    let packed = section.data().ok()?;
    let mut out = Capped(Vec::new());
    lzma_rs::xz_decompress(&mut std::io::BufReader::new(packed), &mut out).ok()?;
    Some(out.0)
}

/// A buffer that refuses to grow past `MINI_DEBUGINFO_MAX`.
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MINI_DEBUGINFO_MAX {
            return Err(std::io::Error::other("MiniDebugInfo too large"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(root: &Path) -> Search {
        Search {
            roots: vec![root.to_path_buf()],
            debuginfod: None,
        }
    }

    #[test]
    fn the_build_id_tree_splits_the_first_byte_off() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(".build-id/ab");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cdef.debug"), b"x").unwrap();
        let s = search(root.path());
        let found = s.by_build_id(&[0xab, 0xcd, 0xef]).unwrap();
        assert_eq!(found.path, dir.join("cdef.debug"));
        assert!(s.by_build_id(&[0xab, 0xcd]).is_none());
        assert!(s.by_build_id(&[0xab]).is_none());
    }

    #[test]
    fn a_debuglink_needs_its_crc_and_stays_in_its_directories() {
        let root = tempfile::tempdir().unwrap();
        let bin_dir = tempfile::tempdir().unwrap();
        let binary = bin_dir.path().join("prog");
        std::fs::write(&binary, b"binary").unwrap();
        std::fs::create_dir_all(bin_dir.path().join(".debug")).unwrap();
        std::fs::write(bin_dir.path().join(".debug/prog.debug"), b"debug").unwrap();
        let s = search(root.path());
        let crc = crc32fast::hash(b"debug");
        let found = s.by_debuglink(&binary, "prog.debug", crc).unwrap();
        assert!(found.path.ends_with(".debug/prog.debug"));
        assert!(s.by_debuglink(&binary, "prog.debug", crc ^ 1).is_none());
        assert!(s.by_debuglink(&binary, "../prog.debug", crc).is_none());
        // A link naming the binary itself is not its debug file.
        let own = crc32fast::hash(b"binary");
        assert!(s.by_debuglink(&binary, "prog", own).is_none());
    }

    #[test]
    fn no_server_is_asked_without_debuginfod_urls() {
        let s = search(Path::new("/nonexistent"));
        assert!(matches!(s.by_debuginfod(&[1, 2, 3]), Ok(None)));
    }
}
