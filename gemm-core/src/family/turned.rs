//! The turned-around form of the shape specialists (`decode`, `gemv`): a product with few
//! *columns* computed as `Cᵀ = Bᵀ · Aᵀ`, so that the kernel written for few rows serves
//! it. A config's `swap` flag picks the form; one source serves both through the `SWAP`
//! define, which exchanges the operands' roles, the extents and the output's coordinates.
//! What the families share of it lives here: the tune keys, the accepted extent, the
//! grid, the block tile in C's terms and the preprocessor roles.

use super::Problem;
use crate::ir::{GemmIr, Layout};

/// The forms whose streamed side is K-contiguous, plain (`false`) first: the plain one
/// streams B's columns (B column-major), the turned-around one A's rows (A row-major).
/// `gemv` and `decode` serve these forms (the small side in any layout).
pub(super) fn modes(ir: &GemmIr) -> Vec<bool> {
    let mut v = Vec::new();
    if ir.b_layout() == Layout::ColMajor {
        v.push(false);
    }
    if ir.a_layout() == Layout::RowMajor {
        v.push(true);
    }
    v
}

/// Whether form `swap`'s small side (A, or B turned around) has K-contiguous rows;
/// else it is stored across, its few rows contiguous.
pub(super) fn small_side_k_contiguous(ir: &GemmIr, swap: bool) -> bool {
    if swap {
        ir.b_layout() == Layout::ColMajor
    } else {
        ir.a_layout() == Layout::RowMajor
    }
}

/// Why `ir`'s layouts do not allow form `swap` (see [`modes`]), `None` where they do.
pub(super) fn form_unserved(ir: &GemmIr, swap: bool) -> Option<String> {
    if modes(ir).contains(&swap) {
        return None;
    }
    let (w_name, what) = if swap {
        ("A", "row-major")
    } else {
        ("B", "column-major")
    };
    Some(format!("streams {w_name}, which must be {what} (K-contiguous)"))
}

/// `Some(#error line)` where `ir`'s layouts do not allow `kernel`'s form `swap`
/// ([`form_unserved`]): the source of such a form fails to compile, should a config from
/// disk ask for it (the plan never gives it).
pub(super) fn form_error(ir: &GemmIr, swap: bool, kernel: &str) -> Option<String> {
    form_unserved(ir, swap).map(|why| format!("#error \"this {kernel} form {why}\"\n"))
}

/// The tune keys of a form's small side and of its rows (columns) per block: the keys
/// follow C, so turned around `block_n` picks the small side and `block_m` the block.
pub(super) fn keys(swap: bool) -> (&'static str, &'static str) {
    if swap {
        ("block_n", "block_m")
    } else {
        ("block_m", "block_n")
    }
}

/// `Err` when the call's small side (M, or N turned around) exceeds the `most` a config
/// holds.
pub(super) fn check_small_side(swap: bool, p: Problem, most: u32) -> Result<(), String> {
    if swap && p.n as u64 > most as u64 {
        return Err(format!(
            "N = {} is more than the {most} columns of this (turned around) config",
            p.n
        ));
    }
    if !swap && p.m as u64 > most as u64 {
        return Err(format!("M = {} is more than the {most} rows of this config", p.m));
    }
    Ok(())
}

/// The extent the grid walks: N, or M turned around.
pub(super) fn wide(swap: bool, p: Problem) -> usize {
    if swap {
        p.m
    } else {
        p.n
    }
}

/// A block's tile of C from its small side and its extent along the wide one.
pub(super) fn block_mn(swap: bool, small: u32, per_block: u32) -> (u32, u32) {
    if swap {
        (per_block, small)
    } else {
        (small, per_block)
    }
}

/// The six role definitions of one form: `CG_R`/`CG_C` the small and wide extents,
/// `CG_XP`/`CG_LDX` the small side's operand (A, or B turned around) and
/// `CG_WP`/`CG_LDW` the streamed one.
pub(super) fn role_defines(ir: &GemmIr, swap: bool) -> String {
    let (x, w, r, c) = if swap {
        (ir.b, ir.a, "N", "M")
    } else {
        (ir.a, ir.b, "M", "N")
    };
    format!(
        "#define CG_R {r}\n#define CG_C {c}\n#define CG_XP p{x}\n#define CG_WP p{w}\n#define CG_LDX ld{x}\n#define CG_LDW ld{w}\n"
    )
}

/// Both forms' definitions under `SWAP` (0 when the host does not set it); `bound` names
/// the small side's limit in the source's comment.
pub(super) fn forms(bound: &str, turned: &str, plain: &str) -> String {
    format!("#ifndef SWAP\n#define SWAP 0\n#endif\n#if SWAP\n/* Turned around: C^T = B^T A^T, N <= {bound}. */\n{turned}#else\n{plain}#endif\n")
}

/// The kernels' store coordinates `ci`, `cj` of C from their own `i` (small side) and `j`
/// (wide side).
pub(super) const STORE_COORDS: &str = "#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif";
