//! Is this machine fit to measure on? The checks made before every session
//! (stored with it as `session.preflight`) and by `cmdscope doctor`.
//!
//! Each check is a pure function of the text of /proc and /sys files, so it
//! is tested from fixture strings; [`collect`] reads the files. A file that
//! cannot be read makes a check `unknown`, never a guess. Checks that look
//! for activity (load, busy processes, stolen time, swapping, throttling)
//! compare two readings taken a short interval apart.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
}

fn check(name: &str, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
    }
}

/// "0-3,6" for a sorted list of CPUs.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Parses a kernel CPU list ("0-3,6\n"), the format --cpus takes too.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    crate::run::plan::parse_cpus(text.trim()).ok()
}

/// `scaling_governor` of each CPU used (None: not readable).
pub fn governor(cpus: &[usize], governors: &[Option<String>]) -> Check {
    let known: Vec<(usize, &str)> = cpus
        .iter()
        .zip(governors)
        .filter_map(|(&c, g)| g.as_deref().map(|g| (c, g.trim())))
        .collect();
    if known.is_empty() {
        return check(
            "governor",
            Status::Unknown,
            "no CPU frequency scaling exposed (cpufreq absent, e.g. a virtual machine)",
        );
    }
    // "performance" runs at the highest frequency; "userspace" at a fixed one.
    let drifting: Vec<&(usize, &str)> = known
        .iter()
        .filter(|(_, g)| *g != "performance" && *g != "userspace")
        .collect();
    if let Some((_, g)) = drifting.first() {
        let which: Vec<usize> = drifting.iter().map(|(c, _)| *c).collect();
        return check(
            "governor",
            Status::Warn,
            format!(
                "governor is {g} on CPU {}: the frequency follows the load and results will drift; \
                 `cmdscope doctor --fix` can set performance",
                cpu_list(&which)
            ),
        );
    }
    check(
        "governor",
        Status::Ok,
        format!(
            "{} on CPU {}",
            known[0].1,
            cpu_list(&cpus[..known.len().min(cpus.len())])
        ),
    )
}

/// Turbo/boost: intel_pstate's `no_turbo` or cpufreq's `boost`.
pub fn turbo(no_turbo: Option<&str>, boost: Option<&str>) -> Check {
    let on = match (no_turbo.map(str::trim), boost.map(str::trim)) {
        (Some("1"), _) => false,
        (Some("0"), _) => true,
        (_, Some("0")) => false,
        (_, Some("1")) => true,
        _ => {
            return check(
                "turbo",
                Status::Unknown,
                "no turbo/boost control exposed (intel_pstate/no_turbo, cpufreq/boost)",
            )
        }
    };
    if on {
        check(
            "turbo",
            Status::Warn,
            "turbo boost is on: the first runs (and cool phases) run faster than the rest; \
             `cmdscope doctor --fix` can turn it off",
        )
    } else {
        check("turbo", Status::Ok, "turbo boost is off")
    }
}

/// The 1-minute load average against the CPUs available.
pub fn load(loadavg: Option<&str>, cpus: usize) -> Check {
    let Some(l1) = loadavg
        .and_then(|t| t.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
    else {
        return check("load", Status::Unknown, "/proc/loadavg not readable");
    };
    let limit = (0.5 * cpus as f64).max(1.0);
    if l1 >= limit {
        check(
            "load",
            Status::Warn,
            format!(
                "load average {l1:.2} on {cpus} CPUs: other work competes for the CPUs and adds noise"
            ),
        )
    } else {
        check(
            "load",
            Status::Ok,
            format!("load average {l1:.2} on {cpus} CPUs"),
        )
    }
}

/// CPU time of one process: from /proc/<pid>/schedstat (nanoseconds) when
/// the kernel has it, else /proc/<pid>/stat (clock ticks).
#[derive(Clone, Debug, PartialEq)]
pub struct ProcTicks {
    pub pid: i32,
    pub name: String,
    /// Nanoseconds on a CPU.
    pub ns: u64,
}

/// Parses /proc/<pid>/stat (pid, command name, utime + stime in ticks of
/// 1/`hz` s) and, if given, /proc/<pid>/schedstat (its first field: exact
/// nanoseconds on a CPU, which a short sampling interval needs).
pub fn proc_ticks(stat: &str, schedstat: Option<&str>, hz: f64) -> Option<ProcTicks> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let pid = stat[..open].trim().parse().ok()?;
    let name = stat[open + 1..close].to_string();
    // After ")": state is field 3; utime and stime are fields 14 and 15.
    let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    let ns = match schedstat.and_then(|s| s.split_whitespace().next()?.parse().ok()) {
        Some(ns) => ns,
        None => ((utime + stime) as f64 * 1e9 / hz) as u64,
    };
    Some(ProcTicks { pid, name, ns })
}

/// Other processes that used at least a fifth of a CPU between two
/// readings `seconds` apart, except `exclude`.
pub fn busy_processes(
    before: &[ProcTicks],
    after: &[ProcTicks],
    seconds: f64,
    exclude: &[i32],
) -> Check {
    if after.is_empty() || seconds <= 0.0 {
        return check("busy_processes", Status::Unknown, "/proc not readable");
    }
    let mut busy: Vec<(f64, &ProcTicks)> = after
        .iter()
        .filter(|p| !exclude.contains(&p.pid))
        .filter_map(|p| {
            let b = before.iter().find(|b| b.pid == p.pid && b.name == p.name)?;
            let share = p.ns.saturating_sub(b.ns) as f64 * 1e-9 / seconds;
            (share >= 0.2).then_some((share, p))
        })
        .collect();
    if busy.is_empty() {
        return check(
            "busy_processes",
            Status::Ok,
            format!(
                "no other process used 20 % of a CPU over {:.0} ms",
                seconds * 1e3
            ),
        );
    }
    busy.sort_by(|a, b| b.0.total_cmp(&a.0));
    let list: Vec<String> = busy
        .iter()
        .take(5)
        .map(|(s, p)| format!("{} (pid {}) {:.0} %", p.name, p.pid, s * 100.0))
        .collect();
    check(
        "busy_processes",
        Status::Warn,
        format!(
            "busy processes compete for the CPUs over {:.0} ms: {}{}",
            seconds * 1e3,
            list.join(", "),
            if busy.len() > 5 { ", ..." } else { "" }
        ),
    )
}

/// The aggregate "cpu" line of /proc/stat: (total ticks, steal ticks), the
/// steal column being absent on old kernels.
fn cpu_ticks(stat: &str) -> Option<(u64, Option<u64>)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is
    // already in user/nice).
    let total = v.iter().take(8).sum();
    Some((total, v.get(7).copied()))
}

/// Time stolen by the hypervisor between two readings of /proc/stat.
pub fn steal(before: Option<&str>, after: Option<&str>) -> Check {
    let (Some((t0, Some(s0))), Some((t1, Some(s1)))) =
        (before.and_then(cpu_ticks), after.and_then(cpu_ticks))
    else {
        return check("steal", Status::Unknown, "no steal time in /proc/stat");
    };
    let total = t1.saturating_sub(t0);
    if total == 0 {
        return check(
            "steal",
            Status::Unknown,
            "no CPU time elapsed between readings",
        );
    }
    let share = s1.saturating_sub(s0) as f64 / total as f64;
    if share > 0.01 {
        check(
            "steal",
            Status::Warn,
            format!(
                "the hypervisor took {:.1} % of the CPU time: a neighbouring virtual machine is busy",
                share * 100.0
            ),
        )
    } else {
        check(
            "steal",
            Status::Ok,
            format!("{:.1} % of CPU time stolen", share * 100.0),
        )
    }
}

fn vm_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

fn meminfo_kib(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        l.strip_prefix(key)?
            .strip_prefix(':')?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

/// Pages swapped in or out between two readings of /proc/vmstat.
pub fn swap(before: Option<&str>, after: Option<&str>, meminfo: Option<&str>) -> Check {
    let pages = |t: &str| Some(vm_field(t, "pswpin")? + vm_field(t, "pswpout")?);
    let (Some(p0), Some(p1)) = (before.and_then(pages), after.and_then(pages)) else {
        return check("swap", Status::Unknown, "/proc/vmstat not readable");
    };
    let moved = p1.saturating_sub(p0);
    if moved > 0 {
        return check(
            "swap",
            Status::Warn,
            format!("the machine is swapping ({moved} pages in or out during the check): memory is short"),
        );
    }
    let used =
        meminfo.and_then(|m| Some(meminfo_kib(m, "SwapTotal")? - meminfo_kib(m, "SwapFree")?));
    check(
        "swap",
        Status::Ok,
        match used {
            Some(kib) if kib > 0 => {
                format!("no swapping now ({} MiB swapped out earlier)", kib / 1024)
            }
            _ => "no swapping".to_string(),
        },
    )
}

/// SMT siblings (`topology/thread_siblings_list`) of the CPUs used; `pinned`
/// when the CPUs were chosen with --cpus.
pub fn smt(cpus: &[usize], pinned: bool, siblings: &[Option<String>]) -> Check {
    let mut shared = Vec::new();
    let mut any = false;
    for (c, s) in cpus.iter().zip(siblings) {
        let Some(list) = s.as_deref().and_then(parse_cpu_list) else {
            continue;
        };
        any = true;
        for sib in list {
            if sib != *c && !cpus.contains(&sib) {
                shared.push((*c, sib));
            }
        }
    }
    if !any {
        return check("smt", Status::Unknown, "CPU topology not exposed");
    }
    let has_smt = siblings
        .iter()
        .filter_map(|s| s.as_deref().and_then(parse_cpu_list))
        .any(|l| l.len() > 1);
    if !has_smt {
        return check("smt", Status::Ok, "no SMT siblings: one thread per core");
    }
    if pinned && !shared.is_empty() {
        let pairs: Vec<String> = shared
            .iter()
            .map(|(c, s)| format!("{c} with {s}"))
            .collect();
        return check(
            "smt",
            Status::Warn,
            format!(
                "--cpus shares cores with CPUs it does not reserve ({}): work there slows the command; \
                 add the siblings to the set or keep them idle",
                pairs.join(", ")
            ),
        );
    }
    check(
        "smt",
        Status::Ok,
        "SMT is on: pin with --cpus to one thread per core, with its siblings idle, for the least noise",
    )
}

/// Thermal throttling events (`thermal_throttle/*_throttle_count`, summed
/// over the CPUs used) at two readings.
pub fn thermal(before: Option<u64>, after: Option<u64>) -> Check {
    let (Some(b), Some(a)) = (before, after) else {
        return check(
            "thermal",
            Status::Unknown,
            "no throttling counters exposed (thermal_throttle)",
        );
    };
    if a > b {
        check(
            "thermal",
            Status::Warn,
            format!(
                "the CPUs are being throttled for heat ({} events during the check)",
                a - b
            ),
        )
    } else {
        check(
            "thermal",
            Status::Ok,
            format!("no throttling during the check ({a} events since boot)"),
        )
    }
}

/// Power supplies: (type, status, online) of each /sys/class/power_supply entry.
pub fn power(supplies: &[(String, Option<String>, Option<String>)]) -> Check {
    if supplies.is_empty() {
        return check(
            "power",
            Status::Unknown,
            "no power supply information (a desktop, server or virtual machine)",
        );
    }
    let discharging = supplies.iter().any(|(t, status, _)| {
        t.trim() == "Battery" && status.as_deref().map(str::trim) == Some("Discharging")
    });
    if discharging {
        return check(
            "power",
            Status::Warn,
            "running on battery: power saving lowers and varies the CPU frequency; plug in",
        );
    }
    let mains = supplies.iter().any(|(t, _, online)| {
        t.trim() != "Battery" && online.as_deref().map(str::trim) == Some("1")
    });
    if mains {
        check("power", Status::Ok, "on mains power")
    } else {
        check(
            "power",
            Status::Unknown,
            "no supply reports being online or discharging",
        )
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The CPUs cmdscope may run on, as it was started (`exec::allowed_cpus`:
/// `--isolate` pins cmdscope itself to one of them later).
pub fn allowed_cpus() -> Vec<usize> {
    crate::exec::allowed_cpus().unwrap_or_else(|_| vec![0])
}

/// CPU time of every process, from one read of `/proc/<pid>/schedstat`
/// each; the name (from `stat`) is read later, and only for the few that
/// turn out busy, which halves the files read.
fn all_proc_ns() -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            // One open, one read, one close: read_to_string would also
            // stat every file for its size, a quarter more system calls.
            use std::io::Read;
            let mut buf = [0u8; 96];
            let n = std::fs::File::open(e.path().join("schedstat"))
                .ok()?
                .read(&mut buf)
                .ok()?;
            let text = std::str::from_utf8(&buf[..n]).ok()?;
            Some((pid, text.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// Whether `pid` descends from `root` (its parents, read from /proc).
fn descends_from(mut pid: i32, root: i32) -> bool {
    for _ in 0..64 {
        let Some(stat) = read(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let ppid = stat
            .rfind(')')
            .and_then(|c| stat[c + 1..].split_whitespace().nth(1)?.parse().ok());
        match ppid {
            Some(p) if p == root => return true,
            Some(p) if p > 1 => pid = p,
            _ => return false,
        }
    }
    false
}

fn throttle_count(cpus: &[usize]) -> Option<u64> {
    let mut total = None;
    for c in cpus {
        for f in ["core_throttle_count", "package_throttle_count"] {
            let p = format!("/sys/devices/system/cpu/cpu{c}/thermal_throttle/{f}");
            if let Some(v) = read(p).and_then(|t| t.trim().parse::<u64>().ok()) {
                total = Some(total.unwrap_or(0) + v);
            }
        }
    }
    total
}

/// The checks' window over the machine's activity: opened by one reading
/// of `/proc` and `/sys`, closed by a second one, and the checks made from
/// the two. `run` opens it before the first run and closes it between two
/// runs once it has lasted [`WINDOW`] (or at the session's end, if that
/// comes first), so watching the machine costs no time of its own.
pub struct Window {
    used: Vec<usize>,
    pinned: bool,
    stat: Option<String>,
    vm: Option<String>,
    procs: Vec<(i32, u64)>,
    thermal: Option<u64>,
    opened: std::time::Instant,
}

/// How long a session's checks watch the machine at least: the first runs
/// of a longer session, the whole of a shorter one.
pub const WINDOW: Duration = Duration::from_millis(50);

impl Window {
    /// The first reading. `cpus`: the CPUs the commands are pinned to
    /// (--cpus), if any.
    pub fn open(cpus: Option<&[usize]>) -> Window {
        let used: Vec<usize> = match cpus {
            Some(c) => {
                let mut c = c.to_vec();
                c.sort_unstable();
                c.dedup();
                c
            }
            None => allowed_cpus(),
        };
        Window {
            pinned: cpus.is_some(),
            stat: read("/proc/stat"),
            vm: read("/proc/vmstat"),
            procs: all_proc_ns(),
            thermal: throttle_count(&used),
            opened: std::time::Instant::now(),
            used,
        }
    }

    /// How long the window has been open.
    pub fn elapsed(&self) -> Duration {
        self.opened.elapsed()
    }

    /// The second reading, and every check. Processes that descend from
    /// this one (the spawner, what the hooks left running) are not "other"
    /// processes; the measured commands have exited by then.
    pub fn close(self) -> Vec<Check> {
        let stat1 = read("/proc/stat");
        let vm1 = read("/proc/vmstat");
        let procs1 = all_proc_ns();
        let thermal1 = throttle_count(&self.used);
        let seconds = self.opened.elapsed().as_secs_f64();
        let me = std::process::id() as i32;
        // Only the processes busy enough to report are named and placed
        // in the tree: a few files, not the whole of /proc again.
        let before: std::collections::HashMap<i32, u64> = self.procs.iter().copied().collect();
        let floor = 0.2 * seconds;
        let names: std::collections::HashMap<i32, String> = procs1
            .iter()
            .filter(|(pid, ns)| {
                *pid != me
                    && before
                        .get(pid)
                        .is_some_and(|b| ns.saturating_sub(*b) as f64 * 1e-9 >= floor)
            })
            .filter_map(|&(pid, _)| {
                let stat = read(format!("/proc/{pid}/stat"))?;
                Some((pid, proc_ticks(&stat, None, 1.0)?.name))
            })
            .collect();
        let ticks = |list: &[(i32, u64)]| -> Vec<ProcTicks> {
            list.iter()
                .map(|&(pid, ns)| ProcTicks {
                    pid,
                    name: names.get(&pid).cloned().unwrap_or_default(),
                    ns,
                })
                .collect()
        };
        let mut exclude = vec![me];
        exclude.extend(names.keys().copied().filter(|&p| descends_from(p, me)));
        let busy = busy_processes(&ticks(&self.procs), &ticks(&procs1), seconds, &exclude);

        let sys = |c: usize, f: &str| read(format!("/sys/devices/system/cpu/cpu{c}/{f}"));
        let used = &self.used;
        let governors: Vec<Option<String>> = used
            .iter()
            .map(|&c| sys(c, "cpufreq/scaling_governor"))
            .collect();
        let siblings: Vec<Option<String>> = used
            .iter()
            .map(|&c| sys(c, "topology/thread_siblings_list"))
            .collect();
        let supplies: Vec<(String, Option<String>, Option<String>)> =
            std::fs::read_dir("/sys/class/power_supply")
                .map(|d| {
                    d.flatten()
                        .filter_map(|e| {
                            let p = e.path();
                            Some((
                                read(p.join("type"))?,
                                read(p.join("status")),
                                read(p.join("online")),
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default();
        vec![
            governor(used, &governors),
            turbo(
                read("/sys/devices/system/cpu/intel_pstate/no_turbo").as_deref(),
                read("/sys/devices/system/cpu/cpufreq/boost").as_deref(),
            ),
            load(read("/proc/loadavg").as_deref(), allowed_cpus().len()),
            busy,
            steal(self.stat.as_deref(), stat1.as_deref()),
            swap(
                self.vm.as_deref(),
                vm1.as_deref(),
                read("/proc/meminfo").as_deref(),
            ),
            smt(used, self.pinned, &siblings),
            thermal(self.thermal, thermal1),
            power(&supplies),
        ]
    }
}

/// Reads the machine's state, watches it for `interval` and runs every
/// check (`cmdscope doctor`).
pub fn collect(cpus: Option<&[usize]>, interval: Duration) -> Vec<Check> {
    let window = Window::open(cpus);
    std::thread::sleep(interval);
    window.close()
}

/// A window being opened in the background (see [`start`]).
pub struct Pending {
    cpus: Option<Vec<usize>>,
    thread: Option<std::thread::JoinHandle<Window>>,
}

/// Opens a [`Window`] on a thread, so that its first reading overlaps the
/// harness's own start-up; [`Pending::opened`] waits for it. The thread
/// blocks SIGINT and SIGTERM: they must interrupt the thread that waits
/// for the commands.
pub fn start(cpus: Option<Vec<usize>>) -> Pending {
    let theirs = cpus.clone();
    let thread = std::thread::Builder::new()
        .name("preflight".into())
        .spawn(move || {
            // SAFETY: a sigset built with sigemptyset/sigaddset; this
            // thread's mask only.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGINT);
                libc::sigaddset(&mut set, libc::SIGTERM);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            Window::open(theirs.as_deref())
        });
    Pending {
        cpus,
        thread: thread.ok(),
    }
}

impl Pending {
    pub fn opened(mut self) -> Window {
        match self.thread.take().map(|h| h.join()) {
            Some(Ok(window)) => window,
            // No thread (or it failed): open it on this one.
            _ => Window::open(self.cpus.as_deref()),
        }
    }
}

/// The warnings among `checks`, one plain line each.
pub fn warnings(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| c.status == Status::Warn)
        .map(|c| format!("{}: {}", c.name, c.detail))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    #[test]
    fn governor_performance_is_ok_powersave_warns_absent_is_unknown() {
        let c = governor(&[0, 1], &[s("performance\n"), s("performance\n")]);
        assert_eq!(c.status, Status::Ok);
        assert_eq!(c.detail, "performance on CPU 0-1");
        let c = governor(&[0, 1], &[s("performance\n"), s("powersave\n")]);
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.detail.starts_with("governor is powersave on CPU 1: "),
            "{}",
            c.detail
        );
        assert!(c.detail.contains("cmdscope doctor --fix"));
        assert_eq!(governor(&[0], &[None]).status, Status::Unknown);
    }

    #[test]
    fn turbo_from_intel_pstate_or_cpufreq_boost() {
        assert_eq!(turbo(Some("1\n"), None).status, Status::Ok);
        assert_eq!(turbo(Some("0\n"), None).status, Status::Warn);
        assert_eq!(turbo(None, Some("1\n")).status, Status::Warn);
        assert_eq!(turbo(None, Some("0\n")).status, Status::Ok);
        assert_eq!(turbo(None, None).status, Status::Unknown);
    }

    #[test]
    fn load_warns_at_half_the_cpus_or_one() {
        assert_eq!(
            load(Some("0.20 0.30 0.40 1/123 456\n"), 2).status,
            Status::Ok
        );
        assert_eq!(
            load(Some("1.00 0.30 0.40 1/123 456\n"), 2).status,
            Status::Warn
        );
        assert_eq!(
            load(Some("3.90 0.30 0.40 1/123 456\n"), 8).status,
            Status::Ok
        );
        assert_eq!(
            load(Some("4.00 0.30 0.40 1/123 456\n"), 8).status,
            Status::Warn
        );
        assert_eq!(load(Some("garbage"), 2).status, Status::Unknown);
        assert_eq!(load(None, 2).status, Status::Unknown);
    }

    #[test]
    fn proc_stat_with_spaces_and_parentheses_in_the_name() {
        let line = "4242 (my (odd) prog) R 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 100 1000 10";
        let p = proc_ticks(line, None, 100.0).unwrap();
        assert_eq!(p.pid, 4242);
        assert_eq!(p.name, "my (odd) prog");
        assert_eq!(p.ns, 3_000_000_000, "300 ticks at 100 Hz");
        let p = proc_ticks(line, Some("2999000123 5000 20\n"), 100.0).unwrap();
        assert_eq!(p.ns, 2_999_000_123, "schedstat is exact");
        assert_eq!(proc_ticks("garbage", None, 100.0), None);
    }

    #[test]
    fn busy_processes_over_a_fifth_of_a_cpu() {
        let ms = 1_000_000;
        let t = |pid, name: &str, ns| ProcTicks {
            pid,
            name: name.into(),
            ns,
        };
        let before = [
            t(1, "init", 100 * ms),
            t(7, "rustc", 1000 * ms),
            t(9, "me", 0),
        ];
        // Over 0.5 s: rustc ran 450 ms = 90 % of a CPU; init 10 ms.
        let after = [
            t(1, "init", 110 * ms),
            t(7, "rustc", 1450 * ms),
            t(9, "me", 500 * ms),
        ];
        let c = busy_processes(&before, &after, 0.5, &[9]);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("rustc (pid 7) 90 %"), "{}", c.detail);
        assert!(!c.detail.contains("init"));
        assert!(!c.detail.contains("me"));
        let c = busy_processes(&before, &before, 0.5, &[]);
        assert_eq!(c.status, Status::Ok);
        // A pid reused by another program is not a busy process.
        let c = busy_processes(&before, &[t(7, "other", 5000 * ms)], 0.5, &[]);
        assert_eq!(c.status, Status::Ok);
        assert_eq!(busy_processes(&[], &[], 0.5, &[]).status, Status::Unknown);
    }

    #[test]
    fn steal_share_between_two_readings() {
        let a = "cpu  100 0 100 1000 0 0 0 0 0 0\ncpu0 50 0 50 500 0 0 0 0 0 0\n";
        let b = "cpu  150 0 150 1880 0 0 0 20 0 0\n";
        // 20 stolen of 1000 elapsed: 2 %.
        let c = steal(Some(a), Some(b));
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("2.0 %"), "{}", c.detail);
        let quiet = "cpu  150 0 150 1898 0 0 0 2 0 0\n";
        assert_eq!(steal(Some(a), Some(quiet)).status, Status::Ok);
        // Kernels without the steal column.
        assert_eq!(
            steal(Some("cpu  1 2 3 4\n"), Some("cpu  2 3 4 5\n")).status,
            Status::Unknown
        );
        assert_eq!(steal(None, Some(b)).status, Status::Unknown);
    }

    #[test]
    fn swap_activity_between_two_readings() {
        let a = "nr_free_pages 100\npswpin 10\npswpout 20\n";
        let b = "nr_free_pages 90\npswpin 12\npswpout 20\n";
        assert_eq!(swap(Some(a), Some(b), None).status, Status::Warn);
        let mem = "SwapTotal:       2097152 kB\nSwapFree:        1048576 kB\n";
        let c = swap(Some(a), Some(a), Some(mem));
        assert_eq!(c.status, Status::Ok);
        assert!(
            c.detail.contains("1024 MiB swapped out earlier"),
            "{}",
            c.detail
        );
        assert_eq!(
            swap(Some("x 1\n"), Some("x 1\n"), None).status,
            Status::Unknown
        );
    }

    #[test]
    fn smt_siblings_outside_the_pinned_set_warn() {
        let sib = [s("0,2\n"), s("1,3\n")];
        assert_eq!(smt(&[0, 1], true, &sib).status, Status::Warn);
        assert!(smt(&[0, 1], true, &sib).detail.contains("0 with 2"));
        assert_eq!(
            smt(
                &[0, 1, 2, 3],
                true,
                &[s("0,2"), s("1,3"), s("0,2"), s("1,3")]
            )
            .status,
            Status::Ok
        );
        assert_eq!(smt(&[0, 1], false, &sib).status, Status::Ok);
        assert_eq!(smt(&[0, 1], true, &[s("0\n"), s("1\n")]).status, Status::Ok);
        assert_eq!(smt(&[0], false, &[None]).status, Status::Unknown);
        assert_eq!(parse_cpu_list("0-2,5\n"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn thermal_events_during_the_check_warn() {
        assert_eq!(thermal(Some(5), Some(7)).status, Status::Warn);
        assert_eq!(thermal(Some(5), Some(5)).status, Status::Ok);
        assert_eq!(thermal(None, None).status, Status::Unknown);
    }

    #[test]
    fn battery_discharging_warns() {
        let bat = |st: &str| ("Battery\n".to_string(), s(st), None);
        let mains = |on: &str| ("Mains\n".to_string(), None, s(on));
        assert_eq!(
            power(&[bat("Discharging\n"), mains("0\n")]).status,
            Status::Warn
        );
        assert_eq!(power(&[bat("Charging\n"), mains("1\n")]).status, Status::Ok);
        assert_eq!(power(&[]).status, Status::Unknown);
    }

    #[test]
    fn collect_reads_every_check_on_this_machine() {
        let checks = collect(None, Duration::from_millis(20));
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "governor",
                "turbo",
                "load",
                "busy_processes",
                "steal",
                "swap",
                "smt",
                "thermal",
                "power"
            ]
        );
        assert!(checks.iter().all(|c| !c.detail.is_empty()));
    }
}
