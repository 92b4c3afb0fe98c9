//! `changes --since` and `changes --run`: the change points at or after a
//! session or a moment, and what one session (or a suite run's sessions)
//! did in each history it is part of. Both only select from the analysis
//! of whole histories, so a change point is the same with them as without.

use crate::store::history::{Point, SessionRef};

use super::{Analysed, Change, Drift, Episode, MachineShift};

/// Where `--since` starts: the sessions started at or after `unix`, and
/// for a session given by id, those after it in the store's order (start
/// time, then id), itself included.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Since {
    pub unix: f64,
    /// `i64::MIN` for a moment: every session started then counts.
    pub id: i64,
}

impl Since {
    /// From a moment (seconds since the epoch).
    pub fn moment(unix: f64) -> Since {
        Since { unix, id: i64::MIN }
    }

    /// From a session: it and every session after it.
    pub fn session(s: &SessionRef) -> Since {
        Since {
            unix: s.started_unix,
            id: s.id,
        }
    }

    pub fn admits(&self, s: &SessionRef) -> bool {
        s.started_unix
            .total_cmp(&self.unix)
            .then(s.id.cmp(&self.id))
            .is_ge()
    }

    /// A point is at or after the start when one of its sessions is (with
    /// `--order-by` a point pools several).
    pub fn admits_point(&self, p: &Point) -> bool {
        p.sessions.iter().any(|s| self.admits(s))
    }
}

/// The analyses and machine-wide shifts with only the change points at or
/// after `since`: changes whose first point after is, episodes that start
/// or end (their point after) there, shifts at such a point. Histories
/// without a point at or after `since` are left out; the newest point's
/// comparison of the others is kept (their newest point is at or after it).
/// The shifts must be those of the whole analysis: counting benchmarks over
/// the selection would change them.
pub fn since(
    all: Vec<Analysed>,
    shifts: Vec<MachineShift>,
    since: &Since,
) -> (Vec<Analysed>, Vec<MachineShift>) {
    let all = all
        .into_iter()
        .filter(|a| a.history.points.iter().any(|p| since.admits_point(p)))
        .map(|mut a| {
            let points = &a.history.points;
            let at = |i: usize| points.get(i).is_some_and(|p| since.admits_point(p));
            a.changes.retain(|c| at(c.index));
            a.episodes.retain(|e| at(e.start) || at(e.end + 1));
            a.drifts.retain(|d| at(d.start) || at(d.end + 1));
            a
        })
        .collect();
    let shifts = shifts
        .into_iter()
        .filter(|s| since.admits_point(&s.point))
        .collect();
    (all, shifts)
}

/// The level a point is at, from the changes around it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Regime<'a> {
    /// Before any change in force: the history's first level.
    First,
    /// At the level this change (the last one at or before the point) set.
    Since(&'a Change),
    /// Inside an episode: a stretch at another level that came back.
    Episode(&'a Episode),
    /// Inside a drift's slide.
    Drift(&'a Drift),
    /// The newest point, significantly different from the stable points
    /// before it (a change point needs points after it; this has none yet).
    Newest(&'a Change),
}

impl Regime<'_> {
    /// Whether the point is at another level than the history's first:
    /// after a change in force, inside an episode, or a newest point that
    /// differs from the points before it.
    pub fn changed(&self) -> bool {
        !matches!(self, Regime::First)
    }
}

/// What a session did in one history: the change points at its point and
/// the level its point is at.
#[derive(Clone, Debug)]
pub struct AtPoint<'a> {
    pub analysed: &'a Analysed,
    /// The point holding the session.
    pub index: usize,
    /// Changes in force whose first point after is this one.
    pub changes: Vec<&'a Change>,
    /// Episodes this point starts.
    pub entered: Vec<&'a Episode>,
    /// Episodes this point ends (the first point back at the level).
    pub left: Vec<&'a Episode>,
    /// Drifts whose slide starts at this point.
    pub drifts: Vec<&'a Drift>,
    pub regime: Regime<'a>,
}

impl AtPoint<'_> {
    /// Whether a change point (or the newest point's significant
    /// comparison) falls at this point.
    pub fn introduced(&self) -> bool {
        !self.changes.is_empty()
            || !self.drifts.is_empty()
            || !self.entered.is_empty()
            || !self.left.is_empty()
            || matches!(self.regime, Regime::Newest(_))
    }
}

/// For every history with a point holding one of `sessions` (ids): that
/// point's change points and level, in the analyses' order (machine, then
/// benchmark), a history's points oldest first.
pub fn at_sessions<'a>(all: &'a [Analysed], sessions: &[i64]) -> Vec<AtPoint<'a>> {
    let mut out = Vec::new();
    for a in all {
        for (i, p) in a.history.points.iter().enumerate() {
            if p.sessions.iter().any(|s| sessions.contains(&s.id)) {
                out.push(at_point(a, i));
            }
        }
    }
    out
}

fn at_point(a: &Analysed, i: usize) -> AtPoint<'_> {
    let newest = a.newest.as_ref().filter(|c| c.index == i);
    let episode = a.episodes.iter().find(|e| (e.start..=e.end).contains(&i));
    let sliding = a.drifts.iter().find(|d| (d.start..=d.end).contains(&i));
    // The last step at or before the point, or drift over before it,
    // whichever set the level later.
    let step = a.changes.iter().rfind(|c| c.index <= i);
    let drift = a.drifts.iter().rfind(|d| d.end < i);
    let since = match (step, drift) {
        (Some(c), Some(d)) if d.end >= c.index => Some(&d.change),
        (Some(c), _) => Some(c),
        (None, d) => d.map(|d| &d.change),
    };
    let regime = match (newest, episode, sliding, since) {
        (Some(c), ..) => Regime::Newest(c),
        (None, Some(e), ..) => Regime::Episode(e),
        (None, None, Some(d), _) => Regime::Drift(d),
        (None, None, None, Some(c)) => Regime::Since(c),
        (None, None, None, None) => Regime::First,
    };
    AtPoint {
        analysed: a,
        index: i,
        changes: a.changes.iter().filter(|c| c.index == i).collect(),
        entered: a.episodes.iter().filter(|e| e.start == i).collect(),
        left: a.episodes.iter().filter(|e| e.end + 1 == i).collect(),
        drifts: a.drifts.iter().filter(|d| d.start == i).collect(),
        regime,
    }
}

/// The machine-wide shifts at a point holding one of `sessions`.
pub fn shifts_at<'a>(shifts: &'a [MachineShift], sessions: &[i64]) -> Vec<&'a MachineShift> {
    shifts
        .iter()
        .filter(|s| s.point.sessions.iter().any(|r| sessions.contains(&r.id)))
        .collect()
}

/// What `changes --run` asks about: one session, or the sessions of a
/// suite run (its partitions, each a session).
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Session(SessionRef),
    SuiteRun {
        id: String,
        sessions: Vec<SessionRef>,
    },
}

impl Target {
    pub fn ids(&self) -> Vec<i64> {
        match self {
            Target::Session(s) => vec![s.id],
            Target::SuiteRun { sessions, .. } => sessions.iter().map(|s| s.id).collect(),
        }
    }
}
