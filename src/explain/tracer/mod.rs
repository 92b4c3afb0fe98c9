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
//!
//! [`model`] is what a trace records, [`ptrace`] the kernel's interface,
//! [`tasks`] the tracer's state and what each stop does to it; this file
//! starts the command and runs the loop that waits for stops.

pub(crate) mod model;
mod ptrace;
mod tasks;

use std::path::PathBuf;
use std::time::Instant;

use crate::error::{Error, ExplainError, Result};
use crate::exec::held;
use crate::exec::signals;
pub use model::{Created, Event, Exec, Exit, Task, Trace, TraceConfig};
use ptrace::{errno, install_alarm_handler, ptrace, resume, Watchdog};
use tasks::Tracer;

/// Why tracing could not start, in words a user can act on.
fn seize_error(errno: i32) -> Error {
    match errno {
        libc::EPERM | libc::EACCES => ExplainError::PtraceNotPermitted,
        libc::ENOSYS => ExplainError::PtraceMissing,
        e => ExplainError::Ptrace(e),
    }
    .into()
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
    let cwd = config
        .command
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut tracer = Tracer::new(pid, cwd, t0);

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

    if let Some(e) = tracer.exec_failure() {
        return Err(Error::Spawn {
            command: config.command.shown(),
            source: std::io::Error::from_raw_os_error(e),
        });
    }
    let wall = ended_at.saturating_duration_since(t0).as_secs_f64();
    Ok(tracer.into_trace(wall, interrupted, timed_out))
}

fn run_loop(
    tracer: &mut Tracer,
    deadline: Option<Instant>,
    interrupted: &mut bool,
    timed_out: &mut bool,
) -> Result<()> {
    const PTRACE_EVENT_STOP: i32 = 128;
    let syscall_stop = libc::SIGTRAP | 0x80;
    while tracer.tracing() {
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
            if tracer.is_root(pid) {
                // The run is over when the command exits, as in `run`:
                // what it left running (a daemon) is killed, not waited for.
                tracer.kill_all();
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        if !tracer.knows(pid) {
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
