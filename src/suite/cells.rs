//! A suite's cells: each benchmark as the typed request `cmdscope run`
//! builds from its flags (checked here, with the benchmark's position),
//! expanded by the same planning code `run` uses, plus the stable id and
//! partition key of every cell.

use super::file::{in_benchmark, setting_of, Benchmark, ParameterSpec, Suite, Switch};
use super::partition::Partition;
use crate::error::{Error, Result, SuiteSetting};
use crate::run::plan::{self, Cell, PlanInput, ScanOrder, ShellMode, VariantInput};
use crate::run::request::{self, Request};
use crate::store::machine::fnv1a;

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

/// A benchmark with what `run` measures of it and its cells.
#[derive(Debug)]
pub struct Planned {
    pub benchmark: Benchmark,
    pub request: Request,
    pub cells: Vec<SuiteCell>,
}

/// What `run` measures of a benchmark: its settings as the typed values
/// `run` builds from the same flags, checked by the same rules; an error
/// names the benchmark and its position, on one line.
pub fn request(b: &Benchmark) -> Result<Request> {
    let at = |e: Error| b.position.error(in_benchmark(&b.name, e));
    let usage = |setting| b.position.error(setting_of(&b.name, setting));
    let s = &b.settings;
    for (flag, count) in [
        ("--runs", s.runs),
        ("--min-runs", s.min_runs),
        ("--max-runs", s.max_runs),
    ] {
        if count == Some(0) {
            return Err(usage(SuiteSetting::ZeroRuns(flag)));
        }
    }
    // Refused here, with the position, rather than when the benchmark's
    // turn comes after others have run.
    let counted = s.counted.is_some();
    if (s.simulate == Some(true) || counted) && s.runs.is_none_or(|n| n < 2) {
        return Err(usage(SuiteSetting::OneCountedRun(if counted {
            "counted"
        } else {
            "simulate"
        })));
    }
    if s.runs.is_some() && (s.min_runs.is_some() || s.max_runs.is_some()) {
        return Err(usage(SuiteSetting::RunsAndBounds));
    }
    let order = match s.order.as_deref() {
        None => None,
        Some(text) => Some(crate::cli::run::order_named(text).ok_or_else(|| {
            usage(SuiteSetting::UnknownOrder {
                given: text.to_string(),
                known: crate::cli::run::ORDERS
                    .iter()
                    .map(|(_, name, _)| *name)
                    .collect(),
            })
        })?),
    };
    let mut env = match &s.env_file {
        Some(path) => crate::cli::cells::read_env_file(std::path::Path::new(path)).map_err(at)?,
        None => Vec::new(),
    };
    for (k, v) in s.env.iter().flatten() {
        env.push(plan::parse_env(std::ffi::OsStr::new(&format!("{k}={}", v.0))).map_err(at)?);
    }
    // Scans first, then lists: the order `cmdscope run` combines -P and -L in.
    let mut parameters = Vec::with_capacity(b.parameters.len());
    for (name, spec) in &b.parameters {
        if let ParameterSpec::Scan {
            min,
            max,
            step,
            factor,
        } = spec
        {
            let words = [name.clone(), min.clone(), max.clone()];
            let (steps, factors) = (Vec::from_iter(step.clone()), Vec::from_iter(factor.clone()));
            parameters.extend(
                plan::scans(&words, &steps, &factors, &ScanOrder::default())
                    .map_err(|e| at(e.into()))?,
            );
        }
    }
    for (name, spec) in &b.parameters {
        if let ParameterSpec::List(values) = spec {
            parameters.push(plan::list(name, &values.join(",")).map_err(|e| at(e.into()))?);
        }
    }
    let shell = match &s.shell {
        None => ShellMode::Auto,
        Some(Switch::On) => ShellMode::from_arg("sh").map_err(at)?,
        Some(Switch::Value(v)) => ShellMode::from_arg(v).map_err(at)?,
        // Off forces direct exec, as -N; unset leaves make's rule.
        Some(Switch::Off) => ShellMode::Never,
    };
    let scalar = |v: &Option<super::file::Scalar>| v.as_ref().map(|v| v.0.clone());
    let strings =
        |v: &Option<super::file::Strings>| v.as_ref().map_or_else(Vec::new, |v| v.0.clone());
    let plan = PlanInput {
        commands: b.commands.iter().map(Into::into).collect(),
        names: b.names.clone(),
        shell,
        reference: s.reference.as_ref().map(|r| (r.into(), None)),
        env,
        prepare: strings(&s.prepare),
        conclude: strings(&s.conclude),
        setup: s.setup.clone(),
        cleanup: s.cleanup.clone(),
        parameters,
        variant: VariantInput {
            env_size: scalar(&s.env_size),
            clear_env: s.clear_env == Some(true),
            user: scalar(&s.user),
            workdir: s.workdir.clone(),
            workdir_template: s.workdir_template.clone(),
            cpus: scalar(&s.cpus),
            nice: scalar(&s.nice),
            ops: scalar(&s.ops),
            concurrency: scalar(&s.concurrency),
        },
    };
    let default = Request::default();
    Ok(Request {
        plan,
        warmup: s.warmup.map_or(default.warmup, |w| w as usize),
        runs: s.runs,
        min_runs: s.min_runs,
        max_runs: s.max_runs,
        min_time: s
            .min_time
            .as_ref()
            .map_or(request::DEFAULT_MIN_TIME, |v| *v.get_ref()),
        timeout: s.timeout.as_ref().map(|v| *v.get_ref()),
        stop_on_timeout: s.stop_on_timeout == Some(true),
        precision: s.precision.as_ref().map(|v| *v.get_ref()),
        alpha: s
            .alpha
            .as_ref()
            .map_or(request::DEFAULT_ALPHA, |v| *v.get_ref()),
        order,
        seed: s.seed,
        ignore_failure: match &s.ignore_failure {
            Some(Switch::On) => Some("all".into()),
            Some(Switch::Value(v)) => Some(v.clone()),
            Some(Switch::Off) | None => None,
        },
        output: s.output.iter().cloned().collect(),
        input: s.input.clone().unwrap_or(default.input),
        counters: s.counters == Some(true),
        counted: (s.counted.as_ref())
            .and_then(|c| crate::run::counted::Ask::from_name(c.get_ref())),
        simulate: (s.simulate == Some(true) || s.counted.is_some()).then(|| {
            let geometry = |v: &Option<toml::Spanned<String>>, default: &str| {
                v.as_ref()
                    .map_or_else(|| default.to_string(), |v| v.get_ref().clone())
            };
            use crate::exec::simulate::{DEFAULT_D1, DEFAULT_I1, DEFAULT_LL};
            (
                geometry(&s.i1, DEFAULT_I1),
                geometry(&s.d1, DEFAULT_D1),
                geometry(&s.ll, DEFAULT_LL),
            )
        }),
        remove_outliers: s.remove_outliers == Some(true),
        metric: s.metric.clone().unwrap_or(default.metric),
        labels: b.labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        benchmark: Some(b.name.clone()),
        ..default
    })
}

/// Every benchmark of the suite with all its cells, in file order.
pub fn plan(suite: &Suite) -> Result<Vec<Planned>> {
    let mut out = Vec::with_capacity(suite.benchmarks.len());
    for b in &suite.benchmarks {
        let request = request(b)?;
        let cells =
            plan::expand(&request.plan).map_err(|e| b.position.error(in_benchmark(&b.name, e)))?;
        let mut suite_cells: Vec<SuiteCell> = Vec::with_capacity(cells.len());
        let mut seen = std::collections::HashSet::with_capacity(cells.len());
        for cell in cells.into_iter().filter(|c| !c.calibration) {
            let identity = crate::store::identity(&cell);
            if !seen.insert(identity.clone()) {
                return Err(b
                    .position
                    .error(setting_of(&b.name, SuiteSetting::DuplicateCell(identity))));
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
            request,
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
    use clap::Parser;
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

    /// `cmdscope run`'s request for a command line.
    fn typed(argv: &[&str]) -> Request {
        match crate::cli::Cli::parse_ordered(argv).unwrap().command {
            crate::cli::Command::Run(a) => crate::cli::cells::request(&a).unwrap(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_benchmark_asks_for_what_its_command_line_asks_for() {
        let text = "[defaults]\nwarmup = 2\nlabels = { team = 'io' }\n\
             [[benchmark]]\nname = 'a'\ncommand = 'x {s} {t}'\nruns = 3\nshell = true\n\
             parameters = { s = { min = 1, max = 8, factor = 2 }, t = { min = 1, max = 5, step = 2 } }\n\
             [[benchmark]]\nname = 'b'\ncommands = ['y', 'z']\nnames = ['Y', 'Z']\norder = 'sequential'\n\
             min_runs = 4\nmax_runs = 9\nmin_time = 0.5\nalpha = 0.01\nprecision = 2\ntimeout = 7\n\
             stop_on_timeout = true\nignore_failure = true\noutput = 'pipe'\ncounters = true\n\
             remove_outliers = true\nmetric = 'time_user'\nseed = 42\nreference = 'w'\n\
             env = { K = 'v' }\nclear_env = true\nenv_size = 10\ncpus = '0'\nnice = 3\nops = 100\n\
             prepare = ['p1', 'p2']\nconclude = 'c'\nsetup = 's'\ncleanup = 'k'\nworkdir = 'tmpfs'\n\
             shell = false\nparameters = { l = [1, 2] }\n";
        let suite = super::super::file::parse(Path::new("s.toml"), text).unwrap();
        let a = typed(&[
            "cmdscope",
            "run",
            "-w",
            "2",
            "--label",
            "team=io",
            "--runs",
            "3",
            "--shell",
            "sh",
            "-P",
            "s",
            "1",
            "8",
            "--parameter-factor",
            "2",
            "-P",
            "t",
            "1",
            "5",
            "-D",
            "2",
            "--",
            "x {s} {t}",
        ]);
        let b = typed(&[
            "cmdscope",
            "run",
            "-w",
            "2",
            "--label",
            "team=io",
            "-n",
            "Y",
            "-n",
            "Z",
            "--order",
            "sequential",
            "--min-runs",
            "4",
            "--max-runs",
            "9",
            "--min-time",
            "0.5",
            "--alpha",
            "0.01",
            "--precision",
            "2",
            "--timeout",
            "7",
            "--stop-on-timeout",
            "--ignore-failure",
            "--output",
            "pipe",
            "--counters",
            "--remove-outliers",
            "--metric",
            "time_user",
            "--seed",
            "42",
            "--reference",
            "w",
            "--env",
            "K=v",
            "--clear-env",
            "--env-size",
            "10",
            "--cpus",
            "0",
            "--nice",
            "3",
            "--ops",
            "100",
            "-p",
            "p1",
            "-p",
            "p2",
            "-C",
            "c",
            "-s",
            "s",
            "-c",
            "k",
            "--workdir",
            "tmpfs",
            "-N",
            "-L",
            "l",
            "1,2",
            "--",
            "y",
            "z",
        ]);
        for (benchmark, mut expected) in suite.benchmarks.iter().zip([a, b]) {
            let got = request(benchmark).unwrap();
            expected.benchmark = Some(benchmark.name.clone());
            assert_eq!(
                format!("{got:?}"),
                format!("{expected:?}"),
                "{}",
                benchmark.name
            );
        }
    }

    #[test]
    fn a_benchmark_that_sets_nothing_gets_runs_defaults() {
        let suite = super::super::file::parse(
            Path::new("s.toml"),
            "[[benchmark]]\nname = 'a'\ncommand = 'x'\n",
        )
        .unwrap();
        let mut expected = typed(&["cmdscope", "run", "x"]);
        expected.benchmark = Some("a".into());
        let got = request(&suite.benchmarks[0]).unwrap();
        assert_eq!(format!("{got:?}"), format!("{expected:?}"));
    }

    #[test]
    fn what_the_command_line_parser_refuses_a_suite_refuses_on_one_line() {
        let refused = |settings: &str, want: &str| {
            let text = format!("[[benchmark]]\nname = 'a'\ncommand = 'x'\n{settings}\n");
            let suite = super::super::file::parse(Path::new("s.toml"), &text).unwrap();
            let e = plan(&suite).unwrap_err();
            assert_eq!(e.exit_code(), crate::error::exit::USAGE, "{e}");
            let e = e.to_string();
            assert!(e.starts_with("s.toml:2:8: benchmark 'a': "), "{e}");
            assert!(e.contains(want), "{want} in {e}");
            assert!(!e.contains('\n'), "{e}");
        };
        refused("runs = 0", "--runs must be at least 1");
        refused("max_runs = 0", "--max-runs must be at least 1");
        refused(
            "runs = 3\nmin_runs = 2",
            "runs cannot be used with min_runs",
        );
        refused(
            "order = 'Interleaved'",
            "invalid value 'Interleaved' for order",
        );
        refused("shell = 'sh \"'", "is not a shell command");
        refused("env = { '' = 'v' }", "--env expects KEY=VALUE");
        refused(
            "parameters = { n = { min = 1, max = 4, step = 1, factor = 2 } }",
            "more than one -D/--parameter-factor",
        );
        refused(
            "parameters = { n = { min = 'a', max = 4 } }",
            "--parameter-scan minimum",
        );
        refused("env_file = '/nonexistent/env'", "/nonexistent/env");
    }

    #[test]
    fn cells_are_the_cells_of_the_equivalent_command_line() {
        let p = planned(SUITE);
        assert_eq!(count(&p), 5 + 2 * 5);
        // The same cells as `cmdscope run` typed by hand.
        let typed = crate::cli::Cli::try_parse_from([
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
        let crate::cli::Command::Run(typed) = typed.command else {
            panic!()
        };
        let (cells, _) = crate::cli::cells::plan_cells(&typed).unwrap();
        let suite: Vec<&Cell> = p[1].cells.iter().map(|c| &c.cell).collect();
        assert_eq!(suite, cells.iter().collect::<Vec<_>>());
        assert_eq!(p[1].request.runs, Some(3));
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
