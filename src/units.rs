//! Human-readable quantities: times, sizes and counts for terminal output.

use crate::metrics::Unit;

pub fn time(seconds: f64) -> String {
    let s = seconds.abs();
    let (v, unit) = if s == 0.0 {
        (0.0, "s")
    } else if s < 1e-6 {
        (seconds * 1e9, "ns")
    } else if s < 1e-3 {
        (seconds * 1e6, "µs")
    } else if s < 1.0 {
        (seconds * 1e3, "ms")
    } else {
        (seconds, "s")
    };
    format!("{} {unit}", sig(v))
}

pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v.abs() >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{} {}", sig(v), UNITS[i])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_units() {
        assert_eq!(time(0.1012), "101.2 ms");
        assert_eq!(time(2.5e-4), "250.0 µs");
        assert_eq!(time(3.0), "3.000 s");
        assert_eq!(time(5e-8), "50.00 ns");
        assert_eq!(bytes(100.0 * 1024.0 * 1024.0), "100.0 MiB");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(count(78.0), "78");
        assert_eq!(count(12_345.0), "12.35 k");
    }
}
