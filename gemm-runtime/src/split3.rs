//! Splitting the f32 operands of an `acc = tf32x3` call before its launch (the
//! arithmetic, the layout and why: [`gemm_core::split3`]). Each of A and B is written, by
//! a small kernel of the device's own, into scratch as three K-blocks of its `hi` and `lo`
//! parts, and the call then runs as the kernel's tf32 product of those copies at 3K: its
//! config chosen, tuned and launched for that problem like any other call's.
//!
//! The copies are queued on the device's stream (queue) ahead of the kernel, into the
//! scratch staging uses ([`crate::device::Scratch`]: kept by the device between calls,
//! handed back once the launches that read it are queued), so nothing waits.

use crate::call::{Arg, Call};
use crate::copies::{Copied, Copies};
use crate::device::{Device, KernelArg, RawBuffer, Scratch};
use crate::error::{GemmError, Result};
use gemm_core::split3::{self, Part, Split};
use gemm_core::{Backend, LaunchDims, Stored};
use std::sync::OnceLock;

/// The split kernel: thread `x` of block row `y` takes elements `x, x + stride, ...` of
/// stored rows `y, y + gridDim.y, ...` of every matrix, and writes each element's three
/// parts (`parts` bit `b` set: block `b` holds `lo`) where [`split3::split_index`] puts
/// them. `hi` is `cvt.rna.tf32.f32`'s rounding done on the bits (so that the OpenCL form
/// is the same code); a value it would round past the largest float is truncated
/// instead, and an infinity or NaN keeps itself as `hi` with a `lo` of 0.
const BODY: &str = r#"
{
    const long lines = (long)count * rows;
    for (long line = GROUP_Y; line < lines; line += GROUPS_Y) {
        const long z = line / rows, r = line - z * rows;
        const GLOBAL float* s = src + src_off + z * src_bstride + r * src_pitch;
        GLOBAL float* d = dst + z * dst_bstride;
        for (long i = GROUP_X * LOCAL_X + LANE; i < extent; i += GROUPS_X * LOCAL_X) {
            const float x = s[i];
            const unsigned u = AS_UINT(x);
            const int special = (u & 0x7f800000u) == 0x7f800000u;
            unsigned h = (u + 0x1000u) & 0xffffe000u;
            if ((h & 0x7f800000u) == 0x7f800000u) h = u & 0xffffe000u;
            const float hi = special ? x : AS_FLOAT(h);
            const float lo = special ? 0.0f : x - hi;
            for (int b = 0; b < 3; ++b) {
                const long at = k_along_rows ? r * dst_pitch + b * extent + i
                                             : (b * rows + r) * dst_pitch + i;
                d[at] = ((parts >> b) & 1) ? lo : hi;
            }
        }
    }
}
"#;

const PARAMS: &str = "(const float* __restrict__ src, long src_off, long src_pitch, long src_bstride, \
    float* __restrict__ dst, long dst_pitch, long dst_bstride, long extent, long rows, int count, \
    int k_along_rows, int parts)";

/// The kernel's CUDA C.
pub(crate) fn cuda_source() -> String {
    format!(
        "#define GLOBAL\n#define GROUP_X blockIdx.x\n#define GROUP_Y blockIdx.y\n#define GROUPS_X gridDim.x\n\
         #define GROUPS_Y gridDim.y\n#define LOCAL_X blockDim.x\n#define LANE threadIdx.x\n\
         #define AS_UINT(x) __float_as_uint(x)\n#define AS_FLOAT(x) __uint_as_float(x)\n\
         extern \"C\" __global__ void {SYMBOL}{PARAMS}\n{BODY}"
    )
}

/// The kernel's OpenCL C.
fn opencl_source() -> String {
    let params = PARAMS
        .replace("const float* __restrict__", "__global const float* restrict")
        .replace("float* __restrict__", "__global float* restrict");
    format!(
        "#define GLOBAL __global\n#define GROUP_X get_group_id(0)\n#define GROUP_Y get_group_id(1)\n\
         #define GROUPS_X get_num_groups(0)\n#define GROUPS_Y get_num_groups(1)\n\
         #define LOCAL_X get_local_size(0)\n#define LANE get_local_id(0)\n\
         #define AS_UINT(x) as_uint(x)\n#define AS_FLOAT(x) as_float(x)\n\
         __kernel void {SYMBOL}{params}\n{BODY}"
    )
}

/// The kernel's entry point.
pub(crate) const SYMBOL: &str = "cg_split_tf32x3";

/// Threads a block (work-group) has, and the most blocks a launch has along each axis:
/// enough to fill any GPU several times over, each block looping over further rows.
const THREADS: u32 = 256;
const MAX_BLOCKS_X: usize = 16;
const MAX_BLOCKS_Y: usize = 4096;

/// `x`'s parts as the kernel writes them: `(hi, lo)` with `hi + lo == x` for every finite
/// `x` (the tests hold the kernel to it, bit for bit).
#[cfg(test)]
fn split_f32(x: f32) -> (f32, f32) {
    let u = x.to_bits();
    if u & 0x7f80_0000 == 0x7f80_0000 {
        return (x, 0.0);
    }
    let mut h = u.wrapping_add(0x1000) & 0xffff_e000;
    if h & 0x7f80_0000 == 0x7f80_0000 {
        h = u & 0xffff_e000;
    }
    let hi = f32::from_bits(h);
    (hi, x - hi)
}

/// The split kernel for `dev`, compiled (or loaded from the device's kernel map or the
/// binary cache on disk).
pub(crate) fn kernel(dev: &Device) -> Result<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
    static CUDA: OnceLock<String> = OnceLock::new();
    static OPENCL: OnceLock<String> = OnceLock::new();
    let source = match dev.info().kind {
        Backend::Cuda => CUDA.get_or_init(cuda_source),
        _ => OPENCL.get_or_init(opencl_source),
    };
    dev.kernel(source, SYMBOL, &[], &Default::default())
}

/// Queues the split of the operand `at` of `src` as `s` says into `dst`.
fn launch(dev: &Device, src: &RawBuffer, at: Stored, dst: &RawBuffer, s: &Split) -> Result<()> {
    let (extent, rows) = (s.extent, s.rows);
    if extent == 0 || rows == 0 {
        return Ok(());
    }
    let long = |v: usize| {
        i64::try_from(v)
            .map(KernelArg::Long)
            .map_err(|_| GemmError::Unsupported(format!("a split of {v} elements")))
    };
    let parts = s
        .parts
        .iter()
        .enumerate()
        .map(|(b, p)| ((*p == Part::Lo) as i32) << b)
        .sum();
    let (split_extent, _) = s.split_extents();
    let dims = LaunchDims {
        grid: [
            extent.div_ceil(THREADS as usize).min(MAX_BLOCKS_X) as u32,
            (rows * s.count).min(MAX_BLOCKS_Y) as u32,
            1,
        ],
        block: [THREADS, 1, 1],
        smem_bytes: 0,
        persistent: None,
    };
    let args = [
        KernelArg::Buffer(src),
        long(at.offset)?,
        long(at.pitch(extent))?,
        long(at.bstride)?,
        KernelArg::Buffer(dst),
        long(s.to.pitch(split_extent))?,
        long(s.to.bstride)?,
        long(extent)?,
        long(rows)?,
        KernelArg::Int(i32::try_from(s.count).map_err(|_| GemmError::Unsupported("a batch past 2^31".into()))?),
        KernelArg::Int(s.k_along_rows as i32),
        KernelArg::Int(parts),
    ];
    dev.backend().launch(&*kernel(dev)?, dims, &args)
}

/// Runs `f` on the call of `call`'s split operands (A and B replaced by their split
/// copies, K three times over): the copies are queued first, and their scratch lives
/// until `f` returns, the work `f` queued ordered after the copies.
pub(crate) fn with_split<R>(call: Call<'_, '_>, f: impl FnOnce(&Call<'_, '_>) -> Result<R>) -> Result<R> {
    let (ir, p, dev) = (call.ir(), call.problem, call.device());
    let mut split = Copies::default();
    for side in 0..2 {
        let param = [ir.a, ir.b][side] as usize;
        let Arg::Matrix {
            buf, at, rows, cols, ..
        } = call.args[param]
        else {
            unreachable!("A and B are matrices (checked by Call::new)")
        };
        let s = split3::split(ir, p, side);
        let scratch = Scratch::take(dev, s.elems().max(1) * 4)?;
        let dims = split3::split_dims(ir, side, rows, cols);
        let queued = launch(dev, buf, at, &scratch.buf, &s);
        split.push(Copied {
            param,
            scratch,
            at: s.to,
            dims: Some(dims),
        });
        queued?;
    }
    let args = split.args(call.args);
    f(&Call::new(call.spec, &args, call.out)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_sum_to_the_value_and_hi_is_tf32() {
        for x in [
            1.0f32,
            -3.3e3,
            1.0e-30,
            6.5e4,
            1.0 + 2f32.powi(-11),
            f32::MAX,
            -f32::MAX,
            1.0e-40,
        ] {
            let (hi, lo) = split_f32(x);
            assert_eq!(hi + lo, x, "{x}");
            assert_eq!(hi.to_bits() & 0x1fff, 0, "{x}: hi {hi} has bits past tf32");
            if x.is_normal() {
                assert!(lo.abs() <= x.abs() * 2f32.powi(-11), "{x}: lo {lo}");
            }
        }
        // Ties away from zero, as cvt.rna: 1 + 2^-11 lies halfway between two tf32s.
        assert_eq!(split_f32(1.0 + 2f32.powi(-11)).0, 1.0 + 2f32.powi(-10));
        assert_eq!(split_f32(f32::INFINITY), (f32::INFINITY, 0.0));
        let (hi, lo) = split_f32(f32::NAN);
        assert!(hi.is_nan() && lo == 0.0);
    }

    /// On every device with kernels (PoCL in CI): the kernel writes each element's parts
    /// bit for bit as [`split_f32`] does, where [`split3::split_index`] says, for both
    /// directions of K, from a view with an offset and a pitch, over a batch, and with more
    /// rows and longer rows than one launch's blocks cover (the kernel's loops).
    #[test]
    fn the_kernel_writes_the_parts_where_the_layout_says() {
        use gemm_core::{AccMode, DType, GemmIr, Layout, Problem};
        let special = [
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            -f32::MAX,
            1.0e-40,
            0.0,
            -0.0,
        ];
        for dev in crate::device::kernel_devices() {
            for (la, lb, m, n, k, batch) in [
                (Layout::RowMajor, Layout::ColMajor, 5, 3, 7, 1),
                (Layout::ColMajor, Layout::RowMajor, 6, 4, 5, 3),
                (
                    Layout::RowMajor,
                    Layout::ColMajor,
                    3,
                    MAX_BLOCKS_Y + 5,
                    THREADS as usize * MAX_BLOCKS_X + 9,
                    1,
                ),
            ] {
                let ir = GemmIr::matmul("s", DType::F32, AccMode::Tf32x3, la, lb);
                let p0 = Problem::new(m, n, k);
                let (extent, rows) = p0.extents(&ir)[1];
                // B as a view: 3 elements in, a pitch 2 past its extent, a matrix a product.
                let at = Stored::new(extent + 2, 3).with_bstride((extent + 2) * rows + 1);
                let p = Problem { b: at, batch, ..p0 };
                let s = split3::split(&ir, p, 1);
                let len = 3 + at.bstride * batch;
                let src: Vec<f32> = (0..len)
                    .map(|i| match i % 101 {
                        j if j < special.len() => special[j],
                        _ => ((i as f32) * 0.618_034).sin() * 3.0e3 / (1 + i % 7) as f32,
                    })
                    .collect();
                let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
                let bs = RawBuffer::new(&dev, len * 4).unwrap();
                bs.upload(&bytes(&src)).unwrap();
                let bd = RawBuffer::new(&dev, s.elems() * 4).unwrap();
                bd.upload(&vec![0xff; s.elems() * 4]).unwrap();
                launch(&dev, &bs, at, &bd, &s).unwrap();
                let mut raw = vec![0u8; s.elems() * 4];
                bd.download(&mut raw).unwrap();
                let got: Vec<u32> = raw
                    .chunks(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect();
                let on = format!("{la:?}/{lb:?} {m}x{n}x{k} batch {batch} on {}", dev.info());
                for z in 0..batch {
                    for r in 0..rows {
                        for i in 0..extent {
                            let x = src[at.offset + z * at.bstride + r * at.pitch(extent) + i];
                            let (hi, lo) = split_f32(x);
                            for (b, part) in s.parts.iter().enumerate() {
                                let want = if *part == Part::Hi { hi } else { lo };
                                let idx = split3::split_index(&s, z, b, r, i);
                                assert_eq!(got[idx], want.to_bits(), "{on}: block {b} of ({z}, {r}, {i}) = {x}");
                            }
                        }
                    }
                }
            }
        }
    }
}
