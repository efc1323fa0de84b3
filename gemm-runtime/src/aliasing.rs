//! Whether a call's output shares memory with one of its operands. Kernels do not compute
//! in place: a block may read an element of A, B or an epilogue operand that another block
//! has already overwritten, so such a call would give wrong results with no error. Safe
//! code reaches it only through the caller's memory (two views of one `CudaSlice` or
//! `cl_mem`), which the borrow checker cannot see.
//!
//! A view is a set of byte runs: `lines` runs of `width` bytes, `pitch` apart, for each of
//! `batches` matrices `bstride` apart. Two views of one allocation overlap when a run of
//! one meets a run of the other: views side by side in a wider matrix (interleaved
//! columns, one head of several) do not, and are not refused.

/// The bytes a view covers, relative to its allocation's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Runs {
    /// The first byte of the first run.
    pub(crate) start: u64,
    /// Bytes a run (a stored row or column).
    pub(crate) width: u64,
    /// Runs per matrix.
    pub(crate) lines: u64,
    /// Bytes from a run to the next.
    pub(crate) pitch: u64,
    /// Matrices.
    pub(crate) batches: u64,
    /// Bytes from a matrix to the next.
    pub(crate) bstride: u64,
}

/// How many run pairs the exact test looks at before it calls two views overlapping
/// without proof (a refusal, never a wrong result): far more than views of real
/// tensors need, whose runs the arithmetic below finds in a step each.
const BUDGET: u64 = 1 << 22;

impl Runs {
    /// Bytes from the first byte of a matrix to past its last.
    fn span(&self) -> u64 {
        self.lines.saturating_sub(1) * self.pitch + self.width
    }

    /// Past the last byte of the last matrix.
    fn end(&self) -> u64 {
        self.start + self.batches.saturating_sub(1) * self.bstride + self.span()
    }

    fn empty(&self) -> bool {
        self.width == 0 || self.lines == 0 || self.batches == 0
    }

    /// The indices `i < count` of runs `base + i * step` of `width` bytes that meet
    /// `[s, e)`: `(first, last)`, or `None`.
    fn meeting(base: u64, step: u64, count: u64, width: u64, s: u64, e: u64) -> Option<(u64, u64)> {
        if count == 0 || e <= base {
            return None;
        }
        if step == 0 {
            return (base + width > s).then_some((0, count - 1));
        }
        // Run i meets [s, e) iff base + i*step < e and base + i*step + width > s.
        let first = if s >= base + width {
            (s - base - width) / step + 1
        } else {
            0
        };
        let last = ((e - 1 - base) / step).min(count - 1);
        (first <= last).then_some((first, last))
    }

    /// Whether one of this view's runs meets `[s, e)`, counting the matrices looked at
    /// against `budget`.
    fn meets(&self, s: u64, e: u64, budget: &mut u64) -> bool {
        let Some((first, last)) = Self::meeting(self.start, self.bstride, self.batches, self.span(), s, e) else {
            return false;
        };
        for b in first..=last {
            if *budget == 0 {
                return true;
            }
            *budget -= 1;
            let base = self.start + b * self.bstride;
            if Self::meeting(base, self.pitch, self.lines, self.width, s, e).is_some() {
                return true;
            }
        }
        false
    }
}

/// Whether two views of one allocation share a byte (or might, past [`BUDGET`]).
pub(crate) fn overlap(a: &Runs, b: &Runs) -> bool {
    if a.empty() || b.empty() || a.end() <= b.start || b.end() <= a.start {
        return false;
    }
    // Each run of the view with fewer runs against the other's arithmetic.
    let (few, many) = if a.lines * a.batches <= b.lines * b.batches {
        (a, b)
    } else {
        (b, a)
    };
    let mut budget = BUDGET;
    for bi in 0..few.batches {
        let base = few.start + bi * few.bstride;
        // Only this matrix's runs that can meet the other view at all.
        let Some((first, last)) = Runs::meeting(base, few.pitch, few.lines, few.width, many.start, many.end()) else {
            continue;
        };
        for li in first..=last {
            let s = base + li * few.pitch;
            if budget == 0 || many.meets(s, s + few.width, &mut budget) {
                return true;
            }
            budget -= 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn runs(start: u64, width: u64, lines: u64, pitch: u64, batches: u64, bstride: u64) -> Runs {
        Runs {
            start,
            width,
            lines,
            pitch,
            batches,
            bstride,
        }
    }

    /// Every byte of a view, for the brute-force check.
    fn bytes(r: &Runs) -> std::collections::HashSet<u64> {
        let mut v = std::collections::HashSet::new();
        for b in 0..r.batches {
            for l in 0..r.lines {
                for x in 0..r.width {
                    v.insert(r.start + b * r.bstride + l * r.pitch + x);
                }
            }
        }
        v
    }

    #[test]
    fn side_by_side_views_do_not_overlap_and_shared_bytes_do() {
        // Columns 0..8 and 8..16 of 16-column rows (2-byte elements): interleaved runs.
        let left = runs(0, 16, 10, 32, 1, 0);
        let right = runs(16, 16, 10, 32, 1, 0);
        assert!(!overlap(&left, &right));
        // Columns 7..15 share one element a row with the left block.
        assert!(overlap(&left, &runs(14, 16, 10, 32, 1, 0)));
        // The same view; a view inside another; one after the other's end.
        assert!(overlap(&left, &left));
        assert!(overlap(&runs(0, 320, 1, 0, 1, 0), &runs(100, 2, 1, 0, 1, 0)));
        assert!(!overlap(&runs(0, 320, 1, 0, 1, 0), &runs(320, 2, 1, 0, 1, 0)));
        // Heads of a batch side by side; then one head's batch stride reaching the next.
        let head0 = runs(0, 64, 4, 256, 3, 1024);
        assert!(!overlap(&head0, &runs(64, 64, 4, 256, 3, 1024)));
        assert!(overlap(&head0, &runs(1024 * 2 + 256 * 3, 8, 1, 0, 1, 0)));
        // Empty views share nothing.
        assert!(!overlap(&runs(0, 0, 4, 8, 1, 0), &left));
    }

    proptest! {
        /// The arithmetic agrees with the bytes themselves.
        #[test]
        fn agrees_with_the_bytes(
            a in (0u64..64, 1u64..12, 1u64..6, 0u64..40, 1u64..4, 0u64..200),
            b in (0u64..64, 1u64..12, 1u64..6, 0u64..40, 1u64..4, 0u64..200),
        ) {
            let a = runs(a.0, a.1, a.2, a.3, a.4, a.5);
            let b = runs(b.0, b.1, b.2, b.3, b.4, b.5);
            let want = !bytes(&a).is_disjoint(&bytes(&b));
            prop_assert_eq!(overlap(&a, &b), want, "{:?} {:?}", a, b);
        }
    }
}
