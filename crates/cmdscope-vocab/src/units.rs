//! Human-readable quantities: times, sizes and counts for terminal output,
//! and the number formats of a comparison (its p-value, level and
//! confidence).

use crate::metrics::Unit;

/// A unit of time for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeScale {
    Nanosecond,
    Microsecond,
    Millisecond,
    Second,
}

impl TimeScale {
    fn factor_and_symbol(self) -> (f64, &'static str) {
        match self {
            TimeScale::Nanosecond => (1e9, "ns"),
            TimeScale::Microsecond => (1e6, "µs"),
            TimeScale::Millisecond => (1e3, "ms"),
            TimeScale::Second => (1.0, "s"),
        }
    }

    /// The unit's symbol, for table headers ("Mean [ms]").
    pub fn symbol(self) -> &'static str {
        self.factor_and_symbol().1
    }

    /// The value in this unit, as a number.
    pub fn of(self, seconds: f64) -> f64 {
        seconds * self.factor_and_symbol().0
    }
}

/// `-u/--time-unit`: one unit for every time shown, set once at start-up.
static FORCED_SCALE: std::sync::OnceLock<TimeScale> = std::sync::OnceLock::new();

/// Shows every time in `scale` from now on (`-u/--time-unit`).
pub fn force_time_scale(scale: TimeScale) {
    let _ = FORCED_SCALE.set(scale);
}

/// The unit `-u/--time-unit` forced, if any.
pub fn forced_scale() -> Option<TimeScale> {
    FORCED_SCALE.get().copied()
}

/// The unit a time is shown in: the forced one, or the one that fits it.
pub fn scale_for(seconds: f64) -> TimeScale {
    FORCED_SCALE
        .get()
        .copied()
        .unwrap_or_else(|| fitting_scale(seconds))
}

/// The unit that fits a time, whatever `-u` forced.
fn fitting_scale(seconds: f64) -> TimeScale {
    let s = seconds.abs();
    if s == 0.0 || !s.is_finite() || s >= 1.0 {
        TimeScale::Second
    } else if s < 1e-6 {
        TimeScale::Nanosecond
    } else if s < 1e-3 {
        TimeScale::Microsecond
    } else {
        TimeScale::Millisecond
    }
}

/// A time in the unit that fits it.
pub fn time(seconds: f64) -> String {
    // Nothing at all reads as such ("0 s", a σ of no variation), not as a
    // rounded measurement ("0.000 s").
    if seconds == 0.0 {
        return format!("0 {}", scale_for(seconds).symbol());
    }
    time_in(seconds, scale_for(seconds))
}

/// A time in a given unit, so that the values of one line share it
/// ("17.84 ms ± 0.01 ms", never "17.84 ms ± 0.000 s").
pub fn time_in(seconds: f64, scale: TimeScale) -> String {
    format!("{} {}", sig(scale.of(seconds)), scale.symbol())
}

/// hyperfine's duration format (its `format_duration_unit`), which
/// `cmdscope hyperfine` prints so that its block reads as hyperfine's:
/// unlike [`time`], the unit comes from the value alone (µs under 1 ms, ms
/// under 1 s, else s; never ns) unless `scale` fixes it, with fixed
/// decimals (3 in seconds, 1 in ms and µs) rather than significant digits.
/// The text and the unit used, which the other times of a block share.
pub fn hyperfine_time(seconds: f64, scale: Option<TimeScale>) -> (String, TimeScale) {
    let scale = match scale {
        // hyperfine has no nanoseconds: its smallest unit is the µs.
        Some(TimeScale::Nanosecond | TimeScale::Microsecond) => TimeScale::Microsecond,
        Some(s) => s,
        None if seconds < 1e-3 => TimeScale::Microsecond,
        None if seconds < 1.0 => TimeScale::Millisecond,
        None => TimeScale::Second,
    };
    let decimals = if scale == TimeScale::Second { 3 } else { 1 };
    (
        format!("{:.decimals$} {}", scale.of(seconds), scale.symbol()),
        scale,
    )
}

/// Bytes in the binary unit that fits them: the value and its symbol.
fn binary_scaled(b: f64) -> (f64, &'static str, bool) {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v.abs() >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    (v, UNITS[i], i == 0)
}

pub fn bytes(b: f64) -> String {
    match binary_scaled(b) {
        (v, unit, true) => format!("{v:.0} {unit}"),
        (v, unit, false) => format!("{} {unit}", sig(v)),
    }
}

pub fn count(c: f64) -> String {
    let a = c.abs();
    if a < 1e4 {
        if c.fract() == 0.0 {
            format!("{c:.0}")
        } else {
            sig(c)
        }
    } else if a < 1e6 {
        format!("{} k", sig(c / 1e3))
    } else if a < 1e9 {
        format!("{} M", sig(c / 1e6))
    } else {
        format!("{} G", sig(c / 1e9))
    }
}

pub fn quantity(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Seconds => time(value),
        Unit::Bytes => bytes(value),
        Unit::Count => count(value),
    }
}

/// Four significant digits at most, without trailing noise.
fn sig(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

// Compact values for `compare`'s benchstat-style columns: no space between
// number and unit ("120.3ms"), four significant digits, and any unit a
// results file brings ("MB/s", "allocs/op"), not only cmdscope's metrics.

/// `x` with at most `decimals` decimals, the trailing zeros dropped: a
/// percentage or a level as a person writes it ("5", "2.5", "97.5").
pub fn trimmed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// `x` with `digits` significant digits (fixed notation).
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).clamp(0, 12) as usize;
    let s = format!("{x:.decimals$}");
    // Rounding may carry into a new digit (999.96 -> "1000.0"): drop one decimal.
    match s.parse::<f64>() {
        Ok(r) if decimals > 0 && r.abs() >= 10f64.powi(mag + 1) => {
            format!("{x:.prec$}", prec = decimals - 1)
        }
        _ => s,
    }
}

/// A value in compact human units: times auto-scaled (ns, µs, ms, s),
/// bytes in KiB/MiB/GiB, counts and other units with k/M/G suffixes.
pub fn compact(x: f64, unit: &str) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    match unit {
        "s" if x == 0.0 => "0s".into(),
        "s" => {
            let scale = fitting_scale(x);
            format!("{}{}", significant(scale.of(x), 4), scale.symbol())
        }
        "B" => match binary_scaled(x) {
            (v, unit, true) => format!("{}{unit}", whole_or_significant(v)),
            (v, unit, false) => format!("{}{unit}", significant(v, 4)),
        },
        // A unit with its own prefix (MB/s) takes no second one: "1967", not "1.967k".
        u if u.starts_with(['k', 'M', 'G', 'T']) => significant(x, 4),
        _ => {
            for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
                if x.abs() >= scale {
                    return format!("{}{suffix}", significant(x / scale, 4));
                }
            }
            whole_or_significant(x)
        }
    }
}

fn whole_or_significant(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        significant(x, 4)
    }
}

// The number formats of a comparison: said by every output that shows
// one, and by the search's reasons.

/// "95 % CI", "97.5 % CI", "99.95 % CI": the interval's real confidence,
/// with two significant digits of its complement, rounded so that it never
/// overstates the confidence.
pub fn format_confidence(confidence: f64) -> String {
    let miss = (1.0 - confidence) * 100.0;
    if !(miss > 0.0 && miss < 100.0) {
        return format!("{:.0} % CI", confidence * 100.0);
    }
    let d = (1 - miss.log10().floor() as i32).clamp(0, 12);
    let scale = 10f64.powi(d);
    let shown = 100.0 - (miss * scale - 1e-6).ceil() / scale;
    format!("{} % CI", trimmed(shown, d as usize))
}

/// A significance level for humans: "0.05", "0.025", "0.0007".
pub fn format_level(a: f64) -> String {
    if a >= 0.01 {
        trimmed(a, 4)
    } else {
        format!("{a:.1e}")
            .parse::<f64>()
            .map_or_else(|_| a.to_string(), |v| format!("{v}"))
    }
}

/// The one p-value format: "p < 0.001", "p = 0.034".
pub fn format_p(p: f64) -> String {
    let bare = format_p_bare(p);
    // "< 0.001" and "n/a" follow the "p" without an "=".
    if bare.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p = {bare}")
    } else {
        format!("p {bare}")
    }
}

/// The p-value as a table column shows it, without the "p": "< 0.001",
/// "0.034", "n/a".
pub fn format_p_bare(p: f64) -> String {
    if p.is_nan() {
        "n/a".into()
    } else if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_drops_trailing_zeros_only_after_a_point() {
        assert_eq!(trimmed(5.0, 2), "5");
        assert_eq!(trimmed(100.0, 2), "100");
        assert_eq!(trimmed(100.0, 0), "100");
        assert_eq!(trimmed(97.5, 3), "97.5");
        assert_eq!(trimmed(2.345, 2), "2.35");
        assert_eq!(trimmed(0.001, 2), "0");
    }

    #[test]
    fn scales_units() {
        assert_eq!(time(0.1012), "101.2 ms");
        assert_eq!(time(2.5e-4), "250.0 µs");
        assert_eq!(time(3.0), "3.000 s");
        assert_eq!(time(5e-8), "50.00 ns");
        assert_eq!(time(0.0), "0 s");
        assert_eq!(time(1e-12), "0.001 ns");
        assert_eq!(bytes(100.0 * 1024.0 * 1024.0), "100.0 MiB");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(count(78.0), "78");
        assert_eq!(count(12_345.0), "12.35 k");
        assert_eq!(time_in(0.0, scale_for(0.01784)), "0.000 ms");
        assert_eq!(time_in(2.5e-4, TimeScale::Millisecond), "0.250 ms");
    }

    #[test]
    fn hyperfine_times_as_hyperfine_formats_them() {
        // hyperfine 1.20.0's own cases (`test_format_duration_unit_*`).
        let h = |s, u| hyperfine_time(s, u).0;
        assert_eq!(h(1.3, None), "1.300 s");
        assert_eq!(h(1.0, None), "1.000 s");
        assert_eq!(h(0.999, None), "999.0 ms");
        assert_eq!(h(0.0005, None), "500.0 µs");
        assert_eq!(h(0.0, None), "0.0 µs");
        assert_eq!(h(1000.0, None), "1000.000 s");
        assert_eq!(h(1.3, Some(TimeScale::Millisecond)), "1300.0 ms");
        assert_eq!(h(1.3, Some(TimeScale::Microsecond)), "1300000.0 µs");
        assert_eq!(h(2e-7, Some(TimeScale::Nanosecond)), "0.2 µs");
        assert_eq!(hyperfine_time(0.0122, None).1, TimeScale::Millisecond);
    }

    #[test]
    fn formats() {
        assert_eq!(format_confidence(0.95), "95 % CI");
        assert_eq!(format_confidence(0.975), "97.5 % CI");
        assert_eq!(format_confidence(1.0 - 0.05 / 19.0), "99.73 % CI");
        assert_eq!(format_confidence(1.0 - 0.0182), "98.1 % CI");
        assert_eq!(format_p(0.0866), "p = 0.087");
        assert_eq!(format_p(0.0001), "p < 0.001");
        assert_eq!(format_p(f64::NAN), "p n/a");
        assert_eq!(format_p_bare(0.0866), "0.087");
        assert_eq!(format_p_bare(0.0001), "< 0.001");
        assert_eq!(format_level(0.025), "0.025");
        assert_eq!(format_level(0.00068), "0.00068");
        assert_eq!(format_level(0.0007), "0.0007");
    }
}
