//! A stored concurrency-mode session as `run` held it, and its answers.

use super::decided::Decided;
use crate::analysis::sequential::Sequential;
use crate::error::Result;
use crate::run::schedule::Order;
use crate::store::{Store, StoredSession};

/// A stored session run in concurrency mode as `run` held it (each cell
/// with its runs and batches) and concurrency mode's answers over it, made
/// as `run` made them: the same reference and precision, and for a session
/// that stopped with sequential looks the level its looks over batches
/// left. None when no cell has stored batches.
pub fn stored_concurrency(
    store: &mut Store,
    session: &StoredSession,
) -> Result<
    Option<(
        crate::run::session::Session,
        crate::analysis::concurrency::Concurrency,
    )>,
> {
    use crate::analysis::concurrency;
    use crate::run::session::{CellResult, Session};
    let mut results = Vec::with_capacity(session.cells.len());
    for (i, c) in session.cells.iter().enumerate() {
        let batches = store.batches(c.id)?;
        let ran = session.settings.as_ref().and_then(|s| s.cells.get(i));
        let mut cell = crate::run::plan::Cell {
            name: ran.map_or_else(|| c.name.clone(), |r| r.name.clone()),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            template: ran.map_or(0, |r| r.template),
            variant: ran.map(|r| r.variant.clone()).unwrap_or_default(),
            ..crate::run::plan::Cell::default()
        };
        // The batches say at which N the cell ran, settings or not.
        if let Some(b) = batches.first() {
            cell.variant.concurrency = Some(b.concurrency);
        }
        results.push(CellResult {
            samples: if batches.is_empty() {
                Vec::new()
            } else {
                store.runs(c.id)?
            },
            cell,
            batches,
        });
    }
    if results.iter().all(|r| r.batches.is_empty()) {
        return Ok(None);
    }
    let decided = match session.settings.as_ref() {
        Some(s) => Decided::stored(s),
        None => Decided::inferred(&session.command_line, &session.source, &[]).0,
    };
    let order = match session.order.as_deref() {
        Some("sequential") => Order::Sequential,
        _ => Order::Interleaved,
    };
    let reference = decided
        .reference
        .filter(|&r| r < results.len())
        .unwrap_or(0);
    let precision = decided
        .precision
        .unwrap_or(crate::analysis::comparison::DEFAULT_PRECISION);
    let final_alpha = match (decided.looks, decided.precision, order) {
        (true, Some(p), Order::Interleaved) => {
            let seq = if decided.until_decided {
                Sequential::until_decided(decided.alpha, p)
            } else {
                Sequential::new(decided.alpha, p)
            };
            let cells: Vec<(Option<usize>, &[crate::run::session::BatchRecord])> = results
                .iter()
                .map(|r| (r.cell.variant.concurrency, r.batches.as_slice()))
                .collect();
            concurrency::replay_looks(seq, &cells, reference, true)
        }
        _ => decided.alpha,
    };
    let mut s = Session::empty();
    s.results = results;
    s.order = order;
    s.reference = reference;
    s.alpha = decided.alpha;
    s.final_alpha = final_alpha;
    Ok(concurrency::analyse(&s, precision).map(|c| (s, c)))
}
