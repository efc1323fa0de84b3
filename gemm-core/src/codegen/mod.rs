//! What the kernel families' generators share: the C text of conversions, epilogues and
//! stores (`prelude`), the CUDA preamble and alignment flags ([`cuda`]), and the
//! diagnosis [`Variant`]s. Each family writes its own source from these, a pure function
//! of (IR, backend, variant); tile parameters stay preprocessor constants
//! ([`TileConfig::defines`]), so one source serves every configuration of a family and is
//! compiled per config at run time.
//!
//! Kernel ABI (both backends): `(int M, int N, int K, OUT* out, p0, p1, ...)` where
//! `p<i>` is signature parameter `i`: a pointer to its storage type for matrices and
//! vectors (f16/bf16 as 16-bit unsigned integers), a `float` for scalars.
//!
//! Besides the real kernel ([`Variant::Full`]) the generators write *diagnosis variants*
//! (`emit_variant`): the same kernel with one part of its work taken out, so that
//! timing them side by side says where the time of the full kernel goes. Every variant
//! keeps the kernel symbol, the ABI and the tile constants of the full source: the
//! runtime compiles it with the same `-D` definitions and launches it with the same
//! arguments and grid.
//!
//! [`TileConfig::defines`]: crate::family::TileConfig::defines

pub mod cuda;
pub(crate) mod prelude;

/// Source variants that the diagnosis tool asks for; `Full` is the real kernel.
///
/// Only [`Full`](Variant::Full) computes the GEMM as declared, and only
/// [`NoEpilogue`](Variant::NoEpilogue) computes any product at all (the plain `A·B`).
/// The others are for timing: their output is meaningless and must never be checked
/// against the reference nor cached as a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Variant {
    /// The kernel as tuned and launched.
    #[default]
    Full,
    /// Data movement only: every global→shared tile load (cp.async ring, commits, waits,
    /// barriers) and every shared→register fragment load (ldmatrix, scalar shared loads)
    /// of the full kernel, but no tensor-core `mma` and no FMA inner product. CUDA
    /// consumes each loaded fragment with an empty `asm volatile` (one per A fragment and
    /// one per B fragment per k-step); the SIMT and OpenCL kernels replace the
    /// MWI×NWI product with MWI+NWI adds into the accumulators. The epilogue and store
    /// stay. Measures the cost of feeding the math units; the output is not the GEMM's.
    LoadOnly,
    /// The full kernel except that the store writes the raw accumulator converted to the
    /// output type: no epilogue parameter is read and no activation is evaluated.
    /// Measures the epilogue's cost (by difference with `Full`); the output is the plain
    /// product `A·B`, not the declared GEMM unless its epilogue is `acc`.
    NoEpilogue,
    /// Math only ("MMA-only, no global loads"): every global load of A and B is removed,
    /// while the pipeline (commits, waits), barriers, shared→register fragment loads, the
    /// `mma`/FMA math, the epilogue and the store stay. Shared memory is never written
    /// and holds garbage. Measures the compute-bound floor of the tile; the output is
    /// not the GEMM's.
    ComputeOnly,
    /// The full kernel without writing its output: every load and every product runs,
    /// and the results reach the output only through a store that never runs (`if (K <
    /// 0)`, which the compiler cannot rule out), of the raw accumulator. The compiler may
    /// drop the epilogue's work that fed only the stores. Measures what writing the
    /// output costs (by difference with `Full`), which the other variants all keep:
    /// short-K shapes are bound by it (bench/results/h200-2026-12-03p1). Nothing is
    /// written.
    NoStore,
}

impl Variant {
    /// Every variant, `Full` first.
    pub const ALL: [Variant; 5] = [
        Variant::Full,
        Variant::LoadOnly,
        Variant::NoEpilogue,
        Variant::ComputeOnly,
        Variant::NoStore,
    ];

    /// The variant's name: `full`, `load_only`, `no_epilogue`, `compute_only` or
    /// `no_store`.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Full => "full",
            Variant::LoadOnly => "load_only",
            Variant::NoEpilogue => "no_epilogue",
            Variant::ComputeOnly => "compute_only",
            Variant::NoStore => "no_store",
        }
    }

    /// Whether the epilogue's parameters go unread (`NoEpilogue`, `NoStore`): a family
    /// that prefetches them need not.
    pub const fn skips_epilogue(self) -> bool {
        matches!(self, Variant::NoEpilogue | Variant::NoStore)
    }

    /// The variant named `name` (as [`Variant::name`] spells it).
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Whether the kernel's output is the declared GEMM (only `Full`).
    pub const fn is_full(self) -> bool {
        matches!(self, Variant::Full)
    }

    /// The first line of a non-`Full` source: `/* crossgemm diagnosis variant: <name> */`
    /// and a newline; empty for `Full`, whose source stays unmarked.
    pub fn marker(self) -> String {
        if self.is_full() {
            String::new()
        } else {
            format!("/* crossgemm diagnosis variant: {} */\n", self.name())
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Variant {
    type Err = String;

    fn from_str(s: &str) -> Result<Variant, String> {
        Variant::from_name(s).ok_or_else(|| {
            let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
            format!("unknown kernel variant `{s}` (expected one of: {})", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Variant;

    #[test]
    fn variant_names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::from_name(v.name()), Some(v));
            assert_eq!(v.to_string().parse::<Variant>(), Ok(v));
            assert_eq!(v.marker().is_empty(), v == Variant::Full);
        }
        assert_eq!(Variant::default(), Variant::Full);
        assert!("mma_only".parse::<Variant>().unwrap_err().contains("compute_only"));
    }
}
