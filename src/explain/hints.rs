//! Hints in plain words, each carrying the numbers that back it. Pure given
//! the model and the trace (the tmpfs check is passed in as a function).

use std::collections::BTreeMap;
use std::path::Path;

use super::tracer::Trace;
use super::tree::{basename, Model};
use crate::units;

/// Fork-style creations followed by exec, from one program, before we say so.
pub const FORK_HINT_MIN: u64 = 10;
/// Mean environment size per exec worth a hint.
pub const ENV_HINT_BYTES: u64 = 64 * 1024;
/// Bytes written under one directory worth suggesting tmpfs.
pub const TMPFS_HINT_BYTES: u64 = 16 * 1024 * 1024;
/// Failed exec attempts (PATH search) worth a hint.
pub const PATH_HINT_MIN: u64 = 10;
/// Share of the wall time before the command's final exec worth a hint.
pub const WRAPPER_HINT_SHARE: f64 = 0.5;
/// Seconds before the final exec worth a hint (a `nice` or `env` in front
/// of a short program is no wrapper worth naming).
pub const WRAPPER_HINT_SECONDS: f64 = 0.005;

#[derive(Clone, Debug, PartialEq)]
pub struct Hint {
    /// wrapper, fork, shell, environment, tmpfs, path-search.
    pub kind: &'static str,
    pub message: String,
    /// The numbers behind the message (seconds, bytes, counts).
    pub numbers: Vec<(&'static str, f64)>,
}

/// "10,000".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Facts about the environment the hints depend on.
pub struct Context<'a> {
    /// The tracing user is root (euid 0).
    pub as_root: bool,
    /// Whether a directory (as keyed in the trace) is on tmpfs.
    pub on_tmpfs: &'a dyn Fn(&Path) -> bool,
}

pub fn hints(model: &Model, trace: &Trace, ctx: &Context) -> Vec<Hint> {
    let mut out = Vec::new();
    wrapper_hint(model, trace, &mut out);
    fork_hint(model, trace, ctx, &mut out);
    shell_hint(model, &mut out);
    env_hint(trace, &mut out);
    tmpfs_hint(trace, ctx, &mut out);
    path_hint(trace, &mut out);
    out
}

/// The command's process exec'd one program after another (a shim or a
/// wrapper script that ends in `exec`): when most of the wall time passed
/// before the last of them, the final program, that time was the wrappers'.
fn wrapper_hint(model: &Model, trace: &Trace, out: &mut Vec<Hint>) {
    let Some(root) = model.processes.iter().find(|p| p.root) else {
        return;
    };
    let Some(last) = root.last_exec() else {
        return;
    };
    if root.exec_count < 2 || trace.wall <= 0.0 {
        return;
    }
    let before = (last.at - root.start).max(0.0);
    let share = before / trace.wall;
    if share < WRAPPER_HINT_SHARE || before < WRAPPER_HINT_SECONDS {
        return;
    }
    // The programs the command's process became, in order (the oldest
    // execs may not be kept).
    let mut chain: Vec<String> = Vec::new();
    if root.exec_count as usize > root.execs.len() {
        chain.push("…".into());
    }
    chain.extend(root.execs.iter().map(exec_label));
    // The processes started before the final exec, by the program each ran:
    // its own, or (a subshell that never exec'd) its creator's.
    let mut by_program: BTreeMap<String, u64> = BTreeMap::new();
    let mut started = 0;
    for (pi, p) in model.processes.iter().enumerate() {
        if p.root || p.start >= last.at {
            continue;
        }
        started += 1;
        let program = p
            .last_exec()
            .or_else(|| model.creator_exec(pi))
            .map_or_else(|| "?".to_string(), exec_label);
        *by_program.entry(program).or_default() += 1;
    }
    let mut groups: Vec<(String, u64)> = by_program.into_iter().collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut listed: Vec<String> = groups
        .iter()
        .take(4)
        .map(|(program, n)| format!("{program} {}", thousands(*n)))
        .collect();
    if groups.len() > 4 {
        listed.push(format!("{} more programs", groups.len() - 4));
    }
    let processes = if started == 0 {
        String::new()
    } else {
        format!(
            ", and {} ran before it ({})",
            plural(started, "process", "processes"),
            listed.join(", ")
        )
    };
    let final_program = lossy(basename(&last.path));
    out.push(Hint {
        kind: "wrapper",
        message: format!(
            "{:.0}% of the wall time ({} of {}) passed before the final program, {final_program}, started: the command's process went through {}{processes}; start {final_program} directly to leave that time out",
            share * 100.0,
            units::time(before),
            units::time(trace.wall),
            chain.join(" → "),
        ),
        numbers: vec![
            ("seconds_before_final_exec", before),
            ("wall_seconds", trace.wall),
            ("share_before_final_exec", share),
            ("execs_before_final", (root.exec_count - 1) as f64),
            ("processes_before_final_exec", started as f64),
        ],
    });
}

/// A program as exec'd: the file's name, and the interpreter that runs it
/// when that is another program (a script: `python3 (bash)`).
fn exec_label(e: &super::tracer::Exec) -> String {
    let name = basename(&e.path);
    match e.argv.words().next().map(basename) {
        Some(first) if !first.is_empty() && first != name => {
            format!("{} ({})", lossy(name), lossy(first))
        }
        _ => lossy(name),
    }
}

fn fork_hint(model: &Model, trace: &Trace, ctx: &Context, out: &mut Vec<Hint>) {
    // Fork-style children that exec'd, by the program that created them:
    // those could have been created vfork-style (posix_spawn).
    let mut by_creator: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for (pi, p) in model.processes.iter().enumerate() {
        if p.root
            || p.created_by != super::tracer::Created::Fork
            || p.exec_count == 0
            || p.parent.is_none()
        {
            continue;
        }
        let creator = model
            .creator_program(pi)
            .map_or(b"?".to_vec(), |c| basename(c).to_vec());
        *by_creator.entry(creator).or_default() += 1;
    }
    let mut groups: Vec<(Vec<u8>, u64)> = by_creator.into_iter().collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let [forks, vforks, _] = model.spawns;
    let fork_mean = (forks > 0).then(|| trace.spawn_seconds[0] / forks as f64);
    let vfork_mean = (vforks > 0).then(|| trace.spawn_seconds[1] / vforks as f64);
    for (creator, count) in groups {
        if count < FORK_HINT_MIN {
            continue;
        }
        let root = if ctx.as_root { " (as root)" } else { "" };
        let mut message = format!(
            "{} were created with fork by {}{root} and then exec'd another program",
            plural(count, "process", "processes"),
            lossy(&creator),
        );
        let mut numbers = vec![("processes", count as f64)];
        // The claim that vfork-style creation is cheaper is made only where
        // this trace's own figures do not say otherwise: both are times
        // from creation to the child's exec, and vfork-style children that
        // do more before their exec (or other programs' children) can take
        // longer than these forks did.
        const CHEAPER: &str = "; vfork-style creation (posix_spawn) is usually 2–3x cheaper";
        match (fork_mean, vfork_mean) {
            (Some(f), Some(v)) if v < f => message.push_str(&format!(
                "{CHEAPER} (here, traced: fork {} per call, vfork-style {})",
                units::time(f),
                units::time(v)
            )),
            (Some(f), Some(v)) => message.push_str(&format!(
                " (here, traced from creation to exec: fork {} per call; the vfork-style \
                 creations traced took {}, no less, so no saving is claimed: they are other \
                 children doing other work before their exec)",
                units::time(f),
                units::time(v)
            )),
            (Some(f), None) => message.push_str(&format!(
                "{CHEAPER} (here, traced: fork {} per call)",
                units::time(f)
            )),
            (None, _) => message.push_str(CHEAPER),
        }
        if let Some(f) = fork_mean {
            numbers.push(("fork_seconds_mean", f));
        }
        if let Some(v) = vfork_mean {
            numbers.push(("vfork_seconds_mean", v));
        }
        if ctx.as_root {
            message.push_str(
                "; some runtimes (Ruby among them) use vfork only when not running as root",
            );
        }
        out.push(Hint {
            kind: "fork",
            message,
            numbers,
        });
    }
}

fn shell_hint(model: &Model, out: &mut Vec<Hint>) {
    // Per creator: (intermediate shells, programs started, shell path, overhead sum).
    let mut by_creator: BTreeMap<Vec<u8>, (u64, u64, Vec<u8>, f64)> = BTreeMap::new();
    for (pi, p) in model.processes.iter().enumerate() {
        if p.parent.is_none() || p.exec_count == 0 {
            continue;
        }
        // A child of an intermediate shell is counted through the shell.
        if let Some(parent) = p.parent {
            if model.processes[parent]
                .shell
                .as_ref()
                .is_some_and(|s| !s.in_place)
            {
                continue;
            }
        }
        let creator = model
            .creator_program(pi)
            .map_or(b"?".to_vec(), |c| basename(c).to_vec());
        let entry = by_creator.entry(creator).or_default();
        entry.1 += 1;
        if let Some(hop) = &p.shell {
            entry.0 += 1;
            entry.2 = hop.shell.clone();
            entry.3 += hop.overhead;
        }
    }
    for (creator, (shells, programs, shell, overhead)) in by_creator {
        if shells == 0 {
            continue;
        }
        let mean = overhead / shells as f64;
        let shell = lossy(&shell);
        let message = if shells == programs && shells > 1 {
            format!(
                "every call went through {shell} -c: all {} programs started by {} ran through an intermediate shell, about {} each (traced); run them directly",
                thousands(shells),
                lossy(&creator),
                units::time(mean)
            )
        } else if shells == programs {
            format!(
                "the program started by {} went through {shell} -c, an intermediate shell costing about {} (traced); run it directly",
                lossy(&creator),
                units::time(mean)
            )
        } else {
            format!(
                "{} of {} programs started by {} went through {shell} -c (an intermediate shell, about {} each, traced); run them directly",
                thousands(shells),
                thousands(programs),
                lossy(&creator),
                units::time(mean)
            )
        };
        out.push(Hint {
            kind: "shell",
            message,
            numbers: vec![
                ("intermediate_shells", shells as f64),
                ("programs_started", programs as f64),
                ("shell_seconds_mean", mean),
            ],
        });
    }
}

fn env_hint(trace: &Trace, out: &mut Vec<Hint>) {
    let e = &trace.execs;
    if e.env_measured == 0 {
        return;
    }
    let mean = e.env_bytes_total / e.env_measured;
    if mean < ENV_HINT_BYTES {
        return;
    }
    let min = e.env_bytes_min.unwrap_or(mean);
    let size = if e.env_bytes_max - min <= e.env_bytes_max / 10 {
        format!("a {} environment", units::bytes(mean as f64))
    } else {
        format!(
            "an environment of {} on average (up to {})",
            units::bytes(mean as f64),
            units::bytes(e.env_bytes_max as f64)
        )
    };
    let vars = if e.env_vars_max > 0 {
        format!(
            " (up to {})",
            plural(e.env_vars_max, "variable", "variables")
        )
    } else {
        String::new()
    };
    let message = if e.env_measured == 1 {
        format!("the exec copied {size}{vars}; a smaller environment starts faster")
    } else {
        format!(
            "each exec copied {size}{vars}: {} in all over {}; pass a smaller environment to the programs started",
            units::bytes(e.env_bytes_total as f64),
            plural(e.env_measured, "exec", "execs")
        )
    };
    out.push(Hint {
        kind: "environment",
        message,
        numbers: vec![
            ("env_bytes_mean", mean as f64),
            ("env_bytes_max", e.env_bytes_max as f64),
            ("env_bytes_total", e.env_bytes_total as f64),
            ("env_vars_max", e.env_vars_max as f64),
            ("execs", e.env_measured as f64),
        ],
    });
}

fn tmpfs_hint(trace: &Trace, ctx: &Context, out: &mut Vec<Hint>) {
    let mut dirs: Vec<&(std::path::PathBuf, u64)> = trace
        .dir_writes
        .iter()
        .filter(|(_, b)| *b >= TMPFS_HINT_BYTES)
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.1));
    for (dir, bytes) in dirs {
        if (ctx.on_tmpfs)(dir) {
            continue;
        }
        out.push(Hint {
            kind: "tmpfs",
            message: format!(
                "{} written under {}: try --workdir tmpfs (a memory filesystem) to see how much of the time is storage",
                units::bytes(*bytes as f64),
                dir.display()
            ),
            numbers: vec![("bytes_written", *bytes as f64)],
        });
    }
}

fn path_hint(trace: &Trace, out: &mut Vec<Hint>) {
    let e = &trace.execs;
    if e.failed >= PATH_HINT_MIN && e.failed >= e.count {
        out.push(Hint {
            kind: "path-search",
            message: format!(
                "{} failed for {} (PATH search); call programs by absolute path or put their directory first in PATH",
                plural(e.failed, "exec attempt", "exec attempts"),
                plural(e.count, "successful exec", "successful execs")
            ),
            numbers: vec![("failed_execs", e.failed as f64), ("execs", e.count as f64)],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::tracer::Created;
    use crate::explain::tree::tests::{exec, task, trace_of};

    fn never(_: &Path) -> bool {
        false
    }

    #[test]
    fn formats_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    fn forked_children(n: usize, by: Created, shell: bool) -> crate::explain::tracer::Trace {
        let mut root = task(1, None, Created::Fork, 0.0, 10.0);
        root.execs = vec![exec(0.0, "/usr/bin/ruby", &["ruby", "x.rb"])];
        root.exec_count = 1;
        let mut tasks = vec![root];
        for i in 0..n {
            let mut t = task(10 + i as i32, Some(0), by, 1.0 + i as f64, 1.5 + i as f64);
            t.execs = if shell {
                vec![
                    exec(1.1 + i as f64, "/bin/sh", &["sh", "-c", "/bin/true"]),
                    exec(1.2 + i as f64, "/bin/true", &["/bin/true"]),
                ]
            } else {
                vec![exec(1.1 + i as f64, "/bin/true", &["/bin/true"])]
            };
            t.exec_count = t.execs.len() as u32;
            tasks.push(t);
        }
        let mut trace = trace_of(tasks);
        trace.spawn_seconds = [n as f64 * 0.001, 0.0, 0.0];
        trace
    }

    #[test]
    fn fork_hint_names_the_creator_and_root() {
        let trace = forked_children(12, Created::Fork, false);
        let model = Model::build(&trace);
        let ctx = Context {
            as_root: true,
            on_tmpfs: &never,
        };
        let h = hints(&model, &trace, &ctx);
        let fork = h.iter().find(|h| h.kind == "fork").expect("fork hint");
        assert!(
            fork.message
                .starts_with("12 processes were created with fork by ruby (as root)"),
            "{}",
            fork.message
        );
        assert!(fork.message.contains("2–3x cheaper"));
        assert!(
            fork.message.contains("1.000 ms per call"),
            "{}",
            fork.message
        );
        assert_eq!(fork.numbers[0], ("processes", 12.0));
        let ctx = Context {
            as_root: false,
            on_tmpfs: &never,
        };
        let h = hints(&model, &trace, &ctx);
        assert!(!h[0].message.contains("root"));
        // Below the threshold, or vfork-style: nothing to say.
        let trace = forked_children(9, Created::Fork, false);
        assert!(hints(&Model::build(&trace), &trace, &ctx).is_empty());
        let trace = forked_children(20, Created::Vfork, false);
        assert!(hints(&Model::build(&trace), &trace, &ctx).is_empty());
    }

    /// A version-manager shim: the command's process runs a bash script
    /// that forks 40 subshells, then execs the real interpreter at
    /// `final_at` seconds of a 520 ms run.
    fn shim(final_at: f64) -> Trace {
        let mut root = task(1, None, Created::Fork, 0.0, 0.52);
        root.execs = vec![
            exec(
                0.0,
                "/home/u/.pyenv/shims/python3",
                &["/bin/bash", "/home/u/.pyenv/shims/python3"],
            ),
            exec(final_at, "/usr/bin/python3.11", &["python3.11", "x.py"]),
        ];
        root.exec_count = 2;
        let mut tasks = vec![root];
        for i in 0..40 {
            let start = 0.01 * i as f64 * final_at / 0.5;
            tasks.push(task(10 + i, Some(0), Created::Fork, start, start + 0.005));
        }
        let mut trace = trace_of(tasks);
        trace.wall = 0.52;
        trace
    }

    #[test]
    fn the_wrapper_hint_says_the_share_before_the_final_exec_and_who_spent_it() {
        let ctx = Context {
            as_root: false,
            on_tmpfs: &never,
        };
        let trace = shim(0.48);
        let h = hints(&Model::build(&trace), &trace, &ctx);
        let w = h
            .iter()
            .find(|h| h.kind == "wrapper")
            .expect("wrapper hint");
        assert_eq!(
            w.message,
            "92% of the wall time (480.0 ms of 520.0 ms) passed before the final program, \
             python3.11, started: the command's process went through python3 (bash) → \
             python3.11, and 40 processes ran before it (python3 (bash) 40); start python3.11 \
             directly to leave that time out"
        );
        assert!(w.numbers.contains(&("processes_before_final_exec", 40.0)));
        assert!(w.numbers.contains(&("seconds_before_final_exec", 0.48)));
        // Most of the time in the final program: no wrapper worth naming.
        let trace = shim(0.1);
        let h = hints(&Model::build(&trace), &trace, &ctx);
        assert!(h.iter().all(|h| h.kind != "wrapper"), "{h:?}");
        // One exec: no wrapper at all, however long it took to come.
        let mut trace = shim(0.48);
        trace.tasks[0].execs.remove(0);
        trace.tasks[0].exec_count = 1;
        let h = hints(&Model::build(&trace), &trace, &ctx);
        assert!(h.iter().all(|h| h.kind != "wrapper"), "{h:?}");
    }

    /// `forked_children(12, Fork)` with `vforks` vfork-style children too,
    /// the traced seconds from creation to exec per method as given.
    fn forks_and_vforks(vforks: usize, fork_mean: f64, vfork_mean: f64) -> Trace {
        let mut trace = forked_children(12, Created::Fork, false);
        for i in 0..vforks {
            let mut t = task(100 + i as i32, Some(0), Created::Vfork, 2.0, 2.5);
            t.execs = vec![exec(2.1, "/bin/true", &["/bin/true"])];
            t.exec_count = 1;
            trace.tasks.push(t);
        }
        trace.spawn_seconds = [12.0 * fork_mean, vforks as f64 * vfork_mean, 0.0];
        trace
    }

    #[test]
    fn the_fork_hint_claims_no_saving_its_own_figures_contradict() {
        let ctx = Context {
            as_root: false,
            on_tmpfs: &never,
        };
        let fork_hint = |trace: &Trace| {
            let h = hints(&Model::build(trace), trace, &ctx);
            h.into_iter().find(|h| h.kind == "fork").expect("fork hint")
        };
        // Traced here: vfork-style slower than fork. No "cheaper" beside it.
        let slower = fork_hint(&forks_and_vforks(3, 213.6e-6, 1.773e-3));
        assert!(!slower.message.contains("cheaper"), "{}", slower.message);
        assert!(
            slower.message.contains("fork 213.6 µs per call")
                && slower
                    .message
                    .contains("took 1.773 ms, no less, so no saving is claimed"),
            "{}",
            slower.message
        );
        assert!(slower.numbers.contains(&("vfork_seconds_mean", 1.773e-3)));
        // Traced here: vfork-style cheaper. The claim stands, with both figures.
        let cheaper = fork_hint(&forks_and_vforks(3, 600e-6, 200e-6));
        assert!(
            cheaper.message.contains(
                "usually 2–3x cheaper (here, traced: fork 600.0 µs per call, vfork-style 200.0 µs)"
            ),
            "{}",
            cheaper.message
        );
        // Equal figures support no saving either.
        let equal = fork_hint(&forks_and_vforks(3, 500e-6, 500e-6));
        assert!(!equal.message.contains("cheaper"), "{}", equal.message);
    }

    #[test]
    fn shell_hint_when_every_call_goes_through_sh() {
        let trace = forked_children(3, Created::Vfork, true);
        let model = Model::build(&trace);
        let ctx = Context {
            as_root: false,
            on_tmpfs: &never,
        };
        let h = hints(&model, &trace, &ctx);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].kind, "shell");
        assert!(
            h[0].message
                .starts_with("every call went through /bin/sh -c"),
            "{}",
            h[0].message
        );
        assert!(h[0].message.contains("100.0 ms each"), "{}", h[0].message);
    }

    #[test]
    fn environment_tmpfs_and_path_hints() {
        let mut trace = forked_children(1, Created::Vfork, false);
        trace.execs.env_measured = 4;
        trace.execs.env_bytes_total = 4 * 310 * 1024;
        trace.execs.env_bytes_max = 310 * 1024;
        trace.execs.env_bytes_min = Some(310 * 1024);
        trace.execs.env_vars_max = 5000;
        trace.execs.count = 4;
        trace.execs.failed = 12;
        trace.dir_writes = vec![
            ("./build".into(), 64 * 1024 * 1024),
            ("/dev/shm".into(), 64 * 1024 * 1024),
            ("./small".into(), 1024),
        ];
        let model = Model::build(&trace);
        let tmpfs = |p: &Path| p == Path::new("/dev/shm");
        let ctx = Context {
            as_root: false,
            on_tmpfs: &tmpfs,
        };
        let h = hints(&model, &trace, &ctx);
        let kinds: Vec<&str> = h.iter().map(|h| h.kind).collect();
        assert_eq!(kinds, vec!["environment", "tmpfs", "path-search"]);
        assert!(
            h[0].message
                .starts_with("each exec copied a 310.0 KiB environment (up to 5,000 variables)"),
            "{}",
            h[0].message
        );
        assert_eq!(
            h[1].message.split(':').next(),
            Some("64.00 MiB written under ./build")
        );
        assert!(h[2]
            .message
            .starts_with("12 exec attempts failed for 4 successful execs"));
    }
}
