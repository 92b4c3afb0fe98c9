//! Datasets the table model's tests and the renderings' tests (in the
//! crates above, through the `test-support` feature) are built from.

use crate::import::dataset::{Benchmark, Dataset, Series};

pub fn series(metric: &str, unit: &str, higher_is_better: bool, values: Vec<f64>) -> Series {
    Series {
        metric: metric.into(),
        unit: unit.into(),
        higher_is_better,
        exact: false,
        values,
    }
}

pub fn bench(name: &str, series: Vec<Series>) -> Benchmark {
    Benchmark {
        name: name.into(),
        parameters: Vec::new(),
        series,
    }
}

pub fn dataset(source: &str, benchmarks: Vec<Benchmark>) -> Dataset {
    Dataset {
        source: source.into(),
        format: "cmdscope".into(),
        benchmarks,
        rss_floor: None,
    }
}

/// A baseline, a candidate matching it, and one whose only benchmark was
/// renamed: the gate compares nothing of the last.
pub fn renamed_candidate() -> Vec<Dataset> {
    vec![
        dataset("old", vec![bench("a", vec![wall(0.1)])]),
        dataset("judged", vec![bench("a", vec![wall(0.1)])]),
        dataset("renamed", vec![bench("b", vec![wall(0.1)])]),
    ]
}

/// Ten deterministic, distinct samples around `center` (± 2.25%).
pub fn spread(center: f64) -> Vec<f64> {
    // A fixed shuffle so the order carries no trend.
    [3, 7, 0, 9, 4, 1, 8, 5, 2, 6]
        .iter()
        .map(|&k: &i32| center * (1.0 + 0.005 * (f64::from(k) - 4.5)))
        .collect()
}

pub fn wall(center: f64) -> Series {
    series("time_wall_clock", "s", false, spread(center))
}

/// Baseline and a candidate 20% slower in wall time on both benchmarks.
pub fn slowdown_pair() -> Vec<Dataset> {
    vec![
        dataset(
            "old.json",
            vec![
                bench("sleep 0.1", vec![wall(0.100)]),
                bench("./fast", vec![wall(0.002)]),
            ],
        ),
        dataset(
            "new.json",
            vec![
                bench("sleep 0.1", vec![wall(0.120)]),
                bench("./fast", vec![wall(0.0024)]),
            ],
        ),
    ]
}
