//! Drives a benchmark session: prepares cells, runs the hooks (setup,
//! prepare, conclude, cleanup), asks the scheduler what to run next, makes
//! the sequential looks (asking `analysis::sequential`), subtracts the
//! shell's start-up and stops cleanly on failure, timeout or interruption.
//! It fills the `session` model and emits one stream of [`Event`]s, which
//! the progress display and the caller's observers (the store recorder,
//! the monitor) consume. No statistics of its own and no formatting here:
//! what is shown is `progress`'s.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::analysis::sequential::Sequential;
use crate::error::{Error, OptionError, Result};
use crate::exec::perf::Availability;
use crate::exec::workdir::RunDir;
use crate::exec::{self, signals, Input, Outcome, Output, Prepared, SpawnConfig};
use crate::metrics::{Metric, Sample};
use crate::run::ahead::Ahead;
use crate::run::concurrent::{self, Batches, Instances, Pool};
use crate::run::events::{Event, Fanout, Observer};
use crate::run::executor::{Debug, Executor, Iteration, Spawned};
use crate::run::plan::Cell;
use crate::run::preflight;
use crate::run::progress::{HyperfineBars, Phases, Progress};
use crate::run::schedule::{Order, RunPolicy, Scheduler, Step, StopReason, CALIBRATION_RUNS};
use crate::run::session::{BatchRecord, CellResult, Session};
use start_up::{calibrates, ended, subtract_shell_overhead};

/// Which non-zero exits are tolerated. `cli::run` parses it from
/// -i/--ignore-failure, next to the flag.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum IgnoreFailure {
    #[default]
    None,
    All,
    Codes(Vec<i32>),
}

impl IgnoreFailure {
    fn tolerates(&self, s: &Sample) -> bool {
        if s.timed_out {
            return true; // timeouts have their own policy
        }
        match (self, s.exit_code) {
            (_, Some(0)) => true,
            (IgnoreFailure::All, _) => true,
            (IgnoreFailure::Codes(codes), Some(c)) => codes.contains(&c),
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub cells: Vec<Cell>,
    pub policy: RunPolicy,
    pub order: Order,
    pub warmup: usize,
    pub seed: u64,
    pub timeout: Option<Duration>,
    pub stop_on_timeout: bool,
    pub ignore_failure: IgnoreFailure,
    pub input: Input,
    pub output: Output,
    /// `--output` given once per command: indexed by `Cell::template`
    /// (empty: `output` for all).
    pub outputs: Vec<Output>,
    pub counters: bool,
    pub show_progress: bool,
    /// Whether the machine checks' warnings go above the progress bar
    /// (`cmdscope hyperfine` prints none: hyperfine has no such checks;
    /// the exports keep them).
    pub machine_warnings: bool,
    /// hyperfine's bars in place of cmdscope's (`cmdscope hyperfine`).
    pub hyperfine_bars: Option<HyperfineBars>,
    /// The shell used with `-S`, if any (the last cell is then its calibration).
    pub shell: Option<String>,
    /// Adaptive stopping (interleaved order only): the sequential rule.
    pub adaptive: Option<Sequential>,
    /// Index of the reference cell for comparisons.
    pub reference: usize,
    /// Significance level asked for.
    pub alpha: f64,
    /// Wall-clock time after which measuring stops (`--max-time`), counted
    /// from the first measured run.
    pub deadline: Option<Duration>,
    /// `--isolate`: the CPU cmdscope and its helpers keep (the cells'
    /// `--cpus` lists hold the others).
    pub isolate: Option<usize>,
    /// `--simulate`: every run under cachegrind, its counts in the sample.
    pub simulate: Option<crate::exec::simulate::Simulation>,
    /// `--counted` (or `--simulate`): what counts the runs, and why.
    pub counted: Option<crate::run::counted::Counted>,
    /// hyperfine's `--debug-mode` (the front door's testing aid): nothing
    /// is run, a command `sleep X` takes X s (`executor::Debug`).
    pub debug: bool,
    /// hyperfine's per-run variables (`executor::hyperfine_variables`).
    pub hyperfine_variables: bool,
}

impl RunOptions {
    /// Where this cell's output goes.
    pub fn output_of(&self, cell: &Cell) -> &Output {
        if cell.calibration {
            // The shell's start-up prints nothing, and must not empty
            // an --output file between the command's runs.
            return &Output::Null;
        }
        self.outputs.get(cell.template).unwrap_or(&self.output)
    }
}

/// Whether every measured cell has the same setup and cleanup, so that one
/// setup before all interleaved runs and one cleanup after them bracket
/// every cell's runs. Cells whose setups differ can only be bracketed in
/// sequential order.
pub fn hooks_shared(cells: &[Cell]) -> bool {
    let mut real = cells.iter().filter(|c| !c.calibration);
    let Some(first) = real.next() else {
        return true;
    };
    real.all(|c| c.hooks.setup == first.hooks.setup && c.hooks.cleanup == first.hooks.cleanup)
}

/// Interleaved order for these cells, or the one error that says why not.
pub fn check_interleaved_hooks(cells: &[Cell]) -> Result<()> {
    if hooks_shared(cells) {
        Ok(())
    } else {
        Err(OptionError::HooksDifferInterleaved.into())
    }
}

/// Runs a whole session. Errors before the first run (bad command, bad
/// file) are returned; errors after it end up in `Session::failure` so that
/// the finished runs can still be reported and exported.
///
/// `observer` sees every event of the session as it happens (after the
/// progress display).
pub fn run_observed(opts: &RunOptions, observer: &mut dyn Observer) -> Result<Session> {
    let mut progress = Progress::new(opts.show_progress, opts.machine_warnings);
    if let Some(bars) = opts.hyperfine_bars {
        let calibration: Vec<bool> = opts.cells.iter().map(|c| c.calibration).collect();
        let calibrated_by = (opts.cells.iter())
            .map(|cell| (opts.cells.iter()).position(|k| k.calibration && calibrates(k, cell)))
            .collect();
        let min_runs = opts.policy.exact.unwrap_or(opts.policy.min_runs);
        progress = progress.hyperfine(Phases::new(
            bars.green,
            opts.warmup,
            min_runs,
            calibration,
            calibrated_by,
        ));
    }
    let mut events = Fanout(vec![&mut progress, observer]);
    let events = &mut events;
    signals::install();
    exec::become_subreaper();

    // Counted by hardware: `--counters`' counters, user space only.
    let counters = opts.counters.then(|| match &opts.counted {
        Some(c) if c.by == crate::run::counted::By::Hardware => {
            Availability::probe().user_space_only()
        }
        _ => Availability::probe(),
    });
    let counters_unavailable = counters
        .as_ref()
        .map(|a| a.unavailable.clone())
        .unwrap_or_default();

    // The machine checks' window opens on another thread while the
    // commands are prepared, and closes between runs (see `check_machine`).
    let pinned: Option<Vec<usize>> = {
        let lists: Vec<&Vec<usize>> = opts
            .cells
            .iter()
            .filter_map(|c| c.variant.cpus.as_ref())
            .collect();
        (!lists.is_empty()).then(|| lists.into_iter().flatten().copied().collect())
    };
    let window = preflight::start(pinned);
    let spawner = std::rc::Rc::new(exec::Spawner::start(opts.timeout.is_some())?);
    let sim_dir = opts
        .simulate
        .as_ref()
        .map(|_| crate::exec::simulate::OutDir::create())
        .transpose()?;
    let mut run_dirs = Vec::with_capacity(opts.cells.len());
    let mut prepared = Vec::with_capacity(opts.cells.len());
    let mut configs = Vec::with_capacity(opts.cells.len());
    for (i, cell) in opts.cells.iter().enumerate() {
        let v = &cell.variant;
        let run_dir = match &v.workdir {
            Some(w) => {
                let creds = v.user.as_deref().map(exec::resolve_user).transpose()?;
                Some(RunDir::new(
                    i,
                    w,
                    v.workdir_template.as_deref(),
                    creds.as_ref(),
                )?)
            }
            None => None,
        };
        let config = SpawnConfig {
            env: cell.env.clone(),
            input: opts.input.clone(),
            output: opts.output_of(cell).clone(),
            timeout: opts.timeout,
            counters: counters.clone(),
            proc_io: true,
            clear_env: v.clear_env,
            env_size: v.env_size,
            cwd: run_dir.as_ref().map(|d| d.path.clone()),
            user: v.user.clone(),
            cpus: v.cpus.clone(),
            nice: v.nice,
            ..SpawnConfig::new(match (&opts.simulate, &sim_dir) {
                (Some(sim), Some(dir)) => sim.wrap(dir.path(), &cell.argv)?,
                _ => cell.argv.clone(),
            })
        };
        prepared.push(Prepared::new(&spawner, &config)?);
        // Shared with the instance slots in concurrency mode.
        configs.push(Arc::new(config));
        run_dirs.push(run_dir);
    }

    let shown = opts
        .cells
        .iter()
        .map(|c| *opts.output_of(c) == Output::Inherit)
        .collect();
    let (mut spawned, mut debug);
    let executor: &mut dyn Executor = if opts.debug {
        debug = Debug::new(&opts.cells, opts.shell.as_deref())?;
        &mut debug
    } else {
        spawned = Spawned::new(&spawner, &opts.cells, &opts.input, shown, prepared)
            .with_hyperfine_variables(opts.hyperfine_variables);
        &mut spawned
    };
    let schedulable: Option<Vec<bool>> = executor
        .schedulable()
        .map(|p| p.iter().map(Prepared::schedulable).collect());

    // Runs handed to the spawner ahead (run::ahead): only where the steps
    // do not depend on the runs' times and nothing but the run happens
    // between two runs, and only the real executor's. Simulated runs are
    // read between runs: never scheduled ahead. CMDSCOPE_NO_SCHEDULE=1
    // runs every step alone (to compare the two paths).
    let ahead = (opts.policy.exact.is_some()
        && schedulable.is_some()
        && opts.simulate.is_none()
        && opts.adaptive.is_none()
        && opts.deadline.is_none()
        && matches!(
            opts.ignore_failure,
            IgnoreFailure::None | IgnoreFailure::All
        )
        && !events.watches_runs()
        && std::env::var_os("CMDSCOPE_NO_SCHEDULE").is_none_or(|v| v == "0"))
    .then(|| {
        let eligible = opts
            .cells
            .iter()
            .zip(&run_dirs)
            .zip(schedulable.iter().flatten())
            .map(|((cell, dir), &p)| {
                p && dir.is_none()
                    && cell.hooks.prepare.is_none()
                    && cell.hooks.conclude.is_none()
                    && cell.variant.concurrency.is_none()
            })
            .collect();
        let hooks_between = opts.order == Order::Sequential
            && opts
                .cells
                .iter()
                .any(|c| c.hooks.setup.is_some() || c.hooks.cleanup.is_some());
        Ahead::new(
            eligible,
            opts.ignore_failure == IgnoreFailure::None,
            hooks_between,
        )
    });
    let window = Some(window.opened());
    if let Some(cpu) = opts.isolate {
        // After the commands were prepared: their --cpus lists were
        // checked against every CPU cmdscope may use.
        crate::run::isolate::pin_harness(cpu)?;
    }
    let machine = Machine {
        spawner: Some(&*spawner),
        run_dirs,
        configs,
        sim_dir,
        window,
        ahead,
    };
    drive(opts, executor, Some(machine), counters_unavailable, events)
}

/// What only the real executor brings to a session: the spawner helper and
/// what was made with it. Without it (a test's executor) every run is made
/// through [`Executor::run`], one at a time: no runs ahead, no working
/// directories, no simulation out-files, no concurrency slots (concurrency
/// needs processes in parallel), no machine checks, no leftovers to kill.
pub(crate) struct Machine<'a> {
    spawner: Option<&'a exec::Spawner>,
    /// Per cell.
    run_dirs: Vec<Option<RunDir>>,
    /// Per cell, shared with the instance slots in concurrency mode.
    configs: Vec<Arc<SpawnConfig>>,
    sim_dir: Option<crate::exec::simulate::OutDir>,
    /// The machine checks' window, open.
    window: Option<preflight::Window>,
    ahead: Option<Ahead>,
}

impl Machine<'_> {
    fn absent(cells: usize) -> Self {
        Machine {
            spawner: None,
            run_dirs: (0..cells).map(|_| None).collect(),
            configs: Vec::new(),
            sim_dir: None,
            window: None,
            ahead: None,
        }
    }
}

/// The session once its executor exists: the loop over the schedule, the
/// hooks, judging each run, the stop rules and the looks, the events, and
/// the results. `machine`: the real executor's (None: a test's executor,
/// see [`Machine`]).
pub(crate) fn drive(
    opts: &RunOptions,
    executor: &mut dyn Executor,
    machine: Option<Machine<'_>>,
    counters_unavailable: Vec<(Metric, String)>,
    events: &mut dyn Observer,
) -> Result<Session> {
    let Machine {
        spawner,
        run_dirs,
        configs,
        sim_dir,
        mut window,
        mut ahead,
    } = machine.unwrap_or_else(|| Machine::absent(opts.cells.len()));
    let mut checks: Vec<preflight::Check> = Vec::new();

    // Concurrency mode: each of the scheduler's runs is a batch of
    // completions made N at a time (run::concurrent).
    let batches_plan = spawner.and_then(|_| {
        opts.cells
            .iter()
            .filter_map(|c| c.variant.concurrency)
            .max()
            .map(|largest| Batches::new(largest, opts.policy.exact))
    });
    let mut pool = batches_plan.map(|_| Pool::new());
    let mut slot_dirs: Vec<Option<Arc<Vec<RunDir>>>> = vec![None; opts.cells.len()];
    let mut batches: Vec<Vec<BatchRecord>> = vec![Vec::new(); opts.cells.len()];
    let mut scheduler = Scheduler::new(
        opts.cells.len(),
        opts.order,
        batches_plan.map_or(opts.policy, |b| b.policy(opts.policy)),
        opts.warmup,
        opts.seed,
    );
    if opts.policy.first_run {
        // hyperfine's calibration: a fixed count, before the commands'
        // when the calibration cell comes first.
        for (i, c) in opts.cells.iter().enumerate() {
            if c.calibration {
                scheduler.fix_runs(i, CALIBRATION_RUNS);
            }
        }
    }
    // Room for the runs asked for, but never in proportion to a count the
    // user typed (`--runs 1e12` must not reserve terabytes): past the cap,
    // the vectors grow as runs are made.
    let room = opts
        .policy
        .exact
        .unwrap_or(opts.policy.min_runs)
        .clamp(16, 4096);
    // Per cell, the warm-up runs made (a failure names its iteration).
    let mut warmups_made = vec![0usize; opts.cells.len()];
    let mut samples: Vec<Vec<Sample>> = opts
        .cells
        .iter()
        .map(|_| Vec::with_capacity(room))
        .collect();
    let mut failure = None;
    // Processes killed after runs that left them running, per cell name.
    let mut leftovers: Vec<(String, usize)> = Vec::new();

    if let Some(spawner) = spawner.filter(|_| ahead.as_ref().is_some_and(Ahead::may_schedule)) {
        events.event(&Event::Schedules {
            socket: spawner.socket(),
        });
    }
    events.event(&Event::Started {
        expected_runs: scheduler.expected_runs(),
    });

    let started = SystemTime::now();
    // Setup and cleanup bracket the runs they belong to, as in hyperfine:
    // in sequential order setup a, runs of a, cleanup a, setup b, ...; in
    // interleaved order (only allowed when every cell has the same hooks)
    // one setup before all runs and one cleanup after them.
    let interleaved = opts.order == Order::Interleaved;
    if interleaved {
        if let Err(e) = check_interleaved_hooks(&opts.cells) {
            check_machine(&mut window, &mut checks, events, Duration::ZERO);
            events.event(&Event::Finished);
            return Err(e);
        }
    }
    // The cell whose setup has run and whose cleanup is due.
    let mut set_up: Option<usize> = None;
    if interleaved {
        if let Some(first) = opts.cells.iter().position(|c| !c.calibration) {
            if let Some(hook) = &opts.cells[first].hooks.setup {
                if let Err(e) = executor.hook("setup", hook, first) {
                    check_machine(&mut window, &mut checks, events, Duration::ZERO);
                    events.event(&Event::Finished);
                    return Err(e);
                }
            }
            set_up = Some(first);
        }
    }

    let mut run_index = 0u64;
    // The sequential looks: over runs per block, or in concurrency mode
    // over batches (analysis::concurrency::look).
    let mut adaptive = opts.adaptive.clone();
    let mut next_precision_check = crate::analysis::sequential::LOOKS[0];
    let mut first_measured: Option<std::time::Instant> = None;
    let mut probe = crate::metrics::DisturbanceProbe::open();
    // The cell of the last step taken (sequential order's current benchmark).
    let mut ongoing: Option<usize> = None;
    let mut last_wall: Vec<Option<f64>> = vec![None; opts.cells.len()];
    let real_cells: Vec<usize> = (0..opts.cells.len())
        .filter(|&i| !opts.cells[i].calibration)
        .collect();
    loop {
        // Never while the spawner makes runs handed over: the checks read
        // /proc between two runs.
        if ahead.as_ref().is_none_or(Ahead::idle) {
            check_machine(&mut window, &mut checks, events, preflight::WINDOW);
        }
        // Runs the spawner made from its schedule before Ctrl-C are
        // finished runs (their reports were on their way): taken in first.
        let finished_before = signals::received().is_some()
            && !ahead.as_ref().is_none_or(Ahead::idle)
            && spawner.is_some_and(|s| s.finished_before_interrupt().unwrap_or(false));
        if signals::received().is_some() && !finished_before {
            scheduler.stop(StopReason::Interrupted);
            failure = Some(Error::Interrupted);
        }
        let step = scheduler.next_step();
        let next = match step {
            Step::Done => None,
            Step::Warmup(c) | Step::Measure(c) => Some(c),
        };
        // In sequential order a benchmark is final once the schedule moves
        // on from it (hyperfine prints its block then, before its cleanup),
        // unless a failure or an interruption cut it short.
        if let Some(prev) = ongoing.filter(|&p| !interleaved && next != Some(p)) {
            if next.is_some() || failure.is_none() {
                ended(opts, &samples, prev, events);
            }
        }
        ongoing = next.or(ongoing);
        let (c, measured) = match step {
            Step::Done => break,
            Step::Warmup(c) => (c, false),
            Step::Measure(c) => (c, true),
        };
        let cell = &opts.cells[c];
        if !interleaved && set_up != Some(c) {
            if let Some(prev) = set_up.take() {
                if let Some(hook) = &opts.cells[prev].hooks.cleanup {
                    if let Err(e) = executor.hook("cleanup", hook, prev) {
                        failure = Some(e);
                        scheduler.stop(StopReason::Failure);
                        continue;
                    }
                }
            }
            set_up = Some(c);
            events.event(&Event::Begins { cell: c });
            if let Some(hook) = &cell.hooks.setup {
                if let Err(e) = executor.hook("setup", hook, c) {
                    failure = Some(e);
                    // Its cleanup is not due: the setup did not complete.
                    set_up = None;
                    scheduler.stop(StopReason::Failure);
                    continue;
                }
            }
        }
        if let (Some(n), Some(plan), Some(pool), Some(spawner)) = (
            cell.variant.concurrency,
            batches_plan,
            pool.as_mut(),
            spawner,
        ) {
            events.event(&Event::RunStarting {
                cell: c,
                name: &cell.name,
                output_shown: *opts.output_of(cell) == Output::Inherit,
            });
            let dirs = match slot_dirs_for(&mut slot_dirs, c, n, cell) {
                Ok(d) => d,
                Err(e) => {
                    failure = Some(e);
                    scheduler.stop(StopReason::Failure);
                    continue;
                }
            };
            let done = samples[c].len();
            let want = if measured {
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
                show_output: *opts.output_of(cell) == Output::Inherit,
                dirs,
            };
            // A measured batch's instances reach the store as each ends.
            let sink = measured
                .then(|| events.instances(c))
                .flatten()
                .map(|to| concurrent::Sink {
                    to,
                    first_run_index: run_index,
                });
            let (batch, left) = match pool.run_batch(
                c,
                configs[c].clone(),
                hooks,
                n,
                want,
                &|| spawner.kill_leftovers(),
                sink,
            ) {
                Ok(b) => b,
                Err(e) => {
                    failure = Some(e);
                    scheduler.stop(StopReason::Failure);
                    continue;
                }
            };
            events.event(&Event::RunEnded { cell: c });
            count_leftovers(&mut leftovers, &cell.name, left);
            if let Some(e) = batch.failure {
                failure = Some(e);
                scheduler.stop(StopReason::Failure);
            }
            if batch
                .instances
                .iter()
                .any(|i| i.outcome == Outcome::Interrupted)
            {
                scheduler.stop(StopReason::Interrupted);
                failure = Some(Error::Interrupted);
            }
            scheduler.record(step, batch.elapsed);
            // Warm-up instances are judged as measured ones are: a command
            // that fails while warming up ends the session here, not after
            // the measured batches it would fail as well.
            let iteration = Iteration::next(measured, samples[c].len(), warmups_made[c]).index();
            warmups_made[c] += usize::from(!measured);
            if let Some(e) = batch
                .instances
                .iter()
                .find_map(|i| judge(&i.sample, cell, opts, measured, iteration))
            {
                failure.get_or_insert(e);
                scheduler.stop(StopReason::Failure);
            }
            if !measured {
                continue;
            }
            let first_sample = samples[c].len();
            let mut spans = Vec::with_capacity(batch.instances.len());
            for mut inst in batch.instances {
                inst.sample.run_index = run_index;
                run_index += 1;
                events.event(&Event::Sample {
                    cell: c,
                    sample: &inst.sample,
                });
                spans.push(inst.span);
                samples[c].push(inst.sample);
            }
            // Every block runs each cell once: the cell's batches count
            // its blocks.
            let block = batches[c].len() + 1;
            batches[c].push(BatchRecord {
                concurrency: n,
                block,
                first_sample,
                spans,
                busy: batch.busy,
                elapsed: batch.elapsed,
                host: batch.host,
            });
            if let Some(b) = batches[c].last() {
                events.event(&Event::Batch { cell: c, batch: b });
            }
            let first = *first_measured.get_or_insert_with(std::time::Instant::now);
            if opts.deadline.is_some_and(|d| first.elapsed() >= d) {
                scheduler.stop(StopReason::TimeBudget);
            }
            // The looks count batches: each block's batch of every cell.
            if let Some(seq) = adaptive.as_mut() {
                let blocks = scheduler.blocks();
                if real_cells.iter().all(|&i| batches[i].len() == blocks) {
                    let cells: Vec<(Option<usize>, &[BatchRecord])> = real_cells
                        .iter()
                        .map(|&i| (opts.cells[i].variant.concurrency, batches[i].as_slice()))
                        .collect();
                    let paired = opts.order == Order::Interleaved;
                    if crate::analysis::concurrency::look(seq, &cells, opts.reference, paired) {
                        scheduler.stop(StopReason::Precision);
                    }
                }
            }
            events.event(&Event::Measured {
                cell: c,
                name: &cell.name,
                samples: &samples[c],
                expected_runs: scheduler.expected_runs(),
                cell_runs: scheduler.expected_runs_of(c),
            });
            continue;
        }
        // The hooks' wall times count in hyperfine's first-run rule.
        let (mut prepare_time, mut conclude_time) = (0.0, 0.0);
        if let Some(hook) = &cell.hooks.prepare {
            match executor.hook("prepare", hook, c) {
                Ok(t) => prepare_time = t,
                Err(e) => {
                    failure = Some(e);
                    scheduler.stop(StopReason::Failure);
                    continue;
                }
            }
        }
        if let Some(dir) = &run_dirs[c] {
            if let Err(e) = dir.fresh() {
                failure = Some(e);
                scheduler.stop(StopReason::Failure);
                continue;
            }
        }
        events.event(&Event::RunStarting {
            cell: c,
            name: &cell.name,
            output_shown: *opts.output_of(cell) == Output::Inherit && !cell.calibration,
        });
        let mut sample = Sample::new(run_index);
        let window_due = window.as_ref().map(|w| w.elapsed() >= preflight::WINDOW);
        let handed = ahead.as_mut().zip(spawner).and_then(|(a, spawner)| {
            a.take(
                step,
                &scheduler,
                spawner,
                executor.schedulable()?,
                &|c| probe.reads_nothing(last_wall[c]),
                window_due,
                &mut |first, steps| events.event(&Event::Scheduled { first, steps }),
                &mut sample,
            )
        });
        let ran = match handed {
            // Made by the spawner from its schedule: only for runs with
            // nothing to read around them.
            Some(ran) => ran,
            None => {
                // The machine's counters around the run, only where reading
                // them costs at most 0.2 % of the cell's last run
                // (`DisturbanceProbe`).
                let before = probe.read(last_wall[c]);
                let iteration = Iteration::next(measured, samples[c].len(), warmups_made[c]);
                let ran = executor.run(c, iteration, &mut sample);
                let after = probe.read(last_wall[c]);
                sample.disturbance = probe.between(before, after);
                ran
            }
        };
        events.event(&Event::RunEnded { cell: c });
        // Every run ends with its whole tree: what it left running is
        // killed now, before anything else runs.
        let left = spawner.map_or(0, exec::Spawner::kill_leftovers);
        count_leftovers(&mut leftovers, &cell.name, left);
        let outcome = match ran {
            Ok(o) => o,
            Err(e) => {
                failure = Some(e);
                scheduler.stop(StopReason::Failure);
                continue;
            }
        };
        if outcome == Outcome::Interrupted {
            scheduler.stop(StopReason::Interrupted);
            failure = Some(Error::Interrupted);
            continue;
        }
        if let Some(dir) = &run_dirs[c] {
            dir.remove();
        }
        // The run's out-files, warm-ups' too (so none is counted twice).
        if let Some(counted) = sim_dir.as_ref().map(crate::exec::simulate::OutDir::take) {
            match counted {
                Ok(counts) => counts.set(&mut sample),
                // A run killed at its timeout wrote no complete counts.
                Err(_) if sample.timed_out => {}
                Err(e) => {
                    failure = Some(e);
                    scheduler.stop(StopReason::Failure);
                    continue;
                }
            }
        }
        let wall = sample.get(Metric::WallTime).unwrap_or(0.0);
        last_wall[c] = sample.get(Metric::WallTime);
        scheduler.record(step, wall);
        if measured {
            events.event(&Event::Sample {
                cell: c,
                sample: &sample,
            });
        }
        if let Some(hook) = &cell.hooks.conclude {
            match executor.hook("conclude", hook, c) {
                Ok(t) => conclude_time = t,
                Err(e) => {
                    failure = Some(e);
                    scheduler.stop(StopReason::Failure);
                }
            }
        }
        if measured {
            // Added in hyperfine's order (the same sum to the last bit).
            scheduler.record_cost(step, wall + prepare_time + conclude_time);
        }
        let iteration = Iteration::next(measured, samples[c].len(), warmups_made[c]).index();
        warmups_made[c] += usize::from(!measured);
        if let Some(e) = judge(&sample, cell, opts, measured, iteration) {
            failure.get_or_insert(e);
            scheduler.stop(StopReason::Failure);
        }
        if measured {
            samples[c].push(sample);
            run_index += 1;
            let first = *first_measured.get_or_insert_with(std::time::Instant::now);
            if opts.deadline.is_some_and(|d| first.elapsed() >= d) {
                scheduler.stop(StopReason::TimeBudget);
            }
            // In concurrency mode the looks are over batches (above): a
            // single run here is a shell calibration's, not a block's.
            if let (Some(seq), None) = (adaptive.as_mut(), batches_plan) {
                let blocks = scheduler.blocks();
                let block_complete = real_cells.iter().all(|&i| samples[i].len() == blocks);
                if real_cells.len() == 1 {
                    // One command has no test whose level looks would
                    // spend: its median's interval is checked after every
                    // ~10 % more runs, not only at the planned looks (which
                    // end at 160 runs, far too few for 1 % on a fast command).
                    if blocks >= next_precision_check {
                        next_precision_check = blocks + blocks.div_ceil(10);
                        let walls =
                            crate::analysis::values(&samples[real_cells[0]], Metric::WallTime);
                        if seq.precise(&walls) {
                            scheduler.stop(StopReason::Precision);
                        }
                    }
                } else if block_complete && seq.is_look(blocks) {
                    // Paired by block per comparison: a timed-out run drops
                    // its block for that pair only.
                    let cells: Vec<&[Sample]> =
                        real_cells.iter().map(|&i| samples[i].as_slice()).collect();
                    if seq.look_runs(&cells, opts.reference) {
                        scheduler.stop(StopReason::Precision);
                    }
                }
            }
            events.event(&Event::Measured {
                cell: c,
                name: &cell.name,
                samples: &samples[c],
                expected_runs: scheduler.expected_runs(),
                cell_runs: scheduler.expected_runs_of(c),
            });
        }
    }
    // What the spawner still holds is not wanted (the session stopped).
    if let (Some(a), Some(spawner)) = (ahead.as_mut(), spawner) {
        if let Err(e) = a.cut(spawner) {
            failure.get_or_insert(e);
        }
    }
    let rss_floor = spawner.and_then(exec::Spawner::peak_resident_bytes);
    check_machine(&mut window, &mut checks, events, Duration::ZERO);
    events.event(&Event::Finished);
    if spawner.is_some() {
        exec::reap_orphans();
    }

    if let Some(c) = set_up {
        if let Some(hook) = &opts.cells[c].hooks.cleanup {
            if let Err(e) = executor.hook("cleanup", hook, c) {
                failure.get_or_insert(e);
            }
        }
    }

    let mut results: Vec<CellResult> = opts
        .cells
        .iter()
        .cloned()
        .zip(samples)
        .zip(batches)
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

    Ok(Session {
        started,
        results,
        order: opts.order,
        seed: opts.seed,
        stop_reason: scheduler.stop_reason(),
        shell: opts.shell.clone(),
        shell_overhead,
        counters_unavailable,
        timeout: opts.timeout,
        failure,
        final_alpha: adaptive.as_ref().map_or(opts.alpha, |s| s.final_level()),
        alpha: opts.alpha,
        reference: opts.reference,
        looks: adaptive.as_ref().map_or(0, |s| s.looks_made()),
        rss_floor,
        preflight: checks,
        leftovers,
        simulated: opts.simulate.clone(),
        counted: opts.counted.clone(),
        count_causes,
    })
}

/// What cmdscope can name, from how a cell is run, of why its simulated
/// counts would vary between runs (`analysis` says it only if they did).
fn count_cause(cell: &Cell) -> Option<(String, crate::exec::simulate::Varies)> {
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
    .then(|| {
        (
            cell.name.clone(),
            crate::exec::simulate::Varies::PythonHashSeed,
        )
    })
}

/// Adds `left` processes killed after a cell's runs to its count.
fn count_leftovers(leftovers: &mut Vec<(String, usize)>, name: &str, left: usize) {
    if left == 0 {
        return;
    }
    match leftovers.iter_mut().find(|(n, _)| n == name) {
        Some((_, k)) => *k += left,
        None => leftovers.push((name.to_string(), left)),
    }
}

/// Whether a run ends the session: a timeout with --stop-on-timeout, or a
/// failure -i does not tolerate (`iteration`: which of the cell's warm-up
/// or measured runs it was).
fn judge(
    sample: &Sample,
    cell: &Cell,
    opts: &RunOptions,
    measured: bool,
    iteration: usize,
) -> Option<Error> {
    if sample.timed_out && opts.stop_on_timeout {
        Some(Error::Failed(format!(
            "'{}' timed out after {:.3} s (--stop-on-timeout)",
            cell.name,
            opts.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0)
        )))
    } else if !opts.ignore_failure.tolerates(sample) {
        Some(Error::RunFailed {
            name: cell.name.clone(),
            exit_code: sample.exit_code,
            signal: sample.signal,
            warmup: !measured,
            iteration,
        })
    } else {
        None
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

/// Closes the machine checks' window once it has been open `at_least`
/// (between two runs, so reading /proc never overlaps a measurement), and
/// tells the observers.
fn check_machine(
    window: &mut Option<preflight::Window>,
    checks: &mut Vec<preflight::Check>,
    events: &mut dyn Observer,
    at_least: Duration,
) {
    if window.as_ref().is_some_and(|w| w.elapsed() >= at_least) {
        if let Some(w) = window.take() {
            *checks = w.close();
            events.event(&Event::Checked { preflight: checks });
        }
    }
}

mod start_up;

#[cfg(test)]
mod tests;
