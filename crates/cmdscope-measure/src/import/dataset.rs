//! A format-neutral view of benchmark results: what `compare`, `import` and
//! the store work on, whatever file or run the numbers came from.

use serde::{Deserialize, Serialize};

/// All samples of one metric of one benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Metric name: cmdscope's (`time_wall_clock`, ...) or, for Go benchmarks,
    /// benchstat's unit name (`sec/op`, `B/op`, `allocs/op`, `MB/s`, custom).
    pub metric: String,
    /// Unit symbol of the values: "s", "B", "" (count), or a custom unit.
    pub unit: String,
    /// True when larger values are better (throughput such as MB/s).
    pub higher_is_better: bool,
    /// True when the values are exact, not samples of noise (Go's
    /// `Unit NAME assume=exact`): any change is a change, no test needed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    pub values: Vec<f64>,
}

/// One benchmark (a command, or a Go benchmark name) with its samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Benchmark {
    pub name: String,
    /// Parameter name and value pairs, in the order they were declared.
    pub parameters: Vec<(String, String)>,
    pub series: Vec<Series>,
}

impl Benchmark {
    pub fn series(&self, metric: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.metric == metric)
    }
}

/// Everything read from one results file (or produced by one session).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Where the data came from (a file path or a session label), used as a column title.
    pub source: String,
    /// Format it was read from: "cmdscope", "hyperfine-1", "hyperfine-2", "go".
    pub format: String,
    /// cmdscope's own peak resident size in that session (its JSON's
    /// `session.memory_peak_resident_floor`): peak memory at or below it
    /// is the kernel's floor, not the command's.
    #[serde(default)]
    pub rss_floor: Option<f64>,
    pub benchmarks: Vec<Benchmark>,
}
