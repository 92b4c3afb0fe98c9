//! The only module that starts *measured* processes: spawn a prepared
//! command, wait for it, read its accounting, kill its tree; fork a command
//! held before its exec for explain's tracer and the profiler (`held`);
//! also fresh working directories and signal handling. Helper processes
//! that are never measured (the store writer, a monitor) are started by
//! their own modules. See docs/ARCHITECTURE.md, `exec`.

pub mod held;
pub mod perf;
pub mod procio;
pub mod signals;
pub mod simulate;
pub mod tree;
pub mod workdir;

mod spawn;

pub use held::HeldCommand;

pub use spawn::{
    allowed_cpus, check_cpus, environment, resolve_program, resolve_user, Credentials, Input,
    Outcome, Output, Prepared, SpawnConfig, Spawner, FORK_MAX, SCHEDULE_MAX,
};
pub use spawn::{receive_descriptor, send_descriptor, socket_pair, unread_reports};

/// Makes this process the reaper of orphaned descendants, so processes that
/// a benchmarked command leaves behind (double forks, daemons) stay findable
/// and killable instead of being adopted by init.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer argument.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Reaps every exited child without blocking (orphans adopted as subreaper).
pub fn reap_orphans() {
    loop {
        let mut status = 0;
        // SAFETY: plain waitpid on any child, non-blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}

/// Reaps exited children of ours that are not in `keep` (helpers whose
/// status belongs to someone else), without blocking.
pub fn reap_orphans_except(keep: &[libc::pid_t]) {
    for pid in tree::children(std::process::id() as libc::pid_t) {
        if !keep.contains(&pid) {
            let mut status = 0;
            // SAFETY: non-blocking waitpid on one of our children.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        }
    }
}
