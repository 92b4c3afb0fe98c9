//! The seeded series of `analysis::changes::simulated`, written where
//! other tools can read them, and the score of any detector's answer on
//! them. SUITE is `model` (`simulated::suite`: every kind, drawn from the
//! noise model cmdscope's method assumes) or `rough` (`simulated::rough_suite`:
//! every shape drawn from noise families that are not that model).
//!
//!     cargo run --release --example changes_series -- write DIR SEED SUITE
//!     cargo run --release --example changes_series -- score NAME ANSWERS SEED SUITE
//!     cargo run --release --example changes_series -- side-by-side SEED SUITE NAME ANSWERS...
//!     cargo run --release --example changes_series -- values DB FILE
//!     cargo run --release --example changes_series -- answers SEED SUITE
//!     cargo run --release --example changes_series -- eval SEED SUITE [NAME]
//!
//! `write` makes DIR/store.sqlite3 (one session per point, each series a
//! benchmark of one machine, sessions labelled `point=<index>`; a series
//! is a benchmark named after it) and DIR/csv/<i>.csv (one row per
//! session: its time and the median of its runs, for tools that take one
//! value per point). `score` reads ANSWERS, lines of
//! `<series index> change <point>`, `<series index> episode <first> <last>`
//! or `<series index> drift <first> <last> <ratio>` (points from 0), and
//! prints the score table of `score::score` (model) or the event
//! totals (rough). `side-by-side` prints the event table
//! (`score::event_table`) of the named answers, the first cmdscope's
//! (scored on events), the others a detector of change points only
//! (scored as such), then per noise family the slides the first told as
//! one drift with start and end within 3 and its size within 30 %, and
//! those the others put a change point inside. `values` writes a series recorded elsewhere (one
//! value per line) into a store of one benchmark, one run per session,
//! for `scripts/changes-real-data`. `answers` prints cmdscope's answer
//! lines for the suite, found in this process (what `write` and `cmdscope
//! changes` give through a store). `eval` runs `changes`' analysis on
//! the suite in this process and prints its event table; with NAME, only
//! the series whose name holds it, and each that missed or raised an
//! alarm with its truth and what was found. Both `eval` and `side-by-side`
//! end with the slides against what is attainable (`slide_table`): the
//! Cramér–Rao bound of their ends, the oracle (`Detected::by_oracle`), and
//! the same rule, an edge inside the slide, for every detector.

use std::time::{Duration, SystemTime};

use cmdscope::analysis::changes::simulated::{self, Detected};
use cmdscope::analysis::changes::{oracle, score};
use cmdscope::store::{Location, NewCell, Store};

#[path = "common/point_store.rs"]
mod point_store;
use point_store::{point_session, run, T0};

fn suite(seed: u64, name: &str) -> Result<Vec<simulated::Series>, String> {
    match name {
        "model" => Ok(simulated::suite(seed)),
        "rough" => Ok(simulated::rough_suite(seed)),
        _ => Err(format!("unknown suite '{name}': model or rough")),
    }
}

fn write(dir: &std::path::Path, seed: u64, which: &str) -> Result<(), String> {
    let all = suite(seed, which)?;
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
    for s in 0..simulated::SESSIONS {
        point_session(
            &mut store,
            s,
            ("point", s.to_string()),
            "changes_series",
            &cells,
            |cell| {
                all[cell].sessions[s]
                    .iter()
                    .enumerate()
                    .map(|(r, &v)| run(r as u64, v))
                    .collect()
            },
        )?;
    }
    for (i, series) in all.iter().enumerate() {
        let mut csv = String::from("time,value\n");
        for (s, runs) in series.sessions.iter().enumerate() {
            let m = cmdscope::stats::median_finite(runs).unwrap_or(f64::NAN);
            // One day apart: readers that parse dates need distinct ones.
            csv.push_str(&format!(
                "{},{m}\n",
                humantime::format_rfc3339_seconds(
                    SystemTime::UNIX_EPOCH + Duration::from_secs(T0 + s as u64 * 86_400)
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

/// A store of one benchmark with one session per value of FILE (one
/// value per line; lines that are not a finite number are left out), each
/// session one run whose wall time is the value: a series recorded
/// elsewhere, for `cmdscope changes` to read.
fn values(db: &std::path::Path, file: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(db);
    let mut store = Store::open(&Location::Sqlite(db.to_path_buf())).map_err(|e| e.0)?;
    let cell = NewCell {
        identity: "series".into(),
        name: "series".into(),
        command: file.display().to_string(),
        parameters: Vec::new(),
        variant: "{}".into(),
    };
    for (s, v) in text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| Some((i, l.trim().parse::<f64>().ok().filter(|v| v.is_finite())?)))
    {
        point_session(
            &mut store,
            s,
            ("point", s.to_string()),
            "changes_series values",
            std::slice::from_ref(&cell),
            |_| vec![run(0, v)],
        )?;
    }
    Ok(())
}

fn answers(all: &[simulated::Series], answers: &std::path::Path) -> Result<Vec<Detected>, String> {
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
            Some("drift") => {
                let ratio: f64 = w
                    .get(4)
                    .and_then(|x| x.parse().ok())
                    .ok_or_else(|| format!("bad answer line: {line}"))?;
                d.drifts.push((num(2)?, num(3)?, ratio));
            }
            _ => return Err(format!("bad answer line: {line}")),
        }
    }
    Ok(found)
}

fn score(name: &str, file: &std::path::Path, seed: u64, which: &str) -> Result<(), String> {
    let all = suite(seed, which)?;
    let found = answers(&all, file)?;
    if which == "model" {
        let (rows, total) = score::score(&all, &found);
        print!("{}", score::table(name, &rows, &total));
    } else {
        let (_, total) = score::score_events(&all, &found, false);
        println!(
            "{name}: {} of {} true events found, {} false alarms",
            total.hits, total.truth, total.false_alarms
        );
    }
    Ok(())
}

/// `detectors`: (name, answers file); the first is cmdscope's (scored on
/// events), the others report change points only.
fn side_by_side(
    seed: u64,
    which: &str,
    detectors: &[(&str, &std::path::Path)],
) -> Result<(), String> {
    let all = suite(seed, which)?;
    let mut rows = Vec::new();
    let mut totals = Vec::new();
    for (k, (name, file)) in detectors.iter().enumerate() {
        let (r, t) = score::score_events(&all, &answers(&all, file)?, k > 0);
        rows.push(r);
        totals.push(format!(
            "{name} {}/{} found, {} false alarms",
            t.hits, t.truth, t.false_alarms
        ));
    }
    let names: Vec<&str> = detectors.iter().map(|d| d.0).collect();
    let refs: Vec<&[_]> = rows.iter().map(Vec::as_slice).collect();
    print!("{}", score::event_table(&names, &refs));
    println!("all: {}", totals.join("; "));
    let others: Vec<(&str, Vec<Detected>)> = detectors[1..]
        .iter()
        .map(|(n, f)| Ok((*n, answers(&all, f)?)))
        .collect::<Result<_, String>>()?;
    print!(
        "{}",
        slide_table(&all, &answers(&all, detectors[0].1)?, &others)
    );
    Ok(())
}

/// cmdscope's answer lines (as `score` reads them) for every series of
/// the suite, found in this process: what the store and `cmdscope changes
/// --format json` give, without them.
fn answer_lines(seed: u64, which: &str) -> Result<(), String> {
    for (i, s) in suite(seed, which)?.iter().enumerate() {
        let d = Detected::by_cmdscope(&s.sessions);
        for c in &d.changes {
            println!("{i} change {c}");
        }
        for (a, b) in &d.episodes {
            println!("{i} episode {a} {b}");
        }
        for (a, b, r) in &d.drifts {
            println!("{i} drift {a} {b} {r}");
        }
    }
    Ok(())
}

/// `find` on every series of the suite in this process (no store): the
/// event table, and with `verbose` each series that missed or raised an
/// alarm, its truth and what was found.
fn eval(seed: u64, which: &str, filter: Option<&str>) -> Result<(), String> {
    let all: Vec<simulated::Series> = suite(seed, which)?
        .into_iter()
        .filter(|s| filter.is_none_or(|f| s.name.contains(f)))
        .collect();
    let found: Vec<Detected> = all
        .iter()
        .map(|s| Detected::by_cmdscope(&s.sessions))
        .collect();
    if filter.is_some() {
        for (s, d) in all.iter().zip(&found) {
            let e = score::score_events_one(s, d, false);
            if e.hits < e.truth || e.false_alarms > 0 {
                println!(
                    "{}: truth {:?} {:?} {:?}; found {:?} {:?} {:?}",
                    s.name, s.changes, s.episodes, s.drifts, d.changes, d.episodes, d.drifts
                );
            }
        }
    }
    let (rows, total) = score::score_events(&all, &found, false);
    print!("{}", score::event_table(&["cmdscope"], &[&rows]));
    println!(
        "all: {}/{} found, {} false alarms",
        total.hits, total.truth, total.false_alarms
    );
    // The shape told: slides as one drift (wherever its ends, and with
    // its ends and size right), and drifts where the truth has none (a
    // step told as a slide).
    for (noise, kind, e) in &rows {
        if *kind == simulated::Kind::Slide {
            println!(
                "slides told as one drift, {}: {}/{}, located {}/{}",
                noise.name(),
                e.one_drift,
                e.series,
                e.one_drift_located,
                e.series
            );
        }
    }
    print!("{}", slide_table(&all, &found, &[]));
    print!("{}", edge_coverage(&all));
    let stray: usize = rows.iter().map(|r| r.2.stray_drifts).sum();
    println!("drifts reported where the truth has no slide: {stray}");
    Ok(())
}

/// The slides of the suite per noise family, against what is attainable:
/// the Cramér–Rao bound's expected count of slides with both ends within
/// ±3 (σ from the oracle's residuals; independent noise assumed), the
/// oracle's slides with both ends within ±3 (size aside), its located slides (`Detected::by_oracle`, the same rule as
/// cmdscope's), cmdscope's located, cmdscope's located among the oracle's,
/// cmdscope's slides with an edge of an event inside, and each other
/// detector's slides with a point inside.
fn slide_table(
    all: &[simulated::Series],
    cmdscope: &[Detected],
    others: &[(&str, Vec<Detected>)],
) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "slides per noise: series, bound expects (ends ±3), oracle's ends ±3, oracle located, cmdscope located, cmdscope located of the oracle's, cmdscope edge inside",
    );
    for (name, _) in others {
        let _ = write!(out, ", {name} point inside");
    }
    out.push('\n');
    for noise in simulated::Noise::ALL {
        let (mut series, mut expected, mut ends, mut oracle) = (0, 0.0, 0, 0);
        let (mut located, mut both, mut inside) = (0, 0, 0);
        let mut theirs = vec![0; others.len()];
        for (i, s) in all.iter().enumerate() {
            if s.noise != noise || s.kind != simulated::Kind::Slide {
                continue;
            }
            series += 1;
            let fit = oracle::oracle_fit(&s.sessions);
            let o = score::score_events_one(s, &Detected::by_oracle(&s.sessions), false);
            let c = score::score_events_one(s, &cmdscope[i], false);
            let (a, b, _) = s.drifts[0];
            expected += fit
                .and_then(|f| {
                    oracle::edges_located_chance(s.sessions.len(), s.drifts[0], f.sigma, 3)
                })
                .unwrap_or(0.0);
            ends += usize::from(
                fit.is_some_and(|f| f.first.abs_diff(a) <= 3 && f.last.abs_diff(b) <= 3),
            );
            oracle += o.one_drift_located;
            located += c.one_drift_located;
            both += o.one_drift_located.min(c.one_drift_located);
            inside += c.edge_inside;
            for (k, (_, d)) in others.iter().enumerate() {
                theirs[k] += score::score_events_one(s, &d[i], true).edge_inside;
            }
        }
        if series == 0 {
            continue;
        }
        let _ = write!(
            out,
            "  {:<20} {series:>3} {expected:>6.1} {ends:>4} {oracle:>4} {located:>4} {both:>4}/{oracle:<4} {inside:>4}",
            noise.name()
        );
        for t in theirs {
            let _ = write!(out, " {t:>4}");
        }
        out.push('\n');
    }
    out
}

/// How often the ranges of a drift's ends (`Drift::edges`) hold the true
/// start and end, per noise family: over the slides cmdscope tells as one
/// drift within the slide ±3 (as `EventScore::one_drift`) that carries
/// ranges.
fn edge_coverage(all: &[simulated::Series]) -> String {
    use std::fmt::Write as _;
    let params = cmdscope::analysis::changes::Params::default();
    let mut out = format!(
        "edge ranges ({:.0} %) holding the truth per noise: drifts with ranges, start, end, both; mean width of start and end ranges\n",
        cmdscope::analysis::changes::EDGE_CONFIDENCE * 100.0
    );
    let (mut total, mut total_both) = (0, 0);
    for noise in simulated::Noise::ALL {
        let (mut count, mut start, mut end, mut both, mut width) = (0, 0, 0, 0, 0.0);
        for s in all
            .iter()
            .filter(|s| s.noise == noise && s.kind == simulated::Kind::Slide)
        {
            let (a, b, _) = s.drifts[0];
            let found = cmdscope::analysis::changes::find(&s.sessions, &params);
            let near: Vec<_> = found
                .drifts
                .iter()
                .filter(|d| {
                    d.start + 3 >= a && d.start <= b + 3 || d.end + 3 >= a && d.end <= b + 3
                })
                .collect();
            let [d] = near.as_slice() else { continue };
            let Some(r) = d.edges else { continue };
            count += 1;
            let (cs, ce) = (
                (r.start[0]..=r.start[1]).contains(&a),
                (r.end[0]..=r.end[1]).contains(&b),
            );
            start += usize::from(cs);
            end += usize::from(ce);
            both += usize::from(cs && ce);
            width += (r.start[1] - r.start[0] + r.end[1] - r.end[0] + 2) as f64 / 2.0;
        }
        total += count;
        total_both += both;
        if count > 0 {
            let _ = writeln!(
                out,
                "  {:<20} {count:>3} {start:>4} {end:>4} {both:>4} {:>6.1}",
                noise.name(),
                width / count as f64
            );
        }
    }
    let _ = writeln!(out, "  all: {total_both} of {total} with both ends held");
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seed = |k: usize| args.get(k).and_then(|s| s.parse().ok()).unwrap_or(1);
    let which = |k: usize| args.get(k).map_or("model", String::as_str);
    let path = |k: usize| std::path::Path::new(&args[k]);
    let r = match (args.first().map(String::as_str), args.len()) {
        (Some("write"), 2..=4) => write(path(1), seed(2), which(3)),
        (Some("score"), 3..=5) => score(&args[1], path(2), seed(3), which(4)),
        (Some("values"), 3) => values(path(1), path(2)),
        (Some("answers"), 3) => answer_lines(seed(1), which(2)),
        (Some("eval"), 3..=4) => eval(seed(1), which(2), args.get(3).map(String::as_str)),
        (Some("side-by-side"), n) if n >= 5 && n % 2 == 1 => {
            let detectors: Vec<(&str, &std::path::Path)> = args[3..]
                .chunks(2)
                .map(|c| (c[0].as_str(), std::path::Path::new(&c[1])))
                .collect();
            side_by_side(seed(1), which(2), &detectors)
        }
        _ => Err("usage: changes_series write DIR [SEED [SUITE]] | score NAME ANSWERS [SEED [SUITE]] | side-by-side SEED SUITE NAME ANSWERS [NAME ANSWERS...] | values DB FILE | answers SEED SUITE | eval SEED SUITE [NAME]".into()),
    };
    if let Err(e) = r {
        eprintln!("changes_series: {e}");
        std::process::exit(2);
    }
}
