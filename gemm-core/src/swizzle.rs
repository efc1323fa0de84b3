//! The XOR swizzle of 16-byte chunks in shared memory, and the bank-conflict model the
//! planner checks it with. The CUDA generator emits [`C_SWIZZLE`], the same formula as
//! [`phys_chunk`], so what the planner proves is what the kernel does.

/// Physical 16-byte chunk of logical chunk `chunk` in shared-memory row `row`, for rows
/// of `chunks_per_row` chunks (a power of two). Rows shorter than 128 bytes share a
/// 128-byte bank window, so the XOR key advances once per window.
pub const fn phys_chunk(row: u32, chunk: u32, chunks_per_row: u32) -> u32 {
    let rows_per_window = if chunks_per_row >= 8 { 1 } else { 8 / chunks_per_row };
    let key_span = if chunks_per_row < 8 { chunks_per_row } else { 8 };
    chunk ^ ((row / rows_per_window) % key_span)
}

/// C definition of the same swizzle (`SWZ(row, chunk, cpr)`), for generated kernels.
pub const C_SWIZZLE: &str =
    "#define SWZ(row, chunk, cpr) ((chunk) ^ (((row) / ((cpr) >= 8 ? 1 : 8 / (cpr))) % ((cpr) < 8 ? (cpr) : 8)))\n";

/// The worst number of distinct 16-byte transactions one bank must serve when eight
/// lanes of an `ldmatrix` phase each read one 16-byte row slice: rows `r0..r0+8` of a
/// tile whose rows are `row_bytes` long, all at the same logical chunk. 1 means
/// conflict-free. `banks * bank_width` is the width of one shared-memory wavefront.
pub fn ldmatrix_conflict_ways(row_bytes: u32, banks: u32, bank_width: u32, swizzled: bool) -> u32 {
    let cpr = (row_bytes / 16).max(1);
    let window = banks * bank_width;
    let mut worst = 1;
    for r0 in (0..64).step_by(8) {
        for chunk in 0..cpr {
            let mut per_bank = vec![0u32; banks as usize];
            for r in r0..r0 + 8 {
                let c = if swizzled { phys_chunk(r, chunk, cpr) } else { chunk };
                let addr = r * row_bytes + c * 16;
                for w in 0..(16 / bank_width).max(1) {
                    let bank = ((addr + w * bank_width) % window) / bank_width;
                    per_bank[bank as usize] += 1;
                }
            }
            worst = worst.max(*per_bank.iter().max().unwrap());
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_is_a_permutation_of_each_row() {
        for cpr in [2, 4, 8, 16, 32] {
            for row in 0..64 {
                let mut seen: Vec<u32> = (0..cpr).map(|c| phys_chunk(row, c, cpr)).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..cpr).collect::<Vec<_>>(), "cpr {cpr} row {row}");
            }
        }
    }

    #[test]
    fn swizzled_rows_are_conflict_free_and_plain_ones_are_not() {
        for row_bytes in [64, 128, 256, 512] {
            assert_eq!(ldmatrix_conflict_ways(row_bytes, 32, 4, true), 1, "{row_bytes}");
        }
        assert_eq!(ldmatrix_conflict_ways(128, 32, 4, false), 8);
        assert_eq!(ldmatrix_conflict_ways(64, 32, 4, false), 4);
    }
}
