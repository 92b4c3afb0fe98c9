//! Scoring detections of the simulated histories against their truth:
//! the model suite on points ([`score`], [`table`]: precision, recall and
//! F1 within ±1, episodes named) and the rough suite on events
//! ([`score_events`], [`event_table`]: hits per shape, false alarms per
//! 1,000 steady sessions).

use std::fmt::Write as _;

use super::simulated::{Detected, Kind, Noise, Series};

/// Scores of one kind (or of all).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    pub series: usize,
    /// True change points (an episode is two: its start and the point after
    /// its end) and detected ones (likewise), and those matched within ±1.
    pub truth: usize,
    pub detected: usize,
    pub matched: usize,
    /// Series without a true change where something was reported.
    pub false_alarm_series: usize,
    /// True episodes, and those reported as an episode within ±1 at both ends.
    pub episodes: usize,
    pub episodes_named: usize,
}

impl Score {
    pub fn precision(&self) -> f64 {
        if self.detected == 0 {
            1.0
        } else {
            self.matched as f64 / self.detected as f64
        }
    }

    pub fn recall(&self) -> f64 {
        if self.truth == 0 {
            1.0
        } else {
            self.matched as f64 / self.truth as f64
        }
    }

    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    fn add(&mut self, o: &Score) {
        self.series += o.series;
        self.truth += o.truth;
        self.detected += o.detected;
        self.matched += o.matched;
        self.false_alarm_series += o.false_alarm_series;
        self.episodes += o.episodes;
        self.episodes_named += o.episodes_named;
    }
}

fn points(changes: &[usize], episodes: &[(usize, usize)]) -> Vec<usize> {
    let mut p: Vec<usize> = changes.to_vec();
    for &(s, e) in episodes {
        p.extend([s, e + 1]);
    }
    p.sort_unstable();
    p
}

/// One history's score: each true point matched by at most one detected
/// point within ±1, nearest first.
pub fn score_one(s: &Series, d: &Detected) -> Score {
    let truth = points(&s.changes, &s.episodes);
    let found = points(&d.changes, &d.episodes);
    let mut used = vec![false; found.len()];
    let mut matched = 0;
    for &t in &truth {
        let best = (0..found.len())
            .filter(|&j| !used[j] && found[j].abs_diff(t) <= 1)
            .min_by_key(|&j| found[j].abs_diff(t));
        if let Some(j) = best {
            used[j] = true;
            matched += 1;
        }
    }
    let named = s
        .episodes
        .iter()
        .filter(|&&(a, b)| {
            d.episodes
                .iter()
                .any(|&(x, y)| x.abs_diff(a) <= 1 && y.abs_diff(b) <= 1)
        })
        .count();
    Score {
        series: 1,
        truth: truth.len(),
        detected: found.len(),
        matched,
        false_alarm_series: usize::from(truth.is_empty() && !found.is_empty()),
        episodes: s.episodes.len(),
        episodes_named: named,
    }
}

/// Scores per kind (in `Kind::ALL` order) and overall.
pub fn score(all: &[Series], detected: &[Detected]) -> (Vec<(Kind, Score)>, Score) {
    let mut rows: Vec<(Kind, Score)> = Vec::new();
    let mut total = Score::default();
    for kind in Kind::ALL {
        let mut s = Score::default();
        for (x, d) in all.iter().zip(detected).filter(|(x, _)| x.kind == kind) {
            s.add(&score_one(x, d));
        }
        if s.series > 0 {
            total.add(&s);
            rows.push((kind, s));
        }
    }
    (rows, total)
}

/// The score table as text, one row per kind and the total.
pub fn table(title: &str, rows: &[(Kind, Score)], total: &Score) -> String {
    let mut out = format!(
        "{title}\n{:<17} {:>6} {:>5} {:>8} {:>7} {:>9} {:>6} {:>6} {:>11} {:>8}\n",
        "kind",
        "series",
        "true",
        "reported",
        "matched",
        "precision",
        "recall",
        "F1",
        "false-alarm",
        "episodes"
    );
    let line = |out: &mut String, name: &str, s: &Score| {
        let episodes = if s.episodes == 0 {
            "–".to_string()
        } else {
            format!("{}/{}", s.episodes_named, s.episodes)
        };
        let _ = writeln!(
            out,
            "{name:<17} {:>6} {:>5} {:>8} {:>7} {:>9.3} {:>6.3} {:>6.3} {:>11} {:>8}",
            s.series,
            s.truth,
            s.detected,
            s.matched,
            s.precision(),
            s.recall(),
            s.f1(),
            s.false_alarm_series,
            episodes
        );
    };
    for (k, s) in rows {
        line(&mut out, k.name(), s);
    }
    line(&mut out, "all", total);
    out
}

/// Drift sizes within this much of the truth (on the log scale, as a
/// share of the true size) count, at least 1 percentage point.
pub const DRIFT_SIZE_TOLERANCE: f64 = 0.3;

/// Event scores of one (noise, kind) row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EventScore {
    pub series: usize,
    pub sessions: usize,
    /// True events (steps, episodes, drifts) and those found as what they
    /// are: a step within ±1; an episode with both ends within ±1 (a
    /// detector that reports only points: one within ±1 of each edge); a
    /// drift with start and end within ±3 and its size within
    /// `DRIFT_SIZE_TOLERANCE` (points only: one inside the slide).
    pub truth: usize,
    pub hits: usize,
    /// Reported events that are no true event and not near one (a step
    /// within ±3 of a true change or edge, or anything within a true
    /// slide ±3, is near).
    pub false_alarms: usize,
    /// Series with a true event and with nothing reported.
    pub silent: usize,
    /// Slides told as one drift: exactly one drift reported within the
    /// slide ±3 and no step or episode there, wherever its ends are.
    pub one_drift: usize,
    /// Slides told as one drift (as `one_drift`) whose start and end are
    /// each within 3 points of the truth and whose size is within
    /// `DRIFT_SIZE_TOLERANCE`: the promise about slides, per history.
    pub one_drift_located: usize,
    /// Drifts reported in a history whose truth has no slide (a step told
    /// as a slide).
    pub stray_drifts: usize,
    /// Slides with an edge of a reported event inside them (a step, a
    /// drift's start or end, an episode's first point or the point after
    /// it, within the slide's first … last point): the rule a detector of
    /// points only is scored by (Apache Otava's: a point inside), applied
    /// to every detector.
    pub edge_inside: usize,
}

impl EventScore {
    fn add(&mut self, o: &EventScore) {
        self.series += o.series;
        self.sessions += o.sessions;
        self.truth += o.truth;
        self.hits += o.hits;
        self.false_alarms += o.false_alarms;
        self.silent += o.silent;
        self.one_drift += o.one_drift;
        self.one_drift_located += o.one_drift_located;
        self.stray_drifts += o.stray_drifts;
        self.edge_inside += o.edge_inside;
    }

    /// False alarms per 1,000 sessions.
    pub fn per_thousand(&self) -> f64 {
        if self.sessions == 0 {
            0.0
        } else {
            1000.0 * self.false_alarms as f64 / self.sessions as f64
        }
    }
}

/// One history's event score; `points_only`: the detector reports
/// change points and nothing else (Apache Otava), scored as the issue
/// prescribes for it.
pub fn score_events_one(s: &Series, d: &Detected, points_only: bool) -> EventScore {
    let mut used_steps = vec![false; d.changes.len()];
    let mut used_eps = vec![false; d.episodes.len()];
    let mut used_drifts = vec![false; d.drifts.len()];
    let mut hits = 0;
    let take = |used: &mut Vec<bool>, at: &[usize], want: usize, tol: usize| -> bool {
        let best = (0..at.len())
            .filter(|&j| !used[j] && at[j].abs_diff(want) <= tol)
            .min_by_key(|&j| at[j].abs_diff(want));
        if let Some(j) = best {
            used[j] = true;
        }
        best.is_some()
    };
    for &t in &s.changes {
        hits += usize::from(take(&mut used_steps, &d.changes, t, 1));
    }
    for &(a, b) in &s.episodes {
        if points_only {
            let mut trial = used_steps.clone();
            if take(&mut trial, &d.changes, a, 1) && take(&mut trial, &d.changes, b + 1, 1) {
                used_steps = trial;
                hits += 1;
            }
        } else if let Some(j) = (0..d.episodes.len()).find(|&j| {
            !used_eps[j] && d.episodes[j].0.abs_diff(a) <= 1 && d.episodes[j].1.abs_diff(b) <= 1
        }) {
            used_eps[j] = true;
            hits += 1;
        }
    }
    let drift_matches = |(x, y, g): (usize, usize, f64), (a, b, f): (usize, usize, f64)| {
        let tol = (DRIFT_SIZE_TOLERANCE * f.ln().abs()).max(0.01);
        x.abs_diff(a) <= 3 && y.abs_diff(b) <= 3 && (g.ln() - f.ln()).abs() <= tol
    };
    for &(a, b, f) in &s.drifts {
        if points_only {
            if let Some(j) =
                (0..d.changes.len()).find(|&j| !used_steps[j] && (a..=b).contains(&d.changes[j]))
            {
                used_steps[j] = true;
                hits += 1;
            }
        } else if let Some(j) =
            (0..d.drifts.len()).find(|&j| !used_drifts[j] && drift_matches(d.drifts[j], (a, b, f)))
        {
            used_drifts[j] = true;
            hits += 1;
        }
    }
    // Near a true event: within ±3 of a change or an episode's edge, or
    // within a slide ±3.
    let near = |x: usize| {
        s.changes.iter().any(|&t| t.abs_diff(x) <= 3)
            || s.episodes
                .iter()
                .any(|&(a, b)| a.abs_diff(x) <= 3 || (b + 1).abs_diff(x) <= 3)
            || s.drifts.iter().any(|&(a, b, _)| x + 3 >= a && x <= b + 3)
    };
    let mut false_alarms = 0;
    for (j, &c) in d.changes.iter().enumerate() {
        false_alarms += usize::from(!used_steps[j] && !near(c));
    }
    for (j, &(a, b)) in d.episodes.iter().enumerate() {
        false_alarms += usize::from(!used_eps[j] && !near(a) && !near(b + 1));
    }
    for (j, &(a, b, _)) in d.drifts.iter().enumerate() {
        false_alarms += usize::from(!used_drifts[j] && !near(a) && !near(b));
    }
    let truth = s.changes.len() + s.episodes.len() + s.drifts.len();
    let reported = d.changes.len() + d.episodes.len() + d.drifts.len();
    let within = |x: usize, (a, b): (usize, usize)| x + 3 >= a && x <= b + 3;
    // The one drift a slide is told as, when it is told as one.
    let told: Vec<Option<(usize, usize, f64)>> = s
        .drifts
        .iter()
        .map(|&(a, b, _)| {
            let near: Vec<_> = d
                .drifts
                .iter()
                .filter(|&&(x, y, _)| within(x, (a, b)) || within(y, (a, b)))
                .collect();
            let alone = near.len() == 1
                && !d.changes.iter().any(|&c| within(c, (a, b)))
                && !d
                    .episodes
                    .iter()
                    .any(|&(x, y)| within(x, (a, b)) || within(y + 1, (a, b)));
            alone.then(|| *near[0])
        })
        .collect();
    let one_drift = told.iter().flatten().count();
    let one_drift_located = s
        .drifts
        .iter()
        .zip(&told)
        .filter(|(&truth, t)| t.is_some_and(|t| drift_matches(t, truth)))
        .count();
    let edge_inside = s
        .drifts
        .iter()
        .filter(|&&(a, b, _)| {
            let inside = |x: usize| (a..=b).contains(&x);
            d.changes.iter().any(|&c| inside(c))
                || d.drifts.iter().any(|&(x, y, _)| inside(x) || inside(y))
                || d.episodes.iter().any(|&(x, y)| inside(x) || inside(y + 1))
        })
        .count();
    EventScore {
        edge_inside,
        series: 1,
        sessions: s.sessions.len(),
        truth,
        hits,
        false_alarms,
        silent: usize::from(truth > 0 && reported == 0),
        one_drift,
        one_drift_located,
        stray_drifts: if s.drifts.is_empty() {
            d.drifts.len()
        } else {
            0
        },
    }
}

/// Event scores per (noise, kind), in suite order, and overall.
pub fn score_events(
    all: &[Series],
    detected: &[Detected],
    points_only: bool,
) -> (Vec<(Noise, Kind, EventScore)>, EventScore) {
    let mut rows: Vec<(Noise, Kind, EventScore)> = Vec::new();
    let mut total = EventScore::default();
    for (s, d) in all.iter().zip(detected) {
        let one = score_events_one(s, d, points_only);
        total.add(&one);
        match rows.iter_mut().find(|r| r.0 == s.noise && r.1 == s.kind) {
            Some(r) => r.2.add(&one),
            None => rows.push((s.noise, s.kind, one)),
        }
    }
    (rows, total)
}

/// Detectors' event scores side by side, one row per (noise, kind): hits
/// of true events, then false alarms (per 1,000 sessions on steady
/// histories), each detector's in the order of `names`.
pub fn event_table(names: &[&str], rows: &[&[(Noise, Kind, EventScore)]]) -> String {
    let mut out = format!("{:<20} {:<16} {:>6}", "noise", "kind", "series");
    for n in names {
        let _ = write!(out, " {:>16}", format!("{n} hits"));
    }
    for n in names {
        let _ = write!(out, " {:>18}", format!("{n} false"));
    }
    out.push('\n');
    let Some(first) = rows.first() else {
        return out;
    };
    for (i, (noise, kind, s)) in first.iter().enumerate() {
        let _ = write!(
            out,
            "{:<20} {:<16} {:>6}",
            noise.name(),
            kind.name(),
            s.series
        );
        for r in rows {
            let e = &r[i].2;
            let hits = if e.truth == 0 {
                "–".to_string()
            } else {
                format!("{}/{}", e.hits, e.truth)
            };
            let _ = write!(out, " {hits:>16}");
        }
        for r in rows {
            let e = &r[i].2;
            let fa = if *kind == Kind::Steady {
                format!("{} ({:.1}‰)", e.false_alarms, e.per_thousand())
            } else {
                e.false_alarms.to_string()
            };
            let _ = write!(out, " {fa:>18}");
        }
        out.push('\n');
    }
    out
}
