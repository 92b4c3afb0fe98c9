//! `cmdscope check`: the CI gate. Compares the latest session on this
//! machine with the latest session carrying the baseline label on the same
//! machine fingerprint, benchmark by benchmark (matched by identity), on
//! wall time (Go's sec/op for imported Go benchmarks).
//!
//! Each benchmark: Mann-Whitney U and the Hodges-Lehmann ratio with its
//! 95 % interval (`comparison::compare_metric`, unpaired: the two sessions
//! ran at different times). Holm's correction across the benchmarks. A
//! regression is a benchmark significantly slower (adjusted p < alpha)
//! whose ratio exceeds 1 + PCT/100; any regression makes the exit status 1.

use std::fmt::Write as _;

use super::{median, thin, time_values, MAX_VALUES};
use crate::analysis::LEVEL;
use crate::cli::{CheckArgs, CheckFormat};
use crate::comparison::compare_metric;
use crate::error::{exit, Error, Result};
use crate::report::markdown::cell as md;
use crate::store::record::open_required;
use crate::store::{parse_label, Filter, Machine, Store, StoredSession};

/// One benchmark's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub base_median: Option<f64>,
    pub base_n: usize,
    pub cand_median: Option<f64>,
    pub cand_n: usize,
    /// current / baseline, with interval; None when the data cannot support one.
    pub ratio: Option<(f64, [f64; 2])>,
    pub p_raw: Option<f64>,
    pub p_adjusted: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Regression,
    Slower,
    Faster,
    NoChange,
    NotEnoughData,
}

impl Verdict {
    fn text(self, pct: f64) -> String {
        match self {
            Verdict::Regression => format!("❌ slower by more than {}%", trim(pct)),
            Verdict::Slower => format!("slower, within {}%", trim(pct)),
            Verdict::Faster => "✅ faster".into(),
            Verdict::NoChange => "no significant change".into(),
            Verdict::NotEnoughData => "not enough data".into(),
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Compares per benchmark; `pairs` is (identity, baseline values, current values).
pub fn compare(pairs: &[(String, Vec<f64>, Vec<f64>)], alpha: f64, pct: f64) -> Vec<Row> {
    let mut rows: Vec<Row> = pairs
        .iter()
        .map(|(name, base, cand)| {
            let raw = if base.len() >= 2 && cand.len() >= 2 {
                compare_metric(
                    &thin(base, MAX_VALUES),
                    &thin(cand, MAX_VALUES),
                    false,
                    LEVEL,
                )
            } else {
                None
            };
            Row {
                benchmark: name.clone(),
                base_median: median(base),
                base_n: base.len(),
                cand_median: median(cand),
                cand_n: cand.len(),
                ratio: raw.map(|r| (r.ratio, r.ratio_ci)),
                p_raw: raw.map(|r| r.p_value),
                p_adjusted: None,
                verdict: Verdict::NotEnoughData,
            }
        })
        .collect();
    let tested: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].p_raw.is_some())
        .collect();
    let raw: Vec<f64> = tested.iter().filter_map(|&i| rows[i].p_raw).collect();
    let adjusted = if raw.is_empty() {
        Vec::new()
    } else {
        crate::stats::holm(&raw)
    };
    for (&i, &adj) in tested.iter().zip(&adjusted) {
        let r = &mut rows[i];
        r.p_adjusted = Some(adj);
        let ratio = r.ratio.map_or(f64::NAN, |x| x.0);
        r.verdict = if adj >= alpha || !ratio.is_finite() {
            Verdict::NoChange
        } else if ratio > 1.0 + pct / 100.0 {
            Verdict::Regression
        } else if ratio > 1.0 {
            Verdict::Slower
        } else {
            Verdict::Faster
        };
    }
    rows
}

fn find_session(store: &mut Store, filter: Filter) -> Result<Option<StoredSession>> {
    Ok(store.sessions(&filter)?.into_iter().next())
}

pub fn run(args: &CheckArgs) -> Result<i32> {
    let (key, value) = parse_label(&args.baseline)?;
    if !(args.fail_if_slower.is_finite() && args.fail_if_slower >= 0.0) {
        return Err(Error::Usage(format!(
            "--fail-if-slower must be a non-negative percentage, got {}",
            args.fail_if_slower
        )));
    }
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        return Err(Error::Usage(format!(
            "--alpha must be between 0 and 0.5, got {}",
            args.alpha
        )));
    }
    let mut store = open_required(false, args.store.store.as_deref())?;
    if let Some(run) = &args.run {
        let current = crate::suite::merge::merged(&mut store, run)?;
        let baseline = crate::suite::merge::baseline(&mut store, &key, &value, run)?;
        return gate(args, &mut store, current, baseline);
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
    gate(args, &mut store, current, baseline)
}

/// Compares the current results with the baseline and prints the verdicts.
fn gate(
    args: &CheckArgs,
    store: &mut Store,
    current: StoredSession,
    baseline: StoredSession,
) -> Result<i32> {
    let cells: Vec<_> = current.cells.iter().chain(&baseline.cells).collect();
    let times = time_values(store, &cells)?;
    let values = |cell: &crate::store::StoredCell| times.get(&cell.id).cloned().unwrap_or_default();
    let mut pairs = Vec::new();
    let mut only_current = Vec::new();
    for c in &current.cells {
        match baseline.cells.iter().find(|b| b.identity == c.identity) {
            Some(b) => {
                if !pairs
                    .iter()
                    .any(|(n, _, _): &(String, _, _)| n == &c.identity)
                {
                    pairs.push((c.identity.clone(), values(b), values(c)));
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
    print!("{text}");
    Ok(if rows.iter().any(|r| r.verdict == Verdict::Regression) {
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
    match r.ratio {
        Some((ratio, [lo, hi])) if ratio.is_finite() => {
            let p = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
            if lo.is_finite() && hi.is_finite() {
                format!("{} [{} … {}]", p(ratio), p(lo), p(hi))
            } else {
                p(ratio)
            }
        }
        _ => "–".into(),
    }
}

fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "< 0.001".into(),
        Some(p) => format!("{p:.3}"),
        None => "–".into(),
    }
}

fn headline(rows: &[Row], ctx: &Context) -> String {
    let n = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Regression)
        .count();
    if n > 0 {
        format!(
            "{n} benchmark{} significantly slower by more than {}%",
            if n == 1 { " is" } else { "s are" },
            trim(ctx.pct)
        )
    } else {
        format!(
            "No significant slowdown beyond {}% ({} benchmark{} compared)",
            trim(ctx.pct),
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )
    }
}

fn describe(s: &StoredSession) -> String {
    let labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "session #{} ({}{}{})",
        s.id,
        s.started.replace('T', " "),
        if labels.is_empty() { "" } else { ", " },
        labels.join(" ")
    )
}

pub fn markdown(rows: &[Row], ctx: &Context) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### cmdscope check: {}\n", md(&headline(rows, ctx)));
    let _ = writeln!(
        out,
        "Current: {} · Baseline: {} · Machine: {} (`{}`) · wall time, Mann-Whitney U, Holm-corrected, alpha {}\n",
        md(&describe(ctx.current)),
        md(&describe(ctx.baseline)),
        md(&ctx.current.machine.hostname),
        ctx.current.fingerprint.get(..12).unwrap_or(&ctx.current.fingerprint),
        ctx.alpha
    );
    out.push_str("| Benchmark | Baseline | Current | Change [95% CI] | p (Holm) | Verdict |\n");
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
            p_text(r.p_adjusted),
            r.verdict.text(ctx.pct)
        );
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
        "benchmark", "baseline", "current", "change [95% CI]", "p (Holm)"
    );
    for r in rows {
        let name: String = r.benchmark.chars().take(50).collect();
        let _ = writeln!(
            out,
            "{name:<w$}  {:>12}  {:>12}  {:>28}  {:>8}  {}",
            time(r.base_median),
            time(r.cand_median),
            change(r),
            p_text(r.p_adjusted),
            r.verdict.text(ctx.pct)
        );
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

    #[test]
    fn gate_needs_significance_and_size() {
        let pairs = vec![
            ("same".to_string(), noisy(0.1, 20), noisy(0.1, 20)),
            ("slow".to_string(), noisy(0.1, 20), noisy(0.13, 20)),
            ("bit-slow".to_string(), noisy(0.1, 20), noisy(0.103, 20)),
            ("fast".to_string(), noisy(0.1, 20), noisy(0.08, 20)),
            ("tiny".to_string(), vec![0.1], vec![0.2]),
        ];
        let rows = compare(&pairs, 0.05, 5.0);
        let v: Vec<Verdict> = rows.iter().map(|r| r.verdict).collect();
        assert_eq!(
            v,
            vec![
                Verdict::NoChange,
                Verdict::Regression,
                Verdict::Slower,
                Verdict::Faster,
                Verdict::NotEnoughData
            ]
        );
        let (ratio, [lo, hi]) = rows[1].ratio.unwrap();
        assert!((ratio - 1.3).abs() < 0.02 && lo <= ratio && ratio <= hi);
    }
}
