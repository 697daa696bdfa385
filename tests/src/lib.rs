//! Cross-crate, end-to-end and conformance tests of toolnexus live in `tests/`; shared fakes
//! live in this library.

pub mod fake_provider;
