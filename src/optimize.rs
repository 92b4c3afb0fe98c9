//! `--minimize` / `--maximize`: find the best value of a scanned parameter
//! without running the whole grid.
//!
//! A golden-section search over the grid's indices (the scan is ordered, and
//! for a geometric scan the indices are the log scale): two interior points
//! are measured, the worse side of the bracket is dropped, and the search
//! narrows until three neighbouring values remain. "Worse" is decided with
//! the comparison statistics (Mann-Whitney U at level alpha on the chosen
//! metric); when two points are not significantly different after the full
//! run count, the optimum of a unimodal curve lies between them and the
//! bracket shrinks to them. Finally the best value is compared with its grid
//! neighbours, so the report says whether the optimum is pinned to one grid
//! step or sits on a flat stretch. Each round is an ordinary interleaved
//! session of the points it measures, so drift does not bend the curve.

use crate::analysis::comparison::compare_metric;
use crate::analysis::values;
use crate::error::{Error, Result};
use crate::metrics::{Metric, Sample};
use crate::runner::{self, CellResult, RunOptions, SampleSink, Session};
use crate::schedule::RunPolicy;

#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub metric: Metric,
    pub maximize: bool,
    /// Runs per value of the full grid (and of the final candidates).
    pub runs: usize,
    /// Runs a value gets when first measured: 4 is the least with which
    /// Mann-Whitney can reach p < 0.05 (complete separation: p = 0.029).
    pub initial_runs: usize,
    pub alpha: f64,
}

/// How the best value compares with a grid neighbour.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Neighbour {
    pub value: String,
    /// neighbour / best, on the metric's medians.
    pub ratio: f64,
    pub p_value: f64,
    pub significantly_worse: bool,
}

#[derive(Debug)]
pub struct SearchResult {
    /// Grid index of the optimum.
    pub best: usize,
    /// Grid indices measured, ascending.
    pub tried: Vec<usize>,
    pub samples: Vec<Vec<Sample>>,
    pub runs: usize,
    pub full_grid_runs: usize,
    pub neighbours: Vec<Neighbour>,
    /// The last round's session (machine state, seed, failure).
    pub session: Session,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Prefer {
    First,
    Second,
    Neither,
}

/// Passes a round's samples on under the grid's cell indices.
struct Renumber<'a> {
    inner: &'a mut dyn SampleSink,
    grid_index: Vec<usize>,
}

impl SampleSink for Renumber<'_> {
    fn sample(&mut self, cell: usize, sample: &Sample) {
        if let Some(&i) = self.grid_index.get(cell) {
            self.inner.sample(i, sample);
        }
    }
}

struct Search<'a> {
    base: &'a RunOptions,
    sink: &'a mut dyn SampleSink,
    opts: &'a SearchOptions,
    samples: Vec<Vec<Sample>>,
    runs: usize,
    last: Option<Session>,
    round: u64,
}

impl Search<'_> {
    fn metric_values(&self, i: usize) -> Vec<f64> {
        values(&self.samples[i], self.opts.metric)
    }

    fn median(&self, i: usize) -> f64 {
        crate::stats::summarize(&self.metric_values(i)).map_or(f64::NAN, |s| s.median)
    }

    /// Brings every listed grid point to at least `runs` runs, in one
    /// interleaved round.
    fn ensure(&mut self, points: &[usize], runs: usize) -> Result<()> {
        let need: Vec<(usize, usize)> = points
            .iter()
            .map(|&i| (i, runs.saturating_sub(self.samples[i].len())))
            .filter(|(_, k)| *k > 0)
            .collect();
        if need.is_empty() {
            return Ok(());
        }
        let k = need.iter().map(|(_, k)| *k).max().unwrap_or(0);
        let mut cells: Vec<_> = need
            .iter()
            .map(|(i, _)| self.base.cells[*i].clone())
            .collect();
        // With -S the shell calibration runs in every round, interleaved.
        cells.extend(self.base.cells.iter().filter(|c| c.calibration).cloned());
        let fresh_warmup = need.iter().all(|(i, _)| self.samples[*i].is_empty());
        let opts = RunOptions {
            cells,
            policy: RunPolicy {
                exact: Some(k),
                ..RunPolicy::default()
            },
            warmup: if fresh_warmup { self.base.warmup } else { 0 },
            seed: self.base.seed.wrapping_add(self.round),
            adaptive: None,
            reference: 0,
            ..self.base.clone()
        };
        self.round += 1;
        // Round cell k is grid cell need[k]; a calibration cell keeps its index.
        let mut grid_index: Vec<usize> = need.iter().map(|(i, _)| *i).collect();
        grid_index.extend((0..self.base.cells.len()).filter(|&i| self.base.cells[i].calibration));
        let mut sink = Renumber {
            inner: &mut *self.sink,
            grid_index,
        };
        let mut session = runner::run_with_sink(&opts, &mut sink)?;
        for ((i, _), r) in need.iter().zip(session.results.iter_mut()) {
            self.runs += r.samples.len();
            self.samples[*i].append(&mut r.samples);
        }
        let failed = session.failure.take();
        self.last = Some(session);
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Which of two points is better on the metric, by the comparison test.
    fn prefer(&self, a: usize, b: usize) -> Prefer {
        let (va, vb) = (self.metric_values(a), self.metric_values(b));
        let Some(raw) = compare_metric(&va, &vb, false, crate::analysis::LEVEL) else {
            return Prefer::Neither;
        };
        if raw.p_value >= self.opts.alpha {
            return Prefer::Neither;
        }
        // shift = b - a: negative means b is smaller.
        let b_smaller = raw.shift < 0.0;
        if b_smaller != self.opts.maximize {
            Prefer::Second
        } else {
            Prefer::First
        }
    }

    /// Compares two points, adding runs up to the full count while undecided.
    fn decide(&mut self, a: usize, b: usize) -> Result<Prefer> {
        let mut runs = self.opts.initial_runs;
        loop {
            self.ensure(&[a, b], runs)?;
            let p = self.prefer(a, b);
            if p != Prefer::Neither || runs >= self.opts.runs {
                return Ok(p);
            }
            runs = (runs + 2).min(self.opts.runs);
        }
    }
}

pub fn search(
    base: &RunOptions,
    opts: &SearchOptions,
    labels: &[String],
    sink: &mut dyn SampleSink,
) -> Result<SearchResult> {
    let m = base.cells.iter().filter(|c| !c.calibration).count();
    if m == 0 {
        return Err(Error::Usage("nothing to search".into()));
    }
    let mut s = Search {
        base,
        sink,
        opts,
        samples: vec![Vec::new(); m],
        runs: 0,
        last: None,
        round: 0,
    };
    let outcome = run_search(&mut s, m);
    let session = s.last.take();
    let (best, neighbours, failure) = match outcome {
        Ok((best, neighbours)) => (best, neighbours, None),
        Err(e) => {
            // Report what was measured before the failure or interruption.
            let best = (0..m)
                .filter(|&i| !s.samples[i].is_empty())
                .reduce(|b, i| {
                    if better(opts.maximize, s.median(i), s.median(b)) {
                        i
                    } else {
                        b
                    }
                })
                .unwrap_or(0);
            (best, Vec::new(), Some(e))
        }
    };
    let Some(mut session) = session else {
        return Err(failure.unwrap_or_else(|| Error::Failed("the search measured nothing".into())));
    };
    session.failure = failure;
    let tried: Vec<usize> = (0..m).filter(|&i| !s.samples[i].is_empty()).collect();
    let neighbours = neighbours
        .into_iter()
        .map(|(i, ratio, p, worse)| Neighbour {
            value: labels.get(i).cloned().unwrap_or_default(),
            ratio,
            p_value: p,
            significantly_worse: worse,
        })
        .collect();
    Ok(SearchResult {
        best,
        tried,
        samples: s.samples,
        runs: s.runs,
        full_grid_runs: m * opts.runs,
        neighbours,
        session,
    })
}

fn better(maximize: bool, a: f64, b: f64) -> bool {
    if maximize {
        a > b
    } else {
        a < b
    }
}

type NeighbourCheck = (usize, f64, f64, bool);

fn run_search(s: &mut Search, m: usize) -> Result<(usize, Vec<NeighbourCheck>)> {
    let (mut lo, mut hi) = (0usize, m - 1);
    while hi - lo > 2 {
        let span = (hi - lo) as f64;
        let x1 = lo + (span * 0.382).round() as usize;
        let mut x2 = lo + (span * 0.618).round() as usize;
        if x2 <= x1 {
            x2 = x1 + 1;
        }
        match s.decide(x1, x2)? {
            Prefer::First => hi = x2,
            Prefer::Second => lo = x1,
            // Equal after the full run count: a unimodal curve has its
            // minimum between them.
            Prefer::Neither => {
                lo = x1;
                hi = x2;
            }
        }
    }
    let candidates: Vec<usize> = (lo..=hi).collect();
    s.ensure(&candidates, s.opts.runs)?;
    let mut best = candidates
        .iter()
        .copied()
        .reduce(|b, i| {
            if better(s.opts.maximize, s.median(i), s.median(b)) {
                i
            } else {
                b
            }
        })
        .unwrap_or(lo);
    // Hill-climb if a neighbour outside the bracket turns out better (a
    // wrong early decision); bounded by the grid size.
    for _ in 0..m {
        let around: Vec<usize> = [best.checked_sub(1), (best + 1 < m).then_some(best + 1)]
            .into_iter()
            .flatten()
            .collect();
        s.ensure(&around, s.opts.runs)?;
        match around
            .iter()
            .copied()
            .find(|&n| better(s.opts.maximize, s.median(n), s.median(best)))
        {
            Some(n) => best = n,
            None => {
                let checks = around
                    .iter()
                    .map(|&n| {
                        let ratio = s.median(n) / s.median(best);
                        let raw = compare_metric(
                            &s.metric_values(best),
                            &s.metric_values(n),
                            false,
                            crate::analysis::LEVEL,
                        );
                        let p = raw.map_or(1.0, |r| r.p_value);
                        (n, ratio, p, p < s.opts.alpha)
                    })
                    .collect();
                return Ok((best, checks));
            }
        }
    }
    Ok((best, Vec::new()))
}

/// The tried values as a session, for the usual reports and exports.
pub fn as_session(result: &mut SearchResult, cells: &[crate::plan::Cell]) -> Session {
    let mut session = std::mem::replace(&mut result.session, Session::empty());
    session.results = result
        .tried
        .iter()
        .map(|&i| CellResult {
            cell: cells[i].clone(),
            samples: std::mem::take(&mut result.samples[i]),
        })
        .collect();
    session
}

/// The search in words: what was tried, what it saved, where the optimum is.
pub fn render_text(
    r: &SearchResult,
    p: &crate::plan::Parameter,
    metric: Metric,
    maximize: bool,
    paint: crate::report::terminal::Paint,
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let goal = if maximize { "highest" } else { "lowest" };
    let values = &p.values;
    let _ = writeln!(
        out,
        "{} the {goal} {} over {} ({} … {}, {} values)",
        paint.bold("Search:"),
        metric.name(),
        p.name,
        values.first().map_or("", String::as_str),
        values.last().map_or("", String::as_str),
        values.len()
    );
    let saved = 1.0 - r.runs as f64 / r.full_grid_runs.max(1) as f64;
    let _ = writeln!(
        out,
        "  tried {} of {} values in {} runs; the full grid at {} runs per value takes {} runs ({:.0} % saved)",
        r.tried.len(),
        values.len(),
        r.runs,
        r.full_grid_runs / values.len().max(1),
        r.full_grid_runs,
        saved * 100.0
    );
    let best = values.get(r.best).map_or("?", String::as_str);
    let _ = writeln!(
        out,
        "  Optimum: {} = {}",
        p.name,
        paint.green(&paint.bold(best))
    );
    if !r.neighbours.is_empty() {
        let parts: Vec<String> = r
            .neighbours
            .iter()
            .map(|n| {
                let word = if n.significantly_worse {
                    "worse"
                } else {
                    "not significantly different"
                };
                format!(
                    "{} is {:.2}x ({word}, {})",
                    n.value,
                    n.ratio,
                    crate::analysis::comparison::format_p(n.p_value)
                )
            })
            .collect();
        let _ = writeln!(out, "  Neighbours: {}", parts.join("; "));
        if r.neighbours.iter().all(|n| n.significantly_worse) {
            let _ = writeln!(out, "  The optimum is pinned to one grid step.");
        } else {
            let _ = writeln!(
                out,
                "  The curve is flat around the optimum: neighbouring values are as good within the noise."
            );
        }
    }
    out.push('\n');
    out
}

/// Adds an `optimization` object to the exported JSON.
pub fn add_to_json(
    text: &str,
    r: &SearchResult,
    p: &crate::plan::Parameter,
    metric: Metric,
    maximize: bool,
) -> String {
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return text.to_string();
    };
    doc["optimization"] = serde_json::json!({
        "parameter": p.name,
        "metric": metric.name(),
        "goal": if maximize { "maximize" } else { "minimize" },
        "optimum": p.values.get(r.best),
        "tried": r.tried.iter().filter_map(|&i| p.values.get(i)).collect::<Vec<_>>(),
        "runs": r.runs,
        "full_grid_runs": r.full_grid_runs,
        "neighbours": r.neighbours,
    });
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| text.to_string());
    out.push('\n');
    out
}
