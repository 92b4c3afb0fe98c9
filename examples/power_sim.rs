//! Power and false-positive rate of candidate comparison methods on the
//! noise of a shared 2-core VM, for docs/STATISTICS.md ("Speed modes").
//!
//! Run with `cargo run --release --example power_sim [trials]` (default
//! 400 sessions per cell of the table; seeded, so the table is the same on
//! every machine); `power_sim TRIALS sessions` simulates whole
//! `--until-decided` sessions, `power_sim TRIALS aa [SEED]` the
//! false-positive rate within speed modes alone at 200 and 1,000 blocks. Every session is n interleaved blocks of two commands,
//! the order inside each block shuffled; the candidate is 0, 1, 2 or 5 %
//! slower. A method "finds" the difference when its two-sided p-value is
//! below 0.05 and its estimate has the right sign; at 0 % any p below 0.05
//! is a false positive.
//!
//! Noise laws (per run, multiplicative):
//! - `bimodal`: two speeds, 25 and 42 ms, 61 % / 39 % of the runs; the
//!   speed is a Markov chain from run to run that leaves the fast speed with
//!   probability 0.082, so about 10 % of blocks hold one run of each; 7 %
//!   log-normal noise within a speed. The per-block log ratio then has a
//!   standard deviation of about 19 % and a robust one of about 10 %, as
//!   measured on the VM.
//! - `heavy`: the same speeds with Student-t (2 degrees of freedom, 5 %
//!   scale) noise within a speed: infinite variance.
//! - `drifting`: bimodal, the machine 10 % slower by the end of the
//!   session and the slow speed three times as frequent by then.
//! - `unimodal`: one speed, 7 % log-normal: what the methods cost when
//!   there are no modes.
//!
//! Methods:
//! - `engine`: the comparison engine without speed modes (signed-rank test
//!   on the per-block log ratios, the paired t-test at small n).
//! - `modes`: the engine as it is (blocks whose two runs share a speed).
//! - `low-q`: difference of the two sides' 25th percentiles of log time,
//!   tested by 400 random sign flips of the blocks (a permutation test
//!   built for that estimand).
//! - `regress`: ordinary least squares of the per-block log ratio on the
//!   difference of a disturbance covariate between the block's two runs
//!   (a noisy reading of the slow state: 1 in the slow speed plus normal
//!   noise of 0.5), the t-test of the intercept.

use cmdscope::analysis::comparison::{compare_values, p_value, Design, Settings, Verdict};
use cmdscope::analysis::sequential::Sequential;
use cmdscope::stats;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug)]
enum Law {
    Bimodal,
    Heavy,
    Drifting,
    Unimodal,
}

struct Gen(ChaCha8Rng);

impl Gen {
    fn uniform(&mut self) -> f64 {
        self.0.random::<f64>().max(1e-300)
    }
    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// One session: n blocks of (baseline, candidate) times and each run's
/// covariate.
struct Session {
    a: Vec<f64>,
    b: Vec<f64>,
    ca: Vec<f64>,
    cb: Vec<f64>,
}

fn session(g: &mut Gen, law: Law, n: usize, effect: f64) -> Session {
    let (fast, slow) = (0.025, 0.042);
    let mut slow_now = g.uniform() < 0.39;
    let mut s = Session {
        a: Vec::with_capacity(n),
        b: Vec::with_capacity(n),
        ca: Vec::with_capacity(n),
        cb: Vec::with_capacity(n),
    };
    for k in 0..n {
        let t = k as f64 / n as f64;
        let mut run = [(0.0, 0.0); 2];
        let first = (g.uniform() < 0.5) as usize;
        for slot in [first, 1 - first] {
            // Leave the fast speed with probability `leave`, the slow one
            // so that 39 % of the runs are slow (61 / 39 of `leave`).
            let leave = match law {
                Law::Drifting => 0.082 * (1.0 + 2.0 * t),
                _ => 0.082,
            };
            let share_slow: f64 = match law {
                Law::Drifting => 0.39 * (1.0 + t).min(1.5),
                _ => 0.39,
            };
            let back = leave * (1.0 - share_slow) / share_slow;
            if slow_now {
                slow_now = g.uniform() >= back.min(1.0);
            } else {
                slow_now = g.uniform() < leave;
            }
            let noise = match law {
                Law::Heavy => {
                    let z = g.normal();
                    let chi = -2.0 * g.uniform().ln();
                    (0.05 * z / (chi / 2.0).sqrt()).exp()
                }
                _ => (0.07 * g.normal()).exp(),
            };
            let drift = match law {
                Law::Drifting => 1.0 + 0.1 * t,
                _ => 1.0,
            };
            let speed = match law {
                Law::Unimodal => fast,
                _ if slow_now => slow,
                _ => fast,
            };
            let cov = if slow_now { 1.0 } else { 0.0 } + 0.5 * g.normal();
            let e = if slot == 1 { 1.0 + effect } else { 1.0 };
            run[slot] = (speed * drift * noise * e, cov);
        }
        s.a.push(run[0].0);
        s.ca.push(run[0].1);
        s.b.push(run[1].0);
        s.cb.push(run[1].1);
    }
    s
}

fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    stats::quantile_sorted(&v, q)
}

/// Sign-flip permutation test of the difference of 25th percentiles of
/// log times: (estimate, two-sided p).
fn low_quantile(g: &mut Gen, a: &[f64], b: &[f64]) -> (f64, f64) {
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let stat = |x: &[f64], y: &[f64]| quantile(y, 0.25) - quantile(x, 0.25);
    let observed = stat(&la, &lb);
    let flips = 400;
    let mut extreme = 0;
    let (mut x, mut y) = (la.clone(), lb.clone());
    for _ in 0..flips {
        for i in 0..la.len() {
            if g.uniform() < 0.5 {
                (x[i], y[i]) = (lb[i], la[i]);
            } else {
                (x[i], y[i]) = (la[i], lb[i]);
            }
        }
        extreme += (stat(&x, &y).abs() >= observed.abs()) as usize;
    }
    (observed, (extreme + 1) as f64 / (flips + 1) as f64)
}

/// OLS of d on (1, z), the intercept's t-test: (estimate, two-sided p).
fn regress(s: &Session) -> (f64, f64) {
    let n = s.a.len();
    let d: Vec<f64> = s.a.iter().zip(&s.b).map(|(x, y)| (y / x).ln()).collect();
    let z: Vec<f64> = s.ca.iter().zip(&s.cb).map(|(x, y)| y - x).collect();
    let nf = n as f64;
    let (mz, md) = (z.iter().sum::<f64>() / nf, d.iter().sum::<f64>() / nf);
    let sxx: f64 = z.iter().map(|v| (v - mz) * (v - mz)).sum();
    let sxy: f64 = z.iter().zip(&d).map(|(x, y)| (x - mz) * (y - md)).sum();
    let beta = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let alpha = md - beta * mz;
    let rss: f64 = z
        .iter()
        .zip(&d)
        .map(|(x, y)| (y - alpha - beta * x).powi(2))
        .sum();
    let sigma2 = rss / (nf - 2.0);
    let se = (sigma2 * (1.0 / nf + mz * mz / sxx.max(1e-300))).sqrt();
    let t = alpha / se;
    // Student t with n - 2 degrees of freedom through statrs.
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let p = match StudentsT::new(0.0, 1.0, nf - 2.0) {
        Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
        Err(_) => 1.0,
    };
    (alpha, p)
}

/// Whole `--until-decided` sessions: looks at `UNTIL_DECIDED_LOOKS`, the
/// session ended by its time budget after `budget` blocks when no look
/// settled it; the verdict of its final analysis (at the level the looks
/// left) or of the settling look. Returns (slower, faster, no difference,
/// mean blocks).
fn until_decided(
    g: &mut Gen,
    law: Law,
    effect: f64,
    budget: usize,
    trials: usize,
) -> (usize, usize, usize, f64) {
    let (mut slower, mut faster, mut same, mut blocks) = (0, 0, 0, 0usize);
    for _ in 0..trials {
        let s = session(g, law, budget, effect);
        let mut seq = Sequential::until_decided(0.05, 0.01);
        let mut n = budget;
        for k in 1..=budget {
            if seq.is_look(k) {
                let cells = vec![s.a[..k].to_vec(), s.b[..k].to_vec()];
                if seq.look(&cells, 0, true) {
                    n = k;
                    break;
                }
            }
        }
        let set = Settings::new(seq.final_level(), 0.01);
        match compare_values(&s.a[..n], &s.b[..n], Design::Paired, &set).verdict {
            Verdict::Slower => slower += 1,
            Verdict::Faster => faster += 1,
            Verdict::NoDifference => same += 1,
            _ => {}
        }
        blocks += n;
    }
    (slower, faster, same, blocks as f64 / trials as f64)
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(400);
    if std::env::args().nth(2).as_deref() == Some("aa") {
        // The false-positive rate of the engine within speed modes alone,
        // with more sessions than the table.
        let on = Settings::new(0.05, 0.01);
        println!("noise law | n | sessions | false positives | rate");
        for law in [Law::Bimodal, Law::Drifting] {
            for n in [200, 1000] {
                let offset: u64 = std::env::args()
                    .nth(3)
                    .and_then(|a| a.parse().ok())
                    .unwrap_or(0);
                let mut g = Gen(ChaCha8Rng::seed_from_u64(9000 + n as u64 + 10_000 * offset));
                let hits = (0..trials)
                    .filter(|_| {
                        let s = session(&mut g, law, n, 0.0);
                        p_value(&s.a, &s.b, Design::Paired, &on) < 0.05
                    })
                    .count();
                let rate = hits as f64 / trials as f64;
                println!("{law:?} | {n} | {trials} | {hits} | {rate:.4}");
            }
        }
        return;
    }
    if std::env::args().nth(2).as_deref() == Some("sessions") {
        // 30 s at about 65 ms a block (two runs of 25-42 ms and the
        // harness): 460 blocks; 60 s: 920.
        println!(
            "noise law | effect | budget (blocks) | slower | faster | no difference | mean blocks"
        );
        for law in [Law::Bimodal, Law::Heavy, Law::Drifting] {
            for effect in [0.0, 0.02] {
                for budget in [460, 920] {
                    let mut g = Gen(ChaCha8Rng::seed_from_u64(
                        budget as u64 + (effect * 100.0) as u64,
                    ));
                    let (s, f, d, b) = until_decided(&mut g, law, effect, budget, trials);
                    println!(
                        "{law:?} | {:.0} % | {budget} | {s} | {f} | {d} | {b:.0}",
                        effect * 100.0
                    );
                }
            }
        }
        return;
    }
    let sizes = [10, 20, 50, 100, 200, 500, 1000];
    let effects = [0.0, 0.01, 0.02, 0.05];
    let methods = ["engine", "modes", "low-q", "regress"];
    let off = Settings {
        speed_modes: false,
        ..Settings::new(0.05, 0.01)
    };
    let on = Settings::new(0.05, 0.01);
    println!(
        "noise law | effect | method | {}",
        sizes.map(|n| format!("n={n}")).join(" | ")
    );
    for (li, law) in [Law::Bimodal, Law::Heavy, Law::Drifting, Law::Unimodal]
        .into_iter()
        .enumerate()
    {
        for (ei, &effect) in effects.iter().enumerate() {
            let mut rates = vec![vec![0.0; sizes.len()]; methods.len()];
            for (si, &n) in sizes.iter().enumerate() {
                let mut g = Gen(ChaCha8Rng::seed_from_u64(
                    1000 * li as u64 + 100 * ei as u64 + si as u64,
                ));
                let mut hits = [0usize; 4];
                for _ in 0..trials {
                    let s = session(&mut g, law, n, effect);
                    let found = |est: f64, p: f64| p < 0.05 && (effect == 0.0 || est > 0.0);
                    let ratio = |set: &Settings| {
                        let p = p_value(&s.a, &s.b, Design::Paired, set);
                        let d: Vec<f64> = s.a.iter().zip(&s.b).map(|(x, y)| y - x).collect();
                        (stats::median(&d).unwrap_or(0.0), p)
                    };
                    let (e, p) = ratio(&off);
                    hits[0] += found(e, p) as usize;
                    let (e, p) = ratio(&on);
                    hits[1] += found(e, p) as usize;
                    let (e, p) = low_quantile(&mut g, &s.a, &s.b);
                    hits[2] += found(e, p) as usize;
                    let (e, p) = regress(&s);
                    hits[3] += found(e, p) as usize;
                }
                for m in 0..methods.len() {
                    rates[m][si] = hits[m] as f64 / trials as f64;
                }
            }
            for (m, name) in methods.iter().enumerate() {
                let cells: Vec<String> = rates[m].iter().map(|r| format!("{r:.3}")).collect();
                println!(
                    "{law:?} | {:.0} % | {name} | {}",
                    effect * 100.0,
                    cells.join(" | ")
                );
            }
        }
    }
}
