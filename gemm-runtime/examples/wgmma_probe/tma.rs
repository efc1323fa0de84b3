//! TMA tensor maps for the probe: the runtime's encoder (gemm-runtime/src/device/cuda/tma.rs,
//! included as a module so that the probe tests the code launches use), and the map of one
//! operand of the wgmma kernels.

#[path = "../../src/device/cuda/tma.rs"]
#[allow(dead_code)]
mod encoder;

pub(crate) use encoder::{encode_2d, Tma2d, TmaDtype, TmaError, TmaMap, TmaSwizzle};

/// The map of one operand of the wgmma kernels, as `gemm_core::codegen::wgmma`'s docs
/// specify: `k_major` operands are `rows × k` with k contiguous (box `{bk, tile_rows}`),
/// MN-major ones `k × rows` with rows contiguous (box `{64, bk}`); 128-byte swizzle.
pub(crate) fn operand_map(
    base: u64,
    dtype: TmaDtype,
    k_major: bool,
    rows: u64,
    k: u64,
    tile_rows: u32,
    bk: u32,
) -> Result<TmaMap, TmaError> {
    let (dims, box_dim) = if k_major {
        ([k, rows], [bk, tile_rows])
    } else {
        ([rows, k], [64, bk])
    };
    encode_2d(&Tma2d {
        base,
        dtype,
        dims,
        pitch: dims[0] * dtype.size(),
        box_dim,
        swizzle: TmaSwizzle::B128,
        batch: None,
    })
}
