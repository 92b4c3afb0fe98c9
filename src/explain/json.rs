//! The `--json` document: everything the terminal report shows, complete
//! (no summarised siblings), in seconds and bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::hints::Hint;
use super::procfs::Argv;
use super::syscalls;
use super::tracer::{Created, Exit, Trace};
use super::tree::Model;
use super::Explained;
use crate::exec::procio::ProcIo;
use crate::monitor::process as monitor;

/// Exec records listed at most (the totals are always exact).
const MAX_EXEC_RECORDS: usize = 10_000;

pub const SCHEMA: &str = "cmdscope-explain/1";

#[derive(Serialize)]
struct Io {
    rchar: u64,
    wchar: u64,
    read_bytes: u64,
    write_bytes: u64,
    cancelled_write_bytes: u64,
}

impl From<&ProcIo> for Io {
    fn from(io: &ProcIo) -> Io {
        Io {
            rchar: io.rchar,
            wchar: io.wchar,
            read_bytes: io.read_bytes,
            write_bytes: io.write_bytes,
            cancelled_write_bytes: io.cancelled_write_bytes,
        }
    }
}

#[derive(Serialize)]
struct ProcessEntry {
    pid: i32,
    /// The process that created it (cmdscope's pid for the command itself).
    ppid: i32,
    /// The process a thread belongs to (its own pid for a process).
    tgid: i32,
    root: bool,
    argv: Vec<String>,
    argc: u32,
    argv_truncated: bool,
    program: String,
    created_by: &'static str,
    creation_syscall: Option<String>,
    /// Seconds since the trace started.
    start: f64,
    wall: Option<f64>,
    user: f64,
    sys: f64,
    exit_code: Option<i32>,
    signal: Option<i32>,
    execs: u32,
    failed_execs: u32,
    threads: usize,
    intermediate_shell: bool,
    /// Own I/O (threads included, children not).
    io: Option<Io>,
}

#[derive(Serialize)]
struct SpawnDetailEntry {
    created_by: &'static str,
    syscall: Option<String>,
    event: &'static str,
    count: u64,
}

#[derive(Serialize)]
struct Spawns {
    fork: u64,
    vfork: u64,
    thread: u64,
    /// Seconds spent in the creating syscalls (in the parent), by method.
    seconds: BTreeMap<&'static str, f64>,
    /// Which syscall and ptrace event each creation came with.
    details: Vec<SpawnDetailEntry>,
    /// Time from each creation to the child's first exec, by method and
    /// creating program (processes that exec'd).
    to_exec: Vec<SpawnTimeEntry>,
}

#[derive(Serialize)]
struct SpawnTimeEntry {
    created_by: &'static str,
    creator: String,
    count: u64,
    seconds: f64,
}

#[derive(Serialize)]
struct ExecRecord {
    pid: i32,
    /// Seconds since the trace started.
    at: f64,
    program: String,
    argv: Vec<String>,
    env_bytes: Option<u64>,
    env_vars: Option<u64>,
}

#[derive(Serialize)]
struct EnvBytes {
    total: u64,
    mean: Option<f64>,
    min: Option<u64>,
    max: u64,
    measured: u64,
}

#[derive(Serialize)]
struct Execs {
    count: u64,
    failed: u64,
    env_bytes: EnvBytes,
    env_vars_max: u64,
    records: Vec<ExecRecord>,
    /// False when records were left out (the counts above stay exact).
    records_complete: bool,
}

#[derive(Serialize)]
struct ShellEntry {
    pid: i32,
    shell: String,
    script: String,
    then: String,
    in_place: bool,
    overhead: f64,
}

#[derive(Serialize)]
struct SyscallEntry {
    name: String,
    count: u64,
    seconds: f64,
}

#[derive(Serialize)]
struct DirEntry {
    directory: String,
    bytes: u64,
    tmpfs: bool,
}

#[derive(Serialize)]
struct IoTotals {
    totals: Io,
    written_by_directory: Vec<DirEntry>,
}

#[derive(Serialize)]
struct PatternCount {
    regex: String,
    count: u64,
    before_start: u64,
}

#[derive(Serialize)]
struct MonitorEntry {
    command: String,
    patterns: Vec<PatternCount>,
    lines: u64,
    lines_before_start: u64,
    exit_code: Option<i32>,
    signal: Option<i32>,
    killed_at_end: bool,
}

#[derive(Serialize)]
struct HintEntry {
    kind: &'static str,
    message: String,
    numbers: BTreeMap<&'static str, f64>,
}

#[derive(Serialize)]
struct Document {
    schema: &'static str,
    command: Vec<String>,
    note: &'static str,
    /// Seconds from the start of the command to the end of its last process (traced).
    wall: f64,
    exit_code: Option<i32>,
    signal: Option<i32>,
    interrupted: bool,
    timed_out: bool,
    as_root: bool,
    processes: Vec<ProcessEntry>,
    spawns: Spawns,
    execs: Execs,
    intermediate_shells: Vec<ShellEntry>,
    syscalls: Vec<SyscallEntry>,
    io: IoTotals,
    monitor: Option<MonitorEntry>,
    hints: Vec<HintEntry>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn words(argv: Option<&Argv>) -> Vec<String> {
    argv.map(|a| a.words().map(lossy).collect())
        .unwrap_or_default()
}

fn split_exit(exit: Option<Exit>) -> (Option<i32>, Option<i32>) {
    match exit {
        Some(Exit::Code(c)) => (Some(c), None),
        Some(Exit::Signal(s)) => (None, Some(s)),
        None => (None, None),
    }
}

/// All syscalls with at least one call, by time spent (then count), names resolved.
pub fn syscall_rows(trace: &Trace) -> Vec<(String, u64, f64)> {
    let mut rows: Vec<(String, u64, f64)> = trace
        .syscalls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.count > 0)
        .map(|(nr, c)| {
            (
                syscalls::name(nr as u64).into_owned(),
                c.count,
                c.nanos as f64 * 1e-9,
            )
        })
        .collect();
    for (nr, c) in &trace.other_syscalls {
        let name = match *nr {
            u64::MAX => "(32-bit syscalls)".to_string(),
            n if n == u64::MAX - 1 => "(other)".to_string(),
            n => syscalls::name(n).into_owned(),
        };
        rows.push((name, c.count, c.nanos as f64 * 1e-9));
    }
    rows.sort_by(|a, b| {
        b.2.partial_cmp(&a.2)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.cmp(&a.1))
            .then_with(|| a.0.cmp(&b.0))
    });
    rows
}

fn hint_entry(h: &Hint) -> HintEntry {
    HintEntry {
        kind: h.kind,
        message: h.message.clone(),
        numbers: h.numbers.iter().copied().collect(),
    }
}

pub fn render(x: &Explained) -> Vec<u8> {
    let model: &Model = &x.model;
    let trace: &Trace = &x.trace;
    let me = std::process::id() as i32;
    let mut processes = Vec::with_capacity(model.processes.len() + model.threads.len());
    for (pi, _) in model.walk() {
        let p = &model.processes[pi];
        let argv = p.argv();
        let (exit_code, signal) = split_exit(p.exit);
        let ppid = p.parent.map_or(me, |q| model.processes[q].pid);
        processes.push(ProcessEntry {
            pid: p.pid,
            ppid,
            tgid: p.pid,
            root: p.root,
            argv: words(argv),
            argc: argv.map_or(0, |a| a.argc),
            argv_truncated: argv.is_some_and(|a| a.truncated),
            program: lossy(p.program()),
            created_by: p.created_by.name(),
            creation_syscall: p.creation_syscall.map(|n| syscalls::name(n).into_owned()),
            start: p.start,
            wall: p.wall(),
            user: p.user,
            sys: p.sys,
            exit_code,
            signal,
            execs: p.exec_count,
            failed_execs: p.failed_execs,
            threads: p.threads.len(),
            intermediate_shell: p.shell.is_some(),
            io: Some(Io::from(&p.io)),
        });
        for &ti in &p.threads {
            let t = &model.threads[ti];
            processes.push(ProcessEntry {
                pid: t.tid,
                ppid: p.pid,
                tgid: p.pid,
                root: false,
                argv: words(argv),
                argc: argv.map_or(0, |a| a.argc),
                argv_truncated: argv.is_some_and(|a| a.truncated),
                program: lossy(p.program()),
                created_by: Created::Thread.name(),
                creation_syscall: None,
                start: t.start,
                wall: t.end.map(|e| (e - t.start).max(0.0)),
                user: t.user,
                sys: t.sys,
                exit_code,
                signal,
                execs: 0,
                failed_execs: 0,
                threads: 0,
                intermediate_shell: false,
                io: None,
            });
        }
    }

    let mut records = Vec::new();
    let mut listed = 0u64;
    for p in &model.processes {
        for e in &p.execs {
            if records.len() < MAX_EXEC_RECORDS {
                records.push(ExecRecord {
                    pid: p.pid,
                    at: e.at,
                    program: lossy(&e.path),
                    argv: words(Some(&e.argv)),
                    env_bytes: e.env_bytes,
                    env_vars: e.env_vars,
                });
                listed += 1;
            }
        }
    }
    records.sort_by(|a, b| a.at.partial_cmp(&b.at).unwrap_or(std::cmp::Ordering::Equal));
    let ex = &trace.execs;

    let root = model.processes.first();
    let (exit_code, signal) = split_exit(root.and_then(|r| r.exit));
    let doc = Document {
        schema: SCHEMA,
        command: x.command.iter().map(|w| lossy(w)).collect(),
        note: super::CAVEAT,
        wall: trace.wall,
        exit_code,
        signal,
        interrupted: trace.interrupted,
        timed_out: trace.timed_out,
        as_root: x.as_root,
        processes,
        spawns: Spawns {
            fork: model.spawns[0],
            vfork: model.spawns[1],
            thread: model.spawns[2],
            seconds: [
                ("fork", trace.spawn_seconds[0]),
                ("vfork", trace.spawn_seconds[1]),
                ("thread", trace.spawn_seconds[2]),
            ]
            .into_iter()
            .collect(),
            details: trace
                .spawn_details
                .iter()
                .map(|d| SpawnDetailEntry {
                    created_by: d.created_by.name(),
                    syscall: d.syscall.map(|n| syscalls::name(n).into_owned()),
                    event: d.event.name(),
                    count: d.count,
                })
                .collect(),
            to_exec: model
                .spawn_times()
                .into_iter()
                .map(|t| SpawnTimeEntry {
                    created_by: t.created_by.name(),
                    creator: lossy(&t.creator),
                    count: t.count,
                    seconds: t.seconds,
                })
                .collect(),
        },
        execs: Execs {
            count: ex.count,
            failed: ex.failed,
            env_bytes: EnvBytes {
                total: ex.env_bytes_total,
                mean: (ex.env_measured > 0)
                    .then(|| ex.env_bytes_total as f64 / ex.env_measured as f64),
                min: ex.env_bytes_min,
                max: ex.env_bytes_max,
                measured: ex.env_measured,
            },
            env_vars_max: ex.env_vars_max,
            records,
            records_complete: listed == ex.count,
        },
        intermediate_shells: model
            .intermediate_shells()
            .map(|(pi, s)| ShellEntry {
                pid: model.processes[pi].pid,
                shell: lossy(&s.shell),
                script: lossy(&s.script),
                then: lossy(&s.then),
                in_place: s.in_place,
                overhead: s.overhead,
            })
            .collect(),
        syscalls: syscall_rows(trace)
            .into_iter()
            .map(|(name, count, seconds)| SyscallEntry {
                name,
                count,
                seconds,
            })
            .collect(),
        io: IoTotals {
            totals: Io::from(&model.total_io()),
            written_by_directory: x
                .dirs
                .iter()
                .map(|(d, bytes, tmpfs)| DirEntry {
                    directory: d.display().to_string(),
                    bytes: *bytes,
                    tmpfs: *tmpfs,
                })
                .collect(),
        },
        monitor: x.monitor.as_ref().map(monitor_entry),
        hints: x.hints.iter().map(hint_entry).collect(),
    };
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

fn monitor_entry(m: &monitor::Report) -> MonitorEntry {
    MonitorEntry {
        command: m.command.clone(),
        patterns: m
            .patterns
            .iter()
            .enumerate()
            .map(|(i, p)| PatternCount {
                regex: p.clone(),
                count: m.counts.during.get(i).copied().unwrap_or(0),
                before_start: m.counts.before.get(i).copied().unwrap_or(0),
            })
            .collect(),
        lines: m.counts.lines,
        lines_before_start: m.counts.lines_before,
        exit_code: m.exit_code,
        signal: m.signal,
        killed_at_end: m.killed,
    }
}
