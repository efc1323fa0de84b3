//! Writes the CUDA sources of a matrix of IRs to a folder, for offline NVRTC checks:
//! `cargo run -p gemm-core --example dump_cuda -- /tmp/cu` then
//! `scripts/nvrtc_check.py /tmp/cu/*.cu -D ...` (see scripts/nvrtc_check.py).
//!
//! Files are named `<tag>_<dtype>_<A layout><B layout>_<out>.cu` (r = row-major,
//! c = column-major), e.g. `mma_f16_rc_f16.cu`.

use gemm_core::codegen::Variant;
use gemm_core::ir::{AccMode, DType, EpOp, Func, GemmIr, Layout, Param};
use gemm_core::{Backend, FamilyId};

fn ir(dt: DType, acc: AccMode, la: Layout, lb: Layout, out: DType, out_layout: Layout) -> GemmIr {
    GemmIr::matmul("dump", dt, acc, la, lb)
        .with_epilogue(
            [
                Param::row("bias", DType::F32),
                Param::matrix("res", out, Layout::ColMajor),
                Param::scalar("alpha"),
            ],
            // gelu(alpha * (a * b) + bias) + res
            vec![
                EpOp::Param(4),
                EpOp::Acc,
                EpOp::Mul,
                EpOp::Param(2),
                EpOp::Add,
                EpOp::Call(Func::Gelu),
                EpOp::Param(3),
                EpOp::Add,
            ],
        )
        .with_out(out, out_layout)
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/cu".into());
    std::fs::create_dir_all(&dir).expect("create output folder");
    let l = |x: Layout| if x == Layout::RowMajor { "r" } else { "c" };
    let mut n = 0;
    for (tag, dt, acc, family, out, out_layout) in [
        (
            "mma",
            DType::F16,
            AccMode::F32,
            FamilyId::MmaSync,
            DType::F16,
            Layout::RowMajor,
        ),
        (
            "mma",
            DType::Bf16,
            AccMode::F32,
            FamilyId::MmaSync,
            DType::Bf16,
            Layout::ColMajor,
        ),
        (
            "mma",
            DType::F32,
            AccMode::Tf32,
            FamilyId::MmaSync,
            DType::F32,
            Layout::RowMajor,
        ),
        (
            "fma",
            DType::F32,
            AccMode::F32,
            FamilyId::Simt,
            DType::F32,
            Layout::RowMajor,
        ),
        (
            "fma",
            DType::F16,
            AccMode::F32,
            FamilyId::Simt,
            DType::F16,
            Layout::ColMajor,
        ),
        // Both forms of the gemv source (`-DSWAP=0/1`; a form the layouts do not allow
        // is an `#error`).
        (
            "gemv",
            DType::F16,
            AccMode::F32,
            FamilyId::Gemv,
            DType::F16,
            Layout::RowMajor,
        ),
        (
            "gemv",
            DType::Bf16,
            AccMode::F32,
            FamilyId::Gemv,
            DType::F32,
            Layout::ColMajor,
        ),
        (
            "gemvn",
            DType::F16,
            AccMode::F32,
            FamilyId::GemvN,
            DType::F16,
            Layout::RowMajor,
        ),
        (
            "gemvn",
            DType::F32,
            AccMode::F32,
            FamilyId::GemvN,
            DType::F32,
            Layout::ColMajor,
        ),
        (
            "decoden",
            DType::Bf16,
            AccMode::F32,
            FamilyId::DecodeN,
            DType::F16,
            Layout::RowMajor,
        ),
    ] {
        for la in [Layout::RowMajor, Layout::ColMajor] {
            for lb in [Layout::RowMajor, Layout::ColMajor] {
                let g = ir(dt, acc, la, lb, out, out_layout);
                let src = family.emit(&g, Backend::Cuda, Variant::Full);
                let acc_tag = if acc == AccMode::Tf32 { "tf32" } else { dt.name() };
                let path = format!("{dir}/{tag}_{acc_tag}_{}{}_{}.cu", l(la), l(lb), out.name());
                std::fs::write(&path, src).expect("write source");
                n += 1;
            }
        }
    }
    println!("wrote {n} sources to {dir}");
}
