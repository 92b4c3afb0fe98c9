//! Thin binary: parse arguments, dispatch, map errors to exit codes.

use clap::Parser;
use cmdscope::cli::{Cli, Command};
use cmdscope::error::exit;

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(args) => cmdscope::app::run(args),
        Command::Compare(_) => Err(cmdscope::error::Error::Usage(
            "compare: not built yet".into(),
        )),
    };
    let code = match result {
        Ok(code) => code,
        Err(cmdscope::error::Error::Interrupted) => {
            eprintln!("cmdscope: interrupted; finished runs were exported");
            exit::INTERRUPTED
        }
        Err(e) => {
            eprintln!("cmdscope: error: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
