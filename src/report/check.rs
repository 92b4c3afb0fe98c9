//! `check`'s words: the comparison of the current session with the
//! baseline as Markdown (for a pull-request comment) or text, and
//! `check --against history` in both. Formatting only: the rows are
//! `analysis::check`'s.

use std::fmt::Write as _;

use crate::analysis::changes::Change;
use crate::analysis::check::{failing_against_history, HistoryRow, Row, MIN_HISTORY};
use crate::analysis::comparison::{
    format_confidence, format_p, format_p_bare, SessionVariation, Verdict,
};
use crate::report::changes::{change_text, median_text};
use crate::report::markdown::code;
use crate::report::table::{Cell, Column, Table};
use crate::store::StoredSession;

fn verdict_text(r: &Row, pct: f64) -> String {
    match r.result.verdict {
        _ if r.regression => format!("❌ slower by more than {}%", crate::units::trimmed(pct, 2)),
        Verdict::Slower => format!(
            "slower, not significantly by more than {}%",
            crate::units::trimmed(pct, 2)
        ),
        Verdict::Faster => "✅ faster".into(),
        other => other.words().into(),
    }
}

/// What the rows are about: the two sessions, the gate and the level, and
/// the benchmarks only one side has.
pub struct Context<'a> {
    pub current: &'a StoredSession,
    pub baseline: &'a StoredSession,
    pub pct: f64,
    pub alpha: f64,
    pub only_current: &'a [String],
    pub only_baseline: &'a [String],
    /// Said after the table: how the settings compared with were found.
    pub notes: &'a [String],
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
        if let Some(own) = r.result.own_note() {
            lines.push(format!("{}: {own}", r.benchmark));
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

fn headline(rows: &[Row], ctx: &Context) -> String {
    let n = rows.iter().filter(|r| r.regression).count();
    if n > 0 {
        format!(
            "{n} benchmark{} significantly slower by more than {}%",
            if n == 1 { " is" } else { "s are" },
            crate::units::trimmed(ctx.pct, 2)
        )
    } else {
        format!(
            "Nothing significantly slower by more than {}% ({} benchmark{} compared)",
            crate::units::trimmed(ctx.pct, 2),
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

/// Longer benchmark names are cut in text, so the numbers stay in view.
const NAME_WIDTH: usize = 50;

/// The rows as a table. Markdown's cells say each side's number of runs,
/// which text leaves out to keep a row on one line.
fn table(rows: &[Row], ctx: &Context, markdown: bool) -> Table {
    let conf = confidence(rows);
    let mut t = Table::new(vec![
        Column::left("benchmark")
            .markdown_header("Benchmark")
            .max_width(NAME_WIDTH),
        Column::right("baseline")
            .markdown_header("Baseline")
            .min_width(12),
        Column::right("current")
            .markdown_header("Current")
            .min_width(12),
        Column::right(format!("change [{conf}]"))
            .markdown_header(format!("Change [{conf}]"))
            .min_width(28),
        Column::right("p").min_width(8),
        Column::left("verdict").markdown_header("Verdict"),
    ]);
    let side = |median: Option<f64>, n: usize| -> Cell {
        if markdown {
            format!("{} (n={n})", time(median)).into()
        } else {
            time(median).into()
        }
    };
    for r in rows {
        t.row(vec![
            Cell::code(&r.benchmark),
            side(r.base_median, r.base_n),
            side(r.cand_median, r.cand_n),
            change(r).into(),
            p_text(r).into(),
            verdict_text(r, ctx.pct).into(),
        ]);
    }
    t.notes(footer(rows).into_iter().chain(ctx.notes.iter().cloned()));
    t
}

pub fn markdown(rows: &[Row], ctx: &Context) -> String {
    let about = Cell::Parts(vec![
        format!(
            "Current: {} · Baseline: {} · Machine: {} (",
            describe(ctx.current),
            describe(ctx.baseline),
            ctx.current.machine.hostname
        )
        .into(),
        Cell::code(crate::store::short_fingerprint(&ctx.current.fingerprint)),
        format!(
            ") · wall time, unpaired tests, Bonferroni over {} benchmark{}, alpha {}",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            ctx.alpha
        )
        .into(),
    ]);
    let mut out = table(rows, ctx, true)
        .title(format!("cmdscope check: {}", headline(rows, ctx)))
        .intro(about)
        .markdown();
    for (what, list) in [
        ("Only in the current results", ctx.only_current),
        ("Only in the baseline", ctx.only_baseline),
    ] {
        if !list.is_empty() {
            let names: Vec<String> = list.iter().map(|n| code(n)).collect();
            let _ = writeln!(out, "\n{what}: {}", names.join(", "));
        }
    }
    out
}

pub fn text(rows: &[Row], ctx: &Context) -> String {
    let mut out = table(rows, ctx, false)
        .title(headline(rows, ctx))
        .intro(format!("current:  {}", describe(ctx.current)))
        .intro(format!("baseline: {}", describe(ctx.baseline)))
        .intro("")
        .text();
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

/// What `check --against history` reports on: the checked session, the
/// gate, the level and the detection's window.
pub struct HistoryContext<'a> {
    pub current: &'a StoredSession,
    pub pct: f64,
    pub alpha: f64,
    pub window: usize,
    /// Said after the table: how the settings compared with were found.
    pub notes: &'a [String],
}

/// `check --against history` as Markdown (`markdown`) or text.
pub fn against_history(rows: &[HistoryRow], ctx: &HistoryContext, markdown: bool) -> String {
    let current = ctx.current;
    let failing = failing_against_history(rows, ctx.pct);
    // The gate's percentage as check against a baseline writes it.
    let pct = crate::units::trimmed(ctx.pct, 2);
    let headline = if failing > 0 {
        format!(
            "{failing} benchmark{} significantly slower than its history by more than {}%",
            if failing == 1 { " is" } else { "s are" },
            pct
        )
    } else {
        format!(
            "No significant slowdown beyond {}% against history ({} benchmark{})",
            pct,
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )
    };
    let label_text: Vec<String> = current
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let about = format!(
        "session #{} ({}{}{}) on {} [{}]; each benchmark against the sessions since its last change point (at most {}), runs compared with the session-to-session variation included, Bonferroni over {} benchmark{}, alpha {}",
        current.id,
        current.started.replace('T', " "),
        if label_text.is_empty() { "" } else { ", " },
        label_text.join(" "),
        current.machine.hostname,
        crate::store::short_fingerprint(&current.fingerprint),
        ctx.window,
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        ctx.alpha
    );
    let verdict = |c: &Change| {
        if c.fails_gate(ctx.pct) {
            format!("❌ slower by more than {pct}%")
        } else {
            c.comparison.verdict.words().to_string()
        }
    };
    let mut t = Table::new(vec![
        Column::left("Benchmark"),
        Column::right("History").label("history"),
        Column::right("Current").label("current"),
        Column::right("Change").label("change"),
        Column::right("p"),
        Column::left("Verdict"),
    ]);
    for r in rows {
        let cells = match (&r.history, &r.change) {
            (Some(h), Some(c)) => [
                format!(
                    "{} ({} sessions)",
                    median_text(h, &c.before),
                    c.before.last + 1 - c.before.first
                ),
                median_text(h, &c.after),
                change_text(c),
                format_p(c.comparison.p_value),
                verdict(c),
            ],
            _ => [
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "no history before this session".into(),
            ],
        };
        let name = std::iter::once(Cell::code(&r.benchmark));
        t.row(name.chain(cells.map(Cell::from)).collect());
    }
    t.notes(ctx.notes.iter().cloned());
    if markdown {
        t.title(format!("cmdscope check: {headline}"))
            .intro(about)
            .markdown()
    } else {
        t.title(headline).intro(about).records()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::check::{compare, Pair};

    fn noisy(center: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| center * (1.0 + 0.01 * ((i * 7 % 11) as f64 - 5.0) / 5.0))
            .collect()
    }

    #[test]
    fn the_footer_says_which_intervals_hold_session_variation() {
        let p = |history| Pair {
            name: "x".into(),
            base: noisy(0.1, 20),
            cand: noisy(0.108, 20),
            history,
            precision: crate::analysis::comparison::DEFAULT_PRECISION,
        };
        let narrow = &compare(&[p(None)], 0.05, 5.0)[0];
        let wide = &compare(&[p(Some((0.05, 8)))], 0.05, 5.0)[0];
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
