//! The values as good as the best on a stored sweep's or search's curve.

use super::decided::run_args;
use crate::analysis::comparison::Comparison;
use crate::metrics::Metric;
use crate::report::html::{self, CellData};
use crate::run::schedule::Order;
use crate::store::StoredSearch;

/// The values as good as the best on a sweep session's curve, decided by
/// the terminal sweep table's code (`sweep::build`) on the stored runs, at
/// the level and precision of the report's comparisons. Only for a session
/// that swept one parameter of one command by wall time. A search's set
/// comes from its race, which stored runs do not replay: it is the stored
/// answer (one parameter, by wall time: the curve is of wall time).
pub fn sweep_set(
    command_line: &str,
    order: Option<&str>,
    search: Option<&StoredSearch>,
    cells: &[CellData],
    comparisons: &[Comparison],
) -> Option<html::SweepSet> {
    if let Some(s) = search {
        return stored_search_set(s);
    }
    let mut args = run_args(command_line)?;
    // Planning with --time-unit would force the report's units: not ours to set.
    args.time_unit = None;
    if args.commands.len() != 1
        || args.minimize.is_some()
        || args.maximize.is_some()
        || Metric::from_name(&args.metric) != Some(Metric::WallTime)
    {
        return None;
    }
    let (planned, params) = crate::cli::cells::plan_cells(&args).ok()?;
    let mut varying = params.iter().filter(|p| p.values.len() > 1);
    let (param, None) = (varying.next()?, varying.next()) else {
        return None;
    };
    let mut session = crate::run::session::Session::empty();
    session.order = if order == Some("interleaved") {
        Order::Interleaved
    } else {
        Order::Sequential
    };
    for cell in planned.into_iter().filter(|c| !c.calibration) {
        let stored = cells.iter().find(|c| c.name == cell.name)?;
        session.results.push(crate::run::session::CellResult::new(
            cell,
            stored.samples.clone(),
        ));
    }
    let analyses = crate::analysis::analyse(&session);
    let (alpha, precision) = comparisons.first().map_or(
        (args.alpha, crate::analysis::comparison::DEFAULT_PRECISION),
        |c| (c.level * c.family as f64, c.precision),
    );
    let sweep = crate::analysis::sweep::build(
        &session,
        &analyses,
        &params,
        &crate::analysis::sweep::Measure {
            source: &crate::analysis::source::Source::Run(Metric::WallTime),
            series: None,
            maximize: false,
        },
        &[args.commands[0].to_string_lossy().into_owned()],
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
    Some(html::SweepSet {
        parameter: param.name.clone(),
        ranges,
    })
}

/// A stored one-parameter wall-time search's set as ranges of numeric
/// values, neighbours among the tried values forming one range.
fn stored_search_set(s: &StoredSearch) -> Option<html::SweepSet> {
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
    Some(html::SweepSet {
        parameter: parameter.clone(),
        ranges,
    })
}
