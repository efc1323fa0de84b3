//! The operands every command runs a built-in kernel on: deterministic values in
//! [-1, 1) for `x` (M×K, row-major), `w` (K×N, column-major; a row-major copy for the
//! kernels that take one) and `bias` (N), kept on the host as well, for the host
//! reference.

use super::{Epilogue, KernelEntry};
use crossgemm::untyped::Arg;
use crossgemm::{ColMajor, Device, Element, GemmError, Layout, Matrix, Row};

/// `n` deterministic values in [-1, 1); an error (not an abort) when the host cannot
/// hold them.
pub fn values<T: Element>(n: usize, seed: u64) -> Result<Vec<T>, GemmError> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        GemmError::Unsupported(format!(
            "cannot allocate {} bytes of host memory for {n} operand values",
            n.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    v.extend((0..n).map(|_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        T::from_f32((s >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
    }));
    Ok(v)
}

/// The device bytes of an M×N×K call's x, w, bias and output, if they fit in `usize`.
fn problem_bytes<T: Element>((m, n, k): (usize, usize, usize)) -> Option<usize> {
    let elems = m
        .checked_mul(k)?
        .checked_add(k.checked_mul(n)?)?
        .checked_add(n)?
        .checked_add(m.checked_mul(n)?)?;
    elems.checked_mul(std::mem::size_of::<T>())
}

/// The inputs of one call on a device, and their host values.
pub struct Inputs<T: Element> {
    pub xs: Vec<T>,
    pub ws: Vec<T>,
    pub bs: Vec<T>,
    pub x: Matrix<T>,
    pub w: Matrix<T, ColMajor>,
    pub b: Row<T>,
    /// Whether the kernel takes the bias (its epilogue is not `none`).
    pub bias: bool,
    /// What [`Inputs::args`] passes instead of `x` and `w` themselves.
    copies: Copies<T>,
}

/// Copies of `x` and `w` that the kernel reads instead of the packed originals.
enum Copies<T: Element> {
    /// None: `x` and `w` as they are.
    Packed,
    /// Stored rows (columns of `w`) `pad` elements longer ([`Inputs::pad`]).
    Padded(Matrix<T>, Matrix<T, ColMajor>, usize),
    /// `batch` copies of each back to back ([`Inputs::batch`]).
    Batched(Matrix<T>, Matrix<T, ColMajor>, usize),
    /// `w` stored row-major, K×N ([`Inputs::store_w`]).
    WRows(Matrix<T>),
}

impl<T: Element> Inputs<T> {
    /// Uploads `x`, `w` and `bias` for an M×N×K problem to `dev`.
    /// A problem larger than the device's memory is refused before anything is allocated.
    pub fn new(dev: &Device, (m, n, k): (usize, usize, usize), bias: bool) -> Result<Inputs<T>, GemmError> {
        let have = dev.info().global_mem_bytes;
        match problem_bytes::<T>((m, n, k)) {
            Some(b) if (b as u64) <= have || have == 0 => {}
            b => {
                return Err(GemmError::Unsupported(format!(
                    "a {m}x{n}x{k} problem needs {} bytes of device memory for its operands and output; {} has {have}",
                    b.map_or("more than 2^64".to_string(), |b| b.to_string()),
                    dev.info()
                )))
            }
        }
        let (xs, ws, bs) = (values::<T>(m * k, 1)?, values::<T>(k * n, 2)?, values::<T>(n, 3)?);
        Ok(Inputs {
            x: Matrix::from_host(dev, m, k, &xs)?,
            w: Matrix::from_host(dev, k, n, &ws)?,
            b: Row::from_host(dev, &bs)?,
            xs,
            ws,
            bs,
            bias,
            copies: Copies::Packed,
        })
    }

    /// [`Inputs::new`] for the built-in kernel `entry`: a bias where its epilogue takes
    /// one, and `w` stored as its `w` is ([`Inputs::store_w`]).
    pub fn for_entry(dev: &Device, shape: (usize, usize, usize), entry: &KernelEntry) -> Result<Inputs<T>, GemmError> {
        let mut inp = Inputs::new(dev, shape, entry.epilogue != Epilogue::None)?;
        inp.store_w(entry.w_layout())?;
        Ok(inp)
    }

    /// Makes [`Inputs::args`] pass a batch of `batch` products: `batch` copies of `x`
    /// (`batch·M × K`, row-major) and of `w` (`K × batch·N`, column-major) back to back,
    /// as batched views; the bias is broadcast. The host values stay one product's (what
    /// the sampled reference checks: the first). `batch` 1 undoes it (and leaves padded
    /// copies alone: the bench calls both).
    pub fn batch(&mut self, batch: usize) -> Result<(), GemmError> {
        if batch <= 1 {
            if matches!(self.copies, Copies::Batched(..)) {
                self.copies = Copies::Packed;
            }
            return Ok(());
        }
        match self.copies {
            Copies::Padded(..) => return Err(GemmError::Unsupported("--pad and --batch together".into())),
            Copies::WRows(_) => return Err(GemmError::Unsupported("--batch with a row-major w".into())),
            _ => {}
        }
        let (m, k, n) = (self.x.rows(), self.x.cols(), self.w.cols());
        let dev = self.x.device().clone();
        let x = Matrix::from_host(&dev, batch * m, k, &self.xs.repeat(batch))?;
        let w = Matrix::from_host(&dev, k, batch * n, &self.ws.repeat(batch))?;
        self.copies = Copies::Batched(x, w, batch);
        Ok(())
    }

    /// The batched copies of `x` and `w` and their count, after [`Inputs::batch`].
    pub fn batched(&self) -> Option<(&Matrix<T>, &Matrix<T, ColMajor>, usize)> {
        match &self.copies {
            Copies::Batched(x, w, b) => Some((x, w, *b)),
            _ => None,
        }
    }

    /// The padded copies of `x` (M × (K + pad)) and `w` ((K + pad) × N) and the pad,
    /// after [`Inputs::pad`].
    pub fn padded(&self) -> Option<(&Matrix<T>, &Matrix<T, ColMajor>, usize)> {
        match &self.copies {
            Copies::Padded(x, w, p) => Some((x, w, *p)),
            _ => None,
        }
    }

    /// Makes [`Inputs::args`] pass `x` and `w` as views of copies with leading dimensions
    /// `K + pad` (the kernel's view path, as a sub-matrix of a larger tensor takes it);
    /// `x` and `w` themselves stay packed (for the vendor baselines). `pad` 0 undoes it
    /// (and leaves batched copies alone).
    pub fn pad(&mut self, pad: usize) -> Result<(), GemmError> {
        if pad == 0 {
            if matches!(self.copies, Copies::Padded(..)) {
                self.copies = Copies::Packed;
            }
            return Ok(());
        }
        if matches!(self.copies, Copies::WRows(_)) {
            return Err(GemmError::Unsupported("--pad with a row-major w".into()));
        }
        let (m, k, n) = (self.x.rows(), self.x.cols(), self.w.cols());
        let ld = k + pad;
        let spread = |v: &[T], outer: usize| -> Vec<T> {
            let mut p = vec![T::from_f32(0.0); outer * ld];
            for o in 0..outer {
                p[o * ld..o * ld + k].copy_from_slice(&v[o * k..(o + 1) * k]);
            }
            p
        };
        let dev = self.x.device().clone();
        let x = Matrix::from_host(&dev, m, ld, &spread(&self.xs, m))?;
        let w = Matrix::from_host(&dev, ld, n, &spread(&self.ws, n))?;
        self.copies = Copies::Padded(x, w, pad);
        Ok(())
    }

    /// Makes [`Inputs::args`] pass `w` as the kernel stores it: for `layout` row-major, a
    /// K×N row-major copy with the same values (the kernels whose `w: Matrix<T>`);
    /// column-major leaves `w` as it is. Before [`Inputs::pad`] or [`Inputs::batch`],
    /// which take a column-major `w` only.
    pub fn store_w(&mut self, layout: Layout) -> Result<(), GemmError> {
        if layout == Layout::ColMajor {
            return Ok(());
        }
        let (k, n) = (self.w.rows(), self.w.cols());
        let mut rows = vec![T::from_f32(0.0); k * n];
        for (j, col) in self.ws.chunks_exact(k.max(1)).enumerate().take(n) {
            for (i, &v) in col.iter().enumerate() {
                rows[i * n + j] = v;
            }
        }
        self.copies = Copies::WRows(Matrix::from_host(self.x.device(), k, n, &rows)?);
        Ok(())
    }

    /// The row-major copy of `w`, after [`Inputs::store_w`] with row-major.
    pub fn w_rows(&self) -> Option<&Matrix<T>> {
        match &self.copies {
            Copies::WRows(w) => Some(w),
            _ => None,
        }
    }

    /// The kernel's arguments in signature order: `x`, `w` (and `bias`); views of the
    /// padded or batched copies after [`Inputs::pad`] or [`Inputs::batch`], the
    /// row-major copy of `w` after [`Inputs::store_w`].
    pub fn args(&self) -> Vec<Arg<'_>> {
        let (m, k, n) = (self.x.rows(), self.x.cols(), self.w.cols());
        let mut args = match &self.copies {
            Copies::Padded(x, w, pad) => vec![
                x.strided(0, m, k, k + pad).expect("inside its copy").__arg(),
                w.strided(0, k, n, k + pad).expect("inside its copy").__arg(),
            ],
            Copies::Batched(x, w, b) => vec![
                x.view()
                    .sub(0, 0, m, k)
                    .and_then(|v| v.batched(*b, m * k))
                    .expect("inside its copies")
                    .__arg(),
                w.view()
                    .sub(0, 0, k, n)
                    .and_then(|v| v.batched(*b, k * n))
                    .expect("inside its copies")
                    .__arg(),
            ],
            Copies::WRows(w) => vec![self.x.__arg(), w.__arg()],
            Copies::Packed => return self.packed_args(),
        };
        if self.bias {
            args.push(self.b.__arg());
        }
        args
    }

    /// The kernel's arguments on the packed `x` and `w` whatever [`Inputs::pad`] or
    /// [`Inputs::batch`] set: what `bench --pad` times beside the views.
    pub fn packed_args(&self) -> Vec<Arg<'_>> {
        let mut args = vec![self.x.__arg(), self.w.__arg()];
        if self.bias {
            args.push(self.b.__arg());
        }
        args
    }

    /// The bias's host values, when the kernel takes it.
    pub fn bias_values(&self) -> Option<&[T]> {
        self.bias.then_some(&self.bs[..])
    }
}

/// The `m × n` output view of each of `batch` products stored back to back in `o`
/// (`batch·m × n`, row-major): what ours write in a batched bench row.
pub fn out_view<T: Element>(
    o: &mut Matrix<T>,
    (m, n): (usize, usize),
    batch: usize,
) -> Result<crossgemm::MatrixViewMut<'_, T>, GemmError> {
    o.strided_mut(0, m, n, n).and_then(|v| v.batched(batch, m * n))
}
