//! `go test -bench` output (benchfmt text) into a [`Dataset`]: result
//! lines, `pkg:` and the other configuration lines, `Unit` metadata lines,
//! and benchstat's unit tidying. Any other line is noise, as for benchstat.
//! Text in, no I/O.

use std::collections::{HashMap, HashSet};

use super::{ImportError, SeriesSet};
use crate::import::dataset::{Benchmark, Dataset};

/// Package, name and parameters: what identifies one Go benchmark.
type GoKey = (Option<String>, String, Vec<(String, String)>);

/// One benchmark of Go output while parsing, before names are final.
struct GoBench {
    pkg: Option<String>,
    /// Name without the `Benchmark` prefix and the `-N` GOMAXPROCS suffix.
    name: String,
    parameters: Vec<(String, String)>,
    series: SeriesSet,
}

/// A `key: value` configuration line by benchfmt's rule: the key starts with
/// a lower-case letter and has no spaces or upper-case letters.
fn config_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let mut chars = key.chars();
    let first = chars.next()?;
    if !first.is_lowercase() || key.chars().any(|c| c.is_whitespace() || c.is_uppercase()) {
        return None;
    }
    if value.is_empty() {
        return Some((key, ""));
    }
    if !value.starts_with([' ', '\t']) {
        return None;
    }
    Some((key, value.trim()))
}

/// Splits `Parse/size=10-8` into (`Parse/size=10`, Some("8")).
fn split_procs(full: &str) -> (&str, Option<&str>) {
    if let Some((base, procs)) = full.rsplit_once('-') {
        if !base.is_empty() && !procs.is_empty() && procs.bytes().all(|b| b.is_ascii_digit()) {
            return (base, Some(procs));
        }
    }
    (full, None)
}

/// benchstat's unit tidying: `ns/X` becomes `sec/X` in seconds; everything
/// else keeps its unit. Returns (metric, unit symbol, scale, higher is better,
/// must be non-negative).
fn go_unit(unit: &str) -> (String, String, f64, bool, bool) {
    if let Some(per) = unit.strip_prefix("ns/") {
        return (format!("sec/{per}"), "s".into(), 1e-9, false, true);
    }
    match unit {
        "B/op" => ("B/op".into(), "B".into(), 1.0, false, true),
        "allocs/op" => ("allocs/op".into(), "".into(), 1.0, false, true),
        "MB/s" => ("MB/s".into(), "MB/s".into(), 1.0, true, true),
        // Custom units (b.ReportMetric): kept as they are; rates are assumed
        // to be better when higher unless a `Unit` line says otherwise.
        other => (
            other.into(),
            other.into(),
            1.0,
            other.ends_with("/s"),
            false,
        ),
    }
}

/// One result line of `go test -bench` output, values in base units:
/// (metric, unit symbol, higher is better, value).
struct GoResult<'a> {
    /// Full name after `Benchmark`, with the `-N` suffix.
    name: &'a str,
    values: Vec<(String, String, bool, f64)>,
}

/// Parses `BenchmarkName-8  1000  1234 ns/op  512 B/op ...`. `Ok(None)` for
/// a bare name (what `go test -v` prints when a benchmark starts); `Err`
/// with a message naming the benchmark for a malformed line.
fn parse_result_line(line: &str) -> Result<Option<GoResult<'_>>, String> {
    let mut fields = line.split_whitespace();
    let full = fields.next().unwrap_or("Benchmark");
    let rest: Vec<&str> = fields.collect();
    let name = &full["Benchmark".len()..];
    if rest.is_empty() {
        return Ok(None);
    }
    if name.is_empty() {
        return Err("benchmark line without a name".into());
    }
    let iterations = rest[0];
    match iterations.parse::<u64>() {
        Ok(n) if n > 0 => {}
        _ => {
            return Err(format!(
                "{full}: expected an iteration count after the name, found '{iterations}'"
            ))
        }
    }
    let pairs = &rest[1..];
    if pairs.is_empty() {
        return Err(format!("{full}: no measurements after the iteration count"));
    }
    if pairs.len() % 2 != 0 {
        return Err(format!(
            "{full}: value '{}' has no unit (values and units must come in pairs)",
            pairs[pairs.len() - 1]
        ));
    }
    let mut values = Vec::with_capacity(pairs.len() / 2);
    for pair in pairs.chunks(2) {
        let (value, unit) = (pair[0], pair[1]);
        let v: f64 = value
            .parse()
            .map_err(|_| format!("{full}: '{value}' is not a number (value for unit '{unit}')"))?;
        if unit.parse::<f64>().is_ok() {
            return Err(format!(
                "{full}: expected a unit after value '{value}', found number '{unit}'"
            ));
        }
        if !v.is_finite() {
            return Err(format!("{full}: {unit} value '{value}' is not finite"));
        }
        let (metric, symbol, scale, hib, non_neg) = go_unit(unit);
        if non_neg && v < 0.0 {
            return Err(format!("{full}: negative {unit} value '{value}'"));
        }
        values.push((metric, symbol, hib, v * scale));
    }
    Ok(Some(GoResult { name, values }))
}

pub(super) fn parse_go(text: &str, source: &str) -> Result<Dataset, ImportError> {
    let mut benches: Vec<GoBench> = Vec::new();
    let mut index: HashMap<GoKey, usize> = HashMap::new();
    let mut pkg: Option<String> = None;
    let mut pkgs: Vec<String> = Vec::new();
    let mut saw_go_output = false;
    // `Unit <unit> better=higher|lower assume=exact` metadata lines (benchfmt).
    let mut better: HashMap<String, bool> = HashMap::new();
    let mut exact: HashSet<String> = HashSet::new();

    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end();
        let go_err = |message: String| ImportError::GoLine {
            line: line_no,
            message,
        };

        if let Some(after) = line.strip_prefix("Benchmark") {
            // benchfmt reads every line with this prefix as a result. Names
            // from `go test` have no lower-case letter after the prefix, but
            // other generators write `Benchmarkfoo_total`: such a line is a
            // result when it parses as one, and prose ("Benchmarking ...")
            // to be ignored when it does not. A malformed line of the
            // `go test` kind stays an error.
            let maybe_prose = after.chars().next().is_some_and(|c| c.is_lowercase());
            let result = match parse_result_line(line) {
                Ok(Some(result)) => result,
                // `go test -v` prints the bare name before the result line.
                Ok(None) => continue,
                Err(_) if maybe_prose => continue,
                Err(message) => return Err(go_err(message)),
            };

            let (base, procs) = split_procs(result.name);
            let mut params: Vec<(String, String)> = base
                .split('/')
                .skip(1)
                .filter_map(|part| part.split_once('='))
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            if let Some(p) = procs {
                params.push(("gomaxprocs".into(), p.to_owned()));
            }
            let key = (pkg.clone(), base.to_owned(), params.clone());
            let idx = match index.get(&key) {
                Some(&idx) => idx,
                None => {
                    benches.push(GoBench {
                        pkg: pkg.clone(),
                        name: base.to_owned(),
                        parameters: params,
                        series: SeriesSet::default(),
                    });
                    index.insert(key, benches.len() - 1);
                    benches.len() - 1
                }
            };
            for (metric, symbol, hib, value) in result.values {
                benches[idx].series.push(&metric, &symbol, hib, value);
            }
            continue;
        }

        if let Some(rest) = line
            .strip_prefix("Unit ")
            .or_else(|| line.strip_prefix("Unit\t"))
        {
            let mut fields = rest.split_whitespace();
            if let Some(unit) = fields.next() {
                let (metric, ..) = go_unit(unit);
                for kv in fields {
                    match kv {
                        "better=higher" => {
                            better.insert(metric.clone(), true);
                        }
                        "better=lower" => {
                            better.insert(metric.clone(), false);
                        }
                        "assume=exact" => {
                            exact.insert(metric.clone());
                        }
                        // `assume=nothing` is the default; other keys are
                        // not ours (benchstat ignores them too).
                        _ => {}
                    }
                }
            }
            saw_go_output = true;
            continue;
        }

        if let Some((key, value)) = config_line(line) {
            if key == "pkg" {
                pkg = (!value.is_empty()).then(|| value.to_owned());
                if let Some(p) = &pkg {
                    if !pkgs.contains(p) {
                        pkgs.push(p.clone());
                    }
                }
            }
            if matches!(key, "goos" | "goarch" | "pkg" | "cpu") {
                saw_go_output = true;
            }
            continue;
        }

        let t = line.trim_start();
        if t == "PASS"
            || t.starts_with("FAIL")
            || t.starts_with("ok ")
            || t.starts_with("ok\t")
            || t.starts_with("--- ")
        {
            saw_go_output = true;
        }
        // Anything else (test logs, build output) is noise, as for benchstat.
    }

    if benches.is_empty() {
        return Err(if saw_go_output {
            ImportError::NoGoBenchmarks
        } else {
            ImportError::UnknownFormat
        });
    }

    // Same-named benchmarks of different packages must stay apart: with more
    // than one package in the file, names are qualified as `pkg.Name`.
    let qualify = pkgs.len() > 1;
    let benchmarks = benches
        .into_iter()
        .map(|b| {
            let mut series = b.series.series;
            for s in &mut series {
                if let Some(&hib) = better.get(&s.metric) {
                    s.higher_is_better = hib;
                }
                s.exact = exact.contains(&s.metric);
            }
            let name = match (&b.pkg, qualify) {
                (Some(p), true) => format!("{p}.{}", b.name),
                _ => b.name,
            };
            Benchmark {
                name,
                parameters: b.parameters,
                series,
            }
        })
        .collect();
    Ok(Dataset {
        source: source.to_owned(),
        format: "go".into(),
        benchmarks,
        rss_floor: None,
    })
}
