//! The optimum search (`--minimize`/`--maximize`) in words for the
//! terminal: the best value, the set that is as good, what it cost, and the
//! table of tried values with the comparison behind each. The search itself
//! (`crate::search`) decides; this only formats what it decided.

use std::fmt::Write;

use super::paint::Paint;
use super::SearchSection;
use crate::analysis::comparison::Verdict;
use crate::run::plan::Parameter;
use crate::search::{point_label, Outcome, Status};

/// "batch = 64" for one parameter, "a=2 b=64" for several.
fn point_label_eq(params: &[Parameter], g: usize) -> String {
    match params {
        [p] => format!("{} = {}", p.name, point_label(params, g)),
        _ => point_label(params, g),
    }
}

/// Consecutive tried values as "a–b", others listed: "256–4096" or "8, 64".
pub fn describe_set(set: &[usize], tried: &[usize], label: impl Fn(usize) -> String) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < set.len() {
        // Extend while the next set member is the next tried value.
        let mut j = k;
        while j + 1 < set.len() {
            let pos = tried.iter().position(|&t| t == set[j]);
            if pos.and_then(|p| tried.get(p + 1)) == Some(&set[j + 1]) {
                j += 1;
            } else {
                break;
            }
        }
        if j > k {
            parts.push(format!("{}–{}", label(set[k]), label(set[j])));
        } else {
            parts.push(label(set[k]));
        }
        k = j + 1;
    }
    parts.join(", ")
}

/// The search in words: the best value, the set that is as good, what it
/// cost, and the table of tried values with the comparison behind each.
pub fn render_text(s: &SearchSection, paint: Paint) -> String {
    let (r, params, maximize) = (s.result, s.parameters, s.maximize);
    let metric = &r.options.source;
    let mut out = String::new();
    let goal = if maximize { "highest" } else { "lowest" };
    let label = |i: usize| point_label(params, i);
    let size: usize = crate::search::dims(params).iter().product();
    let name = params
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let ranges = params
        .iter()
        .map(|p| {
            format!(
                "{} {} … {}",
                p.name,
                p.values.first().map_or("", String::as_str),
                p.values.last().map_or("", String::as_str)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let strategy = if params.len() > 1 {
        ", coordinate search"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{} the {goal} {} over {name} ({ranges}: {size} values{strategy})",
        paint.bold("Search:"),
        match (r.options.per_op, maximize) {
            (true, true) => format!("operations per second (--ops / {})", metric.name()),
            (true, false) => format!("{} per operation", metric.name()),
            _ => metric.name().to_string(),
        },
    );
    let saved = 1.0 - r.runs as f64 / r.full_grid_runs.max(1) as f64;
    // Throughput is compared per batch: the search counts batches.
    let runs = if metric.per_batch() {
        "batches"
    } else {
        "runs"
    };
    let _ = writeln!(
        out,
        "  tried {} of {} values in {} {runs} (budget {}); the full grid at {} {runs} per value takes {} {runs} ({:.0} % saved)",
        r.tried.len(),
        size,
        r.runs,
        r.budget,
        r.full_grid_runs / size.max(1),
        r.full_grid_runs,
        saved * 100.0
    );
    let others: Vec<usize> = r.as_good.iter().copied().filter(|&i| i != r.best).collect();
    let band: Vec<usize> = r
        .rows
        .iter()
        .filter(|(_, s, c)| {
            *s == Status::AsGood
                && c.as_ref()
                    .is_some_and(|c| c.verdict == Verdict::NoDifference)
        })
        .map(|(i, _, _)| *i)
        .collect();
    let precision = r
        .rows
        .iter()
        .find_map(|(_, _, c)| c.as_ref().map(|c| c.precision))
        .unwrap_or(crate::analysis::comparison::DEFAULT_PRECISION);
    let _ = writeln!(
        out,
        "  Best: {}",
        paint.green(&paint.bold(&point_label_eq(params, r.best)))
    );
    let _ = writeln!(
        out,
        "  Bracket: {}: every tried value outside it is significantly worse; untried values between tried ones were not measured",
        bracket_words(params, &r.bracket)
    );
    if r.tried.len() == 1 {
        let _ = writeln!(out, "  The only value tried: nothing to compare it with.");
    } else if others.is_empty() {
        let _ = writeln!(
            out,
            "  Every other value tried is significantly worse: the optimum is pinned."
        );
    } else {
        let _ = writeln!(
            out,
            "  As good, among tried values: {} (the best included): not significantly worse than {} by the comparison test{}",
            if params.len() == 1 {
                format!("{name} = {}", describe_set(&r.as_good, &r.tried, label))
            } else {
                r.as_good.iter().map(|&i| label(i)).collect::<Vec<_>>().join("; ")
            },
            label(r.best),
            if band.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} within ±{} % of it",
                    band.iter()
                        .map(|&i| label(i))
                        .collect::<Vec<_>>()
                        .join(", "),
                    precision * 100.0
                )
            }
        );
    }
    let u = r.bracket.untried;
    let status = match (r.outcome(), u) {
        (Outcome::Settled, _) => "Settled: every value in the bracket was tried (model: the cost is unimodal between tried neighbours along each parameter)".to_string(),
        (Outcome::BudgetExhausted, 0) => {
            "Not settled: the budget ended the race before every value in the bracket had its runs"
                .to_string()
        }
        (Outcome::BudgetExhausted, _) => {
            let values = if u == 1 {
                "value in it was"
            } else {
                "values in it were"
            };
            format!("Not settled: the budget ended the search at this bracket; {u} {values} never measured and could hold a better one")
        }
        (Outcome::UntriedInBracket, _) => {
            let values = if u == 1 {
                "value in the bracket was"
            } else {
                "values in the bracket were"
            };
            format!("Not settled: the race ended around the best; {u} {values} never measured and could hold a better one")
        }
        (Outcome::Stopped, _) => {
            "Not settled: the search stopped before the set was settled".to_string()
        }
    };
    let _ = writeln!(out, "  {status}");
    let w = r
        .rows
        .iter()
        .map(|(i, _, _)| label(*i).chars().count())
        .chain([name.chars().count(), 10])
        .max()
        .unwrap_or(10);
    let _ = writeln!(
        out,
        "  {:>w$}  {:>n$}  {:>13}  {:>8}  {:>30}",
        name,
        runs,
        "median",
        "ratio",
        "interval (p)",
        n = runs.len().max(5)
    );
    for (i, status, c) in &r.rows {
        let (ratio, ci, words) = match c {
            Some(c) if !c.ratio.is_finite() => (
                "n/a".into(),
                "no verdict yet (too few runs)".to_string(),
                c.verdict.words(),
            ),
            Some(c) => (
                format!("{}x", ratio_text(c.ratio)),
                format!(
                    "{}–{}x ({})",
                    ratio_text(c.ratio_ci[0]),
                    ratio_text(c.ratio_ci[1]),
                    crate::units::format_p(c.p_value)
                ),
                c.verdict.words(),
            ),
            None if *status == Status::Best => ("1x".into(), String::new(), ""),
            None => ("—".into(), String::new(), ""),
        };
        let mark = match status {
            Status::Best => paint.green("◀ best"),
            Status::AsGood => paint.green("≈ as good"),
            Status::Worse => match c {
                Some(c) => {
                    // "slower" only for times; other metrics are higher or lower.
                    let words = match c.verdict {
                        _ if r.options.is_time() => words,
                        Verdict::Slower => "higher",
                        _ => "lower",
                    };
                    format!("worse ({words} than {})", c.baseline)
                }
                None => "worse (no run measured)".into(),
            },
        };
        let _ = writeln!(
            out,
            "  {:>w$}  {:>n$}  {:>13}  {:>8}  {:>30}  {mark}",
            label(*i),
            r.runs_per_value.get(*i).copied().unwrap_or(0),
            r.medians
                .get(*i)
                .filter(|v| v.is_finite())
                .map_or("—".into(), |&v| r.options.format(v)),
            ratio,
            ci,
            n = runs.len().max(5)
        );
    }
    out.push('\n');
    out
}

/// The bracket per parameter: "b = 58–70", "b = 128–512, c = 1", and
/// "c: an unordered list, every value raced".
pub fn bracket_words(params: &[Parameter], b: &crate::search::Bracket) -> String {
    params
        .iter()
        .zip(&b.ranges)
        .map(|(p, r)| {
            let v = |i: usize| p.values.get(i).map_or("?", String::as_str);
            match r {
                Some((lo, hi)) if lo == hi => format!("{} = {}", p.name, v(*lo)),
                Some((lo, hi)) => format!("{} = {}–{}", p.name, v(*lo), v(*hi)),
                None => format!("{}: an unordered list, every value raced", p.name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A ratio with three decimals, or three significant digits when small.
fn ratio_text(r: f64) -> String {
    if r.abs() >= 0.1 || r == 0.0 {
        format!("{r:.3}")
    } else {
        format!("{r:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_is_described_as_ranges_of_tried_values() {
        let labels: Vec<String> = (0..8).map(|i| (1 << i).to_string()).collect();
        let tried = [0, 2, 3, 4, 6, 7];
        let label = |i: usize| labels[i].clone();
        assert_eq!(describe_set(&[2, 3, 4], &tried, label), "4–16");
        assert_eq!(describe_set(&[0, 3, 4, 7], &tried, label), "1, 8–16, 128");
    }
}
