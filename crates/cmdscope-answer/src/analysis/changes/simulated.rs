//! Seeded synthetic histories with known change points, drifts and
//! episodes, for `changes`' unit tests and for `examples/changes_series.rs`,
//! which writes the same series into a store so that
//! `scripts/changes-vs-otava` can score cmdscope and Apache Otava on them
//! side by side (`score` scores them, `oracle` fits their slides).
//!
//! Two suites. [`suite`] draws from the noise model cmdscope's method
//! assumes (log-normal runs and sessions, exact steps) and is scored on
//! points (precision, recall, location within ±1, episodes named).
//! [`rough_suite`] draws every shape from noise families that are not that
//! model ([`Noise`]: heavy tails, skew, two speeds, wander that carries
//! over between sessions, variance that changes without the level, one
//! run per session) and is scored on events: hits per shape (a step within
//! ±1, a drift's start and end within ±3 and its size, an episode's two
//! ends within ±1) and false alarms per 1,000 steady sessions.

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
    /// A linear drift of 10–25 % over the whole history: a drift still
    /// going on at the newest session.
    Drift,
    /// A slide of 3–10 % over 10–50 sessions inside the history, flat
    /// before and after it.
    Slide,
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
    pub const ALL: [Kind; 10] = [
        Kind::Steady,
        Kind::Step,
        Kind::TwoSteps,
        Kind::Staircase,
        Kind::Drift,
        Kind::Slide,
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
            Kind::Slide => "slide",
            Kind::Outliers => "outlier sessions",
            Kind::Bimodal => "bimodal",
            Kind::Episode => "episode",
            Kind::MachineWide => "machine-wide",
        }
    }

    /// Histories of this kind in [`suite`] (none of `Slide`, which is
    /// [`rough_suite`]'s).
    fn count(self) -> usize {
        match self {
            Kind::Steady | Kind::Step => 40,
            Kind::MachineWide => MACHINE_BENCHMARKS,
            Kind::Slide => 0,
            _ => 25,
        }
    }
}

/// One simulated history and its truth.
#[derive(Clone, Debug)]
pub struct Series {
    pub kind: Kind,
    /// The noise it was drawn with.
    pub noise: Noise,
    pub name: String,
    /// Run values (seconds) per session.
    pub sessions: Vec<Vec<f64>>,
    /// Points where a change that stays starts.
    pub changes: Vec<usize>,
    /// Episodes: first and last point (inclusive).
    pub episodes: Vec<(usize, usize)>,
    /// Drifts: first and last point of the slide (inclusive) and its total
    /// size (a ratio).
    pub drifts: Vec<(usize, usize, f64)>,
}

/// What a detector reported for one history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detected {
    pub changes: Vec<usize>,
    pub episodes: Vec<(usize, usize)>,
    /// First and last point of each slide, and its size (a ratio).
    pub drifts: Vec<(usize, usize, f64)>,
}

impl Detected {
    /// What cmdscope's own analysis (`changes::find` with the default
    /// parameters) reports for a history, as the scorers take it.
    pub fn by_cmdscope(sessions: &[Vec<f64>]) -> Detected {
        let f = super::find(sessions, &super::Params::default());
        Detected {
            changes: f.changes.iter().map(|c| c.index).collect(),
            episodes: f.episodes.iter().map(|e| (e.start, e.end)).collect(),
            drifts: f
                .drifts
                .iter()
                .map(|d| (d.start, d.end, d.ratio()))
                .collect(),
        }
    }
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
    let mut drifts = Vec::new();
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
            drifts.push((0, SESSIONS - 1, (sign * total).exp()));
            draw(&mut rng, 0.01, 0.0, |i| {
                base * (sign * total * i as f64 / SESSIONS as f64).exp()
            })
        }
        Kind::Slide => {
            let (start, end, f) = slide(&mut rng);
            drifts.push((start, end, f));
            draw(&mut rng, 0.01, 0.0, slide_level(base, start, end, f))
        }
        Kind::Outliers => {
            let at = outliers(&mut rng);
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
        noise: Noise::Model,
        name: format!("{} {seed}", kind.name()),
        sessions,
        changes,
        episodes,
        drifts,
    }
}

/// A slide of 3–10 % up or down over 10–50 sessions, with at least 10
/// flat sessions before and after it: (first, last, size).
pub(super) fn slide(rng: &mut ChaCha8Rng) -> (usize, usize, f64) {
    let len = rng.random_range(10..=50);
    let start = rng.random_range(10..=SESSIONS - 10 - len);
    (start, start + len - 1, size(rng, 0.03, 0.10))
}

/// A level of `base` that slides linearly from `start` to `end`
/// (inclusive) by the factor `f` (on the log scale) and stays.
pub(super) fn slide_level(base: f64, start: usize, end: usize, f: f64) -> impl Fn(usize) -> f64 {
    move |i| {
        let share = if i < start {
            0.0
        } else if i > end {
            1.0
        } else {
            (i + 1 - start) as f64 / (end + 2 - start) as f64
        };
        base * (share * f.ln()).exp()
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

/// Noise families of [`rough_suite`], none of them the log-normal model
/// cmdscope's method assumes but the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Noise {
    /// [`suite`]'s: 1 % session noise and 3 % run noise, both log-normal,
    /// one run in 20 a spike 20–50 % slow.
    Model,
    /// Student's t with 3 degrees of freedom for sessions (scale 0.6 %) and
    /// runs (scale 2 %): rare values far out.
    HeavyTails,
    /// Exponential, skewed to the slow side: runs 1 + 3 % (E − 1), sessions
    /// 1 + 1 % (E − 1), E of mean 1.
    Skewed,
    /// Each run 30 % slower with a probability that is itself drawn per
    /// session from 10–50 % (a VM alternating between two speeds), on
    /// 1 % session and 3 % run noise.
    TwoSpeeds,
    /// The session level wanders as AR(1), coefficient 0.8–0.95 and
    /// stationary SD 1 % (half the smallest change: 95 % of sessions within
    /// ± 2 %), over 0.5 % white session noise and 3 % run noise.
    Wander,
    /// Like `Wander` at a stationary SD of 2 %, the smallest change itself.
    WanderLarge,
    /// Run noise 2 % and session noise 0.5 % that become 6 % and 1.5 % (or
    /// the reverse) at a session between 30 and 70, the level unchanged.
    VarianceChange,
    /// One run per session, 1 % session and 3 % run noise with spikes.
    OneRun,
    /// A quiet machine: 0.3 % session noise and 1 % run noise, log-normal,
    /// one run in 20 a spike (each session's median then moves by about
    /// 0.5 %, what a slide's start and end can be located within 3
    /// sessions on).
    Quiet,
}

impl Noise {
    pub const ALL: [Noise; 9] = [
        Noise::Quiet,
        Noise::Model,
        Noise::HeavyTails,
        Noise::Skewed,
        Noise::TwoSpeeds,
        Noise::Wander,
        Noise::WanderLarge,
        Noise::VarianceChange,
        Noise::OneRun,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Noise::Model => "log-normal (model)",
            Noise::HeavyTails => "heavy tails",
            Noise::Skewed => "skewed",
            Noise::TwoSpeeds => "two speeds",
            Noise::Wander => "AR(1) wander 1 %",
            Noise::WanderLarge => "AR(1) wander 2 %",
            Noise::VarianceChange => "variance change",
            Noise::OneRun => "one run/session",
            Noise::Quiet => "quiet (0.3 %, 1 %)",
        }
    }
}

/// Kinds of [`rough_suite`] and their counts per noise family.
pub const ROUGH_KINDS: [(Kind, usize); 7] = [
    (Kind::Steady, 30),
    (Kind::Step, 20),
    (Kind::TwoSteps, 10),
    (Kind::Staircase, 10),
    (Kind::Slide, 20),
    (Kind::Episode, 10),
    (Kind::Outliers, 10),
];

/// Student's t with 3 degrees of freedom.
pub(super) fn t3(rng: &mut ChaCha8Rng) -> f64 {
    let chi: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
    normal(rng) / (chi / 3.0).sqrt()
}

/// Sessions whose true level is `level(i)`, with the noise of `noise`.
fn draw_with(rng: &mut ChaCha8Rng, noise: Noise, level: impl Fn(usize) -> f64) -> Vec<Vec<f64>> {
    let spike = |rng: &mut ChaCha8Rng| {
        if rng.random::<f64>() < 0.05 {
            1.2 + 0.3 * rng.random::<f64>()
        } else {
            1.0
        }
    };
    let phi = 0.8 + 0.15 * rng.random::<f64>();
    let wander_sd = if noise == Noise::WanderLarge {
        0.02
    } else {
        0.01
    };
    let mut ar = wander_sd * normal(rng);
    let switch = rng.random_range(30..71);
    let louder_after = rng.random::<bool>();
    let runs = if noise == Noise::OneRun { 1 } else { RUNS };
    (0..SESSIONS)
        .map(|i| {
            let l = level(i);
            match noise {
                Noise::Model | Noise::OneRun => {
                    let s = l * (0.01 * normal(rng)).exp();
                    (0..runs)
                        .map(|_| s * (0.03 * normal(rng)).exp() * spike(rng))
                        .collect()
                }
                Noise::Quiet => {
                    let s = l * (0.003 * normal(rng)).exp();
                    (0..runs)
                        .map(|_| s * (0.01 * normal(rng)).exp() * spike(rng))
                        .collect()
                }
                Noise::HeavyTails => {
                    let s = l * (0.006 * t3(rng)).exp();
                    (0..runs).map(|_| s * (0.02 * t3(rng)).exp()).collect()
                }
                Noise::Skewed => {
                    let e = |rng: &mut ChaCha8Rng| -(1.0 - rng.random::<f64>()).ln() - 1.0;
                    let s = l * (1.0 + 0.01 * e(rng));
                    (0..runs).map(|_| s * (1.0 + 0.03 * e(rng))).collect()
                }
                Noise::TwoSpeeds => {
                    let share = 0.1 + 0.4 * rng.random::<f64>();
                    let s = l * (0.01 * normal(rng)).exp();
                    (0..runs)
                        .map(|_| {
                            let mode = if rng.random::<f64>() < share {
                                1.3
                            } else {
                                1.0
                            };
                            s * mode * (0.03 * normal(rng)).exp()
                        })
                        .collect()
                }
                Noise::Wander | Noise::WanderLarge => {
                    if i > 0 {
                        ar = phi * ar + wander_sd * (1.0 - phi * phi).sqrt() * normal(rng);
                    }
                    let s = l * (ar + 0.005 * normal(rng)).exp();
                    (0..runs)
                        .map(|_| s * (0.03 * normal(rng)).exp() * spike(rng))
                        .collect()
                }
                Noise::VarianceChange => {
                    let loud = (i >= switch) == louder_after;
                    let (ss, rs) = if loud { (0.015, 0.06) } else { (0.005, 0.02) };
                    let s = l * (ss * normal(rng)).exp();
                    (0..runs).map(|_| s * (rs * normal(rng)).exp()).collect()
                }
            }
        })
        .collect()
}

/// One history of `kind` drawn with `noise`, from `seed`.
pub fn rough_series(kind: Kind, noise: Noise, seed: u64) -> Series {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base = 0.01 * (1.0 + 9.0 * rng.random::<f64>());
    let mut changes = Vec::new();
    let mut episodes = Vec::new();
    let mut drifts = Vec::new();
    let level: Box<dyn Fn(usize) -> f64> = match kind {
        Kind::Step => {
            let at = rng.random_range(15..86);
            let f = size(&mut rng, 0.03, 0.15);
            changes.push(at);
            Box::new(move |i| if i >= at { base * f } else { base })
        }
        Kind::TwoSteps => {
            let (a, b) = (rng.random_range(20..45), rng.random_range(55..80));
            let f = 1.0 + 0.05 + 0.10 * rng.random::<f64>();
            let (f1, f2) = if rng.random::<bool>() {
                (f, 1.0 / (f * f))
            } else {
                (1.0 / f, f * f)
            };
            changes.extend([a, b]);
            Box::new(two_steps(base, (a, f1), (b, f2)))
        }
        Kind::Staircase => {
            let (a, b) = (rng.random_range(28..42), rng.random_range(70..85));
            let (f1, f2) = if rng.random::<bool>() {
                (1.10, 1.15)
            } else {
                (1.0 / 1.10, 1.0 / 1.15)
            };
            changes.extend([a, b]);
            Box::new(two_steps(base, (a, f1), (b, f2)))
        }
        Kind::Slide | Kind::Drift => {
            let (start, end, f) = slide(&mut rng);
            drifts.push((start, end, f));
            Box::new(slide_level(base, start, end, f))
        }
        Kind::Episode => {
            let start = rng.random_range(20..80);
            let len = rng.random_range(4..9);
            let f = size(&mut rng, 0.06, 0.12);
            episodes.push((start, start + len - 1));
            Box::new(move |i| {
                if (start..start + len).contains(&i) {
                    base * f
                } else {
                    base
                }
            })
        }
        Kind::Outliers => {
            let at = outliers(&mut rng);
            Box::new(move |i| base * at.iter().find(|o| o.0 == i).map_or(1.0, |o| o.1))
        }
        Kind::Steady | Kind::Bimodal | Kind::MachineWide => Box::new(move |_| base),
    };
    let sessions = draw_with(&mut rng, noise, level);
    Series {
        kind,
        noise,
        name: format!("{} / {} {seed}", noise.name(), kind.name()),
        sessions,
        changes,
        episodes,
        drifts,
    }
}

/// Every noise family × every kind of [`ROUGH_KINDS`], from seeds derived
/// from `seed`.
pub fn rough_suite(seed: u64) -> Vec<Series> {
    let mut out = Vec::new();
    for (f, &noise) in Noise::ALL.iter().enumerate() {
        for (k, &(kind, count)) in ROUGH_KINDS.iter().enumerate() {
            for i in 0..count {
                let s = seed * 100_000 + (f * 10_000 + k * 100 + i) as u64;
                out.push(rough_series(kind, noise, s));
            }
        }
    }
    out
}

/// Two or three sessions, away from the ends, 30-60 % slower alone: the
/// outliers of the suite's series.
fn outliers(rng: &mut ChaCha8Rng) -> Vec<(usize, f64)> {
    let k = rng.random_range(2..4);
    (0..k)
        .map(|_| {
            (
                rng.random_range(5..SESSIONS - 5),
                1.3 + 0.3 * rng.random::<f64>(),
            )
        })
        .collect()
}
