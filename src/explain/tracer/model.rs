//! What one traced run records: every task (how it was created, its execs,
//! its times and how it ended), counts per system call, how processes were
//! created, exec totals and write volume per directory.

use std::path::PathBuf;
use std::time::Duration;

use crate::exec::procio::ProcIo;
use crate::exec::HeldCommand;

use super::super::procfs::Argv;

/// Exec records kept per task: the first ones (shell detection needs the
/// first two) and, in the last slot, the latest.
pub const MAX_EXECS_PER_TASK: usize = 4;
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

    pub(super) fn index(self) -> usize {
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
    pub(super) fn from_wait_status(status: i32) -> Option<Exit> {
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
}
