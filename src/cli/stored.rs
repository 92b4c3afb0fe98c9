//! How a stored session was run, for the readers of the store (`report`,
//! `check`): its stored settings, or for a session stored before they
//! were kept (store schema 5 and older), its command line parsed again by
//! [`run_args`], the one place a stored command line is re-parsed (for
//! [`read_back`]'s answers and [`settings_read_back`]'s settings). And a
//! stored session loaded back whole ([`replay`]): the settings and the
//! session `run` held (a search's raced again on its stored runs), for
//! the analysis and renderers `run` uses.

use crate::analysis::source::MONITOR_PREFIX;
use crate::analysis::stored::{HowRun, ReadBack, SweepPlan};
use crate::cli::run::RunArgs;
use crate::cli::{Cli, Command};
use crate::error::{Error, Result, SearchError, StoreQueryError};
use crate::metrics::Metric;
use crate::monitor::Counts;
use crate::run::plan::Cell;
use crate::run::schedule::{Order, RunPolicy};
use crate::run::session::Session;
use crate::run::settings::{SearchGoal, Settings};
use crate::search::SearchResult;
use crate::store::{Store, StoredSession};

/// A stored session as `run` held it: what it was run with and its
/// session, ready for `run`'s analysis; for a
/// search session, its search's result and the grid's cells it names.
pub struct Replayed {
    pub settings: Settings,
    pub session: Session,
    pub search: Option<(SearchResult, Vec<Cell>)>,
    /// A monitored session's counts, as the live monitor held them.
    pub monitor: Option<Counts>,
}

/// Loads `stored` back (the caller checks damaged settings first,
/// `commands::checked_settings`). A search session is raced again on its
/// stored runs by its stored race (`search::replayed`), as it ran; one
/// stored before its race was kept (store schema 8 and older) is
/// refused. A monitored session gets its counts back
/// (`monitor::replayed`), with the monitor its settings keep and its end
/// its outcome keeps (a search's race reads them as it read the live
/// monitor's); one stored before its settings kept the monitor is
/// refused: the store kept its counts, not the monitor. A session stored
/// before its outcome was kept (store
/// schema 7 and older) is tested at the level its looks left, replayed on
/// its runs; one stored before its settings were, with the settings its
/// command line gives today ([`settings_read_back`]).
pub fn replay(store: &mut Store, stored: &StoredSession) -> Result<Replayed> {
    let settings = (stored.settings.clone()).unwrap_or_else(|| settings_read_back(stored));
    let place = |store: &Store| -> (String, i64) { (store.location().into(), stored.id) };
    let searched = stored.search.is_some() || settings.searched();
    if searched && stored.race.is_none() {
        let (store, session) = place(store);
        return Err(match stored.race_error.clone() {
            Some(why) => StoreQueryError::BadRace {
                store,
                session,
                why,
            },
            None => StoreQueryError::RaceNotKept { store, session },
        }
        .into());
    }
    let mut counted = Vec::with_capacity(stored.cells.len());
    for c in &stored.cells {
        counted.push(store.extra_series(c.id)?);
    }
    let watched = (counted.iter().flatten()).any(|s| s.metric.starts_with(MONITOR_PREFIX));
    if watched && settings.monitor.is_none() {
        let (store, session) = place(store);
        return Err(StoreQueryError::NotReplayed {
            store,
            session,
            what: "was watched by a monitor (its command, patterns and end)".into(),
        }
        .into());
    }
    let mut session = crate::store::replay::session(store, stored)?;
    let ended = (stored.outcome.as_ref()).and_then(|o| o.monitor_ended.clone());
    // By stored cell: a search's by grid value, as the race reads them.
    let mut monitor =
        (settings.monitor.as_ref()).map(|w| crate::monitor::replayed(w, &session, &counted, ended));
    if let (true, Some(race)) = (searched, stored.race.as_ref()) {
        let source = crate::monitor::metric_source(&settings, monitor.as_ref())?;
        let maximize = (settings.search.as_ref().map(|g| g.maximize))
            .or(stored.search.as_ref().map(|s| s.maximize))
            .unwrap_or(false);
        let opts = crate::search::options_of(race, source, maximize);
        let cells: Vec<Cell> = session.results.iter().map(|r| r.cell.clone()).collect();
        if session.failure.is_none() && stored.status == "interrupted" {
            session.failure = Some(Error::Interrupted);
        }
        let series = (monitor.as_ref()).map(|c| c as &dyn crate::analysis::source::RunSeries);
        let mut result =
            crate::search::replayed(session, &settings.parameters, &opts, &race.rounds, series)
                .map_err(|e| match e {
                    Error::Search(SearchError::StoredRaceDiffers { round }) => {
                        let (store, session) = place(store);
                        StoreQueryError::RaceDiffers {
                            store,
                            session,
                            round,
                        }
                        .into()
                    }
                    e => e,
                })?;
        let session = crate::search::as_session(&mut result, &cells);
        // The report's session holds the tried values, as `run`'s does.
        if let Some(c) = monitor.as_mut() {
            c.select(&result.tried);
        }
        return Ok(Replayed {
            settings,
            session,
            search: Some((result, cells)),
            monitor,
        });
    }
    if stored.settings.is_none() {
        session.reference = settings.reference;
        session.alpha = settings.alpha;
        session.final_alpha = settings.alpha;
    }
    if stored.outcome.is_none() && settings.looks && session.order == Order::Interleaved {
        if let Some(p) = settings.precision {
            let samples: Vec<&[crate::metrics::Sample]> = session
                .results
                .iter()
                .map(|r| r.samples.as_slice())
                .collect();
            session.final_alpha = crate::analysis::sequential::replay_runs(
                &samples,
                session.reference,
                settings.alpha,
                p,
                settings.until_decided,
            );
        }
    }
    Ok(Replayed {
        settings,
        session,
        search: None,
        monitor,
    })
}

/// The settings of a session stored without them: its command line parsed
/// again as today's `run` parses it, so with today's defaults; the
/// defaults when it no longer parses or is not a `run` (imports). No
/// cells: the stored cells name themselves.
pub fn settings_read_back(session: &StoredSession) -> Settings {
    let how = read_back(session);
    let order = match session.order.as_deref() {
        Some("sequential") => Order::Sequential,
        _ => Order::Interleaved,
    };
    let mut s = Settings {
        benchmark: None,
        cells: Vec::new(),
        order,
        policy: RunPolicy::default(),
        warmup: 0,
        timeout: None,
        alpha: how.alpha,
        precision: how.precision,
        looks: how.looks,
        until_decided: how.until_decided,
        reference: how.reference.unwrap_or(0),
        named_reference: how.reference.is_some(),
        metric: Metric::WallTime.name().to_string(),
        search: None,
        shell: None,
        exports: Vec::new(),
        simulate: None,
        counted: None,
        remove_outliers: false,
        parameters: Vec::new(),
        commands: Vec::new(),
        monitor: None,
    };
    if let Some(a) = run_args(&session.command_line) {
        s.warmup = a.measure.warmup;
        s.timeout = a.measure.timeout;
        s.metric = a.measure.metric.clone();
        s.remove_outliers = a.measure.remove_outliers;
        s.search = (a.measure.minimize.as_ref())
            .or(a.measure.maximize.as_ref())
            .map(|p| SearchGoal {
                maximize: a.measure.maximize.is_some(),
                parameters: p.clone(),
            });
        s.commands = (a.commands.iter())
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let mut planned = a;
        // Planning with --time-unit would force the report's units.
        planned.report.time_unit = None;
        if let Ok((_, parameters)) = crate::cli::cells::plan_cells(&planned) {
            s.parameters = parameters;
        }
    }
    s
}

/// How `session` was run: its stored settings when it has them (the
/// caller checks damaged ones first, `commands::checked_settings`), else
/// [`read_back`].
pub fn how_run(session: &StoredSession) -> HowRun {
    match session.settings.as_ref() {
        Some(s) => HowRun::stored(s),
        None => read_back(session),
    }
}

/// For a session stored without its settings: its command line parsed
/// again as today's `run` parses it, so with today's defaults, and marked
/// as read back (the report says so for a `run` session); the defaults
/// when it no longer parses or is not a `run` (imports).
pub fn read_back(session: &StoredSession) -> HowRun {
    let is_run = session.source == "run";
    let Some(a) = run_args(&session.command_line) else {
        return HowRun::defaults(is_run.then_some(ReadBack::Defaults));
    };
    let searched = a.measure.minimize.is_some() || a.measure.maximize.is_some();
    // As `run` decides: a precision unless --runs alone fixed the count.
    let precision = match (a.measure.precision, a.measure.runs) {
        (Some(p), _) => Some(p / 100.0),
        (None, Some(_)) => None,
        (None, None) => Some(crate::analysis::comparison::DEFAULT_PRECISION),
    };
    let reference = a
        .measure
        .reference
        .as_deref()
        .or(a.measure.reference_name.as_deref())
        .and_then(|name| {
            (session.cells)
                .iter()
                .position(|c| c.name == name || c.command == name)
        });
    HowRun {
        alpha: a.measure.alpha,
        precision,
        reference,
        looks: a.measure.order != Some(Order::Sequential)
            && is_run
            && !searched
            && precision.is_some(),
        until_decided: a.until_decided,
        searched,
        concurrent: vec![a.measure.concurrency.is_some(); session.cells.len()],
        sweep: sweep_plan(a),
        read_back: is_run.then_some(ReadBack::CommandLine),
    }
}

/// A sweep of one parameter of one command by wall time, planned again.
fn sweep_plan(mut args: RunArgs) -> Option<SweepPlan> {
    // Planning with --time-unit would force the report's units: not ours to set.
    args.report.time_unit = None;
    if args.commands.len() != 1
        || args.measure.minimize.is_some()
        || args.measure.maximize.is_some()
        || Metric::from_name(&args.measure.metric) != Some(Metric::WallTime)
    {
        return None;
    }
    let (cells, parameters) = crate::cli::cells::plan_cells(&args).ok()?;
    Some(SweepPlan {
        cells,
        parameters,
        command: args.commands[0].to_string_lossy().into_owned(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::check;
    use crate::analysis::comparison::Test;
    use crate::analysis::comparison::Verdict;
    use crate::analysis::sequential::Sequential;
    use crate::analysis::stored::{as_good, compare as compare_stored, StoredNote};
    use crate::analysis::tables::CompareOptions;
    use crate::import::dataset::{Benchmark, Dataset, Series};
    use crate::metrics::Metric;
    use crate::metrics::Sample;
    use crate::report::html::{stored_runs, CellData};
    use crate::store::StoredSearch;
    use crate::store::{StoredCell, StoredSession};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A `run` session stored without settings, of these cells.
    fn legacy(line: &str, cells: &[CellData]) -> HowRun {
        read_back(&StoredSession {
            source: "run".into(),
            command_line: line.into(),
            cells: cells
                .iter()
                .map(|c| StoredCell {
                    id: 0,
                    position: 0,
                    identity: String::new(),
                    name: c.name.clone(),
                    command: c.command.clone(),
                    parameters: Vec::new(),
                    variant: String::new(),
                    runs: 0,
                })
                .collect(),
            ..StoredSession::default()
        })
    }

    fn compare(
        line: &str,
        order: Option<&str>,
        cells: &[CellData],
    ) -> (
        Vec<crate::analysis::comparison::Comparison>,
        Vec<StoredNote>,
    ) {
        compare_stored(&legacy(line, cells), order, &stored_runs(cells), None, None)
    }

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
        let (cmp, notes) = compare_stored(
            &legacy(line, &cells),
            Some("interleaved"),
            &stored_runs(&cells),
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
        assert!(notes.contains(&StoredNote::Searched), "{notes:?}");
        // Without a search, every cell against the first, n=2 included.
        let plain = "cmdscope run -P n 1 4 'sleep {n}'";
        let (cmp, _) = compare(plain, Some("interleaved"), &cells);
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
        let (comparisons, _) = compare(line, Some("interleaved"), &cells);
        let runs = stored_runs(&cells);
        let set = as_good(
            &legacy(line, &cells),
            Some("interleaved"),
            None,
            &runs,
            &comparisons,
        )
        .unwrap();
        assert_eq!(set.parameter, "b");
        assert_eq!(set.ranges, vec![(2.0, 3.0)]);
        // A search's set is its race's, not replayed from the runs: without
        // its stored answer (a store older than the answer's column), no
        // shading.
        let searched = "cmdscope run -P b 1 5 --minimize b 'sleep {b}'";
        let how = legacy(searched, &cells);
        assert_eq!(
            as_good(&how, Some("interleaved"), None, &runs, &comparisons),
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
        let set = as_good(
            &how,
            Some("interleaved"),
            Some(&stored),
            &runs,
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
            as_good(&how, None, Some(&memory), &runs, &comparisons),
            None
        );
        let two = StoredSearch {
            parameters: vec!["b".into(), "c".into()],
            ..stored
        };
        assert_eq!(as_good(&how, None, Some(&two), &runs, &comparisons), None);
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
                "cmdscope run --order sequential a b",
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
            "cmdscope run --runs 12 --alpha 0.01 --reference c a b c",
            Some("interleaved"),
            &cells,
        );
        // Read back from the command line: said once.
        assert_eq!(notes, [StoredNote::ReadBack(ReadBack::CommandLine)]);
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
        let (cmp, notes) = compare("not a command line", Some("interleaved"), &cells);
        assert_eq!(cmp[0].baseline, "a");
        assert_eq!(notes, [StoredNote::ReadBack(ReadBack::Defaults)]);
    }
}
