//! `cmdscope run --suite FILE`: runs the benchmarks of one partition of a
//! suite, one after the other, each exactly as `cmdscope run` would (its
//! cells interleaved), under the host lock, registering the partition's
//! start, progress and end in the store.

use std::collections::HashSet;

use crate::cli::run::{RunArgs, Style};
use crate::error::{exit, Error, Result, SuiteError};
use crate::output::escape_line;
use crate::store::partitions::PartitionStart;
use crate::store::record::Choice;
use crate::store::{Machine, Store};
use crate::suite::cells::{self, Planned};
use crate::suite::partition::Partition;
use crate::suite::{file, lock, scheduler, BENCHMARK_LABEL, PARTITION_LABEL, RUN_LABEL};

/// The partition asked for on the command line.
pub fn partition_of(partition: Option<&str>, partitions: Option<u32>) -> Result<Partition> {
    match partition {
        None => match partitions {
            Some(_) => Err(SuiteError::PartitionsWithoutAuto.into()),
            None => Ok(Partition::WHOLE),
        },
        Some(text) if text.trim() == "auto" => {
            scheduler::auto_partition(&|n| std::env::var(n).ok(), partitions)
        }
        Some(text) => {
            if partitions.is_some() {
                return Err(SuiteError::PartitionsWithKOfN.into());
            }
            // `run` also takes 'auto', which `Partition::parse` does not.
            Partition::parse(text).map_err(|e| match text.contains('/') {
                true => e.into(),
                false => SuiteError::BadPartitionOrAuto(text.into()).into(),
            })
        }
    }
}

/// The run id: given, from the scheduler, or new (only when the suite is
/// not split: partitions must share one to meet).
pub fn run_id_of(given: Option<&str>, partition: Partition) -> Result<String> {
    let id = match given.map(str::trim).filter(|g| !g.is_empty()) {
        Some(g) => g.to_string(),
        None => match scheduler::derived_run_id(&|n| std::env::var(n).ok()) {
            Some(id) => id,
            None if partition.count == 1 => scheduler::new_run_id(),
            None => return Err(SuiteError::PartitionNeedsRunId(partition.to_string()).into()),
        },
    };
    scheduler::check_run_id(&id)?;
    Ok(id)
}

/// Measurement flags given with --suite, where the file sets them: refused
/// rather than silently ignored.
fn settings_given(a: &RunArgs) -> Vec<&'static str> {
    let default = defaults();
    let mut given = Vec::new();
    let mut check = |flag: &'static str, differs: bool| {
        if differs {
            given.push(flag);
        }
    };
    check("--warmup", a.warmup != default.warmup);
    check("--runs", a.runs.is_some());
    check("--min-runs", a.min_runs.is_some());
    check("--max-runs", a.max_runs.is_some());
    check("--min-time", a.min_time != default.min_time);
    check("--prepare", !a.prepare.is_empty());
    check("--conclude", !a.conclude.is_empty());
    check("--setup", a.setup.is_some());
    check("--cleanup", a.cleanup.is_some());
    check("--command-name", !a.cell.names.is_empty());
    check("--ignore-failure", a.ignore_failure.is_some());
    check("--output", a.output != default.output);
    check("--show-output", a.show_output);
    check("--input", a.input != default.input);
    check("--env", !a.cell.env.is_empty());
    check("--env-size", a.cell.env_size.is_some());
    check("--env-file", a.cell.env_file.is_some());
    check("--clear-env", a.cell.clear_env);
    check("--user", a.cell.user.is_some());
    check("--workdir", a.cell.workdir.is_some());
    check("--workdir-template", a.cell.workdir_template.is_some());
    check("--cpus", a.cell.cpus.is_some());
    check("--nice", a.cell.nice.is_some());
    check("--ops", a.ops.is_some());
    check("--concurrency", a.concurrency.is_some());
    check("--shell", a.cell.shell.is_some());
    check("--no-shell", a.cell.no_shell);
    check("--timeout", a.timeout.is_some());
    check("--stop-on-timeout", a.stop_on_timeout);
    check("--counters", a.counters);
    // --I1, --D1 and --LL need --simulate or --counted.
    check("--simulate/--I1/--D1/--LL", a.simulate);
    check("--counted", a.counted.is_some());
    check("--order", a.order != default.order);
    check("--seed", a.seed.is_some());
    check("--precision", a.precision.is_some());
    check("--reference", a.reference.is_some());
    check("--reference-name", a.reference_name.is_some());
    check("--alpha", a.alpha != default.alpha);
    check(
        "--parameter-scan/--parameter-list",
        !a.params.parameter_scan.is_empty() || !a.params.parameter_list.is_empty(),
    );
    check(
        "--minimize/--maximize",
        a.minimize.is_some() || a.maximize.is_some(),
    );
    check("--metric", a.metric != default.metric);
    check("--remove-outliers", a.remove_outliers);
    given
}

/// Flags of `run` a suite has no setting for, given with --suite:
/// refused, each with the reason, rather than silently ignored.
fn unavailable(a: &RunArgs) -> Vec<(&'static str, &'static str)> {
    let default = defaults();
    [
        (
            a.isolate,
            "--isolate",
            "it pins cmdscope to one CPU for good, and a suite's benchmarks set their own --cpus",
        ),
        (
            a.until_decided || a.max_time.is_some(),
            "--until-decided/--max-time",
            "a suite's benchmarks stop as their file's runs, min_runs, max_runs and precision say",
        ),
        (
            a.monitor.is_some(),
            "--monitor",
            "a suite's settings come from its file",
        ),
        (
            a.sort != default.sort,
            "--sort",
            "it orders the Markdown, AsciiDoc and Org-mode exports, which --suite does not write",
        ),
    ]
    .into_iter()
    .filter(|(given, _, _)| *given)
    .map(|(_, flag, why)| (flag, why))
    .collect()
}

/// `cmdscope run`'s flags as a command line without any gives them.
fn defaults() -> RunArgs {
    use clap::Parser;
    match crate::cli::Cli::try_parse_from(["cmdscope", "run", "true"]) {
        Ok(crate::cli::Cli {
            command: crate::cli::Command::Run(args),
        }) => *args,
        _ => unreachable!("`cmdscope run true` parses"),
    }
}

pub fn run(args: &RunArgs) -> Result<i32> {
    let Some(path) = &args.suite.suite else {
        return Err(SuiteError::NeedsFile.into());
    };
    let given = settings_given(args);
    if !given.is_empty() {
        return Err(
            SuiteError::SettingsGiven(given.iter().map(|f| f.to_string()).collect()).into(),
        );
    }
    let mut outputs = super::exports::exports_given(args);
    outputs.extend(args.plot.as_ref().map(|_| "--plot".to_string()));
    if !outputs.is_empty() {
        return Err(
            SuiteError::OutputsGiven(outputs.iter().map(|f| f.to_string()).collect()).into(),
        );
    }
    if let Some((flag, why)) = unavailable(args).first() {
        return Err(SuiteError::Unavailable { flag, why }.into());
    }
    let partition = partition_of(args.suite.partition.as_deref(), args.suite.partitions)?;
    let suite = file::load(path)?;
    let planned = cells::plan(&suite)?;
    let suite_cells = cells::count(&planned);
    let mine = cells::select(planned, partition);
    let run_id = run_id_of(args.suite.run_id.as_deref(), partition)?;
    let choice = Choice::new(args.no_store, args.store.store.as_deref());
    crate::store::record::check_outputs(args.no_store, args.store.store.as_deref(), &[])?;
    let mut store = match choice.location() {
        Ok(None) => None,
        Ok(Some(loc)) => match Store::open(&loc) {
            Ok(s) => Some(s),
            Err(e) if choice != Choice::Default => return Err(e.into()),
            Err(e) => {
                crate::eprint_line!(
                    "cmdscope: warning: results will not be stored (measuring anyway): {e}"
                );
                None
            }
        },
        Err(e) => return Err(e.into()),
    };
    let machine = Machine::current();
    let mine_cells = cells::count(&mine);
    let quiet = args.style == Style::None;
    if !quiet {
        crate::eprint_line!(
            "cmdscope: suite {}: run {run_id}, partition {partition}: {mine_cells} of {suite_cells} \
             cells in {} benchmarks on {}",
            escape_line(&path.display().to_string()),
            mine.len(),
            escape_line(&machine.hostname)
        );
    }
    let _lock = if args.suite.no_host_lock {
        None
    } else {
        Some(lock::acquire(
            &lock::default_path(),
            &format!("run {run_id}, partition {partition}"),
        )?)
    };
    let suite_name = path.display().to_string();
    if let Some(s) = &mut store {
        s.start_partition(&PartitionStart {
            run_id: &run_id,
            index: partition.index,
            partitions: partition.count,
            suite: &suite_name,
            machine: &machine,
            planned_cells: mine_cells,
            suite_cells,
        })?;
    }
    let result = run_benchmarks(args, mine, &run_id, partition, store.as_mut());
    let status = match &result {
        Ok(exit::OK) => "finished",
        Ok(exit::INTERRUPTED) | Err(Error::Interrupted) => "interrupted",
        _ => "failed",
    };
    if let Some(s) = &mut store {
        if let Err(e) = s.finish_partition(&run_id, partition.index, status) {
            crate::eprint_line!("cmdscope: error: {e}");
        }
    }
    if !quiet {
        crate::eprint_line!("cmdscope: run {run_id}, partition {partition}: {status}");
    }
    result
}

fn run_benchmarks(
    args: &RunArgs,
    mine: Vec<Planned>,
    run_id: &str,
    partition: Partition,
    mut store: Option<&mut Store>,
) -> Result<i32> {
    let mut worst = exit::OK;
    let mut done = 0;
    let count = mine.len();
    for (i, p) in mine.into_iter().enumerate() {
        let name = p.benchmark.name.clone();
        let n = p.cells.len();
        let mut b = p.request;
        b.labels.extend(args.labels.iter().cloned());
        b.labels.extend([
            format!("{RUN_LABEL}={run_id}"),
            format!("{PARTITION_LABEL}={partition}"),
            format!("{BENCHMARK_LABEL}={name}"),
        ]);
        b.only_cells = Some(
            p.cells
                .iter()
                .map(|c| c.identity.clone())
                .collect::<HashSet<_>>(),
        );
        if args.style != Style::None {
            let heading = crate::report::terminal::suite_benchmark(&name, n, i, count, partition);
            crate::output::print(&heading);
        }
        // The suite's own flags give the store, the style and the labels.
        match super::bench::run_request(args, &b) {
            // `run` reports an interruption itself (exports written, exit
            // 130): the partition stops there too.
            Ok(exit::INTERRUPTED) => return Ok(exit::INTERRUPTED),
            Ok(code) => worst = worst.max(code),
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(e) => {
                // The name and the error may quote the suite's file.
                crate::eprint_line!(
                    "cmdscope: error: benchmark '{}': {}",
                    escape_line(&name),
                    escape_line(&e.to_string())
                );
                worst = worst.max(e.exit_code());
            }
        }
        done += n;
        if let Some(s) = store.as_deref_mut() {
            if let Err(e) = s.partition_progress(run_id, partition.index, done) {
                crate::eprint_line!("cmdscope: warning: {e}");
            }
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_flags() {
        assert_eq!(partition_of(None, None).unwrap(), Partition::WHOLE);
        assert_eq!(
            partition_of(Some("2/3"), None).unwrap(),
            Partition::new(2, 3).unwrap()
        );
        assert!(partition_of(None, Some(3)).is_err());
        assert!(partition_of(Some("1/3"), Some(3)).is_err());
    }

    #[test]
    fn settings_on_the_command_line_are_refused_not_ignored() {
        use clap::Parser;
        let parse = |argv: &[&str]| match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Run(a) => *a,
            _ => unreachable!(),
        };
        let plain = parse(&[
            "cmdscope", "run", "--suite", "s.toml", "--label", "a=b", "--style", "none",
        ]);
        assert!(settings_given(&plain).is_empty());
        let busy = parse(&[
            "cmdscope", "run", "--suite", "s.toml", "--runs", "5", "-w", "1", "--alpha", "0.01",
        ]);
        assert_eq!(settings_given(&busy), ["--warmup", "--runs", "--alpha"]);
    }

    #[test]
    fn split_runs_need_a_shared_id() {
        let p = Partition::new(1, 4).unwrap();
        assert_eq!(run_id_of(Some("nightly-7"), p).unwrap(), "nightly-7");
        assert!(run_id_of(Some("a b"), p).is_err());
        assert!(run_id_of(Some("x"), Partition::WHOLE).is_ok());
    }
}
