//! The one stream of events a session emits as it runs, and the trait of
//! what consumes it. The runner emits; the progress display, the store
//! recorder and the monitor each observe the same stream, in the order the
//! events happen. This file sits below all of them (it holds vocabulary,
//! not behaviour), so the store can observe a session without importing
//! the runner.

use std::sync::Arc;

use crate::metrics::Sample;
use crate::run::preflight::Check;
use crate::run::schedule::Step;
use crate::run::session::BatchRecord;

/// What happens in a session, in order. `cell` indexes the session's cells
/// (`RunOptions::cells`, calibration cells included).
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The cells are prepared; no run has started.
    Started { expected_runs: usize },
    /// The machine checks are known. Their window overlaps the first runs,
    /// so this comes after the session's first runs (at the latest with
    /// `Finished`), between two runs, never while one is measured.
    Checked { preflight: &'a [Check] },
    /// A run (warm-up or measured) is about to start, or, when the spawner
    /// makes it from a schedule (`run::ahead`), is being made or was made
    /// and is about to be taken in. `output_shown`: its output goes to the
    /// terminal (`--show-output`, never in a schedule).
    RunStarting {
        cell: usize,
        name: &'a str,
        output_shown: bool,
    },
    /// The run just ended (warm-up or measured), before anything else runs.
    RunEnded { cell: usize },
    /// A measured run, as soon as it is made: before its conclude hook and
    /// before the next run. Values are raw (a shell's start-up is
    /// subtracted only at the session's end).
    Sample { cell: usize, sample: &'a Sample },
    /// The runner has taken the measured run in: `samples` are all of its
    /// cell's runs so far, `expected_runs` the session's current estimate
    /// and `cell_runs` the cell's.
    Measured {
        cell: usize,
        name: &'a str,
        samples: &'a [Sample],
        expected_runs: usize,
        cell_runs: usize,
    },
    /// In concurrency mode, a measured batch has ended: its instances'
    /// `Sample`s came before it, in the order the batch holds them (the
    /// order in which they ended, as [`InstanceSink`] numbered them).
    Batch { cell: usize, batch: &'a BatchRecord },
    /// Runs may be made from schedules (`run::ahead`) by the spawner
    /// whose socket (our end) is `socket`: the store writer keeps a copy,
    /// to store the reports cmdscope could not read should it die.
    Schedules { socket: std::os::fd::RawFd },
    /// Steps handed to the spawner as a schedule, just before it gets
    /// them: their runs' serial numbers count from `first` in this order
    /// (`exec::Spawner::next_serial`).
    Scheduled { first: u64, steps: &'a [Step] },
    /// In sequential order, a cell's turn begins: before its setup hook
    /// and its first run, after the cleanup of the cell before it.
    Begins { cell: usize },
    /// In sequential order, a benchmark's runs are all made and final:
    /// `samples` are its measured runs as the session will hold them (the
    /// shell's start-up subtracted), before its cleanup hook and the next
    /// benchmark. Only once the start-up it runs through is measured (the
    /// front door measures it first, as hyperfine), and not for a
    /// benchmark that a failure or an interruption ended.
    Ended { cell: usize, samples: &'a [Sample] },
    /// The session ended, or ends before its first run.
    Finished,
}

/// Consumes a session's events. Called between runs, never while one is
/// measured; an observer keeps its own errors (a store that fails does not
/// stop the benchmark).
pub trait Observer {
    fn event(&mut self, event: &Event<'_>);

    /// Whether it watches each run as it happens, between `RunStarting`
    /// and `RunEnded` (a monitor counting a run's lines): the runs are
    /// then made one at a time, never ahead from a schedule (`run::ahead`).
    fn watches_runs(&self) -> bool {
        false
    }

    /// Before a measured batch of `cell` in concurrency mode: where the
    /// instance slots hand each instance the moment it ends, from their
    /// own threads, so that what a batch made before a `kill -9` is not
    /// lost with the batch. The batch's `Sample` events still follow it,
    /// in the order of the sink's numbers; an observer that took the
    /// instances here passes over those.
    fn instances(&mut self, _cell: usize) -> Option<Arc<dyn InstanceSink>> {
        None
    }
}

/// Takes concurrency mode's measured instances as each ends, on the slots'
/// threads ([`Observer::instances`]).
pub trait InstanceSink: Send + Sync {
    /// The `index`-th instance of the batch to end (from 0), its sample's
    /// `run_index` set.
    fn instance(&self, index: usize, sample: &Sample);
}

/// Hands every event to each observer in turn, in the order given.
pub struct Fanout<'a>(pub Vec<&'a mut dyn Observer>);

impl Observer for Fanout<'_> {
    fn event(&mut self, event: &Event<'_>) {
        for o in &mut self.0 {
            o.event(event);
        }
    }

    fn watches_runs(&self) -> bool {
        self.0.iter().any(|o| o.watches_runs())
    }

    /// The first observer's sink that has one (the store's recorder is
    /// the only one that takes instances as they end).
    fn instances(&mut self, cell: usize) -> Option<Arc<dyn InstanceSink>> {
        self.0.iter_mut().find_map(|o| o.instances(cell))
    }
}
