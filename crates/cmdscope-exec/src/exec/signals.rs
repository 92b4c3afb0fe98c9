//! SIGINT/SIGTERM handling for the harness: a flag, nothing else.
//!
//! Installed with `sigaction` *without* SA_RESTART so that a blocking
//! `waitid`/`poll` returns EINTR and the runner can kill the child tree,
//! export what it has and exit 130. Hand-written (not signal-hook) because
//! signal-hook registers with SA_RESTART, which would keep us blocked in
//! `waitid` until the child exits on its own.

use std::sync::atomic::{AtomicI32, Ordering};

static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    RECEIVED.store(sig, Ordering::SeqCst);
}

/// Install the handlers for SIGINT and SIGTERM. Idempotent.
pub fn install() {
    // SAFETY: a zeroed sigaction with a plain handler is valid; the handler
    // only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// The signal received, if any (SIGINT or SIGTERM).
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Runs `f` in a thread that never receives SIGINT, SIGTERM or SIGALRM, so
/// they reach the thread that waits (explain's tracer in its waitpid, the
/// runner in its waitid) and interrupt it.
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
            .name("cmdscope-quiet".into())
            .spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        handle
    }
}
