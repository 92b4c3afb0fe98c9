//! The seam between deciding what runs (the runner) and making it happen:
//! an [`Executor`] makes one run of a cell, or one hook, and says what it
//! measured. [`Spawned`] is the real one: the spawner helper makes the
//! measured runs (`exec::Prepared`), `run::hooks` the hooks. Another
//! executor (one that runs nothing and returns given times, as hyperfine's
//! `--debug-mode`) would drive the runner's decisions without a process.
//!
//! What stays with the runner whatever the executor: the schedule, the
//! events, judging each run, the shell's subtraction. Runs made ahead from
//! a schedule (`run::ahead`) need the real executor's prepared commands
//! ([`Executor::schedulable`]); an executor without them has its runs
//! made one at a time.

use std::time::Instant;

use crate::error::Result;
use crate::exec::{Input, Outcome, Prepared, Spawner};
use crate::metrics::Sample;
use crate::run::plan::Cell;

/// Makes the runs and hooks of a session's cells.
pub trait Executor {
    /// Makes one run (warm-up or measured) of cell `cell` (an index into
    /// `RunOptions::cells`), filling `sample` with what was measured.
    fn run(&mut self, cell: usize, sample: &mut Sample) -> Result<Outcome>;

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
        }
    }
}

impl Executor for Spawned<'_> {
    fn run(&mut self, cell: usize, sample: &mut Sample) -> Result<Outcome> {
        self.prepared[cell].run(sample)
    }

    fn hook(&mut self, what: &str, hook: &str, cell: usize) -> Result<f64> {
        let started = Instant::now();
        let ran =
            crate::run::hooks::run(what, hook, &self.cells[cell], self.input, self.shown[cell]);
        // What a hook leaves running lives until the session ends (a
        // server the runs talk to, say).
        self.spawner.keep_hook_leftovers();
        ran.map(|()| started.elapsed().as_secs_f64())
    }

    fn schedulable(&mut self) -> Option<&mut [Prepared]> {
        Some(&mut self.prepared)
    }
}
