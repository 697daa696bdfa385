//! [`Errors`]: every mistake a macro finds, combined into one report. All five macros collect
//! into it and never stop at the first mistake they can step over.

use proc_macro2::TokenStream;

/// Every error found, combined.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Records one error.
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// The value, or `None` after recording the error.
    pub(crate) fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(e);
                None
            }
        }
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The `compile_error!` invocations of everything recorded (empty when nothing was).
    pub(crate) fn into_compile_error(self) -> TokenStream {
        self.0
            .map(syn::Error::into_compile_error)
            .unwrap_or_default()
    }
}
