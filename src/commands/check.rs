//! `cmdscope check`: the CI gate. Compares the latest session on this
//! machine with the latest session carrying the baseline label on the same
//! machine fingerprint, benchmark by benchmark (matched by identity), on
//! wall time (Go's sec/op for imported Go benchmarks).
//!
//! Each benchmark is one analysis by the comparison engine
//! (`analysis::comparison`): the two sessions ran at different times, so the
//! runs are unpaired (Mann-Whitney U, or Welch's t-test on logarithms at
//! small samples), Bonferroni across the benchmarks. A regression is the
//! engine's one gate rule, the same as `compare --fail-if-slower`: slower
//! AND the lower end of the ratio interval above 1 + PCT/100; any
//! regression makes the exit status 1.
//!
//! Runs of one session say nothing about how much a benchmark moves from
//! session to session. Where the store holds at least
//! `analysis::check::MIN_HISTORY` sessions with the baseline label that ran the benchmark,
//! the spread of their log medians, less the medians' own sampling noise
//! (`analysis::check::between_session_sigma`), estimates that movement and widens the
//! interval (`widen_for_sessions`); otherwise the output says that
//! session-to-session variation is not in the interval.
//!
//! The checked results are compared as they were measured: at the alpha
//! their sessions ran with (unless `--alpha` is given), each benchmark
//! with the precision band of the session that measured it, both read from
//! the settings stored with the session (read back from the command line,
//! with a note, for sessions stored before settings were kept).
//!
//! A benchmark run in concurrency mode (`run --concurrency N`) is also
//! compared on its throughput, one value per stored batch, by the same
//! rules (`analysis::check::Measure::Throughput`). `--against history`
//! checks one metric's history (`--metric`: wall time by default, any run
//! metric, or a concurrency session's throughput or latency percentile,
//! `store::history`), and fails on the newest session or on a drift still
//! going on at it.

use std::collections::HashMap;

use crate::analysis::changes::Params;
use crate::analysis::check::{
    against_history, batch_seconds, between_session_sigma, compare, failing_against_history,
    median_and_se, Measure, Pair, Withheld, HISTORY_SESSIONS,
};
use crate::analysis::comparison::DEFAULT_PRECISION;
use crate::cli::store::{CheckArgs, CheckFormat};
use crate::error::{exit, Error, Result};
use crate::report::check::{Context, HistoryContext};
use crate::run::request::DEFAULT_ALPHA;
use crate::store::history::{self, time_values, Query};
use crate::store::record::open_read_only;
use crate::store::{parse_label, Filter, Machine, Store, StoredSession};

/// Per benchmark identity of one session: its median and the standard
/// error of the log median.
type SessionMedians = Vec<(String, (f64, f64))>;

/// What the comparisons take of how the checked results were measured.
struct MeasuredWith {
    /// The family-wise level: `--alpha`, else the sessions' own.
    alpha: f64,
    /// Each stored cell's precision band, a fraction.
    precision: HashMap<i64, f64>,
    notes: Vec<String>,
}

/// The alpha and the precisions of the checked sessions (one, or a suite
/// run's), from their stored settings as `report` reads them.
fn measured_with(sessions: &[StoredSession], alpha_flag: Option<f64>) -> Result<MeasuredWith> {
    let mut alphas: Vec<f64> = Vec::new();
    let mut precision = HashMap::new();
    let mut read_back = Vec::new();
    for s in sessions {
        let (alpha, p, inferred) =
            super::report::levels(s.settings.as_ref(), &s.command_line, &s.source);
        if !alphas.contains(&alpha) {
            alphas.push(alpha);
        }
        if inferred {
            read_back.push(format!("#{}", s.id));
        }
        // As `run` compares: the default band when --runs alone fixed the count.
        let p = p.unwrap_or(DEFAULT_PRECISION);
        precision.extend(s.cells.iter().map(|c| (c.id, p)));
    }
    let mut notes = Vec::new();
    let alpha = match (alpha_flag, alphas.as_slice()) {
        (Some(a), _) => a,
        (None, [one]) => *one,
        (None, _) => {
            let listed: Vec<String> = alphas.iter().map(f64::to_string).collect();
            notes.push(format!(
                "The checked sessions ran at different alphas ({}): compared at {DEFAULT_ALPHA} \
                 (give --alpha to choose).",
                listed.join(", ")
            ));
            DEFAULT_ALPHA
        }
    };
    crate::cli::check_alpha(alpha)?;
    if !read_back.is_empty() {
        let one = read_back.len() == 1;
        notes.push(format!(
            "Session{} {} {} stored before cmdscope kept a session's settings: {} alpha and \
             precision were read back from {} command line with today's defaults.",
            if one { "" } else { "s" },
            read_back.join(", "),
            if one { "was" } else { "were" },
            if one { "its" } else { "their" },
            if one { "its" } else { "their" },
        ));
    }
    Ok(MeasuredWith {
        alpha,
        precision,
        notes,
    })
}

fn find_session(store: &mut Store, filter: Filter) -> Result<Option<StoredSession>> {
    Ok(store.sessions(&filter)?.into_iter().next())
}

/// Median wall time (and the standard error of its log) per benchmark
/// identity in each of the latest
/// [`HISTORY_SESSIONS`] sessions labelled `key=value` on the current
/// session's machine (the current session itself excluded); and the same
/// of the batches' seconds per completion for the `concurrent` identities.
fn baseline_history(
    store: &mut Store,
    key: &str,
    value: &str,
    current: &StoredSession,
    concurrent: &[String],
) -> Result<(Vec<SessionMedians>, Vec<SessionMedians>)> {
    let sessions: Vec<StoredSession> = store
        .sessions(&Filter {
            labels: vec![(key.to_owned(), value.to_owned())],
            machine: Some(current.fingerprint.clone()),
            limit: Some(HISTORY_SESSIONS + 1),
            ..Filter::default()
        })?
        .into_iter()
        .filter(|s| s.id != current.id)
        .take(HISTORY_SESSIONS)
        .collect();
    let cells: Vec<_> = sessions.iter().flat_map(|s| s.cells.iter()).collect();
    let times = time_values(store, &cells)?;
    let mut batches: Vec<SessionMedians> = Vec::new();
    for s in &sessions {
        let mut medians = Vec::new();
        for c in s.cells.iter().filter(|c| concurrent.contains(&c.identity)) {
            if let Some(m) = median_and_se(&batch_seconds(&store.batches(c.id)?)) {
                medians.push((c.identity.clone(), m));
            }
        }
        batches.push(medians);
    }
    let wall = sessions
        .iter()
        .map(|s| {
            s.cells
                .iter()
                .filter_map(|c| Some((c.identity.clone(), median_and_se(times.get(&c.id)?)?)))
                .collect()
        })
        .collect();
    Ok((wall, batches))
}

/// A stored cell's batches when it ran in concurrency mode (by its stored
/// batches, or its session's settings: empty when they were not stored);
/// None for single runs.
fn concurrent_batches(
    store: &mut Store,
    session: &StoredSession,
    cell: usize,
) -> Result<Option<Vec<crate::run::session::BatchRecord>>> {
    let batches = store.batches(session.cells[cell].id)?;
    let ran_concurrently = (session.settings.as_ref())
        .and_then(|s| s.cells.get(cell))
        .is_some_and(|c| c.variant.concurrency.is_some());
    Ok((!batches.is_empty() || ran_concurrently).then_some(batches))
}

pub fn run(args: &CheckArgs) -> Result<i32> {
    if args.against.is_some() {
        return check_against_history(args);
    }
    let (key, value) = parse_label(args.baseline.as_deref().unwrap_or_default())?;
    crate::cli::check_percentage("--fail-if-slower", args.fail_if_slower)?;
    if let Some(alpha) = args.alpha {
        crate::cli::check_alpha(alpha)?;
    }
    let mut store = open_read_only(args.store.store.as_deref())?;
    if let Some(run) = &args.run {
        let sessions = crate::suite::merge::sessions(&mut store, run)?;
        let current = crate::suite::merge::merged(&mut store, run)?;
        let with = measured_with(&sessions, args.alpha)?;
        let baseline = crate::suite::merge::baseline(&mut store, &key, &value, run)?;
        return gate(args, &mut store, (&key, &value), (current, with), baseline);
    }
    let current = match args.session {
        Some(id) => find_session(
            &mut store,
            Filter {
                session: Some(id),
                ..Filter::default()
            },
        )?
        .ok_or_else(|| super::nothing_found(&store, &format!("session #{id}")))?,
        None => {
            let here = Machine::current();
            find_session(
                &mut store,
                Filter {
                    machine: Some(here.fingerprint()),
                    limit: Some(1),
                    ..Filter::default()
                },
            )?
            .ok_or_else(|| {
                super::nothing_found(
                    &store,
                    &format!(
                        "results from this machine ({} [{}]); run `cmdscope run` first",
                        here.hostname,
                        crate::store::short_fingerprint(&here.fingerprint())
                    ),
                )
            })?
        }
    };
    let baseline = store
        .sessions(&Filter {
            labels: vec![(key.clone(), value.clone())],
            machine: Some(current.fingerprint.clone()),
            ..Filter::default()
        })?
        .into_iter()
        .find(|s| s.id != current.id)
        .ok_or_else(|| {
            super::nothing_found(
                &store,
                &format!(
                    "baseline session labelled {key}={value} on machine {} [{}] (other than session #{})",
                    current.machine.hostname,
                    crate::store::short_fingerprint(&current.fingerprint),
                    current.id
                ),
            )
        })?;
    let with = measured_with(std::slice::from_ref(&current), args.alpha)?;
    gate(args, &mut store, (&key, &value), (current, with), baseline)
}

/// Compares the current results with the baseline and prints the verdicts.
fn gate(
    args: &CheckArgs,
    store: &mut Store,
    (key, value): (&str, &str),
    (current, with): (StoredSession, MeasuredWith),
    baseline: StoredSession,
) -> Result<i32> {
    let cells: Vec<_> = current.cells.iter().chain(&baseline.cells).collect();
    let times = time_values(store, &cells)?;
    let values = |cell: &crate::store::StoredCell| times.get(&cell.id).cloned().unwrap_or_default();
    let mut pairs: Vec<Pair> = Vec::new();
    let mut only_current = Vec::new();
    for (i, c) in current.cells.iter().enumerate() {
        match baseline.cells.iter().position(|b| b.identity == c.identity) {
            Some(j) => {
                if !pairs.iter().any(|p| p.name == c.identity) {
                    let b = &baseline.cells[j];
                    let precision = with
                        .precision
                        .get(&c.id)
                        .copied()
                        .unwrap_or(DEFAULT_PRECISION);
                    pairs.push(Pair {
                        name: c.identity.clone(),
                        measure: Measure::WallTime,
                        withheld: None,
                        base: values(b),
                        cand: values(c),
                        history: None,
                        precision,
                    });
                    let base = concurrent_batches(store, &baseline, j)?;
                    let cand = concurrent_batches(store, &current, i)?;
                    if base.is_some() || cand.is_some() {
                        let (base, cand) = (base.unwrap_or_default(), cand.unwrap_or_default());
                        pairs.push(Pair {
                            name: c.identity.clone(),
                            measure: Measure::Throughput,
                            withheld: (base.is_empty() || cand.is_empty()).then_some(
                                Withheld::NotStored {
                                    baseline: base.is_empty(),
                                    current: cand.is_empty(),
                                },
                            ),
                            base: batch_seconds(&base),
                            cand: batch_seconds(&cand),
                            history: None,
                            precision,
                        });
                    }
                }
            }
            None => only_current.push(c.identity.clone()),
        }
    }
    let only_baseline: Vec<String> = baseline
        .cells
        .iter()
        .filter(|b| !current.cells.iter().any(|c| c.identity == b.identity))
        .map(|b| b.identity.clone())
        .collect();
    if pairs.is_empty() {
        return Err(Error::Usage(format!(
            "session #{} and baseline session #{} have no benchmark in common",
            current.id, baseline.id
        )));
    }
    let concurrent: Vec<String> = (pairs.iter())
        .filter(|p| p.measure == Measure::Throughput)
        .map(|p| p.name.clone())
        .collect();
    let (wall, batches) = baseline_history(store, key, value, &current, &concurrent)?;
    for p in &mut pairs {
        let history = match p.measure {
            Measure::WallTime => &wall,
            Measure::Throughput => &batches,
        };
        let medians: Vec<(f64, f64)> = history
            .iter()
            .filter_map(|per_session| per_session.iter().find(|(id, _)| *id == p.name))
            .map(|(_, m)| *m)
            .collect();
        p.history = between_session_sigma(&medians);
    }
    let rows = compare(&pairs, with.alpha, args.fail_if_slower);
    let ctx = Context {
        current: &current,
        baseline: &baseline,
        pct: args.fail_if_slower,
        alpha: with.alpha,
        only_current: &only_current,
        only_baseline: &only_baseline,
        notes: &with.notes,
    };
    let text = match args.format {
        CheckFormat::Markdown => crate::report::check::markdown(&rows, &ctx),
        CheckFormat::Text => crate::report::check::text(&rows, &ctx),
    };
    crate::output::print(&crate::output::escape_controls(&text));
    Ok(if rows.iter().any(|r| r.regression) {
        exit::FAILURE
    } else {
        exit::OK
    })
}

/// `check --against history`: each benchmark of the checked session
/// against the sessions since its history's last change point (at most
/// `Params::window`), on the same machine fingerprint, in the metric
/// `--metric` names. Bonferroni over the session's benchmarks, the
/// engine's gate rule for --fail-if-slower, on the newest session and on
/// a drift still going on at it.
fn check_against_history(args: &CheckArgs) -> Result<i32> {
    crate::cli::check_percentage("--fail-if-slower", args.fail_if_slower)?;
    history::metric(args.metric.as_deref())?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let here = crate::store::Machine::current().fingerprint();
    let filter = crate::store::Filter {
        session: args.session,
        machine: args.session.is_none().then(|| here.clone()),
        limit: Some(1),
        ..Default::default()
    };
    let current = store.sessions(&filter)?.into_iter().next().ok_or_else(|| {
        super::nothing_found(
            &store,
            &match args.session {
                Some(id) => format!("session #{id}"),
                None => "results from this machine; run `cmdscope run` first".into(),
            },
        )
    })?;
    let with = measured_with(std::slice::from_ref(&current), args.alpha)?;
    let base = super::changes::params(with.alpha)?;
    let histories = history::load(
        &mut store,
        &Query {
            machine: Some(current.fingerprint.clone()),
            metric: args.metric.clone(),
            ..Query::default()
        },
    )?;
    let mut names: Vec<&str> = Vec::new();
    for c in &current.cells {
        if !names.contains(&c.identity.as_str()) {
            names.push(&c.identity);
        }
    }
    let p = Params {
        alpha: with.alpha / names.len().max(1) as f64,
        ..base
    };
    let rows = against_history(&names, &histories, current.id, &p);
    if rows.iter().all(|r| r.change.is_none()) {
        return Err(super::nothing_found(
            &store,
            &format!(
                "finished sessions before session #{} on machine {} [{}] with its benchmarks",
                current.id,
                current.machine.hostname,
                crate::store::short_fingerprint(&current.fingerprint)
            ),
        ));
    }
    let ctx = HistoryContext {
        current: &current,
        pct: args.fail_if_slower,
        alpha: with.alpha,
        window: p.window,
        notes: &with.notes,
    };
    let markdown = args.format == CheckFormat::Markdown;
    let out = crate::report::check::against_history(&rows, &ctx, markdown);
    crate::output::print(&crate::output::escape_controls(&out));
    Ok(if failing_against_history(&rows, args.fail_if_slower) > 0 {
        exit::FAILURE
    } else {
        exit::OK
    })
}
