//! The operands every command runs a built-in kernel on: deterministic values in
//! [-1, 1) for `x` (M×K, row-major), `w` (K×N, column-major) and `bias` (N), kept on the
//! host as well, for the host reference.

use crossgemm::untyped::Arg;
use crossgemm::{ColMajor, Device, Element, GemmError, Matrix, Row};

/// Deterministic values in [-1, 1).
pub fn values<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            T::from_f32((s >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        })
        .collect()
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
}

impl<T: Element> Inputs<T> {
    /// Uploads `x`, `w` and `bias` for an M×N×K problem to `dev`.
    pub fn new(dev: &Device, (m, n, k): (usize, usize, usize), bias: bool) -> Result<Inputs<T>, GemmError> {
        let (xs, ws, bs) = (values::<T>(m * k, 1), values::<T>(k * n, 2), values::<T>(n, 3));
        Ok(Inputs {
            x: Matrix::from_host(dev, m, k, &xs)?,
            w: Matrix::from_host(dev, k, n, &ws)?,
            b: Row::from_host(dev, &bs)?,
            xs,
            ws,
            bs,
            bias,
        })
    }

    /// The kernel's arguments in signature order: `x`, `w` (and `bias`).
    pub fn args(&self) -> Vec<Arg<'_>> {
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
