//! `cmdscope completions` and `cmdscope man`: text generated from the one
//! definition of the flags (`cli::Cli`), so neither can drift from what
//! the parser accepts. They print only: no store, no spawner, no checks.

use clap::CommandFactory;

use crate::cli::completions::{CompletionsArgs, ManArgs, MAN_SUBCOMMAND_PAGES};
use crate::cli::Cli;
use crate::error::{exit, CliError, Result};

/// Prints the completion script for the chosen shell.
pub fn completions(args: &CompletionsArgs) -> Result<i32> {
    // The generators offer hidden subcommands too: the store writer is
    // internal, so the scripts complete a copy of the parser without it.
    let full = Cli::command();
    let mut command = clap::Command::new("cmdscope")
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .about(full.get_about().cloned().unwrap_or_default())
        .args(full.get_arguments().cloned())
        .subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "cmdscope", &mut script);
    crate::output::print_bytes(&script);
    Ok(exit::OK)
}

/// Prints the roff page of cmdscope, or of the subcommand named by the
/// path in `args` (`run`, `suite submit`), as `man` expects it.
pub fn man(args: &ManArgs) -> Result<i32> {
    // `help` is no page of its own; building sets each subcommand's page
    // name ("cmdscope-run") and usage ("cmdscope run").
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let mut page = &command;
    for name in &args.subcommand {
        let visible = || page.get_subcommands().filter(|s| !s.is_hide_set());
        page = visible().find(|s| s.get_name() == name).ok_or_else(|| {
            let names: Vec<&str> = visible().map(|s| s.get_name()).collect();
            let under = page.get_display_name().unwrap_or("cmdscope");
            let (under, name) = (under.to_string(), name.clone());
            if names.is_empty() {
                CliError::NoSubcommands { under, name }
            } else {
                CliError::NoSuchSubcommand {
                    under,
                    name,
                    names: names.iter().map(|n| n.to_string()).collect(),
                }
            }
        })?;
    }
    let version = command.get_version().unwrap_or_default();
    let mut roff = Vec::new();
    clap_mangen::Man::new(page.clone())
        .source(format!("cmdscope {version}"))
        .render(&mut roff)?;
    if args.subcommand.is_empty() {
        roff.extend_from_slice(MAN_SUBCOMMAND_PAGES.as_bytes());
    }
    crate::output::print_bytes(&roff);
    Ok(exit::OK)
}
