//! A command forked and held before its exec, for the front ends that must
//! attach to it first: `explain`'s tracer seizes it with ptrace, the
//! profiler opens its perf events on it. The child waits on a pipe; the
//! caller attaches, then releases it (it execs) or abandons it (killed and
//! reaped). `run`'s commands go through the spawner instead, which applies
//! the same conditions (`spawner.c`); this is the one copy in Rust. What a
//! held command leaves running comes back to cmdscope, its subreaper, and
//! its caller kills it after the run (`tree::kill_leftovers`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::error::{Error, ExecError, Result};
use crate::exec::Credentials;

/// What to run and under which conditions.
#[derive(Clone, Debug, Default)]
pub struct HeldCommand {
    pub program: PathBuf,
    pub argv: Vec<Vec<u8>>,
    /// `KEY=VALUE` strings.
    pub envp: Vec<CString>,
    pub cwd: Option<PathBuf>,
    /// CPUs to pin the command to.
    pub cpus: Option<Vec<usize>>,
    pub nice: Option<i32>,
    pub credentials: Option<Credentials>,
    /// Output goes to the terminal instead of /dev/null.
    pub show_output: bool,
    /// A stdin that is not a terminal (a pipe, a file) is passed on; a
    /// terminal is always replaced by /dev/null (the command runs in its
    /// own process group, where reading one would stop it with SIGTTIN).
    pub keep_stdin: bool,
}

impl HeldCommand {
    /// The command as error messages name it: its first argument.
    pub fn shown(&self) -> String {
        self.argv
            .first()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .unwrap_or_default()
    }
}

/// A forked child waiting for its release. Dropped without [`Held::release`],
/// it is killed and reaped.
pub struct Held {
    pid: libc::pid_t,
    release: libc::c_int,
}

fn cstring(bytes: &[u8], what: &str) -> Result<CString> {
    CString::new(bytes).map_err(|_| ExecError::NulByte { what: what.into() }.into())
}

/// Forks the child. It puts itself in a process group of its own, restores
/// the default signal mask and SIGPIPE, redirects its standard streams, and
/// waits; once released it applies the working directory, affinity, nice
/// value and credentials, and execs. A failure there is exit 127, like a
/// failed exec.
pub fn fork(cmd: &HeldCommand) -> Result<Held> {
    // What it leaves running (a daemon that left its group and session)
    // comes back to cmdscope, to be killed after the run
    // (`tree::kill_leftovers`), as `run`'s runs' leftovers are.
    super::become_subreaper();
    let path = cstring(cmd.program.as_os_str().as_bytes(), "program path")?;
    let argv: Vec<CString> = cmd
        .argv
        .iter()
        .map(|a| cstring(a, "an argument"))
        .collect::<Result<_>>()?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut envp_ptrs: Vec<*const libc::c_char> = cmd.envp.iter().map(|e| e.as_ptr()).collect();
    envp_ptrs.push(std::ptr::null());
    let cwd = cmd
        .cwd
        .as_ref()
        .map(|c| cstring(c.as_os_str().as_bytes(), "--workdir"))
        .transpose()?;
    let cpu_set = cmd.cpus.as_ref().map(|list| {
        // SAFETY: cpu_set_t is plain data; CPU_SET indexes within it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in list {
                libc::CPU_SET(c, &mut set);
            }
            set
        }
    });
    let credentials = cmd.credentials.clone();
    let nice = cmd.nice;

    let mut pipe = [-1i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::Io(std::io::Error::last_os_error()));
    }
    let [release_read, release_write] = pipe;
    // SAFETY: isatty on a descriptor number has no preconditions.
    let null_stdin = !cmd.keep_stdin || unsafe { libc::isatty(0) } == 1;
    let show_output = cmd.show_output;
    let null_fd = if show_output && !null_stdin {
        -1
    } else {
        // SAFETY: a NUL-terminated constant path.
        unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) }
    };

    // SAFETY: the child only calls async-signal-safe functions (setpgid,
    // sigprocmask, signal, dup2, close, read, chdir, sched_setaffinity,
    // setpriority, setgroups, setgid, setuid, execve, _exit) on memory
    // prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let source = std::io::Error::last_os_error();
        // SAFETY: closing descriptors we own.
        unsafe {
            libc::close(release_read);
            libc::close(release_write);
            if null_fd >= 0 {
                libc::close(null_fd);
            }
        }
        return Err(Error::Spawn {
            command: cmd.shown(),
            source,
        });
    }
    if pid == 0 {
        // SAFETY: see above; nothing here allocates or takes locks.
        unsafe {
            libc::setpgid(0, 0);
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            if null_fd >= 0 {
                if null_stdin {
                    libc::dup2(null_fd, 0);
                }
                if !show_output {
                    libc::dup2(null_fd, 1);
                    libc::dup2(null_fd, 2);
                }
            }
            libc::close(release_write);
            let mut go = 0u8;
            loop {
                let n = libc::read(release_read, (&mut go as *mut u8).cast(), 1);
                if n == 1 {
                    break;
                }
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                libc::_exit(127);
            }
            if let Some(dir) = &cwd {
                if libc::chdir(dir.as_ptr()) != 0 {
                    libc::_exit(127);
                }
            }
            if let Some(set) = &cpu_set {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    libc::_exit(127);
                }
            }
            if let Some(n) = nice {
                if libc::setpriority(libc::PRIO_PROCESS, 0, n) != 0 {
                    libc::_exit(127);
                }
            }
            if let Some(c) = &credentials {
                if libc::setgroups(c.groups.len(), c.groups.as_ptr()) != 0
                    || libc::setgid(c.gid) != 0
                    || libc::setuid(c.uid) != 0
                {
                    libc::_exit(127);
                }
            }
            libc::execve(path.as_ptr(), argv_ptrs.as_ptr(), envp_ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    // SAFETY: descriptors we own; setpgid on our fresh child (it does the
    // same; whichever runs first wins, both want the same group).
    unsafe {
        libc::close(release_read);
        if null_fd >= 0 {
            libc::close(null_fd);
        }
        libc::setpgid(pid, pid);
    }
    Ok(Held {
        pid,
        release: release_write,
    })
}

impl Held {
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Lets the child exec. If the byte cannot be written, the child is
    /// killed and reaped and the error returned.
    pub fn release(mut self) -> std::io::Result<()> {
        let go = 1u8;
        // SAFETY: writing one byte from a local to our pipe, then closing it.
        let wrote = unsafe { libc::write(self.release, (&go as *const u8).cast(), 1) };
        let error = std::io::Error::last_os_error();
        // SAFETY: closed once; Drop sees -1 and leaves the child alone.
        unsafe { libc::close(self.release) };
        self.release = -1;
        if wrote != 1 {
            self.kill();
            return Err(error);
        }
        Ok(())
    }

    fn kill(&mut self) {
        // SAFETY: our own child and its group (it has not exec'd, so the
        // group is itself), killed and reaped; __WALL also reaps it when
        // it is ptraced.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, libc::__WALL);
        }
        self.pid = -1;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.release >= 0 {
            // SAFETY: closed once.
            unsafe { libc::close(self.release) };
            self.release = -1;
            if self.pid > 0 {
                self.kill();
            }
        }
    }
}
