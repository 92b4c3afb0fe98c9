//! `/proc/<pid>/io` of a zombie child, read between `waitid(WNOWAIT)` and the
//! reaping `wait4`. Hand-written without allocation because it is on the
//! measurement hot path: one open, one read, one close per run.

/// I/O accounting of one process (and its reaped descendants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcIo {
    pub rchar: u64,
    pub wchar: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Bytes that were written to the page cache but truncated away before
    /// reaching storage; subtracted by users who want net writes.
    pub cancelled_write_bytes: u64,
}

/// Formats "/proc/<pid>/io\0" into `buf` and returns the C string slice.
fn proc_io_path(pid: libc::pid_t, buf: &mut [u8; 32]) -> &std::ffi::CStr {
    let prefix = b"/proc/";
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 12];
    let mut n = pid.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut at = prefix.len();
    for i in (0..len).rev() {
        buf[at] = digits[i];
        at += 1;
    }
    let suffix = b"/io\0";
    buf[at..at + suffix.len()].copy_from_slice(suffix);
    // The buffer holds exactly one NUL, at the end of what we wrote.
    std::ffi::CStr::from_bytes_with_nul(&buf[..at + suffix.len()]).unwrap_or_default()
}

/// Opens `/proc/<pid>/io` (-1 if it cannot be). Done right after spawning,
/// while the child runs, so the path lookup is off the critical path; the
/// content is generated when it is read.
pub fn open(pid: libc::pid_t) -> i32 {
    let mut path_buf = [0u8; 32];
    let path = proc_io_path(pid, &mut path_buf);
    // SAFETY: path is NUL-terminated.
    unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) }
}

/// Reads the counters through a descriptor from [`open`]; the process must
/// not be reaped yet.
pub fn read_fd(fd: i32) -> Option<ProcIo> {
    if fd < 0 {
        return None;
    }
    let mut data = [0u8; 512];
    // SAFETY: data is a valid buffer of its length.
    let n = unsafe { libc::pread(fd, data.as_mut_ptr().cast(), data.len(), 0) };
    if n <= 0 {
        return None;
    }
    Some(parse(&data[..n as usize]))
}

/// Reads the I/O counters of `pid`; None if the kernel does not provide them.
pub fn read(pid: libc::pid_t) -> Option<ProcIo> {
    let fd = open(pid);
    let io = read_fd(fd);
    if fd >= 0 {
        // SAFETY: fd was opened above and is closed once.
        unsafe { libc::close(fd) };
    }
    io
}

pub fn parse(text: &[u8]) -> ProcIo {
    let mut io = ProcIo::default();
    for line in text.split(|&b| b == b'\n') {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let value = line[colon + 1..]
            .iter()
            .filter(|b| b.is_ascii_digit())
            .fold(0u64, |acc, &b| {
                acc.wrapping_mul(10).wrapping_add(u64::from(b - b'0'))
            });
        match &line[..colon] {
            b"rchar" => io.rchar = value,
            b"wchar" => io.wchar = value,
            b"read_bytes" => io.read_bytes = value,
            b"write_bytes" => io.write_bytes = value,
            b"cancelled_write_bytes" => io.cancelled_write_bytes = value,
            _ => {}
        }
    }
    io
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_io() {
        let text = b"rchar: 1948\nwchar: 12\nsyscr: 7\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        let io = parse(text);
        assert_eq!(io.rchar, 1948);
        assert_eq!(io.wchar, 12);
        assert_eq!(io.read_bytes, 4096);
        assert_eq!(io.write_bytes, 8192);
    }

    #[test]
    fn formats_paths() {
        let mut buf = [0u8; 32];
        assert_eq!(proc_io_path(1, &mut buf).to_bytes(), b"/proc/1/io");
        assert_eq!(
            proc_io_path(4194304, &mut buf).to_bytes(),
            b"/proc/4194304/io"
        );
    }

    #[test]
    fn reads_own_process() {
        let io = read(std::process::id() as libc::pid_t).expect("/proc/self/io");
        assert!(io.rchar > 0);
    }
}
