//! Headless Chromium (the distribution's package) for the tests that
//! look at what cmdscope writes the way people see it: find it, load a
//! page, dump its DOM, take a screenshot. Shared by tests/report_browser.rs
//! and tests/profile_viewers.rs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        let found = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

pub fn headless(
    browser: &Path,
    profile: &Path,
    extra: &[String],
    url: &str,
) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("run chromium")
}

/// Chromium, or `None` after saying that the `what` browser test is
/// skipped; in CI a missing browser fails the test.
pub fn browser_or_skip(what: &str) -> Option<PathBuf> {
    let browser = chromium();
    if browser.is_none() {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("the browser test must run in CI, but chromium is not installed");
        }
        eprintln!("SKIPPED: {what} browser test: chromium not found (apt-get install chromium)");
    }
    browser
}

/// The DOM of the page at `url` as the browser built it.
pub fn dump_dom(browser: &Path, profile: &Path, url: &str) -> String {
    let o = headless(browser, profile, &["--dump-dom".into()], url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// A screenshot of the page at `url` in a window of `size` ("W,H"), as
/// PNG bytes, written to `png`.
pub fn screenshot(browser: &Path, profile: &Path, png: &Path, size: &str, url: &str) -> Vec<u8> {
    let shot = headless(
        browser,
        profile,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={size}"),
        ],
        url,
    );
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    std::fs::read(png).expect("screenshot written")
}

/// A PNG's first frame: its description and pixels.
pub fn decode(bytes: Vec<u8>) -> (png::OutputInfo, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    (info, buf)
}

/// Keeps a copy of the picture under the target directory, for people.
pub fn keep(png: &Path, name: &str) {
    let _ = std::fs::copy(png, PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name));
}
