//! A search's answer as the store keeps it (`sessions.search`).

use super::grid::point;
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
