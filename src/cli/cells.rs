//! From `run`'s and `explain`'s arguments to typed values: `run`'s
//! [`Request`] and the cells both plan with `plan::expand` (environment
//! files, shell choice, parameters and run variants).

use std::ffi::OsString;

use crate::cli::explain::ExplainArgs;
use crate::cli::run::RunArgs;
use crate::cli::{CellArgs, ParameterArgs};
use crate::error::{Error, Result};
use crate::run::plan::{self, PlanInput};
use crate::run::request::Request;

/// An environment variable as bytes: name and value.
pub type EnvVar = (Vec<u8>, Vec<u8>);

/// `--shell`/`-N` as given.
fn shell_mode(cell: &CellArgs) -> Result<plan::ShellMode> {
    match (&cell.shell, cell.no_shell) {
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
fn parameters(params: &ParameterArgs) -> Result<Vec<plan::Parameter>> {
    let mut out = Vec::new();
    out.extend(plan::scans(
        &params.parameter_scan,
        &params.parameter_step_size,
        &params.parameter_factor,
        &params.scan_order,
    )?);
    for pair in params.parameter_list.chunks(2) {
        if let [name, values] = pair {
            out.push(plan::list(name, values)?);
        }
    }
    Ok(out)
}

/// The cell options `run` and `explain` share, as a plan's input: the
/// environment (its file read), the parameters, the shell and the variants.
fn shared_input(
    commands: &[OsString],
    cell: &CellArgs,
    params: &ParameterArgs,
) -> Result<PlanInput> {
    let mut env = match &cell.env_file {
        Some(path) => read_env_file(path)?,
        None => Vec::new(),
    };
    for e in &cell.env {
        env.push(plan::parse_env(e)?);
    }
    let parameters = parameters(params)?;
    let shell = shell_mode(cell)?;
    Ok(PlanInput {
        commands: commands.to_vec(),
        names: cell.names.clone(),
        shell,
        env,
        parameters,
        variant: plan::VariantInput {
            env_size: cell.env_size.clone(),
            clear_env: cell.clear_env,
            user: cell.user.clone(),
            workdir: cell.workdir.clone(),
            workdir_template: cell.workdir_template.clone(),
            cpus: cell.cpus.clone(),
            nice: cell.nice.clone(),
            ops: None,
            concurrency: None,
        },
        ..PlanInput::default()
    })
}

/// What `run`'s arguments ask for, as typed values: the one way from
/// `run`'s flags to what `commands::run::bench` measures (a suite builds
/// the same [`Request`] from its TOML).
pub fn request(args: &RunArgs) -> Result<Request> {
    let mut plan = shared_input(&args.commands, &args.measure.cell, &args.measure.params)?;
    plan.reference = args
        .measure
        .reference
        .as_ref()
        .map(|r| (r.into(), args.measure.reference_name.clone()));
    plan.prepare = args.measure.prepare.clone();
    plan.conclude = args.measure.conclude.clone();
    plan.setup = args.measure.setup.clone();
    plan.cleanup = args.measure.cleanup.clone();
    plan.variant.ops = args.measure.ops.clone();
    plan.variant.concurrency = args.measure.concurrency.clone();
    Ok(Request {
        plan,
        reference_name: args.measure.reference_name.clone(),
        warmup: args.measure.warmup,
        runs: args.measure.runs,
        min_runs: args.measure.min_runs,
        max_runs: args.measure.max_runs,
        min_time: args.measure.min_time,
        timeout: args.measure.timeout,
        stop_on_timeout: args.measure.stop_on_timeout,
        precision: args.measure.precision,
        alpha: args.measure.alpha,
        order: args.measure.order,
        seed: args.measure.seed,
        ignore_failure: args.measure.ignore_failure.clone(),
        output: args.measure.output.clone(),
        show_output: args.measure.show_output,
        input: args.measure.input.clone(),
        counters: args.measure.counters,
        simulate: (args.measure.simulate || args.measure.counted.is_some())
            .then(|| args.measure.caches.geometry()),
        counted: args
            .measure
            .counted
            .as_deref()
            .and_then(crate::run::counted::Ask::from_name),
        remove_outliers: args.measure.remove_outliers,
        until_decided: args.until_decided,
        max_time: args.max_time,
        isolate: args.isolate,
        metric: args.measure.metric.clone(),
        labels: args.labels.clone(),
        benchmark: None,
        only_cells: None,
        first_run: false,
        debug: false,
    })
}

/// The cells `run` measures for these arguments, and the parameters they
/// sweep.
pub fn plan_cells(args: &RunArgs) -> Result<(Vec<plan::Cell>, Vec<plan::Parameter>)> {
    let input = request(args)?.plan;
    Ok((plan::expand(&input)?, input.parameters))
}

/// The cells to trace: `run`'s plan without its shell calibration cell.
pub fn explain_cells(args: &ExplainArgs) -> Result<Vec<plan::Cell>> {
    let input = shared_input(&args.commands, &args.cells.cell, &args.cells.params)?;
    let mut cells = plan::expand(&input)?;
    cells.retain(|c| !c.calibration);
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::{explain_cells, plan_cells};
    use crate::cli::{Cli, Command};

    #[test]
    fn command_line_positions_reach_the_scans() {
        let parse = |argv: &[&str]| match Cli::parse_ordered(argv).unwrap().command {
            Command::Run(a) => plan_cells(&a).map(|(_, p)| p),
            _ => unreachable!(),
        };
        let p = parse(&[
            "cmdscope",
            "run",
            "-P",
            "a",
            "1",
            "64",
            "--parameter-factor",
            "2",
            "-P",
            "b",
            "1",
            "8",
            "-D",
            "7",
            "echo {a} {b}",
        ])
        .unwrap();
        assert_eq!(p[0].values.len(), 7);
        assert_eq!(p[1].values, vec!["1", "8"]);
        let e = parse(&[
            "cmdscope",
            "run",
            "-D",
            "7",
            "-P",
            "a",
            "1",
            "64",
            "-P",
            "b",
            "1",
            "8",
            "echo {a} {b}",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("before any -P"), "{e}");
        // `explain` plans its cells by the same rule.
        let argv = [
            "cmdscope",
            "explain",
            "-P",
            "a",
            "1",
            "2",
            "-P",
            "b",
            "1",
            "5",
            "-D",
            "2",
            "echo {a} {b}",
        ];
        let Command::Explain(e) = Cli::parse_ordered(argv).unwrap().command else {
            unreachable!()
        };
        assert_eq!(explain_cells(&e).unwrap().len(), 2 * 3);
    }
}
