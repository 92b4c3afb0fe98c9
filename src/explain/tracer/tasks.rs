//! The tracer's state and what each stop does to it: one record per task,
//! syscalls counted at their exit, creations classified at their entry
//! and cross-checked with the kernel's event, execs, and write volume per
//! directory through the descriptors each process writes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::super::mem;
use super::super::procfs;
use super::super::syscalls::{nr, TABLE_SIZE};
use super::model::{
    Created, Event, Exec, ExecTotals, Exit, SpawnDetail, SyscallCount, Task, Trace,
    MAX_EXECS_PER_TASK,
};
use super::ptrace::{self, errno, event_msg, SyscallStop};
use crate::error::Result;
use crate::exec::procio::ProcIo;

/// Directories write volume is attributed to; later ones go to "(other)".
const MAX_DIRS: usize = 1024;
/// Writable descriptors remembered per process.
const MAX_FDS_PER_PROCESS: usize = 4096;
/// Environment pointers counted per exec.
const MAX_ENV_VARS: u64 = 100_000;
/// Unknown syscall numbers counted separately (then lumped together).
const MAX_OTHER_SYSCALLS: usize = 64;

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

pub(super) struct Tracer {
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
    /// The tracer of the command `root`, started at `t0` in `cwd` (where
    /// relative paths it writes lead).
    pub(super) fn new(root: i32, cwd: PathBuf, t0: Instant) -> Tracer {
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
            cwd,
            t0,
            root,
            started: false,
            root_exec_error: None,
            killing: false,
            foreign_exits: Vec::new(),
        };
        tracer.new_task(root, t0);
        tracer
    }

    /// Whether a traced task is still alive.
    pub(super) fn tracing(&self) -> bool {
        !self.live.is_empty()
    }

    /// Whether `pid` is a task already traced.
    pub(super) fn knows(&self, pid: i32) -> bool {
        self.live.contains_key(&pid)
    }

    pub(super) fn is_root(&self, pid: i32) -> bool {
        pid == self.root
    }

    /// Why the command itself could not be exec'd (an errno), if it never was.
    pub(super) fn exec_failure(&self) -> Option<i32> {
        self.root_exec_error.filter(|_| !self.started)
    }

    /// What was recorded, the run having lasted `wall` seconds.
    pub(super) fn into_trace(self, wall: f64, interrupted: bool, timed_out: bool) -> Trace {
        let mut spawn_details: Vec<SpawnDetail> = self
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
        let mut other_syscalls: Vec<(u64, SyscallCount)> =
            self.other_syscalls.into_iter().collect();
        other_syscalls.sort_by_key(|&(nr, _)| nr);
        // SAFETY: sysconf has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Trace {
            tasks: self.tasks,
            syscalls: self.syscalls,
            other_syscalls,
            spawn_details,
            spawn_seconds: self.spawn_seconds,
            execs: self.execs,
            dir_writes: self.dirs.into_iter().filter(|d| d.1 > 0).collect(),
            wall,
            interrupted,
            timed_out,
            foreign_exits: self.foreign_exits,
            clock_ticks: if ticks > 0 { ticks as f64 } else { 100.0 },
        }
    }

    fn secs(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.t0).as_secs_f64()
    }

    pub(super) fn new_task(&mut self, tid: i32, at: Instant) -> usize {
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

    pub(super) fn kill_all(&mut self) {
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
    pub(super) fn sweep(&mut self, now: Instant) {
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

    pub(super) fn on_exited(&mut self, pid: i32, status: i32, now: Instant) {
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

    pub(super) fn on_syscall_stop(&mut self, pid: i32, now: Instant) -> Result<()> {
        match ptrace::syscall_stop(pid)? {
            Some(SyscallStop::ForeignEntry) => {
                // A 32-bit tracee: its numbers mean other calls. Count them
                // together; nothing else is interpreted.
                self.count_syscall(u64::MAX, 0);
                if let Some(l) = self.live.get_mut(&pid) {
                    l.entry = None;
                }
            }
            Some(SyscallStop::Entry { nr, args }) => self.on_entry(pid, nr, args, now),
            Some(SyscallStop::Exit { rval }) => self.on_exit(pid, rval, now),
            Some(SyscallStop::Other) | None => {}
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

    pub(super) fn on_creation(&mut self, pid: i32, event: Event, now: Instant) {
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

    pub(super) fn on_exec(&mut self, pid: i32, now: Instant) {
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

    pub(super) fn on_exit_event(&mut self, pid: i32) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
