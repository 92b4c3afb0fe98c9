//! `cmdscope check`: the CI gate. Compares the latest session on this
//! machine with the latest session carrying the baseline label on the same
//! machine fingerprint, benchmark by benchmark (matched by identity), on
//! wall time (Go's sec/op for imported Go benchmarks).
//!
//! Each benchmark is one analysis by the comparison engine
//! (`analysis::comparison`): the two sessions ran at different times, so the
//! runs are unpaired (Mann-Whitney U, or Welch's t-test on logarithms at
//! small samples), Bonferroni across the benchmarks. A regression is the
//! engine's one gate rule, the same as `compare --fail-if-slower`: slower
//! AND the lower end of the ratio interval above 1 + PCT/100; any
//! regression makes the exit status 1.
//!
//! Runs of one session say nothing about how much a benchmark moves from
//! session to session. Where the store holds at least
//! [`MIN_HISTORY`] sessions with the baseline label that ran the benchmark,
//! the spread of their log medians, less the medians' own sampling noise
//! ([`between_session_sigma`]), estimates that movement and widens the
//! interval (`widen_for_sessions`); otherwise the output says that
//! session-to-session variation is not in the interval.

use std::fmt::Write as _;

use crate::analysis::comparison::{
    self as engine, compare_values, fails_gate, format_confidence, format_p_bare, session_sigma,
    widen_for_sessions, Design, SessionVariation, Settings, Verdict,
};
use crate::analysis::MAX_VALUES;
use crate::cli::store::{CheckArgs, CheckFormat};
use crate::error::{exit, Error, Result};
use crate::report::markdown::cell as md;
use crate::stats::{median_finite as median, thin};
use crate::store::history::time_values;
use crate::store::record::open_read_only;
use crate::store::{parse_label, Filter, Machine, Store, StoredSession};

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

impl Row {
    fn verdict_text(&self, pct: f64) -> String {
        let v = self.result.verdict;
        match v {
            _ if self.regression => format!("❌ slower by more than {}%", trim(pct)),
            Verdict::Slower => format!("slower, not significantly by more than {}%", trim(pct)),
            Verdict::Faster => "✅ faster".into(),
            other => other.words().into(),
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
}

/// Compares per benchmark at family-wise level `alpha` and gates at `pct`.
pub fn compare(pairs: &[Pair], alpha: f64, pct: f64) -> Vec<Row> {
    // Wall time, or Go's sec/op: both durations.
    let settings = Settings {
        cross_session: true,
        ..Settings::for_metric(
            crate::metrics::Metric::WallTime,
            alpha,
            pairs.len().max(1),
            crate::analysis::comparison::DEFAULT_PRECISION,
            None,
        )
    };
    pairs
        .iter()
        .map(|p| {
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
fn median_and_se(values: &[f64]) -> Option<(f64, f64)> {
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

/// Per benchmark identity of one session: its median and the standard
/// error of the log median.
type SessionMedians = Vec<(String, (f64, f64))>;

fn find_session(store: &mut Store, filter: Filter) -> Result<Option<StoredSession>> {
    Ok(store.sessions(&filter)?.into_iter().next())
}

/// Median wall time (and the standard error of its log) per benchmark
/// identity in each of the latest
/// [`HISTORY_SESSIONS`] sessions labelled `key=value` on the current
/// session's machine (the current session itself excluded).
fn baseline_history(
    store: &mut Store,
    key: &str,
    value: &str,
    current: &StoredSession,
) -> Result<Vec<SessionMedians>> {
    let sessions: Vec<StoredSession> = store
        .sessions(&Filter {
            labels: vec![(key.to_owned(), value.to_owned())],
            machine: Some(current.fingerprint.clone()),
            limit: Some(HISTORY_SESSIONS + 1),
            ..Filter::default()
        })?
        .into_iter()
        .filter(|s| s.id != current.id)
        .take(HISTORY_SESSIONS)
        .collect();
    let cells: Vec<_> = sessions.iter().flat_map(|s| s.cells.iter()).collect();
    let times = time_values(store, &cells)?;
    Ok(sessions
        .iter()
        .map(|s| {
            s.cells
                .iter()
                .filter_map(|c| Some((c.identity.clone(), median_and_se(times.get(&c.id)?)?)))
                .collect()
        })
        .collect())
}

pub fn run(args: &CheckArgs) -> Result<i32> {
    if args.against.is_some() {
        return super::changes::check_against_history(args);
    }
    let (key, value) = parse_label(args.baseline.as_deref().unwrap_or_default())?;
    crate::cli::check_percentage("--fail-if-slower", args.fail_if_slower)?;
    crate::cli::check_alpha(args.alpha)?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    if let Some(run) = &args.run {
        let current = crate::suite::merge::merged(&mut store, run)?;
        let baseline = crate::suite::merge::baseline(&mut store, &key, &value, run)?;
        return gate(args, &mut store, (&key, &value), current, baseline);
    }
    let current = match args.session {
        Some(id) => find_session(
            &mut store,
            Filter {
                session: Some(id),
                ..Filter::default()
            },
        )?
        .ok_or_else(|| super::nothing_found(&store, &format!("session #{id}")))?,
        None => {
            let here = Machine::current();
            find_session(
                &mut store,
                Filter {
                    machine: Some(here.fingerprint()),
                    limit: Some(1),
                    ..Filter::default()
                },
            )?
            .ok_or_else(|| {
                super::nothing_found(
                    &store,
                    &format!(
                        "results from this machine ({} [{}]); run `cmdscope run` first",
                        here.hostname,
                        &here.fingerprint()[..12]
                    ),
                )
            })?
        }
    };
    let baseline = store
        .sessions(&Filter {
            labels: vec![(key.clone(), value.clone())],
            machine: Some(current.fingerprint.clone()),
            ..Filter::default()
        })?
        .into_iter()
        .find(|s| s.id != current.id)
        .ok_or_else(|| {
            super::nothing_found(
                &store,
                &format!(
                    "baseline session labelled {key}={value} on machine {} [{}] (other than session #{})",
                    current.machine.hostname,
                    current.fingerprint.get(..12).unwrap_or(&current.fingerprint),
                    current.id
                ),
            )
        })?;
    gate(args, &mut store, (&key, &value), current, baseline)
}

/// Compares the current results with the baseline and prints the verdicts.
fn gate(
    args: &CheckArgs,
    store: &mut Store,
    (key, value): (&str, &str),
    current: StoredSession,
    baseline: StoredSession,
) -> Result<i32> {
    let cells: Vec<_> = current.cells.iter().chain(&baseline.cells).collect();
    let times = time_values(store, &cells)?;
    let values = |cell: &crate::store::StoredCell| times.get(&cell.id).cloned().unwrap_or_default();
    let mut pairs: Vec<Pair> = Vec::new();
    let mut only_current = Vec::new();
    for c in &current.cells {
        match baseline.cells.iter().find(|b| b.identity == c.identity) {
            Some(b) => {
                if !pairs.iter().any(|p| p.name == c.identity) {
                    pairs.push(Pair {
                        name: c.identity.clone(),
                        base: values(b),
                        cand: values(c),
                        history: None,
                    });
                }
            }
            None => only_current.push(c.identity.clone()),
        }
    }
    let only_baseline: Vec<String> = baseline
        .cells
        .iter()
        .filter(|b| !current.cells.iter().any(|c| c.identity == b.identity))
        .map(|b| b.identity.clone())
        .collect();
    if pairs.is_empty() {
        return Err(Error::Usage(format!(
            "session #{} and baseline session #{} have no benchmark in common",
            current.id, baseline.id
        )));
    }
    let history = baseline_history(store, key, value, &current)?;
    for p in &mut pairs {
        let medians: Vec<(f64, f64)> = history
            .iter()
            .filter_map(|per_session| per_session.iter().find(|(id, _)| *id == p.name))
            .map(|(_, m)| *m)
            .collect();
        p.history = between_session_sigma(&medians);
    }
    let rows = compare(&pairs, args.alpha, args.fail_if_slower);
    let ctx = Context {
        current: &current,
        baseline: &baseline,
        pct: args.fail_if_slower,
        alpha: args.alpha,
        only_current: &only_current,
        only_baseline: &only_baseline,
    };
    let text = match args.format {
        CheckFormat::Markdown => markdown(&rows, &ctx),
        CheckFormat::Text => text(&rows, &ctx),
    };
    crate::output::print(&crate::output::escape_controls(&text));
    Ok(if rows.iter().any(|r| r.regression) {
        exit::FAILURE
    } else {
        exit::OK
    })
}

pub struct Context<'a> {
    pub current: &'a StoredSession,
    pub baseline: &'a StoredSession,
    pub pct: f64,
    pub alpha: f64,
    pub only_current: &'a [String],
    pub only_baseline: &'a [String],
}

fn time(v: Option<f64>) -> String {
    v.map(crate::units::time).unwrap_or_else(|| "–".into())
}

fn change(r: &Row) -> String {
    let a = &r.result;
    let p = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
    match (a.ratio, a.ratio_ci) {
        (ratio, [lo, hi]) if ratio.is_finite() && lo.is_finite() && hi.is_finite() => {
            format!("{} [{} … {}]", p(ratio), p(lo), p(hi))
        }
        (ratio, _) if ratio.is_finite() => p(ratio),
        _ => "–".into(),
    }
}

fn p_text(r: &Row) -> String {
    let p = r.result.p_value;
    if p.is_nan() {
        "–".into()
    } else {
        format_p_bare(p)
    }
}

/// The interval's confidence, shared by every row (one family).
fn confidence(rows: &[Row]) -> String {
    rows.first().map_or_else(
        || "95 % CI".into(),
        |r| format_confidence(r.result.confidence),
    )
}

/// What limits the verdicts, once below the table: the notes of the rows
/// and whether session-to-session variation is in the intervals.
fn footer(rows: &[Row]) -> Vec<String> {
    let mut lines = Vec::new();
    for r in rows {
        if let Some(note) = r.result.note.as_deref() {
            let own = note
                .strip_suffix(SESSION_NOTE)
                .map(|n| n.trim_end_matches("; "))
                .unwrap_or(note);
            if !own.is_empty() {
                lines.push(format!("{}: {own}", r.benchmark));
            }
        }
    }
    let widened: Vec<String> = rows
        .iter()
        .filter_map(|r| match (r.result.session_variation, r.history) {
            (SessionVariation::Included { sigma, .. }, Some((_, k))) => Some(format!(
                "{} (sd {:.1}% from {k} baseline sessions)",
                r.benchmark,
                sigma * 100.0
            )),
            _ => None,
        })
        .collect();
    // Without history, or with too few runs for an interval to widen.
    let missing = rows
        .iter()
        .filter(|r| {
            r.result.session_variation == SessionVariation::NotIncluded && r.history.is_none()
        })
        .count();
    if !widened.is_empty() {
        lines.push(format!(
            "Intervals include session-to-session variation for {}.",
            widened.join(", ")
        ));
    }
    if missing > 0 {
        lines.push(format!(
            "The two sessions' runs are unpaired, and session-to-session variation is not in the \
             interval{} of {missing} benchmark{} (fewer than {MIN_HISTORY} baseline sessions \
             in the store to estimate it).",
            if missing == 1 { "" } else { "s" },
            if missing == 1 { "" } else { "s" }
        ));
    }
    lines
}

/// What the engine appends to a cross-session comparison's note; `footer`
/// says it once for all rows instead.
const SESSION_NOTE: &str = "session-to-session variation is not in the interval";

fn headline(rows: &[Row], ctx: &Context) -> String {
    let n = rows.iter().filter(|r| r.regression).count();
    if n > 0 {
        format!(
            "{n} benchmark{} significantly slower by more than {}%",
            if n == 1 { " is" } else { "s are" },
            trim(ctx.pct)
        )
    } else {
        format!(
            "Nothing significantly slower by more than {}% ({} benchmark{} compared)",
            trim(ctx.pct),
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )
    }
}

fn describe(s: &StoredSession) -> String {
    format!(
        "session {}",
        crate::store::history::describe_session(s.id, &s.started, &s.labels)
    )
}

pub fn markdown(rows: &[Row], ctx: &Context) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### cmdscope check: {}\n", md(&headline(rows, ctx)));
    let _ = writeln!(
        out,
        "Current: {} · Baseline: {} · Machine: {} (`{}`) · wall time, unpaired tests, Bonferroni over {} benchmark{}, alpha {}\n",
        md(&describe(ctx.current)),
        md(&describe(ctx.baseline)),
        md(&ctx.current.machine.hostname),
        ctx.current.fingerprint.get(..12).unwrap_or(&ctx.current.fingerprint),
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        ctx.alpha
    );
    let _ = writeln!(
        out,
        "| Benchmark | Baseline | Current | Change [{}] | p | Verdict |",
        confidence(rows)
    );
    out.push_str("|:---|---:|---:|---:|---:|:---|\n");
    for r in rows {
        let _ = writeln!(
            out,
            "| `{}` | {} (n={}) | {} (n={}) | {} | {} | {} |",
            md(&r.benchmark),
            time(r.base_median),
            r.base_n,
            time(r.cand_median),
            r.cand_n,
            change(r),
            p_text(r),
            r.verdict_text(ctx.pct)
        );
    }
    let notes = footer(rows);
    if !notes.is_empty() {
        out.push('\n');
    }
    for n in notes {
        let _ = writeln!(out, "{}  ", md(&n));
    }
    for (what, list) in [
        ("Only in the current results", ctx.only_current),
        ("Only in the baseline", ctx.only_baseline),
    ] {
        if !list.is_empty() {
            let names: Vec<String> = list.iter().map(|n| format!("`{}`", md(n))).collect();
            let _ = writeln!(out, "\n{what}: {}", names.join(", "));
        }
    }
    out
}

pub fn text(rows: &[Row], ctx: &Context) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(rows, ctx));
    let _ = writeln!(out, "current:  {}", describe(ctx.current));
    let _ = writeln!(out, "baseline: {}", describe(ctx.baseline));
    let w = rows
        .iter()
        .map(|r| r.benchmark.chars().count())
        .max()
        .unwrap_or(9)
        .clamp(9, 50);
    let _ = writeln!(
        out,
        "\n{:<w$}  {:>12}  {:>12}  {:>28}  {:>8}  verdict",
        "benchmark",
        "baseline",
        "current",
        format!("change [{}]", confidence(rows)),
        "p"
    );
    for r in rows {
        let name: String = r.benchmark.chars().take(50).collect();
        let _ = writeln!(
            out,
            "{name:<w$}  {:>12}  {:>12}  {:>28}  {:>8}  {}",
            time(r.base_median),
            time(r.cand_median),
            change(r),
            p_text(r),
            r.verdict_text(ctx.pct)
        );
    }
    for n in footer(rows) {
        let _ = writeln!(out, "{n}");
    }
    for (what, list) in [
        ("only in the current results", ctx.only_current),
        ("only in the baseline", ctx.only_baseline),
    ] {
        if !list.is_empty() {
            let _ = writeln!(out, "{what}: {}", list.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The footer says which intervals hold session variation.
        let text = footer(&[narrow.clone(), wide.clone()]).join("\n");
        assert!(
            text.contains("Intervals include session-to-session variation for x (sd 5.0% from 8 baseline sessions)"),
            "{text}"
        );
        assert!(
            text.contains("not in the interval of 1 benchmark (fewer than 3 baseline sessions"),
            "{text}"
        );
    }
}
