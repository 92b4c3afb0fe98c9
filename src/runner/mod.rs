//! Drives a benchmark session: prepares cells, runs the hooks (setup,
//! prepare, conclude, cleanup), asks the scheduler what to run next, makes
//! the sequential looks (asking `analysis::sequential`), subtracts the
//! shell's start-up and stops cleanly on failure, timeout or interruption.
//! It fills the `session` model and emits one stream of
//! [`Event`](crate::run::events::Event)s, which
//! the observers the caller supplies (the progress display of
//! [`progress_for`], the store recorder, the monitor) consume. No
//! statistics of its own and no formatting here: what is shown is
//! `progress`'s. Here: the options, preparing the machine (`run_observed`)
//! and judging a run; the loop over the steps is `drive`'s, its step
//! handlers `one_run`'s and `batch`'s.

use std::sync::Arc;
use std::time::Duration;

use crate::analysis::sequential::Sequential;
use crate::error::{Error, OptionError, Result};
use crate::exec::perf::Availability;
use crate::exec::workdir::RunDir;
use crate::exec::{self, signals, Input, Output, Prepared, SpawnConfig};
use crate::metrics::Sample;
use crate::run::ahead::Ahead;
use crate::run::events::Observer;
use crate::run::executor::{Debug, Executor, Spawned};
use crate::run::plan::Cell;
use crate::run::preflight;
use crate::run::schedule::{Order, RunPolicy};
use crate::run::session::Session;
use crate::runner::progress::{HyperfineBars, Phases, Progress};
use drive::drive;
use start_up::calibrates;

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

/// The terminal's display of a session of `opts` (the progress bar, or
/// hyperfine's bars for the front door), an observer the caller puts first
/// among those it hands [`run_observed`].
pub fn progress_for(opts: &RunOptions) -> Progress {
    let progress = Progress::new(opts.show_progress, opts.machine_warnings);
    let Some(bars) = opts.hyperfine_bars else {
        return progress;
    };
    let calibration: Vec<bool> = opts.cells.iter().map(|c| c.calibration).collect();
    let calibrated_by = (opts.cells.iter())
        .map(|cell| (opts.cells.iter()).position(|k| k.calibration && calibrates(k, cell)))
        .collect();
    let min_runs = opts.policy.exact.unwrap_or(opts.policy.min_runs);
    progress.hyperfine(Phases::new(
        bars.green,
        opts.warmup,
        min_runs,
        calibration,
        calibrated_by,
    ))
}

/// Runs a whole session. Errors before the first run (bad command, bad
/// file) are returned; errors after it end up in `Session::failure` so that
/// the finished runs can still be reported and exported.
///
/// `events` sees every event of the session as it happens: the caller
/// supplies every observer (the display from [`progress_for`], the store
/// recorder, the monitor), fanned out in the order it wants.
pub fn run_observed(opts: &RunOptions, events: &mut dyn Observer) -> Result<Session> {
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
    // commands are prepared, and closes between runs (see
    // `Driven::check_machine`).
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
    let (run_dirs, prepared, configs) =
        prepare_cells(opts, &spawner, counters.as_ref(), sim_dir.as_ref())?;

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
    let ahead = ahead_for(opts, schedulable, &run_dirs, events.watches_runs());
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

/// Each cell's command prepared in the spawner, with its working
/// directory (if it has one) and its spawn configuration (shared with the
/// instance slots in concurrency mode), per cell.
type PreparedCells = (Vec<Option<RunDir>>, Vec<Prepared>, Vec<Arc<SpawnConfig>>);

/// Prepares every cell's command before the first run, so that a bad
/// command, user, directory or simulator is an error before anything runs.
fn prepare_cells(
    opts: &RunOptions,
    spawner: &std::rc::Rc<exec::Spawner>,
    counters: Option<&Availability>,
    sim_dir: Option<&crate::exec::simulate::OutDir>,
) -> Result<PreparedCells> {
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
            counters: counters.cloned(),
            proc_io: true,
            clear_env: v.clear_env,
            env_size: v.env_size,
            cwd: run_dir.as_ref().map(|d| d.path.clone()),
            user: v.user.clone(),
            cpus: v.cpus.clone(),
            nice: v.nice,
            ..SpawnConfig::new(match (&opts.simulate, sim_dir) {
                (Some(sim), Some(dir)) => sim.wrap(dir.path(), &cell.argv)?,
                _ => cell.argv.clone(),
            })
        };
        prepared.push(Prepared::new(spawner, &config)?);
        configs.push(Arc::new(config));
        run_dirs.push(run_dir);
    }
    Ok((run_dirs, prepared, configs))
}

/// Runs handed to the spawner ahead (run::ahead): only where the steps
/// do not depend on the runs' times and nothing but the run happens
/// between two runs, and only the real executor's (`schedulable`: per
/// cell, whether its prepared command may run from a schedule). Simulated
/// runs are read between runs: never scheduled ahead; nor are runs an
/// observer watches (`watched`). CMDSCOPE_NO_SCHEDULE=1 runs every step
/// alone (to compare the two paths).
fn ahead_for(
    opts: &RunOptions,
    schedulable: Option<Vec<bool>>,
    run_dirs: &[Option<RunDir>],
    watched: bool,
) -> Option<Ahead> {
    let allowed = opts.policy.exact.is_some()
        && schedulable.is_some()
        && opts.simulate.is_none()
        && opts.adaptive.is_none()
        && opts.deadline.is_none()
        && matches!(
            opts.ignore_failure,
            IgnoreFailure::None | IgnoreFailure::All
        )
        && !watched
        && std::env::var_os("CMDSCOPE_NO_SCHEDULE").is_none_or(|v| v == "0");
    allowed.then(|| {
        let eligible = (opts.cells.iter())
            .zip(run_dirs)
            .zip(schedulable.iter().flatten())
            .map(|((cell, dir), &p)| {
                p && dir.is_none()
                    && cell.hooks.prepare.is_none()
                    && cell.hooks.conclude.is_none()
                    && cell.variant.concurrency.is_none()
            })
            .collect();
        let hooks_between = opts.order == Order::Sequential
            && (opts.cells.iter()).any(|c| c.hooks.setup.is_some() || c.hooks.cleanup.is_some());
        Ahead::new(
            eligible,
            opts.ignore_failure == IgnoreFailure::None,
            hooks_between,
        )
    })
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

mod batch;
mod drive;
mod one_run;
pub(crate) mod progress;
mod start_up;

#[cfg(test)]
mod tests;
