//! The static description of a generated kernel: what `#[gemm_kernel]` emits and the
//! runtime (and anyone inspecting a kernel) reads.

use crate::device::{Device, DeviceInfo};
use crate::error::{GemmError, Result};
use crate::prebuilt::Prebuilt;
use gemm_core::plan::Plan;
use gemm_core::table::Seed;
use gemm_core::{Backend, FamilyId, GemmIr, TargetSpec, TileConfig};
use std::sync::OnceLock;

/// Everything generated for one `#[gemm_kernel]` fn.
pub struct KernelSpec {
    /// The user's fn name.
    pub name: &'static str,
    /// Hash of the IR (names kernels, keys caches).
    pub ir_hash: u64,
    ir_json: &'static str,
    targets: &'static [TargetKernel],
    ir: OnceLock<GemmIr>,
}

/// The generated code and plan of one kernel for one target chip.
pub struct TargetKernel {
    /// Target name (a table of targets.toml).
    pub target: &'static str,
    /// Backend the sources are for.
    pub backend: Backend,
    /// One source per kernel family of the plan, by family name (`mma_sync`, `simt`, ..);
    /// tile parameters left as macros.
    sources: &'static [(&'static str, &'static str)],
    spec_json: &'static str,
    plan_json: &'static str,
    table_json: &'static str,
    prebuilt: &'static [Prebuilt],
    parsed: OnceLock<(TargetSpec, Plan, Vec<Seed>)>,
}

impl KernelSpec {
    #[doc(hidden)]
    pub const fn __new(
        name: &'static str,
        ir_hash: u64,
        ir_json: &'static str,
        targets: &'static [TargetKernel],
    ) -> Self {
        KernelSpec {
            name,
            ir_hash,
            ir_json,
            targets,
            ir: OnceLock::new(),
        }
    }

    /// The kernel's IR.
    pub fn ir(&self) -> &GemmIr {
        self.ir
            .get_or_init(|| serde_json::from_str(self.ir_json).expect("IR JSON written by #[gemm_kernel]"))
    }

    /// Every planned target.
    pub fn targets(&self) -> &'static [TargetKernel] {
        self.targets
    }

    /// The kernel for `target`, if it was planned.
    pub fn target(&self, target: &str) -> Option<&'static TargetKernel> {
        self.targets.iter().find(|t| t.target == target)
    }

    /// The planned target whose code runs on `device` (the newest CUDA target the GPU
    /// supports; the OpenCL target of the device's type), as a launch picks it.
    pub fn target_for(&self, device: &Device) -> Result<&'static TargetKernel> {
        self.target_for_info(device.info())
    }

    pub(crate) fn target_for_info(&self, info: &DeviceInfo) -> Result<&'static TargetKernel> {
        let targets = self.targets;
        let pick = match info.kind {
            Backend::Cuda => {
                let cc = info.compute_capability.unwrap_or(0);
                targets
                    .iter()
                    .filter(|t| t.backend == Backend::Cuda && t.spec().compute_capability.unwrap_or(u32::MAX) <= cc)
                    .max_by_key(|t| t.spec().compute_capability)
            }
            Backend::Opencl => {
                let cl = || targets.iter().filter(|t| t.backend == Backend::Opencl);
                cl().find(|t| t.spec().device_type == info.device_type)
                    .or_else(|| cl().next())
            }
            Backend::Host => None,
        };
        pick.ok_or_else(|| GemmError::NoTarget {
            kernel: self.name.into(),
            device: info.to_string(),
            hint: format!(
                "planned targets: [{}]; enable a matching target with a cargo feature of crossgemm (`sm80`/`sm90` for CUDA, `opencl` for OpenCL)",
                targets.iter().map(|t| t.target).collect::<Vec<_>>().join(", ")
            ),
        })
    }
}

impl TargetKernel {
    #[doc(hidden)]
    pub const fn __new(
        target: &'static str,
        backend: Backend,
        sources: &'static [(&'static str, &'static str)],
        spec_json: &'static str,
        plan_json: &'static str,
        table_json: &'static str,
        prebuilt: &'static [Prebuilt],
    ) -> Self {
        TargetKernel {
            target,
            backend,
            sources,
            spec_json,
            plan_json,
            table_json,
            prebuilt,
            parsed: OnceLock::new(),
        }
    }

    fn parsed(&self) -> &(TargetSpec, Plan, Vec<Seed>) {
        self.parsed.get_or_init(|| {
            // Every launch, tune and prepare reads the plan or the table before it
            // compiles, so this is where the CUBINs built with the kernel become findable.
            crate::prebuilt::register(self.prebuilt, self.sources);
            let mut spec: TargetSpec =
                serde_json::from_str(self.spec_json).expect("target JSON written by #[gemm_kernel]");
            spec.name = self.target.to_string();
            (
                spec,
                serde_json::from_str(self.plan_json).expect("plan JSON written by #[gemm_kernel]"),
                serde_json::from_str(self.table_json).expect("table JSON written by #[gemm_kernel]"),
            )
        })
    }

    /// The config table the macro built from tuning records for this kernel and target
    /// (see [`gemm_core::table`]): per device and shape bucket, a measured winner or a
    /// starting point.
    pub fn table(&self) -> &[Seed] {
        &self.parsed().2
    }

    /// The target chip's limits.
    pub fn spec(&self) -> &TargetSpec {
        &self.parsed().0
    }

    /// The target chip's limits as the JSON text the macro embedded (stored with tuning
    /// results, so a record says what it was tuned against).
    pub fn spec_json(&self) -> &'static str {
        self.spec_json
    }

    /// The planner's result: configs best first, and what was pruned and why.
    pub fn plan(&self) -> &Plan {
        &self.parsed().1
    }

    /// The CUBINs `#[gemm_kernel]` built ahead of time for this target's config table
    /// (crossgemm's `aot` feature; empty without it). A launch whose compile they match
    /// (same source, symbol and NVRTC options) loads one instead of running NVRTC.
    pub fn prebuilt(&self) -> &'static [Prebuilt] {
        self.prebuilt
    }

    /// The prebuilt CUBIN a launch of `config` at `problem` on this target's own chip
    /// would load, if the macro built one (the same source, symbol and NVRTC options).
    #[cfg(feature = "cuda")]
    pub fn prebuilt_for(
        &self,
        ir: &GemmIr,
        config: &TileConfig,
        problem: gemm_core::Problem,
    ) -> Option<&'static Prebuilt> {
        self.parsed();
        let arch = gemm_nvrtc::Arch {
            cc: self.spec().compute_capability?,
            suffix: config.compile_needs().arch_suffix,
        };
        let defines = config.owned_defines(ir, self.backend, problem);
        let source = self.source_of(config).ok()?;
        crate::prebuilt::find(source, &ir.symbol(), &gemm_nvrtc::options(arch, &defines))
    }

    /// The generated source of `family`, if the plan has that family.
    pub fn source(&self, family: FamilyId) -> Option<&'static str> {
        self.sources.iter().find(|(f, _)| *f == family.name()).map(|(_, s)| *s)
    }

    /// Every generated source, with its family's name, in the plan's order.
    pub fn sources(&self) -> &'static [(&'static str, &'static str)] {
        self.sources
    }

    /// The source a config compiles from: its family's. A config of a family this target
    /// was not planned with (a hand-edited cache entry, a record of another build) is an
    /// error, not a launch of the wrong kernel.
    pub fn source_of(&self, config: &TileConfig) -> Result<&'static str> {
        self.source(config.family_id()).ok_or_else(|| {
            GemmError::Unsupported(format!(
                "config {config} is of the `{}` kernel family, which target `{}` was not planned with (its families: {})",
                config.family_id(),
                self.target,
                self.sources.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", ")
            ))
        })
    }
}

impl std::fmt::Debug for KernelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelSpec")
            .field("name", &self.name)
            .field("ir_hash", &format_args!("{:016x}", self.ir_hash))
            .field("targets", &self.targets.iter().map(|t| t.target).collect::<Vec<_>>())
            .finish()
    }
}
