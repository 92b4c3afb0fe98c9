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
}

impl Metric {
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
