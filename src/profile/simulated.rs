//! `explain --profile --simulate`: every profiled run made under
//! cachegrind (the simulator of `run --simulate`, with its out-files,
//! geometry and cycle model), a cell's profile being the instructions each
//! function executed, read from the out-files' `fl=`/`fn=` blocks. Counts
//! that repeat in every run make each function's difference exact; the
//! one comparison engine decides both kinds (`exact_counts`).
//!
//! Cachegrind counts per function without callers: every "stack" here is
//! one frame, so self and total counts are the same and there is no flame
//! graph to draw.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::exec::signals;
use crate::exec::simulate::{Counts, OutDir, Simulation};
use crate::run::plan::Cell;

use super::{check_run, launch, sampler, Frame, Interner, Options, RunStacks};

/// Runs per cell by default: two runs show whether the counts repeat, and
/// identical counts are decided from two.
pub const DEFAULT_RUNS: usize = 2;

/// One run's simulated counts: the totals of its process tree and the
/// estimated cycles per function (its instructions are the stacks').
#[derive(Clone, Debug, Default)]
pub struct RunCounts {
    pub total: Counts,
    pub cycles: HashMap<u32, f64>,
}

/// Per function (by name; the source file is the first seen), the counts
/// of one out-file's lines. Lines before any `fn=` belong to no function
/// and are left out. Cachegrind's `???` (code without a symbol, in any
/// module) gets no file: the `fl=` it is listed under is whichever file
/// came before, not where the code is.
pub fn function_counts(text: &str) -> std::result::Result<Vec<(Frame, Counts)>, String> {
    let mut events: Vec<&str> = Vec::new();
    let mut file: Option<&str> = None;
    let mut current: Option<usize> = None;
    let mut out: Vec<(Frame, Counts)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = rest.split_whitespace().collect();
        } else if let Some(rest) = line.strip_prefix("fl=") {
            file = Some(rest);
        } else if let Some(name) = line.strip_prefix("fn=") {
            current = Some(*index.entry(name).or_insert_with(|| {
                out.push((
                    Frame {
                        function: name.to_string(),
                        module: String::new(),
                        file: file
                            .filter(|f| *f != "???" && name != "???")
                            .map(str::to_string),
                    },
                    Counts::default(),
                ));
                out.len() - 1
            }));
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            let Some(i) = current else { continue };
            // The line number, then the events' counts.
            let values: std::result::Result<Vec<u64>, _> =
                line.split_whitespace().skip(1).map(str::parse).collect();
            let values = values.map_err(|_| format!("unreadable line '{line}'"))?;
            out[i].1.add(&Counts::of_columns(&events, values));
        }
    }
    if events.is_empty() {
        return Err("no events line".into());
    }
    Ok(out)
}

/// The counts per function of the run whose out-files are in `dir`,
/// summed over its processes; the files are left for `OutDir::take`,
/// which reads the totals and says what went wrong.
fn read_functions(dir: &Path) -> Vec<(Frame, Counts)> {
    let mut all: Vec<(Frame, Counts)> = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return all;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("cg.") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        // An unreadable file is reported by `take`, from the same text.
        all.extend(function_counts(&text).unwrap_or_default());
    }
    all
}

/// Profiles every cell `opts.runs` times under cachegrind in interleaved
/// shuffled blocks: per run, the instructions of every function as its
/// one-frame stacks, and the run's totals.
pub(super) fn profile_cells(
    cells: &[Cell],
    opts: &Options,
    sim: &Simulation,
) -> Result<(Vec<Vec<RunStacks>>, Vec<Frame>, bool)> {
    let dir = OutDir::create()?;
    let valgrind = crate::exec::resolve_program(b"valgrind")?;
    let launches = cells
        .iter()
        .map(|c| {
            let mut l = launch(c, opts)?;
            l.command.argv = sim.wrap(dir.path(), &c.argv)?;
            l.command.program = valgrind.clone();
            Ok(l)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut schedule = super::runs::scheduler(cells.len(), opts.runs, opts.seed);
    let mut runs: Vec<Vec<RunStacks>> = vec![Vec::new(); cells.len()];
    let mut interner = Interner::default();
    let mut interrupted = false;
    while let Some((step, c)) = super::runs::next_run(&mut schedule) {
        let raw = sampler::plain_run(&launches[c])?;
        if raw.interrupted {
            interrupted = true;
            break;
        }
        check_run(&cells[c], &raw)?;
        let functions = read_functions(dir.path());
        let total = dir.take().map_err(|e| match e {
            Error::Failed(m) => Error::Failed(format!("'{}': {m}", cells[c].name)),
            e => e,
        })?;
        let mut stacks = RunStacks {
            wall: raw.wall,
            cpu: raw.cpu,
            ..Default::default()
        };
        let mut counts = RunCounts {
            total,
            cycles: HashMap::new(),
        };
        for (frame, n) in functions {
            let id = interner.id(&frame);
            *stacks.stacks.entry(vec![id]).or_insert(0.0) += n.ir as f64;
            *counts.cycles.entry(id).or_insert(0.0) += n.estimated_cycles() as f64;
        }
        stacks.counts = Some(counts);
        runs[c].push(stacks);
        schedule.record(step, raw.wall);
        if signals::received().is_some() {
            interrupted = true;
            break;
        }
    }
    Ok((runs, interner.frames, interrupted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_summed_over_their_files_and_lines() {
        let text = "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim\n\
            fl=a.c\nfn=main\n3 10 1 1 4 0 0 2\n4 5\n\
            fl=b.h\nfn=main\n9 7 0 0 1\n\
            fl=???\nfn=0x401000\n0 3\n\
            summary: 25 1 1 5 0 0 2 0 0 0 0 0 0\n";
        let f = function_counts(text).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].0.function, "main");
        assert_eq!(f[0].0.file.as_deref(), Some("a.c"));
        assert_eq!(
            (f[0].1.ir, f[0].1.i1mr, f[0].1.dr, f[0].1.dw),
            (22, 1, 5, 2)
        );
        assert_eq!(
            (f[1].0.function.as_str(), f[1].0.file.as_deref()),
            ("0x401000", None)
        );
        assert_eq!(f[1].1.ir, 3);
        // Code without a symbol is listed under the file before it, as
        // cachegrind writes it for a stripped binary: no file for it.
        let text = "events: Ir\nfl=memmove.S\nfn=memcpy\n1 5\nfn=???\n2 7\nfl=???\nfn=???\n0 90\n";
        let f = function_counts(text).unwrap();
        assert_eq!(
            (f[1].0.function.as_str(), f[1].0.file.as_deref(), f[1].1.ir),
            ("???", None, 97)
        );
        assert!(function_counts("fn=x\n1 2\n").is_err());
        assert!(function_counts("events: Ir\nfn=x\n1 two\n").is_err());
    }
}
