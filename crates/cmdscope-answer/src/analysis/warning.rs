//! What the analysis of one benchmark warns about, as types with the
//! numbers each needs; `report::warning` words them (the terminal's
//! "Warning:" lines and the JSON's `warnings`).

/// Whose rules decide when a benchmark's runs are worth a warning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rules {
    /// `cmdscope run`'s, calibrated to be rare on a steady machine.
    #[default]
    Cmdscope,
    /// hyperfine 1.20's, for its front door: a run with a modified z-score
    /// over 10 (its 1.4826 × 10 over the raw MAD, with `f64::EPSILON` for a
    /// MAD of 0) is an outlier, a slow first run when it is the first; any
    /// run through the shell under 5 ms makes the fast-command warning,
    /// when `made` runs at all (its debug mode makes none, and gives none).
    Hyperfine { made: bool },
}

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
    /// hyperfine's rule: `runs` runs through the shell took under 5 ms,
    /// the shell's start-up subtracted.
    UnderFiveMs { name: String, runs: usize },
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
    /// A simulated session's counts differ between runs: `metric` the
    /// first that does, by `spread` ((largest − smallest) / median), and
    /// the cause where cmdscope can name it.
    CountsVary {
        name: String,
        metric: &'static str,
        spread: f64,
        cause: Option<crate::exec::simulate::Varies>,
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
