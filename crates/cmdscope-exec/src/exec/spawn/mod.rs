//! Spawning and waiting for one benchmarked process.
//!
//! Commands are started by a tiny helper process, the spawner (spawner.c,
//! built by build.rs and embedded): see the comment at its top for why. The
//! spawner reads `/proc/<pid>/io` between `waitid(WNOWAIT)` and `wait4` and
//! gets the child's own rusage from `wait4`; this side prepares each command
//! once, asks for runs (one at a time, or a schedule of runs the spawner
//! makes back to back: `Spawner::schedule`, `Prepared::take`), opens perf
//! counters on the waiting child, enforces timeouts and kills trees.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::perf::{Availability, Counters};
use super::{signals, tree};
use crate::error::{Error, ExecError, Result};
use crate::metrics::{Metric, Sample};

mod command;
mod cpus;
mod helper;
mod prepared;
mod program;
mod wire;

pub use command::*;
pub use cpus::*;
use helper::*;
pub use prepared::Prepared;
pub use wire::*;

/// How one run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Finished,
    TimedOut,
    Interrupted,
}

struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: we own this descriptor.
            unsafe { libc::close(self.0) };
        }
    }
}

fn cstring(bytes: &[u8], what: &str) -> Result<CString> {
    CString::new(bytes).map_err(|_| ExecError::NulByte { what: what.into() }.into())
}

fn open_fd(path: &Path, flags: i32) -> Result<Fd> {
    let c = cstring(path.as_os_str().as_bytes(), "path")?;
    // SAFETY: c is NUL-terminated; mode is used only with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
    let source = if fd < 0 {
        std::io::Error::last_os_error()
    } else {
        let fd = Fd(fd);
        // A directory opens for reading, and the command would fail on it
        // and be blamed: refuse it here, as the kernel does for writing.
        // SAFETY: fd is open; stat is plain data.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        let is_dir = unsafe { libc::fstat(fd.0, &mut stat) } == 0
            && stat.st_mode & libc::S_IFMT == libc::S_IFDIR;
        if !is_dir {
            return Ok(fd);
        }
        std::io::Error::from_raw_os_error(libc::EISDIR)
    };
    Err(if flags & libc::O_CREAT != 0 {
        Error::Write {
            path: path.into(),
            source,
        }
    } else {
        Error::Read {
            path: path.into(),
            source,
        }
    })
}

fn timeval_seconds(sec: i64, usec: i64) -> f64 {
    sec as f64 + usec as f64 * 1e-6
}

/// The session's spawner process: every measured command is started by it
/// (see the comment at the top of spawner.c for why). Started once per
/// session; exits when this is dropped (its socket closes).
pub struct Spawner {
    sock: Fd,
    /// The spawner's pid (our child).
    pid: libc::pid_t,
    prepared: std::cell::Cell<u32>,
    /// The session's cgroup (v2) for commands with a timeout, when the
    /// kernel offers one we may create (see [`session_cgroup`]).
    cgroup: Option<PathBuf>,
    /// Our main thread's `children` file, kept open: orphans are adopted
    /// by it, so one `pread` after a run tells whether the run left any.
    /// Opened at the first run's end: concurrency mode's slots never read
    /// it, and a descriptor per slot is one more for every later spawner's
    /// start to copy and close.
    children: std::cell::OnceCell<Fd>,
    /// Its text when nothing was left behind (our helpers only).
    settled: std::cell::RefCell<Vec<u8>>,
    /// Processes the hooks left running, protected until the session ends.
    hook_leftovers: std::cell::RefCell<Vec<libc::pid_t>>,
    /// Processes runs left running that the spawner killed itself (once it
    /// has made a schedule, it is the runs' subreaper), not yet counted.
    left_in_spawner: std::cell::Cell<usize>,
    /// Runs not yet read of each SCHEDULE sent and not yet DONE, in order.
    scheduled: std::cell::RefCell<std::collections::VecDeque<usize>>,
    /// When an interruption cut the schedules (CLOCK_MONOTONIC seconds):
    /// a run that ended before it is a finished run.
    interrupted_at: std::cell::Cell<Option<f64>>,
    /// A report read ahead to see whether its run ended before that.
    peeked: std::cell::Cell<Option<RunResult>>,
    /// Scheduled runs handed over so far: the next one's serial number.
    handed: std::cell::Cell<u64>,
    /// The last report of a scheduled run taken was only peeked at: it
    /// stays in the socket until its sample has gone on (see
    /// [`Spawner::catch_up`]).
    unconsumed: std::cell::Cell<bool>,
    /// One of several spawners whose commands run at once (see
    /// [`Spawner::confine_kills`]).
    confined: std::cell::Cell<bool>,
    /// When a wait on the spawner first saw cmdscope interrupted: no wait
    /// outlasts that by more than [`GRACE`] (see [`Spawner::stalled`]).
    interrupted_since: std::cell::Cell<Option<Instant>>,
}

/// How long a wait on the spawner goes without news before it looks at
/// the spawner: a command may stop its parent (`kill -STOP $PPID`), and a
/// stopped spawner neither reaps nor reports. Concurrency mode's slots,
/// thousands at once, look less often ([`Spawner::confine_kills`]).
const STALL: Duration = Duration::from_millis(200);
const STALL_CONFINED: Duration = Duration::from_secs(2);

/// How long the spawner has to answer once cmdscope is interrupted (or to
/// exit once told to) before it is killed: every wait ends.
const GRACE: Duration = Duration::from_secs(5);

/// The state letter of process `pid` (`R`, `S`, `T` for stopped, `Z`...)
/// from `/proc/<pid>/stat`, if it still exists.
fn process_state(pid: libc::pid_t) -> Option<u8> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the parenthesised name, which may hold anything.
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).copied()
}

/// Sets how long a read or write on `sock` waits before it returns EAGAIN.
fn wait_limit(sock: i32, limit: Duration) {
    let tv = libc::timeval {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_usec: limit.subsec_micros() as libc::suseconds_t,
    };
    for option in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: a timeval option on a socket we own.
        unsafe {
            libc::setsockopt(
                sock,
                libc::SOL_SOCKET,
                option,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
        }
    }
}

/// Whether the last system call failed because its wait limit passed.
fn timed_out_waiting() -> bool {
    matches!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::EAGAIN)
    )
}

/// A spawner that could not start: the step and the system's error, its
/// kind kept (concurrency mode tells the system refusing a process by it).
fn cannot_start(what: &str, e: std::io::Error) -> Error {
    Error::Io(std::io::Error::new(
        e.kind(),
        format!("cannot start the spawner ({what}): {e}"),
    ))
}

/// More than this many bytes of children (a hundred or so pids) and the
/// fast comparison gives up: the slow path decides.
const CHILDREN_TEXT: usize = 512;

impl Spawner {
    /// Starts the spawner; `with_cgroup`: commands will have a timeout, so
    /// create the session cgroup if the kernel offers one.
    ///
    /// With `posix_spawn` (a vfork), not a fork: cmdscope's threads and
    /// memory grow with concurrency mode's slots, and a fork copies all of
    /// it (page tables of every thread's stack), which made starting N
    /// slots cost N squared (the slots now copy a spawner instead:
    /// [`Spawner::fork`]). Its program is the user's cached copy, else a
    /// memory file written once per process ([`program::spawner_program`]).
    pub fn start(with_cgroup: bool) -> Result<Spawner> {
        let mut program =
            program::spawner_program().map_err(|e| cannot_start("memfd_create", e))?;
        let (ours, theirs) =
            socket_pair(libc::SOCK_STREAM).map_err(|e| cannot_start("socketpair", e))?;
        use std::os::fd::IntoRawFd;
        let (ours, theirs) = (Fd(ours.into_raw_fd()), Fd(theirs.into_raw_fd()));
        // Above 3, where it goes in the spawner: a dup2 onto itself would
        // leave it close-on-exec.
        // SAFETY: theirs is open.
        let theirs = Fd(unsafe { libc::fcntl(theirs.0, libc::F_DUPFD_CLOEXEC, 10) });
        if theirs.0 < 0 {
            return Err(cannot_start("fcntl", std::io::Error::last_os_error()));
        }
        // No wait on the spawner blocks for good (see `Spawner::stalled`).
        wait_limit(ours.0, STALL);
        let cgroup = if with_cgroup { session_cgroup() } else { None };
        // argv: its name, cmdscope's pid (its parent, whose death it
        // watches), the session cgroup's cgroup.procs if any.
        let mut args = vec![
            cstring(b"cmdscope-spawner", "argument")?,
            cstring(std::process::id().to_string().as_bytes(), "argument")?,
        ];
        if let Some(dir) = &cgroup {
            args.push(cstring(
                dir.join("cgroup.procs").as_os_str().as_bytes(),
                "the session cgroup",
            )?);
        }
        let envp = environment(&[], &[], false, 0)?;
        let pid = loop {
            let path = cstring(
                format!("/proc/self/fd/{}", program.fd).as_bytes(),
                "the spawner's path",
            )?;
            match spawn_helper(&path, &args, &envp, theirs.0, program.fd) {
                // The cached copy on a `noexec` mount, refused by a
                // security module, or open for writing in a child forked
                // meanwhile: the memory file, silently (this start made no
                // spawner).
                Err(e)
                    if program.source == program::Source::Cache
                        && matches!(
                            e.raw_os_error(),
                            Some(libc::EACCES | libc::ENOEXEC | libc::ETXTBSY | libc::EPERM)
                        ) =>
                {
                    program =
                        program::refuse_cache().map_err(|e| cannot_start("memfd_create", e))?;
                }
                started => break started.map_err(|e| cannot_start("exec", e))?,
            }
        };
        drop(theirs);
        Ok(Spawner::started(ours, pid, cgroup))
    }

    /// Starts `count` (1 to [`FORK_MAX`]) more spawners as copies of this
    /// one (spawner.c, `fork_spawner`), without a cgroup: forks of the
    /// small spawner, not new execs of it, all in one request. Concurrency
    /// mode starts its slots' spawners so from one spawner that runs
    /// nothing: each exec'd start (the exec, the static program's start-up,
    /// its first trim) cost about as much as a run of `/bin/true`, at
    /// N = 1,024 one for every two completions. The copies are children of
    /// the thread that started this spawner.
    pub fn fork(&self, count: usize) -> Result<Vec<Spawner>> {
        let count = count.clamp(1, FORK_MAX);
        let mut ours = Vec::with_capacity(count);
        let mut theirs = Vec::with_capacity(count);
        for _ in 0..count {
            let (o, t) =
                socket_pair(libc::SOCK_STREAM).map_err(|e| cannot_start("socketpair", e))?;
            ours.push(o);
            theirs.push(t);
        }
        use std::os::fd::{AsRawFd, IntoRawFd};
        let raw: Vec<i32> = theirs.iter().map(|t| t.as_raw_fd()).collect();
        self.send(&header(MSG_FORK, 0), &raw)?;
        drop(theirs);
        let (kind, len) = self.recv_header(&mut || {})?;
        let len = len as usize;
        if kind != MSG_PID || len % 4 != 0 || len == 0 || len > 4 * count {
            return Err(Spawner::gone());
        }
        let mut pids = vec![0u8; len];
        self.recv(&mut pids, &mut || {})?;
        let mut copies = Vec::with_capacity(count);
        for (pid, sock) in pids.chunks_exact(4).zip(ours) {
            let pid = i32::from_ne_bytes([pid[0], pid[1], pid[2], pid[3]]);
            if pid <= 0 {
                // The copies made end as `copies` is dropped.
                return Err(cannot_start(
                    "fork",
                    std::io::Error::from_raw_os_error(-pid),
                ));
            }
            let sock = Fd(sock.into_raw_fd());
            wait_limit(sock.0, STALL);
            copies.push(Spawner::started(sock, pid, None));
        }
        if copies.len() < count {
            return Err(Spawner::gone());
        }
        Ok(copies)
    }

    /// The spawner `pid`, just started, on our end `sock` of its socket.
    fn started(sock: Fd, pid: libc::pid_t, cgroup: Option<PathBuf>) -> Spawner {
        super::tree::protect(pid);
        Spawner {
            sock,
            pid,
            prepared: std::cell::Cell::new(0),
            cgroup,
            children: std::cell::OnceCell::new(),
            settled: std::cell::RefCell::new(Vec::new()),
            hook_leftovers: std::cell::RefCell::new(Vec::new()),
            left_in_spawner: std::cell::Cell::new(0),
            scheduled: std::cell::RefCell::new(std::collections::VecDeque::new()),
            interrupted_at: std::cell::Cell::new(None),
            peeked: std::cell::Cell::new(None),
            handed: std::cell::Cell::new(0),
            unconsumed: std::cell::Cell::new(false),
            confined: std::cell::Cell::new(false),
            interrupted_since: std::cell::Cell::new(None),
        }
    }

    /// Our main thread's `children` file (-1 if it cannot be opened).
    fn children_fd(&self) -> i32 {
        self.children
            .get_or_init(|| {
                let me = std::process::id();
                open_fd(
                    Path::new(&format!("/proc/{me}/task/{me}/children")),
                    libc::O_RDONLY,
                )
                .unwrap_or(Fd(-1))
            })
            .0
    }

    /// Whether our children are the ones we had when nothing was left
    /// behind: one `pread`, the cost of the check after every run.
    fn unchanged(&self) -> bool {
        let children = self.children_fd();
        if children < 0 {
            return false;
        }
        let mut buf = [0u8; CHILDREN_TEXT];
        // SAFETY: buf is valid for its length; the descriptor is ours.
        let n = unsafe { libc::pread(children, buf.as_mut_ptr().cast(), buf.len(), 0) };
        n >= 0 && (n as usize) < buf.len() && buf[..n as usize] == self.settled.borrow()[..]
    }

    /// Remembers our children as they are now, with nothing left behind.
    fn settle(&self) {
        let children = self.children_fd();
        let mut buf = [0u8; CHILDREN_TEXT];
        // SAFETY: as in `unchanged`.
        let n = unsafe { libc::pread(children, buf.as_mut_ptr().cast(), buf.len(), 0) };
        let mut settled = self.settled.borrow_mut();
        settled.clear();
        if children >= 0 && n >= 0 {
            settled.extend_from_slice(&buf[..n as usize]);
        }
    }

    /// After a run: kills what it left running (daemons, double forks,
    /// background jobs) and returns how many processes that was; orphans
    /// that already exited are reaped. Nothing else is touched: the
    /// helpers and what the hooks started are protected.
    pub fn kill_leftovers(&self) -> usize {
        let killed = self.left_in_spawner.take();
        if self.unchanged() {
            return killed;
        }
        let left = tree::unprotected().len();
        if left > 0 {
            self.kill_run();
        }
        self.settle();
        left + killed
    }

    /// After a hook: what it left running (a server for the runs, say)
    /// lives until the session ends, protected from the runs' cleanup.
    pub fn keep_hook_leftovers(&self) {
        if self.unchanged() {
            return;
        }
        let left = tree::unprotected();
        let me = std::process::id() as libc::pid_t;
        for pid in tree::children(me) {
            if left.contains(&pid) {
                tree::protect_tree(pid);
                self.hook_leftovers.borrow_mut().push(pid);
            }
        }
        self.settle();
    }

    /// Whether commands with a timeout run in a cgroup killed as a whole.
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// For one of several spawners whose commands run at once (concurrency
    /// mode's slots): a timeout or an interruption kills this spawner's
    /// command tree only, never the commands of the others; what escaped
    /// the tree is the caller's to kill when all have ended.
    pub fn confine_kills(&self) {
        self.confined.set(true);
        wait_limit(self.sock.0, STALL_CONFINED);
    }

    /// Continues the spawner if it is stopped: a command may stop its
    /// parent, and a stopped spawner neither reaps nor reports. The run
    /// then in progress is reported as such (`stopped`), never as timed.
    fn resume_if_stopped(&self) {
        if matches!(process_state(self.pid()), Some(b'T' | b't')) {
            // SAFETY: a signal to our own helper process.
            unsafe { libc::kill(self.pid(), libc::SIGCONT) };
        }
    }

    /// A wait on the spawner saw nothing for its limit ([`STALL`]): a
    /// stopped spawner is continued; once cmdscope is interrupted, a
    /// spawner that has still not answered [`GRACE`] later is killed and
    /// the wait ends as interrupted, so Ctrl-C and SIGTERM always end
    /// the session.
    fn stalled(&self) -> Result<()> {
        self.resume_if_stopped();
        if signals::received().is_none() {
            return Ok(());
        }
        let since = *self
            .interrupted_since
            .get()
            .get_or_insert_with(Instant::now);
        self.interrupted_since.set(Some(since));
        if since.elapsed() < GRACE {
            return Ok(());
        }
        // SAFETY: a signal to our own helper process.
        unsafe { libc::kill(self.pid(), libc::SIGKILL) };
        Err(Error::Interrupted)
    }

    /// Kills every process of a run: the whole session cgroup at once when
    /// there is one (nothing in it escapes, however it detached), then the
    /// harness's process tree until a scan proves it empty; for a confined
    /// spawner, its own descendants only.
    fn kill_run(&self) {
        // A stopped spawner could not reap the run it was making.
        self.resume_if_stopped();
        if self.confined.get() {
            tree::kill_descendants(self.pid());
            return;
        }
        if let Some(dir) = &self.cgroup {
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        }
        tree::kill_all(None);
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Reaps the spawner if it has exited: true once it has.
    fn try_reap(&self) -> bool {
        let mut status = 0;
        // SAFETY: a non-blocking wait for our own child.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        r == self.pid
            || (r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
    }

    /// The spawner's peak resident size in bytes (VmHWM): the floor under
    /// every command's reported peak memory, read after the runs.
    pub fn peak_resident_bytes(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024.0)
    }

    /// Hands `runs` to the spawner, to be made back to back in this order
    /// without a request per run (spawner.c, `schedule`); their reports
    /// are read with [`Prepared::take`], in the same order. With
    /// `stop_on_failure` the spawner stops after a run that exits non-zero
    /// or is killed, and makes no run of the schedules behind it until
    /// [`Spawner::finish_schedules`].
    pub fn schedule(&self, runs: &[&Prepared], stop_on_failure: bool) -> Result<()> {
        for chunk in runs.chunks(SCHEDULE_MAX) {
            let flags = if stop_on_failure {
                S_STOP_ON_FAILURE
            } else {
                0
            };
            let mut message = header(MSG_SCHEDULE, 8 + 4 * chunk.len());
            message.extend_from_slice(&flags.to_ne_bytes());
            message.extend_from_slice(&(chunk.len() as u32).to_ne_bytes());
            for p in chunk {
                message.extend_from_slice(&p.id.to_ne_bytes());
            }
            self.send(&message, &[])?;
            self.scheduled.borrow_mut().push_back(chunk.len());
            self.handed.set(self.handed.get() + chunk.len() as u64);
        }
        Ok(())
    }

    /// The serial number the next run handed to [`Spawner::schedule`]
    /// will have: scheduled runs are numbered from 0 in the order handed
    /// over, made or not, and [`Prepared::take`] gives each sample its
    /// run's number.
    pub fn next_serial(&self) -> u64 {
        self.handed.get()
    }

    /// The descriptor of our end of the spawner's socket. The store writer
    /// keeps a copy of it: should cmdscope die, the reports of scheduled
    /// runs it never read are still there, and the writer stores them
    /// ([`unread_reports`]).
    pub fn socket(&self) -> std::os::fd::RawFd {
        self.sock.0
    }

    /// Whether runs handed over by [`Spawner::schedule`] are still to be read.
    pub fn scheduled(&self) -> bool {
        !self.scheduled.borrow().is_empty()
    }

    /// Stops the schedules still running (the runner wants no more of
    /// their runs: the session stops, or the schedule went another way than
    /// handed over) and reads what is left of them, then lets the spawner
    /// take schedules again. The runs made meanwhile are discarded (their
    /// leftovers counted). After an interruption, every run still made is
    /// killed until the spawner says it is done.
    pub fn finish_schedules(&self) -> Result<()> {
        self.catch_up(&mut || {})?;
        if !self.scheduled() {
            return Ok(());
        }
        self.cut();
        while self.scheduled() {
            if signals::received().is_some() {
                self.kill_run();
            }
            let mut fds = [libc::pollfd {
                fd: self.sock.0,
                events: libc::POLLIN,
                revents: 0,
            }];
            // SAFETY: fds holds one valid pollfd.
            if unsafe { libc::poll(fds.as_mut_ptr(), 1, 10) } <= 0 {
                self.stalled()?;
                continue;
            }
            let mut ignore = || {};
            self.next_report(&mut ignore)?;
        }
        self.peeked.set(None);
        self.interrupted_at.set(None);
        self.send(&header(MSG_RESUME, 0), &[])
    }

    /// Asks the spawner to make no further run of its schedules.
    fn cut(&self) {
        // SAFETY: a signal to our own helper process.
        unsafe { libc::kill(self.pid(), libc::SIGUSR1) };
    }

    /// Ctrl-C while runs are scheduled: the spawner makes no further run,
    /// the one running is killed, and the moment is kept (once).
    fn interrupt(&self) {
        if self.interrupted_at.get().is_none() {
            self.interrupted_at.set(Some(monotonic()));
            self.cut();
            self.kill_run();
        }
    }

    /// After Ctrl-C: whether the next scheduled run ended before it (its
    /// report was on its way): a finished run, to be taken in as such.
    pub fn finished_before_interrupt(&self) -> Result<bool> {
        if !self.scheduled() {
            return Ok(false);
        }
        self.interrupt();
        let next = match self.peeked.take() {
            Some(res) => Some(res),
            None => self.next_report(&mut || {})?,
        };
        self.peeked.set(next);
        Ok(next.is_some_and(|res| self.ended_before_interrupt(&res)))
    }

    fn ended_before_interrupt(&self, res: &RunResult) -> bool {
        let end = res.end_sec as f64 + res.end_nsec as f64 * 1e-9;
        res.failed_step == 0 && self.interrupted_at.get().is_some_and(|at| end < at)
    }

    /// Reads the spawner's next report of a scheduled run, passing over the
    /// DONE of finished schedules: None when none is left. The report is
    /// peeked at, not consumed: it leaves the socket at the next read
    /// ([`Spawner::catch_up`]), once its sample has gone to the store, so
    /// that a `kill -9` of cmdscope in between leaves it for the store
    /// writer to take in.
    fn next_report(&self, on_interrupt: &mut dyn FnMut()) -> Result<Option<RunResult>> {
        self.catch_up(on_interrupt)?;
        loop {
            if !self.scheduled() {
                return Ok(None);
            }
            let reply = self.peek_reply(on_interrupt)?;
            match reply.kind {
                MSG_DONE => {
                    self.recv(&mut [0u8; 8], on_interrupt)?;
                    self.scheduled.borrow_mut().pop_front();
                }
                MSG_RESULT if reply.len as usize == std::mem::size_of::<RunResult>() => {
                    self.unconsumed.set(true);
                    if let Some(left) = self.scheduled.borrow_mut().front_mut() {
                        *left = left.saturating_sub(1);
                    }
                    let res = reply.res;
                    self.left_in_spawner
                        .set(self.left_in_spawner.get() + res.leftovers.max(0) as usize);
                    return Ok(Some(res));
                }
                _ => return Err(Spawner::gone()),
            }
        }
    }

    /// Consumes the report last peeked at, then the DONE of a schedule
    /// whose runs are all read: after this no message of a schedule is
    /// left in the socket unless one is due.
    fn catch_up(&self, on_interrupt: &mut dyn FnMut()) -> Result<()> {
        if self.unconsumed.replace(false) {
            let mut reply = Reply::default();
            self.recv(reply_bytes(&mut reply), on_interrupt)?;
        }
        while self.scheduled.borrow().front() == Some(&0) {
            let (kind, _) = self.recv_header(on_interrupt)?;
            if kind != MSG_DONE {
                return Err(Spawner::gone());
            }
            self.scheduled.borrow_mut().pop_front();
        }
        Ok(())
    }

    /// The next message of a schedule, left in the socket: a DONE (its
    /// header) or a whole RESULT. The spawner writes whole messages, so
    /// a part of one is seen only for the moment the rest takes to come.
    fn peek_reply(&self, on_interrupt: &mut dyn FnMut()) -> Result<Reply> {
        let mut reply = Reply::default();
        loop {
            let bytes = reply_bytes(&mut reply);
            let want = bytes.len();
            // SAFETY: bytes is valid for writing its length.
            let n =
                unsafe { libc::recv(self.sock.0, bytes.as_mut_ptr().cast(), want, libc::MSG_PEEK) };
            let Some(n) = self.received(n, on_interrupt)? else {
                continue;
            };
            if n == want || (n >= 8 && reply.kind == MSG_DONE) {
                return Ok(reply);
            }
            // The rest of a message on its way.
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// What a read of the socket that returned `n` came to, read at once
    /// after it (errno): Some(bytes), or None to read again (a signal
    /// interrupted it, and `on_interrupt` ran; or it timed out, and a
    /// stopped spawner was continued).
    fn received(&self, n: isize, on_interrupt: &mut dyn FnMut()) -> Result<Option<usize>> {
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            on_interrupt();
            return Ok(None);
        }
        if n < 0 && timed_out_waiting() {
            self.stalled()?;
            return Ok(None);
        }
        if n <= 0 {
            return Err(Spawner::gone());
        }
        Ok(Some(n as usize))
    }

    fn gone() -> Error {
        Error::Io(std::io::Error::other(
            "the spawner process exited unexpectedly",
        ))
    }

    fn send(&self, bytes: &[u8], fds: &[i32]) -> Result<()> {
        let mut sent = 0;
        while sent < bytes.len() {
            let part = if sent == 0 { fds } else { &[] };
            match send_part(self.sock.0, &bytes[sent..], part) {
                Ok(n) => sent += n,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => self.stalled()?,
                Err(_) => return Err(Spawner::gone()),
            }
        }
        Ok(())
    }

    /// Reads exactly `buf.len()` bytes; `on_interrupt` runs whenever a
    /// signal interrupts the read (the harness's handlers do not restart).
    fn recv(&self, buf: &mut [u8], on_interrupt: &mut dyn FnMut()) -> Result<()> {
        let mut got = 0;
        while got < buf.len() {
            // SAFETY: the rest of buf is valid for writing.
            let n =
                unsafe { libc::read(self.sock.0, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
            if let Some(n) = self.received(n, on_interrupt)? {
                got += n;
            }
        }
        Ok(())
    }

    /// Reads one message header: (type, length).
    fn recv_header(&self, on_interrupt: &mut dyn FnMut()) -> Result<(u32, u32)> {
        let mut h = [0u8; 8];
        self.recv(&mut h, on_interrupt)?;
        Ok((
            u32::from_ne_bytes([h[0], h[1], h[2], h[3]]),
            u32::from_ne_bytes([h[4], h[5], h[6], h[7]]),
        ))
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        if self.scheduled() {
            self.cut();
        }
        // The end of our writing makes the spawner exit: a shutdown, since
        // closing our descriptor does not end the socket while the store
        // writer holds a copy of it.
        // SAFETY: a shutdown of a descriptor we own.
        unsafe { libc::shutdown(self.sock.0, libc::SHUT_WR) };
        drop(std::mem::replace(&mut self.sock, Fd(-1)));
        // It exits at once unless stopped (continued here) or stuck: it is
        // killed after GRACE, so that no session's end waits for good.
        let waited = Instant::now();
        let exited = exit_watch(self.pid);
        while !self.try_reap() {
            if waited.elapsed() >= GRACE {
                // SAFETY: our own helper, then reaped (blocking, it is killed).
                unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                    let mut status = 0;
                    libc::waitpid(self.pid, &mut status, 0);
                }
                break;
            }
            // Still there after a while: stopped, perhaps.
            if !exited.wait() {
                self.resume_if_stopped();
            }
        }
        super::tree::unprotect(self.pid);
        // The session is over: what the hooks left running goes now, with
        // anything else a run left (whatever path ended the session).
        for pid in self.hook_leftovers.take() {
            super::tree::unprotect(pid);
        }
        // Not for one of concurrency mode's slots, whose instances' trees
        // the session's own spawner cleans after each batch: a scan of the
        // whole tree per slot made ending N slots cost N squared.
        if !self.confined.get() && !super::tree::unprotected().is_empty() {
            self.kill_run();
        }
        if let Some(dir) = &self.cgroup {
            // Empty now: every command was reaped and its tree killed.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A way to sleep until a child exits: its pidfd (Linux 5.3), readable
/// once it has, else a 1 ms sleep to poll with. Thousands of slots ending
/// at once each polled every millisecond, and read the spawner's state
/// each time: that kept both CPUs busy while the spawners had to exit.
struct ExitWatch(Fd);

fn exit_watch(pid: libc::pid_t) -> ExitWatch {
    // SAFETY: pidfd_open of our own child; -1 when the kernel lacks it.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    ExitWatch(Fd(if fd < 0 { -1 } else { fd as i32 }))
}

impl ExitWatch {
    /// Whether the child exited within a while (long enough to be cheap,
    /// short enough to continue a stopped spawner soon).
    fn wait(&self) -> bool {
        if self.0 .0 < 0 {
            std::thread::sleep(Duration::from_millis(1));
            return false;
        }
        let mut p = libc::pollfd {
            fd: self.0 .0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd on a descriptor we own.
        unsafe { libc::poll(&mut p, 1, 20) > 0 }
    }
}

/// CLOCK_MONOTONIC now, in seconds: the spawner's clock.
fn monotonic() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into ts.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
