//! The process measurer: each round of the race an ordinary interleaved
//! session of the values it measures, run by the runner, its samples
//! passed on to the session's sink (and the monitor) under the grid's cell
//! indices; the values compared are the `Source`'s, per run or per batch.

use super::options::SearchOptions;
use super::rounds::Rounds;
use crate::analysis::source::{RunSeries, Source};
use crate::error::Result;
use crate::run::concurrent::Batches;
use crate::run::events::{Event, Fanout, InstanceSink, Observer};
use crate::run::schedule::{RunPolicy, Step};
use crate::run::session::Session;
use crate::runner::{self, RunOptions};

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
            Event::Batch { cell, batch } => grid(cell).map(|cell| Event::Batch { cell, batch }),
            Event::Measured {
                cell,
                name,
                samples,
                expected_runs,
                cell_runs,
            } => grid(cell).map(|cell| Event::Measured {
                cell,
                name,
                samples,
                expected_runs,
                cell_runs,
            }),
            Event::Begins { cell } => grid(cell).map(|cell| Event::Begins { cell }),
            Event::Ended { cell, samples } => grid(cell).map(|cell| Event::Ended { cell, samples }),
            Event::Scheduled { first, steps } => {
                // A step of a cell outside the grid is stored nowhere.
                let steps: Vec<Step> = steps
                    .iter()
                    .map(|&step| match step {
                        Step::Measure(c) => grid(c).map_or(Step::Done, Step::Measure),
                        Step::Warmup(c) => grid(c).map_or(Step::Done, Step::Warmup),
                        Step::Done => Step::Done,
                    })
                    .collect();
                self.inner.event(&Event::Scheduled {
                    first,
                    steps: &steps,
                });
                return;
            }
            other => Some(other),
        };
        if let Some(e) = renumbered {
            self.inner.event(&e);
        }
    }

    fn watches_runs(&self) -> bool {
        self.inner.watches_runs()
    }

    fn instances(&mut self, cell: usize) -> Option<std::sync::Arc<dyn InstanceSink>> {
        let cell = self.grid_index.get(cell).copied()?;
        self.inner.instances(cell)
    }
}

/// An observer of the runs that also counts values per run beside them
/// (the monitor): what a search of a `monitor_NAME` reads.
pub trait SeriesObserver: Observer + RunSeries {}

impl<T: Observer + RunSeries> SeriesObserver for T {}

/// The real measurer: each round an ordinary interleaved session of the
/// values it measures, so drift does not bend the curve; run k of a value
/// in a round belongs to the round's block k, and so does its batch k in
/// concurrency mode. What is compared of each run or batch is the
/// `Source`'s (taken in by `Rounds`).
pub(super) struct Runner<'a> {
    base: &'a RunOptions,
    sink: &'a mut dyn Observer,
    /// The monitor a `Series` source reads; it observes every run (before
    /// `sink`, as in a session without a search).
    series: Option<&'a mut dyn SeriesObserver>,
    pub(super) rounds: Rounds,
    pub(super) last: Option<Session>,
    round: u64,
}

impl<'a> Runner<'a> {
    /// A measurer of the `n` grid values of `base`'s cells for `opts`.
    pub(super) fn new(
        base: &'a RunOptions,
        sink: &'a mut dyn Observer,
        series: Option<&'a mut dyn SeriesObserver>,
        opts: &SearchOptions,
        n: usize,
    ) -> Runner<'a> {
        Runner {
            base,
            sink,
            series,
            rounds: Rounds::new(&base.cells, opts, n),
            last: None,
            round: 0,
        }
    }

    /// Runs one round of `blocks` blocks: per run, or in concurrency mode
    /// per batch; returns the blocks run (a round of batches runs at most
    /// what the runner cuts one fixed run count into).
    fn round(&mut self, points: &[usize], blocks: usize) -> Result<usize> {
        let (exact, blocks) = if self.rounds.source().per_batch() {
            // Every value makes the same completions per batch (the
            // runner's size for the round's largest N), `blocks` batches
            // of them when the runner cuts that many.
            let largest = points
                .iter()
                .filter_map(|&i| self.base.cells[i].variant.concurrency)
                .max()
                .unwrap_or(1);
            let size = Batches::new(largest, None).size;
            let fits = |k: usize| Batches::new(largest, Some(k * size)).size == size;
            let k = (1..=blocks).rev().find(|&k| fits(k)).unwrap_or(1);
            (k * size, k)
        } else {
            (blocks, blocks)
        };
        let mut cells: Vec<_> = points.iter().map(|&i| self.base.cells[i].clone()).collect();
        // With -S the shell calibration runs in every round, interleaved.
        cells.extend(self.base.cells.iter().filter(|c| c.calibration).cloned());
        let fresh_warmup = points.iter().all(|&i| self.rounds.samples[i].is_empty());
        let opts = RunOptions {
            cells,
            policy: RunPolicy {
                exact: Some(exact),
                ..RunPolicy::default()
            },
            warmup: if fresh_warmup { self.base.warmup } else { 0 },
            seed: self.base.seed.wrapping_add(self.round),
            adaptive: None,
            reference: 0,
            ..self.base.clone()
        };
        self.round += 1;
        // Round cell k is grid cell points[k]; a calibration cell keeps its index.
        let mut grid_index: Vec<usize> = points.to_vec();
        grid_index.extend((0..self.base.cells.len()).filter(|&i| self.base.cells[i].calibration));
        let mut observers: Vec<&mut dyn Observer> = Vec::with_capacity(2);
        if let Some(m) = self.series.as_deref_mut() {
            observers.push(m);
        }
        observers.push(&mut *self.sink);
        let mut sink = Renumber {
            inner: &mut Fanout(observers),
            grid_index,
        };
        // The display sees the round's own cells, as the round numbers them.
        let mut progress = runner::progress_for(&opts);
        let mut session = runner::run_observed(&opts, &mut Fanout(vec![&mut progress, &mut sink]))?;
        let failed = session.failure.take();
        // A monitor's counts of grid value i end with this round's runs.
        let (source, monitor) = (self.rounds.source().clone(), self.series.as_deref());
        let series = |i: usize, runs: usize| match (&source, monitor) {
            (Source::Series(name), Some(m)) => {
                let all = m.series(name, i);
                all[all.len().saturating_sub(runs)..].to_vec()
            }
            _ => Vec::new(),
        };
        self.rounds.take(
            points,
            blocks,
            &mut session.results,
            series,
            failed.is_some(),
            session.rss_floor,
        );
        self.last = Some(session);
        match failed {
            Some(e) => Err(e),
            None => Ok(blocks),
        }
    }
}

super::rounds::measured_in_rounds!(Runner<'_>);
