//! The pipeline and the generated items: parse → check/lower → plan → codegen → expand.
//!
//! For `fn k(a: Matrix<f16>, b: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16>`:
//! - `fn k(a: &impl MatrixArg<f16, RowMajor>, ..) -> Result<Matrix<f16>, GemmError>`:
//!   allocates the result on the operands' device and runs the kernel (each matrix
//!   parameter takes a `Matrix` or a `MatrixView`, each `Row`/`Col` one or its view);
//! - `fn k_into(a: &impl MatrixArg<f16, RowMajor>, .., out: &mut impl MatrixOut<f16, RowMajor>) -> Result<(), GemmError>`;
//! - for each matrix parameter `res` only the epilogue reads, of the output's type and
//!   layout: `fn k_into_res(a: .., .., res: &mut impl MatrixOut<f16, RowMajor>)`, the
//!   result written over `res` (a residual added in place);
//! - `mod k { SPEC, spec(), reference(..), run_with(config, ..), tune(..), prepare(device) }`.

use crate::ctxt::Ctxt;
use crate::plan::{plan_all, Planned, Warning};
use crate::{attr, lower, parse};
use gemm_core::{DType, GemmIr, Layout, ParamKind};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

pub fn gemm_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    let f: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return syn::Error::new(e.span(), "#[gemm_kernel] applies to a fn").to_compile_error(),
    };
    let cx = Ctxt::new();
    let attr = attr::parse(&cx, args);
    let sig = parse::signature(&cx, &f);
    let ir = lower::lower(&cx, &f, &sig, &attr);
    let (targets, user_toml) = crate::plan::load_targets(&cx);
    let (records, record_files) = crate::plan::load_records(&cx, &attr);
    let mut warnings = Vec::new();
    let planned = match &ir {
        Some(ir) if !cx.has_errors() => plan_all(&cx, ir, &attr, &targets, &records, &mut warnings),
        _ => Vec::new(),
    };
    let cubins = match &ir {
        Some(ir) if !cx.has_errors() => crate::aot::cubins(&cx, ir, &planned),
        _ => Vec::new(),
    };
    if let Err(e) = cx.check() {
        // The errors, and the wrappers' signatures with bodies that never run: callers of
        // a kernel with a mistake in it get the mistake, not "cannot find function".
        let mut out = e.to_compile_error();
        out.extend(error_stubs(&f, &attr.krate, &sig));
        return out;
    }
    let ir = ir.expect("no errors means the IR was lowered");
    let tracked: Vec<&std::path::Path> = user_toml.iter().chain(&record_files).map(|p| p.as_path()).collect();
    generate(&f, &attr.krate, &ir, &planned, &cubins, &warnings, &tracked)
}

/// `k` and `k_into` (and `k::reference`) with the signatures the macro would have
/// generated, as far as the user's signature could be read, and `unimplemented!` bodies.
fn error_stubs(f: &syn::ItemFn, krate: &syn::Path, sig: &parse::Signature) -> TokenStream {
    let vis = &f.vis;
    let name = &f.sig.ident;
    let name_into = format_ident!("{}_into", name);
    // In signature order: read parameters typed, rejected ones take anything.
    let typed: Vec<(&syn::Ident, TokenStream)> = f
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => Some(&pi.ident),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .map(|ident| match sig.params.iter().find(|p| p.ident == *ident) {
            Some(p) => {
                let t = param_ty(krate, p.kind);
                (ident, quote!(#ident: #t))
            }
            None => (ident, quote!(#ident: impl ::core::marker::Sized)),
        })
        .collect();
    let params: Vec<&TokenStream> = typed.iter().map(|(_, t)| t).collect();
    let (out_ty, out_param, out_elem) = match sig.out {
        Some((d, l)) => {
            let (t, lt) = (elem_ty(krate, d), layout_ty(krate, l));
            (quote!(#krate::Matrix<#t, #lt>), out_param_ty(krate, d, l), quote!(#t))
        }
        None => (quote!(()), quote!(&mut ()), quote!(())),
    };
    let msg = format!("`{name}` did not compile: see the errors reported at its definition");
    // `k_into_res` for every matrix parameter that could hold the result (which of them
    // the product reads is unknown here: a call to any stays free of a second error).
    let in_place = sig.params.iter().filter_map(|p| {
        let (d, l) = sig.out?;
        (p.kind == ParamKind::Matrix { dtype: d, layout: l }).then(|| {
            let fname = format_ident!("{}_into_{}", name, p.ident);
            let target = &p.ident;
            let others = typed.iter().filter(|(i, _)| *i != target).map(|(_, t)| t);
            quote! {
                #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
                #vis fn #fname(#(#others,)* #target: #out_param) -> ::core::result::Result<(), #krate::GemmError> {
                    ::core::unimplemented!(#msg)
                }
            }
        })
    });
    quote! {
        #(#in_place)*
        #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
        #vis fn #name(#(#params),*) -> ::core::result::Result<#out_ty, #krate::GemmError> {
            ::core::unimplemented!(#msg)
        }
        #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
        #vis fn #name_into(#(#params,)* out: #out_param) -> ::core::result::Result<(), #krate::GemmError> {
            ::core::unimplemented!(#msg)
        }
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
            pub fn reference(#(#params),*) -> ::core::result::Result<::std::vec::Vec<#out_elem>, #krate::GemmError> {
                ::core::unimplemented!(#msg)
            }
        }
    }
}

/// The wrapper's type for a parameter: a reference to its buffer or a view of one
/// (`crossgemm::MatrixArg` and its kin), or `f32`.
fn param_ty(krate: &syn::Path, kind: ParamKind) -> TokenStream {
    match kind {
        ParamKind::Matrix { dtype, layout } => {
            let (t, l) = (elem_ty(krate, dtype), layout_ty(krate, layout));
            quote!(&impl #krate::MatrixArg<#t, #l>)
        }
        ParamKind::Row { dtype } => {
            let t = elem_ty(krate, dtype);
            quote!(&impl #krate::RowArg<#t>)
        }
        ParamKind::Col { dtype } => {
            let t = elem_ty(krate, dtype);
            quote!(&impl #krate::ColArg<#t>)
        }
        ParamKind::Scalar => quote!(f32),
    }
}

/// The `_into` form's output type: an owned matrix or a writable view.
fn out_param_ty(krate: &syn::Path, dtype: DType, layout: Layout) -> TokenStream {
    let (t, l) = (elem_ty(krate, dtype), layout_ty(krate, layout));
    quote!(&mut impl #krate::MatrixOut<#t, #l>)
}

fn elem_ty(krate: &syn::Path, d: DType) -> TokenStream {
    match d {
        DType::F16 => quote!(#krate::f16),
        DType::Bf16 => quote!(#krate::bf16),
        DType::F32 => quote!(f32),
    }
}

fn layout_ty(krate: &syn::Path, l: Layout) -> TokenStream {
    match l {
        Layout::RowMajor => quote!(#krate::RowMajor),
        Layout::ColMajor => quote!(#krate::ColMajor),
    }
}

fn backend_tokens(krate: &syn::Path, b: gemm_core::Backend) -> TokenStream {
    match b {
        gemm_core::Backend::Cuda => quote!(#krate::__private::Backend::Cuda),
        gemm_core::Backend::Opencl => quote!(#krate::__private::Backend::Opencl),
        gemm_core::Backend::Host => quote!(#krate::__private::Backend::Host),
    }
}

fn generate(
    f: &syn::ItemFn,
    krate: &syn::Path,
    ir: &GemmIr,
    planned: &[Planned],
    cubins: &[Vec<crate::aot::Cubin>],
    warnings: &[Warning],
    tracked: &[&std::path::Path],
) -> TokenStream {
    let vis = &f.vis;
    let name = &f.sig.ident;
    let name_into = format_ident!("{}_into", name);
    let docs: Vec<_> = f.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let pnames: Vec<syn::Ident> = ir
        .params
        .iter()
        .map(|p| syn::Ident::new(&p.name, Span::call_site()))
        .collect();
    let ptypes: Vec<TokenStream> = ir.params.iter().map(|p| param_ty(krate, p.kind)).collect();
    let args: Vec<TokenStream> = ir
        .params
        .iter()
        .zip(&pnames)
        .map(|(p, n)| match p.kind {
            ParamKind::Scalar => quote!(#krate::__private::Arg::Scalar(#n)),
            _ => quote!(#n.__arg()),
        })
        .collect();
    let out_t = elem_ty(krate, ir.out_dtype);
    let out_l = layout_ty(krate, ir.out_layout);
    let out_ty = quote!(#krate::Matrix<#out_t, #out_l>);
    let out_param = out_param_ty(krate, ir.out_dtype, ir.out_layout);
    let a_name = &pnames[ir.a as usize];

    let ir_json = serde_json::to_string(ir).expect("IR serialises");
    let ir_hash = ir.hash();
    let kname = ir.name.as_str();
    let symbol = ir.symbol();
    let targets = planned.iter().zip(cubins).map(|(p, built)| {
        let t = p.spec.name.as_str();
        let backend = backend_tokens(krate, p.spec.backend);
        let sources = p.sources.iter().map(|(family, source)| {
            let family = family.name();
            quote!((#family, #source))
        });
        let spec_json = serde_json::to_string(&p.spec).expect("spec serialises");
        let plan_json = serde_json::to_string(&p.plan).expect("plan serialises");
        let table_json = serde_json::to_string(&p.table).expect("table serialises");
        let prebuilt = built.iter().map(|c| {
            let family = c.family.name();
            let options = &c.options;
            let cubin = proc_macro2::Literal::byte_string(&c.cubin);
            let log = &c.log;
            quote!(#krate::__private::Prebuilt::__new(#family, #symbol, &[#(#options),*], #cubin, #log))
        });
        quote!(#krate::__private::TargetKernel::__new(#t, #backend, &[#(#sources),*], #spec_json, #plan_json, #table_json, &[#(#prebuilt),*]))
    });
    let ntargets = planned.len();
    let warn_items = warnings.iter().enumerate().map(|(i, w)| {
        let wname = format!("{}_warning_{i}", ir.name);
        let warning = proc_macro_warning::FormattedWarning::new_deprecated(wname, w.text.clone(), w.span);
        // Only where crossgemm itself emits the target (its feature is on there).
        let gate = format_ident!("__if_{}", w.feature);
        quote_spanned!(w.span=> #krate::#gate! { const _: () = { #warning }; })
    });
    // The user's targets.toml and records files: a change to one rebuilds the kernel. So
    // does a change of the build-time records list: rustc records the variables that
    // `option_env!` reads in the crate's dep-info, and cargo rebuilds when one changes.
    let records_env = crate::plan::RECORDS_ENV;
    let track = tracked
        .iter()
        .map(|p| {
            let p = p.to_string_lossy().into_owned();
            quote!(
                const _: &[u8] = include_bytes!(#p);
            )
        })
        .chain(std::iter::once(quote!(
            const _: ::core::option::Option<&str> = ::core::option_env!(#records_env);
        )));
    let ref_doc = format!("The host reference of `{kname}`: downloads the operands and computes the result on the CPU (f64 accumulation), in the output's layout.");
    let spec_doc =
        format!("What `#[gemm_kernel]` generated for `{kname}`: IR, sources, plans and pruning reports per target.");
    let into_doc = format!(
        "Runs `{kname}` into a caller's `out` (M×N: a matrix or a writable view, of which only the view's elements are written). Operands (matrices or views of them) must all live on `out`'s device."
    );

    // `k_into_res` for each matrix the epilogue alone reads that could hold the result
    // (its type and layout): the result written over it, element for element.
    let in_place = ir.params.iter().enumerate().filter_map(|(i, p)| {
        let eligible = i != ir.a as usize
            && i != ir.b as usize
            && p.kind
                == ParamKind::Matrix {
                    dtype: ir.out_dtype,
                    layout: ir.out_layout,
                };
        if !eligible {
            return None;
        }
        let fname = format_ident!("{}_into_{}", name, p.name);
        let target = &pnames[i];
        let others = pnames.iter().zip(&ptypes).enumerate().filter(|&(j, _)| j != i).map(|(_, (n, t))| quote!(#n: #t));
        let call_args = args.iter().enumerate().map(|(j, a)| if j == i { quote!(__out.__operand()) } else { a.clone() });
        let doc = format!(
            "Runs `{kname}` writing the result over `{}` (in place: each element of `{}` is read by the kernel before the same element of the result is written over it, and no other). Takes what `{kname}_into` takes but `{}`, which is the output here.",
            p.name, p.name, p.name
        );
        Some(quote! {
            #[doc = #doc]
            // A program calls it or not, as it calls `k` or `k_into`.
            #[allow(dead_code, clippy::too_many_arguments)]
            #vis fn #fname(#(#others,)* #target: #out_param) -> ::core::result::Result<(), #krate::GemmError> {
                let __out = #target.__out();
                #krate::__private::launch(&#name::SPEC, &[#(#call_args),*], __out)
            }
        })
    });

    quote! {
        #(#in_place)*

        #(#docs)*
        #vis fn #name(#(#pnames: #ptypes),*) -> ::core::result::Result<#out_ty, #krate::GemmError> {
            let (m, n, _k) = #krate::__private::dims(&#name::SPEC, &[#(#args),*])?;
            let mut out = <#out_ty>::zeros(#a_name.__device(), m, n)?;
            #name_into(#(#pnames,)* &mut out)?;
            ::core::result::Result::Ok(out)
        }

        #[doc = #into_doc]
        #vis fn #name_into(#(#pnames: #ptypes,)* out: #out_param) -> ::core::result::Result<(), #krate::GemmError> {
            #krate::__private::launch(&#name::SPEC, &[#(#args),*], out.__out())
        }

        #[doc = #spec_doc]
        #[allow(non_snake_case, dead_code, clippy::too_many_arguments)]
        #vis mod #name {
            /// The generated kernel description.
            static TARGETS: [#krate::__private::TargetKernel; #ntargets] = [#(#targets),*];
            pub static SPEC: #krate::KernelSpec = #krate::KernelSpec::__new(#kname, #ir_hash, #ir_json, &TARGETS);
            /// The generated kernel description.
            pub fn spec() -> &'static #krate::KernelSpec {
                &SPEC
            }
            #[doc = #ref_doc]
            pub fn reference(#(#pnames: #ptypes),*) -> ::core::result::Result<::std::vec::Vec<#out_t>, #krate::GemmError> {
                #krate::__private::reference::<#out_t>(&SPEC, &[#(#args),*])
            }
            /// Runs the kernel with an explicit tile configuration (one of a target's
            /// `plan().configs`, or any other that fits the device).
            pub fn run_with(config: &#krate::__private::TileConfig, #(#pnames: #ptypes,)* out: #out_param) -> ::core::result::Result<(), #krate::GemmError> {
                #krate::__private::launch_with(&SPEC, config, &[#(#args),*], out.__out())
            }
            /// Tunes the kernel for these operands' device and shape (unless the tuning
            /// cache already has a winner for them), stores the winner, and reports the
            /// candidates, failures and times. `out` receives nothing; later launches of
            /// the same shape bucket use the winner. See `CROSSGEMM_TUNE` for what plain
            /// calls do on their own.
            pub fn tune(#(#pnames: #ptypes,)* out: #out_param) -> ::core::result::Result<#krate::TuneReport, #krate::GemmError> {
                #krate::__private::tune(&SPEC, &[#(#args),*], out.__out())
            }
            /// Compiles the configs this kernel's build-time config table gives `device`
            /// (its winners there, else what its first calls would start from), in
            /// parallel, so that first calls skip the JIT: for programs that know at
            /// start-up what they will call.
            /// Also the runtime kernels its launches run: the row copies a call with misaligned
            /// operands stages them by, or an `acc = tf32x3` kernel's split.
            /// Tunes nothing. See `crossgemm::tune::prepare`.
            pub fn prepare(device: &#krate::Device) -> ::core::result::Result<#krate::PrepareReport, #krate::GemmError> {
                #krate::__private::prepare(&SPEC, device)
            }
            #(#warn_items)*
            #(#track)*
        }
    }
}
