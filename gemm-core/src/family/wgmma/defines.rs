//! The wgmma source's preprocessor constants, documented: one place that the source's
//! `#ifndef` defaults, the host's [`super::WgmmaTile::defines`] and the tests agree on.

/// Every preprocessor constant the source reads, with its meaning, default and limits.
/// The source defines each under `#ifndef`, so a compile without `-D` flags builds the
/// default configuration ([`super::WgmmaTile::default`]).
pub const DEFINES: &[(&str, &str)] = &[
    (
        "BM",
        "CTA tile rows; default 128. (BM / CONSUMERS) must be a multiple of 64, BM <= 256.",
    ),
    (
        "BN",
        "CTA tile columns = wgmma N; default 256. A multiple of 16 in [16, 256]; a multiple of 64 when B is N-major.",
    ),
    (
        "BK",
        "k-tile depth in elements: 1 to 4 128-byte swizzle rows of 64 16-bit or 32 tf32 elements (128 / CG_ESZ each); default one row. More than one row needs K-major A and B: each row of the k-tile is a sub-tile of its own (one TMA box, or the cp.async producer's copies of one row), placed one after the other in the stage.",
    ),
    (
        "STAGES",
        "depth of the TMA ring; default 4. At least 2; the shared memory of smem_bytes() must fit 232448 bytes.",
    ),
    (
        "CONSUMERS",
        "consumer warpgroups, 1, 2 or 3; default 2. Each owns BM / CONSUMERS rows of the tile. Three (512 threads, 160 registers each after setmaxnreg) take at most 96 accumulators a thread: 192-row tiles up to 192 wide.",
    ),
    (
        "GROUP_M",
        "tile rows that sweep the columns together (grouped raster for L2 reuse); default 8, at least 1.",
    ),
    (
        "CLUSTER_M",
        "blocks per cluster along M, 1, 2 or 4; default 1. Past 1, the kernel is declared __cluster_dims__(CLUSTER_M * CLUSTER_N, 1, 1), the first block of each cluster column loads the column's shared B tile once and multicasts it to the column, and the grid must be a multiple of the cluster (at most 8 blocks).",
    ),
    (
        "CLUSTER_N",
        "blocks per cluster along N, 1, 2 or 4; default 1. Past 1 the blocks of each cluster row share the A tile: the row's first block loads it once and multicasts it; with CLUSTER_M past 1 too, the cluster (__cluster_dims__(CLUSTER_M * CLUSTER_N, 1, 1), block r at tile row r % CLUSTER_M and column r / CLUSTER_M) shares both operands. At most 8 blocks; the grid must be a multiple of the cluster. Needs KSPLIT 1.",
    ),
    (
        "CG_PRODUCER_REGS",
        "setmaxnreg.dec value of the producer warpgroup when CONSUMERS > 1; default 24, 56 with CG_CPASYNC (multiple of 8 in [24, 256]).",
    ),
    (
        "CG_CONSUMER_REGS",
        "setmaxnreg.inc value of each consumer warpgroup when CONSUMERS > 1; default 240, 224 with CG_CPASYNC (three consumers: 160, 152). 128 * (producer + CONSUMERS * consumer) must stay <= 65536.",
    ),
    (
        "CG_INFLIGHT",
        "1: keep one wgmma group in flight across k-tiles (a stage is released one k-tile late); 0: wait for each k-tile's group and release its stage at once (the other consumer keeps the tensor cores busy meanwhile); default 1 with one consumer, 0 with two.",
    ),
    (
        "CG_EPI_SMEM",
        "1: row-major outputs leave through a per-warp shared-memory staging buffer as 16-byte stores (CONSUMERS * 9216 more bytes of shared memory: EPI_STAGING_BYTES per consumer); 0: 2-element stores straight from registers; default 1.",
    ),
    (
        "CG_EPI_TMA",
        "1: the TMA-store epilogue: each consumer writes its rows of the tile through the epilogue into a staged tile of its own (CG_WG_M x BN elements in 128-byte swizzled boxes of CG_CW columns, after a 1 KiB parameter area per consumer) and one thread stores the boxes with cp.async.bulk.tensor through the output's map (c_map, a kernel argument after b_map), which TMA clips at M and N; overrides CG_EPI_SMEM; default 0. Needs a row-major output of CG_ESZ-byte elements and BN a multiple of CG_CW.",
    ),
    (
        "CG_C_TMA3",
        "1: with CG_EPI_TMA, the output's map is rank 3 (a batch: the work item's product, cg_bz, outermost); the host sets it per call (Wgmma::defines); default 0.",
    ),
    (
        "KSPLIT",
        "blocks per output tile along K, 1 to 16; default 1. With more, the kernel takes a workspace (cg_ws: KSPLIT f32 partial tiles per output tile) and arrival counters (cg_flags, zero before the launch and after it) after the tensor maps, and the last split of a tile to arrive adds the partials in split order and runs the epilogue (splitk.rs).",
    ),
    (
        "CG_PINGPONG",
        "1: the ping-pong schedule: the consumers take the block's work items in turn (each the whole BM x BN tile, BM / 64 slabs) and run their mainloops in turn (named barriers CONSUMERS + 1 + c), so that one's epilogue overlaps the others' mainloops (with three, two epilogues overlap one mainloop); each stage is read by one consumer. 0: cooperative, the consumers share every tile (BM / CONSUMERS rows each); default 0. Needs CONSUMERS 2 or 3 and KSPLIT 1.",
    ),
    (
        "CG_STREAMK",
        "1: stream-K in its tail form: of the U work units on G blocks, the full waves run whole (block g takes units g, g + G, ...) and each of the T = U % G units of the partial last wave is split S = min(G / T, the k-tiles, CG_TAIL_MAX) ways by K (none when S < 2), block g < T S taking split g % S of tail unit g / S; the S blocks of a unit fold their partial tiles through the workspace (a slot per block, cg_ws; a counter per tail unit and consumer, cg_flags) in split order, the last to arrive running the epilogue (splitk.rs, cg_walk); default 0. Needs KSPLIT 1, CLUSTER_M 1 and no ping-pong; takes the workspace arguments.",
    ),
    (
        "CG_TAIL_MAX",
        "with CG_STREAMK, the most ways a unit of the partial last wave is split (its last split to arrive reads every split's partial back); default splitk::TAIL_MAX, 8.",
    ),
    (
        "CG_REUSE",
        "1: operand reuse: each block walks a consecutive run of the work items (as many as the strided walk gives it, from cg_run0), and the producer leaves out A's (B's) loads into a stage that still holds the same A (B) k-tile of the same product from the item STAGES / ktiles before (only where STAGES is a multiple of ktiles), expecting only the bytes it loads; default 0. Needs KSPLIT 1, no stream-K and no cluster.",
    ),
    (
        "CG_STCG",
        "with CG_LDCG, CG_ARRIVE and CG_RESET: a split's workspace traffic and arrival (KSPLIT > 1 or CG_STREAMK); default the PTX of strip_sum::CUDA_ARRIVE (.cg stores and loads, an acq_rel.gpu add, a relaxed.gpu reset), which every CUDA split of K shares. A host shim defines all four to run a kernel on host atomics (gemm-core/tests/simt_cuda_on_host.rs does for simt).",
    ),
    (
        "CG_A_TMA3",
        "1: A holds one matrix per product of a batch and TMA maps it rank 3 (the work item's product, cg_bz, as the outer coordinate); the host sets it per call (Wgmma::defines); default 0 (rank 2: one A, or a broadcast one).",
    ),
    (
        "CG_B_TMA3",
        "1: as CG_A_TMA3 for B (its multicast too); default 0.",
    ),
    (
        "CG_CPASYNC",
        "1: the producer warpgroup loads A and B with cp.async (all 128 threads, CG_CPA_A / CG_CPA_B bytes a copy, zero-fill past the extents) into the same swizzled ring instead of TMA, for shapes whose rows TMA cannot map; the host sets it per call (Wgmma::defines); default 0. Needs CLUSTER_M 1.",
    ),
    (
        "CG_CPA_A",
        "bytes per cp.async of A with CG_CPASYNC: 16, 8 or 4, the largest that divides A's row pitch; default 16.",
    ),
    (
        "CG_CPA_B",
        "bytes per cp.async of B with CG_CPASYNC, as CG_CPA_A; default 16.",
    ),
    (
        "CG_PROMOTE",
        "k-tiles per run whose accumulator is then added into an f32 sum (cg_sum) and started afresh, so that the tensor cores' truncating additions chain over at most that many k-tiles; 0: one chain over the whole work item; default 1 for acc = tf32x3 kernels (family::promotes says why), else 0. Doubles the accumulator registers (the `accumulators` rule).",
    ),
    (
        "CG_STSM",
        "with CG_EPI_SMEM and a 16-bit output, 1: a warp writes each 16 x 16 block of its staged chunk with one stmatrix (m8n8.x4); 0: four 4-byte shared stores; default 1 but for three consumers with BN over 128 (whose registers it spilled); always 0 for f32 outputs.",
    ),
    (
        "CG_FAST_MATH",
        "1: gelu, sigmoid and silu with ex2.approx / rcp.approx (2 MUFU operations a value, a few f32 ulps of error); 0: the prelude's libdevice forms; default 1.",
    ),
    (
        "CG_GELU_TANH",
        "with CG_FAST_MATH, 1: gelu as 0.5 x (1 + tanh.approx.f32(u)) (1 MUFU operation a value; measured within the tests' tolerances); 0: x / (1 + ex2.approx(-2u log2 e)) with rcp.approx (2 MUFU operations, a few f32 ulps); default 1 for 16-bit outputs, 0 for f32 outputs.",
    ),
    (
        "SWAP",
        "1: the turned-around kernel: the source's second form, generated from the transposed product (GemmIr::transposed: A and B exchanged, every matrix in the other layout, Row and Col parameters exchanged, the output's layout flipped) with the same symbol and ABI, its M and N arguments exchanged; it writes C transposed, i.e. C itself, and every other constant is in its terms; default 0.",
    ),
    (
        "CG_WATCHDOG",
        "debug only: when non-zero, every mbarrier wait traps after about 2^26 polls instead of hanging; default 0.",
    ),
];
