//! Recording a `cmdscope run` into the store as it happens.
//!
//! The store is opened (and migrated) before the first run, so that a bad
//! store is reported before a long benchmark, not after it; it is held by a
//! helper process (see [`super::writer`]) so that cmdscope's own memory
//! does not grow into the measured peaks. Each measured
//! run goes to the helper as soon as it is made (the session's
//! [`Event::Sample`]), which commits it even if cmdscope is killed, so
//! `kill -9` leaves every finished run in the store. The session row is
//! written with the first run, so a
//! session that fails before measuring anything leaves no trace. A search's
//! answer (`run --minimize/--maximize`) and its race are written with the
//! end of the session ([`Recorder::keep_search`]), and so is how a monitor
//! that ended during the session ended, in the session's outcome
//! ([`Recorder::keep_monitor_end`]).
//!
//! A store failure never stops the benchmark: the recorder keeps the first
//! error, stops writing, and the caller reports it after the exports are
//! written (see `commands::run::run` for the exit code).

use std::time::SystemTime;

use std::sync::Arc;

use super::writer::{BatchMsg, Link, Msg, RunMsg, RunSink};
use super::{Location, NewCell, NewSession, Store, StoreError, StoredRace, StoredSearch};
use crate::error::Error;
use crate::metrics::Sample;
use crate::output::Named;
use crate::run::events::{Event, InstanceSink, Observer};
use crate::run::plan::Cell;
use crate::run::schedule::Step;
use crate::run::session::{BatchRecord, Session};

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

    /// The location, or why there is none; the default store's directory
    /// is created, for a writer.
    pub fn location(&self) -> Result<Option<Location>, StoreError> {
        self.location_for(true)
    }

    fn location_for(&self, writer: bool) -> Result<Option<Location>, StoreError> {
        match self {
            Choice::Disabled => Ok(None),
            Choice::Explicit(s) => Location::parse(s).map(Some),
            Choice::Default => match Location::default_location() {
                Some(loc) => {
                    if let (true, Location::Sqlite(p)) = (writer, &loc) {
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

/// Refuses, before anything runs or is written, a named store location
/// that cannot be a store, and `outputs` that would overwrite the store
/// (or one of its journal files), one another, or any other SQLite
/// database (another store's history); standard output and
/// error are checked against the store too (`history >> results.db`).
/// With `--no-store` the store named (or the default one) is still
/// protected: nothing is recorded there, but it holds the history.
pub fn check_outputs(
    no_store: bool,
    store: Option<&str>,
    outputs: &[Named],
) -> crate::error::Result<()> {
    let kept = match Choice::new(false, store) {
        Choice::Explicit(s) => match Location::parse(&s) {
            Ok(location) => location.files(),
            Err(_) if no_store => Vec::new(),
            Err(e) => return Err(e.into()),
        },
        _ => Location::default_location()
            .map(|l| l.files())
            .unwrap_or_default(),
    };
    crate::output::refuse_collisions(outputs, &kept)?;
    crate::output::refuse_databases(outputs)?;
    crate::output::refuse_streams_into(&kept)
}

/// Opens the store for a command that reads it (history, check, report):
/// it must exist and be a cmdscope store; nothing is created or changed. A
/// store of an older schema is read as it is, with a note on stderr saying
/// what it lacks.
pub fn open_read_only(store: Option<&str>) -> crate::error::Result<Store> {
    check_outputs(false, store, &[])?;
    match Choice::new(false, store).location_for(false)? {
        Some(loc) => {
            let store = Store::open_read_only(&loc)?;
            if let Some(note) = store.older_note() {
                crate::eprint_line!("cmdscope: note: {note}");
            }
            Ok(store)
        }
        None => Err(crate::error::StoreQueryError::NeedsStore.into()),
    }
}

/// Opens the store for a command that writes one (import): every failure
/// is an error.
pub fn open_required(no_store: bool, store: Option<&str>) -> crate::error::Result<Store> {
    check_outputs(no_store, store, &[])?;
    match Choice::new(no_store, store).location()? {
        Some(loc) => Ok(Store::open(&loc)?),
        None => Err(crate::error::StoreQueryError::NeedsStore.into()),
    }
}

/// The command line as typed, with any password in a URL removed.
pub fn command_line() -> String {
    std::env::args_os()
        .map(|a| super::redact(&a.to_string_lossy()))
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
    store: Option<Link>,
    explicit: bool,
    open_error: Option<String>,
    error: Option<String>,
    meta: NewSession,
    /// Cells to store, in order (calibration cells left out).
    cells: Vec<NewCell>,
    /// Runner cell index -> index into `cells`.
    position: Vec<Option<usize>>,
    began: bool,
    next_seq: Vec<i64>,
    /// Batches sent per stored cell.
    next_block: Vec<usize>,
    /// The sink of each stored cell's batch under way, whose runs its
    /// slots write as they end ([`Observer::instances`]).
    sinks: Vec<Option<Arc<RunSink>>>,
    /// A search's answer and race, written with the end of the session.
    search: Option<(StoredSearch, StoredRace)>,
    /// `--monitor`'s end during the session, kept in its outcome.
    monitor_ended: Option<(usize, String)>,
}

impl Recorder {
    /// Opens the store; a failure is kept (see [`Recorder::open_error`]), not returned.
    pub fn open(choice: &Choice, meta: NewSession, cells: &[Cell]) -> Recorder {
        let explicit = matches!(choice, Choice::Explicit(_));
        let (store, open_error) = match choice
            .location()
            .and_then(|loc| loc.map(|l| Link::open(&l)).transpose())
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
            next_block: vec![0; stored.len()],
            sinks: vec![None; stored.len()],
            cells: stored,
            position,
            began: false,
            search: None,
            monitor_ended: None,
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
                // Never stored: reading the machine would be start-up time.
                machine: super::Machine::default(),
                labels: Vec::new(),
                settings: None,
            },
            cells: Vec::new(),
            position: Vec::new(),
            began: false,
            next_seq: Vec::new(),
            next_block: Vec::new(),
            sinks: Vec::new(),
            search: None,
            monitor_ended: None,
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

    fn fail(&mut self, e: StoreError) {
        self.error.get_or_insert(e.0);
        self.store = None;
    }

    fn call(&mut self, msg: &Msg) -> Option<()> {
        let link = self.store.as_mut()?;
        match link.call(msg) {
            Ok(()) => Some(()),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn ensure_session(&mut self) -> Option<()> {
        if self.began {
            return Some(());
        }
        self.store.as_ref()?;
        let msg = Msg::Begin {
            session: Box::new(self.meta.clone()),
            cells: self.cells.clone(),
        };
        self.call(&msg)?;
        self.began = true;
        Some(())
    }

    /// Stores a per-run series of a metric without a column for runner
    /// cell `cell` (NaN: no value for that run); before `finish`.
    pub fn add_extra(&mut self, cell: usize, metric: &str, unit: &str, values: &[f64]) {
        let Some(Some(pos)) = self.position.get(cell).copied() else {
            return;
        };
        if self.ensure_session().is_none() {
            return;
        }
        let msg = Msg::Extra {
            cell: pos,
            metric: metric.to_string(),
            unit: unit.to_string(),
            values: values.iter().map(|v| v.is_finite().then_some(*v)).collect(),
        };
        self.call(&msg);
    }

    /// Keeps a search's answer and race (see `search::stored_answer`) to be
    /// stored with the end of the session.
    pub fn keep_search(&mut self, search: StoredSearch, race: StoredRace) {
        self.search = Some((search, race));
    }

    /// Keeps how the monitor ended during the session (the measured runs
    /// made before, and how), to be stored in the session's outcome.
    pub fn keep_monitor_end(&mut self, ended: Option<(usize, String)>) {
        self.monitor_ended = ended;
    }

    /// Writes the end of the session. Returns the first store error of the
    /// whole session (open, a run, or this), if any.
    pub fn finish(&mut self, session: &Session) -> Option<String> {
        if let Some(e) = &self.open_error {
            return Some(e.clone());
        }
        if self.store.is_some() && self.began {
            // With -S the runner subtracts the shell's start-up at the end:
            // replace the raw runs streamed so far by the final values. A
            // result goes to the stored cell it was planned as: a search's
            // session holds only the values it tried, so result k is not
            // always cell k.
            if session.shell_overhead.is_some() {
                // Results come in plan order (a search's tried values
                // ascending), so the search starts after the last match:
                // one pass over the cells, not one per result.
                let n = self.cells.len();
                let mut used = vec![false; n];
                let mut next = 0;
                for r in session.results.iter().filter(|r| !r.cell.calibration) {
                    let planned = NewCell::from_cell(&r.cell);
                    let Some(cell) = (next..n)
                        .chain(0..next)
                        .find(|&i| !used[i] && self.cells[i] == planned)
                    else {
                        continue;
                    };
                    used[cell] = true;
                    next = cell + 1;
                    let msg = Msg::Replace {
                        cell,
                        runs: r.samples.iter().map(RunMsg::from_sample).collect(),
                    };
                    if self.call(&msg).is_none() {
                        break;
                    }
                }
            }
            if let Some((search, race)) = &self.search {
                let msg = Msg::Search {
                    search: search.to_json(),
                    race: Some(race.to_json()),
                };
                self.call(&msg);
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
            let msg = Msg::Finish {
                status: status.into(),
                stop_reason,
                shell_overhead: session.shell_overhead.map(|o| o.wall),
                preflight: serde_json::to_string(&session.preflight).ok(),
                outcome: Some(
                    crate::run::session::Outcome {
                        monitor_ended: self.monitor_ended.clone(),
                        ..crate::run::session::Outcome::of(session)
                    }
                    .to_json(),
                ),
            };
            self.call(&msg);
        }
        // Closing the link ends the helper.
        self.store = None;
        self.error.clone()
    }
}

impl Observer for Recorder {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::Sample { cell, sample } => self.sample(cell, sample),
            Event::Batch { cell, batch } => self.batch(cell, batch),
            Event::Schedules { socket } => self.watch(socket),
            Event::Scheduled { first, steps } => self.scheduled(first, steps),
            _ => {}
        }
    }

    /// The runs of a concurrency batch go to the helper as each instance
    /// ends, from its slot's thread: a `kill -9` then loses only the
    /// instances still running, as with single runs.
    fn instances(&mut self, cell: usize) -> Option<Arc<dyn InstanceSink>> {
        let pos = self.position.get(cell).copied().flatten()?;
        self.ensure_session()?;
        let sink = match self.store.as_ref()?.run_sink(pos, self.next_seq[pos]) {
            Ok(sink) => Arc::new(sink),
            Err(e) => {
                self.fail(e);
                return None;
            }
        };
        self.sinks[pos] = Some(sink.clone());
        Some(sink)
    }
}

impl Recorder {
    /// The helper keeps a copy of the spawner's socket, to store the runs
    /// made from schedules whose reports cmdscope never read, should it
    /// die (`writer::Msg::Watch`).
    fn watch(&mut self, socket: std::os::fd::RawFd) {
        let Some(link) = self.store.as_mut() else {
            return;
        };
        if let Err(e) = link.watch(socket) {
            self.fail(e);
        }
    }

    /// Tells the helper where each scheduled run goes, before the spawner
    /// makes it: the session must exist by then, for the helper to store
    /// the runs cmdscope did not.
    fn scheduled(&mut self, first: u64, steps: &[Step]) {
        if self.store.is_none() {
            return;
        }
        let cells: Vec<Option<usize>> = steps
            .iter()
            .map(|&step| match step {
                Step::Measure(c) => self.position.get(c).copied().flatten(),
                Step::Warmup(_) | Step::Done => None,
            })
            .collect();
        if cells.iter().any(Option::is_some) && self.ensure_session().is_none() {
            return;
        }
        let Some(link) = self.store.as_mut() else {
            return;
        };
        if let Err(e) = link.send(&Msg::Scheduled { first, cells }) {
            self.fail(e);
        }
    }

    /// A batch goes to the helper after its runs, without waiting, as they
    /// do. Its runs are the cell's last stored ones, and it is numbered
    /// after the cell's stored batches: in a session these are the
    /// runner's own numbers, and a search's rounds, each a session of its
    /// own that counts from its start, still get one key per batch.
    fn batch(&mut self, cell: usize, batch: &BatchRecord) {
        let Some(Some(pos)) = self.position.get(cell).copied() else {
            return;
        };
        if self.ensure_session().is_none() {
            return;
        }
        if let Some(e) = self.sinks[pos].take().and_then(|s| s.error()) {
            self.fail(e);
            return;
        }
        let mut msg = BatchMsg::from_batch(batch);
        msg.first_seq = (self.next_seq[pos].max(0) as usize).saturating_sub(batch.spans.len());
        self.next_block[pos] += 1;
        msg.block = self.next_block[pos];
        let msg = Msg::Batch {
            cell: pos,
            batch: msg,
        };
        let Some(link) = self.store.as_mut() else {
            return;
        };
        if let Err(e) = link.send(&msg) {
            self.fail(e);
        }
    }

    fn sample(&mut self, cell: usize, sample: &Sample) {
        let Some(Some(pos)) = self.position.get(cell).copied() else {
            return; // calibration runs are not stored
        };
        if self.sinks[pos].is_some() {
            // Written by its slot as it ended, under this number.
            self.next_seq[pos] += 1;
            return;
        }
        if self.ensure_session().is_none() {
            return;
        }
        let Some(link) = self.store.as_mut() else {
            return;
        };
        match link.send_run(pos, self.next_seq[pos], sample) {
            Ok(()) => self.next_seq[pos] += 1,
            Err(e) => self.fail(e),
        }
    }
}
