//! The user's fn signature → DSL parameters and output type, each error at its token.

use crate::ctxt::Ctxt;
use gemm_core::{DType, Layout, ParamKind};
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Type};

/// A checked parameter.
pub struct DslParam {
    pub ident: Ident,
    pub kind: ParamKind,
    pub ty: Type,
}

/// The checked signature.
pub struct Signature {
    pub params: Vec<DslParam>,
    /// Output element type and layout.
    pub out: Option<(DType, Layout)>,
    /// Parameters whose type was rejected (the error is already reported).
    pub rejected: Vec<Ident>,
}

const TYPE_HELP: &str = "expected `Matrix<T>`, `Matrix<T, RowMajor>`, `Matrix<T, ColMajor>`, `Row<T>`, `Col<T>` or `f32`, with T one of f16, bf16, f32";

pub fn signature(cx: &Ctxt, f: &syn::ItemFn) -> Signature {
    let sig = &f.sig;
    if let Some(t) = &sig.asyncness {
        cx.error_spanned_by(t, "a #[gemm_kernel] fn cannot be `async`");
    }
    if let Some(t) = &sig.unsafety {
        cx.error_spanned_by(t, "a #[gemm_kernel] fn cannot be `unsafe`");
    }
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "a #[gemm_kernel] fn cannot be generic: name the element types (f16, bf16, f32)",
        );
    }
    let mut params = Vec::new();
    let mut rejected = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => cx.error_spanned_by(r, "a #[gemm_kernel] fn cannot take `self`"),
            FnArg::Typed(pt) => {
                let Pat::Ident(pi) = &*pt.pat else {
                    cx.error_spanned_by(&pt.pat, "parameters must be plain identifiers");
                    continue;
                };
                match param_type(cx, &pt.ty) {
                    Some(kind) => params.push(DslParam {
                        ident: pi.ident.clone(),
                        kind,
                        ty: (*pt.ty).clone(),
                    }),
                    None => rejected.push(pi.ident.clone()),
                }
            }
        }
    }
    let out = match &sig.output {
        ReturnType::Default => {
            cx.error_spanned_by(
                &sig.ident,
                "a #[gemm_kernel] fn must return `Matrix<T>` (or `Matrix<T, ColMajor>`)",
            );
            None
        }
        ReturnType::Type(_, ty) => match param_type(cx, ty) {
            Some(ParamKind::Matrix { dtype, layout }) => Some((dtype, layout)),
            Some(_) => {
                cx.error_spanned_by(ty, "the result must be a `Matrix<T>` (or `Matrix<T, ColMajor>`)");
                None
            }
            None => None,
        },
    };
    Signature { params, out, rejected }
}

fn param_type(cx: &Ctxt, ty: &Type) -> Option<ParamKind> {
    let Type::Path(tp) = ty else {
        cx.error_spanned_by(ty, format!("unsupported parameter type: {TYPE_HELP}"));
        return None;
    };
    let seg = tp.path.segments.last()?;
    let name = seg.ident.to_string();
    let generics: Vec<&Type> = match &seg.arguments {
        PathArguments::None => Vec::new(),
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        PathArguments::Parenthesized(_) => {
            cx.error_spanned_by(ty, format!("unsupported parameter type: {TYPE_HELP}"));
            return None;
        }
    };
    match (name.as_str(), generics.as_slice()) {
        ("f32", []) => Some(ParamKind::Scalar),
        ("f16" | "bf16" | "f64" | "i32" | "u32" | "i64", []) => {
            cx.error_spanned_by(
                ty,
                format!("scalar parameters must be `f32` (the epilogue is evaluated in f32), found `{name}`"),
            );
            None
        }
        ("Matrix", [t]) => dtype(cx, t).map(|dtype| ParamKind::Matrix {
            dtype,
            layout: Layout::RowMajor,
        }),
        ("Matrix", [t, l]) => {
            let d = dtype(cx, t);
            let l = layout(cx, l);
            Some(ParamKind::Matrix { dtype: d?, layout: l? })
        }
        ("Row", [t]) => dtype(cx, t).map(|dtype| ParamKind::Row { dtype }),
        ("Col", [t]) => dtype(cx, t).map(|dtype| ParamKind::Col { dtype }),
        ("Matrix" | "Row" | "Col", _) => {
            cx.error_spanned_by(ty, format!("wrong number of type arguments for `{name}`: {TYPE_HELP}"));
            None
        }
        _ => {
            cx.error_spanned_by(ty, format!("unsupported parameter type `{name}`: {TYPE_HELP}"));
            None
        }
    }
}

fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => tp.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn dtype(cx: &Ctxt, ty: &Type) -> Option<DType> {
    let found = last_ident(ty);
    match found.as_deref().and_then(DType::from_name) {
        Some(d) => Some(d),
        None => {
            cx.error_spanned_by(
                ty,
                format!(
                    "unsupported element type `{}`: expected f16, bf16 or f32",
                    found.unwrap_or_else(|| quote::quote!(#ty).to_string())
                ),
            );
            None
        }
    }
}

fn layout(cx: &Ctxt, ty: &Type) -> Option<Layout> {
    match last_ident(ty).as_deref() {
        Some("RowMajor") => Some(Layout::RowMajor),
        Some("ColMajor") => Some(Layout::ColMajor),
        _ => {
            cx.error_spanned_by(ty, "unsupported layout: expected `RowMajor` or `ColMajor`");
            None
        }
    }
}
