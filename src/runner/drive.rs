//! The session once its executor exists: [`drive`] is a loop over the
//! scheduler's steps, each handed to the small step handlers of
//! [`Driven`], the session being driven. The handlers of one run are in
//! `one_run`, those of a concurrency batch in `batch`; here are the
//! session's frame (its start, the shared setup, each cell's turn, the
//! end and cleanup) and what both kinds of step share.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::analysis::sequential::{Sequential, LOOKS};
use crate::error::{Error, Result};
use crate::exec::simulate::{OutDir, Varies};
use crate::exec::workdir::RunDir;
use crate::exec::{self, signals, SpawnConfig};
use crate::metrics::{DisturbanceProbe, Metric, Sample};
use crate::run::ahead::Ahead;
use crate::run::concurrent::{Batches, Pool};
use crate::run::events::{Event, Observer};
use crate::run::executor::Executor;
use crate::run::plan::Cell;
use crate::run::preflight;
use crate::run::schedule::{Order, Scheduler, Step, StopReason, CALIBRATION_RUNS};
use crate::run::session::{BatchRecord, CellResult, Session};

use super::start_up::{ended, subtract_shell_overhead};
use super::{check_interleaved_hooks, Machine, RunOptions};

/// The session once its executor exists: the loop over the schedule, each
/// step handed to its handlers (the hooks, a run or a batch and judging
/// it, the stop rules and the looks, the events), then the results.
/// `machine`: the real executor's (None: a test's executor, see
/// [`Machine`]).
pub(crate) fn drive(
    opts: &RunOptions,
    executor: &mut dyn Executor,
    machine: Option<Machine<'_>>,
    counters_unavailable: Vec<(Metric, String)>,
    events: &mut dyn Observer,
) -> Result<Session> {
    let machine = machine.unwrap_or_else(|| Machine::absent(opts.cells.len()));
    let mut session = Driven::new(opts, executor, machine, events);
    // The instance slots stay apart from the session's state: a batch
    // uses them while it changes that state.
    let mut pool = session.batches_plan.map(|_| Pool::new());
    session.announce();
    session.open()?;
    while let Some(turn) = session.next_turn() {
        // A step cut short has already stopped the scheduler: the loop
        // asks it for the next step all the same (it answers Done).
        let _ = session.take(turn, pool.as_mut());
    }
    let rss_floor = session.finish();
    session.clean_up();
    Ok(session.into_session(rss_floor, counters_unavailable))
}

/// One step of the schedule, as the loop hands it to the handlers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Turn {
    pub(super) step: Step,
    /// The step's cell.
    pub(super) c: usize,
    /// A measured run (or batch), not a warm-up.
    pub(super) measured: bool,
}

/// The session being driven: what the step handlers read and change, from
/// the first event to the results.
pub(super) struct Driven<'a> {
    pub(super) opts: &'a RunOptions,
    pub(super) executor: &'a mut dyn Executor,
    pub(super) events: &'a mut dyn Observer,
    /// The real executor's spawner (None: a test's executor).
    pub(super) spawner: Option<&'a exec::Spawner>,
    /// Per cell.
    pub(super) run_dirs: Vec<Option<RunDir>>,
    /// Per cell, shared with the instance slots in concurrency mode.
    pub(super) configs: Vec<Arc<SpawnConfig>>,
    pub(super) sim_dir: Option<OutDir>,
    /// The machine checks' window while it is open, then what it found.
    pub(super) window: Option<preflight::Window>,
    pub(super) checks: Vec<preflight::Check>,
    pub(super) ahead: Option<Ahead>,
    /// Concurrency mode: each of the scheduler's runs is a batch of
    /// completions made N at a time (run::concurrent).
    pub(super) batches_plan: Option<Batches>,
    /// Per cell: its instance slots' working directories, made on first use.
    pub(super) slot_dirs: Vec<Option<Arc<Vec<RunDir>>>>,
    /// Per cell, its measured batches.
    pub(super) batches: Vec<Vec<BatchRecord>>,
    pub(super) scheduler: Scheduler,
    /// Per cell, the warm-up runs made (a failure names its iteration).
    pub(super) warmups_made: Vec<usize>,
    /// Per cell, its measured runs.
    pub(super) samples: Vec<Vec<Sample>>,
    pub(super) failure: Option<Error>,
    /// Processes killed after runs that left them running, per cell name.
    pub(super) leftovers: Vec<(String, usize)>,
    pub(super) started: SystemTime,
    pub(super) interleaved: bool,
    /// The cell whose setup has run and whose cleanup is due.
    pub(super) set_up: Option<usize>,
    /// The next measured run's number in the session.
    pub(super) run_index: u64,
    /// The sequential looks: over runs per block, or in concurrency mode
    /// over batches (analysis::concurrency::look).
    pub(super) adaptive: Option<Sequential>,
    /// One command's next check of its median's precision, in blocks.
    pub(super) next_precision_check: usize,
    /// When the first measured run ended (`--max-time` counts from it).
    pub(super) first_measured: Option<Instant>,
    pub(super) probe: DisturbanceProbe,
    /// The cell of the last step taken (sequential order's current benchmark).
    pub(super) ongoing: Option<usize>,
    /// Per cell, its last run's wall time.
    pub(super) last_wall: Vec<Option<f64>>,
    /// The cells that are not a shell's calibration.
    pub(super) real_cells: Vec<usize>,
}

impl<'a> Driven<'a> {
    /// The session before its first event: the schedule planned, room made
    /// for the runs asked for.
    pub(super) fn new(
        opts: &'a RunOptions,
        executor: &'a mut dyn Executor,
        machine: Machine<'a>,
        events: &'a mut dyn Observer,
    ) -> Self {
        let cells = opts.cells.len();
        let batches_plan = machine.spawner.and_then(|_| {
            (opts.cells.iter())
                .filter_map(|c| c.variant.concurrency)
                .max()
                .map(|largest| Batches::new(largest, opts.policy.exact))
        });
        // Room for the runs asked for, but never in proportion to a count
        // the user typed (`--runs 1e12` must not reserve terabytes): past
        // the cap, the vectors grow as runs are made.
        let room = (opts.policy.exact.unwrap_or(opts.policy.min_runs)).clamp(16, 4096);
        Driven {
            opts,
            executor,
            events,
            spawner: machine.spawner,
            run_dirs: machine.run_dirs,
            configs: machine.configs,
            sim_dir: machine.sim_dir,
            window: machine.window,
            checks: Vec::new(),
            ahead: machine.ahead,
            batches_plan,
            slot_dirs: vec![None; cells],
            batches: vec![Vec::new(); cells],
            scheduler: scheduler_for(opts, batches_plan),
            warmups_made: vec![0; cells],
            samples: (0..cells).map(|_| Vec::with_capacity(room)).collect(),
            failure: None,
            leftovers: Vec::new(),
            started: SystemTime::now(),
            interleaved: opts.order == Order::Interleaved,
            set_up: None,
            run_index: 0,
            adaptive: opts.adaptive.clone(),
            next_precision_check: LOOKS[0],
            first_measured: None,
            probe: DisturbanceProbe::open(),
            ongoing: None,
            last_wall: vec![None; cells],
            real_cells: (0..cells).filter(|&i| !opts.cells[i].calibration).collect(),
        }
    }

    /// Tells the observers the session starts (and, first, that runs may
    /// be made from schedules: the store writer then watches the
    /// spawner's socket); the session's start time is taken here.
    fn announce(&mut self) {
        let schedules = self.ahead.as_ref().is_some_and(Ahead::may_schedule);
        if let Some(spawner) = self.spawner.filter(|_| schedules) {
            self.events.event(&Event::Schedules {
                socket: spawner.socket(),
            });
        }
        self.events.event(&Event::Started {
            expected_runs: self.scheduler.expected_runs(),
        });
        self.started = SystemTime::now();
    }

    /// Setup and cleanup bracket the runs they belong to, as in hyperfine:
    /// in sequential order setup a, runs of a, cleanup a, setup b, ...
    /// (`enter`); in interleaved order (only allowed when every cell has
    /// the same hooks) one setup before all runs, here, and one cleanup
    /// after them. Refused hooks or a failed setup end the session before
    /// its first run: an error returned, the observers told it ended.
    fn open(&mut self) -> Result<()> {
        if !self.interleaved {
            return Ok(());
        }
        let opened = self.shared_setup();
        if opened.is_err() {
            self.check_machine(Duration::ZERO);
            self.events.event(&Event::Finished);
        }
        opened
    }

    /// Interleaved order's one setup, that of the first measured cell.
    fn shared_setup(&mut self) -> Result<()> {
        let opts = self.opts;
        check_interleaved_hooks(&opts.cells)?;
        if let Some(first) = opts.cells.iter().position(|c| !c.calibration) {
            if let Some(hook) = &opts.cells[first].hooks.setup {
                self.executor.hook("setup", hook, first)?;
            }
            self.set_up = Some(first);
        }
        Ok(())
    }

    /// The scheduler's next step, None once it is done. Before it, what
    /// happens between two steps (`between_steps`); with it, in
    /// sequential order, the end of the benchmark the schedule moves on
    /// from.
    fn next_turn(&mut self) -> Option<Turn> {
        self.between_steps();
        let step = self.scheduler.next_step();
        let next = match step {
            Step::Done => None,
            Step::Warmup(c) | Step::Measure(c) => Some(c),
        };
        // In sequential order a benchmark is final once the schedule moves
        // on from it (hyperfine prints its block then, before its cleanup),
        // unless a failure or an interruption cut it short.
        if let Some(prev) = self
            .ongoing
            .filter(|&p| !self.interleaved && next != Some(p))
        {
            if next.is_some() || self.failure.is_none() {
                ended(self.opts, &self.samples, prev, self.events);
            }
        }
        self.ongoing = next.or(self.ongoing);
        match step {
            Step::Done => None,
            Step::Warmup(c) => Some(Turn {
                step,
                c,
                measured: false,
            }),
            Step::Measure(c) => Some(Turn {
                step,
                c,
                measured: true,
            }),
        }
    }

    /// Between two steps the machine checks' window may close, and a
    /// Ctrl-C stops the session.
    fn between_steps(&mut self) {
        // Never while the spawner makes runs handed over: the checks read
        // /proc between two runs.
        if self.ahead.as_ref().is_none_or(Ahead::idle) {
            self.check_machine(preflight::WINDOW);
        }
        // Runs the spawner made from its schedule before Ctrl-C are
        // finished runs (their reports were on their way): taken in first.
        let finished_before = signals::received().is_some()
            && !self.ahead.as_ref().is_none_or(Ahead::idle)
            && (self.spawner).is_some_and(|s| s.finished_before_interrupt().unwrap_or(false));
        if signals::received().is_some() && !finished_before {
            self.stop_interrupted();
        }
    }

    /// One step: the cell's turn begins if it is a new one, then its run,
    /// or in concurrency mode its batch. Break: a failure cut it short.
    fn take(&mut self, turn: Turn, pool: Option<&mut Pool>) -> ControlFlow<()> {
        self.enter(turn.c)?;
        let concurrency = self.opts.cells[turn.c].variant.concurrency;
        if let (Some(n), Some(plan), Some(pool), Some(spawner)) =
            (concurrency, self.batches_plan, pool, self.spawner)
        {
            return self.batch(turn, n, plan, pool, spawner);
        }
        self.run(turn)
    }

    /// In sequential order, a cell's turn: the cleanup of the cell before
    /// it, then its own setup. A failed setup leaves no cleanup due.
    fn enter(&mut self, c: usize) -> ControlFlow<()> {
        if self.interleaved || self.set_up == Some(c) {
            return ControlFlow::Continue(());
        }
        let cells = &self.opts.cells;
        if let Some(prev) = self.set_up.take() {
            if let Some(hook) = &cells[prev].hooks.cleanup {
                let cleaned = self.executor.hook("cleanup", hook, prev);
                self.or_fail(cleaned)?;
            }
        }
        self.set_up = Some(c);
        self.events.event(&Event::Begins { cell: c });
        if let Some(hook) = &cells[c].hooks.setup {
            if let Err(e) = self.executor.hook("setup", hook, c) {
                // Its cleanup is not due: the setup did not complete.
                self.set_up = None;
                return self.fail(e);
            }
        }
        ControlFlow::Continue(())
    }

    /// The session stops with this failure, kept over any before it.
    pub(super) fn stop_failed(&mut self, e: Error) {
        self.failure = Some(e);
        self.scheduler.stop(StopReason::Failure);
    }

    /// The session stops on Ctrl-C.
    pub(super) fn stop_interrupted(&mut self) {
        self.scheduler.stop(StopReason::Interrupted);
        self.failure = Some(Error::Interrupted);
    }

    /// The step ends here with this failure ([`Self::stop_failed`]).
    pub(super) fn fail(&mut self, e: Error) -> ControlFlow<()> {
        self.stop_failed(e);
        ControlFlow::Break(())
    }

    /// What a step needed, or the step ends with its error ([`Self::fail`]).
    pub(super) fn or_fail<T>(&mut self, made: Result<T>) -> ControlFlow<(), T> {
        match made {
            Ok(t) => ControlFlow::Continue(t),
            Err(e) => {
                self.stop_failed(e);
                ControlFlow::Break(())
            }
        }
    }

    /// A run (or a batch) failed as `judge` says: the first failure is
    /// the one kept, and the schedule stops, but the step goes on (its
    /// run is kept).
    pub(super) fn judged(&mut self, failure: Option<Error>) {
        if let Some(e) = failure {
            self.failure.get_or_insert(e);
            self.scheduler.stop(StopReason::Failure);
        }
    }

    /// After a measured run or batch: `--max-time` counts wall-clock time
    /// from the first one.
    pub(super) fn check_deadline(&mut self) {
        let first = *self.first_measured.get_or_insert_with(Instant::now);
        if self.opts.deadline.is_some_and(|d| first.elapsed() >= d) {
            self.scheduler.stop(StopReason::TimeBudget);
        }
    }

    /// [`Event::Measured`]: the step's measured runs are taken in.
    pub(super) fn measured(&mut self, c: usize) {
        self.events.event(&Event::Measured {
            cell: c,
            name: &self.opts.cells[c].name,
            samples: &self.samples[c],
            expected_runs: self.scheduler.expected_runs(),
            cell_runs: self.scheduler.expected_runs_of(c),
        });
    }

    /// Adds `left` processes killed after a run of cell `c` to its count.
    pub(super) fn count_leftovers(&mut self, c: usize, left: usize) {
        if left == 0 {
            return;
        }
        let name = &self.opts.cells[c].name;
        match self.leftovers.iter_mut().find(|(n, _)| n == name) {
            Some((_, k)) => *k += left,
            None => self.leftovers.push((name.clone(), left)),
        }
    }

    /// Closes the machine checks' window once it has been open `at_least`
    /// (between two runs, so reading /proc never overlaps a measurement),
    /// and tells the observers.
    pub(super) fn check_machine(&mut self, at_least: Duration) {
        if self
            .window
            .as_ref()
            .is_some_and(|w| w.elapsed() >= at_least)
        {
            if let Some(w) = self.window.take() {
                self.checks = w.close();
                self.events.event(&Event::Checked {
                    preflight: &self.checks,
                });
            }
        }
    }

    /// The schedule is done: what the spawner still holds is dropped, the
    /// machine checks close if they have not, the observers are told, and
    /// orphans are reaped. Returns the spawner's resident floor.
    fn finish(&mut self) -> Option<f64> {
        // What the spawner still holds is not wanted (the session stopped).
        if let (Some(a), Some(spawner)) = (self.ahead.as_mut(), self.spawner) {
            if let Err(e) = a.cut(spawner) {
                self.failure.get_or_insert(e);
            }
        }
        let rss_floor = self.spawner.and_then(exec::Spawner::peak_resident_bytes);
        self.check_machine(Duration::ZERO);
        self.events.event(&Event::Finished);
        if self.spawner.is_some() {
            exec::reap_orphans();
        }
        rss_floor
    }

    /// The cleanup still due (the last cell's, or interleaved order's
    /// shared one), after the observers were told the session ended.
    fn clean_up(&mut self) {
        let Some(c) = self.set_up else {
            return;
        };
        if let Some(hook) = &self.opts.cells[c].hooks.cleanup {
            if let Err(e) = self.executor.hook("cleanup", hook, c) {
                self.failure.get_or_insert(e);
            }
        }
    }

    /// The result model: every cell's runs and batches, the shell's
    /// start-up subtracted, how the session ended.
    fn into_session(
        self,
        rss_floor: Option<f64>,
        counters_unavailable: Vec<(Metric, String)>,
    ) -> Session {
        let opts = self.opts;
        let mut results: Vec<CellResult> = (opts.cells.iter().cloned())
            .zip(self.samples)
            .zip(self.batches)
            .map(|((cell, samples), batches)| CellResult {
                cell,
                samples,
                batches,
            })
            .collect();
        let shell_overhead = subtract_shell_overhead(&mut results);
        let count_causes = match opts.simulate {
            Some(_) => results
                .iter()
                .filter_map(|r| count_cause(&r.cell))
                .collect(),
            None => Vec::new(),
        };
        let adaptive = self.adaptive.as_ref();
        Session {
            started: self.started,
            results,
            order: opts.order,
            seed: opts.seed,
            stop_reason: self.scheduler.stop_reason(),
            shell: opts.shell.clone(),
            shell_overhead,
            counters_unavailable,
            timeout: opts.timeout,
            failure: self.failure,
            final_alpha: adaptive.map_or(opts.alpha, Sequential::final_level),
            alpha: opts.alpha,
            reference: opts.reference,
            looks: adaptive.map_or(0, Sequential::looks_made),
            rss_floor,
            preflight: self.checks,
            leftovers: self.leftovers,
            simulated: opts.simulate.clone(),
            counted: opts.counted.clone(),
            count_causes,
        }
    }
}

/// The schedule of the session's cells: in concurrency mode its runs are
/// batches; with hyperfine's first-run rule, the shell's calibration has a
/// fixed count, made before the commands' when it comes first.
fn scheduler_for(opts: &RunOptions, batches_plan: Option<Batches>) -> Scheduler {
    let mut scheduler = Scheduler::new(
        opts.cells.len(),
        opts.order,
        batches_plan.map_or(opts.policy, |b| b.policy(opts.policy)),
        opts.warmup,
        opts.seed,
    );
    if opts.policy.first_run {
        for (i, c) in opts.cells.iter().enumerate() {
            if c.calibration {
                scheduler.fix_runs(i, CALIBRATION_RUNS);
            }
        }
    }
    scheduler
}

/// What cmdscope can name, from how a cell is run, of why its simulated
/// counts would vary between runs (`analysis` says it only if they did).
fn count_cause(cell: &Cell) -> Option<(String, Varies)> {
    let program = cell
        .argv
        .first()
        .and_then(|p| exec::resolve_program(p).ok());
    let inherited = match cell.variant.clear_env {
        true => None,
        false => std::env::var_os("PYTHONHASHSEED"),
    };
    crate::exec::simulate::python_hash_seed_unset(
        &cell.command,
        program.as_deref(),
        &cell.env,
        inherited.as_deref(),
    )
    .then(|| (cell.name.clone(), Varies::PythonHashSeed))
}
