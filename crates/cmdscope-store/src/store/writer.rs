//! The store writer: a helper process (`cmdscope __store-writer`) that owns
//! the store connection while `cmdscope run` measures.
//!
//! Why a process: the kernel reports a child's peak memory as at least the
//! high-water mark of the process it was spawned from (the memory of the
//! spawning process counts until `exec`), so every page cmdscope itself
//! touches shows up in the peak RSS of small commands. The SQLite and
//! PostgreSQL code and caches are megabytes; kept in a helper, they never
//! enter cmdscope's own footprint, and the measured peaks stay those of the
//! commands.
//!
//! Protocol: one JSON message per line on the helper's stdin, one answer
//! per line on its stdout (`ok`, or `err <message>`). Runs are the
//! exception: each is one binary record of fixed size ([`RunRecord`],
//! both ends being the same executable), sent without waiting (answered
//! only with an `err`), so the measuring loop pays one pipe write per run,
//! not a commit, and neither end formats or parses text per run. The
//! helper commits the runs it has read when its input has nothing more for
//! the moment, in one transaction, then lets the next ones gather for
//! [`RUNS_PAUSE`]: a commit and a wake-up every few milliseconds rather than
//! per run, which is CPU time taken from the runs on a small machine. It
//! reads to the end of its input, and commits what it holds there, even
//! after cmdscope dies, so `kill -9` of cmdscope still leaves every finished
//! run in the store; a store error surfaces at the next answered message. The helper ignores SIGINT and SIGTERM (a Ctrl-C is cmdscope's to
//! handle) and exits at end of input.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Finish, Location, NewCell, NewSession, Store, StoreError};
use crate::metrics::{Metric, Sample};
use crate::run::host::HostView;
use crate::run::session::{BatchRecord, Span};

/// The hidden subcommand that runs [`serve`].
pub const SUBCOMMAND: &str = "__store-writer";

/// A run, exactly (values as IEEE bits: NaN, "not measured", survives).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunMsg {
    pub run_index: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub values: Vec<u64>,
    /// `Disturbance`'s CPU wait and steal, as bits.
    #[serde(default)]
    pub disturbance: (Option<u64>, Option<u64>),
}

impl RunMsg {
    pub fn from_sample(s: &Sample) -> RunMsg {
        RunMsg {
            run_index: s.run_index,
            exit_code: s.exit_code,
            signal: s.signal,
            timed_out: s.timed_out,
            values: s.values.iter().map(|v| v.to_bits()).collect(),
            disturbance: (
                s.disturbance.cpu_wait.map(f64::to_bits),
                s.disturbance.steal.map(f64::to_bits),
            ),
        }
    }

    pub fn to_sample(&self) -> Sample {
        let mut s = Sample::new(self.run_index);
        s.exit_code = self.exit_code;
        s.signal = self.signal;
        s.timed_out = self.timed_out;
        for (i, &bits) in self.values.iter().enumerate().take(Metric::COUNT) {
            s.values[i] = f64::from_bits(bits);
        }
        s.disturbance.cpu_wait = self.disturbance.0.map(f64::from_bits);
        s.disturbance.steal = self.disturbance.1.map(f64::from_bits);
        s
    }
}

/// A batch, exactly (times as IEEE bits, as a run's values).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BatchMsg {
    pub block: usize,
    pub concurrency: usize,
    pub first_seq: usize,
    /// (slot, start bits, end bits) per run, in the batch's order.
    pub spans: Vec<(usize, u64, u64)>,
    pub busy: (u64, u64),
    pub elapsed: u64,
    pub host: HostView,
}

impl BatchMsg {
    pub fn from_batch(b: &BatchRecord) -> BatchMsg {
        BatchMsg {
            block: b.block,
            concurrency: b.concurrency,
            first_seq: b.first_sample,
            spans: b
                .spans
                .iter()
                .map(|s| (s.slot, s.start.to_bits(), s.end.to_bits()))
                .collect(),
            busy: (b.busy.0.to_bits(), b.busy.1.to_bits()),
            elapsed: b.elapsed.to_bits(),
            host: b.host.clone(),
        }
    }

    pub fn to_batch(&self) -> BatchRecord {
        BatchRecord {
            concurrency: self.concurrency,
            block: self.block,
            first_sample: self.first_seq,
            spans: self
                .spans
                .iter()
                .map(|&(slot, start, end)| Span {
                    slot,
                    start: f64::from_bits(start),
                    end: f64::from_bits(end),
                })
                .collect(),
            busy: (f64::from_bits(self.busy.0), f64::from_bits(self.busy.1)),
            elapsed: f64::from_bits(self.elapsed),
            host: self.host.clone(),
        }
    }
}

/// One measured run on the pipe, as the measuring loop sends it: a fixed
/// number of bytes, written with one `write` (less than `PIPE_BUF`, so
/// never interleaved or cut), and read back exactly (values as IEEE bits).
/// It starts with a zero byte, which no JSON message starts with.
pub struct RunRecord;

impl RunRecord {
    /// The first byte of a record.
    pub const TAG: u8 = 0;
    /// Tag, cell (u32), sequence number (i64), run index (u64), the
    /// spawner's serial number of a scheduled run (u64, `u64::MAX` for a
    /// run made alone), flags (u8: exit code, signal, timed out), exit
    /// code and signal (i32), every metric's value (u64 bits), then what
    /// disturbed the run, CPU wait and steal (u64 bits, NaN for none),
    /// little-endian.
    pub const LEN: usize = 1 + 4 + 8 + 8 + 8 + 1 + 4 + 4 + 8 * Metric::COUNT + 8 + 8;

    pub fn encode(cell: usize, seq: i64, s: &Sample) -> [u8; RunRecord::LEN] {
        let mut out = [0u8; RunRecord::LEN];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&[RunRecord::TAG]);
        put(&(cell as u32).to_le_bytes());
        put(&seq.to_le_bytes());
        put(&s.run_index.to_le_bytes());
        put(&s.scheduled.unwrap_or(u64::MAX).to_le_bytes());
        let flags = u8::from(s.exit_code.is_some())
            | u8::from(s.signal.is_some()) << 1
            | u8::from(s.timed_out) << 2;
        put(&[flags]);
        put(&s.exit_code.unwrap_or(0).to_le_bytes());
        put(&s.signal.unwrap_or(0).to_le_bytes());
        for v in &s.values {
            put(&v.to_bits().to_le_bytes());
        }
        for v in [s.disturbance.cpu_wait, s.disturbance.steal] {
            put(&v.unwrap_or(f64::NAN).to_bits().to_le_bytes());
        }
        out
    }

    /// The cell, sequence number and run of a record.
    pub fn decode(b: &[u8; RunRecord::LEN]) -> (usize, i64, Sample) {
        let mut at = 0;
        let mut take = |n: usize| {
            at += n;
            &b[at - n..at]
        };
        let _tag = take(1);
        let u32_ = |x: &[u8]| u32::from_le_bytes(x.try_into().unwrap_or_default());
        let u64_ = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or_default());
        let cell = u32_(take(4)) as usize;
        let seq = u64_(take(8)) as i64;
        let mut s = Sample::new(u64_(take(8)));
        s.scheduled = Some(u64_(take(8))).filter(|&n| n != u64::MAX);
        let flags = take(1)[0];
        let exit_code = u32_(take(4)) as i32;
        let signal = u32_(take(4)) as i32;
        s.exit_code = (flags & 1 != 0).then_some(exit_code);
        s.signal = (flags & 2 != 0).then_some(signal);
        s.timed_out = flags & 4 != 0;
        for v in &mut s.values {
            *v = f64::from_bits(u64_(take(8)));
        }
        let mut disturbance = || Some(f64::from_bits(u64_(take(8)))).filter(|v| !v.is_nan());
        s.disturbance.cpu_wait = disturbance();
        s.disturbance.steal = disturbance();
        (cell, seq, s)
    }
}

const _: () = assert!(RunRecord::LEN <= libc::PIPE_BUF);

/// A session's start on the pipe: seconds since the epoch (0 for a clock
/// before it, as the store reads them).
pub(super) mod unix_seconds {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        let secs = t
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        s.serialize_f64(secs)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let secs = f64::deserialize(d)?;
        let secs = if secs.is_finite() && secs > 0.0 {
            secs
        } else {
            0.0
        };
        Ok(UNIX_EPOCH + Duration::try_from_secs_f64(secs).unwrap_or_default())
    }
}

/// What cmdscope asks of the helper. Cells are numbered by position.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Msg {
    Open {
        location: String,
    },
    Begin {
        session: Box<NewSession>,
        cells: Vec<NewCell>,
    },
    Replace {
        cell: usize,
        runs: Vec<RunMsg>,
    },
    Finish {
        status: String,
        stop_reason: Option<String>,
        shell_overhead: Option<f64>,
        #[serde(default)]
        preflight: Option<String>,
        #[serde(default)]
        outcome: Option<String>,
    },
    /// The answer of a search session, and its race (`StoredRace`).
    Search {
        search: String,
        #[serde(default)]
        race: Option<String>,
    },
    /// A batch of concurrency mode, after its runs; sent without waiting,
    /// as runs are.
    Batch {
        cell: usize,
        batch: BatchMsg,
    },
    /// A per-run series of a metric without a column (`run --monitor`'s
    /// counts), one value per run in order (None: no value for that run).
    Extra {
        cell: usize,
        metric: String,
        unit: String,
        values: Vec<Option<f64>>,
    },
    /// The spawner's socket, passed on the control channel just before
    /// this message: a copy of cmdscope's end, kept until the session
    /// ends, whose unread reports are stored should cmdscope die
    /// ([`State::recover`]). Sent without waiting.
    Watch,
    /// The session no longer needs the spawner's socket watched.
    Unwatch,
    /// Scheduled runs handed to the spawner, from serial number `first`
    /// on: the stored cell of each, None for a run not stored (a warm-up,
    /// a calibration). Sent without waiting, before the spawner has them.
    Scheduled {
        first: u64,
        cells: Vec<Option<usize>>,
    },
}

/// The control channel's descriptor in the helper: a datagram socket on
/// which cmdscope passes descriptors ([`Msg::Watch`]).
const CONTROL_FD: i32 = 3;

/// How long the helper waits for each unread report once cmdscope is
/// gone: the spawner writes them as soon as the run it kills has ended.
const RECOVERY_PATIENCE: Duration = Duration::from_secs(10);

/// cmdscope's end of the pipe.
pub struct Link {
    /// The store's location for messages (password removed).
    shown: String,
    /// The control channel: descriptors for the helper ([`Link::watch`]).
    control: Option<std::os::fd::OwnedFd>,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Link {
    /// Starts the helper (this same executable) and opens the store in it.
    pub fn open(location: &Location) -> Result<Link, StoreError> {
        let shown = location.display();
        let fail = |what: String| StoreError(format!("store '{shown}': {what}"));
        let exe = std::env::current_exe()
            .map_err(|e| fail(format!("cannot find cmdscope's executable: {e}")))?;
        // A datagram pair: ours, and the helper's end, its CONTROL_FD.
        let (control, theirs) = crate::exec::socket_pair(libc::SOCK_DGRAM)
            .map_err(|e| fail(format!("cannot make the store writer's channel: {e}")))?;
        let mut command = Command::new(exe);
        command
            .arg(SUBCOMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        {
            use std::os::fd::AsRawFd;
            use std::os::unix::process::CommandExt;
            let theirs = theirs.as_raw_fd();
            // SAFETY: only dup2, async-signal-safe, between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    if libc::dup2(theirs, CONTROL_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let mut child = command
            .spawn()
            .map_err(|e| fail(format!("cannot start the store writer: {e}")))?;
        drop(theirs);
        // Not part of any benchmark: a timeout's clean-up must spare it.
        crate::exec::tree::protect(child.id() as libc::pid_t);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail("cannot talk to the store writer".into()));
        };
        let mut link = Link {
            shown: shown.clone(),
            control: Some(control),
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            line: String::new(),
        };
        let location = match location {
            Location::Sqlite(p) => format!("sqlite:{}", p.display()),
            Location::Postgres(url) => url.clone(),
        };
        link.call(&Msg::Open { location })?;
        Ok(link)
    }

    /// Sends one run as a [`RunRecord`], without waiting for an answer:
    /// one `write`, so a finished run is in the pipe (and so stored) even
    /// if cmdscope is killed right after. A dead helper shows at once as a
    /// broken pipe; a store error at the next `call`.
    pub fn send_run(&mut self, cell: usize, seq: i64, sample: &Sample) -> Result<(), StoreError> {
        let gone = || {
            StoreError(format!(
                "store '{}': the store writer stopped unexpectedly",
                self.shown
            ))
        };
        let record = RunRecord::encode(cell, seq, sample);
        let stdin = self.stdin.as_mut().ok_or_else(gone)?;
        stdin.write_all(&record).map_err(|_| gone())
    }

    /// Where concurrency mode's slots write the runs of a batch of `cell`
    /// as each ends, numbered from `first_seq` by the order they ended:
    /// each a [`RunRecord`] in one `write` to a copy of the pipe, so that
    /// records from several threads never mix, and a `kill -9` loses no
    /// instance that had ended. Nothing else is written to the pipe while
    /// a batch runs (its `Batch` message follows its runs).
    pub fn run_sink(&self, cell: usize, first_seq: i64) -> Result<RunSink, StoreError> {
        use std::os::fd::AsFd;
        let pipe = self
            .stdin
            .as_ref()
            .and_then(|s| s.as_fd().try_clone_to_owned().ok())
            .ok_or_else(|| {
                StoreError(format!(
                    "store '{}': the store writer stopped unexpectedly",
                    self.shown
                ))
            })?;
        Ok(RunSink {
            pipe,
            cell,
            first_seq,
            shown: self.shown.clone(),
            error: std::sync::OnceLock::new(),
        })
    }

    /// Sends a message without waiting for an answer (a batch: answered
    /// only with an error, at the next `call`).
    pub fn send(&mut self, msg: &Msg) -> Result<(), StoreError> {
        let gone = StoreError(format!(
            "store '{}': the store writer stopped unexpectedly",
            self.shown
        ));
        let mut text = serde_json::to_string(msg)
            .map_err(|e| StoreError(format!("cannot encode a store message: {e}")))?;
        text.push('\n');
        let stdin = self.stdin.as_mut().ok_or_else(|| gone.clone())?;
        stdin
            .write_all(text.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|_| gone)
    }

    /// Gives the helper a copy of the spawner's socket `socket`
    /// ([`Msg::Watch`]), so that a `kill -9` of cmdscope loses no run the
    /// spawner made from a schedule. Errors are the next `call`'s.
    pub fn watch(&mut self, socket: std::os::fd::RawFd) -> Result<(), StoreError> {
        use std::os::fd::AsRawFd;
        let Some(control) = &self.control else {
            return Ok(());
        };
        crate::exec::send_descriptor(control.as_raw_fd(), socket)
            .map_err(|e| StoreError(format!("cannot pass the spawner's socket: {e}")))?;
        self.send(&Msg::Watch)
    }

    /// Sends a message and waits for its answer.
    pub fn call(&mut self, msg: &Msg) -> Result<(), StoreError> {
        self.send(msg)?;
        let gone = || {
            StoreError(format!(
                "store '{}': the store writer stopped unexpectedly",
                self.shown
            ))
        };
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) | Err(_) => Err(gone()),
            Ok(_) => {
                let answer = self.line.trim_end();
                if answer == "ok" {
                    Ok(())
                } else {
                    Err(StoreError(
                        answer.strip_prefix("err ").unwrap_or(answer).to_string(),
                    ))
                }
            }
        }
    }
}

/// A batch's runs, written to the store writer from the threads that made
/// them ([`Link::run_sink`]).
pub struct RunSink {
    pipe: std::os::fd::OwnedFd,
    cell: usize,
    first_seq: i64,
    shown: String,
    /// The first write that failed (the writer is gone).
    error: std::sync::OnceLock<StoreError>,
}

impl RunSink {
    /// Why a run could not be written, if one could not.
    pub fn error(&self) -> Option<StoreError> {
        self.error.get().cloned()
    }
}

impl crate::run::events::InstanceSink for RunSink {
    fn instance(&self, index: usize, sample: &Sample) {
        use std::os::fd::AsRawFd;
        if self.error.get().is_some() {
            return;
        }
        let record = RunRecord::encode(self.cell, self.first_seq + index as i64, sample);
        loop {
            // SAFETY: one write of a local buffer to a descriptor we own;
            // below PIPE_BUF, so whole or not at all.
            let n =
                unsafe { libc::write(self.pipe.as_raw_fd(), record.as_ptr().cast(), record.len()) };
            if n == record.len() as isize {
                return;
            }
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            let _ = self.error.set(StoreError(format!(
                "store '{}': the store writer stopped unexpectedly",
                self.shown
            )));
            return;
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The session ends here, whether finished or not: the helper must
        // not read the spawner's socket, which cmdscope still owns.
        if self.control.take().is_some() {
            let _ = self.send(&Msg::Unwatch);
        }
        // End of input: the helper exits.
        self.stdin = None;
        let _ = self.child.wait();
    }
}

/// The helper's side: serves messages until end of input. Exit status 0.
/// How long the helper lets runs gather after committing some.
pub const RUNS_PAUSE: Duration = Duration::from_millis(2);

/// Runs committed in one transaction at most.
const RUNS_BATCH: usize = 512;

/// Whether more input can be read without waiting.
fn input_ready(input: &BufReader<std::fs::File>) -> bool {
    if !input.buffer().is_empty() {
        return true;
    }
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no wait.
    unsafe { libc::poll(&mut fd, 1, 0) > 0 }
}

fn reply(out: &mut impl Write, answer: Result<(), StoreError>) -> bool {
    let text = match answer {
        Ok(()) => "ok\n".to_string(),
        Err(e) => format!("err {}\n", e.0.replace('\n', " ")),
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_ok()
}

pub fn serve() -> i32 {
    // SAFETY: setting the disposition of two signals to "ignore".
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: descriptor 0 is this process's standard input, which nothing
    // else in this process reads.
    let mut input = BufReader::with_capacity(1 << 16, unsafe { std::fs::File::from_raw_fd(0) });
    let mut out = std::io::stdout().lock();
    let mut state = State::default();
    let mut line = String::new();
    let mut record = [0u8; RunRecord::LEN];
    loop {
        // End of input (cmdscope finished, or died): keep what it sent,
        // then what it did not read.
        let Some(&first) = input.fill_buf().ok().and_then(|b| b.first()) else {
            let _ = state.commit();
            state.recover();
            break;
        };
        let answer = if first == RunRecord::TAG {
            // Records are written whole (one write below PIPE_BUF): a
            // short one can only be a foreign writer's; keep what came.
            if input.read_exact(&mut record).is_err() {
                let _ = state.commit();
                state.recover();
                break;
            }
            match state.take_runs(RunRecord::decode(&record), &input) {
                None => continue,
                Some(failed) => failed,
            }
        } else {
            line.clear();
            if !matches!(input.read_line(&mut line), Ok(n) if n > 0) {
                let _ = state.commit();
                state.recover();
                break;
            }
            match serde_json::from_str::<Msg>(&line) {
                // Unanswered too; they concern runs still to come.
                Ok(Msg::Watch) => {
                    state.watch();
                    continue;
                }
                Ok(Msg::Unwatch) => {
                    state.watched = None;
                    continue;
                }
                Ok(Msg::Scheduled { first, cells }) => {
                    state.scheduled(first, cells);
                    continue;
                }
                // A batch, like runs, is answered only with an error; its
                // runs, sent before it, are committed first.
                Ok(Msg::Batch { cell, batch }) => {
                    match state.commit().and_then(|_| state.add_batch(cell, &batch)) {
                        Ok(()) => continue,
                        Err(e) => Err(e),
                    }
                }
                // Every answered message comes after the runs sent before it.
                Ok(msg) => state.commit().and_then(|_| state.handle(msg)),
                Err(e) => Err(StoreError(format!("bad store message: {e}"))),
            }
        };
        if !reply(&mut out, answer) {
            break;
        }
    }
    0
}

#[derive(Default)]
struct State {
    store: Option<Store>,
    session: Option<i64>,
    cells: Vec<i64>,
    /// Runs read and not yet committed: (cell, sequence number, run).
    pending: Vec<(usize, i64, Sample)>,
    pending_runs: usize,
    /// The copy of the spawner's socket ([`Msg::Watch`]).
    watched: Option<std::os::fd::OwnedFd>,
    /// Scheduled runs not yet sent by cmdscope, by serial number, in
    /// order: the stored cell of each, or None.
    tags: std::collections::VecDeque<(u64, Option<usize>)>,
    /// The highest serial number of the runs received.
    last_serial: Option<u64>,
    /// The next sequence number of each cell, and the next run index.
    next_seq: Vec<i64>,
    next_run_index: u64,
}

impl State {
    fn store(&mut self) -> Result<&mut Store, StoreError> {
        self.store
            .as_mut()
            .ok_or_else(|| StoreError("store not open".into()))
    }

    fn cell(&self, i: usize) -> Result<i64, StoreError> {
        self.cells
            .get(i)
            .copied()
            .ok_or_else(|| StoreError(format!("no cell {i} in this session")))
    }

    /// Takes runs in. They are committed, in one transaction with those
    /// before them, when the input has nothing more for the moment or a
    /// batch is full; then the helper pauses for [`RUNS_PAUSE`] so that
    /// the next ones gather. Some(error) when that commit failed.
    fn take_runs(
        &mut self,
        (cell, first_seq, run): (usize, i64, Sample),
        input: &BufReader<std::fs::File>,
    ) -> Option<Result<(), StoreError>> {
        if let Some(n) = self.next_seq.get_mut(cell) {
            *n = (*n).max(first_seq + 1);
        }
        self.next_run_index = self.next_run_index.max(run.run_index + 1);
        if let Some(serial) = run.scheduled {
            self.last_serial = Some(serial);
            while self.tags.front().is_some_and(|&(s, _)| s <= serial) {
                self.tags.pop_front();
            }
        }
        self.pending_runs += 1;
        self.pending.push((cell, first_seq, run));
        if self.pending_runs < RUNS_BATCH && input_ready(input) {
            return None;
        }
        let committed = self.commit();
        std::thread::sleep(RUNS_PAUSE);
        committed.err().map(Err)
    }

    /// Commits the pending runs in one transaction.
    fn commit(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending_runs = 0;
        let ids = pending
            .iter()
            .map(|(cell, _, _)| self.cell(*cell))
            .collect::<Result<Vec<i64>, StoreError>>()?;
        self.store()?.atomically(|store| {
            for ((_, seq, run), id) in pending.iter().zip(ids) {
                store.add_runs(id, *seq, std::slice::from_ref(run))?;
            }
            Ok::<(), StoreError>(())
        })
    }

    /// Takes the spawner's socket from the control channel; a new spawner
    /// numbers its runs from 0 again.
    fn watch(&mut self) {
        self.watched = crate::exec::receive_descriptor(CONTROL_FD).ok();
        self.tags.clear();
        self.last_serial = None;
    }

    fn scheduled(&mut self, first: u64, cells: Vec<Option<usize>>) {
        let after = self.last_serial;
        self.tags.extend(
            (first..)
                .zip(cells)
                .filter(|&(s, _)| after.is_none_or(|l| s > l)),
        );
    }

    /// After cmdscope's death: stores the runs the spawner made from its
    /// schedules whose reports cmdscope never read (or read and never
    /// sent), as cmdscope would have stored them: in their cells, after
    /// the runs it sent, in the order made. Warm-ups and runs not stored
    /// are passed over. Without a watched socket (the session ended, or
    /// never scheduled a run) there is nothing to do.
    fn recover(&mut self) {
        let Some(socket) = self.watched.take() else {
            return;
        };
        if self.session.is_none() {
            return;
        }
        use std::os::fd::AsRawFd;
        for (serial, mut run) in crate::exec::unread_reports(socket.as_raw_fd(), RECOVERY_PATIENCE)
        {
            // Sent by cmdscope already (peeked at, not yet consumed).
            if self.last_serial.is_some_and(|l| serial <= l) {
                continue;
            }
            let Some(cell) = self.tag(serial) else {
                continue;
            };
            let Some(seq) = self.next_seq.get_mut(cell) else {
                continue;
            };
            run.run_index = self.next_run_index;
            self.next_run_index += 1;
            self.pending.push((cell, *seq, run));
            *seq += 1;
        }
        let _ = self.commit();
    }

    /// The stored cell of scheduled run `serial`, if it is stored.
    fn tag(&self, serial: u64) -> Option<usize> {
        let i = self.tags.binary_search_by_key(&serial, |&(s, _)| s).ok()?;
        self.tags[i].1
    }

    fn add_batch(&mut self, cell: usize, batch: &BatchMsg) -> Result<(), StoreError> {
        let id = self.cell(cell)?;
        self.store()?.add_batch(id, &batch.to_batch())
    }

    fn handle(&mut self, msg: Msg) -> Result<(), StoreError> {
        match msg {
            Msg::Open { location } => {
                self.store = Some(Store::open(&Location::parse(&location)?)?);
            }
            Msg::Begin { session, cells } => {
                let store = self.store()?;
                let id = store.begin_session(&session)?;
                let ids = store.add_cells(id, &cells)?;
                self.session = Some(id);
                self.next_seq = vec![0; ids.len()];
                self.next_run_index = 0;
                self.cells = ids;
            }
            Msg::Batch { cell, batch } => self.add_batch(cell, &batch)?,
            Msg::Watch => self.watch(),
            Msg::Unwatch => self.watched = None,
            Msg::Scheduled { first, cells } => self.scheduled(first, cells),
            Msg::Replace { cell, runs } => {
                let id = self.cell(cell)?;
                let samples: Vec<Sample> = runs.iter().map(RunMsg::to_sample).collect();
                self.store()?.replace_runs(id, &samples)?;
            }
            Msg::Extra {
                cell,
                metric,
                unit,
                values,
            } => {
                let id = self.cell(cell)?;
                let series = super::ExtraSeries {
                    metric,
                    unit,
                    higher_is_better: false,
                    values: values.iter().map(|v| v.unwrap_or(f64::NAN)).collect(),
                };
                self.store()?.add_extra(id, &series)?;
            }
            Msg::Search { search, race } => {
                let session = self
                    .session
                    .ok_or_else(|| StoreError("no session for the search".into()))?;
                let search = super::StoredSearch::from_json(&search)
                    .ok_or_else(|| StoreError("bad search answer".into()))?;
                let race = match race {
                    Some(r) => Some(
                        super::StoredRace::from_json(&r)
                            .ok_or_else(|| StoreError("bad search race".into()))?,
                    ),
                    None => None,
                };
                self.store()?.set_search(session, &search, race.as_ref())?;
            }
            Msg::Finish {
                status,
                stop_reason,
                shell_overhead,
                preflight,
                outcome,
            } => {
                self.watched = None;
                let session = self
                    .session
                    .ok_or_else(|| StoreError("no session to finish".into()))?;
                self.store()?.finish_session(
                    session,
                    &Finish {
                        status,
                        stop_reason,
                        shell_overhead,
                        preflight,
                        outcome,
                    },
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_record_is_read_back_exactly() {
        let mut s = Sample::new(u64::MAX - 1);
        s.exit_code = Some(-3);
        s.signal = None;
        s.timed_out = true;
        s.set(Metric::WallTime, 0.1 + 0.2);
        s.set(Metric::UserTime, -0.0);
        s.values[Metric::COUNT - 1] = f64::from_bits(0x7ff8_0000_0000_0001);
        let record = RunRecord::encode(70_000, i64::MAX, &s);
        assert_eq!(record[0], RunRecord::TAG);
        let (cell, seq, back) = RunRecord::decode(&record);
        assert_eq!((cell, seq), (70_000, i64::MAX));
        assert_eq!(
            (back.run_index, back.exit_code, back.signal, back.timed_out),
            (u64::MAX - 1, Some(-3), None, true)
        );
        let bits = |x: &Sample| x.values.map(f64::to_bits);
        assert_eq!(
            bits(&back),
            bits(&s),
            "every value, NaN payloads and -0 included"
        );
        let mut killed = Sample::new(0);
        killed.signal = Some(9);
        let (_, _, back) = RunRecord::decode(&RunRecord::encode(0, 0, &killed));
        assert_eq!(
            (back.exit_code, back.signal, back.timed_out),
            (None, Some(9), false)
        );
    }

    #[test]
    fn runs_survive_the_wire_exactly() {
        let mut s = Sample::new(7);
        s.exit_code = Some(3);
        s.timed_out = true;
        s.set(Metric::WallTime, 0.1 + 0.2);
        s.disturbance.cpu_wait = Some(0.1 + 0.7);
        let (cell, seq, raw) = RunRecord::decode(&RunRecord::encode(2, 5, &s));
        assert_eq!(
            (cell, seq, raw.get(Metric::WallTime)),
            (2, 5, Some(0.1 + 0.2))
        );
        assert_eq!(
            (raw.disturbance.cpu_wait, raw.disturbance.steal),
            (Some(0.1 + 0.7), None)
        );
        let text = serde_json::to_string(&Msg::Replace {
            cell: 1,
            runs: vec![RunMsg::from_sample(&s)],
        })
        .unwrap();
        let Msg::Replace { runs, .. } = serde_json::from_str(&text).unwrap() else {
            panic!("wrong message");
        };
        let back = runs[0].to_sample();
        assert_eq!(back.get(Metric::WallTime), Some(0.1 + 0.2));
        assert_eq!(back.disturbance.cpu_wait, Some(0.1 + 0.7));
        assert_eq!(back.get(Metric::UserTime), None);
        assert_eq!(
            (back.run_index, back.exit_code, back.timed_out),
            (7, Some(3), true)
        );
    }

    #[test]
    fn batches_survive_the_wire_exactly() {
        let b = BatchRecord {
            concurrency: 2,
            block: 3,
            first_sample: 8,
            spans: vec![
                Span {
                    slot: 1,
                    start: 0.1 + 0.2,
                    end: 1.0 / 3.0,
                },
                Span {
                    slot: 0,
                    start: 0.0,
                    end: f64::MIN_POSITIVE,
                },
            ],
            busy: (0.1 + 0.2, 2.0 / 3.0),
            elapsed: 1e-300,
            host: HostView {
                seconds: 0.7,
                cpu_busy: Some(1.25),
                cpus: 2,
                ..HostView::default()
            },
        };
        let text = serde_json::to_string(&Msg::Batch {
            cell: 1,
            batch: BatchMsg::from_batch(&b),
        })
        .unwrap();
        let Msg::Batch { cell, batch } = serde_json::from_str(&text).unwrap() else {
            panic!("wrong message");
        };
        let back = batch.to_batch();
        assert_eq!(cell, 1);
        assert_eq!(back.spans, b.spans);
        assert_eq!(back.busy, b.busy);
        assert_eq!(back.elapsed, b.elapsed);
        assert_eq!(back.host, b.host);
        assert_eq!((back.block, back.concurrency, back.first_sample), (3, 2, 8));
    }
}
