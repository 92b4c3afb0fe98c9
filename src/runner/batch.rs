//! One step of the schedule made as a batch, in concurrency mode: N
//! instances at a time in the instance slots (`run::concurrent`), the
//! batch judged as its runs would be, a measured batch's instances kept
//! as runs with the batch's record, and the sequential looks over
//! batches.

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::error::Result;
use crate::exec::workdir::RunDir;
use crate::exec::{self, Outcome, Output};
use crate::run::concurrent::{self, Batch, Batches, Instances, Pool};
use crate::run::events::Event;
use crate::run::executor::Iteration;
use crate::run::plan::Cell;
use crate::run::schedule::{Order, StopReason};
use crate::run::session::BatchRecord;

use super::drive::{Driven, Turn};
use super::judge;

impl Driven<'_> {
    /// The turn's batch of `n` at a time, with the slots of `pool`, and all
    /// that goes with it. Break: it could not be made.
    pub(super) fn batch(
        &mut self,
        turn: Turn,
        n: usize,
        plan: Batches,
        pool: &mut Pool,
        spawner: &exec::Spawner,
    ) -> ControlFlow<()> {
        let (batch, left) = self.make_batch(turn, n, plan, pool, spawner)?;
        self.take_in_batch(turn, n, batch, left);
        ControlFlow::Continue(())
    }

    /// The batch, announced to the observers: as many completions as the
    /// plan gives this block (a warm-up batch: the plan's size), each
    /// instance in its slot's working directory. Returns it with the count
    /// of processes its instances left running, killed.
    fn make_batch(
        &mut self,
        turn: Turn,
        n: usize,
        plan: Batches,
        pool: &mut Pool,
        spawner: &exec::Spawner,
    ) -> ControlFlow<(), (Batch, usize)> {
        let (c, opts) = (turn.c, self.opts);
        let cell = &opts.cells[c];
        let shown = *opts.output_of(cell) == Output::Inherit;
        self.events.event(&Event::RunStarting {
            cell: c,
            name: &cell.name,
            output_shown: shown,
        });
        let dirs = slot_dirs_for(&mut self.slot_dirs, c, n, cell);
        let dirs = self.or_fail(dirs)?;
        let done = self.samples[c].len();
        let want = if turn.measured {
            // --max-runs counts completions: the last batch makes only
            // what is left of it.
            let left = opts.policy.max_runs.map_or(usize::MAX, |m| m - done.min(m));
            plan.next(done).min(left)
        } else {
            plan.size
        };
        let hooks = Instances {
            cell: cell.clone(),
            input: opts.input.clone(),
            show_output: shown,
            dirs,
        };
        // A measured batch's instances reach the store as each ends.
        let sink = (turn.measured.then(|| self.events.instances(c)).flatten()).map(|to| {
            concurrent::Sink {
                to,
                first_run_index: self.run_index,
            }
        });
        let config = self.configs[c].clone();
        let made = pool.run_batch(
            c,
            config,
            hooks,
            n,
            want,
            &|| spawner.kill_leftovers(),
            sink,
        );
        self.or_fail(made)
    }

    /// The batch made: a failure or an interruption in it stops the
    /// session, the scheduler learns its time, it is judged, and a
    /// measured batch is kept.
    fn take_in_batch(&mut self, turn: Turn, n: usize, mut batch: Batch, left: usize) {
        let (c, measured) = (turn.c, turn.measured);
        self.events.event(&Event::RunEnded { cell: c });
        self.count_leftovers(c, left);
        if let Some(e) = batch.failure.take() {
            self.stop_failed(e);
        }
        if (batch.instances.iter()).any(|i| i.outcome == Outcome::Interrupted) {
            self.stop_interrupted();
        }
        self.scheduler.record(turn.step, batch.elapsed);
        // Warm-up instances are judged as measured ones are: a command
        // that fails while warming up ends the session here, not after
        // the measured batches it would fail as well.
        let iteration = Iteration::next(measured, self.samples[c].len(), self.warmups_made[c]);
        self.warmups_made[c] += usize::from(!measured);
        let (cell, opts) = (&self.opts.cells[c], self.opts);
        let failed = (batch.instances.iter())
            .find_map(|i| judge(&i.sample, cell, opts, measured, iteration.index()));
        self.judged(failed);
        if measured {
            self.keep_batch(c, n, batch);
        }
    }

    /// A measured batch kept: its instances numbered as runs, then its
    /// record, then the stop rules (the wall-clock budget, the looks),
    /// then the observers told.
    fn keep_batch(&mut self, c: usize, n: usize, batch: Batch) {
        let first_sample = self.samples[c].len();
        let mut spans = Vec::with_capacity(batch.instances.len());
        for mut inst in batch.instances {
            inst.sample.run_index = self.run_index;
            self.run_index += 1;
            self.events.event(&Event::Sample {
                cell: c,
                sample: &inst.sample,
            });
            spans.push(inst.span);
            self.samples[c].push(inst.sample);
        }
        // Every block runs each cell once: the cell's batches count its
        // blocks.
        let block = self.batches[c].len() + 1;
        self.batches[c].push(BatchRecord {
            concurrency: n,
            block,
            first_sample,
            spans,
            busy: batch.busy,
            elapsed: batch.elapsed,
            host: batch.host,
        });
        if let Some(b) = self.batches[c].last() {
            self.events.event(&Event::Batch { cell: c, batch: b });
        }
        self.check_deadline();
        self.look_batches();
        self.measured(c);
    }

    /// The sequential looks in concurrency mode count batches: once every
    /// cell has its batch of the block, whether the session has measured
    /// enough to stop.
    fn look_batches(&mut self) {
        let Some(seq) = self.adaptive.as_mut() else {
            return;
        };
        let blocks = self.scheduler.blocks();
        let (real_cells, batches) = (&self.real_cells, &self.batches);
        if !real_cells.iter().all(|&i| batches[i].len() == blocks) {
            return;
        }
        let cells: Vec<(Option<usize>, &[BatchRecord])> = (real_cells.iter())
            .map(|&i| {
                (
                    self.opts.cells[i].variant.concurrency,
                    batches[i].as_slice(),
                )
            })
            .collect();
        let paired = self.opts.order == Order::Interleaved;
        if crate::analysis::concurrency::look(seq, &cells, self.opts.reference, paired) {
            self.scheduler.stop(StopReason::Precision);
        }
    }
}

/// The cell's per-slot working directories, made on first use: each of its
/// N instances at once has its own, as each run would.
fn slot_dirs_for(
    dirs: &mut [Option<Arc<Vec<RunDir>>>],
    c: usize,
    n: usize,
    cell: &Cell,
) -> Result<Arc<Vec<RunDir>>> {
    if let Some(d) = &dirs[c] {
        if d.is_empty() || d.len() >= n {
            return Ok(d.clone());
        }
    }
    let v = &cell.variant;
    let made = match &v.workdir {
        Some(w) => {
            let creds = v.user.as_deref().map(exec::resolve_user).transpose()?;
            (0..n)
                .map(|slot| {
                    RunDir::for_slot(c, slot, w, v.workdir_template.as_deref(), creds.as_ref())
                })
                .collect::<Result<Vec<_>>>()?
        }
        None => Vec::new(),
    };
    let made = Arc::new(made);
    dirs[c] = Some(made.clone());
    Ok(made)
}
