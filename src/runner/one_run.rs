//! One step of the schedule made as one run (warm-up or measured): its
//! prepare hook, the run (alone, or from the spawner's schedule), taking
//! it in, judging it, its conclude hook, and for a measured run keeping
//! it and the sequential looks over runs.

use std::ops::ControlFlow;

use crate::error::Result;
use crate::exec::simulate::OutDir;
use crate::exec::{self, Outcome, Output};
use crate::metrics::{Metric, Sample};
use crate::run::events::Event;
use crate::run::executor::Iteration;
use crate::run::preflight;
use crate::run::schedule::{Step, StopReason};

use super::drive::{Driven, Turn};
use super::judge;

impl Driven<'_> {
    /// One run of the turn's cell and everything around it. Break: a
    /// failure or an interruption cut it short (the run is then not kept).
    pub(super) fn run(&mut self, turn: Turn) -> ControlFlow<()> {
        let prepare_time = self.prepare(turn.c)?;
        let (mut sample, ran) = self.make_run(turn);
        self.take_in_run(turn.c, &mut sample, ran)?;
        self.record_run(turn, sample, prepare_time);
        ControlFlow::Continue(())
    }

    /// Before the run: its prepare hook, whose wall time (returned) counts
    /// in hyperfine's first-run rule, and a fresh working directory.
    fn prepare(&mut self, c: usize) -> ControlFlow<(), f64> {
        let cell = &self.opts.cells[c];
        let mut prepare_time = 0.0;
        if let Some(hook) = &cell.hooks.prepare {
            let prepared = self.executor.hook("prepare", hook, c);
            prepare_time = self.or_fail(prepared)?;
        }
        if let Some(dir) = &self.run_dirs[c] {
            let fresh = dir.fresh();
            self.or_fail(fresh)?;
        }
        ControlFlow::Continue(prepare_time)
    }

    /// The run, announced and ended to the observers: made by the spawner
    /// from its schedule where it may be, else alone. Every run ends with
    /// its whole tree: what it left running is killed now, before anything
    /// else runs.
    fn make_run(&mut self, turn: Turn) -> (Sample, Result<Outcome>) {
        let c = turn.c;
        let cell = &self.opts.cells[c];
        self.events.event(&Event::RunStarting {
            cell: c,
            name: &cell.name,
            output_shown: *self.opts.output_of(cell) == Output::Inherit && !cell.calibration,
        });
        let mut sample = Sample::new(self.run_index);
        let ran = match self.run_ahead(turn.step, &mut sample) {
            // Made by the spawner from its schedule: only for runs with
            // nothing to read around them.
            Some(ran) => ran,
            None => self.run_alone(turn, &mut sample),
        };
        self.events.event(&Event::RunEnded { cell: c });
        let left = self.spawner.map_or(0, exec::Spawner::kill_leftovers);
        self.count_leftovers(c, left);
        (sample, ran)
    }

    /// The step's run from the spawner's schedule (`run::ahead`), handing
    /// it the next steps when it needs them; None: the run is made alone.
    fn run_ahead(&mut self, step: Step, sample: &mut Sample) -> Option<Result<Outcome>> {
        let window_due = (self.window.as_ref()).map(|w| w.elapsed() >= preflight::WINDOW);
        let ahead = self.ahead.as_mut()?;
        let spawner = self.spawner?;
        let (probe, last_wall, events) = (&self.probe, &self.last_wall, &mut *self.events);
        ahead.take(
            step,
            &self.scheduler,
            spawner,
            self.executor.schedulable()?,
            &|c| probe.reads_nothing(last_wall[c]),
            window_due,
            &mut |first, steps| events.event(&Event::Scheduled { first, steps }),
            sample,
        )
    }

    /// The run made alone through the executor, with the machine's
    /// counters read around it only where reading them costs at most
    /// 0.2 % of the cell's last run (`DisturbanceProbe`).
    fn run_alone(&mut self, turn: Turn, sample: &mut Sample) -> Result<Outcome> {
        let c = turn.c;
        let before = self.probe.read(self.last_wall[c]);
        let iteration = Iteration::next(turn.measured, self.samples[c].len(), self.warmups_made[c]);
        let ran = self.executor.run(c, iteration, sample);
        let after = self.probe.read(self.last_wall[c]);
        sample.disturbance = self.probe.between(before, after);
        ran
    }

    /// A run that could not be made, or was interrupted, ends the session
    /// unkept; one made leaves its working directory, and under
    /// `--simulate` its out-files, whose counts go in its sample.
    fn take_in_run(
        &mut self,
        c: usize,
        sample: &mut Sample,
        ran: Result<Outcome>,
    ) -> ControlFlow<()> {
        if self.or_fail(ran)? == Outcome::Interrupted {
            self.stop_interrupted();
            return ControlFlow::Break(());
        }
        if let Some(dir) = &self.run_dirs[c] {
            dir.remove();
        }
        // The run's out-files, warm-ups' too (so none is counted twice).
        if let Some(counted) = self.sim_dir.as_ref().map(OutDir::take) {
            match counted {
                Ok(counts) => counts.set(sample),
                // A run killed at its timeout wrote no complete counts.
                Err(_) if sample.timed_out => {}
                Err(e) => return self.fail(e),
            }
        }
        ControlFlow::Continue(())
    }

    /// The run made: the scheduler and the observers learn of it, its
    /// conclude hook runs, it is judged, and a measured run is kept.
    fn record_run(&mut self, turn: Turn, sample: Sample, prepare_time: f64) {
        let (c, measured) = (turn.c, turn.measured);
        let wall = sample.get(Metric::WallTime).unwrap_or(0.0);
        self.last_wall[c] = sample.get(Metric::WallTime);
        self.scheduler.record(turn.step, wall);
        if measured {
            self.events.event(&Event::Sample {
                cell: c,
                sample: &sample,
            });
        }
        let conclude_time = self.conclude(c);
        if measured {
            // Added in hyperfine's order (the same sum to the last bit).
            (self.scheduler).record_cost(turn.step, wall + prepare_time + conclude_time);
        }
        let iteration = Iteration::next(measured, self.samples[c].len(), self.warmups_made[c]);
        self.warmups_made[c] += usize::from(!measured);
        let failed = judge(
            &sample,
            &self.opts.cells[c],
            self.opts,
            measured,
            iteration.index(),
        );
        self.judged(failed);
        if measured {
            self.keep_run(c, sample);
        }
    }

    /// After the run: its conclude hook, whose wall time (returned) counts
    /// in hyperfine's first-run rule. A failed one stops the session, but
    /// the run was made: it is kept.
    fn conclude(&mut self, c: usize) -> f64 {
        let Some(hook) = &self.opts.cells[c].hooks.conclude else {
            return 0.0;
        };
        match self.executor.hook("conclude", hook, c) {
            Ok(t) => t,
            Err(e) => {
                self.stop_failed(e);
                0.0
            }
        }
    }

    /// A measured run kept: numbered, then the stop rules that read the
    /// runs (the wall-clock budget, the looks), then the observers told.
    fn keep_run(&mut self, c: usize, sample: Sample) {
        self.samples[c].push(sample);
        self.run_index += 1;
        self.check_deadline();
        // In concurrency mode the looks are over batches (`look_batches`):
        // a single run there is a shell calibration's, not a block's.
        if self.batches_plan.is_none() {
            self.look_runs();
        }
        self.measured(c);
    }

    /// The sequential looks over runs: whether the session has measured
    /// enough to stop.
    fn look_runs(&mut self) {
        let Some(seq) = self.adaptive.as_mut() else {
            return;
        };
        let (real_cells, samples) = (&self.real_cells, &self.samples);
        let blocks = self.scheduler.blocks();
        if real_cells.len() == 1 {
            // One command has no test whose level looks would spend: its
            // median's interval is checked after every ~10 % more runs,
            // not only at the planned looks (which end at 160 runs, far
            // too few for 1 % on a fast command).
            if blocks >= self.next_precision_check {
                self.next_precision_check = blocks + blocks.div_ceil(10);
                let walls = crate::analysis::values(&samples[real_cells[0]], Metric::WallTime);
                if seq.precise(&walls) {
                    self.scheduler.stop(StopReason::Precision);
                }
            }
        } else if real_cells.iter().all(|&i| samples[i].len() == blocks) && seq.is_look(blocks) {
            // Paired by block per comparison: a timed-out run drops its
            // block for that pair only.
            let cells: Vec<&[Sample]> = real_cells.iter().map(|&i| samples[i].as_slice()).collect();
            if seq.look_runs(&cells, self.opts.reference) {
                self.scheduler.stop(StopReason::Precision);
            }
        }
    }
}
