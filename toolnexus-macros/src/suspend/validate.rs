//! The checks of `suspend!`, `ask!` and `assert_pending!` that need the whole request; every
//! problem is recorded.

use super::parse::{Kind, Spec};
use crate::errors::Errors;

/// Which macro a spec belongs to, for messages.
#[derive(Clone, Copy)]
pub(crate) enum Which {
    Suspend,
    Ask,
    AssertPending,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Suspend => "suspend!",
            Which::Ask => "ask!",
            Which::AssertPending => "assert_pending!",
        }
    }
}

/// The checks that need the whole spec; every problem is reported, combined.
pub(crate) fn check(spec: &Spec, which: Which, errors: &mut Errors) {
    let name = which.name();
    let ctx = if matches!(which, Which::Ask) {
        "ctx, "
    } else {
        ""
    };
    match which {
        Which::Suspend | Which::Ask => {
            if let Some(kind) = &spec.kind {
                let is_authorization = matches!(kind, Kind::Known(i) if i == "authorization");
                if is_authorization && spec.url.is_none() {
                    errors.push(syn::Error::new(
                        kind.span(),
                        format!(
                            "`authorization` needs `url = ..`, where the human goes to log in, e.g. `{name}({ctx}authorization, url = login_url)`"
                        ),
                    ));
                }
                if !is_authorization && spec.prompt.is_none() {
                    let shown = match kind {
                        Kind::Known(i) => i.to_string(),
                        Kind::Custom(l) => format!("{:?}", l.value()),
                    };
                    errors.push(syn::Error::new(
                        kind.span(),
                        format!(
                            "`{name}` needs a prompt after the kind, e.g. `{name}({ctx}{shown} \"Which city?\")`; only `authorization` has a default prompt"
                        ),
                    ));
                }
            }
        }
        Which::AssertPending => {
            if let Some(opt) = &spec.expires_in {
                errors.push(syn::Error::new(
                    opt.name.span(),
                    "`assert_pending!` cannot check `expires_in` (it depends on the clock): compare the returned request's `expires_at` instead",
                ));
            }
        }
    }
}
