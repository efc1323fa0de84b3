//! Scalar FMA in the CLBlast tile family (work-group tile MWG×NWG×KWG, per-thread tile
//! MWI×NWI strided by MDIMC/NDIMC, VW-wide global loads): the OpenCL kernel for every
//! device, and CUDA's kernel for operand types no matrix instruction takes (full f32).

mod cuda;
mod opencl;

use super::{KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule, Workspace};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::space::{TuneSpace, SMEM_SOFT_SHARE};
use crate::target::{Backend, DeviceType, Instr, TargetSpec};
use serde::{Deserialize, Serialize};

/// A scalar-FMA tile in the CLBlast family (OpenCL kernels; CUDA FMA fallback).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SimtTile {
    /// Rows of C per work-group (CLBlast MWG).
    pub mwg: u32,
    /// Columns of C per work-group (NWG).
    pub nwg: u32,
    /// K step per local-memory tile (KWG).
    pub kwg: u32,
    /// Threads along M (MDIMC); each computes MWG/MDIMC rows.
    pub mdimc: u32,
    /// Threads along N (NDIMC); each computes NWG/NDIMC columns.
    pub ndimc: u32,
    /// Elements per global vector load (1, 2, 4 or 8) along the contiguous dimension.
    pub vw: u32,
    /// Launch-order group height, as in `MmaTile::group_m`.
    pub group_m: u32,
    /// Work-groups that split K for the same output tile, their partial tiles added in
    /// split order (OpenCL: by a second kernel; CUDA: by the last to arrive). Absent in
    /// records written before it (1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ksplit: u32,
}

fn one() -> u32 {
    1
}

fn is_one(k: &u32) -> bool {
    *k == 1
}

/// Padding (in floats) the OpenCL kernel adds to each local-memory row: keeps the
/// transposing stores of a K-contiguous operand off a single bank.
pub(crate) const OPENCL_LOCAL_PAD: u32 = 1;

/// Padding (in floats) of the local rows of an operand tile whose threads own `per_thread`
/// values of each k-slice, as `backend`'s kernel lays them out. CUDA's threads own runs of
/// 4 where their share allows and read each run with one 16-byte load, so those rows stay
/// a multiple of 4 floats (`CG_LDA`/`CG_LDB` in `cuda.rs`): a pad of 4, which puts more of
/// a K-contiguous operand's transposing stores in one bank than OpenCL's pad of 1.
pub const fn simt_local_pad(backend: Backend, per_thread: u32) -> u32 {
    match backend {
        Backend::Cuda if per_thread.is_multiple_of(4) => 4,
        _ => OPENCL_LOCAL_PAD,
    }
}

impl SimtTile {
    /// Threads per work-group.
    pub const fn threads(&self) -> u32 {
        self.mdimc * self.ndimc
    }
    /// Rows of C per thread (CLBlast MWI).
    pub const fn mwi(&self) -> u32 {
        self.mwg / self.mdimc
    }
    /// Columns of C per thread (NWI).
    pub const fn nwi(&self) -> u32 {
        self.nwg / self.ndimc
    }
    /// Local-memory row lengths (floats) of the A and B tiles in `backend`'s kernel.
    pub const fn local_rows(&self, backend: Backend) -> (u32, u32) {
        (
            self.mwg + simt_local_pad(backend, self.mwi()),
            self.nwg + simt_local_pad(backend, self.nwi()),
        )
    }
    /// Local memory of the two tiles in `backend`'s kernel, bytes (operands are held as
    /// f32 there).
    pub const fn local_bytes(&self, backend: Backend) -> u32 {
        let (a, b) = self.local_rows(backend);
        self.kwg * (a + b) * 4
    }
    /// Estimated registers per thread: the accumulator tile, one column of A and row of
    /// B, and an allowance for indices.
    pub const fn est_regs(&self) -> u32 {
        self.mwi() * self.nwi() + self.mwi() + self.nwi() + 24
    }
}

/// Tiles of at most this many rows split K the most ways (4 or 8): few tiles along M.
const SHORT_TILE_ROWS: u32 = 32;

/// The `simt` family.
pub struct Simt;

impl KernelFamily for Simt {
    type Tile = SimtTile;
    const ID: super::FamilyId = super::FamilyId::Simt;

    fn instr(&self) -> Instr {
        Instr::Fma
    }

    /// Every target has scalar FMA, and both generators emit this family.
    fn serves(&self, _target: &TargetSpec, _ir: &GemmIr) -> Result<(), String> {
        Ok(())
    }

    /// Every tile of the space, and the tiles again with K split over blocks: those of at
    /// most 32 rows over 4 or 8 work-groups (4 on a CPU), and in CUDA the taller ones over
    /// 2 or 4. A product of few rows has few tiles along M, and those alone leave most of
    /// a GPU idle (16x4096x4096 in 16x64 tiles is 64 work-groups). A taller tile that walks
    /// a long K fetches one k-tile ahead, so each of its steps waits on a load: on an H100
    /// (bench/results/h100-2026-12-06ak2) 128x8192x8192 took 513 µs in its best tile with
    /// K whole and 425 with 128x128 split in 4, 128x4096x11008 475 and 355 (128x64 split
    /// in 2), while 1000³ stayed faster whole (71 against 77). On OpenCL a split is two
    /// kernels (`strip_sum::SUM_KERNEL_SUFFIX`), measured for the short tiles only; in CUDA
    /// the last block of a tile to arrive adds the others' sums, as `wgmma`'s split-K. A
    /// user's `ksplit` list replaces the planner's splits for the tiles it splits at all.
    fn space(&self, cx: &PlanCtx, space: &TuneSpace) -> Vec<SimtTile> {
        let (short, tall): (&[u32], &[u32]) = match (cx.target.backend, cx.target.device_type) {
            (Backend::Opencl, DeviceType::Cpu) => (&[4], &[]),
            (Backend::Opencl, _) => (&[4, 8], &[]),
            (Backend::Cuda, _) => (&[4, 8], &[2, 4]),
            _ => (&[], &[]),
        };
        let asked = space.0.get("ksplit");
        let splits_of = |t: &SimtTile| -> Vec<u32> {
            let planned = if t.mwg <= SHORT_TILE_ROWS { short } else { tall };
            match asked {
                // The user's values apply where the planner splits at all.
                Some(v) if !planned.is_empty() => v.iter().copied().filter(|&k| k > 1).collect(),
                Some(_) => Vec::new(),
                None => planned.to_vec(),
            }
        };
        let base = candidates(space);
        let split = base
            .iter()
            .flat_map(|t| splits_of(t).into_iter().map(move |ksplit| SimtTile { ksplit, ..*t }));
        let whole = base.iter().copied().filter(|_| asked.is_none_or(|v| v.contains(&1)));
        whole.chain(split.collect::<Vec<_>>()).collect()
    }

    /// One slot per block tile of each split beside the share, so that the splits do not
    /// crowd out the tiles a large problem needs.
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        let classes: std::collections::HashSet<(u32, u32, u32)> = self
            .space(cx, space)
            .into_iter()
            .filter(|t| t.ksplit > 1 && super::first_broken_rule(self, cx, t).is_none())
            .map(|t| (t.mwg, t.nwg, t.ksplit))
            .collect();
        classes.len()
    }

    fn k_split(&self, t: &SimtTile) -> u32 {
        t.ksplit
    }

    /// A block fetches one k-tile ahead of the one it computes on, so each of its k-steps
    /// waits on a round trip to memory.
    fn serial_loads(&self, t: &SimtTile, p: Problem) -> f64 {
        let share = p.k.div_ceil(t.ksplit.max(1) as usize);
        share.div_ceil(t.kwg.max(1) as usize) as f64
    }

    fn accepts(&self, t: &SimtTile, _ir: &GemmIr, p: Problem) -> Result<(), String> {
        super::strip_sum::check_workspace(workspace(t, p))
    }

    fn workspace(&self, t: &SimtTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> Option<Workspace> {
        workspace(t, p)
    }

    fn rules(&self) -> &'static [Rule<SimtTile>] {
        &RULES
    }

    /// A split tile comes after every tile that walks K whole (it is for some shapes
    /// only: never a plan's default).
    fn score(&self, cx: &PlanCtx, t: &SimtTile) -> f64 {
        score(cx, t) * if t.ksplit > 1 { 0.01 } else { 1.0 }
    }

    /// Shared memory as CUDA's kernel pads it, the larger of the two dialects' (no more
    /// than 6 floats a k-row over OpenCL's): the runtime's fit check needs an upper bound.
    fn resources(&self, t: &SimtTile, _dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: t.local_bytes(Backend::Cuda),
            est_regs: t.est_regs(),
            ring_k: t.kwg,
        }
    }

    fn block_mn(&self, t: &SimtTile) -> (u32, u32) {
        (t.mwg, t.nwg)
    }

    /// Blocks are numbered linearly along grid x (the kernel maps that number to a tile in
    /// GROUP_M order); block dimension 0 runs along N so that neighbouring threads store
    /// neighbouring columns. Local memory is static (0 dynamic bytes).
    fn launch(&self, t: &SimtTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        LaunchDims {
            grid: [tiles(t, p) as u32, t.ksplit, p.batch as u32],
            block: [t.ndimc, t.mdimc, 1],
            smem_bytes: 0,
            persistent: None,
        }
    }

    /// The tile constants; the CUDA source also takes the shape's alignment flags (the
    /// OpenCL one checks alignment itself).
    fn defines(&self, t: &SimtTile, ir: &GemmIr, backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("MWG", t.mwg),
            ("NWG", t.nwg),
            ("KWG", t.kwg),
            ("MDIMC", t.mdimc),
            ("NDIMC", t.ndimc),
            ("VW", t.vw),
            ("GROUP_M", t.group_m),
        ];
        if backend == Backend::Cuda {
            d.extend(crate::family::shape_flags::shape_defines(ir, p));
        }
        // Only where it splits: the binaries of every other config keep their options.
        if t.ksplit > 1 {
            d.push(("KSPLIT", t.ksplit));
        }
        d
    }

    fn emit(&self, ir: &GemmIr, backend: Backend, variant: Variant) -> String {
        match backend {
            Backend::Cuda => cuda::emit_variant(ir, variant),
            Backend::Opencl => opencl::emit_variant(ir, variant),
            Backend::Host => unreachable!("no target has the host backend (targets.toml rejects it)"),
        }
    }

    /// Vector widths of half and twice the current one, and the transposed thread grid, on
    /// the same work-group tile.
    fn neighbours(&self, t: &SimtTile) -> Vec<(String, SimtTile)> {
        let mut v = Vec::new();
        for vw in [t.vw / 2, t.vw * 2] {
            if (1..=8).contains(&vw) && t.mwg.is_multiple_of(vw) && t.nwg.is_multiple_of(vw) && t.kwg.is_multiple_of(vw)
            {
                v.push((format!("vector {vw}"), SimtTile { vw, ..*t }));
            }
        }
        if t.mdimc != t.ndimc && t.mwg.is_multiple_of(t.ndimc) && t.nwg.is_multiple_of(t.mdimc) {
            let n = SimtTile {
                mdimc: t.ndimc,
                ndimc: t.mdimc,
                ..*t
            };
            v.push((format!("threads {}x{}", t.ndimc, t.mdimc), n));
        }
        v.dedup_by(|a, b| a.1 == b.1);
        v
    }

    fn group_m(&self, t: &SimtTile) -> u32 {
        t.group_m
    }

    fn with_group_m(&self, t: &SimtTile, group_m: u32) -> SimtTile {
        SimtTile { group_m, ..*t }
    }

    fn describe(&self, t: &SimtTile) -> String {
        let split = if t.ksplit > 1 {
            format!(" ksplit {}", t.ksplit)
        } else {
            String::new()
        };
        format!(
            "simt {}x{}x{} threads {}x{} vw {} group {}{split}",
            t.mwg, t.nwg, t.kwg, t.mdimc, t.ndimc, t.vw, t.group_m
        )
    }
}

/// Output tiles of one product.
fn tiles(t: &SimtTile, p: Problem) -> usize {
    p.m.div_ceil(t.mwg.max(1) as usize) * p.n.div_ceil(t.nwg.max(1) as usize)
}

/// A split launch's workspace ([`super::strip_sum::workspace`]): a tile's `KSPLIT` partial
/// tiles for every tile of every product.
fn workspace(t: &SimtTile, p: Problem) -> Option<Workspace> {
    super::strip_sum::workspace(tiles(t, p) * p.batch.max(1), t.ksplit, t.mwg * t.nwg)
}

fn candidates(space: &TuneSpace) -> Vec<SimtTile> {
    let mut v = Vec::new();
    for mwg in space.pick("block_m", &[16, 32, 64, 128]) {
        for nwg in space.pick("block_n", &[16, 32, 64, 128]) {
            for kwg in space.pick("block_k", &[8, 16, 32]) {
                for mdimc in space.pick("warps_m", &[8, 16, 32]) {
                    for ndimc in space.pick("warps_n", &[8, 16, 32]) {
                        for vw in space.pick("vector", &[1, 2, 4]) {
                            for group_m in space.pick("group_m", &[8]) {
                                v.push(SimtTile {
                                    mwg,
                                    nwg,
                                    kwg,
                                    mdimc,
                                    ndimc,
                                    vw,
                                    group_m,
                                    ksplit: 1,
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

/// The largest tile extent and thread-grid side the rules accept: far above any planned
/// tile, and low enough that no rule's arithmetic overflows.
const MAX_EXTENT: u32 = 1024;

const RULES: [Rule<SimtTile>; 8] = [
    // The generator's invariants that every later rule (and the launch geometry) divides
    // by: no zero extent, VW one of the kernel's load widths, a launch order of >= 1 row.
    // Planned tiles always pass; a config read from disk (an edited cache, a records
    // file) may not.
    Rule {
        name: "extents",
        check: |_, c| {
            let dims = [
                ("mwg", c.mwg),
                ("nwg", c.nwg),
                ("kwg", c.kwg),
                ("mdimc", c.mdimc),
                ("ndimc", c.ndimc),
            ];
            if let Some((n, v)) = dims.iter().find(|(_, v)| !(1..=MAX_EXTENT).contains(v)) {
                Some(format!("{n} = {v} (1..={MAX_EXTENT})"))
            } else if !matches!(c.vw, 1 | 2 | 4 | 8) {
                Some(format!("vw = {} (1, 2, 4 or 8)", c.vw))
            } else if c.group_m == 0 {
                Some("group_m = 0 (at least 1)".to_string())
            } else if !(1..=32).contains(&c.ksplit) {
                Some(format!("ksplit = {} (1..=32)", c.ksplit))
            } else {
                None
            }
        },
    },
    Rule {
        name: "thread_tile",
        check: |_, c| {
            (c.mwg % c.mdimc != 0 || c.nwg % c.ndimc != 0).then(|| {
                format!(
                    "work-group tile {}x{} is not a multiple of {}x{} threads",
                    c.mwg, c.nwg, c.mdimc, c.ndimc
                )
            })
        },
    },
    Rule {
        name: "threads",
        check: |x, c| {
            let t = c.threads();
            (t > x.target.max_threads_per_block || t < x.target.warp_size).then(|| {
                format!(
                    "{t} threads per work-group (need {}..={})",
                    x.target.warp_size, x.target.max_threads_per_block
                )
            })
        },
    },
    Rule {
        name: "smem",
        check: |x, c| {
            let b = c.local_bytes(x.target.backend);
            (b > x.target.smem_per_block).then(|| {
                format!(
                    "local memory {b} B exceeds the {} B per-work-group limit of {}",
                    x.target.smem_per_block, x.target.name
                )
            })
        },
    },
    Rule {
        name: "registers",
        check: |x, c| {
            let r = c.est_regs();
            let per_sm = r as u64 * c.threads() as u64;
            (r > x.target.regs_per_thread.min(128) || per_sm > x.target.regs_per_sm as u64).then(|| {
                format!(
                    "~{r} registers per thread x {} threads exceeds the budget of {}",
                    c.threads(),
                    x.target.name
                )
            })
        },
    },
    Rule {
        name: "vector_alignment",
        check: |x, c| {
            let bytes = c.vw * x.dtype.size();
            (c.kwg % c.vw != 0 || c.mwg % c.vw != 0 || c.nwg % c.vw != 0 || bytes > x.target.max_vector_bytes).then(
                || {
                    format!(
                        "vector width {} does not divide the tile {}x{}x{} or exceeds {} bytes",
                        c.vw, c.mwg, c.nwg, c.kwg, x.target.max_vector_bytes
                    )
                },
            )
        },
    },
    // Each thread loads whole vectors, the same number of them.
    Rule {
        name: "load_balance",
        check: |_, c| {
            let per = c.threads() * c.vw;
            ((c.mwg * c.kwg) % per != 0 || (c.nwg * c.kwg) % per != 0).then(|| {
                format!(
                    "tiles of {} + {} elements do not spread evenly over {} threads x {} lanes",
                    c.mwg * c.kwg,
                    c.nwg * c.kwg,
                    c.threads(),
                    c.vw
                )
            })
        },
    },
    // The transposing stores of a K-contiguous operand into the [k][m] local tile.
    Rule {
        name: "bank_conflicts",
        check: |x, c| {
            let t = x.target;
            if t.smem_banks <= 1 {
                return None;
            }
            let (lda, ldb) = c.local_rows(t.backend);
            let ways = simt_store_conflicts(c, t, x.a_layout == Layout::RowMajor, c.mwg, lda)
                .max(simt_store_conflicts(c, t, x.b_layout == Layout::ColMajor, c.nwg, ldb));
            (ways > 2).then(|| format!("{ways}-way bank conflicts storing a tile into local memory"))
        },
    },
];

/// Worst bank multiplicity of one warp storing its first vector of a tile into the
/// `[KWG][stride]` local array (`mn` floats and the dialect's pad), under the load mapping
/// of the generated kernel: when K is contiguous, consecutive threads take consecutive K
/// vectors and store them transposed, a float at a time; otherwise a thread's VW floats
/// are adjacent, and CUDA's kernel stores them as one vector where VW is 2 or 4 and the
/// rows keep them aligned (`cg_simt_stash`), which the hardware serves in phases of
/// `banks / VW` lanes.
fn simt_store_conflicts(c: &SimtTile, t: &TargetSpec, k_contiguous: bool, mn: u32, stride: u32) -> u32 {
    let vector = t.backend == Backend::Cuda && !k_contiguous && matches!(c.vw, 2 | 4) && stride.is_multiple_of(c.vw);
    let width = if vector { c.vw } else { 1 };
    let phase = (t.smem_banks / width).max(1);
    let lanes = t.warp_size.min(c.threads());
    let mut worst = 1;
    for first in (0..lanes).step_by(phase as usize) {
        let mut per_bank = vec![0u32; t.smem_banks as usize];
        for lane in first..lanes.min(first + phase) {
            let (k, m) = if k_contiguous {
                let kv = c.kwg / c.vw;
                ((lane % kv) * c.vw, lane / kv)
            } else {
                let mv = mn / c.vw;
                (lane / mv, (lane % mv) * c.vw)
            };
            for e in 0..width {
                per_bank[((k * stride + m + e) % t.smem_banks) as usize] += 1;
            }
        }
        worst = worst.max(per_bank.into_iter().max().unwrap_or(1));
    }
    worst
}

fn score(x: &PlanCtx, c: &SimtTile) -> f64 {
    let (bm, bn) = (c.mwg as f64, c.nwg as f64);
    let mut s = bm * bn / (bm + bn);
    let per_thread = (c.mwi() * c.nwi()) as f64;
    // 16-64 outputs per thread hides load latency without spilling.
    s *= if per_thread < 16.0 {
        per_thread / 16.0
    } else if per_thread > 64.0 {
        64.0 / per_thread
    } else {
        1.0
    };
    s *= 1.0 + 0.05 * (c.vw as f64).log2();
    let t = c.threads() as f64;
    s *= if x.target.warp_size >= 32 {
        (t / 256.0).min(1.0)
    } else {
        (64.0 / t).min(1.0)
    };
    if c.local_bytes(x.target.backend) as f64 > SMEM_SOFT_SHARE * x.target.smem_per_block as f64 {
        s *= 0.8;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AccMode;
    use crate::target::{Targets, BUILTIN_TARGETS};

    fn target(name: &str) -> TargetSpec {
        Targets::parse(BUILTIN_TARGETS).unwrap().get(name).unwrap().clone()
    }

    fn tile(mwg: u32, nwg: u32, kwg: u32, mdimc: u32, ndimc: u32, vw: u32) -> SimtTile {
        SimtTile {
            mwg,
            nwg,
            kwg,
            mdimc,
            ndimc,
            vw,
            group_m: 8,
            ksplit: 1,
        }
    }

    /// The bank rule's verdict on `t` for an f32 product with A and B in these layouts.
    fn conflicts(target: &TargetSpec, la: Layout, lb: Layout, t: &SimtTile) -> Option<String> {
        let ir = GemmIr::matmul("s", DType::F32, AccMode::F32, la, lb);
        let cx = PlanCtx::new(target, &ir);
        let rule = RULES.iter().find(|r| r.name == "bank_conflicts").unwrap();
        (rule.check)(&cx, t)
    }

    /// CUDA pads a row of 4 floats where a thread owns runs of 4 (its `CG_LDA`/`CG_LDB`),
    /// OpenCL 1; the shared memory the plan counts follows.
    #[test]
    fn local_rows_follow_each_dialects_pad() {
        let t = tile(128, 64, 16, 16, 32, 4); // 8 rows and 2 columns a thread
        assert_eq!(t.local_rows(Backend::Cuda), (132, 65));
        assert_eq!(t.local_rows(Backend::Opencl), (129, 65));
        assert_eq!(t.local_bytes(Backend::Cuda), 16 * (132 + 65) * 4);
        assert_eq!(Simt.resources(&t, DType::F32).smem_bytes, t.local_bytes(Backend::Cuda));
    }

    /// With CUDA's pad of 4, K-contiguous operands stored transposed from 32-wide k-tiles
    /// put four lanes on a bank (the tunes measured such tiles last), where OpenCL's pad of
    /// 1 spreads them; 16-wide k-tiles stay at 2 in both.
    #[test]
    fn cuda_pad_makes_wide_k_tiles_of_a_k_contiguous_operand_conflict() {
        let (h200, ocl) = (target("h200"), target("nvidia_opencl"));
        let (a_k, b_k) = (Layout::RowMajor, Layout::ColMajor);
        let wide = tile(128, 128, 32, 16, 16, 4);
        let why = conflicts(&h200, a_k, b_k, &wide).expect("4-way on CUDA");
        assert!(why.starts_with("4-way"), "{why}");
        assert_eq!(conflicts(&ocl, a_k, b_k, &wide), None);
        assert_eq!(conflicts(&h200, a_k, b_k, &tile(128, 128, 16, 16, 16, 4)), None);
    }

    /// The splits of K each tile gets: tiles of at most 32 rows 4 or 8 ways on GPUs (4 on
    /// a CPU), taller ones 2 or 4 ways in CUDA only; a user's list replaces them.
    #[test]
    fn splits_of_k_follow_the_tile_height_and_dialect() {
        let ir = GemmIr::matmul("s", DType::F32, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let splits = |name: &str, space: &TuneSpace, short: bool| {
            let t = target(name);
            let mut k: Vec<u32> = Simt
                .space(&PlanCtx::new(&t, &ir), space)
                .iter()
                .filter(|x| (x.mwg <= SHORT_TILE_ROWS) == short)
                .map(|x| x.ksplit)
                .collect();
            k.sort_unstable();
            k.dedup();
            k
        };
        let planned = TuneSpace::default();
        assert_eq!(splits("h200", &planned, true), [1, 4, 8]);
        assert_eq!(splits("h200", &planned, false), [1, 2, 4]);
        assert_eq!(splits("nvidia_opencl", &planned, false), [1]);
        assert_eq!(splits("opencl_cpu", &planned, true), [1, 4]);
        let asked = TuneSpace([("ksplit".to_string(), vec![1, 2])].into_iter().collect());
        assert_eq!(splits("h200", &asked, true), [1, 2]);
        assert_eq!(splits("h200", &asked, false), [1, 2]);
        assert_eq!(splits("nvidia_opencl", &asked, false), [1]);
        let whole = TuneSpace([("ksplit".to_string(), vec![1])].into_iter().collect());
        assert_eq!(splits("h200", &whole, false), [1]);
    }

    /// An N-contiguous B goes to shared memory as one 16-byte store a thread on CUDA, which
    /// the hardware serves eight lanes at a time over contiguous banks: no conflict, where
    /// the same floats stored one at a time, every fourth, would meet four to a bank.
    #[test]
    fn cuda_vector_stores_of_an_n_contiguous_operand_do_not_conflict() {
        let h200 = target("h200");
        let t = tile(128, 64, 16, 16, 16, 4); // a tuned winner of the H100 (session ai)
        assert_eq!(simt_store_conflicts(&t, &h200, false, 64, 68), 1);
        assert_eq!(conflicts(&h200, Layout::RowMajor, Layout::RowMajor, &t), None);
        let mut scalar = h200.clone();
        scalar.backend = Backend::Opencl;
        assert_eq!(simt_store_conflicts(&t, &scalar, false, 64, 68), 4);
    }
}
