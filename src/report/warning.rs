//! A benchmark's warnings in words (`analysis::warning::Warning`): the
//! one wording the terminal and the JSON's `warnings` read.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::analysis::warning::{DriftEffect, End, Warning};
use crate::units;

/// Exported as its words, as the terminal prints it.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// "" for one, `many` otherwise.
fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
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
