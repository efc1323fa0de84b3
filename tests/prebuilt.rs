//! The `aot` feature: `#[gemm_kernel]` builds every config of a CUDA target's config table
//! with NVRTC at build time, and the launch path finds each CUBIN by the compile it
//! replaces. Runs without a GPU (NVRTC at build time is all it needs):
//! `cargo test --features aot --test prebuilt` with libnvrtc on `LD_LIBRARY_PATH`.

use crossgemm::prelude::*;
use crossgemm::{Backend, Problem, Stored};

// The shipped H200 records have winners for this signature and epilogue class.
#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
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
