//! The wgmma source's device helpers as inline PTX: mbarriers, cluster queries, TMA
//! loads and stores, shared-memory descriptors, the wgmma instructions of every width,
//! and the output's pair stores.

use crate::ir::{DType, GemmIr};
use crate::target::Backend;
use std::fmt::Write;

/// Barriers, TMA, descriptors, fences: every Hopper feature as inline PTX.
pub(super) const PTX: &str = r#"
struct __align__(64) CgTmaMap { unsigned long long v[16]; };
struct __align__(8) cg_f2 { float x, y; };
struct __align__(16) cg_u4 { unsigned x, y, z, w; };

static __device__ __forceinline__ unsigned cg_smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void cg_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
/* Arrives once and adds `bytes` to the transaction count the phase waits for. */
static __device__ __forceinline__ void cg_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void cg_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
/* Waits until the phase of parity `parity` has completed. A fresh barrier is in phase
   0, and parity 1 names the (complete) phase before it: waiting for parity 1 returns at
   once, which is how the producer's first pass over the ring finds every slot empty. */
static __device__ __forceinline__ void cg_mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
#if CG_WATCHDOG
    unsigned polls = 0;
#endif
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if CG_WATCHDOG
        if (++polls > (1u << 26)) asm volatile("trap;");
#endif
    } while (!done);
}
#if CG_CLUSTER > 1
static __device__ __forceinline__ unsigned cg_cluster_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ unsigned cg_cluster_id() { unsigned r; asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ unsigned cg_cluster_count() { unsigned r; asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ void cg_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
#endif
/* The producer's wait for an empty slot. With clusters the arrivals come from the
   consumers of every block of the cluster; as in CUTLASS's ClusterBarrier, a CTA-scope
   acquire suffices (the wgmma reads were complete before each arrival), and avoids the
   L1 invalidation that a cluster-scope acquire costs. */
static __device__ __forceinline__ void cg_mbar_wait_cluster(unsigned bar, unsigned parity) {
    cg_mbar_wait(bar, parity);
}
/* A consumer warp gives stage barrier `bar` back: to its own block, and with clusters to
   every block of the cluster (each multicasts into the others' shared memory). */
static __device__ __forceinline__ void cg_release(unsigned bar) {
#if CG_CLUSTER > 1
#pragma unroll
    for (unsigned r = 0; r < CG_CLUSTER; ++r)
        asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n"
                     :: "r"(bar), "r"(r) : "memory");
#else
    cg_mbar_arrive(bar);
#endif
}
/* One 2-D TMA box into shared memory, completing on `bar` (bytes counted). */
static __device__ __forceinline__ void cg_tma_load(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
#if CG_CLUSTER > 1
/* The same box into the same offsets of every block in `mask`, completing on each one's `bar`. */
static __device__ __forceinline__ void cg_tma_load_mc(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
#endif
/* The same as one 3-D box: a batched operand's map has the product as its outer
   coordinate `c2`. */
static __device__ __forceinline__ void cg_tma_load3(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
#if CG_CLUSTER > 1
static __device__ __forceinline__ void cg_tma_load3_mc(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, int c2, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(mask) : "memory");
}
#endif
/* A's and B's boxes for the producer: rank 3 (`CG_A_TMA3`, `CG_B_TMA3`) for an operand
   with one matrix per product of a batch, at the work item's product `cg_bz`. */
#ifndef CG_A_TMA3
#define CG_A_TMA3 0
#endif
#ifndef CG_B_TMA3
#define CG_B_TMA3 0
#endif
#if CG_A_TMA3
#define CG_TMA_A(dst, c0, c1) cg_tma_load3(dst, &a_map, full, c0, c1, (int)cg_bz)
#define CG_TMA_A_MC(dst, c0, c1, mask) cg_tma_load3_mc(dst, &a_map, full, c0, c1, (int)cg_bz, mask)
#else
#define CG_TMA_A(dst, c0, c1) cg_tma_load(dst, &a_map, full, c0, c1)
#define CG_TMA_A_MC(dst, c0, c1, mask) cg_tma_load_mc(dst, &a_map, full, c0, c1, mask)
#endif
#if CG_B_TMA3
#define CG_TMA_B(dst, c0, c1) cg_tma_load3(dst, &b_map, full, c0, c1, (int)cg_bz)
#define CG_TMA_B_MC(dst, c0, c1, mask) cg_tma_load3_mc(dst, &b_map, full, c0, c1, (int)cg_bz, mask)
#else
#define CG_TMA_B(dst, c0, c1) cg_tma_load(dst, &b_map, full, c0, c1)
#define CG_TMA_B_MC(dst, c0, c1, mask) cg_tma_load_mc(dst, &b_map, full, c0, c1, mask)
#endif
#if CG_EPI_TMA
/* One box of the output from shared memory (the TMA-store epilogue), in this thread's
   current bulk group; TMA writes only the box's elements inside the tensor. */
static __device__ __forceinline__ void cg_tma_store(const CgTmaMap* map, unsigned src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 :: "l"((unsigned long long)map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
static __device__ __forceinline__ void cg_tma_store3(const CgTmaMap* map, unsigned src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 :: "l"((unsigned long long)map), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
#if CG_C_TMA3
#define CG_TMA_C(src, c0, c1) cg_tma_store3(&c_map, src, c0, c1, (int)cg_bz)
#else
#define CG_TMA_C(src, c0, c1) cg_tma_store(&c_map, src, c0, c1)
#endif
#define CG_C_MAP const __grid_constant__ CgTmaMap c_map,
#else
#define CG_C_MAP
#endif
static __device__ __forceinline__ void cg_tma_prefetch(const CgTmaMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" :: "l"((unsigned long long)map) : "memory");
}
/* Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride
   byte offsets (all >> 4), base offset 0 (every pattern starts 1024-aligned). */
static __device__ __forceinline__ unsigned long long cg_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}
static __device__ __forceinline__ void cg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void cg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void cg_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
/* Tells the compiler that the accumulator changes here, so that no read of it moves
   above the wgmma wait before it and no write below the wgmma after it. */
static __device__ __forceinline__ void cg_fence_acc(float& r) { asm volatile("" : "+f"(r) :: "memory"); }

/* Advances a ring position by n stages (ping-pong: past the other consumer's k-tiles). */
static __device__ __forceinline__ void cg_ring_skip(int& stage, unsigned& phase, int n) {
    const int at = stage + n;
    stage = at % STAGES;
    phase ^= (unsigned)(at / STAGES) & 1u;
}

/* Triton's grouped order: GROUP_M consecutive tile rows sweep the columns together, so
   the A rows they share stay in L2. */
static __device__ __forceinline__ void cg_tile_coords(int tile, int grid_m, int grid_n, int* tm, int* tn) {
    const int width = GROUP_M * grid_n;
    const int group = tile / width;
    const int first_m = group * GROUP_M;
    const int rows = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    const int in = tile - group * width;
    *tm = first_m + in % rows;
    *tn = in / rows;
}

"#;

/// `cg_wgmma(d, desc_a, desc_b, scale_d)`: one `wgmma.mma_async.m64n{BN}k16` (k8 for
/// tf32, which has no transpose operands) with f32 accumulators `d[0..BN/2]`, one `#if`
/// branch per supported BN.
pub(super) fn wgmma_fns(ty: &str, trans_a: bool, trans_b: bool) -> String {
    let mut s = String::from(
        "/* d += A(64 x k-step) * B(k-step x BN), both from shared memory; scale_d == 0 overwrites d. */\n",
    );
    let (ta, tb) = (trans_a as u32, trans_b as u32);
    let (k, trans) = if ty == "tf32" {
        (8, String::new())
    } else {
        (16, format!(", {ta}, {tb}"))
    };
    for (idx, n) in (16..=256).step_by(16).enumerate() {
        let regs = n / 2;
        let _ = writeln!(s, "#{} BN == {n}", if idx == 0 { "if" } else { "elif" });
        let _ = writeln!(
            s,
            "static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {{"
        );
        let list: Vec<String> = (0..regs).map(|r| format!("%{r}")).collect();
        let _ = writeln!(
            s,
            "    asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %{}, 0;\\n wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ty}.{ty} {{{}}}, %{}, %{}, p, 1, 1{trans};\\n}}\\n\"",
            regs + 2,
            list.join(", "),
            regs,
            regs + 1
        );
        let outs: Vec<String> = (0..regs).map(|r| format!("\"+f\"(d[{r}])")).collect();
        let _ = writeln!(s, "        : {}", outs.join(", "));
        let _ = writeln!(s, "        : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n}}");
    }
    s.push_str("#else\n#error \"BN must be a multiple of 16 in [16, 256]\"\n#endif\n");
    s
}

/// `cg_st2(p, v0, v1)`: output elements `p[0]`, `p[1]` in one 4-byte (16-bit) or
/// 8-byte (f32) store; `p` is 4 or 8-byte aligned (row-major output, even N, even
/// column). Works on global and shared pointers alike.
pub(super) fn store_fns(ir: &GemmIr) -> String {
    let st = Backend::Cuda.storage(ir.out_dtype);
    // 16-bit outputs pack the pair into one register (`cg_pack2`), which the staged
    // epilogue's `stmatrix` (CG_STSM) takes as well: on by default but for three consumers
    // with BN over 128, where at 128 registers a thread and 96 accumulators the four
    // packed words an stmatrix holds spilled (192x192, bf16 gelu_erf: 36 bytes) and the
    // 4-byte stores fit.
    let (pack, body, sts) = match ir.out_dtype {
        DType::F32 => (
            "#undef CG_STSM\n#define CG_STSM 0\n".to_string(),
            "    cg_f2 v; v.x = v0; v.y = v1;\n    *reinterpret_cast<cg_f2*>(p) = v;",
            "    asm volatile(\"st.shared.v2.f32 [%0], {%1, %2};\\n\" :: \"r\"(a), \"f\"(v0), \"f\"(v1) : \"memory\");",
        ),
        d => (
            format!(
                "#ifndef CG_STSM\n#define CG_STSM (CONSUMERS < 3 || BN <= 128)\n#endif\nstatic __device__ __forceinline__ unsigned cg_pack2(float v0, float v1) {{\n    unsigned u;\n    asm(\"cvt.rn.{}.f32 %0, %1, %2;\\n\" : \"=r\"(u) : \"f\"(v1), \"f\"(v0));\n    return u;\n}}\n",
                if d == DType::F16 { "f16x2" } else { "bf16x2" }
            ),
            "    *reinterpret_cast<unsigned*>(p) = cg_pack2(v0, v1);",
            "    asm volatile(\"st.shared.b32 [%0], %1;\\n\" :: \"r\"(a), \"r\"(cg_pack2(v0, v1)) : \"memory\");",
        ),
    };
    format!(
        "#define CG_OSZ {}\ntypedef {st} cg_out_t;\n{pack}static __device__ __forceinline__ void cg_st2({st}* p, float v0, float v1) {{\n{body}\n}}\n/* The same pair into shared memory at `a` (the TMA-store epilogue's staged tile). */\nstatic __device__ __forceinline__ void cg_sts2(unsigned a, float v0, float v1) {{\n{sts}\n}}\n",
        ir.out_dtype.size()
    )
}
