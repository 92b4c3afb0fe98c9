//! The front door's arguments as hyperfine 1.20 reads them before it runs
//! anything: its parser, whose rules differ from cmdscope's in a few places
//! (no negative numbers but for `-P` and `-L`), and the values it takes
//! as text and checks itself afterwards, in its order and its words, which
//! scripts written for hyperfine may match on. `cmdscope run` keeps its
//! own parser and errors.

use std::ffi::OsString;
use std::path::Path;

use clap::builder::ValueParser;
use clap::CommandFactory;

/// Why the front door refuses its arguments, as hyperfine would.
#[derive(Debug)]
pub enum Refusal {
    /// hyperfine's parser refuses them: clap's block, exit status 2.
    Parse(clap::Error),
    /// hyperfine refuses a value after parsing: its words (without
    /// `Error: `), exit status 1.
    Value(String),
}

/// The front door's parser with hyperfine's rules where cmdscope's differ:
/// the counts (and `--min-benchmarking-time`, already text) taken as text,
/// a bare `-i` read as hyperfine's `all-non-zero`, and a value starting
/// with `-` taken as a flag except by `-P` and `-L`.
fn hyperfines_parser() -> clap::Command {
    super::Cli::command().mut_subcommand("hyperfine", |h| {
        let as_text = |a: clap::Arg| a.value_parser(ValueParser::string());
        h.allow_negative_numbers(false)
            .mut_arg("warmup", as_text)
            .mut_arg("runs", as_text)
            .mut_arg("min_runs", as_text)
            .mut_arg("max_runs", as_text)
            .mut_arg("ignore_failure", |a| {
                a.default_missing_value("all-non-zero")
            })
            .mut_arg("parameter_step_size", |a| a.allow_negative_numbers(false))
            .mut_arg("parameter_scan", |a| a.allow_hyphen_values(true))
            .mut_arg("parameter_list", |a| a.allow_hyphen_values(true))
    })
}

/// hyperfine's checks of the front door's arguments (as
/// [`super::front_door`] returns them) up to the point where it reads the
/// commands: its parser, then the values it parses itself, in the order of
/// its `Options::from_cli_arguments`. Arguments that are not the front
/// door's pass.
pub fn check(args: &[OsString]) -> Result<(), Refusal> {
    use clap::error::ErrorKind;
    let matches = match hyperfines_parser().try_get_matches_from(args) {
        Ok(matches) => matches,
        // Help and version are the front door's own parser's to print.
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            return Ok(())
        }
        Err(e) => return Err(Refusal::Parse(e)),
    };
    let Some(("hyperfine", m)) = matches.subcommand() else {
        return Ok(());
    };
    let text = |id: &str| m.get_one::<String>(id).map(String::as_str);
    let count = |id: &str, flag: &str| {
        text(id)
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|e| not_a_number("integer", flag, e))
            })
            .transpose()
    };
    count("warmup", "warmup")?;
    let min = count("min_runs", "min-runs")?;
    let max = count("max_runs", "max-runs")?;
    let runs = count("runs", "runs")?;
    if let (None, Some(min), Some(max)) = (runs, min, max) {
        if min > max {
            return Err(Refusal::Value(
                "Conflicting requirements for the number of runs (empty range, min is larger \
                 than max)"
                    .into(),
            ));
        }
    }
    if !m.get_flag("show_output") {
        for policy in m.get_many::<String>("output").into_iter().flatten() {
            // A bare word is a policy: a file needs a path (`./log`).
            let named = matches!(policy.as_str(), "null" | "pipe" | "inherit");
            if !named && Path::new(policy).components().count() <= 1 {
                return Err(Refusal::Value(format!(
                    "Unknown output policy '{policy}'. Use './{policy}' to output to a file \
                     named '{policy}'."
                )));
            }
        }
    }
    match text("shell") {
        Some(shell) if !m.get_flag("debug_mode") && shell != "default" && shell != "none" => {
            match shlex::split(shell) {
                None => {
                    return Err(Refusal::Value(
                        "Failed to parse '--shell <command>' expression as command line: \
                         missing closing quote"
                            .into(),
                    ))
                }
                Some(words) if words.first().is_none_or(String::is_empty) => {
                    return Err(Refusal::Value(
                        "An empty command has been specified for the '--shell <command>' option"
                            .into(),
                    ))
                }
                Some(_) => {}
            }
        }
        _ => {}
    }
    match text("ignore_failure") {
        None | Some("all-non-zero" | "") => {}
        Some(codes) => {
            for code in codes.split(',') {
                code.trim()
                    .parse::<i32>()
                    .map_err(|e| not_a_number("integer", "ignore-failure", e))?;
            }
        }
    }
    if let Some(time) = text("min_benchmarking_time") {
        time.parse::<f64>()
            .map_err(|e| not_a_number("floating point", "min-benchmarking-time", e))?;
    }
    // Then its commands: a `-P` (hyperfine takes one, with one `-D`) whose
    // bounds are not integers is read with its decimal parser.
    let scan: Vec<&String> = m.get_many("parameter_scan").into_iter().flatten().collect();
    if let [_, min, max] = scan[..] {
        let step = m
            .get_many::<String>("parameter_step_size")
            .and_then(|mut s| s.next());
        scan_bounds(min, max, step.map(String::as_str))?;
    }
    Ok(())
}

/// hyperfine's reading of `-P NAME MIN MAX` with `-D STEP`: integers, or
/// else decimals, which need a step, and the bounds in ascending order
/// (cmdscope's descending scans are not hyperfine's). What it then does
/// with the values (a step of zero, too many) cmdscope's plan says, in
/// hyperfine's words (`commands::run`).
fn scan_bounds(min: &str, max: &str, step: Option<&str>) -> Result<(), Refusal> {
    use std::str::FromStr;
    let ascending = |ok: bool| {
        ok.then_some(())
            .ok_or_else(|| Refusal::Value("Empty parameter range".into()))
    };
    if let (Ok(lo), Ok(hi), Ok(_)) = (
        min.parse::<i32>(),
        max.parse::<i32>(),
        step.unwrap_or("1").parse::<i32>(),
    ) {
        return ascending(lo <= hi);
    }
    let decimal = |t: &str| {
        rust_decimal::Decimal::from_str(t).map_err(|e| {
            Refusal::Value(format!(
                "Error while parsing parameter scan arguments ({e})"
            ))
        })
    };
    let lo = decimal(min)?;
    let hi = decimal(max)?;
    let Some(step) = step else {
        return Err(Refusal::Value(STEP_REQUIRED.into()));
    };
    decimal(step)?;
    ascending(lo <= hi)
}

/// hyperfine's words for decimal bounds without `-D`.
pub const STEP_REQUIRED: &str = "A step size is required when the range bounds are floating \
     point numbers. The step size can be specified with the '-D/--parameter-step-size <DELTA>' \
     parameter";

/// hyperfine's words for a number it cannot read: the standard library's
/// reason, as its parser gives it.
fn not_a_number(kind: &str, flag: &str, reason: impl std::fmt::Display) -> Refusal {
    Refusal::Value(format!(
        "Could not read numeric {kind} argument to '--{flag}': {reason}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(args: &[&str]) -> Option<Refusal> {
        let args: Vec<OsString> = ["cmdscope", "hyperfine"]
            .iter()
            .chain(args)
            .map(OsString::from)
            .collect();
        check(&args).err()
    }

    fn words(args: &[&str]) -> String {
        match refusal(args) {
            Some(Refusal::Value(w)) => w,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn counts_are_read_as_hyperfine_reads_them() {
        assert_eq!(
            words(&["--runs", "x", "true"]),
            "Could not read numeric integer argument to '--runs': invalid digit found in string"
        );
        assert_eq!(
            words(&["-w", "", "true"]),
            "Could not read numeric integer argument to '--warmup': cannot parse integer from \
             empty string"
        );
        // The first refused in hyperfine's order, not the command line's.
        assert!(words(&["-M", "y", "-m", "x", "true"]).contains("'--min-runs'"));
        assert!(words(&["-m", "5", "-M", "2", "true"]).starts_with("Conflicting"));
        // A negative count is an unknown flag to hyperfine's parser.
        assert!(matches!(
            refusal(&["--runs", "-1", "true"]),
            Some(Refusal::Parse(_))
        ));
        assert!(refusal(&["-m", "2", "-M", "3", "-P", "x", "-3", "-1", "echo {x}"]).is_none());
    }

    #[test]
    fn other_values_are_checked_as_hyperfine_checks_them() {
        assert!(words(&["-i=all", "true"])
            .ends_with("'--ignore-failure': invalid digit found in string"));
        assert!(refusal(&["-i", "true"]).is_none());
        assert!(refusal(&["-i=", "true"]).is_none());
        assert!(refusal(&["-i= 1,2", "true"]).is_none());
        assert!(words(&["--output", "log", "true"]).starts_with("Unknown output policy 'log'"));
        assert!(refusal(&["--output", "./log", "true"]).is_none());
        assert!(words(&["--shell", "", "true"]).starts_with("An empty command"));
        assert!(words(&["--shell", "bash '", "true"]).ends_with("missing closing quote"));
        assert!(refusal(&["--debug-mode", "--shell", "", "sleep 1"]).is_none());
    }

    #[test]
    fn scan_bounds_are_read_with_hyperfines_decimal_parser() {
        let scan = |bounds: &[&str]| {
            let mut args = vec!["-P", "x"];
            args.extend_from_slice(bounds);
            args.push("echo {x}");
            words(&args)
        };
        let words =
            |detail: &str| format!("Error while parsing parameter scan arguments ({detail})");
        assert_eq!(
            scan(&["a", "3"]),
            words("Invalid decimal: unknown character")
        );
        assert_eq!(
            scan(&["1", "3", "-D", "1.5.2"]),
            words("Invalid decimal: two decimal points")
        );
        assert_eq!(scan(&["", "3"]), words("Invalid decimal: empty"));
        assert_eq!(scan(&["0.5", "2"]), STEP_REQUIRED);
        assert_eq!(scan(&["3", "1"]), "Empty parameter range");
        assert_eq!(scan(&["1_0", "3", "-D", "1"]), "Empty parameter range");
        for fine in [
            &["-3", "-1"][..],
            &["0.5", "2", "-D", "0.5"],
            &["1", "3", "-D", "1"],
        ] {
            let mut args = vec!["-P", "x"];
            args.extend_from_slice(fine);
            args.push("echo {x}");
            assert!(refusal(&args).is_none(), "{fine:?}");
        }
    }
}
