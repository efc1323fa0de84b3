//! CUDA's simt kernel (full f32 on the GPUs: no tensor-core instruction takes it) run on
//! the host, so that CI checks its results without a GPU: the generated source is
//! compiled as C++ under a shim in which every thread of a block is a `std::thread` and
//! `__syncthreads()` a `std::barrier`, the blocks run one after another (so `__shared__`
//! is a function-level `static`), and each output is compared with a double-precision
//! product. Every class of the planned configs (runs of 4 rows and columns per thread or
//! strided, vector widths, K split or whole) on each layout of A and B, at shapes that are
//! multiples of nothing (1, 7, 17, 33, 70, 129, 300), and aligned ones that take the
//! vector loads. A split's blocks run in reverse, so that the last to arrive is split 0,
//! and its arrival counters must end at zero.
//!
//! The kernel's inline PTX (16-bit conversions, unused by f32 operands) is dropped, and a
//! split's workspace traffic (`CG_STCG` and the rest, PTX in the kernel) is defined by the
//! shim as host atomics. It
//! needs a C++20 compiler (`CXX`, else `c++`); without one the test prints a notice and
//! passes, unless `CROSSGEMM_REQUIRE_CXX=1` (CI sets it), which makes that a failure.

use gemm_core::codegen::Variant;
use gemm_core::family::{FamilyId, Problem, TileConfig};
use gemm_core::plan::TuneSpace;
use gemm_core::target::{Targets, BUILTIN_TARGETS};
use gemm_core::{plan_target, AccMode, Backend, DType, EpOp, GemmIr, Layout, Param};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `alpha * (a * b) + bias + res`: the product's rows and columns reach the epilogue as
/// the store's (bias by column, res, column-major, by both).
fn ir(a: Layout, b: Layout) -> GemmIr {
    GemmIr::matmul("host_simt", DType::F32, AccMode::F32, a, b).with_epilogue(
        [
            Param::row("bias", DType::F32),
            Param::matrix("res", DType::F32, Layout::ColMajor),
            Param::scalar("alpha"),
        ],
        vec![
            EpOp::Param(4),
            EpOp::Acc,
            EpOp::Mul,
            EpOp::Param(2),
            EpOp::Add,
            EpOp::Param(3),
            EpOp::Add,
        ],
    )
}

/// The kernel's parameters after `(M, N, K,`, as the harness passes them.
const ABI: &str = "float* __restrict__ out, const float* __restrict__ p0, const float* __restrict__ p1, \
const float* __restrict__ p2, const float* __restrict__ p3, float p4, int ldo, long offo, int ld0, long off0, \
int ld1, long off1, long off2, int ld3, long off3, long bso, long bs0, long bs1, long bs2, long bs3, int nbatch)";

const SHIM: &str = r#"#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
using std::min;
struct cg_dim3 { unsigned x, y, z; };
thread_local cg_dim3 threadIdx, blockIdx;
static std::barrier<>* cg_bar;
#define __syncthreads() cg_bar->arrive_and_wait()
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define CG_STCG(p, v) (*(p) = (v))
#define CG_LDCG(p, v) ((v) = *(p))
#define CG_ARRIVE(p, old) ((old) = __atomic_fetch_add((p), 1u, __ATOMIC_ACQ_REL))
#define CG_RESET(p) __atomic_store_n((p), 0u, __ATOMIC_RELAXED)
struct cg_grid { unsigned x, y, z; };
static cg_grid gridDim;
struct alignas(16) float4 { float x, y, z, w; };
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
"#;

/// Runs the kernel (`cg_kernel`, a block of `MDIMC x NDIMC` threads per tile and split) at
/// `M N K AROW BROW`, and prints the largest error relative to max(1, |reference|).
const MAIN: &str = r#"
int main(int argc, char** argv) {
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), arow = atoi(argv[4]), brow = atoi(argv[5]);
    const int ld0 = arow ? K : M, ld1 = brow ? N : K, ld3 = M, ldo = N;
    std::vector<float> A((size_t)M * K + 4), B((size_t)K * N + 4), bias(N), res((size_t)M * N), out((size_t)M * N, NAN);
    auto a = [&](int i, int k) -> float& { return arow ? A[(size_t)i * ld0 + k] : A[(size_t)k * ld0 + i]; };
    auto b = [&](int k, int j) -> float& { return brow ? B[(size_t)k * ld1 + j] : B[(size_t)j * ld1 + k]; };
    for (int i = 0; i < M; ++i) for (int k = 0; k < K; ++k) a(i, k) = ((i * 7 + k * 3) % 13 - 6) / 8.0f;
    for (int k = 0; k < K; ++k) for (int j = 0; j < N; ++j) b(k, j) = ((k * 5 + j * 11) % 17 - 8) / 16.0f;
    for (int j = 0; j < N; ++j) bias[j] = (j % 5 - 2) / 4.0f;
    for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) res[(size_t)j * ld3 + i] = ((i + 2 * j) % 7 - 3) / 8.0f;
    const float alpha = 0.5f;
    const int threads = MDIMC * NDIMC;
    const int TILES = ((M + MWG - 1) / MWG) * ((N + NWG - 1) / NWG);
    gridDim = {(unsigned)TILES, (unsigned)KSPLIT, 1};
    /* A split's slots and arrival counters (zeroed, as the runtime's workspace is). */
    std::vector<float> ws((size_t)TILES * KSPLIT * MWG * NWG, NAN);
    std::vector<unsigned> flags(TILES, 0);
    (void)ws; (void)flags;
    /* The splits of a tile in reverse: the last to arrive is split 0. */
    for (int by = KSPLIT - 1; by >= 0; --by)
    for (int bx = 0; bx < TILES; ++bx) {
        std::barrier<> bar(threads);
        cg_bar = &bar;
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                blockIdx = {(unsigned)bx, (unsigned)by, 0};
                threadIdx = {(unsigned)(t % NDIMC), (unsigned)(t / NDIMC), 0};
                cg_kernel(
#if KSPLIT > 1
                    ws.data(), flags.data(),
#endif
                    M, N, K, out.data(), A.data(), B.data(), bias.data(), res.data(), alpha,
                    ldo, 0, ld0, 0, ld1, 0, 0, ld3, 0, 0, 0, 0, 0, 0, 1);
            });
        for (auto& t : ts) t.join();
    }
    for (unsigned f : flags) if (f != 0) { printf("counter left at %u\n", f); return 1; }
    double worst = 0;
    for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int k = 0; k < K; ++k) acc += (double)a(i, k) * b(k, j);
        const double want = alpha * acc + bias[j] + res[(size_t)j * ld3 + i];
        const double e = fabs(out[(size_t)i * ldo + j] - want) / fmax(1.0, fabs(want));
        if (!(e <= worst)) worst = e;  // NaN (an output never written) stays the worst
    }
    printf("%.3g\n", worst);
    return 0;
}
"#;

/// The C++ compiler, or why there is none.
fn cxx() -> Result<String, String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    match Command::new(&cxx).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(cxx),
        Ok(o) => Err(format!(
            "`{cxx} --version` failed: {}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!("no C++ compiler `{cxx}`: {e}")),
    }
}

/// `src` without its inline PTX statements (`asm(...);`).
fn without_asm(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(at) = rest.find("asm(") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(");").expect("an asm statement ends with `);`");
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

/// One config of each class the kernel's code paths tell apart: runs of 4 (or strided)
/// rows and columns per thread, vector width, and K split or whole.
fn configs() -> Vec<TileConfig> {
    let target = Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone();
    let plan = plan_target(&ir(Layout::RowMajor, Layout::ColMajor), &target, &TuneSpace::default());
    let mut seen = HashSet::new();
    let picked: Vec<TileConfig> = plan
        .configs
        .into_iter()
        .filter(|c| {
            let TileConfig::Simt(t) = c else { return false };
            let (mwi, nwi) = (t.mwg / t.mdimc, t.nwg / t.ndimc);
            seen.insert((mwi % 4 == 0, nwi % 4 == 0, t.vw, t.ksplit > 1))
        })
        .collect();
    assert!(
        picked.len() >= 8 && picked.iter().any(|c| c.k_split() > 1),
        "the plan's simt classes: {picked:?}"
    );
    picked
}

const SHAPES: [(usize, usize, usize); 8] = [
    (70, 90, 33),
    (1, 5, 1),
    (130, 129, 64),
    (17, 300, 7),
    (1, 1, 1),
    (128, 256, 64),
    (64, 64, 32),
    (4, 128, 16),
];

/// Compiles the kernel of `c` for `ir` under `defines` into `dir` and runs it at `shapes`;
/// the failures, one line each.
fn run(cxx: &str, dir: &Path, ir: &GemmIr, c: &TileConfig, defines: &[(&str, u32)], shapes: &[Problem]) -> Vec<String> {
    let src = FamilyId::Simt.emit(ir, Backend::Cuda, Variant::Full);
    assert!(
        src.contains(&format!(
            "{}(\n#if KSPLIT > 1\n    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,\n#endif\n    int M, int N, int K, {ABI}",
            ir.symbol()
        )),
        "the kernel's ABI changed: update ABI and MAIN"
    );
    let kernel = without_asm(&src).replace(&format!("{}(", ir.symbol()), "cg_kernel(");
    let cpp = dir.join("k.cpp");
    std::fs::write(&cpp, format!("{SHIM}{kernel}{MAIN}")).unwrap();
    let exe = dir.join("k");
    let mut cmd = Command::new(cxx);
    cmd.args(["-std=c++20", "-O1", "-pthread", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp);
    for (k, v) in defines {
        cmd.arg(format!("-D{k}={v}"));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{c}: {}", String::from_utf8_lossy(&out.stderr));
    let mut failures = Vec::new();
    for p in shapes {
        let row = |l: Layout| u8::from(l == Layout::RowMajor).to_string();
        let out = Command::new(&exe)
            .args([
                p.m.to_string(),
                p.n.to_string(),
                p.k.to_string(),
                row(ir.a_layout()),
                row(ir.b_layout()),
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let err: f64 = text.trim().parse().unwrap_or(f64::NAN);
        if !(out.status.success() && err <= 1e-5) {
            failures.push(format!(
                "{c} {:?}x{:?} at {}x{}x{}: error {text}",
                ir.a_layout(),
                ir.b_layout(),
                p.m,
                p.n,
                p.k
            ));
        }
    }
    failures
}

fn check_layouts(a: Layout, b: Layout) {
    let cxx = match cxx() {
        Ok(c) => c,
        Err(why) if std::env::var("CROSSGEMM_REQUIRE_CXX").as_deref() == Ok("1") => {
            panic!("CROSSGEMM_REQUIRE_CXX=1 and {why}")
        }
        Err(why) => {
            eprintln!("skipping CUDA simt on the host: {why}");
            return;
        }
    };
    let ir = ir(a, b);
    let dir: PathBuf = std::env::temp_dir().join(format!("crossgemm-simt-host-{a:?}{b:?}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for c in configs() {
        // Shapes grouped by the alignment defines they give (one binary per group).
        let mut groups: BTreeMap<Vec<(&str, u32)>, Vec<Problem>> = BTreeMap::new();
        for &(m, n, k) in &SHAPES {
            let p = Problem::new(m, n, k);
            groups.entry(c.defines(&ir, Backend::Cuda, p)).or_default().push(p);
        }
        for (defines, shapes) in groups {
            failures.extend(run(&cxx, &dir, &ir, &c, &defines, &shapes));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_row_b_row() {
    check_layouts(Layout::RowMajor, Layout::RowMajor);
}

#[test]
fn a_row_b_col() {
    check_layouts(Layout::RowMajor, Layout::ColMajor);
}

#[test]
fn a_col_b_row() {
    check_layouts(Layout::ColMajor, Layout::RowMajor);
}

#[test]
fn a_col_b_col() {
    check_layouts(Layout::ColMajor, Layout::ColMajor);
}
