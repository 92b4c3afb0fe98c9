//! `explain --profile --simulate`: every profiled run made under
//! callgrind (the simulator of `run --simulate`, with the same out-file
//! directory, geometry, events and cycle model, and callers), a cell's
//! profile being the instructions each function executed in each call
//! chain, read from the out-files (`read_out_file`). Counts that repeat in
//! every run make each function's difference exact; the one comparison
//! engine decides both kinds (`exact_counts`).
//!
//! Callgrind names each function with its callers (`--separate-callers`),
//! so a chain's self counts are its stack's, exactly: no call graph is
//! split in proportions. Processes dump before they exec or fork
//! (`simulate::DUMP_BEFORE`), so the work before an exec is counted.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;

use crate::error::{Error, Result};
use crate::exec::signals;
use crate::exec::simulate::{Counts, OutDir, Simulation};
use crate::run::plan::Cell;

use super::{check_run, launch, sampler, Frame, Interner, Options, RunStacks};

/// Runs per cell by default: two runs show whether the counts repeat, and
/// a deterministic program's identical counts are decided from two (a
/// program whose counts vary may need more: `profile_cells`' `wanted`).
pub const DEFAULT_RUNS: usize = 2;

/// One run's simulated counts: the totals of its process tree and the
/// estimated cycles per function (its instructions are the stacks').
#[derive(Clone, Debug, Default)]
pub struct RunCounts {
    pub total: Counts,
    pub cycles: HashMap<u32, f64>,
}

/// One callgrind out-file: the self counts of every call chain, and where
/// each function it names as a leaf is (object and source file).
#[derive(Debug, Default)]
pub struct OutFile {
    /// Function names root first (the outermost caller recorded first),
    /// with the counts of the last one's own instructions there.
    pub chains: Vec<(Vec<String>, Counts)>,
    /// By function name: its object (`ob=`) and source file (`fl=`), as
    /// first defined.
    pub places: HashMap<String, (String, Option<String>)>,
}

/// A name of the out-file's compressed tables: `(ID) NAME` defines ID,
/// `(ID)` refers to it, anything else is the name itself (`(below main)`
/// uncompressed).
fn name(table: &mut HashMap<u64, String>, spec: &str) -> std::result::Result<String, String> {
    let compressed = spec
        .strip_prefix('(')
        .and_then(|rest| rest.split_once(')'))
        .and_then(|(id, rest)| Some((id.parse::<u64>().ok()?, rest.trim_start())));
    match compressed {
        None => Ok(spec.to_string()),
        Some((id, "")) => table
            .get(&id)
            .cloned()
            .ok_or_else(|| format!("name ({id}) used before it is defined")),
        Some((id, named)) => {
            table.insert(id, named.to_string());
            Ok(named.to_string())
        }
    }
}

/// A function's name with its callers, `f'caller'caller…` (a `'N` after
/// a name is its recursion depth), as frames from the outermost caller.
pub fn chain(context: &str) -> Vec<String> {
    let mut v: Vec<String> = context
        .split('\'')
        .filter(|part| part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    v.reverse();
    v
}

/// Reads a callgrind out-file (its documented format: `positions:` and
/// `events:` headers, `ob=`/`fl=`/`fn=` and their call-side `cob=`/`cfl=`/
/// `cfn=` with compressed names, cost lines with relative positions).
/// The line after a `calls=` line is the call's inclusive cost, which is
/// the callee's and is not added to the caller's own counts; its callers
/// are in the callee's name already.
pub fn read_out_file(text: &str) -> std::result::Result<OutFile, String> {
    let mut events: Vec<&str> = Vec::new();
    let mut positions = 1;
    let (mut files, mut functions, mut objects) = (HashMap::new(), HashMap::new(), HashMap::new());
    let (mut object, mut file) = (String::new(), None::<String>);
    let mut current: Option<usize> = None;
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out = OutFile::default();
    let mut inclusive_next = false;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let Some(first) = line.bytes().next() else {
            continue;
        };
        if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*') {
            if std::mem::take(&mut inclusive_next) {
                continue;
            }
            let Some(i) = current else { continue };
            let values: std::result::Result<Vec<u64>, _> = line
                .split_whitespace()
                .skip(positions)
                .map(str::parse)
                .collect();
            let values = values.map_err(|_| format!("unreadable line '{line}'"))?;
            out.chains[i].1.add(&Counts::of_columns(&events, values));
            continue;
        }
        if let Some(rest) = line.strip_prefix("events:") {
            events = rest.split_whitespace().collect();
        } else if let Some(rest) = line.strip_prefix("positions:") {
            positions = rest.split_whitespace().count().max(1);
        } else if let Some((key, spec)) = line.split_once('=') {
            match key {
                "ob" => object = name(&mut objects, spec)?,
                "cob" => drop(name(&mut objects, spec)?),
                "fl" => file = Some(name(&mut files, spec)?),
                "fi" | "fe" | "cfi" | "cfl" => drop(name(&mut files, spec)?),
                "cfn" => drop(name(&mut functions, spec)?),
                "fn" => {
                    let context = name(&mut functions, spec)?;
                    let i = *index.entry(context.clone()).or_insert_with(|| {
                        out.chains.push((chain(&context), Counts::default()));
                        out.chains.len() - 1
                    });
                    if let Some(leaf) = out.chains[i].0.last() {
                        out.places
                            .entry(leaf.clone())
                            .or_insert_with(|| (object.clone(), file.clone()));
                    }
                    current = Some(i);
                }
                "calls" | "jump" | "jcnd" => inclusive_next = true,
                _ => {}
            }
        }
    }
    if events.is_empty() {
        return Err("no events line".into());
    }
    Ok(out)
}

/// The out-files of the run whose out-files are in `dir`, one per process
/// image and dump; the files are left for `OutDir::take`, which reads the
/// totals and says what went wrong.
fn read_out_files(dir: &Path) -> Vec<OutFile> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cg."))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            // An unreadable file is reported by `take`, from the same text.
            read_out_file(&text).unwrap_or_default()
        })
        .collect()
}

/// The frame of a function named in a run's out-files: its object is the
/// module; its file where callgrind knows one.
fn frame_of(name: &str, places: &HashMap<String, (String, Option<String>)>) -> Frame {
    let (module, file) = places.get(name).cloned().unwrap_or_default();
    Frame {
        function: name.to_string(),
        module,
        file: file.filter(|f| f != "???" && name != "???"),
    }
}

/// Go's asynchronous preemption off (`GODEBUG=asyncpreemptoff=1`, added
/// to what the command's GODEBUG says): callgrind (3.19) aborts on the
/// signals it preempts goroutines with. Every cell gets it alike.
fn without_go_preemption(envp: &mut Vec<CString>) {
    const OFF: &str = "asyncpreemptoff=1";
    let found = envp
        .iter()
        .position(|e| e.as_bytes().starts_with(b"GODEBUG="));
    match found {
        Some(i) => {
            let old = envp[i].as_bytes();
            if !String::from_utf8_lossy(old).contains("asyncpreemptoff=") {
                let mut v = old.to_vec();
                if v.len() > b"GODEBUG=".len() {
                    v.push(b',');
                }
                v.extend_from_slice(OFF.as_bytes());
                envp[i] = CString::new(v).unwrap_or_default();
            }
        }
        None => envp.push(CString::new(format!("GODEBUG={OFF}")).unwrap_or_default()),
    }
}

/// Profiles every cell `opts.runs` times under callgrind in interleaved
/// shuffled blocks: per run, the instructions of every call chain as its
/// stack, and the run's totals. After the blocks, `wanted(runs)` may ask
/// for more runs per cell, made as further shuffled blocks.
pub(super) fn profile_cells(
    cells: &[Cell],
    opts: &Options,
    sim: &Simulation,
    wanted: &mut dyn FnMut(&[Vec<RunStacks>]) -> Option<usize>,
) -> Result<(Vec<Vec<RunStacks>>, Vec<Frame>, bool)> {
    let sim = sim.callgrind();
    let dir = OutDir::create()?;
    let valgrind = crate::exec::resolve_program(b"valgrind")?;
    let launches = cells
        .iter()
        .map(|c| {
            let mut l = launch(c, opts)?;
            l.command.argv = sim.wrap(dir.path(), &c.argv)?;
            l.command.program = valgrind.clone();
            without_go_preemption(&mut l.command.envp);
            Ok(l)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut runs: Vec<Vec<RunStacks>> = vec![Vec::new(); cells.len()];
    let mut interner = Interner::default();
    let mut interrupted = false;
    let (mut made, mut target, mut seed) = (0, opts.runs, opts.seed);
    while target > made {
        let mut schedule = super::runs::scheduler(cells.len(), target - made, seed);
        interrupted = blocks_of_runs(
            &mut schedule,
            (cells, &launches, &dir),
            &mut interner,
            &mut runs,
        )?;
        if interrupted {
            break;
        }
        made = target;
        seed = seed.wrapping_add(1);
        if let Some(more) = wanted(&runs) {
            target = target.max(more);
        }
    }
    Ok((runs, interner.frames, interrupted))
}

/// The runs of one schedule, each under callgrind, added to `runs`; true
/// when a signal or the command's own interruption ended them early.
fn blocks_of_runs(
    schedule: &mut crate::run::schedule::Scheduler,
    (cells, launches, dir): (&[Cell], &[super::sampler::Launch], &OutDir),
    interner: &mut Interner,
    runs: &mut [Vec<RunStacks>],
) -> Result<bool> {
    while let Some((step, c)) = super::runs::next_run(schedule) {
        let keeper = dir.keep_dumps()?;
        let raw = sampler::plain_run(&launches[c]);
        drop(keeper);
        let raw = raw?;
        if raw.interrupted {
            return Ok(true);
        }
        check_run(&cells[c], &raw)?;
        let files = read_out_files(dir.path());
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
        // A caller's place may be known from another file of the run (its
        // own instructions dumped before a fork, say).
        let mut places = HashMap::new();
        for f in &files {
            for (k, v) in &f.places {
                places.entry(k.as_str()).or_insert(v);
            }
        }
        let places: HashMap<String, (String, Option<String>)> = places
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        for (names, n) in files.iter().flat_map(|f| &f.chains) {
            let ids: Vec<u32> = names
                .iter()
                .map(|name| interner.id(&frame_of(name, &places)))
                .collect();
            let Some(&leaf) = ids.last() else { continue };
            *stacks.stacks.entry(ids).or_insert(0.0) += n.ir as f64;
            *counts.cycles.entry(leaf).or_insert(0.0) += n.estimated_cycles() as f64;
        }
        stacks.counts = Some(counts);
        runs[c].push(stacks);
        schedule.record(step, raw.wall);
        if signals::received().is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape callgrind 3.19 writes with `--separate-callers` and
    /// compressed names (shortened from a run of the C fixture).
    const OUT: &str = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n\
        pid: 42\ncmd:  ./variants b 3\npart: 1\n\n\
        desc: Trigger: Program termination\n\n\
        positions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n\
        summary: 141 20 10 3 1 0 2 0 0 5 1 0 0\n\n\
        ob=(1) /t/variants\nfl=(1) variants.c\n\
        fn=(1) main'(below main)\n\
        12 5 1 1 1 0 0 1\n+1 2\n\
        cfn=(2) extra_work_b'main'(below main)\ncalls=1 30\n+1 100 10 5 1 1 0 1 0 0 5 1\n\
        * 3\n\
        fn=(2)\n30 60 6 3 1\n-1 40 4 2\n\
        fl=(2) ???\nfn=(3) fib'2'fib'main'(below main)\n0 1\n\
        ob=(2) /lib/libc.so.6\nfl=(3) /lib/x.c\nfn=(4) (below main)\n0 4\n\
        fn=(1)\n14 1\n\ntotals: 141 20 10 3 1 0 2 0 0 5 1 0 0\n";

    #[test]
    fn an_out_file_gives_each_call_chain_its_own_instructions() {
        let f = read_out_file(OUT).unwrap();
        let chains: Vec<(String, u64)> = f
            .chains
            .iter()
            .map(|(names, c)| (names.join(";"), c.ir))
            .collect();
        // main's own: 5 + 2 + 3 + 1; the 100 after calls= is extra_work_b's
        // inclusive cost, not main's.
        assert_eq!(
            chains,
            [
                ("(below main);main".to_string(), 11),
                ("(below main);main;extra_work_b".to_string(), 100),
                ("(below main);main;fib;fib".to_string(), 1),
                ("(below main)".to_string(), 4),
            ]
        );
        let sum: u64 = f.chains.iter().map(|(_, c)| c.ir).sum();
        assert_eq!(sum, 116);
        let main = &f.chains[0].1;
        assert_eq!((main.dr, main.dw, main.i1mr, main.ilmr), (1, 1, 1, 1));
        let e = &f.chains[1].1;
        assert_eq!((e.dr, e.dw, e.i1mr), (10, 5, 1));
        assert_eq!(
            f.places["extra_work_b"],
            ("/t/variants".to_string(), Some("variants.c".to_string()))
        );
        assert_eq!(f.places["(below main)"].0, "/lib/libc.so.6");
        assert_eq!(f.places["fib"].1.as_deref(), Some("???"));
        assert!(frame_of("fib", &f.places).file.is_none());
    }

    #[test]
    fn out_files_that_cannot_be_read_say_why() {
        assert!(read_out_file("fn=x\n1 2\n").is_err(), "no events line");
        assert!(read_out_file("events: Ir\nfn=x\n1 two\n").is_err());
        assert!(read_out_file("events: Ir\nfn=(7)\n1 2\n").is_err());
        // Uncompressed names, and two position columns.
        let f = read_out_file("positions: instr line\nevents: Ir\nfn=(below main)\n0x10 3 9\n")
            .unwrap();
        assert_eq!(f.chains[0].0, ["(below main)"]);
        assert_eq!(f.chains[0].1.ir, 9);
    }

    #[test]
    fn go_runs_without_asynchronous_preemption() {
        let env =
            |v: &[&str]| -> Vec<CString> { v.iter().map(|s| CString::new(*s).unwrap()).collect() };
        let mut e = env(&["A=1"]);
        without_go_preemption(&mut e);
        assert_eq!(e, env(&["A=1", "GODEBUG=asyncpreemptoff=1"]));
        let mut e = env(&["GODEBUG=gctrace=1"]);
        without_go_preemption(&mut e);
        assert_eq!(e, env(&["GODEBUG=gctrace=1,asyncpreemptoff=1"]));
        let mut e = env(&["GODEBUG=asyncpreemptoff=0"]);
        without_go_preemption(&mut e);
        assert_eq!(e, env(&["GODEBUG=asyncpreemptoff=0"]), "the user's choice");
    }
}
