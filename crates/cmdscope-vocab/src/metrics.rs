//! The metrics cmdscope measures per run: names (hyperfine's where it has
//! one), units and which direction is better.

use serde::Serialize;

/// Unit of a metric's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Seconds,
    Bytes,
    Count,
}

impl Unit {
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Bytes => "B",
            Unit::Count => "",
        }
    }
}

macro_rules! metrics {
    ($( $variant:ident => $name:literal, $unit:ident, $label:literal; )*) => {
        /// One measured quantity of a run.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Metric { $( $variant ),* }

        impl Metric {
            pub const ALL: &'static [Metric] = &[ $( Metric::$variant ),* ];
            pub const COUNT: usize = Metric::ALL.len();

            /// The name used in JSON, CSV and on the command line.
            pub fn name(self) -> &'static str {
                match self { $( Metric::$variant => $name ),* }
            }
            pub fn unit(self) -> Unit {
                match self { $( Metric::$variant => Unit::$unit ),* }
            }
            /// A short human label for terminal output.
            pub fn label(self) -> &'static str {
                match self { $( Metric::$variant => $label ),* }
            }
            pub fn from_name(name: &str) -> Option<Metric> {
                match name { $( $name => Some(Metric::$variant), )* _ => None }
            }
        }
    };
}

metrics! {
    WallTime => "time_wall_clock", Seconds, "wall";
    UserTime => "time_user", Seconds, "user";
    SystemTime => "time_system", Seconds, "sys";
    CpuTime => "time_cpu", Seconds, "cpu";
    PeakRss => "memory_peak_resident", Bytes, "peak RSS";
    MinorFaults => "page_faults_minor", Count, "minor faults";
    MajorFaults => "page_faults_major", Count, "major faults";
    VoluntaryCtx => "context_switches_voluntary", Count, "voluntary ctx sw";
    InvoluntaryCtx => "context_switches_involuntary", Count, "involuntary ctx sw";
    IoReadBytes => "io_read_bytes", Bytes, "storage read";
    IoWriteBytes => "io_write_bytes", Bytes, "storage written";
    IoReadChars => "io_read_chars", Bytes, "chars read";
    IoWriteChars => "io_write_chars", Bytes, "chars written";
    TaskClock => "task_clock", Seconds, "task clock";
    CpuMigrations => "cpu_migrations", Count, "cpu migrations";
    CpuCycles => "cpu_cycles", Count, "cycles";
    Instructions => "instructions", Count, "instructions";
    CacheReferences => "cache_references", Count, "cache refs";
    CacheMisses => "cache_misses", Count, "cache misses";
    BranchMisses => "branch_misses", Count, "branch misses";
    SimInstructions => "sim_instructions", Count, "simulated instructions";
    SimD1Misses => "sim_d1_misses", Count, "simulated D1 misses";
    SimLlMisses => "sim_ll_misses", Count, "simulated LL misses";
    SimBranchMispredicts => "sim_branch_mispredicts", Count, "simulated mispredicts";
    SimEstimatedCycles => "sim_estimated_cycles", Count, "estimated cycles";
}

impl Metric {
    /// The counts of `run --simulate` (cachegrind's): exact, so a cell
    /// whose runs all gave one value is a decision, not a spread.
    pub fn simulated(self) -> bool {
        matches!(
            self,
            Metric::SimInstructions
                | Metric::SimD1Misses
                | Metric::SimLlMisses
                | Metric::SimBranchMispredicts
                | Metric::SimEstimatedCycles
        )
    }

    /// Index into a [`Sample`]'s value array.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One run of one command: every metric, NaN where it was not measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Position of this run in the whole session (all commands, in the order run).
    pub run_index: u64,
    /// Exit status; `None` when the process was killed by a signal.
    pub exit_code: Option<i32>,
    /// Signal that ended the process, if any.
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Excluded from statistics as an outlier (only with --remove-outliers).
    pub removed: bool,
    pub values: [f64; Metric::COUNT],
    /// What disturbed the run, where the kernel tells (not a metric of the
    /// command's own: the machine's state while it ran).
    pub disturbance: Disturbance,
    /// The spawner's serial number of the scheduled run this was read from
    /// (`exec::Spawner::next_serial`), None for a run made alone: the store
    /// writer knows by it which runs cmdscope sent before it died.
    pub scheduled: Option<u64>,
}

impl Sample {
    pub fn new(run_index: u64) -> Sample {
        Sample {
            run_index,
            exit_code: None,
            signal: None,
            timed_out: false,
            removed: false,
            values: [f64::NAN; Metric::COUNT],
            disturbance: Disturbance::default(),
            scheduled: None,
        }
    }

    pub fn get(&self, metric: Metric) -> Option<f64> {
        let v = self.values[metric.index()];
        (!v.is_nan()).then_some(v)
    }

    pub fn set(&mut self, metric: Metric, value: f64) {
        self.values[metric.index()] = value;
    }

    /// Whether the run counts for statistics: timed-out runs are cut short,
    /// removed outliers were excluded on request.
    pub fn counts(&self) -> bool {
        !self.timed_out && !self.removed
    }
}

/// What disturbed one run, read from the kernel around it. Each is None
/// where the kernel does not tell, or where reading it would have cost
/// more than `DisturbanceProbe::MAX_COST` of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Disturbance {
    /// Seconds of the run during which some task of cmdscope's cgroup
    /// (cgroup v2 `cpu.pressure`, else the system's `/proc/pressure/cpu`)
    /// was waiting for a CPU: pressure stall information, "some".
    pub cpu_wait: Option<f64>,
    /// CPU seconds the hypervisor ran other guests instead of this machine
    /// during the run, summed over CPUs (`/proc/stat`, steal).
    pub steal: Option<f64>,
}

/// The kernel's cumulative counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DisturbanceCounters {
    /// PSI "some" total, microseconds.
    cpu_wait_us: Option<u64>,
    /// Steal time, clock ticks.
    steal_ticks: Option<u64>,
}

/// Reads the counters of `Disturbance` from files kept open. Each source
/// is read only when its two reads cost at most `MAX_COST` of the run
/// they bracket (judged by the previous run's wall time): a
/// `/proc/stat` read takes about 15 µs, 3 % of a 0.5 ms `/bin/true`.
pub struct DisturbanceProbe {
    pressure: Option<std::fs::File>,
    stat: Option<std::fs::File>,
    /// Seconds one read of each source took (the cheapest of three).
    cost: [f64; 2],
    tick: f64,
    buf: Vec<u8>,
}

impl DisturbanceProbe {
    /// Share of a run's wall time the reads around it may cost.
    pub const MAX_COST: f64 = 0.002;

    /// Opens the sources this machine has: the session cgroup's
    /// `cpu.pressure` (cgroup v2, also mounted at `unified/` on hybrid
    /// systems), else `/proc/pressure/cpu`; and `/proc/stat`.
    pub fn open() -> DisturbanceProbe {
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("0::").map(str::to_string))
            });
        let mut candidates = Vec::new();
        if let Some(path) = own.filter(|p| p != "/") {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                candidates.push(format!("{root}{path}/cpu.pressure"));
            }
        }
        candidates.push("/proc/pressure/cpu".into());
        let pressure = candidates.iter().find_map(|p| std::fs::File::open(p).ok());
        // SAFETY: sysconf has no memory effects.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let mut probe = DisturbanceProbe {
            pressure,
            stat: std::fs::File::open("/proc/stat").ok(),
            cost: [0.0; 2],
            tick: if hz > 0 { 1.0 / hz as f64 } else { 0.01 },
            buf: vec![0; 8192],
        };
        for source in 0..2 {
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let start = std::time::Instant::now();
                let ok = probe.read_one(source).is_some();
                best = best.min(start.elapsed().as_secs_f64());
                if !ok {
                    // No such counter here: never read it again.
                    match source {
                        0 => probe.pressure = None,
                        _ => probe.stat = None,
                    }
                    break;
                }
            }
            probe.cost[source] = best;
        }
        probe
    }

    /// Seconds one read of (pressure, steal) takes; None where absent.
    pub fn costs(&self) -> [Option<f64>; 2] {
        [
            self.pressure.as_ref().map(|_| self.cost[0]),
            self.stat.as_ref().map(|_| self.cost[1]),
        ]
    }

    /// Whether [`DisturbanceProbe::read`] for a run of about
    /// `expected_wall` seconds reads nothing: every source is absent or
    /// too dear for such a run.
    pub fn reads_nothing(&self, expected_wall: Option<f64>) -> bool {
        let cheap = |cost: f64| expected_wall.is_none_or(|w| 2.0 * cost <= Self::MAX_COST * w);
        !(self.pressure.is_some() && cheap(self.cost[0])
            || self.stat.is_some() && cheap(self.cost[1]))
    }

    /// The counters now, reading only the sources cheap enough for a run
    /// of about `expected_wall` seconds (None: unknown, read all).
    pub fn read(&mut self, expected_wall: Option<f64>) -> DisturbanceCounters {
        let cheap = |cost: f64| expected_wall.is_none_or(|w| 2.0 * cost <= Self::MAX_COST * w);
        DisturbanceCounters {
            cpu_wait_us: if cheap(self.cost[0]) {
                self.read_one(0)
            } else {
                None
            },
            steal_ticks: if cheap(self.cost[1]) {
                self.read_one(1)
            } else {
                None
            },
        }
    }

    /// What happened between two readings.
    pub fn between(&self, a: DisturbanceCounters, b: DisturbanceCounters) -> Disturbance {
        let delta = |x: Option<u64>, y: Option<u64>| Some(y?.checked_sub(x?)? as f64);
        Disturbance {
            cpu_wait: delta(a.cpu_wait_us, b.cpu_wait_us).map(|us| us * 1e-6),
            steal: delta(a.steal_ticks, b.steal_ticks).map(|t| t * self.tick),
        }
    }

    fn read_one(&mut self, source: usize) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let file = match source {
            0 => self.pressure.as_ref()?,
            _ => self.stat.as_ref()?,
        };
        let n = file.read_at(&mut self.buf, 0).ok()?;
        let text = std::str::from_utf8(&self.buf[..n]).ok()?;
        match source {
            0 => parse_pressure_some(text),
            _ => parse_steal(text),
        }
    }
}

/// The "total=" of the "some" line of a PSI file, in microseconds.
pub fn parse_pressure_some(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with("some "))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// The steal ticks of `/proc/stat`'s first line (all CPUs): its eighth
/// number ("cpu user nice system idle iowait irq softirq steal ...").
pub fn parse_steal(text: &str) -> Option<u64> {
    let first = text.lines().next()?;
    let mut fields = first.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    fields.nth(7)?.parse().ok()
}

/// Values of `metric` of two interleaved cells, paired by block: the k-th
/// run of every cell belongs to block k. A block where either run does not
/// count (timed out, removed) or lacks the metric is dropped for this pair
/// only; dropping runs per cell first would shift every later block.
pub fn block_pairs(a: &[Sample], b: &[Sample], metric: Metric) -> (Vec<f64>, Vec<f64>) {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.counts() && y.counts())
        .filter_map(|(x, y)| Some((x.get(metric)?, y.get(metric)?)))
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_pairs_drop_a_block_for_the_pair_not_the_cell() {
        let run = |wall: f64, timed_out: bool| {
            let mut s = Sample::new(0);
            s.set(Metric::WallTime, wall);
            s.timed_out = timed_out;
            s
        };
        let a = [
            run(1.0, false),
            run(2.0, true),
            run(3.0, false),
            run(4.0, false),
        ];
        let b = [
            run(10.0, false),
            run(20.0, false),
            run(30.0, true),
            run(40.0, false),
            run(50.0, false),
        ];
        let (x, y) = block_pairs(&a, &b, Metric::WallTime);
        // Blocks 2 and 3 go (one side timed out each); block 5 has no partner.
        assert_eq!(x, [1.0, 4.0]);
        assert_eq!(y, [10.0, 40.0]);
    }

    #[test]
    fn kernel_counters_are_parsed() {
        let psi = "some avg10=41.13 avg60=17.84 avg300=10.50 total=4418181385\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure_some(psi), Some(4418181385));
        assert_eq!(parse_pressure_some("full total=3\n"), None);
        let stat = "cpu  1331609 36117 203518 537545 6029 0 1949 3035 0 0\n\
                    cpu0 656159 18493 97850 283459 1833 0 461 1529 0 0\n";
        assert_eq!(parse_steal(stat), Some(3035));
        // Kernels before 2.6.11 had no steal column.
        assert_eq!(parse_steal("cpu  1 2 3 4 5 6 7\n"), None);
        assert_eq!(parse_steal("intr 5\n"), None);
    }

    #[test]
    fn the_probe_reads_what_this_machine_has_and_keeps_its_cost() {
        let mut probe = DisturbanceProbe::open();
        eprintln!("read cost (pressure, steal): {:?}", probe.costs());
        let a = probe.read(None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = probe.read(None);
        let d = probe.between(a, b);
        // "some" counts wall time with a task waiting: at most the
        // interval (a slept 20 ms may last longer on a busy machine).
        if let Some(w) = d.cpu_wait {
            assert!((0.0..=1.0).contains(&w), "{d:?}");
        }
        if let Some(s) = d.steal {
            assert!(s >= 0.0, "{d:?}");
        }
        assert_eq!(probe.costs()[0].is_some(), d.cpu_wait.is_some());
        // A run of 1 µs is far too short to pay for any read.
        let skipped = probe.read(Some(1e-6));
        assert_eq!(skipped, DisturbanceCounters::default());
        // Where the machine has no pressure files (kernels before 4.20),
        // and when a source is unaffordable, nothing is made up.
        assert_eq!(
            probe.between(DisturbanceCounters::default(), b),
            Disturbance::default()
        );
    }

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &m in Metric::ALL {
            assert_eq!(Metric::from_name(m.name()), Some(m));
            assert!(seen.insert(m.name()));
            assert_eq!(Metric::ALL[m.index()], m);
        }
        assert_eq!(Metric::from_name("nope"), None);
    }
}
