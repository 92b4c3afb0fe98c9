//! The user's base directories, as the XDG base directory rules name them:
//! where cmdscope keeps its results store (data) and its copy of the
//! spawner's program (cache).

use std::path::PathBuf;

/// `$var` when set and not empty, else `$HOME/under_home`; `None` when
/// neither is set.
pub fn user_dir(var: &str, under_home: &str) -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    set(var)
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(under_home)))
}
