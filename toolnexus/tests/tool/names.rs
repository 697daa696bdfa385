//! Tool names: `[A-Za-z0-9_-]`, 1 to 64 characters, checked at construction (never renamed),
//! and `sanitize`.

use serde_json::json;
use toolnexus::{
    Error, FnTool, Tool, Toolkit, tool::MAX_TOOL_NAME_LEN, tool::sanitize, tool::validate_tool_name,
};

use crate::support::RawTool;

fn fn_tool(name: &str) -> Result<FnTool, Error> {
    FnTool::builder(name)
        .description("A tool.")
        .handler(|_, _| async { "ok" })
        .build()
}

/// A hand-written tool named `name`, which no builder checked.
fn raw(name: &str) -> RawTool {
    RawTool {
        name: name.to_owned(),
        description: "A raw tool.",
        schema: json!({"type": "object", "properties": {}}),
    }
}

#[test]
fn sixty_four_characters_are_accepted() {
    assert_eq!(MAX_TOOL_NAME_LEN, 64);
    let name = "a".repeat(64);
    assert!(validate_tool_name(&name).is_ok());
    assert_eq!(fn_tool(&name).unwrap().name(), name);
    let mut kit = Toolkit::new();
    kit.add(raw(&name)).unwrap();
    assert_eq!(kit.tools()[0].name(), name);
}

#[test]
fn every_allowed_character_is_accepted() {
    let name = "AZaz09_-";
    assert!(validate_tool_name(name).is_ok());
    assert_eq!(fn_tool(name).unwrap().name(), name);
}

#[test]
fn sixty_five_characters_are_rejected() {
    let name = "b".repeat(65);
    let expected = format!("invalid tool name `{name}`: 65 characters, at most 64 are allowed");
    assert_eq!(validate_tool_name(&name).unwrap_err().to_string(), expected);
    assert_eq!(fn_tool(&name).unwrap_err().to_string(), expected);
    let mut kit = Toolkit::new();
    assert_eq!(kit.add(raw(&name)).unwrap_err().to_string(), expected);
    assert!(kit.is_empty(), "a failed add leaves the toolkit unchanged");
}

#[test]
fn an_empty_name_is_rejected() {
    let expected = "invalid tool name ``: a name needs at least one character";
    assert_eq!(validate_tool_name("").unwrap_err().to_string(), expected);
    assert_eq!(fn_tool("").unwrap_err().to_string(), expected);
    assert_eq!(
        Toolkit::new().add(raw("")).unwrap_err().to_string(),
        expected
    );
    assert!(matches!(
        validate_tool_name(""),
        Err(Error::InvalidToolName { name, .. }) if name.is_empty()
    ));
}

#[test]
fn characters_outside_the_set_are_rejected_never_renamed() {
    let cases = [
        (
            "get weather",
            "invalid tool name `get weather`: character ' ' at index 3 is not one of [A-Za-z0-9_-]",
        ),
        (
            "ns.tool",
            "invalid tool name `ns.tool`: character '.' at index 2 is not one of [A-Za-z0-9_-]",
        ),
        (
            "café",
            "invalid tool name `café`: character 'é' at index 3 is not one of [A-Za-z0-9_-]",
        ),
        (
            "a/b",
            "invalid tool name `a/b`: character '/' at index 1 is not one of [A-Za-z0-9_-]",
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(validate_tool_name(name).unwrap_err().to_string(), expected);
        assert_eq!(fn_tool(name).unwrap_err().to_string(), expected);
        assert_eq!(
            Toolkit::builder()
                .tool(raw(name))
                .build()
                .unwrap_err()
                .to_string(),
            expected
        );
    }
}

#[test]
fn the_length_limit_counts_characters() {
    // 64 characters is the limit; a multi-byte character is rejected for its kind, not length
    let long = format!("{}é", "a".repeat(64));
    assert_eq!(
        validate_tool_name(&long).unwrap_err().to_string(),
        format!("invalid tool name `{long}`: 65 characters, at most 64 are allowed")
    );
}

#[test]
fn sanitize_replaces_every_character_outside_the_set() {
    assert_eq!(sanitize("get weather!"), "get_weather_");
    assert_eq!(sanitize("ns.tool/v2"), "ns_tool_v2");
    assert_eq!(sanitize("café"), "caf_");
    assert_eq!(sanitize("日本"), "__");
    assert_eq!(sanitize("ok_Name-9"), "ok_Name-9");
    assert_eq!(sanitize(""), "");
    // sanitize fixes characters only; length is the caller's business
    let long = "x".repeat(70);
    assert_eq!(sanitize(&long), long);
    assert!(validate_tool_name(&sanitize("mcp server.search docs")).is_ok());
}
