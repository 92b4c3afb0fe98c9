//! `--monitor COMMAND --match REGEX`: a command run alongside the traced one
//! (say `busctl --system monitor NAME`) whose output lines are counted per
//! pattern while the traced command runs.
//!
//! The monitor runs through `sh -c` in its own process group with stdout
//! (and stderr) piped. A reader thread timestamps each line against the
//! moment the traced command was released: lines before it are counted
//! apart ("before start"), lines after it count. The monitor is killed
//! (its whole process group) a grace period after the traced command ends;
//! what is left in the pipe then was printed before the kill and counts.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use regex::bytes::Regex;

use crate::error::{Error, ExplainError, Result};
use crate::exec::signals::spawn_quiet_thread;

/// The environment variable that marks a monitor's processes.
const MARKER: &str = "CMDSCOPE_MONITOR";

/// Longest line kept for matching; the rest of a longer line is skipped.
const MAX_LINE: usize = 64 * 1024;
/// How much of the monitor's stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;

/// Per-pattern line counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lines matching each pattern while the command ran (plus grace).
    pub during: Vec<u64>,
    /// Lines matching each pattern before the command started (not counted).
    pub before: Vec<u64>,
    /// All lines read, during / before.
    pub lines: u64,
    pub lines_before: u64,
}

/// Counts lines against patterns; what the reader thread feeds.
#[derive(Debug)]
pub struct Counter {
    patterns: Vec<Regex>,
    pub counts: Counts,
}

impl Counter {
    pub fn new(patterns: Vec<Regex>) -> Counter {
        let n = patterns.len();
        Counter {
            patterns,
            counts: Counts {
                during: vec![0; n],
                before: vec![0; n],
                lines: 0,
                lines_before: 0,
            },
        }
    }

    /// One line (without its newline); `during` says whether the traced
    /// command had started when it was read.
    pub fn feed(&mut self, line: &[u8], during: bool) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let (counts, lines) = if during {
            (&mut self.counts.during, &mut self.counts.lines)
        } else {
            (&mut self.counts.before, &mut self.counts.lines_before)
        };
        *lines += 1;
        for (re, count) in self.patterns.iter().zip(counts.iter_mut()) {
            if re.is_match(line) {
                *count += 1;
            }
        }
    }
}

/// Compiles the --match patterns; an invalid one is a usage error.
pub fn compile(patterns: &[String]) -> Result<Vec<Regex>> {
    patterns
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|e| {
                let detail = e.to_string();
                let last = detail
                    .lines()
                    .map(str::trim)
                    .rfind(|l| !l.is_empty())
                    .unwrap_or("invalid");
                ExplainError::BadRegex {
                    pattern: p.clone(),
                    reason: last.into(),
                }
                .into()
            })
        })
        .collect()
}

/// Reads lines from `input` until EOF, each bounded to `MAX_LINE` bytes,
/// calling `f` for each (without the newline).
pub fn read_lines(input: impl Read, mut f: impl FnMut(&[u8])) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    let mut skipping = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if buf.is_empty() {
            if !line.is_empty() {
                f(&line);
            }
            break;
        }
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i)),
            None => (buf, None),
        };
        if !skipping {
            let room = MAX_LINE.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                skipping = true;
            }
        }
        let used = newline.map_or(chunk.len(), |i| i + 1);
        reader.consume(used);
        if newline.is_some() {
            f(&line);
            line.clear();
            skipping = false;
        }
    }
}

/// What the monitor counted.
#[derive(Clone, Debug)]
pub struct Report {
    pub command: String,
    pub patterns: Vec<String>,
    pub counts: Counts,
    /// How the monitor ended: exit code or signal (None if unknown).
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// True when cmdscope killed it at the end (the usual case).
    pub killed: bool,
}

/// A monitor that is running.
pub struct Monitor {
    command: String,
    /// `CMDSCOPE_MONITOR=<cmdscope's pid>.<n>` in its environment: what it
    /// started is found by it wherever it went (see `exec::tree`).
    marker: Vec<u8>,
    sources: Vec<String>,
    pid: i32,
    start: Arc<Mutex<Option<Instant>>>,
    counter: Arc<Mutex<Counter>>,
    done: mpsc::Receiver<()>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    status: Option<i32>,
    /// Killed and unprotected (by `finish`, else when dropped).
    cleaned: bool,
}

fn decode(status: i32) -> (Option<i32>, Option<i32>) {
    if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    }
}

impl Monitor {
    /// Starts `command` through `sh -c`, and gives it `wait` to get ready.
    /// A monitor that fails in that time (non-zero exit) is an error.
    pub fn start(
        command: &str,
        sources: &[String],
        patterns: Vec<Regex>,
        wait: Duration,
    ) -> Result<Monitor> {
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let value = format!("{}.{n}", std::process::id());
        let marker = format!("{MARKER}={value}").into_bytes();
        // What it leaves running comes back to cmdscope, to be killed when
        // it ends, as a run's leftovers are.
        crate::exec::become_subreaper();
        let mut launch = Command::new("sh");
        launch
            .arg("-c")
            .arg(command)
            .env(MARKER, &value)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: prctl is async-signal-safe. Its orphans stay in its tree
        // while it runs, even those that clear their environment.
        unsafe {
            launch.pre_exec(|| {
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
                Ok(())
            });
        }
        // Marked before it starts: nothing it starts is taken for a run's.
        crate::exec::tree::protect_marked(&marker);
        let mut child = launch.spawn().map_err(|source| {
            crate::exec::tree::unprotect_marked(&marker);
            Error::Spawn {
                command: format!("sh -c {command}"),
                source,
            }
        })?;
        let pid = child.id() as i32;
        // Not a run's leftover: the session's cleanup leaves it (and what
        // it starts) alone.
        crate::exec::tree::protect_tree(pid);
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        // The tracer's waitpid(-1) may reap the monitor; its status is then
        // handed back through `finish`. The Child handle is not used again.
        drop(child);

        let start = Arc::new(Mutex::new(None::<Instant>));
        let counter = Arc::new(Mutex::new(Counter::new(patterns)));
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let mut monitor = Monitor {
            command: command.to_string(),
            marker,
            sources: sources.to_vec(),
            pid,
            start: start.clone(),
            counter: counter.clone(),
            done,
            stderr_tail: stderr_tail.clone(),
            status: None,
            cleaned: false,
        };
        if let Some(out) = stdout {
            let spawned = spawn_quiet_thread(move || {
                read_lines(out, |line| {
                    let during = start.lock().map(|s| s.is_some()).unwrap_or(true);
                    if let Ok(mut c) = counter.lock() {
                        c.feed(line, during);
                    }
                });
                let _ = tx.send(());
            });
            if let Err(source) = spawned {
                monitor.kill();
                return Err(Error::Io(source));
            }
        }
        if let Some(err) = stderr {
            let tail = stderr_tail;
            let _ = spawn_quiet_thread(move || {
                read_lines(err, |line| {
                    if let Ok(mut t) = tail.lock() {
                        t.extend_from_slice(line);
                        t.push(b'\n');
                        if t.len() > STDERR_TAIL {
                            let cut = t.len() - STDERR_TAIL;
                            t.drain(..cut);
                        }
                    }
                });
            });
        }
        // Let it get ready; fail early if it cannot start.
        let until = Instant::now() + wait;
        loop {
            if let Some(status) = monitor.try_wait() {
                let (code, _) = decode(status);
                if code != Some(0) {
                    return Err(monitor.failure(status));
                }
                break;
            }
            if Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(monitor)
    }

    fn try_wait(&mut self) -> Option<i32> {
        if self.status.is_none() {
            let mut status = 0;
            // SAFETY: non-blocking wait for our own child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if r == self.pid {
                self.status = Some(status);
            }
        }
        self.status
    }

    fn failure(&self, status: i32) -> Error {
        let (code, signal) = decode(status);
        let how = match (code, signal) {
            (Some(127), _) => "command not found (exit status 127)".to_string(),
            (Some(126), _) => "not executable (exit status 126)".to_string(),
            (Some(c), _) => format!("exit status {c}"),
            (_, Some(s)) => format!("killed by signal {s}"),
            _ => "ended".to_string(),
        };
        let said = self.stderr_tail.lock().ok().and_then(|t| {
            String::from_utf8_lossy(&t)
                .lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .map(str::to_string)
        });
        ExplainError::MonitorFailedToStart {
            command: self.command.clone(),
            how,
            said,
        }
        .into()
    }

    /// The traced command is released now: lines from here on count.
    pub fn mark_start(&self, at: Instant) {
        if let Ok(mut s) = self.start.lock() {
            *s = Some(at);
        }
    }

    /// Stops protecting what is gone now.
    fn clean(&mut self) {
        crate::exec::tree::unprotect(self.pid);
        crate::exec::tree::unprotect_marked(&self.marker);
        self.cleaned = true;
    }

    /// Kills the monitor with everything it started: its process group,
    /// its tree, and what left both (marked).
    fn kill(&mut self) {
        if self.status.is_none() || !self.try_group_empty() {
            // SAFETY: the monitor's own process group (it was started with
            // process_group(0), so its pgid is its pid).
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
        if self.status.is_none() {
            crate::exec::tree::kill_descendants(self.pid);
        }
        crate::exec::tree::kill_marked(&self.marker);
    }

    fn try_group_empty(&self) -> bool {
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::kill(-self.pid, 0) != 0 }
    }

    /// Ends the monitor after `grace`, and returns its counts. `reaped` is
    /// the monitor's wait status if the tracer reaped it meanwhile. A
    /// monitor whose command was not found is an error.
    pub fn finish(mut self, grace: Duration, reaped: Option<i32>) -> Result<Report> {
        if self.status.is_none() {
            self.status = reaped;
        }
        std::thread::sleep(grace);
        let already_ended = self.try_wait().is_some();
        self.kill();
        if self.status.is_none() {
            let mut status = 0;
            // SAFETY: blocking wait for our own child, which was just SIGKILLed.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r == self.pid {
                self.status = Some(status);
            }
        }
        self.clean();
        // The reader ends at EOF, once every process holding the pipe is
        // gone; one that escaped the group could hold it: do not wait forever.
        let _ = self.done.recv_timeout(Duration::from_secs(2));
        if let Some(status) = self.status {
            if matches!(decode(status).0, Some(126 | 127)) {
                return Err(self.failure(status));
            }
        }
        let counts = self
            .counter
            .lock()
            .map(|c| c.counts.clone())
            .unwrap_or_default();
        let (exit_code, signal) = self.status.map_or((None, None), decode);
        Ok(Report {
            command: self.command.clone(),
            patterns: self.sources.clone(),
            counts,
            exit_code,
            signal,
            killed: !already_ended,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Closes the counting window opened by `mark_start` and returns the
    /// lines matched in it, per pattern (counting starts from zero again).
    pub fn take_window(&self) -> Vec<u64> {
        if let Ok(mut s) = self.start.lock() {
            *s = None;
        }
        self.counter
            .lock()
            .map(|mut c| {
                let n = c.counts.during.len();
                std::mem::replace(&mut c.counts.during, vec![0; n])
            })
            .unwrap_or_default()
    }

    /// True once the monitor has exited or closed its output.
    pub fn ended(&mut self) -> bool {
        self.try_wait().is_some() || !matches!(self.done.try_recv(), Err(mpsc::TryRecvError::Empty))
    }

    /// How it ended, for a message: "exit status 1", "killed by signal 9".
    pub fn end_status(&mut self) -> String {
        match self.try_wait().map(decode) {
            Some((Some(c), _)) => format!("exit status {c}"),
            Some((_, Some(s))) => format!("killed by signal {s}"),
            _ => "its output closed".to_string(),
        }
    }
}

/// A monitor given up on (it failed to start, or an error ended the
/// session) goes with all it started.
impl Drop for Monitor {
    fn drop(&mut self) {
        if !self.cleaned {
            self.kill();
            if self.status.is_none() {
                let mut status = 0;
                // SAFETY: blocking wait for our own child, just SIGKILLed.
                unsafe { libc::waitpid(self.pid, &mut status, 0) };
            }
            self.clean();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_it_was_fed() {
        let patterns = compile(&["^Get$".into(), "GetAll".into(), "Introspect".into()]).unwrap();
        let mut c = Counter::new(patterns);
        c.feed(b"Get", false);
        for line in [
            &b"Get"[..],
            b"GetAll",
            b"Get\r",
            b"member=Introspect",
            b"noise",
        ] {
            c.feed(line, true);
        }
        assert_eq!(c.counts.during, vec![2, 1, 1]);
        assert_eq!(c.counts.before, vec![1, 0, 0]);
        assert_eq!(c.counts.lines, 5);
        assert_eq!(c.counts.lines_before, 1);
    }

    #[test]
    fn invalid_patterns_are_usage_errors() {
        let e = compile(&["(unclosed".into()]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--match '(unclosed'"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }

    #[test]
    fn reads_bounded_lines() {
        let mut input = Vec::new();
        input.extend_from_slice(b"one\ntwo\n");
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend_from_slice(b"\nlast");
        let mut lines = Vec::new();
        read_lines(&input[..], |l| lines.push(l.to_vec()));
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], b"one");
        assert_eq!(lines[1], b"two");
        assert_eq!(lines[2].len(), MAX_LINE);
        assert_eq!(lines[3], b"last");
    }

    #[test]
    fn a_monitor_that_cannot_start_is_an_error() {
        let e = Monitor::start(
            "exec /nonexistent/monitor-program",
            &[],
            Vec::new(),
            Duration::from_secs(5),
        )
        .err()
        .expect("fails");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("failed to start"), "{e}");
    }

    #[test]
    fn counts_only_after_start() {
        let patterns = compile(&["^Get$".into()]).unwrap();
        let m = Monitor::start(
            "echo Get; sleep 1; echo Get; echo Get; sleep 30",
            &["^Get$".into()],
            patterns,
            Duration::from_millis(500),
        )
        .unwrap();
        m.mark_start(Instant::now());
        let r = m.finish(Duration::from_millis(1500), None).unwrap();
        assert_eq!(r.counts.during, vec![2]);
        assert_eq!(r.counts.before, vec![1]);
        assert!(r.killed);
    }
}
