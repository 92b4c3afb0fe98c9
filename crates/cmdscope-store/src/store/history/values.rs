//! The values of given cells: wall time (Go's sec/op for imports), a run
//! metric, or what concurrency mode's metrics are computed from.

use std::collections::HashMap;

use super::{Derived, GO_TIME};
use crate::error::Result;
use crate::metrics::Metric;
use crate::store::{Store, StoredCell};

/// Time values (seconds) of each cell, runs that timed out left out.
pub fn time_values(store: &mut Store, cells: &[&StoredCell]) -> Result<HashMap<i64, Vec<f64>>> {
    let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
    time_values_of(store, &ids)
}

/// Values of `metric` of each cell, runs that timed out left out: wall
/// time as [`time_values`] reads it (Go's sec/op where a cell has none).
pub fn run_values(
    store: &mut Store,
    cells: &[&StoredCell],
    metric: Metric,
) -> Result<HashMap<i64, Vec<f64>>> {
    if metric == Metric::WallTime {
        return time_values(store, cells);
    }
    let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
    Ok(store.metric_values(&ids, metric)?)
}

/// [`time_values`] of cells given by id.
pub(super) fn time_values_of(store: &mut Store, ids: &[i64]) -> Result<HashMap<i64, Vec<f64>>> {
    let mut out = store.metric_values(ids, Metric::WallTime)?;
    for &id in ids {
        if out.get(&id).is_none_or(Vec::is_empty) {
            let extra = store.extra_series(id)?;
            if let Some(s) = extra.into_iter().find(|s| s.metric == GO_TIME) {
                out.insert(id, s.values);
            }
        }
    }
    Ok(out)
}

/// The values `history --metric` summarises per cell: the runs' values
/// of a run metric (None: wall time, Go's sec/op for imports), each
/// batch's seconds per completion for throughput, the runs' wall times
/// for a latency percentile (concurrency cells only for both).
pub fn cell_values(
    store: &mut Store,
    cells: &[&StoredCell],
    metric: Option<&str>,
) -> Result<HashMap<i64, Vec<f64>>> {
    match metric.and_then(Derived::from_name) {
        Some(d) => {
            let with: std::collections::HashSet<i64> =
                store.cells_with_batches()?.into_iter().collect();
            let ids: Vec<i64> = cells
                .iter()
                .map(|c| c.id)
                .filter(|id| with.contains(id))
                .collect();
            match d {
                Derived::Throughput => {
                    let mut out = HashMap::new();
                    for id in ids {
                        let seconds = crate::run::session::batch::per_block(&store.batches(id)?);
                        out.insert(id, seconds.into_iter().map(|(_, s)| s).collect());
                    }
                    Ok(out)
                }
                Derived::Latency(_) => Ok(store.metric_values(&ids, Metric::WallTime)?),
            }
        }
        None => match super::metric(metric)? {
            Some(m) => {
                let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
                Ok(store.metric_values(&ids, m)?)
            }
            None => time_values(store, cells),
        },
    }
}
