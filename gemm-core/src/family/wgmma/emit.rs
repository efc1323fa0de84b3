//! The `wgmma` family's CUDA source (header-free, NVRTC `sm_90a`).

use super::epilogue::{self, epi_fn, fast_math, prefetch};
use super::producer::{produce, CPASYNC};
use super::ptx::{store_fns, wgmma_fns, PTX};
use super::supports;
use crate::codegen::prelude::{helpers, kernel_params, persistent_view_prologue};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::target::Backend;
use std::fmt::Write;

/// The source of diagnosis variant `variant` (same symbol, ABI, defines and launch):
/// - `LoadOnly`: no wgmma; consumers wait for each stage and release it; the
///   accumulators stay zero and the epilogue and stores run.
/// - `NoEpilogue`: stores the raw accumulator converted to the output type.
/// - `ComputeOnly`: no TMA loads; the producer arrives on `full` without a byte count,
///   so the ring, barriers and wgmma (on whatever shared memory holds) all run.
///
/// The source holds both forms of the kernel: the plain one, and under `SWAP` the
/// turned-around one ([`WgmmaTile::turned`](super::WgmmaTile::turned)), which is this
/// same generator run on [`GemmIr::transposed`] with this kernel's symbol and its `M`
/// and `N` arguments named the other way round (the host passes C's extents either way).
/// Each part of the source that differs between the two is emitted once per form under
/// `#if SWAP`; the rest once.
///
/// Panics if [`supports`] rejects `ir`.
pub fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    if let Err(why) = supports(ir) {
        panic!("wgmma::emit_variant: {why}");
    }
    let symbol = ir.symbol();
    let turned_ir = ir.transposed();
    let plain = form_parts(ir, variant, &symbol, "int M, int N");
    let turned = form_parts(&turned_ir, variant, &symbol, "int N, int M");
    let either = |i: usize| -> String {
        if plain[i] == turned[i] {
            plain[i].clone()
        } else {
            format!("#if SWAP\n{}#else\n{}#endif\n", turned[i], plain[i])
        }
    };
    let mut s = variant.marker();
    s.push_str(&either(0));
    s.push_str("#ifndef SWAP\n#define SWAP 0\n#endif\n");
    s.push_str(&helpers(Backend::Cuda));
    s.push_str(&fast_math(ir));
    s.push_str(&crate::family::promote_define(ir));
    // Operand element bytes: a swizzle row (a sub-tile's row) is 128 bytes of them.
    let _ = writeln!(
        s,
        "#define CG_ESZ {}\ntypedef {} cg_ab_t;",
        ir.ab_dtype.size(),
        Backend::Cuda.storage(ir.ab_dtype)
    );
    s.push_str(CONFIG);
    s.push_str(&either(1));
    s.push_str(CHECKS);
    s.push_str(PTX);
    s.push_str(CPASYNC);
    s.push_str(&either(2));
    s.push_str(&store_fns(ir));
    s.push_str(&super::splitk::source());
    s.push_str(&either(3));
    s
}

/// The parts of the source that depend on the product's operands and parameters, for
/// `ir` (the plain form's, or the transposed one's): its header line, its epilogue and
/// operand definitions, its wgmma instructions and its kernel, named `symbol` with the
/// extents' arguments `dims`.
fn form_parts(ir: &GemmIr, variant: Variant, symbol: &str, dims: &str) -> [String; 4] {
    let a_kmajor = ir.a_layout() == Layout::RowMajor;
    let b_kmajor = ir.b_layout() == Layout::ColMajor;
    let ty = match ir.ab_dtype {
        DType::F16 => "f16",
        DType::Bf16 => "bf16",
        DType::F32 => "tf32",
    };
    let header = format!(
        "/* crossgemm: {symbol} = {} (wgmma sm_90a {ty}, A {} {}, B {} {}, out {} {}) */\n",
        ir.epilogue_text(),
        ir.a_layout().name(),
        if a_kmajor { "K-major" } else { "M-major" },
        ir.b_layout().name(),
        if b_kmajor { "K-major" } else { "N-major" },
        ir.out_dtype.name(),
        ir.out_layout.name(),
    );
    let mut operands = if variant.skips_epilogue() {
        "#define CGW_PF_ANY 0\n".to_string()
    } else {
        epi_fn(ir)
    };
    let _ = writeln!(operands, "#define CG_A_KMAJOR {}", a_kmajor as u32);
    let _ = writeln!(operands, "#define CG_B_KMAJOR {}", b_kmajor as u32);
    // The cp.async producer reads A and B through their ABI pointers.
    let _ = writeln!(
        operands,
        "#define CG_A_PTR p{a}\n#define CG_B_PTR p{b}\n#define CG_A_LD ld{a}\n#define CG_B_LD ld{b}",
        a = ir.a,
        b = ir.b
    );
    let [view, rebase] = persistent_view_prologue(ir, Backend::Cuda);
    let subs = [
        ("SYM", symbol.to_string()),
        ("DIMS", dims.to_string()),
        ("PARAMS", kernel_params(ir, Backend::Cuda)),
        ("VIEW", view),
        ("REBASE", rebase),
        ("PRODUCE", produce(variant)),
        ("MMA", mma(variant)),
        ("PREFETCH", prefetch(ir, variant)),
        ("EPILOGUE", epilogue::epilogue(ir, variant)),
    ];
    [
        header,
        operands,
        wgmma_fns(ty, !a_kmajor, !b_kmajor),
        fill(KERNEL, &subs),
    ]
}

/// Replaces every `@KEY@` of `tpl`.
pub(super) fn fill(tpl: &str, subs: &[(&str, String)]) -> String {
    let mut s = tpl.to_string();
    for (k, v) in subs {
        s = s.replace(&format!("@{k}@"), v);
    }
    s
}

const CONFIG: &str = r#"
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK (128 / CG_ESZ)
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef CG_CPASYNC
#define CG_CPASYNC 0
#endif
#ifndef CG_CPA_A
#define CG_CPA_A 16
#endif
#ifndef CG_CPA_B
#define CG_CPA_B 16
#endif
#ifndef CG_PRODUCER_REGS
#define CG_PRODUCER_REGS (CG_CPASYNC ? 56 : 24)
#endif
#ifndef CG_CONSUMER_REGS
/* Three consumers share the register file four ways (512 threads): 160 each. */
#define CG_CONSUMER_REGS (CONSUMERS == 3 ? (CG_CPASYNC ? 152 : 160) : (CG_CPASYNC ? 224 : 240))
#endif
#ifndef CG_INFLIGHT
#define CG_INFLIGHT (CONSUMERS == 1)
#endif
#ifndef CG_EPI_SMEM
#define CG_EPI_SMEM 1
#endif
#ifndef CG_EPI_TMA
#define CG_EPI_TMA 0
#endif
#if CG_EPI_TMA
/* The TMA-store epilogue stages whole tiles of its own (CG_TSTG_BYTES a consumer): no
   per-warp staging buffers, and the parameter area a 1 KiB region of each consumer. */
#undef CG_EPI_SMEM
#define CG_EPI_SMEM 0
#endif
#ifndef CG_C_TMA3
#define CG_C_TMA3 0
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1
#endif
/* Blocks per cluster: CLUSTER_M along M (sharing B) by CLUSTER_N along N (sharing A). */
#define CG_CLUSTER (CLUSTER_M * CLUSTER_N)
#ifndef CG_WATCHDOG
#define CG_WATCHDOG 0
#endif
#ifndef CG_PINGPONG
#define CG_PINGPONG 0
#endif
#ifndef CG_REUSE
#define CG_REUSE 0
#endif
/* Whether k-step kk of k-tile kt adds into the accumulator (else it starts it afresh):
   all but the first of a work item's, or with CG_PROMOTE of each run of CG_PROMOTE
   k-tiles, whose accumulator is then added into the f32 sum (`cg_sum`). */
#if CG_PROMOTE
#define CG_SCALE_D(kt, kk) (((kt) - kt_begin) % CG_PROMOTE != 0 || (kk) > 0)
#else
#define CG_SCALE_D(kt, kk) ((kt) > kt_begin || (kk) > 0)
#endif
#define CG_THREADS (128 * (CONSUMERS + 1))
/* Rows of a tile one consumer computes: its share of the tile (cooperative), or the
   whole tile (ping-pong: the two consumers take alternate tiles). */
#define CG_WG_M (CG_PINGPONG ? BM : BM / CONSUMERS)
/* The first row of the tile that consumer `c` computes. */
#define CG_WG_ROW0 (CG_PINGPONG ? 0 : c * CG_WG_M)
/* Consumers that read each stage of the ring (the arrivals its `empty` barrier counts). */
#define CG_READERS (CG_PINGPONG ? 1 : CONSUMERS)
#define CG_MI (CG_WG_M / 64)
/* wgmma k-steps per k-tile: 32 bytes each (k16 of 16-bit, k8 of tf32 elements). */
#define CG_KSTEPS (BK * CG_ESZ / 32)
/* A k-tile is CG_KSUB swizzle rows of CG_KROW elements (128 bytes): each operand tile of
   a stage is CG_KSUB sub-tiles of rows x 128 bytes, one after the other. */
#define CG_KROW (128 / CG_ESZ)
#define CG_KSUB (BK / CG_KROW)
#define A_STAGE_BYTES (BM * BK * CG_ESZ)
#define B_STAGE_BYTES (BN * BK * CG_ESZ)
#define CG_STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)
#define CG_STG_PITCH 144
#define CG_CW (128 / CG_OSZ)
/* A consumer's staged tile for the TMA store: its rows by BN elements of CG_ESZ bytes
   (the output's, asserted in the kernel). */
#define CG_TSTG_BYTES (CG_WG_M * BN * CG_ESZ)
#define CG_SMEM_BYTES (1024 + STAGES * CG_STAGE_BYTES + 16 * STAGES + (CG_EPI_TMA ? CONSUMERS * (1024 + CG_TSTG_BYTES) + 1024 : (CG_EPI_SMEM ? CONSUMERS * 4 * 16 * CG_STG_PITCH : 0)))
/* The epilogue's parameter area of a consumer: the 16 padding bytes after each 128-byte
   row of its 4 warps' staging buffers (64 rows: 1 KiB); byte b of the area lies in row
   b / 16 (warp b / 256), at offset 128 + b % 16. With the TMA store, 1 KiB of its own. */
#define CG_PAREA ((CG_EPI_SMEM || CG_EPI_TMA) ? 1024 : 0)
#if CG_EPI_TMA
#define CGW_PA(b) (b)
#else
#define CGW_PA(b) (((b) >> 8) * (16 * CG_STG_PITCH) + (((b) >> 4) & 15) * CG_STG_PITCH + 128 + ((b) & 15))
#endif
"#;

const CHECKS: &str = r#"
static_assert(BK % CG_KROW == 0 && CG_KSUB >= 1 && CG_KSUB <= 4, "BK must be 1 to 4 128-byte swizzle rows: 64 (or 32 tf32) elements each");
static_assert(CG_KSUB == 1 || (CG_A_KMAJOR && CG_B_KMAJOR), "k-tiles of several swizzle rows need K-major A and B");
static_assert(CG_ESZ == 2 || (CG_A_KMAJOR && CG_B_KMAJOR), "wgmma .tf32 takes K-major operands only (row-major A, column-major B)");
static_assert(CONSUMERS >= 1 && CONSUMERS <= 3, "CONSUMERS must be 1, 2 or 3");
static_assert(BM <= 256 && CG_WG_M % 64 == 0 && CG_WG_M >= 64, "BM / CONSUMERS (ping-pong: BM) must be a multiple of 64, BM <= 256");
static_assert(BN >= 16 && BN <= 256 && BN % 16 == 0, "BN must be a multiple of 16 in [16, 256]");
static_assert(CG_B_KMAJOR || BN % 64 == 0, "an N-major B tile arrives in 64-column boxes: BN must be a multiple of 64");
static_assert(CG_MI * BN / 2 * (CG_PROMOTE ? 2 : 1) <= (CONSUMERS == 3 ? 96 : 128), "at most 128 accumulator registers per consumer thread, 96 with three consumers (ping-pong: BM / 64 * BN / 2; twice that with CG_PROMOTE's sums)");
static_assert(CG_PROMOTE >= 0, "CG_PROMOTE counts k-tiles (0: off)");
static_assert(STAGES >= 2, "the TMA ring needs at least two stages");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert(CLUSTER_M == 1 || CLUSTER_M == 2 || CLUSTER_M == 4, "CLUSTER_M must be 1, 2 or 4");
static_assert(CLUSTER_N == 1 || CLUSTER_N == 2 || CLUSTER_N == 4, "CLUSTER_N must be 1, 2 or 4");
static_assert(CG_CLUSTER <= 8, "at most 8 blocks a cluster (the portable cluster size)");
static_assert(CLUSTER_N == 1 || KSPLIT == 1, "split-K takes no cluster along N");
static_assert(!CG_CPASYNC || CG_CLUSTER == 1, "the cp.async producer does not multicast: CLUSTER_M and CLUSTER_N must be 1");
static_assert(CG_CPA_A == 4 || CG_CPA_A == 8 || CG_CPA_A == 16, "CG_CPA_A is a cp.async size: 4, 8 or 16 bytes");
static_assert(CG_CPA_B == 4 || CG_CPA_B == 8 || CG_CPA_B == 16, "CG_CPA_B is a cp.async size: 4, 8 or 16 bytes");
static_assert(CG_SMEM_BYTES <= 232448, "the ring does not fit the 232448 bytes of shared memory of sm_90");
static_assert(CG_PRODUCER_REGS % 8 == 0 && CG_CONSUMER_REGS % 8 == 0 && CG_PRODUCER_REGS >= 24 && CG_CONSUMER_REGS <= 256,
              "setmaxnreg counts are multiples of 8 in [24, 256]");
static_assert(CONSUMERS == 1 || 128 * (CG_PRODUCER_REGS + CONSUMERS * CG_CONSUMER_REGS) <= 65536,
              "the register budget of producer plus consumers exceeds the register file");
"#;

/// The consumers' math on one stage (`@MMA@`).
fn mma(variant: Variant) -> String {
    if variant == Variant::LoadOnly {
        return "                /* Diagnosis variant load_only: no wgmma. */
                (void)a_s; (void)b_s;"
            .into();
    }
    "                cg_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < CG_KSTEPS; ++kk) {
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi) {
#if CG_A_KMAJOR
                        /* K-major: rows of 128 bytes, 8-row groups 1024 apart; a k-step = 32 bytes,
                           four to a sub-tile. */
                        const unsigned long long da = cg_desc(a_s + (kk / 4) * (BM * 128) + (CG_WG_ROW0 + mi * 64) * 128 + (kk % 4) * 32, 16, 1024);
#else
                        /* M-major: 64-row boxes of 8 KiB; k16 = 16 rows of 128 bytes. */
                        const unsigned long long da = cg_desc(a_s + (CG_WG_ROW0 / 64 + mi) * 8192 + kk * 2048, 8192, 1024);
#endif
#if CG_B_KMAJOR
                        const unsigned long long db = cg_desc(b_s + (kk / 4) * (BN * 128) + (kk % 4) * 32, 16, 1024);
#else
                        /* N-major: 64-column boxes 8 KiB apart (LBO), 8-row k groups 1024 apart (SBO). */
                        const unsigned long long db = cg_desc(b_s + kk * 2048, 8192, 1024);
#endif
                        cg_wgmma(acc[mi], da, db, CG_SCALE_D(kt, kk) ? 1 : 0);
                    }
                }
                cg_wgmma_commit();"
        .into()
}

const KERNEL: &str = r#"
static_assert(!CG_PINGPONG || (CONSUMERS >= 2 && KSPLIT == 1), "ping-pong takes two or three consumers and no split-K");
static_assert(!CG_REUSE || (KSPLIT == 1 && !CG_STREAMK && CG_CLUSTER == 1), "operand reuse takes no split-K, no stream-K and no cluster");
#if CG_CLUSTER > 1
#define CG_CLUSTER_DIMS __cluster_dims__(CG_CLUSTER, 1, 1)
#else
#define CG_CLUSTER_DIMS
#endif
static_assert(!CG_EPI_TMA || (CG_OSZ == CG_ESZ && BN % CG_CW == 0), "the TMA-store epilogue takes an output of the operands' element size and BN a multiple of its 128-byte boxes");
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) CG_CLUSTER_DIMS @SYM@(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map, CG_C_MAP CG_SPLITK_ARGS @DIMS@, int K, @PARAMS@) {
    extern __shared__ __align__(1024) unsigned char cg_smem[];
    @VIEW@
    /* The ring: STAGES A tiles, STAGES B tiles, then full[STAGES] and empty[STAGES]. */
    const unsigned smem = (cg_smem_u32(cg_smem) + 1023u) & ~1023u;
    const unsigned sa = smem;
    const unsigned sb = smem + STAGES * A_STAGE_BYTES;
    const unsigned bars = sb + STAGES * B_STAGE_BYTES;
    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
#if CG_CLUSTER > 1
    /* A cluster is CLUSTER_M x CLUSTER_N output tiles, block `rank` at (rank % CLUSTER_M,
       rank / CLUSTER_M); the blocks of a column share (multicast) the B tile, those of a
       row the A tile. */
    const unsigned rank = cg_cluster_rank();
    const int cluster = (int)cg_cluster_id(), clusters = (int)cg_cluster_count();
#else
    const unsigned rank = 0;
    const int cluster = blockIdx.x, clusters = gridDim.x;
#endif
    const unsigned rank_m = rank % CLUSTER_M, rank_n = rank / CLUSTER_M;
    (void)rank; (void)rank_m; (void)rank_n;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            cg_mbar_init(bars + s * 8, CG_CPASYNC ? 128 : 1);                 /* full: the producer's expect_tx, or every producer thread's cp.async */
            cg_mbar_init(bars + (STAGES + s) * 8, 4 * CG_READERS * CG_CLUSTER); /* empty: lane 0 of every consumer warp that reads the stage, in every block of the cluster */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#if !CG_CPASYNC
        cg_tma_prefetch(&a_map);
        cg_tma_prefetch(&b_map);
#endif
    }
#if CG_CLUSTER > 1
    cg_cluster_sync();
#else
    __syncthreads();
#endif
    /* Tiles in units of CLUSTER_M x CLUSTER_N tiles: block `rank` of a cluster takes tile
       row CLUSTER_M * tm + rank_m and column CLUSTER_N * tn + rank_n (possibly past M or
       N: it still loads its share and stores nothing). */
    const int grid_m = (M + BM * CLUSTER_M - 1) / (BM * CLUSTER_M), grid_n = (N + BN * CLUSTER_N - 1) / (BN * CLUSTER_N);
    const int tiles = grid_m * grid_n;
    const int ktiles = (K + BK - 1) / BK;
#if CG_REUSE
    /* The work item the walk's `item` stands for: the block's items are a consecutive run
       (as many as the strided walk cluster, cluster + clusters, ... gives it, from
       cg_run0), so that the items STAGES / ktiles apart, which fill the same stages with
       the same k-tiles, are mostly neighbours in the grouped raster (see cg_keep). */
    const int cg_run0 = cluster * (tiles * nbatch / clusters) + min(cluster, tiles * nbatch % clusters);
#define CG_ITEM(item) (cg_run0 + ((item) - cluster) / clusters)
    /* Every item fills ktiles stages in turn, so the item cg_back before one filled the
       same stages with the same k-tiles where STAGES is a multiple of ktiles (else 0). */
    const int cg_back = ktiles <= STAGES && STAGES % ktiles == 0 ? STAGES / ktiles : 0;
#else
#define CG_ITEM(item) (item)
#endif

    if (wg == 0) {
        /* Producer warpgroup: one thread issues every TMA load; with CG_CPASYNC all 128
           threads copy. */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(CG_PRODUCER_REGS));
#endif
        if (CG_CPASYNC || tid == 0) {
            int stage = 0;
            unsigned phase = 0;
#if CG_STREAMK
            CgWalk walk = cg_walk(cluster, clusters, tiles * nbatch, ktiles);
            int item, kt_lo, kt_hi;
            while (cg_walk_next(walk, cluster, clusters, tiles * nbatch, ktiles, item, kt_lo, kt_hi)) {
#else
            for (int item = cluster; item < tiles * KSPLIT * nbatch; item += clusters) {
#endif
                const int witem = CG_ITEM(item);
                cg_bz = witem / (tiles * KSPLIT);
                @REBASE@
                const int tile = (witem - (int)cg_bz * tiles * KSPLIT) / KSPLIT, split = witem - (int)cg_bz * tiles * KSPLIT - tile * KSPLIT;
                int tm, tn;
                cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
                const int m0 = (tm * CLUSTER_M + (int)rank_m) * BM, n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
                (void)m0; (void)n0; (void)split;
#if CG_REUSE
                /* An operand tile this item shares with the item cg_back before it (A in the
                   same row of tiles, B in the same column, of the same product) is still in
                   place in the stages: their consumers only read it, and this producer alone
                   writes the ring. */
                bool cg_keep_a = false, cg_keep_b = false;
                if (cg_back > 0 && witem - cg_back >= cg_run0) {
                    const int pz = (witem - cg_back) / tiles;
                    int ptm, ptn;
                    cg_tile_coords(witem - cg_back - pz * tiles, grid_m, grid_n, &ptm, &ptn);
                    cg_keep_a = pz == (int)cg_bz && ptm == tm;
                    cg_keep_b = pz == (int)cg_bz && ptn == tn;
                }
#else
                const bool cg_keep_a = false, cg_keep_b = false;
#endif
                (void)cg_keep_a; (void)cg_keep_b;
#if CG_STREAMK
                for (int kt = kt_lo; kt < kt_hi; ++kt) {
#else
                for (int kt = CG_KT(split); kt < CG_KT(split + 1); ++kt) {
#endif
                    const int k0 = kt * BK;
                    (void)k0;
                    const unsigned full = bars + stage * 8;
                    const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
                    (void)a_s; (void)b_s;
                    cg_mbar_wait_cluster(bars + (STAGES + stage) * 8, phase ^ 1);
@PRODUCE@
                    if (++stage == STAGES) { stage = 0; phase ^= 1; }
                }
            }
#if CG_CPASYNC
            asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        }
    } else {
        /* Consumer warpgroup c: rows [CG_WG_ROW0, CG_WG_ROW0 + CG_WG_M) of every tile it
           takes (every tile; with ping-pong, every other one, whole). */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(CG_CONSUMER_REGS));
#endif
        const int c = wg - 1;
        const int warp = tid / 32, lane = tid % 32;
#if CG_EPI_SMEM
        /* This warp's epilogue staging buffer: 16 rows of CG_STG_PITCH bytes. */
        unsigned char* const stg = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + (c * 4 + warp) * 16 * CG_STG_PITCH;
#endif
        /* This warpgroup's staging buffers, whose row padding is the parameter area of the
           epilogue's vectors of the current tile (CGW_PA). */
        unsigned char* const pbuf = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + c * (CG_EPI_TMA ? 1024 : 4 * 16 * CG_STG_PITCH);
        const unsigned pbuf_s = cg_smem_u32(pbuf);
        (void)pbuf; (void)pbuf_s;
#if CG_EPI_TMA
        /* This consumer's staged tile for the TMA store, after the parameter areas,
           1024-aligned (the swizzle pattern's period). */
        const unsigned cg_tstg = ((bars + 16 * STAGES + CONSUMERS * 1024 + 1023u) & ~1023u) + c * CG_TSTG_BYTES;
#endif
        float acc[CG_MI][BN / 2];
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
#if CG_PROMOTE
        /* The work item's f32 sum of its runs of CG_PROMOTE k-tiles (CG_SCALE_D). */
        float cg_sum[CG_MI][BN / 2];
#endif
        int stage = 0;
        unsigned phase = 0;
#if CG_PINGPONG
        /* Ping-pong: this block's work items rotate between the consumers (c takes the
           block's items c, c + CONSUMERS, ...). The producer fills the ring item after
           item, so a consumer skips the others' k-tiles; and the mainloops run strictly
           in turn (named barrier CONSUMERS + 1 + c is c's turn, given by the consumer
           before it), so a consumer only waits on a stage whose previous fill has been
           consumed (an mbarrier parity names a phase only modulo 2), while its epilogue
           overlaps the others' mainloops: with three consumers two store while one
           computes (one warpgroup's stores write a tile slower than two,
           bench/results/h200-2026-12-03p1). */
        const int cg_total = tiles * nbatch;
        const unsigned cg_my_turn = CONSUMERS + 1 + c, cg_their_turn = CONSUMERS + 1 + (c + 1) % CONSUMERS;
        if (c > 0) cg_ring_skip(stage, phase, c * ktiles);
        for (int item = cluster + c * clusters; item < cg_total; item += CONSUMERS * clusters) {
            if (item != cluster) asm volatile("bar.sync %0, 256;\n" :: "r"(cg_my_turn) : "memory");
#elif CG_STREAMK
        /* Stream-K: the segments of cg_walk (whole units, then a split of a unit of the
           partial last wave), as the producer walks them. */
        CgWalk walk = cg_walk(cluster, clusters, tiles * nbatch, ktiles);
        int item, kt_lo, kt_hi;
        while (cg_walk_next(walk, cluster, clusters, tiles * nbatch, ktiles, item, kt_lo, kt_hi)) {
#else
        /* Work items: split `split` of tile `tile` of product `cg_bz` (KSPLIT = 1: the
           tiles of every product of the batch, product after product). */
        for (int item = cluster; item < tiles * KSPLIT * nbatch; item += clusters) {
#endif
            const int witem = CG_ITEM(item);
            cg_bz = witem / (tiles * KSPLIT);
            @REBASE@
            const int tile = (witem - (int)cg_bz * tiles * KSPLIT) / KSPLIT, split = witem - (int)cg_bz * tiles * KSPLIT - tile * KSPLIT;
#if CG_STREAMK
            const int kt_begin = kt_lo, kt_end = kt_hi;
#else
            const int kt_begin = CG_KT(split), kt_end = CG_KT(split + 1);
#endif
            (void)split;
            int tm, tn;
            cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
            const int m0 = (tm * CLUSTER_M + (int)rank_m) * BM, n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
@PREFETCH@#if CG_INFLIGHT
            int prev = 0;
#endif
#if CG_PROMOTE
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_sum[mi][r] = 0.0f;
#endif
            for (int kt = kt_begin; kt < kt_end; ++kt) {
                cg_mbar_wait(bars + stage * 8, phase);
#if CG_CPASYNC
                /* cp.async wrote through the generic proxy; wgmma reads through the async one. */
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
                const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
@MMA@
#if CG_INFLIGHT
                /* Keep this stage's group in flight; the previous one is done, so its
                   stage goes back to the producer(s). */
                cg_wgmma_wait<1>();
                if (kt > kt_begin && lane == 0) cg_release(bars + (STAGES + prev) * 8);
#else
                /* Wait for this stage's group and give the stage back at once: one stage
                   held per consumer, the rest of the ring prefetching. */
                cg_wgmma_wait<0>();
                if (lane == 0) cg_release(bars + (STAGES + stage) * 8);
#endif
#if CG_INFLIGHT
                prev = stage;
#endif
#if CG_PROMOTE
                if ((kt - kt_begin + 1) % CG_PROMOTE == 0 || kt + 1 == kt_end) {
                    /* The run's last group must be done before its accumulator is read;
                       the fences keep the adds after the wait. */
                    cg_wgmma_wait<0>();
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                        for (int r = 0; r < BN / 2; ++r) {
                            cg_fence_acc(acc[mi][r]);
                            cg_sum[mi][r] += acc[mi][r];
                        }
                }
#endif
                if (++stage == STAGES) { stage = 0; phase ^= 1; }
            }
            cg_wgmma_wait<0>();
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_fence_acc(acc[mi][r]);
#if CG_PROMOTE
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) acc[mi][r] = cg_sum[mi][r];
#endif
#if CG_INFLIGHT
            if (lane == 0 && kt_end > kt_begin) cg_release(bars + (STAGES + prev) * 8);
#endif
#if CG_PINGPONG
            /* The next consumer's turn, if it has the next item; then skip the others' k-tiles. */
            if (item + clusters < cg_total) asm volatile("bar.arrive %0, 256;\n" :: "r"(cg_their_turn) : "memory");
            cg_ring_skip(stage, phase, (CONSUMERS - 1) * ktiles);
#endif
#if KSPLIT > 1
            /* More splits than k-tiles leave some with none: they add zeros. */
            if (kt_end == kt_begin) {
#pragma unroll
                for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                    for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
            }
            {
                const long unit = ((long)tile * CLUSTER_M + rank) * CONSUMERS + c;
                const bool rows = m0 + c * CG_WG_M + warp * 16 < M;
                if (!cg_splitk_fold(acc, cg_ws + unit * KSPLIT * (CG_WG_M * BN), CG_WG_M * BN, cg_flags + unit, split, KSPLIT, tid, c, rows)) {
#if CGW_PF_ANY
                    /* Not the last split: no epilogue, but this tile's prefetch must land
                       before the next one's reuses the area. */
                    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
                    continue;
                }
            }
#endif
#if CG_STREAMK
            /* A split of a unit of the partial last wave: folded with the other splits'. */
            if (kt_begin != 0 || kt_end != ktiles) {
                const int t = item - walk.u_dp;
                /* Slots by block of the tail (block t S + s holds split s of tail unit t),
                   a slot per consumer: consumer c's slot of split s of unit t is
                   ((t S + s) CONSUMERS + c) CG_WG_M BN floats in; a counter per consumer
                   of each tail unit (fewer than G of them). */
                const long tile_f = (long)CG_WG_M * BN;
                const long flag = (long)t * CONSUMERS + c;
                const bool rows = m0 + CG_WG_ROW0 + warp * 16 < M;
                if (!cg_splitk_fold(acc, cg_ws + ((long)t * walk.splits * CONSUMERS + c) * tile_f, CONSUMERS * tile_f, cg_flags + flag,
                                    cluster % walk.splits, walk.splits, tid, c, rows)) {
#if CGW_PF_ANY
                    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
                    continue;
                }
            }
#endif

@EPILOGUE@        }
#if CG_EPI_TMA
        /* The block's shared memory must outlive the reads of its last stores. */
        if (tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
    }
#if CG_CLUSTER > 1
    /* No block may leave while its peers can still arrive on its barriers or write its
       shared memory. */
    cg_cluster_sync();
#endif
}
"#;
