//! Speed of the results store: inserting 1,000,000 runs (samples with the
//! 13 metrics a run without counters has) and producing the HTML report
//! from them, in SQLite and, when `CMDSCOPE_BENCH_PG_URL` names an empty
//! database, PostgreSQL. Also the cost of the per-run commit that
//! `cmdscope run` makes between runs.
//!
//!     cargo run --release --example store_bench [-- RUNS]
//!
//! The million runs are 10 sessions × 4 benchmarks × 25,000 runs, so the
//! report has history to draw as well as a session with 100,000 runs.

use std::time::{Instant, SystemTime};

use cmdscope::metrics::{Metric, Sample};
use cmdscope::store::{Filter, Finish, Location, Machine, NewCell, NewSession, Store};

const METRICS: &[Metric] = &[
    Metric::WallTime,
    Metric::UserTime,
    Metric::SystemTime,
    Metric::CpuTime,
    Metric::PeakRss,
    Metric::MinorFaults,
    Metric::MajorFaults,
    Metric::VoluntaryCtx,
    Metric::InvoluntaryCtx,
    Metric::IoReadBytes,
    Metric::IoWriteBytes,
    Metric::IoReadChars,
    Metric::IoWriteChars,
];

fn sample(i: u64, cell: usize) -> Sample {
    let mut s = Sample::new(i);
    s.exit_code = Some(0);
    // Deterministic noise around a per-cell level.
    let noise = ((i.wrapping_mul(2654435761) % 1000) as f64) / 1000.0;
    let wall = 0.001 * (1.0 + cell as f64) * (1.0 + 0.05 * noise);
    for (k, &m) in METRICS.iter().enumerate() {
        s.set(m, wall * (k as f64 + 1.0) * 1e3);
    }
    s.set(Metric::WallTime, wall);
    s
}

fn bench(location: &Location, total: usize, report_path: &std::path::Path) -> Result<(), String> {
    let e = |x: cmdscope::store::StoreError| x.0;
    let mut store = Store::open(location).map_err(e)?;
    let machine = Machine::current();
    let sessions = 10;
    let cells = 4;
    let per_cell = total / (sessions * cells);
    let batch = 10_000;

    let start = Instant::now();
    for s in 0..sessions {
        let id = store
            .begin_session(&NewSession {
                started: SystemTime::now(),
                source: "bench".into(),
                command_line: "store_bench".into(),
                order: Some("interleaved".into()),
                seed: None,
                shell: None,
                machine: machine.clone(),
                labels: vec![("session".into(), s.to_string())],
                settings: None,
            })
            .map_err(e)?;
        let new: Vec<NewCell> = (0..cells)
            .map(|c| NewCell {
                identity: format!("bench command {c}"),
                name: format!("bench command {c}"),
                command: format!("bench command {c}"),
                parameters: vec![],
                variant: "{}".into(),
            })
            .collect();
        let ids = store.add_cells(id, &new).map_err(e)?;
        for (c, &cell) in ids.iter().enumerate() {
            let mut seq = 0;
            while seq < per_cell {
                let n = batch.min(per_cell - seq);
                let samples: Vec<Sample> = (seq..seq + n)
                    .map(|i| sample((i * cells + c) as u64, c))
                    .collect();
                store.add_runs(cell, seq as i64, &samples).map_err(e)?;
                seq += n;
            }
        }
        store
            .finish_session(
                id,
                &Finish {
                    status: "finished".into(),
                    stop_reason: Some("run_count".into()),
                    shell_overhead: None,
                    preflight: None,
                    outcome: None,
                },
            )
            .map_err(e)?;
    }
    let insert = start.elapsed().as_secs_f64();
    let inserted = sessions * cells * per_cell;
    println!(
        "  insert {inserted} runs ({} values): {insert:.2} s ({:.0} runs/s)",
        inserted * METRICS.len(),
        inserted as f64 / insert
    );

    let start = Instant::now();
    let latest = store
        .sessions(&Filter {
            limit: Some(1),
            ..Filter::default()
        })
        .map_err(e)?
        .into_iter()
        .next()
        .ok_or("no session")?;
    let how = cmdscope::cli::stored::how_run(&latest);
    let data = cmdscope::report::html::gather(&mut store, latest, &how, 50, true)
        .map_err(|x| x.to_string())?;
    let html = cmdscope::report::html::render(&data);
    cmdscope::output::write_file(report_path, html.as_bytes()).map_err(|x| x.to_string())?;
    let report = start.elapsed().as_secs_f64();
    println!(
        "  report (latest session: {} runs; history of {} sessions): {report:.2} s, {} KiB of HTML",
        data.cells.iter().map(|c| c.samples.len()).sum::<usize>(),
        sessions,
        html.len() / 1024
    );

    // The streaming path of `cmdscope run`: one transaction per run.
    let id = store
        .begin_session(&NewSession {
            started: SystemTime::now(),
            source: "bench".into(),
            command_line: "store_bench per-run".into(),
            order: None,
            seed: None,
            shell: None,
            machine,
            labels: vec![],
            settings: None,
        })
        .map_err(e)?;
    let cell = store
        .add_cells(
            id,
            &[NewCell {
                identity: "per-run".into(),
                name: "per-run".into(),
                command: "per-run".into(),
                parameters: vec![],
                variant: "{}".into(),
            }],
        )
        .map_err(e)?[0];
    let n = 2000;
    let start = Instant::now();
    for i in 0..n {
        store
            .add_runs(cell, i as i64, &[sample(i as u64, 0)])
            .map_err(e)?;
    }
    let per = start.elapsed().as_secs_f64() / n as f64;
    println!(
        "  per-run commit (as during `cmdscope run`): {:.0} µs per run",
        per * 1e6
    );
    Ok(())
}

fn main() {
    let total: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(err) => {
            eprintln!("store_bench: cannot create a temporary directory: {err}");
            std::process::exit(2);
        }
    };
    println!("SQLite (file in {}):", dir.path().display());
    let db = dir.path().join("bench.sqlite3");
    if let Err(err) = bench(
        &Location::Sqlite(db.clone()),
        total,
        &dir.path().join("sqlite.html"),
    ) {
        eprintln!("store_bench: {err}");
        std::process::exit(1);
    }
    if let Ok(meta) = std::fs::metadata(&db) {
        println!("  database file: {} MiB", meta.len() / (1 << 20));
    }
    match std::env::var("CMDSCOPE_BENCH_PG_URL") {
        Ok(url) => {
            println!("PostgreSQL ({}):", cmdscope::store::redact(&url));
            if let Err(err) = bench(&Location::Postgres(url), total, &dir.path().join("pg.html")) {
                eprintln!("store_bench: {err}");
                std::process::exit(1);
            }
        }
        Err(_) => println!("PostgreSQL: skipped (set CMDSCOPE_BENCH_PG_URL to an empty database)"),
    }
}
