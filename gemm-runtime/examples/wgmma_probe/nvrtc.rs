//! NVRTC to a CUBIN (no GPU needed), with the ptxas report parsed.

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
pub use gemm_nvrtc::present;
/// A compiled program.
pub use gemm_nvrtc::Built;

/// `sm_90` (the support kernels) and `sm_90a` (wgmma, setmaxnreg).
pub const SM90: gemm_nvrtc::Arch = gemm_nvrtc::Arch { cc: 90, suffix: "" };
pub const SM90A: gemm_nvrtc::Arch = gemm_nvrtc::Arch { cc: 90, suffix: "a" };

/// The options every kernel of the probe is compiled with: the runtime's.
pub fn options(arch: gemm_nvrtc::Arch, defines: &[(String, u32)]) -> Vec<String> {
    gemm_nvrtc::options(arch, defines)
}

/// Compiles `source` (named `name.cu`) with `options` to a CUBIN.
pub fn compile(source: &str, name: &str, options: &[String]) -> Result<Built, String> {
    gemm_nvrtc::compile(source, name, options).map_err(|e| format!("NVRTC failed:\n{}", e.log))
}
