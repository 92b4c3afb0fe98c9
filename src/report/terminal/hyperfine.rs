//! `cmdscope hyperfine`'s words for the terminal report: hyperfine
//! 1.20.0's block per benchmark and its summary, line for line and in its
//! colours, for scripts that read hyperfine's output.

use std::fmt::Write;

use super::{escape_line, median_line, zero_mean, Part};
use crate::analysis::RelativeMean;
use crate::metrics::Metric;
use crate::report::paint::Paint;
use crate::report::Report;
use crate::units;

/// The first line of benchmark `i`'s block, named `name`, as hyperfine
/// prints it when the benchmark begins.
pub fn hyperfine_header(i: usize, name: &str, paint: Paint) -> String {
    format!(
        "{}{}: {}\n",
        paint.bold("Benchmark "),
        paint.bold(&(i + 1).to_string()),
        escape_line(name)
    )
}

/// One benchmark as hyperfine 1.20.0 prints it (its `Benchmark::run`)
/// below its header, line for line and in its colours: the mean and standard deviation with
/// user and system time (the `abs ≡` form for a single run), the range,
/// with `details` the lines of [`super::details`], its warnings in its words
/// (`warning::hyperfine_words`; those without a counterpart only with
/// `details`, but for what a cmdscope flag did), returned for standard
/// error. Every time in the mean's unit, in hyperfine's format
/// (`units::hyperfine_time`).
fn hyperfine_block(
    out: &mut String,
    report: &Report,
    i: usize,
    paint: Paint,
    details: bool,
    warmup: bool,
) -> Option<String> {
    let (r, a) = (&report.session.results[i], &report.analyses[i]);
    let mut warnings: Vec<String> = Vec::new();
    if let Some(w) = a.get(Metric::WallTime) {
        let s = &w.summary;
        let (mean, unit) = units::hyperfine_time(s.mean, units::forced_scale());
        let t = |v: f64| units::hyperfine_time(v, Some(unit)).0;
        let cpu = |m: Metric| t(a.get(m).map_or(f64::NAN, |m| m.summary.mean));
        let (user, system) = (
            paint.blue(&cpu(Metric::UserTime)),
            paint.blue(&cpu(Metric::SystemTime)),
        );
        if a.runs == 1 {
            let _ = writeln!(
                out,
                "  Time ({} ≡):        {}  {:>8}     [User: {user}, System: {system}]",
                paint.bold_green("abs"),
                paint.bold_green(&format!("{mean:>8}")),
                ""
            );
        } else {
            let _ = writeln!(
                out,
                "  Time ({} ± {}):     {} ± {}    [User: {user}, System: {system}]",
                paint.bold_green("mean"),
                paint.green("σ"),
                paint.bold_green(&format!("{mean:>8}")),
                paint.green(&format!("{:>8}", t(s.stddev)))
            );
            let _ = writeln!(
                out,
                "  Range ({} … {}):   {} … {}    {}",
                paint.cyan("min"),
                paint.purple("max"),
                paint.cyan(&format!("{:>8}", t(s.min))),
                paint.purple(&format!("{:>8}", t(s.max))),
                paint.dim(&format!("{} runs", a.runs))
            );
        }
        if details {
            median_line(out, w, paint);
            super::details(out, report, i, paint, w);
        }
        let first_run = r
            .samples
            .first()
            .and_then(|x| x.get(Metric::WallTime))
            .unwrap_or(f64::NAN);
        let hints = crate::report::warning::HyperfineHints {
            warmup,
            prepare: r.cell.hooks.prepare.is_some(),
        };
        for warning in &a.warnings {
            match crate::report::warning::hyperfine_words(warning, first_run, hints) {
                Some(words) => warnings.push(words),
                None if details || crate::report::warning::from_cmdscope_flag(warning) => {
                    warnings.push(crate::report::warning::line(warning))
                }
                None => {}
            }
        }
    } else {
        // The reason (every run timed out, failed) must not be lost.
        let _ = writeln!(out, "  no completed runs");
        warnings.extend(a.warnings.iter().map(crate::report::warning::line));
    }
    // To standard error, as hyperfine writes them, after a line of one
    // blank as its.
    (!warnings.is_empty()).then(|| {
        warnings.iter().fold(" \n".to_string(), |mut text, w| {
            let _ = writeln!(text, "  {}: {w}", paint.yellow("Warning"));
            text
        })
    })
}

/// Benchmark `i` as hyperfine prints it as it ends: its block (with `header`
/// its first line, [`hyperfine_header`]) on standard output, its warnings on
/// standard error, then the line of one blank that ends the block.
pub fn hyperfine_parts(
    report: &Report,
    i: usize,
    paint: Paint,
    details: bool,
    warmup: bool,
    header: bool,
) -> Vec<Part> {
    let mut out = String::new();
    if header {
        out.push_str(&hyperfine_header(
            i,
            &report.session.results[i].cell.name,
            paint,
        ));
    }
    let mut parts = Vec::new();
    if let Some(warnings) = hyperfine_block(&mut out, report, i, paint, details, warmup) {
        parts.push(Part {
            text: std::mem::take(&mut out),
            stderr: false,
        });
        parts.push(Part {
            text: warnings,
            stderr: true,
        });
    }
    out.push_str(" \n");
    parts.push(Part {
        text: out,
        stderr: false,
    });
    parts
}

/// hyperfine's summary of mean times: relative to `--reference`, else to
/// the fastest (`analysis::relative_means`), each ratio at least 1 with
/// its propagated error, the others by mean time; with `by_command`, its
/// relative-speed table in the commands' order. Nothing when a mean is
/// zero ([`super::zero_note`] says why).
pub(super) fn hyperfine_summary(out: &mut String, report: &Report, by_command: bool, paint: Paint) {
    if zero_mean(report) {
        return;
    }
    let relative = crate::analysis::relative_means(report.analyses, report.named_reference);
    let mean = |i: usize| {
        report.analyses[i]
            .get(Metric::WallTime)
            .map_or(f64::NAN, |m| m.summary.mean)
    };
    let name = |i: usize| escape_line(&report.session.results[i].cell.name);
    let mut rows: Vec<(usize, RelativeMean)> = relative
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|r| (i, r)))
        .collect();
    let Some(&(reference, _)) = rows
        .iter()
        .find(|(_, r)| matches!(r, RelativeMean::Reference))
    else {
        return;
    };
    if rows.len() < 2 {
        return;
    }
    // hyperfine's ratio is never below 1: a command faster than the
    // reference shows the reference's mean over its own, the error scaled
    // with it.
    let at_least_one = |r: RelativeMean| match r {
        RelativeMean::Reference => (1.0, None),
        RelativeMean::Ratio { ratio, error } if ratio < 1.0 && ratio > 0.0 => {
            (1.0 / ratio, Some(error / (ratio * ratio)))
        }
        RelativeMean::Ratio { ratio, error } => (ratio, Some(error)),
    };
    // hyperfine has no standard deviation of a single run, so no error
    // for a ratio with one.
    let single = |i: usize| report.analyses[i].runs < 2;
    let sd = |e: Option<f64>, width: usize| match e {
        Some(e) if e.is_finite() => format!(" ± {}", paint.green(&format!("{e:width$.2}"))),
        _ => String::new(),
    };
    if by_command {
        let _ = writeln!(out, "{}", paint.bold("Relative speed comparison"));
        for &(i, r) in &rows {
            let (ratio, error) = at_least_one(r);
            let error = error.filter(|_| !single(i) && !single(reference));
            // " ± " and five characters, or as many blanks.
            let error = match sd(error, 5) {
                e if e.is_empty() => " ".repeat(8),
                e => e,
            };
            let _ = writeln!(
                out,
                "  {}{error}  {}",
                paint.bold_green(&format!("{ratio:10.2}")),
                name(i)
            );
        }
        return;
    }
    rows.sort_by(|a, b| mean(a.0).total_cmp(&mean(b.0)));
    let _ = writeln!(out, "{}", paint.bold("Summary"));
    let _ = writeln!(out, "  {} ran", paint.cyan(&name(reference)));
    for &(i, r) in rows.iter().filter(|(i, _)| *i != reference) {
        let (ratio, error) = at_least_one(r);
        let error = sd(error.filter(|_| !single(i) && !single(reference)), 0);
        let ratio_text = paint.bold_green(&format!("{ratio:8.2}"));
        let comparator = match mean(i).total_cmp(&mean(reference)) {
            std::cmp::Ordering::Less => format!("{ratio_text}{error} times slower than"),
            std::cmp::Ordering::Greater => format!("{ratio_text}{error} times faster than"),
            std::cmp::Ordering::Equal => format!(
                "    As fast ({}{error}) as",
                paint.bold_green(&format!("{ratio:.2}"))
            ),
        };
        let _ = writeln!(out, "{comparator} {}", paint.purple(&name(i)));
    }
}
