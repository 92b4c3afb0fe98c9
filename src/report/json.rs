//! JSON export: a superset of hyperfine's schemas. Version 2's
//! `results[i].measurements[j].<metric>.value` and `results[i].summary`, and
//! version 1's flat fields (`mean`, `times`, `exit_codes`, ...) so that tools
//! written for either keep working.

use serde_json::{json, Map, Value};

use crate::analysis::{self, CellAnalysis};
use crate::metrics::{Metric, Sample};
use crate::run::session::{CellResult, Session};

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

pub fn render(session: &Session, analyses: &[CellAnalysis], comparisons: Value) -> String {
    render_with_search(session, analyses, comparisons, None)
}

/// `render` with the optimum search's top-level `search` object.
pub fn render_with_search(
    session: &Session,
    analyses: &[CellAnalysis],
    comparisons: Value,
    search: Option<Value>,
) -> String {
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
        "results": session.results.iter().zip(analyses).map(|(r, a)| result(r, a)).collect::<Vec<_>>(),
        "comparisons": comparisons,
    });
    if let Some(search) = search {
        doc["search"] = search;
    }
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}
