//! `cmdscope check`: the CI gate. Compares the latest session on this
//! machine with the latest session carrying the baseline label on the same
//! machine fingerprint, benchmark by benchmark (matched by identity), on
//! wall time (Go's sec/op for imported Go benchmarks), or on the per-run
//! metric `--metric` names (`run --simulate`'s `sim_*` counts compare only
//! between sessions simulated alike).
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
    against_history, batch_seconds, between_session_sigma, compare, median_and_se, Measure, Pair,
    HISTORY_SESSIONS,
};
use crate::analysis::comparison::DEFAULT_PRECISION;
use crate::analysis::gate::{self, Side};
use crate::cli::store::{CheckArgs, CheckFormat};
use crate::error::{exit, GateError, Result};
use crate::metrics::Metric;
use crate::report::check::{Context, HistoryContext};
use crate::run::request::DEFAULT_ALPHA;
use crate::store::history::{self, run_values, Query};
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
fn measured_with(
    store: &Store,
    sessions: &[StoredSession],
    alpha_flag: Option<f64>,
) -> Result<MeasuredWith> {
    let mut alphas: Vec<f64> = Vec::new();
    let mut precision = HashMap::new();
    let mut read_back = Vec::new();
    for s in sessions {
        super::checked_settings(store, s)?;
        let how = crate::cli::stored::how_run(s);
        let (alpha, p, inferred) = (how.alpha, how.precision, how.read_back.is_some());
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
    metric: Metric,
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
    let times = run_values(store, &cells, metric)?;
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
/// batches, or how it was run, `cli::stored::how_run`: empty when they were not
/// stored); None for single runs.
fn concurrent_batches(
    store: &mut Store,
    session: &StoredSession,
    cell: usize,
) -> Result<Option<Vec<crate::run::session::BatchRecord>>> {
    let batches = store.batches(session.cells[cell].id)?;
    let concurrent = crate::cli::stored::how_run(session).ran_concurrently(cell);
    Ok((!batches.is_empty() || concurrent).then_some(batches))
}

/// `--metric` against a baseline: wall time unless it names another
/// per-run metric. A concurrency session's latency percentiles are one
/// value per session, and its throughput is compared beside wall time
/// already: only their histories can be checked.
fn checked_metric(args: &CheckArgs) -> Result<Metric> {
    if let Some(d) = args.metric.as_deref().and_then(history::Derived::from_name) {
        return Err(GateError::DerivedNeedsHistory(d.name().to_string()).into());
    }
    Ok(history::metric(args.metric.as_deref())?.unwrap_or(Metric::WallTime))
}

pub fn run(args: &CheckArgs) -> Result<i32> {
    if args.against.is_some() {
        return check_against_history(args);
    }
    let metric = checked_metric(args)?;
    let (key, value) = parse_label(args.baseline.as_deref().unwrap_or_default())?;
    crate::cli::check_percentage("--fail-if-slower", args.fail_if_slower)?;
    if let Some(alpha) = args.alpha {
        crate::cli::check_alpha(alpha)?;
    }
    let mut store = open_read_only(args.store.store.as_deref())?;
    if let Some(run) = &args.run {
        let sessions = crate::suite::merge::sessions(&mut store, run)?;
        let current = crate::suite::merge::merged(&mut store, run)?;
        let with = measured_with(&store, &sessions, args.alpha)?;
        let baseline = crate::suite::merge::baseline(&mut store, &key, &value, run)?;
        let ended = ended(&sessions.iter().collect::<Vec<_>>());
        // A partition that has not reported holds benchmarks the baseline
        // may lack too: it fails the gate as it fails `status`.
        let status = crate::suite::status::read(&mut store, run)?;
        let partitions = (status.missing.iter())
            .map(|m| {
                gate::Row::not_compared(
                    &format!("partition {}/{}", m.partition, status.partitions),
                    Measure::Run(metric).name(),
                    gate::Why::PartitionMissing {
                        partition: m.partition,
                        partitions: status.partitions,
                        status: m.status.clone(),
                    },
                )
            })
            .collect();
        return gate(
            args,
            &mut store,
            (&key, &value),
            (current, with),
            baseline,
            (ended, partitions),
        );
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
    let with = measured_with(&store, std::slice::from_ref(&current), args.alpha)?;
    let ended = ended(&[&current]);
    gate(
        args,
        &mut store,
        (&key, &value),
        (current, with),
        baseline,
        (ended, Vec::new()),
    )
}

/// How each stored cell's session ended when it did not finish, by cell
/// id: what a gate says of a side that holds too few runs.
fn ended(sessions: &[&StoredSession]) -> HashMap<i64, String> {
    let mut out = HashMap::new();
    for s in sessions
        .iter()
        .filter(|s| s.status != crate::store::FINISHED)
    {
        out.extend(s.cells.iter().map(|c| (c.id, s.status.clone())));
    }
    out
}

/// What the gate knows of the sessions compared beyond their values.
struct Known {
    /// Per cell id: its runs timed out and failed.
    outcomes: HashMap<i64, (usize, usize)>,
    /// Per cell id: how its session ended, when it did not finish.
    ended: HashMap<i64, String>,
}

impl Known {
    /// One side of a benchmark: its copies in the session, and of the
    /// first, the runs that did not succeed and how its session ended.
    fn side(&self, cells: &[&crate::store::StoredCell]) -> Side {
        let Some(c) = cells.first() else {
            return Side::default();
        };
        let (timed_out, failed) = self.outcomes.get(&c.id).copied().unwrap_or_default();
        Side {
            copies: cells.len(),
            timed_out,
            failed,
            ended: self.ended.get(&c.id).cloned(),
            ..Side::default()
        }
    }
}

/// The cells of `session` with this identity.
fn cells_of<'a>(session: &'a StoredSession, identity: &str) -> Vec<&'a crate::store::StoredCell> {
    session
        .cells
        .iter()
        .filter(|c| c.identity == identity)
        .collect()
}

/// What the gate's lines call the baseline and the current results: a
/// suite run's merged partitions by the run's id, a session by its own.
fn side_names(
    run: Option<&str>,
    current: &StoredSession,
    baseline: &StoredSession,
) -> (String, String) {
    let base = match (run, baseline.label(crate::suite::RUN_LABEL)) {
        (Some(_), Some(r)) => format!("the baseline run '{r}'"),
        _ => format!("the baseline session #{}", baseline.id),
    };
    let cur = match run {
        Some(r) => format!("the current run '{r}'"),
        None => format!("the current session #{}", current.id),
    };
    (base, cur)
}

/// Simulated counts compare only when both sessions were simulated alike
/// (same simulator, version and cache geometry): other counts are other
/// numbers.
fn same_simulation(
    store: &mut Store,
    current: &StoredSession,
    baseline: &StoredSession,
) -> Result<()> {
    let (a, b) = (simulation(store, current)?, simulation(store, baseline)?);
    let said = |s: &Option<crate::exec::simulate::Simulation>| match s {
        Some(s) => format!(
            "simulated by {} {} (I1 {}, D1 {}, LL {})",
            s.tool, s.version, s.i1, s.d1, s.ll
        ),
        None => "not simulated".to_string(),
    };
    if a.is_none() || a != b {
        return Err(GateError::SimulatedApart {
            current_id: current.id,
            current: said(&a),
            baseline_id: baseline.id,
            baseline: said(&b),
        }
        .into());
    }
    Ok(())
}

/// How a session's counts were simulated: its stored settings', or for a
/// suite run merged into one (which has no settings of its own: each
/// benchmark ran with its own) its sessions', which must all agree.
fn simulation(
    store: &mut Store,
    s: &StoredSession,
) -> Result<Option<crate::exec::simulate::Simulation>> {
    agreed(store, s, "simulated", |x| x.simulate.clone())
}

/// What a session's settings say of it (`of`), alike in every session of
/// a merged suite run; else an error saying the run was not `what` alike.
fn agreed<T: Clone + PartialEq>(
    store: &mut Store,
    s: &StoredSession,
    what: &str,
    of: impl Fn(&crate::run::settings::Settings) -> Option<T>,
) -> Result<Option<T>> {
    let parts = match (&s.settings, s.label(crate::suite::RUN_LABEL)) {
        (None, Some(run)) if s.settings_error.is_none() => {
            crate::suite::merge::sessions(store, run)?
        }
        _ => vec![s.clone()],
    };
    let mut found = Vec::new();
    for part in &parts {
        let value = super::checked_settings(store, part)?.and_then(&of);
        if !found.contains(&value) {
            found.push(value);
        }
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(GateError::SuiteCountedApart {
            run: s
                .label(crate::suite::RUN_LABEL)
                .unwrap_or_default()
                .to_string(),
            what: what.to_string(),
        }
        .into()),
    }
}

/// A session counted by hardware counters is never compared with one
/// counted by the simulator, on any metric: their counts are of different
/// machines (a real CPU's, user space only, and a modelled one), and the
/// simulator's times are its own.
fn same_counter(
    store: &mut Store,
    current: &StoredSession,
    baseline: &StoredSession,
) -> Result<()> {
    use crate::run::counted::By;
    let by = |store: &mut Store, s: &StoredSession| agreed(store, s, "counted", |x| x.counted_by());
    let (a, b) = (by(store, current)?, by(store, baseline)?);
    if let (Some(a), Some(b)) = (a, b) {
        if a != b {
            let said = |by: By| match by {
                By::Hardware => "counted by hardware counters",
                By::Cachegrind => "counted by cachegrind, the simulator",
            };
            return Err(GateError::CountedApart {
                current_id: current.id,
                current: said(a).into(),
                baseline_id: baseline.id,
                baseline: said(b).into(),
            }
            .into());
        }
    }
    Ok(())
}

/// Compares the current results with the baseline and prints the verdicts.
/// `ended` says how the current results' sessions ended (a suite run's
/// partitions, or the one session); `partitions` are the rows of a suite
/// run's missing partitions.
fn gate(
    args: &CheckArgs,
    store: &mut Store,
    (key, value): (&str, &str),
    (current, with): (StoredSession, MeasuredWith),
    baseline: StoredSession,
    (ended_here, partitions): (HashMap<i64, String>, Vec<gate::Row>),
) -> Result<i32> {
    // The baseline's settings say which benchmarks ran in concurrency mode.
    super::checked_settings(store, &baseline)?;
    let metric = checked_metric(args)?;
    let measure = Measure::Run(metric);
    same_counter(store, &current, &baseline)?;
    if metric.simulated() {
        same_simulation(store, &current, &baseline)?;
    }
    let cells: Vec<_> = current.cells.iter().chain(&baseline.cells).collect();
    let times = run_values(store, &cells, metric)?;
    let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
    let mut known = Known {
        outcomes: store.run_outcomes(&ids)?,
        ended: ended(&[&baseline]),
    };
    known.ended.extend(ended_here);
    let values = |cell: &crate::store::StoredCell| times.get(&cell.id).cloned().unwrap_or_default();
    let mut pairs: Vec<Pair> = Vec::new();
    let mut absent: Vec<gate::Row> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    // Each benchmark of the baseline once, in its order.
    for identity in baseline.cells.iter().map(|b| b.identity.as_str()) {
        if names.contains(&identity) {
            continue;
        }
        names.push(identity);
        let (base_cells, cand_cells) =
            (cells_of(&baseline, identity), cells_of(&current, identity));
        let sides = (known.side(&base_cells), known.side(&cand_cells));
        let (&[b], &[c]) = (base_cells.as_slice(), cand_cells.as_slice()) else {
            // Absent, or more than once on a side: compared with nothing.
            absent.push(gate::Row::new(
                identity,
                measure.name(),
                (&sides.0, &sides.1),
                None,
                false,
            ));
            continue;
        };
        let precision = with
            .precision
            .get(&c.id)
            .copied()
            .unwrap_or(DEFAULT_PRECISION);
        pairs.push(Pair {
            name: c.identity.clone(),
            measure,
            sides: sides.clone(),
            base: values(b),
            cand: values(c),
            history: None,
            precision,
        });
        let i = current
            .cells
            .iter()
            .position(|x| x.id == c.id)
            .unwrap_or_default();
        let j = baseline
            .cells
            .iter()
            .position(|x| x.id == b.id)
            .unwrap_or_default();
        let base = concurrent_batches(store, &baseline, j)?;
        let cand = concurrent_batches(store, &current, i)?;
        // Throughput is a time: compared with wall time, not another metric.
        if (base.is_some() || cand.is_some()) && metric == Metric::WallTime {
            let (base, cand) = (base.unwrap_or_default(), cand.unwrap_or_default());
            let unstored = |mut side: Side, batches: &[_]| {
                side.unstored = batches.is_empty();
                side
            };
            pairs.push(Pair {
                name: c.identity.clone(),
                measure: Measure::Throughput,
                sides: (unstored(sides.0, &base), unstored(sides.1, &cand)),
                base: batch_seconds(&base),
                cand: batch_seconds(&cand),
                history: None,
                precision,
            });
        }
    }
    let only_current: Vec<String> = (current.cells.iter())
        .filter(|c| !baseline.cells.iter().any(|b| b.identity == c.identity))
        .map(|c| c.identity.clone())
        .fold(Vec::new(), |mut out, name| {
            if !out.contains(&name) {
                out.push(name);
            }
            out
        });
    if pairs.is_empty()
        && absent
            .iter()
            .all(|r| matches!(r.why(), Some(gate::Why::Absent(_))))
    {
        return Err(GateError::NothingInCommon {
            current: current.id,
            baseline: baseline.id,
        }
        .into());
    }
    let concurrent: Vec<String> = (pairs.iter())
        .filter(|p| p.measure == Measure::Throughput)
        .map(|p| p.name.clone())
        .collect();
    let (wall, batches) = baseline_history(store, key, value, &current, &concurrent, metric)?;
    for p in &mut pairs {
        let history = match p.measure {
            Measure::Run(_) => &wall,
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
    let opts = super::gate_options(&args.gate);
    let gate_rows: Vec<gate::Row> = (rows.iter().map(|r| r.gate.clone()))
        .chain(absent)
        .chain(partitions)
        .collect();
    let outcome = gate::judge(&gate_rows, &opts);
    let mut notes = with.notes.clone();
    let all_names: Vec<&str> = names
        .iter()
        .copied()
        .chain(only_current.iter().map(String::as_str))
        .collect();
    notes.extend(crate::report::gate::unmatched_note(&gate::unmatched(
        &opts, &all_names,
    )));
    let ctx = Context {
        current: &current,
        baseline: &baseline,
        pct: args.fail_if_slower,
        alpha: with.alpha,
        only_current: &only_current,
        outcome: &outcome,
        names: side_names(args.run.as_deref(), &current, &baseline),
        notes: &notes,
    };
    let text = match args.format {
        CheckFormat::Markdown => crate::report::check::markdown(&rows, &ctx),
        CheckFormat::Text => crate::report::check::text(&rows, &ctx),
    };
    crate::output::print(&crate::output::escape_controls(&text));
    Ok(if outcome.passes() {
        exit::OK
    } else {
        exit::FAILURE
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
    let with = measured_with(&store, std::slice::from_ref(&current), args.alpha)?;
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
    let checked = names.len();
    // What the session before held and this one lacks is not compared: a
    // benchmark dropped (or renamed) must not leave the gate unseen.
    let before = super::previous_benchmarks(&mut store, &current)?;
    for name in &before {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    let p = Params {
        alpha: with.alpha / checked.max(1) as f64,
        ..base
    };
    let rows = against_history(&names, &histories, current.id, &p);
    let gate_rows = history_gate_rows(&mut store, &current, &rows, args.fail_if_slower)?;
    if gate_rows.is_empty() {
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
    let opts = super::gate_options(&args.gate);
    let outcome = gate::judge(&gate_rows, &opts);
    let mut notes = with.notes.clone();
    notes.extend(crate::report::gate::unmatched_note(&gate::unmatched(
        &opts, &names,
    )));
    let ctx = HistoryContext {
        current: &current,
        pct: args.fail_if_slower,
        alpha: with.alpha,
        window: p.window,
        tested: checked,
        outcome: &outcome,
        notes: &notes,
    };
    let markdown = args.format == CheckFormat::Markdown;
    let out = crate::report::check::against_history(&rows, &ctx, markdown);
    crate::output::print(&crate::output::escape_controls(&out));
    Ok(if outcome.passes() {
        exit::OK
    } else {
        exit::FAILURE
    })
}

/// The gate's rows of `check --against history`: each benchmark of the
/// session with a history before it, its runs in the session counted from
/// the store (a session whose runs all timed out or failed makes no point
/// in a history). A benchmark without history before is no row.
fn history_gate_rows(
    store: &mut Store,
    current: &StoredSession,
    rows: &[crate::analysis::check::HistoryRow],
    pct: f64,
) -> Result<Vec<gate::Row>> {
    let cells: Vec<_> = current.cells.iter().collect();
    let times = run_values(store, &cells, Metric::WallTime)?;
    let ids: Vec<i64> = cells.iter().map(|c| c.id).collect();
    let known = Known {
        outcomes: store.run_outcomes(&ids)?,
        ended: ended(&[current]),
    };
    let mut out = Vec::new();
    for r in rows {
        let Some(h) = &r.history else { continue };
        let before = match &r.change {
            Some(c) => c.before.runs,
            None => (h.points.iter())
                .filter(|pt| {
                    pt.sessions
                        .iter()
                        .all(|s| s.id != current.id && s.started_unix <= current.started_unix)
                })
                .map(|pt| pt.runs.len())
                .sum(),
        };
        if before == 0 {
            continue;
        }
        let mine = cells_of(current, &r.benchmark);
        let cand = Side {
            values: (mine.first())
                .and_then(|c| times.get(&c.id))
                .map_or(0, Vec::len),
            ..known.side(&mine)
        };
        out.push(gate::Row::new(
            &r.benchmark,
            crate::analysis::changes::metric_name(h),
            (&Side::of(before), &cand),
            r.change.as_ref().map(|c| &c.comparison),
            crate::analysis::check::fails_against_history(r, pct),
        ));
    }
    Ok(out)
}
