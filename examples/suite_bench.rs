//! Suites at scale (docs/PERFORMANCE.md):
//!
//! 1. planning and partitioning a suite of 100,000 cells (parse the TOML,
//!    expand every benchmark through `run`'s planning, assign partitions);
//! 2. 16 partitions of a suite run at once by 16 `cmdscope run --suite`
//!    processes writing to one fresh store: no row lost;
//! 3. `status` and the merged report of a run of 1,000 cells × 30 runs;
//! 4. listing suites of 10,000 to 40,000 benchmarks (what `suite list`
//!    does before it prints): the time per benchmark stays flat.
//!
//! ```text
//! cargo build --release --bin cmdscope --example suite_bench
//! cargo run --release --example suite_bench
//! cargo run --release --example suite_bench -- listing     # one stage only
//! CMDSCOPE_BENCH_PG_URL=postgres://user:pw@127.0.0.1:5432/bench cargo run --release --example suite_bench
//! ```
//!
//! Without CMDSCOPE_BENCH_PG_URL, 2 and 3 use an SQLite file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use cmdscope::metrics::{Metric, Sample};
use cmdscope::store::partitions::PartitionStart;
use cmdscope::store::{Finish, Location, Machine, NewCell, NewSession, Store};
use cmdscope::suite::partition::Partition;
use cmdscope::suite::{cells, file};

fn planning() -> Result<(), String> {
    // 100 benchmarks × 1,000 parameter values, plus 10 comparisons of two
    // commands over 50 values: 101,000 cells.
    let mut text = String::from("[defaults]\nruns = 5\nlabels = { scale = \"yes\" }\n");
    let values: Vec<String> = (1..=1000).map(|v| v.to_string()).collect();
    for b in 0..100 {
        text.push_str(&format!(
            "\n[[benchmark]]\nname = \"b{b}\"\ncommand = \"prog --case {b} --n {{n}}\"\nparameters = {{ n = [{}] }}\n",
            values.join(", ")
        ));
    }
    for b in 0..10 {
        text.push_str(&format!(
            "\n[[benchmark]]\nname = \"c{b}\"\ncommands = [\"a {{k}}\", \"b {{k}}\"]\nparameters = {{ k = {{ min = 1, max = 50 }} }}\n"
        ));
    }
    let start = Instant::now();
    let suite = file::parse(Path::new("scale.toml"), &text).map_err(|e| e.to_string())?;
    let parsed = start.elapsed().as_secs_f64();
    let planned = cells::plan(&suite).map_err(|e| e.to_string())?;
    let total = cells::count(&planned);
    let expanded = start.elapsed().as_secs_f64();
    // Every cell's partition among 16, and one partition selected.
    let mut sizes = [0usize; 16];
    for c in planned.iter().flat_map(|p| &p.cells) {
        sizes[cmdscope::suite::partition::of(&c.group, 16) as usize - 1] += 1;
    }
    let mine = cells::select(planned, Partition::new(3, 16).map_err(|e| e.to_string())?);
    let done = start.elapsed().as_secs_f64();
    println!(
        "planning: {total} cells: parse {:.0} ms, expand {:.0} ms, partition {:.0} ms; total {:.2} s",
        parsed * 1e3,
        (expanded - parsed) * 1e3,
        (done - expanded) * 1e3,
        done
    );
    println!(
        "  16 partitions: {} to {} cells (partition 3: {})",
        sizes.iter().min().unwrap(),
        sizes.iter().max().unwrap(),
        cells::count(&mine)
    );
    Ok(())
}

/// Parse and plan suites of many one-cell benchmarks: both grow linearly
/// with the number of benchmarks (positions found in one pass, names
/// checked by hash, one argument parser for every benchmark).
fn listing() -> Result<(), String> {
    let mut per = Vec::new();
    for n in [10_000, 20_000, 40_000] {
        let text: String = (0..n)
            .map(|i| format!("[[benchmark]]\nname = \"b{i}\"\ncommand = \"prog --case {i}\"\n"))
            .collect();
        let start = Instant::now();
        let suite = file::parse(Path::new("many.toml"), &text).map_err(|e| e.to_string())?;
        let parsed = start.elapsed().as_secs_f64();
        let planned = cells::plan(&suite).map_err(|e| e.to_string())?;
        let total = start.elapsed().as_secs_f64();
        if cells::count(&planned) != n {
            return Err(format!(
                "{n} benchmarks planned as {} cells",
                cells::count(&planned)
            ));
        }
        per.push(total / n as f64);
        println!(
            "listing: {n} benchmarks: parse {:.0} ms, plan {:.0} ms; total {:.2} s ({:.1} µs per benchmark)",
            parsed * 1e3,
            (total - parsed) * 1e3,
            total,
            total / n as f64 * 1e6
        );
    }
    println!(
        "  per benchmark, 40,000 against 10,000: {:.2}x (1 is linear, 4 quadratic)",
        per[2] / per[0]
    );
    Ok(())
}

fn cmdscope_bin() -> PathBuf {
    let mut p = std::env::current_exe().unwrap();
    p.pop();
    p.pop();
    p.push("cmdscope");
    p
}

fn concurrent(store: &str, dir: &Path) -> Result<(), String> {
    // 320 cells × 20 runs of /bin/true, in 16 partitions.
    let suite = dir.join("concurrent.toml");
    std::fs::write(
        &suite,
        "[defaults]\nruns = 20\n[[benchmark]]\nname = \"t\"\ncommand = \"/bin/true {i}\"\n\
         parameters = { i = { min = 1, max = 320 } }\n",
    )
    .map_err(|e| e.to_string())?;
    let run = format!("concurrent-{}", std::process::id());
    let start = Instant::now();
    let children: Vec<_> = (1..=16)
        .map(|k| {
            Command::new(cmdscope_bin())
                .args(["run", "--suite"])
                .arg(&suite)
                .args(["--partition", &format!("{k}/16"), "--run-id", &run])
                .args(["--no-host-lock", "--style", "none", "--store", store])
                .spawn()
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    for mut c in children {
        let s = c.wait().map_err(|e| e.to_string())?;
        if !s.success() {
            return Err(format!("a partition failed: {s}"));
        }
    }
    let took = start.elapsed().as_secs_f64();
    let mut s = Location::parse(store)
        .and_then(|l| Store::open(&l))
        .map_err(|e| e.0)?;
    let status = cmdscope::suite::status::read(&mut s, &run).map_err(|e| e.to_string())?;
    let merged = cmdscope::suite::merge::merged(&mut s, &run).map_err(|e| e.to_string())?;
    let exact = merged.cells.iter().all(|c| c.runs == 20);
    println!(
        "16 concurrent partitions: {:.1} s; {} of 16 reported, {} cells, {} runs (expected 320 and 6400), every cell 20 runs: {exact}",
        took,
        status.reported.len(),
        status.cells,
        status.runs
    );
    if status.cells != 320 || status.runs != 6400 || !exact || !status.complete {
        return Err("rows lost".into());
    }
    Ok(())
}

fn merged_report(store: &str, dir: &Path) -> Result<(), String> {
    let e = |x: cmdscope::store::StoreError| x.0;
    let mut s = Location::parse(store)
        .and_then(|l| Store::open(&l))
        .map_err(e)?;
    let machine = Machine::current();
    let run = format!("report-{}", std::process::id());
    // 1,000 cells × 30 runs: 8 partitions × 25 benchmarks × 5 cells.
    let start = Instant::now();
    for k in 1..=8u32 {
        s.start_partition(&PartitionStart {
            run_id: &run,
            index: k,
            partitions: 8,
            suite: "scale.toml",
            machine: &machine,
            planned_cells: 125,
            suite_cells: 1000,
        })
        .map_err(e)?;
        for b in 0..25 {
            let id = s
                .begin_session(&NewSession {
                    started: SystemTime::now(),
                    source: "run".into(),
                    command_line: "bench".into(),
                    order: Some("interleaved".into()),
                    seed: None,
                    shell: None,
                    machine: machine.clone(),
                    labels: vec![
                        ("cmdscope.run".into(), run.clone()),
                        ("cmdscope.partition".into(), format!("{k}/8")),
                        ("cmdscope.benchmark".into(), format!("b{k}-{b}")),
                    ],
                    settings: None,
                })
                .map_err(e)?;
            let new: Vec<NewCell> = (0..5)
                .map(|c| NewCell {
                    identity: format!("prog {k} {b} {c}"),
                    name: format!("prog {k} {b} {c}"),
                    command: format!("prog {k} {b} {c}"),
                    parameters: vec![("c".into(), c.to_string())],
                    variant: "{}".into(),
                })
                .collect();
            let ids = s.add_cells(id, &new).map_err(e)?;
            for (c, cell) in ids.iter().enumerate() {
                let samples: Vec<Sample> = (0..30)
                    .map(|i| {
                        let mut x = Sample::new(i);
                        x.exit_code = Some(0);
                        x.set(
                            Metric::WallTime,
                            0.001 * (1.0 + c as f64) * (1.0 + 0.01 * (i % 7) as f64),
                        );
                        x
                    })
                    .collect();
                s.add_runs(*cell, 0, &samples).map_err(e)?;
            }
            s.finish_session(
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
        s.finish_partition(&run, k, "finished").map_err(e)?;
    }
    let inserted = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let status = cmdscope::suite::status::read(&mut s, &run).map_err(|x| x.to_string())?;
    let status_time = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let merged = cmdscope::suite::merge::merged(&mut s, &run).map_err(|x| x.to_string())?;
    let how = cmdscope::cli::stored::how_run(&merged);
    let data = cmdscope::report::html::gather(&mut s, merged, &how, 50, false)
        .map_err(|x| x.to_string())?;
    let html = cmdscope::report::html::render(&data);
    let path = dir.join("merged.html");
    cmdscope::output::write_file(&path, html.as_bytes()).map_err(|x| x.to_string())?;
    let report_time = start.elapsed().as_secs_f64();
    println!(
        "run of {} cells × 30 runs in 200 sessions (inserted in {inserted:.1} s): status {:.2} s ({} runs, complete: {}); merged report {:.2} s, {} KiB",
        status.cells,
        status_time,
        status.runs,
        status.complete,
        report_time,
        html.len() / 1024
    );
    Ok(())
}

type Stage<'a> = dyn Fn() -> Result<(), String> + 'a;

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = std::env::var("CMDSCOPE_BENCH_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| dir.path().join("bench.sqlite3").display().to_string());
    println!("store: {}", cmdscope::store::redact(&store));
    let only = std::env::args().nth(1);
    let stages: [(&str, &Stage); 4] = [
        ("planning", &planning),
        ("concurrent", &|| concurrent(&store, dir.path())),
        ("report", &|| merged_report(&store, dir.path())),
        ("listing", &listing),
    ];
    for (name, stage) in stages {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        if let Err(e) = stage() {
            eprintln!("suite_bench: {name}: {e}");
            std::process::exit(1);
        }
    }
}
