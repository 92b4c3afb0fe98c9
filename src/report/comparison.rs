//! A comparison in words: its note's caveats and advice
//! (`analysis::comparison::Note`), its sentence, and what its noise looked
//! like. The one wording of each: the terminal, the tables, the HTML
//! report and the JSON's `note` all read it from here.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::analysis::comparison::{
    Advice, Caveat, Comparison, Interval, NoiseCause, Note, Per, Scale, SessionVariation, Test,
    Verdict, Way,
};
use crate::analysis::modes::SpeedModes;
use crate::units::{self, format_confidence, format_level, format_p};

use super::Words;

/// What the note of a comparison whose interval leaves out
/// session-to-session variation says (`Caveat::SessionVariationLeftOut`).
pub const SESSION_NOTE: &str = "session-to-session variation is not in the interval";

/// The note's caveats, joined by "; ".
impl fmt::Display for Words<'_, Note> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0 .0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}", Words(c))?;
        }
        Ok(())
    }
}

/// Exported as its words: the JSON's `note` is the sentence users read.
impl Serialize for Words<'_, Note> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A comparison as every JSON document writes it: the engine's fields in
/// the engine's order, with the note in report's words (which is why
/// `analysis` derives no `Serialize` for it).
impl Serialize for Words<'_, Comparison> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // No `..`: a field added to `Comparison` must be placed here.
        let Comparison {
            metric,
            baseline,
            candidate,
            verdict,
            note,
            ratio,
            ratio_ci,
            shift,
            shift_ci,
            p_value,
            level,
            confidence,
            family,
            precision,
            test,
            scale,
            exact,
            n,
            paired,
            counted: _,
            session_variation,
            significant,
            speed_modes,
            lack: _,
        } = self.0;
        JsonComparison {
            metric,
            baseline,
            candidate,
            verdict,
            note: note.as_ref().map(Words),
            ratio,
            ratio_ci,
            shift,
            shift_ci,
            p_value,
            level,
            confidence,
            family,
            precision,
            test,
            scale,
            exact,
            n,
            paired,
            session_variation,
            significant,
            speed_modes: speed_modes.as_ref(),
        }
        .serialize(s)
    }
}

#[derive(Serialize)]
struct JsonComparison<'a> {
    metric: &'a str,
    baseline: &'a str,
    candidate: &'a str,
    verdict: &'a Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<Words<'a, Note>>,
    ratio: &'a f64,
    ratio_ci: &'a [f64; 2],
    shift: &'a f64,
    shift_ci: &'a [f64; 2],
    p_value: &'a f64,
    level: &'a f64,
    confidence: &'a f64,
    family: &'a usize,
    precision: &'a f64,
    test: &'a Test,
    scale: &'a Scale,
    exact: &'a bool,
    n: &'a usize,
    paired: &'a bool,
    session_variation: &'a SessionVariation,
    significant: &'a bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    speed_modes: Option<&'a SpeedModes>,
}

impl fmt::Display for Words<'_, Per> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = self.0;
        if per.paired {
            write!(f, "paired {}", per.counted)
        } else {
            write!(f, "{} per side", per.counted)
        }
    }
}

impl fmt::Display for Words<'_, Interval> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.0;
        let conf = format_confidence(i.confidence);
        if i.of_change {
            write!(f, "{conf} of the change, {}", range(i.bounds))
        } else {
            write!(f, "{conf} {}", range(i.bounds))
        }
    }
}

impl fmt::Display for Words<'_, Caveat> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Caveat::AtFloor => f.write_str("at cmdscope's floor, not comparable"),
            Caveat::TooFew {
                need,
                have,
                per,
                discrete_at: None,
            } => write!(
                f,
                "need at least {need} {} for a verdict, have {have}",
                Words(per)
            ),
            Caveat::TooFew {
                need,
                have,
                per,
                discrete_at: Some(level),
            } => write!(
                f,
                "need at least {need} {} for a verdict on a discrete metric at level {}, have {have}",
                Words(per),
                format_level(*level)
            ),
            Caveat::NoLevel { level } => write!(f, "no verdict at significance level {level}"),
            Caveat::NotFinite => f.write_str("values are not finite numbers"),
            Caveat::NotComputable { test } => {
                write!(f, "the {} cannot be computed on these values", test.name())
            }
            Caveat::IdenticalCounts { n, per } => write!(
                f,
                "identical counts in every run ({n} {}): an exact change, no test",
                Words(per)
            ),
            Caveat::RepeatedCounts {
                n,
                per,
                chance,
                need: None,
            } => write!(
                f,
                "counts that vary between runs repeated in every run ({n} {}): an exact change, a repetition by chance at most {}",
                Words(per),
                trim_pct(*chance)
            ),
            Caveat::RepeatedCounts {
                n,
                per,
                chance,
                need: Some(need),
            } => write!(
                f,
                "counts that vary between runs repeated in every run ({n} {}), which happens by chance up to {} of the time; {need} runs per cell would make it an exact change",
                Words(per),
                trim_pct(*chance)
            ),
            Caveat::BelowPrecision { level, precision } => write!(
                f,
                "the change is significant at {} but smaller than ±{}",
                format_level(*level),
                trim_pct(*precision)
            ),
            Caveat::TooWide {
                interval,
                precision,
                advice,
            } => write!(
                f,
                "the {} is too wide to tell a difference from none within ±{}; {}",
                Words(interval),
                trim_pct(*precision),
                Words(advice)
            ),
            Caveat::NotReached {
                interval,
                level,
                advice,
            } => write!(
                f,
                "the {} suggests a difference, but the test did not reach its level {}; {}",
                Words(interval),
                format_level(*level),
                Words(advice)
            ),
            Caveat::RankDiscreteness { interval, n, unit } => write!(
                f,
                "the test reached its level but the {} includes no change \
                 (the rank statistics' discreteness at {n} {unit}); run longer",
                Words(interval)
            ),
            Caveat::AssumedExact { vary: true } => f.write_str(
                "exact values (assume=exact) vary between runs; compared by their medians",
            ),
            Caveat::AssumedExact { vary: false } => {
                f.write_str("exact values (assume=exact): any change is a change")
            }
            Caveat::SessionVariationLeftOut => f.write_str(SESSION_NOTE),
        }
    }
}

impl fmt::Display for Words<'_, Advice> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Advice::RunLonger { runs, took: None } => write!(f, "run longer with --runs {runs}"),
            Advice::RunLonger {
                runs,
                took: Some(t),
            } => {
                let way = match t.way {
                    Way::UntilDecided => "or --until-decided",
                    Way::LongerMaxTime => "or a longer --max-time",
                };
                write!(
                    f,
                    "run longer with --runs {runs} (about {} of runs at this noise, {way})",
                    units::time(t.seconds)
                )
            }
            Advice::MoreValues { per_cell, counted } => {
                write!(f, "run longer: about {per_cell} {counted} per cell")
            }
            Advice::TooMany { counted } => {
                write!(f, "deciding would take more than 10,000 {counted}")
            }
        }
    }
}

/// The noise's structure in one line ("runs fall into two speeds, 25.1 ms
/// (61 %) and 42.3 ms (39 %): the machine alternates between them; 41 of
/// 400 blocks mixed them and were left out").
pub fn noise_line(cause: NoiseCause) -> String {
    match cause {
        NoiseCause::Busy { cpu_wait } => format!(
            "the machine is busy: some task was waiting for a CPU during {:.0} % of the runs' \
             time (CPU pressure), so wall times are mostly the machine's load",
            (cpu_wait * 100.0).min(100.0)
        ),
        NoiseCause::TwoSpeeds(m) => {
            let share = (m.fast_share * 100.0).round();
            format!(
                "runs fall into two speeds, {} ({share:.0} %) and {} ({:.0} %): the machine \
                 alternates between them; {} of {} blocks mixed them and were left out",
                units::time(m.fast),
                units::time(m.slow),
                100.0 - share,
                m.discordant,
                m.blocks
            )
        }
    }
}

fn range(ci: [f64; 2]) -> String {
    let d = decimals(ci[0], ci[1]);
    format!("{:.d$}–{:.d$}", ci[0], ci[1])
}

/// Enough decimals that an interval's ends differ.
fn decimals(lo: f64, hi: f64) -> usize {
    let w = (hi - lo).abs();
    if w >= 0.02 {
        2
    } else if w >= 0.002 {
        3
    } else {
        4
    }
}

fn trim_pct(p: f64) -> String {
    format!("{} %", units::trimmed(p * 100.0, 3))
}

/// "B is 1.23x faster than A (95 % CI 1.19–1.27, p < 0.001)", and the
/// other outcomes in words.
pub fn sentence(c: &Comparison) -> String {
    let p = format_p(c.p_value);
    let conf = format_confidence(c.confidence);
    let (r, lo, hi) = match c.verdict {
        Verdict::Faster => (1.0 / c.ratio, 1.0 / c.ratio_ci[1], 1.0 / c.ratio_ci[0]),
        _ => (c.ratio, c.ratio_ci[0], c.ratio_ci[1]),
    };
    let d = decimals(lo, hi);
    let ci = if c.exact_change() {
        // Exact values: a known change, no interval and no test.
        "exact".to_string()
    } else {
        format!("{conf} {lo:.d$}–{hi:.d$}, {p}")
    };
    let note = c
        .note
        .as_ref()
        .map(|n| format!(": {}", Words(n)))
        .unwrap_or_default();
    if !c.ratio.is_finite() && c.shift.is_finite() {
        // No ratio without a positive baseline: the change in the unit.
        let d = decimals(c.shift_ci[0], c.shift_ci[1]);
        let change = format!(
            "change {:+.d$}, {conf} {:+.d$}–{:+.d$}, {p}",
            c.shift, c.shift_ci[0], c.shift_ci[1]
        );
        let (a, b) = (&c.candidate, &c.baseline);
        return match c.verdict {
            Verdict::Faster | Verdict::Slower => {
                format!("'{a}' is {} than '{b}' ({change}){note}", c.verdict.words())
            }
            v => format!("'{a}' and '{b}': {} ({change}){note}", v.words()),
        };
    }
    match c.verdict {
        Verdict::Faster => format!(
            "'{}' is {r:.d$}x faster than '{}' ({ci}){note}",
            c.candidate, c.baseline
        ),
        Verdict::Slower => format!(
            "'{}' is {r:.d$}x slower than '{}' ({ci}){note}",
            c.candidate, c.baseline
        ),
        Verdict::NoDifference => format!(
            "'{}' and '{}': no difference beyond ±{} (ratio {r:.d$}, {ci}){note}",
            c.candidate,
            c.baseline,
            trim_pct(c.precision)
        ),
        Verdict::Inconclusive if c.p_value.is_finite() => format!(
            "'{}' and '{}': inconclusive (ratio {r:.d$}, {ci}){note}",
            c.candidate, c.baseline
        ),
        Verdict::Inconclusive if c.ratio.is_finite() => format!(
            "'{}' and '{}': inconclusive (ratio of the medians {:.2}, no interval){note}",
            c.candidate, c.baseline, c.ratio
        ),
        Verdict::Inconclusive => {
            format!("'{}' and '{}': inconclusive{note}", c.candidate, c.baseline)
        }
        Verdict::NotComparable => format!(
            "'{}' and '{}': not comparable{note}",
            c.candidate, c.baseline
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::comparison::{compare_values, Design, Settings};

    /// Simulated counts repeated 2 runs a side, +0.5 % apart: decided by
    /// a ±0.1 % precision band, and said with four decimals.
    #[test]
    fn a_small_exact_change_is_said_to_four_decimals() {
        use crate::metrics::Metric;
        let sim = Settings::for_metric(Metric::SimEstimatedCycles, 0.05, 1, 0.001, None);
        let (a, half) = (vec![1_000_000.0; 2], vec![1_005_000.0; 2]);
        for design in [Design::Paired, Design::Unpaired] {
            let seen = compare_values(&a, &half, design, &sim);
            assert!(
                sentence(&seen).contains("1.0050x slower"),
                "{}",
                sentence(&seen)
            );
        }
    }

    #[test]
    fn the_noise_line_names_both_speeds_and_the_blocks_left_out() {
        let m = crate::analysis::modes::SpeedModes {
            threshold: 0.03,
            fast: 0.025,
            slow: 0.042,
            fast_share: 0.5,
            separation: 3.0,
            discordant: 41,
            blocks: 400,
        };
        let line = noise_line(NoiseCause::TwoSpeeds(m));
        let speeds = format!(
            "runs fall into two speeds, {} (",
            crate::units::time(m.fast)
        );
        assert!(line.starts_with(&speeds), "{line}");
        assert!(
            line.contains(&format!(" and {} (", crate::units::time(m.slow))),
            "{line}"
        );
        assert!(
            line.ends_with("41 of 400 blocks mixed them and were left out"),
            "{line}"
        );
    }

    #[test]
    fn sentences() {
        let s = Settings::new(0.05, 0.01);
        let c = compare_values(&[1.0; 10], &[2.0; 10], Design::Paired, &s).named(
            "time_wall_clock",
            "a",
            "b",
        );
        assert_eq!(
            sentence(&c),
            "'b' is 2.0000x slower than 'a' (95 % CI 2.0000–2.0000, p = 0.002)"
        );
        // A zero baseline has no ratio: the change is spoken of instead.
        let c = compare_values(&[0.0; 10], &[3.0; 10], Design::Paired, &s).named(
            "page_faults_major",
            "a",
            "b",
        );
        assert_eq!(
            sentence(&c),
            "'b' is slower than 'a' (change +3.0000, 95 % CI +3.0000–+3.0000, p = 0.002)"
        );
        let c = compare_values(&[1.0, 2.0], &[1.0, 2.0], Design::Paired, &s).named(
            "time_wall_clock",
            "a",
            "b",
        );
        assert_eq!(
            sentence(&c),
            "'b' and 'a': inconclusive (ratio of the medians 1.00, no interval): need at least 3 paired runs for a verdict, have 2"
        );
    }

    #[test]
    fn every_caveat_and_advice_reads_as_the_json_has_it() {
        // The JSON's note is these words: users parse them.
        let per = Per {
            paired: false,
            counted: "runs",
        };
        let interval = Interval {
            confidence: 0.95,
            bounds: [0.98, 1.07],
            of_change: false,
        };
        let advice = Advice::RunLonger {
            runs: 700,
            took: Some(crate::analysis::comparison::Took {
                seconds: 52.0,
                way: Way::UntilDecided,
            }),
        };
        let note = Note(vec![
            Caveat::TooWide {
                interval,
                precision: 0.01,
                advice,
            },
            Caveat::SessionVariationLeftOut,
        ]);
        assert_eq!(
            serde_json::to_value(Words(&note)).unwrap(),
            serde_json::Value::String(format!(
                "the 95 % CI 0.98–1.07 is too wide to tell a difference from none within ±1 %; \
                 run longer with --runs 700 (about {} of runs at this noise, or \
                 --until-decided); session-to-session variation is not in the interval",
                units::time(52.0)
            ))
        );
        let counts = Caveat::TooFew {
            need: 6,
            have: 5,
            per,
            discrete_at: Some(0.05),
        };
        assert_eq!(
            Words(&counts).to_string(),
            "need at least 6 runs per side for a verdict on a discrete metric at level 0.05, have 5"
        );
        assert_eq!(
            Words(&Advice::TooMany { counted: "batches" }).to_string(),
            "deciding would take more than 10,000 batches"
        );
    }
}
