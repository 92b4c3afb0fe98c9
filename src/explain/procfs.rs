//! What the tracer reads from `/proc` about a stopped tracee: per-thread CPU
//! times and I/O (at its exit event), argv and environment size (at its
//! exec event), and where a file descriptor points. Parsers are pure and
//! unit-tested; readers return `None` when the task is gone.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::exec::procio::{self, ProcIo};

/// The fields of `/proc/<pid>/stat` explain uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// User and system time in clock ticks (field 14 and 15).
    pub utime: u64,
    pub stime: u64,
    /// Address range of the environment strings (fields 50 and 51; since
    /// Linux 3.5, shown to a tracer).
    pub env_start: u64,
    pub env_end: u64,
}

impl Stat {
    /// Bytes of environment strings (with their NULs) the kernel copied at exec.
    pub fn env_bytes(&self) -> Option<u64> {
        (self.env_end > self.env_start && self.env_start > 0).then(|| self.env_end - self.env_start)
    }
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses
/// and may itself contain spaces and parentheses: fields are counted from
/// the last ')'.
pub fn parse_stat(text: &[u8]) -> Option<Stat> {
    let close = text.iter().rposition(|&b| b == b')')?;
    let rest = text.get(close + 1..)?;
    let fields: Vec<&[u8]> = rest
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .collect();
    // fields[0] is field 3 (state): field N is fields[N - 3].
    let num = |n: usize| -> Option<u64> {
        let f = fields.get(n - 3)?;
        std::str::from_utf8(f).ok()?.parse().ok()
    };
    Some(Stat {
        utime: num(14)?,
        stime: num(15)?,
        env_start: num(50).unwrap_or(0),
        env_end: num(51).unwrap_or(0),
    })
}

fn read_small(path: &str, limit: usize) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut buf = Vec::with_capacity(limit.min(4096));
    file.take(limit as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// `/proc/<pid>/stat`: process-wide times, the environment range.
pub fn stat(pid: i32) -> Option<Stat> {
    parse_stat(&read_small(&format!("/proc/{pid}/stat"), 4096)?)
}

/// The thread's own times (not its thread group's, not its children's).
pub fn task_stat(tid: i32) -> Option<Stat> {
    parse_stat(&read_small(&format!("/proc/{tid}/task/{tid}/stat"), 4096)?)
}

/// The thread's own I/O counters (the process-wide file adds reaped children).
pub fn task_io(tid: i32) -> Option<ProcIo> {
    let text = read_small(&format!("/proc/{tid}/task/{tid}/io"), 1024)?;
    if text.is_empty() {
        return None;
    }
    Some(procio::parse(&text))
}

/// Words of a command line, NUL-separated, kept bounded for display.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Argv {
    /// The first words, each NUL-terminated, at most `ARGV_BYTES` in all.
    pub joined: Vec<u8>,
    /// How many words there were in all.
    pub argc: u32,
    /// True when words or bytes were left out.
    pub truncated: bool,
}

/// At most this many bytes of argv are kept per exec (display only).
pub const ARGV_BYTES: usize = 1024;

impl Argv {
    /// Builds from NUL-separated words (the format of `/proc/<pid>/cmdline`).
    pub fn from_cmdline(raw: &[u8], complete: bool) -> Argv {
        let mut argv = Argv {
            truncated: !complete,
            ..Argv::default()
        };
        let body = raw.strip_suffix(&[0]).unwrap_or(raw);
        if body.is_empty() && raw.is_empty() {
            return argv;
        }
        for word in body.split(|&b| b == 0) {
            argv.argc += 1;
            if argv.joined.len() + word.len() < ARGV_BYTES {
                argv.joined.extend_from_slice(word);
                argv.joined.push(0);
            } else {
                argv.truncated = true;
            }
        }
        argv
    }

    pub fn words(&self) -> impl Iterator<Item = &[u8]> {
        let body = self.joined.strip_suffix(&[0]).unwrap_or(&self.joined);
        body.split(|&b| b == 0)
            .filter(move |_| !self.joined.is_empty())
    }

    pub fn first(&self) -> Option<&[u8]> {
        self.words().next()
    }
}

/// `/proc/<pid>/cmdline`, bounded.
pub fn cmdline(pid: i32) -> Argv {
    const LIMIT: usize = 64 * 1024;
    match read_small(&format!("/proc/{pid}/cmdline"), LIMIT) {
        Some(raw) => {
            let complete = raw.len() < LIMIT;
            Argv::from_cmdline(&raw, complete)
        }
        None => Argv::default(),
    }
}

/// Where descriptor `fd` of `pid` points (a path, or e.g. "pipe:[123]").
pub fn fd_target(pid: i32, fd: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// The executable of `pid`.
pub fn exe(pid: i32) -> Option<Vec<u8>> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_awkward_names() {
        let mut text = b"4242 (we(ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 ".to_vec();
        // fields 14..=51: utime 7, stime 3, then filler up to env_start/env_end.
        let mut rest: Vec<String> = vec!["7".into(), "3".into()];
        for n in 16..=49 {
            rest.push(n.to_string());
        }
        rest.push("140737488347000".into()); // 50 env_start
        rest.push("140737488351096".into()); // 51 env_end
        rest.push("0".into()); // 52 exit_code
        text.extend_from_slice(rest.join(" ").as_bytes());
        text.push(b'\n');
        let stat = parse_stat(&text).expect("parses");
        assert_eq!(stat.utime, 7);
        assert_eq!(stat.stime, 3);
        assert_eq!(stat.env_bytes(), Some(4096));
    }

    #[test]
    fn refuses_garbage() {
        assert_eq!(parse_stat(b"no parenthesis here"), None);
        assert_eq!(parse_stat(b"1 (x) S 1 2"), None);
    }

    #[test]
    fn reads_own_stat_and_io() {
        let me = std::process::id() as i32;
        let stat = stat(me).expect("own stat");
        assert!(stat.env_bytes().is_some());
        assert!(task_stat(me).is_some());
        assert!(task_io(me).is_some());
        let argv = cmdline(me);
        assert!(argv.argc >= 1);
        assert!(exe(me).is_some());
    }

    #[test]
    fn argv_is_bounded() {
        let a = Argv::from_cmdline(b"sh\0-c\0/bin/true\0", true);
        assert_eq!(a.argc, 3);
        assert_eq!(
            a.words().collect::<Vec<_>>(),
            vec![&b"sh"[..], b"-c", b"/bin/true"]
        );
        assert!(!a.truncated);
        let long = vec![b'x'; 600];
        let mut raw = Vec::new();
        for _ in 0..3 {
            raw.extend_from_slice(&long);
            raw.push(0);
        }
        let b = Argv::from_cmdline(&raw, true);
        assert_eq!(b.argc, 3);
        assert_eq!(b.words().count(), 1);
        assert!(b.truncated);
        assert_eq!(Argv::from_cmdline(b"", true).words().count(), 0);
        // An empty argument is still a word.
        assert_eq!(Argv::from_cmdline(b"a\0\0", true).argc, 2);
    }
}
