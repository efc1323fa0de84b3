//! The planner: for one target, the kernel families that serve the kernel, each family's
//! candidate tiles pruned by its named rules (data, in the family's file), ranked by its
//! score, with a report of what each rule removed and why.

pub use crate::space::{check_tune_value, Pruned, TuneSpace, SMEM_SOFT_SHARE, TUNE_KEYS};

use crate::family::{FamilyId, PlanCtx, TileConfig};
use crate::ir::GemmIr;
use crate::target::Backend;
use crate::target::{Instr, InstrType, TargetSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most candidates a plan keeps besides what families ask for beyond it
/// ([`plan_extra`](crate::family::KernelFamily::plan_extra)): the seeds' rule of thumb
/// (≤ ~50, 3–4 values per parameter) keeps a full tune short.
pub const MAX_CANDIDATES: usize = 48;

/// The planner's result for one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Target name.
    pub target: String,
    /// The kernel families of the plan, best first: the preferred one, then fallbacks up to
    /// the first that can run every call (one source is generated per family).
    pub families: Vec<FamilyId>,
    /// Matrix instructions of the chip that take the kernel's operand type but that no
    /// kernel family generates for this kernel (e.g. wgmma for tf32 operands).
    pub skipped_instrs: Vec<Instr>,
    /// Surviving configs, per family best first, families in plan order; the first one
    /// that can run a call is that call's default. Each config's variant
    /// names its family.
    pub configs: Vec<TileConfig>,
    /// Candidates considered before pruning.
    pub considered: usize,
    /// What was pruned, per rule (rules of every family of the plan).
    pub pruned: Vec<Pruned>,
}

impl Plan {
    /// The rule that removed the most candidates, for "pruned to nothing" errors.
    pub fn main_killer(&self) -> Option<&Pruned> {
        self.pruned.iter().max_by_key(|p| p.count)
    }
    /// The preferred family (the first of [`Plan::families`]).
    pub fn primary(&self) -> Option<FamilyId> {
        self.families.first().copied()
    }
    /// The kernel sources the plan needs: one per family, in its order (what the macro
    /// embeds for `ir` on a `backend` target).
    pub fn sources(&self, ir: &GemmIr, backend: Backend) -> Vec<(FamilyId, String)> {
        self.families
            .iter()
            .map(|&f| (f, f.emit(ir, backend, crate::codegen::Variant::Full)))
            .collect()
    }
}

/// The families that serve `ir` on `target`, best first (shape specialists, then by the
/// target's instruction order, then registry order), up to and including the first
/// complete one.
pub fn families_for(ir: &GemmIr, target: &TargetSpec) -> Vec<FamilyId> {
    let mut serving: Vec<FamilyId> = FamilyId::ALL
        .iter()
        .copied()
        .filter(|f| f.family().serves(target, ir).is_ok())
        .collect();
    serving.sort_by_key(|f| f.family().preference(target));
    if let Some(i) = serving.iter().position(|f| f.family().complete()) {
        serving.truncate(i + 1);
    }
    serving
}

/// Plans `ir` for `target` under the user's `space`.
pub fn plan_target(ir: &GemmIr, target: &TargetSpec, space: &TuneSpace) -> Plan {
    let families = families_for(ir, target);
    let ty = InstrType::of(ir.ab_dtype, ir.acc);
    let generated: Vec<Instr> = FamilyId::ALL
        .iter()
        .filter(|f| f.family().serves(target, ir).is_ok())
        .map(|f| f.family().instr())
        .collect();
    let skipped_instrs = target
        .instructions
        .iter()
        .map(|s| s.name)
        .filter(|&i| i != Instr::Fma && target.offers(i, ty) && !generated.contains(&i))
        .collect();
    let cx = PlanCtx::new(target, ir);
    let mut report: BTreeMap<&'static str, Pruned> = BTreeMap::new();
    let mut considered = 0;
    let mut configs = Vec::new();
    let mut dropped = 0;
    for (i, f) in families.iter().enumerate() {
        let (n, mut kept) = f.family().plan(&cx, space, &mut report);
        considered += n;
        // Stable, deterministic order: score, then the config's text.
        kept.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.to_string().cmp(&b.1.to_string())));
        let passed = kept.len();
        let kept = keep_every_block_tile(kept, budget(&cx, &families, space, i));
        dropped += passed - kept.len();
        configs.extend(kept.into_iter().map(|(_, c)| c));
    }
    if dropped > 0 {
        report.insert(
            "top_k",
            Pruned {
                rule: "top_k".into(),
                count: dropped,
                example: format!(
                    "only {} are kept: per family the best of each block tile, then the best-ranked",
                    total_budget(&cx, &families, space)
                ),
            },
        );
    }
    Plan {
        target: target.name.clone(),
        families,
        skipped_instrs,
        configs,
        considered,
        pruned: report.into_values().collect(),
    }
}

/// The most configs a plan of `families` keeps: [`MAX_CANDIDATES`] and each family's
/// [`plan_extra`](crate::family::KernelFamily::plan_extra).
pub fn total_budget(cx: &PlanCtx, families: &[FamilyId], space: &TuneSpace) -> usize {
    MAX_CANDIDATES + families.iter().map(|f| f.family().plan_extra(cx, space)).sum::<usize>()
}

/// What family `i` of `families` may keep: its share of [`MAX_CANDIDATES`], in proportion
/// to the families' [`plan_share`](crate::family::KernelFamily::plan_share) (the remainder
/// to the first family with a share), plus its own `plan_extra`.
fn budget(cx: &PlanCtx, families: &[FamilyId], space: &TuneSpace, i: usize) -> usize {
    let shares: Vec<usize> = families.iter().map(|f| f.family().plan_share(cx)).collect();
    let total: usize = shares.iter().sum();
    let each = |s: usize| (MAX_CANDIDATES * s).checked_div(total).unwrap_or(0);
    let rest = MAX_CANDIDATES - shares.iter().map(|&s| each(s)).sum::<usize>();
    let first = shares.iter().position(|&s| s > 0);
    each(shares[i]) + if first == Some(i) { rest } else { 0 } + families[i].family().plan_extra(cx, space)
}

/// The `max` configs a plan keeps from `ranked` (best first): the best config of every
/// block tile (block_m x block_n, and its family's plan class: the split of K, ...) that
/// survived the rules, then the rest by rank, in rank order. The score favours large
/// tiles, which is right for large problems; a small or skinny one leaves most
/// multiprocessors idle with them (1024x1024 in 128x128 tiles is 64 blocks for 132 SMs),
/// and the tuner can only pick a small tile the plan kept.
/// `ranked[0]`, the default config, stays first.
fn keep_every_block_tile(ranked: Vec<(f64, TileConfig)>, max: usize) -> Vec<(f64, TileConfig)> {
    let mut tiles = std::collections::HashSet::new();
    let mut keep = vec![false; ranked.len()];
    let mut n = 0;
    for (i, (_, c)) in ranked.iter().enumerate() {
        if n < max && tiles.insert((c.block_mn(), c.family().plan_class(c))) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::MmaTile;
    use crate::ir::{AccMode, DType, Layout};
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
                let g = ir(d, acc);
                let p = plan_target(&g, spec, &TuneSpace::default());
                assert!(!p.configs.is_empty(), "{} {d:?}: {:?}", spec.name, p.pruned);
                let cx = PlanCtx::new(spec, &g);
                assert!(p.configs.len() <= total_budget(&cx, &p.families, &TuneSpace::default()));
                for c in &p.configs {
                    assert!(c.smem_bytes(d) <= spec.smem_per_block_optin);
                }
            }
        }
    }

    #[test]
    fn h200_default_is_a_large_tensor_core_tile() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let g = ir(DType::F16, AccMode::F32);
        let h200 = t.get("h200").unwrap();
        let p = plan_target(&g, h200, &TuneSpace::default());
        // The decode-size specialists first (they take calls of at most 8 and 32 rows),
        // then the tensor-core families.
        assert_eq!(
            p.families,
            [FamilyId::Decode, FamilyId::Gemv, FamilyId::Wgmma, FamilyId::MmaSync]
        );
        assert!(p.skipped_instrs.is_empty());
        let Some(TileConfig::Wgmma(c)) = p
            .configs
            .iter()
            .find(|c| !matches!(c.family_id(), FamilyId::Decode | FamilyId::Gemv))
        else {
            panic!("{:?}", p.configs)
        };
        assert!(c.bm * c.bn >= 128 * 128, "{c:?}");
        // Both families keep candidates: mma.sync runs what TMA cannot.
        assert!(p.configs.iter().any(|c| c.family_id() == FamilyId::MmaSync));
        let cx = PlanCtx::new(h200, &g);
        assert!(p.configs.len() <= total_budget(&cx, &p.families, &TuneSpace::default()));
    }

    /// `tune(streamk = 1)` adds the stream-K variants (the best of each of their block
    /// tiles at least) and takes no config away from the plan: the wgmma family makes
    /// room for them.
    #[test]
    fn asking_for_streamk_adds_configs_and_takes_none_away() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = t.get("h200").unwrap();
        let mut sk = TuneSpace::default();
        sk.0.insert("streamk".into(), vec![1]);
        // tf32 too: the room is counted from the space and the rules, not a constant
        // read off the 16-bit plans.
        for (dt, acc) in [
            (DType::F16, AccMode::F32),
            (DType::Bf16, AccMode::F32),
            (DType::F32, AccMode::Tf32),
        ] {
            for (la, lb) in [
                (Layout::RowMajor, Layout::ColMajor),
                (Layout::ColMajor, Layout::RowMajor),
            ] {
                let ir = GemmIr::matmul("t", dt, acc, la, lb);
                let plain = plan_target(&ir, h200, &TuneSpace::default());
                // wgmma takes tf32 K-major only.
                if !plain.families.contains(&FamilyId::Wgmma) {
                    assert!(dt == DType::F32 && la == Layout::ColMajor, "{dt:?} {la:?}/{lb:?}");
                    continue;
                }
                let with = plan_target(&ir, h200, &sk);
                let lost: Vec<String> = plain
                    .configs
                    .iter()
                    .filter(|c| !with.configs.contains(c))
                    .map(|c| c.to_string())
                    .collect();
                assert!(lost.is_empty(), "{dt:?} {la:?}/{lb:?}: streamk = 1 dropped {lost:?}");
                let cx = PlanCtx::new(h200, &ir);
                let mut report = Default::default();
                let (_, kept) = FamilyId::Wgmma.family().plan(&cx, &sk, &mut report);
                let class = |c: &TileConfig| (c.block_mn(), c.family().plan_class(c));
                let streamk: std::collections::HashSet<_> = kept
                    .iter()
                    .filter(|(_, c)| matches!(c, TileConfig::Wgmma(w) if w.streamk))
                    .map(|(_, c)| class(c))
                    .collect();
                assert!(!streamk.is_empty());
                assert_eq!(
                    FamilyId::Wgmma.family().plan_extra(&cx, &sk)
                        - FamilyId::Wgmma.family().plan_extra(&cx, &TuneSpace::default()),
                    streamk.len(),
                    "{dt:?} {la:?}/{lb:?}"
                );
                for k in &streamk {
                    assert!(
                        with.configs.iter().any(|c| class(c) == *k),
                        "{dt:?} {la:?}/{lb:?}: {k:?}"
                    );
                }
            }
        }
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
    fn families_follow_the_targets_instruction_order() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = t.get("h200").unwrap();
        let cpu = t.get("opencl_cpu").unwrap();
        assert_eq!(
            families_for(&ir(DType::F16, AccMode::F32), h200),
            [FamilyId::Decode, FamilyId::Gemv, FamilyId::Wgmma, FamilyId::MmaSync]
        );
        // A row-major B is not K-contiguous: decode and gemv only turned around (they
        // stream A's K-contiguous rows, for N <= 32 and 8, and read B across), decode_n
        // takes B's rows through shared memory and gemv_n streams them; with A
        // column-major as well, no gemv, no decode and no decode_n, and gemv_n in both
        // forms.
        let rr = GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        assert_eq!(
            families_for(&rr, h200),
            [
                FamilyId::Decode,
                FamilyId::Gemv,
                FamilyId::DecodeN,
                FamilyId::GemvN,
                FamilyId::Wgmma,
                FamilyId::MmaSync
            ]
        );
        let cr = GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::ColMajor, Layout::RowMajor);
        assert_eq!(
            families_for(&cr, h200),
            [FamilyId::GemvN, FamilyId::Wgmma, FamilyId::MmaSync]
        );
        // K-major tf32 runs on wgmma, and decode (m16n8k8) takes its few rows; an N-major
        // B has no tf32 wgmma (no transpose), and the family is reported as skipped;
        // decode_n (m16n8k8 too) takes its few rows.
        assert_eq!(
            families_for(&ir(DType::F32, AccMode::Tf32), h200),
            [FamilyId::Decode, FamilyId::Gemv, FamilyId::Wgmma, FamilyId::MmaSync]
        );
        let tf32_rr = GemmIr::matmul("t", DType::F32, AccMode::Tf32, Layout::RowMajor, Layout::RowMajor);
        assert_eq!(
            families_for(&tf32_rr, h200),
            [
                FamilyId::Decode,
                FamilyId::Gemv,
                FamilyId::DecodeN,
                FamilyId::GemvN,
                FamilyId::MmaSync
            ]
        );
        let tf32 = plan_target(&tf32_rr, h200, &TuneSpace::default());
        assert_eq!(tf32.skipped_instrs, [Instr::Wgmma]);
        let a100 = t.get("a100").unwrap();
        assert_eq!(
            families_for(&ir(DType::F16, AccMode::F32), a100),
            [FamilyId::Decode, FamilyId::Gemv, FamilyId::MmaSync]
        );
        // Full f32 has no tensor-core instruction: rounding to tf32 would change the answer.
        assert_eq!(
            families_for(&ir(DType::F32, AccMode::F32), h200),
            [FamilyId::Gemv, FamilyId::Simt]
        );
        // OpenCL has a gemv form too.
        assert_eq!(
            families_for(&ir(DType::F16, AccMode::F32), cpu),
            [FamilyId::Gemv, FamilyId::Simt]
        );
        let p = plan_target(&ir(DType::F32, AccMode::F32), h200, &TuneSpace::default());
        assert!(p
            .configs
            .iter()
            .all(|c| matches!(c.family_id(), FamilyId::Simt | FamilyId::Gemv)));
        assert!(p.skipped_instrs.is_empty(), "no instruction of h200 takes full f32");
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
