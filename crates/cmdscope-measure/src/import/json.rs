//! cmdscope and hyperfine JSON (schemas 1 and 2) into a [`Dataset`].
//!
//! One parser for both tools: cmdscope's JSON is a superset of hyperfine
//! 2's (`results[].measurements[].<metric>.{value, unit}` plus fields of its
//! own), so the same code reads both and only the detection names the
//! format. hyperfine 1's flat per-run `times` share the JSON tree, the
//! paths in the errors and the field helpers. Text in, no I/O.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{ImportError, SeriesSet};
use crate::import::dataset::{Benchmark, Dataset};
use crate::metrics::{Metric, Unit};

/// A JSON value that keeps object keys in document order (serde_json's
/// `Value` sorts them without the `preserve_order` feature, and parameter
/// order is part of the data model).
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// The first value under `key` of an object; `None` for other kinds.
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        struct JsonVisitor;

        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Number(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::String(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::String(v))
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
                Json::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut fields = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Json>()? {
                    fields.push((k, v));
                }
                Ok(Json::Object(fields))
            }
        }

        deserializer.deserialize_any(JsonVisitor)
    }
}

fn field_err(path: &str, message: impl Into<String>) -> ImportError {
    ImportError::Field {
        path: path.to_owned(),
        message: message.into(),
        line: None,
    }
}

/// One step of a JSON path as the importer writes it (`results[0].times[3]`).
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn path_steps(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            steps.push(Step::Key(key.to_string()));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            steps.push(Step::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
    }
    Some(steps)
}

/// The line (1-based) where the value at `path` starts in `text`, a
/// document that already parsed as JSON. A small walk over the text: the
/// parsed tree keeps no positions.
pub(super) fn json_line(text: &str, path: &str) -> Option<usize> {
    let b = text.as_bytes();
    let ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    // End of the string starting at `i` (on its opening quote).
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    // End of the value starting at `i`.
    let value_end = |mut i: usize| -> Option<usize> {
        let mut depth = 0usize;
        loop {
            match *b.get(i)? {
                b'"' => i = string_end(i)?,
                b'{' | b'[' => {
                    depth += 1;
                    i += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    i += 1;
                }
                b',' if depth == 0 => return Some(i),
                _ => i += 1,
            }
            if depth == 0 && matches!(b.get(i), Some(b',' | b'}' | b']') | None) {
                return Some(i);
            }
        }
    };
    let mut i = 0;
    ws(&mut i);
    for step in path_steps(path)? {
        match (step, *b.get(i)?) {
            (Step::Key(key), b'{') => {
                i += 1;
                loop {
                    ws(&mut i);
                    if *b.get(i)? != b'"' {
                        return None;
                    }
                    let end = string_end(i)?;
                    let name: String = serde_json::from_str(&text[i..end]).ok()?;
                    i = end;
                    ws(&mut i);
                    i += 1; // ':'
                    ws(&mut i);
                    if name == key {
                        break;
                    }
                    i = value_end(i)?;
                    ws(&mut i);
                    if *b.get(i)? != b',' {
                        return None;
                    }
                    i += 1;
                }
            }
            (Step::Index(n), b'[') => {
                i += 1;
                for _ in 0..n {
                    ws(&mut i);
                    i = value_end(i)?;
                    ws(&mut i);
                    if *b.get(i)? != b',' {
                        return None;
                    }
                    i += 1;
                }
                ws(&mut i);
            }
            _ => return None,
        }
    }
    Some(b[..i].iter().filter(|&&c| c == b'\n').count() + 1)
}

pub(super) fn parse_json(text: &str, source: &str) -> Result<Dataset, ImportError> {
    let root: Json = serde_json::from_str(text).map_err(|e| {
        // serde_json's Display appends " at line L column C"; keep the cause only.
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
        ImportError::Json {
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;

    if !matches!(root, Json::Object(_)) {
        return Err(ImportError::UnknownJson(format!(
            "top level is {}; expected an object with a `results` array \
             (cmdscope or hyperfine JSON)",
            root.kind()
        )));
    }
    let is_cmdscope = matches!(root.get("tool"), Some(Json::String(t)) if t == "cmdscope");
    if is_cmdscope {
        match root.get("schema_version") {
            None | Some(Json::Null) => {}
            Some(Json::Number(v)) if *v == 1.0 || *v == 2.0 => {}
            Some(Json::Number(v)) => {
                return Err(field_err(
                    "schema_version",
                    format!("unsupported cmdscope schema version {v} (this build reads 2)"),
                ))
            }
            Some(other) => {
                return Err(field_err(
                    "schema_version",
                    format!("expected a number, found {}", other.kind()),
                ))
            }
        }
    }

    let results = match root.get("results") {
        Some(Json::Array(items)) => items,
        Some(other) => {
            return Err(field_err(
                "results",
                format!("expected an array, found {}", other.kind()),
            ))
        }
        None => {
            return Err(ImportError::UnknownJson(
                "no `results` array: this is neither cmdscope nor hyperfine JSON".into(),
            ))
        }
    };
    let first = results
        .first()
        .ok_or_else(|| field_err("results", "empty array: no benchmarks"))?;

    let format = if is_cmdscope {
        "cmdscope"
    } else if first.get("measurements").is_some() {
        "hyperfine-2"
    } else if first.get("times").is_some() {
        "hyperfine-1"
    } else if !matches!(first, Json::Object(_)) {
        return Err(field_err(
            "results[0]",
            format!("expected an object, found {}", first.kind()),
        ));
    } else if first.get("mean").is_some() {
        return Err(field_err(
            "results[0]",
            "only summary statistics (`mean`, ...), no per-run `times` or \
             `measurements`: distributions cannot be compared",
        ));
    } else {
        return Err(ImportError::UnknownJson(
            "results[0] has neither `measurements` (cmdscope, hyperfine 2) nor `times` \
             (hyperfine 1)"
                .into(),
        ));
    };

    let mut benchmarks = Vec::with_capacity(results.len());
    // Benchmarks are matched across files by name and parameters (in any
    // order): two with the same identity in one file could only be told
    // apart by dropping one, and the dropped one may be the slow one.
    let mut identities = std::collections::HashMap::new();
    for (i, result) in results.iter().enumerate() {
        let path = format!("results[{i}]");
        let bench = if format == "hyperfine-1" {
            parse_hyperfine1_result(result, &path)?
        } else {
            parse_measured_result(result, &path)?
        };
        let mut params = bench.parameters.clone();
        params.sort();
        if let Some(first) = identities.insert((bench.name.clone(), params), i) {
            let with = if bench.parameters.is_empty() {
                String::new()
            } else {
                " with the same parameters".to_owned()
            };
            return Err(field_err(
                &path,
                format!(
                    "benchmark '{}' appears again{with} (first as results[{first}]); \
                     results are matched by name, so each must be unique \
                     (name them apart, e.g. with --command-name)",
                    bench.name
                ),
            ));
        }
        benchmarks.push(bench);
    }
    let rss_floor = match root
        .get("session")
        .and_then(|s| s.get("memory_peak_resident_floor"))
    {
        Some(Json::Number(v)) if v.is_finite() && *v > 0.0 => Some(*v),
        _ => None,
    };
    Ok(Dataset {
        source: source.to_owned(),
        format: format.to_owned(),
        benchmarks,
        rss_floor,
    })
}

fn as_object<'a>(node: &'a Json, path: &str) -> Result<&'a [(String, Json)], ImportError> {
    match node {
        Json::Object(fields) => Ok(fields),
        other => Err(field_err(
            path,
            format!("expected an object, found {}", other.kind()),
        )),
    }
}

fn required_string(node: &Json, key: &str, path: &str) -> Result<String, ImportError> {
    match node.get(key) {
        Some(Json::String(s)) => Ok(s.clone()),
        Some(other) => Err(field_err(
            &format!("{path}.{key}"),
            format!("expected a string, found {}", other.kind()),
        )),
        None => Err(field_err(path, format!("missing `{key}`"))),
    }
}

/// Benchmark name: `name` when present (cmdscope's display name), else `command`.
fn benchmark_name(result: &Json, path: &str) -> Result<String, ImportError> {
    match result.get("name") {
        Some(Json::String(s)) if !s.is_empty() => Ok(s.clone()),
        None | Some(Json::Null) | Some(Json::String(_)) => required_string(result, "command", path),
        Some(other) => Err(field_err(
            &format!("{path}.name"),
            format!("expected a string, found {}", other.kind()),
        )),
    }
}

/// `parameters`: an object whose values are strings (hyperfine 1, cmdscope),
/// numbers or booleans, or `{"value": ..}` objects (hyperfine 2).
fn parameters(result: &Json, path: &str) -> Result<Vec<(String, String)>, ImportError> {
    let fields = match result.get("parameters") {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(node) => as_object(node, &format!("{path}.parameters"))?,
    };
    let mut out = Vec::with_capacity(fields.len());
    for (key, value) in fields {
        let vpath = format!("{path}.parameters.{key}");
        let value = match value {
            Json::Object(_) => match value.get("value") {
                Some(inner) => scalar_to_string(inner, &format!("{vpath}.value"))?,
                None => return Err(field_err(&vpath, "object without `value`")),
            },
            other => scalar_to_string(other, &vpath)?,
        };
        out.push((key.clone(), value));
    }
    Ok(out)
}

fn scalar_to_string(node: &Json, path: &str) -> Result<String, ImportError> {
    match node {
        Json::String(s) => Ok(s.clone()),
        Json::Number(n) => Ok(format!("{n}")),
        Json::Bool(b) => Ok(b.to_string()),
        other => Err(field_err(
            path,
            format!("expected a string or number, found {}", other.kind()),
        )),
    }
}

/// Multiplier from a unit as written in JSON into the metric's base unit,
/// or `None` when the unit does not belong to that kind of quantity.
fn unit_factor(unit: &str, kind: Unit) -> Option<f64> {
    let u = unit.trim();
    match kind {
        Unit::Seconds => match u {
            "" | "s" | "sec" | "second" | "seconds" => Some(1.0),
            "ms" | "millisecond" | "milliseconds" => Some(1e-3),
            "µs" | "μs" | "us" | "microsecond" | "microseconds" => Some(1e-6),
            "ns" | "nanosecond" | "nanoseconds" => Some(1e-9),
            "min" | "minute" | "minutes" => Some(60.0),
            _ => None,
        },
        Unit::Bytes => match u {
            "" | "B" | "byte" | "bytes" => Some(1.0),
            "KiB" | "kibibyte" | "kibibytes" => Some(1024.0),
            "MiB" | "mebibyte" | "mebibytes" => Some(1024.0 * 1024.0),
            "GiB" | "gibibyte" | "gibibytes" => Some(1024.0 * 1024.0 * 1024.0),
            "kB" | "KB" | "kilobyte" | "kilobytes" => Some(1e3),
            "MB" | "megabyte" | "megabytes" => Some(1e6),
            "GB" | "gigabyte" | "gigabytes" => Some(1e9),
            _ => None,
        },
        Unit::Count => match u {
            "" | "count" | "1" => Some(1.0),
            _ => None,
        },
    }
}

/// Metric names other tools use for a cmdscope metric.
fn metric_alias(name: &str) -> &str {
    match name {
        // hyperfine 2's name for peak RSS.
        "peak_memory_usage" | "memory_usage_byte" => "memory_peak_resident",
        other => other,
    }
}

/// Keys of a measurement object that are run metadata, not metrics.
const RUN_FIELDS: &[&str] = &[
    "run_index",
    "exit_code",
    "timed_out",
    "signal",
    "exit_signal",
];

/// A finite, non-negative number (every cmdscope metric is a duration, a
/// size or a count).
fn non_negative(value: f64, path: &str, what: &str) -> Result<f64, ImportError> {
    if !value.is_finite() {
        Err(field_err(path, format!("{what} {value} is not finite")))
    } else if value < 0.0 {
        Err(field_err(path, format!("negative {what} {value}")))
    } else {
        Ok(value)
    }
}

/// `value` in base units; a value too large to convert (1e308 GiB) is an
/// error, not an infinity that statistics would drop silently.
fn converted(value: f64, factor: f64, unit: &str, path: &str) -> Result<f64, ImportError> {
    let v = value * factor;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(field_err(
            path,
            format!("{value:e} {unit} is too large to convert to base units"),
        ))
    }
}

/// cmdscope and hyperfine 2: `measurements[j].<metric>.{value, unit}`.
fn parse_measured_result(result: &Json, path: &str) -> Result<Benchmark, ImportError> {
    as_object(result, path)?;
    let name = benchmark_name(result, path)?;
    let parameters = parameters(result, path)?;
    let runs = match result.get("measurements") {
        Some(Json::Array(runs)) => runs,
        Some(other) => {
            return Err(field_err(
                &format!("{path}.measurements"),
                format!("expected an array, found {}", other.kind()),
            ))
        }
        None => return Err(field_err(path, "missing `measurements`")),
    };

    let mut set = SeriesSet::default();
    for (j, run) in runs.iter().enumerate() {
        let rpath = format!("{path}.measurements[{j}]");
        let fields = as_object(run, &rpath)?;
        // A killed run was cut short and a removed outlier was excluded
        // when it was measured: neither is a sample (their flags as
        // cmdscope writes them).
        // A flag of another type is an error: read as false, a string
        // `"yes"` would count a killed run as a sample.
        let flag = |k: &str| match run.get(k) {
            None | Some(Json::Null) => Ok(false),
            Some(Json::Bool(b)) => Ok(*b),
            Some(other) => Err(field_err(
                &format!("{rpath}.{k}"),
                format!("expected true or false, found {}", other.kind()),
            )),
        };
        if flag("timed_out")? | flag("outlier_removed")? {
            continue;
        }
        for (key, node) in fields {
            if RUN_FIELDS.contains(&key.as_str()) || !matches!(node, Json::Object(_)) {
                continue;
            }
            let mpath = format!("{rpath}.{key}");
            let value = match node.get("value") {
                // Not a quantity (some other annotation): not ours to judge.
                None => continue,
                // Not measured in this run.
                Some(Json::Null) => continue,
                Some(Json::Number(v)) => *v,
                Some(other) => {
                    return Err(field_err(
                        &format!("{mpath}.value"),
                        format!("expected a number, found {}", other.kind()),
                    ))
                }
            };
            let unit = match node.get("unit") {
                None | Some(Json::Null) => "",
                Some(Json::String(u)) => u.as_str(),
                Some(other) => {
                    return Err(field_err(
                        &format!("{mpath}.unit"),
                        format!("expected a string, found {}", other.kind()),
                    ))
                }
            };
            let vpath = format!("{mpath}.value");
            let metric_name = metric_alias(key);
            if let Some(metric) = Metric::from_name(metric_name) {
                let kind = metric.unit();
                let factor = unit_factor(unit, kind).ok_or_else(|| {
                    field_err(
                        &format!("{mpath}.unit"),
                        format!("unit '{unit}' does not fit {} ", metric.name())
                            + match kind {
                                Unit::Seconds => "(expected a time unit such as s or ms)",
                                Unit::Bytes => "(expected a size unit such as B or KiB)",
                                Unit::Count => "(expected a plain count)",
                            },
                    )
                })?;
                let v = converted(non_negative(value, &vpath, "value")?, factor, unit, &vpath)?;
                set.push(metric.name(), kind.symbol(), false, v);
            } else {
                // A metric this build does not know: keep it, in base units
                // when the unit is a time or a size, as written otherwise.
                if !value.is_finite() {
                    return Err(field_err(&vpath, format!("value {value} is not finite")));
                }
                let time = unit_factor(unit, Unit::Seconds).filter(|_| !unit.is_empty());
                let size = unit_factor(unit, Unit::Bytes).filter(|_| !unit.is_empty());
                let (v, unit) = match (time, size) {
                    (Some(f), _) => (converted(value, f, unit, &vpath)?, "s"),
                    (None, Some(f)) => (converted(value, f, unit, &vpath)?, "B"),
                    (None, None) => (value, unit),
                };
                set.push(key, unit, false, v);
            }
        }
    }
    Ok(Benchmark {
        name,
        parameters,
        series: set.series,
    })
}

/// hyperfine 1.x: flat summary fields plus per-run `times` (seconds) and,
/// in later 1.x versions, `memory_usage_byte`.
fn parse_hyperfine1_result(result: &Json, path: &str) -> Result<Benchmark, ImportError> {
    as_object(result, path)?;
    let name = required_string(result, "command", path)?;
    let parameters = parameters(result, path)?;
    let mut set = SeriesSet::default();

    let times = numbers(result, "times", path)?.ok_or_else(|| {
        field_err(
            path,
            "missing per-run `times`: summary statistics alone cannot be compared",
        )
    })?;
    set.ensure(Metric::WallTime.name(), Unit::Seconds.symbol(), false);
    for (k, t) in times.into_iter().enumerate() {
        let v = non_negative(t, &format!("{path}.times[{k}]"), "time")?;
        set.push(Metric::WallTime.name(), Unit::Seconds.symbol(), false, v);
    }
    if let Some(memory) = numbers(result, "memory_usage_byte", path)? {
        for (k, m) in memory.into_iter().enumerate() {
            let v = non_negative(m, &format!("{path}.memory_usage_byte[{k}]"), "size")?;
            set.push(Metric::PeakRss.name(), Unit::Bytes.symbol(), false, v);
        }
    }
    // `user` and `system` are means over the runs, not per-run values:
    // inventing samples from them would fake a distribution, so they are
    // not imported.
    Ok(Benchmark {
        name,
        parameters,
        series: set.series,
    })
}

/// An optional array of numbers under `key`.
fn numbers(node: &Json, key: &str, path: &str) -> Result<Option<Vec<f64>>, ImportError> {
    let items = match node.get(key) {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Array(items)) => items,
        Some(other) => {
            return Err(field_err(
                &format!("{path}.{key}"),
                format!("expected an array of numbers, found {}", other.kind()),
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(k, item)| match item {
            Json::Number(v) => Ok(*v),
            other => Err(field_err(
                &format!("{path}.{key}[{k}]"),
                format!("expected a number, found {}", other.kind()),
            )),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
