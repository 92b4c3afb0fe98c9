//! `run --simulate`: every run made under Valgrind's cachegrind, which
//! counts the instructions and simulates the caches and branch predictors
//! of the whole process tree, so that a run's counts do not move with the
//! machine's load. The cache geometry is pinned (never the host's), so two
//! machines' counts compare. Each process writes one out-file (`%p`) into
//! a directory of the session's; after each run they are read (cachegrind's
//! out-file format, never its terminal text), summed and removed.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ExecError, Result};
use crate::metrics::{Metric, Sample};

/// Latency of a last-level hit and of a memory access, in cycles of an L1
/// hit: the model iai-callgrind uses (after Valgrind's documentation of
/// cachegrind), a rough but fixed weighting that keeps the estimate a sum
/// of exact counts.
pub const LL_HIT_CYCLES: u64 = 5;
pub const RAM_CYCLES: u64 = 35;

/// The default simulated caches: 32 KiB 8-way L1s and an 8 MiB 16-way last
/// level, 64-byte lines (a common x86 core of the last decade).
pub const DEFAULT_I1: &str = "32768,8,64";
pub const DEFAULT_D1: &str = "32768,8,64";
pub const DEFAULT_LL: &str = "8388608,16,64";

/// What a simulated session ran with, stored with its settings: counts
/// from another geometry or another Valgrind are other numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Simulation {
    /// `cachegrind`.
    pub tool: String,
    /// `valgrind --version`'s answer, e.g. `valgrind-3.19.0`.
    pub version: String,
    /// `--I1`, `--D1`, `--LL`: size in bytes, associativity, line size.
    pub i1: String,
    pub d1: String,
    pub ll: String,
}

/// Checks a cache geometry: `SIZE,ASSOC,LINE`, three positive integers.
pub fn check_geometry(flag: &str, text: &str) -> Result<()> {
    let parts: Vec<&str> = text.split(',').collect();
    let ok = parts.len() == 3
        && parts
            .iter()
            .all(|p| p.trim().parse::<u64>().is_ok_and(|v| v > 0));
    if ok {
        Ok(())
    } else {
        Err(ExecError::BadCacheGeometry {
            flag: flag.into(),
            text: text.into(),
            example: if flag == "--LL" {
                DEFAULT_LL
            } else {
                DEFAULT_I1
            },
        }
        .into())
    }
}

impl Simulation {
    /// The simulation with these geometries, with the Valgrind found on
    /// `PATH`; without one, the one line saying how to install it.
    /// `flag` names what asked for it in the error when Valgrind is missing.
    pub fn find(flag: &str, i1: &str, d1: &str, ll: &str) -> Result<Simulation> {
        check_geometry("--I1", i1)?;
        check_geometry("--D1", d1)?;
        check_geometry("--LL", ll)?;
        let out = std::process::Command::new("valgrind")
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        let version = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _ => {
                return Err(ExecError::NoValgrind {
                    flag: flag.to_string(),
                }
                .into())
            }
        };
        Ok(Simulation {
            tool: "cachegrind".into(),
            version,
            i1: i1.to_string(),
            d1: d1.to_string(),
            ll: ll.to_string(),
        })
    }

    /// The same simulation made by callgrind, which also records callers
    /// (the counted profile's tool): same geometry, same events, same
    /// cycle model.
    pub fn callgrind(&self) -> Simulation {
        Simulation {
            tool: "callgrind".into(),
            ..self.clone()
        }
    }

    /// `argv` run under the simulator (`tool`), writing one out-file per
    /// process into `dir` and Valgrind's own messages into a log per
    /// process there (so they never mix with the command's output). The
    /// program is resolved here, as an unsimulated run resolves it, not on
    /// the run's `PATH`. Under callgrind, each out-file's functions carry
    /// their callers, and a process dumps its counts before it execs or
    /// forks (`DUMP_BEFORE`), so that work done before an exec is kept and
    /// a child does not count its parent's work again.
    pub fn wrap(&self, dir: &Path, argv: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        let Some((program, args)) = argv.split_first() else {
            return Err(ExecError::EmptyCommand.into());
        };
        let resolved = super::resolve_program(program)?;
        let mut v: Vec<String> = vec![
            "valgrind".to_string(),
            format!("--tool={}", self.tool),
            "--trace-children=yes".into(),
            "--cache-sim=yes".into(),
            "--branch-sim=yes".into(),
            format!("--I1={}", self.i1),
            format!("--D1={}", self.d1),
            format!("--LL={}", self.ll),
            format!("--{}-out-file={}/cg.%p", self.tool, dir.display()),
            format!("--log-file={}/log.%p", dir.display()),
        ];
        if self.tool == "callgrind" {
            v.push(format!("--separate-callers={CALLERS}"));
            v.extend(DUMP_BEFORE.iter().map(|f| format!("--dump-before={f}")));
        }
        let mut v: Vec<Vec<u8>> = v.into_iter().map(String::into_bytes).collect();
        v.push(resolved.into_os_string().into_encoded_bytes());
        v.extend(args.iter().cloned());
        Ok(v)
    }
}

/// Callers recorded per function by callgrind (`--separate-callers`): a
/// function's name in its out-file is its call chain, `f'caller'caller…`,
/// up to this many callers. Deeper stacks lose their outermost frames.
/// Measured on the Go fixture of the profile tests: no slower than
/// without callers (2.10 s against 1.97 s of user time per run).
pub const CALLERS: usize = 40;

/// The functions at whose entry callgrind writes a process's counts so
/// far and starts again from zero. Valgrind writes a tool's results when a
/// process exits, never when it execs, so without a dump the counts of a
/// process image that execs are lost; and a forked child starts with its
/// parent's counts, so without a dump before the fork they would be
/// counted twice. libc's exec family all ends in `execve` (`fexecve` in
/// `execveat`), `system` in `posix_spawn`; Go makes its system calls
/// itself: `syscall.Exec`, and the vfork of `os/exec` and
/// `syscall.ForkExec`. A dump writes the whole out-file so far, so each
/// name is one that a fork or an exec passes through once.
pub const DUMP_BEFORE: &[&str] = &[
    "execve",
    "execveat",
    "fork",
    "vfork",
    "posix_spawn",
    "posix_spawnp",
    "syscall.Exec",
    "syscall.rawVforkSyscall*",
];

/// A cause of simulated counts that vary between runs which cmdscope can
/// name from how a command is run (before any run: naming it by an
/// experiment would cost simulated runs, each 20-100x the command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Varies {
    /// Python with its string hashes randomised: no `PYTHONHASHSEED`.
    PythonHashSeed,
}

/// Whether a command runs Python with its hash randomisation on: a word
/// of its command line (`words`) names an interpreter (`python`,
/// `python3`, `python3.11`, by path or not) or its program (`program`,
/// resolved as its runs resolve it) is a script whose `#!` line does; and
/// `PYTHONHASHSEED` is set neither on the command line, nor in the
/// environment the command is given (`env`), nor, where the caller's is
/// inherited, in that (`inherited`; `random` there is no seed).
pub fn python_hash_seed_unset(
    words: &str,
    program: Option<&Path>,
    env: &[(Vec<u8>, Vec<u8>)],
    inherited: Option<&std::ffi::OsStr>,
) -> bool {
    const SEED: &str = "PYTHONHASHSEED";
    let seeded = words.contains(SEED)
        || env.iter().any(|(k, _)| k == SEED.as_bytes())
        || inherited.is_some_and(|v| v != "random");
    if seeded {
        return false;
    }
    let names_python = |word: &str| {
        let base = word.rsplit('/').next().unwrap_or(word);
        base.strip_prefix("python")
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    if words.split_whitespace().any(names_python) {
        return true;
    }
    // A script: the interpreter its first line names (`#!/usr/bin/env
    // python3`), read from at most its first 256 bytes.
    let Some(head) = program.and_then(|p| {
        use std::io::Read;
        let mut buf = [0u8; 256];
        let n = std::fs::File::open(p).ok()?.read(&mut buf).ok()?;
        Some(buf[..n].to_vec())
    }) else {
        return false;
    };
    let Some(line) = head.strip_prefix(b"#!") else {
        return false;
    };
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(line)
        .split_whitespace()
        .any(names_python)
}

/// A run's counts, summed over its processes: cachegrind's events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub processes: u64,
    pub ir: u64,
    pub i1mr: u64,
    pub ilmr: u64,
    pub dr: u64,
    pub d1mr: u64,
    pub dlmr: u64,
    pub dw: u64,
    pub d1mw: u64,
    pub dlmw: u64,
    pub bc: u64,
    pub bcm: u64,
    pub bi: u64,
    pub bim: u64,
}

impl Counts {
    /// One out-file's totals: its `events:` line names the columns of its
    /// `summary:` line (older Valgrinds wrote `totals:`).
    pub fn parse(text: &str) -> std::result::Result<Counts, String> {
        let mut events: Option<Vec<&str>> = None;
        let mut summary: Option<Vec<u64>> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("events:") {
                events = Some(rest.split_whitespace().collect());
            } else if let Some(rest) = line
                .strip_prefix("summary:")
                .or_else(|| line.strip_prefix("totals:"))
            {
                let values: std::result::Result<Vec<u64>, _> =
                    rest.split_whitespace().map(str::parse).collect();
                summary = Some(values.map_err(|_| format!("unreadable summary line '{line}'"))?);
            }
        }
        let events = events.ok_or("no events line")?;
        let summary = summary.ok_or("no summary line (the process did not exit normally?)")?;
        let mut c = Counts::of_columns(&events, summary);
        // A callgrind dump made before an exec or a fork is a part of a
        // process, not a process that ended.
        c.processes = u64::from(!text.contains("\ndesc: Trigger: --dump-before"));
        if !events.contains(&"I1mr") || !events.contains(&"Bcm") {
            return Err("no cache or branch simulation in it".into());
        }
        Ok(c)
    }

    /// The counts of one line of an out-file: `values` in the order of
    /// the `events:` line's names (missing trailing values are zero).
    pub fn of_columns(events: &[&str], values: impl IntoIterator<Item = u64>) -> Counts {
        let mut c = Counts::default();
        for (name, value) in events.iter().zip(values) {
            let slot = match *name {
                "Ir" => &mut c.ir,
                "I1mr" => &mut c.i1mr,
                "ILmr" => &mut c.ilmr,
                "Dr" => &mut c.dr,
                "D1mr" => &mut c.d1mr,
                "DLmr" => &mut c.dlmr,
                "Dw" => &mut c.dw,
                "D1mw" => &mut c.d1mw,
                "DLmw" => &mut c.dlmw,
                "Bc" => &mut c.bc,
                "Bcm" => &mut c.bcm,
                "Bi" => &mut c.bi,
                "Bim" => &mut c.bim,
                _ => continue,
            };
            *slot = value;
        }
        c
    }

    pub fn add(&mut self, o: &Counts) {
        self.processes += o.processes;
        self.ir += o.ir;
        self.i1mr += o.i1mr;
        self.ilmr += o.ilmr;
        self.dr += o.dr;
        self.d1mr += o.d1mr;
        self.dlmr += o.dlmr;
        self.dw += o.dw;
        self.d1mw += o.d1mw;
        self.dlmw += o.dlmw;
        self.bc += o.bc;
        self.bcm += o.bcm;
        self.bi += o.bi;
        self.bim += o.bim;
    }

    /// L1 hits + 5 × LL hits + 35 × memory accesses, over instruction
    /// fetches, data reads and data writes.
    pub fn estimated_cycles(&self) -> u64 {
        let accesses = self.ir + self.dr + self.dw;
        let l1_misses = self.i1mr + self.d1mr + self.d1mw;
        let ll_misses = self.ilmr + self.dlmr + self.dlmw;
        let l1_hits = accesses.saturating_sub(l1_misses);
        let ll_hits = l1_misses.saturating_sub(ll_misses);
        l1_hits + LL_HIT_CYCLES * ll_hits + RAM_CYCLES * ll_misses
    }

    /// The run's `sim_*` metrics.
    pub fn set(&self, sample: &mut Sample) {
        sample.set(Metric::SimInstructions, self.ir as f64);
        sample.set(Metric::SimD1Misses, (self.d1mr + self.d1mw) as f64);
        sample.set(
            Metric::SimLlMisses,
            (self.ilmr + self.dlmr + self.dlmw) as f64,
        );
        sample.set(Metric::SimBranchMispredicts, (self.bcm + self.bim) as f64);
        sample.set(Metric::SimEstimatedCycles, self.estimated_cycles() as f64);
    }
}

/// The session's directory of out-files, removed with everything in it
/// when dropped.
pub struct OutDir {
    path: PathBuf,
}

impl OutDir {
    pub fn create() -> Result<OutDir> {
        let path = std::env::temp_dir().join(format!(
            "cmdscope-simulate-{}-{:x}",
            std::process::id(),
            rand::random::<u64>()
        ));
        std::fs::create_dir(&path).map_err(|source| ExecError::SimulateDirectory {
            path: path.clone(),
            source,
        })?;
        Ok(OutDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The counts of the run that just ended, summed over its processes;
    /// its files are removed. An error names what cachegrind could not
    /// count (a process it could not run says why in its log).
    pub fn take(&self) -> Result<Counts> {
        let mut total = Counts::default();
        let mut problem = None;
        let mut logs = Vec::new();
        let entries = std::fs::read_dir(&self.path).map_err(|e| {
            Error::Failed(format!(
                "--simulate: cannot read '{}': {e}",
                self.path.display()
            ))
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let _ = std::fs::remove_file(&path);
            if name.starts_with("log.") {
                logs.push(text);
                continue;
            }
            match Counts::parse(&text) {
                Ok(c) => total.add(&c),
                Err(e) => problem = Some(format!("{name}: {e}")),
            }
        }
        if total.processes == 0 || problem.is_some() {
            let said = logs
                .iter()
                .flat_map(|l| l.lines())
                .map(|l| {
                    l.trim_start_matches(|c: char| c == '=' || c.is_ascii_digit())
                        .trim()
                })
                .find(|l| !l.is_empty() && !l.starts_with("warning:"))
                .map(|l| format!(" (valgrind: {l})"))
                .unwrap_or_default();
            return Err(Error::Failed(format!(
                "--simulate: cachegrind counted no complete process{}{said}",
                problem.map(|p| format!(": {p}")).unwrap_or_default()
            )));
        }
        Ok(total)
    }
}

/// While it lives, every out-file closed in an `OutDir` is renamed to a
/// name of its own (`cg.PID.N.kSEQ`). Callgrind numbers a process's dumps
/// from 1 in every process image, so the image a process execs would
/// overwrite the dumps of the one before (a shell's work, then the
/// program's): renamed as soon as they are closed, they stay. The new
/// image starts Valgrind afresh before it can dump anything, far longer
/// than the rename takes. Dropping it renames what is left and waits.
pub struct DumpKeeper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OutDir {
    /// Starts keeping the dumps of the next run (inotify on the directory).
    pub fn keep_dumps(&self) -> Result<DumpKeeper> {
        let failed = |what: &str| {
            Error::Failed(format!(
                "--simulate: cannot watch '{}' for callgrind's dumps ({what}: {})",
                self.path.display(),
                std::io::Error::last_os_error()
            ))
        };
        // SAFETY: plain system calls on a descriptor owned here.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
        if fd < 0 {
            return Err(failed("inotify_init1"));
        }
        // SAFETY: `fd` is ours and open.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let path = std::ffi::CString::new(self.path.as_os_str().as_encoded_bytes())
            .map_err(|_| failed("path"))?;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd =
            unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), libc::IN_CLOSE_WRITE) };
        if wd < 0 {
            return Err(failed("inotify_add_watch"));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let dir = self.path.clone();
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || keep(fd, &dir, &stopped));
        Ok(DumpKeeper {
            stop,
            thread: Some(thread),
        })
    }
}

/// The keeper's loop: renames each closed out-file until told to stop,
/// then once more for what was closed before.
fn keep(fd: OwnedFd, dir: &Path, stop: &AtomicBool) {
    let mut seq = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let last = stop.load(Ordering::Acquire);
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, if last { 0 } else { 20 }) };
        loop {
            // SAFETY: reads into a buffer of its length.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            for name in event_names(&buf[..n as usize]) {
                // Callgrind creates its out-file empty when a process image
                // starts, and writes it at the end.
                let from = dir.join(&name);
                let written = std::fs::metadata(&from).is_ok_and(|m| m.len() > 0);
                if !unkept(&name) || !written {
                    continue;
                }
                seq += 1;
                let to = format!("{name}.k{seq}");
                let _ = std::fs::rename(from, dir.join(to));
            }
        }
        if last {
            return;
        }
    }
}

/// The names in a buffer of inotify events (each a fixed header, then a
/// NUL-padded name).
fn event_names(buf: &[u8]) -> Vec<String> {
    const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
    let mut names = Vec::new();
    let mut at = 0;
    while at + HEADER <= buf.len() {
        let len = u32::from_ne_bytes(buf[at + 12..at + 16].try_into().unwrap_or([0; 4])) as usize;
        let end = (at + HEADER + len).min(buf.len());
        let name = &buf[at + HEADER..end];
        let name = name.split(|&b| b == 0).next().unwrap_or_default();
        names.push(String::from_utf8_lossy(name).into_owned());
        at = end;
    }
    names
}

/// An out-file not yet renamed: `cg.PID` or `cg.PID.N`.
fn unkept(name: &str) -> bool {
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix("cg.")
        .is_some_and(|rest| rest.split('.').all(all_digits))
}

impl Drop for DumpKeeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "desc: I1 cache:         32768 B, 64 B, 8-way associative\n\
        cmd: /usr/bin/true\n\
        events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim\n\
        fl=x.c\nfn=main\n1 2 1 1 2 0 0 0 0 0 0 0 0 0\n\
        summary: 1000 10 4 300 20 5 200 6 1 50 7 3 2\n";

    #[test]
    fn an_out_file_is_read_by_its_events_line() {
        let c = Counts::parse(FILE).unwrap();
        assert_eq!((c.ir, c.i1mr, c.dlmw, c.bcm, c.bim), (1000, 10, 1, 7, 2));
        // accesses 1500, L1 misses 36, LL misses 10: 1464 + 5*26 + 35*10
        assert_eq!(c.estimated_cycles(), 1464 + 130 + 350);
        let mut s = Sample::new(0);
        c.set(&mut s);
        assert_eq!(s.get(Metric::SimD1Misses), Some(26.0));
        assert_eq!(s.get(Metric::SimLlMisses), Some(10.0));
        assert_eq!(s.get(Metric::SimBranchMispredicts), Some(9.0));
        // Columns are found by name, not by position.
        let swapped = "events: Bim Ir\nsummary: 4 99\n";
        assert!(Counts::parse(swapped).is_err(), "no cache simulation");
        let cut = FILE.replace("summary:", "fn=other\n");
        assert!(Counts::parse(&cut).is_err());
    }

    #[test]
    fn python_without_a_hash_seed_is_named_by_its_command_or_its_script() {
        let unset = |words: &str, env: &[(&str, &str)], inherited: Option<&str>| {
            let env: Vec<(Vec<u8>, Vec<u8>)> = env
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect();
            python_hash_seed_unset(words, None, &env, inherited.map(std::ffi::OsStr::new))
        };
        for words in [
            "python3 -c 'import json'",
            "/usr/bin/python3.11 x.py",
            "cd src && python -m mod",
        ] {
            assert!(unset(words, &[], None), "{words}");
            assert!(unset(words, &[], Some("random")), "{words}");
            assert!(!unset(words, &[("PYTHONHASHSEED", "0")], None), "{words}");
            assert!(!unset(words, &[], Some("0")), "{words}");
        }
        assert!(!unset("PYTHONHASHSEED=1 python3 x.py", &[], None));
        for words in ["pythonic-tool run", "sha256sum python3.txt.gz", "ls"] {
            assert!(!unset(words, &[], None), "{words}");
        }
        let dir = std::env::temp_dir().join(format!("cmdscope-shebang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (py, sh) = (dir.join("tool"), dir.join("other"));
        std::fs::write(&py, "#!/usr/bin/env python3\nprint(1)\n").unwrap();
        std::fs::write(&sh, "#!/bin/sh\necho python3\n").unwrap();
        assert!(python_hash_seed_unset("tool", Some(&py), &[], None));
        assert!(!python_hash_seed_unset("other", Some(&sh), &[], None));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A process image's dumps are renamed as they are closed, so the
    /// next image of the same process, numbering its dumps from 1 again,
    /// does not overwrite them; an out-file created empty is left alone.
    #[test]
    fn dumps_of_one_process_image_survive_the_next() {
        let dir = OutDir::create().unwrap();
        let keeper = dir.keep_dumps().unwrap();
        let dump = dir.path().join("cg.77.1");
        std::fs::write(dir.path().join("cg.77"), "").unwrap();
        std::fs::write(&dump, "first image").unwrap();
        let started = std::time::Instant::now();
        while dump.exists() && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::fs::write(&dump, "second image").unwrap();
        drop(keeper);
        let mut kept: Vec<(String, String)> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap();
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        kept.sort();
        assert_eq!(
            kept,
            [
                ("cg.77".to_string(), String::new()),
                ("cg.77.1.k1".to_string(), "first image".to_string()),
                ("cg.77.1.k2".to_string(), "second image".to_string()),
            ]
        );
        assert!(unkept("cg.12.3") && unkept("cg.12"));
        assert!(!unkept("cg.12.3.k1") && !unkept("log.12") && !unkept("cg."));
    }

    #[test]
    fn geometries_are_three_positive_integers() {
        assert!(check_geometry("--I1", DEFAULT_I1).is_ok());
        assert!(check_geometry("--LL", DEFAULT_LL).is_ok());
        for bad in ["32768,8", "32768,0,64", "a,b,c", ""] {
            assert!(check_geometry("--D1", bad).is_err(), "{bad}");
        }
    }
}
