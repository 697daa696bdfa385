//! Streaming from the HTTP providers: text deltas in order, tool calls assembled from their
//! deltas, usage, and a connection dropped mid-stream.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{
    Error, HttpProvider, Message, Model, ModelRequest, Usage, model::ModelTurn, model::ToolCall,
    model::ToolSpec,
};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, anthropic, openai};
use toolnexus_tests::fixtures::assert_broken_mid_stream;

fn request() -> ModelRequest {
    let spec = ToolSpec::new("book_flight", "Books a flight.", json!({"type": "object"}));
    ModelRequest::new("m-1", vec![Message::user("hi")], vec![spec])
}

/// Completes `request` streaming, returning the turn (or error) and the deltas received.
async fn stream(
    provider: &HttpProvider,
    request: &ModelRequest,
) -> (Result<ModelTurn, Error>, Vec<String>) {
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let seen = deltas.clone();
    let sink = move |d: &str| seen.lock().unwrap().push(d.to_owned());
    let result = provider.complete(request, Some(&sink)).await;
    let deltas = deltas.lock().unwrap().clone();
    (result, deltas)
}

#[tokio::test]
async fn openai_text_deltas_arrive_in_order_with_usage() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::sse(openai::stream_text(
        &["Hel", "lo", ", wor", "ld"],
        11,
        4,
    )));
    let provider = fake.openai("k").build().unwrap();
    let (turn, deltas) = stream(&provider, &request()).await;
    assert_eq!(deltas, ["Hel", "lo", ", wor", "ld"]);
    assert_eq!(
        turn.unwrap(),
        ModelTurn::text("Hello, world").with_usage(Usage::new(11, 4))
    );

    let sent = &fake.requests()[0];
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(
        sent.body,
        json!({
            "model": "m-1",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "book_flight", "description": "Books a flight.", "parameters": {"type": "object"}}}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn openai_tool_call_deltas_are_assembled_by_index() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::sse(openai::stream_tool_calls(
        &[
            ("call_x", "book_flight", &["{\"ci", "ty\": \"Os", "lo\"}"]),
            ("call_y", "book_flight", &["{\"city\"", ": \"Rome\"}"]),
            ("call_z", "book_flight", &["{broken"]),
        ],
        40,
        12,
    )));
    let provider = fake.openai("k").build().unwrap();
    let (turn, deltas) = stream(&provider, &request()).await;
    assert!(deltas.is_empty(), "{deltas:?}");
    assert_eq!(
        turn.unwrap(),
        ModelTurn::tool_calls(vec![
            ToolCall::new("call_x", "book_flight", json!({"city": "Oslo"})),
            ToolCall::new("call_y", "book_flight", json!({"city": "Rome"})),
            ToolCall::new("call_z", "book_flight", json!("{broken")),
        ])
        .with_usage(Usage::new(40, 12))
    );
}

#[tokio::test]
async fn anthropic_text_deltas_arrive_in_order_with_usage() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::sse(anthropic::stream_text(
        &["Bon", "jour", "!"],
        25,
        15,
    )));
    let provider = fake.anthropic("k").build().unwrap();
    let (turn, deltas) = stream(&provider, &request()).await;
    assert_eq!(deltas, ["Bon", "jour", "!"]);
    assert_eq!(
        turn.unwrap(),
        ModelTurn::text("Bonjour!").with_usage(Usage::new(25, 15))
    );
    let sent = &fake.requests()[0];
    assert_eq!(
        sent.body,
        json!({
            "model": "m-1",
            "max_tokens": 4096,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "book_flight", "description": "Books a flight.", "input_schema": {"type": "object"}}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn anthropic_tool_use_blocks_are_assembled_from_json_deltas() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::sse(anthropic::stream_tool_uses(
        &["Let me ", "book."],
        &[
            ("toolu_a", "book_flight", &["{\"city\":", " \"Oslo\"}"]),
            ("toolu_b", "book_flight", &[]),
        ],
        50,
        21,
    )));
    let provider = fake.anthropic("k").build().unwrap();
    let (turn, deltas) = stream(&provider, &request()).await;
    assert_eq!(deltas, ["Let me ", "book."]);
    let mut expected = ModelTurn::tool_calls(vec![
        ToolCall::new("toolu_a", "book_flight", json!({"city": "Oslo"})),
        ToolCall::new("toolu_b", "book_flight", json!({})),
    ])
    .with_usage(Usage::new(50, 21));
    expected.text = Some("Let me book.".to_owned());
    assert_eq!(turn.unwrap(), expected);
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_a_transport_error_and_not_retried() {
    for anthropic_style in [false, true] {
        let fake = FakeProvider::start().await;
        let (events, provider) = if anthropic_style {
            (
                anthropic::stream_text(&["one ", "two ", "three"], 5, 5),
                HttpProvider::anthropic(fake.url()),
            )
        } else {
            (
                openai::stream_text(&["one ", "two ", "three"], 5, 5),
                HttpProvider::openai(fake.url()),
            )
        };
        // OpenAI: role chunk, "one ", "two "; Anthropic: message_start, ping, block start, "one ", "two "
        let keep = if anthropic_style { 5 } else { 3 };
        fake.push(FakeReply::sse(events).break_after(keep));
        let provider = provider.api_key("k").build().unwrap();
        let (result, deltas) = stream(&provider, &request()).await;
        let err = result.unwrap_err();
        assert_broken_mid_stream(&err);
        assert_eq!(deltas, ["one ", "two "]);
        assert_eq!(fake.requests().len(), 1, "a broken stream is not retried");
    }
}

#[tokio::test]
async fn a_stream_closed_cleanly_before_the_end_is_a_transport_error() {
    let fake = FakeProvider::start().await;
    let mut events = openai::stream_text(&["partial"], 1, 1);
    events.truncate(2); // role chunk and one delta, then a clean end of body
    fake.push(FakeReply::sse(events));
    let provider = fake.openai("k").build().unwrap();
    let (result, deltas) = stream(&provider, &request()).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "transport error: the provider closed the stream before finishing its reply"
    );
    assert_eq!(deltas, ["partial"]);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_reported() {
    let fake = FakeProvider::start().await;
    let mut events = anthropic::stream_text(&["a"], 1, 1);
    events.insert(
        3,
        toolnexus_tests::fake_provider::SseEvent::named(
            "error",
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    );
    fake.push(FakeReply::sse(events));
    let provider = fake.anthropic("k").build().unwrap();
    let (result, _) = stream(&provider, &request()).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "transport error: the provider reported an error mid-stream: Overloaded"
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_delivers_its_text() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::json(openai::text("whole answer", 2, 2)));
    let provider = fake.openai("k").build().unwrap();
    let (turn, deltas) = stream(&provider, &request()).await;
    assert_eq!(deltas, ["whole answer"]);
    assert_eq!(
        turn.unwrap(),
        ModelTurn::text("whole answer").with_usage(Usage::new(2, 2))
    );
}
