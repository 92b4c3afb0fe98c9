//! The race: values measured in interleaved rounds beside a leader,
//! chosen within shared blocks; what the comparison engine finds
//! significantly worse than the leader is dropped; more runs go to the
//! values still in the race (successive halving when the budget binds).
//! Where new values come from is the field's (`Field`): the zoom's finer
//! values on one ordered parameter, grid neighbours in the polish. At the
//! end, `answer` gives the best and the as-good set, through the engine.

use serde::Serialize;

use super::measurer::Measurer;
use super::options::SearchOptions;
use crate::analysis::comparison::{compare_values, Comparison, Design, Settings, Verdict, MIN_N};
use crate::error::Result;

/// One step of the race, for the report and the JSON (which
/// `report::json` writes, the comparison in its words).
#[derive(Clone, Debug)]
pub struct Decision {
    pub step: usize,
    /// "measure", "add" or "drop".
    pub action: &'static str,
    /// Grid indices concerned.
    pub points: Vec<usize>,
    /// Their values (filled in by `search`).
    pub values: Vec<String>,
    /// measure/add: runs each value got in the step (the leader's too).
    pub runs_each: Option<usize>,
    /// drop: the leader it was compared with.
    pub leader: Option<usize>,
    /// drop: the leader's value (filled in by `search`).
    pub leader_value: Option<String>,
    /// drop: the engine's comparison of the dropped value with the leader.
    pub comparison: Option<Comparison>,
    pub reason: String,
}

/// How one tried value ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Best,
    /// Not significantly worse than the best.
    AsGood,
    /// Significantly worse than the leader at a step (or at the end).
    Worse,
}

/// The race's state, kept outside `race` so a failed or interrupted search
/// still reports what it decided.
#[derive(Clone, Debug, Default)]
pub struct RaceState {
    pub alive: Vec<usize>,
    pub decisions: Vec<Decision>,
    pub step: usize,
    pub runs: usize,
    /// Every live value has the full run count and the leader's neighbours
    /// are measured.
    pub settled: bool,
    /// The budget ended the race.
    pub budget_exhausted: bool,
    /// The last leader: every round measures it, and the next leader is
    /// chosen by comparison with it within blocks (see `leader`).
    pub leader: Option<usize>,
}

/// The answer: the best value, the set, and one comparison per tried value.
#[derive(Clone, Debug)]
pub struct Answer {
    pub best: usize,
    /// Grid indices not significantly worse than the best, ascending, the
    /// best included.
    pub as_good: Vec<usize>,
    /// (grid index, status, the comparison of it with the best: the final
    /// one for live values, the dropping one for dropped values).
    pub rows: Vec<(usize, Status, Option<Comparison>)>,
}

pub(super) fn median(xs: &[f64]) -> f64 {
    crate::stats::median(xs).unwrap_or(f64::NAN)
}

/// The answer's comparison of `cand` with the best `base`: paired by
/// block (the ratio of runs of the same block of the same round, so load
/// common to a round cancels too) when they share `MIN_N` blocks, else
/// unpaired on all their runs.
fn compare_set(
    m: &dyn Measurer,
    opts: &SearchOptions,
    base: usize,
    cand: usize,
    family: usize,
) -> Comparison {
    let s = engine_settings(m, opts, family);
    let (a, b) = m.pairs(base, cand);
    let c = if a.len() >= MIN_N {
        compare_values(&a, &b, Design::Paired, &s)
    } else {
        compare_values(&m.values(base), &m.values(cand), Design::Unpaired, &s)
    };
    c.named(opts.quantity(), "", "")
}

/// The engine's settings for the search's comparisons among `family` values.
fn engine_settings(m: &dyn Measurer, opts: &SearchOptions, family: usize) -> Settings {
    opts.source
        .settings(opts.alpha, family, opts.precision, m.rss_floor())
}

/// How the race's drops compare a value with the leader: unpaired, on all
/// their runs. Paired by block (load common to a round cancels) needs
/// more runs per value before a drop: with 3 shared blocks the engine's
/// paired t test has 2 degrees of freedom, and values that an unpaired
/// test drops after the coarse scan stay in the race. Scaling each run by
/// the leader's median in its round (stratified, unpaired) cancels a
/// round's load too, but only the rounds that measured both count, and a
/// value measured before the leader joined keeps few: on simulated
/// two-parameter grids the drops lost power and the search its accuracy
/// (docs/STATISTICS.md). So drops stay unpaired; the leader, the best and
/// the set are chosen within blocks.
fn compare_drop(
    m: &dyn Measurer,
    opts: &SearchOptions,
    base: usize,
    cand: usize,
    family: usize,
) -> Comparison {
    let s = engine_settings(m, opts, family);
    compare_values(&m.values(base), &m.values(cand), Design::Unpaired, &s).named(
        opts.quantity(),
        "",
        "",
    )
}

/// The engine's verdict that `cand` is worse than `base` on this goal.
fn worse_verdict(maximize: bool) -> Verdict {
    if maximize {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

/// Blocks `a` and `b` share (a value shares all its own).
fn shared(m: &dyn Measurer, a: usize, b: usize) -> usize {
    if a == b {
        m.count(a)
    } else {
        m.pairs(a, b).0.len()
    }
}

/// `x` relative to `anchor` within blocks: the Hodges-Lehmann estimate of
/// the per-block ratios x / anchor (median of the pairwise means of their
/// logarithms; of the differences over the anchor's median when a value is
/// not positive), 1 for the anchor itself; `None` when they share fewer
/// than `MIN_N` blocks. A median of the ratios alone picked a value 10 %
/// worse in 1 of 20 seeds at 5 % noise; the estimate uses every pair.
fn relative(m: &dyn Measurer, anchor: usize, x: usize) -> Option<f64> {
    if x == anchor {
        return Some(1.0);
    }
    let (a, b) = m.pairs(anchor, x);
    if a.len() < MIN_N {
        return None;
    }
    use crate::stats::hodges_lehmann_estimate as estimate;
    if a.iter().chain(&b).all(|&v| v > 0.0) {
        let d: Vec<f64> = a.iter().zip(&b).map(|(p, q)| (q / p).ln()).collect();
        estimate(&d).map(f64::exp)
    } else {
        let d: Vec<f64> = a.iter().zip(&b).map(|(p, q)| q - p).collect();
        let scale = median(&a).abs().max(f64::MIN_POSITIVE);
        estimate(&d).map(|d| 1.0 + d / scale)
    }
}

/// How `x` compares with `lead` for ordering (successive halving):
/// within blocks when they share enough, else by medians.
fn score(m: &dyn Measurer, lead: usize, x: usize) -> f64 {
    relative(m, lead, x).unwrap_or_else(|| median(&m.values(x)) / median(&m.values(lead)))
}

/// The value with the best median among `points` (measured ones first).
fn by_median(m: &dyn Measurer, opts: &SearchOptions, points: &[usize]) -> Option<usize> {
    let measured: Vec<usize> = points
        .iter()
        .copied()
        .filter(|&i| !m.values(i).is_empty())
        .collect();
    let points = if measured.is_empty() {
        points
    } else {
        &measured
    };
    points.iter().copied().reduce(|b, i| {
        if crate::analysis::sweep::better(opts.maximize, median(&m.values(i)), median(&m.values(b)))
        {
            i
        } else {
            b
        }
    })
}

/// The leader among `points`: the best relative to an anchor within
/// blocks (`relative`) among the values sharing at least `least` blocks
/// with it, the anchor included. The anchor is the previous leader while it
/// is among `points` and measured (the race measures it in every round),
/// else the best median. Choosing by medians across rounds would crown
/// whichever value happened to be measured in the quietest round.
fn leader(
    m: &dyn Measurer,
    opts: &SearchOptions,
    points: &[usize],
    anchor: Option<usize>,
    least: usize,
) -> Option<usize> {
    let base = anchor
        .filter(|a| points.contains(a) && !m.values(*a).is_empty())
        .or_else(|| by_median(m, opts, points))?;
    points
        .iter()
        .copied()
        .filter(|&i| i == base || shared(m, base, i) >= least)
        .filter_map(|i| relative(m, base, i).map(|r| (i, r)))
        .reduce(|b, x| {
            if crate::analysis::sweep::better(opts.maximize, x.1, b.1) {
                x
            } else {
                b
            }
        })
        .map(|(i, _)| i)
}

/// Runs a start round takes: `r0` for every value with fewer, the leader
/// beside them.
pub(super) fn fresh_cost(m: &dyn Measurer, points: &[usize], r0: usize) -> usize {
    let fresh = points.iter().filter(|&&i| m.count(i) < r0).count();
    if fresh == 0 || fresh == points.len() {
        fresh * r0
    } else {
        (fresh + 1) * r0
    }
}

/// `points` and the leader, once each: what a round measures.
fn with_leader(points: &[usize], lead: Option<usize>) -> Vec<usize> {
    let mut v = points.to_vec();
    if let Some(l) = lead.filter(|l| !points.contains(l)) {
        v.push(l);
    }
    v
}

fn measure(
    m: &mut dyn Measurer,
    st: &mut RaceState,
    points: &[usize],
    blocks: usize,
    action: &'static str,
    reason: String,
) -> Result<()> {
    st.runs = st.runs.saturating_add(points.len().saturating_mul(blocks));
    st.step += 1;
    st.decisions.push(Decision {
        step: st.step,
        action,
        points: points.to_vec(),
        values: Vec::new(),
        runs_each: Some(blocks),
        leader: None,
        leader_value: None,
        comparison: None,
        reason,
    });
    m.measure(points, blocks)
}

/// The zoom's next values: (values entered so far, ascending; values in
/// the race; the leader; the grid's size; only the leader's gaps) to the
/// values that join (see `zoom::zoom_points`).
pub(super) type Zoom = fn(&[usize], &[usize], usize, usize, bool) -> Vec<usize>;

/// Where a race runs: `race`'s line of one parameter, or the whole grid
/// around the best for `coordinate`'s polish.
pub(super) struct Field<'a> {
    /// The values the race starts with, brought to `initial_runs` together.
    pub(super) start: Vec<usize>,
    pub(super) start_reason: String,
    /// The grid neighbours of a value, in the order they join (when not
    /// zooming).
    pub(super) neighbours: &'a dyn Fn(usize) -> Vec<usize>,
    /// One ordered parameter: values join by the zoom (`zoom::zoom_points`:
    /// finer grids in the gaps around the leader, then in the bracket), not
    /// neighbours.
    pub(super) zoom: Option<Zoom>,
    /// With the zoom: whether untried values left in the bracket join when
    /// the leader's gaps are closed.
    pub(super) fill: bool,
    /// Whether a neighbour measured before this race (on a line of
    /// `coordinate`) may join it with its runs; a line only adds values
    /// never measured.
    pub(super) rejoin: bool,
    /// New values join only while the budget can still bring every live
    /// value to the full run count (`growth`, an estimate; else the live
    /// values grow without them), so the race does not leave the values
    /// it adds with a few runs in the set; a line ends when its next
    /// values do not fit.
    pub(super) keep_room: bool,
    /// Values of the grid (bounds the loop).
    pub(super) size: usize,
}

/// Runs that bringing `values` (each with at least `r0`) to `full` may
/// take, the leader measured beside them, for `Field::keep_room`.
pub(super) fn growth(m: &dyn Measurer, values: &[usize], full: usize, r0: usize) -> usize {
    let short = values.iter().filter(|&&i| m.count(i) < full).count();
    if short == 0 {
        0
    } else {
        (short + 1).saturating_mul(full - r0)
    }
}

/// The race itself (see the module comment) over `field`.
pub(super) fn run_race(
    m: &mut dyn Measurer,
    field: &Field,
    opts: &SearchOptions,
    st: &mut RaceState,
) -> Result<()> {
    let full = opts.runs.max(3);
    let r0 = opts.initial_runs.clamp(3, full);
    st.alive = field.start.clone();
    let mut entered = field.start.clone();
    let fresh: Vec<usize> = field
        .start
        .iter()
        .copied()
        .filter(|&i| m.count(i) < r0)
        .collect();
    if !fresh.is_empty() {
        // Values measured before (a later stage's start) send their
        // leader along, so the fresh ones share blocks with it at once.
        let known: Vec<usize> = field
            .start
            .iter()
            .copied()
            .filter(|&i| m.count(i) >= r0)
            .collect();
        let anchor = st
            .leader
            .filter(|l| known.contains(l))
            .or_else(|| by_median(m, opts, &known).filter(|_| !known.is_empty()));
        let least = fresh.iter().map(|&i| m.count(i)).min().unwrap_or(0);
        measure(
            m,
            st,
            &with_leader(&fresh, anchor),
            r0 - least,
            "measure",
            field.start_reason.clone(),
        )?;
    }
    // Each pass adds runs or values, and both are bounded (n values, the
    // budget), so the loop ends; the cap only guards against a mistake.
    let cap = field.size.saturating_add(full).saturating_mul(4);
    for _ in 0..cap {
        // Values with runs but no measurement (every run timed out or
        // failed under --ignore-failure) leave the race: nothing says they
        // are as good.
        let empty: Vec<usize> = st
            .alive
            .iter()
            .copied()
            .filter(|&i| m.count(i) > 0 && m.values(i).is_empty())
            .collect();
        if !empty.is_empty() && empty.len() < st.alive.len() {
            st.step += 1;
            st.alive.retain(|i| !empty.contains(i));
            st.decisions.push(Decision {
                step: st.step,
                action: "drop",
                points: empty,
                values: Vec::new(),
                runs_each: None,
                leader: None,
                leader_value: None,
                comparison: None,
                reason: "no run measured (all timed out or failed)".into(),
            });
        }
        let Some(lead) = leader(m, opts, &st.alive, st.leader, MIN_N) else {
            break;
        };
        st.leader = Some(lead);
        // Drop what the engine finds significantly worse than the leader,
        // within the blocks they share.
        let family = st.alive.len().saturating_sub(1);
        let mut dropped = Vec::new();
        for &x in st.alive.iter().filter(|&&x| x != lead) {
            let c = compare_drop(m, opts, lead, x, family);
            if c.verdict == worse_verdict(opts.maximize) {
                dropped.push((x, c));
            }
        }
        if !dropped.is_empty() {
            st.step += 1;
            for (x, c) in dropped {
                st.alive.retain(|&a| a != x);
                st.decisions.push(Decision {
                    step: st.step,
                    action: "drop",
                    points: vec![x],
                    values: Vec::new(),
                    runs_each: None,
                    leader: Some(lead),
                    leader_value: None,
                    reason: format!(
                        "{:.2}x the leader, significant ({})",
                        c.ratio,
                        crate::units::format_p(c.p_value)
                    ),
                    comparison: Some(c),
                });
            }
        }
        // Refine: the zoom's finer values around the leader, or the
        // leader's unmeasured grid neighbours, join the race.
        let new: Vec<usize> = if let Some(zoom) = field.zoom {
            entered.sort_unstable();
            entered.dedup();
            zoom(&entered, &st.alive, lead, field.size, true)
        } else {
            (field.neighbours)(lead)
                .into_iter()
                .filter(|&i| {
                    if field.rejoin {
                        !entered.contains(&i)
                    } else {
                        m.count(i) == 0
                    }
                })
                .collect()
        };
        let mut crowded = false;
        if !new.is_empty() {
            let room = if field.keep_room {
                let mut after = st.alive.clone();
                after.extend(&new);
                growth(m, &after, full, r0)
            } else {
                0
            };
            let cost = (new.len() + 1) * r0;
            if st.runs.saturating_add(cost).saturating_add(room) > opts.budget {
                if !field.keep_room {
                    st.budget_exhausted = true;
                    return Ok(());
                }
                crowded = true;
            }
        }
        if !new.is_empty() && !crowded {
            st.alive.extend(&new);
            st.alive.sort_unstable();
            entered.extend(&new);
            let reason = if field.zoom.is_some() {
                "zoom: finer values between the leader and its tried neighbours"
            } else if field.rejoin {
                "grid neighbours of the leader (measured ones keep their runs)"
            } else {
                "unmeasured grid neighbours of the leader"
            };
            measure(
                m,
                st,
                &with_leader(&new, Some(lead)),
                r0,
                "add",
                reason.into(),
            )?;
            continue;
        }
        // Grow: the live values get more runs, the fewest first, the
        // leader beside them (it runs in every round). Counting runs, not
        // blocks shared with the leader: on a flat bottom the leader
        // changes often, and topping up every value's blocks with each new
        // leader spent the budget on rounds of two values.
        let rivals: Vec<usize> = st.alive.iter().copied().filter(|&i| i != lead).collect();
        let lo = rivals.iter().map(|&i| m.count(i)).min().unwrap_or(full);
        if lo >= full {
            // Zoom: untried values left in the bracket (between the tried
            // values just outside the live ones) could still hold a better
            // value if the cost is unimodal; they join, the widest gap
            // first, until none is left (settled) or the budget ends.
            if let (Some(zoom), false, true) = (field.zoom, crowded, field.fill) {
                let gap = zoom(&entered, &st.alive, lead, field.size, false);
                if !gap.is_empty() {
                    if st.runs.saturating_add((gap.len() + 1) * r0) > opts.budget {
                        st.budget_exhausted = true;
                        return Ok(());
                    }
                    st.alive.extend(&gap);
                    st.alive.sort_unstable();
                    entered.extend(&gap);
                    let reason = "zoom: untried values left in the bracket".to_string();
                    measure(m, st, &with_leader(&gap, Some(lead)), r0, "add", reason)?;
                    continue;
                }
            }
            // Crowded: the leader's neighbours did not fit the budget.
            if crowded {
                st.budget_exhausted = true;
            } else {
                st.settled = true;
            }
            return Ok(());
        }
        let mut target = lo.saturating_mul(2).clamp(lo + 1, full);
        let mut grow: Vec<usize> = rivals
            .iter()
            .copied()
            .filter(|&i| m.count(i) < target)
            .collect();
        let cost = |m: &dyn Measurer, grow: &[usize], target: usize| {
            let least = grow.iter().map(|&i| m.count(i)).min().unwrap_or(target);
            (grow.len() + 1).saturating_mul(target.saturating_sub(least))
        };
        let mut reason =
            "more runs for the values still in the race, beside the leader".to_string();
        // Successive halving: keep the better half (against the leader)
        // while the round does not fit the budget; then fewer runs.
        while grow.len() > 2 && st.runs.saturating_add(cost(m, &grow, target)) > opts.budget {
            grow.sort_by(|&a, &b| {
                let (sa, sb) = (score(m, lead, a), score(m, lead, b));
                if opts.maximize {
                    sb.total_cmp(&sa)
                } else {
                    sa.total_cmp(&sb)
                }
            });
            grow.truncate(grow.len().div_ceil(2));
            grow.sort_unstable();
            reason = "the better half of the values in the race, beside the leader (budget)".into();
        }
        // Fewer runs per value if the round still does not fit, but at
        // least one more for the least measured value of the round.
        let lo_grow = grow.iter().map(|&i| m.count(i)).min().unwrap_or(full);
        while target > lo_grow + 1 && st.runs.saturating_add(cost(m, &grow, target)) > opts.budget {
            target -= 1;
        }
        let blocks = target.saturating_sub(lo_grow);
        let c = cost(m, &grow, target);
        if blocks == 0 || st.runs.saturating_add(c) > opts.budget {
            st.budget_exhausted = true;
            return Ok(());
        }
        measure(
            m,
            st,
            &with_leader(&grow, Some(lead)),
            blocks,
            "measure",
            reason,
        )?;
    }
    Ok(())
}

/// The final answer from the race's state: best among the live values with
/// the most runs, the set by the engine at Bonferroni over all tried values.
pub fn answer(m: &dyn Measurer, n: usize, opts: &SearchOptions, st: &RaceState) -> Option<Answer> {
    let tried: Vec<usize> = (0..n).filter(|&i| m.count(i) > 0).collect();
    let pool: Vec<usize> = if st.alive.is_empty() {
        tried.clone()
    } else {
        st.alive.clone()
    };
    // The best: the leader within blocks among the values sharing the
    // most blocks (up to the run count) with the race's last leader, so a
    // value with a few lucky runs does not win; but when that leader has
    // fewer than the run count, with the value with the most runs: a value
    // that took the lead on its first 3 runs in the last rounds otherwise
    // won against values with ten times as many (on 64 values with the
    // optimum in the last tenth, 6 % off the optimum in 3 of 100 seeds).
    let most_runs = pool.iter().map(|&i| m.values(i).len()).max().unwrap_or(0);
    let enough = most_runs.min(opts.runs.max(MIN_N)).max(1);
    let anchor = st
        .leader
        .filter(|l| pool.contains(l) && m.values(*l).len() >= enough)
        .or_else(|| {
            let well: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|&i| m.values(i).len() == most_runs)
                .collect();
            by_median(m, opts, &well)
        })
        .or_else(|| by_median(m, opts, &pool))?;
    let most = pool
        .iter()
        .filter(|&&i| i != anchor)
        .map(|&i| shared(m, anchor, i))
        .max()
        .unwrap_or(0);
    let least = most.min(opts.runs.max(MIN_N)).max(MIN_N);
    let best = leader(m, opts, &pool, Some(anchor), least)?;
    let family = tried.len().saturating_sub(1);
    let mut rows = Vec::new();
    let mut as_good = Vec::new();
    for &i in &tried {
        if i == best {
            rows.push((i, Status::Best, None));
            as_good.push(i);
            continue;
        }
        // The latest drop: a value dropped on a line may race again in the
        // polish.
        let drop = st
            .decisions
            .iter()
            .rfind(|d| d.action == "drop" && d.points.contains(&i));
        if let Some(d) = drop.filter(|_| !st.alive.contains(&i)) {
            rows.push((i, Status::Worse, d.comparison.clone()));
            continue;
        }
        if m.values(i).is_empty() && !m.values(best).is_empty() {
            rows.push((i, Status::Worse, None));
            continue;
        }
        let c = compare_set(m, opts, best, i, family);
        if c.verdict == worse_verdict(opts.maximize) {
            rows.push((i, Status::Worse, Some(c)));
        } else {
            rows.push((i, Status::AsGood, Some(c)));
            as_good.push(i);
        }
    }
    Some(Answer {
        best,
        as_good,
        rows,
    })
}
