//! What a session was run with, as `run` decided it: the cells, the order,
//! the limits, the level and precision of its comparisons and their
//! reference, the goal of a search. Built once by `run` after every option
//! is checked, stored with the session (`sessions.settings`, JSON), and
//! read back by `report`, so that a stored session keeps the settings it
//! ran with when the defaults change. Plain data: no parsing of flags.

use serde::{Deserialize, Serialize};

use crate::run::plan::{Cell, Hooks, Variant};
use crate::run::schedule::{Order, RunPolicy};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The suite's name of the benchmark this session measured.
    pub benchmark: Option<String>,
    /// The measured cells, in the store's order (the shell calibration
    /// left out).
    pub cells: Vec<CellSettings>,
    pub order: Order,
    pub policy: RunPolicy,
    pub warmup: usize,
    /// Seconds after which a run is killed.
    pub timeout: Option<f64>,
    /// The family-wise significance level of the comparisons.
    pub alpha: f64,
    /// As a fraction; None when `--runs` alone fixed the count.
    pub precision: Option<f64>,
    /// Whether the runner stopped adaptively, with sequential looks: the
    /// final comparisons are then tested at the level the looks left.
    pub looks: bool,
    /// The looks were `--until-decided`'s (`sequential::UNTIL_DECIDED_LOOKS`).
    #[serde(default)]
    pub until_decided: bool,
    /// Index into `cells` of the cell the others are compared with.
    pub reference: usize,
    /// Whether the reference was named (`--reference`, `--reference-name`)
    /// rather than the first cell by default.
    pub named_reference: bool,
    /// The metric sweeps and searches optimise.
    pub metric: String,
    pub search: Option<SearchGoal>,
    /// The shell commands ran through, if any did.
    pub shell: Option<String>,
    /// The export files asked for.
    pub exports: Vec<Export>,
    /// `--simulate`: the simulator, its version and the cache geometry the
    /// `sim_*` counts were made with (None: not simulated).
    #[serde(default)]
    pub simulate: Option<crate::exec::simulate::Simulation>,
    /// `--counted` (or `--simulate`): what counted the runs (hardware
    /// counters or cachegrind), what was asked for, and why (None: not
    /// counted, or stored before the choice was kept).
    #[serde(default)]
    pub counted: Option<crate::run::counted::Counted>,
    /// `--remove-outliers`: wall-time outliers left out of the statistics.
    #[serde(default)]
    pub remove_outliers: bool,
    /// The plan's parameters, their values in the plan's order (empty in
    /// settings stored before they were kept).
    #[serde(default)]
    pub parameters: Vec<crate::run::plan::Parameter>,
    /// The commands as given, before their parameters were filled in.
    #[serde(default)]
    pub commands: Vec<String>,
    /// `--monitor`: the monitor that watched the session (None: none did,
    /// or the settings were stored before it was kept).
    #[serde(default)]
    pub monitor: Option<MonitorSettings>,
}

impl Settings {
    /// What counted the session's runs: the choice stored, or for a
    /// session stored before it was, cachegrind where it was simulated.
    pub fn counted_by(&self) -> Option<crate::run::counted::By> {
        match (&self.counted, &self.simulate) {
            (Some(c), _) => Some(c.by),
            (None, Some(_)) => Some(crate::run::counted::By::Cachegrind),
            (None, None) => None,
        }
    }
}

/// One measured cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellSettings {
    pub name: String,
    pub command: String,
    pub parameters: Vec<(String, String)>,
    /// The conditions beyond its arguments (the environment's variables
    /// are in the store's cell row).
    pub variant: Variant,
    pub hooks: Hooks,
    /// Which of the commands given it was made from (`Cell::template`):
    /// cells of one template that differ only in their concurrency form a
    /// scaling curve. 0 in settings stored before it was kept.
    #[serde(default)]
    pub template: usize,
    /// The name without the parameters the command line does not show
    /// (`Cell::short_name`); empty in settings stored before it was kept.
    #[serde(default)]
    pub short_name: String,
    /// Ran through a shell (`Cell::shell`).
    #[serde(default)]
    pub shell: bool,
}

/// `--minimize`/`--maximize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchGoal {
    pub maximize: bool,
    /// The searched parameters, as given: `b,j`.
    pub parameters: String,
}

/// `--monitor COMMAND --match NAME=REGEX --monitor-settle S`: the command
/// whose output lines were counted, each pattern's name (its metric is
/// `monitor_NAME`) and regex, in `--match` order, and the seconds a run's
/// lines were still counted after it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MonitorSettings {
    pub command: String,
    pub names: Vec<String>,
    pub regexes: Vec<String>,
    pub settle: f64,
}

/// One export file: its format (`json`, `csv`, `markdown`, `asciidoc`,
/// `orgmode`, `svg`) and path (`-`: stdout).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub format: String,
    pub path: String,
}

impl CellSettings {
    pub fn of(cell: &Cell) -> CellSettings {
        CellSettings {
            name: cell.name.clone(),
            command: cell.command.clone(),
            parameters: cell.parameters.clone(),
            variant: cell.variant.clone(),
            hooks: cell.hooks.clone(),
            template: cell.template,
            short_name: cell.short_name.clone(),
            shell: cell.shell,
        }
    }
}

impl Settings {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// None for text that is not stored settings.
    pub fn from_json(text: &str) -> Option<Settings> {
        Settings::parse_json(text).ok()
    }

    /// The settings, or why the text is not stored settings (serde's
    /// words: the field and the position).
    pub fn parse_json(text: &str) -> Result<Settings, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Whether the session searched (`--minimize`/`--maximize`).
    pub fn searched(&self) -> bool {
        self.search.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_survive_their_json() {
        let s = Settings {
            benchmark: Some("a".into()),
            cells: vec![CellSettings {
                name: "spin 1000".into(),
                command: "spin {n}".into(),
                parameters: vec![("n".into(), "1000".into())],
                variant: Variant {
                    workdir: Some(crate::exec::workdir::Workdir::Tmpfs),
                    cpus: Some(vec![0, 1]),
                    ..Variant::default()
                },
                hooks: Hooks {
                    setup: Some("make".into()),
                    ..Hooks::default()
                },
                template: 1,
                short_name: "spin".into(),
                shell: false,
            }],
            order: Order::Interleaved,
            policy: RunPolicy::default(),
            warmup: 2,
            timeout: Some(1.5),
            alpha: 0.01,
            precision: Some(0.05),
            looks: true,
            until_decided: false,
            reference: 0,
            named_reference: false,
            metric: "time_wall_clock".into(),
            search: Some(SearchGoal {
                maximize: false,
                parameters: "n".into(),
            }),
            shell: None,
            exports: vec![Export {
                format: "json".into(),
                path: "-".into(),
            }],
            simulate: Some(crate::exec::simulate::Simulation {
                tool: "cachegrind".into(),
                version: "valgrind-3.19.0".into(),
                i1: "32768,8,64".into(),
                d1: "32768,8,64".into(),
                ll: "8388608,16,64".into(),
            }),
            counted: Some(crate::run::counted::Counted {
                asked: crate::run::counted::Ask::Auto,
                by: crate::run::counted::By::Cachegrind,
                reason: "no hardware instruction counter here".into(),
            }),
            remove_outliers: true,
            parameters: vec![crate::run::plan::Parameter {
                name: "n".into(),
                values: vec!["1000".into()],
                numeric: Some(vec![1000.0]),
                geometric: false,
            }],
            commands: vec!["spin {n}".into()],
            monitor: Some(MonitorSettings {
                command: "journalctl -f".into(),
                names: vec!["hits".into()],
                regexes: vec!["^hit$".into()],
                settle: 0.05,
            }),
        };
        assert_eq!(Settings::from_json(&s.to_json()), Some(s));
        assert_eq!(Settings::from_json("{\"alpha\": 1}"), None);
    }
}
