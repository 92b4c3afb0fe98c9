//! A fixture program with known behaviour, built by `cargo test` (examples
//! are built for tests) and run by the integration tests.
//!
//! fixture busy MS          spin for MS milliseconds of wall time
//! fixture sleep MS         sleep MS milliseconds
//! fixture work M           M million steps of CPU work (slower when sharing a CPU)
//! fixture alloc MIB        allocate and touch MIB MiB, then exit
//! fixture alloc-sleep MIB MS  alloc MIB, then sleep MS milliseconds: a
//!                          sleeper whose minor faults are its allocation's
//!                          (a bare sleeper's 80 move by 2 with the machine's
//!                          state, 2.5 %, past those counts' 1 % floor)
//! fixture write BYTES PATH write BYTES to PATH and fsync
//! fixture children N MS    start N children that sleep MS ms, wait for them
//! fixture background TOKEN start a child that leaves the process group and
//!                          a grandchild that is orphaned, all sleeping 60 s
//!                          with TOKEN in their arguments; then sleep 60 s
//! fixture spew BYTES       write BYTES to stdout
//! fixture closeout MS      close stdout, then spin MS ms
//! fixture exit CODE        exit with CODE
//! fixture env NAME         exit 0 if NAME is set, 3 otherwise; print the count of variables
//! fixture ushape B A C [D] spin A/B + C*B (+ D) microseconds (optimum at
//!                          sqrt(A/C); a large D makes the bottom flat)
//! fixture ushape-sleep B A C [D]  the same cost slept, not spun: its wall
//!                          time hardly depends on the CPU share the process
//!                          gets, so tests of the search hold on a busy machine
//! fixture whoami           print "uid gid groups nice cpus" of this process
//! fixture where            print "tmpfs" or "disk" for the working directory, then its entries
//! fixture fork N           fork N children (libc::fork) that each _exit(0), waiting for each
//! fixture forkexec N       fork N children that each exec /bin/true, waiting for each
//! fixture vfork N          start N /bin/true with posix_spawn (vfork-style), waiting for each
//! fixture spawn N          forkexec N when FIXTURE_SPAWN=fork (or =uid and running
//!                          as root, like Ruby), else vfork N
//! fixture shell N          run `sh -c /bin/true` N times (std::process::Command)
//! fixture threads N        start N threads and join them
//! fixture writefile BYTES PATH  write BYTES to PATH (no fsync)
//! fixture hygiene          print how the process started, before Rust's
//!                          runtime changed anything: the SigBlk, SigIgn and
//!                          SigCgt lines of /proc/self/status and "fds: 0 1 2"
//! fixture hashin LOG       read stdin to its end, append "<bytes> <fnv1a-64 hex>" to LOG
//! fixture log LOG TEXT     append TEXT as a line to LOG (records the order things ran in)
//! fixture parent LOG       append the parent process's command name (comm) to LOG
//! fixture steps STATE MS,MS,...  sleep for the k-th listed MS on the k-th call
//!                          (k counted in the file STATE, cycling): injected
//!                          drift, fast starts and outliers

use std::io::Write;
use std::time::{Duration, Instant};

fn arg(i: usize) -> String {
    std::env::args().nth(i).unwrap_or_else(|| {
        eprintln!("fixture: missing argument {i}");
        std::process::exit(64)
    })
}

fn num(i: usize) -> f64 {
    arg(i).parse().unwrap_or_else(|_| {
        eprintln!("fixture: argument {i} is not a number");
        std::process::exit(64)
    })
}

fn spin(d: Duration) {
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < d {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        std::hint::black_box(x);
    }
}

/// What /proc/self/status and /proc/self/fd said before Rust's runtime
/// started (it ignores SIGPIPE and catches SIGSEGV/SIGBUS in `main`'s
/// prologue): captured by a constructor, which runs before it.
static mut AT_START: [u8; 4096] = [0; 4096];
static mut AT_START_LEN: usize = 0;

extern "C" fn capture_at_start() {
    // SAFETY: runs once, single-threaded, before main; raw libc calls only,
    // writing into the statics above.
    unsafe {
        let buf = &mut *std::ptr::addr_of_mut!(AT_START);
        let mut len = 0;
        let mut status = [0u8; 4096];
        let fd = libc::open(
            c"/proc/self/status".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        let n = libc::read(fd, status.as_mut_ptr().cast(), status.len());
        libc::close(fd);
        for line in status[..n.max(0) as usize].split(|&b| b == b'\n') {
            if line.starts_with(b"SigBlk:")
                || line.starts_with(b"SigIgn:")
                || line.starts_with(b"SigCgt:")
            {
                buf[len..len + line.len()].copy_from_slice(line);
                len += line.len();
                buf[len] = b'\n';
                len += 1;
            }
        }
        buf[len..len + 4].copy_from_slice(b"fds:");
        len += 4;
        // Probing descriptors with fcntl opens none of its own.
        for fd in 0..1024 {
            if libc::fcntl(fd, libc::F_GETFD) >= 0 {
                let text = format_args!(" {fd}").to_string();
                buf[len..len + text.len()].copy_from_slice(text.as_bytes());
                len += text.len();
            }
        }
        buf[len] = b'\n';
        AT_START_LEN = len + 1;
    }
}

#[used]
#[link_section = ".init_array"]
static CAPTURE_AT_START: extern "C" fn() = capture_at_start;

/// Allocates `mib` MiB and touches every page, so it is resident.
fn alloc(mib: f64) {
    let bytes = (mib * 1024.0 * 1024.0) as usize;
    let mut v = vec![0u8; bytes];
    for i in (0..bytes).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(&v);
}

/// Appends one line; O_APPEND so concurrent writers never interleave within a line.
fn append(path: &str, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open log");
    writeln!(f, "{line}").expect("append");
}

fn main() {
    let mode = arg(1);
    match mode.as_str() {
        "hygiene" => {
            // SAFETY: written once before main, only read from here on.
            let text = unsafe {
                let buf = &*std::ptr::addr_of!(AT_START);
                &buf[..AT_START_LEN]
            };
            std::io::stdout().write_all(text).expect("stdout");
        }
        "busy" => spin(Duration::from_secs_f64(num(2) / 1e3)),
        "sleep" => std::thread::sleep(Duration::from_secs_f64(num(2) / 1e3)),
        // A fixed amount of CPU work (N million steps), not a wall-clock
        // spin: it takes longer when it shares a CPU, as real work does.
        "work" => {
            let mut x = 1u64;
            for _ in 0..(num(2) * 1e6) as u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            std::hint::black_box(x);
        }
        "alloc" => alloc(num(2)),
        "alloc-sleep" => {
            alloc(num(2));
            std::thread::sleep(Duration::from_secs_f64(num(3) / 1e3));
        }
        "write" => {
            let bytes = num(2) as usize;
            let mut f = std::fs::File::create(arg(3)).expect("create");
            let chunk = vec![7u8; 1 << 16];
            let mut left = bytes;
            while left > 0 {
                let n = left.min(chunk.len());
                f.write_all(&chunk[..n]).expect("write");
                left -= n;
            }
            f.sync_all().expect("fsync");
        }
        "children" => {
            let exe = std::env::current_exe().expect("exe");
            let kids: Vec<_> = (0..num(2) as usize)
                .map(|_| {
                    std::process::Command::new(&exe)
                        .args(["sleep", &arg(3)])
                        .spawn()
                        .expect("spawn")
                })
                .collect();
            for mut k in kids {
                k.wait().expect("wait");
            }
        }
        "background" => {
            let token = arg(2);
            let exe = std::env::current_exe().expect("exe");
            // A child in its own session: escapes the process group.
            unsafe {
                if libc::fork() == 0 {
                    libc::setsid();
                    let e = std::process::Command::new(&exe)
                        .args(["sleep", "60000", &token])
                        .spawn();
                    let _ = e.map(|mut c| c.wait());
                    libc::_exit(0);
                }
                // An orphan: its parent exits at once.
                if libc::fork() == 0 {
                    let _ = std::process::Command::new(&exe)
                        .args(["sleep", "60000", &token])
                        .spawn();
                    libc::_exit(0);
                }
            }
            std::thread::sleep(Duration::from_secs(60));
        }
        "spew" => {
            let total = num(2) as u64;
            let chunk = vec![b'x'; 1 << 16];
            let mut out = std::io::stdout().lock();
            let mut sent = 0u64;
            while sent < total {
                let n = (total - sent).min(chunk.len() as u64) as usize;
                if out.write_all(&chunk[..n]).is_err() {
                    std::process::exit(1);
                }
                sent += n as u64;
            }
        }
        "closeout" => {
            unsafe { libc::close(1) };
            spin(Duration::from_secs_f64(num(2) / 1e3));
        }
        "exit" => std::process::exit(num(2) as i32),
        "env" => {
            println!("{}", std::env::vars_os().count());
            if std::env::var_os(arg(2)).is_none() {
                std::process::exit(3);
            }
        }
        "ushape" | "ushape-sleep" => {
            let (b, a, c) = (num(2), num(3), num(4));
            let d = if std::env::args().len() > 5 {
                num(5)
            } else {
                0.0
            };
            let cost = Duration::from_secs_f64((a / b + c * b + d) / 1e6);
            if mode == "ushape" {
                spin(cost);
            } else {
                std::thread::sleep(cost);
            }
        }
        "whoami" => unsafe {
            let mut groups = [0 as libc::gid_t; 64];
            let n = libc::getgroups(64, groups.as_mut_ptr()).max(0) as usize;
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            let cpus: Vec<String> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .map(|c| c.to_string())
                .collect();
            println!(
                "{} {} {} {} {}",
                libc::getuid(),
                libc::getgid(),
                if n == 0 {
                    "-".to_string()
                } else {
                    groups[..n]
                        .iter()
                        .map(|g| g.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                },
                libc::getpriority(libc::PRIO_PROCESS, 0),
                cpus.join(",")
            );
        },
        "where" => unsafe {
            let mut st: libc::statfs = std::mem::zeroed();
            libc::statfs(c".".as_ptr(), &mut st);
            let kind = if st.f_type as i64 == 0x0102_1994 {
                "tmpfs"
            } else {
                "disk"
            };
            let mut names: Vec<String> = std::fs::read_dir(".")
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            println!(
                "{kind} {} {}",
                std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
                names.join(",")
            );
            // Leave something behind: the next run must not see it.
            let _ = std::fs::write("left-behind", "x");
        },
        "fork" => {
            for _ in 0..num(2) as usize {
                // SAFETY: the child only calls _exit.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe { libc::_exit(0) };
                }
                assert!(pid > 0, "fork failed");
                let mut status = 0;
                // SAFETY: waiting for our own child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
        }
        "forkexec" => fork_exec_true(num(2) as usize),
        "vfork" => spawn_true(num(2) as usize),
        "spawn" => {
            // Like Ruby picks fork or vfork by uid: the method comes from
            // the environment, so variants of one command differ in it.
            let how = std::env::var("FIXTURE_SPAWN").unwrap_or_default();
            // SAFETY: getuid has no preconditions.
            let root = unsafe { libc::getuid() } == 0;
            if how == "fork" || (how == "uid" && root) {
                fork_exec_true(num(2) as usize)
            } else {
                spawn_true(num(2) as usize)
            }
        }
        "shell" => {
            for _ in 0..num(2) as usize {
                std::process::Command::new("sh")
                    .arg("-c")
                    .arg("/bin/true")
                    .status()
                    .expect("sh -c /bin/true");
            }
        }
        "threads" => {
            let handles: Vec<_> = (0..num(2) as usize)
                .map(|i| std::thread::spawn(move || std::hint::black_box(i)))
                .collect();
            for h in handles {
                h.join().expect("join");
            }
        }
        "writefile" => {
            let mut f = std::fs::File::create(arg(3)).expect("create");
            let chunk = vec![7u8; 1 << 16];
            let mut left = num(2) as usize;
            while left > 0 {
                let n = left.min(chunk.len());
                f.write_all(&chunk[..n]).expect("write");
                left -= n;
            }
        }
        "hashin" => {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut data).expect("read stdin");
            let hash = data.iter().fold(0xcbf29ce484222325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
            });
            append(&arg(2), &format!("{} {hash:016x}", data.len()));
        }
        "log" => append(&arg(2), &arg(3)),
        "steps" => {
            let state = arg(2);
            let k: usize = std::fs::read_to_string(&state)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0);
            std::fs::write(&state, (k + 1).to_string()).expect("write state");
            let steps: Vec<f64> = arg(3)
                .split(',')
                .map(|v| v.parse().expect("steps: milliseconds"))
                .collect();
            // Sleeps, so that the injected pattern survives a loaded CPU.
            std::thread::sleep(Duration::from_secs_f64(steps[k % steps.len()] / 1e3));
        }
        "parent" => {
            let ppid = std::os::unix::process::parent_id();
            let comm = std::fs::read_to_string(format!("/proc/{ppid}/comm")).expect("read comm");
            append(&arg(2), comm.trim());
        }
        other => {
            eprintln!("fixture: unknown mode {other}");
            std::process::exit(64);
        }
    }
}

/// Forks `n` children that each exec /bin/true, waiting for each.
fn fork_exec_true(n: usize) {
    let path = c"/bin/true";
    let argv = [path.as_ptr(), std::ptr::null()];
    for _ in 0..n {
        // SAFETY: the child only calls execv and _exit on memory
        // prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                libc::execv(path.as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        assert!(pid > 0, "fork failed");
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}

/// Starts `n` /bin/true with posix_spawn (vfork-style), waiting for each.
fn spawn_true(n: usize) {
    extern "C" {
        static environ: *const *mut libc::c_char;
    }
    let path = c"/bin/true";
    let argv = [path.as_ptr() as *mut libc::c_char, std::ptr::null_mut()];
    for _ in 0..n {
        let mut pid = 0;
        // SAFETY: valid path, NULL-terminated argv, the process environment.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                argv.as_ptr(),
                environ,
            )
        };
        assert_eq!(rc, 0, "posix_spawn failed");
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}
