//! The shape of a history's summaries: optimal partitioning into steps
//! (PELT over every point, or over the locations seeded intervals
//! propose), and runs of steps the same way that a slide fits better
//! turned into one ramp. Sums of squares come from prefix sums, so every
//! fit is O(1). docs/CHANGES.md has the reasons.

/// A change in the history's shape, by point index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Piece {
    /// The level steps at this point (its first point after).
    Step(usize),
    /// The level slides over points `start..end` (end exclusive): flat
    /// before, a straight line over the slide, flat after.
    Ramp { start: usize, end: usize },
}

impl Piece {
    /// First point the piece touches.
    pub fn left(self) -> usize {
        match self {
            Piece::Step(t) => t,
            Piece::Ramp { start, .. } => start,
        }
    }

    /// First point after the piece (the level after it starts there).
    pub fn right(self) -> usize {
        match self {
            Piece::Step(t) => t,
            Piece::Ramp { end, .. } => end,
        }
    }
}

/// The bounds a piece's sides stay within: the right edge of the piece
/// before it (or 0) and the left edge of the piece after it (or n).
pub fn bounds(pieces: &[Piece], k: usize, n: usize) -> (usize, usize) {
    let lo = if k == 0 { 0 } else { pieces[k - 1].right() };
    let hi = pieces.get(k + 1).map_or(n, |p| p.left());
    (lo, hi)
}

/// Shortest slide that is a ramp rather than a step spread over a few
/// sessions.
pub const MIN_RAMP: usize = 4;

/// Fewest points of a flat stretch beside a ramp (when there is one).
const MIN_FLAT: usize = 3;

/// How far a ramp's start may lie before its group's first step, and its
/// end after the last: a slide cut once in its middle has its edges half
/// its length away.
const RAMP_REACH: usize = 64;

/// A ramp costs this many penalties (a step costs one): its two edges are
/// one more parameter than a step's location, and half a penalty keeps a
/// noisy step from fitting as a short slide.
const RAMP_PENALTIES: f64 = 1.5;

/// Prefix sums for O(1) sums of squares of a mean, a line and a ramp.
pub struct Prefix {
    y: Vec<f64>,
    yy: Vec<f64>,
    iy: Vec<f64>,
}

impl Prefix {
    pub fn new(v: &[f64]) -> Prefix {
        let mut p = Prefix {
            y: Vec::with_capacity(v.len() + 1),
            yy: Vec::with_capacity(v.len() + 1),
            iy: Vec::with_capacity(v.len() + 1),
        };
        p.y.push(0.0);
        p.yy.push(0.0);
        p.iy.push(0.0);
        for (i, &x) in v.iter().enumerate() {
            p.y.push(p.y[i] + x);
            p.yy.push(p.yy[i] + x * x);
            p.iy.push(p.iy[i] + i as f64 * x);
        }
        p
    }

    pub fn len(&self) -> usize {
        self.y.len() - 1
    }

    /// Mean of [a, b).
    pub fn mean(&self, a: usize, b: usize) -> f64 {
        (self.y[b] - self.y[a]) / (b - a) as f64
    }

    /// Residual sum of squares around the mean of [a, b).
    pub fn rss(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        let sy = self.y[b] - self.y[a];
        (self.yy[b] - self.yy[a] - sy * sy / n).max(0.0)
    }

    /// Residual sum of squares over [a, b) of the least-squares fit of a
    /// level that slides over [s, s + len) (linearly, by 1/(len + 1) a
    /// point) from one value to another: `len` 0 is a step at `s`.
    /// Infinite when the shape is degenerate (no point off the slide's
    /// start value, or none at its end).
    pub fn rss_ramp(&self, a: usize, b: usize, s: usize, len: usize) -> f64 {
        self.ramp_fit(a, b, s, len).map_or(f64::INFINITY, |f| f.2)
    }

    /// The least-squares ramp of [`Prefix::rss_ramp`]: the level before
    /// the slide, the slide's size, and the residual sum of squares.
    pub fn ramp_fit(&self, a: usize, b: usize, s: usize, len: usize) -> Option<(f64, f64, f64)> {
        let e = s + len;
        if !(a <= s && e <= b && a < b) {
            return None;
        }
        let n = (b - a) as f64;
        let l = len as f64;
        let after = (b - e) as f64;
        // r = (t - s + 1) / (len + 1) on the slide, 1 after it, 0 before.
        let sr = l / 2.0 + after;
        let srr = if len == 0 {
            after
        } else {
            l * (2.0 * l + 1.0) / (6.0 * (l + 1.0)) + after
        };
        let slide_ty = self.iy[e] - self.iy[s];
        let slide_y = self.y[e] - self.y[s];
        let sry = (slide_ty - (s as f64 - 1.0) * slide_y) / (l + 1.0) + self.y[b] - self.y[e];
        let sy = self.y[b] - self.y[a];
        let crr = srr - sr * sr / n;
        if crr <= 1e-12 {
            return None;
        }
        let cry = sry - sr * sy / n;
        let delta = cry / crr;
        let alpha = (sy - delta * sr) / n;
        Some((alpha, delta, (self.rss(a, b) - cry * cry / crr).max(0.0)))
    }
}

/// Histories up to this many points are partitioned over every point.
/// PELT's pruning is weak when changes are few (a candidate inside a long
/// steady segment always gains a little from a split, so it is never
/// pruned): the search is then quadratic, 0.17 s for a history of 10,000
/// sessions. Longer histories are partitioned over the locations that
/// seeded intervals propose.
pub const EXACT_UP_TO: usize = 1000;

/// A seeded interval's best split is a proposed location when it gains at
/// least this share of the penalty. Below 1, so that a change whose gain
/// over its neighbouring segments passes the penalty is proposed from an
/// interval that holds only part of those segments.
pub const SEED_GAIN: f64 = 0.1;

/// Ratio of successive interval lengths of the seeded intervals.
const SEED_DECAY: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Locations where a change may be: 0, n and the best split of every
/// seeded interval (Kovács et al. 2020: at each scale, intervals of one
/// length overlapping by half, lengths shrinking by `SEED_DECAY` down to
/// two segments) that gains more than `min_gain`. Short intervals see a
/// short episode in a long history, which one split of the whole would
/// miss; there are O(n log n) split evaluations in all.
pub fn seeded_locations(s: &Prefix, n: usize, m: usize, min_gain: f64) -> Vec<usize> {
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
pub fn pelt(s: &Prefix, locations: &[usize], m: usize, beta: f64) -> Vec<usize> {
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

/// The pieces of a partition: each run of neighbouring change points that
/// step the same way is one ramp when a slide over them fits their
/// segments better than their steps do (a ramp costing
/// `RAMP_PENALTIES` × `beta`, each step `beta`) and better than one step
/// does; otherwise its steps stay. A slow drift, which the mean-shift cost
/// cuts into pieces, becomes one ramp with a start and an end; a
/// staircase (+10 %, then +15 % far apart) stays two steps, which fit it
/// far better than one line does.
pub fn pieces(s: &Prefix, points: &[usize], m: usize, beta: f64) -> Vec<Piece> {
    let n = s.len();
    let bound = |k: usize| -> usize {
        if k == 0 {
            0
        } else {
            points.get(k - 1).copied().unwrap_or(n)
        }
    };
    let sign = |k: usize| -> f64 {
        let (a, t) = (bound(k), points[k]);
        let b = points.get(k + 1).copied().unwrap_or(n);
        (s.mean(t, b) - s.mean(a, t)).signum()
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < points.len() {
        let mut j = k;
        while j + 1 < points.len() && sign(j + 1) == sign(k) {
            j += 1;
        }
        let (a, b) = (bound(k), points.get(j + 1).copied().unwrap_or(n));
        match ramp_of(
            s,
            a,
            b,
            (points[k], points[j]),
            m,
            beta,
            j + 1 - k,
            &points[k..=j],
        ) {
            Some(r) => out.push(r),
            None => out.extend(points[k..=j].iter().map(|&t| Piece::Step(t))),
        }
        k = j + 1;
    }
    out
}

/// The ramp over [a, b) whose slide starts at or before `first` and ends
/// at or after `last` that fits best, when it beats the `steps` (the
/// group's change points) and the best single step: None otherwise.
#[allow(clippy::too_many_arguments)]
fn ramp_of(
    s: &Prefix,
    a: usize,
    b: usize,
    (first, last): (usize, usize),
    m: usize,
    beta: f64,
    count: usize,
    steps: &[usize],
) -> Option<Piece> {
    let mut edges = vec![a];
    edges.extend_from_slice(steps);
    edges.push(b);
    let steps_cost: f64 =
        edges.windows(2).map(|w| s.rss(w[0], w[1])).sum::<f64>() + count as f64 * beta;
    let one_step = (a + m..=b.saturating_sub(m))
        .map(|u| s.rss(a, u) + s.rss(u, b))
        .fold(f64::INFINITY, f64::min)
        + beta;
    let (rss, piece) = best_ramp(s, a, b, first, last)?;
    let cost = rss + RAMP_PENALTIES * beta;
    (cost < steps_cost && cost < one_step).then_some(piece)
}

/// The best-fitting ramp over [a, b) whose slide starts at or before
/// `first` and ends at or after `last - 1` (so it covers the steps at
/// `first` … `last`), sliding over at least `MIN_RAMP` points, and its
/// residual sum of squares. The flat stretches beside the slide are empty
/// or at least `MIN_FLAT` points: a line through a slide that reaches the
/// newest point fits as well with its last point called flat, which would
/// end a slide that has not ended.
pub fn best_ramp(
    s: &Prefix,
    a: usize,
    b: usize,
    first: usize,
    last: usize,
) -> Option<(f64, Piece)> {
    let mut best: Option<(f64, usize, usize)> = None;
    let flat = |len: usize| len == 0 || len >= MIN_FLAT;
    for start in a.max(first.saturating_sub(RAMP_REACH))..=first {
        if !flat(start - a) {
            continue;
        }
        let from = (last.saturating_sub(1)).max(start + MIN_RAMP - 1);
        for end in from..(b.min(last + RAMP_REACH)) {
            if !flat(b - end - 1) {
                continue;
            }
            let len = end + 1 - start;
            let rss = s.rss_ramp(a, b, start, len);
            if best.is_none_or(|x| rss < x.0) {
                best = Some((rss, start, end + 1));
            }
        }
    }
    best.map(|(rss, start, end)| (rss, Piece::Ramp { start, end }))
}

/// Ranges of points for a ramp's two edges at about `EDGE_CONFIDENCE`:
/// every start (and every end) whose best fit, profiled over the other
/// edge, costs at most `EDGE_PROFILE` × σ² more than the best ramp over
/// [a, b) (the likelihood-ratio interval of one parameter under normal
/// noise of variance `sigma2`, the levels and the other edge fitted). The
/// edges are searched as `best_ramp` searches them, within `RAMP_REACH`
/// of the ramp's own; each range holds the ramp's own edge.
pub fn edge_ranges(
    s: &Prefix,
    a: usize,
    b: usize,
    (start, end): (usize, usize),
    sigma2: f64,
) -> Option<EdgeRanges> {
    if !(a <= start && start < end && end <= b && sigma2 > 0.0) {
        return None;
    }
    let flat = |len: usize| len == 0 || len >= MIN_FLAT;
    let starts = a.max(start.saturating_sub(RAMP_REACH))..=start.saturating_add(RAMP_REACH).min(b);
    let ends = end.saturating_sub(RAMP_REACH).max(a)..=b.min(end + RAMP_REACH);
    // Best cost per start and per end (end exclusive, as `Piece::Ramp`).
    let mut by_start = vec![f64::INFINITY; starts.end() + 1 - starts.start()];
    let mut by_end = vec![f64::INFINITY; ends.end() + 1 - ends.start()];
    for st in starts.clone().filter(|&x| flat(x - a)) {
        for en in ends.clone().filter(|&e| e >= st + MIN_RAMP && flat(b - e)) {
            let rss = s.rss_ramp(a, b, st, en - st);
            let i = st - starts.start();
            by_start[i] = by_start[i].min(rss);
            let j = en - ends.start();
            by_end[j] = by_end[j].min(rss);
        }
    }
    let best = by_start.iter().copied().fold(f64::INFINITY, f64::min);
    if !best.is_finite() {
        return None;
    }
    let limit = best + EDGE_PROFILE * sigma2;
    let range = |costs: &[f64], from: usize, own: usize| -> [usize; 2] {
        let inside: Vec<usize> = (0..costs.len())
            .filter(|&i| costs[i] <= limit)
            .map(|i| from + i)
            .collect();
        let lo = inside.first().copied().unwrap_or(own).min(own);
        let hi = inside.last().copied().unwrap_or(own).max(own);
        [lo, hi]
    };
    let first = range(&by_start, *starts.start(), start);
    let after = range(&by_end, *ends.start(), end);
    // Ends as the last point of the slide (inclusive), as `Drift::end`.
    Some(EdgeRanges {
        start: first,
        end: [after[0].saturating_sub(1), after[1].saturating_sub(1)],
    })
}

/// The confidence of [`edge_ranges`].
pub const EDGE_CONFIDENCE: f64 = 0.9;

/// The χ² quantile of one degree of freedom at `EDGE_CONFIDENCE`: the
/// rise of the cost (in units of σ²) that bounds an edge's range.
const EDGE_PROFILE: f64 = 2.705_543_454_095_404;

/// Ranges of a slide's first and last point (each inclusive at both ends).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct EdgeRanges {
    pub start: [usize; 2],
    pub end: [usize; 2],
}

/// The flat–slide–flat fit of the whole history with exactly one slide
/// that fits best, its start and end searched over every pair of points
/// (at least one flat point each side): the best any least-squares method
/// that knows there is one slide can locate it, the yardstick the
/// simulations score `pieces` against. O(n²) fits of O(1) each.
pub fn one_slide(s: &Prefix) -> Option<(f64, Piece)> {
    let n = s.len();
    let mut best: Option<(f64, Piece)> = None;
    for start in 1..n {
        for end in start + 1..n {
            let rss = s.rss_ramp(0, n, start, end - start);
            if best.is_none_or(|b| rss < b.0) {
                best = Some((rss, Piece::Ramp { start, end }));
            }
        }
    }
    best
}

/// The Cramér–Rao bound of a slide's edges: the smallest standard
/// deviations (in points) any unbiased estimate of its start and end can
/// have, and their correlation, under independent normal noise of SD
/// `sigma` around the ramp of `Prefix::ramp_fit` over `n` points that
/// slides by `size` over `start..end` (end exclusive), its two levels
/// estimated with it. docs/CHANGES.md derives it: with long flat sides
/// each edge's SD tends to 2 σ √(len + 1) / |size|.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeBound {
    pub start_sd: f64,
    pub end_sd: f64,
    pub correlation: f64,
}

pub fn edge_bound(n: usize, start: usize, end: usize, size: f64, sigma: f64) -> Option<EdgeBound> {
    if !(start >= 1 && end > start && end < n && size != 0.0 && sigma > 0.0) {
        return None;
    }
    // The level is α + size·u(t), u = (t − a)/(b − a) clamped to [0, 1],
    // kinks a = start − 1 (the last point at 0) and b = end (the first
    // at 1); the parameters (α, size, a, b), a and b as real numbers.
    let (a, b) = (start as f64 - 1.0, end as f64);
    let w = b - a;
    let mut info = [[0.0f64; 4]; 4];
    for t in 0..n {
        let x = t as f64;
        let u = ((x - a) / w).clamp(0.0, 1.0);
        let inside = x > a && x < b;
        let g = [
            1.0,
            u,
            if inside { -size * (1.0 - u) / w } else { 0.0 },
            if inside { -size * u / w } else { 0.0 },
        ];
        for i in 0..4 {
            for j in 0..4 {
                info[i][j] += g[i] * g[j];
            }
        }
    }
    let inv = invert4(info)?;
    let (vs, ve) = (inv[2][2] * sigma * sigma, inv[3][3] * sigma * sigma);
    if !(vs > 0.0 && ve > 0.0) {
        return None;
    }
    Some(EdgeBound {
        start_sd: vs.sqrt(),
        end_sd: ve.sqrt(),
        correlation: inv[2][3] * sigma * sigma / (vs * ve).sqrt(),
    })
}

/// The inverse of a symmetric positive definite 4 × 4 matrix (Gauss–Jordan
/// with partial pivoting); None when it is singular.
fn invert4(mut m: [[f64; 4]; 4]) -> Option<[[f64; 4]; 4]> {
    let mut inv = [[0.0; 4]; 4];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let scale = m.iter().flatten().fold(0.0f64, |x, v| x.max(v.abs()));
    for c in 0..4 {
        let p = (c..4).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[p][c].abs() <= 1e-12 * scale {
            return None;
        }
        m.swap(c, p);
        inv.swap(c, p);
        let d = m[c][c];
        for j in 0..4 {
            m[c][j] /= d;
            inv[c][j] /= d;
        }
        for r in 0..4 {
            if r != c {
                let f = m[r][c];
                for j in 0..4 {
                    m[r][j] -= f * m[c][j];
                    inv[r][j] -= f * inv[c][j];
                }
            }
        }
    }
    Some(inv)
}

/// Moves each step to the split of its neighbouring segments that gains
/// most, within `window` points of where it was: a step found in a longer
/// segment than it ends up in may sit a few points off, and an effect
/// measured across the true step would be shrunk. Ramps stay.
pub fn refine(s: &Prefix, pieces: &mut [Piece], m: usize, window: usize) {
    let n = s.len();
    for k in 0..pieces.len() {
        let Piece::Step(t) = pieces[k] else { continue };
        let (a, b) = bounds(pieces, k, n);
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
            pieces[k] = Piece::Step(best);
        }
    }
}

/// The fitted level at every point: each flat stretch's mean, and over a
/// ramp the least-squares ramp over it and the stretches beside it.
/// Its residuals are what the noise is estimated from once the pieces are
/// confirmed.
pub fn fitted(s: &Prefix, pieces: &[Piece]) -> Vec<f64> {
    let n = s.len();
    let mut out = vec![0.0; n];
    // Flat stretches: between one piece's right edge and the next's left.
    let mut flats: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for p in pieces {
        flats.push((at, p.left()));
        at = p.right();
    }
    flats.push((at, n));
    let level = |(a, b): (usize, usize)| if b > a { Some(s.mean(a, b)) } else { None };
    for &(a, b) in &flats {
        if let Some(v) = level((a, b)) {
            out[a..b].iter_mut().for_each(|x| *x = v);
        }
    }
    for (k, p) in pieces.iter().enumerate() {
        let Piece::Ramp { start, end } = *p else {
            continue;
        };
        // The ramp fitted over it and the flat stretches beside it.
        let (lo, hi) = (flats[k].0, flats[k + 1].1);
        let Some((alpha, delta, _)) = s.ramp_fit(lo, hi, start, end - start) else {
            continue;
        };
        let len = (end - start) as f64;
        for (i, x) in out[start..end].iter_mut().enumerate() {
            *x = alpha + delta * (i as f64 + 1.0) / (len + 1.0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sum_of_squares() {
        let line: Vec<f64> = (0..10).map(|i| 2.0 + 0.5 * i as f64).collect();
        let p = Prefix::new(&line);
        // Mean of 2..6.5 step 0.5: sum of squares 0.25 × 82.5.
        assert!((p.rss(0, 10) - 20.625).abs() < 1e-9);
    }

    #[test]
    fn a_ramp_fits_a_slide_exactly_and_a_step_is_a_ramp_of_length_0() {
        // Flat 1 over 0..10, slides to 2 over 10..15, flat 2 over 15..30.
        let y: Vec<f64> = (0..30)
            .map(|i| match i {
                0..10 => 1.0,
                10..15 => 1.0 + (i - 9) as f64 / 6.0,
                _ => 2.0,
            })
            .collect();
        let p = Prefix::new(&y);
        assert!(p.rss_ramp(0, 30, 10, 5) < 1e-9);
        assert!(p.rss_ramp(0, 30, 10, 4) > 1e-3);
        let step: Vec<f64> = (0..20).map(|i| if i < 8 { 1.0 } else { 3.0 }).collect();
        let q = Prefix::new(&step);
        assert!(q.rss_ramp(0, 20, 8, 0) < 1e-9);
        // To the end of the history: no flat after it.
        let tail: Vec<f64> = (0..20)
            .map(|i| if i < 12 { 1.0 } else { 1.0 + (i - 11) as f64 })
            .collect();
        assert!(Prefix::new(&tail).rss_ramp(0, 20, 12, 8) < 1e-9);
        // A slide pieced into steps becomes one ramp; a staircase stays steps.
        let pieces_of = |y: &[f64], points: &[usize]| pieces(&Prefix::new(y), points, 3, 0.01);
        assert_eq!(
            pieces_of(&y, &[12]),
            vec![Piece::Ramp { start: 10, end: 15 }]
        );
        let stairs: Vec<f64> = (0..60)
            .map(|i| match i {
                0..20 => 1.0,
                20..40 => 2.0,
                _ => 3.0,
            })
            .collect();
        assert_eq!(
            pieces_of(&stairs, &[20, 40]),
            vec![Piece::Step(20), Piece::Step(40)]
        );
        let fit = fitted(&Prefix::new(&y), &[Piece::Ramp { start: 10, end: 15 }]);
        assert!(fit.iter().zip(&y).all(|(a, b)| (a - b).abs() < 1e-9));
    }
}
