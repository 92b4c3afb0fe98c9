//! The checks of `--minimize/--maximize` against the rest of the command
//! line: what may be searched, and which goals make sense.

use crate::analysis::source::Source;
use crate::error::{Result, SearchError};
use crate::run::plan::Parameter;

/// `--minimize/--maximize VARS`: VARS names every parameter of the plan
/// (comma-separated when there are several: one -P and -L lists), for one
/// command; the values are searched in the order given.
pub fn check_searched(vars: &str, params: &[Parameter], commands: usize) -> Result<()> {
    let named: Vec<&str> = vars.split(',').map(str::trim).collect();
    for v in &named {
        if !params.iter().any(|p| p.name == *v) {
            return Err(SearchError::NotAParameter(v.to_string()).into());
        }
    }
    let missing: Vec<&str> = params
        .iter()
        .map(|p| p.name.as_str())
        .filter(|p| !named.contains(p))
        .collect();
    if !missing.is_empty() {
        return Err(SearchError::MissingParameters {
            missing: missing.iter().map(|p| p.to_string()).collect(),
            all: params.iter().map(|p| p.name.clone()).collect(),
        }
        .into());
    }
    if params.len() > 3 {
        return Err(SearchError::TooManyParameters.into());
    }
    if commands > 1 {
        return Err(SearchError::OneCommand.into());
    }
    Ok(())
}

/// `--maximize` of a time is throughput: it needs `--ops` (the search then
/// maximises operations per second); more time is never better. Less
/// throughput is never better either: `--metric throughput` is maximised.
/// A monitor count goes either way: lower is better unless `--maximize`.
pub fn check_goal(maximize: bool, source: &Source, ops: bool) -> Result<()> {
    if maximize && source.unit() == crate::metrics::Unit::Seconds && !ops {
        return Err(SearchError::MaximizeTime(source.name().to_string()).into());
    }
    if !maximize && source.higher_is_better() {
        return Err(SearchError::MinimizeThroughput(source.name().to_string()).into());
    }
    Ok(())
}
