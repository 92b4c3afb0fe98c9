//! JSON export: a superset of hyperfine's schemas. Version 2's
//! `results[i].measurements[j].<metric>.value` and `results[i].summary`, and
//! version 1's flat fields (`mean`, `times`, `exit_codes`, ...) so that tools
//! written for either keep working. The optimum search and `--monitor`
//! add their own top-level objects (`search`, `monitor`) and the monitor a
//! per-result `monitor` object.

use serde_json::{json, Map, Value};

use super::{Exporter, Report, SearchSection};
use crate::analysis::{self, CellAnalysis};
use crate::error::Result;
use crate::explain::run_monitor::Counts;
use crate::metrics::{Metric, Sample};
use crate::run::runner::CellResult;

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
        "warnings": a.warnings,
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
                crate::run::plan::Workdir::Tmpfs => "tmpfs".to_string(),
                crate::run::plan::Workdir::Under(d) => d.display().to_string(),
            }),
            "cpus": v.cpus, "nice": v.nice,
        });
    }
    o
}

/// The `--export-json` document.
pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> Result<String> {
        let mut text =
            serde_json::to_string_pretty(&document(report)).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        Ok(text)
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
                o["monitor"] = monitor_counts(c, i);
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
        },
        "results": results,
        "comparisons": serde_json::to_value(report.comparisons).unwrap_or_default(),
    });
    if let Some(s) = &report.search {
        doc["search"] = search(s);
    }
    if let Some(c) = report.monitor {
        doc["monitor"] = monitor(c);
    }
    doc
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
                "comparison_with_best": c,
            })
        })
        .collect();
    json!({
        "parameters": params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        "strategy": if params.len() > 1 { "coordinate" } else { "race" },
        "metric": s.metric.name(),
        "compared": r.options.quantity(),
        "goal": if s.maximize { "maximize" } else { "minimize" },
        "values_tried": r.tried.iter().map(|&i| point(i)).collect::<Vec<_>>(),
        "runs": { "total": r.runs, "per_value": per_value },
        "grid_runs": r.full_grid_runs,
        "budget": r.budget,
        "settled": r.settled,
        "budget_exhausted": r.budget_exhausted,
        "best": point(r.best),
        "as_good": r.as_good.iter().map(|&i| point(i)).collect::<Vec<_>>(),
        "decisions": r.decisions,
    })
}

/// A result's `monitor` object: `{monitor_NAME: [per run]}`, null for a
/// run without a count.
fn monitor_counts(c: &Counts, cell: usize) -> Value {
    let per: Map<String, Value> = c
        .names
        .iter()
        .enumerate()
        .map(|(p, name)| {
            let v: Vec<Option<f64>> = crate::explain::run_monitor::series(c, cell, p)
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
        "command": c.command,
        "patterns": c.names.iter().zip(&c.regexes).map(|(n, r)| json!({"name": n, "regex": r})).collect::<Vec<_>>(),
        "settle_seconds": c.settle,
        "ended_after_runs": c.ended.as_ref().map(|(n, _)| n),
        "ended": c.ended.as_ref().map(|(_, how)| how),
    })
}
