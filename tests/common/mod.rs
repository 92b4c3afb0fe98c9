//! Helpers shared by the integration tests: the binary, the fixture, JSON.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cmdscope"))
}

/// The fixture example, built (or found up to date) once per test binary.
pub fn fixture() -> String {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let mut p = bin();
        p.pop();
        p.push("examples");
        p.push("fixture");
        // Always (a no-op when fresh): a filtered `cargo test --test X`
        // does not rebuild examples, and a stale fixture lies.
        {
            let mut build = Command::new(env!("CARGO"));
            build
                .args(["build", "--example", "fixture"])
                .current_dir(env!("CARGO_MANIFEST_DIR"));
            // What cargo sets for a test binary, passed on to this build,
            // looks like a changed environment to build scripts that track
            // it (ring's tracks CARGO_MANIFEST_DIR): every later `cargo
            // test` then rebuilt ring, rustls, ureq and cmdscope.
            for (name, _) in std::env::vars_os() {
                let Some(name) = name.to_str() else { continue };
                if name.starts_with("CARGO_PKG_")
                    || name.starts_with("CARGO_BIN_EXE_")
                    || matches!(
                        name,
                        "CARGO_MANIFEST_DIR"
                            | "CARGO_MANIFEST_PATH"
                            | "CARGO_CRATE_NAME"
                            | "CARGO_BIN_NAME"
                            | "CARGO_PRIMARY_PACKAGE"
                            | "CARGO_TARGET_TMPDIR"
                            | "CARGO_RUSTC_CURRENT_DIR"
                    )
                {
                    build.env_remove(name);
                }
            }
            let status = build.status().expect("cargo build --example fixture");
            assert!(status.success());
        }
        p
    })
    .to_string_lossy()
    .into_owned()
}

/// The fixture copied where any user can start it, for tests that run it as
/// another user (`--user nobody`): a checkout under a private directory
/// (a clone in `/root`, any 0700 directory) is closed to that user, and
/// `exec` then fails with "Permission denied". The copy lives in a fresh
/// directory of the system's temporary directory, removed when the value
/// is dropped. `None`, after a loud message, when no such place exists.
pub struct FixtureForAnyUser {
    _dir: tempfile::TempDir,
    pub path: String,
}

pub fn fixture_for_any_user() -> Option<FixtureForAnyUser> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("cmdscope-fixture-")
        .tempdir()
        .expect("a temporary directory");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("open the fixture's directory to everyone");
    let path = dir.path().join("fixture");
    std::fs::copy(fixture(), &path).expect("copy the fixture");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("make the fixture's copy executable by everyone");
    // Every directory above the copy must let others through.
    for ancestor in dir.path().ancestors().skip(1) {
        let mode = std::fs::metadata(ancestor).map(|m| m.permissions().mode());
        if !matches!(mode, Ok(m) if m & 0o001 != 0) {
            eprintln!(
                "SKIPPED: {} is closed to other users, so no copy of the fixture there can run as another user",
                ancestor.display()
            );
            return None;
        }
    }
    Some(FixtureForAnyUser {
        path: path.to_string_lossy().into_owned(),
        _dir: dir,
    })
}

/// A hyperfine-format results file with these times per benchmark, for
/// tests whose store must hold a history with known values (`import` makes
/// one session of it): real sessions run at different times see load that
/// comes and goes, which is a real change of wall time.
pub fn write_results_file(path: &Path, results: &[(&str, Vec<f64>)]) {
    let results: Vec<serde_json::Value> = results
        .iter()
        .map(|(name, t)| {
            let mut sorted = t.clone();
            sorted.sort_by(f64::total_cmp);
            serde_json::json!({
                "command": name,
                "mean": t.iter().sum::<f64>() / t.len() as f64,
                "stddev": 0.0,
                "median": sorted[sorted.len() / 2],
                "user": 0.0,
                "system": 0.0,
                "min": sorted[0],
                "max": sorted[sorted.len() - 1],
                "times": t,
            })
        })
        .collect();
    let doc = serde_json::json!({ "results": results });
    std::fs::write(path, doc.to_string()).expect("write a results file");
}

/// `n` times spread ±1 % around `level` seconds, the same pattern each call.
pub fn times_around(level: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| level * (1.0 + 0.02 * (k as f64 / (n - 1).max(1) as f64 - 0.5)))
        .collect()
}

/// SQL that takes a store of the latest schema back to what cmdscope wrote
/// at `version`: the columns and tables later migrations added dropped,
/// the version set. Tests of upgrades and of readers refusing an older
/// store make their old stores with it, so a new migration is one line here.
pub fn sql_back_to_version(version: i64) -> String {
    // (the migration, the SQL that takes it back), newest first
    const ADDED: &[(i64, &str)] = &[
        (9, "ALTER TABLE sessions DROP COLUMN race"),
        (
            8,
            "ALTER TABLE sessions DROP COLUMN outcome; \
             ALTER TABLE runs DROP COLUMN cpu_wait; \
             ALTER TABLE runs DROP COLUMN cpu_steal",
        ),
        (
            7,
            "ALTER TABLE runs DROP COLUMN sim_instructions; \
             ALTER TABLE runs DROP COLUMN sim_d1_misses; \
             ALTER TABLE runs DROP COLUMN sim_ll_misses; \
             ALTER TABLE runs DROP COLUMN sim_branch_mispredicts; \
             ALTER TABLE runs DROP COLUMN sim_estimated_cycles",
        ),
        (6, "DROP TABLE batch_runs; DROP TABLE batches"),
        (5, "ALTER TABLE sessions DROP COLUMN settings"),
        (4, "ALTER TABLE sessions DROP COLUMN search"),
        (3, "ALTER TABLE sessions DROP COLUMN preflight"),
    ];
    assert_eq!(
        ADDED.first().map(|a| a.0),
        Some(cmdscope::store::schema::LATEST),
        "a migration is missing from sql_back_to_version"
    );
    let mut sql: Vec<String> = ADDED
        .iter()
        .filter(|(v, _)| *v > version)
        .map(|(_, undo)| undo.to_string())
        .collect();
    sql.push(format!("UPDATE schema_version SET version = {version}"));
    sql.join("; ")
}

pub fn cmdscope(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("NO_COLOR", "1")
        // Measurement tests record nothing (tests/store.rs tests the store),
        // and anything recorded by mistake goes under target/, not ~, as
        // does the spawner's cached copy.
        .env("CMDSCOPE_NO_STORE", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .output()
        .expect("run cmdscope")
}

pub fn tempdir() -> tempfile::TempDir {
    // Under target/, which is on disk (not tmpfs), so storage I/O is real.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

/// A concurrency-mode session at N = 2 of two commands whose throughput
/// differs twofold, into `store`, its JSON export in `out`.
pub fn concurrency_session_into(store: &str, out: &Path) {
    concurrency_session_with(store, out, &["--runs", "40"]);
}

/// The concurrency tests' pair: two sleeps, 2 at a time.
pub const CONCURRENT_PAIR: [&str; 8] = [
    "--concurrency",
    "2",
    "-n",
    "short",
    "sleep 0.02",
    "-n",
    "long",
    "sleep 0.04",
];

/// [`concurrency_session_into`] with `how` many runs (`--runs N`, or
/// `--until-decided` and its budget).
pub fn concurrency_session_with(store: &str, out: &Path, how: &[&str]) {
    let mut args = vec!["run", "--style", "none"];
    args.extend_from_slice(how);
    let o = with_store(
        store,
        &[
            &args[..],
            &CONCURRENT_PAIR,
            &["--export-json", out.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A stored concurrency session's throughput, its interval and its
/// comparison are those of the run's JSON export: read back from the
/// store through `report`'s reading, not merely present.
pub fn assert_stored_throughput(store: &mut cmdscope::store::Store, doc: &serde_json::Value) {
    let sessions = store.sessions(&cmdscope::store::Filter::default()).unwrap();
    let how = cmdscope::cli::stored::how_run(&sessions[0]);
    let loaded = cmdscope::store::replay::session(store, &sessions[0]).unwrap();
    let (session, c) = cmdscope::analysis::stored::concurrency(loaded, &how)
        .expect("the stored session's batches");
    assert_eq!(session.results.len(), 2);
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(1e-300),
            "{what}: stored {a}, run {b}"
        )
    };
    for (i, t) in c.cells.iter().enumerate() {
        let t = t.as_ref().expect("a throughput for each cell");
        let json = &doc["results"][i]["throughput"];
        assert_eq!(t.concurrency, 2);
        assert_eq!(t.batches as u64, json["batches"].as_u64().unwrap());
        close(t.value, json["value"].as_f64().unwrap(), "throughput");
        let [lo, hi] = t.ci.expect("an interval");
        close(lo, json["ci"][0].as_f64().unwrap(), "interval's low end");
        close(hi, json["ci"][1].as_f64().unwrap(), "interval's high end");
        let rows = &doc["results"][i]["measurements"];
        assert_eq!(
            session.results[i].samples.len(),
            rows.as_array().unwrap().len(),
            "every instance's run stored"
        );
    }
    let json = &doc["throughput_comparisons"][0];
    let cmp = &c.comparisons[0];
    close(cmp.ratio, json["ratio"].as_f64().unwrap(), "ratio");
    close(cmp.p_value, json["p_value"].as_f64().unwrap(), "p-value");
    close(cmp.level, json["level"].as_f64().unwrap(), "level");
    assert_eq!(cmp.verdict.is_significant(), json["significant"] == true);
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("read export");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("invalid JSON ({e}): {text}"))
}

/// The median of `values`, computed here rather than by cmdscope, so a test
/// checking cmdscope's figures has an answer of its own.
pub fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// `results[i].times` of an export, in seconds.
pub fn run_times(doc: &serde_json::Value, result: usize) -> Vec<f64> {
    doc["results"][result]["times"]
        .as_array()
        .unwrap_or_else(|| panic!("no times in result {result}"))
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect()
}

/// `results[i].summary.<metric>.median`.
pub fn median(doc: &serde_json::Value, result: usize, metric: &str) -> f64 {
    doc["results"][result]["summary"][metric]["median"]
        .as_f64()
        .unwrap_or_else(|| panic!("no median of {metric} in result {result}"))
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn assert_within(actual: f64, expected: f64, rel: f64, what: &str) {
    let err = (actual - expected).abs() / expected;
    assert!(
        err <= rel,
        "{what}: {actual} is {:.2}% away from {expected} (allowed {:.2}%)",
        err * 100.0,
        rel * 100.0
    );
}

/// cmdscope with an explicit results store (a SQLite path or a PostgreSQL
/// URL), isolated from the caller's store settings.
pub fn with_store(store: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .arg("--store")
        .arg(store)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .output()
        .expect("run cmdscope")
}

/// A usage error: exit 2, one line on stderr containing `needle`, nothing on stdout.
pub fn one_line_error(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The one "cmdscope: error" line on stderr (other lines may be warnings).
pub fn error_line(o: &Output) -> String {
    let err = stderr(o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("cmdscope: error"))
        .collect();
    assert_eq!(lines.len(), 1, "one error line expected: {err}");
    lines[0].to_string()
}

/// `o` after asserting that it succeeded.
pub fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: {}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    o
}

/// stdout parsed as JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// The lines of a text file (none when it cannot be read).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The search answer a session keeps in the store is the one `run`
/// exported (`--export-json`'s `search` object).
pub fn assert_stored_search(stored: &cmdscope::store::StoredSearch, export: &serde_json::Value) {
    let s = &export["search"];
    let point = |p: &cmdscope::store::Setting| {
        serde_json::Value::Object(
            p.iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect(),
        )
    };
    let names: Vec<&str> = stored.parameters.iter().map(String::as_str).collect();
    assert_eq!(serde_json::json!(names), s["parameters"]);
    assert_eq!(point(&stored.best), s["best"]);
    let as_good: Vec<_> = stored.as_good.iter().map(point).collect();
    assert_eq!(serde_json::json!(as_good), s["as_good"]);
    let tried: Vec<_> = stored.values_tried.iter().map(point).collect();
    assert_eq!(serde_json::json!(tried), s["values_tried"]);
    assert_eq!(serde_json::json!(stored.runs), s["runs"]["total"]);
    assert_eq!(serde_json::json!(stored.grid_runs), s["grid_runs"]);
    assert_eq!(serde_json::json!(stored.metric), s["metric"]);
    assert_eq!(serde_json::json!(stored.compared), s["compared"]);
    let goal = if stored.maximize {
        "maximize"
    } else {
        "minimize"
    };
    assert_eq!(serde_json::json!(goal), s["goal"]);
}

/// The live processes (not zombies) whose command line holds `token`, as
/// "pid: command line".
pub fn processes_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && text.contains(token) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// Live processes whose environment holds `token` (`NAME=value`): a
/// process and every helper and command it started, which inherit it.
pub fn processes_with_env(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        // A zombie's environment reads empty.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|v| v == token.as_bytes()) {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// [`processes_with`] once the kernel has torn down what was killed: a
/// busy machine delays that, so this waits up to five seconds for the list
/// to empty and returns what is still there.
pub fn left_running(token: &str) -> Vec<String> {
    let start = std::time::Instant::now();
    loop {
        let left = processes_with(token);
        if left.is_empty() || start.elapsed() > std::time::Duration::from_secs(5) {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// cmdscope with `args` (the subcommand first) and `--export-json` into a
/// fresh temporary file, which must succeed: its output and the JSON it
/// exported.
pub fn exported(args: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempdir();
    let out = dir.path().join("export.json");
    let mut all = args.to_vec();
    all.splice(1..1, ["--export-json", out.to_str().unwrap()]);
    let o = cmdscope(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out);
    (o, doc)
}

/// A refused invocation: exit 2, with `needle` on stderr.
pub fn refused(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(needle), "{}", stderr(o));
}

/// The exported comparisons of `metric`, in their order.
pub fn comparisons_of<'a>(doc: &'a serde_json::Value, metric: &str) -> Vec<&'a serde_json::Value> {
    doc["comparisons"]
        .as_array()
        .expect("a comparisons array")
        .iter()
        .filter(|c| c["metric"] == metric)
        .collect()
}

/// Whether `suite list --format json` printed a cell of `benchmark`.
pub fn lists_benchmark(o: &Output, benchmark: &str) -> bool {
    json(o)
        .as_array()
        .expect("a JSON array of cells")
        .iter()
        .any(|c| c["benchmark"] == benchmark)
}

/// `cmdscope run --style basic` in `dir`, storing nothing unless `--store` is given.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(bin());
    cmd.arg("run")
        .args(["--style", "basic"])
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE");
    if !args.contains(&"--store") {
        cmd.env("CMDSCOPE_NO_STORE", "1");
    }
    cmd.output().expect("run cmdscope")
}

/// A script in `dir` that starts a daemon and exits at once: the daemon
/// (`fixture sleep`, 100 s, with `token` in its command line) leaves the
/// script's process group and session (`setsid`), as daemons do.
pub fn daemon_script(dir: &Path, token: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("daemon.sh");
    let text = format!(
        "#!/bin/sh\nsetsid {} sleep 100000 {token} </dev/null >/dev/null 2>&1 &\nexit 0\n",
        fixture()
    );
    std::fs::write(&path, text).expect("write the daemon script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("make the daemon script executable");
    path
}

/// [`cmdscope`], which must end within `limit`: killed then, and the
/// test fails, rather than waiting for it for good.
pub fn cmdscope_within(args: &[&str], limit: std::time::Duration) -> Output {
    use std::io::Read;
    let mut child = Command::new(bin())
        .args(args)
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_NO_STORE", "1")
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("CMDSCOPE_STORE")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cmdscope");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = std::time::Instant::now();
    let mut late = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for cmdscope") {
            break status;
        }
        if started.elapsed() > limit {
            late = true;
            let _ = child.kill();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let o = Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    };
    assert!(!late, "still running after {limit:?}: {}", stderr(&o));
    o
}

/// Where this process's session cgroups would go (cgroup v2), if anywhere.
pub fn own_cgroup_dir() -> Option<std::path::PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        right
            .starts_with("cgroup2 ")
            .then(|| left.split_whitespace().nth(4).map(std::path::PathBuf::from))?
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(mount.join(path.trim_start_matches('/')))
}

/// A test whose tool (a compiler, a viewer) is missing is skipped loudly,
/// or fails in CI (CI=true or 1), where .ci/run installs the tools.
pub fn skip(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{what}, and CI=true: .ci/run should have installed it");
    }
    eprintln!("SKIPPED: {what}");
}

/// Whether Valgrind is on PATH; the tests that need it say so loudly
/// (`skip`) and pass when it is not (CI installs it: `.ci/run`).
pub fn valgrind() -> bool {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skip("no valgrind on PATH; the simulation tests did not run");
    }
    found
}
