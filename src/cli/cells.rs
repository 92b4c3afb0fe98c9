//! The cells `cmdscope run` measures for its arguments (also how a suite
//! benchmark and an `explain` become cells): environment files, shell
//! choice, parameters and run variants handed to `plan::expand`.

use crate::cli::explain::ExplainArgs;
use crate::cli::run::{RunArgs, TimeUnit};
use crate::error::{Error, Result};
use crate::run::plan::{self, PlanInput};
use crate::units;

/// An environment variable as bytes: name and value.
pub type EnvVar = (Vec<u8>, Vec<u8>);

/// `--shell`/`-N` as given.
pub fn shell_mode(args: &RunArgs) -> Result<plan::ShellMode> {
    match (&args.cell.shell, args.cell.no_shell) {
        (_, true) => Ok(plan::ShellMode::Never),
        (Some(s), false) => plan::ShellMode::from_arg(s),
        (None, false) => Ok(plan::ShellMode::Auto),
    }
}

/// KEY=VALUE lines; blank lines and '#' comments are skipped.
pub fn read_env_file(path: &std::path::Path) -> Result<Vec<EnvVar>> {
    let bytes = crate::import::input::read_limited(path, crate::import::input::MAX_ENV_FILE_BYTES)?;
    parse_env_file(&bytes).map_err(|line| Error::Parse {
        path: path.into(),
        message: format!("line {line}: expected KEY=VALUE"),
    })
}

/// The variables of an env file's text (`KEY=VALUE` lines, an optional
/// `export ` before them, blank lines and `#` comments skipped); on error,
/// the number of the first bad line.
pub fn parse_env_file(bytes: &[u8]) -> std::result::Result<Vec<EnvVar>, usize> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() || trimmed.starts_with(b"#") {
            continue;
        }
        let trimmed = trimmed.strip_prefix(b"export ").unwrap_or(trimmed);
        let kv = plan::parse_env(std::ffi::OsStr::from_bytes(trimmed)).map_err(|_| n + 1)?;
        out.push(kv);
    }
    Ok(out)
}

/// The parameters given with -P/-D/--parameter-factor and -L.
pub fn parameters(args: &RunArgs) -> Result<Vec<plan::Parameter>> {
    let mut out = Vec::new();
    out.extend(plan::scans(
        &args.params.parameter_scan,
        &args.params.parameter_step_size,
        &args.params.parameter_factor,
        &args.params.scan_order,
    )?);
    for pair in args.params.parameter_list.chunks(2) {
        if let [name, values] = pair {
            out.push(plan::list(name, values)?);
        }
    }
    Ok(out)
}

/// The cells `run` measures for these arguments, and the parameters they
/// sweep (also how a suite benchmark becomes cells).
pub fn plan_cells(args: &RunArgs) -> Result<(Vec<plan::Cell>, Vec<plan::Parameter>)> {
    let mut env = match &args.cell.env_file {
        Some(path) => read_env_file(path)?,
        None => Vec::new(),
    };
    for e in &args.cell.env {
        env.push(plan::parse_env(e)?);
    }
    let parameters = parameters(args)?;
    let shell = shell_mode(args)?;
    if let Some(unit) = args.time_unit {
        units::force_time_scale(match unit {
            TimeUnit::Microsecond => units::TimeScale::Microsecond,
            TimeUnit::Millisecond => units::TimeScale::Millisecond,
            TimeUnit::Second => units::TimeScale::Second,
        });
    }
    let cells = plan::expand(&PlanInput {
        commands: args.commands.clone(),
        names: args.cell.names.clone(),
        shell: shell.clone(),
        reference: args
            .reference
            .as_ref()
            .map(|r| (r.into(), args.reference_name.clone())),
        env,
        prepare: args.prepare.clone(),
        conclude: args.conclude.clone(),
        setup: args.setup.clone(),
        cleanup: args.cleanup.clone(),
        parameters: parameters.clone(),
        variant: plan::VariantInput {
            env_size: args.cell.env_size.clone(),
            clear_env: args.cell.clear_env,
            user: args.cell.user.clone(),
            workdir: args.cell.workdir.clone(),
            workdir_template: args.cell.workdir_template.clone(),
            cpus: args.cell.cpus.clone(),
            nice: args.cell.nice.clone(),
            ops: args.ops.clone(),
            concurrency: args.concurrency.clone(),
        },
    })?;
    Ok((cells, parameters))
}

/// `run`'s arguments for the cells `explain` was given, so that the cells
/// come from the very planning code `run` uses.
fn explain_run_args(args: &ExplainArgs) -> Result<RunArgs> {
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
pub fn explain_cells(args: &ExplainArgs) -> Result<Vec<plan::Cell>> {
    let (mut cells, _) = plan_cells(&explain_run_args(args)?)?;
    cells.retain(|c| !c.calibration);
    Ok(cells)
}
