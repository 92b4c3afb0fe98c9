//! What the race's rounds measured, taken in round by round from each
//! round's results: every grid value's runs, batches and compared values
//! (tagged with their blocks), and the log of the rounds the store keeps
//! (`RaceRound`). The process measurer takes in the rounds it runs, the
//! replay the rounds it reads back, through the same `take`, so both give
//! the race the same values.

use super::measurer::Block;
use super::options::SearchOptions;
use crate::analysis::source::Source;
use crate::metrics::Sample;
use crate::run::plan::Cell;
use crate::run::session::{BatchRecord, CellResult};
use crate::store::RaceRound;

pub(super) struct Rounds {
    source: Source,
    /// Per operation (see `SearchOptions::per_op`): operations per second
    /// when maximising, else metric / operations.
    per_op: Option<bool>,
    /// Each grid value's `--ops` (1 without).
    ops: Vec<f64>,
    pub(super) samples: Vec<Vec<Sample>>,
    /// In concurrency mode, the batches of each grid value's samples.
    pub(super) batches: Vec<Vec<BatchRecord>>,
    /// Each grid value's compared values (one per run, or per batch) with
    /// their blocks, in the order measured.
    units: Vec<Vec<(Block, Option<f64>)>>,
    /// The rounds taken in, in order.
    pub(super) log: Vec<RaceRound>,
}

impl Rounds {
    /// Nothing measured yet of the `n` grid values of `cells` (the grid's
    /// cells first, in grid order).
    pub(super) fn new(cells: &[Cell], opts: &SearchOptions, n: usize) -> Rounds {
        Rounds {
            source: opts.source.clone(),
            per_op: opts.per_op.then_some(opts.maximize),
            ops: (cells.iter().take(n))
                .map(|c| c.variant.ops.unwrap_or(1).max(1) as f64)
                .collect(),
            samples: vec![Vec::new(); n],
            batches: vec![Vec::new(); n],
            units: vec![Vec::new(); n],
            log: Vec::new(),
        }
    }

    pub(super) fn source(&self) -> &Source {
        &self.source
    }

    /// The compared value of a grid value's metric value `v`.
    fn per_op(&self, i: usize, v: f64) -> Option<f64> {
        let ops = self.ops.get(i).copied().unwrap_or(1.0);
        match self.per_op {
            Some(true) => (v > 0.0).then(|| ops / v),
            Some(false) => Some(v / ops),
            None => Some(v),
        }
    }

    /// Takes in one round that ran `blocks` blocks: round cell k is grid
    /// value `points[k]`, its results `results[k]` (emptied here), with
    /// `series(i, runs)` a `Series` source's values of grid value i for
    /// the round's last `runs` runs. `stopped`: the round ended the
    /// session (a failure, an interruption); `rss_floor`: the round's.
    pub(super) fn take(
        &mut self,
        points: &[usize],
        blocks: usize,
        results: &mut [CellResult],
        series: impl Fn(usize, usize) -> Vec<f64>,
        stopped: bool,
        rss_floor: Option<f64>,
    ) {
        let round = self.log.len() as u64;
        let mut runs = Vec::with_capacity(points.len());
        for (&i, r) in points.iter().zip(results.iter_mut()) {
            let series = match self.source {
                Source::Series(_) => series(i, r.samples.len()),
                _ => Vec::new(),
            };
            for (block, v) in self.source.tagged(r, &series) {
                let v = v.and_then(|v| self.per_op(i, v));
                self.units[i].push(((round, block), v));
            }
            let offset = self.samples[i].len();
            for mut b in r.batches.drain(..) {
                b.first_sample += offset;
                // Blocks number a value's batches over the whole search.
                b.block = self.batches[i].len() + 1;
                self.batches[i].push(b);
            }
            runs.push(r.samples.len());
            self.samples[i].append(&mut r.samples);
        }
        self.log.push(RaceRound {
            points: points.to_vec(),
            blocks,
            runs,
            stopped,
            rss_floor,
        });
    }

    pub(super) fn values(&self, i: usize) -> Vec<f64> {
        crate::analysis::source::values(&self.units[i])
    }

    pub(super) fn count(&self, i: usize) -> usize {
        self.units[i].len()
    }

    pub(super) fn tagged(&self, i: usize) -> Vec<(Block, Option<f64>)> {
        self.units[i].clone()
    }

    /// The last round's peak-memory floor.
    pub(super) fn rss_floor(&self) -> Option<f64> {
        self.log.last().and_then(|r| r.rss_floor)
    }
}

/// A measurer that keeps what it measured in `Rounds` (the process
/// measurer, the replay).
pub(super) trait Recorded: super::measurer::Measurer {
    fn rounds(&mut self) -> &mut Rounds;
}

/// `Measurer` and `Recorded` for a type with a `rounds: Rounds` field and
/// a `round(points, blocks) -> Result<usize>` method making (or reading
/// back) one round: the live search and its replay read what was measured
/// from their rounds alike, so the replay cannot drift from the live run.
macro_rules! measured_in_rounds {
    ($t:ty) => {
        impl super::measurer::Measurer for $t {
            fn values(&self, i: usize) -> Vec<f64> {
                self.rounds.values(i)
            }

            fn count(&self, i: usize) -> usize {
                self.rounds.count(i)
            }

            fn tagged(&self, i: usize) -> Vec<(super::measurer::Block, Option<f64>)> {
                self.rounds.tagged(i)
            }

            fn rss_floor(&self) -> Option<f64> {
                self.rounds.rss_floor()
            }

            fn measure(&mut self, points: &[usize], blocks: usize) -> crate::error::Result<()> {
                super::rounds::in_rounds(points, blocks, |points, left| self.round(points, left))
            }
        }

        impl super::rounds::Recorded for $t {
            fn rounds(&mut self) -> &mut super::rounds::Rounds {
                &mut self.rounds
            }
        }
    };
}
pub(super) use measured_in_rounds;

/// Measures `blocks` blocks of `points` in as many rounds as `round`
/// (which runs at most the blocks asked and returns those it ran) takes.
pub(super) fn in_rounds(
    points: &[usize],
    blocks: usize,
    mut round: impl FnMut(&[usize], usize) -> crate::error::Result<usize>,
) -> crate::error::Result<()> {
    if points.is_empty() {
        return Ok(());
    }
    let mut left = blocks;
    while left > 0 {
        left -= round(points, left)?.clamp(1, left);
    }
    Ok(())
}
