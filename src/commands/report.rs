//! `cmdscope report`: gathers a session, its comparisons and its
//! benchmarks' history from the store and writes the HTML report.

use crate::analysis::comparison::{compare_stored, Comparison, StoredRuns};
use crate::analysis::sequential::{replay_runs, Sequential};
use crate::analysis::MAX_VALUES;
use crate::cli::run::RunArgs;
use crate::cli::store::ReportArgs;
use crate::cli::{Cli, Command};
use crate::error::{exit, Result};
use crate::metrics::Metric;
use crate::output::Named;
use crate::report::html::{self, CellData, ReportData};
use crate::run::schedule::Order;
use crate::store::history::time_values;
use crate::store::record::{check_outputs, open_read_only};
use crate::store::{Filter, Store, StoredSearch, StoredSession};

pub fn run(args: &ReportArgs) -> Result<i32> {
    if let Some(dir) = &args.site {
        return site(args, dir);
    }
    check_outputs(
        false,
        args.store.store.as_deref(),
        &[Named::flag("--html", &args.html)],
    )?;
    let mut store = open_read_only(args.store.store.as_deref())?;
    let mut filter = super::filter(&args.sessions)?;
    filter.session = args.session;
    filter.command = args.command.clone();
    filter.limit = Some(1);
    let (session, benchmarks, suite_settings) = match &args.sessions.run {
        Some(run) => {
            let sessions = crate::suite::merge::sessions(&mut store, run)?;
            for s in &sessions {
                super::checked_settings(&store, s)?;
            }
            let benchmarks = crate::suite::merge::benchmarks(&sessions);
            let settings = crate::suite::merge::settings(&sessions);
            (
                crate::suite::merge::merged(&mut store, run)?,
                Some(benchmarks),
                settings,
            )
        }
        None => (
            store
                .sessions(&filter)?
                .into_iter()
                .next()
                .ok_or_else(|| super::nothing_found(&store, "matching session"))?,
            None,
            Default::default(),
        ),
    };
    crate::output::check_writable(&args.html)?;
    let merged = benchmarks.is_some();
    let mut data = gather(&mut store, session, args.history, !merged)?;
    data.suite_settings = suite_settings.settings;
    data.notes.extend(suite_settings.note);
    if let (Some(run), Some(benchmarks)) = (&args.sessions.run, benchmarks) {
        // Each cell under the name of the suite's benchmark it was measured
        // in: the same command may be a cell of several benchmarks.
        for (c, stored) in data.cells.iter_mut().zip(&data.session.cells) {
            if let Some(b) = benchmarks.get(&stored.id) {
                c.name = format!("{b}: {}", c.name);
            }
        }
        // Cells of different benchmarks (and partitions, and machines) were
        // not measured interleaved: comparing them with the first would
        // mislead, so none is made.
        data.notes.push(format!(
            "This report merges the sessions of suite run {run}: its cells come from \
             different benchmarks, partitions and possibly machines, so they are not \
             compared with each other here. Each benchmark's comparisons are in the \
             report of its own session (cmdscope history --label cmdscope.run={run})."
        ));
    }
    let text = html::render(&data);
    crate::output::write_file(&args.html, text.as_bytes())?;
    if args.html != std::path::Path::new("-") {
        let what = match &args.sessions.run {
            Some(run) => format!("run {run}"),
            None => format!("session #{}", data.session.id),
        };
        crate::eprint_line!(
            "cmdscope: report of {what} written to {}",
            args.html.display()
        );
    }
    Ok(exit::OK)
}

/// `report --site DIR`: every history matching the report's filters,
/// analysed as `changes` does, written as a static site.
fn site(args: &ReportArgs, dir: &std::path::Path) -> Result<i32> {
    let mut store = open_read_only(args.store.store.as_deref())?;
    let query = crate::store::history::Query {
        benchmark: args.command.clone(),
        labels: crate::store::parse_labels(&args.sessions.labels)?,
        machine: args.sessions.machine.clone(),
        ..crate::store::history::Query::default()
    };
    let histories = crate::store::history::load(&mut store, &query)?;
    if histories.is_empty() {
        return Err(super::nothing_found(&store, "matching benchmark history"));
    }
    let p = crate::analysis::changes::Params::default();
    let analysed = crate::analysis::changes::analyse(histories, &p);
    let shifts = crate::analysis::changes::machine_shifts(&analysed);
    // Benchmarks run with --concurrency: their throughput and latency too.
    let mut more = Vec::new();
    for d in crate::store::history::Derived::ALL {
        let q = crate::store::history::Query {
            metric: Some(d.name().to_string()),
            ..query.clone()
        };
        more.extend(crate::analysis::changes::analyse(
            crate::store::history::load(&mut store, &q)?,
            &p,
        ));
    }
    let files = crate::report::site::render(&analysed, &more, &shifts, store.location());
    let pages: Vec<Named> = files
        .iter()
        .map(|(name, _)| Named::flag("--site", &dir.join(name)))
        .collect();
    check_outputs(false, args.store.store.as_deref(), &pages)?;
    std::fs::create_dir_all(dir).map_err(|source| crate::error::Error::Write {
        path: dir.into(),
        source,
    })?;
    for (name, content) in &files {
        crate::output::replace_in_dir(dir, name, content.as_bytes())?;
    }
    crate::eprint_line!(
        "cmdscope: site of {} benchmark histor{} written to {}",
        analysed.len(),
        if analysed.len() == 1 { "y" } else { "ies" },
        dir.join("index.html").display()
    );
    Ok(exit::OK)
}

/// Everything the report shows about `session`, with the history of its
/// benchmarks over the last `history` sessions on the same machine; its
/// cells compared with each other when `compare` says so.
pub fn gather(
    store: &mut Store,
    session: StoredSession,
    history: usize,
    compare: bool,
) -> Result<ReportData> {
    super::checked_settings(store, &session)?;
    let mut notes = Vec::new();
    let cells: Vec<_> = session.cells.iter().collect();
    let mut times = time_values(store, &cells)?;
    let mut data_cells = Vec::new();
    for c in &session.cells {
        let samples = store.runs(c.id)?;
        let times = times.remove(&c.id).unwrap_or_default();
        let monitor: Vec<(String, Vec<f64>)> = store
            .extra_series(c.id)?
            .into_iter()
            .filter(|s| s.metric.starts_with("monitor_"))
            .map(|s| (s.metric, s.values))
            .collect();
        data_cells.push(CellData {
            name: c.name.clone(),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            figures: crate::analysis::StoredCellFigures::of(&times, &samples, &monitor),
            samples,
            times,
            monitor,
        });
    }
    if session.status == crate::store::RUNNING {
        notes.push(
            "This session did not finish (it is still running, or was killed): \
             only the runs completed so far are shown."
                .to_string(),
        );
    }

    // A search's best, as it stored it, among the session's cells.
    let search_best = session.search.as_ref().and_then(|s| {
        data_cells.iter().position(|c| {
            c.parameters.len() == s.best.len() && s.best.iter().all(|b| c.parameters.contains(b))
        })
    });
    if let Some(s) = session.settings.as_ref() {
        // The names the session ran under (the stored cells' rows hold the same).
        if s.cells.len() == data_cells.len() {
            for (c, named) in data_cells.iter_mut().zip(&s.cells) {
                c.name.clone_from(&named.name);
            }
        }
    }
    let concurrency = stored_concurrency(store, &session)?;
    let concurrent = (0..session.cells.len()).any(|i| ran_concurrently(&session, i));
    if concurrent && concurrency.is_none() {
        notes.push(
            "This session ran in concurrency mode before cmdscope stored its batches (store \
             schema 6): its throughput cannot be computed again, only its instances' runs are \
             shown."
                .to_string(),
        );
    }
    let (comparisons, compare_notes) = if compare {
        compare_session(
            session.settings.as_ref(),
            &session.command_line,
            &session.source,
            session.order.as_deref(),
            &data_cells,
            search_best,
            // In concurrency mode the looks were taken over batches.
            concurrency.as_ref().map(|(s, _)| s.final_alpha),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    notes.extend(compare_notes);

    // History: the same benchmarks in the latest sessions on this machine.
    let past = store.sessions(&Filter {
        machine: Some(session.fingerprint.clone()),
        ..Filter::default()
    })?;
    let identities: Vec<&str> = session.cells.iter().map(|c| c.identity.as_str()).collect();
    let mut recent: Vec<&StoredSession> = past
        .iter()
        .filter(|s| s.started_unix <= session.started_unix || s.id == session.id)
        .filter(|s| {
            s.cells
                .iter()
                .any(|c| identities.contains(&c.identity.as_str()))
        })
        .take(history.max(1))
        .collect();
    recent.reverse();
    let hist_cells: Vec<_> = recent
        .iter()
        .flat_map(|s| s.cells.iter())
        .filter(|c| identities.contains(&c.identity.as_str()))
        .collect();
    let hist_times = time_values(store, &hist_cells)?;
    let history_data = crate::analysis::stored_history(&recent, &identities, &hist_times);
    let concurrency = concurrency.map(|(s, analysis)| html::ConcurrencyData {
        session: std::rc::Rc::new(s),
        analysis,
    });
    let as_good = sweep_set(
        &session.command_line,
        session.order.as_deref(),
        session.search.as_ref(),
        &data_cells,
        &comparisons,
    );
    Ok(ReportData {
        concurrency,
        as_good,
        store: store.location().to_string(),
        session,
        cells: data_cells,
        comparisons,
        history: history_data,
        notes,
        suite_settings: Vec::new(),
    })
}

/// A stored session run in concurrency mode as `run` held it (each cell
/// with its runs and batches) and concurrency mode's answers over it, made
/// as `run` made them: the same reference and precision, and for a session
/// that stopped with sequential looks the level its looks over batches
/// left. None when no cell has stored batches.
pub fn stored_concurrency(
    store: &mut Store,
    session: &StoredSession,
) -> Result<
    Option<(
        crate::run::session::Session,
        crate::analysis::concurrency::Concurrency,
    )>,
> {
    use crate::analysis::concurrency;
    use crate::run::session::{CellResult, Session};
    let mut results = Vec::with_capacity(session.cells.len());
    for (i, c) in session.cells.iter().enumerate() {
        let batches = store.batches(c.id)?;
        let ran = session.settings.as_ref().and_then(|s| s.cells.get(i));
        let mut cell = crate::run::plan::Cell {
            name: ran.map_or_else(|| c.name.clone(), |r| r.name.clone()),
            command: c.command.clone(),
            parameters: c.parameters.clone(),
            template: ran.map_or(0, |r| r.template),
            variant: ran.map(|r| r.variant.clone()).unwrap_or_default(),
            ..crate::run::plan::Cell::default()
        };
        // The batches say at which N the cell ran, settings or not.
        if let Some(b) = batches.first() {
            cell.variant.concurrency = Some(b.concurrency);
        }
        results.push(CellResult {
            samples: if batches.is_empty() {
                Vec::new()
            } else {
                store.runs(c.id)?
            },
            cell,
            batches,
        });
    }
    if results.iter().all(|r| r.batches.is_empty()) {
        return Ok(None);
    }
    let decided = match session.settings.as_ref() {
        Some(s) => Decided::stored(s),
        None => Decided::inferred(&session.command_line, &session.source, &[]).0,
    };
    let order = match session.order.as_deref() {
        Some("sequential") => Order::Sequential,
        _ => Order::Interleaved,
    };
    let reference = decided
        .reference
        .filter(|&r| r < results.len())
        .unwrap_or(0);
    let precision = decided
        .precision
        .unwrap_or(crate::analysis::comparison::DEFAULT_PRECISION);
    let final_alpha = match (decided.looks, decided.precision, order) {
        (true, Some(p), Order::Interleaved) => {
            let seq = if decided.until_decided {
                Sequential::until_decided(decided.alpha, p)
            } else {
                Sequential::new(decided.alpha, p)
            };
            let cells: Vec<(Option<usize>, &[crate::run::session::BatchRecord])> = results
                .iter()
                .map(|r| (r.cell.variant.concurrency, r.batches.as_slice()))
                .collect();
            concurrency::replay_looks(seq, &cells, reference, true)
        }
        _ => decided.alpha,
    };
    let mut s = Session::empty();
    s.results = results;
    s.order = order;
    s.reference = reference;
    s.alpha = decided.alpha;
    s.final_alpha = final_alpha;
    Ok(concurrency::analyse(&s, precision).map(|c| (s, c)))
}

/// The values as good as the best on a sweep session's curve, decided by
/// the terminal sweep table's code (`sweep::build`) on the stored runs, at
/// the level and precision of the report's comparisons. Only for a session
/// that swept one parameter of one command by wall time. A search's set
/// comes from its race, which stored runs do not replay: it is the stored
/// answer (one parameter, by wall time: the curve is of wall time).
pub fn sweep_set(
    command_line: &str,
    order: Option<&str>,
    search: Option<&StoredSearch>,
    cells: &[CellData],
    comparisons: &[Comparison],
) -> Option<html::SweepSet> {
    if let Some(s) = search {
        return stored_search_set(s);
    }
    let mut args = run_args(command_line)?;
    // Planning with --time-unit would force the report's units: not ours to set.
    args.time_unit = None;
    if args.commands.len() != 1
        || args.minimize.is_some()
        || args.maximize.is_some()
        || Metric::from_name(&args.metric) != Some(Metric::WallTime)
    {
        return None;
    }
    let (planned, params) = crate::cli::cells::plan_cells(&args).ok()?;
    let mut varying = params.iter().filter(|p| p.values.len() > 1);
    let (param, None) = (varying.next()?, varying.next()) else {
        return None;
    };
    let mut session = crate::run::session::Session::empty();
    session.order = if order == Some("interleaved") {
        Order::Interleaved
    } else {
        Order::Sequential
    };
    for cell in planned.into_iter().filter(|c| !c.calibration) {
        let stored = cells.iter().find(|c| c.name == cell.name)?;
        session.results.push(crate::run::session::CellResult::new(
            cell,
            stored.samples.clone(),
        ));
    }
    let analyses = crate::analysis::analyse(&session);
    let (alpha, precision) = comparisons.first().map_or(
        (args.alpha, crate::analysis::comparison::DEFAULT_PRECISION),
        |c| (c.level * c.family as f64, c.precision),
    );
    let sweep = crate::analysis::sweep::build(
        &session,
        &analyses,
        &params,
        &crate::analysis::sweep::Measure {
            source: &crate::analysis::source::Source::Run(Metric::WallTime),
            series: None,
            maximize: false,
        },
        &[args.commands[0].to_string_lossy().into_owned()],
        &crate::analysis::sweep::SetRules {
            comparisons,
            alpha,
            precision,
        },
    )?;
    let curve = sweep.curves.first()?;
    // Neighbouring members form one range.
    let mut ranges: Vec<(f64, f64)> = Vec::new();
    let mut last: Option<usize> = None;
    for &i in &curve.as_good {
        let x = curve.points[i].x?;
        match ranges.last_mut() {
            Some(r) if last == Some(i.wrapping_sub(1)) => r.1 = x,
            _ => ranges.push((x, x)),
        }
        last = Some(i);
    }
    Some(html::SweepSet {
        parameter: param.name.clone(),
        ranges,
    })
}

/// A stored one-parameter wall-time search's set as ranges of numeric
/// values, neighbours among the tried values forming one range.
fn stored_search_set(s: &StoredSearch) -> Option<html::SweepSet> {
    let [parameter] = s.parameters.as_slice() else {
        return None;
    };
    if s.metric != Metric::WallTime.name() {
        return None;
    }
    let x = |v: &crate::store::Setting| -> Option<f64> {
        v.first()?
            .1
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    };
    let mut ranges: Vec<(f64, f64)> = Vec::new();
    let mut last: Option<usize> = None;
    for (k, v) in s.values_tried.iter().enumerate() {
        if !s.as_good.contains(v) {
            continue;
        }
        let x = x(v)?;
        match ranges.last_mut() {
            Some(r) if last == Some(k.wrapping_sub(1)) => *r = (r.0.min(x), r.1.max(x)),
            _ => ranges.push((x, x)),
        }
        last = Some(k);
    }
    Some(html::SweepSet {
        parameter: parameter.clone(),
        ranges,
    })
}

/// Whether cell `cell` of a stored session ran in concurrency mode: by its
/// stored settings, or for a session stored before they were kept (store
/// schema 5), by its command line read back (`--concurrency`).
pub fn ran_concurrently(session: &StoredSession, cell: usize) -> bool {
    match session.settings.as_ref() {
        Some(s) => (s.cells.get(cell)).is_some_and(|c| c.variant.concurrency.is_some()),
        None => run_args(&session.command_line).is_some_and(|a| a.concurrency.is_some()),
    }
}

/// The `run` arguments a session was recorded with, read back from its
/// command line; None for imports or a line that no longer parses.
fn run_args(command_line: &str) -> Option<RunArgs> {
    let words = crate::run::plan::split_words(command_line.as_bytes()).ok()?;
    let args = words
        .into_iter()
        .map(|w| std::ffi::OsString::from(String::from_utf8_lossy(&w).into_owned()));
    match Cli::parse_ordered(args).ok()?.command {
        Command::Run(a) => Some(*a),
        _ => None,
    }
}

/// The alpha and precision (a fraction; None when `--runs` alone fixed the
/// count) a session's comparisons were made at, as `report` reads them: its
/// stored settings, or for a `run` session stored before they were kept,
/// its command line read back with today's defaults (then `true`).
pub fn levels(
    settings: Option<&crate::run::settings::Settings>,
    command_line: &str,
    source: &str,
) -> (f64, Option<f64>, bool) {
    match settings {
        Some(s) => {
            let d = Decided::stored(s);
            (d.alpha, d.precision, false)
        }
        None => {
            let (d, note) = Decided::inferred(command_line, source, &[]);
            (d.alpha, d.precision, note.is_some())
        }
    }
}

/// What the comparisons need of how a session was run.
struct Decided {
    alpha: f64,
    /// A fraction; None when `--runs` alone fixed the count.
    precision: Option<f64>,
    /// The named reference's index, or None for the first cell.
    reference: Option<usize>,
    /// Whether the runner stopped adaptively (its looks are replayed).
    looks: bool,
    /// The looks were `--until-decided`'s.
    until_decided: bool,
    searched: bool,
}

impl Decided {
    fn stored(s: &crate::run::settings::Settings) -> Decided {
        Decided {
            alpha: s.alpha,
            precision: s.precision,
            reference: Some(s.reference),
            looks: s.looks,
            until_decided: s.until_decided,
            searched: s.searched(),
        }
    }

    /// For a session stored without its settings: its command line read
    /// back as today's `run` parses it (so today's defaults), with the note
    /// that says so; the defaults when it does not parse.
    fn inferred(command_line: &str, source: &str, cells: &[CellData]) -> (Decided, Option<String>) {
        let Some(a) = run_args(command_line) else {
            let note = (source == "run").then(|| {
                "The session's command line could not be read back: comparisons use alpha 0.05, \
                 the first benchmark as reference and ±1 % as precision."
                    .to_string()
            });
            let decided = Decided {
                alpha: 0.05,
                precision: Some(crate::analysis::comparison::DEFAULT_PRECISION),
                reference: None,
                looks: false,
                until_decided: false,
                searched: false,
            };
            return (decided, note);
        };
        let searched = a.minimize.is_some() || a.maximize.is_some();
        // As `run` decides: a precision unless --runs alone fixed the count.
        let precision = match (a.precision, a.runs) {
            (Some(p), _) => Some(p / 100.0),
            (None, Some(_)) => None,
            (None, None) => Some(crate::analysis::comparison::DEFAULT_PRECISION),
        };
        let reference = a
            .reference
            .as_deref()
            .or(a.reference_name.as_deref())
            .and_then(|name| {
                cells
                    .iter()
                    .position(|c| c.name == name || c.command == name)
            });
        let decided = Decided {
            alpha: a.alpha,
            precision,
            reference,
            looks: a.order != Some(Order::Sequential)
                && source == "run"
                && !searched
                && precision.is_some(),
            until_decided: a.until_decided,
            searched,
        };
        let note = (source == "run").then(|| {
            "This session was stored before cmdscope kept a session's settings: its alpha, \
             precision, reference and adaptive stopping were read back from its command line \
             with today's defaults."
                .to_string()
        });
        (decided, note)
    }
}

/// The session's wall-time comparisons, as `run` made them: the same
/// reference, family-wise alpha and precision (the stored settings, or for
/// a session stored without them, read back from its command line),
/// interleaved runs paired by block (a block where either side timed out
/// is dropped for that pair), and, for a session with adaptive stopping,
/// the level its final analysis had left after the looks (the looks are
/// replayed on the stored runs).
pub fn compare(
    settings: Option<&crate::run::settings::Settings>,
    command_line: &str,
    source: &str,
    order: Option<&str>,
    cells: &[CellData],
) -> (Vec<Comparison>, Vec<String>) {
    compare_session(settings, command_line, source, order, cells, None, None)
}

/// [`compare`], told which cell a search session found best: a search's
/// tried values are compared with its best, unpaired (its runs came in
/// rounds of different values, so the k-th runs of two values need not
/// share a block), and the values it never tried are left out.
pub fn compare_session(
    settings: Option<&crate::run::settings::Settings>,
    command_line: &str,
    source: &str,
    order: Option<&str>,
    cells: &[CellData],
    search_best: Option<usize>,
    batch_level: Option<f64>,
) -> (Vec<Comparison>, Vec<String>) {
    let mut notes = Vec::new();
    if cells.len() < 2 {
        return (Vec::new(), notes);
    }
    let decided = match settings {
        Some(s) => Decided::stored(s),
        None => {
            let (decided, note) = Decided::inferred(command_line, source, cells);
            notes.extend(note);
            decided
        }
    };
    let searched = decided.searched;
    // Cells compared: all of them, or a search's tried values.
    let included: Vec<usize> = (0..cells.len())
        .filter(|&i| !searched || !cells[i].times.is_empty())
        .collect();
    if searched {
        notes.push(
            "A search session: each value it tried is compared with the search's best, \
             unpaired (its runs were measured in rounds of different values, not in common \
             blocks); values it did not try are left out."
                .to_string(),
        );
    }
    let alpha = decided.alpha;
    let interleaved = order == Some("interleaved");
    let precision = decided.precision;
    let reference = decided.reference.filter(|&r| r < cells.len()).unwrap_or(0);
    let reference = match (searched, search_best) {
        (true, Some(best)) => best,
        (true, None) => included.first().copied().unwrap_or(0),
        (false, _) => reference,
    };

    let mut final_alpha = alpha;
    if let (Some(level), true) = (batch_level, decided.looks) {
        // A concurrency session looked at batches, not runs: the level its
        // looks left (see `stored_concurrency`).
        final_alpha = level;
    } else if let (true, true, Some(p)) = (decided.looks && !searched, interleaved, precision) {
        let samples: Vec<&[crate::metrics::Sample]> =
            cells.iter().map(|c| c.samples.as_slice()).collect();
        final_alpha = replay_runs(&samples, reference, alpha, p, decided.until_decided);
    }

    if included.len() < 2 {
        return (Vec::new(), notes);
    }
    let runs: Vec<StoredRuns> = cells
        .iter()
        .map(|c| StoredRuns {
            name: &c.name,
            samples: &c.samples,
            times: &c.times,
        })
        .collect();
    let out = compare_stored(
        &runs,
        &included,
        reference,
        final_alpha,
        precision.unwrap_or(crate::analysis::comparison::DEFAULT_PRECISION),
        interleaved && !searched,
    );
    if cells.iter().any(|c| c.times.len() > MAX_VALUES) {
        notes.push(format!(
            "Benchmarks with more than {MAX_VALUES} runs are compared on an evenly spaced \
             subsample of {MAX_VALUES} runs."
        ));
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::check;
    use crate::analysis::comparison::Test;
    use crate::analysis::comparison::Verdict;
    use crate::analysis::tables::CompareOptions;
    use crate::import::dataset::{Benchmark, Dataset, Series};
    use crate::metrics::Sample;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_search_session_compares_its_tried_values_with_its_best_unpaired() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let line = "cmdscope run -P n 1 4 --minimize n 'sleep {n}'";
        let cells = vec![
            cell("n=1", &noisy(&mut rng, 0.030, 0.01, 3), &[]),
            cell("n=2", &[], &[]), // never tried
            cell("n=3", &noisy(&mut rng, 0.010, 0.01, 10), &[]),
            cell("n=4", &noisy(&mut rng, 0.020, 0.01, 3), &[]),
        ];
        let (cmp, notes) = compare_session(
            None,
            line,
            "run",
            Some("interleaved"),
            &cells,
            Some(2),
            None,
        );
        let pairs: Vec<(&str, &str)> = cmp
            .iter()
            .map(|c| (c.baseline.as_str(), c.candidate.as_str()))
            .collect();
        assert_eq!(pairs, [("n=3", "n=1"), ("n=3", "n=4")]);
        for c in &cmp {
            assert!(
                matches!(c.test, Test::WelchT | Test::MannWhitney),
                "unpaired: {:?}",
                c.test
            );
            // Two comparisons: Bonferroni at 0.05 / 2.
            assert!((c.confidence - 0.975).abs() < 1e-12, "{}", c.confidence);
            assert!(c.ratio_ci[0] > 1.0, "both slower than the best: {c:?}");
        }
        assert!(
            notes.iter().any(|n| n.contains("search session")),
            "{notes:?}"
        );
        // Without a search, every cell against the first, n=2 included.
        let plain = "cmdscope run -P n 1 4 'sleep {n}'";
        let (cmp, _) = compare(None, plain, "run", Some("interleaved"), &cells);
        assert_eq!(cmp.len(), 3);
        assert_eq!(cmp[0].baseline, "n=1");
    }

    fn cell(name: &str, times: &[f64], timed_out: &[usize]) -> CellData {
        let samples = times
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let mut s = Sample::new(k as u64);
                s.set(Metric::WallTime, t);
                s.exit_code = Some(0);
                s.timed_out = timed_out.contains(&k);
                s
            })
            .collect::<Vec<_>>();
        let times: Vec<f64> = samples
            .iter()
            .filter(|s| s.counts())
            .filter_map(|s| s.get(Metric::WallTime))
            .collect();
        CellData {
            name: name.into(),
            command: name.into(),
            parameters: vec![],
            figures: crate::analysis::StoredCellFigures::of(&times, &samples, &[]),
            times,
            samples,
            monitor: vec![],
        }
    }

    /// n values around `center` with multiplicative noise of `sigma`.
    fn noisy(rng: &mut ChaCha8Rng, center: f64, sigma: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| center * (1.0 + sigma * (rng.random::<f64>() - 0.5) * 3.46))
            .collect()
    }

    fn dataset(source: &str, values: &[f64]) -> Dataset {
        Dataset {
            source: source.into(),
            format: "cmdscope".into(),
            rss_floor: None,
            benchmarks: vec![Benchmark {
                name: "x".into(),
                parameters: vec![],
                series: vec![Series {
                    metric: "time_wall_clock".into(),
                    unit: "s".into(),
                    higher_is_better: false,
                    exact: false,
                    values: values.to_vec(),
                }],
            }],
        }
    }

    /// What, baseline, candidate, expected verdict, fails a 5 % gate.
    type Case = (&'static str, Vec<f64>, Vec<f64>, Verdict, bool);

    #[test]
    fn a_sweeps_set_is_the_sweep_tables_set_on_the_stored_runs() {
        // Medians 10, 5, 5.02, 8, 12 ms with ±1 % noise: 2 and 3 are as
        // good (0.4 % apart), the rest clearly worse.
        let line = "cmdscope run -P b 1 5 'sleep {b}'";
        let args = run_args(line).unwrap();
        let (planned, _) = crate::cli::cells::plan_cells(&args).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        let cells: Vec<CellData> = planned
            .iter()
            .zip([10.0, 5.0, 5.02, 8.0, 12.0])
            .map(|(p, ms)| cell(&p.name, &noisy(&mut rng, ms / 1e3, 0.01, 30), &[]))
            .collect();
        let (comparisons, _) = compare(None, line, "run", Some("interleaved"), &cells);
        let set = sweep_set(line, Some("interleaved"), None, &cells, &comparisons).unwrap();
        assert_eq!(set.parameter, "b");
        assert_eq!(set.ranges, vec![(2.0, 3.0)]);
        // A search's set is its race's, not replayed from the runs: without
        // its stored answer (a store older than the answer's column), no
        // shading.
        let searched = "cmdscope run -P b 1 5 --minimize b 'sleep {b}'";
        assert_eq!(
            sweep_set(searched, Some("interleaved"), None, &cells, &comparisons),
            None
        );
        // With it, the stored set is shaded, whatever the runs say:
        // neighbours among the tried values (1, 2, 4, 5) form one range.
        let b = |v: &str| vec![("b".to_string(), v.to_string())];
        let stored = StoredSearch {
            parameters: vec!["b".into()],
            metric: "time_wall_clock".into(),
            compared: "time_wall_clock".into(),
            maximize: false,
            best: b("4"),
            as_good: vec![b("1"), b("4"), b("5")],
            values_tried: vec![b("1"), b("2"), b("4"), b("5")],
            runs: 30,
            grid_runs: 50,
        };
        let set = sweep_set(
            searched,
            Some("interleaved"),
            Some(&stored),
            &cells,
            &comparisons,
        )
        .unwrap();
        assert_eq!(set.parameter, "b");
        assert_eq!(set.ranges, vec![(1.0, 1.0), (4.0, 5.0)]);
        // The curve is of wall time: another metric's set is not shaded on
        // it, nor a set over two parameters.
        let memory = StoredSearch {
            metric: "memory_peak_resident".into(),
            ..stored.clone()
        };
        assert_eq!(
            sweep_set(searched, None, Some(&memory), &cells, &comparisons),
            None
        );
        let two = StoredSearch {
            parameters: vec!["b".into(), "c".into()],
            ..stored
        };
        assert_eq!(
            sweep_set(searched, None, Some(&two), &cells, &comparisons),
            None
        );
    }

    #[test]
    fn compare_check_and_report_agree_on_a_table_of_inputs() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let r = &mut rng;
        // (what, baseline, candidate, expected verdict, fails a 5 % gate)
        let table: Vec<Case> = vec![
            (
                "identical noise",
                noisy(r, 0.1, 0.03, 12),
                noisy(r, 0.1, 0.03, 12),
                Verdict::Inconclusive,
                false,
            ),
            (
                "30 % slower",
                noisy(r, 0.1, 0.02, 12),
                noisy(r, 0.13, 0.02, 12),
                Verdict::Slower,
                true,
            ),
            (
                "3 % slower, tight",
                noisy(r, 0.1, 0.004, 12),
                noisy(r, 0.103, 0.004, 12),
                Verdict::Slower,
                false,
            ),
            (
                "20 % faster",
                noisy(r, 0.1, 0.02, 12),
                noisy(r, 0.08, 0.02, 12),
                Verdict::Faster,
                false,
            ),
            (
                "2x at 4 runs (Welch's t)",
                noisy(r, 0.1, 0.02, 4),
                noisy(r, 0.2, 0.02, 4),
                Verdict::Slower,
                true,
            ),
            (
                "two runs",
                vec![0.1, 0.11],
                vec![0.2, 0.21],
                Verdict::Inconclusive,
                false,
            ),
            (
                "from an all-zero baseline",
                vec![0.0; 8],
                noisy(r, 0.001, 0.1, 8),
                Verdict::Slower,
                true,
            ),
        ];
        // The same runs twice, with little noise: equal within ±1 %.
        let tight = noisy(r, 0.1, 0.0005, 20);
        let mut table = table;
        table.push((
            "equal within 1 %",
            tight.clone(),
            tight,
            Verdict::NoDifference,
            false,
        ));
        for (what, base, cand, expected, fails) in &table {
            let out = crate::analysis::tables::build(
                &[dataset("a", base), dataset("b", cand)],
                &CompareOptions {
                    fail_if_slower: Some(5.0),
                    ..CompareOptions::default()
                },
            );
            let by_compare = out.tables[0].rows[0].comparisons[1].clone().unwrap();
            let by_check = check::compare(
                &[check::Pair {
                    name: "x".into(),
                    measure: check::Measure::WALL_TIME,
                    sides: (
                        crate::analysis::gate::Side::of(0),
                        crate::analysis::gate::Side::of(0),
                    ),
                    base: base.clone(),
                    cand: cand.clone(),
                    history: None,
                    precision: crate::analysis::comparison::DEFAULT_PRECISION,
                }],
                0.05,
                5.0,
            )
            .remove(0);
            // The report compares cells of one session; run in sequential
            // order its runs are unpaired too.
            let (by_report, _) = compare(
                None,
                "cmdscope run --order sequential a b",
                "run",
                Some("sequential"),
                &[cell("a", base, &[]), cell("b", cand, &[])],
            );
            let by_report = &by_report[0];
            let v = by_compare.result.verdict;
            assert_eq!(v, *expected, "{what}: {:?}", by_compare.result);
            assert_eq!(by_check.result.verdict, v, "{what}");
            assert_eq!(by_report.verdict, v, "{what}");
            // One analysis: the same p-value and interval everywhere.
            for other in [&by_check.result, by_report] {
                let same = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
                assert!(same(other.p_value, by_compare.result.p_value), "{what}");
                assert!(
                    same(other.ratio_ci[0], by_compare.result.ratio_ci[0]),
                    "{what}"
                );
                assert!(
                    same(other.ratio_ci[1], by_compare.result.ratio_ci[1]),
                    "{what}"
                );
            }
            assert_eq!(by_compare.gate_failed, *fails, "{what}: compare's gate");
            assert_eq!(by_check.regression, *fails, "{what}: check's gate");
        }
    }

    #[test]
    fn sequential_looks_pair_by_block_past_a_timed_out_run() {
        // Block effects alternate 1x and 3x; b is 5 % slower than a in
        // every block and timed out in block 3. Paired by block, every
        // ratio is 1.05; dropping b's timed-out run per command would pair
        // 1x blocks with 3x blocks from there on.
        let a: Vec<f64> = (0..20)
            .map(|k| (if k % 2 == 0 { 0.01 } else { 0.03 }) * (1.0 + 0.0001 * (k % 7) as f64))
            .collect();
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(k, v)| v * 1.05 * (1.0 + 0.0001 * (k % 5) as f64))
            .collect();
        let (a, b) = (cell("a", &a, &[]), cell("b", &b, &[3]));
        let mut seq = Sequential::new(0.05, 0.01);
        let prefix = |n: usize| [&a.samples[..n], &b.samples[..n]];
        assert!(seq.is_look(10));
        assert!(
            !seq.look_runs(&prefix(10), 0),
            "the first look is unreachable"
        );
        assert!(seq.is_look(20));
        assert!(seq.look_runs(&prefix(20), 0), "19 aligned pairs settle it");
        assert_eq!(seq.looks_made(), 1);
    }

    #[test]
    fn report_uses_the_sessions_settings_and_pairs_by_block() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        // A strong drift shared by every block: only block pairing sees
        // the 2 % difference; a shift by one block would blur it.
        let drift: Vec<f64> = (0..12).map(|k| 0.1 * (1.0 + 0.2 * k as f64)).collect();
        let jitter = |rng: &mut ChaCha8Rng, f: f64| -> Vec<f64> {
            drift
                .iter()
                .map(|d| d * f * (1.0 + 0.001 * (rng.random::<f64>() - 0.5)))
                .collect()
        };
        let a = jitter(&mut rng, 1.0);
        let b = jitter(&mut rng, 1.02);
        let c = jitter(&mut rng, 1.0);
        // b timed out in block 3, c in block 7.
        let cells = [cell("a", &a, &[]), cell("b", &b, &[3]), cell("c", &c, &[7])];
        let (cmp, notes) = compare(
            None,
            "cmdscope run --runs 12 --alpha 0.01 --reference c a b c",
            "run",
            Some("interleaved"),
            &cells,
        );
        // Read back from the command line: said once.
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("read back from its command line"),
            "{notes:?}"
        );
        assert_eq!(cmp.len(), 2);
        for x in &cmp {
            assert_eq!(x.baseline, "c", "--reference read back");
            assert_eq!(x.level, 0.005, "--alpha 0.01 over two comparisons");
            assert!(x.paired);
        }
        let vs_a = cmp.iter().find(|x| x.candidate == "a").unwrap();
        let vs_b = cmp.iter().find(|x| x.candidate == "b").unwrap();
        // Only the blocks where that pair's runs both count.
        assert_eq!(vs_a.n, 11);
        assert_eq!(vs_b.n, 10);
        assert_eq!(vs_b.verdict, Verdict::Slower, "{vs_b:?}");
        assert!((vs_b.ratio - 1.02).abs() < 0.002, "{vs_b:?}");

        // Without a readable command line: defaults, said in a note.
        let (cmp, notes) = compare(
            None,
            "not a command line",
            "run",
            Some("interleaved"),
            &cells,
        );
        assert_eq!(cmp[0].baseline, "a");
        assert_eq!(notes.len(), 1, "{notes:?}");
    }
}
