//! The tuner's disk cache: one JSON file per (kernel, target, device, driver, source),
//! holding the winner of every shape bucket tuned so far and the configs that failed.
//!
//! Everything that makes an old result meaningless (device, driver, generated source,
//! dtypes/layouts/epilogue through the IR hash, runtime version) is in the file's key,
//! so a stale file is never consulted for a new kernel; the candidate list is not, so
//! adding configs to a target does not throw away the winners (Triton #9822). Readers
//! never lock: writers replace the file by rename, so a reader sees the old or the new
//! file whole. Writers serialise their read-modify-write through an advisory lock
//! ([`FileLock`]: `flock` on Unix, `LockFileEx` on Windows, through `std::fs::File::lock`),
//! so that two processes tuning different shapes at once both keep their results. The
//! kernel releases such a lock when its holder exits, however it exits, so a lock can
//! never outlive its process: a lock file left behind (by `kill -9`, or naming a PID that
//! was reused) is just a file, and the next process takes the lock at once. A file that
//! cannot be read or parsed, or that belongs to another key, is reported in one stderr
//! line and treated as empty: the cost is a retune, never a crash or a kernel chosen for
//! something else. A config in a file is never trusted either: the runtime validates it
//! against its family's rules before launching it (`Call::validate`).

pub(crate) use gemm_core::records::{bucket_distance, problem_key, ConfigTime, FailStage};
use gemm_core::TileConfig;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Written in every file; a reader refuses files of another format.
pub(crate) const FORMAT: &str = "crossgemm-tune-cache";
/// Bumped whenever the meaning of a field changes; other versions are retuned.
pub(crate) const VERSION: u32 = 1;

/// How long a writer waits for the lock before giving up on storing (the result is
/// still used in this process). Writers hold it for one read-modify-write (milliseconds),
/// and a dead writer's lock is released by the kernel, so only a live, stuck process
/// (e.g. stopped with SIGSTOP) can make a writer wait this long.
const LOCK_WAIT: Duration = Duration::from_secs(20);

/// Identity of one cache file. Every field must match for any entry to be used.
///
/// The device is its name, not its index: identical GPUs of a machine (or of machines
/// sharing a cache folder) share one tuning entry, and so agree on every winner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileKey {
    pub(crate) kernel: String,
    pub(crate) target: String,
    pub(crate) device_name: String,
    pub(crate) driver: String,
    /// Hash of the IR hash, the target's generated source, the runtime version and the
    /// timing protocol.
    pub(crate) source_hash: String,
}

impl FileKey {
    fn file_name(&self) -> String {
        let id = format!(
            "{}\0{}\0{}\0{}\0{}",
            self.kernel, self.target, self.device_name, self.driver, self.source_hash
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
    /// Every timed candidate's median (µs), the final round's for its finalists, for
    /// records and `cache merge`; absent in files of older writers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) timings: Vec<ConfigTime>,
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
    /// The kernel's IR, for tuning records that serve other kernels of the same
    /// mainloop at build time. Absent in files of older writers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ir: Option<gemm_core::GemmIr>,
    /// The device (`cuda:1`, `opencl:0:0`) that last wrote the file: informational, as
    /// every device of the key's name shares it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) device_id: Option<String>,
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
            ir: None,
            device_id: None,
        }
    }
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

/// Whether `name` is what [`FileKey::file_name`] produces: `<kernel>-<16 hex>.json`.
fn is_cache_file_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".json") else {
        return false;
    };
    let Some((kernel, hash)) = stem.rsplit_once('-') else {
        return false;
    };
    hash.len() == 16
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && kernel.len() <= 48
        && kernel.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The files of `dir` named like tuning-cache files that cannot be used (unreadable, not
/// JSON, another format or version, malformed), each with why, sorted by path: what
/// `crossgemm cache ls` shows and `cache clear` removes beside the good files.
pub(crate) fn unusable_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_cache_file_name) && p.is_file())
        .filter_map(|p| {
            let why = match fs::read(&p) {
                Ok(t) => parse_file(&t).err()?,
                Err(e) => format!("cannot read it ({e})"),
            };
            Some((p, why))
        })
        .collect();
    out.sort();
    out
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

/// Whether `path` is a tuning-cache file (usable or not: a corrupt one is named like a
/// good one), or one of its lock or temporary files: what `crossgemm cache clear`
/// removes. Other `.json` files are left alone unless they parse as a tuning cache.
pub(crate) fn is_cache_artifact(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if name.contains(".json.tmp-") || is_lock_file(path) || is_cache_file_name(name) {
        return true;
    }
    name.ends_with(".json") && fs::read(path).ok().is_some_and(|t| parse_file(&t).is_ok())
}

/// Whether `path` is a writer's or a tuning lock file.
pub(crate) fn is_lock_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".json.lock") || n.ends_with(".tuning.lock"))
}

/// Removes a lock file unless a live process holds its lock (then it is left alone and
/// `Ok(false)` returned): removing a held lock file would let a third process lock a new
/// file while the holder still works.
pub(crate) fn remove_lock_file(path: &Path) -> io::Result<bool> {
    match FileLock::try_lock(path)? {
        Some(lock) => {
            drop(lock); // removes the file while holding its lock
            Ok(true)
        }
        None => Ok(false),
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

    /// Marks `config`, the cached winner of `bucket`, as failed at `stage` with
    /// `reason`: the bucket loses its winner (so the next lookup tunes it again) and the
    /// config joins the file's failures (so that tune does not pick it again). Returns
    /// whether `config` was the bucket's winner; nothing is changed when it was not (a
    /// concurrent tune may have replaced it). For a launch of a cached winner that
    /// failed (see the tuner's `choose`).
    pub(crate) fn mark_failed(
        &self,
        bucket: &str,
        config: &TileConfig,
        stage: FailStage,
        reason: &str,
    ) -> io::Result<bool> {
        let mut was_winner = false;
        self.update(|f| {
            if f.winners.get(bucket).is_some_and(|w| w.config == *config) {
                was_winner = true;
                f.winners.remove(bucket);
                if !f.failed.iter().any(|x| x.config == *config) {
                    f.failed.push(FailedConfig {
                        config: *config,
                        stage,
                        reason: reason.to_string(),
                    });
                }
            }
        })?;
        Ok(was_winner)
    }

    /// Applies `change` to the current file under the writers' lock and replaces the
    /// file atomically. Re-reads first, so concurrent writers' entries are kept.
    pub(crate) fn update(&self, change: impl FnOnce(&mut CacheFile)) -> io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        ensure_dir(dir)?;
        let lock_path = self.path.with_extension("json.lock");
        let _lock = match FileLock::acquire(&lock_path, LOCK_WAIT, |_| {}) {
            Ok(l) => Some(l),
            // A file system without advisory locks (some network mounts): the rename
            // below still keeps the file whole; only concurrent merges may lose an entry.
            Err(e) if e.kind() == io::ErrorKind::Unsupported => None,
            Err(e) => return Err(e),
        };
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

/// Creates `dir` (and its parents), with a clear error when a path on the way is a file.
pub(crate) fn ensure_dir(dir: &Path) -> io::Result<()> {
    if let Some(file) = dir.ancestors().find(|a| a.is_file()) {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!(
                "{} is a file, not a folder (the cache folder would be {})",
                file.display(),
                dir.display()
            ),
        ));
    }
    fs::create_dir_all(dir)
}

/// Held while this process tunes on one device, so that processes sharing a cache
/// folder tune a device one at a time: two tunes at once would time each other's
/// kernels, and the second one usually wants the bucket the first is tuning.
pub(crate) struct TuningLock(#[allow(dead_code)] FileLock);

impl TuningLock {
    /// The lock file of `device` in `dir`. A device made from a caller's queue or stream
    /// (`opencl:0:0+queue2`, `cuda:0+stream1`) is the same chip as the one it was made on,
    /// so it takes that one's lock: two processes must not time candidates on one GPU at
    /// once, whichever handles they hold.
    pub(crate) fn path(dir: &Path, device_name: &str, device_id: &str) -> PathBuf {
        let device_id = device_id.split('+').next().unwrap_or(device_id);
        let safe: String = device_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let id = format!("{device_name}\0{device_id}");
        dir.join(format!(
            "tuning-{safe}-{:08x}.tuning.lock",
            gemm_core::ir::fnv1a(id.as_bytes()) as u32
        ))
    }

    /// Waits (up to [`TUNING_WAIT`]) until no other process tunes on `device_id` with this
    /// cache folder, then holds the lock. A wait is announced once on stderr, naming the
    /// process that holds the lock. `None` when the folder cannot hold a lock file, or
    /// after the wait (with a warning): tuning goes ahead either way.
    pub(crate) fn acquire(dir: &Path, device_name: &str, device_id: &str) -> Option<TuningLock> {
        let path = TuningLock::path(dir, device_name, device_id);
        ensure_dir(dir).ok()?;
        let waiting = |holder: Option<u32>| {
            let who = holder.map_or("another process".to_string(), |pid| format!("process {pid}"));
            eprintln!(
                "crossgemm: waiting for {who} to finish tuning on {device_id} (it holds {}); at most {} s, then tuning alongside it",
                path.display(),
                TUNING_WAIT.as_secs()
            );
        };
        match FileLock::acquire(&path, TUNING_WAIT, waiting) {
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

/// An advisory lock on a lock file (`std::fs::File::try_lock`: `flock` on Unix), which
/// the kernel releases when the holding process exits in any way. The holder writes its
/// PID into the file, so that a waiter can name it. Dropping the lock removes the file
/// while still holding the lock; a waiter that then gets the lock of the removed file
/// notices (the path no longer names the file it locked) and locks the new one, so that
/// two processes never both hold "the" lock.
pub(crate) struct FileLock {
    path: PathBuf,
    _file: File,
}

/// Whether `file` (open) is the file `path` names now.
fn is_same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// The PID on the first line of a lock file, if any.
fn lock_holder(path: &Path) -> Option<u32> {
    fs::read_to_string(path).ok()?.lines().next()?.trim().parse().ok()
}

impl FileLock {
    /// Takes the lock if no one holds it: `Ok(None)` when a live process does.
    pub(crate) fn try_lock(path: &Path) -> io::Result<Option<FileLock>> {
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Ok(None),
                Err(TryLockError::Error(e)) => return Err(e),
            }
            if !is_same_file(&file, path) {
                // The previous holder removed the file as it released it: lock the new one.
                continue;
            }
            file.set_len(0)?;
            file.rewind()?;
            let _ = writeln!(file, "{}", std::process::id());
            let _ = file.flush();
            return Ok(Some(FileLock {
                path: path.to_path_buf(),
                _file: file,
            }));
        }
    }

    /// Waits up to `wait_limit` for the lock (`TimedOut` after it). When it has to wait,
    /// calls `on_wait` once with the holder's PID, if the lock file names one.
    pub(crate) fn acquire(
        path: &Path,
        wait_limit: Duration,
        on_wait: impl FnOnce(Option<u32>),
    ) -> io::Result<FileLock> {
        let start = Instant::now();
        let mut on_wait = Some(on_wait);
        let mut wait = Duration::from_millis(2);
        loop {
            if let Some(lock) = FileLock::try_lock(path)? {
                return Ok(lock);
            }
            if let Some(f) = on_wait.take() {
                // The holder writes its PID right after locking: give it a moment.
                let holder = lock_holder(path).or_else(|| {
                    std::thread::sleep(Duration::from_millis(20));
                    lock_holder(path)
                });
                f(holder);
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
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while locked; the lock goes with the file handle, after this.
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use gemm_core::records::{bucket_dims, log_distance};
    use gemm_core::SimtTile;

    fn key() -> FileKey {
        FileKey {
            kernel: "k".into(),
            target: "opencl".into(),
            device_name: "dev".into(),
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
            ksplit: 1,
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
        use gemm_core::records::{batch_shape_key, shape_key};
        assert_eq!(shape_key(1000, 1, 513, false), "pow2r:1024x1x1024");
        assert_eq!(batch_shape_key(1000, 1, 513, 1, false), "pow2r:1024x1x1024");
        assert_eq!(batch_shape_key(512, 512, 128, 24, false), "pow2@b32:512x512x128");
        assert_eq!(batch_shape_key(512, 512, 128, 24, true), "exact@b24:512x512x128");
        assert_eq!(gemm_core::records::bucket_batch("pow2r@b8:1024x1x1024"), Some(8));
        assert_eq!(
            gemm_core::records::bucket_dims("pow2r@b8:1024x1x1024"),
            Some([1024, 1, 1024])
        );
        assert!(gemm_core::records::bucket_distance("pow2@b32:512x512x128", "pow2:512x512x128").unwrap() > 3.0);
        assert_eq!(shape_key(1000, 1, 513, true), "exact:1000x1x513");
        assert_eq!(shape_key(64, 64, 64, false), "pow2:64x64x64");
        // Ragged: a dimension over 64 that is not a multiple of 64 (1000³ is not 1024³).
        assert_eq!(shape_key(1024, 1024, 1024, false), "pow2:1024x1024x1024");
        assert_eq!(shape_key(1000, 1000, 1000, false), "pow2r:1024x1024x1024");
        // N past 2048 in eighths of its octave; M and K in powers of two.
        assert_eq!(shape_key(16, 11008, 4096, false), "pow2:16x11264x4096");
        assert_eq!(shape_key(2048, 11008, 4096, false), "pow2:2048x11264x4096");
        assert_eq!(shape_key(2048, 12288, 4096, false), "pow2:2048x12288x4096");
        assert_eq!(shape_key(3000, 5000, 700, false), "pow2r:4096x5120x1024");
        assert_eq!(shape_key(2048, 4096, 11008, false), "pow2:2048x4096x16384");
        assert_eq!(shape_key(2048, 2049, 2048, false), "pow2r:2048x2304x2048");
        assert_eq!(shape_key(1, 2048, 1, false), "pow2:1x2048x1");
        for n in 1..20000 {
            let r = gemm_core::records::round_n(n);
            // At least n, inside the power-of-two bucket, and a fixed point.
            assert!(
                r >= n && r <= n.next_power_of_two() && gemm_core::records::round_n(r) == r,
                "{n} -> {r}"
            );
        }
        // A record's older key follows its measured shape into today's bucket.
        use gemm_core::records::rekey;
        assert_eq!(
            rekey("pow2:2048x16384x4096", [2048, 11008, 4096], None),
            "pow2:2048x11264x4096"
        );
        assert_eq!(
            rekey("pow2@b8:2048x16384x4096", [2048, 12288, 4096], None),
            "pow2@b8:2048x12288x4096"
        );
        assert_eq!(
            rekey("pow2r:1024x1024x1024", [1000, 1000, 1000], None),
            "pow2r:1024x1024x1024"
        );
        assert_eq!(
            rekey("exact:2048x11008x4096", [2048, 11008, 4096], None),
            "exact:2048x11008x4096"
        );
        assert_eq!(rekey("odd", [1, 1, 1], None), "odd");
        assert_eq!(shape_key(7, 45, 33, false), "pow2:8x64x64");
        assert_eq!(bucket_dims("pow2r:1024x1024x1024"), Some([1024; 3]));
        // The nearest bucket prefers its own class at the same dimensions, not over a
        // factor of 2 along one dimension.
        let d = |a, b| gemm_core::records::bucket_distance(a, b).unwrap();
        assert_eq!(d("pow2r:1024x1024x1024", "pow2r:1024x1024x1024"), 0.0);
        assert!(d("pow2r:1024x1024x1024", "pow2:1024x1024x1024") < d("pow2r:1024x1024x1024", "pow2r:2048x1024x1024"));
        assert!(d("pow2r:1024x1024x1024", "pow2:1024x1024x1024") > 0.0);
        assert!(gemm_core::records::bucket_distance("pow2:1x2", "pow2:1x2x3").is_none());
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
                    timings: Vec::new(),
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
                timings: Vec::new(),
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

    #[test]
    fn a_lock_file_without_a_live_holder_is_taken_at_once() {
        let dir = temp_dir("tuning-lock");
        let first = TuningLock::acquire(&dir, "dev", "opencl:0:0").expect("a lock");
        let path = TuningLock::path(&dir, "dev", "opencl:0:0");
        // A caller's queue or stream on the chip shares the chip's lock.
        assert_eq!(TuningLock::path(&dir, "dev", "opencl:0:0+queue3"), path);
        assert_eq!(
            TuningLock::path(&dir, "dev", "cuda:0+stream1"),
            TuningLock::path(&dir, "dev", "cuda:0")
        );
        assert_ne!(
            TuningLock::path(&dir, "dev", "cuda:1"),
            TuningLock::path(&dir, "dev", "cuda:0")
        );
        assert!(path.exists() && is_cache_artifact(&path), "{}", path.display());
        assert_eq!(lock_holder(&path), Some(std::process::id()));
        drop(first);
        assert!(!path.exists(), "the lock file goes with the lock");
        // Left behind by a killed process, naming a live PID (ours, or a reused one), or
        // empty: only a held lock makes anyone wait.
        for content in [format!("{}\n", std::process::id()), String::new(), "garbage".into()] {
            fs::write(&path, &content).unwrap();
            let start = Instant::now();
            let again = TuningLock::acquire(&dir, "dev", "opencl:0:0");
            assert!(again.is_some(), "{content:?}");
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "{content:?}: {:?}",
                start.elapsed()
            );
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_held_lock_is_waited_for_and_named() {
        let dir = temp_dir("lock");
        fs::create_dir_all(&dir).unwrap();
        let lock = dir.join("x.json.lock");
        let held = FileLock::try_lock(&lock).unwrap().expect("free");
        assert!(FileLock::try_lock(&lock).unwrap().is_none(), "held in this process too");
        assert!(
            !remove_lock_file(&lock).unwrap() && lock.exists(),
            "a held lock file is kept"
        );
        let t = std::thread::spawn({
            let lock = lock.clone();
            move || {
                let start = Instant::now();
                let mut named = None;
                let _l = FileLock::acquire(&lock, Duration::from_secs(20), |h| named = Some(h)).unwrap();
                (start.elapsed(), named)
            }
        });
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
        let (waited, named) = t.join().unwrap();
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert_eq!(named, Some(Some(std::process::id())), "the wait names the holder once");
        // And a wait ends at its limit.
        let held = FileLock::try_lock(&lock).unwrap().unwrap();
        let e = FileLock::acquire(&lock, Duration::from_millis(100), |_| {})
            .err()
            .unwrap();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        drop(held);
        assert!(remove_lock_file(&lock).unwrap() && !lock.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    /// Holds the lock named by `CROSSGEMM_LOCK_CHILD` until killed (run by the next test).
    #[test]
    fn lock_holding_child() {
        let Some(path) = std::env::var_os("CROSSGEMM_LOCK_CHILD") else {
            return;
        };
        let _l = FileLock::try_lock(Path::new(&path)).unwrap().expect("free");
        println!("LOCKED");
        std::thread::sleep(Duration::from_secs(120));
    }

    #[cfg(unix)]
    #[test]
    fn the_lock_of_a_killed_process_is_free_at_once() {
        use std::io::BufRead;
        let dir = temp_dir("killed");
        fs::create_dir_all(&dir).unwrap();
        let lock = TuningLock::path(&dir, "dev", "opencl:0:0");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "cache::tests::lock_holding_child", "--nocapture"])
            .env("CROSSGEMM_LOCK_CHILD", &lock)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        assert!(
            out.lines().map_while(|l| l.ok()).any(|l| l.contains("LOCKED")),
            "the child took the lock"
        );
        assert!(FileLock::try_lock(&lock).unwrap().is_none(), "held by the child");
        child.kill().unwrap(); // SIGKILL: no destructor runs, the file stays behind
        child.wait().unwrap();
        assert!(lock.exists());
        let start = Instant::now();
        assert!(TuningLock::acquire(&dir, "dev", "opencl:0:0").is_some());
        assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_winner_is_dropped_and_recorded() {
        let dir = temp_dir("failed");
        let c = DiskCache::new(&dir, key());
        let w = |mwg| Winner {
            config: cfg(mwg),
            ms: 1.0,
            shape: [64, 64, 64],
            candidates: 2,
            timings: Vec::new(),
        };
        c.update(|f| {
            f.winners.insert("pow2:64x64x64".into(), w(32));
            f.winners.insert("pow2:128x64x64".into(), w(64));
        })
        .unwrap();
        // Not the winner (a concurrent tune replaced it): nothing changes.
        assert!(!c
            .mark_failed("pow2:64x64x64", &cfg(16), FailStage::Launch, "x")
            .unwrap());
        assert!(c.load().failed.is_empty());
        assert!(c
            .mark_failed("pow2:64x64x64", &cfg(32), FailStage::Launch, "launch failed")
            .unwrap());
        let f = c.load();
        assert!(!f.winners.contains_key("pow2:64x64x64"));
        assert_eq!(f.winners["pow2:128x64x64"].config, cfg(64), "other buckets keep theirs");
        assert_eq!(f.failed.len(), 1);
        assert_eq!((f.failed[0].config, f.failed[0].stage), (cfg(32), FailStage::Launch));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn corrupt_files_are_listed_and_count_as_cache_files() {
        let dir = temp_dir("listed");
        let c = DiskCache::new(&dir, key());
        c.update(|_| {}).unwrap();
        let bad = dir.join("k-00000000000000ff.json");
        fs::write(&bad, b"{ truncated").unwrap();
        let other = dir.join("notes.json");
        fs::write(&other, b"{}").unwrap();
        let u = unusable_files(&dir);
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(u[0].0, bad);
        assert!(u[0].1.contains("not valid JSON"), "{}", u[0].1);
        assert!(is_cache_artifact(&bad) && is_cache_artifact(c.path()) && !is_cache_artifact(&other));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_in_the_way_of_the_folder_is_named() {
        let dir = temp_dir("file");
        fs::write(&dir, b"x").unwrap();
        let e = DiskCache::new(&dir.join("sub"), key()).update(|_| {}).unwrap_err();
        assert!(e.to_string().contains("is a file, not a folder"), "{e}");
        assert!(TuningLock::acquire(&dir, "dev", "opencl:0:0").is_none());
        let _ = fs::remove_file(&dir);
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
                                        timings: Vec::new(),
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
