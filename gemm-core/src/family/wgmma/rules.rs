//! The wgmma family's tile rules: the source's static_asserts and the chip's limits,
//! checked on the host so that the planner never emits a config that would not build.

use super::splitk::MAX_KSPLIT;
use super::{bk_for, form_ir, WgmmaTile};
use crate::family::{PlanCtx, Rule};
use crate::ir::Layout;

// Rationale per rule: each is one of the source's static_asserts (a config that breaks
// it would not compile) or a limit of the chip.
pub(super) const RULES: [Rule<WgmmaTile>; 14] = [
    // A k-tile is one to four 128-byte swizzle rows; more than one only with K-major A and
    // B (their tiles then arrive as one box per row; MN-major boxes hold one row).
    Rule {
        name: "k_step",
        check: |x, c| {
            let row = bk_for(x.dtype);
            if c.bk == 0 || c.bk % row != 0 || c.bk > 4 * row {
                Some(format!(
                    "BK = {} (1 to 4 swizzle rows of {row} {:?} elements)",
                    c.bk, x.dtype
                ))
            } else if c.bk > row && !(x.a_layout == Layout::RowMajor && x.b_layout == Layout::ColMajor) {
                // (Turning the product around keeps both operands K-major.)
                Some(format!(
                    "BK = {} is {} swizzle rows, which needs K-major A and B (row-major A, column-major B)",
                    c.bk,
                    c.bk / row
                ))
            } else {
                None
            }
        },
    },
    // A producer warpgroup and one to three consumers: three share the register file
    // four ways (160 registers each after setmaxnreg), for 192-row tiles of one 64-row
    // slab a consumer.
    Rule {
        name: "consumers",
        check: |_, c| (!(1..=3).contains(&c.consumers)).then(|| format!("CONSUMERS = {} (1, 2 or 3)", c.consumers)),
    },
    // Ping-pong rotates whole tiles between two or three consumers; split-K's reduction
    // is per consumer share of a tile, which ping-pong does not have.
    Rule {
        name: "pingpong",
        check: |x, c| {
            if c.pingpong && (!(2..=3).contains(&c.consumers) || c.ksplit != 1) {
                Some(format!(
                    "ping-pong with CONSUMERS = {} and KSPLIT = {} (it takes 2 or 3 consumers and no split-K)",
                    c.consumers, c.ksplit
                ))
            } else if c.pingpong && c.consumers == 3 && accumulator_regs(x, c) > 64 {
                // ptxas: 64x192 (96 accumulators) spills 8 bytes in 160 registers.
                Some(format!(
                    "ping-pong of three consumers with {}x{} ({} accumulators a thread; at most 64 fit their 160 registers)",
                    c.bm,
                    c.bn,
                    accumulator_regs(x, c)
                ))
            } else {
                None
            }
        },
    },
    // Stream-K splits the last wave's units by K between cooperative blocks, through slots
    // of its own (not split-K's), one block at a time (no cluster). With tf32 its walk
    // spills on a full 128-register accumulator (ptxas: 24 bytes at 128x256).
    Rule {
        name: "streamk",
        check: |x, c| {
            if !c.streamk {
                None
            } else if c.ksplit != 1 || c.cluster() != 1 || c.pingpong {
                Some(format!(
                    "stream-K with KSPLIT = {}, a cluster of {}{} (it takes none of them)",
                    c.ksplit,
                    c.cluster(),
                    if c.pingpong { " and ping-pong" } else { "" }
                ))
            } else if x.dtype == crate::ir::DType::F32 && accumulator_regs(x, c) > 96 {
                Some(format!(
                    "stream-K on tf32 with {}x{} (more than 96 accumulator registers a thread spill)",
                    c.bm, c.bn
                ))
            } else {
                None
            }
        },
    },
    // Operand reuse compares a block's own earlier items, which a split of K, a
    // stream-K share or a cluster's multicast (a peer's loads) would not match.
    Rule {
        name: "reuse",
        check: |_, c| {
            (c.reuse && (c.ksplit != 1 || c.streamk || c.cluster() != 1)).then(|| {
                format!(
                    "operand reuse with KSPLIT = {}{}, a cluster of {} (it takes no split of K, no stream-K and no cluster)",
                    c.ksplit,
                    if c.streamk { ", stream-K" } else { "" },
                    c.cluster()
                )
            })
        },
    },
    // Each consumer owns whole 64-row wgmma slabs (of its share of the tile, or with
    // ping-pong of the whole tile).
    Rule {
        name: "warp_tile",
        check: |_, c| {
            (c.bm == 0 || c.bm > 256 || c.bm % (64 * c.sharers()) != 0).then(|| {
                format!(
                    "BM = {} (BM / CONSUMERS must be a multiple of 64, BM <= 256; with ping-pong BM itself)",
                    c.bm
                )
            })
        },
    },
    // wgmma N is a multiple of 8 up to 256; the epilogue stores 16-column groups; an
    // N-major B arrives in 64-column boxes.
    Rule {
        name: "block_n",
        check: |x, c| {
            if c.bn < 16 || c.bn > 256 || c.bn % 16 != 0 {
                Some(format!("BN = {} (a multiple of 16 in [16, 256])", c.bn))
            } else if form_ir(c, x.ir).b_layout() == Layout::RowMajor && c.bn % 64 != 0 {
                Some(format!(
                    "BN = {} (N-major B{} needs a multiple of 64)",
                    c.bn,
                    if c.turned {
                        ", the turned form's A read transposed,"
                    } else {
                        ""
                    }
                ))
            } else {
                None
            }
        },
    },
    // m64nN f32 accumulators take N/2 registers a thread per slab; past 128 they do not
    // fit the 168 registers of a 384-thread block, past 96 the 128 of a 512-thread one.
    Rule {
        name: "accumulators",
        check: |x, c| {
            let acc = accumulator_regs(x, c);
            let most = max_accumulators(c);
            (acc > most).then(|| {
                format!(
                    "{acc} accumulator registers per thread (at most {most}: BM / CONSUMERS / 64 * BN / 2, ping-pong BM / 64 * BN / 2{})",
                    if crate::family::promotes(x.ir) { ", twice that for tf32x3's sums" } else { "" }
                )
            })
        },
    },
    // The ring needs a stage being filled while one is consumed.
    Rule {
        name: "stages",
        check: |_, c| (c.stages < 2).then(|| format!("STAGES = {} (at least 2)", c.stages)),
    },
    Rule {
        name: "group_m",
        check: |_, c| (c.group_m < 1).then(|| "GROUP_M = 0 (at least 1)".to_string()),
    },
    // Blocks of a cluster column share B, of a row A, by multicast: 1, 2 or 4 along each
    // side, at most 8 blocks (CUDA's portable cluster size). Split-K's partial tiles are
    // indexed by tile row only.
    Rule {
        name: "cluster",
        check: |_, c| {
            if !(matches!(c.cluster_m, 1 | 2 | 4) && matches!(c.cluster_n, 1 | 2 | 4)) || c.cluster() > 8 {
                Some(format!(
                    "CLUSTER_M = {}, CLUSTER_N = {} (1, 2 or 4 each, at most 8 blocks)",
                    c.cluster_m, c.cluster_n
                ))
            } else if c.cluster_n != 1 && c.ksplit != 1 {
                Some(format!(
                    "CLUSTER_N = {} with KSPLIT = {} (split-K takes no cluster along N)",
                    c.cluster_n, c.ksplit
                ))
            } else {
                None
            }
        },
    },
    // The source's static_assert on KSPLIT.
    Rule {
        name: "ksplit",
        check: |_, c| {
            (!(1..=MAX_KSPLIT).contains(&c.ksplit)).then(|| format!("KSPLIT = {} (1 to {MAX_KSPLIT})", c.ksplit))
        },
    },
    // The TMA-store epilogue stages the tile in the operands' element size, as 128-byte
    // boxes of columns that TMA writes whole (a box past BN would write the next tile's
    // columns), in rows of the output (a row-major one).
    Rule {
        name: "tma_store",
        check: |x, c| {
            if !c.tma_store {
                return None;
            }
            let out = x.ir.out_dtype;
            let box_cols = 128 / out.size();
            let out_layout = form_ir(c, x.ir).out_layout;
            if out.size() != x.dtype.size() || out_layout != Layout::RowMajor {
                Some(format!(
                    "the TMA-store epilogue with a {}{} {:?} output (it takes a row-major output of the operands' {}-byte elements)",
                    out_layout.name(),
                    if c.turned { " (turned around)" } else { "" },
                    out,
                    x.dtype.size()
                ))
            } else if !c.bn.is_multiple_of(box_cols) {
                Some(format!(
                    "the TMA-store epilogue with BN = {} (a multiple of its {box_cols}-column boxes)",
                    c.bn
                ))
            } else {
                None
            }
        },
    },
    Rule {
        name: "smem",
        check: |x, c| {
            let smem = c.smem_bytes(x.dtype);
            let limit = x.target.smem_per_block_optin;
            (smem > limit).then(|| {
                // Each part named, so that the message says what to shrink.
                let ring = c.stages * (c.bm + c.bn) * c.bk * x.dtype.size();
                let plain = super::config::smem_bytes(c.bm, c.bn, c.bk, c.stages, x.dtype.size());
                let epilogue = match (c.tma_store, c.epi_smem) {
                    (true, _) => format!(", the TMA-store tile and parameter areas {}", smem - plain),
                    (false, true) => format!(", the epilogue's staging buffers {}", smem - plain),
                    (false, false) => String::new(),
                };
                format!(
                    "{smem} bytes of shared memory (the ring's {} stages of ({}+{})x{} {} {ring}{epilogue}, \
                     alignment and barriers {}) exceed the {limit} B opt-in limit of {}",
                    c.stages,
                    c.bm,
                    c.bn,
                    c.bk,
                    x.dtype.name(),
                    plain - ring,
                    x.target.name
                )
            })
        },
    },
];

/// The f32 registers a consumer thread of `c` holds for its accumulators: BN / 2 per
/// 64-row slab of its share, twice that where the kernel keeps promoted sums beside them.
pub(super) fn accumulator_regs(x: &PlanCtx, c: &WgmmaTile) -> u32 {
    let acc = (c.bm / c.sharers() / 64) * c.bn / 2;
    acc + crate::family::promoted_sums(x.ir, acc)
}

/// The most f32 accumulators a consumer thread may hold. ptxas compiles the whole kernel
/// within the launch bound's registers (65536 / threads), whatever `setmaxnreg` grants
/// the consumers at run time: a 512-thread 128x256 tile failed with "Insufficient
/// registers (128) to compile instruction" (bench/results/h200-2026-12-03q1). So 128
/// accumulators fit the 168 registers of 384 threads or fewer, 96 the 128 of 512.
pub(super) fn max_accumulators(c: &WgmmaTile) -> u32 {
    if c.threads() >= 512 {
        96
    } else {
        128
    }
}

#[cfg(test)]
mod tests {
    use crate::family::wgmma::WgmmaTile;
    use crate::ir::{AccMode, DType, GemmIr, Layout};

    /// The smem rule's reason adds up its parts: the ring, the epilogue's buffers, and the
    /// alignment slack with the barriers.
    #[test]
    fn the_smem_reason_names_each_part() {
        let ir = GemmIr::matmul("s", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let why = WgmmaTile::new(128, 128, 7, 2).validate(&ir).unwrap_err();
        assert_eq!(
            why,
            "248944 bytes of shared memory (the ring's 7 stages of (128+128)x64 f16 229376, the \
             epilogue's staging buffers 18432, alignment and barriers 1136) exceed the 232448 B \
             opt-in limit of h200"
        );
        let direct = WgmmaTile {
            epi_smem: false,
            ..WgmmaTile::new(128, 256, 5, 2)
        };
        let why = direct.validate(&ir).unwrap_err();
        assert!(why.contains("(128+256)x64 f16 245760, alignment"), "{why}");
    }
}
