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
//! history` uses `changes::session_sd`, a robust spread, because a history
//! has steps and outliers that would inflate the plain spread.

use crate::analysis::changes::{newest_comparison, Change, Params};
use crate::analysis::comparison::{
    self as engine, compare_values, fails_gate, session_sigma, widen_for_sessions, Design, Settings,
};
use crate::analysis::MAX_VALUES;
use crate::stats::{median_finite as median, thin};
use crate::store::history::History;

/// Fewest baseline sessions from which a between-session spread is
/// estimated (two give one degree of freedom: too unstable to rely on).
pub const MIN_HISTORY: usize = 3;

/// Most recent baseline sessions used for that estimate.
pub const HISTORY_SESSIONS: usize = 20;

/// One benchmark's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub benchmark: String,
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
    pub base: Vec<f64>,
    pub cand: Vec<f64>,
    pub history: Option<(f64, usize)>,
    /// The band "no difference" stays within, a fraction: the precision
    /// the checked session was run with.
    pub precision: f64,
}

/// Compares per benchmark at family-wise level `alpha` and gates at `pct`.
pub fn compare(pairs: &[Pair], alpha: f64, pct: f64) -> Vec<Row> {
    pairs
        .iter()
        .map(|p| {
            // Wall time, or Go's sec/op: both durations.
            let settings = Settings {
                cross_session: true,
                ..Settings::for_metric(
                    crate::metrics::Metric::WallTime,
                    alpha,
                    pairs.len().max(1),
                    p.precision,
                    None,
                )
            };
            let mut result = compare_values(
                &thin(&p.base, MAX_VALUES),
                &thin(&p.cand, MAX_VALUES),
                Design::Unpaired,
                &settings,
            )
            .named(crate::metrics::Metric::WallTime.name(), "baseline", &p.name);
            // The baseline is one session (the latest with the label), not
            // a mean over the history: its session effect counts in full.
            if let Some((sigma, _)) = p.history {
                widen_for_sessions(&mut result, sigma, 1);
            }
            Row {
                benchmark: p.name.clone(),
                base_median: median(&p.base),
                base_n: p.base.len(),
                cand_median: median(&p.cand),
                cand_n: p.cand.len(),
                regression: fails_gate(&result, pct),
                result,
                history: p.history,
            }
        })
        .collect()
}

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
/// including the checked session, and the newest point's comparison with
/// the sessions since the history's last change point (None without
/// history before the session).
pub struct HistoryRow {
    pub benchmark: String,
    pub history: Option<History>,
    pub change: Option<Change>,
}

/// `check --against history`'s model: each of `names` (the checked
/// session's benchmarks) in `histories`, up to the session `session`,
/// compared at level `p.alpha` (already divided over the benchmarks).
pub fn against_history(
    names: &[&str],
    histories: &[History],
    session: i64,
    p: &Params,
) -> Vec<HistoryRow> {
    names
        .iter()
        .map(|name| {
            let mut h = histories.iter().find(|h| h.benchmark == *name).cloned();
            let change = h.as_mut().and_then(|h| {
                // The history up to and including the checked session.
                let end = h
                    .points
                    .iter()
                    .position(|pt| pt.sessions.iter().any(|s| s.id == session))?;
                h.points.truncate(end + 1);
                let p = Params {
                    metric: crate::metrics::Metric::from_name(&h.metric),
                    metric_name: crate::analysis::changes::metric_name(h),
                    ..*p
                };
                newest_comparison(&h.runs(), &p)
            });
            HistoryRow {
                benchmark: name.to_string(),
                history: h,
                change,
            }
        })
        .collect()
}

/// Benchmarks of `check --against history` that fail its gate.
pub fn failing_against_history(rows: &[HistoryRow], pct: f64) -> usize {
    rows.iter()
        .filter(|r| r.change.as_ref().is_some_and(|c| c.fails_gate(pct)))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::comparison::{SessionVariation, Verdict};

    fn noisy(center: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| center * (1.0 + 0.01 * ((i * 7 % 11) as f64 - 5.0) / 5.0))
            .collect()
    }

    fn pair(name: &str, base: Vec<f64>, cand: Vec<f64>) -> Pair {
        Pair {
            name: name.into(),
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
                sessions: 1
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
