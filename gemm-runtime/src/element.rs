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
        // Not a cast of the slice: a byte buffer need not be 4-byte aligned (an empty
        // one is not), and a misaligned cast panics.
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Device bytes come in byte buffers of any alignment, an empty one included: decoding
    /// must not cast the slice (a misaligned cast panics).
    #[test]
    fn decode_takes_bytes_at_any_alignment() {
        let vals = [1.5f32, -2.25, 3.0e-3];
        let mut bytes = vec![0u8];
        bytes.extend(encode(DType::F32, &vals));
        assert_eq!(decode(DType::F32, &bytes[1..]), vals);
        assert!(decode(DType::F32, &[]).is_empty());
        for dt in [DType::F16, DType::Bf16] {
            let mut odd = vec![0u8];
            odd.extend(encode(dt, &vals));
            let back = decode(dt, &odd[1..]);
            assert_eq!(back.len(), 3);
            assert!(back.iter().zip(&vals).all(|(b, v)| (b - v).abs() <= v.abs() * 1e-2));
        }
    }
}
