//! The same invocations with hyperfine 1.20 and cmdscope, compared on what
//! hyperfine users rely on: the benchmarks and their names, parameter
//! values, the order hooks ran in, what runs read and wrote, exit codes and
//! the JSON fields hyperfine's scripts read; then hyperfine's own scripts
//! (shipped in its crates.io package) run on cmdscope's JSON.
//!
//! Needs `hyperfine` 1.20 on PATH (CI installs it with `cargo install
//! hyperfine --version 1.20.0 --locked`) and, for the scripts, python3
//! with numpy, scipy and matplotlib. Without them the tests say why and
//! pass, except in CI (`CI=true`), where they fail.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Skips (prints why) outside CI, fails in CI.
fn missing(what: &str) {
    assert!(!in_ci(), "CI=true but {what}");
    eprintln!("skipped: {what}");
}

fn hyperfine() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("hyperfine"))
            .find(|p| p.is_file())
    });
    let Some(bin) = found else {
        missing("hyperfine is not installed (cargo install hyperfine --version 1.20.0 --locked)");
        return None;
    };
    let version = Command::new(&bin).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    if !version.contains(" 1.20.") {
        missing(&format!("hyperfine is {}, not 1.20", version.trim()));
        return None;
    }
    Some(bin)
}

fn run_hyperfine(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(["--style", "basic"])
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hyperfine")
}

/// "Benchmark N: NAME" lines, as both tools print them.
fn benchmark_names(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("Benchmark "))
        .filter_map(|l| l.split_once(": ").map(|(_, n)| n.trim().to_string()))
        .collect()
}

/// Runs `args` (with `{dir}` replaced by a fresh directory per tool) with
/// both tools; returns (hyperfine's, cmdscope's) outputs and directories.
fn both(hf: &Path, args: &[&str]) -> ((Output, tempfile::TempDir), (Output, tempfile::TempDir)) {
    let run = |tool: &dyn Fn(&[&str]) -> Output| {
        let dir = tempdir();
        let d = dir.path().to_str().unwrap().to_string();
        let owned: Vec<String> = args.iter().map(|a| a.replace("{dir}", &d)).collect();
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        (tool(&refs), dir)
    };
    let h = run(&|a| run_hyperfine(hf, a));
    let c = run(&|a| {
        let mut full = vec!["run"];
        full.extend_from_slice(a);
        cmdscope(&full)
    });
    (h, c)
}

#[test]
fn hooks_bracket_commands_in_the_same_order_with_the_same_names() {
    let Some(hf) = hyperfine() else { return };
    let f = fixture();
    let log = |what: &str| format!("{f} log {{dir}}/log {what}");
    let args = [
        "--runs",
        "2",
        "--warmup",
        "1",
        "-L",
        "v",
        "x,y",
        "--setup",
        &log("setup-{v}"),
        "--prepare",
        &log("prepare"),
        "--conclude",
        &log("conclude"),
        "--cleanup",
        &log("cleanup-{v}"),
        &log("a-{v}"),
        &log("b-{v}"),
    ]
    .map(str::to_string);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ((ho, hd), (co, cd)) = both(&hf, &args);
    assert!(ho.status.success(), "{}", stderr(&ho));
    assert!(co.status.success(), "{}", stderr(&co));
    let (hl, cl) = (lines(&hd.path().join("log")), lines(&cd.path().join("log")));
    assert!(hl.len() > 20, "{hl:?}");
    assert_eq!(cl, hl, "hook order: cmdscope vs hyperfine");
    let names = |o: &Output, d: &Path| -> Vec<String> {
        let d = d.to_str().unwrap();
        benchmark_names(o)
            .iter()
            .map(|n| n.replace(d, "{dir}"))
            .collect()
    };
    assert_eq!(names(&co, cd.path()), names(&ho, hd.path()));
}

/// The log's runs as (prepare, command, conclude) triples, sorted: which
/// hooks bracketed which command, and how often, whatever the order of
/// the runs (cmdscope interleaves them, hyperfine runs one command after
/// the other).
fn bracketed_runs(log: &[String]) -> Vec<&[String]> {
    assert_eq!(log.len() % 3, 0, "{log:?}");
    let mut runs: Vec<&[String]> = log.chunks(3).collect();
    runs.sort();
    runs
}

#[test]
fn the_reference_counts_first_for_per_command_hooks_and_outputs() {
    let Some(hf) = hyperfine() else { return };
    let f = fixture();
    let log = |what: &str| format!("{f} log {{dir}}/log {what}");
    let (r, a, b) = (log("R"), log("a"), log("b"));
    let (p0, p1, p2) = (log("p0"), log("p1"), log("p2"));
    let (c0, c1, c2) = (log("c0"), log("c1"), log("c2"));
    let mut args = vec!["--runs", "2", "--warmup", "1", "--reference", &r];
    args.extend(["--prepare", &p0, "--prepare", &p1, "--prepare", &p2]);
    args.extend(["--conclude", &c0, "--conclude", &c1, "--conclude", &c2]);
    args.extend([&a[..], &b]);
    let ((ho, hd), (co, cd)) = both(&hf, &args);
    assert!(ho.status.success(), "{}", stderr(&ho));
    assert!(co.status.success(), "{}", stderr(&co));
    let (hl, cl) = (lines(&hd.path().join("log")), lines(&cd.path().join("log")));
    let expected: Vec<[&str; 3]> = [["p0", "R", "c0"], ["p1", "a", "c1"], ["p2", "b", "c2"]]
        .into_iter()
        .flat_map(|run| [run; 3])
        .collect();
    assert_eq!(bracketed_runs(&hl), expected, "hyperfine: {hl:?}");
    assert_eq!(bracketed_runs(&cl), expected, "cmdscope: {cl:?}");

    // A reference that is also one of the commands runs as often as any
    // (named apart: cmdscope refuses two benchmarks of one identity).
    let args = [
        "--runs",
        "2",
        "--reference",
        &a,
        "--reference-name",
        "ref",
        "--prepare",
        &p0,
        &a,
        &b,
    ];
    let ((ho, hd), (co, cd)) = both(&hf, &args);
    assert!(ho.status.success(), "{}", stderr(&ho));
    assert!(co.status.success(), "{}", stderr(&co));
    let (hl, cl) = (lines(&hd.path().join("log")), lines(&cd.path().join("log")));
    assert_eq!(hl.iter().filter(|l| *l == "a").count(), 4, "{hl:?}");
    let sorted = |mut l: Vec<String>| {
        l.sort();
        l
    };
    assert_eq!(sorted(cl), sorted(hl));

    // One --output per command, the reference's first.
    let args = [
        "--runs",
        "2",
        "--reference",
        "echo R",
        "--output",
        "{dir}/r",
        "--output",
        "{dir}/a",
        "--output",
        "{dir}/b",
        "echo a",
        "echo b",
    ];
    let ((ho, hd), (co, cd)) = both(&hf, &args);
    assert!(ho.status.success(), "{}", stderr(&ho));
    assert!(co.status.success(), "{}", stderr(&co));
    for (file, line) in [("r", "R"), ("a", "a"), ("b", "b")] {
        // hyperfine appends every run to the file; cmdscope empties it first.
        for dir in [hd.path(), cd.path()] {
            let got = lines(&dir.join(file));
            assert!(
                !got.is_empty() && got.iter().all(|l| l == line),
                "{file}: {got:?}"
            );
        }
    }

    // Per-command lists that do not count the reference are refused by both.
    let args = [
        "--runs",
        "1",
        "--reference",
        "true",
        "--prepare",
        "true",
        "--prepare",
        "true",
        "true",
        "true",
    ];
    let ((ho, _), (co, _)) = both(&hf, &args);
    assert!(!ho.status.success(), "hyperfine accepted {args:?}");
    one_line_error(
        &co,
        "--prepare was given 2 times for 3 commands (the --reference command counts, first)",
    );
}

#[test]
fn names_of_parameters_and_reference_commands_match() {
    let Some(hf) = hyperfine() else { return };
    for args in [
        &["--runs", "2", "-L", "u", "a,b", "echo test"][..],
        &["--runs", "2", "-L", "n", "1,2", "echo {n}", "echo x"][..],
        &["--runs", "2", "-L", "n", "1,2", "-n", "nm {n}", "echo test"][..],
        &[
            "--runs",
            "2",
            "--reference",
            "true",
            "-L",
            "n",
            "1,2",
            "echo {n}",
        ][..],
        &[
            "--runs",
            "2",
            "--reference",
            "true",
            "--reference-name",
            "base",
            "echo",
        ][..],
        &[
            "--runs",
            "1",
            "-P",
            "x",
            "0",
            "0.02",
            "-D",
            "0.01",
            "sleep {x}",
        ][..],
        // A reference that is also one of the commands is a benchmark of
        // its own (named apart: see below).
        &[
            "--runs",
            "2",
            "--reference",
            "echo x",
            "--reference-name",
            "base",
            "echo x",
            "echo y",
        ][..],
        &["--runs", "1", "-P", "x", "0", "1", "-D", "0.25", "echo {x}"][..],
        &["--runs", "1", "-P", "n", "3", "5", "echo {n}"][..],
        &[
            "--runs", "1", "-L", "a", "1,2", "-L", "b", "x,y", "echo {a}", "true",
        ][..],
    ] {
        let ((ho, _hd), (co, _cd)) = both(&hf, args);
        assert!(ho.status.success(), "{args:?}: {}", stderr(&ho));
        assert!(co.status.success(), "{args:?}: {}", stderr(&co));
        let names = benchmark_names(&ho);
        assert!(!names.is_empty(), "{args:?}");
        assert_eq!(benchmark_names(&co), names, "{args:?}");
    }
    // Unnamed, the reference and the command would be one benchmark
    // twice: hyperfine runs both, cmdscope refuses before any run (its
    // store, check and exports tell benchmarks apart by name).
    let args = ["--runs", "2", "--reference", "echo x", "echo x", "echo y"];
    let ((ho, _hd), (co, _cd)) = both(&hf, &args);
    assert!(ho.status.success(), "{}", stderr(&ho));
    one_line_error(&co, "name the reference apart (--reference-name NAME)");
}

#[test]
fn shell_syntax_input_output_and_exit_codes_match() {
    let Some(hf) = hyperfine() else { return };
    let f = fixture();
    let hash = format!("{f} hashin {{dir}}/hashes");
    let cases: Vec<Vec<String>> = vec![
        vec!["--runs", "3", "echo x >> {dir}/log"],
        vec!["--runs", "2", "exit 1"],
        vec!["--runs", "2", "-i", "exit 1"],
        vec!["--runs", "2", "--ignore-failure=1", "exit 1"],
        vec!["--runs", "2", "--ignore-failure=2", "exit 1"],
        vec![
            "--runs",
            "2",
            "--output",
            "{dir}/out",
            "cat /etc/hostname /etc/passwd | wc -l",
        ],
        vec![
            "--runs",
            "3",
            "--warmup",
            "1",
            "--input",
            "/etc/passwd",
            "--prepare",
            &hash,
            &hash,
        ],
        vec!["--warmpu", "3", "true"],
    ]
    .into_iter()
    .map(|c| c.into_iter().map(str::to_string).collect())
    .collect();
    for case in &cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let ((ho, hd), (co, cd)) = both(&hf, &args);
        assert_eq!(
            co.status.code(),
            ho.status.code(),
            "{args:?}: exit codes; cmdscope said {}",
            stderr(&co)
        );
        for file in ["log", "out", "hashes"] {
            let (h, c) = (lines(&hd.path().join(file)), lines(&cd.path().join(file)));
            assert_eq!(c, h, "{args:?}: {file}");
        }
    }
}

#[test]
fn json_fields_that_hyperfines_scripts_read_match() {
    let Some(hf) = hyperfine() else { return };
    let f = fixture();
    let cmd = format!("{f} sleep {{ms}}");
    let args = [
        "--runs",
        "4",
        "-L",
        "ms",
        "50,100",
        "--export-json",
        "{dir}/r.json",
        &cmd,
    ];
    let ((ho, hd), (co, cd)) = both(&hf, &args);
    assert!(
        ho.status.success() && co.status.success(),
        "{}",
        stderr(&co)
    );
    let h = read_json(&hd.path().join("r.json"));
    let c = read_json(&cd.path().join("r.json"));
    let (hr, cr) = (
        h["results"].as_array().unwrap(),
        c["results"].as_array().unwrap(),
    );
    assert_eq!(cr.len(), hr.len());
    for (h, c) in hr.iter().zip(cr) {
        for key in h.as_object().unwrap().keys() {
            assert!(c.get(key).is_some(), "cmdscope's JSON lacks '{key}'");
        }
        assert_eq!(c["command"], h["command"]);
        assert_eq!(c["parameters"], h["parameters"]);
        assert_eq!(c["exit_codes"], h["exit_codes"]);
        assert_eq!(c["times"].as_array().unwrap().len(), 4);
        for key in ["mean", "stddev", "median", "user", "system", "min", "max"] {
            assert!(c[key].is_f64(), "{key}: {}", c[key]);
        }
        // Same command, same times within scheduling noise: sleeps of 50 ms
        // and more, because on a busy machine a sleeper waits for a CPU
        // when it wakes (up to about 13 ms measured at load 9 on 2 CPUs),
        // and the two tools run at different moments.
        let (hm, cm) = (h["median"].as_f64().unwrap(), c["median"].as_f64().unwrap());
        assert!(
            (cm / hm - 1.0).abs() < 0.5,
            "median {cm} vs hyperfine's {hm}"
        );
    }
}

// ---- hyperfine's scripts on cmdscope's JSON ----

/// The scripts/ directory of the hyperfine 1.20.0 crates.io package.
fn scripts() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let registry = home.join("registry").join("src");
    let found = std::fs::read_dir(&registry).ok().and_then(|dirs| {
        dirs.flatten()
            .map(|d| d.path().join("hyperfine-1.20.0").join("scripts"))
            .find(|p| p.is_dir())
    });
    if found.is_none() {
        missing(
            "hyperfine 1.20.0's scripts are not in the cargo registry (cargo install hyperfine)",
        );
        return None;
    }
    let python = Command::new("python3")
        .args(["-c", "import numpy, scipy, matplotlib"])
        .output();
    if !python.is_ok_and(|o| o.status.success()) {
        missing("python3 with numpy, scipy and matplotlib is not installed");
        return None;
    }
    found
}

fn script(dir: &Path, name: &str, args: &[&str]) -> String {
    let o = Command::new("python3")
        .arg(dir.join(name))
        .args(args)
        .env("MPLBACKEND", "Agg")
        .output()
        .expect("python3");
    assert!(
        o.status.success(),
        "{name} {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `  mean:      0.012 s` from advanced_statistics.py, per command.
fn script_figure(text: &str, label: &str) -> Vec<f64> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(label))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

fn check_scripts_on(json: &Path, dir: &Path, out: &Path) {
    let doc = read_json(json);
    let j = json.to_str().unwrap();
    let stats = script(
        dir,
        "advanced_statistics.py",
        &[j, "--time-unit", "millisecond"],
    );
    let results = doc["results"].as_array().unwrap();
    let means = script_figure(&stats, "mean:");
    let medians = script_figure(&stats, "median:");
    assert_eq!(means.len(), results.len(), "{stats}");
    for (i, r) in results.iter().enumerate() {
        // The script's figures are cmdscope's own (3 decimals in ms).
        let mean = r["mean"].as_f64().unwrap() * 1e3;
        let median = r["median"].as_f64().unwrap() * 1e3;
        assert!(
            (means[i] - mean).abs() < 0.0011,
            "mean {} vs {mean}\n{stats}",
            means[i]
        );
        assert!(
            (medians[i] - median).abs() < 0.0011,
            "median {} vs {median}\n{stats}",
            medians[i]
        );
    }
    for name in [
        "plot_whisker.py",
        "plot_histogram.py",
        "plot_progression.py",
    ] {
        let png = out.join(format!("{name}.png"));
        script(dir, name, &[j, "-o", png.to_str().unwrap()]);
        assert!(
            std::fs::metadata(&png).is_ok_and(|m| m.len() > 1000),
            "{name}"
        );
    }
}

/// `subcommand` (run, or the front door) exports 8 runs of a 10 ms and a
/// 100 ms sleep; hyperfine's scripts read them, figures checked, and its
/// Welch test finds the difference. The difference is large because a
/// machine with ten jobs on two cores delays a 10 ms sleep by tens of
/// milliseconds now and then: with 20 ms against 10, 8 runs left Welch's
/// t at -0.68 there, and what is checked is that the scripts read the
/// export, not the power of a t-test.
fn scripts_read_two_sleeps_from(subcommand: &str, dir: &Path, out: &Path) {
    let f = fixture();
    let json = out.join(format!("{subcommand}.json"));
    let o = cmdscope(&[
        subcommand,
        "--runs",
        "8",
        "--export-json",
        json.to_str().unwrap(),
        &format!("{f} sleep 10"),
        &format!("{f} sleep 100"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_scripts_on(&json, dir, out);
    let t = script(dir, "welch_ttest.py", &[json.to_str().unwrap()]);
    assert!(t.contains("There is a difference"), "{t}");
}

#[test]
fn hyperfines_scripts_read_cmdscopes_json() {
    let Some(dir) = scripts() else { return };
    let out = tempdir();
    let f = fixture();
    scripts_read_two_sleeps_from("run", &dir, out.path());

    // plot_parametrized reads the parameters object.
    let sweep = out.path().join("sweep.json");
    let o = cmdscope(&[
        "run",
        "--runs",
        "3",
        "-P",
        "ms",
        "2",
        "6",
        "-D",
        "2",
        "--export-json",
        sweep.to_str().unwrap(),
        &format!("{f} sleep {{ms}}"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let png = out.path().join("param.png");
    script(
        &dir,
        "plot_parametrized.py",
        &[sweep.to_str().unwrap(), "-o", png.to_str().unwrap()],
    );
    assert!(std::fs::metadata(&png).is_ok_and(|m| m.len() > 1000));
}

/// The front door's exports (`cmdscope hyperfine`, hyperfine's defaults:
/// `sh -c`, sequential, its run count) are read by the same scripts.
#[test]
fn hyperfines_scripts_read_the_front_doors_json() {
    let Some(dir) = scripts() else { return };
    let out = tempdir();
    scripts_read_two_sleeps_from("hyperfine", &dir, out.path());
}

#[test]
fn hyperfines_scripts_agree_on_a_session_with_timeouts() {
    let Some(dir) = scripts() else { return };
    let out = tempdir();
    let json = out.path().join("t.json");
    let f = fixture();
    // Every other run of the second command is killed by the timeout; 10
    // runs leave 5 completed ones, what plot_progression's moving average
    // (width N/5) needs even on hyperfine's own JSON.
    let o = cmdscope(&[
        "run",
        "--timeout",
        "0.3",
        "--runs",
        "10",
        "--ignore-failure",
        "--export-json",
        json.to_str().unwrap(),
        &format!("{f} sleep 20"),
        "sh -c 'if [ -e {dir}/odd ]; then rm {dir}/odd; sleep 1; else touch {dir}/odd; sleep 0.05; fi'"
            .replace("{dir}", out.path().to_str().unwrap())
            .as_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_scripts_on(&json, &dir, out.path());
}

#[test]
fn every_flag_of_hyperfines_help_is_a_flag_of_cmdscope_run() {
    let Some(hf) = hyperfine() else { return };
    let help = |o: Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let theirs = help(Command::new(hf).arg("--help").output().unwrap());
    let ours = help(cmdscope(&["run", "--help"]));
    // "  -w, --warmup <NUM>", "      --reference <CMD>", "  -N": every
    // short and long option at the start of a help line.
    let flags = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with('-'))
            .flat_map(|l| {
                l.split([',', ' ', '[', '='])
                    .take_while(|w| w.is_empty() || w.starts_with('-'))
                    .filter(|w| {
                        w.len() > 1 && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                    })
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let ours = flags(&ours);
    let theirs = flags(&theirs);
    assert!(theirs.len() > 30, "{theirs:?}");
    let missing: Vec<&String> = theirs.iter().filter(|f| !ours.contains(f)).collect();
    assert!(
        missing.is_empty(),
        "hyperfine flags cmdscope lacks: {missing:?}"
    );
}

#[test]
fn command_fields_of_json_and_csv_match_with_names_and_hidden_parameters() {
    let Some(hf) = hyperfine() else { return };
    for args in [
        &["-L", "u", "a,b", "-n", "nm {u}", "echo x"][..],
        &["-L", "u", "a,b", "echo x"][..],
        &["-L", "n", "1,2", "echo {n}"][..],
    ] {
        let mut full = vec![
            "--runs",
            "2",
            "--export-json",
            "{dir}/r.json",
            "--export-csv",
            "{dir}/r.csv",
        ];
        full.extend_from_slice(args);
        let ((ho, hd), (co, cd)) = both(&hf, &full);
        assert!(
            ho.status.success() && co.status.success(),
            "{}",
            stderr(&co)
        );
        let commands = |d: &Path| -> Vec<String> {
            read_json(&d.join("r.json"))["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["command"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(commands(cd.path()), commands(hd.path()), "{args:?}");
        let first_column = |d: &Path| -> Vec<String> {
            std::fs::read_to_string(d.join("r.csv"))
                .unwrap()
                .lines()
                .map(|l| l.split(',').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(first_column(cd.path()), first_column(hd.path()), "{args:?}");
        assert_eq!(benchmark_names(&co), benchmark_names(&ho), "{args:?}");
    }
}

// ---- the front door against hyperfine itself ----

/// `args` through the real hyperfine and through `cmdscope hyperfine`,
/// both in `style` (and without colours): (hyperfine's, cmdscope's).
fn front_door_and_hyperfine(hf: &Path, style: &str, args: &[&str]) -> (Output, Output) {
    let h = Command::new(hf)
        .args(["--style", style])
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hyperfine");
    let mut full = vec!["hyperfine", "--style", style];
    full.extend_from_slice(args);
    (h, cmdscope(&full))
}

/// Standard output from the "Summary" line on, blank lines dropped, each
/// number (digits and points) read as "N": the structure of the summary.
fn summary_shape(o: &Output) -> Vec<String> {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let Some(at) = text.find("Summary\n") else {
        return Vec::new();
    };
    let number = |line: &str| {
        let mut out = String::new();
        let mut in_number = false;
        for ch in line.chars() {
            if ch.is_ascii_digit() || (in_number && ch == '.') {
                if !in_number {
                    out.push('N');
                }
                in_number = true;
            } else {
                in_number = false;
                out.push(ch);
            }
        }
        out
    };
    text[at..]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(number)
        .collect()
}

const CMDSCOPE_LINE: &str = "cmdscope run would say: ";

#[test]
fn the_front_door_adds_one_line_from_the_engine_under_hyperfines_summary() {
    let Some(hf) = hyperfine() else { return };
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let json_arg = json.to_str().unwrap();
    // Real sleeps of 10 and 30 ms: the ratio stays near 3 whatever the
    // load adds to a few runs. `nocolor` is hyperfine's terminal style
    // without colours: the line is on.
    let args = ["--runs", "10", "sleep 0.01", "sleep 0.03"];
    let (h, c) = front_door_and_hyperfine(
        &hf,
        "nocolor",
        &[&["--export-json", json_arg][..], &args[..]].concat(),
    );
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    let (hs, cs) = (summary_shape(&h), summary_shape(&c));
    assert_eq!(
        hs,
        [
            "Summary",
            "  sleep N ran",
            "    N ± N times faster than sleep N"
        ],
        "{}",
        String::from_utf8_lossy(&h.stdout)
    );
    // hyperfine's summary as hyperfine prints it, then exactly one line.
    assert_eq!(cs.len(), hs.len() + 1, "{cs:#?}");
    assert_eq!(cs[..hs.len()], hs[..]);
    let out = String::from_utf8_lossy(&c.stdout).into_owned();
    let line = out
        .lines()
        .find(|l| l.starts_with(CMDSCOPE_LINE))
        .unwrap_or_else(|| panic!("no line: {out}"));
    assert_eq!(out.matches(CMDSCOPE_LINE).count(), 1, "{out}");
    assert!(!out.contains("cmdscope's comparisons"), "{out}");
    // The line is the exported comparison's: same pair, ratio and p-value.
    let doc = read_json(&json);
    let wall = comparisons_of(&doc, "time_wall_clock");
    assert_eq!(wall.len(), 1, "{doc}");
    let w = wall[0];
    assert_eq!(
        (w["candidate"].as_str(), w["baseline"].as_str()),
        (Some("sleep 0.03"), Some("sleep 0.01"))
    );
    // Whatever the load made of the verdict, the line names the pair and
    // carries the exported p-value; a verdict of "slower" (the usual one:
    // about 3x) carries the exported ratio too.
    assert!(
        line.contains("'sleep 0.03'") && line.contains("'sleep 0.01'"),
        "{line}"
    );
    let p = w["p_value"].as_f64().unwrap();
    let p_text = if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    };
    assert!(line.contains(&p_text), "{line} ({w})");
    if w["verdict"] == "slower" {
        let rest = line
            .strip_prefix(&format!("{CMDSCOPE_LINE}'sleep 0.03' is "))
            .unwrap_or_else(|| panic!("{line}"));
        let (ratio, _) = rest
            .split_once("x slower than 'sleep 0.01' (95 % CI ")
            .unwrap_or_else(|| panic!("{line}"));
        let ratio: f64 = ratio.parse().unwrap();
        let exported = w["ratio"].as_f64().unwrap();
        assert!(
            (ratio / exported - 1.0).abs() < 0.01,
            "{line} vs {exported}"
        );
    }

    // Off where hyperfine's users pipe: basic, none, and auto off a
    // terminal (hyperfine picks basic there); the summary is hyperfine's.
    for style in ["basic", "auto"] {
        let (h, c) = front_door_and_hyperfine(&hf, style, &args);
        assert!(c.status.success(), "{}", stderr(&c));
        assert_eq!(summary_shape(&c), summary_shape(&h), "{style}");
        assert!(
            !String::from_utf8_lossy(&c.stdout).contains(CMDSCOPE_LINE),
            "{style}"
        );
    }
    let (h, c) = front_door_and_hyperfine(&hf, "none", &args);
    assert!(
        h.stdout.is_empty() && c.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&c.stdout)
    );
}

#[test]
fn with_three_commands_the_line_is_the_least_certain_comparison() {
    let Some(hf) = hyperfine() else { return };
    // Two commands that sleep alike and one twice as long: the pair that
    // sleeps alike is the least certain whatever the load (its p-value is
    // an A/A test's; the other's is below 0.001 with every run apart).
    let args = ["--runs", "10", "sleep 0.02", "sleep 0.04", "sleep 0.020"];
    let (h, c) = front_door_and_hyperfine(&hf, "nocolor", &args);
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    let (hs, cs) = (summary_shape(&h), summary_shape(&c));
    assert_eq!(hs.len(), 4, "{hs:#?}");
    assert_eq!(cs.len(), hs.len() + 1, "{cs:#?}");
    let line = cs.last().unwrap();
    assert!(
        line.starts_with(&format!("{CMDSCOPE_LINE}'sleep N' ")),
        "{line}"
    );
    let out = String::from_utf8_lossy(&c.stdout).into_owned();
    let line = out.lines().find(|l| l.starts_with(CMDSCOPE_LINE)).unwrap();
    assert!(
        line.contains("'sleep 0.020'") && line.contains("'sleep 0.02'"),
        "{line}"
    );
    assert!(
        line.ends_with(" (the least certain of 2 comparisons)"),
        "{line}"
    );
}

#[test]
fn a_mean_of_zero_gets_hyperfines_note_instead_of_its_summary() {
    let Some(hf) = hyperfine() else { return };
    let args = ["--debug-mode", "--runs", "3", "sleep 0", "sleep 0.1"];
    let (h, c) = front_door_and_hyperfine(&hf, "basic", &args);
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    let note = stderr(&h)
        .lines()
        .find(|l| l.starts_with("Note: "))
        .unwrap_or_else(|| panic!("hyperfine: {}", stderr(&h)))
        .to_string();
    assert!(note.contains("some benchmark times are zero"), "{note}");
    assert!(stderr(&c).lines().any(|l| l == note), "{}", stderr(&c));
    for o in [&h, &c] {
        assert!(!String::from_utf8_lossy(&o.stdout).contains("Summary"));
    }
    // A mean above zero: a summary and no note, in both.
    let args = ["--debug-mode", "--runs", "3", "sleep 0.05", "sleep 0.1"];
    let (h, c) = front_door_and_hyperfine(&hf, "basic", &args);
    assert_eq!(summary_shape(&c), summary_shape(&h));
    assert!(
        !stderr(&h).contains("Note") && !stderr(&c).contains("Note"),
        "{}",
        stderr(&c)
    );
    // --style none: no note in either.
    let args = ["--debug-mode", "--runs", "3", "sleep 0", "sleep 0.1"];
    let (h, c) = front_door_and_hyperfine(&hf, "none", &args);
    assert!(
        stderr(&h).is_empty() && stderr(&c).is_empty(),
        "{}",
        stderr(&c)
    );
}

#[test]
fn no_shell_with_debug_mode_is_refused_in_hyperfines_words() {
    let Some(hf) = hyperfine() else { return };
    for args in [
        &["-N", "--debug-mode", "sleep 1"][..],
        &["--debug-mode", "-N", "sleep 1"][..],
    ] {
        let (h, c) = front_door_and_hyperfine(&hf, "basic", args);
        assert_eq!(h.status.code(), Some(2), "{}", stderr(&h));
        assert_eq!(c.status.code(), h.status.code(), "{args:?}: {}", stderr(&c));
        let said = stderr(&h);
        let words = said
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("error: "))
            .unwrap_or_else(|| panic!("hyperfine: {said}"));
        assert!(words.contains("cannot be used with"), "{words}");
        assert!(
            stderr(&c).contains(words),
            "{args:?}: {} vs {words}",
            stderr(&c)
        );
        // The whole block: `parse_errors_are_hyperfines_block_byte_for_byte`.
        assert_eq!(stderr(&c), said, "{args:?}");
    }
    // -N alone, and its long name, still run.
    for flag in ["-N", "--no-shell"] {
        let o = cmdscope(&["hyperfine", "--style", "none", "--runs", "2", flag, "true"]);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
    }
}

#[test]
fn debug_mode_exports_hyperfines_fields_with_its_values() {
    let Some(hf) = hyperfine() else { return };
    let dir = tempdir();
    let (hj, cj) = (dir.path().join("h.json"), dir.path().join("c.json"));
    let args = |json: &Path| -> Vec<String> {
        [
            "--debug-mode",
            "--runs",
            "3",
            "--export-json",
            json.to_str().unwrap(),
            "sleep 0.1",
            "sleep 0.25",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let (ha, ca) = (args(&hj), args(&cj));
    let ha: Vec<&str> = ha.iter().map(String::as_str).collect();
    let ca: Vec<&str> = ca.iter().map(String::as_str).collect();
    let h = Command::new(&hf)
        .args(["--style", "none"])
        .args(&ha)
        .output()
        .expect("run hyperfine");
    let c = cmdscope(&[&["hyperfine", "--style", "none"][..], &ca[..]].concat());
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    let (h, c) = (read_json(&hj), read_json(&cj));
    let (hr, cr) = (
        h["results"].as_array().unwrap(),
        c["results"].as_array().unwrap(),
    );
    assert_eq!(cr.len(), hr.len());
    for (h, c) in hr.iter().zip(cr) {
        assert_eq!(h["memory_usage_byte"], serde_json::json!([0, 0, 0]), "{h}");
        // Every field hyperfine writes, with hyperfine's value: debug mode
        // times are exact.
        for (key, hv) in h.as_object().unwrap() {
            let cv = &c[key];
            match (hv.as_f64(), cv.as_f64()) {
                (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{key}: {cv} vs {hv}"),
                _ => match (hv.as_array(), cv.as_array()) {
                    (Some(a), Some(b)) => {
                        assert_eq!(a.len(), b.len(), "{key}: {cv} vs {hv}");
                        for (x, y) in a.iter().zip(b) {
                            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                            assert!((x - y).abs() < 1e-9, "{key}: {cv} vs {hv}");
                        }
                    }
                    _ => assert_eq!(cv, hv, "{key}"),
                },
            }
        }
    }
}

// ---- the block per benchmark, as a hyperfine user sees it ----

/// hyperfine's warnings, by their first words: what the front door may
/// warn in.
const HYPERFINE_WARNINGS: [&str; 4] = [
    "Command took less than 5 ms to complete.",
    "Ignoring non-zero exit code.",
    "The first benchmarking run for this command was significantly slower than the rest",
    "Statistical outliers were detected.",
];

/// `argv` run on a terminal (script(1)), as a user sees it: standard
/// output and error together, each line as it was left (what a carriage
/// return or a clearing progress bar overwrote is gone), escape codes
/// removed. None when script(1) is missing.
fn on_a_terminal(argv: &[&str]) -> Option<String> {
    let quoted: Vec<String> = argv
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let o = Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env_remove("NO_COLOR")
        .env("CMDSCOPE_NO_STORE", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .env("TERM", "xterm")
        .output()
        .ok()?;
    assert!(o.status.success(), "{argv:?}: {o:?}");
    let escapes = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
    let text = String::from_utf8_lossy(&o.stdout).replace("\r\n", "\n");
    Some(
        text.lines()
            .map(|l| escapes.replace_all(l.rsplit('\r').next().unwrap_or(""), ""))
            .filter(|l| !l.is_empty())
            .map(|l| l.into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The lines' structure: each number (with the blanks that align it) as
/// " N"; hyperfine's warnings, which a busy machine may make either tool
/// print, left out with the line of one blank before them, and checked to
/// be in hyperfine's words.
fn block_shape(text: &str) -> Vec<String> {
    let number = regex::Regex::new(r" *[0-9]+(\.[0-9]+)?").unwrap();
    let mut shape: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(w) = line.strip_prefix("  Warning: ") {
            assert!(
                HYPERFINE_WARNINGS.iter().any(|h| w.starts_with(h)),
                "not hyperfine's words: {line}\n{text}"
            );
            if shape.last().is_some_and(|l| l == " ") {
                shape.pop();
            }
            continue;
        }
        if line == " " && shape.last().is_some_and(|l| l == " ") {
            continue;
        }
        shape.push(number.replace_all(line, " N").into_owned());
    }
    shape
}

/// hyperfine's and the front door's lines for `args` in `style`, on a
/// terminal: equal in structure, but for the front door's one added line
/// under the summary (in the styles that have it).
fn same_lines_as_hyperfine(hf: &Path, style: &str, args: &[&str]) {
    let mut h = vec![hf.to_str().unwrap(), "--style", style];
    h.extend_from_slice(args);
    let bin = bin();
    let mut c = vec![bin.to_str().unwrap(), "hyperfine", "--style", style];
    c.extend_from_slice(args);
    let (Some(h_text), Some(c_text)) = (on_a_terminal(&h), on_a_terminal(&c)) else {
        missing("script(1) is not installed");
        return;
    };
    // The progress bars differ (cmdscope keeps its own): only what stays.
    let (hs, mut cs) = (block_shape(&h_text), block_shape(&c_text));
    let added: Vec<usize> = (0..cs.len())
        .filter(|&i| cs[i].starts_with(CMDSCOPE_LINE))
        .collect();
    assert!(added.len() <= 1, "{c_text}");
    if let Some(&i) = added.first() {
        cs.remove(i);
    }
    assert_eq!(
        cs, hs,
        "{style} {args:?}\n--- cmdscope\n{c_text}\n--- hyperfine\n{h_text}"
    );
    assert!(
        hs.iter().any(|l| l.starts_with("Benchmark N: ")),
        "{h_text}"
    );
}

#[test]
fn each_benchmarks_block_is_hyperfines_line_for_line_in_every_style() {
    let Some(hf) = hyperfine() else { return };
    let args = ["--runs", "5", "sleep 0.01", "sleep 0.02"];
    for style in ["basic", "full", "nocolor", "color"] {
        same_lines_as_hyperfine(&hf, style, &args);
    }
    // With one run, hyperfine's `abs ≡` form and no range.
    same_lines_as_hyperfine(&hf, "full", &["--runs", "1", "sleep 0.01", "sleep 0.02"]);
    same_lines_as_hyperfine(&hf, "basic", &["--runs", "1", "sleep 0.01"]);
}

#[test]
fn the_front_doors_extra_lines_and_warnings_come_with_its_flag() {
    let Some(hf) = hyperfine() else { return };
    let args = ["--runs", "5", "-i", "sh -c 'sleep 0.01; exit 3'"];
    let (h, c) = front_door_and_hyperfine(&hf, "basic", &args);
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    // hyperfine's warning, in its words, on standard error as its.
    let warning = "  Warning: Ignoring non-zero exit code.\n";
    assert!(stderr(&h).contains(warning), "{}", stderr(&h));
    assert!(stderr(&c).contains(warning), "{}", stderr(&c));
    let out = String::from_utf8_lossy(&c.stdout).into_owned();
    assert!(!out.contains("Warning") && !out.contains("Memory"), "{out}");
    assert!(!stderr(&c).contains("cmdscope: warning"), "{}", stderr(&c));
    let mut detailed = vec!["hyperfine", "--style", "basic", "--cmdscope-details"];
    detailed.extend_from_slice(&args);
    let d = cmdscope(&detailed);
    assert!(d.status.success(), "{}", stderr(&d));
    let out = String::from_utf8_lossy(&d.stdout).into_owned();
    for line in ["  Time (median):", "  Memory (peak RSS):", "  Page faults:"] {
        assert!(out.contains(line), "{line}: {out}");
    }
}

#[test]
fn with_debug_modes_made_up_times_the_output_is_hyperfines_byte_for_byte() {
    let Some(hf) = hyperfine() else { return };
    // Nothing runs: the times are the sleeps', so every figure is fixed
    // and hyperfine's standard output can be matched exactly.
    for args in [
        &["--debug-mode", "--runs", "5", "sleep 0.01", "sleep 0.25"][..],
        &["--debug-mode", "--runs", "1", "sleep 1.5", "sleep 0.0005"][..],
        &["--debug-mode", "-u", "second", "sleep 0.02"][..],
        // The shell's start-up, subtracted from every benchmark's times.
        &[
            "--debug-mode",
            "--shell",
            "sleep 0.05",
            "--runs",
            "3",
            "sleep 0.1",
            "sleep 0.2",
        ][..],
    ] {
        for style in ["basic", "nocolor"] {
            let (h, c) = front_door_and_hyperfine(&hf, style, args);
            assert!(c.status.success(), "{}", stderr(&c));
            let (hs, cs) = (
                String::from_utf8_lossy(&h.stdout),
                String::from_utf8_lossy(&c.stdout),
            );
            // nocolor has the one added line, under the summary.
            let cs: String = cs
                .split_inclusive('\n')
                .filter(|l| !l.starts_with(CMDSCOPE_LINE))
                .collect();
            assert_eq!(cs, hs, "{style} {args:?}");
        }
    }
}

/// Standard output's lines as `argv` writes them (`argv[0]` the program),
/// each with the seconds from the start at which it was read, and the
/// seconds until the process ended.
fn timed_lines(argv: &[&str]) -> (Vec<(f64, String)>, f64) {
    use std::io::BufRead;
    let start = std::time::Instant::now();
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_NO_STORE", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let lines: Vec<(f64, String)> = out
        .lines()
        .map(|l| (start.elapsed().as_secs_f64(), l.expect("read a line")))
        .collect();
    assert!(child.wait().expect("wait").success(), "{argv:?}");
    (lines, start.elapsed().as_secs_f64())
}

#[test]
fn each_benchmarks_block_is_printed_as_it_ends_as_hyperfine_prints_it() {
    let Some(hf) = hyperfine() else { return };
    // The second benchmark sleeps 2 x 0.5 s: its runs start only after
    // the first block is printed, so at least that long separates the
    // first block's last line from the end. Half of it is the margin for
    // a loaded machine (the print may trail the first benchmark's end).
    let args = ["--style", "basic", "--runs", "2", "sleep 0.01", "sleep 0.5"];
    let bin = bin();
    let front_door: Vec<&str> = [bin.to_str().unwrap(), "hyperfine"]
        .into_iter()
        .chain(args)
        .collect();
    let real: Vec<&str> = [hf.to_str().unwrap()].into_iter().chain(args).collect();
    for argv in [real, front_door] {
        let (lines, end) = timed_lines(&argv);
        let text: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
        let second = text
            .iter()
            .position(|l| l.starts_with("Benchmark 2:"))
            .unwrap_or_else(|| panic!("{argv:?}: {text:?}"));
        // The first block ends with its line of one blank.
        let (at, last) = &lines[second - 1];
        assert_eq!(last, " ", "{argv:?}: {text:?}");
        assert!(
            end - at >= 0.5,
            "{argv:?}: the first block came {at:.3} s in, {:.3} s before the end \
             (the second benchmark's runs take at least 1 s)",
            end - at
        );
        // The summary comes after the last benchmark.
        let summary = text.iter().position(|l| l.starts_with("Summary")).unwrap();
        assert!(summary > second, "{text:?}");
    }
}

#[test]
fn blocks_warnings_and_summary_come_in_hyperfines_order_on_one_stream() {
    let Some(hf) = hyperfine() else { return };
    // The first command fails every run: hyperfine's warning that it
    // ignored the exit code comes on standard error between the first
    // block and the second; both streams into one pipe keep that order.
    // It sleeps, so its mean is not zero once the shell's start-up is
    // subtracted (a zero mean has a note instead of the summary). Other
    // warnings (outliers) depend on the machine's noise and are left out.
    let args = "--style basic -i --runs 3 'sleep 0.01; false' 'sleep 0.05'";
    let skeleton = |prefix: &str| {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("{prefix} {args} 2>&1"))
            .env("NO_COLOR", "1")
            .env("CMDSCOPE_NO_STORE", "1")
            .output()
            .expect("sh");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| {
                l.starts_with("Benchmark ")
                    || l.starts_with("Summary")
                    || l.contains("Ignoring non-zero exit code")
            })
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let h = skeleton(&format!("'{}'", hf.display()));
    assert_eq!(
        h,
        [
            "Benchmark 1: sleep 0.01; false",
            "  Warning: Ignoring non-zero exit code.",
            "Benchmark 2: sleep 0.05",
            "Summary"
        ]
    );
    assert_eq!(skeleton(&format!("'{}' hyperfine", bin().display())), h);
}

// ---- the exports' key order ----

/// A JSON document's objects with their keys in the order the file has
/// them (serde_json's own map sorts them).
enum Keys {
    Object(Vec<(String, Keys)>),
    Array(Vec<Keys>),
    Scalar,
}

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Keys, E> {
                Ok(Keys::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Keys, E> {
                Ok(Keys::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Keys, E> {
                Ok(Keys::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Keys, E> {
                Ok(Keys::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Keys, E> {
                Ok(Keys::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Keys, E> {
                Ok(Keys::Scalar)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Keys, A::Error> {
                let mut v = Vec::new();
                while let Some(e) = a.next_element()? {
                    v.push(e);
                }
                Ok(Keys::Array(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Keys, A::Error> {
                let mut v = Vec::new();
                while let Some(e) = a.next_entry()? {
                    v.push(e);
                }
                Ok(Keys::Object(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Keys {
    fn read(path: &Path) -> Keys {
        serde_json::from_slice(&std::fs::read(path).expect("read export")).expect("parse export")
    }
    fn entries(&self) -> &[(String, Keys)] {
        match self {
            Keys::Object(e) => e,
            _ => panic!("not an object"),
        }
    }
    fn names(&self) -> Vec<&str> {
        self.entries().iter().map(|(k, _)| k.as_str()).collect()
    }
    fn get(&self, key: &str) -> &Keys {
        &self.entries().iter().find(|(k, _)| k == key).unwrap().1
    }
}

/// hyperfine's keys come first in hyperfine's order, at every level its
/// export defines (the document, each result, its parameters).
fn hyperfines_keys_first(h: &Keys, c: &Keys, at: &str) {
    let (hn, cn) = (h.names(), c.names());
    assert!(cn.len() >= hn.len(), "{at}: {cn:?} vs {hn:?}");
    assert_eq!(cn[..hn.len()], hn[..], "{at}: {cn:?}");
}

/// A debug-mode session of two parameters, given out of their names' order.
const TWO_PARAMETERS: [&str; 10] = [
    "--debug-mode",
    "--runs",
    "2",
    "-L",
    "t",
    "0.1,0.2",
    "-L",
    "a",
    "x,y",
    "sleep {t}",
];

/// Runs `args` with both tools, each exporting with `flag` (e.g.
/// `--export-csv`) into `dir`: the paths of (hyperfine's, cmdscope's) files.
fn exported_by_both(hf: &Path, dir: &Path, flag: &str, args: &[&str]) -> (PathBuf, PathBuf) {
    let (hp, cp) = (dir.join("hyperfine.out"), dir.join("cmdscope.out"));
    let h = Command::new(hf)
        .args(["--style", "none", flag, hp.to_str().unwrap()])
        .args(args)
        .output()
        .expect("run hyperfine");
    let mut full = vec!["hyperfine", "--style", "none", flag, cp.to_str().unwrap()];
    full.extend_from_slice(args);
    let c = cmdscope(&full);
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    (hp, cp)
}

#[test]
fn the_front_doors_json_has_hyperfines_key_order_then_cmdscopes() {
    let Some(hf) = hyperfine() else { return };
    let dir = tempdir();
    for args in [
        &["--debug-mode", "--runs", "3", "sleep 0.1", "sleep 0.25"][..],
        &TWO_PARAMETERS[..],
    ] {
        let (hj, cj) = exported_by_both(&hf, dir.path(), "--export-json", args);
        let (h, c) = (Keys::read(&hj), Keys::read(&cj));
        hyperfines_keys_first(&h, &c, "document");
        let (Keys::Array(hr), Keys::Array(cr)) = (h.get("results"), c.get("results")) else {
            panic!("results are not arrays");
        };
        assert_eq!(hr.len(), cr.len(), "{args:?}");
        for (i, (h, c)) in hr.iter().zip(cr).enumerate() {
            hyperfines_keys_first(h, c, &format!("results[{i}] {args:?}"));
            if h.names().contains(&"parameters") {
                hyperfines_keys_first(h.get("parameters"), c.get("parameters"), "parameters");
            }
        }
    }
}

/// The front door's CSV is hyperfine's table (its columns, then the
/// parameters sorted by name, with the same values) with cmdscope's
/// columns after it.
#[test]
fn the_front_doors_csv_starts_with_hyperfines_table() {
    let Some(hf) = hyperfine() else { return };
    let dir = tempdir();
    let (hc, cc) = exported_by_both(&hf, dir.path(), "--export-csv", &TWO_PARAMETERS);
    let read = |p: &Path| {
        let text = std::fs::read_to_string(p).unwrap();
        let lines: Vec<Vec<String>> = text
            .lines()
            .map(|l| l.split(',').map(String::from).collect())
            .collect();
        lines
    };
    let (h, c) = (read(&hc), read(&cc));
    let width = h[0].len();
    assert_eq!(
        h[0].join(","),
        "command,mean,stddev,median,user,system,min,max,parameter_a,parameter_t"
    );
    assert_eq!(c[0][..width], h[0][..], "header");
    assert!(c[0].len() > width, "cmdscope's columns after hyperfine's");
    assert_eq!(c.len(), h.len(), "rows");
    for (hr, cr) in h.iter().zip(&c).skip(1) {
        for (i, name) in h[0].iter().enumerate() {
            match hr[i].parse::<f64>() {
                Ok(v) if name != "parameter_t" => {
                    let ours: f64 = cr[i].parse().unwrap_or(f64::NAN);
                    assert!(
                        (v - ours).abs() < 1e-9,
                        "{name}: {} against {}",
                        cr[i],
                        hr[i]
                    );
                }
                _ => assert_eq!(cr[i], hr[i], "{name}"),
            }
        }
    }
}

#[test]
fn with_style_none_warnings_still_reach_standard_error_as_hyperfines() {
    let Some(hf) = hyperfine() else { return };
    let args = ["--runs", "3", "-i", "sh -c 'sleep 0.01; exit 3'"];
    let (h, c) = front_door_and_hyperfine(&hf, "none", &args);
    assert!(h.status.success() && c.status.success(), "{}", stderr(&c));
    // Standard output is empty in both; the warning, after its line of
    // one blank, is on standard error in both.
    assert_eq!(c.stdout, h.stdout, "{}", String::from_utf8_lossy(&c.stdout));
    assert!(h.stdout.is_empty());
    let warning = " \n  Warning: Ignoring non-zero exit code.\n";
    assert!(stderr(&h).contains(warning), "{}", stderr(&h));
    assert!(stderr(&c).contains(warning), "{}", stderr(&c));
    // Nothing else of cmdscope's reaches standard error (a machine-check
    // warning, a note): other lines are hyperfine's warnings, which a busy
    // machine may make either tool print.
    for line in stderr(&c).lines() {
        let line = line.trim_end();
        assert!(
            line.is_empty()
                || line
                    .strip_prefix("  Warning: ")
                    .is_some_and(|w| HYPERFINE_WARNINGS.iter().any(|h| w.starts_with(h))),
            "{}",
            stderr(&c)
        );
    }
}

// ---- warnings by hyperfine's rules ----

/// The warnings hyperfine 1.20's rules give for a command run through the
/// shell with these wall times (its `benchmark::run`): a test oracle
/// written from its source, independent of cmdscope's code. The words
/// are the first of each warning (`HYPERFINE_WARNINGS`). None where a
/// score is within 1 % of the threshold, where the two tools' arithmetic
/// may round differently.
fn hyperfines_rules(times: &[f64], failed: bool) -> Option<Vec<&'static str>> {
    let median = |xs: &[f64]| median_of(xs.to_vec());
    let m = median(times);
    let dev: Vec<f64> = times.iter().map(|t| (t - m).abs()).collect();
    let mad = median(&dev);
    let mad = if mad > 0.0 { mad } else { f64::EPSILON };
    let threshold = 1.4826 * 10.0;
    let scores: Vec<f64> = times.iter().map(|t| (t - m) / mad).collect();
    if scores
        .iter()
        .any(|s| (s.abs() - threshold).abs() < 0.01 * threshold)
    {
        return None;
    }
    let mut w = Vec::new();
    if times.iter().any(|&t| t < 5e-3) {
        w.push(HYPERFINE_WARNINGS[0]);
    }
    if failed {
        w.push(HYPERFINE_WARNINGS[1]);
    }
    if scores[0] > threshold {
        w.push(HYPERFINE_WARNINGS[2]);
    } else if scores.iter().any(|s| s.abs() > threshold) {
        w.push(HYPERFINE_WARNINGS[3]);
    }
    Some(w)
}

/// The warnings on standard error, by their first words, in order.
fn warnings_said(o: &Output) -> Vec<&'static str> {
    stderr(o)
        .lines()
        .filter_map(|l| l.strip_prefix("  Warning: "))
        .map(|w| {
            *HYPERFINE_WARNINGS
                .iter()
                .find(|h| w.starts_with(*h))
                .unwrap_or_else(|| panic!("not hyperfine's words: {w}"))
        })
        .collect()
}

#[test]
fn warnings_fire_by_hyperfines_rules_on_both_tools_times() {
    let Some(hf) = hyperfine() else { return };
    // Each command counts its runs in a file of its own directory: one
    // run of ten is made slower (by 40 %, under `run`'s 50 % rule for a
    // lone outlier), or the first run is, or every run is under 5 ms.
    let counted = |slow: &str| {
        format!(
            "n=$(cat {{dir}}/n 2>/dev/null || echo 0); echo $((n+1)) > {{dir}}/n; \
             if [ $n = {slow} ]; then sleep 0.014; else sleep 0.01; fi"
        )
    };
    let first = "test -e {dir}/f && sleep 0.01 || { touch {dir}/f; sleep 0.3; }".to_string();
    let cases = [
        (counted("5"), None),
        (first, Some(HYPERFINE_WARNINGS[2])),
        ("true".to_string(), Some(HYPERFINE_WARNINGS[0])),
    ];
    for (command, sure) in &cases {
        for tool in ["hyperfine", "cmdscope"] {
            let dir = tempdir();
            let d = dir.path().to_str().unwrap();
            let json = dir.path().join("r.json");
            let command = command.replace("{dir}", d);
            let args = [
                "--style",
                "basic",
                "--runs",
                "10",
                "--export-json",
                json.to_str().unwrap(),
                &command,
            ];
            let o = if tool == "hyperfine" {
                Command::new(&hf)
                    .args(args)
                    .output()
                    .expect("run hyperfine")
            } else {
                cmdscope(&[&["hyperfine"][..], &args[..]].concat())
            };
            assert!(o.status.success(), "{tool}: {}", stderr(&o));
            let doc = read_json(&json);
            let times = run_times(&doc, 0);
            let said = warnings_said(&o);
            if let Some(expected) = hyperfines_rules(&times, false) {
                assert_eq!(
                    said,
                    expected,
                    "{tool} {command}: {times:?}\n{}",
                    stderr(&o)
                );
            }
            if let Some(w) = sure {
                assert!(
                    said.contains(w),
                    "{tool} {command}: {times:?}\n{}",
                    stderr(&o)
                );
            }
        }
    }
}

#[test]
fn debug_modes_warnings_are_hyperfines_byte_for_byte() {
    let Some(hf) = hyperfine() else { return };
    // Under 5 ms through a shell that is only a `sleep`: hyperfine's debug
    // mode runs nothing through a shell and gives no fast-command warning;
    // its times are equal, so no outliers either.
    for args in [
        &["--debug-mode", "--runs", "3", "sleep 0.003", "sleep 0.02"][..],
        &[
            "--debug-mode",
            "--shell",
            "sleep 0.01",
            "--runs",
            "4",
            "--warmup",
            "1",
            "sleep 0.001",
        ][..],
    ] {
        for style in ["basic", "none"] {
            let (h, c) = front_door_and_hyperfine(&hf, style, args);
            assert!(c.status.success(), "{}", stderr(&c));
            assert_eq!(stderr(&c), stderr(&h), "{style} {args:?}");
        }
    }
}

/// A `-P` both tools refuse: the front door exits 1 with hyperfine's words
/// (which a script may match on), byte for byte; `cmdscope run` keeps its
/// usage error (exit 2).
#[test]
fn refused_parameter_scans_are_in_hyperfines_words_and_exit_status() {
    let Some(hf) = hyperfine() else { return };
    for scan in [
        &["-P", "x", "0", "10", "-D", "0"][..],
        &["-P", "x", "0.5", "2"][..],
        &["-P", "x", "0", "1000000"][..],
        &["-P", "x", "zero", "2"][..],
    ] {
        let mut args = vec!["--runs", "2"];
        args.extend_from_slice(scan);
        args.push("echo {x}");
        let (h, c) = front_door_and_hyperfine(&hf, "basic", &args);
        assert_eq!(h.status.code(), Some(1), "{scan:?}: {}", stderr(&h));
        assert_eq!(c.status.code(), Some(1), "{scan:?}: {}", stderr(&c));
        // With its decimal parser's reason in parentheses for a bound that
        // is not a number, read by the same parser.
        assert_eq!(stderr(&c), stderr(&h), "{scan:?}");
        let mut run = vec!["run", "--no-store"];
        run.extend_from_slice(&args);
        assert_eq!(cmdscope(&run).status.code(), Some(2), "{scan:?}");
    }
}

/// Each run's `HYPERFINE_ITERATION` and the length of its
/// `HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET`, as the command and its
/// `--prepare` hook logged them: the lines with the lengths masked, and the
/// lengths.
fn iterations_logged(log: &Path) -> (Vec<String>, Vec<usize>) {
    let mut masked = Vec::new();
    let mut lengths = Vec::new();
    for line in lines(log) {
        let (head, length) = line.rsplit_once(' ').unwrap();
        lengths.push(length.parse().unwrap());
        masked.push(format!("{head} N"));
    }
    (masked, lengths)
}

#[test]
fn runs_get_hyperfines_iteration_and_a_random_environment_offset() {
    let Some(hf) = hyperfine() else { return };
    let dir = tempdir();
    let mut logged = Vec::new();
    for tool in ["hyperfine", "front door", "run"] {
        let log = dir.path().join(tool.replace(' ', "-"));
        let log = log.to_str().unwrap();
        let line = |what: &str| {
            format!(
                "echo \"{what} ${{HYPERFINE_ITERATION-unset}} \
                 ${{#HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET}}\" >> {log}"
            )
        };
        let (setup, prepare, command) = (line("setup"), line("prepare"), line("run"));
        let args = [
            "--runs",
            "3",
            "--warmup",
            "2",
            "--setup",
            &setup,
            "--prepare",
            &prepare,
            &command,
        ];
        let o = match tool {
            "hyperfine" => run_hyperfine(&hf, &args),
            "front door" => cmdscope(&[&["hyperfine", "--style", "basic"][..], &args].concat()),
            _ => cmdscope(&[&["run", "--no-store", "--style", "none"][..], &args].concat()),
        };
        assert!(o.status.success(), "{tool}: {}", stderr(&o));
        logged.push(iterations_logged(Path::new(log)));
    }
    let (hyperfine, front_door, run) = (&logged[0], &logged[1], &logged[2]);
    let expected = [
        "setup unset N",
        "prepare unset N",
        "run warmup-0 N",
        "prepare unset N",
        "run warmup-1 N",
        "prepare unset N",
        "run 0 N",
        "prepare unset N",
        "run 1 N",
        "prepare unset N",
        "run 2 N",
    ];
    assert_eq!(hyperfine.0, expected, "hyperfine's own");
    assert_eq!(front_door.0, hyperfine.0, "front door vs hyperfine");
    for (tool, (_, lengths)) in [("hyperfine", hyperfine), ("front door", front_door)] {
        // 0 to 4,095 X's, drawn anew for every run and hook: eleven
        // lengths all equal by chance has odds of 4096^-10.
        assert!(lengths.iter().all(|&n| n < 4096), "{tool}: {lengths:?}");
        assert!(
            lengths.iter().any(|&n| n != lengths[0]),
            "{tool}: {lengths:?}"
        );
    }
    // `cmdscope run` sets neither.
    assert!(run.0.iter().all(|l| l.contains(" unset ")), "{:?}", run.0);
    assert!(run.1.iter().all(|&n| n == 0), "{:?}", run.1);
}

/// Parse errors of every kind a script can hit: the front door's standard
/// error and exit status are hyperfine's, byte for byte; `cmdscope run`
/// keeps its one line.
#[test]
fn parse_errors_are_hyperfines_block_byte_for_byte() {
    let Some(hf) = hyperfine() else { return };
    let cases: &[&[&str]] = &[
        // unknown flags, with and without a "did you mean" tip
        &["--foo", "true"],
        &["--warmpu", "3", "true"],
        &["--stlye", "basic", "true"],
        // a value missing
        &["--warmup"],
        &["--runs", "2", "--style"],
        &["--shell"],
        &["--output"],
        &["-P", "x", "1"],
        // invalid values
        &["--style", "bogus", "true"],
        &["--sort", "bogus", "true"],
        &["--time-unit", "bogus", "true"],
        // a negative number, which hyperfine's parser takes for a flag
        // (but for -P's and -L's values), and a bad count with a parse error
        &["--runs", "-1", "true"],
        &["-w", "-3", "true"],
        &["-P", "x", "1", "3", "-D", "-1", "echo {x}"],
        &["--runs", "x", "--foo", "true"],
        // conflicting flags
        &["-N", "--debug-mode", "sleep 1"],
        &["--debug-mode", "-N", "sleep 1"],
        // no command
        &[],
    ];
    for args in cases {
        let h = Command::new(&hf)
            .args(*args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let c = cmdscope(&[&["hyperfine"][..], args].concat());
        assert_eq!(h.status.code(), Some(2), "{args:?}: {}", stderr(&h));
        assert_eq!(c.status.code(), h.status.code(), "{args:?}");
        assert_eq!(stderr(&c), stderr(&h), "{args:?}");
        assert!(stderr(&h).contains("\n\nFor more information, try '--help'.\n"));
        if !args.is_empty() {
            let o = cmdscope(&[&["run", "--no-store"][..], args].concat());
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
        }
    }
}

/// Errors hyperfine finds after its parser, in its words: the front door's
/// standard error and exit status are hyperfine's, byte for byte.
#[test]
fn errors_found_after_parsing_are_hyperfines_byte_for_byte() {
    let Some(hf) = hyperfine() else { return };
    let cases: &[&[&str]] = &[
        &["-P", "x", "0", "1000000", "echo {x}"],
        &["-P", "x", "0", "10", "-D", "0", "echo {x}"],
        &["-P", "x", "0.5", "2", "echo {x}"],
        &["-L", "x", "a", "-L", "x", "b", "echo {x}"],
        &["-n", "a", "-n", "b", "true"],
        &[
            "--prepare",
            "true",
            "--prepare",
            "true",
            "--prepare",
            "true",
            "true",
            "true",
        ],
        &[
            "--conclude",
            "true",
            "--conclude",
            "true",
            "--conclude",
            "true",
            "true",
            "true",
        ],
    ];
    for args in cases {
        let args = [&["--runs", "2"][..], args].concat();
        let h = Command::new(&hf)
            .args(&args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let c = cmdscope(&[&["hyperfine"][..], &args].concat());
        assert_eq!(h.status.code(), Some(1), "{args:?}: {}", stderr(&h));
        assert_eq!(c.status.code(), h.status.code(), "{args:?}");
        assert_eq!(stderr(&c), stderr(&h), "{args:?}");
    }
}

/// The values hyperfine takes as text and reads itself after its parser
/// (the run counts, `-i`'s codes, `--min-benchmarking-time`, `--shell`,
/// `--output`'s policies, `-P`'s bounds with its decimal parser): the front
/// door's standard error and exit status are hyperfine's, byte for byte,
/// the first refused in hyperfine's order; `cmdscope run` keeps its own
/// parse error for a count (one line, exit status 2).
#[test]
fn values_hyperfine_reads_itself_are_refused_in_its_words_byte_for_byte() {
    let Some(hf) = hyperfine() else { return };
    let counts: &[&[&str]] = &[
        &["--runs", "x"],
        &["-r", "x"],
        &["--runs=x"],
        &["-rx"],
        &["--runs", ""],
        &["--runs", "99999999999999999999"],
        &["--warmup", "x"],
        &["-w", "1.5"],
        &["--min-runs", "x"],
        &["--max-runs", "y"],
        &["-M", "y", "-m", "x"],
        &["--runs", "x", "-P", "x", "a", "3"],
        &["--warmup", "x", "--runs", "y"],
    ];
    let others: &[&[&str]] = &[
        &["-m", "5", "-M", "2"],
        &["-i=foo"],
        &["-i=1,x"],
        &["-i=all"],
        &["-i=99999999999"],
        &["--min-benchmarking-time", "x"],
        &["--shell", ""],
        &["--shell", "''"],
        &["--shell", "bash '"],
        &["--output", "log"],
        &["-P", "x", "a", "3"],
        &["-P", "x", "1", "b"],
        &["-P", "x", "1.5.2", "3"],
        &["-P", "x", "", "3"],
        &["-P", "x", "-", "3"],
        &["-P", "x", "1", "3", "-D", "z"],
        &["-P", "x", "1", "3", "-D", "0.1.2"],
        &["-P", "x", "1", "3", "-D", ""],
        &["-P", "x", "1.5", "3", "-D", "z"],
        &["-P", "x", "0", "1e3", "-D", "1"],
        &["-P", "x", "0x10", "3"],
        &["-P", "x", "99999999999999999999999999999999", "3"],
        &["-P", "x", "1_0", "3"],
        &["-P", "x", "1.", "3"],
        &["-P", "x", "3", "1"],
        &["-P", "x", "1.5", "0.5", "-D", "0.5"],
        &["-P", "x", "1_0", "3", "-D", "1"],
        &["--export-json", "/nonexistent/dir/out.json"],
        &["--export-csv", "/"],
        &["--runs", "1", "--output", "/nonexistent/dir/log"],
    ];
    for (case, is_count) in counts
        .iter()
        .map(|c| (c, true))
        .chain(others.iter().map(|c| (c, false)))
    {
        let args = [&case[..], &["echo {x}"]].concat();
        let h = Command::new(&hf)
            .args(&args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(h.status.code(), Some(1), "{args:?}: {}", stderr(&h));
        assert!(
            stderr(&h).starts_with("Error: "),
            "{args:?}: {}",
            stderr(&h)
        );
        // hyperfine opens an --output file at the run, after the
        // benchmark's header; the front door checks it before the first run.
        let checked_sooner = case.contains(&"/nonexistent/dir/log");
        assert_eq!(h.stdout.is_empty(), !checked_sooner, "{args:?}");
        for front_door in [&["hyperfine"][..], &["hyperfine", "--style", "basic"]] {
            let c = cmdscope(&[front_door, &args].concat());
            assert_eq!(stderr(&c), stderr(&h), "{args:?}");
            assert_eq!(c.status.code(), Some(1), "{args:?}");
            assert!(c.stdout.is_empty(), "{args:?}");
        }
        if is_count {
            let o = cmdscope(&[&["run", "--no-store"][..], &args].concat());
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
            assert!(
                stderr(&o).starts_with("cmdscope: error: "),
                "{}",
                stderr(&o)
            );
        }
    }
}
