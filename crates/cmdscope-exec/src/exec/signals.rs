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
