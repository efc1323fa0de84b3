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
pub const TUNE_KEYS: [&str; 11] = [
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
];

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
