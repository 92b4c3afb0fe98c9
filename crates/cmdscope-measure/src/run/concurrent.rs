//! Concurrency mode: a cell's runs made N at a time, closed loop (when one
//! instance ends the next starts, until the batch's completions are made).
//!
//! Every slot is a worker thread with a spawner of its own, so each
//! instance is measured exactly as a single run is (its own `wait4`,
//! `/proc/<pid>/io`, peak memory, the same floor). The slots' spawners are
//! copies of one spawner the pool starts first, which runs nothing itself
//! (`Spawner::fork`: a fork of the small spawner costs a fraction of a new
//! one's exec and start-up, and one request makes many). They are
//! children of the thread that started the first spawner, whose exit the
//! kernel's parent-death signal follows: the pool is grown and dropped on
//! one thread (the runner's), and ends every slot before that. The
//! workers prepare each cell's command once and run it as often as the
//! shared ticket counter allows.
//!
//! What an instance leaves running is killed when the whole batch has
//! ended, not after each instance: the leftover scan cannot tell one
//! instance's orphans from another instance still running. A timeout
//! kills the timed-out instance's tree alone (its spawner's descendants,
//! each with its process group); the other instances run on, and the
//! instance is recorded as a single run's timeout is.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::exec::workdir::RunDir;
use crate::exec::{self, signals, Input, Outcome, Prepared, SpawnConfig, Spawner};
use crate::metrics::Sample;
use crate::run::events::InstanceSink;
use crate::run::host::{self, HostView};
use crate::run::plan::Cell;

use crate::run::session::Span;

/// One finished instance: its measurements and when it ran (seconds from
/// the batch's start) in which slot.
#[derive(Clone, Debug)]
pub struct Instance {
    pub span: Span,
    pub sample: Sample,
    pub outcome: Outcome,
    /// Its place among the batch's instances in the order they ended.
    pub index: usize,
}

/// Where a measured batch's instances go as each ends ([`InstanceSink`]),
/// numbered from `first_run_index` in that order.
#[derive(Clone)]
pub struct Sink {
    pub to: Arc<dyn InstanceSink>,
    pub first_run_index: u64,
}

/// One batch of a cell at its concurrency.
#[derive(Debug)]
pub struct Batch {
    pub instances: Vec<Instance>,
    /// From the moment every slot had started to the moment the first slot
    /// found no more work: the stretch in which all N were busy.
    pub busy: (f64, f64),
    /// From the batch's start to its last instance's end.
    pub elapsed: f64,
    /// The first error a slot met (the batch stops giving out work then).
    pub failure: Option<Error>,
    pub host: HostView,
}

/// What every instance of a cell needs besides its command: its
/// `--prepare` and `--conclude` (run in its slot, before and after it,
/// outside its measured time) and, when the cell has a working directory,
/// one per slot, made fresh before each of the slot's instances.
#[derive(Clone)]
pub struct Instances {
    pub cell: Cell,
    pub input: Input,
    pub show_output: bool,
    pub dirs: Arc<Vec<RunDir>>,
}

enum Job {
    Run {
        cell: usize,
        config: Arc<SpawnConfig>,
        hooks: Arc<Instances>,
        tickets: Arc<AtomicUsize>,
        limit: usize,
        /// How many slots share the tickets.
        slots: usize,
        epoch: Instant,
        out: mpsc::Sender<Report>,
        /// Instances of the batch running now, and the batch's N.
        running: Arc<AtomicUsize>,
        n: usize,
        /// Instances of the batch ended so far, and where each goes then.
        ended: Arc<AtomicUsize>,
        sink: Option<Sink>,
    },
}

/// What a slot tells the batch: an error (after which every slot stops
/// taking work), and once per batch the instances it made. One message
/// per slot and batch, not one per instance: the runner has nothing to do
/// meanwhile, and waking it for each instance costs each run a wake-up.
enum Report {
    Failed(Error),
    Finished(Vec<Instance>),
}

struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// The slots: grown to the largest concurrency asked for, kept for the
/// session.
#[derive(Default)]
pub struct Pool {
    workers: Vec<Worker>,
    /// The spawner the slots' spawners are copies of (it runs nothing).
    first: Option<Spawner>,
}

impl Pool {
    pub fn new() -> Pool {
        Pool::default()
    }

    /// Starts slots until there are `n`: their spawners first, copies of
    /// the first spawner made [`exec::FORK_MAX`] per request, then a thread
    /// for each. If one could not start, none of the new slots is kept.
    fn grow(&mut self, n: usize) -> Result<()> {
        let old = self.workers.len();
        if old >= n {
            return Ok(());
        }
        if self.first.is_none() {
            // No cgroup: a timeout kills its instance's tree alone
            // (`confine_kills`), never a session's cgroup. Confined, its
            // end kills nothing of the session's.
            let first = Spawner::start(false).map_err(|e| start_failed(n, old, e))?;
            first.confine_kills();
            self.first = Some(first);
        }
        let first = self.first.as_ref().expect("started above");
        let mut spawners = Vec::with_capacity(n - old);
        while spawners.len() < n - old {
            let copies = first
                .fork(n - old - spawners.len())
                .map_err(|e| start_failed(n, old + spawners.len(), e))?;
            spawners.extend(copies);
        }
        let mut failure = None;
        for (slot, spawner) in (old..n).zip(spawners) {
            // A timed-out instance is killed alone: its neighbours run on.
            spawner.confine_kills();
            let (tx, rx) = mpsc::channel::<Job>();
            let thread = std::thread::Builder::new()
                .name(format!("slot-{slot}"))
                .spawn(move || work(slot, spawner, rx));
            match thread {
                Ok(thread) => self.workers.push(Worker {
                    jobs: Some(tx),
                    thread: Some(thread),
                }),
                Err(e) => {
                    failure = Some(Error::Io(e));
                    break;
                }
            }
        }
        let Some(e) = failure else {
            return Ok(());
        };
        let up = self.workers.len();
        // The slots that did start end here, their spawners with them.
        end(self.workers.drain(old..));
        Err(start_failed(n, up, e))
    }

    /// Runs `completions` instances of `config` (cell `cell`), `n` at a
    /// time (`run::plan` keeps n within 1..=MAX_CONCURRENCY); `leftovers`
    /// kills what they left running once all have ended. `hooks` holds what
    /// each instance needs besides the command; `sink`, where each goes the
    /// moment it ends (a measured batch's, for the store).
    #[allow(clippy::too_many_arguments)]
    pub fn run_batch(
        &mut self,
        cell: usize,
        config: Arc<SpawnConfig>,
        hooks: Instances,
        n: usize,
        completions: usize,
        leftovers: &dyn Fn() -> usize,
        sink: Option<Sink>,
    ) -> Result<(Batch, usize)> {
        self.grow(n)?;
        let disks = host::whole_disks();
        let before = host::snapshot(&disks);
        let tickets = Arc::new(AtomicUsize::new(0));
        let running = Arc::new(AtomicUsize::new(0));
        let ended = Arc::new(AtomicUsize::new(0));
        let (out, reports) = mpsc::channel();
        let epoch = Instant::now();
        let slots = n.min(completions.max(1));
        let hooks = Arc::new(hooks);
        for w in &self.workers[..slots] {
            let job = Job::Run {
                cell,
                config: config.clone(),
                hooks: hooks.clone(),
                tickets: tickets.clone(),
                limit: completions,
                slots,
                epoch,
                out: out.clone(),
                running: running.clone(),
                n,
                ended: ended.clone(),
                sink: sink.clone(),
            };
            if let Some(tx) = &w.jobs {
                tx.send(job)
                    .map_err(|_| Error::Failed("an instance slot stopped".into()))?;
            }
        }
        drop(out);
        let mut instances = Vec::with_capacity(completions);
        let mut failure = None;
        let mut idle = 0;
        // A slot that fails stops handing out work to every slot, so the
        // batch ends soon after; all slots still report before it returns.
        while idle < slots {
            match reports.recv() {
                Ok(Report::Failed(e)) => {
                    failure.get_or_insert(e);
                }
                Ok(Report::Finished(made)) => {
                    instances.extend(made);
                    idle += 1;
                }
                Err(_) => {
                    failure.get_or_insert(Error::Failed("an instance slot stopped".into()));
                    break;
                }
            }
        }
        let elapsed = epoch.elapsed().as_secs_f64();
        let after = host::snapshot(&disks);
        let left = leftovers();
        // In the order they ended, as the sink numbered them.
        instances.sort_by_key(|i| i.index);
        let busy = busy_window(instances.iter().map(|i| &i.span), slots);
        Ok((
            Batch {
                host: host::view(&before, &after, elapsed),
                elapsed,
                instances,
                busy,
                failure,
            },
            left,
        ))
    }
}

/// Ends `workers`: every slot is told first, so that all end at once, then
/// each is joined.
fn end(workers: impl Iterator<Item = Worker>) {
    let mut threads = Vec::new();
    for mut w in workers {
        w.jobs = None;
        threads.extend(w.thread.take());
    }
    for t in threads {
        let _ = t.join();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        end(self.workers.drain(..));
        self.first = None;
        // Once for all slots, not by each: every wait for any child scans
        // all of cmdscope's children, thousands of spawners with
        // --concurrency.
        exec::reap_orphans();
    }
}

fn work(slot: usize, spawner: Spawner, jobs: mpsc::Receiver<Job>) {
    let spawner = Rc::new(spawner);
    let mut prepared: HashMap<usize, Prepared> = HashMap::new();
    for job in jobs {
        let Job::Run {
            cell,
            config,
            hooks,
            tickets,
            limit,
            slots,
            epoch,
            out,
            running,
            n,
            ended,
            sink,
        } = job;
        let dir = hooks.dirs.get(slot);
        let p = match prepared.entry(cell) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                // The slot's own directory, where the cell has them.
                let mut config = (*config).clone();
                if let Some(d) = dir {
                    config.cwd = Some(d.path.clone());
                }
                match Prepared::new(&spawner, &config) {
                    Ok(p) => e.insert(p),
                    Err(err) => {
                        tickets.store(limit, Ordering::SeqCst);
                        let _ = out.send(Report::Failed(err));
                        let _ = out.send(Report::Finished(Vec::new()));
                        continue;
                    }
                }
            }
        };
        // One slot with nothing to do between its instances: they are made
        // from schedules, as single runs are (`run::ahead`), so that N = 1
        // costs what single runs cost. `handed`: runs handed over, not taken.
        let ahead = slots == 1
            && p.schedulable()
            && dir.is_none()
            && hooks.cell.hooks.prepare.is_none()
            && hooks.cell.hooks.conclude.is_none();
        let mut handed = 0;
        let mut made = Vec::new();
        // A failure stops every slot: no more tickets.
        let fail = |e: Error| {
            tickets.store(limit, Ordering::SeqCst);
            let _ = out.send(Report::Failed(e));
        };
        loop {
            let ticket = tickets.fetch_add(1, Ordering::SeqCst);
            if signals::received().is_some() || ticket >= limit {
                break;
            }
            if ahead && handed == 0 {
                // The slot's own tickets: no other slot takes any.
                let runs = vec![&*p; (limit - ticket).min(exec::SCHEDULE_MAX)];
                if let Err(e) = spawner.schedule(&runs, false) {
                    fail(e);
                    break;
                }
                handed = runs.len();
            }
            if let Some(hook) = &hooks.cell.hooks.prepare {
                let ran = crate::run::hooks::run(
                    "prepare",
                    hook,
                    &hooks.cell,
                    &hooks.input,
                    hooks.show_output,
                    &[],
                );
                if let Err(e) = ran {
                    fail(e);
                    break;
                }
            }
            if let Some(d) = dir {
                if let Err(e) = d.fresh() {
                    fail(e);
                    break;
                }
            }
            let mut sample = Sample::new(0);
            running.fetch_add(1, Ordering::SeqCst);
            let (ran, start, end) = if ahead {
                handed -= 1;
                let ran = p.take(&mut sample);
                let since = |t: Instant| t.saturating_duration_since(epoch).as_secs_f64();
                let (start, end) = p
                    .last_span()
                    .map_or((0.0, 0.0), |(s, e)| (since(s), since(e)));
                (ran, start, end)
            } else {
                let start = epoch.elapsed().as_secs_f64();
                let ran = p.run(&mut sample);
                (ran, start, epoch.elapsed().as_secs_f64())
            };
            // The others running as this one ended (or failed to start).
            let others = running.fetch_sub(1, Ordering::SeqCst).saturating_sub(1);
            // Numbered and handed on before anything else (its conclude
            // hook, the next instance), as a single run is stored.
            let index = ran.is_ok().then(|| ended.fetch_add(1, Ordering::SeqCst));
            if let (Some(index), Some(sink)) = (index, &sink) {
                sample.run_index = sink.first_run_index + index as u64;
                sink.to.instance(index, &sample);
            }
            if let Some(d) = dir {
                d.remove();
            }
            let concluded = match (&ran, &hooks.cell.hooks.conclude) {
                (Ok(_), Some(hook)) => crate::run::hooks::run(
                    "conclude",
                    hook,
                    &hooks.cell,
                    &hooks.input,
                    hooks.show_output,
                    &[],
                ),
                _ => Ok(()),
            };
            match ran {
                Ok(outcome) => {
                    let stop = outcome == Outcome::Interrupted || concluded.is_err();
                    made.push(Instance {
                        span: Span { slot, start, end },
                        sample,
                        outcome,
                        index: index.unwrap_or_default(),
                    });
                    if let Err(e) = concluded {
                        fail(e);
                    }
                    if stop {
                        break;
                    }
                }
                Err(e) if out_of_processes(&e) => {
                    fail(limit_reached(n, others, "instances running at once", &e));
                    break;
                }
                Err(e) => {
                    fail(e);
                    break;
                }
            }
        }
        if handed > 0 {
            // Stopped early: the rest of the schedule is not wanted.
            if let Err(e) = spawner.finish_schedules() {
                fail(e);
            }
        }
        let _ = out.send(Report::Finished(made));
    }
    drop(prepared);
    drop(spawner);
}

/// The error of a pool that could start only `up` of its `n` slots.
fn start_failed(n: usize, up: usize, e: Error) -> Error {
    if out_of_processes(&e) {
        limit_reached(n, up, "instance slots started", &e)
    } else {
        Error::Failed(format!("could not start instance {} of {n}: {e}", up + 1))
    }
}

/// Whether `e` is the system refusing another process or thread (EAGAIN
/// from fork or clone: `ulimit -u`, a cgroup's `pids.max`).
fn out_of_processes(e: &Error) -> bool {
    match e {
        Error::Spawn { source, .. } | Error::Io(source) => {
            source.kind() == std::io::ErrorKind::WouldBlock
        }
        _ => false,
    }
}

/// The one line that says the system ran out of processes when `reached`
/// of the `n` instance slots had started (`what`: "instance slots
/// started") or instances were running at once.
fn limit_reached(n: usize, reached: usize, what: &str, e: &Error) -> Error {
    Error::Failed(format!(
        "--concurrency {n}: the limit on processes (ulimit -u, or a cgroup's pids.max) was \
         reached at {reached} of {n} {what}: {e}; lower --concurrency or raise the limit"
    ))
}

/// The stretch in which all `slots` were busy: from the latest first start
/// of a slot to the earliest last end of a slot (after which that slot had
/// no more work). Empty, `(0, 0)`, when a slot never ran.
pub fn busy_window<'a>(spans: impl IntoIterator<Item = &'a Span>, slots: usize) -> (f64, f64) {
    let mut first = vec![f64::INFINITY; slots];
    let mut last = vec![f64::NEG_INFINITY; slots];
    for s in spans {
        if s.slot < slots {
            first[s.slot] = first[s.slot].min(s.start);
            last[s.slot] = last[s.slot].max(s.end);
        }
    }
    let from = first.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let to = last.iter().copied().fold(f64::INFINITY, f64::min);
    if from.is_finite() && to.is_finite() && to > from {
        (from, to)
    } else {
        (0.0, 0.0)
    }
}

/// How a session in concurrency mode is cut into batches: every cell makes
/// the same number of completions per block (at its own concurrency), so
/// that blocks pair across cells as single runs do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Batches {
    /// Completions per batch (the largest, when `--runs` fixed them).
    pub size: usize,
    /// Completions per cell in all, when `--runs` fixed them.
    pub total: Option<usize>,
    /// Batches per cell, when `--runs` fixed them: their sizes differ by
    /// one at most, so the last is never a remnant.
    blocks: usize,
}

/// Blocks a fixed `--runs` is cut into, at most: enough pairs for the
/// comparison engine, each batch still long enough to keep every slot
/// busy for a while (`RUNS_PER_SLOT` each, where the runs allow).
const MAX_BLOCKS: usize = 10;
/// Each slot makes about this many runs in a batch: the throughput counts
/// the completions after every slot's first one, so a slot needs three or
/// more, and the busy stretch is then most of the batch.
const RUNS_PER_SLOT: usize = 4;
/// Blocks a fixed `--runs` is cut into, at least, where it allows
/// `MIN_RUNS_PER_SLOT` per slot: fewer than four runs per slot rather than
/// fewer batches, so that the throughput has an interval worth reading
/// (Student's t on 4 degrees of freedom) and comparisons have pairs.
const MIN_BLOCKS: usize = 5;
/// The fewest runs per slot in a batch: with two, the estimate reads 6 %
/// high where run times spread 30 % (see docs/STATISTICS.md,
/// "Concurrency mode").
pub const MIN_RUNS_PER_SLOT: usize = 3;
/// The fewest batches per cell with an interval and a comparison.
pub const FEWEST_BATCHES: usize = 3;

impl Batches {
    /// `largest` is the largest concurrency of the session's cells; `runs`
    /// the `--runs` given, if any.
    pub fn new(largest: usize, runs: Option<usize>) -> Batches {
        let largest = largest.max(1);
        match runs {
            Some(r) => {
                let mut blocks = (r / (RUNS_PER_SLOT * largest)).clamp(1, MAX_BLOCKS);
                if blocks < MIN_BLOCKS {
                    let fewer_per_slot = (r / (MIN_RUNS_PER_SLOT * largest)).min(MIN_BLOCKS);
                    blocks = blocks.max(fewer_per_slot);
                }
                Batches {
                    size: r.div_ceil(blocks).max(1),
                    total: Some(r),
                    blocks,
                }
            }
            None => Batches {
                size: RUNS_PER_SLOT * largest,
                total: None,
                blocks: 0,
            },
        }
    }

    /// The `--runs` that cuts into `batches` batches at `largest` N (the
    /// fewest runs that do, below `MIN_BLOCKS`).
    pub fn runs_for(largest: usize, batches: usize) -> usize {
        batches * MIN_RUNS_PER_SLOT * largest.max(1)
    }

    /// Batches per cell, when `--runs` fixed them.
    pub fn count(&self) -> Option<usize> {
        self.total.map(|t| self.blocks.min(t).max(1))
    }

    /// Completions made by the end of batch `i` of a fixed `--runs`.
    fn made_by(&self, total: usize, i: usize) -> usize {
        // In 128 bits: a --runs near the largest integer must not overflow.
        let blocks = self.count().unwrap_or(1) as u128;
        (total as u128 * i as u128 / blocks) as usize
    }

    /// The scheduler's policy in batches: the runs it counts are batches.
    pub fn policy(&self, runs: crate::run::schedule::RunPolicy) -> crate::run::schedule::RunPolicy {
        crate::run::schedule::RunPolicy {
            exact: self.count(),
            min_runs: runs.min_runs.div_ceil(self.size).max(3),
            max_runs: runs.max_runs.map(|m| m.div_ceil(self.size).max(1)),
            min_time: runs.min_time,
            first_run: runs.first_run,
        }
    }

    /// Completions the next batch of a cell makes, having made `done`.
    pub fn next(&self, done: usize) -> usize {
        match (self.total, self.count()) {
            (Some(t), Some(blocks)) => (1..=blocks)
                .map(|i| self.made_by(t, i))
                .find(|&end| end > done)
                .map_or(0, |end| end - done),
            _ => self.size,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(slot: usize, start: f64, end: f64) -> Span {
        Span { slot, start, end }
    }

    #[test]
    fn the_busy_stretch_is_where_every_slot_ran() {
        // Slot 1 starts late and slot 0 runs out of work first.
        let runs = [
            span(0, 0.0, 1.0),
            span(0, 1.0, 2.0),
            span(1, 0.2, 1.2),
            span(1, 1.2, 2.2),
            span(1, 2.2, 3.2),
        ];
        assert_eq!(busy_window(&runs, 2), (0.2, 2.0));
        // A slot that never ran: no stretch with all busy.
        assert_eq!(busy_window(&runs[..2], 2), (0.0, 0.0));
        assert_eq!(busy_window(&[], 3), (0.0, 0.0));
    }

    #[test]
    fn batches_cut_the_runs_asked_for_exactly() {
        let b = Batches::new(4, Some(100));
        assert_eq!(b.size, 17);
        let mut done = 0;
        let mut batches = 0;
        while b.next(done) > 0 {
            done += b.next(done);
            batches += 1;
        }
        assert_eq!((done, batches), (100, 6));
        // Fewer runs than three per slot: one batch of all of them.
        let b = Batches::new(64, Some(64));
        assert_eq!((b.size, b.next(0), b.next(64)), (64, 64, 0));
        let b = Batches::new(3, Some(7));
        assert_eq!(b.next(0) + b.next(b.next(0)), 7);
        let open = Batches::new(2, None);
        assert_eq!((open.size, open.next(1000)), (8, 8));
    }

    #[test]
    fn too_few_runs_for_five_batches_of_four_per_slot_make_three_per_slot() {
        // 40 runs up to N = 8: one batch of five per slot would be the
        // four-per-slot rule's; three or more per slot allow only one too.
        assert_eq!(Batches::new(8, Some(40)).count(), Some(1));
        // 60 runs at N = 3: five batches of four per slot.
        let b = Batches::new(3, Some(60));
        assert_eq!((b.size, b.count()), (12, Some(5)));
        // 120 runs up to N = 8: three batches of five per slot would be
        // the four-per-slot rule's; five of three per slot instead.
        let b = Batches::new(8, Some(120));
        assert_eq!((b.size, b.count()), (24, Some(5)));
        // 10 runs at N = 5 make one batch; `runs_for` names the --runs
        // that make three, at every N.
        assert_eq!(Batches::new(5, Some(10)).count(), Some(1));
        for n in [1, 2, 3, 5, 8, 64] {
            let r = Batches::runs_for(n, FEWEST_BATCHES);
            assert_eq!(Batches::new(n, Some(r)).count(), Some(3), "N = {n}");
            assert!(Batches::new(n, Some(r - 1)).count() < Some(3), "N = {n}");
            // Never fewer than three runs per slot in any batch, and the
            // runs asked for exactly, in the batches counted.
            for r in [r, 5 * r, 17 * r + 3, 30 * r - 1] {
                let b = Batches::new(n, Some(r));
                let (mut done, mut made) = (0, 0);
                while b.next(done) > 0 {
                    let k = b.next(done);
                    assert!(
                        k >= MIN_RUNS_PER_SLOT * n && k <= b.size,
                        "N = {n}, --runs {r}: {b:?}"
                    );
                    done += k;
                    made += 1;
                }
                assert_eq!((done, Some(made)), (r, b.count()), "N = {n}");
            }
        }
    }
}
