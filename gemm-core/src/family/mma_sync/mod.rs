//! Warp-level tensor cores (`mma.sync`, sm_80 and newer, Hopper included): A and B staged
//! through a `STAGES`-deep cp.async ring in swizzled shared memory, ldmatrix fragment
//! loads, m16n8k16 (f16/bf16) or m16n8k8 (tf32) MMAs, the epilogue fused before the store.
//! It serves every shape (element loads where a 16-byte chunk would be unaligned), so it is
//! the complete fallback behind families with alignment needs.

mod cuda;

pub(super) use cuda::TO_TF32;

use super::{CompileNeeds, KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::space::{TuneSpace, SMEM_SOFT_SHARE};
use crate::swizzle::ldmatrix_conflict_ways;
use crate::target::{Backend, Instr, InstrType, TargetSpec};
use serde::{Deserialize, Serialize};

/// A tensor-core tile (CUDA `mma.sync` kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MmaTile {
    /// Rows of C per block.
    pub block_m: u32,
    /// Columns of C per block.
    pub block_n: u32,
    /// K step per pipeline stage.
    pub block_k: u32,
    /// Warps along M.
    pub warps_m: u32,
    /// Warps along N.
    pub warps_n: u32,
    /// Shared-memory pipeline depth (cp.async multi-buffering).
    pub stages: u32,
    /// Launch-order group height: blocks sharing rows of A run close in time (L2 reuse).
    pub group_m: u32,
}

impl MmaTile {
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        32 * self.warps_m * self.warps_n
    }
    /// Rows of C per warp.
    pub const fn warp_m(&self) -> u32 {
        self.block_m / self.warps_m
    }
    /// Columns of C per warp.
    pub const fn warp_n(&self) -> u32 {
        self.block_n / self.warps_n
    }
    /// Dynamic shared memory: `stages` buffers of an A and a B tile.
    pub const fn smem_bytes(&self, dtype: DType) -> u32 {
        self.stages * (self.block_m + self.block_n) * self.block_k * dtype.size()
    }
    /// Estimated 32-bit registers per thread: accumulators, one k-step of A and B
    /// fragments, and a fixed allowance for addresses and loop state.
    pub const fn est_regs(&self, dtype: DType) -> u32 {
        let acc = self.warp_m() * self.warp_n() / 32;
        // An A fragment is 16x16 (4 regs of 16-bit pairs), a B fragment 16x8 (2 regs);
        // f32 (tf32) operands take twice the registers per element.
        let scale = dtype.size() / 2;
        let a_frag = (self.warp_m() / 16) * 4 * scale;
        let b_frag = (self.warp_n() / 8) * 2 * scale;
        // The allowance (addresses, pipeline indices, epilogue) is read off ptxas: 64x64
        // warp tiles use 216-250 registers; 32x128 ones pass 255 and spill.
        acc + 2 * (a_frag + b_frag) + 56
    }
}

/// The `mma_sync` family.
pub struct MmaSync;

impl KernelFamily for MmaSync {
    type Tile = MmaTile;
    const ID: super::FamilyId = super::FamilyId::MmaSync;

    fn instr(&self) -> Instr {
        Instr::MmaSync
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        if target.backend != Backend::Cuda {
            return Err("mma.sync is CUDA only".into());
        }
        // Full-precision f32 has no tensor-core instruction: rounding it to tf32 silently
        // would change the answer.
        let ty = InstrType::of(ir.ab_dtype, ir.acc);
        if !target.offers(Instr::MmaSync, ty) {
            return Err(format!("{} has no mma_sync for {ty:?} operands", target.name));
        }
        Ok(())
    }

    fn space(&self, _cx: &PlanCtx, space: &TuneSpace) -> Vec<MmaTile> {
        candidates(space, _cx.ir.acc.tf32_products())
    }

    fn rules(&self) -> &'static [Rule<MmaTile>] {
        &RULES
    }

    fn score(&self, cx: &PlanCtx, t: &MmaTile) -> f64 {
        score(cx, t)
    }

    fn resources(&self, t: &MmaTile, dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: t.smem_bytes(dtype),
            est_regs: t.est_regs(dtype),
            ring_k: t.block_k * t.stages,
        }
    }

    fn block_mn(&self, t: &MmaTile) -> (u32, u32) {
        (t.block_m, t.block_n)
    }

    /// Blocks are numbered linearly along grid x; the kernel maps that number to a tile in
    /// GROUP_M order.
    fn launch(&self, t: &MmaTile, ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        let tiles = (p.m.div_ceil(t.block_m as usize) * p.n.div_ceil(t.block_n as usize)) as u32;
        LaunchDims {
            grid: [tiles, 1, p.batch as u32],
            block: [t.threads(), 1, 1],
            smem_bytes: t.smem_bytes(ir.ab_dtype),
            persistent: None,
        }
    }

    fn defines(&self, t: &MmaTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("BM", t.block_m),
            ("BN", t.block_n),
            ("BK", t.block_k),
            ("WARPS_M", t.warps_m),
            ("WARPS_N", t.warps_n),
            ("STAGES", t.stages),
            ("GROUP_M", t.group_m),
        ];
        d.extend(crate::family::shape_flags::shape_defines(ir, p));
        d
    }

    fn compile_needs(&self, _t: &MmaTile) -> CompileNeeds {
        CompileNeeds::default()
    }

    fn emit(&self, ir: &GemmIr, _backend: Backend, variant: Variant) -> String {
        cuda::emit_variant(ir, variant)
    }

    /// One pipeline stage more or less, and warp grids of twice, half or the transposed
    /// shape (at most 16 warps, warp tiles still multiples of the 16x16 fragment grid), on
    /// the same block tile.
    fn neighbours(&self, t: &MmaTile) -> Vec<(String, MmaTile)> {
        let mut v = Vec::new();
        for s in [t.stages.saturating_sub(1), t.stages + 1] {
            if s >= 2 {
                v.push((format!("stages {s}"), MmaTile { stages: s, ..*t }));
            }
        }
        for (wm, wn) in [
            (t.warps_m * 2, t.warps_n),
            (t.warps_m, t.warps_n * 2),
            (t.warps_m / 2, t.warps_n),
            (t.warps_m, t.warps_n / 2),
            (t.warps_n, t.warps_m),
        ] {
            let ok = wm >= 1 && wn >= 1 && (wm, wn) != (t.warps_m, t.warps_n) && wm * wn <= 16;
            if ok && t.block_m.is_multiple_of(wm * 16) && t.block_n.is_multiple_of(wn * 16) {
                let n = MmaTile {
                    warps_m: wm,
                    warps_n: wn,
                    ..*t
                };
                v.push((format!("warps {wm}x{wn}"), n));
            }
        }
        v.dedup_by(|a, b| a.1 == b.1);
        v
    }

    fn group_m(&self, t: &MmaTile) -> u32 {
        t.group_m
    }

    fn with_group_m(&self, t: &MmaTile, group_m: u32) -> MmaTile {
        MmaTile { group_m, ..*t }
    }

    fn describe(&self, t: &MmaTile) -> String {
        format!(
            "mma {}x{}x{} warps {}x{} stages {} group {}",
            t.block_m, t.block_n, t.block_k, t.warps_m, t.warps_n, t.stages, t.group_m
        )
    }
}

/// The f32 sums a thread keeps beside its accumulators ([`crate::family::promoted_sums`]).
fn sums(x: &PlanCtx, c: &MmaTile) -> u32 {
    crate::family::promoted_sums(x.ir, c.warp_m() * c.warp_n() / 32)
}

fn candidates(space: &TuneSpace, tf32: bool) -> Vec<MmaTile> {
    let bk_default: &[u32] = if tf32 { &[16, 32] } else { &[32, 64] };
    let mut v = Vec::new();
    for block_m in space.pick("block_m", &[32, 64, 128, 256]) {
        for block_n in space.pick("block_n", &[32, 64, 128, 256]) {
            for block_k in space.pick("block_k", bk_default) {
                for warps_m in space.pick("warps_m", &[1, 2, 4]) {
                    for warps_n in space.pick("warps_n", &[1, 2, 4]) {
                        for stages in space.pick("stages", &[2, 3, 4, 5]) {
                            for group_m in space.pick("group_m", &[8]) {
                                v.push(MmaTile {
                                    block_m,
                                    block_n,
                                    block_k,
                                    warps_m,
                                    warps_n,
                                    stages,
                                    group_m,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    v
}

// Rationale per rule: each names the hardware limit or the generator invariant it
// protects. A config is charged to the first rule it breaks.
const RULES: [Rule<MmaTile>; 10] =
    [
        // The generator's invariants that every later rule (and the launch geometry)
        // divides by: no zero extent, the ring's two stages (a static_assert of the source),
        // a launch order of >= 1 row. Planned tiles always pass; a config read from disk
        // (an edited cache, a records file) may not.
        Rule {
            name: "extents",
            check: |_, c| {
                let dims = [
                    ("block_m", c.block_m, 1024),
                    ("block_n", c.block_n, 1024),
                    ("block_k", c.block_k, 1024),
                    ("warps_m", c.warps_m, 32),
                    ("warps_n", c.warps_n, 32),
                    ("stages", c.stages, 16),
                ];
                if let Some((n, v, max)) = dims
                    .iter()
                    .find(|(n, v, max)| *v > *max || *v < 1 + u32::from(*n == "stages"))
                {
                    let min = 1 + u32::from(*n == "stages");
                    Some(format!("{n} = {v} ({min}..={max})"))
                } else if c.group_m == 0 {
                    Some("group_m = 0 (at least 1)".to_string())
                } else {
                    None
                }
            },
        },
        // The warp loops step 16 rows (m16 fragments) and 16 columns (one ldmatrix.x4 of B
        // feeds two n8 MMAs).
        Rule {
            name: "warp_tile",
            check: |_, c| {
                (c.warp_m() % 16 != 0
                    || c.warp_n() % 16 != 0
                    || c.block_m % c.warps_m != 0
                    || c.block_n % c.warps_n != 0)
                    .then(|| {
                        format!(
                            "warp tile {}x{} is not a multiple of 16x16",
                            c.block_m / c.warps_m,
                            c.block_n / c.warps_n
                        )
                    })
            },
        },
        // Each k-step of the MMA consumes 16 (f16/bf16) or 8 (tf32) of K; a 16-byte cp.async
        // chunk must not straddle two stages.
        Rule {
            name: "k_step",
            check: |x, c| {
                let step = if x.dtype == DType::F32 { 8 } else { 16 };
                (c.block_k % step != 0 || (c.block_k * x.dtype.size()) % 16 != 0).then(|| {
                    format!(
                        "block_k {} is not a multiple of the MMA k-step {step} and of 16 bytes",
                        c.block_k
                    )
                })
            },
        },
        Rule {
            name: "threads",
            check: |x, c| {
                let t = c.threads();
                (t > x.target.max_threads_per_block || !(64..=512).contains(&t)).then(|| {
                    format!(
                        "{t} threads per block (need 64..=512 and <= {})",
                        x.target.max_threads_per_block
                    )
                })
            },
        },
        Rule {
            name: "smem",
            check: |x, c| {
                let b = c.smem_bytes(x.dtype);
                (b > x.target.smem_per_block_optin).then(|| {
                    format!(
            "shared memory {b} B ({} stages x ({}+{})x{} x {} B) exceeds the {} B per-block opt-in limit of {}",
            c.stages, c.block_m, c.block_n, c.block_k, x.dtype.size(), x.target.smem_per_block_optin, x.target.name)
                })
            },
        },
        Rule {
            name: "registers",
            check: |x, c| {
                let r = c.est_regs(x.dtype) + sums(x, c);
                let per_sm = r as u64 * c.threads() as u64;
                (r > x.target.regs_per_thread || per_sm > x.target.regs_per_sm as u64).then(|| {
                    format!(
                        "~{r} registers per thread x {} threads exceeds {} per thread / {} per SM",
                        c.threads(),
                        x.target.regs_per_thread,
                        x.target.regs_per_sm
                    )
                })
            },
        },
        // Accumulators beyond 128 per thread leave too few registers for fragments and
        // addresses: ptxas spills.
        Rule {
            name: "accumulators",
            check: |x, c| {
                let acc = c.warp_m() * c.warp_n() / 32 + sums(x, c);
                (acc > 128).then(|| {
                    format!(
                        "{acc} f32 accumulators per thread (> 128 spills){}",
                        crate::family::sums_note(x.ir)
                    )
                })
            },
        },
        // Each 16-byte chunk a thread copies per stage keeps an address live across the
        // main loop; past 16 of them ptxas spills (seen: 64x256x64 with 4 warps, 20 each).
        Rule {
            name: "load_slots",
            check: |x, c| {
                let per_thread = (c.block_m + c.block_n) * c.block_k * x.dtype.size() / 16 / c.threads();
                (per_thread > 16)
                    .then(|| format!("{per_thread} 16-byte loads per thread per stage (> 16 spills addresses)"))
            },
        },
        // Tile loads are whole 16-byte chunks, spread evenly over the block's threads.
        Rule {
            name: "vector_alignment",
            check: |x, c| {
                let e = x.dtype.size();
                let a_chunks = c.block_m * c.block_k * e / 16;
                let b_chunks = c.block_n * c.block_k * e / 16;
                let mn_ok = (c.block_m * e) % 16 == 0 && (c.block_n * e) % 16 == 0;
                (!mn_ok || a_chunks % c.threads() != 0 || b_chunks % c.threads() != 0).then(|| {
                    format!(
                        "tiles of {a_chunks} + {b_chunks} 16-byte chunks do not spread evenly over {} threads",
                        c.threads()
                    )
                })
            },
        },
        // Every ldmatrix phase (8 rows x 16 bytes) must hit 32 distinct banks under the
        // swizzle the generator emits.
        Rule {
            name: "bank_conflicts",
            check: |x, c| {
                let e = x.dtype.size();
                let a_row = match x.a_layout {
                    Layout::RowMajor => c.block_k,
                    Layout::ColMajor => c.block_m,
                } * e;
                let b_row = match x.b_layout {
                    Layout::ColMajor => c.block_k,
                    Layout::RowMajor => c.block_n,
                } * e;
                let t = x.target;
                let ways = ldmatrix_conflict_ways(a_row, t.smem_banks, t.bank_width, true).max(ldmatrix_conflict_ways(
                    b_row,
                    t.smem_banks,
                    t.bank_width,
                    true,
                ));
                (t.smem_banks > 1 && ways > 1)
                    .then(|| format!("{ways}-way bank conflicts reading swizzled rows of {a_row} / {b_row} bytes"))
            },
        },
    ];

/// Higher is better: arithmetic intensity of the block tile, scaled down when the
/// block cannot keep enough MMAs in flight, and when shared memory passes the soft share.
fn score(x: &PlanCtx, c: &MmaTile) -> f64 {
    let (bm, bn) = (c.block_m as f64, c.block_n as f64);
    let mut s = bm * bn / (bm + bn);
    let warps = (c.warps_m * c.warps_n) as f64;
    s *= (warps / 4.0).min(1.0);
    let wm_wn = (c.warp_m() * c.warp_n()) as f64;
    s *= (wm_wn / (64.0 * 32.0)).min(1.0).sqrt();
    s *= match c.stages {
        2 => 0.93,
        3 => 1.0,
        4 => 0.98,
        _ => 0.95,
    };
    // Measured on the H200 (bench/results/h200-2026-11-29/throughput-all-configs.log):
    // 128-byte K slices (block_k 64 for 16-bit types) beat 64-byte ones by 20-35% at
    // every shape tried, since each barrier then feeds twice the MMAs.
    if c.block_k * x.dtype.size() < 128 {
        s *= 0.8;
    }
    if c.smem_bytes(x.dtype) as f64 > SMEM_SOFT_SHARE * x.target.smem_per_block_optin as f64 {
        s *= 0.8;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AccMode;
    use crate::target::{Targets, BUILTIN_TARGETS};

    /// acc = tf32x3 keeps an f32 sum beside each accumulator (family::promotes): its
    /// source adds them every k-tile, and the rules count them.
    #[test]
    fn tf32x3_counts_and_adds_its_promoted_sums() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = targets.get("h200").unwrap();
        let ir = |acc| GemmIr::matmul("m", DType::F32, acc, Layout::RowMajor, Layout::ColMajor);
        let (tf32, x3) = (ir(AccMode::Tf32), ir(AccMode::Tf32x3));
        // 64x64 a warp: 128 accumulators a thread, 256 with the sums.
        let t = MmaTile {
            block_m: 128,
            block_n: 128,
            block_k: 16,
            warps_m: 2,
            warps_n: 2,
            stages: 3,
            group_m: 8,
        };
        let rule = RULES.iter().find(|r| r.name == "accumulators").unwrap();
        assert_eq!((rule.check)(&PlanCtx::new(h200, &tf32), &t), None);
        let why = (rule.check)(&PlanCtx::new(h200, &x3), &t).unwrap();
        assert!(why.contains("256 f32 accumulators") && why.contains("tf32x3"), "{why}");
        let src = cuda::emit_variant(&x3, Variant::Full);
        assert!(src.contains("#ifndef CG_PROMOTE\n#define CG_PROMOTE 1\n#endif\n"));
        assert!(src.contains("cg_sum[mi][ni][q] += c[mi][ni][q];"));
        assert!(cuda::emit_variant(&tf32, Variant::Full).contains("#define CG_PROMOTE 0\n"));
    }
}
