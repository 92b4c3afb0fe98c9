//! Thin binary: parse arguments, dispatch, map errors to exit codes.

use cmdscope::cli::{Cli, Command};
use cmdscope::error::exit;

fn main() {
    let args = cmdscope::cli::front_door(std::env::args_os().collect());
    let front_door = cmdscope::cli::is_front_door(&args);
    if front_door {
        use cmdscope::cli::hyperfine::{check, Refusal};
        match check(&args) {
            Ok(()) => {}
            Err(Refusal::Parse(e)) => parse_failed(e, front_door),
            Err(Refusal::Value(words)) => {
                // As hyperfine prints the values it refuses after parsing.
                cmdscope::eprint_line!("Error: {}", cmdscope::output::escape_line(&words));
                std::process::exit(exit::FAILURE);
            }
        }
    }
    let cli = match Cli::parse_ordered(args) {
        Ok(cli) => cli,
        Err(e) => parse_failed(e, front_door),
    };
    let result = match &cli.command {
        Command::Run(args) => cmdscope::commands::run::run(args),
        Command::Hyperfine(args) => cmdscope::commands::run::hyperfine(args),
        Command::Compare(args) => cmdscope::commands::compare::run(args),
        Command::Explain(args) => cmdscope::commands::explain::run(args),
        Command::History(args) => cmdscope::commands::history::run(args),
        Command::Check(args) => cmdscope::commands::check::run(args),
        Command::Changes(args) => cmdscope::commands::changes::run(args),
        Command::Report(args) => cmdscope::commands::report::run(args),
        Command::Import(args) => cmdscope::commands::import::run(args),
        Command::Suite(args) => cmdscope::commands::suite::run(args),
        Command::Status(args) => cmdscope::commands::status::run(args),
        Command::Doctor(args) => cmdscope::commands::doctor::run(args),
        Command::Completions(args) => cmdscope::commands::completions::completions(args),
        Command::Man(args) => cmdscope::commands::completions::man(args),
        Command::StoreWriter => Ok(cmdscope::store::writer::serve()),
    };
    let code = match result {
        Ok(code) => code,
        Err(cmdscope::error::Error::Interrupted) => {
            cmdscope::eprint_line!("cmdscope: interrupted; finished runs were exported");
            exit::INTERRUPTED
        }
        Err(e) => {
            // Messages may quote files, stores and command output. The
            // front door's start as hyperfine's do, for scripts that match.
            cmdscope::eprint_line!(
                "{} {}",
                if front_door {
                    "Error:"
                } else {
                    "cmdscope: error:"
                },
                cmdscope::output::escape_line(&e.to_string())
            );
            e.exit_code()
        }
    };
    std::process::exit(code);
}

/// A parse error, printed as the front door (`front_door`: hyperfine's
/// block) or every other subcommand (one line) prints it, and its exit.
fn parse_failed(e: clap::Error, front_door: bool) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        std::process::exit(
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                exit::USAGE
            } else {
                exit::OK
            },
        );
    }
    let text = e.render().to_string();
    if front_door {
        // hyperfine's block, which scripts written for it may match.
        for line in cmdscope::cli::hyperfine_parse_error(&text).lines() {
            cmdscope::eprint_line!("{}", cmdscope::output::escape_line(line));
        }
        std::process::exit(exit::USAGE);
    }
    // One line, as every other error: clap's first line names the problem.
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if message.ends_with(':') {
        // "required arguments were not provided:" is followed by their names.
        message = format!("{message} {}", lines.next().unwrap_or(""));
    }
    // clap's tips ("a similar argument exists: '--warmup'") and the
    // possible values are the fix: keep them on the same line.
    for line in lines {
        if let Some(tip) = line.strip_prefix("tip: ") {
            message = format!("{message}; tip: {tip}");
        } else if line.starts_with("[possible values:") {
            message = format!("{message} {line}");
        }
    }
    // clap quotes what was typed: made safe to print, as every message.
    cmdscope::eprint_line!(
        "cmdscope: error: {} (see 'cmdscope --help')",
        cmdscope::output::escape_line(&message)
    );
    std::process::exit(exit::USAGE);
}
