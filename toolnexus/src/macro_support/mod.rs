//! Support code for what `toolnexus-macros` generates, re-exported as `toolnexus::__private`.
//! Not public API: names and signatures may change in any release.

pub(crate) mod approval;
pub(crate) mod args;
pub(crate) mod returns;
pub(crate) mod suspend;
pub(crate) mod tool;
