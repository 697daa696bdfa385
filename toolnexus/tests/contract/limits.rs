//! A bounded cost for any input a host or model hands in: short quotes of long values in error
//! texts, a size budget for schema lowering, one depth limit at every entry point.

#![allow(clippy::needless_pass_by_value, clippy::unused_async)]

use serde_json::{Value, json};
use toolnexus::adapters::{gemini_schema, openai_strict_schema};
use toolnexus::limits::MAX_DEPTH;
use toolnexus::{Answer, Context, Toolkit, tool};

/// Counts seats.
#[tool]
fn seats(
    /// How many.
    n: u8,
) -> String {
    n.to_string()
}

/// Echoes any JSON.
#[tool]
fn echo(
    /// Anything.
    value: Value,
) -> String {
    value.to_string()
}

fn kit() -> Toolkit {
    Toolkit::builder().tool(Seats).tool(Echo).build().unwrap()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Runs `f` on a thread with a 2 MiB stack (the default of spawned threads), as a host would.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .expect("no stack overflow")
}

fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = json!({"a": v});
    }
    v
}

#[test]
fn a_50_mb_string_for_a_u8_is_quoted_short() {
    let big = "9".repeat(50 << 20);
    let r = block_on(kit().execute("seats", json!({"n": big}), &Context::new()));
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        format!(
            "invalid arguments for seats: n: invalid type: string \"{}…\" (52428800 bytes), expected u8",
            "9".repeat(64)
        )
    );
}

#[test]
fn a_1_mb_unknown_tool_name_is_quoted_short() {
    let name = "x".repeat(1 << 20);
    let r = block_on(kit().execute(&name, json!({}), &Context::new()));
    assert_eq!(
        r.output,
        format!("Unknown tool: {}… (1048576 bytes)", "x".repeat(64))
    );
}

#[test]
fn a_1_mb_unknown_argument_name_is_quoted_short() {
    let key = "k".repeat(1 << 20);
    let r = block_on(kit().execute("seats", json!({"n": 1, key: 2}), &Context::new()));
    assert!(r.is_failure());
    assert!(r.output.len() < 300, "{} bytes", r.output.len());
    assert!(
        r.output
            .contains(&format!("`{}…` (1048576 bytes)", "k".repeat(64))),
        "{}",
        r.output
    );
}

#[test]
fn answer_data_errors_quote_short() {
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Trip {
        nights: u8,
    }
    let a = Answer::accept("r1", json!({"nights": "z".repeat(1 << 20)}));
    let err = a.data_as::<Trip>().unwrap_err();
    assert_eq!(err.path(), "nights");
    assert_eq!(
        err.message(),
        format!(
            "invalid type: string \"{}…\" (1048576 bytes), expected u8",
            "z".repeat(64)
        )
    );
}

// ---- one depth limit, on a 2 MiB thread, at 600 levels

#[test]
fn deep_tool_arguments_fail_instead_of_overflowing() {
    let out = on_small_stack(|| {
        let args = json!({"value": nested(600)});
        let r = block_on(kit().execute("echo", args, &Context::new()));
        (r.is_failure(), r.output)
    });
    assert_eq!(
        out,
        (
            true,
            format!(
                "invalid arguments for echo: the arguments nest deeper than {MAX_DEPTH} levels"
            )
        )
    );
    // at the limit, the call runs
    let r = block_on(kit().execute(
        "echo",
        json!({"value": nested(MAX_DEPTH - 2)}),
        &Context::new(),
    ));
    assert!(!r.is_error, "{}", r.output);
}

#[test]
fn deep_answer_data_fails_instead_of_overflowing() {
    let msg = on_small_stack(|| {
        let a = Answer::accept("r1", nested(600));
        a.data_as::<Value>().unwrap_err().to_string()
    });
    assert_eq!(
        msg,
        format!("invalid answer data at `.`: the data nests deeper than {MAX_DEPTH} levels")
    );
}

#[test]
fn deep_schemas_fail_instead_of_overflowing() {
    let (check, gemini, strict) = on_small_stack(|| {
        let schema = json!({"type": "object", "properties": {"x": nested(600)}});
        (
            toolnexus::schema::check_input_schema("deep", &schema)
                .unwrap_err()
                .to_string(),
            gemini_schema("deep", &schema).unwrap_err().to_string(),
            openai_strict_schema("deep", &schema)
                .unwrap_err()
                .to_string(),
        )
    });
    assert_eq!(
        check,
        format!(
            "invalid input schema for tool `deep`: the schema nests deeper than {MAX_DEPTH} levels"
        )
    );
    assert!(
        gemini.contains("`deep`")
            && gemini.contains(&format!("a schema nesting deeper than {MAX_DEPTH} levels")),
        "{gemini}"
    );
    assert!(
        strict.contains("`deep`")
            && strict.contains(&format!("a schema nesting deeper than {MAX_DEPTH} levels")),
        "{strict}"
    );
}

#[test]
fn a_chain_of_inlined_refs_fails_at_the_depth_limit() {
    let (gemini, strict) = on_small_stack(|| {
        let mut defs = serde_json::Map::new();
        for i in 0..600 {
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {"next": {"$ref": format!("#/$defs/D{}", i + 1)}}}),
            );
        }
        defs.insert("D600".into(), json!({"type": "string"}));
        let schema =
            json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D0"}}, "$defs": defs});
        (
            gemini_schema("chain", &schema).unwrap_err().to_string(),
            openai_strict_schema("chain", &schema)
                .unwrap_err()
                .to_string(),
        )
    });
    for err in [gemini, strict] {
        assert!(err.contains("`chain`"), "{err}");
        assert!(
            err.contains(&format!(
                "a schema nesting deeper than {MAX_DEPTH} levels once its `$ref`s are inlined"
            )),
            "{err}"
        );
    }
}

/// `D_i = {a: D_{i+1}, b: D_{i+1}}`: a 2 KB schema that inlines to 2^18 leaves.
fn lattice(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        let next = format!("#/$defs/D{}", i + 1);
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}, "required": ["a", "b"], "additionalProperties": false}),
        );
    }
    defs.insert(format!("D{levels}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/D0"}}, "required": ["root"], "additionalProperties": false, "$defs": defs})
}

#[test]
fn a_lattice_of_definitions_fails_the_lowering_budget() {
    let schema = lattice(18);
    assert!(schema.to_string().len() < 4096);
    for err in [
        gemini_schema("lattice", &schema).unwrap_err(),
        openai_strict_schema("lattice", &schema).unwrap_err(),
    ] {
        let text = err.to_string();
        assert!(text.contains("`lattice`"), "{text}");
        assert!(
            text.contains("a schema that grows too large when its `$ref`s are inlined"),
            "{text}"
        );
    }
    // a small lattice still inlines
    let small = gemini_schema("lattice", &lattice(4)).unwrap();
    assert!(!small.to_string().contains("$ref"));
}
