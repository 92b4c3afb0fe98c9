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
#[path = "common/postgres.rs"]
mod pg;
#[path = "common/store.rs"]
mod stores;

use std::process::{Output, Stdio};
use std::time::Duration;

use common::*;
use pg::*;
use stores::*;

fn no_password(o: &Output) {
    for text in [&o.stdout, &o.stderr] {
        assert!(
            !String::from_utf8_lossy(text).contains(PASSWORD),
            "password printed"
        );
    }
}

/// A client of the database at `url`, for the SQL a test runs itself.
fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

/// A new database `name` holding one session of three runs of `true`,
/// taken back to what cmdscope wrote at `version`: its URL, and a client
/// to read its schema version with.
fn store_of_version(server: &Server, name: &str, version: i64) -> (String, postgres::Client) {
    let url = server.create_db(name);
    record_true(&url, "3");
    let mut c = client(&url);
    c.batch_execute(&sql_back_to_version(version)).unwrap();
    (url, c)
}

/// The schema version of the store `c` is connected to, read with SQL.
fn schema_version(c: &mut postgres::Client) -> i64 {
    c.query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0)
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
    foreign_database_is_left_alone(&server);
    changes_finds_the_slower_commit(&server);
    histories_read_by_ranges_are_sqlites(&server);
    a_search_keeps_its_answer_from_version_3_on(&server);
    a_search_replays_from_its_race_and_one_of_version_8_is_refused(&server);
    a_monitored_session_replays_with_its_monitor_and_end(&server);
    a_concurrency_session_keeps_its_throughput_from_version_5_on(&server);
    readers_read_a_store_of_version_4_as_it_is(&server);
    passwords_are_never_printed_in_any_form_the_driver_reads(&server);
}

/// A store taken back to version 4 (before settings and batches) is read
/// as it is by history, changes, report and check, as SQLite's is: each
/// says once what the store lacks, and none upgrades it.
fn readers_read_a_store_of_version_4_as_it_is(server: &Server) {
    let (url, mut c) = store_of_version(server, "cmdscope_v4_read", 4);
    let dir = tempdir();
    let html = dir.path().join("r.html");
    let html = html.to_str().unwrap();
    for (args, status) in [
        (&["history"][..], 0),
        (&["changes"], 0),
        (&["report", "--html", html], 0),
        // Read, then found wanting: the store has no such baseline.
        (&["check", "--baseline", "a=b"], 2),
    ] {
        let o = with_store(&url, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(status), "{args:?}: {err}");
        assert_eq!(
            err.matches("has schema version 4, older than this cmdscope's")
                .count(),
            1,
            "{args:?}: {err}"
        );
        assert!(
            err.contains(
                "without session settings, concurrency batches, simulated counts, session outcomes \
                 and search races"
            ),
            "{err}"
        );
        no_password(&o);
        if status == 2 {
            assert!(err.contains("no baseline session labelled a=b"), "{err}");
        }
    }
    let history = String::from_utf8_lossy(&ok(with_store(&url, &["history"])).stdout).into_owned();
    assert!(
        history.contains("true") && history.contains("3 runs"),
        "{history}"
    );
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("<code>true</code>"), "{page}");
    assert_eq!(schema_version(&mut c), 4, "a reader upgraded it");
}

/// A store of version 5 (before batches) upgrades keeping its sessions, and
/// a concurrency session's batches round-trip: read back, the throughput,
/// its interval and the comparison are the run's.
fn a_concurrency_session_keeps_its_throughput_from_version_5_on(server: &Server) {
    let (url, mut c) = store_of_version(server, "cmdscope_batches", 5);
    let dir = tempdir();
    let out = dir.path().join("c.json");
    concurrency_session_into(&url, &out);
    assert_eq!(
        schema_version(&mut c),
        cmdscope::store::schema::LATEST,
        "the run migrated it"
    );
    let mut store = open_store(&url);
    let sessions = all_sessions(&mut store);
    assert_eq!(sessions.len(), 2, "the old session kept");
    assert_eq!(sessions[1].cells[0].runs, 3);
    assert_stored_throughput(&mut store, &read_json(&out));
}

/// A store of version 3 (before the search's column) upgrades keeping its
/// sessions, and a search's answer round-trips through PostgreSQL.
fn a_search_keeps_its_answer_from_version_3_on(server: &Server) {
    let (url, mut c) = store_of_version(server, "cmdscope_search", 3);

    let before = all_sessions(&mut open_store(&url));
    assert_eq!(
        schema_version(&mut c),
        cmdscope::store::schema::LATEST,
        "opening migrated it"
    );
    assert_eq!((before.len(), before[0].cells[0].runs), (1, 3));
    assert_eq!(before[0].search, None);
    let dir = tempdir();
    let out = dir.path().join("s.json");
    let o = search_into(
        &url,
        &out,
        &[
            "-P",
            "a",
            "1",
            "3",
            "-P",
            "b",
            "1",
            "3",
            "--minimize",
            "a,b",
            &format!("{} sleep {{a}}{{b}}", fixture()),
        ],
    );
    no_password(&o);
    let after = all_sessions(&mut open_store(&url));
    assert_eq!(after.len(), 2);
    assert_eq!(after[1], before[0], "the old session unchanged");
    assert_stored_search(after[0].search.as_ref().unwrap(), &read_json(&out));
}

/// A search stored at schema 8 (without its race) and one stored after
/// the upgrade: as on SQLite (`search_stored_before_its_race`).
fn a_search_replays_from_its_race_and_one_of_version_8_is_refused(server: &Server) {
    let url = server.create_db("cmdscope_race");
    search_stored_before_its_race(&url, || {
        client(&url).batch_execute(&sql_back_to_version(8)).unwrap();
    });
}

/// A monitored session whose monitor ended during it reports as `run`
/// printed and exported it, as on SQLite: the monitor is in the stored
/// settings, its end in the outcome.
fn a_monitored_session_replays_with_its_monitor_and_end(server: &Server) {
    let url = server.create_db("cmdscope_monitor");
    let live = assert_reports_as_run_did(
        &url,
        &[
            "--runs",
            "20",
            "--monitor-settle",
            "0.02",
            "--monitor",
            "echo tick; sleep 0.6; exit 3",
            "--match",
            "ticks=tick",
            "sleep 0.02",
            "sleep 0.03",
        ],
    );
    assert!(
        live.contains("The monitor ended during the session (exit status 3) after "),
        "{live}"
    );
}

/// A database with tables of its own is not a store: no command adds to it.
fn foreign_database_is_left_alone(server: &Server) {
    let url = server.create_db("cmdscope_foreign");
    let mut c = client(&url);
    c.batch_execute("CREATE TABLE customers (id BIGINT); INSERT INTO customers VALUES (1)")
        .unwrap();
    for args in [
        &["history"][..],
        &["run", "--runs", "1", "--style", "none", "true"][..],
    ] {
        let o = with_store(&url, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("not a cmdscope store"),
            "{}",
            stderr(&o)
        );
        no_password(&o);
    }
    let tables: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "a table was added to a foreign database");
}

/// `cmdscope changes` reads PostgreSQL as it reads SQLite (tests/changes.rs
/// has the full test on real runs): a step from one commit label on is
/// found there.
fn changes_finds_the_slower_commit(server: &Server) {
    let url = server.create_db("cmdscope_changes");
    // Imported sessions with fixed times: load between real sessions would
    // be a real change of wall time.
    for i in 1..=8 {
        let level = if i < 5 { 0.020 } else { 0.025 };
        let label = format!("commit=c{i}");
        import_times(&url, &label, &[("work", times_around(level, 5))]);
    }
    let o = with_store(&url, &["changes", "--format", "markdown"]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{md}{}", stderr(&o));
    no_password(&o);
    let row = md.lines().find(|l| l.starts_with("| `work`")).expect(&md);
    assert!(row.contains("commit=c5") && row.contains("slower"), "{md}");
}

/// Histories of more than a thousand cells are read by ranges of cell ids,
/// on PostgreSQL one array of values per cell: the same runs, in the same
/// order, as SQLite's rows give (a timed-out run left out, a value not
/// measured skipped).
fn histories_read_by_ranges_are_sqlites(server: &Server) {
    use cmdscope::metrics::{Metric, Sample};
    use cmdscope::store::history::{load, Query};
    use cmdscope::store::{Finish, Machine, NewCell, NewSession};
    let dir = tempdir();
    let url = server.create_db("cmdscope_ranges");
    let mut stores = [open_store(&url), open_store(dir.path().join("ranges.db"))];
    let cells: Vec<NewCell> = (0..100)
        .map(|i| NewCell {
            identity: format!("b{i:02}"),
            name: format!("b{i:02}"),
            command: format!("b{i:02}"),
            parameters: Vec::new(),
            variant: "{}".into(),
        })
        .collect();
    for store in &mut stores {
        for s in 0..21u64 {
            let id = store
                .begin_session(&NewSession {
                    started: std::time::UNIX_EPOCH + Duration::from_secs(1_000 + s),
                    source: "run".into(),
                    command_line: String::new(),
                    order: None,
                    seed: None,
                    shell: None,
                    machine: Machine::current(),
                    labels: Vec::new(),
                    settings: None,
                })
                .unwrap();
            for (i, cell) in store.add_cells(id, &cells).unwrap().into_iter().enumerate() {
                // Runs in an order their values do not sort into.
                let runs: Vec<Sample> = (0..4u64)
                    .map(|r| {
                        let mut x = Sample::new(r);
                        let v = (s * 1000 + i as u64 * 10 + (3 - r)) as f64;
                        if !(r == 1 && i == 5) {
                            x.set(Metric::WallTime, v);
                        }
                        x.timed_out = r == 2 && i == 7;
                        x
                    })
                    .collect();
                store.add_runs(cell, 0, &runs).unwrap();
            }
            let finish = Finish {
                status: "finished".into(),
                stop_reason: None,
                shell_overhead: None,
                preflight: None,
                outcome: None,
            };
            store.finish_session(id, &finish).unwrap();
        }
    }
    let [pg, sqlite] = stores.map(|mut s| load(&mut s, &Query::default()).unwrap());
    assert_eq!(pg.len(), 100);
    for (p, q) in pg.iter().zip(&sqlite) {
        assert_eq!(p.benchmark, q.benchmark);
        assert_eq!(p.runs(), q.runs(), "{}", p.benchmark);
    }
    let b05 = pg.iter().find(|h| h.benchmark == "b05").unwrap();
    assert_eq!(
        b05.points[0].runs,
        [53.0, 51.0, 50.0],
        "not measured: skipped"
    );
    let b07 = pg.iter().find(|h| h.benchmark == "b07").unwrap();
    assert_eq!(
        b07.points[20].runs,
        [20073.0, 20072.0, 20070.0],
        "timed out: left out"
    );
}

fn concurrent_writers_lose_no_rows(server: &Server) {
    let url = server.create_db("cmdscope_concurrent");
    let runs = 30;
    for o in four_concurrent_writers(&url, runs) {
        no_password(&o);
    }
    let mut store = open_store(&url);
    assert!(!store.location().contains(PASSWORD));
    let (sessions, total) = sessions_and_runs(&mut store);
    assert_eq!(sessions, 4);
    assert_eq!(total, 4 * 2 * runs);
}

fn full_round_trip(server: &Server) {
    let url = server.create_db("cmdscope_roundtrip");
    for (label, ms) in [("branch=main", "3"), ("branch=feature", "30")] {
        let o = recorded(
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
                // Sleeping, not spinning, and a 10x step: on a busy machine
                // a short sleep waits for a CPU when it wakes (3 ms measured
                // up to 16 ms), and the gate must still see the step.
                &format!("{} sleep {ms}", fixture()),
                "-S",
                "sh",
                "true",
            ],
        );
        no_password(&o);
    }
    let o = recorded(&url, &["history"]);
    let h = String::from_utf8_lossy(&o.stdout);
    assert!(
        h.contains("#2") && h.contains("branch=feature") && h.contains("<script>"),
        "{h}"
    );
    let o = check_slower(&url, "branch=main", "20", &[]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{md}{}", stderr(&o));
    assert!(md.contains("❌"));
    let dir = tempdir();
    let (o, text) = html_report(&url, &dir.path().join("r.html"), &[]);
    no_password(&o);
    assert!(text.contains("&lt;script&gt;") && !text.contains("<script"));
    assert!(!text.contains(PASSWORD), "password in the report");
    assert!(text.contains("postgres://cmdscope:***@"));
    // The command line stored with the session has its password removed too.
    let mut store = open_store(&url);
    let s = all_sessions(&mut store);
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
    let mut child = counted_run(&url, "100000", &counter, &[])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_finished_runs(&counter, 20);
    child.kill().unwrap();
    child.wait().unwrap();
    let finished = finished_runs(&counter);
    let s = sessions_once_stored(&mut open_store(&url), finished);
    assert_eq!(s[0].status, "running");
    assert_finished_runs_stored(s[0].cells[0].runs, finished);

    // Runs made from a schedule, whose reports cmdscope may not have read.
    let url = server.create_db("cmdscope_killed_scheduled");
    let counter = dir.path().join("made");
    let lines = kill_9_scheduled_run(&url, &counter, 200, Some(Duration::from_millis(300)));
    let s = sessions_once_stored(&mut open_store(&url), lines - 1);
    assert_eq!(s[0].status, "running");
    assert_scheduled_runs_stored(s[0].cells[0].runs, lines);

    // Instances of a concurrency batch that never ended.
    let url = server.create_db("cmdscope_killed_concurrent");
    let counter = dir.path().join("instances");
    let lines = kill_9_counted(
        concurrent_counted_run(&url, &counter, 4),
        &counter,
        100,
        None,
    );
    let s = sessions_once_stored(&mut open_store(&url), lines - 4);
    assert_eq!(s[0].status, "running");
    assert_instances_stored(s[0].cells[0].runs, lines, 4);
}

fn newer_schema_and_bad_password(server: &Server) {
    let url = server.create_db("cmdscope_newer");
    drop(open_store(&url));
    let mut c = client(&url);

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

/// The same database reached through every form of connection string the
/// driver reads (key/value, quoted, a password in a URL's query, a
/// percent-encoded key, the environment): each works, and the password is
/// in nothing printed, exported, reported or stored. Forms the driver
/// refuses (a key in upper case, an unclosed quote, an unknown key) are
/// refused with one line that holds no password, and create no file.
fn passwords_are_never_printed_in_any_form_the_driver_reads(server: &Server) {
    use std::str::FromStr;
    let url = server.create_db("cmdscope_forms");
    let config = postgres::Config::from_str(&url).unwrap();
    let host = match &config.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        postgres::config::Host::Unix(p) => p.display().to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap().to_string();
    let password = String::from_utf8(config.get_password().unwrap().to_vec()).unwrap();
    let db = config.get_dbname().unwrap().to_string();
    let kv = |key: &str, value: &str| {
        format!("host={host} port={port} user={user} {key}={value} dbname={db}")
    };
    let dir = tempdir();
    let d = dir.path();
    let never_printed = |texts: &[&[u8]], what: &str| {
        for t in texts {
            let t = String::from_utf8_lossy(t);
            assert!(!t.contains(&password), "{what}: password printed: {t}");
        }
    };
    let forms = [
        kv("password", &password),
        kv("password", &format!("'{password}'")),
        format!("postgresql://{user}@{host}:{port}/{db}?password={password}"),
        format!("postgresql://{user}@{host}:{port}/{db}?pass%77ord={password}"),
    ];
    for (i, store) in forms.iter().enumerate() {
        let out = d.join(format!("{i}.json"));
        let o = run_true_exporting(store, "3", &out);
        assert!(o.status.success(), "{store}: {}", stderr(&o));
        never_printed(
            &[&o.stdout, &o.stderr, &std::fs::read(&out).unwrap()],
            "run",
        );
        let o = with_store(store, &["history"]);
        assert!(o.status.success(), "{}", stderr(&o));
        never_printed(&[&o.stdout, &o.stderr], "history");
        let html = d.join(format!("{i}.html"));
        let o = with_store(store, &["report", "--html", html.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        never_printed(
            &[&o.stdout, &o.stderr, &std::fs::read(&html).unwrap()],
            "report",
        );
        let site = d.join(format!("site{i}"));
        let o = with_store(store, &["report", "--site", site.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        for page in std::fs::read_dir(&site).unwrap() {
            never_printed(&[&std::fs::read(page.unwrap().path()).unwrap()], "site");
        }
    }
    // Through the environment too.
    let o = isolated()
        .args(["history"])
        .env("CMDSCOPE_STORE", &forms[0])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    never_printed(&[&o.stdout, &o.stderr], "CMDSCOPE_STORE");
    let mut store = open_store(&url);
    let sessions = all_sessions(&mut store);
    assert_eq!(sessions.len(), forms.len());
    for s in &sessions {
        assert!(!s.command_line.contains(&password), "{}", s.command_line);
        assert!(s.command_line.contains("***"), "{}", s.command_line);
    }
    // What the driver refuses is refused, whole, before anything is made.
    let work = tempdir();
    for store in [
        format!("postgresql://{user}@{host}:{port}/{db}?PASSWORD={password}"),
        kv("PassWord", &password),
        kv("password", &format!("'{password}")),
        format!("{} sslcert=x", kv("password", &password)),
    ] {
        for args in [
            &["run", "--runs", "2", "--style", "none", "true"][..],
            &["history"],
        ] {
            let o = isolated()
                .args(args)
                .arg("--store")
                .arg(&store)
                .current_dir(work.path())
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(2), "{args:?} {}", stderr(&o));
            assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
            assert!(
                stderr(&o).contains("not a PostgreSQL connection string"),
                "{}",
                stderr(&o)
            );
            never_printed(&[&o.stdout, &o.stderr], "refused");
            assert_eq!(
                std::fs::read_dir(work.path()).unwrap().count(),
                0,
                "a file was made"
            );
        }
    }
    assert_eq!(all_sessions(&mut open_store(&url)).len(), forms.len());
}
