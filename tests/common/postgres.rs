//! A PostgreSQL server for tests: `CMDSCOPE_TEST_PG_URL` (a server where
//! the user may create databases) when set; otherwise a private server
//! started from the distribution's binaries: `initdb` into a temporary
//! directory, password authentication, a free port on 127.0.0.1, a socket
//! directory of its own, stopped when the `Server` is dropped (even when a
//! test fails). As root the server runs as the `postgres` user (or
//! `nobody`). Shared by tests/store_postgres.rs and tests/slurm.rs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const PASSWORD: &str = "pg-s3cret-Pw";

pub struct Server {
    /// Admin URL without the database name: `postgres://user:pw@127.0.0.1:port`.
    pub base: String,
    data: Option<(PathBuf, PathBuf, Option<String>)>,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    pub fn url(&self, db: &str) -> String {
        format!("{}/{db}", self.base)
    }

    pub fn create_db(&self, name: &str) -> String {
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

pub fn as_user(user: Option<&str>, program: &Path, args: &[&str]) -> Command {
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
pub fn find_bin() -> Option<PathBuf> {
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

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54329)
}

pub fn start() -> Result<Server, String> {
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
