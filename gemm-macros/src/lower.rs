//! Checks the fn body and lowers it to [`GemmIr`]: the one place that sees both syn and
//! the IR. Every violation is reported at its token; lowering continues past errors so
//! that one build shows them all.

use crate::attr::Attr;
use crate::ctxt::Ctxt;
use crate::parse::{DslParam, Signature};
use gemm_core::{AccMode, DType, EpOp, Func, GemmIr, Param, ParamKind};
use quote::ToTokens;
use syn::{BinOp, Expr, Lit, Stmt, UnOp};

/// What an expression evaluates to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    /// One f32 for the whole kernel (scalar parameter, literal).
    Scalar,
    /// One value per output element.
    Elementwise,
}

/// The matrix product found in the body.
struct Product {
    a: u32,
    a_t: bool,
    b: u32,
    b_t: bool,
}

struct Lowerer<'a> {
    cx: &'a Ctxt,
    params: &'a [DslParam],
    used: Vec<bool>,
    product: Option<Product>,
    ops: Vec<EpOp>,
    /// A `*` that was not a product but had a Matrix operand: a hint for "no product".
    near_miss: Option<proc_macro2::TokenStream>,
    /// Parameters whose type was rejected (already reported): uses are not errors again.
    rejected: &'a [syn::Ident],
    /// The body uses a rejected parameter, so "no matrix product" may be a consequence.
    used_rejected: bool,
}

const FUNC_HELP: &str = "relu, gelu, gelu_erf, silu, sigmoid, tanh, exp, abs, min, max, clamp, leaky_relu";

pub fn lower(cx: &Ctxt, f: &syn::ItemFn, sig: &Signature, attr: &Attr) -> Option<GemmIr> {
    let body = match f.block.stmts.as_slice() {
        [Stmt::Expr(e, None)] => e,
        stmts => {
            const MSG: &str = "the body of a #[gemm_kernel] fn must be a single expression, e.g. `relu(x * w + bias)`";
            // Point at the first statement that is not the tail expression.
            match stmts
                .iter()
                .find(|s| !matches!(s, Stmt::Expr(_, None)))
                .or(stmts.first())
            {
                Some(Stmt::Local(s)) => {
                    cx.error_spanned_by(s, format!("{MSG}: `let` is not allowed, write the value inline"))
                }
                Some(Stmt::Expr(_, Some(semi))) if stmts.len() == 1 => {
                    cx.error_spanned_by(semi, format!("{MSG}: remove the `;`"))
                }
                Some(s) => cx.error_spanned_by(s, MSG),
                None => cx.error_spanned_by(&f.block, MSG),
            }
            return None;
        }
    };
    let mut l = Lowerer {
        cx,
        params: &sig.params,
        used: vec![false; sig.params.len()],
        product: None,
        ops: Vec::new(),
        near_miss: None,
        rejected: &sig.rejected,
        used_rejected: false,
    };
    let shape = l.expr(body);
    let Some(p) = l.product.take() else {
        if l.used_rejected {
            // A parameter with a rejected type may be a product operand: already reported.
            return None;
        }
        let mut msg = "no matrix product: the body must contain exactly one `a * b` of two `Matrix` parameters (either may be `.t()`)".to_string();
        if l.near_miss.is_some() {
            msg.push_str("; `*` is the matrix product only between two bare Matrix parameters, so write e.g. `alpha * (x * w)` rather than `alpha * x * w`");
        }
        cx.error_spanned_by(body, msg);
        return None;
    };
    if shape == Some(Shape::Scalar) {
        cx.error_spanned_by(body, "the result must depend on the matrix product");
    }
    for (i, used) in l.used.iter().enumerate() {
        if !used {
            cx.error_spanned_by(
                &sig.params[i].ident,
                format!("parameter `{}` is not used by the body", sig.params[i].ident),
            );
        }
    }
    let dtype_of = |i: u32| match sig.params[i as usize].kind {
        ParamKind::Matrix { dtype, .. } => dtype,
        _ => unreachable!("product operands are matrices"),
    };
    let (da, db) = (dtype_of(p.a), dtype_of(p.b));
    if da != db {
        cx.error_spanned_by(
            &sig.params[p.b as usize].ty,
            format!(
                "mismatched element types in the matrix product: `{}` is {} but `{}` is {}; both factors must have the same type",
                sig.params[p.a as usize].ident, da.name(), sig.params[p.b as usize].ident, db.name()
            ),
        );
    }
    if attr.acc != AccMode::F32 && da != DType::F32 {
        let acc = attr.acc.name();
        cx.error_at(attr.acc_span.expect("acc was given"), format!("`acc = {acc}` applies to f32 operands; this product is {}, which always accumulates in f32: remove `acc = {acc}`", da.name()));
    }
    let (out_dtype, out_layout) = sig.out?;
    let ir = GemmIr {
        name: f.sig.ident.to_string(),
        params: sig
            .params
            .iter()
            .map(|p| Param {
                name: p.ident.to_string(),
                kind: p.kind,
            })
            .collect(),
        a: p.a,
        a_t: p.a_t,
        b: p.b,
        b_t: p.b_t,
        ab_dtype: da,
        acc: attr.acc,
        out_dtype,
        out_layout,
        epilogue: l.ops,
    };
    if ir.acc == AccMode::Tf32x3 {
        // The kernel reads split copies of A and B (gemm_core::split3), one per factor:
        // a parameter that is also the other factor, or that the epilogue reads, would
        // need its own values and a split copy under one argument.
        let epilogue = ir.epilogue_params();
        let twice = if ir.a == ir.b {
            Some((ir.a, "the other factor"))
        } else {
            epilogue
                .iter()
                .find(|&&i| i == ir.a || i == ir.b)
                .map(|&i| (i, "read by the epilogue"))
        };
        if let Some((i, role)) = twice {
            cx.error_at(
                attr.acc_span.expect("acc was given"),
                format!(
                    "`acc = tf32x3` runs the product on split copies of its two factors, so `{}` cannot also be {role}: use `acc = tf32`, or pass the values again as a parameter of their own",
                    sig.params[i as usize].ident
                ),
            );
        }
    }
    Some(ir)
}

impl Lowerer<'_> {
    fn param(&self, e: &Expr) -> Option<u32> {
        match e {
            Expr::Path(p) if p.qself.is_none() => {
                let id = p.path.get_ident()?;
                self.params.iter().position(|q| q.ident == *id).map(|i| i as u32)
            }
            Expr::Paren(p) => self.param(&p.expr),
            _ => None,
        }
    }

    /// A product operand: a Matrix parameter, optionally `.t()`.
    fn matrix_operand(&self, e: &Expr) -> Option<(u32, bool)> {
        let is_matrix = |i: u32| matches!(self.params[i as usize].kind, ParamKind::Matrix { .. });
        match e {
            Expr::MethodCall(m) if m.method == "t" && m.args.is_empty() => {
                self.param(&m.receiver).filter(|&i| is_matrix(i)).map(|i| (i, true))
            }
            Expr::Paren(p) => self.matrix_operand(&p.expr),
            _ => self.param(e).filter(|&i| is_matrix(i)).map(|i| (i, false)),
        }
    }

    fn expr(&mut self, e: &Expr) -> Option<Shape> {
        match e {
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Binary(b) => {
                let op = match b.op {
                    BinOp::Add(_) => EpOp::Add,
                    BinOp::Sub(_) => EpOp::Sub,
                    BinOp::Mul(_) => EpOp::Mul,
                    BinOp::Div(_) => EpOp::Div,
                    _ => {
                        self.cx.error_spanned_by(b.op, format!(
                            "operator `{}` is not allowed here: the epilogue takes `+ - * /` and the functions {FUNC_HELP}",
                            b.op.to_token_stream()
                        ));
                        self.expr(&b.left);
                        self.expr(&b.right);
                        return None;
                    }
                };
                if op == EpOp::Mul {
                    if let (Some((a, a_t)), Some((bb, b_t))) =
                        (self.matrix_operand(&b.left), self.matrix_operand(&b.right))
                    {
                        return self.product(e, a, a_t, bb, b_t);
                    }
                    if let Some((msg, other)) = self.chained_product(b) {
                        self.cx.error_spanned_by(b.op, msg);
                        // The product is lowered (it is the one product); the third
                        // matrix is used, whatever was meant.
                        let product = if std::ptr::eq(other, &*b.left) {
                            &b.right
                        } else {
                            &b.left
                        };
                        self.expr(product);
                        if let Some((i, _)) = self.matrix_operand(other) {
                            self.used[i as usize] = true;
                        }
                        return None;
                    }
                    if self.matrix_operand(&b.left).is_some() || self.matrix_operand(&b.right).is_some() {
                        self.near_miss = Some(e.to_token_stream());
                    }
                }
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                self.ops.push(op);
                Some(if l? == Shape::Scalar && r? == Shape::Scalar {
                    Shape::Scalar
                } else {
                    Shape::Elementwise
                })
            }
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    let s = self.expr(&u.expr);
                    self.ops.push(EpOp::Neg);
                    s
                }
                _ => {
                    self.cx
                        .error_spanned_by(u.op, "only unary `-` is allowed in the epilogue");
                    self.expr(&u.expr);
                    None
                }
            },
            Expr::Lit(l) => {
                let v = match &l.lit {
                    Lit::Float(f) => f.base10_parse::<f32>().ok(),
                    Lit::Int(i) => i.base10_parse::<f32>().ok(),
                    _ => None,
                };
                match v {
                    Some(v) => {
                        self.ops.push(EpOp::Lit(v));
                        Some(Shape::Scalar)
                    }
                    None => {
                        self.cx
                            .error_spanned_by(l, "only numeric literals are allowed in the epilogue");
                        None
                    }
                }
            }
            Expr::Path(p) => {
                let Some(i) = self.param(e) else {
                    if p.qself.is_none() && p.path.get_ident().is_some_and(|id| self.rejected.contains(id)) {
                        self.used_rejected = true;
                        return None;
                    }
                    self.cx.error_spanned_by(
                        p,
                        format!("unknown name `{}`: not a parameter of this kernel", p.to_token_stream()),
                    );
                    return None;
                };
                self.used[i as usize] = true;
                self.ops.push(EpOp::Param(i));
                Some(match self.params[i as usize].kind {
                    ParamKind::Scalar => Shape::Scalar,
                    _ => Shape::Elementwise,
                })
            }
            Expr::Call(c) => self.call(c),
            Expr::MethodCall(m) if m.method == "t" => {
                let msg = match self.param(&m.receiver).map(|i| self.params[i as usize].kind) {
                    Some(ParamKind::Row { .. }) => "a `Row<T>` (one value per output column) cannot be transposed; to broadcast one value per output row, declare the parameter as `Col<T>`".to_string(),
                    Some(ParamKind::Col { .. }) => "a `Col<T>` (one value per output row) cannot be transposed; to broadcast one value per output column, declare the parameter as `Row<T>`".to_string(),
                    _ => "`.t()` is only allowed on a Matrix operand of the matrix product".to_string(),
                };
                self.cx.error_spanned_by(e, msg);
                if let Some(i) = self.param(&m.receiver) {
                    self.used[i as usize] = true;
                }
                None
            }
            Expr::MethodCall(m) => {
                self.cx.error_spanned_by(&m.method, format!("unsupported method `.{}()`: only `.t()` (transpose a product operand) is allowed; functions are called as `relu(x)`", m.method));
                self.expr(&m.receiver);
                for a in &m.args {
                    self.expr(a);
                }
                None
            }
            other => {
                self.cx.error_spanned_by(other, format!("unsupported expression in a #[gemm_kernel] body: it takes one matrix product, parameters, numeric literals, `+ - * /`, and the functions {FUNC_HELP}"));
                None
            }
        }
    }

    /// `a * b * c` (or `c * a * b`): a product of two Matrix parameters and, by an
    /// unparenthesised `*`, a third Matrix parameter. It parses as `(a * b) * c`, which the
    /// DSL reads as an elementwise product with `c`, while it reads as a chained matrix
    /// product: ambiguous, so an error at the second `*`, with both spellings. The
    /// parenthesised `(a * b) * c` states the elementwise product and is accepted.
    fn chained_product<'e>(&self, b: &'e syn::ExprBinary) -> Option<(String, &'e Expr)> {
        let bare_product = |e: &Expr| match e {
            Expr::Binary(p) if matches!(p.op, BinOp::Mul(_)) => {
                self.matrix_operand(&p.left).is_some() && self.matrix_operand(&p.right).is_some()
            }
            _ => false,
        };
        let text = |e: &Expr| {
            e.to_token_stream()
                .to_string()
                .replace(" . ", ".")
                .replace(" ()", "()")
                .replace("( ", "(")
                .replace(" )", ")")
        };
        let (product, other) = if bare_product(&b.left) && self.matrix_operand(&b.right).is_some() {
            (&*b.left, &*b.right)
        } else if bare_product(&b.right) && self.matrix_operand(&b.left).is_some() {
            (&*b.right, &*b.left)
        } else {
            return None;
        };
        let (p, o) = (text(product), text(other));
        let elementwise = if std::ptr::eq(product, &*b.left) {
            format!("({p}) * {o}")
        } else {
            format!("{o} * ({p})")
        };
        Some((
            format!(
                "ambiguous `*`: `{}` would be read as the matrix product `{p}` multiplied elementwise by the Matrix `{o}`, not as a chained matrix product (a #[gemm_kernel] fn computes exactly one); write `{elementwise}` for the elementwise product",
                text(&Expr::Binary(b.clone()))
            ),
            other,
        ))
    }

    fn product(&mut self, e: &Expr, a: u32, a_t: bool, b: u32, b_t: bool) -> Option<Shape> {
        self.used[a as usize] = true;
        self.used[b as usize] = true;
        if let Some(p) = &self.product {
            // The same product written twice (`tanh(x * w) + x * w`) is one accumulator.
            if (p.a, p.a_t, p.b, p.b_t) == (a, a_t, b, b_t) {
                self.ops.push(EpOp::Acc);
                return Some(Shape::Elementwise);
            }
            self.cx.error_spanned_by(e, "a second matrix product: a #[gemm_kernel] fn computes exactly one `a * b` (repeating the same product is allowed)");
            return None;
        }
        self.product = Some(Product { a, a_t, b, b_t });
        self.ops.push(EpOp::Acc);
        Some(Shape::Elementwise)
    }

    fn call(&mut self, c: &syn::ExprCall) -> Option<Shape> {
        let name = match &*c.func {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        let Some(f) = name.as_deref().and_then(Func::from_name) else {
            self.cx.error_spanned_by(
                &c.func,
                format!(
                    "unknown function `{}`: the epilogue may call {FUNC_HELP}",
                    c.func.to_token_stream()
                ),
            );
            for a in &c.args {
                self.expr(a);
            }
            return None;
        };
        if c.args.len() != f.arity() {
            let sig = match f {
                Func::Min | Func::Max => "(a, b)",
                Func::Clamp => "(x, lo, hi)",
                Func::LeakyRelu => "(x, slope)",
                _ => "(x)",
            };
            self.cx.error_spanned_by(
                c,
                format!(
                    "`{}` takes {} argument{}, `{}{sig}`, got {}",
                    f.name(),
                    f.arity(),
                    if f.arity() == 1 { "" } else { "s" },
                    f.name(),
                    c.args.len()
                ),
            );
            for a in &c.args {
                self.expr(a);
            }
            return None;
        }
        let mut shape = Shape::Scalar;
        let mut ok = true;
        for a in &c.args {
            match self.expr(a) {
                Some(Shape::Elementwise) => shape = Shape::Elementwise,
                Some(Shape::Scalar) => {}
                None => ok = false,
            }
        }
        self.ops.push(EpOp::Call(f));
        ok.then_some(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{attr, parse};
    use gemm_core::{Func, Layout};

    fn lower_src(args: proc_macro2::TokenStream, f: syn::ItemFn) -> (Option<GemmIr>, Vec<String>) {
        let cx = Ctxt::new();
        let a = attr::parse(&cx, args);
        let sig = parse::signature(&cx, &f);
        let ir = lower(&cx, &f, &sig, &a);
        let errs = match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (ir, errs)
    }

    #[test]
    fn lowers_linear_relu_to_postfix() {
        let (ir, errs) = lower_src(
            quote::quote!(),
            syn::parse_quote! {
                fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> { relu(x * w + bias) }
            },
        );
        assert!(errs.is_empty(), "{errs:?}");
        let ir = ir.unwrap();
        assert_eq!(
            ir.epilogue,
            vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)]
        );
        assert_eq!(
            (ir.a, ir.b, ir.a_layout(), ir.b_layout()),
            (0, 1, Layout::RowMajor, Layout::ColMajor)
        );
    }

    #[test]
    fn transposes_flip_the_kernel_side_layout_and_repeated_products_share_acc() {
        let (ir, errs) = lower_src(
            quote::quote!(acc = tf32),
            syn::parse_quote! {
                fn k(a: Matrix<f32>, b: Matrix<f32, ColMajor>, s: f32) -> Matrix<f32> { tanh(a.t() * b.t()) + s * (a.t() * b.t()) }
            },
        );
        assert!(errs.is_empty(), "{errs:?}");
        let ir = ir.unwrap();
        assert!(ir.a_t && ir.b_t);
        assert_eq!((ir.a_layout(), ir.b_layout()), (Layout::ColMajor, Layout::RowMajor));
        assert_eq!(ir.acc, AccMode::Tf32);
        assert_eq!(ir.epilogue.iter().filter(|o| **o == EpOp::Acc).count(), 2);
    }

    #[test]
    fn a_chained_product_is_ambiguous_and_parentheses_state_the_elementwise_one() {
        let errs = |body: syn::Expr| {
            let f: syn::ItemFn = syn::parse_quote! {
                fn k(a: Matrix<f16>, b: Matrix<f16>, c: Matrix<f16>, s: f32, r: Row<f16>) -> Matrix<f16> { #body + s + r }
            };
            lower_src(quote::quote!(), f).1
        };
        for bad in [
            syn::parse_quote!(a * b * c),
            syn::parse_quote!(c * a * b),
            syn::parse_quote!(a.t() * b * c.t()),
        ] {
            let e = errs(bad);
            assert!(e.len() == 1 && e[0].contains("ambiguous `*`"), "{e:?}");
        }
        assert!(errs(syn::parse_quote!(a * b * c))[0].contains("write `(a * b) * c`"));
        // `c * a * b` is `(c * a) * b`: the product is `c * a`.
        let e = errs(syn::parse_quote!(c * a * b));
        assert!(
            e[0].contains("matrix product `c * a`") && e[0].contains("write `(c * a) * b`"),
            "{e:?}"
        );
        // Stated elementwise, or scaled by a scalar or a Row: one product, no ambiguity.
        for ok in [
            syn::parse_quote!((a * b) * c),
            syn::parse_quote!(c * (a * b)),
            syn::parse_quote!(a * b * s * c * 0.0 + c),
            syn::parse_quote!(a * b * r * (c * 1.0)),
        ] {
            let e = errs(ok);
            assert!(e.is_empty(), "{e:?}");
        }
    }

    #[test]
    fn reports_every_error_of_a_kernel() {
        let (_, errs) = lower_src(
            quote::quote!(),
            syn::parse_quote! {
                fn k(a: Matrix<f16>, b: Matrix<bf16>, unused: f32) -> Matrix<f16> { softplus(a * b) % 2.0 }
            },
        );
        assert!(
            errs.iter().any(|e| e.contains("unknown function `softplus`")),
            "{errs:?}"
        );
        assert!(errs.iter().any(|e| e.contains("operator `%`")), "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("`unused` is not used")), "{errs:?}");
        assert!(errs.iter().any(|e| e.contains("mismatched element types")), "{errs:?}");
    }
}
