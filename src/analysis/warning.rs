//! What the analysis of one benchmark warns about, as types with the
//! numbers each needs; `report::warning` words them (the terminal's
//! "Warning:" lines and the JSON's `warnings`).

/// One warning about a benchmark's runs; `name` is the benchmark's.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// The first run took `ratio` times the median: cold caches.
    ColdFirstRun { name: String, ratio: f64 },
    /// `count` of `runs` runs are far outliers.
    Outliers {
        name: String,
        count: usize,
        runs: usize,
    },
    /// The median is under a tenth of the subtracted shell start-up,
    /// `shell` seconds.
    UnderShell { name: String, shell: f64 },
    /// The median is under 50 µs (no shell).
    TooShort { name: String },
    /// `failed` of `runs` runs exited otherwise than with status 0, with
    /// these ends (each once).
    Failed {
        name: String,
        failed: usize,
        runs: usize,
        ends: Vec<End>,
    },
    /// `count` outlier runs left out on request.
    Removed { name: String, count: usize },
    /// `count` runs timed out after `after` seconds.
    TimedOut {
        name: String,
        count: usize,
        after: f64,
    },
    /// Runs left `processes` processes running.
    Leftovers { name: String, processes: usize },
    /// The runs slid by `change` (a share of the median, + slower) over
    /// the session.
    Trend {
        name: String,
        change: f64,
        effect: DriftEffect,
    },
    /// `runs` of the first five runs were `faster` (a share of the median)
    /// faster than the median and every later run.
    FastStart {
        name: String,
        runs: usize,
        faster: f64,
        effect: DriftEffect,
    },
}

/// How a failed run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum End {
    Status(i32),
    Signal(i32),
    Unknown,
}

/// What a drift means for the session's comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriftEffect {
    /// One benchmark: nothing is compared.
    Alone,
    /// Interleaved runs: every command saw the same drift.
    Interleaved,
    /// Sequential runs: the drift biases the comparison.
    Sequential,
}
