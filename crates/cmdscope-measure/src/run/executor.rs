//! The seam between deciding what runs (the runner) and making it happen:
//! an [`Executor`] makes one run of a cell, or one hook, and says what it
//! measured. [`Spawned`] is the real one: the spawner helper makes the
//! measured runs (`exec::Prepared`), `run::hooks` the hooks. [`Debug`]
//! runs nothing and returns the times hyperfine's `--debug-mode` gives, so
//! that hyperfine's own tests drive the runner's decisions, the statistics
//! and the reports without a process.
//!
//! What stays with the runner whatever the executor: the schedule, the
//! events, judging each run, the shell's subtraction. Runs made ahead from
//! a schedule (`run::ahead`) need the real executor's prepared commands
//! ([`Executor::schedulable`]); an executor without them has its runs
//! made one at a time.

use std::time::Instant;

use crate::error::{OptionError, Result};
use crate::exec::{Input, Outcome, Prepared, Spawner};
use crate::metrics::{Metric, Sample};
use crate::run::plan::Cell;

/// Which of its cell's runs a run is, counted from 0 apart for warm-ups
/// and measured runs (hyperfine's `HYPERFINE_ITERATION` numbers them so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iteration {
    Warmup(usize),
    Measured(usize),
}

impl Iteration {
    /// A cell's next run: measured after `measured_before` measured runs,
    /// or a warm-up after `warmups_before` warm-ups.
    pub fn next(measured: bool, measured_before: usize, warmups_before: usize) -> Iteration {
        if measured {
            Iteration::Measured(measured_before)
        } else {
            Iteration::Warmup(warmups_before)
        }
    }

    /// Its number among the cell's runs of its kind.
    pub fn index(self) -> usize {
        match self {
            Iteration::Warmup(i) | Iteration::Measured(i) => i,
        }
    }
}

/// Makes the runs and hooks of a session's cells.
pub trait Executor {
    /// Makes one run (warm-up or measured, `iteration`) of cell `cell` (an
    /// index into `RunOptions::cells`), filling `sample` with what was
    /// measured.
    fn run(&mut self, cell: usize, iteration: Iteration, sample: &mut Sample) -> Result<Outcome>;

    /// Runs a hook of cell `cell`'s (`what`: setup, prepare, conclude or
    /// cleanup); returns its wall time in seconds. A hook that fails is an
    /// error naming it.
    fn hook(&mut self, what: &str, hook: &str, cell: usize) -> Result<f64>;

    /// The prepared commands, indexed as the cells, when the spawner may
    /// make runs ahead from a schedule (`run::ahead`); None: every run is
    /// made through [`Executor::run`].
    fn schedulable(&mut self) -> Option<&mut [Prepared]> {
        None
    }
}

/// The real executor: the spawner helper makes the runs, `sh -c` the hooks.
pub struct Spawned<'a> {
    spawner: &'a Spawner,
    cells: &'a [Cell],
    /// What every run and hook reads.
    input: &'a Input,
    /// Per cell: its output is shown (a hook's then is too).
    shown: Vec<bool>,
    /// Per cell, in order.
    prepared: Vec<Prepared>,
    /// Every run and hook gets hyperfine's per-run variables
    /// ([`hyperfine_variables`]): the front door's.
    hyperfine_variables: bool,
}

impl<'a> Spawned<'a> {
    /// `shown` and `prepared` hold one entry per cell of `cells`, in order.
    pub fn new(
        spawner: &'a Spawner,
        cells: &'a [Cell],
        input: &'a Input,
        shown: Vec<bool>,
        prepared: Vec<Prepared>,
    ) -> Self {
        Spawned {
            spawner,
            cells,
            input,
            shown,
            prepared,
            hyperfine_variables: false,
        }
    }

    /// Whether every run and hook gets hyperfine's per-run variables, as
    /// the front door's do. Its runs are then all made one at a time (a
    /// schedule's runs share their command's environment).
    pub fn with_hyperfine_variables(mut self, set: bool) -> Self {
        self.hyperfine_variables = set;
        self
    }
}

/// The variables hyperfine sets for a run of a command (`iteration`) or of
/// a hook or the shell's calibration (None):
/// `HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET`, 0 to 4,095 `X`s drawn anew
/// each time, so that the stack starts at a different place from run to
/// run (an environment's size moves it: Mytkowicz et al., "Producing
/// wrong data without doing anything obviously wrong!", 2009), and for a
/// command's runs `HYPERFINE_ITERATION`, `warmup-N` or `N`.
pub fn hyperfine_variables(iteration: Option<Iteration>) -> Vec<(&'static str, String)> {
    let offset = rand::random::<u64>() as usize % 4096;
    let mut vars = vec![(
        "HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET",
        "X".repeat(offset),
    )];
    match iteration {
        Some(Iteration::Warmup(i)) => vars.push(("HYPERFINE_ITERATION", format!("warmup-{i}"))),
        Some(Iteration::Measured(i)) => vars.push(("HYPERFINE_ITERATION", i.to_string())),
        None => {}
    }
    vars
}

impl Executor for Spawned<'_> {
    fn run(&mut self, cell: usize, iteration: Iteration, sample: &mut Sample) -> Result<Outcome> {
        if !self.hyperfine_variables {
            return self.prepared[cell].run(sample);
        }
        let iteration = (!self.cells[cell].calibration).then_some(iteration);
        let vars = hyperfine_variables(iteration);
        let vars: Vec<(&[u8], &[u8])> = vars
            .iter()
            .map(|(k, v)| (k.as_bytes(), v.as_bytes()))
            .collect();
        self.prepared[cell].run_with(&vars, sample)
    }

    fn hook(&mut self, what: &str, hook: &str, cell: usize) -> Result<f64> {
        let started = Instant::now();
        let vars = if self.hyperfine_variables {
            hyperfine_variables(None)
        } else {
            Vec::new()
        };
        let ran = crate::run::hooks::run(
            what,
            hook,
            &self.cells[cell],
            self.input,
            self.shown[cell],
            &vars,
        );
        // What a hook leaves running lives until the session ends (a
        // server the runs talk to, say).
        self.spawner.keep_hook_leftovers();
        ran.map(|()| started.elapsed().as_secs_f64())
    }

    fn schedulable(&mut self) -> Option<&mut [Prepared]> {
        (!self.hyperfine_variables).then_some(&mut self.prepared)
    }
}

/// hyperfine's `--debug-mode`, reachable only from the front door (a
/// testing aid): nothing is run; a command or hook `sleep X` takes X
/// seconds of wall time, no user or system time, a peak memory of 0 bytes
/// (hyperfine's figure, which its JSON export lists per run), and exits 0.
/// A shell given as `sleep Y` starts in Y seconds: a run through it
/// takes X + Y (the calibration cell's Y is subtracted afterwards, as a
/// real shell's start-up) and a hook X + Y, as hyperfine counts them.
pub struct Debug<'a> {
    cells: &'a [Cell],
    /// The shell's start-up, seconds (0 without a shell).
    shell: f64,
}

impl<'a> Debug<'a> {
    /// `shell`: the `--shell` given, which must then be `sleep Y`. Every
    /// command and hook is checked here, before any run, as hyperfine
    /// would stop at the first that is not a sleep.
    pub fn new(cells: &'a [Cell], shell: Option<&str>) -> Result<Self> {
        let shell = shell.map_or(Ok(0.0), |s| sleep_seconds("--shell", s))?;
        for c in cells.iter().filter(|c| !c.calibration) {
            sleep_seconds("a command", &c.command)?;
            let h = &c.hooks;
            for (what, hook) in [
                ("setup", &h.setup),
                ("prepare", &h.prepare),
                ("conclude", &h.conclude),
                ("cleanup", &h.cleanup),
            ] {
                if let Some(hook) = hook {
                    sleep_seconds(&format!("the {what} hook"), hook)?;
                }
            }
        }
        Ok(Debug { cells, shell })
    }
}

/// X of `sleep X`, hyperfine's debug-mode command; anything else is a
/// usage error naming `what` (hyperfine panics on it).
fn sleep_seconds(what: &str, command: &str) -> Result<f64> {
    command
        .strip_prefix("sleep ")
        .and_then(|x| x.parse::<f64>().ok())
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| {
            OptionError::DebugModeNeedsSleep {
                what: what.into(),
                command: command.into(),
            }
            .into()
        })
}

impl Executor for Debug<'_> {
    fn run(&mut self, cell: usize, _: Iteration, sample: &mut Sample) -> Result<Outcome> {
        let c = &self.cells[cell];
        let wall = if c.calibration {
            self.shell
        } else {
            let x = sleep_seconds("a command", &c.command)?;
            if c.shell {
                x + self.shell
            } else {
                x
            }
        };
        sample.set(Metric::WallTime, wall);
        sample.set(Metric::UserTime, 0.0);
        sample.set(Metric::SystemTime, 0.0);
        sample.set(Metric::CpuTime, 0.0);
        sample.set(Metric::PeakRss, 0.0);
        sample.exit_code = Some(0);
        Ok(Outcome::Finished)
    }

    fn hook(&mut self, what: &str, hook: &str, _cell: usize) -> Result<f64> {
        Ok(sleep_seconds(&format!("the {what} hook"), hook)? + self.shell)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plan::{expand, PlanInput, ShellMode};

    fn cells(commands: &[&str], shell: ShellMode) -> Vec<Cell> {
        let input = PlanInput {
            commands: commands.iter().map(std::ffi::OsString::from).collect(),
            shell,
            ..PlanInput::default()
        };
        expand(&input).unwrap()
    }

    fn wall(ex: &mut Debug, cell: usize) -> (f64, Sample) {
        let mut s = Sample::new(0);
        assert_eq!(
            ex.run(cell, Iteration::Measured(0), &mut s).unwrap(),
            Outcome::Finished
        );
        (s.get(Metric::WallTime).unwrap(), s)
    }

    #[test]
    fn debug_runs_take_the_sleep_they_name_and_nothing_else() {
        let cells = cells(&["sleep 0.25", "sleep 1.5"], ShellMode::Never);
        let mut ex = Debug::new(&cells, None).unwrap();
        let (w, s) = wall(&mut ex, 0);
        assert_eq!(w, 0.25);
        assert_eq!(s.get(Metric::UserTime), Some(0.0));
        assert_eq!(s.get(Metric::SystemTime), Some(0.0));
        // hyperfine's debug mode exports 0 bytes of memory per run.
        assert_eq!(s.get(Metric::PeakRss), Some(0.0));
        assert_eq!(s.exit_code, Some(0));
        assert_eq!(wall(&mut ex, 1).0, 1.5);
        assert_eq!(ex.hook("prepare", "sleep 0.02", 0).unwrap(), 0.02);
    }

    #[test]
    fn a_debug_shell_adds_its_start_up_to_runs_and_hooks() {
        let shell = ShellMode::from_arg("sleep 0.01").unwrap();
        let cells = cells(&["sleep 0.05"], shell);
        let cal = cells.iter().position(|c| c.calibration).unwrap();
        let mut ex = Debug::new(&cells, Some("sleep 0.01")).unwrap();
        assert_eq!(wall(&mut ex, 0).0, 0.05 + 0.01);
        assert_eq!(wall(&mut ex, cal).0, 0.01);
        assert_eq!(ex.hook("conclude", "sleep 0.03", 0).unwrap(), 0.03 + 0.01);
    }

    #[test]
    fn debug_mode_refuses_what_is_not_a_sleep_before_any_run() {
        for command in ["echo hi", "sleep x", "sleep -1", "sleep"] {
            let cells = cells(&["sleep 1", command], ShellMode::Never);
            let e = Debug::new(&cells, None).err().expect(command);
            assert_eq!(e.exit_code(), 2, "{e}");
        }
        let cells = cells(&["sleep 1"], ShellMode::Never);
        assert!(Debug::new(&cells, Some("bash")).is_err());
        let mut hooked = cells.clone();
        hooked[0].hooks.prepare = Some("make".into());
        assert!(Debug::new(&hooked, None).is_err());
        let mut ex = Debug::new(&cells, None).unwrap();
        assert!(ex.hook("setup", "sleep inf", 0).is_err());
    }
}
