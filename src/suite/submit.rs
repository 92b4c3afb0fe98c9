//! `cmdscope suite submit --slurm`: writes a job script that runs one
//! partition per array task and submits it with sbatch.
//!
//! The script names this cmdscope by its absolute path (the nodes share
//! the file system, as Slurm clusters do) and the suite by its absolute
//! path. The store location reaches the tasks through the environment
//! (sbatch exports the submitter's environment by default): a password in
//! a store URL is never written into the script.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::file;
use super::partition::Partition;
use super::scheduler::check_run_id;
use super::status;
use crate::error::{exit, Error, Result, SuiteError};
use crate::store::record::open_required;

/// What `suite submit --slurm` was asked for.
#[derive(Clone, Debug)]
pub struct Submission {
    /// The suite file.
    pub file: PathBuf,
    pub partitions: u32,
    /// The store location, passed to the job in its environment.
    pub store: String,
    pub run_id: Option<String>,
    /// Wait for the job to end, then print the run's status.
    pub wait: bool,
    /// Let other jobs share the nodes (no `--exclusive`).
    pub shared: bool,
    /// Where to keep the job script (default: a temporary file).
    pub script: Option<PathBuf>,
    /// The sbatch program, and more arguments for it.
    pub sbatch: OsString,
    pub sbatch_args: Vec<OsString>,
}

/// What the job script says.
#[derive(Clone, Debug)]
pub struct Script<'a> {
    pub cmdscope: &'a Path,
    pub suite: &'a Path,
    pub partitions: u32,
    pub run_id: Option<&'a str>,
    pub exclusive: bool,
    pub job_name: &'a str,
}

fn quote(p: &str) -> String {
    shlex::try_quote(p).map_or_else(|_| format!("'{p}'"), |q| q.into_owned())
}

/// The batch script (POSIX sh).
pub fn script(s: &Script) -> String {
    let mut out = String::from("#!/bin/sh\n");
    out.push_str(&format!("#SBATCH --job-name={}\n", s.job_name));
    out.push_str(&format!("#SBATCH --array=1-{}\n", s.partitions));
    if s.exclusive {
        out.push_str("#SBATCH --exclusive\n");
    }
    out.push_str(
        "# Written by `cmdscope suite submit`: one suite partition per array task.\n\
         # The store comes from CMDSCOPE_STORE in the job's environment.\n",
    );
    let mut cmd = format!(
        "exec {} run --suite {} --partition auto --style basic",
        quote(&s.cmdscope.to_string_lossy()),
        quote(&s.suite.to_string_lossy())
    );
    if let Some(id) = s.run_id {
        cmd.push_str(&format!(" --run-id {}", quote(id)));
    }
    out.push_str(&cmd);
    out.push('\n');
    out
}

/// sbatch --parsable prints "jobid" or "jobid;cluster".
pub fn job_id(parsable: &str) -> Option<String> {
    let id = parsable.trim().split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

pub fn submit(args: &Submission) -> Result<i32> {
    Partition::new(1, args.partitions)?;
    if let Some(id) = &args.run_id {
        check_run_id(id)?;
    }
    let suite = file::load(&args.file)?;
    // Checked here, not on 100 nodes: a suite that does not plan fails now.
    super::cells::plan(&suite)?;
    // The job script must not be written over the store it fills.
    let kept_script: Vec<_> = args
        .script
        .iter()
        .map(|p| crate::output::Named::flag("--script", p))
        .collect();
    crate::store::record::check_outputs(false, Some(&args.store), &kept_script)?;
    // Opening the store now (creating its schema) catches a wrong URL
    // before the job waits in the queue.
    open_required(false, Some(&args.store))?;
    let cmdscope = std::env::current_exe().map_err(SuiteError::OwnPath)?;
    let suite_path = std::fs::canonicalize(&args.file).map_err(|source| Error::Read {
        path: args.file.clone(),
        source,
    })?;
    let stem = suite_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "suite".into());
    let job_name = format!(
        "cmdscope-{}",
        stem.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            })
            .collect::<String>()
    );
    let text = script(&Script {
        cmdscope: &cmdscope,
        suite: &suite_path,
        partitions: args.partitions,
        run_id: args.run_id.as_deref(),
        exclusive: !args.shared,
        job_name: &job_name,
    });
    let _temp;
    let script_path: PathBuf = match &args.script {
        Some(p) => {
            crate::output::write_file(p, text.as_bytes())?;
            p.clone()
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("cmdscope-suite-")
                .suffix(".sh")
                .tempfile()?;
            std::fs::write(t.path(), &text).map_err(|source| Error::Write {
                path: t.path().into(),
                source,
            })?;
            let p = t.path().to_path_buf();
            _temp = t;
            p
        }
    };
    let mut cmd = Command::new(&args.sbatch);
    cmd.arg("--parsable");
    if args.wait {
        cmd.arg("--wait");
    }
    cmd.args(&args.sbatch_args)
        .arg(&script_path)
        .env("CMDSCOPE_STORE", &args.store)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let sbatch: OsString = args.sbatch.clone();
    let child = cmd.spawn().map_err(|source| Error::Spawn {
        command: sbatch.to_string_lossy().into_owned(),
        source,
    })?;
    // With --wait, sbatch prints the job id at once and exits at the end.
    let out = child.wait_with_output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let job = job_id(stdout.lines().next().unwrap_or_default());
    let Some(job) = job else {
        return Err(Error::Failed(format!(
            "sbatch did not submit the job (exit {}): {}",
            out.status.code().unwrap_or(-1),
            stdout.trim()
        )));
    };
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(|| format!("slurm-{job}"));
    crate::print_line!("run id: {run_id}");
    crate::print_line!("job id: {job}");
    if !args.wait {
        crate::eprint_line!("cmdscope: follow it with: cmdscope status --run {run_id}");
        return Ok(exit::OK);
    }
    let mut store = open_required(false, Some(&args.store))?;
    let s = status::read(&mut store, &run_id)?;
    crate::output::print(&status::text(&s));
    Ok(if s.complete { exit::OK } else { exit::FAILURE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_has_the_array_and_no_store() {
        let s = script(&Script {
            cmdscope: Path::new("/opt/cmd scope/bin/cmdscope"),
            suite: Path::new("/home/a/bench.toml"),
            partitions: 8,
            run_id: Some("nightly-3"),
            exclusive: true,
            job_name: "cmdscope-bench",
        });
        assert!(s.starts_with("#!/bin/sh\n"));
        assert!(s.contains("\n#SBATCH --array=1-8\n"));
        assert!(s.contains("\n#SBATCH --exclusive\n"));
        assert!(s.contains(
            "exec '/opt/cmd scope/bin/cmdscope' run --suite /home/a/bench.toml --partition auto --style basic --run-id nightly-3\n"
        ));
        assert!(!s.contains("postgres"));
        let shared = script(&Script {
            exclusive: false,
            run_id: None,
            ..Script {
                cmdscope: Path::new("/c"),
                suite: Path::new("/s"),
                partitions: 2,
                run_id: None,
                exclusive: true,
                job_name: "j",
            }
        });
        assert!(!shared.contains("--exclusive") && !shared.contains("--run-id"));
    }

    #[test]
    fn job_ids_from_parsable_output() {
        assert_eq!(job_id("1234\n").as_deref(), Some("1234"));
        assert_eq!(job_id("77;cluster").as_deref(), Some("77"));
        assert_eq!(job_id("sbatch: error"), None);
        assert_eq!(job_id(""), None);
    }
}
