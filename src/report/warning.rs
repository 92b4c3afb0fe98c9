//! A benchmark's warnings in words (`analysis::warning::Warning`): the
//! one wording the terminal and the JSON's `warnings` read.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::analysis::warning::{DriftEffect, End, Warning};
use crate::exec::simulate::Varies;
use crate::output::escape_line;
use crate::units;

use super::Words;

/// Exported as its words, as the terminal prints it.
impl Serialize for Words<'_, Warning> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A warning as one line of the terminal, its untrusted names escaped.
pub fn line(w: &Warning) -> String {
    escape_line(&Words(w).to_string())
}

/// "" for one, `many` otherwise.
fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

impl fmt::Display for Words<'_, Warning> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Warning::ColdFirstRun { name, ratio } => write!(
                f,
                "The first run of '{name}' took {ratio:.1}x the median: caches were probably cold. \
                 Try --warmup 3, or --prepare to make every run cold."
            ),
            Warning::Outliers { name, count, runs } => write!(
                f,
                "{count} of {runs} runs of '{name}' {} (robust z-score > 3.5, more than 10 % \
                 and 1 ms from the median): something else may have been running. The median \
                 and its interval are robust to them.",
                plural(*count, "is an outlier", "are outliers")
            ),
            Warning::UnderShell { name, shell } => write!(
                f,
                "'{name}' takes less than a tenth of the shell's start-up ({}), which was \
                 subtracted: the result is mostly noise. Run it without a shell (-N) if it \
                 does not need one.",
                units::time(*shell)
            ),
            Warning::UnderFiveMs { name, runs } => write!(
                f,
                "{runs} run{} of '{name}' took under 5 ms once the shell's start-up was \
                 subtracted, which is within the precision of that subtraction. Run it without \
                 a shell (-N) if it does not need one.",
                plural(*runs, "", "s")
            ),
            Warning::TooShort { name } => write!(
                f,
                "'{name}' ran for under 50 µs: that is mostly process creation, not the command."
            ),
            Warning::Failed {
                name,
                failed,
                runs,
                ends,
            } => {
                let mut codes: Vec<String> = ends
                    .iter()
                    .map(|e| match e {
                        End::Status(c) => c.to_string(),
                        End::Signal(sig) => format!("signal {sig}"),
                        End::Unknown => "?".into(),
                    })
                    .collect();
                codes.sort();
                codes.dedup();
                write!(
                    f,
                    "{failed} of {runs} runs of '{name}' did not exit with status 0 ({}).",
                    codes.join(", ")
                )
            }
            Warning::Removed { name, count } => write!(
                f,
                "{count} outlier run{} of '{name}' {} left out of the statistics (--remove-outliers).",
                plural(*count, "", "s"),
                plural(*count, "was", "were")
            ),
            Warning::TimedOut { name, count, after } => write!(
                f,
                "{count} run{} of '{name}' timed out after {} and {} killed; {} left out of the statistics.",
                plural(*count, "", "s"),
                units::time(*after),
                plural(*count, "was", "were"),
                plural(*count, "it is", "they are")
            ),
            Warning::Leftovers { name, processes } => write!(
                f,
                "Runs of '{name}' left {processes} process{} running (daemons or background jobs); \
                 each was killed when the run that started it ended.",
                plural(*processes, "", "es")
            ),
            Warning::Trend {
                name,
                change,
                effect,
            } => {
                if *change > 0.0 {
                    write!(
                        f,
                        "Runs of '{name}' got {:.0} % slower over time (thermal throttling or background load?).",
                        change * 100.0
                    )?;
                } else {
                    write!(
                        f,
                        "Runs of '{name}' got {:.0} % faster over time (caches warming up, or load going away?).",
                        -change * 100.0
                    )?;
                }
                f.write_str(drift_effect(*effect))
            }
            Warning::FastStart {
                name,
                runs,
                faster,
                effect,
            } => write!(
                f,
                "{runs} of the first 5 runs of '{name}' were {:.0} % faster than the median and than every later run (turbo boost before the machine warmed up?).{}",
                faster * 100.0,
                drift_effect(*effect)
            ),
            Warning::CountsVary {
                name,
                metric,
                spread,
                cause,
            } => {
                write!(
                    f,
                    "The simulated counts of '{name}' differ between runs ({metric} by up to {} %): ",
                    units::significant(spread * 100.0, 2)
                )?;
                match cause {
                    Some(Varies::PythonHashSeed) => f.write_str(
                        "it runs Python with no PYTHONHASHSEED, whose randomised string hashes \
                         change its work from run to run. Fix the seed with --env \
                         PYTHONHASHSEED=0 (in a suite file, env = { PYTHONHASHSEED = \"0\" }) \
                         for counts that (nearly) repeat.",
                    ),
                    None => f.write_str(
                        "the command does not do the same work every run (threads, the time, \
                         a random seed, the files it reads). They are compared with the rank \
                         test, which needs more runs than identical counts.",
                    ),
                }
            }
        }
    }
}

/// What a drift means for the comparison, said after it.
fn drift_effect(effect: DriftEffect) -> &'static str {
    match effect {
        DriftEffect::Alone => "",
        DriftEffect::Interleaved => " Runs were interleaved, so every command saw the same drift and the comparison stays fair, though its interval is wider.",
        DriftEffect::Sequential => " With --order sequential this biases the comparison: commands run later see a different machine. Run interleaved (the default).",
    }
}

/// What changes the hints of hyperfine's warnings: whether `--warmup`
/// and `--prepare` were used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HyperfineHints {
    pub warmup: bool,
    pub prepare: bool,
}

/// A warning in hyperfine 1.20.0's words (its `Warnings`), for
/// `cmdscope hyperfine`, whose users' scripts may match on them; None for
/// one hyperfine has no counterpart for. `first_run`: the first measured
/// run's wall time, which hyperfine's slow-first-run warning shows.
pub fn hyperfine_words(w: &Warning, first_run: f64, hints: HyperfineHints) -> Option<String> {
    Some(match w {
        Warning::UnderShell { .. } | Warning::UnderFiveMs { .. } => {
            "Command took less than 5 ms to complete. Note that the \
             results might be inaccurate because hyperfine can not calibrate the shell startup \
             time much more precise than this limit. You can try to use the `-N`/`--shell=none` \
             option to disable the shell completely."
                .into()
        }
        Warning::Failed { .. } => "Ignoring non-zero exit code.".into(),
        Warning::ColdFirstRun { .. } => {
            format!(
            "The first benchmarking run for this command was significantly slower than the rest \
             ({}). This could be caused by (filesystem) caches that were not filled until after \
             the first run. {}",
            units::hyperfine_time(first_run, None).0,
            match (hints.warmup, hints.prepare) {
                (true, true) => "You are already using both the '--warmup' option as well as the \
                     '--prepare' option. Consider re-running the benchmark on a quiet system. \
                     Maybe it was a random outlier. Alternatively, consider increasing the warmup \
                     count.",
                (true, false) => "You are already using the '--warmup' option which helps to \
                     fill these caches before the actual benchmark. You can either try to \
                     increase the warmup count further or re-run this benchmark on a quiet \
                     system in case it was a random outlier. Alternatively, consider using the \
                     '--prepare' option to clear the caches before each timing run.",
                (false, true) => "You are already using the '--prepare' option which can be \
                     used to clear caches. If you did not use a cache-clearing command with \
                     '--prepare', you can either try that or consider using the '--warmup' \
                     option to fill those caches before the actual benchmark.",
                (false, false) => "You should consider using the '--warmup' option to fill \
                     those caches before the actual benchmark. Alternatively, use the \
                     '--prepare' option to clear the caches before each timing run.",
            }
        )
        }
        Warning::Outliers { .. } => format!(
            "Statistical outliers were detected. Consider re-running this benchmark on a quiet \
             system without any interferences from other programs.{}",
            if hints.warmup && hints.prepare {
                ""
            } else {
                " It might help to use the '--warmup' or '--prepare' options."
            }
        ),
        Warning::TooShort { .. }
        | Warning::Removed { .. }
        | Warning::TimedOut { .. }
        | Warning::Leftovers { .. }
        | Warning::Trend { .. }
        | Warning::FastStart { .. }
        | Warning::CountsVary { .. } => return None,
    })
}

/// Whether a warning without hyperfine's counterpart reports what a flag
/// hyperfine lacks did (`--remove-outliers`, `--timeout`): `cmdscope
/// hyperfine` says it whenever it happens, the others only with
/// `--cmdscope-details`.
pub fn from_cmdscope_flag(w: &Warning) -> bool {
    matches!(w, Warning::Removed { .. } | Warning::TimedOut { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drift's words: its size, its direction and what it means for the
    /// comparison (`analysis::drift` finds it, typed).
    #[test]
    fn drifts_are_worded_with_their_size_and_effect() {
        let trend = |change, effect| {
            Words(&Warning::Trend {
                name: "x".into(),
                change,
                effect,
            })
            .to_string()
        };
        let w = trend(0.06, DriftEffect::Interleaved);
        assert!(w.contains("'x' got 6 % slower over time"), "{w}");
        assert!(w.contains("comparison stays fair"), "{w}");
        let w = trend(0.06, DriftEffect::Sequential);
        assert!(w.contains("biases the comparison"), "{w}");
        let w = trend(-0.03, DriftEffect::Alone);
        assert!(
            w.ends_with("got 3 % faster over time (caches warming up, or load going away?)."),
            "{w}"
        );
        let w = Words(&Warning::FastStart {
            name: "x".into(),
            runs: 3,
            faster: 0.08,
            effect: DriftEffect::Interleaved,
        })
        .to_string();
        assert!(
            w.starts_with("3 of the first 5 runs of 'x' were 8 % faster"),
            "{w}"
        );
    }
}
