//! A search's answer and race as the store keeps them (`sessions.search`,
//! `sessions.race`), and the options a stored race ran with.

use super::grid::point;
use super::options::SearchOptions;
use super::result::SearchResult;
use crate::run::plan::Parameter;

/// A grid value as (parameter, value) pairs, in plan order: what the
/// store keeps of the search's answer.
fn point_values(params: &[Parameter], g: usize) -> Vec<(String, String)> {
    point(params, g)
        .into_iter()
        .map(|(name, value)| (name.to_string(), value.unwrap_or_default().to_string()))
        .collect()
}

/// A search's answer as the store keeps it.
pub fn stored_answer(result: &SearchResult, params: &[Parameter]) -> crate::store::StoredSearch {
    let setting = |g: usize| point_values(params, g);
    crate::store::StoredSearch {
        parameters: params.iter().map(|p| p.name.clone()).collect(),
        metric: result.options.source.name().to_string(),
        compared: result.options.quantity().to_string(),
        maximize: result.options.maximize,
        best: setting(result.best),
        as_good: result.as_good.iter().map(|&g| setting(g)).collect(),
        values_tried: result.tried.iter().map(|&g| setting(g)).collect(),
        runs: result.runs,
        grid_runs: result.full_grid_runs,
    }
}

/// What the store keeps of a search's race (`sessions.race`): the
/// options it ran with and its rounds.
pub fn stored_race(result: &SearchResult) -> crate::store::StoredRace {
    let o = &result.options;
    crate::store::StoredRace {
        runs: o.runs,
        initial_runs: o.initial_runs,
        alpha: o.alpha,
        precision: o.precision,
        budget: o.budget,
        per_op: o.per_op,
        ordered: o.ordered.clone(),
        rounds: result.race.clone(),
    }
}

/// The options a stored race ran with: its numbers, and what was
/// compared (`source`) toward which goal, from the session's settings.
pub fn options_of(
    race: &crate::store::StoredRace,
    source: crate::analysis::source::Source,
    maximize: bool,
) -> SearchOptions {
    SearchOptions {
        source,
        maximize,
        runs: race.runs,
        initial_runs: race.initial_runs,
        alpha: race.alpha,
        precision: race.precision,
        budget: race.budget,
        per_op: race.per_op,
        ordered: race.ordered.clone(),
    }
}
