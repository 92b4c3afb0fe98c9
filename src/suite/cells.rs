//! A suite's cells: each benchmark parsed as `cmdscope run` arguments and
//! expanded by the same planning code `run` uses, plus the stable id and
//! partition key of every cell.

use clap::{CommandFactory, Parser};

use super::file::{Benchmark, Suite};
use super::partition::{fnv1a, Partition};
use crate::cli::run::RunArgs;
use crate::cli::{Cli, Command};
use crate::error::Result;
use crate::run::plan::Cell;

/// One cell of a suite.
#[derive(Clone, Debug)]
pub struct SuiteCell {
    /// Stable across suite edits that leave this cell alone: a hash of its
    /// benchmark and identity (16 hex digits).
    pub id: String,
    pub benchmark: String,
    /// What its partition is drawn from: benchmark and parameter values,
    /// shared by the commands compared with each other.
    pub group: String,
    /// Its identity in the store (as for `cmdscope run`).
    pub identity: String,
    pub cell: Cell,
}

/// A benchmark with its `run` arguments and cells.
#[derive(Debug)]
pub struct Planned {
    pub benchmark: Benchmark,
    pub args: RunArgs,
    pub cells: Vec<SuiteCell>,
}

/// The `run` arguments of a benchmark, parsed as the command line would be.
pub fn run_args(b: &Benchmark) -> Result<RunArgs> {
    run_args_with(&mut Cli::command(), b)
}

/// [`run_args`] with a parser built once for many benchmarks.
fn run_args_with(command: &mut clap::Command, b: &Benchmark) -> Result<RunArgs> {
    match Cli::parse_ordered_with(command, b.argv()) {
        Ok(Cli {
            command: Command::Run(args),
        }) => Ok(*args),
        Ok(_) => unreachable!("the argv starts with 'run'"),
        Err(e) => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("invalid settings");
            Err(b.position.error(format!(
                "benchmark '{}': {}",
                b.name,
                first.strip_prefix("error: ").unwrap_or(first)
            )))
        }
    }
}

/// `cmdscope run`'s defaults (what a benchmark that sets nothing gets).
pub fn defaults() -> RunArgs {
    match Cli::try_parse_from(["cmdscope", "run", "true"]) {
        Ok(Cli {
            command: Command::Run(args),
        }) => *args,
        _ => unreachable!("`cmdscope run true` parses"),
    }
}

/// Every benchmark of the suite with all its cells, in file order.
pub fn plan(suite: &Suite) -> Result<Vec<Planned>> {
    let mut out = Vec::with_capacity(suite.benchmarks.len());
    let mut command = Cli::command();
    for b in &suite.benchmarks {
        let args = run_args_with(&mut command, b)?;
        let (cells, _) = crate::cli::cells::plan_cells(&args)
            .map_err(|e| b.position.error(format!("benchmark '{}': {e}", b.name)))?;
        let mut suite_cells: Vec<SuiteCell> = Vec::with_capacity(cells.len());
        let mut seen = std::collections::HashSet::with_capacity(cells.len());
        for cell in cells.into_iter().filter(|c| !c.calibration) {
            let identity = crate::store::identity(&cell);
            if !seen.insert(identity.clone()) {
                return Err(b.position.error(format!(
                    "benchmark '{}': two cells are both '{identity}': give the commands different names",
                    b.name
                )));
            }
            let mut group = b.name.clone();
            for (k, v) in &cell.parameters {
                group.push('\0');
                group.push_str(k);
                group.push('=');
                group.push_str(v);
            }
            let id = format!(
                "{:016x}",
                fnv1a(format!("{}\0{identity}", b.name).as_bytes())
            );
            suite_cells.push(SuiteCell {
                id,
                benchmark: b.name.clone(),
                group,
                identity,
                cell,
            });
        }
        out.push(Planned {
            benchmark: b.clone(),
            args,
            cells: suite_cells,
        });
    }
    Ok(out)
}

/// Keeps only the cells of one partition (benchmarks left without cells
/// are dropped).
pub fn select(planned: Vec<Planned>, partition: Partition) -> Vec<Planned> {
    planned
        .into_iter()
        .filter_map(|mut p| {
            p.cells.retain(|c| partition.contains(&c.group));
            (!p.cells.is_empty()).then_some(p)
        })
        .collect()
}

/// Cell count of a plan.
pub fn count(planned: &[Planned]) -> usize {
    planned.iter().map(|p| p.cells.len()).sum()
}

impl SuiteCell {
    /// The executed words, for listing.
    pub fn argv_text(&self) -> String {
        self.cell
            .argv
            .iter()
            .map(|w| {
                let w = String::from_utf8_lossy(w);
                shlex::try_quote(&w).map_or_else(|_| w.to_string(), |q| q.into_owned())
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};
    use std::path::Path;

    const SUITE: &str = r#"
[defaults]
runs = 3

[[benchmark]]
name = "sleep"
command = "sleep 0.00{n}"
parameters = { n = [1, 2, 3, 4, 5] }

[[benchmark]]
name = "pair"
commands = ["true {m}", "false {m}"]
parameters = { m = { min = 1, max = 16, factor = 2 } }
"#;

    fn planned(text: &str) -> Vec<Planned> {
        plan(&super::super::file::parse(Path::new("s.toml"), text).unwrap()).unwrap()
    }

    #[test]
    fn one_parser_for_every_benchmark_parses_each_as_a_fresh_one_would() {
        // Options one benchmark sets must not leak into the next, and an
        // error must not disturb the benchmarks after it.
        let text = "[[benchmark]]\nname = 'a'\ncommand = 'x {s} {t}'\nruns = 3\nshell = true\n\
             parameters = { s = { min = 1, max = 8, factor = 2 }, t = { min = 1, max = 5, step = 2 } }\n\
             [[benchmark]]\nname = 'b'\ncommand = 'y'\n\
             [[benchmark]]\nname = 'c'\ncommand = 'z {t}'\nparameters = { t = { min = 1, max = 3, step = 1 } }\n";
        let suite = super::super::file::parse(Path::new("s.toml"), text).unwrap();
        let p = plan(&suite).unwrap();
        for (planned, b) in p.iter().zip(&suite.benchmarks) {
            let fresh = run_args(b).unwrap();
            assert_eq!(
                format!("{:?}", planned.args),
                format!("{fresh:?}"),
                "{}",
                b.name
            );
        }
        let mut command = Cli::command();
        let mut bad = suite.benchmarks[0].clone();
        bad.options.push("--runs=many".into());
        assert!(run_args_with(&mut command, &bad).is_err());
        let after = run_args_with(&mut command, &suite.benchmarks[1]).unwrap();
        assert_eq!(
            format!("{after:?}"),
            format!("{:?}", run_args(&suite.benchmarks[1]).unwrap())
        );
    }

    #[test]
    fn cells_are_the_cells_of_the_equivalent_command_line() {
        let p = planned(SUITE);
        assert_eq!(count(&p), 5 + 2 * 5);
        // The same cells as `cmdscope run` typed by hand.
        let typed = Cli::try_parse_from([
            "cmdscope",
            "run",
            "--runs=3",
            "--parameter-scan",
            "m",
            "1",
            "16",
            "--parameter-factor=2",
            "--",
            "true {m}",
            "false {m}",
        ])
        .unwrap();
        let Command::Run(typed) = typed.command else {
            panic!()
        };
        let (cells, _) = crate::cli::cells::plan_cells(&typed).unwrap();
        let suite: Vec<&Cell> = p[1].cells.iter().map(|c| &c.cell).collect();
        assert_eq!(suite, cells.iter().collect::<Vec<_>>());
        assert_eq!(p[1].args.runs, Some(3));
        // Ids are unique; the commands of one comparison share a group
        // (hyperfine's order: parameter values outer, commands inner).
        let ids: HashSet<&str> = p
            .iter()
            .flat_map(|b| &b.cells)
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(ids.len(), 15);
        assert_eq!(p[1].cells[0].group, p[1].cells[1].group);
        assert_ne!(p[1].cells[0].group, p[1].cells[2].group);
        assert_eq!(p[1].cells[0].identity, "true {m} [m=1]".replace("{m}", "1"));
    }

    #[test]
    fn partitions_cover_every_cell_once_and_keep_groups_together() {
        for n in 1..=6 {
            let mut seen: HashMap<String, u32> = HashMap::new();
            for k in 1..=n {
                for b in select(planned(SUITE), Partition::new(k, n).unwrap()) {
                    for c in &b.cells {
                        assert!(seen.insert(c.id.clone(), k).is_none(), "{} twice", c.id);
                    }
                }
            }
            assert_eq!(seen.len(), 15, "with {n} partitions");
            let all = planned(SUITE);
            for c in &all[1].cells[..5] {
                let partner = all[1]
                    .cells
                    .iter()
                    .find(|o| o.group == c.group && o.id != c.id)
                    .unwrap();
                assert_eq!(seen[&c.id], seen[&partner.id]);
            }
        }
    }

    #[test]
    fn partitions_stay_put_when_cells_are_added_or_removed() {
        let where_is = |text: &str| -> HashMap<String, u32> {
            let mut out = HashMap::new();
            for k in 1..=4 {
                for b in select(planned(text), Partition::new(k, 4).unwrap()) {
                    for c in b.cells {
                        out.insert(c.id, k);
                    }
                }
            }
            out
        };
        let before = where_is(SUITE);
        // One benchmark removed, values added, a new benchmark first.
        let edited = format!(
            "[[benchmark]]\nname = \"new\"\ncommand = \"echo {{x}}\"\nparameters = {{ x = [1, 2, 3] }}\n{}",
            SUITE.replace("[1, 2, 3, 4, 5]", "[1, 2, 3, 4, 5, 6, 7]")
        );
        let after = where_is(&edited);
        assert_eq!(after.len(), 3 + 7 + 10);
        for (id, k) in &before {
            assert_eq!(after.get(id), Some(k), "cell {id} moved");
        }
    }

    #[test]
    fn planning_errors_name_the_benchmark_and_position() {
        let s = super::super::file::parse(
            Path::new("s.toml"),
            "[[benchmark]]\nname = \"a\"\ncommand = \"true\"\norder = \"sideways\"\n",
        )
        .unwrap();
        let e = plan(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("s.toml:2:8: benchmark 'a': invalid value 'sideways'"),
            "{e}"
        );
        let s = super::super::file::parse(
            Path::new("s.toml"),
            "[[benchmark]]\nname = \"a\"\ncommands = [\"true\", \"true\"]\n",
        )
        .unwrap();
        assert!(plan(&s)
            .unwrap_err()
            .to_string()
            .contains("different names"));
    }
}
