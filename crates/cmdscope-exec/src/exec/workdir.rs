//! Fresh working directories per run (`--workdir DIR|tmpfs`): created and
//! filled from the template before a run (not timed), removed after it.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, ExecError, Result};
use crate::exec::Credentials;

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Where each run's working directory lives.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workdir {
    /// A fresh directory under this one, per run.
    Under(PathBuf),
    /// A fresh directory on a memory filesystem (tmpfs), per run.
    Tmpfs,
}

/// Whether `path` lies on a memory filesystem (tmpfs or ramfs): the one
/// rule for `--workdir tmpfs` and explain's storage hint.
///
/// statfs on the path itself, not /proc/mounts: the kernel answers for the
/// mount the path really resolves to (symlinks, bind mounts, nested mounts),
/// which matching mount points by prefix gets wrong. ramfs counts: its
/// writes never reach storage either.
pub fn is_tmpfs(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs writes into the zeroed struct; c is NUL-terminated.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return false;
        }
        let t = st.f_type as i64;
        t == TMPFS_MAGIC || t == RAMFS_MAGIC
    }
}

/// A memory filesystem to put run directories on.
pub fn memory_base() -> Result<PathBuf> {
    let mut candidates = vec![PathBuf::from("/dev/shm")];
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR") {
        candidates.push(PathBuf::from(d));
    }
    candidates.push(PathBuf::from("/run/shm"));
    candidates
        .into_iter()
        .find(|p| is_tmpfs(p))
        .ok_or_else(|| ExecError::NoTmpfs.into())
}

/// The directory one cell's runs use, recreated for every run.
#[derive(Debug)]
pub struct RunDir {
    pub path: PathBuf,
    template: Option<PathBuf>,
    owner: Option<(libc::uid_t, libc::gid_t)>,
}

impl RunDir {
    pub fn new(
        cell: usize,
        workdir: &Workdir,
        template: Option<&Path>,
        user: Option<&Credentials>,
    ) -> Result<RunDir> {
        RunDir::named(&cell.to_string(), workdir, template, user)
    }

    /// A directory for one instance slot of a cell run several at once:
    /// each slot has its own, as each run would.
    pub fn for_slot(
        cell: usize,
        slot: usize,
        workdir: &Workdir,
        template: Option<&Path>,
        user: Option<&Credentials>,
    ) -> Result<RunDir> {
        RunDir::named(&format!("{cell}-{slot}"), workdir, template, user)
    }

    fn named(
        suffix: &str,
        workdir: &Workdir,
        template: Option<&Path>,
        user: Option<&Credentials>,
    ) -> Result<RunDir> {
        let base = match workdir {
            Workdir::Tmpfs => memory_base()?,
            Workdir::Under(dir) => {
                let mut created = CREATED.lock().unwrap_or_else(|e| e.into_inner());
                create_base(dir, &mut created).map_err(|source| Error::Write {
                    path: dir.clone(),
                    source,
                })?;
                dir.clone()
            }
        };
        if let Some(t) = template {
            if !t.is_dir() {
                return Err(ExecError::TemplateNotADirectory(t.to_path_buf()).into());
            }
        }
        let path = base.join(format!("cmdscope-{}-{suffix}", std::process::id()));
        let dir = RunDir {
            path,
            template: template.map(Path::to_path_buf),
            owner: user.map(|c| (c.uid, c.gid)),
        };
        // Fail now, before any run, if the directory cannot be made.
        dir.fresh()?;
        Ok(dir)
    }

    /// Empties (recreates) the directory and copies the template into it.
    pub fn fresh(&self) -> Result<()> {
        self.remove();
        let err = |source| Error::Write {
            path: self.path.clone(),
            source,
        };
        {
            // Under the lock that removing created bases takes: another
            // cell's directory may have been the last in a base cmdscope
            // created and removed it with itself, even between the check
            // and the creation here (slots and tests run RunDirs on
            // several threads).
            let mut created = CREATED.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(base) = self.path.parent() {
                if !base.exists() {
                    create_base(base, &mut created).map_err(err)?;
                }
            }
            std::fs::create_dir(&self.path).map_err(err)?;
        }
        if let Some(t) = &self.template {
            copy_tree(t, &self.path).map_err(err)?;
        }
        if let Some((uid, gid)) = self.owner {
            chown_tree(&self.path, uid, gid).map_err(err)?;
        }
        Ok(())
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        self.remove();
        remove_created_bases();
    }
}

/// Directories `--workdir` had to create, deepest last: removed again, when
/// empty, once the run directories in them are gone. What existed before
/// (and anything a command left outside its run directory) stays.
static CREATED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn create_base(dir: &Path, created: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut p = dir;
    while !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err() {
        missing.push(p.to_path_buf());
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    std::fs::create_dir_all(dir)?;
    created.extend(missing.into_iter().rev());
    Ok(())
}

fn remove_created_bases() {
    let mut created = CREATED.lock().unwrap_or_else(|e| e.into_inner());
    // Deepest first; a directory that is not empty (another cell's run
    // directory is still in it) stays registered for a later try.
    let mut kept = Vec::new();
    while let Some(d) = created.pop() {
        if std::fs::remove_dir(&d).is_err() && d.exists() {
            kept.push(d);
        }
    }
    kept.reverse();
    *created = kept;
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            std::fs::set_permissions(&target, entry.metadata()?.permissions())?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn chown_tree(path: &Path, uid: libc::uid_t, gid: libc::gid_t) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path)? {
            chown_tree(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_directories_copy_the_template_and_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let template = root.path().join("t");
        std::fs::create_dir_all(template.join("sub")).unwrap();
        std::fs::write(template.join("sub/a.txt"), "hello").unwrap();
        let dir = RunDir::new(
            3,
            &Workdir::Under(root.path().join("runs")),
            Some(&template),
            None,
        )
        .unwrap();
        std::fs::write(dir.path.join("junk"), "left by a run").unwrap();
        dir.fresh().unwrap();
        assert!(!dir.path.join("junk").exists(), "each run starts fresh");
        assert_eq!(
            std::fs::read_to_string(dir.path.join("sub/a.txt")).unwrap(),
            "hello"
        );
        let p = dir.path.clone();
        drop(dir);
        assert!(!p.exists());
    }

    #[test]
    fn created_base_directories_are_removed_and_existing_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().join("a/b/c");
        let one = RunDir::new(1, &Workdir::Under(base.clone()), None, None).unwrap();
        let two = RunDir::new(2, &Workdir::Under(base.clone()), None, None).unwrap();
        drop(one);
        assert!(base.exists(), "still in use by the second cell");
        drop(two);
        assert!(!root.path().join("a").exists(), "created tree left behind");
        assert!(root.path().exists());
    }

    #[test]
    fn tmpfs_is_detected() {
        if let Ok(base) = memory_base() {
            assert!(is_tmpfs(&base));
        }
        assert!(!is_tmpfs(Path::new(env!("CARGO_MANIFEST_DIR"))) || is_tmpfs(Path::new("/")));
    }

    #[test]
    fn detects_tmpfs() {
        // /dev/shm is tmpfs wherever it exists; the crate's directory is not
        // assumed either way, only that the call does not fail on it.
        if Path::new("/dev/shm").exists() {
            assert!(is_tmpfs(Path::new("/dev/shm")));
        }
        assert!(!is_tmpfs(Path::new("/definitely/not/here")));
        let _ = is_tmpfs(Path::new("."));
    }
}
