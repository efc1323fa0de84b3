//! Preparing a call: the arguments of a generated wrapper, checked once (devices, shapes,
//! output, index range), and what every path that runs a kernel derives from them (the
//! target, the `-D` defines of a config, the kernel ABI's argument list, the operands as
//! the host reference reads them). Launches, the tuner and the measuring API all start
//! here, so the checks are written once.

use crate::device::{Device, KernelArg, KernelArgs, RawBuffer};
use crate::error::{GemmError, Result};
use crate::spec::{KernelSpec, TargetKernel};
use gemm_core::family::{PlanCtx, OUT_PARAM};
use gemm_core::{GemmIr, Layout, Machine, ParamKind, Problem, Stored, TileConfig};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

mod checks;
pub(crate) use checks::check;

/// One argument of a generated wrapper, in signature order.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A matrix operand (`rows × cols` as stored).
    Matrix {
        /// Its memory.
        buf: &'a RawBuffer,
        /// Rows as stored.
        rows: usize,
        /// Columns as stored.
        cols: usize,
        /// Where the matrix lies in `buf`: its leading dimension, first element and the
        /// elements between the matrices of a batch (`Stored::default()` for one packed
        /// matrix at the buffer's start).
        at: Stored,
        /// Matrices it holds, `at.bstride` apart: 1 (one for every product of a batch:
        /// broadcast) or the call's batch.
        batch: usize,
    },
    /// A `Row` or `Col` vector.
    Vector {
        /// Its memory.
        buf: &'a RawBuffer,
        /// Elements.
        len: usize,
        /// Its first element (`at.offset`) and batch stride (`at.ld` is unused).
        at: Stored,
        /// Vectors it holds, as for [`Arg::Matrix`].
        batch: usize,
    },
    /// An f32 scalar.
    Scalar(f32),
}

/// The output matrix of a call.
#[derive(Clone, Copy, Debug)]
pub struct OutArg<'a> {
    /// Its memory.
    pub buf: &'a RawBuffer,
    /// Rows (M).
    pub rows: usize,
    /// Columns (N).
    pub cols: usize,
    /// Where the output lies in `buf`, as for [`Arg::Matrix`].
    pub at: Stored,
    /// Products the call computes, `at.bstride` apart in `buf`: the call's batch.
    pub batch: usize,
}

impl Arg<'_> {
    /// Products `start..start + count` of a batch: a batched operand's matrices (or
    /// vectors) from its `start`th on; a broadcast one, or a scalar, as it is.
    pub(crate) fn products(mut self, start: usize, count: usize) -> Self {
        if let Arg::Matrix { at, batch, .. } | Arg::Vector { at, batch, .. } = &mut self {
            if *batch > 1 {
                *at = moved_on(*at, start);
                *batch = count;
            }
        }
        self
    }

    /// (matrices or vectors it holds, where they lie), for buffers.
    fn geometry(&self) -> Option<(usize, Stored)> {
        match *self {
            Arg::Matrix { at, batch, .. } | Arg::Vector { at, batch, .. } => Some((batch, at)),
            Arg::Scalar(_) => None,
        }
    }
}

impl<'a> OutArg<'a> {
    /// The output as an operand of the same call, element for element (a generated
    /// `k_into_res`: the result written over the matrix the epilogue reads).
    #[doc(hidden)]
    pub fn __operand(&self) -> Arg<'a> {
        Arg::Matrix {
            buf: self.buf,
            rows: self.rows,
            cols: self.cols,
            at: self.at,
            batch: self.batch,
        }
    }

    /// Products `start..start + count` of the output's batch.
    pub(crate) fn products(self, start: usize, count: usize) -> Self {
        OutArg {
            at: moved_on(self.at, start),
            batch: count,
            ..self
        }
    }
}

/// `at` from its `start`th matrix of a batch on.
fn moved_on(at: Stored, start: usize) -> Stored {
    Stored {
        offset: at.offset + start * at.bstride,
        ..at
    }
}

/// The batch stride a kernel gets for an operand of `count` matrices: 0 broadcasts one.
fn kernel_bstride(count: usize, at: Stored) -> usize {
    if count > 1 {
        at.bstride
    } else {
        0
    }
}

/// A call whose arguments passed every check: the operands, the output, its device and
/// the problem's extents.
#[derive(Clone, Copy, Debug)]
pub struct Call<'c, 'a> {
    /// The kernel.
    pub spec: &'static KernelSpec,
    /// Its arguments, in signature order.
    pub args: &'c [Arg<'a>],
    /// The output.
    pub out: OutArg<'a>,
    /// `M × N × K`.
    pub problem: Problem,
}

impl<'c, 'a> Call<'c, 'a> {
    /// Checks `args` and `out` against `spec`: every operand on the output's device, inner
    /// dimensions that agree, epilogue operands and the output of the product's shape, and
    /// extents inside the kernels' 32-bit index range.
    pub fn new(spec: &'static KernelSpec, args: &'c [Arg<'a>], out: OutArg<'a>) -> Result<Self> {
        let (m, n, k) = check(spec, args, &out)?;
        if out.batch > MAX_BATCH {
            return Err(GemmError::Unsupported(format!(
                "a batch of {} products in one launch (one launch computes at most {MAX_BATCH}; a call splits a larger batch into launches of at most that many: tune one of them)",
                out.batch
            )));
        }
        let ir = spec.ir();
        // Packed views are described as packed, whatever their constructor said; a
        // broadcast operand has no batch stride.
        let at = |i: u32| match (ir.params[i as usize].kind, args[i as usize]) {
            (
                ParamKind::Matrix { layout, .. },
                Arg::Matrix {
                    rows, cols, at, batch, ..
                },
            ) => {
                let ld = if at.ld == packed_extent(layout, rows, cols) {
                    0
                } else {
                    at.ld
                };
                Stored::new(ld, at.offset).with_bstride(kernel_bstride(batch, at))
            }
            _ => Stored::default(),
        };
        Ok(Call {
            spec,
            args,
            out,
            problem: Problem::new(m, n, k)
                .stored(at(ir.a), at(ir.b))
                .stored_out(out.at)
                .batched(out.batch),
        })
    }

    /// The device the call runs on (the output's).
    pub fn device(&self) -> &'a Device {
        &self.out.buf.device
    }

    /// The kernel's IR.
    pub fn ir(&self) -> &'static GemmIr {
        self.spec.ir()
    }

    /// `(M, N, K)`.
    pub fn mnk(&self) -> (usize, usize, usize) {
        (self.problem.m, self.problem.n, self.problem.k)
    }

    /// The planned target whose code runs on the call's device.
    pub fn target(&self) -> Result<&'static TargetKernel> {
        self.spec.target_for(self.device())
    }

    /// What a launch on the call's device knows of the machine.
    pub fn machine(&self) -> Machine {
        Machine {
            units: self.device().info().compute_units.max(1),
        }
    }

    /// The arguments of `cfg`'s kernel with `out` as the output: its family's tensor maps
    /// (if any), its workspace (if it takes one: two pointers), then the ABI (M, N, K,
    /// out, params...).
    pub(crate) fn kernel_args<'b>(&self, cfg: &TileConfig, out: &'b RawBuffer) -> KernelArgs<'b>
    where
        'a: 'b,
    {
        let maps = cfg.tensor_maps(self.ir(), self.problem);
        // The maps, a workspace and the ABI's arguments (8 for M, N, K and the output, at
        // most 4 a parameter): inline for the built-in kernels, else one allocation.
        let cap = maps.len() + 1 + 8 + 4 * self.args.len();
        let mut kargs = KernelArgs::with_capacity(cap);
        kargs.extend(maps.into_iter().map(|map| {
            if map.param == OUT_PARAM {
                return KernelArg::TensorMap(out, map);
            }
            match self.args[map.param as usize] {
                Arg::Matrix { buf, .. } => KernelArg::TensorMap(buf, map),
                _ => unreachable!("families map matrix operands and the output only"),
            }
        }));
        // Sized for the device: a check's smaller grid needs no more (KernelFamily::workspace).
        kargs.extend(
            cfg.workspace(self.ir(), self.problem, self.machine())
                .map(KernelArg::Workspace),
        );
        push_kernel_args(
            &mut kargs,
            self.ir(),
            self.args,
            out,
            (self.out.at, self.out.batch),
            self.mnk(),
        );
        debug_assert!(kargs.len() <= cap, "{} kernel arguments, room for {cap}", kargs.len());
        kargs
    }
}

fn shape_err(spec: &KernelSpec, detail: String) -> GemmError {
    GemmError::Shape {
        kernel: spec.name.to_string(),
        detail,
    }
}

/// Checks every operand against the product and returns (M, N, K). The output is not
/// looked at: the allocating wrapper calls this to learn the output's shape.
pub fn dims(spec: &KernelSpec, args: &[Arg<'_>]) -> Result<(usize, usize, usize)> {
    let ir = spec.ir();
    let shape = |idx: u32, t: bool| -> (usize, usize) {
        match args[idx as usize] {
            Arg::Matrix { rows, cols, .. } if t => (cols, rows),
            Arg::Matrix { rows, cols, .. } => (rows, cols),
            _ => unreachable!("the macro passes matrices for A and B"),
        }
    };
    let (m, k) = shape(ir.a, ir.a_t);
    let (k2, n) = shape(ir.b, ir.b_t);
    let name = |i: u32| ir.params[i as usize].name.as_str();
    let t = |b: bool| if b { ".t()" } else { "" };
    if k != k2 {
        return Err(shape_err(
            spec,
            format!(
                "`{}{}` is {m}x{k} but `{}{}` is {k2}x{n}: inner dimensions {k} and {k2} differ",
                name(ir.a),
                t(ir.a_t),
                name(ir.b),
                t(ir.b_t)
            ),
        ));
    }
    for (i, p) in ir.params.iter().enumerate() {
        if i as u32 == ir.a || i as u32 == ir.b {
            continue;
        }
        let bad = match (p.kind, args[i]) {
            (ParamKind::Matrix { .. }, Arg::Matrix { rows, cols, .. }) if (rows, cols) != (m, n) => {
                Some(format!("`{}` is {rows}x{cols} but the product is {m}x{n}", p.name))
            }
            (ParamKind::Row { .. }, Arg::Vector { len, .. }) if len != n => Some(format!(
                "`{}` (a Row, one value per column) has length {len} but the product has {n} columns",
                p.name
            )),
            (ParamKind::Col { .. }, Arg::Vector { len, .. }) if len != m => Some(format!(
                "`{}` (a Col, one value per row) has length {len} but the product has {m} rows",
                p.name
            )),
            _ => None,
        };
        if let Some(d) = bad {
            return Err(shape_err(spec, d));
        }
    }
    for (what, v) in [("M", m), ("N", n), ("K", k)] {
        if v > i32::MAX as usize {
            return Err(GemmError::Unsupported(format!(
                "{what} = {v} exceeds the 32-bit index range of the kernels"
            )));
        }
    }
    Ok((m, n, k))
}

/// The products a call of `args` computes: the largest operand batch (1 without one).
pub fn batch_of(args: &[Arg<'_>]) -> usize {
    args.iter()
        .filter_map(|a| a.geometry())
        .map(|(c, _)| c)
        .max()
        .unwrap_or(1)
}

/// The most products one launch computes: CUDA's limit on the grid's `z`, where every
/// family but the persistent ones puts them. A call of more runs as several launches
/// ([`batch_chunks`]).
pub(crate) const MAX_BATCH: usize = 65_535;

/// The launches a batch of `batch` products runs as: `(first product, products)` of as few
/// launches of at most [`MAX_BATCH`] as there can be, of sizes that differ by one at most
/// (so that every launch's problem falls in the same batch class, and one tune serves
/// them all).
pub(crate) fn batch_chunks(batch: usize) -> impl Iterator<Item = (usize, usize)> {
    let n = batch.div_ceil(MAX_BATCH).max(1);
    let (base, rem) = (batch / n, batch % n);
    (0..n).map(move |i| (i * base + i.min(rem), base + usize::from(i < rem)))
}

impl Call<'_, '_> {
    /// Whether `c` can run this call ([`Call::check_config`] passes). A config that is not
    /// valid for the target at all (see [`Call::validate`]) is reported once per process on
    /// stderr: planned configs always are, so it came from disk (an edited or foreign
    /// tuning cache, a records file) and the caller goes on without it (tunes again, or
    /// takes the nearest winner or the planner's default).
    pub(crate) fn usable(&self, tk: &TargetKernel, c: &TileConfig) -> bool {
        if let Err(e) = self.validate(tk, c) {
            warn_invalid(self.spec, tk, c, &e);
            return false;
        }
        self.check_config(tk, c).is_ok()
    }

    /// Whether `c` is a config the planner could have made for `tk` at all: its family was
    /// planned for the target ([`TargetKernel::source_of`]) and it passes every rule of
    /// that family for the target's limits and this kernel, exactly as the planner checks
    /// a candidate (`DynFamily::check`). Run before anything computes with the config's
    /// fields (threads, shared memory, launch grid), which a zero or huge field would
    /// overflow or divide by zero.
    pub(crate) fn validate(&self, tk: &TargetKernel, c: &TileConfig) -> Result<()> {
        tk.source_of(c)?;
        let cx = PlanCtx::new(tk.spec(), self.ir());
        c.check(&cx).map_err(|(rule, why)| {
            GemmError::Unsupported(format!(
                "config {c} is not valid for `{}` on target `{}`: it breaks the `{rule}` rule of the `{}` family ({why})",
                self.spec.name,
                tk.target,
                c.family_id()
            ))
        })
    }

    /// Whether `c` can run this call, and why not: it must be valid for the target
    /// ([`Call::validate`]), fit the device (threads and shared memory per block), and
    /// its family must accept the problem (alignment, extents).
    pub(crate) fn check_config(&self, tk: &TargetKernel, c: &TileConfig) -> Result<()> {
        self.validate(tk, c)?;
        let info = self.device().info();
        let r = c.resources(self.ir().ab_dtype);
        if r.threads > info.max_threads_per_block || r.smem_bytes > info.smem_per_block {
            return Err(GemmError::ConfigDoesNotFit {
                config: c.to_string(),
                device: info.to_string(),
                why: format!(
                    "{} threads and {} B of shared memory per block; the device allows {} and {}",
                    r.threads, r.smem_bytes, info.max_threads_per_block, info.smem_per_block
                ),
            });
        }
        c.family().accepts(c, self.ir(), self.problem).map_err(|why| {
            GemmError::Unsupported(format!(
                "config {c} cannot run `{}` at {}x{}x{}: {why}",
                self.spec.name, self.problem.m, self.problem.n, self.problem.k
            ))
        })
    }

    /// The planned configs of `tk` that can run this call ([`Call::usable`]), in the
    /// planner's order.
    pub(crate) fn usable_configs(&self, tk: &TargetKernel) -> Vec<TileConfig> {
        tk.plan()
            .configs
            .iter()
            .copied()
            .filter(|c| self.usable(tk, c))
            .collect()
    }

    /// The config this call runs with nothing measured for it (no record, no cached
    /// winner, `CROSSGEMM_TUNE=off`): of the planned configs that can run it,
    /// [`gemm_core::estimate::default_pick`]'s (the planner's first, unless it leaves
    /// most of the device idle and the estimate puts it far behind). Remembered per
    /// kernel, target, device and problem: an `off` launch asks on every call.
    pub(crate) fn default_config(&self, tk: &TargetKernel) -> Result<TileConfig> {
        /// (kernel spec, target name, device serial, problem).
        type Key = (usize, &'static str, u64, Problem);
        static DEFAULTS: Mutex<Option<HashMap<Key, TileConfig>>> = Mutex::new(None);
        let key: Key = (
            self.spec as *const KernelSpec as usize,
            tk.target,
            self.device().serial(),
            self.problem,
        );
        if let Some(c) = DEFAULTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&key))
        {
            return Ok(*c);
        }
        let usable = self.usable_configs(tk);
        let c = gemm_core::estimate::default_pick(&usable, self.ir(), tk.spec(), self.problem).ok_or_else(|| {
            let info = self.device().info();
            GemmError::Unsupported(format!(
                "no planned config of target `{}` fits {} ({} B shared memory, {} threads per block) and runs {}x{}x{}",
                tk.target,
                info,
                info.smem_per_block,
                info.max_threads_per_block,
                self.problem.m,
                self.problem.n,
                self.problem.k
            ))
        })?;
        let mut memo = DEFAULTS.lock().unwrap_or_else(|e| e.into_inner());
        let memo = memo.get_or_insert_with(HashMap::new);
        // Shapes that change on every call (a growing sequence, views at moving offsets)
        // must not grow it without bound.
        if memo.len() >= 4096 {
            memo.clear();
        }
        memo.insert(key, c);
        Ok(c)
    }
}

/// Reports an invalid config (see [`Call::usable`]) once per process per kernel, target
/// and config.
fn warn_invalid(spec: &KernelSpec, tk: &TargetKernel, c: &TileConfig, e: &GemmError) {
    /// (kernel spec, target name, config).
    type Seen = HashSet<(usize, &'static str, TileConfig)>;
    static SEEN: Mutex<Option<Seen>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen
        .get_or_insert_with(HashSet::new)
        .insert((spec as *const KernelSpec as usize, tk.target, *c))
    {
        let why = e.to_string();
        eprintln!(
            "crossgemm: warning: ignoring a config read from the tuning cache or tuning records: {}; it is not launched (a tune replaces it)",
            why.strip_prefix("unsupported: ").unwrap_or(&why)
        );
    }
}

/// The kernel ABI (`gemm_core::codegen::prelude::kernel_params`): M, N, K, out, the
/// params in signature order, then the views' geometry: the output's leading dimension
/// and offset, each matrix's, each vector's offset; then the batch strides of the output
/// and of each buffer (0 for one that holds a single matrix: broadcast), and the batch;
/// appended to `kargs`.
pub(crate) fn push_kernel_args<'a>(
    kargs: &mut KernelArgs<'a>,
    ir: &GemmIr,
    args: &[Arg<'a>],
    out: &'a RawBuffer,
    (out_at, out_batch): (Stored, usize),
    (m, n, k): (usize, usize, usize),
) {
    kargs.extend([
        KernelArg::Int(m as i32),
        KernelArg::Int(n as i32),
        KernelArg::Int(k as i32),
        KernelArg::Buffer(out),
    ]);
    for a in args {
        kargs.push(match *a {
            Arg::Matrix { buf, .. } | Arg::Vector { buf, .. } => KernelArg::Buffer(buf),
            Arg::Scalar(s) => KernelArg::Float(s),
        });
    }
    let out_pitch = out_at.pitch(packed_extent(ir.out_layout, m, n));
    kargs.extend([KernelArg::Int(out_pitch as i32), KernelArg::Long(out_at.offset as i64)]);
    for (p, a) in ir.params.iter().zip(args) {
        match (p.kind, *a) {
            (ParamKind::Matrix { layout, .. }, Arg::Matrix { rows, cols, at, .. }) => {
                let pitch = at.pitch(packed_extent(layout, rows, cols));
                kargs.extend([KernelArg::Int(pitch as i32), KernelArg::Long(at.offset as i64)]);
            }
            (ParamKind::Row { .. } | ParamKind::Col { .. }, Arg::Vector { at, .. }) => {
                kargs.push(KernelArg::Long(at.offset as i64))
            }
            _ => {}
        }
    }
    kargs.push(KernelArg::Long(kernel_bstride(out_batch, out_at) as i64));
    for a in args {
        if let Some((count, at)) = a.geometry() {
            kargs.push(KernelArg::Long(kernel_bstride(count, at) as i64));
        }
    }
    kargs.push(KernelArg::Int(out_batch as i32));
}

/// The contiguous extent of a packed `rows × cols` matrix in `layout`: its leading
/// dimension when packed.
pub(crate) fn packed_extent(layout: Layout, rows: usize, cols: usize) -> usize {
    match layout {
        Layout::RowMajor => cols,
        Layout::ColMajor => rows,
    }
}

/// The elements a view of `rows × cols` in `layout` at `at` reaches in its buffer (one
/// past its last element; 0 for an empty view), or `None` on overflow.
pub(crate) fn view_end(layout: Layout, rows: usize, cols: usize, at: Stored) -> Option<u128> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    let inner = packed_extent(layout, rows, cols) as u128;
    let outer = (rows * cols) as u128 / inner;
    let pitch = at.pitch(inner as usize) as u128;
    Some(at.offset as u128 + (outer - 1) * pitch + inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch past one launch's runs as the fewest launches, of sizes within one of each
    /// other, covering every product once in order.
    #[test]
    fn a_large_batch_splits_into_even_launches() {
        assert_eq!(batch_chunks(1).collect::<Vec<_>>(), [(0, 1)]);
        assert_eq!(batch_chunks(MAX_BATCH).collect::<Vec<_>>(), [(0, MAX_BATCH)]);
        assert_eq!(
            batch_chunks(65_537).collect::<Vec<_>>(),
            [(0, 32_769), (32_769, 32_768)]
        );
        for batch in [MAX_BATCH + 1, 2 * MAX_BATCH, 2 * MAX_BATCH + 1, 1_000_000] {
            let chunks: Vec<_> = batch_chunks(batch).collect();
            assert_eq!(chunks.len(), batch.div_ceil(MAX_BATCH));
            assert!(chunks
                .iter()
                .all(|&(_, c)| c <= MAX_BATCH && c + 1 >= batch / chunks.len()));
            let mut next = 0;
            for (start, count) in chunks {
                assert_eq!(start, next);
                next += count;
            }
            assert_eq!(next, batch);
        }
    }

    #[test]
    fn a_views_end_is_one_past_its_last_element() {
        assert_eq!(view_end(Layout::RowMajor, 3, 4, Stored::new(6, 2)), Some(2 + 2 * 6 + 4));
        assert_eq!(view_end(Layout::ColMajor, 3, 4, Stored::new(5, 1)), Some(1 + 3 * 5 + 3));
        assert_eq!(view_end(Layout::RowMajor, 3, 4, Stored::default()), Some(12));
        assert_eq!(view_end(Layout::RowMajor, 0, 4, Stored::new(9, 7)), Some(0));
    }
}
