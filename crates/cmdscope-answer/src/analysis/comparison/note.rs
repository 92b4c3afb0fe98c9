//! What a comparison says besides its verdict, as types: why it has no
//! verdict, what limits the one it has, and what to do to decide. The
//! engine fills them in with the numbers they need; `report::comparison`
//! words them, once, for every output (the JSON's `note` included).

use crate::analysis::modes::SpeedModes;

use super::Test;

/// A comparison's note: its caveats in the order they are said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Note(pub Vec<Caveat>);

impl Note {
    pub fn one(caveat: Caveat) -> Note {
        Note(vec![caveat])
    }
}

/// One reason a comparison gives with (or instead of) its verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum Caveat {
    /// Both sides sit at cmdscope's own floor of the metric.
    AtFloor,
    /// Fewer values than any verdict needs; `discrete_at`: the level at
    /// which a discrete metric's exact rank test needs `need`.
    TooFew {
        need: usize,
        have: usize,
        per: Per,
        discrete_at: Option<f64>,
    },
    /// A significance level outside (0, 1).
    NoLevel {
        level: f64,
    },
    NotFinite,
    /// The test gave no answer on these values.
    NotComputable {
        test: Test,
    },
    /// Exact counts that repeated in every run: `n` values, no test.
    IdenticalCounts {
        n: usize,
        per: Per,
    },
    /// Counts of a program whose counts vary, repeated in every one of
    /// `n` runs of each side and different between the sides: a
    /// repetition that happens by chance at most `chance` of the time.
    /// `need`: the runs per side that would make it evidence at the
    /// comparison's level, when `n` do not (no verdict then).
    RepeatedCounts {
        n: usize,
        per: Per,
        chance: f64,
        need: Option<usize>,
    },
    /// Significant at `level`, but the whole interval lies within
    /// ±`precision`.
    BelowPrecision {
        level: f64,
        precision: f64,
    },
    /// Neither significant nor within ±`precision`.
    TooWide {
        interval: Interval,
        precision: f64,
        advice: Advice,
    },
    /// The interval excludes no change but the test missed its level.
    NotReached {
        interval: Interval,
        level: f64,
        advice: Advice,
    },
    /// The test reached its level but the rank statistics' interval, at
    /// `n` `unit`, still includes no change.
    RankDiscreteness {
        interval: Interval,
        n: usize,
        unit: &'static str,
    },
    /// Values the user said are exact (`assume=exact`), compared without
    /// a test; `vary`: they differ between runs (their medians compared).
    AssumedExact {
        vary: bool,
    },
    /// Runs from different sessions tested as one: the interval leaves
    /// out session-to-session variation.
    SessionVariationLeftOut,
}

/// What the values counted were: pairs of them, or each side's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Per {
    pub paired: bool,
    /// `Settings::counted`: "runs", "batches".
    pub counted: &'static str,
}

/// The interval a caveat names: of the ratio, or of the change on the
/// test's scale when there is no ratio (`of_change`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub confidence: f64,
    pub bounds: [f64; 2],
    pub of_change: bool,
}

/// What would decide an inconclusive comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Advice {
    /// Run `runs` per cell; `took`: how long that would take, when known.
    RunLonger { runs: usize, took: Option<Took> },
    /// Values that are not runs (batches): about `per_cell` of them.
    MoreValues {
        per_cell: usize,
        counted: &'static str,
    },
    /// More than 10,000 values would be needed.
    TooMany { counted: &'static str },
}

/// The time the advised runs would take, and the way to get them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Took {
    pub seconds: f64,
    pub way: Way,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// `--until-decided`.
    UntilDecided,
    /// The session already ran until decided: a longer `--max-time`.
    LongerMaxTime,
}

/// What the noise of an inconclusive wall-time comparison looked like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoiseCause {
    /// The runs fell into two speeds (blocks mixing them left out).
    TwoSpeeds(SpeedModes),
    /// Some task waited for a CPU during `cpu_wait` (median share) of the
    /// runs' time.
    Busy { cpu_wait: f64 },
}
