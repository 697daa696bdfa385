//! Provider tool schemas (contract section 5): exact bytes, tool order, empty toolkits, and
//! what every schema handed to an adapter looks like.

use serde_json::{Value, json};
use toolnexus::adapters::{self, spec_of};
use toolnexus::{FnTool, Tool, Toolkit, model::ToolSpec};

use crate::support::RawTool;

fn tool(name: &str, description: &str, schema: Value) -> FnTool {
    FnTool::builder(name)
        .description(description)
        .schema(schema)
        .handler(|_, _| async { "" })
        .build()
        .unwrap()
}

fn weather() -> FnTool {
    tool(
        "get_weather",
        "Current weather for a city.",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"]
        }),
    )
}

fn ping() -> FnTool {
    tool(
        "ping",
        "Pings.",
        json!({"type": "object", "properties": {}}),
    )
}

fn two_tools() -> Toolkit {
    Toolkit::builder()
        .tool(weather())
        .tool(ping())
        .build()
        .unwrap()
}

// schemas are written with their keys sorted (in every build of serde_json)
const WEATHER_SCHEMA: &str = r#"{"properties":{"city":{"description":"The city.","type":"string"}},"required":["city"],"type":"object"}"#;
const PING_SCHEMA: &str = r#"{"properties":{},"type":"object"}"#;

#[test]
fn empty_toolkits() {
    let kit = Toolkit::new();
    assert_eq!(kit.to_openai().unwrap().to_string(), "[]");
    assert_eq!(kit.to_anthropic().unwrap().to_string(), "[]");
    assert_eq!(
        kit.to_gemini_raw().unwrap().to_string(),
        r#"[{"functionDeclarations":[]}]"#
    );
    assert_eq!(kit.to_openai_strict().unwrap().to_string(), "[]");
    assert_eq!(
        kit.to_gemini().unwrap().to_string(),
        r#"[{"functionDeclarations":[]}]"#
    );
    assert_eq!(adapters::openai(&[]).unwrap().to_string(), "[]");
    assert_eq!(adapters::anthropic(&[]).unwrap().to_string(), "[]");
    assert_eq!(
        adapters::gemini_raw(&[]).unwrap().to_string(),
        r#"[{"functionDeclarations":[]}]"#
    );
    assert_eq!(
        adapters::gemini(&[]).unwrap().to_string(),
        r#"[{"functionDeclarations":[]}]"#
    );
}

#[test]
fn openai_shape_in_tool_order() {
    assert_eq!(
        two_tools().to_openai().unwrap().to_string(),
        format!(
            r#"[{{"type":"function","function":{{"name":"get_weather","description":"Current weather for a city.","parameters":{WEATHER_SCHEMA}}}}},{{"type":"function","function":{{"name":"ping","description":"Pings.","parameters":{PING_SCHEMA}}}}}]"#
        )
    );
}

#[test]
fn anthropic_shape_in_tool_order() {
    assert_eq!(
        two_tools().to_anthropic().unwrap().to_string(),
        format!(
            r#"[{{"name":"get_weather","description":"Current weather for a city.","input_schema":{WEATHER_SCHEMA}}},{{"name":"ping","description":"Pings.","input_schema":{PING_SCHEMA}}}]"#
        )
    );
}

#[test]
fn gemini_raw_shape_has_one_wrapper_in_tool_order() {
    assert_eq!(
        two_tools().to_gemini_raw().unwrap().to_string(),
        format!(
            r#"[{{"functionDeclarations":[{{"name":"get_weather","description":"Current weather for a city.","parameters":{WEATHER_SCHEMA}}},{{"name":"ping","description":"Pings.","parameters":{PING_SCHEMA}}}]}}]"#
        )
    );
}

#[test]
fn order_follows_the_toolkit_not_the_names() {
    let kit = Toolkit::builder()
        .tool(tool("zeta", "Z.", json!({"type": "object"})))
        .tool(tool("alpha", "A.", json!({"type": "object"})))
        .tool(tool("mid", "M.", json!({"type": "object"})))
        .build()
        .unwrap();
    let names = |v: Value, pointer: &str| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t.pointer(pointer).unwrap().as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(kit.to_openai().unwrap().into_value(), "/function/name"),
        ["zeta", "alpha", "mid"]
    );
    assert_eq!(
        names(kit.to_anthropic().unwrap().into_value(), "/name"),
        ["zeta", "alpha", "mid"]
    );
    let gemini = kit.to_gemini().unwrap();
    assert_eq!(gemini.as_array().unwrap().len(), 1);
    assert_eq!(
        names(gemini[0]["functionDeclarations"].clone(), "/name"),
        ["zeta", "alpha", "mid"]
    );
    assert_eq!(
        names(
            kit.to_openai_strict().unwrap().into_value(),
            "/function/name"
        ),
        ["zeta", "alpha", "mid"]
    );
}

/// A [`RawTool`] whose schema carries `$schema` and `title`, as generators emit them.
fn titled(schema: Value) -> RawTool {
    RawTool {
        name: "titled".to_owned(),
        description: "Has a title.",
        schema,
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)] // only the schema is used
struct Args {
    n: i32,
}

#[test]
fn every_schema_handed_to_an_adapter_is_a_root_object_without_schema_or_title() {
    let titled = titled(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {"n": {"type": "integer", "title": "N"}}
    }));
    let spec = spec_of(&titled);
    assert_eq!(
        spec,
        ToolSpec::new(
            "titled",
            "Has a title.",
            // nested titles are the schema's own business; only the root ones go
            json!({"type": "object", "properties": {"n": {"type": "integer", "title": "N"}}})
        )
    );
    let kit = Toolkit::from_tools([titled]).unwrap();
    assert_eq!(
        kit.to_anthropic().unwrap().to_string(),
        r#"[{"name":"titled","description":"Has a title.","input_schema":{"properties":{"n":{"title":"N","type":"integer"}},"type":"object"}}]"#
    );
    assert_eq!(kit.specs(), vec![spec]);
    // the tool itself is untouched
    assert_eq!(kit.tools()[0].input_schema()["title"], "Args");

    // a schema built from a Rust type has neither, and a root object type
    let generated = FnTool::builder("gen")
        .description("Generated.")
        .schema_for::<Args>()
        .handler(|_, _| async { "" })
        .build()
        .unwrap();
    assert_eq!(
        spec_of(&generated).parameters.to_string(),
        r#"{"properties":{"n":{"format":"int32","type":"integer"}},"required":["n"],"type":"object"}"#
    );
}

#[test]
fn spec_based_adapters_match_the_toolkit_methods() {
    let kit = two_tools();
    let specs = kit.specs();
    assert_eq!(adapters::openai(&specs).unwrap(), kit.to_openai().unwrap());
    assert_eq!(
        adapters::anthropic(&specs).unwrap(),
        kit.to_anthropic().unwrap()
    );
    assert_eq!(
        adapters::gemini_raw(&specs).unwrap(),
        kit.to_gemini_raw().unwrap()
    );
    assert_eq!(
        adapters::openai_strict(&specs).unwrap(),
        kit.to_openai_strict().unwrap()
    );
    assert_eq!(adapters::gemini(&specs).unwrap(), kit.to_gemini().unwrap());
    // a spec rewritten by hand (what a before_llm hook may do) is used as given
    let custom = [ToolSpec::new(
        "x",
        "X.",
        json!({"type": "object", "properties": {}}),
    )];
    assert_eq!(
        adapters::anthropic(&custom).unwrap().to_string(),
        r#"[{"name":"x","description":"X.","input_schema":{"properties":{},"type":"object"}}]"#
    );
}

#[test]
fn openai_strict_shape_in_tool_order() {
    assert_eq!(
        two_tools().to_openai_strict().unwrap().to_string(),
        r#"[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"additionalProperties":false,"properties":{"city":{"description":"The city.","type":"string"}},"required":["city"],"type":"object"},"strict":true}},{"type":"function","function":{"name":"ping","description":"Pings.","parameters":{"additionalProperties":false,"properties":{},"required":[],"type":"object"},"strict":true}}]"#
    );
}

#[test]
fn gemini_shape_is_lowered_in_tool_order() {
    assert_eq!(
        two_tools().to_gemini().unwrap().to_string(),
        format!(
            r#"[{{"functionDeclarations":[{{"name":"get_weather","description":"Current weather for a city.","parameters":{WEATHER_SCHEMA}}},{{"name":"ping","description":"Pings.","parameters":{{"type":"object"}}}}]}}]"#
        )
    );
}

#[test]
fn a_lowering_error_names_the_first_failing_tool() {
    let map = tool(
        "tag_counts",
        "Counts tags.",
        json!({
            "type": "object",
            "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer"}}}
        }),
    );
    let kit = Toolkit::builder()
        .tool(ping())
        .tool(map)
        .tool(weather())
        .build()
        .unwrap();
    assert_eq!(
        kit.to_openai_strict().unwrap_err().to_string(),
        "tool `tag_counts` cannot be sent to openai strict: a map (`additionalProperties` set to a schema or `true`; strict mode only has fixed properties) at /properties/counts"
    );
    // the plain shapes still pass the schema as it is
    assert_eq!(
        kit.to_openai().unwrap()[1]["function"]["parameters"]["properties"]["counts"],
        json!({"type": "object", "additionalProperties": {"type": "integer"}})
    );
    // Gemini drops `additionalProperties`
    assert_eq!(
        kit.to_gemini().unwrap()[0]["functionDeclarations"][1]["parameters"],
        json!({"type": "object", "properties": {"counts": {"type": "object"}}})
    );
}

#[test]
fn to_gemini_is_the_safe_form_and_the_raw_form_says_so() {
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)] // only the schema is used
    struct Find {
        near: Option<String>,
    }
    let kit = Toolkit::builder()
        .tool(
            FnTool::builder("find")
                .description("Finds.")
                .schema_for::<Find>()
                .handler(|_, _| async { "" })
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let params =
        |v: Value| v[0]["functionDeclarations"][0]["parameters"]["properties"]["near"].clone();
    assert_eq!(
        params(kit.to_gemini_raw().unwrap().into_value()),
        json!({"type": ["string", "null"]})
    );
    assert_eq!(
        params(kit.to_gemini().unwrap().into_value()),
        json!({"type": "string", "nullable": true})
    );
}

#[test]
fn a_fn_tool_without_a_schema_takes_no_arguments_like_a_parameterless_tool() {
    /// Pings.
    #[toolnexus::tool]
    fn pinger() -> String {
        String::new()
    }
    let by_hand = FnTool::builder("ping")
        .description("Pings.")
        .handler(|_, _| async { "" })
        .build()
        .unwrap();
    let expected = r#"{"additionalProperties":false,"properties":{},"type":"object"}"#;
    assert_eq!(by_hand.input_schema().to_string(), expected);
    assert_eq!(Pinger.input_schema().to_string(), expected);
}

/// Every adapter checks what its provider would refuse the whole request for, so a spec a hook
/// rewrote fails before anything is sent, naming the tool.
#[test]
fn every_adapter_refuses_what_its_provider_would_refuse() {
    type Adapter = fn(&[ToolSpec]) -> toolnexus::Result<adapters::ProviderTools>;
    let ok = ToolSpec::new("ping", "Pings.", json!({"type": "object"}));
    let all: [(&str, Adapter); 5] = [
        ("openai", adapters::openai),
        ("anthropic", adapters::anthropic),
        ("gemini_raw", adapters::gemini_raw),
        ("openai_strict", adapters::openai_strict),
        ("gemini", adapters::gemini),
    ];
    for (which, adapter) in all {
        let err = |specs: &[ToolSpec]| match adapter(specs) {
            Err(e) => e.to_string(),
            Ok(tools) => panic!("{which} took {tools}"),
        };
        assert_eq!(
            err(&[
                ok.clone(),
                ToolSpec::new("get weather", "W.", json!({"type": "object"}))
            ]),
            "invalid tool name `get weather`: character ' ' at index 3 is not one of [A-Za-z0-9_-]",
            "{which}"
        );
        assert_eq!(
            err(&[ok.clone(), ok.clone()]),
            "duplicate tool name `ping`: every tool of a toolkit needs its own name",
            "{which}"
        );
        assert_eq!(
            err(&[ToolSpec::new("s", "S.", json!({"type": "string"}))]),
            r#"invalid input schema for tool `s`: the provider needs parameters with root `"type":"object"`, found root `"type":"string"`"#,
            "{which}"
        );
        assert_eq!(
            err(&[ToolSpec::new("s", "S.", json!({"properties": {}}))]),
            r#"invalid input schema for tool `s`: the provider needs parameters with root `"type":"object"`, found a schema without `type`"#,
            "{which}"
        );
        assert_eq!(
            err(&[ToolSpec::new("s", "S.", json!([1]))]),
            r#"invalid input schema for tool `s`: the provider needs parameters with root `"type":"object"`, found an array instead of a schema"#,
            "{which}"
        );
        // a name that starts with a digit: OpenAI and Anthropic take it, Gemini does not
        let digit = [ToolSpec::new(
            "2fa_check",
            "2FA.",
            json!({"type": "object"}),
        )];
        if which.starts_with("gemini") {
            assert_eq!(
                err(&digit),
                "invalid tool name `2fa_check`: Gemini needs a name that starts with a letter or `_`",
            );
        } else {
            assert!(
                adapter(&digit)
                    .unwrap()
                    .to_string()
                    .contains(r#""name":"2fa_check""#),
                "{which}"
            );
        }
    }
    // through a toolkit: its own tools pass every check but Gemini's first character
    let kit = Toolkit::builder()
        .tool(tool("2fa_check", "Checks.", json!({"type": "object"})))
        .build()
        .unwrap();
    assert!(
        kit.to_openai().is_ok() && kit.to_anthropic().is_ok() && kit.to_openai_strict().is_ok()
    );
    assert_eq!(
        kit.to_gemini().unwrap_err().to_string(),
        "invalid tool name `2fa_check`: Gemini needs a name that starts with a letter or `_`"
    );
}
