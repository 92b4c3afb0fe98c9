//! Property tests ("fuzzing" on stable Rust) for every parser of user data:
//! results files (cmdscope JSON, hyperfine JSON 1 and 2, `go test -bench`
//! text), word splitting, parameter scans and lists, env files, suite files.
//!
//! Inputs come from seeded generators: random bytes, well-formed documents
//! with random contents (checked to round-trip), and well-formed documents
//! mutated at random (flipped bytes, cut and duplicated ranges, hostile
//! tokens spliced in). The properties: no panic, errors are one line,
//! accepted data is what was written (finite, non-negative, killed runs
//! left out), scans stay bounded and distinct.
//!
//! `cargo test` runs a short, fixed-seed budget. `scripts/fuzz MINUTES`
//! runs the same properties longer with a fresh seed through
//! CMDSCOPE_FUZZ_CASES, CMDSCOPE_FUZZ_SECONDS and CMDSCOPE_FUZZ_SEED; a
//! failure prints the seed and the input that failed.

use std::time::{Duration, Instant};

use cmdscope::import::parse_dataset;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Budget {
    cases: u64,
    deadline: Option<Instant>,
    seed: u64,
}

impl Budget {
    fn from_env(default_cases: u64) -> Budget {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        Budget {
            cases: var("CMDSCOPE_FUZZ_CASES").unwrap_or(default_cases),
            deadline: var("CMDSCOPE_FUZZ_SECONDS").map(|s| Instant::now() + Duration::from_secs(s)),
            seed: var("CMDSCOPE_FUZZ_SEED").unwrap_or(20_261_122),
        }
    }

    /// Runs `case` with a generator per case until the budget is spent.
    fn run(&self, name: &str, mut case: impl FnMut(&mut ChaCha8Rng, u64)) {
        let start = Instant::now();
        let mut n = 0;
        while n < self.cases && self.deadline.is_none_or(|d| Instant::now() < d) {
            // One generator per case: a failure names the case to replay.
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ (n.wrapping_mul(0x9e37_79b9)));
            case(&mut rng, n);
            n += 1;
        }
        eprintln!(
            "fuzz {name}: {n} cases in {:.1} s (seed {})",
            start.elapsed().as_secs_f64(),
            self.seed
        );
    }
}

const TOKENS: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1e308",
    "-1e308",
    "1e-400",
    "NaN",
    "Infinity",
    "18446744073709551616",
    "\"\"",
    "[]",
    "{}",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "\\u0000",
    "\\ud800",
    "\u{1b}[2J",
    "\u{202e}",
    "\"timed_out\": true",
    "\"outlier_removed\": true",
    "\"unit\": \"GiB\"",
    "\"unit\": \"ns\"",
    "\"unit\": 3",
    "\"value\": 1e308",
    "\"value\": -1",
    "\"times\": [",
    "\"measurements\": [",
    "\"results\": [",
    "\"schema_version\": 99",
    "\"command\": null",
    "\"parameters\": {",
    "Benchmark",
    "BenchmarkX-8",
    " 100 ",
    " ns/op",
    " B/op",
    " MB/s",
    " allocs/op",
    "pkg: x",
    "goos: linux",
    "Unit ns/op better=higher",
    "\n",
    "\r\n",
    "\t",
    "\u{feff}",
];

fn random_text(rng: &mut ChaCha8Rng, max: usize) -> String {
    let len = rng.random_range(0..max);
    let mut s = String::new();
    while s.len() < len {
        match rng.random_range(0..4) {
            0 => s.push_str(TOKENS[rng.random_range(0..TOKENS.len())]),
            1 => s.push(char::from(rng.random_range(0x20u8..0x7f))),
            2 => s.push(char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('?')),
            _ => s.push_str(&rng.random_range(-1e6..1e6f64).to_string()),
        }
    }
    s
}

/// `text` changed in a few random places.
fn mutate(rng: &mut ChaCha8Rng, text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..6) {
        let at = rng.random_range(0..=b.len());
        match rng.random_range(0..5) {
            0 if !b.is_empty() => {
                let i = rng.random_range(0..b.len());
                b[i] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let end = rng.random_range(at..=b.len());
                b.drain(at..end);
            }
            2 => {
                let end = rng.random_range(at..=b.len().min(at + 64));
                let piece = b[at..end].to_vec();
                b.splice(at..at, piece);
            }
            _ => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                b.splice(at..at, t.bytes());
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn value(rng: &mut ChaCha8Rng) -> f64 {
    match rng.random_range(0..4) {
        0 => rng.random_range(0.0..1e-3),
        1 => rng.random_range(0.0..10.0),
        2 => rng.random_range(0.0..1e12),
        _ => 0.0,
    }
}

/// Parses `text`; whatever it returns must be well-formed.
fn check_parse(text: &str, n: u64) {
    match parse_dataset(text, "fuzz") {
        Ok(d) => {
            for b in &d.benchmarks {
                for s in &b.series {
                    for v in &s.values {
                        assert!(v.is_finite(), "case {n}: non-finite value from {text:?}");
                    }
                }
            }
        }
        Err(e) => {
            let m = e.to_string();
            assert!(
                !m.contains('\n'),
                "case {n}: multi-line error {m:?} for {text:?}"
            );
            if let Some(line) = m
                .strip_prefix("line ")
                .and_then(|r| r.split(':').next())
                .and_then(|l| l.parse::<usize>().ok())
            {
                assert!(
                    line >= 1 && line <= text.lines().count().max(1),
                    "case {n}: {m:?} names a line the text does not have"
                );
            }
        }
    }
}

fn hyperfine1(rng: &mut ChaCha8Rng) -> (String, Vec<Vec<f64>>) {
    let k = rng.random_range(1..4);
    let mut all = Vec::new();
    let results: Vec<serde_json::Value> = (0..k)
        .map(|i| {
            let times: Vec<f64> = (0..rng.random_range(1..20)).map(|_| value(rng)).collect();
            all.push(times.clone());
            serde_json::json!({"command": format!("cmd {i}"), "mean": 0.1, "times": times})
        })
        .collect();
    (serde_json::json!({ "results": results }).to_string(), all)
}

/// cmdscope/hyperfine 2 measurements, some killed; returns the completed
/// wall times per result.
fn measured(rng: &mut ChaCha8Rng) -> (String, Vec<Vec<f64>>) {
    let k = rng.random_range(1..4);
    let mut kept = Vec::new();
    let results: Vec<serde_json::Value> = (0..k)
        .map(|i| {
            let mut completed = Vec::new();
            let runs: Vec<serde_json::Value> = (0..rng.random_range(1..20))
                .map(|j| {
                    let v = value(rng);
                    let killed = rng.random_bool(0.2);
                    if !killed {
                        completed.push(v);
                    }
                    let (shown, unit) = match rng.random_range(0..3) {
                        0 => (v, "s"),
                        1 => (v * 1e3, "ms"),
                        _ => (v * 1e9, "ns"),
                    };
                    serde_json::json!({
                        "run_index": j, "exit_code": 0, "timed_out": killed,
                        "time_wall_clock": {"value": shown, "unit": unit},
                    })
                })
                .collect();
            kept.push(completed);
            serde_json::json!({"command": format!("c{i}"), "name": null, "measurements": runs})
        })
        .collect();
    (
        serde_json::json!({"schema_version": 2, "tool": "cmdscope", "results": results})
            .to_string(),
        kept,
    )
}

fn go_text(rng: &mut ChaCha8Rng) -> (String, Vec<f64>) {
    let mut text = String::from("goos: linux\ngoarch: amd64\npkg: example.com/x\n");
    let mut ns = Vec::new();
    for _ in 0..rng.random_range(1..15) {
        let v = rng.random_range(0.1..1e9f64);
        ns.push(v);
        text.push_str(&format!(
            "BenchmarkParse-8   \t{}\t{v} ns/op\t{} B/op\n",
            rng.random_range(1..1_000_000u64),
            rng.random_range(0..10_000u64)
        ));
    }
    text.push_str("PASS\nok  \texample.com/x\t1.2s\n");
    (text, ns)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn results_parsers_survive_anything() {
    Budget::from_env(3000).run("results-random", |rng, n| {
        let text = random_text(rng, 400);
        check_parse(&text, n);
    });
    Budget::from_env(3000).run("results-mutated", |rng, n| {
        let seed = match rng.random_range(0..3) {
            0 => hyperfine1(rng).0,
            1 => measured(rng).0,
            _ => go_text(rng).0,
        };
        // Pretty-printed JSON: errors then name lines, found by a walk
        // over the text that must survive whatever the mutation left.
        let seed = match serde_json::from_str::<serde_json::Value>(&seed) {
            Ok(v) if rng.random_bool(0.5) => serde_json::to_string_pretty(&v).unwrap(),
            _ => seed,
        };
        check_parse(&mutate(rng, &seed), n);
    });
}

#[test]
fn results_round_trip() {
    Budget::from_env(500).run("hyperfine1-roundtrip", |rng, n| {
        let (text, expected) = hyperfine1(rng);
        let d = parse_dataset(&text, "x").unwrap_or_else(|e| panic!("case {n}: {e}: {text}"));
        assert_eq!(d.format, "hyperfine-1");
        for (b, times) in d.benchmarks.iter().zip(&expected) {
            let got = &b.series("time_wall_clock").unwrap().values;
            assert_eq!(got.len(), times.len(), "case {n}");
            assert!(
                got.iter().zip(times).all(|(a, b)| close(*a, *b)),
                "case {n}"
            );
        }
    });
    Budget::from_env(500).run("measurements-roundtrip", |rng, n| {
        let (text, expected) = measured(rng);
        let d = parse_dataset(&text, "x").unwrap_or_else(|e| panic!("case {n}: {e}: {text}"));
        for (b, completed) in d.benchmarks.iter().zip(&expected) {
            let got = b
                .series("time_wall_clock")
                .map(|s| s.values.clone())
                .unwrap_or_default();
            assert_eq!(
                got.len(),
                completed.len(),
                "case {n}: killed runs read as samples"
            );
            assert!(
                got.iter().zip(completed).all(|(a, b)| close(*a, *b)),
                "case {n}: {got:?} vs {completed:?}"
            );
        }
    });
    Budget::from_env(500).run("go-roundtrip", |rng, n| {
        let (text, ns) = go_text(rng);
        let d = parse_dataset(&text, "x").unwrap_or_else(|e| panic!("case {n}: {e}: {text}"));
        let got = &d.benchmarks[0].series("sec/op").unwrap().values;
        assert_eq!(got.len(), ns.len(), "case {n}");
        assert!(
            got.iter().zip(&ns).all(|(s, ns)| close(*s, ns * 1e-9)),
            "case {n}"
        );
    });
}

#[test]
fn word_splitting_round_trips_and_never_panics() {
    Budget::from_env(3000).run("words", |rng, n| {
        let raw = random_text(rng, 120);
        let _ = cmdscope::run::plan::split_words(raw.as_bytes());
        // Words quoted as a shell would read them come back unchanged.
        let words: Vec<String> = (0..rng.random_range(1..6))
            .map(|_| random_text(rng, 12).replace('\0', ""))
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            return;
        }
        let line = shlex::try_join(words.iter().map(String::as_str)).unwrap();
        let back = cmdscope::run::plan::split_words(line.as_bytes())
            .unwrap_or_else(|e| panic!("case {n}: {e}: {line:?}"));
        let back: Vec<String> = back
            .into_iter()
            .map(|w| String::from_utf8(w).unwrap())
            .collect();
        assert_eq!(back, words, "case {n}: {line:?}");
    });
}

fn number_text(rng: &mut ChaCha8Rng) -> String {
    match rng.random_range(0..8) {
        0 => rng.random_range(-100..100i64).to_string(),
        1 => format!("{}", rng.random_range(-1e3..1e3f64)),
        2 => format!("1e{}", rng.random_range(-330..330)),
        3 => format!("{:e}", rng.random_range(0.0..1.0f64)),
        4 => [
            "inf",
            "nan",
            "-0",
            "0",
            "1.7976931348623157e308",
            "5e-324",
            "",
            "x",
        ][rng.random_range(0..8)]
        .to_string(),
        5 => format!("0.{}", "0".repeat(rng.random_range(0..20))) + "1",
        6 => rng.random_range(0..10_000u64).to_string(),
        _ => random_text(rng, 8),
    }
}

#[test]
fn parameter_scans_stay_bounded_and_distinct() {
    Budget::from_env(3000).run("scan", |rng, n| {
        let (lo, hi) = (number_text(rng), number_text(rng));
        let step = rng.random_bool(0.5).then(|| number_text(rng));
        let factor = (step.is_none() && rng.random_bool(0.5)).then(|| number_text(rng));
        let start = Instant::now();
        let r = cmdscope::run::plan::scan("x", &lo, &hi, step.as_deref(), factor.as_deref());
        let what = format!("case {n}: -P x {lo} {hi} -D {step:?} --parameter-factor {factor:?}");
        assert!(start.elapsed() < Duration::from_secs(2), "{what}: slow");
        match r {
            Ok(p) => {
                assert!(
                    !p.values.is_empty() && p.values.len() <= cmdscope::run::plan::MAX_VALUES,
                    "{what}"
                );
                let mut sorted = p.values.clone();
                sorted.sort();
                sorted.dedup();
                assert_eq!(sorted.len(), p.values.len(), "{what}: repeated values");
                assert!(p.numeric.unwrap().iter().all(|v| v.is_finite()), "{what}");
            }
            // Messages quote the input; main prints them through
            // output::escape_line, which keeps them on one line.
            Err(e) => assert!(
                !cmdscope::output::escape_line(&e.to_string()).contains('\n'),
                "{what}"
            ),
        }
    });
    Budget::from_env(2000).run("list", |rng, n| {
        let text = random_text(rng, 60);
        if let Ok(p) = cmdscope::run::plan::list("x", &text) {
            assert_eq!(p.values.join(","), text, "case {n}");
        }
    });
}

#[test]
fn env_files_parse_back_what_was_written() {
    Budget::from_env(2000).run("env-random", |rng, _| {
        let bytes: Vec<u8> = (0..rng.random_range(0..200))
            .map(|_| rng.random())
            .collect();
        let _ = cmdscope::cli::cells::parse_env_file(&bytes);
        let _ = cmdscope::cli::cells::parse_env_file(random_text(rng, 200).as_bytes());
    });
    Budget::from_env(1000).run("env-roundtrip", |rng, n| {
        let vars: Vec<(String, String)> = (0..rng.random_range(0..10))
            .map(|i| {
                let value: String = random_text(rng, 20)
                    .chars()
                    .filter(|c| *c != '\n' && *c != '\r')
                    .collect();
                (
                    format!("K{i}_{}", rng.random_range(0..100)),
                    value.trim().to_string(),
                )
            })
            .collect();
        let mut text = String::new();
        for (k, v) in &vars {
            if rng.random_bool(0.3) {
                text.push_str("# a comment\n\n");
            }
            text.push_str(&format!(
                "{}{k}={v}\n",
                if rng.random_bool(0.2) { "export " } else { "" }
            ));
        }
        let got = cmdscope::cli::cells::parse_env_file(text.as_bytes())
            .unwrap_or_else(|line| panic!("case {n}: line {line} of {text:?}"));
        let got: Vec<(String, String)> = got
            .into_iter()
            .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        assert_eq!(got, vars, "case {n}: {text:?}");
    });
}

// ----- suite files ------------------------------------------------------------

const SUITE_TOKENS: &[&str] = &[
    "[[benchmark]]\n",
    "[defaults]\n",
    "name = ",
    "command = ",
    "commands = [",
    "parameters = { n = [1, 2] }",
    "parameters = { n = { min = 1, max = 1e9, step = 1e-9 } }",
    "precision = nan",
    "timeout = -inf",
    "alpha = 2",
    "min_time = 1e308",
    "runs = 18446744073709551616",
    "labels = { a = 1 }",
    "env = { A = \"\" }",
    "'''",
    "\"\"\"",
    "\"a\"",
    "'b'",
    "= ",
    "{",
    "}",
    "[",
    "]",
    "\\u0000",
    "\u{1b}[2J",
    "\u{202e}",
    "\n",
    "\r\n",
    "#",
];

/// A well-formed suite; returns it with its benchmarks' names and whether
/// every number in it is one `run` accepts.
fn suite_text(rng: &mut ChaCha8Rng) -> (String, Vec<String>, bool) {
    let mut valid = true;
    let mut number = |rng: &mut ChaCha8Rng, good: f64, bad: f64| {
        if rng.random_bool(0.1) {
            valid = false;
            bad
        } else {
            good
        }
    };
    let mut text = String::new();
    if rng.random_bool(0.5) {
        let alpha = number(rng, 0.01, 0.5);
        text.push_str(&format!("[defaults]\nruns = 3\nalpha = {alpha:?}\n"));
    }
    let mut names = Vec::new();
    for i in 0..rng.random_range(1..6) {
        // Any characters, between two that trimming keeps.
        let middle: String = (0..rng.random_range(0..8))
            .map(|_| char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('?'))
            .collect();
        let name = format!("{i}{middle}x");
        // JSON's escapes are TOML's, but TOML also wants DEL escaped.
        let quoted = serde_json::to_string(&name)
            .unwrap()
            .replace('\u{7f}', "\\u007F");
        let precision = number(rng, 5.0, f64::NAN);
        let timeout = number(rng, 2.5, -1.0);
        text.push_str(&format!(
            "\n[[benchmark]]\nname = {quoted}\ncommand = \"true {{n}}\"\n\
             parameters = {{ n = [1, 2] }}\nprecision = {}\ntimeout = {timeout:?}\n",
            if precision.is_nan() {
                "nan".to_string()
            } else {
                format!("{precision:?}")
            }
        ));
        names.push(name);
    }
    (text, names, valid)
}

/// Parses and plans `text` as a suite; an error is one line, and where it
/// names a position, a position of the text.
fn check_suite(text: &str, n: u64) -> Option<cmdscope::suite::file::Suite> {
    let path = std::path::Path::new("s.toml");
    let result = cmdscope::suite::file::parse(path, text).and_then(|s| {
        cmdscope::suite::cells::plan(&s)?;
        Ok(s)
    });
    match result {
        Ok(s) => Some(s),
        Err(e) => {
            let m = e.to_string();
            assert!(
                !m.contains('\n'),
                "case {n}: multi-line error {m:?} for {text:?}"
            );
            let mut at = m.strip_prefix("s.toml:").unwrap_or("").split(':');
            if let (Some(Ok(line)), Some(Ok(column))) = (
                at.next().map(str::parse::<usize>),
                at.next().map(str::parse::<usize>),
            ) {
                let lines = text.matches('\n').count() + 1;
                assert!(
                    (1..=lines).contains(&line) && column >= 1,
                    "case {n}: {m:?} names a position the text does not have"
                );
            }
            None
        }
    }
}

#[test]
fn suite_files_survive_anything_and_keep_what_was_written() {
    Budget::from_env(1000).run("suite-random", |rng, n| {
        let mut text = String::new();
        while text.len() < rng.random_range(0..300) {
            match rng.random_range(0..3) {
                0 => text.push_str(SUITE_TOKENS[rng.random_range(0..SUITE_TOKENS.len())]),
                1 => text.push(char::from(rng.random_range(0x20u8..0x7f))),
                _ => text.push(char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('?')),
            }
        }
        check_suite(&text, n);
    });
    Budget::from_env(1000).run("suite-mutated", |rng, n| {
        let (text, _, _) = suite_text(rng);
        check_suite(&mutate(rng, &text), n);
    });
    Budget::from_env(300).run("suite-roundtrip", |rng, n| {
        let (text, names, valid) = suite_text(rng);
        match check_suite(&text, n) {
            Some(s) => {
                assert!(valid, "case {n}: numbers run refuses were accepted: {text}");
                let got: Vec<&str> = s.benchmarks.iter().map(|b| b.name.as_str()).collect();
                assert_eq!(got, names, "case {n}");
            }
            None => assert!(!valid, "case {n}: a valid suite was refused: {text}"),
        }
    });
}

// Stores: damaged SQLite store files fed to every command that opens one.

/// What a damaged store holds in place of a good one.
fn damage(rng: &mut ChaCha8Rng, good: &[u8], store: &std::path::Path) -> &'static str {
    let write = |bytes: &[u8]| std::fs::write(store, bytes).unwrap();
    match rng.random_range(0..8) {
        0 => {
            // Bit flips, half of them in the first page (header, schema).
            let mut bytes = good.to_vec();
            for _ in 0..rng.random_range(1..20) {
                let end = if rng.random_bool(0.5) {
                    4096.min(bytes.len())
                } else {
                    bytes.len()
                };
                let i = rng.random_range(0..end);
                bytes[i] ^= 1 << rng.random_range(0..8);
            }
            write(&bytes);
            "bit flips"
        }
        1 => {
            write(&good[..rng.random_range(0..good.len())]);
            "truncated"
        }
        2 => {
            let c = rusqlite::Connection::open(store).unwrap();
            c.execute_batch(
                "CREATE TABLE moz_places (url TEXT); INSERT INTO moz_places VALUES ('x');",
            )
            .unwrap();
            "a foreign database"
        }
        3 => {
            // cmdscope's version table and nothing else, at a random version.
            let c = rusqlite::Connection::open(store).unwrap();
            c.execute_batch("CREATE TABLE schema_version (version BIGINT NOT NULL)")
                .unwrap();
            c.execute(
                "INSERT INTO schema_version VALUES (?1)",
                [rng.random_range(-2i64..6)],
            )
            .unwrap();
            "a version table alone"
        }
        4 => {
            write(b"");
            "zero length"
        }
        5 => {
            std::fs::create_dir(store).unwrap();
            "a directory"
        }
        6 => {
            let path = std::ffi::CString::new(store.to_str().unwrap()).unwrap();
            // SAFETY: a valid path string.
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
            "a FIFO"
        }
        _ => {
            // A good store with one table's rows damaged behind SQLite's back.
            write(good);
            let c = rusqlite::Connection::open(store).unwrap();
            c.execute_batch(
                "PRAGMA journal_mode = DELETE; PRAGMA foreign_keys = OFF; \
                 UPDATE sessions SET started_unix = 'x', status = '\u{1b}[2J' WHERE id = 1; \
                 UPDATE cells SET parameters = '{', session_id = 99 WHERE id = 2; \
                 DELETE FROM runs WHERE seq = 2;",
            )
            .unwrap();
            "damaged rows"
        }
    }
}

/// The bytes at `path` (None for what is not a regular file).
fn bytes_of(path: &std::path::Path) -> Option<Vec<u8>> {
    // Not read when special: a FIFO would block.
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| std::fs::read(path).ok())
}

#[test]
fn stores_survive_damage() {
    let bin = env!("CARGO_BIN_EXE_cmdscope");
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let results = work.path().join("r.json");
    std::fs::write(
        &results,
        r#"{"results":[{"command":"a","times":[0.1,0.2,0.3,0.2]},
            {"command":"b","parameters":{"n":"2"},"times":[0.3,0.2,0.4,0.3]},
            {"command":"c","times":[0.01,0.02,0.03,0.02]}]}"#,
    )
    .unwrap();
    let good_store = work.path().join("good.sqlite");
    for label in ["commit=a", "commit=b"] {
        let o = std::process::Command::new(bin)
            .args(["import", "--label", label, "--store"])
            .arg(&good_store)
            .arg(&results)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let good = std::fs::read(&good_store).unwrap();
    let commands: &[(&[&str], bool)] = &[
        (&["history"], true),
        (&["changes"], true),
        (&["report", "--html", "OUT/r.html"], true),
        (&["check", "--baseline", "commit=a"], true),
        (&["run", "--runs", "1", "--style", "none", "true"], false),
    ];
    let mut exits = [0u64; 3];
    Budget::from_env(12).run("stores", |rng, n| {
        let case = tempfile::tempdir_in(work.path()).unwrap();
        let out = tempfile::tempdir_in(work.path()).unwrap();
        let dir = case.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        let store = dir.join("s.sqlite");
        let what = damage(rng, &good, &store);
        for (args, reader) in commands {
            let before = (bytes_of(&store), std::fs::read_dir(&dir).unwrap().count());
            let args: Vec<String> = args
                .iter()
                .map(|a| a.replace("OUT", out.path().to_str().unwrap()))
                .collect();
            let stderr_path = out.path().join("stderr");
            let mut child = std::process::Command::new(bin)
                .args(&args)
                .arg("--store")
                .arg(&store)
                .current_dir(out.path())
                .env("NO_COLOR", "1")
                .env("XDG_DATA_HOME", out.path())
                .env_remove("CMDSCOPE_STORE")
                .env_remove("CMDSCOPE_NO_STORE")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::fs::File::create(&stderr_path).unwrap())
                .spawn()
                .unwrap();
            // A hang is a failure: nothing here needs more than seconds.
            let deadline = Instant::now() + Duration::from_secs(60);
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("case {n} ({what}): {args:?} hung");
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            let code = status.code();
            let about = format!("case {n} ({what}): {args:?} exit {code:?}: {err}");
            assert!(matches!(code, Some(0..=2)), "{about}");
            exits[code.unwrap() as usize] += 1;
            assert!(!err.contains("panicked"), "{about}");
            if code == Some(2) {
                assert_eq!(err.lines().count(), 1, "{about}");
                assert!(err.starts_with("cmdscope: error: "), "{about}");
            }
            if *reader {
                let after = (bytes_of(&store), std::fs::read_dir(&dir).unwrap().count());
                assert!(
                    after == before,
                    "case {n} ({what}): {args:?} changed the store ({} bytes, {} files, were {}, {}): {err}",
                    after.0.as_ref().map_or(0, Vec::len),
                    after.1,
                    before.0.as_ref().map_or(0, Vec::len),
                    before.1
                );
            }
        }
    });
    eprintln!(
        "fuzz stores-exits: {} commands exited 0, {} exited 1, {} exited 2",
        exits[0], exits[1], exits[2]
    );
}

// Stored settings: a store's `sessions.settings` JSON damaged, mistyped or
// out of range, read back by `check` and `report`.

/// A field of the stored settings and a value for it, with whether the
/// value is one `run` would refuse as a flag (None: not known here).
fn settings_value(rng: &mut ChaCha8Rng) -> (&'static str, String, Option<bool>) {
    const FIELDS: &[&str] = &[
        "$.alpha",
        "$.precision",
        "$.timeout",
        "$.reference",
        "$.policy.min_time",
        "$.policy.max_runs",
        "$.cells[0].variant.concurrency",
    ];
    const HOSTILE: &[&str] = &[
        "null",
        "true",
        "\"x\"",
        "[]",
        "{}",
        "-1",
        "0",
        "1e300",
        "-1e300",
        "1e-400",
        "0.5",
        "1.0",
        "18446744073709551616",
        "9",
    ];
    let field = FIELDS[rng.random_range(0..FIELDS.len())];
    // Hostile tokens, or numbers around the fields' ranges (half of them
    // in range for alpha, precision, timeout and min_time).
    let value = if rng.random_bool(0.4) {
        HOSTILE[rng.random_range(0..HOSTILE.len())].to_string()
    } else if rng.random_bool(0.5) {
        format!("{}", rng.random_range(0.01..0.49f64))
    } else {
        format!("{}", rng.random_range(-2.0..3.0f64))
    };
    let number = value.parse::<f64>().ok().filter(|v| v.is_finite());
    let bad = match (field, number) {
        ("$.alpha", Some(a)) => Some(!(a > 0.0 && a < 0.5)),
        ("$.precision", Some(p)) => Some(!(p > 0.0 && p < 1.0)),
        ("$.precision", None) if value == "null" => Some(false),
        ("$.timeout", Some(t)) => Some(!(t > 0.0 && t < 1e9)),
        ("$.timeout", None) if value == "null" => Some(false),
        // An index: only 0 and 1 name one of the two cells; a number with
        // a fraction, a negative one or one too large is no index at all.
        ("$.reference", _) => Some(value != "0" && value != "1"),
        ("$.policy.min_time", Some(t)) => Some(t < 0.0),
        (_, None) if value != "null" => Some(true),
        _ => None,
    };
    (field, value, bad)
}

#[test]
fn stores_settings_are_checked_like_flags() {
    let bin = env!("CARGO_BIN_EXE_cmdscope");
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let good_store = work.path().join("good.sqlite");
    for label in ["commit=a", "commit=b"] {
        let o = std::process::Command::new(bin)
            .args(["run", "--runs", "3", "--style", "none", "--label", label])
            .args(["-n", "a", "true", "-n", "b", "true", "--store"])
            .arg(&good_store)
            .env_remove("CMDSCOPE_STORE")
            .env_remove("CMDSCOPE_NO_STORE")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let good = std::fs::read(&good_store).unwrap();
    let original: String = rusqlite::Connection::open(&good_store)
        .unwrap()
        .query_row("SELECT settings FROM sessions WHERE id = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    let (mut refused, mut read) = (0u64, 0u64);
    Budget::from_env(24).run("stored-settings", |rng, n| {
        let case = tempfile::tempdir_in(work.path()).unwrap();
        let store = case.path().join("s.sqlite");
        std::fs::write(&store, &good).unwrap();
        let c = rusqlite::Connection::open(&store).unwrap();
        let (what, bad) = match rng.random_range(0..4) {
            0 | 1 => {
                let (field, value, bad) = settings_value(rng);
                c.execute(
                    &format!("UPDATE sessions SET settings = json_set(settings, ?1, json('{value}')) WHERE id = 2"),
                    [field],
                )
                .unwrap();
                (format!("{field} = {value}"), bad)
            }
            2 => {
                let text = mutate(rng, &original);
                c.execute("UPDATE sessions SET settings = ?1 WHERE id = 2", [&text])
                    .unwrap();
                (format!("mutated: {text}"), None)
            }
            _ => {
                let text = random_text(rng, 200);
                c.execute("UPDATE sessions SET settings = ?1 WHERE id = 2", [&text])
                    .unwrap();
                (format!("random: {text:?}"), Some(true))
            }
        };
        drop(c);
        for args in [
            vec!["check", "--baseline", "commit=a", "--format", "text"],
            vec!["report", "--session", "2", "--html", "r.html"],
        ] {
            let o = std::process::Command::new(bin)
                .args(&args)
                .arg("--store")
                .arg(&store)
                .current_dir(case.path())
                .env("NO_COLOR", "1")
                .env_remove("CMDSCOPE_STORE")
                .env_remove("CMDSCOPE_NO_STORE")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            let code = o.status.code();
            let about = format!("case {n} ({what}): {args:?} exit {code:?}: {err}");
            assert!(!err.contains("panicked"), "{about}");
            assert!(matches!(code, Some(0..=2)), "{about}");
            let said = err.contains(&format!(
                "cmdscope: error: store '{}': session #2 has invalid stored settings (sessions.settings): ",
                store.display()
            ));
            if code == Some(2) {
                assert_eq!(err.lines().count(), 1, "{about}");
                assert!(said, "{about}");
            }
            match bad {
                Some(true) => assert!(code == Some(2) && said, "a bad value was read: {about}"),
                Some(false) => assert!(!said, "a good value was refused: {about}"),
                None => {}
            }
            if said {
                refused += 1;
            } else {
                read += 1;
            }
        }
    });
    eprintln!("fuzz stored-settings-exits: {refused} refused with one line, {read} read");
    // Both sides of the property were exercised.
    assert!(refused > 0 && read > 0, "{refused} refused, {read} read");
}

/// What starts and ends every generated password: nothing else in the
/// generated strings or in cmdscope's messages holds it (raw, or
/// percent-encoded in a URL), so finding it in an output is finding a
/// piece of the password.
const MARK: char = 'Ж';
const MARK_ENCODED: &str = "%D0%96";

/// A password made of what connection strings make hard (quotes,
/// backslashes, blanks, `@ / ? & = % # :`, non-ASCII), between two marks.
fn password(rng: &mut ChaCha8Rng) -> String {
    const HARD: &[char] = &[
        'a', 'Z', '9', '\'', '\\', ' ', '\t', '@', '/', '?', '&', '=', '%', '#', ':', ',', '"',
        'é', '€', '[', ']',
    ];
    let len = rng.random_range(4..14);
    std::iter::once(MARK)
        .chain((0..len).map(|_| HARD[rng.random_range(0..HARD.len())]))
        .chain(std::iter::once(MARK))
        .collect()
}

/// `text` percent-encoded: every byte but ASCII letters and digits, or
/// only those that would end the part it is in.
fn percent(rng: &mut ChaCha8Rng, text: &str, ends: &[u8]) -> String {
    let all = rng.random_bool(0.5);
    let mut out = String::new();
    for &b in text.as_bytes() {
        if (all && !b.is_ascii_alphanumeric()) || b == b'%' || ends.contains(&b) || !b.is_ascii() {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

/// `password` in random case, or percent-encoded, as a key.
fn password_key(rng: &mut ChaCha8Rng, url: bool) -> String {
    match rng.random_range(0..4) {
        0 => "password".into(),
        1 => "PASSWORD".into(),
        2 if url => "pass%77ord".into(),
        _ => "password"
            .chars()
            .map(|c| {
                if rng.random_bool(0.5) {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect(),
    }
}

/// A PostgreSQL connection string (a URL or key/value pairs, in random
/// order, with unknown or wrongly cased keys at times) holding `secret`
/// where the driver would read it as the password, or in an unclosed
/// quote at the end. Nothing listens on port 1: a string the driver
/// accepts fails at once to connect.
fn connection_string(rng: &mut ChaCha8Rng, secret: &str) -> String {
    const OTHERS: &[&str] = &[
        "dbname=d",
        "user=u",
        "sslmode=disable",
        "connect_timeout=2",
        "application_name='a b'",
        "sslcert=x",
        "HOST=h",
        "service=s",
        "options='-c x=1'",
    ];
    let ws = |rng: &mut ChaCha8Rng| [" ", "  ", "\t", " \n "][rng.random_range(0..4)].to_string();
    if rng.random_bool(0.5) {
        let scheme = ["postgres://", "postgresql://", "POSTGRES://"][rng.random_range(0..3)];
        let mut url = scheme.to_string();
        let in_user = rng.random_bool(0.5);
        if in_user {
            url.push_str(&format!("u:{}@", percent(rng, secret, b"@/?#")));
        }
        url.push_str("127.0.0.1:1/d");
        let mut query = Vec::new();
        if !in_user || rng.random_bool(0.3) {
            let key = password_key(rng, true);
            query.push(format!("{key}={}", percent(rng, secret, b"&#")));
        }
        for _ in 0..rng.random_range(0..3) {
            query.push(OTHERS[rng.random_range(0..OTHERS.len())].replace(['\'', ' '], ""));
        }
        let n = query.len();
        if n > 1 {
            let i = rng.random_range(0..n);
            query.swap(0, i);
        }
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        return url;
    }
    let mut pairs = vec!["host=127.0.0.1".to_string(), "port=1".to_string()];
    for _ in 0..rng.random_range(0..3) {
        pairs.push(OTHERS[rng.random_range(0..OTHERS.len())].to_string());
    }
    let key = password_key(rng, false);
    let eq = [
        "=".to_string(),
        format!("{}={}", ws(rng), ws(rng)),
        format!("={}", ws(rng)),
    ][rng.random_range(0..3)]
    .clone();
    let unclosed = rng.random_bool(0.15);
    let quoted = secret.replace('\\', "\\\\").replace('\'', "\\'");
    let value = match rng.random_range(0..2) {
        _ if unclosed => format!("'{quoted}"),
        0 => format!("'{quoted}'"),
        _ => secret
            .chars()
            .flat_map(|c| {
                let escape = c.is_whitespace() || c == '\\' || c == '\'';
                escape.then_some('\\').into_iter().chain(std::iter::once(c))
            })
            .collect(),
    };
    let pair = format!("{key}{eq}{value}");
    if unclosed {
        pairs.push(pair);
    } else {
        let at = rng.random_range(0..=pairs.len());
        pairs.insert(at, pair);
        if rng.random_bool(0.2) {
            // The key twice: the driver keeps the last.
            let again = format!("{}={}", password_key(rng, false), value);
            let at = rng.random_range(0..=pairs.len());
            pairs.insert(at, again);
        }
    }
    let mut text = ws(rng).repeat(rng.random_range(0..2));
    for p in pairs {
        text.push_str(&p);
        text.push_str(&ws(rng));
    }
    text
}

#[test]
fn connection_strings_never_show_their_password() {
    use cmdscope::store::{redact, Location};
    let bin = env!("CARGO_BIN_EXE_cmdscope");
    let (mut accepted, mut refused, mut started) = (0u64, 0u64, 0u64);
    Budget::from_env(2000).run("connection-strings", |rng, n| {
        let secret = password(rng);
        let text = connection_string(rng, &secret);
        let about = format!("case {n}: {text:?}");
        let mut outputs = vec![redact(&text), redact(&format!("--store={text}"))];
        match Location::parse(&text) {
            Ok(location) => {
                accepted += 1;
                outputs.push(location.display());
                assert!(
                    matches!(location, Location::Postgres(_)),
                    "{about}: taken for a file"
                );
            }
            Err(e) => {
                refused += 1;
                assert!(!e.0.contains('\n'), "{about}: {}", e.0);
                outputs.push(e.0);
            }
        }
        // Now and then the whole way through cmdscope: its error (a
        // refusal, or the connection refused on port 1) on one line.
        if n % 100 == 0 {
            started += 1;
            let o = std::process::Command::new(bin)
                .args(["history", "--store", &text])
                .env("NO_COLOR", "1")
                .env_remove("CMDSCOPE_STORE")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert_eq!(o.status.code(), Some(2), "{about}: {err}");
            assert_eq!(err.lines().count(), 1, "{about}: {err}");
            assert!(!err.contains("panicked"), "{about}: {err}");
            outputs.push(err);
            outputs.push(String::from_utf8_lossy(&o.stdout).into_owned());
        }
        for out in &outputs {
            assert!(
                !out.contains(MARK) && !out.to_ascii_uppercase().contains(MARK_ENCODED),
                "{about}: the password {secret:?} shows in {out:?}"
            );
        }
    });
    eprintln!(
        "fuzz connection-strings-verdicts: {accepted} accepted, {refused} refused, \
         {started} through cmdscope"
    );
}
