//! Building an OpenCL kernel: from the binary cache where it holds a usable binary, else
//! from source (then cached), with `CROSSGEMM_LOG`'s line and `CROSSGEMM_DUMP`'s files.

use super::{cl_err, ClKernel, OpenclBackend, Passes, BACKEND};
use crate::device::binary_cache::{self, BinaryCache, BinaryKey};
use crate::error::{GemmError, Result};
use gemm_core::SUM_KERNEL_SUFFIX;
use opencl3::error_codes::{ClError, CL_BUILD_PROGRAM_FAILURE};
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

impl OpenclBackend {
    /// Builds `symbol` of `source`: from the binary in `cache` when there is a usable
    /// one, else from source (then stored in `cache`).
    pub(crate) fn compile_with(
        &self,
        cache: Option<&BinaryCache>,
        source: &str,
        symbol: &str,
        defines: &[(String, u32)],
    ) -> Result<Arc<dyn Any + Send + Sync>> {
        let mut options = vec!["-cl-std=CL1.2".to_string()];
        // PoCL prints "N warnings generated." on stderr for every build (unused helper
        // functions of the prelude); keep warnings only when the user asks for logs.
        if !crate::env::log() {
            options.push("-w".to_string());
        }
        options.extend(defines.iter().map(|(k, v)| format!("-D {k}={v}")));
        let joined = options.join(" ");
        let fail = |log: String| GemmError::Compile {
            backend: BACKEND,
            kernel: symbol.to_string(),
            options: options.clone(),
            log,
        };
        // opencl3 panics on interior NULs (CString::new(..).expect); refuse them instead.
        if symbol.contains('\0') || joined.contains('\0') {
            return Err(fail("symbol or options contain a NUL byte".into()));
        }

        // `-w` only silences warnings: the same binary serves builds with and without it.
        let key_options: Vec<String> = options.iter().filter(|o| *o != "-w").cloned().collect();
        let key = cache.map(|_| BinaryKey::new("opencl", source, symbol, &key_options, &self.info, &self.compiler));
        if let (Some(cache), Some(key)) = (cache, &key) {
            if let Some(entry) = cache.load(key) {
                let start = Instant::now();
                let loaded = Program::create_and_build_from_binary(&self.context, &[&entry.binary], &joined)
                    .map_err(|e| e.to_string())
                    .and_then(|p| {
                        passes(&p, symbol)
                            .map(|k| (p, k))
                            .map_err(|e| format!("{e}: no kernel `{symbol}` in the cached program"))
                    });
                match loaded {
                    Ok((program, kernels)) => {
                        binary_cache::count_hit();
                        if crate::env::log() {
                            eprintln!(
                                "crossgemm: OpenCL build `{symbol}` on {} [{joined}] from the binary cache {:.1} ms: ok",
                                self.info.id,
                                start.elapsed().as_secs_f64() * 1e3
                            );
                        }
                        return Ok(Arc::new(ClKernel {
                            kernels: Mutex::new(kernels),
                            _program: program,
                            symbol: symbol.to_string(),
                            context: self.context_key(),
                        }));
                    }
                    Err(why) => cache.reject(key, &why),
                }
            }
        }

        let start = Instant::now();
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| cl_err(format!("creating program `{symbol}`"), e, ""))?;
        let built = program.build(&[self.device.id()], &joined);
        binary_cache::count_compile();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let log = program
            .get_build_log(self.device.id())
            .unwrap_or_default()
            .trim()
            .to_string();
        log_and_dump(&self.info.id, source, symbol, &joined, ms, &log, built.as_ref().err());

        if let Err(e) = built {
            let log = if e.0 == CL_BUILD_PROGRAM_FAILURE {
                log
            } else {
                format!("{e}\n{log}")
            };
            return Err(fail(log));
        }
        let kernels = passes(&program, symbol).map_err(|e| {
            fail(format!(
                "{e}: no kernel `{symbol}` in the program (it has: {})",
                program.kernel_names()
            ))
        })?;
        if let (Some(cache), Some(key)) = (cache, &key) {
            // One device per context, so one binary.
            match program.get_binaries() {
                Ok(bins) => {
                    if let Some(bin) = bins.first() {
                        cache.store(key, bin, &log);
                    }
                }
                Err(e) => {
                    if crate::env::log() {
                        eprintln!("crossgemm: OpenCL program binary of `{symbol}` unavailable ({e}); not cached");
                    }
                }
            }
        }
        Ok(Arc::new(ClKernel {
            kernels: Mutex::new(kernels),
            _program: program,
            symbol: symbol.to_string(),
            context: self.context_key(),
        }))
    }
}

/// The kernels a launch of `symbol` runs: `symbol`, and the split's second pass where
/// the program holds one (`{symbol}` + [`SUM_KERNEL_SUFFIX`], which `gemm_core` emits
/// with the same arguments).
fn passes(program: &Program, symbol: &str) -> std::result::Result<Passes, ClError> {
    let main = Kernel::create(program, symbol)?;
    let sum_name = format!("{symbol}{SUM_KERNEL_SUFFIX}");
    let sum = if program.kernel_names().split(';').any(|k| k.trim() == sum_name) {
        Some(Kernel::create(program, &sum_name)?)
    } else {
        None
    };
    Ok(Passes { main, sum })
}

/// `CROSSGEMM_LOG`: one stderr line per build. `CROSSGEMM_DUMP=<dir>`: the source and the
/// build log of every build, named by symbol and a hash of the device and options. Diagnostics only:
/// an I/O error is reported once and never fails the build.
fn log_and_dump(device: &str, source: &str, symbol: &str, options: &str, ms: f64, log: &str, err: Option<&ClError>) {
    if crate::env::log() {
        let status = err.map_or_else(|| "ok".to_string(), |e| e.to_string());
        eprintln!("crossgemm: OpenCL build `{symbol}` on {device} [{options}] {ms:.1} ms: {status}");
    }
    let Some(dir) = crate::env::dump_dir() else {
        return;
    };
    // The device is part of the name: one process builds the same source and options
    // for every OpenCL device under test, and each build's log is its own.
    let stem = format!("{symbol}-{:016x}", fnv1a(format!("{device}\0{options}").as_bytes()));
    let log_text = format!(
        "device: {device}\noptions: {options}\nbuild: {ms:.1} ms, {}\n\n{log}\n",
        err.map_or("ok".into(), |e| e.to_string())
    );
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join(format!("{stem}.cl")), source))
        .and_then(|_| std::fs::write(dir.join(format!("{stem}.log")), log_text));
    if let Err(e) = written {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "crossgemm: warning: cannot dump OpenCL kernels to {}: {e} (not reported again)",
                dir.display()
            );
        }
    }
}

/// A hash that is stable across runs and Rust versions, so dump names can be compared.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
