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

#[derive(Clone, Debug, PartialEq)]
pub struct Hint {
    /// fork, shell, environment, tmpfs, path-search.
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
    fork_hint(model, trace, ctx, &mut out);
    shell_hint(model, &mut out);
    env_hint(trace, &mut out);
    tmpfs_hint(trace, ctx, &mut out);
    path_hint(trace, &mut out);
    out
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
            "{} were created with fork by {}{root} and then exec'd another program; vfork-style creation (posix_spawn) is usually 2–3x cheaper",
            plural(count, "process", "processes"),
            lossy(&creator),
        );
        let mut numbers = vec![("processes", count as f64)];
        if let Some(f) = fork_mean {
            numbers.push(("fork_seconds_mean", f));
            match vfork_mean {
                Some(v) => message.push_str(&format!(
                    " (here, traced: fork {} per call, vfork-style {})",
                    units::time(f),
                    units::time(v)
                )),
                None => message.push_str(&format!(
                    " (here, traced: fork {} per call)",
                    units::time(f)
                )),
            }
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
