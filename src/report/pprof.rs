//! pprof's profile.proto of one cell of `explain --profile`, gzipped:
//! the protocol buffer encoding (by hand) and the locations of a stack
//! with the functions inlined there; and what a profile's stacks weigh in
//! every file (`report::profile`'s folded stacks and flame graphs too).
//! Formatting only, as `report::profile`.

use std::collections::HashMap;
use std::io::Write;

use crate::error::{Error, Result};
use crate::profile::{self, CellProfile, Profile};

/// What a profile's stacks weigh and how files write it: sampled seconds
/// in microseconds (pprof: nanoseconds), counted instructions as they are.
pub(super) struct Weight {
    /// Per unit of the stacks' weight, in the files' unit.
    pub(super) folded_scale: f64,
    pub(super) pprof_scale: f64,
    /// The flame graphs' count name, pprof's sample type and unit.
    pub(super) count_name: &'static str,
    pub(super) pprof_type: (&'static str, &'static str),
    /// "CPU time", "instructions": what a cell's flame graph shows.
    pub(super) what: &'static str,
}

pub(super) fn weight(p: &Profile) -> Weight {
    if p.simulation.is_some() {
        Weight {
            folded_scale: 1.0,
            pprof_scale: 1.0,
            count_name: "instructions per run",
            pprof_type: ("instructions", "count"),
            what: "instructions",
        }
    } else {
        Weight {
            folded_scale: 1e6,
            pprof_scale: 1e9,
            count_name: "µs per run",
            pprof_type: ("cpu", "nanoseconds"),
            what: "CPU time",
        }
    }
}

/// Protocol buffer encoding, written by hand: pprof's profile.proto needs
/// five message types and two wire types, less code than a protobuf
/// crate's build step.
#[derive(Default)]
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn uint(&mut self, field: u64, v: u64) {
        self.varint(field << 3);
        self.varint(v);
    }
    fn bytes(&mut self, field: u64, b: &[u8]) {
        self.varint((field << 3) | 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn packed(&mut self, field: u64, vs: &[u64]) {
        let mut inner = Pb::default();
        for &v in vs {
            inner.varint(v);
        }
        self.bytes(field, &inner.0);
    }
}

/// A stack's locations, leaf first: each the function the code is in,
/// preceded by those inlined into it there (innermost first), as pprof's
/// Location lists its Lines.
fn locations(stack: &[u32]) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut inlined: Vec<u32> = Vec::new();
    for &id in stack.iter().rev() {
        inlined.push(profile::function_id(id));
        if !profile::is_inlined(id) {
            out.push(std::mem::take(&mut inlined));
        }
    }
    // Inlined frames with no caller left (a truncated stack) stand alone.
    if !inlined.is_empty() {
        out.push(inlined);
    }
    out
}

/// pprof's profile.proto of one cell, gzipped: CPU nanoseconds per run by
/// stack; a location per address's function with the functions inlined
/// there as its first lines.
pub fn pprof(p: &Profile, c: &CellProfile) -> Result<Vec<u8>> {
    let mut strings: Vec<String> = vec![String::new()];
    let mut index: HashMap<String, u64> = HashMap::new();
    let mut s = |x: &str| -> u64 {
        if let Some(&i) = index.get(x) {
            return i;
        }
        strings.push(x.to_string());
        index.insert(x.to_string(), strings.len() as u64 - 1);
        strings.len() as u64 - 1
    };
    let unit = weight(p);
    let mut prof = Pb::default();
    // sample_type = 1, period_type = 11: ValueType { type = 1, unit = 2 }.
    let mut vt = Pb::default();
    vt.uint(1, s(unit.pprof_type.0));
    vt.uint(2, s(unit.pprof_type.1));
    prof.bytes(1, &vt.0);
    let mut location_ids: HashMap<Vec<u32>, u64> = HashMap::new();
    let mut location_list: Vec<Vec<u32>> = Vec::new();
    let mut stacks: Vec<(Vec<u32>, f64)> = c.stacks_per_run().into_iter().collect();
    stacks.sort_by(|a, b| a.0.cmp(&b.0));
    for (stack, w) in &stacks {
        // Sample = 2: location_id = 1 (leaf first), value = 2.
        let mut sample = Pb::default();
        let ids: Vec<u64> = locations(stack)
            .into_iter()
            .map(|lines| {
                *location_ids.entry(lines.clone()).or_insert_with(|| {
                    location_list.push(lines);
                    location_list.len() as u64
                })
            })
            .collect();
        sample.packed(1, &ids);
        sample.packed(2, &[(w * unit.pprof_scale).round() as u64]);
        prof.bytes(2, &sample.0);
    }
    let mut used: Vec<u32> = Vec::new();
    for (i, lines) in location_list.iter().enumerate() {
        // Location = 4: id = 1, line = 4 { function_id = 1 }, innermost first.
        let mut loc = Pb::default();
        loc.uint(1, i as u64 + 1);
        for &f in lines {
            let mut line = Pb::default();
            line.uint(1, f as u64 + 1);
            loc.bytes(4, &line.0);
            used.push(f);
        }
        prof.bytes(4, &loc.0);
    }
    used.sort_unstable();
    used.dedup();
    for &f in &used {
        let fr = p.frame(f);
        // Function = 5: id = 1, name = 2, system_name = 3, filename = 4.
        let mut func = Pb::default();
        func.uint(1, f as u64 + 1);
        let name = s(&fr.function);
        func.uint(2, name);
        func.uint(3, name);
        func.uint(4, s(fr.file.as_deref().unwrap_or(&fr.module)));
        prof.bytes(5, &func.0);
    }
    // Counted: every instruction is one.
    let period = if p.simulation.is_some() {
        1
    } else {
        (1e9 / p.frequency as f64).round() as u64
    };
    let comment = s(&format!(
        "cmdscope explain --profile: {}, {} per run averaged over {} runs",
        c.name,
        unit.what,
        c.runs.len()
    ));
    // period_type = 11, period = 12, comment = 13.
    let mut pt = Pb::default();
    pt.uint(1, s(unit.pprof_type.0));
    pt.uint(2, s(unit.pprof_type.1));
    prof.bytes(11, &pt.0);
    prof.uint(12, period);
    prof.uint(13, comment);
    // string_table = 6.
    for x in &strings {
        prof.bytes(6, x.as_bytes());
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&prof.0).map_err(Error::Io)?;
    gz.finish().map_err(Error::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_protobufs() {
        let mut pb = Pb::default();
        pb.varint(300);
        assert_eq!(pb.0, vec![0xac, 0x02]);
        let mut pb = Pb::default();
        pb.uint(1, 150);
        assert_eq!(pb.0, vec![0x08, 0x96, 0x01]);
    }

    #[test]
    fn a_location_holds_its_inlined_functions_innermost_first() {
        use crate::profile::INLINED;
        // main → fill → operator[] (inlined) → lower_bound (inlined), and
        // a truncated stack that starts inside inlined code.
        let stack = [1, 2, 3 | INLINED, 4 | INLINED];
        assert_eq!(locations(&stack), vec![vec![4, 3, 2], vec![1]]);
        assert_eq!(locations(&[5 | INLINED]), vec![vec![5]]);
        assert_eq!(locations(&[1, 2]), vec![vec![2], vec![1]]);
    }
}
