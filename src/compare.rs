//! benchstat-style comparison of datasets (`cmdscope compare old new ...`).
//!
//! The first dataset is the baseline; every other one is a candidate column.
//! Benchmarks are matched by name and parameters (in any order). Each metric
//! present in the baseline and in at least one candidate gets its own table
//! (benchstat prints one table per unit). Per cell: the median, the
//! distribution-free interval of the median (shown as `± x%`, the larger
//! distance from the median to an interval end, as benchstat does) and `n`.
//! Per candidate cell: the change of the medians in %, the two-sided
//! Mann-Whitney U p-value Holm-corrected across the rows of that column, `~`
//! when it is not significant at `alpha`, and the ratio candidate/baseline of
//! the medians with its interval. A geometric-mean row summarises the
//! benchmarks present in every column.
//!
//! Where the data cannot support a claim the table says so in a footnote
//! ("need >= 6 samples for 95% interval") rather than failing.
//!
//! ## The regression gate
//!
//! With [`CompareOptions::fail_if_slower`] = `Some(pct)`, the gate fails when
//! a *gated* metric of a candidate is significantly worse (Holm-corrected
//! p < alpha) and its median is more than `pct` percent worse than the
//! baseline's. Gated metrics ([`is_gated_metric`]) are the time family that
//! answers "did it get slower": `time_wall_clock`, `time_cpu` (user + system),
//! `task_clock`, and Go's `sec/op` (any `sec/<unit>`). `time_user` and
//! `time_system` alone are not gated: a shift of work between them is not a
//! slowdown, and their sum is gated as `time_cpu` when it was measured.
//! Memory, I/O and counters are reported but never gate.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::str::FromStr;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::dataset::{Benchmark, Dataset};
use crate::error::Error;
use crate::metrics::Metric;
use crate::stats::{self, StatsError};

/// Output format of [`compare`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Text,
    /// One GitHub table per metric.
    Markdown,
    /// One row per benchmark × metric × column, raw numbers.
    Csv,
    /// A list of comparison objects (summaries when only one dataset is given).
    Json,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "text" | "txt" => Ok(Format::Text),
            "markdown" | "md" => Ok(Format::Markdown),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "unknown format '{other}' (expected text, markdown, csv or json)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CompareOptions {
    pub format: Format,
    /// Gate: fail when a gated metric got significantly slower by more than
    /// this many percent (see the module documentation).
    pub fail_if_slower: Option<f64>,
    /// Significance level of the (Holm-corrected) tests.
    pub alpha: f64,
    /// Confidence level of the intervals.
    pub level: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            format: Format::Text,
            fail_if_slower: None,
            alpha: 0.05,
            level: 0.95,
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

/// Verdict of one comparison. `Faster` and `Slower` mean better and worse
/// and respect `higher_is_better` (for B/op "slower" means more bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// No significant difference (or no test possible).
    Same,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "~",
        }
    }
}

/// A candidate cell against the baseline cell of the same row.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub baseline_median: f64,
    pub candidate_median: f64,
    /// candidate median / baseline median (when the baseline median is > 0).
    pub ratio: Option<f64>,
    /// Interval of the ratio of medians at the requested level.
    pub ratio_ci: Option<(f64, f64)>,
    /// Why there is no ratio interval ("need >= 6 samples for 95% interval").
    pub ratio_ci_refusal: Option<String>,
    /// Change of the median in percent of the baseline median.
    pub delta_pct: Option<f64>,
    /// Mann-Whitney U p-value as computed.
    pub p_value_raw: Option<f64>,
    /// Holm-corrected p-value (across the rows of this column); this is the
    /// one compared with alpha.
    pub p_value: Option<f64>,
    pub significant: bool,
    pub verdict: Verdict,
    /// Refusals and remarks about the change and the test ("need >= 4
    /// samples to detect a difference at alpha level 0.05").
    pub notes: Vec<String>,
    /// True when this comparison failed the `fail_if_slower` gate.
    pub gate_failed: bool,
}

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
    matches!(metric, "time_wall_clock" | "time_cpu" | "task_clock") || metric.starts_with("sec/")
}

/// Seed of the ratio interval's resampling: fixed, so a report is reproducible.
const RATIO_SEED: u64 = 0x636d_6473_636f_7065;

/// Compares `datasets[1..]` against `datasets[0]`, or summarises a single
/// dataset. Errors only on unusable options or no datasets.
pub fn compare(datasets: &[Dataset], opts: &CompareOptions) -> Result<CompareOutput, Error> {
    validate(datasets, opts)?;
    let (mut tables, notes) = build_tables(datasets, opts);
    let gate_failures = apply_gate(&mut tables, opts);
    let gate_failed = !gate_failures.is_empty();
    let rendered = match opts.format {
        Format::Text => render_text(&tables, &notes, &gate_failures, opts),
        Format::Markdown => render_markdown(&tables, &notes, &gate_failures, opts),
        Format::Csv => render_csv(&tables)?,
        Format::Json => render_json(&tables)?,
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
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(Error::Usage(format!(
            "alpha must be between 0 and 1, got {}",
            opts.alpha
        )));
    }
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

/// A plain refusal for a statistic that could not be computed.
fn refusal(e: &StatsError, level: f64) -> String {
    match e {
        StatsError::TooFewSamples { needed, .. } => {
            format!(
                "need >= {needed} samples for {}% interval",
                level_text(level)
            )
        }
        StatsError::NonPositive => "ratio interval needs values > 0".into(),
        other => other.to_string(),
    }
}

/// Smallest two-sided exact Mann-Whitney p-value for sample sizes n1, n2:
/// 2 / C(n1 + n2, n1). When it is not below alpha no difference can be found.
fn min_p_value(n1: usize, n2: usize) -> f64 {
    let (small, total) = (n1.min(n2), n1 + n2);
    let mut binom = 1.0_f64;
    for i in 0..small {
        binom = binom * (total - i) as f64 / (i + 1) as f64;
    }
    (2.0 / binom).min(1.0)
}

/// Samples per side needed before a difference can be detected at alpha.
fn samples_to_detect(alpha: f64) -> usize {
    (1..=1000)
        .find(|&n| min_p_value(n, n) < alpha)
        .unwrap_or(1000)
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

/// Interval of median(candidate) / median(baseline):
/// `stats::ratio_of_medians(a, b)` estimates median(b) / median(a).
fn ratio_interval(base: &[f64], cand: &[f64], level: f64) -> Result<(f64, f64), StatsError> {
    let e = stats::ratio_of_medians(base, cand, level, RATIO_SEED)?;
    Ok((e.low, e.high))
}

fn compare_cells(
    base: &[f64],
    cand: &[f64],
    b: &Cell,
    c: &Cell,
    opts: &CompareOptions,
) -> Comparison {
    let (mb, mc) = (b.median, c.median);
    let mut notes = Vec::new();
    let delta_pct = if mb != 0.0 {
        Some((mc - mb) / mb.abs() * 100.0)
    } else if mc == 0.0 {
        Some(0.0)
    } else {
        notes.push("baseline median is 0: no relative change".to_owned());
        None
    };
    let ratio = (mb > 0.0 && mc >= 0.0).then(|| mc / mb);

    let p_value_raw = if b.n < 2 || c.n < 2 {
        notes.push(format!(
            "need >= {} samples to detect a difference at alpha level {}",
            samples_to_detect(opts.alpha),
            opts.alpha
        ));
        None
    } else {
        if min_p_value(b.n, c.n) >= opts.alpha {
            notes.push(format!(
                "need >= {} samples to detect a difference at alpha level {}",
                samples_to_detect(opts.alpha),
                opts.alpha
            ));
        }
        match stats::mann_whitney(base, cand) {
            Ok(t) if t.p_value.is_finite() => Some(t.p_value.clamp(0.0, 1.0)),
            Ok(_) => {
                notes.push("test gave no p-value".to_owned());
                None
            }
            Err(e) => {
                notes.push(refusal(&e, opts.level));
                None
            }
        }
    };

    let (ratio_ci, ratio_ci_refusal) = match ratio {
        Some(r) if r > 0.0 => match ratio_interval(base, cand, opts.level) {
            Ok(ci) => (Some(ci), None),
            Err(e) => (None, Some(refusal(&e, opts.level))),
        },
        Some(_) => (None, Some(refusal(&StatsError::NonPositive, opts.level))),
        None => (None, None),
    };
    let mut unique = Vec::new();
    for n in notes {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }

    Comparison {
        baseline_median: mb,
        candidate_median: mc,
        ratio,
        ratio_ci,
        ratio_ci_refusal,
        delta_pct,
        p_value_raw,
        p_value: None,
        significant: false,
        verdict: Verdict::Same,
        notes: unique,
        gate_failed: false,
    }
}

fn build_tables(datasets: &[Dataset], opts: &CompareOptions) -> (Vec<MetricTable>, Vec<String>) {
    let mut notes = Vec::new();
    let columns: Vec<String> = datasets.iter().map(|d| d.source.clone()).collect();

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
        tables.push(build_table(m, &columns, &order, &lookup, opts));
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "not compared, not in the baseline and another file: {}",
            skipped.join("; ")
        ));
    }
    (tables, notes)
}

fn build_table(
    m: &MetricInfo,
    columns: &[String],
    order: &[(Key, &Benchmark)],
    lookup: &[HashMap<Key, &Benchmark>],
    opts: &CompareOptions,
) -> MetricTable {
    let mut rows = Vec::new();
    for (key, first) in order {
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
        let mut comparisons: Vec<Option<Comparison>> = vec![None; columns.len()];
        for ci in 1..columns.len() {
            if let (Some(bv), Some(cv), Some(bc), Some(cc)) =
                (&values[0], &values[ci], &cells[0], &cells[ci])
            {
                comparisons[ci] = Some(compare_cells(bv, cv, bc, cc, opts));
            }
        }
        rows.push(Row {
            benchmark: first.name.clone(),
            parameters: first.parameters.clone(),
            label: String::new(),
            cells,
            comparisons,
        });
    }

    // Holm correction across the rows of each candidate column.
    for ci in 1..columns.len() {
        let idx: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.comparisons[ci]
                    .as_ref()
                    .is_some_and(|c| c.p_value_raw.is_some())
            })
            .map(|(i, _)| i)
            .collect();
        let raw: Vec<f64> = idx
            .iter()
            .filter_map(|&i| rows[i].comparisons[ci].as_ref()?.p_value_raw)
            .collect();
        if raw.is_empty() {
            continue;
        }
        let adjusted = stats::holm(&raw);
        for (k, &i) in idx.iter().enumerate() {
            if let Some(c) = rows[i].comparisons[ci].as_mut() {
                let p = adjusted.get(k).copied().unwrap_or(1.0).clamp(0.0, 1.0);
                c.p_value = Some(p);
                c.significant = p < opts.alpha;
                c.verdict = verdict(c, m.higher_is_better);
            }
        }
    }

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

fn verdict(c: &Comparison, higher_is_better: bool) -> Verdict {
    if !c.significant || c.candidate_median == c.baseline_median {
        return Verdict::Same;
    }
    let worse = if higher_is_better {
        c.candidate_median < c.baseline_median
    } else {
        c.candidate_median > c.baseline_median
    };
    if worse {
        Verdict::Slower
    } else {
        Verdict::Faster
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
                let worse_by = c.delta_pct.unwrap_or(f64::INFINITY);
                if c.verdict == Verdict::Slower && worse_by > limit {
                    c.gate_failed = true;
                    failures.push(format!(
                        "{}  {}  {}: {} ({}), limit +{}%",
                        t.metric,
                        r.label,
                        t.columns[ci],
                        fmt_delta(c.delta_pct),
                        fmt_p(c.p_value),
                        trim_float(format!("{limit:.2}"))
                    ));
                }
            }
        }
    }
    failures
}

// ---------------------------------------------------------------------------
// Human formatting
// ---------------------------------------------------------------------------

/// `x` with `sig` significant digits (fixed notation).
fn fmt_sig(x: f64, sig: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    let decimals = (sig - 1 - mag).clamp(0, 12) as usize;
    let s = format!("{x:.decimals$}");
    // Rounding may carry into a new digit (999.96 -> "1000.0"): drop one decimal.
    match s.parse::<f64>() {
        Ok(r) if decimals > 0 && r.abs() >= 10f64.powi(mag + 1) => {
            format!("{x:.prec$}", prec = decimals - 1)
        }
        _ => s,
    }
}

fn fmt_scaled(x: f64, steps: &[(f64, &str)], base: &str) -> String {
    for &(scale, suffix) in steps {
        if x.abs() >= scale {
            return format!("{}{suffix}", fmt_sig(x / scale, 4));
        }
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}{base}")
    } else {
        format!("{}{base}", fmt_sig(x, 4))
    }
}

/// A value in human units: times auto-scaled (ns, µs, ms, s), bytes in
/// KiB/MiB/GiB, counts and other units with k/M/G suffixes.
pub fn fmt_value(x: f64, unit: &str) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    match unit {
        "s" => {
            let a = x.abs();
            if a == 0.0 {
                "0s".into()
            } else if a < 1e-6 {
                format!("{}ns", fmt_sig(x * 1e9, 4))
            } else if a < 1e-3 {
                format!("{}µs", fmt_sig(x * 1e6, 4))
            } else if a < 1.0 {
                format!("{}ms", fmt_sig(x * 1e3, 4))
            } else {
                format!("{}s", fmt_sig(x, 4))
            }
        }
        "B" => fmt_scaled(
            x,
            &[
                (1024f64.powi(4), "TiB"),
                (1024f64.powi(3), "GiB"),
                (1024f64.powi(2), "MiB"),
                (1024.0, "KiB"),
            ],
            "B",
        ),
        // A unit with its own prefix (MB/s) takes no second one: "1967", not "1.967k".
        u if u.starts_with(['k', 'M', 'G', 'T']) => fmt_sig(x, 4),
        _ => fmt_scaled(x, &[(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")], ""),
    }
}

fn fmt_delta(d: Option<f64>) -> String {
    match d {
        Some(d) => format!("{d:+.2}%"),
        None => "?".into(),
    }
}

fn fmt_p(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "p<0.001".into(),
        Some(p) => format!("p={p:.3}"),
        None => "no p".into(),
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

fn lay_out(t: &MetricTable, opts: &CompareOptions) -> Laid {
    let level = level_text(opts.level);
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
            header.push(format!("ratio [{level}% CI]"));
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
                    line.push(format!("{} ± {spread}", fmt_value(c.median, &t.unit)));
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
                    let marks = foot.marks(&c.notes);
                    let vs = match (c.p_value, c.significant) {
                        (Some(p), true) => {
                            format!("{} ({})", fmt_delta(c.delta_pct), fmt_p(Some(p)))
                        }
                        (Some(p), false) => format!("~ ({})", fmt_p(Some(p))),
                        (None, _) => "~".to_owned(),
                    };
                    line.push(format!("{vs}{marks}"));
                    line.push(match (c.ratio, c.ratio_ci) {
                        (Some(x), Some((lo, hi))) => {
                            format!("{} [{}, {}]", fmt_sig(x, 4), fmt_sig(lo, 4), fmt_sig(hi, 4))
                        }
                        (Some(x), None) => match &c.ratio_ci_refusal {
                            Some(why) => format!("{}{}", fmt_sig(x, 4), foot.mark(why)),
                            None => fmt_sig(x, 4),
                        },
                        (None, _) => MISSING.into(),
                    });
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
                Some(v) => fmt_value(v, &t.unit),
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
        lines.push("vs base: change of the median; p: two-sided Mann-Whitney U test".to_owned());
        lines.push(format!(
            "p-values are Holm-corrected across the rows of each column; \
             ~: no significant difference at alpha = {}",
            opts.alpha
        ));
        lines.push(format!(
            "ratio: median / baseline median, with its {level}% interval"
        ));
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
            "gate FAILED: {} significant slowdown{} worse than +{limit}%:",
            failures.len(),
            if failures.len() == 1 { "" } else { "s" }
        ));
        lines.extend(failures.iter().map(|f| format!("  {f}")));
    } else if gated.is_empty() {
        lines.push(format!(
            "gate passed, but vacuously: no time metric (time_wall_clock, time_cpu, \
             task_clock, sec/op) was compared (limit +{limit}%)"
        ));
    } else {
        lines.push(format!(
            "gate passed: no significant slowdown worse than +{limit}% in {}",
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
        let laid = lay_out(t, opts);
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

fn md_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn md_code(s: &str) -> String {
    if s.contains('`') {
        md_escape(s)
    } else {
        format!("`{}`", md_escape(s))
    }
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
        let laid = lay_out(t, opts);
        let _ = writeln!(out, "### {}\n", md_escape(&title(t)));
        if let Some(c) = common_line(t) {
            let _ = writeln!(out, "{}\n", md_escape(&c));
        }
        // Header: group titles folded into the first header cell of each group.
        let mut header = laid.header.clone();
        header[0] = "benchmark".into();
        for (start, _, source) in &laid.groups {
            header[*start] = format!("{source} {}", header[*start]);
        }
        let cells: Vec<String> = header.iter().map(|h| md_escape(h)).collect();
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
                        md_code(c)
                    } else {
                        md_escape(c)
                    }
                })
                .collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
        for n in &laid.notes {
            let _ = writeln!(out, "{}  ", md_escape(n));
        }
        out.push('\n');
    }
    for l in legend(tables, opts) {
        let _ = writeln!(out, "{}  ", md_escape(&l));
    }
    for n in notes {
        let _ = writeln!(out, "Note: {}  ", md_escape(n));
    }
    let gate = gate_lines(tables, failures, opts);
    if !gate.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "**{}**\n", md_escape(&gate[0]));
        for f in &gate[1..] {
            let _ = writeln!(out, "- {}", md_escape(f.trim()));
        }
    }
    out
}

/// A comparison's notes including the ratio interval's refusal.
fn all_notes(c: &Comparison) -> Vec<String> {
    let mut notes = c.notes.clone();
    notes.extend(c.ratio_ci_refusal.iter().cloned());
    notes
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
        "delta_pct",
        "p_value",
        "p_value_raw",
        "significant",
        "verdict",
        "gate_failed",
        "notes",
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
                    num(cmp.and_then(|c| c.ratio)),
                    num(cmp.and_then(|c| c.ratio_ci).map(|c| c.0)),
                    num(cmp.and_then(|c| c.ratio_ci).map(|c| c.1)),
                    num(cmp.and_then(|c| c.delta_pct)),
                    num(cmp.and_then(|c| c.p_value)),
                    num(cmp.and_then(|c| c.p_value_raw)),
                    cmp.map(|c| c.significant.to_string()).unwrap_or_default(),
                    cmp.map(|c| c.verdict.as_str().to_owned())
                        .unwrap_or_default(),
                    cmp.map(|c| c.gate_failed.to_string()).unwrap_or_default(),
                    cmp.map(|c| all_notes(c).join("; ")).unwrap_or_default(),
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
    ratio: Option<f64>,
    ratio_ci: Option<[f64; 2]>,
    delta_pct: Option<f64>,
    /// Holm-corrected.
    p_value: Option<f64>,
    p_value_raw: Option<f64>,
    significant: bool,
    verdict: &'static str,
    gate_failed: bool,
    notes: Vec<String>,
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
                    let mut notes = cmp.map(all_notes).unwrap_or_default();
                    if b.is_none() {
                        notes.push("not in the baseline".into());
                    }
                    if c.is_none() {
                        notes.push("not in the candidate".into());
                    }
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
                        ratio: cmp.and_then(|x| x.ratio),
                        ratio_ci: cmp.and_then(|x| x.ratio_ci).map(|(a, b)| [a, b]),
                        delta_pct: cmp.and_then(|x| x.delta_pct),
                        p_value: cmp.and_then(|x| x.p_value),
                        p_value_raw: cmp.and_then(|x| x.p_value_raw),
                        significant: cmp.is_some_and(|x| x.significant),
                        verdict: cmp.map_or(Verdict::Same, |x| x.verdict).as_str(),
                        gate_failed: cmp.is_some_and(|x| x.gate_failed),
                        notes,
                    });
                }
            }
        }
        serde_json::to_string_pretty(&items).map_err(to_io)?
    };
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests;
