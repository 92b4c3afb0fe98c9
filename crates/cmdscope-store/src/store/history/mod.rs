//! Benchmark histories read from the store: per machine fingerprint and
//! benchmark identity, one point per session (or per value of a label with
//! `--order-by`), oldest first, with every run's value of one metric.
//!
//! [`values`] reads given cells' values, [`ranges`] reads a store's cells
//! in ranges of ids, [`points`] groups values into histories.

mod points;
mod ranges;
mod values;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Result, StoreQueryError};
use crate::metrics::Metric;
use crate::store::{Filter, Store, StoredSession};
pub use points::assemble;
use points::{group, heads, Head};
use ranges::{merge, Ranges, RANGE};
pub use values::{cell_values, run_values, time_values};

/// The metric whose values the gate, history and report use: cmdscope's
/// (and hyperfine's) wall time, or Go's time per operation.
pub const GO_TIME: &str = "sec/op";

/// Which histories to read.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Substring of a benchmark's identity, name or command.
    pub benchmark: Option<String>,
    pub labels: Vec<(String, String)>,
    /// A fingerprint (or its prefix) or a hostname.
    pub machine: Option<String>,
    /// A cmdscope metric name; None is wall time (Go's sec/op for imports).
    pub metric: Option<String>,
    /// Group sessions by this label's value, one point per value.
    pub order_by: Option<String>,
}

/// The session(s) behind one point of a history.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SessionRef {
    pub id: i64,
    pub started: String,
    pub started_unix: f64,
    pub labels: Vec<(String, String)>,
    /// The session's search answer, for the site's benchmark pages.
    #[serde(skip)]
    pub search: Option<crate::store::StoredSearch>,
}

impl SessionRef {
    /// `#12 (2026-11-22 10:04:05Z, commit=c15)`.
    pub fn describe(&self) -> String {
        describe_session(self.id, &self.started, &self.labels)
    }
}

/// A session as messages name it: `#12 (2026-11-22 10:04:05Z, commit=c15)`.
pub fn describe_session(id: i64, started: &str, labels: &[(String, String)]) -> String {
    let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "#{id} ({}{}{})",
        started.replace('T', " "),
        if labels.is_empty() { "" } else { ", " },
        labels.join(" ")
    )
}

/// One point of a history: a session, or every session with one label value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    /// Oldest first; shared with the same session's points in other
    /// histories.
    pub sessions: Vec<Arc<SessionRef>>,
    /// The label value of the point with `--order-by`.
    pub key: Option<String>,
    #[serde(skip)]
    pub runs: Vec<f64>,
}

impl Point {
    /// The label value or the session, for messages.
    pub fn describe(&self) -> String {
        let first = self.sessions.first().map(|s| s.describe());
        match (&self.key, first) {
            (Some(k), Some(f)) if self.sessions.len() > 1 => {
                format!("{k}: {} sessions from {f}", self.sessions.len())
            }
            (_, Some(f)) => f,
            (_, None) => String::new(),
        }
    }

    pub fn newest(&self) -> Option<&SessionRef> {
        self.sessions.last().map(|s| &**s)
    }
}

#[derive(Clone, Debug)]
pub struct History {
    pub benchmark: String,
    pub metric: String,
    pub fingerprint: String,
    pub hostname: String,
    pub points: Vec<Point>,
}

impl History {
    pub fn runs(&self) -> Vec<Vec<f64>> {
        self.points.iter().map(|p| p.runs.clone()).collect()
    }

    /// Whether larger values are slower (times, and throughput's seconds
    /// per completion) rather than just higher.
    pub fn is_time(&self) -> bool {
        self.metric == Metric::WallTime.name()
            || self.metric == GO_TIME
            || Derived::from_name(&self.metric).is_some()
            || Metric::from_name(&self.metric)
                .is_some_and(|m| m.unit() == crate::metrics::Unit::Seconds)
    }

    /// Whether the values are throughput's seconds per completion, shown
    /// as completions per second.
    pub fn is_throughput(&self) -> bool {
        self.metric == THROUGHPUT
    }
}

/// Throughput: each batch's seconds per completion (the inverse of its
/// completions per second), as `check` compares it; shown as throughput.
pub const THROUGHPUT: &str = "throughput";
/// Latency percentiles: each session's percentile of its instances' wall
/// times, one value per session.
pub const LATENCY_P50: &str = "latency_p50";
pub const LATENCY_P90: &str = "latency_p90";
pub const LATENCY_P99: &str = "latency_p99";

/// A metric a history has that is no column of the runs: computed per
/// session from what concurrency mode stores (`run --concurrency N`: its
/// batches, and its runs' wall times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derived {
    Throughput,
    Latency(u8),
}

impl Derived {
    pub const ALL: [Derived; 4] = [
        Derived::Throughput,
        Derived::Latency(50),
        Derived::Latency(90),
        Derived::Latency(99),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Derived::Throughput => THROUGHPUT,
            Derived::Latency(50) => LATENCY_P50,
            Derived::Latency(90) => LATENCY_P90,
            Derived::Latency(_) => LATENCY_P99,
        }
    }

    pub fn from_name(name: &str) -> Option<Derived> {
        Derived::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// The metric asked for, checked before the store is read: a run metric
/// (a column of the runs), or None for wall time and for the metrics of
/// concurrency sessions ([`Derived`]).
/// The metric a simulated session's benchmarks are summarised by when none
/// is asked for: its wall times are the simulator's, tens of times the
/// program's own, so a median of them would mislead.
pub const SIMULATED_DEFAULT: &str = "sim_estimated_cycles";

/// The metric `history` shows for a session's benchmarks: the one asked
/// for, else estimated cycles for a session of `run --simulate`, else wall
/// time (None).
pub fn shown_metric<'a>(session: &StoredSession, asked: Option<&'a str>) -> Option<&'a str> {
    asked.or_else(|| session.simulation().map(|_| SIMULATED_DEFAULT))
}

pub fn metric(name: Option<&str>) -> Result<Option<Metric>> {
    let Some(name) = name else {
        return Ok(None);
    };
    if Derived::from_name(name).is_some() {
        return Ok(None);
    }
    match Metric::from_name(name) {
        Some(m) if crate::store::schema::has_column(m) => Ok(Some(m)),
        _ => {
            let known: Vec<&str> = Metric::ALL
                .iter()
                .filter(|m| crate::store::schema::has_column(**m))
                .map(|m| m.name())
                .chain(Derived::ALL.iter().map(|d| d.name()))
                .collect();
            Err(StoreQueryError::UnknownMetric {
                name: name.to_string(),
                known: known.join(", "),
            }
            .into())
        }
    }
}

/// Every history matching `q`, sorted by machine then benchmark. Sessions
/// that did not finish are left out (their runs are partial), and so are
/// points without values.
pub fn load(store: &mut Store, q: &Query) -> Result<Vec<History>> {
    let mut all = Vec::new();
    each(store, q, |h| {
        all.push(h);
        Ok(())
    })?;
    all.sort_by(|a, b| (&a.fingerprint, &a.benchmark).cmp(&(&b.fingerprint, &b.benchmark)));
    Ok(all)
}

/// [`load`], one benchmark at a time: `f` receives each history (by
/// benchmark, then machine) and may keep less than it (`changes` keeps its
/// answers, not the runs). The store is read once, in ranges of cell ids
/// (sequential reads; looking a benchmark's cells up by id reads the runs
/// table in random order, many times slower): the sessions without their
/// cells, then each range's cells and values, the values kept as one
/// array per benchmark (8 bytes a value) until that benchmark's history is
/// built, handed to `f` and freed. A large store's two halves of cell ids
/// are read at once by two connections.
pub fn each(store: &mut Store, q: &Query, f: impl FnMut(History) -> Result<()>) -> Result<()> {
    each_in(store, q, RANGE, f)
}

/// [`each`], reading `per_query` cells per query.
fn each_in(
    store: &mut Store,
    q: &Query,
    per_query: i64,
    mut f: impl FnMut(History) -> Result<()>,
) -> Result<()> {
    if let Some(d) = q.metric.as_deref().and_then(Derived::from_name) {
        return each_derived(store, q, d, f);
    }
    let chosen = metric(q.metric.as_deref())?;
    let (heads, at) = ended_sessions(store, q)?;
    let at = |id: i64| at.index(id);
    let wanted = |identity: &str, name: &str, command: &str| {
        q.benchmark
            .as_deref()
            .is_none_or(|b| identity.contains(b) || name.contains(b) || command.contains(b))
    };
    let from = Ranges {
        at: &at,
        wanted: &wanted,
        metric: chosen,
        per_query,
    };
    let mut benchmarks = match store.cell_ids()? {
        None => Vec::new(),
        // Large stores are read by two connections, each half of the
        // cells, on two threads: reading is most of the time before the
        // first history can be analysed. A store that cannot be opened a
        // second time is read by this connection alone.
        Some((first, last)) if last - first >= 2 * per_query => {
            let middle = first + (last - first) / 2;
            let location = store.opened().clone();
            let (low, high) = std::thread::scope(|scope| {
                let high = scope.spawn(|| {
                    let mut other = Store::open_read_only(&location).ok()?;
                    Some(from.read(&mut other, middle + 1, last))
                });
                let low = from.read(store, first, middle);
                (low, high.join().ok().flatten())
            });
            match high {
                Some(high) => merge(low?, high?),
                None => merge(low?, from.read(store, middle + 1, last)?),
            }
        }
        Some((first, last)) => from.read(store, first, last)?,
    };
    // By identity, as the caller expects.
    benchmarks.sort_by(|a, b| a.0.cmp(&b.0));
    let metric_name = chosen.map_or(Metric::WallTime.name(), |m| m.name());
    for (identity, mut runs) in benchmarks {
        // Oldest session first; a session's cells in id order.
        runs.cells.sort_by_key(|c| (c.0, c.1));
        let values = std::mem::take(&mut runs.values);
        let rows = runs.cells.iter().map(|&(s, _, start, len)| {
            let v = values[start..start + len].to_vec();
            (s as usize, v)
        });
        for h in group(&heads, &identity, rows, metric_name, q.order_by.as_deref()) {
            f(h)?;
        }
    }
    Ok(())
}

/// [`each`] for a metric of concurrency sessions: only the cells with
/// stored batches are read, each one's values computed from its batches
/// (throughput: each batch's seconds per completion) or its runs' wall
/// times (a latency percentile: one value per cell).
fn each_derived(
    store: &mut Store,
    q: &Query,
    d: Derived,
    mut f: impl FnMut(History) -> Result<()>,
) -> Result<()> {
    let ids = store.cells_with_batches()?;
    let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
        return Ok(());
    };
    let (heads, at) = ended_sessions(store, q)?;
    // identity -> (session index, values), in cell id order.
    let mut rows: BTreeMap<String, Vec<(usize, Vec<f64>)>> = BTreeMap::new();
    let mut lo = first;
    while lo <= last {
        let hi = lo.saturating_add(RANGE - 1).min(last);
        for c in store.cells_in_range(lo, hi)? {
            if ids.binary_search(&c.id).is_err() {
                continue;
            }
            let wanted = q.benchmark.as_deref().is_none_or(|b| {
                c.identity.contains(b) || c.name.contains(b) || c.command.contains(b)
            });
            let Some(s) = at.index(c.session).filter(|_| wanted) else {
                continue;
            };
            let s = s as usize;
            let values = match d {
                Derived::Throughput => crate::run::session::batch::per_block(&store.batches(c.id)?)
                    .into_iter()
                    .map(|(_, s)| s)
                    .collect(),
                Derived::Latency(p) => {
                    let mut walls = store
                        .metric_values(&[c.id], Metric::WallTime)?
                        .remove(&c.id)
                        .unwrap_or_default();
                    walls.retain(|w| w.is_finite());
                    walls.sort_by(f64::total_cmp);
                    if walls.is_empty() {
                        Vec::new()
                    } else {
                        vec![crate::stats::quantile_sorted(&walls, f64::from(p) / 100.0)]
                    }
                }
            };
            rows.entry(c.identity).or_default().push((s, values));
        }
        lo = hi.saturating_add(1);
    }
    for (identity, mut cells) in rows {
        cells.sort_by_key(|c| c.0);
        for h in group(&heads, &identity, cells, d.name(), q.order_by.as_deref()) {
            f(h)?;
        }
    }
    Ok(())
}

/// The sessions `q` selects that ended (a session still running has
/// partial runs), oldest first: their heads, and where each one's id is
/// among them.
fn ended_sessions(store: &mut Store, q: &Query) -> Result<(Vec<Head>, SessionIndex)> {
    let mut sessions = store.session_heads(&Filter {
        labels: q.labels.clone(),
        machine: q.machine.clone(),
        ..Filter::default()
    })?;
    sessions.retain(|s| s.status != crate::store::RUNNING);
    // A simulated session's wall times, memory and faults are the
    // simulator's, tens of times the program's: a history of any of them
    // leaves such sessions out (only they hold the simulated counts).
    if !metric(q.metric.as_deref())?.is_some_and(Metric::simulated) {
        sessions.retain(|s| s.simulation().is_none());
    }
    sessions.reverse();
    let heads = heads(&sessions, q.order_by.as_deref());
    let mut by_id: Vec<(i64, u32)> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id, i as u32))
        .collect();
    by_id.sort_unstable();
    Ok((heads, SessionIndex(by_id)))
}

/// (session id, index among the heads), sorted by id: looked up once per
/// cell, so a sorted array rather than a map.
struct SessionIndex(Vec<(i64, u32)>);

impl SessionIndex {
    fn index(&self, id: i64) -> Option<u32> {
        let k = self.0.binary_search_by_key(&id, |&(s, _)| s).ok()?;
        Some(self.0[k].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Machine, StoredCell, StoredSession};
    use std::collections::HashMap;

    fn session(
        id: i64,
        fingerprint: &str,
        labels: &[(&str, &str)],
        cells: &[&str],
    ) -> StoredSession {
        StoredSession {
            id,
            started: format!("2026-01-01T00:00:{id:02}Z"),
            started_unix: id as f64,
            status: "finished".into(),
            source: "run".into(),
            fingerprint: fingerprint.into(),
            machine: Machine {
                hostname: format!("host-{fingerprint}"),
                ..Machine::default()
            },
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cells: cells
                .iter()
                .enumerate()
                .map(|(i, name)| StoredCell {
                    id: id * 10 + i as i64,
                    position: i as i64,
                    identity: name.to_string(),
                    name: name.to_string(),
                    command: name.to_string(),
                    parameters: Vec::new(),
                    variant: String::new(),
                    runs: 1,
                })
                .collect(),
            ..StoredSession::default()
        }
    }

    /// The store read one benchmark at a time gives the histories that
    /// grouping every session's cells at once gives: a benchmark twice in
    /// a session pooled, one missing from a session skipped, label order.
    #[test]
    fn histories_read_one_benchmark_at_a_time_are_the_assembled_ones() {
        use crate::metrics::Sample;
        use crate::store::{Finish, Location, NewCell, NewSession};
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&Location::Sqlite(dir.path().join("h.db"))).unwrap();
        let cell = |name: &str| NewCell {
            identity: name.into(),
            name: name.into(),
            command: format!("run {name}"),
            parameters: Vec::new(),
            variant: "{}".into(),
        };
        for s in 0..12u64 {
            let mut cells = vec![cell("a"), cell("b")];
            if s % 3 == 0 {
                cells.push(cell("a")); // twice in this session: pooled
            }
            if s % 4 == 1 {
                cells.remove(1); // b missing from this session
            }
            let id = store
                .begin_session(&NewSession {
                    started: std::time::UNIX_EPOCH + std::time::Duration::from_secs(1000 + s),
                    source: "run".into(),
                    command_line: String::new(),
                    order: None,
                    seed: None,
                    shell: None,
                    machine: Machine::current(),
                    labels: vec![("build".into(), format!("{}", 20 - s / 2))],
                    settings: None,
                })
                .unwrap();
            for (i, c) in store.add_cells(id, &cells).unwrap().into_iter().enumerate() {
                let runs: Vec<Sample> = (0..3)
                    .map(|r| {
                        let mut x = Sample::new(r);
                        x.set(Metric::WallTime, (s * 100 + i as u64 * 10 + r) as f64);
                        x
                    })
                    .collect();
                store.add_runs(c, 0, &runs).unwrap();
            }
            let finish = Finish {
                status: "finished".into(),
                stop_reason: None,
                shell_overhead: None,
                preflight: None,
                outcome: None,
            };
            store.finish_session(id, &finish).unwrap();
        }
        let mut sessions = store.sessions(&Filter::default()).unwrap();
        sessions.reverse();
        let ids: Vec<i64> = sessions
            .iter()
            .flat_map(|s| s.cells.iter().map(|c| c.id))
            .collect();
        let values = store.metric_values(&ids, Metric::WallTime).unwrap();
        for order_by in [None, Some("build")] {
            let q = Query {
                order_by: order_by.map(str::to_string),
                ..Query::default()
            };
            let read = load(&mut store, &q).unwrap();
            // Read in ranges of 2 cells, halves by two connections: the same.
            let mut halves = Vec::new();
            each_in(&mut store, &q, 2, |h| {
                halves.push(h);
                Ok(())
            })
            .unwrap();
            halves.sort_by(|a, b| a.benchmark.cmp(&b.benchmark));
            assert_eq!(halves.len(), read.len());
            for (h, r) in halves.iter().zip(&read) {
                assert_eq!((&h.benchmark, &h.points), (&r.benchmark, &r.points));
            }
            let all = |_: &StoredCell| true;
            let grouped = assemble(&sessions, values.clone(), "time_wall_clock", order_by, &all);
            assert_eq!(read.len(), 2);
            for (r, g) in read.iter().zip(&grouped) {
                assert_eq!(r.benchmark, g.benchmark);
                assert_eq!(r.points, g.points, "{order_by:?}");
            }
            let a = &read[0];
            match order_by {
                None => {
                    assert_eq!(a.points.len(), 12);
                    assert_eq!(a.points[0].runs.len(), 6, "pooled");
                    assert_eq!(read[1].points.len(), 9, "b in 9 sessions");
                }
                Some(_) => {
                    let keys: Vec<&str> =
                        a.points.iter().filter_map(|p| p.key.as_deref()).collect();
                    assert_eq!(keys, ["15", "16", "17", "18", "19", "20"]);
                    assert_eq!(a.points[5].sessions.len(), 2);
                }
            }
        }
    }

    #[test]
    fn histories_split_by_machine_and_group_by_label() {
        let sessions = vec![
            session(1, "aaa", &[("build", "10")], &["x", "y"]),
            session(2, "bbb", &[("build", "10")], &["x"]),
            session(3, "aaa", &[("build", "9")], &["x"]),
            session(4, "aaa", &[("build", "10")], &["x"]),
            session(5, "aaa", &[], &["x"]),
        ];
        let values: HashMap<i64, Vec<f64>> = sessions
            .iter()
            .flat_map(|s| s.cells.iter().map(|c| (c.id, vec![c.id as f64])))
            .collect();
        let all = |_: &StoredCell| true;
        let by_session = assemble(&sessions, values.clone(), "time_wall_clock", None, &all);
        let names: Vec<(&str, &str, usize)> = by_session
            .iter()
            .map(|h| (h.fingerprint.as_str(), h.benchmark.as_str(), h.points.len()))
            .collect();
        assert_eq!(
            names,
            vec![("aaa", "x", 4), ("aaa", "y", 1), ("bbb", "x", 1)]
        );
        let ids: Vec<i64> = by_session[0]
            .points
            .iter()
            .map(|p| p.sessions[0].id)
            .collect();
        assert_eq!(ids, vec![1, 3, 4, 5]);

        // One point per build, numeric order (9 before 10), sessions pooled,
        // sessions without the label left out.
        let by_build = assemble(&sessions, values, "time_wall_clock", Some("build"), &all);
        let x = &by_build[0];
        let keys: Vec<&str> = x.points.iter().filter_map(|p| p.key.as_deref()).collect();
        assert_eq!(keys, vec!["9", "10"]);
        assert_eq!(x.points[1].runs, vec![10.0, 40.0]);
        assert_eq!(x.points[1].sessions.len(), 2);
    }
}
