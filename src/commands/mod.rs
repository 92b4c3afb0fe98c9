//! The subcommands that work on the results store: `history`, `check`,
//! `report` and `import`, and `doctor`, which checks the machine. One
//! module per command; shared helpers here.

pub mod changes;
pub mod check;
pub mod doctor;
pub mod history;
pub mod import;
pub mod report;
pub mod status;
pub mod suite;

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::metrics::Metric;
use crate::store::{Filter, Store, StoredCell};

/// The metric whose values the gate, history and report use: cmdscope's
/// (and hyperfine's) wall time, or Go's time per operation.
pub const GO_TIME: &str = "sec/op";

/// Comparisons and intervals on more values than this use an evenly spaced
/// subsample (every k-th run): Hodges-Lehmann estimates cost n × m, and a
/// few thousand runs already pin a ratio down far more tightly than the
/// machine's drift does.
pub const MAX_VALUES: usize = 2000;

/// Time values (seconds) of each cell, runs that timed out left out.
pub fn time_values(store: &mut Store, cells: &[&StoredCell]) -> Result<HashMap<i64, Vec<f64>>> {
    let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
    let mut out = store.metric_values(&ids, Metric::WallTime)?;
    for c in cells {
        if out.get(&c.id).is_none_or(Vec::is_empty) {
            let extra = store.extra_series(c.id)?;
            if let Some(s) = extra.into_iter().find(|s| s.metric == GO_TIME) {
                out.insert(c.id, s.values);
            }
        }
    }
    Ok(out)
}

/// Every k-th value so that at most `max` remain (all of them when fewer).
pub fn thin(values: &[f64], max: usize) -> Vec<f64> {
    if values.len() <= max || max == 0 {
        return values.to_vec();
    }
    let stride = values.len().div_ceil(max);
    values.iter().step_by(stride).copied().collect()
}

/// Median of the finite values (stored data may hold NaN for a missing
/// measurement); None when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    crate::stats::median(&v)
}

/// Session filter from the shared flags.
pub fn filter(args: &crate::cli::SessionFilterArgs) -> Result<Filter> {
    Ok(Filter {
        labels: crate::store::parse_labels(&args.labels)?,
        machine: args.machine.clone(),
        ..Filter::default()
    })
}

/// "no sessions in store X" with what was asked.
pub fn nothing_found(store: &Store, what: &str) -> Error {
    Error::Usage(format!("no {what} in store '{}'", store.location()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thins_evenly() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(thin(&v, 20), v);
        assert_eq!(thin(&v, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(thin(&v, 3), vec![0.0, 4.0, 8.0]);
    }
}
