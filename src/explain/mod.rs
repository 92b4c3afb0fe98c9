//! `cmdscope explain`: one traced run (ptrace) that shows the process tree,
//! how each process was created (fork-style, vfork-style, thread), execs,
//! intermediate shells, syscalls and I/O, and turns them into hints.
//!
//! One file per job: `tracer` (the ptrace loop), `mem` and `procfs` (what
//! it reads from tracees), `syscalls` (names), `tree` (the process model),
//! `hints`, `monitor` (--monitor/--match), `render` (terminal), `json`.
//! See docs/EXPLAIN.md.

pub mod hints;
pub mod json;
pub mod mem;
pub mod monitor;
pub mod procfs;
pub mod render;
pub mod syscalls;
pub mod tracer;
pub mod tree;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::ExplainArgs;
use crate::error::{exit, Error, Result};
use crate::exec::signals;
use crate::plan;

/// The caveat every report carries.
pub const CAVEAT: &str = "traced with ptrace: every system call stops the program, so the run is slower than an untraced one and the times are indicative";

/// One explained run: what the renderers need.
pub struct Explained {
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

/// The words to run: one argument is split like a shell would, several are
/// taken as they are.
pub fn command_words(command: &[std::ffi::OsString]) -> Result<Vec<Vec<u8>>> {
    match command {
        [] => Err(Error::Usage("no command given".into())),
        [one] => plan::split_words(one.as_bytes()),
        many => Ok(many.iter().map(|w| w.as_bytes().to_vec()).collect()),
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

pub fn explain(args: &ExplainArgs) -> Result<i32> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(Error::Usage(
            "explain supports Linux on x86_64 only (its syscall table is x86_64's)".into(),
        ));
    }
    let argv = command_words(&args.command)?;
    let Some(program) = argv.first() else {
        return Err(Error::Usage("empty command".into()));
    };
    let grace = seconds(args.monitor_grace, "--monitor-grace", true)?;
    let wait = seconds(args.monitor_wait, "--monitor-wait", true)?;
    let timeout = args
        .timeout
        .map(|t| seconds(t, "--timeout", false))
        .transpose()?;
    let patterns = monitor::compile(&args.matches)?;
    if let Some(path) = &args.json {
        crate::output::check_writable(path)?;
    }
    let resolved = crate::exec::resolve_program(program)?;

    signals::install();
    let mut running = match &args.monitor {
        Some(cmd) => Some(monitor::Monitor::start(cmd, &args.matches, patterns, wait)?),
        None => None,
    };
    if signals::received().is_some() {
        if let Some(m) = running.take() {
            let _ = m.finish(Duration::ZERO, None);
        }
        crate::eprint_line!("cmdscope: interrupted before the command started");
        return Ok(exit::INTERRUPTED);
    }

    let config = tracer::TraceConfig {
        program: resolved,
        argv: argv.clone(),
        show_output: args.show_output,
        timeout,
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
                grace
            };
            Some(m.finish(grace, reaped)?)
        }
        None => None,
    };

    let model = tree::Model::build(&trace);
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    let on_tmpfs = |d: &Path| hints::on_tmpfs(&resolve_dir(d));
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
    let explained = Explained {
        command: argv,
        trace,
        model,
        hints,
        dirs,
        monitor,
        as_root,
    };

    let json_to_stdout = args.json.as_deref().is_some_and(crate::output::is_stdout);
    // The file first: the terminal's reader may be gone (`| head`).
    if let Some(path) = &args.json {
        crate::output::write_file(path, &json::render(&explained))?;
    }
    if !json_to_stdout {
        let text = render::render(&explained, args.top, args.full_tree);
        // Program names and arguments come from the traced command.
        crate::output::print(&crate::output::escape_controls(&text));
    }
    if explained.trace.interrupted {
        crate::eprint_line!(
            "cmdscope: interrupted; the traced command was killed (the report above is partial)"
        );
        return Ok(exit::INTERRUPTED);
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn one_argument_is_split_several_are_kept() {
        let one = vec![OsString::from("sh -c 'echo hi'")];
        assert_eq!(
            command_words(&one).unwrap(),
            vec![b"sh".to_vec(), b"-c".to_vec(), b"echo hi".to_vec()]
        );
        let many = vec![OsString::from("my prog"), OsString::from("a b")];
        assert_eq!(
            command_words(&many).unwrap(),
            vec![b"my prog".to_vec(), b"a b".to_vec()]
        );
        assert!(command_words(&[]).is_err());
        assert!(command_words(&[OsString::from("'unbalanced")]).is_err());
    }

    #[test]
    fn validates_seconds() {
        assert!(seconds(0.0, "--x", true).is_ok());
        assert!(seconds(0.0, "--x", false).is_err());
        assert!(seconds(f64::NAN, "--x", true).is_err());
        assert!(seconds(-1.0, "--x", true).is_err());
    }
}
