//! Staging scratch kept between calls ([`crate::stage`]): the buffers a finished call
//! hands back, for the next staged call on the device to reuse instead of allocating.
//!
//! Why not leave it to the allocator: CUDA's stream-ordered pool gives freed memory back
//! to the driver at a synchronisation once the memory it holds, in use or not, passes
//! its release threshold (256 MiB on a device crossgemm opens, `CROSSGEMM_POOL_KEEP_MB`),
//! and a program whose live buffers pass that (a model's weights; the bench's flush and
//! outputs) then maps the scratch of every staged call afresh. On an H100 the first
//! staged 3000x5000x700 f16 row of a bench process took 74-103 µs that way, and 57-58 µs
//! with the pool keeping every freed byte (bench/results/h100-2026-12-06aq2).
//!
//! Safe to reuse because every piece of work of a device goes to its one in-order stream
//! or queue, and a call hands its scratch back only once the launches that read it are
//! queued: the next call's copies into it are queued after them. A call takes a spare out
//! while it uses it, so two threads never get the same one.

use std::sync::Mutex;

/// How many spares a device keeps: the A and B of one call. The largest stay.
pub(crate) const KEEP: usize = 2;

/// New scratch is allocated in steps of this many bytes, so that calls of nearby shapes
/// fit each other's (the split-K workspaces grow by the same step).
pub(crate) const STEP: usize = 1 << 20;

/// A device's spare buffers of type `B`, each with its size in bytes.
pub(crate) struct Spares<B> {
    held: Mutex<Vec<(usize, B)>>,
}

impl<B> Default for Spares<B> {
    fn default() -> Self {
        Spares {
            held: Mutex::new(Vec::new()),
        }
    }
}

impl<B> Spares<B> {
    /// The smallest spare of at least `bytes`, taken out (`None`: none is that large).
    pub(crate) fn take(&self, bytes: usize) -> Option<(usize, B)> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let i = (0..held.len())
            .filter(|&i| held[i].0 >= bytes)
            .min_by_key(|&i| held[i].0)?;
        Some(held.swap_remove(i))
    }

    /// Keeps `buf` of `bytes` for a later [`Spares::take`]; past [`KEEP`] spares the
    /// smallest is released (after the lock is let go: a release may call the driver).
    pub(crate) fn give(&self, bytes: usize, buf: B) {
        let evicted = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            held.push((bytes, buf));
            if held.len() > KEEP {
                let i = (0..held.len()).min_by_key(|&i| held[i].0).expect("not empty");
                Some(held.swap_remove(i))
            } else {
                None
            }
        };
        drop(evicted);
    }

    /// Releases every spare (after the lock is let go), returning their bytes.
    pub(crate) fn clear(&self) -> usize {
        let all = std::mem::take(&mut *self.held.lock().unwrap_or_else(|e| e.into_inner()));
        all.iter().map(|s| s.0).sum()
    }

    /// The sizes of the spares held, smallest first (tests).
    #[cfg(test)]
    fn sizes(&self) -> Vec<usize> {
        let mut s: Vec<usize> = self.held.lock().unwrap().iter().map(|h| h.0).collect();
        s.sort_unstable();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A take finds the smallest spare large enough and removes it; giving back keeps
    /// the two largest.
    #[test]
    fn takes_the_smallest_fit_and_keeps_the_largest() {
        let s = Spares::<&str>::default();
        assert!(s.take(1).is_none());
        s.give(4 * STEP, "a");
        s.give(2 * STEP, "b");
        assert_eq!(s.take(STEP), Some((2 * STEP, "b")));
        assert_eq!(s.take(5 * STEP), None);
        assert_eq!(s.sizes(), [4 * STEP]);
        s.give(2 * STEP, "b");
        s.give(8 * STEP, "c");
        assert_eq!(s.sizes(), [4 * STEP, 8 * STEP], "the smallest goes past {KEEP}");
        assert_eq!(s.take(4 * STEP), Some((4 * STEP, "a")));
        assert_eq!(s.take(4 * STEP), Some((8 * STEP, "c")));
        assert!(s.sizes().is_empty());
        s.give(STEP, "a");
        s.give(3 * STEP, "b");
        assert_eq!(s.clear(), 4 * STEP);
        assert!(s.take(1).is_none());
    }
}
