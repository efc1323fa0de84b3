//! Batched GEMM (issue 13): one launch computes a batch of products (the grid's `z`),
//! each operand either one matrix per product (`MatrixView::batched`, any stride) or one
//! for all (broadcast), the epilogue fused per product. Every planned config against the
//! host reference of every product, on every device found; the tuner on a batch; and the
//! errors a mismatched batch gives.

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::{Element, LayoutType};

#[gemm_kernel]
fn b_f16_rc(a: Matrix<f16>, b: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(a * b + bias)
}
/// Row-major A and B, 16-bit: the decode_n family's layouts.
#[gemm_kernel]
fn b_bf16_rr(a: Matrix<bf16>, b: Matrix<bf16>, bias: Row<f32>, res: Matrix<bf16>) -> Matrix<f32> {
    a * b + bias + res
}
#[gemm_kernel(fma_ok)]
fn b_f32_cr(a: Matrix<f32, ColMajor>, b: Matrix<f32>, scale: Col<f32>, res: Matrix<f32>) -> Matrix<f32> {
    a * b * scale + res
}

/// `count` random matrices of `rows × cols` in layout `L`, `gap` elements between one's
/// end and the next's start, in one buffer; the gaps hold NaN, so that a kernel that lets
/// an element past a product's matrix into a sum fails.
fn stack<T: Element, L: LayoutType>(
    dev: &Device,
    r: &mut rand::rngs::StdRng,
    (rows, cols): (usize, usize),
    count: usize,
    gap: usize,
) -> (Matrix<T, L>, usize) {
    let stride = rows * cols + gap;
    let mut data = vec![T::from_f32(f32::NAN); stride * count];
    for one in data.chunks_mut(stride) {
        one[..rows * cols].copy_from_slice(&values::<T>(r, rows * cols));
    }
    (Matrix::from_host(dev, data.len(), 1, &data).unwrap(), stride)
}

/// The first `rows × cols` of `buf` (leading dimension `ld`) as an operand of a batch of
/// `batch`: one per product, `stride` elements apart, or with `None` one for all
/// (broadcast).
fn operand<T: Element, L: LayoutType>(
    buf: &Matrix<T, L>,
    (rows, cols): (usize, usize),
    ld: usize,
    batch: usize,
    stride: Option<usize>,
) -> MatrixView<'_, T, L> {
    let one = buf.strided(0, rows, cols, ld).unwrap();
    match stride {
        Some(stride) => one.batched(batch, stride).unwrap(),
        None => one,
    }
}

/// The first `rows × cols` of `buf` (leading dimension `ld`) as the output of a batch of
/// `batch`, `stride` elements apart.
fn output<T: Element, L: LayoutType>(
    buf: &mut Matrix<T, L>,
    (rows, cols): (usize, usize),
    ld: usize,
    batch: usize,
    stride: usize,
) -> MatrixViewMut<'_, T, L> {
    buf.strided_mut(0, rows, cols, ld)
        .unwrap()
        .batched(batch, stride)
        .unwrap()
}

/// Every planned config of `b_f16_rc` on a batch of 3: A one matrix per product (with a
/// gap between them), B broadcast, the bias one per product, the output one per product;
/// then the same with B batched and the bias broadcast; on shapes of few rows and of few
/// columns (the decode and gemv families' turned-around configs).
#[test]
fn every_config_on_a_batch() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(51);
        let mut ran = 0;
        for cfg in fitting_configs(&b_f16_rc::SPEC, &dev, crossgemm::DType::F16) {
            // Few rows, and few columns for the configs that serve them turned around.
            let few = (cfg.block_mn().0 as usize).min(5);
            let few_n = (cfg.block_mn().1 as usize).min(5);
            for (m, n, k) in [(67, 45, 77), (few, 33, 64), (67, few_n, 77), (67, few_n, 64)] {
                for b_batched in [false, true] {
                    let batch = 3;
                    let what = format!(
                        "config {cfg} at {batch}x({m}x{n}x{k}), B {}, on {}",
                        if b_batched { "batched" } else { "broadcast" },
                        dev.info()
                    );
                    let (ab, astride) = stack::<f16, RowMajor>(&dev, &mut r, (m, k), batch, 8);
                    let (bb, bstride) = stack::<f16, ColMajor>(&dev, &mut r, (k, n), batch, 0);
                    let biasb = row::<f16>(&dev, &mut r, n * batch);
                    let a = operand(&ab, (m, k), k, batch, Some(astride));
                    let b = operand(&bb, (k, n), k, batch, b_batched.then_some(bstride));
                    let bias1 = biasb.slice(0, n).unwrap();
                    let bias = if b_batched {
                        bias1
                    } else {
                        bias1.batched(batch, n).unwrap()
                    };
                    let (mut ob, ostride) = stack::<f16, RowMajor>(&dev, &mut r, (m, n), batch, 16);
                    let mut out = output(&mut ob, (m, n), n, batch, ostride);
                    let problem = crossgemm::Problem::new(m, n, k).batched(batch);
                    let accepted = cfg.family().accepts(&cfg, b_f16_rc::SPEC.ir(), problem);
                    match (b_f16_rc::run_with(&cfg, &a, &b, &bias, &mut out), accepted) {
                        (Ok(()), Ok(())) => {
                            let want = b_f16_rc::reference(&a, &b, &bias).unwrap();
                            assert_eq!(want.len(), batch * m * n, "{what}: the reference covers the batch");
                            assert_close(&out.to_host().unwrap(), &want, k, false, &what);
                            ran += 1;
                        }
                        (Err(e), Err(_)) => assert!(e.to_string().contains("cannot run"), "{what}: {e}"),
                        (r, a) => panic!("{what}: launch {r:?}, but the family says {a:?}"),
                    }
                }
            }
        }
        // Narrowed, `NarrowedRunCheck` judges.
        assert!(ran > 0 || configs_narrowed(), "no config ran a batch on {}", dev.info());
    }
}

/// Every planned `gemv_n` config of `b_f32_cr` (B row-major: the plain form; A
/// column-major: the turned-around one) on a batch of 3: A and the residual one per
/// product, B broadcast, then B batched as well; few rows (the plain form) and few
/// columns (turned around), K split over blocks on CUDA.
#[test]
fn every_gemv_n_config_on_a_batch() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(53);
        let mut ran = 0;
        for cfg in family_configs(&b_f32_cr::SPEC, &dev, crossgemm::FamilyId::GemvN) {
            let (bm, bn) = cfg.block_mn();
            let (few, few_n) = ((bm as usize).min(3), (bn as usize).min(3));
            for (m, n, k) in [(few, 37, 1029), (41, few_n, 1029)] {
                for b_batched in [false, true] {
                    let batch = 3;
                    let what = format!(
                        "config {cfg} at {batch}x({m}x{n}x{k}), B batched {b_batched}, on {}",
                        dev.info()
                    );
                    let (ab, astride) = stack::<f32, ColMajor>(&dev, &mut r, (m, k), batch, 4);
                    let (bb, bstride) = stack::<f32, RowMajor>(&dev, &mut r, (k, n), batch, 0);
                    let (rb, rstride) = stack::<f32, RowMajor>(&dev, &mut r, (m, n), batch, 2);
                    let scale = col::<f32>(&dev, &mut r, m);
                    let a = operand(&ab, (m, k), m, batch, Some(astride));
                    let b = operand(&bb, (k, n), n, batch, b_batched.then_some(bstride));
                    let res = operand(&rb, (m, n), n, batch, Some(rstride));
                    let (mut ob, ostride) = stack::<f32, RowMajor>(&dev, &mut r, (m, n), batch, 16);
                    let mut out = output(&mut ob, (m, n), n, batch, ostride);
                    let problem = crossgemm::Problem::new(m, n, k).batched(batch);
                    let accepted = cfg.family().accepts(&cfg, b_f32_cr::SPEC.ir(), problem);
                    match (b_f32_cr::run_with(&cfg, &a, &b, &scale, &res, &mut out), accepted) {
                        (Ok(()), Ok(())) => {
                            let want = b_f32_cr::reference(&a, &b, &scale, &res).unwrap();
                            assert_close(&out.to_host().unwrap(), &want, k, false, &what);
                            ran += 1;
                        }
                        (Err(e), Err(_)) => assert!(e.to_string().contains("cannot run"), "{what}: {e}"),
                        (r, a) => panic!("{what}: launch {r:?}, but the family says {a:?}"),
                    }
                }
            }
        }
        assert!(
            ran > 0 || dev.info().kind == Backend::Host || configs_narrowed(),
            "no gemv_n config ran a batch on {}",
            dev.info()
        );
    }
}

/// Every planned decode_n config (CUDA targets plan it) on a batch of 3 of strided views:
/// A and the residual per product, B broadcast or batched, one bias for all; M one short
/// of the config's rows, N past a strip, K crossing a chunk, and K split over blocks per
/// product (a workspace slot per strip of every product).
#[test]
fn every_decode_n_config_on_a_batch() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(54);
        let configs = family_configs(&b_bf16_rr::SPEC, &dev, crossgemm::FamilyId::DecodeN);
        assert_planned(&configs, &dev, dev.info().kind == Backend::Cuda, "decode_n");
        for cfg in configs {
            let (bm, bn) = cfg.block_mn();
            let (m, n, k) = (bm as usize - 1, bn as usize + 24, 1032);
            for b_batched in [false, true] {
                let batch = 3;
                let what = format!(
                    "config {cfg} at {batch}x({m}x{n}x{k}), B batched {b_batched}, on {}",
                    dev.info()
                );
                let (ab, astride) = stack::<bf16, RowMajor>(&dev, &mut r, (m, k), batch, 8);
                let (bb, bstride) = stack::<bf16, RowMajor>(&dev, &mut r, (k, n), batch, 0);
                let (rb, rstride) = stack::<bf16, RowMajor>(&dev, &mut r, (m, n), batch, 2);
                let bias = row::<f32>(&dev, &mut r, n);
                let a = operand(&ab, (m, k), k, batch, Some(astride));
                let b = operand(&bb, (k, n), n, batch, b_batched.then_some(bstride));
                let res = operand(&rb, (m, n), n, batch, Some(rstride));
                let (mut ob, ostride) = stack::<f32, RowMajor>(&dev, &mut r, (m, n), batch, 16);
                let mut out = output(&mut ob, (m, n), n, batch, ostride);
                b_bf16_rr::run_with(&cfg, &a, &b, &bias, &res, &mut out).unwrap_or_else(|e| panic!("{what}: {e}"));
                let want = b_bf16_rr::reference(&a, &b, &bias, &res).unwrap();
                assert_close(&out.to_host().unwrap(), &want, k, false, &what);
            }
        }
    }
}

/// A column-major A, a per-row scale and a residual, each one per product, through the
/// default launch path; products land where the output's stride puts them and the gaps
/// between them keep their contents.
#[test]
fn epilogue_operands_per_product() {
    for dev in devices() {
        let mut r = rng(52);
        for (batch, m, n, k) in [(2, 1, 19, 23), (4, 21, 1, 9), (5, 17, 33, 65)] {
            let what = format!("{batch}x({m}x{n}x{k}) on {}", dev.info());
            let (ab, astride) = stack::<f32, ColMajor>(&dev, &mut r, (m, k), batch, 3);
            let b = mat::<f32, RowMajor>(&dev, &mut r, k, n);
            let scaleb = col::<f32>(&dev, &mut r, (m + 1) * batch);
            let (rb, rstride) = stack::<f32, RowMajor>(&dev, &mut r, (m, n), batch, 5);
            let a = operand(&ab, (m, k), m, batch, Some(astride));
            let scale = scaleb.slice(0, m).unwrap().batched(batch, m + 1).unwrap();
            let res = operand(&rb, (m, n), n, batch, Some(rstride));
            let ostride = m * n + 7;
            let mut ob = Matrix::<f32>::zeros(&dev, ostride * batch, 1).unwrap();
            {
                let mut out = output(&mut ob, (m, n), n, batch, ostride);
                b_f32_cr_into(&a, &b, &scale, &res, &mut out).unwrap();
                let want = b_f32_cr::reference(&a, &b, &scale, &res).unwrap();
                assert_close(&out.to_host().unwrap(), &want, k, false, &what);
            }
            let all = ob.to_host().unwrap();
            for p in 0..batch {
                assert!(
                    all[p * ostride + m * n..(p + 1) * ostride].iter().all(|&v| v == 0.0),
                    "{what}: a gap after product {p} was written"
                );
            }
        }
    }
}

/// A batch of more products than one launch computes (65535, CUDA's grid in `z`) runs
/// as two launches of about half each, on the views moved on to each one's first
/// product; every product checked, the broadcast operands read by both.
#[test]
fn a_batch_past_one_launch_runs_as_several() {
    for dev in devices() {
        let mut r = rng(61);
        let (batch, m, n, k) = (65_537, 8, 16, 16);
        let what = format!("{batch}x({m}x{n}x{k}) on {}", dev.info());
        let (ab, astride) = stack::<f16, RowMajor>(&dev, &mut r, (m, k), batch, 0);
        let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
        let bias = row::<f16>(&dev, &mut r, n);
        let a = operand(&ab, (m, k), k, batch, Some(astride));
        let mut ob = Matrix::<f16>::zeros(&dev, m * n * batch, 1).unwrap();
        let mut out = output(&mut ob, (m, n), n, batch, m * n);
        b_f16_rc_into(&a, &b, &bias, &mut out).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want = b_f16_rc::reference(&a, &b, &bias).unwrap();
        assert_close(&out.to_host().unwrap(), &want, k, false, &what);
    }
}

/// The tuner on a batch: it verifies and times candidates on a batch of its own, and the
/// winner is stored under the batch's bucket (`pow2@b4:...`), apart from one product's.
#[test]
fn the_tuner_tunes_a_batch() {
    let Some(dev) = opencl_device_for("the_tuner_tunes_a_batch", &b_f16_rc::SPEC) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("crossgemm-batched-tune-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = crossgemm::TuneOptions {
        cache_dir: Some(dir.clone()),
        max_candidates: Some(3),
        thorough: true,
        ..crossgemm::TuneOptions::default()
    };
    let mut r = rng(53);
    let (m, n, k, batch) = (40, 24, 32, 4);
    let (ab, astride) = stack::<f16, RowMajor>(&dev, &mut r, (m, k), batch, 0);
    let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
    let bias = row::<f16>(&dev, &mut r, n);
    let a = operand(&ab, (m, k), k, batch, Some(astride));
    let mut ob = Matrix::<f16>::zeros(&dev, m * batch, n).unwrap();
    let mut out = output(&mut ob, (m, n), n, batch, m * n);
    use crossgemm::{MatrixArg, MatrixOut, RowArg};
    let args = [MatrixArg::__arg(&a), MatrixArg::__arg(&b), RowArg::__arg(&bias)];
    let rep = crossgemm::tune::tune_with(&b_f16_rc::SPEC, &args, out.__out(), &opts).unwrap();
    // Only timing may stop a candidate: a run stalled by a loaded machine (CI has 2 cores)
    // can be cut off as too slow, which says nothing about the batch.
    assert!(
        rep.failed.iter().all(|f| f.stage == crossgemm::FailStage::TooSlow),
        "{:?}",
        rep.failed
    );
    assert!(
        rep.timings.len() > 1,
        "a batch's candidates are timed: {:?}",
        rep.timings
    );
    // The winner is stored under the batch's bucket: a second tune finds it there. (Not
    // through `lookup`, which follows CROSSGEMM_TUNE, and other tests here set it off.)
    let again = crossgemm::tune::tune_with(&b_f16_rc::SPEC, &args, out.__out(), &opts).unwrap();
    assert!(again.cache_hit && again.best == rep.best, "{again:?}");
    let stored: String = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .collect();
    assert!(stored.contains("pow2@b4:64x32x32"), "{stored}");
    // One product of the same shape has a bucket of its own: not found there.
    let one = [ab.strided(0, m, k, k).unwrap().__arg(), args[1], args[2]];
    let mut o1 = Matrix::<f16>::zeros(&dev, m, n).unwrap();
    let single = crossgemm::tune::tune_with(&b_f16_rc::SPEC, &one, o1.__out(), &opts).unwrap();
    assert!(!single.cache_hit, "{single:?}");
    b_f16_rc_into(&a, &b, &bias, &mut out).unwrap();
    let want = b_f16_rc::reference(&a, &b, &bias).unwrap();
    assert_close(&out.to_host().unwrap(), &want, k, false, "tuned batch");
}

/// Tunes `b_f16_rc` on a batch of `batch` products of 40x24x32 (A one matrix per
/// product) with 3 candidates, each `(candidate, product)` of `wrong_product` made wrong
/// in that product, checked in full (`full_check_max` `None`) or sampled mode (`Some(0)`).
fn tune_with_faults(
    dev: &Device,
    batch: usize,
    wrong_product: Vec<(usize, usize)>,
    full_check_max: Option<u64>,
    seed: u64,
) -> crossgemm::Result<crossgemm::TuneReport> {
    let dir = std::env::temp_dir().join(format!("crossgemm-batched-faults-{seed}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = crossgemm::TuneOptions {
        cache_dir: Some(dir.clone()),
        max_candidates: Some(3),
        thorough: true,
        inject: crossgemm::tune::Inject {
            wrong_product,
            full_check_max,
            ..Default::default()
        },
        ..crossgemm::TuneOptions::default()
    };
    let mut r = rng(seed);
    let (m, n, k) = (40, 24, 32);
    let (ab, astride) = stack::<f16, RowMajor>(dev, &mut r, (m, k), batch, 0);
    let b = mat::<f16, ColMajor>(dev, &mut r, k, n);
    let bias = row::<f16>(dev, &mut r, n);
    let a = operand(&ab, (m, k), k, batch, Some(astride));
    let mut ob = Matrix::<f16>::zeros(dev, m * batch, n).unwrap();
    let mut out = output(&mut ob, (m, n), n, batch, m * n);
    use crossgemm::{MatrixArg, MatrixOut, RowArg};
    let args = [MatrixArg::__arg(&a), MatrixArg::__arg(&b), RowArg::__arg(&bias)];
    let rep = crossgemm::tune::tune_with(&b_f16_rc::SPEC, &args, out.__out(), &opts);
    let _ = std::fs::remove_dir_all(&dir);
    rep
}

/// The tuner checks every product of a batch, not just the first: in full mode each
/// product against the host reference, in sampled mode each at the sample points and
/// every product against the trusted candidate's output (a disagreement settled by that
/// product's reference). Candidate 1 is made wrong in the middle product and candidate 2
/// in the last; both must fail, naming the product.
#[test]
fn the_tuner_checks_every_product() {
    let Some(dev) = opencl_device_for("the_tuner_checks_every_product", &b_f16_rc::SPEC) else {
        return;
    };
    for (mode, full_check_max) in [("full", None), ("sampled", Some(0))] {
        let rep = tune_with_faults(&dev, 3, vec![(1, 1), (2, 2)], full_check_max, 54).unwrap();
        assert_eq!(rep.candidates.len(), 3, "{mode}: {rep:?}");
        for (cand, product) in [(1, 1), (2, 2)] {
            let cfg = rep.candidates[cand];
            let f = rep
                .failed
                .iter()
                .find(|f| f.config == cfg)
                .unwrap_or_else(|| panic!("{mode}: candidate {cand}, wrong in product {product}, passed: {rep:?}"));
            assert!(
                f.reason.contains(&format!("product {product}")),
                "{mode}: candidate {cand}: {}",
                f.reason
            );
        }
        assert_eq!(rep.best, rep.candidates[0], "{mode}: the right candidate wins");
    }
}

/// A fault that every candidate shares, in a product the sampled check once left to the
/// whole-output comparison (it checked the first, the middle and the last of five:
/// product 3 was not among them, and candidates that agree pass that comparison): the
/// sampled check now takes every product of a small batch, so every candidate fails,
/// naming product 3.
#[test]
fn a_fault_every_candidate_shares_is_caught_in_any_product() {
    let Some(dev) = opencl_device_for(
        "a_fault_every_candidate_shares_is_caught_in_any_product",
        &b_f16_rc::SPEC,
    ) else {
        return;
    };
    let e = tune_with_faults(&dev, 5, vec![(0, 3), (1, 3), (2, 3)], Some(0), 55)
        .expect_err("every candidate is wrong in product 3")
        .to_string();
    assert!(e.contains("product 3"), "{e}");
}

/// Batches that do not agree, an allocating call of a batch, an output batch whose
/// matrices overlap, a batch past its buffer: errors that say so.
#[test]
fn mismatched_batches_are_errors() {
    let dev = Device::host();
    let ab = Matrix::<f16>::zeros(&dev, 3 * 4 * 8, 1).unwrap();
    let b = Matrix::<f16, ColMajor>::zeros(&dev, 8, 5).unwrap();
    let bias = Row::<f16>::from_host(&dev, &[f16::ZERO; 5]).unwrap();
    let a3 = ab.strided(0, 4, 8, 8).unwrap().batched(3, 32).unwrap();
    let e = b_f16_rc(&a3, &b, &bias).unwrap_err().to_string();
    assert!(e.contains("`a` holds a batch of 3 but the output one matrix"), "{e}");
    let mut ob = Matrix::<f16>::zeros(&dev, 2 * 4 * 5, 1).unwrap();
    let mut o2 = ob.strided_mut(0, 4, 5, 5).unwrap().batched(2, 20).unwrap();
    let e = b_f16_rc_into(&a3, &b, &bias, &mut o2).unwrap_err().to_string();
    assert!(e.contains("`a` holds a batch of 3 but the output 2"), "{e}");
    let e = ob
        .strided_mut(0, 4, 5, 5)
        .unwrap()
        .batched(2, 19)
        .unwrap_err()
        .to_string();
    assert!(e.contains("overlaps: each 4x5 matrix spans 20"), "{e}");
    let e = ab.strided(0, 4, 8, 8).unwrap().batched(4, 32).unwrap_err().to_string();
    assert!(e.contains("reaches element 128 but its buffer holds 96"), "{e}");
    // A batch of more than one launch's products is checked whole before any launch:
    // `a` one matrix short fails the call and leaves the output as it was.
    let big = 65_537;
    let along = Matrix::<f16>::zeros(&dev, (big - 1) * 32, 1).unwrap();
    let a_short = along.strided(0, 4, 8, 8).unwrap().batched(big - 1, 32).unwrap();
    let mut obig = Matrix::<f16>::from_host(&dev, big * 20, 1, &vec![f16::ONE; big * 20]).unwrap();
    let mut o_big = obig.strided_mut(0, 4, 5, 5).unwrap().batched(big, 20).unwrap();
    let e = b_f16_rc_into(&a_short, &b, &bias, &mut o_big).unwrap_err().to_string();
    assert!(e.contains("`a` holds a batch of 65536 but the output 65537"), "{e}");
    assert!(obig.to_host().unwrap().iter().all(|&v| v == f16::ONE));
    // On the host device the batch runs as the reference, into the views only.
    let mut ob3 = Matrix::<f16>::zeros(&dev, 3 * 20 + 2, 1).unwrap();
    let mut o3 = ob3.strided_mut(1, 4, 5, 5).unwrap().batched(3, 20).unwrap();
    b_f16_rc_into(&a3, &b, &bias, &mut o3).unwrap();
    assert_eq!(o3.to_host().unwrap().len(), 60);
}
