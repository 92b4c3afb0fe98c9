//! Expands what the user typed into benchmark cells: one per command (and,
//! later, per parameter combination and variant). Pure: spawns nothing.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use crate::error::{Error, Result};

/// Hooks run through a shell around runs (hyperfine's semantics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Before each run (not timed).
    pub prepare: Option<String>,
    /// After each run (not timed).
    pub conclude: Option<String>,
    /// Once before the first run of the cell.
    pub setup: Option<String>,
    /// Once after the last run of the cell.
    pub cleanup: Option<String>,
}

/// One thing to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Display name: `-n` if given, else the command line.
    pub name: String,
    /// The command line as typed (lossy UTF-8, for display and export).
    pub command: String,
    /// What is executed: program and arguments as bytes.
    pub argv: Vec<Vec<u8>>,
    pub parameters: Vec<(String, String)>,
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    pub hooks: Hooks,
    /// The shell start-up calibration cell (`-S`): measured, never reported as a command.
    pub calibration: bool,
}

/// What the user asked for, before expansion.
#[derive(Clone, Debug, Default)]
pub struct PlanInput {
    pub commands: Vec<OsString>,
    pub names: Vec<String>,
    /// Run through this shell (`-S`), with `-c`.
    pub shell: Option<String>,
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    pub prepare: Vec<String>,
    pub conclude: Vec<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
}

/// Splits a command line into words the way a POSIX shell would (quotes and
/// backslashes), without expanding anything. Works on bytes so non-UTF-8
/// arguments survive.
pub fn split_words(command: &[u8]) -> Result<Vec<Vec<u8>>> {
    let words = shlex::bytes::split(command).ok_or_else(|| {
        Error::Usage(format!(
            "unbalanced quotes in command: {}",
            String::from_utf8_lossy(command)
        ))
    })?;
    if words.is_empty() {
        return Err(Error::Usage("empty command".into()));
    }
    Ok(words)
}

/// Parses `KEY=VALUE`.
pub fn parse_env(arg: &std::ffi::OsStr) -> Result<(Vec<u8>, Vec<u8>)> {
    let bytes = arg.as_bytes();
    match bytes.iter().position(|&b| b == b'=') {
        Some(eq) if eq > 0 => Ok((bytes[..eq].to_vec(), bytes[eq + 1..].to_vec())),
        _ => Err(Error::Usage(format!(
            "--env expects KEY=VALUE, got '{}'",
            arg.to_string_lossy()
        ))),
    }
}

/// Picks the per-command hook: one value applies to all, else one per command.
fn per_command(values: &[String], i: usize, n: usize, flag: &str) -> Result<Option<String>> {
    match values.len() {
        0 => Ok(None),
        1 => Ok(Some(values[0].clone())),
        k if k == n => Ok(Some(values[i].clone())),
        k => Err(Error::Usage(format!(
            "{flag} was given {k} times for {n} commands: give it once (for all) or once per command"
        ))),
    }
}

pub fn expand(input: &PlanInput) -> Result<Vec<Cell>> {
    let n = input.commands.len();
    if n == 0 {
        return Err(Error::Usage("no command given".into()));
    }
    if input.names.len() > n {
        return Err(Error::Usage(format!(
            "{} names (-n) for {n} commands",
            input.names.len()
        )));
    }
    let mut cells = Vec::with_capacity(n + 1);
    for (i, command) in input.commands.iter().enumerate() {
        let bytes = command.as_bytes();
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::Usage("empty command".into()));
        }
        let argv = match &input.shell {
            Some(shell) => vec![shell.as_bytes().to_vec(), b"-c".to_vec(), bytes.to_vec()],
            None => split_words(bytes)?,
        };
        let text = command.to_string_lossy().into_owned();
        cells.push(Cell {
            name: input.names.get(i).cloned().unwrap_or_else(|| text.clone()),
            command: text,
            argv,
            parameters: Vec::new(),
            env: input.env.clone(),
            hooks: Hooks {
                prepare: per_command(&input.prepare, i, n, "--prepare")?,
                conclude: per_command(&input.conclude, i, n, "--conclude")?,
                setup: input.setup.clone(),
                cleanup: input.cleanup.clone(),
            },
            calibration: false,
        });
    }
    if let Some(shell) = &input.shell {
        // Measured interleaved with the real runs, so the overhead subtracted
        // is the one the machine had while they ran.
        cells.push(Cell {
            name: format!("{shell} -c '' (shell start-up)"),
            command: String::new(),
            argv: vec![shell.as_bytes().to_vec(), b"-c".to_vec(), Vec::new()],
            parameters: Vec::new(),
            env: input.env.clone(),
            hooks: Hooks::default(),
            calibration: true,
        });
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn input(cmds: &[&str]) -> PlanInput {
        PlanInput {
            commands: cmds.iter().map(OsString::from).collect(),
            ..PlanInput::default()
        }
    }

    #[test]
    fn splits_like_a_shell_without_expanding() {
        let w = split_words(br#"grep -c "a b" 'c d' e\ f $HOME"#).unwrap();
        let w: Vec<&[u8]> = w.iter().map(|v| v.as_slice()).collect();
        assert_eq!(
            w,
            vec![&b"grep"[..], b"-c", b"a b", b"c d", b"e f", b"$HOME"]
        );
        assert!(split_words(b"echo 'oops").is_err());
        assert!(split_words(b"   ").is_err());
    }

    #[test]
    fn keeps_non_utf8_arguments_as_bytes() {
        let cmd = OsString::from_vec(b"printf \xff\xfe".to_vec());
        let cells = expand(&PlanInput {
            commands: vec![cmd],
            ..PlanInput::default()
        })
        .unwrap();
        assert_eq!(cells[0].argv[1], b"\xff\xfe".to_vec());
        assert!(cells[0].name.contains('\u{fffd}'));
    }

    #[test]
    fn shell_mode_wraps_and_adds_a_calibration_cell() {
        let mut i = input(&["echo hi | wc -c"]);
        i.shell = Some("sh".into());
        let cells = expand(&i).unwrap();
        assert_eq!(cells.len(), 2);
        assert_eq!(
            cells[0].argv,
            vec![b"sh".to_vec(), b"-c".to_vec(), b"echo hi | wc -c".to_vec()]
        );
        assert!(cells[1].calibration);
    }

    #[test]
    fn names_and_hooks_per_command() {
        let mut i = input(&["true", "false"]);
        i.names = vec!["yes".into()];
        i.prepare = vec!["p1".into(), "p2".into()];
        let cells = expand(&i).unwrap();
        assert_eq!(cells[0].name, "yes");
        assert_eq!(cells[1].name, "false");
        assert_eq!(cells[1].hooks.prepare.as_deref(), Some("p2"));
        i.prepare = vec!["a".into(), "b".into(), "c".into()];
        assert!(expand(&i).is_err());
    }

    #[test]
    fn rejects_empty_and_bad_env() {
        assert!(expand(&input(&[""])).is_err());
        assert!(expand(&input(&[])).is_err());
        assert!(parse_env("NOEQUALS".as_ref()).is_err());
        assert!(parse_env("=v".as_ref()).is_err());
        assert_eq!(
            parse_env("A=b=c".as_ref()).unwrap(),
            (b"A".to_vec(), b"b=c".to_vec())
        );
    }
}
