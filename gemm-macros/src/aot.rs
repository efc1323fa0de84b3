//! Ahead-of-time CUBINs (crossgemm's `aot` feature): every config of a CUDA target's
//! build-time table, compiled with NVRTC while the macro expands, so that a first call at
//! a shape the table covers loads a module instead of compiling one.
//!
//! Each config is built for its seed's shape (its operands staged where a launch stages
//! them), with the defines and NVRTC options a launch of that shape computes
//! (`gemm_core::table::builds`, `gemm_nvrtc::options`); the
//! runtime finds a CUBIN only by that exact (source, symbol, options) triple, so a shape
//! of another alignment class, or another architecture, still compiles at run time.

use crate::ctxt::Ctxt;
use crate::plan::Planned;
#[cfg(feature = "aot")]
use gemm_core::{Backend, TileConfig};
use gemm_core::{FamilyId, GemmIr};

/// A built CUBIN: what the expansion embeds as a `Prebuilt`.
pub struct Cubin {
    pub family: FamilyId,
    pub options: Vec<String>,
    pub cubin: Vec<u8>,
    pub log: String,
}

/// Per planned target, its CUBINs: every table config built (an error at the attribute
/// for each that fails), or none without the `aot` feature.
pub fn cubins(cx: &Ctxt, ir: &GemmIr, planned: &[Planned]) -> Vec<Vec<Cubin>> {
    planned
        .iter()
        .map(|p| {
            #[cfg(feature = "aot")]
            {
                build(ir, p, &jobs(ir, p))
                    .into_iter()
                    .filter_map(|r| r.map_err(|e| cx.error_at(proc_macro2::Span::call_site(), e)).ok())
                    .collect()
            }
            #[cfg(not(feature = "aot"))]
            {
                let _ = (cx, ir, p);
                Vec::new()
            }
        })
        .collect()
}

#[cfg(feature = "aot")]
/// One CUBIN to build: a table config at its seed's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub family: FamilyId,
    pub config: TileConfig,
    pub arch: gemm_nvrtc::Arch,
    pub options: Vec<String>,
}

#[cfg(feature = "aot")]
/// The distinct builds `planned`'s table asks for (`gemm_core::table::builds`), with
/// their NVRTC options. Empty for an OpenCL target (its driver compiles for its own device).
pub fn jobs(ir: &GemmIr, planned: &Planned) -> Vec<Job> {
    let Some(cc) = planned
        .spec
        .compute_capability
        .filter(|_| planned.spec.backend == Backend::Cuda)
    else {
        return Vec::new();
    };
    // The compiles `prepare` would run on the device, as launches of the seeds' shapes
    // compile them (misaligned operands staged where a launch stages them).
    gemm_core::table::builds(ir, &planned.spec, &planned.plan, &planned.table)
        .into_iter()
        .map(|b| {
            let arch = gemm_nvrtc::Arch {
                cc,
                suffix: b.config.compile_needs().arch_suffix,
            };
            Job {
                family: b.config.family_id(),
                config: b.config,
                arch,
                options: gemm_nvrtc::options(arch, &b.defines),
            }
        })
        .collect()
}

#[cfg(feature = "aot")]
/// Builds `jobs` on a few threads (NVRTC is thread-safe; a wgmma kernel takes about a
/// second). A failure is the config and NVRTC's first error lines.
pub fn build(ir: &GemmIr, planned: &Planned, jobs: &[Job]) -> Vec<Result<Cubin, String>> {
    if jobs.is_empty() {
        return Vec::new();
    }
    if !gemm_nvrtc::present() {
        return vec![Err(
            "crossgemm's `aot` feature compiles the config table's CUDA kernels at build time, but libnvrtc was not found: put the CUDA toolkit's lib64 (or the `nvidia-cuda-nvrtc` wheel's lib folder) on LD_LIBRARY_PATH for the build, or turn `aot` off".into(),
        )];
    }
    let symbol = ir.symbol();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<Cubin, String>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = build_one(planned, &symbol, job);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every job ran")
        })
        .collect()
}

#[cfg(feature = "aot")]
fn build_one(planned: &Planned, symbol: &str, job: &Job) -> Result<Cubin, String> {
    let source = planned
        .sources
        .iter()
        .find(|(f, _)| *f == job.family)
        .map(|(_, s)| s.as_str())
        .ok_or_else(|| format!("config {} has no source in target `{}`", job.config, planned.spec.name))?;
    let failed = |log: &str| {
        let first: Vec<&str> = log.lines().filter(|l| l.contains("error")).take(3).collect();
        format!(
            "NVRTC could not build config {} of target `{}` for sm_{} ahead of time: {}",
            job.config,
            planned.spec.name,
            job.arch,
            if first.is_empty() {
                log.trim().to_string()
            } else {
                first.join(" | ")
            }
        )
    };
    let built = gemm_nvrtc::compile(source, symbol, &job.options).map_err(|e| failed(&e.log))?;
    if !gemm_nvrtc::has_symbol(&built.cubin, symbol) {
        return Err(failed(&format!("the CUBIN has no kernel `{symbol}`")));
    }
    Ok(Cubin {
        family: job.family,
        options: job.options.clone(),
        cubin: built.cubin,
        log: built.log,
    })
}
