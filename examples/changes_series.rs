//! The seeded series of `analysis::changes::simulated` (every kind: steady,
//! one step, two steps, staircase, drift, outlier sessions, bimodal,
//! episodes, a machine-wide shift), written where other tools can read
//! them, and the score of any detector's answer on them.
//!
//!     cargo run --release --example changes_series -- write DIR [SEED]
//!     cargo run --release --example changes_series -- score NAME ANSWERS [SEED]
//!
//! `write` makes DIR/store.sqlite3 (one session per point, each series a
//! benchmark of one machine, sessions labelled `point=<index>`; a series
//! is a benchmark named after it) and DIR/csv/<i>.csv (one row per
//! session: its time and the median of its runs, for tools that take one
//! value per point). `score` reads ANSWERS, lines of
//! `<series index> change <point>` or `<series index> episode <first> <last>`
//! (points from 0), and prints the score table of `simulated::score`.

use std::time::{Duration, SystemTime};

use cmdscope::analysis::changes::simulated::{self, Detected};
use cmdscope::metrics::{Metric, Sample};
use cmdscope::store::{Finish, Location, Machine, NewCell, NewSession, Store};

fn write(dir: &std::path::Path, seed: u64) -> Result<(), String> {
    let all = simulated::suite(seed);
    std::fs::create_dir_all(dir.join("csv")).map_err(|e| e.to_string())?;
    let db = dir.join("store.sqlite3");
    let _ = std::fs::remove_file(&db);
    let mut store = Store::open(&Location::Sqlite(db)).map_err(|e| e.0)?;
    let cells: Vec<NewCell> = (0..all.len())
        .map(|i| NewCell {
            identity: format!("series {i:03}"),
            name: format!("series {i:03}"),
            command: all[i].name.clone(),
            parameters: Vec::new(),
            variant: "{}".into(),
        })
        .collect();
    let t0 = 1_700_000_000u64;
    for s in 0..simulated::SESSIONS {
        let id = store
            .begin_session(&NewSession {
                started: SystemTime::UNIX_EPOCH + Duration::from_secs(t0 + s as u64 * 600),
                source: "run".into(),
                command_line: "changes_series".into(),
                order: None,
                seed: None,
                shell: None,
                machine: Machine::current(),
                labels: vec![("point".into(), s.to_string())],
                settings: None,
            })
            .map_err(|e| e.0)?;
        let ids = store.add_cells(id, &cells).map_err(|e| e.0)?;
        for (cell, series) in ids.iter().zip(&all) {
            let samples: Vec<Sample> = series.sessions[s]
                .iter()
                .enumerate()
                .map(|(r, &v)| {
                    let mut x = Sample::new(r as u64);
                    x.exit_code = Some(0);
                    x.set(Metric::WallTime, v);
                    x
                })
                .collect();
            store.add_runs(*cell, 0, &samples).map_err(|e| e.0)?;
        }
        store
            .finish_session(
                id,
                &Finish {
                    status: "finished".into(),
                    stop_reason: None,
                    shell_overhead: None,
                    preflight: None,
                },
            )
            .map_err(|e| e.0)?;
    }
    for (i, series) in all.iter().enumerate() {
        let mut csv = String::from("time,value\n");
        for (s, runs) in series.sessions.iter().enumerate() {
            let m = cmdscope::stats::median_finite(runs).unwrap_or(f64::NAN);
            // One day apart: readers that parse dates need distinct ones.
            csv.push_str(&format!(
                "{},{m}\n",
                humantime::format_rfc3339_seconds(
                    SystemTime::UNIX_EPOCH + Duration::from_secs(t0 + s as u64 * 86_400)
                )
            ));
        }
        std::fs::write(dir.join("csv").join(format!("{i}.csv")), csv).map_err(|e| e.to_string())?;
    }
    println!(
        "{} series × {} sessions × {} runs in {}",
        all.len(),
        simulated::SESSIONS,
        simulated::RUNS,
        dir.display()
    );
    Ok(())
}

fn score(name: &str, answers: &std::path::Path, seed: u64) -> Result<(), String> {
    let all = simulated::suite(seed);
    let mut found = vec![Detected::default(); all.len()];
    let text = std::fs::read_to_string(answers).map_err(|e| e.to_string())?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |k: usize| -> Result<usize, String> {
            w.get(k)
                .and_then(|x| x.parse().ok())
                .ok_or_else(|| format!("bad answer line: {line}"))
        };
        let d = found
            .get_mut(num(0)?)
            .ok_or_else(|| format!("no such series: {line}"))?;
        match w.get(1).copied() {
            Some("change") => d.changes.push(num(2)?),
            Some("episode") => d.episodes.push((num(2)?, num(3)?)),
            _ => return Err(format!("bad answer line: {line}")),
        }
    }
    let (rows, total) = simulated::score(&all, &found);
    print!("{}", simulated::table(name, &rows, &total));
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seed = |k: usize| args.get(k).and_then(|s| s.parse().ok()).unwrap_or(1);
    let r = match (args.first().map(String::as_str), args.len()) {
        (Some("write"), 2..=3) => write(std::path::Path::new(&args[1]), seed(2)),
        (Some("score"), 3..=4) => score(&args[1], std::path::Path::new(&args[2]), seed(3)),
        _ => Err("usage: changes_series write DIR [SEED] | score NAME ANSWERS [SEED]".into()),
    };
    if let Err(e) = r {
        eprintln!("changes_series: {e}");
        std::process::exit(2);
    }
}
