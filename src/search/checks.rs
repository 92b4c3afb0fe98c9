//! The checks of `--minimize/--maximize` against the rest of the command
//! line: what may be searched, and which goals make sense.

use crate::analysis::source::Source;
use crate::error::{Error, Result};
use crate::run::plan::Parameter;

/// `--minimize/--maximize VARS`: VARS names every parameter of the plan
/// (comma-separated when there are several: one -P and -L lists), for one
/// command; the values are searched in the order given.
pub fn check_searched(vars: &str, params: &[Parameter], commands: usize) -> Result<()> {
    let named: Vec<&str> = vars.split(',').map(str::trim).collect();
    for v in &named {
        if !params.iter().any(|p| p.name == *v) {
            return Err(Error::Usage(format!(
                "--minimize/--maximize {v}: not a parameter (give it with -P or -L)"
            )));
        }
    }
    let missing: Vec<&str> = params
        .iter()
        .map(|p| p.name.as_str())
        .filter(|p| !named.contains(p))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "--minimize/--maximize searches every parameter: add {} (--minimize {})",
            missing.join(", "),
            params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    if params.len() > 3 {
        return Err(Error::Usage(
            "--minimize/--maximize searches at most three parameters".into(),
        ));
    }
    if commands > 1 {
        return Err(Error::Usage(
            "--minimize/--maximize searches one command: remove the extra commands".into(),
        ));
    }
    Ok(())
}

/// `--maximize` of a time is throughput: it needs `--ops` (the search then
/// maximises operations per second); more time is never better. Less
/// throughput is never better either: `--metric throughput` is maximised.
/// A monitor count goes either way: lower is better unless `--maximize`.
pub fn check_goal(maximize: bool, source: &Source, ops: bool) -> Result<()> {
    if maximize && source.unit() == crate::metrics::Unit::Seconds && !ops {
        return Err(Error::Usage(format!(
            "--maximize on {} would look for the slowest value: give --ops N to maximise operations per second, or use --minimize",
            source.name()
        )));
    }
    if !maximize && source.higher_is_better() {
        return Err(Error::Usage(format!(
            "--minimize on {} would look for the fewest completions per second: use --maximize",
            source.name()
        )));
    }
    Ok(())
}
