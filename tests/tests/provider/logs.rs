//! What the HTTP providers log (through `tracing`): retries and provider errors are logged,
//! the API key never is, not even when the provider echoes it back.

use std::time::Duration;

use toolnexus::{Message, Model, ModelRequest};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply};
use toolnexus_tests::recorder::Recorder;

const KEY: &str = "sk-LOGGED-NEVER-42";

#[tokio::test(flavor = "current_thread")]
async fn retries_are_logged_and_the_key_is_not() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());

    let fake = FakeProvider::start().await;
    fake.script([
        FakeReply::error(503, &format!("overloaded for key {KEY}")),
        FakeReply::Close,
        FakeReply::error(401, &format!("Incorrect API key provided: {KEY}")),
    ]);
    let provider = fake
        .openai(KEY)
        .backoff_base(Duration::from_millis(5))
        .build()
        .unwrap();
    let request = ModelRequest::new("m", vec![Message::user("hi")], vec![]);
    let err = provider.complete(&request, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "provider returned HTTP 401: Incorrect API key provided: [redacted]"
    );
    assert_eq!(fake.requests().len(), 3);

    let lines = recorder.lines();
    let ours: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("toolnexus"))
        .collect();
    let retries = ours
        .iter()
        .filter(|l| l.contains("message=retrying provider request"))
        .count();
    assert_eq!(retries, 2, "{ours:#?}");
    assert!(
        ours.iter()
            .any(|l| l.contains("error=provider returned HTTP 503: overloaded for key [redacted]")),
        "{ours:#?}"
    );
    for line in &lines {
        assert!(!line.contains(KEY), "the key was logged: {line}");
    }
}
