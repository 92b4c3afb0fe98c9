//! Reading a store's cells and their values in ranges of cell ids: by
//! benchmark, one array of values each, a range scanned rather than its
//! cells looked up by id when they are most of it.

use std::collections::HashMap;

use super::values::time_values_of;
use crate::error::Result;
use crate::metrics::Metric;
use crate::store::Store;

/// Cell ids read per query.
pub(super) const RANGE: i64 = 20_000;

/// One benchmark's values, and per cell (session, id, start, length).
#[derive(Default)]
pub(super) struct Runs {
    pub(super) values: Vec<f64>,
    pub(super) cells: Vec<(u32, i64, usize, usize)>,
}

/// What decides which cells are read, and into which point.
pub(super) struct Ranges<'a> {
    /// A session id's index among the sessions read (None: not read).
    pub(super) at: &'a (dyn Fn(i64) -> Option<u32> + Sync),
    /// Whether a cell (identity, name, command) is of a benchmark asked for.
    pub(super) wanted: &'a (dyn Fn(&str, &str, &str) -> bool + Sync),
    pub(super) metric: Option<Metric>,
    /// Cell ids read per query.
    pub(super) per_query: i64,
}

impl Ranges<'_> {
    /// The cells with ids in `first..=last` and their values, by benchmark
    /// identity in the order first seen.
    pub(super) fn read(
        &self,
        store: &mut Store,
        first: i64,
        last: i64,
    ) -> Result<Vec<(String, Runs)>> {
        let mut numbers: HashMap<String, usize> = HashMap::new();
        let mut benchmarks: Vec<(String, Runs)> = Vec::new();
        let mut lo = first;
        while lo <= last {
            let hi = lo.saturating_add(self.per_query - 1).min(last);
            // (cell id, session, benchmark), by id.
            let mut cells: Vec<(i64, u32, usize)> = Vec::new();
            for c in store.cells_in_range(lo, hi)? {
                if !(self.wanted)(&c.identity, &c.name, &c.command) {
                    continue;
                }
                let Some(session) = (self.at)(c.session) else {
                    continue;
                };
                let b = match numbers.get(&c.identity) {
                    Some(&b) => b,
                    None => {
                        numbers.insert(c.identity.clone(), benchmarks.len());
                        benchmarks.push((c.identity, Runs::default()));
                        benchmarks.len() - 1
                    }
                };
                cells.push((c.id, session, b));
            }
            lo = hi.saturating_add(1);
            let ids: Vec<i64> = cells.iter().map(|c| c.0).collect();
            let values = read_values(store, &ids, self.metric)?;
            for (k, &(id, session, b)) in cells.iter().enumerate() {
                let v = values.of(k);
                if v.is_empty() {
                    continue;
                }
                let runs = &mut benchmarks[b].1;
                runs.cells.push((session, id, runs.values.len(), v.len()));
                runs.values.extend_from_slice(v);
            }
        }
        // The arrays' spare capacity (up to half of them) is most of the
        // memory `changes` may not use.
        for (_, runs) in &mut benchmarks {
            runs.values.shrink_to_fit();
            runs.cells.shrink_to_fit();
        }
        Ok(benchmarks)
    }
}

/// The benchmarks of two halves read apart, as one read would have them
/// (the order of cells does not matter: each history sorts its own).
pub(super) fn merge(
    mut low: Vec<(String, Runs)>,
    high: Vec<(String, Runs)>,
) -> Vec<(String, Runs)> {
    let mut index: HashMap<String, usize> = low
        .iter()
        .enumerate()
        .map(|(k, (identity, _))| (identity.clone(), k))
        .collect();
    for (identity, runs) in high {
        match index.get(&identity) {
            Some(&k) => {
                // Joined into arrays of the exact size: growing one would
                // hold twice its size for a moment.
                let into = &mut low[k].1;
                let offset = into.values.len();
                let mut values = Vec::with_capacity(offset + runs.values.len());
                values.extend_from_slice(&into.values);
                values.extend_from_slice(&runs.values);
                into.values = values;
                let mut cells = Vec::with_capacity(into.cells.len() + runs.cells.len());
                cells.extend_from_slice(&into.cells);
                cells.extend(
                    runs.cells
                        .into_iter()
                        .map(|(s, id, start, len)| (s, id, start + offset, len)),
                );
                into.cells = cells;
            }
            None => {
                index.insert(identity.clone(), low.len());
                low.push((identity, runs));
            }
        }
    }
    low
}

/// The values of a list of cells, each cell's runs in one slice.
pub(super) struct CellValues {
    /// Cell `k`'s values are `values[starts[k]..starts[k + 1]]`.
    starts: Vec<usize>,
    values: Vec<f64>,
}

impl CellValues {
    pub(super) fn of(&self, k: usize) -> &[f64] {
        &self.values[self.starts[k]..self.starts[k + 1]]
    }

    /// From one list per cell.
    fn from_lists(lists: impl IntoIterator<Item = Vec<f64>>) -> CellValues {
        let mut out = CellValues {
            starts: vec![0],
            values: Vec::new(),
        };
        for v in lists {
            out.values.extend_from_slice(&v);
            out.starts.push(out.values.len());
        }
        out
    }
}

/// Run values of cells `ids` for `metric` (None: wall time,
/// else Go's sec/op), cell by cell in the order of `ids`. When the cells
/// are most of an id range, the range is scanned instead of looking cells
/// up by id, and its values go straight from the backend into one array
/// (grouped by cell, each cell's runs in the order read), with no map or
/// list per cell.
pub(super) fn read_values(
    store: &mut Store,
    ids: &[i64],
    metric: Option<Metric>,
) -> Result<CellValues> {
    let column = metric.unwrap_or(Metric::WallTime);
    let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
        return Ok(CellValues::from_lists(Vec::new()));
    };
    let dense = ids.len() >= 1000 && (ids.len() as f64) * 2.0 >= (hi - lo + 1) as f64;
    let mut out = if dense {
        // Cell id - lo -> its position in `ids` (u32::MAX: not wanted).
        let mut slot = vec![u32::MAX; (hi - lo + 1) as usize];
        for (k, &id) in ids.iter().enumerate() {
            slot[(id - lo) as usize] = k as u32;
        }
        let mut read: Vec<(u32, f64)> = Vec::new();
        store.each_metric_value_in_range(lo, hi, column, &mut |id, v| {
            if let Some(&k) = slot.get((id - lo) as usize) {
                if k != u32::MAX {
                    read.push((k, v));
                }
            }
        })?;
        // A counting sort by cell, stable: each cell's runs in read order.
        let mut starts = vec![0usize; ids.len() + 1];
        for &(k, _) in &read {
            starts[k as usize + 1] += 1;
        }
        for k in 0..ids.len() {
            starts[k + 1] += starts[k];
        }
        let mut next = starts.clone();
        let mut values = vec![0.0; read.len()];
        for (k, v) in read {
            values[next[k as usize]] = v;
            next[k as usize] += 1;
        }
        CellValues { starts, values }
    } else {
        let mut map = store.metric_values(ids, column)?;
        CellValues::from_lists(ids.iter().map(|id| map.remove(id).unwrap_or_default()))
    };
    if metric.is_none() {
        // Imported Go benchmarks have no wall time: their sec/op instead.
        let missing: Vec<i64> = (0..ids.len())
            .filter(|&k| out.of(k).is_empty())
            .map(|k| ids[k])
            .collect();
        if !missing.is_empty() {
            let mut extra = time_values_of(store, &missing)?;
            let lists: Vec<Vec<f64>> = (0..ids.len())
                .map(|k| match extra.remove(&ids[k]) {
                    Some(v) if out.of(k).is_empty() => v,
                    _ => out.of(k).to_vec(),
                })
                .collect();
            out = CellValues::from_lists(lists);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Filter, Machine, StoredCell};

    #[test]
    fn range_scan_reads_what_the_id_lookup_reads() {
        use crate::metrics::Sample;
        use crate::store::{Location, NewCell, NewSession};
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&Location::Sqlite(dir.path().join("h.db"))).unwrap();
        let cells: Vec<NewCell> = (0..100)
            .map(|i| NewCell {
                identity: format!("b{i}"),
                name: format!("b{i}"),
                command: format!("b{i}"),
                parameters: Vec::new(),
                variant: "{}".into(),
            })
            .collect();
        for s in 0..11 {
            let id = store
                .begin_session(&NewSession {
                    started: std::time::SystemTime::now(),
                    source: "run".into(),
                    command_line: String::new(),
                    order: None,
                    seed: None,
                    shell: None,
                    machine: Machine::current(),
                    labels: Vec::new(),
                    settings: None,
                })
                .unwrap();
            for (i, cell) in store.add_cells(id, &cells).unwrap().into_iter().enumerate() {
                let runs: Vec<Sample> = (0..3)
                    .map(|r| {
                        let mut x = Sample::new(r);
                        x.set(Metric::WallTime, (s * 1000 + i * 10) as f64 + r as f64);
                        // A timed-out run is left out by both reads.
                        x.timed_out = r == 2 && i == 7;
                        x
                    })
                    .collect();
                store.add_runs(cell, 0, &runs).unwrap();
            }
        }
        let sessions = store.sessions(&Filter::default()).unwrap();
        let all: Vec<&StoredCell> = sessions.iter().flat_map(|s| s.cells.iter()).collect();
        assert_eq!(all.len(), 1100);
        let ids: Vec<i64> = all.iter().map(|c| c.id).collect();
        let dense = read_values(&mut store, &ids, None).unwrap();
        let lookup = store.metric_values(&ids, Metric::WallTime).unwrap();
        assert_eq!(dense.starts.len(), 1101);
        for (k, id) in ids.iter().enumerate() {
            let mut v = dense.of(k).to_vec();
            v.sort_by(f64::total_cmp);
            assert_eq!(Some(&v), lookup.get(id));
        }
        // The timed-out run is in neither.
        assert_eq!(dense.values.len(), 1100 * 3 - 11);
        // A few cells: looked up by id, the same values.
        let few = read_values(&mut store, &ids[..5], None).unwrap();
        assert_eq!(Some(&few.of(0).to_vec()), lookup.get(&all[0].id));
    }
}
