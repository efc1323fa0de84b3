//! Devices on a caller's OpenCL queue, and views of a caller's `cl_mem`.

use super::{cl_err, driver_err, OpenclBackend};
use crate::device::{Device, RawBuffer};
use crate::error::{GemmError, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::types::{cl_command_queue, cl_mem};

impl Device {
    /// A device that runs everything on the caller's OpenCL queue: every upload, launch
    /// and download of crossgemm's calls on it is enqueued there, in order with the
    /// caller's own commands, and a launch returns without waiting (only
    /// [`Device::synchronize`], a download, a tune (under `CROSSGEMM_TUNE=full`, a launch
    /// whose shape has no winner yet) and the first launch of a config at a new build
    /// variant, which checks it, wait for the queue).
    ///
    /// The queue, its context and device are retained: they live while the device or a
    /// buffer of it does, whatever the caller drops. Buffers of the queue's context can
    /// be used as operands ([`Matrix::from_opencl_buffer`](crate::Matrix::from_opencl_buffer));
    /// crossgemm's own devices (of their own contexts) do not mix with this one. A queue
    /// without profiling works; the tuner then times launches on the host clock. The
    /// queue must run its commands in order (an out-of-order queue is
    /// [`GemmError::Unsupported`]): a call's commands are ordered by the queue alone.
    pub fn from_opencl_queue(queue: &CommandQueue) -> Result<Device> {
        // SAFETY: an opencl3 queue holds a valid handle for as long as it lives.
        unsafe { Device::from_raw_opencl_queue(queue.get()) }
    }

    /// [`Device::from_opencl_queue`] for a raw `cl_command_queue` (another binding's).
    ///
    /// # Safety
    /// `queue` must be a valid OpenCL command queue.
    pub unsafe fn from_raw_opencl_queue(queue: cl_command_queue) -> Result<Device> {
        let op = "making a device from a caller's OpenCL queue";
        let b = OpenclBackend::from_raw_queue(queue).map_err(|e| cl_err(op, e, ""))?;
        // Every call's upload, launches (a staging copy, the kernel) and download, and a
        // split-K launch's reuse of its workspace, are ordered by the queue alone: on an
        // out-of-order queue they could run in any order, and the results be wrong.
        if b.out_of_order().map_err(|e| cl_err(op, e, ""))? {
            return Err(GemmError::Unsupported(format!(
                "an out-of-order OpenCL queue ({}): crossgemm orders the commands of a call by the queue; make the device from an in-order queue (one created without CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)",
                b.info.id
            )));
        }
        Ok(Device::from_backend(Box::new(b)))
    }

    /// A view of `bytes` from byte `origin` of the caller's `mem`: the memory itself at
    /// origin 0, else an OpenCL sub-buffer. Retained either way.
    ///
    /// # Safety
    /// `mem` must be a valid OpenCL memory object.
    pub(crate) unsafe fn view_cl_mem(&self, mem: cl_mem, origin: usize, bytes: usize) -> Result<RawBuffer> {
        let b = self.backend().as_opencl().ok_or_else(|| {
            driver_err(
                "viewing a caller's cl_mem",
                format!("{} is not an OpenCL device", self.info().id),
            )
        })?;
        let inner = if origin == 0 {
            b.wrap(mem, bytes)?
        } else {
            b.sub_buffer(mem, origin, bytes)?
        };
        Ok(RawBuffer {
            device: self.clone(),
            bytes,
            inner,
        })
    }
}
