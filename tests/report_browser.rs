//! The HTML report in a real browser: headless Chromium (the distribution's
//! package) renders a report whose benchmark names and labels are markup,
//! dumps the DOM and takes a screenshot. Asserts that the user text is text,
//! that no script exists or ran, and that the SVG charts were drawn.
//!
//! Without Chromium the test prints `SKIPPED: …` and passes, except in CI
//! (`CI=true`), where it fails: .ci/run installs chromium.

#[path = "common/browser.rs"]
mod browser;
mod common;

use std::path::Path;
use std::process::Command;

use browser::*;
use common::*;

const EVIL: &str = "<script>alert(1)</script>";

#[test]
fn report_renders_in_chromium_and_user_text_stays_text() {
    let Some(browser) = browser_or_skip("report") else {
        return;
    };
    let dir = tempdir();
    let db = dir.path().join("r.db");
    let marker = dir.path().join("script-ran");
    // A name that would create a file if it were ever run by a shell, and
    // one that would call alert() if it were ever run by the browser.
    let shell_evil = format!("<img src=x onerror=alert(2)>$(touch {})", marker.display());
    for (label, ms) in [("<b>base</b>", "2"), ("<i>next</i>", "3")] {
        let o = with_store(
            &db,
            &[
                "run",
                "--runs",
                "8",
                "--style",
                "none",
                "--label",
                &format!("who={label}"),
                "-n",
                EVIL,
                &format!("{} busy {ms}", fixture()),
                "-n",
                &shell_evil,
                &format!("{} busy 1", fixture()),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let html = dir.path().join("report.html");
    let o = with_store(&db, &["report", "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let url = format!("file://{}", html.display());
    let profile = dir.path().join("profile");

    // The DOM as the browser built it.
    let dom = dump_dom(&browser, &profile, &url);
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "escaped name in the DOM"
    );
    assert!(!dom.to_lowercase().contains("<script"), "no script element");
    assert!(!dom.contains("<img"), "no element from user text");
    // The latest session is reported: its label is text, not an element.
    assert!(!dom.contains("<i>next</i>") && dom.contains("&lt;i&gt;next&lt;/i&gt;"));
    assert!(dom.matches("<svg").count() >= 4, "charts in the DOM");
    for class in [
        "class=\"bar\"",
        "class=\"box\"",
        "class=\"interval\"",
        "class=\"line\"",
    ] {
        assert!(dom.contains(class), "chart element {class}");
    }
    assert!(!marker.exists(), "a shell ran user text");

    // The picture: non-trivial, many colours (charts drawn, not a blank page).
    let png_path = dir.path().join("shot.png");
    let bytes = screenshot(&browser, &profile, &png_path, "1200,2000", &url);
    assert!(bytes.len() > 20_000, "screenshot of {} bytes", bytes.len());
    let (info, buf) = decode(bytes);
    assert_eq!((info.width, info.height), (1200, 2000));
    let channels = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    let mut chart_blue = 0usize;
    for px in buf[..info.buffer_size()].chunks(channels) {
        colours.insert(px[..3.min(channels)].to_vec());
        // The first series colour (#0072b2), drawn only by the charts.
        if channels >= 3 && px[0] < 30 && (90..140).contains(&px[1]) && (160..200).contains(&px[2])
        {
            chart_blue += 1;
        }
    }
    assert!(
        colours.len() > 50,
        "only {} colours: blank page?",
        colours.len()
    );
    assert!(
        chart_blue > 2000,
        "chart colour on {chart_blue} pixels only"
    );
    // If a script had run, alert() would have blocked or failed the
    // screenshot; the CSP forbids scripts anyway. Keep the picture for people.
    keep(&png_path, "report-screenshot.png");
}

/// `report --site`: the index links every benchmark, a benchmark's page has
/// its history chart with the change point marked and labelled with the
/// commit, and names and labels that are markup stay text.
#[test]
fn site_renders_in_chromium_with_changes_marked() {
    let Some(browser) = browser_or_skip("site") else {
        return;
    };
    let dir = tempdir();
    let db = dir.path().join("site.db");
    // EVIL takes twice as long from commit <i>c7</i> on; "second" does not
    // change. The sessions are imported results files with fixed times, not
    // runs: this test is about what the site draws, and on a busy machine
    // load that comes and goes between real sessions is a real change of
    // wall time (the detection itself is tested by simulation in
    // analysis::changes and on real runs in tests/changes.rs).
    for i in 1..=12 {
        let ms = if i < 7 { 0.010 } else { 0.020 };
        let file = dir.path().join(format!("session-{i}.json"));
        write_results_file(
            &file,
            &[
                (EVIL, times_around(ms, 6)),
                ("second", times_around(0.005, 6)),
            ],
        );
        let o = with_store(
            &db,
            &[
                "import",
                "--label",
                &format!("commit=<i>c{i}</i>"),
                file.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let site = dir.path().join("site");
    let o = with_store(&db, &["report", "--site", site.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile = dir.path().join("profile");
    let dom = |page: &Path| dump_dom(&browser, &profile, &format!("file://{}", page.display()));

    let index = dom(&site.join("index.html"));
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;";
    let links: Vec<&str> = index
        .split("<a href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|h| h.starts_with("bench-"))
        .collect();
    assert_eq!(links.len(), 2, "every benchmark linked: {index}");
    for l in &links {
        assert!(site.join(l).is_file(), "linked page {l} exists");
    }
    let evil_page = index
        .split("<a href=\"")
        .find(|s| s.contains(&format!("\">{escaped}</a>")))
        .and_then(|s| s.split('"').next())
        .expect("the hostile benchmark is linked by its name, as text");
    assert!(index.contains(">second</a>"), "{index}");
    assert!(
        !index.to_lowercase().contains("<script"),
        "no script element"
    );
    assert!(!index.contains("<i>"), "labels are text");

    let page_path = site.join(evil_page);
    let page = dom(&page_path);
    assert!(page.contains(&format!("<h1>{escaped}</h1>")), "{page}");
    assert!(!page.to_lowercase().contains("<script") && !page.contains("<i>"));
    assert!(page.contains("class=\"line\""), "history chart drawn");
    // The change is marked where the commit <i>c7</i> starts, as text.
    let mark = page.split("<g class=\"mark\">").nth(1).unwrap_or_else(|| {
        // What the history looked like, for the failure message.
        let o = Command::new(bin())
            .args(["changes", "--store"])
            .arg(&db)
            .output()
            .unwrap();
        panic!(
            "no change point marked on the chart; changes says:\n{}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    assert!(mark.contains("&lt;i&gt;c7&lt;/i&gt;</text>"), "{mark}");
    assert_eq!(page.matches("<g class=\"mark\">").count(), 1, "{page}");
    // The change list's row, classed by the event's kind: a step here.
    let row = page
        .split("<tr class=\"step\">")
        .nth(1)
        .expect("change list");
    assert!(row.contains("commit=&lt;i&gt;c7&lt;/i&gt;") && row.contains("slower"));

    // The picture: drawn, with the change mark's colour (#d55e00).
    let png_path = dir.path().join("site.png");
    let bytes = screenshot(
        &browser,
        &profile,
        &png_path,
        "1000,1300",
        &format!("file://{}", page_path.display()),
    );
    let (info, buf) = decode(bytes);
    let channels = info.color_type.samples();
    let orange = buf[..info.buffer_size()]
        .chunks(channels)
        // #d55e00 blended with white by anti-aliasing: red well above
        // green, little blue (the box plot's #e69f00 has red - green < 72).
        .filter(|px| {
            channels >= 3 && px[0] > 150 && px[0] as i32 - px[1] as i32 > 80 && px[2] < 150
        })
        .count();
    assert!(orange > 150, "change mark drawn on {orange} pixels only");
    keep(&png_path, "site-screenshot.png");
}

/// `report --site` draws every kind of event as what it is: a drift as a
/// sloped band from the level before it to the level after it, an episode
/// as a shaded span, each with the commits at its edges; a machine-wide
/// shift on the page of every benchmark that changed there and on no
/// other; wander as a note. A benchmark run with --concurrency has its
/// throughput and latency histories on its page. The wall-time sessions
/// are imported results files (no load of the machine moves them: the
/// detection is tested in analysis::changes and tests/changes.rs); the
/// concurrency sessions are real runs of a sleep.
#[test]
fn site_draws_every_kind_of_event_and_a_concurrency_benchmarks_throughput() {
    use rand::{Rng, SeedableRng};
    let Some(browser) = browser_or_skip("site events") else {
        return;
    };
    let dir = tempdir();
    let db = dir.path().join("events.db");
    // The slide: 1.3 times slower over sessions 14-25 (in steps of 1/13),
    // as analysis::changes::simulated draws one.
    let slide = |i: usize| -> f64 {
        let share = ((i + 1).saturating_sub(14) as f64 / 13.0).min(1.0);
        0.010 * 1.3f64.powf(share)
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(54);
    let mut normal = || {
        let (u1, u2): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    };
    // Wander: AR(1), coefficient 0.9, stationary SD 3 %.
    let mut ar = 0.03 * normal();
    for i in 0..44 {
        ar = 0.9 * ar + 0.03 * (1.0f64 - 0.81).sqrt() * normal();
        let shifted = if i >= 30 { 0.008 * 1.25 } else { 0.008 };
        let episode = if (18..=22).contains(&i) {
            0.0115
        } else {
            0.010
        };
        let file = dir.path().join(format!("session-{i}.json"));
        write_results_file(
            &file,
            &[
                ("slide", times_around(slide(i), 6)),
                ("episode", times_around(episode, 6)),
                ("wander", times_around(0.010 * ar.exp(), 6)),
                ("shift a", times_around(shifted, 6)),
                ("shift b", times_around(shifted * 1.1, 6)),
                ("shift c", times_around(shifted * 1.2, 6)),
                ("shift d", times_around(shifted * 1.3, 6)),
            ],
        );
        let label = format!("commit=c{i:02}");
        let o = with_store(&db, &["import", "--label", &label, file.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for k in 0..3 {
        let o = with_store(
            &db,
            &[
                "run",
                "--style",
                "none",
                "--runs",
                "8",
                "--concurrency",
                "2",
                "--label",
                &format!("commit=k{k}"),
                "-n",
                "conc",
                "sleep 0.02",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let site = dir.path().join("site");
    let o = with_store(&db, &["report", "--site", site.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile = dir.path().join("profile");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let page_of = |name: &str| -> (std::path::PathBuf, String) {
        let file = index
            .split("<a href=\"")
            .find(|s| {
                s.split('<')
                    .next()
                    .is_some_and(|a| a.ends_with(&format!("\">{name}")))
            })
            .and_then(|s| s.split('"').next())
            .unwrap_or_else(|| panic!("no page of {name}: {index}"));
        let path = site.join(file);
        let dom = dump_dom(&browser, &profile, &format!("file://{}", path.display()));
        (path, dom)
    };
    // What the analysis said, for failure messages.
    let changes = || {
        let o = with_store(&db, &["changes"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let group = |dom: &str, class: &str| -> Option<String> {
        let g = dom.split(&format!("<g class=\"{class}\">")).nth(1)?;
        Some(g.split("</g>").next()?.to_string())
    };

    // The drift: a sloped band, from the level before to the level after
    // (higher on the right: 1.3 times slower), its size and the commits
    // at its edges, each within 3 sessions of the slide's (c14, c25).
    let (slide_path, dom) = page_of("slide");
    let drift = group(&dom, "drift").unwrap_or_else(|| panic!("no drift drawn:\n{}", changes()));
    let band = drift
        .split("<polygon class=\"slide\" points=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no sloped band: {drift}"));
    let ys: Vec<f64> = band
        .split([' ', ','])
        .skip(1)
        .step_by(2)
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(ys.len(), 4, "{band}");
    // SVG y grows downwards: the right edge's band is above the left's.
    assert!(ys[1] < ys[0] - 20.0 && ys[2] < ys[3] - 20.0, "{band}");
    assert!(drift.contains(">drift +"), "{drift}");
    let edges: Vec<usize> = drift
        .split("<text class=\"edge\"")
        .skip(1)
        .map(|t| {
            let text = t.split('>').nth(1).unwrap().split('<').next().unwrap();
            text.trim_start_matches('c').parse().unwrap()
        })
        .collect();
    assert_eq!(edges.len(), 2, "{drift}");
    assert!(
        edges[0].abs_diff(14) <= 3 && edges[1].abs_diff(25) <= 3,
        "{drift}"
    );
    assert!(
        dom.contains("<tr class=\"drift\">"),
        "drift in the event list"
    );
    assert!(
        group(&dom, "shift").is_none(),
        "no shift on a benchmark that did not change"
    );

    // The episode: a span with its edges, c18 and c22.
    let (_, dom) = page_of("episode");
    let ep = group(&dom, "episode").unwrap_or_else(|| panic!("no episode drawn:\n{}", changes()));
    assert!(
        ep.contains("<rect") && ep.contains(">c18</text>") && ep.contains(">c22</text>"),
        "{ep}"
    );
    assert!(ep.contains(">episode +15.0 %, then back</text>"), "{ep}");

    // The machine-wide shift: on each of the four benchmarks, at c30.
    for name in ["shift a", "shift b", "shift c", "shift d"] {
        let (_, dom) = page_of(name);
        let shift =
            group(&dom, "shift").unwrap_or_else(|| panic!("no shift on {name}:\n{}", changes()));
        assert!(
            shift.contains(">c30</text>") && shift.contains("of 7"),
            "{shift}"
        );
    }

    // Wander: a note, no event drawn.
    let (_, dom) = page_of("wander");
    assert!(
        dom.contains("<p class=\"wander\">Wander: "),
        "no wander note:\n{}",
        changes()
    );
    for class in ["drift", "episode", "mark"] {
        assert!(group(&dom, class).is_none(), "wander drawn as a {class}");
    }

    // The concurrency benchmark: its throughput and latency histories.
    let (_, dom) = page_of("conc [concurrency=2]");
    for metric in ["throughput", "latency_p50", "latency_p90", "latency_p99"] {
        let section = dom
            .split(&format!("<h2>{metric}</h2>"))
            .nth(1)
            .unwrap_or_else(|| panic!("no {metric} history on the page"));
        let section = section.split("<h2>").next().unwrap();
        assert!(section.contains("class=\"line\""), "{metric} chart drawn");
    }
    assert!(
        dom.contains("throughput (completions/s)"),
        "throughput as completions per second"
    );

    // The picture: the drift's band in its colour (#e69f00).
    let png_path = dir.path().join("site-events.png");
    let bytes = screenshot(
        &browser,
        &profile,
        &png_path,
        "1000,1300",
        &format!("file://{}", slide_path.display()),
    );
    let (info, buf) = decode(bytes);
    let channels = info.color_type.samples();
    let amber = buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|px| {
            channels >= 3
                && (200..=245).contains(&px[0])
                && (140..=185).contains(&px[1])
                && px[2] < 110
        })
        .count();
    assert!(amber > 300, "drift band drawn on {amber} pixels only");
    keep(&png_path, "site-events-screenshot.png");
}

/// A stored concurrency sweep's report: per cell its N and throughput,
/// the scaling curve drawn as `--plot` draws it and the law's fit (or why
/// it is withheld), with a name that is markup kept as text.
#[test]
fn a_concurrency_sweep_renders_its_throughput_and_scaling_curve() {
    let Some(browser) = browser_or_skip("report") else {
        return;
    };
    let dir = tempdir();
    let db = dir.path().join("c.db");
    let o = with_store(
        &db,
        &[
            "run",
            "--runs",
            "48",
            "--style",
            "none",
            "-L",
            "j",
            "1,2,4",
            "--concurrency",
            "{j}",
            "-n",
            "<b>sleepy</b> {j}",
            "sleep 0.02",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let html = dir.path().join("report.html");
    let o = with_store(&db, &["report", "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let url = format!("file://{}", html.display());
    let profile = dir.path().join("profile");
    let dom = dump_dom(&browser, &profile, &url);
    let section = dom
        .split("<h2>Concurrency</h2>")
        .nth(1)
        .expect("a concurrency section")
        .split("<h2>")
        .next()
        .unwrap();
    assert!(!section.contains("<b>"), "markup from a name");
    for n in ["1", "2", "4"] {
        assert!(
            section.contains(&format!(
                "&lt;b&gt;sleepy&lt;/b&gt; {n} (j = {n})</td><td class=\"num\">{n}</td>"
            )),
            "no row at N = {n}: {section}"
        );
    }
    assert!(section.matches("/s [").count() >= 3, "throughput intervals");
    assert!(
        section.contains("throughput by concurrency"),
        "scaling chart"
    );
    assert!(section.contains("class=\"line\""), "the curve is drawn");
    assert!(
        section.contains("Universal Scalability Law:"),
        "the fit's line"
    );
    let png_path = dir.path().join("shot.png");
    let bytes = screenshot(&browser, &profile, &png_path, "1200,3000", &url);
    assert!(bytes.len() > 20_000, "screenshot of {} bytes", bytes.len());
    keep(&png_path, "concurrency-report.png");
}
