//! `cmdscope suite list|submit|manifest`: a suite's cells, and handing its
//! partitions to a scheduler.

use std::collections::HashMap;

use crate::cli::suite::{ListArgs, ListFormat, ManifestArgs, SubmitArgs, SuiteArgs, SuiteCommand};
use crate::cli::StoreArgs;
use crate::error::{exit, Result};
use crate::report::suite_list::{self, ListedBenchmark, ListedCell};
use crate::store::record::Choice;
use crate::store::{Location, Store};
use crate::suite::cells::{self, Planned};
use crate::suite::partition::Partition;
use crate::suite::{file, manifest, submit};

pub fn run(args: &SuiteArgs) -> Result<i32> {
    match &args.command {
        SuiteCommand::List(a) => list(a),
        SuiteCommand::Submit(a) => submit::submit(&submission(a)),
        SuiteCommand::Manifest(a) => {
            let suite = file::load(&a.file)?;
            Partition::new(1, a.partitions)?;
            crate::output::print(&manifest::render(&manifest(a), &suite)?);
            Ok(exit::OK)
        }
    }
}

/// What `suite submit`'s flags ask for.
fn submission(a: &SubmitArgs) -> submit::Submission {
    submit::Submission {
        file: a.file.clone(),
        partitions: a.partitions,
        store: a.store.clone(),
        run_id: a.run_id.clone(),
        wait: a.wait,
        shared: a.shared,
        script: a.script.clone(),
        sbatch: a.sbatch.clone(),
        sbatch_args: a.sbatch_args.clone(),
    }
}

/// What `suite manifest`'s flags ask for (clap requires exactly one target).
pub fn manifest(a: &ManifestArgs) -> manifest::Manifest {
    let target = if a.kubernetes {
        manifest::Target::Kubernetes
    } else if a.github_actions {
        manifest::Target::GithubActions
    } else {
        manifest::Target::Gitlab
    };
    manifest::Manifest {
        file: a.file.clone(),
        target,
        partitions: a.partitions,
        store_secret: a.store_secret.clone(),
        store_secret_key: a.store_secret_key.clone(),
        image: a.image.clone(),
        runs_on: a.runs_on.clone(),
        run_id: a.run_id.clone(),
    }
}

/// The store to estimate from: the one named, else the default one if it
/// exists (listing never creates a store).
fn estimate_store(args: &StoreArgs) -> Option<Store> {
    let location = match Choice::new(false, args.store.as_deref()) {
        Choice::Explicit(s) => Location::parse(&s),
        _ => Ok(Location::default_location()?),
    };
    // No store yet: nothing to estimate from, and nothing to say.
    if let Ok(Location::Sqlite(p)) = &location {
        if std::fs::symlink_metadata(p).is_err() {
            return None;
        }
    }
    // Read as the other readers read it: nothing created, migrated or
    // switched to WAL for an estimate.
    match location.and_then(|l| Store::open_read_only(&l)) {
        Ok(s) => Some(s),
        Err(e) => {
            crate::eprint_line!("cmdscope: warning: no time estimates: {e}");
            None
        }
    }
}

fn list(args: &ListArgs) -> Result<i32> {
    let suite = file::load(&args.file)?;
    let planned = cells::plan(&suite)?;
    let total = cells::count(&planned);
    let partition = args
        .partition
        .as_deref()
        .map(Partition::parse)
        .transpose()?;
    let shown: Vec<Planned> = match partition {
        Some(p) => cells::select(planned, p),
        None => planned,
    };
    let identities: Vec<String> = shown
        .iter()
        .flat_map(|p| p.cells.iter().map(|c| c.identity.clone()))
        .collect();
    let known: HashMap<String, (usize, f64)> = match estimate_store(&args.store) {
        Some(mut s) => s.latest_by_identity(&identities)?,
        None => HashMap::new(),
    };
    let estimate = |identity: &str| {
        known
            .get(identity)
            .map(|(runs, median)| *runs as f64 * median)
    };
    let listed: Vec<ListedBenchmark> = shown
        .iter()
        .map(|p| ListedBenchmark {
            name: &p.benchmark.name,
            position: p.benchmark.position.to_string(),
            cells: p
                .cells
                .iter()
                .map(|c| ListedCell {
                    id: &c.id,
                    benchmark: &c.benchmark,
                    name: &c.cell.name,
                    parameters: c
                        .cell
                        .parameters
                        .iter()
                        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                        .collect(),
                    command: &c.cell.command,
                    argv: c.argv_text(),
                    identity: &c.identity,
                    estimated_seconds: estimate(&c.identity),
                })
                .collect(),
        })
        .collect();
    match args.format {
        ListFormat::Json => crate::print_line!("{}", suite_list::json(&listed)?),
        // Names and commands come from the file: shown, never obeyed by
        // the terminal.
        ListFormat::Text => crate::output::print(&crate::output::escape_controls(
            &suite_list::text(&listed, partition.map(|p| (p.to_string(), total))),
        )),
    }
    Ok(exit::OK)
}
