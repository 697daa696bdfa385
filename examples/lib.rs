//! Runnable examples of toolnexus; see the `[[example]]` entries of this package's manifest.
//! Run one with `cargo run -p toolnexus-examples --example <name>`.
