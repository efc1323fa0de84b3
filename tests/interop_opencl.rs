//! A program's own OpenCL context, queue and buffers (issue 13, the caller's memory and
//! queue): a kernel runs on them with no copy, its work ordered on the caller's queue; a
//! buffer of another context, one too small, or one mixed with crossgemm's own devices
//! is an error. On the first OpenCL device (PoCL in CI).

mod common;

use common::*;
use crossgemm::opencl3::command_queue::{
    CommandQueue, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROFILING_ENABLE,
};
use crossgemm::opencl3::context::Context;
use crossgemm::opencl3::device::{get_all_devices, Device as ClDevice, CL_DEVICE_TYPE_ALL};
use crossgemm::opencl3::memory::{Buffer, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY};
use crossgemm::opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING};
use crossgemm::prelude::*;

#[gemm_kernel]
fn interop_linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

/// The first OpenCL device, as opencl3 sees it (the caller's side). Looked up once: the
/// ICD loader's first platform query is not safe to race from two test threads.
fn cl_device(test: &str) -> Option<ClDevice> {
    static FIRST: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let d = FIRST
        .get_or_init(|| {
            get_all_devices(CL_DEVICE_TYPE_ALL)
                .ok()
                .and_then(|ids| ids.first().map(|&id| id as usize))
        })
        .map(|id| ClDevice::new(id as crossgemm::opencl3::types::cl_device_id));
    if d.is_none() {
        skip(
            test,
            "the OpenCL interop",
            "no OpenCL device",
            "CROSSGEMM_REQUIRE_OPENCL",
        );
    }
    d
}

#[allow(deprecated)] // clCreateCommandQueue: OpenCL 1.2, which PoCL and NVIDIA's drivers take
fn queue(context: &Context, device: &ClDevice, profiling: bool) -> CommandQueue {
    let props = if profiling { CL_QUEUE_PROFILING_ENABLE } else { 0 };
    unsafe { CommandQueue::create(context, device.id(), props) }.unwrap()
}

/// A buffer of `data`, written through the caller's queue.
fn buffer<T>(context: &Context, queue: &CommandQueue, data: &[T]) -> Buffer<T> {
    let mut b = unsafe { Buffer::<T>::create(context, CL_MEM_READ_WRITE, data.len(), std::ptr::null_mut()) }.unwrap();
    unsafe { queue.enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[]) }.unwrap();
    b
}

fn values(len: usize, salt: usize) -> Vec<f16> {
    (0..len)
        .map(|i| f16::from_f32((((i * 37 + salt * 11) % 61) as f32 - 30.0) / 64.0))
        .collect()
}

#[test]
fn a_kernel_runs_on_the_callers_queue_and_buffers_without_a_copy() {
    let Some(d) = cl_device("a_kernel_runs_on_the_callers_queue_and_buffers_without_a_copy") else {
        return;
    };
    isolated_cache("interop-queue");
    let context = Context::from_device(&d).unwrap();
    let (m, n, k) = (37, 29, 45);
    // With and without profiling on the caller's queue: the tuner times either way.
    for profiling in [false, true] {
        let q = queue(&context, &d, profiling);
        let (xs, ws, bs) = (values(m * k, 1), values(k * n, 2), values(n, 3));
        let (xb, wb, bb) = (
            buffer(&context, &q, &xs),
            buffer(&context, &q, &ws),
            buffer(&context, &q, &bs),
        );
        let ob = buffer(&context, &q, &vec![f16::from_f32(f32::NAN); m * n]);
        let dev = Device::from_opencl_queue(&q).unwrap();
        assert!(dev.info().id.contains("+queue"), "{}", dev.info().id);
        let x = Matrix::<f16>::from_opencl_buffer(&dev, &xb, m, k).unwrap();
        let w = Matrix::<f16, ColMajor>::from_opencl_buffer(&dev, &wb, k, n).unwrap();
        let bias = Row::<f16>::from_opencl_buffer(&dev, &bb, n).unwrap();
        let mut out = Matrix::<f16>::from_opencl_buffer(&dev, &ob, m, n).unwrap();
        interop_linear_into(&x, &w, &bias, &mut out).unwrap();
        // Drop crossgemm's handles first: the caller's buffers are still the memory.
        let want = interop_linear::reference(&x, &w, &bias).unwrap();
        drop((x, w, bias, out, dev));
        // The caller reads its own buffer after its own queue's commands.
        let mut got = vec![f16::ZERO; m * n];
        let ev = unsafe { q.enqueue_read_buffer(&ob, CL_NON_BLOCKING, 0, &mut got, &[]) }.unwrap();
        ev.wait().unwrap();
        // NaN-filled before: an output written anywhere but the caller's buffer fails.
        assert_close(&got, &want, k, false, &format!("caller's queue, profiling {profiling}"));
    }
}

#[test]
fn foreign_small_or_mixed_buffers_are_errors() {
    let Some(d) = cl_device("foreign_small_or_mixed_buffers_are_errors") else {
        return;
    };
    let context = Context::from_device(&d).unwrap();
    let q = queue(&context, &d, false);
    let dev = Device::from_opencl_queue(&q).unwrap();
    let small = buffer(&context, &q, &values(10, 0));
    let e = Matrix::<f16>::from_opencl_buffer(&dev, &small, 4, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds 20 bytes; the view needs 32"), "{e}");
    // Memory of another context.
    let other = Context::from_device(&d).unwrap();
    let oq = queue(&other, &d, false);
    let foreign = buffer(&other, &oq, &values(16, 0));
    let e = Matrix::<f16>::from_opencl_buffer(&dev, &foreign, 4, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("another OpenCL context"), "{e}");
    // Not an OpenCL device.
    let e = Matrix::<f16>::from_opencl_buffer(&Device::host(), &foreign, 4, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an OpenCL device"), "{e}");
    // A caller's buffer and crossgemm's own device do not mix in one call.
    let x = Matrix::<f16>::from_opencl_buffer(&dev, &buffer(&context, &q, &values(4 * 4, 1)), 4, 4).unwrap();
    let own = Device::list()
        .into_iter()
        .find(|d| d.info().kind == Backend::Opencl)
        .unwrap();
    let w = Matrix::<f16, ColMajor>::from_host(&own, 4, 4, &values(16, 2)).unwrap();
    let bias = Row::<f16>::from_host(&own, &values(4, 3)).unwrap();
    assert!(interop_linear(&x, &w, &bias).is_err());
}

/// Memory the caller made read-only for kernels cannot be an output, nor write-only
/// memory an operand: each is an error naming the argument, before anything runs; the
/// same buffers in the roles their flags allow run.
#[test]
fn read_only_or_write_only_memory_is_used_only_as_made() {
    let Some(d) = cl_device("read_only_or_write_only_memory_is_used_only_as_made") else {
        return;
    };
    let context = Context::from_device(&d).unwrap();
    let q = queue(&context, &d, false);
    let dev = Device::from_opencl_queue(&q).unwrap();
    let made = |flags, len: usize, salt| {
        let data = values(len, salt);
        let mut b = unsafe { Buffer::<f16>::create(&context, flags, len, std::ptr::null_mut()) }.unwrap();
        unsafe { q.enqueue_write_buffer(&mut b, CL_BLOCKING, 0, &data, &[]) }.unwrap();
        b
    };
    let (m, n, k) = (5, 6, 7);
    let read_only = made(CL_MEM_READ_ONLY, m * k, 1);
    let write_only = made(CL_MEM_WRITE_ONLY, m * n, 2);
    let x_ro = Matrix::<f16>::from_opencl_buffer(&dev, &read_only, m, k).unwrap();
    let w = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &values(k * n, 3)).unwrap();
    let bias = Row::<f16>::from_host(&dev, &values(n, 4)).unwrap();
    // The roles the flags allow: read-only X, write-only output.
    let mut out_wo = Matrix::<f16>::from_opencl_buffer(&dev, &write_only, m, n).unwrap();
    interop_linear_into(&x_ro, &w, &bias, &mut out_wo).unwrap();
    let want = interop_linear::reference(&x_ro, &w, &bias).unwrap();
    let mut got = vec![f16::ZERO; m * n];
    unsafe { q.enqueue_read_buffer(&write_only, CL_BLOCKING, 0, &mut got, &[]) }.unwrap();
    assert_close(&got, &want, k, false, "read-only X, write-only output");
    // The others: read-only memory as the output, write-only as an operand.
    let mut out_ro = Matrix::<f16>::from_opencl_buffer(&dev, &made(CL_MEM_READ_ONLY, m * n, 5), m, n).unwrap();
    let e = interop_linear_into(&x_ro, &w, &bias, &mut out_ro)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the output of `interop_linear`") && e.contains("CL_MEM_READ_ONLY"),
        "{e}"
    );
    let x_wo = Matrix::<f16>::from_opencl_buffer(&dev, &made(CL_MEM_WRITE_ONLY, m * k, 6), m, k).unwrap();
    let e = interop_linear(&x_wo, &w, &bias).unwrap_err().to_string();
    assert!(
        e.contains("`x` of `interop_linear`") && e.contains("CL_MEM_WRITE_ONLY"),
        "{e}"
    );
}

/// Two handles on one of the program's buffers: an output that shares bytes with an
/// operand is an error before anything runs (the kernels do not compute in place), while
/// an output beside the operand in the same rows (other columns of a wider matrix) runs
/// and leaves the operand's columns as they were.
#[test]
fn the_output_may_not_share_memory_with_an_operand() {
    let Some(d) = cl_device("the_output_may_not_share_memory_with_an_operand") else {
        return;
    };
    let context = Context::from_device(&d).unwrap();
    let q = queue(&context, &d, false);
    let dev = Device::from_opencl_queue(&q).unwrap();
    let (m, n, k) = (6, 8, 12);
    // An m x (k + n) row-major matrix: X in its first k columns, the output beside it.
    let ld = k + n;
    let data = values(m * ld, 1);
    let wide = buffer(&context, &q, &data);
    let x_side = Matrix::<f16>::from_opencl_buffer(&dev, &wide, m, ld).unwrap();
    let mut out_side = Matrix::<f16>::from_opencl_buffer(&dev, &wide, m, ld).unwrap();
    let w = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &values(k * n, 2)).unwrap();
    let bias = Row::<f16>::from_host(&dev, &values(n, 3)).unwrap();
    let x = x_side.strided(0, m, k, ld).unwrap();
    let want = interop_linear::reference(&x, &w, &bias).unwrap();
    interop_linear_into(&x, &w, &bias, &mut out_side.strided_mut(k, m, n, ld).unwrap()).unwrap();
    let mut got = vec![f16::ZERO; m * ld];
    unsafe { q.enqueue_read_buffer(&wide, CL_BLOCKING, 0, &mut got, &[]) }.unwrap();
    let out: Vec<f16> = (0..m).flat_map(|i| got[i * ld + k..(i + 1) * ld].to_vec()).collect();
    assert_close(&out, &want, k, false, "an output beside X in its rows");
    for i in 0..m {
        assert_eq!(
            got[i * ld..i * ld + k],
            data[i * ld..i * ld + k],
            "X's row {i} untouched"
        );
    }
    // One column further left, the output takes X's last column: refused.
    let e = interop_linear_into(&x, &w, &bias, &mut out_side.strided_mut(k - 1, m, n, ld).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the output of `interop_linear` shares memory with `x`"),
        "{e}"
    );
    // Whole matrices over one buffer; the bias inside the output's memory.
    let whole = buffer(&context, &q, &values(m * k.max(n), 4));
    let x_whole = Matrix::<f16>::from_opencl_buffer(&dev, &whole, m, k).unwrap();
    let mut out_whole = Matrix::<f16>::from_opencl_buffer(&dev, &whole, m, n).unwrap();
    let e = interop_linear_into(&x_whole, &w, &bias, &mut out_whole)
        .unwrap_err()
        .to_string();
    assert!(e.contains("shares memory with `x`"), "{e}");
    let bias_in = Row::<f16>::from_opencl_buffer(&dev, &whole, n).unwrap();
    let x_own = Matrix::<f16>::from_host(&dev, m, k, &values(m * k, 5)).unwrap();
    let e = interop_linear_into(&x_own, &w, &bias_in, &mut out_whole)
        .unwrap_err()
        .to_string();
    assert!(e.contains("shares memory with `bias`"), "{e}");
    // Views at offsets (OpenCL sub-buffers of one parent): the output inside X's memory,
    // then after it.
    let align = (d.mem_base_addr_align().unwrap() as usize / 8 / std::mem::size_of::<f16>()).max(1);
    let after = (m * k).div_ceil(align) * align;
    let parent = buffer(&context, &q, &values(after + m * n, 6));
    let x_at = Matrix::<f16>::from_opencl_buffer(&dev, &parent, m, k).unwrap();
    if after > align {
        let mut inside = Matrix::<f16>::from_opencl_buffer_at(&dev, &parent, after - align, m, n).unwrap();
        let e = interop_linear_into(&x_at, &w, &bias, &mut inside)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shares memory with `x`"), "{e}");
    }
    let mut beyond = Matrix::<f16>::from_opencl_buffer_at(&dev, &parent, after, m, n).unwrap();
    interop_linear_into(&x_at, &w, &bias, &mut beyond).unwrap();
}

/// A queue that may run its commands out of order is refused: a call's upload, launches
/// and download are ordered by the queue alone.
#[test]
#[allow(deprecated)] // clCreateCommandQueue, as `queue` above
fn an_out_of_order_queue_is_refused() {
    let Some(d) = cl_device("an_out_of_order_queue_is_refused") else {
        return;
    };
    let context = Context::from_device(&d).unwrap();
    let Ok(q) = (unsafe { CommandQueue::create(&context, d.id(), CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) }) else {
        // A device without out-of-order queues cannot be handed one.
        eprintln!("an_out_of_order_queue_is_refused: the device makes no out-of-order queue; nothing to refuse");
        return;
    };
    let e = Device::from_opencl_queue(&q)
        .expect_err("an out-of-order queue is refused")
        .to_string();
    assert!(
        e.contains("out-of-order OpenCL queue") && e.contains("in-order queue"),
        "{e}"
    );
    // The same device's in-order queue is taken.
    assert!(Device::from_opencl_queue(&queue(&context, &d, false)).is_ok());
}

/// A batch stored back to back in the program's buffers: one view per matrix (and per
/// bias) at its offset (OpenCL sub-buffers), each call right; a misaligned offset or one past the end
/// is an error naming the rule.
#[test]
fn views_at_offsets_run_a_batch_in_one_buffer() {
    let Some(d) = cl_device("views_at_offsets_run_a_batch_in_one_buffer") else {
        return;
    };
    isolated_cache("interop-batch");
    let context = Context::from_device(&d).unwrap();
    let q = queue(&context, &d, false);
    let dev = Device::from_opencl_queue(&q).unwrap();
    // Offsets must be multiples of the device's base-address alignment (bits).
    let align = (d.mem_base_addr_align().unwrap() as usize / 8 / std::mem::size_of::<f16>()).max(1);
    let stride = |elems: usize| elems.div_ceil(align) * align;
    let (batch, m, n, k) = (3, 5, 24, 40);
    let (sx, so) = (stride(m * k), stride(m * n));
    let xs = values(batch * sx, 1);
    // One bias per matrix of the batch, back to back too.
    let sb = stride(n);
    let (ws, bs) = (values(k * n, 2), values(batch * sb, 3));
    let (xb, wb, bb) = (
        buffer(&context, &q, &xs),
        buffer(&context, &q, &ws),
        buffer(&context, &q, &bs),
    );
    let ob = buffer(&context, &q, &vec![f16::from_f32(f32::NAN); batch * so]);
    // One weight for every matrix of the batch.
    let w = Matrix::<f16, ColMajor>::from_opencl_buffer(&dev, &wb, k, n).unwrap();
    let mut want = Vec::new();
    for b in 0..batch {
        let bias = Row::<f16>::from_opencl_buffer_at(&dev, &bb, b * sb, n).unwrap();
        let x = Matrix::<f16>::from_opencl_buffer_at(&dev, &xb, b * sx, m, k).unwrap();
        let mut out = Matrix::<f16>::from_opencl_buffer_at(&dev, &ob, b * so, m, n).unwrap();
        interop_linear_into(&x, &w, &bias, &mut out).unwrap();
        want.push(interop_linear::reference(&x, &w, &bias).unwrap());
    }
    let mut got = vec![f16::ZERO; batch * so];
    unsafe { q.enqueue_read_buffer(&ob, CL_BLOCKING, 0, &mut got, &[]) }.unwrap();
    for (b, want) in want.iter().enumerate() {
        assert_close(&got[b * so..b * so + m * n], want, k, false, &format!("batch item {b}"));
    }
    if align > 1 {
        let e = Matrix::<f16>::from_opencl_buffer_at(&dev, &xb, 1, m, k)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must start at a multiple of"), "{e}");
    }
    let e = Matrix::<f16>::from_opencl_buffer_at(&dev, &xb, (batch - 1) * sx + align, m, k)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("the view needs"), "{e}");
}
