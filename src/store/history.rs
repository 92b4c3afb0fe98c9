//! Benchmark histories read from the store: per machine fingerprint and
//! benchmark identity, one point per session (or per value of a label with
//! `--order-by`), oldest first, with every run's value of one metric.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The metric whose values the gate, history and report use: cmdscope's
/// (and hyperfine's) wall time, or Go's time per operation.
pub const GO_TIME: &str = "sec/op";

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
fn time_values_of(store: &mut Store, ids: &[i64]) -> Result<HashMap<i64, Vec<f64>>> {
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
                        let seconds = crate::analysis::concurrency::per_block(&store.batches(id)?);
                        out.insert(id, seconds.into_iter().map(|(_, s)| s).collect());
                    }
                    Ok(out)
                }
                Derived::Latency(_) => Ok(store.metric_values(&ids, Metric::WallTime)?),
            }
        }
        None => match self::metric(metric)? {
            Some(m) => {
                let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
                Ok(store.metric_values(&ids, m)?)
            }
            None => time_values(store, cells),
        },
    }
}

use crate::error::{Error, Result};
use crate::metrics::Metric;
use crate::store::{Filter, Store, StoredCell, StoredSession};

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
            Err(Error::Usage(format!(
                "unknown metric '{name}'; one of: {}",
                known.join(", ")
            )))
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
                Derived::Throughput => {
                    crate::analysis::concurrency::per_block(&store.batches(c.id)?)
                        .into_iter()
                        .map(|(_, s)| s)
                        .collect()
                }
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

/// Cell ids read per query.
const RANGE: i64 = 20_000;

/// One benchmark's values, and per cell (session, id, start, length).
#[derive(Default)]
struct Runs {
    values: Vec<f64>,
    cells: Vec<(u32, i64, usize, usize)>,
}

/// What decides which cells are read, and into which point.
struct Ranges<'a> {
    /// A session id's index among the sessions read (None: not read).
    at: &'a (dyn Fn(i64) -> Option<u32> + Sync),
    /// Whether a cell (identity, name, command) is of a benchmark asked for.
    wanted: &'a (dyn Fn(&str, &str, &str) -> bool + Sync),
    metric: Option<Metric>,
    /// Cell ids read per query.
    per_query: i64,
}

impl Ranges<'_> {
    /// The cells with ids in `first..=last` and their values, by benchmark
    /// identity in the order first seen.
    fn read(&self, store: &mut Store, first: i64, last: i64) -> Result<Vec<(String, Runs)>> {
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
fn merge(mut low: Vec<(String, Runs)>, high: Vec<(String, Runs)>) -> Vec<(String, Runs)> {
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
struct CellValues {
    /// Cell `k`'s values are `values[starts[k]..starts[k + 1]]`.
    starts: Vec<usize>,
    values: Vec<f64>,
}

impl CellValues {
    fn of(&self, k: usize) -> &[f64] {
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
fn read_values(store: &mut Store, ids: &[i64], metric: Option<Metric>) -> Result<CellValues> {
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

/// One session as its histories' points refer to it: shared by the points
/// of every benchmark it measured, so a history costs a pointer per point.
struct Head {
    session: Arc<SessionRef>,
    fingerprint: String,
    hostname: String,
    /// The point it belongs to: its id, or its `--order-by` label's value
    /// (None: it has no such label, and is left out).
    key: Option<String>,
}

fn heads(sessions: &[StoredSession], order_by: Option<&str>) -> Vec<Head> {
    sessions
        .iter()
        .map(|s| Head {
            session: Arc::new(SessionRef {
                id: s.id,
                started: s.started.clone(),
                started_unix: s.started_unix,
                labels: s.labels.clone(),
                search: s.search.clone(),
            }),
            fingerprint: s.fingerprint.clone(),
            hostname: s.machine.hostname.clone(),
            key: match order_by {
                Some(label) => s.label(label).map(str::to_string),
                None => Some(s.id.to_string()),
            },
        })
        .collect()
}

/// The histories (one per machine, by fingerprint) of benchmark `identity`
/// from its cells' values, `rows` being (index into `heads`, values) with
/// the oldest session first. A benchmark twice in one session has its runs
/// pooled.
fn group(
    heads: &[Head],
    identity: &str,
    rows: impl IntoIterator<Item = (usize, Vec<f64>)>,
    metric: &str,
    order_by: Option<&str>,
) -> Vec<History> {
    if order_by.is_none() {
        return by_session(heads, identity, rows, metric);
    }
    // fingerprint -> (hostname, keys in first-seen order, key -> point).
    type Points = (String, Vec<String>, HashMap<String, Point>);
    let mut groups: BTreeMap<&str, Points> = BTreeMap::new();
    for (s, v) in rows {
        let head = &heads[s];
        let Some(key) = &head.key else {
            continue;
        };
        if v.is_empty() {
            continue;
        }
        let g = groups
            .entry(head.fingerprint.as_str())
            .or_insert_with(|| (head.hostname.clone(), Vec::new(), HashMap::new()));
        let p = g.2.entry(key.clone()).or_insert_with(|| {
            g.1.push(key.clone());
            Point {
                sessions: Vec::new(),
                key: order_by.map(|_| key.clone()),
                runs: Vec::new(),
            }
        });
        if p.sessions.last().map(|r| r.id) != Some(head.session.id) {
            p.sessions.push(Arc::clone(&head.session));
        }
        if p.runs.is_empty() {
            p.runs = v;
        } else {
            p.runs.extend_from_slice(&v);
        }
    }
    groups
        .into_iter()
        .map(|(fingerprint, (hostname, mut keys, mut points))| {
            if order_by.is_some() && keys.iter().all(|k| k.parse::<f64>().is_ok()) {
                // Numeric labels (build numbers) in numeric order.
                keys.sort_by(|a, b| {
                    let (x, y) = (
                        a.parse::<f64>().unwrap_or(0.0),
                        b.parse::<f64>().unwrap_or(0.0),
                    );
                    x.total_cmp(&y)
                });
            }
            History {
                benchmark: identity.to_string(),
                metric: metric.to_string(),
                fingerprint: fingerprint.to_string(),
                hostname,
                points: keys.iter().filter_map(|k| points.remove(k)).collect(),
            }
        })
        .collect()
}

/// [`group`] with one point per session: the rows come oldest session
/// first, so a session's rows follow each other and a point is the last
/// one of its machine or a new one (no map of points by key).
fn by_session(
    heads: &[Head],
    identity: &str,
    rows: impl IntoIterator<Item = (usize, Vec<f64>)>,
    metric: &str,
) -> Vec<History> {
    // fingerprint -> (hostname, points).
    let mut groups: BTreeMap<&str, (String, Vec<Point>)> = BTreeMap::new();
    for (s, v) in rows {
        let head = &heads[s];
        if v.is_empty() || head.key.is_none() {
            continue;
        }
        let g = groups
            .entry(head.fingerprint.as_str())
            .or_insert_with(|| (head.hostname.clone(), Vec::new()));
        match g.1.last_mut() {
            Some(p) if p.sessions.last().map(|r| r.id) == Some(head.session.id) => {
                p.runs.extend_from_slice(&v)
            }
            _ => g.1.push(Point {
                sessions: vec![Arc::clone(&head.session)],
                key: None,
                runs: v,
            }),
        }
    }
    groups
        .into_iter()
        .map(|(fingerprint, (hostname, points))| History {
            benchmark: identity.to_string(),
            metric: metric.to_string(),
            fingerprint: fingerprint.to_string(),
            hostname,
            points,
        })
        .collect()
}

/// Groups sessions (oldest first, with their cells) into histories, sorted
/// by machine then benchmark, as [`load`] does from the store; pure, for
/// tests. The values move into the histories.
pub fn assemble(
    sessions: &[StoredSession],
    mut values: HashMap<i64, Vec<f64>>,
    metric: &str,
    order_by: Option<&str>,
    wanted: &dyn Fn(&StoredCell) -> bool,
) -> Vec<History> {
    let heads = heads(sessions, order_by);
    let identities: std::collections::BTreeSet<&str> = sessions
        .iter()
        .flat_map(|s| s.cells.iter())
        .filter(|c| wanted(c))
        .map(|c| c.identity.as_str())
        .collect();
    let mut all = Vec::new();
    for identity in identities {
        let mut rows = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            for c in s
                .cells
                .iter()
                .filter(|c| c.identity == identity && wanted(c))
            {
                if let Some(v) = values.remove(&c.id) {
                    rows.push((i, v));
                }
            }
        }
        all.extend(group(&heads, identity, rows, metric, order_by));
    }
    all.sort_by(|a, b| (&a.fingerprint, &a.benchmark).cmp(&(&b.fingerprint, &b.benchmark)));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Machine;

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
