//! NVRTC: compiling a generated source straight to a CUBIN, without a GPU or libcuda, and
//! reading ptxas's resource report out of the program log.

use super::super::binary_cache;
use crate::error::{GemmError, Result};
use cudarc::nvrtc::sys as nsys;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Whether NVRTC (libnvrtc) can be loaded: the only library [`nvrtc_compile_check`] needs.
///
/// Looks where cudarc looks (the dynamic loader's path: `LD_LIBRARY_PATH`, ldconfig), and
/// then in `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`.
pub(crate) fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: only tries to dlopen the library by its usual names.
        if unsafe { nsys::is_culib_present() } {
            return true;
        }
        preload_nvrtc_from_toolkit() && unsafe { nsys::is_culib_present() }
    })
}

/// The toolkit puts libnvrtc in `<cuda>/lib64`, which is often not on the loader's path
/// (the H200 machine needs `LD_LIBRARY_PATH` for it). cudarc opens libraries by bare
/// names only, but glibc's `dlopen` answers a bare name with an already loaded object
/// whose SONAME matches, so loading the file by its full path once (and never closing
/// it) makes cudarc's own lookup of `libnvrtc.so.13` succeed.
#[cfg(target_os = "linux")]
pub(super) fn preload_nvrtc_from_toolkit() -> bool {
    extern "C" {
        fn dlopen(filename: *const c_char, flags: std::ffi::c_int) -> *mut std::ffi::c_void;
    }
    const RTLD_NOW: std::ffi::c_int = 2;
    let mut dirs: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|d| Path::new(&d).join("lib64"))
        .collect();
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    for dir in dirs {
        let file = dir.join(NVRTC_SONAME);
        if !file.is_file() {
            continue;
        }
        let Some(c) = file.to_str().and_then(|s| CString::new(s).ok()) else {
            continue;
        };
        // SAFETY: a plain dlopen of a shared library; the handle is deliberately leaked
        // so the library stays loaded for the process.
        if !unsafe { dlopen(c.as_ptr(), RTLD_NOW) }.is_null() {
            return true;
        }
    }
    false
}

#[cfg(not(target_os = "linux"))]
pub(super) fn preload_nvrtc_from_toolkit() -> bool {
    false
}

/// The soname of the NVRTC that cudarc's `cuda-13000` bindings look for. Preloading any
/// other file (an unversioned `libnvrtc.so`, a 12.x one) would not satisfy its lookup.
#[cfg(target_os = "linux")]
const NVRTC_SONAME: &str = "libnvrtc.so.13";

/// What ptxas `-v` said about a kernel. Fields are `None` where the log lacked them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PtxasInfo {
    pub(crate) registers: Option<u32>,
    pub(crate) spill_stores: Option<u32>,
    pub(crate) spill_loads: Option<u32>,
    /// The register and spill lines, joined with `; `.
    pub(crate) summary: String,
}

impl PtxasInfo {
    pub(crate) fn parse(log: &str) -> PtxasInfo {
        let mut info = PtxasInfo::default();
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

/// What NVRTC produced for one program.
pub(super) struct Built {
    pub(super) cubin: Vec<u8>,
    pub(super) log: String,
    pub(super) ms: f64,
}

/// The architecture a CUBIN is built for: `sm_<cc><suffix>`, e.g. `sm_90` or `sm_90a`
/// (code for that exact chip: wgmma, setmaxnreg).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Arch {
    /// Compute capability, major * 10 + minor.
    pub(crate) cc: u32,
    /// `""` or `"a"`.
    pub(crate) suffix: &'static str,
}

impl From<u32> for Arch {
    fn from(cc: u32) -> Arch {
        Arch { cc, suffix: "" }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.cc, self.suffix)
    }
}

pub(super) fn nvrtc_options(arch: Arch, defines: &[(String, u32)]) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture=sm_{arch}"),
        "--std=c++17".to_string(),
        // ptxas's register and spill report lands in the program log.
        "--ptxas-options=-v".to_string(),
        // "declared but never referenced": the generator leaves helpers a family skips.
        "--diag-suppress=177".to_string(),
    ];
    o.extend(defines.iter().map(|(k, v)| format!("-D{k}={v}")));
    o
}

/// Destroys the NVRTC program however compilation ends.
pub(super) struct Program(nsys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed only here.
        let _ = unsafe { nsys::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Compiles `source` to a CUBIN for `sm_<arch>`. Needs only libnvrtc.
pub(super) fn nvrtc_build(source: &str, symbol: &str, arch: Arch, defines: &[(String, u32)]) -> Result<Built> {
    let options = nvrtc_options(arch, defines);
    let fail = |log: String| GemmError::Compile {
        backend: "NVRTC",
        kernel: symbol.to_string(),
        options: options.clone(),
        log,
    };
    if !nvrtc_present() {
        return Err(fail(
            "libnvrtc was not found (put the CUDA toolkit's lib64 on LD_LIBRARY_PATH)".into(),
        ));
    }
    let src = CString::new(source).map_err(|_| fail("the source contains a NUL byte".into()))?;
    let name = CString::new(format!("{symbol}.cu")).map_err(|_| fail("the symbol contains a NUL byte".into()))?;
    let c_opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| fail("an option contains a NUL byte".into()))?;
    let opt_ptrs: Vec<*const c_char> = c_opts.iter().map(|c| c.as_ptr()).collect();

    let start = Instant::now();
    let mut raw: nsys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: `src` and `name` outlive the program (it is destroyed at the end of this
    // function, before they are dropped); no headers are passed.
    unsafe {
        nsys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    }
    .result()
    .map_err(|e| fail(format!("nvrtcCreateProgram failed: {:?}", e.0)))?;
    let prog = Program(raw);
    // SAFETY: valid program; the option pointers live in `c_opts`.
    let compiled =
        unsafe { nsys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as std::ffi::c_int, opt_ptrs.as_ptr()) }.result();
    binary_cache::count_compile();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let log = program_log(&prog);
    if let Err(e) = compiled {
        let log = if log.trim().is_empty() {
            format!("{:?} (empty log)", e.0)
        } else {
            log
        };
        return Err(fail(log));
    }
    let mut size = 0usize;
    // SAFETY: valid, compiled program; CUBIN exists because the architecture is real.
    unsafe { nsys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| fail(format!("nvrtcGetCUBINSize failed: {:?}\n{log}", e.0)))?;
    let mut cubin = vec![0u8; size];
    if size > 0 {
        // SAFETY: `cubin` has the size NVRTC asked for.
        unsafe { nsys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) }
            .result()
            .map_err(|e| fail(format!("nvrtcGetCUBIN failed: {:?}\n{log}", e.0)))?;
    }
    if cubin.is_empty() {
        return Err(fail(format!("NVRTC produced no CUBIN\n{log}")));
    }
    Ok(Built { cubin, log, ms })
}

pub(super) fn program_log(prog: &Program) -> String {
    let mut size = 0usize;
    // SAFETY: valid program.
    if unsafe { nsys::nvrtcGetProgramLogSize(prog.0, &mut size) }
        .result()
        .is_err()
        || size == 0
    {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has the size NVRTC asked for.
    if unsafe { nsys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr() as *mut c_char) }
        .result()
        .is_err()
    {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
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
    let built = compile_logged(source, symbol, arch, defines)?;
    // The symbol table of the ELF image holds the entry's name; a missing one means the
    // source compiled but names its kernel differently.
    let needle = symbol.as_bytes();
    if needle.is_empty() || !built.cubin.windows(needle.len()).any(|w| w == needle) {
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
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        if !nvrtc_present() {
            return "nvrtc unknown".into();
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints; libnvrtc is loaded (checked above).
        match unsafe { nsys::nvrtcVersion(&mut major, &mut minor) }.result() {
            Ok(()) => format!("nvrtc {major}.{minor}"),
            Err(_) => "nvrtc unknown".into(),
        }
    })
    .clone()
}
