//! Reading and comparing outputs without copying them to the host: two small kernels
//! (one source for CUDA and OpenCL C) that gather the elements at the sampled points and
//! compare two whole outputs on the device, returning only the disagreements. A device
//! whose compiler rejects them falls back to copying whole outputs (with fallible host
//! allocations).

use super::verify::Filter;
use crate::device::{Device, KernelArg, RawBuffer};
use crate::element::decode;
use crate::error::Result;
use crate::reference::try_vec;
use gemm_core::{CompileNeeds, DType, LaunchDims};
use std::any::Any;
use std::sync::Arc;

/// Disagreements recorded per comparison at most (16 bytes each on the device).
pub(crate) const CAP: usize = 4096;

/// The kernels' source. `DT`: 0 f32, 1 f16, 2 bf16. Elements are decoded with integer
/// arithmetic only (no half-precision support needed), indices are 64-bit.
const SOURCE: &str = r#"
#ifdef __OPENCL_VERSION__
#define KERNEL __kernel
#define GLOBAL __global
typedef long i64;
typedef uint u32;
typedef ushort u16;
#define GID() ((i64)get_global_id(0))
#define GSIZE() ((i64)get_global_size(0))
#define INC(p) atomic_inc(p)
#define AS_FLOAT(u) as_float(u)
#define FABS(x) fabs(x)
#define FMAX(a, b) fmax(a, b)
#else
#define KERNEL extern "C" __global__
#define GLOBAL
typedef long long i64;
typedef unsigned int u32;
typedef unsigned short u16;
#define GID() ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define GSIZE() ((i64)gridDim.x * blockDim.x)
#define INC(p) atomicAdd(p, 1u)
#define AS_FLOAT(u) __uint_as_float(u)
#define FABS(x) fabsf(x)
#define FMAX(a, b) fmaxf(a, b)
#endif

#if DT == 0
typedef u32 elem_t;
#else
typedef u16 elem_t;
#endif

/* The f32 bit pattern of one stored element. */
#if DT == 0
#define TO_BITS(x) ((u32)(x))
#else
#if DT == 2
#define TO_BITS(x) (((u32)(x)) << 16)
#else
#define TO_BITS(x) f16_bits((u32)(x))
#endif
#endif

#if DT == 1
#ifndef __OPENCL_VERSION__
__device__
#endif
u32 f16_bits(u32 h) {
    u32 s = (h & 0x8000u) << 16;
    u32 e = (h >> 10) & 0x1fu;
    u32 m = h & 0x3ffu;
    if (e == 0x1fu) return s | 0x7f800000u | (m << 13);
    if (e == 0u) {
        if (m == 0u) return s;
        int x = 1;
        while ((m & 0x400u) == 0u) { m <<= 1; x -= 1; }
        return s | ((u32)(x + 112) << 23) | ((m & 0x3ffu) << 13);
    }
    return s | ((e + 112u) << 23) | (m << 13);
}
#endif

#define FINITE(b) (((b) & 0x7f800000u) != 0x7f800000u)

/* dst[t] = the f32 bits of src[idx[t]] (idx: pairs of 32-bit halves). */
KERNEL void cg_gather(int count, GLOBAL const u32* idx, GLOBAL const elem_t* src, GLOBAL u32* dst) {
    i64 t = GID();
    if (t < count) {
        i64 i = (i64)idx[2 * t] | ((i64)idx[2 * t + 1] << 32);
        dst[t] = TO_BITS(src[i]);
    }
}

/* Counts the elements where a and b disagree (res[0], saturating at 2^31) and records
   the first CAP of them as (index low, index high, a bits, b bits) from res[1]. */
KERNEL void cg_compare(int n_lo, int n_hi, GLOBAL const elem_t* a, GLOBAL const elem_t* b,
                       float rel, float abs_tol, int cap, GLOBAL u32* res) {
    i64 n = ((i64)n_hi << 31) | (i64)n_lo;
    for (i64 i = GID(); i < n; i += GSIZE()) {
        u32 ab = TO_BITS(a[i]);
        u32 bb = TO_BITS(b[i]);
        int ok;
        if (FINITE(ab) && FINITE(bb)) {
            float x = AS_FLOAT(ab);
            float y = AS_FLOAT(bb);
            ok = FABS(x - y) <= rel * FMAX(FABS(x), FABS(y)) + abs_tol;
        } else {
            ok = ab == bb && (ab & 0x007fffffu) == 0u;
        }
        if (!ok && res[0] < 0x80000000u) {
            u32 slot = INC(&res[0]);
            if (slot < (u32)cap) {
                res[1 + 4 * slot] = (u32)(i & 0xffffffff);
                res[2 + 4 * slot] = (u32)(i >> 32);
                res[3 + 4 * slot] = ab;
                res[4 + 4 * slot] = bb;
            }
        }
    }
}
"#;

/// Where two outputs disagree.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Disagreement {
    /// How many elements (saturating at 2^31).
    pub(crate) count: u64,
    /// Up to [`CAP`] of them: (storage index, first value, second value).
    pub(crate) first: Vec<(usize, f32, f32)>,
}

type Compiled = Arc<dyn Any + Send + Sync>;

/// Reads and compares outputs of one dtype on one device.
pub(crate) struct Reader {
    dtype: DType,
    kernels: Option<(Compiled, Compiled)>,
    /// Why the kernels are not used (the compile error's first line), if not.
    pub(crate) fallback: Option<String>,
}

fn dt(d: DType) -> u32 {
    match d {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::Bf16 => 2,
    }
}

/// `i64` count as the kernel's (low 31 bits, the rest).
fn split(n: usize) -> (i32, i32) {
    ((n & 0x7fff_ffff) as i32, (n >> 31) as i32)
}

/// A grid-stride launch over `n` items of 256 threads, at most 4096 blocks.
fn dims(n: usize) -> LaunchDims {
    LaunchDims {
        grid: [(n.div_ceil(256)).clamp(1, 4096) as u32, 1, 1],
        block: [256, 1, 1],
        smem_bytes: 0,
        persistent: None,
    }
}

impl Reader {
    /// Compiles the kernels for `dtype` on `dev` (once per process and device: the
    /// device's kernel map caches them); a compile failure selects the host fallback.
    pub(crate) fn new(dev: &Device, dtype: DType) -> Reader {
        let defines = [("DT".to_string(), dt(dtype))];
        let needs = CompileNeeds::default();
        let built = dev
            .kernel(SOURCE, "cg_gather", &defines, &needs)
            .and_then(|g| Ok((g, dev.kernel(SOURCE, "cg_compare", &defines, &needs)?)));
        match built {
            Ok(k) => Reader {
                dtype,
                kernels: Some(k),
                fallback: None,
            },
            Err(e) => Reader {
                dtype,
                kernels: None,
                fallback: Some(e.to_string().lines().next().unwrap_or("").to_string()),
            },
        }
    }

    /// The host fallback only (for tests).
    #[cfg(test)]
    pub(crate) fn host(dtype: DType) -> Reader {
        Reader {
            dtype,
            kernels: None,
            fallback: Some("test".into()),
        }
    }

    /// The values of `buf` at storage indices `idx`.
    pub(crate) fn values_at(&self, buf: &RawBuffer, idx: &[usize]) -> Result<Vec<f32>> {
        let dev = &buf.device;
        let Some((gather, _)) = &self.kernels else {
            let all = download(buf)?;
            let v = decode(self.dtype, &all);
            return Ok(idx.iter().map(|&i| v[i]).collect());
        };
        if idx.is_empty() {
            return Ok(Vec::new());
        }
        let words: Vec<u32> = idx.iter().flat_map(|&i| [i as u32, (i as u64 >> 32) as u32]).collect();
        let ib = RawBuffer::new(dev, words.len() * 4)?;
        ib.upload(bytemuck::cast_slice(&words))?;
        let out = RawBuffer::new(dev, idx.len() * 4)?;
        let args = [
            KernelArg::Int(idx.len() as i32),
            KernelArg::Buffer(&ib),
            KernelArg::Buffer(buf),
            KernelArg::Buffer(&out),
        ];
        let d = LaunchDims {
            grid: [idx.len().div_ceil(64) as u32, 1, 1],
            block: [64, 1, 1],
            smem_bytes: 0,
            persistent: None,
        };
        dev.backend().launch(&**gather, d, &args)?;
        let mut v = vec![0f32; idx.len()];
        out.download(bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }

    /// Where the first `n` elements of `a` and `b` disagree under `filter`.
    pub(crate) fn compare(&self, a: &RawBuffer, b: &RawBuffer, n: usize, filter: Filter) -> Result<Disagreement> {
        let dev = &a.device;
        let Some((_, compare)) = &self.kernels else {
            let (x, y) = (download(a)?, download(b)?);
            let (x, y) = (decode(self.dtype, &x), decode(self.dtype, &y));
            let mut d = Disagreement::default();
            for (i, (&p, &q)) in x.iter().zip(&y).enumerate().take(n) {
                if !filter.agree(p, q) {
                    d.count += 1;
                    if d.first.len() < CAP {
                        d.first.push((i, p, q));
                    }
                }
            }
            return Ok(d);
        };
        let res = RawBuffer::new(dev, (1 + 4 * CAP) * 4)?;
        res.fill(0)?;
        let (lo, hi) = split(n);
        let args = [
            KernelArg::Int(lo),
            KernelArg::Int(hi),
            KernelArg::Buffer(a),
            KernelArg::Buffer(b),
            KernelArg::Float(filter.rel),
            KernelArg::Float(filter.abs),
            KernelArg::Int(CAP as i32),
            KernelArg::Buffer(&res),
        ];
        dev.backend().launch(&**compare, dims(n), &args)?;
        let mut w = vec![0u32; res.bytes / 4];
        res.download(bytemuck::cast_slice_mut(&mut w))?;
        let count = w[0] as u64;
        let first = (0..(count as usize).min(CAP))
            .map(|s| {
                let r = &w[1 + 4 * s..5 + 4 * s];
                let idx = r[0] as u64 | ((r[1] as u64) << 32);
                (idx as usize, f32::from_bits(r[2]), f32::from_bits(r[3]))
            })
            .collect();
        Ok(Disagreement { count, first })
    }
}

/// The whole of `buf` on the host (fallibly allocated).
pub(crate) fn download(buf: &RawBuffer) -> Result<Vec<u8>> {
    let mut v = try_vec::<u8>(buf.bytes, "a copy of a candidate's output")?;
    v.resize(buf.bytes, 0);
    buf.download(&mut v)?;
    Ok(v)
}

/// Whether the kernels' CUDA dialect compiles (no GPU needed); for the NVRTC checks.
#[cfg(all(test, feature = "cuda"))]
pub(crate) fn cuda_compiles() -> std::result::Result<(), crate::error::GemmError> {
    for d in 0..3 {
        for sym in ["cg_gather", "cg_compare"] {
            crate::device::cuda::nvrtc_compile_check(SOURCE, sym, 80.into(), &[("DT".to_string(), d)])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::test_switches;
    use crate::element::encode;

    fn opencl_device() -> Option<Device> {
        let d = Device::list()
            .into_iter()
            .find(|d| d.info().kind == gemm_core::Backend::Opencl);
        if d.is_none() {
            test_switches::skip(
                "tune::compare",
                "the device-side gather and compare kernels",
                "no OpenCL device was found",
                "CROSSGEMM_REQUIRE_OPENCL",
            );
        }
        d
    }

    /// The device kernels and the host fallback agree, for every dtype, on finite
    /// values, infinities, NaNs, subnormal halves and an index past 2^31 elements' worth
    /// of the split count.
    #[test]
    fn device_kernels_match_the_host_rule() {
        let Some(dev) = opencl_device() else { return };
        let f = Filter { rel: 0.01, abs: 1e-3 };
        for dtype in [DType::F32, DType::F16, DType::Bf16] {
            let n = 3000;
            let a: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.37).sin() * 100.0).collect();
            let mut b = a.clone();
            b[10] += 5.0;
            b[11] = f32::NAN;
            b[12] = f32::INFINITY;
            let mut a2 = a.clone();
            a2[13] = f32::INFINITY;
            b[13] = f32::INFINITY;
            a2[14] = f32::NEG_INFINITY;
            b[14] = f32::INFINITY;
            a2[15] = 3e-6; // an f16 subnormal
            b[15] = 3e-6;
            a2[2999] = 1.0;
            b[2999] = 1.5;
            let (ea, eb) = (encode(dtype, &a2), encode(dtype, &b));
            let (ba, bb) = (
                RawBuffer::new(&dev, ea.len()).unwrap(),
                RawBuffer::new(&dev, eb.len()).unwrap(),
            );
            ba.upload(&ea).unwrap();
            bb.upload(&eb).unwrap();
            let dr = Reader::new(&dev, dtype);
            assert!(dr.fallback.is_none(), "{:?}", dr.fallback);
            let hr = Reader::host(dtype);
            let mut got = dr.compare(&ba, &bb, n, f).unwrap();
            got.first.sort_by_key(|x| x.0);
            let want = hr.compare(&ba, &bb, n, f).unwrap();
            assert_eq!(got.count, want.count, "{dtype:?}");
            let idx: Vec<usize> = got.first.iter().map(|x| x.0).collect();
            assert_eq!(idx, want.first.iter().map(|x| x.0).collect::<Vec<_>>(), "{dtype:?}");
            assert_eq!(idx, vec![10, 11, 12, 14, 2999], "{dtype:?}");
            for (g, w) in got.first.iter().zip(&want.first) {
                assert!(
                    g.1.to_bits() == w.1.to_bits() && g.2.to_bits() == w.2.to_bits(),
                    "{g:?} {w:?}"
                );
            }
            // A buffer against itself: only its NaNs.
            let mut nan = a.clone();
            nan[77] = f32::NAN;
            let en = encode(dtype, &nan);
            let bn = RawBuffer::new(&dev, en.len()).unwrap();
            bn.upload(&en).unwrap();
            let selfc = dr.compare(&bn, &bn, n, f).unwrap();
            assert_eq!((selfc.count, selfc.first[0].0), (1, 77));
            // Gather.
            let at = [0usize, 15, 2999, 1234];
            let g = dr.values_at(&ba, &at).unwrap();
            let h = hr.values_at(&ba, &at).unwrap();
            assert_eq!(
                g.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                h.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{dtype:?}"
            );
            assert_eq!(g[2], 1.0);
        }
    }

    /// More disagreements than [`CAP`]: all are counted, [`CAP`] recorded.
    #[test]
    fn many_disagreements_are_counted() {
        let Some(dev) = opencl_device() else { return };
        let n = CAP * 3;
        let a = encode(DType::F32, &vec![1.0; n]);
        let b = encode(DType::F32, &vec![2.0; n]);
        let (ba, bb) = (
            RawBuffer::new(&dev, a.len()).unwrap(),
            RawBuffer::new(&dev, b.len()).unwrap(),
        );
        ba.upload(&a).unwrap();
        bb.upload(&b).unwrap();
        let d = Reader::new(&dev, DType::F32)
            .compare(&ba, &bb, n, Filter { rel: 0.0, abs: 0.0 })
            .unwrap();
        assert_eq!((d.count, d.first.len()), (n as u64, CAP));
        assert_eq!(split(3 << 31 | 5), (5, 3));
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn cuda_dialect_compiles() {
        if !crate::nvrtc_available() {
            test_switches::skip(
                "tune::compare::cuda_dialect_compiles",
                "the NVRTC compile of the gather and compare kernels",
                "libnvrtc was not found (is its folder on LD_LIBRARY_PATH?)",
                "CROSSGEMM_REQUIRE_NVRTC",
            );
            return;
        }
        cuda_compiles().unwrap();
    }
}
