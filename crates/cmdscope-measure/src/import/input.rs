//! Reading files the user names (results files, env files) without trusting
//! them: a directory or a device is refused, and at most a documented
//! number of bytes is read (docs/RELIABILITY.md), so `/dev/zero` cannot
//! exhaust memory. Pipes work (`compare <(go test -bench .)`); a named pipe
//! with no writer reads as empty instead of blocking forever.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// Most bytes read from one results file (cmdscope or hyperfine JSON, Go
/// benchmark text): far above any real export, far below a machine's memory.
pub const MAX_RESULTS_BYTES: u64 = 64 << 20;

/// Most bytes read from an `--env-file`.
pub const MAX_ENV_FILE_BYTES: u64 = 1 << 20;

/// The contents of `path`, refusing anything but a regular file or a pipe
/// and anything longer than `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let refuse = |what: &str| Error::Read {
        path: path.into(),
        source: std::io::Error::other(what.to_string()),
    };
    let io = |source: std::io::Error| Error::Read {
        path: path.into(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(refuse("is a directory"));
    }
    if kind.is_char_device() || kind.is_block_device() || kind.is_socket() {
        return Err(refuse("not a regular file (a device or socket)"));
    }
    // Non-blocking open: a FIFO nobody writes to does not hang the open;
    // then blocking reads, which see end-of-file when there is no writer.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own, with valid flag arguments.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(refuse(&format!(
            "larger than {} MiB, the most cmdscope reads from one file",
            limit >> 20
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_oversized_files() {
        let e = read_limited(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        assert!(read_limited(Path::new("/"), 1024).is_err());
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let e = read_limited(&big, 1024).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        assert_eq!(read_limited(&big, 2048).unwrap().len(), 2048);
    }

    #[test]
    fn a_fifo_without_writer_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: valid path string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let start = std::time::Instant::now();
        assert!(read_limited(&fifo, 1024).unwrap().is_empty());
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
