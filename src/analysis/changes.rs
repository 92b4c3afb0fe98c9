//! Change points in a benchmark's history: where its level stepped, slid
//! or stepped and came back, found on one summary per session and
//! confirmed on the sessions' runs; and whether the machine's own level
//! wanders.
//!
//! Method (docs/CHANGES.md has the reasons):
//! 1. Runs that fall into two speeds in most sessions (a shared VM) are
//!    brought to the fast speed (`speeds`).
//! 2. Summary per session: the median of log time over the session's runs
//!    (log, so that a step is the same size at 1 ms and at 1 s).
//! 3. A Hampel filter (window of 5 sessions, 3 robust standard deviations)
//!    replaces isolated outlier sessions by their neighbours' median, so that
//!    one bad session is not a pair of change points.
//! 4. The noise as a function of distance (`noise::Variogram`): how much
//!    summaries 1, 2, … 64 sessions apart differ when nothing changed, so
//!    noise that carries over from session to session (wander) is measured
//!    as such, not as the small difference of neighbouring sessions.
//! 5. Optimal partitioning by PELT (Killick et al. 2012) with the Gaussian
//!    mean-shift cost and a BIC-type penalty `penalty × ln(n) × σ²` per
//!    change, σ² the variogram at `window` sessions.
//! 6. Neighbouring change points that step the same way are one slow drift
//!    (a ramp with a start and an end) when a slide fits them better
//!    (`segment::pieces`); the other steps are moved to the best split
//!    of their neighbouring segments within `window`.
//! 7. Each step and drift is confirmed on the runs of the sessions next to
//!    it (up to `window` sessions each side, within its neighbours) with the
//!    comparison engine's unpaired test, its variance at least that of the
//!    difference of the two sides' means the variogram gives, with Student's
//!    t on the variogram's degrees of freedom; it must be at least
//!    `min_change` in size (each metric's own floor by default).
//! 8. The noise is measured again without the confirmed steps and drifts,
//!    and the history partitioned again with it.
//! 9. A change followed by its opposite, with the level after not
//!    confirmed to differ from the level before, is an episode; most
//!    benchmarks of one machine changing at one session is a machine-wide
//!    shift; a variogram that keeps rising with distance is wander.

use std::ops::Range;

use crate::analysis::comparison::{
    compare_values, fails_gate, widen_to_variance, Comparison, Design, Settings, Verdict,
};
use crate::analysis::modes::SpeedModes;
use crate::analysis::LEVEL;
use crate::analysis::MAX_VALUES;
use crate::metrics::Metric;
use crate::stats::{median_finite as median, thin};
use crate::store::history::History;

use noise::Variogram;
use segment::{Piece, Prefix};

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
    /// Smallest relative change reported (0.02: 2 %); None: the metric's
    /// own ([`floor`]).
    pub min_change: Option<f64>,
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
            min_change: None,
            metric: None,
            metric_name: METRIC_LOG,
            exact_up_to: segment::EXACT_UP_TO,
        }
    }
}

impl Params {
    /// The smallest change reported: `min_change`, else the metric's floor.
    pub fn min_change(&self) -> f64 {
        self.min_change.unwrap_or_else(|| floor(self.metric_name))
    }

    /// Session-to-session noise below this (log units) is taken as this:
    /// identical summaries (coarse timers, exact counts) must not make
    /// every tiny difference a change. A twentieth of the smallest change
    /// reported, at most 0.1 %.
    fn min_sigma(&self) -> f64 {
        (self.min_change() / 20.0).min(1e-3)
    }
}

/// The smallest relative change of a metric worth reporting, when the
/// user does not say (`--min-change`): 2 % for times and what moves with
/// them (a wall-time figure: machines drift by about 1 % in stretches),
/// 1 % for sizes and minor page faults (a fixed allocation moves them
/// little), 0.1 % for counted instructions (nearly exact), 5 % for counts
/// that follow the scheduler (context switches, migrations, major
/// faults) and for the 99th latency percentile, 3 % for the 90th.
pub fn floor(metric: &str) -> f64 {
    match metric {
        "instructions" => 0.001,
        "memory_peak_resident"
        | "page_faults_minor"
        | "io_read_bytes"
        | "io_write_bytes"
        | "io_read_chars"
        | "io_write_chars" => 0.01,
        "context_switches_voluntary"
        | "context_switches_involuntary"
        | "cpu_migrations"
        | "page_faults_major"
        | crate::store::history::LATENCY_P99 => 0.05,
        crate::store::history::LATENCY_P90 => 0.03,
        _ => 0.02,
    }
}

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

/// Wander is reported when the variogram over this many windows is at
/// least `WANDER_RATIO` times its value at one session (as standard
/// deviations) and the wander itself at least a quarter of the smallest
/// change: noise that carries over, large enough to matter.
const WANDER_WINDOWS: usize = 2;
const WANDER_RATIO: f64 = std::f64::consts::SQRT_2;

/// Most candidate pieces whose residuals may stand for the noise (a slide
/// and a step beside it), when their residuals do not carry over and they
/// take at least `1 - 1/EXPLAINED` of the variogram at `WANDER_WINDOWS`
/// windows away.
const MAX_EXPLAINING: usize = 3;
const EXPLAINED: f64 = 1.25;
/// In the pass whose penalty is that of neighbouring points' noise, the
/// pieces must take `1 - 1/EXPLAINED_ALL` of the variogram at
/// `WANDER_WINDOWS` windows.
const EXPLAINED_ALL: f64 = 10.0;

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
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
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
}

impl Drift {
    pub fn direction(&self) -> Direction {
        self.change.direction
    }

    pub fn ratio(&self) -> f64 {
        self.change.ratio()
    }
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
fn wander(noise: &Variogram, p: &Params) -> Option<Wander> {
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
fn wanders(noise: &Variogram, p: &Params) -> bool {
    let span = WANDER_WINDOWS * p.window;
    noise.carry_over(span) >= WANDER_RATIO && wander_sigma(noise, span) >= p.min_change() / 4.0
}

/// sqrt(γ(span) − γ(near)): how far the level wanders beyond the noise of
/// neighbouring points.
fn wander_sigma(noise: &Variogram, span: usize) -> f64 {
    (noise.at(span) - noise.near()).max(0.0).sqrt()
}

/// Change points of a history (one slice of run values per session, in
/// history order; sessions without runs must be left out by the caller):
/// its steps, confirmed, without the drifts and without pairing episodes.
pub fn detect(sessions: &[Vec<f64>], p: &Params) -> Vec<Change> {
    let (sessions, _) = at_one_speed(sessions);
    shape(&sessions, &summaries(&sessions), p).steps
}

/// The sessions with the runs of a two-speed machine's slow speed brought
/// to the fast one (`speeds`), and the speeds; the sessions as they are
/// otherwise.
fn at_one_speed(sessions: &[Vec<f64>]) -> (std::borrow::Cow<'_, [Vec<f64>]>, Option<SpeedModes>) {
    match speeds::normalised(sessions) {
        Some((runs, modes)) => (std::borrow::Cow::Owned(runs), Some(modes)),
        None => (std::borrow::Cow::Borrowed(sessions), None),
    }
}

/// The confirmed shape of a history.
struct Shape {
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
fn shape(sessions: &[Vec<f64>], summaries: &[f64], p: &Params) -> Shape {
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
enum Pass {
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
enum Confirmed {
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
/// The noise the pieces are confirmed with: when at most
/// `MAX_EXPLAINING` candidate pieces leave residuals that no longer carry
/// over from session to session and take a fifth or more of the variogram
/// at 20 points, what made `noise` rise with distance was these pieces (a
/// slide moves most differences over its length), and the residuals'
/// noise is the one; otherwise the machine wanders, and `noise` (which
/// holds the wander) is: a piece or two fitted to a wandering history
/// takes a small part of it. Not in the pass `Again`.
fn partition(
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
    let residual = residual_noise(sums, &pieces, p);
    let span = WANDER_WINDOWS * p.window;
    // Residuals that no longer carry over. In the pass whose penalty is
    // that of neighbouring points' noise, pieces fitted to a wandering
    // history take some of its variogram by construction: there they must
    // take nearly all of it, and residuals near the floor (a counted
    // metric's) may rise with distance by chance as long as they wander
    // by less than matters.
    let explained = match pass {
        Pass::First => {
            residual.carry_over(span) < WANDER_RATIO
                && residual.at(span) * EXPLAINED <= noise.at(span)
        }
        Pass::Explaining => {
            !wanders(&residual, p) && residual.at(span) * EXPLAINED_ALL <= noise.at(span)
        }
        Pass::Again => false,
    } && pieces.len() <= MAX_EXPLAINING;
    if pass == Pass::Explaining && !explained {
        return (Vec::new(), Vec::new());
    }
    let noise = if explained { &residual } else { noise };
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
            // Against the residuals of the step it replaces (`explained`),
            // a ramp is a second guess confirmed on noise that another fit
            // made small: a wander's excursion passes that at the smallest
            // change, so its whole interval must clear it.
            let clears = |c: &Confirmed| !explained || c.change().clears(p.min_change());
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
fn residual_noise(sums: &Prefix, pieces: &[Piece], p: &Params) -> Variogram {
    let fit = segment::fitted(sums, pieces);
    let residuals: Vec<f64> = (0..sums.len())
        .map(|i| sums.mean(i, i + 1) - fit[i])
        .collect();
    Variogram::of(&residuals, p.min_sigma())
}

/// Piece `k` confirmed on the runs of the points beside it, within its
/// neighbours: a step's `window` points each side; a ramp's `window`
/// points before its start and after its end (at an end of the history,
/// its own first or last `min_segment` points instead).
fn confirm_piece(
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
            }))
        }
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
    let (sessions, _) = at_one_speed(sessions);
    find_from(&sessions, &summaries(&sessions), p).0
}

/// [`find`] with the sessions' [`summaries`] already made, and the shape
/// it came from.
fn find_from(sessions: &[Vec<f64>], summaries: &[f64], p: &Params) -> (Found, Shape) {
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

/// Compares the runs of sessions `before` with those of `after` with the
/// engine's unpaired test at level `alpha`; a change when its verdict is
/// faster or slower and its size at least `min_change`.
fn confirm(
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
fn compare_sides(
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
    let (sessions, _) = at_one_speed(sessions);
    let (_, shape) = find_from(&sessions, &summaries(&sessions), p);
    newest_of(&sessions, &shape, p)
}

/// The newest point against the points since the last piece of `shape`
/// (a slide still going on: since its start), at most `window` of them.
fn newest_of(sessions: &[Vec<f64>], shape: &Shape, p: &Params) -> Option<Change> {
    let n = sessions.len();
    if n < 2 {
        return None;
    }
    let start = shape
        .pieces
        .last()
        .map_or(0, |q| if q.right() < n { q.right() } else { q.left() });
    let from = start.max((n - 1).saturating_sub(p.window)).min(n - 1);
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
    let (used, speeds) = at_one_speed(&runs);
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

pub mod gate;
mod noise;
mod segment;
pub mod select;
pub mod simulated;
mod speeds;

#[cfg(test)]
mod tests;
