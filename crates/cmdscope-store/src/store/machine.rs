//! The machine a session ran on: what identifies it (CPU model, cores,
//! memory, kernel, hostname) and what describes its state at the start
//! (frequency governor, load). Read from /proc, /sys and uname; a value
//! that cannot be read is "unknown", never an error.
//!
//! The fingerprint is a hash of the identifying parts only, so two sessions
//! on the same machine compare as "same machine" whatever the load was. It
//! is FNV-1a (64 bit) written out here, because it must stay the same across
//! Rust versions and builds (std's hasher makes no such promise) and is not
//! a security boundary.

use std::fs;

/// Description of the machine at the start of a session.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    pub hostname: String,
    pub cpu_model: String,
    /// CPUs this process may run on (what `nproc` says).
    pub cores: i64,
    pub memory_bytes: i64,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// cpufreq governor of CPU 0, when the kernel exposes one.
    pub governor: Option<String>,
    /// Load averages (1, 5, 15 minutes) at the start.
    pub load: Option<[f64; 3]>,
}

const UNKNOWN: &str = "unknown";

impl Machine {
    /// Reads the current machine.
    pub fn current() -> Machine {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let loadavg = fs::read_to_string("/proc/loadavg").unwrap_or_default();
        Machine {
            hostname: hostname(),
            cpu_model: cpu_model(&cpuinfo),
            cores: std::thread::available_parallelism()
                .map(|n| n.get() as i64)
                .unwrap_or(0),
            memory_bytes: mem_total(&meminfo).unwrap_or(0),
            kernel: kernel_release(),
            governor: fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            load: parse_loadavg(&loadavg),
        }
    }

    /// Memory rounded to whole GiB for the fingerprint: MemTotal moves by a
    /// few MiB between kernels and boots (reserved memory), the machine does not.
    pub fn memory_gib(&self) -> i64 {
        ((self.memory_bytes as f64) / (1u64 << 30) as f64).round() as i64
    }

    /// Stable identity hash: 16 hex digits (shown as [`short_fingerprint`]).
    pub fn fingerprint(&self) -> String {
        let text = format!(
            "cpu={}\ncores={}\nmemory_gib={}\nkernel={}\nhost={}",
            self.cpu_model,
            self.cores,
            self.memory_gib(),
            self.kernel,
            self.hostname
        );
        format!("{:016x}", fnv1a(text.as_bytes()))
    }
}

/// A fingerprint as every output shows it: its first 12 hex digits, enough
/// to tell machines apart on one screen (the whole one when shorter).
pub fn short_fingerprint(fingerprint: &str) -> &str {
    fingerprint.get(..12).unwrap_or(fingerprint)
}

/// FNV-1a, 64 bits: fixed by its definition, unlike std's hashers, so a
/// key hashes the same in every cmdscope version and on every machine
/// (machine fingerprints, suite partitions, the site's page names).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates
    // when the name fits, and we stop at the first NUL or the end.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        if !name.is_empty() {
            return name;
        }
    }
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNKNOWN.into())
}

fn kernel_release() -> String {
    // SAFETY: utsname is plain data; uname fills it and NUL-terminates its fields.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } == 0 {
        let bytes: Vec<u8> = u
            .release
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let s = String::from_utf8_lossy(&bytes).trim().to_string();
        if !s.is_empty() {
            return s;
        }
    }
    UNKNOWN.into()
}

/// "model name" on x86, "Hardware"/"Model"/"cpu model" elsewhere.
fn cpu_model(cpuinfo: &str) -> String {
    for key in ["model name", "Hardware", "Model", "cpu model", "cpu"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return v.split_whitespace().collect::<Vec<_>>().join(" ");
                }
            }
        }
    }
    UNKNOWN.into()
}

fn mem_total(meminfo: &str) -> Option<i64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let cpuinfo =
            "processor\t: 0\nvendor_id\t: X\nmodel name\t: Intel(R)  Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(cpuinfo), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(cpu_model(""), "unknown");
        assert_eq!(
            mem_total("MemTotal:       16384 kB\nMemFree: 1 kB\n"),
            Some(16384 * 1024)
        );
        assert_eq!(
            parse_loadavg("0.50 1.00 2.25 1/234 5678\n"),
            Some([0.5, 1.0, 2.25])
        );
        assert_eq!(parse_loadavg("garbage"), None);
    }

    #[test]
    fn fingerprint_ignores_load_and_small_memory_changes() {
        let a = Machine {
            hostname: "h".into(),
            cpu_model: "c".into(),
            cores: 4,
            memory_bytes: 16 << 30,
            kernel: "6.1".into(),
            governor: Some("performance".into()),
            load: Some([0.1, 0.2, 0.3]),
        };
        let mut b = a.clone();
        b.load = Some([3.0, 3.0, 3.0]);
        b.governor = None;
        b.memory_bytes -= 50 << 20;
        assert_eq!(a.fingerprint(), b.fingerprint());
        b.kernel = "6.2".into();
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint().len(), 16);
        // Stable across builds: FNV-1a's reference values
        // (draft-eastlake-fnv test vectors).
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x85944171f73967e8);
        let m = Machine::current();
        assert!(m.cores >= 1);
    }
}
