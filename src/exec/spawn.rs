//! Spawning and waiting for one benchmarked process.
//!
//! Commands are started by a tiny helper process, the spawner (spawner.c,
//! built by build.rs and embedded): see the comment at its top for why. The
//! spawner reads `/proc/<pid>/io` between `waitid(WNOWAIT)` and `wait4` and
//! gets the child's own rusage from `wait4`; this side prepares each command
//! once, asks for runs (one at a time, or a schedule of runs the spawner
//! makes back to back: `Spawner::schedule`, `Prepared::take`), opens perf
//! counters on the waiting child, enforces timeouts and kills trees.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::perf::{Availability, Counters};
use super::{signals, tree};
use crate::error::{Error, Result};
use crate::metrics::{Metric, Sample};

/// Where the child's stdout/stderr go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// /dev/null (the default: output costs nothing).
    Null,
    /// A pipe the harness drains and counts, like a terminal or a consumer would.
    Pipe,
    /// The harness's own stdout/stderr (`--show-output`).
    Inherit,
    /// Written to a file, emptied before each run (each run sees the same file).
    File(PathBuf),
}

/// Where the child's stdin comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Null,
    File(PathBuf),
}

/// Everything needed to prepare a command once for many runs.
#[derive(Clone, Debug)]
pub struct SpawnConfig {
    /// Program and arguments, as bytes (non-UTF-8 is kept, not rejected).
    pub argv: Vec<Vec<u8>>,
    /// Extra environment variables on top of the inherited environment.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    pub input: Input,
    pub output: Output,
    pub timeout: Option<Duration>,
    /// Open perf counters on each child before it execs (see `Prepared::run`).
    pub counters: Option<Availability>,
    /// Read `/proc/<pid>/io` per run.
    pub proc_io: bool,
    /// Start from an empty environment instead of the inherited one.
    pub clear_env: bool,
    /// Synthetic variables to add (huge-environment conditions).
    pub env_size: usize,
    /// Working directory of the command.
    pub cwd: Option<PathBuf>,
    /// Run as this user (name or uid), with the user's groups.
    pub user: Option<String>,
    pub cpus: Option<Vec<usize>>,
    pub nice: Option<i32>,
}

impl SpawnConfig {
    pub fn new(argv: Vec<Vec<u8>>) -> SpawnConfig {
        SpawnConfig {
            argv,
            env: Vec::new(),
            input: Input::Null,
            output: Output::Null,
            timeout: None,
            counters: None,
            proc_io: true,
            clear_env: false,
            env_size: 0,
            cwd: None,
            user: None,
            cpus: None,
            nice: None,
        }
    }
}

/// A user to switch to, resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub groups: Vec<libc::gid_t>,
}

/// Resolves a user name or numeric uid, with the user's supplementary groups.
pub fn resolve_user(user: &str) -> Result<Credentials> {
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let name = cstring(user.as_bytes(), "--user")?;
    // SAFETY: all pointers are valid; getpw*_r write into pwd and buf only.
    let rc = unsafe {
        match user.parse::<libc::uid_t>() {
            Ok(uid) => libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result),
            Err(_) => libc::getpwnam_r(
                name.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            ),
        }
    };
    if result.is_null() {
        if let Ok(uid) = user.parse::<libc::uid_t>() {
            // A uid without a passwd entry: run with it and its own gid.
            return Ok(Credentials {
                uid,
                gid: uid,
                groups: vec![uid],
            });
        }
        return Err(Error::Usage(if rc != 0 {
            format!(
                "cannot look up user '{user}': {}",
                std::io::Error::from_raw_os_error(rc)
            )
        } else {
            format!("no such user: {user}")
        }));
    }
    let (uid, gid) = (pwd.pw_uid, pwd.pw_gid);
    let mut groups = vec![0 as libc::gid_t; 256];
    let mut n = groups.len() as libc::c_int;
    // SAFETY: pw_name points into buf, valid here; groups holds n entries.
    let ok = unsafe { libc::getgrouplist(pwd.pw_name, gid, groups.as_mut_ptr(), &mut n) };
    groups.truncate(if ok < 0 { 0 } else { n.max(0) as usize });
    if groups.is_empty() {
        groups.push(gid);
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if me != 0 && me != uid {
        return Err(Error::Usage(format!(
            "--user {user} needs root privileges to switch users (cmdscope runs as uid {me})"
        )));
    }
    Ok(Credentials { uid, gid, groups })
}

/// The environment a command gets, as `KEY=VALUE` strings: inherited
/// variables (unless cleared), with `env` overriding, then `env_size`
/// synthetic variables. Built once per cell (`run` and `explain` alike),
/// and refused before it is built when exec could never take it with
/// `argv` ([`check_exec_size`]).
pub fn environment(
    argv: &[Vec<u8>],
    env: &[(Vec<u8>, Vec<u8>)],
    clear_env: bool,
    env_size: usize,
) -> Result<Vec<CString>> {
    let mut all: Vec<(Vec<u8>, Vec<u8>)> = if clear_env {
        Vec::new()
    } else {
        std::env::vars_os()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    };
    for (k, v) in env {
        all.retain(|(ek, _)| ek != k);
        all.push((k.clone(), v.clone()));
    }
    check_exec_size(argv, &all, env_size)?;
    for i in 0..env_size {
        all.push((pad_name(i).into_bytes(), vec![b'x'; PAD_VALUE]));
    }
    all.iter()
        .map(|(k, v)| {
            let mut kv = k.clone();
            kv.push(b'=');
            kv.extend_from_slice(v);
            cstring(&kv, "an environment variable")
        })
        .collect()
}

/// `--env-size`'s variables: CMDSCOPE_PAD_0000001=xxx... (32 bytes).
fn pad_name(i: usize) -> String {
    format!("CMDSCOPE_PAD_{i:07}")
}
const PAD_VALUE: usize = 32;

/// What exec counts for one string: its bytes, its NUL and its pointer.
fn exec_cost(bytes: usize) -> usize {
    bytes + 1 + std::mem::size_of::<usize>()
}

/// Bytes of argument and environment strings (with their pointers) exec
/// takes with this process's stack limit, which commands inherit: a
/// quarter of it, at most 6 MiB (three quarters of the kernel's 8 MiB
/// `_STK_LIM`), at least 128 KiB (`ARG_MAX`); and the longest one string
/// (`MAX_ARG_STRLEN`, 32 pages, with its NUL).
pub fn exec_limits() -> (usize, usize) {
    // SAFETY: getrlimit fills the struct; sysconf has no preconditions.
    let (stack, page) = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        let stack = if libc::getrlimit(libc::RLIMIT_STACK, &mut r) == 0 {
            r.rlim_cur
        } else {
            libc::RLIM_INFINITY
        };
        (stack, libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize)
    };
    let quarter = usize::try_from(stack / 4).unwrap_or(usize::MAX);
    (quarter.clamp(128 << 10, 6 << 20), 32 * page)
}

/// Refuses what exec could never take: a string longer than one string may
/// be, or arguments and environment (`env`, plus `env_size` padding
/// variables) larger than [`exec_limits`] allows together, counting the
/// program's path as long as its first word. Checked before the padding
/// is built, so `--env-size 10000000` is one line, not gigabytes.
pub fn check_exec_size(
    argv: &[Vec<u8>],
    env: &[(Vec<u8>, Vec<u8>)],
    env_size: usize,
) -> Result<()> {
    let (total, longest) = exec_limits();
    let strings = argv.iter().map(Vec::len).chain(argv.first().map(Vec::len));
    let vars = env.iter().map(|(k, v)| k.len() + 1 + v.len());
    if let Some(len) = strings
        .clone()
        .chain(vars.clone())
        .find(|&l| l + 1 > longest)
    {
        return Err(Error::Usage(format!(
            "an argument or environment variable of {len} bytes can never be executed: \
             the kernel takes at most {} bytes per string",
            longest - 1
        )));
    }
    let fixed: usize = strings.chain(vars).map(exec_cost).sum();
    let pad = exec_cost(pad_name(0).len() + 1 + PAD_VALUE);
    let needed = fixed.saturating_add(env_size.saturating_mul(pad));
    if needed <= total {
        return Ok(());
    }
    let room = total.saturating_sub(fixed) / pad;
    Err(Error::Usage(format!(
        "--env-size {env_size} can never be executed: with it the command's arguments and \
         environment take {needed} bytes, and exec takes at most {total} here (a quarter of \
         the stack limit, `ulimit -s`, at most 6 MiB); --env-size {room} is the largest that fits"
    )))
}

/// How one run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Finished,
    TimedOut,
    Interrupted,
}

struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: we own this descriptor.
            unsafe { libc::close(self.0) };
        }
    }
}

fn cstring(bytes: &[u8], what: &str) -> Result<CString> {
    CString::new(bytes).map_err(|_| Error::Usage(format!("{what} contains a NUL byte")))
}

/// Finds `program` like a shell would: as a path if it has a slash, else in PATH.
pub fn resolve_program(program: &[u8]) -> Result<PathBuf> {
    let shown = String::from_utf8_lossy(program).into_owned();
    if program.is_empty() {
        return Err(Error::Usage("empty command".into()));
    }
    let check = |p: &Path| -> Option<Result<PathBuf>> {
        let meta = std::fs::metadata(p).ok()?;
        if meta.is_dir() {
            return Some(Err(Error::NotExecutable(format!(
                "{} (a directory)",
                p.display()
            ))));
        }
        let c = CString::new(p.as_os_str().as_bytes()).ok()?;
        // SAFETY: c is a valid NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            Some(Ok(p.to_path_buf()))
        } else {
            Some(Err(Error::NotExecutable(p.display().to_string())))
        }
    };
    if program.contains(&b'/') {
        let p = Path::new(std::ffi::OsStr::from_bytes(program));
        return check(p).unwrap_or(Err(Error::CommandNotFound(shown)));
    }
    let path_var =
        std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut not_executable = None;
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join(std::ffi::OsStr::from_bytes(program));
        match check(&candidate) {
            Some(Ok(p)) => return Ok(p),
            Some(Err(e)) => not_executable = not_executable.or(Some(e)),
            None => {}
        }
    }
    Err(not_executable.unwrap_or(Error::CommandNotFound(shown)))
}

fn open_fd(path: &Path, flags: i32) -> Result<Fd> {
    let c = cstring(path.as_os_str().as_bytes(), "path")?;
    // SAFETY: c is NUL-terminated; mode is used only with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
    let source = if fd < 0 {
        std::io::Error::last_os_error()
    } else {
        let fd = Fd(fd);
        // A directory opens for reading, and the command would fail on it
        // and be blamed: refuse it here, as the kernel does for writing.
        // SAFETY: fd is open; stat is plain data.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        let is_dir = unsafe { libc::fstat(fd.0, &mut stat) } == 0
            && stat.st_mode & libc::S_IFMT == libc::S_IFDIR;
        if !is_dir {
            return Ok(fd);
        }
        std::io::Error::from_raw_os_error(libc::EISDIR)
    };
    Err(if flags & libc::O_CREAT != 0 {
        Error::Write {
            path: path.into(),
            source,
        }
    } else {
        Error::Read {
            path: path.into(),
            source,
        }
    })
}

fn timeval_seconds(sec: i64, usec: i64) -> f64 {
    sec as f64 + usec as f64 * 1e-6
}

// Message types and flags of the spawner protocol: see spawner.c.
const MSG_PREPARE: u32 = 1;
const MSG_RUN: u32 = 2;
const MSG_GO: u32 = 3;
const MSG_PID: u32 = 4;
const MSG_RESULT: u32 = 5;
const MSG_SCHEDULE: u32 = 6;
const MSG_DONE: u32 = 7;
const MSG_RESUME: u32 = 8;
const MSG_STARTED: u32 = 9;
const S_STOP_ON_FAILURE: u32 = 1;
/// The most runs one SCHEDULE message may hold (`SCHEDULE_MAX` in spawner.c).
pub const SCHEDULE_MAX: usize = 256;
const F_CWD: u32 = 1;
const F_NICE: u32 = 2;
const F_CPUS: u32 = 4;
const F_USER: u32 = 8;
const F_COUNTERS: u32 = 16;
const F_PROC_IO: u32 = 32;
const F_CGROUP: u32 = 64;
const F_STARTED: u32 = 128;

/// One run as the spawner reports it (`struct result` in spawner.c).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RunResult {
    pid: i64,
    status: i64,
    failed_step: i64,
    error: i64,
    start_sec: i64,
    start_nsec: i64,
    end_sec: i64,
    end_nsec: i64,
    utime_sec: i64,
    utime_usec: i64,
    stime_sec: i64,
    stime_usec: i64,
    maxrss_kib: i64,
    minflt: i64,
    majflt: i64,
    nvcsw: i64,
    nivcsw: i64,
    io_ok: i64,
    rchar: u64,
    wchar: u64,
    read_bytes: u64,
    write_bytes: u64,
    cancelled_write_bytes: u64,
    leftovers: i64,
    /// A scheduled run's number among the runs handed over (see
    /// [`Spawner::schedule`]); -1 for a run made alone.
    serial: i64,
    /// The spawner was stopped during the run (a command stopped its
    /// parent) and continued: its clock ran on across the stop.
    stopped: i64,
}

impl RunResult {
    /// Fills `sample` with every metric the report holds, or says which
    /// step of starting the command failed, with its errno.
    fn fill(&self, sample: &mut Sample) -> std::result::Result<(), (&'static str, i32)> {
        let res = self;
        if res.failed_step != 0 {
            let step = match res.failed_step {
                1 => "starting a process",
                2 => "redirecting input or output",
                3 => "changing to the working directory",
                4 => "setting the niceness (below 0 needs root)",
                5 => "pinning to --cpus",
                6 => "switching user",
                7 => "waiting for the perf counters",
                9 => "creating its process group",
                10 => "joining the session's cgroup",
                _ => "exec",
            };
            return Err((step, res.error as i32));
        }
        let wall =
            (res.end_sec - res.start_sec) as f64 + (res.end_nsec - res.start_nsec) as f64 * 1e-9;
        sample.set(Metric::WallTime, wall);
        if res.io_ok != 0 {
            sample.set(Metric::IoReadBytes, res.read_bytes as f64);
            // Net of writes truncated away before reaching storage.
            sample.set(
                Metric::IoWriteBytes,
                res.write_bytes.saturating_sub(res.cancelled_write_bytes) as f64,
            );
            sample.set(Metric::IoReadChars, res.rchar as f64);
            sample.set(Metric::IoWriteChars, res.wchar as f64);
        }

        let user = timeval_seconds(res.utime_sec, res.utime_usec);
        let sys = timeval_seconds(res.stime_sec, res.stime_usec);
        sample.set(Metric::UserTime, user);
        sample.set(Metric::SystemTime, sys);
        sample.set(Metric::CpuTime, user + sys);
        sample.set(Metric::PeakRss, res.maxrss_kib as f64 * 1024.0);
        sample.set(Metric::MinorFaults, res.minflt as f64);
        sample.set(Metric::MajorFaults, res.majflt as f64);
        sample.set(Metric::VoluntaryCtx, res.nvcsw as f64);
        sample.set(Metric::InvoluntaryCtx, res.nivcsw as f64);
        let status = res.status as i32;
        if libc::WIFEXITED(status) {
            sample.exit_code = Some(libc::WEXITSTATUS(status));
        } else if libc::WIFSIGNALED(status) {
            sample.signal = Some(libc::WTERMSIG(status));
        }
        Ok(())
    }
}

/// A RESULT message: header and report.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Reply {
    kind: u32,
    len: u32,
    res: RunResult,
}

/// The spawner helper built from spawner.c by build.rs.
static SPAWNER_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cmdscope-spawner"));

/// The session's spawner process: every measured command is started by it
/// (see the comment at the top of spawner.c for why). Started once per
/// session; exits when this is dropped (its socket closes).
pub struct Spawner {
    sock: Fd,
    /// The spawner's pid (our child).
    pid: libc::pid_t,
    prepared: std::cell::Cell<u32>,
    /// The session's cgroup (v2) for commands with a timeout, when the
    /// kernel offers one we may create (see [`session_cgroup`]).
    cgroup: Option<PathBuf>,
    /// Our main thread's `children` file, kept open: orphans are adopted
    /// by it, so one `pread` after a run tells whether the run left any.
    /// Opened at the first run's end: concurrency mode's slots never read
    /// it, and a descriptor per slot is one more for every later spawner's
    /// start to copy and close.
    children: std::cell::OnceCell<Fd>,
    /// Its text when nothing was left behind (our helpers only).
    settled: std::cell::RefCell<Vec<u8>>,
    /// Processes the hooks left running, protected until the session ends.
    hook_leftovers: std::cell::RefCell<Vec<libc::pid_t>>,
    /// Processes runs left running that the spawner killed itself (once it
    /// has made a schedule, it is the runs' subreaper), not yet counted.
    left_in_spawner: std::cell::Cell<usize>,
    /// Runs not yet read of each SCHEDULE sent and not yet DONE, in order.
    scheduled: std::cell::RefCell<std::collections::VecDeque<usize>>,
    /// When an interruption cut the schedules (CLOCK_MONOTONIC seconds):
    /// a run that ended before it is a finished run.
    interrupted_at: std::cell::Cell<Option<f64>>,
    /// A report read ahead to see whether its run ended before that.
    peeked: std::cell::Cell<Option<RunResult>>,
    /// Scheduled runs handed over so far: the next one's serial number.
    handed: std::cell::Cell<u64>,
    /// The last report of a scheduled run taken was only peeked at: it
    /// stays in the socket until its sample has gone on (see
    /// [`Spawner::catch_up`]).
    unconsumed: std::cell::Cell<bool>,
    /// One of several spawners whose commands run at once (see
    /// [`Spawner::confine_kills`]).
    confined: std::cell::Cell<bool>,
    /// When a wait on the spawner first saw cmdscope interrupted: no wait
    /// outlasts that by more than [`GRACE`] (see [`Spawner::stalled`]).
    interrupted_since: std::cell::Cell<Option<Instant>>,
}

/// How long a wait on the spawner goes without news before it looks at
/// the spawner: a command may stop its parent (`kill -STOP $PPID`), and a
/// stopped spawner neither reaps nor reports. Concurrency mode's slots,
/// thousands at once, look less often ([`Spawner::confine_kills`]).
const STALL: Duration = Duration::from_millis(200);
const STALL_CONFINED: Duration = Duration::from_secs(2);

/// How long the spawner has to answer once cmdscope is interrupted (or to
/// exit once told to) before it is killed: every wait ends.
const GRACE: Duration = Duration::from_secs(5);

/// The state letter of process `pid` (`R`, `S`, `T` for stopped, `Z`...)
/// from `/proc/<pid>/stat`, if it still exists.
fn process_state(pid: libc::pid_t) -> Option<u8> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the parenthesised name, which may hold anything.
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).copied()
}

/// Sets how long a read or write on `sock` waits before it returns EAGAIN.
fn wait_limit(sock: i32, limit: Duration) {
    let tv = libc::timeval {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_usec: limit.subsec_micros() as libc::suseconds_t,
    };
    for option in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: a timeval option on a socket we own.
        unsafe {
            libc::setsockopt(
                sock,
                libc::SOL_SOCKET,
                option,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
        }
    }
}

/// Whether the last system call failed because its wait limit passed.
fn timed_out_waiting() -> bool {
    matches!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::EAGAIN)
    )
}

/// More than this many bytes of children (a hundred or so pids) and the
/// fast comparison gives up: the slow path decides.
const CHILDREN_TEXT: usize = 512;

/// Creates a cgroup v2 for this session under our own, when cgroup v2 is
/// mounted, writable for us, and has `cgroup.kill` (Linux 5.14). Off with
/// CMDSCOPE_NO_CGROUP=1 (the tests use it to check the fallback too).
fn session_cgroup() -> Option<PathBuf> {
    if std::env::var_os("CMDSCOPE_NO_CGROUP").is_some_and(|v| v != "0") {
        return None;
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // "... mount_point ... - cgroup2 ...": field 5 is the mount point.
    let mount = mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        right
            .starts_with("cgroup2 ")
            .then(|| left.split_whitespace().nth(4).map(PathBuf::from))?
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let parent = mount.join(path.trim_start_matches('/'));
    remove_orphaned_cgroups(&parent);
    let dir = parent.join(format!("cmdscope-{}", std::process::id()));
    std::fs::create_dir(&dir).ok()?;
    if dir.join("cgroup.kill").exists() {
        Some(dir)
    } else {
        let _ = std::fs::remove_dir(&dir);
        None
    }
}

/// The spawner's program in a memory file, written once per process (a
/// spawner is started per session, and per instance slot in concurrency
/// mode): its descriptor, close-on-exec, above 3 (where the spawner's
/// socket goes), executed as `/proc/self/fd/<n>`.
fn spawner_program() -> std::io::Result<i32> {
    static PROGRAM: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if let Some(&fd) = PROGRAM.get() {
        return Ok(fd);
    }
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&fd) = PROGRAM.get() {
        return Ok(fd);
    }
    // SAFETY: memfd_create with a NUL-terminated name.
    let memfd = Fd(unsafe { libc::memfd_create(c"cmdscope-spawner".as_ptr(), libc::MFD_CLOEXEC) });
    if memfd.0 < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: memfd is open.
    let fd = Fd(unsafe { libc::fcntl(memfd.0, libc::F_DUPFD_CLOEXEC, 10) });
    if fd.0 < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut written = 0;
    while written < SPAWNER_ELF.len() {
        let rest = &SPAWNER_ELF[written..];
        // SAFETY: rest is a valid buffer.
        let n = unsafe { libc::write(fd.0, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            return Err(std::io::Error::last_os_error());
        }
        written += n as usize;
    }
    let raw = fd.0;
    std::mem::forget(fd);
    Ok(*PROGRAM.get_or_init(|| raw))
}

/// Starts `path` with `args` and `envp` through `posix_spawn`: `socket`
/// becomes its descriptor 3, it gets a process group of its own (a
/// terminal's Ctrl-C goes to cmdscope, which stops the command and still
/// needs the spawner's report of the run) and cmdscope's signal mask as
/// cmdscope was started (std resets the mask of the processes it starts:
/// the commands must get ours). The spawner asks for its parent-death
/// signal itself.
fn spawn_helper(
    path: &CStr,
    args: &[CString],
    envp: &[CString],
    socket: i32,
) -> std::io::Result<libc::pid_t> {
    let mut argv: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let mut env: Vec<*mut libc::c_char> = envp.iter().map(|e| e.as_ptr().cast_mut()).collect();
    env.push(std::ptr::null_mut());
    // SAFETY: the attribute and file action objects are initialised before
    // use and destroyed after; every pointer outlives the call.
    unsafe {
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        libc::posix_spawnattr_init(&mut attr);
        libc::posix_spawn_file_actions_init(&mut actions);
        libc::posix_spawnattr_setflags(
            &mut attr,
            (libc::POSIX_SPAWN_SETPGROUP
                | libc::POSIX_SPAWN_SETSIGMASK
                | libc::POSIX_SPAWN_SETSIGDEF) as libc::c_short,
        );
        libc::posix_spawnattr_setpgroup(&mut attr, 0);
        libc::posix_spawnattr_setsigmask(&mut attr, &mask);
        let default = internal_signals_default();
        libc::posix_spawnattr_setsigdefault(&mut attr, &default);
        libc::posix_spawn_file_actions_adddup2(&mut actions, socket, 3);
        let mut pid: libc::pid_t = 0;
        let rc = libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            &actions,
            &attr,
            argv.as_ptr(),
            env.as_ptr(),
        );
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        Ok(pid)
    }
}

/// The signals glibc keeps for itself (32 and 33, SIGCANCEL and
/// SIGSETXID) that cmdscope does not ignore: glibc's `posix_spawn` leaves
/// them ignored in the child unless asked for their default, and the exec
/// of every command would keep them ignored. `sigaddset` refuses them, so
/// their bits are set directly; cmdscope's own disposition is read from
/// the kernel (glibc's `sigaction` refuses them too).
fn internal_signals_default() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; glibc keeps signal n in bit n - 1 of
    // its first word. rt_sigaction with no new action only reads the
    // kernel's (handler, flags, restorer, mask) into `old`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [32usize, 33] {
            let mut old = [0usize; 4];
            let read = libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                std::ptr::null::<usize>(),
                old.as_mut_ptr(),
                8usize,
            );
            if read == 0 && old[0] == libc::SIG_IGN {
                continue;
            }
            *(&mut set as *mut libc::sigset_t).cast::<u64>() |= 1u64 << (sig - 1);
        }
        set
    }
}

/// Removes the session cgroups beside ours whose cmdscope is gone: the
/// spawner removes its session's when cmdscope is killed, but a spawner
/// killed with it cannot. What is still in one is killed first (its
/// session is over).
fn remove_orphaned_cgroups(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cmdscope-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dir = entry.path();
        let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        // Bounded: the killed processes leave it within milliseconds.
        for _ in 0..100 {
            if std::fs::remove_dir(&dir).is_ok() || !dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Spawner {
    /// Starts the spawner; `with_cgroup`: commands will have a timeout, so
    /// create the session cgroup if the kernel offers one.
    ///
    /// With `posix_spawn` (a vfork), not a fork: concurrency mode starts
    /// thousands of spawners from a process whose threads and memory grow
    /// with each, and a fork copies all of it (page tables of every thread's
    /// stack), which made starting N slots cost N squared. The program is
    /// written once per process ([`spawner_program`]).
    pub fn start(with_cgroup: bool) -> Result<Spawner> {
        let failed = |what: &str, e: std::io::Error| {
            Error::Io(std::io::Error::new(
                e.kind(),
                format!("cannot start the spawner ({what}): {e}"),
            ))
        };
        let program = spawner_program().map_err(|e| failed("memfd_create", e))?;
        let (ours, theirs) = socket_pair(libc::SOCK_STREAM).map_err(|e| failed("socketpair", e))?;
        use std::os::fd::IntoRawFd;
        let (ours, theirs) = (Fd(ours.into_raw_fd()), Fd(theirs.into_raw_fd()));
        // Above 3, where it goes in the spawner: a dup2 onto itself would
        // leave it close-on-exec.
        // SAFETY: theirs is open.
        let theirs = Fd(unsafe { libc::fcntl(theirs.0, libc::F_DUPFD_CLOEXEC, 10) });
        if theirs.0 < 0 {
            return Err(failed("fcntl", std::io::Error::last_os_error()));
        }
        // No wait on the spawner blocks for good (see `Spawner::stalled`).
        wait_limit(ours.0, STALL);
        let cgroup = if with_cgroup { session_cgroup() } else { None };
        let path = cstring(
            format!("/proc/self/fd/{program}").as_bytes(),
            "the spawner's path",
        )?;
        // argv: its name, cmdscope's pid (its parent, whose death it
        // watches), the session cgroup's cgroup.procs if any.
        let mut args = vec![
            cstring(b"cmdscope-spawner", "argument")?,
            cstring(std::process::id().to_string().as_bytes(), "argument")?,
        ];
        if let Some(dir) = &cgroup {
            args.push(cstring(
                dir.join("cgroup.procs").as_os_str().as_bytes(),
                "the session cgroup",
            )?);
        }
        let envp = environment(&[], &[], false, 0)?;
        let pid = spawn_helper(&path, &args, &envp, theirs.0).map_err(|e| failed("exec", e))?;
        drop(theirs);
        super::tree::protect(pid);
        Ok(Spawner {
            sock: ours,
            pid,
            prepared: std::cell::Cell::new(0),
            cgroup,
            children: std::cell::OnceCell::new(),
            settled: std::cell::RefCell::new(Vec::new()),
            hook_leftovers: std::cell::RefCell::new(Vec::new()),
            left_in_spawner: std::cell::Cell::new(0),
            scheduled: std::cell::RefCell::new(std::collections::VecDeque::new()),
            interrupted_at: std::cell::Cell::new(None),
            peeked: std::cell::Cell::new(None),
            handed: std::cell::Cell::new(0),
            unconsumed: std::cell::Cell::new(false),
            confined: std::cell::Cell::new(false),
            interrupted_since: std::cell::Cell::new(None),
        })
    }

    /// Our main thread's `children` file (-1 if it cannot be opened).
    fn children_fd(&self) -> i32 {
        self.children
            .get_or_init(|| {
                let me = std::process::id();
                open_fd(
                    Path::new(&format!("/proc/{me}/task/{me}/children")),
                    libc::O_RDONLY,
                )
                .unwrap_or(Fd(-1))
            })
            .0
    }

    /// Whether our children are the ones we had when nothing was left
    /// behind: one `pread`, the cost of the check after every run.
    fn unchanged(&self) -> bool {
        let children = self.children_fd();
        if children < 0 {
            return false;
        }
        let mut buf = [0u8; CHILDREN_TEXT];
        // SAFETY: buf is valid for its length; the descriptor is ours.
        let n = unsafe { libc::pread(children, buf.as_mut_ptr().cast(), buf.len(), 0) };
        n >= 0 && (n as usize) < buf.len() && buf[..n as usize] == self.settled.borrow()[..]
    }

    /// Remembers our children as they are now, with nothing left behind.
    fn settle(&self) {
        let children = self.children_fd();
        let mut buf = [0u8; CHILDREN_TEXT];
        // SAFETY: as in `unchanged`.
        let n = unsafe { libc::pread(children, buf.as_mut_ptr().cast(), buf.len(), 0) };
        let mut settled = self.settled.borrow_mut();
        settled.clear();
        if children >= 0 && n >= 0 {
            settled.extend_from_slice(&buf[..n as usize]);
        }
    }

    /// After a run: kills what it left running (daemons, double forks,
    /// background jobs) and returns how many processes that was; orphans
    /// that already exited are reaped. Nothing else is touched: the
    /// helpers and what the hooks started are protected.
    pub fn kill_leftovers(&self) -> usize {
        let killed = self.left_in_spawner.take();
        if self.unchanged() {
            return killed;
        }
        let left = tree::unprotected().len();
        if left > 0 {
            self.kill_run();
        }
        self.settle();
        left + killed
    }

    /// After a hook: what it left running (a server for the runs, say)
    /// lives until the session ends, protected from the runs' cleanup.
    pub fn keep_hook_leftovers(&self) {
        if self.unchanged() {
            return;
        }
        let left = tree::unprotected();
        let me = std::process::id() as libc::pid_t;
        for pid in tree::children(me) {
            if left.contains(&pid) {
                tree::protect_tree(pid);
                self.hook_leftovers.borrow_mut().push(pid);
            }
        }
        self.settle();
    }

    /// Whether commands with a timeout run in a cgroup killed as a whole.
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// For one of several spawners whose commands run at once (concurrency
    /// mode's slots): a timeout or an interruption kills this spawner's
    /// command tree only, never the commands of the others; what escaped
    /// the tree is the caller's to kill when all have ended.
    pub fn confine_kills(&self) {
        self.confined.set(true);
        wait_limit(self.sock.0, STALL_CONFINED);
    }

    /// Continues the spawner if it is stopped: a command may stop its
    /// parent, and a stopped spawner neither reaps nor reports. The run
    /// then in progress is reported as such (`stopped`), never as timed.
    fn resume_if_stopped(&self) {
        if matches!(process_state(self.pid()), Some(b'T' | b't')) {
            // SAFETY: a signal to our own helper process.
            unsafe { libc::kill(self.pid(), libc::SIGCONT) };
        }
    }

    /// A wait on the spawner saw nothing for its limit ([`STALL`]): a
    /// stopped spawner is continued; once cmdscope is interrupted, a
    /// spawner that has still not answered [`GRACE`] later is killed and
    /// the wait ends as interrupted, so Ctrl-C and SIGTERM always end
    /// the session.
    fn stalled(&self) -> Result<()> {
        self.resume_if_stopped();
        if signals::received().is_none() {
            return Ok(());
        }
        let since = *self
            .interrupted_since
            .get()
            .get_or_insert_with(Instant::now);
        self.interrupted_since.set(Some(since));
        if since.elapsed() < GRACE {
            return Ok(());
        }
        // SAFETY: a signal to our own helper process.
        unsafe { libc::kill(self.pid(), libc::SIGKILL) };
        Err(Error::Interrupted)
    }

    /// Kills every process of a run: the whole session cgroup at once when
    /// there is one (nothing in it escapes, however it detached), then the
    /// harness's process tree until a scan proves it empty; for a confined
    /// spawner, its own descendants only.
    fn kill_run(&self) {
        // A stopped spawner could not reap the run it was making.
        self.resume_if_stopped();
        if self.confined.get() {
            tree::kill_descendants(self.pid());
            return;
        }
        if let Some(dir) = &self.cgroup {
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        }
        tree::kill_all(None);
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Reaps the spawner if it has exited: true once it has.
    fn try_reap(&self) -> bool {
        let mut status = 0;
        // SAFETY: a non-blocking wait for our own child.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        r == self.pid
            || (r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
    }

    /// The spawner's peak resident size in bytes (VmHWM): the floor under
    /// every command's reported peak memory, read after the runs.
    pub fn peak_resident_bytes(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024.0)
    }

    /// Hands `runs` to the spawner, to be made back to back in this order
    /// without a request per run (spawner.c, `schedule`); their reports
    /// are read with [`Prepared::take`], in the same order. With
    /// `stop_on_failure` the spawner stops after a run that exits non-zero
    /// or is killed, and makes no run of the schedules behind it until
    /// [`Spawner::finish_schedules`].
    pub fn schedule(&self, runs: &[&Prepared], stop_on_failure: bool) -> Result<()> {
        for chunk in runs.chunks(SCHEDULE_MAX) {
            let flags = if stop_on_failure {
                S_STOP_ON_FAILURE
            } else {
                0
            };
            let mut message = header(MSG_SCHEDULE, 8 + 4 * chunk.len());
            message.extend_from_slice(&flags.to_ne_bytes());
            message.extend_from_slice(&(chunk.len() as u32).to_ne_bytes());
            for p in chunk {
                message.extend_from_slice(&p.id.to_ne_bytes());
            }
            self.send(&message, &[])?;
            self.scheduled.borrow_mut().push_back(chunk.len());
            self.handed.set(self.handed.get() + chunk.len() as u64);
        }
        Ok(())
    }

    /// The serial number the next run handed to [`Spawner::schedule`]
    /// will have: scheduled runs are numbered from 0 in the order handed
    /// over, made or not, and [`Prepared::take`] gives each sample its
    /// run's number.
    pub fn next_serial(&self) -> u64 {
        self.handed.get()
    }

    /// The descriptor of our end of the spawner's socket. The store writer
    /// keeps a copy of it: should cmdscope die, the reports of scheduled
    /// runs it never read are still there, and the writer stores them
    /// ([`unread_reports`]).
    pub fn socket(&self) -> std::os::fd::RawFd {
        self.sock.0
    }

    /// Whether runs handed over by [`Spawner::schedule`] are still to be read.
    pub fn scheduled(&self) -> bool {
        !self.scheduled.borrow().is_empty()
    }

    /// Stops the schedules still running (the runner wants no more of
    /// their runs: the session stops, or the schedule went another way than
    /// handed over) and reads what is left of them, then lets the spawner
    /// take schedules again. The runs made meanwhile are discarded (their
    /// leftovers counted). After an interruption, every run still made is
    /// killed until the spawner says it is done.
    pub fn finish_schedules(&self) -> Result<()> {
        self.catch_up(&mut || {})?;
        if !self.scheduled() {
            return Ok(());
        }
        self.cut();
        while self.scheduled() {
            if signals::received().is_some() {
                self.kill_run();
            }
            let mut fds = [libc::pollfd {
                fd: self.sock.0,
                events: libc::POLLIN,
                revents: 0,
            }];
            // SAFETY: fds holds one valid pollfd.
            if unsafe { libc::poll(fds.as_mut_ptr(), 1, 10) } <= 0 {
                self.stalled()?;
                continue;
            }
            let mut ignore = || {};
            self.next_report(&mut ignore)?;
        }
        self.peeked.set(None);
        self.interrupted_at.set(None);
        self.send(&header(MSG_RESUME, 0), &[])
    }

    /// Asks the spawner to make no further run of its schedules.
    fn cut(&self) {
        // SAFETY: a signal to our own helper process.
        unsafe { libc::kill(self.pid(), libc::SIGUSR1) };
    }

    /// Ctrl-C while runs are scheduled: the spawner makes no further run,
    /// the one running is killed, and the moment is kept (once).
    fn interrupt(&self) {
        if self.interrupted_at.get().is_none() {
            self.interrupted_at.set(Some(monotonic()));
            self.cut();
            self.kill_run();
        }
    }

    /// After Ctrl-C: whether the next scheduled run ended before it (its
    /// report was on its way): a finished run, to be taken in as such.
    pub fn finished_before_interrupt(&self) -> Result<bool> {
        if !self.scheduled() {
            return Ok(false);
        }
        self.interrupt();
        let next = match self.peeked.take() {
            Some(res) => Some(res),
            None => self.next_report(&mut || {})?,
        };
        self.peeked.set(next);
        Ok(next.is_some_and(|res| self.ended_before_interrupt(&res)))
    }

    fn ended_before_interrupt(&self, res: &RunResult) -> bool {
        let end = res.end_sec as f64 + res.end_nsec as f64 * 1e-9;
        res.failed_step == 0 && self.interrupted_at.get().is_some_and(|at| end < at)
    }

    /// Reads the spawner's next report of a scheduled run, passing over the
    /// DONE of finished schedules: None when none is left. The report is
    /// peeked at, not consumed: it leaves the socket at the next read
    /// ([`Spawner::catch_up`]), once its sample has gone to the store, so
    /// that a `kill -9` of cmdscope in between leaves it for the store
    /// writer to take in.
    fn next_report(&self, on_interrupt: &mut dyn FnMut()) -> Result<Option<RunResult>> {
        self.catch_up(on_interrupt)?;
        loop {
            if !self.scheduled() {
                return Ok(None);
            }
            let reply = self.peek_reply(on_interrupt)?;
            match reply.kind {
                MSG_DONE => {
                    self.recv(&mut [0u8; 8], on_interrupt)?;
                    self.scheduled.borrow_mut().pop_front();
                }
                MSG_RESULT if reply.len as usize == std::mem::size_of::<RunResult>() => {
                    self.unconsumed.set(true);
                    if let Some(left) = self.scheduled.borrow_mut().front_mut() {
                        *left = left.saturating_sub(1);
                    }
                    let res = reply.res;
                    self.left_in_spawner
                        .set(self.left_in_spawner.get() + res.leftovers.max(0) as usize);
                    return Ok(Some(res));
                }
                _ => return Err(Spawner::gone()),
            }
        }
    }

    /// Consumes the report last peeked at, then the DONE of a schedule
    /// whose runs are all read: after this no message of a schedule is
    /// left in the socket unless one is due.
    fn catch_up(&self, on_interrupt: &mut dyn FnMut()) -> Result<()> {
        if self.unconsumed.replace(false) {
            let mut reply = Reply::default();
            self.recv(reply_bytes(&mut reply), on_interrupt)?;
        }
        while self.scheduled.borrow().front() == Some(&0) {
            let (kind, _) = self.recv_header(on_interrupt)?;
            if kind != MSG_DONE {
                return Err(Spawner::gone());
            }
            self.scheduled.borrow_mut().pop_front();
        }
        Ok(())
    }

    /// The next message of a schedule, left in the socket: a DONE (its
    /// header) or a whole RESULT. The spawner writes whole messages, so
    /// a part of one is seen only for the moment the rest takes to come.
    fn peek_reply(&self, on_interrupt: &mut dyn FnMut()) -> Result<Reply> {
        let mut reply = Reply::default();
        loop {
            let bytes = reply_bytes(&mut reply);
            let want = bytes.len();
            // SAFETY: bytes is valid for writing its length.
            let n =
                unsafe { libc::recv(self.sock.0, bytes.as_mut_ptr().cast(), want, libc::MSG_PEEK) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                on_interrupt();
                continue;
            }
            if n < 0 && timed_out_waiting() {
                self.stalled()?;
                continue;
            }
            if n <= 0 {
                return Err(Spawner::gone());
            }
            let n = n as usize;
            if n == want || (n >= 8 && reply.kind == MSG_DONE) {
                return Ok(reply);
            }
            // The rest of a message on its way.
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    fn gone() -> Error {
        Error::Io(std::io::Error::other(
            "the spawner process exited unexpectedly",
        ))
    }

    fn send(&self, bytes: &[u8], fds: &[i32]) -> Result<()> {
        let mut sent = 0;
        while sent < bytes.len() {
            let part = if sent == 0 { fds } else { &[] };
            match send_part(self.sock.0, &bytes[sent..], part) {
                Ok(n) => sent += n,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => self.stalled()?,
                Err(_) => return Err(Spawner::gone()),
            }
        }
        Ok(())
    }

    /// Reads exactly `buf.len()` bytes; `on_interrupt` runs whenever a
    /// signal interrupts the read (the harness's handlers do not restart).
    fn recv(&self, buf: &mut [u8], on_interrupt: &mut dyn FnMut()) -> Result<()> {
        let mut got = 0;
        while got < buf.len() {
            // SAFETY: the rest of buf is valid for writing.
            let n =
                unsafe { libc::read(self.sock.0, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                on_interrupt();
                continue;
            }
            if n < 0 && timed_out_waiting() {
                self.stalled()?;
                continue;
            }
            if n <= 0 {
                return Err(Spawner::gone());
            }
            got += n as usize;
        }
        Ok(())
    }

    /// Reads one message header: (type, length).
    fn recv_header(&self, on_interrupt: &mut dyn FnMut()) -> Result<(u32, u32)> {
        let mut h = [0u8; 8];
        self.recv(&mut h, on_interrupt)?;
        Ok((
            u32::from_ne_bytes([h[0], h[1], h[2], h[3]]),
            u32::from_ne_bytes([h[4], h[5], h[6], h[7]]),
        ))
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        if self.scheduled() {
            self.cut();
        }
        // The end of our writing makes the spawner exit: a shutdown, since
        // closing our descriptor does not end the socket while the store
        // writer holds a copy of it.
        // SAFETY: a shutdown of a descriptor we own.
        unsafe { libc::shutdown(self.sock.0, libc::SHUT_WR) };
        drop(std::mem::replace(&mut self.sock, Fd(-1)));
        // It exits at once unless stopped (continued here) or stuck: it is
        // killed after GRACE, so that no session's end waits for good.
        let waited = Instant::now();
        while !self.try_reap() {
            if waited.elapsed() >= GRACE {
                // SAFETY: our own helper, then reaped (blocking, it is killed).
                unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                    let mut status = 0;
                    libc::waitpid(self.pid, &mut status, 0);
                }
                break;
            }
            self.resume_if_stopped();
            std::thread::sleep(Duration::from_millis(1));
        }
        super::tree::unprotect(self.pid);
        // The session is over: what the hooks left running goes now, with
        // anything else a run left (whatever path ended the session).
        for pid in self.hook_leftovers.take() {
            super::tree::unprotect(pid);
        }
        // Not for one of concurrency mode's slots, whose instances' trees
        // the session's own spawner cleans after each batch: a scan of the
        // whole tree per slot made ending N slots cost N squared.
        if !self.confined.get() && !super::tree::unprotected().is_empty() {
            self.kill_run();
        }
        if let Some(dir) = &self.cgroup {
            // Empty now: every command was reaped and its tree killed.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// CLOCK_MONOTONIC now, in seconds: the spawner's clock.
fn monotonic() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into ts.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// One `sendmsg` of `bytes` on `sock`, with `fds` (at most three) as
/// SCM_RIGHTS: the bytes sent.
fn send_part(sock: i32, bytes: &[u8], fds: &[i32]) -> std::io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; every pointer outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        let fds = &fds[..fds.len().min(3)];
        let len = std::mem::size_of_val(fds) as u32;
        // SAFETY: control is large enough for three descriptors.
        unsafe {
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(len) as _;
            let cm = libc::CMSG_FIRSTHDR(&msg);
            (*cm).cmsg_level = libc::SOL_SOCKET;
            (*cm).cmsg_type = libc::SCM_RIGHTS;
            (*cm).cmsg_len = libc::CMSG_LEN(len) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cm).cast(), fds.len());
        }
    }
    // SAFETY: msg describes valid buffers.
    let n = unsafe { libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// A connected pair of Unix sockets of `kind` (`SOCK_STREAM`,
/// `SOCK_DGRAM`), close-on-exec.
pub fn socket_pair(
    kind: libc::c_int,
) -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut pair = [-1; 2];
    // SAFETY: pair holds two ints.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            kind | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(pair[0]),
            std::os::fd::OwnedFd::from_raw_fd(pair[1]),
        )
    })
}

/// Passes a copy of descriptor `fd` to the process at the other end of
/// the datagram socket `sock` ([`receive_descriptor`]).
pub fn send_descriptor(sock: i32, fd: i32) -> std::io::Result<()> {
    loop {
        match send_part(sock, &[0], &[fd]) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            r => return r.map(|_| ()),
        }
    }
}

/// The descriptor the next message on socket `sock` carries
/// ([`send_descriptor`]), close-on-exec.
pub fn receive_descriptor(sock: i32) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; every pointer outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    loop {
        // SAFETY: msg describes valid buffers.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    // SAFETY: the kernel filled msg's control buffer; a descriptor it
    // carries is new in this process and owned here.
    unsafe {
        let cm = libc::CMSG_FIRSTHDR(&msg);
        if cm.is_null()
            || (*cm).cmsg_level != libc::SOL_SOCKET
            || (*cm).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(std::io::Error::other("no descriptor came"));
        }
        let mut fd = -1i32;
        std::ptr::copy_nonoverlapping(libc::CMSG_DATA(cm).cast::<i32>(), &mut fd, 1);
        Ok(std::os::fd::OwnedFd::from_raw_fd(fd))
    }
}

/// A reply as its bytes, to be read into.
fn reply_bytes(reply: &mut Reply) -> &mut [u8] {
    // SAFETY: Reply is plain data, viewed as its bytes.
    unsafe {
        std::slice::from_raw_parts_mut(
            (reply as *mut Reply).cast::<u8>(),
            std::mem::size_of::<Reply>(),
        )
    }
}

/// The reports of scheduled runs left unread in the spawner's socket
/// `socket` (a copy of cmdscope's end) once cmdscope is gone: each run's
/// serial number (see [`Spawner::next_serial`]) and its sample, as
/// [`Prepared::take`] would have filled it, in the order made; runs that
/// could not start are left out. Reads until the spawner has closed its
/// end (it writes the reports of the runs that ended before cmdscope's
/// death, then exits), waiting at most `patience` for each message.
pub fn unread_reports(socket: std::os::fd::RawFd, patience: Duration) -> Vec<(u64, Sample)> {
    let mut out = Vec::new();
    let mut reply = Reply::default();
    loop {
        let mut header = [0u8; 8];
        if !read_within(socket, &mut header, patience) {
            break;
        }
        let kind = u32::from_ne_bytes([header[0], header[1], header[2], header[3]]);
        let len = u32::from_ne_bytes([header[4], header[5], header[6], header[7]]) as usize;
        match kind {
            MSG_DONE => continue,
            MSG_RESULT if len == std::mem::size_of::<RunResult>() => {}
            // Not a schedule's message: nothing after it can be read as one.
            _ => break,
        }
        if !read_within(socket, &mut reply_bytes(&mut reply)[8..], patience) {
            break;
        }
        let res = reply.res;
        let mut sample = Sample::new(0);
        if res.serial >= 0 && res.stopped == 0 && res.fill(&mut sample).is_ok() {
            sample.scheduled = Some(res.serial as u64);
            out.push((res.serial as u64, sample));
        }
    }
    out
}

/// Reads exactly `buf.len()` bytes, waiting at most `patience` for each
/// part; false at the end of the stream, an error or the wait's end.
fn read_within(fd: std::os::fd::RawFd, buf: &mut [u8], patience: Duration) -> bool {
    let mut got = 0;
    while got < buf.len() {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = patience.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if ready <= 0 {
            return false;
        }
        // SAFETY: the rest of buf is valid for writing.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if n <= 0 {
            return false;
        }
        got += n as usize;
    }
    true
}

fn header(kind: u32, len: usize) -> Vec<u8> {
    let mut v = kind.to_ne_bytes().to_vec();
    v.extend_from_slice(&(len as u32).to_ne_bytes());
    v
}

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
fn cpu_set(list: &[usize]) -> Result<libc::cpu_set_t> {
    let allowed = allowed_cpus()?;
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: cpu_set_t is plain data.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in list {
        if c >= max || !allowed.contains(&c) {
            return Err(Error::Usage(format!(
                "--cpus: CPU {c} is not available to cmdscope (available: {})",
                allowed
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
        // SAFETY: checked against CPU_SETSIZE first.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    Ok(set)
}

/// A command prepared once in the spawner: path, arguments, environment,
/// redirections and attributes are sent when prepared; a run is one short
/// request and one fixed-size reply.
pub struct Prepared {
    spawner: std::rc::Rc<Spawner>,
    id: u32,
    path: CString,
    pipe_read: Fd,
    timeout: Option<Duration>,
    counters: Option<Availability>,
    drain: Vec<u8>,
    /// Bytes of output read from the pipe over all runs.
    pub piped_bytes: u64,
    /// `--input FILE`, kept open to rewind it before every run: the
    /// spawner's copy shares its file position, which the previous run left
    /// at the end.
    rewind: Fd,
    /// `--output FILE`, kept open to empty it before every run, as
    /// hyperfine does (the spawner's copy appends, so it writes from 0).
    truncate: Fd,
    /// Its output goes to the terminal (`--show-output`).
    shown: bool,
    /// When the last run started and ended, on the spawner's clock
    /// (CLOCK_MONOTONIC), in seconds.
    last: Option<(f64, f64)>,
}

impl Prepared {
    pub fn new(spawner: &std::rc::Rc<Spawner>, config: &SpawnConfig) -> Result<Prepared> {
        let Some(program) = config.argv.first() else {
            return Err(Error::Usage("empty command".into()));
        };
        let resolved = resolve_program(program)?;
        let path = cstring(resolved.as_os_str().as_bytes(), "program path")?;
        let argv = config
            .argv
            .iter()
            .map(|a| cstring(a, "an argument"))
            .collect::<Result<Vec<_>>>()?;

        let envp = environment(&config.argv, &config.env, config.clear_env, config.env_size)?;

        let credentials = config.user.as_deref().map(resolve_user).transpose()?;
        let cwd = config
            .cwd
            .as_ref()
            .map(|c| cstring(c.as_os_str().as_bytes(), "--workdir"))
            .transpose()?;
        let cpus = config.cpus.as_deref().map(cpu_set).transpose()?;
        let devnull = Path::new("/dev/null");
        let stdin = match &config.input {
            Input::Null => open_fd(devnull, libc::O_RDONLY)?,
            Input::File(p) => open_fd(p, libc::O_RDONLY)?,
        };
        let (stdout, stderr, pipe_read) = match &config.output {
            Output::Null => (
                open_fd(devnull, libc::O_WRONLY)?,
                open_fd(devnull, libc::O_WRONLY)?,
                Fd(-1),
            ),
            Output::Inherit => (Fd(-1), Fd(-1), Fd(-1)),
            Output::File(p) => {
                let f = open_fd(
                    p,
                    libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND,
                )?;
                // SAFETY: f is open.
                let f2 = Fd(unsafe { libc::fcntl(f.0, libc::F_DUPFD_CLOEXEC, 3) });
                (f, f2, Fd(-1))
            }
            Output::Pipe => {
                let mut fds = [0; 2];
                // SAFETY: fds is a valid array of two ints.
                if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0
                {
                    return Err(Error::Io(std::io::Error::last_os_error()));
                }
                // The child's end must block like a normal pipe does.
                // SAFETY: fds[1] is the pipe's write end we just created.
                unsafe { libc::fcntl(fds[1], libc::F_SETFL, 0) };
                let w2 = Fd(unsafe { libc::fcntl(fds[1], libc::F_DUPFD_CLOEXEC, 3) });
                (Fd(fds[1]), w2, Fd(fds[0]))
            }
        };

        let mut flags = F_PROC_IO * u32::from(config.proc_io);
        let mut fds = Vec::new();
        let mut targets = [-1i32; 3];
        for (fd, target) in [(&stdin, 0), (&stdout, 1), (&stderr, 2)] {
            if fd.0 >= 0 {
                targets[fds.len()] = target;
                fds.push(fd.0);
            }
        }
        let (uid, gid, groups) = match &credentials {
            Some(c) => {
                flags |= F_USER;
                (c.uid, c.gid, c.groups.clone())
            }
            None => (0, 0, Vec::new()),
        };
        if cwd.is_some() {
            flags |= F_CWD;
        }
        if config.nice.is_some() {
            flags |= F_NICE;
        }
        if config.counters.is_some() {
            flags |= F_COUNTERS;
        }
        // Joining a cgroup costs a migration per run: only where a timeout
        // may have to kill the tree.
        if config.timeout.is_some() && spawner.has_cgroup() {
            flags |= F_CGROUP;
        }
        // A timeout counts from the run's start, which the spawner says.
        if config.timeout.is_some() {
            flags |= F_STARTED;
        }
        let cpuset_bytes: &[u8] = match &cpus {
            Some(set) => {
                flags |= F_CPUS;
                // SAFETY: cpu_set_t is plain data, viewed as its bytes.
                unsafe {
                    std::slice::from_raw_parts(
                        (set as *const libc::cpu_set_t).cast(),
                        std::mem::size_of::<libc::cpu_set_t>(),
                    )
                }
            }
            None => &[],
        };
        let id = spawner.prepared.get();
        let mut body = Vec::new();
        for v in [id, flags] {
            body.extend_from_slice(&v.to_ne_bytes());
        }
        body.extend_from_slice(&config.nice.unwrap_or(0).to_ne_bytes());
        for v in [
            uid,
            gid,
            groups.len() as u32,
            cpuset_bytes.len() as u32,
            argv.len() as u32,
            envp.len() as u32,
            fds.len() as u32,
        ] {
            body.extend_from_slice(&v.to_ne_bytes());
        }
        for t in targets {
            body.extend_from_slice(&t.to_ne_bytes());
        }
        for g in &groups {
            body.extend_from_slice(&g.to_ne_bytes());
        }
        body.extend_from_slice(cpuset_bytes);
        body.extend_from_slice(path.as_bytes_with_nul());
        if let Some(dir) = &cwd {
            body.extend_from_slice(dir.as_bytes_with_nul());
        }
        for s in argv.iter().chain(&envp) {
            body.extend_from_slice(s.as_bytes_with_nul());
        }
        if body.len() > u32::MAX as usize {
            return Err(Error::Usage(
                "the command and its environment are too large".into(),
            ));
        }
        let mut message = header(MSG_PREPARE, body.len());
        message.extend_from_slice(&body);
        spawner.send(&message, &fds)?;
        spawner.prepared.set(id + 1);
        // The spawner holds its own copies of the descriptors now; ours
        // stay open only where a run has to reset them.
        let rewind = if matches!(config.input, Input::File(_)) {
            stdin
        } else {
            Fd(-1)
        };
        let truncate = if matches!(config.output, Output::File(_)) {
            stdout
        } else {
            Fd(-1)
        };
        drop(stderr);

        Ok(Prepared {
            spawner: spawner.clone(),
            id,
            path,
            pipe_read,
            timeout: config.timeout,
            counters: config.counters.clone(),
            drain: if config.output == Output::Pipe {
                vec![0; 64 * 1024]
            } else {
                Vec::new()
            },
            piped_bytes: 0,
            rewind,
            truncate,
            shown: config.output == Output::Inherit,
            last: None,
        })
    }

    /// Whether a run of this command may be made from a schedule
    /// ([`Spawner::schedule`]): nothing needs doing around it here (no
    /// timeout to watch, counters to open, output to drain or show, input
    /// to rewind or output file to empty).
    pub fn schedulable(&self) -> bool {
        self.timeout.is_none()
            && self.counters.is_none()
            && self.pipe_read.0 < 0
            && self.rewind.0 < 0
            && self.truncate.0 < 0
            && !self.shown
    }

    /// When the last run started and ended: the spawner's readings of the
    /// clock around it (a run taken from a schedule was timed by it alone).
    pub fn last_span(&self) -> Option<(Instant, Instant)> {
        let (start, end) = self.last?;
        let now = monotonic();
        let then = Instant::now();
        let at = |t: f64| then.checked_sub(Duration::from_secs_f64((now - t).max(0.0)));
        Some((at(start)?, at(end)?))
    }

    /// The resolved program path.
    pub fn program(&self) -> &CStr {
        &self.path
    }

    /// Runs the command once and fills `sample` with every metric measured.
    pub fn run(&mut self, sample: &mut Sample) -> Result<Outcome> {
        // Every run starts from the same state: the input from its first
        // byte, the output file empty. Outside the timed window (the
        // spawner times the run).
        // SAFETY: plain syscalls on descriptors this struct owns; a
        // descriptor that cannot seek (a pipe given as --input) is left as is.
        unsafe {
            if self.rewind.0 >= 0 {
                libc::lseek(self.rewind.0, 0, libc::SEEK_SET);
            }
            if self.truncate.0 >= 0 {
                libc::ftruncate(self.truncate.0, 0);
            }
        }
        let spawner = self.spawner.clone();
        // A report of a schedule cannot be taken for this run's.
        spawner.finish_schedules()?;
        // The header alone: its length field carries the id (spawner.c).
        let request = header(MSG_RUN, self.id as usize);
        spawner.send(&request, &[])?;

        let mut interrupted = false;
        let mut on_interrupt = || {
            if !interrupted && signals::received().is_some() {
                interrupted = true;
                spawner.kill_run();
            }
        };
        let mut counters = None;
        let mut outcome = Outcome::Finished;
        // The report with its header, read with one call when possible.
        let mut reply = Reply::default();
        let mut whole = true;
        if let Some(avail) = &self.counters {
            // The child reports its pid and waits for the counters, unless
            // a step before failed (then the report comes instead).
            let (kind, len) = spawner.recv_header(&mut on_interrupt)?;
            if kind == MSG_PID {
                let mut pid = [0u8; 4];
                spawner.recv(&mut pid, &mut on_interrupt)?;
                counters = Some(Counters::open(avail, i32::from_ne_bytes(pid)));
                // The waiting child reads this and execs.
                spawner.send(&header(MSG_GO, 0), &[])?;
            } else {
                (reply.kind, reply.len) = (kind, len);
                whole = false;
            }
        }
        // The timeout counts from the moment the spawner started the run,
        // not from our request: on a busy machine the spawner may wake up
        // tens of milliseconds later, and the run would be cut short.
        let mut deadline = None;
        if let (true, Some(timeout)) = (whole, self.timeout) {
            let (kind, len) = spawner.recv_header(&mut on_interrupt)?;
            if kind == MSG_STARTED {
                let mut at = [0u8; 16];
                spawner.recv(&mut at, &mut on_interrupt)?;
                let sec = i64::from_ne_bytes(at[..8].try_into().unwrap_or_default());
                let nsec = i64::from_ne_bytes(at[8..].try_into().unwrap_or_default());
                let since = (monotonic() - (sec as f64 + nsec as f64 * 1e-9)).max(0.0);
                let now = Instant::now();
                deadline = Some(
                    now.checked_sub(Duration::from_secs_f64(since))
                        .unwrap_or(now)
                        + timeout,
                );
            } else {
                // It could not start: its report came instead.
                (reply.kind, reply.len) = (kind, len);
                whole = false;
            }
        }
        if whole && (deadline.is_some() || self.pipe_read.0 >= 0) {
            outcome = self.wait_polling(deadline);
        }
        // SAFETY: Reply is plain data; the slice covers it (whole) or its
        // report part only.
        let bytes = unsafe {
            let all = std::slice::from_raw_parts_mut(
                (&mut reply as *mut Reply).cast::<u8>(),
                std::mem::size_of::<Reply>(),
            );
            if whole {
                all
            } else {
                &mut all[8..]
            }
        };
        spawner.recv(bytes, &mut on_interrupt)?;
        if reply.kind != MSG_RESULT || reply.len as usize != std::mem::size_of::<RunResult>() {
            return Err(Spawner::gone());
        }
        let res = reply.res;
        spawner
            .left_in_spawner
            .set(spawner.left_in_spawner.get() + res.leftovers.max(0) as usize);
        if interrupted {
            outcome = Outcome::Interrupted;
        }
        if outcome != Outcome::Finished {
            // The command itself is reaped now: kill what it left behind.
            spawner.kill_run();
        }
        self.drain_pipe();
        self.fill(&res, sample)?;
        if let Some(c) = &counters {
            c.read_into(sample);
        }
        sample.timed_out = outcome == Outcome::TimedOut;
        Ok(outcome)
    }

    /// The report of the next run the spawner made from its schedule
    /// ([`Spawner::schedule`]), which must be a run of this command: every
    /// metric of [`Prepared::run`] but the counters (a schedule holds no run
    /// with counters, an output pipe, an input to rewind or an output file
    /// to empty). Ctrl-C cuts the schedule and kills the run.
    pub fn take(&mut self, sample: &mut Sample) -> Result<Outcome> {
        let spawner = self.spawner.clone();
        if signals::received().is_some() {
            spawner.interrupt();
        }
        let mut on_interrupt = || {
            if signals::received().is_some() {
                spawner.interrupt();
            }
        };
        let res = match spawner.peeked.take() {
            Some(res) => res,
            None => match spawner.next_report(&mut on_interrupt)? {
                Some(res) => res,
                // The spawner ended its schedules before this run.
                None => return Ok(Outcome::Interrupted),
            },
        };
        self.fill(&res, sample)?;
        sample.scheduled = u64::try_from(res.serial).ok();
        if spawner.interrupted_at.get().is_some() && !spawner.ended_before_interrupt(&res) {
            return Ok(Outcome::Interrupted);
        }
        Ok(Outcome::Finished)
    }

    /// Fills `sample` from the spawner's report of a run, or says why the
    /// command could not start.
    fn fill(&mut self, res: &RunResult, sample: &mut Sample) -> Result<()> {
        self.last = None;
        if let Err((step, errno)) = res.fill(sample) {
            return Err(Error::Spawn {
                command: self.path.to_string_lossy().into_owned(),
                source: std::io::Error::new(
                    std::io::Error::from_raw_os_error(errno).kind(),
                    format!("{step}: {}", std::io::Error::from_raw_os_error(errno)),
                ),
            });
        }
        if res.stopped != 0 && signals::received().is_none() {
            // Its time ran on while the spawner was stopped: not a time
            // of the command's, and no later run would be timed either if
            // it does that every time.
            return Err(Error::Failed(format!(
                "'{}' stopped cmdscope's spawner, its parent process (SIGSTOP to $PPID): \
                 its run cannot be timed (cmdscope continued the spawner and stopped the session)",
                self.path.to_string_lossy()
            )));
        }
        let at = |sec: i64, nsec: i64| sec as f64 + nsec as f64 * 1e-9;
        self.last = Some((
            at(res.start_sec, res.start_nsec),
            at(res.end_sec, res.end_nsec),
        ));
        Ok(())
    }

    /// Waits for the spawner's report while draining the output pipe and
    /// watching the deadline and the harness's signals; kills the command's
    /// tree on a timeout or an interruption. The report itself is left for
    /// the caller to read.
    fn wait_polling(&mut self, deadline: Option<Instant>) -> Outcome {
        let sock = self.spawner.sock.0;
        loop {
            if signals::received().is_some() {
                self.spawner.kill_run();
                return Outcome::Interrupted;
            }
            let wait_ms = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        self.spawner.kill_run();
                        return Outcome::TimedOut;
                    }
                    left.as_micros().div_ceil(1000).clamp(1, STALL.as_millis()) as i32
                }
                None => STALL.as_millis() as i32,
            };
            let mut fds = [
                libc::pollfd {
                    fd: sock,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.pipe_read.0,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let nfds = if self.pipe_read.0 >= 0 { 2 } else { 1 };
            // SAFETY: fds holds nfds valid pollfd entries.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), nfds, wait_ms) };
            if r > 0 {
                if fds[1].revents != 0 {
                    self.drain_pipe();
                }
                if fds[0].revents != 0 {
                    return Outcome::Finished;
                }
            } else if r == 0 {
                self.spawner.resume_if_stopped();
            }
        }
    }

    fn drain_pipe(&mut self) {
        if self.pipe_read.0 < 0 {
            return;
        }
        loop {
            // SAFETY: drain is a valid buffer; the read end is non-blocking.
            let n = unsafe {
                libc::read(
                    self.pipe_read.0,
                    self.drain.as_mut_ptr().cast(),
                    self.drain.len(),
                )
            };
            if n <= 0 {
                break;
            }
            self.piped_bytes += n as u64;
        }
    }
}
