//! The `CROSSGEMM_*` environment: where the caches live and the switches read in more
//! than one layer. One place, so that every variable is read (and its values checked)
//! the same way.

use std::path::PathBuf;

/// Where the cache lives: `CROSSGEMM_CACHE_DIR`, else the platform's cache folder
/// (`$XDG_CACHE_HOME/crossgemm`, `~/.cache/crossgemm`, `~/Library/Caches/crossgemm`,
/// `%LOCALAPPDATA%\crossgemm`). `None` when none can be found: tune results then live
/// only in the process.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var("CROSSGEMM_CACHE_DIR") {
        return Some(d);
    }
    if cfg!(target_os = "windows") {
        return var("LOCALAPPDATA").map(|d| d.join("crossgemm"));
    }
    if cfg!(target_os = "macos") {
        return var("HOME").map(|h| h.join("Library/Caches/crossgemm"));
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("crossgemm"))
}

/// A boolean switch: `1`, `true` or `yes` (after trimming) turn it on.
pub(crate) fn flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref().map(str::trim),
        Ok("1") | Ok("true") | Ok("yes")
    )
}
