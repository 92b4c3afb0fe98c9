//! The human report printed after a run: every benchmark, the summary of
//! comparisons, then the sweep, the optimum search and the monitor's counts
//! when the run had them. Printed, not written to a file: it comes last,
//! after the exports and the store (its reader may be gone).

use std::fmt::Write;

use super::comparison as words;
use super::paint::Paint;
use super::Report;
use crate::analysis::comparison::{self, Comparison, Verdict};
use crate::analysis::MetricSummary;
use crate::metrics::Metric;
use crate::output::escape_line;
use crate::run::session::Session;
use crate::units;

mod hyperfine;
use hyperfine::hyperfine_summary;
pub use hyperfine::{hyperfine_header, hyperfine_parts};

/// Whose words the terminal report is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wording {
    /// `cmdscope run`'s.
    #[default]
    Cmdscope,
    /// `cmdscope hyperfine`'s, for scripts that read hyperfine's output:
    /// hyperfine 1.20.0's block per benchmark ([`hyperfine::hyperfine_block`]; with
    /// `details` also what `cmdscope run` shows beyond times, and `warmup`:
    /// whether `--warmup` was used, which its warnings' hints depend on)
    /// and its summary ("ran ... times faster than", or with `by_command`
    /// its relative-speed table in the commands' order), then, with
    /// `cmdscope_line`, one line of what `cmdscope run` would have said
    /// ([`cmdscope_line`]). `shown`: the first benchmarks whose blocks were
    /// already printed as each ended, left out here; `headed`: the next
    /// one's header line was printed as it began.
    Hyperfine {
        by_command: bool,
        cmdscope_line: bool,
        details: bool,
        warmup: bool,
        shown: usize,
        headed: bool,
    },
}

/// A piece of the terminal report: standard output's, or with `stderr`
/// standard error's (the front door's warnings, where hyperfine writes
/// them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub text: String,
    pub stderr: bool,
}

/// The whole terminal report, in `wording`'s words, in the order it is
/// printed, each part to its stream.
pub fn render_parts(report: &Report, paint: Paint, wording: Wording) -> Vec<Part> {
    let (mut parts, mut out) = benchmarks(report, paint, wording);
    if let Some(c) = report.concurrency {
        // Names are typed, not trusted to the terminal.
        out.push_str(&crate::output::escape_controls(
            &super::concurrency::render_text(c, report.session, paint),
        ));
    }
    if let Some(sweep) = report.sweep {
        out.push_str(&crate::report::sweep::render_text(sweep, paint));
    }
    if let Some(search) = &report.search {
        out.push_str(&super::search::render_text(search, paint));
    }
    if let Some(c) = report.monitor {
        // The monitor command and the names are typed, not trusted to the terminal.
        out.push_str(&crate::output::escape_controls(
            &super::monitor::render_text(c, report.session),
        ));
    }
    parts.push(Part {
        text: out,
        stderr: false,
    });
    parts
}

/// Each benchmark's times, counters and monitor counts, then the
/// comparisons: the parts printed so far (the front door's warnings go to
/// standard error) and the text that follows them.
fn benchmarks(report: &Report, paint: Paint, wording: Wording) -> (Vec<Part>, String) {
    let session = report.session;
    let comparisons = report.comparisons;
    let mut parts = Vec::new();
    let mut out = String::new();
    for i in 0..session.results.len().min(report.analyses.len()) {
        match wording {
            Wording::Cmdscope => cmdscope_block(&mut out, report, i, paint),
            Wording::Hyperfine { shown, .. } if i < shown => {}
            Wording::Hyperfine {
                details,
                warmup,
                shown,
                headed,
                ..
            } => {
                let header = !(headed && i == shown);
                let mut block = hyperfine_parts(report, i, paint, details, warmup, header);
                // Its last part is standard output's: what follows joins it.
                let last = block.pop();
                if let Some(first) = block.first_mut() {
                    first.text.insert_str(0, &std::mem::take(&mut out));
                }
                parts.extend(block);
                out.push_str(&last.map(|p| p.text).unwrap_or_default());
            }
        }
    }
    match wording {
        Wording::Cmdscope => render_comparisons(&mut out, session, comparisons, paint),
        Wording::Hyperfine {
            by_command,
            cmdscope_line: line,
            ..
        } => {
            // hyperfine's output ends with its summary's last line.
            hyperfine_summary(&mut out, report, by_command, paint);
            // Right under the summary.
            if let Some(line) = line.then(|| cmdscope_line(report, paint)).flatten() {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    // hyperfine subtracts its shell's start-up without a word.
    if let (Some(o), Wording::Cmdscope) = (session.shell_overhead, wording) {
        let _ = writeln!(
            out,
            "{}",
            paint.dim(&format!(
                "Shell start-up ({}, median of {} interleaved runs: {}) was subtracted from every run made through it.",
                escape_line(session.shell.as_deref().unwrap_or("sh")),
                o.runs,
                units::time(o.wall)
            ))
        );
    }
    if let Some(sim) = &session.simulated {
        let _ = writeln!(
            out,
            "{} simulated by {} ({}; I1 {}, D1 {}, LL {}): the times above (20-100x the \
             command's own), memory, faults, switches and I/O are the simulator's and are \
             not compared. The counts are of user-space work only: the kernel's work for \
             system calls, waits for I/O, locks and sleeps are not in them.",
            paint.yellow("Note:"),
            sim.tool,
            escape_line(&sim.version),
            sim.i1,
            sim.d1,
            sim.ll
        );
    }
    if !session.counters_unavailable.is_empty() {
        let names: Vec<&str> = session
            .counters_unavailable
            .iter()
            .map(|(m, _)| m.name())
            .collect();
        let why = &session.counters_unavailable[0].1;
        let _ = writeln!(
            out,
            "{} counters {}: {}",
            paint.yellow("Note:"),
            why,
            names.join(", ")
        );
    }
    (parts, out)
}

/// One benchmark in `cmdscope run`'s words: the median and its interval
/// first, every metric measured, then its warnings.
fn cmdscope_block(out: &mut String, report: &Report, i: usize, paint: Paint) {
    let (r, a) = (&report.session.results[i], &report.analyses[i]);
    let _ = writeln!(
        out,
        "{} {}",
        paint.bold(&format!("Benchmark {}:", i + 1)),
        // Names, commands and what quotes them may come from a suite's
        // file or a store: shown, not obeyed.
        paint.bold(&escape_line(&r.cell.name))
    );
    let Some(w) = a.get(Metric::WallTime) else {
        let _ = writeln!(out, "  no completed runs");
        // The reason (every run timed out, failed) must not be lost.
        for warning in &a.warnings {
            let _ = writeln!(
                out,
                "  {} {}",
                paint.yellow("Warning:"),
                super::warning::line(warning)
            );
        }
        out.push('\n');
        return;
    };
    let s = &w.summary;
    // One unit for every time of the benchmark (hyperfine's way).
    let scale = units::scale_for(s.median);
    let t = |v: f64| units::time_in(v, scale);
    median_line(out, w, paint);
    let user = a
        .get(Metric::UserTime)
        .map(|m| m.summary.mean)
        .unwrap_or(f64::NAN);
    let sys = a
        .get(Metric::SystemTime)
        .map(|m| m.summary.mean)
        .unwrap_or(f64::NAN);
    let (mean, sd) = (t(s.mean), t(s.stddev));
    let _ = writeln!(
        out,
        "  Time (mean ± σ):      {mean} ± {sd}    User: {}, System: {}",
        t(user),
        t(sys)
    );
    let _ = writeln!(
        out,
        "  Range (min … max):    {} … {}    {} run{}",
        paint.cyan(&t(s.min)),
        paint.cyan(&t(s.max)),
        a.runs,
        if a.runs == 1 { "" } else { "s" }
    );
    details(out, report, i, paint, w);
    for warning in &a.warnings {
        let _ = writeln!(
            out,
            "  {} {}",
            paint.yellow("Warning:"),
            super::warning::line(warning)
        );
    }
    out.push('\n');
}

/// The median and its interval (or why there is none), in the median's
/// unit.
fn median_line(out: &mut String, w: &MetricSummary, paint: Paint) {
    let t = |v: f64| units::time_in(v, units::scale_for(w.summary.median));
    let ci = match &w.median_ci {
        Ok(e) => format!("[{} … {}] 95 % CI", t(e.low), t(e.high)),
        Err(why) => format!("({why})"),
    };
    let _ = writeln!(
        out,
        "  Time ({}):        {}   {}",
        paint.green("median"),
        paint.green(&paint.bold(&t(w.summary.median))),
        paint.dim(&ci)
    );
}

/// What `cmdscope run` shows of a benchmark beyond its times: per
/// operation, memory, I/O, faults and switches, counters, the simulator's
/// and the monitor's counts (the front door's with `--cmdscope-details`).
fn details(out: &mut String, report: &Report, i: usize, paint: Paint, w: &MetricSummary) {
    let (session, r, a) = (
        report.session,
        &report.session.results[i],
        &report.analyses[i],
    );
    let s = &w.summary;
    if let Some(ops) = r.cell.variant.ops {
        let per = |v: f64| units::time(v / ops as f64);
        let ci = match &w.median_ci {
            Ok(e) => format!("   [{} … {}]", per(e.low), per(e.high)),
            Err(_) => String::new(),
        };
        let _ = writeln!(
            out,
            "  Per operation:        {}{}    ({} operations per run)",
            paint.green(&per(s.median)),
            paint.dim(&ci),
            units::count(ops as f64)
        );
    }
    let med = |m: Metric| a.get(m).map(|x| x.summary.median);
    // Counts (faults, switches) as a value some run really had: the
    // lower median, never "77.50 minor".
    let count = |m: Metric| {
        let mut v = crate::analysis::values(&r.samples, m);
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[(v.len() - 1) / 2])
    };
    if let Some(rss) = med(Metric::PeakRss) {
        match session.rss_floor {
            Some(floor) if rss <= floor * 1.02 => {
                let _ = writeln!(
                        out,
                        "  Memory (peak RSS):    ≤ {}  {}",
                        units::bytes(rss),
                        paint.dim("(no more than the resident size of cmdscope's spawner, which Linux reports as the floor)")
                    );
            }
            _ => {
                let _ = writeln!(out, "  Memory (peak RSS):    {}", units::bytes(rss));
            }
        }
    }
    if let (Some(rb), Some(wb)) = (med(Metric::IoReadBytes), med(Metric::IoWriteBytes)) {
        let chars = match (med(Metric::IoReadChars), med(Metric::IoWriteChars)) {
            (Some(rc), Some(wc)) => format!(
                "  (syscalls: {} read, {} written)",
                units::bytes(rc),
                units::bytes(wc)
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  Storage I/O:          {} read, {} written{}",
            units::bytes(rb),
            units::bytes(wb),
            paint.dim(&chars)
        );
    }
    if let (Some(minf), Some(majf)) = (count(Metric::MinorFaults), count(Metric::MajorFaults)) {
        let ctx = match (count(Metric::VoluntaryCtx), count(Metric::InvoluntaryCtx)) {
            (Some(v), Some(iv)) => format!(
                "    Context switches: {} voluntary, {} involuntary",
                units::count(v),
                units::count(iv)
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  Page faults:          {} minor, {} major{}",
            units::count(minf),
            units::count(majf),
            ctx
        );
    }
    let counters: Vec<String> = [
        Metric::TaskClock,
        Metric::CpuCycles,
        Metric::Instructions,
        Metric::CacheMisses,
        Metric::BranchMisses,
        Metric::CpuMigrations,
    ]
    .iter()
    .filter_map(|&m| {
        let v = if m.unit() == crate::metrics::Unit::Count {
            count(m)
        } else {
            med(m)
        };
        v.map(|v| format!("{} {}", units::quantity(v, m.unit()), m.label()))
    })
    .collect();
    if !counters.is_empty() {
        let _ = writeln!(out, "  Counters (median):    {}", counters.join(", "));
    }
    let simulated: Vec<String> = [
        Metric::SimInstructions,
        Metric::SimD1Misses,
        Metric::SimLlMisses,
        Metric::SimBranchMispredicts,
        Metric::SimEstimatedCycles,
    ]
    .iter()
    .filter_map(|&m| count(m).map(|v| format!("{} {}", units::count(v), m.label())))
    .collect();
    if !simulated.is_empty() {
        let _ = writeln!(out, "  Simulated (median):   {}", simulated.join(", "));
    }
    let monitor: Vec<String> = report
        .monitor
        .map(|c| crate::monitor::medians(c, i))
        .unwrap_or_default()
        .into_iter()
        .map(|(name, m)| format!("{} {name}", m.map_or("-".into(), units::count)))
        .collect();
    if !monitor.is_empty() {
        let _ = writeln!(out, "  Monitor (median):     {}", monitor.join(", "));
    }
}

/// The one line `cmdscope hyperfine` adds after hyperfine's summary: the
/// engine's sentence (ratio of the medians, its interval and p-value) for
/// the comparison whose p-value is the largest, the least certain (a
/// comparison without a test counts as the least certain of all); None
/// with fewer than two benchmarks. The sentence is the one `cmdscope run`
/// prints for that comparison, from the same analysis.
pub fn cmdscope_line(report: &Report, paint: Paint) -> Option<String> {
    let headline = headline(report.session).name();
    let compared: Vec<&Comparison> = report
        .comparisons
        .iter()
        .filter(|c| c.metric == headline)
        .collect();
    let uncertainty = |c: &Comparison| {
        if c.p_value.is_nan() {
            f64::INFINITY
        } else {
            c.p_value
        }
    };
    let least_certain = compared.iter().copied().reduce(|best, c| {
        if uncertainty(c) > uncertainty(best) {
            c
        } else {
            best
        }
    })?;
    let of = if compared.len() > 1 {
        format!(" (the least certain of {} comparisons)", compared.len())
    } else {
        String::new()
    };
    Some(format!(
        "{} {}{of}",
        paint.dim("cmdscope run would say:"),
        escape_line(&words::sentence(least_certain))
    ))
}

/// Whether hyperfine's summary cannot be computed: two benchmarks or more
/// and a mean of zero among them (hyperfine divides by the fastest mean
/// and by the reference's, which are then zero, and prints [`zero_note`]).
fn zero_mean(report: &Report) -> bool {
    let means: Vec<f64> = report
        .analyses
        .iter()
        .filter_map(|a| a.get(Metric::WallTime).map(|m| m.summary.mean))
        .collect();
    means.len() >= 2 && means.iter().any(|&m| m <= 0.0)
}

/// hyperfine's note, word for word (standard error, after the benchmarks),
/// when its summary cannot be computed because a mean is zero; None when
/// it can.
pub fn zero_note(report: &Report, paint: Paint) -> Option<String> {
    zero_mean(report).then(|| {
        format!(
            "{}: The benchmark comparison could not be computed as some benchmark times are \
             zero. This could be caused by background interference during the initial \
             calibration phase of hyperfine, in combination with very fast commands (faster \
             than a few milliseconds). Try to re-run the benchmark on a quiet system. If you \
             did not do so already, try the --shell=none/-N option. If it does not help \
             either, you command is most likely too fast to be accurately benchmarked by \
             hyperfine.",
            paint.bold_red("Note")
        )
    })
}

/// The metric the summary compares: wall time, but a simulated session's
/// times are the simulator's, so its counts lead.
fn headline(session: &Session) -> Metric {
    if session.simulated.is_some() {
        Metric::SimEstimatedCycles
    } else {
        Metric::WallTime
    }
}

fn render_comparisons(
    out: &mut String,
    session: &Session,
    comparisons: &[Comparison],
    paint: Paint,
) {
    if comparisons.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", paint.bold("Summary"));
    let headline = headline(session);
    for c in comparisons.iter().filter(|c| c.metric == headline.name()) {
        let line = escape_line(&words::sentence(c));
        let line = match c.verdict {
            Verdict::Faster => paint.green(&line),
            Verdict::Slower => paint.yellow(&line),
            Verdict::NoDifference | Verdict::Inconclusive | Verdict::NotComparable => line,
        };
        let _ = writeln!(out, "  {line}");
        if let Some(noise) = comparison::noise_cause(c, &session.results) {
            let _ = writeln!(out, "    {}", escape_line(&words::noise_line(noise)));
        }
        // Other metrics that differ, in a compact line each.
        for o in comparisons
            .iter()
            .filter(|o| o.metric != headline.name() && o.candidate == c.candidate && o.significant)
        {
            let unit = Metric::from_name(o.metric)
                .map(|m| m.unit())
                .unwrap_or(crate::metrics::Unit::Count);
            let label = Metric::from_name(o.metric)
                .map(|m| m.label())
                .unwrap_or(o.metric);
            let ratio = if o.ratio.is_finite() {
                format!("{:.2}x", o.ratio)
            } else {
                "n/a".into()
            };
            let _ = writeln!(
                out,
                "      {label}: {ratio} ({}{} per run, {})",
                if o.shift >= 0.0 { "+" } else { "" },
                units::quantity(o.shift, unit),
                units::format_p(o.p_value)
            );
        }
    }
    // The footer describes a test that was made; none when every
    // comparison lacked the runs for one.
    let Some(first) = comparisons
        .iter()
        .find(|c| c.metric == headline.name() && c.p_value.is_finite())
    else {
        out.push('\n');
        return;
    };
    // An optimum search decides each value at its own step: the test and
    // the Bonferroni family can differ by line, so no single footer fits.
    let mixed = comparisons.iter().any(|c| {
        c.metric == headline.name()
            && c.p_value.is_finite()
            && (c.test != first.test || c.family != first.family)
    });
    if mixed {
        let _ = writeln!(
            out,
            "{}\n",
            paint.dim(&format!(
                "  (each line's test and Bonferroni family are those of the step that decided it; its interval's confidence is on the line; significance level {})",
                units::format_level(session.final_alpha)
            ))
        );
        return;
    }
    let scale = match first.scale {
        comparison::Scale::LogRatio => "on log ratios",
        comparison::Scale::Difference => "on differences",
    };
    let family = if first.family > 1 {
        format!(
            "; Bonferroni over {} comparisons: each at level {}, intervals at {}",
            first.family,
            units::format_level(first.level),
            units::format_confidence(first.confidence).trim_end_matches(" CI")
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}",
        paint.dim(&format!(
            "  ({} {scale}{}{family}; significance level {}{})",
            first.test.name(),
            if first.paired { ", paired by block" } else { "" },
            units::format_level(session.final_alpha),
            if session.looks > 0 {
                format!(
                    " after {} interim look{} (adaptive stopping keeps the false-positive rate at {})",
                    session.looks,
                    if session.looks == 1 { "" } else { "s" },
                    session.alpha
                )
            } else {
                String::new()
            }
        ))
    );
    out.push('\n');
}

/// The line `run --suite` prints before each benchmark of its partition:
/// its name, its cells, and `index` (from 0) of `count`.
pub fn suite_benchmark(
    name: &str,
    cells: usize,
    index: usize,
    count: usize,
    partition: impl std::fmt::Display,
) -> String {
    format!(
        "== {} ({cells} cell{}; benchmark {} of {count} in partition {partition})\n",
        escape_line(name),
        if cells == 1 { "" } else { "s" },
        index + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::two_cells;

    const PLAIN: Paint = Paint { enabled: false };

    /// The whole report as one text, both streams in order.
    fn render(report: &Report, paint: Paint, wording: Wording) -> String {
        render_parts(report, paint, wording)
            .into_iter()
            .map(|p| p.text)
            .collect()
    }

    #[test]
    fn every_benchmark_then_the_verdict_sentence() {
        let f = two_cells();
        let text = render(&f.report(), PLAIN, Wording::Cmdscope);
        assert!(text.starts_with("Benchmark 1: fast\n"), "{text}");
        assert!(text.contains("\nBenchmark 2: slow | grep x\n"), "{text}");
        assert!(
            text.contains("  Range (min … max):    9.700 ms … 10.30 ms    8 runs\n"),
            "{text}"
        );
        assert!(
            text.contains("  Memory (peak RSS):    4.000 MiB\n"),
            "{text}"
        );
        let c = f
            .comparisons
            .iter()
            .find(|c| c.metric == Metric::WallTime.name())
            .unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
        let sentence = words::sentence(c);
        assert!(
            sentence.starts_with("'slow | grep x' is 2.100x slower than 'fast' ("),
            "{sentence}"
        );
        assert!(text.contains(&format!("Summary\n  {sentence}\n")), "{text}");
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn the_front_door_adds_one_line_of_the_engines_sentence_when_asked() {
        let f = two_cells();
        let wording = |line| Wording::Hyperfine {
            by_command: false,
            cmdscope_line: line,
            details: false,
            warmup: false,
            shown: 0,
            headed: false,
        };
        let c = f
            .comparisons
            .iter()
            .find(|c| c.metric == Metric::WallTime.name())
            .unwrap();
        let text = render(&f.report(), PLAIN, wording(true));
        let line = format!("cmdscope run would say: {}\n", words::sentence(c));
        assert_eq!(text.matches("cmdscope run would say").count(), 1, "{text}");
        // Right under hyperfine's summary, the last line, as hyperfine's
        // last line is its summary's.
        assert!(
            text.ends_with(&format!("times faster than slow | grep x\n{line}")),
            "{text}"
        );
        assert!(!text.contains("comparisons"), "{text}");
        let plain = render(&f.report(), PLAIN, wording(false));
        assert!(!plain.contains("cmdscope run would say"), "{plain}");
        assert!(
            plain.ends_with("times faster than slow | grep x\n"),
            "{plain}"
        );
        assert!(zero_note(&f.report(), PLAIN).is_none());
    }

    #[test]
    fn the_front_doors_block_is_hyperfines_and_details_come_on_request() {
        let f = two_cells();
        let wording = |details| Wording::Hyperfine {
            by_command: false,
            cmdscope_line: false,
            details,
            warmup: false,
            shown: 0,
            headed: false,
        };
        let text = render(&f.report(), PLAIN, wording(false));
        let block = text.split("Benchmark 2:").next().unwrap();
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines[0], "Benchmark 1: fast", "{text}");
        // hyperfine's columns: the mean's unit for every time, `{:>8}`.
        assert!(
            lines[1].starts_with("  Time (mean ± σ):     ")
                && lines[1].contains(" ms ± ")
                && lines[1].contains("    [User: ")
                && lines[1].ends_with(" ms]"),
            "{text}"
        );
        assert_eq!(
            lines[2],
            "  Range (min … max):     9.7 ms …  10.3 ms    8 runs"
        );
        assert_eq!(lines[3], " ", "{text}");
        assert_eq!(lines.len(), 4, "{text}");
        for extra in ["median", "Memory", "Storage", "Page faults"] {
            assert!(!text.contains(extra), "{extra}: {text}");
        }
        let detailed = render(&f.report(), PLAIN, wording(true));
        assert!(
            detailed.contains("  Memory (peak RSS):    4.000 MiB\n"),
            "{detailed}"
        );
        // Colours where hyperfine has them: min cyan, max purple.
        let painted = render(&f.report(), Paint { enabled: true }, wording(false));
        assert!(
            painted.starts_with("\x1b[1mBenchmark \x1b[0m\x1b[1m1\x1b[0m: fast\n"),
            "{painted}"
        );
        assert!(
            painted.contains("\x1b[35m 10.3 ms\x1b[0m")
                && painted.contains("\x1b[1;32mmean\x1b[0m"),
            "{painted}"
        );
    }

    #[test]
    fn colours_only_when_enabled() {
        let f = two_cells();
        let text = render(&f.report(), Paint { enabled: true }, Wording::Cmdscope);
        assert!(
            text.starts_with("\x1b[1mBenchmark 1:\x1b[0m \x1b[1mfast\x1b[0m\n"),
            "{text}"
        );
    }

    #[test]
    fn the_monitor_follows_with_controls_escaped() {
        let f = two_cells();
        let counts = crate::monitor::Counts {
            watch: crate::run::settings::MonitorSettings {
                command: "tail\x1b[2J".into(),
                names: vec!["hits".into()],
                regexes: vec!["^hit".into()],
                settle: 0.1,
            },
            per_run: vec![vec![vec![1.0, 3.0]], vec![vec![5.0, 7.0]]],
            ended: None,
        };
        let report = Report {
            monitor: Some(&counts),
            ..f.report()
        };
        let text = render(&report, PLAIN, Wording::Cmdscope);
        let at = text.find("\nMonitor '").expect("monitor section");
        assert!(at > text.find("Summary").unwrap());
        assert!(text.contains("  monitor_hits: 2 vs 6 (median)\n"), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
        // In each benchmark's block too, as its other metrics are.
        let blocks: Vec<&str> = text.split("Benchmark ").skip(1).collect();
        assert!(
            blocks[0].contains("\n  Monitor (median):     2 monitor_hits\n"),
            "{text}"
        );
        assert!(
            blocks[1].contains("\n  Monitor (median):     6 monitor_hits\n"),
            "{text}"
        );
        // Without a monitor, no such line.
        assert!(!render(&f.report(), PLAIN, Wording::Cmdscope).contains("Monitor (median)"));
    }

    #[test]
    fn a_suite_benchmark_is_announced_with_its_place_in_the_partition() {
        assert_eq!(
            suite_benchmark("sort", 1, 0, 3, "2/4"),
            "== sort (1 cell; benchmark 1 of 3 in partition 2/4)\n"
        );
        assert_eq!(
            suite_benchmark("grep", 4, 2, 3, "1/1"),
            "== grep (4 cells; benchmark 3 of 3 in partition 1/1)\n"
        );
    }
}
