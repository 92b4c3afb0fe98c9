//! Suites on a real one-node Slurm cluster, into a real PostgreSQL.
//!
//! Starts munged, slurmctld and slurmd (Debian's `munge` and `slurm-wlm`)
//! as root, in the foreground as children of the test, with a generated
//! munge key, private ports and every state, spool, pid and log file in a
//! temporary directory (`SLURM_CONF` points at its slurm.conf), and stops
//! them at the end, also when the test fails. Then:
//!
//! - `suite submit --slurm --partitions 4 --wait` of a 10-cell suite: the
//!   status is complete and the merged run equals (cells, runs per cell) a
//!   one-machine run of the same suite;
//! - a second run whose partition holding a slow cell is cancelled while it
//!   measures: the status is incomplete and names that partition.
//!
//! Without the programs (or not as root) the test prints `SKIPPED: …` and
//! passes, except in CI (`CI=true`), where it fails (.ci/run installs them).

mod common;
#[path = "common/postgres.rs"]
mod pg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cmdscope::store::{Location, Store};
use common::*;

const PROGRAMS: &[&str] = &[
    "munged",
    "mungekey",
    "slurmctld",
    "slurmd",
    "sbatch",
    "scontrol",
    "squeue",
    "scancel",
    "sinfo",
];

fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into(), "/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn skip_or_fail(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("the Slurm test must run in CI, but {why}");
    }
    eprintln!("SKIPPED: Slurm suite test: {why}");
}

/// The daemons, killed (and waited for) when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first, so no task outlives the test.
        let _ = self.cmd("scancel").args(["--user", "root"]).status();
        for d in self.daemons.iter_mut().rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(find(program).unwrap_or_else(|| program.into()));
        c.env("SLURM_CONF", self.conf());
        c
    }

    fn start() -> Result<Cluster, String> {
        let host = String::from_utf8_lossy(
            &Command::new("hostname")
                .arg("-s")
                .output()
                .map_err(|e| e.to_string())?
                .stdout,
        )
        .trim()
        .to_string();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Short path: the munge socket path must fit a sockaddr_un.
        let dir = tempfile::Builder::new()
            .prefix("cs-slurm-")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        let d = dir.path();
        for sub in ["state", "spool"] {
            std::fs::create_dir(d.join(sub)).map_err(|e| e.to_string())?;
        }
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        let d = cluster.dir.path().to_path_buf();
        let key = d.join("munge.key");
        let made = Command::new(find("mungekey").unwrap())
            .arg("--create")
            .arg(format!("--keyfile={}", key.display()))
            .output()
            .map_err(|e| e.to_string())?;
        if !made.status.success() {
            return Err(format!(
                "mungekey: {}",
                String::from_utf8_lossy(&made.stderr)
            ));
        }
        let sock = d.join("munge.sock");
        let log = |name: &str| -> Result<Stdio, String> {
            std::fs::File::create(d.join(name))
                .map(Stdio::from)
                .map_err(|e| e.to_string())
        };
        cluster.daemons.push(
            Command::new(find("munged").unwrap())
                .arg("--foreground")
                .arg("--force")
                .arg(format!("--socket={}", sock.display()))
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--pid-file={}", d.join("munged.pid").display()))
                .arg(format!("--log-file={}", d.join("munged.log").display()))
                .arg(format!("--seed-file={}", d.join("munged.seed").display()))
                .stdout(log("munged.out")?)
                .stderr(log("munged.err")?)
                .spawn()
                .map_err(|e| format!("munged: {e}"))?,
        );
        wait_for(Duration::from_secs(10), || sock.exists()).map_err(|_| "munged did not start")?;
        let (ctld_port, d_port) = (pg::free_port(), pg::free_port());
        let conf = format!(
            "ClusterName=cmdscopetest\n\
             SlurmctldHost={host}\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={d_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={sock}\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             SchedulerType=sched/builtin\n\
             ReturnToService=2\n\
             MpiDefault=none\n\
             JobCompType=jobcomp/none\n\
             AccountingStorageType=accounting_storage/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             KillWait=5\n\
             NodeName={host} CPUs={cpus} State=UNKNOWN\n\
             PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            sock = sock.display(),
            d = d.display(),
        );
        std::fs::write(cluster.conf(), conf).map_err(|e| e.to_string())?;
        for daemon in ["slurmctld", "slurmd"] {
            let c = cluster
                .cmd(daemon)
                .arg("-D")
                .arg("-f")
                .arg(cluster.conf())
                .stdout(log(&format!("{daemon}.out"))?)
                .stderr(log(&format!("{daemon}.err"))?)
                .spawn()
                .map_err(|e| format!("{daemon}: {e}"))?;
            cluster.daemons.push(c);
        }
        let ready = wait_for(Duration::from_secs(30), || {
            cluster
                .cmd("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        if ready.is_err() {
            let log = std::fs::read_to_string(d.join("slurmctld.log")).unwrap_or_default();
            return Err(format!("the node never became idle; slurmctld.log: {log}"));
        }
        Ok(cluster)
    }
}

fn wait_for(limit: Duration, mut ok: impl FnMut() -> bool) -> Result<(), ()> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(())
}

fn cs(cluster: &Cluster, url: &str, args: &[&str]) -> Command {
    let mut c = cluster.cmd(bin().to_str().unwrap());
    c.args(args)
        .env("CMDSCOPE_STORE", url)
        .env("NO_COLOR", "1")
        .env("CMDSCOPE_HOST_LOCK", cluster.dir.path().join("host.lock"))
        .env_remove("CMDSCOPE_NO_STORE")
        .env_remove("CMDSCOPE_RUN_ID");
    c
}

fn merged(url: &str, run: &str) -> BTreeMap<String, i64> {
    let mut store = Store::open(&Location::Postgres(url.into())).unwrap();
    cmdscope::suite::merge::merged(&mut store, run)
        .unwrap()
        .cells
        .iter()
        .map(|c| (c.identity.clone(), c.runs))
        .collect()
}

fn suite(dir: &Path, slow: bool) -> PathBuf {
    let f = fixture();
    let mut text = format!(
        "[defaults]\nruns = 3\n\n\
         [[benchmark]]\nname = \"sleep\"\ncommand = \"{f} sleep {{ms}}\"\nparameters = {{ ms = [1, 2, 3, 4] }}\n\n\
         [[benchmark]]\nname = \"busy\"\ncommand = \"{f} busy {{ms}}\"\nparameters = {{ ms = {{ min = 1, max = 4, factor = 2 }} }}\n\n\
         [[benchmark]]\nname = \"pair\"\ncommands = [\"{f} exit 0\", \"{f} sleep 1\"]\n\n\
         [[benchmark]]\nname = \"env\"\ncommand = \"{f} env X\"\nenv = {{ X = \"1\" }}\n"
    );
    if slow {
        text.push_str(&format!(
            "\n[[benchmark]]\nname = \"slow\"\ncommand = \"{f} sleep 60000\"\nruns = 1\n"
        ));
    }
    let p = dir.join(if slow { "slow.toml" } else { "suite.toml" });
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn slurm_array_partitions_meet_in_postgres() {
    let missing: Vec<&str> = PROGRAMS
        .iter()
        .copied()
        .filter(|p| find(p).is_none())
        .collect();
    if !missing.is_empty() {
        return skip_or_fail(&format!(
            "{} not installed (Debian: apt-get install slurm-wlm munge)",
            missing.join(", ")
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip_or_fail("the test cluster runs its daemons as root (SlurmUser=root)");
    }
    let server = match pg::start() {
        Ok(s) => s,
        Err(why) => return skip_or_fail(&format!("no PostgreSQL server: {why}")),
    };
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => panic!("cannot start the Slurm test cluster: {why}"),
    };
    let url = server.create_db("cmdscope_slurm");
    let work = tempdir();
    let s = suite(work.path(), false);
    let s = s.to_str().unwrap();

    // The reference: the whole suite on this machine.
    ok(cs(
        &cluster,
        &url,
        &["run", "--suite", s, "--run-id", "local", "--style", "none"],
    )
    .output()
    .unwrap());
    let local = merged(&url, "local");
    assert_eq!(local.len(), 10);

    let out_dir = cluster.dir.path().display().to_string();
    let o = ok(cs(
        &cluster,
        &url,
        &[
            "suite",
            "submit",
            s,
            "--slurm",
            "--partitions",
            "4",
            "--wait",
            "--",
            &format!("--output={out_dir}/task-%a.out"),
        ],
    )
    .output()
    .unwrap());
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let job = text
        .lines()
        .find_map(|l| l.strip_prefix("job id: "))
        .unwrap_or_else(|| panic!("no job id in {text}"));
    let run = format!("slurm-{job}");
    assert!(text.contains(&format!("run id: {run}")), "{text}");
    assert!(
        text.contains("4 of 4 partitions reported, complete"),
        "{text}"
    );
    assert!(!text.contains(pg::PASSWORD) && !stderr(&o).contains(pg::PASSWORD));

    let st = json(&ok(cs(
        &cluster,
        &url,
        &["status", "--run", &run, "--format", "json"],
    )
    .output()
    .unwrap()));
    assert_eq!(st["complete"], true, "{st}");
    assert_eq!(st["partitions"], 4);
    assert_eq!(st["reported"], serde_json::json!([1, 2, 3, 4]));
    assert_eq!(st["cells"], 10);
    assert_eq!(st["runs"], 30);
    assert_eq!(
        merged(&url, &run),
        local,
        "the array's merged run equals the one-machine run"
    );

    // A run with a partition cancelled while it measures.
    let slow = suite(work.path(), true);
    let slow = slow.to_str().unwrap();
    let holder = (1..=4)
        .find(|k| {
            let o = ok(cs(
                &cluster,
                &url,
                &[
                    "suite",
                    "list",
                    slow,
                    "--partition",
                    &format!("{k}/4"),
                    "--format",
                    "json",
                ],
            )
            .output()
            .unwrap());
            lists_benchmark(&o, "slow")
        })
        .unwrap();
    let o = ok(cs(
        &cluster,
        &url,
        &[
            "suite",
            "submit",
            slow,
            "--slurm",
            "--partitions",
            "4",
            "--run-id",
            "cancelled",
            "--",
            &format!("--output={out_dir}/slow-%a.out"),
        ],
    )
    .output()
    .unwrap());
    let job = String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("job id: ").map(str::to_string))
        .unwrap();
    let measuring = wait_for(Duration::from_secs(60), || {
        let o = cs(
            &cluster,
            &url,
            &["status", "--run", "cancelled", "--format", "json"],
        )
        .output()
        .unwrap();
        serde_json::from_slice::<serde_json::Value>(&o.stdout).is_ok_and(|st| {
            st["missing"].as_array().is_some_and(|m| {
                m.iter().any(|p| {
                    p["partition"] == holder
                        && p["status"] == "running"
                        && p["cells_done"].as_i64() >= Some(0)
                })
            })
        })
    });
    assert!(measuring.is_ok(), "partition {holder} never started");
    ok(cluster
        .cmd("scancel")
        .args(["--signal=KILL", "--full", &format!("{job}_{holder}")])
        .output()
        .unwrap());
    let ended = wait_for(Duration::from_secs(60), || {
        cluster
            .cmd("squeue")
            .args(["-h", "-j", &job])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim().is_empty())
    });
    assert!(ended.is_ok(), "the job did not end");
    let o = cs(
        &cluster,
        &url,
        &["status", "--run", "cancelled", "--format", "json"],
    )
    .output()
    .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let st = json(&o);
    assert_eq!(st["complete"], false);
    let missing = st["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{st}");
    assert_eq!(missing[0]["partition"], holder);
    // Killed outright it stays "running"; Slurm may deliver SIGTERM first,
    // and then it records "interrupted". Either way it did not report.
    assert!(
        ["running", "interrupted"].contains(&missing[0]["status"].as_str().unwrap()),
        "{st}"
    );
    assert!(missing[0]["host"].is_string() && missing[0]["last_seen"].is_string());
    let text = cs(&cluster, &url, &["status", "--run", "cancelled"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("3 of 4 partitions reported, INCOMPLETE"),
        "{text}"
    );
    assert!(
        text.contains(&format!("missing: partition {holder}/4: ")),
        "{text}"
    );
    drop(cluster);
    drop(server);
}
