//! The one error type at the runtime boundary.

use thiserror::Error;

/// Everything that can go wrong when running a crossgemm kernel.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GemmError {
    /// Operand shapes do not form a valid product (the message names every shape).
    #[error("shape mismatch in `{kernel}`: {detail}")]
    Shape {
        /// Kernel name.
        kernel: String,
        /// What disagrees, with the shapes.
        detail: String,
    },
    /// Operands live on different devices.
    #[error("device mismatch in `{kernel}`: `{param}` is on {found}, but the kernel runs on {expected}")]
    DeviceMismatch {
        /// Kernel name.
        kernel: String,
        /// Offending parameter.
        param: String,
        /// Its device.
        found: String,
        /// The device of the first operand.
        expected: String,
    },
    /// A host slice has the wrong length for the shape it is uploaded as.
    #[error("data length {len} does not match a {rows}x{cols} matrix ({} elements)", rows * cols)]
    DataLength {
        /// Elements given.
        len: usize,
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
    },
    /// No device could be opened for the request (`CROSSGEMM_DEVICE` or an explicit name).
    #[error("no such device `{request}`: {reason}")]
    NoDevice {
        /// What was asked for.
        request: String,
        /// Why it is not available, and what is.
        reason: String,
    },
    /// The kernel has no code for this device: its target was not enabled or planned.
    #[error("kernel `{kernel}` has no code for {device}: {hint}")]
    NoTarget {
        /// Kernel name.
        kernel: String,
        /// Device description.
        device: String,
        /// Targets compiled in, and the cargo feature to enable.
        hint: String,
    },
    /// The driver's compiler rejected a generated source.
    #[error("{backend} compilation of `{kernel}` failed with options {options:?}:\n{log}")]
    Compile {
        /// `NVRTC` or `OpenCL`.
        backend: &'static str,
        /// Kernel symbol.
        kernel: String,
        /// Compiler options, defines included.
        options: Vec<String>,
        /// The compiler's build log.
        log: String,
    },
    /// A launch, copy or allocation failed in the driver.
    #[error("{backend} error during {op}: {message}")]
    Driver {
        /// `CUDA`, `OpenCL` or `cuBLAS`.
        backend: &'static str,
        /// What was being done.
        op: String,
        /// The driver's message, with what crossgemm knows about the call.
        message: String,
        /// The driver library's own error value, where there is one (cudarc's
        /// `DriverError`, opencl3's `ClError`, ...).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// An explicit config does not fit the device it was asked to run on.
    #[error("config {config} does not fit {device}: {why}")]
    ConfigDoesNotFit {
        /// The config, as its family describes it.
        config: String,
        /// Device description.
        device: String,
        /// Which limit it breaks, with numbers.
        why: String,
    },
    /// A tuning run verified no candidate (each failed to compile, to launch, or gave a
    /// wrong result).
    #[error("no candidate of `{kernel}` for {device} passed ({candidates} candidates; first failures: {failures})")]
    NoCandidatePassed {
        /// Kernel name.
        kernel: String,
        /// Device description.
        device: String,
        /// How many candidates were tried.
        candidates: usize,
        /// The first failures, each with its config, stage and reason.
        failures: String,
    },
    /// The request is valid but not supported on this device (e.g. too little shared memory).
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// A view that does not lie inside its buffer, or whose leading dimension is less than
    /// its rows' (or columns') extent.
    #[error("invalid view: {0}")]
    View(String),
}

impl GemmError {
    /// Whether the device ran out of memory: a driver error that CUDA reports as
    /// `CUDA_ERROR_OUT_OF_MEMORY`, or OpenCL as `CL_MEM_OBJECT_ALLOCATION_FAILURE`,
    /// `CL_OUT_OF_RESOURCES` or `CL_OUT_OF_HOST_MEMORY`. A program may free memory of its
    /// own and call again; crossgemm has already given up what it keeps only for speed
    /// (staging scratch, [`Device::free_staging_scratch`](crate::Device::free_staging_scratch)).
    pub fn is_out_of_memory(&self) -> bool {
        let GemmError::Driver {
            source: Some(source), ..
        } = self
        else {
            return false;
        };
        #[cfg(feature = "cuda")]
        if let Some(e) = source.downcast_ref::<cudarc::driver::DriverError>() {
            return e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        }
        #[cfg(feature = "opencl")]
        if let Some(e) = source.downcast_ref::<opencl3::error_codes::ClError>() {
            use opencl3::error_codes::{CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_OUT_OF_RESOURCES};
            return matches!(
                e.0,
                CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES | CL_OUT_OF_HOST_MEMORY
            );
        }
        source.is::<InjectedOutOfMemory>()
    }
}

/// The source of an out-of-memory failure a test injected
/// (`crate::device::fail_next_allocations`).
#[derive(Debug, Error)]
#[error("out of memory (injected by fail_next_allocations)")]
pub(crate) struct InjectedOutOfMemory;

impl InjectedOutOfMemory {
    /// The driver error an injected allocation failure stands for.
    pub(crate) fn driver_error() -> GemmError {
        GemmError::Driver {
            backend: "test",
            op: "allocating".into(),
            message: InjectedOutOfMemory.to_string(),
            source: Some(Box::new(InjectedOutOfMemory)),
        }
    }
}

/// A driver error with `source` (unit tests of what the source decides).
#[cfg(test)]
pub(crate) fn test_driver_error(source: Option<Box<dyn std::error::Error + Send + Sync>>) -> GemmError {
    GemmError::Driver {
        backend: "test",
        op: "launch".into(),
        message: "m".into(),
        source,
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = GemmError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    use test_driver_error as driver;

    /// Out of memory is told by the driver's own code, not by the message.
    #[test]
    fn out_of_memory_by_code() {
        assert!(InjectedOutOfMemory::driver_error().is_out_of_memory());
        assert!(!driver(None).is_out_of_memory());
        assert!(!GemmError::Unsupported("out of memory".into()).is_out_of_memory());
        #[cfg(feature = "cuda")]
        {
            use cudarc::driver::{sys::CUresult, DriverError};
            assert!(driver(Some(Box::new(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)))).is_out_of_memory());
            assert!(!driver(Some(Box::new(DriverError(CUresult::CUDA_ERROR_INVALID_VALUE)))).is_out_of_memory());
        }
        #[cfg(feature = "opencl")]
        {
            use opencl3::error_codes::{
                ClError, CL_INVALID_VALUE, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
            };
            assert!(driver(Some(Box::new(ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE)))).is_out_of_memory());
            assert!(driver(Some(Box::new(ClError(CL_OUT_OF_RESOURCES)))).is_out_of_memory());
            assert!(!driver(Some(Box::new(ClError(CL_INVALID_VALUE)))).is_out_of_memory());
        }
    }
}
