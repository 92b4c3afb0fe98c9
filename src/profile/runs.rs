//! The sampled runs of one phase of a profile: every cell in interleaved
//! shuffled blocks (`run::schedule`), each run sampled and turned into
//! stacks of interned frames, a few unsampled runs beside them when asked
//! (to tell whether sampling slowed the command), and an optional look
//! after each whole block that may end the phase.

use std::time::Instant;

use crate::error::Result;
use crate::exec::signals;
use crate::run::plan::Cell;
use crate::run::schedule::{Order, RunPolicy, Scheduler, Step};

use super::{check_run, jit, sampler, stacks_of, symbols, Interner, RunStacks};

/// Symbols, frames and what the kernel allowed, shared by every phase so
/// that a frame keeps its id.
#[derive(Default)]
pub(super) struct Sampling {
    pub sym: symbols::Symbolizer,
    pub interner: Interner,
    /// Context switches were sampled in every run so far.
    pub off_cpu_missing: bool,
}

/// One phase's runs, in block order, per cell.
pub(super) struct Phase {
    pub runs: Vec<Vec<RunStacks>>,
    /// Wall times of the unsampled runs, per cell.
    pub plain: Vec<Vec<f64>>,
    pub interrupted: bool,
    /// The deadline passed before the runs asked for were made.
    pub out_of_time: bool,
    /// A look ended the phase.
    pub settled: bool,
    pub seconds: f64,
}

/// How one phase runs.
pub(super) struct PhasePlan<'a> {
    pub setup: &'a sampler::Setup,
    pub blocks: usize,
    pub seed: u64,
    /// Unsampled runs per cell, one after each of the first blocks' runs.
    pub plain: usize,
    pub deadline: Option<Instant>,
    /// The runtimes were asked to name their code: remove the files they
    /// wrote for it once each run is named.
    pub jit_files: bool,
}

impl Sampling {
    /// Samples every cell `plan.blocks` times in interleaved shuffled
    /// blocks; after each whole block, `look(runs, blocks)` may end the
    /// phase (true), as may the deadline or a signal.
    pub fn phase(
        &mut self,
        cells: &[Cell],
        launches: &[sampler::Launch],
        plan: &PhasePlan,
        look: &mut dyn FnMut(&[Vec<RunStacks>], usize) -> bool,
    ) -> Result<Phase> {
        let started = Instant::now();
        let mut schedule = scheduler(cells.len(), plan.blocks, plan.seed);
        let mut phase = Phase {
            runs: vec![Vec::new(); cells.len()],
            plain: vec![Vec::new(); cells.len()],
            interrupted: false,
            out_of_time: false,
            settled: false,
            seconds: 0.0,
        };
        let mut blocks = 0;
        while let Some((step, c)) = next_run(&mut schedule) {
            let since = std::time::SystemTime::now();
            let raw = sampler::sample_run(plan.setup, &launches[c])?;
            let code = jit::JitCode::of_run(
                raw.maps
                    .iter()
                    .map(|(&p, ms)| (p, ms.iter().map(|m| m.path.as_str()))),
            );
            if raw.interrupted {
                phase.interrupted = true;
                break;
            }
            check_run(&cells[c], &raw)?;
            self.off_cpu_missing |= !raw.off_cpu_sampled;
            let mut stacks = stacks_of(&raw, plan.setup, &mut self.sym, &code, &mut self.interner);
            if plan.jit_files {
                let pids = raw.maps.keys().copied().chain([raw.pid]);
                jit::remove_written(pids, &code.files, since);
            }
            stacks.throttled = raw.throttled;
            phase.runs[c].push(stacks);
            schedule.record(step, raw.wall);
            if phase.plain[c].len() < plan.plain {
                let since = std::time::SystemTime::now();
                let raw = sampler::plain_run(&launches[c])?;
                if plan.jit_files {
                    jit::remove_written([raw.pid].into_iter(), &[], since);
                }
                if raw.interrupted {
                    phase.interrupted = true;
                    break;
                }
                check_run(&cells[c], &raw)?;
                phase.plain[c].push(raw.wall);
            }
            if signals::received().is_some() {
                phase.interrupted = true;
                break;
            }
            if schedule.blocks() > blocks {
                blocks = schedule.blocks();
                if look(&phase.runs, blocks) {
                    phase.settled = true;
                    break;
                }
                if plan.deadline.is_some_and(|d| Instant::now() >= d) {
                    phase.out_of_time = blocks < plan.blocks;
                    break;
                }
            }
        }
        phase.seconds = started.elapsed().as_secs_f64();
        Ok(phase)
    }
}

/// Every one of `cells` cells `blocks` times in interleaved shuffled blocks.
pub(super) fn scheduler(cells: usize, blocks: usize, seed: u64) -> Scheduler {
    let policy = RunPolicy {
        exact: Some(blocks),
        min_runs: blocks,
        max_runs: Some(blocks),
        min_time: 0.0,
        first_run: false,
    };
    Scheduler::new(cells, Order::Interleaved, policy, 0, seed)
}

/// The next run to make (its step, to record, and its cell), or None
/// when every block is done.
pub(super) fn next_run(schedule: &mut Scheduler) -> Option<(Step, usize)> {
    loop {
        match schedule.next_step() {
            Step::Done => return None,
            step @ Step::Measure(c) => return Some((step, c)),
            _ => continue,
        }
    }
}
