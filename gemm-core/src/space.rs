//! The planning vocabulary every family shares: the user's `tune(..)` restrictions and
//! the entries of a pruning report.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Above this share of the opt-in shared memory a config tends to lose occupancy; it is
/// kept but ranked lower.
pub const SMEM_SOFT_SHARE: f64 = 0.70;

/// User restrictions from `tune(..)`: per parameter, the values allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneSpace(pub BTreeMap<String, Vec<u32>>);

/// Parameter names `tune(..)` accepts (every family reads the ones it has).
pub const TUNE_KEYS: [&str; 14] = [
    "block_m",
    "block_n",
    "block_k",
    "warps_m",
    "warps_n",
    "stages",
    "group_m",
    "vector",
    "ksplit",
    "streamk",
    "cluster_n",
    "tma_store",
    "turned",
    "reuse",
];

/// The largest split of K across blocks a kernel source takes (`tune(ksplit = ..)`).
pub const MAX_KSPLIT: u32 = 16;

/// `Err(why)` when `value` means nothing for `key`: most keys take any positive integer
/// (a value no family can build is pruned by its rules, which the pruning report
/// names), but `streamk`, `tma_store`, `turned`, `reuse` and `cluster_n` are switches that ignore other values, and no
/// source splits K more than [`MAX_KSPLIT`] ways. Without this check `cluster_n = 3`
/// would plan nothing extra and say nothing.
pub fn check_tune_value(key: &str, value: u32) -> Result<(), String> {
    match key {
        "streamk" if value != 1 => Err(format!(
            "`streamk` is a switch: `streamk = 1` adds stream-K variants (not {value})"
        )),
        "turned" if value != 1 => Err(format!(
            "`turned` is a switch: `turned = 1` adds the wgmma family's turned-around tiles (`Cᵀ = Bᵀ·Aᵀ`, for products with few rows) (not {value})"
        )),
        "reuse" if value != 1 => Err(format!(
            "`reuse` is a switch: `reuse = 1` adds the wgmma family's tiles that keep operand tiles in their ring across work items (not {value})"
        )),
        "tma_store" if value != 1 => Err(format!(
            "`tma_store` is a switch: `tma_store = 1` adds the wgmma family's TMA-store epilogue variants (not {value})"
        )),
        "cluster_n" if !matches!(value, 1 | 2) => Err(format!(
            "`cluster_n` takes 1 (no cluster along N) or 2 (2x2 clusters where the target has wgmma), not {value}"
        )),
        "ksplit" if value > MAX_KSPLIT => Err(format!("`ksplit` splits K at most {MAX_KSPLIT} ways, not {value}")),
        _ => Ok(()),
    }
}

impl TuneSpace {
    /// The values allowed for `key`: the user's, else the family's `default`.
    pub fn pick(&self, key: &str, default: &[u32]) -> Vec<u32> {
        self.0.get(key).cloned().unwrap_or_else(|| default.to_vec())
    }
}

/// What one rule pruned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pruned {
    /// Rule name (e.g. `smem`).
    pub rule: String,
    /// How many candidates it removed (the first failing rule is charged).
    pub count: usize,
    /// The reason for the first one it removed, with numbers.
    pub example: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_and_splits_refuse_values_that_mean_nothing() {
        assert!(check_tune_value("streamk", 1).is_ok());
        assert!(check_tune_value("streamk", 5).unwrap_err().contains("switch"));
        assert!(check_tune_value("tma_store", 1).is_ok());
        assert!(check_tune_value("tma_store", 0).unwrap_err().contains("switch"));
        assert!(check_tune_value("turned", 1).is_ok());
        assert!(check_tune_value("turned", 0).unwrap_err().contains("switch"));
        assert!(check_tune_value("reuse", 1).is_ok());
        assert!(check_tune_value("reuse", 2).unwrap_err().contains("switch"));
        assert!(check_tune_value("cluster_n", 2).is_ok());
        assert!(check_tune_value("cluster_n", 3).unwrap_err().contains("not 3"));
        assert!(check_tune_value("ksplit", MAX_KSPLIT).is_ok());
        assert!(check_tune_value("ksplit", MAX_KSPLIT + 1).is_err());
        // Sizes go to the families' rules, which report what they prune.
        assert!(check_tune_value("block_m", 4096).is_ok());
    }
}
