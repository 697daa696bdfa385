//! `suspend!`, `ask!` and `assert_pending!`: `parse` reads the shared grammar, `validate`
//! checks what needs the whole request, `expand` generates code and cannot fail. The runtime
//! invokes these through its `macro_rules!` fronts, which pass `$crate` first (see
//! [`Runtime::split_front`]).

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;

use crate::errors::Errors;
use crate::runtime::Runtime;
use parse::{AskInput, AssertInput, SuspendInput};
use validate::Which;

/// Parses, checks and expands one function-like macro; on error, the combined errors.
fn run<T: syn::parse::Parse>(
    input: TokenStream,
    which: Which,
    spec: impl FnOnce(&T) -> &parse::Spec,
    expand: impl FnOnce(&T, &TokenStream) -> TokenStream,
) -> TokenStream {
    let (runtime, input) = Runtime::split_front(input);
    let mut errors = Errors::default();
    let Some(parsed) = errors.ok(syn::parse2::<T>(input)) else {
        return errors.into_compile_error();
    };
    validate::check(spec(&parsed), which, &mut errors);
    if errors.is_empty() {
        expand(&parsed, &runtime.private())
    } else {
        errors.into_compile_error()
    }
}

pub(crate) fn suspend(input: TokenStream) -> TokenStream {
    run(
        input,
        Which::Suspend,
        |SuspendInput(spec)| spec,
        |SuspendInput(spec), rt| expand::suspend(spec, rt),
    )
}

pub(crate) fn ask(input: TokenStream) -> TokenStream {
    run(
        input,
        Which::Ask,
        |i: &AskInput| &i.spec,
        |i, rt| expand::ask(&i.ctx, &i.spec, rt),
    )
}

pub(crate) fn assert_pending(input: TokenStream) -> TokenStream {
    run(
        input,
        Which::AssertPending,
        |i: &AssertInput| &i.spec,
        |i, rt| expand::assert_pending(&i.result, &i.spec, rt),
    )
}
