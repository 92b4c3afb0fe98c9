//! The one rule of every CI gate: which benchmarks count as compared, and
//! whether the gate passes. `compare --fail-if-slower`, `check` (wall time
//! and concurrency mode's throughput), `check --against history` and
//! `changes --fail-on-new-regression` each build their rows and hand them
//! here; none decides for itself what counts.
//!
//! A benchmark counts as compared on a metric when both sides hold it once
//! and the comparison engine had the values it needs to decide on that
//! metric (`Comparison::lack`: the engine's own rule, not a fixed count:
//! three runs a side for times, more for a discrete metric at a small
//! level, one for exact values). Anything else is *not compared*: the
//! candidate lacks the benchmark, holds it more than once, or holds too few
//! successful runs (they timed out, failed, or the session was
//! interrupted), or a suite partition is missing. A benchmark not compared
//! fails the gate unless the user allowed it to be missing
//! (`--allow-missing NAME|all`).
//!
//! "Not compared" is not "inconclusive": an inconclusive row had the data
//! and its interval is wide. It passes by default (a gate fails on what it
//! shows; a noisy runner must not make CI flaky) and fails with
//! `--inconclusive fail`. A gate that compared nothing fails: it would pass
//! on nothing.

use crate::analysis::comparison::{Comparison, Lack, Verdict};

/// Which side of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Baseline,
    Current,
    Both,
}

/// What one side holds of a benchmark on a metric, beyond the values the
/// engine compared: enough to say why it holds too few.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Side {
    /// How many times the benchmark is in this side (0: absent; more than
    /// one: ambiguous, whichever were compared the other would go unjudged).
    pub copies: usize,
    /// The values the engine compares (successful runs, or batches).
    pub values: usize,
    /// Runs that timed out, and runs that exited with a failure.
    pub timed_out: usize,
    pub failed: usize,
    /// How the side's session ended when it did not finish ("interrupted",
    /// "failed", "unfinished").
    pub ended: Option<String>,
    /// False when the side ran the benchmark but its values are not in the
    /// store (concurrency batches stored before cmdscope kept them).
    pub unstored: bool,
}

impl Side {
    /// A side holding the benchmark once with `values` values.
    pub fn of(values: usize) -> Side {
        Side {
            copies: 1,
            values,
            ..Side::default()
        }
    }
}

/// Why a benchmark was not compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Why {
    /// Not in that side at all.
    Absent(Which),
    /// In that side more than once.
    Duplicated { side: Which, copies: usize },
    /// Fewer values than the metric's test needs (`need` a side; `have`
    /// on the side that lacks them), with what became of the other runs.
    TooFew {
        side: Which,
        need: usize,
        have: usize,
        timed_out: usize,
        failed: usize,
        ended: Option<String>,
    },
    /// Values that are not finite numbers.
    NotFinite,
    /// Values not in the store (concurrency batches stored before cmdscope
    /// kept them).
    NotStored(Which),
    /// A partition of the suite run checked is not in the store.
    PartitionMissing {
        partition: i64,
        partitions: i64,
        status: String,
    },
}

/// Whether a benchmark counts as compared on a metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Standing {
    /// The engine had what it needs: its verdict stands (an inconclusive
    /// one too, whose interval is wide).
    Compared,
    NotCompared(Why),
}

/// The one rule: whether a benchmark counts as compared, from what each
/// side holds of it and the engine's comparison (None when none was made).
pub fn standing(base: &Side, cand: &Side, result: Option<&Comparison>) -> Standing {
    let both = |b: bool, c: bool| match (b, c) {
        (true, true) => Some(Which::Both),
        (true, false) => Some(Which::Baseline),
        (false, true) => Some(Which::Current),
        (false, false) => None,
    };
    if let Some(side) = both(base.copies == 0, cand.copies == 0) {
        return Standing::NotCompared(Why::Absent(side));
    }
    if let Some(side) = both(base.copies > 1, cand.copies > 1) {
        let copies = base.copies.max(cand.copies);
        return Standing::NotCompared(Why::Duplicated { side, copies });
    }
    if let Some(side) = both(base.unstored, cand.unstored) {
        return Standing::NotCompared(Why::NotStored(side));
    }
    let lack = match result {
        Some(c) => c.lack,
        // No comparison made although both sides hold the benchmark: as
        // good as no values.
        None => Some(Lack::Values {
            need: crate::analysis::comparison::MIN_N,
            have: 0,
        }),
    };
    match lack {
        None => Standing::Compared,
        Some(Lack::NotFinite) => Standing::NotCompared(Why::NotFinite),
        Some(Lack::Values { need, .. }) => {
            // The side (or sides) short of what the test needs; the other
            // side's runs are said when it is the baseline alone.
            let side = both(base.values < need, cand.values < need).unwrap_or(Which::Both);
            let short = if side == Which::Baseline { base } else { cand };
            Standing::NotCompared(Why::TooFew {
                side,
                need,
                have: short.values,
                timed_out: short.timed_out,
                failed: short.failed,
                ended: short.ended.clone(),
            })
        }
    }
}

/// `--inconclusive`: what an inconclusive row does to the gate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inconclusive {
    /// It passes (counted in the header).
    #[default]
    Pass,
    /// It fails the gate.
    Fail,
}

/// What the user allowed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `--allow-missing`: benchmark names (identities) that may be not
    /// compared, or `all`.
    pub allow_missing: Vec<String>,
    pub inconclusive: Inconclusive,
}

/// The word `--allow-missing` takes for every benchmark.
pub const ALL: &str = "all";

impl Options {
    /// Whether `benchmark` may be not compared. A missing partition names
    /// no benchmark: only `all` allows it.
    pub fn allows(&self, benchmark: &str, why: &Why) -> bool {
        self.allow_missing
            .iter()
            .any(|a| a == ALL || (a == benchmark && !matches!(why, Why::PartitionMissing { .. })))
    }
}

/// One row as a gate sees it: a benchmark on one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub benchmark: String,
    /// The metric's name as the comparison carries it (`wall_time`,
    /// `throughput`, `sec/op`).
    pub metric: String,
    pub standing: Standing,
    /// The engine's verdict when compared.
    pub verdict: Option<Verdict>,
    /// Fails the engine's gate rule (`comparison::fails_gate`).
    pub regression: bool,
}

impl Row {
    /// A row from the engine's comparison (None when none was made) and
    /// what each side holds: its standing by [`standing`].
    pub fn new(
        benchmark: &str,
        metric: &str,
        (base, cand): (&Side, &Side),
        result: Option<&Comparison>,
        regression: bool,
    ) -> Row {
        let standing = standing(base, cand, result);
        let compared = standing == Standing::Compared;
        Row {
            benchmark: benchmark.to_string(),
            metric: metric.to_string(),
            verdict: result.filter(|_| compared).map(|c| c.verdict),
            regression: compared && regression,
            standing,
        }
    }

    /// A row that could not be compared at all (a missing partition).
    pub fn not_compared(benchmark: &str, metric: &str, why: Why) -> Row {
        Row {
            benchmark: benchmark.to_string(),
            metric: metric.to_string(),
            standing: Standing::NotCompared(why),
            verdict: None,
            regression: false,
        }
    }

    pub fn is_compared(&self) -> bool {
        self.standing == Standing::Compared
    }

    pub fn is_inconclusive(&self) -> bool {
        self.is_compared() && self.verdict == Some(Verdict::Inconclusive)
    }

    pub fn why(&self) -> Option<&Why> {
        match &self.standing {
            Standing::NotCompared(w) => Some(w),
            Standing::Compared => None,
        }
    }
}

/// A row not compared, and whether the user allowed it.
#[derive(Clone, Debug, PartialEq)]
pub struct NotCompared {
    pub benchmark: String,
    pub metric: String,
    pub why: Why,
    pub allowed: bool,
}

/// What a gate found: the counts its header says and whether it passes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Rows compared (decided or inconclusive).
    pub compared: usize,
    /// Of those, inconclusive (the data were there, the interval wide).
    pub inconclusive: usize,
    /// Rows failing the gate rule.
    pub regressions: usize,
    /// Rows not compared, in the order given.
    pub not_compared: Vec<NotCompared>,
    pub inconclusive_fails: bool,
}

impl Outcome {
    /// Rows not compared that the user did not allow: each fails the gate.
    pub fn unexcused(&self) -> impl Iterator<Item = &NotCompared> {
        self.not_compared.iter().filter(|n| !n.allowed)
    }

    /// Rows not compared that `--allow-missing` allowed.
    pub fn excused(&self) -> usize {
        self.not_compared.iter().filter(|n| n.allowed).count()
    }

    /// Rows with a verdict: compared and not inconclusive.
    pub fn decided(&self) -> usize {
        self.compared - self.inconclusive
    }

    /// Inconclusive rows that fail the gate (`--inconclusive fail`).
    pub fn failing_inconclusive(&self) -> usize {
        if self.inconclusive_fails {
            self.inconclusive
        } else {
            0
        }
    }

    /// The gate passes: nothing regressed, every row not compared was
    /// allowed, no inconclusive row fails it, and something was compared.
    pub fn passes(&self) -> bool {
        self.regressions == 0
            && self.unexcused().next().is_none()
            && self.failing_inconclusive() == 0
            && self.compared > 0
    }
}

/// Judges a gate's rows under the user's options.
pub fn judge(rows: &[Row], opts: &Options) -> Outcome {
    let mut out = Outcome {
        inconclusive_fails: opts.inconclusive == Inconclusive::Fail,
        ..Outcome::default()
    };
    for r in rows {
        match &r.standing {
            Standing::Compared => {
                out.compared += 1;
                out.inconclusive += usize::from(r.is_inconclusive());
                out.regressions += usize::from(r.regression);
            }
            Standing::NotCompared(why) => out.not_compared.push(NotCompared {
                benchmark: r.benchmark.clone(),
                metric: r.metric.clone(),
                why: why.clone(),
                allowed: opts.allows(&r.benchmark, why),
            }),
        }
    }
    out
}

/// `--allow-missing` names that match no row's benchmark: probably a typo
/// (said in a note, never an error: a benchmark may come back).
pub fn unmatched<'a>(opts: &'a Options, names: &[&str]) -> Vec<&'a str> {
    opts.allow_missing
        .iter()
        .filter(|a| a.as_str() != ALL && !names.contains(&a.as_str()))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests;
