//! Starting the spawner helper itself: the process made as `posix_spawn`
//! makes one (its program is `program`'s), and the session's cgroup.

use super::*;

/// Creates a cgroup v2 for this session under our own, when cgroup v2 is
/// mounted, writable for us, and has `cgroup.kill` (Linux 5.14). Off with
/// CMDSCOPE_NO_CGROUP=1 (the tests use it to check the fallback too).
pub(super) fn session_cgroup() -> Option<PathBuf> {
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

/// `CLOSE_RANGE_UNSHARE` (linux/close_range.h): close_range first gives
/// the caller a descriptor table of its own, copying only what it keeps.
const CLOSE_RANGE_UNSHARE: libc::c_uint = 1 << 1;

/// How many spawners may be starting at once: each holds one reserved
/// descriptor while it starts, and a start that waited for the one before
/// it would make starts from several threads waits in a row.
const STARTING_AT_ONCE: usize = 8;

/// The descriptors the child of [`spawn_helper`] gets its socket from:
/// low numbers reserved for the sockets of the spawners starting now
/// (`/dev/null` otherwise), and `/dev/null` to put back there after.
struct Reserved {
    free: std::sync::Mutex<Vec<i32>>,
    freed: std::sync::Condvar,
    null: i32,
    /// The highest of them: the child keeps every descriptor below it.
    highest: i32,
}

impl Reserved {
    /// One of the reserved numbers, waiting for one while all are in use.
    fn take(&self) -> i32 {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(fd) = free.pop() {
                return fd;
            }
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn give_back(&self, fd: i32) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.push(fd);
        self.freed.notify_one();
    }
}

/// The reserved descriptors, opened by the first spawner's start (while
/// cmdscope has few descriptors open, so their numbers are low).
fn reserved() -> std::io::Result<&'static Reserved> {
    static RESERVED: std::sync::OnceLock<Reserved> = std::sync::OnceLock::new();
    static OPENING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if let Some(r) = RESERVED.get() {
        return Ok(r);
    }
    let _one = OPENING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = RESERVED.get() {
        return Ok(r);
    }
    let null = || -> std::io::Result<i32> {
        // SAFETY: open of a constant path; the copy above 10 is kept for
        // good, the original closed.
        unsafe {
            let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Above 3, where the socket goes in the spawner.
            let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
            let error = std::io::Error::last_os_error();
            libc::close(fd);
            if high < 0 {
                return Err(error);
            }
            Ok(high)
        }
    };
    let sockets = (0..STARTING_AT_ONCE)
        .map(|_| null())
        .collect::<std::io::Result<Vec<i32>>>()?;
    let null = null()?;
    let highest = sockets.iter().copied().fold(null, i32::max);
    Ok(RESERVED.get_or_init(|| Reserved {
        free: std::sync::Mutex::new(sockets),
        freed: std::sync::Condvar::new(),
        null,
        highest,
    }))
}

/// What the child of [`spawn_helper`] needs, in memory it shares with us.
struct Launch {
    path: *const libc::c_char,
    argv: *const *mut libc::c_char,
    envp: *const *mut libc::c_char,
    /// The reserved descriptor holding the socket, made its descriptor 3.
    socket: i32,
    /// Every descriptor from this one up is left out of its table.
    keep_below: libc::c_uint,
    mask: libc::sigset_t,
    /// The errno of the step that failed; 0 when it reached its exec.
    errno: std::sync::atomic::AtomicI32,
}

/// The child's side: it runs on its own stack in our memory, with our
/// descriptor table until its first step, and makes only system calls.
extern "C" fn launch(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Launch` that spawn_helper keeps alive until
    // this child has exec'd or exited (CLONE_VFORK). Every call below is a
    // plain system call on values it holds.
    unsafe {
        let l = &*(arg as *const Launch);
        let fail = || -> ! {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            l.errno.store(errno, std::sync::atomic::Ordering::SeqCst);
            libc::_exit(127)
        };
        // A table of its own holding only the low descriptors: copying,
        // then closing at exec, every slot's socket (thousands with
        // --concurrency) made each start cost in proportion to the slots
        // already started. Kernels before 5.9 copy the whole table.
        let unshared = libc::syscall(
            libc::SYS_close_range,
            l.keep_below,
            libc::c_uint::MAX,
            CLOSE_RANGE_UNSHARE,
        ) == 0
            || libc::syscall(libc::SYS_unshare, libc::CLONE_FILES) == 0;
        if !unshared || libc::dup2(l.socket, 3) < 0 {
            fail();
        }
        // No handler of ours may run here: each handled signal goes back to
        // its default (exec would reset it anyway), ignored ones stay
        // ignored, as posix_spawn leaves them. Read and written with the
        // kernel's own call: glibc refuses its internal signals 32 and 33.
        for sig in 1..=64usize {
            if sig == libc::SIGKILL as usize || sig == libc::SIGSTOP as usize {
                continue;
            }
            let mut old = [0usize; 4];
            let read = libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                std::ptr::null::<usize>(),
                old.as_mut_ptr(),
                8usize,
            );
            if read == 0 && old[0] != libc::SIG_IGN && old[0] != libc::SIG_DFL {
                let default = [libc::SIG_DFL, 0, 0, 0];
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    default.as_ptr(),
                    std::ptr::null_mut::<usize>(),
                    8usize,
                );
            }
        }
        if libc::setpgid(0, 0) != 0 {
            fail();
        }
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &l.mask as *const libc::sigset_t,
            std::ptr::null_mut::<libc::sigset_t>(),
            8usize,
        );
        libc::execve(l.path, l.argv.cast(), l.envp.cast());
        fail()
    }
}

/// Starts `path` with `args` and `envp`: `socket` becomes its descriptor
/// 3, it gets a process group of its own (a terminal's Ctrl-C goes to
/// cmdscope, which stops the command and still needs the spawner's report
/// of the run) and cmdscope's signal mask as cmdscope was started (std
/// resets the mask of the processes it starts: the commands must get
/// ours). The spawner asks for its parent-death signal itself.
///
/// Made as `posix_spawn` makes a process (`clone` with `CLONE_VM |
/// CLONE_VFORK`, handlers reset in the child), but sharing our descriptor
/// table until the child takes a copy of only its low part (`close_range`
/// with `CLOSE_RANGE_UNSHARE`), so that starting the N-th slot of
/// `--concurrency` does not copy and close the sockets of the slots
/// before it. `program` (the file `path` names) and the reserved
/// socket number are low: the first start opened them.
pub(super) fn spawn_helper(
    path: &CStr,
    args: &[CString],
    envp: &[CString],
    socket: i32,
    program: i32,
) -> std::io::Result<libc::pid_t> {
    let mut argv: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let mut env: Vec<*mut libc::c_char> = envp.iter().map(|e| e.as_ptr().cast_mut()).collect();
    env.push(std::ptr::null_mut());
    let reserved = reserved()?;
    let slot = reserved.take();
    let started = start_child(path, &argv, &env, socket, program, reserved, slot);
    reserved.give_back(slot);
    started
}

/// [`spawn_helper`]'s start of the child, its socket put at the reserved
/// number `slot` meanwhile.
fn start_child(
    path: &CStr,
    argv: &[*mut libc::c_char],
    env: &[*mut libc::c_char],
    socket: i32,
    program: i32,
    reserved: &Reserved,
    slot: i32,
) -> std::io::Result<libc::pid_t> {
    // The child's stack until its exec.
    let mut stack = vec![0u8; 64 * 1024];
    // SAFETY: every pointer handed to the child (strings, arrays, the
    // Launch, the stack) outlives it: CLONE_VFORK suspends this thread
    // until the child has exec'd or exited. Signals are blocked around
    // the clone so that no handler of ours runs on the child's stack
    // before it resets them.
    unsafe {
        if libc::dup3(socket, slot, libc::O_CLOEXEC) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut mask: libc::sigset_t = std::mem::zeroed();
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut mask);
        let keep_below = reserved.highest.max(program).max(3) + 1;
        let launch_args = Launch {
            path: path.as_ptr(),
            argv: argv.as_ptr(),
            envp: env.as_ptr(),
            socket: slot,
            keep_below: keep_below as libc::c_uint,
            mask,
            errno: std::sync::atomic::AtomicI32::new(0),
        };
        let end = stack.as_mut_ptr().add(stack.len());
        let top = end.sub(end as usize % 16);
        let pid = libc::clone(
            launch,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD,
            (&launch_args as *const Launch).cast_mut().cast(),
        );
        let clone_error = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
        // The socket's copy at the reserved number goes: the child has its own.
        libc::dup3(reserved.null, slot, libc::O_CLOEXEC);
        if pid < 0 {
            return Err(clone_error);
        }
        let errno = launch_args.errno.load(std::sync::atomic::Ordering::SeqCst);
        if errno != 0 {
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            return Err(std::io::Error::from_raw_os_error(errno));
        }
        Ok(pid)
    }
}

/// Removes the session cgroups beside ours whose cmdscope is gone: the
/// spawner removes its session's when cmdscope is killed, but a spawner
/// killed with it cannot. What is still in one is killed first (its
/// session is over).
pub(super) fn remove_orphaned_cgroups(parent: &Path) {
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
