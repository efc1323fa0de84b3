//! Chip limits, read from `targets.toml`: what the planner prunes against.

use crate::ir::{AccMode, DType};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What drives a device and compiles its kernels: the one backend name of crossgemm, from
/// targets.toml (which code generator a chip takes) to the runtime's devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// CUDA: C compiled by NVRTC, launched through the driver API.
    Cuda,
    /// OpenCL: C 1.2 compiled by the OpenCL driver.
    Opencl,
    /// No accelerator: the host reference computes the result. No target has it (there
    /// is no code to generate); devices do.
    Host,
}

impl Backend {
    /// Lowercase name.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Cuda => "cuda",
            Backend::Opencl => "opencl",
            Backend::Host => "host",
        }
    }

    /// The API's own spelling ("CUDA", "OpenCL"), as driver errors name it.
    pub const fn api_name(self) -> &'static str {
        match self {
            Backend::Cuda => "CUDA",
            Backend::Opencl => "OpenCL",
            Backend::Host => "host",
        }
    }
}

/// Kind of OpenCL/CUDA device a target describes (used to match devices to targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceType {
    /// A GPU.
    Gpu,
    /// A CPU (e.g. PoCL).
    Cpu,
    /// Any other accelerator.
    Accelerator,
}

/// A matrix instruction a chip offers (targets.toml `instructions`); kernel families say
/// which one they compute with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Instr {
    /// Hopper warpgroup MMA (sm_90a).
    Wgmma,
    /// Warp-level tensor-core MMA (`mma.sync`, sm_80+).
    MmaSync,
    /// Scalar fused multiply-add: every target has it; the slowest path.
    Fma,
}

impl Instr {
    /// Name as written in targets.toml.
    pub const fn name(self) -> &'static str {
        match self {
            Instr::Wgmma => "wgmma",
            Instr::MmaSync => "mma_sync",
            Instr::Fma => "fma",
        }
    }
}

/// Operand types a matrix instruction accepts (`tf32` = f32 operands under `acc = tf32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InstrType {
    /// f16 operands.
    F16,
    /// bf16 operands.
    Bf16,
    /// f32 operands rounded to tf32.
    Tf32,
    /// f32 operands at full precision.
    F32,
}

impl InstrType {
    /// The instruction operand type a kernel needs.
    pub fn of(dtype: DType, acc: AccMode) -> InstrType {
        match (dtype, acc) {
            (DType::F16, _) => InstrType::F16,
            (DType::Bf16, _) => InstrType::Bf16,
            (DType::F32, AccMode::Tf32 | AccMode::Tf32x3) => InstrType::Tf32,
            (DType::F32, AccMode::F32) => InstrType::F32,
        }
    }
}

/// One matrix-instruction family a chip offers and the operand types it takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstrSupport {
    /// The family.
    pub name: Instr,
    /// Operand types it takes.
    pub dtypes: Vec<InstrType>,
}

/// Hardware limits of one chip (one `[name]` table of targets.toml).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// The table's key, e.g. `h200`; filled in after parsing.
    #[serde(default)]
    pub name: String,
    /// Human-readable chip name.
    pub description: String,
    /// Code generator / runtime backend.
    pub backend: Backend,
    /// The cargo feature of `crossgemm` that enables this target.
    pub feature: String,
    /// Device kind, used to match a runtime device to this table.
    pub device_type: DeviceType,
    /// CUDA compute capability (major*10 + minor), for CUDA targets.
    #[serde(default)]
    pub compute_capability: Option<u32>,
    /// Shared (local) memory a block may use without opting in, bytes.
    pub smem_per_block: u32,
    /// Shared memory a block may use after opting in, bytes.
    pub smem_per_block_optin: u32,
    /// 32-bit registers per thread at most.
    pub regs_per_thread: u32,
    /// 32-bit registers per multiprocessor.
    pub regs_per_sm: u32,
    /// Multiprocessors / compute units.
    pub sm_count: u32,
    /// Warp / wavefront / SIMD width in threads.
    pub warp_size: u32,
    /// Shared-memory banks.
    pub smem_banks: u32,
    /// Bytes per bank.
    pub bank_width: u32,
    /// Widest vector load, bytes.
    pub max_vector_bytes: u32,
    /// Threads per block at most.
    pub max_threads_per_block: u32,
    /// Last-level cache, bytes.
    pub l2_bytes: u64,
    /// Matrix instructions, best first; `fma` should close the list.
    pub instructions: Vec<InstrSupport>,
    /// Planned but never run by us (no such device to test on).
    #[serde(default)]
    pub untested: bool,
    /// Dense peak throughput by operand type (`f16`, `bf16`, `tf32`, `f32`), TFLOP/s, from
    /// the vendor's datasheet: the compute roof of `crossgemm diagnose`. Optional.
    #[serde(default)]
    pub peak_tflops: std::collections::BTreeMap<String, u32>,
    /// Memory bandwidth from the datasheet, GB/s: the memory roof of the tuner's cost
    /// estimate ([`crate::estimate`]). Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_gbps: Option<u32>,
    /// Thread block clusters that run at once, by the blocks in a cluster (`{ 4 = 30 }`),
    /// where fewer than `sm_count / blocks` do (one block a multiprocessor with most of
    /// its shared memory: `cuOccupancyMaxActiveClusters`, which the runtime caps a
    /// persistent grid by): the tuner's estimate counts such configs' waves over these.
    /// Optional; a size not listed counts `sm_count` blocks.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub resident_clusters: std::collections::BTreeMap<String, u32>,
    /// One dependent global load's round trip under load, nanoseconds: what a block that
    /// fetches a single tile ahead waits per k-step ([`crate::estimate::serial_load_us`]),
    /// which moves a default pick to its K-split twin. Optional; without it no pick moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_round_trip_ns: Option<u32>,
}

impl TargetSpec {
    /// Whether the chip offers `instr` for `ty` operands. Scalar FMA takes every type.
    pub fn offers(&self, instr: Instr, ty: InstrType) -> bool {
        instr == Instr::Fma
            || self
                .instructions
                .iter()
                .any(|s| s.name == instr && s.dtypes.contains(&ty))
    }

    /// Position of `instr` in the chip's list (best first); FMA, listed or not, comes last.
    pub fn instr_rank(&self, instr: Instr) -> usize {
        self.instructions
            .iter()
            .position(|s| s.name == instr)
            .unwrap_or(if instr == Instr::Fma {
                usize::MAX
            } else {
                usize::MAX - 1
            })
    }
}

/// Every target of a targets.toml, by name (sorted, so iteration is deterministic).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets(pub BTreeMap<String, TargetSpec>);

/// A targets.toml that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("invalid targets.toml: {0}")]
pub struct TargetsError(String);

impl Targets {
    /// Parses a targets.toml text.
    pub fn parse(text: &str) -> Result<Targets, TargetsError> {
        let raw: BTreeMap<String, TargetSpec> = toml::from_str(text).map_err(|e| TargetsError(e.to_string()))?;
        let mut map = BTreeMap::new();
        for (name, mut spec) in raw {
            spec.name = name.clone();
            if spec.backend == Backend::Host {
                return Err(TargetsError(format!(
                    "target `{name}` has backend `host`: a target needs a code generator (`cuda` or `opencl`)"
                )));
            }
            if spec.backend == Backend::Cuda && spec.compute_capability.is_none() {
                return Err(TargetsError(format!(
                    "target `{name}` is a cuda target without `compute_capability`"
                )));
            }
            // A key the estimate cannot read (`four = 30`) would be ignored without a word.
            for (blocks, &n) in &spec.resident_clusters {
                if !matches!(blocks.parse::<u32>(), Ok(2..=16)) || n == 0 {
                    return Err(TargetsError(format!(
                        "target `{name}`: resident_clusters `{blocks} = {n}` wants a cluster size of 2 to 16 blocks and at least one cluster"
                    )));
                }
            }
            map.insert(name, spec);
        }
        Ok(Targets(map))
    }
    /// Adds or replaces the targets of `other` (a user crate's own targets.toml).
    pub fn merge(&mut self, other: Targets) {
        self.0.extend(other.0);
    }
    /// Looks a target up by name.
    pub fn get(&self, name: &str) -> Option<&TargetSpec> {
        self.0.get(name)
    }
    /// All targets in name order.
    pub fn iter(&self) -> impl Iterator<Item = &TargetSpec> {
        self.0.values()
    }
}

/// The targets.toml shipped with crossgemm (the workspace root's).
pub const BUILTIN_TARGETS: &str = include_str!("../../targets.toml");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_targets_parse() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        for name in ["h200", "a100", "nvidia_opencl", "opencl_cpu"] {
            assert!(t.get(name).is_some(), "missing {name}");
        }
        let h200 = t.get("h200").unwrap();
        assert!(h200.offers(Instr::Wgmma, InstrType::Bf16));
        assert!(h200.offers(Instr::MmaSync, InstrType::Tf32));
        assert!(!h200.offers(Instr::MmaSync, InstrType::F32));
        assert!(h200.offers(Instr::Fma, InstrType::F32));
        assert!(h200.instr_rank(Instr::Wgmma) < h200.instr_rank(Instr::MmaSync));
        assert!(h200.instr_rank(Instr::MmaSync) < h200.instr_rank(Instr::Fma));
        let cpu = t.get("opencl_cpu").unwrap();
        assert!(!cpu.offers(Instr::MmaSync, InstrType::F16));
    }

    #[test]
    fn a_host_target_is_rejected() {
        let err = Targets::parse(
            "[x]\ndescription = \"x\"\nbackend = \"host\"\nfeature = \"opencl\"\ndevice_type = \"cpu\"\n\
             smem_per_block = 1\nsmem_per_block_optin = 1\nregs_per_thread = 1\nregs_per_sm = 1\nsm_count = 1\n\
             warp_size = 1\nsmem_banks = 1\nbank_width = 4\nmax_vector_bytes = 4\nmax_threads_per_block = 1\n\
             l2_bytes = 1\ninstructions = []\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("backend `host`"), "{err}");
    }

    #[test]
    fn resident_clusters_name_cluster_sizes() {
        let h200 = BUILTIN_TARGETS.split("\n[a100]").next().unwrap();
        for bad in ["four = 30", "1 = 30", "4 = 0"] {
            let text = h200.replace(
                "resident_clusters = { 4 = 30 }",
                &format!("resident_clusters = {{ {bad} }}"),
            );
            assert_ne!(text, h200, "the h200 table lists resident_clusters");
            let err = Targets::parse(&text).unwrap_err();
            assert!(err.to_string().contains("resident_clusters"), "{bad}: {err}");
        }
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let err = Targets::parse("[x]\nbogus = 1\n").unwrap_err();
        assert!(err.to_string().contains("bogus"), "{err}");
    }
}
