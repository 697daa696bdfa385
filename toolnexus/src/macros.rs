//! The `macro_rules!` fronts of `suspend!`, `ask!` and `assert_pending!`: each passes `$crate`
//! to its procedural macro, so generated code reaches this crate by the path the caller's
//! crate knows it by (renamed in `Cargo.toml`, or re-exported by another crate) with no option
//! to write. The user's tokens pass through untouched, spans and all. Documented where they
//! are re-exported at the crate root.

/// `suspend!`'s front; use [`suspend!`](crate::suspend).
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
