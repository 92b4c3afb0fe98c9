//! The search along one parameter: the race starts from a coarse scan
//! of an ordered parameter and zooms (the gaps around the leader split in
//! thirds, then the widest gap left in the bracket), or races every value
//! of an unordered one; and the bracket, what the search claims about
//! where the optimum may lie.

use super::grid::{coarse_points, grid_index, positions};
use super::measurer::Measurer;
use super::options::SearchOptions;
use super::race::{answer, run_race, Answer, Field, RaceState, Zoom};
use crate::error::Result;

/// The values a race over one parameter starts with: the coarse scan of
/// an ordered parameter, every value of an unordered one.
pub(super) fn start_points(n: usize, ordered: bool) -> Vec<usize> {
    if ordered {
        coarse_points(n)
    } else {
        (0..n).collect()
    }
}

/// Runs the race over grid indices 0..n of one parameter (see the module
/// comment): zooming when it is ordered, every value racing when not.
pub(super) fn race(
    m: &mut dyn Measurer,
    n: usize,
    opts: &SearchOptions,
    st: &mut RaceState,
) -> Result<()> {
    race_with(m, n, opts, st, true)
}

/// A line of `coordinate`: as `race`, but the untried values left in the
/// bracket do not join once the leader's gaps are closed. A line only
/// moves the point the next line starts from; the polish and the answer
/// come later. Filling the bracket of a shallow valley spent a line's
/// whole budget (on a tilted 256 × 16 valley the first line took 900 to
/// 1,600 of the search's 1,600 runs, and the best was more than 5 % above
/// the optimum in 6 of 100 seeds, 10 under simulated load).
pub(super) fn line_race(
    m: &mut dyn Measurer,
    n: usize,
    opts: &SearchOptions,
    st: &mut RaceState,
) -> Result<()> {
    race_with(m, n, opts, st, false)
}

fn race_with(
    m: &mut dyn Measurer,
    n: usize,
    opts: &SearchOptions,
    st: &mut RaceState,
    fill: bool,
) -> Result<()> {
    let ordered = opts.is_ordered(0);
    let start = start_points(n, ordered);
    let none = |_: usize| Vec::new();
    let field = Field {
        start_reason: if ordered {
            format!("coarse scan: {} evenly spaced values", start.len())
        } else {
            format!("an unordered list: all {} values race", start.len())
        },
        start,
        neighbours: &none,
        zoom: ordered.then_some(zoom_points as Zoom),
        fill,
        rejoin: false,
        keep_room: false,
        size: n,
    };
    run_race(m, &field, opts, st)
}

/// Up to two values splitting the open gap (a, b) of untried indices in
/// thirds (all of them when it holds one or two); `a` = -1 and `b` = n
/// stand for the grid's ends.
pub(super) fn split_gap(a: isize, b: isize) -> Vec<usize> {
    let inside = b - a - 1;
    if inside <= 0 {
        return Vec::new();
    }
    if inside <= 2 {
        return (a + 1..b).map(|i| i as usize).collect();
    }
    let third = |k: isize| (a + ((b - a) * k + 1) / 3) as usize;
    let mut pts = vec![third(1), third(2)];
    pts.dedup();
    pts
}

/// The zoom's next values over indices 0..n, given the values entered so
/// far (ascending) and those still in the race. First the gaps between the
/// leader and its entered neighbours, each split in thirds: the bracket
/// around the leader narrows threefold per level, so a grid of n values
/// needs about log3(n/6) levels. When those gaps are empty: the widest gap
/// left in the bracket (between the entered values just outside the live
/// ones), as `leader_only` is false.
pub(super) fn zoom_points(
    entered: &[usize],
    alive: &[usize],
    lead: usize,
    n: usize,
    leader_only: bool,
) -> Vec<usize> {
    let below = |x: usize| {
        entered
            .iter()
            .rev()
            .find(|&&e| e < x)
            .map_or(-1, |&e| e as isize)
    };
    let above = |x: usize| {
        entered
            .iter()
            .find(|&&e| e > x)
            .map_or(n as isize, |&e| e as isize)
    };
    let l = lead as isize;
    let mut pts = split_gap(below(lead), l);
    pts.extend(split_gap(l, above(lead)));
    if !pts.is_empty() || leader_only {
        return pts;
    }
    let (Some(&lo), Some(&hi)) = (alive.iter().min(), alive.iter().max()) else {
        return pts;
    };
    let (from, to) = (below(lo), above(hi));
    let mut edges: Vec<isize> = vec![from];
    edges.extend(
        entered
            .iter()
            .map(|&e| e as isize)
            .filter(|&e| e > from && e < to),
    );
    edges.push(to);
    edges
        .windows(2)
        .max_by_key(|w| w[1] - w[0])
        .map_or(Vec::new(), |w| split_gap(w[0], w[1]))
}

/// Where the optimum may lie, by the search's model: along each ordered
/// parameter, through the best, the cost is unimodal between tried
/// neighbours. Then every tried value outside the range is significantly
/// worse than the best (the range spans the set, up to the tried values
/// just outside it), and the optimum, if better than the best, lies in
/// the range; an untried value in it could hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bracket {
    /// Per parameter, the lowest and highest positions (inclusive) in the
    /// bracket; `None` for an unordered parameter (no neighbours: every
    /// value raced).
    pub ranges: Vec<Option<(usize, usize)>>,
    /// Grid values in the ranges (through the best) never measured.
    pub untried: usize,
}

/// The bracket of an answer (see `Bracket`) over a grid of `dims`.
pub(super) fn bracket(
    m: &dyn Measurer,
    dims: &[usize],
    opts: &SearchOptions,
    a: &Answer,
) -> Bracket {
    let at = positions(dims, a.best);
    let mut out = Bracket::default();
    for (k, &d) in dims.iter().enumerate() {
        if !opts.is_ordered(k) {
            out.ranges.push(None);
            continue;
        }
        let cell = |p: usize| {
            let mut q = at.clone();
            q[k] = p;
            grid_index(dims, &q)
        };
        let tried = |p: usize| m.count(cell(p)) > 0;
        let live: Vec<usize> = (0..d)
            .filter(|&p| p == at[k] || a.as_good.contains(&cell(p)))
            .collect();
        let (lo, hi) = (live[0], live[live.len() - 1]);
        let low = (0..lo).rev().find(|&p| tried(p)).map_or(0, |p| p + 1);
        let high = (hi + 1..d).find(|&p| tried(p)).map_or(d - 1, |p| p - 1);
        out.untried += (low..=high).filter(|&p| !tried(p)).count();
        out.ranges.push(Some((low, high)));
    }
    out
}

/// `settled` keeps its meaning only when the bracket holds no untried
/// value: the race may settle around a leader while the set still spans
/// values never measured.
pub(super) fn settle_by_bracket(
    m: &dyn Measurer,
    dims: &[usize],
    opts: &SearchOptions,
    st: &mut RaceState,
) {
    if !st.settled {
        return;
    }
    let n = dims.iter().product();
    if let Some(a) = answer(m, n, opts, st) {
        st.settled = bracket(m, dims, opts, &a).untried == 0;
    }
}
