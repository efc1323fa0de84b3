//! The scratch memory of launches that take a [`Workspace`] (split-K reductions: the
//! wgmma family's, `gemv_n`'s and `decode_n`'s): one pair of buffers per device, grown to
//! the largest a launch has needed, whatever the backend's memory type.
//!
//! Every launch of a device runs on its one in-order stream or queue, so launches that
//! share the buffers run one after the other; the counters are zero at allocation, and
//! each kernel that counts on them leaves them zero, so they are zero for the next launch
//! too. A buffer replaced by a larger one is released in queue order (cudarc frees
//! asynchronously on the stream; OpenCL deletes a memory object only once the commands
//! queued on it have finished), after the launches that still use it. A launch holds the
//! buffers ([`Workspaces::hold`]) from reading their addresses until it is queued, so that
//! another thread cannot release them in between.

use crate::error::Result;
use gemm_core::Workspace;
use std::sync::{Mutex, MutexGuard};

/// Allocations grow in steps of this many bytes at least, so that a tune over a few
/// shapes does not reallocate at each (the step staging's scratch grows by too).
use super::spares::STEP;

/// A device's workspace buffers of type `B` (see the module doc).
pub(crate) struct Workspaces<B> {
    held: Mutex<Option<Pair<B>>>,
}

impl<B> Default for Workspaces<B> {
    fn default() -> Self {
        Workspaces { held: Mutex::new(None) }
    }
}

struct Pair<B> {
    data: (B, usize),
    flags: (B, usize),
}

/// The buffers of one launch, held until it is dropped (after the launch is queued).
pub(crate) struct Held<'a, B>(MutexGuard<'a, Option<Pair<B>>>);

impl<B> Held<'_, B> {
    /// Scratch data: contents undefined.
    pub(crate) fn data(&self) -> &B {
        &self.0.as_ref().expect("held workspaces are allocated").data.0
    }
    /// The counters: zero.
    pub(crate) fn flags(&self) -> &B {
        &self.0.as_ref().expect("held workspaces are allocated").flags.0
    }
}

impl<B> Workspaces<B> {
    /// Buffers of at least `need.bytes` of data and `need.flags` zeroed 32-bit counters,
    /// allocated by `alloc(bytes, what, zeroed)` where the held ones are smaller.
    pub(crate) fn hold(
        &self,
        need: Workspace,
        mut alloc: impl FnMut(usize, &str, bool) -> Result<B>,
    ) -> Result<Held<'_, B>> {
        let data_bytes = usize::try_from(need.bytes).unwrap_or(usize::MAX).max(16);
        let flag_bytes = usize::try_from(need.flags.saturating_mul(4))
            .unwrap_or(usize::MAX)
            .max(16);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        // Each buffer is kept when it is large enough, else replaced.
        let mut keep = |old: Option<(B, usize)>, bytes: usize, what: &str, zeroed: bool| match old {
            Some(b) if b.1 >= bytes => Ok(b),
            _ => {
                let bytes = bytes.div_ceil(STEP).saturating_mul(STEP);
                alloc(bytes, what, zeroed).map(|b| (b, bytes))
            }
        };
        let (old_data, old_flags) = held.take().map(|p| (p.data, p.flags)).unzip();
        let data = keep(old_data, data_bytes, "split-K workspace", false)?;
        let flags = keep(old_flags, flag_bytes, "split-K counters", true)?;
        *held = Some(Pair { data, flags });
        Ok(Held(held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buffers grow in steps, are kept while large enough, and only the counters are
    /// asked for zeroed.
    #[test]
    fn buffers_are_kept_while_large_enough_and_grow_in_steps() {
        let ws = Workspaces::<(usize, bool)>::default();
        let mut allocs = Vec::new();
        let mut take = |bytes: u64, flags: u64| {
            let h = ws
                .hold(Workspace { bytes, flags }, |b, _, z| {
                    allocs.push((b, z));
                    Ok((b, z))
                })
                .unwrap();
            (*h.data(), *h.flags())
        };
        assert_eq!(take(100, 3), ((STEP, false), (STEP, true)));
        assert_eq!(take(STEP as u64, 10), ((STEP, false), (STEP, true)));
        assert_eq!(take(STEP as u64 + 1, 10), ((2 * STEP, false), (STEP, true)));
        assert_eq!(allocs, [(STEP, false), (STEP, true), (2 * STEP, false)]);
    }
}
