//! The `CROSSGEMM_*` environment: the one place that reads and parses each variable, with
//! the values it accepts (the README's Environment table says the same). A variable set
//! to a value outside its set is reported once per process and value on stderr, naming
//! the variable, what it accepts and what is used instead; it never stops a program and is
//! never silently ignored. [`validate_all`] checks every variable once per process (a
//! device lookup or a kernel call runs it), so that a misspelt value shows even when no
//! code path of the run reads that variable.
//!
//! Variables are read each time they are asked for (tests and tools set them at run
//! time), and parsed here only; the layers above call these functions.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, RwLock};

/// One documented variable: its name and the values it accepts.
pub struct Var {
    /// `CROSSGEMM_...`.
    pub name: &'static str,
    /// The accepted values, as the warning and the README say them.
    pub accepts: &'static str,
    /// `Err(what is used instead)` for a value outside the set.
    check: fn(&str) -> Result<(), String>,
}

const FLAG: &str = "1, true, yes or on (set); 0, false, no, off or empty (unset)";

/// Every variable crossgemm reads (the library, the CLI, the test suites and CI).
pub const VARS: &[Var] = &[
    Var {
        name: "CROSSGEMM_DEVICE",
        accepts:
            "a device id (`cuda:N`, `opencl:P:D`, `host`) or a kind (`cuda`, `opencl`, `opencl-gpu`, `opencl-cpu`)",
        check: |v| {
            device_request_ok(v)
                .then_some(())
                .ok_or_else(|| "Device::best() fails with the devices found".into())
        },
    },
    Var {
        name: "CROSSGEMM_TUNE",
        accepts: "full (or 1, empty), cached, off (or 0)",
        check: |v| tune_mode_name(v).map(|_| ()).ok_or_else(|| "full".into()),
    },
    Var {
        name: "CROSSGEMM_CACHE_DIR",
        accepts: "a folder (created when missing)",
        // A file is reported by `cache_dir`, which every reader of the folder goes through.
        check: |_| Ok(()),
    },
    Var {
        name: "CROSSGEMM_TUNE_MAX",
        accepts: "a whole number >= 1",
        check: |v| {
            parse_positive(v)
                .map(|_| ())
                .ok_or_else(|| "the default: 48 on GPUs, 6 on CPU devices".into())
        },
    },
    Var {
        name: "CROSSGEMM_TUNE_BUDGET_MS",
        accepts: "a number of milliseconds > 0",
        check: |v| parse_ms(v).map(|_| ()).ok_or_else(|| "no time limit".into()),
    },
    Var {
        name: "CROSSGEMM_TUNE_EXACT",
        accepts: FLAG,
        check: check_flag,
    },
    Var {
        name: "CROSSGEMM_IGNORE_TABLES",
        accepts: FLAG,
        check: check_flag,
    },
    Var {
        // Read by `#[gemm_kernel]` at build time; listed so that it is documented and
        // checked with the rest.
        name: "CROSSGEMM_RECORDS",
        accepts: "a list of tuning-records files, separated as in PATH (read when the kernels are compiled)",
        check: |_| Ok(()),
    },
    Var {
        name: "CROSSGEMM_BINARY_CACHE_MB",
        accepts: "a whole number of MiB >= 0 (0: no compiled-kernel cache)",
        check: |v| {
            v.trim()
                .parse::<u64>()
                .map(|_| ())
                .map_err(|_| format!("{DEFAULT_BINARY_CACHE_MB}"))
        },
    },
    Var {
        name: "CROSSGEMM_POOL_KEEP_MB",
        accepts: "a whole number of MiB >= 0, or all (no freed memory goes back)",
        check: |v| {
            pool_keep_bytes_of(v)
                .map(|_| ())
                .ok_or_else(|| format!("{DEFAULT_POOL_KEEP_MB}"))
        },
    },
    Var {
        name: "CROSSGEMM_ALWAYS_COMPILE",
        accepts: FLAG,
        check: check_flag,
    },
    Var {
        name: "CROSSGEMM_LOG",
        accepts: FLAG,
        check: check_flag,
    },
    Var {
        name: "CROSSGEMM_STAGE",
        accepts: "auto (or empty), always, never",
        check: |v| one_of(v, &STAGE_MODES).map(|_| ()).ok_or_else(|| "auto".into()),
    },
    Var {
        name: "CROSSGEMM_ROW_COPY",
        accepts: "kernel (or empty), driver",
        check: |v| one_of(v, &ROW_COPY_MODES).map(|_| ()).ok_or_else(|| "kernel".into()),
    },
    Var {
        name: "CROSSGEMM_DUMP",
        accepts: "a folder (created when missing)",
        check: |v| match check_cache_dir(Path::new(v)) {
            Ok(()) => Ok(()),
            Err(_) => Err("nothing is dumped".into()),
        },
    },
    Var {
        name: "CROSSGEMM_REQUIRE_OPENCL",
        accepts: "1 (require) or 0 / empty (allow skipping)",
        check: check_switch,
    },
    Var {
        name: "CROSSGEMM_REQUIRE_CUDA",
        accepts: "1 (require) or 0 / empty (allow skipping)",
        check: check_switch,
    },
    Var {
        name: "CROSSGEMM_REQUIRE_NVRTC",
        accepts: "1 (require) or 0 / empty (allow skipping)",
        check: check_switch,
    },
    Var {
        name: "CROSSGEMM_TEST_DEVICES",
        accepts: "comma-separated device ids",
        check: |_| Ok(()),
    },
    Var {
        name: "CROSSGEMM_COMMIT",
        accepts: "any text (a source revision)",
        check: |_| Ok(()),
    },
    Var {
        name: "CROSSGEMM_EXP_DEFINES",
        accepts: "NAME=VALUE[,NAME=VALUE...] (C identifiers, unsigned values)",
        check: |v| {
            parse_defines(v)
                .map(|_| ())
                .ok_or_else(|| "no extra definitions".into())
        },
    },
];

/// The size limit of the compiled-kernel cache when `CROSSGEMM_BINARY_CACHE_MB` is unset.
pub(crate) const DEFAULT_BINARY_CACHE_MB: u64 = 1024;

/// The release threshold crossgemm gives a CUDA device's default memory pool when
/// `CROSSGEMM_POOL_KEEP_MB` is unset, MiB.
pub(crate) const DEFAULT_POOL_KEEP_MB: u64 = 256;

/// `CROSSGEMM_POOL_KEEP_MB`'s value in bytes (`all`: `u64::MAX`).
fn pool_keep_bytes_of(v: &str) -> Option<u64> {
    let v = v.trim();
    if v.eq_ignore_ascii_case("all") {
        return Some(u64::MAX);
    }
    v.parse::<u64>().ok().map(|mb| mb.saturating_mul(1 << 20))
}

/// `CROSSGEMM_POOL_KEEP_MB`: the bytes of freed stream-ordered memory the default memory
/// pool of a CUDA device crossgemm opens itself keeps for reuse (its release threshold; a
/// higher one already set is left as it is).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub fn pool_keep_bytes() -> u64 {
    checked("CROSSGEMM_POOL_KEEP_MB")
        .and_then(|v| pool_keep_bytes_of(&v))
        .unwrap_or(DEFAULT_POOL_KEEP_MB << 20)
}

/// The variable's value, `None` when unset or not Unicode (the latter reported).
fn raw(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) => Some(v),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => {
            warn_bad(name, &v.to_string_lossy(), "valid UTF-8", "it is ignored");
            None
        }
    }
}

/// Reports a bad value once per process per (variable, value).
fn warn_bad(name: &str, value: &str, accepts: &str, instead: &str) {
    static SEEN: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen
        .get_or_insert_with(HashSet::new)
        .insert((name.to_string(), value.to_string()))
    {
        eprintln!("crossgemm: warning: {name}={value:?} is not valid: it accepts {accepts}; using {instead}");
    }
}

fn var(name: &str) -> &'static Var {
    VARS.iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("{name} is not in env::VARS"))
}

/// Reads `name`, checks it against its set (warning once when outside it) and returns the
/// value when it is inside.
fn checked(name: &str) -> Option<String> {
    let v = raw(name)?;
    let spec = var(name);
    match (spec.check)(&v) {
        Ok(()) => Some(v),
        Err(instead) => {
            warn_bad(name, &v, spec.accepts, &instead);
            None
        }
    }
}

/// Checks every variable in [`VARS`] that is set, once per process.
pub fn validate_all() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for v in VARS {
            let _ = checked(v.name);
        }
    });
}

fn flag_value(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "" | "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn check_flag(v: &str) -> Result<(), String> {
    flag_value(v).map(|_| ()).ok_or_else(|| "off".into())
}

fn check_switch(v: &str) -> Result<(), String> {
    matches!(v.trim(), "" | "0" | "1")
        .then_some(())
        .ok_or_else(|| "a failure of the test that reads it".into())
}

fn parse_positive(v: &str) -> Option<usize> {
    v.trim().parse::<usize>().ok().filter(|&n| n > 0)
}

fn parse_ms(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|&ms| ms.is_finite() && ms > 0.0)
}

/// `CROSSGEMM_TUNE`'s canonical name (`full`, `cached`, `off`) for `v`, if it is one of
/// the accepted spellings.
pub fn tune_mode_name(v: &str) -> Option<&'static str> {
    // Without allocating: every launch reads the variable.
    let is = |s: &str| v.trim().eq_ignore_ascii_case(s);
    if is("") || is("full") || is("1") {
        Some("full")
    } else if is("off") || is("0") {
        Some("off")
    } else if is("cached") {
        Some("cached")
    } else {
        None
    }
}

/// Whether `v` is a well-formed `CROSSGEMM_DEVICE` request.
fn device_request_ok(v: &str) -> bool {
    let v = v.trim();
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(v, "" | "host" | "cuda" | "opencl" | "opencl-gpu" | "opencl-cpu")
        || v.strip_prefix("cuda:").is_some_and(num)
        || v.strip_prefix("opencl:")
            .and_then(|r| r.split_once(':'))
            .is_some_and(|(p, d)| num(p) && num(d))
}

/// A boolean switch (`CROSSGEMM_TUNE_EXACT`, `CROSSGEMM_ALWAYS_COMPILE`, `CROSSGEMM_LOG`):
/// see [`FLAG`] for the accepted values; anything else is reported and read as off.
pub(crate) fn flag(name: &str) -> bool {
    checked(name).and_then(|v| flag_value(&v)).unwrap_or(false)
}

fn parse_defines(v: &str) -> Option<Vec<(String, u32)>> {
    let ident = |n: &str| {
        n.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    v.split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            let (n, x) = d.split_once('=')?;
            let (n, x) = (n.trim(), x.trim().parse::<u32>().ok()?);
            ident(n).then(|| (n.to_string(), x))
        })
        .collect()
}

/// `CROSSGEMM_EXP_DEFINES`: `-D` definitions added to every CUDA compile, after the
/// config's own (a later definition of a name wins), for device experiments that switch
/// code an experiment patch keeps behind a macro (batch v3: `CG_ROT_BY_SM`). The tuning cache and the
/// records do not know them, so runs with them take a `--cache-dir` of their own; the
/// prebuilt CUBINs of an `aot` build do not match them (the compile options differ).
/// Read once per process, unlike the other variables: the process's kernel cache does not
/// key kernels by them, and a compile should not pay a lookup for an experiment hook.
#[cfg(feature = "cuda")]
pub(crate) fn exp_defines() -> &'static [(String, u32)] {
    static DEFINES: std::sync::OnceLock<Vec<(String, u32)>> = std::sync::OnceLock::new();
    DEFINES.get_or_init(|| {
        checked("CROSSGEMM_EXP_DEFINES")
            .and_then(|v| parse_defines(&v))
            .unwrap_or_default()
    })
}

/// `v` as one of `names` (case and surrounding space ignored; empty is the first name,
/// the default), if it is one.
fn one_of(v: &str, names: &[&'static str]) -> Option<&'static str> {
    let v = v.trim().to_ascii_lowercase();
    if v.is_empty() {
        return names.first().copied();
    }
    names.iter().copied().find(|&n| n == v)
}

/// A variable whose value is one of `names` (unset or bad: the first).
fn mode(var: &str, names: &[&'static str]) -> &'static str {
    checked(var).and_then(|v| one_of(&v, names)).unwrap_or(names[0])
}

/// `CROSSGEMM_STAGE`'s values, the default first.
const STAGE_MODES: [&str; 3] = ["auto", "always", "never"];

/// `CROSSGEMM_STAGE`: whether launches copy misaligned operands into aligned scratch
/// first: `auto` (the default: on problems of real work), `always` or `never`.
pub fn stage_mode() -> &'static str {
    mode("CROSSGEMM_STAGE", &STAGE_MODES)
}

/// `CROSSGEMM_ROW_COPY`'s values, the default first.
const ROW_COPY_MODES: [&str; 2] = ["kernel", "driver"];

/// `CROSSGEMM_ROW_COPY`: what copies staged operands' rows ([`crate::row_copy`]): a
/// kernel of crossgemm's (`kernel`, the default) or the driver's 2-D copy (`driver`).
pub fn row_copy_mode() -> &'static str {
    mode("CROSSGEMM_ROW_COPY", &ROW_COPY_MODES)
}

/// `CROSSGEMM_LOG`: one stderr line per JIT compile and tune.
pub(crate) fn log() -> bool {
    flag("CROSSGEMM_LOG")
}

/// `CROSSGEMM_IGNORE_TABLES`: launches and tunes leave the kernels' build-time config
/// tables out (to compare with them, or to distrust them).
pub fn ignore_tables() -> bool {
    flag("CROSSGEMM_IGNORE_TABLES")
}

/// `CROSSGEMM_COMMIT`: the source revision a benchmark report names (any text; `None`
/// when unset, or set to nothing but whitespace).
pub fn commit() -> Option<String> {
    checked("CROSSGEMM_COMMIT")
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `CROSSGEMM_TUNE`, as `full`, `cached` or `off` (unset or bad: `full`).
pub fn tune_mode() -> &'static str {
    checked("CROSSGEMM_TUNE")
        .and_then(|v| tune_mode_name(&v))
        .unwrap_or("full")
}

/// `CROSSGEMM_TUNE_MAX`: candidates per tune; `None` (unset or bad) means the default.
pub fn tune_max() -> Option<usize> {
    checked("CROSSGEMM_TUNE_MAX").and_then(|v| parse_positive(&v))
}

/// `CROSSGEMM_TUNE_BUDGET_MS`: one tune's time budget; `None` (unset or bad): no limit.
pub fn tune_budget_ms() -> Option<f64> {
    checked("CROSSGEMM_TUNE_BUDGET_MS").and_then(|v| parse_ms(&v))
}

/// `CROSSGEMM_BINARY_CACHE_MB`: the compiled-kernel cache's size limit in MiB.
pub(crate) fn binary_cache_mb() -> u64 {
    checked("CROSSGEMM_BINARY_CACHE_MB")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_BINARY_CACHE_MB)
}

/// `CROSSGEMM_DEVICE`, trimmed; `None` when unset or empty.
pub(crate) fn device() -> Option<String> {
    raw("CROSSGEMM_DEVICE")
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `CROSSGEMM_DUMP`: the folder every generated source and build log goes to.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn dump_dir() -> Option<PathBuf> {
    checked("CROSSGEMM_DUMP").filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `CROSSGEMM_REQUIRE_OPENCL=1` (the OpenCL backend's own tests).
#[cfg(all(test, feature = "opencl"))]
pub(crate) fn require_opencl() -> bool {
    checked("CROSSGEMM_REQUIRE_OPENCL").is_some_and(|v| v.trim() == "1")
}

/// Whether `dir` can be a cache folder: `Err(why)` when it, or a folder above it, is a
/// file (creating it would fail with "File exists" and nothing would be saved).
pub fn check_cache_dir(dir: &Path) -> Result<(), String> {
    match dir.ancestors().find(|a| !a.as_os_str().is_empty() && a.exists()) {
        Some(a) if !a.is_dir() => Err(if a == dir {
            format!("{} is a file, not a folder", dir.display())
        } else {
            format!("{} cannot be a folder: {} is a file", dir.display(), a.display())
        }),
        _ => Ok(()),
    }
}

static CACHE_DIR_OVERRIDE: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Makes `dir` this process's cache folder, over `CROSSGEMM_CACHE_DIR` and the platform
/// default (`None` undoes it): tuning results and compiled kernels both go there. The
/// `crossgemm` CLI's `--cache-dir` calls it.
pub fn set_cache_dir(dir: Option<PathBuf>) {
    *CACHE_DIR_OVERRIDE.write().unwrap_or_else(|e| e.into_inner()) = dir;
}

/// Where the cache lives, or why it cannot be used: [`set_cache_dir`]'s folder, else
/// `CROSSGEMM_CACHE_DIR`, else the platform's cache folder (`$XDG_CACHE_HOME/crossgemm`,
/// `~/.cache/crossgemm`, `~/Library/Caches/crossgemm`, `%LOCALAPPDATA%\crossgemm`).
/// `Ok(None)` when none can be found; `Err` when the folder named is a file.
pub fn cache_dir_checked() -> Result<Option<PathBuf>, String> {
    let set = CACHE_DIR_OVERRIDE.read().unwrap_or_else(|e| e.into_inner()).clone();
    let (dir, from) = match set {
        Some(d) => (Some(d), "the cache folder"),
        None => match raw("CROSSGEMM_CACHE_DIR").filter(|v| !v.is_empty()) {
            Some(d) => (Some(PathBuf::from(d)), "CROSSGEMM_CACHE_DIR"),
            None => (platform_cache_dir(), "the platform cache folder"),
        },
    };
    match dir {
        Some(d) => check_cache_dir(&d)
            .map(|()| Some(d))
            .map_err(|why| format!("{from}: {why}")),
        None => Ok(None),
    }
}

/// Where the cache lives (see [`cache_dir_checked`]). `None` when no folder can be found
/// or the one named is a file (reported once on stderr): tune results and compiled
/// kernels then live only in the process.
pub fn cache_dir() -> Option<PathBuf> {
    match cache_dir_checked() {
        Ok(d) => d,
        Err(why) => {
            static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
            let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
            if seen.get_or_insert_with(HashSet::new).insert(why.clone()) {
                eprintln!(
                    "crossgemm: warning: {why}: tuning results and compiled kernels are not saved (point CROSSGEMM_CACHE_DIR at a folder)"
                );
            }
            None
        }
    }
}

fn platform_cache_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_every_variable_has_a_set() {
        for v in ["1", "true", "YES", " on "] {
            assert_eq!(flag_value(v), Some(true), "{v}");
        }
        for v in ["", "0", "false", "No", "off"] {
            assert_eq!(flag_value(v), Some(false), "{v}");
        }
        assert_eq!(flag_value("maybe"), None);
        assert_eq!(parse_positive(" 12 "), Some(12));
        assert_eq!(parse_positive("0"), None);
        assert_eq!(parse_positive("abc"), None);
        for (v, want) in [
            (" Cached ", "cached"),
            ("", "full"),
            (" ", "full"),
            ("1", "full"),
            ("FULL", "full"),
            ("0", "off"),
            ("Off", "off"),
        ] {
            assert_eq!(tune_mode_name(v), Some(want), "{v:?}");
        }
        for bad in ["bogus", "fulll", "10", "cache"] {
            assert_eq!(tune_mode_name(bad), None, "{bad:?}");
        }
        assert_eq!(one_of(" Kernel ", &ROW_COPY_MODES), Some("kernel"));
        assert_eq!(one_of("", &ROW_COPY_MODES), Some("kernel"));
        assert_eq!(one_of("never", &STAGE_MODES), Some("never"));
        assert_eq!(one_of("never", &ROW_COPY_MODES), None);
        for ok in ["cuda:0", "opencl:0:1", "host", "opencl-cpu", ""] {
            assert!(device_request_ok(ok), "{ok}");
        }
        for bad in ["cuda:x", "opencl:0", "gpu", "opencl:1:"] {
            assert!(!device_request_ok(bad), "{bad}");
        }
        let check = |name: &str, v: &str| (var(name).check)(v);
        assert!(check("CROSSGEMM_ROW_COPY", "memcpy").is_err());
        assert!(check("CROSSGEMM_ROW_COPY", "Driver").is_ok());
        assert!(check("CROSSGEMM_BINARY_CACHE_MB", "-1").is_err());
        assert!(check("CROSSGEMM_BINARY_CACHE_MB", "0").is_ok());
        assert!(check("CROSSGEMM_TUNE_MAX", "0").is_err());
        assert_eq!(pool_keep_bytes_of(" 64 "), Some(64 << 20));
        assert_eq!(pool_keep_bytes_of("ALL"), Some(u64::MAX));
        assert!(check("CROSSGEMM_POOL_KEEP_MB", "-1").is_err());
        assert!(check("CROSSGEMM_POOL_KEEP_MB", "0").is_ok());
        assert_eq!(parse_ms(" 250.5 "), Some(250.5));
        for bad in ["0", "-3", "inf", "NaN", "soon"] {
            assert!(check("CROSSGEMM_TUNE_BUDGET_MS", bad).is_err(), "{bad}");
        }
        assert!(check("CROSSGEMM_REQUIRE_OPENCL", "yes").is_err());
        assert_eq!(
            parse_defines(" CG_ROT_BY_SM=1, _X2 = 40 ,"),
            Some(vec![("CG_ROT_BY_SM".into(), 1), ("_X2".into(), 40)])
        );
        assert_eq!(parse_defines(""), Some(vec![]));
        for bad in ["X", "X=-1", "2X=1", "X-Y=1", "X=1;Y=2"] {
            assert!(check("CROSSGEMM_EXP_DEFINES", bad).is_err(), "{bad}");
        }
        let names: HashSet<&str> = VARS.iter().map(|v| v.name).collect();
        assert_eq!(names.len(), VARS.len(), "each variable once");
    }

    #[test]
    fn a_file_is_no_cache_folder() {
        let f = std::env::temp_dir().join(format!("crossgemm-env-unit-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        assert!(check_cache_dir(&f).unwrap_err().contains("is a file"));
        assert!(check_cache_dir(&f.join("sub")).unwrap_err().contains("is a file"));
        assert!(check_cache_dir(&std::env::temp_dir().join("crossgemm-env-unit-missing/x")).is_ok());
        let _ = std::fs::remove_file(&f);
    }
}
