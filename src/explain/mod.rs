//! `cmdscope explain`: one traced run (ptrace) that shows the process tree,
//! how each process was created (fork-style, vfork-style, thread), execs,
//! intermediate shells, syscalls and I/O, and turns them into hints.
//!
//! One file per job: `tracer` (the ptrace loop), `mem` and `procfs` (what
//! it reads from tracees), `syscalls` (names), `tree` (the process model),
//! `hints`, `monitor` (--monitor/--match), `render` (terminal), `json`,
//! `variants` (several cells side by side, their differences).
//! See docs/EXPLAIN.md.

pub mod hints;
pub mod json;
pub mod mem;
pub mod monitor;
pub mod procfs;
pub mod render;
pub mod run_monitor;
pub mod syscalls;
pub mod tracer;
pub mod tree;
pub mod variants;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::explain::ExplainArgs;
use crate::error::{exit, Error, Result};
use crate::exec::signals;
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

fn seconds(value: f64, flag: &str, allow_zero: bool) -> Result<Duration> {
    if value.is_finite() && (value > 0.0 || (allow_zero && value == 0.0)) && value < 1e9 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(Error::Usage(format!(
            "{flag} must be a {} number of seconds, got {value}",
            if allow_zero {
                "non-negative"
            } else {
                "positive"
            }
        )))
    }
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

/// `run`'s arguments for the cells `explain` was given, so that the cells
/// come from the very planning code `run` uses.
fn run_args(args: &ExplainArgs) -> Result<crate::cli::run::RunArgs> {
    use clap::Parser;
    let parsed = crate::cli::Cli::try_parse_from(["cmdscope", "run", "--no-store", "true"])
        .map_err(|e| Error::Usage(format!("internal: {e}")))?;
    let crate::cli::Command::Run(mut run) = parsed.command else {
        return Err(Error::Usage("internal: not a run".into()));
    };
    let c = &args.cells;
    run.commands = args.commands.clone();
    run.cell = c.cell.clone();
    run.params = c.params.clone();
    Ok(*run)
}

/// The cells to trace: `run`'s plan without its shell calibration cell.
pub fn cells(args: &ExplainArgs) -> Result<Vec<plan::Cell>> {
    let (mut cells, _) = crate::cli::cells::plan_cells(&run_args(args)?)?;
    cells.retain(|c| !c.calibration);
    Ok(cells)
}

pub fn explain(args: &ExplainArgs) -> Result<i32> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(Error::Usage(
            "explain supports Linux on x86_64 only (its syscall table is x86_64's)".into(),
        ));
    }
    let cells = cells(args)?;
    let opts = Options {
        grace: seconds(args.monitor_grace, "--monitor-grace", true)?,
        wait: seconds(args.monitor_wait, "--monitor-wait", true)?,
        timeout: args
            .timeout
            .map(|t| seconds(t, "--timeout", false))
            .transpose()?,
    };
    monitor::compile(&args.matches)?;
    if let Some(path) = &args.json {
        crate::output::check_writable(path)?;
    }
    // Every cell's program and user are checked before the first trace.
    for cell in &cells {
        let program = cell
            .argv
            .first()
            .ok_or_else(|| Error::Usage("empty command".into()))?;
        crate::exec::resolve_program(program)?;
        if let Some(u) = &cell.variant.user {
            crate::exec::resolve_user(u)?;
        }
    }

    signals::install();
    let mut explained = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        match explain_cell(i, cell, args, &opts)? {
            Some(x) => {
                let stop = x.trace.interrupted;
                explained.push(x);
                if stop {
                    break;
                }
            }
            None => {
                crate::eprint_line!("cmdscope: interrupted before the command started");
                return Ok(exit::INTERRUPTED);
            }
        }
    }
    let interrupted = explained.iter().any(|x| x.trace.interrupted);

    let json_to_stdout = args.json.as_deref().is_some_and(crate::output::is_stdout);
    let several = cells.len() > 1;
    // The file first: the terminal's reader may be gone (`| head`).
    if let Some(path) = &args.json {
        let doc = if several {
            variants::json(&explained)
        } else {
            explained.first().map(json::render).unwrap_or_default()
        };
        crate::output::write_file(path, &doc)?;
    }
    if !json_to_stdout {
        let text = if several {
            variants::render(&explained, args.top)
        } else {
            explained
                .first()
                .map(|x| render::render(x, args.top, args.full_tree))
                .unwrap_or_default()
        };
        // Program names and arguments come from the traced command.
        crate::output::print(&crate::output::escape_controls(&text));
    }
    if interrupted {
        crate::eprint_line!(
            "cmdscope: interrupted; the traced command was killed (the report above is partial)"
        );
        return Ok(exit::INTERRUPTED);
    }
    Ok(exit::OK)
}

struct Options {
    grace: Duration,
    wait: Duration,
    timeout: Option<Duration>,
}

/// Traces one cell; None when interrupted before it started.
fn explain_cell(
    index: usize,
    cell: &plan::Cell,
    args: &ExplainArgs,
    opts: &Options,
) -> Result<Option<Explained>> {
    let argv = cell.argv.clone();
    let Some(program) = argv.first() else {
        return Err(Error::Usage("empty command".into()));
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
    let envp = crate::exec::environment(&cell.env, v.clear_env, v.env_size)?;

    let mut running = match &args.monitor {
        Some(cmd) => Some(monitor::Monitor::start(
            cmd,
            &args.matches,
            monitor::compile(&args.matches)?,
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
        program: resolved,
        argv: argv.clone(),
        show_output: args.show_output,
        timeout: opts.timeout,
        envp,
        cwd: run_dir.as_ref().map(|d| resolve_dir(&d.path)),
        credentials,
        cpus: v.cpus.clone(),
        nice: v.nice,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_seconds() {
        assert!(seconds(0.0, "--x", true).is_ok());
        assert!(seconds(0.0, "--x", false).is_err());
        assert!(seconds(f64::NAN, "--x", true).is_err());
        assert!(seconds(-1.0, "--x", true).is_err());
    }
}
