//! Running a hook (`--setup`, `--prepare`, `--conclude`, `--cleanup`)
//! through sh with what it shares with the measured commands: the input
//! (read from its start by every hook, as by every run), the environment,
//! and the output when it is shown. Hooks are not measured, so they are
//! started here, not by the spawner.

use std::process::Stdio;

use crate::error::{Error, Result};
use crate::exec::Input;
use crate::run::plan::Cell;

/// Runs `hook` for `cell`, with `vars` set besides the cell's
/// environment; a failing hook is an error naming it.
pub fn run(
    what: &str,
    hook: &str,
    cell: &Cell,
    input: &Input,
    show_output: bool,
    vars: &[(&str, String)],
) -> Result<()> {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(hook);
    match input {
        Input::Null => {
            cmd.stdin(Stdio::null());
        }
        Input::File(path) => {
            let file = std::fs::File::open(path).map_err(|source| Error::Read {
                path: path.clone(),
                source,
            })?;
            cmd.stdin(file);
        }
    }
    if !show_output {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    for (k, v) in &cell.env {
        use std::os::unix::ffi::OsStrExt;
        cmd.env(
            std::ffi::OsStr::from_bytes(k),
            std::ffi::OsStr::from_bytes(v),
        );
    }
    cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    let status = cmd.status().map_err(|e| Error::Spawn {
        command: format!("sh -c {hook}"),
        source: e,
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::HookFailed {
            what: what.to_string(),
            hook: hook.to_string(),
            status: status.to_string(),
            name: cell.name.clone(),
        })
    }
}
