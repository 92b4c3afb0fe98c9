//! Finding the changes of one series of sessions: the summaries, the
//! noise, the partition into steps and drifts, each confirmed on the runs
//! by the comparison engine, and the newest session against the history.

use std::ops::Range;

use crate::analysis::comparison::{
    compare_values, fails_gate, widen_to_variance, Comparison, Design, Settings, Verdict,
};
use crate::analysis::modes::SpeedModes;
use crate::analysis::LEVEL;
use crate::analysis::MAX_VALUES;
use crate::stats::{median_finite as median, thin};

use super::noise::Variogram;
use super::search;
use super::segment::{self, Piece, Prefix};
pub use super::segment::{EdgeRanges, EDGE_CONFIDENCE};
use super::speeds;
use super::{
    Params, EXPLAINED_ALL, HAMPEL_HALF, HAMPEL_K, MAD_SCALE, MAX_EXPLAINING, PRECISION,
    WANDER_RATIO, WANDER_WINDOWS,
};

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
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Index of the first session after the change.
    pub index: usize,
    pub before: Side,
    pub after: Side,
    /// The engine's comparison of the runs after with the runs before,
    /// widened by the session-to-session variation: ratio after / before,
    /// its interval, p-value and verdict (faster or slower).
    pub comparison: Comparison,
    /// Not in the JSON (`report::changes` writes the change): readers say
    /// it in the metric's words (`higher` for counts), which the time-only
    /// word would contradict.
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

    /// The whole interval is at least `min` away from 1 (on the log
    /// scale, as [`Change::is_at_least`]), not only the estimate.
    fn clears(&self, min: f64) -> bool {
        let [lo, hi] = self.comparison.ratio_ci;
        let far = (1.0 + min).ln();
        let away = |r: f64| !(r.is_finite() && r > 0.0) || r.ln().abs() >= far;
        (lo > 1.0 || hi < 1.0) && away(lo) && away(hi)
    }
}

/// A slow drift: the level slides over points `start..=end` from one level
/// to another and stays (or is still sliding at the newest point).
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// First and last point of the slide (inclusive).
    pub start: usize,
    pub end: usize,
    /// The slide reaches the newest point: it may not be over, and its
    /// size is so far.
    pub ongoing: bool,
    /// The points after the slide against the points before it (up to
    /// `window` each, within the neighbouring changes; a slide at an end
    /// of the history is compared with its own first or last points):
    /// the slide's total size, interval and p-value. Its `index` is
    /// `start`.
    pub change: Change,
    /// How sure the start and end are: the points each could be at
    /// (`segment::edge_ranges`, at `segment::EDGE_CONFIDENCE`, from the
    /// profile of the ramp's cost with the noise measured without the
    /// confirmed pieces). None when no range could be made.
    pub edges: Option<EdgeRanges>,
}

impl Drift {
    pub fn direction(&self) -> Direction {
        self.change.direction
    }

    pub fn ratio(&self) -> f64 {
        self.change.ratio()
    }

    /// How many points of slide lie between the levels the two sides of
    /// `change` measure, on the fitted ramp: a flat side sits at the
    /// slide's edge (0 before, `len + 1` after), a side inside the slide
    /// (at an end of the history) at the mean of its points' places on
    /// it. So the total size of a slide still going on, measured on its
    /// last points, is not spread over points it has not slid yet.
    fn distance(&self) -> f64 {
        let len = (self.end + 1 - self.start) as f64;
        let place = |i: usize| (i as f64 - self.start as f64 + 1.0).clamp(0.0, len + 1.0);
        let mean = |s: &Side| {
            let k = (s.last + 1 - s.first) as f64;
            (s.first..=s.last).map(place).sum::<f64>() / k
        };
        mean(&self.change.after) - mean(&self.change.before)
    }

    /// The slope: the slide's total size and interval spread evenly over
    /// its points, as a ratio per point. One analysis with the size (the
    /// same comparison); the interval does not hold the uncertainty of
    /// where the slide's ends are. None for a size without a finite
    /// logarithm (a count rising from 0).
    pub fn per_point(&self) -> Option<Rate> {
        let d = self.distance();
        let c = &self.change.comparison;
        let per = |r: f64| (r.is_finite() && r > 0.0).then(|| (r.ln() / d).exp());
        if d < 1.0 {
            return None;
        }
        Some(Rate {
            ratio: per(c.ratio)?,
            ratio_ci: [per(c.ratio_ci[0])?, per(c.ratio_ci[1])?],
        })
    }

    /// The slope per day, from the points' times (Unix seconds, one per
    /// point of the history): the slope per point times the points the
    /// slide went through per day, from the point before it to the point
    /// after it (or its own ends). None when that took less than a day
    /// (a rate per day of sessions minutes apart says nothing) or a time
    /// is missing.
    pub fn per_day(&self, times: &[f64]) -> Option<Rate> {
        let p = self.per_point()?;
        let (i, j) = (
            self.start.saturating_sub(1),
            (self.end + 1).min(times.len().checked_sub(1)?),
        );
        let days = (times.get(j)? - times.get(i)?) / 86_400.0;
        if days.is_nan() || days < 1.0 || j <= i {
            return None;
        }
        let k = (j - i) as f64 / days;
        Some(Rate {
            ratio: p.ratio.powf(k),
            ratio_ci: [p.ratio_ci[0].powf(k), p.ratio_ci[1].powf(k)],
        })
    }
}

/// A rate of change as a ratio per unit (1.005: 0.5 % more per point),
/// with its interval at the comparison's confidence.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Rate {
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
}

/// A machine whose level wanders slowly from session to session and comes
/// back: noise that carries over, the machine's, not a change of the code.
/// The confirmations account for it, so what it moves is not reported as
/// a change.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Wander {
    /// How far the level wanders (standard deviation on the log scale,
    /// beyond the noise of neighbouring sessions): sqrt(γ(span) − γ(near)),
    /// γ(near) the variogram's estimates at lags 1 to 4 averaged.
    pub sigma: f64,
    /// The noise of one session against the next: sqrt(γ(near)).
    pub short: f64,
    /// The distance (points) over which the wander was measured.
    pub span: usize,
}

/// The history's variogram: noise that carries over from session to
/// session when it rises with distance. None for a history too short to
/// tell or noise that does not carry over, or carries too little to matter.
pub(super) fn wander(noise: &Variogram, p: &Params) -> Option<Wander> {
    let span = WANDER_WINDOWS * p.window;
    if noise.points() < 2 * span {
        return None;
    }
    wanders(noise, p).then(|| Wander {
        sigma: wander_sigma(noise, span),
        short: noise.near().sqrt(),
        span,
    })
}

/// Noise that carries over, large enough to matter: the variogram at
/// `WANDER_WINDOWS` windows at least `WANDER_RATIO` times its value
/// between neighbouring points (as standard deviations), and the wander
/// at least a quarter of the smallest change. Residuals far below that
/// (a counted metric's) may rise with distance by chance.
pub(super) fn wanders(noise: &Variogram, p: &Params) -> bool {
    let span = WANDER_WINDOWS * p.window;
    noise.carry_over(span) >= WANDER_RATIO && wander_sigma(noise, span) >= p.min_change() / 4.0
}

/// sqrt(γ(span) − γ(near)): how far the level wanders beyond the noise of
/// neighbouring points.
pub(super) fn wander_sigma(noise: &Variogram, span: usize) -> f64 {
    (noise.at(span) - noise.near()).max(0.0).sqrt()
}

/// Change points of a history (one slice of run values per session, in
/// history order; sessions without runs must be left out by the caller):
/// its steps, confirmed, without the drifts and without pairing episodes.
pub fn detect(sessions: &[Vec<f64>], p: &Params) -> Vec<Change> {
    let (sessions, _) = at_one_speed(sessions, p);
    shape(&sessions, &summaries(&sessions), p).steps
}

/// The sessions with the runs of a two-speed machine's slow speed brought
/// to the fast one (`speeds`; speeds at least `p`'s smallest change
/// apart), and the speeds; the sessions as they are otherwise. Speeds are
/// a machine's only in times: a metric the comparison engine treats as
/// discrete (counts, sizes) keeps its runs as they are, as the engine's
/// comparisons do, so a count whose runs take one of two code paths and
/// then take the slower one more often is a change, not a machine.
pub(super) fn at_one_speed<'a>(
    sessions: &'a [Vec<f64>],
    p: &Params,
) -> (std::borrow::Cow<'a, [Vec<f64>]>, Option<SpeedModes>) {
    let discrete = p
        .metric
        .is_some_and(|m| Settings::for_metric(m, p.alpha, 1, PRECISION, None).discrete);
    if discrete {
        return (std::borrow::Cow::Borrowed(sessions), None);
    }
    match speeds::normalised(sessions, p.min_change()) {
        Some((runs, modes)) => (std::borrow::Cow::Owned(runs), Some(modes)),
        None => (std::borrow::Cow::Borrowed(sessions), None),
    }
}

/// The confirmed shape of a history.
pub(super) struct Shape {
    steps: Vec<Change>,
    drifts: Vec<Drift>,
    /// The confirmed pieces, in order (steps and ramps).
    pieces: Vec<Piece>,
    /// The noise, measured without the confirmed pieces.
    noise: Variogram,
}

/// The history's steps and drifts, confirmed: partitioned with the noise
/// of the summaries as they are, then, when something was confirmed,
/// measured again without it and partitioned again (steps inflate the
/// noise measured over distances they span).
pub(super) fn shape(sessions: &[Vec<f64>], summaries: &[f64], p: &Params) -> Shape {
    let floor = p.min_sigma();
    let y = hampel(summaries, floor);
    let first = Variogram::of(&y, floor);
    let sums = Prefix::new(&y);
    let (mut pieces, mut confirmed) = partition(sessions, &sums, &first, p, Pass::First);
    if confirmed.is_empty() && first.carry_over(p.window) > 1.0 {
        // A variogram that rises with distance is wander or a slide (a
        // slide moves most differences over its length), and a penalty
        // that large hides the slide: partitioned again with the penalty
        // of neighbouring points' noise, kept only when the pieces
        // explain the rise.
        (pieces, confirmed) = partition(sessions, &sums, &first, p, Pass::Explaining);
    }
    if confirmed.is_empty() {
        return Shape {
            steps: Vec::new(),
            drifts: Vec::new(),
            pieces,
            noise: first,
        };
    }
    let noise = residual_noise(&sums, &pieces, p);
    let (pieces, confirmed) = if noise == first {
        (pieces, confirmed)
    } else {
        partition(sessions, &sums, &noise, p, Pass::Again)
    };
    let mut steps = Vec::new();
    let mut drifts = Vec::new();
    for c in confirmed {
        match c {
            Confirmed::Step(c) => steps.push(c),
            Confirmed::Drift(d) => drifts.push(d),
        }
    }
    edge_ranges(&mut drifts, &pieces, &sums, &noise);
    Shape {
        steps,
        drifts,
        pieces,
        noise,
    }
}

/// Which partition of a history: how its penalty is set and which noise
/// confirms its pieces.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Pass {
    /// On the summaries' own noise; the residuals' noise confirms the
    /// pieces when they explain its rise with distance.
    First,
    /// As `First`, with the penalty of neighbouring points' noise (the
    /// variogram's shortest lags), and nothing when the pieces do not
    /// explain the rise.
    Explaining,
    /// On the noise measured without what the first pass confirmed.
    Again,
}

/// A piece confirmed on the runs.
pub(super) enum Confirmed {
    Step(Change),
    Drift(Drift),
}

impl Confirmed {
    fn change(&self) -> &Change {
        match self {
            Confirmed::Step(c) => c,
            Confirmed::Drift(d) => &d.change,
        }
    }
}

/// Partition of the cleaned summaries (`sums`) with the noise `noise`,
/// every piece confirmed: pieces that are not (or are smaller than
/// `min_change`) are dropped and the others confirmed again with the
/// neighbours that remain, until every one left is confirmed (a rejected
/// split must not shorten its neighbours' windows).
///
/// The noise the pieces are confirmed with, in the passes `First` and
/// `Explaining`: the residuals' of the candidate pieces, so that a
/// candidate step does not widen the noise it is tested against (a step
/// of 10 % moves the lag-h differences that span it and raised the
/// first variogram by a fifth on a wandering machine). When the pieces
/// explain the rise of `noise` with distance (a slide moves most
/// differences over its length), the residuals no longer carry over;
/// when the machine wanders, they still hold the wander (a piece or two
/// fitted to it take a small part, which the search's price below pays
/// for). In the pass `Again`, `noise` (measured without what the first
/// pass confirmed). When the residuals of the candidates carry over, that
/// noise is priced for the search (`search::price`), in every pass.
pub(super) fn partition(
    sessions: &[Vec<f64>],
    sums: &Prefix,
    noise: &Variogram,
    p: &Params,
    pass: Pass,
) -> (Vec<Piece>, Vec<Confirmed>) {
    let n = sums.len();
    let m = p.min_segment.max(1);
    if n < 2 * m {
        return (Vec::new(), Vec::new());
    }
    let gamma = if pass == Pass::Explaining {
        noise.near()
    } else {
        noise.at(p.window)
    };
    let beta = p.penalty * (n as f64).ln() * gamma;
    let locations = if n <= p.exact_up_to {
        (0..=n).collect()
    } else {
        segment::seeded_locations(sums, n, m, beta * segment::SEED_GAIN)
    };
    let points = segment::pelt(sums, &locations, m, beta);
    let mut pieces = segment::pieces(sums, &points, m, beta);
    segment::refine(sums, &mut pieces, m, p.window);
    if pieces.is_empty() {
        return (pieces, Vec::new());
    }
    let left = residuals(sums, &pieces);
    let residual = Variogram::of(&left, p.min_sigma());
    let span = WANDER_WINDOWS * p.window;
    // In the pass whose penalty is that of neighbouring points' noise,
    // pieces fitted to a wandering history take some of its variogram by
    // construction: they are kept only when they take nearly all of it
    // (residuals near the floor, a counted metric's, may rise with distance
    // by chance as long as they wander by less than matters).
    let explains_all = || {
        !wanders(&residual, p)
            && residual.at(span) * EXPLAINED_ALL <= noise.at(span)
            && pieces.len() <= MAX_EXPLAINING
    };
    if pass == Pass::Explaining && !explains_all() {
        return (Vec::new(), Vec::new());
    }
    let noise = if pass == Pass::Again {
        noise
    } else {
        &residual
    };
    // The candidates are the best of every split the history allows. On
    // evidence that its noise carries over, that search is paid for
    // (`search`), the dependence read off the residuals of the candidates
    // (read off the history, a real step reads as dependence and prices
    // itself away).
    let priced;
    let noise = if search::carries_over(&left) {
        let search = search::Search {
            n,
            window: p.window,
            min_segment: m,
            alpha: p.alpha,
            df: noise.df(2 * p.window),
            flat: noise.is_flat(),
        };
        priced = noise.scaled(search::price(search, search::Dependence::of(&left)));
        &priced
    } else {
        noise
    };
    loop {
        let mut out = Vec::new();
        let mut kept = Vec::new();
        for k in 0..pieces.len() {
            if let Some(c) = confirm_piece(sessions, &pieces, k, p, noise) {
                kept.push(pieces[k]);
                out.push(c);
                continue;
            }
            // A step that is not one may be the middle of a slow slide,
            // whose two sides within `window` differ too little: the best
            // ramp through it, confirmed as a drift, instead.
            let Piece::Step(t) = pieces[k] else { continue };
            let (lo, hi) = segment::bounds(&pieces, k, n);
            let Some((_, ramp)) = segment::best_ramp(sums, lo, hi, t, t) else {
                continue;
            };
            let mut trial = pieces.clone();
            trial[k] = ramp;
            // Against the residuals of the step it replaces (every pass
            // but `Again`), a ramp is a second guess confirmed on noise
            // that another fit made small: a wander's excursion passes that
            // at the smallest change, so its whole interval must clear it.
            let clears = |c: &Confirmed| pass == Pass::Again || c.change().clears(p.min_change());
            if let Some(c @ Confirmed::Drift(_)) =
                confirm_piece(sessions, &trial, k, p, noise).filter(clears)
            {
                kept.push(ramp);
                out.push(c);
            }
        }
        if kept.len() == pieces.len() {
            return (pieces, out);
        }
        pieces = kept;
        segment::refine(sums, &mut pieces, m, p.window);
    }
}

/// The variogram of the summaries less the levels `pieces` fit.
pub(super) fn residual_noise(sums: &Prefix, pieces: &[Piece], p: &Params) -> Variogram {
    Variogram::of(&residuals(sums, pieces), p.min_sigma())
}

/// The summaries less the levels `pieces` fit.
fn residuals(sums: &Prefix, pieces: &[Piece]) -> Vec<f64> {
    let fit = segment::fitted(sums, pieces);
    (0..sums.len())
        .map(|i| sums.mean(i, i + 1) - fit[i])
        .collect()
}

/// Piece `k` confirmed on the runs of the points beside it, within its
/// neighbours: a step's `window` points each side; a ramp's `window`
/// points before its start and after its end (at an end of the history,
/// its own first or last `min_segment` points instead).
pub(super) fn confirm_piece(
    sessions: &[Vec<f64>],
    pieces: &[Piece],
    k: usize,
    p: &Params,
    noise: &Variogram,
) -> Option<Confirmed> {
    let n = sessions.len();
    let (lo, hi) = segment::bounds(pieces, k, n);
    let w = p.window;
    match pieces[k] {
        Piece::Step(t) => {
            let before = t.saturating_sub(w).max(lo)..t;
            let after = t..(t + w).min(hi);
            confirm(sessions, before, after, p, noise).map(Confirmed::Step)
        }
        Piece::Ramp { start, end } => {
            let m = p.min_segment.max(1).min(end - start);
            let mut before = start.saturating_sub(w).max(lo)..start;
            if before.len() < 2 {
                before = start..start + m;
            }
            let mut after = end..(end + w).min(hi);
            if after.len() < 2 {
                after = end - m..end;
            }
            if before.end > after.start {
                return None;
            }
            let mut change = confirm(sessions, before, after, p, noise)?;
            change.index = start;
            Some(Confirmed::Drift(Drift {
                start,
                end: end - 1,
                ongoing: end == n,
                change,
                edges: None,
            }))
        }
    }
}

/// A stretch of points at another level that came back: a change and,
/// later, the opposite change, with the points after it not confirmed to
/// differ from the points before it. One event, not two changes.
#[derive(Clone, Debug, PartialEq)]
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
    /// Steps still in force after them (not part of an episode).
    pub changes: Vec<Change>,
    pub episodes: Vec<Episode>,
    pub drifts: Vec<Drift>,
    /// Noise that carries over from session to session, when there is.
    pub wander: Option<Wander>,
}

/// [`detect`] and the drifts, then each step followed by its opposite is
/// an episode when the points after the second are not confirmed to differ
/// from the points before the first (the same comparison as a change's,
/// between those two sides, each within its neighbouring changes) and
/// their difference is less than half the first step.
pub fn find(sessions: &[Vec<f64>], p: &Params) -> Found {
    let (sessions, _) = at_one_speed(sessions, p);
    find_from(&sessions, &summaries(&sessions), p).0
}

/// [`find`] with the sessions' [`summaries`] already made, and the shape
/// it came from.
pub(super) fn find_from(sessions: &[Vec<f64>], summaries: &[f64], p: &Params) -> (Found, Shape) {
    let mut shape = shape(sessions, summaries, p);
    let all = std::mem::take(&mut shape.steps);
    let mut found = Found {
        drifts: std::mem::take(&mut shape.drifts),
        wander: wander(&shape.noise, p),
        ..Found::default()
    };
    // The first point of the next piece after a step (or n).
    let next_edge = |index: usize| -> usize {
        shape
            .pieces
            .iter()
            .map(|q| q.left())
            .find(|&l| l > index)
            .unwrap_or(sessions.len())
    };
    let mut k = 0;
    while k < all.len() {
        if let Some(next) = all.get(k + 1).filter(|c| c.direction != all[k].direction) {
            let (enter, leave) = (&all[k], next);
            // Only two steps with nothing between them pair.
            let adjacent = next_edge(enter.index) == leave.index;
            let end = next_edge(leave.index);
            let after = leave.index..(leave.index + p.window).min(end);
            let before = enter.before.first..enter.before.last + 1;
            // Back: the level after not confirmed to differ from the level
            // before, and nearer to it than to the level during.
            let back = adjacent
                && confirm(sessions, before.clone(), after.clone(), p, &shape.noise).is_none()
                && compare_sides(sessions, before, after, p, &shape.noise)
                    .is_some_and(|c| 2.0 * c.ratio().ln().abs() < enter.ratio().ln().abs());
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
    (found, shape)
}

/// Each confirmed drift's ranges of its start and end, on the summaries
/// `sums` the pieces were fitted to, within its neighbouring pieces, with
/// the noise between neighbouring points measured without the confirmed
/// pieces (so noise that carries over makes them too narrow:
/// docs/CHANGES.md).
fn edge_ranges(drifts: &mut [Drift], pieces: &[Piece], sums: &Prefix, noise: &Variogram) {
    let n = sums.len();
    let sigma2 = noise.near();
    for d in drifts {
        let ramp = Piece::Ramp {
            start: d.start,
            end: d.end + 1,
        };
        // A drift confirmed in place of a step that failed keeps that step
        // among the pieces when every other piece confirmed: the ramp was
        // fitted within that step's bounds.
        let Some(k) = pieces.iter().position(|&q| {
            q == ramp || matches!(q, Piece::Step(t) if (d.start..=d.end + 1).contains(&t))
        }) else {
            continue;
        };
        let (lo, hi) = segment::bounds(pieces, k, n);
        d.edges = segment::edge_ranges(sums, lo, hi, (d.start, d.end + 1), sigma2);
    }
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
pub(super) fn all_positive(sessions: &[Vec<f64>]) -> bool {
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
pub(super) fn summaries_as(sessions: &[Vec<f64>], positive: bool) -> Vec<f64> {
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

/// Compares the runs of sessions `before` with those of `after` with the
/// engine's unpaired test at level `alpha`; a change when its verdict is
/// faster or slower and its size at least `min_change`.
pub(super) fn confirm(
    sessions: &[Vec<f64>],
    before: Range<usize>,
    after: Range<usize>,
    p: &Params,
    noise: &Variogram,
) -> Option<Change> {
    compare_sides(sessions, before, after, p, noise)
        .filter(|c| c.comparison.verdict.is_significant() && c.is_at_least(p.min_change()))
}

/// The comparison behind [`confirm`], whatever its verdict (None when a
/// side has fewer than 2 values).
///
/// Runs of one session share that session's conditions, so the run test
/// alone would call ordinary session-to-session variation a change. The
/// two sides' summaries differ, when nothing changed, with the variance
/// the history's variogram gives for these two ranges of points (which
/// holds the runs' own noise and any that carries over between sessions);
/// when that is larger than the runs' own, the engine's comparison is
/// widened to it, with Student's t on the variogram's degrees of freedom,
/// and the p-value, interval and verdict are re-decided on that, so they
/// agree.
pub(super) fn compare_sides(
    sessions: &[Vec<f64>],
    before: Range<usize>,
    after: Range<usize>,
    p: &Params,
    noise: &Variogram,
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
    // Noise that is larger here than over the whole history (its variance
    // changed without its level) scales the variance up, never down.
    let local = noise_sd(&summaries(&sessions[before.start..after.end]));
    let scale = (local * local / noise.at(1)).max(1.0);
    let variance = noise.var_of_difference(before.clone(), after.clone()) * scale;
    let df = noise.df(after.end - before.start);
    widen_to_variance(
        &mut c,
        variance,
        Some(df),
        noise.over(p.window),
        before.len(),
    );
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

/// The newest session compared with the stable stretch before it (since
/// the last confirmed step or drift, at most `window` sessions): what a CI
/// gate asks of a history. The newest session alone cannot yet be told
/// from an outlier, so this is reported separately from the change points;
/// when it is significant and at least `min_change`.
pub fn newest_against_history(sessions: &[Vec<f64>], p: &Params) -> Option<Change> {
    newest_comparison(sessions, p)
        .filter(|c| c.comparison.verdict.is_significant() && c.is_at_least(p.min_change()))
}

/// The comparison behind [`newest_against_history`], whatever its verdict.
pub fn newest_comparison(sessions: &[Vec<f64>], p: &Params) -> Option<Change> {
    let (sessions, _) = at_one_speed(sessions, p);
    let (_, shape) = find_from(&sessions, &summaries(&sessions), p);
    newest_of(&sessions, &shape, p)
}

/// The newest point against the points since the last piece of `shape`
/// (a slide still going on: since its start), at most `window` of them.
///
/// That stretch is the history's before the newest point: where the last
/// piece of `shape` (found with the newest point) starts inside the
/// window, the shape is found again without it. Otherwise a newest point
/// far off the rest can make a step of the few points before it (its own
/// runs confirming the step) and then be compared with those few alone,
/// which cannot tell even 15 times slower from their noise.
pub(super) fn newest_of(sessions: &[Vec<f64>], shape: &Shape, p: &Params) -> Option<Change> {
    let n = sessions.len();
    if n < 2 {
        return None;
    }
    let window_start = (n - 1).saturating_sub(p.window);
    let stretch_start = |shape: &Shape, end: usize| {
        shape
            .pieces
            .last()
            .map_or(0, |q| if q.right() < end { q.right() } else { q.left() })
    };
    let start = match stretch_start(shape, n) {
        recent if recent > window_start => {
            let before = &sessions[..n - 1];
            let (_, without) = find_from(before, &summaries(before), p);
            stretch_start(&without, n - 1)
        }
        start => start,
    };
    let from = start.max(window_start).min(n - 1);
    compare_sides(sessions, from..n - 1, n - 1..n, p, &shape.noise)
}

/// Indices where a new segment starts (ascending), from session summaries:
/// the steps and each ramp's start, before confirmation.
pub fn change_points(summaries: &[f64], p: &Params) -> Vec<usize> {
    let floor = p.min_sigma();
    let y = hampel(summaries, floor);
    let n = y.len();
    let m = p.min_segment.max(1);
    if n < 2 * m {
        return Vec::new();
    }
    let noise = Variogram::of(&y, floor);
    let beta = p.penalty * (n as f64).ln() * noise.at(p.window);
    let sums = Prefix::new(&y);
    let locations = if n <= p.exact_up_to {
        (0..=n).collect()
    } else {
        segment::seeded_locations(&sums, n, m, beta * segment::SEED_GAIN)
    };
    let points = segment::pelt(&sums, &locations, m, beta);
    let mut pieces = segment::pieces(&sums, &points, m, beta);
    segment::refine(&sums, &mut pieces, m, p.window);
    pieces.iter().map(|q| q.left()).collect()
}

/// Replaces each value further than HAMPEL_K robust SDs from the median of
/// its window by that median. The floor of the scale is the series' noise
/// (at least `floor`), so that windows of nearly equal values do not flag
/// ordinary noise. Non-finite values are replaced by the window's median
/// too.
pub fn hampel(x: &[f64], floor: f64) -> Vec<f64> {
    let finite: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    let floor = noise_sd(&finite).max(floor);
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

/// Robust SD of the noise of one point against the next: MAD of
/// successive differences / √2. Steps change only one difference each, so
/// they barely move it; noise that carries over from point to point is
/// mostly not in it (the variogram measures that).
pub fn noise_sd(y: &[f64]) -> f64 {
    if y.len() < 3 {
        return 0.0;
    }
    let d: Vec<f64> = y.windows(2).map(|w| w[1] - w[0]).collect();
    let med = median(&d).unwrap_or(0.0);
    let dev: Vec<f64> = d.iter().map(|v| (v - med).abs()).collect();
    MAD_SCALE * median(&dev).unwrap_or(0.0) / std::f64::consts::SQRT_2
}
