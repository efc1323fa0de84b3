//! The static description of a generated kernel: what `#[gemm_kernel]` emits and the
//! runtime (and anyone inspecting a kernel) reads.

use gemm_core::plan::Plan;
use gemm_core::{Backend, GemmIr, TargetSpec};
use std::sync::OnceLock;

/// Everything generated for one `#[gemm_kernel]` fn.
pub struct KernelSpec {
    /// The user's fn name.
    pub name: &'static str,
    /// Hash of the IR (names kernels, keys caches).
    pub ir_hash: u64,
    /// The IR as JSON.
    pub ir_json: &'static str,
    /// One entry per planned target.
    pub targets: &'static [TargetKernel],
    ir: OnceLock<GemmIr>,
}

/// The generated code and plan of one kernel for one target chip.
pub struct TargetKernel {
    /// Target name (a table of targets.toml).
    pub target: &'static str,
    /// Backend the source is for.
    pub backend: Backend,
    /// The generated source (CUDA C or OpenCL C), tile parameters left as macros.
    pub source: &'static str,
    /// The target's limits, as JSON.
    pub spec_json: &'static str,
    /// The plan (configs best first, pruning report), as JSON.
    pub plan_json: &'static str,
    parsed: OnceLock<(TargetSpec, Plan)>,
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

    /// The planned target whose code runs on `device` (the newest CUDA target the GPU
    /// supports; the OpenCL target of the device's type), as a launch picks it.
    pub fn target_for(&self, device: &crate::Device) -> crate::Result<&TargetKernel> {
        crate::launch::target_for(self, device.info())
    }

    /// The kernel for `target`, if it was planned.
    pub fn target(&self, target: &str) -> Option<&TargetKernel> {
        self.targets.iter().find(|t| t.target == target)
    }
}

impl TargetKernel {
    #[doc(hidden)]
    pub const fn __new(
        target: &'static str,
        backend: Backend,
        source: &'static str,
        spec_json: &'static str,
        plan_json: &'static str,
    ) -> Self {
        TargetKernel {
            target,
            backend,
            source,
            spec_json,
            plan_json,
            parsed: OnceLock::new(),
        }
    }

    fn parsed(&self) -> &(TargetSpec, Plan) {
        self.parsed.get_or_init(|| {
            let mut spec: TargetSpec =
                serde_json::from_str(self.spec_json).expect("target JSON written by #[gemm_kernel]");
            spec.name = self.target.to_string();
            (
                spec,
                serde_json::from_str(self.plan_json).expect("plan JSON written by #[gemm_kernel]"),
            )
        })
    }

    /// The target chip's limits.
    pub fn spec(&self) -> &TargetSpec {
        &self.parsed().0
    }

    /// The planner's result: configs best first, and what was pruned and why.
    pub fn plan(&self) -> &Plan {
        &self.parsed().1
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
