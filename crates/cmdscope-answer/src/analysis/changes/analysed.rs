//! A stored history analysed: its changes, episodes and newest session's
//! verdict, the figures its pages draw, and the shifts many benchmarks of
//! one machine share.

use crate::analysis::modes::SpeedModes;
use crate::analysis::LEVEL;
use crate::metrics::Metric;
use crate::stats::median_finite as median;
use crate::store::history::History;

use super::detect::{
    at_one_speed, find_from, newest_of, summaries, Change, Direction, Drift, Episode, Wander,
};
use super::{floor, Params, METRIC_LOG};

/// What became of the newest point's comparison with the segment before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NewestStatus {
    /// Significant and at least `min_change`: `Analysed::newest` holds it.
    Changed,
    /// Compared, and not a change.
    NoChange,
    /// Not compared: fewer than 2 points, or a side without 2 values.
    NotComputed,
}

/// One history with its changes and its newest session's comparison.
#[derive(Clone, Debug)]
pub struct Analysed {
    pub history: History,
    /// Steps in force after them; the steps of episodes are in `episodes`.
    pub changes: Vec<Change>,
    pub episodes: Vec<Episode>,
    pub drifts: Vec<Drift>,
    pub wander: Option<Wander>,
    /// The two speeds the runs fell into, when they did (the slow runs
    /// were brought to the fast speed for every comparison).
    pub speeds: Option<SpeedModes>,
    /// The newest point against the segment before it, when significant.
    pub newest: Option<Change>,
    pub newest_status: NewestStatus,
    /// That comparison whatever its verdict (None: not made), for the gate
    /// (`changes::gate`), which asks whether it had the data to decide.
    pub newest_comparison: Option<Change>,
    /// The smallest change reported for this history.
    pub min_change: f64,
    /// Each point's number of values, in the history's order (the runs
    /// themselves may be dropped once analysed).
    pub counts: Vec<usize>,
    /// Each point's median and its 95 % interval, in the history's order.
    pub medians: Vec<PointMedian>,
}

/// The median of one point's runs (None without finite runs) and its
/// 95 % interval (None when the runs are too few or not all finite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointMedian {
    pub median: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

impl PointMedian {
    pub fn of(runs: &[f64]) -> PointMedian {
        PointMedian {
            median: median(runs),
            ci: crate::stats::median_ci(runs, LEVEL)
                .ok()
                .map(|e| [e.low, e.high]),
        }
    }
}

/// Everything a history's analysis found, as one list in the history's
/// order: what each renderer shows, kind by kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event<'a> {
    /// The level stepped at a point and stayed.
    Step(&'a Change),
    /// The level slid over several points and stayed.
    Drift(&'a Drift),
    /// The level stepped and came back.
    Episode(&'a Episode),
    /// The newest point differs from the stable points before it (a change
    /// point needs points after it; this has none yet).
    Newest(&'a Change),
    /// The machine's level wanders: not a change.
    Wander(&'a Wander),
}

impl Event<'_> {
    /// The kind's name, as the JSON has it.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Step(_) => "step",
            Event::Drift(_) => "drift",
            Event::Episode(_) => "episode",
            Event::Newest(_) => "newest",
            Event::Wander(_) => "wander",
        }
    }

    /// The first point the event touches (wander: the first point).
    pub fn first(&self) -> usize {
        match self {
            Event::Step(c) | Event::Newest(c) => c.index,
            Event::Drift(d) => d.start,
            Event::Episode(e) => e.start,
            Event::Wander(_) => 0,
        }
    }
}

impl Analysed {
    /// Every event of the history, by the point it starts at (wander,
    /// which is over the whole history, first).
    pub fn events(&self) -> Vec<Event<'_>> {
        let mut out: Vec<Event> = self.wander.iter().map(Event::Wander).collect();
        let mut at: Vec<Event> = self
            .changes
            .iter()
            .map(Event::Step)
            .chain(self.drifts.iter().map(Event::Drift))
            .chain(self.episodes.iter().map(Event::Episode))
            .chain(self.newest.iter().map(Event::Newest))
            .collect();
        at.sort_by_key(|e| e.first());
        out.extend(at);
        out
    }

    /// The last step or drift in force, the one that set the level the
    /// history is at (episodes came back).
    pub fn last_in_force(&self) -> Option<&Change> {
        let step = self.changes.last();
        let drift = self.drifts.last().map(|d| &d.change);
        match (step, drift) {
            (Some(s), Some(d)) => Some(if d.index > s.index { d } else { s }),
            (s, d) => s.or(d),
        }
    }

    /// A slowdown still in force: the last step or drift is slower, or the
    /// newest point is significantly slower than the segment before it. An
    /// episode that has ended is not in force.
    pub fn open_regression(&self) -> Option<&Change> {
        if let Some(n) = self
            .newest
            .as_ref()
            .filter(|c| c.direction == Direction::Slower)
        {
            return Some(n);
        }
        self.last_in_force()
            .filter(|c| c.direction == Direction::Slower)
    }

    /// A new regression beyond `pct` percent (the engine's gate rule): the
    /// newest point against the stable points before it, or a drift still
    /// going on at the newest point. What `changes --fail-on-new-regression`
    /// and `check --against history` fail on.
    pub fn new_regression(&self, pct: f64) -> Option<&Change> {
        // Throughput's values are seconds per completion: a drop of pct %
        // is a rise of more than pct %.
        let pct = if self.history.is_throughput() {
            crate::analysis::concurrency::per_completion_gate(pct)
        } else {
            pct
        };
        self.newest
            .as_ref()
            .filter(|c| c.fails_gate(pct))
            .or_else(|| {
                self.drifts
                    .iter()
                    .filter(|d| d.ongoing)
                    .map(|d| &d.change)
                    .find(|c| c.fails_gate(pct))
            })
    }
}

/// What `history --metric` shows per stored benchmark, by cell id, from
/// [`crate::store::history::cell_values`]: the median of the values;
/// for throughput the median batch's completions per second; for a
/// latency percentile that percentile of the runs' wall times.
pub fn history_figures(
    values: &std::collections::HashMap<i64, Vec<f64>>,
    metric: Option<&str>,
) -> std::collections::HashMap<i64, f64> {
    use crate::stats;
    use crate::store::history::Derived;
    let derived = metric.and_then(Derived::from_name);
    values
        .iter()
        .filter_map(|(id, v)| {
            let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
            let figure = match derived {
                Some(Derived::Throughput) => {
                    let rates: Vec<f64> = finite
                        .iter()
                        .filter(|s| **s > 0.0)
                        .map(|s| 1.0 / s)
                        .collect();
                    stats::median_finite(&rates)
                }
                Some(Derived::Latency(p)) if !finite.is_empty() => {
                    let mut sorted = finite;
                    sorted.sort_by(f64::total_cmp);
                    Some(stats::quantile_sorted(&sorted, f64::from(p) / 100.0))
                }
                _ => stats::median_finite(&finite),
            };
            figure.map(|m| (*id, m))
        })
        .collect()
}

/// The name a history's comparisons carry: its metric's (Go's `sec/op`,
/// throughput and latency percentiles too), `value` for anything else.
pub fn metric_name(h: &History) -> &'static str {
    if let Some(m) = crate::store::history::Derived::from_name(&h.metric) {
        return m.name();
    }
    if h.metric == crate::store::history::GO_TIME {
        return crate::store::history::GO_TIME;
    }
    Metric::from_name(&h.metric).map_or(METRIC_LOG, Metric::name)
}

/// Each history's change points and episodes, and its newest point against
/// the segment before it (with the engine's settings for the history's
/// metric), in the order given, on every core ([`analyse_each`]).
pub fn analyse(histories: Vec<History>, p: &Params) -> Vec<Analysed> {
    let fed: Result<(), std::convert::Infallible> = Ok(());
    analyse_each(p, true, |send| {
        histories.into_iter().for_each(send);
        fed
    })
    .unwrap_or_default()
}

/// [`analyse_one`] of every history `feed` hands to its argument, on
/// every core, the answers in the order fed. `feed` runs on this thread
/// (it reads the store) and worker threads analyse: a queue of at most two
/// histories per worker between them, so the histories in memory are
/// those being analysed and a few waiting, never all. Without
/// `keep_runs`, each history's runs are dropped once it is analysed (the
/// answers keep the points' sessions, which the histories share). Each
/// history's analysis is its own, so the answers are those of one thread.
pub fn analyse_each<E>(
    p: &Params,
    keep_runs: bool,
    feed: impl FnOnce(&mut dyn FnMut(History)) -> Result<(), E>,
) -> Result<Vec<Analysed>, E> {
    use std::sync::{mpsc, Arc, Mutex};
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (to_workers, queue) = mpsc::sync_channel::<(usize, History)>(2 * workers);
    // Held by the workers only: if they all stop, sending fails instead of
    // waiting for ever.
    let queue = Arc::new(Mutex::new(queue));
    let (answer, answers) = mpsc::channel::<(usize, Analysed)>();
    let fed = std::thread::scope(|scope| {
        for _ in 0..workers {
            let (queue, answer) = (Arc::clone(&queue), answer.clone());
            scope.spawn(move || loop {
                // The lock is held while waiting for a history, not while
                // analysing it.
                let next = queue.lock().map(|q| q.recv());
                let Ok(Ok((i, h))) = next else { break };
                let mut a = analyse_one(h, p);
                if !keep_runs {
                    for point in &mut a.history.points {
                        point.runs = Vec::new();
                    }
                }
                if answer.send((i, a)).is_err() {
                    break;
                }
            });
        }
        drop((queue, answer));
        let mut n = 0;
        let fed = feed(&mut |h| {
            let _ = to_workers.send((n, h));
            n += 1;
        });
        drop(to_workers);
        fed
    });
    fed?;
    let mut all: Vec<(usize, Analysed)> = answers.into_iter().collect();
    all.sort_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, a)| a).collect())
}

/// [`analyse`] of one history.
pub fn analyse_one(mut h: History, p: &Params) -> Analysed {
    // Taken out of the points for the analysis and put back after it.
    let runs: Vec<Vec<f64>> = h
        .points
        .iter_mut()
        .map(|p| std::mem::take(&mut p.runs))
        .collect();
    let name = metric_name(&h);
    let p = Params {
        metric: Metric::from_name(&h.metric),
        metric_name: name,
        min_change: Some(p.min_change.unwrap_or_else(|| floor(name))),
        ..*p
    };
    let (used, speeds) = at_one_speed(&runs, &p);
    let all = summaries(&used);
    let (found, shape) = find_from(&used, &all, &p);
    let newest = newest_of(&used, &shape, &p);
    let newest_status = match &newest {
        None => NewestStatus::NotComputed,
        Some(c) if c.comparison.verdict.is_significant() && c.is_at_least(p.min_change()) => {
            NewestStatus::Changed
        }
        Some(_) => NewestStatus::NoChange,
    };
    drop((shape, used));
    let medians = runs.iter().map(|r| PointMedian::of(r)).collect();
    let counts = runs.iter().map(Vec::len).collect();
    for (point, r) in h.points.iter_mut().zip(runs) {
        point.runs = r;
    }
    Analysed {
        changes: found.changes,
        episodes: found.episodes,
        drifts: found.drifts,
        wander: found.wander,
        speeds,
        newest_comparison: newest.clone(),
        newest: newest.filter(|_| newest_status == NewestStatus::Changed),
        newest_status,
        min_change: p.min_change(),
        counts,
        medians,
        history: h,
    }
}

/// Most benchmarks of one machine changing at the same point: more likely
/// the machine, its kernel or its neighbours than the code.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MachineShift {
    pub fingerprint: String,
    pub hostname: String,
    /// The point as the first history with a change there has it.
    pub point: crate::store::history::Point,
    /// Benchmarks with a change (or an episode's start or end) there.
    pub benchmarks: Vec<String>,
    /// Benchmarks of this machine with a point there.
    pub of: usize,
}

/// Points where at least 2 benchmarks of one machine fingerprint, and more
/// than half of those with that point, changed (a change, or an episode
/// starting or ending) within one point of it: each history locates its
/// step within ±1 on its own. Points are matched by their session (or,
/// with `--order-by`, their label value), not their index: histories of
/// one machine need not have the same sessions. A benchmark counts towards
/// one shift only; the point with most benchmarks goes first.
pub fn machine_shifts(all: &[Analysed]) -> Vec<MachineShift> {
    use std::collections::BTreeMap;
    let key = |pt: &crate::store::history::Point| -> String {
        match (&pt.key, pt.sessions.first()) {
            (Some(k), _) => format!("key {k}"),
            (None, Some(s)) => format!("session {}", s.id),
            (None, None) => String::new(),
        }
    };
    // (fingerprint, point key) → a history and index with a change exactly
    // there, and the benchmarks with a change within one point of it.
    let mut exact: BTreeMap<(&str, String), (usize, usize, usize)> = BTreeMap::new();
    let mut near: BTreeMap<(&str, String), Vec<usize>> = BTreeMap::new();
    for (i, a) in all.iter().enumerate() {
        let h = &a.history;
        let mut indices: Vec<usize> = a.changes.iter().map(|c| c.index).collect();
        for e in &a.episodes {
            indices.push(e.start);
            indices.push(e.end + 1);
        }
        let mut keys: Vec<String> = Vec::new();
        for &j in &indices {
            let Some(pt) = h.points.get(j) else { continue };
            exact
                .entry((h.fingerprint.as_str(), key(pt)))
                .or_insert((i, j, 0))
                .2 += 1;
            for q in j.saturating_sub(1)..=j + 1 {
                if let Some(pt) = h.points.get(q) {
                    keys.push(key(pt));
                }
            }
        }
        keys.sort();
        keys.dedup();
        for k in keys {
            near.entry((h.fingerprint.as_str(), k)).or_default().push(i);
        }
    }
    let mut candidates: Vec<_> = exact
        .into_iter()
        .map(|(fk, (i, j, n))| {
            let by = near.get(&fk).cloned().unwrap_or_default();
            (fk, i, j, n, by)
        })
        .collect();
    candidates.sort_by(|x, y| y.4.len().cmp(&x.4.len()).then(y.3.cmp(&x.3)));
    let mut taken: Vec<(&str, usize)> = Vec::new();
    let mut out = Vec::new();
    for ((fingerprint, k), i, j, _, by) in candidates {
        let by: Vec<usize> = by
            .into_iter()
            .filter(|b| !taken.contains(&(fingerprint, *b)))
            .collect();
        if by.len() < 2 {
            continue;
        }
        let of = all
            .iter()
            .filter(|a| {
                a.history.fingerprint == fingerprint && a.history.points.iter().any(|p| key(p) == k)
            })
            .count();
        if 2 * by.len() <= of {
            continue;
        }
        taken.extend(by.iter().map(|&b| (fingerprint, b)));
        let h = &all[i].history;
        out.push(MachineShift {
            fingerprint: fingerprint.to_string(),
            hostname: h.hostname.clone(),
            point: h.points[j].clone(),
            benchmarks: by
                .iter()
                .map(|&b| all[b].history.benchmark.clone())
                .collect(),
            of,
        });
    }
    out.sort_by(|a, b| {
        let t = |s: &MachineShift| s.point.sessions.first().map_or(0.0, |r| r.started_unix);
        t(a).total_cmp(&t(b))
    });
    out
}
