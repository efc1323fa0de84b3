//! The result written over a matrix the epilogue reads (`k_into_res`: `h = x·W + h`, a
//! residual added in place). Each kernel writes an output element once, from a value
//! computed from that same element of the operand, so a config must give in place the
//! bits it gives into other memory; an output that overlaps an operand any other way is
//! an error. On every device under test (PoCL in CI; the CUDA families on the GPU
//! machine), one planned config of each form of each family.

mod common;

use common::*;
use crossgemm::__private::{launch_with, Arg};
use crossgemm::prelude::*;
use crossgemm::{Element, KernelSpec, LayoutType, MatrixOut, TileConfig};

#[gemm_kernel]
fn ip_f16(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>, res: Matrix<f16>) -> Matrix<f16> {
    relu(x * w + bias) + res
}

/// A residual read twice, and W row-major (gemv_n, decode_n).
#[gemm_kernel]
fn ip_bf16(x: Matrix<bf16>, w: Matrix<bf16>, res: Matrix<bf16>) -> Matrix<bf16> {
    gelu(x * w + res) * res
}

/// A column-major output and residual (the turned-around forms), f32.
#[gemm_kernel(fma_ok)]
fn ip_f32(x: Matrix<f32, ColMajor>, w: Matrix<f32>, r: Matrix<f32, ColMajor>) -> Matrix<f32, ColMajor> {
    x * w + r * 0.5
}

/// Runs `cfg` into fresh memory, then over a copy of the residual, and compares the bits;
/// `None` where the config does not take the shape.
fn same_in_place<T: Element, L: LayoutType>(
    spec: &'static KernelSpec,
    cfg: &TileConfig,
    operands: &[Arg<'_>],
    res: &Matrix<T, L>,
    what: &str,
) -> Option<()> {
    let (m, n) = (res.rows(), res.cols());
    let dev = res.device();
    let mut args = operands.to_vec();
    args.push(res.__arg());
    let mut apart = Matrix::<T, L>::zeros(dev, m, n).unwrap();
    if let Err(e) = launch_with(spec, cfg, &args, apart.__out()) {
        assert!(e.to_string().contains("cannot run"), "{what}: {e}");
        return None;
    }
    let mut over = Matrix::<T, L>::from_host(dev, m, n, &res.to_host().unwrap()).unwrap();
    let out = over.__out();
    *args.last_mut().unwrap() = out.__operand();
    launch_with(spec, cfg, &args, out).unwrap_or_else(|e| panic!("{what}: in place: {e}"));
    let (want, got) = (apart.to_host().unwrap(), over.to_host().unwrap());
    let differ = want
        .iter()
        .zip(&got)
        .filter(|(a, b)| a.to_f32().to_bits() != b.to_f32().to_bits())
        .count();
    assert_eq!(differ, 0, "{what}: {differ} of {} elements differ in place", want.len());
    Some(())
}

/// One config of each form: the first of those whose descriptions differ only in their
/// numbers (`gemv_n rows 1 warps 8 chunks 8 ksplit 4` and `.. ksplit 8` are one form;
/// without `ksplit`, or turned around, another). The store path and the epilogue, which
/// decide whether in place holds, are the form's; the tile sizes are not.
fn one_per_form(configs: Vec<TileConfig>) -> Vec<TileConfig> {
    let mut seen = std::collections::HashSet::new();
    configs
        .into_iter()
        .filter(|c| seen.insert(c.to_string().replace(|ch: char| ch.is_ascii_digit(), "")))
        .collect()
}

#[test]
fn every_form_gives_the_same_bits_in_place() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(61);
        let mut ran = 0;
        for cfg in one_per_form(fitting_configs(&ip_f16::SPEC, &dev, crossgemm::DType::F16)) {
            let few = (cfg.block_mn().0 as usize).min(5);
            for (m, n, k) in [(few, 45, 77), (67, 45, 77)] {
                let (x, w) = (
                    mat::<f16, RowMajor>(&dev, &mut r, m, k),
                    mat::<f16, ColMajor>(&dev, &mut r, k, n),
                );
                let (bias, res) = (row::<f16>(&dev, &mut r, n), mat::<f16, RowMajor>(&dev, &mut r, m, n));
                let what = format!("ip_f16 {cfg} at {m}x{n}x{k} on {}", dev.info());
                let ops = [x.__arg(), w.__arg(), bias.__arg()];
                ran += same_in_place(&ip_f16::SPEC, &cfg, &ops, &res, &what).is_some() as usize;
            }
        }
        for cfg in one_per_form(fitting_configs(&ip_bf16::SPEC, &dev, crossgemm::DType::Bf16)) {
            let few = (cfg.block_mn().0 as usize).min(3);
            for (m, n, k) in [(few, 70, 64), (33, 70, 64)] {
                let (x, w) = (
                    mat::<bf16, RowMajor>(&dev, &mut r, m, k),
                    mat::<bf16, RowMajor>(&dev, &mut r, k, n),
                );
                let res = mat::<bf16, RowMajor>(&dev, &mut r, m, n);
                let what = format!("ip_bf16 {cfg} at {m}x{n}x{k} on {}", dev.info());
                ran += same_in_place(&ip_bf16::SPEC, &cfg, &[x.__arg(), w.__arg()], &res, &what).is_some() as usize;
            }
        }
        for cfg in one_per_form(fitting_configs(&ip_f32::SPEC, &dev, crossgemm::DType::F32)) {
            // Few rows, and few columns for the turned-around forms.
            for (m, n, k) in [(3, 40, 50), (40, 3, 50), (37, 41, 50)] {
                let (x, w) = (
                    mat::<f32, ColMajor>(&dev, &mut r, m, k),
                    mat::<f32, RowMajor>(&dev, &mut r, k, n),
                );
                let res = mat::<f32, ColMajor>(&dev, &mut r, m, n);
                let what = format!("ip_f32 {cfg} at {m}x{n}x{k} on {}", dev.info());
                ran += same_in_place(&ip_f32::SPEC, &cfg, &[x.__arg(), w.__arg()], &res, &what).is_some() as usize;
            }
        }
        assert!(ran > 0 || configs_narrowed(), "no config ran on {}", dev.info());
    }
}

/// The generated `k_into_res` through the default launch path: the host reference's
/// result, written over `res`.
#[test]
fn the_into_wrapper_writes_over_the_residual() {
    for dev in devices().into_iter().chain([Device::host()]) {
        let mut r = rng(62);
        let (m, n, k) = (9, 70, 130);
        let (x, w) = (
            mat::<f16, RowMajor>(&dev, &mut r, m, k),
            mat::<f16, ColMajor>(&dev, &mut r, k, n),
        );
        let (bias, mut res) = (row::<f16>(&dev, &mut r, n), mat::<f16, RowMajor>(&dev, &mut r, m, n));
        let want = ip_f16::reference(&x, &w, &bias, &res).unwrap();
        ip_f16_into_res(&x, &w, &bias, &mut res).unwrap();
        assert_close(
            &res.to_host().unwrap(),
            &want,
            k,
            false,
            &format!("ip_f16_into_res on {}", dev.info()),
        );
        let mut rc = mat::<f32, ColMajor>(&dev, &mut r, m, n);
        let (xc, wr) = (
            mat::<f32, ColMajor>(&dev, &mut r, m, k),
            mat::<f32, RowMajor>(&dev, &mut r, k, n),
        );
        let want = ip_f32::reference(&xc, &wr, &rc).unwrap();
        ip_f32_into_r(&xc, &wr, &mut rc).unwrap();
        assert_close(
            &rc.to_host().unwrap(),
            &want,
            k,
            false,
            &format!("ip_f32_into_r on {}", dev.info()),
        );
    }
}

/// Any other overlap of the output with an operand is an error naming it: the output over
/// A, and over the residual one row off.
#[test]
fn other_overlaps_are_errors() {
    for dev in devices() {
        let mut r = rng(63);
        let (m, n) = (8, 8);
        let w = mat::<f16, ColMajor>(&dev, &mut r, n, n);
        let bias = row::<f16>(&dev, &mut r, n);
        // X is m x n, so that it could hold the result: the output over it.
        let mut x = mat::<f16, RowMajor>(&dev, &mut r, m, n);
        let res = mat::<f16, RowMajor>(&dev, &mut r, m, n);
        let out = x.__out();
        let e = crossgemm::__private::launch(
            &ip_f16::SPEC,
            &[out.__operand(), w.__arg(), bias.__arg(), res.__arg()],
            out,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("shares memory with `x`") && !e.contains("exactly"), "{e}");
        // The residual one row below the output, in one buffer of m + 1 rows.
        let mut big = mat::<f16, RowMajor>(&dev, &mut r, m + 1, n);
        let x = mat::<f16, RowMajor>(&dev, &mut r, m, n);
        let mut below = big.strided_mut(n, m, n, n).unwrap();
        let out = below.__out();
        let res_arg = match out.__operand() {
            Arg::Matrix {
                buf,
                rows,
                cols,
                at,
                batch,
            } => Arg::Matrix {
                buf,
                rows,
                cols,
                at: crossgemm::Stored::new(at.ld, 0),
                batch,
            },
            a => a,
        };
        let e = crossgemm::__private::launch(&ip_f16::SPEC, &[x.__arg(), w.__arg(), bias.__arg(), res_arg], out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shares memory with `res`") && e.contains("exactly"), "{e}");
    }
}
