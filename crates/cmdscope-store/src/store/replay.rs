//! A stored session loaded back into the result model a live `run` fills
//! (`run::session::Session`): each cell named and conditioned as its
//! stored settings say, with its runs and, in concurrency mode, its
//! batches, and the session's end as its stored outcome says, so that the
//! analysis and the reports read it as they read the live session.

use std::time::{Duration, UNIX_EPOCH};

use super::{Result, Store, StoredSession};
use crate::run::plan::Cell;
use crate::run::schedule::Order;
use crate::run::session::{CellResult, Session};

/// The session `run` held, as far as the store keeps it: its cells (names,
/// variants and templates from the stored settings, when kept), every
/// stored run and batch, the order, the reference, the alpha, the machine
/// checks, and how it ended (the stored outcome: the final level, the
/// looks, the shell's start-up, the seed). Without an outcome (a session
/// stored before it was kept) the final level is the alpha: the caller
/// replays looks where there were.
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
            hooks: ran.map(|r| r.hooks.clone()).unwrap_or_default(),
            shell: ran.is_some_and(|r| r.shell),
            ..Cell::default()
        };
        // Settings stored before the short name was kept: the name.
        cell.short_name = ran
            .map(|r| r.short_name.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| cell.name.clone());
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
        s.timeout = (settings.timeout).and_then(|t| Duration::try_from_secs_f64(t).ok());
        s.shell = settings.shell.clone();
        s.simulated = settings.simulate.clone();
        s.counted = settings.counted.clone();
    }
    s.started = UNIX_EPOCH + Duration::try_from_secs_f64(stored.started_unix).unwrap_or_default();
    s.seed = (stored.seed.as_deref())
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    s.stop_reason = (stored.stop_reason.as_deref())
        .and_then(|r| serde_json::from_value(serde_json::Value::String(r.to_string())).ok());
    s.preflight = (stored.preflight.as_deref())
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or_default();
    if let Some(outcome) = &stored.outcome {
        outcome.apply(&mut s);
    }
    Ok(s)
}
