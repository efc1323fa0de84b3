//! Element types a kernel reads and writes, and the marker types for layouts.

use gemm_core::{DType, Layout};

/// A matrix element type: `f32`, [`half::f16`] or [`half::bf16`].
pub trait Element: bytemuck::Pod + Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The IR dtype.
    const DTYPE: DType;
    /// Widens to f32 (exact for all three).
    fn to_f32(self) -> f32;
    /// Rounds from f32 to nearest even.
    fn from_f32(v: f32) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(v: f32) -> Self {
        v
    }
}

impl Element for half::f16 {
    const DTYPE: DType = DType::F16;
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        half::f16::from_f32(v)
    }
}

impl Element for half::bf16 {
    const DTYPE: DType = DType::Bf16;
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        half::bf16::from_f32(v)
    }
}

/// A storage-order marker for [`Matrix`](crate::Matrix).
pub trait LayoutType: Copy + Send + Sync + std::fmt::Debug + Default + 'static {
    /// The IR layout.
    const LAYOUT: Layout;
}

/// Row-major storage: element (r, c) at `r * cols + c`. The default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowMajor;

/// Column-major storage: element (r, c) at `c * rows + r`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColMajor;

impl LayoutType for RowMajor {
    const LAYOUT: Layout = Layout::RowMajor;
}
impl LayoutType for ColMajor {
    const LAYOUT: Layout = Layout::ColMajor;
}

/// Little-endian device bytes of `dtype` elements, widened to f32.
pub(crate) fn decode(dtype: DType, bytes: &[u8]) -> Vec<f32> {
    match dtype {
        DType::F32 => bytemuck::cast_slice::<u8, f32>(bytes).to_vec(),
        DType::F16 => bytes
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        DType::Bf16 => bytes
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
    }
}

/// f32 values rounded to `dtype` (nearest even), as little-endian device bytes.
pub(crate) fn encode(dtype: DType, vals: &[f32]) -> Vec<u8> {
    match dtype {
        DType::F32 => bytemuck::cast_slice(vals).to_vec(),
        DType::F16 => vals
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
            .collect(),
        DType::Bf16 => vals
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
            .collect(),
    }
}
