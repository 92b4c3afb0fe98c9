//! The only module that touches processes: spawn a prepared command, wait for
//! it, read its accounting, kill its tree. See ARCHITECTURE.md, `exec`.

pub mod perf;
pub mod procio;
pub mod signals;
pub mod tree;

mod spawn;

pub use spawn::{
    environment, resolve_program, resolve_user, Credentials, Input, Outcome, Output, Prepared,
    SpawnConfig,
};

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

/// Drops the harness's resident code pages before measuring.
///
/// Linux folds the spawning process's resident size into the child's
/// `ru_maxrss` at exec (the old mm's high-water mark goes into the child's
/// signal struct, and with vfork-style spawning the old mm is ours), so a
/// child's peak memory can never read below the harness's RSS. Most of that
/// RSS is code pages of our binary and its libraries touched during start-up
/// (argument parsing, formatting). Read-only executable file mappings are
/// never written, so `MADV_DONTNEED` on them only unmaps pages that fault
/// back in from the page cache when next executed: the floor drops to what
/// the measurement loop really touches. Writable or read-only data mappings
/// are left alone (relocated data lives there).
pub fn trim_resident_code() {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return;
    };
    // Each mapping: a header line, then "Key: value kB" lines.
    let mut current: Option<(usize, usize, bool)> = None;
    let trim = |m: Option<(usize, usize, bool)>| {
        if let Some((start, end, true)) = m {
            // SAFETY: a whole read-only, file-backed mapping of this process
            // without private (copied-on-write) pages: its pages are clean
            // page-cache pages, unmapping them loses nothing. MADV_RANDOM
            // keeps fault-around from mapping 64 KiB for every page touched.
            unsafe {
                let p = start as *mut libc::c_void;
                libc::madvise(p, end - start, libc::MADV_RANDOM);
                libc::madvise(p, end - start, libc::MADV_DONTNEED);
            }
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(start), Ok(end)) =
                (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                trim(current.take());
                let perms = fields.next().unwrap_or("");
                let path = fields.nth(3).unwrap_or("");
                let read_only = perms == "r-xp" || perms == "r--p";
                current = Some((start, end, read_only && path.starts_with('/')));
                continue;
            }
        }
        if first == "Anonymous:" && fields.next() != Some("0") {
            // Holds private copies (relocated data): must not be dropped.
            if let Some(m) = current.as_mut() {
                m.2 = false;
            }
        }
    }
    trim(current.take());
    // The child inherits our high-water mark, not our current size: reset
    // it to the current size ("5" resets the peak RSS, see proc(5)).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The harness's peak resident size in bytes since the last reset (VmHWM):
/// read after the measurement loop, it is the floor under every child's
/// reported peak memory.
pub fn peak_resident_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}
