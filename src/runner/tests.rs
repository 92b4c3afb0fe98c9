//! The runner's decisions through a scripted executor: no process is
//! started, each run's wall time, exit and outcome are the script's, and
//! every call the runner makes (runs and hooks, per cell) is recorded in
//! order. Only the `--max-time` test reads the clock: the runner measures
//! that budget in wall-clock time from the first measured run, whatever
//! the runs report.

use std::time::Duration;

use super::*;
use crate::analysis::sequential::{Sequential, LOOKS};
use crate::exec::Outcome;
use crate::metrics::Metric;
use crate::run::events::Event;
use crate::run::executor::Iteration;
use crate::run::plan::Hooks;
use crate::run::schedule::{StopReason, CALIBRATION_RUNS};

use super::drive::Driven;

/// One call the runner made to the executor.
#[derive(Clone, Debug, PartialEq)]
enum Call {
    Run(usize),
    Hook(String, usize),
}

fn hook(what: &str, cell: usize) -> Call {
    Call::Hook(what.to_string(), cell)
}

/// What one scripted run does.
#[derive(Clone, Copy, Debug)]
enum Scripted {
    /// Exits with this code after this many seconds of wall time.
    Exits(f64, i32),
    /// Killed at its timeout after this many seconds.
    TimedOut(f64),
    /// Ended by Ctrl-C.
    Interrupted,
    /// The executor could not make the run at all.
    Error,
}

type Script = Box<dyn Fn(usize) -> Scripted>;

struct Mock {
    /// Per cell: what its k-th run (warm-ups included, from 0) does.
    scripts: Vec<Script>,
    /// Per cell, the runs made so far.
    made: Vec<usize>,
    calls: Vec<Call>,
    /// Each run's cell and which of its runs the runner said it was.
    iterations: Vec<(usize, Iteration)>,
    /// Seconds every hook reports.
    hook_time: f64,
    /// The hooks that fail: (what, cell).
    failing_hooks: Vec<(&'static str, usize)>,
    /// Real time each run takes (only for the wall-clock budget).
    sleep: Duration,
}

impl Mock {
    fn new(scripts: Vec<Script>) -> Mock {
        Mock {
            made: vec![0; scripts.len()],
            iterations: Vec::new(),
            scripts,
            calls: Vec::new(),
            hook_time: 0.0,
            failing_hooks: Vec::new(),
            sleep: Duration::ZERO,
        }
    }

    /// Every cell exits 0 after `walls[cell]` seconds, every run.
    fn steady(walls: &[f64]) -> Mock {
        Mock::new(
            walls
                .iter()
                .map(|&w| Box::new(move |_| Scripted::Exits(w, 0)) as Script)
                .collect(),
        )
    }

    fn runs(&self) -> Vec<usize> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Run(c) => Some(*c),
                Call::Hook(..) => None,
            })
            .collect()
    }
}

impl Executor for Mock {
    fn run(&mut self, cell: usize, iteration: Iteration, sample: &mut Sample) -> Result<Outcome> {
        self.iterations.push((cell, iteration));
        let k = self.made[cell];
        self.made[cell] += 1;
        self.calls.push(Call::Run(cell));
        std::thread::sleep(self.sleep);
        let (wall, outcome) = match (self.scripts[cell])(k) {
            Scripted::Exits(wall, code) => {
                sample.exit_code = Some(code);
                (wall, Outcome::Finished)
            }
            Scripted::TimedOut(wall) => {
                // As the spawner reports a run it killed at its timeout.
                sample.signal = Some(libc::SIGKILL);
                sample.timed_out = true;
                (wall, Outcome::TimedOut)
            }
            Scripted::Interrupted => return Ok(Outcome::Interrupted),
            Scripted::Error => {
                return Err(Error::Failed(format!(
                    "cannot start run {k} of cell {cell}"
                )))
            }
        };
        sample.set(Metric::WallTime, wall);
        sample.set(Metric::UserTime, 0.0);
        sample.set(Metric::SystemTime, 0.0);
        Ok(outcome)
    }

    fn hook(&mut self, what: &str, hook: &str, cell: usize) -> Result<f64> {
        self.calls.push(Call::Hook(what.to_string(), cell));
        if self.failing_hooks.contains(&(what, cell)) {
            return Err(Error::HookFailed {
                what: what.to_string(),
                hook: hook.to_string(),
                status: "exit status: 1".into(),
                name: format!("cell {cell}"),
            });
        }
        Ok(self.hook_time)
    }
}

/// Counts the events the runner emits.
#[derive(Default)]
struct Events {
    /// Measured runs announced, per cell.
    samples: Vec<usize>,
    started: usize,
    finished: usize,
    /// Events after `Finished` (there must be none).
    late: usize,
}

impl Observer for Events {
    fn event(&mut self, event: &Event<'_>) {
        if self.finished > 0 {
            self.late += 1;
        }
        match event {
            Event::Started { .. } => self.started += 1,
            Event::Finished => self.finished += 1,
            Event::Sample { cell, .. } => {
                if self.samples.len() <= *cell {
                    self.samples.resize(cell + 1, 0);
                }
                self.samples[*cell] += 1;
            }
            _ => {}
        }
    }
}

fn cells(n: usize) -> Vec<Cell> {
    (0..n)
        .map(|i| {
            let name = format!("cmd{i}");
            Cell {
                short_name: name.clone(),
                command: name.clone(),
                name,
                template: i,
                ..Cell::default()
            }
        })
        .collect()
}

fn options(cells: Vec<Cell>, order: Order, policy: RunPolicy) -> RunOptions {
    RunOptions {
        cells,
        policy,
        order,
        warmup: 0,
        seed: 1,
        timeout: None,
        stop_on_timeout: false,
        ignore_failure: IgnoreFailure::None,
        input: Input::Null,
        output: Output::Null,
        outputs: Vec::new(),
        counters: false,
        show_progress: false,
        machine_warnings: true,
        hyperfine_bars: None,
        shell: None,
        adaptive: None,
        reference: 0,
        alpha: 0.05,
        deadline: None,
        isolate: None,
        simulate: None,
        counted: None,
        debug: false,
        hyperfine_variables: false,
    }
}

/// At least 2 runs, at most `max_runs`, and no time budget of reported
/// times: only the rule under test stops the session earlier.
fn capped(max_runs: usize) -> RunPolicy {
    RunPolicy {
        min_runs: 2,
        max_runs: Some(max_runs),
        min_time: 1e9,
        ..RunPolicy::default()
    }
}

fn exactly(runs: usize) -> RunPolicy {
    RunPolicy {
        exact: Some(runs),
        ..RunPolicy::default()
    }
}

/// The session the runner makes with `mock`, checking the event stream's
/// frame (one start, one end, nothing after it, one `Sample` per measured
/// run kept).
fn session(opts: &RunOptions, mock: &mut Mock) -> Session {
    let mut events = Events::default();
    let s = drive(opts, mock, None, Vec::new(), &mut events).expect("the session runs");
    assert_eq!((events.started, events.finished, events.late), (1, 1, 0));
    events.samples.resize(s.results.len(), 0);
    let kept: Vec<usize> = s.results.iter().map(|r| r.samples.len()).collect();
    assert_eq!(
        events.samples, kept,
        "one Sample event per measured run kept"
    );
    s
}

/// `n` cells, each with a setup and a cleanup hook.
fn set_up_and_cleaned(n: usize) -> Vec<Cell> {
    let mut hooked = cells(n);
    for c in &mut hooked {
        c.hooks.setup = Some("setup".into());
        c.hooks.cleanup = Some("cleanup".into());
    }
    hooked
}

fn counts(s: &Session) -> Vec<usize> {
    s.results.iter().map(|r| r.samples.len()).collect()
}

fn walls(s: &Session, cell: usize) -> Vec<f64> {
    crate::analysis::values(&s.results[cell].samples, Metric::WallTime)
}

#[test]
fn ignore_failure_tolerates_the_codes_given() {
    let mut s = Sample::new(0);
    s.exit_code = Some(3);
    assert!(IgnoreFailure::Codes(vec![3]).tolerates(&s));
    assert!(!IgnoreFailure::Codes(vec![1]).tolerates(&s));
    assert!(!IgnoreFailure::None.tolerates(&s));
}

#[test]
fn interleaved_runs_are_seeded_shuffled_blocks_of_every_cell_once() {
    let order_with = |seed: u64| {
        let mut opts = options(cells(3), Order::Interleaved, exactly(8));
        opts.seed = seed;
        // Each cell's runs are told apart by their times.
        let mut mock = Mock::steady(&[0.01, 0.02, 0.03]);
        let s = session(&opts, &mut mock);
        assert_eq!(counts(&s), [8, 8, 8]);
        for c in 0..3 {
            assert!(walls(&s, c).iter().all(|&w| w == 0.01 * (c + 1) as f64));
        }
        // Samples are numbered in the order the runs were made.
        let runs = mock.runs();
        for (c, r) in s.results.iter().enumerate() {
            let at: Vec<u64> = (0..runs.len() as u64)
                .filter(|&i| runs[i as usize] == c)
                .collect();
            let numbered: Vec<u64> = r.samples.iter().map(|s| s.run_index).collect();
            assert_eq!(numbered, at);
        }
        assert_eq!(s.stop_reason, Some(StopReason::RunCount));
        runs
    };
    let runs = order_with(7);
    assert_eq!(runs.len(), 24);
    let blocks: Vec<Vec<usize>> = runs.chunks(3).map(<[usize]>::to_vec).collect();
    for b in &blocks {
        let mut sorted = b.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [0, 1, 2],
            "every block runs each cell once: {runs:?}"
        );
    }
    assert!(
        blocks.iter().any(|b| b != &blocks[0]),
        "the blocks are shuffled: {runs:?}"
    );
    assert_eq!(order_with(7), runs, "the seed makes the order reproducible");
    assert_ne!(order_with(8), runs, "another seed, another order");
}

#[test]
fn sequential_order_brackets_each_cells_runs_with_its_setup_and_cleanup() {
    let mut cells = cells(2);
    for c in &mut cells {
        c.hooks = Hooks {
            setup: Some(format!("setup {}", c.name)),
            cleanup: Some(format!("cleanup {}", c.name)),
            prepare: Some("prepare".into()),
            conclude: Some("conclude".into()),
        };
    }
    let opts = options(cells, Order::Sequential, exactly(2));
    let mut mock = Mock::steady(&[0.01, 0.02]);
    let s = session(&opts, &mut mock);
    let each = |c: usize| {
        let mut calls = vec![hook("setup", c)];
        for _ in 0..2 {
            calls.extend([hook("prepare", c), Call::Run(c), hook("conclude", c)]);
        }
        calls.push(hook("cleanup", c));
        calls
    };
    assert_eq!(mock.calls, [each(0), each(1)].concat());
    assert_eq!(counts(&s), [2, 2]);
    assert!(s.failure.is_none());
}

#[test]
fn interleaved_order_runs_one_shared_setup_before_all_runs_and_one_cleanup_after() {
    let mut shared = cells(2);
    for c in &mut shared {
        c.hooks.setup = Some("make fixtures".into());
        c.hooks.cleanup = Some("rm fixtures".into());
    }
    let opts = options(shared.clone(), Order::Interleaved, exactly(3));
    let mut mock = Mock::steady(&[0.01, 0.02]);
    session(&opts, &mut mock);
    let mut expected = vec![hook("setup", 0)];
    expected.extend(mock.runs().into_iter().map(Call::Run));
    expected.push(hook("cleanup", 0));
    assert_eq!(mock.calls, expected);
    assert_eq!(mock.runs().len(), 6);

    // Different setups cannot bracket interleaved runs: refused, nothing run.
    shared[1].hooks.setup = Some("other fixtures".into());
    let opts = options(shared, Order::Interleaved, exactly(3));
    let mut mock = Mock::steady(&[0.01, 0.02]);
    let e = drive(&opts, &mut mock, None, Vec::new(), &mut Events::default()).expect_err("refused");
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(mock.calls.is_empty(), "{:?}", mock.calls);
}

/// Warm-ups take 5 s, measured runs 10 ms: a warm-up kept in the results
/// would show.
fn warm_then_measured(measured: f64) -> Script {
    Box::new(move |k: usize| Scripted::Exits(if k < 2 { 5.0 } else { measured }, 0))
}

#[test]
fn warm_ups_come_before_each_cells_measured_runs_and_are_not_kept() {
    let mut opts = options(cells(2), Order::Sequential, exactly(3));
    opts.warmup = 2;
    let mut mock = Mock::new(vec![warm_then_measured(0.01), warm_then_measured(0.02)]);
    let s = session(&opts, &mut mock);
    assert_eq!(mock.runs(), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    // Each cell's warm-ups and measured runs are counted from 0 apart.
    use Iteration::{Measured, Warmup};
    let each = [Warmup(0), Warmup(1), Measured(0), Measured(1), Measured(2)];
    let expected: Vec<(usize, Iteration)> = (0..2)
        .flat_map(|c| each.iter().map(move |&i| (c, i)))
        .collect();
    assert_eq!(mock.iterations, expected);
    assert_eq!(walls(&s, 0), [0.01; 3]);
    assert_eq!(walls(&s, 1), [0.02; 3]);
    // Warm-ups are not numbered among the session's runs.
    let numbered: Vec<u64> = s
        .results
        .iter()
        .flat_map(|r| r.samples.iter().map(|s| s.run_index))
        .collect();
    assert_eq!(numbered, [0, 1, 2, 3, 4, 5]);

    // Interleaved: warm-up blocks of every cell before the first measured block.
    opts.order = Order::Interleaved;
    let mut mock = Mock::new(vec![warm_then_measured(0.01), warm_then_measured(0.02)]);
    let s = session(&opts, &mut mock);
    let runs = mock.runs();
    assert_eq!(runs.len(), 10);
    for block in runs[..4].chunks(2) {
        assert!(block.contains(&0) && block.contains(&1), "{runs:?}");
    }
    assert_eq!(walls(&s, 0), [0.01; 3]);
    assert_eq!(walls(&s, 1), [0.02; 3]);
}

#[test]
fn a_failing_warm_up_ends_the_session_naming_the_warm_up() {
    let mut opts = options(cells(2), Order::Sequential, exactly(3));
    opts.warmup = 3;
    let fails_second =
        Box::new(|k: usize| Scripted::Exits(0.01, if k == 1 { 1 } else { 0 })) as Script;
    let mut mock = Mock::new(vec![fails_second, warm_then_measured(0.02)]);
    let s = session(&opts, &mut mock);
    assert_eq!(mock.runs(), [0, 0], "nothing runs after the failed warm-up");
    assert_eq!(counts(&s), [0, 0]);
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    let e = s.failure.expect("the warm-up's failure");
    assert!(
        matches!(
            e,
            Error::RunFailed {
                warmup: true,
                iteration: 1,
                exit_code: Some(1),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("during warm-up"), "{e}");
}

#[test]
fn the_exact_count_holds_whatever_the_runs_take() {
    for wall in [0.0001, 10.0] {
        let opts = options(cells(1), Order::Sequential, exactly(7));
        let mut mock = Mock::steady(&[wall]);
        let s = session(&opts, &mut mock);
        assert_eq!(counts(&s), [7], "{wall} s");
        assert_eq!(s.stop_reason, Some(StopReason::RunCount));
    }
}

#[test]
fn the_time_budget_counts_the_times_the_runs_report_above_the_minimum_runs() {
    let policy = RunPolicy {
        min_runs: 5,
        min_time: 1.0,
        ..RunPolicy::default()
    };
    // 8 × 0.125 s reach the 1 s budget (binary fractions: the sum is exact).
    let opts = options(cells(1), Order::Sequential, policy);
    let s = session(&opts, &mut Mock::steady(&[0.125]));
    assert_eq!(counts(&s), [8]);
    assert_eq!(s.stop_reason, Some(StopReason::TimeBudget));
    // Slow runs: the budget is reached after 2, but 5 is the floor.
    let s = session(&opts, &mut Mock::steady(&[0.75]));
    assert_eq!(counts(&s), [5]);
    // Sequential: each cell has its own budget.
    let opts = options(cells(2), Order::Sequential, policy);
    let s = session(&opts, &mut Mock::steady(&[0.125, 0.0625]));
    assert_eq!(counts(&s), [8, 16]);
    // Interleaved: one budget for the blocks, 2 × 1 s: 0.1875 s per block
    // reaches 2 s in 11 blocks (2.0625 s), the slow cell's share no longer.
    let opts = options(cells(2), Order::Interleaved, policy);
    let s = session(&opts, &mut Mock::steady(&[0.125, 0.0625]));
    assert_eq!(counts(&s), [11, 11]);
    assert_eq!(s.stop_reason, Some(StopReason::TimeBudget));
}

#[test]
fn max_runs_caps_fast_commands_before_their_time_budget() {
    let policy = RunPolicy {
        min_runs: 3,
        max_runs: Some(12),
        min_time: 3.0,
        ..RunPolicy::default()
    };
    let opts = options(cells(2), Order::Interleaved, policy);
    let s = session(&opts, &mut Mock::steady(&[0.001, 0.002]));
    assert_eq!(counts(&s), [12, 12]);
    assert_eq!(s.stop_reason, Some(StopReason::MaxRuns));
}

#[test]
fn hyperfines_first_run_rule_counts_the_first_run_and_its_hooks() {
    let policy = RunPolicy {
        min_runs: 2,
        min_time: 1.0,
        first_run: true,
        ..RunPolicy::default()
    };
    let mut hooked = cells(1);
    let opts = options(hooked.clone(), Order::Sequential, policy);
    // 1 s / 0.125 s = 8 runs, fixed after the first.
    let s = session(&opts, &mut Mock::steady(&[0.125]));
    assert_eq!(counts(&s), [8]);
    // Later runs cannot change the count: a first run of 0.25 s fixes 4.
    let slow_first = Box::new(|k: usize| Scripted::Exits(if k == 0 { 0.25 } else { 0.001 }, 0));
    let s = session(&opts, &mut Mock::new(vec![slow_first]));
    assert_eq!(counts(&s), [4]);
    // The prepare and conclude hooks' 0.0625 s each count in the first cost.
    hooked[0].hooks.prepare = Some("prepare".into());
    hooked[0].hooks.conclude = Some("conclude".into());
    let opts = options(hooked, Order::Sequential, policy);
    let mut mock = Mock::steady(&[0.125]);
    mock.hook_time = 0.0625;
    let s = session(&opts, &mut mock);
    assert_eq!(counts(&s), [4]);
}

#[test]
fn max_time_stops_by_the_wall_clock_from_the_first_measured_run() {
    // The runner reads the clock for --max-time, not the runs' reports
    // (here 1 ms, far from any budget): each run really takes 20 ms, and
    // 50 ms after the first one ended is passed by the 4th at the latest
    // (sooner when the machine is slow; 2 is the floor).
    let policy = capped(1000);
    let mut opts = options(cells(1), Order::Sequential, policy);
    opts.deadline = Some(Duration::from_millis(50));
    let mut mock = Mock::steady(&[0.001]);
    mock.sleep = Duration::from_millis(20);
    let s = session(&opts, &mut mock);
    let n = counts(&s)[0];
    assert!((2..=4).contains(&n), "{n} runs");
    assert_eq!(s.stop_reason, Some(StopReason::TimeBudget));
}

/// `base` seconds with a deterministic, skewed spread of at most 0.4 % (not the
/// normal noise a test assumes).
fn near(base: f64) -> Script {
    Box::new(move |k: usize| {
        let jitter = [0.0, 0.004, 0.001, 0.0, 0.002, 0.0, 0.0005][k % 7];
        Scripted::Exits(base * (1.0 + jitter), 0)
    })
}

#[test]
fn one_command_stops_once_its_median_is_precise() {
    let policy = capped(100);
    let mut opts = options(cells(1), Order::Interleaved, policy);
    opts.adaptive = Some(Sequential::new(0.05, 0.01));
    let s = session(&opts, &mut Mock::new(vec![near(0.1)]));
    // Checked first at the first planned look.
    assert_eq!(counts(&s), [LOOKS[0]]);
    assert_eq!(s.stop_reason, Some(StopReason::Precision));
    // Runs spread by half their time never get a 1 % median: the cap ends it.
    let spread = Box::new(|k: usize| Scripted::Exits(if k % 2 == 0 { 0.05 } else { 0.15 }, 0));
    let s = session(&opts, &mut Mock::new(vec![spread]));
    assert_eq!(counts(&s), [100]);
    assert_eq!(s.stop_reason, Some(StopReason::MaxRuns));
}

#[test]
fn two_commands_stop_at_a_planned_look_once_the_difference_is_settled() {
    let policy = capped(300);
    let mut opts = options(cells(2), Order::Interleaved, policy);
    opts.adaptive = Some(Sequential::new(0.05, 0.01));
    let s = session(&opts, &mut Mock::new(vec![near(0.1), near(0.15)]));
    let n = counts(&s);
    assert_eq!(n[0], n[1], "blocks stop together");
    assert!(LOOKS.contains(&n[0]), "stopped at a look: {n:?}");
    assert_eq!(s.stop_reason, Some(StopReason::Precision));
    assert!(s.looks >= 1);
    assert!(s.final_alpha < 0.05, "a look's level: {}", s.final_alpha);
}

#[test]
fn a_timed_out_run_is_kept_as_such_and_stops_only_with_stop_on_timeout() {
    let third_times_out = || {
        Box::new(|k: usize| {
            if k == 2 {
                Scripted::TimedOut(1.0)
            } else {
                Scripted::Exits(0.01, 0)
            }
        }) as Script
    };
    let mut opts = options(cells(2), Order::Sequential, exactly(5));
    opts.timeout = Some(Duration::from_secs(1));
    let s = session(&opts, &mut Mock::new(vec![third_times_out(), near(0.1)]));
    assert_eq!(counts(&s), [5, 5]);
    let timed_out: Vec<bool> = s.results[0].samples.iter().map(|s| s.timed_out).collect();
    assert_eq!(timed_out, [false, false, true, false, false]);
    assert!(s.failure.is_none(), "{:?}", s.failure);
    assert_eq!(s.stop_reason, Some(StopReason::RunCount));

    opts.stop_on_timeout = true;
    let mut mock = Mock::new(vec![third_times_out(), near(0.1)]);
    let s = session(&opts, &mut mock);
    assert_eq!(mock.runs(), [0, 0, 0]);
    assert_eq!(counts(&s), [3, 0], "the timed-out run is kept");
    assert!(s.results[0].samples[2].timed_out);
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    let e = s.failure.expect("stopped on the timeout");
    assert!(e.to_string().contains("timed out"), "{e}");
    assert_eq!(e.exit_code(), 1);
}

#[test]
fn an_interrupted_run_ends_the_session_keeping_the_finished_runs() {
    let mut shared = cells(2);
    for c in &mut shared {
        c.hooks.setup = Some("start server".into());
        c.hooks.cleanup = Some("stop server".into());
    }
    let opts = options(shared, Order::Interleaved, exactly(10));
    let fourth_interrupted = Box::new(|k: usize| {
        if k == 3 {
            Scripted::Interrupted
        } else {
            Scripted::Exits(0.02, 0)
        }
    }) as Script;
    let mut mock = Mock::new(vec![near(0.1), fourth_interrupted]);
    let s = session(&opts, &mut mock);
    let runs = mock.runs();
    assert_eq!(runs.last(), Some(&1), "nothing runs after the interruption");
    assert_eq!(runs.iter().filter(|&&c| c == 1).count(), 4);
    let made0 = runs.iter().filter(|&&c| c == 0).count();
    assert!((3..=4).contains(&made0), "{runs:?}");
    assert_eq!(
        counts(&s),
        [made0, 3],
        "finished runs kept, not the interrupted"
    );
    assert!(matches!(s.failure, Some(Error::Interrupted)));
    assert_eq!(s.stop_reason, Some(StopReason::Interrupted));
    // What was set up is still cleaned up.
    assert_eq!(mock.calls.last(), Some(&hook("cleanup", 0)));
}

#[test]
fn a_failing_run_stops_the_session_unless_ignore_failure_tolerates_it() {
    let third_exits_2 =
        || Box::new(|k: usize| Scripted::Exits(0.01, if k == 2 { 2 } else { 0 })) as Script;
    let mut opts = options(cells(2), Order::Sequential, exactly(5));
    let mut mock = Mock::new(vec![third_exits_2(), near(0.1)]);
    let s = session(&opts, &mut mock);
    assert_eq!(mock.runs(), [0, 0, 0], "the second command never runs");
    assert_eq!(counts(&s), [3, 0]);
    assert_eq!(s.results[0].samples[2].exit_code, Some(2));
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    let e = s.failure.expect("the run's failure");
    assert!(
        matches!(
            e,
            Error::RunFailed {
                warmup: false,
                iteration: 2,
                exit_code: Some(2),
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.exit_code(), 1);

    for tolerated in [IgnoreFailure::All, IgnoreFailure::Codes(vec![2])] {
        opts.ignore_failure = tolerated.clone();
        let s = session(&opts, &mut Mock::new(vec![third_exits_2(), near(0.1)]));
        assert_eq!(counts(&s), [5, 5], "{tolerated:?}");
        assert!(s.failure.is_none(), "{tolerated:?}: {:?}", s.failure);
        assert_eq!(s.results[0].samples[2].exit_code, Some(2));
    }
    opts.ignore_failure = IgnoreFailure::Codes(vec![3]);
    let s = session(&opts, &mut Mock::new(vec![third_exits_2(), near(0.1)]));
    assert_eq!(counts(&s), [3, 0]);
    assert!(matches!(s.failure, Some(Error::RunFailed { .. })));
}

#[test]
fn a_run_the_executor_cannot_make_ends_the_session_with_its_error() {
    let opts = options(cells(1), Order::Sequential, exactly(5));
    let second_fails = Box::new(|k: usize| {
        if k == 1 {
            Scripted::Error
        } else {
            Scripted::Exits(0.01, 0)
        }
    }) as Script;
    let mut mock = Mock::new(vec![second_fails]);
    let s = session(&opts, &mut mock);
    assert_eq!(mock.runs(), [0, 0]);
    assert_eq!(counts(&s), [1], "the run never made is not kept");
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    let e = s.failure.expect("the executor's error");
    assert_eq!(e.to_string(), "cannot start run 1 of cell 0");
}

#[test]
fn a_failing_setup_runs_nothing_of_its_cell_and_no_cleanup() {
    let opts = options(set_up_and_cleaned(2), Order::Sequential, exactly(2));
    let mut mock = Mock::steady(&[0.01, 0.02]);
    mock.failing_hooks.push(("setup", 1));
    let s = session(&opts, &mut mock);
    assert_eq!(
        mock.calls,
        [
            hook("setup", 0),
            Call::Run(0),
            Call::Run(0),
            hook("cleanup", 0),
            hook("setup", 1),
        ]
    );
    assert_eq!(counts(&s), [2, 0]);
    assert!(matches!(s.failure, Some(Error::HookFailed { .. })));
}

/// Records sequential order's turns: the cells whose turn began, and the
/// benchmarks ended with their runs' wall times as the session holds them.
#[derive(Default)]
struct Turns {
    begins: Vec<usize>,
    ended: Vec<(usize, Vec<f64>)>,
}

impl Observer for Turns {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Begins { cell } => self.begins.push(*cell),
            Event::Ended { cell, samples } => self
                .ended
                .push((*cell, crate::analysis::values(samples, Metric::WallTime))),
            _ => {}
        }
    }
}

fn turns(opts: &RunOptions, mock: &mut Mock) -> (Session, Turns) {
    let mut turns = Turns::default();
    let s = drive(opts, mock, None, Vec::new(), &mut turns).expect("the session runs");
    (s, turns)
}

#[test]
fn in_sequential_order_a_benchmark_ends_when_the_schedule_moves_on_unless_a_failure_cut_it() {
    let mut opts = options(cells(3), Order::Sequential, exactly(2));
    let (_, t) = turns(&opts, &mut Mock::steady(&[0.25, 0.5, 0.75]));
    assert_eq!(t.begins, [0, 1, 2]);
    let ended: Vec<usize> = t.ended.iter().map(|e| e.0).collect();
    assert_eq!(ended, [0, 1, 2]);
    assert_eq!(t.ended[1].1, [0.5, 0.5]);

    // The second command's second run fails: the first ended, the second
    // was cut short, the third never began.
    let fails_second =
        Box::new(|k: usize| Scripted::Exits(0.5, if k == 1 { 1 } else { 0 })) as Script;
    let mut mock = Mock::new(vec![near(0.25), fails_second, near(0.75)]);
    let (s, t) = turns(&opts, &mut mock);
    assert_eq!(t.begins, [0, 1]);
    let ended: Vec<usize> = t.ended.iter().map(|e| e.0).collect();
    assert_eq!(ended, [0]);
    assert_eq!(counts(&s), [2, 2, 0]);

    // Interleaved order has no turns.
    opts.order = Order::Interleaved;
    let (_, t) = turns(&opts, &mut Mock::steady(&[0.25, 0.5, 0.75]));
    assert!(t.begins.is_empty() && t.ended.is_empty());
}

#[test]
fn the_shells_calibration_makes_its_fixed_count_and_is_subtracted_from_the_commands_runs() {
    // hyperfine's front door: the shell's start-up is measured first, 50
    // times whatever the first-run rule would give (1 s / 0.0625 s = 16).
    let mut shelled = cells(2);
    shelled[0].calibration = true;
    shelled[1].shell = true;
    let policy = RunPolicy {
        min_runs: 2,
        min_time: 1.0,
        first_run: true,
        ..RunPolicy::default()
    };
    let opts = options(shelled.clone(), Order::Sequential, policy);
    let mut mock = Mock::steady(&[0.0625, 0.25]);
    let (s, t) = turns(&opts, &mut mock);
    assert_eq!(
        mock.runs(),
        [vec![0; CALIBRATION_RUNS], vec![1; 4]].concat(),
        "the command's count from its first run: 1 s / 0.25 s"
    );
    assert_eq!(s.results.len(), 1, "the calibration is no result");
    assert_eq!(walls(&s, 0), [0.1875; 4]);
    let overhead = s.shell_overhead.expect("the start-up measured");
    assert_eq!((overhead.wall, overhead.runs), (0.0625, CALIBRATION_RUNS));
    // The benchmark's end carries its runs as the session holds them; the
    // calibration's turn ends with none.
    assert_eq!(t.ended, [(1, vec![0.1875; 4])]);

    // A calibration after the command: its start-up is not known when the
    // command's turn ends, so that end is not announced (the session's
    // end subtracts it).
    shelled.swap(0, 1);
    let opts = options(shelled, Order::Sequential, policy);
    let mut mock = Mock::steady(&[0.25, 0.0625]);
    let (s, t) = turns(&opts, &mut mock);
    assert_eq!(
        mock.runs(),
        [vec![0; 4], vec![1; CALIBRATION_RUNS]].concat()
    );
    assert_eq!(walls(&s, 0), [0.1875; 4]);
    assert!(t.ended.is_empty(), "{:?}", t.ended);
}

#[test]
fn stop_on_timeout_in_interleaved_order_ends_the_session_within_its_block() {
    let mut shared = cells(2);
    for c in &mut shared {
        c.hooks.setup = Some("start server".into());
        c.hooks.cleanup = Some("stop server".into());
    }
    let mut opts = options(shared, Order::Interleaved, exactly(10));
    opts.timeout = Some(Duration::from_secs(1));
    opts.stop_on_timeout = true;
    let third_times_out = Box::new(|k: usize| {
        if k == 2 {
            Scripted::TimedOut(1.0)
        } else {
            Scripted::Exits(0.02, 0)
        }
    }) as Script;
    let mut mock = Mock::new(vec![near(0.1), third_times_out]);
    let s = session(&opts, &mut mock);
    let runs = mock.runs();
    assert_eq!(runs.last(), Some(&1), "nothing runs after the timeout");
    assert_eq!(runs.iter().filter(|&&c| c == 1).count(), 3);
    // The first cell's run of that block came before it or never did.
    let made0 = runs.iter().filter(|&&c| c == 0).count();
    assert!((2..=3).contains(&made0), "{runs:?}");
    assert_eq!(counts(&s), [made0, 3], "the timed-out run is kept");
    assert!(s.results[1].samples[2].timed_out);
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    let e = s.failure.expect("stopped on the timeout");
    assert!(
        e.to_string().contains("'cmd1' timed out after 1.000 s"),
        "{e}"
    );
    // The shared setup is still cleaned up, once.
    assert_eq!(mock.calls.first(), Some(&hook("setup", 0)));
    assert_eq!(mock.calls.last(), Some(&hook("cleanup", 0)));
    assert_eq!(mock.calls.len(), runs.len() + 2);
}

#[test]
fn a_failing_cleanup_between_two_cells_stops_before_the_next_setup() {
    let opts = options(set_up_and_cleaned(2), Order::Sequential, exactly(2));
    let mut mock = Mock::steady(&[0.01, 0.02]);
    mock.failing_hooks.push(("cleanup", 0));
    let s = session(&opts, &mut mock);
    // Not tried again at the end: it was the cleanup that failed.
    assert_eq!(
        mock.calls,
        [
            hook("setup", 0),
            Call::Run(0),
            Call::Run(0),
            hook("cleanup", 0)
        ]
    );
    assert_eq!(counts(&s), [2, 0]);
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    assert!(matches!(s.failure, Some(Error::HookFailed { .. })));
}

#[test]
fn a_failing_prepare_makes_no_run_and_a_failing_conclude_keeps_its_run() {
    let mut hooked = cells(1);
    hooked[0].hooks.prepare = Some("prepare".into());
    hooked[0].hooks.conclude = Some("conclude".into());
    let opts = options(hooked, Order::Sequential, exactly(3));

    let mut mock = Mock::steady(&[0.01]);
    mock.failing_hooks.push(("prepare", 0));
    let s = session(&opts, &mut mock);
    assert_eq!(mock.calls, [hook("prepare", 0)]);
    assert_eq!(counts(&s), [0]);
    assert_eq!(s.stop_reason, Some(StopReason::Failure));

    let mut mock = Mock::steady(&[0.01]);
    mock.failing_hooks.push(("conclude", 0));
    let s = session(&opts, &mut mock);
    assert_eq!(
        mock.calls,
        [hook("prepare", 0), Call::Run(0), hook("conclude", 0)]
    );
    assert_eq!(counts(&s), [1], "the run was made before its conclude");
    assert_eq!(s.stop_reason, Some(StopReason::Failure));
    assert!(matches!(s.failure, Some(Error::HookFailed { .. })));
}

#[test]
fn processes_left_running_are_counted_per_cell_name() {
    // Only the spawner kills what a run left (a test's executor has none):
    // the count itself is the session's.
    let opts = options(cells(2), Order::Sequential, exactly(1));
    let mut mock = Mock::steady(&[0.01, 0.01]);
    let mut events = Events::default();
    let mut driven = Driven::new(&opts, &mut mock, Machine::absent(2), &mut events);
    for (cell, left) in [(1, 2), (0, 0), (1, 1), (0, 4)] {
        driven.count_leftovers(cell, left);
    }
    assert_eq!(
        driven.leftovers,
        [("cmd1".to_string(), 3), ("cmd0".to_string(), 4)]
    );
}
