//! TMA tensor maps: the 128-byte `CUtensorMap` a kernel takes by value as a
//! `__grid_constant__` parameter, encoded with the driver's `cuTensorMapEncodeTiled` from
//! a family's [`TensorMap`] description and an operand's device address.

use cudarc::driver::sys;
use gemm_core::{DType, TensorMap};
use std::ffi::c_void;
use std::fmt;

/// The device-side `CgTmaMap` (`struct __align__(64) CgTmaMap { unsigned long long
/// v[16]; }`): an encoded `CUtensorMap`, 128 bytes, 64-byte aligned.
#[repr(C, align(64))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct TmaMap(pub [u64; 16]);

const _: () = assert!(std::mem::size_of::<TmaMap>() == 128);
const _: () = assert!(std::mem::align_of::<TmaMap>() == 64);

impl fmt::Debug for TmaMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TmaMap({:016x}..)", self.0[0])
    }
}

/// Element type of a tensor map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TmaDtype {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
    /// binary32 in memory, rounded to tf32 (nearest) as TMA copies it.
    Tf32,
}

impl TmaDtype {
    /// Bytes per element.
    pub(crate) fn size(self) -> u64 {
        match self {
            TmaDtype::F16 | TmaDtype::Bf16 => 2,
            TmaDtype::F32 | TmaDtype::Tf32 => 4,
        }
    }
    fn cu(self) -> sys::CUtensorMapDataType {
        match self {
            TmaDtype::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaDtype::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaDtype::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TmaDtype::Tf32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
        }
    }
}

/// Shared-memory swizzle of the boxes a map writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TmaSwizzle {
    /// Rows land as they are.
    None,
    /// 128-byte swizzle (what the wgmma descriptors of the kernels expect).
    B128,
}

/// A rank-2 tiled map over a row-major view of an operand: `dims[0]` elements per row
/// (the contiguous dimension), `dims[1]` rows `pitch` bytes apart; `boxDim = box`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tma2d {
    /// Base address (16-byte aligned).
    pub(crate) base: u64,
    /// Element type.
    pub(crate) dtype: TmaDtype,
    /// `{contiguous extent, rows}`.
    pub(crate) dims: [u64; 2],
    /// Bytes between rows (a multiple of 16, below 2^40).
    pub(crate) pitch: u64,
    /// Box extent `{contiguous, rows}`, each in [1, 256].
    pub(crate) box_dim: [u32; 2],
    /// Swizzle.
    pub(crate) swizzle: TmaSwizzle,
    /// A third, outermost dimension: `[matrices, bytes between them]` (a batched
    /// operand; the box takes one matrix).
    pub(crate) batch: Option<[u64; 2]>,
}

/// Why a map could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TmaError {
    /// The arguments break one of the driver's documented rules (checked before the call,
    /// so the message says which).
    Invalid(String),
    /// The driver rejected the map.
    Driver { code: sys::CUresult, map: Tma2d },
}

impl fmt::Display for TmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmaError::Invalid(s) => write!(f, "invalid TMA map: {s}"),
            TmaError::Driver { code, map } => write!(f, "cuTensorMapEncodeTiled failed with {code:?} for {map:?}"),
        }
    }
}

impl std::error::Error for TmaError {}

/// Encodes `m` with `cuTensorMapEncodeTiled`: interleave none, L2 promotion 256B,
/// out-of-bounds fill none (elements outside `dims` read as zeros), element strides 1.
///
/// Checks the driver's rules first so that a bad shape gets a readable error: a
/// 16-byte aligned base, a pitch that is a multiple of 16 bytes (and at least one row),
/// dimensions in [1, 2^32], box dimensions in [1, 256], and with the 128-byte swizzle an
/// inner box of at most 128 bytes.
///
/// The caller must hold a current CUDA context (the driver library must be loaded).
pub(crate) fn encode_2d(m: &Tma2d) -> Result<TmaMap, TmaError> {
    check(m)?;
    let [count, stride] = m.batch.unwrap_or([1, 0]);
    let rank = if m.batch.is_some() { 3 } else { 2 };
    let dims = [m.dims[0], m.dims[1], count];
    let strides = [m.pitch, stride];
    let box_dim = [m.box_dim[0], m.box_dim[1], 1];
    let elem_strides = [1u32, 1, 1];
    let swizzle = match m.swizzle {
        TmaSwizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        TmaSwizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    };
    // The driver's own type (128-byte aligned in CUDA 13's headers): encode there, then
    // copy the 128 bytes out.
    let mut raw = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: every pointer refers to a live local at least as long as the call reads
    // (rank entries of dims, box and element strides, rank - 1 entries of strides, rank 2
    // or 3); the output is a properly aligned CUtensorMap.
    let code = unsafe {
        sys::cuTensorMapEncodeTiled(
            raw.as_mut_ptr(),
            m.dtype.cu(),
            rank,
            m.base as *mut c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dim.as_ptr(),
            elem_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if code != sys::CUresult::CUDA_SUCCESS {
        return Err(TmaError::Driver { code, map: *m });
    }
    // SAFETY: the driver initialised the map (and it was zeroed before).
    let raw = unsafe { raw.assume_init() };
    Ok(TmaMap(raw.opaque))
}

/// The driver's rules of [`encode_2d`], on the host (no driver needed).
fn check(m: &Tma2d) -> Result<(), TmaError> {
    let esz = m.dtype.size();
    let bad = |s: String| Err(TmaError::Invalid(s));
    if !m.base.is_multiple_of(16) {
        return bad(format!("base address {:#x} is not 16-byte aligned", m.base));
    }
    for (i, &d) in m.dims.iter().enumerate() {
        if d == 0 || d > 1 << 32 {
            return bad(format!("dimension {i} = {d} is outside [1, 2^32]"));
        }
    }
    if !m.pitch.is_multiple_of(16) || m.pitch >= 1 << 40 {
        return bad(format!(
            "row pitch {} bytes is not a multiple of 16 below 2^40 (rows of {} elements of {esz} bytes)",
            m.pitch, m.dims[0]
        ));
    }
    if m.pitch < m.dims[0] * esz {
        return bad(format!(
            "row pitch {} bytes is shorter than a row ({} bytes)",
            m.pitch,
            m.dims[0] * esz
        ));
    }
    for (i, &b) in m.box_dim.iter().enumerate() {
        if b == 0 || b > 256 {
            return bad(format!("box dimension {i} = {b} is outside [1, 256]"));
        }
    }
    if let Some([count, stride]) = m.batch {
        if count == 0 || count > 1 << 32 {
            return bad(format!("batch dimension {count} is outside [1, 2^32]"));
        }
        if !stride.is_multiple_of(16) || stride >= 1 << 40 || stride < m.pitch * m.dims[1] {
            return bad(format!(
                "batch stride {stride} bytes is not a multiple of 16 below 2^40 of at least a matrix ({} bytes)",
                m.pitch * m.dims[1]
            ));
        }
    }
    if m.swizzle == TmaSwizzle::B128 && m.box_dim[0] as u64 * esz > 128 {
        return bad(format!(
            "inner box of {} bytes exceeds the 128-byte swizzle span",
            m.box_dim[0] as u64 * esz
        ));
    }
    Ok(())
}

/// Encodes `map` over the operand at device address `base`.
pub(crate) fn encode(base: u64, map: &TensorMap) -> Result<TmaMap, TmaError> {
    encode_2d(&tma_2d(base, map))
}

/// A family's map description over the operand at `base`, as [`encode_2d`] takes it.
fn tma_2d(base: u64, map: &TensorMap) -> Tma2d {
    let dtype = match map.dtype {
        DType::F16 => TmaDtype::F16,
        DType::Bf16 => TmaDtype::Bf16,
        DType::F32 if map.tf32 => TmaDtype::Tf32,
        DType::F32 => TmaDtype::F32,
    };
    Tma2d {
        base: base + map.offset_bytes,
        dtype,
        dims: map.dims,
        pitch: map.pitch_bytes,
        box_dim: map.box_dims,
        batch: map.batch,
        swizzle: if map.swizzle_128b {
            TmaSwizzle::B128
        } else {
            TmaSwizzle::None
        },
    }
}

// SAFETY: a plain 128-byte, 64-byte aligned value that the kernel takes by value
// (`const __grid_constant__ CgTmaMap`); cudarc copies it into the parameter buffer.
unsafe impl cudarc::driver::DeviceRepr for TmaMap {}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::family::{KernelFamily, Problem, Wgmma};
    use gemm_core::space::TuneSpace;
    use gemm_core::target::{Targets, BUILTIN_TARGETS};
    use gemm_core::{plan_target, AccMode, GemmIr, Layout, Stored, TileConfig};

    /// Every map the wgmma family asks for, for every planned config of each operand type
    /// and layout, on TMA shapes and on shapes the cp.async producer serves (whose maps
    /// are placeholders), passes the driver's rules: a map the runtime cannot encode is a
    /// launch error on the GPU (the tf32 placeholder once was one).
    #[test]
    fn every_wgmma_map_passes_the_drivers_rules() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = targets.get("h200").unwrap();
        let irs = [
            GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor),
            GemmIr::matmul("t", DType::Bf16, AccMode::F32, Layout::ColMajor, Layout::RowMajor),
            GemmIr::matmul("t", DType::F32, AccMode::Tf32, Layout::RowMajor, Layout::ColMajor),
        ];
        let (mut maps, mut rank3) = (0, 0);
        for ir in &irs {
            let plan = plan_target(ir, h200, &TuneSpace::default());
            let tiles: Vec<_> = plan
                .configs
                .iter()
                .filter_map(|c| match c {
                    TileConfig::Wgmma(t) => Some(*t),
                    _ => None,
                })
                .collect();
            assert!(!tiles.is_empty(), "{:?}: no wgmma config", ir.ab_dtype);
            for t in &tiles {
                // A batch of packed products, A and B one per product (rank-3 maps), and
                // a batch of products with B broadcast (A rank 3, B rank 2).
                let batched = |m: usize, n: usize, k: usize, b_too: bool| {
                    let (sa, sb) = (m * k, if b_too { k * n } else { 0 });
                    Problem::new(m, n, k)
                        .stored(Stored::default().with_bstride(sa), Stored::default().with_bstride(sb))
                        .batched(6)
                };
                for p in [
                    Problem::new(4096, 4096, 4096),
                    Problem::new(67, 45, 77),
                    Problem::new(1, 8, 2),
                    batched(512, 512, 128, true),
                    batched(136, 88, 64, false),
                ] {
                    if Wgmma.accepts(t, ir, p).is_err() {
                        continue;
                    }
                    for map in Wgmma.tensor_maps(t, ir, p) {
                        let m = tma_2d(256, &map);
                        check(&m).unwrap_or_else(|e| panic!("{t:?} {p:?} {map:?}: {e}"));
                        rank3 += usize::from(m.batch.is_some());
                        // tf32 operands round as TMA copies them (placeholders read nothing).
                        let tf32 = ir.acc == AccMode::Tf32 && map.swizzle_128b;
                        assert_eq!(m.dtype == TmaDtype::Tf32, tf32, "{map:?}");
                        maps += 1;
                    }
                }
            }
        }
        assert!(maps > 100 && rank3 > 20, "{maps} maps, {rank3} of rank 3");
    }
}
