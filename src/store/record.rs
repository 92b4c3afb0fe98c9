//! Recording a `cmdscope run` into the store as it happens.
//!
//! The store is opened (and migrated) before the first run, so that a bad
//! store is reported before a long benchmark, not after it. Each measured
//! run is committed in its own short transaction as soon as it is made
//! (the runner's [`SampleSink`] hook), so `kill -9` leaves every finished
//! run in the store. The session row is written with the first run, so a
//! session that fails before measuring anything leaves no trace.
//!
//! A store failure never stops the benchmark: the recorder keeps the first
//! error, stops writing, and the caller reports it after the exports are
//! written (see `app::run` for the exit code).

use std::time::SystemTime;

use super::{Finish, Location, NewCell, NewSession, Store, StoreError};
use crate::error::Error;
use crate::metrics::Sample;
use crate::plan::Cell;
use crate::runner::{SampleSink, Session};

/// Which store a command uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// `--no-store`.
    Disabled,
    /// No `--store` and no `CMDSCOPE_STORE`: the per-user default.
    Default,
    /// `--store` or `CMDSCOPE_STORE`.
    Explicit(String),
}

impl Choice {
    pub fn new(no_store: bool, store: Option<&str>) -> Choice {
        match (no_store, store) {
            (true, _) => Choice::Disabled,
            (false, Some(s)) if !s.is_empty() => Choice::Explicit(s.to_string()),
            _ => Choice::Default,
        }
    }

    /// The location, or why there is none.
    pub fn location(&self) -> Result<Option<Location>, StoreError> {
        match self {
            Choice::Disabled => Ok(None),
            Choice::Explicit(s) => Ok(Some(Location::parse(s))),
            Choice::Default => match Location::default_location() {
                Some(loc) => {
                    if let Location::Sqlite(p) = &loc {
                        if let Some(dir) = p.parent() {
                            std::fs::create_dir_all(dir).map_err(|e| {
                                StoreError(format!(
                                    "store '{}': cannot create its directory: {e}",
                                    p.display()
                                ))
                            })?;
                        }
                    }
                    Ok(Some(loc))
                }
                None => Err(StoreError(
                    "no store location: neither XDG_DATA_HOME nor HOME is set; \
                     give --store PATH or set CMDSCOPE_STORE"
                        .into(),
                )),
            },
        }
    }
}

/// Opens the store for a command that needs one (history, check, report,
/// import): every failure is an error.
pub fn open_required(no_store: bool, store: Option<&str>) -> crate::error::Result<Store> {
    match Choice::new(no_store, store).location()? {
        Some(loc) => Ok(Store::open(&loc)?),
        None => Err(Error::Usage(
            "this command needs a store; drop --no-store".into(),
        )),
    }
}

/// The command line as typed, with any password in a URL removed.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| super::redact(&a))
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'') {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub struct Recorder {
    store: Option<Store>,
    explicit: bool,
    open_error: Option<String>,
    error: Option<String>,
    meta: NewSession,
    /// Cells to store, in order (calibration cells left out).
    cells: Vec<NewCell>,
    /// Runner cell index -> index into `cells`.
    position: Vec<Option<usize>>,
    session: Option<i64>,
    cell_ids: Vec<i64>,
    next_seq: Vec<i64>,
}

impl Recorder {
    /// Opens the store; a failure is kept (see [`Recorder::open_error`]), not returned.
    pub fn open(choice: &Choice, meta: NewSession, cells: &[Cell]) -> Recorder {
        let explicit = matches!(choice, Choice::Explicit(_));
        let (store, open_error) = match choice
            .location()
            .and_then(|loc| loc.map(|l| Store::open(&l)).transpose())
        {
            Ok(store) => (store, None),
            Err(e) => (None, Some(e.0)),
        };
        let mut stored = Vec::new();
        let position = cells
            .iter()
            .map(|c| {
                (!c.calibration).then(|| {
                    stored.push(NewCell::from_cell(c));
                    stored.len() - 1
                })
            })
            .collect();
        Recorder {
            store,
            explicit,
            open_error,
            error: None,
            meta,
            next_seq: vec![0; stored.len()],
            cells: stored,
            position,
            session: None,
            cell_ids: Vec::new(),
        }
    }

    /// A recorder that stores nothing (`--no-store`).
    pub fn disabled() -> Recorder {
        Recorder {
            store: None,
            explicit: false,
            open_error: None,
            error: None,
            meta: NewSession {
                started: SystemTime::now(),
                source: String::new(),
                command_line: String::new(),
                order: None,
                seed: None,
                shell: None,
                machine: super::Machine::current(),
                labels: Vec::new(),
            },
            cells: Vec::new(),
            position: Vec::new(),
            session: None,
            cell_ids: Vec::new(),
            next_seq: Vec::new(),
        }
    }

    /// Why the store could not be opened.
    pub fn open_error(&self) -> Option<&str> {
        self.open_error.as_deref()
    }

    /// True when the user named the store (`--store`, `CMDSCOPE_STORE`).
    pub fn explicit(&self) -> bool {
        self.explicit
    }

    /// Where the store is (password removed), when one is open.
    pub fn location(&self) -> Option<&str> {
        self.store.as_ref().map(Store::location)
    }

    /// The stored session's id, once its first run is recorded.
    pub fn session_id(&self) -> Option<i64> {
        self.session
    }

    fn fail(&mut self, e: StoreError) {
        self.error.get_or_insert(e.0);
        self.store = None;
    }

    fn ensure_session(&mut self) -> Option<()> {
        if self.session.is_some() {
            return Some(());
        }
        let store = self.store.as_mut()?;
        let result = store.begin_session(&self.meta).and_then(|id| {
            let ids = store.add_cells(id, &self.cells)?;
            Ok((id, ids))
        });
        match result {
            Ok((id, ids)) => {
                self.session = Some(id);
                self.cell_ids = ids;
                Some(())
            }
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    /// Writes the end of the session. Returns the first store error of the
    /// whole session (open, a run, or this), if any.
    pub fn finish(&mut self, session: &Session) -> Option<String> {
        if let Some(e) = &self.open_error {
            return Some(e.clone());
        }
        if self.store.is_some() && self.session.is_some() {
            let id = self.session.unwrap_or_default();
            let result = self.finish_inner(id, session);
            if let Err(e) = result {
                self.fail(e);
            }
        }
        self.error.clone()
    }

    fn finish_inner(&mut self, id: i64, session: &Session) -> Result<(), StoreError> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        // With -S the runner subtracts the shell's start-up at the end:
        // replace the raw runs streamed so far by the final values.
        if session.shell_overhead.is_some() {
            for (i, r) in session.results.iter().enumerate() {
                if let Some(&cell) = self.cell_ids.get(i) {
                    store.replace_runs(cell, &r.samples)?;
                }
            }
        }
        let status = match &session.failure {
            None => "finished",
            Some(Error::Interrupted) => "interrupted",
            Some(_) => "failed",
        };
        let stop_reason = session
            .stop_reason
            .and_then(|r| serde_json::to_value(r).ok())
            .and_then(|v| v.as_str().map(str::to_string));
        store.finish_session(
            id,
            &Finish {
                status: status.into(),
                stop_reason,
                shell_overhead: session.shell_overhead.map(|o| o.wall),
            },
        )
    }
}

impl SampleSink for Recorder {
    fn sample(&mut self, cell: usize, sample: &Sample) {
        let Some(Some(pos)) = self.position.get(cell).copied() else {
            return; // calibration runs are not stored
        };
        if self.ensure_session().is_none() {
            return;
        }
        let (Some(store), Some(&cell_id)) = (self.store.as_mut(), self.cell_ids.get(pos)) else {
            return;
        };
        let seq = self.next_seq[pos];
        match store.add_runs(cell_id, seq, std::slice::from_ref(sample)) {
            Ok(()) => self.next_seq[pos] += 1,
            Err(e) => self.fail(e),
        }
    }
}
