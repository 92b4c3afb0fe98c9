//! JSON export: a superset of hyperfine's schemas. Version 2's
//! `results[i].measurements[j].<metric>.value` and `results[i].summary`, and
//! version 1's flat fields (`mean`, `times`, `exit_codes`, ...) so that tools
//! written for either keep working. The optimum search and `--monitor`
//! add their own top-level objects (`search`, `monitor`) and the monitor a
//! per-result `monitor` object.

use serde_json::{json, Map, Value};

use super::{Exporter, Report, SearchSection, Words};
use crate::analysis::comparison::Comparison;
use crate::analysis::{self, CellAnalysis};
use crate::error::Result;
use crate::metrics::{Metric, Sample};
use crate::monitor::Counts;
use crate::run::session::CellResult;
use crate::search::Decision;

/// A number, or null where JSON has none (NaN, infinities).
pub fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn measurement(s: &Sample) -> Value {
    let mut m = Map::new();
    m.insert("run_index".into(), json!(s.run_index));
    m.insert("exit_code".into(), json!(s.exit_code));
    if let Some(sig) = s.signal {
        m.insert("signal".into(), json!(sig));
    }
    m.insert("timed_out".into(), json!(s.timed_out));
    if s.removed {
        m.insert("outlier_removed".into(), json!(true));
    }
    for &metric in Metric::ALL {
        if let Some(v) = s.get(metric) {
            m.insert(
                metric.name().into(),
                json!({"value": num(v), "unit": metric.unit().symbol()}),
            );
        }
    }
    // The machine's state during the run (not stored: the runs' own JSON).
    let d = s.disturbance;
    for (name, v) in [("cpu_wait", d.cpu_wait), ("cpu_steal", d.steal)] {
        if let Some(v) = v {
            m.insert(name.into(), json!({"value": num(v), "unit": "s"}));
        }
    }
    Value::Object(m)
}

fn summary(a: &CellAnalysis) -> Value {
    let mut m = Map::new();
    for ms in &a.metrics {
        let s = &ms.summary;
        let ci = match &ms.median_ci {
            Ok(e) => json!([num(e.low), num(e.high)]),
            Err(_) => Value::Null,
        };
        m.insert(
            ms.metric.name().into(),
            json!({
                "mean": num(s.mean), "stddev": num(s.stddev), "median": num(s.median),
                "min": num(s.min), "max": num(s.max), "count": s.n,
                "q1": num(s.q1), "q3": num(s.q3), "mad": num(s.mad),
                "median_ci": ci, "unit": ms.metric.unit().symbol(),
                "outliers": ms.outliers,
            }),
        );
    }
    Value::Object(m)
}

/// hyperfine's `command` field: the name without the parameters appended
/// to it (cells built outside a plan have only `name` and `command`).
pub fn hyperfine_command(cell: &crate::run::plan::Cell) -> &str {
    if !cell.short_name.is_empty() {
        &cell.short_name
    } else if !cell.command.is_empty() {
        &cell.command
    } else {
        &cell.name
    }
}

fn result(r: &CellResult, a: &CellAnalysis) -> Value {
    let stat = |metric: Metric, f: fn(&crate::stats::Summary) -> f64| {
        a.get(metric)
            .map(|m| num(f(&m.summary)))
            .unwrap_or(Value::Null)
    };
    // hyperfine's flat arrays hold the runs its `mean` is computed from, in
    // step with each other; killed runs (hyperfine has no timeout) are
    // listed apart, so that scripts reading `times` agree with `mean`.
    let counted: Vec<&crate::metrics::Sample> = r.samples.iter().filter(|s| s.counts()).collect();
    let times: Vec<Value> = counted
        .iter()
        .map(|s| s.get(Metric::WallTime).map_or(Value::Null, num))
        .collect();
    let timed_out_times: Vec<Value> = r
        .samples
        .iter()
        .filter(|s| s.timed_out)
        .filter_map(|s| s.get(Metric::WallTime))
        .map(num)
        .collect();
    let exit_codes: Vec<Value> = counted.iter().map(|s| json!(s.exit_code)).collect();
    let memory: Vec<Value> = counted
        .iter()
        .filter_map(|s| s.get(Metric::PeakRss))
        .map(|v| json!(v as u64))
        .collect();
    let params: Map<String, Value> = r
        .cell
        .parameters
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut o = json!({
        // hyperfine's meaning: the -n name, else the command; what ran is
        // `command_line`, the full display name `name`.
        "command": hyperfine_command(&r.cell),
        "command_line": r.cell.command,
        "name": r.cell.name,
        "mean": stat(Metric::WallTime, |s| s.mean),
        "stddev": stat(Metric::WallTime, |s| s.stddev),
        "median": stat(Metric::WallTime, |s| s.median),
        "user": stat(Metric::UserTime, |s| s.mean),
        "system": stat(Metric::SystemTime, |s| s.mean),
        "min": stat(Metric::WallTime, |s| s.min),
        "max": stat(Metric::WallTime, |s| s.max),
        "times": times,
        "exit_codes": exit_codes,
        "memory_usage_byte": memory,
        "runs": r.samples.len(),
        "timed_out_runs": a.timed_out,
        "timed_out_times": timed_out_times,
        "measurements": r.samples.iter().map(measurement).collect::<Vec<_>>(),
        "summary": summary(a),
        "warnings": a.warnings.iter().map(super::Words).collect::<Vec<_>>(),
    });
    if !params.is_empty() {
        o["parameters"] = Value::Object(params);
    }
    if let Some(ops) = r.cell.variant.ops {
        let mut per = Map::new();
        for m in [
            Metric::WallTime,
            Metric::UserTime,
            Metric::SystemTime,
            Metric::CpuTime,
        ] {
            if let Some(ms) = a.get(m) {
                let k = ops as f64;
                let ci = match &ms.median_ci {
                    Ok(e) => json!([num(e.low / k), num(e.high / k)]),
                    Err(_) => Value::Null,
                };
                per.insert(
                    m.name().into(),
                    json!({"median": num(ms.summary.median / k), "mean": num(ms.summary.mean / k), "median_ci": ci}),
                );
            }
        }
        o["ops"] = json!(ops);
        o["per_operation"] = Value::Object(per);
    }
    let v = &r.cell.variant;
    if v != &crate::run::plan::Variant::default() {
        o["variant"] = json!({
            "env_size": v.env_size, "clear_env": v.clear_env, "user": v.user,
            "workdir": v.workdir.as_ref().map(|w| match w {
                crate::exec::workdir::Workdir::Tmpfs => "tmpfs".to_string(),
                crate::exec::workdir::Workdir::Under(d) => d.display().to_string(),
            }),
            "cpus": v.cpus, "nice": v.nice, "concurrency": v.concurrency,
        });
    }
    o
}

/// The `--export-json` document.
pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> Result<String> {
        let doc = document(report);
        let mut text = serde_json::to_string_pretty(&HyperfineOrder::Document(&doc))
            .unwrap_or_else(|_| "{}".into());
        text.push('\n');
        Ok(text)
    }
}

/// The fields of a result that hyperfine 1.20 defines, in the order its
/// `BenchmarkResult` struct serializes them: a reader comparing the two
/// tools' files line by line (or a parser that keeps order) sees
/// hyperfine's fields first, then cmdscope's, alphabetically. The first
/// [`HYPERFINE_SUMMARY_FIELDS`] are also its CSV's first columns.
pub const HYPERFINE_RESULT_FIELDS: &[&str] = &[
    "command",
    "mean",
    "stddev",
    "median",
    "user",
    "system",
    "min",
    "max",
    "times",
    "memory_usage_byte",
    "exit_codes",
    "parameters",
];

/// The results, each in hyperfine's order.
struct Results<'a>(&'a [Value]);

impl serde::Serialize for Results<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = ser.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            seq.serialize_element(&HyperfineOrder::Result(r))?;
        }
        seq.end()
    }
}

/// How many of [`HYPERFINE_RESULT_FIELDS`] hyperfine's CSV has (up to `max`).
pub const HYPERFINE_SUMMARY_FIELDS: usize = 8;

/// Serializes the export with hyperfine's key order where hyperfine
/// defines one (its document holds only `results`), everything else as
/// serde_json orders it (alphabetically): serde_json's map keeps no
/// insertion order, so the order is imposed when writing.
enum HyperfineOrder<'a> {
    Document(&'a Value),
    Result(&'a Value),
}

impl serde::Serialize for HyperfineOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (value, first): (&Value, &[&str]) = match self {
            HyperfineOrder::Document(v) => (v, &["results"]),
            HyperfineOrder::Result(v) => (v, HYPERFINE_RESULT_FIELDS),
        };
        let Value::Object(map) = value else {
            return value.serialize(ser);
        };
        let keys = first
            .iter()
            .copied()
            .filter(|k| map.contains_key(*k))
            .chain(
                map.keys()
                    .map(String::as_str)
                    .filter(|k| !first.contains(k)),
            );
        let mut out = ser.serialize_map(Some(map.len()))?;
        for k in keys {
            let v = &map[k];
            match (self, k, v) {
                (HyperfineOrder::Document(_), "results", Value::Array(rs)) => {
                    out.serialize_entry(k, &Results(rs))?
                }
                _ => out.serialize_entry(k, v)?,
            }
        }
        out.end()
    }
}

fn document(report: &Report) -> Value {
    let session = report.session;
    let started = humantime::format_rfc3339_seconds(session.started).to_string();
    let overhead = session.shell_overhead.map(|o| {
        json!({"time_wall_clock": num(o.wall), "time_user": num(o.user),
               "time_system": num(o.system), "runs": o.runs})
    });
    let unavailable: Vec<Value> = session
        .counters_unavailable
        .iter()
        .map(|(m, why)| json!({"metric": m.name(), "reason": why}))
        .collect();
    let results: Vec<Value> = session
        .results
        .iter()
        .zip(report.analyses)
        .enumerate()
        .map(|(i, (r, a))| {
            let mut o = result(r, a);
            if let Some(c) = report.monitor {
                // Results are in cell order, like the counts.
                o["monitor"] = monitor_counts(c, i);
            }
            if let Some(t) = report
                .concurrency
                .and_then(|c| c.cells.get(i))
                .and_then(Option::as_ref)
            {
                o["concurrency"] = json!(t.concurrency);
                o["throughput"] = json!({
                    "value": num(t.value),
                    "ci": t.ci.map(|[lo, hi]| json!([num(lo), num(hi)])),
                    "unit": "1/s",
                    "batches": t.batches,
                });
                if let Some(l) = t.latency {
                    o["latency"] = json!({
                        "p10": num(l.p10), "median": num(l.median), "p90": num(l.p90),
                        "p99": num(l.p99), "count": l.count, "unit": "s",
                    });
                }
                o["cpu_utilisation"] = t.cpu_utilisation.map_or(Value::Null, num);
                o["io_rates"] = json!({
                    "read_bytes_per_second": t.read_bytes_per_second.map(num),
                    "written_bytes_per_second": t.written_bytes_per_second.map(num),
                });
                o["host"] = serde_json::to_value(&t.host).unwrap_or_default();
                o["batches"] = json!(r
                    .batches
                    .iter()
                    .map(|b| json!({
                        "block": b.block,
                        "first_run": b.first_sample,
                        "runs": b.spans.len(),
                        "busy": [num(b.busy.0), num(b.busy.1)],
                        "spans": b.spans.iter().map(|s| json!({"slot": s.slot, "start": num(s.start), "end": num(s.end)})).collect::<Vec<_>>(),
                        "elapsed": num(b.elapsed),
                    }))
                    .collect::<Vec<_>>());
            }
            o
        })
        .collect();
    let mut doc = json!({
        "schema_version": 2,
        "tool": "cmdscope",
        "version": env!("CARGO_PKG_VERSION"),
        "session": {
            "started": started,
            "order": session.order,
            "seed": session.seed,
            "stop_reason": session.stop_reason,
            "interrupted": matches!(session.failure, Some(crate::error::Error::Interrupted)),
            "failure": session.failure.as_ref().map(|e| e.to_string()),
            "shell": session.shell,
            "shell_overhead": overhead,
            "timeout": session.timeout.map(|t| t.as_secs_f64()),
            "counters_unavailable": unavailable,
            "confidence_level": analysis::LEVEL,
            "memory_peak_resident_floor": session.rss_floor.map(num),
            "preflight": session.preflight,
            // `run --simulate`: the simulator and cache geometry of the
            // sim_* metrics; its times are the simulator's.
            "simulated": session.simulated,
            // `run --counted`/`--simulate`: what counted the runs
            // (`hardware` or `cachegrind`), what was asked for, and why.
            "counted_by": session.counted.as_ref().map(|c| c.by),
            "counted": session.counted,
        },
        "results": results,
        "comparisons": report.comparisons.iter().map(Words).collect::<Vec<_>>(),
    });
    if let Some(s) = &report.search {
        doc["search"] = search(s);
    }
    if let Some(c) = report.monitor {
        doc["monitor"] = monitor(c);
    }
    if let Some(s) = report.sweep {
        doc["sweep"] = sweep(s, session);
    }
    if let Some(c) = report.concurrency {
        // The engine's `ratio` is of seconds per completion; the throughput
        // ratio the terminal prints goes beside it, named as such.
        doc["throughput_comparisons"] = json!(c
            .comparisons
            .iter()
            .map(|cmp| {
                let mut v = serde_json::to_value(Words(cmp)).unwrap_or_default();
                let (r, [lo, hi]) = analysis::concurrency::throughput_ratio(cmp);
                v["throughput_ratio"] = num(r);
                v["throughput_ratio_ci"] = json!([num(lo), num(hi)]);
                v
            })
            .collect::<Vec<_>>());
        if !c.scaling.is_empty() {
            doc["scaling"] = json!(c
                .scaling
                .iter()
                .map(|s| scaling(s, session))
                .collect::<Vec<_>>());
        }
    }
    doc
}

/// The sweep table: what it shows (`metric`, and `statistic`: the median
/// of runs, or the mean of batches for throughput), and per curve every
/// value with its interval, its comparison with the best, the best and
/// the set as good as it.
fn sweep(s: &crate::analysis::sweep::Sweep, session: &crate::run::session::Session) -> Value {
    let curves: Vec<Value> = s
        .curves
        .iter()
        .map(|c| {
            let label = |i: usize| c.points.get(i).map(|p| p.label.clone());
            json!({
                "command": c.command,
                "points": c.points.iter().enumerate().map(|(i, p)| json!({
                    "value": p.label,
                    "result": session.results.get(p.cell).map(|r| r.cell.name.clone()),
                    "center": num(p.median),
                    "ci": p.ci.map(|(lo, hi)| json!([num(lo), num(hi)])),
                    "count": p.runs,
                    "comparison_with_best": c.vs_best.get(i).and_then(Option::as_ref).map(Words),
                })).collect::<Vec<_>>(),
                "best": c.best.and_then(label),
                "as_good": c.as_good.iter().filter_map(|&i| label(i)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "metric": s.source.name(),
        "statistic": s.source.center_name(),
        "unit": if s.source.per_batch() { "1/s" } else { s.source.unit().symbol() },
        "counted": if s.source.per_batch() { "batches" } else { "runs" },
        "goal": if s.maximize { "maximize" } else { "minimize" },
        "axis": s.axis,
        "curves": curves,
    })
}

/// One throughput curve over N and its Universal Scalability Law fit.
fn scaling(
    s: &crate::analysis::concurrency::Scaling,
    session: &crate::run::session::Session,
) -> Value {
    use crate::stats::UslOutcome;
    let param =
        |p: &crate::stats::Param| json!({"value": num(p.value), "ci": [num(p.low), num(p.high)]});
    let usl = match &s.usl {
        UslOutcome::Fitted(f) => json!({
            "lambda": param(&f.lambda),
            "sigma": param(&f.sigma),
            "kappa": param(&f.kappa),
            "peak": f.peak.map(|p| json!({
                "n": p.n.map(num),
                "ci": [num(p.low), num(p.high)],
                "throughput": p.throughput.map(num),
            })),
            "r_squared": num(f.r_squared),
            "lack_of_fit_p": f.lack_of_fit_p.map(num),
            "confidence_level": f.level,
        }),
        UslOutcome::Withheld(w) => json!({"note": super::concurrency::withheld(w)}),
    };
    json!({
        "results": s.cells.iter().map(|&i| session.results[i].cell.name.clone()).collect::<Vec<_>>(),
        "points": s.points.iter().map(|p| json!({
            "concurrency": num(p.n),
            "throughput": num(p.throughput),
            "se": p.se.map(num),
        })).collect::<Vec<_>>(),
        "usl": usl,
    })
}

/// The top-level `search` object: what was searched, every tried value
/// with its comparison with the best, the race's decisions.
fn search(s: &SearchSection) -> Value {
    let (r, params) = (s.result, s.parameters);
    let point = |g: usize| {
        let o: Map<String, Value> = crate::search::point(params, g)
            .into_iter()
            .map(|(name, value)| (name.to_string(), json!(value)))
            .collect();
        Value::Object(o)
    };
    let per_value: Vec<Value> = r
        .rows
        .iter()
        .map(|(i, status, c)| {
            json!({
                "value": point(*i),
                "runs": r.runs_per_value.get(*i),
                "median": num(r.medians.get(*i).copied().unwrap_or(f64::NAN)),
                "status": status,
                "comparison_with_best": c.as_ref().map(Words),
            })
        })
        .collect();
    json!({
        "parameters": params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        "strategy": if params.len() > 1 { "coordinate" } else { "race" },
        "metric": r.options.source.name(),
        "compared": r.options.quantity(),
        "counted": if r.options.source.per_batch() { "batches" } else { "runs" },
        "goal": if s.maximize { "maximize" } else { "minimize" },
        "values_tried": r.tried.iter().map(|&i| point(i)).collect::<Vec<_>>(),
        "runs": { "total": r.runs, "per_value": per_value },
        "grid_runs": r.full_grid_runs,
        "budget": r.budget,
        "settled": r.settled,
        "budget_exhausted": r.budget_exhausted,
        "status": r.outcome().name(),
        "model": "unimodal between tried neighbours along each parameter",
        "bracket": params.iter().zip(&r.bracket.ranges).map(|(p, range)| match range {
            Some((lo, hi)) => json!({"parameter": p.name, "ordered": true, "low": p.values.get(*lo), "high": p.values.get(*hi)}),
            None => json!({"parameter": p.name, "ordered": false}),
        }).collect::<Vec<_>>(),
        "bracket_untried": r.bracket.untried,
        "as_good_among": "tried values",
        "best": point(r.best),
        "as_good": r.as_good.iter().map(|&i| point(i)).collect::<Vec<_>>(),
        "decisions": r.decisions.iter().map(JsonDecision::from).collect::<Vec<_>>(),
    })
}

/// One step of the race as the JSON writes it: the search's fields, its
/// comparison (a drop's) worded by report.
#[derive(serde::Serialize)]
struct JsonDecision<'a> {
    step: usize,
    action: &'static str,
    values: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    runs_each: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    leader_value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<Words<'a, Comparison>>,
    reason: &'a str,
}

impl<'a> From<&'a Decision> for JsonDecision<'a> {
    fn from(d: &'a Decision) -> Self {
        // No `..`: a field added to `Decision` must be placed here.
        let Decision {
            step,
            action,
            points: _,
            values,
            runs_each,
            leader: _,
            leader_value,
            comparison,
            reason,
        } = d;
        JsonDecision {
            step: *step,
            action,
            values,
            runs_each: *runs_each,
            leader_value: leader_value.as_deref(),
            comparison: comparison.as_ref().map(Words),
            reason,
        }
    }
}

/// A result's `monitor` object: `{monitor_NAME: [per run]}`, null for a
/// run without a count.
fn monitor_counts(c: &Counts, cell: usize) -> Value {
    let per: Map<String, Value> = c
        .watch
        .names
        .iter()
        .enumerate()
        .map(|(p, name)| {
            let v: Vec<Option<f64>> = crate::monitor::series(c, cell, p)
                .into_iter()
                .map(|x| x.is_finite().then_some(x))
                .collect();
            (format!("monitor_{name}"), json!(v))
        })
        .collect();
    Value::Object(per)
}

/// The top-level `monitor` object: the command, its patterns, the settle
/// time and how it ended.
fn monitor(c: &Counts) -> Value {
    json!({
        "command": c.watch.command,
        "patterns": c.watch.names.iter().zip(&c.watch.regexes).map(|(n, r)| json!({"name": n, "regex": r})).collect::<Vec<_>>(),
        "settle_seconds": c.watch.settle,
        "ended_after_runs": c.ended.as_ref().map(|(n, _)| n),
        "ended": c.ended.as_ref().map(|(_, how)| how),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::{mean, two_cells, FAST};

    fn parse(report: &Report) -> Value {
        let text = Json.render(report).unwrap();
        assert!(text.ends_with("}\n"), "{text}");
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn hyperfine_fields_hold_the_runs_and_their_statistics() {
        let f = two_cells();
        let doc = parse(&f.report());
        assert_eq!(doc["schema_version"], 2);
        assert_eq!(doc["tool"], "cmdscope");
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        let fast = &results[0];
        assert_eq!(fast["command"], "fast");
        assert_eq!(results[1]["command"], "slow | grep x");
        assert!((fast["mean"].as_f64().unwrap() - mean(&FAST)).abs() < 1e-12);
        assert_eq!(fast["min"].as_f64(), Some(0.0097));
        assert_eq!(fast["max"].as_f64(), Some(0.0103));
        assert_eq!(fast["user"].as_f64(), Some(0.002));
        assert_eq!(fast["system"].as_f64(), Some(0.001));
        let times: Vec<f64> = fast["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        assert_eq!(times, FAST);
        assert_eq!(fast["exit_codes"], json!([0, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!(fast["memory_usage_byte"][0], 4 * 1024 * 1024);
        assert_eq!(fast["runs"], 8);
        // Version 2's per-run measurements and summary.
        assert_eq!(fast["measurements"][3]["time_wall_clock"]["value"], 0.0101);
        assert_eq!(fast["measurements"][3]["run_index"], 3);
        assert_eq!(fast["summary"]["time_wall_clock"]["count"], 8);
        // No search, no monitor: no such sections.
        assert!(doc.get("search").is_none());
        assert!(doc.get("monitor").is_none());
        assert!(fast.get("monitor").is_none());
    }

    #[test]
    fn comparisons_are_the_engines() {
        let f = two_cells();
        let doc = parse(&f.report());
        let c = doc["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == "time_wall_clock")
            .unwrap();
        assert_eq!(c["baseline"], "fast");
        assert_eq!(c["candidate"], "slow | grep x");
        assert_eq!(c["verdict"], "slower");
        assert_eq!(
            doc["comparisons"].as_array().unwrap().len(),
            f.comparisons.len()
        );
    }

    #[test]
    fn monitor_counts_go_per_result_and_on_top() {
        let f = two_cells();
        let counts = Counts {
            watch: crate::run::settings::MonitorSettings {
                command: "tail -f log".into(),
                names: vec!["hits".into()],
                regexes: vec!["^hit".into()],
                settle: 0.1,
            },
            per_run: vec![vec![vec![1.0, f64::NAN]], vec![vec![3.0, 4.0]]],
            ended: Some((3, "exit status 1".into())),
        };
        let report = Report {
            monitor: Some(&counts),
            ..f.report()
        };
        let doc = parse(&report);
        assert_eq!(
            doc["results"][0]["monitor"]["monitor_hits"],
            json!([1.0, null])
        );
        assert_eq!(
            doc["results"][1]["monitor"]["monitor_hits"],
            json!([3.0, 4.0])
        );
        assert_eq!(
            doc["monitor"],
            json!({
                "command": "tail -f log",
                "patterns": [{"name": "hits", "regex": "^hit"}],
                "settle_seconds": 0.1,
                "ended_after_runs": 3,
                "ended": "exit status 1",
            })
        );
    }
}
