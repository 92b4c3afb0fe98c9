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

/// The machine checks warn once per process, however many sessions it
/// runs (a search runs one per round).
static WARNED: AtomicBool = AtomicBool::new(false);

/// The bar's message (the last cell's mean) and length are refreshed at
/// most this often; its position after every measured run.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

pub struct Progress {
    /// Where the bar draws once the session starts; `None`: not shown.
    target: Option<ProgressDrawTarget>,
    shown: bool,
    bar: ProgressBar,
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
            show.then(ProgressDrawTarget::stderr),
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
            &WARNED,
            REDRAW_EVERY,
        );
        progress.machine_warnings = machine_warnings;
        progress
    }

    fn with(
        target: Option<ProgressDrawTarget>,
        labels: Box<dyn Write>,
        notes: Box<dyn Write>,
        warned: &'static AtomicBool,
        redraw_every: Duration,
    ) -> Progress {
        Progress {
            shown: target.is_some(),
            target,
            bar: ProgressBar::hidden(),
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
        if let Some(target) = self.target.take() {
            let bar = ProgressBar::with_draw_target(Some(expected_runs as u64), target);
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
        match *event {
            Event::Started { expected_runs } => self.started(expected_runs),
            Event::Checked { preflight } => self.checked(preflight),
            Event::RunStarting {
                cell,
                name,
                output_shown,
            } => {
                // Whose output follows: once per command in sequential
                // order, at every change of command when interleaved.
                if output_shown && self.labelled != Some(cell) {
                    self.labelled = Some(cell);
                    let out = &mut self.labels;
                    self.bar.suspend(|| {
                        let _ = writeln!(out, "==> {name} <==");
                        let _ = out.flush();
                    });
                }
            }
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
        let target = show.then(|| ProgressDrawTarget::term_like(Box::new(bar.clone())));
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
        s.progress.event(&Event::Measured {
            cell: 0,
            name: "a",
            samples: &a,
            expected_runs: 4,
        });
        let b = walls(&[1.0, 3.0]);
        s.progress.event(&Event::Measured {
            cell: 1,
            name: "b",
            samples: &b,
            expected_runs: 6,
        });
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
