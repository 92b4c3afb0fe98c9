//! What the store keeps and hands back: a session about to be recorded
//! and its cells (with a benchmark's identity across sessions), how it
//! ended, a reader's filter, the sessions, cells and search answers read
//! back, and the labels a session is tagged with.

use std::time::SystemTime;

use super::machine::Machine;
use super::writer;
use crate::run::plan::Cell;
use crate::run::settings::Settings;

/// A session about to be recorded (also the writer's message for it).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct NewSession {
    #[serde(with = "writer::unix_seconds")]
    pub started: SystemTime,
    /// "run", or "import:<format>".
    pub source: String,
    pub command_line: String,
    pub order: Option<String>,
    pub seed: Option<String>,
    pub shell: Option<String>,
    pub machine: Machine,
    pub labels: Vec<(String, String)>,
    /// What a `run` session was run with: `run::settings::Settings` as
    /// JSON text (None for imports).
    pub settings: Option<String>,
}

/// A benchmark cell about to be recorded.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewCell {
    pub identity: String,
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    /// The variant's settings (environment) as JSON text.
    pub variant: String,
}

impl NewCell {
    pub fn from_cell(cell: &Cell) -> NewCell {
        let env: Vec<(String, String)> = cell
            .env
            .iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect();
        NewCell {
            identity: identity(cell),
            name: cell.name.clone(),
            command: cell.command.clone(),
            parameters: cell.parameters.clone(),
            variant: serde_json::json!({ "env": env }).to_string(),
        }
    }
}

/// A benchmark's identity across sessions: its name (`-n`) if it was
/// given one, else its command line with its parameters.
pub fn identity(cell: &Cell) -> String {
    // A name made from the command and its parameters ("cmd (u = root)")
    // is not a given name: the identity stays "cmd [u=root]".
    let made_name = cell.name == cell.command || (!cell.custom_name && !cell.parameters.is_empty());
    // Runs made N at a time are another benchmark than single runs: the
    // concurrency is part of the identity, as a parameter would be.
    let concurrency = cell
        .variant
        .concurrency
        .map(|n| ("concurrency".to_string(), n.to_string()));
    if !made_name {
        return match concurrency {
            Some(c) => with_parameters(&cell.name, &[c]),
            None => cell.name.clone(),
        };
    }
    match concurrency {
        Some(c) => {
            let mut params = cell.parameters.clone();
            params.push(c);
            with_parameters(&cell.command, &params)
        }
        None => with_parameters(&cell.command, &cell.parameters),
    }
}

/// `command` followed by ` [k=v, …]` when there are parameters.
pub fn with_parameters(command: &str, parameters: &[(String, String)]) -> String {
    if parameters.is_empty() {
        return command.to_string();
    }
    let p: Vec<String> = parameters.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{command} [{}]", p.join(", "))
}

/// How a session ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Finish {
    /// "finished", "interrupted" or "failed".
    pub status: String,
    pub stop_reason: Option<String>,
    pub shell_overhead: Option<f64>,
    /// The preflight checks (JSON list), when made.
    pub preflight: Option<String>,
    /// How a `run` session ended beyond its runs (`Outcome`, JSON).
    pub outcome: Option<String>,
}

/// Status of a session that has not finished (still running, or killed).
pub const RUNNING: &str = "running";

/// The status of a session that ended normally.
pub const FINISHED: &str = "finished";

/// Which sessions to list.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Substring of a cell's identity, name or command.
    pub command: Option<String>,
    /// Every one of these labels.
    pub labels: Vec<(String, String)>,
    /// A fingerprint (or its prefix) or a hostname.
    pub machine: Option<String>,
    pub session: Option<i64>,
    /// At most this many sessions, newest first.
    pub limit: Option<usize>,
}

/// A cell as histories list it (see [`Store::cells_in_range`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CellRow {
    pub id: i64,
    pub session: i64,
    pub identity: String,
    pub name: String,
    pub command: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StoredCell {
    pub id: i64,
    pub position: i64,
    pub identity: String,
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    pub variant: String,
    pub runs: i64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredSession {
    pub id: i64,
    pub started: String,
    pub started_unix: f64,
    pub finished_unix: Option<f64>,
    pub status: String,
    pub stop_reason: Option<String>,
    pub source: String,
    pub tool_version: String,
    pub command_line: String,
    pub order: Option<String>,
    pub shell_overhead: Option<f64>,
    pub fingerprint: String,
    pub machine: Machine,
    pub labels: Vec<(String, String)>,
    pub cells: Vec<StoredCell>,
    /// The preflight checks (JSON list of {name, status, detail}), if recorded.
    pub preflight: Option<String>,
    /// The answer of a search session (`run --minimize/--maximize`).
    pub search: Option<StoredSearch>,
    /// A search session's race, for its replay; None for sessions stored
    /// before it was kept (schema 8 and older), and for damaged rows.
    pub race: Option<StoredRace>,
    /// Why the stored race could not be read, when it is there but
    /// damaged (`race` is then None).
    pub race_error: Option<String>,
    /// What the session was run with; None for imports and sessions
    /// stored before the settings were kept.
    pub settings: Option<Settings>,
    /// The runner's seed, as stored.
    pub seed: Option<String>,
    /// How the session ended beyond its runs; None for imports and
    /// sessions stored before it was kept.
    pub outcome: Option<crate::run::session::Outcome>,
    /// Why the stored settings could not be read, when they are there but
    /// damaged (`settings` is then None): readers that need them refuse
    /// the session rather than take it for one stored without them.
    pub settings_error: Option<String>,
}

impl StoredSession {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The simulator it was run under (`run --simulate`), if any: its
    /// kernel figures (wall time, memory, faults) are the simulator's.
    pub fn simulation(&self) -> Option<&crate::exec::simulate::Simulation> {
        self.settings.as_ref().and_then(|s| s.simulate.as_ref())
    }
}

/// Parameter values of one grid value, in the order of the search's
/// parameters: `[("batch", "1024")]`.
pub type Setting = Vec<(String, String)>;

/// The answer of `run --minimize/--maximize`, kept with its session: the
/// set comes from the search's race, which the stored runs do not replay.
/// Stored as a JSON object in `sessions.search`; the field names are those
/// of the `search` object of `--export-json`.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSearch {
    pub parameters: Vec<String>,
    /// The metric searched (`time_wall_clock`, `memory_peak_resident`, …).
    pub metric: String,
    /// What was compared: the metric, or per operation with `--ops`.
    pub compared: String,
    pub maximize: bool,
    pub best: Setting,
    /// The values not significantly worse than the best, the best included.
    pub as_good: Vec<Setting>,
    /// Every value measured, in scan order.
    pub values_tried: Vec<Setting>,
    pub runs: usize,
    /// Runs the full grid would have taken.
    pub grid_runs: usize,
}

impl StoredSearch {
    pub fn to_json(&self) -> String {
        let point = |s: &Setting| {
            serde_json::Value::Object(
                s.iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
            )
        };
        serde_json::json!({
            "parameters": self.parameters,
            "metric": self.metric,
            "compared": self.compared,
            "goal": if self.maximize { "maximize" } else { "minimize" },
            "best": point(&self.best),
            "as_good": self.as_good.iter().map(point).collect::<Vec<_>>(),
            "values_tried": self.values_tried.iter().map(point).collect::<Vec<_>>(),
            "runs": self.runs,
            "grid_runs": self.grid_runs,
        })
        .to_string()
    }

    /// None for text that is not a stored search (a damaged row is shown
    /// without its search, not refused).
    pub fn from_json(text: &str) -> Option<StoredSearch> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let parameters: Vec<String> = v["parameters"]
            .as_array()?
            .iter()
            .map(|p| p.as_str().map(str::to_string))
            .collect::<Option<_>>()?;
        // Objects come back in key order: put them in the parameters' order.
        let point = |p: &serde_json::Value| -> Option<Setting> {
            parameters
                .iter()
                .map(|k| Some((k.clone(), p.get(k)?.as_str()?.to_string())))
                .collect()
        };
        let points =
            |key: &str| -> Option<Vec<Setting>> { v[key].as_array()?.iter().map(point).collect() };
        Some(StoredSearch {
            metric: v["metric"].as_str()?.to_string(),
            compared: v["compared"].as_str()?.to_string(),
            maximize: v["goal"].as_str()? == "maximize",
            best: point(&v["best"])?,
            as_good: points("as_good")?,
            values_tried: points("values_tried")?,
            runs: v["runs"].as_u64()? as usize,
            grid_runs: v["grid_runs"].as_u64()? as usize,
            parameters,
        })
    }
}

/// What a search's replay needs that its runs do not say: the options its
/// race ran with (numbers a default may change; the metric and the goal
/// are the session's settings) and its rounds, in order. Stored as a JSON
/// object in `sessions.race`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredRace {
    /// Runs per value of the full grid.
    pub runs: usize,
    /// Runs a value gets when first measured.
    pub initial_runs: usize,
    pub alpha: f64,
    pub precision: f64,
    /// Most runs the search could spend.
    pub budget: usize,
    /// Compared per operation (`--ops`).
    pub per_op: bool,
    /// Per parameter, whether the race zoomed along it.
    pub ordered: Vec<bool>,
    pub rounds: Vec<RaceRound>,
}

/// One round of a race: the grid values it measured (grid indices, in
/// the round's cell order), the blocks it ran (each block one run, or one
/// batch in concurrency mode, of every value) and the runs each value
/// took in, so each value's stored runs are cut into its rounds again.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RaceRound {
    pub points: Vec<usize>,
    pub blocks: usize,
    /// Per point, the runs the round took in (its batches' runs in
    /// concurrency mode).
    pub runs: Vec<usize>,
    /// The round ended the session (a failure, an interruption).
    pub stopped: bool,
    /// cmdscope's peak resident size in the round (peak memory's floor).
    pub rss_floor: Option<f64>,
}

impl StoredRace {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// None for text that is not a stored race.
    pub fn from_json(text: &str) -> Option<StoredRace> {
        Self::parse_json(text).ok()
    }

    /// The race, or why the text is not one.
    pub fn parse_json(text: &str) -> std::result::Result<StoredRace, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// One series of a metric that is not a cmdscope metric (from imports).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtraSeries {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub values: Vec<f64>,
}

/// Parses `KEY=VALUE` labels.
pub fn parse_labels(args: &[String]) -> crate::error::Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for a in args {
        let (k, v) = parse_label(a)?;
        out.retain(|(key, _)| key != &k);
        out.push((k, v));
    }
    Ok(out)
}

pub fn parse_label(a: &str) -> crate::error::Result<(String, String)> {
    match a.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(crate::error::StoreQueryError::BadLabel(a.to_string()).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(
            parse_labels(&["a=1".into(), "b=x=y".into(), "a=2".into()]).unwrap(),
            vec![("b".into(), "x=y".into()), ("a".into(), "2".into())]
        );
        assert!(parse_label("=x").is_err());
        assert!(parse_label("novalue").is_err());
    }

    #[test]
    fn a_search_answer_survives_its_json_in_parameter_order() {
        let at = |z: &str, a: &str| vec![("z".to_string(), z.to_string()), ("a".into(), a.into())];
        let s = StoredSearch {
            // Not in key order: objects come back sorted, settings must not.
            parameters: vec!["z".into(), "a".into()],
            metric: "memory_peak_resident".into(),
            compared: "memory_peak_resident".into(),
            maximize: true,
            best: at("2", "<64>"),
            as_good: vec![at("2", "<64>"), at("4", "\"")],
            values_tried: vec![at("1", "8"), at("2", "<64>"), at("4", "\"")],
            runs: 41,
            grid_runs: 90,
        };
        let text = s.to_json();
        assert_eq!(StoredSearch::from_json(&text), Some(s.clone()));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["goal"], "maximize");
        assert_eq!(v["best"], serde_json::json!({"z": "2", "a": "<64>"}));
        // A damaged or foreign value is no answer, not an error.
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"parameters": ["z"]}"#,
            &text.replace("41", "-1"),
        ] {
            assert_eq!(StoredSearch::from_json(bad), None, "{bad}");
        }
    }

    #[test]
    fn identity_is_the_name_or_the_command_with_parameters() {
        let mut cell = Cell {
            name: "sort".into(),
            command: "sort -n f".into(),
            ..Cell::default()
        };
        assert_eq!(identity(&cell), "sort");
        cell.name = cell.command.clone();
        cell.parameters = vec![("n".into(), "4".into())];
        assert_eq!(identity(&cell), "sort -n f [n=4]");
    }
}
