//! The Hopper wgmma generator without a GPU: the source's ABI, defines and variants, the
//! host-side rules (supports, smem, grid), and, where libnvrtc can be loaded, a compile
//! of a handful of configs for sm_90a with no spills, no stack and no ptxas warnings.
//!
//! gemm-core has no CUDA dependency, so the compile check opens libnvrtc itself
//! (`dlopen`). Without it the check prints a notice and passes, unless
//! `CROSSGEMM_REQUIRE_NVRTC=1`, which turns the skip into a failure.

use gemm_core::codegen::Variant;
use gemm_core::family::wgmma::{self, Wgmma, WgmmaTile, DEFINES};
use gemm_core::family::{KernelFamily, Problem};
use gemm_core::{AccMode, Backend, DType, EpOp, Func, GemmIr, Layout, Param};

mod common;

fn plain(dtype: DType, a: Layout, b: Layout) -> GemmIr {
    GemmIr::matmul("wg_test", dtype, AccMode::F32, a, b)
}

fn bias_relu(dtype: DType) -> GemmIr {
    GemmIr::matmul("wg_bias_relu", dtype, AccMode::F32, Layout::RowMajor, Layout::ColMajor).with_epilogue(
        [Param::row("bias", dtype)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
    )
}

fn split(ksplit: u32, t: WgmmaTile) -> WgmmaTile {
    WgmmaTile { ksplit, ..t }
}

fn streamk(t: WgmmaTile) -> WgmmaTile {
    WgmmaTile { streamk: true, ..t }
}

fn pingpong(t: WgmmaTile) -> WgmmaTile {
    WgmmaTile { pingpong: true, ..t }
}

fn deep(bk: u32, t: WgmmaTile) -> WgmmaTile {
    WgmmaTile { bk, ..t }
}

/// `t` in a 2x2 cluster (both operands multicast).
fn quad(t: WgmmaTile) -> WgmmaTile {
    WgmmaTile {
        cluster_m: 2,
        cluster_n: 2,
        ..t
    }
}

fn cfg(bm: u32, bn: u32, stages: u32, consumers: u32, cluster_m: u32) -> WgmmaTile {
    WgmmaTile {
        cluster_m,
        ..WgmmaTile::new(bm, bn, stages, consumers)
    }
}

#[test]
fn kernel_has_the_documented_abi() {
    let ir = bias_relu(DType::Bf16);
    let src = wgmma::emit(&ir);
    let sym = ir.symbol();
    let head = format!(
        "__launch_bounds__(CG_THREADS, 1) CG_CLUSTER_DIMS {sym}(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map, CG_C_MAP CG_SPLITK_ARGS int M, int N, int K, unsigned short* __restrict__ out, const unsigned short* __restrict__ p0, const unsigned short* __restrict__ p1, const unsigned short* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch)"
    );
    assert!(src.contains(&head), "kernel signature not found:\n{head}");
    assert!(src.contains("extern \"C\" __global__ void"));
    // Split-K builds take the workspace and the counters before M (gemm_core::Workspace).
    assert!(src.contains("#define CG_SPLITK_ARGS float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,"));
    // The TMA-store epilogue takes the output's map after B's (gemm_core::OUT_PARAM).
    assert!(src.contains("#define CG_C_MAP const __grid_constant__ CgTmaMap c_map,"));
    assert!(src.contains("struct __align__(64) CgTmaMap { unsigned long long v[16]; };"));
    assert!(src.contains("#define CG_THREADS (128 * (CONSUMERS + 1))"));
    assert!(!src.contains("#include"), "NVRTC compiles the source bare");
    // The bias is a Row: staged once per tile, read as a pair per two columns.
    assert!(src.contains("float cgw_epi(float acc, float v2)"));
    assert!(src.contains("const float v0 = cgw_epi(acc[mi][r], a2_0);"));
    assert!(src.contains("#define CGW_PF_2 (CGW_OFF_2 + BN * 2 <= CG_PAREA)"));
    assert!(src.contains("cgw_cp4(dst, left >= 2 ? (const void*)(p2 + e) : (const void*)p2, left >= 2 ? 4u : 0u);"));
    // f32 column-major output: scalar stores at (long)(j) * ldo + (i).
    let mut f = plain(DType::F16, Layout::RowMajor, Layout::ColMajor);
    f.out_dtype = DType::F32;
    f.out_layout = Layout::ColMajor;
    let src = wgmma::emit(&f);
    assert!(src.contains("float* __restrict__ out"));
    assert!(src.contains("cg_st_f32(out, (long)(j) * ldo + (i), v0)"));
    assert!(src.contains(".f32.f16.f16"));
}

#[test]
fn layouts_select_the_transpose_flags() {
    for (a, b, ta, tb) in [
        (Layout::RowMajor, Layout::ColMajor, 0, 0),
        (Layout::RowMajor, Layout::RowMajor, 0, 1),
        (Layout::ColMajor, Layout::ColMajor, 1, 0),
        (Layout::ColMajor, Layout::RowMajor, 1, 1),
    ] {
        let src = wgmma::emit(&plain(DType::Bf16, a, b));
        assert!(src.contains(&format!("p, 1, 1, {ta}, {tb};")), "{a:?} {b:?}");
        assert!(src.contains(&format!("#define CG_A_KMAJOR {}", 1 - ta)));
        assert!(src.contains(&format!("#define CG_B_KMAJOR {}", 1 - tb)));
        assert!(src.contains("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
    }
}

/// Every `#ifndef NAME` of the source is documented in DEFINES, and every documented
/// name has one, across layouts and variants.
#[test]
fn every_define_is_documented() {
    let documented: Vec<&str> = DEFINES.iter().map(|(n, _)| *n).collect();
    for (_, doc) in DEFINES {
        assert!(doc.contains("default"), "DEFINES entries state their default: {doc}");
    }
    for v in Variant::ALL {
        for ir in [
            plain(DType::F16, Layout::ColMajor, Layout::RowMajor),
            bias_relu(DType::Bf16),
        ] {
            let src = wgmma::emit_variant(&ir, v);
            let used: Vec<&str> = src
                .lines()
                .filter_map(|l| l.trim().strip_prefix("#ifndef "))
                .map(str::trim)
                .collect();
            for u in &used {
                assert!(documented.contains(u), "`{u}` is read but not in DEFINES");
            }
            for d in &documented {
                assert!(
                    used.contains(d),
                    "`{d}` is documented but the source has no #ifndef for it"
                );
            }
        }
    }
    // The config's own defines are documented too.
    for (k, _) in WgmmaTile::default().defines() {
        assert!(documented.contains(&k), "{k}");
    }
}

#[test]
fn variants_keep_symbol_and_abi() {
    let ir = bias_relu(DType::F16);
    let full = wgmma::emit(&ir);
    assert_eq!(full, wgmma::emit_variant(&ir, Variant::Full));
    assert!(!full.starts_with("/* crossgemm diagnosis variant"));
    let sig = |s: &str| {
        let at = s.find(&ir.symbol()).expect("symbol");
        let at = s[at..].find('(').unwrap() + at;
        let end = s[at..].find(')').unwrap() + at;
        s[at..end].to_string()
    };
    for v in Variant::ALL.into_iter().filter(|v| *v != Variant::Full) {
        let src = wgmma::emit_variant(&ir, v);
        assert!(src.starts_with(&v.marker()), "{v}");
        assert_eq!(sig(&src), sig(&full), "{v}");
        assert!(src.contains(&format!(
            "void __launch_bounds__(CG_THREADS, 1) CG_CLUSTER_DIMS {}(",
            ir.symbol()
        )));
    }
    assert!(full.contains("cg_wgmma(acc[mi]") && full.contains("CG_TMA_A(a_s"));
    let lo = wgmma::emit_variant(&ir, Variant::LoadOnly);
    assert!(!lo.contains("cg_wgmma(acc[mi]") && lo.contains("CG_TMA_A(a_s"));
    let co = wgmma::emit_variant(&ir, Variant::ComputeOnly);
    assert!(co.contains("cg_wgmma(acc[mi]") && !co.contains("cg_tma_load(a_s"));
    let ne = wgmma::emit_variant(&ir, Variant::NoEpilogue);
    assert!(!ne.contains("cgw_epi(") && ne.contains("const float v0 = acc[mi][r];"));
    // no_store: the mainloop as in full, no epilogue, no store but one that never runs,
    // and no parameter prefetch (nothing would wait for it).
    let ns = wgmma::emit_variant(&ir, Variant::NoStore);
    assert!(ns.contains("cg_wgmma(acc[mi]") && ns.contains("CG_TMA_A(a_s"));
    assert!(!ns.contains("cgw_epi(") && !ns.contains("cgw_cp4(dst"));
    assert!(full.contains("cgw_cp4(dst"));
    // One in each form: the plain kernel and the turned-around one (`SWAP`).
    assert_eq!(ns.matches("cg_st_f16(out,").count(), 2, "{ns}");
    assert!(ns.contains("if (K < 0) { cg_st_f16(out, (long)(m0) * ldo + (n0 + tid), cg_s); }"));
    assert!(!ns.contains("cg_st2(out") && !ns.contains("reinterpret_cast<cg_u4*>(out"));
}

fn tf32(a: Layout, b: Layout) -> GemmIr {
    GemmIr::matmul("wg_tf32", DType::F32, AccMode::Tf32, a, b)
}

/// An `acc = tf32x3` kernel (its operands are the split copies: K-major both).
fn tf32x3() -> GemmIr {
    GemmIr::matmul(
        "wg_tf32x3",
        DType::F32,
        AccMode::Tf32x3,
        Layout::RowMajor,
        Layout::ColMajor,
    )
}

#[test]
fn supports_16_bit_operands_and_k_major_tf32() {
    for d in [DType::F16, DType::Bf16] {
        for a in [Layout::RowMajor, Layout::ColMajor] {
            for b in [Layout::RowMajor, Layout::ColMajor] {
                assert!(wgmma::supports(&plain(d, a, b)).is_ok());
            }
        }
    }
    let f32 = plain(DType::F32, Layout::RowMajor, Layout::ColMajor);
    assert!(wgmma::supports(&f32).unwrap_err().contains("SIMT"));
    assert!(wgmma::supports(&tf32(Layout::RowMajor, Layout::ColMajor)).is_ok());
    for (a, b, which) in [
        (Layout::RowMajor, Layout::RowMajor, "B"),
        (Layout::ColMajor, Layout::ColMajor, "A"),
        (Layout::ColMajor, Layout::RowMajor, "A"),
    ] {
        let why = wgmma::supports(&tf32(a, b)).unwrap_err();
        assert!(
            why.contains("K-major operands only") && why.contains(&format!("{which} is MN-major")),
            "{why}"
        );
    }
}

/// tf32: k8 steps without transpose operands, 32-element (128-byte) k-tiles, f32 storage.
/// acc = tf32x3 keeps an f32 sum beside every accumulator (CG_PROMOTE 1): its tiles
/// take half the accumulators of tf32's, and its source promotes every k-tile.
#[test]
fn tf32x3_tiles_leave_room_for_the_promoted_sums() {
    let wide = WgmmaTile::for_dtype(128, 256, 4, 2, DType::F32);
    let square = WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32);
    wide.validate(&tf32(Layout::RowMajor, Layout::ColMajor)).unwrap();
    let why = wide.validate(&tf32x3()).unwrap_err();
    assert!(
        why.contains("256 accumulator registers per thread") && why.contains("tf32x3's sums"),
        "{why}"
    );
    square.validate(&tf32x3()).unwrap();
    let src = wgmma::emit(&tf32x3());
    assert!(src.contains("#ifndef CG_PROMOTE\n#define CG_PROMOTE 1\n#endif"));
    assert!(src.contains("cg_sum[mi][r] += acc[mi][r];"));
    assert!(wgmma::emit(&tf32(Layout::RowMajor, Layout::ColMajor)).contains("#define CG_PROMOTE 0\n"));
}

#[test]
fn tf32_takes_k8_steps_on_128_byte_k_tiles() {
    let ir = tf32(Layout::RowMajor, Layout::ColMajor);
    let src = wgmma::emit(&ir);
    assert!(src.contains("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"));
    assert!(src.contains("p, 1, 1;"), "tf32 wgmma has no transpose immediates");
    assert!(src.contains("#define CG_ESZ 4\ntypedef float cg_ab_t;"));
    assert_eq!(wgmma::bk_for(DType::F32), 32);
    let t = WgmmaTile::for_dtype(128, 256, 4, 2, DType::F32);
    t.validate(&ir).unwrap();
    // The same bytes as the 16-bit 128x256x64 ring.
    assert_eq!(t.smem_bytes(DType::F32), WgmmaTile::default().smem_bytes(DType::F16));
    // A k-tile is 1 to 4 swizzle rows (32 tf32 elements each); more than one row needs
    // K-major operands.
    let why = WgmmaTile { bk: 256, ..t }.validate(&ir).unwrap_err();
    assert!(why.contains("BK = 256 (1 to 4 swizzle rows of 32"), "{why}");
    WgmmaTile { bk: 64, stages: 2, ..t }.validate(&ir).unwrap();
    let mn = plain(DType::F16, Layout::ColMajor, Layout::ColMajor);
    let why = WgmmaTile {
        bk: 128,
        stages: 2,
        ..WgmmaTile::default()
    }
    .validate(&mn)
    .unwrap_err();
    assert!(why.contains("needs K-major A and B"), "{why}");
    // The TMA box of a K-major f32 tile is 32 elements (128 bytes) deep, and TMA rounds
    // the elements to tf32 (TFLOAT32 maps).
    let maps = Wgmma.tensor_maps(&t, &ir, Problem::new(256, 256, 256));
    assert_eq!(maps[0].box_dims, [32, 128]);
    assert_eq!(maps[1].box_dims, [32, 256]);
    assert_eq!(maps[0].pitch_bytes, 1024);
    assert!(maps.iter().all(|m| m.tf32));
    let f16_maps = Wgmma.tensor_maps(
        &WgmmaTile::default(),
        &bias_relu(DType::F16),
        Problem::new(256, 256, 256),
    );
    assert!(f16_maps.iter().all(|m| !m.tf32));
    // Rows TMA cannot map would reach the tensor cores unrounded: mma.sync takes them.
    assert!(Wgmma.accepts(&t, &ir, Problem::new(256, 256, 68)).is_ok());
    let why = Wgmma.accepts(&t, &ir, Problem::new(256, 256, 67)).unwrap_err();
    assert!(why.contains("unrounded"), "{why}");
}

#[test]
fn host_rules_match_the_source() {
    // 1024 alignment slack + 4 stages of (128 + 256) rows of 128 bytes + 8 barriers.
    assert_eq!(wgmma::smem_bytes(128, 256, 64, 4, 2), 1024 + 4 * 384 * 128 + 64);
    let d = WgmmaTile::default();
    assert_eq!(d.threads(), 384);
    assert!(d.epi_smem && !d.inflight && d.group_m == 8 && d.cluster_m == 1);
    assert!(WgmmaTile::new(64, 128, 8, 1).inflight);
    // The ring plus the staging buffers of the two consumers (whose row padding is the
    // epilogue's 1 KiB parameter area).
    assert_eq!(d.smem_bytes(DType::Bf16), 197_696 + 2 * wgmma::EPI_STAGING_BYTES);
    assert_eq!(WgmmaTile { epi_smem: false, ..d }.smem_bytes(DType::F16), 197_696);
    assert_eq!(wgmma::EPI_PARAM_BYTES, 1024);
    assert_eq!(d.grid(4096, 4096, 1, 132), 132);
    // One persistent grid walks every product of a batch: 8 tiles of 512x512 in each of 32.
    assert_eq!(d.grid(512, 512, 32, 132), 132);
    assert_eq!(d.grid(512, 512, 4, 132), 4 * d.tiles(512, 512) as u32);
    assert_eq!(d.grid(1, 8, 1, 132), 1);
    assert_eq!(d.grid(300, 300, 1, 132), 3 * 2);
    let x2 = cfg(128, 256, 4, 2, 2);
    assert_eq!(x2.tiles(4096, 4096), 16 * 16);
    assert_eq!(x2.grid(4096, 4096, 1, 132), 132);
    assert_eq!(x2.grid(129, 8, 1, 132), 2);
    assert_eq!(x2.grid(4096, 4096, 1, 133), 132);

    let rc = plain(DType::Bf16, Layout::RowMajor, Layout::ColMajor);
    let rr = plain(DType::Bf16, Layout::RowMajor, Layout::RowMajor);
    // A 2x2 cluster takes 2x2 tiles a work item and launches whole clusters.
    let x4 = quad(cfg(128, 128, 6, 2, 1));
    assert_eq!(x4.cluster(), 4);
    assert_eq!(x4.tiles(1000, 1000), 4 * 4);
    assert_eq!(x4.grid(1000, 1000, 1, 132), 64);
    assert_eq!(x4.grid(4096, 4096, 1, 132), 132);
    assert_eq!(x4.grid(1, 8, 1, 132), 4);
    assert!(x4.validate(&rc).is_ok());
    assert!(x4.validate(&rr).is_ok());
    assert!(WgmmaTile { cluster_n: 3, ..x4 }
        .validate(&rc)
        .unwrap_err()
        .contains("CLUSTER_N"));
    assert!(split(2, x4)
        .validate(&rc)
        .unwrap_err()
        .contains("split-K takes no cluster along N"));
    assert!(x4.defines().contains(&("CLUSTER_N", 2)));
    // Clusters of 8 (4 along M sharing B, 2 along N sharing A): 1000^3 in 128x80 tiles
    // is 2 x 7 work items of 8 blocks, 112 blocks as cuBLAS's kernel there.
    let x8 = WgmmaTile {
        cluster_m: 4,
        cluster_n: 2,
        ..cfg(128, 80, 6, 2, 1)
    };
    assert_eq!(x8.cluster(), 8);
    assert_eq!(x8.tiles(1000, 1000), 2 * 7);
    assert_eq!(x8.grid(1000, 1000, 1, 132), 112);
    assert!(x8.validate(&rc).is_ok());
    assert!(x8.defines().contains(&("CLUSTER_M", 4)) && x8.defines().contains(&("CLUSTER_N", 2)));
    // 16 blocks exceed CUDA's portable cluster size.
    assert!(WgmmaTile { cluster_n: 4, ..x8 }
        .validate(&rc)
        .unwrap_err()
        .contains("at most 8 blocks"));
    assert!(!d.defines().iter().any(|(k, _)| *k == "CLUSTER_N"));
    assert!(d.validate(&rc).is_ok());
    assert!(cfg(128, 128, 6, 2, 1).validate(&rr).is_ok());
    assert!(cfg(128, 96, 4, 2, 1).validate(&rc).is_ok());
    assert!(cfg(128, 96, 4, 2, 1).validate(&rr).unwrap_err().contains("N-major"));
    assert!(cfg(128, 256, 5, 2, 1)
        .validate(&rc)
        .unwrap_err()
        .contains("shared memory"));
    assert!(cfg(128, 256, 2, 1, 1)
        .validate(&rc)
        .unwrap_err()
        .contains("accumulator"));
    assert!(cfg(192, 128, 4, 2, 1).validate(&rc).unwrap_err().contains("BM"));
    assert!(cfg(128, 264, 2, 2, 1).validate(&rc).unwrap_err().contains("BN"));
    assert!(cfg(128, 256, 4, 3, 1).validate(&rc).unwrap_err().contains("CONSUMERS"));
    assert!(cfg(128, 256, 4, 2, 3).validate(&rc).unwrap_err().contains("CLUSTER_M"));
    // KSPLIT's static_assert: 1 to 16.
    for ksplit in [0, 17] {
        let why = split(ksplit, cfg(64, 64, 8, 1, 1)).validate(&rc).unwrap_err();
        assert!(why.contains(&format!("KSPLIT = {ksplit} (1 to 16)")), "{why}");
    }
    split(16, cfg(64, 64, 8, 1, 1)).validate(&rc).unwrap();
    assert_eq!(wgmma::tma_box(true, 128, 64), [64, 128]);
    assert_eq!(wgmma::tma_box(false, 256, 64), [64, 64]);
}

/// Every parameter kind reaches `cgw_epi` the way the IR says: a Col per slab from the
/// parameter area, a row-major residual by pairs, a scalar as the argument itself.
#[test]
fn epilogue_parameters_follow_their_kinds() {
    let mut ir = plain(DType::F16, Layout::RowMajor, Layout::ColMajor);
    ir.params.push(Param::col("c", DType::Bf16));
    ir.params.push(Param::matrix("res", DType::F16, Layout::RowMajor));
    ir.params.push(Param::scalar("s"));
    ir.params.push(Param::row("bias", DType::F32));
    ir.epilogue = vec![
        EpOp::Acc,
        EpOp::Param(4),
        EpOp::Mul,
        EpOp::Param(2),
        EpOp::Add,
        EpOp::Call(Func::Gelu),
        EpOp::Param(3),
        EpOp::Add,
        EpOp::Param(5),
        EpOp::Add,
    ];
    let src = wgmma::emit(&ir);
    assert!(src.contains("float cgw_epi(float acc, float v2, float v3, float v4, float v5)"));
    assert!(src.contains("cgw_epi(acc[mi][r], cv2[(r >> 1) & 1], a3_0, p4, a5_0)"));
    assert!(src.contains("#define CGW_PF_2 (CGW_OFF_2 + CG_WG_M * 2 <= CG_PAREA)"));
    assert!(src.contains("#define CGW_PF_5 (CGW_OFF_5 + BN * 4 <= CG_PAREA)"));
    assert!(src.contains("if (mat_ok3) { const unsigned w3 = *(const unsigned*)(p3 + (long)i * ld3 + j);"));
    assert!(src.contains("const cg_f2 w = *(const cg_f2*)(pbuf + CGW_PA(CGW_OFF_5 + 4 * jl));"));
    // The fast gelu replaces the prelude's for every later use.
    assert!(src.contains("#define cg_gelu cgw_gelu"));
    assert!(src.find("#define cg_gelu cgw_gelu").unwrap() < src.find("float cgw_epi(").unwrap());
}

/// Rows TMA cannot map (K not a multiple of 8 for K-major operands, M or N for MN-major
/// ones) go to the cp.async producer when they are 4-byte multiples, on configs without
/// a cluster; its defines say so and its tensor maps are placeholders.
#[test]
fn unaligned_rows_take_the_cp_async_producer() {
    let rc = plain(DType::F16, Layout::RowMajor, Layout::ColMajor);
    let cr = plain(DType::Bf16, Layout::ColMajor, Layout::RowMajor);
    let d = WgmmaTile::default();
    let x2 = cfg(128, 256, 4, 2, 2);
    let aligned = Problem::new(3000, 5000, 704);
    let k700 = Problem::new(3000, 5000, 700);
    assert!(wgmma::tma_ok(&rc, aligned) && !wgmma::tma_ok(&rc, k700));
    assert!(Wgmma.accepts(&d, &rc, aligned).is_ok() && Wgmma.accepts(&x2, &rc, aligned).is_ok());
    assert!(Wgmma.accepts(&d, &rc, k700).is_ok());
    assert!(Wgmma.accepts(&x2, &rc, k700).unwrap_err().contains("multicast"));
    // 1400-byte rows: 8-byte copies; 1404: 4-byte; odd K: neither.
    assert_eq!(wgmma::cpasync_chunks(&rc, k700), Some([8, 8]));
    assert_eq!(wgmma::cpasync_chunks(&rc, Problem::new(64, 64, 702)), Some([4, 4]));
    assert_eq!(wgmma::cpasync_chunks(&rc, aligned), None);
    assert!(Wgmma
        .accepts(&d, &rc, Problem::new(64, 64, 701))
        .unwrap_err()
        .contains("4 bytes"));
    // MN-major operands: the rows are M (A) and N (B); K is free.
    assert!(wgmma::tma_ok(&cr, Problem::new(64, 128, 7)));
    assert_eq!(wgmma::cpasync_chunks(&cr, Problem::new(100, 132, 64)), Some([8, 8]));
    assert_eq!(wgmma::cpasync_chunks(&cr, Problem::new(96, 130, 64)), Some([16, 4]));
    assert!(Wgmma.accepts(&d, &cr, Problem::new(97, 128, 64)).is_err());
    let defs = Wgmma.defines(&d, &rc, Backend::Cuda, k700);
    for want in [("CG_CPASYNC", 1), ("CG_CPA_A", 8), ("CG_CPA_B", 8)] {
        assert!(defs.contains(&want), "{defs:?}");
    }
    assert!(!Wgmma
        .defines(&d, &rc, Backend::Cuda, aligned)
        .iter()
        .any(|(k, _)| *k == "CG_CPASYNC"));
    let maps = Wgmma.tensor_maps(&d, &rc, k700);
    assert_eq!(maps.len(), 2);
    assert!(maps
        .iter()
        .all(|m| m.dims == [8, 1] && m.pitch_bytes == 16 && !m.swizzle_128b));
    assert_eq!((maps[0].param, maps[1].param), (rc.a, rc.b));
    assert_eq!(Wgmma.tensor_maps(&d, &rc, aligned)[0].pitch_bytes, 704 * 2);
    let src = wgmma::emit(&rc);
    assert!(src.contains(
        "cg_cpa_tile<BM, 1, CG_CPA_A>(a_s + j * (BM * 128), CG_A_PTR, CG_A_LD, M, K, m0, k0 + j * CG_KROW, tid);"
    ));
    assert!(src.contains("#define CG_A_PTR p0\n#define CG_B_PTR p1\n#define CG_A_LD ld0\n#define CG_B_LD ld1"));
    assert!(src.contains("cp.async.mbarrier.arrive.noinc.shared::cta.b64"));
    assert!(src.contains("fence.proxy.async.shared::cta;"));
}

/// A batch of 6 products of `m × n × k`, A's and B's matrices `bstride` elements apart (0:
/// broadcast), packed otherwise.
fn batch_of(m: usize, n: usize, k: usize, [sa, sb]: [usize; 2]) -> Problem {
    Problem::new(m, n, k)
        .stored(
            gemm_core::Stored::default().with_bstride(sa),
            gemm_core::Stored::default().with_bstride(sb),
        )
        .batched(6)
}

/// The rank of each map follows the batch: rank 3 for an operand with one matrix per
/// product (the `CG_*_TMA3` define and the `.3d` copy), rank 2 for a broadcast one, and
/// a batch whose matrices overlap takes the cp.async producer.
#[test]
fn batched_operands_take_rank_3_maps() {
    let ir = bias_relu(DType::F16);
    let c = cfg(128, 128, 6, 2, 1);
    let both = batch_of(512, 512, 128, [512 * 128, 512 * 128]);
    let maps = Wgmma.tensor_maps(&c, &ir, both);
    assert_eq!(maps[0].batch, Some([6, 512 * 128 * 2]));
    assert_eq!(maps[1].batch, Some([6, 512 * 128 * 2]));
    let d = Wgmma.defines(&c, &ir, Backend::Cuda, both);
    assert!(d.contains(&("CG_A_TMA3", 1)) && d.contains(&("CG_B_TMA3", 1)), "{d:?}");
    let a_only = batch_of(512, 512, 128, [512 * 128, 0]);
    let maps = Wgmma.tensor_maps(&c, &ir, a_only);
    assert_eq!((maps[0].batch.is_some(), maps[1].batch), (true, None));
    let d = Wgmma.defines(&c, &ir, Backend::Cuda, a_only);
    assert!(
        d.contains(&("CG_A_TMA3", 1)) && !d.iter().any(|(k, _)| *k == "CG_B_TMA3"),
        "{d:?}"
    );
    let overlapping = batch_of(512, 512, 128, [64 * 128, 0]);
    assert!(!wgmma::tma_ok(&ir, overlapping));
    let d = Wgmma.defines(&c, &ir, Backend::Cuda, overlapping);
    assert!(
        d.contains(&("CG_CPASYNC", 1)) && !d.iter().any(|(k, _)| k.ends_with("TMA3")),
        "{d:?}"
    );
    // The batch stride counts for alignment as the pitch does: 4 bytes apart takes
    // 4-byte copies, 2 bytes apart (an odd stride of f16) nothing at all.
    let four = batch_of(512, 512, 128, [512 * 128 + 2, 0]);
    assert!(!wgmma::tma_ok(&ir, four));
    assert_eq!(wgmma::cpasync_chunks(&ir, four), Some([4, 16]));
    let two = batch_of(512, 512, 128, [512 * 128 + 1, 0]);
    let why = Wgmma.accepts(&c, &ir, two).unwrap_err();
    assert!(why.contains("batch stride 65537 elements"), "{why}");
    let src = wgmma::emit(&ir);
    assert!(src.contains("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"));
    assert!(src.contains("#define CG_TMA_A(dst, c0, c1) cg_tma_load3(dst, &a_map, full, c0, c1, (int)cg_bz)"));
}

#[test]
fn configs_compile_for_sm90a_without_spills() {
    let Some(nv) = common::nvrtc_or_skip("configs_compile_for_sm90a_without_spills") else {
        return;
    };
    let mut f32col = plain(DType::F16, Layout::RowMajor, Layout::ColMajor);
    f32col.out_dtype = DType::F32;
    f32col.out_layout = Layout::ColMajor;
    let tma = Problem::new(256, 256, 256);
    let cases: Vec<(GemmIr, WgmmaTile, Variant, Problem)> = vec![
        (
            plain(DType::Bf16, Layout::RowMajor, Layout::ColMajor),
            WgmmaTile::default(),
            Variant::Full,
            tma,
        ),
        // The cp.async producer: 8-byte copies of both (K = 700), 16 and 4 bytes (M-major
        // A, K-major B with K = 702), one consumer.
        (
            bias_relu(DType::F16),
            WgmmaTile::default(),
            Variant::Full,
            Problem::new(3000, 5000, 700),
        ),
        (
            plain(DType::Bf16, Layout::ColMajor, Layout::ColMajor),
            cfg(256, 128, 3, 2, 1),
            Variant::Full,
            Problem::new(1024, 1000, 702),
        ),
        (
            plain(DType::F16, Layout::RowMajor, Layout::RowMajor),
            cfg(64, 128, 8, 1, 1),
            Variant::Full,
            Problem::new(100, 132, 36),
        ),
        (
            plain(DType::F16, Layout::RowMajor, Layout::RowMajor),
            cfg(128, 128, 6, 2, 2),
            Variant::Full,
            tma,
        ),
        (
            plain(DType::Bf16, Layout::ColMajor, Layout::ColMajor),
            cfg(64, 128, 8, 1, 1),
            Variant::Full,
            tma,
        ),
        (bias_relu(DType::Bf16), cfg(256, 128, 4, 2, 1), Variant::Full, tma),
        (f32col, cfg(128, 256, 3, 2, 2), Variant::Full, tma),
        (
            plain(DType::Bf16, Layout::RowMajor, Layout::ColMajor),
            WgmmaTile::default(),
            Variant::ComputeOnly,
            tma,
        ),
        (bias_relu(DType::F16), cfg(128, 128, 6, 2, 1), Variant::NoStore, tma),
        (
            plain(DType::F16, Layout::ColMajor, Layout::RowMajor),
            WgmmaTile {
                epi_smem: false,
                inflight: true,
                ..WgmmaTile::default()
            },
            Variant::Full,
            tma,
        ),
        // tf32: TMA, a cluster of 2, and edge tiles in M and N.
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            WgmmaTile::for_dtype(128, 256, 4, 2, DType::F32),
            Variant::Full,
            tma,
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            WgmmaTile {
                cluster_m: 2,
                ..WgmmaTile::for_dtype(64, 128, 8, 1, DType::F32)
            },
            Variant::Full,
            tma,
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32),
            Variant::Full,
            Problem::new(77, 45, 68),
        ),
        // Ping-pong: 128x128 and 64x256 (each consumer a whole tile), with the fused
        // bias, a cluster of 2, M-major A and the cp.async producer.
        (
            bias_relu(DType::F16),
            pingpong(cfg(128, 128, 6, 2, 1)),
            Variant::Full,
            tma,
        ),
        (
            plain(DType::Bf16, Layout::ColMajor, Layout::RowMajor),
            pingpong(cfg(64, 256, 4, 2, 2)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            pingpong(cfg(128, 128, 5, 2, 1)),
            Variant::Full,
            Problem::new(3000, 5000, 700),
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            pingpong(WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32)),
            Variant::Full,
            tma,
        ),
        // 2x2 clusters: K-major and MN-major operands, the fused bias on edge tiles in M and
        // N (blocks past both), tf32, a batch (rank-3 maps), one consumer and ping-pong.
        (
            bias_relu(DType::F16),
            quad(cfg(128, 128, 6, 2, 1)),
            Variant::Full,
            Problem::new(1000, 1000, 1000),
        ),
        // Clusters of 8: 4x2 with a 128x80 tile, 2x4 with one consumer.
        (
            bias_relu(DType::F16),
            WgmmaTile {
                cluster_m: 4,
                cluster_n: 2,
                ..cfg(128, 80, 6, 2, 1)
            },
            Variant::Full,
            Problem::new(1000, 1000, 1000),
        ),
        (
            plain(DType::Bf16, Layout::RowMajor, Layout::ColMajor),
            WgmmaTile {
                cluster_m: 2,
                cluster_n: 4,
                ..cfg(64, 128, 8, 1, 1)
            },
            Variant::Full,
            tma,
        ),
        (
            plain(DType::F16, Layout::ColMajor, Layout::RowMajor),
            quad(WgmmaTile::default()),
            Variant::Full,
            tma,
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            quad(WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32)),
            Variant::Full,
            tma,
        ),
        (
            plain(DType::Bf16, Layout::RowMajor, Layout::ColMajor),
            quad(cfg(128, 64, 8, 2, 1)),
            Variant::Full,
            batch_of(300, 200, 64, [300 * 64, 0]),
        ),
        (
            plain(DType::F16, Layout::RowMajor, Layout::ColMajor),
            quad(cfg(64, 128, 8, 1, 1)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            quad(pingpong(cfg(128, 128, 6, 2, 1))),
            Variant::Full,
            tma,
        ),
        (
            plain(DType::F16, Layout::RowMajor, Layout::ColMajor),
            quad(cfg(128, 128, 6, 2, 1)),
            Variant::LoadOnly,
            tma,
        ),
        // Stream-K: two consumers and one, the fused bias, MN-major operands, cp.async and
        // tf32 (batches are refused: Wgmma::accepts).
        (bias_relu(DType::F16), streamk(WgmmaTile::default()), Variant::Full, tma),
        (
            plain(DType::Bf16, Layout::ColMajor, Layout::RowMajor),
            streamk(cfg(64, 128, 8, 1, 1)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            streamk(cfg(128, 192, 5, 2, 1)),
            Variant::Full,
            Problem::new(3000, 5000, 700),
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            streamk(WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32)),
            Variant::Full,
            tma,
        ),
        // Split-K: one and two consumers, TMA and cp.async, 16-bit and tf32, with the
        // fused bias (its prefetch is waited for on the splits that skip the epilogue).
        (
            bias_relu(DType::F16),
            split(2, cfg(64, 64, 8, 1, 1)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::Bf16),
            split(4, cfg(64, 128, 8, 1, 1)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            split(2, cfg(128, 128, 6, 2, 1)),
            Variant::Full,
            Problem::new(100, 132, 700),
        ),
        (
            plain(DType::F16, Layout::ColMajor, Layout::RowMajor),
            split(4, cfg(128, 64, 8, 2, 1)),
            Variant::Full,
            tma,
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            split(4, WgmmaTile::for_dtype(64, 128, 8, 1, DType::F32)),
            Variant::Full,
            tma,
        ),
        // acc = tf32x3: the promoted sums beside the accumulators (CG_PROMOTE), with two
        // consumers, one (a wgmma group in flight), three, split-K, deeper k-tiles, ping-pong
        // and stream-K.
        (
            tf32x3(),
            WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32),
            Variant::Full,
            tma,
        ),
        (
            tf32x3(),
            WgmmaTile::for_dtype(64, 128, 8, 1, DType::F32),
            Variant::Full,
            Problem::new(77, 45, 68),
        ),
        (
            tf32x3(),
            WgmmaTile::for_dtype(192, 96, 5, 3, DType::F32),
            Variant::Full,
            tma,
        ),
        (
            tf32x3(),
            split(2, WgmmaTile::for_dtype(128, 128, 6, 2, DType::F32)),
            Variant::Full,
            tma,
        ),
        (
            tf32x3(),
            deep(64, WgmmaTile::for_dtype(128, 128, 3, 2, DType::F32)),
            Variant::Full,
            tma,
        ),
        (
            tf32x3(),
            pingpong(WgmmaTile::for_dtype(64, 128, 8, 2, DType::F32)),
            Variant::Full,
            tma,
        ),
        (
            tf32x3(),
            streamk(WgmmaTile::for_dtype(64, 64, 8, 1, DType::F32)),
            Variant::Full,
            tma,
        ),
        // k-tiles of two and four swizzle rows: TMA (with split-K and a cluster) and the
        // cp.async producer, 16-bit and tf32.
        (
            bias_relu(DType::F16),
            deep(128, split(2, cfg(64, 128, 4, 1, 1))),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::Bf16),
            deep(256, cfg(64, 64, 3, 1, 2)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            deep(128, split(4, cfg(64, 64, 6, 1, 1))),
            Variant::Full,
            Problem::new(16, 300, 700),
        ),
        (
            tf32(Layout::RowMajor, Layout::ColMajor),
            deep(64, split(2, WgmmaTile::for_dtype(64, 128, 4, 1, DType::F32))),
            Variant::Full,
            tma,
        ),
        // The wave-fitting widths (BN not a multiple of 64: the last 64-column chunk of
        // the epilogue is partial): cooperative with the fused bias and a cluster of 2,
        // one consumer, ping-pong, stream-K and the cp.async producer.
        (bias_relu(DType::F16), cfg(128, 240, 4, 2, 2), Variant::Full, tma),
        (
            plain(DType::Bf16, Layout::RowMajor, Layout::ColMajor),
            cfg(128, 176, 5, 2, 1),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::Bf16),
            cfg(64, 240, 5, 1, 1),
            Variant::Full,
            Problem::new(100, 500, 300),
        ),
        (
            bias_relu(DType::F16),
            pingpong(cfg(64, 176, 6, 2, 1)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            streamk(cfg(128, 240, 4, 2, 1)),
            Variant::Full,
            tma,
        ),
        (
            bias_relu(DType::F16),
            cfg(128, 176, 5, 2, 1),
            Variant::Full,
            Problem::new(3000, 5000, 700),
        ),
        // Batches: rank-3 maps for A and B (with B multicast in a cluster of 2), A only (B
        // broadcast), and the cp.async producer for a batch whose A matrices overlap.
        (
            bias_relu(DType::F16),
            cfg(128, 128, 6, 2, 2),
            Variant::Full,
            batch_of(512, 512, 128, [512 * 128, 512 * 128]),
        ),
        (
            plain(DType::Bf16, Layout::ColMajor, Layout::RowMajor),
            cfg(128, 64, 8, 2, 1),
            Variant::Full,
            batch_of(256, 192, 256, [256 * 256, 0]),
        ),
        (
            bias_relu(DType::F16),
            cfg(64, 128, 8, 1, 1),
            Variant::Full,
            batch_of(256, 256, 128, [64 * 128, 0]),
        ),
        (
            bias_relu(DType::F16),
            pingpong(cfg(128, 128, 6, 2, 1)),
            Variant::Full,
            batch_of(512, 512, 128, [512 * 128, 512 * 128]),
        ),
    ];
    for (ir, c, v, p) in cases {
        c.validate(&ir).unwrap();
        let src = wgmma::emit_variant(&ir, v);
        let opts = common::compile_options("90a", Wgmma.defines(&c, &ir, Backend::Cuda, p));
        let (ok, log, cubin) = nv.compile(&src, &format!("{}.cu", ir.symbol()), &opts);
        let what = format!("{} {c:?} {v} {p:?}", ir.symbol());
        assert!(ok && cubin > 0, "{what} failed to compile:\n{log}");
        common::assert_no_spills(&what, &log);
        eprintln!("{what}: ok");
    }
    // With no -D flag the source builds its documented defaults (DEFINES), in either form:
    // every constant a check reads has its default before the check.
    for defines in [vec![], vec![("SWAP", 1)]] {
        let opts = common::compile_options("90a", defines.clone());
        let (ok, log, cubin) = nv.compile(&wgmma::emit(&bias_relu(DType::F16)), "bare.cu", &opts);
        assert!(ok && cubin > 0, "a compile with only {defines:?} failed:\n{log}");
    }
}

/// The check [`configs_compile_for_sm90a_without_spills`] makes of every build can fail: a
/// kernel that reads a wgmma's accumulators (here, hands them to a call) before waiting for
/// it is serialised by ptxas, which says so only in `info` lines (an injected
/// `warpgroup.wait` and `warpgroup.arrive`), and `common::wgmma_serialised` sees them.
#[test]
fn a_serialised_wgmma_is_caught() {
    let Some(nv) = common::nvrtc_or_skip("a_serialised_wgmma_is_caught") else {
        return;
    };
    let src = r#"
extern "C" __device__ __noinline__ void touch(float* p) { p[0] += 1.0f; }
extern "C" __global__ void k(float* out, unsigned long long da, unsigned long long db) {
    float d[8];
    for (int i = 0; i < 8; ++i) d[i] = 0.0f;
    asm volatile("wgmma.fence.sync.aligned;\n");
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "l"(da), "l"(db));
    touch(d);
    asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = d[i];
}
"#;
    let (ok, log, _) = nv.compile(src, "serialised.cu", &common::compile_options("90a", Vec::new()));
    assert!(ok, "{log}");
    assert!(
        common::wgmma_serialised(&log),
        "ptxas said nothing of the serialised wgmma:\n{log}"
    );
}
