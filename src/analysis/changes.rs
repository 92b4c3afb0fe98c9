//! Change points in a benchmark's history: where its level stepped up or
//! down, found on one summary per session and confirmed on the sessions' runs.
//!
//! Method (docs/CHANGES.md has the reasons):
//! 1. Summary per session: the median of log time over the session's runs
//!    (log, so that a step is the same size at 1 ms and at 1 s).
//! 2. A Hampel filter (window of 5 sessions, 3 robust standard deviations)
//!    replaces isolated outlier sessions by their neighbours' median, so that
//!    one bad session is not a pair of change points.
//! 3. Optimal partitioning by PELT (Killick et al. 2012) with the Gaussian
//!    mean-shift cost and a BIC-type penalty `penalty × ln(n) × σ²` per
//!    change, σ estimated robustly from successive differences (unaffected
//!    by the steps themselves).
//! 4. A change point is only kept if a step explains its two neighbouring
//!    segments better than a straight line does (a slow drift is a trend,
//!    not a step; a staircase is steps), then moved to the best split of
//!    those segments within `window`.
//! 5. Each change point is confirmed on the runs of the sessions next to it
//!    (up to `window` sessions each side, within its segments) with the
//!    comparison engine's unpaired test (runs of different sessions are
//!    independent samples, not pairs), widened by the session-to-session
//!    variation, and must be at least `min_change` in size.
//! 6. A change followed by its opposite, with the level after not
//!    confirmed to differ from the level before, is an episode; most
//!    benchmarks of one machine changing at one session is a machine-wide
//!    shift.

use std::ops::Range;

use crate::analysis::comparison::{
    compare_values, fails_gate, widen_for_sessions, Comparison, Design, SessionVariation, Settings,
    Verdict,
};
use crate::analysis::LEVEL;
use crate::analysis::MAX_VALUES;
use crate::metrics::Metric;
use crate::stats::{median_finite as median, thin};
use crate::store::history::History;

/// Parameters of the detection; `Default` is what `cmdscope changes` uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Fewest sessions in a segment.
    pub min_segment: usize,
    /// Multiplier of `ln(n) σ²` a split must gain.
    pub penalty: f64,
    /// Sessions each side of a change whose runs confirm it.
    pub window: usize,
    /// Level of the confirming test.
    pub alpha: f64,
    /// Smallest relative change reported (0.02: 2 %).
    pub min_change: f64,
    /// The metric, when it is a cmdscope metric: the engine's settings
    /// for it (counts and sizes are discrete). None: continuous values.
    pub metric: Option<Metric>,
    /// The metric's name in the comparisons (`value` when unknown).
    pub metric_name: &'static str,
    /// Histories up to this many points are partitioned over every point;
    /// longer ones over the locations seeded intervals propose.
    pub exact_up_to: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            min_segment: 3,
            penalty: 5.0,
            window: 10,
            alpha: 0.01,
            min_change: 0.02,
            metric: None,
            metric_name: METRIC_LOG,
            exact_up_to: EXACT_UP_TO,
        }
    }
}

/// Session-to-session noise below this (in log units, 0.1 %) is treated as
/// this: identical summaries (coarse timers) must not make every tiny
/// difference a change.
const MIN_SIGMA: f64 = 1e-3;

/// The engine's "no difference" band; unused for the decision here (only
/// faster/slower confirm a change) but part of its settings.
const PRECISION: f64 = 0.01;

/// The comparisons' metric name when the history's metric is not known.
const METRIC_LOG: &str = "value";

/// Hampel filter: half-width of the window and threshold in robust SDs.
const HAMPEL_HALF: usize = 2;
const HAMPEL_K: f64 = 3.0;

/// Scale of the MAD that makes it a standard deviation for normal data.
const MAD_SCALE: f64 = 1.4826;

/// Median and its interval of one side of a change (over its runs).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Side {
    /// Index of the first and last session of this side (inclusive).
    pub first: usize,
    pub last: usize,
    pub runs: usize,
    pub median: f64,
    /// 95 % interval of the median; None with too few runs.
    pub ci: Option<[f64; 2]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Slower,
    Faster,
}

/// A confirmed change: sessions `index..` differ from the ones before.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Change {
    /// Index of the first session after the change.
    pub index: usize,
    pub before: Side,
    pub after: Side,
    /// The engine's comparison of the runs after with the runs before,
    /// widened by the session-to-session variation: ratio after / before,
    /// its interval, p-value and verdict (faster or slower).
    pub comparison: Comparison,
    /// Not serialised: readers say it in the metric's words (`higher` for
    /// counts), which the time-only word would contradict.
    #[serde(skip)]
    pub direction: Direction,
}

impl Change {
    pub fn ratio(&self) -> f64 {
        self.comparison.ratio
    }

    /// The engine's gate rule (`check --fail-if-slower`): slower, and the
    /// interval's lower end above 1 + pct/100.
    pub fn fails_gate(&self, pct: f64) -> bool {
        fails_gate(&self.comparison, pct)
    }

    /// The ratio's estimate is at least `min` away from 1, on the log
    /// scale (so 2 % slower and its mirror, 1.96 % faster, count alike).
    /// A ratio without a finite logarithm (a count rising from a median of
    /// 0) is a change of unbounded size.
    pub fn is_at_least(&self, min: f64) -> bool {
        let r = self.comparison.ratio;
        !(r.is_finite() && r > 0.0) || r.ln().abs() >= (1.0 + min).ln()
    }
}

/// Change points of a history (one slice of run values per session, in
/// history order; sessions without runs must be left out by the caller).
///
/// Candidates that are not confirmed (or smaller than `min_change`) are
/// dropped and the others confirmed again with the segments that remain,
/// until every one left is confirmed: a rejected split must not shorten
/// its neighbours' windows.
pub fn detect(sessions: &[Vec<f64>], p: &Params) -> Vec<Change> {
    detect_from(sessions, &summaries(sessions), p)
}

/// [`detect`] with the sessions' [`summaries`] already made.
fn detect_from(sessions: &[Vec<f64>], summaries: &[f64], p: &Params) -> Vec<Change> {
    let sigma = session_sd(summaries);
    let y = hampel(summaries);
    let sums = Prefix::new(&y);
    let n = summaries.len();
    let mut points = change_points_of_cleaned(&y, p);
    loop {
        let mut out = Vec::new();
        let mut kept = Vec::new();
        for k in 0..points.len() {
            let (lo, cp, hi) = neighbours(&points, k, n);
            let before = cp.saturating_sub(p.window).max(lo)..cp;
            let after = cp..(cp + p.window).min(hi);
            if let Some(c) =
                confirm(sessions, before, after, p, sigma).filter(|c| c.is_at_least(p.min_change))
            {
                kept.push(cp);
                out.push(c);
            }
        }
        if kept.len() == points.len() {
            return out;
        }
        points = kept;
        drop_trends(&sums, &mut points, n);
        refine(&sums, &mut points, n, p.min_segment.max(1), p.window);
    }
}

/// A stretch of points at another level that came back: a change and,
/// later, the opposite change, with the points after it not confirmed to
/// differ from the points before it. One event, not two changes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Episode {
    /// Index of the first and the last point of the episode (inclusive).
    pub start: usize,
    pub end: usize,
    /// Into the episode: the points before it against the episode's.
    pub enter: Change,
    /// Out of it: the episode's points against the points after it.
    pub leave: Change,
}

impl Episode {
    pub fn direction(&self) -> Direction {
        self.enter.direction
    }

    /// Size of the episode: the entering change's ratio.
    pub fn ratio(&self) -> f64 {
        self.enter.ratio()
    }
}

/// The confirmed changes of a history, with changes that came back paired
/// into episodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    /// Changes still in force after them (not part of an episode).
    pub changes: Vec<Change>,
    pub episodes: Vec<Episode>,
}

/// [`detect`], then each change followed by its opposite is an episode when
/// the points after the second are not confirmed to differ from the points
/// before the first (the same comparison as a change's, between those two
/// sides, each within its neighbouring segments).
pub fn find(sessions: &[Vec<f64>], p: &Params) -> Found {
    find_from(sessions, &summaries(sessions), p)
}

/// [`find`] with the sessions' [`summaries`] already made.
fn find_from(sessions: &[Vec<f64>], summaries: &[f64], p: &Params) -> Found {
    let all = detect_from(sessions, summaries, p);
    let sigma = session_sd(summaries);
    let mut found = Found::default();
    let mut k = 0;
    while k < all.len() {
        if let Some(next) = all.get(k + 1).filter(|c| c.direction != all[k].direction) {
            let (enter, leave) = (&all[k], next);
            let end = all.get(k + 2).map_or(sessions.len(), |c| c.index);
            let after = leave.index..(leave.index + p.window).min(end);
            let before = enter.before.first..enter.before.last + 1;
            let back = confirm(sessions, before, after, p, sigma)
                .filter(|c| c.is_at_least(p.min_change))
                .is_none();
            if back {
                found.episodes.push(Episode {
                    start: enter.index,
                    end: leave.index - 1,
                    enter: enter.clone(),
                    leave: leave.clone(),
                });
                k += 2;
                continue;
            }
        }
        found.changes.push(all[k].clone());
        k += 1;
    }
    found
}

/// Median of the finite log values (NaN when there is none).
pub fn summary(runs: &[f64]) -> f64 {
    // A history has a summary per session, by the ten thousand: sessions
    // of a few runs take their logs in a buffer on the stack.
    let mut small = [0.0; 32];
    let mut large = Vec::new();
    let buf = if runs.len() <= small.len() {
        &mut small[..]
    } else {
        large.resize(runs.len(), 0.0);
        &mut large[..]
    };
    let mut k = 0;
    for v in runs.iter().filter(|v| **v > 0.0).map(|v| v.ln()) {
        if v.is_finite() {
            buf[k] = v;
            k += 1;
        }
    }
    if k == 0 {
        return f64::NAN;
    }
    crate::stats::median_select(&mut buf[..k])
}

/// Whether every finite value is positive: times, summarised by logs.
fn all_positive(sessions: &[Vec<f64>]) -> bool {
    sessions
        .iter()
        .flatten()
        .all(|v| *v > 0.0 || !v.is_finite())
}

/// One summary per session: log medians when every value is positive
/// (times), else plain medians (counts with zeros, which have no log).
pub fn summaries(sessions: &[Vec<f64>]) -> Vec<f64> {
    summaries_as(sessions, all_positive(sessions))
}

/// [`summaries`], log medians when `positive` (else plain medians).
fn summaries_as(sessions: &[Vec<f64>], positive: bool) -> Vec<f64> {
    sessions
        .iter()
        .map(|r| {
            if positive {
                summary(r)
            } else {
                median(r).unwrap_or(f64::NAN)
            }
        })
        .collect()
}

/// Session-to-session noise of a history's summaries (log units), robust
/// to its steps and outliers, at least MIN_SIGMA. Not the engine's
/// `session_sigma` (the sample SD of a stable baseline's session medians):
/// a history has steps and outliers, which would inflate that estimate.
pub fn session_sd(summaries: &[f64]) -> f64 {
    let finite: Vec<f64> = summaries
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    noise_sd(&finite).max(MIN_SIGMA)
}

/// Compares the runs of sessions `before` with those of `after` with the
/// engine's unpaired test at level `alpha`; a change when its verdict is
/// faster or slower.
pub fn confirm(
    sessions: &[Vec<f64>],
    before: Range<usize>,
    after: Range<usize>,
    p: &Params,
    sigma: f64,
) -> Option<Change> {
    compare_sides(sessions, before, after, p, sigma)
        .filter(|c| c.comparison.verdict.is_significant())
}

/// The comparison behind [`confirm`], whatever its verdict (None when a
/// side has fewer than 2 values).
///
/// Runs of one session share that session's conditions, so the run test
/// alone would call ordinary session-to-session variation a change. The
/// engine's comparison is therefore widened by the history's session SD
/// `sigma` (log scale): the two sides' means of session effects differ with
/// variance sigma² (1/n1 + 1/n2) for n1 and n2 sessions, and the p-value,
/// interval and verdict are re-decided on that, so they agree.
pub fn compare_sides(
    sessions: &[Vec<f64>],
    before: Range<usize>,
    after: Range<usize>,
    p: &Params,
    sigma: f64,
) -> Option<Change> {
    if before.is_empty() || after.is_empty() || after.end > sessions.len() {
        return None;
    }
    let pool = |r: &Range<usize>| -> Vec<f64> {
        sessions[r.clone()]
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect()
    };
    let (a, b) = (pool(&before), pool(&after));
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let base = match p.metric {
        Some(m) => Settings::for_metric(m, p.alpha, 1, PRECISION, None),
        None => Settings::new(p.alpha, PRECISION),
    };
    let settings = Settings {
        cross_session: true,
        ..base
    };
    let mut c = compare_values(
        &thin(&a, MAX_VALUES),
        &thin(&b, MAX_VALUES),
        Design::Unpaired,
        &settings,
    );
    let (n1, n2) = (before.len() as f64, after.len() as f64);
    // widen_for_sessions models one candidate session against k baseline
    // sessions: sigma'² (1 + 1/k). With k = n1 and this sigma' that is
    // sigma² (1/n1 + 1/n2), the variance for n2 candidate sessions.
    let scaled = sigma * ((1.0 / n1 + 1.0 / n2) / (1.0 + 1.0 / n1)).sqrt();
    widen_for_sessions(&mut c, scaled, before.len());
    if let SessionVariation::Included { sigma: shown, .. } = &mut c.session_variation {
        // Report the history's session SD itself, not the rescaled one.
        *shown = sigma;
    }
    let side = |r: &Range<usize>, v: &[f64]| Side {
        first: r.start,
        last: r.end - 1,
        runs: v.len(),
        median: median(v).unwrap_or(f64::NAN),
        ci: crate::stats::median_ci(v, LEVEL)
            .ok()
            .map(|e| [e.low, e.high]),
    };
    Some(Change {
        index: after.start,
        before: side(&before, &a),
        after: side(&after, &b),
        direction: if c.verdict == Verdict::Slower
            || (c.verdict != Verdict::Faster && c.ratio > 1.0)
        {
            Direction::Slower
        } else {
            Direction::Faster
        },
        comparison: c.named(p.metric_name, "before", "after"),
    })
}

/// The newest session compared with the stable segment before it (since
/// the last change point, at most `window` sessions): what a CI gate asks
/// of a history. The newest session alone cannot yet be told from an
/// outlier, so this is reported separately from the change points.
pub fn newest_against_history(sessions: &[Vec<f64>], p: &Params) -> Option<Change> {
    newest_comparison(sessions, p)
        .filter(|c| c.comparison.verdict.is_significant() && c.is_at_least(p.min_change))
}

/// The comparison behind [`newest_against_history`], whatever its verdict.
pub fn newest_comparison(sessions: &[Vec<f64>], p: &Params) -> Option<Change> {
    let older = sessions.len().checked_sub(1)?;
    newest_comparison_from(sessions, &summaries(&sessions[..older]), p)
}

/// [`newest_comparison`] with the [`summaries`] of every session but the
/// newest already made.
fn newest_comparison_from(sessions: &[Vec<f64>], older: &[f64], p: &Params) -> Option<Change> {
    let n = sessions.len();
    if n < 2 {
        return None;
    }
    let start = detect_from(&sessions[..n - 1], older, p)
        .last()
        .map_or(0, |c| c.index);
    let from = start.max((n - 1).saturating_sub(p.window));
    compare_sides(sessions, from..n - 1, n - 1..n, p, session_sd(older))
}

/// Indices where a new segment starts (ascending), from session summaries.
///
/// Optimal partitioning by PELT (Killick et al. 2012) with the Gaussian
/// mean-shift cost and the penalty `penalty × ln(n) × σ²` per change; then
/// step versus trend decided per change point against its neighbouring
/// segments (a ramp cut into pieces is a trend, a staircase is steps); then
/// each location refined within its neighbours.
pub fn change_points(summaries: &[f64], p: &Params) -> Vec<usize> {
    change_points_of_cleaned(&hampel(summaries), p)
}

/// [`change_points`] of summaries already cleaned by [`hampel`].
fn change_points_of_cleaned(y: &[f64], p: &Params) -> Vec<usize> {
    let n = y.len();
    let m = p.min_segment.max(1);
    if n < 2 * m {
        return Vec::new();
    }
    let sigma = noise_sd(y).max(MIN_SIGMA);
    let beta = p.penalty * (n as f64).ln() * sigma * sigma;
    let sums = Prefix::new(y);
    let locations = if n <= p.exact_up_to {
        (0..=n).collect()
    } else {
        seeded_locations(&sums, n, m, beta * SEED_GAIN)
    };
    steps(&sums, &locations, m, beta, p.window)
}

/// Partition over `locations`, trends out, locations refined.
fn steps(sums: &Prefix, locations: &[usize], m: usize, beta: f64, window: usize) -> Vec<usize> {
    let n = locations.last().copied().unwrap_or(0);
    let mut points = pelt(sums, locations, m, beta);
    drop_trends(sums, &mut points, n);
    refine(sums, &mut points, n, m, window);
    points
}

/// Histories up to this many points are partitioned over every point.
/// PELT's pruning is weak when changes are few (a candidate inside a long
/// steady segment always gains a little from a split, so it is never
/// pruned): the search is then quadratic, 0.17 s for a history of 10,000
/// sessions. Longer histories are partitioned over the locations that
/// seeded intervals propose.
const EXACT_UP_TO: usize = 1000;

/// A seeded interval's best split is a proposed location when it gains at
/// least this share of the penalty. Below 1, so that a change whose gain
/// over its neighbouring segments passes the penalty is proposed from an
/// interval that holds only part of those segments.
const SEED_GAIN: f64 = 0.1;

/// Ratio of successive interval lengths of the seeded intervals.
const SEED_DECAY: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Locations where a change may be: 0, n and the best split of every
/// seeded interval (Kovács et al. 2020: at each scale, intervals of one
/// length overlapping by half, lengths shrinking by `SEED_DECAY` down to
/// two segments) that gains more than `min_gain`. Short intervals see a
/// short episode in a long history, which one split of the whole would
/// miss; there are O(n log n) split evaluations in all.
fn seeded_locations(s: &Prefix, n: usize, m: usize, min_gain: f64) -> Vec<usize> {
    let mut out = vec![0, n];
    let mut length = n as f64;
    while length >= (2 * m) as f64 {
        let l = (length.round() as usize).clamp(2 * m, n);
        let count = 2 * n.div_ceil(l) - 1;
        let shift = if count > 1 {
            (n - l) as f64 / (count - 1) as f64
        } else {
            0.0
        };
        for i in 0..count {
            let a = ((i as f64 * shift).round() as usize).min(n - l);
            let b = a + l;
            let total = s.rss(a, b);
            let best = (a + m..=b - m)
                .map(|u| (u, total - s.rss(a, u) - s.rss(u, b)))
                .max_by(|x, y| x.1.total_cmp(&y.1));
            if let Some((u, gain)) = best {
                if gain > min_gain {
                    out.push(u);
                }
            }
        }
        length *= SEED_DECAY;
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The partition of [0, n) into segments of at least `m` points, with
/// boundaries among `locations` (ascending, from 0 to n), that minimises
/// the sum of squares around each segment's mean plus `beta` per change.
/// Candidates that can no longer start the optimal last segment are pruned
/// (PELT); with a minimum length a candidate is pruned against the newest
/// location admitted, which is itself a candidate for every later end.
fn pelt(s: &Prefix, locations: &[usize], m: usize, beta: f64) -> Vec<usize> {
    let k = locations.len();
    let mut cost = vec![f64::INFINITY; k];
    let mut last = vec![0usize; k];
    cost[0] = -beta;
    let mut candidates: Vec<usize> = Vec::new();
    let mut admitted = 0;
    for j in 1..k {
        let t = locations[j];
        while admitted < j && locations[admitted] + m <= t {
            let newest = admitted;
            admitted += 1;
            if cost[newest].is_finite() {
                let (at, bound) = (locations[newest], cost[newest]);
                candidates.retain(|&c| cost[c] + s.rss(locations[c], at) < bound);
                candidates.push(newest);
            }
        }
        let (best, arg) = candidates
            .iter()
            .map(|&c| (cost[c] + s.rss(locations[c], t) + beta, c))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((f64::INFINITY, 0));
        cost[j] = best;
        last[j] = arg;
    }
    let mut points = Vec::new();
    let mut j = k - 1;
    while j > 0 && cost[j].is_finite() {
        j = last[j];
        if j > 0 {
            points.push(locations[j]);
        }
    }
    points.reverse();
    points
}

/// Removes change points that a straight line explains at least as well:
/// at each point, the two means of its neighbouring segments against one
/// line over both. The most trend-like goes first, then its neighbours are
/// judged again over their longer segments, until every point is a step.
fn drop_trends(s: &Prefix, points: &mut Vec<usize>, n: usize) {
    loop {
        let worst = (0..points.len())
            .map(|k| {
                let (a, t, b) = neighbours(points, k, n);
                (k, s.rss_line(a, b) - s.rss(a, t) - s.rss(t, b))
            })
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match worst {
            Some((k, margin)) if margin <= 0.0 => {
                points.remove(k);
            }
            _ => return,
        }
    }
}

/// Moves each change point to the split of its neighbouring segments that
/// gains most, within `window` points of where it was: a step found in a
/// longer segment than it ends up in may sit a few points off, and an
/// effect measured across the true step would be shrunk.
fn refine(s: &Prefix, points: &mut [usize], n: usize, m: usize, window: usize) {
    for k in 0..points.len() {
        let (a, t, b) = neighbours(points, k, n);
        let lo = (a + m).max(t.saturating_sub(window));
        let hi = (b.saturating_sub(m)).min(t + window);
        if lo > hi {
            continue;
        }
        let total = s.rss(a, b);
        if let Some((best, _)) = (lo..=hi)
            .map(|u| (u, total - s.rss(a, u) - s.rss(u, b)))
            .max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(&x.0)))
        {
            points[k] = best;
        }
    }
}

/// The start of the segment before change point `k`, the point, and the
/// end of the segment after it.
fn neighbours(points: &[usize], k: usize, n: usize) -> (usize, usize, usize) {
    let a = if k == 0 { 0 } else { points[k - 1] };
    let b = points.get(k + 1).copied().unwrap_or(n);
    (a, points[k], b)
}

/// Replaces each value further than HAMPEL_K robust SDs from the median of
/// its window by that median. The floor of the scale is the series' noise,
/// so that windows of nearly equal values do not flag ordinary noise.
/// Non-finite values are replaced by the window's median too.
pub fn hampel(x: &[f64]) -> Vec<f64> {
    let finite: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    let floor = noise_sd(&finite).max(MIN_SIGMA);
    let n = x.len();
    // Windows are at most 5 values: fixed buffers, no allocation per point.
    let mut w = [0.0; 2 * HAMPEL_HALF + 1];
    let mut dev = [0.0; 2 * HAMPEL_HALF + 1];
    (0..n)
        .map(|i| {
            let lo = i.saturating_sub(HAMPEL_HALF);
            let hi = (i + HAMPEL_HALF + 1).min(n);
            let mut k = 0;
            for &v in x[lo..hi].iter().filter(|v| v.is_finite()) {
                w[k] = v;
                k += 1;
            }
            if k == 0 {
                return 0.0;
            }
            let med = crate::stats::median_select(&mut w[..k]);
            for j in 0..k {
                dev[j] = (w[j] - med).abs();
            }
            let scale = (MAD_SCALE * crate::stats::median_select(&mut dev[..k])).max(floor);
            if !x[i].is_finite() || (x[i] - med).abs() > HAMPEL_K * scale {
                med
            } else {
                x[i]
            }
        })
        .collect()
}

/// Robust SD of the noise: MAD of successive differences / √2. Steps
/// change only one difference each, so they barely move it.
pub fn noise_sd(y: &[f64]) -> f64 {
    if y.len() < 3 {
        return 0.0;
    }
    let d: Vec<f64> = y.windows(2).map(|w| w[1] - w[0]).collect();
    let med = median(&d).unwrap_or(0.0);
    let dev: Vec<f64> = d.iter().map(|v| (v - med).abs()).collect();
    MAD_SCALE * median(&dev).unwrap_or(0.0) / std::f64::consts::SQRT_2
}

/// Prefix sums for O(1) sums of squares of a mean and of a line.
struct Prefix {
    y: Vec<f64>,
    yy: Vec<f64>,
    iy: Vec<f64>,
}

impl Prefix {
    fn new(v: &[f64]) -> Prefix {
        let mut p = Prefix {
            y: vec![0.0],
            yy: vec![0.0],
            iy: vec![0.0],
        };
        for (i, &x) in v.iter().enumerate() {
            p.y.push(p.y[i] + x);
            p.yy.push(p.yy[i] + x * x);
            p.iy.push(p.iy[i] + i as f64 * x);
        }
        p
    }

    /// Residual sum of squares around the mean of [a, b).
    fn rss(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        let sy = self.y[b] - self.y[a];
        (self.yy[b] - self.yy[a] - sy * sy / n).max(0.0)
    }

    /// Residual sum of squares around the least-squares line over [a, b).
    fn rss_line(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        if n < 3.0 {
            return 0.0;
        }
        // x = i - a, so sums of x and x² are closed forms.
        let sx = n * (n - 1.0) / 2.0;
        let sxx = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
        let sy = self.y[b] - self.y[a];
        let sxy = self.iy[b] - self.iy[a] - a as f64 * sy;
        let cxx = sxx - sx * sx / n;
        let cxy = sxy - sx * sy / n;
        (self.rss(a, b) - cxy * cxy / cxx).max(0.0)
    }
}

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
    /// Changes in force after them; the changes of episodes are in `episodes`.
    pub changes: Vec<Change>,
    pub episodes: Vec<Episode>,
    /// The newest point against the segment before it, when significant.
    pub newest: Option<Change>,
    pub newest_status: NewestStatus,
    /// That comparison whatever its verdict (None: not made), for the gate
    /// (`changes::gate`), which asks whether it had the data to decide.
    pub newest_comparison: Option<Change>,
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

impl Analysed {
    /// A slowdown still in force: the last change is slower, or the newest
    /// point is significantly slower than the segment before it. An
    /// episode that has ended is not in force.
    pub fn open_regression(&self) -> Option<&Change> {
        if let Some(n) = self
            .newest
            .as_ref()
            .filter(|c| c.direction == Direction::Slower)
        {
            return Some(n);
        }
        self.changes
            .last()
            .filter(|c| c.direction == Direction::Slower)
    }
}

/// The name a history's comparisons carry: its metric's (Go's `sec/op`
/// too), `value` for anything else.
pub fn metric_name(h: &History) -> &'static str {
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
    let p = Params {
        metric: Metric::from_name(&h.metric),
        metric_name: metric_name(&h),
        ..*p
    };
    // Summaries made once: the newest session's comparison uses those of
    // the sessions before it, the same unless the newest alone has a value
    // that is not positive (which makes every summary a plain median).
    let older = runs.len().saturating_sub(1);
    let before_newest = all_positive(&runs[..older]);
    let positive = before_newest && all_positive(&runs[older..]);
    let all = summaries_as(&runs, positive);
    let found = find_from(&runs, &all, &p);
    let newest = if positive == before_newest {
        newest_comparison_from(&runs, &all[..older], &p)
    } else {
        newest_comparison(&runs, &p)
    };
    let newest_status = match &newest {
        None => NewestStatus::NotComputed,
        Some(c) if c.comparison.verdict.is_significant() && c.is_at_least(p.min_change) => {
            NewestStatus::Changed
        }
        Some(_) => NewestStatus::NoChange,
    };
    let medians = runs.iter().map(|r| PointMedian::of(r)).collect();
    let counts = runs.iter().map(Vec::len).collect();
    for (point, r) in h.points.iter_mut().zip(runs) {
        point.runs = r;
    }
    Analysed {
        changes: found.changes,
        episodes: found.episodes,
        newest_comparison: newest.clone(),
        newest: newest.filter(|_| newest_status == NewestStatus::Changed),
        newest_status,
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

pub mod gate;
pub mod select;
pub mod simulated;

#[cfg(test)]
mod tests;
