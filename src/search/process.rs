//! The process measurer: each round of the race an ordinary interleaved
//! session of the values it measures, run by the runner, its samples
//! passed on to the session's sink under the grid's cell indices.

use super::measurer::{Block, Measurer};
use super::options::SearchOptions;
use crate::error::Result;
use crate::metrics::{Metric, Sample};
use crate::run::events::{Event, Observer};
use crate::run::runner::{self, RunOptions};
use crate::run::schedule::RunPolicy;
use crate::run::session::Session;

/// Passes a round's events on under the grid's cell indices.
struct Renumber<'a> {
    inner: &'a mut dyn Observer,
    grid_index: Vec<usize>,
}

impl Observer for Renumber<'_> {
    fn event(&mut self, event: &Event<'_>) {
        let grid = |cell: usize| self.grid_index.get(cell).copied();
        let renumbered = match *event {
            Event::Sample { cell, sample } => grid(cell).map(|cell| Event::Sample { cell, sample }),
            Event::RunStarting {
                cell,
                name,
                output_shown,
            } => grid(cell).map(|cell| Event::RunStarting {
                cell,
                name,
                output_shown,
            }),
            Event::RunEnded { cell } => grid(cell).map(|cell| Event::RunEnded { cell }),
            Event::Measured {
                cell,
                name,
                samples,
                expected_runs,
            } => grid(cell).map(|cell| Event::Measured {
                cell,
                name,
                samples,
                expected_runs,
            }),
            other => Some(other),
        };
        if let Some(e) = renumbered {
            self.inner.event(&e);
        }
    }

    fn watches_runs(&self) -> bool {
        self.inner.watches_runs()
    }
}

/// The real measurer: each round an ordinary interleaved session of the
/// values it measures, so drift does not bend the curve; run k of a value
/// in a round belongs to the round's block k.
pub(super) struct Runner<'a> {
    base: &'a RunOptions,
    sink: &'a mut dyn Observer,
    metric: Metric,
    /// Per operation (see `SearchOptions::per_op`): operations per second
    /// when maximising, else metric / operations.
    per_op: Option<bool>,
    pub(super) samples: Vec<Vec<Sample>>,
    /// The block of each sample.
    blocks: Vec<Vec<Block>>,
    pub(super) last: Option<Session>,
    round: u64,
}

impl<'a> Runner<'a> {
    /// A measurer of the `n` grid values of `base`'s cells for `opts`.
    pub(super) fn new(
        base: &'a RunOptions,
        sink: &'a mut dyn Observer,
        opts: &SearchOptions,
        n: usize,
    ) -> Runner<'a> {
        Runner {
            base,
            sink,
            metric: opts.metric,
            per_op: opts.per_op.then_some(opts.maximize),
            samples: vec![Vec::new(); n],
            blocks: vec![Vec::new(); n],
            last: None,
            round: 0,
        }
    }

    /// The compared value of one run of grid value i, if it counts.
    fn value(&self, i: usize, s: &Sample) -> Option<f64> {
        if !s.counts() {
            return None;
        }
        let v = s.get(self.metric)?;
        let ops = self.base.cells[i].variant.ops.unwrap_or(1).max(1) as f64;
        match self.per_op {
            Some(true) => (v > 0.0).then(|| ops / v),
            Some(false) => Some(v / ops),
            None => Some(v),
        }
    }
}

impl Measurer for Runner<'_> {
    fn values(&self, i: usize) -> Vec<f64> {
        self.samples[i]
            .iter()
            .filter_map(|s| self.value(i, s))
            .collect()
    }

    fn count(&self, i: usize) -> usize {
        self.samples[i].len()
    }

    fn tagged(&self, i: usize) -> Vec<(Block, Option<f64>)> {
        self.blocks[i]
            .iter()
            .zip(&self.samples[i])
            .map(|(&b, s)| (b, self.value(i, s)))
            .collect()
    }

    fn rss_floor(&self) -> Option<f64> {
        self.last.as_ref().and_then(|s| s.rss_floor)
    }

    fn measure(&mut self, points: &[usize], blocks: usize) -> Result<()> {
        if points.is_empty() || blocks == 0 {
            return Ok(());
        }
        let mut cells: Vec<_> = points.iter().map(|&i| self.base.cells[i].clone()).collect();
        // With -S the shell calibration runs in every round, interleaved.
        cells.extend(self.base.cells.iter().filter(|c| c.calibration).cloned());
        let fresh_warmup = points.iter().all(|&i| self.samples[i].is_empty());
        let opts = RunOptions {
            cells,
            policy: RunPolicy {
                exact: Some(blocks),
                ..RunPolicy::default()
            },
            warmup: if fresh_warmup { self.base.warmup } else { 0 },
            seed: self.base.seed.wrapping_add(self.round),
            adaptive: None,
            reference: 0,
            ..self.base.clone()
        };
        let round = self.round;
        self.round += 1;
        // Round cell k is grid cell points[k]; a calibration cell keeps its index.
        let mut grid_index: Vec<usize> = points.to_vec();
        grid_index.extend((0..self.base.cells.len()).filter(|&i| self.base.cells[i].calibration));
        let mut sink = Renumber {
            inner: &mut *self.sink,
            grid_index,
        };
        let mut session = runner::run_observed(&opts, &mut sink)?;
        for (&i, r) in points.iter().zip(session.results.iter_mut()) {
            self.blocks[i].extend((0..r.samples.len()).map(|k| (round, k)));
            self.samples[i].append(&mut r.samples);
        }
        let failed = session.failure.take();
        self.last = Some(session);
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
