//! The arguments of `cmdscope doctor`. Parsing only.

use clap::Args;

pub const DOCTOR_EXAMPLES: &str = "\
Examples:
  cmdscope doctor                    # ok / WARN / unknown for each check
  cmdscope doctor --cpus 2,3         # the checks for the CPUs you will pin to
  cmdscope doctor --json | jq .status
  sudo cmdscope doctor --fix   # performance governor, turbo off; prints undo
";

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Print the checks as JSON: {status, checks: [{name, status, detail}], changes, failures}.
    #[arg(long)]
    pub json: bool,

    /// Set the performance governor and turn turbo off where the kernel
    /// allows (needs root; lasts until reboot; prints how to undo).
    #[arg(long)]
    pub fix: bool,

    /// Check these CPUs (as for `run --cpus`), e.g. 2,3 [default: all this process may use].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
}
