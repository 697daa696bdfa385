//! The expansion of `#[derive(Args)]` is clean under strict user lints: this module compiles
//! with them denied (and `cargo clippy --all-targets` checks it with pedantic on), for every
//! shape.

#![deny(
    missing_docs,
    unused_qualifications,
    unused,
    rust_2018_idioms,
    missing_debug_implementations,
    unreachable_pub,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case
)]
#![deny(clippy::all, clippy::pedantic)]

use std::collections::HashMap;

use toolnexus::{Args, Tool, tool};

/// Every field kind.
#[derive(Args, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Strict {
    /// A string.
    pub(crate) text: String,
    /// An optional number.
    pub(crate) limit: Option<u32>,
    /// A default.
    #[arg(default = 3)]
    pub(crate) tries: u8,
    /// A skipped field.
    #[serde(skip)]
    pub(crate) seen: bool,
    /// A list of a derived type.
    pub(crate) kinds: Vec<Kind>,
    /// A map of boxes.
    pub(crate) by_name: HashMap<String, Box<Tagged>>,
    /// Adjacently tagged.
    pub(crate) change: Option<Adjacent>,
    #[doc = include_str!("lints.md")]
    pub(crate) r#type: String,
    /// A default of a derived type, shown in the schema once running.
    #[arg(default = Kind::Two)]
    pub(crate) kind: Kind,
    /// A struct whose fields all have defaults.
    #[serde(default)]
    pub(crate) paging: Paging,
}

/// Defaults for every field.
#[derive(Args, Debug, Default)]
#[serde(default)]
pub(crate) struct Paging {
    /// A page.
    pub(crate) page: u32,
    /// Skipped.
    #[arg(skip)]
    pub(crate) seen: bool,
}

/// A string enum whose variants have `#[doc = include_str!(..)]` docs.
#[derive(Args, Debug)]
pub(crate) enum Raw {
    #[doc = include_str!("lints.md")]
    A,
    /// Skipped.
    #[arg(skip)]
    B,
}

/// A string enum.
#[derive(Args, Debug)]
pub(crate) enum Kind {
    /// One.
    One,
    /// Two.
    Two,
}

/// Internally tagged.
#[derive(Args, Debug)]
#[serde(tag = "type")]
pub(crate) enum Tagged {
    /// A unit variant.
    Empty,
    /// A struct variant.
    Full {
        /// Its field.
        value: i64,
    },
}

/// Adjacently tagged.
#[derive(Args, Debug)]
#[serde(tag = "t", content = "c")]
pub(crate) enum Adjacent {
    /// Unit.
    Unit,
    /// Newtype.
    New(Kind),
    /// Struct.
    Fields {
        /// Its field.
        x: f64,
    },
}

/// A tool taking it.
#[tool]
pub(crate) fn strict_tool(
    /// The argument.
    arg: &Strict,
) -> String {
    let Strict {
        text,
        limit,
        tries,
        seen,
        kinds,
        by_name,
        change,
        r#type,
        kind,
        paging,
    } = arg;
    let tagged: Vec<i64> = by_name
        .values()
        .map(|t| match **t {
            Tagged::Empty => 0,
            Tagged::Full { value } => value,
        })
        .collect();
    let change = match change {
        Some(Adjacent::Unit) | None => String::new(),
        Some(Adjacent::New(k)) => format!("{k:?}"),
        Some(Adjacent::Fields { x }) => x.to_string(),
    };
    format!(
        "{text} {limit:?} {tries} {seen} {kinds:?} {tagged:?} {change} {type} {kind:?} {} {}",
        paging.page, paging.seen
    )
}

#[test]
fn every_shape_compiles_under_strict_lints() {
    let schema = StrictTool.input_schema();
    assert_eq!(
        schema["properties"]["arg"]["properties"]["type"]["description"],
        "Raw docs.\n"
    );
    assert_eq!(
        schema["properties"]["arg"]["required"],
        serde_json::json!(["text", "kinds", "byName", "type"])
    );
    assert_eq!(
        schema["properties"]["arg"]["properties"]["kind"]["default"],
        "Two"
    );
    assert_eq!(
        schema["properties"]["arg"]["properties"]["paging"]["default"],
        serde_json::json!({"page": 0})
    );
    assert_eq!(
        toolnexus::__private::schema_of::<Raw>()["oneOf"],
        serde_json::json!([{"description": "Raw docs.\n", "type": "string", "const": "A"}])
    );
    // a skipped variant has no JSON (it is no value of the schema)
    assert_eq!(
        toolnexus::__private::ArgType::__toolnexus_json(&Raw::B),
        None
    );
}
