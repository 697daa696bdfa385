//! Suspending to ask a human, one module per concern: `suspend!` (`suspend_macro`), `ask!`
//! (`ask`), `#[derive(Form)]` (`form`), clean expansion under strict user lints (`lints`), the
//! built-in `question` tool (`question`), the test helpers (`testing`), and the Rust twins of
//! the seed page's examples (`seed`).

mod ask;
mod form;
pub mod lints;
mod question;
mod seed;
mod suspend_macro;
mod testing;
