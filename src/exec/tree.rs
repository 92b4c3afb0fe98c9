//! Finding and killing every descendant of the harness. Used on timeouts and
//! interruptions only, so it may allocate.

use std::collections::HashSet;
use std::sync::Mutex;

/// Children of cmdscope that are not part of any benchmark (the store
/// writer): never killed by [`kill_all`].
static PROTECTED: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Exempts one of cmdscope's own helper processes from [`kill_all`].
pub fn protect(pid: libc::pid_t) {
    if let Ok(mut p) = PROTECTED.lock() {
        p.push(pid);
    }
}

/// Live (non-zombie) descendants of `root`, found through
/// `/proc/<pid>/task/<tid>/children`.
pub fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in text.split_whitespace().filter_map(|s| s.parse().ok()) {
                if seen.insert(child) {
                    if !is_zombie(child) {
                        out.push(child);
                    }
                    stack.push(child);
                }
            }
        }
    }
    out
}

fn is_zombie(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // The state follows the parenthesised command name, which may contain spaces.
            let close = s.rfind(')')?;
            s[close + 1..]
                .split_whitespace()
                .next()
                .map(|st| st == "Z" || st == "X")
        })
        .unwrap_or(true)
}

/// SIGKILLs the process group `pgid` and every live descendant of the harness
/// until none is left (processes may fork while we kill; killed ones cannot).
/// The harness is a subreaper, so descendants that left the group or were
/// orphaned are still its descendants.
pub fn kill_all(pgid: libc::pid_t) {
    // SAFETY: kill on a process group we created.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let me = std::process::id() as libc::pid_t;
    let protected = PROTECTED.lock().map(|p| p.clone()).unwrap_or_default();
    for _ in 0..1000 {
        let live: Vec<libc::pid_t> = descendants(me)
            .into_iter()
            .filter(|p| !protected.contains(p))
            .collect();
        if live.is_empty() {
            return;
        }
        for pid in live {
            // SAFETY: kill of a descendant pid we just listed.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
