//! A program's own CUDA context, stream and memory (issue 13, the caller's memory and
//! stream): a kernel runs on cudarc slices with no copy, its work queued on the caller's
//! stream; memory of another context, a view past the slice's end, a misaligned view or a
//! device that is not CUDA is an error; dropping the views leaves the slices to the
//! caller. On the first CUDA device (skipped without one, a failure under
//! `CROSSGEMM_REQUIRE_CUDA=1`).

mod common;

use common::*;
use crossgemm::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use crossgemm::prelude::*;
use std::sync::Arc;

#[gemm_kernel]
fn interop_linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

/// The ordinal of the first CUDA device the kernel has a target for, as crossgemm's
/// discovery finds it (which checks that libcuda loads: cudarc panics where it does
/// not), or a loud skip of `test` (a failure under `CROSSGEMM_REQUIRE_CUDA=1`).
fn cuda_ordinal(test: &str) -> Option<usize> {
    let ordinal = Device::list()
        .into_iter()
        .find(|d| d.info().kind == Backend::Cuda && interop_linear::spec().target_for(d).is_ok())
        .and_then(|d| d.info().id.strip_prefix("cuda:")?.parse().ok());
    if ordinal.is_none() {
        skip(
            test,
            "the CUDA interop",
            "no CUDA device this kernel has a target for (libcuda, a GPU and the sm80/sm90 features are needed)",
            "CROSSGEMM_REQUIRE_CUDA",
        );
    }
    ordinal
}

/// The caller's side: the GPU's primary context (as `CudaContext::new` and the runtime
/// API use it) and a stream of the caller's own on it.
fn caller(ordinal: usize) -> (Arc<CudaContext>, Arc<CudaStream>) {
    let ctx = CudaContext::new(ordinal).unwrap();
    let stream = ctx.new_stream().unwrap();
    (ctx, stream)
}

/// A slice of `data`, written by the caller on `stream`.
fn slice(stream: &Arc<CudaStream>, data: &[f16]) -> Arc<CudaSlice<f16>> {
    Arc::new(stream.clone_htod(data).unwrap())
}

fn values(len: usize, salt: usize) -> Vec<f16> {
    ramp(len, salt).into_iter().map(|v| f16::from_f32(v / 2.0)).collect()
}

/// What the caller reads back from its own slice, on its own stream.
fn read(stream: &Arc<CudaStream>, s: &CudaSlice<f16>) -> Vec<f16> {
    stream.clone_dtoh(s).unwrap()
}

#[test]
fn a_kernel_runs_on_the_callers_stream_and_slices_without_a_copy() {
    let Some(ordinal) = cuda_ordinal("a_kernel_runs_on_the_callers_stream_and_slices_without_a_copy") else {
        return;
    };
    isolated_cache("interop-cuda-stream");
    let (_ctx, stream) = caller(ordinal);
    // An odd K (element loads) and one whose rows are 16-byte multiples (TMA and wgmma on
    // an H200, as on a discovered device).
    for (m, n, k) in [(37, 29, 45), (256, 192, 128)] {
        let (xs, ws, bs) = (values(m * k, 1), values(k * n, 2), values(n, 3));
        let (xb, wb, bb) = (slice(&stream, &xs), slice(&stream, &ws), slice(&stream, &bs));
        let ob = slice(&stream, &vec![f16::NAN; m * n]);
        let dev = Device::from_cuda_stream(&stream).unwrap();
        assert!(dev.info().id.contains("+stream"), "{}", dev.info().id);
        let discovered = Device::open(&format!("cuda:{ordinal}")).unwrap();
        assert_eq!(dev.info().name, discovered.info().name);
        assert_eq!(dev.info().compute_capability, discovered.info().compute_capability);
        let x = Matrix::<f16>::from_cuda_slice(&dev, &xb, m, k).unwrap();
        let w = Matrix::<f16, ColMajor>::from_cuda_slice(&dev, &wb, k, n).unwrap();
        let bias = Row::<f16>::from_cuda_slice(&dev, &bb, n).unwrap();
        let mut out = Matrix::<f16>::from_cuda_slice(&dev, &ob, m, n).unwrap();
        interop_linear_into(&x, &w, &bias, &mut out).unwrap();
        let want = interop_linear::reference(&x, &w, &bias).unwrap();
        // Drop crossgemm's handles first: the caller's slices are still the memory.
        drop((x, w, bias, out, dev));
        // NaN-filled before: an output written anywhere but the caller's slice fails.
        assert_close(
            &read(&stream, &ob),
            &want,
            k,
            false,
            &format!("{m}x{n}x{k} on the caller's stream"),
        );
    }
}

/// Two views of one slice: an output that shares bytes with an operand is an error
/// before anything runs (the kernels do not compute in place); an output beside X in the
/// same rows (other columns of a wider matrix), or after it in the slice, runs.
#[test]
fn the_output_may_not_share_memory_with_an_operand() {
    let Some(ordinal) = cuda_ordinal("the_output_may_not_share_memory_with_an_operand") else {
        return;
    };
    let (_ctx, stream) = caller(ordinal);
    let dev = Device::from_cuda_stream(&stream).unwrap();
    let (m, n, k) = (6, 8, 16);
    let ld = k + n;
    let data = values(m * ld, 1);
    let wide = slice(&stream, &data);
    let w = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &values(k * n, 2)).unwrap();
    let bias = Row::<f16>::from_host(&dev, &values(n, 3)).unwrap();
    let x_side = Matrix::<f16>::from_cuda_slice(&dev, &wide, m, ld).unwrap();
    let mut out_side = Matrix::<f16>::from_cuda_slice(&dev, &wide, m, ld).unwrap();
    let x = x_side.strided(0, m, k, ld).unwrap();
    let want = interop_linear::reference(&x, &w, &bias).unwrap();
    interop_linear_into(&x, &w, &bias, &mut out_side.strided_mut(k, m, n, ld).unwrap()).unwrap();
    let e = interop_linear_into(&x, &w, &bias, &mut out_side.strided_mut(k - 8, m, n, ld).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the output of `interop_linear` shares memory with `x`"),
        "{e}"
    );
    // Views at offsets of one slice: inside X, then after it.
    let parent = slice(&stream, &values(m * k + m * n, 4));
    let x_at = Matrix::<f16>::from_cuda_slice(&dev, &parent, m, k).unwrap();
    let mut inside = Matrix::<f16>::from_cuda_slice_at(&dev, &parent, m * k - 8, m, n).unwrap();
    let e = interop_linear_into(&x_at, &w, &bias, &mut inside)
        .unwrap_err()
        .to_string();
    assert!(e.contains("shares memory with `x`"), "{e}");
    let mut beyond = Matrix::<f16>::from_cuda_slice_at(&dev, &parent, m * k, m, n).unwrap();
    interop_linear_into(&x_at, &w, &bias, &mut beyond).unwrap();
    drop((x_side, out_side, x_at, inside, beyond, dev));
    let got = read(&stream, &wide);
    let out: Vec<f16> = (0..m).flat_map(|i| got[i * ld + k..(i + 1) * ld].to_vec()).collect();
    assert_close(&out, &want, k, false, "an output beside X in its rows");
    for i in 0..m {
        assert_eq!(
            got[i * ld..i * ld + k],
            data[i * ld..i * ld + k],
            "X's row {i} untouched"
        );
    }
}

/// A batch stored back to back in one slice per operand: a view per matrix (and per bias)
/// at its offset, each call right; a misaligned offset or one past the end is an error
/// naming the rule.
#[test]
fn views_at_offsets_run_a_batch_in_one_slice() {
    let Some(ordinal) = cuda_ordinal("views_at_offsets_run_a_batch_in_one_slice") else {
        return;
    };
    isolated_cache("interop-cuda-batch");
    let (_ctx, stream) = caller(ordinal);
    let dev = Device::from_cuda_stream(&stream).unwrap();
    // Views start 16-byte aligned: offsets in multiples of 8 f16 elements.
    let stride = |elems: usize| elems.div_ceil(8) * 8;
    let (batch, m, n, k) = (3, 5, 24, 40);
    let (sx, so, sb) = (stride(m * k), stride(m * n), stride(n));
    let xb = slice(&stream, &values(batch * sx, 1));
    let wb = slice(&stream, &values(k * n, 2));
    let bb = slice(&stream, &values(batch * sb, 3));
    let ob = slice(&stream, &vec![f16::NAN; batch * so]);
    let w = Matrix::<f16, ColMajor>::from_cuda_slice(&dev, &wb, k, n).unwrap();
    let mut want = Vec::new();
    for b in 0..batch {
        let x = Matrix::<f16>::from_cuda_slice_at(&dev, &xb, b * sx, m, k).unwrap();
        let bias = Row::<f16>::from_cuda_slice_at(&dev, &bb, b * sb, n).unwrap();
        let mut out = Matrix::<f16>::from_cuda_slice_at(&dev, &ob, b * so, m, n).unwrap();
        interop_linear_into(&x, &w, &bias, &mut out).unwrap();
        want.push(interop_linear::reference(&x, &w, &bias).unwrap());
    }
    let got = read(&stream, &ob);
    for (b, want) in want.iter().enumerate() {
        assert_close(&got[b * so..b * so + m * n], want, k, false, &format!("batch item {b}"));
    }
    let e = Matrix::<f16>::from_cuda_slice_at(&dev, &xb, 1, m, k)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not 16-byte aligned"), "{e}");
    let e = Row::<f16>::from_cuda_slice_at(&dev, &bb, 3, n).unwrap_err().to_string();
    assert!(e.contains("not 16-byte aligned"), "{e}");
    let e = Matrix::<f16>::from_cuda_slice_at(&dev, &xb, (batch - 1) * sx + 8, m, k)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the view needs"), "{e}");
    let e = Col::<f16>::from_cuda_slice(&dev, &bb, batch * sb + 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the view needs"), "{e}");
}

#[test]
fn foreign_small_misaligned_or_mixed_memory_is_an_error() {
    let Some(ordinal) = cuda_ordinal("foreign_small_misaligned_or_mixed_memory_is_an_error") else {
        return;
    };
    let (_ctx, stream) = caller(ordinal);
    let dev = Device::from_cuda_stream(&stream).unwrap();
    let small = slice(&stream, &values(10, 0));
    let e = Matrix::<f16>::from_cuda_slice(&dev, &small, 4, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds 20 bytes; the view needs 32"), "{e}");
    // Memory of another context of the same GPU.
    let other = CudaContext::new_non_primary(ordinal, 0).unwrap();
    let foreign = Arc::new(other.default_stream().clone_htod(&values(16, 0)).unwrap());
    let e = Matrix::<f16>::from_cuda_slice(&dev, &foreign, 4, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("another CUDA context"), "{e}");
    // A raw context that is not the primary one cannot be borrowed.
    let other_stream = other.new_stream().unwrap();
    let e = unsafe { Device::from_raw_cuda_stream(other.cu_ctx(), other_stream.cu_stream()) }
        .unwrap_err()
        .to_string();
    assert!(e.contains("not its device's primary context"), "{e}");
    // Not a CUDA device.
    let e = Matrix::<f16>::from_cuda_slice(&Device::host(), &small, 2, 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a CUDA device"), "{e}");
    // A misaligned raw pointer.
    let (base, _g) = small.device_ptr(&stream);
    let e = unsafe { Row::<f16>::from_raw_cuda_ptr(&dev, base + 2, 9, 4) }
        .unwrap_err()
        .to_string();
    assert!(e.contains("not 16-byte aligned"), "{e}");
    // A caller's slice and crossgemm's own device do not mix in one call.
    let x = Matrix::<f16>::from_cuda_slice(&dev, &slice(&stream, &values(16, 1)), 4, 4).unwrap();
    let own = Device::open(&format!("cuda:{ordinal}")).unwrap();
    let w = Matrix::<f16, ColMajor>::from_host(&own, 4, 4, &values(16, 2)).unwrap();
    let bias = Row::<f16>::from_host(&own, &values(4, 3)).unwrap();
    assert!(interop_linear(&x, &w, &bias).is_err());
}

/// The views hold the memory (the caller may drop its `Arc` first, even of a slice on
/// another stream) and give it back: once they are dropped the caller's `Arc` is unique
/// and its slices work as before. The raw-handle device and raw-pointer views run too.
#[test]
fn views_keep_the_memory_and_leave_it_to_the_caller() {
    let Some(ordinal) = cuda_ordinal("views_keep_the_memory_and_leave_it_to_the_caller") else {
        return;
    };
    isolated_cache("interop-cuda-drop");
    let (ctx, stream) = caller(ordinal);
    let (m, n, k) = (19, 40, 32);
    let (xs, ws, bs) = (values(m * k, 1), values(k * n, 2), values(n, 3));
    let mut xb = slice(&stream, &xs);
    // W on another stream of the context: the views order it with the device's stream.
    let side = ctx.new_stream().unwrap();
    let wb = slice(&side, &ws);
    let mut ob = slice(&stream, &vec![f16::NAN; m * n]);
    let bb = stream.clone_htod(&bs).unwrap();
    // SAFETY: the primary context and a stream of it, both alive until the end.
    let dev = unsafe { Device::from_raw_cuda_stream(ctx.cu_ctx(), stream.cu_stream()) }.unwrap();
    let x = Matrix::<f16>::from_cuda_slice(&dev, &xb, m, k).unwrap();
    let w = Matrix::<f16, ColMajor>::from_cuda_slice(&dev, &wb, k, n).unwrap();
    drop(wb); // the view holds W's memory now, and frees it after the kernel
    let (bias_ptr, guard) = bb.device_ptr(&stream);
    // SAFETY: `bb` outlives the view, which is dropped below.
    let bias = unsafe { Row::<f16>::from_raw_cuda_ptr(&dev, bias_ptr, n, n) }.unwrap();
    drop(guard);
    let mut out = Matrix::<f16>::from_cuda_slice(&dev, &ob, m, n).unwrap();
    interop_linear_into(&x, &w, &bias, &mut out).unwrap();
    let want = interop_linear::reference(&x, &w, &bias).unwrap();
    drop((x, w, bias, out));
    assert_close(&read(&stream, &ob), &want, k, false, "views of the raw-handle device");
    // The caller's again: unique, writable and readable on its own stream.
    let fresh = values(m * k, 7);
    stream
        .memcpy_htod(&fresh, Arc::get_mut(&mut xb).expect("no view holds x"))
        .unwrap();
    assert_eq!(read(&stream, &xb), fresh);
    assert!(Arc::get_mut(&mut ob).is_some(), "no view holds out");
    assert_eq!(read(&stream, &bb), bs);
    drop(dev);
}

/// crossgemm's discovered device of the GPU uses its primary context, as the caller's
/// `CudaContext::new` does: it takes views of the caller's slices too, its own stream
/// ordered with theirs (at each view's creation and drop).
#[test]
fn a_discovered_device_takes_views_of_primary_context_slices() {
    let Some(ordinal) = cuda_ordinal("a_discovered_device_takes_views_of_primary_context_slices") else {
        return;
    };
    isolated_cache("interop-cuda-discovered");
    let (_ctx, stream) = caller(ordinal);
    let dev = Device::open(&format!("cuda:{ordinal}")).unwrap();
    let (m, n, k) = (33, 48, 64);
    let (xs, ws, bs) = (values(m * k, 1), values(k * n, 2), values(n, 3));
    let (xb, wb, bb) = (slice(&stream, &xs), slice(&stream, &ws), slice(&stream, &bs));
    let ob = slice(&stream, &vec![f16::NAN; m * n]);
    let x = Matrix::<f16>::from_cuda_slice(&dev, &xb, m, k).unwrap();
    let w = Matrix::<f16, ColMajor>::from_cuda_slice(&dev, &wb, k, n).unwrap();
    let bias = Row::<f16>::from_cuda_slice(&dev, &bb, n).unwrap();
    let mut out = Matrix::<f16>::from_cuda_slice(&dev, &ob, m, n).unwrap();
    // The reference first, so that nothing of crossgemm's waits after the launch.
    let want = interop_linear::reference(&x, &w, &bias).unwrap();
    interop_linear_into(&x, &w, &bias, &mut out).unwrap();
    // Dropping the views orders the caller's stream after the kernel, so the caller's
    // read needs no synchronize of crossgemm's device.
    drop((x, w, bias, out));
    assert_close(&read(&stream, &ob), &want, k, false, "views on the discovered device");
}
