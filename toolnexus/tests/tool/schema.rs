//! `#[tool]` input schemas, names and descriptions: golden JSON, compared byte for byte.

// Tools take their arguments by value and may be `async` without awaiting: these tests write
// tools the way users do, and the expectations are long golden strings.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unused_async,
    clippy::result_large_err,
    clippy::too_many_lines,
    clippy::unnecessary_wraps
)]

use std::collections::BTreeMap;

use toolnexus::{Tool, tool};

fn schema_of(t: &dyn Tool) -> String {
    serde_json::to_string(t.input_schema()).unwrap()
}

/// Book a flight for the traveller.
#[tool]
async fn book_flight(
    /// The flight number, e.g. "AI-503".
    flight: String,
    /// How many seats; one when omitted.
    seats: Option<u8>,
    ctx: &toolnexus::Context,
) -> String {
    let _ = ctx;
    format!("{flight} x{}", seats.unwrap_or(1))
}

#[test]
fn the_issue_example() {
    let t = BookFlight;
    assert_eq!(t.name(), "book_flight");
    assert_eq!(t.description(), "Book a flight for the traveller.");
    assert_eq!(t.source(), "native");
    assert_eq!(
        schema_of(&t),
        r#"{"additionalProperties":false,"properties":{"flight":{"description":"The flight number, e.g. \"AI-503\".","type":"string"},"seats":{"description":"How many seats; one when omitted.","format":"uint8","maximum":255,"minimum":0,"type":["integer","null"]}},"required":["flight"],"type":"object"}"#
    );
    // the same `Value` every time: built once, never per call
    assert!(std::ptr::eq(t.input_schema(), BookFlight.input_schema()));
}

/// Every type the macro describes itself.
#[tool]
#[allow(clippy::too_many_arguments, clippy::fn_params_excessive_bools)] // one of each known type
fn known_types(
    s: String,
    r: &str,
    c: char,
    b: bool,
    i8_: i8,
    i16_: i16,
    i32_: i32,
    i64_: i64,
    i128_: i128,
    isize_: isize,
    u8_: u8,
    u16_: u16,
    u32_: u32,
    u64_: u64,
    u128_: u128,
    usize_: usize,
    f32_: f32,
    f64_: f64,
    list: Vec<u32>,
    maybe_list: Option<Vec<String>>,
    full: std::string::String,
) {
    let _ = (
        s, r, c, b, i8_, i16_, i32_, i64_, i128_, isize_, u8_, u16_, u32_,
    );
    let _ = (u64_, u128_, usize_, f32_, f64_, list, maybe_list, full);
}

#[test]
fn known_types_are_written_at_compile_time() {
    let got: serde_json::Value = KnownTypes.input_schema().clone();
    let props = &got["properties"];
    let one = |k: &str| serde_json::to_string(&props[k]).unwrap();
    assert_eq!(one("s"), r#"{"type":"string"}"#);
    assert_eq!(one("r"), r#"{"type":"string"}"#);
    assert_eq!(one("c"), r#"{"maxLength":1,"minLength":1,"type":"string"}"#);
    assert_eq!(one("b"), r#"{"type":"boolean"}"#);
    assert_eq!(
        one("i8_"),
        r#"{"format":"int8","maximum":127,"minimum":-128,"type":"integer"}"#
    );
    assert_eq!(
        one("i16_"),
        r#"{"format":"int16","maximum":32767,"minimum":-32768,"type":"integer"}"#
    );
    assert_eq!(
        one("i32_"),
        r#"{"format":"int32","maximum":2147483647,"minimum":-2147483648,"type":"integer"}"#
    );
    assert_eq!(one("i64_"), r#"{"format":"int64","type":"integer"}"#);
    assert_eq!(one("i128_"), r#"{"format":"int128","type":"integer"}"#);
    assert_eq!(one("isize_"), r#"{"format":"int","type":"integer"}"#);
    assert_eq!(
        one("u8_"),
        r#"{"format":"uint8","maximum":255,"minimum":0,"type":"integer"}"#
    );
    assert_eq!(
        one("u16_"),
        r#"{"format":"uint16","maximum":65535,"minimum":0,"type":"integer"}"#
    );
    assert_eq!(
        one("u32_"),
        r#"{"format":"uint32","maximum":4294967295,"minimum":0,"type":"integer"}"#
    );
    assert_eq!(
        one("u64_"),
        r#"{"format":"uint64","minimum":0,"type":"integer"}"#
    );
    assert_eq!(
        one("u128_"),
        r#"{"format":"uint128","minimum":0,"type":"integer"}"#
    );
    assert_eq!(
        one("usize_"),
        r#"{"format":"uint","minimum":0,"type":"integer"}"#
    );
    assert_eq!(one("f32_"), r#"{"format":"float","type":"number"}"#);
    assert_eq!(one("f64_"), r#"{"format":"double","type":"number"}"#);
    assert_eq!(
        one("list"),
        r#"{"items":{"format":"uint32","maximum":4294967295,"minimum":0,"type":"integer"},"type":"array"}"#
    );
    assert_eq!(
        one("maybe_list"),
        r#"{"items":{"type":"string"},"type":["array","null"]}"#
    );
    assert_eq!(one("full"), r#"{"type":"string"}"#);
    let keys: Vec<&str> = props
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // every parameter, in the sorted order toolnexus writes every schema's keys in (`required`
    // below keeps the parameters' order)
    let mut declared = [
        "s",
        "r",
        "c",
        "b",
        "i8_",
        "i16_",
        "i32_",
        "i64_",
        "i128_",
        "isize_",
        "u8_",
        "u16_",
        "u32_",
        "u64_",
        "u128_",
        "usize_",
        "f32_",
        "f64_",
        "list",
        "maybe_list",
        "full",
    ];
    declared.sort_unstable();
    assert_eq!(keys, declared);
    assert_eq!(
        serde_json::to_string(&got["required"]).unwrap(),
        r#"["s","r","c","b","i8_","i16_","i32_","i64_","i128_","isize_","u8_","u16_","u32_","u64_","u128_","usize_","f32_","f64_","list","full"]"#
    );
}

/// Where a package goes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // read through Deserialize only
struct Address {
    /// The street and number.
    street: String,
    /// The city.
    city: City,
}

/// A city we deliver to.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum City {
    Oslo,
    Pune,
}

/// A tree of categories (recursive: keeps a `$ref`).
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // read through Deserialize only
struct Category {
    name: String,
    children: Vec<Category>,
}

/// Ship a parcel.
///
/// Second paragraph: the parcel is insured.
/// Same paragraph, next line.
#[tool(name = "ship-parcel")]
fn ship(
    /// Where to.
    to: Address,
    /// Optional city override.
    city: Option<City>,
    /// Labels per line.
    labels: BTreeMap<String, u32>,
    /// Weight in kg.
    #[arg(default = 1.5)]
    weight: f64,
    /// Shown to the courier.
    #[arg(rename = "note", default = String::from("fragile"))]
    courier_note: String,
    tree: Option<Category>,
) -> String {
    let _ = (to, city, labels, tree);
    format!("{weight} {courier_note}")
}

#[test]
fn user_types_are_inlined_and_documented() {
    let t = Ship;
    assert_eq!(t.name(), "ship-parcel");
    assert_eq!(
        t.description(),
        "Ship a parcel.\n\nSecond paragraph: the parcel is insured. Same paragraph, next line."
    );
    assert_eq!(
        serde_json::to_string_pretty(t.input_schema()).unwrap(),
        r##"{
  "$defs": {
    "Category": {
      "description": "A tree of categories (recursive: keeps a `$ref`).",
      "properties": {
        "children": {
          "items": {
            "$ref": "#/$defs/Category"
          },
          "type": "array"
        },
        "name": {
          "type": "string"
        }
      },
      "required": [
        "name",
        "children"
      ],
      "type": "object"
    }
  },
  "additionalProperties": false,
  "properties": {
    "city": {
      "description": "Optional city override.",
      "enum": [
        "oslo",
        "pune",
        null
      ],
      "type": [
        "string",
        "null"
      ]
    },
    "labels": {
      "additionalProperties": {
        "format": "uint32",
        "maximum": 4294967295,
        "minimum": 0,
        "type": "integer"
      },
      "description": "Labels per line.",
      "type": "object"
    },
    "note": {
      "default": "fragile",
      "description": "Shown to the courier.",
      "type": "string"
    },
    "to": {
      "description": "Where to.",
      "properties": {
        "city": {
          "description": "The city.",
          "enum": [
            "oslo",
            "pune"
          ],
          "type": "string"
        },
        "street": {
          "description": "The street and number.",
          "type": "string"
        }
      },
      "required": [
        "street",
        "city"
      ],
      "type": "object"
    },
    "tree": {
      "description": "A tree of categories (recursive: keeps a `$ref`).",
      "properties": {
        "children": {
          "items": {
            "$ref": "#/$defs/Category"
          },
          "type": "array"
        },
        "name": {
          "type": "string"
        }
      },
      "required": [
        "name",
        "children"
      ],
      "type": [
        "object",
        "null"
      ]
    },
    "weight": {
      "default": 1.5,
      "description": "Weight in kg.",
      "format": "double",
      "type": "number"
    }
  },
  "required": [
    "to",
    "labels"
  ],
  "type": "object"
}"##
    );
}

#[doc = include_str!("fixtures/lookup.md")]
#[tool]
fn lookup(#[doc = include_str!("fixtures/key.md")] key: String) -> String {
    key
}

#[test]
fn include_str_docs_are_read_once_compiled() {
    assert_eq!(
        Lookup.description(),
        "Look a key up.\n\nReturns its value.\n"
    );
    assert_eq!(
        schema_of(&Lookup),
        r#"{"additionalProperties":false,"properties":{"key":{"description":"The key to look up.\n","type":"string"}},"required":["key"],"type":"object"}"#
    );
}

/// This doc comment loses to the attribute.
#[tool(description = "Ping the server.", name = "ping")]
fn ping_server() -> &'static str {
    "pong"
}

#[tool(description = include_str!("fixtures/lookup.md"))]
fn described_by_file() {}

#[test]
fn description_attribute_wins_over_docs() {
    assert_eq!(PingServer.name(), "ping");
    assert_eq!(PingServer.description(), "Ping the server.");
    assert_eq!(
        schema_of(&PingServer),
        r#"{"additionalProperties":false,"properties":{},"type":"object"}"#
    );
    assert_eq!(
        DescribedByFile.description(),
        "Look a key up.\n\nReturns its value.\n"
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // read through Deserialize only
struct SearchArgs {
    /// Words to look for.
    query: String,
    /// At most this many hits.
    limit: Option<u32>,
}

/// Search the catalogue.
#[tool]
fn search(#[args] args: SearchArgs) -> String {
    args.query
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read through Deserialize only
struct StrictArgs {
    id: u64,
}

/// Fetch by id.
#[tool]
fn fetch(#[args] StrictArgs { id }: StrictArgs, ctx: &toolnexus::Context) -> u64 {
    let _ = ctx;
    id
}

#[test]
fn an_arguments_struct_gives_its_fields() {
    assert_eq!(
        schema_of(&Search),
        r#"{"additionalProperties":false,"properties":{"limit":{"description":"At most this many hits.","format":"uint32","minimum":0,"type":["integer","null"]},"query":{"description":"Words to look for.","type":"string"}},"required":["query"],"type":"object"}"#
    );
    assert_eq!(
        schema_of(&Fetch),
        r#"{"additionalProperties":false,"properties":{"id":{"format":"uint64","minimum":0,"type":"integer"}},"required":["id"],"type":"object"}"#
    );
}

/// Raw identifiers lose their `r#`.
#[tool]
fn r#type(r#match: bool) -> bool {
    r#match
}

#[test]
fn names_follow_the_function() {
    assert_eq!(Type.name(), "type");
    assert_eq!(
        schema_of(&Type),
        r#"{"additionalProperties":false,"properties":{"match":{"type":"boolean"}},"required":["match"],"type":"object"}"#
    );
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is compared
struct MirrorArgs {
    /// Text.
    s: String,
    flag: Option<bool>,
    n: u8,
    xs: Vec<f64>,
}

/// Same fields as `MirrorArgs`.
#[tool]
fn mirror(
    /// Text.
    s: String,
    flag: Option<bool>,
    n: u8,
    xs: Vec<f64>,
) {
    let _ = (s, flag, n, xs);
}

#[test]
fn compile_time_schemas_agree_with_schemars() {
    let mut expected = toolnexus::schema::input_schema_for::<MirrorArgs>();
    expected
        .as_object_mut()
        .unwrap()
        .insert("additionalProperties".into(), false.into());
    // same keys and values (schemars puts `description` last, the macro first)
    assert_eq!(Mirror.input_schema(), &expected);
    assert_eq!(
        serde_json::to_string(Mirror.input_schema()).unwrap(),
        r#"{"additionalProperties":false,"properties":{"flag":{"type":["boolean","null"]},"n":{"format":"uint8","maximum":255,"minimum":0,"type":"integer"},"s":{"description":"Text.","type":"string"},"xs":{"items":{"format":"double","type":"number"},"type":"array"}},"required":["s","n","xs"],"type":"object"}"#
    );
}

#[test]
fn tools_can_be_local_items() {
    /// Defined inside a function.
    #[tool]
    fn local(n: i8) -> i8 {
        n
    }
    assert_eq!(Local.name(), "local");
    assert_eq!(
        schema_of(&Local),
        r#"{"additionalProperties":false,"properties":{"n":{"format":"int8","maximum":127,"minimum":-128,"type":"integer"}},"required":["n"],"type":"object"}"#
    );
}
