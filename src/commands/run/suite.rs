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
/// rather than silently ignored. Which flags these are is the group's
/// type's (`MeasureArgs`): it is compared whole with its default, and the
/// flags given are named.
fn settings_given(a: &RunArgs) -> Vec<String> {
    if *a.measure == *defaults().measure {
        Vec::new()
    } else {
        a.measure.names().to_vec()
    }
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
            a.report.sort != default.report.sort,
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
        return Err(SuiteError::SettingsGiven(given).into());
    }
    let mut outputs = super::exports::exports_given(args);
    outputs.extend(args.report.plot.as_ref().map(|_| "--plot".to_string()));
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
    let quiet = args.report.style == Style::None;
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
        if args.report.style != Style::None {
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
        // Any flag of the measurement group is one, named as typed.
        let cache = parse(&[
            "cmdscope",
            "run",
            "--suite",
            "s.toml",
            "--simulate",
            "--LL",
            "8388608,16,64",
        ]);
        assert_eq!(settings_given(&cache), ["--simulate", "--LL"]);
        // A flag given at its default changes nothing the file sets.
        let restated = parse(&["cmdscope", "run", "--suite", "s.toml", "-w", "0"]);
        assert!(settings_given(&restated).is_empty());
        // Output and store flags are not measurement flags.
        let output = parse(&[
            "cmdscope",
            "run",
            "--suite",
            "s.toml",
            "-u",
            "second",
            "--no-store",
        ]);
        assert!(settings_given(&output).is_empty());
    }

    #[test]
    fn split_runs_need_a_shared_id() {
        let p = Partition::new(1, 4).unwrap();
        assert_eq!(run_id_of(Some("nightly-7"), p).unwrap(), "nightly-7");
        assert!(run_id_of(Some("a b"), p).is_err());
        assert!(run_id_of(Some("x"), Partition::WHOLE).is_ok());
    }
}
