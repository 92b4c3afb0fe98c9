//! The arguments of `cmdscope completions` and `cmdscope man`: both print
//! text generated from this parser's own definition. Parsing only.

use clap::Args;

pub const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  cmdscope completions bash \\
      > ~/.local/share/bash-completion/completions/cmdscope
  cmdscope completions zsh > ~/.zfunc/_cmdscope   # fpath+=(~/.zfunc), compinit
  cmdscope completions fish > ~/.config/fish/completions/cmdscope.fish
";

pub const MAN_EXAMPLES: &str = "\
Examples:
  cmdscope man > ~/.local/share/man/man1/cmdscope.1
  cmdscope man run > ~/.local/share/man/man1/cmdscope-run.1
  cmdscope man suite submit | man -l -
";

/// `man`'s root page lists the subcommands as pages of their own; this says
/// where those come from.
pub const MAN_SUBCOMMAND_PAGES: &str = "\
.SH \"SUBCOMMAND PAGES\"
Each subcommand has a page of its own: \\fBcmdscope man run\\fR prints
\\fIcmdscope\\-run\\fR(1), \\fBcmdscope man suite submit\\fR prints
\\fIcmdscope\\-suite\\-submit\\fR(1).
";

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to print the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Print this subcommand's page instead of cmdscope's own (a path such
    /// as `suite submit` for a subcommand's subcommand).
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Vec<String>,
}
