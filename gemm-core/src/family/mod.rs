//! Kernel families: everything specific to one way of computing a GEMM, behind one trait.
//!
//! A family (warp-level `mma.sync`, scalar FMA, ...) owns
//! - whether it serves a (target, kernel) pair ([`KernelFamily::serves`]) and whether one
//!   of its configs can run a given call ([`KernelFamily::accepts`]);
//! - its tile space, its pruning rules (data, each with its rationale) and its score, which
//!   the planner ([`crate::plan`]) runs;
//! - a config's host contract: [`Resources`], [`LaunchDims`], `-D` defines and
//!   [`CompileNeeds`];
//! - its source for a backend and a diagnosis [`Variant`];
//! - a config's neighbours, for `crossgemm diagnose`.
//!
//! The plan records which family each candidate belongs to (the [`TileConfig`] variant), and
//! codegen, the runtime, the tuner and diagnose ask that family instead of deciding again.
//!
//! **Adding a family** is one file (or folder) beside `mma_sync/` and `simt/` implementing
//! [`KernelFamily`] for a tile type of its own, one line in the `registry!` invocation at the
//! bottom of this file, and its snapshot cases in `tests/snapshots.rs`.

mod config_json;
mod contract;
mod decode;
mod decode_n;
mod gemv;
mod gemv_n;
mod mma_sync;
pub(crate) mod shape_flags;
mod simt;
mod strip_sum;
mod turned;
pub mod wgmma;

pub use contract::{CompileNeeds, LaunchDims, Machine, Problem, Resources, Stored, TensorMap, Workspace, OUT_PARAM};
pub use decode::{Decode, DecodeTile};
pub use decode_n::{DecodeN, DecodeNTile};
pub use gemv::{Gemv, GemvTile};
pub use gemv_n::{GemvN, GemvNTile};
pub use mma_sync::{MmaSync, MmaTile};
pub use simt::{simt_local_pad, Simt, SimtTile};
pub use strip_sum::{sum_pass, SUM_KERNEL_SUFFIX};
pub use wgmma::{Wgmma, WgmmaTile};

use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::space::{Pruned, TuneSpace};
use crate::target::{Backend, Instr, TargetSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hash;

/// What the planner's rules and scores look at besides the config itself.
#[derive(Clone, Copy, Debug)]
pub struct PlanCtx<'a> {
    /// The chip being planned for.
    pub target: &'a TargetSpec,
    /// The kernel.
    pub ir: &'a GemmIr,
    /// Operand element type (A and B).
    pub dtype: DType,
    /// A as the kernel reads it (after `.t()`).
    pub a_layout: Layout,
    /// B as the kernel reads it (after `.t()`).
    pub b_layout: Layout,
}

impl<'a> PlanCtx<'a> {
    /// The context for planning `ir` on `target`.
    pub fn new(target: &'a TargetSpec, ir: &'a GemmIr) -> Self {
        PlanCtx {
            target,
            ir,
            dtype: ir.ab_dtype,
            a_layout: ir.a_layout(),
            b_layout: ir.b_layout(),
        }
    }
}

/// One pruning rule of a family: a name (reported), and a check that returns the reason,
/// with numbers, when a config breaks it.
pub struct Rule<T> {
    /// Name in the pruning report, e.g. `smem`.
    pub name: &'static str,
    /// `Some(why)` when `tile` breaks the rule.
    pub check: fn(&PlanCtx, &T) -> Option<String>,
}

/// The tile type of one family: a plain value that the registry wraps into [`TileConfig`].
pub trait Tile: Copy + fmt::Debug + Eq + Hash + Send + Sync + 'static {
    /// This tile as a [`TileConfig`].
    fn into_config(self) -> TileConfig;
    /// The tile inside `c`, when `c` is of this family.
    fn from_config(c: &TileConfig) -> Option<&Self>;
}

/// What a kernel family implements, typed over its own tile. The planner and the runtime
/// use it through [`DynFamily`] (implemented for every `KernelFamily`).
pub trait KernelFamily: Sync + 'static {
    /// The family's configuration type.
    type Tile: Tile;

    /// The family's name, as in [`FamilyId::name`].
    const ID: FamilyId;

    /// The matrix instruction (a targets.toml `instructions` entry) the family computes
    /// with; its position in the target's list orders the families of a plan.
    fn instr(&self) -> Instr;

    /// `Err(why)` when the family cannot generate `ir` for `target` (wrong backend,
    /// operand type the instruction does not take, a layout it does not handle).
    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String>;

    /// Whether its loads draw the memory bandwidth at the chip's full rate whatever its
    /// instruction's share of the compute peak (16-byte loads of every operand straight
    /// into registers, many in flight): what [`crate::estimate`] assumes for it. By
    /// default the instruction's share scales both.
    fn streams(&self) -> bool {
        false
    }

    /// Where the family goes in a plan, smallest first: by default after the shape
    /// specialists (`0`), in the order of the target's instruction list. A specialist (a
    /// family for some shapes only, e.g. decode-size M) returns `(0, _)` so that the calls
    /// it accepts get it by default.
    fn preference(&self, target: &TargetSpec) -> (u8, usize) {
        (1, target.instr_rank(self.instr()))
    }

    /// Its weight in the plan's candidate budget for `cx` (the families of a plan share
    /// [`crate::plan::MAX_CANDIDATES`] in proportion); 0 for a family that keeps only its
    /// [`plan_extra`](KernelFamily::plan_extra), beside the others' budget.
    fn plan_share(&self, cx: &PlanCtx) -> usize {
        let _ = cx;
        3
    }

    /// Configs it keeps beyond its share under the user's `space` (none by default): room
    /// for variants that are plan classes of their own ([`KernelFamily::plan_class`]),
    /// so that they do not crowd out the stage and cluster variants of its block tiles.
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        let _ = (cx, space);
        0
    }

    /// Whether its configs can run every call of a kernel it serves. A plan takes families
    /// best first up to the first complete one, so that some config runs every call.
    fn complete(&self) -> bool {
        true
    }

    /// `Err(why)` when `tile` cannot run this particular call (alignment, extents); the
    /// runtime then routes the call to another family of the plan.
    fn accepts(&self, tile: &Self::Tile, ir: &GemmIr, problem: Problem) -> Result<(), String> {
        let _ = (tile, ir, problem);
        Ok(())
    }

    /// The candidate tiles before pruning, under the user's `tune(..)` restrictions.
    fn space(&self, cx: &PlanCtx, space: &TuneSpace) -> Vec<Self::Tile>;

    /// The pruning rules, checked in order; the first that fails is charged.
    fn rules(&self) -> &'static [Rule<Self::Tile>];

    /// Higher is better; the planner ranks surviving tiles by it.
    fn score(&self, cx: &PlanCtx, tile: &Self::Tile) -> f64;

    /// Threads, shared memory and registers of one block.
    fn resources(&self, tile: &Self::Tile, dtype: DType) -> Resources;

    /// Rows and columns of C one block computes.
    fn block_mn(&self, tile: &Self::Tile) -> (u32, u32);

    /// Whether a launch of `tile` shares the last wave's work out over every block
    /// (stream-K), so that the time goes with the work rather than with whole waves: what
    /// [`crate::estimate`] assumes for it. No by default.
    fn balances_waves(&self, tile: &Self::Tile) -> bool {
        let _ = tile;
        false
    }

    /// Whether `tile` computes `Cᵀ = Bᵀ · Aᵀ` on the call's buffers (the turned-around
    /// form, as the `turned` module generates it): what a diagnosis or a test tells a config's form by. No by
    /// default.
    fn turned(&self, tile: &Self::Tile) -> bool {
        let _ = tile;
        false
    }

    /// What [`crate::estimate`] multiplies its roofline time of `tile` for `ir` at `p` by:
    /// what the roofline does not see and a measurement showed (1 by default).
    fn estimate_factor(&self, tile: &Self::Tile, ir: &GemmIr, p: Problem) -> f64 {
        let _ = (tile, ir, p);
        1.0
    }

    /// The variant of `tile` for the rows of a call of `ir` at `p`, where `tile` was
    /// chosen without regard to them (a winner measured at another row class, or the
    /// planner's first): `None` (the default) where `tile` suits them as it is. See
    /// [`crate::estimate::for_rows`].
    fn for_rows(&self, tile: &Self::Tile, ir: &GemmIr, p: Problem) -> Option<Self::Tile> {
        let _ = (tile, ir, p);
        None
    }

    /// Global-memory round trips one block of `tile` makes one after another at `p`: the
    /// steps over K whose loads its pipeline cannot have in flight together. A family with
    /// a ring of several stages overlaps them (0, the default); one that fetches a single
    /// tile ahead waits on every step of a long K, which [`crate::estimate::default_pick`]
    /// weighs when it chooses between such a tile and its K-split twins.
    fn serial_loads(&self, tile: &Self::Tile, p: Problem) -> f64 {
        let _ = (tile, p);
        0.0
    }

    /// Blocks that share one output tile, each over its part of K (split-K); 1 by default.
    fn k_split(&self, tile: &Self::Tile) -> u32 {
        let _ = tile;
        1
    }

    /// Blocks of one thread block cluster (launched and resident together), which the
    /// estimate counts waves by ([`crate::target::TargetSpec::resident_clusters`]); 1 by
    /// default.
    fn cluster_blocks(&self, tile: &Self::Tile) -> u32 {
        let _ = tile;
        1
    }

    /// What sets apart configs of one block tile that the plan keeps separately (each
    /// gets a slot of its own in the plan, like a block tile): by default the split of K
    /// and nothing else.
    fn plan_class(&self, tile: &Self::Tile) -> (u32, u32) {
        (self.k_split(tile), 0)
    }

    /// Device scratch memory a launch of `tile` at `problem` on `machine` needs (none by
    /// default). A launch for a smaller machine (a check on a small grid) needs no more.
    fn workspace(&self, tile: &Self::Tile, ir: &GemmIr, problem: Problem, machine: Machine) -> Option<Workspace> {
        let _ = (tile, ir, problem, machine);
        None
    }

    /// The launch geometry of one call on `machine`.
    fn launch(&self, tile: &Self::Tile, ir: &GemmIr, problem: Problem, machine: Machine) -> LaunchDims;

    /// The tensor maps the kernel takes before its ABI arguments, in order (none by
    /// default).
    fn tensor_maps(&self, tile: &Self::Tile, ir: &GemmIr, problem: Problem) -> Vec<TensorMap> {
        let _ = (tile, ir, problem);
        Vec::new()
    }

    /// The `-D` constants a compile of the family's source takes for `tile` and this call
    /// (tile parameters, and flags derived from the shape, such as alignment).
    fn defines(&self, tile: &Self::Tile, ir: &GemmIr, backend: Backend, problem: Problem) -> Vec<(&'static str, u32)>;

    /// What a compile needs beyond the source and its defines.
    fn compile_needs(&self, tile: &Self::Tile) -> CompileNeeds {
        let _ = tile;
        CompileNeeds::default()
    }

    /// The family's source of `ir` for `backend`, one source for every tile (the tile
    /// parameters are preprocessor constants). [`Variant::Full`] is the real kernel.
    fn emit(&self, ir: &GemmIr, backend: Backend, variant: Variant) -> String;

    /// Configs one step away from `tile` in the dimensions `diagnose` explores (pipeline
    /// depth, thread grid, vector width), each with what changed, e.g. `stages 3`.
    fn neighbours(&self, tile: &Self::Tile) -> Vec<(String, Self::Tile)>;

    /// The launch-order group height of `tile` (blocks sharing rows of A run together).
    fn group_m(&self, tile: &Self::Tile) -> u32;

    /// `tile` with another launch-order group height.
    fn with_group_m(&self, tile: &Self::Tile, group_m: u32) -> Self::Tile;

    /// One line naming the config, e.g. `mma 128x256x64 warps 2x4 stages 3 group 8`.
    fn describe(&self, tile: &Self::Tile) -> String;
}

/// A family seen through [`TileConfig`]s: what the planner, codegen and the runtime call.
/// Every [`KernelFamily`] is one; a config given to a family of another kind is a bug of
/// the caller and answers with a panic naming both.
pub trait DynFamily: Sync {
    /// The family's name.
    fn id(&self) -> FamilyId;
    /// See [`KernelFamily::instr`].
    fn instr(&self) -> Instr;
    /// See [`KernelFamily::serves`].
    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String>;
    /// See [`KernelFamily::complete`].
    fn complete(&self) -> bool;
    /// See [`KernelFamily::streams`].
    fn streams(&self) -> bool;
    /// See [`KernelFamily::preference`].
    fn preference(&self, target: &TargetSpec) -> (u8, usize);
    /// See [`KernelFamily::plan_share`].
    fn plan_share(&self, cx: &PlanCtx) -> usize;
    /// See [`KernelFamily::plan_extra`].
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize;
    /// The family's candidates for `cx` that pass every rule, each with its score; what
    /// the rules removed is counted into `report`. Returns also how many were considered.
    fn plan(
        &self,
        cx: &PlanCtx,
        space: &TuneSpace,
        report: &mut BTreeMap<&'static str, Pruned>,
    ) -> (usize, Vec<(f64, TileConfig)>);
    /// Runs the family's [`rules`](KernelFamily::rules) on `c`, in order, exactly as
    /// [`DynFamily::plan`] does: `Err((rule name, why))` for the first one it breaks. A
    /// config of another family breaks the rule `family`. The runtime checks every config
    /// that comes from disk (tuning cache, records) with it before launching one.
    fn check(&self, cx: &PlanCtx, c: &TileConfig) -> Result<(), (&'static str, String)>;
    /// See [`KernelFamily::emit`].
    fn emit(&self, ir: &GemmIr, backend: Backend, variant: Variant) -> String;
    /// See [`KernelFamily::accepts`].
    fn accepts(&self, c: &TileConfig, ir: &GemmIr, problem: Problem) -> Result<(), String>;
    /// See [`KernelFamily::resources`].
    fn resources(&self, c: &TileConfig, dtype: DType) -> Resources;
    /// See [`KernelFamily::block_mn`].
    fn block_mn(&self, c: &TileConfig) -> (u32, u32);
    /// See [`KernelFamily::k_split`].
    fn k_split(&self, c: &TileConfig) -> u32;
    /// See [`KernelFamily::cluster_blocks`].
    fn cluster_blocks(&self, c: &TileConfig) -> u32;
    /// See [`KernelFamily::balances_waves`].
    fn balances_waves(&self, c: &TileConfig) -> bool;
    /// See [`KernelFamily::turned`].
    fn turned(&self, c: &TileConfig) -> bool;
    /// See [`KernelFamily::estimate_factor`].
    fn estimate_factor(&self, c: &TileConfig, ir: &GemmIr, p: Problem) -> f64;
    /// See [`KernelFamily::serial_loads`].
    fn serial_loads(&self, c: &TileConfig, p: Problem) -> f64;
    /// See [`KernelFamily::for_rows`].
    fn for_rows(&self, c: &TileConfig, ir: &GemmIr, p: Problem) -> Option<TileConfig>;
    /// See [`KernelFamily::plan_class`].
    fn plan_class(&self, c: &TileConfig) -> (u32, u32);
    /// See [`KernelFamily::workspace`].
    fn workspace(&self, c: &TileConfig, ir: &GemmIr, problem: Problem, machine: Machine) -> Option<Workspace>;
    /// See [`KernelFamily::launch`].
    fn launch(&self, c: &TileConfig, ir: &GemmIr, problem: Problem, machine: Machine) -> LaunchDims;
    /// See [`KernelFamily::tensor_maps`].
    fn tensor_maps(&self, c: &TileConfig, ir: &GemmIr, problem: Problem) -> Vec<TensorMap>;
    /// See [`KernelFamily::defines`].
    fn defines(&self, c: &TileConfig, ir: &GemmIr, backend: Backend, problem: Problem) -> Vec<(&'static str, u32)>;
    /// See [`KernelFamily::compile_needs`].
    fn compile_needs(&self, c: &TileConfig) -> CompileNeeds;
    /// See [`KernelFamily::neighbours`].
    fn neighbours(&self, c: &TileConfig) -> Vec<(String, TileConfig)>;
    /// See [`KernelFamily::group_m`].
    fn group_m(&self, c: &TileConfig) -> u32;
    /// See [`KernelFamily::with_group_m`].
    fn with_group_m(&self, c: &TileConfig, group_m: u32) -> TileConfig;
    /// See [`KernelFamily::describe`].
    fn describe(&self, c: &TileConfig) -> String;
}

/// Whether `ir`'s tensor-core kernels promote their accumulators: add them into f32
/// sums every k-tile and start them afresh (`CG_PROMOTE` in the `wgmma` and `mma_sync`
/// sources; in `decode`'s, every super-step of its unrolled chunks), so that a chain of
/// tensor-core additions spans one k-tile, not all of K.
///
/// The tensor cores add each product into the accumulator with truncation, so over one
/// chain the error grows linearly with K: on an H100, `acc = tf32x3` on wgmma tiles went
/// from 1.2e-5 at K = 1000 to 1.0e-4 at 8192 (f32's limit), where the same split on the
/// decode family's short chains was as accurate as SGEMM
/// (bench/results/h100-2026-12-07av2). The sums are rounded FADDs. 16-bit outputs round
/// far coarser than a chain drifts, and plain tf32's operands already lose 2^-11 each, so
/// only tf32x3, whose point is f32's accuracy, pays the second set of registers.
pub(crate) fn promotes(ir: &GemmIr) -> bool {
    ir.acc == crate::ir::AccMode::Tf32x3
}

/// `CG_PROMOTE`'s default for `ir`'s source: 1 (every k-tile, [`promotes`]) or 0.
pub(crate) fn promote_define(ir: &GemmIr) -> String {
    format!(
        "#ifndef CG_PROMOTE\n#define CG_PROMOTE {}\n#endif\n",
        promotes(ir) as u32
    )
}

/// The f32 sums a thread of `ir`'s kernel keeps beside its `acc` accumulators: one each
/// where it [`promotes`] them, else none. What the families' register rules add.
pub(crate) fn promoted_sums(ir: &GemmIr, acc: u32) -> u32 {
    if promotes(ir) {
        acc
    } else {
        0
    }
}

/// What a register rule's reason adds where [`promoted_sums`] counted.
pub(crate) fn sums_note(ir: &GemmIr) -> &'static str {
    if promotes(ir) {
        ", with tf32x3's promoted sums"
    } else {
        ""
    }
}

/// The first of `family`'s rules that `tile` breaks, with why: what the planner prunes
/// a candidate for, and what a config read from disk is refused for.
fn first_broken_rule<F: KernelFamily>(family: &F, cx: &PlanCtx, tile: &F::Tile) -> Option<(&'static str, String)> {
    family
        .rules()
        .iter()
        .find_map(|r| (r.check)(cx, tile).map(|why| (r.name, why)))
}

/// How many configs of `family`'s space for `space` its rules keep: the `plan_extra` of a
/// specialist that plans every config it has beside the general families' budget.
fn rule_passing<F: KernelFamily>(family: &F, cx: &PlanCtx, space: &TuneSpace) -> usize {
    family
        .space(cx, space)
        .iter()
        .filter(|t| first_broken_rule(family, cx, t).is_none())
        .count()
}

fn tile_of<F: KernelFamily>(c: &TileConfig) -> &F::Tile {
    F::Tile::from_config(c).unwrap_or_else(|| panic!("{c:?} is not a config of the `{}` family", F::ID.name()))
}

impl<F: KernelFamily> DynFamily for F {
    fn id(&self) -> FamilyId {
        F::ID
    }
    fn instr(&self) -> Instr {
        KernelFamily::instr(self)
    }
    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        KernelFamily::serves(self, target, ir)
    }
    fn complete(&self) -> bool {
        KernelFamily::complete(self)
    }
    fn streams(&self) -> bool {
        KernelFamily::streams(self)
    }
    fn preference(&self, target: &TargetSpec) -> (u8, usize) {
        KernelFamily::preference(self, target)
    }
    fn plan_share(&self, cx: &PlanCtx) -> usize {
        KernelFamily::plan_share(self, cx)
    }
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        KernelFamily::plan_extra(self, cx, space)
    }
    fn plan(
        &self,
        cx: &PlanCtx,
        space: &TuneSpace,
        report: &mut BTreeMap<&'static str, Pruned>,
    ) -> (usize, Vec<(f64, TileConfig)>) {
        let cands = self.space(cx, space);
        let considered = cands.len();
        let mut kept = Vec::new();
        for t in cands {
            match first_broken_rule(self, cx, &t) {
                Some((name, why)) => {
                    report
                        .entry(name)
                        .or_insert_with(|| Pruned {
                            rule: name.into(),
                            count: 0,
                            example: why,
                        })
                        .count += 1;
                }
                None => kept.push((self.score(cx, &t), t.into_config())),
            }
        }
        (considered, kept)
    }
    fn check(&self, cx: &PlanCtx, c: &TileConfig) -> Result<(), (&'static str, String)> {
        let Some(t) = F::Tile::from_config(c) else {
            return Err((
                "family",
                format!(
                    "{c} is a config of the `{}` family, not of `{}`",
                    c.family_id(),
                    F::ID.name()
                ),
            ));
        };
        match first_broken_rule(self, cx, t) {
            Some(broken) => Err(broken),
            None => Ok(()),
        }
    }
    fn emit(&self, ir: &GemmIr, backend: Backend, variant: Variant) -> String {
        KernelFamily::emit(self, ir, backend, variant)
    }
    fn accepts(&self, c: &TileConfig, ir: &GemmIr, problem: Problem) -> Result<(), String> {
        KernelFamily::accepts(self, tile_of::<F>(c), ir, problem)
    }
    fn resources(&self, c: &TileConfig, dtype: DType) -> Resources {
        KernelFamily::resources(self, tile_of::<F>(c), dtype)
    }
    fn block_mn(&self, c: &TileConfig) -> (u32, u32) {
        KernelFamily::block_mn(self, tile_of::<F>(c))
    }
    fn k_split(&self, c: &TileConfig) -> u32 {
        KernelFamily::k_split(self, tile_of::<F>(c))
    }
    fn cluster_blocks(&self, c: &TileConfig) -> u32 {
        KernelFamily::cluster_blocks(self, tile_of::<F>(c))
    }
    fn estimate_factor(&self, c: &TileConfig, ir: &GemmIr, p: Problem) -> f64 {
        KernelFamily::estimate_factor(self, tile_of::<F>(c), ir, p)
    }
    fn serial_loads(&self, c: &TileConfig, p: Problem) -> f64 {
        KernelFamily::serial_loads(self, tile_of::<F>(c), p)
    }
    fn for_rows(&self, c: &TileConfig, ir: &GemmIr, p: Problem) -> Option<TileConfig> {
        KernelFamily::for_rows(self, tile_of::<F>(c), ir, p).map(Tile::into_config)
    }
    fn balances_waves(&self, c: &TileConfig) -> bool {
        KernelFamily::balances_waves(self, tile_of::<F>(c))
    }
    fn turned(&self, c: &TileConfig) -> bool {
        KernelFamily::turned(self, tile_of::<F>(c))
    }
    fn plan_class(&self, c: &TileConfig) -> (u32, u32) {
        KernelFamily::plan_class(self, tile_of::<F>(c))
    }
    fn workspace(&self, c: &TileConfig, ir: &GemmIr, problem: Problem, machine: Machine) -> Option<Workspace> {
        KernelFamily::workspace(self, tile_of::<F>(c), ir, problem, machine)
    }
    fn launch(&self, c: &TileConfig, ir: &GemmIr, problem: Problem, machine: Machine) -> LaunchDims {
        KernelFamily::launch(self, tile_of::<F>(c), ir, problem, machine)
    }
    fn tensor_maps(&self, c: &TileConfig, ir: &GemmIr, problem: Problem) -> Vec<TensorMap> {
        KernelFamily::tensor_maps(self, tile_of::<F>(c), ir, problem)
    }
    fn defines(&self, c: &TileConfig, ir: &GemmIr, backend: Backend, problem: Problem) -> Vec<(&'static str, u32)> {
        KernelFamily::defines(self, tile_of::<F>(c), ir, backend, problem)
    }
    fn compile_needs(&self, c: &TileConfig) -> CompileNeeds {
        KernelFamily::compile_needs(self, tile_of::<F>(c))
    }
    fn neighbours(&self, c: &TileConfig) -> Vec<(String, TileConfig)> {
        KernelFamily::neighbours(self, tile_of::<F>(c))
            .into_iter()
            .map(|(what, t)| (what, t.into_config()))
            .collect()
    }
    fn group_m(&self, c: &TileConfig) -> u32 {
        KernelFamily::group_m(self, tile_of::<F>(c))
    }
    fn with_group_m(&self, c: &TileConfig, group_m: u32) -> TileConfig {
        KernelFamily::with_group_m(self, tile_of::<F>(c), group_m).into_config()
    }
    fn describe(&self, c: &TileConfig) -> String {
        KernelFamily::describe(self, tile_of::<F>(c))
    }
}

impl TileConfig {
    /// The family this config belongs to.
    pub fn family(&self) -> &'static dyn DynFamily {
        self.family_id().family()
    }
    /// Whether its family is a shape specialist on `target` (gemv, gemv_n, decode,
    /// decode_n: preference class 0, see [`KernelFamily::preference`]), a kernel for some
    /// shapes only that the calls it accepts get by default.
    pub fn is_specialist(&self, target: &TargetSpec) -> bool {
        self.family().preference(target).0 == 0
    }
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.resources(DType::F32).threads
    }
    /// Threads, shared memory and registers of one block with `dtype` operands.
    pub fn resources(&self, dtype: DType) -> Resources {
        self.family().resources(self, dtype)
    }
    /// Shared/local memory per block, bytes.
    pub fn smem_bytes(&self, dtype: DType) -> u32 {
        self.resources(dtype).smem_bytes
    }
    /// Estimated registers per thread.
    pub fn est_regs(&self, dtype: DType) -> u32 {
        self.resources(dtype).est_regs
    }
    /// (rows, columns) of C per block.
    pub fn block_mn(&self) -> (u32, u32) {
        self.family().block_mn(self)
    }
    /// Whether it computes `Cᵀ = Bᵀ · Aᵀ` on the call's buffers (the turned-around form of
    /// `decode`, `gemv`, `gemv_n` and `wgmma`).
    pub fn turned(&self) -> bool {
        self.family().turned(self)
    }
    /// Its variant for the rows of a call of `ir` at `p` ([`KernelFamily::for_rows`]).
    pub fn for_rows(&self, ir: &GemmIr, p: Problem) -> Option<TileConfig> {
        self.family().for_rows(self, ir, p)
    }
    /// Blocks per output tile along K (1 without split-K).
    pub fn k_split(&self) -> u32 {
        self.family().k_split(self)
    }
    /// The device scratch memory a launch for `problem` on `machine` needs, if any.
    pub fn workspace(&self, ir: &GemmIr, problem: Problem, machine: Machine) -> Option<Workspace> {
        self.family().workspace(self, ir, problem, machine)
    }
    /// The launch geometry of one call of `ir` on `machine`.
    pub fn launch(&self, ir: &GemmIr, problem: Problem, machine: Machine) -> LaunchDims {
        self.family().launch(self, ir, problem, machine)
    }
    /// The tensor maps a launch passes before the ABI arguments.
    pub fn tensor_maps(&self, ir: &GemmIr, problem: Problem) -> Vec<TensorMap> {
        self.family().tensor_maps(self, ir, problem)
    }
    /// What a compile of this config needs beyond its source and defines.
    pub fn compile_needs(&self) -> CompileNeeds {
        self.family().compile_needs(self)
    }
    /// The `-D` constants of a compile for this call.
    pub fn defines(&self, ir: &GemmIr, backend: Backend, problem: Problem) -> Vec<(&'static str, u32)> {
        self.family().defines(self, ir, backend, problem)
    }
    /// [`TileConfig::defines`] as the compilers take them (owned names).
    pub fn owned_defines(&self, ir: &GemmIr, backend: Backend, problem: Problem) -> Vec<(String, u32)> {
        self.defines(ir, backend, problem)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }
    /// The launch-order group height.
    pub fn group_m(&self) -> u32 {
        self.family().group_m(self)
    }
    /// Whether the planner would keep this config for `cx` (see [`DynFamily::check`]):
    /// `Err((rule, why))` names the first rule of its family it breaks.
    pub fn check(&self, cx: &PlanCtx) -> Result<(), (&'static str, String)> {
        self.family().check(cx, self)
    }
}

impl fmt::Display for TileConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.family().describe(self))
    }
}

impl FamilyId {
    /// The family's source of `ir` for `backend` (see [`KernelFamily::emit`]).
    pub fn emit(self, ir: &GemmIr, backend: Backend, variant: Variant) -> String {
        self.family().emit(ir, backend, variant)
    }

    /// The family whose name is `name` (as [`FamilyId::name`] spells it).
    pub fn from_name(name: &str) -> Option<FamilyId> {
        FamilyId::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl fmt::Display for FamilyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Declares the registry: per family its [`FamilyId`] variant and name, its [`TileConfig`]
/// variant and the `family` tag that configs carry on disk (tuning caches and records
/// store them), its tile type, and the family value.
macro_rules! registry {
    ($( $(#[$doc:meta])* $id:ident = $name:literal, $variant:ident($tile:ty) as $tag:literal => $family:path; )+) => {
        /// The name of a kernel family.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum FamilyId {
            $( $(#[$doc])* #[serde(rename = $name)] $id, )+
        }

        impl FamilyId {
            /// Every registered family, in registry order.
            pub const ALL: &'static [FamilyId] = &[$(FamilyId::$id),+];

            /// The family's name, e.g. `mma_sync`.
            pub const fn name(self) -> &'static str {
                match self { $(FamilyId::$id => $name,)+ }
            }

            /// The family itself.
            pub fn family(self) -> &'static dyn DynFamily {
                match self { $(FamilyId::$id => &$family,)+ }
            }
        }

        /// One tile configuration; its variant names the family that generates, launches and
        /// explains it. On disk it is the tile's fields plus `"family": "<tag>"`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(tag = "family")]
        pub enum TileConfig {
            $( $(#[$doc])* #[serde(rename = $tag)] $variant($tile), )+
        }

        impl TileConfig {
            /// The name of the family this config belongs to.
            pub const fn family_id(&self) -> FamilyId {
                match self { $(TileConfig::$variant(_) => FamilyId::$id,)+ }
            }

            /// The JSON fields (beside `family`) of the configs whose `family` tag is
            /// `tag`, e.g. `"wgmma"`; `None` for a tag no family has.
            pub fn fields_of(tag: &str) -> Option<&'static [&'static str]> {
                match tag {
                    $($tag => Some(config_json::struct_fields::<$tile>()),)+
                    _ => None,
                }
            }
        }

        $(
            impl Tile for $tile {
                fn into_config(self) -> TileConfig {
                    TileConfig::$variant(self)
                }
                #[allow(unreachable_patterns)]
                fn from_config(c: &TileConfig) -> Option<&Self> {
                    match c {
                        TileConfig::$variant(t) => Some(t),
                        _ => None,
                    }
                }
            }
        )+
    };
}

registry! {
    /// Warp-level tensor cores (`mma.sync`, sm_80+) fed by a cp.async ring.
    MmaSync = "mma_sync", Mma(MmaTile) as "mma" => mma_sync::MmaSync;
    /// Scalar FMA in the CLBlast tile family: OpenCL everywhere, CUDA's fallback.
    Simt = "simt", Simt(SimtTile) as "simt" => simt::Simt;
    /// Hopper warpgroup MMA (sm_90a) fed by TMA, warp-specialised and persistent.
    Wgmma = "wgmma", Wgmma(WgmmaTile) as "wgmma" => wgmma::Wgmma;
    /// Decode-size M (at most 8 rows): B streamed once in 16-byte chunks, K split over warps.
    Gemv = "gemv", Gemv(GemvTile) as "gemv" => gemv::Gemv;
    /// Decode-size M (at most 64 rows) on tensor cores: swap-AB mma.sync fed straight from
    /// 16-byte loads of B's columns, K split over warps.
    Decode = "decode", Decode(DecodeTile) as "decode" => decode::Decode;
    /// Decode-size M (at most 4 rows) with B row-major (N-contiguous): B's rows streamed
    /// once in 16-byte chunks, K split over lanes and warps.
    GemvN = "gemv_n", GemvN(GemvNTile) as "gemv_n" => gemv_n::GemvN;
    /// Decode-size M (at most 32 rows) with B row-major (N-contiguous) on tensor cores:
    /// whole rows of B's tile through a per-warp cp.async ring, `ldmatrix.trans` into
    /// swap-AB mma.sync, K split over warps and blocks.
    DecodeN = "decode_n", DecodeN(DecodeNTile) as "decode_n" => decode_n::DecodeN;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_the_serde_names() {
        for &f in FamilyId::ALL {
            assert_eq!(FamilyId::from_name(f.name()), Some(f));
            assert_eq!(f.family().id(), f);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{}\"", f.name()));
        }
        assert_eq!(FamilyId::from_name("wgmma2"), None);
    }

    #[test]
    fn configs_keep_their_disk_format() {
        let c: TileConfig = serde_json::from_str(
            r#"{"family":"mma","block_m":128,"block_n":256,"block_k":64,"warps_m":2,"warps_n":4,"stages":3,"group_m":8}"#,
        )
        .unwrap();
        assert_eq!(c.family_id(), FamilyId::MmaSync);
        assert_eq!(c.to_string(), "mma 128x256x64 warps 2x4 stages 3 group 8");
        let s: TileConfig = serde_json::from_str(
            r#"{"family":"simt","mwg":64,"nwg":64,"kwg":16,"mdimc":8,"ndimc":8,"vw":4,"group_m":8}"#,
        )
        .unwrap();
        assert_eq!(s.family_id(), FamilyId::Simt);
        assert_eq!(s.threads(), 64);
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"family":"simt","mwg":64,"nwg":64,"kwg":16,"mdimc":8,"ndimc":8,"vw":4,"group_m":8}"#
        );
    }

    #[test]
    #[should_panic(expected = "is not a config of the `simt` family")]
    fn a_config_of_another_family_is_refused_by_name() {
        let c = MmaTile {
            block_m: 64,
            block_n: 64,
            block_k: 32,
            warps_m: 2,
            warps_n: 2,
            stages: 2,
            group_m: 8,
        }
        .into_config();
        let _ = FamilyId::Simt.family().block_mn(&c);
    }
}
