//! Why a subcommand of cmdscope's own (completions, doctor) was refused.

/// A request to cmdscope itself it cannot serve (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CliError {
    #[error("'{under}' has no subcommands (asked for '{name}')")]
    NoSubcommands { under: String, name: String },
    #[error("'{under}' has no subcommand '{name}'; its subcommands: {}", .names.join(", "))]
    NoSuchSubcommand {
        under: String,
        name: String,
        names: Vec<String>,
    },
    #[error("doctor --fix writes to /sys and needs root (try: sudo cmdscope doctor --fix)")]
    DoctorFixNeedsRoot,
}
