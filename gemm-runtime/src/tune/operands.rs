//! The tuner's own operands: what candidates are verified and timed on, instead of the
//! caller's data (which may be zeros, padding or anything else that makes a check
//! vacuous, and whose zeros would also run faster on tensor cores than real data).
//!
//! The call's dtypes and layouts at the call's problem (`call.problem`, which a build
//! variant's check may shrink: see `super::variant`); every buffer element is drawn from a
//! fixed-seed counter-based generator (large operands are filled on every core), uniform in ±[1/64, 1) (never zero, never tiny) and rounded to
//! its dtype, and the host keeps the rounded values for the reference. A is scaled by
//! 2^-⌊log2(K)/2⌋ (exact, a power of two) so that the product stays of order 1/3 for
//! any K: epilogues then neither saturate (tanh, sigmoid, clamp) nor overflow (exp, f16
//! outputs), and the check stays sensitive to the product everywhere. Scalars keep the
//! caller's values where they make the output depend on the product (see
//! [`super::verify::Plan`]), else 1.0.

use crate::call::{self, Arg, Call, OutArg};
use crate::device::RawBuffer;
use crate::error::{GemmError, Result};
use crate::host_data;
use crate::reference::{try_vec, HostOperand};
use gemm_core::{DType, GemmIr, Layout, ParamKind, Stored};

/// The generator's seed (fixed: a failure reproduces, and every process checks a
/// candidate on the same data).
const SEED: u64 = 0x6372_6f73_7367_656d;

/// Operands on the device and their values on the host.
pub(crate) struct Operands {
    /// Per parameter: its buffer (`None` for scalars).
    bufs: Vec<Option<RawBuffer>>,
    /// Per parameter: the stored values widened to f32 (empty for scalars).
    host: Vec<Vec<f32>>,
    /// Per parameter: the scalar value passed (unused for buffers).
    pub(crate) scalars: Vec<f32>,
    /// Per parameter: its shape at the call's problem ([`shapes`]).
    shapes: Vec<Shape>,
    /// Per parameter: where it lies in its buffer. A and B lie as the call's do (the same
    /// leading dimensions and offsets: the same alignment-dependent code paths run);
    /// the rest packed.
    at: Vec<Stored>,
    /// Per parameter: matrices (vectors) it holds, `at[i].bstride` apart.
    counts: Vec<usize>,
    /// (rows, cols) of the output.
    out_dims: (usize, usize),
    /// Products of the call: the output holds as many, back to back.
    batch: usize,
}

/// The shape of one argument.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Matrix(usize, usize),
    Vector(usize),
    Scalar,
}

/// Each parameter's shape at `call.problem`: A and B as `M × K` and `K × N` after their
/// `.t()` (so `K × M` and `N × K` as stored where transposed), other matrices `M × N`,
/// `Row`s `N`, `Col`s `M`. The same as the caller's arguments unless the problem was
/// changed (a build variant's check at a cut shape, which keeps the call's shape where a
/// parameter has two roles).
fn shapes(call: &Call<'_, '_>) -> Vec<Shape> {
    let ir = call.ir();
    let (m, n, k) = call.mnk();
    let stored = |(r, c): (usize, usize), t: bool| if t { Shape::Matrix(c, r) } else { Shape::Matrix(r, c) };
    ir.params
        .iter()
        .enumerate()
        .map(|(i, p)| match p.kind {
            _ if i as u32 == ir.a => stored((m, k), ir.a_t),
            _ if i as u32 == ir.b => stored((k, n), ir.b_t),
            ParamKind::Matrix { .. } => Shape::Matrix(m, n),
            ParamKind::Row { .. } => Shape::Vector(n),
            ParamKind::Col { .. } => Shape::Vector(m),
            ParamKind::Scalar => Shape::Scalar,
        })
        .collect()
}

/// Bytes of `call`'s parameters at `shapes` (one per parameter).
fn bytes_of(call: &Call<'_, '_>, shapes: impl Iterator<Item = Shape>) -> u128 {
    call.ir()
        .params
        .iter()
        .zip(shapes)
        .map(|(p, s)| {
            let size = match p.kind {
                ParamKind::Matrix { dtype, .. } | ParamKind::Row { dtype } | ParamKind::Col { dtype } => dtype.size(),
                ParamKind::Scalar => 0,
            } as u128;
            size * match s {
                Shape::Matrix(rows, cols) => rows as u128 * cols as u128,
                Shape::Vector(len) => len as u128,
                Shape::Scalar => 0,
            }
        })
        .sum()
}

/// Bytes of device memory the tuner's copies of `call`'s operands take (at
/// `call.problem`).
pub(crate) fn device_bytes(call: &Call<'_, '_>) -> u128 {
    bytes_of(call, shapes(call).into_iter())
}

/// Bytes of the caller's own operands and output (which stay allocated during a check).
fn callers_bytes(call: &Call<'_, '_>) -> u128 {
    let args = call.args.iter().map(|a| match *a {
        Arg::Matrix { rows, cols, .. } => Shape::Matrix(rows, cols),
        Arg::Vector { len, .. } => Shape::Vector(len),
        Arg::Scalar(_) => Shape::Scalar,
    });
    bytes_of(call, args) + call.out.rows as u128 * call.out.cols as u128 * call.ir().out_dtype.size() as u128
}

/// Bytes of one output of `call` (at `call.problem`, every product of its batch).
pub(crate) fn out_bytes(call: &Call<'_, '_>) -> u128 {
    let (m, n, _) = call.mnk();
    m as u128 * n as u128 * call.problem.batch as u128 * call.ir().out_dtype.size() as u128
}

/// Refuses a check that needs more device memory than the device has: the call's own
/// buffers, the tuner's copies of the operands and `outputs` outputs of its own.
pub(crate) fn check_device_memory(call: &Call<'_, '_>, outputs: usize, what: &str) -> Result<()> {
    let info = call.device().info();
    let ours = device_bytes(call) + outputs as u128 * out_bytes(call);
    let callers = callers_bytes(call);
    match memory_error(ours, callers, info.global_mem_bytes) {
        None => Ok(()),
        Some(why) => {
            let (m, n, k) = call.mnk();
            Err(GemmError::Unsupported(format!(
                "{what} `{}` at {m}x{n}x{k} on {info}: {why} ({outputs} output(s) of its own)",
                call.spec.name
            )))
        }
    }
}

/// Why `ours` bytes beside the call's `callers` do not fit in `global` bytes, if not.
fn memory_error(ours: u128, callers: u128, global: u64) -> Option<String> {
    (ours + callers > global as u128).then(|| {
        format!("needs {ours} bytes of device memory for its own operands and outputs beside the call's {callers}; the device has {global}")
    })
}

/// The values above as a pure function of (parameter, element index): splitmix64 of a
/// per-parameter key plus the index. A counter, not a stream, so that the elements of
/// a large operand (tens of millions, for a check at an LLM shape) are generated on
/// every core at once, each chunk knowing its values without the ones before it.
#[derive(Clone, Copy)]
struct Values(u64);

impl Values {
    fn new(param: usize) -> Values {
        Values(SEED ^ (param as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03))
    }
    /// Element `i`: uniform in ±[1/64, 1), times `scale`.
    fn at(self, i: u64, scale: f32) -> f32 {
        let mut z = self
            .0
            .wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = (z >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
        let mag = 1.0 / 64.0 + (1.0 - 1.0 / 64.0) * u;
        let v = if z & 1 == 0 { mag } else { -mag };
        v * scale
    }
}

/// 2^-⌊log2(K)/2⌋: about 1/√K, exact in every dtype.
pub(crate) fn a_scale(k: usize) -> f32 {
    let log2 = usize::BITS - 1 - k.max(1).leading_zeros();
    2f32.powi(-((log2 / 2) as i32))
}

/// Elements per chunk of the parallel fill: big enough that a thread's start costs
/// nothing beside it, small enough that small operands stay on the calling thread.
const CHUNK: usize = 1 << 18;

/// Fills `len` values of `dtype` from `g`: the device bytes, and (in `host`) the values
/// they hold. Both vectors are allocated fallibly; large ones are filled on every core.
fn generate(dtype: DType, len: usize, g: Values, scale: f32, host: &mut Vec<f32>) -> Result<Vec<u8>> {
    let size = dtype.size() as usize;
    let mut bytes = try_vec::<u8>(len.saturating_mul(size), "the tuner's operand")?;
    *host = try_vec::<f32>(len, "the tuner's host copy of an operand")?;
    bytes.resize(len * size, 0);
    host.resize(len, 0.0);
    let fill = |first: usize, bytes: &mut [u8], host: &mut [f32]| {
        for (j, (b, h)) in bytes.chunks_exact_mut(size).zip(host.iter_mut()).enumerate() {
            let v = g.at((first + j) as u64, scale);
            *h = match dtype {
                DType::F32 => {
                    b.copy_from_slice(&v.to_le_bytes());
                    v
                }
                DType::F16 => {
                    let x = half::f16::from_f32(v);
                    b.copy_from_slice(&x.to_le_bytes());
                    x.to_f32()
                }
                DType::Bf16 => {
                    let x = half::bf16::from_f32(v);
                    b.copy_from_slice(&x.to_le_bytes());
                    x.to_f32()
                }
            };
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if len <= CHUNK || threads == 1 {
        fill(0, &mut bytes, host);
        return Ok(bytes);
    }
    // Contiguous chunks handed out in turn: threads that finish early take more.
    let chunks: Vec<(usize, &mut [u8], &mut [f32])> = bytes
        .chunks_mut(CHUNK * size)
        .zip(host.chunks_mut(CHUNK))
        .enumerate()
        .map(|(c, (b, h))| (c * CHUNK, b, h))
        .collect();
    let queue = std::sync::Mutex::new(chunks);
    std::thread::scope(|s| {
        for _ in 0..threads.min(len.div_ceil(CHUNK)) {
            s.spawn(|| loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                let Some((first, b, h)) = next else { break };
                fill(first, b, h);
            });
        }
    });
    Ok(bytes)
}

impl Operands {
    /// Uploads random operands of `call`'s shapes to its device, with `scalars` (one per
    /// parameter; only the scalar parameters' entries are read).
    pub(crate) fn new(call: &Call<'_, '_>, scalars: Vec<f32>) -> Result<Operands> {
        let ir = call.ir();
        let (_, _, k) = call.mnk();
        let dev = call.device();
        let shapes = shapes(call);
        let batch = call.problem.batch;
        // As many matrices as the call's operand holds (1: broadcast); A and B where the
        // call's lie, the rest packed, batches back to back.
        let counts: Vec<usize> = call
            .args
            .iter()
            .map(|a| match *a {
                Arg::Matrix { batch, .. } | Arg::Vector { batch, .. } => batch,
                Arg::Scalar(_) => 1,
            })
            .collect();
        let at: Vec<Stored> = (0..shapes.len())
            .map(|i| match i as u32 {
                i if i == ir.a => call.problem.a,
                i if i == ir.b => call.problem.b,
                _ => Stored::default().with_bstride(match shapes[i] {
                    Shape::Matrix(rows, cols) if counts[i] > 1 => rows * cols,
                    Shape::Vector(len) if counts[i] > 1 => len,
                    _ => 0,
                }),
            })
            .collect();
        let mut bufs = Vec::with_capacity(shapes.len());
        let mut host = Vec::with_capacity(shapes.len());
        for (i, (p, a)) in ir.params.iter().zip(call.args).enumerate() {
            let dtype = match p.kind {
                ParamKind::Matrix { dtype, .. } | ParamKind::Row { dtype } | ParamKind::Col { dtype } => dtype,
                ParamKind::Scalar => {
                    bufs.push(None);
                    host.push(Vec::new());
                    continue;
                }
            };
            if let Arg::Scalar(_) = a {
                return Err(GemmError::Unsupported(format!(
                    "`{}`: parameter `{}` is a buffer but a scalar was passed",
                    call.spec.name, p.name
                )));
            }
            let one = match (shapes[i], p.kind) {
                (Shape::Matrix(rows, cols), ParamKind::Matrix { layout, .. }) => {
                    call::view_end(layout, rows, cols, at[i]).unwrap_or(u128::MAX) as usize
                }
                (Shape::Vector(len), _) => len,
                _ => 0,
            };
            let len = one + (counts[i] - 1) * at[i].bstride;
            let scale = if i as u32 == ir.a { a_scale(k) } else { 1.0 };
            let mut values = Vec::new();
            let bytes = generate(dtype, len, Values::new(i), scale, &mut values)?;
            // The host keeps every product, packed one after another (what
            // `call::operands` slices a product from): candidates are checked on the first
            // and the last, and disputes are settled in whichever product they are.
            values = match (shapes[i], p.kind) {
                (Shape::Matrix(rows, cols), ParamKind::Matrix { layout, .. }) => {
                    host_data::gather_batch(&values, layout, (rows, cols), at[i], counts[i])
                }
                (Shape::Vector(len), _) => {
                    host_data::gather_batch(&values, Layout::RowMajor, (1, len), at[i], counts[i])
                }
                _ => values,
            };
            let buf = RawBuffer::new(dev, bytes.len())?;
            buf.upload(&bytes)?;
            drop(bytes);
            bufs.push(Some(buf));
            host.push(values);
        }
        let (m, n, _) = call.mnk();
        Ok(Operands {
            bufs,
            host,
            scalars,
            shapes,
            at,
            counts,
            out_dims: (m, n),
            batch,
        })
    }

    /// The argument list over our buffers, in signature order.
    pub(crate) fn args(&self) -> Vec<Arg<'_>> {
        self.shapes
            .iter()
            .enumerate()
            .map(|(i, s)| match (*s, &self.bufs[i]) {
                (Shape::Matrix(rows, cols), Some(buf)) => Arg::Matrix {
                    buf,
                    rows,
                    cols,
                    at: self.at[i],
                    batch: self.counts[i],
                },
                (Shape::Vector(len), Some(buf)) => Arg::Vector {
                    buf,
                    len,
                    at: self.at[i],
                    batch: self.counts[i],
                },
                _ => Arg::Scalar(self.scalars[i]),
            })
            .collect()
    }

    /// A call of `spec` on our operands writing `out`; checked like any call.
    pub(crate) fn call<'c, 'a>(
        &'a self,
        spec: &'static crate::spec::KernelSpec,
        args: &'c [Arg<'a>],
        out: &'a RawBuffer,
    ) -> Result<Call<'c, 'a>> {
        let (rows, cols) = self.out_dims;
        Call::new(
            spec,
            args,
            OutArg {
                buf: out,
                rows,
                cols,
                at: Stored::default().with_bstride(if self.batch > 1 { rows * cols } else { 0 }),
                batch: self.batch,
            },
        )
    }

    /// Product `b`'s operands as the host reference reads them (with `scalars` for the
    /// scalars).
    pub(crate) fn host_operands<'d>(&'d self, ir: &GemmIr, scalars: &[f32], b: usize) -> Vec<HostOperand<'d>> {
        let args: Vec<Arg<'_>> = self
            .args()
            .into_iter()
            .enumerate()
            .map(|(i, a)| match a {
                Arg::Scalar(_) => Arg::Scalar(scalars[i]),
                other => other,
            })
            .collect();
        host_data::operands(ir, &args, &self.host, b)
    }
}

/// The scalar values to try, best first: the caller's (a non-finite one replaced by
/// 1.0), then all 1.0 (when that differs). Entries of buffer parameters are 0.
pub(crate) fn scalar_choices(call: &Call<'_, '_>) -> Vec<Vec<f32>> {
    let callers: Vec<f32> = call
        .args
        .iter()
        .map(|a| match *a {
            Arg::Scalar(s) if s.is_finite() => s,
            Arg::Scalar(_) => 1.0,
            _ => 0.0,
        })
        .collect();
    let ones: Vec<f32> = call
        .args
        .iter()
        .map(|a| if matches!(a, Arg::Scalar(_)) { 1.0 } else { 0.0 })
        .collect();
    if ones == callers {
        vec![callers]
    } else {
        vec![callers, ones]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_never_small_and_both_signs() {
        let g = Values::new(3);
        let v: Vec<f32> = (0..100_000).map(|i| g.at(i, 1.0)).collect();
        assert!(v.iter().all(|x| x.abs() >= 1.0 / 64.0 && x.abs() < 1.0));
        let neg = v.iter().filter(|x| **x < 0.0).count();
        assert!((45_000..55_000).contains(&neg), "{neg}");
        let mean_abs = v.iter().map(|x| x.abs() as f64).sum::<f64>() / v.len() as f64;
        assert!((mean_abs - 0.508).abs() < 0.01, "{mean_abs}");
        // Deterministic, and another stream per parameter.
        assert_eq!(Values::new(3).at(0, 1.0), v[0]);
        assert_ne!(Values::new(4).at(0, 1.0), v[0]);
        let same = (0..1000)
            .filter(|&i| Values::new(4).at(i, 1.0) == v[i as usize])
            .count();
        assert!(same < 5, "{same} of 1000 equal");
        // Neighbouring elements are not correlated (a counter hash, not a stride).
        let lag: f64 = v.windows(2).map(|w| (w[0] * w[1]) as f64).sum::<f64>() / v.len() as f64;
        assert!(lag.abs() < 0.01, "{lag}");
    }

    #[test]
    fn the_parallel_fill_is_the_serial_one() {
        let len = 3 * CHUNK + 77;
        let (mut host, mut one) = (Vec::new(), Vec::new());
        let bytes = generate(DType::Bf16, len, Values::new(1), 0.25, &mut host).unwrap();
        let g = Values::new(1);
        for i in [0, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 5, len - 1] {
            let want = half::bf16::from_f32(g.at(i as u64, 0.25));
            assert_eq!(host[i], want.to_f32(), "element {i}");
            assert_eq!(bytes[2 * i..2 * i + 2], want.to_le_bytes(), "element {i}");
        }
        let small = generate(DType::Bf16, 1000, Values::new(1), 0.25, &mut one).unwrap();
        assert_eq!(small[..], bytes[..2000]);
        assert_eq!(one[..], host[..1000]);
    }

    #[test]
    fn memory_is_checked_before_allocating() {
        assert_eq!(memory_error(10, 10, 20), None);
        let e = memory_error(3 << 40, 1 << 40, 16 << 30).unwrap();
        assert!(
            e.contains("needs 3298534883328 bytes") && e.contains("has 17179869184"),
            "{e}"
        );
    }

    #[test]
    fn a_scale_is_about_one_over_sqrt_k() {
        assert_eq!(a_scale(0), 1.0);
        assert_eq!(a_scale(1), 1.0);
        assert_eq!(a_scale(4), 0.5);
        assert_eq!(a_scale(4095), 1.0 / 32.0);
        assert_eq!(a_scale(4096), 1.0 / 64.0);
        assert_eq!(a_scale(i32::MAX as usize), 2f32.powi(-15));
    }

    #[test]
    fn generated_values_are_what_the_device_holds() {
        let mut host = Vec::new();
        let bytes = generate(DType::F16, 1000, Values::new(0), 1.0 / 64.0, &mut host).unwrap();
        assert_eq!(bytes.len(), 2000);
        for (c, h) in bytes.chunks_exact(2).zip(&host) {
            let v = half::f16::from_le_bytes([c[0], c[1]]).to_f32();
            assert_eq!(v, *h);
            assert!(v != 0.0);
        }
        assert!(generate(DType::F32, usize::MAX / 2, Values::new(0), 1.0, &mut host)
            .unwrap_err()
            .to_string()
            .contains("bytes of host memory"));
    }
}
