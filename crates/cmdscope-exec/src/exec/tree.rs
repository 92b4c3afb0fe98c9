//! Finding and killing every descendant of the harness: on timeouts and
//! interruptions, after a run that left processes behind, and at the end of
//! a session. Off the measured path, so it may allocate.

use std::collections::HashSet;
use std::sync::Mutex;

/// Children of cmdscope that are not part of any run, never killed by
/// [`kill_all`]: (pid, with its descendants). The spawner is protected
/// alone (its children are the runs); the store writer, a `--monitor` and
/// what the hooks started are protected with their descendants.
static PROTECTED: Mutex<Vec<(libc::pid_t, bool)>> = Mutex::new(Vec::new());

/// Environment entries (`KEY=VALUE`) that mark a helper's processes (a
/// `--monitor`'s): a process holding one is the helper's, with its
/// descendants, wherever it went (a daemon the helper started and left is
/// adopted by cmdscope, outside the helper's tree).
static MARKED: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Exempts every process whose environment holds `marker` (`KEY=VALUE`)
/// from [`kill_all`], with its descendants, until [`unprotect_marked`].
pub fn protect_marked(marker: &[u8]) {
    if let Ok(mut m) = MARKED.lock() {
        m.push(marker.to_vec());
    }
}

/// Stops exempting the processes marked with `marker`.
pub fn unprotect_marked(marker: &[u8]) {
    if let Ok(mut m) = MARKED.lock() {
        m.retain(|x| x != marker);
    }
}

fn markers() -> Vec<Vec<u8>> {
    MARKED.lock().map(|m| m.clone()).unwrap_or_default()
}

/// Whether the environment of `pid` holds one of `markers`.
fn marked_with(pid: libc::pid_t, markers: &[Vec<u8>]) -> bool {
    if markers.is_empty() {
        return false;
    }
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environ
        .split(|&b| b == 0)
        .any(|entry| markers.iter().any(|m| m.as_slice() == entry))
}

/// SIGKILLs every live descendant of cmdscope whose environment holds
/// `marker`, each with its process group, until none is left (bounded as
/// [`kill_all`]): what a helper started, wherever it went.
pub fn kill_marked(marker: &[u8]) {
    let me = std::process::id() as libc::pid_t;
    let markers = [marker.to_vec()];
    for _ in 0..10_000 {
        let (live, _) = scan_except(me, &[], &[]);
        let ours: Vec<libc::pid_t> = live
            .into_iter()
            .filter(|&p| marked_with(p, &markers))
            .collect();
        if ours.is_empty() {
            return;
        }
        ours.into_iter().for_each(kill_with_group);
        super::reap_orphans_except(&protected().0);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// SIGKILLs `pid`, a descendant just listed, and the process group it
/// leads (if it leads one: the commands do).
fn kill_with_group(pid: libc::pid_t) {
    // SAFETY: kill has no memory effects; `pid` is a descendant of
    // cmdscope's, not reaped, so the pid is still its own.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Exempts one of cmdscope's own helper processes from [`kill_all`].
pub fn protect(pid: libc::pid_t) {
    if let Ok(mut p) = PROTECTED.lock() {
        p.push((pid, false));
    }
}

/// Exempts a process and every descendant of it from [`kill_all`].
pub fn protect_tree(pid: libc::pid_t) {
    if let Ok(mut p) = PROTECTED.lock() {
        p.push((pid, true));
    }
}

/// Stops exempting `pid` (its process is gone, or it is to be killed).
pub fn unprotect(pid: libc::pid_t) {
    if let Ok(mut p) = PROTECTED.lock() {
        p.retain(|&(q, _)| q != pid);
    }
}

/// (every protected pid, the ones protected with their descendants).
fn protected() -> (Vec<libc::pid_t>, Vec<libc::pid_t>) {
    let all = PROTECTED.lock().map(|p| p.clone()).unwrap_or_default();
    let trees = all.iter().filter(|p| p.1).map(|p| p.0).collect();
    (all.into_iter().map(|p| p.0).collect(), trees)
}

/// The children of `pid`, through `/proc/<pid>/task/<tid>/children`.
pub fn children(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        out.extend(
            text.split_whitespace()
                .filter_map(|s| s.parse::<libc::pid_t>().ok()),
        );
    }
    out
}

/// Descendants of `root`, found through `/proc/<pid>/task/<tid>/children`
/// (live ones, zombies), leaving out the processes in `skip`, those whose
/// environment holds one of `markers`, and their descendants.
fn scan_except(
    root: libc::pid_t,
    skip: &[libc::pid_t],
    markers: &[Vec<u8>],
) -> (Vec<libc::pid_t>, Vec<libc::pid_t>) {
    let mut live = Vec::new();
    let mut zombies = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for child in children(pid) {
            if !skip.contains(&child) && !marked_with(child, markers) && seen.insert(child) {
                if is_zombie(child) {
                    zombies.push(child);
                } else {
                    live.push(child);
                }
                stack.push(child);
            }
        }
    }
    (live, zombies)
}

/// Live descendants of the harness that no one protects: what runs (and,
/// at the session's end, hooks) left behind. Exited ones are reaped first.
pub fn unprotected() -> Vec<libc::pid_t> {
    let (all, trees) = protected();
    super::reap_orphans_except(&all);
    let me = std::process::id() as libc::pid_t;
    let (live, _) = scan_except(me, &trees, &markers());
    live.into_iter().filter(|p| !all.contains(p)).collect()
}

/// After a run of a mode that starts its command itself (explain's tracer,
/// the profiler, through `exec::held`): kills what the run left running,
/// as `run` does after each of its runs ([`unprotected`], [`kill_all`]),
/// and returns how many processes that was. cmdscope must be their
/// subreaper (`exec::become_subreaper`), or what left the tree is lost.
pub fn kill_leftovers() -> usize {
    let left = unprotected().len();
    if left > 0 {
        kill_all(None);
    }
    left
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

/// SIGKILLs every descendant of `root` (not `root` itself), each with its
/// process group, until a scan finds none alive: the command tree of one
/// spawner among several whose commands run at once. What left that tree
/// (orphans the harness adopted) is not found here; the caller kills it
/// once every command has ended.
pub fn kill_descendants(root: libc::pid_t) {
    // Bounded as `kill_all` is.
    for _ in 0..10_000 {
        let (live, _) = scan_except(root, &[], &[]);
        if live.is_empty() {
            return;
        }
        live.into_iter().for_each(kill_with_group);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// SIGKILLs the process group `pgid` (when known) and every descendant of
/// the harness except its own helpers (and what they protect), until the
/// tree is provably empty.
///
/// The harness is a subreaper, so descendants that left the group or were
/// orphaned are still its descendants. A scan of /proc can miss a process
/// that is reparented to us while the scan runs, but only when its parent
/// exits during the scan; so a scan proves the tree empty only when it finds
/// neither a live process nor a zombie, after our own zombies were reaped.
/// Killed processes cannot fork (a fatal signal aborts fork), so the loop
/// ends.
pub fn kill_all(pgid: Option<libc::pid_t>) {
    if let Some(pgid) = pgid {
        // SAFETY: kill on a process group we created.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    let me = std::process::id() as libc::pid_t;
    let (protected, trees) = protected();
    let markers = markers();
    // Bounded (about ten seconds) in case a zombie's parent never reaps it.
    for _ in 0..10_000 {
        super::reap_orphans_except(&protected);
        let (live, zombies) = scan_except(me, &trees, &markers);
        let live: Vec<libc::pid_t> = live
            .into_iter()
            .filter(|p| !protected.contains(p))
            .collect();
        if live.is_empty() && zombies.iter().all(|p| protected.contains(p)) {
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
