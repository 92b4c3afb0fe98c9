//! `run --counted`: which counter a counted (deterministic) session uses.
//! Hardware counters where the kernel gives a user-space instruction
//! counter and a short probe finds it exact enough, cachegrind
//! (`exec::simulate`) otherwise; what was chosen and why is stored with
//! the session's settings. The decision is a pure function of the probe's
//! result ([`decide`]), so every case is tested without the hardware; the
//! probe itself is `exec::perf::count_fixed_loop`, which opens the counter
//! as `--counters` opens its counters.

use serde::{Deserialize, Serialize};

use crate::error::{OptionError, Result};
pub use crate::exec::perf::{LoopCount, Probe, PROBE_COUNTS};

/// What `--counted` asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ask {
    /// Hardware counters if exact enough here, the simulator otherwise.
    Auto,
    /// Hardware counters, or an error (exit 2) where there are none.
    Hardware,
    /// cachegrind, as `--simulate`.
    Simulator,
}

impl Ask {
    /// The flag's value as typed.
    pub fn name(self) -> &'static str {
        match self {
            Ask::Auto => "auto",
            Ask::Hardware => "hardware",
            Ask::Simulator => "simulator",
        }
    }

    /// `auto`, `hardware` or `simulator` (a suite file's `counted`).
    pub fn from_name(name: &str) -> Option<Ask> {
        [Ask::Auto, Ask::Hardware, Ask::Simulator]
            .into_iter()
            .find(|a| a.name() == name)
    }
}

/// What counted the session's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The CPU's own counters (user space only), stored under the hardware
    /// metrics' names (`instructions`, `cpu_cycles`, `branch_misses`, ...).
    Hardware,
    /// Valgrind's cachegrind, stored as the `sim_*` metrics.
    Cachegrind,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Hardware => "hardware",
            By::Cachegrind => "cachegrind",
        }
    }
}

/// The choice, stored with the session's settings and shown in its JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counted {
    pub asked: Ask,
    pub by: By,
    /// Why `by` was chosen, in words (what the probe found).
    pub reason: String,
}

/// The largest spread, (largest − smallest) / median, of the probe's counts
/// of one fixed loop for a hardware counter to be exact enough: 0.01 %.
/// A fixed loop executes the same instructions every time; a counter on
/// bare metal adds at most about one per interrupt (a few in a loop of
/// milliseconds, under 0.001 %), while a PMU that a hypervisor virtualises
/// badly (counts carried across guest switches, or multiplexed) adds
/// far more. 0.01 % is a hundredth of the comparisons' default 1 %
/// precision band, so a counter within it cannot make a change of the
/// band's size, nor hide one.
pub const EXACT_SPREAD: f64 = 1e-4;

/// The choice for `asked` given what the probe found (`None`: not probed,
/// as for [`Ask::Simulator`]); an error for [`Ask::Hardware`] where no
/// hardware counter can count.
pub fn decide(asked: Ask, probe: Option<&Probe>) -> Result<Counted> {
    let chosen = |by: By, reason: String| Ok(Counted { asked, by, reason });
    let unusable = match (asked, probe) {
        (Ask::Simulator, _) | (_, None) => {
            return chosen(By::Cachegrind, "the simulator was asked for".into())
        }
        (_, Some(Probe::Missing(why) | Probe::Forbidden(why))) => {
            format!("no usable hardware instruction counter: {why}")
        }
        (_, Some(Probe::Counts(counts))) => match inexact(counts) {
            None => {
                return chosen(
                    By::Hardware,
                    format!(
                        "a fixed loop's instructions repeated within {} in {} counts",
                        percent(spread(counts)),
                        counts.len()
                    ),
                )
            }
            // Asked for by name: the user's choice, with what was found.
            Some(why) if asked == Ask::Hardware => {
                return chosen(By::Hardware, format!("asked for, although {why}"))
            }
            Some(why) => format!("the hardware instruction counter is not exact enough: {why}"),
        },
    };
    match asked {
        Ask::Hardware => Err(OptionError::HardwareCounterUnusable(unusable).into()),
        _ => chosen(By::Cachegrind, unusable),
    }
}

/// Why the probe's counts are not exact enough, or None when they are.
fn inexact(counts: &[LoopCount]) -> Option<String> {
    if counts.len() < 2 {
        return Some("the probe got fewer than 2 counts".into());
    }
    if counts.iter().any(|c| c.running < c.enabled) {
        return Some("it is multiplexed with other counters, so its counts are scaled".into());
    }
    let s = spread(counts);
    (s > EXACT_SPREAD).then(|| {
        format!(
            "a fixed loop's instructions varied by {} in {} counts (the bound is {})",
            percent(s),
            counts.len(),
            percent(EXACT_SPREAD)
        )
    })
}

/// (largest − smallest) / median of the counts; infinite for counts of
/// nothing, which no loop gives.
fn spread(counts: &[LoopCount]) -> f64 {
    let values: Vec<f64> = counts.iter().map(|c| c.instructions as f64).collect();
    crate::stats::relative_range(&values).unwrap_or(f64::INFINITY)
}

fn percent(fraction: f64) -> String {
    format!("{:.4} %", fraction * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(values: &[u64]) -> Probe {
        Probe::Counts(
            values
                .iter()
                .map(|&v| LoopCount {
                    instructions: v,
                    enabled: 1000,
                    running: 1000,
                })
                .collect(),
        )
    }

    #[test]
    fn no_counter_falls_back_to_the_simulator_or_refuses_hardware() {
        let p = Probe::Missing("not available here (no PMU access, e.g. a virtual machine)".into());
        let c = decide(Ask::Auto, Some(&p)).unwrap();
        assert_eq!(c.by, By::Cachegrind);
        assert_eq!(
            c.reason,
            "no usable hardware instruction counter: not available here (no PMU access, e.g. a \
             virtual machine)"
        );
        let e = decide(Ask::Hardware, Some(&p)).unwrap_err();
        assert!(matches!(
            e,
            crate::error::Error::Options(OptionError::HardwareCounterUnusable(_))
        ));
        assert!(e.to_string().starts_with(
            "--counted=hardware: no usable hardware instruction counter: not available"
        ));
    }

    #[test]
    fn paranoid_settings_that_forbid_the_counter_choose_the_simulator() {
        let p = Probe::Forbidden("not permitted (see /proc/sys/kernel/perf_event_paranoid)".into());
        let c = decide(Ask::Auto, Some(&p)).unwrap();
        assert_eq!(c.by, By::Cachegrind);
        assert!(
            c.reason
                .contains("not permitted (see /proc/sys/kernel/perf_event_paranoid)"),
            "{}",
            c.reason
        );
        assert!(decide(Ask::Hardware, Some(&p)).is_err());
    }

    #[test]
    fn a_counter_that_is_not_exact_enough_is_not_chosen() {
        // 5,000,000 instructions give or take 1,000: 0.04 % apart.
        let p = counts(&[5_000_000, 5_000_400, 5_001_000, 4_999_900, 5_000_100]);
        let c = decide(Ask::Auto, Some(&p)).unwrap();
        assert_eq!(c.by, By::Cachegrind);
        assert!(c.reason.contains("not exact enough"), "{}", c.reason);
        assert!(c.reason.contains("0.0220 %"), "{}", c.reason);
        // Asked for by name, it is used, and the reason says what was found.
        let c = decide(Ask::Hardware, Some(&p)).unwrap();
        assert_eq!(c.by, By::Hardware);
        assert!(c.reason.starts_with("asked for, although"), "{}", c.reason);
    }

    #[test]
    fn a_multiplexed_counter_is_not_exact_whatever_its_counts() {
        let mut p = counts(&[5_000_000; 5]);
        if let Probe::Counts(c) = &mut p {
            c[2].running = 600;
        }
        let c = decide(Ask::Auto, Some(&p)).unwrap();
        assert_eq!(c.by, By::Cachegrind);
        assert!(c.reason.contains("multiplexed"), "{}", c.reason);
    }

    #[test]
    fn a_good_counter_is_chosen() {
        // A few instructions apart, as interrupts make them on bare metal.
        let p = counts(&[5_000_012, 5_000_010, 5_000_013, 5_000_011, 5_000_010]);
        let c = decide(Ask::Auto, Some(&p)).unwrap();
        assert_eq!(c.by, By::Hardware);
        assert_eq!(
            c.reason,
            "a fixed loop's instructions repeated within 0.0001 % in 5 counts"
        );
        assert_eq!(decide(Ask::Hardware, Some(&p)).unwrap().by, By::Hardware);
        // Just inside and just outside the bound.
        assert_eq!(
            decide(Ask::Auto, Some(&counts(&[1_000_000, 1_000_100])))
                .unwrap()
                .by,
            By::Hardware
        );
        assert_eq!(
            decide(Ask::Auto, Some(&counts(&[1_000_000, 1_000_102])))
                .unwrap()
                .by,
            By::Cachegrind
        );
    }

    #[test]
    fn the_simulator_asked_for_is_not_probed() {
        let c = decide(Ask::Simulator, None).unwrap();
        assert_eq!(c.by, By::Cachegrind);
        assert_eq!(c.reason, "the simulator was asked for");
    }

    #[test]
    fn asks_round_trip_their_names() {
        for a in [Ask::Auto, Ask::Hardware, Ask::Simulator] {
            assert_eq!(Ask::from_name(a.name()), Some(a));
        }
        assert_eq!(Ask::from_name("perf"), None);
    }
}
