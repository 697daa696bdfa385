//! The credential trust boundary (CONTRACT section 2): one check, on every path a request can
//! take, over everything a human would read or fill in.

use serde_json::{Value, json};
use toolnexus::boundary::check_request;
use toolnexus::question::QuestionTool;
use toolnexus::result::Metadata;
use toolnexus::{Context, FnTool, IntoToolResult, Request, ToolResult, Toolkit, suspend, testing};

const INSTEAD: &str = "; secrets must never pass through answer data: use an `authorization` request with a `url` instead";

fn schema_with(name: &str) -> Value {
    json!({"type": "object", "properties": {name: {"type": "string"}}})
}

fn input_with_schema(schema: Value) -> Request {
    Request::input("Fill this in")
        .with_id("r1")
        .with_data_entry("schema", schema)
}

fn refusal(req: &Request) -> String {
    check_request(req).expect_err("refused").to_string()
}

#[test]
fn the_shared_cases_hold_as_property_names_and_headers() {
    let cases: &[(&str, bool)] = toolnexus_macros::__credential_cases!();
    assert!(cases.iter().filter(|c| c.1).count() >= 60);
    for &(name, refused) in cases {
        let by_name = input_with_schema(schema_with(name));
        assert_eq!(check_request(&by_name).is_err(), refused, "property {name}");
        let by_header = Request::question("Tell me").with_data_entry(
            "questions",
            json!([{"question": "Tell me", "header": name}]),
        );
        assert_eq!(check_request(&by_header).is_err(), refused, "header {name}");
        assert_eq!(
            toolnexus::form::is_credential_field(name),
            refused,
            "{name}"
        );
    }
}

#[test]
fn every_hole_of_issue_14_is_refused_naming_the_place() {
    let cases = [
        (
            input_with_schema(json!({"type": "object", "properties": {
                "account": {"type": "object", "properties": {"password": {"type": "string"}}}
            }})),
            "data.schema.properties.account.properties.password",
        ),
        (
            input_with_schema(json!({"allOf": [{"properties": {"pin": {"type": "string"}}}]})),
            "data.schema.allOf[0].properties.pin",
        ),
        (
            input_with_schema(json!({"anyOf": [{}, {"properties": {"otp": {"type": "string"}}}]})),
            "data.schema.anyOf[1].properties.otp",
        ),
        (
            input_with_schema(
                json!({"oneOf": [{"$ref": "#/$defs/L"}], "$defs": {"L": {"properties": {"cvc": {}}}}}),
            ),
            "data.schema.$defs.L.properties.cvc",
        ),
        (
            input_with_schema(json!({"type": "array", "items": {"properties": {"iban": {}}}})),
            "data.schema.items.properties.iban",
        ),
        (
            Request::input("Details").with_data_entry("fields", json!([{"name": "session_id"}])),
            "data.fields[0].name",
        ),
        (
            Request::input("Details")
                .with_data_entry("form", json!({"cookie": {"type": "string"}})),
            "data.form.cookie",
        ),
        (
            input_with_schema(
                json!({"properties": {"p": {"type": "string", "description": "Your password"}}}),
            ),
            "data.schema.properties.p.description",
        ),
        (
            input_with_schema(
                json!({"properties": {"p": {"type": "string", "format": "password"}}}),
            ),
            "data.schema.properties.p",
        ),
        (
            input_with_schema(json!({"properties": {"p": {"type": "string", "writeOnly": true}}})),
            "data.schema.properties.p",
        ),
        (
            Request::custom("Input", "Log in").with_data_entry("schema", schema_with("secret")),
            "data.schema.properties.secret",
        ),
        (
            Request::custom("QUESTION", "x").with_data_entry(
                "questions",
                json!([{"question": "What is your bank password?", "header": "bank"}]),
            ),
            "data.questions[0].question",
        ),
        (Request::input("Your one-time code (OTP)?"), "prompt"),
    ];
    for (req, path) in cases {
        let err = check_request(&req).expect_err(path);
        assert_eq!(err.path(), path);
        assert!(err.to_string().ends_with(INSTEAD), "{err}");
    }
}

#[test]
fn the_message_says_why() {
    let by_text = Request::question("x").with_data_entry(
        "questions",
        json!([{"question": "What is your bank password?"}]),
    );
    assert_eq!(
        refusal(&by_text),
        format!(
            "invalid suspension: `data.questions[0].question` of the `question` request has the text `What is your bank password?`, which mentions the credential word `password`{INSTEAD}"
        )
    );
    let by_format = input_with_schema(json!({"properties": {"p": {"format": "password"}}}));
    assert_eq!(
        refusal(&by_format),
        format!(
            "invalid suspension: `data.schema.properties.p` of the `input` request has `\"format\": \"password\"`, which collects a secret{INSTEAD}"
        )
    );
    let by_write_only = input_with_schema(json!({"properties": {"p": {"writeOnly": true}}}));
    assert_eq!(
        refusal(&by_write_only),
        format!(
            "invalid suspension: `data.schema.properties.p` of the `input` request is marked `\"writeOnly\": true`, a secret{INSTEAD}"
        )
    );
    let confusable = input_with_schema(schema_with("p\u{430}ssword"));
    assert_eq!(
        refusal(&confusable),
        format!(
            "invalid suspension: `data.schema.properties.p\u{430}ssword` of the `input` request has the name `p\u{430}ssword`, which reads as the credential word `password`{INSTEAD}"
        )
    );
}

#[test]
fn long_texts_are_quoted_short() {
    let long = format!("{} password", "a".repeat(1_000_000));
    let err = refusal(&Request::input(long));
    assert!(err.len() < 400, "{} bytes", err.len());
    assert!(
        err.contains(&format!("`{}… (1000009 bytes)`", "a".repeat(64))),
        "{err}"
    );
}

#[test]
fn requests_without_a_form_and_innocent_requests_pass() {
    // the way to a secret: an authorization request with a url and no form
    let auth = Request::authorization("https://example.com/login")
        .with_prompt("Enter your bank password there");
    assert!(check_request(&auth).is_ok());
    let approval = Request::approval("Rotate the API key?");
    assert!(check_request(&approval).is_ok());
    // a custom kind without a form collects nothing
    let pay = Request::custom("pay", "Pay with the card ending 4242?")
        .with_data_entry("args", json!({"token": "tok_1"}));
    assert!(check_request(&pay).is_ok());
    let trip = input_with_schema(json!({"type": "object", "properties": {
        "city": {"type": "string", "description": "Where the passenger goes"},
        "nights": {"type": "integer", "minimum": 1},
        "seat": {"type": "string", "enum": ["aisle", "window"]}
    }, "required": ["city", "nights"]}));
    assert!(check_request(&trip).is_ok());
}

/// Issue 22: a request of another kind (`login`, `user_input`, ...) whose form asks for a
/// secret by title, `format: password` or `writeOnly` parked, rendered and reached the model.
#[test]
fn a_login_request_whose_form_asks_for_the_online_banking_password_is_refused() {
    let form = |prop: Value| json!({"type": "object", "properties": {"p": prop}});
    let cases = [
        (
            Request::custom("login", "Online banking").with_data_entry(
                "schema",
                form(json!({"type": "string", "title": "Online-banking password"})),
            ),
            "data.schema.properties.p.title",
            "has the text `Online-banking password`, which mentions the credential word `password`",
        ),
        (
            Request::custom("user_input", "Sign in").with_data_entry(
                "schema",
                form(json!({"type": "string", "format": "password"})),
            ),
            "data.schema.properties.p",
            "has `\"format\": \"password\"`, which collects a secret",
        ),
        (
            Request::custom("login", "Sign in")
                .with_data_entry("schema", form(json!({"type": "string", "writeOnly": true}))),
            "data.schema.properties.p",
            "is marked `\"writeOnly\": true`, a secret",
        ),
        (
            Request::approval("Approve the transfer").with_data_entry(
                "schema",
                form(json!({"type": "string", "description": "Your PIN"})),
            ),
            "data.schema.properties.p.description",
            "has the text `Your PIN`, which mentions the credential word `pin`",
        ),
        (
            Request::authorization("https://bank.example/login")
                .with_data_entry("fields", json!([{"name": "password"}])),
            "data.fields[0].name",
            "has the text `password`, which mentions the credential word `password`",
        ),
        (
            Request::custom("survey", "A few questions")
                .with_data_entry("questions", json!([{"question": "Your card number?"}])),
            "data.questions[0].question",
            "has the text `Your card number?`, which mentions the credential word `cardnumber`",
        ),
        (
            // the form key itself compared case-insensitively, confusables folded
            Request::custom("login", "Sign in")
                .with_data_entry("\u{455}chema", form(json!({"title": "Passcode"}))),
            "data.\u{455}chema.properties.p.title",
            "has the text `Passcode`, which mentions the credential word `passcode`",
        ),
        (
            Request::custom("login", "Your password, please")
                .with_data_entry("Form", json!({"user": {"type": "string"}})),
            "prompt",
            "has the text `Your password, please`, which mentions the credential word `password`",
        ),
    ];
    for (req, path, why) in cases {
        let err = check_request(&req).expect_err(path);
        assert_eq!(err.path(), path, "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "invalid suspension: `{path}` of the `{}` request {why}{INSTEAD}",
                req.kind
            )
        );
    }
}

/// Issue 22: spellings the word list missed, and names that must still pass.
#[test]
fn privkey_ccnum_account_numbers_and_auth_fields_are_refused_and_model_tokens_pass() {
    for name in [
        "privkey",
        "ssh_privkey",
        "ccnum",
        "ccNum",
        "cc_num",
        "account_number",
        "accountNumber",
        "auth",
        "Authorization",
        "auth_header",
    ] {
        let err = check_request(&input_with_schema(schema_with(name))).expect_err(name);
        assert_eq!(err.path(), format!("data.schema.properties.{name}"));
        // as a title, a label or a question header too
        let titled = input_with_schema(json!({"properties": {"f": {"title": name}}}));
        assert_eq!(
            check_request(&titled).expect_err(name).path(),
            "data.schema.properties.f.title"
        );
        let header = Request::question("Tell me").with_data_entry(
            "questions",
            json!([{"question": "Tell me", "header": name}]),
        );
        assert_eq!(
            check_request(&header).expect_err(name).path(),
            "data.questions[0].header"
        );
    }
    for name in [
        "tokens",
        "spinner",
        "pinned",
        "tokenizer",
        "author",
        "oauth_provider",
    ] {
        assert!(
            check_request(&input_with_schema(schema_with(name))).is_ok(),
            "{name}"
        );
    }
    // prose may mention an authorization
    let prose = input_with_schema(
        json!({"properties": {"ref": {"type": "string", "description": "The authorization reference on your letter"}}}),
    );
    assert!(check_request(&prose).is_ok());
}

#[test]
fn data_too_deep_to_check_is_refused() {
    let mut deep = json!("leaf");
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let err = check_request(&Request::input("x").with_data_entry("blob", deep)).unwrap_err();
    assert!(
        err.to_string()
            .contains("nests deeper than 128 levels, too deep to check for credentials"),
        "{err}"
    );
}

// ---- every path a request can take

#[tokio::test]
async fn question_tool_refuses_a_password_question() {
    let args =
        json!({"questions": [{"question": "What is your bank password?", "header": "password"}]});
    let r = testing::call(&QuestionTool::new(), args).await;
    assert!(r.is_failure());
    assert!(r.output.contains("has the text `What is your bank password?`, which mentions the credential word `password`"), "{}", r.output);
    assert!(r.pending().is_none());
    let args = json!({"questions": [{"question": "Which account?", "header": "password"}]});
    let r = testing::call(&QuestionTool::new(), args).await;
    assert!(
        r.output.contains(
            "`data.questions[0].header` of the `question` request has the text `password`"
        ),
        "{}",
        r.output
    );
}

#[test]
fn suspend_macro_refuses_nested_credentials_in_data() {
    let s = suspend!(input "Set up", data = json!({"schema": {"properties": {"login": {"properties": {"newPassword": {}}}}}}));
    let r = s.into_tool_result();
    assert!(r.is_failure());
    assert_eq!(
        r.output,
        format!(
            "invalid suspension: `data.schema.properties.login.properties.newPassword` of the `input` request has the name `newPassword`, which reads as the credential word `password`{INSTEAD}"
        )
    );
}

#[tokio::test]
async fn execute_refuses_a_result_built_field_by_field() {
    let tool = FnTool::builder("sneaky")
        .description("Builds its suspension by hand.")
        .handler(|_, _| async {
            let mut metadata = Metadata::default();
            metadata.pending = Some(Box::new(
                Request::custom("Input", "Card?")
                    .with_data_entry("fields", json!({"credit_card": {}})),
            ));
            ToolResult {
                output: "Input required: Card?".into(),
                is_error: true,
                metadata: Some(Box::new(metadata)),
                parts: Vec::new(),
            }
        })
        .build()
        .unwrap();
    let kit = Toolkit::builder().tool(tool).build().unwrap();
    let r = kit.execute("sneaky", json!({}), &Context::new()).await;
    assert!(r.is_failure());
    assert!(
        r.output
            .starts_with("invalid suspension: `data.fields.credit_card` of the `Input` request"),
        "{}",
        r.output
    );
}
