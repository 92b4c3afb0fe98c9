//! A stored session's comparisons, made as `run` made them.

use super::decided::Decided;
use crate::analysis::comparison::{compare_stored, Comparison, StoredRuns};
use crate::analysis::sequential::replay_runs;
use crate::analysis::MAX_VALUES;
use crate::report::html::CellData;

/// The session's wall-time comparisons, as `run` made them: the same
/// reference, family-wise alpha and precision (the stored settings, or for
/// a session stored without them, read back from its command line),
/// interleaved runs paired by block (a block where either side timed out
/// is dropped for that pair), and, for a session with adaptive stopping,
/// the level its final analysis had left after the looks (the looks are
/// replayed on the stored runs).
pub fn compare(
    settings: Option<&crate::run::settings::Settings>,
    command_line: &str,
    source: &str,
    order: Option<&str>,
    cells: &[CellData],
) -> (Vec<Comparison>, Vec<String>) {
    compare_session(settings, command_line, source, order, cells, None, None)
}

/// [`compare`], told which cell a search session found best: a search's
/// tried values are compared with its best, unpaired (its runs came in
/// rounds of different values, so the k-th runs of two values need not
/// share a block), and the values it never tried are left out.
pub fn compare_session(
    settings: Option<&crate::run::settings::Settings>,
    command_line: &str,
    source: &str,
    order: Option<&str>,
    cells: &[CellData],
    search_best: Option<usize>,
    batch_level: Option<f64>,
) -> (Vec<Comparison>, Vec<String>) {
    let mut notes = Vec::new();
    if cells.len() < 2 {
        return (Vec::new(), notes);
    }
    let decided = match settings {
        Some(s) => Decided::stored(s),
        None => {
            let (decided, note) = Decided::inferred(command_line, source, cells);
            notes.extend(note);
            decided
        }
    };
    let searched = decided.searched;
    // Cells compared: all of them, or a search's tried values.
    let included: Vec<usize> = (0..cells.len())
        .filter(|&i| !searched || !cells[i].times.is_empty())
        .collect();
    if searched {
        notes.push(
            "A search session: each value it tried is compared with the search's best, \
             unpaired (its runs were measured in rounds of different values, not in common \
             blocks); values it did not try are left out."
                .to_string(),
        );
    }
    let alpha = decided.alpha;
    let interleaved = order == Some("interleaved");
    let precision = decided.precision;
    let reference = decided.reference.filter(|&r| r < cells.len()).unwrap_or(0);
    let reference = match (searched, search_best) {
        (true, Some(best)) => best,
        (true, None) => included.first().copied().unwrap_or(0),
        (false, _) => reference,
    };

    let mut final_alpha = alpha;
    if let (Some(level), true) = (batch_level, decided.looks) {
        // A concurrency session looked at batches, not runs: the level its
        // looks left (see `stored_concurrency`).
        final_alpha = level;
    } else if let (true, true, Some(p)) = (decided.looks && !searched, interleaved, precision) {
        let samples: Vec<&[crate::metrics::Sample]> =
            cells.iter().map(|c| c.samples.as_slice()).collect();
        final_alpha = replay_runs(&samples, reference, alpha, p, decided.until_decided);
    }

    if included.len() < 2 {
        return (Vec::new(), notes);
    }
    let runs: Vec<StoredRuns> = cells
        .iter()
        .map(|c| StoredRuns {
            name: &c.name,
            samples: &c.samples,
            times: &c.times,
        })
        .collect();
    let out = compare_stored(
        &runs,
        &included,
        reference,
        final_alpha,
        precision.unwrap_or(crate::analysis::comparison::DEFAULT_PRECISION),
        interleaved && !searched,
    );
    if cells.iter().any(|c| c.times.len() > MAX_VALUES) {
        notes.push(format!(
            "Benchmarks with more than {MAX_VALUES} runs are compared on an evenly spaced \
             subsample of {MAX_VALUES} runs."
        ));
    }
    (out, notes)
}
