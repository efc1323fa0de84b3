//! The CUDA copy that stages a misaligned operand ([`crate::stage`]): rows that start on
//! any byte into rows of 16-byte multiples, as one kernel of 16-byte loads and stores.
//!
//! Why not the driver's 2-D copy: `cuMemcpy2DAsync` with a source pitch that is not a
//! multiple of 16 bytes moved about 1.1 TB/s on the H200 (views of pitch K + 3,
//! bench/results/h200-2026-12-01h/part2), a quarter of the device's copy bandwidth, and
//! at 3000×5000×700 its copies were a third of the staged call. Each thread here writes
//! one 16-byte chunk of an output row from the two aligned 16-byte words of the source
//! that hold it (a funnel shift by the source's misalignment), so every load and store
//! is a full, aligned vector. Near the source buffer's end, where the second word would
//! lie past it, the chunk is read byte by byte instead.
//!
//! Other backends (and a CUDA device that cannot build or launch it) take the backend's
//! own 2-D copy ([`crate::device::DeviceBackend::copy_rows`]).

use crate::device::{Device, KernelArg, RawBuffer, RowCopy};
use crate::error::Result;
use gemm_core::{Backend, CompileNeeds, LaunchDims};
use std::collections::HashSet;
use std::sync::Mutex;

/// Devices (by serial) that could not build the kernel: asked once, not at every call
/// (a process whose kernels are all prebuilt may have no NVRTC).
static UNBUILT: Mutex<Option<HashSet<u64>>> = Mutex::new(None);

/// The kernel, header-free CUDA C for NVRTC.
///
/// `cg_realign(src, src_len, src_off, src_pitch, dst, dst_off, dst_pitch, row_bytes,
/// rows)`: row `r` of `row_bytes` bytes at `src + src_off + r * src_pitch` to `dst +
/// dst_off + r * dst_pitch`; `dst + dst_off` and `dst_pitch` are multiples of 16 and
/// `dst_pitch` holds the row rounded up to 16 bytes (the bytes past `row_bytes` in the
/// last chunk of a row are zero). Block (32, 8): x over a row's 16-byte chunks, y over
/// rows, grid-stride in y.
pub(crate) const SOURCE: &str = r#"
struct __align__(16) cg_u4 { unsigned x, y, z, w; };
static __device__ __forceinline__ unsigned cg_shf(unsigned lo, unsigned hi, unsigned bits) {
    unsigned r;
    asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(bits));
    return r;
}
/* The mask of a word's first n bytes (all of them from 4 on, none below 1). */
static __device__ __forceinline__ unsigned cg_keep(int n) {
    return n >= 4 ? 0xffffffffu : (n <= 0 ? 0u : (1u << (8 * n)) - 1u);
}
/* Output word i of a chunk whose source starts q words (and `bits` bits) into w. */
#define CG_PICK(q) { out.x = cg_shf(w[q], w[q + 1], bits); out.y = cg_shf(w[q + 1], w[q + 2], bits); \
                     out.z = cg_shf(w[q + 2], w[q + 3], bits); out.w = cg_shf(w[q + 3], w[q + 4], bits); }
extern "C" __global__ void __launch_bounds__(256) cg_realign(const unsigned char* __restrict__ src, long src_len, long src_off, long src_pitch,
                                                             unsigned char* __restrict__ dst, long dst_off, long dst_pitch, int row_bytes, int rows) {
    const int j = blockIdx.x * 32 + threadIdx.x;
    if (16 * j >= row_bytes) return;
    const unsigned long long end = (unsigned long long)src + (unsigned long long)src_len;
    const int left = row_bytes - 16 * j;
    for (int r = blockIdx.y * 8 + threadIdx.y; r < rows; r += gridDim.y * 8) {
        const unsigned long long s = (unsigned long long)(src + src_off + (long)r * src_pitch + 16L * j);
        const unsigned o = (unsigned)(s & 15u);
        const unsigned long long a0 = s - o;
        cg_u4 out;
        if (a0 + 32u <= end) {
            const cg_u4 lo = *reinterpret_cast<const cg_u4*>(a0);
            const cg_u4 hi = *reinterpret_cast<const cg_u4*>(a0 + 16u);
            const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            const unsigned bits = 8u * (o & 3u);
            switch (o >> 2) {
            case 0: CG_PICK(0); break;
            case 1: CG_PICK(1); break;
            case 2: CG_PICK(2); break;
            default: CG_PICK(3); break;
            }
        } else {
            /* The buffer's last bytes: no word past its end is read. */
            unsigned v[4] = {0u, 0u, 0u, 0u};
            const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
            for (int b = 0; b < 16 && b < left; ++b) v[b >> 2] |= (unsigned)p[b] << (8 * (b & 3));
            out.x = v[0]; out.y = v[1]; out.z = v[2]; out.w = v[3];
        }
        if (left < 16) {
            /* Zeros past the row, in the padding of the aligned row. */
            out.x &= cg_keep(left); out.y &= cg_keep(left - 4); out.z &= cg_keep(left - 8); out.w &= cg_keep(left - 12);
        }
        *reinterpret_cast<cg_u4*>(dst + dst_off + (long)r * dst_pitch + 16L * j) = out;
    }
}
"#;

/// Whether [`copy`] serves `r`: a destination of 16-byte rows that hold the row rounded
/// up to 16 bytes, and counts that fit the kernel's 32-bit ones.
fn serves(r: &RowCopy) -> bool {
    r.dst_off % 16 == 0
        && r.dst_pitch % 16 == 0
        && r.dst_pitch >= r.row_bytes.next_multiple_of(16)
        && r.row_bytes <= i32::MAX as usize - 16
        && r.rows <= i32::MAX as usize
}

/// Queues copy `r` from `src` to `dst` on a CUDA device with [`SOURCE`]'s kernel and
/// returns true; false where it does not apply (another backend, a copy it does not
/// serve, a kernel the device cannot build), and the caller then copies by other means.
/// `r` must fit both buffers ([`RowCopy::fits`]).
pub(crate) fn copy(dev: &Device, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<bool> {
    if dev.info().kind != Backend::Cuda || !serves(&r) || !r.fits(src.bytes, dst.bytes) {
        return Ok(false);
    }
    if r.rows == 0 || r.row_bytes == 0 {
        return Ok(true);
    }
    let unbuilt = |d: &Device| {
        UNBUILT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|s| s.contains(&d.serial()))
    };
    if unbuilt(dev) {
        return Ok(false);
    }
    let kernel = match dev.kernel(SOURCE, "cg_realign", &[], &CompileNeeds::default()) {
        Ok(k) => k,
        Err(_) => {
            UNBUILT
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert_with(HashSet::new)
                .insert(dev.serial());
            return Ok(false);
        }
    };
    let chunks = r.row_bytes.div_ceil(16);
    let dims = LaunchDims {
        grid: [chunks.div_ceil(32) as u32, r.rows.div_ceil(8).min(65535) as u32, 1],
        block: [32, 8, 1],
        smem_bytes: 0,
    };
    let long = |v: usize| KernelArg::Long(v as i64);
    let args = [
        KernelArg::Buffer(src),
        long(src.bytes),
        long(r.src_off),
        long(r.src_pitch),
        KernelArg::Buffer(dst),
        long(r.dst_off),
        long(r.dst_pitch),
        KernelArg::Int(r.row_bytes as i32),
        KernelArg::Int(r.rows as i32),
    ];
    dev.backend().launch(&*kernel, dims, &args)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel builds for sm_80 and sm_90 without spills (NVRTC, no GPU needed).
    #[cfg(feature = "cuda")]
    #[test]
    fn source_compiles_for_sm80_and_sm90() {
        if !crate::nvrtc_available() {
            crate::device::test_switches::skip(
                "realign::source_compiles_for_sm80_and_sm90",
                "the NVRTC compile of the staging copy kernel",
                "libnvrtc.so.13 was not found (is its folder on LD_LIBRARY_PATH?)",
                "CROSSGEMM_REQUIRE_NVRTC",
            );
            return;
        }
        for arch in [80, 90] {
            let log = crate::device::cuda::nvrtc_compile_check(SOURCE, "cg_realign", arch.into(), &[])
                .unwrap_or_else(|e| panic!("sm_{arch}: {e}"));
            let info = crate::device::cuda::PtxasInfo::parse(&log);
            assert_eq!(
                info.spill_stores.unwrap_or(0) + info.spill_loads.unwrap_or(0),
                0,
                "sm_{arch}: spills: {info:?}"
            );
        }
    }

    #[test]
    fn serves_aligned_destinations_that_hold_the_rounded_row() {
        let r = RowCopy {
            src_off: 3,
            src_pitch: 1401,
            dst_off: 0,
            dst_pitch: 1408,
            row_bytes: 1400,
            rows: 3000,
        };
        assert!(serves(&r));
        assert!(!serves(&RowCopy { dst_off: 8, ..r }));
        assert!(!serves(&RowCopy { dst_pitch: 1400, ..r }));
        assert!(!serves(&RowCopy { dst_pitch: 1404, ..r }));
    }
}
