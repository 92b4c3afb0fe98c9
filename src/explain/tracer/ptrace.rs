//! The kernel's side of tracing: ptrace requests, what a syscall-stop is,
//! and the signals that kick the tracer thread out of waitpid (the
//! watchdog, and threads that never receive them).

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::exec::signals;

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

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

/// What a syscall-stop is, as PTRACE_GET_SYSCALL_INFO says.
pub(super) enum SyscallStop {
    Entry {
        nr: u64,
        args: [u64; 6],
    },
    /// The entry of a 32-bit tracee's call: its numbers mean other calls.
    ForeignEntry,
    Exit {
        rval: i64,
    },
    Other,
}

/// The syscall-stop `pid` is in; None when the task is gone.
pub(super) fn syscall_stop(pid: i32) -> Result<Option<SyscallStop>> {
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
            libc::ESRCH => Ok(None),
            e => Err(Error::Failed(format!(
                "PTRACE_GET_SYSCALL_INFO failed ({}); explain needs Linux 5.3 or newer",
                std::io::Error::from_raw_os_error(e)
            ))),
        };
    }
    Ok(Some(match info.op {
        OP_ENTRY if info.arch != AUDIT_ARCH_X86_64 => SyscallStop::ForeignEntry,
        OP_ENTRY => {
            let mut args = [0u64; 6];
            args.copy_from_slice(&info.data[1..7]);
            SyscallStop::Entry {
                nr: info.data[0],
                args,
            }
        }
        OP_EXIT => SyscallStop::Exit {
            rval: info.data[0] as i64,
        },
        _ => SyscallStop::Other,
    }))
}

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

pub(super) fn ptrace(request: libc::c_uint, pid: i32, addr: usize, data: usize) -> libc::c_long {
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

pub(super) fn event_msg(pid: i32) -> Option<u64> {
    let mut msg: libc::c_ulong = 0;
    let rc = ptrace(
        libc::PTRACE_GETEVENTMSG,
        pid,
        0,
        &mut msg as *mut libc::c_ulong as usize,
    );
    (rc == 0).then_some(msg as u64)
}

pub(super) fn resume(pid: i32, signal: i32) {
    // ESRCH (the task was killed meanwhile) is fine: its exit is reported.
    ptrace(libc::PTRACE_SYSCALL, pid, 0, signal as usize);
}

extern "C" fn on_alarm(_: libc::c_int) {}

/// SIGALRM interrupts the tracer's waitpid (no SA_RESTART): the watchdog
/// sends it on timeouts, interruptions and every second as a keepalive.
pub(super) fn install_alarm_handler() {
    // SAFETY: a zeroed sigaction with a handler that does nothing.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as *const () as usize;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
    }
}

/// Kicks the tracer thread out of waitpid when something needs attention.
pub(super) struct Watchdog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    pub(super) fn start(deadline: Option<Instant>) -> Watchdog {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        // SAFETY: pthread_self has no preconditions.
        let tracer = unsafe { libc::pthread_self() };
        let flag = stop.clone();
        let handle = signals::spawn_quiet_thread(move || {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_info_layout() {
        // struct ptrace_syscall_info is 88 bytes on x86_64.
        assert_eq!(std::mem::size_of::<SyscallInfo>(), 88);
    }
}
