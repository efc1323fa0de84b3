//! A program that owns its OpenCL context, queue and buffers (made with opencl3) runs a
//! `#[gemm_kernel]` on them: no copy into crossgemm's buffers, the kernel enqueued on the
//! program's own queue, the result read back by the program itself. Prints the device,
//! the max error against the host reference and `ok`.
//!
//! `cargo run --example interop_opencl` (the first OpenCL device; PoCL on a CPU will do).

use crossgemm::opencl3::command_queue::CommandQueue;
use crossgemm::opencl3::context::Context;
use crossgemm::opencl3::device::{get_all_devices, Device as ClDevice, CL_DEVICE_TYPE_ALL};
use crossgemm::opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use crossgemm::opencl3::types::CL_BLOCKING;
use crossgemm::prelude::*;

#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The program's side: its own device, context, queue and buffers.
    let Some(&id) = get_all_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default().first() else {
        println!("no OpenCL device: nothing to show (install PoCL for OpenCL on the CPU)");
        return Ok(());
    };
    let cl = ClDevice::new(id);
    let context = Context::from_device(&cl)?;
    #[allow(deprecated)] // clCreateCommandQueue: OpenCL 1.2, which every driver takes
    let queue = unsafe { CommandQueue::create(&context, cl.id(), 0)? };
    let (m, n, k) = (100, 300, 200);
    let host = |len: usize, salt: usize| -> Vec<f16> {
        (0..len)
            .map(|i| f16::from_f32((((i * 37 + salt * 11) % 61) as f32 - 30.0) / 64.0))
            .collect()
    };
    let buffer = |data: &[f16]| -> Result<Buffer<f16>, Box<dyn std::error::Error>> {
        let mut b = unsafe { Buffer::<f16>::create(&context, CL_MEM_READ_WRITE, data.len(), std::ptr::null_mut())? };
        unsafe { queue.enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])? };
        Ok(b)
    };
    let (xb, wb, bb) = (buffer(&host(m * k, 1))?, buffer(&host(k * n, 2))?, buffer(&host(n, 3))?);
    let ob = buffer(&vec![f16::ZERO; m * n])?;

    // crossgemm on top: a device on the program's queue, views of its buffers.
    let dev = Device::from_opencl_queue(&queue)?;
    println!("device: {}", dev.info());
    let x = Matrix::<f16>::from_opencl_buffer(&dev, &xb, m, k)?;
    let w = Matrix::<f16, ColMajor>::from_opencl_buffer(&dev, &wb, k, n)?;
    let bias = Row::<f16>::from_opencl_buffer(&dev, &bb, n)?;
    let mut out = Matrix::<f16>::from_opencl_buffer(&dev, &ob, m, n)?;
    linear_relu_into(&x, &w, &bias, &mut out)?; // enqueued on `queue`; returns without waiting
    let want = linear_relu::reference(&x, &w, &bias)?;

    // The program reads its own buffer, after its queue's commands.
    let mut got = vec![f16::ZERO; m * n];
    unsafe { queue.enqueue_read_buffer(&ob, CL_BLOCKING, 0, &mut got, &[])? };
    let err = got
        .iter()
        .zip(&want)
        .map(|(g, r)| (g.to_f32() - r.to_f32()).abs() / r.to_f32().abs().max(1.0))
        // f32::max would drop a NaN; an unwritten element must show.
        .fold(
            0.0f32,
            |a, e| if a.is_nan() || e.is_nan() { f32::NAN } else { a.max(e) },
        );
    println!("{m}x{n}x{k}: max relative error {err:.2e}");
    // A NaN (an element never written) fails too.
    if err.is_nan() || err > 1e-2 {
        return Err(format!("max relative error {err} over 1e-2").into());
    }
    println!("ok");
    Ok(())
}
