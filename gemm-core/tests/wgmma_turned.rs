//! The wgmma family's turned-around form (`WgmmaTile::turned`, `tune(turned = 1)`)
//! without a GPU: its kernel is the plain kernel of the transposed product under the same
//! symbol, its host contract is the plain contract of the transposed call, and the
//! planner offers its tiles only where asked, each passing the rules in the turned
//! product's layouts.

use gemm_core::family::wgmma::{self, Wgmma, WgmmaTile, TURNED_CLASS};
use gemm_core::family::{KernelFamily, Machine, PlanCtx, Problem, Stored};
use gemm_core::space::TuneSpace;
use gemm_core::target::{Targets, BUILTIN_TARGETS};
use gemm_core::{plan_target, AccMode, Backend, DType, EpOp, Func, GemmIr, Layout, Param, TargetSpec, TileConfig};

fn h200() -> TargetSpec {
    Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone()
}

/// `relu(x * w + bias)` with `w` in `w_layout`.
fn bias_relu(w_layout: Layout) -> GemmIr {
    GemmIr::matmul("turn", DType::F16, AccMode::F32, Layout::RowMajor, w_layout).with_epilogue(
        [Param::row("bias", DType::F16)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
    )
}

/// `gelu_erf(x.t() * w) * scale + res` into a column-major f32 output: a transposed A, a
/// `Col` and a matrix in the epilogue.
fn mixed() -> GemmIr {
    let ir = GemmIr::matmul("mixed", DType::Bf16, AccMode::F32, Layout::ColMajor, Layout::RowMajor)
        .with_epilogue(
            [
                Param::col("scale", DType::F32),
                Param::matrix("res", DType::Bf16, Layout::RowMajor),
            ],
            vec![
                EpOp::Acc,
                EpOp::Call(Func::GeluErf),
                EpOp::Param(2),
                EpOp::Mul,
                EpOp::Param(3),
                EpOp::Add,
            ],
        )
        .with_out(DType::F32, Layout::ColMajor);
    GemmIr { a_t: true, ..ir }
}

/// `src` as the preprocessor leaves it for `SWAP` = `swap`: every `#if SWAP` block
/// resolved (nested conditionals kept as they are), the `#ifndef SWAP` default dropped.
fn select_form(src: &str, swap: bool) -> String {
    // One entry per open conditional: (whether it is a SWAP block, whether its current
    // branch is kept).
    let mut open: Vec<(bool, bool)> = Vec::new();
    let mut out = String::new();
    let mut lines = src.lines();
    while let Some(line) = lines.next() {
        let t = line.trim();
        let kept = open.iter().all(|&(_, keep)| keep);
        if t == "#ifndef SWAP" {
            assert_eq!(lines.next(), Some("#define SWAP 0"));
            assert_eq!(lines.next(), Some("#endif"));
            continue;
        }
        if t == "#if SWAP" {
            open.push((true, swap));
            continue;
        }
        if t.starts_with("#if") {
            open.push((false, true));
        } else if t == "#else" {
            if let Some((true, keep)) = open.last_mut() {
                *keep = !*keep;
                continue;
            }
        } else if t == "#endif" {
            if let Some((true, _)) = open.pop() {
                continue;
            }
        }
        if kept {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(open.is_empty(), "unbalanced conditionals");
    out
}

/// Under `SWAP` the source is, line for line, the plain source of the transposed product
/// with this kernel's symbol and its extents' arguments named the other way round; without
/// it, the plain source of this product. Both forms are in every source, and only the
/// parts that differ are doubled.
#[test]
fn the_turned_kernel_is_the_plain_kernel_of_the_transposed_product() {
    for ir in [bias_relu(Layout::RowMajor), bias_relu(Layout::ColMajor), mixed()] {
        let t = ir.transposed();
        let src = wgmma::emit(&ir);
        let (sym, sym_t) = (ir.symbol(), t.symbol());
        assert_ne!(sym, sym_t);
        let as_turned = select_form(&wgmma::emit(&t), false)
            .replace(&sym_t, &sym)
            .replace("int M, int N, int K", "int N, int M, int K");
        assert_eq!(select_form(&src, true), as_turned, "{}", ir.epilogue_text());
        assert_eq!(select_form(&src, false), select_form(&wgmma::emit(&ir), false));
        assert!(select_form(&src, false).contains("int M, int N, int K"));
        assert!(select_form(&src, true).contains(&format!("{sym}(")));
        assert!(!select_form(&src, true).contains(&sym_t));
        // The shared parts (PTX helpers, config constants, split-K) are there once.
        assert_eq!(src.matches("struct __align__(64) CgTmaMap").count(), 1);
        assert_eq!(src.matches("extern \"C\" __global__").count(), 2);
    }
}

/// Every host-side answer for a turned config is the plain config's for the transposed
/// call: acceptance, grid, tensor maps (each over the same parameter), defines (plus
/// `SWAP`) and workspace; its block tile in C's terms is the other way round.
#[test]
fn the_turned_contract_is_the_plain_contract_of_the_transposed_call() {
    let machine = Machine { units: 132 };
    let shapes = [
        Problem::new(64, 4096, 4096),
        Problem::new(48, 11008, 4096),
        Problem::new(7, 300, 200),
        Problem::new(96, 1000, 1000),
        Problem::new(64, 4096, 4096).stored(Stored::new(4104, 0), Stored::new(0, 8)),
        Problem::new(64, 512, 128)
            .stored(Stored::default().with_bstride(64 * 128), Stored::default())
            .stored_out(Stored::default().with_bstride(64 * 512))
            .batched(4),
    ];
    let tiles = [
        WgmmaTile {
            turned: true,
            ..WgmmaTile::new(64, 32, 18, 1)
        },
        WgmmaTile {
            turned: true,
            ..WgmmaTile::new(128, 64, 8, 2)
        },
        WgmmaTile {
            turned: true,
            ksplit: 2,
            ..WgmmaTile::new(64, 64, 8, 1)
        },
    ];
    let mut accepted = 0;
    for ir in [bias_relu(Layout::RowMajor), bias_relu(Layout::ColMajor), mixed()] {
        let t_ir = ir.transposed();
        for turned in tiles {
            let plain = WgmmaTile {
                turned: false,
                ..turned
            };
            assert_eq!(Wgmma.block_mn(&turned), (plain.bn, plain.bm));
            assert_eq!(Wgmma.plan_class(&turned).1, Wgmma.plan_class(&plain).1 + TURNED_CLASS);
            assert!(
                Wgmma.describe(&turned).contains(" turned"),
                "{}",
                Wgmma.describe(&turned)
            );
            for p in shapes {
                let tp = p.transposed();
                let ok = Wgmma.accepts(&turned, &ir, p);
                assert_eq!(ok, Wgmma.accepts(&plain, &t_ir, tp), "{turned:?} {p:?}");
                if ok.is_err() {
                    continue;
                }
                accepted += 1;
                assert_eq!(
                    Wgmma.launch(&turned, &ir, p, machine),
                    Wgmma.launch(&plain, &t_ir, tp, machine)
                );
                assert_eq!(Wgmma.tensor_maps(&turned, &ir, p), Wgmma.tensor_maps(&plain, &t_ir, tp));
                assert_eq!(
                    Wgmma.workspace(&turned, &ir, p, machine),
                    Wgmma.workspace(&plain, &t_ir, tp, machine)
                );
                let mut want = Wgmma.defines(&plain, &t_ir, Backend::Cuda, tp);
                want.insert(plain.defines().len(), ("SWAP", 1));
                assert_eq!(Wgmma.defines(&turned, &ir, Backend::Cuda, p), want);
            }
        }
    }
    assert!(accepted >= 30, "{accepted} accepted calls");
    // The first map is over the plain product's B: W is the turned product's A.
    let ir = bias_relu(Layout::RowMajor);
    let maps = Wgmma.tensor_maps(&tiles[0], &ir, Problem::new(64, 4096, 4096));
    assert_eq!((maps[0].param, maps[1].param), (ir.b, ir.a));
    // W row-major (K x N, N contiguous) is an M-major A turned around: 64-column boxes of
    // 128-byte rows, where the plain form's 32-column tiles would ask 64-byte ones.
    assert_eq!(maps[0].box_dims, [64, 64]);
    assert_eq!(maps[1].box_dims, [64, 32]);
}

/// `tune(turned = 1)` adds one config per turned block tile (32 or 64 rows of C by 64 or
/// 128 of its columns, the deepest ring that fits), each a plan class of its own after
/// every plain config; without it the plan is as before. The rules judge them in the
/// turned product's layouts: 32 columns of a row-major W's tile are refused in the plain
/// form (an N-major B) and kept turned around (a K-major B).
#[test]
fn turned_tiles_are_planned_where_asked_and_judged_in_their_own_layouts() {
    let h200 = h200();
    for w in [Layout::RowMajor, Layout::ColMajor] {
        let ir = bias_relu(w);
        let default = plan_target(&ir, &h200, &TuneSpace::default());
        assert!(default
            .configs
            .iter()
            .all(|c| !matches!(c, TileConfig::Wgmma(t) if t.turned)));
        let mut asked = TuneSpace::default();
        asked.0.insert("turned".into(), vec![1]);
        let plan = plan_target(&ir, &h200, &asked);
        let turned: Vec<WgmmaTile> = plan
            .configs
            .iter()
            .filter_map(|c| match c {
                TileConfig::Wgmma(t) if t.turned => Some(*t),
                _ => None,
            })
            .collect();
        let mut tiles: Vec<(u32, u32)> = turned.iter().map(|t| Wgmma.block_mn(t)).collect();
        tiles.sort();
        assert_eq!(tiles, [(32, 64), (32, 128), (64, 64), (64, 128)], "{w:?}");
        let cx = PlanCtx::new(&h200, &ir);
        for t in &turned {
            assert!(t.validate_on(&cx).is_ok());
            let deeper = WgmmaTile {
                stages: t.stages + 1,
                ..*t
            };
            assert!(deeper.smem_bytes(DType::F16) > h200.smem_per_block_optin, "{t:?}");
        }
        // Asking for them takes no plain config out of the plan.
        let plain: Vec<&TileConfig> = plan
            .configs
            .iter()
            .filter(|c| !matches!(c, TileConfig::Wgmma(t) if t.turned))
            .collect();
        assert_eq!(plain, default.configs.iter().collect::<Vec<_>>());
        // The plain 64x32 tile reads an N-major B when W is row-major.
        let narrow = WgmmaTile::new(64, 32, 8, 1);
        assert_eq!(narrow.validate_on(&cx).is_ok(), w == Layout::ColMajor);
        assert!(WgmmaTile { turned: true, ..narrow }.validate_on(&cx).is_ok());
    }
    // Turned around, a row-major output is a column-major one: no TMA store.
    let ir = bias_relu(Layout::ColMajor);
    let tma = WgmmaTile {
        tma_store: true,
        ..WgmmaTile::new(128, 64, 4, 2)
    };
    assert!(tma.validate(&ir).is_ok());
    let why = WgmmaTile { turned: true, ..tma }.validate(&ir).unwrap_err();
    assert!(why.contains("ColMajor (turned around)"), "{why}");
}

/// Where they are asked for, a tune of the size the runtime times by default (48
/// candidates) reaches every turned tile at 32-128 rows: the estimate orders them among
/// the first, for a row-major and a column-major W.
#[test]
fn a_default_tune_times_the_turned_tiles_at_few_rows() {
    let h200 = h200();
    let mut asked = TuneSpace::default();
    asked.0.insert("turned".into(), vec![1]);
    for w in [Layout::RowMajor, Layout::ColMajor] {
        let ir = bias_relu(w);
        let plan = plan_target(&ir, &h200, &asked);
        for m in [32, 48, 64, 96, 128] {
            let p = Problem::new(m, 4096, 4096);
            let usable: Vec<TileConfig> = plan
                .configs
                .iter()
                .copied()
                .filter(|c| c.family().accepts(c, &ir, p).is_ok())
                .collect();
            let order = gemm_core::estimate::by_estimate(&usable, &ir, &h200, p);
            let turned = order[..48]
                .iter()
                .filter(|c| matches!(c, TileConfig::Wgmma(t) if t.turned))
                .count();
            assert_eq!(turned, 4, "{w:?} {m}x4096x4096");
        }
    }
}
