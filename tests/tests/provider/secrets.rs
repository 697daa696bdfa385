//! Secrets never leave a provider in a text (issue 14): the key and every extra header value
//! are redacted from errors streamed or not, in `Display` and `Debug`, before any cut.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{Error, HttpProvider, Message, Model, ModelRequest};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, SseEvent, anthropic, openai};

const KEY: &str = "sk-live-abcdefghijklmnopqrstuvwxyz0123456789";
const GATEWAY: &str = "gw-token-9f8e7d6c5b4a";

fn request() -> ModelRequest {
    ModelRequest::new("m-1", vec![Message::user("hi")], vec![])
}

async fn stream(provider: &HttpProvider) -> Result<toolnexus::model::ModelTurn, Error> {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = move |d: &str| seen.lock().unwrap().push(d.to_owned());
    provider.complete(&request(), Some(&sink)).await
}

/// Neither the key nor the gateway token, nor a piece of either at least 6 bytes long,
/// shows in the error's `Display`, `Debug` or source chain.
fn assert_clean(err: &Error) {
    let texts = [
        err.to_string(),
        format!("{err:?}"),
        toolnexus_tests::fixtures::error_chain(err),
    ];
    for text in texts {
        for secret in [KEY, GATEWAY] {
            for start in 0..secret.len() - 6 {
                let piece = &secret[start..start + 6];
                assert!(!text.contains(piece), "`{piece}` shows in {text}");
            }
        }
    }
}

#[tokio::test]
async fn an_openai_sse_error_chunk_that_echoes_the_key_is_redacted() {
    let fake = FakeProvider::start().await;
    let chunk = json!({"error": {"message": format!("invalid key {KEY} for gateway {GATEWAY}")}});
    fake.push(FakeReply::sse(vec![SseEvent::data(chunk.to_string())]));
    let provider = fake
        .openai(KEY)
        .header("x-gateway-token", GATEWAY)
        .max_retries(0)
        .build()
        .unwrap();
    let err = stream(&provider).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "transport error: the provider reported an error mid-stream: invalid key [redacted] for gateway [redacted]"
    );
    assert_clean(&err);
}

#[tokio::test]
async fn an_anthropic_error_event_that_echoes_the_key_is_redacted() {
    let fake = FakeProvider::start().await;
    let mut events = anthropic::stream_text(&["a"], 1, 1);
    events.insert(
        4,
        SseEvent::named(
            "error",
            &json!({"type": "error", "error": {"type": "authentication_error", "message": format!("key {KEY} revoked")}}),
        ),
    );
    fake.push(FakeReply::sse(events));
    let provider = fake.anthropic(KEY).build().unwrap();
    let err = stream(&provider).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "transport error: the provider reported an error mid-stream: key [redacted] revoked"
    );
    assert_clean(&err);
}

#[tokio::test]
async fn a_plain_text_error_body_is_redacted_before_it_is_cut() {
    let fake = FakeProvider::start().await;
    // the key straddles byte 500, where the quote is cut
    let body = format!("{}{KEY}{}", "x".repeat(490), "y".repeat(200));
    fake.push(FakeReply::text(401, &body));
    let provider = fake.openai(KEY).build().unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "provider returned HTTP 401: {}[redacted]... (700 bytes in all)",
            "x".repeat(490)
        )
    );
    assert_clean(&err);
}

#[tokio::test]
async fn extra_header_values_echoed_by_the_provider_are_redacted() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::error(
        400,
        &format!("unknown gateway token {GATEWAY}"),
    ));
    let provider = fake
        .openai(KEY)
        .header("x-gateway-token", GATEWAY)
        .build()
        .unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "provider returned HTTP 400: unknown gateway token [redacted]"
    );
    assert_clean(&err);
    // it was sent, in its header
    assert_eq!(fake.requests()[0].header("x-gateway-token"), Some(GATEWAY));
    assert!(!format!("{provider:?}").contains(GATEWAY));
}

#[tokio::test]
async fn an_error_body_cut_at_its_limit_inside_the_key_loses_the_piece() {
    let fake = FakeProvider::start().await;
    // the key starts 20 bytes before the 50-byte limit
    let body = format!("{}{KEY}{}", "x".repeat(30), "y".repeat(5000));
    fake.push(FakeReply::text(500, &body));
    let provider = fake
        .openai(KEY)
        .max_error_bytes(50)
        .max_retries(0)
        .build()
        .unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_clean(&err);
    assert_eq!(
        err.to_string(),
        format!(
            "provider returned HTTP 500: the error body exceeds 50 bytes (`max_error_bytes`) and was not read further; it starts: {}[redacted]",
            "x".repeat(30)
        )
    );
}

#[tokio::test]
async fn a_huge_json_error_message_becomes_a_short_quote_with_its_length() {
    let fake = FakeProvider::start().await;
    let message = "m".repeat(10 << 20);
    fake.push(FakeReply::error(400, &message));
    let provider = fake.openai(KEY).max_error_bytes(32 << 20).build().unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "provider returned HTTP 400: {}... (10485760 bytes in all)",
            "m".repeat(500)
        )
    );

    // with the default error-body limit the body is not even read whole
    fake.push(FakeReply::error(400, &message));
    let provider = fake.openai(KEY).build().unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "provider returned HTTP 400: the error body exceeds 65536 bytes (`max_error_bytes`) and was not read further; it starts: {\"error\":{\"message\":\"mmm"
        ),
        "{}",
        &text[..200]
    );
    assert!(text.len() < 700, "{} bytes", text.len());
}

#[tokio::test]
async fn the_openai_text_reply_still_works_with_secrets_configured() {
    // redaction never touches a successful reply
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::json(openai::text(
        &format!("say {GATEWAY}"),
        1,
        1,
    )));
    let provider = fake
        .openai(KEY)
        .header("x-gateway-token", GATEWAY)
        .build()
        .unwrap();
    let turn = provider.complete(&request(), None).await.unwrap();
    assert_eq!(
        turn.text.as_deref(),
        Some(format!("say {GATEWAY}").as_str())
    );
}
