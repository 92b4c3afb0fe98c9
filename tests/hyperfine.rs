//! What hyperfine users rely on: every run sees the same input
//! and output, hooks bracket the runs they belong to, shell syntax runs
//! through a shell, hyperfine's flags and names.

mod common;

use common::*;

#[test]
fn input_file_is_read_from_its_start_by_every_run_and_hook() {
    let dir = tempdir();
    let input = dir.path().join("in.bin");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let log = dir.path().join("hashes");
    let f = fixture();
    let hash = format!("{f} hashin {}", log.display());
    ok(cmdscope(&[
        "run",
        "--runs",
        "3",
        "--warmup",
        "2",
        "--input",
        input.to_str().unwrap(),
        "--prepare",
        &hash,
        "--setup",
        &hash,
        "--cleanup",
        &hash,
        // Named apart: the same command twice would be one benchmark twice.
        "-n",
        "a",
        &hash,
        "-n",
        "b",
        &format!("{f} hashin {}", log.display()),
    ]));
    let got = lines(&log);
    // Per command 2 warm-ups + 3 runs, each with a prepare; setup and cleanup.
    assert_eq!(got.len(), 2 * (5 + 5) + 2, "{got:?}");
    let expected = &got[0];
    assert!(
        expected.starts_with("200000 "),
        "first reader saw {expected}"
    );
    assert!(got.iter().all(|l| l == expected), "{got:?}");
}

#[test]
fn output_file_holds_exactly_one_run_of_output() {
    let dir = tempdir();
    let out = dir.path().join("out.txt");
    let f = fixture();
    ok(cmdscope(&[
        "run",
        "--runs",
        "4",
        "--output",
        out.to_str().unwrap(),
        &format!("{f} spew 1000"),
    ]));
    // Emptied before every run, as hyperfine does: what is left is one run's.
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 1000);
}

#[test]
fn setup_and_cleanup_bracket_their_command_in_sequential_order() {
    let dir = tempdir();
    let log = dir.path().join("order");
    let f = fixture();
    let l = log.display();
    ok(cmdscope(&[
        "run",
        "--runs",
        "2",
        "--warmup",
        "1",
        "--order",
        "sequential",
        "-L",
        "v",
        "x,y",
        "--setup",
        &format!("{f} log {l} setup-{{v}}"),
        "--cleanup",
        &format!("{f} log {l} cleanup-{{v}}"),
        &format!("{f} log {l} run-a-{{v}}"),
        &format!("{f} log {l} run-b-{{v}}"),
    ]));
    let want: Vec<String> = ["x", "y"]
        .iter()
        .flat_map(|v| {
            ["a", "b"].into_iter().flat_map(move |c| {
                let mut w = vec![format!("setup-{v}")];
                w.extend((0..3).map(|_| format!("run-{c}-{v}")));
                w.push(format!("cleanup-{v}"));
                w
            })
        })
        .collect();
    assert_eq!(lines(&log), want);
}

#[test]
fn different_setups_run_sequentially_by_default_and_refuse_interleaving() {
    let dir = tempdir();
    let log = dir.path().join("order");
    let f = fixture();
    let l = log.display();
    let setup = format!("{f} log {l} setup-{{v}}");
    let cmd = format!("{f} log {l} run-{{v}}");
    let o = ok(cmdscope(&[
        "run", "--runs", "2", "-L", "v", "1,2", "--setup", &setup, &cmd,
    ]));
    assert!(stderr(&o).contains("sequential order"), "{}", stderr(&o));
    assert_eq!(
        lines(&log),
        ["setup-1", "run-1", "run-1", "setup-2", "run-2", "run-2"]
    );
    let o = cmdscope(&[
        "run",
        "--runs",
        "2",
        "--order",
        "interleaved",
        "-L",
        "v",
        "1,2",
        "--setup",
        &setup,
        &cmd,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("--order sequential") && e.lines().count() == 1,
        "{e}"
    );
}

#[test]
fn a_shared_setup_brackets_all_interleaved_runs_once() {
    let dir = tempdir();
    let log = dir.path().join("order");
    let f = fixture();
    let l = log.display();
    ok(cmdscope(&[
        "run",
        "--runs",
        "3",
        "--setup",
        &format!("{f} log {l} setup"),
        "--cleanup",
        &format!("{f} log {l} cleanup"),
        "-n",
        "a",
        &format!("{f} log {l} run"),
        "-n",
        "b",
        &format!("{f} log {l} run"),
    ]));
    let got = lines(&log);
    assert_eq!(got.first().map(String::as_str), Some("setup"));
    assert_eq!(got.last().map(String::as_str), Some("cleanup"));
    assert_eq!(got.len(), 8, "{got:?}");
}

#[test]
fn shell_syntax_runs_through_sh_and_plain_commands_are_executed_directly() {
    let dir = tempdir();
    let log = dir.path().join("log");
    let parents = dir.path().join("parents");
    let f = fixture();
    let data = dir.path().join("f");
    std::fs::write(&data, "a\nb\nc\n").unwrap();
    let o = ok(cmdscope(&[
        "run",
        "--runs",
        "2",
        "--order",
        "sequential",
        // Once per command, as hyperfine allows.
        "--output=null",
        "--output",
        dir.path().join("out").to_str().unwrap(),
        "--output=null",
        &format!("echo x >> {}", log.display()),
        &format!("cat {} | wc -l", data.display()),
        &format!("{f} parent {}", parents.display()),
    ]));
    // As hyperfine: the redirection appends (2 runs), the pipe counts lines.
    assert_eq!(lines(&log), ["x", "x"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out"))
            .unwrap()
            .trim(),
        "3"
    );
    // A plain command is a child of cmdscope's spawner, not of a shell.
    assert_eq!(lines(&parents), ["cmdscope-spawn", "cmdscope-spawn"]);
    let e = stderr(&o);
    assert_eq!(e.matches("shell syntax").count(), 2, "{e}");
    assert!(e.contains("'>>'") && e.contains("'|'"), "{e}");
}

#[test]
fn exit_is_a_builtin_and_ignore_failure_takes_hyperfines_forms() {
    for flag in ["-i=1", "-i", "--ignore-failure=all-non-zero"] {
        let o = cmdscope(&["run", "--runs", "2", flag, "exit 1"]);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
    }
    let o = cmdscope(&["run", "--runs", "2", "-i=2", "exit 1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exited with status 1"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn shell_option_takes_a_value_as_hyperfine_does() {
    let dir = tempdir();
    let out = dir.path().join("out");
    // One benchmark run by bash, not two benchmarks.
    let (_, doc) = exported(&[
        "run",
        "--runs",
        "1",
        "-S",
        "bash --norc",
        "--output",
        out.to_str().unwrap(),
        "echo $BASH_VERSION",
    ]);
    assert_eq!(doc["results"].as_array().unwrap().len(), 1);
    assert!(
        std::fs::read_to_string(&out).unwrap().trim().len() > 2,
        "bash printed no version"
    );
    // --shell=none and -N: executed directly, '>>' is an argument.
    for flag in ["--shell=none", "-N"] {
        let o = cmdscope(&[
            "run",
            "--runs",
            "1",
            flag,
            "--output",
            out.to_str().unwrap(),
            "echo a >> b",
        ]);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a >> b\n");
    }
}

#[test]
fn parameters_in_run_options_work_with_a_shell() {
    let (_, doc) = exported(&[
        "run",
        "--runs",
        "2",
        "-S",
        "sh",
        "-L",
        "n",
        "0,5",
        "--env-size",
        "{n}",
        "true",
    ]);
    let names: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["true (n = 0)", "true (n = 5)"]);
}

#[test]
fn usage_errors_are_one_line_and_keep_clap_tips() {
    for (args, needle) in [
        (
            &["run", "--warmpu", "3", "true"][..],
            "unexpected argument '--warmpu' found; tip: a similar argument exists: '--warmup'",
        ),
        (
            &["run", "--style", "fancy", "true"][..],
            "[possible values: auto,",
        ),
        (&["run", "--runs", "0", "true"][..], "must be at least 1"),
    ] {
        let o = cmdscope(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(needle), "{args:?}: {e}");
        assert!(!e.contains("18446744073709551615"), "{e}");
    }
}

#[test]
fn terminal_lines_use_one_unit_integer_counts_and_plurals() {
    let f = fixture();
    let o = ok(cmdscope(&["run", "--runs", "4", &format!("{f} sleep 20")]));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    for line in text
        .lines()
        .filter(|l| l.trim_start().starts_with("Time ("))
    {
        // 20 ms sleeps: every time on the line in ms (User/System too).
        assert!(
            !line.contains(" s ") && !line.contains(" s,") && !line.ends_with(" s"),
            "{line}"
        );
        assert!(!line.contains("µs"), "{line}");
    }
    let faults = text
        .lines()
        .find(|l| l.contains("Page faults:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        !faults.split_whitespace().any(|w| w.contains('.')),
        "counts must be whole numbers: {faults}"
    );
    assert!(text.contains("4 runs"), "{text}");
    let o = cmdscope(&["run", "--runs", "1", "true"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains(" 1 run\n"), "{text}");
}

#[test]
fn time_unit_forces_one_unit() {
    let f = fixture();
    let o = ok(cmdscope(&[
        "run",
        "--runs",
        "2",
        "-u",
        "microsecond",
        &format!("{f} sleep 20"),
    ]));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mean = text.lines().find(|l| l.contains("mean ±")).unwrap();
    assert!(mean.contains("µs") && !mean.contains("ms"), "{mean}");
}

#[test]
fn timeouts_show_in_the_terminal() {
    let o = cmdscope(&["run", "--timeout", "0.2", "--runs", "2", "sleep 5"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("timed out after"), "{text}");
}

#[test]
fn interrupted_without_exports_does_not_claim_an_export() {
    use std::process::{Command, Stdio};
    let child = Command::new(bin())
        .env("CMDSCOPE_NO_STORE", "1")
        .args(["run", "--runs", "1000", "sleep 0.05"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("cmdscope: interrupted"), "{e}");
    assert!(!e.contains("exported"), "{e}");
}

#[test]
fn markup_exports_have_hyperfines_columns_and_sort() {
    let dir = tempdir();
    let f = fixture();
    let (md, adoc, org) = (
        dir.path().join("r.md"),
        dir.path().join("r.adoc"),
        dir.path().join("r.org"),
    );
    ok(cmdscope(&[
        "run",
        "--runs",
        "3",
        "--sort",
        "mean-time",
        "--export-markdown",
        md.to_str().unwrap(),
        "--export-asciidoc",
        adoc.to_str().unwrap(),
        "--export-orgmode",
        org.to_str().unwrap(),
        // 150 and 50 ms: a busy machine's few ms of wake-up delay cannot
        // pull their ratio out of 2–4, as it did for 30 and 10 ms.
        &format!("{f} sleep 150"),
        &format!("{f} sleep 50"),
    ]));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.starts_with("| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |"),
        "{md}"
    );
    let rows: Vec<&str> = md.lines().skip(2).collect();
    // Fastest first, Relative to the fastest as hyperfine: 1.00, then ~3.
    assert!(
        rows[0].contains("sleep 50`") && rows[0].contains("| 1.00 |"),
        "{md}"
    );
    let rel: f64 = rows[1]
        .split('|')
        .nth(5)
        .unwrap()
        .trim()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((2.0..4.0).contains(&rel), "{md}");
    let adoc = std::fs::read_to_string(adoc).unwrap();
    assert!(
        adoc.starts_with("[cols=") && adoc.trim_end().ends_with("|==="),
        "{adoc}"
    );
    assert!(adoc.contains("| Mean [ms] \n"), "{adoc}");
    let org = std::fs::read_to_string(org).unwrap();
    assert!(org.starts_with("| Command  |  Mean [ms]"), "{org}");
    assert!(
        org.contains("=") && org.lines().nth(1).unwrap().starts_with("|--+"),
        "{org}"
    );
}

#[test]
fn unicode_parameter_names_and_cjk_values_align() {
    let o = ok(cmdscope(&[
        "run",
        "--runs",
        "2",
        "-L",
        "並列",
        "一,二二,三三三",
        "echo {並列}",
    ]));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    // Bar lines: the '│' is in the same terminal column (CJK takes two).
    let columns: Vec<usize> = text
        .lines()
        .filter_map(|l| l.split_once('│'))
        .map(|(label, _)| {
            label
                .chars()
                .map(|c| if c.is_ascii() { 1 } else { 2 })
                .sum()
        })
        .collect();
    assert_eq!(columns.len(), 3, "{text}");
    assert!(
        columns.iter().all(|&c| c == columns[0]),
        "{columns:?}\n{text}"
    );
}

#[test]
fn show_output_is_labelled_by_command() {
    let o = ok(cmdscope(&[
        "run",
        "--runs",
        "3",
        "--show-output",
        "echo out-a",
        "echo out-b",
    ]));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut current = None;
    let mut seen = 0;
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("==> ")
            .and_then(|l| l.strip_suffix(" <=="))
        {
            current = Some(name.to_string());
        } else if let Some(which) = line.strip_prefix("out-") {
            // Every output line follows the label of the command that printed it.
            assert_eq!(
                current.as_deref(),
                Some(format!("echo out-{which}").as_str()),
                "{text}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 6, "{text}");
}

#[test]
fn warnings_fire_on_injected_outliers_drift_and_fast_starts() {
    let dir = tempdir();
    let f = fixture();
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    // Every effect is strong enough to stand out of a loaded machine's
    // noise: with six processes per CPU, a 10 ms sleep of this debug build
    // read up to 50 ms and a 50 ms one up to 140 ms. So spikes of 10x (at
    // 3x the spread hid two of the three), a ramp of 10 -> 200 ms, and a
    // start at 10 ms before 100 ms (before 20 or 50 ms, fast runs woke too
    // late to be faster than every later one).
    let spikes: Vec<f64> = (0..30)
        .map(|i| if i % 10 == 9 { 200.0 } else { 20.0 })
        .collect();
    let ramp: Vec<f64> = (0..30).map(|i| 10.0 + 190.0 * i as f64 / 29.0).collect();
    let fast: Vec<f64> = (0..30).map(|i| if i < 4 { 10.0 } else { 100.0 }).collect();
    for (steps, needle) in [
        (spikes, "are outliers"),
        (ramp, "slower over time"),
        (fast, "turbo boost"),
    ] {
        let state = dir.path().join(format!("state-{}", needle.len()));
        let o = ok(cmdscope(&[
            "run",
            "--runs",
            "30",
            &format!("{f} steps {} {}", state.display(), list(&steps)),
        ]));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(text.contains(needle), "{needle}: {text}");
    }
}
