//! Compiling a kernel's table configs ahead of its first calls ([`prepare`]).
//!
//! A first call with a table winner times nothing, but it still JIT-compiles its config:
//! on the H200 0.1 s for a gemv config and 0.4–1.5 s for a wgmma tile (NVRTC), most of
//! that first call. A program that knows which kernels it will call (a server loading a
//! model) can compile them at start-up, in parallel, with `k::prepare(&device)`; the first
//! calls then cost the winner's check at its build variant (milliseconds). The kernels
//! land in the device's kernel map and in the compiled-kernel cache on disk, so a later
//! process loads them in under a millisecond.

use super::table;
use crate::device::Device;
use crate::error::{GemmError, Result};
use crate::spec::KernelSpec;
use gemm_core::TileConfig;
use std::time::Instant;

/// One compile of [`prepare`].
enum Job<'a> {
    Config(&'a gemm_core::table::Build),
    /// A row-copy kernel, by symbol.
    RowCopy(&'a str),
    /// The tf32x3 split kernel.
    Split,
}

/// What [`prepare`] compiled.
#[derive(Clone, Debug, Default)]
pub struct PrepareReport {
    /// The target whose code was compiled.
    pub target: String,
    /// Each compiled config with the shape whose build variant it was compiled for.
    pub prepared: Vec<(TileConfig, [usize; 3])>,
    /// Configs whose compile failed, with why (their first launch falls back as usual).
    pub failed: Vec<(TileConfig, String)>,
    /// The runtime's own kernels compiled with them: the row copies a call whose operands
    /// are staged launches (`cg_row_copy_8`: 8-byte words; see the README's "Staged
    /// operands"), those its element size allows; none where staging is off
    /// (`CROSSGEMM_STAGE=never`), rows are copied by the driver
    /// (`CROSSGEMM_ROW_COPY=driver`) or the device is the host. For an `acc = tf32x3`
    /// kernel, which never stages, the split kernel its every launch runs instead.
    pub helpers: Vec<String>,
    /// Helpers whose compile failed, with why (staging then copies rows by the driver; a
    /// tf32x3 call then fails to launch as the compile did).
    pub failed_helpers: Vec<(String, String)>,
    /// Wall time of the whole preparation, ms.
    pub ms: f64,
}

/// Compiles, on the tuner's compile pool, the configs `spec`'s build-time table gives `dev`:
/// its winners for this device's name, or, when the table has none for it, at each of the
/// table's buckets the entry a `cached` launch there starts from (the nearest: the most
/// alike device name's winner where several devices measured the bucket). Each is compiled for the build variant of
/// the shape it was measured at, as a launch of it runs (`gemm_core::table::builds`:
/// misaligned operands staged unless a shape specialist reads them in place), which is the variant of every shape of its class on
/// families whose defines do not depend on the shape (wgmma) and of aligned shapes on the
/// others. Also the runtime's kernels its launches run ([`PrepareReport::helpers`]: the
/// row copies of a staged call, or a tf32x3 kernel's split). Tunes and checks nothing;
/// without a table (or with `CROSSGEMM_IGNORE_TABLES`) only those are built.
pub fn prepare(spec: &'static KernelSpec, dev: &Device) -> Result<PrepareReport> {
    let start = Instant::now();
    let tk = spec.target_for(dev)?;
    let ir = spec.ir();
    let builds = gemm_core::table::builds(ir, tk.spec(), tk.plan(), table::for_device(tk, &dev.info().name));
    let symbol = ir.symbol();
    // The helpers a launch of this kernel may run (its first would compile them), in the
    // same pool as the configs: the split of a tf32x3 kernel, else the row copies of a
    // staged call.
    let splits = gemm_core::split3::splits(ir);
    let row_copies = if !splits && crate::env::stage_mode() != "never" && crate::row_copy::copies_by_kernel(dev) {
        crate::row_copy::symbols_for(ir.ab_dtype.size() as usize)
    } else {
        Vec::new()
    };
    let split = splits && dev.info().kind != gemm_core::Backend::Host;
    let jobs: Vec<Job> = (builds.iter().map(Job::Config))
        .chain(row_copies.iter().map(|h| Job::RowCopy(h)))
        .chain(split.then_some(Job::Split))
        .collect();
    let compiled = super::pool::map(&jobs, |job| match job {
        Job::Config(b) => tk
            .source_of(&b.config)
            .and_then(|source| dev.kernel(source, &symbol, &b.defines, &b.config.compile_needs()))
            .map(|_| ()),
        Job::RowCopy(h) => crate::row_copy::kernel(dev, h).map(|_| ()),
        Job::Split => crate::split3::kernel(dev).map(|_| ()),
    });
    let mut report = PrepareReport {
        target: tk.target.to_string(),
        ..PrepareReport::default()
    };
    // In table order, whatever the threads' order.
    for (job, r) in jobs.iter().zip(compiled) {
        let why = |e: GemmError| super::first_line(&e.to_string()).to_string();
        match (job, r) {
            (Job::Config(b), Ok(())) => report.prepared.push((b.config, b.shape)),
            (Job::Config(b), Err(e)) => report.failed.push((b.config, why(e))),
            (Job::RowCopy(h), Ok(())) => report.helpers.push(h.to_string()),
            (Job::RowCopy(h), Err(e)) => report.failed_helpers.push((h.to_string(), why(e))),
            (Job::Split, Ok(())) => report.helpers.push(crate::split3::SYMBOL.to_string()),
            (Job::Split, Err(e)) => report.failed_helpers.push((crate::split3::SYMBOL.to_string(), why(e))),
        }
    }
    report.ms = start.elapsed().as_secs_f64() * 1e3;
    if crate::env::log() {
        eprintln!(
            "crossgemm: prepared `{}` on {}: {} config(s) and {} helper kernel(s) compiled, {} failed, {:.0} ms",
            spec.name,
            dev.info().id,
            report.prepared.len(),
            report.helpers.len(),
            report.failed.len() + report.failed_helpers.len(),
            report.ms
        );
    }
    if report.prepared.is_empty() && !report.failed.is_empty() {
        return Err(GemmError::Unsupported(format!(
            "preparing `{}` on {}: no config compiled; the first: {}",
            spec.name,
            dev.info(),
            report.failed[0].1
        )));
    }
    Ok(report)
}
