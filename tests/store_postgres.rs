//! The results store on a real PostgreSQL server.
//!
//! Uses `CMDSCOPE_TEST_PG_URL` (a server where the user may create
//! databases) when set; otherwise starts a private server from the
//! distribution's binaries: `initdb` into a temporary directory, password
//! authentication, a free port on 127.0.0.1, a socket directory of its own,
//! stopped when the test ends (even when it fails). As root the server runs
//! as the `postgres` user (or `nobody`).
//!
//! Without a server the test prints `SKIPPED: …` and passes, except in CI
//! (`CI=true`), where it fails: CI must run it (.ci/run installs PostgreSQL).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cmdscope::store::{Filter, Location, Store};
use common::*;

const PASSWORD: &str = "pg-s3cret-Pw";

struct Server {
    /// Admin URL without the database name: `postgres://user:pw@127.0.0.1:port`.
    base: String,
    data: Option<(PathBuf, PathBuf, Option<String>)>,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    fn url(&self, db: &str) -> String {
        format!("{}/{db}", self.base)
    }

    fn create_db(&self, name: &str) -> String {
        let mut c = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .expect("connect to the test server");
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(name)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some((bin, data, user)) = &self.data {
            let _ = as_user(
                user.as_deref(),
                &bin.join("pg_ctl"),
                &[
                    "-D",
                    &data.to_string_lossy(),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        }
    }
}

fn as_user(user: Option<&str>, program: &Path, args: &[&str]) -> Command {
    match user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.args(["-u", u, "--"]).arg(program).args(args);
            c
        }
        None => {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
    }
}

/// The directory with initdb and pg_ctl: the newest /usr/lib/postgresql/*/bin, else PATH.
fn find_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists() && p.join("pg_ctl").exists())
        .collect();
    dirs.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(d) = dirs.pop() {
        return Some(d);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if dir.join("initdb").exists() {
        return Some(dir);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54329)
}

fn start() -> Result<Server, String> {
    if let Ok(url) = std::env::var("CMDSCOPE_TEST_PG_URL") {
        let base = url
            .trim_end_matches('/')
            .rsplit_once('/')
            .map(|(b, _)| b.to_string())
            .filter(|b| b.contains("://"))
            .ok_or("CMDSCOPE_TEST_PG_URL must look like postgres://user:pw@host:port/db")?;
        return Ok(Server {
            base,
            data: None,
            _dir: None,
        });
    }
    let bin = find_bin().ok_or("no initdb/pg_ctl found (install the postgresql package)")?;
    let root = unsafe { libc::geteuid() } == 0;
    let user = if !root {
        None
    } else if Command::new("id")
        .arg("postgres")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        Some("postgres".to_string())
    } else {
        Some("nobody".to_string())
    };
    let dir = tempfile::Builder::new()
        .prefix("cmdscope-pg-")
        .tempdir_in("/tmp")
        .map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let sock = dir.path().join("sock");
    std::fs::create_dir(&sock).map_err(|e| e.to_string())?;
    let pwfile = dir.path().join("pw");
    std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
    if let Some(u) = &user {
        let ok = Command::new("chown")
            .args(["-R", u])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!("cannot chown the server directory to {u}"));
        }
    }
    let init = as_user(
        user.as_deref(),
        &bin.join("initdb"),
        &[
            "-D",
            &data.to_string_lossy(),
            "-U",
            "cmdscope",
            "-A",
            "scram-sha-256",
            &format!("--pwfile={}", pwfile.display()),
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ],
    )
    .output()
    .map_err(|e| format!("initdb: {e}"))?;
    if !init.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&init.stderr)
        ));
    }
    let port = free_port();
    let log = dir.path().join("log");
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
        sock.display()
    );
    let server = Server {
        base: format!("postgres://cmdscope:{PASSWORD}@127.0.0.1:{port}"),
        data: Some((bin.clone(), data.clone(), user.clone())),
        _dir: Some(dir),
    };
    let started = as_user(
        user.as_deref(),
        &bin.join("pg_ctl"),
        &[
            "-D",
            &data.to_string_lossy(),
            "-o",
            &options,
            "-l",
            &log.to_string_lossy(),
            "-w",
            "-t",
            "60",
            "start",
        ],
    )
    .output()
    .map_err(|e| format!("pg_ctl: {e}"))?;
    if !started.status.success() {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        return Err(format!(
            "pg_ctl start failed: {} {log}",
            String::from_utf8_lossy(&started.stderr)
        ));
    }
    Ok(server)
}

fn with_store(url: &str, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .args(["--store", url])
        .env("NO_COLOR", "1")
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .output()
        .expect("run cmdscope")
}

fn no_password(o: &Output) {
    for text in [&o.stdout, &o.stderr] {
        assert!(
            !String::from_utf8_lossy(text).contains(PASSWORD),
            "password printed"
        );
    }
}

#[test]
fn postgres_store() {
    let server = match start() {
        Ok(s) => s,
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("PostgreSQL tests must run in CI, but no server could be started: {why}");
            }
            eprintln!("SKIPPED: PostgreSQL store tests: no server could be started: {why}");
            eprintln!("SKIPPED: set CMDSCOPE_TEST_PG_URL or install postgresql to run them");
            return;
        }
    };
    concurrent_writers_lose_no_rows(&server);
    full_round_trip(&server);
    kill_9_keeps_every_finished_run(&server);
    newer_schema_and_bad_password(&server);
}

fn concurrent_writers_lose_no_rows(server: &Server) {
    let url = server.create_db("cmdscope_concurrent");
    let runs = 30;
    let children: Vec<_> = (0..4)
        .map(|i| {
            Command::new(bin())
                .args(["run", "--style", "none", "--runs", &runs.to_string()])
                .args(["--label", &format!("writer={i}"), "--store", &url])
                .arg("true")
                .arg(format!("{} busy 1", fixture()))
                .env_remove("CMDSCOPE_STORE")
                .env_remove("CMDSCOPE_NO_STORE")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        no_password(&o);
    }
    let mut store = Store::open(&Location::Postgres(url.clone())).unwrap();
    assert!(!store.location().contains(PASSWORD));
    let sessions = store.sessions(&Filter::default()).unwrap();
    assert_eq!(sessions.len(), 4);
    let total: i64 = sessions.iter().flat_map(|s| &s.cells).map(|c| c.runs).sum();
    assert_eq!(total, 4 * 2 * runs);
}

fn full_round_trip(server: &Server) {
    let url = server.create_db("cmdscope_roundtrip");
    for (label, ms) in [("branch=main", "3"), ("branch=feature", "7")] {
        let o = with_store(
            &url,
            &[
                "run",
                "--runs",
                "10",
                "--style",
                "none",
                "--label",
                label,
                "-n",
                "<script>alert(1)</script>",
                &format!("{} busy {ms}", fixture()),
                "-S",
                "sh",
                "true",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        no_password(&o);
    }
    let o = with_store(&url, &["history"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(
        h.contains("#2") && h.contains("branch=feature") && h.contains("<script>"),
        "{h}"
    );
    let o = with_store(
        &url,
        &[
            "check",
            "--baseline",
            "branch=main",
            "--fail-if-slower",
            "20",
        ],
    );
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    assert!(md.contains("❌"));
    let dir = tempdir();
    let html = dir.path().join("r.html");
    let o = with_store(&url, &["report", "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_password(&o);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("&lt;script&gt;") && !text.contains("<script"));
    assert!(!text.contains(PASSWORD), "password in the report");
    assert!(text.contains("postgres://cmdscope:***@"));
    // The command line stored with the session has its password removed too.
    let mut store = Store::open(&Location::Postgres(url)).unwrap();
    let s = store.sessions(&Filter::default()).unwrap();
    assert!(s.iter().all(|s| !s.command_line.contains(PASSWORD)));
    // Values come back as written, NULLs included.
    let runs = store.runs(s[0].cells[0].id).unwrap();
    assert_eq!(runs.len(), 10);
    assert!(runs[0].get(cmdscope::metrics::Metric::WallTime).unwrap() > 0.0);
    assert!(runs[0].get(cmdscope::metrics::Metric::CpuCycles).is_none());
    // Bulk inserts (binary COPY from 200 rows on) round-trip exactly too.
    let cell = s[0].cells[0].id;
    let bulk: Vec<cmdscope::metrics::Sample> = (0..500u64)
        .map(|i| {
            let mut x = cmdscope::metrics::Sample::new(1000 + i);
            x.exit_code = if i % 7 == 0 { None } else { Some(i as i32 % 3) };
            x.signal = (i % 7 == 0).then_some(9);
            x.timed_out = i % 11 == 0;
            x.set(cmdscope::metrics::Metric::WallTime, 0.001 + i as f64 * 1e-6);
            x
        })
        .collect();
    store.add_runs(cell, 10, &bulk).unwrap();
    let back = store.runs(cell).unwrap();
    assert_eq!(back.len(), 510);
    // (NaN marks "not measured", so compare field by field.)
    let key = |x: &cmdscope::metrics::Sample| {
        let values: Vec<Option<f64>> = cmdscope::metrics::Metric::ALL
            .iter()
            .map(|&m| x.get(m))
            .collect();
        (x.run_index, x.exit_code, x.signal, x.timed_out, values)
    };
    let same = back[10..].iter().zip(&bulk).all(|(a, b)| key(a) == key(b));
    assert!(same, "bulk runs differ after the round trip");
}

fn kill_9_keeps_every_finished_run(server: &Server) {
    let url = server.create_db("cmdscope_killed");
    let dir = tempdir();
    let counter = dir.path().join("finished");
    let mut child = Command::new(bin())
        .args([
            "run", "--style", "none", "--runs", "100000", "--store", &url,
        ])
        .arg("--conclude")
        .arg(format!("echo x >> '{}'", counter.display()))
        .arg(format!("{} sleep 5", fixture()))
        .env_remove("CMDSCOPE_STORE")
        .env_remove("CMDSCOPE_NO_STORE")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_to_string(&counter).map_or(0, |t| t.lines().count()) < 20 {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let finished = std::fs::read_to_string(&counter).unwrap().lines().count() as i64;
    let mut store = Store::open(&Location::Postgres(url)).unwrap();
    let s = store.sessions(&Filter::default()).unwrap();
    assert_eq!(s[0].status, "running");
    let stored = s[0].cells[0].runs;
    assert!(
        stored >= finished && stored <= finished + 1,
        "{stored} stored, {finished} finished"
    );
}

fn newer_schema_and_bad_password(server: &Server) {
    let url = server.create_db("cmdscope_newer");
    drop(Store::open(&Location::Postgres(url.clone())).unwrap());
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute("UPDATE schema_version SET version = 42")
        .unwrap();
    let o = with_store(&url, &["history"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("schema version 42"), "{}", stderr(&o));
    no_password(&o);
    let wrong = url.replace(PASSWORD, "wrong-password-xyz");
    let o = with_store(&wrong, &["history"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(!err.contains("wrong-password-xyz"), "{err}");
    assert!(
        err.contains("cmdscope:***@") && err.contains("cannot connect"),
        "{err}"
    );
}
