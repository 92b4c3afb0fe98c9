//! Parameter sweeps as people read them: the table model (ordered by
//! parameter value, one curve per command) with the best value and the set
//! of values as good as it decided here; `report::sweep` renders it.
//!
//! The set is decided by the comparison engine, never by overlapping
//! intervals: every value is compared with the best (paired when the
//! session was interleaved, Bonferroni over the curve's values), and a
//! value is in the set unless it is significantly worse, either by that
//! test or by a comparison the report prints above the sweep (so the sweep
//! never calls "as good" what the summary calls slower).

use crate::analysis::comparison::{self, Comparison, Design, Verdict};
use crate::analysis::source::{self, RunSeries, Source};
use crate::analysis::CellAnalysis;
use crate::metrics::Metric;
use crate::run::plan::Parameter;
use crate::run::session::Session;

#[derive(Clone, Debug)]
pub struct Point {
    /// Index of the cell in the session.
    pub cell: usize,
    pub label: String,
    /// The swept parameter's value as a number, if it is numeric.
    pub x: Option<f64>,
    /// The value's median (the mean of its batches for throughput: see
    /// `Source::center_name`).
    pub median: f64,
    pub ci: Option<(f64, f64)>,
    /// Median user + system time.
    pub cpu: Option<f64>,
    /// Runs (batches for throughput).
    pub runs: usize,
}

/// One curve: one command template over all parameter combinations.
#[derive(Clone, Debug)]
pub struct Curve {
    pub command: String,
    pub points: Vec<Point>,
    /// Index into `points` of the best value.
    pub best: Option<usize>,
    /// Indices into `points` of the values not significantly worse than
    /// the best, the best included.
    pub as_good: Vec<usize>,
    /// Each point's comparison with the best (None for the best itself).
    pub vs_best: Vec<Option<Comparison>>,
}

#[derive(Clone, Debug)]
pub struct Sweep {
    /// What the curve shows and the set is decided on (`--metric`).
    pub source: Source,
    pub maximize: bool,
    /// Name of the parameter on the x axis ("a, b" when several vary).
    pub axis: String,
    pub geometric: bool,
    pub curves: Vec<Curve>,
}

/// Whether `a` beats `b` in the direction asked for (larger when
/// maximising, smaller otherwise); the sweep's and the optimum search's one
/// rule for picking a leader.
pub fn better(maximize: bool, a: f64, b: f64) -> bool {
    if maximize {
        a > b
    } else {
        a < b
    }
}

/// What the curve shows (`--metric`), where a monitor count's values are,
/// and whether higher is better (`--maximize`; throughput always is).
pub struct Measure<'a> {
    pub source: &'a Source,
    /// The counts a `Source::Series` reads.
    pub series: Option<&'a dyn RunSeries>,
    pub maximize: bool,
}

/// A point's center, its interval and the units (runs or batches) behind it.
struct Center {
    value: f64,
    ci: Option<(f64, f64)>,
    count: usize,
}

/// How the sweep decides its set: the printed comparisons it must agree
/// with, and the level and band of its own.
pub struct SetRules<'a> {
    pub comparisons: &'a [Comparison],
    pub alpha: f64,
    pub precision: f64,
}

/// Builds the sweep view of a session whose cells came from parameters.
pub fn build(
    session: &Session,
    analyses: &[CellAnalysis],
    params: &[Parameter],
    measure: &Measure,
    templates: &[String],
    rules: &SetRules,
) -> Option<Sweep> {
    let (source, series) = (measure.source, measure.series);
    // Throughput is higher-is-better whatever the goal.
    let maximize = measure.maximize || source.higher_is_better();
    let tagged = |cell: usize| {
        let s = match (source, series) {
            (Source::Series(name), Some(series)) => series.series(name, cell),
            _ => Vec::new(),
        };
        source.tagged(&session.results[cell], &s)
    };
    let commands = templates.len();
    if params.is_empty() || session.results.is_empty() || commands == 0 {
        return None;
    }
    let varying: Vec<&Parameter> = params.iter().filter(|p| p.values.len() > 1).collect();
    let single = (varying.len() == 1).then(|| varying[0]);
    let axis = if varying.is_empty() {
        params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        varying
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut curves = Vec::new();
    for (g, template) in templates.iter().enumerate() {
        let mut points = Vec::new();
        // The cells of this command (a --reference command is on no curve).
        for (cell, r) in session.results.iter().enumerate() {
            if r.cell.template != g {
                continue;
            }
            let Some(center) = center(source, analyses, session, cell, &tagged(cell)) else {
                continue;
            };
            let label = match single {
                Some(p) => r
                    .cell
                    .parameters
                    .iter()
                    .find(|(k, _)| *k == p.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
                None => r
                    .cell
                    .parameters
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            let x = single.and_then(|_| label.trim().parse::<f64>().ok());
            points.push(Point {
                cell,
                label,
                x,
                median: center.value,
                ci: center.ci,
                cpu: analyses
                    .get(cell)
                    .and_then(|a| a.get(Metric::CpuTime))
                    .map(|c| c.summary.median),
                runs: center.count,
            });
        }
        if single.is_some_and(|p| p.numeric.is_some()) {
            points.sort_by(|a, b| a.x.unwrap_or(0.0).total_cmp(&b.x.unwrap_or(0.0)));
        }
        // The best median among the values no printed comparison shows
        // significantly worse than another (all values if none is left).
        let shown: Vec<bool> = points
            .iter()
            .map(|p| {
                shown_worse(
                    rules,
                    &session.results[p.cell].cell.name,
                    source.name(),
                    maximize,
                )
            })
            .collect();
        let pick = |candidates: &mut dyn Iterator<Item = usize>| {
            candidates.reduce(|b, i| {
                if better(maximize, points[i].median, points[b].median) {
                    i
                } else {
                    b
                }
            })
        };
        let best = pick(&mut (0..points.len()).filter(|&i| !shown[i]))
            .or_else(|| pick(&mut (0..points.len())));
        let (as_good, vs_best) =
            decide_set(session, &points, best, (source, &tagged), maximize, rules);
        let command = template.clone();
        curves.push(Curve {
            command,
            points,
            best,
            as_good,
            vs_best,
        });
    }
    Some(Sweep {
        source: source.clone(),
        maximize,
        axis,
        geometric: single.is_some_and(|p| p.geometric),
        curves,
    })
}

/// A printed comparison shows the cell `name` significantly worse than
/// another value.
fn shown_worse(rules: &SetRules, name: &str, metric: &str, maximize: bool) -> bool {
    let (worse, better) = if maximize {
        (Verdict::Faster, Verdict::Slower)
    } else {
        (Verdict::Slower, Verdict::Faster)
    };
    rules.comparisons.iter().any(|pc| {
        pc.metric == metric
            && ((pc.candidate == name && pc.verdict == worse)
                || (pc.baseline == name && pc.verdict == better))
    })
}

/// A value's point on the curve from its values: (center, interval,
/// units counted). A metric's median and interval are its summary's (the
/// table above the sweep shows the same); a series' are computed the same
/// way from its counts; throughput is the mean over batches with Student's
/// t interval (`analysis::concurrency::cell_throughput`). None: no value.
fn center(
    source: &Source,
    analyses: &[CellAnalysis],
    session: &Session,
    cell: usize,
    tagged: &[(usize, Option<f64>)],
) -> Option<Center> {
    match source {
        Source::Run(m) => {
            let a = analyses.get(cell)?;
            let s = a.get(*m)?;
            Some(Center {
                value: s.summary.median,
                ci: s.median_ci.as_ref().ok().map(|e| (e.low, e.high)),
                count: a.runs,
            })
        }
        Source::Series(_) => {
            let v = source::values(tagged);
            Some(Center {
                value: crate::stats::median(&v)?,
                ci: crate::stats::median_ci(&v, crate::analysis::LEVEL)
                    .ok()
                    .map(|e| (e.low, e.high)),
                count: v.len(),
            })
        }
        Source::Throughput => {
            let t = crate::analysis::concurrency::cell_throughput(&session.results[cell])?;
            Some(Center {
                value: t.value,
                ci: t.ci.map(|[lo, hi]| (lo, hi)),
                count: t.batches,
            })
        }
    }
}

/// The set of values not significantly worse than the best (see the
/// module comment), and each value's comparison with the best. `values`
/// gives a cell's values with their blocks.
fn decide_set(
    session: &Session,
    points: &[Point],
    best: Option<usize>,
    (source, values): (&Source, &dyn Fn(usize) -> source::Tagged),
    maximize: bool,
    rules: &SetRules,
) -> (Vec<usize>, Vec<Option<Comparison>>) {
    let Some(b) = best else {
        return (Vec::new(), vec![None; points.len()]);
    };
    let worse = if maximize {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    let settings = source.settings(
        rules.alpha,
        points.len().saturating_sub(1),
        rules.precision,
        session.rss_floor,
    );
    let best_cell = &session.results[points[b].cell];
    let best_values = values(points[b].cell);
    let mut as_good = Vec::new();
    let mut vs_best = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if i == b {
            as_good.push(i);
            vs_best.push(None);
            continue;
        }
        let cell = &session.results[p.cell];
        let these = values(p.cell);
        let c = if session.order == crate::run::schedule::Order::Interleaved {
            let (x, y) = source::join_blocks(&best_values, &these);
            comparison::compare_values(&x, &y, Design::Paired, &settings)
        } else {
            comparison::compare_values(
                &source::values(&best_values),
                &source::values(&these),
                Design::Unpaired,
                &settings,
            )
        };
        if c.verdict != worse && !shown_worse(rules, &cell.cell.name, source.name(), maximize) {
            as_good.push(i);
        }
        vs_best.push(Some(c.named(
            source.name(),
            &best_cell.cell.name,
            &cell.cell.name,
        )));
    }
    (as_good, vs_best)
}

/// Replaces the curve's best and set with the optimum search's, so the
/// table shows the search's one analysis. `best`, `as_good` and the keys
/// of `vs_best` are session cell indices.
pub fn apply_search(
    sweep: &mut Sweep,
    best: usize,
    as_good: &[usize],
    vs_best: &[(usize, Comparison)],
) {
    for curve in &mut sweep.curves {
        curve.best = curve.points.iter().position(|p| p.cell == best);
        curve.as_good = (0..curve.points.len())
            .filter(|&i| as_good.contains(&curve.points[i].cell))
            .collect();
        curve.vs_best = curve
            .points
            .iter()
            .map(|p| {
                vs_best
                    .iter()
                    .find(|(cell, _)| *cell == p.cell)
                    .map(|(_, c)| c.clone())
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of three values of x: 1 and 2 equal but for the noise,
    /// 3 30 % slower; 8 interleaved runs each with ±4 % jitter.
    fn three_values() -> (Session, Vec<CellAnalysis>, Vec<Parameter>) {
        let mk = |x: &str, base: f64| {
            // A different jitter pattern per value, so pairs differ by noise.
            let k: usize = x.parse().unwrap();
            let walls: Vec<f64> = (0..8)
                .map(|i| base * (1.0 + 0.02 * (((i * (2 * k + 1) + k) % 5) as f64 - 2.0)))
                .collect();
            let mut r = crate::run::session::CellResult::from_wall_times(&format!("x{x}"), &walls);
            r.cell.parameters = vec![("x".into(), x.into())];
            r
        };
        let mut session = Session::empty();
        session.results = vec![mk("1", 0.0100), mk("2", 0.0100), mk("3", 0.013)];
        let analyses = crate::analysis::analyse(&session);
        let params = vec![Parameter {
            name: "x".into(),
            values: vec!["1".into(), "2".into(), "3".into()],
            numeric: Some(vec![1.0, 2.0, 3.0]),
            geometric: false,
        }];
        (session, analyses, params)
    }

    #[test]
    fn the_set_is_decided_by_the_engine_and_agrees_with_the_summary() {
        let (session, analyses, params) = three_values();
        let build = |comparisons: &[Comparison]| {
            let rules = SetRules {
                comparisons,
                alpha: 0.05,
                precision: 0.01,
            };
            let t = ["cmd {x}".to_string()];
            build(
                &session,
                &analyses,
                &params,
                &Measure {
                    source: &Source::Run(Metric::WallTime),
                    series: None,
                    maximize: false,
                },
                &t,
                &rules,
            )
            .unwrap()
        };
        let sweep = build(&[]);
        let curve = &sweep.curves[0];
        assert_eq!(curve.best, Some(0));
        // 2 is not significantly worse than 1; 3 is, by the paired test.
        assert_eq!(curve.as_good, vec![0, 1]);
        let c3 = curve.vs_best[2].as_ref().unwrap();
        assert_eq!(c3.verdict, Verdict::Slower);
        assert!(c3.paired);
        // A printed comparison calling x2 slower than x1 keeps x2 out of
        // the set, whatever the sweep's own test says.
        let mut printed = c3.clone();
        printed.baseline = "x1".into();
        printed.candidate = "x2".into();
        let sweep = build(&[printed.clone()]);
        assert_eq!(sweep.curves[0].best, Some(0));
        assert_eq!(sweep.curves[0].as_good, vec![0]);
        // The same for a reference shown slower than a candidate.
        printed.baseline = "x2".into();
        printed.candidate = "x1".into();
        printed.verdict = Verdict::Faster;
        let sweep = build(&[printed]);
        assert_eq!(sweep.curves[0].best, Some(0));
        assert_eq!(sweep.curves[0].as_good, vec![0]);
    }
}
