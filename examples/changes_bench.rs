//! Speed of change detection and of the static site: 10,000 sessions ×
//! 100 benchmarks × 10 runs (10 million run values), each history with a
//! few steps, a drift and outlier sessions.
//!
//!     cargo run --release --example changes_bench [-- SESSIONS BENCHMARKS RUNS [store]]
//!     CHANGES_BENCH_DB=/tmp/b10k.db cargo run --release --example changes_bench -- 10000 100 10 changes
//!
//! Stages: detection (`cmdscope changes`' analysis of every history), the
//! site (rendering every page, then writing them), and with `store` also
//! reading the histories from an SQLite store filled with the same runs
//! (filling it is not timed; it takes a while at full size).
//!
//! `changes` does only what `cmdscope changes` does with the store
//! (`CHANGES_BENCH_DB`, a PostgreSQL URL or an SQLite file, filled first
//! when it does not exist): read and analyse every history, one benchmark
//! at a time. It prints its time and this process's peak resident memory
//! (getrusage), which nothing else in the process inflates.

use std::time::Instant;

use cmdscope::analysis::changes::{analyse, Params};
use cmdscope::metrics::Metric;
use cmdscope::store::history::{self, History, Point, Query, SessionRef};
use cmdscope::store::{Location, NewCell, Store};

#[path = "common/point_store.rs"]
mod point_store;
use point_store::{point_session, run};

/// Deterministic noise in [-1, 1) from two integers.
fn noise(a: u64, b: u64) -> f64 {
    let mut x = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// Run `r` of session `s` of benchmark `b`: steps at 30 % and 70 % of the
/// history, a slow drift, an outlier session every 997.
fn run_value(b: usize, s: usize, r: usize, sessions: usize) -> f64 {
    let mut level = 0.01 * (1.0 + b as f64 % 7.0);
    if s >= sessions * 3 / 10 {
        level *= 1.10;
    }
    if s >= sessions * 7 / 10 {
        level *= 0.95;
    }
    level *= 1.0 + 0.02 * s as f64 / sessions as f64;
    if s % 997 == 500 {
        level *= 1.3;
    }
    let session = 0.01 * noise(b as u64, s as u64);
    let run = 0.03 * noise((b * 100_000 + s) as u64, r as u64);
    level * (1.0 + session) * (1.0 + run)
}

fn histories(sessions: usize, benchmarks: usize, runs: usize) -> Vec<History> {
    (0..benchmarks)
        .map(|b| History {
            benchmark: format!("benchmark {b:03}"),
            metric: Metric::WallTime.name().into(),
            fingerprint: "0123456789abcdef".into(),
            hostname: "bench".into(),
            points: (0..sessions)
                .map(|s| Point {
                    sessions: vec![std::sync::Arc::new(SessionRef {
                        id: s as i64 + 1,
                        started: format!("2026-01-01T00:00:{s:05}Z"),
                        started_unix: 1.7e9 + s as f64 * 600.0,
                        labels: vec![("commit".into(), format!("c{s}"))],
                        search: None,
                    })],
                    key: None,
                    runs: (0..runs).map(|r| run_value(b, s, r, sessions)).collect(),
                })
                .collect(),
        })
        .collect()
}

fn fill(store: &mut Store, sessions: usize, benchmarks: usize, runs: usize) -> Result<(), String> {
    let cells: Vec<NewCell> = (0..benchmarks)
        .map(|b| NewCell {
            identity: format!("benchmark {b:03}"),
            name: format!("benchmark {b:03}"),
            command: format!("bench {b}"),
            parameters: Vec::new(),
            variant: "{}".into(),
        })
        .collect();
    for s in 0..sessions {
        point_session(
            store,
            s,
            ("commit", format!("c{s}")),
            "changes_bench",
            &cells,
            |b| {
                (0..runs)
                    .map(|r| run(r as u64, run_value(b, s, r, sessions)))
                    .collect()
            },
        )?;
    }
    Ok(())
}

/// This process's peak resident memory so far, in MiB.
fn peak_mib() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as f64 / 1024.0
}

/// `cmdscope changes` over a store: its reading and analysis, timed, with
/// the peak memory they took.
fn changes(sessions: usize, benchmarks: usize, runs: usize) {
    let Some(db) = std::env::var_os("CHANGES_BENCH_DB") else {
        eprintln!("changes_bench: set CHANGES_BENCH_DB to an SQLite file or a PostgreSQL URL");
        std::process::exit(2);
    };
    let location = Location::parse(&db.to_string_lossy()).expect("a store location");
    let fresh = match &location {
        Location::Sqlite(path) => !path.exists(),
        _ => std::env::var_os("CHANGES_BENCH_FILL").is_some(),
    };
    let mut store = Store::open(&location).expect("open store");
    if fresh {
        let t = Instant::now();
        if let Err(e) = fill(&mut store, sessions, benchmarks, runs) {
            eprintln!("changes_bench: {e}");
            std::process::exit(1);
        }
        println!(
            "  store fill (not part of changes): {:.1} s",
            t.elapsed().as_secs_f64()
        );
        // The fill's own memory must not count: measure in a new process.
        drop(store);
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args(std::env::args().skip(1))
            .env_remove("CHANGES_BENCH_FILL")
            .status()
            .expect("rerun");
        std::process::exit(status.code().unwrap_or(1));
    }
    let before = peak_mib();
    let t = Instant::now();
    let params = cmdscope::commands::changes::params(Params::default().alpha).expect("params");
    let analysed = cmdscope::commands::changes::analysed(&mut store, &Query::default(), &params)
        .expect("changes");
    let shifts = cmdscope::analysis::changes::machine_shifts(&analysed);
    let json = cmdscope::report::changes::json(&analysed, &shifts);
    let changes: usize = analysed.iter().map(|a| a.changes.len()).sum();
    println!(
        "  changes (read, detect, JSON): {:.2} s, {} histories, {changes} change points, {} KiB of JSON",
        t.elapsed().as_secs_f64(),
        analysed.len(),
        json.len() >> 10
    );
    println!(
        "  peak resident memory: {:.0} MiB (before reading: {before:.0} MiB)",
        peak_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (sessions, benchmarks, runs) = (num(0, 10_000), num(1, 100), num(2, 10));
    println!("{sessions} sessions × {benchmarks} benchmarks × {runs} runs");
    if args.get(3).map(String::as_str) == Some("changes") {
        changes(sessions, benchmarks, runs);
        return;
    }

    let t = Instant::now();
    let all = histories(sessions, benchmarks, runs);
    println!("  generate:  {:.2} s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let analysed = analyse(all, &Params::default());
    let changes: usize = analysed.iter().map(|a| a.changes.len()).sum();
    println!(
        "  detection: {:.2} s ({changes} change points, {:.1} per benchmark)",
        t.elapsed().as_secs_f64(),
        changes as f64 / benchmarks as f64
    );

    let dir = tempfile::tempdir().expect("temporary directory");
    let t = Instant::now();
    let shifts = cmdscope::analysis::changes::machine_shifts(&analysed);
    let files = cmdscope::report::site::render(&analysed, &[], &shifts, "bench");
    let render = t.elapsed().as_secs_f64();
    let bytes: usize = files.iter().map(|(_, c)| c.len()).sum();
    for (name, content) in &files {
        std::fs::write(dir.path().join(name), content).expect("write page");
    }
    println!(
        "  site:      {render:.2} s to render, {:.2} s with writing ({} files, {} MiB)",
        t.elapsed().as_secs_f64(),
        files.len(),
        bytes >> 20
    );

    if args.get(3).map(String::as_str) == Some("store") {
        // CHANGES_BENCH_DB keeps the store (and reuses it when it exists).
        let db = std::env::var_os("CHANGES_BENCH_DB")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| dir.path().join("changes.sqlite3"));
        let existed = db.exists();
        let mut store = Store::open(&Location::Sqlite(db)).expect("open store");
        if !existed {
            let t = Instant::now();
            if let Err(e) = fill(&mut store, sessions, benchmarks, runs) {
                eprintln!("changes_bench: {e}");
                std::process::exit(1);
            }
            println!(
                "  store fill (not part of changes): {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
        let t = Instant::now();
        let listed = store
            .sessions(&cmdscope::store::Filter::default())
            .expect("sessions");
        println!(
            "  store sessions and cells alone: {:.2} s ({} sessions)",
            t.elapsed().as_secs_f64(),
            listed.len()
        );
        let t = Instant::now();
        let loaded = history::load(&mut store, &Query::default()).expect("load");
        println!(
            "  store read: {:.2} s ({} histories)",
            t.elapsed().as_secs_f64(),
            loaded.len()
        );
    }
}
