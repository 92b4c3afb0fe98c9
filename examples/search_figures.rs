//! Figures of `--minimize` on one parameter (the zoom over linear grids of
//! 64 to 4,096 values, a geometric grid) and over two and three parameters
//! (coordinate search), on seeded synthetic costs with log-normal noise,
//! for docs/PERFORMANCE.md: how often the reported best is within
//! 5 % of the true optimum, how often the set holds the true optimum, and
//! the runs spent as a fraction of the full grid's.
//!
//!     cargo run --release --example search_figures [-- SEEDS [FILTER]]
//!
//! The search is the one `run --minimize` uses (`search::coordinate` and
//! `search::answer`, default budget: `SearchOptions::default_budget` at
//! 10 runs per value); only the measurements are simulated, through the search's
//! `Measurer` trait. Seeds 0 … SEEDS-1 (default 100). With FILTER, only the
//! rows whose cost and grid (as printed) contain it.

use std::time::Instant;

use cmdscope::analysis::source::Source;
use cmdscope::metrics::Metric;
use cmdscope::search::simulated::Simulated;
use cmdscope::search::{answer, coordinate, Measurer, RaceState, SearchOptions};

/// A flat-bottomed cost over a grid (the first parameter varies fastest,
/// as the plan orders cells): within about 1 % for two steps either side
/// of the optimum along each parameter, then a steep rise, plus a small
/// interaction between the first two parameters.
fn flat_bottom(dims: &[usize], optimum: &[usize]) -> Vec<f64> {
    cost(dims, optimum, |d| {
        let shallow: f64 = d.iter().map(|x| 0.0025 * x * x).sum();
        let steep: f64 = d
            .iter()
            .map(|x| 0.2 * (x.abs() - 2.0).max(0.0).powi(2))
            .sum();
        1.0 + shallow + steep + 0.002 * d[0] * d[1]
    })
}

/// For contrast, a bowl without a flat bottom (neighbours of the optimum
/// 5 % above it), tilted by an interaction of the first two parameters,
/// like the search's own simulation test.
fn bowl(dims: &[usize], optimum: &[usize]) -> Vec<f64> {
    cost(dims, optimum, |d| {
        1.0 + d.iter().map(|x| 0.05 * x * x).sum::<f64>() + 0.04 * d[0] * d[1]
    })
}

/// A cost per grid index from a function of the distances to the optimum.
fn cost(dims: &[usize], optimum: &[usize], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let n: usize = dims.iter().product();
    (0..n)
        .map(|mut g| {
            let mut d = Vec::with_capacity(dims.len());
            for (&size, &o) in dims.iter().zip(optimum) {
                d.push((g % size) as f64 - o as f64);
                g /= size;
            }
            f(&d)
        })
        .collect()
}

struct Figures {
    within_5pct: usize,
    contains_optimum: usize,
    /// The optimum measured at all (a set can only hold what was tried).
    optimum_tried: usize,
    /// The set's costliest member over all seeds, relative to the optimum.
    set_worst: f64,
    runs_mean: f64,
    runs_max: usize,
    set_mean: f64,
    settled: usize,
}

/// With `load`, how much slower a busy round of a seed is: +30 % to
/// +100 % across seeds (each round busy on a coin toss).
fn busy(load: bool, seed: u64) -> f64 {
    if load {
        0.3 + 0.1 * (seed % 8) as f64
    } else {
        0.0
    }
}

fn figures(cost: Vec<f64>, dims: &[usize], sigma: f64, seeds: u64, load: bool) -> Figures {
    let n = cost.len();
    let truth = cost.iter().copied().fold(f64::INFINITY, f64::min);
    let opts = SearchOptions {
        source: Source::Run(Metric::WallTime),
        maximize: false,
        runs: 10,
        initial_runs: 3,
        alpha: 0.05,
        precision: 0.01,
        budget: SearchOptions::default_budget(dims, 10),
        per_op: false,
        ordered: Vec::new(),
    };
    let mut f = Figures {
        within_5pct: 0,
        contains_optimum: 0,
        optimum_tried: 0,
        set_worst: 1.0,
        runs_mean: 0.0,
        runs_max: 0,
        set_mean: 0.0,
        settled: 0,
    };
    for seed in 0..seeds {
        let mut m = Simulated::with_load(cost.clone(), sigma, busy(load, seed), seed);
        let mut st = RaceState::default();
        coordinate(&mut m, dims, &opts, &mut st).expect("a simulation does not fail");
        let a = answer(&m, n, &opts, &st).expect("something was measured");
        f.within_5pct += usize::from(cost[a.best] <= 1.05 * truth);
        f.contains_optimum += usize::from(a.as_good.iter().any(|&i| cost[i] == truth));
        f.optimum_tried += usize::from((0..n).any(|i| cost[i] == truth && m.count(i) > 0));
        for &i in &a.as_good {
            f.set_worst = f.set_worst.max(cost[i] / truth);
        }
        f.runs_mean += st.runs as f64 / seeds as f64;
        f.runs_max = f.runs_max.max(st.runs);
        f.set_mean += a.as_good.len() as f64 / seeds as f64;
        f.settled += usize::from(st.settled);
    }
    f
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let filter = std::env::args().nth(2).unwrap_or_default();
    let start = Instant::now();
    one_parameter(seeds, &filter);
    println!(
        "| cost | grid | noise (σ) | best within 5 % | set holds the optimum | optimum tried | set's worst member | runs: mean (max) of the grid's | set size (mean) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let cases: [(&[usize], &[usize]); 3] = [
        (&[8, 8], &[5, 2]),
        (&[12, 8], &[7, 3]),
        (&[8, 6, 5], &[5, 2, 3]),
    ];
    type Shape = fn(&[usize], &[usize]) -> Vec<f64>;
    let shapes: [(&str, Shape); 2] = [("flat bottom", flat_bottom), ("bowl", bowl)];
    for (name, shape_of) in shapes {
        for (dims, optimum) in cases {
            for sigma in [0.05, 0.10] {
                let grid = dims.iter().product::<usize>() * 10;
                let shape: Vec<String> = dims.iter().map(usize::to_string).collect();
                if !format!("{name} {}", shape.join(" × ")).contains(filter.as_str()) {
                    continue;
                }
                let f = figures(shape_of(dims, optimum), dims, sigma, seeds, false);
                println!(
                "| {name} | {} ({} runs) | {:.0} % | {} of {seeds} | {} of {seeds} | {} of {seeds} | +{:.1} % | {:.0} ({}) of {grid}: {:.0} % ({:.0} %) | {:.1} |",
                shape.join(" × "),
                grid,
                sigma * 100.0,
                f.within_5pct,
                f.contains_optimum,
                f.optimum_tried,
                100.0 * (f.set_worst - 1.0),
                f.runs_mean,
                f.runs_max,
                100.0 * f.runs_mean / grid as f64,
                100.0 * f.runs_max as f64 / grid as f64,
                f.set_mean
            );
            }
        }
    }
    eprintln!("{:.1} s", start.elapsed().as_secs_f64());
}

/// A/b + b over b = 1 ... n, its optimum at `at`.
fn u_shape(n: usize, at: f64) -> Vec<f64> {
    (1..=n).map(|b| at * at / b as f64 + b as f64).collect()
}

/// The one-parameter table (and a tilted two-parameter valley on a large
/// linear grid): the zoom's cases.
fn one_parameter(seeds: u64, filter: &str) {
    println!(
        "| cost | grid | noise (σ) | load | best within 5 % | set holds the optimum | settled | runs: mean (max) of the grid's | set size (mean) |"
    );
    println!("|---|---|---:|---|---:|---:|---:|---:|---:|");
    let mut cases: Vec<(String, Vec<usize>, Vec<f64>, f64)> = Vec::new();
    for n in [64usize, 512, 4096] {
        for (place, at) in [("first", 0.05), ("middle", 0.5), ("last", 0.95)] {
            let cost = u_shape(n, (at * n as f64).max(2.0));
            cases.push((
                format!("U, optimum in the {place} tenth"),
                vec![n],
                cost,
                0.05,
            ));
        }
    }
    let flat: Vec<f64> = (0..512)
        .map(|i| {
            let d = (i as f64 - 300.0).abs() / 20.0;
            1.0 + 0.01 * d.min(1.0) + 0.2 * (d - 1.0).max(0.0).powi(2)
        })
        .collect();
    cases.push((
        "flat bottom (1 % over 41 values)".into(),
        vec![512],
        flat,
        0.05,
    ));
    let plateau: Vec<f64> = (0..512)
        .map(|i| if (100..400).contains(&i) { 1.0 } else { 1.6 })
        .collect();
    cases.push(("plateau (300 values)".into(), vec![512], plateau, 0.15));
    // 1 ... 8192 by powers of two, optimum at 512.
    let geometric: Vec<f64> = (0..14)
        .map(|i| 1.0 + 0.25 * (i as f64 - 9.0).abs())
        .collect();
    cases.push((
        "sharp, geometric grid (x2)".into(),
        vec![14],
        geometric,
        0.05,
    ));
    let dims = [256usize, 16];
    let tilted: Vec<f64> = (0..dims[0] * dims[1])
        .map(|g| {
            let (b, c) = ((g % dims[0]) as f64 + 1.0, (g / dims[0]) as f64);
            let at = 80.0 + 8.0 * (c - 4.0);
            (at * at / b + b) / (2.0 * at) + 0.02 * (c - 4.0).powi(2)
        })
        .collect();
    cases.push((
        "two parameters, tilted valley".into(),
        dims.to_vec(),
        tilted,
        0.05,
    ));
    for ((name, dims, cost, sigma), load) in cases.iter().flat_map(|c| [(c, false), (c, true)]) {
        let grid = dims.iter().product::<usize>() * 10;
        let shape: Vec<String> = dims.iter().map(usize::to_string).collect();
        if !format!("{name} {}", shape.join(" × ")).contains(filter) {
            continue;
        }
        let f = figures(cost.clone(), dims, *sigma, seeds, load);
        println!(
            "| {name} | {} ({grid} runs) | {:.0} % | {} | {} of {seeds} | {} of {seeds} | {} of {seeds} | {:.0} ({}): {:.1} % ({:.1} %) | {:.1} |",
            shape.join(" × "),
            sigma * 100.0,
            if load { "busy rounds +30–100 %" } else { "none" },
            f.within_5pct,
            f.contains_optimum,
            f.settled,
            f.runs_mean,
            f.runs_max,
            100.0 * f.runs_mean / grid as f64,
            100.0 * f.runs_max as f64 / grid as f64,
            f.set_mean
        );
    }
    println!();
}
