//! Every generated kernel against the host reference, on every device found (PoCL in
//! CI; CUDA and NVIDIA's OpenCL on the GPU machine): each dtype, each layout, each
//! epilogue op, shapes that are not multiples of any tile, and every planned config of
//! the plain kernels.

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::TileConfig;

// --- layouts and dtypes -------------------------------------------------------------

#[gemm_kernel]
fn f16_rc(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f16> {
    a * b
}
#[gemm_kernel]
fn f16_rr(a: Matrix<f16>, b: Matrix<f16>) -> Matrix<f16> {
    a * b
}
/// With the wgmma family's operand-reuse variants in its plan (opt-in: `tune(reuse = 1)`),
/// K-major and MN-major.
#[gemm_kernel(tune(reuse = 1))]
fn f16_rc_reuse(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f16> {
    a * b
}
#[gemm_kernel(tune(reuse = 1))]
fn f16_cr_reuse(a: Matrix<f16, ColMajor>, b: Matrix<f16>) -> Matrix<f16> {
    a * b
}
/// With the wgmma family's stream-K variants in its plan (opt-in: `tune(streamk = ..)`).
#[gemm_kernel(tune(streamk = 1))]
fn f16_rc_sk(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f16> {
    a * b
}
/// B row-major in bf16 with an f32 output (the decode_n family's other dtype).
/// The wgmma family's turned-around tiles (`Cᵀ = Bᵀ·Aᵀ`) with a row-major and a
/// column-major B.
#[gemm_kernel(tune(turned = 1))]
fn f16_rr_turned(a: Matrix<f16>, b: Matrix<f16>) -> Matrix<f16> {
    a * b
}
#[gemm_kernel(tune(turned = 1))]
fn bf16_rc_turned(a: Matrix<bf16>, b: Matrix<bf16, ColMajor>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel]
fn bf16_rr(a: Matrix<bf16>, b: Matrix<bf16>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel]
fn f16_cr(a: Matrix<f16, ColMajor>, b: Matrix<f16>) -> Matrix<f16> {
    a * b
}
#[gemm_kernel]
fn f16_cc_out_col(a: Matrix<f16, ColMajor>, b: Matrix<f16, ColMajor>) -> Matrix<f16, ColMajor> {
    a * b
}
#[gemm_kernel]
fn f16_transposed(a: Matrix<f16>, b: Matrix<f16>) -> Matrix<f32> {
    a.t() * b.t()
}
#[gemm_kernel]
fn bf16_rc(a: Matrix<bf16>, b: Matrix<bf16, ColMajor>) -> Matrix<bf16> {
    a * b
}
#[gemm_kernel]
fn bf16_cr(a: Matrix<bf16, ColMajor>, b: Matrix<bf16>) -> Matrix<f32> {
    a * b
}
// Scalar FMA on the CUDA targets, on purpose: the f32 path is under test.
#[gemm_kernel(fma_ok)]
fn f32_rr(a: Matrix<f32>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}
// Scalar FMA on the CUDA targets, on purpose: the f32 path is under test.
#[gemm_kernel(fma_ok)]
fn f32_cc(a: Matrix<f32, ColMajor>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32)]
fn tf32_rc(a: Matrix<f32>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}
// The M-major A and N-major B that tf32 wgmma cannot take: mma.sync on the H200, on purpose.
#[gemm_kernel(acc = tf32, layout_ok)]
fn tf32_cr(a: Matrix<f32, ColMajor>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}
// The decode kernel's tf32 small side stored across: a row-major B turned around, a
// column-major A plain (the N-major B and M-major A that tf32 wgmma cannot take); the
// first is decode_n's tf32 form too.
#[gemm_kernel(acc = tf32, layout_ok)]
fn tf32_rr(a: Matrix<f32>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32, layout_ok)]
fn tf32_cc(a: Matrix<f32, ColMajor>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}

/// Runs a two-operand kernel on every device and shape and compares with its reference.
macro_rules! check_plain {
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $tf32:expr, $a_t:expr, $b_t:expr, $seed:expr) => {{
        for dev in devices() {
            let mut r = rng($seed);
            for &(m, n, k) in SHAPES {
                let (ar, ac) = if $a_t { (k, m) } else { (m, k) };
                let (br, bc) = if $b_t { (n, k) } else { (k, n) };
                let a = mat::<$ta, $la>(&dev, &mut r, ar, ac);
                let b = mat::<$tb, $lb>(&dev, &mut r, br, bc);
                let got = $kernel(&a, &b).unwrap().to_host().unwrap();
                let want = $kernel::reference(&a, &b).unwrap();
                assert_close(
                    &got,
                    &want,
                    k,
                    $tf32,
                    &format!("{} {m}x{n}x{k} on {}", stringify!($kernel), dev.info()),
                );
            }
        }
    }};
}

#[test]
fn f16_layouts() {
    check_plain!(f16_rc, f16, RowMajor, f16, ColMajor, false, false, false, 1);
    check_plain!(f16_rr, f16, RowMajor, f16, RowMajor, false, false, false, 2);
    check_plain!(f16_cr, f16, ColMajor, f16, RowMajor, false, false, false, 3);
    check_plain!(f16_cc_out_col, f16, ColMajor, f16, ColMajor, false, false, false, 4);
    check_plain!(f16_transposed, f16, RowMajor, f16, RowMajor, false, true, true, 5);
}

#[test]
fn bf16_layouts() {
    check_plain!(bf16_rc, bf16, RowMajor, bf16, ColMajor, false, false, false, 6);
    check_plain!(bf16_cr, bf16, ColMajor, bf16, RowMajor, false, false, false, 7);
}

#[test]
fn f32_and_tf32() {
    check_plain!(f32_rr, f32, RowMajor, f32, RowMajor, false, false, false, 8);
    check_plain!(f32_cc, f32, ColMajor, f32, ColMajor, false, false, false, 9);
    check_plain!(tf32_rc, f32, RowMajor, f32, ColMajor, true, false, false, 10);
    check_plain!(tf32_cr, f32, ColMajor, f32, RowMajor, true, false, false, 11);
}

// --- every planned config -----------------------------------------------------------

/// Whether a launch of a config ran (true: its output is to be judged), as its family
/// said it would: a shape the family accepts must launch, and one it refuses must fail
/// saying that the config cannot run it.
fn ran_as_accepted(what: &str, launch: crossgemm::Result<()>, accepted: Result<(), String>) -> bool {
    match (launch, accepted) {
        (Ok(()), Ok(())) => true,
        (Err(e), Err(_)) => {
            assert!(e.to_string().contains("cannot run"), "{what}: {e}");
            false
        }
        (r, a) => panic!("{what}: launch {r:?}, but the family says {a:?}"),
    }
}

/// Launches `$kernel` with `$cfg` into `$out` and judges the launch by
/// [`ran_as_accepted`]: `(whether it ran, what it was)`.
macro_rules! launch_judged {
    ($kernel:ident, $cfg:expr, $dev:expr, $a:expr, $b:expr, $out:expr, ($m:expr, $n:expr, $k:expr)) => {{
        let what = format!(
            "{} config {} at {}x{}x{} on {}",
            stringify!($kernel),
            $cfg,
            $m,
            $n,
            $k,
            $dev.info()
        );
        let accepted = $cfg
            .family()
            .accepts(&$cfg, $kernel::SPEC.ir(), crossgemm::Problem::new($m, $n, $k));
        let ran = ran_as_accepted(&what, $kernel::run_with(&$cfg, &$a, &$b, &mut $out), accepted);
        (ran, what)
    }};
}

/// Every config the planner keeps for the device's target (the tuner may pick any of
/// them), each on shapes of its own: aligned (the vector / TMA load paths) spanning three
/// blocks in M and N (the last one partial) and twice the K its load ring holds (the ring
/// wraps); the same with one block of rows, and with one block of columns (a turned-around
/// gemv takes at most `MR` of them); and odd ones (67x45x77 and 7x45x77: element loads,
/// ragged edges; 67x45x72 and 7x45x72 with K a multiple of 8, and 66x46x77 and 6x46x77 with
/// M and N even, for families whose loads need 4- or 16-byte rows along K or along M/N; the
/// second of each with at most as many rows as one block; 67x7x77 and 67x7x72 with at most
/// as many columns; 7x40x72 with rows of 16 bytes along both K and N).
/// Each runs where its family accepts the shape, and where it does
/// not, a launch with it must say so; every config runs at least one aligned and one odd
/// shape.
macro_rules! check_all_configs {
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $tf32:expr, $seed:expr) => {
        check_all_configs!(@run $kernel, $ta, $la, $tb, $lb, $tf32, $seed,
            |dev: &Device, dtype| fitting_configs(&$kernel::SPEC, dev, dtype), |_: &Device| true)
    };
    // The turned-around wgmma configs, on the devices whose target plans them.
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $tf32:expr, $seed:expr, turned, on $planned:expr) => {
        check_all_configs!(@run $kernel, $ta, $la, $tb, $lb, $tf32, $seed,
            |dev: &Device, _| turned_configs(&$kernel::SPEC, dev), $planned)
    };
    // One family's configs, on the devices whose target plans it.
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $tf32:expr, $seed:expr, family $family:expr, on $planned:expr) => {
        check_all_configs!(@run $kernel, $ta, $la, $tb, $lb, $tf32, $seed,
            |dev: &Device, _| family_configs(&$kernel::SPEC, dev, $family), $planned)
    };
    (@run $kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $tf32:expr, $seed:expr, $configs:expr, $planned:expr) => {{
        for dev in devices() {
            let mut r = rng($seed);
            let dtype = <$ta as crossgemm::Element>::DTYPE;
            let configs = $configs(&dev, dtype);
            assert_planned(&configs, &dev, $planned(&dev), stringify!($kernel));
            for cfg in configs {
                let (bm, bn) = cfg.block_mn();
                let ring = cfg.resources(dtype).ring_k as usize;
                let (bm, bn) = (bm as usize, bn as usize);
                let (n, k) = (2 * bn + 8, 2 * ring + 8);
                let few = bm.min(7);
                let aligned = 3;
                let shapes = [
                    (2 * bm + (bm / 2).max(8), n, k),
                    (bm, n, k),
                    (2 * bm + (bm / 2).max(8), bn, k),
                    (67, 45, 77),
                    (few, 45, 77),
                    (67, 45, 72),
                    (few, 45, 72),
                    (66, 46, 77),
                    (few.min(6), 46, 77),
                    // Ragged in every tile yet 16-byte rows for M- and N-major operands:
                    // the TMA path (and B multicast) at an edge.
                    (136, 88, 77),
                    (67, bn.min(7), 77),
                    (67, bn.min(7), 72),
                    // 16-byte rows along K and N, neither a multiple of a block: the
                    // families that need both (decode_n) at an edge.
                    (few, 40, 72),
                ];
                let mut ran = [false; 2];
                for (s, (m, n, k)) in shapes.into_iter().enumerate() {
                    let a = mat::<$ta, $la>(&dev, &mut r, m, k);
                    let b = mat::<$tb, $lb>(&dev, &mut r, k, n);
                    let mut out = Matrix::zeros(&dev, m, n).unwrap();
                    let (launched, what) = launch_judged!($kernel, cfg, dev, a, b, out, (m, n, k));
                    if launched {
                        let want = $kernel::reference(&a, &b).unwrap();
                        assert_close(&out.to_host().unwrap(), &want, k, $tf32, &what);
                        ran[usize::from(s >= aligned)] = true;
                    }
                }
                assert_eq!(
                    ran,
                    [true; 2],
                    "{} config {cfg}: no aligned or no odd shape ran",
                    stringify!($kernel)
                );
            }
        }
    }};
}

#[test]
fn every_planned_config_f16() {
    let _narrowed = narrowed_run_check();
    check_all_configs!(f16_rc, f16, RowMajor, f16, ColMajor, false, 21);
    check_all_configs!(f16_cr, f16, ColMajor, f16, RowMajor, false, 22);
}

#[test]
fn every_planned_config_bf16_f32() {
    let _narrowed = narrowed_run_check();
    check_all_configs!(bf16_rc, bf16, RowMajor, bf16, ColMajor, false, 23);
    check_all_configs!(f32_rr, f32, RowMajor, f32, RowMajor, false, 24);
    check_all_configs!(tf32_rc, f32, RowMajor, f32, ColMajor, true, 25);
}

/// The decode_n kernels (A and B row-major; CUDA targets plan them): every planned
/// config, f16, bf16 with an f32 output, and f32 rounded to tf32.
#[test]
fn every_planned_decode_n_config() {
    let _narrowed = narrowed_run_check();
    let cuda = |dev: &Device| dev.info().kind == Backend::Cuda;
    use crossgemm::FamilyId::DecodeN;
    check_all_configs!(f16_rr, f16, RowMajor, f16, RowMajor, false, 26, family DecodeN, on cuda);
    check_all_configs!(bf16_rr, bf16, RowMajor, bf16, RowMajor, false, 27, family DecodeN, on cuda);
    check_all_configs!(tf32_rr, f32, RowMajor, f32, RowMajor, true, 49, family DecodeN, on cuda);
}

/// Every OpenCL family's diagnosis variants (the sources `crossgemm diagnose` times beside
/// the kernel: load-only, no epilogue, compute-only, no store) compile and run on each
/// OpenCL device: the first config of each family and form (plain, turned around) of an
/// f16 kernel with a column-major B and an f32 one with a row-major B (simt, gemv with
/// its small side K-contiguous and across, gemv_n), at an odd shape each takes. Nothing
/// else builds them on OpenCL (diagnose's CLI test times simt's); the CUDA ones compile
/// through NVRTC in tests/nvrtc.rs. gemv_n's load-only variant did not compile here.
#[test]
fn opencl_diagnosis_variants_compile_and_run() {
    macro_rules! variants {
        ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $to:ty, $seed:expr) => {{
            let mut families = std::collections::BTreeSet::new();
            for dev in devices().into_iter().filter(|d| d.info().kind == Backend::Opencl) {
                let mut r = rng($seed);
                let dtype = <$ta as crossgemm::Element>::DTYPE;
                for cfg in first_per_family_and_form(&fitting_configs(&$kernel::SPEC, &dev, dtype)) {
                    families.insert(cfg.family_id());
                    let (bm, bn) = cfg.block_mn();
                    let (m, n, k) = [
                        (67, 45, 77),
                        ((bm as usize).min(7), 45, 77),
                        (67, (bn as usize).min(7), 77),
                    ]
                    .into_iter()
                    .find(|&(m, n, k)| {
                        let p = crossgemm::Problem::new(m, n, k);
                        cfg.family().accepts(&cfg, $kernel::SPEC.ir(), p).is_ok()
                    })
                    .unwrap_or_else(|| panic!("{cfg}: no shape it takes"));
                    let a = mat::<$ta, $la>(&dev, &mut r, m, k);
                    let b = mat::<$tb, $lb>(&dev, &mut r, k, n);
                    let mut out = Matrix::<$to>::zeros(&dev, m, n).unwrap();
                    for v in crossgemm::Variant::ALL.into_iter().filter(|v| !v.is_full()) {
                        let what = format!(
                            "{} {cfg} {} at {m}x{n}x{k} on {}",
                            stringify!($kernel),
                            v.name(),
                            dev.info()
                        );
                        let args = [a.__arg(), b.__arg()];
                        let p = crossgemm::bench::prepare_config(&$kernel::SPEC, &args, out.__out(), &cfg, v)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        crossgemm::bench::run_prepared(&$kernel::SPEC, &args, out.__out(), &p)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                    }
                }
            }
            families
        }};
    }
    let mut families = variants!(f16_rc, f16, RowMajor, f16, ColMajor, f16, 49);
    families.extend(variants!(f32_rr, f32, RowMajor, f32, RowMajor, f32, 50));
    if devices().iter().any(|d| d.info().kind == Backend::Opencl) {
        use crossgemm::FamilyId::{Gemv, GemvN, Simt};
        assert_eq!(
            families,
            [Simt, Gemv, GemvN].into_iter().collect(),
            "the OpenCL families"
        );
    }
}

/// The decode kernels whose small side is stored across, its few rows contiguous
/// (`movmatrix` turns its pieces): a row-major B turned around (N ≤ 32; f16, and bf16
/// with an f32 output) and a column-major A in the plain form (with a column-major
/// output); every planned config on the every-config shapes (7 columns or rows: pairs
/// of elements read apart; 8 and more: as one load), CUDA targets only. tf32's (elements
/// loaded one by one) in both forms too.
#[test]
fn every_planned_decode_config_across() {
    let _narrowed = narrowed_run_check();
    let cuda = |dev: &Device| dev.info().kind == Backend::Cuda;
    use crossgemm::FamilyId::Decode;
    check_all_configs!(f16_rr, f16, RowMajor, f16, RowMajor, false, 40, family Decode, on cuda);
    check_all_configs!(bf16_rr, bf16, RowMajor, bf16, RowMajor, false, 41, family Decode, on cuda);
    check_all_configs!(f16_cc_out_col, f16, ColMajor, f16, ColMajor, false, 42, family Decode, on cuda);
    check_all_configs!(tf32_rr, f32, RowMajor, f32, RowMajor, true, 47, family Decode, on cuda);
    check_all_configs!(tf32_cc, f32, ColMajor, f32, ColMajor, true, 48, family Decode, on cuda);
}

/// The gemv kernels whose small side is stored across (`cg_x_across`, its few rows
/// contiguous, read as vectors of 8, 4, 2 or 1 elements by their alignment): a row-major B
/// turned around (f16, and bf16 with an f32 output) and a column-major A in the plain form
/// (with a column-major output); every planned config on the every-config shapes, on
/// every device (f32's across configs run in `every_planned_config_bf16_f32`).
#[test]
fn every_planned_gemv_config_across() {
    let _narrowed = narrowed_run_check();
    let all = |_: &Device| true;
    use crossgemm::FamilyId::Gemv;
    check_all_configs!(f16_rr, f16, RowMajor, f16, RowMajor, false, 43, family Gemv, on all);
    check_all_configs!(bf16_rr, bf16, RowMajor, bf16, RowMajor, false, 44, family Gemv, on all);
    check_all_configs!(f16_cc_out_col, f16, ColMajor, f16, ColMajor, false, 45, family Gemv, on all);
}

/// The wgmma family's turned-around configs (`tune(turned = 1)`; CUDA targets with
/// wgmma plan them), on the every-config shapes: few rows of C are the turned kernel's
/// columns.
#[test]
fn every_turned_wgmma_config() {
    let _narrowed = narrowed_run_check();
    let wgmma = |dev: &Device| {
        f16_rr_turned::SPEC
            .target_for(dev)
            .is_ok_and(|t| t.plan().families.contains(&crossgemm::FamilyId::Wgmma))
    };
    check_all_configs!(f16_rr_turned, f16, RowMajor, f16, RowMajor, false, 28, turned, on wgmma);
    check_all_configs!(bf16_rc_turned, bf16, RowMajor, bf16, ColMajor, false, 29, turned, on wgmma);
}

/// The persistent wgmma grids (at most one block per multiprocessor) loop over the output
/// tiles: at a shape of 300 and more tiles (3304x3304x136, every tile size the planner
/// keeps, edges ragged), each block takes two or more, so the ring runs on across tiles,
/// the ping-pong consumers take turns and stream-K shares out a wave of tiles (none of
/// the grids divides the tile count). The suite's other shapes have at most nine tiles:
/// one per block. Every planned wgmma config of three kernels against one host reference
/// each (CUDA targets with wgmma only; elsewhere nothing is persistent).
macro_rules! check_persistent_loops {
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $seed:expr) => {
        check_persistent_loops!($kernel, $ta, $la, $tb, $lb, $seed, 136, |_: &TileConfig| true)
    };
    // The configs `keep` takes, at depth `k`.
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $seed:expr, $k:expr, $keep:expr) => {{
        for dev in devices() {
            let dtype = <$ta as crossgemm::Element>::DTYPE;
            let configs: Vec<TileConfig> = fitting_configs(&$kernel::SPEC, &dev, dtype)
                .into_iter()
                .filter(|c| matches!(c, TileConfig::Wgmma(_)) && $keep(c))
                .collect();
            if configs.is_empty() {
                continue;
            }
            let (m, n, k) = (3304, 3304, $k);
            let mut r = rng($seed);
            let a = mat::<$ta, $la>(&dev, &mut r, m, k);
            let b = mat::<$tb, $lb>(&dev, &mut r, k, n);
            let want = $kernel::reference(&a, &b).unwrap();
            for cfg in configs {
                let (bm, bn) = cfg.block_mn();
                let tiles = m.div_ceil(bm as usize) * n.div_ceil(bn as usize);
                assert!(
                    tiles >= 2 * dev.info().compute_units as usize + 30,
                    "{cfg}: {tiles} tiles"
                );
                let mut out = Matrix::zeros(&dev, m, n).unwrap();
                let (launched, what) = launch_judged!($kernel, cfg, dev, a, b, out, (m, n, k));
                if launched {
                    assert_close(&out.to_host().unwrap(), &want, k, false, &what);
                }
            }
        }
    }};
}

#[test]
fn persistent_grids_loop_over_tiles() {
    let _narrowed = narrowed_run_check();
    check_persistent_loops!(f16_rc, f16, RowMajor, f16, ColMajor, 26);
    check_persistent_loops!(f16_cr, f16, ColMajor, f16, RowMajor, 27);
    check_persistent_loops!(f16_rc_sk, f16, RowMajor, f16, ColMajor, 28);
}

/// The wgmma configs that keep operand tiles in their ring across a block's run of work
/// items (`tune(reuse = 1)`), K-major and MN-major, at K = 136 and 128 (3 and 2 k-tiles:
/// rings of 6 stages keep tiles from 2 and 3 items before, rings of 4 from 2 items at K =
/// 128 only) and K = 72 (2 k-tiles, the second ragged); the persistent grid walks 5 items
/// a block and more, so most items keep A or B. Against the host reference, and the same
/// bits as the strided walk of the same tile (which adds the same products in the same
/// order). CUDA targets with wgmma only.
#[test]
fn reuse_configs_keep_operand_tiles_across_items() {
    let _narrowed = narrowed_run_check();
    let reuse = |c: &TileConfig| matches!(c, TileConfig::Wgmma(w) if w.reuse);
    for k in [136, 128, 72] {
        check_persistent_loops!(f16_rc_reuse, f16, RowMajor, f16, ColMajor, 29, k, reuse);
        check_persistent_loops!(f16_cr_reuse, f16, ColMajor, f16, RowMajor, 30, k, reuse);
    }
    for dev in devices() {
        let configs: Vec<TileConfig> = fitting_configs(&f16_rc_reuse::SPEC, &dev, crossgemm::DType::F16)
            .into_iter()
            .filter(|c| reuse(c))
            .collect();
        if configs.is_empty() {
            continue;
        }
        let (m, n, k) = (2056, 3000, 128);
        let mut r = rng(31);
        let a = mat::<f16, RowMajor>(&dev, &mut r, m, k);
        let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
        for cfg in configs {
            let TileConfig::Wgmma(t) = cfg else { continue };
            let strided = TileConfig::Wgmma(crossgemm::WgmmaTile { reuse: false, ..t });
            let run = |c: &TileConfig| {
                let mut out = Matrix::<f16>::zeros(&dev, m, n).unwrap();
                f16_rc_reuse::run_with(c, &a, &b, &mut out).unwrap();
                out.to_host().unwrap()
            };
            let (kept, plain) = (run(&cfg), run(&strided));
            assert!(
                kept.iter().zip(&plain).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{cfg} at {m}x{n}x{k} on {}: not the strided walk's bits",
                dev.info()
            );
        }
    }
}

/// Blocks of a cluster share a tile by multicast (the first block of each cluster column
/// fetches B into every block of the column, of each row A into the row): 2-block
/// clusters along M and along N, 2x2 clusters and clusters of 8 (4x2, 2x4), on
/// K-major and MN-major operands, 16-bit and tf32, with BN 192 (three 64-column boxes of
/// an N-major B), ragged edges (blocks past M and N still load for the others) and a grid
/// that loops over tiles. Clusters are planned last (or, 2x2, not at all), so the planned
/// configs above may hold none of these. CUDA targets with wgmma only.
macro_rules! check_clusters {
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $tf32:expr, $seed:expr) => {{
        for dev in devices() {
            let dtype = <$ta as crossgemm::Element>::DTYPE;
            // Whether the device runs wgmma at all, not whether a planned config passes
            // CROSSGEMM_TEST_CONFIGS (which narrows the configs below instead).
            if !plans_wgmma(&$kernel::SPEC, &dev, dtype) {
                continue;
            }
            let mut r = rng($seed);
            let t = |bm, bn, stages, consumers| crossgemm::WgmmaTile::for_dtype(bm, bn, stages, consumers, dtype);
            let pair = |w: crossgemm::WgmmaTile| crossgemm::WgmmaTile { cluster_m: 2, ..w };
            let row = |w: crossgemm::WgmmaTile| crossgemm::WgmmaTile { cluster_n: 2, ..w };
            let configs = [
                pair(t(64, 128, 6, 1)),
                pair(t(128, 128, 4, 2)),
                pair(t(128, 192, 3, 2)),
                row(t(128, 128, 4, 2)),
                pair(row(t(128, 128, 4, 2))),
                pair(row(t(128, 192, 3, 2))),
                // Clusters of 8: B shared by 4 blocks and A by 2, and the other way round.
                crossgemm::WgmmaTile {
                    cluster_m: 4,
                    ..row(t(128, 128, 4, 2))
                },
                crossgemm::WgmmaTile {
                    cluster_n: 4,
                    ..pair(t(64, 128, 6, 1))
                },
            ];
            // Ragged in every tile with rows of 16-byte multiples (TMA), then enough tiles
            // for every block to take several.
            for (m, n, k) in [(520, 328, 264), (1000, 1000, 200), (3304, 1000, 136)] {
                let a = mat::<$ta, $la>(&dev, &mut r, m, k);
                let b = mat::<$tb, $lb>(&dev, &mut r, k, n);
                let want = $kernel::reference(&a, &b).unwrap();
                for w in configs {
                    let w = crossgemm::WgmmaTile {
                        inflight: w.consumers == 1,
                        ..w
                    };
                    if let Err(why) = w.validate($kernel::SPEC.ir()) {
                        panic!("{}: {w:?} breaks a rule: {why}", stringify!($kernel));
                    }
                    let cfg = TileConfig::Wgmma(w);
                    if !kept_by_filter(&cfg) {
                        continue;
                    }
                    let mut out = Matrix::zeros(&dev, m, n).unwrap();
                    let (launched, what) = launch_judged!($kernel, cfg, dev, a, b, out, (m, n, k));
                    assert!(launched, "{what}: a cluster config did not run on 16-byte rows");
                    assert_close(&out.to_host().unwrap(), &want, k, $tf32, &what);
                }
            }
        }
    }};
}

#[test]
fn cluster_blocks_share_their_tiles() {
    let _narrowed = narrowed_run_check();
    check_clusters!(f16_rc, f16, RowMajor, f16, ColMajor, false, 41);
    check_clusters!(f16_cr, f16, ColMajor, f16, RowMajor, false, 42);
    check_clusters!(bf16_cr, bf16, ColMajor, bf16, RowMajor, false, 43);
    check_clusters!(tf32_rc, f32, RowMajor, f32, ColMajor, true, 44);
}

/// The opt-in wgmma variants are planned where a kernel asks (so the persistent tests
/// above run them on a GPU) and nowhere else: stream-K (`tune(streamk = 1)`) and operand
/// reuse (`tune(reuse = 1)`, K-major and MN-major).
#[test]
fn opt_in_wgmma_variants_are_planned_only_when_asked() {
    // Planned wgmma configs of `spec` on the h200 that `is` takes; None in builds without
    // the `sm90` feature, which plan no h200 target.
    fn planned(spec: &crossgemm::KernelSpec, is: fn(&crossgemm::WgmmaTile) -> bool) -> Option<usize> {
        spec.target("h200").map(|t| {
            t.plan()
                .configs
                .iter()
                .filter(|c| matches!(c, TileConfig::Wgmma(w) if is(w)))
                .count()
        })
    }
    let streamk: fn(&crossgemm::WgmmaTile) -> bool = |w| w.streamk;
    let reuse: fn(&crossgemm::WgmmaTile) -> bool = |w| w.reuse;
    if let Some(n) = planned(&f16_rc_sk::SPEC, streamk) {
        assert!(n > 0, "no stream-K config planned for f16_rc_sk");
        assert_eq!(planned(&f16_rc::SPEC, streamk), Some(0));
        assert!(planned(&f16_rc_reuse::SPEC, reuse).unwrap() > 0);
        assert!(planned(&f16_cr_reuse::SPEC, reuse).unwrap() > 0);
        assert_eq!(planned(&f16_rc::SPEC, reuse), Some(0));
        assert_eq!(planned(&f16_rc_sk::SPEC, reuse), Some(0));
    }
}

/// Runs `$kernel` with config `$cfg` on `$a`, `$b` twice into fresh `$out` matrices, and
/// asserts that the two agree bit for bit and that the first matches the host reference.
macro_rules! same_bits_twice {
    ($kernel:ident, $out:ty, $dev:expr, $cfg:expr, $a:expr, $b:expr, ($m:expr, $n:expr, $k:expr), $what:expr) => {{
        let run = || {
            let mut out = Matrix::<$out>::zeros($dev, $m, $n).unwrap();
            $kernel::run_with(&$cfg, &$a, &$b, &mut out).unwrap();
            out.to_host().unwrap()
        };
        let (first, second) = (run(), run());
        assert!(
            first.iter().zip(&second).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{}: two runs differ",
            $what
        );
        assert_close(&first, &$kernel::reference(&$a, &$b).unwrap(), $k, false, &$what);
    }};
}

/// The shape a same-bits test runs a shape specialist's config at: its small side (M, or
/// N turned around) `small(s)` of the config's `s`, the wide side `wide(w)` of its block's
/// `w`, and `k`; turned around where the config takes that shape (its turned-around form),
/// else plain.
fn small_side_shape(
    cfg: &TileConfig,
    spec: &crossgemm::KernelSpec,
    k: usize,
    small: impl Fn(usize) -> usize,
    wide: impl Fn(usize) -> usize,
) -> (usize, usize, usize) {
    let (bm, bn) = cfg.block_mn();
    let (bm, bn) = (bm as usize, bn as usize);
    let (m, n) = (wide(bm), small(bn));
    if cfg
        .family()
        .accepts(cfg, spec.ir(), crossgemm::Problem::new(m, n, k))
        .is_ok()
    {
        (m, n, k)
    } else {
        (small(bm), wide(bn), k)
    }
}

/// The gemv kernels sum in a fixed order (lanes, then the K-split warps in order; on
/// OpenCL through local memory), so two runs of a config give the same bits, with K
/// split over every lane and warp (issue 10: determinism checked by running twice).
#[test]
fn gemv_configs_give_the_same_bits_twice() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(31);
        let gemv = family_configs(&f16_rc::SPEC, &dev, crossgemm::FamilyId::Gemv);
        // Every OpenCL and CUDA target plans gemv for this kernel (B column-major).
        assert!(
            !gemv.is_empty() || dev.info().kind == Backend::Host || configs_narrowed(),
            "no gemv config planned for {}",
            dev.info()
        );
        for cfg in gemv {
            // M up to the config's rows, or N up to its columns turned around.
            let (m, n, k) = small_side_shape(&cfg, &f16_rc::SPEC, 4104, |s| s, |_| 70);
            let a = mat::<f16, RowMajor>(&dev, &mut r, m, k);
            let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
            let what = format!("gemv {cfg} at {m}x{n}x{k} on {}", dev.info());
            same_bits_twice!(f16_rc, f16, &dev, cfg, a, b, (m, n, k), what);
        }
    }
}

/// The decode kernels add the K-split warps' sums through shared memory in warp order,
/// so two runs of a config give the same bits: K = 4104 (a chunk that crosses K after the
/// whole super-steps), M one short of the config's rows and N past its last block (turned
/// around, N one short of its columns and M past its last block).
/// Only CUDA targets plan the family (mma.sync).
#[test]
fn decode_configs_give_the_same_bits_twice() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(33);
        let decode = family_configs(&f16_rc::SPEC, &dev, crossgemm::FamilyId::Decode);
        assert_planned(&decode, &dev, dev.info().kind == Backend::Cuda, "decode");
        for cfg in decode {
            let (m, n, k) = small_side_shape(&cfg, &f16_rc::SPEC, 4104, |s| s - 1, |w| 2 * w + 5);
            let a = mat::<f16, RowMajor>(&dev, &mut r, m, k);
            let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
            let what = format!("{cfg} at {m}x{n}x{k} on {}", dev.info());
            same_bits_twice!(f16_rc, f16, &dev, cfg, a, b, (m, n, k), what);
        }
    }
}

/// The `gemv_n` kernels (B row-major, or turned around A column-major) add their K-lanes'
/// sums by shuffles and the warps' through shared memory in order (on OpenCL through
/// local memory in work-item order) and the K splits' in split order, so two runs of a
/// config give the same bits (and a split's counters are left zero for the next): both
/// forms of f16 (`f16_cr` plans both) and bf16 with an f32 output, K = 4103 (a step that
/// crosses K), the small side one short of the config's and the wide side past its last
/// block with a last chunk of 5 columns.
#[test]
fn gemv_n_configs_give_the_same_bits_twice() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(35);
        let f16 = family_configs(&f16_cr::SPEC, &dev, crossgemm::FamilyId::GemvN);
        assert_planned(&f16, &dev, dev.info().kind != Backend::Host, "gemv_n");
        // The small side one short of the config's (1 for a config of one), the wide
        // side past its last block.
        let shape =
            |cfg: &TileConfig, spec| small_side_shape(cfg, spec, 4103, |s| s - usize::from(s > 1), |w| 2 * w + 5);
        for cfg in f16 {
            let (m, n, k) = shape(&cfg, &f16_cr::SPEC);
            let a = mat::<f16, ColMajor>(&dev, &mut r, m, k);
            let b = mat::<f16, RowMajor>(&dev, &mut r, k, n);
            let what = format!("{cfg} at {m}x{n}x{k} on {}", dev.info());
            same_bits_twice!(f16_cr, f16, &dev, cfg, a, b, (m, n, k), what);
        }
        for cfg in family_configs(&bf16_cr::SPEC, &dev, crossgemm::FamilyId::GemvN) {
            let (m, n, k) = shape(&cfg, &bf16_cr::SPEC);
            let a = mat::<bf16, ColMajor>(&dev, &mut r, m, k);
            let b = mat::<bf16, RowMajor>(&dev, &mut r, k, n);
            let what = format!("{cfg} at {m}x{n}x{k} on {}", dev.info());
            same_bits_twice!(bf16_cr, f32, &dev, cfg, a, b, (m, n, k), what);
        }
    }
}

/// The decode_n kernels add their warps' sums in warp order and their K splits' in split
/// order, so two runs of a config give the same bits: K = 4104 (a chunk that crosses K),
/// M one short of the config's rows and N past its last block (a partial strip).
#[test]
fn decode_n_configs_give_the_same_bits_twice() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(36);
        let configs = family_configs(&f16_rr::SPEC, &dev, crossgemm::FamilyId::DecodeN);
        assert_planned(&configs, &dev, dev.info().kind == Backend::Cuda, "decode_n");
        for cfg in configs {
            // N past a strip on 16-byte rows.
            let (m, n, k) = small_side_shape(&cfg, &f16_rr::SPEC, 4104, |s| s - 1, |w| 2 * w + 8);
            let a = mat::<f16, RowMajor>(&dev, &mut r, m, k);
            let b = mat::<f16, RowMajor>(&dev, &mut r, k, n);
            let what = format!("{cfg} at {m}x{n}x{k} on {}", dev.info());
            same_bits_twice!(f16_rr, f16, &dev, cfg, a, b, (m, n, k), what);
        }
    }
}

/// Split-K configs (the wgmma family's `KSPLIT`, and the simt family's on OpenCL) add
/// their partial tiles in split order whichever block finishes last, so two runs give the
/// same bits; f32 outputs, so that no
/// rounding hides a different order. The second run also finds the arrival counters zero
/// again (each launch resets what it counted on): a leftover count would make the wrong
/// block the last one and the output wrong. (The shape specialists that split K, gemv_n
/// and decode_n, serve a few rows only and have same-bits tests of their own above; at
/// this test's 16 rows gemv_n refused, which failed it on the H200.)
#[test]
fn split_k_configs_give_the_same_bits_twice() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(32);
        let tk = bf16_cr::SPEC.target_for(&dev).unwrap();
        let split: Vec<TileConfig> = tk
            .plan()
            .configs
            .iter()
            .copied()
            .filter(|c| matches!(c, TileConfig::Wgmma(_) | TileConfig::Simt(_)) && c.k_split() > 1 && kept_by_filter(c))
            .collect();
        if split.is_empty() {
            // Only targets with wgmma or OpenCL plan split-K (or CROSSGEMM_TEST_CONFIGS
            // keeps none).
            continue;
        }
        for cfg in split {
            let (bm, bn) = (cfg.block_mn().0 as usize, cfg.block_mn().1 as usize);
            // Decode-size M over four tile columns, and two tile rows with a partial one,
            // K not a multiple of the k-tile nor of the split.
            for (m, n, k) in [(16, 4 * bn, 4104), (bm + 6, 2 * bn + 8, 1000)] {
                let a = mat::<bf16, ColMajor>(&dev, &mut r, m, k);
                let b = mat::<bf16, RowMajor>(&dev, &mut r, k, n);
                let what = format!("{cfg} at {m}x{n}x{k} on {}", dev.info());
                same_bits_twice!(bf16_cr, f32, &dev, cfg, a, b, (m, n, k), what);
            }
        }
    }
}

// --- epilogue ops --------------------------------------------------------------------

#[gemm_kernel]
fn ep_bias_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}
#[gemm_kernel]
fn ep_gelu_col(x: Matrix<f16>, w: Matrix<f16>, scale: Col<f32>) -> Matrix<f16> {
    gelu(x * w) * scale
}
#[gemm_kernel]
fn ep_gelu_erf_residual(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, res: Matrix<bf16>) -> Matrix<bf16> {
    gelu_erf(x * w) + res
}
#[gemm_kernel]
fn ep_silu_sigmoid(x: Matrix<f16>, w: Matrix<f16, ColMajor>, res: Matrix<f32, ColMajor>) -> Matrix<f32> {
    silu(x * w) + sigmoid(res)
}
// Scalar FMA on the CUDA targets, on purpose: the f32 path is under test.
#[gemm_kernel(fma_ok)]
fn ep_tanh_exp_abs(x: Matrix<f32>, w: Matrix<f32>, alpha: f32) -> Matrix<f32> {
    tanh(x * w) + exp(0.1 * abs(alpha * (x * w)))
}
#[gemm_kernel]
fn ep_min_max_clamp(x: Matrix<f16>, w: Matrix<f16, ColMajor>, lo: f32, bias: Row<f32>) -> Matrix<f16> {
    clamp(min(x * w, 2.5), lo, 3.0) + max(bias, 0.25)
}
#[gemm_kernel]
fn ep_leaky_neg_div(x: Matrix<bf16>, w: Matrix<bf16>, alpha: f32, beta: f32, c: Matrix<bf16>) -> Matrix<bf16> {
    leaky_relu(-(alpha * (x * w)) / 2.0 + beta * c, 0.1)
}

#[test]
fn epilogue_ops() {
    for dev in devices() {
        let d = dev.info().to_string();
        let mut r = rng(31);
        for &(m, n, k) in SMALL_SHAPES {
            let ctx = |name: &str| format!("{name} {m}x{n}x{k} on {d}");
            {
                let (x, w, b) = (
                    mat::<f16, RowMajor>(&dev, &mut r, m, k),
                    mat::<f16, ColMajor>(&dev, &mut r, k, n),
                    row::<f16>(&dev, &mut r, n),
                );
                assert_close(
                    &ep_bias_relu(&x, &w, &b).unwrap().to_host().unwrap(),
                    &ep_bias_relu::reference(&x, &w, &b).unwrap(),
                    k,
                    false,
                    &ctx("bias_relu"),
                );
            }
            {
                let (x, w, s) = (
                    mat::<f16, RowMajor>(&dev, &mut r, m, k),
                    mat::<f16, RowMajor>(&dev, &mut r, k, n),
                    col::<f32>(&dev, &mut r, m),
                );
                assert_close(
                    &ep_gelu_col(&x, &w, &s).unwrap().to_host().unwrap(),
                    &ep_gelu_col::reference(&x, &w, &s).unwrap(),
                    k,
                    false,
                    &ctx("gelu_col"),
                );
            }
            {
                let (x, w, c) = (
                    mat::<bf16, RowMajor>(&dev, &mut r, m, k),
                    mat::<bf16, ColMajor>(&dev, &mut r, k, n),
                    mat::<bf16, RowMajor>(&dev, &mut r, m, n),
                );
                assert_close(
                    &ep_gelu_erf_residual(&x, &w, &c).unwrap().to_host().unwrap(),
                    &ep_gelu_erf_residual::reference(&x, &w, &c).unwrap(),
                    k,
                    false,
                    &ctx("gelu_erf_residual"),
                );
            }
            {
                let (x, w, c) = (
                    mat::<f16, RowMajor>(&dev, &mut r, m, k),
                    mat::<f16, ColMajor>(&dev, &mut r, k, n),
                    mat::<f32, ColMajor>(&dev, &mut r, m, n),
                );
                assert_close(
                    &ep_silu_sigmoid(&x, &w, &c).unwrap().to_host().unwrap(),
                    &ep_silu_sigmoid::reference(&x, &w, &c).unwrap(),
                    k,
                    false,
                    &ctx("silu_sigmoid"),
                );
            }
            {
                let (x, w) = (
                    mat::<f32, RowMajor>(&dev, &mut r, m, k),
                    mat::<f32, RowMajor>(&dev, &mut r, k, n),
                );
                assert_close(
                    &ep_tanh_exp_abs(&x, &w, -1.5).unwrap().to_host().unwrap(),
                    &ep_tanh_exp_abs::reference(&x, &w, -1.5).unwrap(),
                    k,
                    false,
                    &ctx("tanh_exp_abs"),
                );
            }
            {
                let (x, w, b) = (
                    mat::<f16, RowMajor>(&dev, &mut r, m, k),
                    mat::<f16, ColMajor>(&dev, &mut r, k, n),
                    row::<f32>(&dev, &mut r, n),
                );
                assert_close(
                    &ep_min_max_clamp(&x, &w, -0.5, &b).unwrap().to_host().unwrap(),
                    &ep_min_max_clamp::reference(&x, &w, -0.5, &b).unwrap(),
                    k,
                    false,
                    &ctx("min_max_clamp"),
                );
            }
            {
                let (x, w, c) = (
                    mat::<bf16, RowMajor>(&dev, &mut r, m, k),
                    mat::<bf16, RowMajor>(&dev, &mut r, k, n),
                    mat::<bf16, RowMajor>(&dev, &mut r, m, n),
                );
                assert_close(
                    &ep_leaky_neg_div(&x, &w, 0.75, -2.0, &c).unwrap().to_host().unwrap(),
                    &ep_leaky_neg_div::reference(&x, &w, 0.75, -2.0, &c).unwrap(),
                    k,
                    false,
                    &ctx("leaky_neg_div"),
                );
            }
        }
    }
}

/// The kernels compute the intended function, not only what the reference says: a
/// hand-written bias+ReLU on the host, independent of the IR.
#[test]
fn bias_relu_matches_a_hand_written_loop() {
    for dev in devices().into_iter().chain([Device::host()]) {
        let (m, n, k) = (13, 21, 34);
        let mut r = rng(41);
        let xs: Vec<f16> = values(&mut r, m * k);
        let ws: Vec<f16> = values(&mut r, k * n); // column-major k x n
        let bs: Vec<f16> = values(&mut r, n);
        let x = Matrix::<f16>::from_host(&dev, m, k, &xs).unwrap();
        let w = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &ws).unwrap();
        let b = Row::from_host(&dev, &bs).unwrap();
        let got = ep_bias_relu(&x, &w, &b).unwrap().to_host().unwrap();
        let want: Vec<f16> = (0..m * n)
            .map(|idx| {
                let (i, j) = (idx / n, idx % n);
                let acc: f32 = (0..k).map(|kk| xs[i * k + kk].to_f32() * ws[j * k + kk].to_f32()).sum();
                f16::from_f32((acc + bs[j].to_f32()).max(0.0))
            })
            .collect();
        assert_close(
            &got,
            &want,
            k,
            false,
            &format!("hand-written bias_relu on {}", dev.info()),
        );
    }
}

// --- run-time errors -----------------------------------------------------------------

#[test]
fn shape_and_device_errors_are_errs() {
    let host = Device::host();
    let mut r = rng(51);
    let x = mat::<f16, RowMajor>(&host, &mut r, 4, 5);
    let w = mat::<f16, ColMajor>(&host, &mut r, 6, 3);
    let b = row::<f16>(&host, &mut r, 3);
    let e = ep_bias_relu(&x, &w, &b).unwrap_err();
    assert!(matches!(e, GemmError::Shape { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("4x5") && msg.contains("6x3"), "{msg}");

    let w = mat::<f16, ColMajor>(&host, &mut r, 5, 3);
    let short = row::<f16>(&host, &mut r, 2);
    let msg = ep_bias_relu(&x, &w, &short).unwrap_err().to_string();
    assert!(
        msg.contains("`bias`") && msg.contains("length 2") && msg.contains("3 columns"),
        "{msg}"
    );

    let mut out = Matrix::<f16>::zeros(&host, 4, 4).unwrap();
    let msg = ep_bias_relu_into(&x, &w, &b, &mut out).unwrap_err().to_string();
    assert!(msg.contains("4x4") && msg.contains("4x3"), "{msg}");

    let e = Matrix::<f16>::from_host(&host, 2, 2, &[f16::ZERO; 3]).unwrap_err();
    assert!(
        matches!(
            e,
            GemmError::DataLength {
                len: 3,
                rows: 2,
                cols: 2
            }
        ),
        "{e}"
    );
    // Extents whose product overflows are the same error, not an arithmetic panic.
    let e = Matrix::<f16>::from_host(&host, usize::MAX, 2, &[f16::ZERO; 2]).unwrap_err();
    assert!(matches!(e, GemmError::DataLength { len: 2, .. }), "{e}");
    assert!(Matrix::<f16>::zeros(&host, usize::MAX, 2).is_err());

    for dev in devices() {
        let on_dev = mat::<f16, ColMajor>(&dev, &mut r, 5, 3);
        let e = ep_bias_relu(&x, &on_dev, &b).unwrap_err();
        assert!(matches!(e, GemmError::DeviceMismatch { .. }), "{e}");
        assert!(e.to_string().contains("`w`"), "{e}");
    }
}

#[test]
fn host_device_runs_the_reference() {
    let host = Device::host();
    let mut r = rng(61);
    let x = mat::<f16, RowMajor>(&host, &mut r, 9, 7);
    let w = mat::<f16, ColMajor>(&host, &mut r, 7, 5);
    let b = row::<f16>(&host, &mut r, 5);
    assert_eq!(
        ep_bias_relu(&x, &w, &b).unwrap().to_host().unwrap(),
        ep_bias_relu::reference(&x, &w, &b).unwrap()
    );
}

// --- random shapes -------------------------------------------------------------------

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Any shape, including ones no tile divides, gives the reference's answer.
    #[test]
    fn random_shapes_bias_relu(m in 1usize..90, n in 1usize..90, k in 1usize..130, seed in 0u64..1000) {
        for dev in devices() {
            let mut r = rng(seed);
            let (x, w, b) = (mat::<f16, RowMajor>(&dev, &mut r, m, k), mat::<f16, ColMajor>(&dev, &mut r, k, n), row::<f16>(&dev, &mut r, n));
            let got = ep_bias_relu(&x, &w, &b).unwrap().to_host().unwrap();
            assert_close(&got, &ep_bias_relu::reference(&x, &w, &b).unwrap(), k, false, &format!("bias_relu {m}x{n}x{k} on {}", dev.info()));
        }
    }
}
