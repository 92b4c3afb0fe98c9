//! Runs handed to the spawner ahead of the runner. Where the runner does
//! nothing between two runs that the spawner cannot do (no hook, no fresh
//! working directory, no timeout or counters, no reading of the machine
//! around the run) and the steps to come do not depend on the runs' times
//! (`--runs N`, no adaptive stopping), the spawner gets the next steps as
//! a schedule and makes them back to back (`exec::Spawner::schedule`),
//! while the runner takes each run's report in turn, off the critical
//! path. The runner keeps the control: it hands over at most a few hundred
//! runs ahead, the spawner stops by itself after a failing run as the
//! runner would, Ctrl-C cuts the schedule, and a step that differs from
//! what was handed over cuts it too and runs alone. Every other step runs
//! alone, one request and one report (`exec::Prepared::run`).

use std::collections::VecDeque;

use crate::error::Result;
use crate::exec::{Outcome, Prepared, Spawner};
use crate::metrics::Sample;
use crate::run::schedule::{Scheduler, Step};

/// How many runs the spawner is kept ahead of the runner, at most.
const DEPTH: usize = 256;
/// The same while the machine checks' window is open: it closes between
/// two runs, after the spawner has made those it was handed.
const DEPTH_WINDOW_OPEN: usize = 16;

/// What may go into a schedule, and the steps handed over.
pub struct Ahead {
    /// Per cell: nothing happens between its runs but the run.
    eligible: Vec<bool>,
    /// The spawner stops after a run that exits non-zero or is killed.
    stop_on_failure: bool,
    /// Sequential order with --setup/--cleanup: hooks run where the cell
    /// changes, so a schedule holds runs of one cell.
    one_cell: bool,
    /// The scheduler as it will be after the steps handed over (their
    /// times recorded as zero: with a fixed run count they decide
    /// nothing); None when looking further is not allowed.
    shadow: Option<Scheduler>,
    /// Steps handed over and not yet taken, in order.
    issued: VecDeque<Step>,
}

fn cell_of(step: Step) -> Option<usize> {
    match step {
        Step::Warmup(c) | Step::Measure(c) => Some(c),
        Step::Done => None,
    }
}

impl Ahead {
    pub fn new(eligible: Vec<bool>, stop_on_failure: bool, one_cell: bool) -> Ahead {
        Ahead {
            eligible,
            stop_on_failure,
            one_cell,
            shadow: None,
            issued: VecDeque::new(),
        }
    }

    /// Whether any cell's runs may go into a schedule.
    pub fn may_schedule(&self) -> bool {
        self.eligible.iter().any(|&e| e)
    }

    /// Whether the spawner has no run of ours to make: the runner may read
    /// the machine without overlapping a run.
    pub fn idle(&self) -> bool {
        self.issued.is_empty()
    }

    /// The run of `step`, just handed out by `scheduler`, from the
    /// spawner's schedule; None when it is to run alone. `quiet(c)`:
    /// nothing is read around cell `c`'s runs (the machine's counters
    /// would cost too much for them). `window`: the machine checks' window
    /// is open (Some), and due to close (Some(true)). `announce(first,
    /// steps)` is told of every schedule before the spawner gets it.
    #[allow(clippy::too_many_arguments)]
    pub fn take(
        &mut self,
        step: Step,
        scheduler: &Scheduler,
        spawner: &Spawner,
        prepared: &mut [Prepared],
        quiet: &dyn Fn(usize) -> bool,
        window: Option<bool>,
        announce: &mut dyn FnMut(u64, &[Step]),
        sample: &mut Sample,
    ) -> Option<Result<Outcome>> {
        let c = cell_of(step)?;
        match self.issued.front() {
            Some(&front) if front == step => {
                self.issued.pop_front();
            }
            Some(_) => {
                // Not what was handed over (cannot happen with a fixed run
                // count; kept safe): the rest is not wanted.
                if let Err(e) = self.cut(spawner) {
                    return Some(Err(e));
                }
                return None;
            }
            None => {
                if !self.eligible[c] || !quiet(c) || window == Some(true) {
                    return None;
                }
                let mut shadow = scheduler.clone();
                shadow.record(step, 0.0);
                self.shadow = Some(shadow);
                if let Err(e) =
                    self.hand_over(step, true, spawner, prepared, quiet, window, announce)
                {
                    return Some(Err(e));
                }
            }
        }
        if self.issued.len() <= depth(window) / 2 {
            if let Err(e) = self.hand_over(step, false, spawner, prepared, quiet, window, announce)
            {
                return Some(Err(e));
            }
        }
        Some(prepared[c].take(sample))
    }

    /// Hands the spawner the steps to come, up to the depth allowed: the
    /// shadow's next ones, after `now`, the step being taken, if
    /// `with_now` (it is already out of the scheduler).
    #[allow(clippy::too_many_arguments)]
    fn hand_over(
        &mut self,
        now: Step,
        with_now: bool,
        spawner: &Spawner,
        prepared: &[Prepared],
        quiet: &dyn Fn(usize) -> bool,
        window: Option<bool>,
        announce: &mut dyn FnMut(u64, &[Step]),
    ) -> Result<()> {
        let mut steps: Vec<Step> = if with_now { vec![now] } else { Vec::new() };
        if window == Some(true) {
            // The window closes once the spawner has made what it holds.
            self.shadow = None;
        }
        let mut last = self
            .issued
            .back()
            .copied()
            .and_then(cell_of)
            .or(cell_of(now))
            .unwrap_or_default();
        while let Some(shadow) = self.shadow.as_mut() {
            if self.issued.len() + steps.len() >= depth(window) {
                break;
            }
            let step = shadow.next_step();
            let next = cell_of(step)
                .filter(|&c| self.eligible[c] && quiet(c) && !(self.one_cell && c != last));
            let Some(c) = next else {
                // The shadow is past a step that will run alone: looking
                // further would hand over runs out of order.
                self.shadow = None;
                break;
            };
            shadow.record(step, 0.0);
            self.issued.push_back(step);
            steps.push(step);
            last = c;
        }
        if steps.is_empty() {
            return Ok(());
        }
        let runs: Vec<&Prepared> = steps
            .iter()
            .filter_map(|&s| cell_of(s))
            .map(|c| &prepared[c])
            .collect();
        announce(spawner.next_serial(), &steps);
        spawner.schedule(&runs, self.stop_on_failure)
    }

    /// Stops what the spawner still holds and reads it away (the runs are
    /// not wanted): at the session's end, or when the steps went another
    /// way.
    pub fn cut(&mut self, spawner: &Spawner) -> Result<()> {
        self.issued.clear();
        self.shadow = None;
        spawner.finish_schedules()
    }
}

fn depth(window: Option<bool>) -> usize {
    match window {
        Some(_) => DEPTH_WINDOW_OPEN,
        None => DEPTH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::SpawnConfig;
    use crate::metrics::Metric;
    use crate::run::schedule::{Order, RunPolicy};
    use std::rc::Rc;

    /// One spawner at a time: a spawner dropped at a test's end kills
    /// every descendant of this process that no one protects, which
    /// includes the runs of another test's spawner.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn exact(n: usize) -> RunPolicy {
        RunPolicy {
            exact: Some(n),
            ..RunPolicy::default()
        }
    }

    fn prepare(spawner: &Rc<Spawner>, argv: &[&str]) -> Prepared {
        let argv = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
        Prepared::new(spawner, &SpawnConfig::new(argv)).expect("prepare")
    }

    /// Drives `scheduler` as the runner does, every step through `ahead`;
    /// stops at the first sample `stop` says ends the session, then cuts.
    /// Checks that every schedule was announced before the spawner had
    /// it, with serial numbers counting on, and that each sample carries
    /// its step's.
    fn drive(
        ahead: &mut Ahead,
        scheduler: &mut Scheduler,
        spawner: &Spawner,
        prepared: &mut [Prepared],
        stop: impl Fn(&Sample) -> bool,
    ) -> Vec<(usize, Sample)> {
        let mut made = Vec::new();
        let mut announced: Vec<Step> = Vec::new();
        let mut announce = |first: u64, steps: &[Step]| {
            assert_eq!(first, announced.len() as u64, "serials count on");
            assert_eq!(spawner.next_serial(), first, "announced first");
            announced.extend_from_slice(steps);
        };
        loop {
            let step = scheduler.next_step();
            let Some(c) = cell_of(step) else { break };
            let mut sample = Sample::new(made.len() as u64);
            let ran = ahead
                .take(
                    step,
                    scheduler,
                    spawner,
                    prepared,
                    &|_| true,
                    None,
                    &mut announce,
                    &mut sample,
                )
                .expect("every step is handed to the spawner");
            assert_eq!(ran.expect("a report"), Outcome::Finished);
            let serial = sample.scheduled.expect("a scheduled run's serial") as usize;
            assert_eq!(serial, made.len(), "taken in the order handed over");
            scheduler.record(step, sample.get(Metric::WallTime).unwrap());
            let last = stop(&sample);
            made.push((c, sample));
            if last {
                break;
            }
        }
        ahead.cut(spawner).expect("cut");
        assert!(!spawner.scheduled());
        for (k, (c, _)) in made.iter().enumerate() {
            assert_eq!(cell_of(announced[k]), Some(*c), "run {k} announced");
        }
        made
    }

    #[test]
    fn interleaved_runs_are_made_from_schedules_in_order_with_every_metric() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let spawner = Rc::new(Spawner::start(false).expect("spawner"));
        let mut prepared = vec![
            prepare(&spawner, &["sh", "-c", "exit 0"]),
            prepare(&spawner, &["sh", "-c", "exit 3"]),
        ];
        // Three blocks more than a schedule's depth: refilled, several
        // messages, each report read for the step it belongs to.
        let runs = DEPTH / 2 + 3;
        let mut scheduler = Scheduler::new(2, Order::Interleaved, exact(runs), 1, 5);
        let mut ahead = Ahead::new(vec![true, true], false, false);
        let made = drive(&mut ahead, &mut scheduler, &spawner, &mut prepared, |_| {
            false
        });
        assert_eq!(made.len(), 2 * (runs + 1));
        for (c, s) in &made {
            assert_eq!(
                s.exit_code,
                Some(if *c == 0 { 0 } else { 3 }),
                "cell {c}: {s:?}"
            );
            for m in [
                Metric::WallTime,
                Metric::UserTime,
                Metric::PeakRss,
                Metric::MinorFaults,
                Metric::IoReadChars,
            ] {
                assert!(s.get(m).is_some(), "{m:?} missing");
            }
            assert!(s.get(Metric::WallTime).unwrap() > 0.0);
            assert!(s.get(Metric::PeakRss).unwrap() > 0.0);
        }
        // The spawner takes single runs again afterwards.
        let mut sample = Sample::new(0);
        assert_eq!(prepared[1].run(&mut sample).unwrap(), Outcome::Finished);
        assert_eq!(sample.exit_code, Some(3));
    }

    #[test]
    fn the_spawner_stops_its_schedule_after_a_failing_run() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let script = format!(
            "echo x >> '{0}'; test $(wc -l < '{0}') -lt 7",
            count.display()
        );
        let spawner = Rc::new(Spawner::start(false).expect("spawner"));
        let mut prepared = vec![prepare(&spawner, &["sh", "-c", &script])];
        let mut scheduler = Scheduler::new(1, Order::Sequential, exact(100), 0, 0);
        let mut ahead = Ahead::new(vec![true], true, false);
        let made = drive(&mut ahead, &mut scheduler, &spawner, &mut prepared, |s| {
            s.exit_code != Some(0)
        });
        assert_eq!(made.len(), 7);
        assert_eq!(made[6].1.exit_code, Some(1));
        // Not one run more than the runner asked for.
        let lines = std::fs::read_to_string(&count).unwrap().lines().count();
        assert_eq!(lines, 7);
    }

    #[test]
    fn what_scheduled_runs_leave_running_is_killed_and_counted() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let marker = format!("31.{}9", std::process::id());
        let script = format!("(setsid sleep {marker} &); exit 0");
        let spawner = Rc::new(Spawner::start(false).expect("spawner"));
        let mut prepared = vec![prepare(&spawner, &["sh", "-c", &script])];
        let mut scheduler = Scheduler::new(1, Order::Sequential, exact(12), 0, 0);
        let mut ahead = Ahead::new(vec![true], true, false);
        let mut killed = 0;
        loop {
            let step = scheduler.next_step();
            if step == Step::Done {
                break;
            }
            let mut sample = Sample::new(0);
            let ran = ahead.take(
                step,
                &scheduler,
                &spawner,
                &mut prepared,
                &|_| true,
                None,
                &mut |_, _| {},
                &mut sample,
            );
            assert_eq!(ran.expect("handed over").unwrap(), Outcome::Finished);
            killed += spawner.kill_leftovers();
            scheduler.record(step, 0.001);
        }
        ahead.cut(&spawner).unwrap();
        // At least the sleeper of each run; the subshell that started it
        // is counted too when it had not exited yet.
        assert!((12..=24).contains(&killed), "{killed} killed");
        let ps = std::process::Command::new("pgrep")
            .args(["-f", &format!("sleep {marker}")])
            .output()
            .unwrap();
        assert!(ps.stdout.is_empty(), "left running: {:?}", ps.stdout);
    }
}
