//! Traced runs for `cmdscope explain` (the command itself is
//! `commands::explain`): one traced run (ptrace) that shows the process tree,
//! how each process was created (fork-style, vfork-style, thread), execs,
//! intermediate shells, syscalls and I/O, and turns them into hints.
//!
//! One file per job: `tracer` (the ptrace loop), `mem` and `procfs` (what
//! it reads from tracees), `syscalls` (names), `tree` (the process model),
//! `hints`, `render` (terminal), `json`,
//! `variants` (several cells side by side, their differences); the
//! `--monitor` command beside the traced one is `crate::monitor::process`.
//! See docs/EXPLAIN.md.

pub(crate) mod hints;
pub(crate) mod json;
pub(crate) mod mem;
pub(crate) mod procfs;
pub(crate) mod render;
pub(crate) mod syscalls;
pub(crate) mod tracer;
pub(crate) mod tree;
pub(crate) mod variants;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{ExecError, Result};
use crate::exec::signals;
use crate::exec::HeldCommand;
use crate::monitor::process as monitor;
use crate::run::plan;

/// The caveat every report carries.
pub const CAVEAT: &str = "traced with ptrace: every system call stops the program, so the run is slower than an untraced one and the times are indicative";

/// One explained run: what the renderers need.
pub struct Explained {
    /// The cell's name (`-n`, else the command line) and the parameter
    /// values that made it.
    pub name: String,
    pub parameters: Vec<(String, String)>,
    pub command: Vec<Vec<u8>>,
    pub trace: tracer::Trace,
    pub model: tree::Model,
    pub hints: Vec<hints::Hint>,
    /// Bytes written by directory, largest first, with whether it is on tmpfs.
    pub dirs: Vec<(PathBuf, u64, bool)>,
    pub monitor: Option<monitor::Report>,
    pub as_root: bool,
}

fn resolve_dir(dir: &Path) -> PathBuf {
    if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(dir))
            .unwrap_or_else(|_| dir.to_path_buf())
    }
}

/// How a cell is traced: the monitor and its `NAME=REGEX` matches, how
/// long to wait for and after it, the traced run's timeout, and whether
/// the command's output is shown.
pub struct Options {
    pub monitor: Option<String>,
    pub matches: Vec<String>,
    pub grace: Duration,
    pub wait: Duration,
    pub timeout: Option<Duration>,
    pub show_output: bool,
}

/// Traces one cell; None when interrupted before it started.
pub fn trace_cell(index: usize, cell: &plan::Cell, opts: &Options) -> Result<Option<Explained>> {
    let argv = cell.argv.clone();
    let Some(program) = argv.first() else {
        return Err(ExecError::EmptyCommand.into());
    };
    let resolved = crate::exec::resolve_program(program)?;
    let v = &cell.variant;
    let credentials = v
        .user
        .as_deref()
        .map(crate::exec::resolve_user)
        .transpose()?;
    // Kept until the trace is over: dropping it removes the directory.
    let run_dir = match &v.workdir {
        Some(w) => Some(crate::exec::workdir::RunDir::new(
            index,
            w,
            v.workdir_template.as_deref(),
            credentials.as_ref(),
        )?),
        None => None,
    };
    let envp = crate::exec::environment(&cell.argv, &cell.env, v.clear_env, v.env_size)?;

    let mut running = match &opts.monitor {
        Some(cmd) => Some(monitor::Monitor::start(
            cmd,
            &opts.matches,
            monitor::compile(&opts.matches)?,
            opts.wait,
        )?),
        None => None,
    };
    if signals::received().is_some() {
        if let Some(m) = running.take() {
            let _ = m.finish(Duration::ZERO, None);
        }
        return Ok(None);
    }

    let config = tracer::TraceConfig {
        command: HeldCommand {
            program: resolved,
            argv: argv.clone(),
            envp,
            cwd: run_dir.as_ref().map(|d| resolve_dir(&d.path)),
            cpus: v.cpus.clone(),
            nice: v.nice,
            credentials,
            show_output: opts.show_output,
            keep_stdin: true,
        },
        timeout: opts.timeout,
    };
    let traced = tracer::trace(&config, |at| {
        if let Some(m) = &running {
            m.mark_start(at);
        }
    });
    let trace = match traced {
        Ok(t) => t,
        Err(e) => {
            if let Some(m) = running.take() {
                let _ = m.finish(Duration::ZERO, None);
            }
            return Err(e);
        }
    };
    let monitor = match running.take() {
        Some(m) => {
            let reaped = trace
                .foreign_exits
                .iter()
                .find(|(pid, _)| *pid == m.pid())
                .map(|&(_, status)| status);
            // An interrupted run does not wait for the grace period.
            let grace = if trace.interrupted {
                Duration::ZERO
            } else {
                opts.grace
            };
            Some(m.finish(grace, reaped)?)
        }
        None => None,
    };

    let model = tree::Model::build(&trace);
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    let on_tmpfs = |d: &Path| crate::exec::workdir::is_tmpfs(&resolve_dir(d));
    let ctx = hints::Context {
        as_root,
        on_tmpfs: &on_tmpfs,
    };
    let hints = hints::hints(&model, &trace, &ctx);
    let mut dirs: Vec<(PathBuf, u64, bool)> = trace
        .dir_writes
        .iter()
        .map(|(d, b)| (d.clone(), *b, on_tmpfs(d)))
        .collect();
    dirs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    drop(run_dir);
    Ok(Some(Explained {
        name: cell.name.clone(),
        parameters: cell.parameters.clone(),
        command: argv,
        trace,
        model,
        hints,
        dirs,
        monitor,
        as_root,
    }))
}
