//! A gate's words, for every gate (`compare`, `check`, `check --against
//! history`, `changes --fail-on-new-regression`): the count of what was
//! compared, the lines naming each benchmark not compared and why, and the
//! headline that never says "nothing slower" over a table where nothing
//! was decided. Formatting only: `analysis::gate` judges.

use std::fmt::Write as _;

use crate::analysis::gate::{NotCompared, Outcome, Which, Why};

/// What a gate calls its two sides: "baseline session #3" and "session
/// #5", or the files' names.
pub struct Sides<'a> {
    pub baseline: &'a str,
    pub current: &'a str,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What one value of the row stands for.
fn counted(metric: &str) -> (&'static str, &'static str) {
    if metric == "throughput" {
        ("batch", "batches")
    } else {
        ("run", "runs")
    }
}

fn side<'a>(which: Which, sides: &'a Sides) -> &'a str {
    match which {
        Which::Baseline => sides.baseline,
        Which::Current | Which::Both => sides.current,
    }
}

/// Why a benchmark was not compared, in words.
pub fn why(n: &NotCompared, sides: &Sides) -> String {
    let (one, many) = counted(&n.metric);
    match &n.why {
        Why::Absent(Which::Both) => "in neither side".into(),
        Why::Absent(w) => format!("not in {}", side(*w, sides)),
        Why::Duplicated {
            side: Which::Both,
            copies,
        } => format!(
            "appears more than once ({copies} times) in both {} and {}: ambiguous",
            sides.baseline, sides.current
        ),
        Why::Duplicated { side: w, copies } => format!(
            "appears {copies} times in {}: ambiguous, whichever were compared the other would \
             go unjudged",
            side(*w, sides)
        ),
        Why::TooFew {
            side: w,
            need,
            have,
            timed_out,
            failed,
            ended,
        } => {
            let mut what = Vec::new();
            if *timed_out > 0 {
                what.push(format!("{timed_out} timed out"));
            }
            if *failed > 0 {
                what.push(format!("{failed} failed"));
            }
            if let Some(e) = ended {
                what.push(format!("the session {}", ended_words(e)));
            }
            let details = if what.is_empty() {
                String::new()
            } else {
                format!(" ({})", what.join(", "))
            };
            match w {
                Which::Both => format!(
                    "{} and {} have fewer {many} than the {need} a side the comparison needs{details}",
                    sides.baseline, sides.current
                ),
                _ => format!(
                    "{} has {have} {} where the comparison needs {need} a side{details}",
                    side(*w, sides),
                    if *have == 1 { one } else { many },
                ),
            }
        }
        Why::NotFinite => "its values are not finite numbers".into(),
        Why::NotStored(w) => format!(
            "{} {many} are not stored (run before cmdscope kept them, store schema 6)",
            match w {
                Which::Both => "both sides'".to_string(),
                _ => format!("{}'s", side(*w, sides)),
            }
        ),
        Why::PartitionMissing { status, .. } => {
            format!("{} lacks this partition ({status})", sides.current)
        }
    }
}

fn ended_words(status: &str) -> String {
    match status {
        "interrupted" => "was interrupted".into(),
        "failed" => "failed".into(),
        "running" | "unfinished" => "did not finish (killed?)".into(),
        other => format!("ended {other}"),
    }
}

/// The name a line gives a row: the benchmark, with its metric where the
/// gate compares more than one.
fn named(n: &NotCompared, with_metric: bool) -> String {
    if with_metric {
        format!("{} ({})", n.benchmark, n.metric.replace('_', " "))
    } else {
        n.benchmark.clone()
    }
}

/// One line per row not compared: "`A`: not compared: session #5 has 0
/// successful runs of the 3 a side the comparison needs (5 timed out)",
/// those allowed by `--allow-missing` said so.
pub fn lines(o: &Outcome, sides: &Sides, with_metric: bool) -> Vec<String> {
    o.not_compared
        .iter()
        .map(|n| {
            format!(
                "{}: not compared{}: {}",
                named(n, with_metric),
                if n.allowed {
                    " (allowed by --allow-missing)"
                } else {
                    ""
                },
                why(n, sides)
            )
        })
        .collect()
}

/// The counts every gate's header gives: "3 compared, 1 inconclusive, 1
/// not compared (allowed by --allow-missing)"; `unit` names a compared row
/// ("benchmark", "comparison").
pub fn counts(o: &Outcome, unit: (&str, &str)) -> String {
    let mut parts = vec![
        format!("{} compared", plural(o.compared, unit.0, unit.1)),
        format!("{} inconclusive", o.inconclusive),
    ];
    let (failing, allowed) = (o.unexcused().count(), o.excused());
    if failing > 0 {
        parts.push(format!("{failing} not compared"));
    }
    if allowed > 0 {
        parts.push(format!(
            "{allowed} not compared, allowed by --allow-missing"
        ));
    }
    parts.join(", ")
}

/// The headline when nothing regressed: why the gate fails anyway, or
/// that it passes, never "nothing slower" when nothing was decided.
/// `nothing` is the passing words ("Nothing significantly slower by more
/// than 5%").
pub fn quiet_headline(o: &Outcome, nothing: &str, unit: (&str, &str)) -> String {
    let counts = counts(o, unit);
    let failing = o.unexcused().count();
    if failing > 0 {
        format!("The gate fails: {failing} not compared ({counts})")
    } else if o.compared == 0 {
        format!("The gate fails: nothing was compared ({counts})")
    } else if o.failing_inconclusive() > 0 {
        format!(
            "The gate fails: {} inconclusive, with --inconclusive fail ({counts})",
            o.inconclusive
        )
    } else if o.decided() == 0 {
        format!("No verdict: every comparison is inconclusive ({counts})")
    } else {
        format!("{nothing} ({counts})")
    }
}

/// The note for `--allow-missing` names that match no benchmark of either
/// side (a typo, or a benchmark gone from both).
pub fn unmatched_note(names: &[&str]) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    Some(format!(
        "--allow-missing {} names no benchmark of either side.",
        quoted.join(", ")
    ))
}

/// The gate of `changes --fail-on-new-regression` after its report: the
/// headline, then a line per benchmark not compared.
pub fn section(o: &Outcome, sides: &Sides, pct: f64) -> String {
    let pct = crate::units::trimmed(pct, 2);
    const UNIT: (&str, &str) = ("benchmark", "benchmarks");
    let headline = if o.regressions > 0 {
        format!(
            "{} significantly slower than the sessions before by more than {pct}% ({})",
            plural(o.regressions, "benchmark is", "benchmarks are"),
            counts(o, UNIT)
        )
    } else {
        quiet_headline(o, &format!("No new regression beyond {pct}%"), UNIT)
    };
    let mut out = format!("gate: {headline}\n");
    for l in lines(o, sides, false) {
        out.push_str("  ");
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// [`section`]'s text as Markdown: the headline in bold, a list item per
/// benchmark not compared.
pub fn markdown(section: &str) -> String {
    let mut out = String::from("\n");
    for (i, l) in section.lines().enumerate() {
        if i == 0 {
            let _ = write!(out, "**{}**\n\n", crate::report::markdown::cell(l));
        } else {
            let _ = writeln!(out, "- {}", crate::report::markdown::cell(l.trim()));
        }
    }
    out
}
