//! The shell's start-up, measured by the calibration cells: which cells it
//! is subtracted from, and the runs with it subtracted, at a benchmark's
//! end (sequential order) and at the session's.

use crate::metrics::Sample;
use crate::run::events::{Event, Observer};
use crate::run::plan::Cell;
use crate::run::session::{CellResult, ShellOverhead};

use super::RunOptions;

/// Whether the shell calibration `calibration` measured the start-up of
/// `cell`'s shell: a cell run through the shell under the same conditions.
pub fn calibrates(calibration: &Cell, cell: &Cell) -> bool {
    cell.shell
        && !cell.calibration
        && cell.variant == calibration.variant
        && cell.env == calibration.env
}

/// Removes the calibration cells and subtracts their median wall/user/system
/// time from every run of the cells that ran through the shell under the
/// same conditions (clamped at zero). The median, not the mean, so a single
/// slow shell start does not shift every result. Returns the first
/// calibration's overhead (the only one unless a parameter changes the
/// conditions the shell starts under).
pub(super) fn subtract_shell_overhead(results: &mut Vec<CellResult>) -> Option<ShellOverhead> {
    let (calibrations, rest): (Vec<CellResult>, Vec<CellResult>) = std::mem::take(results)
        .into_iter()
        .partition(|r| r.cell.calibration);
    *results = rest;
    let mut first = None;
    for cal in &calibrations {
        let Some(overhead) = ShellOverhead::of(&cal.samples) else {
            continue;
        };
        first.get_or_insert(overhead);
        for r in results
            .iter_mut()
            .filter(|r| calibrates(&cal.cell, &r.cell))
        {
            r.samples.iter_mut().for_each(|s| overhead.subtract(s));
        }
    }
    first
}

/// [`Event::Ended`] for cell `c`, its runs as the session will hold them,
/// unless it is a calibration or a start-up it runs through is still to
/// be measured (a calibration after it).
pub(super) fn ended(
    opts: &RunOptions,
    samples: &[Vec<Sample>],
    c: usize,
    events: &mut dyn Observer,
) {
    let cell = &opts.cells[c];
    if cell.calibration {
        return;
    }
    let calibrations: Vec<usize> = (0..opts.cells.len())
        .filter(|&i| opts.cells[i].calibration && calibrates(&opts.cells[i], cell))
        .collect();
    if calibrations.iter().any(|&i| i > c) {
        return;
    }
    let mut runs = samples[c].clone();
    for overhead in calibrations
        .iter()
        .filter_map(|&i| ShellOverhead::of(&samples[i]))
    {
        runs.iter_mut().for_each(|s| overhead.subtract(s));
    }
    events.event(&Event::Ended {
        cell: c,
        samples: &runs,
    });
}
