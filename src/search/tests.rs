//! The search's seeded simulations: the race, the zoom and the
//! coordinate search against known costs (`simulated`).

use super::grid::{around, grid_index, positions};
use super::simulated::Simulated;
use super::zoom::{race, split_gap, zoom_points};
use super::*;
use crate::analysis::source::Source;
use crate::error::Result;
use crate::metrics::Metric;

fn opts(dims: &[usize], maximize: bool) -> SearchOptions {
    SearchOptions {
        source: Source::Run(Metric::WallTime),
        maximize,
        runs: 10,
        initial_runs: 3,
        alpha: 0.05,
        precision: 0.01,
        budget: SearchOptions::default_budget(dims, 10),
        per_op: false,
        ordered: Vec::new(),
    }
}

struct Tally {
    trials: usize,
    contains_optimum: usize,
    best_within_5pct: usize,
    max_runs: usize,
}

/// Runs the race on `trials` seeds of one curve.
fn trial(cost: &[f64], sigma: f64, maximize: bool, trials: usize) -> Tally {
    let n = cost.len();
    let o = opts(&[n], maximize);
    let truth = if maximize {
        cost.iter().copied().fold(f64::MIN, f64::max)
    } else {
        cost.iter().copied().fold(f64::MAX, f64::min)
    };
    let mut t = Tally {
        trials,
        contains_optimum: 0,
        best_within_5pct: 0,
        max_runs: 0,
    };
    for seed in 0..trials as u64 {
        let mut m = Simulated::new(cost.to_vec(), sigma, seed);
        let mut st = RaceState::default();
        race(&mut m, n, &o, &mut st).unwrap();
        let a = answer(&m, n, &o, &st).unwrap();
        let runs: usize = m.samples.iter().map(Vec::len).sum();
        assert_eq!(runs, st.runs, "the race counts its runs");
        t.max_runs = t.max_runs.max(runs);
        if a.as_good.iter().any(|&i| cost[i] == truth) {
            t.contains_optimum += 1;
        }
        if (cost[a.best] / truth - 1.0).abs() <= 0.05 {
            t.best_within_5pct += 1;
        }
    }
    t
}

fn check(name: &str, t: &Tally, n: usize) {
    let budget = SearchOptions::default_budget(&[n], 10);
    assert!(
        t.max_runs <= budget,
        "{name}: {} runs > budget {budget}",
        t.max_runs
    );
    assert!(
        t.contains_optimum * 100 >= 95 * t.trials,
        "{name}: the set held the optimum in {} of {}",
        t.contains_optimum,
        t.trials
    );
    assert!(
        t.best_within_5pct * 10 >= 9 * t.trials,
        "{name}: best within 5 % in {} of {}",
        t.best_within_5pct,
        t.trials
    );
}

/// 14 values, like 1 … 8192 by powers of two.
const N: usize = 14;

#[test]
fn sharp_minimum() {
    let cost: Vec<f64> = (0..N)
        .map(|i| 1.0 + 0.25 * (i as f64 - 9.0).abs())
        .collect();
    let t = trial(&cost, 0.05, false, 200);
    check("sharp", &t, N);
}

#[test]
fn flat_bottom() {
    // Within 1 % over five values around the optimum at index 6, then a
    // steep rise.
    let cost: Vec<f64> = (0..N)
        .map(|i| {
            let d = (i as f64 - 6.0).abs();
            1.0 + 0.0025 * d * d + 0.2 * (d - 2.0).max(0.0).powi(2)
        })
        .collect();
    let t = trial(&cost, 0.05, false, 200);
    check("flat bottom", &t, N);
}

#[test]
fn noisy_plateau() {
    // A plateau from index 3 to 11, noise of 15 %.
    let cost: Vec<f64> = (0..N)
        .map(|i| if (3..=11).contains(&i) { 1.0 } else { 1.6 })
        .collect();
    let t = trial(&cost, 0.15, false, 200);
    check("plateau", &t, N);
}

#[test]
fn maximize_throughput() {
    let cost: Vec<f64> = (0..N)
        .map(|i| 100.0 / (1.0 + 0.1 * (i as f64 - 4.0).powi(2)))
        .collect();
    let t = trial(&cost, 0.05, true, 100);
    check("maximize", &t, N);
}

#[test]
fn two_parameters_with_an_interaction() {
    // 8 x 8 values; optimum at (5, 2); the cross term tilts the valley,
    // so one pass along each parameter is not enough.
    let (nx, ny) = (8usize, 8usize);
    let cost: Vec<f64> = (0..nx * ny)
        .map(|g| {
            // The first parameter varies fastest (grid_index).
            let (x, y) = ((g % nx) as f64 - 5.0, (g / nx) as f64 - 2.0);
            1.0 + 0.05 * x * x + 0.05 * y * y + 0.04 * x * y
        })
        .collect();
    let truth = grid_index(&[nx, ny], &[5, 2]);
    let o = opts(&[nx, ny], false);
    let trials = 100;
    let (mut contains, mut within, mut max_runs) = (0, 0, 0);
    for seed in 0..trials {
        let mut m = Simulated::new(cost.clone(), 0.05, seed);
        let mut st = RaceState::default();
        coordinate(&mut m, &[nx, ny], &o, &mut st).unwrap();
        let a = answer(&m, nx * ny, &o, &st).unwrap();
        let runs: usize = m.samples.iter().map(Vec::len).sum();
        assert_eq!(runs, st.runs);
        max_runs = max_runs.max(runs);
        contains += usize::from(a.as_good.contains(&truth));
        within += usize::from(cost[a.best] <= 1.05 * cost[truth]);
    }
    assert!(
        max_runs <= o.budget,
        "{max_runs} runs > budget {}",
        o.budget
    );
    assert!(
        contains >= 95,
        "the set held the optimum in {contains} of {trials}"
    );
    assert!(within >= 90, "best within 5 % in {within} of {trials}");
}

/// A bowl tilted by an interaction of the first two parameters (the
/// axis neighbours of the optimum 5 % above it, the diagonal ones
/// along the valley 6 %), as in `two_parameters_with_an_interaction`.
fn tilted_bowl(dims: &[usize], optimum: &[usize]) -> Vec<f64> {
    (0..dims.iter().product::<usize>())
        .map(|g| {
            let d: Vec<f64> = positions(dims, g)
                .iter()
                .zip(optimum)
                .map(|(&p, &o)| p as f64 - o as f64)
                .collect();
            1.0 + d.iter().map(|x| 0.05 * x * x).sum::<f64>() + 0.04 * d[0] * d[1]
        })
        .collect()
}

/// Coordinate search on `trials` seeds of a cost over `dims`, against
/// the goal: the best within 5 % of the optimum in 90 % of the trials,
/// the set holding the optimum in 95 %, within the default budget.
fn check_coordinate(name: &str, dims: &[usize], optimum: &[usize], sigma: f64) {
    let cost = tilted_bowl(dims, optimum);
    let n = cost.len();
    let truth = grid_index(dims, optimum);
    let o = opts(dims, false);
    let trials = 100;
    let (mut contains, mut within, mut max_runs) = (0, 0, 0);
    for seed in 0..trials {
        let mut m = Simulated::new(cost.clone(), sigma, seed);
        let mut st = RaceState::default();
        coordinate(&mut m, dims, &o, &mut st).unwrap();
        let a = answer(&m, n, &o, &st).unwrap();
        let runs: usize = m.samples.iter().map(Vec::len).sum();
        assert_eq!(runs, st.runs, "{name}: the search counts its runs");
        max_runs = max_runs.max(runs);
        contains += usize::from(a.as_good.contains(&truth));
        within += usize::from(cost[a.best] <= 1.05 * cost[truth]);
    }
    assert!(
        max_runs <= o.budget,
        "{name}: {max_runs} runs > budget {}",
        o.budget
    );
    assert!(
        contains >= 95,
        "{name}: the set held the optimum in {contains} of {trials}"
    );
    assert!(
        within >= 90,
        "{name}: best within 5 % in {within} of {trials}"
    );
}

#[test]
fn a_tilted_valley_over_12_by_8() {
    // A line's coarse scan along the first parameter (0, 2, 4, ...)
    // skips the optimum's column 7: the lines alone ended 6 % above
    // it in 98 of 100 seeds, even without noise.
    check_coordinate("12 x 8, 5 %", &[12, 8], &[7, 3], 0.05);
    check_coordinate("12 x 8, 10 %", &[12, 8], &[7, 3], 0.10);
}

#[test]
fn a_tilted_valley_over_three_parameters() {
    check_coordinate("8 x 6 x 5, 5 %", &[8, 6, 5], &[5, 2, 3], 0.05);
    check_coordinate("8 x 6 x 5, 10 %", &[8, 6, 5], &[5, 2, 3], 0.10);
}

#[test]
fn several_parameters_stay_within_the_default_budget_at_any_run_count() {
    for dims in [&[2usize, 2][..], &[3, 2], &[12, 8], &[8, 6, 5], &[2, 2, 2]] {
        let optimum: Vec<usize> = dims.iter().map(|&d| d - 1).collect();
        let cost = tilted_bowl(dims, &optimum);
        let n = cost.len();
        for runs in [3, 5, 10, 20] {
            let o = SearchOptions {
                runs,
                budget: SearchOptions::default_budget(dims, runs),
                ..opts(dims, false)
            };
            for seed in 0..10 {
                let mut m = Simulated::new(cost.clone(), 0.1, seed);
                let mut st = RaceState::default();
                coordinate(&mut m, dims, &o, &mut st).unwrap();
                let total: usize = m.samples.iter().map(Vec::len).sum();
                assert_eq!(total, st.runs, "{dims:?}, {runs} runs, seed {seed}");
                assert!(
                    st.runs <= o.budget,
                    "{dims:?}, {runs} runs, seed {seed}: {} > {}",
                    st.runs,
                    o.budget
                );
                // Not settled: the budget ended it, or the race ended
                // around the best with untried values in the bracket.
                let a = answer(&m, n, &o, &st).unwrap();
                let b = bracket(&m, dims, &o, &a);
                assert!(
                    st.settled == (b.untried == 0 && !st.budget_exhausted)
                        || (st.budget_exhausted && !st.settled),
                    "{dims:?}, {runs} runs: settled {} with {} untried",
                    st.settled,
                    b.untried
                );
            }
        }
    }
}

#[test]
fn the_grid_neighbours_include_the_diagonals_and_stay_inside() {
    let dims = [4, 3];
    let mut corner = around(&dims, grid_index(&dims, &[0, 0]));
    corner.sort_unstable();
    let expect: Vec<usize> = [[1, 0], [0, 1], [1, 1]]
        .iter()
        .map(|p| grid_index(&dims, p))
        .collect();
    let mut expect = expect;
    expect.sort_unstable();
    assert_eq!(corner, expect);
    assert_eq!(around(&dims, grid_index(&dims, &[1, 1])).len(), 8);
    assert_eq!(
        around(&[8, 6, 5], grid_index(&[8, 6, 5], &[3, 3, 3])).len(),
        26
    );
}

#[test]
fn the_default_budget_is_40_percent_of_the_grid_from_10_values() {
    for values in 10..=64 {
        let b = SearchOptions::default_budget(&[values], 10);
        assert!(b * 5 <= values * 10 * 2 + 4, "{values} values: {b}");
    }
    // Small grids: the coarse scan (5 values x 3) and two at 10 runs.
    assert_eq!(SearchOptions::default_budget(&[5], 10), 35);
    assert_eq!(SearchOptions::default_budget(&[1], 10), 10);
}

#[test]
fn values_without_measurements_leave_the_race() {
    // Indices 9.. time out on every run: the simulation keeps no value.
    struct TimingOut(Simulated);
    impl Measurer for TimingOut {
        fn measure(&mut self, points: &[usize], runs: usize) -> Result<()> {
            self.0.measure(points, runs)
        }
        fn values(&self, i: usize) -> Vec<f64> {
            if i >= 9 {
                Vec::new()
            } else {
                self.0.values(i)
            }
        }
        fn count(&self, i: usize) -> usize {
            self.0.count(i)
        }
        fn tagged(&self, i: usize) -> Vec<(Block, Option<f64>)> {
            let mut t = self.0.tagged(i);
            if i >= 9 {
                t.iter_mut().for_each(|r| r.1 = None);
            }
            t
        }
    }
    let cost: Vec<f64> = (0..N)
        .map(|i| 1.0 + 0.01 * (i as f64 - 11.0).powi(2))
        .collect();
    let o = opts(&[N], false);
    let mut m = TimingOut(Simulated::new(cost, 0.02, 1));
    let mut st = RaceState::default();
    race(&mut m, N, &o, &mut st).unwrap();
    let a = answer(&m, N, &o, &st).unwrap();
    assert!(a.best < 9, "{}", a.best);
    assert!(a.as_good.iter().all(|&i| i < 9), "{:?}", a.as_good);
    assert!(st
        .decisions
        .iter()
        .any(|d| d.action == "drop" && d.reason.contains("no run measured")));
    // They got the coarse scan's runs only.
    assert!((9..N).all(|i| m.count(i) <= 3));
}

#[test]
fn every_step_measures_something_and_small_grids_end() {
    // A 7-value grid with a flat bottom: the budget binds while values
    // of unequal run counts remain (a round that adds no run would
    // repeat until the loop's cap).
    for seed in 0..50 {
        let cost: Vec<f64> = (0..7)
            .map(|i| [1.6, 1.1, 1.0, 1.0, 1.0, 1.0, 1.02][i])
            .collect();
        let mut m = Simulated::new(cost, 0.1, seed);
        let o = opts(&[7], false);
        let mut st = RaceState::default();
        race(&mut m, 7, &o, &mut st).unwrap();
        let measures = st.decisions.iter().filter(|d| d.action != "drop").count();
        assert!(measures <= 7 + 10, "seed {seed}: {measures} rounds");
        assert!(st.runs <= o.budget);
    }
}
/// The zoom's targets over `seeds` seeds of a cost over `dims` (linear
/// grids): the best's true cost within 5 % of the grid's true best in
/// at least 95 % of seeds, never above the default budget, and
/// `settled` only with no untried value in the bracket. Returns the
/// runs spent at most.
fn zoom_targets(
    name: &str,
    cost: &[f64],
    dims: &[usize],
    sigma: f64,
    seeds: u64,
    load: bool,
) -> usize {
    let n = cost.len();
    let truth = cost.iter().copied().fold(f64::INFINITY, f64::min);
    let o = opts(dims, false);
    let (mut within, mut max_runs) = (0, 0);
    for seed in 0..seeds {
        let mut m = Simulated::with_load(cost.to_vec(), sigma, busy(load, seed), seed);
        let mut st = RaceState::default();
        coordinate(&mut m, dims, &o, &mut st).unwrap();
        let a = answer(&m, n, &o, &st).unwrap();
        let b = bracket(&m, dims, &o, &a);
        assert_eq!(st.runs, m.samples.iter().map(Vec::len).sum::<usize>());
        assert!(!st.settled || b.untried == 0, "{name}, seed {seed}");
        // Every tried value outside the bracket is worse than the best.
        let at = positions(dims, a.best);
        for (k, r) in b.ranges.iter().enumerate() {
            let (lo, hi) = r.unwrap();
            assert!((lo..=hi).contains(&at[k]), "{name}, seed {seed}");
            for &g in &a.as_good {
                let p = positions(dims, g);
                let same_line = (0..dims.len()).all(|j| j == k || p[j] == at[j]);
                assert!(!same_line || (lo..=hi).contains(&p[k]), "{name}");
            }
        }
        max_runs = max_runs.max(st.runs);
        within += usize::from(cost[a.best] <= 1.05 * truth);
    }
    assert!(
        max_runs <= o.budget,
        "{name}: {max_runs} runs > budget {}",
        o.budget
    );
    // 37 of 40: the 95 % target, less a binomial margin for 40 seeds
    // (examples/search_figures runs 100 seeds of each).
    assert!(
        within * 40 >= 37 * seeds as usize,
        "{name}, load {load}: best within 5 % in {within} of {seeds}"
    );
    max_runs
}

/// With `load`, how much slower a busy round of seed `seed` is: +30 %
/// to +100 % across seeds.
fn busy(load: bool, seed: u64) -> f64 {
    if load {
        0.3 + 0.1 * (seed % 8) as f64
    } else {
        0.0
    }
}

/// A/b + b over b = 1 ... n (linear), its optimum at `at`: the shape of
/// a batch size's fixed cost per batch against a cost per item.
fn u_shape(n: usize, at: f64) -> Vec<f64> {
    (1..=n).map(|b| at * at / b as f64 + b as f64).collect()
}

/// The zoom on a U-shaped cost over `n` linear values, its optimum in the
/// first, middle or last tenth, without and with load; 40 seeds of each
/// keep a debug build's test short (examples/search_figures runs 100).
/// One test per grid size, so they run side by side.
fn zoom_finds_u_shaped_optima(n: usize) {
    for (place, at) in [("first", 0.05), ("middle", 0.5), ("last", 0.95)] {
        for load in [false, true] {
            let name = format!("{n} values, optimum in the {place} tenth");
            let cost = u_shape(n, (at * n as f64).max(2.0));
            let runs = zoom_targets(&name, &cost, &[n], 0.05, 40, load);
            if n == 4096 {
                assert!(runs * 50 <= n * 10, "{name}: {runs} runs > 2 %");
            }
        }
    }
}

#[test]
fn zoom_finds_u_shaped_optima_on_64_linear_values() {
    zoom_finds_u_shaped_optima(64);
}

#[test]
fn zoom_finds_u_shaped_optima_on_512_linear_values() {
    zoom_finds_u_shaped_optima(512);
}

#[test]
fn zoom_finds_u_shaped_optima_on_4096_linear_values() {
    zoom_finds_u_shaped_optima(4096);
}

#[test]
fn zoom_on_a_flat_bottom_and_a_noisy_plateau() {
    // 512 values within 1 % over 40 values around 300, then a steep rise.
    let flat: Vec<f64> = (0..512)
        .map(|i| {
            let d = (i as f64 - 300.0).abs() / 20.0;
            1.0 + 0.01 * d.min(1.0) + 0.2 * (d - 1.0).max(0.0).powi(2)
        })
        .collect();
    for load in [false, true] {
        zoom_targets("flat bottom over 512", &flat, &[512], 0.05, 40, load);
    }
    // A plateau over 100 ... 399 of 512 and 15 % noise.
    let plateau: Vec<f64> = (0..512)
        .map(|i| if (100..400).contains(&i) { 1.0 } else { 1.6 })
        .collect();
    for load in [false, true] {
        zoom_targets("plateau, 15 % noise", &plateau, &[512], 0.15, 40, load);
    }
}

#[test]
fn zoom_along_two_linear_parameters_with_an_interaction() {
    // 256 x 16 values: b's optimum moves with c (a tilted valley), the
    // best at b = 80, c = 4.
    let dims = [256usize, 16];
    let cost: Vec<f64> = (0..dims[0] * dims[1])
        .map(|g| {
            let (b, c) = ((g % dims[0]) as f64 + 1.0, (g / dims[0]) as f64);
            let at = 80.0 + 8.0 * (c - 4.0);
            (at * at / b + b) / (2.0 * at) + 0.02 * (c - 4.0).powi(2)
        })
        .collect();
    for load in [false, true] {
        zoom_targets("256 x 16, tilted", &cost, &dims, 0.05, 40, load);
    }
}

#[test]
fn an_unordered_list_races_every_value() {
    let cost = [1.3, 1.0, 1.5, 1.2, 1.4, 1.25, 1.6, 1.1];
    let o = SearchOptions {
        ordered: vec![false],
        ..opts(&[8], false)
    };
    for seed in 0..20 {
        let mut m = Simulated::new(cost.to_vec(), 0.05, seed);
        let mut st = RaceState::default();
        coordinate(&mut m, &[8], &o, &mut st).unwrap();
        assert!((0..8).all(|i| m.count(i) > 0), "seed {seed}");
        let a = answer(&m, 8, &o, &st).unwrap();
        assert_eq!(a.best, 1, "seed {seed}");
        assert_eq!(bracket(&m, &[8], &o, &a).ranges, vec![None]);
    }
}

#[test]
fn the_zoom_splits_the_gaps_around_the_leader_in_thirds() {
    assert_eq!(split_gap(0, 9), vec![3, 6]);
    assert_eq!(split_gap(4, 7), vec![5, 6]);
    assert_eq!(split_gap(4, 5), Vec::<usize>::new());
    assert_eq!(split_gap(-1, 2), vec![0, 1]);
    assert_eq!(split_gap(-1, 3), vec![0, 2]);
    // Leader 6 between entered 0 and 12: both gaps split.
    assert_eq!(
        zoom_points(&[0, 6, 12], &[6], 6, 13, true),
        vec![2, 4, 8, 10]
    );
    // The leader's gaps are closed: the widest gap in the bracket.
    let entered = [0, 4, 5, 6, 12];
    assert_eq!(
        zoom_points(&entered, &[4, 5, 6], 5, 13, true),
        Vec::<usize>::new()
    );
    assert_eq!(zoom_points(&entered, &[4, 5, 6], 5, 13, false), vec![8, 10]);
    assert_eq!(
        zoom_points(&entered, &[5], 5, 13, false),
        Vec::<usize>::new()
    );
}

#[test]
fn the_default_budget_is_at_most_2_percent_of_4096_values() {
    assert!(SearchOptions::default_budget(&[4096], 10) * 50 <= 4096 * 10);
    assert_eq!(SearchOptions::default_budget(&[64], 10), 256);
    assert_eq!(
        SearchOptions::default_budget(&[8, 6, 5], 10),
        960,
        "three parameters keep 40 %"
    );
}

#[test]
fn lines_keep_to_their_parameter_s_budget_and_passes_stop_on_small_moves() {
    // A tilted 8 x 8 bowl with little noise: from the middle, the first
    // pass moves y by two (4 to 2) and x not at all, so no second pass;
    // the polish walks the rest of the way.
    let dims = [8, 8];
    let cost = tilted_bowl(&dims, &[5, 2]);
    let o = opts(&dims, false);
    for seed in 0..5 {
        let mut m = Simulated::new(cost.clone(), 0.01, seed);
        let mut st = RaceState::default();
        coordinate(&mut m, &dims, &o, &mut st).unwrap();
        assert!(
            !st.decisions.iter().any(|d| d.reason.starts_with("pass 2")),
            "seed {seed}: a second pass after a move of two"
        );
        let a = answer(&m, 64, &o, &st).unwrap();
        assert_eq!(a.best, grid_index(&dims, &[5, 2]), "seed {seed}");
    }
    // The tilted 256 x 16 valley: the first line stays within a
    // one-parameter search's budget of 256 values (filling its bracket
    // spent 900 to 1,600 runs), and the second pass runs (b moved far).
    let dims = [256usize, 16];
    let cost: Vec<f64> = (0..dims[0] * dims[1])
        .map(|g| {
            let (b, c) = ((g % dims[0]) as f64 + 1.0, (g / dims[0]) as f64);
            let at = 80.0 + 8.0 * (c - 4.0);
            (at * at / b + b) / (2.0 * at) + 0.02 * (c - 4.0).powi(2)
        })
        .collect();
    let o = opts(&dims, false);
    let mut m = Simulated::new(cost, 0.05, 1);
    let mut st = RaceState::default();
    coordinate(&mut m, &dims, &o, &mut st).unwrap();
    let first: usize = st
        .decisions
        .iter()
        .filter(|d| d.reason.starts_with("pass 1, line 1:"))
        .map(|d| d.runs_each.unwrap_or(0) * d.points.len())
        .sum();
    let budget = SearchOptions::default_budget(&[256], 10);
    assert!(first > 0 && first <= budget, "{first} runs > {budget}");
    assert!(st.decisions.iter().any(|d| d.reason.starts_with("pass 2")));
}
