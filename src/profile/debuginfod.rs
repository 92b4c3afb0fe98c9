//! A debuginfod client: the debug file of a build id fetched over HTTP
//! (`GET URL/buildid/HEX/debuginfo`) from the servers `DEBUGINFOD_URLS`
//! names, and only then: without that variable cmdscope makes no network
//! call. Files are kept where elfutils' own client keeps them
//! (`DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`,
//! else `~/.cache/debuginfod_client`, as `HEX/debuginfo`), so gdb, perf
//! and cmdscope share one cache; a build id no server has is remembered
//! there as elfutils does (an empty file of mode 000) for ten minutes.
//! Each server gets `DEBUGINFOD_TIMEOUT` seconds (default 30).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::identity::hex;

/// How long a miss is remembered (elfutils' default `cache_miss_s`).
const MISS_KEPT: Duration = Duration::from_secs(600);
/// The largest debug file fetched: far above any real one, and a bound on
/// what a misbehaving server can make cmdscope write.
const MAX_BYTES: u64 = 4 << 30;

#[derive(Clone, Debug)]
pub struct Client {
    urls: Vec<String>,
    cache: PathBuf,
    timeout: Duration,
}

/// What a fetch gave: the cached file, or why there is none.
#[derive(Debug)]
pub enum Fetched {
    /// Read from the cache (no request made) or downloaded now, from `url`.
    File { path: PathBuf, url: Option<String> },
    /// Every server answered that it has no such build id.
    Missing,
    /// A server could not be asked (the first error, in words).
    Failed(String),
}

impl Client {
    /// The client `DEBUGINFOD_URLS` asks for; `None` when it is unset or
    /// empty.
    pub fn from_env() -> Option<Client> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let urls: Vec<String> = var("DEBUGINFOD_URLS")?
            .split_whitespace()
            .map(|u| u.trim_end_matches('/').to_string())
            .filter(|u| !u.is_empty())
            .collect();
        if urls.is_empty() {
            return None;
        }
        let cache = var("DEBUGINFOD_CACHE_PATH")
            .map(PathBuf::from)
            .or_else(|| {
                crate::dirs::user_dir("XDG_CACHE_HOME", ".cache")
                    .map(|d| d.join("debuginfod_client"))
            })
            .unwrap_or_else(|| std::env::temp_dir().join("cmdscope-debuginfod"));
        let timeout = var("DEBUGINFOD_TIMEOUT")
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|&t| t > 0)
            .map_or(Duration::from_secs(30), Duration::from_secs);
        Some(Client {
            urls,
            cache,
            timeout,
        })
    }

    /// The debug file of `build_id`: from the cache, else from the first
    /// server that has it.
    pub fn debuginfo(&self, build_id: &[u8]) -> Fetched {
        let id = hex(build_id);
        let dir = self.cache.join(&id);
        let path = dir.join("debuginfo");
        if let Ok(m) = std::fs::metadata(&path) {
            if m.permissions().mode() & 0o777 != 0 {
                return Fetched::File { path, url: None };
            }
            let age = m
                .modified()
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok());
            if age.is_some_and(|age| age < MISS_KEPT) {
                return Fetched::Missing;
            }
            let _ = std::fs::remove_file(&path);
        }
        let mut first_error = None;
        let mut missing = 0;
        for url in &self.urls {
            let full = format!("{url}/buildid/{id}/debuginfo");
            match self.download(&full, &dir, &path) {
                Ok(true) => {
                    return Fetched::File {
                        path,
                        url: Some(url.clone()),
                    }
                }
                Ok(false) => missing += 1,
                Err(e) => {
                    first_error.get_or_insert(format!("{url}: {e}"));
                }
            }
        }
        if missing == self.urls.len() {
            remember_miss(&dir, &path);
            return Fetched::Missing;
        }
        Fetched::Failed(first_error.unwrap_or_default())
    }

    /// Ok(false) for a 404; the body goes to a temporary file beside the
    /// cache entry and is renamed into place once complete.
    fn download(&self, url: &str, dir: &Path, path: &Path) -> Result<bool, String> {
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .timeout_global(Some(self.timeout))
                .http_status_as_error(false)
                .build(),
        );
        let response = agent.get(url).call().map_err(|e| e.to_string())?;
        match response.status().as_u16() {
            200 => {}
            404 => return Ok(false),
            s => return Err(format!("HTTP status {s}")),
        }
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| e.to_string())?;
        let mut body = response.into_body();
        let mut reader = body.with_config().limit(MAX_BYTES).reader();
        std::io::copy(&mut reader, &mut tmp).map_err(|e| e.to_string())?;
        tmp.flush().map_err(|e| e.to_string())?;
        tmp.persist(path).map_err(|e| e.to_string())?;
        Ok(true)
    }
}

/// elfutils' negative cache entry: an empty file that nobody may read.
fn remember_miss(dir: &Path, path: &Path) {
    if std::fs::create_dir_all(dir).is_ok() && std::fs::write(path, b"").is_ok() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_miss_asks_no_server() {
        let cache = tempfile::tempdir().unwrap();
        // A server nobody listens on: a request would fail, not miss.
        let client = Client {
            urls: vec!["http://127.0.0.1:9".into()],
            cache: cache.path().to_path_buf(),
            timeout: Duration::from_secs(2),
        };
        let id = [0xab, 0xcd];
        assert!(matches!(client.debuginfo(&id), Fetched::Failed(_)));
        let dir = cache.path().join("abcd");
        remember_miss(&dir, &dir.join("debuginfo"));
        assert!(matches!(client.debuginfo(&id), Fetched::Missing));
        std::fs::remove_file(dir.join("debuginfo")).unwrap();
        std::fs::write(dir.join("debuginfo"), b"\x7fELF").unwrap();
        match client.debuginfo(&id) {
            Fetched::File { path, url } => {
                assert_eq!(path, dir.join("debuginfo"));
                assert_eq!(url, None);
            }
            other => panic!("{other:?}"),
        }
    }
}
