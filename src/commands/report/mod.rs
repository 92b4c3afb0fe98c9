//! `cmdscope report`: gathers a session, its comparisons and its
//! benchmarks' history from the store and writes the HTML report.
//!
//! [`decided`] reads back how a session was run, [`comparisons`] compares
//! its cells as `run` did, [`concurrency`] rebuilds a concurrency-mode
//! session, [`sweep`] a sweep's or search's set as good as the best.

mod comparisons;
mod concurrency;
mod decided;
mod sweep;

use crate::cli::store::ReportArgs;
use crate::error::{exit, Result};
use crate::output::Named;
use crate::report::html::{self, CellData, ReportData};
use crate::store::history::time_values;
use crate::store::record::{check_outputs, open_read_only};
use crate::store::{Filter, Store, StoredSession};
pub use comparisons::{compare, compare_session};
pub use concurrency::stored_concurrency;
pub use decided::{levels, ran_concurrently};
pub use sweep::sweep_set;

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

#[cfg(test)]
mod tests {
    use super::decided::run_args;
    use super::*;
    use crate::analysis::check;
    use crate::analysis::comparison::Test;
    use crate::analysis::comparison::Verdict;
    use crate::analysis::sequential::Sequential;
    use crate::analysis::tables::CompareOptions;
    use crate::import::dataset::{Benchmark, Dataset, Series};
    use crate::metrics::Metric;
    use crate::metrics::Sample;
    use crate::store::StoredSearch;
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
