//! `#[derive(toolnexus::Args)]`: the schemas it writes, what its decoders accept and refuse
//! (with the path inside the value), `#[tool]` parameters of derived types, and property tests
//! that the schema and the decoder agree, shape by shape.

mod decode;
mod lints;
mod props;
mod schema;
mod tool;
mod types;
