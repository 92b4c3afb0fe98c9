//! The renderings of `compare`, `check`, `changes`, `history` and
//! `report`'s replay of sessions stored without settings, byte for byte: the real binary runs on fixed inputs and its stdout must equal the
//! file of the same name under `tests/data/golden/`. A change of layout,
//! spacing, escaping or number formatting in any of these outputs fails
//! here, so a refactoring of the renderers is proven not to change them.
//!
//! The inputs are fixed, so the outputs are too, without rewriting them:
//! `compare` reads files of `tests/data` and files written here from fixed
//! numbers (a seeded generator); the store is filled by `cmdscope import`,
//! after which each session's start time, machine and command line are set
//! in the SQLite file to fixed values (an import records the time and
//! machine it ran on, and the command line with its paths).
//!
//! The JSON and CSV files hold numbers to the last digit of an `f64`,
//! computed through the platform's `ln` and `exp`: they were made on
//! x86_64 Linux (glibc), and a platform whose maths library rounds
//! differently may differ there in a last digit, which is not a change of
//! the renderers.
//!
//! After a deliberate change of an output, regenerate the files and review
//! their diff:
//!
//! ```text
//! GOLDEN_UPDATE=1 cargo test --test golden
//! ```

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn golden_dir() -> PathBuf {
    Path::new(DATA).join("golden")
}

/// Compares `o`'s stdout with the golden file `name` (or writes it under
/// `GOLDEN_UPDATE`), and its exit code with `code`. Returns the mismatch,
/// so that one test reports every file that differs.
fn check_golden(name: &str, o: &Output, code: i32) -> Option<String> {
    if o.status.code() != Some(code) {
        return Some(format!(
            "{name}: exit code {:?}, expected {code}; stderr: {}",
            o.status.code(),
            stderr(o)
        ));
    }
    let path = golden_dir().join(name);
    if std::env::var_os("GOLDEN_UPDATE").is_some() {
        std::fs::create_dir_all(golden_dir()).expect("create the golden directory");
        std::fs::write(&path, &o.stdout).expect("write a golden file");
        return None;
    }
    let want = match std::fs::read(&path) {
        Ok(w) => w,
        Err(e) => {
            return Some(format!(
                "{name}: cannot read {} ({e}); GOLDEN_UPDATE=1 writes it",
                path.display()
            ))
        }
    };
    if want == o.stdout {
        return None;
    }
    let (got, want) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&want),
    );
    let (gl, wl): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let line = (0..gl.len().max(wl.len()))
        .find(|&i| gl.get(i) != wl.get(i))
        .unwrap_or(0);
    Some(format!(
        "{name}: differs from the golden file at line {}:\n  want: {:?}\n  got:  {:?}\n  ({} bytes wanted, {} got)",
        line + 1,
        wl.get(line).copied().unwrap_or("<end>"),
        gl.get(line).copied().unwrap_or("<end>"),
        want.len(),
        got.len()
    ))
}

fn assert_all(failures: Vec<Option<String>>) {
    let failures: Vec<String> = failures.into_iter().flatten().collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A small seeded generator (SplitMix64), so the written files hold the
/// same numbers on every run and every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `n` values within ±1 % of `level`, rounded to the microsecond's
    /// tenth so that the file's decimal text is short and exact.
    fn around(&mut self, level: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let v = level * (1.0 + 0.02 * (self.next() - 0.5));
                (v * 1e7).round() / 1e7
            })
            .collect()
    }
}

/// One benchmark of a results file: command, parameters, times.
type Bench<'a> = (&'a str, &'a [(&'a str, &'a str)], Vec<f64>);

/// A hyperfine results file.
fn hyperfine(path: &Path, results: &[Bench]) {
    let results: Vec<serde_json::Value> = results
        .iter()
        .map(|(command, params, times)| {
            let params: serde_json::Map<String, serde_json::Value> = params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), serde_json::Value::from(*v)))
                .collect();
            serde_json::json!({ "command": command, "parameters": params, "times": times })
        })
        .collect();
    let doc = serde_json::json!({ "results": results });
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).expect("write results");
}

/// `go test -bench` text: (name, ns/op values, extra columns after ns/op).
fn go_bench(path: &Path, benches: &[(&str, Vec<f64>, &str)]) {
    let mut text = String::from("goos: linux\ngoarch: amd64\npkg: example.com/parser\n");
    for (name, ns, extra) in benches {
        for v in ns {
            text.push_str(&format!("{name}-8   \t  100000\t  {v:.0} ns/op{extra}\n"));
        }
    }
    text.push_str("PASS\nok  \texample.com/parser\t1.000s\n");
    std::fs::write(path, text).expect("write go results");
}

fn compare_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .arg("compare")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_NO_STORE", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .output()
        .expect("run cmdscope compare")
}

/// The compared files, written into `dir` next to copies of tests/data's,
/// so that every file is named without a directory (the names are the
/// tables' column titles).
fn compare_inputs(dir: &Path) {
    for f in [
        "hyperfine_v1.json",
        "hyperfine_v2.json",
        "cmdscope_v2.json",
        "go_bench.txt",
    ] {
        std::fs::copy(Path::new(DATA).join(f), dir.join(f)).expect("copy test data");
    }
    let mut rng = Rng(7);
    // hyperfine_v1.json's two benchmarks: the first 12 % slower, the
    // second as fast.
    hyperfine(
        &dir.join("hyperfine_v1_new.json"),
        &[
            (
                "sleep 0.1",
                &[("size", "small"), ("delay", "0.1")],
                rng.around(0.1148, 5),
            ),
            (
                "sleep 0.2",
                &[("size", "large"), ("delay", "0.2")],
                rng.around(0.2025, 5),
            ),
        ],
    );
    // go_bench.txt's benchmarks: size=10 10 % slower with more memory,
    // size=1000 alike, Encode missing from the third file.
    let size10 = " \t     640 B/op\t       4 allocs/op";
    let size1000 = " \t   49152 B/op\t      12 allocs/op";
    go_bench(
        &dir.join("go_new.txt"),
        &[
            ("BenchmarkParse/size=10", rng.around(1370.0, 8), size10),
            (
                "BenchmarkParse/size=1000",
                rng.around(123000.0, 8),
                size1000,
            ),
            ("BenchmarkEncode", rng.around(2400.0, 8), ""),
        ],
    );
    go_bench(
        &dir.join("go_third.txt"),
        &[
            ("BenchmarkParse/size=10", rng.around(1240.0, 8), size10),
            ("BenchmarkParse/size=1000", rng.around(90000.0, 8), size1000),
        ],
    );
}

#[test]
fn compare_renders_as_before() {
    let dir = tempdir();
    let d = dir.path();
    compare_inputs(d);
    let mut failures = Vec::new();
    let cases: &[(&str, &[&str], i32)] = &[
        (
            "hyperfine",
            &["hyperfine_v1.json", "hyperfine_v1_new.json"],
            0,
        ),
        (
            "hyperfine_gate",
            &[
                "--fail-if-slower",
                "5",
                "hyperfine_v1.json",
                "hyperfine_v1_new.json",
            ],
            1,
        ),
        (
            "hyperfine_gate_passed",
            &[
                "--fail-if-slower",
                "50",
                "hyperfine_v1.json",
                "hyperfine_v1_new.json",
            ],
            0,
        ),
        ("go", &["go_bench.txt", "go_new.txt", "go_third.txt"], 0),
        ("single", &["cmdscope_v2.json"], 0),
        ("disjoint", &["hyperfine_v1.json", "hyperfine_v2.json"], 0),
    ];
    for (name, args, code) in cases {
        for (format, ext) in [
            ("text", "txt"),
            ("markdown", "md"),
            ("csv", "csv"),
            ("json", "json"),
        ] {
            let mut all = vec!["--format", format];
            all.extend_from_slice(args);
            let o = compare_in(d, &all);
            failures.push(check_golden(&format!("compare_{name}.{ext}"), &o, *code));
        }
    }
    assert_all(failures);
}

/// The fixed values each imported session gets: session `id` started on
/// 2025-03-01 plus `id` hours, on one machine.
const PIN_SESSIONS: &str = "UPDATE sessions SET \
     started = printf('2025-03-%02dT%02d:00:00Z', 1 + id / 24, id % 24), \
     started_unix = 1740787200 + id * 3600, \
     finished_unix = 1740787200 + id * 3600 + 60, \
     command_line = 'cmdscope import results', \
     tool_version = '0.1.0', \
     fingerprint = '5eed5eed5eed5eed', \
     hostname = 'golden-host', \
     cpu_model = 'Golden CPU', \
     cores = 2, \
     memory_bytes = 4294967296, \
     kernel = '6.1.0', \
     governor = NULL, \
     load_1m = 0, load_5m = 0, load_15m = 0";

/// A store of 17 sessions: tests/data's five files (sessions 1 to 5,
/// labelled `source=data`), then twelve generated sessions labelled
/// `commit=c01`…`c12`, the first eleven `branch=main`, the last
/// `branch=feature`. In those, `parse | wc -l` steps from 100 ms to 125 ms
/// at c07, `render` is 30 % slower in c12 only, `upload` is steady, and
/// ``cache `warm` \d`` (a name Markdown must escape) is 20 % slower from
/// c04 to c06 only.
fn store(dir: &Path) -> PathBuf {
    let db = dir.join("golden.db");
    let import = |file: &Path, labels: &[String]| {
        let mut args = vec!["import".to_owned(), file.to_string_lossy().into_owned()];
        for l in labels {
            args.push("--label".into());
            args.push(l.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = with_store(&db, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    for f in [
        "hyperfine_v1.json",
        "hyperfine_v2.json",
        "cmdscope_v2.json",
        "go_bench.txt",
        "go_two_pkgs.txt",
    ] {
        import(&Path::new(DATA).join(f), &["source=data".into()]);
    }
    let mut rng = Rng(11);
    for i in 1..=12 {
        let file = dir.join(format!("c{i:02}.json"));
        let parse = if i < 7 { 0.100 } else { 0.125 };
        let render = if i == 12 { 0.065 } else { 0.050 };
        let cache = if (4..=6).contains(&i) { 0.096 } else { 0.080 };
        hyperfine(
            &file,
            &[
                ("parse | wc -l", &[], rng.around(parse, 10)),
                ("render", &[], rng.around(render, 10)),
                ("upload", &[("size", "1M")], rng.around(0.200, 10)),
                ("cache `warm` \\d", &[], rng.around(cache, 10)),
            ],
        );
        let branch = if i == 12 { "feature" } else { "main" };
        import(
            &file,
            &[format!("commit=c{i:02}"), format!("branch={branch}")],
        );
    }
    let conn = rusqlite::Connection::open(&db).expect("open the store");
    conn.execute(PIN_SESSIONS, []).expect("pin the sessions");
    db
}

#[test]
fn store_readers_render_as_before() {
    let dir = tempdir();
    let db = store(dir.path());
    let mut failures = Vec::new();
    let check = |session: &'static str, format: &'static str, pct: &'static str| {
        vec![
            "check",
            "--baseline",
            "branch=main",
            "--session",
            session,
            "--format",
            format,
            "--fail-if-slower",
            pct,
        ]
    };
    let history = |session: &'static str, format: &'static str, pct: &'static str| {
        vec![
            "check",
            "--against",
            "history",
            "--session",
            session,
            "--format",
            format,
            "--fail-if-slower",
            pct,
        ]
    };
    // Session 17 (c12) has `render` 30 % slower; session 16 (c11) nothing.
    let cases: Vec<(&str, Vec<&str>, i32)> = vec![
        ("history.txt", vec!["history"], 0),
        (
            "history_filter.txt",
            vec!["history", "render", "--limit", "4"],
            0,
        ),
        (
            "check.md",
            vec!["check", "--baseline", "branch=main", "--session", "17"],
            1,
        ),
        ("check_gate.md", check("17", "markdown", "5"), 1),
        ("check_gate.txt", check("17", "text", "5"), 1),
        ("check_pass.md", check("16", "markdown", "5"), 0),
        ("check_pass.txt", check("16", "text", "5"), 0),
        (
            "check_history.md",
            vec!["check", "--against", "history", "--session", "17"],
            1,
        ),
        ("check_history_gate.md", history("17", "markdown", "5"), 1),
        ("check_history_gate.txt", history("17", "text", "5"), 1),
        ("check_history_pass.md", history("16", "markdown", "5"), 0),
        ("check_history_pass.txt", history("16", "text", "5"), 0),
        // Both checks write a gate of 2.345 % alike.
        ("check_pct.txt", check("17", "text", "2.345"), 1),
        ("check_history_pct.txt", history("17", "text", "2.345"), 1),
        ("changes.txt", vec!["changes"], 0),
        ("changes.md", vec!["changes", "--format", "markdown"], 0),
        ("changes.json", vec!["changes", "--format", "json"], 0),
        (
            "changes_commit.txt",
            vec!["changes", "--order-by", "commit", "--label", "branch=main"],
            0,
        ),
        (
            "changes_none.md",
            vec!["changes", "upload", "--format", "markdown"],
            0,
        ),
    ];
    for (name, args, code) in &cases {
        let o = with_store(&db, args);
        failures.push(check_golden(name, &o, *code));
    }
    assert_all(failures);
}

/// A benchmark name longer than any column's width limit.
const LONG: &str =
    "python3 -c 'import json, sys; json.load(open(sys.argv[1]))' data/a-large-file.json";

/// `report`'s terminal report and JSON export of sessions stored without
/// settings (imports of a hyperfine file and of a cmdscope export, which
/// no live run can make): replayed through `run`'s analysis with the
/// settings such a session reads back.
#[test]
fn reports_of_sessions_without_settings_render_as_before() {
    let dir = tempdir();
    let db = store(dir.path());
    let mut failures = Vec::new();
    for (name, session) in [("report_hyperfine_v2", "2"), ("report_cmdscope_v2", "3")] {
        let terminal = ["report", "--session", session, "--terminal"];
        let o = with_store(&db, &[&terminal[..], &["--style", "basic"]].concat());
        failures.push(check_golden(&format!("{name}.txt"), &o, 0));
        let json = ["report", "--session", session, "--export-json", "-"];
        failures.push(check_golden(
            &format!("{name}.json"),
            &with_store(&db, &json),
            0,
        ));
    }
    assert_all(failures);
}

/// A second store, for what the first does not show: eight sessions
/// (`branch=main`, the last `branch=feature`) of three benchmarks, one
/// with a long name, all 20 % slower from the fifth session on (a shift of
/// the machine, to `changes`), and a benchmark only in the seventh and one
/// only in the eighth (to `check`).
fn edge_store(dir: &Path) -> PathBuf {
    let db = dir.join("edges.db");
    let mut rng = Rng(23);
    for i in 1..=8 {
        let file = dir.join(format!("e{i}.json"));
        let f = if i < 5 { 1.0 } else { 1.2 };
        let mut benches: Vec<Bench> = vec![
            (LONG, &[], rng.around(0.300 * f, 10)),
            ("b", &[], rng.around(0.040 * f, 10)),
            ("c", &[], rng.around(0.070 * f, 10)),
        ];
        match i {
            7 => benches.push(("old-only", &[], rng.around(0.010, 10))),
            8 => benches.push(("new-only", &[], rng.around(0.010, 10))),
            _ => {}
        }
        hyperfine(&file, &benches);
        let branch = if i == 8 { "feature" } else { "main" };
        let o = with_store(
            &db,
            &[
                "import",
                file.to_str().unwrap(),
                "--label",
                &format!("branch={branch}"),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let conn = rusqlite::Connection::open(&db).expect("open the store");
    conn.execute(PIN_SESSIONS, []).expect("pin the sessions");
    db
}

#[test]
fn long_names_one_sided_benchmarks_and_machine_shifts_render_as_before() {
    let dir = tempdir();
    let db = edge_store(dir.path());
    let check = |format: &'static str| {
        vec![
            "check",
            "--baseline",
            "branch=main",
            "--session",
            "8",
            "--fail-if-slower",
            "5",
            "--format",
            format,
        ]
    };
    let cases: Vec<(&str, Vec<&str>, i32)> = vec![
        ("edges_history.txt", vec!["history"], 0),
        // `old-only` of the baseline is not in the checked session: the
        // gate fails naming it, unless allowed to miss it.
        ("edges_check.txt", check("text"), 1),
        ("edges_check.md", check("markdown"), 1),
        (
            "edges_check_allowed.txt",
            [check("text"), vec!["--allow-missing", "old-only"]].concat(),
            0,
        ),
        ("edges_changes.txt", vec!["changes"], 0),
        (
            "edges_changes.md",
            vec!["changes", "--format", "markdown"],
            0,
        ),
        ("edges_changes.json", vec!["changes", "--format", "json"], 0),
    ];
    let mut failures = Vec::new();
    for (name, args, code) in &cases {
        let o = with_store(&db, args);
        failures.push(check_golden(name, &o, *code));
    }
    assert_all(failures);
}
