//! A first-order time estimate of a config on one problem: the order in which a tune
//! with a short list (a mid-size problem, see the runtime's `tune/scope.rs`) takes its
//! candidates, so that the list holds the tiles that suit the shape.
//!
//! The planner's order ranks tiles for large problems (big tiles first). For a skinny
//! or small problem the best tile is one that fills the machine: at 16×4096×4096 on the
//! H200 the measured winner (64×64 wgmma) was 19th of 40 in the planner's order, past a
//! 16-candidate list. The estimate is a roofline with wave quantisation:
//! - compute: the blocks run in waves of `sm_count × blocks per SM`; a block computes its
//!   whole tile (padding included) at its share of the SM's peak for the family's
//!   instruction; the time is waves × one block's time;
//! - memory: every block reads its A rows and B columns over K (an operand that fits in
//!   half the L2 is read from memory once; B once per group of `group_m` block rows of a
//!   grouped launch order), and C is written once, at the target's
//!   bandwidth times the share that the SMs with a block can pull (a few SMs cannot
//!   pull all of it; half of them nearly can: `bandwidth_share`);
//! - the larger of the two. No cache, latency or pipeline terms: it orders, it does not
//!   predict.
//!
//! A split-K config (`k_split` > 1) is `k_split` blocks per output tile, each over that
//! share of K, and moves its f32 partials (written once, read once) besides. A stream-K
//! config ([`crate::family::KernelFamily::balances_waves`]) counts fractional waves.
//!
//! Targets without `peak_tflops` give no estimate (`None`), and the planner's order stands.

use crate::family::{Problem, TileConfig};
use crate::ir::{AccMode, DType, GemmIr};
use crate::target::{DeviceType, Instr, TargetSpec};

/// Share of the chip's dense peak an instruction reaches, relative to the best one the
/// peak is quoted for: wgmma is the peak on Hopper, mma.sync reaches ~60 % there (issue
/// 9's measurements: 342 vs 763 TFLOP/s at 4096³) and is the peak where there is no
/// wgmma; scalar FMA runs at the f32 peak. The same share scales the bandwidth a family
/// draws: on the H200 no mma.sync config came within 1.27× of the winner in any bucket of
/// the shipped records, memory-bound ones included (median 2.1×), as its cp.async ring
/// keeps fewer bytes in flight than TMA. A family that streams its operands into registers
/// ([`crate::family::KernelFamily::streams`]) draws the full bandwidth instead.
fn instr_share(instr: Instr, target: &TargetSpec) -> f64 {
    let has_wgmma = target.instructions.iter().any(|i| i.name == Instr::Wgmma);
    match instr {
        Instr::Wgmma => 1.0,
        Instr::MmaSync if has_wgmma => 0.6,
        _ => 1.0,
    }
}

/// The peak (TFLOP/s) key of `ir`'s operands on `instr`.
fn peak_key(ir: &GemmIr, instr: Instr) -> &'static str {
    match (instr, ir.ab_dtype, ir.acc) {
        (Instr::Fma, _, _) => "f32",
        (_, DType::F32, AccMode::Tf32 | AccMode::Tf32x3) => "tf32",
        (_, DType::F16, _) => "f16",
        (_, DType::Bf16, _) => "bf16",
        (_, DType::F32, _) => "f32",
    }
}

/// Estimated µs of `c` for `ir` at `p` on `target` (see the module doc); `None` when the
/// target has no peak for the operands.
pub fn estimate_us(c: &TileConfig, ir: &GemmIr, target: &TargetSpec, p: Problem) -> Option<f64> {
    let instr = c.family().instr();
    let peak = *target.peak_tflops.get(peak_key(ir, instr))? as f64 * 1e12 * instr_share(instr, target);
    let (bm, bn) = c.block_mn();
    let (bm, bn) = (bm.max(1) as f64, bn.max(1) as f64);
    let (m, n, k) = (p.m.max(1) as f64, p.n.max(1) as f64, p.k.max(1) as f64);
    let (tiles_m, tiles_n) = tiles(c, p);
    let split = c.k_split().max(1) as f64;
    let batch = p.batch.max(1) as f64;
    let tiles = blocks(c, p);
    let Occupancy { per_sm, waves } = occupancy(c, ir, target, p);
    let sms = target.sm_count.max(1) as f64;
    // A block's share of its SM's peak: the SM's blocks split it.
    let block_flops = peak / sms / per_sm.min((tiles / sms).ceil().max(1.0));
    let compute = waves * 2.0 * bm * bn * (k / split) / block_flops;
    let share = if c.family().streams() {
        1.0
    } else {
        instr_share(instr, target)
    };
    let memory = target.mem_gbps.map_or(0.0, |gbps| {
        let esize = ir.ab_dtype.size() as f64;
        // An operand re-read by every block row (column) comes from memory each time
        // only when it does not stay in L2.
        let l2 = target.l2_bytes as f64 / 2.0;
        let reads = |elems: f64, times: f64| {
            let bytes = elems * esize;
            if bytes <= l2 {
                bytes
            } else {
                bytes * times
            }
        };
        // A grouped launch order walks `group` block rows together across the columns:
        // a B panel comes from memory once per group while the group's A rows stay in
        // L2, so B is read once per group of block rows, not once per block row (at
        // 2048x11008x4096, 16 block rows of 128: twice, not 16 times).
        let group = c.family().group_m(c).max(1) as f64;
        let a_rows = m.min(bm * group) * k * esize;
        let b_times = if a_rows <= l2 {
            (tiles_m / group).ceil()
        } else {
            tiles_m
        };
        // Split-K writes every split's f32 partials and the last one reads them back.
        let partials = if split > 1.0 { 8.0 * split * m * n } else { 0.0 };
        let bytes =
            batch * (reads(m * k, tiles_n) + reads(k * n, b_times) + m * n * ir.out_dtype.size() as f64 + partials);
        bytes / (gbps as f64 * 1e9 * bandwidth_share(tiles / sms) * share)
    });
    Some(compute.max(memory) * 1e6 * c.family().estimate_factor(c, ir, p))
}

/// How a launch of `c` at `p` sits on `target`'s SMs.
struct Occupancy {
    /// Blocks an SM holds at once (by shared memory and registers, 1..=32).
    per_sm: f64,
    /// Rounds of blocks the launch runs in (fractional for stream-K).
    waves: f64,
}

fn occupancy(c: &TileConfig, ir: &GemmIr, target: &TargetSpec, p: Problem) -> Occupancy {
    let res = c.resources(ir.ab_dtype);
    let by_smem = target
        .smem_per_block_optin
        .checked_div(res.smem_bytes)
        .unwrap_or(u32::MAX);
    let by_regs = target.regs_per_sm / (res.threads.max(1) * res.est_regs.max(1));
    let per_sm = by_smem.min(by_regs).clamp(1, 32) as f64;
    let sms = target.sm_count.max(1) as f64;
    // Clusters run as whole clusters, and some sizes fewer than the SMs hold (on the H200
    // 30 of 4 blocks: 120 of 132 SMs).
    let cluster = c.family().cluster_blocks(c).max(1);
    let resident = target
        .resident_clusters
        .get(&cluster.to_string())
        .map_or(sms, |&n| (n * cluster) as f64)
        .clamp(1.0, sms);
    let tiles = blocks(c, p);
    // Stream-K shares the last wave out over every block: no whole waves.
    let waves = if c.family().balances_waves(c) {
        (tiles / (resident * per_sm)).max(1.0)
    } else {
        (tiles / (resident * per_sm)).ceil()
    };
    Occupancy { per_sm, waves }
}

/// µs a launch of `c` at `p` spends waiting on its blocks' dependent loads
/// ([`crate::family::KernelFamily::serial_loads`]): a round trip per step
/// ([`TargetSpec::load_round_trip_ns`], 0 where the target has none), every wave.
/// Not part of [`estimate_us`], whose rooflines were fitted without it; it weighs a tile
/// against its own K-split twins ([`default_pick`]).
pub fn serial_load_us(c: &TileConfig, ir: &GemmIr, target: &TargetSpec, p: Problem) -> f64 {
    let Some(ns) = target.load_round_trip_ns else {
        return 0.0;
    };
    occupancy(c, ir, target, p).waves * c.family().serial_loads(c, p) * f64::from(ns) * 1e-3
}

/// The fewest k-steps a block's walk must take for [`default_pick`] to move to its twin
/// with K split. Measured on an H100 (full f32, the simt family;
/// bench/results/h100-2026-12-06ak2): walks of 512 and 688 steps ran 1.1-1.3x faster
/// split (128x8192x8192, 128x4096x11008), the 256 of 16x4096x4096 3.1x faster; 1000³'s
/// 63 ran 8% slower split (71 against 77 µs), where the estimate plus the wait says
/// faster.
pub const MIN_SERIAL_STEPS: f64 = 256.0;

/// The share of the memory bandwidth that blocks on `active` of the SMs (a fraction,
/// capped at 1) pull. Not linear: on the H200 at 16×4096×4096 the same 64×128 tile on 32,
/// 64 and 128 SMs (split-K 1, 2, 4) took 22.2, 18.9 and 18.4 µs (about 5 of them launch),
/// so half the SMs already draw nearly all of it and a quarter about 80 %.
fn bandwidth_share(active: f64) -> f64 {
    (active / 0.5).clamp(1e-3, 1.0).powf(0.35)
}

/// `configs` ordered by [`estimate_us`] for `p`, fastest first; estimates within 10 % of
/// each other keep the planner's order (the list's order). Without estimates (a target
/// with no peak), by the tiles' geometry: the configs that fill half of the SMs with little
/// padding first, where the planner's first does not fill them.
pub fn by_estimate(configs: &[TileConfig], ir: &GemmIr, target: &TargetSpec, p: Problem) -> Vec<TileConfig> {
    match estimates(configs, ir, target, p) {
        Some(est) => ordered(configs, &est),
        None => by_geometry(configs, target, p),
    }
}

/// `configs` as they are where the first [`occupies`] the GPU. Else in four tiers: the
/// configs that occupy it with tiles that cover at most 1.5 times the least padded area
/// of any that occupies it ([`padded_area`]), then the others that occupy it, the larger
/// block tiles first in each; then those that give half of the SMs a block
/// ([`fills_half`]), then the rest, in the planner's order (where nothing occupies the
/// GPU, a tiny problem, the order stands). Where the first is a shape specialist's, the
/// specialists' configs come before the others whatever their tier.
///
/// On NVIDIA's OpenCL the planner's first at 16x4096x4096 is a 128x128 tile, 32
/// work-groups for 132 SMs, where the tuned winner made 1024 (bench/results/h200-2026-12-05af);
/// the first that occupies them is a 16x32 tile with K split in 8, the measured best of
/// all 48 candidates there (81.3 µs; 406 with K whole, 128 work-groups of 64 threads,
/// and 727-1249 for the 128x128 tiles: an H100, bench/results/h100-2026-12-05ah).
fn by_geometry(configs: &[TileConfig], target: &TargetSpec, p: Problem) -> Vec<TileConfig> {
    let occupying = |c: &TileConfig| occupies(c, target, p);
    if configs.first().is_none_or(occupying) {
        return configs.to_vec();
    }
    let least = configs
        .iter()
        .filter(|c| occupying(c))
        .map(|c| padded_area(c, p))
        .fold(f64::INFINITY, f64::min);
    let tier = |c: &TileConfig| match (occupying(c), padded_area(c, p) <= 1.5 * least, fills_half(c, target, p)) {
        (true, true, _) => 0,
        (true, false, _) => 1,
        (false, _, true) => 2,
        (false, _, false) => 3,
    };
    // Larger tiles first among those that occupy the GPU: they read the operands fewer
    // times over.
    let area = |c: &TileConfig, tier: u8| {
        let (bm, bn) = c.block_mn();
        std::cmp::Reverse(if tier < 2 { bm as u64 * bn as u64 } else { 0 })
    };
    // A shape specialist's call stays with the specialists (see `start_over_default`).
    let kept = |c: &TileConfig| configs[0].is_specialist(target) && !c.is_specialist(target);
    let mut idx: Vec<usize> = (0..configs.len()).collect();
    idx.sort_by_key(|&i| {
        let t = tier(&configs[i]);
        (kept(&configs[i]), t, area(&configs[i], t), i)
    });
    idx.into_iter().map(|i| configs[i]).collect()
}

/// Every config's [`estimate_us`], or `None` where any has none.
fn estimates(configs: &[TileConfig], ir: &GemmIr, target: &TargetSpec, p: Problem) -> Option<Vec<f64>> {
    configs.iter().map(|c| estimate_us(c, ir, target, p)).collect()
}

/// `configs` by their estimates `est`, in bands of 10 %: a log-scale bin per estimate,
/// the list's (the planner's) order inside a bin.
fn ordered(configs: &[TileConfig], est: &[f64]) -> Vec<TileConfig> {
    let bin = |e: f64| (e.max(1e-9).ln() / 1.1f64.ln()).floor() as i64;
    let mut idx: Vec<usize> = (0..configs.len()).collect();
    idx.sort_by_key(|&i| (bin(est[i]), i));
    idx.into_iter().map(|i| configs[i]).collect()
}

/// How far behind the estimated fastest config the planner's first must be estimated
/// before a call with nothing measured for it runs another (see [`default_pick`]).
pub const DEFAULT_MARGIN: f64 = 1.5;

/// The blocks a launch of `c` at `p` starts (before a persistent grid folds them):
/// output tiles times the split of K (every tile is `k_split` blocks over a share of K
/// each) times the batch (which repeats the grid).
fn blocks(c: &TileConfig, p: Problem) -> f64 {
    let (tiles_m, tiles_n) = tiles(c, p);
    tiles_m * tiles_n * c.k_split().max(1) as f64 * p.batch.max(1) as f64
}

/// Output tiles of `c` along M and along N at `p` (per product).
fn tiles(c: &TileConfig, p: Problem) -> (f64, f64) {
    let (bm, bn) = c.block_mn();
    let along = |x: usize, b: u32| (x.max(1) as f64 / b.max(1) as f64).ceil();
    (along(p.m, bm), along(p.n, bn))
}

/// Elements of C the tiles of `c` cover at `p`, padding included (per product; K splits
/// cover the same area).
fn padded_area(c: &TileConfig, p: Problem) -> f64 {
    let (bm, bn) = c.block_mn();
    let (tiles_m, tiles_n) = tiles(c, p);
    tiles_m * bm.max(1) as f64 * tiles_n * bn.max(1) as f64
}

/// Whether a launch of `c` at `p` gives at least half of `target`'s SMs a block's worth of
/// the product: blocks counted by the share of their tiles that is not padding (16 rows
/// in 128-row tiles are an eighth of a block each), rounded up, so that a ragged edge
/// (63x31 in one 64x32 tile) still counts whole.
fn fills_half(c: &TileConfig, target: &TargetSpec, p: Problem) -> bool {
    let useful = (p.m * p.n) as f64 / padded_area(c, p).max(1.0);
    2.0 * (blocks(c, p) * useful).ceil() >= target.sm_count as f64
}

/// Threads a GPU's SM is to be given, over the launch, before a tile counts as occupying
/// it where no estimate speaks for the tile (the OpenCL GPUs): eight warps, enough to
/// keep loads in flight. On NVIDIA's OpenCL at 16x4096x4096, 16x32 tiles of 64 threads
/// took 406 µs with K whole (128 work-groups, 62 threads an SM) and 81.3 with K split in 8
/// (496 an SM); at 1000^3 the 64x64 tile of 256 threads (256 work-groups) 124.2 and the
/// 128x64 (128 work-groups, 248 an SM) 174.3 (an H100, bench/results/h100-2026-12-05ah).
const OCCUPYING_THREADS_PER_SM: f64 = 256.0;

/// Whether a launch of `c` at `p` [`fills_half`] of `target`'s SMs and, on a GPU, gives
/// them [`OCCUPYING_THREADS_PER_SM`] threads each (a CPU's cores run a work-group's
/// threads as loops: blocks are what they share).
fn occupies(c: &TileConfig, target: &TargetSpec, p: Problem) -> bool {
    let threads = blocks(c, p) * c.threads() as f64;
    fills_half(c, target, p)
        && (target.device_type != DeviceType::Gpu || threads >= OCCUPYING_THREADS_PER_SM * target.sm_count as f64)
}

/// Whether a call with no winner of its own (a `cached` launch) starts from `start`,
/// another shape bucket's winner, rather than from `default`, [`default_pick`]'s config
/// for the call: yes, unless the default is a shape specialist and the start is not.
///
/// The nearest bucket is nearest by the log-distance of M, N and K, which does not see
/// that a product with one column is another kind of problem than one with a thousand:
/// a kernel whose table holds no skinny bucket (tf32's: its records predate the turned
/// kernels) took 8192³'s 128x256 wgmma tile at 12288x1x4096 and 4096x8x4096, 0.47-0.64x
/// cuBLAS on an H100 (bench/results/h100-2026-12-05ah), where the default, a turned
/// gemv, reads A once. A specialist's default is the planner's measured choice for that
/// kind of call; a general family's default is only a first guess, which a measured
/// winner near the shape beats.
pub fn start_over_default(start: &TileConfig, default: &TileConfig, target: &TargetSpec) -> bool {
    start.is_specialist(target) || !default.is_specialist(target)
}

/// The config a call with nothing measured for it runs (no tuning record, no cached
/// winner, `CROSSGEMM_TUNE=off`), of `configs`: those that can run the call, in the
/// planner's order.
///
/// The planner's order is the measured order of large problems, and its first config
/// stands unless it leaves more than half of the SMs without a block (counting blocks by
/// the share of their tile that is not padding) *and* [`estimate_us`]
/// puts it more than [`DEFAULT_MARGIN`] times behind the fastest; then the call runs the
/// first of [`by_estimate`]'s order, the config a tune times first. That is the case the
/// estimate is sure of (a 128x256 tile at 8x4096x4096 makes 16 blocks on the H200's 132
/// SMs: measured 44.9 µs against 19.7 for a 64-row tile, bench/results/h200-2026-12-04y4;
/// 1000³ makes 32). Where the planner's first fills the machine, the estimate's edge comes
/// from its memory and wave terms, which order candidates but are not sure enough to
/// overrule a measured default (at 8192³ tf32 its L2 term prefers 64-row tiles 2:1; the
/// measured winner is the planner's first).
///
/// Without estimates (a target with no peak: the OpenCL GPUs) the tiles' geometry alone
/// decides: the first of [`by_estimate`]'s order.
///
/// `None` for an empty list.
pub fn default_pick(configs: &[TileConfig], ir: &GemmIr, target: &TargetSpec, p: Problem) -> Option<TileConfig> {
    let pick = pick_before_twins(configs, ir, target, p)?;
    let pick = whole_where_full(configs, pick, target, p);
    let pick = split_where_serial(configs, pick, ir, target, p);
    Some(for_rows(configs, pick, ir, target, p))
}

/// `pick`, or a clustered config for the rows of a call of `ir` at `p` where `pick`'s
/// family has a variant for them ([`TileConfig::for_rows`]: the wgmma tiles of one block
/// on rows that start mid-sector) and `pick`'s blocks make a full wave that occupies the
/// GPU (at least one block an SM). For a start chosen without regard to the rows: the
/// planner's first, or a winner measured on rows of another class.
///
/// Which cluster: of `configs`, those of `pick`'s family in clusters of the same block
/// tile (its own 2-block twin, the 2x2 cluster), else of the block tiles nearest its area,
/// the one with the least estimate (the first of them on a tie). On K + 8 views on an H100
/// (bench/results/h100-2026-12-07ay) the estimate orders them as measured: the 128x256
/// pair at 4096³ (211.5 µs against 222.3 for the 2x2) and 8192³ (1708 against 1808), the
/// 2x2 at 2048x11008x4096 (269.3 against 304.1); and it reaches tiles with no twin
/// planned, which stayed alone before: that row's table picks, 128x128 (572 µs alone;
/// its 2x2 289.4; f16) and 192x192 with three consumers (403 alone as a bf16 first call;
/// the 2x2 of 128x256 ran f16 in 269.3).
/// Only a full wave: at 1024³ on K + 8 views (32 to 64 blocks) the 128-row tiles ran
/// 5-6% slower in clusters, where from 4096³ up they gain a third
/// (bench/results/h200-2026-12-07aw7).
pub fn for_rows(configs: &[TileConfig], pick: TileConfig, ir: &GemmIr, target: &TargetSpec, p: Problem) -> TileConfig {
    if !full_wave(&pick, target, p) {
        return pick;
    }
    let Some(twin) = pick.for_rows(ir, p) else {
        return pick;
    };
    // How far a block tile is from the pick's: the same tile first, then by the log of
    // the ratio of their areas.
    let area = |c: &TileConfig| {
        let (bm, bn) = c.block_mn();
        f64::from(bm) * f64::from(bn)
    };
    let distance = |c: &TileConfig| (c.block_mn() != pick.block_mn(), (area(c) / area(&pick)).ln().abs());
    let clustered: Vec<TileConfig> = configs
        .iter()
        .copied()
        .filter(|c| c.family_id() == pick.family_id() && c.family().cluster_blocks(c) > 1)
        .collect();
    let Some(nearest) = clustered
        .iter()
        .map(distance)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
    else {
        return pick;
    };
    let pool: Vec<TileConfig> = clustered.into_iter().filter(|c| distance(c) == nearest).collect();
    let Some(est) = estimates(&pool, ir, target, p) else {
        // Without estimates only the twin itself, where planned.
        return if configs.contains(&twin) { twin } else { pick };
    };
    // The least estimate, the first of the pool on a tie.
    pool.iter()
        .zip(&est)
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map_or(pick, |(c, _)| *c)
}

/// [`default_pick`] before [`whole_where_full`].
fn pick_before_twins(configs: &[TileConfig], ir: &GemmIr, target: &TargetSpec, p: Problem) -> Option<TileConfig> {
    let first = *configs.first()?;
    let Some(est) = estimates(configs, ir, target, p) else {
        return by_geometry(configs, target, p).first().copied();
    };
    if fills_half(&first, target, p) {
        return Some(first);
    }
    let fastest = est.iter().copied().fold(f64::INFINITY, f64::min);
    if est[0] <= DEFAULT_MARGIN * fastest {
        return Some(first);
    }
    ordered(configs, &est).first().copied()
}

/// `pick`, or where it splits K and its tiles alone make a full wave that
/// [`occupies`] the GPU, its twin with K whole (the first of `configs` of the same
/// family, block tile and threads that does not split): a split is the remedy for idle
/// SMs, and where none would be idle it only adds a pass over partial sums. `gemv_n`'s
/// planner order puts K split in 4 first (it won at N = 4096: 64 blocks whole); at
/// 2x50257x768 (786 blocks whole) it took 62.4 µs against 42.7 whole (an H100,
/// bench/results/h100-2026-12-05ah). A full wave and not half: at 128x4096x11008 the
/// wgmma 128x64 tile won with K split in 2 where its 128 tiles leave 4 of 132 SMs idle.
fn whole_where_full(configs: &[TileConfig], pick: TileConfig, target: &TargetSpec, p: Problem) -> TileConfig {
    if pick.k_split() <= 1 {
        return pick;
    }
    configs
        .iter()
        .find(|c| c.k_split() <= 1 && twins(c, &pick))
        .filter(|c| full_wave(c, target, p))
        .copied()
        .unwrap_or(pick)
}

/// Whether `c`'s blocks at `p` make a full wave that [`occupies`] the GPU: where a split
/// of K leaves no SM idle that it would not.
fn full_wave(c: &TileConfig, target: &TargetSpec, p: Problem) -> bool {
    blocks(c, p) >= target.sm_count as f64 && occupies(c, target, p)
}

/// Whether `a` and `b` are the same block tile of one family with the same threads: twins
/// that differ in how they walk K (split or not, the k-tile) and little else.
fn twins(a: &TileConfig, b: &TileConfig) -> bool {
    a.family_id() == b.family_id() && a.block_mn() == b.block_mn() && a.threads() == b.threads()
}

/// `pick`, or where its blocks walk K whole waiting on their loads step by step
/// ([`serial_load_us`]), the twin of `configs` (same family, block tile and threads)
/// whose estimate plus that wait is least, K split or not: the mirror of
/// [`whole_where_full`]. At 16x4096x4096 full f32 the estimate's pick, a 16x32 simt tile
/// with K whole, makes 128 blocks of 256 steps each (175 µs on an H100); with K split in
/// 8, 1024 blocks of 32 steps (56 µs, bench/results/h100-2026-12-06aj1). Only twins:
/// the estimate does not model the shared-memory and load costs that separate different
/// tiles well enough for the wait to weigh between them. Only walks of at least
/// [`MIN_SERIAL_STEPS`] (the wait and the estimate's compute overlap in part, which the
/// sum of the two does not see, and on short walks the split's own costs win), and only
/// where the tiles alone leave SMs idle (else other blocks hide a block's waits, as in
/// [`whole_where_full`]).
fn split_where_serial(
    configs: &[TileConfig],
    pick: TileConfig,
    ir: &GemmIr,
    target: &TargetSpec,
    p: Problem,
) -> TileConfig {
    if pick.k_split() > 1 || pick.family().serial_loads(&pick, p) < MIN_SERIAL_STEPS || full_wave(&pick, target, p) {
        return pick;
    }
    let cost = |c: &TileConfig| Some(estimate_us(c, ir, target, p)? + serial_load_us(c, ir, target, p));
    let Some(mut best) = cost(&pick) else {
        return pick;
    };
    let mut chosen = pick;
    for c in configs.iter().filter(|c| twins(c, &pick)) {
        if let Some(t) = cost(c).filter(|&t| t < best) {
            (best, chosen) = (t, *c);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Layout;
    use crate::plan::plan_target;
    use crate::space::TuneSpace;
    use crate::target::{Targets, BUILTIN_TARGETS};

    fn h200() -> TargetSpec {
        Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone()
    }

    fn f16() -> GemmIr {
        GemmIr::matmul("k", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor)
    }

    /// The configs of `configs` that accept a call of `ir` at `p`, in their order.
    fn accepting(configs: &[TileConfig], ir: &GemmIr, p: Problem) -> Vec<TileConfig> {
        configs
            .iter()
            .copied()
            .filter(|c| c.family().accepts(c, ir, p).is_ok())
            .collect()
    }

    /// Full f32 (the simt family) at 16 rows: the estimate's pick walks K whole, 256 load
    /// round trips a block, so the default is its twin with K split (measured on an H100:
    /// 16x32 tiles 175 µs whole, 56 split in 8, bench/results/h100-2026-12-06aj1); so at
    /// 128x8192x8192 (a 128-row tile of 512 steps: 513 µs whole, 472 split in 2,
    /// -06ak2). Where the walk is short (1000³, 63 steps: 71 µs whole, 77 split) or the
    /// tiles fill the GPU (4096³) the pick stands.
    #[test]
    fn f32_at_long_walks_defaults_to_a_split_of_k() {
        let t = h200();
        let ir = GemmIr::matmul("k", DType::F32, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        let plan = plan_target(&ir, &t, &TuneSpace::default()).configs;
        let skinny = Problem::new(16, 4096, 4096);
        let usable = accepting(&plan, &ir, skinny);
        let pick = default_pick(&usable, &ir, &t, skinny).unwrap();
        let before = whole_where_full(
            &usable,
            pick_before_twins(&usable, &ir, &t, skinny).unwrap(),
            &t,
            skinny,
        );
        assert_eq!(pick.family_id(), crate::family::FamilyId::Simt);
        assert_eq!(before.k_split(), 1, "{before}");
        assert!(pick.k_split() >= 4, "{pick}");
        assert_eq!((pick.block_mn(), pick.threads()), (before.block_mn(), before.threads()));
        // 128x128 tiles make 96 blocks at 16x12288x4096, but each is seven eighths padding:
        // they do not fill half of the SMs, and a 16-row tile is the default.
        let wide = Problem::new(16, 12288, 4096);
        let usable = accepting(&plan, &ir, wide);
        let pick = default_pick(&usable, &ir, &t, wide).unwrap();
        assert!(pick.block_mn().0 <= 32, "{pick}");
        let long = Problem::new(128, 8192, 8192);
        let usable = accepting(&plan, &ir, long);
        let pick = default_pick(&usable, &ir, &t, long).unwrap();
        assert!(pick.k_split() > 1 && pick.block_mn().0 >= 64, "{pick}");
        for p in [Problem::new(1000, 1000, 1000), Problem::new(4096, 4096, 4096)] {
            let usable = accepting(&plan, &ir, p);
            let before = whole_where_full(&usable, pick_before_twins(&usable, &ir, &t, p).unwrap(), &t, p);
            assert_eq!(default_pick(&usable, &ir, &t, p), Some(before));
        }
    }

    /// Three consumers in ping-pong are estimated as the same tile of two past K = 128
    /// times 1.1 and up to it divided by 1.1 (measured: they win only at short K).
    #[test]
    fn three_consumer_pingpong_is_estimated_behind_past_short_k() {
        use crate::family::WgmmaTile;
        let (t, ir) = (h200(), f16());
        let pp = |consumers| {
            TileConfig::Wgmma(WgmmaTile {
                pingpong: true,
                ..WgmmaTile::new(64, 128, 8, consumers)
            })
        };
        let ratio = |k| {
            let p = Problem::new(4096, 4096, k);
            estimate_us(&pp(3), &ir, &t, p).unwrap() / estimate_us(&pp(2), &ir, &t, p).unwrap()
        };
        assert!((ratio(4096) - 1.1).abs() < 1e-9, "{}", ratio(4096));
        assert!((ratio(128) - 1.0 / 1.1).abs() < 1e-9, "{}", ratio(128));
    }

    /// On rows that start mid-sector (a K + 8 view) clusters, which share their operand
    /// loads, come before the same tile alone, 2x2 first; on aligned rows the 2x2
    /// cluster goes behind the tile alone (bench/results/h200-2026-12-03u8).
    #[test]
    fn clusters_lead_where_rows_start_mid_sector() {
        use crate::family::{Stored, WgmmaTile};
        let (t, ir) = (h200(), f16());
        let tile = |cluster_m, cluster_n| {
            TileConfig::Wgmma(WgmmaTile {
                cluster_m,
                cluster_n,
                ..WgmmaTile::new(128, 256, 4, 2)
            })
        };
        let (alone, pair, quad) = (tile(1, 1), tile(2, 1), tile(2, 2));
        let packed = Problem::new(2048, 11008, 4096);
        let view = packed.stored(Stored::new(4104, 0), Stored::new(4104, 0));
        let est = |c: &TileConfig, p| estimate_us(c, &ir, &t, p).unwrap();
        assert!(est(&quad, view) < est(&pair, view) && est(&pair, view) < est(&alone, view));
        assert!(est(&quad, packed) > est(&alone, packed));
        assert_eq!(est(&pair, packed), est(&alone, packed));
        let order = by_estimate(&[alone, pair, quad], &ir, &t, view);
        assert_eq!(order, [quad, pair, alone]);
        assert_eq!(by_estimate(&[quad, alone], &ir, &t, packed), [alone, quad]);
    }

    /// Clusters of 4 run 30 at a time on the H200 (120 of its 132 SMs): on K + 8 views of
    /// 4096³ the 512 tiles of 128x256 take 4 waves alone or in pairs and 5 in 2x2
    /// clusters, so the pair goes first there, as it won (bench/results/h200-2026-12-03u10),
    /// where at 2048x11008x4096 (688 tiles: 6 waves either way) the 2x2 still leads.
    #[test]
    fn clusters_of_four_count_their_waves_over_the_clusters_that_run() {
        use crate::family::{Stored, WgmmaTile};
        let (t, ir) = (h200(), f16());
        assert_eq!(t.resident_clusters.get("4"), Some(&30));
        let tile = |cluster_m, cluster_n| {
            TileConfig::Wgmma(WgmmaTile {
                cluster_m,
                cluster_n,
                ..WgmmaTile::new(128, 256, 4, 2)
            })
        };
        let (pair, quad) = (tile(2, 1), tile(2, 2));
        let view = |m, n, k| Problem::new(m, n, k).stored(Stored::new(k + 8, 0), Stored::new(k + 8, 0));
        let square = view(4096, 4096, 4096);
        assert_eq!(by_estimate(&[quad, pair], &ir, &t, square), [pair, quad]);
        // Counted over all 132 SMs, the 2x2 would lead there too.
        let all = TargetSpec {
            resident_clusters: Default::default(),
            ..t.clone()
        };
        assert_eq!(by_estimate(&[pair, quad], &ir, &all, square), [quad, pair]);
        assert_eq!(
            by_estimate(&[pair, quad], &ir, &t, view(2048, 11008, 4096)),
            [quad, pair]
        );
    }

    #[test]
    fn skinny_problems_prefer_tiles_that_fill_the_machine() {
        let t = h200();
        let ir = f16();
        let configs = plan_target(&ir, &t, &TuneSpace::default()).configs;
        let p = Problem::new(16, 4096, 4096);
        let accepted: Vec<TileConfig> = accepting(&configs, &ir, p);
        let ordered = by_estimate(&accepted, &ir, &t, p);
        assert_eq!(ordered.len(), accepted.len());
        // The decode family streams B with 16 rows and fills the machine with 16-column
        // blocks.
        let (bm, bn) = ordered[0].block_mn();
        assert_eq!(
            ordered[0].family_id(),
            crate::family::FamilyId::Decode,
            "{}",
            ordered[0]
        );
        assert!(bm == 16 && bn <= 32, "{}", ordered[0]);
        // Among the wgmma tiles, one row of 64-row tiles: the narrow ones make 64 blocks,
        // the 256-wide ones 16.
        let wgmma = ordered
            .iter()
            .find(|c| c.family_id() == crate::family::FamilyId::Wgmma)
            .unwrap();
        let (bm, bn) = wgmma.block_mn();
        assert!(bm == 64 && bn <= 128, "{wgmma}");
        // At a large square the planner's big tiles come first still.
        let big = Problem::new(8192, 8192, 8192);
        let (bm, bn) = by_estimate(&accepted, &ir, &t, big)[0].block_mn();
        assert!(bm * bn >= 128 * 128, "{bm}x{bn}");
    }

    /// A stream-K config has no partial last wave: at 2048×3328×2048 (208 tiles of 128×256
    /// on 132 SMs, 1.6 waves; compute-bound, both operands fit in L2) it estimates below its
    /// data-parallel twin, and where the tiles fill whole waves (132 · 4 of them) the two
    /// are the same.
    #[test]
    fn streamk_counts_fractional_waves() {
        let t = h200();
        let ir = f16();
        let dp = crate::family::WgmmaTile::default();
        let sk = crate::family::WgmmaTile { streamk: true, ..dp };
        let est = |w: crate::family::WgmmaTile, p| estimate_us(&TileConfig::Wgmma(w), &ir, &t, p).unwrap();
        let ragged = Problem::new(2048, 3328, 2048);
        assert!(
            est(sk, ragged) < 0.9 * est(dp, ragged),
            "{} {}",
            est(sk, ragged),
            est(dp, ragged)
        );
        let whole = Problem::new(128 * 132, 256 * 4, 4096);
        assert_eq!(est(sk, whole), est(dp, whole));
    }

    /// Where the last wave is mostly idle, the stream-K twins (once asked for) rank with
    /// the tiles that fill the machine: at 2048x11008x4096 (5.2 waves of 128x256 tiles)
    /// the H200 measured stream-K 256x128 at 254.5 us against 264.0 for the best
    /// data-parallel config (bench/results/h200-2026-12-02h/tune-sk-*.json). Before the
    /// estimate counted B once per launch group it called that shape memory-bound (B
    /// read 16 times) and ranked by block rows, and a 48-candidate tune timed no stream-K.
    #[test]
    fn streamk_ranks_first_where_the_last_wave_idles() {
        let t = h200();
        let ir = f16();
        let mut space = TuneSpace::default();
        space.0.insert("streamk".into(), vec![1]);
        let p = Problem::new(2048, 11008, 4096);
        let plan: Vec<TileConfig> = accepting(&plan_target(&ir, &t, &space).configs, &ir, p);
        let order = by_estimate(&plan, &ir, &t, p);
        let sk = |c: &TileConfig| matches!(c, TileConfig::Wgmma(w) if w.streamk);
        let at = |order: &[TileConfig]| -> Vec<usize> {
            order
                .iter()
                .enumerate()
                .filter(|(_, c)| sk(c))
                .map(|(i, _)| i)
                .collect()
        };
        // Every stream-K config in the first two thirds of a 48-candidate tune (the
        // data-parallel 64- and 128-row tiles tie with them, in the planner's order).
        let first = at(&order);
        assert!(first.len() >= 10 && first.iter().all(|&i| i < 32), "{first:?}");
        // Nearly whole waves (4096x4096x4096 at 128x256: 512 tiles, 3.9 waves) keep a
        // data-parallel config first.
        let order = by_estimate(&plan, &ir, &t, Problem::new(4096, 4096, 4096));
        assert!(!sk(&order[0]), "{:?}", at(&order));
    }

    /// The shipped H200 records' measured winners, against the order a mid-size tune
    /// (16 candidates) takes: every mid-size bucket's winner is among the estimate's
    /// first 16 (in the planner's order the 16×4096×4096 winners were 18th–35th), and over
    /// all buckets the estimate's first 16 hold more winners than the planner's.
    #[test]
    fn the_measured_winners_are_in_the_estimates_short_list() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        let (text_name, text) = crate::table::BUILTIN_RECORDS
            .iter()
            .find(|(n, _)| n.ends_with("h200.json"))
            .unwrap();
        let doc = crate::records::parse(text).unwrap();
        let (mut planner, mut estimate, mut mid, mut buckets) = (0, 0, 0, 0);
        // The winner as the single pick, and within the first 3.
        let (mut first, mut first_est, mut three, mut three_est) = (0, 0, 0, 0);
        // The winner as what a call with nothing measured runs ([`default_pick`]).
        let mut default = 0;
        // Buckets tuned before a family now planned first (see `before_decode`).
        let mut stale = 0;
        // A kernel's bucket may be in records of several sources (its code changed and it
        // was tuned again), under the bucket keys of their day: the fastest under today's
        // key is the measured winner, as in its table.
        let key = |r: &crate::records::Record, bucket: &str, shape| crate::records::rekey(bucket, shape, r.ir.as_ref());
        let mut fastest: std::collections::HashMap<(&str, &str, String), f64> = Default::default();
        for r in &doc.records {
            for (bucket, b) in &r.buckets {
                let e = fastest
                    .entry((&r.kernel, &r.device_name, key(r, bucket, b.shape)))
                    .or_insert(f64::MAX);
                *e = e.min(b.us);
            }
        }
        for r in &doc.records {
            let ir = r.ir.as_ref().unwrap();
            let t = targets.get(&r.target).unwrap();
            let plan = plan_target(ir, t, &TuneSpace::default()).configs;
            for (bucket, b) in &r.buckets {
                if b.us > fastest[&(r.kernel.as_str(), r.device_name.as_str(), key(r, bucket, b.shape))] {
                    continue;
                }
                let [m, n, k] = b.shape;
                // A batch bucket's shape is one product's; the tune ran the batch (its
                // count rounded up in the key, as close as the record says).
                let batch = crate::records::bucket_batch(bucket).unwrap_or(1);
                let p = Problem::new(m, n, k).batched(batch);
                let ok: Vec<TileConfig> = plan
                    .iter()
                    .copied()
                    .filter(|c| c.family().accepts(c, ir, p).is_ok())
                    .collect();
                let at = |list: &[TileConfig]| list.iter().position(|c| *c == b.config).unwrap();
                let est_order = by_estimate(&ok, ir, t, p);
                let (by_plan, by_est) = (at(&ok), at(&est_order));
                buckets += 1;
                planner += usize::from(by_plan < 16);
                estimate += usize::from(by_est < 16);
                first += usize::from(by_plan == 0);
                first_est += usize::from(by_est == 0);
                default += usize::from(default_pick(&ok, ir, t, p) == Some(b.config));
                three += usize::from(by_plan < 3);
                three_est += usize::from(by_est < 3);
                let flop = 2.0 * (m * n * k * batch) as f64;
                // tf32 buckets of few rows where a wgmma tile timed before the decode family
                // took tf32 (session an) is still the fastest on record: the H200's tune
                // of the decode tiles (batch ap0) came within 0-2% of it at 16 rows and
                // K = 11008 or N = 12288, while the estimate puts decode first.
                let before_decode = ir.acc.tf32_products()
                    && b.config.family_id() != crate::family::FamilyId::Decode
                    && est_order[0].family_id() == crate::family::FamilyId::Decode;
                if before_decode {
                    stale += 1;
                } else if (2f64.powi(23)..2f64.powi(30)).contains(&flop) {
                    mid += 1;
                    assert!(
                        by_est < 16,
                        "{text_name}: {} {bucket}: winner {} is {by_est}th",
                        r.kernel,
                        b.config
                    );
                }
            }
        }
        // What the note quotes: `cargo test -p gemm-core --lib estimate -- --nocapture`.
        eprintln!(
            "{buckets} buckets ({mid} mid-size): the winner among the first 16 {estimate} (planner {planner}), \
             first {first_est} (planner {first}), among the first 3 {three_est} (planner {three}), \
             the default {default}; {stale} tuned before the family now first"
        );
        assert!(
            default >= first,
            "the default is the winner of {default} buckets, the planner's first of {first}"
        );
        assert!(mid > 0 && estimate > planner, "{estimate} vs {planner} of the buckets");
    }

    /// A call with nothing measured keeps the planner's first config where the estimate
    /// roughly agrees (large squares, 2048x11008x4096, the turned decode at 4096x8x4096 with a row-major W), and
    /// takes the estimate's first where the planner's is estimated badly wrong: the
    /// 128x256 wgmma tile for 64 rows of a row-major W (measured 0.37x cuBLAS, batch z1).
    /// On K + 8 views (rows of 8208 bytes: every other one starts mid-sector) the default
    /// is the planner's first in a 2-block cluster, as the H200 measured it
    /// (bench/results/h200-2026-12-07aw7, aw10: 191.5 µs against 282.4 alone at 4096³); on
    /// packed rows, and for a tile the plan has no twin of, the pick stands.
    #[test]
    fn on_mid_sector_rows_the_default_takes_its_cluster_twin() {
        use crate::family::Stored;
        let (t, ir) = (h200(), f16());
        let plan = plan_target(&ir, &t, &TuneSpace::default()).configs;
        let packed = Problem::new(4096, 4096, 4096);
        let view = Problem {
            a: Stored::new(4104, 0),
            b: Stored::new(4104, 0),
            ..packed
        };
        let first = default_pick(&accepting(&plan, &ir, packed), &ir, &t, packed).unwrap();
        let TileConfig::Wgmma(w) = first else { panic!("{first}") };
        assert_eq!(w.cluster(), 1, "{first}");
        let twin = TileConfig::Wgmma(crate::family::WgmmaTile { cluster_m: 2, ..w });
        assert_eq!(default_pick(&accepting(&plan, &ir, view), &ir, &t, view), Some(twin));
        assert_eq!(
            for_rows(&[first], first, &ir, &t, view),
            first,
            "no twin among the configs"
        );
        // 1024³'s tiles make less than a wave: the pick stands.
        let small = Problem {
            a: Stored::new(1032, 0),
            b: Stored::new(1032, 0),
            ..Problem::new(1024, 1024, 1024)
        };
        let first_small = default_pick(&accepting(&plan, &ir, small), &ir, &t, small).unwrap();
        assert_eq!(first_small.family().cluster_blocks(&first_small), 1, "{first_small}");
        assert!(first_small.for_rows(&ir, small).is_some(), "{first_small} has a twin");
        assert_eq!(first.for_rows(&ir, packed), None);
        // Rows TMA cannot map (K + 4: 8200 bytes) take the cp.async producer, which has no
        // multicast.
        let odd = Problem {
            a: Stored::new(4100, 0),
            b: Stored::new(4100, 0),
            ..packed
        };
        assert_eq!(first.for_rows(&ir, odd), None);
    }

    /// A start on mid-sector rows (K + 8 views) takes the cluster the H100 measured fastest
    /// among those of its block tile (bench/results/h100-2026-12-07ay, ax2): the 128x256
    /// pair at 4096³ and 8192³, the 2x2 at 2048x11008x4096; a tile with no clustered config
    /// planned (192x192 with three consumers, a table's pick there) takes the nearest
    /// tile's, where before it stayed alone (a bf16 first call 403 µs; the 2x2 of 128x256
    /// ran f16 in 269).
    #[test]
    fn on_mid_sector_rows_a_start_takes_the_cluster_its_tile_runs_best_in() {
        use crate::family::{Stored, WgmmaTile};
        let (t, ir) = (h200(), f16());
        let plan = plan_target(&ir, &t, &TuneSpace::default()).configs;
        let view = |m, n, k| Problem::new(m, n, k).stored(Stored::new(k + 8, 0), Stored::new(k + 8, 0));
        let wgmma = |w: WgmmaTile| TileConfig::Wgmma(w);
        let alone = |bm, bn, stages, consumers| WgmmaTile::new(bm, bn, stages, consumers);
        let pair = |w: WgmmaTile| wgmma(WgmmaTile { cluster_m: 2, ..w });
        let quad = |w: WgmmaTile| {
            wgmma(WgmmaTile {
                cluster_m: 2,
                cluster_n: 2,
                ..w
            })
        };
        let start = |w: WgmmaTile, p: Problem| {
            let configs = accepting(&plan, &ir, p);
            assert!(configs.contains(&wgmma(w)), "{} is planned", wgmma(w));
            for_rows(&configs, wgmma(w), &ir, &t, p)
        };
        let wide = alone(128, 256, 4, 2);
        assert_eq!(start(wide, view(4096, 4096, 4096)), pair(wide));
        assert_eq!(start(wide, view(8192, 8192, 8192)), pair(wide));
        assert_eq!(start(wide, view(2048, 11008, 4096)), quad(wide));
        let square = alone(128, 128, 6, 2);
        assert_eq!(start(square, view(2048, 11008, 4096)), quad(square));
        let three = alone(192, 192, 4, 3);
        assert_eq!(start(three, view(2048, 11008, 4096)), quad(wide));
        // Packed rows keep every start.
        for w in [wide, square, three] {
            let p = Problem::new(2048, 11008, 4096);
            assert_eq!(for_rows(&accepting(&plan, &ir, p), wgmma(w), &ir, &t, p), wgmma(w));
        }
    }

    #[test]
    fn the_default_leaves_the_planners_first_only_when_it_is_far_behind() {
        use crate::family::FamilyId;
        let t = h200();
        let pick = |a, b, (m, n, k)| {
            let ir = GemmIr::matmul("k", DType::F16, AccMode::F32, a, b);
            let p = Problem::new(m, n, k);
            let ok: Vec<TileConfig> = accepting(&plan_target(&ir, &t, &TuneSpace::default()).configs, &ir, p);
            (ok[0], default_pick(&ok, &ir, &t, p).unwrap())
        };
        let (row, col) = (Layout::RowMajor, Layout::ColMajor);
        for shape in [
            (4096, 4096, 4096),
            (8192, 8192, 8192),
            (2048, 11008, 4096),
            (4096, 4096, 128),
        ] {
            let (first, picked) = pick(row, col, shape);
            assert_eq!(first, picked, "{shape:?}");
        }
        let (first, picked) = pick(row, row, (4096, 8, 4096));
        assert_eq!((first.family_id(), picked), (FamilyId::Decode, first));
        // Up to 32 rows of a row-major W the planner's first is decode_n's, and it stands.
        for m in [8, 16] {
            let (first, picked) = pick(row, row, (m, 4096, 4096));
            assert_eq!((first.family_id(), picked), (FamilyId::DecodeN, first));
        }
        let (first, picked) = pick(row, row, (64, 4096, 4096));
        assert_eq!(first.block_mn(), (128, 256), "{first}");
        assert_eq!(picked.family_id(), FamilyId::Wgmma, "{picked}");
        assert_eq!(picked.block_mn().0, 64, "{picked}");
        let (first, picked) = pick(row, col, (1000, 1000, 1000));
        assert!(
            picked != first && picked.block_mn().0 * picked.block_mn().1 < 128 * 256,
            "{picked}"
        );
        assert!(default_pick(&[], &f16(), &t, Problem::new(1, 1, 1)).is_none());
    }

    #[test]
    fn no_peak_no_estimate_and_the_order_stands() {
        let mut t = h200();
        t.peak_tflops.clear();
        let ir = f16();
        let configs = plan_target(&ir, &t, &TuneSpace::default()).configs;
        // Nothing that runs 16x16x16 fills the SMs, and every config fills them at 4096^3
        // without padding: the planner's order stands.
        for p in [Problem::new(16, 16, 16), Problem::new(4096, 4096, 4096)] {
            assert!(estimate_us(&configs[0], &ir, &t, p).is_none());
            let ok: Vec<TileConfig> = accepting(&configs, &ir, p);
            assert_eq!(by_estimate(&ok, &ir, &t, p), ok, "{p:?}");
            assert_eq!(default_pick(&ok, &ir, &t, p), Some(ok[0]));
        }
    }

    /// With no estimate (NVIDIA's OpenCL target has no peak) a default that leaves most of
    /// the GPU idle gives way to the largest tile that occupies it with little padding;
    /// where the first occupies it, the first stands.
    #[test]
    fn without_estimates_the_default_fills_the_sms() {
        let t = Targets::parse(BUILTIN_TARGETS)
            .unwrap()
            .get("nvidia_opencl")
            .unwrap()
            .clone();
        let ir = f16();
        let configs = plan_target(&ir, &t, &TuneSpace::default()).configs;
        let half = t.sm_count as f64 / 2.0;
        for (m, n, k) in [(16, 4096, 4096), (64, 4096, 4096), (1000, 1000, 1000)] {
            let p = Problem::new(m, n, k);
            let ok: Vec<TileConfig> = accepting(&configs, &ir, p);
            assert!(
                blocks(&ok[0], p) < half,
                "{m}x{n}x{k}: the planner's first {} fills the SMs",
                ok[0]
            );
            let picked = default_pick(&ok, &ir, &t, p).unwrap();
            assert!(occupies(&picked, &t, p), "{m}x{n}x{k}: {picked}");
            // The measured best of 48 candidates at 16 rows and 1000^3 (an H100, batch
            // ag1 PART=2): 16x32 in 8 splits of K, and 64x64.
            match m {
                16 => assert!(picked.block_mn() == (16, 32) && picked.k_split() == 8, "{picked}"),
                1000 => assert_eq!(picked.block_mn(), (64, 64), "{picked}"),
                _ => {}
            }
            // Little padding: at 16 and 64 rows tiles of at most as many rows, not the
            // planner's 128-row ones.
            assert!(padded_area(&picked, p) <= 1.1 * (m * n) as f64, "{m}x{n}x{k}: {picked}");
            // A mid-size tune's short list holds the tiles that fill the GPU, the
            // splits over work-groups among them (2.2-2.5x faster at 16-64 rows, af1).
            let short: Vec<TileConfig> = by_estimate(&ok, &ir, &t, p).into_iter().take(16).collect();
            assert_eq!(short[0], picked);
            assert!(short.iter().all(|c| blocks(c, p) >= half), "{m}x{n}x{k}: {short:?}");
            if m <= 64 {
                assert!(short.iter().any(|c| c.k_split() > 1), "{m}x{n}x{k}: {short:?}");
            }
        }
        let p = Problem::new(4096, 4096, 4096);
        assert_eq!(default_pick(&configs, &ir, &t, p), Some(configs[0]));
    }

    /// At one column (tf32, a table with no skinny bucket) the default is a turned gemv and
    /// a far bucket's wgmma tile does not replace it; a specialist start, or any start
    /// where the default is a general tile, does.
    #[test]
    fn a_specialist_default_outranks_a_general_start() {
        let t = h200();
        let ir = GemmIr::matmul(
            "k",
            DType::F32,
            AccMode::Tf32,
            crate::ir::Layout::RowMajor,
            crate::ir::Layout::ColMajor,
        );
        let configs = plan_target(&ir, &t, &TuneSpace::default()).configs;
        let runs = |p: Problem| -> Vec<TileConfig> { accepting(&configs, &ir, p) };
        let skinny = Problem::new(12288, 1, 4096);
        let default = default_pick(&runs(skinny), &ir, &t, skinny).unwrap();
        assert!(default.is_specialist(&t), "{default}");
        let wgmma = *runs(skinny)
            .iter()
            .find(|c| c.family_id() == crate::family::FamilyId::Wgmma)
            .expect("a wgmma tile runs 12288x1x4096");
        assert!(!start_over_default(&wgmma, &default, &t));
        let other = *runs(skinny)
            .iter()
            .find(|c| c.is_specialist(&t) && **c != default)
            .unwrap();
        assert!(start_over_default(&other, &default, &t));
        let square = Problem::new(4096, 4096, 4096);
        let general = default_pick(&runs(square), &ir, &t, square).unwrap();
        assert!(!general.is_specialist(&t), "{general}");
        assert!(start_over_default(&wgmma, &general, &t));
    }

    /// gemv_n's planner order splits K in 4 first; its K-whole twin is the default where
    /// the tiles alone make a full wave (2x50257x768: 786 blocks), not where they leave
    /// SMs idle (1x4096x4096: 64), on a GPU with estimates or without.
    #[test]
    fn a_split_gives_way_to_k_whole_where_the_tiles_fill_a_wave() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for name in ["h200", "nvidia_opencl"] {
            let t = targets.get(name).unwrap().clone();
            let ir = GemmIr::matmul(
                "k",
                DType::F32,
                AccMode::F32,
                crate::ir::Layout::RowMajor,
                crate::ir::Layout::RowMajor,
            );
            let configs = plan_target(&ir, &t, &TuneSpace::default()).configs;
            let pick = |p: Problem| {
                let ok: Vec<TileConfig> = accepting(&configs, &ir, p);
                assert!(ok[0].k_split() > 1, "{name}: {}", ok[0]);
                default_pick(&ok, &ir, &t, p).unwrap()
            };
            let wide = pick(Problem::new(2, 50257, 768));
            assert_eq!(
                (wide.family_id(), wide.k_split()),
                (crate::family::FamilyId::GemvN, 1),
                "{name}: {wide}"
            );
            let narrow = pick(Problem::new(1, 4096, 4096));
            assert!(narrow.k_split() > 1, "{name}: {narrow}");
        }
    }
}
