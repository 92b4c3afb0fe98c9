//! The renderings of `cmdscope compare`'s tables (`analysis::tables`):
//! aligned text, Markdown, CSV and JSON, with the footnotes, the legend and
//! the gate's lines. Formatting only: the numbers, verdicts and gate marks
//! all come computed in the model; nothing here computes a statistic.
//!
//! A cell's interval is shown as benchstat shows it, `± x%`: the larger
//! distance from the median to an interval end. Where the data cannot
//! support a claim the table says so in a footnote ("need >= 6 samples for
//! 95% interval").

use std::fmt::Write as _;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::analysis::comparison::{self as engine, Verdict};
use crate::analysis::tables::{
    Cell, CompareOptions, Comparison, MetricTable, TableNote, Tables, Unjudged,
};
use crate::error::Error;
use crate::metrics::Metric;
use crate::report::comparison::SESSION_NOTE;
use crate::report::gate;
use crate::report::markdown;
use crate::report::table::{self, Align, Column, Footnotes, Rule, Table};
use crate::stats::StatsError;
use crate::units::{self, format_confidence, format_p};

/// One line per comparison that failed the gate: metric, benchmark,
/// candidate and change, with the limit.
pub fn gate_failures(tables: &Tables) -> Vec<String> {
    let Some(limit) = tables.options.fail_if_slower else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    for t in &tables.tables {
        for r in &t.rows {
            for (ci, c) in r.comparisons.iter().enumerate() {
                let Some(c) = c else { continue };
                if c.gate_failed {
                    failures.push(format!(
                        "{}  {}  {}: {} ({} {}, {}), limit +{}%",
                        t.metric,
                        r.label,
                        t.columns[ci],
                        fmt_delta(c.change_pct()),
                        format_confidence(c.result.confidence),
                        fmt_ratio_ci(c.result.ratio_ci),
                        format_p(c.result.p_value),
                        units::trimmed(limit, 2)
                    ));
                }
            }
        }
    }
    failures
}

fn level_text(level: f64) -> String {
    units::trimmed(level * 100.0, 3)
}

/// A plain refusal for a median interval that could not be computed.
fn refusal(e: &StatsError, level: f64) -> String {
    match e {
        StatsError::TooFewSamples { needed, .. } => {
            format!(
                "need >= {needed} samples for {}% interval",
                level_text(level)
            )
        }
        other => other.to_string(),
    }
}

/// "1.052–1.113": a ratio interval with enough digits that its ends differ.
fn fmt_ratio_ci(ci: [f64; 2]) -> String {
    format!(
        "{}–{}",
        units::significant(ci[0], 4),
        units::significant(ci[1], 4)
    )
}

// ---------------------------------------------------------------------------
// Human formatting
// ---------------------------------------------------------------------------

fn fmt_delta(d: Option<f64>) -> String {
    match d {
        Some(d) => format!("{d:+.2}%"),
        None => "?".into(),
    }
}

/// The interval as benchstat shows it: `± x%`, the larger distance from the
/// median to an end of the interval.
fn fmt_spread(c: &Cell) -> Option<String> {
    let (lo, hi) = c.ci?;
    let dev = (hi - c.median).max(c.median - lo).max(0.0);
    if dev == 0.0 {
        return Some("0%".into());
    }
    if c.median == 0.0 {
        return Some("∞".into());
    }
    let pct = dev / c.median.abs() * 100.0;
    Some(if pct < 1.0 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.0}%")
    })
}

const MISSING: &str = "—";
const MISSING_NOTE: &str = "— benchmark or metric not in that file";

/// One metric's table, laid out for the text and Markdown renderers: a
/// group of columns per file (median and n; for a candidate the change
/// and the ratio), a row per benchmark, the geomean, the footnotes.
fn lay_out(t: &MetricTable, level: f64) -> Table {
    let mut foot = Footnotes::default();
    let mut columns = vec![Column::left("").markdown_header("benchmark")];
    let mut groups = Vec::new();
    for (ci, source) in t.columns.iter().enumerate() {
        let width = if ci == 0 { 2 } else { 4 };
        groups.push((columns.len(), width, source.clone()));
        columns.push(Column::left("median").markdown_align(Align::Right));
        columns.push(Column::right("n"));
        if ci > 0 {
            columns.push(Column::left("vs base"));
            // Every row of a column shares one family, so one confidence.
            let confidence = t
                .rows
                .iter()
                .find_map(|r| r.comparisons[ci].as_ref())
                .map(|c| format_confidence(c.result.confidence));
            columns.push(Column::left(match confidence {
                Some(conf) => format!("ratio [{conf}]"),
                None => "ratio".into(),
            }));
        }
    }
    let mut table = Table::new(columns).title(title(t)).rule(Rule::Spaced);
    if let Some(c) = common_line(t) {
        table = table.intro(c);
    }
    for (start, len, source) in groups {
        table.group(start, len, source);
    }

    let mut any_missing = false;
    for r in &t.rows {
        let mut line: Vec<String> = Vec::new();
        for ci in 0..t.columns.len() {
            match &r.cells[ci] {
                Some(c) => {
                    let spread = match (fmt_spread(c), &c.ci_refusal) {
                        (Some(s), _) => s,
                        (None, Some(why)) => format!("∞{}", foot.mark(&refusal(why, level))),
                        (None, None) => "∞".into(),
                    };
                    line.push(format!("{} ± {spread}", units::compact(c.median, &t.unit)));
                    line.push(c.n.to_string());
                }
                None => {
                    any_missing = true;
                    line.push(MISSING.into());
                    line.push(String::new());
                }
            }
            if ci == 0 {
                continue;
            }
            match &r.comparisons[ci] {
                Some(c) => {
                    let notes: Vec<String> = c
                        .result
                        .own_note()
                        .map(|n| crate::report::Words(&n).to_string())
                        .into_iter()
                        .collect();
                    let marks = foot.marks(&notes);
                    let a = &c.result;
                    let p = if a.p_value.is_nan() {
                        String::new()
                    } else {
                        format!(" ({})", format_p(a.p_value).replace(' ', ""))
                    };
                    let vs = match a.verdict {
                        Verdict::Faster | Verdict::Slower => {
                            format!("{}{p}", fmt_delta(c.change_pct()))
                        }
                        v => format!("{}{p}", v.symbol()),
                    };
                    line.push(format!("{vs}{marks}"));
                    line.push(
                        if a.ratio.is_finite() && a.ratio_ci.iter().all(|x| x.is_finite()) {
                            format!(
                                "{} [{}, {}]",
                                units::significant(a.ratio, 4),
                                units::significant(a.ratio_ci[0], 4),
                                units::significant(a.ratio_ci[1], 4)
                            )
                        } else if a.ratio.is_finite() {
                            units::significant(a.ratio, 4)
                        } else {
                            MISSING.into()
                        },
                    );
                }
                None => {
                    line.push(String::new());
                    line.push(String::new());
                }
            }
        }
        let label = std::iter::once(table::Cell::code(&r.label));
        table.row(
            label
                .chain(line.into_iter().map(table::Cell::from))
                .collect(),
        );
    }
    if let Some(g) = &t.geomean {
        let mut line = vec!["geomean".to_owned()];
        for ci in 0..t.columns.len() {
            line.push(match g.values[ci] {
                Some(v) => units::compact(v, &t.unit),
                None => match &g.note {
                    Some(why) => format!("{MISSING}{}", foot.mark(why)),
                    None => MISSING.into(),
                },
            });
            line.push(String::new());
            if ci > 0 {
                line.push(match g.delta_pct[ci] {
                    Some(d) => fmt_delta(Some(d)),
                    None => MISSING.into(),
                });
                line.push(String::new());
            }
        }
        table.row(line.into_iter().map(table::Cell::from).collect());
    }

    let mut notes = foot.lines();
    if any_missing {
        notes.push(MISSING_NOTE.into());
    }
    if let Some(g) = &t.geomean {
        if g.rows < t.rows.len() {
            notes.push(format!(
                "geomean over the {} benchmarks present in every file",
                g.rows
            ));
        }
    }
    table.notes(notes);
    table
}

/// What the columns mean, printed once after the tables.
fn legend(tables: &[MetricTable], opts: &CompareOptions) -> Vec<String> {
    let Some(t) = tables.first() else {
        return Vec::new();
    };
    let level = level_text(opts.level);
    let mut lines = vec![format!(
        "±: {level}% interval of the median (distribution-free, from order statistics)"
    )];
    if t.columns.len() > 1 {
        lines.push(
            "vs base: change estimated by the test (Hodges-Lehmann with Mann-Whitney U, \
             or the difference of mean logs with Welch's t-test at small samples); \
             p: its two-sided p-value"
                .to_owned(),
        );
        lines.push(format!(
            "each of a column's m rows is tested at alpha/m (alpha = {}, Bonferroni) and its \
             ratio interval has confidence 1 - alpha/m; ~: no difference within ±{}; \
             ?: inconclusive (see the note)",
            opts.alpha,
            units::trimmed(opts.precision * 100.0, 3) + "%"
        ));
        lines.push(format!("ratio: candidate / baseline, with its interval; {SESSION_NOTE} (runs from different files are different sessions)"));
    }
    lines
}

fn title(t: &MetricTable) -> String {
    let label = Metric::from_name(&t.metric)
        .map(|m| format!(" ({})", m.label()))
        .unwrap_or_default();
    let unit = match t.unit.as_str() {
        "" => "count".to_owned(),
        u => u.to_owned(),
    };
    let direction = if t.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    format!("{}{label} [{unit}, {direction}]", t.metric)
}

fn common_line(t: &MetricTable) -> Option<String> {
    (!t.common_parameters.is_empty()).then(|| {
        let kv: Vec<String> = t
            .common_parameters
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("parameters: {}", kv.join(" "))
    })
}

/// The line a failed gate ends `compare` with (its error): why it failed.
pub fn gate_failure(all: &Tables) -> String {
    let failures = gate_failures(all);
    let first = gate_lines(all, &failures)
        .into_iter()
        .next()
        .unwrap_or_default();
    let why = first.strip_prefix("gate FAILED: ").unwrap_or(&first);
    format!("the gate failed: {}", why.trim_end_matches(':'))
}

/// One line per benchmark of the baseline the gate did not compare.
pub fn gate_not_compared(all: &Tables) -> Vec<String> {
    let baseline = all.tables.first().map_or("", |t| t.columns[0].as_str());
    let gated = all.tables.iter().filter(|t| t.is_gated()).count();
    let mut out = Vec::new();
    for (source, o) in &all.gate {
        let (b, c) = (format!("'{baseline}'"), format!("'{source}'"));
        let sides = gate::Sides {
            baseline: &b,
            current: &c,
        };
        out.extend(gate::lines(o, &sides, gated > 1));
    }
    out
}

/// The gate's section: its verdict with the counts of the gate's one rule
/// (`analysis::gate`) per candidate, the comparisons that failed it and
/// the benchmarks not compared.
fn gate_lines(all: &Tables, failures: &[String]) -> Vec<String> {
    let Some(limit) = all.options.fail_if_slower else {
        return Vec::new();
    };
    let limit = units::trimmed(limit, 2);
    const UNIT: (&str, &str) = ("comparison", "comparisons");
    let gated: Vec<&str> = (all.tables.iter())
        .filter(|t| t.is_gated() && t.columns.len() > 1)
        .map(|t| t.metric.as_str())
        .collect();
    let counts: Vec<String> = match all.gate.as_slice() {
        [(_, o)] => vec![gate::counts(o, UNIT)],
        many => (many.iter())
            .map(|(source, o)| format!("'{source}': {}", gate::counts(o, UNIT)))
            .collect(),
    };
    let counts = counts.join("; ");
    let detail = gate_not_compared(all);
    let outcomes = || all.gate.iter().map(|(_, o)| o);
    let mut lines = Vec::new();
    if all.gate_failed() {
        let mut why = Vec::new();
        if !failures.is_empty() {
            why.push(format!(
                "{} comparison{} significantly slower by more than +{limit}%",
                failures.len(),
                if failures.len() == 1 { "" } else { "s" }
            ));
        }
        let missing: usize = outcomes().map(|o| o.unexcused().count()).sum();
        if missing > 0 {
            why.push(format!("{missing} not compared"));
        }
        let inconclusive: usize = outcomes().map(|o| o.failing_inconclusive()).sum();
        if inconclusive > 0 {
            why.push(format!("{inconclusive} inconclusive (--inconclusive fail)"));
        }
        if outcomes().any(|o| o.compared == 0) {
            why.push("nothing compared".into());
        }
        lines.push(format!("gate FAILED: {} ({counts}):", why.join(", ")));
        lines.extend(failures.iter().map(|f| format!("  {f}")));
    } else if outcomes().all(|o| o.decided() == 0) {
        lines.push(format!(
            "gate passed, but nothing was decided in {}: every comparison is inconclusive \
             (limit +{limit}%; {counts})",
            gated.join(", ")
        ));
    } else {
        lines.push(format!(
            "gate passed: nothing significantly slower by more than +{limit}% in {} ({counts})",
            gated.join(", ")
        ));
    }
    lines.extend(detail.iter().map(|d| format!("  {d}")));
    lines
}

/// A remark about the whole comparison in words.
pub fn note(n: &TableNote) -> String {
    match n {
        TableNote::Repeated { source, benchmark } => {
            format!("{source}: benchmark '{benchmark}' appears more than once; using the first")
        }
        TableNote::OtherUnit {
            source,
            metric,
            unit,
            first,
        } => format!(
            "{source}: {metric} is in '{unit}' there but in '{first}' elsewhere; not compared"
        ),
        TableNote::NotCompared(metrics) => {
            let each: Vec<String> = metrics
                .iter()
                .map(|(name, wher)| format!("{name} (only in {})", wher.join(", ")))
                .collect();
            format!(
                "not compared, not in the baseline and another file: {}",
                each.join("; ")
            )
        }
    }
}

/// Why the gate judged nothing, one line for every candidate it judged
/// nothing of (the error `compare` refuses such a gate with).
pub fn unjudged(all: &[Unjudged]) -> String {
    let lines: Vec<String> = all.iter().map(unjudged_line).collect();
    lines.join("; ")
}

fn unjudged_line(u: &Unjudged) -> String {
    let m = match u {
        Unjudged::NoCandidate { baseline } => {
            return format!(
                "the gate needs a baseline and a candidate, only '{baseline}' was given"
            )
        }
        Unjudged::NothingCompared(m) => m,
    };
    let (baseline, candidate) = (&m.baseline, &m.candidate);
    let mut why = Vec::new();
    if !m.only_baseline.is_empty() {
        why.push(format!(
            "only in '{baseline}': {}",
            some_names(&m.only_baseline)
        ));
    }
    if !m.only_candidate.is_empty() {
        why.push(format!(
            "only in '{candidate}': {}",
            some_names(&m.only_candidate)
        ));
    }
    let (what, whose) = match &m.metric {
        Some(named) => (named.as_str(), named.as_str()),
        None => ("wall time (time_wall_clock, sec/op)", "wall-time"),
    };
    if !m.without_values.is_empty() {
        why.push(format!(
            "without {whose} runs in both: {}",
            some_names(&m.without_values)
        ));
    }
    if why.is_empty() {
        // Matched, with wall time on both sides, but not the same
        // metric in the same unit (Go's sec/op against time_wall_clock).
        why.push("their wall times are not the same metric in the same unit".into());
    }
    format!(
        "the gate compared nothing between '{baseline}' and '{candidate}': no benchmark with \
         {what} in both ({})",
        why.join("; ")
    )
}

/// Names, at most a few of them, for a one-line message.
fn some_names(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let quoted: Vec<String> = names.iter().take(SHOWN).map(|n| format!("'{n}'")).collect();
    match names.len().saturating_sub(SHOWN) {
        0 => quoted.join(", "),
        more => format!("{} and {more} more", quoted.join(", ")),
    }
}

/// Aligned columns for a terminal, then the legend, the notes and the gate.
pub fn render_text(all: &Tables) -> String {
    let (tables, notes, opts) = (&all.tables, &all.notes, &all.options);
    let failures = &gate_failures(all);
    let mut out = String::new();
    if tables.is_empty() {
        out.push_str("no metric to compare: no benchmark has samples of a metric in the baseline and another file\n");
    }
    for t in tables {
        out.push_str(&lay_out(t, opts.level).text());
        out.push('\n');
    }
    for l in legend(tables, opts) {
        let _ = writeln!(out, "{l}");
    }
    for n in notes {
        let _ = writeln!(out, "note: {}", note(n));
    }
    let gate = gate_lines(all, failures);
    if !gate.is_empty() {
        out.push('\n');
    }
    for g in gate {
        let _ = writeln!(out, "{g}");
    }
    out
}

/// One GitHub table per metric, then the legend, the notes and the gate.
pub fn render_markdown(all: &Tables) -> String {
    let (tables, notes, opts) = (&all.tables, &all.notes, &all.options);
    let failures = &gate_failures(all);
    let mut out = String::new();
    if tables.is_empty() {
        out.push_str("No metric to compare: no benchmark has samples of a metric in the baseline and another file.\n\n");
    }
    for t in tables {
        let table = lay_out(t, opts.level);
        out.push_str(&table.markdown());
        // The notes' paragraph, or the table, ends with a blank line.
        if !table.has_notes() {
            out.push('\n');
        }
        out.push('\n');
    }
    for l in legend(tables, opts) {
        let _ = writeln!(out, "{}  ", markdown::cell(&l));
    }
    for n in notes {
        let _ = writeln!(out, "Note: {}  ", markdown::cell(&note(n)));
    }
    let gate = gate_lines(all, failures);
    if !gate.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "**{}**\n", markdown::cell(&gate[0]));
        for f in &gate[1..] {
            let _ = writeln!(out, "- {}", markdown::cell(f.trim()));
        }
    }
    out
}

/// Why a row of a column has no comparison, or the analysis' note.
fn row_note(cmp: Option<&Comparison>, base: bool, cand: bool) -> Option<String> {
    match (cmp, base, cand) {
        (Some(c), ..) => c
            .result
            .note
            .as_ref()
            .map(|n| crate::report::Words(n).to_string()),
        (None, false, _) => Some("not in the baseline".into()),
        (None, _, false) => Some("not in the candidate".into()),
        (None, ..) => None,
    }
}

/// The verdict in words; a row with a side missing is not comparable.
fn verdict_words(cmp: Option<&Comparison>) -> &'static str {
    cmp.map_or(Verdict::NotComparable, |c| c.result.verdict)
        .words()
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => String::new(),
    }
}

fn params_text(params: &[(String, String)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// One row per benchmark × metric × column, raw numbers.
pub fn render_csv(all: &Tables) -> Result<String, Error> {
    let (tables, level) = (&all.tables, all.options.level);
    let mut out = Table::new(
        [
            "metric",
            "unit",
            "higher_is_better",
            "benchmark",
            "parameters",
            "source",
            "role",
            "n",
            "median",
            "ci_low",
            "ci_high",
            "ci_note",
            "baseline_median",
            "ratio",
            "ratio_ci_low",
            "ratio_ci_high",
            "confidence",
            "change_pct",
            "p_value",
            "level",
            "test",
            "significant",
            "verdict",
            "gate_failed",
            "note",
        ]
        .into_iter()
        .map(Column::left)
        .collect(),
    );
    for t in tables {
        for r in &t.rows {
            for (ci, cell) in r.cells.iter().enumerate() {
                let Some(cell) = cell else { continue };
                let cmp = r.comparisons[ci].as_ref();
                let role = if ci == 0 { "baseline" } else { "candidate" };
                let record = [
                    t.metric.clone(),
                    t.unit.clone(),
                    t.higher_is_better.to_string(),
                    r.benchmark.clone(),
                    params_text(&r.parameters),
                    t.columns[ci].clone(),
                    role.to_owned(),
                    cell.n.to_string(),
                    num(Some(cell.median)),
                    num(cell.ci.map(|c| c.0)),
                    num(cell.ci.map(|c| c.1)),
                    cell.ci_refusal
                        .as_ref()
                        .map(|e| refusal(e, level))
                        .unwrap_or_default(),
                    num(cmp.map(|c| c.baseline_median)),
                    num(cmp.map(|c| c.result.ratio)),
                    num(cmp.map(|c| c.result.ratio_ci[0])),
                    num(cmp.map(|c| c.result.ratio_ci[1])),
                    num(cmp.map(|c| c.result.confidence)),
                    num(cmp.and_then(Comparison::change_pct)),
                    num(cmp.map(|c| c.result.p_value)),
                    num(cmp.map(|c| c.result.level)),
                    cmp.map(|c| test_name(&c.result).to_owned())
                        .unwrap_or_default(),
                    cmp.map(|c| c.result.significant.to_string())
                        .unwrap_or_default(),
                    if ci == 0 {
                        String::new()
                    } else {
                        verdict_words(cmp).to_owned()
                    },
                    cmp.map(|c| c.gate_failed.to_string()).unwrap_or_default(),
                    if ci == 0 {
                        String::new()
                    } else {
                        row_note(cmp, r.cells[0].is_some(), true).unwrap_or_default()
                    },
                ];
                out.row(record.into_iter().map(table::Cell::from).collect());
            }
        }
    }
    out.csv()
}

/// Parameters as a JSON object in their declared order.
struct Params<'a>(&'a [(String, String)]);

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(serde::Serialize)]
struct JsonComparison<'a> {
    metric: &'a str,
    unit: &'a str,
    higher_is_better: bool,
    benchmark: &'a str,
    parameters: Params<'a>,
    baseline: &'a str,
    candidate: &'a str,
    baseline_n: Option<usize>,
    candidate_n: Option<usize>,
    baseline_median: Option<f64>,
    candidate_median: Option<f64>,
    /// faster, slower, no difference, inconclusive, not comparable.
    verdict: &'static str,
    /// Why there is no verdict, or what limits it.
    note: Option<String>,
    ratio: Option<f64>,
    ratio_ci: Option<[f64; 2]>,
    /// Confidence of `ratio_ci`: 1 - `level`.
    confidence: Option<f64>,
    /// (ratio - 1) x 100, from the same analysis.
    change_pct: Option<f64>,
    /// Two-sided p-value, compared with `level` (alpha / family).
    p_value: Option<f64>,
    level: Option<f64>,
    family: Option<usize>,
    test: Option<&'static str>,
    exact: bool,
    session_variation: Option<engine::SessionVariation>,
    significant: bool,
    gate_failed: bool,
}

/// The test's name as exported ("mann-whitney-u", "welch-t", ...), or
/// "none" for exact values.
fn test_name(c: &engine::Comparison) -> &'static str {
    if c.exact_change() {
        return "none";
    }
    match c.test {
        engine::Test::SignedRank => "wilcoxon-signed-rank",
        engine::Test::PairedT => "paired-t",
        engine::Test::MannWhitney => "mann-whitney-u",
        engine::Test::WelchT => "welch-t",
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

#[derive(serde::Serialize)]
struct JsonSummary<'a> {
    metric: &'a str,
    unit: &'a str,
    higher_is_better: bool,
    benchmark: &'a str,
    parameters: Params<'a>,
    source: &'a str,
    n: usize,
    median: f64,
    ci: Option<[f64; 2]>,
    ci_note: Option<String>,
}

/// A list of comparison objects (summaries when only one dataset is given).
pub fn render_json(all: &Tables) -> Result<String, Error> {
    let (tables, level) = (&all.tables, all.options.level);
    let single = tables.first().is_some_and(|t| t.columns.len() == 1);
    if single {
        let mut items = Vec::new();
        for t in tables {
            for r in &t.rows {
                if let Some(Some(c)) = r.cells.first() {
                    items.push(JsonSummary {
                        metric: &t.metric,
                        unit: &t.unit,
                        higher_is_better: t.higher_is_better,
                        benchmark: &r.benchmark,
                        parameters: Params(&r.parameters),
                        source: &t.columns[0],
                        n: c.n,
                        median: c.median,
                        ci: c.ci.map(|(a, b)| [a, b]),
                        ci_note: c.ci_refusal.as_ref().map(|e| refusal(e, level)),
                    });
                }
            }
        }
        table::json(&items)
    } else {
        let mut items = Vec::new();
        for t in tables {
            for r in &t.rows {
                for ci in 1..t.columns.len() {
                    let (b, c) = (r.cells[0].as_ref(), r.cells[ci].as_ref());
                    if b.is_none() && c.is_none() {
                        continue;
                    }
                    let cmp = r.comparisons[ci].as_ref();
                    let a = cmp.map(|x| &x.result);
                    items.push(JsonComparison {
                        metric: &t.metric,
                        unit: &t.unit,
                        higher_is_better: t.higher_is_better,
                        benchmark: &r.benchmark,
                        parameters: Params(&r.parameters),
                        baseline: &t.columns[0],
                        candidate: &t.columns[ci],
                        baseline_n: b.map(|x| x.n),
                        candidate_n: c.map(|x| x.n),
                        baseline_median: b.map(|x| x.median),
                        candidate_median: c.map(|x| x.median),
                        verdict: verdict_words(cmp),
                        note: row_note(cmp, b.is_some(), c.is_some()),
                        ratio: a.and_then(|x| finite(x.ratio)),
                        ratio_ci: a
                            .filter(|x| x.ratio_ci.iter().all(|v| v.is_finite()))
                            .map(|x| x.ratio_ci),
                        confidence: a.map(|x| x.confidence),
                        change_pct: cmp.and_then(Comparison::change_pct),
                        p_value: a.and_then(|x| finite(x.p_value)),
                        level: a.map(|x| x.level),
                        family: a.map(|x| x.family),
                        test: a.map(test_name),
                        exact: a.is_some_and(|x| x.exact),
                        session_variation: a.map(|x| x.session_variation),
                        significant: a.is_some_and(|x| x.significant),
                        gate_failed: cmp.is_some_and(|x| x.gate_failed),
                    });
                }
            }
        }
        table::json(&items)
    }
}

#[cfg(test)]
mod tests;
