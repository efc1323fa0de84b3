//! Compiled kernel binaries on disk (CUBINs from NVRTC, OpenCL program binaries), so
//! that a new process whose kernels were built before compiles nothing.
//!
//! Files live in `<cache dir>/bin/` (see [`crate::cache_dir`]), one per build, named by
//! a hash of everything that makes a binary wrong for another build: the source, the
//! kernel symbol, the compiler options (defines included), the device's name (not its
//! index: identical GPUs, and the same GPU in another container, share the binaries), the
//! driver version, the compiler's version (NVRTC's, or the OpenCL platform's and
//! device's) and crossgemm's version. A cache folder built on one machine therefore serves
//! a fresh machine with the same device, driver and NVRTC: shipped with a program, it
//! spares its first calls the JIT. The full key is also stored in the file and
//! compared on load, so a hash collision is a miss, never a wrong kernel.
//!
//! A file is `MAGIC`, a little-endian `u32` header length, a JSON header (key, payload
//! lengths, checksum) and the payload (binary, then the build log). Writers write a
//! temporary file and rename it over the final name, so readers see a whole file or
//! none. A file that cannot be read, fails its checksum, belongs to another key, or
//! that the driver refuses is reported once per process on stderr and rebuilt from
//! source: the cost is a compile, never a crash.
//!
//! `CROSSGEMM_ALWAYS_COMPILE=1` bypasses the cache (no reads, no writes). Without a
//! writable cache directory the cache is off.

use super::DeviceInfo;
use crate::env::cache_dir;
use gemm_core::ir::fnv1a;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const MAGIC: &[u8; 8] = b"CGBIN\0\0\x01";
/// Bumped whenever the file layout or the key's meaning changes.
const FORMAT_VERSION: u32 = 1;

/// Process-wide counts of kernel builds, for tests and diagnostics
/// (`gemm_runtime::__private::compile_stats()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Real compiles from source (NVRTC runs, OpenCL builds from source).
    pub compiles: u64,
    /// Kernels loaded from a cached binary instead.
    pub binary_hits: u64,
    /// Binaries written to the cache.
    pub binary_stores: u64,
    /// Cached binaries that were unusable (corrupt, foreign, refused by the driver) and
    /// were rebuilt.
    pub binary_rejected: u64,
    /// Kernels loaded from a CUBIN the macro built ahead of time (crossgemm's `aot`
    /// feature) instead.
    pub prebuilt_loads: u64,
}

impl CompileStats {
    /// Where the kernels this process obtained between `before` and these counts came
    /// from, in a word: `compiled` (NVRTC or the OpenCL driver ran at least once), else
    /// `prebuilt` (a CUBIN the macro built, feature `aot`), else `binary cache`, else
    /// `in process` (each was already compiled in this process, or nothing was needed).
    pub fn kernels_since(&self, before: &CompileStats) -> &'static str {
        if self.compiles > before.compiles {
            "compiled"
        } else if self.prebuilt_loads > before.prebuilt_loads {
            "prebuilt"
        } else if self.binary_hits > before.binary_hits {
            "binary cache"
        } else {
            "in process"
        }
    }
}

static COMPILES: AtomicU64 = AtomicU64::new(0);
static HITS: AtomicU64 = AtomicU64::new(0);
static STORES: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);

/// The counters so far in this process.
pub fn compile_stats() -> CompileStats {
    CompileStats {
        compiles: COMPILES.load(Ordering::Relaxed),
        binary_hits: HITS.load(Ordering::Relaxed),
        binary_stores: STORES.load(Ordering::Relaxed),
        binary_rejected: REJECTED.load(Ordering::Relaxed),
        prebuilt_loads: crate::prebuilt::loaded(),
    }
}

/// Called by a backend for every real compile from source.
pub(crate) fn count_compile() {
    COMPILES.fetch_add(1, Ordering::Relaxed);
}

/// Called by a backend when a cached binary became a working kernel.
pub(crate) fn count_hit() {
    HITS.fetch_add(1, Ordering::Relaxed);
}

/// Everything a binary depends on. Every field must match for a file to be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BinaryKey {
    /// `cuda` or `opencl`.
    pub(crate) backend: String,
    pub(crate) symbol: String,
    /// Two 64-bit hashes of the source and its length.
    pub(crate) source_hash: String,
    pub(crate) options: Vec<String>,
    pub(crate) device_name: String,
    pub(crate) driver: String,
    /// NVRTC's version, or the OpenCL platform/device/compiler versions.
    pub(crate) compiler: String,
    pub(crate) crossgemm: String,
    pub(crate) format: u32,
}

/// FNV-1a with another offset basis: a second, independent 64 bits.
fn fnv1a_alt(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0x6c62_272e_07bb_0142u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn hash128(bytes: &[u8]) -> String {
    format!("{:016x}{:016x}", fnv1a(bytes), fnv1a_alt(bytes))
}

impl BinaryKey {
    pub(crate) fn new(
        backend: &str,
        source: &str,
        symbol: &str,
        options: &[String],
        info: &DeviceInfo,
        compiler: &str,
    ) -> BinaryKey {
        BinaryKey {
            backend: backend.into(),
            symbol: symbol.into(),
            source_hash: format!("{}-{}", hash128(source.as_bytes()), source.len()),
            options: options.to_vec(),
            device_name: info.name.clone(),
            driver: info.driver.clone(),
            compiler: compiler.into(),
            crossgemm: env!("CARGO_PKG_VERSION").into(),
            format: FORMAT_VERSION,
        }
    }

    fn file_name(&self) -> String {
        let id = serde_json::to_string(self).expect("a key serialises");
        let safe: String = self
            .symbol
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
            .take(48)
            .collect();
        format!("{safe}-{}.{}.bin", hash128(id.as_bytes()), self.backend)
    }
}

#[derive(Serialize, Deserialize)]
struct Header {
    key: BinaryKey,
    binary_len: u64,
    log_len: u64,
    /// Hash of the payload (binary then log).
    checksum: String,
}

/// A cached build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) binary: Vec<u8>,
    /// The compiler's log (NVRTC's carries ptxas's register and spill report).
    pub(crate) log: String,
}

/// Prints `msg` once per process for `path`.
fn warn_once(path: &Path, msg: &str) {
    static SEEN: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(path.to_path_buf()) {
        eprintln!(
            "crossgemm: warning: binary cache {}: {msg}; compiling from source",
            path.display()
        );
    }
}

/// The `bin/` folder of the cache directory.
pub(crate) struct BinaryCache {
    dir: PathBuf,
    /// Size the folder is kept under (least recently used files go first).
    max_bytes: u64,
}

/// `CROSSGEMM_BINARY_CACHE_MB` (default [`crate::env::DEFAULT_BINARY_CACHE_MB`]: a full
/// tune of one kernel on a GPU stores ~48 CUBINs of 50-200 KiB, so this keeps the builds
/// of hundreds of kernels and shapes), in bytes; 0 turns the cache off.
fn max_bytes_from_env() -> u64 {
    crate::env::binary_cache_mb().saturating_mul(1 << 20)
}

/// Removes the least recently used `.bin` files of `dir` (by modification time, which a
/// cache hit refreshes) until the rest fits in three quarters of `max_bytes`, when the
/// folder holds more than `max_bytes`; `keep` (the file just written) stays. Returns the
/// number of files removed. Other processes may remove files at the same time: a file
/// that is already gone is simply skipped.
fn prune(dir: &Path, max_bytes: u64, keep: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "bin"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    if total <= max_bytes {
        return 0;
    }
    files.sort();
    let target = max_bytes / 4 * 3;
    let mut removed = 0;
    for (_, len, path) in files {
        if total <= target {
            break;
        }
        if path != keep && fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
            removed += 1;
        }
    }
    removed
}

/// Whether `CROSSGEMM_ALWAYS_COMPILE` asks to bypass the cache.
fn always_compile() -> bool {
    crate::env::flag("CROSSGEMM_ALWAYS_COMPILE")
}

/// Whether files can be created in `dir` (creating it), remembered per folder.
fn writable(dir: &Path) -> bool {
    static KNOWN: Mutex<Option<HashMap<PathBuf, bool>>> = Mutex::new(None);
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    *known
        .get_or_insert_with(HashMap::new)
        .entry(dir.to_path_buf())
        .or_insert_with(|| {
            let probe = dir.join(format!(".probe-{}", std::process::id()));
            let ok = fs::create_dir_all(dir).is_ok()
                && OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&probe)
                    .is_ok();
            let _ = fs::remove_file(&probe);
            if !ok && crate::env::log() {
                eprintln!("crossgemm: binary cache off: {} is not writable", dir.display());
            }
            ok
        })
}

impl BinaryCache {
    /// The cache the backends use: `None` under `CROSSGEMM_ALWAYS_COMPILE=1` or
    /// `CROSSGEMM_BINARY_CACHE_MB=0`, without a cache directory, or when it is not
    /// writable.
    pub(crate) fn from_env() -> Option<BinaryCache> {
        let max_bytes = max_bytes_from_env();
        if always_compile() || max_bytes == 0 {
            return None;
        }
        let dir = cache_dir()?.join("bin");
        writable(&dir).then_some(BinaryCache { dir, max_bytes })
    }

    /// A cache in `dir` itself (tests).
    #[allow(dead_code)]
    pub(crate) fn at(dir: &Path) -> BinaryCache {
        BinaryCache {
            dir: dir.to_path_buf(),
            max_bytes: max_bytes_from_env(),
        }
    }

    pub(crate) fn path(&self, key: &BinaryKey) -> PathBuf {
        self.dir.join(key.file_name())
    }

    /// The cached build for `key`; `None` on a miss, or (with a warning) when the file is
    /// unusable.
    pub(crate) fn load(&self, key: &BinaryKey) -> Option<Entry> {
        let path = self.path(key);
        match read(&path, key) {
            Ok(Some(e)) => {
                // A hit makes the file recently used, so the size limit removes it last.
                let _ = fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                Some(e)
            }
            Ok(None) => None,
            Err(why) => {
                REJECTED.fetch_add(1, Ordering::Relaxed);
                warn_once(&path, &why);
                None
            }
        }
    }

    /// Reports a cached binary that the driver refused (after [`BinaryCache::load`]
    /// returned it) and removes it; the caller compiles from source and stores again.
    pub(crate) fn reject(&self, key: &BinaryKey, why: &str) {
        let path = self.path(key);
        REJECTED.fetch_add(1, Ordering::Relaxed);
        warn_once(&path, &format!("the driver refused the cached binary ({why})"));
        let _ = fs::remove_file(&path);
    }

    /// Stores a build. Failures are reported once and otherwise ignored: the kernel is
    /// still used in this process.
    pub(crate) fn store(&self, key: &BinaryKey, binary: &[u8], log: &str) {
        if binary.is_empty() {
            return;
        }
        let path = self.path(key);
        match write(&self.dir, &path, key, binary, log) {
            Ok(()) => {
                STORES.fetch_add(1, Ordering::Relaxed);
                prune(&self.dir, self.max_bytes, &path);
            }
            Err(e) => {
                static WARNED: Mutex<bool> = Mutex::new(false);
                let mut w = WARNED.lock().unwrap_or_else(|e| e.into_inner());
                if !*w {
                    *w = true;
                    eprintln!(
                        "crossgemm: warning: cannot write the binary cache {}: {e} (not reported again)",
                        path.display()
                    );
                }
            }
        }
    }
}

fn checksum(binary: &[u8], log: &[u8]) -> String {
    let mut all = Vec::with_capacity(binary.len() + log.len());
    all.extend_from_slice(binary);
    all.extend_from_slice(log);
    hash128(&all)
}

/// `Ok(None)`: no file. `Err`: an unusable file, and why.
fn read(path: &Path, key: &BinaryKey) -> Result<Option<Entry>, String> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it ({e})")),
    };
    let rest = bytes
        .strip_prefix(&MAGIC[..])
        .ok_or("not a crossgemm binary cache file")?;
    if rest.len() < 4 {
        return Err("truncated".into());
    }
    let hlen = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
    let rest = &rest[4..];
    if rest.len() < hlen {
        return Err("truncated header".into());
    }
    let header: Header = serde_json::from_slice(&rest[..hlen]).map_err(|e| format!("malformed header ({e})"))?;
    if header.key != *key {
        return Err("written for another source, options, device, driver or compiler".into());
    }
    let payload = &rest[hlen..];
    let (blen, llen) = (header.binary_len as usize, header.log_len as usize);
    if payload.len() != blen.saturating_add(llen) {
        return Err(format!(
            "payload is {} bytes, the header says {}",
            payload.len(),
            blen.saturating_add(llen)
        ));
    }
    let (binary, log) = payload.split_at(blen);
    if checksum(binary, log) != header.checksum {
        return Err("checksum mismatch (corrupt file)".into());
    }
    Ok(Some(Entry {
        binary: binary.to_vec(),
        log: String::from_utf8_lossy(log).into_owned(),
    }))
}

fn write(dir: &Path, path: &Path, key: &BinaryKey, binary: &[u8], log: &str) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let header = serde_json::to_vec(&Header {
        key: key.clone(),
        binary_len: binary.len() as u64,
        log_len: log.len() as u64,
        checksum: checksum(binary, log.as_bytes()),
    })
    .map_err(io::Error::other)?;
    let mut data = Vec::with_capacity(MAGIC.len() + 4 + header.len() + binary.len() + log.len());
    data.extend_from_slice(MAGIC);
    data.extend_from_slice(&(header.len() as u32).to_le_bytes());
    data.extend_from_slice(&header);
    data.extend_from_slice(binary);
    data.extend_from_slice(log.as_bytes());
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_extension(format!(
        "tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(&data)?;
        f.sync_data()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::target::DeviceType;
    use gemm_core::Backend;

    fn info(driver: &str) -> DeviceInfo {
        DeviceInfo {
            kind: Backend::Opencl,
            id: "opencl:0:0".into(),
            name: "dev".into(),
            platform: "p".into(),
            driver: driver.into(),
            device_type: DeviceType::Cpu,
            compute_capability: None,
            compute_units: 1,
            smem_per_block: 1,
            max_threads_per_block: 1,
            global_mem_bytes: 1,
        }
    }

    fn key_with(options: &[&str], driver: &str, compiler: &str, source: &str) -> BinaryKey {
        let o: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        BinaryKey::new("opencl", source, "k", &o, &info(driver), compiler)
    }

    fn key() -> BinaryKey {
        key_with(&["-D A=1"], "1.0", "cl 3.0", "src")
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("crossgemm-bin-unit-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn round_trip() {
        let dir = temp_dir("rt");
        let c = BinaryCache::at(&dir);
        assert_eq!(c.load(&key()), None);
        let bin: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        c.store(&key(), &bin, "Used 40 registers");
        let e = c.load(&key()).expect("a hit");
        assert_eq!(e.binary, bin);
        assert_eq!(e.log, "Used 40 registers");
        // Overwriting is atomic and leaves no temporary files behind.
        c.store(&key(), &bin[..10], "");
        assert_eq!(c.load(&key()).unwrap().binary, &bin[..10]);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn size_limit_removes_the_least_recently_used() {
        let dir = temp_dir("prune");
        fs::create_dir_all(&dir).unwrap();
        let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let mut paths = Vec::new();
        for i in 0..5u64 {
            let p = dir.join(format!("k{i}.opencl.bin"));
            let f = fs::File::create(&p).unwrap();
            f.set_len(1000).unwrap();
            // k0 is the oldest, k4 the newest.
            f.set_modified(t0 + std::time::Duration::from_secs(60 * i)).unwrap();
            paths.push(p);
        }
        fs::write(dir.join("notes.txt"), vec![0u8; 10_000]).unwrap();
        // Under the limit: nothing goes (other files do not count).
        assert_eq!(prune(&dir, 5000, &paths[0]), 0);
        // Over it: down to 3/4 of 4000 = 3000 bytes; the oldest go first, but never `keep`.
        assert_eq!(prune(&dir, 4000, &paths[0]), 2);
        let left: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
        assert_eq!(left, [true, false, false, true, true]);
        assert!(dir.join("notes.txt").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_hit_refreshes_the_file() {
        let dir = temp_dir("touch");
        let c = BinaryCache::at(&dir);
        c.store(&key(), b"binary", "");
        let path = c.path(&key());
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(c.load(&key()).is_some());
        let m = fs::metadata(&path).unwrap().modified().unwrap();
        assert!(m > old + std::time::Duration::from_secs(1800));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn key_changes_with_every_input() {
        let base = key();
        let others = [
            key_with(&["-D A=2"], "1.0", "cl 3.0", "src"),
            key_with(&["-D A=1", "-w"], "1.0", "cl 3.0", "src"),
            key_with(&["-D A=1"], "1.1", "cl 3.0", "src"),
            key_with(&["-D A=1"], "1.0", "cl 3.1", "src"),
            key_with(&["-D A=1"], "1.0", "cl 3.0", "src "),
            BinaryKey {
                device_name: "other".into(),
                ..key()
            },
            BinaryKey {
                crossgemm: "9.9.9".into(),
                ..key()
            },
        ];
        let mut names = HashSet::new();
        names.insert(base.file_name());
        for k in &others {
            assert_ne!(*k, base);
            assert!(names.insert(k.file_name()), "{k:?} shares a file name");
        }
        assert_eq!(key().file_name(), base.file_name(), "stable");
    }

    /// Identical devices (another index, another container) share binaries: the key
    /// holds the device's name, never its id.
    #[test]
    fn identical_devices_share_a_binary() {
        let mut other = info("1.0");
        other.id = "opencl:3:7".into();
        let o = vec!["-D A=1".to_string()];
        let theirs = BinaryKey::new("opencl", "src", "k", &o, &other, "cl 3.0");
        assert_eq!(theirs, key());
        assert_eq!(theirs.file_name(), key().file_name());
    }

    #[test]
    fn corrupt_or_foreign_files_are_misses() {
        let dir = temp_dir("bad");
        let c = BinaryCache::at(&dir);
        let bin = vec![7u8; 4096];
        c.store(&key(), &bin, "log");
        let path = c.path(&key());
        let good = fs::read(&path).unwrap();
        let before = compile_stats().binary_rejected;
        // A flipped byte in the payload, a truncated file, garbage, an empty file.
        let mut flipped = good.clone();
        let n = flipped.len();
        flipped[n - 100] ^= 0xff;
        for bad in [
            flipped,
            good[..good.len() / 2].to_vec(),
            b"garbage".to_vec(),
            Vec::new(),
        ] {
            fs::write(&path, &bad).unwrap();
            assert_eq!(c.load(&key()), None);
        }
        assert!(compile_stats().binary_rejected >= before + 4);
        // A file with another key under this key's name (a hash collision).
        fs::write(&path, &good).unwrap();
        let other = key_with(&["-D A=3"], "1.0", "cl 3.0", "src");
        fs::copy(&path, c.path(&other)).unwrap();
        assert_eq!(c.load(&other), None);
        // Storing again repairs it.
        c.store(&other, &bin, "");
        assert_eq!(c.load(&other).unwrap().binary, bin);
        // A refused binary is removed.
        c.reject(&key(), "test");
        assert!(!path.exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn unwritable_dir_disables_the_cache() {
        // A regular file where the folder should be: nothing can be created below it.
        let dir = temp_dir("ro");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        fs::write(&file, b"x").unwrap();
        assert!(!writable(&file.join("bin")));
        assert!(writable(&dir.join("bin")));
        let c = BinaryCache::at(&file.join("bin"));
        c.store(&key(), b"abc", ""); // reported, not a panic
        assert_eq!(c.load(&key()), None);
        let _ = fs::remove_dir_all(&dir);
    }
}
