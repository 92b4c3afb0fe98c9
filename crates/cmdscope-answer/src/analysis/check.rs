//! `check`'s model: each benchmark of the current session against the
//! baseline by the comparison engine, widened by how much the benchmark
//! moves from session to session, and each benchmark of a session against
//! its stored history (`check --against history`). The store is read by
//! `commands::check`; the words are `report::check`'s.
//!
//! Two estimates of session-to-session movement, on purpose:
//! `check --baseline` uses [`between_session_sigma`], the spread of the
//! log medians of the latest sessions carrying the baseline label (a
//! baseline is meant to be stable, and this estimate separates the
//! sessions' movement from their own sampling noise); `check --against
//! history` uses the history's own analysis (`changes::analyse_one`: a
//! variogram of its session summaries, robust to its steps and outliers,
//! which would inflate the plain spread, and to noise that carries over).
//!
//! A benchmark run in concurrency mode is compared twice: on its runs'
//! wall time, and on its throughput ([`Measure::Throughput`]), one value
//! per batch, unpaired across the sessions. The engine compares the
//! batches' seconds per completion, as `run` does, so its "slower" is the
//! lower throughput; its between-session movement is estimated by the
//! same rule from the baseline sessions' batches.

use crate::analysis::changes::{analyse_one, Change, Drift, Params};
use crate::analysis::comparison::{
    self as engine, compare_values, fails_gate, session_sigma, widen_for_sessions, Design, Settings,
};
use crate::analysis::gate::{self, Side};
use crate::analysis::MAX_VALUES;
use crate::run::session::BatchRecord;
use crate::stats::{median_finite as median, thin};
use crate::store::history::History;

/// Fewest baseline sessions from which a between-session spread is
/// estimated (two give one degree of freedom: too unstable to rely on).
pub const MIN_HISTORY: usize = 3;

/// Most recent baseline sessions used for that estimate.
pub const HISTORY_SESSIONS: usize = 20;

/// What a row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Each run's value of a metric: wall time (Go's sec/op for imported
    /// Go benchmarks) unless `check --metric` names another.
    Run(crate::metrics::Metric),
    /// Concurrency mode's throughput: the values are each batch's seconds
    /// per completion (see [`batch_seconds`]), lower is better as for
    /// times; the medians shown are completions per second.
    Throughput,
}

impl Measure {
    /// Each run's wall time: what `check` compares by default.
    pub const WALL_TIME: Measure = Measure::Run(crate::metrics::Metric::WallTime);

    /// The metric's name, as the comparison carries it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Run(m) => m.name(),
            Measure::Throughput => "throughput",
        }
    }
}

/// One benchmark's comparison on one measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub measure: Measure,
    /// The row as the gate sees it: compared or not, and why
    /// (`analysis::gate`, the one rule).
    pub gate: gate::Row,
    /// Medians in the measure's unit: seconds of wall time, completions
    /// per second of throughput (over the batches).
    pub base_median: Option<f64>,
    pub base_n: usize,
    pub cand_median: Option<f64>,
    pub cand_n: usize,
    /// The one analysis: verdict, p-value and ratio interval (current / baseline).
    pub result: engine::Comparison,
    /// Fails the `--fail-if-slower` gate.
    pub regression: bool,
    /// The between-session spread the interval was widened by, and the
    /// number of baseline sessions it was estimated from.
    pub history: Option<(f64, usize)>,
}

/// One benchmark to compare: its identity, the baseline's and the current
/// values, and the between-session spread of its log medians with the
/// number of sessions it came from, when the store has that history.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub name: String,
    pub measure: Measure,
    /// What each side holds beyond its values (the runs that timed out or
    /// failed, how its session ended, batches not stored); the values'
    /// count is taken from `base` and `cand`.
    pub sides: (Side, Side),
    pub base: Vec<f64>,
    pub cand: Vec<f64>,
    pub history: Option<(f64, usize)>,
    /// The band "no difference" stays within, a fraction: the precision
    /// the checked session was run with.
    pub precision: f64,
}

/// Compares per benchmark and measure at family-wise level `alpha` and
/// gates at `pct`: Bonferroni over every row but those whose batches are
/// not stored (they test nothing). Whether a row counts as compared is
/// the gate's one rule (`gate::standing`).
pub fn compare(pairs: &[Pair], alpha: f64, pct: f64) -> Vec<Row> {
    let family = pairs
        .iter()
        .filter(|p| !p.sides.0.unstored && !p.sides.1.unstored)
        .count();
    pairs
        .iter()
        .map(|p| {
            // A run's metric (wall time, Go's sec/op) or seconds per
            // completion: the metric's own rules, a duration's for throughput.
            let (metric, counted) = match p.measure {
                Measure::Run(m) => (m, "runs"),
                Measure::Throughput => (crate::metrics::Metric::WallTime, "batches"),
            };
            let settings = Settings {
                cross_session: true,
                counted,
                ..Settings::for_metric(metric, alpha, family.max(1), p.precision, None)
            };
            let mut result = compare_values(
                &thin(&p.base, MAX_VALUES),
                &thin(&p.cand, MAX_VALUES),
                Design::Unpaired,
                &settings,
            )
            .named(p.measure.name(), "baseline", &p.name);
            // The baseline is one session (the latest with the label), not
            // a mean over the history: its session effect counts in full.
            if let Some((sigma, _)) = p.history {
                widen_for_sessions(&mut result, sigma, 1);
            }
            let (regression, shown) = match p.measure {
                Measure::Run(_) => (fails_gate(&result, pct), median as fn(&[f64]) -> _),
                Measure::Throughput => (
                    fails_gate(&result, per_completion_gate(pct)),
                    median_rate as fn(&[f64]) -> _,
                ),
            };
            let sides = (
                Side {
                    values: p.base.len(),
                    ..p.sides.0.clone()
                },
                Side {
                    values: p.cand.len(),
                    ..p.sides.1.clone()
                },
            );
            let gate = gate::Row::new(
                &p.name,
                p.measure.name(),
                (&sides.0, &sides.1),
                Some(&result),
                regression,
            );
            Row {
                benchmark: p.name.clone(),
                measure: p.measure,
                base_median: shown(&p.base),
                base_n: p.base.len(),
                cand_median: shown(&p.cand),
                cand_n: p.cand.len(),
                regression: gate.regression,
                gate,
                result,
                history: p.history,
            }
        })
        .collect()
}

/// The median throughput (completions per second) of batches given as
/// seconds per completion.
fn median_rate(seconds: &[f64]) -> Option<f64> {
    let rates: Vec<f64> = seconds.iter().map(|s| 1.0 / s).collect();
    median(&rates)
}

/// Each batch's seconds per completion, the values a throughput pair
/// compares: the inverse of the throughput `run` computes for a batch
/// (`analysis::concurrency`), for the batches that had every instance
/// busy for a while.
pub fn batch_seconds(batches: &[BatchRecord]) -> Vec<f64> {
    crate::analysis::concurrency::per_block(batches)
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

pub use crate::analysis::concurrency::per_completion_gate;

/// The between-session standard deviation of a benchmark's log median,
/// from one (median, standard error of its log) per session, with the
/// number of sessions; None below [`MIN_HISTORY`] or when a median is not
/// positive. The spread of the medians holds each session's own sampling
/// noise too; that part (the mean squared standard error) is subtracted,
/// as in a random-effects model, so noisy sessions do not pass for
/// sessions that move.
pub fn between_session_sigma(sessions: &[(f64, f64)]) -> Option<(f64, usize)> {
    if sessions.len() < MIN_HISTORY {
        return None;
    }
    let medians: Vec<f64> = sessions.iter().map(|&(m, _)| m).collect();
    let (spread, k) = session_sigma(&medians)?;
    let var = spread * spread;
    let within = sessions
        .iter()
        .map(|&(_, se)| if se.is_finite() { se * se } else { 0.0 })
        .sum::<f64>()
        / k as f64;
    Some(((var - within).max(0.0).sqrt(), k))
}

/// A session's median and the standard error of its log, read from the
/// 95 % interval of the median (0 when there are too few runs for one).
/// The order-statistics interval covers more than 95 % (its ranks are
/// whole numbers), so its half-width is divided by the normal quantile of
/// its actual coverage, not by 1.96.
pub fn median_and_se(values: &[f64]) -> Option<(f64, f64)> {
    let m = median(values)?;
    let coverage = crate::stats::median_ci_ranks(values.len(), 0.95).map(|(.., c)| c);
    let se = match (crate::stats::median_ci(values, 0.95), coverage) {
        (Ok(e), Some(c)) if e.low > 0.0 && e.high > 0.0 => {
            let z = crate::stats::normal_quantile(0.5 + c / 2.0);
            (e.high.ln() - e.low.ln()) / (2.0 * z)
        }
        _ => 0.0,
    };
    Some((m, se))
}

/// One benchmark of `check --against history`: its history up to and
/// including the checked session, the newest point's comparison with the
/// sessions since the history's last change point (None without history
/// before the session), and a drift still going on at the checked session.
pub struct HistoryRow {
    pub benchmark: String,
    pub history: Option<History>,
    pub change: Option<Change>,
    pub drift: Option<Drift>,
}

/// `check --against history`'s model: each of `names` (the checked
/// session's benchmarks) in `histories`, up to the session `session`,
/// analysed as `changes` analyses it at level `p.alpha` (already divided
/// over the benchmarks).
pub fn against_history(
    names: &[&str],
    histories: &[History],
    session: i64,
    p: &Params,
) -> Vec<HistoryRow> {
    names
        .iter()
        .map(|name| {
            let found = histories
                .iter()
                .find(|h| h.benchmark == *name)
                .and_then(|h| {
                    // The history up to and including the checked session.
                    let end = h
                        .points
                        .iter()
                        .position(|pt| pt.sessions.iter().any(|s| s.id == session))?;
                    let mut h = h.clone();
                    h.points.truncate(end + 1);
                    Some(h)
                });
            let Some(h) = found else {
                return HistoryRow {
                    benchmark: name.to_string(),
                    history: histories.iter().find(|h| h.benchmark == *name).cloned(),
                    change: None,
                    drift: None,
                };
            };
            let a = analyse_one(h, p);
            let change = a.newest_comparison.clone();
            let drift = a.drifts.iter().find(|d| d.ongoing).cloned();
            HistoryRow {
                benchmark: name.to_string(),
                history: Some(a.history),
                change,
                drift,
            }
        })
        .collect()
}

/// Whether a benchmark of `check --against history` fails its gate: its
/// newest session, or a drift still going on at it.
pub fn fails_against_history(r: &HistoryRow, pct: f64) -> bool {
    let pct = match &r.history {
        Some(h) if h.is_throughput() => per_completion_gate(pct),
        _ => pct,
    };
    r.change.as_ref().is_some_and(|c| c.fails_gate(pct))
        || r.drift.as_ref().is_some_and(|d| d.change.fails_gate(pct))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::comparison::{SessionVariation, Verdict, MIN_N};
    use crate::analysis::simulation::{Gen, Noise};

    fn noisy(center: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| center * (1.0 + 0.01 * ((i * 7 % 11) as f64 - 5.0) / 5.0))
            .collect()
    }

    fn pair(name: &str, base: Vec<f64>, cand: Vec<f64>) -> Pair {
        Pair {
            name: name.into(),
            measure: Measure::WALL_TIME,
            sides: (Side::of(0), Side::of(0)),
            base,
            cand,
            history: None,
            precision: crate::analysis::comparison::DEFAULT_PRECISION,
        }
    }

    #[test]
    fn gate_needs_significance_and_size() {
        let pairs = vec![
            pair("same", noisy(0.1, 20), noisy(0.1, 20)),
            pair("slow", noisy(0.1, 20), noisy(0.13, 20)),
            pair("bit-slow", noisy(0.1, 20), noisy(0.103, 20)),
            pair("fast", noisy(0.1, 20), noisy(0.08, 20)),
            pair("tiny", vec![0.1], vec![0.2]),
        ];
        let rows = compare(&pairs, 0.05, 5.0);
        let v: Vec<(Verdict, bool)> = rows
            .iter()
            .map(|r| (r.result.verdict, r.regression))
            .collect();
        assert_eq!(
            v,
            vec![
                (Verdict::NoDifference, false),
                (Verdict::Slower, true),
                (Verdict::Slower, false),
                (Verdict::Faster, false),
                (Verdict::Inconclusive, false)
            ]
        );
        // One run a side: not compared, which is not inconclusive.
        assert!(rows[..4].iter().all(|r| r.gate.is_compared()));
        assert!(!rows[4].gate.is_compared());
        // Bonferroni over the five benchmarks.
        assert_eq!(rows[1].result.level, 0.01);
        let [lo, hi] = rows[1].result.ratio_ci;
        let ratio = rows[1].result.ratio;
        assert!((ratio - 1.3).abs() < 0.02 && lo <= ratio && ratio <= hi);
        assert!(lo > 1.05, "the gate judges the interval's lower end: {lo}");
        assert_eq!(
            rows[0].result.session_variation,
            SessionVariation::NotIncluded
        );
    }

    /// `n` batches' seconds per completion of a command making `rate`
    /// completions a second, each batch's rate off by log-normal noise
    /// (5 %).
    fn batches(g: &mut Gen, rate: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| 1.0 / (rate * g.factor(Noise::Normal)))
            .collect()
    }

    fn throughput(base: Vec<f64>, cand: Vec<f64>) -> Pair {
        Pair {
            measure: Measure::Throughput,
            ..pair("x", base, cand)
        }
    }

    /// The quantiles of Binomial(n, p) with `tail` below and above them.
    fn binomial_bar(n: u64, p: f64, tail: f64) -> (u64, u64) {
        use statrs::distribution::{Binomial, DiscreteCDF};
        let b = Binomial::new(p, n).unwrap();
        let lo = (0..=n).find(|&k| b.cdf(k) > tail).unwrap();
        let hi = (0..=n).find(|&k| b.sf(k) < tail).unwrap();
        (lo, hi)
    }

    #[test]
    fn throughput_a_a_rejects_at_the_level() {
        // Two sessions of the same command, 8 batches each: a verdict
        // either way is a false rejection, in 5 % of the trials at alpha
        // 0.05 (the exact test's discreteness may keep it a little lower).
        let mut g = Gen::new(11);
        let trials = 10_000;
        let rejected = (0..trials)
            .filter(|_| {
                let pair = throughput(batches(&mut g, 50.0, 8), batches(&mut g, 50.0, 8));
                let row = &compare(&[pair], 0.05, 10.0)[0];
                assert!(row.gate.is_compared());
                row.result.verdict.is_significant()
            })
            .count() as u64;
        let (lo, hi) = binomial_bar(trials, 0.05, 0.001);
        // The figure docs/STATISTICS.md quotes (`-- --nocapture`).
        eprintln!("A/A: {rejected} of {trials} rejected (bar {lo} to {hi})");
        assert!(
            (lo..=hi).contains(&rejected),
            "{rejected} of {trials} rejected, expected {lo} to {hi}"
        );
    }

    #[test]
    fn a_throughput_drop_of_20_percent_is_found_and_fails_the_gate() {
        let mut g = Gen::new(12);
        let trials = 200;
        let (mut log_ratio, mut covered, mut gated) = (0.0, 0, 0);
        for _ in 0..trials {
            let pair = throughput(batches(&mut g, 50.0, 8), batches(&mut g, 40.0, 8));
            let row = &compare(&[pair], 0.05, 10.0)[0];
            // The engine compares seconds per completion: lower throughput
            // is its "slower", and the ratio is 1.25 (0.80x throughput).
            assert_eq!(row.result.verdict, Verdict::Slower, "{row:?}");
            gated += u64::from(row.regression);
            log_ratio += row.result.ratio.ln() / trials as f64;
            let [lo, hi] = row.result.ratio_ci;
            covered += u64::from(lo <= 1.25 && 1.25 <= hi);
        }
        // The estimate's standard error is about 0.026 a trial: 0.002
        // over 200, so 0.01 is five of them.
        assert!((log_ratio - 1.25f64.ln()).abs() < 0.01, "{log_ratio}");
        // The 95 % interval covers the true ratio as often as it says.
        let (lo, _) = binomial_bar(trials, 0.95, 0.001);
        assert!(
            covered >= lo,
            "covered {covered} of {trials}, expected {lo} or more"
        );
        // Beyond a 10 % gate (the interval's upper end below 0.90x) in
        // nearly every trial: the estimate, 0.22 on the log scale, lies
        // about 2 standard errors of the bound (0.06) above the gate's
        // 0.105.
        eprintln!(
            "20 % drop: found in {trials} of {trials}, interval covering 0.80x in {covered}, \
             beyond a 10 % gate in {gated}"
        );
        assert!(
            gated >= trials * 9 / 10,
            "{gated} of {trials} beyond the gate"
        );
        // The same drop beyond a 25 % gate does not fail it: the interval
        // is about 0.80x, not below 0.75x.
        let pair = throughput(batches(&mut g, 50.0, 8), batches(&mut g, 40.0, 8));
        assert!(!compare(&[pair], 0.05, 25.0)[0].regression);
        // Higher throughput is never a regression.
        let pair = throughput(batches(&mut g, 40.0, 8), batches(&mut g, 50.0, 8));
        let row = &compare(&[pair], 0.05, 0.0)[0];
        assert_eq!(row.result.verdict, Verdict::Faster);
        assert!(!row.regression);
    }

    #[test]
    fn the_throughput_gate_is_a_drop_of_pct_percent_of_throughput() {
        // Tight batches: 9.5 % fewer completions per second stays within a
        // 10 % gate although seconds per completion rose by 10.5 %; 10.5 %
        // fewer fails it.
        let tight = |rate: f64| -> Vec<f64> {
            // ±0.1 % around 1 / rate.
            (0..12)
                .map(|i| (1.0 + 0.001 * ((i * 7 % 11) as f64 - 5.0) / 5.0) / rate)
                .collect()
        };
        let row = |cand: f64| compare(&[throughput(tight(100.0), tight(cand))], 0.05, 10.0);
        let within = &row(90.5)[0];
        assert_eq!(within.result.verdict, Verdict::Slower);
        assert!(within.result.ratio_ci[0] > 1.1, "{within:?}");
        assert!(!within.regression, "{within:?}");
        assert!(row(89.5)[0].regression);
        assert_eq!(per_completion_gate(0.0), 0.0);
        assert!((per_completion_gate(20.0) - 25.0).abs() < 1e-12);
        assert_eq!(per_completion_gate(100.0), f64::INFINITY);
    }

    #[test]
    fn throughput_without_enough_batches_is_not_compared_and_fails_the_gate() {
        use crate::analysis::gate::{Standing, Which, Why};
        let mut g = Gen::new(13);
        let one = throughput(batches(&mut g, 50.0, 1), batches(&mut g, 10.0, 8));
        let old = Pair {
            sides: (
                Side {
                    unstored: true,
                    ..Side::of(0)
                },
                Side::of(0),
            ),
            ..throughput(Vec::new(), batches(&mut g, 10.0, 8))
        };
        let wall = pair("x", noisy(0.1, 20), noisy(0.1, 20));
        let rows = compare(&[wall, one, old], 0.05, 10.0);
        assert!(rows[0].gate.is_compared());
        assert_eq!(
            rows[1].gate.standing,
            Standing::NotCompared(Why::TooFew {
                side: Which::Baseline,
                need: MIN_N,
                have: 1,
                timed_out: 0,
                failed: 0,
                ended: None,
            })
        );
        assert_eq!(
            rows[2].gate.standing,
            Standing::NotCompared(Why::NotStored(Which::Baseline))
        );
        assert!(rows.iter().all(|r| !r.regression), "{rows:?}");
        // The comparisons made: wall time and the batches too few for a
        // verdict, not the batches never stored.
        assert!(rows.iter().all(|r| r.result.family == 2), "{rows:?}");
        assert_eq!(rows[1].result.verdict, Verdict::Inconclusive);
        // Not compared is no pass: the gate fails unless told to allow it.
        let gate_rows: Vec<gate::Row> = rows.iter().map(|r| r.gate.clone()).collect();
        let strict = gate::judge(&gate_rows, &gate::Options::default());
        assert!(!strict.passes(), "{strict:?}");
        assert_eq!(strict.unexcused().count(), 2);
        let allowed = gate::judge(
            &gate_rows,
            &gate::Options {
                allow_missing: vec!["x".into()],
                ..gate::Options::default()
            },
        );
        assert!(allowed.passes(), "{allowed:?}");
        assert_eq!((allowed.compared, allowed.excused()), (1, 2));
    }

    #[test]
    fn between_session_sigma_is_the_spread_of_log_medians() {
        let exact = |m: &[f64]| -> Vec<(f64, f64)> { m.iter().map(|&m| (m, 0.0)).collect() };
        assert_eq!(
            between_session_sigma(&exact(&[1.0, 1.1])),
            None,
            "two are too few"
        );
        assert_eq!(between_session_sigma(&exact(&[1.0, 0.0, 1.1])), None);
        // ln 1, ln e, ln e^2: 0, 1, 2, standard deviation 1.
        let e = std::f64::consts::E;
        let (sigma, k) = between_session_sigma(&exact(&[1.0, e, e * e])).unwrap();
        assert!((sigma - 1.0).abs() < 1e-12 && k == 3);
        // Each median known to ±0.6 (se of its log): variance 1 - 0.36.
        let noisy: Vec<(f64, f64)> = [1.0, e, e * e].iter().map(|&m| (m, 0.6)).collect();
        let (sigma, _) = between_session_sigma(&noisy).unwrap();
        assert!((sigma - 0.8).abs() < 1e-12, "{sigma}");
        // Medians that vary no more than their own noise: no session effect.
        let calm: Vec<(f64, f64)> = [1.0, 1.01, 0.99].iter().map(|&m| (m, 0.05)).collect();
        assert_eq!(between_session_sigma(&calm).unwrap().0, 0.0);
    }

    #[test]
    fn between_session_sigma_recovers_a_simulated_session_effect() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut normal = move || {
            let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        };
        // 200 sessions, session effect sd 0.03, each median measured with
        // an se of 0.05 on the log scale.
        let sessions: Vec<(f64, f64)> = (0..200)
            .map(|_| ((0.03 * normal() + 0.05 * normal()).exp(), 0.05))
            .collect();
        let (sigma, _) = between_session_sigma(&sessions).unwrap();
        assert!((sigma - 0.03).abs() < 0.01, "{sigma}");
    }

    #[test]
    fn the_standard_error_of_a_log_median_matches_theory() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        // Log-normal runs, sd 0.1 of the log: the log median's standard
        // error is sqrt(pi/2) x 0.1 / sqrt(n) for large n.
        for n in [40usize, 400] {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
                    (0.1 * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()).exp()
                })
                .collect();
            let (_, se) = median_and_se(&values).unwrap();
            let theory = (std::f64::consts::PI / 2.0).sqrt() * 0.1 / (n as f64).sqrt();
            assert!((se / theory - 1.0).abs() < 0.3, "n {n}: {se} vs {theory}");
        }
        assert_eq!(median_and_se(&[1.0, 2.0]).unwrap().1, 0.0, "too few runs");
    }

    #[test]
    fn history_widens_the_interval_and_can_clear_the_gate() {
        // 8 % slower with tight runs: significant and beyond 5 % by the runs
        // alone, but sessions that move by 5 % (sd of log medians) make an
        // 8 % difference between two sessions unremarkable.
        let mut p = pair("x", noisy(0.1, 20), noisy(0.108, 20));
        let narrow = &compare(std::slice::from_ref(&p), 0.05, 5.0)[0];
        assert!(narrow.regression, "{narrow:?}");
        p.history = Some((0.05, 8));
        // Between two sessions: 8 % against a spread of sqrt(2) x 5 %.
        let wide = &compare(&[p], 0.05, 5.0)[0];
        assert!(!wide.regression, "{wide:?}");
        assert_eq!(
            wide.result.session_variation,
            SessionVariation::Included {
                sigma: 0.05,
                sessions: 1,
                df: None
            }
        );
        let (n, w) = (narrow.result.ratio_ci, wide.result.ratio_ci);
        assert!(w[0] < n[0] && w[1] > n[1], "{n:?} inside {w:?}");
        // Sessions that move no more than their own noise: the analysis
        // is the within-session one, exact test and all, and says so.
        let mut p = pair("x", noisy(0.1, 20), noisy(0.108, 20));
        p.history = Some((0.0, 5));
        let same = &compare(&[p], 0.05, 5.0)[0];
        assert_eq!(same.result.ratio_ci, narrow.result.ratio_ci);
        assert_eq!(same.result.p_value, narrow.result.p_value);
        assert_eq!(same.result.verdict, narrow.result.verdict);
        assert!(same.regression);
        assert!(same.result.note.is_none(), "{:?}", same.result.note);
    }
}
