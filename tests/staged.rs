//! Staged operands (`gemm-runtime/src/stage.rs`): under `CROSSGEMM_STAGE=always`, an A or
//! B whose rows do not all start on a 16-byte boundary is copied into aligned scratch and
//! the kernel runs on the copy: packed operands of odd K, views of odd pitch and offset,
//! one matrix per product of a batch (odd batch stride) and a broadcast one, through the
//! default launch path, `run_with` every planned config, and the tuner. Each is checked
//! against the host reference on the caller's own operands, and the staging counter says
//! which operands were staged; a staging the driver refuses falls back to the operands
//! where they lie. One test: the variable is set for the whole process.

mod common;

use common::*;
use crossgemm::prelude::*;

#[gemm_kernel]
fn s_f16(a: Matrix<f16>, b: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(a * b + bias)
}

#[gemm_kernel(fma_ok)]
fn s_f32(a: Matrix<f32, ColMajor>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}

fn staged() -> u64 {
    crossgemm::__private::staged_operands()
}

/// Which operands the lookup of a cached launch of `s_f16` says the launch stages.
fn looked_up_staged<A: crossgemm::MatrixArg<f16, RowMajor>>(
    dev: &Device,
    (a, b, bias): (&A, &Matrix<f16, ColMajor>, &Row<f16>),
    (m, n): (usize, usize),
) -> [bool; 2] {
    let mut out = Matrix::<f16>::zeros(dev, m, n).unwrap();
    let dir = std::env::temp_dir().join(format!("crossgemm-staged-lookup-{}", std::process::id()));
    let opts = crossgemm::TuneOptions {
        cache_dir: Some(dir),
        ..crossgemm::TuneOptions::default()
    };
    let args = [a.__arg(), b.__arg(), bias.__arg()];
    crossgemm::tune::lookup(&s_f16::SPEC, &args, out.__out(), &opts)
        .unwrap()
        .staged
}

#[test]
fn misaligned_operands_run_from_aligned_copies() {
    let _narrowed = narrowed_run_check();
    // The only test of this binary sets it, before any call reads it.
    std::env::set_var("CROSSGEMM_STAGE", "always");
    for dev in devices() {
        let mut r = rng(61);
        let on = dev.info().to_string();

        // Packed f16 with K = 37: A's and B's rows (both K-major) are 74 bytes.
        let (m, n, k) = (45, 29, 37);
        let a = mat::<f16, RowMajor>(&dev, &mut r, m, k);
        let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
        let bias = row::<f16>(&dev, &mut r, n);
        let before = staged();
        let got = s_f16(&a, &b, &bias).unwrap().to_host().unwrap();
        assert_eq!(staged() - before, 2, "odd K stages A and B on {on}");
        assert_close(
            &got,
            &s_f16::reference(&a, &b, &bias).unwrap(),
            k,
            false,
            &format!("K = 37 on {on}"),
        );
        // What a cached launch would use is the config for the aligned copies, as the
        // launch looks it up after staging (`crossgemm tune --cached`, `bench
        // --first-call`).
        assert_eq!(
            looked_up_staged(&dev, (&a, &b, &bias), (m, n)),
            [true, true],
            "K = 37 on {on}"
        );

        // Every planned config on the staged copies (the families see aligned rows).
        let mut ran = 0;
        for cfg in fitting_configs(&s_f16::SPEC, &dev, crossgemm::DType::F16) {
            let mut out = Matrix::<f16>::zeros(&dev, m, n).unwrap();
            let what = format!("config {cfg} at {m}x{n}x{k} staged on {on}");
            match s_f16::run_with(&cfg, &a, &b, &bias, &mut out) {
                Ok(()) => {
                    assert_close(
                        &out.to_host().unwrap(),
                        &s_f16::reference(&a, &b, &bias).unwrap(),
                        k,
                        false,
                        &what,
                    );
                    ran += 1;
                }
                // A family that refuses the aligned problem (a tile wider than it) says so.
                Err(e) => assert!(e.to_string().contains("cannot run"), "{what}: {e}"),
            }
        }
        assert!(ran > 0, "no config ran staged operands on {on}");

        // The scratch of a staged call is the device's again once the call is queued: the
        // same call again allocates none (crossgemm::device::spares).
        let allocated = crossgemm::__private::scratch_allocations();
        let again = s_f16(&a, &b, &bias).unwrap().to_host().unwrap();
        assert_eq!(
            crossgemm::__private::scratch_allocations(),
            allocated,
            "a repeated staged call allocated scratch on {on}"
        );
        assert_close(
            &again,
            &s_f16::reference(&a, &b, &bias).unwrap(),
            k,
            false,
            &format!("the repeated staged call on {on}"),
        );
        // Freed, the scratch is allocated again by the next staged call.
        assert!(dev.free_staging_scratch() > 0, "no scratch kept on {on}");
        assert_eq!(dev.free_staging_scratch(), 0, "freed twice on {on}");
        let allocated = crossgemm::__private::scratch_allocations();
        s_f16(&a, &b, &bias).unwrap();
        assert_eq!(
            crossgemm::__private::scratch_allocations() - allocated,
            2,
            "a staged call after free_staging_scratch on {on}"
        );

        // Kept scratch gives way to a call's own memory: an allocation that fails while
        // the device keeps scratch frees it and is tried again; with nothing kept, the
        // failure is the caller's.
        crossgemm::__private::fail_next_allocations(1);
        let out = Matrix::<f16>::zeros(&dev, m, n);
        assert!(out.is_ok(), "an allocation with scratch kept on {on}: {:?}", out.err());
        assert_eq!(
            dev.free_staging_scratch(),
            0,
            "the failed allocation left scratch on {on}"
        );
        crossgemm::__private::fail_next_allocations(1);
        let err = Matrix::<f16>::zeros(&dev, m, n).expect_err("nothing kept to free");
        assert!(err.to_string().contains("out of memory"), "{err} on {on}");
        crossgemm::__private::fail_next_allocations(0);
        let again = s_f16(&a, &b, &bias).unwrap().to_host().unwrap();
        assert_close(
            &again,
            &s_f16::reference(&a, &b, &bias).unwrap(),
            k,
            false,
            &format!("a staged call after a failed allocation on {on}"),
        );
        // So does a launch out of memory (a split-K workspace it must grow): a warm call
        // of aligned operands, which stages nothing, frees the scratch that staged call
        // left and launches once more.
        let (m2, n2, k2) = (24, 16, 40);
        let a2 = mat::<f16, RowMajor>(&dev, &mut r, m2, k2);
        let b2 = mat::<f16, ColMajor>(&dev, &mut r, k2, n2);
        let bias2 = row::<f16>(&dev, &mut r, n2);
        let mut out2 = Matrix::<f16>::zeros(&dev, m2, n2).unwrap();
        s_f16_into(&a2, &b2, &bias2, &mut out2).unwrap();
        out2.to_host().unwrap();
        crossgemm::__private::fail_next_allocations(1);
        let launched = s_f16_into(&a2, &b2, &bias2, &mut out2);
        crossgemm::__private::fail_next_allocations(0);
        assert!(launched.is_ok(), "a launch with scratch kept on {on}: {launched:?}");
        assert_eq!(
            dev.free_staging_scratch(),
            0,
            "the launch out of memory left scratch on {on}"
        );
        assert_close(
            &out2.to_host().unwrap(),
            &s_f16::reference(&a2, &b2, &bias2).unwrap(),
            k2,
            false,
            &format!("the launch tried again on {on}"),
        );

        // A view of odd pitch and offset; B packed with 16-byte rows (K = 40) is left.
        let (m, n, k) = (33, 21, 40);
        let ab = mat::<f16, RowMajor>(&dev, &mut r, 5 + m * (k + 3), 1);
        let a = ab.strided(5, m, k, k + 3).unwrap();
        let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
        let bias = row::<f16>(&dev, &mut r, n);
        let before = staged();
        let got = s_f16(&a, &b, &bias).unwrap().to_host().unwrap();
        assert_eq!(staged() - before, 1, "only A is misaligned on {on}");
        assert_eq!(
            looked_up_staged(&dev, (&a, &b, &bias), (m, n)),
            [true, false],
            "A view on {on}"
        );
        assert_close(
            &got,
            &s_f16::reference(&a, &b, &bias).unwrap(),
            k,
            false,
            &format!("A view on {on}"),
        );

        // A batch: A one matrix per product, 3 elements apart past each one's end (a copy
        // per matrix) and then back to back (one copy of every row); B one for all, of odd
        // pitch; column-major f32 A (M = 19: 76-byte columns).
        let (batch, m, n, k) = (3, 19, 24, 17);
        for gap in [3, 0] {
            let astride = m * k + gap;
            let ab = mat::<f32, ColMajor>(&dev, &mut r, astride * batch, 1);
            let a = ab.strided(0, m, k, m).unwrap().batched(batch, astride).unwrap();
            let bb = mat::<f32, RowMajor>(&dev, &mut r, k * (n + 1), 1);
            let b = bb.strided(0, k, n, n + 1).unwrap();
            let ostride = m * n;
            let mut ob = Matrix::<f32>::zeros(&dev, ostride * batch, 1).unwrap();
            let before = staged();
            {
                let mut out = ob.strided_mut(0, m, n, n).unwrap().batched(batch, ostride).unwrap();
                s_f32_into(&a, &b, &mut out).unwrap();
            }
            assert_eq!(staged() - before, 2, "the batched A and the broadcast B on {on}");
            let want = s_f32::reference(&a, &b).unwrap();
            assert_close(
                &ob.to_host().unwrap(),
                &want,
                k,
                false,
                &format!("batch, gap {gap}, on {on}"),
            );
        }

        // The tuner times candidates on the staged copies too.
        let (m, n, k) = (40, 24, 13);
        let a = mat::<f32, ColMajor>(&dev, &mut r, m, k);
        let bb = mat::<f32, RowMajor>(&dev, &mut r, k * (n + 2), 1);
        let b = bb.strided(0, k, n, n + 2).unwrap();
        let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
        let before = staged();
        let report = s_f32::tune(&a, &b, &mut out).unwrap();
        assert!(staged() > before, "the tune staged B on {on}");
        assert!(
            report.cache_hit || !report.timings.is_empty(),
            "no candidate passed on {on}: {report:?}"
        );

        // A copy the driver refuses: the call runs on the operands where they lie.
        let (m, n, k) = (45, 29, 37);
        let a = mat::<f16, RowMajor>(&dev, &mut r, m, k);
        let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
        let bias = row::<f16>(&dev, &mut r, n);
        crossgemm::__private::fail_next_stagings(1);
        let before = staged();
        let got = s_f16(&a, &b, &bias).unwrap().to_host().unwrap();
        assert_eq!(staged(), before, "nothing was staged on {on}");
        assert_close(
            &got,
            &s_f16::reference(&a, &b, &bias).unwrap(),
            k,
            false,
            &format!("unstaged on {on}"),
        );
    }
}
