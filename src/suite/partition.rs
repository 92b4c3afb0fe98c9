//! Partitions: which cells of a suite one machine runs.
//!
//! A cell's partition depends on nothing but its own key, hashed: adding or
//! removing other cells never moves it, and every cell lands in exactly one
//! of the N partitions. The key is the cell's comparison group (benchmark
//! and parameter values), so the commands compared with each other are
//! measured together, interleaved, on one machine.

use std::fmt;

use crate::error::SuiteError;
use crate::store::machine::fnv1a;

/// Partition K of N, 1 <= K <= N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    pub index: u32,
    pub count: u32,
}

/// Most partitions: far beyond any array job, small enough to list.
pub const MAX_PARTITIONS: u32 = 100_000;

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Partition {
    pub const WHOLE: Partition = Partition { index: 1, count: 1 };

    pub fn new(index: u32, count: u32) -> Result<Partition, SuiteError> {
        if count == 0 || count > MAX_PARTITIONS {
            return Err(SuiteError::PartitionCount {
                max: MAX_PARTITIONS,
                count,
            });
        }
        if index == 0 || index > count {
            return Err(SuiteError::PartitionIndex { index, count });
        }
        Ok(Partition { index, count })
    }

    /// "K/N".
    pub fn parse(text: &str) -> Result<Partition, SuiteError> {
        let bad = || SuiteError::BadPartition(text.into());
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        Partition::new(k, n)
    }

    /// Whether the cell with this key belongs here.
    pub fn contains(&self, key: &str) -> bool {
        of(key, self.count) == self.index
    }
}

/// splitmix64's finaliser: spreads FNV's low bits, which the modulo uses.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The partition (1..=count) of a key.
pub fn of(key: &str, count: u32) -> u32 {
    (mix(fnv1a(key.as_bytes())) % u64::from(count.max(1))) as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("bench-{}\0us={}", i % 7, i))
            .collect()
    }

    #[test]
    fn parses_k_of_n() {
        assert_eq!(
            Partition::parse("2/8").unwrap(),
            Partition { index: 2, count: 8 }
        );
        assert_eq!(Partition::parse(" 1 / 1 ").unwrap(), Partition::WHOLE);
        for bad in ["0/4", "5/4", "1/0", "x/2", "2", "", "-1/3", "1/100001"] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Partition::parse("3/8").unwrap().to_string(), "3/8");
    }

    #[test]
    fn every_key_in_exactly_one_partition() {
        let keys = keys(5000);
        for n in [1u32, 2, 3, 4, 7, 16, 100] {
            let mut sizes = vec![0usize; n as usize];
            for k in &keys {
                let owners: Vec<u32> = (1..=n)
                    .filter(|&i| Partition { index: i, count: n }.contains(k))
                    .collect();
                assert_eq!(owners.len(), 1, "{k} in {owners:?} of {n}");
                sizes[owners[0] as usize - 1] += 1;
            }
            // Roughly even: each within 5 binomial standard deviations.
            let p = 1.0 / f64::from(n);
            let expect = keys.len() as f64 * p;
            let sd = (keys.len() as f64 * p * (1.0 - p)).sqrt();
            for s in sizes {
                assert!(
                    (s as f64 - expect).abs() <= 5.0 * sd + 1.0,
                    "{s} vs {expect} of {n}"
                );
            }
        }
    }
}
