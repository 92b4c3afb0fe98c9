//! Simulated histories with known change points (seeded, so a failure
//! reproduces): the steps must be found where they are, drift and outlier
//! sessions must not be reported as steps, and a steady history must stay
//! quiet in at least 95 % of seeds.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::store::history::History;

/// Runs per simulated session.
const RUNS: usize = 10;

use super::simulated::normal;

/// A history of sessions whose true time is `level(i)` seconds: each
/// session is off by 1 % (machine state between sessions), each run by 3 %,
/// and one run in 20 is a spike 20-50 % slow (interrupts, page cache).
fn history(seed: u64, n: usize, level: impl Fn(usize) -> f64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let session = level(i) * (0.01 * normal(&mut rng)).exp();
            (0..RUNS)
                .map(|_| {
                    let spike = if rng.random::<f64>() < 0.05 {
                        1.2 + 0.3 * rng.random::<f64>()
                    } else {
                        1.0
                    };
                    session * (0.03 * normal(&mut rng)).exp() * spike
                })
                .collect()
        })
        .collect()
}

fn step(at: usize, factor: f64) -> impl Fn(usize) -> f64 {
    move |i| if i >= at { 0.1 * factor } else { 0.1 }
}

#[test]
fn steps_of_5_10_and_25_percent_are_found_at_their_session() {
    for (factor, at) in [(1.05, 40), (1.10, 25), (1.25, 60), (0.95, 50)] {
        for seed in 0..20 {
            let h = history(seed, 80, step(at, factor));
            let c = detect(&h, &Params::default());
            assert_eq!(c.len(), 1, "factor {factor} seed {seed}: {c:?}");
            assert!(
                c[0].index.abs_diff(at) <= 1,
                "factor {factor} seed {seed}: at {}",
                c[0].index
            );
            let want = if factor > 1.0 {
                Direction::Slower
            } else {
                Direction::Faster
            };
            assert_eq!(c[0].direction, want);
            // The runs-based ratio estimates the step (1 % session noise
            // over 10 sessions each side: well within 2 %).
            let cmp = &c[0].comparison;
            assert!(
                (cmp.ratio / factor - 1.0).abs() < 0.02,
                "factor {factor} seed {seed}: ratio {}",
                cmp.ratio
            );
            assert!(cmp.ratio_ci[0] <= cmp.ratio && cmp.ratio <= cmp.ratio_ci[1]);
            // One analysis: significant at the level, interval excludes 1.
            assert!(cmp.p_value < 0.01 && (cmp.ratio_ci[0] > 1.0 || cmp.ratio_ci[1] < 1.0));
        }
    }
}

#[test]
fn slow_drift_is_a_drift_not_a_step() {
    // +20 % over 100 sessions, 0.2 % per session: one slide over the
    // whole history, still going on.
    for seed in 0..20 {
        let h = history(100 + seed, 100, |i| 0.1 * (1.0 + 0.002 * i as f64));
        let f = find(&h, &Params::default());
        assert!(f.changes.is_empty(), "seed {seed}: {:?}", f.changes);
        assert_eq!(f.drifts.len(), 1, "seed {seed}: {:?}", f.drifts);
        // Over the whole history; its ends are where noise lets a flat
        // stretch fit as well as the slide.
        let d = &f.drifts[0];
        assert!(d.start <= 15 && d.end >= 84, "seed {seed}: {d:?}");
        assert_eq!(d.direction(), Direction::Slower);
        assert!((d.ratio() / 1.2 - 1.0).abs() < 0.05, "seed {seed}: {d:?}");
    }
}

#[test]
fn a_single_outlier_session_is_not_a_step() {
    for seed in 0..20 {
        let h = history(200 + seed, 60, |i| if i == 30 { 0.14 } else { 0.1 });
        let c = detect(&h, &Params::default());
        assert!(c.is_empty(), "seed {seed}: {c:?}");
    }
}

#[test]
fn steady_history_of_100_sessions_is_quiet_in_95_percent_of_seeds() {
    let quiet = (0..200)
        .filter(|&seed| detect(&history(1000 + seed, 100, |_| 0.1), &Params::default()).is_empty())
        .count();
    assert!(quiet >= 190, "quiet in only {quiet} of 200 seeds");
}

#[test]
fn improvement_then_regression_are_two_changes() {
    for seed in 0..20 {
        let h = history(300 + seed, 100, |i| match i {
            0..30 => 0.1,
            30..65 => 0.09,
            _ => 0.1035,
        });
        let c = detect(&h, &Params::default());
        assert_eq!(c.len(), 2, "seed {seed}: {c:?}");
        assert!(c[0].index.abs_diff(30) <= 1 && c[0].direction == Direction::Faster);
        assert!(c[1].index.abs_diff(65) <= 1 && c[1].direction == Direction::Slower);
    }
}

#[test]
fn newest_session_is_compared_with_the_segment_before_it() {
    let mut slower = 0;
    let mut quiet = 0;
    for seed in 0..20 {
        let h = history(400 + seed, 30, |i| if i == 29 { 0.125 } else { 0.1 });
        if let Some(c) = newest_against_history(&h, &Params::default()) {
            assert_eq!(c.index, 29);
            // Only the stable segment since the last change, at most `window`.
            assert_eq!(c.before.first, 19);
            slower += usize::from(c.direction == Direction::Slower && c.fails_gate(10.0));
        }
        let h = history(500 + seed, 30, |i| if i < 15 { 0.08 } else { 0.1 });
        if newest_against_history(&h, &Params::default()).is_none() {
            quiet += 1;
        }
    }
    assert_eq!(slower, 20);
    assert!(quiet >= 18, "quiet in {quiet} of 20");
}

/// A busy machine moved the two sessions before the newest by a few
/// percent, and the newest is 15 times slower: the newest must not make a
/// step of those two (its own runs confirming it) and then be compared with
/// them alone. The stretch it is compared with is found without it.
#[test]
fn a_far_slower_newest_session_is_not_taken_into_a_step_before_it() {
    for seed in 0..20 {
        let h = history(900 + seed, 13, |i| match i {
            0..=9 => 0.0225,
            10 | 11 => 0.0240,
            _ => 0.30,
        });
        let c = newest_comparison(&h, &Params::default()).expect("compared");
        assert!(
            c.comparison.verdict.is_significant() && c.direction == Direction::Slower,
            "seed {seed}: {c:?}"
        );
        assert!(c.fails_gate(10.0), "seed {seed}: {c:?}");
        assert!(newest_against_history(&h, &Params::default()).is_some());
    }
}

#[test]
fn hampel_replaces_an_isolated_outlier_and_keeps_a_step() {
    let mut x = vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0];
    x[3] = 2.0;
    assert_eq!(hampel(&x, 1e-3)[3], 1.01);
    let s = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0];
    assert_eq!(hampel(&s, 1e-3), s.to_vec());
}

#[test]
fn too_short_or_empty_histories_have_no_changes() {
    assert!(detect(&[], &Params::default()).is_empty());
    assert!(detect(&vec![vec![0.1]; 4], &Params::default()).is_empty());
    assert!(newest_against_history(&[vec![0.1, 0.2]], &Params::default()).is_none());
    // Identical values (a coarse timer): no noise, no change.
    assert!(detect(&vec![vec![0.1; 5]; 40], &Params::default()).is_empty());
}

#[test]
fn counts_with_zeros_are_compared_on_plain_medians() {
    // Page faults: mostly 0, then 3 per run from session 20 on.
    let h: Vec<Vec<f64>> = (0..40)
        .map(|i| {
            (0..10)
                .map(|r| {
                    if i >= 20 {
                        3.0
                    } else {
                        f64::from(u8::from(r == 0 && i % 7 == 0))
                    }
                })
                .collect()
        })
        .collect();
    let faults = Params {
        metric: Some(crate::metrics::Metric::MajorFaults),
        ..Params::default()
    };
    let c = detect(&h, &faults);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].index, 20);
    // Counts get the engine's exact rank test.
    assert_eq!(c[0].comparison.test.name(), "Mann-Whitney U");
    assert_eq!(c[0].direction, Direction::Slower);
    assert_eq!(c[0].before.median, 0.0);
    assert_eq!(c[0].after.median, 3.0);
}

/// A count whose runs take one of two paths (1,000 or 1,300 faults), the
/// slower one a fifth of the time, then, from session 30, most of the time:
/// the program changed, and `changes` says so for a count, as the engine
/// compares counts without looking for speeds. The same runs as times are
/// a machine's two speeds, every session holding both, and no change.
#[test]
fn two_paths_of_a_count_are_no_speeds_but_two_speeds_of_a_time_are() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let h: Vec<Vec<f64>> = (0..60)
        .map(|i| {
            let slow = if i < 30 { 0.2 } else { 0.7 };
            (0..10)
                .map(|_| {
                    let path = if rng.random::<f64>() < slow {
                        1300.0
                    } else {
                        1000.0
                    };
                    path + f64::from(rng.random_range(0..5u8))
                })
                .collect()
        })
        .collect();
    let counts = Params {
        metric: Some(crate::metrics::Metric::MinorFaults),
        ..Params::default()
    };
    assert!(detect::at_one_speed(&h, &counts).1.is_none());
    let c = detect(&h, &counts);
    assert_eq!(c.len(), 1, "{c:?}");
    assert!((28..=32).contains(&c[0].index), "{c:?}");
    assert_eq!(c[0].direction, Direction::Slower);
    let times = Params {
        metric: Some(crate::metrics::Metric::WallTime),
        ..Params::default()
    };
    let as_times: Vec<Vec<f64>> = h
        .iter()
        .map(|r| r.iter().map(|v| v * 1e-5).collect())
        .collect();
    assert!(detect::at_one_speed(&as_times, &times).1.is_some());
    assert_eq!(detect(&as_times, &times), Vec::new());
}

#[test]
fn steps_below_min_change_are_left_out() {
    // A quiet machine: 0.1 % session noise, 0.3 % run noise, a 1 % step.
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let h: Vec<Vec<f64>> = (0..60)
        .map(|i| {
            let level = if i >= 30 { 0.101 } else { 0.1 } * (0.001 * normal(&mut rng)).exp();
            (0..10)
                .map(|_| level * (0.003 * normal(&mut rng)).exp())
                .collect()
        })
        .collect();
    let all = Params {
        min_change: Some(0.0),
        ..Params::default()
    };
    let c = detect(&h, &all);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].index, 30);
    assert!(detect(&h, &Params::default()).is_empty());
    assert!(c[0].is_at_least(0.009) && !c[0].is_at_least(0.02));
}

#[test]
fn seeded_series_of_every_kind_are_scored() {
    use simulated::Kind;
    let all = simulated::suite(1);
    let found: Vec<_> = all
        .iter()
        .map(|s| simulated::Detected::by_cmdscope(&s.sessions))
        .collect();
    let (rows, total) = score::score(&all, &found);
    println!(
        "{}",
        score::table("cmdscope changes, seed 1", &rows, &total)
    );
    let row = |k: Kind| rows.iter().find(|r| r.0 == k).unwrap().1;
    assert!(total.f1() >= 0.97, "F1 {}", total.f1());
    let stairs = row(Kind::Staircase);
    assert_eq!(stairs.matched, stairs.truth, "staircase steps missed");
    for k in [Kind::Steady, Kind::Drift, Kind::Outliers, Kind::Bimodal] {
        assert_eq!(row(k).false_alarm_series, 0, "{}", k.name());
    }
    let ep = row(Kind::Episode);
    assert!(
        ep.episodes_named * 100 >= ep.episodes * 95,
        "episodes named {}/{}",
        ep.episodes_named,
        ep.episodes
    );
}

/// Stored-history form of simulated series: one machine, session ids 1..
fn stored(series: &[simulated::Series]) -> Vec<History> {
    use crate::store::history::{Point, SessionRef};
    series
        .iter()
        .map(|s| History {
            benchmark: s.name.clone(),
            metric: crate::metrics::Metric::WallTime.name().into(),
            fingerprint: "0123456789abcdef".into(),
            hostname: "sim".into(),
            points: s
                .sessions
                .iter()
                .enumerate()
                .map(|(i, runs)| Point {
                    sessions: vec![std::sync::Arc::new(SessionRef {
                        id: i as i64 + 1,
                        started: format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60),
                        started_unix: 1.7e9 + i as f64,
                        labels: vec![("commit".into(), format!("c{i}"))],
                        search: None,
                    })],
                    key: None,
                    runs: runs.clone(),
                })
                .collect(),
        })
        .collect()
}

#[test]
fn a_shift_of_most_benchmarks_at_one_session_is_the_machines() {
    use simulated::Kind;
    let mut series: Vec<_> = (0..simulated::MACHINE_BENCHMARKS as u64)
        .map(|i| simulated::series(Kind::MachineWide, 7000 + i))
        .collect();
    let at = series[0].changes[0];
    series.extend((0..3).map(|i| simulated::series(Kind::Steady, 7100 + i)));
    let analysed = analyse(stored(&series), &Params::default());
    let shifts = machine_shifts(&analysed);
    assert_eq!(shifts.len(), 1, "{shifts:?}");
    let s = &shifts[0];
    assert_eq!(s.point.sessions[0].id, at as i64 + 1);
    assert_eq!(s.of, 15);
    assert!(s.benchmarks.len() >= 11, "{:?}", s.benchmarks);
    // The benchmarks keep their own entries.
    for name in &s.benchmarks {
        let a = analysed.iter().find(|a| &a.history.benchmark == name);
        assert!(a.is_some_and(|a| a.changes.len() == 1), "{name}");
    }

    // One benchmark of several stepping alone is its own change.
    let mut alone = vec![simulated::series(Kind::Step, 7200)];
    alone.extend((0..3).map(|i| simulated::series(Kind::Steady, 7300 + i)));
    assert!(machine_shifts(&analyse(stored(&alone), &Params::default())).is_empty());
}

#[test]
fn an_episode_is_one_event_with_its_start_end_and_size() {
    // 7 % faster for sessions 15..=18, then back.
    let h = history(
        9000,
        40,
        |i| if (15..19).contains(&i) { 0.093 } else { 0.1 },
    );
    let f = find(&h, &Params::default());
    assert!(f.changes.is_empty(), "{:?}", f.changes);
    assert_eq!(f.episodes.len(), 1);
    let e = &f.episodes[0];
    assert_eq!((e.start, e.end), (15, 18));
    assert_eq!(e.direction(), Direction::Faster);
    assert!((e.ratio() / 0.93 - 1.0).abs() < 0.02, "ratio {}", e.ratio());
    assert_eq!(e.leave.direction, Direction::Slower);
    // An episode that has ended is no open regression, and the newest
    // session is compared with the points after it.
    let a = &analyse(
        stored(&[simulated::Series {
            kind: simulated::Kind::Episode,
            name: "episode".into(),
            sessions: h,
            noise: simulated::Noise::Model,
            changes: vec![],
            episodes: vec![(15, 18)],
            drifts: vec![],
        }]),
        &Params::default(),
    )[0];
    assert!(a.open_regression().is_none());
    assert_eq!(a.newest_status, NewestStatus::NoChange);
}

/// A 3-point episode of +20 % in a short history (12 to 20 sessions, the
/// episode from the fourth) is one episode at its sessions. Noise that is
/// not the model's: runs uniform within ±1 %, sessions uniform within
/// ±0.5 %. In so short a history most of the differences 3 or 4 sessions
/// apart straddle the episode's edges, and a noise estimate read off them
/// hid it.
#[test]
fn a_short_episode_in_a_short_history_is_found() {
    for n in [12, 15, 20] {
        for seed in 0..10u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let h: Vec<Vec<f64>> = (0..n)
                .map(|i| {
                    let level = if (3..6).contains(&i) { 0.096 } else { 0.080 };
                    let session = level * (1.0 + 0.01 * (rng.random::<f64>() - 0.5));
                    (0..10)
                        .map(|_| session * (1.0 + 0.02 * (rng.random::<f64>() - 0.5)))
                        .collect()
                })
                .collect();
            let f = find(&h, &Params::default());
            assert!(f.changes.is_empty(), "n {n} seed {seed}: {f:?}");
            assert_eq!(f.episodes.len(), 1, "n {n} seed {seed}: {f:?}");
            let e = &f.episodes[0];
            assert_eq!((e.start, e.end), (3, 5), "n {n} seed {seed}");
            assert!((e.ratio() / 1.2 - 1.0).abs() < 0.02, "ratio {}", e.ratio());
        }
    }
}

/// The seeded locations that long histories are partitioned over find the
/// changes the exact partition finds, on every simulated series: both are
/// run on each, and the confirmed changes must be the same.
#[test]
fn seeded_locations_find_what_the_exact_partition_finds() {
    let exact = Params::default();
    let seeded = Params {
        exact_up_to: 0,
        ..exact
    };
    let mut differ = Vec::new();
    for seed in [1, 2] {
        for s in simulated::suite(seed) {
            let at = |p: &Params| -> Vec<usize> {
                detect(&s.sessions, p).iter().map(|c| c.index).collect()
            };
            let (a, b) = (at(&exact), at(&seeded));
            if a != b {
                differ.push(format!("{}: {a:?} against {b:?}", s.name));
            }
        }
    }
    assert!(differ.is_empty(), "{differ:#?}");
}

/// A history of 10,000 sessions, partitioned over seeded locations: two
/// steps and an episode of four sessions in the middle, each found where
/// it is, and nothing else.
#[test]
fn a_long_history_keeps_its_steps_and_a_short_episode() {
    let level = |i: usize| {
        let mut v = 0.1;
        if i >= 3000 {
            v *= 1.10;
        }
        if (5000..5004).contains(&i) {
            v *= 0.93;
        }
        if i >= 7000 {
            v *= 0.95;
        }
        v
    };
    let h = history(11, 10_000, level);
    assert!(h.len() > segment::EXACT_UP_TO);
    let points = change_points(&summaries(&h), &Params::default());
    let want = [3000, 5000, 5004, 7000];
    assert_eq!(points.len(), want.len(), "{points:?}");
    for (got, want) in points.iter().zip(want) {
        assert!(got.abs_diff(want) <= 1, "{points:?}");
    }
}

/// `changes --run` and `--since` select from the analysis of the whole
/// history: a session's change points and level, and the change points at
/// or after a session or a moment.
#[test]
fn a_sessions_changes_and_level_and_the_changes_since_a_session() {
    use super::select::{at_sessions, since, Regime, Since};
    // +10 % from session 20 on; 7 % slower for sessions 50..=53, then back.
    let level = |i: usize| {
        let step = if i >= 20 { 1.10 } else { 1.0 };
        let episode = if (50..54).contains(&i) { 1.07 } else { 1.0 };
        0.1 * step * episode
    };
    let h = history(9100, 80, level);
    let all = analyse(
        stored(&[simulated::Series {
            kind: simulated::Kind::Step,
            name: "b".into(),
            sessions: h,
            noise: simulated::Noise::Model,
            changes: vec![20],
            episodes: vec![(50, 53)],
            drifts: vec![],
        }]),
        &Params::default(),
    );
    let a = &all[0];
    assert_eq!(a.changes.len(), 1, "{:?}", a.changes);
    assert_eq!(a.episodes.len(), 1, "{:?}", a.episodes);
    let cp = a.changes[0].index;
    let (start, end) = (a.episodes[0].start, a.episodes[0].end);
    assert!(
        cp.abs_diff(20) <= 1 && start.abs_diff(50) <= 1 && end.abs_diff(53) <= 1,
        "{cp} {start} {end}"
    );
    // Session ids are point indices + 1.
    let at = |i: usize| {
        let mut v = at_sessions(&all, &[i as i64 + 1]);
        assert_eq!(v.len(), 1);
        v.remove(0)
    };
    let here = at(cp);
    assert!(here.introduced() && here.changes.len() == 1);
    assert!(matches!(here.regime, Regime::Since(c) if c.index == cp));
    let before = at(cp - 1);
    assert!(!before.introduced() && !before.regime.changed());
    assert_eq!(before.regime, Regime::First);
    let entering = at(start);
    assert_eq!(entering.entered.len(), 1);
    assert!(matches!(entering.regime, Regime::Episode(_)));
    assert!(matches!(at(end).regime, Regime::Episode(_)) && !at(end).introduced());
    let back = at(end + 1);
    assert_eq!(back.left.len(), 1);
    assert!(matches!(back.regime, Regime::Since(c) if c.index == cp));
    let later = at(70);
    assert!(!later.introduced() && later.regime.changed());
    assert!(at_sessions(&all, &[1000]).is_empty());

    let from = |i: usize| Since::session(&a.history.points[i].sessions[0]);
    let kept = |s: Since| {
        let (k, _) = since(all.clone(), Vec::new(), &s);
        k.first().map(|a| (a.changes.len(), a.episodes.len()))
    };
    assert_eq!(kept(from(0)), Some((1, 1)));
    assert_eq!(kept(from(cp)), Some((1, 1)));
    assert_eq!(kept(from(cp + 1)), Some((0, 1)));
    // An episode counts while its point after (where it ends) is kept.
    assert_eq!(kept(from(end + 1)), Some((0, 1)));
    assert_eq!(kept(from(end + 2)), Some((0, 0)));
    // A moment: sessions started at or after it; after the newest, no history.
    let t = a.history.points[cp].sessions[0].started_unix;
    assert_eq!(kept(Since::moment(t)), Some((1, 1)));
    assert_eq!(kept(Since::moment(t + 0.5)), Some((0, 1)));
    assert_eq!(kept(Since::moment(2e9)), None);
    // Sessions started in the same second are ordered by id.
    let s = &a.history.points[cp].sessions[0];
    let twin = |id: i64| crate::store::history::SessionRef {
        id,
        ..(**s).clone()
    };
    assert!(Since::session(s).admits(&twin(s.id + 1)));
    assert!(!Since::session(s).admits(&twin(s.id - 1)));
}

/// What `find` reports on each series, scored on events.
fn event_scores(
    all: &[simulated::Series],
) -> Vec<(simulated::Noise, simulated::Kind, score::EventScore)> {
    let found: Vec<_> = all
        .iter()
        .map(|s| simulated::Detected::by_cmdscope(&s.sessions))
        .collect();
    score::score_events(all, &found, false).0
}

/// Machines whose level wanders (AR(1) between sessions, stationary SD of
/// half the smallest change: 95 % of sessions within ± the smallest
/// change) and machines whose runs fall into two speeds, in steady
/// histories drawn with noise that is not cmdscope's model: at most 2 false
/// alarms per 1,000 sessions (5,000 sessions of each).
#[test]
fn wandering_and_two_speed_machines_raise_at_most_2_false_alarms_per_1000_sessions() {
    use simulated::{Kind, Noise};
    for noise in [Noise::Wander, Noise::TwoSpeeds] {
        let all: Vec<_> = (0..50)
            .map(|i| simulated::rough_series(Kind::Steady, noise, 39_000 + i))
            .collect();
        let rows = event_scores(&all);
        let s = rows[0].2;
        assert_eq!(s.sessions, 5000);
        assert!(
            s.false_alarms <= 10,
            "{}: {} false alarms in {} sessions",
            noise.name(),
            s.false_alarms,
            s.sessions
        );
    }
}

/// A slide of 3-10 % over 10-50 sessions is one drift with its start and
/// end within 3 sessions of the truth and its size within 30 %, in at
/// least 9 histories of 10, on a quiet machine (each session's median
/// moving by about 0.5 %). With louder sessions the ends cannot be located
/// that closely by any fit of the slide (docs/CHANGES.md has the figures).
#[test]
fn slides_of_3_to_10_percent_are_drifts_with_start_end_and_size() {
    use simulated::{Kind, Noise};
    let all: Vec<_> = (0..10)
        .map(|i| simulated::rough_series(Kind::Slide, Noise::Quiet, 39_100 + i))
        .collect();
    let s = event_scores(&all)[0].2;
    assert!(s.hits >= 9, "{} of 10 slides found", s.hits);
    assert!(
        s.one_drift_located >= 9,
        "{} of 10 told as one drift",
        s.one_drift_located
    );
}

/// The same promise on quiet machines whose noise is not log-normal: runs
/// and sessions off by Student's t with 3 degrees of freedom (rare values
/// far out, no spikes needed), or by an exponential skewed to the slow
/// side, at the quiet family's scales (1 % per run, 0.3 % per session). A
/// slide of 3-10 % over 10-50 sessions is one drift, its start and end
/// within 3 sessions of the truth and its size within 30 %, in at least 9
/// histories of 10 for each.
#[test]
fn slides_on_quiet_machines_with_heavy_tailed_or_skewed_noise_are_located() {
    use simulated::{Detected, Kind, Noise, Series};
    type Draw = fn(&mut ChaCha8Rng) -> f64;
    let skewed: Draw = |rng| -(1.0 - rng.random::<f64>()).ln() - 1.0;
    let heavy: Draw = simulated::t3;
    for (name, draw) in [("heavy tails", heavy), ("skewed", skewed)] {
        let mut located = 0;
        let mut told = Vec::new();
        for i in 0..10 {
            let mut rng = ChaCha8Rng::seed_from_u64(54_000 + i);
            let (start, end, f) = simulated::slide(&mut rng);
            let level = simulated::slide_level(0.05, start, end, f);
            let sessions: Vec<Vec<f64>> = (0..simulated::SESSIONS)
                .map(|s| {
                    let l = level(s) * (0.003 * draw(&mut rng)).exp();
                    (0..RUNS)
                        .map(|_| l * (0.01 * draw(&mut rng)).exp())
                        .collect()
                })
                .collect();
            let d = Detected::by_cmdscope(&sessions);
            let truth = Series {
                kind: Kind::Slide,
                noise: Noise::Quiet,
                name: name.into(),
                sessions,
                changes: Vec::new(),
                episodes: Vec::new(),
                drifts: vec![(start, end, f)],
            };
            located += score::score_events_one(&truth, &d, false).one_drift_located;
            told.push(format!("truth {start}-{end} {f:.3}: {d:?}"));
        }
        assert!(located >= 9, "{name}: {located} of 10\n{}", told.join("\n"));
    }
}

/// On a machine whose runs fall into two speeds 30 % apart (each session
/// a different share of slow runs), a step of 3-15 % is still found where
/// it is.
#[test]
fn two_speed_machines_do_not_hide_a_step_of_a_few_percent() {
    use simulated::{Kind, Noise};
    let all: Vec<_> = (0..10)
        .map(|i| simulated::rough_series(Kind::Step, Noise::TwoSpeeds, 39_200 + i))
        .collect();
    let s = event_scores(&all)[0].2;
    assert!(s.hits >= 9, "{} of 10 steps found", s.hits);
    assert_eq!(s.false_alarms, 0);
}

/// The variogram's degrees of freedom carry the uncertainty of a session
/// variation estimated from few sessions into the verdict: the same
/// difference between two sides is significant over a long history and
/// not over a short one, and every interval agrees with its p-value.
#[test]
fn few_sessions_widen_the_interval_by_their_own_uncertainty() {
    let h = |n: usize| history(39_300, n, |i| if i >= n - 6 { 0.1 * 1.04 } else { 0.1 });
    let p = Params::default();
    let short = newest_comparison(&h(14), &p);
    let long = newest_comparison(&h(200), &p);
    for c in [&short, &long].into_iter().flatten() {
        let cmp = &c.comparison;
        let excludes = cmp.ratio_ci[0] > 1.0 || cmp.ratio_ci[1] < 1.0;
        assert_eq!(cmp.p_value < cmp.level, excludes, "{cmp:?}");
        match cmp.session_variation {
            crate::analysis::comparison::SessionVariation::Included { df, .. } => {
                assert!(df.is_some(), "{cmp:?}")
            }
            ref v => panic!("{v:?}"),
        }
    }
    let df = |c: &Option<Change>| match c.as_ref().map(|c| c.comparison.session_variation) {
        Some(crate::analysis::comparison::SessionVariation::Included { df: Some(d), .. }) => d,
        _ => f64::NAN,
    };
    assert!(
        df(&short) < df(&long),
        "{} against {}",
        df(&short),
        df(&long)
    );
}

/// Three runs of a counted metric (0.1 % noise per run) at `level`.
fn counted_runs(rng: &mut ChaCha8Rng, level: f64) -> Vec<f64> {
    (0..3)
        .map(|_| (level * (0.001 * normal(rng)).exp()).round())
        .collect()
}

/// A cost that creeps up 1.5 % a session after 15 steady ones, with the
/// tiny noise of a counted metric (0.1 % per run, 3 runs a session): one
/// drift, still going on, from within 3 sessions of where it started,
/// that fails a 5 % gate.
#[test]
fn a_creeping_count_is_an_ongoing_drift() {
    let runs = counted_runs;
    let p = Params {
        min_change: Some(0.01),
        ..Params::default()
    };
    for seed in 0..10u64 {
        let mut rng2 = ChaCha8Rng::seed_from_u64(seed);
        let creep: Vec<Vec<f64>> = (0..27)
            .map(|i| runs(&mut rng2, 10_500.0 * 1.015f64.powi((i - 14).max(0))))
            .collect();
        let f = find(&creep, &p);
        assert!(f.changes.is_empty(), "seed {seed}: {:?}", f.changes);
        assert_eq!(f.drifts.len(), 1, "seed {seed}: {f:?}");
        let d = &f.drifts[0];
        assert!(d.ongoing && d.start.abs_diff(15) <= 3, "seed {seed}: {d:?}");
        assert!(d.change.fails_gate(5.0), "seed {seed}: {d:?}");
        // Its slope so far is the creep's 1.5 % a session: a slide still
        // going on is not spread over points it has not slid yet.
        let s = d.per_point().expect("a slope");
        assert!((s.ratio - 1.015).abs() < 0.001, "seed {seed}: {s:?}");
        assert!(s.ratio_ci[0] <= s.ratio && s.ratio <= s.ratio_ci[1]);
    }
}

/// A slide of +1 % a session over 20 sessions between 30 steady ones on
/// each side (1 % session noise, 3 % run noise and spikes): the drift's
/// slope is within 15 % of 1 % a point in every seed, its interval holds
/// the truth in at least 8 of 10 (it does not hold the uncertainty of the
/// ends), and with sessions 12 hours apart the rate per day is the rate
/// per point twice over; sessions a minute apart have none.
#[test]
fn a_drifts_slope_is_its_size_spread_over_its_points_and_days() {
    let truth = 1.01f64;
    let mut covered = 0;
    for seed in 0..10 {
        let h = history(39_400 + seed, 80, |i| {
            0.1 * truth.powi((i as i32 - 29).clamp(0, 21))
        });
        let f = find(&h, &Params::default());
        assert!(f.changes.is_empty(), "seed {seed}: {:?}", f.changes);
        assert_eq!(f.drifts.len(), 1, "seed {seed}: {f:?}");
        let d = &f.drifts[0];
        let s = d.per_point().expect("a slope");
        assert!(
            (s.ratio.ln() / truth.ln() - 1.0).abs() < 0.15,
            "seed {seed}: {s:?} {d:?}"
        );
        assert!(s.ratio_ci[0] <= s.ratio && s.ratio <= s.ratio_ci[1]);
        if s.ratio_ci[0] <= truth && truth <= s.ratio_ci[1] {
            covered += 1;
        }
        let half_days: Vec<f64> = (0..80).map(|i| i as f64 * 43_200.0).collect();
        let day = d.per_day(&half_days).expect("a rate per day");
        assert!(
            (day.ratio / (s.ratio * s.ratio) - 1.0).abs() < 1e-9,
            "{day:?}"
        );
        assert!((day.ratio_ci[0] / (s.ratio_ci[0] * s.ratio_ci[0]) - 1.0).abs() < 1e-9);
        let minutes: Vec<f64> = (0..80).map(|i| i as f64 * 60.0).collect();
        assert_eq!(d.per_day(&minutes), None);
    }
    assert!(
        covered >= 8,
        "the interval held the truth in {covered} of 10"
    );
}

/// A level that wanders by 0.4 % (AR(1), 0.8) over 27 sessions, with the
/// same tiny noise, is no change and fails no gate (seed 4 once read as a
/// 1.0 % drift over sessions 5-11: a ramp tried in place of an unconfirmed
/// step, against the residuals' noise of that step).
#[test]
fn a_wandering_count_is_not_a_change() {
    let mut rng = ChaCha8Rng::seed_from_u64(39);
    let runs = counted_runs;
    let p = Params {
        min_change: Some(0.01),
        ..Params::default()
    };
    for seed in 0..10u64 {
        let mut ar = 0.004 * normal(&mut rng);
        let mut rng2 = ChaCha8Rng::seed_from_u64(100 + seed);
        let wander: Vec<Vec<f64>> = (0..27)
            .map(|_| {
                ar = 0.8 * ar + 0.004 * 0.6 * normal(&mut rng);
                runs(&mut rng2, 10_500.0 * ar.exp())
            })
            .collect();
        let f = find(&wander, &p);
        assert!(
            f.changes.is_empty() && f.drifts.is_empty() && f.episodes.is_empty(),
            "seed {seed}: {f:?}"
        );
        let newest = newest_comparison(&wander, &p);
        assert!(!newest.is_some_and(|c| c.fails_gate(5.0)), "seed {seed}");
    }
}

/// The event scorer tells a slide told as one drift (wherever its ends)
/// from one told as a step, and counts a drift reported where the truth
/// has only a step.
#[test]
fn the_scorer_counts_slides_told_as_one_drift_and_steps_told_as_drifts() {
    use simulated::{Detected, Kind, Noise, Series};
    let truth = |kind: Kind, changes: Vec<usize>, drifts: Vec<(usize, usize, f64)>| Series {
        kind,
        noise: Noise::Model,
        name: String::new(),
        sessions: vec![vec![1.0]; 100],
        changes,
        episodes: Vec::new(),
        drifts,
    };
    let slide = truth(Kind::Slide, Vec::new(), vec![(20, 40, 1.05)]);
    let told = |changes: Vec<usize>, drifts: Vec<(usize, usize, f64)>| Detected {
        changes,
        episodes: Vec::new(),
        drifts,
    };
    // Ends 5 sessions off: not a hit, but one drift.
    let off = score::score_events_one(&slide, &told(Vec::new(), vec![(25, 45, 1.05)]), false);
    assert_eq!(
        (
            off.hits,
            off.one_drift,
            off.one_drift_located,
            off.stray_drifts
        ),
        (0, 1, 0, 0)
    );
    let exact = score::score_events_one(&slide, &told(Vec::new(), vec![(21, 39, 1.05)]), false);
    assert_eq!(
        (exact.hits, exact.one_drift, exact.one_drift_located),
        (1, 1, 1)
    );
    // Ends right, size 40 % off (5 % told as 7 %): one drift, not located.
    let big = score::score_events_one(&slide, &told(Vec::new(), vec![(21, 39, 1.07)]), false);
    assert_eq!((big.hits, big.one_drift, big.one_drift_located), (0, 1, 0));
    // Located, but beside a step inside the slide: a hit, not told as one.
    let beside = told(vec![30], vec![(21, 39, 1.05)]);
    let beside = score::score_events_one(&slide, &beside, false);
    assert_eq!((beside.hits, beside.one_drift_located), (1, 0));
    // A step inside it, or two drifts: not one drift.
    let step = score::score_events_one(&slide, &told(vec![30], Vec::new()), false);
    assert_eq!(step.one_drift, 0);
    let two = told(Vec::new(), vec![(20, 29, 1.02), (31, 40, 1.03)]);
    assert_eq!(score::score_events_one(&slide, &two, false).one_drift, 0);
    let mixed = told(vec![33], vec![(20, 40, 1.05)]);
    assert_eq!(score::score_events_one(&slide, &mixed, false).one_drift, 0);
    // A step told as a drift.
    let stepped = truth(Kind::Step, vec![50], Vec::new());
    let as_drift =
        score::score_events_one(&stepped, &told(Vec::new(), vec![(48, 53, 1.05)]), false);
    assert_eq!((as_drift.hits, as_drift.stray_drifts), (0, 1));
}

/// The oracle of a slide (the least-squares flat–slide–flat fit with one
/// slide, its ends searched over every point) against the Cramér–Rao bound
/// of the ends: on slides drawn with independent normal noise between
/// sessions (one run each, so a session's summary is its log), the share
/// of slides whose start and end the oracle puts within ±3 is near the
/// chance the bound gives, at a noise where that chance is about a half
/// and at one where it is near 1. 300 slides each: the share's SD is at
/// most 0.03, and the bound is a large-sample one (an estimate of an edge
/// can do no better, and at low signal least squares does a little worse).
#[test]
fn the_oracle_locates_slides_about_as_often_as_the_bound_allows() {
    for (sigma, seed) in [(0.012, 61_000u64), (0.005, 62_000)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut located, mut chance) = (0usize, 0.0);
        let count = 300;
        for _ in 0..count {
            let (start, end, f) = simulated::slide(&mut rng);
            let level = simulated::slide_level(0.05, start, end, f);
            let sessions: Vec<Vec<f64>> = (0..simulated::SESSIONS)
                .map(|i| vec![level(i) * (sigma * normal(&mut rng)).exp()])
                .collect();
            let fit = oracle::oracle_fit(&sessions).expect("a fit");
            located += usize::from(fit.first.abs_diff(start) <= 3 && fit.last.abs_diff(end) <= 3);
            chance += oracle::edges_located_chance(simulated::SESSIONS, (start, end, f), sigma, 3)
                .expect("a bound");
        }
        let (rate, chance) = (located as f64 / count as f64, chance / count as f64);
        eprintln!("sigma {sigma}: oracle {rate:.3}, bound {chance:.3}");
        assert!(
            (rate - chance).abs() <= 0.1,
            "sigma {sigma}: the oracle located {rate:.3}, the bound gives {chance:.3}"
        );
    }
}

/// The bound itself: with long flat sides each edge's variance is
/// 2 w² (2w − 1) / ((w − 1)(w − 2)) (σ / size)², w = len + 1, about
/// 4 w (σ / size)² (docs/CHANGES.md derives it), the two edges' errors
/// correlate by −(w + 1)/(2w − 1), and it scales with σ / size.
#[test]
fn the_bound_of_a_slides_edges_has_its_closed_form_with_long_flat_sides() {
    let (len, size, sigma) = (30usize, 0.05f64, 0.01f64);
    let b = segment::edge_bound(100_000, 50_000, 50_000 + len, size, sigma).expect("a bound");
    let w = (len + 1) as f64;
    let closed = sigma / size * w * (2.0 * (2.0 * w - 1.0) / ((w - 1.0) * (w - 2.0))).sqrt();
    assert!(
        (b.start_sd / closed - 1.0).abs() < 0.01,
        "{b:?} against {closed}"
    );
    assert!(
        (b.end_sd / closed - 1.0).abs() < 0.01,
        "{b:?} against {closed}"
    );
    let rho = -(w + 1.0) / (2.0 * w - 1.0);
    assert!((b.correlation - rho).abs() < 0.01, "{b:?} against {rho}");
    let approx = 2.0 * sigma / size * w.sqrt();
    assert!(
        (b.start_sd / approx - 1.0).abs() < 0.05,
        "{b:?} against {approx}"
    );
    let half = segment::edge_bound(100, 35, 35 + len, size, sigma / 2.0).expect("a bound");
    let full = segment::edge_bound(100, 35, 35 + len, size, sigma).expect("a bound");
    assert!((full.start_sd / half.start_sd - 2.0).abs() < 1e-9);
    // Short flat sides leave the levels less known: a wider bound.
    assert!(full.start_sd > closed);
    assert!(segment::edge_bound(100, 0, 30, size, sigma).is_none());
}

/// What cmdscope locates against what is attainable: of the slides of
/// 3–10 % over 10–50 sessions that the oracle (the one-slide least-squares
/// fit, its ends searched everywhere) locates (one drift, start and end
/// within ±3, size within 30 %), cmdscope locates at least 9 of 10 on the
/// quiet family (54 of 54 on seeds 1–3 of the rough suite). Not asserted
/// on the louder families: on skewed noise (1 % sessions, 3 % runs) it
/// located 35 of the oracle's 36 on seeds 1–3 but 8 of 10 on these
/// seeds (72,000 on), and the oracle itself locates about half of those
/// slides (docs/CHANGES.md).
#[test]
fn cmdscope_locates_the_slides_the_oracle_locates_on_quiet_machines() {
    use simulated::{Detected, Kind, Noise};
    let (mut oracle, mut both) = (0, 0);
    for i in 0..20 {
        let s = simulated::rough_series(Kind::Slide, Noise::Quiet, 71_000 + i);
        let o = score::score_events_one(&s, &Detected::by_oracle(&s.sessions), false);
        if o.one_drift_located == 0 {
            continue;
        }
        oracle += 1;
        let c = score::score_events_one(&s, &Detected::by_cmdscope(&s.sessions), false);
        both += c.one_drift_located;
    }
    assert!(oracle >= 10, "the oracle located {oracle} of 20");
    assert!(
        both * 10 >= oracle * 9,
        "cmdscope located {both} of the oracle's {oracle}"
    );
}
