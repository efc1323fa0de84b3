//! The planner: the candidate tile space for one target, pruned by named rules written
//! as data (CLBlast's `XgemmSetConstraints` style), ranked, with a report of what each
//! rule removed and why.

use crate::config::{MmaTile, SimtTile, TileConfig, SIMT_LOCAL_PAD};
use crate::ir::{AccMode, DType, GemmIr, Layout};
use crate::swizzle::ldmatrix_conflict_ways;
use crate::target::{Instr, TargetSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most candidates a plan keeps: the seeds' rule of thumb (≤ ~50, 3–4 values per
/// parameter) keeps a full tune short.
pub const MAX_CANDIDATES: usize = 48;

/// Above this share of the opt-in shared memory a config tends to lose occupancy; it is
/// kept but ranked lower.
pub const SMEM_SOFT_SHARE: f64 = 0.70;

/// User restrictions from `tune(..)`: per parameter, the values allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneSpace(pub BTreeMap<String, Vec<u32>>);

/// Parameter names `tune(..)` accepts.
pub const TUNE_KEYS: [&str; 8] = [
    "block_m", "block_n", "block_k", "warps_m", "warps_n", "stages", "group_m", "vector",
];

impl TuneSpace {
    fn pick(&self, key: &str, default: &[u32]) -> Vec<u32> {
        self.0.get(key).cloned().unwrap_or_else(|| default.to_vec())
    }
}

/// What one rule pruned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pruned {
    /// Rule name (e.g. `smem`).
    pub rule: String,
    /// How many candidates it removed (the first failing rule is charged).
    pub count: usize,
    /// The reason for the first one it removed, with numbers.
    pub example: String,
}

/// The planner's result for one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Target name.
    pub target: String,
    /// Instruction family the kernel uses.
    pub instr: Instr,
    /// Better families the chip has that crossgemm does not generate yet.
    pub skipped_instrs: Vec<Instr>,
    /// Surviving configs, best first; `configs[0]` is the default.
    pub configs: Vec<TileConfig>,
    /// Candidates considered before pruning.
    pub considered: usize,
    /// What was pruned, per rule.
    pub pruned: Vec<Pruned>,
}

impl Plan {
    /// The rule that removed the most candidates, for "pruned to nothing" errors.
    pub fn main_killer(&self) -> Option<&Pruned> {
        self.pruned.iter().max_by_key(|p| p.count)
    }
}

/// One pruning rule: a name, and a check returning the reason when the config breaks it.
struct Rule<C> {
    name: &'static str,
    check: fn(&Ctx, &C) -> Option<String>,
}

/// What rules look at besides the config.
struct Ctx<'a> {
    target: &'a TargetSpec,
    dtype: DType,
    a_layout: Layout,
    b_layout: Layout,
}

/// Plans `ir` for `target` under the user's `space`.
pub fn plan_target(ir: &GemmIr, target: &TargetSpec, space: &TuneSpace) -> Plan {
    let (instr, skipped_instrs) = target.select_instr(ir.ab_dtype, ir.acc);
    let ctx = Ctx {
        target,
        dtype: ir.ab_dtype,
        a_layout: ir.a_layout(),
        b_layout: ir.b_layout(),
    };
    let mut report: BTreeMap<&'static str, Pruned> = BTreeMap::new();
    let mut kept: Vec<(f64, TileConfig)> = Vec::new();
    let considered;
    match instr {
        Instr::MmaSync => {
            let cands = mma_candidates(space, ir.acc == AccMode::Tf32);
            considered = cands.len();
            for c in cands {
                if apply(&ctx, &MMA_RULES, &c, &mut report) {
                    kept.push((mma_score(&ctx, &c), TileConfig::Mma(c)));
                }
            }
        }
        _ => {
            let cands = simt_candidates(space);
            considered = cands.len();
            for c in cands {
                if apply(&ctx, &SIMT_RULES, &c, &mut report) {
                    kept.push((simt_score(&ctx, &c), TileConfig::Simt(c)));
                }
            }
        }
    }
    // Stable, deterministic order: score, then the config's text.
    kept.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.to_string().cmp(&b.1.to_string())));
    let passed = kept.len();
    let kept = keep_every_block_tile(kept, MAX_CANDIDATES);
    let dropped = passed - kept.len();
    if dropped > 0 {
        report.insert(
            "top_k",
            Pruned {
                rule: "top_k".into(),
                count: dropped,
                example: format!("only {MAX_CANDIDATES} are kept: the best of each block tile, then the best-ranked"),
            },
        );
    }
    Plan {
        target: target.name.clone(),
        instr,
        skipped_instrs,
        configs: kept.into_iter().map(|(_, c)| c).collect(),
        considered,
        pruned: report.into_values().collect(),
    }
}

/// The `max` configs a plan keeps from `ranked` (best first): the best config of every
/// block tile (block_m x block_n) that survived the rules, then the rest by rank, in rank
/// order. The score favours large tiles, which is right for large problems; a small or
/// skinny one leaves most multiprocessors idle with them (1024x1024 in 128x128 tiles is
/// 64 blocks for 132 SMs), and the tuner can only pick a small tile the plan kept.
/// `ranked[0]`, the default config, stays first.
fn keep_every_block_tile(ranked: Vec<(f64, TileConfig)>, max: usize) -> Vec<(f64, TileConfig)> {
    let mut tiles = std::collections::HashSet::new();
    let mut keep = vec![false; ranked.len()];
    let mut n = 0;
    for (i, (_, c)) in ranked.iter().enumerate() {
        if n < max && tiles.insert(c.block_mn()) {
            keep[i] = true;
            n += 1;
        }
    }
    for k in keep.iter_mut() {
        if n == max {
            break;
        }
        if !*k {
            *k = true;
            n += 1;
        }
    }
    ranked
        .into_iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(c))
        .collect()
}

fn apply<C>(ctx: &Ctx, rules: &[Rule<C>], c: &C, report: &mut BTreeMap<&'static str, Pruned>) -> bool {
    for r in rules {
        if let Some(why) = (r.check)(ctx, c) {
            report
                .entry(r.name)
                .or_insert_with(|| Pruned {
                    rule: r.name.into(),
                    count: 0,
                    example: why,
                })
                .count += 1;
            return false;
        }
    }
    true
}

fn mma_candidates(space: &TuneSpace, tf32: bool) -> Vec<MmaTile> {
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

fn simt_candidates(space: &TuneSpace) -> Vec<SimtTile> {
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
const MMA_RULES: [Rule<MmaTile>; 9] =
    [
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
                let r = c.est_regs(x.dtype);
                (r > x.target.regs_per_thread || r * c.threads() > x.target.regs_per_sm).then(|| {
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
            check: |_, c| {
                let acc = c.warp_m() * c.warp_n() / 32;
                (acc > 128).then(|| format!("{acc} f32 accumulators per thread (> 128 spills)"))
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

const SIMT_RULES: [Rule<SimtTile>; 7] = [
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
            let b = c.local_bytes();
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
            (r > x.target.regs_per_thread.min(128) || r * c.threads() > x.target.regs_per_sm).then(|| {
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
            let ways = simt_store_conflicts(c, t.warp_size, t.smem_banks, x.a_layout == Layout::RowMajor, c.mwg).max(
                simt_store_conflicts(c, t.warp_size, t.smem_banks, x.b_layout == Layout::ColMajor, c.nwg),
            );
            (ways > 2).then(|| format!("{ways}-way bank conflicts storing a tile into local memory"))
        },
    },
];

/// Worst bank multiplicity of one warp storing its first vector of a tile into the
/// `[KWG][mn + pad]` local array, under the load mapping of the generated kernel: when
/// K is contiguous, consecutive threads take consecutive K vectors.
fn simt_store_conflicts(c: &SimtTile, warp: u32, banks: u32, k_contiguous: bool, mn: u32) -> u32 {
    let stride = mn + SIMT_LOCAL_PAD;
    let mut per_bank = vec![0u32; banks as usize];
    for lane in 0..warp.min(c.threads()) {
        let (k, m) = if k_contiguous {
            let kv = c.kwg / c.vw;
            ((lane % kv) * c.vw, lane / kv)
        } else {
            let mv = mn / c.vw;
            (lane / mv, (lane % mv) * c.vw)
        };
        per_bank[((k * stride + m) % banks) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(1)
}

/// Higher is better: arithmetic intensity of the block tile, scaled down when the
/// block cannot keep enough MMAs in flight, and when shared memory passes the soft share.
fn mma_score(x: &Ctx, c: &MmaTile) -> f64 {
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

fn simt_score(x: &Ctx, c: &SimtTile) -> f64 {
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
    if c.local_bytes() as f64 > SMEM_SOFT_SHARE * x.target.smem_per_block as f64 {
        s *= 0.8;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{Targets, BUILTIN_TARGETS};

    #[test]
    fn every_block_tile_keeps_its_best_config() {
        let tile = |bm: u32, bn: u32, stages: u32| {
            TileConfig::Mma(MmaTile {
                block_m: bm,
                block_n: bn,
                block_k: 64,
                warps_m: 2,
                warps_n: 2,
                stages,
                group_m: 8,
            })
        };
        // Ranked best first: four large tiles, then two small ones.
        let ranked: Vec<(f64, TileConfig)> = [
            (9.0, tile(128, 128, 2)),
            (8.0, tile(128, 128, 3)),
            (7.0, tile(128, 128, 4)),
            (6.0, tile(128, 64, 2)),
            (5.0, tile(64, 64, 2)),
            (4.0, tile(64, 64, 3)),
        ]
        .into();
        let kept: Vec<TileConfig> = keep_every_block_tile(ranked.clone(), 4)
            .into_iter()
            .map(|x| x.1)
            .collect();
        // The best of each of the three tiles, then the next best overall; rank order.
        assert_eq!(
            kept,
            [tile(128, 128, 2), tile(128, 128, 3), tile(128, 64, 2), tile(64, 64, 2)]
        );
        // Room for everything: nothing is dropped or reordered.
        assert_eq!(keep_every_block_tile(ranked.clone(), 10), ranked);
        // Fewer slots than tiles: the best-ranked tiles win.
        let two: Vec<TileConfig> = keep_every_block_tile(ranked, 2).into_iter().map(|x| x.1).collect();
        assert_eq!(two, [tile(128, 128, 2), tile(128, 64, 2)]);
    }

    fn ir(dtype: DType, acc: AccMode) -> GemmIr {
        GemmIr::matmul("t", dtype, acc, Layout::RowMajor, Layout::ColMajor)
    }

    #[test]
    fn every_builtin_target_plans_every_dtype() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        for spec in t.iter() {
            for (d, acc) in [
                (DType::F16, AccMode::F32),
                (DType::Bf16, AccMode::F32),
                (DType::F32, AccMode::F32),
                (DType::F32, AccMode::Tf32),
            ] {
                let p = plan_target(&ir(d, acc), spec, &TuneSpace::default());
                assert!(!p.configs.is_empty(), "{} {d:?}: {:?}", spec.name, p.pruned);
                assert!(p.configs.len() <= MAX_CANDIDATES);
                for c in &p.configs {
                    assert!(c.smem_bytes(d) <= spec.smem_per_block_optin);
                }
            }
        }
    }

    #[test]
    fn h200_default_is_a_large_tensor_core_tile() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let p = plan_target(
            &ir(DType::F16, AccMode::F32),
            t.get("h200").unwrap(),
            &TuneSpace::default(),
        );
        assert_eq!(p.instr, Instr::MmaSync);
        let TileConfig::Mma(c) = p.configs[0] else { panic!() };
        assert!(c.block_m * c.block_n >= 128 * 128, "{c:?}");
    }

    #[test]
    fn smem_rule_names_the_limit() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let mut space = TuneSpace::default();
        space.0.insert("block_m".into(), vec![256]);
        space.0.insert("block_n".into(), vec![256]);
        space.0.insert("block_k".into(), vec![64]);
        space.0.insert("stages".into(), vec![5]);
        space.0.insert("warps_m".into(), vec![4]);
        space.0.insert("warps_n".into(), vec![2]);
        let p = plan_target(&ir(DType::F16, AccMode::F32), t.get("a100").unwrap(), &space);
        assert!(p.configs.is_empty());
        let k = p.main_killer().unwrap();
        assert_eq!(k.rule, "smem");
        assert!(k.example.contains("166912"), "{}", k.example);
    }

    #[test]
    fn plans_are_deterministic() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let a = plan_target(
            &ir(DType::Bf16, AccMode::F32),
            t.get("h200").unwrap(),
            &TuneSpace::default(),
        );
        let b = plan_target(
            &ir(DType::Bf16, AccMode::F32),
            t.get("h200").unwrap(),
            &TuneSpace::default(),
        );
        assert_eq!(a, b);
    }
}
