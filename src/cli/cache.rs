//! `crossgemm cache ls|clear|export|import|merge`.

use super::CliResult;
use crossgemm::records;
use std::path::{Path, PathBuf};

pub fn ls(dir: &Path, json: bool) -> CliResult {
    let doc = records::collect(dir);
    // Files named like cache files that cannot be read: lookups treat them as empty (and
    // retune); `cache clear` removes them.
    let bad = records::unusable(dir);
    if json {
        println!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
        for (p, why) in &bad {
            eprintln!("crossgemm: warning: unusable tuning-cache file {}: {why}", p.display());
        }
        return Ok(());
    }
    println!("cache: {}", dir.display());
    if doc.records.is_empty() && bad.is_empty() {
        println!("(no entries)");
    }
    for (p, why) in &bad {
        println!(
            "unusable: {} — {why} (read as empty; `crossgemm cache clear` removes it)",
            p.display()
        );
    }
    for r in &doc.records {
        println!(
            "{} [{}] on {} ({}), driver {}{}: {} bucket(s), {} failure(s)",
            r.kernel,
            r.target,
            r.device_name,
            r.device_id,
            r.driver,
            if r.compiler.is_empty() {
                String::new()
            } else {
                format!(", {}", r.compiler)
            },
            r.buckets.len(),
            r.failed.len()
        );
        for (b, w) in &r.buckets {
            println!(
                "  {b}: {} — {:.1} us, {:.3} TFLOP/s at {}x{}x{} ({} timed)",
                w.config, w.us, w.tflops, w.shape[0], w.shape[1], w.shape[2], w.candidates
            );
        }
    }
    Ok(())
}

pub fn clear(dir: &Path, binaries: bool) -> CliResult {
    let n = records::clear(dir).map_err(|e| e.to_string())?;
    println!("removed {n} tuning-cache file(s) from {}", dir.display());
    let bin = dir.join("bin");
    if binaries && bin.is_dir() {
        std::fs::remove_dir_all(&bin).map_err(|e| format!("cannot remove {}: {e}", bin.display()))?;
        println!("removed the compiled-kernel cache {}", bin.display());
    }
    Ok(())
}

pub fn export(dir: &Path, file: &Path) -> CliResult {
    if file == Path::new("-") {
        let doc = records::collect(dir);
        println!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let doc = records::export(dir, file).map_err(|e| e.to_string())?;
    let buckets: usize = doc.records.iter().map(|r| r.buckets.len()).sum();
    eprintln!(
        "exported {} record(s), {buckets} bucket(s) from {} to {}",
        doc.records.len(),
        dir.display(),
        file.display()
    );
    Ok(())
}

pub fn import(dir: &Path, file: &Path) -> CliResult {
    let s = records::import(dir, file).map_err(|e| format!("cannot import tuning records: {e}"))?;
    eprintln!(
        "imported {} record(s) into {}: {} bucket winner(s) added, {} kept (already cached), {} failure(s) added",
        s.records,
        dir.display(),
        s.added,
        s.kept,
        s.failures
    );
    Ok(())
}

pub fn merge(files: &[PathBuf], out: &Path) -> CliResult {
    let docs = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            records::parse(&text).map_err(|e| format!("{}: {e}", f.display()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let targets = crossgemm::Targets::parse(crossgemm::BUILTIN_TARGETS).map_err(|e| e.to_string())?;
    let (doc, s) = records::combine(&docs, &targets);
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    text.push('\n');
    if out == Path::new("-") {
        print!("{text}");
    } else {
        std::fs::write(out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    eprintln!(
        "merged {} record(s) from {} file(s) into {} record(s), {} bucket(s): {} pooled from several machines, {} decided by the planner's order within the tie band, {} input bucket(s) set aside (another shape of the bucket than the one pooled)",
        s.inputs,
        files.len(),
        s.records,
        s.buckets,
        s.pooled,
        s.ties,
        s.set_aside
    );
    Ok(())
}
