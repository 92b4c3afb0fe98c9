//! The rows `changes --fail-on-new-regression` hands the gate's one rule
//! (`analysis::gate`): each history's newest point against the segment
//! before it, and each benchmark of a machine's newest session that has no
//! point there (every run timed out or failed), which a history alone
//! cannot show because a session without values makes no point.

use crate::analysis::changes::{metric_name, Analysed};
use crate::analysis::gate::{self, Side};

/// A machine's newest finished session, as the gate sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewestSession {
    pub id: i64,
    pub fingerprint: String,
    /// Each benchmark of the session (by identity) and what the session
    /// holds of it: copies, values of the metric, runs that timed out or
    /// failed, how the session ended.
    pub benchmarks: Vec<(String, Side)>,
}

/// The gate's rows at `pct`: a history with a single point has no
/// baseline and is no row (a new benchmark).
pub fn rows(analysed: &[Analysed], newest: &[NewestSession], pct: f64) -> Vec<gate::Row> {
    let mut rows = Vec::new();
    let here = |a: &Analysed| {
        newest
            .iter()
            .find(|n| n.fingerprint == a.history.fingerprint)
            .filter(|n| {
                a.history
                    .points
                    .last()
                    .is_some_and(|p| p.sessions.iter().any(|s| s.id == n.id))
            })
            .and_then(|n| n.benchmarks.iter().find(|(b, _)| *b == a.history.benchmark))
            .map(|(_, side)| side.clone())
    };
    for a in analysed {
        let Some((&last, before)) = a.counts.split_last() else {
            continue;
        };
        if before.is_empty() {
            continue;
        }
        let comparison = a.newest_comparison.as_ref();
        let base = Side::of(comparison.map_or(before.iter().sum(), |c| c.before.runs));
        let cand = Side {
            values: last,
            ..here(a).unwrap_or_else(|| Side::of(last))
        };
        rows.push(gate::Row::new(
            &a.history.benchmark,
            metric_name(&a.history),
            (&base, &cand),
            comparison.map(|c| &c.comparison),
            a.new_regression(pct).is_some(),
        ));
    }
    // A benchmark of a newest session without values there: its history's
    // newest point is an older session.
    for n in newest {
        for (benchmark, side) in &n.benchmarks {
            let history = analysed.iter().find(|a| {
                a.history.fingerprint == n.fingerprint && a.history.benchmark == *benchmark
            });
            let Some(a) = history else { continue };
            let covered =
                (a.history.points.last()).is_some_and(|p| p.sessions.iter().any(|s| s.id == n.id));
            // With values, the session is in a point (with --order-by not
            // necessarily the last): only a session without any is missed.
            if covered || side.values > 0 {
                continue;
            }
            let base = Side::of(a.counts.iter().sum());
            rows.push(gate::Row::new(
                benchmark,
                metric_name(&a.history),
                (&base, side),
                None,
                false,
            ));
        }
    }
    rows
}
