//! The tuner's disk cache: one JSON file per (kernel, target, device, driver, source),
//! holding the winner of every shape bucket tuned so far and the configs that failed.
//!
//! Everything that makes an old result meaningless (device, driver, generated source,
//! dtypes/layouts/epilogue through the IR hash, runtime version) is in the file's key,
//! so a stale file is never consulted for a new kernel; the candidate list is not, so
//! adding configs to a target does not throw away the winners (Triton #9822). Readers
//! never lock: writers replace the file by rename, so a reader sees the old or the new
//! file whole. Writers serialise their read-modify-write through an `O_EXCL` lock file
//! with a stale timeout, so that two processes tuning different shapes at once both
//! keep their results. A file that cannot be read or parsed, or that belongs to another
//! key, is reported in one stderr line and treated as empty: the cost is a retune,
//! never a crash or a kernel chosen for something else.

use gemm_core::TileConfig;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Written in every file; a reader refuses files of another format.
pub(crate) const FORMAT: &str = "crossgemm-tune-cache";
/// Bumped whenever the meaning of a field changes; other versions are retuned.
pub(crate) const VERSION: u32 = 1;

/// How long a writer waits for the lock before giving up on storing (the result is
/// still used in this process).
const LOCK_WAIT: Duration = Duration::from_secs(20);
/// A lock file older than this belongs to a writer that died: writers hold the lock
/// only for one read-modify-write (milliseconds).
const LOCK_STALE: Duration = Duration::from_secs(10);

/// Identity of one cache file. Every field must match for any entry to be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileKey {
    pub(crate) kernel: String,
    pub(crate) target: String,
    pub(crate) device_name: String,
    pub(crate) device_id: String,
    pub(crate) driver: String,
    /// Hash of the IR hash, the target's generated source, the runtime version and the
    /// timing protocol.
    pub(crate) source_hash: String,
}

impl FileKey {
    fn file_name(&self) -> String {
        let id = format!(
            "{}\0{}\0{}\0{}\0{}\0{}",
            self.kernel, self.target, self.device_name, self.device_id, self.driver, self.source_hash
        );
        let safe: String = self
            .kernel
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
            .take(48)
            .collect();
        format!("{safe}-{:016x}.json", gemm_core::ir::fnv1a(id.as_bytes()))
    }
}

/// The winner of one shape bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Winner {
    pub(crate) config: TileConfig,
    /// Median device time, ms, at `shape`.
    pub(crate) ms: f64,
    /// The shape that was actually timed (a bucket is represented by its first shape).
    pub(crate) shape: [usize; 3],
    /// How many candidates were timed.
    pub(crate) candidates: usize,
}

/// A config that failed, with why. Not retried while the file's key stays the same.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FailedConfig {
    pub(crate) config: TileConfig,
    pub(crate) stage: FailStage,
    pub(crate) reason: String,
}

/// The file's contents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CacheFile {
    pub(crate) format: String,
    pub(crate) version: u32,
    pub(crate) key: FileKey,
    /// Shape bucket (see [`shape_key`]) → winner.
    pub(crate) winners: BTreeMap<String, Winner>,
    pub(crate) failed: Vec<FailedConfig>,
    /// The target's limits (`TargetSpec` as JSON) when the file was last written; for
    /// tuning records. Absent in files of older writers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) target_spec: Option<serde_json::Value>,
    /// The compiler (NVRTC version, OpenCL driver) when the file was last written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) compiler: Option<String>,
}

impl CacheFile {
    fn empty(key: &FileKey) -> CacheFile {
        CacheFile {
            format: FORMAT.into(),
            version: VERSION,
            key: key.clone(),
            winners: BTreeMap::new(),
            failed: Vec::new(),
            target_spec: None,
            compiler: None,
        }
    }
}

/// (M, N, K) of a bucket key (`pow2:MxNxK` or `exact:MxNxK`).
pub(crate) fn bucket_dims(key: &str) -> Option<[usize; 3]> {
    let dims = key.split_once(':')?.1;
    let v: Vec<usize> = dims.split('x').map(|d| d.parse().ok()).collect::<Option<_>>()?;
    <[usize; 3]>::try_from(v).ok()
}

/// Sum over M, N, K of |ln a - ln b| (dimensions below 1 read as 1).
pub(crate) fn log_distance(a: [usize; 3], b: [usize; 3]) -> f64 {
    a.iter()
        .zip(&b)
        .map(|(&x, &y)| ((x.max(1) as f64).ln() - (y.max(1) as f64).ln()).abs())
        .sum()
}

/// Every usable tuning-cache file in `dir`, with its path, sorted by path. Files of
/// another format or version, and other files, are skipped silently.
pub(crate) fn read_all_paths(dir: &Path) -> Vec<(PathBuf, CacheFile)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, CacheFile)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .filter_map(|p| {
            let f = parse_file(&fs::read(&p).ok()?).ok()?;
            Some((p, f))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// [`read_all_paths`] without the paths.
pub(crate) fn read_all(dir: &Path) -> Vec<CacheFile> {
    read_all_paths(dir).into_iter().map(|(_, f)| f).collect()
}

/// Parses a cache file's bytes, checking format and version first.
fn parse_file(text: &[u8]) -> Result<CacheFile, String> {
    let v: serde_json::Value = serde_json::from_slice(text).map_err(|e| format!("not valid JSON ({e})"))?;
    if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err("not a crossgemm tuning cache".into());
    }
    match v.get("version").and_then(|f| f.as_u64()) {
        Some(x) if x == VERSION as u64 => {}
        other => return Err(format!("format version {other:?}, this crossgemm reads {VERSION}")),
    }
    serde_json::from_value(v).map_err(|e| format!("malformed ({e})"))
}

/// Whether `path` is a tuning-cache file or one of its lock or temporary files (what
/// `crossgemm cache clear` removes).
pub(crate) fn is_cache_artifact(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if name.contains(".json.tmp-") || name.ends_with(".json.lock") || name.ends_with(".tuning.lock") {
        return true;
    }
    name.ends_with(".json") && fs::read(path).ok().is_some_and(|t| parse_file(&t).is_ok())
}

/// The bucket a shape's winner is stored under: each dimension rounded up to a power of
/// two, or the exact shape when `exact`.
pub(crate) fn shape_key(m: usize, n: usize, k: usize, exact: bool) -> String {
    if exact {
        format!("exact:{m}x{n}x{k}")
    } else {
        let p = |v: usize| v.max(1).next_power_of_two();
        format!("pow2:{}x{}x{}", p(m), p(n), p(k))
    }
}

/// Prints `msg` once per process for `path` (a corrupt file is read on every miss).
fn warn_once(path: &Path, msg: &str) {
    static SEEN: Mutex<Option<HashSet<(PathBuf, String)>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen
        .get_or_insert_with(HashSet::new)
        .insert((path.to_path_buf(), msg.to_string()))
    {
        eprintln!("crossgemm: warning: tuning cache {}: {msg}", path.display());
    }
}

/// Where a candidate failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailStage {
    /// The driver's compiler rejected it.
    Compile,
    /// It compiled but a launch (or reading its output back) failed.
    Launch,
    /// It ran but its output disagreed with the host reference.
    WrongResult,
    /// It ran, correctly, but its first timed run took more than `TOO_SLOW_FACTOR`
    /// times the best time so far. Kept in the report, not in the cache: at another
    /// shape the same config may be the fastest.
    TooSlow,
}

/// One cache file.
pub(crate) struct DiskCache {
    path: PathBuf,
    key: FileKey,
}

impl DiskCache {
    pub(crate) fn new(dir: &Path, key: FileKey) -> DiskCache {
        DiskCache {
            path: dir.join(key.file_name()),
            key,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's contents, or an empty file (with a one-line warning when the file
    /// exists but is unusable).
    pub(crate) fn load(&self) -> CacheFile {
        match self.read() {
            Ok(Some(f)) => f,
            Ok(None) => CacheFile::empty(&self.key),
            Err(why) => {
                warn_once(&self.path, &format!("{why}; ignoring it and retuning"));
                CacheFile::empty(&self.key)
            }
        }
    }

    /// `Ok(None)`: no file. `Err`: a file this key cannot use, and why.
    fn read(&self) -> Result<Option<CacheFile>, String> {
        let text = match fs::read(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read it ({e})")),
        };
        // Format and version first, so that a future layout is reported as such rather
        // than as a parse error.
        let f = parse_file(&text)?;
        if f.key != self.key {
            return Err("written for another kernel, device, driver or source".into());
        }
        Ok(Some(f))
    }

    /// Applies `change` to the current file under the writers' lock and replaces the
    /// file atomically. Re-reads first, so concurrent writers' entries are kept.
    pub(crate) fn update(&self, change: impl FnOnce(&mut CacheFile)) -> io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir)?;
        let _lock = LockFile::acquire(&self.path.with_extension("json.lock"))?;
        // Unusable contents were already reported by `load`; they are replaced here.
        let mut f = self
            .read()
            .ok()
            .flatten()
            .unwrap_or_else(|| CacheFile::empty(&self.key));
        change(&mut f);
        let text = serde_json::to_vec_pretty(&f).map_err(io::Error::other)?;
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let tmp = self.path.with_extension(format!(
            "json.tmp-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            file.write_all(&text)?;
            file.sync_data()?;
            fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}

/// How long a process waits for another one tuning on the same device before it tunes
/// anyway (its timings may then be disturbed): longer than any tune seen on the H200.
const TUNING_WAIT: Duration = Duration::from_secs(180);
/// A tuning lock older than this is taken to be left by a process that died.
const TUNING_STALE: Duration = Duration::from_secs(900);

/// Held while this process tunes on one device, so that processes sharing a cache
/// folder tune a device one at a time: two tunes at once would time each other's
/// kernels, and the second one usually wants the bucket the first is tuning.
pub(crate) struct TuningLock(#[allow(dead_code)] LockFile);

impl TuningLock {
    /// Waits (up to [`TUNING_WAIT`]) until no other process tunes on `device_id` with this
    /// cache folder, then holds the lock. `None` when the folder cannot hold a lock file,
    /// or after the wait (with a warning): tuning goes ahead either way.
    pub(crate) fn acquire(dir: &Path, device_name: &str, device_id: &str) -> Option<TuningLock> {
        let safe: String = device_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let id = format!("{device_name}\0{device_id}");
        let path = dir.join(format!(
            "tuning-{safe}-{:08x}.tuning.lock",
            gemm_core::ir::fnv1a(id.as_bytes()) as u32
        ));
        fs::create_dir_all(dir).ok()?;
        match LockFile::acquire_with(&path, TUNING_WAIT, TUNING_STALE) {
            Ok(l) => Some(TuningLock(l)),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                eprintln!(
                    "crossgemm: warning: another process has been tuning on {device_id} for {} s ({}); tuning alongside it, timings may be disturbed",
                    TUNING_WAIT.as_secs(),
                    path.display()
                );
                None
            }
            Err(_) => None,
        }
    }
}

/// Whether the process that wrote `lock` (its first line is the PID) is gone. Only
/// Linux can tell (`/proc`); elsewhere, and for unreadable files, the answer is no and
/// the lock's age decides.
fn holder_is_dead(lock: &Path) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Some(pid) = fs::read_to_string(lock)
        .ok()
        .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u32>().ok()))
    else {
        return false;
    };
    pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// An `O_EXCL` lock file, removed on drop.
struct LockFile(PathBuf);

impl LockFile {
    fn acquire(path: &Path) -> io::Result<LockFile> {
        LockFile::acquire_with(path, LOCK_WAIT, LOCK_STALE)
    }

    /// Waits up to `wait` for `path`, breaking a lock older than `stale` or (Linux) one
    /// whose writer is no longer running.
    fn acquire_with(path: &Path, wait_limit: Duration, stale: Duration) -> io::Result<LockFile> {
        let start = Instant::now();
        let mut wait = Duration::from_millis(2);
        loop {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(LockFile(path.to_path_buf()));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let age = fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|a| a > stale) || holder_is_dead(path) {
                        // Another waiter may remove it at the same time; either way the
                        // next create_new decides who holds the lock.
                        let _ = fs::remove_file(path);
                        continue;
                    }
                    if start.elapsed() > wait_limit {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("{} is held by another process", path.display()),
                        ));
                    }
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use gemm_core::SimtTile;

    fn key() -> FileKey {
        FileKey {
            kernel: "k".into(),
            target: "opencl".into(),
            device_name: "dev".into(),
            device_id: "opencl:0:0".into(),
            driver: "1.0".into(),
            source_hash: "00ff".into(),
        }
    }

    /// A small SIMT config, told apart by `mwg` (also used by the records tests).
    pub(crate) fn cfg(mwg: u32) -> TileConfig {
        TileConfig::Simt(SimtTile {
            mwg,
            nwg: 32,
            kwg: 8,
            mdimc: 8,
            ndimc: 8,
            vw: 1,
            group_m: 1,
        })
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("crossgemm-cache-unit-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn bucket_distance() {
        assert_eq!(bucket_dims("pow2:64x512x128"), Some([64, 512, 128]));
        assert_eq!(bucket_dims("exact:17x33x65"), Some([17, 33, 65]));
        assert_eq!(bucket_dims("pow2:1x2"), None);
        assert_eq!(log_distance([8, 8, 8], [8, 8, 8]), 0.0);
        assert!(log_distance([64, 64, 64], [128, 64, 64]) < log_distance([64, 64, 64], [16, 64, 64]));
    }

    #[test]
    fn shape_buckets() {
        assert_eq!(shape_key(1000, 1, 513, false), "pow2:1024x1x1024");
        assert_eq!(shape_key(1000, 1, 513, true), "exact:1000x1x513");
        assert_eq!(shape_key(64, 64, 64, false), "pow2:64x64x64");
    }

    #[test]
    fn round_trip_and_merge() {
        let dir = temp_dir("rt");
        let c = DiskCache::new(&dir, key());
        assert!(c.load().winners.is_empty());
        c.update(|f| {
            f.winners.insert(
                "a".into(),
                Winner {
                    config: cfg(32),
                    ms: 1.5,
                    shape: [1, 2, 3],
                    candidates: 4,
                },
            );
        })
        .unwrap();
        // A second writer (another handle) keeps the first one's entry.
        DiskCache::new(&dir, key())
            .update(|f| {
                f.failed.push(FailedConfig {
                    config: cfg(64),
                    stage: FailStage::Compile,
                    reason: "boom".into(),
                })
            })
            .unwrap();
        let f = c.load();
        assert_eq!(f.winners["a"].config, cfg(32));
        assert_eq!(f.failed.len(), 1);
        let text = fs::read_to_string(c.path()).unwrap();
        assert!(text.contains("\"version\": 1") && text.contains(FORMAT), "{text}");
        // No temp or lock files are left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn unusable_files_read_as_empty() {
        let dir = temp_dir("bad");
        let c = DiskCache::new(&dir, key());
        fs::create_dir_all(&dir).unwrap();
        for bad in [
            &b"{not json"[..],
            b"[]",
            br#"{"format":"crossgemm-tune-cache","version":999}"#,
            br#"{"format":"other","version":1}"#,
        ] {
            fs::write(c.path(), bad).unwrap();
            assert!(c.read().is_err());
            assert!(c.load().winners.is_empty());
        }
        // A file for another key (e.g. another driver) is foreign.
        let other = FileKey {
            driver: "2.0".into(),
            ..key()
        };
        let mut f = CacheFile::empty(&other);
        f.winners.insert(
            "a".into(),
            Winner {
                config: cfg(32),
                ms: 1.0,
                shape: [1, 1, 1],
                candidates: 1,
            },
        );
        fs::write(c.path(), serde_json::to_vec(&f).unwrap()).unwrap();
        assert!(c.read().unwrap_err().contains("another"));
        // Writing over a corrupt file replaces it.
        fs::write(c.path(), b"garbage").unwrap();
        c.update(|f| f.failed.clear()).unwrap();
        assert!(c.read().unwrap().is_some());
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn tuning_lock_of_a_dead_process_is_broken_at_once() {
        let dir = temp_dir("tuning-lock");
        let first = TuningLock::acquire(&dir, "dev", "opencl:0:0").expect("a lock");
        let path = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
        assert!(is_cache_artifact(&path), "{}", path.display());
        drop(first);
        assert!(!path.exists());
        // A lock left by a process that has exited: its PID is no longer running.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        fs::write(&path, format!("{}\n", gone.id())).unwrap();
        let start = Instant::now();
        let again = TuningLock::acquire(&dir, "dev", "opencl:0:0");
        assert!(again.is_some() && start.elapsed() < Duration::from_secs(5));
        drop(again);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn stale_lock_is_broken_and_live_lock_waited_for() {
        let dir = temp_dir("lock");
        fs::create_dir_all(&dir).unwrap();
        let lock = dir.join("x.lock");
        let held = LockFile::acquire(&lock).unwrap();
        let t = std::thread::spawn({
            let lock = lock.clone();
            move || {
                let start = Instant::now();
                let _l = LockFile::acquire(&lock).unwrap();
                start.elapsed()
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        drop(held);
        assert!(t.join().unwrap() >= Duration::from_millis(90));
        // A lock left by a dead writer: backdate it past the stale timeout.
        fs::write(&lock, "12345").unwrap();
        let old = SystemTime::now() - LOCK_STALE - Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let start = Instant::now();
        drop(LockFile::acquire(&lock).unwrap());
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(!lock.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = temp_dir("conc");
        std::thread::scope(|s| {
            for t in 0..8 {
                let dir = &dir;
                s.spawn(move || {
                    for i in 0..5 {
                        DiskCache::new(dir, key())
                            .update(|f| {
                                f.winners.insert(
                                    format!("{t}-{i}"),
                                    Winner {
                                        config: cfg(32),
                                        ms: 1.0,
                                        shape: [t, i, 0],
                                        candidates: 1,
                                    },
                                );
                            })
                            .unwrap();
                    }
                });
            }
        });
        assert_eq!(DiskCache::new(&dir, key()).load().winners.len(), 40);
        let _ = fs::remove_dir_all(&dir);
    }
}
