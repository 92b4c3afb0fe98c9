//! Expands what the user typed into benchmark cells: one per command (and,
//! later, per parameter combination and variant). Pure: spawns nothing.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::error::{Error, ExecError, PlanError, Result};
use crate::exec::workdir::Workdir;
// The parameter grammar has its own file; its types are the plan's.
pub use crate::run::parameters::{
    list, scan, scans, Parameter, ParameterError, ScanOrder, MAX_VALUES,
};

/// Hooks run through a shell around runs (hyperfine's semantics).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// The conditions a command runs under, beyond its arguments: what `--user`,
/// The most `--env-size` variables (62 bytes each with their pointers)
/// that could ever be executed: the kernel takes at most 6 MiB of
/// arguments and environment, whatever the stack limit. What fits on this
/// machine (a quarter of `ulimit -s`) is checked when the command is
/// prepared (`exec::check_exec_size`).
pub const MAX_ENV_SIZE: usize = 100_000;

/// `--env-size`, `--workdir`, ... resolved to for one cell.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Variant {
    /// Synthetic variables added to the environment.
    pub env_size: usize,
    /// Start from an empty environment instead of cmdscope's.
    pub clear_env: bool,
    /// Run as this user (name or uid).
    pub user: Option<String>,
    pub workdir: Option<Workdir>,
    /// Copied into each fresh working directory.
    pub workdir_template: Option<PathBuf>,
    /// CPUs the command is pinned to.
    pub cpus: Option<Vec<usize>>,
    pub nice: Option<i32>,
    /// Operations one run performs, for per-operation times.
    pub ops: Option<u64>,
    /// Instances run at once (`--concurrency`); `None`: one run at a time,
    /// the usual mode.
    #[serde(default)]
    pub concurrency: Option<usize>,
}

/// The most instances at once (`--concurrency`): beyond it the host runs
/// out of processes long before the answer means anything.
pub const MAX_CONCURRENCY: usize = 4096;

/// Variant options as typed: each may hold `{param}` placeholders.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VariantInput {
    pub env_size: Option<String>,
    pub clear_env: bool,
    pub user: Option<String>,
    pub workdir: Option<String>,
    pub workdir_template: Option<String>,
    pub cpus: Option<String>,
    pub nice: Option<String>,
    pub ops: Option<String>,
    pub concurrency: Option<String>,
}

impl VariantInput {
    /// Resolves the options for one parameter combination.
    pub fn resolve(&self, params: &[(String, String)]) -> Result<Variant> {
        let sub = |t: &Option<String>| t.as_ref().map(|t| substitute_str(t, params));
        let int = |flag: &str, t: Option<String>| -> Result<Option<i64>> {
            t.map(|t| {
                t.trim().parse::<i64>().map_err(|_| {
                    PlanError::NotAWholeNumber {
                        flag: flag.into(),
                        text: t.clone(),
                    }
                    .into()
                })
            })
            .transpose()
        };
        let env_size = match int("--env-size", sub(&self.env_size))? {
            Some(n) if !(0..=MAX_ENV_SIZE as i64).contains(&n) => {
                return Err(PlanError::EnvSize {
                    max: MAX_ENV_SIZE,
                    got: n,
                }
                .into())
            }
            Some(n) => n as usize,
            None => 0,
        };
        let nice = match int("--nice", sub(&self.nice))? {
            Some(n) if !(-20..=19).contains(&n) => return Err(PlanError::Nice(n).into()),
            n => n.map(|n| n as i32),
        };
        let ops = match int("--ops", sub(&self.ops))? {
            Some(n) if n < 1 => return Err(PlanError::Ops(n).into()),
            n => n.map(|n| n as u64),
        };
        let concurrency = match int("--concurrency", sub(&self.concurrency))? {
            Some(n) if !(1..=MAX_CONCURRENCY as i64).contains(&n) => {
                return Err(PlanError::Concurrency {
                    max: MAX_CONCURRENCY,
                    got: n,
                }
                .into())
            }
            n => n.map(|n| n as usize),
        };
        let cpus = sub(&self.cpus).map(|c| parse_cpus(&c)).transpose()?;
        let workdir = sub(&self.workdir).map(|w| match w.as_str() {
            "tmpfs" => Workdir::Tmpfs,
            dir => Workdir::Under(PathBuf::from(dir)),
        });
        let workdir_template = sub(&self.workdir_template).map(PathBuf::from);
        if workdir_template.is_some() && workdir.is_none() {
            return Err(PlanError::TemplateNeedsWorkdir.into());
        }
        let user = sub(&self.user);
        if user.as_deref().is_some_and(|u| u.trim().is_empty()) {
            return Err(PlanError::EmptyUser.into());
        }
        Ok(Variant {
            env_size,
            clear_env: self.clear_env,
            user,
            workdir,
            workdir_template,
            cpus,
            nice,
            ops,
            concurrency,
        })
    }
}

/// "0-3,6" -> [0, 1, 2, 3, 6].
pub fn parse_cpus(text: &str) -> Result<Vec<usize>> {
    let bad = || Error::from(PlanError::BadCpuList(text.into()));
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: usize = a.trim().parse().map_err(|_| bad())?;
        let b: usize = b.trim().parse().map_err(|_| bad())?;
        if a > b || b >= 1024 {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// One thing to measure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    /// Display name: `-n` if given, else the command line; followed by the
    /// parameters the command line does not show: `cmd (u = root)`.
    pub name: String,
    /// The name without those parameters: hyperfine's `command` field in
    /// the JSON and CSV exports.
    pub short_name: String,
    /// The command line as typed (lossy UTF-8, for display and export).
    pub command: String,
    /// What is executed: program and arguments as bytes.
    pub argv: Vec<Vec<u8>>,
    pub parameters: Vec<(String, String)>,
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    pub hooks: Hooks,
    /// The shell start-up calibration cell (`-S`): measured, never reported as a command.
    pub calibration: bool,
    pub variant: Variant,
    /// Which of the given commands this cell came from (its index), or
    /// [`REFERENCE`] for the command added with `--reference CMD`.
    pub template: usize,
    /// Named with `-n`/`--reference-name` rather than after its command.
    pub custom_name: bool,
    /// Runs through a shell (`sh -c`), whose start-up is subtracted.
    pub shell: bool,
    /// Why the shell was chosen without `-S` (the shell syntax found).
    pub shell_reason: Option<String>,
}

/// [`Cell::template`] of the reference command added by `--reference CMD`.
pub const REFERENCE: usize = usize::MAX;

/// How commands are run: directly or through a shell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ShellMode {
    /// Directly, unless the command is written in shell syntax (make's rule).
    #[default]
    Auto,
    /// Always through this shell (its words: program and options), with `-c`.
    Always(Vec<String>),
    /// Always directly (`-N`, `--shell=none`).
    Never,
}

impl ShellMode {
    /// `--shell VALUE`: "none" means no shell; other values are split into
    /// words ("bash --norc"), as hyperfine does.
    pub fn from_arg(value: &str) -> Result<ShellMode> {
        if value.trim() == "none" {
            return Ok(ShellMode::Never);
        }
        let words = shlex::split(value)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| PlanError::NotAShell(value.into()))?;
        Ok(ShellMode::Always(words))
    }
}

/// All combinations of the parameters' values (the first parameter varies fastest).
pub fn combinations(params: &[Parameter]) -> Result<Vec<Vec<(String, String)>>> {
    let total = params
        .iter()
        .try_fold(1usize, |acc, p| acc.checked_mul(p.values.len()));
    match total {
        Some(t) if t <= MAX_VALUES => {}
        _ => return Err(PlanError::TooManyCombinations(MAX_VALUES).into()),
    }
    // Built from the last parameter, so that the first varies fastest (as
    // hyperfine orders them); each combination lists the parameters in the
    // order they were given.
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for p in params.iter().rev() {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                p.values.iter().map(move |v| {
                    let mut with = vec![(p.name.clone(), v.clone())];
                    with.extend(c.iter().cloned());
                    with
                })
            })
            .collect();
    }
    Ok(combos)
}

/// Replaces every `{name}` with its value; other braces are left alone.
pub fn substitute(text: &[u8], params: &[(String, String)]) -> Vec<u8> {
    let mut out = text.to_vec();
    for (name, value) in params {
        let pattern = format!("{{{name}}}").into_bytes();
        let mut replaced = Vec::with_capacity(out.len());
        let mut i = 0;
        while i < out.len() {
            if out[i..].starts_with(&pattern) {
                replaced.extend_from_slice(value.as_bytes());
                i += pattern.len();
            } else {
                replaced.push(out[i]);
                i += 1;
            }
        }
        out = replaced;
    }
    out
}

fn substitute_str(text: &str, params: &[(String, String)]) -> String {
    String::from_utf8_lossy(&substitute(text.as_bytes(), params)).into_owned()
}

/// What the user asked for, before expansion.
#[derive(Clone, Debug, Default)]
pub struct PlanInput {
    pub commands: Vec<OsString>,
    pub names: Vec<String>,
    pub shell: ShellMode,
    /// `--reference CMD` (hyperfine 1.20): a command benchmarked first, the
    /// others compared with it; named `--reference-name` if given.
    pub reference: Option<(OsString, Option<String>)>,
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    pub prepare: Vec<String>,
    pub conclude: Vec<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub parameters: Vec<Parameter>,
    pub variant: VariantInput,
}

/// Splits a command line into words the way a POSIX shell would (quotes and
/// backslashes), without expanding anything. Works on bytes so non-UTF-8
/// arguments survive.
pub fn split_words(command: &[u8]) -> Result<Vec<Vec<u8>>> {
    let words = shlex::bytes::split(command).ok_or_else(|| {
        PlanError::UnbalancedQuotes(String::from_utf8_lossy(command).into_owned())
    })?;
    if words.is_empty() {
        return Err(ExecError::EmptyCommand.into());
    }
    Ok(words)
}

/// Parses `KEY=VALUE`.
pub fn parse_env(arg: &std::ffi::OsStr) -> Result<(Vec<u8>, Vec<u8>)> {
    let bytes = arg.as_bytes();
    match bytes.iter().position(|&b| b == b'=') {
        Some(eq) if eq > 0 => Ok((bytes[..eq].to_vec(), bytes[eq + 1..].to_vec())),
        _ => Err(PlanError::BadEnv(arg.to_string_lossy().into_owned()).into()),
    }
}

/// Picks the per-command hook of the `i`-th of `n` commands: one value
/// applies to all, else one per command. An added `--reference` command is
/// the first of them, as in hyperfine.
pub fn per_command<'a>(
    values: &'a [String],
    i: usize,
    n: usize,
    reference: bool,
    flag: &str,
) -> Result<Option<&'a String>> {
    match values.len() {
        0 => Ok(None),
        1 => Ok(Some(&values[0])),
        k if k == n => Ok(Some(&values[i])),
        k => Err(Error::PerCommandCount {
            flag: flag.to_string(),
            given: k,
            commands: n,
            reference,
        }),
    }
}

/// A command as prepared once, before parameters are substituted.
struct Template {
    bytes: Vec<u8>,
    /// Its words (split once, before substitution, so that a value never
    /// becomes two words), or None when it runs through a shell.
    words: Option<Vec<Vec<u8>>>,
    shell_reason: Option<String>,
}

fn template(bytes: &[u8], mode: &ShellMode, parameters: &[Parameter]) -> Result<Template> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ExecError::EmptyCommand.into());
    }
    let (words, shell_reason) = match mode {
        ShellMode::Always(_) => (None, None),
        ShellMode::Never => (Some(split_words(bytes)?), None),
        ShellMode::Auto => {
            // Placeholders are cmdscope's, not shell syntax.
            let plain = parameters.iter().fold(bytes.to_vec(), |text, p| {
                substitute(&text, &[(p.name.clone(), "x".into())])
            });
            match crate::run::shell_syntax::shell_syntax(&plain) {
                Some(reason) => (None, Some(reason)),
                None => (Some(split_words(bytes)?), None),
            }
        }
    };
    Ok(Template {
        bytes: bytes.to_vec(),
        words,
        shell_reason,
    })
}

/// The shell (program and options) a command without words runs through.
fn shell_words(mode: &ShellMode) -> Vec<Vec<u8>> {
    match mode {
        ShellMode::Always(words) => words.iter().map(|w| w.as_bytes().to_vec()).collect(),
        _ => vec![b"sh".to_vec()],
    }
}

/// `command (a = 1, b = x)`: the parameters a command line does not show,
/// so that every cell's name says what made it (hyperfine's names).
pub fn name_with_parameters(name: &str, unused: &[(String, String)]) -> String {
    if unused.is_empty() {
        return name.to_string();
    }
    let p: Vec<String> = unused.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{name} ({})", p.join(", "))
}

pub fn expand(input: &PlanInput) -> Result<Vec<Cell>> {
    let n = input.commands.len();
    if n == 0 {
        return Err(PlanError::NoCommand.into());
    }
    if input.names.len() > n {
        return Err(Error::TooManyNames {
            given: input.names.len(),
            commands: n,
        });
    }
    let mut seen = std::collections::HashSet::new();
    for p in &input.parameters {
        if !seen.insert(&p.name) {
            return Err(Error::DuplicateParameter(p.name.clone()));
        }
    }
    let combos = combinations(&input.parameters)?;
    if combos.len() * n > MAX_VALUES {
        return Err(PlanError::TooManyBenchmarks {
            commands: n,
            combinations: combos.len(),
            max: MAX_VALUES,
        }
        .into());
    }
    let templates = input
        .commands
        .iter()
        .map(|c| template(c.as_bytes(), &input.shell, &input.parameters))
        .collect::<Result<Vec<_>>>()?;
    let shell = shell_words(&input.shell);
    let argv = |t: &Template, params: &[(String, String)]| match &t.words {
        Some(words) => words.iter().map(|w| substitute(w, params)).collect(),
        None => {
            let mut argv = shell.clone();
            argv.push(b"-c".to_vec());
            argv.push(substitute(&t.bytes, params));
            argv
        }
    };
    let mut cells = Vec::with_capacity(n * combos.len() + 2);
    // The hooks of the i-th command of `hooked`: the reference first.
    let added = usize::from(input.reference.is_some());
    let hooked = n + added;
    let hooks = |i: usize| -> Result<(Option<&String>, Option<&String>)> {
        Ok((
            per_command(&input.prepare, i, hooked, added == 1, "--prepare")?,
            per_command(&input.conclude, i, hooked, added == 1, "--conclude")?,
        ))
    };
    if let Some((command, name)) = &input.reference {
        let (prepare, conclude) = hooks(0)?;
        let t = template(command.as_bytes(), &input.shell, &[])?;
        let text = String::from_utf8_lossy(&t.bytes).into_owned();
        cells.push(Cell {
            short_name: name.clone().unwrap_or_else(|| text.clone()),
            name: name.clone().unwrap_or_else(|| text.clone()),
            custom_name: name.is_some(),
            command: text,
            argv: argv(&t, &[]),
            env: input.env.clone(),
            hooks: Hooks {
                prepare: prepare.cloned(),
                conclude: conclude.cloned(),
                setup: input.setup.clone(),
                cleanup: input.cleanup.clone(),
            },
            variant: input.variant.resolve(&[])?,
            template: REFERENCE,
            shell: t.words.is_none(),
            shell_reason: t.shell_reason.clone(),
            ..Cell::default()
        });
    }
    // Values outer, commands inner, as hyperfine orders them.
    for params in &combos {
        for (i, t) in templates.iter().enumerate() {
            let (prepare, conclude) = hooks(added + i)?;
            let text = String::from_utf8_lossy(&substitute(&t.bytes, params)).into_owned();
            let sub = |h: Option<&String>| h.map(|h| substitute_str(h, params));
            // Parameters the command line does not show (used only in a
            // name, a hook, an option or nowhere) are added to the name.
            let unused: Vec<(String, String)> = params
                .iter()
                .filter(|(k, _)| {
                    let pattern = format!("{{{k}}}").into_bytes();
                    !t.bytes.windows(pattern.len()).any(|w| w == pattern)
                })
                .cloned()
                .collect();
            let given = input.names.get(i);
            let name = given
                .map(|n| substitute_str(n, params))
                .unwrap_or_else(|| text.clone());
            cells.push(Cell {
                name: name_with_parameters(&name, &unused),
                short_name: name,
                custom_name: given.is_some(),
                command: text,
                argv: argv(t, params),
                parameters: params.clone(),
                env: input
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), substitute(v, params)))
                    .collect(),
                hooks: Hooks {
                    prepare: sub(prepare),
                    conclude: sub(conclude),
                    setup: sub(input.setup.as_ref()),
                    cleanup: sub(input.cleanup.as_ref()),
                },
                calibration: false,
                variant: input.variant.resolve(params)?,
                template: i,
                shell: t.words.is_none(),
                shell_reason: t.shell_reason.clone(),
            });
        }
    }
    // The shell's start-up, measured interleaved with the real runs (so the
    // overhead subtracted is the one the machine had while they ran), once
    // per distinct set of conditions the shell cells run under: a shell
    // starts slower in a huge environment, as the command does.
    let mut calibrations: Vec<Cell> = Vec::new();
    for c in cells.iter().filter(|c| c.shell) {
        if calibrations
            .iter()
            .any(|k| k.variant == c.variant && k.env == c.env)
        {
            continue;
        }
        let shell_text: Vec<String> = shell
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let mut argv = shell.clone();
        argv.extend([b"-c".to_vec(), Vec::new()]);
        calibrations.push(Cell {
            name: format!("{} -c '' (shell start-up)", shell_text.join(" ")),
            argv,
            env: c.env.clone(),
            calibration: true,
            variant: c.variant.clone(),
            shell: true,
            ..Cell::default()
        });
    }
    cells.extend(calibrations);
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
        i.shell = ShellMode::from_arg("bash --norc").unwrap();
        let cells = expand(&i).unwrap();
        assert_eq!(cells.len(), 2);
        assert_eq!(
            cells[0].argv,
            vec![
                b"bash".to_vec(),
                b"--norc".to_vec(),
                b"-c".to_vec(),
                b"echo hi | wc -c".to_vec()
            ]
        );
        assert!(cells[0].shell && cells[1].calibration);
        assert_eq!(ShellMode::from_arg("none").unwrap(), ShellMode::Never);
    }

    #[test]
    fn shell_syntax_alone_chooses_the_shell() {
        let mut i = input(&["sleep {t}", "echo {t} >> log"]);
        i.parameters = vec![list("t", "1").unwrap()];
        let cells = expand(&i).unwrap();
        assert_eq!(cells[0].argv, vec![b"sleep".to_vec(), b"1".to_vec()]);
        assert!(!cells[0].shell && cells[0].shell_reason.is_none());
        assert_eq!(cells[1].argv[..2], [b"sh".to_vec(), b"-c".to_vec()]);
        assert!(cells[1].shell_reason.as_deref().unwrap().contains(">>"));
        assert!(cells[2].calibration);
        // -N: split and executed directly, whatever it looks like.
        i.shell = ShellMode::Never;
        let cells = expand(&i).unwrap();
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1].argv[2], b">>".to_vec());
    }

    #[test]
    fn parameters_in_options_with_a_shell_calibrate_per_condition() {
        // -S -L n 0,5 --env-size {n} true: the shell starts in each environment.
        let mut i = input(&["true"]);
        i.shell = ShellMode::from_arg("sh").unwrap();
        i.parameters = vec![list("n", "0,5").unwrap()];
        i.variant.env_size = Some("{n}".into());
        let cells = expand(&i).unwrap();
        let sizes: Vec<(bool, usize)> = cells
            .iter()
            .map(|c| (c.calibration, c.variant.env_size))
            .collect();
        assert_eq!(sizes, [(false, 0), (false, 5), (true, 0), (true, 5)]);
        assert_eq!(cells[0].name, "true (n = 0)");
    }

    #[test]
    fn values_outer_commands_inner_and_names_show_hidden_parameters() {
        let mut i = input(&["a {v}", "b"]);
        i.parameters = vec![list("v", "1,2").unwrap()];
        let names: Vec<String> = expand(&i).unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["a 1", "b (v = 1)", "a 2", "b (v = 2)"]);
        let mut i = input(&["ruby spawn.rb"]);
        i.parameters = vec![list("u", "root,nobody").unwrap()];
        i.variant.user = Some("{u}".into());
        let cells = expand(&i).unwrap();
        assert_eq!(cells[0].name, "ruby spawn.rb (u = root)");
        assert_eq!(cells[0].short_name, "ruby spawn.rb");
        assert_eq!(cells[1].name, "ruby spawn.rb (u = nobody)");
        assert_eq!(cells[1].variant.user.as_deref(), Some("nobody"));
        assert_eq!(cells[1].template, 0);
    }

    #[test]
    fn a_reference_command_comes_first() {
        let mut i = input(&["sleep {n}"]);
        i.parameters = vec![list("n", "1,2").unwrap()];
        i.reference = Some(("sleep 0".into(), Some("base".into())));
        let cells = expand(&i).unwrap();
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[0].name, "base");
        assert_eq!(cells[0].template, REFERENCE);
        assert_eq!(cells[0].argv, vec![b"sleep".to_vec(), b"0".to_vec()]);
        assert!(cells[0].parameters.is_empty());
    }

    #[test]
    fn the_reference_is_the_first_command_of_per_command_hooks() {
        let mut i = input(&["a", "b"]);
        i.reference = Some(("a".into(), None));
        i.prepare = vec!["p0".into(), "p1".into(), "p2".into()];
        i.conclude = vec!["c".into()];
        let cells = expand(&i).unwrap();
        let hooks: Vec<(&str, Option<&str>, Option<&str>)> = cells
            .iter()
            .map(|c| {
                let h = &c.hooks;
                (
                    c.command.as_str(),
                    h.prepare.as_deref(),
                    h.conclude.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            hooks,
            [
                ("a", Some("p0"), Some("c")),
                ("a", Some("p1"), Some("c")),
                ("b", Some("p2"), Some("c")),
            ]
        );
        assert_eq!(cells[0].template, REFERENCE);
        i.prepare.pop();
        let e = expand(&i).unwrap_err().to_string();
        assert_eq!(
            e,
            "--prepare was given 2 times for 3 commands (the --reference command counts, first): \
             give it once (for all) or once per command"
        );
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
    fn lists_and_their_product() {
        assert!(list("a", "").is_err());
        assert!(list("a", "1,,2").is_err());
        assert!(list("1a", "x").is_err());
        let a = list("a", "x,y").unwrap();
        assert!(a.numeric.is_none());
        let b = list("b", "1,2,3").unwrap();
        assert_eq!(b.numeric, Some(vec![1.0, 2.0, 3.0]));
        let c = combinations(&[a, b]).unwrap();
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[0],
            vec![
                ("a".to_string(), "x".to_string()),
                ("b".to_string(), "1".to_string())
            ]
        );
        assert_eq!(c[5][0].1, "y");
        assert_eq!(c[5][1].1, "3");
        // The first parameter varies fastest, as in hyperfine.
        assert_eq!(c[1][0].1, "y");
        assert_eq!(c[1][1].1, "1");
    }

    #[test]
    fn substitution_in_words_env_hooks_and_names() {
        let mut i = input(&["xargs -n {batch} 'sha {mode}'"]);
        i.parameters = vec![list("batch", "1,2").unwrap(), list("mode", "a b").unwrap()];
        i.names = vec!["n={batch}".into()];
        i.env = vec![(b"B".to_vec(), b"{batch}".to_vec())];
        i.prepare = vec!["echo {batch}".into()];
        let cells = expand(&i).unwrap();
        assert_eq!(cells.len(), 2);
        assert_eq!(
            cells[1].argv,
            vec![
                b"xargs".to_vec(),
                b"-n".to_vec(),
                b"2".to_vec(),
                b"sha a b".to_vec()
            ]
        );
        assert_eq!(cells[1].name, "n=2");
        assert_eq!(cells[1].env[0].1, b"2".to_vec());
        assert_eq!(cells[1].hooks.prepare.as_deref(), Some("echo 2"));
        // A value with spaces stays one word; unknown braces stay as they are.
        assert_eq!(
            substitute(b"{x} {y}", &[("x".into(), "a b".into())]),
            b"a b {y}".to_vec()
        );
    }

    #[test]
    fn unused_parameters_run_and_duplicates_are_errors() {
        // hyperfine runs a parameter the command does not use, named after it.
        let mut i = input(&["sleep 1"]);
        i.parameters = vec![list("n", "1,2").unwrap()];
        let cells = expand(&i).unwrap();
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1].name, "sleep 1 (n = 2)");
        let mut i = input(&["sleep {n}"]);
        i.parameters = vec![list("n", "1").unwrap(), list("n", "2").unwrap()];
        assert!(expand(&i).unwrap_err().to_string().contains("twice"));
    }

    #[test]
    fn variants_resolve_per_parameter_value() {
        let mut i = input(&["true"]);
        i.parameters = vec![list("n", "0,5000").unwrap()];
        i.variant = VariantInput {
            env_size: Some("{n}".into()),
            cpus: Some("0-1,3".into()),
            workdir: Some("tmpfs".into()),
            ops: Some("100".into()),
            ..VariantInput::default()
        };
        let cells = expand(&i).unwrap();
        assert_eq!(cells[0].variant.env_size, 0);
        assert_eq!(cells[1].variant.env_size, 5000);
        assert_eq!(cells[1].variant.cpus, Some(vec![0, 1, 3]));
        assert_eq!(cells[1].variant.workdir, Some(Workdir::Tmpfs));
        assert_eq!(cells[1].variant.ops, Some(100));
    }

    #[test]
    fn bad_variants_are_usage_errors() {
        let bad = |v: VariantInput| VariantInput::resolve(&v, &[]).unwrap_err().to_string();
        assert!(bad(VariantInput {
            env_size: Some("x".into()),
            ..Default::default()
        })
        .contains("whole number"));
        assert!(bad(VariantInput {
            nice: Some("40".into()),
            ..Default::default()
        })
        .contains("-20 and 19"));
        assert!(bad(VariantInput {
            ops: Some("0".into()),
            ..Default::default()
        })
        .contains("at least 1"));
        assert!(bad(VariantInput {
            cpus: Some("3-1".into()),
            ..Default::default()
        })
        .contains("--cpus"));
        assert!(bad(VariantInput {
            workdir_template: Some("t".into()),
            ..Default::default()
        })
        .contains("--workdir"));
        assert!(bad(VariantInput {
            user: Some(" ".into()),
            ..Default::default()
        })
        .contains("--user"));
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
