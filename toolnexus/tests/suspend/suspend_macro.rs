//! `suspend!`: the Suspension it builds, every option, every return path, run-time errors.

use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::{
    Context, FnTool, Form, IntoToolResult, Request, Suspension, Tool, ToolResult, suspend,
    suspend::SuspendError,
};

#[derive(Form)]
#[allow(dead_code)] // only its schema is used
struct Trip {
    /// Where to.
    city: String,
    nights: u8,
}

fn wire(s: Suspension) -> String {
    serde_json::to_string(&s.into_tool_result()).unwrap()
}

#[test]
fn input_with_a_literal_prompt() {
    let s = suspend!(input "Which city?", id = "r1");
    assert_eq!(format!("{s}"), "Input required: Which city?");
    assert_eq!(
        wire(s),
        r#"{"output":"Input required: Which city?","isError":true,"metadata":{"pending":{"id":"r1","kind":"input","prompt":"Which city?"}}}"#
    );
}

#[test]
fn each_known_kind_and_its_output() {
    let url = "https://example.com/oauth/authorize";
    let cases = [
        (
            suspend!(input "Which city?"),
            "input",
            "Input required: Which city?",
        ),
        (
            suspend!(approval "Delete 3 files?"),
            "approval",
            "Approval required: Delete 3 files?",
        ),
        (
            suspend!(authorization, url = url),
            "authorization",
            "Login required: https://example.com/oauth/authorize",
        ),
        (
            suspend!(question "Aisle or window?"),
            "question",
            "Aisle or window?",
        ),
        (
            suspend!("review" "Check the draft"),
            "review",
            "Check the draft",
        ),
    ];
    for (s, kind, output) in cases {
        let r = s.into_tool_result();
        assert_eq!(r.output, output);
        assert!(r.is_error);
        assert_eq!(r.pending().unwrap().kind, kind);
    }
}

#[test]
fn authorization_default_and_custom_prompt() {
    let s = suspend!(authorization, url = "https://x/login", id = "r1");
    assert_eq!(
        serde_json::to_string(s.request().unwrap()).unwrap(),
        r#"{"id":"r1","kind":"authorization","prompt":"Login required: https://x/login","url":"https://x/login"}"#
    );
    let s = suspend!(authorization "Connect your GitHub account to continue", url = "https://x/login", id = "r2");
    let r = s.into_tool_result();
    assert_eq!(r.output, "Login required: https://x/login");
    assert_eq!(
        serde_json::to_string(r.pending().unwrap()).unwrap(),
        r#"{"id":"r2","kind":"authorization","prompt":"Connect your GitHub account to continue","url":"https://x/login"}"#
    );
}

#[test]
fn prompt_from_any_string_expression() {
    let flight = "AI-503";
    let s = suspend!(approval format!("Book {flight}?"), id = String::from("r1"));
    assert_eq!(s.request().unwrap().prompt, "Book AI-503?");
    let owned = String::from("Which seat?");
    let s = suspend!(input owned.clone());
    assert_eq!(s.request().unwrap().prompt, "Which seat?");
}

#[test]
fn data_schema_and_expiry() {
    #[derive(serde::Serialize)]
    struct Extra {
        flight: &'static str,
    }
    let before = SystemTime::now();
    let s = suspend!(
        input "Where to?",
        data = Extra { flight: "AI-503" },
        schema = Trip,
        expires_in = Duration::from_secs(3600),
        id = "r1",
    );
    let req = s.request().unwrap();
    assert_eq!(
        serde_json::to_value(req.data.as_ref().unwrap()).unwrap(),
        json!({
            "flight": "AI-503",
            "schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "Where to."},
                    "nights": {"type": "integer"}
                },
                "required": ["city", "nights"]
            }
        })
    );
    let at = req.expires_at_time().unwrap();
    let expected = before + Duration::from_secs(3600);
    let diff = at.duration_since(expected).unwrap_or_else(|e| e.duration());
    assert!(
        diff <= Duration::from_secs(2),
        "expiresAt {:?}",
        req.expires_at
    );
    assert!(req.expires_at.as_deref().unwrap().ends_with('Z'));
}

#[test]
fn data_must_be_an_object() {
    let s = suspend!(input "Which city?", data = vec![1, 2]);
    assert_eq!(
        s.error(),
        Some(&SuspendError::DataNotObject { found: "an array" })
    );
    let r = s.into_tool_result();
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        "invalid suspension: `data` must serialize to a JSON object, found an array"
    );
}

#[test]
fn data_that_cannot_serialize_is_a_failure() {
    struct Bad;
    impl serde::Serialize for Bad {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no way"))
        }
    }
    let r = suspend!(input "x", data = Bad).into_tool_result();
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        "invalid suspension: `data` could not be serialized: no way"
    );
}

#[test]
fn data_schema_key_conflicts_with_schema_option() {
    let r = suspend!(input "x", data = json!({"schema": {}}), schema = Trip).into_tool_result();
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        "invalid suspension: `data` already has a `schema` key; remove it or remove `schema = ..`"
    );
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Flat {
    /// The city.
    city: String,
    seat: Option<Seat>,
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
enum Seat {
    Aisle,
    Window,
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Nested {
    city: String,
    stops: Vec<String>,
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Login {
    user: String,
    password: String,
}

#[test]
fn schema_from_json_schema_is_checked_when_built() {
    let s = suspend!(input "Where?", schema = Flat);
    assert_eq!(
        serde_json::to_value(&s.request().unwrap().data).unwrap(),
        json!({"schema": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "seat": {"type": "string", "enum": ["Aisle", "Window"]}
            },
            "required": ["city"]
        }})
    );
    let r = suspend!(input "Where?", schema = Nested).into_tool_result();
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        "invalid suspension: the answer schema of `Nested` is not a flat form: field `stops` is an array; answer forms hold flat primitives only (string, number, integer, boolean, string enum)"
    );
}

#[test]
fn credential_fields_are_refused_for_every_kind_with_a_form() {
    for r in [
        suspend!(input "Log in", schema = Login).into_tool_result(),
        suspend!(question "Log in", schema = Login).into_tool_result(),
        // a form is a form, whatever the kind (issue 22)
        suspend!(approval "ok?", schema = Login).into_tool_result(),
    ] {
        assert!(r.is_failure(), "{r:?}");
        assert!(
            r.output.ends_with("request has the name `password`, which reads as the credential word `password`; secrets must never pass through answer data: use an `authorization` request with a `url` instead"),
            "{}",
            r.output
        );
    }
    // an approval without a form collects nothing: not refused
    assert!(
        suspend!(approval "Rotate the password?")
            .request()
            .is_some()
    );
}

#[test]
fn hand_built_requests_pass_the_trust_boundary_too() {
    let schema = json!({"type": "object", "properties": {"card_number": {"type": "string"}}});
    let req = Request::input("Pay").with_data_entry("schema", schema);
    // through ToolResult::suspended
    let r = ToolResult::suspended(req.clone());
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        "invalid suspension: `data.schema.properties.card_number` of the `input` request has the name `card_number`, which reads as the credential word `cardnumber`; secrets must never pass through answer data: use an `authorization` request with a `url` instead"
    );
    // through Suspension::new / From<Request>
    assert!(Suspension::from(req.clone()).request().is_none());
    // through IntoToolResult for Request
    assert!(req.clone().into_tool_result().is_failure());
}

#[tokio::test]
async fn a_result_built_field_by_field_is_checked_by_the_toolkit() {
    let schema = json!({"type": "object", "properties": {"apiKey": {"type": "string"}}});
    let tool = FnTool::builder("sneaky")
        .description("Builds a suspension by hand.")
        .handler(move |_, _| {
            let schema = schema.clone();
            async move {
                let mut r = ToolResult::suspended(Request::input("Key?").with_id("r1"));
                let pending = r.metadata.as_mut().unwrap().pending.as_mut().unwrap();
                pending.data = Some(Box::new(
                    json!({"schema": schema}).as_object().unwrap().clone(),
                ));
                r
            }
        })
        .build()
        .unwrap();
    // the tool itself returns the bad suspension...
    let direct = tool.execute(serde_json::Map::new(), &Context::new()).await;
    assert!(direct.is_pending());
    // ...but the toolkit refuses it
    let toolkit = toolnexus::Toolkit::builder().tool(tool).build().unwrap();
    let r = toolkit.execute("sneaky", json!({}), &Context::new()).await;
    assert!(r.is_failure());
    assert!(
        r.output.contains(
            "`data.schema.properties.apiKey` of the `input` request has the name `apiKey`"
        ),
        "{}",
        r.output
    );
}

fn as_tool_result() -> ToolResult {
    suspend!(input "a").into()
}

fn as_err() -> Result<String, Suspension> {
    Err(suspend!(input "b"))
}

fn with_question_mark() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let s: Result<String, Suspension> = Err(suspend!(input "c"));
    let v = s?;
    Ok(v)
}

fn as_return() -> Result<String, Suspension> {
    if true {
        return Err(suspend!(input "d"));
    }
    Ok("unreachable".to_owned())
}

#[test]
fn every_return_path_keeps_the_suspension() {
    for (r, prompt) in [
        (as_tool_result(), "a"),
        (as_err().into_tool_result(), "b"),
        (with_question_mark().into_tool_result(), "c"),
        (as_return().into_tool_result(), "d"),
    ] {
        assert_eq!(r.pending().unwrap().prompt, prompt);
        assert_eq!(r.output, format!("Input required: {prompt}"));
    }
}

#[test]
fn ids_are_fresh_per_suspension() {
    let a = suspend!(input "x");
    let b = suspend!(input "x");
    let (a, b) = (a.request().unwrap(), b.request().unwrap());
    assert!(a.id.starts_with("sus-"), "{}", a.id);
    assert_ne!(a.id, b.id);
}

#[test]
fn suspension_is_a_small_send_sync_error() {
    fn check<T: std::error::Error + Send + Sync + 'static>() {}
    check::<Suspension>();
    assert_eq!(
        std::mem::size_of::<Suspension>(),
        std::mem::size_of::<usize>()
    );
}

#[test]
fn optional_nested_objects_are_named_as_objects() {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    struct Outer {
        inner: Option<Flat>,
    }
    let r = suspend!(input "x", schema = Outer).into_tool_result();
    assert_eq!(
        r.output,
        "invalid suspension: the answer schema of `Outer` is not a flat form: field `inner` is an object; answer forms hold flat primitives only (string, number, integer, boolean, string enum)"
    );
}
