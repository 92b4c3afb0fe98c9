//! Sampling one run of a command over its whole process tree with
//! `perf_event_open`: one event opened on the child before it execs
//! (`enable_on_exec`, `inherit`: children sample into the same ring buffer),
//! read from its memory-mapped ring buffer while the command runs. Samples
//! carry the instruction pointer, the thread, the time and the call chain
//! (kernel and user, frame-pointer unwound by the kernel); MMAP2, COMM,
//! FORK and EXIT records say which file each address belongs to.
//!
//! The profiled process is started here rather than by `exec/`'s spawner:
//! like explain's tracee it is observed, not timed by `run`'s accounting,
//! and the event must be opened between its fork and its exec.

use std::collections::HashMap;
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, ProfileError, Result};
use crate::exec::held;
use crate::exec::perf::{
    self, PerfEventAttr, FLAG_DISABLED, FLAG_ENABLE_ON_EXEC, FLAG_EXCLUDE_HV, FLAG_EXCLUDE_KERNEL,
    FLAG_INHERIT, PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE,
};
use crate::exec::signals;
use crate::exec::HeldCommand;

use super::identity::FileId;

const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;

const SAMPLE_IP: u64 = 1 << 0;
const SAMPLE_TID: u64 = 1 << 1;
const SAMPLE_TIME: u64 = 1 << 2;
const SAMPLE_CALLCHAIN: u64 = 1 << 5;
const SAMPLE_ID: u64 = 1 << 6;
const SAMPLE_PERIOD: u64 = 1 << 8;
const SAMPLE_REGS_USER: u64 = 1 << 12;
const SAMPLE_STACK_USER: u64 = 1 << 13;
/// x86_64 perf registers BP (6), SP (7), IP (8): what unwinding needs.
const REGS_MASK: u64 = (1 << 6) | (1 << 7) | (1 << 8);
/// User stack bytes copied per sample (perf record's default).
const STACK_BYTES: u32 = 8192;

const FLAG_MMAP: u64 = 1 << 8;
const FLAG_COMM: u64 = 1 << 9;
const FLAG_FREQ: u64 = 1 << 10;
const FLAG_TASK: u64 = 1 << 13;
const FLAG_SAMPLE_ID_ALL: u64 = 1 << 18;
const FLAG_MMAP2: u64 = 1 << 23;
const FLAG_COMM_EXEC: u64 = 1 << 24;
const FLAG_USE_CLOCKID: u64 = 1 << 25;
const FLAG_CONTEXT_SWITCH: u64 = 1 << 26;
/// MMAP2 records carry the mapped file's build id (Linux 5.12).
const FLAG_BUILD_ID: u64 = 1 << 34;
const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
/// ioctls: _IO('$', 5) and _IOR('$', 7, u64).
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const PERF_EVENT_IOC_ID: libc::c_ulong = 0x8008_2407;

const RECORD_MMAP: u32 = 1;
const RECORD_LOST: u32 = 2;
const RECORD_COMM: u32 = 3;
const RECORD_EXIT: u32 = 4;
const RECORD_THROTTLE: u32 = 5;
const RECORD_FORK: u32 = 7;
const RECORD_SAMPLE: u32 = 9;
const RECORD_MMAP2: u32 = 10;
const RECORD_SWITCH: u32 = 14;
const MISC_COMM_EXEC: u16 = 1 << 13;
const MISC_MMAP_BUILD_ID: u16 = 1 << 14;
const MISC_SWITCH_OUT: u16 = 1 << 13;
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;

/// Call chain entries at or above this are context markers (kernel, user).
const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;
const PERF_CONTEXT_KERNEL: u64 = (-128i64) as u64;
const PERF_CONTEXT_USER: u64 = (-512i64) as u64;

/// Ring buffer: 2^DATA_PAGES_LOG2 data pages after the control page.
/// 128 pages (512 KiB), within the default perf_event_mlock_kb per CPU;
/// drained every 5 ms it holds far more than a run makes meanwhile. With
/// copied stacks (8 KiB a sample) 512 pages where the limit allows.
const DATA_PAGES_LOG2: u32 = 7;
const DWARF_DATA_PAGES_LOG2: u32 = 9;

/// Which event samples: hardware cycles where the machine has them, the
/// kernel's cpu-clock timer otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Cycles,
    CpuClock,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Cycles => "cycles",
            Event::CpuClock => "cpu-clock",
        }
    }
}

/// What the kernel allows, decided once before the first run.
#[derive(Clone, Debug)]
pub struct Setup {
    pub event: Event,
    /// Why hardware cycles are not used (when cpu-clock is).
    pub fallback: Option<String>,
    pub exclude_kernel: bool,
    pub frequency: u64,
    /// Copy user stacks and unwind them with DWARF (`unwind`), besides
    /// the kernel's frame-pointer chain.
    pub dwarf: bool,
    /// Also sample context switches, for time off the CPU.
    pub off_cpu: bool,
    /// MMAP2 records name each file by its build id (else by device and
    /// inode): a binary replaced while it is profiled is told apart.
    pub build_id: bool,
}

fn open_event(
    attr: &mut PerfEventAttr,
    pid: libc::pid_t,
    cpu: i32,
) -> std::result::Result<i32, i32> {
    perf::perf_event_open(attr, pid, cpu)
}

fn attr(setup: &Setup) -> PerfEventAttr {
    let (type_, config) = match setup.event {
        Event::Cycles => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
        Event::CpuClock => (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK),
    };
    let mut flags = FLAG_DISABLED
        | FLAG_INHERIT
        | FLAG_ENABLE_ON_EXEC
        | FLAG_MMAP
        | FLAG_COMM
        | FLAG_TASK
        | FLAG_SAMPLE_ID_ALL
        | FLAG_MMAP2
        | FLAG_COMM_EXEC
        | FLAG_USE_CLOCKID
        | FLAG_CONTEXT_SWITCH;
    if setup.build_id {
        flags |= FLAG_BUILD_ID;
    }
    // cpu-clock samples by a period in nanoseconds, so every sample is
    // exactly that much CPU time; cycles by the kernel's frequency mode.
    let sample_period = match setup.event {
        Event::CpuClock => (1_000_000_000 / setup.frequency.max(1)).max(1),
        Event::Cycles => {
            flags |= FLAG_FREQ;
            setup.frequency
        }
    };
    if setup.exclude_kernel {
        flags |= FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV;
    }
    let mut sample_type =
        SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_ID | SAMPLE_PERIOD | SAMPLE_CALLCHAIN;
    if setup.dwarf {
        sample_type |= SAMPLE_REGS_USER | SAMPLE_STACK_USER;
    }
    PerfEventAttr {
        type_,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        sample_period,
        sample_type,
        flags,
        wakeup_events: 0,
        sample_max_stack: 127,
        sample_regs_user: if setup.dwarf { REGS_MASK } else { 0 },
        sample_stack_user: if setup.dwarf { STACK_BYTES } else { 0 },
        // Times on CLOCK_MONOTONIC, so records can be ordered against
        // cmdscope's own clock while the command runs.
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    }
}

/// The online CPUs, from `/sys/devices/system/cpu/online` (`0-3,6`).
/// An inherited event cannot be memory-mapped per task, so the sampler
/// opens one per CPU, as perf record does.
pub fn online_cpus() -> Vec<i32> {
    let parse = |text: &str| -> Option<Vec<i32>> {
        let mut out = Vec::new();
        for part in text.trim().split(',').filter(|p| !p.is_empty()) {
            match part.split_once('-') {
                Some((a, b)) => out.extend(a.parse::<i32>().ok()?..=b.parse::<i32>().ok()?),
                None => out.push(part.parse().ok()?),
            }
        }
        Some(out)
    };
    read_trimmed("/sys/devices/system/cpu/online")
        .and_then(|t| parse(&t))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            // SAFETY: sysconf has no preconditions.
            let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1);
            (0..n as i32).collect()
        })
}

/// The off-CPU event: a sample (with its stack) at every context switch
/// of the command's threads, written into the cpu-clock event's buffer.
/// The time until the thread's next switch in is its time off the CPU.
fn switch_attr(setup: &Setup) -> PerfEventAttr {
    let mut a = attr(setup);
    a.type_ = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    a.sample_period = 1;
    a.flags &= !(FLAG_FREQ
        | FLAG_MMAP
        | FLAG_COMM
        | FLAG_TASK
        | FLAG_MMAP2
        | FLAG_COMM_EXEC
        | FLAG_CONTEXT_SWITCH
        | FLAG_BUILD_ID);
    a
}

fn event_id(fd: i32) -> u64 {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64.
    unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
    id
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The most samples a second the kernel allows an event
/// (`kernel.perf_event_max_sample_rate`; the kernel lowers it by itself
/// when sampling interrupts take too long). None where it cannot be read.
pub fn max_sample_rate() -> Option<u64> {
    read_trimmed("/proc/sys/kernel/perf_event_max_sample_rate")?
        .parse()
        .ok()
        .filter(|&r| r > 0)
}

/// The one line a user reads when the kernel refuses sampling: what is
/// missing and how to get it.
fn refusal(errno: i32) -> Error {
    let paranoid = read_trimmed("/proc/sys/kernel/perf_event_paranoid");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    match errno {
        libc::EACCES | libc::EPERM => {
            let level = paranoid.as_deref().unwrap_or("unknown").to_string();
            if level.parse::<i32>().is_ok_and(|p| p > 2) {
                ProfileError::ParanoidForbidsAll { level }
            } else if root {
                ProfileError::RefusedToRoot { level }
            } else {
                ProfileError::NotPermitted { level }
            }
        }
        libc::ENOSYS => ProfileError::NoPerfEvents,
        libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP => ProfileError::NoSamplingEvent,
        e => ProfileError::PerfEventOpen(e),
    }
    .into()
}

impl Setup {
    /// Probes on cmdscope itself (disabled, closed at once) which event the
    /// kernel grants: cycles, else cpu-clock; kernel frames unless
    /// `perf_event_paranoid` limits us to user space. `force_software`
    /// skips the cycles probe (tests of the fallback).
    pub fn probe(frequency: u64, force_software: bool, dwarf: bool) -> Result<Setup> {
        let mut setup = Setup {
            event: Event::Cycles,
            fallback: None,
            exclude_kernel: false,
            frequency,
            dwarf,
            off_cpu: true,
            build_id: true,
        };
        let try_open = |s: &Setup| {
            let mut a = attr(s);
            a.flags &= !FLAG_ENABLE_ON_EXEC;
            let r = open_event(&mut a, 0, -1);
            if let Ok(fd) = r {
                // SAFETY: our own descriptor, closed once.
                unsafe { libc::close(fd) };
            }
            r
        };
        if force_software {
            setup.event = Event::CpuClock;
            setup.fallback = Some("software event asked for".into());
        }
        loop {
            match try_open(&setup) {
                Ok(_) => return Ok(setup),
                // A kernel before 5.12: files are told apart by inode.
                Err(libc::EINVAL) if setup.build_id => setup.build_id = false,
                Err(libc::EACCES) | Err(libc::EPERM) if !setup.exclude_kernel => {
                    setup.exclude_kernel = true;
                }
                Err(e)
                    if setup.event == Event::Cycles
                        && matches!(e, libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP) =>
                {
                    setup.event = Event::CpuClock;
                    setup.exclude_kernel = false;
                    setup.fallback = Some(
                        "hardware cycles are not available here (no PMU, e.g. a virtual machine)"
                            .into(),
                    );
                }
                Err(e) => return Err(refusal(e)),
            }
        }
    }
}

/// What a command runs: as `run` plans it.
pub struct Launch {
    /// The command, its complete environment and the variant's conditions.
    pub command: HeldCommand,
    pub timeout: Option<Duration>,
}

pub use super::unwind::Mapping;

/// A user address resolved to the mapping it was in when sampled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapped {
    /// The mapped file's path, or the kernel's name (`[vdso]`, `//anon`).
    pub path: String,
    /// The offset in the file.
    pub offset: u64,
    /// Which file it was when mapped.
    pub file: FileId,
    /// The file offset its mapping starts at: what places the address
    /// when only a debug file is left of a replaced binary.
    pub pgoff: u64,
}

/// One sample: the frames from the leaf up, each with whether it is a
/// kernel address, and the process it came from.
#[derive(Clone, Debug)]
pub struct RawSample {
    pub pid: u32,
    /// The event's period (on the CPU), or nanoseconds off the CPU.
    pub weight: u64,
    pub frames: Vec<(u64, bool)>,
    pub off_cpu: Option<OffCpu>,
}

/// Why a thread was off the CPU: it blocked (sleep, I/O, a lock), or it
/// was preempted and waited for a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffCpu {
    Blocked,
    Runnable,
}

/// Everything one sampled run produced.
#[derive(Debug, Default)]
pub struct RawRun {
    /// The command's own process.
    pub pid: u32,
    pub samples: Vec<RawSample>,
    /// Mappings per process at the end (a process's mappings before its
    /// exec are kept under the samples already resolved: see `resolve`).
    pub maps: HashMap<u32, Vec<Mapping>>,
    /// Samples resolved to their mapping at the time they were taken:
    /// (module path, offset in the file) per user frame; None for kernel
    /// frames and addresses in no known mapping.
    pub resolved: Vec<Vec<Option<Mapped>>>,
    pub lost: u64,
    /// Times the kernel throttled the event: its sampling interrupts took
    /// too long for the rate asked (kernel.perf_event_max_sample_rate).
    pub throttled: u64,
    /// Context switches were sampled (the kernel allowed the event).
    pub off_cpu_sampled: bool,
    pub wall: f64,
    /// User + system CPU seconds of the command and its waited-for children.
    pub cpu: f64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub interrupted: bool,
}

struct Ring {
    base: *mut u8,
    len: usize,
    data_offset: usize,
    data_size: usize,
}

impl Ring {
    fn map(fd: i32, pages_log2: u32) -> std::io::Result<Ring> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = page * (1 + (1usize << pages_log2));
        // SAFETY: mapping a perf event descriptor as the kernel documents.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Ring {
            base: base.cast(),
            len,
            data_offset: page,
            data_size: page << pages_log2,
        })
    }

    /// Copies out the bytes written since the last drain and frees them.
    fn drain(&mut self, out: &mut Vec<u8>) {
        // perf_event_mmap_page: data_head at 1024, data_tail at 1032.
        // SAFETY: both fields lie in the control page we mapped; the head
        // is read before the data (acquire), the tail written after (release).
        unsafe {
            let head_ptr = self.base.add(1024) as *const u64;
            let tail_ptr = self.base.add(1032) as *mut u64;
            let head = std::ptr::read_volatile(head_ptr);
            fence(Ordering::Acquire);
            let tail = std::ptr::read_volatile(tail_ptr);
            let data = self.base.add(self.data_offset);
            // At most two contiguous pieces: up to the end of the buffer,
            // then from its start.
            let mut pos = tail;
            while pos < head {
                let at = (pos as usize) % self.data_size;
                let n = ((head - pos) as usize).min(self.data_size - at);
                out.extend_from_slice(std::slice::from_raw_parts(data.add(at), n));
                pos += n as u64;
            }
            fence(Ordering::Release);
            std::ptr::write_volatile(tail_ptr, head);
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping what `map` mapped.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: a descriptor we own, closed once.
            unsafe { libc::close(self.0) };
        }
    }
}

/// Runs the command once, sampled. The child waits on a pipe until the
/// event is open on it, then execs; the event starts counting at that exec.
pub fn sample_run(setup: &Setup, launch: &Launch) -> Result<RawRun> {
    launch_run(Some(setup), launch)
}

/// Runs the command once exactly as `sample_run` does but without
/// sampling: the baseline of the cost benchmark (examples/profile_cost.rs).
pub fn plain_run(launch: &Launch) -> Result<RawRun> {
    launch_run(None, launch)
}

fn launch_run(setup: Option<&Setup>, launch: &Launch) -> Result<RawRun> {
    let held = held::fork(&launch.command)?;
    let pid = held.pid();
    let mut events: Vec<(Fd, Ring, Vec<u8>)> = Vec::new();
    let mut switch_fds: Vec<Fd> = Vec::new();
    let mut switch_ids: Vec<u64> = Vec::new();
    let cpus = if setup.is_some() {
        online_cpus()
    } else {
        Vec::new()
    };
    let dwarf = setup.is_some_and(|s| s.dwarf);
    for cpu in cpus {
        let Some(setup) = setup else { break };
        let mut a = attr(setup);
        let fd = match open_event(&mut a, pid, cpu) {
            Ok(fd) => Fd(fd),
            Err(libc::ENODEV) | Err(libc::EINVAL) if !events.is_empty() => continue,
            Err(e) => {
                return Err(refusal(e));
            }
        };
        let ring = match setup.dwarf {
            true => {
                Ring::map(fd.0, DWARF_DATA_PAGES_LOG2).or_else(|_| Ring::map(fd.0, DATA_PAGES_LOG2))
            }
            false => Ring::map(fd.0, DATA_PAGES_LOG2),
        };
        match ring {
            Ok(r) => {
                if setup.off_cpu {
                    let mut sa = switch_attr(setup);
                    if let Ok(sfd) = open_event(&mut sa, pid, cpu) {
                        let sfd = Fd(sfd);
                        // SAFETY: redirecting our event into our other
                        // event's buffer on the same CPU.
                        if unsafe { libc::ioctl(sfd.0, PERF_EVENT_IOC_SET_OUTPUT as _, fd.0) } == 0
                        {
                            switch_ids.push(event_id(sfd.0));
                            switch_fds.push(sfd);
                        }
                    }
                }
                events.push((fd, r, Vec::new()))
            }
            Err(e) => {
                return Err(ProfileError::MapBuffer(e.to_string()).into());
            }
        }
    }

    let started = Instant::now();
    held.release().map_err(|source| Error::Spawn {
        command: launch.command.shown(),
        source,
    })?;
    let deadline = launch.timeout.map(|t| started + t);
    let mut run = RawRun {
        pid: pid as u32,
        ..Default::default()
    };
    let mut records: Vec<Record> = Vec::new();
    run.off_cpu_sampled = !switch_ids.is_empty();
    let mut parser = Parser {
        unwinders: dwarf.then(Default::default),
        switch_ids,
        ..Default::default()
    };
    let mut status = 0;
    // SAFETY: rusage is plain data filled by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut pfds: Vec<libc::pollfd> = events
        .iter()
        .map(|(fd, _, _)| libc::pollfd {
            fd: fd.0,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        // SAFETY: non-blocking wait4 on our own child.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            run.wall = started.elapsed().as_secs_f64();
            break;
        }
        if signals::received().is_some() && !run.interrupted {
            run.interrupted = true;
            // SAFETY: killing our own child's process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        if !run.timed_out && deadline.is_some_and(|d| Instant::now() >= d) {
            run.timed_out = true;
            // SAFETY: killing our own child's process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        // Every record older than this instant is in its buffer now: those
        // are read in time order, the rest wait for the next round.
        let barrier = monotonic_ns();
        for (_, ring, bytes) in events.iter_mut() {
            ring.drain(bytes);
            split_records(bytes, &mut records);
        }
        parser.process(&mut records, Some(barrier), &mut run);
        // SAFETY: valid pollfds; waking every 5 ms bounds how late the
        // child's exit is seen.
        unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 5) };
    }
    // What the command left running goes with it: its group, and what
    // left the group (a daemon), as `run` kills after each run.
    // SAFETY: signalling a process group we created.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    crate::exec::tree::kill_leftovers();
    for (_, ring, bytes) in events.iter_mut() {
        ring.drain(bytes);
        split_records(bytes, &mut records);
    }
    drop(switch_fds);
    drop(events);
    parser.process(&mut records, None, &mut run);
    parser.finish(&mut run);
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    run.cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    if libc::WIFEXITED(status) {
        run.exit_code = Some(libc::WEXITSTATUS(status));
    } else if libc::WIFSIGNALED(status) {
        run.signal = Some(libc::WTERMSIG(status));
    }
    run.maps = std::mem::take(&mut parser.maps);
    Ok(run)
}

fn monotonic_ns() -> u64 {
    // SAFETY: timespec is plain data filled by clock_gettime.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A switch-out sample: its time, the sample, its resolved frames.
type SwitchedOut = (u64, RawSample, Vec<Option<Mapped>>);

/// Copied stacks kept for unwinding at the end of a run, at most (a
/// second of sampling at 10 kHz with 8 KiB stacks is 80 MiB).
const DEFERRED_BYTES: usize = 128 << 20;

/// A sample of a process with a jitdump, unwound once the run has ended.
struct Deferred {
    /// Its index in the run's samples.
    sample: usize,
    regs: [u64; 3],
    stack: Vec<u8>,
    user_seen: usize,
}

/// The DWARF chain replaces the frame-pointer one when it goes at least
/// as deep.
fn deeper(frames: &mut Vec<(u64, bool)>, user: Vec<u64>, user_seen: usize) {
    if user.len() >= user_seen.max(1) {
        frames.retain(|&(_, k)| k);
        frames.extend(user.into_iter().map(|a| (a, false)));
    }
}

/// Each user frame's mapping: its file, the file's identity and the
/// offset in it; None for kernel frames and addresses in no mapping.
fn resolve(maps: Option<&Vec<Mapping>>, frames: &[(u64, bool)]) -> Vec<Option<Mapped>> {
    frames
        .iter()
        .map(|&(addr, k)| {
            if k {
                return None;
            }
            let m = maps?.iter().find(|m| m.start <= addr && addr < m.end)?;
            Some(Mapped {
                path: m.path.clone(),
                offset: addr - m.start + m.pgoff,
                file: m.file,
                pgoff: m.pgoff,
            })
        })
        .collect()
}

/// Decodes ring buffer records as they come, keeping each process's
/// mappings current so that samples resolve (and unwind) against the
/// mappings they were taken under (a process that execs replaces them).
#[derive(Default)]
struct Parser {
    maps: HashMap<u32, Vec<Mapping>>,
    unwinders: Option<super::unwind::Unwinders>,
    /// Ids of the context-switch events: their samples are switches out.
    switch_ids: Vec<u64>,
    /// Per thread: the switch-out sample waiting for its switch in, and
    /// whether the switch was a preemption.
    switched_out: HashMap<u32, SwitchedOut>,
    preempted: HashMap<u32, bool>,
    /// Samples whose unwinding waits for the end of the run, and the bytes
    /// of stack they hold.
    deferred: Vec<Deferred>,
    deferred_bytes: usize,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map(|s| u16::from_ne_bytes([s[0], s[1]]))
        .unwrap_or(0)
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map(|s| u32::from_ne_bytes(s.try_into().unwrap_or([0; 4])))
        .unwrap_or(0)
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .map(|s| u64::from_ne_bytes(s.try_into().unwrap_or([0; 8])))
        .unwrap_or(0)
}
fn cstr_at(b: &[u8], at: usize) -> String {
    let s = b.get(at..).unwrap_or(&[]);
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

/// One ring buffer record: its type, misc bits, body and time (the
/// sample's, or the trailing sample_id's for other records).
struct Record {
    time: u64,
    kind: u32,
    misc: u16,
    body: Vec<u8>,
}

/// Moves every complete record out of `bytes`.
fn split_records(bytes: &mut Vec<u8>, out: &mut Vec<Record>) {
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let kind = u32_at(bytes, at);
        let misc = u16_at(bytes, at + 4);
        let size = u16_at(bytes, at + 6) as usize;
        if size < 8 || at + size > bytes.len() {
            break;
        }
        let body = bytes[at + 8..at + size].to_vec();
        let time = match kind {
            RECORD_SAMPLE => u64_at(&body, 16),
            // sample_id_all: { pid, tid, time, id } closes every other record.
            _ if body.len() >= 24 => u64_at(&body, body.len() - 16),
            _ => 0,
        };
        out.push(Record {
            time,
            kind,
            misc,
            body,
        });
        at += size;
    }
    bytes.drain(..at);
}

impl Parser {
    /// Unwinds the samples kept for the end of the run, with the jitdumps
    /// as their runtimes left them.
    fn finish(&mut self, run: &mut RawRun) {
        let Some(u) = &mut self.unwinders else {
            return;
        };
        for d in std::mem::take(&mut self.deferred) {
            let Some(sample) = run.samples.get_mut(d.sample) else {
                continue;
            };
            // The same image as when it was sampled (no exec since).
            let Some(maps) = self.maps.get(&sample.pid).filter(|ms| {
                ms.iter()
                    .any(|m| super::jit::jitdump_pid(&m.path).is_some())
            }) else {
                continue;
            };
            let user = u.unwind(sample.pid, maps, d.regs, &d.stack);
            deeper(&mut sample.frames, user, d.user_seen);
            run.resolved[d.sample] = resolve(Some(maps), &sample.frames);
        }
        self.deferred_bytes = 0;
    }

    /// Reads the records older than `barrier` (all without one) in time
    /// order: each CPU has its own buffer, and a process's mappings may be
    /// recorded on one CPU and its samples on another.
    fn process(&mut self, records: &mut Vec<Record>, barrier: Option<u64>, run: &mut RawRun) {
        records.sort_by_key(|r| r.time);
        let n = match barrier {
            Some(b) => records.partition_point(|r| r.time < b),
            None => records.len(),
        };
        for r in records.drain(..n) {
            self.record(r.kind, r.misc, &r.body, run);
        }
    }

    fn add_map(&mut self, pid: u32, m: Mapping) {
        if let Some(u) = &mut self.unwinders {
            u.invalidate(pid);
        }
        let maps = self.maps.entry(pid).or_default();
        // A new mapping replaces what it overlaps.
        maps.retain(|x| x.end <= m.start || x.start >= m.end);
        maps.push(m);
    }

    fn record(&mut self, kind: u32, misc: u16, b: &[u8], run: &mut RawRun) {
        match kind {
            RECORD_MMAP => {
                let (pid, addr, len, pgoff) =
                    (u32_at(b, 0), u64_at(b, 8), u64_at(b, 16), u64_at(b, 24));
                let path = cstr_at(b, 32);
                self.add_map(
                    pid,
                    Mapping {
                        start: addr,
                        end: addr + len,
                        pgoff,
                        path,
                        file: FileId::Unknown,
                    },
                );
            }
            RECORD_MMAP2 => {
                let (pid, addr, len, pgoff) =
                    (u32_at(b, 0), u64_at(b, 8), u64_at(b, 16), u64_at(b, 24));
                // { maj, min, ino, ino_generation } or { build_id_size, 3
                // reserved bytes, build_id[20] }, then prot, flags, path.
                let path = cstr_at(b, 32 + 24 + 4 + 4);
                let file = if misc & MISC_MMAP_BUILD_ID != 0 {
                    let size = (b.get(32).copied().unwrap_or(0) as usize).min(20);
                    FileId::build_id(b.get(36..36 + size).unwrap_or(&[]))
                } else if path.starts_with('/') {
                    FileId::inode(&path, u32_at(b, 32), u32_at(b, 36), u64_at(b, 40))
                } else {
                    FileId::Unknown
                };
                self.add_map(
                    pid,
                    Mapping {
                        start: addr,
                        end: addr + len,
                        pgoff,
                        path,
                        file,
                    },
                );
            }
            RECORD_COMM if misc & MISC_COMM_EXEC != 0 => {
                // An exec: the old image's mappings are gone.
                let pid = u32_at(b, 0);
                self.maps.remove(&pid);
                if let Some(u) = &mut self.unwinders {
                    u.invalidate(pid);
                }
            }
            RECORD_FORK => {
                let (pid, ppid) = (u32_at(b, 0), u32_at(b, 4));
                if pid != ppid {
                    if let Some(m) = self.maps.get(&ppid).cloned() {
                        self.maps.insert(pid, m);
                    }
                    if let Some(u) = &mut self.unwinders {
                        u.invalidate(pid);
                    }
                }
            }
            RECORD_EXIT => {}
            RECORD_LOST => run.lost += u64_at(b, 8),
            RECORD_THROTTLE => run.throttled += 1,
            RECORD_SWITCH if b.len() >= 24 => {
                let tid = u32_at(b, 4);
                let time = u64_at(b, b.len() - 16);
                if misc & MISC_SWITCH_OUT != 0 {
                    self.preempted
                        .insert(tid, misc & MISC_SWITCH_OUT_PREEMPT != 0);
                } else if let Some((out, mut sample, resolved)) = self.switched_out.remove(&tid) {
                    sample.weight = time.saturating_sub(out);
                    sample.off_cpu = Some(match self.preempted.remove(&tid) {
                        Some(true) => OffCpu::Runnable,
                        _ => OffCpu::Blocked,
                    });
                    run.resolved.push(resolved);
                    run.samples.push(sample);
                }
            }
            RECORD_SAMPLE => self.sample(b, run),
            _ => {}
        }
    }

    fn sample(&mut self, b: &[u8], run: &mut RawRun) {
        // IP, TID (pid, tid), TIME, ID, PERIOD, CALLCHAIN (nr, ips): the
        // order of the sample_type bits.
        let ip = u64_at(b, 0);
        let pid = u32_at(b, 8);
        let tid = u32_at(b, 12);
        let time = u64_at(b, 16);
        let id = u64_at(b, 24);
        let period = u64_at(b, 32);
        let nr = u64_at(b, 40) as usize;
        let mut frames = Vec::with_capacity(nr.min(256));
        let mut kernel = ip >= 0xffff_8000_0000_0000;
        let mut user_seen = 0usize;
        for i in 0..nr.min(512) {
            let x = u64_at(b, 48 + 8 * i);
            if x >= PERF_CONTEXT_MAX {
                kernel = x == PERF_CONTEXT_KERNEL;
                if x != PERF_CONTEXT_KERNEL && x != PERF_CONTEXT_USER {
                    kernel = false;
                }
                continue;
            }
            // Return addresses point after the call: step back into it so
            // that a call ending a function resolves to that function.
            let addr = if kernel || user_seen == 0 {
                x
            } else {
                x.saturating_sub(1)
            };
            if !kernel {
                user_seen += 1;
            }
            frames.push((addr, kernel));
        }
        if frames.is_empty() {
            frames.push((ip, kernel));
        }
        if let Some(u) = &mut self.unwinders {
            // REGS_USER { abi, regs[3] } and STACK_USER { size, data, dyn_size }
            // follow the call chain.
            let mut at = 48 + 8 * nr;
            let abi = u64_at(b, at);
            at += 8;
            let regs = (abi != 0).then(|| {
                let r = [u64_at(b, at), u64_at(b, at + 8), u64_at(b, at + 16)];
                at += 24;
                r
            });
            let size = u64_at(b, at) as usize;
            at += 8;
            let stack = b.get(at..at + size).unwrap_or(&[]);
            let dyn_size = if size > 0 {
                u64_at(b, at + size) as usize
            } else {
                0
            };
            let stack = &stack[..dyn_size.min(stack.len())];
            if let (Some(regs), Some(maps)) = (regs, self.maps.get(&pid)) {
                let jitdump = maps
                    .iter()
                    .any(|m| super::jit::jitdump_pid(&m.path).is_some());
                if jitdump
                    && !self.switch_ids.contains(&id)
                    && self.deferred_bytes + stack.len() <= DEFERRED_BYTES
                {
                    // A runtime writes its jitdump through a buffer: the
                    // unwind tables of its newest code reach the file
                    // later, at the latest when it exits. Unwound then.
                    self.deferred_bytes += stack.len();
                    self.deferred.push(Deferred {
                        sample: run.samples.len(),
                        regs,
                        stack: stack.to_vec(),
                        user_seen,
                    });
                } else {
                    let user = u.unwind(pid, maps, regs, stack);
                    deeper(&mut frames, user, user_seen);
                }
            }
        }
        let resolved = resolve(self.maps.get(&pid), &frames);
        let sample = RawSample {
            pid,
            weight: period,
            frames,
            off_cpu: None,
        };
        if self.switch_ids.contains(&id) {
            // Weighed when the thread comes back (RECORD_SWITCH in).
            self.switched_out.insert(tid, (time, sample, resolved));
            return;
        }
        run.resolved.push(resolved);
        run.samples.push(sample);
    }
}
