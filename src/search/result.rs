//! What a search answers, for the report and the exports: the best, the
//! set, one comparison per tried value, the steps, the bracket and how it
//! ended; and the tried values as an ordinary session.

use super::options::SearchOptions;
use super::race::{Decision, Status};
use super::zoom::Bracket;
use crate::analysis::comparison::Comparison;
use crate::metrics::Sample;
use crate::run::session::{BatchRecord, CellResult, Session};

#[derive(Debug)]
pub struct SearchResult {
    pub best: usize,
    /// Grid indices measured, ascending.
    pub tried: Vec<usize>,
    pub as_good: Vec<usize>,
    pub rows: Vec<(usize, Status, Option<Comparison>)>,
    pub decisions: Vec<Decision>,
    pub samples: Vec<Vec<Sample>>,
    /// In concurrency mode, each grid value's batches.
    pub batches: Vec<Vec<BatchRecord>>,
    /// The rounds the race measured, in order: what the store keeps of it.
    pub race: Vec<crate::store::RaceRound>,
    /// Runs (batches when throughput is compared) and median of the searched metric per grid value (0 and NaN
    /// when not tried).
    pub runs_per_value: Vec<usize>,
    pub medians: Vec<f64>,
    pub runs: usize,
    pub full_grid_runs: usize,
    pub budget: usize,
    /// No untried value in the bracket, and the race ended by itself.
    pub settled: bool,
    pub budget_exhausted: bool,
    /// Where the optimum may lie under the search's model (see `Bracket`).
    pub bracket: Bracket,
    /// The options searched with (what was compared, and how it reads).
    pub options: SearchOptions,
    /// The last round's session (machine state, seed, failure).
    pub session: Session,
}

/// How a search ended, as the terminal and the JSON both say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every value in the bracket was tried and the race ended by itself.
    Settled,
    /// The budget ended it.
    BudgetExhausted,
    /// The race ended around the best with values in the bracket untried.
    UntriedInBracket,
    /// It stopped before the set was settled (a failure, an interruption).
    Stopped,
}

impl Outcome {
    /// The name in the JSON's `status`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Settled => "settled",
            Outcome::BudgetExhausted => "budget_exhausted",
            Outcome::UntriedInBracket => "untried_in_bracket",
            Outcome::Stopped => "stopped",
        }
    }
}

impl SearchResult {
    /// How the search ended, from `settled`, `budget_exhausted` and the
    /// bracket's untried values.
    pub fn outcome(&self) -> Outcome {
        if self.settled {
            Outcome::Settled
        } else if self.budget_exhausted {
            Outcome::BudgetExhausted
        } else if self.bracket.untried > 0 {
            Outcome::UntriedInBracket
        } else {
            Outcome::Stopped
        }
    }

    /// The leader a value was dropped against, if it was dropped.
    pub fn leader_of(&self, i: usize) -> Option<usize> {
        self.decisions
            .iter()
            .rfind(|d| d.action == "drop" && d.points.contains(&i))
            .and_then(|d| d.leader)
    }

    /// The engine's comparisons of the tried values with the best, named
    /// after the cells: what the report prints for the searched metric.
    pub fn comparisons(&self, cells: &[crate::run::plan::Cell]) -> Vec<Comparison> {
        let name = |i: usize| cells.get(i).map_or("", |c| c.name.as_str());
        self.rows
            .iter()
            .filter_map(|(i, status, c)| {
                let c = c.clone()?;
                // A dropped value was compared with the leader of its step.
                let base = match status {
                    Status::Worse => self.leader_of(*i).unwrap_or(self.best),
                    _ => self.best,
                };
                Some(Comparison {
                    baseline: name(base).to_string(),
                    candidate: cells.get(*i).map_or(String::new(), |c| c.name.clone()),
                    ..c
                })
            })
            .collect()
    }
}

/// The tried values as a session, for the usual reports and exports; the
/// reference is the best value, so the comparisons are against it.
pub fn as_session(result: &mut SearchResult, cells: &[crate::run::plan::Cell]) -> Session {
    let mut session = std::mem::replace(&mut result.session, Session::empty());
    session.results = result
        .tried
        .iter()
        .map(|&i| CellResult {
            batches: result
                .batches
                .get_mut(i)
                .map(std::mem::take)
                .unwrap_or_default(),
            ..CellResult::new(cells[i].clone(), std::mem::take(&mut result.samples[i]))
        })
        .collect();
    session.reference = result
        .tried
        .iter()
        .position(|&i| i == result.best)
        .unwrap_or(0);
    session
}

/// Marks the search's best and set in the sweep table of its session
/// (cells are the tried values, in order; see `as_session`).
pub fn mark_sweep(r: &SearchResult, sweep: &mut crate::analysis::sweep::Sweep) {
    let cell = |i: usize| r.tried.iter().position(|&t| t == i);
    let as_good: Vec<usize> = r.as_good.iter().filter_map(|&i| cell(i)).collect();
    // Only comparisons with the best: a value dropped against an earlier
    // leader shows as dropped, its comparison is in the search's table.
    // The table shows the metric per run; per-operation comparisons stay
    // in the search's own table.
    let vs_best: Vec<(usize, Comparison)> = r
        .rows
        .iter()
        .filter(|_| !r.options.per_op)
        .filter(|(i, status, _)| *status != Status::Worse || r.leader_of(*i) == Some(r.best))
        .filter_map(|(i, _, c)| Some((cell(*i)?, c.clone()?)))
        .collect();
    if let Some(best) = cell(r.best) {
        crate::analysis::sweep::apply_search(sweep, best, &as_good, &vs_best);
    }
}
