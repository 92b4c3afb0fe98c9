//! `cmdscope run`: one benchmark (`bench`), or with `--suite` every
//! benchmark of a suite file, each run as one benchmark (`suite`).

pub(crate) mod analysed;
pub(crate) mod bench;
mod blocks;
mod decided;
pub(crate) mod exports;
pub(crate) mod suite;

use std::path::Path;

use crate::cli::run::{HyperfineArgs, RunArgs};
use crate::error::{Error, OptionError, Result};
use crate::run::plan::ParameterError;

pub fn run(args: &RunArgs) -> Result<i32> {
    if args.suite.suite.is_some() {
        suite::run(args)
    } else {
        bench::run(args)
    }
}

/// `cmdscope hyperfine`: `run` with what hyperfine does where cmdscope's
/// own defaults differ, each still changed by its flag (`--order`,
/// `--shell`/`-N`, `--store`).
pub fn hyperfine(args: &HyperfineArgs) -> Result<i32> {
    let debug_mode = args.debug_mode;
    let details = args.cmdscope_details;
    // Read as hyperfine reads it before anything else (`cli::hyperfine`).
    let min_time = args
        .min_benchmarking_time
        .as_deref()
        .map(str::parse::<f64>)
        .transpose()
        .map_err(OptionError::MinBenchmarkingTime)?;
    let mut args = args.run.clone();
    args.report.hyperfine_words = true;
    args.report.hyperfine_details = details;
    args.measure
        .order
        .get_or_insert(crate::run::schedule::Order::Sequential);
    if let Some(seconds) = min_time {
        args.measure.min_time = seconds;
    }
    // hyperfine's spellings: `-i=` ignores every failure, and the shell
    // named `default` is its default, `sh`.
    if args.measure.ignore_failure.as_deref() == Some("") {
        args.measure.ignore_failure = Some("all-non-zero".into());
    }
    if args.measure.cell.shell.as_deref() == Some("default") {
        args.measure.cell.shell = Some("sh".into());
    }
    if args.measure.cell.shell.is_none() && !args.measure.cell.no_shell {
        // hyperfine's debug mode has no shell unless one is given (its
        // start-up then is the `sleep Y` the shell names).
        if debug_mode {
            args.measure.cell.no_shell = true;
        } else {
            args.measure.cell.shell = Some("sh".into());
        }
    }
    if args.store.store.is_none() {
        args.no_store = true;
    } else if debug_mode {
        // Made-up times must never reach a history that gates compare.
        return Err(OptionError::DebugModeStore.into());
    }
    let words = |e| file_wording(hyperfine_wording(e, &args.measure.input), &args);
    let mut request = crate::cli::cells::request(&args).map_err(words)?;
    request.first_run = true;
    request.debug = debug_mode;
    bench::run_request(&args, &request).map_err(words)
}

/// An export or `--output` file that cannot be written, in hyperfine's
/// words: it creates its export files before the first run (as cmdscope
/// checks them) and says only the system's reason for an output file.
fn file_wording(e: Error, args: &RunArgs) -> Error {
    let Error::Write { path, source } = e else {
        return e;
    };
    // cmdscope's check words a directory its own way; hyperfine's is the
    // system's, from opening it.
    let reason = if path.is_dir() {
        std::io::Error::from_raw_os_error(libc::EISDIR).to_string()
    } else {
        source.to_string()
    };
    if exports::export_paths(&args.report.exports).any(|(_, p)| *p == path) {
        Error::Failed(format!(
            "Could not create export file '{}': {reason}",
            path.display()
        ))
    } else if args.measure.output.iter().any(|o| path == Path::new(o)) {
        Error::Failed(reason)
    } else {
        Error::Write { path, source }
    }
}

/// A failed run or hook, a command that cannot start and a missing
/// `--input` file (`input`: its value) in hyperfine's words and exit
/// status, which scripts written for hyperfine may match on; every other
/// error keeps cmdscope's.
fn hyperfine_wording(e: Error, input: &str) -> Error {
    match e {
        Error::CommandNotFound(ref c)
        | Error::NotExecutable(ref c)
        | Error::Spawn { command: ref c, .. } => {
            Error::Failed(format!("Failed to run command '{c}': {e}"))
        }
        Error::Read { ref path, .. } if path.as_os_str() == input && !path.exists() => {
            Error::Failed(format!(
                "The file '{input}' specified as '--input' does not exist"
            ))
        }
        Error::RunFailed {
            exit_code,
            warmup,
            iteration,
            ..
        } => {
            let cause = exit_code.map_or_else(
                || "The process has been terminated by a signal".to_string(),
                |c| format!("Command terminated with non-zero exit code {c}"),
            );
            let when = match (warmup, iteration) {
                (true, 0) => "the first warmup run".to_string(),
                (true, i) => format!("warmup iteration {i}"),
                (false, 0) => "the first benchmark run".to_string(),
                (false, i) => format!("benchmark iteration {i}"),
            };
            Error::Failed(format!(
                "{cause} in {when}. Use the '-i'/'--ignore-failure' option if you want to \
                 ignore this. Alternatively, use the '--show-output' option to debug what went \
                 wrong."
            ))
        }
        Error::TooManyNames { commands, .. } => Error::Failed(format!(
            "Too many --command-name options: Expected {commands} at most"
        )),
        Error::PerCommandCount {
            ref flag, commands, ..
        } => Error::Failed(format!(
            "The '{flag}' option has to be provided just once or N times, where N={commands} is \
             the number of benchmark commands (including a potential reference)."
        )),
        Error::Parameter(ref p) => match hyperfine_scan_words(p) {
            Some(words) => Error::Failed(words.to_string()),
            None => e,
        },
        Error::DuplicateParameter(ref name) => {
            Error::Failed(format!("Duplicate parameter names: {name}"))
        }
        Error::HookFailed { what, .. } => {
            let what = match what.as_str() {
                "prepare" => "preparation",
                "conclude" => "conclusion",
                other => other,
            };
            Error::Failed(format!(
                "The {what} command terminated with a non-zero exit code. Append ' || true' to \
                 the command if you are sure that this can be ignored."
            ))
        }
        e => e,
    }
}

/// hyperfine's words for a `-P` it refuses too (its `ParameterScanError`);
/// `None` where hyperfine accepts what cmdscope refuses. A geometric scan
/// (`--parameter-factor`, which hyperfine lacks) whose bound is not a
/// number or whose values are too many gets the same words as a linear one.
fn hyperfine_scan_words(e: &ParameterError) -> Option<&'static str> {
    match e {
        ParameterError::NotANumber { .. } => Some("Error while parsing parameter scan arguments"),
        ParameterError::ZeroStep => Some("Zero is not a valid parameter step"),
        ParameterError::StepRequired => Some(crate::cli::hyperfine::STEP_REQUIRED),
        ParameterError::TooManyValues { .. } => Some("Parameter range is too large"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_runs_and_hooks_read_as_hyperfine_words_them() {
        let run = |warmup, iteration, exit_code| Error::RunFailed {
            name: "false".into(),
            exit_code,
            signal: None,
            warmup,
            iteration,
        };
        let text = |e| hyperfine_wording(e, "null").to_string();
        assert!(text(run(false, 0, Some(2))).starts_with(
            "Command terminated with non-zero exit code 2 in the first benchmark run. "
        ));
        assert!(text(run(true, 3, Some(1))).contains(" in warmup iteration 3. "));
        assert!(text(run(false, 1, None))
            .starts_with("The process has been terminated by a signal in benchmark iteration 1."));
        let hook = Error::HookFailed {
            what: "prepare".into(),
            hook: "false".into(),
            status: "exit status: 1".into(),
            name: "true".into(),
        };
        assert!(
            text(hook).starts_with("The preparation command terminated with a non-zero exit code.")
        );
        assert_eq!(
            hyperfine_wording(run(true, 0, Some(1)), "null").exit_code(),
            1
        );
        assert_eq!(
            text(Error::CommandNotFound("nope".into())),
            "Failed to run command 'nope': command not found: nope"
        );
        let missing = || Error::Read {
            path: "no/such/file".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        let input = hyperfine_wording(missing(), "no/such/file");
        assert_eq!(
            (input.to_string().as_str(), input.exit_code()),
            (
                "The file 'no/such/file' specified as '--input' does not exist",
                1
            )
        );
        let names = hyperfine_wording(
            Error::TooManyNames {
                given: 2,
                commands: 1,
            },
            "null",
        );
        assert_eq!(names.exit_code(), 1);
        assert!(names
            .to_string()
            .starts_with("Too many --command-name options: Expected 1 at most"));
        let count = Error::PerCommandCount {
            flag: "--prepare".into(),
            given: 2,
            commands: 3,
            reference: true,
        };
        assert!(text(count).starts_with(
            "The '--prepare' option has to be provided just once or N times, where N=3 is"
        ));
        assert!(
            text(Error::DuplicateParameter("x".into())).starts_with("Duplicate parameter names: x")
        );
        // Another file that cannot be read keeps cmdscope's words.
        assert!(text(missing()).starts_with("cannot read 'no/such/file'"));
        // Others pass unchanged, exit code included.
        let usage = hyperfine_wording(OptionError::Alpha(0.7).into(), "null");
        assert_eq!(
            (usage.to_string(), usage.exit_code()),
            (
                "--alpha must be above 0 and below 0.5, got 0.7".to_string(),
                2
            )
        );
    }
}
