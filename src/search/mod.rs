//! `--minimize` / `--maximize`: the best value of a scanned parameter and
//! the set of values that are as good, without running the whole grid.
//!
//! A race over the grid's indices (the scan is ordered; for a geometric scan
//! the indices are the log scale):
//!
//! 1. **Coarse.** About six evenly spaced values, both ends included, get
//!    `initial_runs` runs each in one interleaved round (every value of an
//!    unordered list: it has no neighbours).
//! 2. **Race.** Repeated steps: the value with the best median is the
//!    leader; every other live value the comparison engine finds
//!    significantly worse than the leader (unpaired, Bonferroni over the
//!    live values) is dropped; the zoom adds values splitting the gaps
//!    between the leader and its tried neighbours in thirds
//!    (`zoom_points`: O(log n) levels); then the live values get more runs
//!    (doubling up to `runs`) in one interleaved round, so runs go where
//!    the decision is still close. When a round would overrun the budget,
//!    only the better half of the live values (by median) is measured
//!    further (successive halving). With the leader's gaps closed and
//!    every live value at `runs`, the widest gap left in the bracket
//!    (`Bracket`) is split the same way.
//! 3. **Answer.** It stops when the bracket holds no untried value
//!    (settled), or when the budget ends.
//!    The best is chosen within shared blocks among the values sharing
//!    the most blocks with the last leader (with the value with the most
//!    runs when that leader has fewer than `runs`); the set is every live value the engine does not find
//!    significantly worse than it (Bonferroni over all tried values). Each
//!    set member's ratio interval says how close it is: within the
//!    precision band ("no difference") or not shown either way.
//!
//! Several parameters: `coordinate` runs the race along one parameter at a
//! time, then once over the whole grid around the best (diagonal
//! neighbours included), then gives the closest values more runs. With
//! `--ops` the values compared are per operation (operations per second
//! when maximising). What is compared is an `analysis::source::Source`: a
//! per-run metric, a monitor's count per run, or throughput per batch (a
//! "run" of the race is then a batch).
//!
//! Every round after the coarse scan measures the leader beside the values
//! it races, so each value shares blocks (same round, same block) with the
//! leader. The leader, the final best and the set's comparisons use only
//! runs of shared blocks (paired: load common to a round cancels); the
//! race's drops stay unpaired (`compare_drop`). The race runs on any
//! `Measurer`: the real one runs processes, the simulation draws from
//! known cost curves.
//!
//! The files, one job each (each imports only those above it here):
//!
//! - `grid`: grid indices and positions, neighbours, the coarse scan, a
//!   value in words.
//! - `options`: `SearchOptions`, the default budget, which parameters are
//!   ordered.
//! - `measurer`: the `Measurer` seam and the blocks that pair runs.
//! - `race`: the race through the comparison engine (leader, drops, more
//!   runs) and the `answer` (the best and the as-good set).
//! - `zoom`: the search along one parameter (the coarse scan and the
//!   zoom) and the `Bracket`.
//! - `coordinate`: two or three parameters (lines, polish, tie-break).
//! - `rounds`: what the rounds measured, taken in round by round, and
//!   their log (what the store keeps of the race).
//! - `process`: the measurer that runs the cells through the runner (and
//!   the monitor), its values per run or per batch from the `Source`.
//! - `replay`: the measurer that hands the race a stored session's runs,
//!   cut by its stored rounds, so a stored search is raced again as it ran.
//! - `result`: the `SearchResult` the report reads, as a session too.
//! - `checks`: the flag checks; `stored`: what the store keeps, and the
//!   options a stored race ran with.
//! - `simulated`: the seeded measurer of the tests and the figures.
//!
//! `search` (here) wires them: the process measurer, the coordinate
//! search (the zoom on one parameter), the answer and its bracket;
//! `replayed` the same with the replay measurer.

mod checks;
mod coordinate;
mod grid;
mod measurer;
mod options;
mod process;
mod race;
mod replay;
mod result;
mod rounds;
pub mod simulated;
mod stored;
#[cfg(test)]
mod tests;
mod zoom;

pub use checks::{check_goal, check_searched};
pub use coordinate::coordinate;
pub use grid::{dims, point, point_label};
pub use measurer::{Block, Measurer};
pub use options::{ordered, SearchOptions};
pub use race::{answer, Answer, Decision, RaceState, Status};
pub use result::{as_session, mark_sweep, Outcome, SearchResult};
pub use stored::{options_of, stored_answer, stored_race};
pub use zoom::Bracket;

use crate::error::{Error, Result, SearchError};
use crate::run::events::Observer;
use crate::run::plan::Parameter;
use crate::runner::RunOptions;
use process::Runner;
pub use process::SeriesObserver;
use race::median;
use rounds::Recorded;
use zoom::bracket;

/// Searches the grid of `params` (every parameter of the plan, in plan
/// order; one command): `race` for one parameter, `coordinate` for several.
/// `series` is the monitor, which observes every run; a search of one of
/// its counts (`Source::Series`) reads them there.
pub fn search<'a>(
    base: &'a RunOptions,
    opts: &SearchOptions,
    params: &[Parameter],
    sink: &'a mut dyn Observer,
    series: Option<&'a mut dyn SeriesObserver>,
) -> Result<SearchResult> {
    let n = base.cells.iter().filter(|c| !c.calibration).count();
    let dims = dims(params);
    if n == 0 || dims.iter().product::<usize>() != n {
        return Err(SearchError::NothingToSearch.into());
    }
    if n.checked_mul(opts.runs).is_none() {
        return Err(SearchError::TooManyRuns {
            runs: opts.runs,
            values: n,
        }
        .into());
    }
    if matches!(opts.source, crate::analysis::source::Source::Series(_)) && series.is_none() {
        return Err(SearchError::NoMonitor(opts.source.name().to_string()).into());
    }
    let mut m = Runner::new(base, sink, series, opts, n);
    let mut st = RaceState::default();
    let failure = coordinate(&mut m, &dims, opts, &mut st).err();
    let Some(mut session) = m.last.take() else {
        return Err(failure.unwrap_or_else(|| Error::Failed("the search measured nothing".into())));
    };
    session.failure = failure;
    Ok(concluded(&mut m, params, opts, st, session))
}

/// A stored search session raced again on its stored runs (see
/// `replay`): the same `SearchResult` the live search gave, from
/// `session` (every grid value's stored runs, in grid order, and how the
/// session ended: its failure ends the race where the stored race
/// stopped), the stored race and, for a session a monitor watched, its
/// stored counts by grid value (`series`, which a search of a count reads).
/// A race that asks for another round than the stored one is
/// `SearchError::StoredRaceDiffers`.
pub fn replayed(
    mut session: crate::run::session::Session,
    params: &[Parameter],
    opts: &SearchOptions,
    race: &[crate::store::RaceRound],
    series: Option<&dyn crate::analysis::source::RunSeries>,
) -> Result<SearchResult> {
    let dims = dims(params);
    let n = dims.iter().product::<usize>();
    let stored = std::mem::take(&mut session.results);
    if params.is_empty() || n == 0 || stored.len() < n {
        return Err(SearchError::NothingToSearch.into());
    }
    let cells: Vec<crate::run::plan::Cell> = stored.iter().map(|r| r.cell.clone()).collect();
    let stop = session.failure.take();
    let mut m = replay::Replayer::new(&stored, series, &cells, race, opts, n, stop);
    let mut st = RaceState::default();
    let failure = coordinate(&mut m, &dims, opts, &mut st).err();
    if let Some(round) = m.differs() {
        return Err(SearchError::StoredRaceDiffers { round }.into());
    }
    session.failure = failure;
    Ok(concluded(&mut m, params, opts, st, session))
}

/// The search's result from what the race measured (`m`) and decided
/// (`st`); `session` is the last round's (machine state, seed, failure).
fn concluded(
    m: &mut dyn Recorded,
    params: &[Parameter],
    opts: &SearchOptions,
    mut st: RaceState,
    session: crate::run::session::Session,
) -> SearchResult {
    let dims = dims(params);
    let n = dims.iter().product::<usize>();
    let label = |i: usize| point_label(params, i);
    for d in &mut st.decisions {
        d.values = d.points.iter().map(|&i| label(i)).collect();
        d.leader_value = d.leader.map(label);
        if let (Some(c), Some(l)) = (d.comparison.as_mut(), d.leader) {
            c.baseline = label(l);
            c.candidate = d.values.join(", ");
        }
    }
    let mut answer = answer(m, n, opts, &st).unwrap_or(Answer {
        best: 0,
        as_good: Vec::new(),
        rows: Vec::new(),
    });
    for (i, _, c) in &mut answer.rows {
        if let Some(c) = c {
            c.candidate = label(*i);
            if c.baseline.is_empty() {
                c.baseline = label(answer.best);
            }
        }
    }
    let bracket = bracket(m, &dims, opts, &answer);
    // Runs, or batches when throughput is compared: the units of the budget.
    let runs = (0..n).map(|i| m.count(i)).sum();
    let runs_per_value = (0..n).map(|i| m.count(i)).collect();
    let medians = (0..n).map(|i| median(&m.values(i))).collect();
    let rounds = m.rounds();
    SearchResult {
        best: answer.best,
        tried: (0..n).filter(|&i| !rounds.samples[i].is_empty()).collect(),
        as_good: answer.as_good,
        rows: answer.rows,
        decisions: st.decisions,
        samples: std::mem::take(&mut rounds.samples),
        batches: std::mem::take(&mut rounds.batches),
        race: std::mem::take(&mut rounds.log),
        runs_per_value,
        medians,
        runs,
        full_grid_runs: n.saturating_mul(opts.runs),
        budget: opts.budget,
        settled: st.settled,
        budget_exhausted: st.budget_exhausted,
        bracket,
        options: opts.clone(),
        session,
    }
}
