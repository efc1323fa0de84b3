//! Borrowed views: a matrix or vector that lies inside a larger buffer (an offset and a
//! leading dimension), which every generated call takes as it takes an owned
//! [`Matrix`], [`Row`] or [`Col`].
//!
//! Element `(r, c)` of a `rows × cols` view at `offset` with leading dimension `ld` is
//! element `offset + r·ld + c` of its buffer for a row-major view and `offset + c·ld + r`
//! for a column-major one. Offsets and leading dimensions reach the kernels as runtime
//! arguments, so views of any stride share one compiled binary per alignment class (a
//! leading dimension or an offset that is not a multiple of 16 bytes takes the element
//! loads instead of the vector ones, as an unaligned packed shape does).
//!
//! A view borrows its buffer: the owner cannot be dropped, or written through another
//! path, while the view lives. Making a view checks that it lies inside the buffer and
//! that its leading dimension is at least its contiguous extent (rows may not overlap);
//! a call checks the same again for every argument, so no kernel reads or writes past a
//! buffer.

use crate::buffer::{Col, Matrix, Row};
use crate::call::{packed_extent, view_end, Arg, OutArg};
use crate::device::{Device, RawBuffer};
use crate::element::{Element, LayoutType, RowMajor};
use crate::error::{GemmError, Result};
use crate::host_data::gather_batch;
use gemm_core::{Layout, Stored};
use std::marker::PhantomData;

/// A borrowed `rows × cols` view of `T` in layout `L` inside a device buffer: element
/// `(r, c)` is element `offset + r·ld + c` of the buffer (row-major) or `offset + c·ld + r`
/// (column-major). Offsets and leading dimensions are kernel arguments (no compile per
/// stride); one that is not a multiple of 16 bytes takes the element loads. The view
/// borrows its buffer, and making one checks that it lies inside it with rows that do not
/// overlap. Cheap to copy; made by [`Matrix::view`], [`Matrix::strided`] or
/// [`MatrixView::sub`].
#[derive(Clone, Copy)]
pub struct MatrixView<'a, T: Element, L: LayoutType = RowMajor> {
    buf: &'a RawBuffer,
    rows: usize,
    cols: usize,
    at: Stored,
    /// Matrices of a batch, `at.bstride` apart ([`MatrixView::batched`]).
    batch: usize,
    _p: PhantomData<(T, L)>,
}

/// A writable view: what [`MatrixView`] is for a call's output (the `_into` form writes
/// only the view's elements; the rest of the buffer keeps its contents). Made by
/// [`Matrix::view_mut`], [`Matrix::strided_mut`] or [`MatrixViewMut::sub_mut`].
pub struct MatrixViewMut<'a, T: Element, L: LayoutType = RowMajor> {
    view: MatrixView<'a, T, L>,
    _mut: PhantomData<&'a mut ()>,
}

impl<T: Element, L: LayoutType> std::fmt::Debug for MatrixView<'_, T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MatrixView<{}, {}>({}{}x{} at {} ld {}{} on {})",
            T::DTYPE.name(),
            L::LAYOUT.name(),
            if self.batch > 1 {
                format!("{} of ", self.batch)
            } else {
                String::new()
            },
            self.rows,
            self.cols,
            self.at.offset,
            self.ld(),
            if self.batch > 1 {
                format!(" every {}", self.at.bstride)
            } else {
                String::new()
            },
            self.buf.device.info().id
        )
    }
}

impl<T: Element, L: LayoutType> std::fmt::Debug for MatrixViewMut<'_, T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mut{:?}", self.view)
    }
}

/// Checks a `rows × cols` view in layout `layout` at `offset` with leading dimension
/// `ld` against a buffer of `have` elements.
fn check_view(layout: Layout, rows: usize, cols: usize, offset: usize, ld: usize, have: usize) -> Result<Stored> {
    let inner = packed_extent(layout, rows, cols);
    let what = if layout == Layout::RowMajor { "row" } else { "column" };
    if ld < inner.max(1) {
        return Err(GemmError::View(format!(
            "a leading dimension of {ld} is less than the {inner} elements of each {what} of a {rows}x{cols} view"
        )));
    }
    let at = Stored::new(ld, offset);
    match view_end(layout, rows, cols, at) {
        Some(end) if end <= have as u128 => Ok(at),
        end => Err(GemmError::View(format!(
            "a {rows}x{cols} view from element {offset} with leading dimension {ld} reaches element {} but its buffer holds {have}",
            end.map_or("past 2^128".into(), |e| e.to_string())
        ))),
    }
}

/// A whole buffer's elements (views are made from a `Matrix`, `Row` or `Col` of `T`,
/// whose buffers hold whole elements).
fn download<T: Element>(buf: &RawBuffer) -> Result<Vec<T>> {
    let mut v = vec![T::zeroed(); elements::<T>(buf)];
    buf.download(bytemuck::cast_slice_mut(&mut v))?;
    Ok(v)
}

/// Elements of `T` a buffer holds.
fn elements<T>(buf: &RawBuffer) -> usize {
    buf.bytes / std::mem::size_of::<T>()
}

impl<T: Element, L: LayoutType> Matrix<T, L> {
    /// The whole matrix as a view.
    pub fn view(&self) -> MatrixView<'_, T, L> {
        MatrixView {
            buf: &self.buf,
            rows: self.rows(),
            cols: self.cols(),
            at: Stored::default(),
            batch: 1,
            _p: PhantomData,
        }
    }

    /// The whole matrix as a writable view.
    pub fn view_mut(&mut self) -> MatrixViewMut<'_, T, L> {
        MatrixViewMut {
            view: self.view(),
            _mut: PhantomData,
        }
    }

    /// A `rows × cols` view in layout `L` of this matrix's memory taken as a flat array
    /// of elements: from element `offset` on, `ld` elements between consecutive rows
    /// (row-major) or columns (column-major). E.g. the matrices of a batch stored back to
    /// back in one buffer, or a matrix with padded rows. An error if it does not lie
    /// inside the buffer or `ld` is less than its rows' (columns') extent.
    pub fn strided(&self, offset: usize, rows: usize, cols: usize, ld: usize) -> Result<MatrixView<'_, T, L>> {
        let at = check_view(L::LAYOUT, rows, cols, offset, ld, elements::<T>(&self.buf))?;
        Ok(MatrixView {
            buf: &self.buf,
            rows,
            cols,
            at,
            batch: 1,
            _p: PhantomData,
        })
    }

    /// [`Matrix::strided`], writable.
    pub fn strided_mut(
        &mut self,
        offset: usize,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<MatrixViewMut<'_, T, L>> {
        Ok(MatrixViewMut {
            view: self.strided(offset, rows, cols, ld)?,
            _mut: PhantomData,
        })
    }
}

impl<'a, T: Element, L: LayoutType> MatrixView<'a, T, L> {
    /// The `rows × cols` block of this view whose first element is `(row0, col0)` (of
    /// every matrix of a batched view); an error if it does not lie inside the view.
    pub fn sub(&self, row0: usize, col0: usize, rows: usize, cols: usize) -> Result<MatrixView<'a, T, L>> {
        if row0.checked_add(rows).is_none_or(|r| r > self.rows) || col0.checked_add(cols).is_none_or(|c| c > self.cols)
        {
            return Err(GemmError::View(format!(
                "a {rows}x{cols} block at ({row0}, {col0}) does not fit a {}x{} view",
                self.rows, self.cols
            )));
        }
        let (outer, inner) = match L::LAYOUT {
            Layout::RowMajor => (row0, col0),
            Layout::ColMajor => (col0, row0),
        };
        Ok(MatrixView {
            at: Stored::new(self.ld(), self.at.offset + outer * self.ld() + inner).with_bstride(self.at.bstride),
            rows,
            cols,
            ..*self
        })
    }

    /// `count` matrices of this view's shape, the `b`-th starting `b * stride` elements
    /// after this view's first (e.g. the heads of an attention batch, or matrices stored
    /// back to back: `stride = rows * cols`): an operand of a batched call, one matrix per
    /// product. An error if the last one leaves the buffer. A stride of 0 repeats one
    /// matrix, which a call also does for any view of one matrix (broadcast).
    pub fn batched(&self, count: usize, stride: usize) -> Result<MatrixView<'a, T, L>> {
        let one = view_end(L::LAYOUT, self.rows, self.cols, self.at).unwrap_or(0);
        let end = (count.max(1) as u128 - 1) * stride as u128 + one;
        let have = elements::<T>(self.buf);
        if count == 0 || end > have as u128 {
            return Err(GemmError::View(if count == 0 {
                "a batch of 0 matrices".into()
            } else {
                format!(
                    "a batch of {count} {}x{} matrices {stride} elements apart from element {} reaches element {end} but its buffer holds {have}",
                    self.rows, self.cols, self.at.offset
                )
            }));
        }
        Ok(MatrixView {
            at: self.at.with_bstride(stride),
            batch: count,
            ..*self
        })
    }

    /// Matrices in the batch (1 for a plain view).
    pub fn batch(&self) -> usize {
        self.batch
    }
    /// Elements between the matrices of the batch.
    pub fn batch_stride(&self) -> usize {
        self.at.bstride
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Elements between consecutive rows (row-major) or columns (column-major).
    pub fn ld(&self) -> usize {
        self.at.pitch(packed_extent(L::LAYOUT, self.rows, self.cols))
    }
    /// The index of the view's first element in its buffer.
    pub fn offset(&self) -> usize {
        self.at.offset
    }
    /// The device the memory lives on.
    pub fn device(&self) -> &'a Device {
        &self.buf.device
    }

    /// Downloads the view's elements, packed in layout `L` (`rows × cols` of them; each
    /// matrix of a batch after the one before). Reads the whole buffer.
    pub fn to_host(&self) -> Result<Vec<T>> {
        let all = download::<T>(self.buf)?;
        Ok(gather_batch(
            &all,
            L::LAYOUT,
            (self.rows, self.cols),
            self.at,
            self.batch,
        ))
    }

    #[doc(hidden)]
    pub fn __arg(&self) -> Arg<'a> {
        Arg::Matrix {
            buf: self.buf,
            rows: self.rows,
            cols: self.cols,
            at: self.at,
            batch: self.batch,
        }
    }
}

impl<'a, T: Element, L: LayoutType> MatrixViewMut<'a, T, L> {
    /// The writable `rows × cols` block at `(row0, col0)`, as [`MatrixView::sub`].
    pub fn sub_mut(&mut self, row0: usize, col0: usize, rows: usize, cols: usize) -> Result<MatrixViewMut<'_, T, L>> {
        Ok(MatrixViewMut {
            view: self.view.sub(row0, col0, rows, cols)?,
            _mut: PhantomData,
        })
    }

    /// A read-only copy of the view (it borrows this one).
    pub fn as_view(&self) -> MatrixView<'_, T, L> {
        self.view
    }

    /// `count` writable matrices `stride` elements apart, as [`MatrixView::batched`]: the
    /// output of a batched call. They may not overlap (each product writes its own), so
    /// the stride is at least one matrix's span.
    pub fn batched(self, count: usize, stride: usize) -> Result<MatrixViewMut<'a, T, L>> {
        let v = self.view;
        let span = view_end(L::LAYOUT, v.rows, v.cols, Stored::new(v.at.ld, 0)).unwrap_or(0);
        if count > 1 && (stride as u128) < span {
            return Err(GemmError::View(format!(
                "an output batch {stride} elements apart overlaps: each {}x{} matrix spans {span}",
                v.rows, v.cols
            )));
        }
        Ok(MatrixViewMut {
            view: v.batched(count, stride)?,
            _mut: PhantomData,
        })
    }

    /// As [`MatrixView::batch`].
    pub fn batch(&self) -> usize {
        self.view.batch
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.view.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.view.cols
    }
    /// As [`MatrixView::ld`].
    pub fn ld(&self) -> usize {
        self.view.ld()
    }
    /// As [`MatrixView::offset`].
    pub fn offset(&self) -> usize {
        self.view.offset()
    }
    /// As [`MatrixView::to_host`].
    pub fn to_host(&self) -> Result<Vec<T>> {
        self.view.to_host()
    }
}

macro_rules! vector_view {
    ($owner:ident, $name:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy)]
        pub struct $name<'a, T: Element> {
            buf: &'a RawBuffer,
            len: usize,
            offset: usize,
            /// Vectors of a batch, `bstride` apart.
            batch: usize,
            bstride: usize,
            _p: PhantomData<T>,
        }

        impl<T: Element> std::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "{}<{}>({} at {} on {})",
                    stringify!($name),
                    T::DTYPE.name(),
                    self.len,
                    self.offset,
                    self.buf.device.info().id
                )
            }
        }

        impl<T: Element> $owner<T> {
            /// The whole vector as a view.
            pub fn view(&self) -> $name<'_, T> {
                $name {
                    buf: &self.buf,
                    len: self.len(),
                    offset: 0,
                    batch: 1,
                    bstride: 0,
                    _p: PhantomData,
                }
            }

            /// The `len` elements from element `offset` on of this vector's memory; an
            /// error past its end.
            pub fn slice(&self, offset: usize, len: usize) -> Result<$name<'_, T>> {
                let have = elements::<T>(&self.buf);
                if offset.checked_add(len).is_none_or(|e| e > have) {
                    return Err(GemmError::View(format!(
                        "{len} elements from element {offset} do not fit a buffer of {have}"
                    )));
                }
                Ok($name {
                    buf: &self.buf,
                    len,
                    offset,
                    batch: 1,
                    bstride: 0,
                    _p: PhantomData,
                })
            }
        }

        impl<'a, T: Element> $name<'a, T> {
            /// Number of elements.
            pub fn len(&self) -> usize {
                self.len
            }
            /// Whether it has no elements.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
            /// The index of the view's first element in its buffer.
            pub fn offset(&self) -> usize {
                self.offset
            }
            /// `count` vectors of this length, the `b`-th `b * stride` elements after this
            /// one: one per product of a batched call. An error past the buffer's end.
            pub fn batched(&self, count: usize, stride: usize) -> Result<$name<'a, T>> {
                let end = (count.max(1) as u128 - 1) * stride as u128 + (self.offset + self.len) as u128;
                let have = elements::<T>(self.buf);
                if count == 0 || end > have as u128 {
                    return Err(GemmError::View(format!(
                        "a batch of {count} vectors of {} elements {stride} apart from element {} reaches element {end} but its buffer holds {have}",
                        self.len, self.offset
                    )));
                }
                Ok($name { batch: count, bstride: stride, ..*self })
            }
            /// Vectors in the batch (1 for a plain view).
            pub fn batch(&self) -> usize {
                self.batch
            }
            /// Downloads the view's elements (each vector of a batch after the one before).
            pub fn to_host(&self) -> Result<Vec<T>> {
                let at = Stored::new(0, self.offset).with_bstride(self.bstride);
                Ok(gather_batch(&download::<T>(self.buf)?, Layout::RowMajor, (1, self.len), at, self.batch))
            }
            #[doc(hidden)]
            pub fn __arg(&self) -> Arg<'a> {
                Arg::Vector {
                    buf: self.buf,
                    len: self.len,
                    at: Stored::new(0, self.offset).with_bstride(self.bstride),
                    batch: self.batch,
                }
            }
        }
    };
}

vector_view!(
    Row,
    RowView,
    "A borrowed view of `len` elements of a [`Row`]'s memory (see [`Row::slice`])."
);
vector_view!(
    Col,
    ColView,
    "A borrowed view of `len` elements of a [`Col`]'s memory (see [`Col::slice`])."
);

mod sealed {
    pub trait Sealed {}
}

/// What a generated call takes for a `Matrix<T, L>` parameter: an owned [`Matrix`] or a
/// view of one. Sealed: crossgemm's types only.
pub trait MatrixArg<T: Element, L: LayoutType>: sealed::Sealed {
    #[doc(hidden)]
    fn __arg(&self) -> Arg<'_>;
    #[doc(hidden)]
    fn __device(&self) -> &Device {
        match self.__arg() {
            Arg::Matrix { buf, .. } => &buf.device,
            _ => unreachable!("a matrix argument"),
        }
    }
}

/// What a generated `_into` call writes: an owned [`Matrix`] or a writable view.
/// Sealed: crossgemm's types only.
pub trait MatrixOut<T: Element, L: LayoutType>: sealed::Sealed {
    #[doc(hidden)]
    fn __out(&mut self) -> OutArg<'_>;
}

/// What a generated call takes for a `Row<T>` parameter: an owned [`Row`] or a
/// [`RowView`]. Sealed.
pub trait RowArg<T: Element>: sealed::Sealed {
    #[doc(hidden)]
    fn __arg(&self) -> Arg<'_>;
}

/// What a generated call takes for a `Col<T>` parameter: an owned [`Col`] or a
/// [`ColView`]. Sealed.
pub trait ColArg<T: Element>: sealed::Sealed {
    #[doc(hidden)]
    fn __arg(&self) -> Arg<'_>;
}

impl<T: Element, L: LayoutType> sealed::Sealed for Matrix<T, L> {}
impl<T: Element, L: LayoutType> sealed::Sealed for MatrixView<'_, T, L> {}
impl<T: Element, L: LayoutType> sealed::Sealed for MatrixViewMut<'_, T, L> {}
impl<T: Element> sealed::Sealed for Row<T> {}
impl<T: Element> sealed::Sealed for RowView<'_, T> {}
impl<T: Element> sealed::Sealed for Col<T> {}
impl<T: Element> sealed::Sealed for ColView<'_, T> {}
impl<D: std::ops::Deref<Target: sealed::Sealed>> sealed::Sealed for D {}

// Through references and smart pointers (`&&Matrix`, `Box`, `Arc`, a `RefCell`'s
// guards), as `&Matrix` parameters took them by deref coercion.
impl<T: Element, L: LayoutType, D: std::ops::Deref<Target: MatrixArg<T, L>>> MatrixArg<T, L> for D {
    fn __arg(&self) -> Arg<'_> {
        (**self).__arg()
    }
}
impl<T: Element, L: LayoutType, D: std::ops::DerefMut<Target: MatrixOut<T, L>>> MatrixOut<T, L> for D {
    fn __out(&mut self) -> OutArg<'_> {
        (**self).__out()
    }
}
impl<T: Element, D: std::ops::Deref<Target: RowArg<T>>> RowArg<T> for D {
    fn __arg(&self) -> Arg<'_> {
        (**self).__arg()
    }
}
impl<T: Element, D: std::ops::Deref<Target: ColArg<T>>> ColArg<T> for D {
    fn __arg(&self) -> Arg<'_> {
        (**self).__arg()
    }
}

impl<T: Element, L: LayoutType> MatrixArg<T, L> for Matrix<T, L> {
    fn __arg(&self) -> Arg<'_> {
        Matrix::__arg(self)
    }
}
impl<T: Element, L: LayoutType> MatrixArg<T, L> for MatrixView<'_, T, L> {
    fn __arg(&self) -> Arg<'_> {
        MatrixView::__arg(self)
    }
}
impl<T: Element, L: LayoutType> MatrixArg<T, L> for MatrixViewMut<'_, T, L> {
    fn __arg(&self) -> Arg<'_> {
        MatrixView::__arg(&self.view)
    }
}
impl<T: Element, L: LayoutType> MatrixOut<T, L> for Matrix<T, L> {
    fn __out(&mut self) -> OutArg<'_> {
        Matrix::__out(self)
    }
}
impl<T: Element, L: LayoutType> MatrixOut<T, L> for MatrixViewMut<'_, T, L> {
    fn __out(&mut self) -> OutArg<'_> {
        OutArg {
            buf: self.view.buf,
            rows: self.view.rows,
            cols: self.view.cols,
            at: self.view.at,
            batch: self.view.batch,
        }
    }
}
impl<T: Element> RowArg<T> for Row<T> {
    fn __arg(&self) -> Arg<'_> {
        Row::__arg(self)
    }
}
impl<T: Element> RowArg<T> for RowView<'_, T> {
    fn __arg(&self) -> Arg<'_> {
        RowView::__arg(self)
    }
}
impl<T: Element> ColArg<T> for Col<T> {
    fn __arg(&self) -> Arg<'_> {
        Col::__arg(self)
    }
}
impl<T: Element> ColArg<T> for ColView<'_, T> {
    fn __arg(&self) -> Arg<'_> {
        ColView::__arg(self)
    }
}
