//! Typed device buffers: the operand and result types of generated kernels.

use crate::call::{Arg, OutArg};
use crate::device::{Device, RawBuffer};
use crate::element::{Element, LayoutType, RowMajor};
use crate::error::{GemmError, Result};
use gemm_core::Stored;
use std::marker::PhantomData;

/// A `rows × cols` matrix of `T` in device memory, stored in layout `L`.
///
/// The DSL's `Matrix<T, L>` parameter types are this type, taken by reference.
pub struct Matrix<T: Element, L: LayoutType = RowMajor> {
    pub(crate) buf: RawBuffer,
    rows: usize,
    cols: usize,
    _p: PhantomData<(T, L)>,
}

impl<T: Element, L: LayoutType> std::fmt::Debug for Matrix<T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Matrix<{}, {}>({}x{} on {})",
            T::DTYPE.name(),
            L::LAYOUT.name(),
            self.rows,
            self.cols,
            self.buf.device.info().id
        )
    }
}

impl<T: Element, L: LayoutType> Matrix<T, L> {
    /// Uploads `data`, which holds `rows * cols` elements in layout `L`.
    pub fn from_host(device: &Device, rows: usize, cols: usize, data: &[T]) -> Result<Self> {
        if Some(data.len()) != rows.checked_mul(cols) {
            return Err(GemmError::DataLength {
                len: data.len(),
                rows,
                cols,
            });
        }
        let m = Self::zeros(device, rows, cols)?;
        m.buf.upload(bytemuck::cast_slice(data))?;
        Ok(m)
    }

    /// A zero-filled matrix.
    pub fn zeros(device: &Device, rows: usize, cols: usize) -> Result<Self> {
        let bytes = Self::bytes(rows, cols)?;
        Ok(Matrix {
            buf: RawBuffer::new(device, bytes)?,
            rows,
            cols,
            _p: PhantomData,
        })
    }

    /// A matrix over the caller's OpenCL buffer, without a copy: `rows × cols` elements in
    /// layout `L` from the buffer's start. `device` must be made from a queue of the
    /// buffer's context ([`Device::from_opencl_queue`]); the buffer is retained, so it
    /// lives as long as this matrix, and both see the same memory (the caller's writes
    /// ordered by that queue). A buffer of another context or smaller than the matrix is
    /// an error; one made `CL_MEM_READ_ONLY` can be an operand but not a call's output,
    /// and one made `CL_MEM_WRITE_ONLY` only the output (a call that uses it otherwise is
    /// a [`GemmError::View`](crate::GemmError::View)).
    #[cfg(feature = "opencl")]
    pub fn from_opencl_buffer(
        device: &Device,
        buffer: &opencl3::memory::Buffer<T>,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        Self::from_opencl_buffer_at(device, buffer, 0, rows, cols)
    }

    /// A matrix over the caller's OpenCL buffer from element `offset` on (e.g. one matrix
    /// of a batch stored back to back), without a copy: an OpenCL sub-buffer, so the
    /// offset in bytes must be a multiple of the device's base-address alignment
    /// (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`, typically 128 bytes or more), else an error says
    /// so; past the buffer's end is an error too. Otherwise as
    /// [`Matrix::from_opencl_buffer`].
    #[cfg(feature = "opencl")]
    pub fn from_opencl_buffer_at(
        device: &Device,
        buffer: &opencl3::memory::Buffer<T>,
        offset: usize,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        use opencl3::memory::ClMem;
        // SAFETY: an opencl3 buffer holds a valid cl_mem for as long as it lives.
        unsafe { Self::from_cl_mem_at(device, buffer.get(), offset, rows, cols) }
    }

    /// [`Matrix::from_opencl_buffer`] for a raw `cl_mem` (another binding's).
    ///
    /// # Safety
    /// `mem` must be a valid OpenCL buffer object.
    #[cfg(feature = "opencl")]
    pub unsafe fn from_raw_cl_mem(
        device: &Device,
        mem: opencl3::types::cl_mem,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        Self::from_cl_mem_at(device, mem, 0, rows, cols)
    }

    /// The matrix at element `offset` of `mem`: what the `from_opencl*` constructors share.
    ///
    /// # Safety
    /// `mem` must be a valid OpenCL buffer object.
    #[cfg(feature = "opencl")]
    unsafe fn from_cl_mem_at(
        device: &Device,
        mem: opencl3::types::cl_mem,
        offset: usize,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        let (origin, bytes) = Self::extent(offset, rows, cols)?;
        Ok(Self::over(device.view_cl_mem(mem, origin, bytes)?, rows, cols))
    }

    /// A matrix over the caller's CUDA memory, without a copy: `rows × cols` elements in
    /// layout `L` from the slice's start. `device` must be made from a stream of the
    /// slice's context ([`Device::from_cuda_stream`]), or be the discovered device of the
    /// GPU where that context is the primary one (cudarc's `CudaContext::new`; crossgemm's
    /// work then goes to that device's own stream, ordered as below); the matrix holds a clone of the
    /// `Arc`, so the memory lives as long as the matrix does, whichever is dropped first,
    /// and both see the same memory. Dropping the matrix never frees it, and once every
    /// view is gone the caller's `Arc` is unique again (`Arc::get_mut`).
    ///
    /// The view's first byte must be 16-byte aligned (crossgemm's CUDA kernels move
    /// operands in 16-byte chunks from their base; cudarc's allocations are 256-byte
    /// aligned), and it must lie inside the slice; memory of another context, or a device
    /// that is not CUDA, is an error too.
    ///
    /// Ordering: crossgemm's work goes to the device's stream. Where the slice lives on
    /// another stream ([`CudaSlice::stream`](cudarc::driver::CudaSlice::stream)), making
    /// the view makes the device's stream wait for the work queued on the slice's stream
    /// so far, and dropping it makes the slice's stream wait for crossgemm's work queued
    /// until then (so that cudarc's free of the slice, queued there, and the caller's next
    /// work there come after it). Work of the caller's on any third stream is theirs to
    /// order; cudarc's event tracking, where on, does not see crossgemm's use.
    #[cfg(feature = "cuda")]
    pub fn from_cuda_slice(
        device: &Device,
        slice: &std::sync::Arc<cudarc::driver::CudaSlice<T>>,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        Self::from_cuda_slice_at(device, slice, 0, rows, cols)
    }

    /// A matrix over the caller's CUDA memory from element `offset` on (e.g. one matrix of
    /// a batch stored back to back), without a copy. The view's first byte must be 16-byte
    /// aligned (for a slice of cudarc's, `offset * size_of::<T>()` a multiple of 16: 8
    /// f16/bf16 elements, 4 f32), else an error says so; past the slice's end is an error
    /// too. Otherwise as [`Matrix::from_cuda_slice`].
    #[cfg(feature = "cuda")]
    pub fn from_cuda_slice_at(
        device: &Device,
        slice: &std::sync::Arc<cudarc::driver::CudaSlice<T>>,
        offset: usize,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        let (origin, bytes) = Self::extent(offset, rows, cols)?;
        Ok(Self::over(device.view_cuda_slice(slice, origin, bytes)?, rows, cols))
    }

    /// [`Matrix::from_cuda_slice`] for a cudarc view (part of a slice, borrowed): the
    /// matrix cannot hold what keeps a borrowed view's memory alive, hence `unsafe`.
    /// The checks and the ordering of streams are those of [`Matrix::from_cuda_slice`].
    ///
    /// # Safety
    /// The slice `view` is of must outlive the matrix.
    #[cfg(feature = "cuda")]
    pub unsafe fn from_cuda_view(
        device: &Device,
        view: &cudarc::driver::CudaView<'_, T>,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        let bytes = Self::bytes(rows, cols)?;
        Ok(Self::over(device.view_cuda_view(view, 0, bytes)?, rows, cols))
    }

    /// [`Matrix::from_cuda_slice`] for a raw device pointer (another binding's memory):
    /// the first `rows × cols` of the `held` elements at `ptr`. `ptr` must be 16-byte
    /// aligned, and the matrix must fit in `held`; both are checked.
    ///
    /// # Safety
    /// `ptr` must be `held` elements of device memory of the device's context (or
    /// accessible from it), valid while the matrix lives and until the work crossgemm
    /// queued on the device's stream with it is done: free it on that stream, or after
    /// ordering the stream you free it on after that one (or synchronizing).
    #[cfg(feature = "cuda")]
    pub unsafe fn from_raw_cuda_ptr(
        device: &Device,
        ptr: cudarc::driver::sys::CUdeviceptr,
        held: usize,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        let bytes = Self::bytes(rows, cols)?;
        let held_bytes = held
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(GemmError::DataLength { len: held, rows, cols })?;
        Ok(Self::over(
            device.view_raw_cuda_ptr(ptr, held_bytes, 0, bytes)?,
            rows,
            cols,
        ))
    }

    /// The byte offset of element `offset` and the bytes of a `rows × cols` matrix of
    /// `T`, or an error on overflow.
    #[cfg(any(feature = "cuda", feature = "opencl"))]
    fn extent(offset: usize, rows: usize, cols: usize) -> Result<(usize, usize)> {
        let origin = offset
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(GemmError::DataLength {
                len: usize::MAX,
                rows,
                cols,
            })?;
        Ok((origin, Self::bytes(rows, cols)?))
    }

    /// A matrix of `rows × cols` over `buf`.
    #[cfg(any(feature = "cuda", feature = "opencl"))]
    fn over(buf: RawBuffer, rows: usize, cols: usize) -> Self {
        Matrix {
            buf,
            rows,
            cols,
            _p: PhantomData,
        }
    }

    /// Bytes of a `rows × cols` matrix of `T`, or an error on overflow.
    fn bytes(rows: usize, cols: usize) -> Result<usize> {
        rows.checked_mul(cols)
            .and_then(|n| n.checked_mul(std::mem::size_of::<T>()))
            .ok_or(GemmError::DataLength {
                len: usize::MAX,
                rows,
                cols,
            })
    }

    /// Downloads the elements, in layout `L`.
    pub fn to_host(&self) -> Result<Vec<T>> {
        let mut v = vec![T::zeroed(); self.rows * self.cols];
        self.buf.download(bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }

    /// Overwrites the elements from `data` (same length and layout).
    pub fn upload(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.rows * self.cols {
            return Err(GemmError::DataLength {
                len: data.len(),
                rows: self.rows,
                cols: self.cols,
            });
        }
        self.buf.upload(bytemuck::cast_slice(data))
    }

    #[doc(hidden)]
    pub fn __arg(&self) -> Arg<'_> {
        Arg::Matrix {
            buf: &self.buf,
            rows: self.rows,
            cols: self.cols,
            at: Stored::default(),
            batch: 1,
        }
    }

    #[doc(hidden)]
    pub fn __out(&mut self) -> OutArg<'_> {
        OutArg {
            buf: &self.buf,
            rows: self.rows,
            cols: self.cols,
            at: Stored::default(),
            batch: 1,
        }
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// The device the matrix lives on.
    pub fn device(&self) -> &Device {
        &self.buf.device
    }
}

macro_rules! vector_type {
    ($name:ident, $doc:literal, $len_doc:literal) => {
        #[doc = $doc]
        pub struct $name<T: Element> {
            pub(crate) buf: RawBuffer,
            len: usize,
            _p: PhantomData<T>,
        }

        impl<T: Element> std::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "{}<{}>({} on {})",
                    stringify!($name),
                    T::DTYPE.name(),
                    self.len,
                    self.buf.device.info().id
                )
            }
        }

        impl<T: Element> $name<T> {
            #[doc = concat!("Uploads a vector ", $len_doc, ".")]
            pub fn from_host(device: &Device, data: &[T]) -> Result<Self> {
                let buf = RawBuffer::new(device, std::mem::size_of_val(data))?;
                buf.upload(bytemuck::cast_slice(data))?;
                Ok($name {
                    buf,
                    len: data.len(),
                    _p: PhantomData,
                })
            }
            #[doc = concat!("A vector ", $len_doc, " over the caller's OpenCL buffer, without a copy (its first `len` elements); as [`Matrix::from_opencl_buffer`].")]
            #[cfg(feature = "opencl")]
            pub fn from_opencl_buffer(device: &Device, buffer: &opencl3::memory::Buffer<T>, len: usize) -> Result<Self> {
                Self::from_opencl_buffer_at(device, buffer, 0, len)
            }

            #[doc = concat!("A vector ", $len_doc, " at element `offset` of the caller's OpenCL buffer (a sub-buffer); as [`Matrix::from_opencl_buffer_at`].")]
            #[cfg(feature = "opencl")]
            pub fn from_opencl_buffer_at(
                device: &Device,
                buffer: &opencl3::memory::Buffer<T>,
                offset: usize,
                len: usize,
            ) -> Result<Self> {
                use opencl3::memory::ClMem;
                // SAFETY: an opencl3 buffer holds a valid cl_mem for as long as it lives.
                unsafe { Self::from_cl_mem_at(device, buffer.get(), offset, len) }
            }

            #[doc = concat!("[`", stringify!($name), "::from_opencl_buffer`] for a raw `cl_mem`.")]
            ///
            /// # Safety
            /// `mem` must be a valid OpenCL buffer object.
            #[cfg(feature = "opencl")]
            pub unsafe fn from_raw_cl_mem(device: &Device, mem: opencl3::types::cl_mem, len: usize) -> Result<Self> {
                Self::from_cl_mem_at(device, mem, 0, len)
            }

            /// The vector at element `offset` of `mem`: what the `from_opencl*` constructors share.
            ///
            /// # Safety
            /// `mem` must be a valid OpenCL buffer object.
            #[cfg(feature = "opencl")]
            unsafe fn from_cl_mem_at(device: &Device, mem: opencl3::types::cl_mem, offset: usize, len: usize) -> Result<Self> {
                let (origin, bytes) = Self::extent(offset, len)?;
                Ok(Self::over(device.view_cl_mem(mem, origin, bytes)?, len))
            }

            #[doc = concat!("A vector ", $len_doc, " over the caller's CUDA memory, without a copy (its first `len` elements); as [`Matrix::from_cuda_slice`] (the same checks, the memory held by the vector, the same ordering of streams).")]
            #[cfg(feature = "cuda")]
            pub fn from_cuda_slice(
                device: &Device,
                slice: &std::sync::Arc<cudarc::driver::CudaSlice<T>>,
                len: usize,
            ) -> Result<Self> {
                Self::from_cuda_slice_at(device, slice, 0, len)
            }

            #[doc = concat!("A vector ", $len_doc, " at element `offset` of the caller's CUDA memory, without a copy; as [`Matrix::from_cuda_slice_at`] (the view's first byte 16-byte aligned).")]
            #[cfg(feature = "cuda")]
            pub fn from_cuda_slice_at(
                device: &Device,
                slice: &std::sync::Arc<cudarc::driver::CudaSlice<T>>,
                offset: usize,
                len: usize,
            ) -> Result<Self> {
                let (origin, bytes) = Self::extent(offset, len)?;
                Ok(Self::over(device.view_cuda_slice(slice, origin, bytes)?, len))
            }

            #[doc = concat!("[`", stringify!($name), "::from_cuda_slice`] for a cudarc view; as [`Matrix::from_cuda_view`].")]
            ///
            /// # Safety
            /// The slice `view` is of must outlive the vector.
            #[cfg(feature = "cuda")]
            pub unsafe fn from_cuda_view(
                device: &Device,
                view: &cudarc::driver::CudaView<'_, T>,
                len: usize,
            ) -> Result<Self> {
                let (_, bytes) = Self::extent(0, len)?;
                Ok(Self::over(device.view_cuda_view(view, 0, bytes)?, len))
            }

            #[doc = concat!("[`", stringify!($name), "::from_cuda_slice`] for a raw device pointer: the first `len` of the `held` elements at `ptr`; as [`Matrix::from_raw_cuda_ptr`].")]
            ///
            /// # Safety
            /// As [`Matrix::from_raw_cuda_ptr`]: `held` elements of device memory of the
            /// device's context at `ptr`, valid while the vector lives and until the work
            /// crossgemm queued with it is done.
            #[cfg(feature = "cuda")]
            pub unsafe fn from_raw_cuda_ptr(
                device: &Device,
                ptr: cudarc::driver::sys::CUdeviceptr,
                held: usize,
                len: usize,
            ) -> Result<Self> {
                let (_, bytes) = Self::extent(0, len)?;
                let (_, held_bytes) = Self::extent(0, held)?;
                Ok(Self::over(device.view_raw_cuda_ptr(ptr, held_bytes, 0, bytes)?, len))
            }

            /// The byte offset of element `offset` and the bytes of `len` elements, or an
            /// error on overflow.
            #[cfg(any(feature = "cuda", feature = "opencl"))]
            fn extent(offset: usize, len: usize) -> Result<(usize, usize)> {
                let size = std::mem::size_of::<T>();
                let overflow = || GemmError::DataLength {
                    len: usize::MAX,
                    rows: 1,
                    cols: len,
                };
                Ok((
                    offset.checked_mul(size).ok_or_else(overflow)?,
                    len.checked_mul(size).ok_or_else(overflow)?,
                ))
            }

            /// A vector of `len` elements over `buf`.
            #[cfg(any(feature = "cuda", feature = "opencl"))]
            fn over(buf: RawBuffer, len: usize) -> Self {
                $name {
                    buf,
                    len,
                    _p: PhantomData,
                }
            }

            /// Downloads the elements.
            pub fn to_host(&self) -> Result<Vec<T>> {
                let mut v = vec![T::zeroed(); self.len];
                self.buf.download(bytemuck::cast_slice_mut(&mut v))?;
                Ok(v)
            }
            #[doc(hidden)]
            pub fn __arg(&self) -> Arg<'_> {
                Arg::Vector {
                    buf: &self.buf,
                    len: self.len,
                    at: Stored::default(),
                    batch: 1,
                }
            }
            /// Number of elements.
            pub fn len(&self) -> usize {
                self.len
            }
            /// Whether it has no elements.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
            /// The device it lives on.
            pub fn device(&self) -> &Device {
                &self.buf.device
            }
        }
    };
}

vector_type!(
    Row,
    "A vector broadcast along M: one value per output column (length N), e.g. a bias.",
    "of length N"
);
vector_type!(
    Col,
    "A vector broadcast along N: one value per output row (length M), e.g. a per-row scale.",
    "of length M"
);
