//! `cmdscope changes`: the change points in every stored benchmark's
//! history (found by `analysis::changes`; docs/CHANGES.md), rendered by
//! `report::changes` as text, Markdown or JSON, and a CI gate on the
//! newest session.

use crate::analysis::changes::gate::NewestSession;
use crate::analysis::changes::select::{self, Since, Target};
use crate::analysis::changes::{analyse_each, machine_shifts, Analysed, Params};
use crate::analysis::gate::Side;
use crate::cli::store::{ChangesArgs, ChangesFormat};
use crate::error::{exit, GateError, Result};
use crate::report::changes::{json, markdown, text};
use crate::report::changes_at;
use crate::store::history::{self, Query, SessionRef};
use crate::store::record::open_read_only;
use crate::store::{Filter, Store, StoredSession};

pub fn params(alpha: f64) -> Result<Params> {
    crate::cli::check_alpha(alpha)?;
    Ok(Params {
        alpha,
        ..Params::default()
    })
}

fn min_change(pct: Option<f64>) -> Result<Option<f64>> {
    let Some(pct) = pct else {
        return Ok(None);
    };
    if pct.is_finite() && (0.0..=1000.0).contains(&pct) {
        Ok(Some(pct / 100.0))
    } else {
        Err(GateError::MinChange(pct).into())
    }
}

/// Every matching history's changes, sorted by machine then benchmark,
/// with few benchmarks' runs in memory at a time: histories are analysed
/// (on every core) as they are read, and only the answers (with the
/// points' sessions, which the histories share) are kept, not the runs.
pub fn analysed(store: &mut Store, query: &Query, p: &Params) -> Result<Vec<Analysed>> {
    let mut all = analyse_each(p, false, |send| {
        history::each(store, query, |h| {
            send(h);
            Ok(())
        })
    })?;
    all.sort_by(|a, b| {
        (&a.history.fingerprint, &a.history.benchmark)
            .cmp(&(&b.history.fingerprint, &b.history.benchmark))
    });
    Ok(all)
}

/// The session (or a suite run's sessions) `--run` names: a suite run
/// when one has this id, else the session with this id.
fn target(store: &mut Store, id: &str) -> Result<Target> {
    let of_run = store.session_heads(&Filter {
        labels: vec![(crate::suite::RUN_LABEL.to_string(), id.to_string())],
        ..Filter::default()
    })?;
    if !of_run.is_empty() {
        let mut sessions: Vec<SessionRef> = of_run.iter().map(session_ref).collect();
        sessions.reverse();
        return Ok(Target::SuiteRun {
            id: id.to_string(),
            sessions,
        });
    }
    let Ok(number) = id.parse::<i64>() else {
        return Err(super::nothing_found(
            store,
            &format!("suite run '{id}' (nor a session: not a number)"),
        ));
    };
    Ok(Target::Session(session(store, number)?))
}

/// Session `id`, which must have finished: an unfinished session's runs
/// are in no history.
fn session(store: &mut Store, id: i64) -> Result<SessionRef> {
    let found = store.session_heads(&Filter {
        session: Some(id),
        ..Filter::default()
    })?;
    let Some(s) = found.first() else {
        return Err(super::nothing_found(
            store,
            &format!("session #{id} (nor a suite run '{id}')"),
        ));
    };
    if s.status == crate::store::RUNNING {
        return Err(GateError::SessionRunning(id).into());
    }
    Ok(session_ref(s))
}

fn session_ref(s: &StoredSession) -> SessionRef {
    SessionRef {
        id: s.id,
        started: s.started.clone(),
        started_unix: s.started_unix,
        labels: s.labels.clone(),
        search: None,
    }
}

/// `--since`: a session's id, or a date (UTC).
fn since(store: &mut Store, text: &str) -> Result<Since> {
    let text = text.trim();
    if let Ok(id) = text.parse::<i64>() {
        let found = store.session_heads(&Filter {
            session: Some(id),
            ..Filter::default()
        })?;
        return match found.first() {
            Some(s) => Ok(Since::session(&session_ref(s))),
            None => Err(super::nothing_found(store, &format!("session #{id}"))),
        };
    }
    // A day alone starts at midnight.
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_string()
    };
    let moment =
        humantime::parse_rfc3339_weak(&full).map_err(|_| GateError::BadSince(text.to_string()))?;
    let unix = moment
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    Ok(Since::moment(unix))
}

pub fn run(args: &ChangesArgs) -> Result<i32> {
    crate::cli::check_percentage("--threshold", args.threshold)?;
    let p = Params {
        min_change: min_change(args.min_change)?,
        ..params(args.alpha)?
    };
    history::metric(args.metric.as_deref())?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    // Checked before the histories are read: an unknown id fails at once.
    let target = match &args.sessions.run {
        Some(id) => Some(target(&mut store, id)?),
        None => None,
    };
    let since = match &args.since {
        Some(text) => Some(since(&mut store, text)?),
        None => None,
    };
    let query = Query {
        benchmark: args.benchmark.clone(),
        labels: crate::store::parse_labels(&args.sessions.labels)?,
        machine: args.sessions.machine.clone(),
        metric: args.metric.clone(),
        order_by: args.order_by.clone(),
    };
    let analysed = analysed(&mut store, &query, &p)?;
    if analysed.is_empty() {
        return Err(super::nothing_found(&store, "matching benchmark history"));
    }
    let shifts = machine_shifts(&analysed);
    // The gate's one rule, over every history's newest point and the
    // benchmarks of each machine's newest session that have none.
    let outcome = if args.fail_on_new_regression {
        let newest = newest_sessions(&mut store, &query)?;
        let rows = crate::analysis::changes::gate::rows(&analysed, &newest, args.threshold);
        Some(crate::analysis::gate::judge(
            &rows,
            &super::gate_options(&args.gate),
        ))
    } else {
        None
    };
    let out = if let Some(target) = target {
        let ids = target.ids();
        let at = select::at_sessions(&analysed, &ids);
        if at.is_empty() {
            return Err(GateError::NotInHistory {
                target: match &target {
                    Target::Session(s) => format!("session #{}", s.id),
                    Target::SuiteRun { id, .. } => format!("suite run '{id}'"),
                },
                store: store.location().to_string(),
            }
            .into());
        }
        let shifts = select::shifts_at(&shifts, &ids);
        match args.format {
            ChangesFormat::Text => changes_at::text(&target, &at, &shifts),
            ChangesFormat::Markdown => changes_at::markdown(&target, &at, &shifts),
            ChangesFormat::Json => changes_at::json(&target, &at, &shifts),
        }
    } else {
        let (analysed, shifts) = match &since {
            Some(s) => select::since(analysed, shifts, s),
            None => (analysed, shifts),
        };
        if analysed.is_empty() {
            return Err(super::nothing_found(
                &store,
                "matching benchmark history with a session at or after --since",
            ));
        }
        match args.format {
            ChangesFormat::Text => text(&analysed, &shifts),
            ChangesFormat::Markdown => markdown(&analysed, &shifts),
            ChangesFormat::Json => json(&analysed, &shifts),
        }
    };
    crate::output::print(&crate::output::escape_controls(&out));
    let Some(outcome) = outcome else {
        return Ok(exit::OK);
    };
    let gate = crate::report::gate::section(&outcome, &changes_sides(), args.threshold);
    match args.format {
        // The document stays JSON: the gate's lines go to stderr.
        ChangesFormat::Json => {
            for line in gate.lines() {
                crate::eprint_line!("cmdscope: gate: {}", crate::output::escape_controls(line));
            }
        }
        ChangesFormat::Markdown => {
            crate::output::print(&crate::output::escape_controls(
                &crate::report::gate::markdown(&gate),
            ));
        }
        ChangesFormat::Text => crate::output::print(&crate::output::escape_controls(&gate)),
    }
    Ok(if outcome.passes() {
        exit::OK
    } else {
        exit::FAILURE
    })
}

/// What the gate's lines of `changes` call the two sides of a comparison.
fn changes_sides() -> crate::report::gate::Sides<'static> {
    crate::report::gate::Sides {
        baseline: "the sessions before it",
        current: "its newest session",
    }
}

/// Each machine's newest finished session among those `query` selects,
/// with what it holds of each benchmark `query` asks for: the rows a
/// history cannot show (a benchmark whose runs there all timed out or
/// failed makes no point).
fn newest_sessions(store: &mut Store, query: &Query) -> Result<Vec<NewestSession>> {
    let heads = store.session_heads(&Filter {
        labels: query.labels.clone(),
        machine: query.machine.clone(),
        ..Filter::default()
    })?;
    let mut ids: Vec<(i64, String)> = Vec::new();
    for s in heads.iter().filter(|s| s.status != crate::store::RUNNING) {
        if !ids.iter().any(|(_, f)| *f == s.fingerprint) {
            ids.push((s.id, s.fingerprint.clone()));
        }
    }
    let metric = history::metric(query.metric.as_deref())?;
    let mut out = Vec::new();
    for (id, fingerprint) in ids {
        let found = store.sessions(&Filter {
            session: Some(id),
            ..Filter::default()
        })?;
        let Some(s) = found.into_iter().next() else {
            continue;
        };
        let cells: Vec<&crate::store::StoredCell> = (s.cells.iter())
            .filter(|c| {
                query.benchmark.as_deref().is_none_or(|b| {
                    c.identity.contains(b) || c.name.contains(b) || c.command.contains(b)
                })
            })
            .collect();
        let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
        let values = match metric {
            Some(m) => store.metric_values(&ids, m)?,
            None => history::time_values(store, &cells)?,
        };
        let outcomes = store.run_outcomes(&ids)?;
        let ended = (s.status != crate::store::FINISHED).then(|| s.status.clone());
        let mut benchmarks: Vec<(String, Side)> = Vec::new();
        for c in &cells {
            if let Some((_, side)) = benchmarks.iter_mut().find(|(b, _)| *b == c.identity) {
                side.copies += 1;
                continue;
            }
            let (timed_out, failed) = outcomes.get(&c.id).copied().unwrap_or_default();
            benchmarks.push((
                c.identity.clone(),
                Side {
                    copies: 1,
                    values: values.get(&c.id).map_or(0, Vec::len),
                    timed_out,
                    failed,
                    ended: ended.clone(),
                    unstored: false,
                },
            ));
        }
        // What the suite's previous session held and this one lacks: not
        // compared, as a benchmark dropped must not leave the gate unseen.
        for name in super::previous_benchmarks(store, &s)? {
            let wanted = query.benchmark.as_deref().is_none_or(|b| name.contains(b));
            if wanted && !benchmarks.iter().any(|(b, _)| *b == name) {
                benchmarks.push((name, Side::default()));
            }
        }
        out.push(NewestSession {
            id,
            fingerprint,
            benchmarks,
        });
    }
    Ok(out)
}
