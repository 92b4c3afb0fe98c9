//! Why `explain`, its tracer or a `--monitor` could not do their work.

/// A tracer or monitor that cannot run as asked (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExplainError {
    #[error("explain supports Linux on x86_64 only (its syscall table is x86_64's)")]
    UnsupportedPlatform,
    #[error("ptrace is not permitted here (kernel.yama.ptrace_scope or a seccomp filter); explain needs it")]
    PtraceNotPermitted,
    #[error("ptrace is not available on this system; explain needs it")]
    PtraceMissing,
    #[error("cannot trace the command: ptrace failed ({})", std::io::Error::from_raw_os_error(*.0))]
    Ptrace(i32),
    #[error("--match '{0}': expected NAME=REGEX (the metric is monitor_NAME)")]
    MatchNotNameRegex(String),
    #[error("--match '{0}': NAME must be letters, digits and '_'")]
    MatchBadName(String),
    #[error("--match name '{0}' is given twice")]
    MatchTwice(String),
    #[error("--match '{pattern}' is not a valid regular expression: {reason}")]
    BadRegex { pattern: String, reason: String },
    #[error("--monitor needs at least one --match NAME=REGEX")]
    MonitorNeedsMatch,
    /// `how`: how it ended ("exit status: 1").
    #[error(
        "monitor '{command}' ended before the first run ({how}): it must run for the whole session"
    )]
    MonitorEndedEarly { command: String, how: String },
    /// `said`: the last line it wrote to stderr, if any.
    #[error("monitor '{command}' failed to start: {how}{}", .said.as_deref().map_or_else(String::new, |l| format!(": {l}")))]
    MonitorFailedToStart {
        command: String,
        how: String,
        said: Option<String>,
    },
}
