//! `#[gemm_kernel]`: write a GEMM with a fused epilogue once, as a Rust fn; get planned,
//! generated CUDA and OpenCL kernels for every enabled chip plus a typed launcher.
//!
//! The expansion runs parse → check/lower → plan → codegen → expand; see `expand.rs`.
//! Use it through the `crossgemm` crate, which documents the DSL.

mod aot;
mod attr;
mod ctxt;
mod expand;
mod lower;
mod parse;
mod plan;

use proc_macro::TokenStream;

/// Turns a GEMM-with-epilogue fn into generated kernels and a typed launcher.
/// See the `crossgemm` crate documentation for the DSL.
#[proc_macro_attribute]
pub fn gemm_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::gemm_kernel(args.into(), item.into()).into()
}
