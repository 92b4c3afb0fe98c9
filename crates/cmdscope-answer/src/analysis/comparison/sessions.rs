//! Comparisons across sessions: the interval widened by the spread
//! between sessions, estimated from the history, and the verdict decided
//! again on it.

use crate::stats;

use super::engine::decide;
use super::{Comparison, Scale, SessionVariation, Verdict};

/// Widens a cross-session comparison by the between-session spread.
///
/// `sigma` is the standard deviation of a session's log-median (log-ratio
/// scale) between sessions of the baseline, estimated from history;
/// `baseline_sessions` is how many sessions the baseline pools. The
/// candidate's session and the baseline's mean then differ by session
/// effects of variance sigma^2 (1 + 1/k), added to the within-session
/// variance read back from the interval's half-width. The p-value becomes
/// the normal approximation of that combined model, and the verdict is
/// re-decided, so test and interval still agree. Only for `Scale::LogRatio`
/// comparisons (others are returned unchanged, with a note).
pub fn widen_for_sessions(c: &mut Comparison, sigma: f64, baseline_sessions: usize) {
    let Some((est, [lo, hi], z)) = widenable(c, sigma, baseline_sessions) else {
        return;
    };
    if sigma == 0.0 {
        // History shows no movement between sessions beyond their own
        // noise: the within-session analysis stands as it is (an exact
        // test stays exact); only the note changes.
        keep_within(c, est, [lo, hi], sigma, baseline_sessions, None);
        return;
    }
    let se_within = (hi - lo) / 2.0 / z;
    let between = sigma * sigma * (1.0 + 1.0 / baseline_sessions as f64);
    let se = (se_within * se_within + between).sqrt();
    widen_to_se(c, est, se, None, sigma, baseline_sessions);
}

/// Widens a cross-session comparison to `variance`, the variance (log-ratio
/// scale) of the difference between the two sides' session means, when it
/// is larger than the runs' own: that variance already holds the runs'
/// sampling noise (it is measured on session summaries), so it replaces
/// the runs' variance instead of being added to it. Estimated with `df`
/// degrees of freedom (None: as if known), the interval and p-value use
/// Student's t with them (Welch-Satterthwaite: the estimated part is all
/// of the variance), so an estimate from few sessions widens the interval
/// by its own uncertainty. `sigma` and `sessions` are reported in
/// `SessionVariation::Included`. Only for `Scale::LogRatio` comparisons.
pub fn widen_to_variance(
    c: &mut Comparison,
    variance: f64,
    df: Option<f64>,
    sigma: f64,
    sessions: usize,
) {
    let Some((est, [lo, hi], z)) = widenable(c, sigma, sessions) else {
        return;
    };
    let se_within = (hi - lo) / 2.0 / z;
    if !(variance.is_finite() && variance > se_within * se_within) {
        keep_within(c, est, [lo, hi], sigma, sessions, df);
        return;
    }
    widen_to_se(c, est, variance.sqrt(), df, sigma, sessions);
}

/// The estimate, log interval and normal quantile of a comparison the
/// session widening applies to (None: it does not, and `c` is unchanged).
fn widenable(c: &Comparison, sigma: f64, sessions: usize) -> Option<(f64, [f64; 2], f64)> {
    if c.verdict == Verdict::NotComparable || c.p_value.is_nan() {
        return None;
    }
    if c.scale != Scale::LogRatio || sigma.is_nan() || sigma < 0.0 || sessions == 0 {
        return None;
    }
    let z = stats::normal_quantile(1.0 - c.level / 2.0);
    let (lo, hi) = (c.ratio_ci[0].ln(), c.ratio_ci[1].ln());
    let est = c.ratio.ln();
    (lo.is_finite() && hi.is_finite() && est.is_finite()).then_some((est, [lo, hi], z))
}

/// The runs' own analysis stands; the note says the session variation was
/// looked at.
fn keep_within(
    c: &mut Comparison,
    est: f64,
    ci: [f64; 2],
    sigma: f64,
    sessions: usize,
    df: Option<f64>,
) {
    c.session_variation = SessionVariation::Included {
        sigma,
        sessions,
        df,
    };
    c.note = None;
    decide(c, est, ci);
}

/// Interval and p-value of `est` with standard error `se`: normal, or
/// Student's t with `df` degrees of freedom.
fn widen_to_se(
    c: &mut Comparison,
    est: f64,
    se: f64,
    df: Option<f64>,
    sigma: f64,
    sessions: usize,
) {
    let t = df
        .filter(|d| d.is_finite() && *d > 0.0)
        .and_then(|d| statrs::distribution::StudentsT::new(0.0, 1.0, d).ok());
    let q = match &t {
        Some(t) => statrs::distribution::ContinuousCDF::inverse_cdf(t, 1.0 - c.level / 2.0),
        None => stats::normal_quantile(1.0 - c.level / 2.0),
    };
    c.ratio_ci = [(est - q * se).exp(), (est + q * se).exp()];
    c.p_value = if se > 0.0 {
        let tail = match &t {
            Some(t) => statrs::distribution::ContinuousCDF::cdf(t, -est.abs() / se),
            None => stats::normal_cdf(-est.abs() / se),
        };
        (2.0 * tail).min(1.0)
    } else {
        c.p_value
    };
    c.exact = false;
    c.session_variation = SessionVariation::Included {
        sigma,
        sessions,
        df: df.filter(|_| t.is_some()),
    };
    c.note = None;
    decide(c, est, [est - q * se, est + q * se]);
}

/// The between-session standard deviation `widen_for_sessions` takes,
/// from the medians of several sessions of the same benchmark (the
/// baseline's history): the sample standard deviation of their logarithms,
/// with the number of sessions. None with fewer than 2 sessions or a
/// median that is not positive.
pub fn session_sigma(session_medians: &[f64]) -> Option<(f64, usize)> {
    let k = session_medians.len();
    if k < 2 || session_medians.iter().any(|&m| !(m > 0.0 && m.is_finite())) {
        return None;
    }
    let logs: Vec<f64> = session_medians.iter().map(|m| m.ln()).collect();
    let mean = logs.iter().sum::<f64>() / k as f64;
    let var = logs.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / (k - 1) as f64;
    Some((var.sqrt(), k))
}
