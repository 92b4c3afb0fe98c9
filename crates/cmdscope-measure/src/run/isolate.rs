//! `--isolate`: the measured commands on CPUs of their own. cmdscope keeps
//! the first CPU it may run on for itself and its helper processes (the
//! spawner, the store writer), and the commands get the rest, so the
//! harness's own work (reading accounting, writing the store, drawing the
//! progress bar) does not compete with the run it measures.

use crate::error::{OptionError, Result};

/// The CPUs this process may run on, in increasing order (as it was
/// started: see `exec::allowed_cpus`).
pub fn available() -> Result<Vec<usize>> {
    crate::exec::allowed_cpus()
}

/// Splits the available CPUs: (cmdscope's, the commands').
pub fn split() -> Result<(usize, Vec<usize>)> {
    let cpus = available()?;
    match cpus.split_first() {
        Some((&own, rest)) if !rest.is_empty() => Ok((own, rest.to_vec())),
        _ => Err(OptionError::IsolateNeedsTwoCpus(cpus.len()).into()),
    }
}

/// Pins every thread of this process and every child process (the
/// helpers started so far) to `cpu`; threads and processes started later
/// inherit it. The measured commands are pinned elsewhere by their own
/// `--cpus` list, which the spawner applies before exec.
pub fn pin_harness(cpu: usize) -> Result<()> {
    // Read before pinning: the commands' CPUs are checked against it.
    available()?;
    // SAFETY: as in `available`; `cpu` came from the available set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    let mut ids: Vec<libc::pid_t> = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")?.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        ids.push(tid);
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        ids.extend(
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<libc::pid_t>().ok()),
        );
    }
    for id in ids {
        // A child that has just exited cannot be pinned and needs not be.
        // SAFETY: plain system call on a pid and a valid set.
        let _ = unsafe { libc::sched_setaffinity(id, size, &set) };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_available_cpus_are_listed() {
        let cpus = available().unwrap();
        assert!(!cpus.is_empty());
        assert!(cpus.windows(2).all(|w| w[0] < w[1]));
        match split() {
            Ok((own, rest)) => {
                assert_eq!(own, cpus[0]);
                assert_eq!(rest, cpus[1..]);
            }
            Err(e) => {
                assert_eq!(cpus.len(), 1);
                assert!(e.to_string().contains("at least two CPUs"), "{e}");
            }
        }
    }
}
