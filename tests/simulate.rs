//! `run --simulate` on real processes: sha256sum (a program nobody here
//! wrote) under Valgrind's cachegrind. Its counts do not move with the
//! machine's load, so these tests hold with builds running beside them:
//! 2 % more input is found slower on estimated cycles in 2 runs per cell,
//! the same command twice is not called different, the counts are stored
//! and gated by `check --metric`, and they equal what cachegrind reports
//! when run by hand.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// A file of `bytes` pseudo-random bytes (the same bytes for every size:
/// the larger file is the smaller one and more).
fn data(path: &Path, bytes: usize) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let v: Vec<u8> = (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(path, v).unwrap();
}

const MIB: usize = 1 << 20;

fn sha(path: &Path) -> String {
    format!("sha256sum {}", path.display())
}

fn comparison<'a>(doc: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    let all = comparisons_of(doc, metric);
    assert_eq!(all.len(), 1, "one comparison of {metric}: {doc}");
    all[0]
}

#[test]
fn two_percent_more_work_is_found_slower_in_two_runs_per_cell() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    data(&a, MIB);
    data(&b, MIB + MIB / 50);
    let (o, doc) = exported(&[
        "run",
        "--simulate",
        "--runs",
        "2",
        "--style",
        "basic",
        &sha(&a),
        &sha(&b),
    ]);
    let c = comparison(&doc, "sim_estimated_cycles");
    assert_eq!(c["verdict"], "slower", "{c}");
    let ratio = c["ratio"].as_f64().unwrap();
    // sha256sum's work is its input's (plus a fixed start-up): +2 % of
    // input is a little under +2 % of cycles.
    assert!((1.015..1.021).contains(&ratio), "{ratio}");
    assert_eq!(c["ratio_ci"][0], c["ratio_ci"][1], "an exact change: {c}");
    assert!(
        c["note"].as_str().unwrap().contains("identical counts"),
        "{c}"
    );
    let i = comparison(&doc, "sim_instructions");
    assert_eq!(i["verdict"], "slower", "{i}");
    // The simulator's wall times are not compared.
    assert!(comparisons_of(&doc, "time_wall_clock").is_empty(), "{doc}");
    assert_eq!(doc["session"]["simulated"]["tool"], "cachegrind");
    assert_eq!(doc["session"]["simulated"]["ll"], "8388608,16,64");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("estimated cycles"), "{text}");
    assert!(text.contains("the simulator's"), "{text}");
    assert!(text.contains("slower than"), "{text}");
}

/// `run --simulate --runs RUNS` of `cmd` twice, named one and two.
fn same_twice<'a>(runs: &'a str, cmd: &'a str) -> [&'a str; 10] {
    [
        "run",
        "--simulate",
        "--runs",
        runs,
        "-n",
        "one",
        "-n",
        "two",
        cmd,
        cmd,
    ]
}

#[test]
fn the_same_command_twice_is_not_called_different() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let a = dir.path().join("a.bin");
    data(&a, MIB);
    let (_, doc) = exported(&same_twice("2", &sha(&a)));
    for metric in [
        "sim_estimated_cycles",
        "sim_instructions",
        "sim_d1_misses",
        "sim_ll_misses",
        "sim_branch_mispredicts",
    ] {
        let c = comparison(&doc, metric);
        assert!(
            c["verdict"] == "no difference" || c["verdict"] == "inconclusive",
            "{metric}: {c}"
        );
    }
}

/// Cachegrind run by hand on the same command: its `summary:` line's
/// first event (Ir) is the instructions cmdscope stored.
#[test]
fn counts_equal_cachegrinds_own_out_file() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let a = dir.path().join("a.bin");
    data(&a, MIB);
    let out = dir.path().join("cg.out");
    let by_hand = Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--branch-sim=yes",
            "--I1=32768,8,64",
            "--D1=32768,8,64",
            "--LL=8388608,16,64",
            "-q",
        ])
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg("/usr/bin/sha256sum")
        .arg(&a)
        .output()
        .unwrap();
    assert!(by_hand.status.success(), "{}", stderr(&by_hand));
    let text = std::fs::read_to_string(&out).unwrap();
    let summary: Vec<f64> = text
        .lines()
        .find_map(|l| l.strip_prefix("summary:"))
        .expect("a summary line")
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let (_, doc) = exported(&["run", "--simulate", "--runs", "2", &sha(&a)]);
    let ir = median(&doc, 0, "sim_instructions");
    // The environment handed to the command differs a little (cmdscope's
    // is the caller's): start-up instructions, not the hashing.
    assert_within(ir, summary[0], 0.001, "Ir by cmdscope vs by hand");
    // D1 misses: reads' and writes' (events 5 and 8).
    let d1 = median(&doc, 0, "sim_d1_misses");
    assert_within(d1, summary[4] + summary[7], 0.05, "D1 misses");
}

/// `check` of the store `db` (with `extra` options) against the session
/// labelled v=base on estimated cycles, failing above +1 %.
fn gate_on_cycles(db: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["check"];
    args.extend_from_slice(extra);
    args.extend([
        "--baseline",
        "v=base",
        "--metric",
        "sim_estimated_cycles",
        "--fail-if-slower",
        "1",
        "--format",
        "text",
    ]);
    with_store(db, &args)
}

/// A simulated session of sha256sum on `file`, named "hash", with `label`,
/// 2 runs, into the store `db`, with `extra` options.
fn simulated_session(db: &Path, label: &str, file: &Path, extra: &[&str]) {
    let cmd = sha(file);
    let mut args = vec!["run", "--simulate", "--runs", "2", "--style", "none"];
    args.extend_from_slice(extra);
    args.extend(["--label", label, "-n", "hash", &cmd]);
    ok(with_store(db, &args));
}

#[test]
fn counts_are_stored_and_gated_by_check_metric() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let db = dir.path().join("store.db");
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    data(&a, MIB);
    data(&b, MIB + MIB / 50);
    let export = |label: &str| dir.path().join(format!("{label}.json"));
    let session = |label: &str, file: &Path| {
        let out = export(label);
        simulated_session(&db, label, file, &["--export-json", out.to_str().unwrap()]);
    };
    let gate = || gate_on_cycles(&db, &[]);
    session("v=base", &a);
    session("v=same", &a);
    let same = gate();
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&same.stdout),
        stderr(&same)
    );
    session("v=more", &b);
    let more = gate();
    let text = String::from_utf8_lossy(&more.stdout);
    assert_eq!(more.status.code(), Some(1), "{text}{}", stderr(&more));
    assert!(text.contains("identical counts"), "{text}");
    // The Markdown header names what the table compares, not wall time.
    let md = with_store(
        &db,
        &[
            "check",
            "--baseline",
            "v=base",
            "--metric",
            "sim_estimated_cycles",
            "--format",
            "markdown",
        ],
    );
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(
        md.contains(") · sim_estimated_cycles, unpaired tests"),
        "{md}"
    );
    assert!(!md.contains("wall time"), "{md}");
    let unknown = with_store(&db, &["check", "--baseline", "v=base", "--metric", "nope"]);
    refused(&unknown, "unknown metric 'nope'");
    // `compare` on the exported results decides the same way, unpaired.
    let compared = |cand: &str| {
        let o = ok(cmdscope(&[
            "compare",
            "--format",
            "json",
            export("v=base").to_str().unwrap(),
            export(cand).to_str().unwrap(),
        ]));
        let rows = json(&o);
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == "sim_estimated_cycles")
            .unwrap_or_else(|| panic!("no sim_estimated_cycles row: {rows}"))
            .clone();
        row
    };
    assert_eq!(compared("v=same")["verdict"], "no difference");
    assert_eq!(compared("v=more")["verdict"], "slower");
    // `compare`'s gate on the counts: exit 1 for +2 % against a 1 % limit,
    // 0 for the same file; by default it gates wall time, of which 2 runs
    // a side are too few, and fails naming that.
    let compare_gate = |cand: &str, extra: &[&str]| {
        let (base, cand) = (export("v=base"), export(cand));
        let mut args = vec!["compare", "--fail-if-slower", "1"];
        args.extend_from_slice(extra);
        args.extend([base.to_str().unwrap(), cand.to_str().unwrap()]);
        cmdscope(&args)
    };
    let on_counts = ["--metric", "sim_estimated_cycles"];
    let o = compare_gate("v=more", &on_counts);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    assert!(
        text.contains("1 comparison significantly slower by more than +1%"),
        "{text}"
    );
    let o = compare_gate("v=same", &on_counts);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = compare_gate("v=same", &[]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    assert!(text.contains("fewer runs than the 3 a side"), "{text}");
    // A metric the files lack is refused with the ones they hold.
    let o = compare_gate("v=same", &["--metric", "cycles"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--metric cycles: no such metric in the files (they hold ")
            && stderr(&o).contains("sim_estimated_cycles"),
        "{}",
        stderr(&o)
    );
}

/// `history` lists a simulated session by its counts, not by the
/// simulator's wall time (tens of times the program's), and says it was
/// simulated; a plain session beside it keeps its wall-time median, and a
/// metric asked for is shown for both. `changes` reads a wall-time history
/// without it.
#[test]
fn history_shows_a_simulated_session_by_its_counts() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let db = dir.path().join("store.db");
    let file = dir.path().join("a.bin");
    data(&file, MIB / 16);
    simulated_session(&db, "v=sim", &file, &[]);
    let cmd = sha(&file);
    ok(with_store(
        &db,
        &[
            "run", "--runs", "3", "--style", "none", "--label", "v=wall", "-n", "hash", &cmd,
        ],
    ));
    let history = |extra: &[&str]| {
        let mut args = vec!["history"];
        args.extend_from_slice(extra);
        String::from_utf8_lossy(&ok(with_store(&db, &args)).stdout).into_owned()
    };
    let text = history(&[]);
    // Newest first: the plain session, then the simulated one.
    let (plain, simulated) = text
        .split_once("\n#")
        .unwrap_or_else(|| panic!("two sessions: {text}"));
    assert!(!plain.contains("simulated"), "{text}");
    assert!(plain.contains("median ") && plain.contains(" ms"), "{text}");
    assert!(!plain.contains("sim_estimated_cycles"), "{text}");
    assert!(simulated.contains("[simulated: cachegrind]"), "{text}");
    assert!(simulated.contains("median sim_estimated_cycles "), "{text}");
    // Asked for, one metric for both sessions.
    let text = history(&["--metric", "memory_peak_resident"]);
    assert_eq!(
        text.matches("median memory_peak_resident ").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("sim_estimated_cycles"), "{text}");
    // A wall-time history leaves the simulated session out (its times are
    // the simulator's); a history of the counts holds it alone.
    ok(with_store(
        &db,
        &[
            "run", "--runs", "3", "--style", "none", "--label", "v=wall2", "-n", "hash", &cmd,
        ],
    ));
    let points = |extra: &[&str]| {
        let mut args = vec!["changes", "--format", "json"];
        args.extend_from_slice(extra);
        let doc: serde_json::Value =
            serde_json::from_slice(&ok(with_store(&db, &args)).stdout).expect("changes' JSON");
        let histories = doc["histories"].as_array().cloned().unwrap_or_default();
        assert_eq!(histories.len(), 1, "{doc}");
        histories[0]["points"].as_u64().unwrap()
    };
    assert_eq!(points(&[]), 2);
    assert_eq!(points(&["--metric", "sim_estimated_cycles"]), 1);
}

#[test]
fn a_session_not_simulated_alike_is_not_compared_on_counts() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let db = dir.path().join("store.db");
    let a = dir.path().join("a.bin");
    data(&a, MIB / 4);
    let run = |label: &str, ll: &str| simulated_session(&db, label, &a, &["--LL", ll]);
    run("v=base", "8388608,16,64");
    run("v=small", "1048576,8,64");
    let o = with_store(
        &db,
        &["check", "--baseline", "v=base", "--metric", "sim_ll_misses"],
    );
    refused(&o, "do not compare");
}

#[test]
fn simulate_refuses_what_it_cannot_do_in_one_line() {
    let o = cmdscope(&["run", "--simulate", "--runs", "1", "/bin/true"]);
    one_line_error(&o, "--runs 2 or more");
    let o = cmdscope(&["run", "--simulate", "/bin/true"]);
    one_line_error(&o, "--runs 2 or more");
    let o = cmdscope(&[
        "run",
        "--simulate",
        "--runs",
        "2",
        "--LL",
        "8M",
        "/bin/true",
    ]);
    one_line_error(&o, "--LL '8M'");
    // No valgrind on PATH: how to install it, exit 2.
    let o = Command::new(bin())
        .args(["run", "--simulate", "--runs", "2", "/bin/true"])
        .env("PATH", "/nonexistent")
        .env("CMDSCOPE_NO_STORE", "1")
        .output()
        .unwrap();
    one_line_error(&o, "apt-get install valgrind");
}

/// Whether this machine gives a user-space hardware instruction counter
/// to `--counted=hardware` (this VM does not): asked of cmdscope itself,
/// which answers before any run.
fn hardware_counter() -> bool {
    let o = cmdscope(&[
        "run",
        "--counted=hardware",
        "--runs",
        "2",
        "--style",
        "none",
        "true",
    ]);
    o.status.code() != Some(2)
}

/// `run --counted` (auto) where there is no hardware instruction counter
/// falls back to cachegrind: the counts are the sim_* ones, one line
/// before the session says so and why, and so do the JSON's session and
/// the settings stored with it. `check` never compares it with a session
/// counted by hardware counters, on any metric.
#[test]
fn counted_auto_falls_back_to_the_simulator_without_a_counter_and_says_why() {
    if !valgrind() {
        return;
    }
    if hardware_counter() {
        // Not a missing tool (`skip` would fail CI): a machine where the
        // fallback is not what auto does.
        eprintln!("not run: this machine has a hardware instruction counter");
        return;
    }
    let dir = tempdir();
    let db = dir.path().join("store.db");
    let a = dir.path().join("a.bin");
    data(&a, MIB / 16);
    let out = dir.path().join("counted.json");
    let run = |label: &str, out: Option<&Path>| {
        let cmd = sha(&a);
        let mut args = vec!["run", "--counted", "--runs", "2", "--style", "basic"];
        if let Some(out) = out {
            args.extend(["--export-json", out.to_str().unwrap()]);
        }
        args.extend(["--label", label, "-n", "hash", &cmd]);
        ok(with_store(&db, &args))
    };
    let o = run("v=base", Some(&out));
    let why = "no usable hardware instruction counter: not available here";
    let err = stderr(&o);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("cmdscope: counted by cachegrind, the simulator"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].contains(why), "{err}");
    // The simulator's repeated counts decide from the 2 runs asked for;
    // only hardware counting makes the rank test's 6.
    assert!(!err.contains("making 6 runs"), "{err}");
    let doc = read_json(&out);
    assert_eq!(
        doc["results"][0]["times"].as_array().map(Vec::len),
        Some(2),
        "{doc}"
    );
    let session = &doc["session"];
    assert_eq!(session["counted_by"], "cachegrind", "{session}");
    assert_eq!(session["counted"]["asked"], "auto", "{session}");
    assert!(
        session["counted"]["reason"]
            .as_str()
            .unwrap()
            .starts_with(why),
        "{session}"
    );
    assert_eq!(session["simulated"]["tool"], "cachegrind", "{session}");
    // The counts are the simulator's, never stored under hardware names.
    assert!(median(&doc, 0, "sim_instructions") > 0.0, "{doc}");
    assert!(doc["results"][0]["instructions"].is_null(), "{doc}");
    run("v=same", None);
    let mut store =
        cmdscope::store::Store::open(&cmdscope::store::Location::Sqlite(db.clone())).unwrap();
    let sessions = store.sessions(&cmdscope::store::Filter::default()).unwrap();
    assert_eq!(sessions.len(), 2);
    for s in &sessions {
        let settings = s.settings.as_ref().expect("stored settings");
        let counted = settings.counted.as_ref().expect("stored as counted");
        assert_eq!(counted.asked, cmdscope::run::counted::Ask::Auto);
        assert_eq!(counted.by, cmdscope::run::counted::By::Cachegrind);
        assert!(counted.reason.starts_with(why), "{counted:?}");
        assert!(settings.simulate.is_some());
    }
    drop(store);
    let gate = || {
        with_store(
            &db,
            &[
                "check",
                "--baseline",
                "v=base",
                "--metric",
                "sim_instructions",
            ],
        )
    };
    assert_eq!(gate().status.code(), Some(0), "{}", stderr(&gate()));
    // The baseline as a session counted by hardware would have stored it.
    let c = rusqlite::Connection::open(&db).unwrap();
    let changed = c
        .execute(
            "UPDATE sessions SET settings = json_set(json_remove(settings, '$.simulate'), \
             '$.counted.by', 'hardware') WHERE id = \
             (SELECT session_id FROM labels WHERE key = 'v' AND value = 'base')",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(c);
    for metric in ["sim_instructions", "instructions", "time_wall_clock"] {
        let o = with_store(&db, &["check", "--baseline", "v=base", "--metric", metric]);
        one_line_error(
            &o,
            "counted by hardware counters: their counts do not compare",
        );
    }
}

/// A suite file's `counted = "auto"` chooses as `run --counted` does, and
/// each benchmark's session is stored with the choice and its reason.
#[test]
fn a_counted_suite_stores_the_choice_with_each_session() {
    if !valgrind() {
        return;
    }
    let hardware = hardware_counter();
    let dir = tempdir();
    let db = dir.path().join("store.db");
    let a = dir.path().join("a.bin");
    data(&a, MIB / 16);
    let suite = dir.path().join("counted.toml");
    std::fs::write(
        &suite,
        format!(
            "[defaults]\ncounted = \"auto\"\nruns = 2\n\n\
             [[benchmark]]\nname = \"one\"\ncommand = \"{}\"\n\n\
             [[benchmark]]\nname = \"two\"\ncommand = \"{}\"\n",
            sha(&a),
            sha(&a)
        ),
    )
    .unwrap();
    let s = suite.to_str().unwrap();
    ok(with_store(
        &db,
        &["run", "--suite", s, "--no-host-lock", "--style", "none"],
    ));
    let mut store =
        cmdscope::store::Store::open(&cmdscope::store::Location::Sqlite(db.clone())).unwrap();
    let sessions = store.sessions(&cmdscope::store::Filter::default()).unwrap();
    assert_eq!(sessions.len(), 2, "one session per benchmark");
    for s in &sessions {
        let settings = s.settings.as_ref().expect("stored settings");
        let counted = settings.counted.as_ref().expect("stored as counted");
        assert_eq!(counted.asked, cmdscope::run::counted::Ask::Auto);
        if !hardware {
            assert_eq!(counted.by, cmdscope::run::counted::By::Cachegrind);
            assert!(
                counted
                    .reason
                    .starts_with("no usable hardware instruction counter"),
                "{counted:?}"
            );
        }
        assert_eq!(
            settings.simulate.is_some(),
            counted.by == cmdscope::run::counted::By::Cachegrind
        );
    }
}

/// `--counted=hardware` where the kernel gives no instruction counter:
/// one line saying why, exit 2, before any run.
#[test]
fn counted_hardware_without_a_counter_exits_2_in_one_line() {
    if hardware_counter() {
        eprintln!("not run: this machine has a hardware instruction counter");
        return;
    }
    let dir = tempdir();
    let marker = dir.path().join("ran");
    let cmd = format!("touch {}", marker.display());
    let o = cmdscope(&["run", "--counted=hardware", "--runs", "2", &cmd]);
    one_line_error(
        &o,
        "--counted=hardware: no usable hardware instruction counter: not available here",
    );
    assert!(!marker.exists(), "nothing ran");
    let o = cmdscope(&["run", "--counted=perf", "--runs", "2", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = cmdscope(&["run", "--counted", "--counters", "--runs", "2", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// A suite of two benchmarks run simulated (`simulate = true` in its
/// `[defaults]`, 2 runs each) on `small` and `large`, labelled `v`, into
/// the store `db` as suite run `run`.
fn simulated_suite(dir: &Path, db: &Path, run: &str, v: &str, small: &Path, large: &Path) {
    let suite = dir.join(format!("{run}.toml"));
    std::fs::write(
        &suite,
        format!(
            "[defaults]\nsimulate = true\nruns = 2\nlabels = {{ v = \"{v}\" }}\n\n\
             [[benchmark]]\nname = \"small\"\ncommand = \"{}\"\nnames = [\"small\"]\n\n\
             [[benchmark]]\nname = \"large\"\ncommand = \"{}\"\nnames = [\"large\"]\n",
            sha(small),
            sha(large)
        ),
    )
    .unwrap();
    let s = suite.to_str().unwrap();
    ok(with_store(
        db,
        &[
            "run",
            "--suite",
            s,
            "--run-id",
            run,
            "--no-host-lock",
            "--style",
            "none",
        ],
    ));
}

/// A suite whose file says `simulate = true` stores its sessions as
/// simulated, with the cache model, and their counts repeat run to run;
/// `check --run` gates them on estimated cycles as it gates `run
/// --simulate`'s: +2 % of input fails a 1 % limit, the same files pass.
#[test]
fn a_simulated_suite_is_stored_simulated_and_gated_on_its_counts() {
    if !valgrind() {
        return;
    }
    let dir = tempdir();
    let db = dir.path().join("store.db");
    let file = |name: &str, bytes: usize| {
        let p = dir.path().join(name);
        data(&p, bytes);
        p
    };
    let (small, large) = (file("s.bin", MIB / 4), file("l.bin", MIB));
    let (small2, large2) = (
        file("s2.bin", MIB / 4 + MIB / 200),
        file("l2.bin", MIB + MIB / 50),
    );
    simulated_suite(dir.path(), &db, "base", "base", &small, &large);
    simulated_suite(dir.path(), &db, "same", "same", &small, &large);
    let mut store =
        cmdscope::store::Store::open(&cmdscope::store::Location::Sqlite(db.clone())).unwrap();
    let sessions = store.sessions(&cmdscope::store::Filter::default()).unwrap();
    assert_eq!(sessions.len(), 4, "two benchmarks, two suite runs");
    for s in &sessions {
        let settings = s.settings.as_ref().expect("stored settings");
        let sim = settings.simulate.as_ref().expect("stored as simulated");
        assert_eq!(sim.tool, "cachegrind");
        assert_eq!(sim.ll, "8388608,16,64");
        assert!(sim.version.starts_with("valgrind-"), "{sim:?}");
        assert_eq!(s.cells.len(), 1);
        let runs = store.runs(s.cells[0].id).unwrap();
        let cycles: Vec<f64> = runs
            .iter()
            .map(|r| {
                r.get(cmdscope::metrics::Metric::SimEstimatedCycles)
                    .unwrap()
            })
            .collect();
        assert_eq!(cycles.len(), 2, "{cycles:?}");
        assert_eq!(cycles[0], cycles[1], "identical counts run to run");
    }
    drop(store);
    let gate = |run: &str| gate_on_cycles(&db, &["--run", run]);
    let same = gate("same");
    let text = String::from_utf8_lossy(&same.stdout).into_owned();
    assert_eq!(same.status.code(), Some(0), "{text}{}", stderr(&same));
    assert!(text.contains("identical counts"), "{text}");
    simulated_suite(dir.path(), &db, "more", "more", &small2, &large2);
    let more = gate("more");
    let text = String::from_utf8_lossy(&more.stdout).into_owned();
    assert_eq!(more.status.code(), Some(1), "{text}{}", stderr(&more));
    // `history` lists the suite's sessions as simulated, by their counts.
    let history = String::from_utf8_lossy(&ok(with_store(&db, &["history"])).stdout).into_owned();
    assert_eq!(
        history.matches("[simulated: cachegrind]").count(),
        6,
        "{history}"
    );
}

#[test]
fn a_suite_refuses_what_simulate_refuses_when_it_is_read() {
    let dir = tempdir();
    let suite = dir.path().join("s.toml");
    let write = |extra: &str| {
        std::fs::write(
            &suite,
            format!("[defaults]\n{extra}\n[[benchmark]]\nname = \"t\"\ncommand = \"true\"\n"),
        )
        .unwrap();
    };
    write("LL = \"8388608,16,64\"");
    let list = || cmdscope(&["suite", "list", suite.to_str().unwrap()]);
    one_line_error(
        &list(),
        "LL is the simulated cache's geometry: it needs simulate = true",
    );
    write("simulate = true\nLL = \"8M\"");
    one_line_error(&list(), "--LL '8M'");
    write("simulate = true\nruns = 1");
    one_line_error(&list(), "simulate needs runs = 2 or more");
    write("simulate = true\nruns = 2\nI1 = \"16384,4,64\"");
    assert!(list().status.success(), "{}", stderr(&list()));
    write("counted = \"perf\"\nruns = 2");
    one_line_error(
        &list(),
        "counted = 'perf': expected \"auto\", \"hardware\" or \"simulator\"",
    );
    write("counted = \"auto\"\nruns = 1");
    one_line_error(&list(), "counted needs runs = 2 or more");
    write("counted = \"auto\"\nsimulate = true\nruns = 2");
    one_line_error(&list(), "simulate and counted cannot both be given");
    write("counted = \"auto\"\nruns = 2\nLL = \"1048576,8,64\"");
    assert!(list().status.success(), "{}", stderr(&list()));
}

/// cmdscope with `args`, as `exported` runs it, but with no
/// PYTHONHASHSEED in the environment it hands on (the test's own may
/// have one).
fn exported_unseeded(args: &[&str]) -> serde_json::Value {
    let dir = tempdir();
    let out = dir.path().join("export.json");
    let mut all = args.to_vec();
    all.splice(1..1, ["--export-json", out.to_str().unwrap()]);
    let o = Command::new(bin())
        .args(&all)
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_NO_STORE", "1")
        .env_remove("PYTHONHASHSEED")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    read_json(&out)
}

fn warnings_of(doc: &serde_json::Value, result: usize) -> String {
    doc["results"][result]["warnings"].to_string()
}

/// `python3 -c 'import json'` with the interpreter `python3` runs (its
/// `sys.executable`: a shim such as pyenv's is a shell script whose own
/// processes would quadruple the simulated work), or None, said loudly.
fn python() -> Option<String> {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output();
    match o {
        Ok(o) if o.status.success() => Some(format!(
            "{} -c 'import json'",
            String::from_utf8_lossy(&o.stdout).trim()
        )),
        _ => {
            eprintln!("SKIPPED: no python3 on PATH");
            None
        }
    }
}

/// `python3 -c 'import json'` (an interpreter nobody here wrote), with
/// no hash seed: its counts differ from run to run, the warning names the
/// hash seed and the fix, and the same command under two names is not
/// called different (with 2 runs a side, varying counts are too few for
/// the rank test: the A/A rate is measured by
/// `unseeded_python_a_a_over_twenty_sessions`). With the seed fixed, the
/// hash seed is not named.
#[test]
fn unseeded_python_is_named_and_keeps_the_a_a_promise() {
    if !valgrind() {
        return;
    }
    let Some(py) = python() else { return };
    let py = py.as_str();
    let doc = exported_unseeded(&same_twice("2", py));
    for i in 0..2 {
        let w = warnings_of(&doc, i);
        assert!(w.contains("differ between runs"), "{w}");
        assert!(w.contains("no PYTHONHASHSEED"), "{w}");
        assert!(w.contains("--env PYTHONHASHSEED=0"), "{w}");
    }
    for c in doc["comparisons"].as_array().unwrap() {
        assert!(
            c["verdict"] == "no difference" || c["verdict"] == "inconclusive",
            "{c}"
        );
    }
    let doc = exported_unseeded(&[
        "run",
        "--simulate",
        "--runs",
        "2",
        "--env",
        "PYTHONHASHSEED=0",
        py,
    ]);
    let w = warnings_of(&doc, 0);
    assert!(!w.contains("PYTHONHASHSEED"), "{w}");
}

/// The A/A promise over many sessions of the unseeded interpreter:
/// ignored because 20 simulated sessions of 2 × 6 runs take minutes.
#[test]
#[ignore = "20 simulated sessions of python3 take several minutes"]
fn unseeded_python_a_a_over_twenty_sessions() {
    if !valgrind() {
        return;
    }
    let Some(py) = python() else { return };
    let py = py.as_str();
    let mut different = 0;
    for _ in 0..20 {
        let doc = exported_unseeded(&same_twice("6", py));
        let c = comparison(&doc, "sim_estimated_cycles");
        if c["verdict"] == "slower" || c["verdict"] == "faster" {
            different += 1;
        }
        eprintln!("{}", c["verdict"]);
    }
    assert!(
        different <= 1,
        "{different} of 20 A/A sessions called different"
    );
}
