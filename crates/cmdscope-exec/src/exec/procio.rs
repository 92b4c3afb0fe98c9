//! `/proc/<pid>/io`: the I/O counters of a process. The spawner reads a
//! run's counters itself, between `waitid(WNOWAIT)` and the reaping `wait4`;
//! this parser serves the traced and sampled processes of `explain`.
//! Hand-written without allocation: it runs once per process sampled.

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

/// Parses the text of `/proc/<pid>/io`.
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
}
