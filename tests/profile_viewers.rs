//! `explain --profile`'s files for speedscope and the Firefox Profiler,
//! proved the way their users would find out: speedscope's file is
//! validated against the schema speedscope publishes (from its npm
//! package) and loaded offline by speedscope's own app (the same package)
//! in headless Chromium, with no error in its console; the Firefox
//! Profiler's file has the shape samply's writer (fxprof-processed-profile)
//! gives the same profile, and holds together as the profiler's processed
//! format requires (every column as long as its table, every index in
//! range, prefixes before their stacks).
//!
//! The speedscope package and Python's jsonschema are installed by .ci/run
//! (`npm install --prefix target/viewers speedscope`, `pip install
//! jsonschema`); without them the test says `SKIPPED: …` loudly, and in CI
//! (`CI=true`) it fails.

#[path = "common/browser.rs"]
mod browser;
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use browser::*;
use common::*;
use serde_json::Value;

/// The speedscope npm package (its built app and its schema), where
/// .ci/run installs it or where CMDSCOPE_SPEEDSCOPE says.
fn speedscope_package() -> Option<PathBuf> {
    let dir = std::env::var_os("CMDSCOPE_SPEEDSCOPE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/viewers/node_modules/speedscope")
        });
    dir.join("dist/release/index.html").is_file().then_some(dir)
}

/// Two cells of a program nobody here wrote (dash), one doing twice the
/// other's work, profiled with both viewer files and the JSON.
fn profiled(dir: &Path) -> (Value, Value, Value) {
    let speedscope = dir.join("profile.speedscope.json");
    let firefox = dir.join("profile.firefox.json");
    let doc = dir.join("profile.json");
    ok(cmdscope(&[
        "explain",
        "--profile",
        "--runs",
        "3",
        "--speedscope",
        speedscope.to_str().unwrap(),
        "--firefox-profile",
        firefox.to_str().unwrap(),
        "--json",
        doc.to_str().unwrap(),
        "-L",
        "n",
        "30000,60000",
        "sh -c 'i=0; while [ $i -lt {n} ]; do i=$((i+1)); done'",
    ]));
    (read_json(&speedscope), read_json(&firefox), read_json(&doc))
}

#[test]
fn speedscope_accepts_the_file_and_its_app_shows_every_cell() {
    let dir = tempdir();
    let (ss, _, doc) = profiled(dir.path());
    let cells = doc["profile"]["cells"].as_array().unwrap();
    // One profile per cell, side by side, in seconds per run: the weights
    // add up to the cell's sampled time.
    let profiles = ss["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2, "{ss:#}");
    let frames = ss["shared"]["frames"].as_array().unwrap();
    for (p, c) in profiles.iter().zip(cells) {
        assert_eq!(p["type"], "sampled");
        assert_eq!(p["unit"], "seconds");
        assert!(
            p["name"]
                .as_str()
                .unwrap()
                .starts_with(c["name"].as_str().unwrap()),
            "{p:#}"
        );
        let sum: f64 = p["weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_f64().unwrap())
            .sum();
        let sampled = c["sampled_seconds"].as_f64().unwrap();
        assert!(
            (sum - sampled).abs() <= 1e-9 + 1e-6 * sampled,
            "{sum} vs {sampled}"
        );
        // The same sum, to the last bits serde_json's parser may round.
        let end = p["endValue"].as_f64().unwrap();
        assert!((end - sum).abs() <= 1e-12 * sum, "{end} vs {sum}");
        for s in p["samples"].as_array().unwrap() {
            for f in s.as_array().unwrap() {
                assert!((f.as_u64().unwrap() as usize) < frames.len());
            }
        }
    }
    let Some(package) = speedscope_package() else {
        skip("the speedscope npm package is not installed (npm install --prefix target/viewers speedscope); its schema and app were not tried");
        return;
    };
    // The schema speedscope publishes, as its package ships it.
    let schema = package.join("dist/release/file-format-schema.json");
    let file = dir.path().join("profile.speedscope.json");
    let check = Command::new("python3")
        .arg("-c")
        .arg(
            "import json, sys, jsonschema\n\
             schema = json.load(open(sys.argv[1]))\n\
             jsonschema.validate(json.load(open(sys.argv[2])), schema)\n\
             print('valid')",
        )
        .arg(&schema)
        .arg(&file)
        .output()
        .expect("python3");
    let err = String::from_utf8_lossy(&check.stderr);
    if err.contains("No module named 'jsonschema'") {
        skip("Python's jsonschema is not installed (pip install jsonschema); the schema was not checked");
    } else {
        assert!(
            check.status.success(),
            "speedscope's schema refuses the file: {err}"
        );
    }
    // A file the schema refuses is refused here too: the check can fail.
    let broken = dir.path().join("broken.json");
    let mut bad = ss.clone();
    bad["profiles"][0]["unit"] = "furlongs".into();
    std::fs::write(&broken, serde_json::to_vec(&bad).unwrap()).unwrap();
    let refused = Command::new("python3")
        .arg("-c")
        .arg("import json, sys, jsonschema\njsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))")
        .arg(&schema)
        .arg(&broken)
        .status()
        .unwrap();
    if !err.contains("No module named") {
        assert!(!refused.success(), "the schema check accepts anything");
    }

    // speedscope's own app, offline: the way its command-line tool opens a
    // file (a script that hands the file to the app, named in the URL).
    let Some(browser) = browser_or_skip("speedscope") else {
        return;
    };
    let bytes = std::fs::read(&file).unwrap();
    let loader = dir.path().join("load-profile.js");
    std::fs::write(
        &loader,
        format!(
            "speedscope.loadFileFromBase64({}, {})",
            serde_json::to_string("profile.speedscope.json").unwrap(),
            serde_json::to_string(&base64(&bytes)).unwrap()
        ),
    )
    .unwrap();
    let url = format!(
        "file://{}#localProfilePath={}",
        package.join("dist/release/index.html").display(),
        loader.display()
    );
    let user_data = dir.path().join("chromium");
    let png = dir.path().join("speedscope.png");
    let o = headless(
        &browser,
        &user_data,
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--virtual-time-budget=10000".into(),
            "--window-size=1400,900".into(),
            format!("--screenshot={}", png.display()),
        ],
        &url,
    );
    let log = String::from_utf8_lossy(&o.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(o.status.success(), "{log}");
    assert!(
        !console
            .iter()
            .any(|l| l.contains("rror") || l.contains("Uncaught") || l.contains("Failed")),
        "speedscope's console: {console:#?}"
    );
    keep(&png, "profile-speedscope.png");
    // The app drew the profile: the page is not blank.
    let (info, pixels) = decode(std::fs::read(&png).unwrap());
    let distinct: BTreeSet<&[u8]> = pixels
        .chunks(info.line_size / info.width as usize)
        .collect();
    assert!(
        distinct.len() > 20,
        "{} colours: a blank page",
        distinct.len()
    );
    // Its profile menu lists every cell, the first one shown ("1/2").
    let dom = dump_dom(&browser, &user_data, &url);
    assert!(dom.contains("(1/2)"), "{dom}");
    for c in cells {
        let shown = html_escaped(c["name"].as_str().unwrap());
        assert!(dom.contains(&shown), "{shown} not in {dom}");
    }
}

/// Text as the DOM dump shows it.
fn html_escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Standard base64, as the speedscope command-line tool passes the file.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Object keys at every path of a JSON value (arrays: their first element).
fn shape(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                out.insert(p.clone());
                shape(x, &p, out);
            }
        }
        Value::Array(a) => {
            if let Some(x) = a.iter().find(|x| !x.is_null()) {
                shape(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

/// samply's writer's profile of one thread with two frames and a sample.
fn samply_reference() -> Value {
    use fxprof_processed_profile::*;
    let mut p = Profile::new(
        "reference",
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        SamplingInterval::from_millis(1),
    );
    p.set_symbolicated(true);
    let process = p.add_process("cell", 1, Timestamp::from_millis_since_reference(0.0));
    let thread = p.add_thread(
        process,
        1,
        Timestamp::from_millis_since_reference(0.0),
        true,
    );
    p.set_thread_samples_weight_type(thread, WeightType::TracingMs);
    p.add_initial_visible_thread(thread);
    p.add_initial_selected_thread(thread);
    let other: CategoryPairHandle = p.add_category("User", CategoryColor::Blue).into();
    let mut prefix = None;
    for name in ["main", "work"] {
        let s = p.intern_string(name);
        let frame = p.intern_frame(
            thread,
            FrameInfo {
                frame: Frame::Label(s),
                category_pair: other,
                flags: FrameFlags::empty(),
            },
        );
        prefix = Some(p.intern_stack(thread, prefix, frame));
    }
    p.add_sample(
        thread,
        Timestamp::from_millis_since_reference(0.0),
        prefix,
        CpuDelta::from_millis(1.0),
        1,
    );
    serde_json::to_value(&p).unwrap()
}

fn column_len(table: &Value, column: &str) -> usize {
    table[column]
        .as_array()
        .unwrap_or_else(|| panic!("{column} is not a column"))
        .len()
}

#[test]
fn the_firefox_profile_has_samplys_shape_and_holds_together() {
    let dir = tempdir();
    let (_, ff, doc) = profiled(dir.path());
    // The same keys at every path as samply's writer gives (a label frame
    // there has no resource: our frames all have their module as one).
    let mut ours = BTreeSet::new();
    shape(&ff, "", &mut ours);
    let mut theirs = BTreeSet::new();
    shape(&samply_reference(), "", &mut theirs);
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    let extra: Vec<&String> = ours.difference(&theirs).collect();
    assert!(
        missing.is_empty(),
        "keys samply writes and we do not: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "keys we write and samply does not: {extra:?}"
    );
    assert_eq!(
        ff["meta"]["preprocessedProfileVersion"],
        samply_reference()["meta"]["preprocessedProfileVersion"]
    );
    // One process per cell, named after it; weights in milliseconds per
    // run adding up to the sampled time.
    let cells = doc["profile"]["cells"].as_array().unwrap();
    let threads = ff["threads"].as_array().unwrap();
    assert_eq!(threads.len(), cells.len());
    for (t, c) in threads.iter().zip(cells) {
        assert_eq!(t["processName"], c["name"]);
        assert_eq!(t["samples"]["weightType"], "tracing-ms");
        let strings = t["stringArray"].as_array().unwrap().len();
        for table in [
            "frameTable",
            "funcTable",
            "stackTable",
            "resourceTable",
            "samples",
            "nativeSymbols",
            "markers",
        ] {
            let t = &t[table];
            let n = t["length"].as_u64().unwrap() as usize;
            for (k, v) in t.as_object().unwrap() {
                if let Value::Array(a) = v {
                    assert_eq!(a.len(), n, "{table}.{k}");
                }
            }
        }
        let index = |table: &str, column: &str| -> Vec<i64> {
            t[table][column]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap_or(-1))
                .collect()
        };
        let funcs = column_len(&t["funcTable"], "name");
        let frames = column_len(&t["frameTable"], "func");
        let stacks = column_len(&t["stackTable"], "frame");
        let resources = column_len(&t["resourceTable"], "name");
        assert!(index("funcTable", "name")
            .iter()
            .all(|&s| (0..strings as i64).contains(&s)));
        assert!(index("resourceTable", "name")
            .iter()
            .all(|&s| (0..strings as i64).contains(&s)));
        assert!(index("funcTable", "resource")
            .iter()
            .all(|&r| (-1..resources as i64).contains(&r)));
        assert!(index("frameTable", "func")
            .iter()
            .all(|&f| (0..funcs as i64).contains(&f)));
        assert!(index("stackTable", "frame")
            .iter()
            .all(|&f| (0..frames as i64).contains(&f)));
        for (i, p) in index("stackTable", "prefix").iter().enumerate() {
            assert!(*p < i as i64, "stack {i}'s prefix {p} is not before it");
        }
        assert!(index("samples", "stack")
            .iter()
            .all(|&s| (0..stacks as i64).contains(&s)));
        let ms: f64 = t["samples"]["weight"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_f64().unwrap())
            .sum();
        let sampled = c["sampled_seconds"].as_f64().unwrap() * 1e3;
        assert!(
            (ms - sampled).abs() <= 1e-6 + 1e-6 * sampled,
            "{ms} vs {sampled}"
        );
        let times: Vec<f64> = t["samples"]["timeDeltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(times.iter().all(|&d| d >= 0.0), "time goes forward");
    }
}
