//! The host's view while concurrent instances run: CPU busy share
//! (`/proc/stat`), pressure stall information (`/proc/pressure/*`: the
//! share of the time some or all tasks waited for CPU, I/O or memory), and
//! per-disk busy share and bytes per second (`/proc/diskstats`). Two
//! snapshots, before and after a stretch of runs, give the view over it.
//! Parsing is pure (functions of the files' text, tested on copies of
//! real ones); `snapshot` is the one place that reads the files.

use serde::{Deserialize, Serialize};

/// One pressure file's cumulative stall times, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pressure {
    pub some_us: u64,
    /// `None` for CPU pressure on kernels that report only "some".
    pub full_us: Option<u64>,
}

/// One whole disk's cumulative counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Disk {
    pub name: String,
    /// Milliseconds during which the device had I/O in flight.
    pub busy_ms: u64,
    pub sectors_read: u64,
    pub sectors_written: u64,
}

/// The counters at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// (busy, total) jiffies over all CPUs.
    pub cpu: Option<(u64, u64)>,
    /// Number of CPUs `/proc/stat` lists.
    pub cpus: usize,
    /// cpu, io, memory.
    pub pressure: [Option<Pressure>; 3],
    pub disks: Vec<Disk>,
}

/// What the host went through between two snapshots.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostView {
    pub seconds: f64,
    /// CPUs busy on average (0 to the number of CPUs), all processes.
    pub cpu_busy: Option<f64>,
    pub cpus: usize,
    pub pressure: Vec<PressureShare>,
    pub disks: Vec<DiskRate>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PressureShare {
    /// `cpu`, `io` or `memory`.
    pub resource: &'static str,
    /// Share of the time at least one task stalled on the resource.
    pub some: f64,
    /// Share of the time every non-idle task stalled on it, where known.
    pub full: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskRate {
    pub device: String,
    /// Share of the time the device had I/O in flight.
    pub busy: f64,
    pub read_bytes_per_second: f64,
    pub written_bytes_per_second: f64,
}

const RESOURCES: [&str; 3] = ["cpu", "io", "memory"];
/// /proc/diskstats counts 512-byte sectors whatever the device's own size.
const SECTOR: f64 = 512.0;

/// A stored view's pressure share, read before its resource's name is
/// checked to be one of [`RESOURCES`].
#[derive(Deserialize)]
struct StoredPressure {
    resource: String,
    some: f64,
    full: Option<f64>,
}

impl<'de> Deserialize<'de> for PressureShare {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PressureShare, D::Error> {
        let p = StoredPressure::deserialize(d)?;
        let resource = RESOURCES
            .into_iter()
            .find(|r| *r == p.resource)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("unknown resource '{}'", p.resource))
            })?;
        Ok(PressureShare {
            resource,
            some: p.some,
            full: p.full,
        })
    }
}

/// `some avg10=0.00 avg60=0.00 avg300=0.00 total=123` (and `full ...`).
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))
            .and_then(|l| l.split_whitespace().find_map(|f| f.strip_prefix("total=")))
            .and_then(|t| t.parse::<u64>().ok())
    };
    Some(Pressure {
        some_us: total("some ")?,
        full_us: total("full "),
    })
}

/// The first line of /proc/stat: (busy, total) jiffies, and the CPU count.
pub fn parse_stat(text: &str) -> Option<((u64, u64), usize)> {
    let first = text.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = first
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is
    // already counted in user and nice).
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some(((total.saturating_sub(idle), total), cpus))
}

/// Whole disks of /proc/diskstats: those in `whole` (the names under
/// /sys/block), without loop and RAM devices, which are not hardware.
pub fn parse_diskstats(text: &str, whole: &[String]) -> Vec<Disk> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.get(2)?;
            if !whole.iter().any(|w| w == name)
                || name.starts_with("loop")
                || name.starts_with("ram")
                || name.starts_with("zram")
            {
                return None;
            }
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
            Some(Disk {
                name: name.to_string(),
                sectors_read: n(5)?,
                sectors_written: n(9)?,
                busy_ms: n(12)?,
            })
        })
        .collect()
}

/// The whole disks' names (/sys/block): listed once per stretch and
/// handed to both of its snapshots, so that the two list the same disks
/// and the directory is read once, not twice.
pub fn whole_disks() -> Vec<String> {
    std::fs::read_dir("/sys/block")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Reads the counters now, for the disks of `whole` (see [`whole_disks`]);
/// whatever the kernel lacks is left out.
pub fn snapshot(whole: &[String]) -> Snapshot {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let (cpu, cpus) = match read("/proc/stat").as_deref().and_then(parse_stat) {
        Some((c, n)) => (Some(c), n),
        None => (None, 0),
    };
    let pressure = RESOURCES.map(|r| {
        read(&format!("/proc/pressure/{r}"))
            .as_deref()
            .and_then(parse_pressure)
    });
    let disks = read("/proc/diskstats")
        .map(|t| parse_diskstats(&t, whole))
        .unwrap_or_default();
    Snapshot {
        cpu,
        cpus,
        pressure,
        disks,
    }
}

/// Whether `seconds` of CPU-busy readings make a figure: /proc/stat counts
/// CPU time in ticks (`USER_HZ`, 100 a second), so over fewer than 20 ticks
/// one tick more or less moves the reading by more than a twentieth of a
/// CPU (a batch of 20 ms on 2 CPUs read 0.00 and 0.40 CPUs busy beside
/// instances that used 0.2).
pub fn cpu_resolved(seconds: f64) -> bool {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = if ticks > 0 { ticks as f64 } else { 100.0 };
    seconds * ticks >= 20.0
}

/// The view over `seconds` between `before` and `after`.
pub fn view(before: &Snapshot, after: &Snapshot, seconds: f64) -> HostView {
    if seconds.is_nan() || seconds <= 0.0 {
        return HostView::default();
    }
    let cpu_busy = match (before.cpu, after.cpu) {
        (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
            Some((b1.saturating_sub(b0)) as f64 / (t1 - t0) as f64 * after.cpus as f64)
        }
        _ => None,
    };
    let pressure = RESOURCES
        .iter()
        .zip(before.pressure.iter().zip(after.pressure.iter()))
        .filter_map(|(r, (b, a))| {
            let (b, a) = (b.as_ref()?, a.as_ref()?);
            let share = |x: u64, y: u64| (y.saturating_sub(x) as f64 / 1e6 / seconds).min(1.0);
            Some(PressureShare {
                resource: r,
                some: share(b.some_us, a.some_us),
                full: b.full_us.zip(a.full_us).map(|(x, y)| share(x, y)),
            })
        })
        .collect();
    let disks = after
        .disks
        .iter()
        .filter_map(|a| {
            let b = before.disks.iter().find(|b| b.name == a.name)?;
            let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
            Some(DiskRate {
                device: a.name.clone(),
                busy: (d(b.busy_ms, a.busy_ms) / 1e3 / seconds).min(1.0),
                read_bytes_per_second: d(b.sectors_read, a.sectors_read) * SECTOR / seconds,
                written_bytes_per_second: d(b.sectors_written, a.sectors_written) * SECTOR
                    / seconds,
            })
        })
        .collect();
    HostView {
        seconds,
        cpu_busy,
        cpus: after.cpus,
        pressure,
        disks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_files_as_the_kernel_writes_them() {
        let io = "some avg10=1.50 avg60=0.80 avg300=0.20 total=4500000\n\
                  full avg10=0.50 avg60=0.10 avg300=0.00 total=1500000\n";
        assert_eq!(
            parse_pressure(io),
            Some(Pressure {
                some_us: 4_500_000,
                full_us: Some(1_500_000)
            })
        );
        // CPU pressure before Linux 5.13 has no "full" line.
        let cpu = "some avg10=0.00 avg60=0.00 avg300=0.00 total=77\n";
        assert_eq!(parse_pressure(cpu).unwrap().full_us, None);
        assert_eq!(parse_pressure("garbage"), None);
        assert_eq!(parse_pressure(""), None);
    }

    #[test]
    fn disks_keep_whole_hardware_devices_only() {
        let text = "   7       0 loop0 10 0 80 1 0 0 0 0 0 4 1\n\
                    253       0 vda 5000 20 400000 900 3000 100 240000 700 0 1200 1600\n\
                    253       1 vda1 4990 20 399000 890 2990 100 239000 690 0 1190 1580\n";
        let whole = vec!["loop0".to_string(), "vda".to_string()];
        let disks = parse_diskstats(text, &whole);
        assert_eq!(
            disks,
            vec![Disk {
                name: "vda".into(),
                busy_ms: 1200,
                sectors_read: 400000,
                sectors_written: 240000,
            }]
        );
        assert!(parse_diskstats("short line\n", &whole).is_empty());
    }

    #[test]
    fn a_view_is_the_difference_over_the_time() {
        let stat = |busy: u64, idle: u64| {
            format!("cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\n")
        };
        let ((b0, t0), cpus) = parse_stat(&stat(100, 100)).unwrap();
        assert_eq!(cpus, 2);
        let ((b1, t1), _) = parse_stat(&stat(250, 150)).unwrap();
        let disk = |busy_ms, r, w| Disk {
            name: "vda".into(),
            busy_ms,
            sectors_read: r,
            sectors_written: w,
        };
        let before = Snapshot {
            cpu: Some((b0, t0)),
            cpus: 2,
            pressure: [
                Some(Pressure {
                    some_us: 0,
                    full_us: None,
                }),
                Some(Pressure {
                    some_us: 1_000_000,
                    full_us: Some(0),
                }),
                None,
            ],
            disks: vec![disk(1000, 0, 0)],
        };
        let after = Snapshot {
            cpu: Some((b1, t1)),
            cpus: 2,
            pressure: [
                Some(Pressure {
                    some_us: 500_000,
                    full_us: None,
                }),
                Some(Pressure {
                    some_us: 2_000_000,
                    full_us: Some(250_000),
                }),
                None,
            ],
            disks: vec![disk(2500, 2048, 4096)],
        };
        let v = view(&before, &after, 2.0);
        // 150 of 200 jiffies busy on 2 CPUs: 1.5 CPUs busy.
        assert!((v.cpu_busy.unwrap() - 1.5).abs() < 1e-12);
        assert_eq!(v.pressure.len(), 2);
        assert!((v.pressure[0].some - 0.25).abs() < 1e-12);
        assert_eq!(v.pressure[0].full, None);
        assert!((v.pressure[1].some - 0.5).abs() < 1e-12);
        assert!((v.pressure[1].full.unwrap() - 0.125).abs() < 1e-12);
        assert!((v.disks[0].busy - 0.75).abs() < 1e-12);
        assert!((v.disks[0].read_bytes_per_second - 2048.0 * 512.0 / 2.0).abs() < 1e-9);
        assert!((v.disks[0].written_bytes_per_second - 4096.0 * 512.0 / 2.0).abs() < 1e-9);
        assert_eq!(view(&before, &after, 0.0), HostView::default());
        // The store keeps a view as JSON and reads back the same view.
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<HostView>(&text).unwrap(), v);
        let foreign = text.replace("\"io\"", "\"gpu\"");
        assert!(serde_json::from_str::<HostView>(&foreign).is_err());
    }

    #[test]
    fn this_machine_gives_a_snapshot() {
        // Whatever the kernel offers; nothing may panic, and /proc/stat is
        // on every Linux.
        let s = snapshot(&whole_disks());
        assert!(s.cpu.is_some() && s.cpus >= 1, "{s:?}");
    }
}
