//! Concurrency mode in the terminal: each cell's throughput, CPU use, I/O
//! rates and the host's view; throughput comparisons in words; the scaling
//! curve with its Universal Scalability Law fit (or why it is withheld).

use std::fmt::Write as _;

use super::paint::Paint;
use crate::analysis::comparison::{Comparison, Verdict};
use crate::analysis::concurrency::{throughput_ratio, CellThroughput, Concurrency, Scaling};
use crate::run::concurrent::{Batches, FEWEST_BATCHES, MIN_RUNS_PER_SLOT};
use crate::run::host::HostView;
use crate::run::schedule::StopReason;
use crate::run::session::Session;
use crate::stats::{UslOutcome, Withheld};
use crate::units;

/// Width of the scaling chart's longest bar.
const BAR_WIDTH: f64 = 40.0;

pub fn render_text(c: &Concurrency, session: &Session, paint: Paint) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        paint
            .bold("Concurrency (throughput: completions per second while all instances were busy)")
    );
    for (r, t) in session.results.iter().zip(&c.cells) {
        let Some(t) = t else {
            if r.cell.variant.concurrency.is_some() {
                let _ = writeln!(
                    out,
                    "  {}: no batch had all its instances busy at once",
                    r.cell.name
                );
            }
            continue;
        };
        let _ = writeln!(out, "  {}  (N = {})", r.cell.name, t.concurrency);
        let _ = writeln!(out, "    Throughput:  {}", throughput(t));
        if let Some(l) = t.latency {
            let _ = writeln!(
                out,
                "    Latency:     median {}, p10 {}, p90 {}, p99 {} per instance ({} runs)",
                units::time(l.median),
                units::time(l.p10),
                units::time(l.p90),
                units::time(l.p99),
                l.count
            );
        }
        let mut use_line = Vec::new();
        if let Some(cpu) = t.cpu_utilisation {
            use_line.push(format!("CPU {cpu:.2} s per s"));
        }
        if let (Some(r), Some(w)) = (t.read_bytes_per_second, t.written_bytes_per_second) {
            use_line.push(format!(
                "storage {}/s read, {}/s written",
                units::bytes(r),
                units::bytes(w)
            ));
        }
        if !use_line.is_empty() {
            let _ = writeln!(out, "    Instances:   {}", use_line.join(", "));
        }
        if let Some(h) = host(&t.host) {
            let _ = writeln!(out, "    Host:        {h}");
        }
    }
    if let Some(line) = too_few_batches(session) {
        let _ = writeln!(out, "  {line}");
    }
    for cmp in &c.comparisons {
        let line = sentence(cmp);
        let line = match cmp.verdict {
            Verdict::Faster => paint.green(&line),
            Verdict::Slower => paint.yellow(&line),
            _ => line,
        };
        let _ = writeln!(out, "  {line}");
    }
    for s in &c.scaling {
        scaling(&mut out, s, session);
    }
    out.push('\n');
    out
}

/// Where a fixed `--runs` made fewer batches per cell than an interval
/// and a comparison need, one line that says so and names the `--runs`
/// that makes enough.
fn too_few_batches(session: &Session) -> Option<String> {
    if session.stop_reason != Some(StopReason::RunCount) {
        return None;
    }
    let cells = || {
        session
            .results
            .iter()
            .filter(|r| r.cell.variant.concurrency.is_some())
    };
    let largest = cells().filter_map(|r| r.cell.variant.concurrency).max()?;
    let fewest = cells().min_by_key(|r| r.batches.len())?;
    let made = fewest.batches.len();
    (made < FEWEST_BATCHES).then(|| {
        format!(
            "--runs {} makes {made} batch{} per cell at N up to {largest} (each needs {} \
             completions per instance): too few for an interval and a comparison; --runs {} \
             makes {FEWEST_BATCHES}",
            fewest.samples.len(),
            if made == 1 { "" } else { "es" },
            MIN_RUNS_PER_SLOT,
            Batches::runs_for(largest, FEWEST_BATCHES)
        )
    })
}

fn throughput(t: &CellThroughput) -> String {
    let v = |x: f64| format!("{}/s", units::significant(x, 4));
    match t.ci {
        Some([lo, hi]) => format!(
            "{}   [{} … {}] 95 % CI, {} batches",
            v(t.value),
            v(lo),
            v(hi),
            t.batches
        ),
        None => format!("{}   ({} batch: no interval)", v(t.value), t.batches),
    }
}

/// The host's view in one line; None when the kernel told nothing.
pub fn host(h: &HostView) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(busy) = h.cpu_busy {
        parts.push(format!("CPU {busy:.2} of {} busy", h.cpus));
    }
    if !h.pressure.is_empty() {
        let p: Vec<String> = h
            .pressure
            .iter()
            .map(|p| match p.full {
                Some(full) => format!(
                    "{} {:.0} % some, {:.0} % full",
                    p.resource,
                    p.some * 100.0,
                    full * 100.0
                ),
                None => format!("{} {:.0} % some", p.resource, p.some * 100.0),
            })
            .collect();
        parts.push(format!("pressure {}", p.join("; ")));
    }
    for d in &h.disks {
        parts.push(format!(
            "{} busy {:.0} %, {}/s read, {}/s written",
            d.device,
            d.busy * 100.0,
            units::bytes(d.read_bytes_per_second),
            units::bytes(d.written_bytes_per_second)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A throughput comparison in words. The engine compared seconds per
/// completion, so its "faster" is the higher throughput and the
/// throughput ratio is the inverse of its ratio.
pub fn sentence(c: &Comparison) -> String {
    let p = units::format_p(c.p_value);
    let conf = units::format_confidence(c.confidence);
    let (r, [lo, hi]) = throughput_ratio(c);
    let (a, b) = (&c.candidate, &c.baseline);
    match c.verdict {
        Verdict::Faster | Verdict::Slower => format!(
            "Throughput of '{a}' is {r:.2}x that of '{b}' ({conf} {lo:.2}–{hi:.2}, {p}): {}",
            if c.verdict == Verdict::Faster { "higher" } else { "lower" }
        ),
        Verdict::NoDifference => format!(
            "Throughput: '{a}' and '{b}': no difference beyond ±{} % (ratio {r:.2}, {conf} {lo:.2}–{hi:.2}, {p})",
            units::significant(c.precision * 100.0, 3)
        ),
        _ if r.is_finite() && lo.is_finite() => format!(
            "Throughput: '{a}' and '{b}': inconclusive (ratio {r:.2}, {conf} {lo:.2}–{hi:.2}, {p})"
        ),
        _ => format!(
            "Throughput: '{a}' and '{b}': {}{}",
            c.verdict.words(),
            c.note.as_ref().map(|n| format!(": {}", super::Words(n))).unwrap_or_default()
        ),
    }
}

fn scaling(out: &mut String, s: &Scaling, session: &Session) {
    let Some(&first) = s.cells.first() else {
        return;
    };
    let _ = writeln!(
        out,
        "  Scaling of '{}' with N",
        session.results[first].cell.command
    );
    let top = s
        .points
        .iter()
        .map(|p| p.throughput)
        .fold(0.0_f64, f64::max);
    for p in &s.points {
        let bar = if top > 0.0 {
            "█".repeat(((p.throughput / top) * BAR_WIDTH).round() as usize)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "    N = {:<5} │{bar} {}/s",
            p.n,
            units::significant(p.throughput, 4)
        );
    }
    let _ = writeln!(out, "    {}", usl_line(&s.usl));
}

/// The fit in one line: σ, κ and the peak with their intervals, or why
/// it is not shown.
pub fn usl_line(usl: &UslOutcome) -> String {
    match usl {
        UslOutcome::Fitted(f) => {
            let g = |x: f64| units::significant(x, 3);
            let peak = match f.peak {
                None => "no peak: throughput is flat (all contention)".to_string(),
                Some(p) if !p.high.is_finite() && p.low <= 1.0 => {
                    "no peak can be placed (its interval spans every N)".to_string()
                }
                Some(p) => {
                    let high = if p.high.is_finite() {
                        g(p.high)
                    } else {
                        "∞".into()
                    };
                    match (p.n, p.throughput) {
                        (Some(n), Some(x)) => format!(
                            "peak at N = {} ({} … {}), {}/s there",
                            g(n),
                            g(p.low.max(1.0)),
                            high,
                            g(x)
                        ),
                        _ => "no peak estimated: coherency κ may be 0".to_string(),
                    }
                }
            };
            format!(
                "Universal Scalability Law: contention σ = {} ({} … {}), coherency κ = {} ({} … {}), {peak}; R² = {:.3}",
                g(f.sigma.value),
                g(f.sigma.low),
                g(f.sigma.high),
                g(f.kappa.value),
                g(f.kappa.low),
                g(f.kappa.high),
                f.r_squared
            )
        }
        UslOutcome::Withheld(w) => {
            format!("Universal Scalability Law: not fitted, {}", withheld(w))
        }
    }
}

/// Why a fit is withheld, in words.
pub fn withheld(w: &Withheld) -> String {
    match w {
        Withheld::TooFewLevels { have } => format!(
            "it needs throughput at {} or more values of N (has {have})",
            crate::stats::MIN_LEVELS
        ),
        Withheld::LackOfFit { p } => format!(
            "the law does not describe these points (lack of fit, {})",
            units::format_p(*p)
        ),
        Withheld::LowRSquared { r_squared } => {
            format!("the law explains too little of the curve (R² = {r_squared:.2})")
        }
        Withheld::Unidentifiable => {
            "these points cannot tell contention from coherency apart".to_string()
        }
    }
}

/// The scaling curve as SVG (`--plot` when the session has one): the
/// measured throughput at each N with its interval, and the fitted law as
/// a second line where it is not withheld.
pub fn render_svg(c: &Concurrency, s: &Scaling, session: &Session) -> String {
    use super::svg::{Format, LineChart, Point, Series};
    let measured = Series {
        name: "throughput (95 % CI)".into(),
        points: s
            .points
            .iter()
            .zip(&s.cells)
            .map(|(p, &i)| {
                let ci = c.cells.get(i).and_then(|t| t.as_ref()).and_then(|t| t.ci);
                Point {
                    x: p.n,
                    y: p.throughput,
                    lo: ci.map(|[lo, _]| lo),
                    hi: ci.map(|[_, hi]| hi),
                }
            })
            .collect(),
    };
    let mut series = vec![measured];
    if let UslOutcome::Fitted(f) = &s.usl {
        let max_n = s.points.iter().map(|p| p.n).fold(1.0, f64::max);
        // Enough segments for a smooth curve, few enough markers to read.
        let steps = 20;
        series.push(Series {
            name: "Universal Scalability Law".into(),
            points: (0..=steps)
                .map(|i| {
                    let n = 1.0 + (max_n - 1.0) * i as f64 / steps as f64;
                    Point {
                        x: n,
                        y: crate::stats::usl_throughput(
                            n,
                            f.lambda.value,
                            f.sigma.value,
                            f.kappa.value,
                        ),
                        lo: None,
                        hi: None,
                    }
                })
                .collect(),
        });
    }
    let command = s
        .cells
        .first()
        .map(|&i| session.results[i].cell.command.as_str())
        .unwrap_or("");
    let chart = LineChart {
        title: format!("throughput by concurrency: {command}"),
        x_label: "instances at once (N)".into(),
        y_label: "completions per second".into(),
        log_x: false,
        x_format: Format::Number,
        y_format: Format::Number,
        series,
        highlight: match &s.usl {
            UslOutcome::Fitted(f) => f
                .peak
                .and_then(|p| p.n)
                .filter(|n| *n <= s.points.iter().map(|p| p.n).fold(1.0, f64::max)),
            UslOutcome::Withheld(_) => None,
        },
        shade: Vec::new(),
    };
    let mut out = chart.render();
    out.push('\n');
    out
}
