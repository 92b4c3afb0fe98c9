//! What a sweep or an optimum search compares (`--metric`), and where its
//! values come from: a per-run metric of the samples, a count kept per run
//! beside them (a monitor's `monitor_NAME`), or concurrency mode's
//! throughput, one value per batch (batches are the independent units, as
//! `analysis::concurrency` treats them). The sweep and the search read a
//! cell's values only through `Source::tagged`, each value with the block
//! it was measured in, so pairing, the engine's settings and the way a
//! value reads are decided here once for every source.

use crate::analysis::comparison::Settings;
use crate::error::{MetricError, Result};
use crate::metrics::{Metric, Unit};
use crate::run::session::CellResult;

/// `--metric`'s name for concurrency mode's throughput.
pub const THROUGHPUT: &str = "throughput";
/// The prefix of a monitor count's name (`monitor_NAME`).
pub const MONITOR_PREFIX: &str = "monitor_";

/// A cell's values, each with its block (`Source::tagged`).
pub type Tagged = Vec<(usize, Option<f64>)>;

/// What is compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// One of the per-run metrics of the samples.
    Run(Metric),
    /// A count per run kept beside the samples, by its full name
    /// (`monitor_NAME`). Static, as comparisons name their metric: made
    /// once per session by `parse`.
    Series(&'static str),
    /// Completions per second of each batch (concurrency mode).
    Throughput,
}

/// Values counted per run beside the samples (a monitor's counts).
pub trait RunSeries {
    /// The full names of the series (`monitor_NAME`), in order.
    fn series_names(&self) -> Vec<String>;
    /// The series `name` of cell `cell`: one value per measured run, in the
    /// order of the cell's samples (NaN for a run without one).
    fn series(&self, name: &str, cell: usize) -> Vec<f64>;
}

impl Source {
    /// `--metric TEXT`, given the names of the session's series: one line
    /// naming what exists when it is unknown.
    pub fn parse(text: &str, series: &[String]) -> Result<Source> {
        if let Some(m) = Metric::from_name(text) {
            return Ok(Source::Run(m));
        }
        if text == THROUGHPUT {
            return Ok(Source::Throughput);
        }
        if let Some(name) = series.iter().find(|s| *s == text) {
            return Ok(Source::Series(Box::leak(name.clone().into_boxed_str())));
        }
        if let Some(name) = text.strip_prefix(MONITOR_PREFIX) {
            if series.is_empty() {
                return Err(MetricError::NoMonitor {
                    text: text.into(),
                    name: name.into(),
                }
                .into());
            }
            return Err(MetricError::NotAMonitorCount {
                text: text.into(),
                series: series.to_vec(),
                closest: closest(text, series.iter().map(String::as_str)).map(String::from),
            }
            .into());
        }
        let mut names: Vec<String> = Metric::ALL.iter().map(|m| m.name().to_string()).collect();
        names.push(THROUGHPUT.to_string());
        names.extend(series.iter().cloned());
        let closest = closest(text, names.iter().map(String::as_str)).map(String::from);
        Err(MetricError::Unknown {
            text: text.into(),
            names,
            closest,
        }
        .into())
    }

    /// The name in tables, comparisons and the JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Source::Run(m) => m.name(),
            Source::Series(name) => name,
            Source::Throughput => THROUGHPUT,
        }
    }

    /// The unit of the values (throughput reads as a count per second: see
    /// `format`).
    pub fn unit(&self) -> Unit {
        match self {
            Source::Run(m) => m.unit(),
            Source::Series(_) | Source::Throughput => Unit::Count,
        }
    }

    /// One value as the terminal shows it.
    pub fn format(&self, v: f64) -> String {
        match self {
            Source::Throughput => format!("{}/s", crate::units::count(v)),
            _ => crate::units::quantity(v, self.unit()),
        }
    }

    /// Whether more is better whatever the goal says: completions per
    /// second. Every other source is lower-is-better unless the user asks
    /// for `--maximize`.
    pub fn higher_is_better(&self) -> bool {
        matches!(self, Source::Throughput)
    }

    /// Whether one value is one batch rather than one run.
    pub fn per_batch(&self) -> bool {
        matches!(self, Source::Throughput)
    }

    /// What a curve's point shows per value: the median of its runs, or the
    /// mean of its batches' throughputs with Student's t interval (as
    /// `analysis::concurrency` reports a cell's throughput).
    pub fn center_name(&self) -> &'static str {
        if self.per_batch() {
            "mean"
        } else {
            "median"
        }
    }

    /// The engine's settings for comparisons among `family` values of this
    /// source: a metric's own (`Settings::for_metric`); counts are
    /// discrete and have no speed modes (as the monitor's comparisons);
    /// throughputs are continuous.
    pub fn settings(
        &self,
        alpha: f64,
        family: usize,
        precision: f64,
        rss_floor: Option<f64>,
    ) -> Settings {
        let family = family.max(1);
        match self {
            Source::Run(m) => Settings::for_metric(*m, alpha, family, precision, rss_floor),
            Source::Series(_) => Settings {
                family,
                discrete: true,
                speed_modes: false,
                ..Settings::new(alpha, precision)
            },
            Source::Throughput => Settings {
                family,
                counted: "batches",
                ..Settings::new(alpha, precision)
            },
        }
    }

    /// Each value of one cell with its block: the k-th run is in block k
    /// (as `metrics::block_pairs` pairs runs), a batch in its own block.
    /// `series` is the cell's series for a `Series` source (aligned with
    /// its samples), ignored otherwise. `None`: a unit without a value (a
    /// run timed out, removed or without a count; a batch whose slots were
    /// never all busy).
    pub fn tagged(&self, result: &CellResult, series: &[f64]) -> Tagged {
        match self {
            Source::Run(m) => result
                .samples
                .iter()
                .enumerate()
                .map(|(k, s)| (k, s.get(*m).filter(|_| s.counts())))
                .collect(),
            Source::Series(_) => result
                .samples
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let v = series.get(k).copied().filter(|v| v.is_finite());
                    (k, v.filter(|_| s.counts()))
                })
                .collect(),
            Source::Throughput => result
                .batches
                .iter()
                .map(|b| {
                    let f = crate::analysis::concurrency::batch_figures(result, b);
                    (b.block, f.map(|f| f.throughput).filter(|t| *t > 0.0))
                })
                .collect(),
        }
    }
}

/// The closest of `names` to `text` (the edit distance clap uses for its
/// suggestions), when it is close enough to be a typo.
fn closest<'a>(text: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names
        .map(|n| (strsim::jaro(text, n), n))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// The values of two cells from the blocks both were measured in, in
/// matching order; a unit without a value drops its block for this pair
/// only. Each side is in the order measured (blocks ascending).
pub fn join_blocks<B: Ord + Copy>(
    a: &[(B, Option<f64>)],
    b: &[(B, Option<f64>)],
) -> (Vec<f64>, Vec<f64>) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if let (Some(p), Some(q)) = (a[i].1, b[j].1) {
                    x.push(p);
                    y.push(q);
                }
                i += 1;
                j += 1;
            }
        }
    }
    (x, y)
}

/// The values of a tagged list, in order.
pub fn values<B>(tagged: &[(B, Option<f64>)]) -> Vec<f64> {
    tagged.iter().filter_map(|t| t.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Sample;
    use crate::run::plan::{Cell, Variant};
    use crate::run::session::{BatchRecord, Span};

    fn names() -> Vec<String> {
        vec!["monitor_hits".into(), "monitor_misses".into()]
    }

    #[test]
    fn parses_every_kind_and_names_what_exists() {
        assert_eq!(
            Source::parse("time_wall_clock", &[]).unwrap(),
            Source::Run(Metric::WallTime)
        );
        assert_eq!(
            Source::parse("throughput", &[]).unwrap(),
            Source::Throughput
        );
        assert_eq!(
            Source::parse("monitor_hits", &names()).unwrap(),
            Source::Series("monitor_hits")
        );
        // A typo of a monitor name: one line, exit 2, the suggestion.
        let e = Source::parse("monitor_hit", &names()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(text.contains("did you mean monitor_hits?"), "{text}");
        assert!(!text.contains('\n'), "{text}");
        // No monitor at all: say how to get one.
        let e = Source::parse("monitor_hits", &[]).unwrap_err().to_string();
        assert!(
            e.contains("--monitor") && e.contains("--match hits=REGEX"),
            "{e}"
        );
        // A typo of a metric.
        let e = Source::parse("time_wall_clok", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean time_wall_clock?"), "{e}");
        assert!(e.contains("throughput"), "{e}");
        // Nothing close: no suggestion.
        let e = Source::parse("zzz", &names()).unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
        assert!(e.contains("monitor_misses"), "{e}");
    }

    #[test]
    fn directions_units_and_engine_settings() {
        let t = Source::Throughput;
        assert!(t.higher_is_better() && t.per_batch());
        assert_eq!(t.center_name(), "mean");
        assert_eq!(t.format(1234.0), "1234/s");
        assert!(!t.settings(0.05, 3, 0.01, None).discrete);
        let s = Source::Series("monitor_hits");
        assert!(!s.higher_is_better() && !s.per_batch());
        let st = s.settings(0.05, 0, 0.01, None);
        assert!(st.discrete && !st.speed_modes);
        assert_eq!(st.family, 1);
        let r = Source::Run(Metric::PeakRss);
        assert_eq!(r.unit(), Unit::Bytes);
        assert!(r.settings(0.05, 2, 0.01, Some(1e6)).floor.is_some());
        assert!(Source::Run(Metric::WallTime)
            .settings(0.05, 2, 0.01, Some(1e6))
            .floor
            .is_none());
    }

    fn run(wall: f64, timed_out: bool) -> Sample {
        let mut s = Sample::new(0);
        s.exit_code = Some(0);
        s.set(Metric::WallTime, wall);
        s.timed_out = timed_out;
        s
    }

    #[test]
    fn runs_are_tagged_by_position_and_series_follow_the_samples() {
        let r = CellResult::new(
            Cell::default(),
            vec![run(1.0, false), run(2.0, true), run(3.0, false)],
        );
        let wall = Source::Run(Metric::WallTime).tagged(&r, &[]);
        assert_eq!(wall, vec![(0, Some(1.0)), (1, None), (2, Some(3.0))]);
        // A series value of a run that does not count, or NaN, is no value.
        let s = Source::Series("monitor_hits").tagged(&r, &[5.0, 6.0, f64::NAN]);
        assert_eq!(s, vec![(0, Some(5.0)), (1, None), (2, None)]);
        // A series shorter than the samples (the monitor ended) leaves the
        // later runs without a value.
        let s = Source::Series("monitor_hits").tagged(&r, &[5.0]);
        assert_eq!(values(&s), vec![5.0]);
    }

    #[test]
    fn batches_give_one_throughput_each_by_block() {
        // Two slots, each instance 1 s, back to back: two a second.
        let spans: Vec<Span> = (0..8)
            .map(|k| Span {
                slot: k % 2,
                start: (k / 2) as f64,
                end: (k / 2 + 1) as f64,
            })
            .collect();
        let mut r = CellResult::new(
            Cell {
                variant: Variant {
                    concurrency: Some(2),
                    ..Variant::default()
                },
                ..Cell::default()
            },
            (0..16).map(|_| run(1.0, false)).collect(),
        );
        for (block, first_sample) in [(1, 0), (2, 8)] {
            r.batches.push(BatchRecord {
                concurrency: 2,
                block,
                first_sample,
                spans: spans.clone(),
                busy: (0.0, 4.0),
                elapsed: 4.0,
                host: Default::default(),
            });
        }
        // A batch whose slots were never all busy has no throughput.
        r.batches.push(BatchRecord {
            concurrency: 2,
            block: 3,
            first_sample: 16,
            ..Default::default()
        });
        let t = Source::Throughput.tagged(&r, &[]);
        assert_eq!(t.len(), 3);
        assert_eq!((t[0].0, t[1].0, t[2]), (1, 2, (3, None)));
        for (_, v) in &t[..2] {
            assert!((v.unwrap() - 2.0).abs() < 1e-12, "{t:?}");
        }
    }

    #[test]
    fn blocks_join_only_where_both_have_a_value() {
        let a = [(0, Some(1.0)), (1, None), (2, Some(3.0)), (4, Some(5.0))];
        let b = [(0, Some(10.0)), (1, Some(20.0)), (3, Some(40.0)), (4, None)];
        assert_eq!(join_blocks(&a, &b), (vec![1.0], vec![10.0]));
        let c = [((0u64, 0usize), Some(1.0)), ((1, 0), Some(2.0))];
        let d = [((1u64, 0usize), Some(4.0))];
        assert_eq!(join_blocks(&c, &d), (vec![2.0], vec![4.0]));
    }
}
