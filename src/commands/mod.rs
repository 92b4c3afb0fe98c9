//! The subcommands, one module each, from parsed arguments to an exit
//! code: `run`, `compare`, `explain`, the store's readers and writers
//! (`history`, `check`, `changes`, `report`, `import`, `status`), `suite`,
//! `doctor`, and `completions` and `man` (generated from the parser).
//! Nothing below this layer imports it; shared helpers here.

pub mod changes;
pub mod check;
pub mod compare;
pub mod completions;
pub mod doctor;
pub mod explain;
pub mod history;
pub mod import;
pub mod report;
pub mod run;
pub mod status;
pub mod suite;

use crate::error::{Error, Result, StoreQueryError};
use crate::store::{Filter, Store};

/// Session filter from the shared flags.
pub fn filter(args: &crate::cli::SessionFilterArgs) -> Result<Filter> {
    Ok(Filter {
        labels: crate::store::parse_labels(&args.labels)?,
        machine: args.machine.clone(),
        ..Filter::default()
    })
}

/// A gate's options (`analysis::gate`) from the shared flags.
pub fn gate_options(args: &crate::cli::GateArgs) -> crate::analysis::gate::Options {
    use crate::analysis::gate::Inconclusive;
    crate::analysis::gate::Options {
        allow_missing: args.allow_missing.clone(),
        inconclusive: match args.inconclusive {
            crate::cli::Inconclusive::Pass => Inconclusive::Pass,
            crate::cli::Inconclusive::Fail => Inconclusive::Fail,
        },
    }
}

/// A stored session's settings (`sessions.settings`), checked by the
/// rules `run` checks its flags by before anything reads them: a damaged
/// or out-of-range value (a precision of 1.0 or 1e300, an alpha of 0.7, a
/// reference past the cells) is an error naming the store (its password
/// removed) and the session, not a flag nobody typed. None for a session
/// stored without settings.
pub fn checked_settings<'a>(
    store: &Store,
    s: &'a crate::store::StoredSession,
) -> Result<Option<&'a crate::run::settings::Settings>> {
    let bad = |why: &str| {
        Error::from(StoreQueryError::BadSettings {
            store: store.location().into(),
            session: s.id,
            // The flag's own words, without a flag nobody typed.
            why: why.trim_start_matches("--").into(),
        })
    };
    if let Some(e) = &s.settings_error {
        return Err(bad(&format!("not readable: {e}")));
    }
    let Some(settings) = s.settings.as_ref() else {
        return Ok(None);
    };
    stored_settings_problem(settings).map_or(Ok(Some(settings)), |why| Err(bad(&why)))
}

/// What is wrong with stored settings, by the flags' own checks.
fn stored_settings_problem(s: &crate::run::settings::Settings) -> Option<String> {
    let problem = |r: Result<()>| r.err().map(|e| e.to_string());
    let flag = |r: std::result::Result<std::time::Duration, Error>| r.err().map(|e| e.to_string());
    problem(crate::cli::check_alpha(s.alpha))
        .or_else(|| {
            // Stored as a fraction, given as a percentage.
            s.precision.and_then(|p| {
                problem(crate::cli::check_precision(p * 100.0))
                    .map(|m| format!("{m} (stored as the fraction {p})"))
            })
        })
        .or_else(|| {
            s.timeout
                .and_then(|t| flag(crate::cli::seconds(t, "--timeout", false)))
        })
        .or_else(|| problem(crate::cli::check_min_time(s.policy.min_time)))
        .or_else(|| {
            let p = &s.policy;
            (p.max_runs.filter(|&max| p.min_runs > max))
                .map(|max| format!("min_runs {} is larger than max_runs {max}", p.min_runs))
        })
        .or_else(|| {
            (s.reference >= s.cells.len().max(1)).then(|| {
                format!(
                    "reference {} is not one of its {} cells",
                    s.reference,
                    s.cells.len()
                )
            })
        })
        .or_else(|| {
            s.cells.iter().find_map(|c| {
                let n = c.variant.concurrency?;
                (!(1..=crate::run::plan::MAX_CONCURRENCY).contains(&n)).then(|| {
                    format!(
                        "concurrency must be from 1 to {}, got {n}",
                        crate::run::plan::MAX_CONCURRENCY
                    )
                })
            })
        })
}

/// "no sessions in store X" with what was asked.
pub fn nothing_found(store: &Store, what: &str) -> Error {
    StoreQueryError::NothingFound {
        what: what.into(),
        store: store.location().into(),
    }
    .into()
}

/// The benchmarks of the newest session before `current` on its machine
/// that shares one with it (the same suite's previous session; sessions of
/// other projects in the store share none).
pub(crate) fn previous_benchmarks(
    store: &mut crate::store::Store,
    current: &crate::store::StoredSession,
) -> crate::error::Result<Vec<String>> {
    // Enough to pass other projects' sessions between two of this one.
    const LOOK_BACK: usize = 200;
    let sessions = store.sessions(&crate::store::Filter {
        machine: Some(current.fingerprint.clone()),
        limit: Some(LOOK_BACK),
        ..Default::default()
    })?;
    let shares = |s: &crate::store::StoredSession| {
        (s.cells.iter()).any(|c| current.cells.iter().any(|m| m.identity == c.identity))
    };
    Ok(sessions
        .iter()
        .filter(|s| s.id != current.id && s.started_unix <= current.started_unix)
        .find(|s| shares(s))
        .map(|s| s.cells.iter().map(|c| c.identity.clone()).collect())
        .unwrap_or_default())
}
