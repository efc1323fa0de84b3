//! One NVRTC compile of a generated CUDA source to a CUBIN, with the options crossgemm
//! always uses, shared by the two places that compile:
//! - the runtime's JIT (`gemm-runtime`), at a kernel's first launch or in the tuner;
//! - the macro's ahead-of-time build (`gemm-macros` with its `aot` feature), which embeds
//!   CUBINs of a kernel's build-time config table so that a first call loads instead of
//!   compiling.
//!
//! Both must produce the same options for the same config (the runtime finds an embedded
//! CUBIN by them), so [`options`] is the single place they are spelled.
//!
//! Needs only libnvrtc, loaded at run time (no GPU, no libcuda).

use cudarc::nvrtc::sys as nsys;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Whether ptxas's report in a compile's log (`--ptxas-options=-v`) says it serialised
/// wgmma. It reports that as `info` lines, not warnings: a wait or an arrive it injected
/// around wgmma whose registers the code between them touches (C7517, C7519:
/// "warpgroup.wait is injected ..."), or a "Potential Performance Loss" (C7510-C7515).
/// The one reading of those lines for the runtime's report of a build and gemm-core's
/// compile checks.
pub fn wgmma_serialised(log: &str) -> bool {
    log.contains("is injected") || log.contains("Potential Performance Loss")
}

/// The architecture a CUBIN is built for: `sm_<cc><suffix>`, e.g. `sm_90` or `sm_90a`
/// (code for that exact chip: wgmma, setmaxnreg).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arch {
    /// Compute capability, major * 10 + minor.
    pub cc: u32,
    /// `""` or `"a"`.
    pub suffix: &'static str,
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

/// The NVRTC options of one build: the architecture, the language, ptxas's report, and
/// the config's preprocessor constants in the order given.
pub fn options(arch: Arch, defines: &[(String, u32)]) -> Vec<String> {
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

/// What NVRTC produced for one program.
pub struct Built {
    pub cubin: Vec<u8>,
    /// The program log (ptxas's `-v` report included).
    pub log: String,
    /// Wall time of `nvrtcCompileProgram`, milliseconds.
    pub ms: f64,
}

/// Why a build failed: NVRTC's log, or what was missing before it could run.
#[derive(Debug, Clone)]
pub struct BuildError {
    pub log: String,
    /// Whether NVRTC ran at all (false: libnvrtc is missing or an input had a NUL byte).
    pub compiled: bool,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.log)
    }
}

impl std::error::Error for BuildError {}

/// Whether libnvrtc can be loaded.
///
/// Looks where cudarc looks (the dynamic loader's path: `LD_LIBRARY_PATH`, ldconfig), and
/// then in `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`.
pub fn present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: only tries to dlopen the library by its usual names.
        if unsafe { nsys::is_culib_present() } {
            return true;
        }
        preload_from_toolkit() && unsafe { nsys::is_culib_present() }
    })
}

/// The toolkit puts libnvrtc in `<cuda>/lib64`, which is often not on the loader's path
/// (the H200 machine needs `LD_LIBRARY_PATH` for it). cudarc opens libraries by bare
/// names only, but glibc's `dlopen` answers a bare name with an already loaded object
/// whose SONAME matches, so loading the file by its full path once (and never closing
/// it) makes cudarc's own lookup of `libnvrtc.so.13` succeed.
#[cfg(target_os = "linux")]
fn preload_from_toolkit() -> bool {
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
        let file = dir.join(SONAME);
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
fn preload_from_toolkit() -> bool {
    false
}

/// The soname of the NVRTC that cudarc's `cuda-13000` bindings look for. Preloading any
/// other file (an unversioned `libnvrtc.so`, a 12.x one) would not satisfy its lookup.
#[cfg(target_os = "linux")]
const SONAME: &str = "libnvrtc.so.13";

/// NVRTC's version (`nvrtc 13.0`), or `nvrtc unknown`.
pub fn version() -> String {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        if !present() {
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

/// Destroys the NVRTC program however compilation ends.
struct Program(nsys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed only here.
        let _ = unsafe { nsys::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Compiles `source` (named `<symbol>.cu` in NVRTC's messages) to a CUBIN with `options`.
pub fn compile(source: &str, symbol: &str, options: &[String]) -> Result<Built, BuildError> {
    let early = |log: &str| BuildError {
        log: log.to_string(),
        compiled: false,
    };
    if !present() {
        return Err(early(
            "libnvrtc was not found (put the CUDA toolkit's lib64 on LD_LIBRARY_PATH)",
        ));
    }
    let src = CString::new(source).map_err(|_| early("the source contains a NUL byte"))?;
    let name = CString::new(format!("{symbol}.cu")).map_err(|_| early("the symbol contains a NUL byte"))?;
    let c_opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|_| early("an option contains a NUL byte"))?;
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
    .map_err(|e| early(&format!("nvrtcCreateProgram failed: {:?}", e.0)))?;
    let prog = Program(raw);
    // SAFETY: valid program; the option pointers live in `c_opts`.
    let compiled =
        unsafe { nsys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as std::ffi::c_int, opt_ptrs.as_ptr()) }.result();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let log = program_log(&prog);
    let fail = |log: String| BuildError { log, compiled: true };
    if let Err(e) = compiled {
        return Err(fail(if log.trim().is_empty() {
            format!("{:?} (empty log)", e.0)
        } else {
            log
        }));
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

fn program_log(prog: &Program) -> String {
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

/// Whether a CUBIN's symbol table names `symbol` (a source that compiled but names its
/// kernel differently has no such entry).
pub fn has_symbol(cubin: &[u8], symbol: &str) -> bool {
    let needle = symbol.as_bytes();
    !needle.is_empty() && cubin.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_spell_the_arch_and_the_defines_in_order() {
        let o = options(Arch { cc: 90, suffix: "a" }, &[("BM".into(), 128), ("A_VEC".into(), 1)]);
        assert_eq!(o[0], "--gpu-architecture=sm_90a");
        assert_eq!(&o[o.len() - 2..], ["-DBM=128", "-DA_VEC=1"]);
        assert_eq!(options(Arch::from(80), &[])[0], "--gpu-architecture=sm_80");
    }

    #[test]
    fn a_kernel_compiles_and_its_symbol_is_found() {
        if !present() {
            assert!(
                std::env::var_os("CROSSGEMM_REQUIRE_NVRTC").is_none(),
                "CROSSGEMM_REQUIRE_NVRTC is set but libnvrtc was not found"
            );
            eprintln!("skipped: no libnvrtc");
            return;
        }
        let src = "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= SCALE; }";
        let built = compile(src, "twice", &options(Arch::from(80), &[("SCALE".into(), 2)])).unwrap();
        assert!(has_symbol(&built.cubin, "twice"));
        assert!(!has_symbol(&built.cubin, "thrice"));
        let err = compile(src, "twice", &options(Arch::from(80), &[])).err().unwrap();
        assert!(err.compiled && err.log.contains("SCALE"), "{}", err.log);
    }
}
