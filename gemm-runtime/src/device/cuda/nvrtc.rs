//! NVRTC: compiling a generated source straight to a CUBIN, without a GPU or libcuda, and
//! reading ptxas's resource report out of the program log.

use super::super::binary_cache;
use crate::error::{GemmError, Result};
use std::path::Path;

/// Whether NVRTC (libnvrtc) can be loaded: the only library [`nvrtc_compile_check`] needs.
pub(crate) fn nvrtc_present() -> bool {
    gemm_nvrtc::present()
}

/// What ptxas `-v` said about a kernel (`None` where the log lacked the line): its
/// resources, and whether it had to serialise wgmma.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasInfo {
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Bytes of stack frame.
    pub stack_frame: Option<u32>,
    /// Bytes of spill stores.
    pub spill_stores: Option<u32>,
    /// Bytes of spill loads.
    pub spill_loads: Option<u32>,
    /// ptxas serialised wgmma, which it reports as `info` lines, not warnings
    /// ([`gemm_nvrtc::wgmma_serialised`]).
    pub serialised_wgmma: bool,
    /// The register and spill lines, joined with `; `.
    pub(crate) summary: String,
}

impl PtxasInfo {
    /// Reads NVRTC's program log of a compile with `--ptxas-options=-v`.
    pub fn parse(log: &str) -> PtxasInfo {
        let mut info = PtxasInfo {
            serialised_wgmma: gemm_nvrtc::wgmma_serialised(log),
            ..PtxasInfo::default()
        };
        let (mut regs, mut spills) = (Vec::new(), Vec::new());
        for line in log.lines() {
            // NVRTC prefixes ptxas lines with "ptxas info    : " or, for continuation
            // lines, "ptxas         .     ".
            let l = line.trim();
            let l = match l.strip_prefix("ptxas") {
                Some(r) => r
                    .trim_start()
                    .trim_start_matches("info")
                    .trim_start_matches([' ', ':', '.'])
                    .trim(),
                None => l,
            };
            let is_regs = l.starts_with("Used ") && l.contains("registers");
            let is_spill = l.contains("spill stores") || l.contains("spill loads");
            if !(is_regs || is_spill) {
                continue;
            }
            if is_regs {
                info.registers = number_before(l, " registers");
            }
            if is_spill {
                info.stack_frame = number_before(l, " bytes stack frame");
                info.spill_stores = number_before(l, " bytes spill stores");
                info.spill_loads = number_before(l, " bytes spill loads");
            }
            if is_regs { &mut regs } else { &mut spills }.push(l.to_string());
        }
        regs.append(&mut spills);
        info.summary = regs.join("; ");
        info
    }
}

/// The integer right before `suffix` in `s` ("Used 40 registers" → 40).
pub(super) fn number_before(s: &str, suffix: &str) -> Option<u32> {
    let head = &s[..s.find(suffix)?];
    let digits = head.rsplit(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

pub(crate) use gemm_nvrtc::Arch;
pub(super) use gemm_nvrtc::Built;

pub(super) fn nvrtc_options(arch: Arch, defines: &[(String, u32)]) -> Vec<String> {
    gemm_nvrtc::options(arch, defines)
}

/// Compiles `source` to a CUBIN for `sm_<arch>`. Needs only libnvrtc.
pub(super) fn nvrtc_build(source: &str, symbol: &str, arch: Arch, defines: &[(String, u32)]) -> Result<Built> {
    let options = nvrtc_options(arch, defines);
    let built = gemm_nvrtc::compile(source, symbol, &options);
    if !matches!(&built, Err(e) if !e.compiled) {
        binary_cache::count_compile();
    }
    built.map_err(|e| GemmError::Compile {
        backend: "NVRTC",
        kernel: symbol.to_string(),
        options,
        log: e.log,
    })
}

/// Compiles `source` for `sm_<arch>` exactly as a CUDA device would, without a GPU or
/// libcuda (only libnvrtc), and returns NVRTC's log. Fails with
/// [`GemmError::Compile`] when NVRTC rejects the source, when libnvrtc is missing, or
/// when the CUBIN has no `symbol`.
#[allow(dead_code)]
pub(crate) fn nvrtc_compile_check(
    source: &str,
    symbol: &str,
    arch: Arch,
    defines: &[(String, u32)],
) -> Result<String, GemmError> {
    let mut built = compile_logged(source, symbol, arch, defines)?;
    // On the H200, with tests compiling for the device on other threads, NVRTC twice
    // returned a successful build with an empty log (batches ad2, ad3), where ptxas's
    // report, which the checks read, belongs; a build again gave it.
    for _ in 0..2 {
        if !built.log.trim().is_empty() {
            break;
        }
        built = compile_logged(source, symbol, arch, defines)?;
    }
    // The symbol table of the ELF image holds the entry's name; a missing one means the
    // source compiled but names its kernel differently.
    if !gemm_nvrtc::has_symbol(&built.cubin, symbol) {
        return Err(GemmError::Compile {
            backend: "NVRTC",
            kernel: symbol.to_string(),
            options: nvrtc_options(arch, defines),
            log: format!("the CUBIN has no kernel `{symbol}`\n{}", built.log),
        });
    }
    Ok(built.log)
}

/// [`nvrtc_build`] plus the `CROSSGEMM_LOG` line and the `CROSSGEMM_DUMP` files.
pub(super) fn compile_logged(source: &str, symbol: &str, arch: Arch, defines: &[(String, u32)]) -> Result<Built> {
    let result = nvrtc_build(source, symbol, arch, defines);
    if let Some(dir) = crate::env::dump_dir() {
        let log = match &result {
            Ok(b) => b.log.as_str(),
            Err(GemmError::Compile { log, .. }) => log.as_str(),
            Err(_) => "",
        };
        dump(Path::new(&dir), source, symbol, arch, defines, log);
    }
    if crate::env::log() {
        let defs = defines
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        match &result {
            Ok(b) => {
                let ptxas = PtxasInfo::parse(&b.log);
                eprintln!(
                    "crossgemm: nvrtc sm_{arch} {symbol} [{defs}] {:.1} ms: {}",
                    b.ms,
                    if ptxas.summary.is_empty() {
                        "no ptxas report"
                    } else {
                        &ptxas.summary
                    }
                );
            }
            Err(e) => {
                let why = match e {
                    GemmError::Compile { log, .. } => log
                        .lines()
                        .find(|l| l.contains("error"))
                        .or(log.lines().next())
                        .unwrap_or("")
                        .trim()
                        .to_string(),
                    other => other.to_string(),
                };
                eprintln!("crossgemm: nvrtc sm_{arch} {symbol} [{defs}] failed: {why}");
            }
        }
    }
    result
}

/// Writes `<symbol>-<hash of defines>.cu` and `.log` under `dir`.
pub(super) fn dump(dir: &Path, source: &str, symbol: &str, arch: Arch, defines: &[(String, u32)], log: &str) {
    // The architecture is part of the name: the same defines build for sm_90 and sm_90a.
    let key = format!("{arch};") + &defines.iter().map(|(k, v)| format!("{k}={v};")).collect::<String>();
    let stem = format!("{symbol}-{:016x}", gemm_core::ir::fnv1a(key.as_bytes()));
    // The .cu stays byte-identical to what NVRTC saw, so log line numbers match it; the
    // options needed to reproduce the build head the .log instead.
    let header = format!("// nvrtc {}\n", nvrtc_options(arch, defines).join(" "));
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(dir.join(format!("{stem}.cu")), source))
        .and_then(|_| std::fs::write(dir.join(format!("{stem}.log")), format!("{header}{log}")));
    if let Err(e) = written {
        eprintln!(
            "crossgemm: CROSSGEMM_DUMP: could not write {stem}.cu/.log in {}: {e}",
            dir.display()
        );
    }
}

/// NVRTC's version (`nvrtc 13.0`), part of the binary cache's key.
pub(crate) fn nvrtc_version() -> String {
    gemm_nvrtc::version()
}
