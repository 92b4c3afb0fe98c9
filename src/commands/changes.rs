//! `cmdscope changes`: the change points in every stored benchmark's
//! history (found by `analysis::changes`; docs/CHANGES.md), rendered by
//! `report::changes` as text, Markdown or JSON, and a CI gate on the
//! newest session.

use crate::analysis::changes::{analyse_one, machine_shifts, Analysed, Params};
use crate::cli::store::{ChangesArgs, ChangesFormat};
use crate::error::{exit, Error, Result};
use crate::report::changes::{json, markdown, text};
use crate::store::history::{self, Query};
use crate::store::record::open_read_only;
use crate::store::Store;

pub fn params(alpha: f64) -> Result<Params> {
    crate::cli::check_alpha(alpha)?;
    Ok(Params {
        alpha,
        ..Params::default()
    })
}

fn min_change(pct: f64) -> Result<f64> {
    if pct.is_finite() && (0.0..1000.0).contains(&pct) {
        Ok(pct / 100.0)
    } else {
        Err(Error::Usage(format!(
            "--min-change must be a percentage from 0 to 1000, got {pct}"
        )))
    }
}

/// Every matching history's changes, sorted by machine then benchmark,
/// with one benchmark's runs in memory at a time: each history is analysed
/// as it is read, and only the answers (with the points' sessions, which
/// the histories share) are kept, not the runs.
pub fn analysed(store: &mut Store, query: &Query, p: &Params) -> Result<Vec<Analysed>> {
    let mut all = Vec::new();
    history::each(store, query, |h| {
        let mut a = analyse_one(h, p);
        for point in &mut a.history.points {
            point.runs = Vec::new();
        }
        all.push(a);
        Ok(())
    })?;
    all.sort_by(|a, b| {
        (&a.history.fingerprint, &a.history.benchmark)
            .cmp(&(&b.history.fingerprint, &b.history.benchmark))
    });
    Ok(all)
}

pub fn run(args: &ChangesArgs) -> Result<i32> {
    crate::cli::check_percentage("--threshold", args.threshold)?;
    let p = Params {
        min_change: min_change(args.min_change)?,
        ..params(args.alpha)?
    };
    history::metric(args.metric.as_deref())?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let query = Query {
        benchmark: args.benchmark.clone(),
        labels: crate::store::parse_labels(&args.sessions.labels)?,
        machine: args.sessions.machine.clone(),
        metric: args.metric.clone(),
        order_by: args.order_by.clone(),
    };
    let analysed = analysed(&mut store, &query, &p)?;
    if analysed.is_empty() {
        return Err(super::nothing_found(&store, "matching benchmark history"));
    }
    let shifts = machine_shifts(&analysed);
    let out = match args.format {
        ChangesFormat::Text => text(&analysed, &shifts),
        ChangesFormat::Markdown => markdown(&analysed, &shifts),
        ChangesFormat::Json => json(&analysed, &shifts),
    };
    crate::output::print(&crate::output::escape_controls(&out));
    let failing = analysed.iter().any(|a| {
        a.newest
            .as_ref()
            .is_some_and(|c| c.fails_gate(args.threshold))
    });
    Ok(if args.fail_on_new_regression && failing {
        exit::FAILURE
    } else {
        exit::OK
    })
}
