//! The `aot` feature: `#[gemm_kernel]` builds every config of a CUDA target's config table
//! with NVRTC at build time, and the launch path finds each CUBIN by the compile it
//! replaces. Runs without a GPU (NVRTC at build time is all it needs):
//! `cargo test --features aot --test prebuilt` with libnvrtc on `LD_LIBRARY_PATH`.

mod common;

use crossgemm::prelude::*;
use crossgemm::{Backend, Problem, Stored};

// The shipped H200 records have winners for this signature and epilogue class.
#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

// The H200 tables of the other classes of issue 9's table (f16 and bf16; no epilogue,
// bias+ReLU, bias+GELU) and of tf32, whose CUBINs the check of every prebuilt build
// reads too.
#[gemm_kernel]
fn plain_f16(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

#[gemm_kernel]
fn plain_bf16(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>) -> Matrix<bf16> {
    x * w
}

#[gemm_kernel]
fn linear_gelu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    gelu(x * w + bias)
}

#[gemm_kernel]
fn linear_relu_bf16(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, bias: Row<bf16>) -> Matrix<bf16> {
    relu(x * w + bias)
}

#[gemm_kernel]
fn linear_gelu_bf16(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, bias: Row<bf16>) -> Matrix<bf16> {
    gelu(x * w + bias)
}

#[gemm_kernel(acc = tf32)]
fn plain_tf32(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

// No record matches a column-major output of a bf16 kernel with a column-major A:
// nothing to build ahead of time.
#[gemm_kernel]
fn untabled(x: Matrix<bf16, ColMajor>, w: Matrix<bf16>) -> Matrix<f32, ColMajor> {
    x * w
}

#[test]
fn every_table_config_of_a_cuda_target_is_prebuilt_and_found_by_its_compile() {
    let spec = linear_relu::spec();
    let h200 = spec.target("h200").expect("the sm90 feature plans h200");
    assert!(
        !h200.table().is_empty(),
        "the shipped records give linear_relu an h200 table"
    );
    let symbol = spec.ir().symbol();
    for seed in h200.table() {
        let [m, n, k] = seed.shape;
        // As a launch compiles it: misaligned operands (K = 700) staged first, unless a
        // shape specialist reads them where they lie.
        let staged =
            crossgemm::staging::as_launched_in(h200.spec(), &h200.plan().configs, spec.ir(), Problem::new(m, n, k));
        let p = h200
            .prebuilt_for(spec.ir(), &seed.config, staged)
            .unwrap_or_else(|| panic!("no prebuilt CUBIN for {} at {m}x{n}x{k} ({})", seed.config, seed.bucket));
        assert_eq!(p.symbol(), symbol);
        assert_eq!(p.family(), seed.config.family_id().name());
        assert!(p.cubin().starts_with(b"\x7fELF"), "a CUBIN is an ELF image");
        assert!(p.log().contains("registers"), "ptxas's report is kept: {}", p.log());
        let arch = if seed.config.family_id().name() == "wgmma" {
            "sm_90a"
        } else {
            "sm_90"
        };
        assert_eq!(p.options()[0], format!("--gpu-architecture={arch}"));
    }
    // One CUBIN per distinct compile: buckets sharing a config share it.
    let mut options: Vec<_> = h200.prebuilt().iter().map(|p| (p.family(), p.options())).collect();
    let n = options.len();
    options.sort();
    options.dedup();
    assert_eq!(options.len(), n, "a compile was built twice");
    assert!(n <= h200.table().len());
}

#[test]
fn other_compiles_find_nothing() {
    let spec = linear_relu::spec();
    let h200 = spec.target("h200").unwrap();
    let seed = h200.table().iter().find(|s| s.shape[2] % 8 == 0).unwrap();
    let [m, n, k] = seed.shape;
    // A's rows or base no longer 16-byte aligned: where that changes the defines (the
    // family takes another load path), NVRTC runs.
    let packed = Problem::new(m, n, k);
    let defines = |p: Problem| seed.config.defines(spec.ir(), Backend::Cuda, p);
    let mut differing = 0;
    for a in [Stored::new(k + 1, 0), Stored::new(0, 4), Stored::new(0, 1)] {
        let other = Problem { a, ..packed };
        if defines(other) != defines(packed) {
            differing += 1;
            assert!(
                h200.prebuilt_for(spec.ir(), &seed.config, other).is_none(),
                "{} with A {a:?}",
                seed.config
            );
        }
    }
    assert!(differing > 0, "no misaligned A changes {}'s defines", seed.config);
    // A config outside the table (the plan's last) has no CUBIN.
    let last = h200.plan().configs.last().unwrap();
    if h200.table().iter().all(|s| s.config != *last) {
        assert!(h200.prebuilt_for(spec.ir(), last, Problem::new(m, n, k)).is_none());
    }
    // OpenCL targets and kernels without a table carry none.
    for t in spec.targets().iter().filter(|t| t.backend == Backend::Opencl) {
        assert!(t.prebuilt().is_empty(), "{}", t.target);
    }
    for t in untabled::spec().targets() {
        assert!(t.table().is_empty() && t.prebuilt().is_empty(), "{}", t.target);
    }
}

/// Issue 9's check of the winners' builds, for every CUBIN the H200 tables of seven
/// kernels prebuild (f16 and bf16 with no epilogue, bias+ReLU and bias+GELU; tf32): ptxas
/// reports no stack frame, no spills and no serialised wgmma (a wait or arrive it
/// injected, or a "Potential Performance Loss"); and in their SASS (nvdisasm: `CROSSGEMM_NVDISASM`, else the one on
/// the `PATH`; CI installs it from PyPI) each holds its family's tensor-core instruction
/// (HGMMA for wgmma, HMMA for the mma.sync families) and no local-memory access (LDL,
/// STL). Without nvdisasm the SASS half is a reported skip, a failure under
/// `CROSSGEMM_REQUIRE_NVDISASM=1` (CI sets it where the install worked).
#[test]
fn prebuilt_cubins_keep_to_registers_and_tensor_cores() {
    let nvdisasm = sass::nvdisasm();
    let mut checked = 0;
    let specs = [
        linear_relu::spec(),
        plain_f16::spec(),
        linear_gelu::spec(),
        plain_bf16::spec(),
        linear_relu_bf16::spec(),
        linear_gelu_bf16::spec(),
        plain_tf32::spec(),
    ];
    for spec in specs {
        let h200 = spec.target("h200").expect("the sm90 feature plans h200");
        assert!(
            !h200.prebuilt().is_empty(),
            "{}: the shipped records give it an h200 table",
            spec.name
        );
        for p in h200.prebuilt() {
            let defines: Vec<_> = p.options().iter().filter(|o| o.starts_with("-D")).collect();
            let what = format!("{} {} {defines:?}", spec.name, p.family());
            let ptxas = p.ptxas();
            assert_eq!(
                (ptxas.stack_frame, ptxas.spill_stores, ptxas.spill_loads),
                (Some(0), Some(0), Some(0)),
                "{what}: stack frame, spill stores, spill loads:\n{}",
                p.log()
            );
            assert!(!ptxas.serialised_wgmma, "{what}: ptxas serialised wgmma:\n{}", p.log());
            if let Some(tool) = &nvdisasm {
                let ops = sass::opcodes(tool, p.cubin());
                let tensor = match p.family() {
                    "wgmma" => Some("HGMMA"),
                    "decode" | "decode_n" | "mma_sync" => Some("HMMA"),
                    _ => None,
                };
                if let Some(t) = tensor {
                    assert!(ops.iter().any(|o| o == t), "{what}: no {t} in its SASS");
                }
                let local: Vec<_> = ops.iter().filter(|o| *o == "LDL" || *o == "STL").collect();
                assert!(local.is_empty(), "{what}: local memory in its SASS: {local:?}");
            }
            let registers = ptxas.registers.map_or("no count of".to_string(), |r| r.to_string());
            println!("{what}: {registers} registers");
            checked += 1;
        }
    }
    assert!(checked >= specs.len(), "{checked} CUBINs checked");
    if nvdisasm.is_none() {
        common::skip(
            "prebuilt_cubins_keep_to_registers_and_tensor_cores",
            "the SASS of the prebuilt CUBINs",
            "no nvdisasm (CROSSGEMM_NVDISASM unset, none on the PATH)",
            "CROSSGEMM_REQUIRE_NVDISASM",
        );
    }
}

mod sass {
    use std::path::PathBuf;
    use std::process::Command;

    /// `CROSSGEMM_NVDISASM` (which must run), else `nvdisasm` on the `PATH` if it runs.
    pub fn nvdisasm() -> Option<PathBuf> {
        let runs = |p: &PathBuf| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        match std::env::var_os("CROSSGEMM_NVDISASM") {
            Some(p) if !p.is_empty() => {
                let p = PathBuf::from(p);
                assert!(runs(&p), "CROSSGEMM_NVDISASM={} does not run", p.display());
                Some(p)
            }
            _ => Some(PathBuf::from("nvdisasm")).filter(runs),
        }
    }

    /// The opcodes of `cubin`'s SASS, without their modifiers (`HGMMA.64x256x16.F32` is
    /// `HGMMA`) or predicates.
    pub fn opcodes(nvdisasm: &PathBuf, cubin: &[u8]) -> Vec<String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "crossgemm-prebuilt-{}-{}.cubin",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, cubin).unwrap();
        let out = Command::new(nvdisasm).arg("-c").arg(&path).output().unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(
            out.status.success(),
            "nvdisasm: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            // `/*0a80*/  @P0 LDL.64 R2, [R1+0x8] ;`: the first word after the address
            // and any predicate.
            .filter_map(|l| {
                let code = l.trim_start().strip_prefix("/*")?.split_once("*/")?.1;
                code.split_whitespace()
                    .find(|w| !w.starts_with('@'))
                    .map(|w| w.split('.').next().unwrap_or(w).trim_end_matches(';').to_string())
            })
            .collect()
    }
}
