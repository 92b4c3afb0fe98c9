//! A stored session loaded back into the result model a live `run` fills
//! (`run::session::Session`): each cell named and conditioned as its
//! stored settings say, with its runs and, in concurrency mode, its
//! batches, so that the analysis reads it as it read the live session.

use super::{Result, Store, StoredSession};
use crate::run::plan::Cell;
use crate::run::schedule::Order;
use crate::run::session::{CellResult, Session};

/// The session `run` held, as far as the store keeps it: its cells (names,
/// variants and templates from the stored settings, when kept), every
/// stored run and batch, the order, the reference and the alpha; the
/// final level is the alpha (the caller replays looks where there were).
pub fn session(store: &mut Store, stored: &StoredSession) -> Result<Session> {
    // Settings that do not name the stored cells one for one name none.
    let settings = (stored.settings.as_ref()).filter(|s| s.cells.len() == stored.cells.len());
    let mut results = Vec::with_capacity(stored.cells.len());
    for (i, c) in stored.cells.iter().enumerate() {
        let batches = store.batches(c.id)?;
        let ran = settings.and_then(|s| s.cells.get(i));
        let mut cell = Cell {
            name: ran.map_or_else(|| c.name.clone(), |r| r.name.clone()),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            template: ran.map_or(0, |r| r.template),
            variant: ran.map(|r| r.variant.clone()).unwrap_or_default(),
            ..Cell::default()
        };
        // The batches say at which N the cell ran, settings or not.
        if let Some(b) = batches.first() {
            cell.variant.concurrency = Some(b.concurrency);
        }
        results.push(CellResult {
            samples: store.runs(c.id)?,
            cell,
            batches,
        });
    }
    let mut s = Session::empty();
    s.results = results;
    s.order = match stored.order.as_deref() {
        Some("sequential") => Order::Sequential,
        _ => Order::Interleaved,
    };
    if let Some(settings) = stored.settings.as_ref() {
        s.reference = settings.reference;
        s.alpha = settings.alpha;
        s.final_alpha = settings.alpha;
    }
    Ok(s)
}
