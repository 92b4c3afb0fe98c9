//! The terminal report: caveat, process tree (runs of similar siblings
//! summarised), totals, top syscalls, monitor counts, hints.

use std::fmt::Write as _;

use super::hints::thousands;
use super::json::syscall_rows;
use super::procfs::Argv;
use super::tracer::{Created, Exit};
use super::tree::{basename, Model};
use super::Explained;
use crate::units;

/// Siblings alike (same program, method and shell status) shown before the
/// rest of the run is summarised in one line.
const SHOWN_ALIKE: usize = 2;
/// Lines of tree printed at most (without --full-tree).
const MAX_TREE_LINES: usize = 400;
/// Characters of command line shown per process.
const ARGV_CHARS: usize = 48;
/// Environment size per exec worth a note in the tree.
const LARGE_ENV: u64 = 16 * 1024;
/// Levels of indentation drawn; deeper levels are drawn at this depth.
const MAX_INDENT: usize = 24;

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Shortens text to `max` characters with an ellipsis in the middle.
pub fn shorten(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max || max < 5 {
        return text.to_string();
    }
    let head = (max - 1) * 2 / 3;
    let tail = max - 1 - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// A command line for display: words joined, quoted when they need it.
pub fn show_argv(argv: &Argv) -> String {
    let mut out = String::new();
    for (i, w) in argv.words().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let w = lossy(w);
        if w.is_empty()
            || w.chars()
                .any(|c| c.is_whitespace() || "'\"$;&|<>()*?`\\".contains(c))
        {
            out.push('\'');
            out.push_str(&w.replace('\'', "'\\''"));
            out.push('\'');
        } else {
            out.push_str(&w);
        }
    }
    if argv.truncated || argv.words().count() < argv.argc as usize {
        out.push_str(" …");
    }
    out.replace(['\n', '\r', '\t'], " ")
}

fn describe(model: &Model, pi: usize) -> String {
    let p = &model.processes[pi];
    match p.argv() {
        Some(a) if a.argc > 0 => shorten(&show_argv(a), ARGV_CHARS),
        _ => match p.last_exec() {
            Some(e) => shorten(&lossy(&e.path), ARGV_CHARS),
            // A copy of its parent that never exec'd (a subshell, a worker).
            None => match model.creator_program(pi) {
                Some(prog) => format!("(copy of {}, no exec)", lossy(basename(prog))),
                None => "(no exec)".to_string(),
            },
        },
    }
}

fn exit_text(exit: Option<Exit>) -> String {
    match exit {
        Some(Exit::Code(c)) => c.to_string(),
        Some(Exit::Signal(s)) => format!("sig {s}"),
        None => "-".to_string(),
    }
}

fn opt_time(t: Option<f64>) -> String {
    t.map_or("-".to_string(), units::time)
}

/// What the left column shows for one line, and the figures.
struct Row {
    left: String,
    wall: String,
    user: String,
    sys: String,
    read: String,
    written: String,
    exit: String,
    note: String,
}

enum Item {
    Process(usize),
    /// A run of alike siblings not shown: their indices.
    Summary(Vec<usize>),
}

/// Program basename, creation method, intermediate shell or not.
type AlikeKey = (Vec<u8>, Created, bool);

fn alike_key(model: &Model, pi: usize) -> AlikeKey {
    let p = &model.processes[pi];
    (
        basename(p.program()).to_vec(),
        p.created_by,
        p.shell.is_some(),
    )
}

/// The children of `pi` as items: runs of alike siblings beyond
/// `SHOWN_ALIKE` become one summary.
fn items(model: &Model, children: &[usize], full: bool) -> Vec<Item> {
    if full {
        return children.iter().map(|&c| Item::Process(c)).collect();
    }
    let mut groups: Vec<(AlikeKey, Vec<usize>)> = Vec::new();
    let mut index: std::collections::HashMap<AlikeKey, usize> = std::collections::HashMap::new();
    for &c in children {
        let key = alike_key(model, c);
        match index.get(&key) {
            Some(&g) => groups[g].1.push(c),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![c]));
            }
        }
    }
    let mut out = Vec::new();
    for (_, members) in groups {
        if members.len() > SHOWN_ALIKE + 1 {
            out.extend(members[..SHOWN_ALIKE].iter().map(|&c| Item::Process(c)));
            out.push(Item::Summary(members[SHOWN_ALIKE..].to_vec()));
        } else {
            out.extend(members.into_iter().map(Item::Process));
        }
    }
    out
}

fn count_descendants(model: &Model, roots: &[usize]) -> usize {
    let mut n = 0;
    let mut stack: Vec<usize> = roots.to_vec();
    while let Some(p) = stack.pop() {
        n += 1;
        stack.extend(model.processes[p].children.iter().copied());
    }
    n
}

fn process_row(model: &Model, pi: usize, prefix: &str) -> Row {
    let p = &model.processes[pi];
    let method = if p.root {
        "".to_string()
    } else {
        format!("{} ", p.created_by.name())
    };
    let mut notes = Vec::new();
    if let Some(hop) = &p.shell {
        notes.push(format!(
            "intermediate shell → {}",
            shorten(&lossy(&hop.then), 40)
        ));
    } else if p.exec_count > 1 {
        notes.push(format!("{} execs", p.exec_count));
    }
    if let Some(env) = p.last_exec().and_then(|e| e.env_bytes) {
        if env >= LARGE_ENV {
            notes.push(format!("environment {}", units::bytes(env as f64)));
        }
    }
    if !p.threads.is_empty() {
        notes.push(format!(
            "+{}",
            if p.threads.len() == 1 {
                "1 thread".to_string()
            } else {
                format!("{} threads", thousands(p.threads.len() as u64))
            }
        ));
    }
    Row {
        left: format!("{prefix}{} {method}{}", p.pid, describe(model, pi)),
        wall: opt_time(p.wall()),
        user: units::time(p.user),
        sys: units::time(p.sys),
        read: units::bytes(p.io.rchar as f64),
        written: units::bytes(p.io.wchar as f64),
        exit: exit_text(p.exit),
        note: notes.join(", "),
    }
}

fn summary_row(model: &Model, members: &[usize], prefix: &str) -> Row {
    let first = &model.processes[members[0]];
    let mut wall = 0.0;
    let (mut user, mut sys, mut read, mut written) = (0.0, 0.0, 0u64, 0u64);
    let mut failed = 0usize;
    for &m in members {
        let p = &model.processes[m];
        wall += p.wall().unwrap_or(0.0);
        user += p.user;
        sys += p.sys;
        read += p.io.rchar;
        written += p.io.wchar;
        if !matches!(p.exit, Some(Exit::Code(0))) {
            failed += 1;
        }
    }
    let hidden = count_descendants(model, members) - members.len();
    let mut note = if failed == 0 {
        "all exited 0".to_string()
    } else {
        format!("{} did not exit 0", thousands(failed as u64))
    };
    if hidden > 0 {
        note.push_str(&format!(
            ", {} descendants not shown",
            thousands(hidden as u64)
        ));
    }
    let method = if first.root {
        String::new()
    } else {
        format!("{} ", first.created_by.name())
    };
    let program = lossy(basename(first.program()));
    let program = if !program.is_empty() {
        program
    } else {
        match model.creator_program(members[0]) {
            Some(prog) => format!("(copies of {}, no exec)", lossy(basename(prog))),
            None => "(no exec)".to_string(),
        }
    };
    Row {
        left: format!(
            "{prefix}… {} more {method}{program}{}",
            thousands(members.len() as u64),
            if first.shell.is_some() {
                " (intermediate shells)"
            } else {
                ""
            }
        ),
        wall: format!("Σ {}", units::time(wall)),
        user: units::time(user),
        sys: units::time(sys),
        read: units::bytes(read as f64),
        written: units::bytes(written as f64),
        exit: String::new(),
        note,
    }
}

fn tree_rows(model: &Model, full: bool) -> (Vec<Row>, usize) {
    let mut rows = Vec::new();
    // (item, prefix for this line, prefix for its children)
    let mut stack: Vec<(Item, String, String)> = Vec::new();
    for &r in model.roots.iter().rev() {
        stack.push((Item::Process(r), String::new(), String::new()));
    }
    let mut left_out = 0usize;
    while let Some((item, prefix, child_prefix)) = stack.pop() {
        if !full && rows.len() >= MAX_TREE_LINES {
            left_out += match item {
                Item::Process(p) => count_descendants(model, &[p]),
                Item::Summary(m) => count_descendants(model, &m),
            };
            continue;
        }
        match item {
            Item::Summary(members) => rows.push(summary_row(model, &members, &prefix)),
            Item::Process(pi) => {
                rows.push(process_row(model, pi, &prefix));
                let kids = items(model, &model.processes[pi].children, full);
                let n = kids.len();
                let depth = child_prefix.chars().count() / 3;
                for (i, kid) in kids.into_iter().enumerate().rev() {
                    let last = i + 1 == n;
                    let (this, next) = if depth >= MAX_INDENT {
                        (child_prefix.clone(), child_prefix.clone())
                    } else {
                        (
                            format!("{child_prefix}{}", if last { "└─ " } else { "├─ " }),
                            format!("{child_prefix}{}", if last { "   " } else { "│  " }),
                        )
                    };
                    stack.push((kid, this, next));
                }
            }
        }
    }
    (rows, left_out)
}

pub const CAVEAT_LINE: &str = "Traced with ptrace: every system call stopped the program, so this run was slower than an untraced one and the times are indicative (measure with 'cmdscope run').";

pub fn render(x: &Explained, top: usize, full_tree: bool) -> String {
    let model = &x.model;
    let trace = &x.trace;
    let mut out = String::new();
    let command = x
        .command
        .iter()
        .map(|w| lossy(w))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(out, "explain: {}", shorten(&command, 100));
    let _ = writeln!(out, "{CAVEAT_LINE}");
    let root = model.processes.first();
    let mut status = match root.and_then(|r| r.exit) {
        Some(Exit::Code(c)) => format!("exit code {c}"),
        Some(Exit::Signal(s)) => format!("killed by signal {s}"),
        None => "exit status unknown".to_string(),
    };
    if trace.timed_out {
        status.push_str(", killed at the timeout");
    }
    if trace.interrupted {
        status.push_str(", interrupted");
    }
    let _ = writeln!(
        out,
        "Traced run: {} wall, {status}.",
        units::time(trace.wall)
    );

    // The tree.
    let (rows, left_out) = tree_rows(model, full_tree);
    const TREE_HEADER: &str = "Process tree (pid, created by, command)";
    let width = rows
        .iter()
        .map(|r| r.left.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(TREE_HEADER.len(), 90);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<width$}  {:>11} {:>10} {:>10} {:>10} {:>10} {:>5}",
        TREE_HEADER, "wall", "user", "sys", "read", "written", "exit"
    );
    for r in &rows {
        let pad = width.saturating_sub(r.left.chars().count());
        let _ = write!(
            out,
            "{}{}  {:>11} {:>10} {:>10} {:>10} {:>10} {:>5}",
            r.left,
            " ".repeat(pad),
            r.wall,
            r.user,
            r.sys,
            r.read,
            r.written,
            r.exit
        );
        if !r.note.is_empty() {
            let _ = write!(out, "  {}", r.note);
        }
        out.push('\n');
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "… {} more processes not shown (--full-tree, or --json for all of them)",
            thousands(left_out as u64)
        );
    }

    // Totals.
    let _ = writeln!(out);
    let [fork, vfork, thread] = model.spawns;
    let _ = writeln!(
        out,
        "Created: {} (fork-style {}, vfork-style {}), {}",
        if fork + vfork == 1 {
            "1 process".to_string()
        } else {
            format!("{} processes", thousands(fork + vfork))
        },
        thousands(fork),
        thousands(vfork),
        if thread == 1 {
            "1 thread".to_string()
        } else {
            format!("{} threads", thousands(thread))
        }
    );
    let ex = &trace.execs;
    let mut execs = format!("Execs: {}", thousands(ex.count));
    if ex.failed > 0 {
        let _ = write!(
            execs,
            " (+{} failed, e.g. PATH search)",
            thousands(ex.failed)
        );
    }
    if ex.env_measured > 0 {
        let mean = ex.env_bytes_total as f64 / ex.env_measured as f64;
        let _ = write!(
            execs,
            "; environment passed per exec: {} on average, {} at most",
            units::bytes(mean),
            units::bytes(ex.env_bytes_max as f64)
        );
        if ex.env_vars_max > 0 {
            let _ = write!(execs, " (up to {} variables)", thousands(ex.env_vars_max));
        }
    }
    let _ = writeln!(out, "{execs}");
    let shells: Vec<_> = model.intermediate_shells().collect();
    if shells.is_empty() {
        let _ = writeln!(out, "Intermediate shells: none");
    } else {
        let mut by_then: std::collections::BTreeMap<String, usize> = Default::default();
        for (_, s) in &shells {
            *by_then
                .entry(format!("{} -c → {}", lossy(&s.shell), lossy(&s.then)))
                .or_default() += 1;
        }
        let list: Vec<String> = by_then
            .into_iter()
            .map(|(k, n)| format!("{k} ×{}", thousands(n as u64)))
            .collect();
        let _ = writeln!(
            out,
            "Intermediate shells: {} ({})",
            thousands(shells.len() as u64),
            shorten(&list.join(", "), 200)
        );
    }
    let io = model.total_io();
    let _ = writeln!(
        out,
        "I/O: read {}, wrote {} through system calls; storage read {}, written {}",
        units::bytes(io.rchar as f64),
        units::bytes(io.wchar as f64),
        units::bytes(io.read_bytes as f64),
        units::bytes(io.write_bytes as f64)
    );
    if !x.dirs.is_empty() {
        let list: Vec<String> = x
            .dirs
            .iter()
            .take(5)
            .map(|(d, b, tmpfs)| {
                format!(
                    "{} {}{}",
                    d.display(),
                    units::bytes(*b as f64),
                    if *tmpfs { " (tmpfs)" } else { "" }
                )
            })
            .collect();
        let _ = writeln!(out, "Written by directory: {}", list.join(", "));
    }

    // Syscalls.
    if top > 0 {
        let rows = syscall_rows(trace);
        let calls: u64 = rows.iter().map(|r| r.1).sum();
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "System calls: {} calls of {} kinds; top {} by time inside them (entry to exit, traced):",
            thousands(calls),
            rows.len(),
            top.min(rows.len())
        );
        if !rows.is_empty() {
            let _ = writeln!(
                out,
                "  {:<22} {:>10} {:>11} {:>11}",
                "syscall", "calls", "time", "per call"
            );
        }
        for (name, count, seconds) in rows.iter().take(top) {
            let _ = writeln!(
                out,
                "  {:<22} {:>10} {:>11} {:>11}",
                name,
                thousands(*count),
                units::time(*seconds),
                units::time(seconds / (*count).max(1) as f64)
            );
        }
    }

    if let Some(m) = &x.monitor {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Monitor '{}': {} lines while the command ran",
            shorten(&m.command, 80),
            thousands(m.counts.lines)
        );
        for (i, p) in m.patterns.iter().enumerate() {
            let during = m.counts.during.get(i).copied().unwrap_or(0);
            let before = m.counts.before.get(i).copied().unwrap_or(0);
            let _ = write!(out, "  {:>8}  {}", thousands(during), p);
            if before > 0 {
                let _ = write!(
                    out,
                    "   ({} before the command started, not counted)",
                    thousands(before)
                );
            }
            out.push('\n');
        }
        if !m.killed {
            let how = match (m.exit_code, m.signal) {
                (Some(c), _) => format!("exit status {c}"),
                (_, Some(s)) => format!("signal {s}"),
                _ => "unknown status".into(),
            };
            let _ = writeln!(out, "  (the monitor ended by itself before the end: {how})");
        }
    }

    let _ = writeln!(out);
    if x.hints.is_empty() {
        let _ = writeln!(out, "Hints: none.");
    } else {
        let _ = writeln!(out, "Hints:");
        for h in &x.hints {
            let _ = writeln!(out, "  - {}", h.message);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_in_the_middle() {
        assert_eq!(shorten("short", 10), "short");
        let s = shorten("abcdefghijklmnopqrstuvwxyz", 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.starts_with("abcdef") && s.ends_with("xyz"), "{s}");
    }

    #[test]
    fn quotes_words_that_need_it() {
        let a = Argv::from_cmdline(b"sh\0-c\0echo 'hi'; ls\0\0", true);
        assert_eq!(show_argv(&a), r#"sh -c 'echo '\''hi'\''; ls' ''"#);
    }
}
