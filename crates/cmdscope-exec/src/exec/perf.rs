//! Hardware and software counters through `perf_event_open`, opened on a
//! child before it execs (`enable_on_exec`, `inherit`), so they count that
//! command and its descendants only, never the harness.
//!
//! The attribute struct is written by hand: the libc crate does not carry it,
//! and we need only the fields up to PERF_ATTR_SIZE_VER5.

use crate::metrics::Metric;

/// `perf_event_attr` up to PERF_ATTR_SIZE_VER5: the one definition, for
/// the counters here and the sampler of `explain --profile`.
#[repr(C)]
#[derive(Default)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
}

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const FLAG_DISABLED: u64 = 1 << 0;
pub const FLAG_INHERIT: u64 = 1 << 1;
pub const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const FLAG_EXCLUDE_HV: u64 = 1 << 6;
pub const FLAG_ENABLE_ON_EXEC: u64 = 1 << 12;
const READ_TOTAL_TIME_ENABLED: u64 = 1;
const READ_TOTAL_TIME_RUNNING: u64 = 2;
pub(crate) const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// The counters cmdscope asks for, with their perf type/config.
const EVENTS: &[(Metric, u32, u64)] = &[
    (Metric::TaskClock, PERF_TYPE_SOFTWARE, 1),
    (Metric::CpuMigrations, PERF_TYPE_SOFTWARE, 4),
    (Metric::CpuCycles, PERF_TYPE_HARDWARE, 0),
    (Metric::Instructions, PERF_TYPE_HARDWARE, 1),
    (Metric::CacheReferences, PERF_TYPE_HARDWARE, 2),
    (Metric::CacheMisses, PERF_TYPE_HARDWARE, 3),
    (Metric::BranchMisses, PERF_TYPE_HARDWARE, 5),
];

/// One counter on `pid` (0: this thread), disabled until the child execs
/// (`on_exec`, with its descendants) or until enabled by ioctl.
fn open_event(
    type_: u32,
    config: u64,
    pid: libc::pid_t,
    exclude_kernel: bool,
    on_exec: bool,
) -> i32 {
    let mut attr = PerfEventAttr {
        type_,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format: READ_TOTAL_TIME_ENABLED | READ_TOTAL_TIME_RUNNING,
        flags: if on_exec {
            FLAG_DISABLED | FLAG_INHERIT | FLAG_ENABLE_ON_EXEC
        } else {
            FLAG_DISABLED
        },
        ..Default::default()
    };
    if exclude_kernel {
        attr.flags |= FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV;
    }
    perf_event_open(&mut attr, pid, -1).unwrap_or(-1)
}

/// `perf_event_open(2)` for `pid` on `cpu` (-1: any CPU), close-on-exec:
/// the descriptor, or the error number.
pub fn perf_event_open(
    attr: &mut PerfEventAttr,
    pid: libc::pid_t,
    cpu: i32,
) -> std::result::Result<i32, i32> {
    // SAFETY: attr is a valid, fully initialised perf_event_attr of the size
    // it declares; the kernel reads at most `size` bytes.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *mut PerfEventAttr,
            pid,
            cpu,
            -1i32,
            PERF_FLAG_FD_CLOEXEC,
        )
    } as i32;
    if fd < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(fd)
    }
}

/// Which counters this kernel provides, probed once.
#[derive(Clone, Debug)]
pub struct Availability {
    pub available: Vec<Metric>,
    /// Counters the kernel refused, with the reason in words.
    pub unavailable: Vec<(Metric, String)>,
    exclude_kernel: bool,
}

impl Availability {
    /// These counters counting user space only, as `run --counted` counts
    /// (the kernel's work for a command varies with the machine; the
    /// simulator does not count it either).
    pub fn user_space_only(mut self) -> Availability {
        self.exclude_kernel = true;
        self
    }

    /// Opens each counter on the harness itself (disabled) to learn whether
    /// the kernel and the perf_event_paranoid setting allow it.
    pub fn probe() -> Availability {
        let mut available = Vec::new();
        let mut unavailable = Vec::new();
        let mut exclude_kernel = false;
        for &(metric, type_, config) in EVENTS {
            let mut fd = open_event(type_, config, 0, exclude_kernel, true);
            if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES) {
                // perf_event_paranoid >= 2 lets unprivileged users count user space only.
                exclude_kernel = true;
                fd = open_event(type_, config, 0, true, true);
            }
            if fd >= 0 {
                // SAFETY: fd was just returned by the kernel and is ours.
                unsafe { libc::close(fd) };
                available.push(metric);
            } else {
                let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                unavailable.push((metric, refusal(errno)));
            }
        }
        Availability {
            available,
            unavailable,
            exclude_kernel,
        }
    }
}

/// Why the kernel refused a counter, from perf_event_open's error number.
fn refusal(errno: i32) -> String {
    match errno {
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV => {
            "not available here (no PMU access, e.g. a virtual machine)".to_string()
        }
        libc::EACCES | libc::EPERM => forbidden_words(),
        libc::ENOSYS => "perf_event_open is not supported by this kernel".into(),
        _ => format!(
            "not available here ({})",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

fn forbidden_words() -> String {
    "not permitted (see /proc/sys/kernel/perf_event_paranoid)".to_string()
}

/// What `run --counted`'s probe of the hardware instruction counter
/// found (`run::counted::decide` chooses from it).
#[derive(Clone, Debug, PartialEq)]
pub enum Probe {
    /// The kernel has no such counter (no PMU, or one a virtual machine
    /// does not pass through): perf_event_open's answer in words.
    Missing(String),
    /// The counter exists but perf_event_paranoid (or a missing capability)
    /// forbids it to this user.
    Forbidden(String),
    /// The instructions of the same fixed user-space loop, counted
    /// [`PROBE_COUNTS`] times.
    Counts(Vec<LoopCount>),
}

/// One count of the probe's loop, with the times perf_event reports: a
/// counter that did not run all the time it was enabled was multiplexed
/// with others, and its count is scaled, not counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopCount {
    pub instructions: u64,
    pub enabled: u64,
    pub running: u64,
}

/// How many times the probe counts its loop, and the loop's iterations:
/// a few milliseconds in all.
pub const PROBE_COUNTS: usize = 5;
pub const PROBE_ITERATIONS: u64 = 1_000_000;

const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_EVENT_IOC_RESET: libc::c_ulong = 0x2403;

/// `run --counted`'s probe of the hardware instruction counter: opened as
/// the runs' counters are ([`open_event`], user space only), on this
/// thread, it counts the same fixed loop [`PROBE_COUNTS`] times.
/// A loop on this thread rather than in a child: it executes the same
/// instructions every time, with no exec or dynamic loading between, so
/// any difference between its counts is the counter's.
pub fn count_fixed_loop() -> Probe {
    let (_, type_, config) = EVENTS
        .iter()
        .copied()
        .find(|(m, _, _)| *m == Metric::Instructions)
        .unwrap_or((Metric::Instructions, PERF_TYPE_HARDWARE, 1));
    let fd = open_event(type_, config, 0, true, false);
    if fd < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        return match errno {
            libc::EACCES | libc::EPERM => Probe::Forbidden(forbidden_words()),
            _ => Probe::Missing(refusal(errno)),
        };
    }
    let mut counts = Vec::with_capacity(PROBE_COUNTS);
    for _ in 0..PROBE_COUNTS {
        let mut buf = [0u64; 3];
        // SAFETY: fd is our perf event; the ioctls take no argument, and
        // buf is 24 bytes, the size of {value, enabled, running}.
        let n = unsafe {
            libc::ioctl(fd, PERF_EVENT_IOC_RESET as _, 0);
            libc::ioctl(fd, PERF_EVENT_IOC_ENABLE as _, 0);
            fixed_loop(PROBE_ITERATIONS);
            libc::ioctl(fd, PERF_EVENT_IOC_DISABLE as _, 0);
            libc::read(fd, buf.as_mut_ptr().cast(), 24)
        };
        if n == 24 {
            counts.push(LoopCount {
                instructions: buf[0],
                enabled: buf[1],
                running: buf[2],
            });
        }
    }
    // SAFETY: fd was opened above and is closed once.
    unsafe { libc::close(fd) };
    Probe::Counts(counts)
}

/// A loop whose instructions do not depend on anything but `iterations`:
/// `black_box` keeps the compiler from folding it away.
#[inline(never)]
fn fixed_loop(iterations: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..iterations {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    x
}

/// Counters opened on one child; read after it exits, closed on drop.
pub struct Counters {
    fds: Vec<(Metric, i32)>,
}

impl Counters {
    /// Opens every available counter on `pid`, which must not have exec'd yet.
    pub fn open(avail: &Availability, pid: libc::pid_t) -> Counters {
        let mut fds = Vec::with_capacity(avail.available.len());
        for &(metric, type_, config) in EVENTS {
            if avail.available.contains(&metric) {
                let fd = open_event(type_, config, pid, avail.exclude_kernel, true);
                if fd >= 0 {
                    fds.push((metric, fd));
                }
            }
        }
        Counters { fds }
    }

    /// Reads the counters into `sample`, scaled for multiplexing.
    pub fn read_into(&self, sample: &mut crate::metrics::Sample) {
        for &(metric, fd) in &self.fds {
            let mut buf = [0u64; 3];
            // SAFETY: buf is 24 bytes, the size of {value, enabled, running}.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 24) };
            if n != 24 {
                continue;
            }
            let [value, enabled, running] = buf;
            let mut v = value as f64;
            if running > 0 && running < enabled {
                v *= enabled as f64 / running as f64;
            }
            if metric == Metric::TaskClock {
                v *= 1e-9; // nanoseconds to seconds
            }
            sample.set(metric, v);
        }
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        for &(_, fd) in &self.fds {
            // SAFETY: each fd was opened by us and is closed once.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_has_ver5_size() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 112);
    }

    /// Here (a VM without a PMU) the probe finds no counter; with one, it
    /// counts at least the loop's iterations each time.
    #[test]
    fn the_fixed_loop_probe_counts_the_loop_or_says_why_not() {
        let hardware = Availability::probe()
            .available
            .contains(&Metric::Instructions);
        match count_fixed_loop() {
            Probe::Counts(counts) => {
                assert!(hardware);
                assert_eq!(counts.len(), PROBE_COUNTS);
                assert!(counts.iter().all(|c| c.instructions >= PROBE_ITERATIONS));
            }
            Probe::Missing(why) | Probe::Forbidden(why) => {
                assert!(!why.is_empty());
                assert!(!hardware || why.contains("perf_event_paranoid"), "{why}");
            }
        }
    }

    #[test]
    fn probe_classifies_every_event() {
        let a = Availability::probe();
        assert_eq!(a.available.len() + a.unavailable.len(), EVENTS.len());
    }
}
