//! The `macro_rules!` fronts of `suspend!`, `ask!` and `assert_pending!`: each passes `$crate`
//! to its procedural macro, so generated code reaches this crate by the path the caller's
//! crate knows it by (renamed in `Cargo.toml`, or re-exported by another crate) with no option
//! to write. The user's tokens pass through untouched, spans and all. Documented where they
//! are re-exported at the crate root.

/// `suspend!`'s front; use [`suspend!`](macro@crate::suspend).
#[doc(hidden)]
#[macro_export]
macro_rules! __suspend {
    ($($input:tt)*) => {
        $crate::__private::suspend_impl!($crate; $($input)*)
    };
}

/// `ask!`'s front; use [`ask!`](crate::ask).
#[doc(hidden)]
#[macro_export]
macro_rules! __ask {
    ($($input:tt)*) => {
        $crate::__private::ask_impl!($crate; $($input)*)
    };
}

/// `assert_pending!`'s front; use [`assert_pending!`](crate::assert_pending).
#[doc(hidden)]
#[macro_export]
macro_rules! __assert_pending {
    ($($input:tt)*) => {
        $crate::__private::assert_pending_impl!($crate; $($input)*)
    };
}

#[cfg(test)]
mod tests {
    // Inside this crate `::toolnexus` does not resolve: these compile only because the fronts
    // pass `$crate` and `#[form(crate = crate)]` is honoured.
    use crate::{Answer, Context, Form, ToolResult};

    #[derive(Form, serde::Deserialize)]
    #[form(crate = crate)]
    struct Trip {
        /// Where to.
        city: String,
    }

    fn plan(ctx: &Context) -> ToolResult {
        let trip = crate::ask!(ctx, input "Where to?", schema = Trip);
        ToolResult::success(trip.city)
    }

    #[test]
    fn the_macros_reach_the_runtime_through_crate() {
        let r = plan(&Context::new());
        let req = crate::assert_pending!(r, input "Where to?", schema = Trip);
        assert_eq!(
            req.data.as_ref().unwrap()["schema"],
            serde_json::json!({
                "type": "object",
                "properties": {"city": {"type": "string", "description": "Where to."}},
                "required": ["city"]
            })
        );
        let ctx = Context::new().with_answer(Answer::accept(
            req.id.clone(),
            serde_json::json!({"city": "Oslo"}),
        ));
        assert_eq!(plan(&ctx).output, "Oslo");
        let login = crate::suspend!(authorization, url = "https://example.com/login");
        assert_eq!(
            format!("{login}"),
            "Login required: https://example.com/login"
        );
    }
}
