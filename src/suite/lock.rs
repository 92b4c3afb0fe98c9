//! One measuring suite per host at a time: two benchmarks on one machine
//! corrupt each other's timings, and a Slurm array (or a CI runner) may put
//! several partitions on one node. A partition holds an exclusive `flock`
//! on a lock file while it measures; the kernel releases it when the
//! process ends, however it ends.
//!
//! The file is `$CMDSCOPE_HOST_LOCK` when set, else
//! `/run/lock/cmdscope.lock` (`/run/lock` is world-writable and cleared at
//! boot on current Linux distributions), else `/tmp/cmdscope.lock`.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result, SuiteError};

/// Held while alive.
#[derive(Debug)]
pub struct HostLock {
    _file: File,
}

/// Where the lock file is.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("CMDSCOPE_HOST_LOCK").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let run_lock = Path::new("/run/lock");
    let writable = std::fs::metadata(run_lock).is_ok_and(|m| m.is_dir())
        && std::ffi::CString::new("/run/lock")
            // SAFETY: access() reads a NUL-terminated path we own.
            .map(|c| unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0)
            .unwrap_or(false);
    if writable {
        run_lock.join("cmdscope.lock")
    } else {
        PathBuf::from("/tmp/cmdscope.lock")
    }
}

fn open(path: &Path) -> Result<(File, bool)> {
    let created = !path.exists();
    let rw = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(path);
    match rw {
        Ok(f) => {
            if created {
                // Other users must be able to take the same lock.
                let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666));
            }
            Ok((f, true))
        }
        // Someone else's file that we may not write: flock works on a
        // read-only descriptor too.
        Err(_) => File::open(path)
            .map(|f| (f, false))
            .map_err(|source| Error::Read {
                path: path.into(),
                source,
            }),
    }
}

fn try_lock(f: &File) -> std::io::Result<bool> {
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => Ok(false),
        _ => Err(e),
    }
}

/// Takes the host lock, waiting for its holder; `who` is written into the
/// file (what a waiting cmdscope shows). Says once on stderr that it waits.
pub fn acquire(path: &Path, who: &str) -> Result<HostLock> {
    let (mut file, writable) = open(path)?;
    let lock_error = |source: std::io::Error| {
        Error::from(SuiteError::Lock {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut said = false;
    crate::exec::signals::install();
    while !try_lock(&file).map_err(lock_error)? {
        if crate::exec::signals::received().is_some() {
            return Err(Error::Interrupted);
        }
        if !said {
            let mut holder = String::new();
            let _ = file.rewind();
            let _ = (&file).read_to_string(&mut holder);
            let holder = holder.trim();
            crate::eprint_line!(
                "cmdscope: waiting for the host lock {} held by {}",
                path.display(),
                if holder.is_empty() {
                    "another process"
                } else {
                    holder
                }
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if writable {
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = writeln!(file, "PID {} ({who})", std::process::id());
        let _ = file.flush();
    }
    Ok(HostLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn second_holder_waits_until_the_first_releases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.lock");
        let first = acquire(&path, "run a, partition 1/2").unwrap();
        let content = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            content.trim(),
            format!("PID {} (run a, partition 1/2)", std::process::id())
        );
        let (tx, rx) = mpsc::channel();
        let p = path.clone();
        let waiter = std::thread::spawn(move || {
            // A separate open file description: flock excludes it even
            // within one process.
            let l = acquire(&p, "run a, partition 2/2").unwrap();
            tx.send(()).unwrap();
            drop(l);
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(400)).is_err(),
            "the second holder did not wait"
        );
        drop(first);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the second holder got the lock once it was released");
        waiter.join().unwrap();
    }
}
