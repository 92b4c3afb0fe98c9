//! A fixture program with known behaviour, built by `cargo test` (examples
//! are built for tests) and run by the integration tests.
//!
//! fixture busy MS          spin for MS milliseconds of wall time
//! fixture sleep MS         sleep MS milliseconds
//! fixture alloc MIB        allocate and touch MIB MiB, then exit
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
//! fixture whoami           print "uid gid groups nice cpus" of this process
//! fixture where            print "tmpfs" or "disk" for the working directory, then its entries
//! fixture fork N           fork N children (libc::fork) that each _exit(0), waiting for each
//! fixture forkexec N       fork N children that each exec /bin/true, waiting for each
//! fixture vfork N          start N /bin/true with posix_spawn (vfork-style), waiting for each
//! fixture shell N          run `sh -c /bin/true` N times (std::process::Command)
//! fixture threads N        start N threads and join them
//! fixture writefile BYTES PATH  write BYTES to PATH (no fsync)

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

fn main() {
    match arg(1).as_str() {
        "busy" => spin(Duration::from_secs_f64(num(2) / 1e3)),
        "sleep" => std::thread::sleep(Duration::from_secs_f64(num(2) / 1e3)),
        "alloc" => {
            let bytes = (num(2) * 1024.0 * 1024.0) as usize;
            let mut v = vec![0u8; bytes];
            // Touch every page so it is resident.
            for i in (0..bytes).step_by(4096) {
                v[i] = 1;
            }
            std::hint::black_box(&v);
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
        "ushape" => {
            let (b, a, c) = (num(2), num(3), num(4));
            let d = if std::env::args().len() > 5 {
                num(5)
            } else {
                0.0
            };
            spin(Duration::from_secs_f64((a / b + c * b + d) / 1e6));
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
        "forkexec" => {
            let path = c"/bin/true";
            let argv = [path.as_ptr(), std::ptr::null()];
            for _ in 0..num(2) as usize {
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
        "vfork" => {
            extern "C" {
                static environ: *const *mut libc::c_char;
            }
            let path = c"/bin/true";
            let argv = [path.as_ptr() as *mut libc::c_char, std::ptr::null_mut()];
            for _ in 0..num(2) as usize {
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
        other => {
            eprintln!("fixture: unknown mode {other}");
            std::process::exit(64);
        }
    }
}
