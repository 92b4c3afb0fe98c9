//! Spawning and waiting for one benchmarked process.
//!
//! Written against libc rather than `std::process::Command` because the hot
//! path must not allocate per run, must read `/proc/<pid>/io` between
//! `waitid(WNOWAIT)` and `wait4`, and must get the child's own rusage from
//! `wait4` (std reaps with `waitpid` and throws the rusage away).

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::perf::{Availability, Counters};
use super::{procio, signals, tree};
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
    /// Appended to a file, truncated once at the start.
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
    /// Open perf counters (forces the fork+exec path: see `Prepared::run`).
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
/// synthetic variables. Built once per cell (`run` and `explain` alike).
pub fn environment(
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
    for i in 0..env_size {
        all.push((format!("CMDSCOPE_PAD_{i:07}").into_bytes(), vec![b'x'; 32]));
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

/// A command prepared once: resolved path, argv/envp pointer arrays, spawn
/// attributes and redirections. Running it allocates nothing.
pub struct Prepared {
    path: CString,
    _argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
    stdin: Fd,
    stdout: Fd,
    stderr: Fd,
    pipe_read: Fd,
    timeout: Option<Duration>,
    counters: Option<Availability>,
    proc_io: bool,
    drain: Vec<u8>,
    credentials: Option<Credentials>,
    nice: Option<i32>,
    cwd: Option<CString>,
    /// CPU set for the command, and the harness's own to restore.
    cpus: Option<(libc::cpu_set_t, libc::cpu_set_t)>,
    /// Bytes of output read from the pipe over all runs.
    pub piped_bytes: u64,
    runs: u64,
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
    if fd < 0 {
        let source = std::io::Error::last_os_error();
        return Err(if flags & libc::O_CREAT != 0 {
            Error::Write {
                path: path.into(),
                source,
            }
        } else {
            Error::Read {
                path: path.into(),
                source,
            }
        });
    }
    Ok(Fd(fd))
}

fn check(rc: libc::c_int, what: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Io(std::io::Error::new(
            std::io::Error::from_raw_os_error(rc).kind(),
            format!("{what}: {}", std::io::Error::from_raw_os_error(rc)),
        )))
    }
}

fn now() -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts
}

fn seconds_between(a: libc::timespec, b: libc::timespec) -> f64 {
    (b.tv_sec - a.tv_sec) as f64 + (b.tv_nsec - a.tv_nsec) as f64 * 1e-9
}

fn timeval_seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

impl Prepared {
    pub fn new(config: &SpawnConfig) -> Result<Prepared> {
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
        let mut argv_ptrs: Vec<_> = argv.iter().map(|a| a.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());

        let envp = environment(&config.env, config.clear_env, config.env_size)?;
        let mut envp_ptrs: Vec<_> = envp.iter().map(|e| e.as_ptr()).collect();
        envp_ptrs.push(std::ptr::null());

        let credentials = config.user.as_deref().map(resolve_user).transpose()?;
        let cwd = config
            .cwd
            .as_ref()
            .map(|c| cstring(c.as_os_str().as_bytes(), "--workdir"))
            .transpose()?;
        let cpus = match &config.cpus {
            Some(list) => {
                // SAFETY: cpu_set_t is plain data; CPU_SET indexes within it.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    for &c in list {
                        libc::CPU_SET(c, &mut set);
                    }
                    let mut own: libc::cpu_set_t = std::mem::zeroed();
                    libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut own);
                    Some((set, own))
                }
            }
            None => None,
        };
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

        // SAFETY: init functions write into the zeroed structures we own;
        // every pointer passed lives as long as `Prepared`.
        let (attr, actions) = unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            check(
                libc::posix_spawnattr_init(&mut attr),
                "posix_spawnattr_init",
            )?;
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            check(
                libc::posix_spawnattr_setsigmask(&mut attr, &mask),
                "setsigmask",
            )?;
            // Only ignored signals survive exec (caught ones are reset by it), and
            // Rust ignores SIGPIPE: reset that one, in as few syscalls as possible.
            let mut def: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut def);
            libc::sigaddset(&mut def, libc::SIGPIPE);
            check(
                libc::posix_spawnattr_setsigdefault(&mut attr, &def),
                "setsigdefault",
            )?;
            // Its own process group, so that a timeout kills the whole tree and
            // a terminal's Ctrl-C reaches the harness, which then cleans up.
            check(libc::posix_spawnattr_setpgroup(&mut attr, 0), "setpgroup")?;
            let flags = libc::POSIX_SPAWN_SETPGROUP
                | libc::POSIX_SPAWN_SETSIGMASK
                | libc::POSIX_SPAWN_SETSIGDEF;
            check(
                libc::posix_spawnattr_setflags(&mut attr, flags as libc::c_short),
                "setflags",
            )?;

            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            check(
                libc::posix_spawn_file_actions_init(&mut actions),
                "file_actions_init",
            )?;
            for (fd, target) in [(&stdin, 0), (&stdout, 1), (&stderr, 2)] {
                if fd.0 >= 0 {
                    check(
                        libc::posix_spawn_file_actions_adddup2(&mut actions, fd.0, target),
                        "adddup2",
                    )?;
                }
            }
            if let Some(dir) = &cwd {
                check(
                    libc::posix_spawn_file_actions_addchdir_np(&mut actions, dir.as_ptr()),
                    "addchdir",
                )?;
            }
            (attr, actions)
        };

        Ok(Prepared {
            path,
            _argv: argv,
            argv_ptrs,
            _envp: envp,
            envp_ptrs,
            attr,
            actions,
            stdin,
            stdout,
            stderr,
            pipe_read,
            timeout: config.timeout,
            counters: config.counters.clone(),
            proc_io: config.proc_io,
            drain: if config.output == Output::Pipe {
                vec![0; 64 * 1024]
            } else {
                Vec::new()
            },
            piped_bytes: 0,
            runs: 0,
            credentials,
            nice: config.nice,
            cwd,
            cpus,
        })
    }

    /// The resolved program path.
    pub fn program(&self) -> &CStr {
        &self.path
    }

    /// Runs the command once and fills `sample` with every metric measured.
    pub fn run(&mut self, sample: &mut Sample) -> Result<Outcome> {
        let start = now();
        let (pid, counters) = if self.counters.is_some()
            || self.credentials.is_some()
            || self.nice.is_some()
        {
            self.fork_exec()?
        } else {
            if let Some((set, _)) = &self.cpus {
                // Inherited at clone time; restored right after.
                // SAFETY: set is a valid cpu_set_t.
                unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
            }
            let mut pid: libc::pid_t = 0;
            // SAFETY: all pointers are valid for the call and NULL-terminated.
            let rc = unsafe {
                libc::posix_spawn(
                    &mut pid,
                    self.path.as_ptr(),
                    &self.actions,
                    &self.attr,
                    self.argv_ptrs.as_ptr() as *const *mut libc::c_char,
                    self.envp_ptrs.as_ptr() as *const *mut libc::c_char,
                )
            };
            if let Some((_, own)) = &self.cpus {
                // SAFETY: own is the harness's affinity read at prepare time.
                unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), own) };
            }
            if rc != 0 {
                return Err(Error::Spawn {
                    command: self.path.to_string_lossy().into_owned(),
                    source: std::io::Error::from_raw_os_error(rc),
                });
            }
            (pid, None)
        };

        let io_fd = Fd(if self.proc_io { procio::open(pid) } else { -1 });
        let outcome = self.wait_exit(pid);
        let end = now();
        sample.set(Metric::WallTime, seconds_between(start, end));

        if self.proc_io {
            if let Some(io) = procio::read_fd(io_fd.0) {
                sample.set(Metric::IoReadBytes, io.read_bytes as f64);
                // Net of writes truncated away before reaching storage.
                sample.set(
                    Metric::IoWriteBytes,
                    io.write_bytes.saturating_sub(io.cancelled_write_bytes) as f64,
                );
                sample.set(Metric::IoReadChars, io.rchar as f64);
                sample.set(Metric::IoWriteChars, io.wchar as f64);
            }
        }
        if let Some(c) = &counters {
            c.read_into(sample);
        }

        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 on our own child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            if r == pid || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        drop(io_fd);
        self.drain_pipe();
        // Orphans adopted as subreaper are reaped now and then, not after
        // every run: a zombie costs nothing meanwhile, a syscall per run does.
        self.runs += 1;
        if self.runs % 64 == 0 {
            super::reap_orphans();
        }

        let user = timeval_seconds(ru.ru_utime);
        let sys = timeval_seconds(ru.ru_stime);
        sample.set(Metric::UserTime, user);
        sample.set(Metric::SystemTime, sys);
        sample.set(Metric::CpuTime, user + sys);
        sample.set(Metric::PeakRss, ru.ru_maxrss as f64 * 1024.0);
        sample.set(Metric::MinorFaults, ru.ru_minflt as f64);
        sample.set(Metric::MajorFaults, ru.ru_majflt as f64);
        sample.set(Metric::VoluntaryCtx, ru.ru_nvcsw as f64);
        sample.set(Metric::InvoluntaryCtx, ru.ru_nivcsw as f64);
        if libc::WIFEXITED(status) {
            sample.exit_code = Some(libc::WEXITSTATUS(status));
        } else if libc::WIFSIGNALED(status) {
            sample.signal = Some(libc::WTERMSIG(status));
        }
        sample.timed_out = outcome == Outcome::TimedOut;
        Ok(outcome)
    }

    /// fork + set up the child + exec, for what posix_spawn cannot do: open
    /// perf counters before exec (the parent opens them while the child
    /// waits on a pipe, as `perf stat` does), switch user, change niceness.
    /// Costs a fork instead of a vfork, so it is used only when needed.
    /// A failure in the child is reported through a CLOEXEC pipe: the
    /// parent reads EOF on a successful exec, or (step, errno).
    fn fork_exec(&self) -> Result<(libc::pid_t, Option<Counters>)> {
        let mut sync = [-1; 2];
        let mut errp = [-1; 2];
        // SAFETY: both arrays hold two ints.
        unsafe {
            if libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) != 0
                || libc::pipe2(errp.as_mut_ptr(), libc::O_CLOEXEC) != 0
            {
                let e = std::io::Error::last_os_error();
                for fd in sync.into_iter().chain(errp) {
                    if fd >= 0 {
                        libc::close(fd);
                    }
                }
                return Err(Error::Io(e));
            }
        }
        let (sync_r, sync_w, err_r, err_w) = (Fd(sync[0]), Fd(sync[1]), Fd(errp[0]), Fd(errp[1]));
        let creds = self.credentials.as_ref();
        // SAFETY: between fork and exec the child calls only async-signal-safe
        // functions and raw syscalls on data prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(Error::Spawn {
                command: self.path.to_string_lossy().into_owned(),
                source: std::io::Error::last_os_error(),
            });
        }
        if pid == 0 {
            unsafe {
                let fail = |step: u8| -> ! {
                    let errno = *libc::__errno_location();
                    let mut msg = [0u8; 5];
                    msg[0] = step;
                    msg[1..].copy_from_slice(&errno.to_ne_bytes());
                    libc::write(err_w.0, msg.as_ptr().cast(), 5);
                    libc::_exit(127);
                };
                libc::setpgid(0, 0);
                let mut mask: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut mask);
                libc::sigprocmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
                for sig in [
                    libc::SIGPIPE,
                    libc::SIGINT,
                    libc::SIGTERM,
                    libc::SIGQUIT,
                    libc::SIGCHLD,
                ] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                for (fd, target) in [(self.stdin.0, 0), (self.stdout.0, 1), (self.stderr.0, 2)] {
                    if fd >= 0 && libc::dup2(fd, target) < 0 {
                        fail(1);
                    }
                }
                if let Some(dir) = &self.cwd {
                    if libc::chdir(dir.as_ptr()) != 0 {
                        fail(2);
                    }
                }
                if let Some(n) = self.nice {
                    if libc::setpriority(libc::PRIO_PROCESS, 0, n) != 0 {
                        fail(3);
                    }
                }
                if let Some((set, _)) = &self.cpus {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0
                    {
                        fail(4);
                    }
                }
                if let Some(c) = creds {
                    // Raw syscalls: glibc's wrappers would try to change every
                    // thread of the parent, which this child does not have.
                    if libc::syscall(libc::SYS_setgroups, c.groups.len(), c.groups.as_ptr()) != 0 {
                        fail(5);
                    }
                    if libc::syscall(libc::SYS_setgid, c.gid) != 0 {
                        fail(6);
                    }
                    if libc::syscall(libc::SYS_setuid, c.uid) != 0 {
                        fail(7);
                    }
                }
                // Our copy of the write end must go, or EOF never comes.
                libc::close(sync_w.0);
                let mut b = 0u8;
                libc::read(sync_r.0, (&mut b as *mut u8).cast(), 1);
                libc::execve(
                    self.path.as_ptr(),
                    self.argv_ptrs.as_ptr(),
                    self.envp_ptrs.as_ptr(),
                );
                fail(8);
            }
        }
        // Also from the parent, so the group exists before we could kill it.
        unsafe { libc::setpgid(pid, pid) };
        let counters = self
            .counters
            .as_ref()
            .map(|avail| Counters::open(avail, pid));
        drop(sync_r);
        drop(sync_w); // EOF releases the child into exec
        drop(err_w);
        let mut msg = [0u8; 5];
        // SAFETY: msg is 5 bytes; the read returns 0 once exec closed the pipe.
        let n = unsafe { libc::read(err_r.0, msg.as_mut_ptr().cast(), 5) };
        if n == 5 {
            let mut status = 0;
            unsafe { libc::waitpid(pid, &mut status, 0) };
            let errno = i32::from_ne_bytes([msg[1], msg[2], msg[3], msg[4]]);
            let step = match msg[0] {
                1 => "redirecting output",
                2 => "changing to the working directory",
                3 => "setting the niceness (below 0 needs root)",
                4 => "pinning to --cpus",
                5..=7 => "switching user",
                _ => "exec",
            };
            return Err(Error::Spawn {
                command: self.path.to_string_lossy().into_owned(),
                source: std::io::Error::new(
                    std::io::Error::from_raw_os_error(errno).kind(),
                    format!("{step}: {}", std::io::Error::from_raw_os_error(errno)),
                ),
            });
        }
        Ok((pid, counters))
    }

    /// Waits until `pid` has exited, leaving it a zombie (WNOWAIT) so that its
    /// /proc entry can still be read.
    fn wait_exit(&mut self, pid: libc::pid_t) -> Outcome {
        if self.timeout.is_none() && self.pipe_read.0 < 0 {
            return wait_blocking(pid);
        }
        self.wait_polling(pid)
    }

    fn wait_polling(&mut self, pid: libc::pid_t) -> Outcome {
        let deadline = self.timeout.map(|t| Instant::now() + t);
        // SAFETY: pidfd_open on our own child.
        let pidfd = Fd(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32);
        loop {
            if signals::received().is_some() {
                tree::kill_all(pid);
                wait_blocking_uninterruptible(pid);
                return Outcome::Interrupted;
            }
            let wait_ms = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        tree::kill_all(pid);
                        wait_blocking_uninterruptible(pid);
                        return Outcome::TimedOut;
                    }
                    left.as_millis().clamp(1, 1000) as i32
                }
                None => 1000,
            };
            if pidfd.0 < 0 {
                // No pidfd (old kernel): poll the child's state every millisecond.
                if exited_nohang(pid) {
                    return Outcome::Finished;
                }
                self.drain_pipe();
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            let mut fds = [
                libc::pollfd {
                    fd: pidfd.0,
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
                if fds[0].revents != 0 && exited_nohang(pid) {
                    return Outcome::Finished;
                }
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

/// `waitid(WEXITED | WNOWAIT | extra)` on our child: leaves it a zombie so
/// its /proc entry stays readable. Returns the call's result and the pid
/// that was reported (0 when WNOHANG found nothing).
fn waitid_nowait(pid: libc::pid_t, extra: libc::c_int) -> (libc::c_int, libc::pid_t) {
    // SAFETY: siginfo is plain data; waitid on our own child.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT | extra,
        )
    };
    (r, if r == 0 { unsafe { info.si_pid() } } else { 0 })
}

fn exited_nohang(pid: libc::pid_t) -> bool {
    waitid_nowait(pid, libc::WNOHANG).1 == pid
}

/// Blocks until `pid` exits; Err(()) when a signal interrupted the wait
/// (EINTR: our handlers are installed without SA_RESTART).
fn waitid_exit(pid: libc::pid_t) -> std::result::Result<(), ()> {
    let (r, _) = waitid_nowait(pid, 0);
    if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
        return Err(());
    }
    Ok(())
}

fn wait_blocking(pid: libc::pid_t) -> Outcome {
    while waitid_exit(pid).is_err() {
        if signals::received().is_some() {
            tree::kill_all(pid);
            wait_blocking_uninterruptible(pid);
            return Outcome::Interrupted;
        }
    }
    Outcome::Finished
}

fn wait_blocking_uninterruptible(pid: libc::pid_t) {
    while waitid_exit(pid).is_err() {}
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new` and are destroyed once.
        unsafe {
            libc::posix_spawnattr_destroy(&mut self.attr);
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
        }
    }
}
