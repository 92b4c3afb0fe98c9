//! benchstat-style comparison tables over datasets (`cmdscope compare old new ...`):
//! the table model, its computation and the regression gate. It formats no
//! text (`report::tables` renders the tables) and reads no files.
//!
//! The first dataset is the baseline; every other one is a candidate column.
//! Benchmarks are matched by name and parameters (in any order). Each metric
//! present in the baseline and in at least one candidate gets its own table
//! (benchstat prints one table per unit). Per cell: the median, the
//! distribution-free interval of the median and `n`.
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
//! not include session-to-session variation, and the engine's note says so.
//!
//! Where the data cannot support a claim the cell keeps the reason (an
//! interval the stats refused, the engine's note) rather than failing.
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
//! Memory, I/O and counters are reported but do not gate unless named by
//! [`CompareOptions::metric`] (`--metric`, as `check`'s): then that metric
//! alone gates, e.g. the simulated counts of `run --simulate`.

use std::collections::{HashMap, HashSet};

use crate::analysis::comparison::{
    self as engine, fails_gate, Caveat, Design, Note, Settings, Verdict,
};
use crate::analysis::gate;
use crate::import::dataset::{Benchmark, Dataset};
use crate::metrics::Metric;
use crate::stats::{self, StatsError};

/// What the tables are computed with. The subcommand checks them
/// (`commands::compare`) before they get here.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareOptions {
    /// Gate: fail when a gated metric got significantly slower by more than
    /// this many percent (see the module documentation).
    pub fail_if_slower: Option<f64>,
    /// The metric the gate judges (`--metric`), by its name in the files;
    /// None: wall time, or Go's `sec/op`.
    pub metric: Option<String>,
    /// Family-wise significance level of each column's comparisons of a metric.
    pub alpha: f64,
    /// Confidence level of each cell's interval of the median.
    pub level: f64,
    /// Relative half-width of the "no difference" band (0.01 for ±1 %).
    pub precision: f64,
    /// What the gate may let through (`--allow-missing`, `--inconclusive`).
    pub gate: gate::Options,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            fail_if_slower: None,
            metric: None,
            alpha: 0.05,
            level: 0.95,
            precision: crate::analysis::comparison::DEFAULT_PRECISION,
            gate: gate::Options::default(),
        }
    }
}

/// A remark about the whole comparison, typed (`report::tables` words
/// it).
#[derive(Clone, Debug, PartialEq)]
pub enum TableNote {
    /// A benchmark appears more than once in a file: the first is used.
    Repeated { source: String, benchmark: String },
    /// A metric in another unit in this file than in the file it was
    /// first seen in: not compared here.
    OtherUnit {
        source: String,
        metric: String,
        unit: String,
        first: String,
    },
    /// Metrics not in the baseline and another file, each with the files
    /// that hold it.
    NotCompared(Vec<(String, Vec<String>)>),
}

/// Why the gate judged nothing of a candidate, typed (`report::tables`
/// words it).
#[derive(Clone, Debug, PartialEq)]
pub enum Unjudged {
    /// Only the baseline was given.
    NoCandidate { baseline: String },
    /// No benchmark was matched with the gated metric's values on both
    /// sides.
    NothingCompared(Unmatched),
}

/// What kept the gate from comparing anything of a candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Unmatched {
    pub baseline: String,
    pub candidate: String,
    /// The gated metric (`--metric`); None: wall time.
    pub metric: Option<String>,
    /// The benchmarks found on one side only, by label.
    pub only_baseline: Vec<String>,
    pub only_candidate: Vec<String>,
    /// Matched, but without the gated metric's values on both sides.
    pub without_values: Vec<String>,
}

/// What [`build`] produced: the tables, the remarks about the whole
/// comparison and the options they were computed with (the renderings
/// state the level, alpha, precision and gate limit).
#[derive(Clone, Debug)]
pub struct Tables {
    /// The computed tables, one per metric.
    pub tables: Vec<MetricTable>,
    /// Remarks about the whole comparison (metrics only in some files,
    /// duplicate benchmark names, ...).
    pub notes: Vec<TableNote>,
    pub options: CompareOptions,
    /// With a gate: one per candidate the gate compared nothing of,
    /// with what was not matched. A gate that judged nothing must not
    /// pass, so the subcommand refuses these.
    pub unjudged: Vec<Unjudged>,
    /// With a gate: per candidate (its source), what the gate's one rule
    /// found (`analysis::gate`).
    pub gate: Vec<(String, gate::Outcome)>,
}

impl Tables {
    /// True when `fail_if_slower` was set and the gate failed: a
    /// comparison failed it, a benchmark of the baseline was not compared
    /// (unless allowed), or an inconclusive one under `--inconclusive fail`.
    pub fn gate_failed(&self) -> bool {
        self.gate.iter().any(|(_, o)| !o.passes())
    }
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
    /// Whether the gate judges this metric (see [`gates`]).
    pub gated: bool,
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
    /// Why there is no interval (too few samples for the level); the report
    /// words it.
    pub ci_refusal: Option<StatsError>,
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

/// Whether the `fail_if_slower` gate judges `metric`: the one named by
/// [`CompareOptions::metric`], else wall time or Go's `sec/<unit>` (see the
/// module documentation). Only a metric where lower is better gates.
pub fn gates(opts: &CompareOptions, metric: &str, higher_is_better: bool) -> bool {
    !higher_is_better
        && match &opts.metric {
            Some(named) => metric == named,
            None => metric == "time_wall_clock" || metric.starts_with("sec/"),
        }
}

/// Compares `datasets[1..]` against `datasets[0]`, or summarises a single
/// dataset, and applies the gate. With no datasets there are no tables.
pub fn build(datasets: &[Dataset], opts: &CompareOptions) -> Tables {
    let (mut tables, notes) = build_tables(datasets, opts);
    apply_gate(&mut tables, opts);
    let unjudged = unjudged(datasets, &tables, opts);
    let gate = match opts.fail_if_slower {
        Some(_) => (1..datasets.len())
            .map(|ci| {
                let rows = gate_rows(datasets, &tables, ci);
                (datasets[ci].source.clone(), gate::judge(&rows, &opts.gate))
            })
            .collect(),
        None => Vec::new(),
    };
    Tables {
        tables,
        notes,
        options: opts.clone(),
        unjudged,
        gate,
    }
}

/// The gate's rows for candidate `ci`: every benchmark of the baseline in
/// a gated table, with what the candidate holds of it (the one rule,
/// `gate::standing`, decides whether it counts as compared). A benchmark
/// only the candidate has is no row.
fn gate_rows(datasets: &[Dataset], tables: &[MetricTable], ci: usize) -> Vec<gate::Row> {
    let copies = |d: &Dataset, key: &Key| d.benchmarks.iter().filter(|b| key_of(b) == *key).count();
    let mut rows = Vec::new();
    for t in tables.iter().filter(|t| t.is_gated()) {
        for r in &t.rows {
            let Some(base) = &r.cells[0] else { continue };
            let mut params = r.parameters.clone();
            params.sort();
            let key = (r.benchmark.clone(), params);
            let side = |d: &Dataset, cell: &Option<Cell>| gate::Side {
                copies: copies(d, &key),
                values: cell.as_ref().map_or(0, |c| c.n),
                ..gate::Side::default()
            };
            let (b, c) = (
                side(&datasets[0], &r.cells[0]),
                side(&datasets[ci], &r.cells[ci]),
            );
            let b = gate::Side {
                values: base.n,
                ..b
            };
            let cmp = r.comparisons[ci].as_ref();
            rows.push(gate::Row::new(
                &label_of_key(&key),
                &t.metric,
                (&b, &c),
                cmp.map(|c| &c.result),
                cmp.is_some_and(|c| c.gate_failed),
            ));
        }
    }
    rows
}

/// A benchmark's name with its parameters, as the gate's lines name it.
fn label_of_key((name, params): &Key) -> String {
    row_label(name, params, &[])
}

impl MetricTable {
    /// Whether the gate judges this table (see [`gates`]).
    pub fn is_gated(&self) -> bool {
        self.gated
    }
}

fn by_key(d: &Dataset) -> HashMap<Key, &Benchmark> {
    d.benchmarks.iter().map(|b| (key_of(b), b)).collect()
}

/// One per candidate in which the gate made no comparison: the
/// benchmarks found on one side only, or those matched but without wall
/// time on both sides. Empty without a gate.
fn unjudged(datasets: &[Dataset], tables: &[MetricTable], opts: &CompareOptions) -> Vec<Unjudged> {
    if opts.fail_if_slower.is_none() {
        return Vec::new();
    }
    let Some((base, candidates)) = datasets.split_first() else {
        return Vec::new();
    };
    if candidates.is_empty() {
        return vec![Unjudged::NoCandidate {
            baseline: base.source.clone(),
        }];
    }
    let gated_values = |b: &Benchmark| {
        b.series.iter().any(|s| {
            gates(opts, &s.metric, s.higher_is_better) && s.values.iter().any(|v| v.is_finite())
        })
    };
    let mut out = Vec::new();
    for (i, cand) in candidates.iter().enumerate() {
        let ci = i + 1;
        let judged = tables
            .iter()
            .filter(|t| t.is_gated())
            .flat_map(|t| &t.rows)
            .any(|r| r.comparisons[ci].is_some());
        if judged {
            continue;
        }
        let (in_base, in_cand) = (by_key(base), by_key(cand));
        let only = |from: &Dataset, other: &HashMap<Key, &Benchmark>| -> Vec<String> {
            from.benchmarks
                .iter()
                .filter(|b| !other.contains_key(&key_of(b)))
                .map(|b| label_of(b, &[]))
                .collect()
        };
        let (only_baseline, only_candidate) = (only(base, &in_cand), only(cand, &in_base));
        let without_values: Vec<String> = base
            .benchmarks
            .iter()
            .filter_map(|b| in_cand.get(&key_of(b)).map(|c| (b, c)))
            .filter(|(b, c)| !gated_values(b) || !gated_values(c))
            .map(|(b, _)| label_of(b, &[]))
            .collect();
        out.push(Unjudged::NothingCompared(Unmatched {
            baseline: base.source.clone(),
            candidate: cand.source.clone(),
            metric: opts.metric.clone(),
            only_baseline,
            only_candidate,
            without_values,
        }));
    }
    out
}

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

fn make_cell(values: &[f64], level: f64) -> Option<Cell> {
    let summary = stats::summarize(values)?;
    let (ci, ci_refusal) = match stats::median_ci(values, level) {
        Ok(e) => (Some((e.low, e.high)), None),
        Err(e) => (None, Some(e)),
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
    // Exact values need no test: one a side decides.
    r.lack = None;
    r.p_value = f64::NAN;
    engine::set_exact_change(&mut r, mb, mc);
    let varies = |v: &[f64]| v.iter().any(|&x| x != v[0]);
    r.note = Some(Note::one(Caveat::AssumedExact {
        vary: varies(base) || varies(cand),
    }));
    r
}

fn build_tables(datasets: &[Dataset], opts: &CompareOptions) -> (Vec<MetricTable>, Vec<TableNote>) {
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
                notes.push(TableNote::Repeated {
                    source: d.source.clone(),
                    benchmark: label_of(b, &[]),
                });
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
                        let note = TableNote::OtherUnit {
                            source: d.source.clone(),
                            metric: s.metric.clone(),
                            unit: s.unit.clone(),
                            first: m.unit.clone(),
                        };
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
            let wher: Vec<String> = m
                .present
                .iter()
                .zip(&columns)
                .filter(|(p, _)| **p)
                .map(|(_, c)| c.clone())
                .collect();
            skipped.push((m.name.clone(), wher));
            continue;
        }
        tables.push(build_table(m, &columns, &order, &lookup, &floors, opts));
    }
    if !skipped.is_empty() {
        notes.push(TableNote::NotCompared(skipped));
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
        gated: gates(opts, &m.name, m.higher_is_better),
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

/// Marks every comparison of a gated metric that fails the gate.
fn apply_gate(tables: &mut [MetricTable], opts: &CompareOptions) {
    let Some(limit) = opts.fail_if_slower else {
        return;
    };
    for t in tables.iter_mut() {
        if !t.is_gated() {
            continue;
        }
        for r in &mut t.rows {
            for c in r.comparisons.iter_mut().flatten() {
                if fails_gate(&c.result, limit) {
                    c.gate_failed = true;
                }
            }
        }
    }
}

#[cfg(any(test, feature = "test-support"))]
pub mod fixtures;
#[cfg(test)]
mod tests;
