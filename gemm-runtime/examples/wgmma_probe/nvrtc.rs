//! NVRTC to a CUBIN (no GPU needed), with the ptxas report parsed.

use cudarc::nvrtc::sys as nsys;
use std::ffi::{c_char, CString};

/// A compiled program.
pub struct Built {
    pub cubin: Vec<u8>,
    pub log: String,
    pub ms: f64,
}

/// What ptxas said about the kernel.
#[derive(Debug, Default, Clone)]
pub struct Ptxas {
    pub registers: Option<u32>,
    pub spill_stores: Option<u32>,
    pub spill_loads: Option<u32>,
    pub stack: Option<u32>,
    /// Every line that mentions a warning (C7508, C7511, C7515, ...).
    pub warnings: Vec<String>,
}

impl Ptxas {
    pub fn parse(log: &str) -> Ptxas {
        let mut p = Ptxas::default();
        for line in log.lines() {
            let l = line.trim();
            if l.contains("warning") {
                p.warnings.push(l.to_string());
            }
            if let Some(v) = num_before(l, " registers") {
                if l.contains("Used") {
                    p.registers = Some(v);
                }
            }
            if let Some(v) = num_before(l, " bytes spill stores") {
                p.spill_stores = Some(v);
            }
            if let Some(v) = num_before(l, " bytes spill loads") {
                p.spill_loads = Some(v);
            }
            if let Some(v) = num_before(l, " bytes stack frame") {
                p.stack = Some(v);
            }
        }
        p
    }
    pub fn spills(&self) -> u32 {
        self.spill_stores.unwrap_or(0) + self.spill_loads.unwrap_or(0)
    }
}

fn num_before(s: &str, suffix: &str) -> Option<u32> {
    let head = &s[..s.find(suffix)?];
    let digits = head.rsplit(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

/// Whether libnvrtc can be loaded.
pub fn present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { nsys::is_culib_present() }
}

/// The options every kernel of the probe is compiled with.
pub fn options(arch: &str, defines: &[(String, u32)]) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "--ptxas-options=-v".to_string(),
        "--diag-suppress=177".to_string(),
    ];
    o.extend(defines.iter().map(|(k, v)| format!("-D{k}={v}")));
    o
}

/// Compiles `source` (named `name.cu`) with `options` to a CUBIN.
pub fn compile(source: &str, name: &str, options: &[String]) -> Result<Built, String> {
    if !present() {
        return Err("libnvrtc.so.13 not found (put its folder on LD_LIBRARY_PATH)".into());
    }
    let src = CString::new(source).map_err(|_| "NUL in source")?;
    let cname = CString::new(format!("{name}.cu")).map_err(|_| "NUL in name")?;
    let c_opts: Vec<CString> = options.iter().map(|o| CString::new(o.as_str()).unwrap()).collect();
    let ptrs: Vec<*const c_char> = c_opts.iter().map(|c| c.as_ptr()).collect();
    let start = std::time::Instant::now();
    let mut prog: nsys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: the strings outlive the program, which is destroyed below.
    unsafe {
        nsys::nvrtcCreateProgram(
            &mut prog,
            src.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    }
    .result()
    .map_err(|e| format!("nvrtcCreateProgram: {:?}", e.0))?;
    // SAFETY: valid program and option pointers.
    let res = unsafe { nsys::nvrtcCompileProgram(prog, ptrs.len() as i32, ptrs.as_ptr()) }.result();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let log = program_log(prog);
    let out = if let Err(e) = res {
        Err(format!("NVRTC failed ({:?}):\n{log}", e.0))
    } else {
        let mut size = 0usize;
        // SAFETY: valid compiled program.
        unsafe { nsys::nvrtcGetCUBINSize(prog, &mut size) }
            .result()
            .map_err(|e| format!("nvrtcGetCUBINSize: {:?}", e.0))
            .and_then(|_| {
                let mut cubin = vec![0u8; size];
                // SAFETY: buffer of the size NVRTC asked for.
                unsafe { nsys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char) }
                    .result()
                    .map_err(|e| format!("nvrtcGetCUBIN: {:?}", e.0))?;
                Ok(Built { cubin, log, ms })
            })
    };
    // SAFETY: created above, destroyed once.
    let _ = unsafe { nsys::nvrtcDestroyProgram(&mut prog) };
    out
}

fn program_log(prog: nsys::nvrtcProgram) -> String {
    let mut size = 0usize;
    // SAFETY: valid program.
    if unsafe { nsys::nvrtcGetProgramLogSize(prog, &mut size) }
        .result()
        .is_err()
        || size == 0
    {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    // SAFETY: buffer of the size NVRTC asked for.
    if unsafe { nsys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) }
        .result()
        .is_err()
    {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
