//! A stored session's answers, made as `run` made them: its comparisons at
//! the level its looks left, a concurrency session's throughput, a sweep's
//! set as good as the best. How the session was run comes in a [`HowRun`]:
//! from its stored settings ([`HowRun::stored`]), or for a session stored
//! before they were kept, from its command line read back by the one
//! function that parses it again (`cli::stored::read_back`).

use crate::analysis::comparison::{compare_stored, Comparison, StoredRuns, DEFAULT_PRECISION};
use crate::analysis::sequential::{replay_runs, Sequential};
use crate::analysis::MAX_VALUES;
use crate::metrics::{Metric, Sample};
use crate::run::plan::{Cell, Parameter, REFERENCE};
use crate::run::schedule::Order;
use crate::run::session::{BatchRecord, Session};
use crate::run::settings::Settings;
use crate::store::StoredSearch;

/// What the answers need of how a stored session was run.
#[derive(Clone, Debug, PartialEq)]
pub struct HowRun {
    pub alpha: f64,
    /// A fraction; None when `--runs` alone fixed the count.
    pub precision: Option<f64>,
    /// The named reference's index, or None for the first cell.
    pub reference: Option<usize>,
    /// Whether the runner stopped adaptively (its looks are replayed).
    pub looks: bool,
    /// The looks were `--until-decided`'s.
    pub until_decided: bool,
    pub searched: bool,
    /// Per stored cell, whether it ran in concurrency mode.
    pub concurrent: Vec<bool>,
    /// A sweep of one parameter of one command by wall time, as planned
    /// (None for anything else).
    pub sweep: Option<SweepPlan>,
    /// Where these came from, when not from stored settings.
    pub read_back: Option<ReadBack>,
}

/// The cells and parameters of a sweep of one parameter of one command.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPlan {
    pub cells: Vec<Cell>,
    pub parameters: Vec<Parameter>,
    pub command: String,
}

/// How a session stored without its settings was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBack {
    /// Its command line, parsed again with today's defaults.
    CommandLine,
    /// Its command line did not parse: the defaults.
    Defaults,
}

/// What the report says besides the comparisons (`report::html` words it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredNote {
    ReadBack(ReadBack),
    /// A search's tried values compared with its best, unpaired.
    Searched,
    /// Cells of more runs than this were compared on a subsample.
    Subsampled(usize),
}

impl HowRun {
    /// From the settings the session was stored with.
    pub fn stored(s: &Settings) -> HowRun {
        HowRun {
            alpha: s.alpha,
            precision: s.precision,
            reference: Some(s.reference),
            looks: s.looks,
            until_decided: s.until_decided,
            searched: s.searched(),
            concurrent: s
                .cells
                .iter()
                .map(|c| c.variant.concurrency.is_some())
                .collect(),
            sweep: stored_sweep_plan(s),
            read_back: None,
        }
    }

    /// Today's defaults, for a session nothing says how it was run.
    pub fn defaults(read_back: Option<ReadBack>) -> HowRun {
        HowRun {
            alpha: 0.05,
            precision: Some(DEFAULT_PRECISION),
            reference: None,
            looks: false,
            until_decided: false,
            searched: false,
            concurrent: Vec::new(),
            sweep: None,
            read_back,
        }
    }

    /// Whether stored cell `cell` ran in concurrency mode.
    pub fn ran_concurrently(&self, cell: usize) -> bool {
        self.concurrent.get(cell).copied().unwrap_or(false)
    }
}

/// A sweep's plan from stored settings: its parameters' values in the
/// order the cells took them.
fn stored_sweep_plan(s: &Settings) -> Option<SweepPlan> {
    // A `--reference` command is on no curve: one command besides it.
    let mut measured = s.cells.iter().filter(|c| c.template != REFERENCE);
    let first = measured.next()?;
    if s.searched()
        || Metric::from_name(&s.metric) != Some(Metric::WallTime)
        || measured.any(|c| c.template != first.template)
    {
        return None;
    }
    let mut parameters: Vec<Parameter> = Vec::new();
    let swept = s.cells.iter().filter(|c| c.template != REFERENCE);
    for (name, value) in swept.flat_map(|c| &c.parameters) {
        let p = match parameters.iter_mut().find(|p| &p.name == name) {
            Some(p) => p,
            None => {
                parameters.push(Parameter {
                    name: name.clone(),
                    values: Vec::new(),
                    numeric: None,
                    geometric: false,
                });
                parameters.last_mut()?
            }
        };
        if !p.values.contains(value) {
            p.values.push(value.clone());
        }
    }
    for p in &mut parameters {
        p.numeric = p.values.iter().map(|v| v.trim().parse().ok()).collect();
    }
    let cells = s
        .cells
        .iter()
        .map(|c| Cell {
            name: c.name.clone(),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            // The one curve is the first command's.
            template: if c.template == REFERENCE {
                REFERENCE
            } else {
                0
            },
            variant: c.variant.clone(),
            ..Cell::default()
        })
        .collect();
    Some(SweepPlan {
        cells,
        parameters,
        command: first.command.clone(),
    })
}

/// The session's wall-time comparisons, as `run` made them: the same
/// reference, family-wise alpha and precision, interleaved runs paired by
/// block (a block where either side timed out is dropped for that pair),
/// and, for a session with adaptive stopping, the level its final analysis
/// had left after the looks (replayed on the stored runs; for a
/// concurrency session, `batch_level`, its looks over batches). A search's
/// tried values are compared with its best (`search_best`), unpaired (its
/// runs came in rounds of different values), and the values it never
/// tried are left out.
pub fn compare(
    how: &HowRun,
    order: Option<&str>,
    cells: &[StoredRuns],
    search_best: Option<usize>,
    batch_level: Option<f64>,
) -> (Vec<Comparison>, Vec<StoredNote>) {
    let mut notes = Vec::new();
    if cells.len() < 2 {
        return (Vec::new(), notes);
    }
    notes.extend(how.read_back.map(StoredNote::ReadBack));
    let searched = how.searched;
    // Cells compared: all of them, or a search's tried values.
    let included: Vec<usize> = (0..cells.len())
        .filter(|&i| !searched || !cells[i].times.is_empty())
        .collect();
    if searched {
        notes.push(StoredNote::Searched);
    }
    let interleaved = order == Some("interleaved");
    let reference = how.reference.filter(|&r| r < cells.len()).unwrap_or(0);
    let reference = match (searched, search_best) {
        (true, Some(best)) => best,
        (true, None) => included.first().copied().unwrap_or(0),
        (false, _) => reference,
    };

    let mut final_alpha = how.alpha;
    if let (Some(level), true) = (batch_level, how.looks) {
        final_alpha = level;
    } else if let (true, true, Some(p)) = (how.looks && !searched, interleaved, how.precision) {
        let samples: Vec<&[Sample]> = cells.iter().map(|c| c.samples).collect();
        final_alpha = replay_runs(&samples, reference, how.alpha, p, how.until_decided);
    }

    if included.len() < 2 {
        return (Vec::new(), notes);
    }
    let out = compare_stored(
        cells,
        &included,
        reference,
        final_alpha,
        how.precision.unwrap_or(DEFAULT_PRECISION),
        interleaved && !searched,
    );
    if cells.iter().any(|c| c.times.len() > MAX_VALUES) {
        notes.push(StoredNote::Subsampled(MAX_VALUES));
    }
    (out, notes)
}

/// Concurrency mode's answers over a stored session loaded as `run` held
/// it (`store::replay::session`), made as `run` made them: the same
/// reference and precision, and for a session that stopped with
/// sequential looks the level its looks over batches left. None when no
/// cell has stored batches.
pub fn concurrency(
    mut s: Session,
    how: &HowRun,
) -> Option<(Session, crate::analysis::concurrency::Concurrency)> {
    use crate::analysis::concurrency;
    if s.results.iter().all(|r| r.batches.is_empty()) {
        return None;
    }
    // A cell run one at a time beside them has no throughput: its runs are
    // not instances of a batch.
    for r in s.results.iter_mut().filter(|r| r.batches.is_empty()) {
        r.samples.clear();
    }
    let reference = how.reference.filter(|&r| r < s.results.len()).unwrap_or(0);
    let precision = how.precision.unwrap_or(DEFAULT_PRECISION);
    let final_alpha = match (how.looks, how.precision, s.order) {
        (true, Some(p), Order::Interleaved) => {
            let seq = if how.until_decided {
                Sequential::until_decided(how.alpha, p)
            } else {
                Sequential::new(how.alpha, p)
            };
            let cells: Vec<(Option<usize>, &[BatchRecord])> = s
                .results
                .iter()
                .map(|r| (r.cell.variant.concurrency, r.batches.as_slice()))
                .collect();
            concurrency::replay_looks(seq, &cells, reference, true)
        }
        _ => how.alpha,
    };
    s.reference = reference;
    s.alpha = how.alpha;
    s.final_alpha = final_alpha;
    concurrency::analyse(&s, precision).map(|c| (s, c))
}

/// The values of `parameter` not significantly worse than the best, as
/// ranges of neighbouring values on the curve.
#[derive(Clone, Debug, PartialEq)]
pub struct AsGood {
    pub parameter: String,
    pub ranges: Vec<(f64, f64)>,
}

/// The values as good as the best on a sweep session's curve, decided by
/// the terminal sweep table's code (`sweep::build`) on the stored runs, at
/// the level and precision of the report's comparisons. Only for a session
/// that swept one parameter of one command by wall time. A search's set
/// comes from its race, which stored runs do not replay: it is the stored
/// answer (one parameter, by wall time: the curve is of wall time).
pub fn as_good(
    how: &HowRun,
    order: Option<&str>,
    search: Option<&StoredSearch>,
    cells: &[StoredRuns],
    comparisons: &[Comparison],
) -> Option<AsGood> {
    if let Some(s) = search {
        return stored_search_set(s);
    }
    if how.searched {
        return None;
    }
    let plan = how.sweep.as_ref()?;
    let mut varying = plan.parameters.iter().filter(|p| p.values.len() > 1);
    let (param, None) = (varying.next()?, varying.next()) else {
        return None;
    };
    let mut session = Session::empty();
    session.order = if order == Some("interleaved") {
        Order::Interleaved
    } else {
        Order::Sequential
    };
    for cell in plan.cells.iter().filter(|c| !c.calibration) {
        let stored = cells.iter().find(|c| c.name == cell.name)?;
        session.results.push(crate::run::session::CellResult::new(
            cell.clone(),
            stored.samples.to_vec(),
        ));
    }
    let analyses = crate::analysis::analyse(&session);
    let (alpha, precision) = comparisons
        .first()
        .map_or((how.alpha, DEFAULT_PRECISION), |c| {
            (c.level * c.family as f64, c.precision)
        });
    let sweep = crate::analysis::sweep::build(
        &session,
        &analyses,
        &plan.parameters,
        &crate::analysis::sweep::Measure {
            source: &crate::analysis::source::Source::Run(Metric::WallTime),
            series: None,
            maximize: false,
        },
        std::slice::from_ref(&plan.command),
        &crate::analysis::sweep::SetRules {
            comparisons,
            alpha,
            precision,
        },
    )?;
    let curve = sweep.curves.first()?;
    // Neighbouring members form one range.
    let mut ranges: Vec<(f64, f64)> = Vec::new();
    let mut last: Option<usize> = None;
    for &i in &curve.as_good {
        let x = curve.points[i].x?;
        match ranges.last_mut() {
            Some(r) if last == Some(i.wrapping_sub(1)) => r.1 = x,
            _ => ranges.push((x, x)),
        }
        last = Some(i);
    }
    Some(AsGood {
        parameter: param.name.clone(),
        ranges,
    })
}

/// A stored one-parameter wall-time search's set as ranges of numeric
/// values, neighbours among the tried values forming one range.
fn stored_search_set(s: &StoredSearch) -> Option<AsGood> {
    let [parameter] = s.parameters.as_slice() else {
        return None;
    };
    if s.metric != Metric::WallTime.name() {
        return None;
    }
    let x = |v: &crate::store::Setting| -> Option<f64> {
        v.first()?
            .1
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    };
    let mut ranges: Vec<(f64, f64)> = Vec::new();
    let mut last: Option<usize> = None;
    for (k, v) in s.values_tried.iter().enumerate() {
        if !s.as_good.contains(v) {
            continue;
        }
        let x = x(v)?;
        match ranges.last_mut() {
            Some(r) if last == Some(k.wrapping_sub(1)) => *r = (r.0.min(x), r.1.max(x)),
            _ => ranges.push((x, x)),
        }
        last = Some(k);
    }
    Some(AsGood {
        parameter: parameter.clone(),
        ranges,
    })
}
