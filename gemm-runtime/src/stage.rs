//! Staging misaligned operands before a launch (policy and why:
//! [`gemm_core::staging`]): the A or B of a call whose rows do not all start on a
//! 16-byte boundary is copied, one row copy per matrix ([`crate::row_copy`]: a kernel,
//! or the driver's 2-D copy), into scratch rows of the next 16-byte multiple, and the kernel runs on that aligned copy, so that it takes its
//! vector, cp.async or TMA path instead of element loads.
//!
//! The copies are queued on the device's stream (queue) ahead of the kernel, into scratch
//! the device keeps between calls ([`crate::device::spares`]): a call takes it when it
//! stages and hands it back when its [`Copies`] is dropped, after the launches that read
//! it are queued, so nothing waits and nothing is allocated again. `CROSSGEMM_STAGE`
//! (`auto`, `always`, `never`) overrides the policy.

use crate::call::{Arg, Call};
use crate::copies::{Copied, Copies};
use crate::device::{RowCopy, Scratch};
use crate::error::Result;
use gemm_core::staging;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};

static STAGED: AtomicU64 = AtomicU64::new(0);

/// Operands staged in this process so far (tests check that a path was taken).
pub fn staged_operands() -> u64 {
    STAGED.load(Ordering::Relaxed)
}

/// Which of A and B `call` stages under `CROSSGEMM_STAGE`.
pub(crate) fn which(call: &Call<'_, '_>) -> [bool; 2] {
    let (ir, p) = (call.ir(), call.problem);
    // Aligned calls (nearly all) do not read the environment on their warm path.
    let aligned = staging::aligned(ir, p);
    if aligned == [true; 2] {
        return [false; 2];
    }
    match crate::env::stage_mode() {
        "never" => [false; 2],
        "always" => aligned.map(|ok| !ok),
        _ => by_default(call),
    }
}

/// [`staging::staged_by_default`] for `call`: a misaligned call a shape specialist of
/// the plan (gemv, gemv_n, decode; each reads every operand element once, rows at any
/// alignment through windows) takes is left where it lies, since staging would move the
/// weight twice more than the kernel reads it. Measured on the H200
/// (bench/results/h200-2026-12-05af, ae1 PART=4): decode in place 25-28 µs at 8-16 rows
/// of 4096x4099 and of a view of pitch K + 3, staged 41-45.
///
/// Remembered per (kernel, device, problem): the policy asks every specialist config of
/// the plan, which a misaligned launch would otherwise do each time.
fn by_default(call: &Call<'_, '_>) -> [bool; 2] {
    type Key = (usize, u64, gemm_core::Problem);
    static SEEN: OnceLock<RwLock<HashMap<Key, [bool; 2]>>> = OnceLock::new();
    let (ir, p) = (call.ir(), call.problem);
    let key = (call.spec as *const _ as usize, call.device().serial(), p);
    let seen = SEEN.get_or_init(Default::default);
    if let Some(&known) = seen.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return known;
    }
    let Ok(tk) = call.target() else {
        return staging::worth_staging(ir, p);
    };
    let which = staging::staged_by_default(tk.spec(), &tk.plan().configs, ir, p);
    seen.write().unwrap_or_else(|e| e.into_inner()).insert(key, which);
    which
}

/// Copies the operands of `call` that [`which`] picks into scratch (queued, not waited
/// for); `None` when none is. A copy the driver refuses (CUDA documents that a
/// device-to-device 2-D copy may fail for pitches `cuMemAllocPitch` did not choose) or
/// scratch it cannot allocate leaves the operands where they lie, with a warning once:
/// the kernels' misaligned paths are slower, not wrong.
pub(crate) fn stage(call: &Call<'_, '_>) -> Result<Option<Copies>> {
    let which = which(call);
    if !which.contains(&true) {
        return Ok(None);
    }
    match copies(call, which) {
        Ok(s) => Ok(Some(s)),
        Err(e) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "crossgemm: warning: staging a misaligned operand failed on {} ({}); such calls run on their operands where they lie",
                    call.device().info().id,
                    e.to_string().lines().next().unwrap_or("")
                )
            });
            Ok(None)
        }
    }
}

static FAIL_NEXT: AtomicU64 = AtomicU64::new(0);

/// Makes the next `n` stagings fail as a refused copy would (tests of the fallback).
pub fn fail_next_stagings(n: u64) {
    FAIL_NEXT.store(n, Ordering::Relaxed);
}

/// The copies of [`stage`].
fn copies(call: &Call<'_, '_>, which: [bool; 2]) -> Result<Copies> {
    if FAIL_NEXT
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
    {
        return Err(crate::error::GemmError::Unsupported(
            "injected staging failure (crossgemm test)".into(),
        ));
    }
    let (ir, p, dev) = (call.ir(), call.problem, call.device());
    let esz = ir.ab_dtype.size() as usize;
    let mut staged = Copies::default();
    for (side, &param) in [ir.a, ir.b].iter().enumerate().filter(|(s, _)| which[*s]) {
        let param = param as usize;
        let Arg::Matrix { buf, at, .. } = call.args[param] else {
            unreachable!("A and B are matrices (checked by Call::new)")
        };
        let (extent, rows) = p.extents(ir)[side];
        let kernel_at = [p.a, p.b][side];
        let to = staging::staged_at(ir, extent, rows, kernel_at);
        // One matrix per product where the kernel reads one per product, else one; a
        // batch stored back to back is one copy of all its rows.
        let count = if kernel_at.bstride != 0 { p.batch } else { 1 };
        let scratch = Scratch::take(dev, to.pitch(extent) * rows * count * esz)?;
        let calls = staging::copies(p, kernel_at, (extent, rows));
        let rows_each = rows * count / calls;
        for z in 0..calls {
            let copy = RowCopy {
                src_off: (at.offset + z * at.bstride) * esz,
                src_pitch: at.pitch(extent) * esz,
                dst_off: z * to.bstride * esz,
                dst_pitch: to.pitch(extent) * esz,
                row_bytes: extent * esz,
                rows: rows_each,
            };
            crate::row_copy::copy_rows(dev, buf, &scratch.buf, copy)?;
        }
        staged.push(Copied {
            param,
            scratch,
            at: to,
            dims: None,
        });
    }
    STAGED.fetch_add(staged.count() as u64, Ordering::Relaxed);
    Ok(staged)
}

/// Runs `f` on `call`, or on the call of its staged copies where [`stage`] stages any
/// (the scratch lives until `f` returns; the work `f` queues is ordered after the copies).
/// An `acc = tf32x3` call runs on its split copies instead ([`crate::split3`]), which lie
/// aligned whatever the operands' alignment.
pub(crate) fn with_staged<R>(call: Call<'_, '_>, f: impl FnOnce(&Call<'_, '_>) -> Result<R>) -> Result<R> {
    if gemm_core::split3::splits(call.ir()) {
        return crate::split3::with_split(call, f);
    }
    match stage(&call)? {
        Some(s) => {
            let args = s.args(call.args);
            f(&Call::new(call.spec, &args, call.out)?)
        }
        None => f(&call),
    }
}
