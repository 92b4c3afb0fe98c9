//! What a running session shows on the terminal: the progress bar on
//! standard error, the machine checks' warnings before the first run, and
//! the label above each command's output when it is shown. It consumes the
//! runner's [`Event`]s (the runner formats nothing itself) and decides
//! nothing about the session: no scheduling, no statistics.
//!
//! The bar is drawn only when asked for and when standard error is a
//! terminal whose TERM is not `dumb` (indicatif hides it otherwise), so a
//! redirected stderr never receives escape codes.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::metrics::Metric;
use crate::run::events::{Event, Observer};
use crate::run::preflight::{self, Check};
use crate::run::schedule::CALIBRATION_RUNS;
use crate::run::session::ShellOverhead;

/// The machine checks warn once per process, however many sessions it
/// runs (a search runs one per round).
static WARNED: AtomicBool = AtomicBool::new(false);

/// hyperfine's spinner (its `TICK_SETTINGS`).
const HYPERFINE_TICKS: &str = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ";

/// hyperfine's bars asked for in place of cmdscope's (the front door, in
/// hyperfine's styles that draw them): `green` paints the estimate.
#[derive(Clone, Copy, Debug)]
pub struct HyperfineBars {
    pub green: Option<fn(&str) -> String>,
}

/// What hyperfine's bars need to know of a sequential session
/// ([`Progress::hyperfine`]).
pub struct Phases {
    /// Paints the estimate (hyperfine's full style paints it green).
    pub green: Option<fn(&str) -> String>,
    pub warmup: usize,
    /// The first bar's length, before the first run fixes the count.
    pub min_runs: usize,
    /// Per cell, whether it is a shell calibration...
    pub calibration: Vec<bool>,
    /// ...and which calibration measures the start-up it runs through.
    pub calibrated_by: Vec<Option<usize>>,
    /// Per calibration cell, the start-up it measured so far.
    start_up: Vec<Option<ShellOverhead>>,
    /// The cell whose runs are drawn, the runs started of it and the sum
    /// of its measured wall times (start-up subtracted).
    current: Option<usize>,
    started: usize,
    sum: f64,
}

impl Phases {
    pub fn new(
        green: Option<fn(&str) -> String>,
        warmup: usize,
        min_runs: usize,
        calibration: Vec<bool>,
        calibrated_by: Vec<Option<usize>>,
    ) -> Phases {
        Phases {
            green,
            warmup,
            min_runs,
            start_up: vec![None; calibration.len()],
            calibration,
            calibrated_by,
            current: None,
            started: 0,
            sum: 0.0,
        }
    }
}

/// The bar's message (the last cell's mean) and length are refreshed at
/// most this often; its position after every measured run.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

pub struct Progress {
    /// Where the bar draws, made when the session starts and again after
    /// a benchmark's block was printed; `None`: not shown.
    target: Option<Box<dyn Fn() -> ProgressDrawTarget>>,
    shown: bool,
    bar: ProgressBar,
    /// hyperfine's bars in place of cmdscope's ([`Bar::Hyperfine`]).
    phases: Option<Phases>,
    last_draw: Instant,
    redraw_every: Duration,
    warned: &'static AtomicBool,
    /// Standard output: the labels go where the commands' output goes.
    labels: Box<dyn Write>,
    /// Standard error: the warnings.
    notes: Box<dyn Write>,
    /// The cell whose output was last labelled.
    labelled: Option<usize>,
    machine_warnings: bool,
}

impl Progress {
    /// The terminal's display; with `show` false only the labels of shown
    /// output are written, with `machine_warnings` false no machine check
    /// is warned about.
    pub fn new(show: bool, machine_warnings: bool) -> Progress {
        let mut progress = Progress::with(
            show.then(|| Box::new(ProgressDrawTarget::stderr) as Box<dyn Fn() -> _>),
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
            &WARNED,
            REDRAW_EVERY,
        );
        progress.machine_warnings = machine_warnings;
        progress
    }

    fn with(
        target: Option<Box<dyn Fn() -> ProgressDrawTarget>>,
        labels: Box<dyn Write>,
        notes: Box<dyn Write>,
        warned: &'static AtomicBool,
        redraw_every: Duration,
    ) -> Progress {
        Progress {
            shown: target.is_some(),
            target,
            bar: ProgressBar::hidden(),
            phases: None,
            last_draw: Instant::now(),
            redraw_every,
            warned,
            labels,
            notes,
            labelled: None,
            machine_warnings: true,
        }
    }

    fn started(&mut self, expected_runs: usize) {
        if let Some(target) = &self.target {
            let bar = ProgressBar::with_draw_target(Some(expected_runs as u64), target());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {msg} [{bar:30}] {pos}/{len} runs, ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            self.bar = bar;
        }
        self.last_draw = Instant::now();
    }

    /// Whose output follows: once per command in sequential order, at
    /// every change of command when interleaved.
    fn label(&mut self, cell: usize, name: &str, output_shown: bool) {
        if output_shown && self.labelled != Some(cell) {
            self.labelled = Some(cell);
            let out = &mut self.labels;
            self.bar.suspend(|| {
                let _ = writeln!(out, "==> {name} <==");
                let _ = out.flush();
            });
        }
    }

    /// hyperfine's bars (its `output/progress_bar.rs`): a bar per phase,
    /// made where hyperfine makes it and cleared where hyperfine clears it.
    pub fn hyperfine(mut self, phases: Phases) -> Progress {
        self.phases = Some(phases);
        self
    }

    /// A new bar of `length` with `message`, in hyperfine's style, in place
    /// of the one drawn (cleared).
    fn phase_bar(&mut self, length: usize, message: &str) {
        self.bar.finish_and_clear();
        let Some(target) = &self.target else {
            return;
        };
        let bar = ProgressBar::with_draw_target(Some(length as u64), target());
        bar.set_style(
            ProgressStyle::default_spinner()
                .tick_chars(HYPERFINE_TICKS)
                .template(" {spinner} {msg:<30} {wide_bar} ETA {eta_precise} ")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(message.to_string());
        bar.enable_steady_tick(Duration::from_millis(80));
        self.bar = bar;
    }

    /// An event in hyperfine's bars.
    fn phase(&mut self, event: &Event<'_>) {
        let Some(mut p) = self.phases.take() else {
            return;
        };
        match *event {
            Event::RunStarting {
                cell,
                name,
                output_shown,
            } => {
                self.label(cell, name, output_shown);
                let calibration = p.calibration.get(cell).copied().unwrap_or(false);
                if p.current != Some(cell) {
                    p.current = Some(cell);
                    (p.started, p.sum) = (0, 0.0);
                    if calibration {
                        self.phase_bar(CALIBRATION_RUNS, "Measuring shell spawning time");
                    } else if p.warmup > 0 {
                        self.phase_bar(p.warmup, "Performing warmup runs");
                    }
                }
                if !calibration && p.started == p.warmup {
                    self.phase_bar(p.min_runs, "Initial time measurement");
                }
                p.started += 1;
            }
            Event::RunEnded { cell } => {
                let calibration = p.calibration.get(cell).copied().unwrap_or(false);
                if !calibration && p.started <= p.warmup {
                    self.bar.inc(1);
                }
            }
            Event::Measured {
                cell,
                samples,
                cell_runs,
                ..
            } => {
                if p.calibration.get(cell).copied().unwrap_or(false) {
                    p.start_up[cell] = ShellOverhead::of(samples);
                } else if let Some(last) = samples.last() {
                    let mut last = last.clone();
                    let start_up = p.calibrated_by.get(cell).copied().flatten();
                    if let Some(o) = start_up.and_then(|c| p.start_up[c]) {
                        o.subtract(&mut last);
                    }
                    p.sum += last.get(Metric::WallTime).unwrap_or(0.0);
                    if samples.len() == 1 {
                        self.bar.set_length(cell_runs as u64);
                    }
                    let mean = p.sum / samples.len() as f64;
                    let mean = crate::units::hyperfine_time(mean, crate::units::forced_scale()).0;
                    let mean = p.green.map_or_else(|| mean.clone(), |g| g(&mean));
                    self.bar.set_message(format!("Current estimate: {mean}"));
                }
                self.bar.inc(1);
            }
            // A benchmark's header or block is printed next, where the bar was.
            Event::Begins { .. } | Event::Ended { .. } | Event::Finished => {
                self.bar.finish_and_clear()
            }
            Event::Started { .. }
            | Event::Checked { .. }
            | Event::Sample { .. }
            | Event::Batch { .. }
            | Event::Schedules { .. }
            | Event::Scheduled { .. } => {}
        }
        self.phases = Some(p);
    }

    /// The machine checks' warnings in words, once per process, above the bar.
    fn checked(&mut self, checks: &[Check]) {
        if self.shown && self.machine_warnings && !self.warned.swap(true, Ordering::Relaxed) {
            let notes = &mut self.notes;
            self.bar.suspend(|| {
                for w in preflight::warnings(checks) {
                    let _ = writeln!(notes, "cmdscope: warning: {w}");
                    let _ = notes.flush();
                }
            });
        }
    }
}

impl Observer for Progress {
    fn event(&mut self, event: &Event<'_>) {
        if self.phases.is_some() {
            self.phase(event);
            return;
        }
        match *event {
            Event::Started { expected_runs } => self.started(expected_runs),
            Event::Checked { preflight } => self.checked(preflight),
            Event::RunStarting {
                cell,
                name,
                output_shown,
            } => self.label(cell, name, output_shown),
            Event::Measured {
                name,
                samples,
                expected_runs,
                ..
            } => {
                self.bar.inc(1);
                if self.redraw_every.is_zero() || self.last_draw.elapsed() > self.redraw_every {
                    self.last_draw = Instant::now();
                    self.bar.set_length(expected_runs as u64);
                    let mean = samples
                        .iter()
                        .filter_map(|x| x.get(Metric::WallTime))
                        .sum::<f64>()
                        / samples.len() as f64;
                    self.bar
                        .set_message(format!("{name}: ~{}", crate::units::time(mean)));
                }
            }
            Event::Finished => self.bar.finish_and_clear(),
            Event::RunEnded { .. }
            | Event::Begins { .. }
            | Event::Ended { .. }
            | Event::Sample { .. }
            | Event::Batch { .. }
            | Event::Schedules { .. }
            | Event::Scheduled { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Sample;
    use crate::run::preflight::Status;
    use std::sync::{Arc, Mutex};

    /// A terminal and two streams recorded as text.
    #[derive(Clone, Debug, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl Screen {
        fn text(&self) -> String {
            self.0.lock().unwrap().clone()
        }
        fn push(&self, s: &str) {
            self.0.lock().unwrap().push_str(s);
        }
    }

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.push(&String::from_utf8_lossy(buf));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.push(s);
            self.push("\n");
            Ok(())
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.push(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.push("<clear>");
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    struct Shown {
        progress: Progress,
        bar: Screen,
        labels: Screen,
        notes: Screen,
    }

    fn shown(show: bool, warned: &'static AtomicBool) -> Shown {
        let (bar, labels, notes) = (Screen::default(), Screen::default(), Screen::default());
        let screen = bar.clone();
        let target = show.then(|| {
            Box::new(move || ProgressDrawTarget::term_like(Box::new(screen.clone())))
                as Box<dyn Fn() -> _>
        });
        Shown {
            progress: Progress::with(
                target,
                Box::new(labels.clone()),
                Box::new(notes.clone()),
                warned,
                Duration::ZERO,
            ),
            bar,
            labels,
            notes,
        }
    }

    fn walls(ms: &[f64]) -> Vec<Sample> {
        ms.iter()
            .enumerate()
            .map(|(i, &w)| {
                let mut s = Sample::new(i as u64);
                s.set(Metric::WallTime, w / 1e3);
                s
            })
            .collect()
    }

    /// `cell`'s runs measured so far (`samples`), `cell_runs` of them
    /// expected, `expected_runs` in all.
    fn measured(
        s: &mut Shown,
        (cell, name): (usize, &str),
        samples: &[Sample],
        expected_runs: usize,
        cell_runs: usize,
    ) {
        s.progress.event(&Event::Measured {
            cell,
            name,
            samples,
            expected_runs,
            cell_runs,
        });
    }

    fn load_warning() -> Vec<Check> {
        vec![
            Check {
                name: "load".into(),
                status: Status::Warn,
                detail: "3 busy processes".into(),
            },
            Check {
                name: "swap".into(),
                status: Status::Ok,
                detail: "none".into(),
            },
        ]
    }

    #[test]
    fn draws_the_runs_and_the_last_mean_then_clears() {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let mut s = shown(true, &WARNED);
        s.progress.event(&Event::Started { expected_runs: 4 });
        assert_eq!(s.bar.text(), "", "nothing drawn before the first run");
        let a = walls(&[2.0]);
        measured(&mut s, (0, "a"), &a, 4, 2);
        let b = walls(&[1.0, 3.0]);
        measured(&mut s, (1, "b"), &b, 6, 3);
        let drawn = s.bar.text();
        assert!(drawn.contains("1/4 runs"), "{drawn}");
        assert!(drawn.contains("a: ~2.000 ms"), "{drawn}");
        assert!(drawn.contains("b: ~2.000 ms ["), "{drawn}");
        assert!(drawn.contains("2/6 runs, ETA"), "{drawn}");
        s.progress.event(&Event::Finished);
        assert!(s.bar.text().ends_with("<clear>"), "{}", s.bar.text());
        assert_eq!(s.labels.text(), "");
        assert_eq!(s.notes.text(), "");
    }

    #[test]
    fn hyperfines_bars_follow_its_phases_and_clear_for_each_block() {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let s = shown(true, &WARNED);
        // Cell 1 calibrates cell 0's shell, and is measured first.
        let phases = Phases::new(None, 1, 10, vec![false, true], vec![Some(1), None]);
        let mut s = Shown {
            progress: s.progress.hyperfine(phases),
            ..s
        };
        let start = |s: &mut Shown, cell| {
            s.progress.event(&Event::RunStarting {
                cell,
                name: "x",
                output_shown: false,
            })
        };
        s.progress.event(&Event::Started { expected_runs: 60 });
        start(&mut s, 1);
        let shell = walls(&[1.0]);
        measured(&mut s, (1, "sh"), &shell, 60, 50);
        assert!(
            s.bar.text().contains("Measuring shell spawning time"),
            "{}",
            s.bar.text()
        );
        s.progress.event(&Event::Begins { cell: 0 });
        assert!(s.bar.text().ends_with("<clear>"), "{}", s.bar.text());
        start(&mut s, 0);
        s.progress.event(&Event::RunEnded { cell: 0 });
        assert!(
            s.bar.text().contains("Performing warmup runs"),
            "{}",
            s.bar.text()
        );
        start(&mut s, 0);
        assert!(
            s.bar.text().contains("Initial time measurement"),
            "{}",
            s.bar.text()
        );
        // 3 ms through a shell of 1 ms: the estimate is 2 ms, of 4 runs.
        let runs = walls(&[3.0]);
        measured(&mut s, (0, "x"), &runs, 54, 4);
        let drawn = s.bar.text();
        assert!(drawn.contains("Current estimate: 2.0 ms"), "{drawn}");
        s.progress.event(&Event::Ended {
            cell: 0,
            samples: &runs,
        });
        assert!(s.bar.text().ends_with("<clear>"), "{}", s.bar.text());
    }

    #[test]
    fn labels_shown_output_at_each_change_of_command() {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let mut s = shown(false, &WARNED);
        s.progress.event(&Event::Started { expected_runs: 4 });
        s.progress.event(&Event::Checked {
            preflight: &load_warning(),
        });
        for (cell, name, output_shown) in [
            (0, "a", true),
            (0, "a", true),
            (1, "b", true),
            (2, "calibration", false),
            (0, "a", true),
        ] {
            s.progress.event(&Event::RunStarting {
                cell,
                name,
                output_shown,
            });
        }
        s.progress.event(&Event::Finished);
        assert_eq!(s.labels.text(), "==> a <==\n==> b <==\n==> a <==\n");
        assert_eq!(s.bar.text(), "", "a hidden bar draws nothing");
        assert_eq!(s.notes.text(), "", "no warnings without the bar");
    }

    #[test]
    fn warns_of_the_machine_once_per_process() {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let mut first = shown(true, &WARNED);
        first.progress.event(&Event::Started { expected_runs: 1 });
        first.progress.event(&Event::Checked {
            preflight: &load_warning(),
        });
        assert_eq!(
            first.notes.text(),
            "cmdscope: warning: load: 3 busy processes\n"
        );
        let mut second = shown(true, &WARNED);
        second.progress.event(&Event::Started { expected_runs: 1 });
        second.progress.event(&Event::Checked {
            preflight: &load_warning(),
        });
        assert_eq!(second.notes.text(), "");
    }
}
