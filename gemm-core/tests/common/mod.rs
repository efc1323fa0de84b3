//! What the compile checks of the generated CUDA sources share: libnvrtc opened at run
//! time (gemm-core has no CUDA dependency), and reading ptxas's `-v` report.
#![allow(dead_code)]

/// libnvrtc, opened at run time.
pub mod nvrtc {
    use std::ffi::{c_char, c_int, c_void, CStr, CString};

    extern "C" {
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }

    type Prog = *mut c_void;
    type Create = unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int;
    type Compile = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int;
    type Size = unsafe extern "C" fn(Prog, *mut usize) -> c_int;
    type Get = unsafe extern "C" fn(Prog, *mut c_char) -> c_int;
    type Destroy = unsafe extern "C" fn(*mut Prog) -> c_int;

    pub struct Nvrtc {
        create: Create,
        compile: Compile,
        log_size: Size,
        log: Get,
        cubin_size: Size,
        destroy: Destroy,
    }

    impl Nvrtc {
        /// libnvrtc from the loader's path, `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64` or
        /// `/usr/local/cuda/lib64`.
        pub fn open() -> Option<Nvrtc> {
            let mut names: Vec<String> = vec!["libnvrtc.so.13".into(), "libnvrtc.so.12".into(), "libnvrtc.so".into()];
            for var in ["CUDA_PATH", "CUDA_HOME"] {
                if let Ok(d) = std::env::var(var) {
                    names.push(format!("{d}/lib64/libnvrtc.so.13"));
                }
            }
            names.push("/usr/local/cuda/lib64/libnvrtc.so.13".into());
            for n in names {
                let c = CString::new(n).unwrap();
                // SAFETY: dlopen of a shared library by name (RTLD_NOW); never closed.
                let h = unsafe { dlopen(c.as_ptr(), 2) };
                if h.is_null() {
                    continue;
                }
                let sym = |s: &str| {
                    let c = CString::new(s).unwrap();
                    // SAFETY: looking up a symbol in a live handle.
                    unsafe { dlsym(h, c.as_ptr()) }
                };
                let ptrs = [
                    sym("nvrtcCreateProgram"),
                    sym("nvrtcCompileProgram"),
                    sym("nvrtcGetProgramLogSize"),
                    sym("nvrtcGetProgramLog"),
                    sym("nvrtcGetCUBINSize"),
                    sym("nvrtcDestroyProgram"),
                ];
                if ptrs.iter().any(|p| p.is_null()) {
                    continue;
                }
                // SAFETY: the symbols are NVRTC's C entry points with these signatures.
                unsafe {
                    return Some(Nvrtc {
                        create: std::mem::transmute::<*mut c_void, Create>(ptrs[0]),
                        compile: std::mem::transmute::<*mut c_void, Compile>(ptrs[1]),
                        log_size: std::mem::transmute::<*mut c_void, Size>(ptrs[2]),
                        log: std::mem::transmute::<*mut c_void, Get>(ptrs[3]),
                        cubin_size: std::mem::transmute::<*mut c_void, Size>(ptrs[4]),
                        destroy: std::mem::transmute::<*mut c_void, Destroy>(ptrs[5]),
                    });
                }
            }
            None
        }

        /// Compiles; returns (ok, log, cubin size).
        pub fn compile(&self, src: &str, name: &str, opts: &[String]) -> (bool, String, usize) {
            let src = CString::new(src).unwrap();
            let name = CString::new(name).unwrap();
            let copts: Vec<CString> = opts.iter().map(|o| CString::new(o.as_str()).unwrap()).collect();
            let ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();
            let mut p: Prog = std::ptr::null_mut();
            // SAFETY: NVRTC calls on a program created here and destroyed at the end;
            // every buffer has the size NVRTC reported.
            unsafe {
                assert_eq!(
                    (self.create)(
                        &mut p,
                        src.as_ptr(),
                        name.as_ptr(),
                        0,
                        std::ptr::null(),
                        std::ptr::null()
                    ),
                    0
                );
                let ok = (self.compile)(p, ptrs.len() as c_int, ptrs.as_ptr()) == 0;
                let mut n = 0usize;
                (self.log_size)(p, &mut n);
                let mut buf = vec![0 as c_char; n.max(1)];
                (self.log)(p, buf.as_mut_ptr());
                let log = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
                let mut cubin = 0usize;
                if ok {
                    (self.cubin_size)(p, &mut cubin);
                }
                (self.destroy)(&mut p);
                (ok, log, cubin)
            }
        }
    }
}

/// The number just before `suffix` in `s` (ptxas's `-v` report: `0 bytes spill stores`).
pub fn number_before(s: &str, suffix: &str) -> Option<u32> {
    let head = &s[..s.find(suffix)?];
    head.rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// libnvrtc, or `None` after a notice naming `test` when it cannot be loaded;
/// `CROSSGEMM_REQUIRE_NVRTC=1` turns that skip into a failure.
pub fn nvrtc_or_skip(test: &str) -> Option<nvrtc::Nvrtc> {
    let nv = nvrtc::Nvrtc::open();
    if nv.is_none() {
        if std::env::var("CROSSGEMM_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("CROSSGEMM_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (is its folder on LD_LIBRARY_PATH?)");
        }
        eprintln!("{test}: skipped, libnvrtc not found (set CROSSGEMM_REQUIRE_NVRTC=1 to fail instead)");
    }
    nv
}

/// Whether ptxas's report in `log` says it serialised wgmma (`info` lines, not warnings),
/// read as the runtime reads it: [`gemm_nvrtc::wgmma_serialised`].
pub fn wgmma_serialised(log: &str) -> bool {
    gemm_nvrtc::wgmma_serialised(log)
}

/// Asserts that ptxas's report in `log` has no warning, no spill and no stack frame, and
/// no serialised wgmma ([`wgmma_serialised`]).
pub fn assert_no_spills(what: &str, log: &str) {
    assert!(!log.contains("warning"), "{what}: ptxas warned:\n{log}");
    assert!(!wgmma_serialised(log), "{what}: ptxas serialised wgmma:\n{log}");
    for (suffix, name) in [
        (" bytes spill stores", "spill stores"),
        (" bytes spill loads", "spill loads"),
        (" bytes stack frame", "stack"),
    ] {
        let n = log.lines().find_map(|l| number_before(l, suffix));
        assert_eq!(n, Some(0), "{what}: {name}:\n{log}");
    }
}

/// The registers ptxas gave the kernel (`Used N registers`).
pub fn registers(log: &str) -> Option<u32> {
    log.lines().find_map(|l| number_before(l, " registers"))
}

/// The NVRTC options of a compile check for `sm_<arch>` with `defines` (as the runtime's
/// `gemm_nvrtc::options` spells them: ptxas's report in the log).
pub fn compile_options(arch: &str, defines: Vec<(&'static str, u32)>) -> Vec<String> {
    let mut opts = vec![
        format!("--gpu-architecture=sm_{arch}"),
        "--std=c++17".to_string(),
        "--ptxas-options=-v".into(),
        "--diag-suppress=177".into(),
    ];
    opts.extend(defines.into_iter().map(|(k, v)| format!("-D{k}={v}")));
    opts
}
