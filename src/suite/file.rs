//! Suite files (TOML): `[[benchmark]]` tables and a `[defaults]` table,
//! read into typed settings, each benchmark's over the defaults. Settings
//! are named like `cmdscope run`'s flags and mean what they mean;
//! `suite::cells` turns a benchmark into the same typed request `run`
//! builds from its flags, so a suite cell and the equivalent command line
//! are the same cell, with the same defaults and checks. Errors name the
//! file, line and column.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Result, SuiteError, SuiteProblem, SuiteSetting};

/// A string, or a number or boolean written without quotes (`us = [500, 1000]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar(pub String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// One string, or a list of strings (`prepare`, `conclude`).
#[derive(Clone, Debug, PartialEq)]
pub struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Strings;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Strings, E> {
                Ok(Strings(vec![v.to_string()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> std::result::Result<Strings, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element::<String>()? {
                    out.push(v);
                }
                Ok(Strings(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// `true` (the default choice), `false` (off) or a value (`shell = "bash"`);
/// for `shell`, unset means make's rule (a shell only for shell syntax).
#[derive(Clone, Debug, PartialEq)]
pub enum Switch {
    Off,
    On,
    Value(String),
}

impl<'de> Deserialize<'de> for Switch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Switch;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true, false or a string")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Switch, E> {
                Ok(if v { Switch::On } else { Switch::Off })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Switch, E> {
                Ok(Switch::Value(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A parameter: a list of values (`-L`) or a scan (`-P`, with `step` as
/// `-D` or `factor` as `--parameter-factor`).
#[derive(Clone, Debug, PartialEq)]
pub enum ParameterSpec {
    List(Vec<String>),
    Scan {
        min: String,
        max: String,
        step: Option<String>,
        factor: Option<String>,
    },
}

impl<'de> Deserialize<'de> for ParameterSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ParameterSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of values or a scan { min, max, step | factor }")
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut s: A,
            ) -> std::result::Result<ParameterSpec, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element::<Scalar>()? {
                    out.push(v.0);
                }
                Ok(ParameterSpec::List(out))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<ParameterSpec, A::Error> {
                let (mut min, mut max, mut step, mut factor) = (None, None, None, None);
                while let Some(key) = m.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "min" => &mut min,
                        "max" => &mut max,
                        "step" => &mut step,
                        "factor" => &mut factor,
                        other => {
                            return Err(de::Error::unknown_field(
                                other,
                                &["min", "max", "step", "factor"],
                            ))
                        }
                    };
                    *slot = Some(m.next_value::<Scalar>()?.0);
                }
                Ok(ParameterSpec::Scan {
                    min: min.ok_or_else(|| de::Error::missing_field("min"))?,
                    max: max.ok_or_else(|| de::Error::missing_field("max"))?,
                    step,
                    factor,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A table whose entries keep the order they are written in (parameters
/// combine in that order, as repeated `-L` flags do).
#[derive(Clone, Debug, PartialEq)]
pub struct Map<V>(pub Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Map<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Vis<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Vis<V> {
            type Value = Map<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Map<V>, A::Error> {
                let mut out: Vec<(String, V)> = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(Map(out))
            }
        }
        d.deserialize_map(Vis(std::marker::PhantomData))
    }
}

impl<'a, V> IntoIterator for &'a Map<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, V)>,
        fn(&'a (String, V)) -> (&'a String, &'a V),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

/// The settings a benchmark and `[defaults]` share: run settings, run
/// variants, hooks and labels, named like `cmdscope run`'s flags.
macro_rules! settings {
    ($(#[$meta:meta])* $name:ident { $($extra:tt)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($extra)*
            pub runs: Option<u64>,
            pub warmup: Option<u64>,
            pub min_runs: Option<u64>,
            pub max_runs: Option<u64>,
            // Spanned: checked here, with the position, by `run`'s own rules.
            pub min_time: Option<Spanned<f64>>,
            pub precision: Option<Spanned<f64>>,
            pub timeout: Option<Spanned<f64>>,
            pub stop_on_timeout: Option<bool>,
            pub alpha: Option<Spanned<f64>>,
            pub order: Option<String>,
            pub seed: Option<u64>,
            pub reference: Option<String>,
            pub ignore_failure: Option<Switch>,
            pub output: Option<String>,
            pub input: Option<String>,
            pub counters: Option<bool>,
            pub simulate: Option<bool>,
            /// `run --counted`'s choice: "auto", "hardware" or "simulator".
            pub counted: Option<Spanned<String>>,
            // Named as `run`'s flags: --I1, --D1, --LL.
            #[serde(rename = "I1")]
            pub i1: Option<Spanned<String>>,
            #[serde(rename = "D1")]
            pub d1: Option<Spanned<String>>,
            #[serde(rename = "LL")]
            pub ll: Option<Spanned<String>>,
            pub remove_outliers: Option<bool>,
            pub metric: Option<String>,
            pub shell: Option<Switch>,
            pub env: Option<Map<Scalar>>,
            pub env_file: Option<String>,
            pub clear_env: Option<bool>,
            pub env_size: Option<Scalar>,
            pub user: Option<Scalar>,
            pub workdir: Option<String>,
            pub workdir_template: Option<String>,
            pub cpus: Option<Scalar>,
            pub nice: Option<Scalar>,
            pub ops: Option<Scalar>,
            pub concurrency: Option<Scalar>,
            pub prepare: Option<Strings>,
            pub conclude: Option<Strings>,
            pub setup: Option<String>,
            pub cleanup: Option<String>,
            pub labels: Option<Map<Scalar>>,
        }
    };
}

settings!(
    /// `[defaults]`: settings for every benchmark.
    #[derive(Default)]
    Defaults {}
);

settings!(
    /// One `[[benchmark]]` table.
    RawBenchmark {
        pub name: Spanned<String>,
        pub command: Option<Spanned<String>>,
        pub commands: Option<Spanned<Vec<String>>>,
        /// Display names, one per command (`-n`).
        pub names: Option<Vec<String>>,
        pub parameters: Option<Spanned<Map<ParameterSpec>>>,
    }
);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    benchmark: Vec<RawBenchmark>,
}

/// A position in the suite file, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.column)
    }
}

impl Position {
    /// A usage error (exit 2) at this position.
    pub fn error(&self, problem: SuiteProblem) -> Error {
        SuiteError::At {
            position: self.to_string(),
            problem,
        }
        .into()
    }
}

/// Positions of byte offsets in one suite text. The line starts are found
/// once, and a column is counted on from the previous lookup when that was
/// earlier on the same line: benchmarks are looked up in file order, so a
/// suite's positions cost one pass over the text, not one per benchmark
/// (which made listing 20,000 benchmarks take seconds).
struct Locator<'a> {
    path: &'a Path,
    text: &'a str,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    /// The previous lookup: byte offset and its column.
    last: std::cell::Cell<(usize, usize)>,
    /// Bytes counted for columns so far (what the tests bound).
    scanned: std::cell::Cell<usize>,
}

impl<'a> Locator<'a> {
    fn new(path: &'a Path, text: &'a str) -> Locator<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Locator {
            path,
            text,
            line_starts,
            last: std::cell::Cell::new((0, 1)),
            scanned: std::cell::Cell::new(0),
        }
    }

    fn at(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        // The line holding `offset`: the last line start at or before it.
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let (last, last_column) = self.last.get();
        let (from, column) = if last >= start && last <= offset {
            (last, last_column)
        } else {
            (start, 1)
        };
        let column = column + self.text[from..offset].chars().count();
        self.scanned.set(self.scanned.get() + (offset - from));
        self.last.set((offset, column));
        Position {
            path: self.path.to_path_buf(),
            line,
            column,
        }
    }

    fn error(&self, offset: usize, problem: SuiteProblem) -> Error {
        self.at(offset).error(problem)
    }
}

/// A benchmark of a suite: its own settings over `[defaults]`, as typed
/// values (`suite::cells` turns them into what `run` measures).
#[derive(Clone, Debug, PartialEq)]
pub struct Benchmark {
    pub name: String,
    /// Where its `name` is written, for messages.
    pub position: Position,
    /// Its settings, `[defaults]` merged in (its `labels` are in `labels`).
    pub settings: Defaults,
    pub commands: Vec<String>,
    /// Display names, one per command.
    pub names: Vec<String>,
    /// Its parameters, as the TOML table lists them.
    pub parameters: Vec<(String, ParameterSpec)>,
    /// Its labels (defaults merged in).
    pub labels: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Suite {
    pub path: PathBuf,
    pub benchmarks: Vec<Benchmark>,
}

/// Reads and checks a suite file: as results files are read (a regular
/// file or a pipe, at most [`MAX_SUITE_BYTES`]), so `/dev/zero` or a FIFO
/// nobody writes to cannot hang or exhaust cmdscope.
pub fn load(path: &Path) -> Result<Suite> {
    let bytes = crate::import::input::read_limited(path, MAX_SUITE_BYTES)?;
    let text = String::from_utf8(bytes).map_err(|e| Error::Parse {
        path: path.into(),
        message: format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })?;
    parse(path, &text)
}

/// Most bytes read from one suite file: some hundred times the size of a
/// suite of 100,000 cells.
pub const MAX_SUITE_BYTES: u64 = 64 << 20;

/// Parses suite text; `path` only names it in messages.
pub fn parse(path: &Path, text: &str) -> Result<Suite> {
    let at = Locator::new(path, text);
    let raw: RawSuite = toml::from_str(text).map_err(|e| {
        at.error(
            e.span().map_or(0, |s| s.start),
            SuiteProblem::Toml(e.message().trim().replace('\n', " ")),
        )
    })?;
    if raw.benchmark.is_empty() {
        return Err(at.error(0, SuiteProblem::NoBenchmark));
    }
    let mut benchmarks: Vec<Benchmark> = Vec::with_capacity(raw.benchmark.len());
    // Name to the line it is first defined on.
    let mut lines: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(raw.benchmark.len());
    for b in &raw.benchmark {
        let position = at.at(b.name.span().start);
        let name = b.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(position.error(SuiteProblem::EmptyName));
        }
        if let Some(first) = lines.insert(name.clone(), position.line) {
            return Err(position.error(SuiteProblem::DefinedTwice {
                name,
                first_line: first,
            }));
        }
        benchmarks.push(benchmark(b, &raw.defaults, name, position, &at)?);
    }
    Ok(Suite {
        path: path.to_path_buf(),
        benchmarks,
    })
}

fn benchmark(
    b: &RawBenchmark,
    d: &Defaults,
    name: String,
    position: Position,
    at: &Locator,
) -> Result<Benchmark> {
    let commands = match (&b.command, &b.commands) {
        (Some(c), None) => vec![c.get_ref().clone()],
        (None, Some(c)) if !c.get_ref().is_empty() => c.get_ref().clone(),
        (None, Some(c)) => return Err(at.error(c.span().start, SuiteProblem::EmptyCommands)),
        (Some(c), Some(_)) => {
            return Err(at.error(c.span().start, SuiteProblem::CommandAndCommands(name)))
        }
        (None, None) => return Err(position.error(SuiteProblem::NoCommand(name))),
    };
    macro_rules! pick {
        ($field:ident) => {
            b.$field.as_ref().or(d.$field.as_ref()).cloned()
        };
    }
    // A benchmark's run count replaces the defaults' bounds and vice versa
    // (on the command line --runs excludes --min-runs/--max-runs).
    let own_count = b.runs.is_some();
    let own_bounds = b.min_runs.is_some() || b.max_runs.is_some();
    let d_runs = d.runs.filter(|_| !own_bounds);
    let d_min = d.min_runs.filter(|_| !own_count);
    let d_max = d.max_runs.filter(|_| !own_count);
    // The numbers `run` checks only once it measures are checked here, by
    // its rules, so a suite is refused whole before anything runs, with the
    // position of the value (which may be in [defaults]).
    let checked =
        |v: Option<Spanned<f64>>, rule: fn(f64) -> Result<()>| -> Result<Option<Spanned<f64>>> {
            match v {
                Some(v) => match rule(*v.get_ref()) {
                    Ok(()) => Ok(Some(v)),
                    Err(e) => Err(at.error(v.span().start, in_benchmark(&name, e))),
                },
                None => Ok(None),
            }
        };
    let timeout = |t: f64| crate::cli::seconds(t, "--timeout", false).map(drop);
    let counted = pick!(counted);
    if let Some(c) = &counted {
        let refuse = |setting| Err(at.error(c.span().start, setting_of(&name, setting)));
        if crate::run::counted::Ask::from_name(c.get_ref()).is_none() {
            return refuse(SuiteSetting::UnknownCounted(c.get_ref().clone()));
        }
        if pick!(simulate) == Some(true) {
            return refuse(SuiteSetting::SimulateAndCounted);
        }
        if pick!(counters) == Some(true) {
            return refuse(SuiteSetting::CountersAndCounted);
        }
    }
    // A cache geometry without `simulate = true` (or `counted`) would be
    // ignored, as `run` refuses --I1 without --simulate or --counted.
    let simulated = pick!(simulate) == Some(true) || counted.is_some();
    let geometry = |v: Option<Spanned<String>>, flag: &str| -> Result<Option<Spanned<String>>> {
        let Some(v) = v else { return Ok(None) };
        if !simulated {
            let key = flag.trim_start_matches('-').to_string();
            return Err(at.error(
                v.span().start,
                setting_of(&name, SuiteSetting::GeometryWithoutSimulation(key)),
            ));
        }
        crate::exec::simulate::check_geometry(flag, v.get_ref())
            .map_err(|e| at.error(v.span().start, in_benchmark(&name, e)))?;
        Ok(Some(v))
    };
    let settings = Defaults {
        runs: b.runs.or(d_runs),
        warmup: pick!(warmup),
        min_runs: b.min_runs.or(d_min),
        max_runs: b.max_runs.or(d_max),
        min_time: checked(pick!(min_time), crate::cli::check_min_time)?,
        precision: checked(pick!(precision), crate::cli::check_precision)?,
        timeout: checked(pick!(timeout), timeout)?,
        stop_on_timeout: pick!(stop_on_timeout),
        alpha: checked(pick!(alpha), crate::cli::check_alpha)?,
        order: pick!(order),
        seed: pick!(seed),
        reference: pick!(reference),
        ignore_failure: pick!(ignore_failure),
        output: pick!(output),
        input: pick!(input),
        counters: pick!(counters),
        simulate: pick!(simulate),
        counted,
        i1: geometry(pick!(i1), "--I1")?,
        d1: geometry(pick!(d1), "--D1")?,
        ll: geometry(pick!(ll), "--LL")?,
        remove_outliers: pick!(remove_outliers),
        metric: pick!(metric),
        shell: pick!(shell),
        env: Some(Map(merged(d.env.as_ref(), b.env.as_ref())
            .into_iter()
            .map(|(k, v)| (k, Scalar(v)))
            .collect())),
        env_file: pick!(env_file),
        clear_env: pick!(clear_env),
        env_size: pick!(env_size),
        user: pick!(user),
        workdir: pick!(workdir),
        workdir_template: pick!(workdir_template),
        cpus: pick!(cpus),
        nice: pick!(nice),
        ops: pick!(ops),
        concurrency: pick!(concurrency),
        prepare: pick!(prepare),
        conclude: pick!(conclude),
        setup: pick!(setup),
        cleanup: pick!(cleanup),
        // Kept in `Benchmark::labels`.
        labels: None,
    };
    let mut parameters = Vec::new();
    if let Some(params) = &b.parameters {
        let at = at.at(params.span().start);
        for (pname, spec) in params.get_ref() {
            if let ParameterSpec::List(values) = spec {
                if values.is_empty() {
                    return Err(at.error(SuiteProblem::NoValues(pname.clone())));
                }
                if let Some(v) = values.iter().find(|v| v.contains(',')) {
                    return Err(at.error(SuiteProblem::CommaInValue {
                        name: pname.clone(),
                        value: v.clone(),
                    }));
                }
            }
            parameters.push((pname.clone(), spec.clone()));
        }
    }
    let labels: Vec<(String, String)> = merged(d.labels.as_ref(), b.labels.as_ref());
    if labels.iter().any(|(k, _)| k.trim().is_empty()) {
        return Err(position.error(SuiteProblem::LabelWithoutKey));
    }
    Ok(Benchmark {
        name,
        position,
        settings,
        commands,
        names: b.names.clone().unwrap_or_default(),
        parameters,
        labels,
    })
}

/// What `run`'s own checks said of one of the benchmark's settings.
pub fn in_benchmark(name: &str, e: impl Into<Error>) -> SuiteProblem {
    SuiteProblem::Benchmark {
        name: name.to_string(),
        source: Box::new(e.into()),
    }
}

/// A setting of the benchmark that a suite refuses.
pub fn setting_of(name: &str, setting: SuiteSetting) -> SuiteProblem {
    SuiteProblem::Setting {
        name: name.to_string(),
        setting,
    }
}

/// Defaults overlaid with the benchmark's own entries, in order.
fn merged(defaults: Option<&Map<Scalar>>, own: Option<&Map<Scalar>>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for map in [defaults, own].into_iter().flatten() {
        for (k, v) in map {
            out.retain(|(key, _)| key != k);
            out.push((k.clone(), v.0.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Suite> {
        parse(Path::new("s.toml"), text)
    }

    fn err(text: &str) -> String {
        parse_text(text).unwrap_err().to_string()
    }

    #[test]
    fn benchmarks_get_their_settings_over_the_defaults() {
        let s = parse_text(
            r#"
[defaults]
runs = 5
warmup = 1
labels = { team = "io" }
env = { A = "1" }

[[benchmark]]
name = "sleep"
command = "sleep 0.{us}"
parameters = { us = [1, 2], n = { min = 1, max = 8, factor = 2 } }
env = { B = "x" }
labels = { team = "core", tier = 1 }
runs = 7
shell = true
prepare = ["true", "true"]

[[benchmark]]
name = "pair"
commands = ["true", "false"]
names = ["t", "f"]
ignore_failure = "1"
"#,
        )
        .unwrap();
        assert_eq!(s.benchmarks.len(), 2);
        let b = &s.benchmarks[0];
        assert_eq!(b.position.line, 9);
        assert_eq!(b.position.column, 8);
        let o = &b.settings;
        assert_eq!((o.runs, o.warmup), (Some(7), Some(1)));
        assert_eq!(o.shell, Some(Switch::On));
        let env: Vec<(&str, &str)> = o
            .env
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.0.as_str()))
            .collect();
        assert_eq!(env, [("A", "1"), ("B", "x")]);
        assert_eq!(o.prepare, Some(Strings(vec!["true".into(), "true".into()])));
        let us = b.parameters.iter().find(|(n, _)| n == "us").unwrap();
        assert_eq!(us.1, ParameterSpec::List(vec!["1".into(), "2".into()]));
        assert_eq!(b.parameters.len(), 2);
        assert_eq!(
            b.labels,
            vec![
                ("team".to_string(), "core".to_string()),
                ("tier".to_string(), "1".to_string())
            ]
        );
        let p = &s.benchmarks[1];
        assert_eq!(p.settings.runs, Some(5));
        assert_eq!(p.commands, vec!["true", "false"]);
        assert_eq!(p.names, vec!["t", "f"]);
        assert_eq!(p.settings.ignore_failure, Some(Switch::Value("1".into())));
        assert_eq!(p.labels, vec![("team".to_string(), "io".to_string())]);
    }

    #[test]
    fn own_run_count_replaces_default_bounds_and_back() {
        let s = parse_text(
            "[defaults]\nmin_runs = 10\nmax_runs = 50\n[[benchmark]]\nname = 'a'\ncommand = 'x'\nruns = 3\n\
             [[benchmark]]\nname = 'b'\ncommand = 'y'\n",
        )
        .unwrap();
        let counts = |b: &Benchmark| (b.settings.runs, b.settings.min_runs, b.settings.max_runs);
        assert_eq!(counts(&s.benchmarks[0]), (Some(3), None, None));
        assert_eq!(counts(&s.benchmarks[1]), (None, Some(10), Some(50)));
        let s = parse_text(
            "[defaults]\nruns = 3\n[[benchmark]]\nname = 'a'\ncommand = 'x'\nmax_runs = 9\n",
        )
        .unwrap();
        assert_eq!(counts(&s.benchmarks[0]), (None, None, Some(9)));
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_line_and_column() {
        let e = err("[[benchmark]]\nname = \"a\"\ncommand = \"true\"\n  rnus = 5\n");
        assert!(e.starts_with("s.toml:4:3: unknown field `rnus`"), "{e}");
        let e = err("[[benchmark]]\nname = \"a\"\ncommand = \"true\"\nruns = \"many\"\n");
        assert!(e.starts_with("s.toml:4:8: invalid type: string"), "{e}");
        let e = err("[defaults]\nwarmpu = 1\n[[benchmark]]\nname = \"a\"\ncommand = \"x\"\n");
        assert!(e.starts_with("s.toml:2:1: unknown field `warmpu`"), "{e}");
        let e = err("[[benchmark]]\nname = \"a\"\ncommand = \"x {n}\"\nparameters = { n = { min = 1, mx = 3 } }\n");
        assert!(e.starts_with("s.toml:4:"), "{e}");
        assert!(e.contains("unknown field `mx`"), "{e}");
        let e = err("[[benchmark]]\nname = \"a\"\ncommand = \"x\"\n[bogus]\n");
        assert!(e.starts_with("s.toml:4:"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = err("[[benchmark]]\nname = 'a'\ncommand = 'x'\nenv = { A = [1] }\n");
        assert!(e.starts_with("s.toml:4:"), "{e}");
        let e = err("[[benchmark]]\nname = 'a\n");
        assert!(e.starts_with("s.toml:2:"), "{e}");
    }

    #[test]
    fn parameters_keep_the_order_they_are_written_in() {
        // Written out of alphabetical order: a sorted map would swap them.
        let s = parse_text(
            "[[benchmark]]\nname = 'a'\ncommand = 'echo {zeta} {alpha}'\n\
             parameters = { zeta = [1, 2], alpha = [3] }\n",
        )
        .unwrap();
        let names: Vec<&str> = s.benchmarks[0]
            .parameters
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, ["zeta", "alpha"]);
    }

    #[test]
    fn several_scans_keep_their_own_steps() {
        let s = parse_text(
            "[[benchmark]]\nname = 'a'\ncommand = 'echo {s} {t}'\n\
             parameters = { s = { min = 1, max = 8, factor = 2 }, t = { min = 1, max = 5, step = 2 } }\n",
        )
        .unwrap();
        let request = crate::suite::cells::request(&s.benchmarks[0]).unwrap();
        let params = &request.plan.parameters;
        let values: Vec<&[String]> = params.iter().map(|p| p.values.as_slice()).collect();
        assert_eq!(values, [&["1", "2", "4", "8"][..], &["1", "3", "5"][..]]);
    }

    #[test]
    fn positions_are_found_in_one_pass_and_agree_with_counting() {
        // Counting from the start of the text, as positions once were.
        let naive = |text: &str, offset: usize| {
            let before = &text[..offset];
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            (
                before.matches('\n').count() + 1,
                before[start..].chars().count() + 1,
            )
        };
        let text = "ab\n\nλx = 'é'\n  [[b]]\nlast";
        let at = Locator::new(Path::new("s.toml"), text);
        let offsets: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        // In order (as benchmarks are looked up), backwards and at random.
        let mut order = offsets.clone();
        order.extend(offsets.iter().rev());
        order.extend(offsets.iter().map(|&i| offsets[(i * 7) % offsets.len()]));
        for &i in &order {
            let p = at.at(i);
            assert_eq!((p.line, p.column), naive(text, i), "offset {i}");
        }
        // An offset inside a character or past the end is clamped, not a panic.
        let p = at.at(text.find('λ').unwrap() + 1);
        assert_eq!((p.line, p.column), (3, 1));
        assert_eq!(at.at(usize::MAX).line, 5);
    }

    #[test]
    fn looking_up_every_benchmark_in_order_reads_the_text_once() {
        // Counting from the start for each benchmark read n²/2 lines.
        let text: String = (0..2000)
            .map(|i| format!("[[benchmark]]\nname = \"b{i}\"\ncommand = \"true\"\n"))
            .collect();
        let at = Locator::new(Path::new("s.toml"), &text);
        for (k, (offset, _)) in text.match_indices("\"b").enumerate() {
            let p = at.at(offset);
            assert_eq!((p.line, p.column), (3 * k + 2, 8));
        }
        assert!(at.scanned.get() <= text.len(), "{} bytes", at.scanned.get());
    }

    #[test]
    fn numbers_run_would_refuse_are_refused_at_their_position() {
        let e = err("[[benchmark]]\nname = 'a'\ncommand = 'x'\nprecision = nan\n");
        assert!(
            e.starts_with("s.toml:4:13: benchmark 'a': --precision must be"),
            "{e}"
        );
        let e = err("[defaults]\ntimeout = -inf\n[[benchmark]]\nname = 'a'\ncommand = 'x'\n");
        assert!(
            e.starts_with("s.toml:2:11: benchmark 'a': --timeout must be"),
            "{e}"
        );
        let e = err("[[benchmark]]\nname = 'a'\ncommand = 'x'\nalpha = 2\n");
        assert!(
            e.starts_with("s.toml:4:9: benchmark 'a': --alpha must be"),
            "{e}"
        );
        let e = err("[[benchmark]]\nname = 'a'\ncommand = 'x'\nmin_time = -1\n");
        assert!(
            e.starts_with("s.toml:4:12: benchmark 'a': --min-time must be"),
            "{e}"
        );
        // A benchmark's own good value replaces a bad default it does not use.
        let s = parse_text("[defaults]\nalpha = 0.9\n[[benchmark]]\nname = 'a'\ncommand = 'x'\nalpha = 0.01\nprecision = 5\ntimeout = 3\n")
            .unwrap();
        let o = &s.benchmarks[0].settings;
        let value = |v: &Option<Spanned<f64>>| v.as_ref().map(|v| *v.get_ref());
        assert_eq!(value(&o.alpha), Some(0.01));
        assert_eq!(value(&o.precision), Some(5.0));
        assert_eq!(value(&o.timeout), Some(3.0));
    }

    #[test]
    fn benchmark_level_mistakes() {
        assert!(err("[[benchmark]]\nname = 'a'\n").starts_with("s.toml:2:8: benchmark 'a' needs"));
        let e = err(
            "[[benchmark]]\nname = 'a'\ncommand = 'x'\n[[benchmark]]\nname = 'a'\ncommand = 'y'\n",
        );
        assert!(
            e.starts_with("s.toml:5:8:") && e.contains("defined twice (first at line 2)"),
            "{e}"
        );
        let e = err("[[benchmark]]\nname = 'a'\ncommand = 'x'\ncommands = ['y']\n");
        assert!(e.starts_with("s.toml:3:11:") && e.contains("both"), "{e}");
        assert!(err("[defaults]\nruns = 1\n").contains("no [[benchmark]]"));
        assert!(err("[[benchmark]]\ncommand = 'x'\n").contains("missing field `name`"));
        let e = err("[[benchmark]]\nname = 'a'\ncommand = 'x {s}'\nparameters = { s = ['a,b'] }\n");
        assert!(e.contains("contains ','"), "{e}");
    }
}
