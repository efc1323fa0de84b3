//! The compile pool the tuner and [`prepare`](super::prepare) share: JIT compiles of
//! different configs are independent and each takes up to a second or two of one core
//! (NVRTC on a Hopper tile), so they run on scoped threads, each taking the next item as
//! it finishes one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Threads of the pool: the machine's, at most 8.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8)
}

/// `f` of every item of `items` on [`threads`] threads (fewer for fewer items), the
/// results in `items`' order.
pub(super) fn map<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync) -> Vec<T> {
    let out: Vec<Mutex<Option<T>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads().min(items.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *out[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    out.into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("the pool ran every item")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item once, the results in the items' order whatever thread ran each.
    #[test]
    fn maps_every_item_in_order() {
        let items: Vec<u64> = (0..100).collect();
        let ran = AtomicUsize::new(0);
        let out = map(&items, |&x| {
            ran.fetch_add(1, Ordering::Relaxed);
            x * x
        });
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert_eq!(ran.load(Ordering::Relaxed), 100);
        assert!(map(&[] as &[u8], |_| 0).is_empty());
    }
}
