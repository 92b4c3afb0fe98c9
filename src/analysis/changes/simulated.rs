//! Seeded synthetic histories with known change points and episodes, and
//! their scoring (precision, recall, location within ±1 point, episodes
//! named as episodes), for `changes`' unit tests and for
//! `examples/changes_series.rs`, which writes the same series into a store
//! so that `scripts/changes-vs-otava` can score cmdscope and Apache Otava
//! on them side by side.

use std::fmt::Write as _;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs per simulated session.
pub const RUNS: usize = 10;

/// Sessions per simulated history.
pub const SESSIONS: usize = 100;

/// Benchmarks of the simulated machine whose level shifts at once.
pub const MACHINE_BENCHMARKS: usize = 12;

/// The kinds of history, in the order the score table lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// No change.
    Steady,
    /// One step of 3–25 %, up or down.
    Step,
    /// Two steps in opposite directions that do not come back.
    TwoSteps,
    /// Two steps the same way.
    Staircase,
    /// A linear drift of 10–25 % over the history: no step.
    Drift,
    /// Two or three sessions 30–60 % slow: no step.
    Outliers,
    /// Every run from one of two modes 30 % apart: no step.
    Bimodal,
    /// 4–8 sessions 6–12 % off, then back.
    Episode,
    /// One of 12 benchmarks of a machine that all step at one session.
    MachineWide,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::Steady,
        Kind::Step,
        Kind::TwoSteps,
        Kind::Staircase,
        Kind::Drift,
        Kind::Outliers,
        Kind::Bimodal,
        Kind::Episode,
        Kind::MachineWide,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Steady => "steady",
            Kind::Step => "one step",
            Kind::TwoSteps => "two steps",
            Kind::Staircase => "staircase",
            Kind::Drift => "drift",
            Kind::Outliers => "outlier sessions",
            Kind::Bimodal => "bimodal",
            Kind::Episode => "episode",
            Kind::MachineWide => "machine-wide",
        }
    }

    /// Histories of this kind in [`suite`].
    fn count(self) -> usize {
        match self {
            Kind::Steady | Kind::Step => 40,
            Kind::MachineWide => MACHINE_BENCHMARKS,
            _ => 25,
        }
    }
}

/// One simulated history and its truth.
#[derive(Clone, Debug)]
pub struct Series {
    pub kind: Kind,
    pub name: String,
    /// Run values (seconds) per session.
    pub sessions: Vec<Vec<f64>>,
    /// Points where a change that stays starts.
    pub changes: Vec<usize>,
    /// Episodes: first and last point (inclusive).
    pub episodes: Vec<(usize, usize)>,
}

/// What a detector reported for one history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detected {
    pub changes: Vec<usize>,
    pub episodes: Vec<(usize, usize)>,
}

/// A standard normal draw (Box-Muller; 1 - u keeps the logarithm finite).
pub(super) fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Sessions whose true level is `level(i)`: each session off by
/// `session_sd` (log scale), each run by 3 %, one run in 20 a spike 20–50 %
/// slow; with `modes`, a run is 30 % slower with that probability.
fn draw(
    rng: &mut ChaCha8Rng,
    session_sd: f64,
    modes: f64,
    level: impl Fn(usize) -> f64,
) -> Vec<Vec<f64>> {
    (0..SESSIONS)
        .map(|i| {
            let session = level(i) * (session_sd * normal(rng)).exp();
            (0..RUNS)
                .map(|_| {
                    let spike = if rng.random::<f64>() < 0.05 {
                        1.2 + 0.3 * rng.random::<f64>()
                    } else {
                        1.0
                    };
                    let mode = if rng.random::<f64>() < modes {
                        1.3
                    } else {
                        1.0
                    };
                    session * (0.03 * normal(rng)).exp() * spike * mode
                })
                .collect()
        })
        .collect()
}

/// A level of `base` that steps by `f1` at `a` and again by `f2` at `b`.
fn two_steps(base: f64, (a, f1): (usize, f64), (b, f2): (usize, f64)) -> impl Fn(usize) -> f64 {
    move |i| {
        base * if i >= b {
            f1 * f2
        } else if i >= a {
            f1
        } else {
            1.0
        }
    }
}

/// A relative size in [lo, hi], up or down at random (down as its mirror:
/// 1 / (1 + x)).
fn size(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    let x = 1.0 + lo + (hi - lo) * rng.random::<f64>();
    if rng.random::<bool>() {
        x
    } else {
        1.0 / x
    }
}

/// One history of `kind` from `seed`.
pub fn series(kind: Kind, seed: u64) -> Series {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base = 0.01 * (1.0 + 9.0 * rng.random::<f64>());
    let mut changes = Vec::new();
    let mut episodes = Vec::new();
    let sessions = match kind {
        Kind::Steady => draw(&mut rng, 0.01, 0.0, |_| base),
        Kind::Step => {
            let at = rng.random_range(15..86);
            let f = size(&mut rng, 0.03, 0.25);
            changes.push(at);
            draw(
                &mut rng,
                0.01,
                0.0,
                |i| if i >= at { base * f } else { base },
            )
        }
        Kind::TwoSteps => {
            let (a, b) = (rng.random_range(20..45), rng.random_range(55..80));
            let f = 1.0 + 0.05 + 0.10 * rng.random::<f64>();
            let up = rng.random::<bool>();
            let (f1, f2) = if up {
                (f, 1.0 / (f * f))
            } else {
                (1.0 / f, f * f)
            };
            changes.extend([a, b]);
            draw(&mut rng, 0.01, 0.0, two_steps(base, (a, f1), (b, f2)))
        }
        Kind::Staircase => {
            // +10 % then +15 % (or their mirrors) over 1.8 % session noise.
            let (a, b) = (rng.random_range(28..42), rng.random_range(70..85));
            let up = rng.random::<bool>();
            let (f1, f2) = if up {
                (1.10, 1.15)
            } else {
                (1.0 / 1.10, 1.0 / 1.15)
            };
            changes.extend([a, b]);
            draw(&mut rng, 0.018, 0.0, two_steps(base, (a, f1), (b, f2)))
        }
        Kind::Drift => {
            let total = 0.10 + 0.15 * rng.random::<f64>();
            let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
            draw(&mut rng, 0.01, 0.0, |i| {
                base * (sign * total * i as f64 / SESSIONS as f64).exp()
            })
        }
        Kind::Outliers => {
            let k = rng.random_range(2..4);
            let at: Vec<(usize, f64)> = (0..k)
                .map(|_| {
                    (
                        rng.random_range(5..SESSIONS - 5),
                        1.3 + 0.3 * rng.random::<f64>(),
                    )
                })
                .collect();
            draw(&mut rng, 0.01, 0.0, |i| {
                base * at.iter().find(|o| o.0 == i).map_or(1.0, |o| o.1)
            })
        }
        Kind::Bimodal => draw(&mut rng, 0.01, 0.3, |_| base),
        Kind::Episode => {
            let start = rng.random_range(20..80);
            let len = rng.random_range(4..9);
            let f = size(&mut rng, 0.06, 0.12);
            episodes.push((start, start + len - 1));
            draw(&mut rng, 0.01, 0.0, |i| {
                if (start..start + len).contains(&i) {
                    base * f
                } else {
                    base
                }
            })
        }
        Kind::MachineWide => {
            // The shift's session and size come from the machine, not the
            // benchmark: the same for every benchmark of the group.
            let mut machine = ChaCha8Rng::seed_from_u64(seed / 1000);
            let at = machine.random_range(25..75);
            let f = 1.04 + 0.06 * machine.random::<f64>();
            changes.push(at);
            draw(
                &mut rng,
                0.01,
                0.0,
                |i| if i >= at { base * f } else { base },
            )
        }
    };
    Series {
        kind,
        name: format!("{} {seed}", kind.name()),
        sessions,
        changes,
        episodes,
    }
}

/// Every kind, `Kind::count` histories each, from seeds derived from
/// `seed` (machine-wide: one machine, 12 benchmarks).
pub fn suite(seed: u64) -> Vec<Series> {
    Kind::ALL
        .iter()
        .enumerate()
        .flat_map(|(k, &kind)| {
            (0..kind.count()).map(move |i| series(kind, seed * 1000 + (k * 100 + i) as u64))
        })
        .collect()
}

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
