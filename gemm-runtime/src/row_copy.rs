//! Copies of rows between pitches (what staging does, [`crate::stage`]): by a small
//! kernel of the device's own, or by the driver's 2-D copy (`cuMemcpy2DAsync`,
//! `clEnqueueCopyBufferRect`).
//!
//! Why a kernel: the rows staging copies are the ones whose starts are not 16-byte
//! aligned (3000×5000×700's f16 rows of 1400 bytes), and the driver moves such narrow,
//! misaligned rows below the device's copy bandwidth. The kernel gives a warp to each
//! segment of a row and moves it in the widest words that every offset, pitch and length
//! allows (8 bytes for 1400-byte rows into 1408-byte ones), several loads in flight a
//! lane.
//!
//! Measured on the H200 (batches ad2, ad3: first calls, the driver's copy in the same
//! binary): 3000×5000×700's 1400-byte rows (8-byte words) 11–12% faster on its fused
//! calls (bias+ReLU 52.8–53.3 µs against 59.9), a K + 3 view of 16×4096×4096 (8198-byte
//! rows, 2-byte words) 40.6 µs against 65.3–65.6. (A first kernel, a warp a row with one
//! load in flight, took 132 µs on the view.) `CROSSGEMM_ROW_COPY=driver` takes the
//! driver's copy instead; a kernel that does not build falls back to it, with a warning
//! once.

use crate::device::{Device, KernelArg, RawBuffer, RowCopy};
use crate::error::{GemmError, Result};
use gemm_core::{Backend, LaunchDims};

/// The row-copy kernels, one per word width (`cg_row_copy_W`, W bytes a word), built with
/// [`defines`]. A warp copies a segment of `32 * CG_U` words of a row, each lane `CG_U`
/// words 32 apart, all
/// loaded before any is stored: a warp that walked a long row a word a lane at a time had
/// one load in flight, and a K + 3 view's 8-kB rows of 2-byte words took twice the
/// driver's time (H200, batch ad2). Warps take (row, segment) pairs `8 * gridDim.x` apart;
/// offsets and pitches are in words.
pub(crate) const CUDA_SOURCE: &str = r#"
#define CG_ROW_COPY(W, T)                                                                  \
extern "C" __global__ void cg_row_copy_##W(const T* __restrict__ src, long src_off,        \
    long src_pitch, T* __restrict__ dst, long dst_off, long dst_pitch, int words, int rows) \
{                                                                                          \
    const int segs = (words + 32 * CG_U - 1) / (32 * CG_U);                                \
    for (long t = (long)blockIdx.x * blockDim.y + threadIdx.y; t < (long)rows * segs;      \
         t += (long)gridDim.x * blockDim.y) {                                              \
        const long r = t / segs;                                                           \
        const int i0 = (int)(t - r * segs) * 32 * CG_U + threadIdx.x;                      \
        const T* s = src + src_off + r * src_pitch;                                        \
        T* d = dst + dst_off + r * dst_pitch;                                              \
        T v[CG_U];                                                                         \
        _Pragma("unroll") for (int u = 0; u < CG_U; ++u)                                   \
            if (i0 + 32 * u < words) v[u] = s[i0 + 32 * u];                                \
        _Pragma("unroll") for (int u = 0; u < CG_U; ++u)                                   \
            if (i0 + 32 * u < words) d[i0 + 32 * u] = v[u];                                \
    }                                                                                      \
}
CG_ROW_COPY(16, uint4)
CG_ROW_COPY(8, uint2)
CG_ROW_COPY(4, unsigned int)
CG_ROW_COPY(2, unsigned short)
CG_ROW_COPY(1, unsigned char)
"#;

/// [`CUDA_SOURCE`] in OpenCL C.
const OPENCL_SOURCE: &str = r#"
#define CG_ROW_COPY(W, T)                                                                  \
__kernel void cg_row_copy_##W(__global const T* restrict src, long src_off,                \
    long src_pitch, __global T* restrict dst, long dst_off, long dst_pitch, int words,     \
    int rows)                                                                              \
{                                                                                          \
    const int segs = (words + 32 * CG_U - 1) / (32 * CG_U);                                \
    for (long t = (long)get_group_id(0) * get_local_size(1) + get_local_id(1);             \
         t < (long)rows * segs; t += (long)get_num_groups(0) * get_local_size(1)) {        \
        const long r = t / segs;                                                           \
        const int i0 = (int)(t - r * segs) * 32 * CG_U + (int)get_local_id(0);             \
        __global const T* s = src + src_off + r * src_pitch;                               \
        __global T* d = dst + dst_off + r * dst_pitch;                                     \
        T v[CG_U];                                                                         \
        for (int u = 0; u < CG_U; ++u)                                                     \
            if (i0 + 32 * u < words) v[u] = s[i0 + 32 * u];                                \
        for (int u = 0; u < CG_U; ++u)                                                     \
            if (i0 + 32 * u < words) d[i0 + 32 * u] = v[u];                                \
    }                                                                                      \
}
CG_ROW_COPY(16, uint4)
CG_ROW_COPY(8, uint2)
CG_ROW_COPY(4, uint)
CG_ROW_COPY(2, ushort)
CG_ROW_COPY(1, uchar)
"#;

/// The word widths of the kernels, in bytes (`cg_row_copy_16` ... `cg_row_copy_1`).
pub(crate) const WORD_BYTES: [usize; 5] = [16, 8, 4, 2, 1];

/// Segments a block copies at once (one warp each), the words a lane copies in a
/// segment (the sources' `CG_U`), and the most blocks a launch has: enough to fill any
/// GPU several times over, each block looping over further segments.
const WARPS_PER_BLOCK: u32 = 8;
const SEGMENT_WORDS: u32 = 8;
const MAX_BLOCKS: usize = 4096;

/// The sources' compile-time constants.
pub(crate) fn defines() -> [(String, u32); 1] {
    [("CG_U".to_string(), SEGMENT_WORDS)]
}

/// The widest word (16, 8, 4, 2 or 1 bytes) that divides every offset, pitch and the row
/// length of `r`, so that every word of every row is aligned (the buffers' bases are:
/// crossgemm's allocations and the views it accepts start on 16-byte boundaries).
pub(crate) fn word_bytes(r: &RowCopy) -> usize {
    let all = r.src_off | r.src_pitch | r.dst_off | r.dst_pitch | r.row_bytes;
    WORD_BYTES.into_iter().find(|w| all.is_multiple_of(*w)).unwrap_or(1)
}

/// Copies `r.rows` rows of `r.row_bytes` from `src` to `dst` on `dev`'s queue (not waited
/// for), by the row-copy kernel or, under `CROSSGEMM_ROW_COPY=driver`, the driver's 2-D
/// copy.
pub(crate) fn copy_rows(dev: &Device, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<()> {
    if !copies_by_kernel(dev) {
        return dev.backend().copy_rows(src, dst, r);
    }
    match by_kernel(dev, src, dst, r) {
        Err(e @ GemmError::Compile { .. }) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "crossgemm: warning: the row-copy kernel does not build on {} ({}); the driver's 2-D copies stage operands instead",
                    dev.info().id,
                    e.to_string().lines().next().unwrap_or("")
                )
            });
            dev.backend().copy_rows(src, dst, r)
        }
        other => other,
    }
}

/// Whether [`copy_rows`] launches the kernel on `dev` (not the driver's copy: under
/// `CROSSGEMM_ROW_COPY=driver`, or on the host).
pub(crate) fn copies_by_kernel(dev: &Device) -> bool {
    crate::env::row_copy_mode() == "kernel" && dev.info().kind != Backend::Host
}

/// The entry points a copy of rows of `element_bytes`-byte elements may launch: its
/// offsets, pitches and lengths are whole elements, so its words are at least one wide.
pub(crate) fn symbols_for(element_bytes: usize) -> Vec<String> {
    WORD_BYTES
        .into_iter()
        .filter(|&w| w >= element_bytes)
        .map(symbol)
        .collect()
}

fn symbol(word_bytes: usize) -> String {
    format!("cg_row_copy_{word_bytes}")
}

/// The kernel `symbol` for `dev`, compiled (or loaded from the device's kernel map or the
/// binary cache on disk) as a copy launches it; [`crate::tune::prepare`] builds them ahead.
pub(crate) fn kernel(dev: &Device, symbol: &str) -> Result<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
    let source = match dev.info().kind {
        Backend::Cuda => CUDA_SOURCE,
        _ => OPENCL_SOURCE,
    };
    dev.kernel(source, symbol, &defines(), &Default::default())
}

/// [`copy_rows`] by the kernel.
fn by_kernel(dev: &Device, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<()> {
    let refuse = |message: String| GemmError::Driver {
        backend: dev.info().kind.api_name(),
        op: format!("row copy of {} rows of {} bytes", r.rows, r.row_bytes),
        message,
        source: None,
    };
    if !r.fits(src.bytes, dst.bytes) {
        return Err(refuse(format!(
            "{r:?} between buffers of {} and {} bytes",
            src.bytes, dst.bytes
        )));
    }
    if r.rows == 0 || r.row_bytes == 0 {
        return Ok(());
    }
    let w = word_bytes(&r);
    let words = r.row_bytes / w;
    let (Ok(words_i), Ok(rows_i)) = (i32::try_from(words), i32::try_from(r.rows)) else {
        return Err(refuse("more than 2^31 words a row or rows".into()));
    };
    let kernel = kernel(dev, &symbol(w))?;
    let segments = r.rows * words.div_ceil(32 * SEGMENT_WORDS as usize);
    let blocks = segments.div_ceil(WARPS_PER_BLOCK as usize).min(MAX_BLOCKS) as u32;
    let dims = LaunchDims {
        grid: [blocks, 1, 1],
        block: [32, WARPS_PER_BLOCK, 1],
        smem_bytes: 0,
        persistent: None,
    };
    let long = |bytes: usize| KernelArg::Long((bytes / w) as i64);
    let args = [
        KernelArg::Buffer(src),
        long(r.src_off),
        long(r.src_pitch),
        KernelArg::Buffer(dst),
        long(r.dst_off),
        long(r.dst_pitch),
        KernelArg::Int(words_i),
        KernelArg::Int(rows_i),
    ];
    dev.backend().launch(&*kernel, dims, &args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(src_off: usize, src_pitch: usize, dst_pitch: usize, row_bytes: usize, rows: usize) -> RowCopy {
        RowCopy {
            src_off,
            src_pitch,
            dst_off: 0,
            dst_pitch,
            row_bytes,
            rows,
        }
    }

    #[test]
    fn words_are_the_widest_every_offset_and_pitch_allows() {
        assert_eq!(word_bytes(&copy(0, 1408, 1440, 1408, 2)), 16);
        assert_eq!(word_bytes(&copy(0, 1400, 1408, 1400, 2)), 8);
        assert_eq!(word_bytes(&copy(4, 1400, 1408, 1396, 2)), 4);
        assert_eq!(word_bytes(&copy(2, 702, 704, 700, 2)), 2);
        assert_eq!(word_bytes(&copy(1, 333, 352, 331, 2)), 1);
        assert_eq!(
            word_bytes(&RowCopy {
                dst_off: 8,
                ..copy(0, 32, 32, 32, 2)
            }),
            8
        );
    }

    /// On every device with kernels (PoCL in CI): the kernel, and the driver's 2-D copy
    /// (the other `CROSSGEMM_ROW_COPY`), move exactly the rows' bytes at each word width,
    /// from an offset and into a dst offset, and leave the padding between rows alone;
    /// more rows than one launch's blocks hold (the kernel's loop).
    #[test]
    fn the_kernel_moves_rows_between_pitches() {
        for dev in crate::device::kernel_devices() {
            let src: Vec<u8> = (0..400_000u32).map(|i| (i * 7 + 3) as u8).collect();
            let bs = RawBuffer::new(&dev, src.len()).unwrap();
            bs.upload(&src).unwrap();
            for (r, dst_off) in [
                (copy(0, 1408, 1440, 1408, 20), 0),
                (copy(0, 1400, 1408, 1400, 25), 16),
                (copy(4, 1400, 1408, 1396, 25), 0),
                (copy(2, 702, 704, 700, 40), 4),
                (copy(1, 333, 352, 331, 50), 3),
                (copy(2, 8198, 8208, 8192, 10), 0),
                (copy(0, 16 * 300, 16 * 301, 16 * 300, 20), 16),
                (copy(8, 10, 24, 8, (MAX_BLOCKS + 3) * WARPS_PER_BLOCK as usize), 8),
            ] {
                let r = RowCopy { dst_off, ..r };
                let bytes = dst_off + r.dst_pitch * r.rows;
                for how in ["kernel", "driver"] {
                    let bd = RawBuffer::new(&dev, bytes).unwrap();
                    bd.upload(&vec![0xee; bytes]).unwrap();
                    match how {
                        "kernel" => by_kernel(&dev, &bs, &bd, r),
                        _ => dev.backend().copy_rows(&bs, &bd, r),
                    }
                    .unwrap();
                    let mut got = vec![0u8; bytes];
                    bd.download(&mut got).unwrap();
                    let on = format!("{how}: {r:?} on {}", dev.info());
                    assert!(got[..dst_off].iter().all(|&x| x == 0xee), "{on}: before the first row");
                    for i in 0..r.rows {
                        let (s, d) = (r.src_off + i * r.src_pitch, dst_off + i * r.dst_pitch);
                        assert_eq!(&got[d..d + r.row_bytes], &src[s..s + r.row_bytes], "{on}: row {i}");
                        let pad = &got[d + r.row_bytes..(d + r.dst_pitch).min(bytes)];
                        assert!(pad.iter().all(|&x| x == 0xee), "{on}: padding of row {i}");
                    }
                }
            }
            // A copy past the source is refused, not run.
            let bd = RawBuffer::new(&dev, 1 << 16).unwrap();
            assert!(by_kernel(&dev, &bs, &bd, copy(0, 400_000, 64, 64, 2)).is_err());
        }
    }
}
