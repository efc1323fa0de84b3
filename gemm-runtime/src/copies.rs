//! Operands copied into scratch for a launch (staged by [`crate::stage`], split by
//! [`crate::split3`]): which parameter each replaces and how it lies there. The holder
//! hands the scratch back to the device once dropped, after the launches that read it are
//! queued ([`crate::device::spares`]), also when a later copy of the same call failed.

use crate::call::Arg;
use crate::device::Scratch;

/// A call's operands copied into scratch: the scratch holding each, and the argument that
/// replaces it.
#[derive(Default)]
pub(crate) struct Copies {
    ops: Vec<Copied>,
}

/// One operand's copy.
pub(crate) struct Copied {
    /// The parameter it replaces.
    pub(crate) param: usize,
    /// Where it lies.
    pub(crate) scratch: Scratch,
    /// How it lies there.
    pub(crate) at: gemm_core::Stored,
    /// Its rows and columns (as [`Arg::Matrix`] counts them) where they differ from the
    /// operand's (a split operand's K is three times over).
    pub(crate) dims: Option<(usize, usize)>,
}

impl Drop for Copies {
    fn drop(&mut self) {
        for c in self.ops.drain(..) {
            c.scratch.recycle();
        }
    }
}

impl Copies {
    /// Adds a copy (kept, and handed back on drop, even if a later copy fails).
    pub(crate) fn push(&mut self, c: Copied) {
        self.ops.push(c);
    }

    /// How many operands are copied.
    pub(crate) fn count(&self) -> usize {
        self.ops.len()
    }

    /// `args` with each copied operand replaced by its scratch copy.
    pub(crate) fn args<'s>(&'s self, args: &[Arg<'s>]) -> Vec<Arg<'s>> {
        let mut out = args.to_vec();
        for c in &self.ops {
            if let Arg::Matrix { rows, cols, batch, .. } = args[c.param] {
                let (rows, cols) = c.dims.unwrap_or((rows, cols));
                out[c.param] = Arg::Matrix {
                    buf: &c.scratch.buf,
                    rows,
                    cols,
                    at: c.at,
                    batch,
                };
            }
        }
        out
    }
}
