//! The ptrace loop: starts the command under PTRACE_SEIZE, follows every
//! process and thread it creates, and records what `explain` reports.
//!
//! One tracer thread (the caller's) does every ptrace request and waits with
//! `waitpid(-1, __WALL)`. Each stop is classified (syscall entry/exit via
//! PTRACE_GET_SYSCALL_INFO, fork/vfork/clone/exec/exit events, group-stops,
//! signal-delivery-stops) and the tracee is resumed at once; signals are
//! re-injected, group-stops are left in place with PTRACE_LISTEN.
//!
//! Memory stays bounded: one record per task (bounded argv, at most
//! `MAX_EXECS_PER_TASK` execs), counters per syscall number, per-directory
//! write totals with a cap; nothing per syscall.
//!
//! Process creation is classified at the syscall entry of clone, clone3,
//! fork and vfork from the flags the program passed (clone3: read from its
//! `struct clone_args`), and cross-checked with the ptrace event the kernel
//! reports; see docs/EXPLAIN.md for what each libc call produces.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::mem;
use super::procfs::{self, Argv};
use super::syscalls::{nr, TABLE_SIZE};
use crate::error::{Error, Result};
use crate::exec::held;
use crate::exec::procio::ProcIo;
use crate::exec::signals;
use crate::exec::HeldCommand;

/// Exec records kept per task: the first ones (shell detection needs the
/// first two) and, in the last slot, the latest.
pub const MAX_EXECS_PER_TASK: usize = 4;
/// Directories write volume is attributed to; later ones go to "(other)".
const MAX_DIRS: usize = 1024;
/// Writable descriptors remembered per process.
const MAX_FDS_PER_PROCESS: usize = 4096;
/// Environment pointers counted per exec.
const MAX_ENV_VARS: u64 = 100_000;
/// Unknown syscall numbers counted separately (then lumped together).
const MAX_OTHER_SYSCALLS: usize = 64;

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const CLONE_VM: u64 = 0x100;
const CLONE_THREAD: u64 = 0x10000;

/// How a task came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Created {
    /// A copy of the parent's address space (fork(), clone without CLONE_VM).
    Fork,
    /// Shares the parent's memory until it execs (vfork(), posix_spawn:
    /// CLONE_VM|CLONE_VFORK, or any non-thread clone with CLONE_VM).
    Vfork,
    /// A thread (CLONE_THREAD).
    Thread,
}

impl Created {
    pub fn name(self) -> &'static str {
        match self {
            Created::Fork => "fork",
            Created::Vfork => "vfork",
            Created::Thread => "thread",
        }
    }

    /// From the flags of clone/clone3.
    pub fn from_clone_flags(flags: u64) -> Created {
        if flags & CLONE_THREAD != 0 {
            Created::Thread
        } else if flags & CLONE_VM != 0 {
            // CLONE_VM|CLONE_VFORK is vfork()/posix_spawn; CLONE_VM alone
            // (rare) also shares memory, so it costs what vfork costs.
            Created::Vfork
        } else {
            // Including CLONE_VFORK without CLONE_VM: the parent waits, but
            // the address space is still copied.
            Created::Fork
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The ptrace event that reported a creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    Fork,
    Vfork,
    Clone,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Fork => "PTRACE_EVENT_FORK",
            Event::Vfork => "PTRACE_EVENT_VFORK",
            Event::Clone => "PTRACE_EVENT_CLONE",
        }
    }
}

/// How a task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    fn from_wait_status(status: i32) -> Option<Exit> {
        if libc::WIFEXITED(status) {
            Some(Exit::Code(libc::WEXITSTATUS(status)))
        } else if libc::WIFSIGNALED(status) {
            Some(Exit::Signal(libc::WTERMSIG(status)))
        } else {
            None
        }
    }
}

/// One successful exec.
#[derive(Clone, Debug)]
pub struct Exec {
    /// Seconds since the trace started.
    pub at: f64,
    /// The file name passed to execve (as the program gave it).
    pub path: Vec<u8>,
    pub argv: Argv,
    /// Bytes of environment strings the kernel copied (None if unreadable).
    pub env_bytes: Option<u64>,
    /// Number of environment variables passed.
    pub env_vars: Option<u64>,
}

/// Everything recorded about one task (a process or a thread).
#[derive(Clone, Debug)]
pub struct Task {
    pub tid: i32,
    /// The thread group (process) it belongs to.
    pub tgid: i32,
    /// Index (in `Trace::tasks`) of the task that created it; None for the
    /// command itself (or a task whose creator was never reported).
    pub creator: Option<usize>,
    pub created_by: Created,
    /// The syscall that created it, when seen.
    pub creation_syscall: Option<u64>,
    /// Seconds since the trace started: first seen, last seen.
    pub start: f64,
    pub end: Option<f64>,
    pub execs: Vec<Exec>,
    pub exec_count: u32,
    pub failed_execs: u32,
    /// The thread's own CPU time in clock ticks, read at its exit event.
    pub user_ticks: u64,
    pub sys_ticks: u64,
    /// The thread's own I/O, read at its exit event.
    pub io: ProcIo,
    pub exit: Option<Exit>,
}

/// Calls and time of one system call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyscallCount {
    pub count: u64,
    pub nanos: u64,
}

/// One (method, syscall, event) combination and how often it was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnDetail {
    pub created_by: Created,
    /// Syscall number (None: the entry was not seen).
    pub syscall: Option<u64>,
    pub event: Event,
    pub count: u64,
}

/// Totals over every successful exec (exact, unlike the bounded records).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExecTotals {
    pub count: u64,
    pub failed: u64,
    pub env_bytes_total: u64,
    pub env_bytes_max: u64,
    pub env_bytes_min: Option<u64>,
    pub env_measured: u64,
    pub env_vars_max: u64,
}

/// The result of one traced run.
#[derive(Clone, Debug)]
pub struct Trace {
    pub tasks: Vec<Task>,
    /// Indexed by syscall number (`TABLE_SIZE` slots).
    pub syscalls: Vec<SyscallCount>,
    /// Numbers beyond the table, and syscalls of 32-bit tracees (key u64::MAX).
    pub other_syscalls: Vec<(u64, SyscallCount)>,
    pub spawn_details: Vec<SpawnDetail>,
    /// Seconds spent in successful creating syscalls, by method (in the parent).
    pub spawn_seconds: [f64; 3],
    pub execs: ExecTotals,
    /// Bytes written through descriptors opened for writing, by directory.
    pub dir_writes: Vec<(PathBuf, u64)>,
    /// Seconds from release of the command to the end of its last process.
    pub wall: f64,
    pub interrupted: bool,
    pub timed_out: bool,
    /// Children of cmdscope that are not tracees (a monitor) and exited
    /// while the tracer waited: (pid, wait status).
    pub foreign_exits: Vec<(i32, i32)>,
    pub clock_ticks: f64,
}

/// What to run: the command with the complete environment (as `run`
/// builds it) and the variant's conditions, applied in the child before
/// its exec.
pub struct TraceConfig {
    pub command: HeldCommand,
    pub timeout: Option<Duration>,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct SyscallInfo {
    op: u8,
    _pad: [u8; 3],
    arch: u32,
    instruction_pointer: u64,
    stack_pointer: u64,
    /// entry: nr, args[6]; exit: rval (i64), is_error (u8).
    data: [u64; 8],
}

const OP_ENTRY: u8 = 1;
const OP_EXIT: u8 = 2;

struct Entry {
    nr: u64,
    args: [u64; 6],
    at: Instant,
    /// openat2: the flags read from `struct open_how`.
    extra: u64,
}

struct PendingExec {
    path: Vec<u8>,
    env_vars: Option<u64>,
}

struct Live {
    index: usize,
    entry: Option<Entry>,
    pending_clone: Option<(Created, u64)>,
    pending_exec: Option<PendingExec>,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn ptrace(request: libc::c_uint, pid: i32, addr: usize, data: usize) -> libc::c_long {
    // SAFETY: every request used here takes integers or a pointer to a
    // buffer owned by the caller (GETEVENTMSG, GET_SYSCALL_INFO).
    unsafe {
        libc::ptrace(
            request,
            pid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    }
}

fn event_msg(pid: i32) -> Option<u64> {
    let mut msg: libc::c_ulong = 0;
    let rc = ptrace(
        libc::PTRACE_GETEVENTMSG,
        pid,
        0,
        &mut msg as *mut libc::c_ulong as usize,
    );
    (rc == 0).then_some(msg as u64)
}

fn resume(pid: i32, signal: i32) {
    // ESRCH (the task was killed meanwhile) is fine: its exit is reported.
    ptrace(libc::PTRACE_SYSCALL, pid, 0, signal as usize);
}

extern "C" fn on_alarm(_: libc::c_int) {}

/// SIGALRM interrupts the tracer's waitpid (no SA_RESTART): the watchdog
/// sends it on timeouts, interruptions and every second as a keepalive.
fn install_alarm_handler() {
    // SAFETY: a zeroed sigaction with a handler that does nothing.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as *const () as usize;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
    }
}

/// Runs `f` in a thread that never receives SIGINT, SIGTERM or SIGALRM, so
/// they reach the tracer thread and interrupt its waitpid.
pub fn spawn_quiet_thread<F, T>(f: F) -> std::io::Result<std::thread::JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    // SAFETY: sigset manipulation on local values; pthread_sigmask on the
    // calling thread, restored right after the spawn.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        libc::sigaddset(&mut block, libc::SIGINT);
        libc::sigaddset(&mut block, libc::SIGTERM);
        libc::sigaddset(&mut block, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
        let handle = std::thread::Builder::new()
            .name("cmdscope-explain".into())
            .spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        handle
    }
}

/// Kicks the tracer thread out of waitpid when something needs attention.
struct Watchdog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn start(deadline: Option<Instant>) -> Watchdog {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        // SAFETY: pthread_self has no preconditions.
        let tracer = unsafe { libc::pthread_self() };
        let flag = stop.clone();
        let handle = spawn_quiet_thread(move || {
            let mut last_kick = Instant::now();
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
                let now = Instant::now();
                let urgent = signals::received().is_some() || deadline.is_some_and(|d| now >= d);
                if urgent || now.duration_since(last_kick) >= Duration::from_secs(1) {
                    last_kick = now;
                    if !flag.load(Ordering::SeqCst) {
                        // SAFETY: the tracer thread outlives the watchdog
                        // (it joins it before returning).
                        unsafe { libc::pthread_kill(tracer, libc::SIGALRM) };
                    }
                }
            }
        })
        .ok();
        Watchdog { stop, handle }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Classifies a path for the per-directory write totals: the first
/// component below the current directory ("./build"), else the first two
/// components of the parent directory ("/var/tmp"). Devices, /proc and /sys
/// are not files anyone would move to tmpfs.
pub fn dir_key(path: &Path, cwd: &Path) -> Option<PathBuf> {
    if !path.is_absolute()
        || (path.starts_with("/dev") && !path.starts_with("/dev/shm"))
        || path.starts_with("/proc")
        || path.starts_with("/sys")
    {
        return None;
    }
    let parent = path.parent()?;
    if let Ok(rel) = parent.strip_prefix(cwd) {
        return Some(match rel.components().next() {
            Some(c) => Path::new(".").join(c),
            None => PathBuf::from("."),
        });
    }
    Some(parent.components().take(3).collect())
}

struct Tracer {
    tasks: Vec<Task>,
    live: HashMap<i32, Live>,
    syscalls: Vec<SyscallCount>,
    other_syscalls: HashMap<u64, SyscallCount>,
    spawn_details: HashMap<(Created, Option<u64>, Event), u64>,
    spawn_seconds: [f64; 3],
    execs: ExecTotals,
    /// Per process (tgid): writable descriptor -> index into `dirs`.
    fds: HashMap<i32, HashMap<i32, u32>>,
    dirs: Vec<(PathBuf, u64)>,
    dir_index: HashMap<PathBuf, u32>,
    cwd: PathBuf,
    t0: Instant,
    root: i32,
    /// The command has exec'd: syscalls count from here.
    started: bool,
    root_exec_error: Option<i32>,
    killing: bool,
    foreign_exits: Vec<(i32, i32)>,
}

impl Tracer {
    fn secs(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.t0).as_secs_f64()
    }

    fn new_task(&mut self, tid: i32, at: Instant) -> usize {
        let start = self.secs(at);
        self.tasks.push(Task {
            tid,
            tgid: tid,
            creator: None,
            created_by: Created::Fork,
            creation_syscall: None,
            start,
            end: None,
            execs: Vec::new(),
            exec_count: 0,
            failed_execs: 0,
            user_ticks: 0,
            sys_ticks: 0,
            io: ProcIo::default(),
            exit: None,
        });
        let index = self.tasks.len() - 1;
        self.live.insert(
            tid,
            Live {
                index,
                entry: None,
                pending_clone: None,
                pending_exec: None,
            },
        );
        if self.killing {
            // SAFETY: kill of a traced task we are ending.
            unsafe { libc::kill(tid, libc::SIGKILL) };
        }
        index
    }

    fn kill_all(&mut self) {
        if self.killing {
            return;
        }
        self.killing = true;
        for &tid in self.live.keys() {
            // SAFETY: kill of traced tasks (SIGKILL wakes them from any stop).
            unsafe { libc::kill(tid, libc::SIGKILL) };
        }
        // SAFETY: the command's own process group, created at its start.
        unsafe { libc::kill(-self.root, libc::SIGKILL) };
    }

    /// Drops tasks that no longer exist without their end being reported
    /// (should not happen; keeps the loop from waiting forever if it does).
    fn sweep(&mut self, now: Instant) {
        let gone: Vec<i32> = self
            .live
            .keys()
            .copied()
            // SAFETY: signal 0 only checks existence.
            .filter(|&tid| unsafe { libc::kill(tid, 0) } != 0 && errno() == libc::ESRCH)
            .collect();
        let end = self.secs(now);
        for tid in gone {
            if let Some(l) = self.live.remove(&tid) {
                if let Some(t) = self.tasks.get_mut(l.index) {
                    t.end.get_or_insert(end);
                }
            }
        }
    }

    fn count_syscall(&mut self, nr: u64, nanos: u64) {
        if !self.started {
            return;
        }
        if let Some(slot) = self.syscalls.get_mut(nr as usize) {
            slot.count += 1;
            slot.nanos += nanos;
            return;
        }
        let key = if self.other_syscalls.len() < MAX_OTHER_SYSCALLS
            || self.other_syscalls.contains_key(&nr)
        {
            nr
        } else {
            u64::MAX - 1
        };
        let slot = self.other_syscalls.entry(key).or_default();
        slot.count += 1;
        slot.nanos += nanos;
    }

    fn on_exited(&mut self, pid: i32, status: i32, now: Instant) {
        let Some(live) = self.live.remove(&pid) else {
            self.foreign_exits.push((pid, status));
            return;
        };
        let end = self.secs(now);
        if let Some(t) = self.tasks.get_mut(live.index) {
            t.end = Some(end);
            if let Some(exit) = Exit::from_wait_status(status) {
                t.exit = Some(exit);
            }
            if t.tgid == t.tid {
                self.fds.remove(&t.tid);
            }
        }
    }

    fn on_syscall_stop(&mut self, pid: i32, now: Instant) -> Result<()> {
        let mut info = SyscallInfo {
            op: 0,
            _pad: [0; 3],
            arch: 0,
            instruction_pointer: 0,
            stack_pointer: 0,
            data: [0; 8],
        };
        let size = std::mem::size_of::<SyscallInfo>();
        let rc = ptrace(
            libc::PTRACE_GET_SYSCALL_INFO,
            pid,
            size,
            &mut info as *mut SyscallInfo as usize,
        );
        if rc < 0 {
            return match errno() {
                libc::ESRCH => Ok(()),
                e => Err(Error::Failed(format!(
                    "PTRACE_GET_SYSCALL_INFO failed ({}); explain needs Linux 5.3 or newer",
                    std::io::Error::from_raw_os_error(e)
                ))),
            };
        }
        match info.op {
            OP_ENTRY if info.arch != AUDIT_ARCH_X86_64 => {
                // A 32-bit tracee: its numbers mean other calls. Count them
                // together; nothing else is interpreted.
                self.count_syscall(u64::MAX, 0);
                if let Some(l) = self.live.get_mut(&pid) {
                    l.entry = None;
                }
            }
            OP_ENTRY => {
                let nr = info.data[0];
                let mut args = [0u64; 6];
                args.copy_from_slice(&info.data[1..7]);
                self.on_entry(pid, nr, args, now);
            }
            OP_EXIT => {
                let rval = info.data[0] as i64;
                self.on_exit(pid, rval, now);
            }
            _ => {}
        }
        Ok(())
    }

    fn on_entry(&mut self, pid: i32, nr: u64, args: [u64; 6], now: Instant) {
        let mut extra = 0;
        let mut pending_clone = None;
        let mut pending_exec = None;
        match nr {
            nr::CLONE => pending_clone = Some(Created::from_clone_flags(args[0])),
            nr::CLONE3 => {
                // struct clone_args starts with `__aligned_u64 flags`.
                pending_clone = mem::read_u64(pid, args[0]).map(Created::from_clone_flags);
            }
            nr::FORK => pending_clone = Some(Created::Fork),
            nr::VFORK => pending_clone = Some(Created::Vfork),
            nr::EXECVE | nr::EXECVEAT => {
                let (path_arg, envp_arg) = if nr == nr::EXECVE {
                    (args[0], args[2])
                } else {
                    (args[1], args[3])
                };
                pending_exec = Some(PendingExec {
                    path: mem::read_cstring(pid, path_arg, 4096),
                    env_vars: mem::count_pointers(pid, envp_arg, MAX_ENV_VARS),
                });
            }
            nr::EXIT | nr::EXIT_GROUP => {
                // No exit stop follows: count the call now.
                self.count_syscall(nr, 0);
                if let Some(l) = self.live.get_mut(&pid) {
                    l.entry = None;
                }
                return;
            }
            nr::OPENAT2 => {
                // struct open_how starts with `__u64 flags`.
                extra = mem::read_u64(pid, args[2]).unwrap_or(0);
            }
            _ => {}
        }
        if let Some(l) = self.live.get_mut(&pid) {
            l.entry = Some(Entry {
                nr,
                args,
                at: now,
                extra,
            });
            if let Some(kind) = pending_clone {
                l.pending_clone = Some((kind, nr));
            }
            if pending_exec.is_some() {
                l.pending_exec = pending_exec;
            }
        }
    }

    fn on_exit(&mut self, pid: i32, rval: i64, now: Instant) {
        let Some(l) = self.live.get_mut(&pid) else {
            return;
        };
        // A new task's first stop is the exit of the clone that made it: no entry.
        let Some(entry) = l.entry.take() else {
            return;
        };
        let index = l.index;
        let pending_clone = match entry.nr {
            nr::CLONE | nr::CLONE3 | nr::FORK | nr::VFORK => l.pending_clone.take(),
            _ => None,
        };
        if matches!(entry.nr, nr::EXECVE | nr::EXECVEAT) {
            l.pending_exec = None;
        }
        let elapsed = now.saturating_duration_since(entry.at);
        self.count_syscall(entry.nr, elapsed.as_nanos() as u64);
        match entry.nr {
            nr::CLONE | nr::CLONE3 | nr::FORK | nr::VFORK => {
                if let Some((kind, _)) = pending_clone {
                    if rval >= 0 {
                        self.spawn_seconds[kind.index()] += elapsed.as_secs_f64();
                    }
                }
            }
            nr::EXECVE | nr::EXECVEAT if rval < 0 => {
                if self.started {
                    self.execs.failed += 1;
                }
                if let Some(t) = self.tasks.get_mut(index) {
                    t.failed_execs += 1;
                    if t.tid == self.root && t.exec_count == 0 {
                        self.root_exec_error = Some(rval.saturating_neg() as i32);
                    }
                }
            }
            nr::OPEN | nr::OPENAT | nr::CREAT | nr::OPENAT2 if rval >= 0 => {
                let flags = match entry.nr {
                    nr::OPEN => entry.args[1],
                    nr::OPENAT => entry.args[2],
                    nr::OPENAT2 => entry.extra,
                    _ => libc::O_WRONLY as u64,
                };
                let accmode = flags & libc::O_ACCMODE as u64;
                if accmode == libc::O_WRONLY as u64 || accmode == libc::O_RDWR as u64 {
                    self.track_fd(pid, index, rval as i32);
                }
            }
            nr::WRITE | nr::PWRITE64 | nr::WRITEV | nr::PWRITEV | nr::PWRITEV2 if rval > 0 => {
                let tgid = self.tasks.get(index).map_or(pid, |t| t.tgid);
                let fd = entry.args[0] as i32;
                if let Some(&dir) = self.fds.get(&tgid).and_then(|m| m.get(&fd)) {
                    if let Some(d) = self.dirs.get_mut(dir as usize) {
                        d.1 += rval as u64;
                    }
                }
            }
            nr::CLOSE if rval == 0 => {
                let tgid = self.tasks.get(index).map_or(pid, |t| t.tgid);
                if let Some(m) = self.fds.get_mut(&tgid) {
                    m.remove(&(entry.args[0] as i32));
                }
            }
            nr::CLOSE_RANGE if rval == 0 => {
                // CLOSE_RANGE_CLOEXEC only marks them: the exec revalidates.
                const CLOSE_RANGE_CLOEXEC: u64 = 1 << 2;
                let tgid = self.tasks.get(index).map_or(pid, |t| t.tgid);
                if entry.args[2] & CLOSE_RANGE_CLOEXEC == 0 {
                    if let Some(m) = self.fds.get_mut(&tgid) {
                        let (first, last) = (entry.args[0], entry.args[1]);
                        m.retain(|&fd, _| !(first..=last).contains(&(fd as u64)));
                    }
                }
            }
            nr::DUP2 | nr::DUP3 if rval >= 0 => {
                // The target descriptor now points where the source does.
                let tgid = self.tasks.get(index).map_or(pid, |t| t.tgid);
                if let Some(m) = self.fds.get_mut(&tgid) {
                    m.remove(&(rval as i32));
                }
                self.track_fd(pid, index, rval as i32);
            }
            _ => {}
        }
    }

    fn track_fd(&mut self, pid: i32, index: usize, fd: i32) {
        let tgid = self.tasks.get(index).map_or(pid, |t| t.tgid);
        let Some(target) = procfs::fd_target(pid, fd) else {
            return;
        };
        let Some(key) = dir_key(&target, &self.cwd) else {
            // Not a file (pipe, socket) or not interesting: forget a stale entry.
            if let Some(m) = self.fds.get_mut(&tgid) {
                m.remove(&fd);
            }
            return;
        };
        let dir = match self.dir_index.get(&key) {
            Some(&d) => d,
            None => {
                let key = if self.dirs.len() < MAX_DIRS {
                    key
                } else {
                    PathBuf::from("(other)")
                };
                match self.dir_index.get(&key) {
                    Some(&d) => d,
                    None => {
                        self.dirs.push((key.clone(), 0));
                        let d = (self.dirs.len() - 1) as u32;
                        self.dir_index.insert(key, d);
                        d
                    }
                }
            }
        };
        let map = self.fds.entry(tgid).or_default();
        if map.len() < MAX_FDS_PER_PROCESS || map.contains_key(&fd) {
            map.insert(fd, dir);
        }
    }

    fn on_creation(&mut self, pid: i32, event: Event, now: Instant) {
        let Some(child) = event_msg(pid).map(|m| m as i32) else {
            return;
        };
        let Some(parent) = self.live.get(&pid) else {
            return;
        };
        let parent_index = parent.index;
        let pending = parent.pending_clone;
        let kind = pending.map_or(
            match event {
                Event::Vfork => Created::Vfork,
                Event::Clone => Created::Thread,
                Event::Fork => Created::Fork,
            },
            |(k, _)| k,
        );
        let syscall = pending.map(|(_, nr)| nr);
        *self
            .spawn_details
            .entry((kind, syscall, event))
            .or_default() += 1;
        let parent_tgid = self.tasks.get(parent_index).map_or(pid, |t| t.tgid);
        let index = match self.live.get(&child) {
            // Its first stop was reported before this event.
            Some(l) => l.index,
            None => self.new_task(child, now),
        };
        if let Some(t) = self.tasks.get_mut(index) {
            t.creator = Some(parent_index);
            t.created_by = kind;
            t.creation_syscall = syscall;
            t.tgid = if kind == Created::Thread {
                parent_tgid
            } else {
                child
            };
        }
        if kind != Created::Thread {
            // The child inherits the descriptors.
            if let Some(m) = self.fds.get(&parent_tgid) {
                let copy = m.clone();
                self.fds.insert(child, copy);
            }
        }
    }

    fn on_exec(&mut self, pid: i32, now: Instant) {
        let former = event_msg(pid).map_or(pid, |m| m as i32);
        if former != pid {
            // A thread other than the leader exec'd: it takes over the
            // leader's id; its own record ends here.
            if let Some(old) = self.live.remove(&former) {
                let end = self.secs(now);
                if let Some(t) = self.tasks.get_mut(old.index) {
                    t.end = Some(end);
                }
                if let Some(l) = self.live.get_mut(&pid) {
                    l.pending_exec = old.pending_exec;
                    l.entry = old.entry;
                }
            }
        }
        let at = self.secs(now);
        let Some(l) = self.live.get_mut(&pid) else {
            return;
        };
        let index = l.index;
        let pending = l.pending_exec.take();
        let (path, env_vars) = match pending {
            Some(p) => (p.path, p.env_vars),
            None => (procfs::exe(pid).unwrap_or_default(), None),
        };
        let env_bytes = procfs::stat(pid).and_then(|s| s.env_bytes());
        let exec = Exec {
            at,
            path,
            argv: procfs::cmdline(pid),
            env_bytes,
            env_vars,
        };
        if pid == self.root {
            self.started = true;
        }
        let totals = &mut self.execs;
        totals.count += 1;
        if let Some(b) = env_bytes {
            totals.env_measured += 1;
            totals.env_bytes_total += b;
            totals.env_bytes_max = totals.env_bytes_max.max(b);
            totals.env_bytes_min = Some(totals.env_bytes_min.map_or(b, |m| m.min(b)));
        }
        totals.env_vars_max = totals.env_vars_max.max(env_vars.unwrap_or(0));
        if let Some(t) = self.tasks.get_mut(index) {
            t.exec_count += 1;
            if t.execs.len() < MAX_EXECS_PER_TASK {
                t.execs.push(exec);
            } else if let Some(last) = t.execs.last_mut() {
                *last = exec;
            }
        }
        // Descriptors opened with O_CLOEXEC are gone now, and their numbers
        // may be reused by pipes or sockets the tracer does not follow:
        // keep only those that still point under the same directory.
        self.revalidate_fds(pid, index);
    }

    fn revalidate_fds(&mut self, pid: i32, index: usize) {
        let tgid = self.tasks.get(index).map_or(pid, |t| t.tgid);
        let Some(map) = self.fds.get_mut(&tgid) else {
            return;
        };
        let dirs = &self.dirs;
        let cwd = &self.cwd;
        map.retain(|&fd, &mut dir| {
            let Some(target) = procfs::fd_target(pid, fd) else {
                return false;
            };
            match (dir_key(&target, cwd), dirs.get(dir as usize)) {
                (Some(key), Some((known, _))) => &key == known || known == Path::new("(other)"),
                _ => false,
            }
        });
    }

    fn on_exit_event(&mut self, pid: i32) {
        let Some(l) = self.live.get(&pid) else {
            return;
        };
        let index = l.index;
        let exit = event_msg(pid).and_then(|m| Exit::from_wait_status(m as i32));
        let stat = procfs::task_stat(pid);
        let io = procfs::task_io(pid);
        if let Some(t) = self.tasks.get_mut(index) {
            if let Some(e) = exit {
                t.exit = Some(e);
            }
            if let Some(s) = stat {
                t.user_ticks = s.utime;
                t.sys_ticks = s.stime;
            }
            if let Some(io) = io {
                t.io = io;
            }
        }
    }
}

/// Why tracing could not start, in words a user can act on.
fn seize_error(errno: i32) -> Error {
    match errno {
        libc::EPERM | libc::EACCES => Error::Usage(
            "ptrace is not permitted here (kernel.yama.ptrace_scope or a seccomp filter); explain needs it"
                .into(),
        ),
        libc::ENOSYS => Error::Usage("ptrace is not available on this system; explain needs it".into()),
        e => Error::Usage(format!(
            "cannot trace the command: ptrace failed ({})",
            std::io::Error::from_raw_os_error(e)
        )),
    }
}

/// Traces one run of the command. `on_start` is called the moment the
/// command is released (after tracing is set up, before its exec).
pub fn trace(config: &TraceConfig, on_start: impl FnOnce(Instant)) -> Result<Trace> {
    signals::install();
    install_alarm_handler();
    let held = held::fork(&config.command)?;
    let pid = held.pid();

    let options = libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACEEXIT
        | libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_EXITKILL;
    if ptrace(libc::PTRACE_SEIZE, pid, 0, options as usize) != 0 {
        return Err(seize_error(errno()));
    }
    // Stop it once so it can be resumed with syscall tracing on.
    if ptrace(libc::PTRACE_INTERRUPT, pid, 0, 0) != 0 {
        return Err(seize_error(errno()));
    }
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if r == pid && libc::WIFSTOPPED(status) {
            break;
        }
        if r < 0 && errno() == libc::EINTR {
            continue;
        }
        return Err(Error::Spawn {
            command: config.command.shown(),
            source: std::io::Error::other("the traced process ended before it could be started"),
        });
    }
    resume(pid, 0);

    let t0 = Instant::now();
    let mut tracer = Tracer {
        tasks: Vec::new(),
        live: HashMap::new(),
        syscalls: vec![SyscallCount::default(); TABLE_SIZE],
        other_syscalls: HashMap::new(),
        spawn_details: HashMap::new(),
        spawn_seconds: [0.0; 3],
        execs: ExecTotals::default(),
        fds: HashMap::new(),
        dirs: Vec::new(),
        dir_index: HashMap::new(),
        cwd: config
            .command
            .cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/")),
        t0,
        root: pid,
        started: false,
        root_exec_error: None,
        killing: false,
        foreign_exits: Vec::new(),
    };
    tracer.new_task(pid, t0);

    // Release the child: it execs the command now.
    held.release().map_err(|source| Error::Spawn {
        command: config.command.shown(),
        source,
    })?;
    on_start(t0);
    let deadline = config.timeout.and_then(|t| t0.checked_add(t));
    let watchdog = Watchdog::start(deadline);
    let mut interrupted = false;
    let mut timed_out = false;

    let outcome = run_loop(&mut tracer, deadline, &mut interrupted, &mut timed_out);
    drop(watchdog);
    let ended_at = Instant::now();
    // What escaped the trace (CLONE_UNTRACED) and was left running.
    crate::exec::tree::kill_leftovers();
    outcome?;

    if let Some(e) = tracer.root_exec_error {
        if !tracer.started {
            return Err(Error::Spawn {
                command: config.command.shown(),
                source: std::io::Error::from_raw_os_error(e),
            });
        }
    }
    let mut spawn_details: Vec<SpawnDetail> = tracer
        .spawn_details
        .into_iter()
        .map(|((created_by, syscall, event), count)| SpawnDetail {
            created_by,
            syscall,
            event,
            count,
        })
        .collect();
    spawn_details.sort_by_key(|d| (d.created_by, d.syscall, d.event));
    let mut other_syscalls: Vec<(u64, SyscallCount)> = tracer.other_syscalls.into_iter().collect();
    other_syscalls.sort_by_key(|&(nr, _)| nr);
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Ok(Trace {
        tasks: tracer.tasks,
        syscalls: tracer.syscalls,
        other_syscalls,
        spawn_details,
        spawn_seconds: tracer.spawn_seconds,
        execs: tracer.execs,
        dir_writes: tracer.dirs.into_iter().filter(|d| d.1 > 0).collect(),
        wall: ended_at.saturating_duration_since(t0).as_secs_f64(),
        interrupted,
        timed_out,
        foreign_exits: tracer.foreign_exits,
        clock_ticks: if ticks > 0 { ticks as f64 } else { 100.0 },
    })
}

fn run_loop(
    tracer: &mut Tracer,
    deadline: Option<Instant>,
    interrupted: &mut bool,
    timed_out: &mut bool,
) -> Result<()> {
    const PTRACE_EVENT_STOP: i32 = 128;
    let syscall_stop = libc::SIGTRAP | 0x80;
    while !tracer.live.is_empty() {
        if signals::received().is_some() && !*interrupted {
            *interrupted = true;
            tracer.kill_all();
        }
        if deadline.is_some_and(|d| Instant::now() >= d) && !*timed_out && !*interrupted {
            *timed_out = true;
            tracer.kill_all();
        }
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        let now = Instant::now();
        if pid < 0 {
            match errno() {
                libc::EINTR => {
                    tracer.sweep(now);
                    continue;
                }
                // No children left at all: whatever is still "live" is gone.
                _ => break,
            }
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            tracer.on_exited(pid, status, now);
            if pid == tracer.root {
                // The run is over when the command exits, as in `run`:
                // what it left running (a daemon) is killed, not waited for.
                tracer.kill_all();
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        if !tracer.live.contains_key(&pid) {
            // A new task whose first stop arrived before its parent's event.
            tracer.new_task(pid, now);
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xffff;
        if sig == syscall_stop {
            tracer.on_syscall_stop(pid, now)?;
            resume(pid, 0);
        } else if event == PTRACE_EVENT_STOP {
            if matches!(
                sig,
                libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
            ) {
                // A group-stop: stay stopped, but keep reporting (SIGCONT, death).
                ptrace(libc::PTRACE_LISTEN, pid, 0, 0);
            } else {
                // The first stop of a new task, or an interrupt.
                resume(pid, 0);
            }
        } else if event != 0 && sig == libc::SIGTRAP {
            match event {
                libc::PTRACE_EVENT_FORK => tracer.on_creation(pid, Event::Fork, now),
                libc::PTRACE_EVENT_VFORK => tracer.on_creation(pid, Event::Vfork, now),
                libc::PTRACE_EVENT_CLONE => tracer.on_creation(pid, Event::Clone, now),
                libc::PTRACE_EVENT_EXEC => tracer.on_exec(pid, now),
                libc::PTRACE_EVENT_EXIT => tracer.on_exit_event(pid),
                _ => {}
            }
            resume(pid, 0);
        } else {
            // A signal for the tracee: deliver it.
            resume(pid, sig);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLONE_VFORK: u64 = 0x4000;

    #[test]
    fn classifies_clone_flags() {
        // glibc fork(): CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD.
        assert_eq!(Created::from_clone_flags(0x0120_0011), Created::Fork);
        // posix_spawn (glibc >= 2.24): CLONE_VM|CLONE_VFORK.
        assert_eq!(
            Created::from_clone_flags(CLONE_VM | CLONE_VFORK),
            Created::Vfork
        );
        // pthread_create: CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|...
        assert_eq!(Created::from_clone_flags(0x003d_0f00), Created::Thread);
        assert_eq!(Created::from_clone_flags(CLONE_VM), Created::Vfork);
        assert_eq!(Created::from_clone_flags(CLONE_VFORK), Created::Fork);
    }

    #[test]
    fn keys_directories() {
        let cwd = Path::new("/home/u/proj");
        let k = |p: &str| dir_key(Path::new(p), cwd).map(|p| p.display().to_string());
        assert_eq!(k("/home/u/proj/build/obj/a.o").as_deref(), Some("./build"));
        assert_eq!(k("/home/u/proj/out.txt").as_deref(), Some("."));
        assert_eq!(k("/tmp/x").as_deref(), Some("/tmp"));
        assert_eq!(k("/var/tmp/a/b/c").as_deref(), Some("/var/tmp"));
        assert_eq!(k("/dev/null"), None);
        assert_eq!(k("/dev/shm/x").as_deref(), Some("/dev/shm"));
        assert_eq!(k("/proc/self/fd/1"), None);
        assert_eq!(k("pipe:[1234]"), None);
    }

    #[test]
    fn syscall_info_layout() {
        // struct ptrace_syscall_info is 88 bytes on x86_64.
        assert_eq!(std::mem::size_of::<SyscallInfo>(), 88);
    }
}
