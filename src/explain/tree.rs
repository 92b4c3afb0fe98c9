//! The process tree model: tasks from the trace grouped into processes
//! (thread groups), linked to the process that created them, with their
//! times, I/O, execs and whether they are intermediate shells. Pure: built
//! from a `Trace`, unit-tested on hand-made ones.

use std::collections::HashMap;

use super::procfs::Argv;
use super::tracer::{Created, Exec, Exit, Task, Trace};
use crate::exec::procio::ProcIo;

/// Programs treated as shells when run with `-c`.
const SHELLS: &[&[u8]] = &[
    b"sh", b"bash", b"dash", b"zsh", b"ash", b"ksh", b"mksh", b"busybox",
];

/// One process (thread group).
#[derive(Clone, Debug)]
pub struct Process {
    pub pid: i32,
    /// The process that created it (None for the command itself).
    pub parent: Option<usize>,
    pub created_by: Created,
    /// The syscall that created it, when seen (e.g. clone3).
    pub creation_syscall: Option<u64>,
    /// The command itself (created by cmdscope).
    pub root: bool,
    /// Seconds since the trace started.
    pub start: f64,
    pub end: Option<f64>,
    /// Sums over its threads.
    pub user: f64,
    pub sys: f64,
    pub io: ProcIo,
    pub exit: Option<Exit>,
    /// Up to `MAX_EXECS_PER_TASK` execs, in order (the last slot is the latest).
    pub execs: Vec<Exec>,
    pub exec_count: u32,
    pub failed_execs: u32,
    /// Index of its threads in `Model::threads`.
    pub threads: Vec<usize>,
    /// Child processes, in creation order.
    pub children: Vec<usize>,
    /// Set when it is a `sh -c` that only started one other program.
    pub shell: Option<ShellHop>,
}

/// An intermediate shell: `sh -c CMD` that exec'd another program in its
/// place, or forked exactly one child that exec'd.
#[derive(Clone, Debug, PartialEq)]
pub struct ShellHop {
    /// The shell as exec'd (e.g. /bin/sh).
    pub shell: Vec<u8>,
    /// The command string given to -c.
    pub script: Vec<u8>,
    /// The program it ran.
    pub then: Vec<u8>,
    /// True when it exec'd in place; false when it forked a child.
    pub in_place: bool,
    /// Seconds the shell cost before the program started (indicative).
    pub overhead: f64,
}

/// Creations of one method by one program, timed to the child's exec.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnTime {
    pub created_by: Created,
    /// The creating program (as exec'd).
    pub creator: Vec<u8>,
    pub count: u64,
    /// Summed seconds from creation to the child's first exec (traced).
    pub seconds: f64,
}

/// One thread (not the main thread of its process).
#[derive(Clone, Debug)]
pub struct Thread {
    pub tid: i32,
    pub start: f64,
    pub end: Option<f64>,
    pub user: f64,
    pub sys: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Model {
    /// Processes in order of appearance; the command is the first root.
    pub processes: Vec<Process>,
    pub threads: Vec<Thread>,
    /// Processes without a parent in the trace (normally just the command).
    pub roots: Vec<usize>,
    /// Creations by the traced programs: fork, vfork, thread.
    pub spawns: [u64; 3],
}

impl Process {
    /// The latest exec, if it ever exec'd.
    pub fn last_exec(&self) -> Option<&Exec> {
        self.execs.last()
    }

    /// What it runs: the latest exec'd file name.
    pub fn program(&self) -> &[u8] {
        self.last_exec().map_or(&b""[..], |e| &e.path)
    }

    pub fn argv(&self) -> Option<&Argv> {
        self.last_exec().map(|e| &e.argv)
    }

    pub fn wall(&self) -> Option<f64> {
        self.end.map(|e| (e - self.start).max(0.0))
    }
}

pub fn basename(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

fn is_shell(path: &[u8]) -> bool {
    SHELLS.contains(&basename(path))
}

/// For `sh -c SCRIPT ...` the script; None if the argv is not a `-c` call.
/// Options before it may be grouped (`-ec`, `-xc`) or separate (`-e -c`).
pub fn shell_script(argv: &Argv) -> Option<Vec<u8>> {
    let mut words = argv.words().skip(1);
    let mut saw_c = false;
    while let Some(w) = words.next() {
        if w == b"--" {
            break;
        }
        if w.len() > 1 && (w[0] == b'-' || w[0] == b'+') && !w.starts_with(b"--") {
            if w[1..].contains(&b'c') && w[0] == b'-' {
                saw_c = true;
            }
            if w[1..].contains(&b'o') {
                // `-o OPTION` takes a word.
                words.next();
            }
            continue;
        }
        if w.starts_with(b"--") {
            continue;
        }
        return saw_c.then(|| w.to_vec());
    }
    let next = words.next();
    match (saw_c, next) {
        (true, Some(w)) => Some(w.to_vec()),
        _ => None,
    }
}

fn ticks(t: &Task, clock_ticks: f64) -> (f64, f64) {
    (
        t.user_ticks as f64 / clock_ticks,
        t.sys_ticks as f64 / clock_ticks,
    )
}

fn add_io(a: &mut ProcIo, b: &ProcIo) {
    a.rchar += b.rchar;
    a.wchar += b.wchar;
    a.read_bytes += b.read_bytes;
    a.write_bytes += b.write_bytes;
    a.cancelled_write_bytes += b.cancelled_write_bytes;
}

impl Model {
    pub fn build(trace: &Trace) -> Model {
        let mut model = Model::default();
        // Task index -> process index, for tasks that head a process.
        let mut process_of_task: HashMap<usize, usize> = HashMap::new();
        // (tgid, leader task) -> process; tids are reused, so keyed by the
        // latest process with that tgid at the time a thread appears.
        let mut process_by_tgid: HashMap<i32, usize> = HashMap::new();
        for (ti, task) in trace.tasks.iter().enumerate() {
            let (user, sys) = ticks(task, trace.clock_ticks);
            if task.created_by == Created::Thread && task.tgid != task.tid {
                let Some(&pi) = process_by_tgid.get(&task.tgid) else {
                    continue;
                };
                let thread = model.threads.len();
                model.threads.push(Thread {
                    tid: task.tid,
                    start: task.start,
                    end: task.end,
                    user,
                    sys,
                });
                let p = &mut model.processes[pi];
                p.threads.push(thread);
                p.user += user;
                p.sys += sys;
                add_io(&mut p.io, &task.io);
                if let (Some(pe), Some(te)) = (p.end, task.end) {
                    p.end = Some(pe.max(te));
                }
                continue;
            }
            let pi = model.processes.len();
            model.processes.push(Process {
                pid: task.tid,
                parent: None,
                created_by: task.created_by,
                creation_syscall: task.creation_syscall,
                root: ti == 0,
                start: task.start,
                end: task.end,
                user,
                sys,
                io: task.io,
                exit: task.exit,
                execs: task.execs.clone(),
                exec_count: task.exec_count,
                failed_execs: task.failed_execs,
                threads: Vec::new(),
                children: Vec::new(),
                shell: None,
            });
            process_of_task.insert(ti, pi);
            process_by_tgid.insert(task.tid, pi);
        }
        // Link parents: the process of the creating task (a thread's process
        // when a thread created it).
        let thread_process: HashMap<usize, usize> = trace
            .tasks
            .iter()
            .enumerate()
            .filter(|(ti, _)| !process_of_task.contains_key(ti))
            .filter_map(|(ti, t)| process_by_tgid.get(&t.tgid).map(|&p| (ti, p)))
            .collect();
        for (ti, task) in trace.tasks.iter().enumerate() {
            if let Some(creator) = task.creator {
                let parent = process_of_task
                    .get(&creator)
                    .or_else(|| thread_process.get(&creator))
                    .copied();
                if task.created_by != Created::Thread || task.tgid == task.tid {
                    if let (Some(&pi), Some(parent)) = (process_of_task.get(&ti), parent) {
                        if parent != pi {
                            model.processes[pi].parent = Some(parent);
                            model.processes[parent].children.push(pi);
                        }
                    }
                }
                model.spawns[match task.created_by {
                    Created::Fork => 0,
                    Created::Vfork => 1,
                    Created::Thread => 2,
                }] += 1;
            }
        }
        model.roots = (0..model.processes.len())
            .filter(|&i| model.processes[i].parent.is_none())
            .collect();
        for pi in 0..model.processes.len() {
            model.processes[pi].shell = model.shell_hop(pi);
        }
        model
    }

    fn shell_hop(&self, pi: usize) -> Option<ShellHop> {
        let p = &self.processes[pi];
        let first = p.execs.first()?;
        if !is_shell(&first.path) && !first.argv.first().is_some_and(is_shell) {
            return None;
        }
        let script = shell_script(&first.argv)?;
        let children: Vec<usize> = p.children.clone();
        if p.exec_count >= 2 && children.is_empty() {
            let second = p.execs.get(1)?;
            return Some(ShellHop {
                shell: first.path.clone(),
                script,
                then: second.path.clone(),
                in_place: true,
                overhead: (second.at - first.at).max(0.0),
            });
        }
        // Forked one child: only if the shell itself did nothing visible
        // (`sh -c 'prog; echo done'` is a script, not a hop).
        if p.exec_count == 1 && children.len() == 1 && p.io.wchar == 0 {
            let child = &self.processes[children[0]];
            let exec = child.execs.first()?;
            let overhead = match (p.wall(), child.wall()) {
                (Some(a), Some(b)) => (a - b).max(0.0),
                _ => 0.0,
            };
            return Some(ShellHop {
                shell: first.path.clone(),
                script,
                then: exec.path.clone(),
                in_place: false,
                overhead,
            });
        }
        None
    }

    /// Processes in tree order (depth-first, children in creation order),
    /// with their depth. Iterative: a chain of 100,000 nested processes must
    /// not overflow the stack.
    pub fn walk(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::with_capacity(self.processes.len());
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        let mut seen = vec![false; self.processes.len()];
        while let Some((pi, depth)) = stack.pop() {
            if std::mem::replace(&mut seen[pi], true) {
                continue;
            }
            out.push((pi, depth));
            for &c in self.processes[pi].children.iter().rev() {
                stack.push((c, depth + 1));
            }
        }
        out
    }

    /// The program of the process that created `pi`, at the time it did.
    /// A creator that never exec'd runs what it inherited: its ancestors'.
    pub fn creator_program(&self, pi: usize) -> Option<&[u8]> {
        self.creator_exec(pi).map(|e| &e.path[..])
    }

    /// The exec behind [`Model::creator_program`]: the creator's latest at
    /// the time the process was created.
    pub fn creator_exec(&self, pi: usize) -> Option<&Exec> {
        let at = self.processes[pi].start;
        let mut q = self.processes[pi].parent?;
        // Bounded: parents were created before their children (no cycles),
        // but a corrupt link must not loop forever.
        for _ in 0..self.processes.len() {
            if let Some(e) = self.processes[q].execs.iter().rev().find(|e| e.at <= at) {
                return Some(e);
            }
            q = self.processes[q].parent?;
        }
        None
    }

    pub fn intermediate_shells(&self) -> impl Iterator<Item = (usize, &ShellHop)> {
        self.processes
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.shell.as_ref().map(|s| (i, s)))
    }

    /// Time from each creation (the clone/fork/vfork) to the child's first
    /// exec, summed per method and per creating program, for processes the
    /// traced programs created and that exec'd (one that never exec'd has
    /// no spawn to time). Sorted by method, then most seconds first.
    pub fn spawn_times(&self) -> Vec<SpawnTime> {
        let mut out: Vec<SpawnTime> = Vec::new();
        for (pi, p) in self.processes.iter().enumerate() {
            if p.root || p.parent.is_none() {
                continue;
            }
            let Some(first) = p.execs.first() else {
                continue;
            };
            let seconds = (first.at - p.start).max(0.0);
            let creator = self.creator_program(pi).unwrap_or(b"?").to_vec();
            match out
                .iter_mut()
                .find(|t| t.created_by == p.created_by && t.creator == creator)
            {
                Some(t) => {
                    t.count += 1;
                    t.seconds += seconds;
                }
                None => out.push(SpawnTime {
                    created_by: p.created_by,
                    creator,
                    count: 1,
                    seconds,
                }),
            }
        }
        out.sort_by(|a, b| {
            a.created_by
                .cmp(&b.created_by)
                .then(b.seconds.total_cmp(&a.seconds))
                .then_with(|| a.creator.cmp(&b.creator))
        });
        out
    }

    /// `spawn_times` summed per method: (count, seconds) for fork, vfork.
    pub fn spawn_time_by_method(&self) -> [(u64, f64); 2] {
        let mut out = [(0, 0.0); 2];
        for t in self.spawn_times() {
            let i = match t.created_by {
                Created::Fork => 0,
                Created::Vfork => 1,
                Created::Thread => continue,
            };
            out[i].0 += t.count;
            out[i].1 += t.seconds;
        }
        out
    }

    /// I/O summed over every process.
    pub fn total_io(&self) -> ProcIo {
        let mut io = ProcIo::default();
        for p in &self.processes {
            add_io(&mut io, &p.io);
        }
        io
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::explain::tracer::model::{ExecTotals, SyscallCount};

    pub fn exec(at: f64, path: &str, argv: &[&str]) -> Exec {
        let mut raw = Vec::new();
        for a in argv {
            raw.extend_from_slice(a.as_bytes());
            raw.push(0);
        }
        Exec {
            at,
            path: path.as_bytes().to_vec(),
            argv: Argv::from_cmdline(&raw, true),
            env_bytes: Some(1000),
            env_vars: Some(10),
        }
    }

    pub fn task(tid: i32, creator: Option<usize>, by: Created, start: f64, end: f64) -> Task {
        Task {
            tid,
            tgid: tid,
            creator,
            created_by: by,
            creation_syscall: None,
            start,
            end: Some(end),
            execs: Vec::new(),
            exec_count: 0,
            failed_execs: 0,
            user_ticks: 1,
            sys_ticks: 2,
            io: ProcIo::default(),
            exit: Some(Exit::Code(0)),
        }
    }

    pub fn trace_of(tasks: Vec<Task>) -> Trace {
        Trace {
            tasks,
            syscalls: vec![SyscallCount::default(); crate::explain::syscalls::TABLE_SIZE],
            other_syscalls: Vec::new(),
            spawn_details: Vec::new(),
            spawn_seconds: [0.0; 3],
            execs: ExecTotals::default(),
            dir_writes: Vec::new(),
            wall: 1.0,
            interrupted: false,
            timed_out: false,
            foreign_exits: Vec::new(),
            clock_ticks: 100.0,
        }
    }

    fn with_execs(mut t: Task, execs: Vec<Exec>) -> Task {
        t.exec_count = execs.len() as u32;
        t.execs = execs;
        t
    }

    #[test]
    fn finds_shell_scripts() {
        let a = |words: &[&str]| {
            let mut raw = Vec::new();
            for w in words {
                raw.extend_from_slice(w.as_bytes());
                raw.push(0);
            }
            shell_script(&Argv::from_cmdline(&raw, true)).map(|s| String::from_utf8(s).unwrap())
        };
        assert_eq!(a(&["sh", "-c", "/bin/true"]).as_deref(), Some("/bin/true"));
        assert_eq!(a(&["bash", "-ec", "x y"]).as_deref(), Some("x y"));
        assert_eq!(a(&["sh", "-e", "-c", "z", "arg0"]).as_deref(), Some("z"));
        assert_eq!(a(&["bash", "--norc", "-c", "z"]).as_deref(), Some("z"));
        assert_eq!(
            a(&["sh", "-o", "pipefail", "-c", "z"]).as_deref(),
            Some("z")
        );
        assert_eq!(a(&["sh", "script.sh"]), None);
        assert_eq!(a(&["sh", "-e", "script.sh"]), None);
        assert_eq!(a(&["sh"]), None);
        assert_eq!(a(&["sh", "-c"]), None);
    }

    #[test]
    fn builds_tree_and_flags_shells() {
        let root = with_execs(
            task(100, None, Created::Fork, 0.0, 1.0),
            vec![exec(0.001, "/usr/bin/app", &["app", "run"])],
        );
        // A shell that exec'd /bin/true in place.
        let sh1 = with_execs(
            task(101, Some(0), Created::Vfork, 0.1, 0.2),
            vec![
                exec(0.11, "/bin/sh", &["sh", "-c", "/bin/true"]),
                exec(0.15, "/bin/true", &["/bin/true"]),
            ],
        );
        // A shell that forked one child that exec'd.
        let sh2 = with_execs(
            task(102, Some(0), Created::Fork, 0.3, 0.5),
            vec![exec(0.31, "/bin/sh", &["sh", "-c", "ls; "])],
        );
        let ls = with_execs(
            task(103, Some(2), Created::Fork, 0.35, 0.45),
            vec![exec(0.36, "/bin/ls", &["ls"])],
        );
        // A shell running two programs: not intermediate.
        let sh3 = with_execs(
            task(104, Some(0), Created::Fork, 0.6, 0.9),
            vec![exec(0.61, "/bin/sh", &["sh", "-c", "a; b"])],
        );
        let a = task(105, Some(4), Created::Fork, 0.62, 0.7);
        let b = task(106, Some(4), Created::Fork, 0.72, 0.8);
        let mut thread = task(107, Some(0), Created::Thread, 0.05, 0.95);
        thread.tgid = 100;
        thread.io.wchar = 10;
        let mut root = root;
        root.io.wchar = 10;
        // A shell that forked one child but also wrote output itself: a script.
        let mut sh4 = with_execs(
            task(108, Some(0), Created::Fork, 0.96, 0.99),
            vec![exec(0.961, "/bin/sh", &["sh", "-c", "ls; echo done"])],
        );
        sh4.io.wchar = 5;
        let ls2 = with_execs(
            task(109, Some(8), Created::Fork, 0.97, 0.98),
            vec![exec(0.971, "/bin/ls", &["ls"])],
        );
        let trace = trace_of(vec![root, sh1, sh2, ls, sh3, a, b, thread, sh4, ls2]);
        let m = Model::build(&trace);
        assert_eq!(m.processes.len(), 9);
        assert_eq!(m.threads.len(), 1);
        assert_eq!(m.roots, vec![0]);
        assert_eq!(m.spawns, [7, 1, 1]);
        assert_eq!(m.processes[0].children, vec![1, 2, 4, 7]);
        assert!(m.processes[7].shell.is_none());
        assert_eq!(m.processes[0].threads, vec![0]);
        // The thread's CPU time is added to its process.
        assert!((m.processes[0].user - 0.02).abs() < 1e-9);
        assert_eq!(m.processes[0].io.wchar, 20);
        let hop = m.processes[1].shell.as_ref().expect("sh1 is intermediate");
        assert!(hop.in_place);
        assert_eq!(hop.then, b"/bin/true");
        assert!((hop.overhead - 0.04).abs() < 1e-9);
        let hop2 = m.processes[2].shell.as_ref().expect("sh2 is intermediate");
        assert!(!hop2.in_place);
        assert_eq!(hop2.then, b"/bin/ls");
        assert!((hop2.overhead - 0.1).abs() < 1e-9);
        assert!(m.processes[4].shell.is_none());
        assert_eq!(m.intermediate_shells().count(), 2);
        assert_eq!(m.creator_program(1), Some(&b"/usr/bin/app"[..]));
        // 105 was forked by 104 while it ran /bin/sh.
        assert_eq!(m.creator_program(5), Some(&b"/bin/sh"[..]));
        assert_eq!(m.creator_program(0), None);
        let order: Vec<i32> = m.walk().iter().map(|&(p, _)| m.processes[p].pid).collect();
        assert_eq!(order, vec![100, 101, 102, 103, 104, 105, 106, 108, 109]);
        assert_eq!(m.walk()[3], (3, 2));
    }

    #[test]
    fn a_creator_without_exec_runs_its_ancestors_program() {
        let root = with_execs(
            task(1, None, Created::Fork, 0.0, 1.0),
            vec![exec(0.0, "/bin/bash", &["bash", "x.sh"])],
        );
        let subshell = task(2, Some(0), Created::Fork, 0.1, 0.9);
        let grandchild = task(3, Some(1), Created::Fork, 0.2, 0.8);
        let m = Model::build(&trace_of(vec![root, subshell, grandchild]));
        assert_eq!(m.creator_program(1), Some(&b"/bin/bash"[..]));
        assert_eq!(m.creator_program(2), Some(&b"/bin/bash"[..]));
    }

    #[test]
    fn deep_chains_do_not_overflow() {
        let mut tasks = vec![task(1, None, Created::Fork, 0.0, 1.0)];
        for i in 1..200_000 {
            tasks.push(task(i as i32 + 1, Some(i - 1), Created::Fork, 0.0, 1.0));
        }
        let m = Model::build(&trace_of(tasks));
        let walk = m.walk();
        assert_eq!(walk.len(), 200_000);
        assert_eq!(walk.last().map(|w| w.1), Some(199_999));
    }
}
