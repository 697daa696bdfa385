//! The HTTP providers' requests and reply parsing, against the fake provider: bodies,
//! headers, paths, tool schemas, tool results and system prompt in each style.

use serde_json::json;
use toolnexus::{
    HttpProvider, Message, Model, ModelRequest, Usage, model::ModelTurn, model::ToolCall,
    model::ToolSpec, providers::HttpProviderBuilder,
};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, anthropic, openai};

fn spec() -> ToolSpec {
    ToolSpec::new(
        "book_flight",
        "Books a flight.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

/// A transcript with every kind of message: system, user, an assistant turn with text and two
/// tool calls (one with arguments that were not valid JSON), their two results (one an
/// error), and a final assistant answer and user follow-up.
fn transcript() -> Vec<Message> {
    vec![
        Message::system("You book flights."),
        Message::user("Book me to Oslo"),
        Message::assistant_tool_calls(
            Some("Let me check.".to_owned()),
            vec![
                ToolCall::new("call_a", "book_flight", json!({"city": "Oslo"})),
                ToolCall::new("call_b", "book_flight", json!("{city: Oslo")),
            ],
        ),
        Message::tool_result("call_a", "booked AI-503", false),
        Message::tool_result("call_b", "invalid arguments", true),
        Message::assistant("Done."),
        Message::user("Thanks"),
    ]
}

/// `builder` without a key (none from the environment either), built.
fn keyless(builder: HttpProviderBuilder) -> HttpProvider {
    builder.key_from_env(false).build().unwrap()
}

/// Two turns of `provider` on [`hi_with_spec`].
async fn two_turns(provider: &HttpProvider) -> [ModelTurn; 2] {
    let request = hi_with_spec();
    let first = provider.complete(&request, None).await.unwrap();
    let second = provider.complete(&request, None).await.unwrap();
    [first, second]
}

/// A request saying `hi`, offering the tool of [`spec`].
fn hi_with_spec() -> ModelRequest {
    ModelRequest::new("m", vec![Message::user("hi")], vec![spec()])
}

#[tokio::test]
async fn openai_request_body_headers_and_path() {
    let fake = FakeProvider::scripted([FakeReply::json(openai::text("ok", 1, 1))]).await;
    let provider = HttpProvider::openai(format!("{}/v1", fake.url()))
        .api_key("sk-test-openai")
        .header("HTTP-Referer", "https://example.test")
        .build()
        .unwrap();
    let request = ModelRequest::new("vendor/model:free v2", transcript(), vec![spec()]);
    provider.complete(&request, None).await.unwrap();

    let sent = &fake.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test-openai"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("http-referer"), Some("https://example.test"));
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(sent.header("anthropic-version"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "vendor/model:free v2",
            "messages": [
                {"role": "system", "content": "You book flights."},
                {"role": "user", "content": "Book me to Oslo"},
                {"role": "assistant", "content": "Let me check.", "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "book_flight", "arguments": "{\"city\":\"Oslo\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "book_flight", "arguments": "{city: Oslo"}},
                ]},
                {"role": "tool", "tool_call_id": "call_a", "content": "booked AI-503"},
                {"role": "tool", "tool_call_id": "call_b", "content": "invalid arguments"},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": "Thanks"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "book_flight",
                "description": "Books a flight.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            }}],
        })
    );
}

#[tokio::test]
async fn anthropic_request_body_headers_and_path() {
    let fake = FakeProvider::scripted([
        FakeReply::json(anthropic::text("ok", 1, 1)),
        FakeReply::json(anthropic::text("ok", 1, 1)),
    ])
    .await;
    let provider = fake
        .anthropic("sk-ant-test")
        .max_tokens(1000)
        .build()
        .unwrap();
    let request = ModelRequest::new("claude-sonnet-4-5", transcript(), vec![spec()]);
    provider.complete(&request, None).await.unwrap();

    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "system": "You book flights.",
            "messages": [
                {"role": "user", "content": "Book me to Oslo"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "call_a", "name": "book_flight", "input": {"city": "Oslo"}},
                    {"type": "tool_use", "id": "call_b", "name": "book_flight", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_a", "content": "booked AI-503", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "call_b", "content": "invalid arguments", "is_error": true},
                ]},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": "Thanks"},
            ],
            "tools": [{
                "name": "book_flight",
                "description": "Books a flight.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            }],
        })
    );

    // a base URL that already ends in /v1 gets no second /v1
    let provider = HttpProvider::anthropic(format!("{}/v1/", fake.url()))
        .api_key("k")
        .build()
        .unwrap();
    let request = ModelRequest::new("m", vec![Message::user("hi")], vec![]);
    provider.complete(&request, None).await.unwrap();
    let sent = &fake.requests()[1];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(
        sent.body,
        json!({"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]})
    );
}

#[tokio::test]
async fn the_model_id_is_sent_verbatim_on_every_turn_and_body_fields_are_merged() {
    let fake = FakeProvider::start().await;
    fake.script((0..3).map(|_| FakeReply::json(openai::text("ok", 1, 1))));
    let provider = HttpProvider::openai(fake.url())
        .key_from_env(false)
        .model("fallback-model")
        .body_field("temperature", json!(0.25))
        .build()
        .unwrap();
    for model in ["Qwen/Qwen3-8B", "llama3.2:3b"] {
        let request = ModelRequest::new(model, vec![Message::user("hi")], vec![]);
        provider.complete(&request, None).await.unwrap();
    }
    let request = ModelRequest::new("", vec![Message::user("hi")], vec![]);
    provider.complete(&request, None).await.unwrap();

    let sent: Vec<_> = fake.requests().into_iter().map(|r| r.body).collect();
    for (body, model) in sent
        .iter()
        .zip(["Qwen/Qwen3-8B", "llama3.2:3b", "fallback-model"])
    {
        assert_eq!(
            body,
            &json!({"model": model, "messages": [{"role": "user", "content": "hi"}], "temperature": 0.25})
        );
    }
    // no key anywhere: no auth header
    assert_eq!(fake.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn a_request_without_any_model_id_is_a_config_error() {
    let fake = FakeProvider::start().await;
    let provider = keyless(HttpProvider::openai(fake.url()));
    let request = ModelRequest::new("", vec![Message::user("hi")], vec![]);
    let err = provider.complete(&request, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "no model id: set one on the client (`.model_name(..)`) or on the provider (`.model(..)`)"
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn openai_replies_parse_into_turns() {
    let fake = FakeProvider::scripted([
        FakeReply::json(openai::text("Hello there", 12, 3)),
        FakeReply::json(openai::tool_calls(
            &[
                ("call_1", "book_flight", r#"{"city":"Oslo"}"#),
                ("call_2", "book_flight", "{not json"),
                ("call_3", "list_flights", ""),
            ],
            20,
            7,
        )),
    ])
    .await;
    let [hello, turn] = two_turns(&keyless(HttpProvider::openai(fake.url()))).await;
    assert_eq!(
        hello,
        ModelTurn::text("Hello there").with_usage(Usage::new(12, 3))
    );

    assert_eq!(
        turn,
        ModelTurn::tool_calls(vec![
            ToolCall::new("call_1", "book_flight", json!({"city": "Oslo"})),
            ToolCall::new("call_2", "book_flight", json!("{not json")),
            ToolCall::new("call_3", "list_flights", json!({})),
        ])
        .with_usage(Usage::new(20, 7))
    );
}

#[tokio::test]
async fn anthropic_replies_parse_into_turns() {
    let fake = FakeProvider::scripted([
        FakeReply::json(anthropic::text("Hello there", 12, 3)),
        FakeReply::json(anthropic::tool_uses(
            Some("Booking."),
            &[
                ("toolu_1", "book_flight", json!({"city": "Oslo"})),
                ("toolu_2", "book_flight", json!({"city": "Rome"})),
            ],
            30,
            9,
        )),
    ])
    .await;
    let [hello, turn] = two_turns(&keyless(HttpProvider::anthropic(fake.url()))).await;
    assert_eq!(
        hello,
        ModelTurn::text("Hello there").with_usage(Usage::new(12, 3))
    );

    let mut expected = ModelTurn::tool_calls(vec![
        ToolCall::new("toolu_1", "book_flight", json!({"city": "Oslo"})),
        ToolCall::new("toolu_2", "book_flight", json!({"city": "Rome"})),
    ])
    .with_usage(Usage::new(30, 9));
    expected.text = Some("Booking.".to_owned());
    assert_eq!(turn, expected);
}

#[tokio::test]
async fn a_reply_without_a_message_is_a_transport_error() {
    let fake = FakeProvider::scripted([FakeReply::json(json!({"choices": []}))]).await;
    let provider = keyless(HttpProvider::openai(fake.url()));
    let request = ModelRequest::new("m", vec![Message::user("hi")], vec![]);
    let err = provider.complete(&request, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "transport error: the provider's reply has no `choices[0].message`"
    );
}

#[tokio::test]
async fn a_client_without_a_model_name_sends_the_providers_default_model() {
    let fake = FakeProvider::scripted([
        FakeReply::json(openai::text("ok", 1, 1)),
        FakeReply::json(openai::text("ok", 1, 1)),
    ])
    .await;
    let provider = fake.openai("k").model("gpt-default").build().unwrap();
    assert_eq!(provider.default_model(), Some("gpt-default"));
    let client = toolnexus::Client::builder(provider.clone())
        .build()
        .unwrap();
    let result = client.run("hi", &toolnexus::Toolkit::new()).await.unwrap();
    assert_eq!(result.model, "gpt-default");
    assert_eq!(fake.requests()[0].body["model"], json!("gpt-default"));
    // a name given on the client wins
    let client = toolnexus::Client::builder(provider)
        .model_name("gpt-chosen")
        .build()
        .unwrap();
    client.run("hi", &toolnexus::Toolkit::new()).await.unwrap();
    assert_eq!(fake.requests()[1].body["model"], json!("gpt-chosen"));
    // a provider built for no model has no default, and the client says what to do
    let bare = fake.openai("k").build().unwrap();
    assert_eq!(bare.default_model(), None);
    let err = toolnexus::Client::builder(bare).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "a client needs a model name: call `.model_name(..)` (any label for an in-process model), or build the provider with `.model(..)`"
    );
}

/// A spec the provider would refuse (a hook renamed the tool outside its pattern) fails before
/// anything is sent, naming the tool, in both styles.
#[tokio::test]
async fn a_spec_the_provider_would_refuse_is_not_sent() {
    let fake = FakeProvider::scripted([
        FakeReply::json(openai::text("ok", 1, 1)),
        FakeReply::json(anthropic::text("ok", 1, 1)),
    ])
    .await;
    let renamed = ToolSpec::new("book flight", "Books.", json!({"type": "object"}));
    let request = ModelRequest::new("m", vec![Message::user("hi")], vec![spec(), renamed]);
    for provider in [
        keyless(HttpProvider::openai(fake.url())),
        keyless(HttpProvider::anthropic(fake.url())),
    ] {
        let err = provider.complete(&request, None).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid tool name `book flight`: character ' ' at index 4 is not one of [A-Za-z0-9_-]"
        );
    }
    assert!(fake.requests().is_empty());
}
