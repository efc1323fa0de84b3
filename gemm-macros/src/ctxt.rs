//! Error accumulation: every stage reports all it finds, each error at its own span,
//! and the caller turns them into one `compile_error!` batch (serde_derive's `Ctxt`).

use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

/// Collects errors; must be consumed with [`Ctxt::check`].
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error pointing at `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, msg: M) {
        self.push(syn::Error::new_spanned(tokens.into_token_stream(), msg));
    }

    /// An error at `span`.
    pub fn error_at<M: Display>(&self, span: proc_macro2::Span, msg: M) {
        self.push(syn::Error::new(span, msg));
    }

    pub fn push(&self, e: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(e);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().as_ref().expect("Ctxt used after check").is_empty()
    }

    /// All errors combined, or Ok.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut it = errors.into_iter();
        match it.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in it {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
