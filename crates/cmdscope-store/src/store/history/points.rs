//! Grouping cells' values into histories: one per machine, a point per
//! session or per `--order-by` label value, oldest first.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::{History, Point, SessionRef};
use crate::store::{StoredCell, StoredSession};

/// One session as its histories' points refer to it: shared by the points
/// of every benchmark it measured, so a history costs a pointer per point.
pub(super) struct Head {
    session: Arc<SessionRef>,
    fingerprint: String,
    hostname: String,
    /// The point it belongs to: its id, or its `--order-by` label's value
    /// (None: it has no such label, and is left out).
    key: Option<String>,
}

pub(super) fn heads(sessions: &[StoredSession], order_by: Option<&str>) -> Vec<Head> {
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
pub(super) fn group(
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
