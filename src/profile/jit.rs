//! Interpreters and JITs (`explain --profile --jit-symbols`): asking the
//! runtimes cmdscope recognises to write the names of the code they
//! generate, and reading what they wrote for each run's processes: the
//! jitdump files they mapped (`jit-PID.dump`) and their perf maps
//! (`/tmp/perf-PID.map`, in the format `symbols::parse_perf_map` reads),
//! with or without the option.
//!
//! - Python >= 3.12: `PYTHONPERFSUPPORT=1` (`-X perf`: a trampoline per
//!   Python function, named in the perf map); `PYTHON_PERF_JIT_SUPPORT=1`
//!   (`-X perf_jit`, 3.13 and later, which wins over the first): the same
//!   trampolines described in `/tmp/jit-PID.dump`. Earlier Pythons ignore
//!   both.
//! - Node: `--perf-basic-prof --interpreted-frames-native-stack` added to
//!   `NODE_OPTIONS` (a perf map of every compiled function, and a frame of
//!   its own for every interpreted one).
//! - The JVM: `-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
//!   -XX:+PreserveFramePointer` added to `JAVA_TOOL_OPTIONS` (the perf map
//!   written at exit; frame pointers kept in compiled code, so stacks walk
//!   through it).
//!
//! The runtimes keep frame pointers in their generated code (V8 always,
//! the JVM with the option, Python's trampolines save one), which is how
//! stacks are walked through it: an address no module covers is unwound
//! by its frame pointer.

use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;

/// What the option adds to a command's environment: (variable, value,
/// whether the value is appended to one already there).
pub const RUNTIME_OPTIONS: &[(&str, &str, bool)] = &[
    ("PYTHONPERFSUPPORT", "1", false),
    ("PYTHON_PERF_JIT_SUPPORT", "1", false),
    (
        "NODE_OPTIONS",
        "--perf-basic-prof --interpreted-frames-native-stack",
        true,
    ),
    (
        "JAVA_TOOL_OPTIONS",
        "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer",
        true,
    ),
];

/// The environment with the runtimes' options: a variable already set is
/// kept, with the options appended to the ones that take a list.
pub fn with_runtime_options(envp: Vec<CString>) -> Vec<CString> {
    let mut out = envp;
    for &(name, value, append) in RUNTIME_OPTIONS {
        let prefix = format!("{name}=");
        match out
            .iter()
            .position(|v| v.as_bytes().starts_with(prefix.as_bytes()))
        {
            Some(i) if append => {
                let mut bytes = out[i].as_bytes().to_vec();
                if bytes.len() > prefix.len() {
                    bytes.push(b' ');
                }
                bytes.extend_from_slice(value.as_bytes());
                if let Ok(c) = CString::new(bytes) {
                    out[i] = c;
                }
            }
            Some(_) => {}
            None => {
                if let Ok(c) = CString::new(format!("{name}={value}")) {
                    out.push(c);
                }
            }
        }
    }
    out
}

const JITDUMP_MAGIC: u32 = 0x4A69_5444;
const JIT_CODE_LOAD: u32 = 0;
const JIT_CODE_MOVE: u32 = 1;
const JIT_CODE_UNWINDING_INFO: u32 = 4;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The unwind table a jitdump gives one piece of code: its `.eh_frame`,
/// which the runtime wrote as if it were placed right after the code
/// (the next multiple of 8 bytes), the layout perf's jitdump reader uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitUnwind {
    pub code: std::ops::Range<u64>,
    /// The `.eh_frame` bytes, as a range of the file.
    pub eh_frame: std::ops::Range<usize>,
    /// The address the `.eh_frame` is taken to lie at.
    pub eh_frame_address: u64,
}

/// What one jitdump file holds: its code with names (`names`) and the
/// unwind tables of the code that has one.
#[derive(Default)]
pub struct Jitdump {
    pub code: Vec<(u64, u64, String)>,
    pub unwind: Vec<JitUnwind>,
}

/// The code a jitdump file describes: [start, end) and the name the
/// runtime gave it, later records replacing what they overlap (code is
/// freed and its memory reused). A file cut short (the runtime was still
/// writing, or was killed) gives the records before the cut.
pub fn parse_jitdump(b: &[u8]) -> Vec<(u64, u64, String)> {
    parse(b).code
}

/// Reads a jitdump file: code loads and moves for names, and unwinding
/// records (each describes the code load that follows it).
pub fn parse(b: &[u8]) -> Jitdump {
    let mut code: BTreeMap<u64, (u64, String)> = BTreeMap::new();
    let mut unwind = Vec::new();
    if u32_at(b, 0) != Some(JITDUMP_MAGIC) {
        return Jitdump::default();
    }
    let Some(header) = u32_at(b, 8) else {
        return Jitdump::default();
    };
    let mut at = header as usize;
    let mut names: HashMap<u64, String> = HashMap::new();
    // The unwinding record waiting for its code: the .eh_frame's range.
    let mut pending: Option<std::ops::Range<usize>> = None;
    while let (Some(id), Some(size)) = (u32_at(b, at), u32_at(b, at + 4)) {
        let size = size as usize;
        if size < 16 || at + size > b.len() {
            break;
        }
        let body = &b[at + 16..at + size];
        match id {
            JIT_CODE_LOAD => {
                // pid, tid, vma, code_addr, code_size, code_index, name.
                if let (Some(addr), Some(len), Some(index)) =
                    (u64_at(body, 16), u64_at(body, 24), u64_at(body, 32))
                {
                    let rest = body.get(40..).unwrap_or(&[]);
                    let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
                    let name = String::from_utf8_lossy(&rest[..end]).into_owned();
                    names.insert(index, name.clone());
                    insert(&mut code, addr, addr.saturating_add(len.max(1)), name);
                    if let Some(eh_frame) = pending.take() {
                        unwind.push(JitUnwind {
                            code: addr..addr.saturating_add(len),
                            eh_frame,
                            eh_frame_address: addr.saturating_add(len).next_multiple_of(8),
                        });
                    }
                }
            }
            JIT_CODE_UNWINDING_INFO => {
                // unwinding_size, eh_frame_hdr_size, mapped_size, then the
                // .eh_frame followed by its .eh_frame_hdr.
                if let (Some(size), Some(hdr)) = (u64_at(body, 0), u64_at(body, 8)) {
                    let start = at + 16 + 24;
                    let table = size.saturating_sub(hdr) as usize;
                    if size as usize <= body.len().saturating_sub(24) && table > 0 {
                        pending = Some(start..start + table);
                    }
                }
            }
            JIT_CODE_MOVE => {
                // pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index.
                if let (Some(addr), Some(len), Some(index)) =
                    (u64_at(body, 24), u64_at(body, 32), u64_at(body, 40))
                {
                    if let Some(name) = names.get(&index).cloned() {
                        insert(&mut code, addr, addr.saturating_add(len.max(1)), name);
                    }
                }
            }
            _ => {}
        }
        at += size;
    }
    Jitdump {
        code: code.into_iter().map(|(s, (e, n))| (s, e, n)).collect(),
        unwind,
    }
}

fn insert(code: &mut BTreeMap<u64, (u64, String)>, start: u64, end: u64, name: String) {
    let overlapping: Vec<u64> = code
        .range(..end)
        .filter(|(&s, (e, _))| s < end && *e > start)
        .map(|(&s, _)| s)
        .collect();
    for s in overlapping {
        code.remove(&s);
    }
    code.insert(start, (end, name));
}

/// Is this mapped file a jitdump (`jit-PID.dump`)? Its pid if so.
pub fn jitdump_pid(path: &str) -> Option<u32> {
    let file = path.rsplit('/').next()?;
    file.strip_prefix("jit-")?
        .strip_suffix(".dump")?
        .parse()
        .ok()
}

/// Is this mapping a file (rather than anonymous memory, `//anon`,
/// `[anon:…]`, `[vdso]`, where JIT code lives)?
pub fn is_file(path: &str) -> bool {
    path.starts_with('/') && !path.starts_with("//")
}

/// `/tmp/perf-PID.map`: `START SIZE name` in hex, one symbol a line.
pub fn parse_perf_map(text: &str) -> Vec<(u64, u64, String)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            let start = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
            let size = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
            Some((start, size, it.next()?.trim().to_string()))
        })
        .collect()
}

/// The JIT code of one run's processes, from the jitdump files they
/// mapped (runtimes map the file so that profilers find it) and their
/// perf maps; a jitdump's name wins where both have one.
#[derive(Default)]
pub struct JitCode {
    code: HashMap<u32, Vec<(u64, u64, String)>>,
    /// The jitdump files read, to remove once the run is named.
    pub files: Vec<String>,
}

impl JitCode {
    /// Reads the jitdump files the processes of a run mapped.
    /// `maps`: each process and the paths of its mappings.
    pub fn of_run<'a, P: Iterator<Item = &'a str>>(
        maps: impl Iterator<Item = (u32, P)>,
    ) -> JitCode {
        let mut out = JitCode::default();
        for (pid, paths) in maps {
            for path in paths {
                if jitdump_pid(path).is_none() || out.files.iter().any(|f| f == path) {
                    continue;
                }
                if let Ok(bytes) = std::fs::read(path) {
                    out.code
                        .entry(pid)
                        .or_default()
                        .extend(parse_jitdump(&bytes));
                    out.files.push(path.to_string());
                }
            }
            if let Ok(text) = std::fs::read_to_string(format!("/tmp/perf-{pid}.map")) {
                let code = out.code.entry(pid).or_default();
                let mut all: BTreeMap<u64, (u64, String)> = BTreeMap::new();
                // The map first, so that the jitdump's entries replace it.
                for (start, size, name) in parse_perf_map(&text) {
                    insert(&mut all, start, start.saturating_add(size.max(1)), name);
                }
                for (start, end, name) in code.drain(..) {
                    insert(&mut all, start, end, name);
                }
                code.extend(all.into_iter().map(|(s, (e, n))| (s, e, n)));
            }
        }
        for v in out.code.values_mut() {
            v.sort_by_key(|c| c.0);
        }
        out
    }

    /// The runtime's name for the code at `addr` in process `pid`.
    pub fn name(&self, pid: u32, addr: u64) -> Option<&str> {
        let code = self.code.get(&pid)?;
        let i = code.partition_point(|c| c.0 <= addr);
        let (start, end, name) = code.get(i.checked_sub(1)?)?;
        (*start <= addr && addr < *end).then_some(name.as_str())
    }
}

/// Removes the perf maps, jitdump files and V8 logs a run's processes
/// wrote at the option's request, once the run is named: a runtime writes
/// them per process and never removes them. Only files written since `since` (the
/// run's start) are removed, so a file of an earlier process with a reused
/// pid stays.
pub fn remove_written(
    pids: impl Iterator<Item = u32>,
    jitdumps: &[String],
    since: std::time::SystemTime,
) {
    let written_since = |path: &str| {
        std::fs::symlink_metadata(path)
            .and_then(|m| {
                if m.is_file() {
                    m.modified()
                } else {
                    Err(std::io::Error::other("not a file"))
                }
            })
            .is_ok_and(|t| t >= since)
    };
    let pids: Vec<u32> = pids.collect();
    let maps = pids
        .iter()
        .flat_map(|p| [format!("/tmp/perf-{p}.map"), format!("/tmp/jit-{p}.dump")]);
    // Node's --perf-basic-prof also starts V8's log, `isolate-0xADDR-PID-v8.log`
    // in the working directory the run had (cmdscope's: profiled runs
    // keep it).
    let v8_logs: Vec<String> = std::fs::read_dir(".")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix("isolate-0x")
                .and_then(|r| r.strip_suffix("-v8.log"))
                .and_then(|r| r.rsplit_once('-'))
                .and_then(|(_, pid)| pid.parse::<u32>().ok())
                .is_some_and(|pid| pids.contains(&pid))
        })
        .collect();
    for path in maps.chain(jitdumps.iter().cloned()).chain(v8_logs) {
        if written_since(&path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_maps_are_read_as_runtimes_write_them() {
        let m = parse_perf_map("7f00a000 40 py::hot:/x.py\n0x10 0x8 LazyCompile:*f a.js\nbad\n");
        assert_eq!(m[0], (0x7f00a000, 0x40, "py::hot:/x.py".to_string()));
        assert_eq!(m[1], (0x10, 0x8, "LazyCompile:*f a.js".to_string()));
        assert_eq!(m.len(), 2);
    }

    fn env(vars: &[&str]) -> Vec<CString> {
        vars.iter().map(|v| CString::new(*v).unwrap()).collect()
    }

    #[test]
    fn the_options_join_what_the_user_set() {
        let out = with_runtime_options(env(&[
            "NODE_OPTIONS=--max-old-space-size=64",
            "PYTHONPERFSUPPORT=0",
        ]));
        let text: Vec<String> = out
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        assert!(text.contains(&"NODE_OPTIONS=--max-old-space-size=64 --perf-basic-prof --interpreted-frames-native-stack".to_string()), "{text:?}");
        // A user's own choice for a yes/no variable stays.
        assert!(
            text.contains(&"PYTHONPERFSUPPORT=0".to_string()),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.starts_with("JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions")),
            "{text:?}"
        );
        assert!(
            text.contains(&"PYTHON_PERF_JIT_SUPPORT=1".to_string()),
            "{text:?}"
        );
    }

    fn record(id: u32, body: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&id.to_ne_bytes());
        r.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        r.extend_from_slice(&0u64.to_ne_bytes());
        r.extend_from_slice(body);
        r
    }

    fn load(addr: u64, size: u64, index: u64, name: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&1u32.to_ne_bytes());
        b.extend_from_slice(&1u32.to_ne_bytes());
        for v in [addr, addr, size, index] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b.extend_from_slice(&vec![0x90; size as usize]);
        record(JIT_CODE_LOAD, &b)
    }

    #[test]
    fn jitdumps_name_their_code_and_later_loads_replace_earlier_ones() {
        let mut f = Vec::new();
        f.extend_from_slice(&JITDUMP_MAGIC.to_ne_bytes());
        f.extend_from_slice(&1u32.to_ne_bytes());
        f.extend_from_slice(&40u32.to_ne_bytes());
        f.extend_from_slice(&[0; 28]);
        f.extend(load(0x1000, 0x40, 1, "py::hot:/x.py"));
        f.extend(load(0x2000, 0x10, 2, "py::old:/x.py"));
        // Freed and reused: the new code replaces the old.
        f.extend(load(0x2000, 0x20, 3, "py::new:/x.py"));
        // A record cut short is ignored.
        let mut cut = load(0x3000, 0x10, 4, "cut");
        cut.truncate(20);
        f.extend(cut);
        let code = parse_jitdump(&f);
        assert_eq!(
            code,
            vec![
                (0x1000, 0x1040, "py::hot:/x.py".to_string()),
                (0x2000, 0x2020, "py::new:/x.py".to_string())
            ]
        );
        assert_eq!(jitdump_pid("/tmp/jit-1234.dump"), Some(1234));
        assert_eq!(jitdump_pid("/tmp/jit-x.dump"), None);
        assert!(parse_jitdump(b"not a dump").is_empty());
    }
}
