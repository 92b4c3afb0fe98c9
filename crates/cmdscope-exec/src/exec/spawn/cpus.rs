//! The CPUs a command may be pinned to (`--cpus`).

use super::*;

/// [`cpu_set`]'s check alone: every CPU of `list` is one cmdscope may run
/// on (`doctor --cpus` checks what `run --cpus` would pin to).
pub fn check_cpus(list: &[usize]) -> Result<()> {
    cpu_set(list).map(|_| ())
}

/// The CPUs cmdscope may run on, as it was started, in increasing order:
/// read once, before `--isolate` pins cmdscope's own threads (and the
/// threads and helpers started after) to one of them, so that the
/// commands' CPUs are still checked against all of them.
pub fn allowed_cpus() -> Result<Vec<usize>> {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    if let Some(list) = ALLOWED.get() {
        return Ok(list.clone());
    }
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes into it.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    let list: Vec<usize> = (0..8 * size)
        // SAFETY: i < CPU_SETSIZE.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &allowed) })
        .collect();
    Ok(ALLOWED.get_or_init(|| list).clone())
}

/// Checks `--cpus` against the CPUs cmdscope may run on ([`allowed_cpus`]),
/// so that a CPU that does not exist (or is not allowed) is a usage error,
/// not a run that silently goes unpinned.
pub(super) fn cpu_set(list: &[usize]) -> Result<libc::cpu_set_t> {
    let allowed = allowed_cpus()?;
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: cpu_set_t is plain data.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in list {
        if c >= max || !allowed.contains(&c) {
            return Err(ExecError::CpuUnavailable {
                cpu: c,
                available: allowed.clone(),
            }
            .into());
        }
        // SAFETY: checked against CPU_SETSIZE first.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    Ok(set)
}
