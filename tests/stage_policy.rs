//! The default staging policy (`CROSSGEMM_STAGE` unset): a misaligned call of 2^27 flops
//! or more is staged into aligned scratch, unless a shape specialist of the plan (gemv,
//! gemv_n, decode) reads its operands where they lie, once each: staging would move them
//! twice more than the kernel reads them (decode in place 1.6-1.8x faster than staged on
//! the H200, bench/results/h200-2026-12-05af). Separate from `tests/staged.rs`, which sets
//! `CROSSGEMM_STAGE=always` for its whole process.

mod common;

use common::*;
use crossgemm::prelude::*;

#[gemm_kernel]
fn p_f16(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f16> {
    a * b
}

fn staged() -> u64 {
    crossgemm::__private::staged_operands()
}

#[test]
fn a_call_a_specialist_reads_in_place_is_not_staged() {
    assert!(
        std::env::var_os("CROSSGEMM_STAGE").is_none(),
        "the default policy is under test"
    );
    for dev in devices() {
        let mut r = rng(71);
        let on = dev.info().to_string();
        // K = 4099: A's and B's rows (both K-major) are 8198 bytes, never 16-byte aligned.
        // 4 rows (gemv's, and decode's on CUDA), 2^27 flops and more: read in place.
        let (m, n, k) = (4, 4100, 4099);
        let (a, b) = (
            mat::<f16, RowMajor>(&dev, &mut r, m, k),
            mat::<f16, ColMajor>(&dev, &mut r, k, n),
        );
        let before = staged();
        let got = p_f16(&a, &b).unwrap().to_host().unwrap();
        assert_eq!(staged(), before, "{m}x{n}x{k} on {on}: staged");
        assert_close(
            &got,
            &p_f16::reference(&a, &b).unwrap(),
            k,
            false,
            &format!("{m}x{n}x{k} in place on {on}"),
        );
        // 96 rows: no specialist's; both operands staged.
        let (m, n) = (96, 256);
        let (a, b) = (
            mat::<f16, RowMajor>(&dev, &mut r, m, k),
            mat::<f16, ColMajor>(&dev, &mut r, k, n),
        );
        let before = staged();
        let got = p_f16(&a, &b).unwrap().to_host().unwrap();
        assert_eq!(staged(), before + 2, "{m}x{n}x{k} on {on}: A and B staged");
        assert_close(
            &got,
            &p_f16::reference(&a, &b).unwrap(),
            k,
            false,
            &format!("{m}x{n}x{k} staged on {on}"),
        );
    }
}
