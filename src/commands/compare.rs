//! benchstat-style comparison of datasets (`cmdscope compare old new ...`).
//!
//! The first dataset is the baseline; every other one is a candidate column.
//! Benchmarks are matched by name and parameters (in any order). Each metric
//! present in the baseline and in at least one candidate gets its own table
//! (benchstat prints one table per unit). Per cell: the median, the
//! distribution-free interval of the median (shown as `± x%`, the larger
//! distance from the median to an interval end, as benchstat does) and `n`.
//! Per candidate cell, one analysis by the comparison engine
//! (`analysis::comparison`): runs from two files are independent samples
//! (Mann-Whitney U, or Welch's t-test on logarithms where the rank test's
//! resolution is too coarse), Bonferroni across the rows of a column (each
//! of m rows tested at alpha/m, its interval at confidence 1 - alpha/m), and
//! one verdict: faster, slower, no difference (the interval within
//! ±precision), inconclusive or not comparable, with a note where no verdict
//! is possible. The change in %, the p-value, the ratio and its interval all
//! come from that one analysis, so they never disagree. For metrics where
//! higher is better (MB/s), faster/slower mean better/worse. Values marked
//! exact (Go's `Unit NAME assume=exact`) need no test: any change is a
//! change. A geometric-mean row summarises the benchmarks present in every
//! column.
//!
//! Runs from different files come from different sessions: the intervals do
//! not include session-to-session variation, and the output says so.
//!
//! Where the data cannot support a claim the table says so in a footnote
//! ("need >= 6 samples for 95% interval") rather than failing.
//!
//! ## The regression gate
//!
//! With [`CompareOptions::fail_if_slower`] = `Some(pct)`, a *gated* metric
//! of a candidate fails by the engine's one gate rule
//! (`analysis::comparison::fails_gate`, the same as `check`'s): the verdict
//! is slower AND the lower end of the ratio interval lies above 1 + pct/100,
//! i.e. the slowdown is significantly larger than pct. The gated metric is
//! the one `check` gates, so the two gates judge the same thing: wall time
//! (`time_wall_clock`, hyperfine's `time`), and Go's `sec/op` (any
//! `sec/<unit>`). CPU time is reported but does not gate: for short
//! commands it is a fraction of a millisecond of start-up whose level
//! shifts between sessions by more than the interval of one session shows
//! (measured: 12-18 % between identical back-to-back sessions).
//! Memory, I/O and counters are reported but never gate.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::analysis::comparison::{
    self as engine, fails_gate, format_confidence, format_p, Design, Settings, Verdict,
};
use crate::cli::compare::{CompareArgs, CompareFormat};
use crate::error::{exit, Error};
use crate::import::dataset::{Benchmark, Dataset};
use crate::metrics::Metric;
use crate::report::markdown;
use crate::stats::{self, StatsError};
use crate::units;

#[derive(Clone, Debug, PartialEq)]
pub struct CompareOptions {
    pub format: CompareFormat,
    /// Gate: fail when a gated metric got significantly slower by more than
    /// this many percent (see the module documentation).
    pub fail_if_slower: Option<f64>,
    /// Family-wise significance level of each column's comparisons of a metric.
    pub alpha: f64,
    /// Confidence level of each cell's interval of the median.
    pub level: f64,
    /// Relative half-width of the "no difference" band (0.01 for ±1 %).
    pub precision: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            format: CompareFormat::Text,
            fail_if_slower: None,
            alpha: 0.05,
            level: 0.95,
            precision: crate::analysis::comparison::DEFAULT_PRECISION,
        }
    }
}

/// What [`compare`] produced: the rendered output, the gate's verdict and
/// the numbers behind them.
#[derive(Clone, Debug)]
pub struct CompareOutput {
    /// The report in the requested format. For Text and Markdown it ends
    /// with the gate section (when a gate was set); for Csv and Json the
    /// failing rows are marked by `gate_failed` and the caller should print
    /// [`CompareOutput::gate_failures`] to stderr.
    pub rendered: String,
    /// True when `fail_if_slower` was set and at least one row failed it.
    pub gate_failed: bool,
    /// One line per failing row: metric, benchmark, candidate and change.
    pub gate_failures: Vec<String>,
    /// The computed tables, one per metric.
    pub tables: Vec<MetricTable>,
    /// Remarks about the whole comparison (metrics only in some files,
    /// duplicate benchmark names, ...).
    pub notes: Vec<String>,
}

/// One metric's comparison across all columns.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricTable {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Dataset sources; `columns[0]` is the baseline.
    pub columns: Vec<String>,
    /// Parameters every row shares, shown once above the table.
    pub common_parameters: Vec<(String, String)>,
    pub rows: Vec<Row>,
    pub geomean: Option<Geomean>,
}

/// One benchmark in one metric table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub benchmark: String,
    pub parameters: Vec<(String, String)>,
    /// Name plus the parameters that are neither common to the table nor
    /// already visible in the name.
    pub label: String,
    /// Per column; `None` when the benchmark (or this metric) is not in that dataset.
    pub cells: Vec<Option<Cell>>,
    /// Per column; always `None` for the baseline column.
    pub comparisons: Vec<Option<Comparison>>,
}

/// Summary of one benchmark's samples of one metric in one dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub n: usize,
    pub median: f64,
    /// Interval of the median at the requested level.
    pub ci: Option<(f64, f64)>,
    /// Why there is no interval ("need >= 6 samples for 95% interval").
    pub ci_refusal: Option<String>,
}

/// A candidate cell against the baseline cell of the same row.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub baseline_median: f64,
    pub candidate_median: f64,
    /// The one analysis: verdict, p-value, ratio and its interval from one
    /// test. Where higher is better, its faster/slower mean better/worse.
    pub result: engine::Comparison,
    /// True when this comparison failed the `fail_if_slower` gate.
    pub gate_failed: bool,
}

impl Comparison {
    /// The analysis' change in percent: (ratio - 1) x 100.
    pub fn change_pct(&self) -> Option<f64> {
        let r = self.result.ratio;
        r.is_finite().then_some((r - 1.0) * 100.0)
    }

    /// The note, without the session remark the legend makes once for all.
    fn own_note(&self) -> Option<&str> {
        let note = self.result.note.as_deref()?;
        let note = note
            .strip_suffix(SESSION_NOTE)
            .map(|n| n.trim_end_matches("; "))
            .unwrap_or(note);
        (!note.is_empty()).then_some(note)
    }
}

/// What the engine appends to every cross-session comparison's note.
const SESSION_NOTE: &str = "session-to-session variation is not in the interval";

/// The geometric-mean row of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Geomean {
    /// Number of benchmarks present in every column that went into it.
    pub rows: usize,
    /// Per column: geometric mean of the medians.
    pub values: Vec<Option<f64>>,
    /// Per column: change against the baseline's geometric mean (None for the baseline).
    pub delta_pct: Vec<Option<f64>>,
    pub note: Option<String>,
}

/// Metrics the `fail_if_slower` gate looks at (see the module documentation).
pub fn is_gated_metric(metric: &str) -> bool {
    metric == "time_wall_clock" || metric.starts_with("sec/")
}

/// Compares `datasets[1..]` against `datasets[0]`, or summarises a single
/// dataset. Errors only on unusable options or no datasets.
pub fn compare(datasets: &[Dataset], opts: &CompareOptions) -> Result<CompareOutput, Error> {
    validate(datasets, opts)?;
    let (mut tables, notes) = build_tables(datasets, opts);
    let gate_failures = apply_gate(&mut tables, opts);
    let gate_failed = !gate_failures.is_empty();
    let rendered = match opts.format {
        CompareFormat::Text => render_text(&tables, &notes, &gate_failures, opts),
        CompareFormat::Markdown => render_markdown(&tables, &notes, &gate_failures, opts),
        CompareFormat::Csv => render_csv(&tables)?,
        CompareFormat::Json => render_json(&tables)?,
    };
    Ok(CompareOutput {
        rendered,
        gate_failed,
        gate_failures,
        tables,
        notes,
    })
}

fn validate(datasets: &[Dataset], opts: &CompareOptions) -> Result<(), Error> {
    if datasets.is_empty() {
        return Err(Error::Usage(
            "compare needs at least one results file".into(),
        ));
    }
    crate::cli::check_alpha(opts.alpha)?;
    if !(opts.level > 0.0 && opts.level < 1.0) {
        return Err(Error::Usage(format!(
            "confidence level must be between 0 and 1, got {}",
            opts.level
        )));
    }
    if let Some(pct) = opts.fail_if_slower {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(Error::Usage(format!(
                "the slowdown threshold must be a percentage >= 0, got {pct}"
            )));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Computing the tables
// ---------------------------------------------------------------------------

/// Identity of a benchmark across files: its name and its parameters in any order.
type Key = (String, Vec<(String, String)>);

fn key_of(b: &Benchmark) -> Key {
    let mut params = b.parameters.clone();
    params.sort();
    (b.name.clone(), params)
}

/// Whether the benchmark's series of `metric` holds exact values.
fn is_exact(b: &Benchmark, metric: &str) -> bool {
    b.series(metric).is_some_and(|s| s.exact)
}

fn finite_values(b: &Benchmark, metric: &str) -> Option<Vec<f64>> {
    let values: Vec<f64> = b
        .series(metric)?
        .values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    (!values.is_empty()).then_some(values)
}

struct MetricInfo {
    name: String,
    unit: String,
    higher_is_better: bool,
    /// Per dataset: has this metric with at least one finite value.
    present: Vec<bool>,
    first_seen: usize,
}

fn level_text(level: f64) -> String {
    trim_float(format!("{:.3}", level * 100.0))
}

fn trim_float(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
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

fn make_cell(values: &[f64], level: f64) -> Option<Cell> {
    let summary = stats::summarize(values)?;
    let (ci, ci_refusal) = match stats::median_ci(values, level) {
        Ok(e) => (Some((e.low, e.high)), None),
        Err(e) => (None, Some(refusal(&e, level))),
    };
    Some(Cell {
        n: summary.n,
        median: summary.median,
        ci,
        ci_refusal,
    })
}

/// One analysis of a candidate cell against the baseline cell, oriented so
/// that faster/slower mean better/worse.
fn compare_cells(
    base: &[f64],
    cand: &[f64],
    b: &Cell,
    c: &Cell,
    settings: &Settings,
    higher_is_better: bool,
    exact: bool,
) -> Comparison {
    let mut result = if exact {
        exact_comparison(base, cand, b.median, c.median, settings)
    } else {
        engine::compare_values(base, cand, Design::Unpaired, settings)
    };
    if higher_is_better {
        result.verdict = match result.verdict {
            Verdict::Faster => Verdict::Slower,
            Verdict::Slower => Verdict::Faster,
            other => other,
        };
    }
    Comparison {
        baseline_median: b.median,
        candidate_median: c.median,
        result,
        gate_failed: false,
    }
}

/// Exact values (Go's `Unit NAME assume=exact`): no noise to test against,
/// so any change of the median is a change, as benchstat treats them.
fn exact_comparison(
    base: &[f64],
    cand: &[f64],
    mb: f64,
    mc: f64,
    settings: &Settings,
) -> engine::Comparison {
    let mut r = engine::compare_values(base, cand, Design::Unpaired, settings);
    r.verdict = if mc == mb {
        Verdict::NoDifference
    } else if mc < mb {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    r.significant = r.verdict.is_significant();
    r.p_value = f64::NAN;
    r.exact = true;
    r.ratio = if mb > 0.0 { mc / mb } else { f64::NAN };
    r.ratio_ci = [r.ratio; 2];
    r.shift = mc - mb;
    r.shift_ci = [r.shift; 2];
    let varies = |v: &[f64]| v.iter().any(|&x| x != v[0]);
    r.note = Some(if varies(base) || varies(cand) {
        "exact values (assume=exact) vary between runs; compared by their medians".into()
    } else {
        "exact values (assume=exact): any change is a change".into()
    });
    r
}

fn build_tables(datasets: &[Dataset], opts: &CompareOptions) -> (Vec<MetricTable>, Vec<String>) {
    let mut notes = Vec::new();
    let columns: Vec<String> = datasets.iter().map(|d| d.source.clone()).collect();
    let floors: Vec<Option<f64>> = datasets.iter().map(|d| d.rss_floor).collect();

    // Benchmarks of each dataset by key (first occurrence wins).
    let mut lookup: Vec<HashMap<Key, &Benchmark>> = Vec::with_capacity(datasets.len());
    // All keys in order: the baseline's first, then each candidate's new ones.
    let mut order: Vec<(Key, &Benchmark)> = Vec::new();
    let mut seen: HashSet<Key> = HashSet::new();
    for d in datasets {
        let mut map = HashMap::new();
        for b in &d.benchmarks {
            let key = key_of(b);
            if map.contains_key(&key) {
                notes.push(format!(
                    "{}: benchmark '{}' appears more than once; using the first",
                    d.source,
                    label_of(b, &[])
                ));
                continue;
            }
            if seen.insert(key.clone()) {
                order.push((key.clone(), b));
            }
            map.insert(key, b);
        }
        lookup.push(map);
    }

    // Metrics and where they appear.
    let mut metrics: Vec<MetricInfo> = Vec::new();
    let mut counter = 0;
    for (di, d) in datasets.iter().enumerate() {
        for b in &d.benchmarks {
            for s in &b.series {
                counter += 1;
                if !s.values.iter().any(|v| v.is_finite()) {
                    continue;
                }
                match metrics.iter_mut().find(|m| m.name == s.metric) {
                    Some(m) if m.unit == s.unit => m.present[di] = true,
                    Some(m) => {
                        let note = format!(
                            "{}: {} is in '{}' there but in '{}' elsewhere; not compared",
                            d.source, s.metric, s.unit, m.unit
                        );
                        if !notes.contains(&note) {
                            notes.push(note);
                        }
                    }
                    None => {
                        let mut present = vec![false; datasets.len()];
                        present[di] = true;
                        metrics.push(MetricInfo {
                            name: s.metric.clone(),
                            unit: s.unit.clone(),
                            higher_is_better: s.higher_is_better,
                            present,
                            first_seen: counter,
                        });
                    }
                }
            }
        }
    }
    metrics.sort_by_key(|m| {
        (
            Metric::from_name(&m.name).map_or(usize::MAX, |k| k.index()),
            m.first_seen,
        )
    });

    let single = datasets.len() == 1;
    let mut skipped = Vec::new();
    let mut tables = Vec::new();
    for m in &metrics {
        let compared = m.present[0] && (single || m.present[1..].iter().any(|&p| p));
        if !compared {
            let wher: Vec<&str> = m
                .present
                .iter()
                .zip(&columns)
                .filter(|(p, _)| **p)
                .map(|(_, c)| c.as_str())
                .collect();
            skipped.push(format!("{} (only in {})", m.name, wher.join(", ")));
            continue;
        }
        tables.push(build_table(m, &columns, &order, &lookup, &floors, opts));
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "not compared, not in the baseline and another file: {}",
            skipped.join("; ")
        ));
    }
    (tables, notes)
}

/// The engine's settings for one metric of a table: cmdscope's metrics by
/// the engine's own per-metric rule; other tools' units are discrete when
/// they are sizes or counts (B/op, allocs/op).
fn metric_settings(
    metric: &str,
    unit: &str,
    opts: &CompareOptions,
    family: usize,
    rss_floor: Option<f64>,
) -> Settings {
    match Metric::from_name(metric) {
        Some(m) => Settings::for_metric(m, opts.alpha, family, opts.precision, rss_floor),
        None => Settings {
            family,
            discrete: matches!(unit, "B" | ""),
            ..Settings::new(opts.alpha, opts.precision)
        },
    }
}

fn build_table(
    m: &MetricInfo,
    columns: &[String],
    order: &[(Key, &Benchmark)],
    lookup: &[HashMap<Key, &Benchmark>],
    floors: &[Option<f64>],
    opts: &CompareOptions,
) -> MetricTable {
    let mut rows = Vec::new();
    for (key, first) in order {
        let first: &Benchmark = first;
        let values: Vec<Option<Vec<f64>>> = lookup
            .iter()
            .map(|map| map.get(key).and_then(|b| finite_values(b, &m.name)))
            .collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let cells: Vec<Option<Cell>> = values
            .iter()
            .map(|v| v.as_deref().and_then(|v| make_cell(v, opts.level)))
            .collect();
        rows.push((first, values, cells));
    }

    // Bonferroni: a column's family is its rows with both sides present.
    let family: Vec<usize> = (0..columns.len())
        .map(|ci| {
            rows.iter()
                .filter(|(_, v, c)| {
                    v[0].is_some() && v[ci].is_some() && c[0].is_some() && c[ci].is_some()
                })
                .count()
        })
        .collect();
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(first, values, cells)| {
            let mut comparisons: Vec<Option<Comparison>> = vec![None; columns.len()];
            for ci in 1..columns.len() {
                if let (Some(bv), Some(cv), Some(bc), Some(cc)) =
                    (&values[0], &values[ci], &cells[0], &cells[ci])
                {
                    // Peak memory at or below the larger of the two
                    // sessions' floors says nothing (see `Settings::floor`).
                    let floor = match (floors[0], floors[ci]) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    let settings = Settings {
                        cross_session: true,
                        ..metric_settings(&m.name, &m.unit, opts, family[ci].max(1), floor)
                    };
                    let exact = lookup[0]
                        .get(&key_of(first))
                        .is_some_and(|b| is_exact(b, &m.name))
                        || lookup[ci]
                            .get(&key_of(first))
                            .is_some_and(|b| is_exact(b, &m.name));
                    comparisons[ci] = Some(compare_cells(
                        bv,
                        cv,
                        bc,
                        cc,
                        &settings,
                        m.higher_is_better,
                        exact,
                    ));
                }
            }
            Row {
                benchmark: first.name.clone(),
                parameters: first.parameters.clone(),
                label: String::new(),
                cells,
                comparisons,
            }
        })
        .collect();

    // Parameters shared by every row go above the table; the rest label rows.
    let common: Vec<(String, String)> = match rows.first() {
        Some(first) => first
            .parameters
            .iter()
            .filter(|p| rows.iter().all(|r| r.parameters.contains(p)))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    for r in &mut rows {
        r.label = row_label(&r.benchmark, &r.parameters, &common);
    }

    let geomean = geomean_row(&rows, columns.len());
    MetricTable {
        metric: m.name.clone(),
        unit: m.unit.clone(),
        higher_is_better: m.higher_is_better,
        columns: columns.to_vec(),
        common_parameters: common,
        rows,
        geomean,
    }
}

/// `name`, then in parentheses the parameters that are neither common to
/// the table nor visible in the name as a `/key=value` part (Go sub-benchmarks).
fn row_label(name: &str, params: &[(String, String)], common: &[(String, String)]) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    let extra: Vec<String> = params
        .iter()
        .filter(|p| !common.contains(p))
        .map(|(k, v)| format!("{k}={v}"))
        .filter(|kv| !parts.contains(&kv.as_str()))
        .collect();
    if extra.is_empty() {
        name.to_owned()
    } else {
        format!("{name} ({})", extra.join(", "))
    }
}

fn label_of(b: &Benchmark, common: &[(String, String)]) -> String {
    row_label(&b.name, &b.parameters, common)
}

fn geomean_row(rows: &[Row], ncols: usize) -> Option<Geomean> {
    let complete: Vec<&Row> = rows
        .iter()
        .filter(|r| r.cells.iter().all(Option::is_some))
        .collect();
    // As benchstat: a geometric mean of one row says nothing new.
    if complete.len() < 2 {
        return None;
    }
    let mut note = None;
    let values: Vec<Option<f64>> = (0..ncols)
        .map(|ci| {
            let medians: Vec<f64> = complete
                .iter()
                .filter_map(|r| r.cells[ci].as_ref().map(|c| c.median))
                .collect();
            if medians.iter().any(|&m| m <= 0.0) {
                note = Some("geomean needs medians > 0".to_owned());
                None
            } else {
                stats::geometric_mean(&medians)
            }
        })
        .collect();
    let delta_pct = (0..ncols)
        .map(|ci| match (ci, values[0], values[ci]) {
            (0, ..) => None,
            (_, Some(b), Some(c)) if b > 0.0 => Some((c / b - 1.0) * 100.0),
            _ => None,
        })
        .collect();
    Some(Geomean {
        rows: complete.len(),
        values,
        delta_pct,
        note,
    })
}

fn apply_gate(tables: &mut [MetricTable], opts: &CompareOptions) -> Vec<String> {
    let Some(limit) = opts.fail_if_slower else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    for t in tables.iter_mut() {
        if t.higher_is_better || !is_gated_metric(&t.metric) {
            continue;
        }
        for r in &mut t.rows {
            for (ci, c) in r.comparisons.iter_mut().enumerate() {
                let Some(c) = c else { continue };
                if fails_gate(&c.result, limit) {
                    c.gate_failed = true;
                    failures.push(format!(
                        "{}  {}  {}: {} ({} {}, {}), limit +{}%",
                        t.metric,
                        r.label,
                        t.columns[ci],
                        fmt_delta(c.change_pct()),
                        format_confidence(c.result.confidence),
                        fmt_ratio_ci(c.result.ratio_ci),
                        format_p(c.result.p_value),
                        trim_float(format!("{limit:.2}"))
                    ));
                }
            }
        }
    }
    failures
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

/// Footnotes of one table, numbered in order of first use.
#[derive(Default)]
struct Footnotes {
    texts: Vec<String>,
}

impl Footnotes {
    fn number(&mut self, text: &str) -> usize {
        match self.texts.iter().position(|t| t == text) {
            Some(i) => i + 1,
            None => {
                self.texts.push(text.to_owned());
                self.texts.len()
            }
        }
    }

    fn mark(&mut self, text: &str) -> String {
        superscript(self.number(text))
    }

    /// Markers for several notes: " ¹,³" (empty for none).
    fn marks(&mut self, texts: &[String]) -> String {
        if texts.is_empty() {
            return String::new();
        }
        let mut numbers: Vec<usize> = texts.iter().map(|t| self.number(t)).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let marks: Vec<String> = numbers.into_iter().map(superscript).collect();
        format!(" {}", marks.join(","))
    }

    fn lines(&self) -> Vec<String> {
        self.texts
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{} {t}", superscript(i + 1)))
            .collect()
    }
}

fn superscript(n: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .bytes()
        .map(|b| DIGITS[usize::from(b - b'0')])
        .collect()
}

const MISSING: &str = "—";
const MISSING_NOTE: &str = "— benchmark or metric not in that file";

/// The cells of one table as strings, shared by the text and Markdown
/// renderers: (group titles with their column spans, header, body, footnotes).
struct Laid {
    groups: Vec<(usize, usize, String)>,
    header: Vec<String>,
    body: Vec<Vec<String>>,
    notes: Vec<String>,
}

fn lay_out(t: &MetricTable) -> Laid {
    let mut foot = Footnotes::default();
    let mut groups = Vec::new();
    let mut header = vec![String::new()];
    let mut col = 1;
    for (ci, source) in t.columns.iter().enumerate() {
        let width = if ci == 0 { 2 } else { 4 };
        groups.push((col, width, source.clone()));
        col += width;
        header.push("median".into());
        header.push("n".into());
        if ci > 0 {
            header.push("vs base".into());
            // Every row of a column shares one family, so one confidence.
            let confidence = t
                .rows
                .iter()
                .find_map(|r| r.comparisons[ci].as_ref())
                .map(|c| format_confidence(c.result.confidence));
            header.push(match confidence {
                Some(conf) => format!("ratio [{conf}]"),
                None => "ratio".into(),
            });
        }
    }

    let mut body = Vec::new();
    let mut any_missing = false;
    for r in &t.rows {
        let mut line = vec![r.label.clone()];
        for ci in 0..t.columns.len() {
            match &r.cells[ci] {
                Some(c) => {
                    let spread = match (fmt_spread(c), &c.ci_refusal) {
                        (Some(s), _) => s,
                        (None, Some(why)) => format!("∞{}", foot.mark(why)),
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
                    let notes: Vec<String> = c.own_note().map(str::to_owned).into_iter().collect();
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
        body.push(line);
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
        body.push(line);
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
    Laid {
        groups,
        header,
        body,
        notes,
    }
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
            trim_float(format!("{:.3}", opts.precision * 100.0)) + "%"
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

fn gate_lines(tables: &[MetricTable], failures: &[String], opts: &CompareOptions) -> Vec<String> {
    let Some(limit) = opts.fail_if_slower else {
        return Vec::new();
    };
    let limit = trim_float(format!("{limit:.2}"));
    let gated: Vec<&str> = tables
        .iter()
        .filter(|t| !t.higher_is_better && is_gated_metric(&t.metric) && t.columns.len() > 1)
        .map(|t| t.metric.as_str())
        .collect();
    let mut lines = Vec::new();
    if !failures.is_empty() {
        lines.push(format!(
            "gate FAILED: {} comparison{} significantly slower by more than +{limit}%:",
            failures.len(),
            if failures.len() == 1 { "" } else { "s" }
        ));
        lines.extend(failures.iter().map(|f| format!("  {f}")));
    } else if gated.is_empty() {
        lines.push(format!(
            "gate passed, but vacuously: no wall time (time_wall_clock, sec/op) \
             was compared (limit +{limit}%)"
        ));
    } else {
        lines.push(format!(
            "gate passed: nothing significantly slower by more than +{limit}% in {}",
            gated.join(", ")
        ));
    }
    lines
}

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(s: &str, w: usize, align: Align) -> String {
    let fill = " ".repeat(w.saturating_sub(width(s)));
    match align {
        Align::Left => format!("{s}{fill}"),
        Align::Right => format!("{fill}{s}"),
    }
}

fn render_grid(laid: &Laid) -> Vec<String> {
    const SEP: &str = "  ";
    let ncols = laid.header.len();
    let aligns: Vec<Align> = laid
        .header
        .iter()
        .map(|h| if h == "n" { Align::Right } else { Align::Left })
        .collect();
    let mut widths = vec![0; ncols];
    for row in std::iter::once(&laid.header).chain(&laid.body) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    for (start, len, title) in &laid.groups {
        let span: usize = widths[*start..start + len].iter().sum::<usize>() + SEP.len() * (len - 1);
        if width(title) > span {
            widths[start + len - 1] += width(title) - span;
        }
    }
    let mut out = Vec::new();
    // Group titles over their columns.
    let mut line = pad("", widths[0], Align::Left);
    for (start, len, title) in &laid.groups {
        let span: usize = widths[*start..start + len].iter().sum::<usize>() + SEP.len() * (len - 1);
        line.push_str(SEP);
        line.push_str(&pad(title, span, Align::Left));
    }
    out.push(line.trim_end().to_owned());
    for row in std::iter::once(&laid.header).chain(&laid.body) {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| pad(c, widths[i], aligns[i]))
            .collect();
        out.push(cells.join(SEP).trim_end().to_owned());
    }
    out
}

fn render_text(
    tables: &[MetricTable],
    notes: &[String],
    failures: &[String],
    opts: &CompareOptions,
) -> String {
    let mut out = String::new();
    if tables.is_empty() {
        out.push_str("no metric to compare: no benchmark has samples of a metric in the baseline and another file\n");
    }
    for t in tables {
        let laid = lay_out(t);
        let _ = writeln!(out, "{}", title(t));
        if let Some(c) = common_line(t) {
            let _ = writeln!(out, "{c}");
        }
        for line in render_grid(&laid) {
            let _ = writeln!(out, "{line}");
        }
        for n in &laid.notes {
            let _ = writeln!(out, "{n}");
        }
        out.push('\n');
    }
    for l in legend(tables, opts) {
        let _ = writeln!(out, "{l}");
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    let gate = gate_lines(tables, failures, opts);
    if !gate.is_empty() {
        out.push('\n');
    }
    for g in gate {
        let _ = writeln!(out, "{g}");
    }
    out
}

fn render_markdown(
    tables: &[MetricTable],
    notes: &[String],
    failures: &[String],
    opts: &CompareOptions,
) -> String {
    let mut out = String::new();
    if tables.is_empty() {
        out.push_str("No metric to compare: no benchmark has samples of a metric in the baseline and another file.\n\n");
    }
    for t in tables {
        let laid = lay_out(t);
        let _ = writeln!(out, "### {}\n", markdown::cell(&title(t)));
        if let Some(c) = common_line(t) {
            let _ = writeln!(out, "{}\n", markdown::cell(&c));
        }
        // Header: group titles folded into the first header cell of each group.
        let mut header = laid.header.clone();
        header[0] = "benchmark".into();
        for (start, _, source) in &laid.groups {
            header[*start] = format!("{source} {}", header[*start]);
        }
        let cells: Vec<String> = header.iter().map(|h| markdown::cell(h)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        let rule: Vec<&str> = laid
            .header
            .iter()
            .enumerate()
            .map(|(i, h)| match (i, h.as_str()) {
                (0, _) => ":--",
                (_, "n") | (_, "median") => "--:",
                _ => ":--",
            })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for (ri, row) in laid.body.iter().enumerate() {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 && ri < t.rows.len() {
                        markdown::code(c)
                    } else {
                        markdown::cell(c)
                    }
                })
                .collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
        for n in &laid.notes {
            let _ = writeln!(out, "{}  ", markdown::cell(n));
        }
        out.push('\n');
    }
    for l in legend(tables, opts) {
        let _ = writeln!(out, "{}  ", markdown::cell(&l));
    }
    for n in notes {
        let _ = writeln!(out, "Note: {}  ", markdown::cell(n));
    }
    let gate = gate_lines(tables, failures, opts);
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
        (Some(c), ..) => c.result.note.clone(),
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

fn render_csv(tables: &[MetricTable]) -> Result<String, Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let to_io = |e: csv::Error| Error::Io(std::io::Error::other(e));
    w.write_record([
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
    ])
    .map_err(to_io)?;
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
                    cell.ci_refusal.clone().unwrap_or_default(),
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
                w.write_record(&record).map_err(to_io)?;
            }
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
    String::from_utf8(bytes).map_err(|e| Error::Io(std::io::Error::other(e)))
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
    if c.exact && c.p_value.is_nan() {
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
    ci_note: Option<&'a str>,
}

fn render_json(tables: &[MetricTable]) -> Result<String, Error> {
    let to_io = |e: serde_json::Error| Error::Io(std::io::Error::other(e));
    let single = tables.first().is_some_and(|t| t.columns.len() == 1);
    let mut text = if single {
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
                        ci_note: c.ci_refusal.as_deref(),
                    });
                }
            }
        }
        serde_json::to_string_pretty(&items).map_err(to_io)?
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
        serde_json::to_string_pretty(&items).map_err(to_io)?
    };
    text.push('\n');
    Ok(text)
}

/// `cmdscope compare FILE...`: a benchstat-style table across saved results.
pub fn run(args: &CompareArgs) -> crate::error::Result<i32> {
    let datasets = args
        .files
        .iter()
        .map(|p| crate::import::read_dataset(p))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let opts = CompareOptions {
        format: args.format,
        fail_if_slower: args.fail_if_slower,
        alpha: args.alpha,
        ..CompareOptions::default()
    };
    let out = compare(&datasets, &opts)?;
    // Names and values come from files: shown, never obeyed by the terminal.
    match args.format {
        CompareFormat::Json => crate::output::print(&out.rendered),
        _ => crate::output::print(&crate::output::escape_controls(&out.rendered)),
    }
    if out.gate_failed {
        if matches!(args.format, CompareFormat::Csv | CompareFormat::Json) {
            for f in &out.gate_failures {
                crate::eprint_line!(
                    "cmdscope: regression: {}",
                    crate::output::escape_controls(f)
                );
            }
        }
        return Err(Error::Failed(format!(
            "{} comparison(s) significantly slower by more than {}%",
            out.gate_failures.len(),
            args.fail_if_slower.unwrap_or(0.0)
        )));
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests;
