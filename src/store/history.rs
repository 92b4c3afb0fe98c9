//! Benchmark histories read from the store: per machine fingerprint and
//! benchmark identity, one point per session (or per value of a label with
//! `--order-by`), oldest first, with every run's value of one metric.

use std::collections::{BTreeMap, HashMap};

/// The metric whose values the gate, history and report use: cmdscope's
/// (and hyperfine's) wall time, or Go's time per operation.
pub const GO_TIME: &str = "sec/op";

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
    /// Oldest first.
    pub sessions: Vec<SessionRef>,
    /// The label value of the point with `--order-by`.
    pub key: Option<String>,
    #[serde(skip)]
    pub runs: Vec<f64>,
}

impl Point {
    /// The label value or the session, for messages.
    pub fn describe(&self) -> String {
        let first = self.sessions.first().map(SessionRef::describe);
        match (&self.key, first) {
            (Some(k), Some(f)) if self.sessions.len() > 1 => {
                format!("{k}: {} sessions from {f}", self.sessions.len())
            }
            (_, Some(f)) => f,
            (_, None) => String::new(),
        }
    }

    pub fn newest(&self) -> Option<&SessionRef> {
        self.sessions.last()
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

    /// Whether larger values are slower (times) rather than just higher.
    pub fn is_time(&self) -> bool {
        self.metric == Metric::WallTime.name()
            || self.metric == GO_TIME
            || Metric::from_name(&self.metric)
                .is_some_and(|m| m.unit() == crate::metrics::Unit::Seconds)
    }
}

/// The metric asked for, checked before the store is read.
pub fn metric(name: Option<&str>) -> Result<Option<Metric>> {
    let Some(name) = name else {
        return Ok(None);
    };
    match Metric::from_name(name) {
        Some(m) if crate::store::schema::has_column(m) => Ok(Some(m)),
        _ => {
            let known: Vec<&str> = Metric::ALL
                .iter()
                .filter(|m| crate::store::schema::has_column(**m))
                .map(|m| m.name())
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
    let chosen = metric(q.metric.as_deref())?;
    let mut sessions = store.sessions(&Filter {
        command: q.benchmark.clone(),
        labels: q.labels.clone(),
        machine: q.machine.clone(),
        ..Filter::default()
    })?;
    sessions.retain(|s| s.status != crate::store::RUNNING);
    sessions.reverse();
    let wanted = |c: &StoredCell| {
        q.benchmark
            .as_deref()
            .is_none_or(|b| c.identity.contains(b) || c.name.contains(b) || c.command.contains(b))
    };
    let cells: Vec<&StoredCell> = sessions
        .iter()
        .flat_map(|s| s.cells.iter())
        .filter(|c| wanted(c))
        .collect();
    let values = read_values(store, &cells, chosen)?;
    let metric_name = chosen.map_or(Metric::WallTime.name(), |m| m.name());
    Ok(assemble(
        &sessions,
        values,
        metric_name,
        q.order_by.as_deref(),
        &wanted,
    ))
}

/// Run values of `cells` for `metric` (None: wall time, else Go's sec/op).
/// When the cells are most of an id range, as for a whole store's
/// histories, the range is scanned instead of looking cells up by id.
fn read_values(
    store: &mut Store,
    cells: &[&StoredCell],
    metric: Option<Metric>,
) -> Result<HashMap<i64, Vec<f64>>> {
    let column = metric.unwrap_or(Metric::WallTime);
    let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
    let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
        return Ok(HashMap::new());
    };
    let dense = ids.len() >= 1000 && (ids.len() as f64) * 2.0 >= (hi - lo + 1) as f64;
    let mut values = if dense {
        let wanted: std::collections::HashSet<i64> = ids.iter().copied().collect();
        let mut v = store.metric_values_in_range(lo, hi, column)?;
        v.retain(|id, _| wanted.contains(id));
        v
    } else {
        store.metric_values(&ids, column)?
    };
    if metric.is_none() {
        // Imported Go benchmarks have no wall time: time_values finds their sec/op.
        let missing: Vec<&StoredCell> = cells
            .iter()
            .copied()
            .filter(|c| values.get(&c.id).is_none_or(Vec::is_empty))
            .collect();
        if !missing.is_empty() {
            values.extend(time_values(store, &missing)?);
        }
    }
    Ok(values)
}

/// Groups sessions (oldest first) into histories; pure, for tests. The
/// values move into the histories (a whole store's runs are held once).
pub fn assemble(
    sessions: &[StoredSession],
    mut values: HashMap<i64, Vec<f64>>,
    metric: &str,
    order_by: Option<&str>,
    wanted: &dyn Fn(&StoredCell) -> bool,
) -> Vec<History> {
    // (fingerprint, identity) -> (hostname, key -> point), keys in first-seen order.
    type Points = (String, Vec<String>, HashMap<String, Point>);
    let mut groups: BTreeMap<(String, String), Points> = BTreeMap::new();
    for s in sessions {
        let key = match order_by {
            Some(label) => match s.label(label) {
                Some(v) => v.to_string(),
                None => continue,
            },
            None => s.id.to_string(),
        };
        let r = SessionRef {
            id: s.id,
            started: s.started.clone(),
            started_unix: s.started_unix,
            labels: s.labels.clone(),
            search: s.search.clone(),
        };
        let mut seen = Vec::new();
        for c in s.cells.iter().filter(|c| wanted(c)) {
            // A benchmark twice in one session: its runs are pooled.
            let v = match values.remove(&c.id) {
                Some(v) if !v.is_empty() => v,
                _ => continue,
            };
            let g = groups
                .entry((s.fingerprint.clone(), c.identity.clone()))
                .or_insert_with(|| (s.machine.hostname.clone(), Vec::new(), HashMap::new()));
            let p = g.2.entry(key.clone()).or_insert_with(|| {
                g.1.push(key.clone());
                Point {
                    sessions: Vec::new(),
                    key: order_by.map(|_| key.clone()),
                    runs: Vec::new(),
                }
            });
            if !seen.contains(&c.identity) {
                p.sessions.push(r.clone());
                seen.push(c.identity.clone());
            }
            if p.runs.is_empty() {
                p.runs = v;
            } else {
                p.runs.extend_from_slice(&v);
            }
        }
    }
    groups
        .into_iter()
        .map(
            |((fingerprint, benchmark), (hostname, mut keys, mut points))| {
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
                    benchmark,
                    metric: metric.to_string(),
                    fingerprint,
                    hostname,
                    points: keys.iter().filter_map(|k| points.remove(k)).collect(),
                }
            },
        )
        .collect()
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
            finished_unix: None,
            status: "finished".into(),
            stop_reason: None,
            source: "run".into(),
            tool_version: String::new(),
            command_line: String::new(),
            order: None,
            shell_overhead: None,
            preflight: None,
            search: None,
            settings: None,
            fingerprint: fingerprint.into(),
            machine: Machine {
                hostname: format!("host-{fingerprint}"),
                cpu_model: String::new(),
                cores: 1,
                memory_bytes: 1,
                kernel: String::new(),
                governor: None,
                load: None,
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
        let dense = read_values(&mut store, &all, None).unwrap();
        let ids: Vec<i64> = all.iter().map(|c| c.id).collect();
        let lookup = store.metric_values(&ids, Metric::WallTime).unwrap();
        assert_eq!(dense.len(), 1100);
        for (id, mut v) in dense {
            v.sort_by(f64::total_cmp);
            assert_eq!(Some(&v), lookup.get(&id));
        }
        // A few cells: looked up by id, the same values.
        let few = read_values(&mut store, &all[..5], None).unwrap();
        assert_eq!(few.get(&all[0].id), lookup.get(&all[0].id));
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
