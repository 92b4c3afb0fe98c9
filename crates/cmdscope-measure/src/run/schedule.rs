//! Which cell runs next, when warm-up ends and when to stop. Pure: no clock,
//! no processes; the runner feeds it each run's wall time.
//!
//! Interleaved order (the default with several cells) runs the cells in
//! blocks, one run of each per block, shuffled inside the block with a seeded
//! RNG, so that drift (turbo boost, thermal throttling, a neighbour's load)
//! hits every cell alike instead of biasing whichever ran last.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Blocks of one run per cell, shuffled within each block.
    Interleaved,
    /// All runs of the first cell, then all of the second (hyperfine's way).
    Sequential,
}

/// How many runs to make.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunPolicy {
    /// Exactly this many measured runs per cell (`--runs`).
    pub exact: Option<usize>,
    pub min_runs: usize,
    pub max_runs: Option<usize>,
    /// Seconds of measured runs per cell to aim for (hyperfine's 3 s).
    pub min_time: f64,
    /// hyperfine's rule rather than cmdscope's (its front door, sequential
    /// order): without `exact`, each cell's count is fixed after its first
    /// measured run, at max(min_runs, ⌊min_time / cost⌋) capped by
    /// max_runs, the cost being that run's raw wall time and its prepare
    /// and conclude hooks' ([`Scheduler::record_cost`]); and a shell
    /// calibration makes [`CALIBRATION_RUNS`] runs. cmdscope's rule
    /// measures until min_time of runs is reached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_run: bool,
}

/// The shell calibration's runs under [`RunPolicy::first_run`]: hyperfine
/// measures its shell's start-up 50 times before the first command.
pub const CALIBRATION_RUNS: usize = 50;

impl Default for RunPolicy {
    fn default() -> Self {
        RunPolicy {
            exact: None,
            min_runs: 10,
            max_runs: None,
            min_time: 3.0,
            first_run: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Warmup(usize),
    Measure(usize),
    Done,
}

/// Why measuring ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    RunCount,
    TimeBudget,
    MaxRuns,
    Precision,
    Interrupted,
    Failure,
}

#[derive(Clone)]
pub struct Scheduler {
    cells: usize,
    order: Order,
    policy: RunPolicy,
    warmup: usize,
    rng: ChaCha8Rng,
    warmups_done: Vec<usize>,
    runs: Vec<usize>,
    measured_time: Vec<f64>,
    /// Per cell, the cost of its first measured step (`record_cost`).
    first_cost: Vec<Option<f64>>,
    /// Per cell, a count fixed in advance (`fix_runs`).
    fixed: Vec<Option<usize>>,
    queue: Vec<Step>,
    /// Sequential order: the cell being measured.
    current: usize,
    stopped: Option<StopReason>,
    /// An early stop asked for before every cell had its minimum runs: it
    /// takes effect once they have them.
    pending: Option<StopReason>,
}

impl Scheduler {
    pub fn new(cells: usize, order: Order, policy: RunPolicy, warmup: usize, seed: u64) -> Self {
        Scheduler {
            cells,
            order,
            policy,
            warmup,
            rng: ChaCha8Rng::seed_from_u64(seed),
            warmups_done: vec![0; cells],
            runs: vec![0; cells],
            measured_time: vec![0.0; cells],
            first_cost: vec![None; cells],
            fixed: vec![None; cells],
            queue: Vec::with_capacity(cells),
            current: 0,
            stopped: None,
            pending: None,
        }
    }

    /// Completed blocks (interleaved) — every cell has this many runs.
    pub fn blocks(&self) -> usize {
        self.runs.iter().copied().min().unwrap_or(0)
    }

    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stopped
    }

    /// Ends measuring early (adaptive stopping, interruption, failure).
    /// A stop rule's stop (precision, the time limit) waits until every
    /// cell has its minimum runs (`--min-runs` is a floor, as in
    /// hyperfine); an interruption or a failure stops at once.
    pub fn stop(&mut self, reason: StopReason) {
        let rule = matches!(reason, StopReason::Precision | StopReason::TimeBudget);
        if rule && self.runs.iter().any(|&n| n < self.policy.min_runs) {
            self.pending.get_or_insert(reason);
            return;
        }
        self.queue.clear();
        self.stopped.get_or_insert(reason);
    }

    /// Records the wall time of a step that has just run.
    pub fn record(&mut self, step: Step, wall: f64) {
        match step {
            Step::Warmup(c) => self.warmups_done[c] += 1,
            Step::Measure(c) => {
                self.runs[c] += 1;
                self.measured_time[c] += wall;
                if self.runs[c] == 1 {
                    // Its hooks' time comes with `record_cost`, if any.
                    self.first_cost[c] = Some(wall);
                }
            }
            Step::Done => {}
        }
    }

    /// The whole cost of a measured step that has just run: its run's raw
    /// wall time with its prepare and conclude hooks' (hyperfine's
    /// first-run rule counts the first step's).
    pub fn record_cost(&mut self, step: Step, cost: f64) {
        if let Step::Measure(c) = step {
            if self.runs[c] == 1 {
                self.first_cost[c] = Some(cost);
            }
        }
    }

    /// Fixes `cell`'s measured runs at `runs` whatever the policy, with no
    /// warm-up (sequential order).
    pub fn fix_runs(&mut self, cell: usize, runs: usize) {
        self.fixed[cell] = Some(runs);
    }

    /// hyperfine's count for `cell` once its first step's cost is known.
    fn first_run_count(&self, cell: usize) -> Option<usize> {
        let cost = self.first_cost[cell]?;
        // As hyperfine computes it: the quotient truncated (saturating).
        let in_time = (self.policy.min_time / cost) as usize;
        let count = in_time.max(self.policy.min_runs);
        Some(self.policy.max_runs.map_or(count, |m| count.min(m)))
    }

    /// Whether `cell` wants more measured runs on its own account.
    fn cell_wants_more(&self, cell: usize) -> Option<StopReason> {
        let n = self.runs[cell];
        if let Some(fixed) = self.fixed[cell] {
            return (n >= fixed).then_some(StopReason::RunCount);
        }
        if self.policy.exact.is_none() && self.policy.first_run {
            // Until the first run's cost is known, at least that run.
            return self
                .first_run_count(cell)
                .filter(|&count| n >= count)
                .map(|_| StopReason::RunCount);
        }
        self.enough(n, self.measured_time[cell], 1)
    }

    /// Interleaved blocks stop together, so every cell has the same number of
    /// runs and blocks can be paired. The time budget is shared: the session
    /// stops once every cell has its minimum runs and the cells together have
    /// used `cells × min_time`, so a slow cell does not force thousands of
    /// runs of a fast one.
    fn block_done(&self) -> Option<StopReason> {
        let total: f64 = self.measured_time.iter().sum();
        self.enough(self.blocks(), total, self.cells)
    }

    /// Why `n` runs (of each of `cells` cells, `seconds` measured together)
    /// are enough, if they are: the exact count, the maximum, or, once the
    /// minimum is made, a stop rule's stop asked for earlier or the time
    /// budget.
    fn enough(&self, n: usize, seconds: f64, cells: usize) -> Option<StopReason> {
        if let Some(exact) = self.policy.exact {
            if n >= exact {
                return Some(StopReason::RunCount);
            }
        } else if self.policy.max_runs.is_some_and(|m| n >= m) {
            return Some(StopReason::MaxRuns);
        }
        if n < self.policy.min_runs {
            return None;
        }
        let budget = self.policy.exact.is_none() && seconds >= self.policy.min_time * cells as f64;
        self.pending.or(budget.then_some(StopReason::TimeBudget))
    }

    /// Total measured runs expected, for progress display (an estimate when a
    /// time budget decides).
    pub fn expected_runs(&self) -> usize {
        if let Some(exact) = self.policy.exact {
            return self
                .fixed
                .iter()
                .fold(0, |t: usize, f| t.saturating_add(f.unwrap_or(exact)));
        }
        (0..self.cells).fold(0, |t: usize, c| t.saturating_add(self.expected_runs_of(c)))
    }

    /// Measured runs expected of `cell` (as [`Scheduler::expected_runs`]).
    pub fn expected_runs_of(&self, c: usize) -> usize {
        if let Some(exact) = self.policy.exact {
            return self.fixed[c].unwrap_or(exact);
        }
        let n = self.runs[c];
        if let Some(count) = self.fixed[c].or_else(|| {
            self.policy
                .first_run
                .then(|| self.first_run_count(c).unwrap_or(self.policy.min_runs))
        }) {
            return count.max(n);
        }
        let per_run = if n > 0 {
            self.measured_time[c] / n as f64
        } else {
            0.0
        };
        let want = if per_run > 0.0 {
            let budget = match self.order {
                Order::Sequential => self.policy.min_time,
                Order::Interleaved => {
                    let all: f64 =
                        self.measured_time.iter().sum::<f64>() / self.blocks().max(1) as f64;
                    self.policy.min_time * self.cells as f64 * per_run / all.max(f64::MIN_POSITIVE)
                }
            };
            (budget / per_run).ceil() as usize
        } else {
            self.policy.min_runs
        };
        let mut want = want.max(self.policy.min_runs);
        if let Some(m) = self.policy.max_runs {
            want = want.min(m);
        }
        want.max(n)
    }

    pub fn next_step(&mut self) -> Step {
        if self.stopped.is_some() || self.cells == 0 {
            return Step::Done;
        }
        if let Some(step) = self.queue.pop() {
            return step;
        }
        match self.order {
            Order::Interleaved => self.next_block(),
            Order::Sequential => self.next_sequential(),
        }
    }

    fn next_block(&mut self) -> Step {
        let warming = self.warmups_done.iter().any(|&w| w < self.warmup);
        if !warming {
            if let Some(reason) = self.block_done() {
                self.stopped = Some(reason);
                return Step::Done;
            }
        }
        let mut order: Vec<usize> = (0..self.cells).collect();
        order.shuffle(&mut self.rng);
        // Popped from the back, so push in reverse to run in `order`.
        for &c in order.iter().rev() {
            self.queue.push(if warming {
                Step::Warmup(c)
            } else {
                Step::Measure(c)
            });
        }
        self.queue.pop().unwrap_or(Step::Done)
    }

    fn next_sequential(&mut self) -> Step {
        while self.current < self.cells {
            let c = self.current;
            // A count fixed in advance is a shell calibration's, which
            // hyperfine does not warm up.
            if self.fixed[c].is_none() && self.warmups_done[c] < self.warmup {
                return Step::Warmup(c);
            }
            if let Some(reason) = self.cell_wants_more(c) {
                self.current += 1;
                if self.current == self.cells {
                    self.stopped = Some(reason);
                }
                continue;
            }
            return Step::Measure(c);
        }
        Step::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(s: &mut Scheduler, mut wall: impl FnMut(usize) -> f64) -> Vec<Step> {
        let mut steps = Vec::new();
        loop {
            let step = s.next_step();
            if step == Step::Done {
                return steps;
            }
            let w = match step {
                Step::Warmup(c) | Step::Measure(c) => wall(c),
                Step::Done => 0.0,
            };
            s.record(step, w);
            steps.push(step);
            assert!(steps.len() < 1_000_000, "scheduler does not terminate");
        }
    }

    fn exact(n: usize) -> RunPolicy {
        RunPolicy {
            exact: Some(n),
            ..RunPolicy::default()
        }
    }

    #[test]
    fn interleaved_blocks_hold_each_cell_once_and_warm_up_first() {
        let mut s = Scheduler::new(3, Order::Interleaved, exact(5), 2, 7);
        let steps = drive(&mut s, |_| 0.01);
        assert_eq!(steps.len(), 3 * (5 + 2));
        for (i, block) in steps.chunks(3).enumerate() {
            let mut cells: Vec<usize> = block
                .iter()
                .map(|s| match s {
                    Step::Warmup(c) | Step::Measure(c) => *c,
                    Step::Done => unreachable!(),
                })
                .collect();
            cells.sort();
            assert_eq!(cells, vec![0, 1, 2]);
            let warm = block.iter().all(|s| matches!(s, Step::Warmup(_)));
            assert_eq!(warm, i < 2, "block {i}");
        }
        assert_eq!(s.stop_reason(), Some(StopReason::RunCount));
    }

    #[test]
    fn interleaving_is_shuffled_and_seeded() {
        let order = |seed| {
            let mut s = Scheduler::new(4, Order::Interleaved, exact(20), 0, seed);
            drive(&mut s, |_| 0.01)
        };
        assert_eq!(order(1), order(1));
        assert_ne!(order(1), order(2));
        let first: Vec<_> = order(3).chunks(4).map(|b| b[0]).collect();
        assert!(
            first.iter().any(|s| *s != first[0]),
            "blocks must not all start alike"
        );
    }

    #[test]
    fn sequential_runs_each_cell_in_turn() {
        let mut s = Scheduler::new(2, Order::Sequential, exact(3), 1, 0);
        let steps = drive(&mut s, |_| 0.01);
        use Step::*;
        assert_eq!(
            steps,
            vec![
                Warmup(0),
                Measure(0),
                Measure(0),
                Measure(0),
                Warmup(1),
                Measure(1),
                Measure(1),
                Measure(1)
            ]
        );
    }

    #[test]
    fn time_budget_gives_min_runs_for_slow_commands_and_more_for_fast() {
        let mut s = Scheduler::new(1, Order::Sequential, RunPolicy::default(), 0, 0);
        assert_eq!(drive(&mut s, |_| 1.0).len(), 10);
        let mut s = Scheduler::new(1, Order::Sequential, RunPolicy::default(), 0, 0);
        // 1/64 s is exact in binary, so the budget is reached after exactly 192 runs.
        assert_eq!(drive(&mut s, |_| 0.015625).len(), 192);
        assert_eq!(s.stop_reason(), Some(StopReason::TimeBudget));
    }

    fn first_run() -> RunPolicy {
        RunPolicy {
            first_run: true,
            ..RunPolicy::default()
        }
    }

    #[test]
    fn first_run_rule_fixes_the_count_from_the_first_run_as_hyperfine() {
        // 3 s / 10 ms: 300 runs, whatever the later runs take (hyperfine
        // never looks again); the time budget would stop at 150 here.
        let mut s = Scheduler::new(1, Order::Sequential, first_run(), 0, 0);
        let mut k = 0;
        let steps = drive(&mut s, |_| {
            k += 1;
            if k == 1 {
                0.01
            } else {
                0.02
            }
        });
        assert_eq!(steps.len(), 300);
        // Slow commands: at least min_runs.
        let mut s = Scheduler::new(1, Order::Sequential, first_run(), 0, 0);
        assert_eq!(drive(&mut s, |_| 0.5).len(), 10);
        // max_runs caps, min_runs raises, as given.
        let policy = RunPolicy {
            max_runs: Some(20),
            ..first_run()
        };
        let mut s = Scheduler::new(1, Order::Sequential, policy, 0, 0);
        assert_eq!(drive(&mut s, |_| 0.01).len(), 20);
        let policy = RunPolicy {
            min_runs: 40,
            ..first_run()
        };
        let mut s = Scheduler::new(1, Order::Sequential, policy, 0, 0);
        assert_eq!(drive(&mut s, |_| 0.5).len(), 40);
    }

    #[test]
    fn first_run_cost_counts_the_hooks_and_each_cell_has_its_own() {
        // Two cells of 10 ms; the second's first step also spent 20 ms in
        // its prepare hook: 3 s / 30 ms = 100 runs.
        let mut s = Scheduler::new(2, Order::Sequential, first_run(), 1, 0);
        let mut runs = [0usize; 2];
        let mut warmups = [0usize; 2];
        loop {
            let step = s.next_step();
            match step {
                Step::Done => break,
                Step::Warmup(c) => warmups[c] += 1,
                Step::Measure(c) => runs[c] += 1,
            }
            s.record(step, 0.01);
            if step == Step::Measure(1) {
                s.record_cost(step, 0.02 + 0.01);
            }
        }
        assert_eq!(warmups, [1, 1]);
        assert_eq!(runs, [300, 100]);
        assert_eq!(s.stop_reason(), Some(StopReason::RunCount));
    }

    #[test]
    fn a_fixed_count_wins_over_the_policy() {
        let mut s = Scheduler::new(2, Order::Sequential, first_run(), 0, 0);
        s.fix_runs(0, CALIBRATION_RUNS);
        let steps = drive(&mut s, |_| 0.001);
        let of = |c| steps.iter().filter(|&&x| x == Step::Measure(c)).count();
        assert_eq!((of(0), of(1)), (CALIBRATION_RUNS, 3000));
        let mut s = Scheduler::new(2, Order::Sequential, exact(3), 0, 0);
        s.fix_runs(1, 5);
        assert_eq!(s.expected_runs(), 8);
        assert_eq!(drive(&mut s, |_| 0.001).len(), 8);
    }

    #[test]
    fn interleaved_budget_is_shared_so_a_slow_cell_does_not_multiply_fast_runs() {
        let mut s = Scheduler::new(2, Order::Interleaved, RunPolicy::default(), 0, 0);
        let steps = drive(&mut s, |c| if c == 0 { 0.001 } else { 1.0 });
        // 10 blocks of ~1 s reach the shared 6 s budget and the minimum runs.
        assert_eq!(steps.len(), 20);
    }

    #[test]
    fn max_runs_caps_and_stop_ends_early() {
        let policy = RunPolicy {
            max_runs: Some(4),
            min_runs: 2,
            ..RunPolicy::default()
        };
        let mut s = Scheduler::new(2, Order::Interleaved, policy, 0, 0);
        assert_eq!(drive(&mut s, |_| 0.0001).len(), 8);
        assert_eq!(s.stop_reason(), Some(StopReason::MaxRuns));

        let mut s = Scheduler::new(2, Order::Interleaved, exact(100), 0, 0);
        let a = s.next_step();
        s.record(a, 0.1);
        s.stop(StopReason::Interrupted);
        assert_eq!(s.next_step(), Step::Done);
        assert_eq!(s.stop_reason(), Some(StopReason::Interrupted));
    }

    #[test]
    fn a_stop_rule_waits_for_the_minimum_runs() {
        // The precision reached after 20 blocks, with --min-runs 1000: the
        // session goes on to 1000 blocks and stops there, not at the time
        // budget (50 s of runs) nor later.
        let policy = RunPolicy {
            min_runs: 1000,
            ..RunPolicy::default()
        };
        for order in [Order::Interleaved, Order::Sequential] {
            let cells = if order == Order::Interleaved { 2 } else { 1 };
            let mut s = Scheduler::new(cells, order, policy, 0, 0);
            let mut made = 0;
            while let step @ Step::Measure(_) = s.next_step() {
                s.record(step, 0.05);
                made += 1;
                if made == 20 * cells {
                    s.stop(StopReason::Precision);
                }
            }
            assert_eq!(made, 1000 * cells, "{order:?}");
            assert_eq!(s.stop_reason(), Some(StopReason::Precision));
        }
        // With the minimum made, at once; an interruption, at once always.
        let mut s = Scheduler::new(1, Order::Interleaved, RunPolicy::default(), 0, 0);
        for _ in 0..10 {
            let step = s.next_step();
            s.record(step, 0.001);
        }
        s.stop(StopReason::TimeBudget);
        assert_eq!(s.next_step(), Step::Done);
        let mut s = Scheduler::new(1, Order::Interleaved, policy, 0, 0);
        let step = s.next_step();
        s.record(step, 0.001);
        s.stop(StopReason::Interrupted);
        assert_eq!(s.next_step(), Step::Done);
        assert_eq!(s.stop_reason(), Some(StopReason::Interrupted));
    }

    #[test]
    fn expected_runs_estimates_from_measured_time() {
        let mut s = Scheduler::new(1, Order::Sequential, RunPolicy::default(), 0, 0);
        let st = s.next_step();
        s.record(st, 0.1);
        assert_eq!(s.expected_runs(), 30);
    }
}
