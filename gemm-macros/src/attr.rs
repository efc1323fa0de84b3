//! The arguments of `#[gemm_kernel(..)]`:
//! `acc = f32 | tf32`, `targets(name, ..)`, `tune(key = values, ..)`, `fma_ok`, `layout_ok`,
//! `records = "path"` (repeatable) or `records = none`, `crate = path`.

use crate::ctxt::Ctxt;
use gemm_core::plan::{check_tune_value, TuneSpace, TUNE_KEYS};
use gemm_core::AccMode;
use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, Token};

/// Parsed attribute arguments.
pub struct Attr {
    pub acc: AccMode,
    pub acc_span: Option<Span>,
    /// Requested targets with their spans; `None` = every enabled target.
    pub targets: Option<Vec<(String, Span)>>,
    pub tune: TuneSpace,
    pub tune_span: Option<Span>,
    /// `fma_ok`: the kernel accepts scalar FMA on chips with matrix instructions (no
    /// performance note).
    pub fma_ok: bool,
    /// `layout_ok`: the kernel keeps operand layouts that a target's fastest instruction
    /// cannot take (tf32 wgmma with an M-major A or N-major B), with no performance note.
    pub layout_ok: bool,
    /// Tuning-record files the kernel's config tables read besides the shipped ones
    /// (`records = "path"`, relative to the crate's Cargo.toml), with their spans.
    pub records: Vec<(String, Span)>,
    /// `records = none`: neither the shipped records nor `CROSSGEMM_RECORDS`' files, only
    /// the attribute's own (no table at all without them).
    pub no_records: Option<Span>,
    /// Path to the `crossgemm` facade (or any crate re-exporting its `__private` and its
    /// `__if_*` macros).
    pub krate: syn::Path,
}

/// The attribute's keywords.
mod kw {
    syn::custom_keyword!(acc);
    syn::custom_keyword!(targets);
    syn::custom_keyword!(tune);
    syn::custom_keyword!(fma_ok);
    syn::custom_keyword!(layout_ok);
    syn::custom_keyword!(records);
}

/// One argument of the attribute.
enum Item {
    /// `acc = value`
    Acc(kw::acc, Expr),
    /// `targets(..)`
    Targets(kw::targets, proc_macro2::TokenStream),
    /// `tune(..)`
    Tune(kw::tune, proc_macro2::TokenStream),
    /// `fma_ok`
    FmaOk,
    /// `layout_ok`
    LayoutOk,
    /// `records = "path"` or `records = none`
    Records(kw::records, Expr),
    /// `crate = path`
    Crate(Expr),
    /// Any other `key = value` or `key(..)`: reported by name.
    Unknown(Ident),
}

/// The `(..)` of a list item.
fn list(input: ParseStream) -> syn::Result<proc_macro2::TokenStream> {
    let content;
    syn::parenthesized!(content in input);
    content.parse()
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(Token![crate]) {
            input.parse::<Token![crate]>()?;
            input.parse::<Token![=]>()?;
            return Ok(Item::Crate(input.parse()?));
        }
        if input.peek(kw::acc) && input.peek2(Token![=]) {
            let k = input.parse()?;
            input.parse::<Token![=]>()?;
            return Ok(Item::Acc(k, input.parse()?));
        }
        if input.peek(kw::records) && input.peek2(Token![=]) {
            let k = input.parse()?;
            input.parse::<Token![=]>()?;
            return Ok(Item::Records(k, input.parse()?));
        }
        if input.peek(kw::targets) && input.peek2(syn::token::Paren) {
            return Ok(Item::Targets(input.parse()?, list(input)?));
        }
        if input.peek(kw::tune) && input.peek2(syn::token::Paren) {
            return Ok(Item::Tune(input.parse()?, list(input)?));
        }
        if input.peek(kw::fma_ok) && (input.peek2(Token![,]) || input.peek2(syn::parse::End)) {
            input.parse::<kw::fma_ok>()?;
            return Ok(Item::FmaOk);
        }
        if input.peek(kw::layout_ok) && (input.peek2(Token![,]) || input.peek2(syn::parse::End)) {
            input.parse::<kw::layout_ok>()?;
            return Ok(Item::LayoutOk);
        }
        let key: Ident = input.parse()?;
        if input.peek(syn::token::Paren) {
            list(input)?;
        } else {
            input.parse::<Token![=]>()?;
            input.parse::<Expr>()?;
        }
        Ok(Item::Unknown(key))
    }
}

const ATTR_HELP: &str =
    "expected `acc = f32 | tf32`, `targets(..)`, `tune(..)`, `fma_ok`, `layout_ok`, `records = \"path\" | none` or `crate = path`";

pub fn parse(cx: &Ctxt, args: proc_macro2::TokenStream) -> Attr {
    let mut attr = Attr {
        acc: AccMode::F32,
        acc_span: None,
        targets: None,
        tune: TuneSpace::default(),
        tune_span: None,
        fma_ok: false,
        layout_ok: false,
        records: Vec::new(),
        no_records: None,
        krate: syn::parse_quote!(::crossgemm),
    };
    let items = match syn::parse::Parser::parse2(Punctuated::<Item, Token![,]>::parse_terminated, args) {
        Ok(items) => items,
        Err(e) => {
            cx.push(syn::Error::new(
                e.span(),
                format!("malformed #[gemm_kernel] arguments: {ATTR_HELP}"),
            ));
            return attr;
        }
    };
    for item in items {
        match item {
            Item::Crate(e) => match e {
                Expr::Path(p) => attr.krate = p.path,
                other => cx.error_spanned_by(other, "`crate = ..` takes a path, e.g. `crate = ::crossgemm`"),
            },
            Item::Acc(key, value) => {
                attr.acc_span = Some(key.span);
                match &value {
                    Expr::Path(p) if p.path.is_ident("f32") => attr.acc = AccMode::F32,
                    Expr::Path(p) if p.path.is_ident("tf32") => attr.acc = AccMode::Tf32,
                    Expr::Path(p) if p.path.is_ident("tf32x3") => attr.acc = AccMode::Tf32x3,
                    _ => cx.error_spanned_by(
                        &value,
                        "`acc` must be `f32`, `tf32` or `tf32x3` (f32 accumulation; tf32 rounds f32 operands for tensor cores; tf32x3 takes three tf32 products of split operands, close to f32 accuracy)",
                    ),
                }
            }
            Item::Targets(key, body) => {
                match syn::parse::Parser::parse2(Punctuated::<Ident, Token![,]>::parse_terminated, body) {
                    Ok(names) if !names.is_empty() => {
                        attr.targets = Some(names.iter().map(|n| (n.to_string(), n.span())).collect())
                    }
                    Ok(_) => cx.error_spanned_by(key, "`targets(..)` needs at least one target name"),
                    Err(e) => cx.push(syn::Error::new(
                        e.span(),
                        "`targets(..)` takes target names from targets.toml, e.g. `targets(h200, opencl_cpu)`",
                    )),
                }
            }
            Item::FmaOk => attr.fma_ok = true,
            Item::LayoutOk => attr.layout_ok = true,
            Item::Records(key, value) => records(cx, key, &value, &mut attr),
            Item::Tune(key, body) => {
                attr.tune_span = Some(key.span);
                parse_tune(cx, body, &mut attr.tune);
            }
            Item::Unknown(key) => {
                cx.error_spanned_by(&key, format!("unknown #[gemm_kernel] argument `{key}`: {ATTR_HELP}"))
            }
        }
    }
    attr
}

/// `records = "path"` adds a file; `records = none` drops the shipped records and those
/// of `CROSSGEMM_RECORDS`, leaving only the files the attribute names (if any).
fn records(cx: &Ctxt, key: kw::records, value: &Expr, attr: &mut Attr) {
    match value {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => {
            if s.value().trim().is_empty() {
                cx.error_spanned_by(value, "`records = \"..\"` needs a file path");
            } else {
                attr.records.push((s.value(), s.span()));
            }
        }
        Expr::Path(p) if p.path.is_ident("none") => attr.no_records = Some(key.span),
        other => cx.error_spanned_by(
            other,
            "`records` takes a file path (`records = \"tuned/h100.json\"`, relative to Cargo.toml) or `none`",
        ),
    }
}

struct TuneItem {
    key: Ident,
    value: Expr,
}

impl Parse for TuneItem {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = input.parse()?;
        input.parse::<Token![=]>()?;
        Ok(TuneItem {
            key,
            value: input.parse()?,
        })
    }
}

fn parse_tune(cx: &Ctxt, body: proc_macro2::TokenStream, space: &mut TuneSpace) {
    let items = match syn::parse::Parser::parse2(Punctuated::<TuneItem, Token![,]>::parse_terminated, body) {
        Ok(items) => items,
        Err(e) => {
            cx.push(syn::Error::new(
                e.span(),
                "`tune(..)` takes `key = value` items, e.g. `tune(block_m = [64, 128], stages = 2..=4)`",
            ));
            return;
        }
    };
    for TuneItem { key, value } in items {
        let name = key.to_string();
        if !TUNE_KEYS.contains(&name.as_str()) {
            cx.error_spanned_by(
                &key,
                format!(
                    "unknown tune parameter `{name}`: expected one of {}",
                    TUNE_KEYS.join(", ")
                ),
            );
            continue;
        }
        if let Some(values) = tune_values(cx, &value) {
            let mut meaningful = true;
            for (v, at) in &values {
                if let Err(why) = check_tune_value(&name, *v) {
                    cx.error_spanned_by(at, why);
                    meaningful = false;
                }
            }
            if values.is_empty() {
                cx.error_spanned_by(&value, format!("`{name}` lists no values"));
            } else if meaningful {
                space.0.insert(name, values.into_iter().map(|(v, _)| v).collect());
            }
        }
    }
}

/// `8`, `[64, 128]` or `2..=4`: each value with the expression it came from (a range's
/// values share the range).
fn tune_values<'e>(cx: &Ctxt, e: &'e Expr) -> Option<Vec<(u32, &'e Expr)>> {
    let int = |e: &Expr| -> Option<u32> {
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => i.base10_parse::<u32>().ok().filter(|v| *v > 0),
                _ => None,
            },
            _ => None,
        }
    };
    let bad = |e: &Expr| cx.error_spanned_by(e, "tune values are positive integers: `8`, `[64, 128]` or `2..=4`");
    match e {
        Expr::Array(a) => {
            let mut v = Vec::new();
            for el in &a.elems {
                match int(el) {
                    Some(x) => v.push((x, el)),
                    None => {
                        bad(el);
                        return None;
                    }
                }
            }
            Some(v)
        }
        Expr::Range(r) => {
            let (Some(lo), Some(hi)) = (r.start.as_deref().and_then(int), r.end.as_deref().and_then(int)) else {
                bad(e);
                return None;
            };
            let hi = match r.limits {
                syn::RangeLimits::Closed(_) => hi,
                syn::RangeLimits::HalfOpen(_) => hi.saturating_sub(1),
            };
            Some((lo..=hi).map(|x| (x, e)).collect())
        }
        other => match int(other) {
            Some(x) => Some(vec![(x, other)]),
            None => {
                bad(other);
                None
            }
        },
    }
}
