//! The front door's benchmarks printed as each ends, as hyperfine prints
//! them: an observer of the run's events that prints a benchmark's header
//! line as it begins (`Event::Begins`) and takes the benchmark once its
//! runs are final (`Event::Ended`, sequential order), analyses it as the
//! final report will (`analysis::analyse_reported`) and prints what
//! `report::terminal` renders of it: its block on standard output, its
//! warnings on standard error. The summary still comes after the last
//! benchmark, from the whole session; it leaves out the blocks printed here.

use crate::analysis::warning::Rules;
use crate::analysis::{self, CellAnalysis};
use crate::report::paint::Paint;
use crate::report::{terminal, Report};
use crate::run::events::{Event, Observer};
use crate::run::plan::Cell;
use crate::run::schedule::Order;
use crate::run::session::{CellResult, Session};

pub(super) struct Blocks {
    cells: Vec<Cell>,
    /// The benchmarks printed so far, as the final session will hold them.
    session: Session,
    analyses: Vec<CellAnalysis>,
    /// The next benchmark's header line is printed.
    headed: bool,
    benchmarks: usize,
    rules: Rules,
    remove_outliers: bool,
    paint: Paint,
    warmup: bool,
    /// Standard output takes nothing (`--style none`, an export to it):
    /// only the warnings are printed, on standard error, as hyperfine.
    quiet: bool,
}

/// What a block is printed with.
pub(super) struct Style {
    pub rules: Rules,
    pub remove_outliers: bool,
    pub paint: Paint,
    pub warmup: bool,
    pub quiet: bool,
}

impl Blocks {
    /// For a session of `cells` (calibrations included) whose runs may end
    /// by `timeout`.
    pub(super) fn new(
        cells: &[Cell],
        timeout: Option<std::time::Duration>,
        style: Style,
    ) -> Blocks {
        let mut session = Session::empty();
        session.order = Order::Sequential;
        session.timeout = timeout;
        Blocks {
            benchmarks: cells.iter().filter(|c| !c.calibration).count(),
            cells: cells.to_vec(),
            session,
            analyses: Vec::new(),
            headed: false,
            rules: style.rules,
            remove_outliers: style.remove_outliers,
            paint: style.paint,
            warmup: style.warmup,
            quiet: style.quiet,
        }
    }

    /// The first benchmarks whose blocks were printed, and whether the
    /// next one's header line was.
    pub(super) fn shown(&self) -> (usize, bool) {
        (self.analyses.len(), self.headed)
    }

    /// `cell` if it is the next benchmark to print, and its place among
    /// the benchmarks: a block after one not printed would take the wrong
    /// number (the rest then come at the end).
    fn next(&self, cell: usize) -> Option<(&Cell, usize)> {
        let c = self.cells.get(cell).filter(|c| !c.calibration)?;
        let i = self.cells[..cell].iter().filter(|c| !c.calibration).count();
        (i == self.analyses.len()).then_some((c, i))
    }

    fn begins(&mut self, cell: usize) {
        let Some((c, i)) = self.next(cell) else {
            return;
        };
        if !self.quiet {
            crate::output::print(&terminal::hyperfine_header(i, &c.name, self.paint));
        }
        self.headed = true;
    }

    fn ended(&mut self, cell: usize, samples: &[crate::metrics::Sample]) {
        let Some((c, i)) = self.next(cell) else {
            return;
        };
        let mut result = CellResult::new(c.clone(), samples.to_vec());
        if self.remove_outliers {
            // Alone: in sequential order each benchmark's outliers are its own.
            let mut alone = Session::empty();
            alone.order = Order::Sequential;
            alone.results.push(result);
            analysis::remove_outliers(&mut alone);
            result = alone.results.remove(0);
        }
        let a = analysis::analyse_reported(&result, &self.session, self.rules, self.benchmarks);
        self.session.results.push(result);
        self.analyses.push(a);
        let report = Report {
            session: &self.session,
            analyses: &self.analyses,
            comparisons: &[],
            named_reference: None,
            search: None,
            monitor: None,
            sweep: None,
            concurrency: None,
        };
        let header = !std::mem::take(&mut self.headed);
        for part in terminal::hyperfine_parts(&report, i, self.paint, false, self.warmup, header) {
            if part.stderr {
                crate::output::print_err_text(&part.text);
            } else if !self.quiet {
                crate::output::print(&part.text);
            }
        }
    }
}

impl Observer for Blocks {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::Begins { cell } => self.begins(cell),
            Event::Ended { cell, samples } => self.ended(cell, samples),
            _ => {}
        }
    }
}
