//! Starting the spawner helper itself: its program (embedded, written to a
//! memfd once), the process made with `posix_spawn`, and the session's
//! cgroup.

use super::*;

/// The spawner helper built from spawner.c by build.rs.
pub(super) static SPAWNER_ELF: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/cmdscope-spawner"));

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

/// The spawner's program in a memory file, written once per process (a
/// spawner is started per session, and per instance slot in concurrency
/// mode): its descriptor, close-on-exec, above 3 (where the spawner's
/// socket goes), executed as `/proc/self/fd/<n>`.
pub(super) fn spawner_program() -> std::io::Result<i32> {
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
pub(super) fn spawn_helper(
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
pub(super) fn internal_signals_default() -> libc::sigset_t {
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
