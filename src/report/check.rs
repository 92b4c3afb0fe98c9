//! `check`'s words: the comparison of the current session with the
//! baseline as Markdown (for a pull-request comment) or text, and
//! `check --against history` in both. Formatting only: the rows are
//! `analysis::check`'s.

use std::fmt::Write as _;

use crate::analysis::changes::Change;
use crate::analysis::check::{HistoryRow, Measure, Row, MIN_HISTORY};
use crate::analysis::comparison::{SessionVariation, Verdict};
use crate::analysis::gate::Outcome;
use crate::report::changes::{change_text, median_text};
use crate::report::gate;
use crate::report::markdown::code;
use crate::report::table::{Cell, Column, Table};
use crate::report::Words;
use crate::store::StoredSession;
use crate::units::{format_confidence, format_p, format_p_bare};

fn verdict_text(r: &Row, pct: f64, outcome: &Outcome) -> String {
    if !r.gate.is_compared() {
        return not_compared_verdict(r, outcome);
    }
    if r.measure == Measure::Throughput {
        return throughput_verdict(r, pct);
    }
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

/// A row the gate could not compare: it fails, unless `--allow-missing`
/// allowed it (the line below the table says why).
fn not_compared_verdict(r: &Row, outcome: &Outcome) -> String {
    let allowed = outcome
        .not_compared
        .iter()
        .any(|n| n.allowed && n.benchmark == r.benchmark && n.metric == r.measure.name());
    if allowed {
        "not compared (allowed)".into()
    } else {
        "❌ not compared".into()
    }
}

/// A throughput row's verdict. The engine compared seconds per
/// completion: its "slower" is the lower throughput.
fn throughput_verdict(r: &Row, pct: f64) -> String {
    let pct = crate::units::trimmed(pct, 2);
    match r.result.verdict {
        _ if r.regression => format!("❌ throughput lower by more than {pct}%"),
        Verdict::Slower => format!("lower, not significantly by more than {pct}%"),
        Verdict::Faster => "✅ higher".into(),
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
    /// What the gate found (`analysis::gate`): the counts of the headline
    /// and the benchmarks not compared.
    pub outcome: &'a Outcome,
    /// What the lines of benchmarks not compared call the baseline and the
    /// current results ("the baseline session #3", "the current run 'r7'").
    pub names: (String, String),
    /// Said after the table: how the settings compared with were found.
    pub notes: &'a [String],
}

/// A median in the row's unit: a time, or completions per second.
fn value(r: &Row, v: Option<f64>) -> String {
    match (r.measure, v) {
        (Measure::Run(m), Some(v)) => crate::units::quantity(v, m.unit()),
        (Measure::Throughput, Some(v)) => format!("{}/s", crate::units::significant(v, 4)),
        (_, None) => "–".into(),
    }
}

fn change(r: &Row) -> String {
    let a = &r.result;
    if r.measure == Measure::Throughput {
        // The throughput ratio, current / baseline: the inverse of the
        // engine's ratio of seconds per completion.
        let x = |v: f64| format!("{:.2}x", 1.0 / v);
        return match (a.ratio, a.ratio_ci) {
            _ if !r.gate.is_compared() => "–".into(),
            (ratio, [lo, hi]) if ratio > 0.0 && lo > 0.0 && hi.is_finite() => {
                format!("{} [{} … {}]", x(ratio), x(hi), x(lo))
            }
            (ratio, _) if ratio > 0.0 && ratio.is_finite() => x(ratio),
            _ => "–".into(),
        };
    }
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
    if p.is_nan() || !r.gate.is_compared() {
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
fn footer(rows: &[Row], pct: f64) -> Vec<String> {
    let mut lines = Vec::new();
    // A row not compared has its line below the table instead.
    for r in rows.iter().filter(|r| r.gate.is_compared()) {
        if let Some(own) = own_note(r) {
            lines.push(format!("{}: {own}", named(r)));
        }
    }
    let widened: Vec<String> = rows
        .iter()
        .filter_map(|r| match (r.result.session_variation, r.history) {
            (SessionVariation::Included { sigma, .. }, Some((_, k))) => Some(format!(
                "{} (sd {:.1}% from {k} baseline sessions)",
                named(r),
                sigma * 100.0
            )),
            _ => None,
        })
        .collect();
    // Without history, or with too few runs for an interval to widen.
    let missing = rows
        .iter()
        .filter(|r| {
            r.gate.is_compared()
                && r.result.session_variation == SessionVariation::NotIncluded
                && r.history.is_none()
        })
        .count();
    let throughput = has_throughput(rows);
    let unit = if throughput {
        "comparison"
    } else {
        "benchmark"
    };
    if !widened.is_empty() {
        lines.push(format!(
            "Intervals include session-to-session variation for {}.",
            widened.join(", ")
        ));
    }
    if missing > 0 {
        lines.push(format!(
            "The two sessions' runs are unpaired, and session-to-session variation is not in the \
             interval{} of {missing} {unit}{} (fewer than {MIN_HISTORY} baseline sessions \
             in the store to estimate it).",
            if missing == 1 { "" } else { "s" },
            if missing == 1 { "" } else { "s" }
        ));
    }
    if throughput {
        lines.push(format!(
            "Throughput: completions per second while all instances were busy, one value per \
             batch, the batches of the two sessions unpaired; its change is \
             the throughput ratio, current / baseline (0.80x: 20% fewer completions per \
             second), and it fails the gate when the interval's upper end is below {:.2}x.",
            1.0 - pct / 100.0
        ));
    }
    lines
}

/// The engine's note on a row. An inconclusive throughput row's interval
/// is said as the throughput ratio's, as its change column says it: the
/// engine's own words are about seconds per completion and runs.
fn own_note(r: &Row) -> Option<String> {
    let c = &r.result;
    let [lo, hi] = c.ratio_ci;
    let interval = lo > 0.0 && hi.is_finite();
    if matches!(r.measure, Measure::Run(_)) || c.verdict != Verdict::Inconclusive || !interval {
        return c.own_note().map(|n| Words(&n).to_string());
    }
    Some(format!(
        "inconclusive: the throughput ratio's {} is {:.2}x–{:.2}x and the test gives {}, which \
         tell neither a difference nor none within ±{} %; more batches would decide",
        format_confidence(c.confidence),
        1.0 / hi,
        1.0 / lo,
        format_p(c.p_value),
        crate::units::trimmed(c.precision * 100.0, 2)
    ))
}

/// The row's benchmark, with the measure for a throughput row.
fn named(r: &Row) -> String {
    match r.measure {
        Measure::Run(_) => r.benchmark.clone(),
        Measure::Throughput => format!("{} (throughput)", r.benchmark),
    }
}

fn has_throughput(rows: &[Row]) -> bool {
    rows.iter().any(|r| r.measure == Measure::Throughput)
}

/// The distinct benchmarks among `rows`.
fn benchmarks<'a>(rows: impl Iterator<Item = &'a Row>) -> usize {
    let mut names: Vec<&str> = rows.map(|r| r.benchmark.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// What the headline counts a compared row as.
const BENCHMARKS: (&str, &str) = ("benchmark", "benchmarks");
const COMPARISONS: (&str, &str) = ("comparison", "comparisons");

fn headline(rows: &[Row], ctx: &Context) -> String {
    if has_throughput(rows) {
        return throughput_headline(rows, ctx);
    }
    let n = ctx.outcome.regressions;
    let pct = crate::units::trimmed(ctx.pct, 2);
    if n > 0 {
        format!(
            "{n} benchmark{} significantly slower by more than {pct}% ({})",
            if n == 1 { " is" } else { "s are" },
            gate::counts(ctx.outcome, BENCHMARKS)
        )
    } else {
        gate::quiet_headline(
            ctx.outcome,
            &format!("Nothing significantly slower by more than {pct}%"),
            BENCHMARKS,
        )
    }
}

/// The headline when some benchmarks ran in concurrency mode: wall time
/// and throughput named apart.
fn throughput_headline(rows: &[Row], ctx: &Context) -> String {
    let pct = crate::units::trimmed(ctx.pct, 2);
    let failing = |m: Measure| {
        rows.iter()
            .filter(|r| r.measure == m && r.regression)
            .count()
    };
    let (slower, lower) = (failing(Measure::WALL_TIME), failing(Measure::Throughput));
    let n = benchmarks(rows.iter().filter(|r| r.regression));
    if n > 0 {
        format!(
            "{n} benchmark{} significantly worse by more than {pct}% (wall time slower: \
             {slower}, throughput lower: {lower}; {})",
            if n == 1 { " is" } else { "s are" },
            gate::counts(ctx.outcome, COMPARISONS)
        )
    } else {
        gate::quiet_headline(
            ctx.outcome,
            &format!("Nothing significantly worse by more than {pct}%"),
            COMPARISONS,
        )
    }
}

/// The lines naming each benchmark not compared, after the table.
fn not_compared(ctx: &Context, rows: &[Row]) -> Vec<String> {
    let sides = gate::Sides {
        baseline: &ctx.names.0,
        current: &ctx.names.1,
    };
    gate::lines(ctx.outcome, &sides, has_throughput(rows))
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
    let throughput = has_throughput(rows);
    let mut columns = vec![Column::left("benchmark")
        .markdown_header("Benchmark")
        .max_width(NAME_WIDTH)];
    // Only when a row is not wall time, so other outputs stay as they were.
    if throughput {
        columns.push(Column::left("metric").markdown_header("Metric"));
    }
    columns.extend([
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
    let mut t = Table::new(columns);
    let side = |r: &Row, median: Option<f64>, n: usize| -> Cell {
        if markdown && r.measure == Measure::Throughput {
            format!("{} (n={n} batches)", value(r, median)).into()
        } else if markdown {
            format!("{} (n={n})", value(r, median)).into()
        } else {
            value(r, median).into()
        }
    };
    for r in rows {
        let mut cells = vec![Cell::code(&r.benchmark)];
        if throughput {
            cells.push(measure_words(r.measure).into());
        }
        cells.extend([
            side(r, r.base_median, r.base_n),
            side(r, r.cand_median, r.cand_n),
            change(r).into(),
            p_text(r).into(),
            verdict_text(r, ctx.pct, ctx.outcome).into(),
        ]);
        t.row(cells);
    }
    t.notes(
        not_compared(ctx, rows)
            .into_iter()
            .chain(footer(rows, ctx.pct))
            .chain(ctx.notes.iter().cloned()),
    );
    t
}

/// What a row compares, as its column and the header name it.
fn measure_words(m: Measure) -> &'static str {
    match m {
        Measure::Run(crate::metrics::Metric::WallTime) => "wall time",
        Measure::Run(m) => m.name(),
        Measure::Throughput => "throughput",
    }
}

/// The header's words for what the rows compare, each once in the rows'
/// order ("wall time and throughput", "sim_estimated_cycles"): the
/// header must not say wall time over a table of counts.
fn measures_compared(rows: &[Row]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        let w = measure_words(r.measure);
        if !names.contains(&w) {
            names.push(w);
        }
    }
    if names.is_empty() {
        names.push(measure_words(Measure::WALL_TIME));
    }
    names.join(" and ")
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
        if has_throughput(rows) {
            let m = rows.first().map_or(1, |r| r.result.family);
            format!(
                ") · {}, unpaired tests, Bonferroni over {m} comparison{}, alpha {}",
                measures_compared(rows),
                if m == 1 { "" } else { "s" },
                ctx.alpha
            )
        } else {
            format!(
                ") · {}, unpaired tests, Bonferroni over {} benchmark{}, alpha {}",
                measures_compared(rows),
                rows.len(),
                if rows.len() == 1 { "" } else { "s" },
                ctx.alpha
            )
        }
        .into(),
    ]);
    let mut out = table(rows, ctx, true)
        .title(format!("cmdscope check: {}", headline(rows, ctx)))
        .intro(about)
        .markdown();
    if !ctx.only_current.is_empty() {
        let names: Vec<String> = ctx.only_current.iter().map(|n| code(n)).collect();
        let _ = writeln!(out, "\nOnly in the current results: {}", names.join(", "));
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
    if !ctx.only_current.is_empty() {
        let _ = writeln!(
            out,
            "only in the current results: {}",
            ctx.only_current.join(", ")
        );
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
    /// The benchmarks of the session checked: the Bonferroni correction's
    /// count (a benchmark it lacks is a row, not a test).
    pub tested: usize,
    /// What the gate found (`analysis::gate`).
    pub outcome: &'a Outcome,
    /// Said after the table: how the settings compared with were found.
    pub notes: &'a [String],
}

/// `check --against history` as Markdown (`markdown`) or text.
pub fn against_history(rows: &[HistoryRow], ctx: &HistoryContext, markdown: bool) -> String {
    let current = ctx.current;
    // The gate's percentage as check against a baseline writes it.
    let pct = crate::units::trimmed(ctx.pct, 2);
    let o = ctx.outcome;
    let headline = if o.regressions > 0 {
        format!(
            "{} benchmark{} significantly slower than its history by more than {}% ({})",
            o.regressions,
            if o.regressions == 1 { " is" } else { "s are" },
            pct,
            gate::counts(o, BENCHMARKS)
        )
    } else {
        gate::quiet_headline(
            o,
            &format!("No significant slowdown beyond {pct}% against history"),
            BENCHMARKS,
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
        ctx.tested,
        if ctx.tested == 1 { "" } else { "s" },
        ctx.alpha
    );
    // A benchmark the gate could not compare says so, whatever the engine's verdict.
    let not_compared = |name: &str| -> Option<String> {
        let n = o.not_compared.iter().find(|n| n.benchmark == name)?;
        Some(
            if n.allowed {
                "not compared (allowed)"
            } else {
                "❌ not compared"
            }
            .into(),
        )
    };
    let verdict = |c: &Change, name: &str| {
        if let Some(text) = not_compared(name) {
            text
        } else if c.fails_gate(ctx.pct) {
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
        if let (Some(h), Some(d)) = (&r.history, &r.drift) {
            // A slide still going on: its own row, its size so far.
            let c = &d.change;
            let cells = [
                format!("{} (before the drift)", median_text(h, &c.before),),
                median_text(h, &c.after),
                change_text(h, c),
                format_p(c.comparison.p_value),
                format!(
                    "drift over {} sessions, still going on: {}",
                    d.end + 1 - d.start,
                    verdict(c, &r.benchmark)
                ),
            ];
            let name = std::iter::once(Cell::code(&r.benchmark));
            t.row(name.chain(cells.map(Cell::from)).collect());
        }
        let cells = match (&r.history, &r.change) {
            (Some(h), Some(c)) => [
                format!(
                    "{} ({} sessions)",
                    median_text(h, &c.before),
                    c.before.last + 1 - c.before.first
                ),
                median_text(h, &c.after),
                change_text(h, c),
                format_p(c.comparison.p_value),
                verdict(c, &r.benchmark),
            ],
            _ => [
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                not_compared(&r.benchmark)
                    .unwrap_or_else(|| "no history before this session".into()),
            ],
        };
        let name = std::iter::once(Cell::code(&r.benchmark));
        t.row(name.chain(cells.map(Cell::from)).collect());
    }
    let sides = gate::Sides {
        baseline: "its history",
        current: "this session",
    };
    t.notes(
        gate::lines(o, &sides, false)
            .into_iter()
            .chain(ctx.notes.iter().cloned()),
    );
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
    fn a_throughput_row_speaks_of_the_throughput_ratio() {
        use crate::analysis::check::Measure;
        let pair = |name: &str, base: Vec<f64>, cand: Vec<f64>, measure| Pair {
            name: name.into(),
            measure,
            sides: (
                crate::analysis::gate::Side::of(0),
                crate::analysis::gate::Side::of(0),
            ),
            base,
            cand,
            history: None,
            precision: crate::analysis::comparison::DEFAULT_PRECISION,
        };
        // Seconds per completion 1.25 times the baseline's: 0.80x the
        // completions per second; and a spread too wide to decide.
        let wide: Vec<f64> = (0..6).map(|i| 0.02 * (1.0 + 0.1 * i as f64)).collect();
        let rows = compare(
            &[
                pair("x", noisy(0.1, 20), noisy(0.1, 20), Measure::WALL_TIME),
                pair("x", noisy(0.02, 8), noisy(0.025, 8), Measure::Throughput),
                pair("y", wide.clone(), wide, Measure::Throughput),
            ],
            0.05,
            10.0,
        );
        assert!(rows[1].regression, "{:?}", rows[1]);
        let [lo, hi] = rows[1].result.ratio_ci;
        assert_eq!(
            change(&rows[1]),
            format!("0.80x [{:.2}x … {:.2}x]", 1.0 / hi, 1.0 / lo)
        );
        assert_eq!(value(&rows[1], rows[1].base_median), "49.95/s");
        assert_eq!(
            verdict_text(&rows[1], 10.0, &Outcome::default()),
            "❌ throughput lower by more than 10%"
        );
        assert_eq!(rows[2].result.verdict, Verdict::Inconclusive);
        let notes = footer(&rows, 10.0).join("\n");
        assert!(
            notes.contains("y (throughput): inconclusive: the throughput ratio's 98.3 % CI is"),
            "{notes}"
        );
        // Not the engine's words about seconds per completion and runs.
        assert!(!notes.contains("y (throughput): the"), "{notes}");
        assert!(notes.contains("below 0.90x"), "{notes}");
        assert!(
            notes.contains("session-to-session variation is not in the intervals of 3 comparisons"),
            "{notes}"
        );
    }

    #[test]
    fn the_footer_says_which_intervals_hold_session_variation() {
        let p = |history| Pair {
            name: "x".into(),
            measure: crate::analysis::check::Measure::WALL_TIME,
            sides: (
                crate::analysis::gate::Side::of(0),
                crate::analysis::gate::Side::of(0),
            ),
            base: noisy(0.1, 20),
            cand: noisy(0.108, 20),
            history,
            precision: crate::analysis::comparison::DEFAULT_PRECISION,
        };
        let narrow = &compare(&[p(None)], 0.05, 5.0)[0];
        let wide = &compare(&[p(Some((0.05, 8)))], 0.05, 5.0)[0];
        let text = footer(&[narrow.clone(), wide.clone()], 5.0).join("\n");
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
