//! Tuning records: the tuning cache as a portable, versioned JSON document, to ship
//! measured winners with a project (the repository's `records/`) or move them between
//! machines (`crossgemm cache export` / `cache import`).
//!
//! A document holds one [`Record`] per cache file: kernel, target, device name and id,
//! driver, compiler (NVRTC version or OpenCL driver), the source hash that pins the
//! generated code, the target's limits, the winner of every shape bucket with its
//! measured time (µs) and throughput (TFLOP/s at the timed shape), and the configs that
//! failed, with where and why.
//!
//! Import merges into a cache folder under the cache's own writer lock and atomic
//! replace: a bucket the cache already has a winner for keeps it (local measurements
//! win), failures are unioned. A record for exactly this kernel, device, driver and
//! source is then a cache hit; any other record of the same kernel, target and device
//! name is a template: shapes with no winner start from the nearest record's winner
//! (the tuner's nearest-record start, see `CROSSGEMM_TUNE` in the README).

use crate::cache::{self, CacheFile, DiskCache, FailedConfig, FileKey, Winner};
pub use gemm_core::merge::{merge as combine, MergeSummary, TIE_BAND};
pub use gemm_core::records::{
    parse, tflops, BucketRecord, ConfigTime, FailStage, FailedRecord, Record, RecordError, Records, FORMAT, VERSION,
};
use std::path::Path;

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Records in the document.
    pub records: usize,
    /// Bucket winners added to the cache.
    pub added: usize,
    /// Bucket winners not added because the cache already had one.
    pub kept: usize,
    /// Failed configs added.
    pub failures: usize,
}

fn to_record(f: CacheFile) -> Record {
    Record {
        kernel: f.key.kernel,
        target: f.key.target,
        device_name: f.key.device_name,
        device_id: f.device_id.unwrap_or_default(),
        driver: f.key.driver,
        compiler: f.compiler.unwrap_or_default(),
        source_hash: f.key.source_hash,
        target_spec: f.target_spec,
        ir: f.ir,
        buckets: f
            .winners
            .into_iter()
            .map(|(b, w)| {
                (
                    b,
                    BucketRecord {
                        config: w.config,
                        shape: w.shape,
                        us: w.ms * 1e3,
                        tflops: tflops(w.shape, w.ms),
                        candidates: w.candidates,
                        timings: w.timings,
                    },
                )
            })
            .collect(),
        failed: f
            .failed
            .into_iter()
            .map(|x| FailedRecord {
                config: x.config,
                stage: x.stage,
                reason: x.reason,
            })
            .collect(),
    }
}

/// Every usable cache file in `dir` as a record, sorted by kernel, target, device.
pub fn read_cache(dir: &Path) -> Vec<Record> {
    let mut v: Vec<Record> = cache::read_all(dir).into_iter().map(to_record).collect();
    v.sort_by(|a, b| {
        (&a.kernel, &a.target, &a.device_name, &a.driver).cmp(&(&b.kernel, &b.target, &b.device_name, &b.driver))
    });
    v
}

/// The cache in `dir` as a document.
pub fn collect(dir: &Path) -> Records {
    Records {
        format: FORMAT.into(),
        version: VERSION,
        crossgemm: env!("CARGO_PKG_VERSION").into(),
        records: read_cache(dir),
    }
}

/// Writes the cache in `dir` to `file` as a document (pretty JSON); returns it.
pub fn export(dir: &Path, file: &Path) -> Result<Records, RecordError> {
    let doc = collect(dir);
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| RecordError(e.to_string()))?;
    text.push('\n');
    std::fs::write(file, text).map_err(|e| RecordError(format!("cannot write {}: {e}", file.display())))?;
    Ok(doc)
}

/// Reads `file` and merges it into the cache in `dir` (see the module doc).
pub fn import(dir: &Path, file: &Path) -> Result<ImportSummary, RecordError> {
    let text =
        std::fs::read_to_string(file).map_err(|e| RecordError(format!("cannot read {}: {e}", file.display())))?;
    let doc = parse(&text).map_err(|e| RecordError(format!("{}: {e}", file.display())))?;
    merge(dir, &doc)
}

/// Merges a parsed document into the cache in `dir`.
pub fn merge(dir: &Path, doc: &Records) -> Result<ImportSummary, RecordError> {
    let mut sum = ImportSummary {
        records: doc.records.len(),
        ..ImportSummary::default()
    };
    for r in &doc.records {
        let key = FileKey {
            kernel: r.kernel.clone(),
            target: r.target.clone(),
            device_name: r.device_name.clone(),
            driver: r.driver.clone(),
            source_hash: r.source_hash.clone(),
        };
        let d = DiskCache::new(dir, key);
        d.update(|f| {
            if f.target_spec.is_none() {
                f.target_spec = r.target_spec.clone();
            }
            if f.compiler.is_none() && !r.compiler.is_empty() {
                f.compiler = Some(r.compiler.clone());
            }
            if f.ir.is_none() {
                f.ir = r.ir.clone();
            }
            if f.device_id.is_none() && !r.device_id.is_empty() {
                f.device_id = Some(r.device_id.clone());
            }
            for (b, w) in &r.buckets {
                // Filed under the bucket a launch of its shape looks up now (older
                // documents' keys predate the rows' marks and N's eighths).
                let b = gemm_core::records::rekey(b, w.shape, r.ir.as_ref());
                if f.winners.contains_key(&b) {
                    sum.kept += 1;
                    continue;
                }
                f.winners.insert(
                    b,
                    Winner {
                        config: w.config,
                        ms: w.us * 1e-3,
                        shape: w.shape,
                        candidates: w.candidates,
                        timings: w.timings.clone(),
                    },
                );
                sum.added += 1;
            }
            for x in &r.failed {
                if !f.failed.iter().any(|y| y.config == x.config) {
                    f.failed.push(FailedConfig {
                        config: x.config,
                        stage: x.stage,
                        reason: x.reason.clone(),
                    });
                    sum.failures += 1;
                }
            }
        })
        .map_err(|e| RecordError(format!("cannot write {}: {e}", d.path().display())))?;
    }
    Ok(sum)
}

/// The files of the cache in `dir` that are named like tuning-cache files but cannot be
/// used (corrupt, truncated, of another format or version), each with why. Lookups read
/// them as empty (and retune); `crossgemm cache ls` lists them and [`clear`] removes them.
pub fn unusable(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    cache::unusable_files(dir)
}

/// Removes the tuning-cache files, usable or not (see [`unusable`]), and the lock and
/// temporary files left behind in `dir`; returns how many. A lock that a live process
/// holds is left alone, and so are other files.
pub fn clear(dir: &Path) -> Result<usize, RecordError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(RecordError(format!("{} is a file, not a cache folder", dir.display())))
        }
        Err(e) => return Err(RecordError(format!("cannot read {}: {e}", dir.display()))),
    };
    let mut n = 0;
    for e in entries.filter_map(|e| e.ok()) {
        let p = e.path();
        if !p.is_file() || !cache::is_cache_artifact(&p) {
            continue;
        }
        let removed = if cache::is_lock_file(&p) {
            cache::remove_lock_file(&p)
        } else {
            std::fs::remove_file(&p).map(|()| true)
        };
        match removed {
            Ok(true) => n += 1,
            Ok(false) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(RecordError(format!("cannot remove {}: {e}", p.display()))),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::tests::cfg;

    fn doc() -> Records {
        Records {
            format: FORMAT.into(),
            version: VERSION,
            crossgemm: "0".into(),
            records: vec![Record {
                kernel: "k".into(),
                target: "opencl_cpu".into(),
                device_name: "dev".into(),
                device_id: "opencl:0:0".into(),
                driver: "1".into(),
                compiler: "OpenCL driver 1".into(),
                source_hash: "ab".into(),
                target_spec: None,
                ir: None,
                buckets: [(
                    "pow2:64x64x64".to_string(),
                    BucketRecord {
                        config: cfg(32),
                        shape: [64, 64, 64],
                        us: 100.0,
                        tflops: tflops([64, 64, 64], 0.1),
                        candidates: 3,
                        timings: Vec::new(),
                    },
                )]
                .into(),
                failed: vec![FailedRecord {
                    config: cfg(64),
                    stage: FailStage::Compile,
                    reason: "no".into(),
                }],
            }],
        }
    }

    #[test]
    fn merge_export_round_trip_and_bad_documents() {
        let dir = std::env::temp_dir().join(format!("crossgemm-records-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let d = doc();
        let s = merge(&dir, &d).unwrap();
        assert_eq!((s.added, s.kept, s.failures), (1, 0, 1));
        // Merging again keeps what is there.
        let s = merge(&dir, &d).unwrap();
        assert_eq!((s.added, s.kept, s.failures), (0, 1, 0));
        let back = collect(&dir);
        assert_eq!(back.records, d.records);
        let text = serde_json::to_string(&back).unwrap();
        assert_eq!(parse(&text).unwrap(), back);
        assert!(parse("{").unwrap_err().0.contains("not valid JSON"));
        assert!(parse("{\"format\":\"x\"}").unwrap_err().0.contains("not a crossgemm"));
        assert!(parse(&text.replace("\"version\":1", "\"version\":7"))
            .unwrap_err()
            .0
            .contains("version"));
        assert!(parse(&text.replace("pow2:64x64x64", "pow2:64")).is_err());
        assert_eq!(clear(&dir).unwrap(), 1);
        assert!(read_cache(&dir).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
