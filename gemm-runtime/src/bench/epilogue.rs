//! The epilogues the measuring tools compare: the built-in kernels of the `crossgemm`
//! CLI, the vendor baselines' fused epilogues, and the rows of a benchmark report all
//! name them with this one type.

use std::fmt;
use std::str::FromStr;

/// What a measured GEMM applies after the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Epilogue {
    /// `x * w`: the plain product.
    None,
    /// `relu(x * w + bias)`.
    BiasRelu,
    /// `gelu(x * w + bias)`, tanh form (cuBLASLt's GELU, and crossgemm's `gelu`).
    BiasGelu,
}

impl Epilogue {
    /// Every epilogue, in report order.
    pub const ALL: [Epilogue; 3] = [Epilogue::None, Epilogue::BiasRelu, Epilogue::BiasGelu];

    /// Their names, in the same order: what reports, shape tables and the CLI spell.
    pub const NAMES: [&'static str; 3] = [
        Epilogue::None.name(),
        Epilogue::BiasRelu.name(),
        Epilogue::BiasGelu.name(),
    ];

    /// `none`, `bias_relu` or `bias_gelu`.
    pub const fn name(self) -> &'static str {
        match self {
            Epilogue::None => "none",
            Epilogue::BiasRelu => "bias_relu",
            Epilogue::BiasGelu => "bias_gelu",
        }
    }

    /// Whether the kernel takes a bias row.
    pub const fn has_bias(self) -> bool {
        !matches!(self, Epilogue::None)
    }

    /// What it computes, in the DSL's spelling.
    pub const fn formula(self) -> &'static str {
        match self {
            Epilogue::None => "x * w",
            Epilogue::BiasRelu => "relu(x * w + bias)",
            Epilogue::BiasGelu => "gelu(x * w + bias)",
        }
    }
}

impl fmt::Display for Epilogue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Epilogue {
    type Err = String;

    /// A name of [`Epilogue::NAMES`] (case-insensitive, `-` for `_` accepted).
    fn from_str(s: &str) -> Result<Epilogue, String> {
        let want = s.trim().to_ascii_lowercase().replace('-', "_");
        Epilogue::ALL.into_iter().find(|e| e.name() == want).ok_or_else(|| {
            format!(
                "unknown epilogue `{s}` (expected one of: {})",
                Epilogue::NAMES.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in Epilogue::ALL {
            assert_eq!(e.name().parse::<Epilogue>(), Ok(e));
            assert_eq!(e.to_string(), e.name());
        }
        assert_eq!("Bias-Relu".parse::<Epilogue>(), Ok(Epilogue::BiasRelu));
        assert!("relu".parse::<Epilogue>().unwrap_err().contains("bias_relu"));
        assert_eq!(Epilogue::NAMES, ["none", "bias_relu", "bias_gelu"]);
    }
}
