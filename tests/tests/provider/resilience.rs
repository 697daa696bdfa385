//! Retries, backoff, `Retry-After`, provider errors, timeout, cancellation, and the API key
//! that appears nowhere but in its header.

use std::time::{Duration, Instant};

use toolnexus::{
    CancellationToken, Error, HttpProvider, Message, Model, ModelRequest, Usage, model::ModelTurn,
    providers::HttpProviderBuilder,
};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, anthropic, openai};
use toolnexus_tests::fixtures::error_chain;

const KEY: &str = "sk-SECRET-0123456789";

fn request() -> ModelRequest {
    ModelRequest::new("m", vec![Message::user("hi")], vec![])
}

/// One turn of `provider` on [`request`].
async fn complete(provider: &HttpProvider) -> Result<ModelTurn, Error> {
    provider.complete(&request(), None).await
}

fn ok() -> FakeReply {
    FakeReply::json(openai::text("fine", 1, 2))
}

fn turn() -> ModelTurn {
    ModelTurn::text("fine").with_usage(Usage::new(1, 2))
}

/// A provider whose backoff is long (30 s): a test that finishes quickly proves the wait
/// came from `Retry-After`, not from backoff.
fn slow_backoff(fake: &FakeProvider) -> HttpProvider {
    fake.openai(KEY)
        .backoff_base(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// `builder` with a 10 ms backoff, built.
fn fast(builder: HttpProviderBuilder) -> HttpProvider {
    builder
        .backoff_base(Duration::from_millis(10))
        .build()
        .unwrap()
}

fn gap(fake: &FakeProvider, i: usize) -> Duration {
    let r = fake.requests();
    r[i + 1].received_at - r[i].received_at
}

#[tokio::test]
async fn retry_after_zero_retries_at_once() {
    let fake = FakeProvider::scripted([
        FakeReply::error(429, "slow down").with_header("Retry-After", "0"),
        ok(),
    ])
    .await;
    let started = Instant::now();
    let turn_ = complete(&slow_backoff(&fake)).await.unwrap();
    assert_eq!(turn_, turn());
    assert_eq!(fake.requests().len(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn retry_after_one_waits_one_second() {
    let fake = FakeProvider::scripted([
        FakeReply::error(429, "slow down").with_header("Retry-After", "1"),
        ok(),
    ])
    .await;
    let turn_ = complete(&slow_backoff(&fake)).await.unwrap();
    assert_eq!(turn_, turn());
    assert_eq!(fake.requests().len(), 2);
    let waited = gap(&fake, 0);
    assert!(
        waited >= Duration::from_millis(950) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
}

#[tokio::test]
async fn other_retry_after_forms_fall_back_to_backoff() {
    for value in ["Wed, 21 Oct 2015 07:28:00 GMT", "-5", "1.5", "soon"] {
        let fake = FakeProvider::scripted([
            FakeReply::error(503, "busy").with_header("Retry-After", value),
            ok(),
        ])
        .await;
        let provider = fake
            .openai(KEY)
            .backoff_base(Duration::from_millis(400))
            .build()
            .unwrap();
        assert_eq!(complete(&provider).await.unwrap(), turn());
        let waited = gap(&fake, 0);
        // the first backoff step is a random point in [200 ms, 400 ms]
        assert!(
            waited >= Duration::from_millis(190) && waited < Duration::from_secs(5),
            "{value}: {waited:?}"
        );
    }
}

#[tokio::test]
async fn a_retry_after_longer_than_the_limit_ends_the_request() {
    let fake = FakeProvider::scripted([
        FakeReply::error(429, "come back tomorrow").with_header("Retry-After", "86400"),
        ok(),
    ])
    .await;
    let err = complete(&slow_backoff(&fake)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "provider returned HTTP 429: come back tomorrow"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_then_succeed() {
    let fake = FakeProvider::scripted([
        FakeReply::error(500, "oops"),
        FakeReply::error(502, "bad gateway"),
        ok(),
    ])
    .await;
    let provider = fast(fake.openai(KEY));
    assert_eq!(complete(&provider).await.unwrap(), turn());
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn retries_stop_after_the_limit_with_the_last_error() {
    let fake = FakeProvider::scripted([
        FakeReply::error(500, "first"),
        FakeReply::error(503, "second"),
        FakeReply::error(504, "third"),
        ok(),
    ])
    .await;
    let provider = fast(fake.anthropic(KEY));
    let err = complete(&provider).await.unwrap_err();
    assert!(
        matches!(err, Error::Provider { status: 504, .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "provider returned HTTP 504: third");
    assert_eq!(fake.requests().len(), 3, "1 attempt + 2 retries by default");

    let fake = FakeProvider::scripted([FakeReply::error(500, "only"), ok()]).await;
    let provider = fake.openai(KEY).max_retries(0).build().unwrap();
    let err = complete(&provider).await.unwrap_err();
    assert_eq!(err.to_string(), "provider returned HTTP 500: only");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_400_is_not_retried_and_carries_the_provider_message() {
    let fake = FakeProvider::scripted([
        FakeReply::error(400, "Invalid value for 'model': no such model"),
        ok(),
    ])
    .await;
    let provider = fast(fake.openai(KEY));
    let err = complete(&provider).await.unwrap_err();
    match &err {
        Error::Provider { status, message } => {
            assert_eq!(*status, 400);
            assert_eq!(message, "Invalid value for 'model': no such model");
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "provider returned HTTP 400: Invalid value for 'model': no such model"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_error_bodies_carry_their_message() {
    let fake = FakeProvider::scripted([FakeReply::status(
        400,
        serde_json::json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}}),
    )]).await;
    let provider = fake.anthropic(KEY).build().unwrap();
    let err = complete(&provider).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "provider returned HTTP 400: max_tokens: Field required"
    );
}

#[tokio::test]
async fn network_errors_are_retried() {
    let fake = FakeProvider::scripted([FakeReply::Close, ok()]).await;
    let provider = fast(fake.openai(KEY));
    assert_eq!(complete(&provider).await.unwrap(), turn());
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_transport_error_without_the_key() {
    // bind and drop a listener: nothing listens on that port any more
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let provider = HttpProvider::openai(format!("http://127.0.0.1:{port}/v1"))
        .api_key(KEY)
        .backoff_base(Duration::from_millis(5))
        .build()
        .unwrap();
    let err = complete(&provider).await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    assert!(err.is_transport());
    assert_eq!(
        err.to_string(),
        "transport error: the request could not be sent"
    );
    // the HTTP client's error is the source
    let text = error_chain(&err);
    assert!(
        text.starts_with(&format!(
            "transport error: the request could not be sent: error sending request for url (http://127.0.0.1:{port}/v1/chat/completions)"
        )),
        "{text}"
    );
    assert!(!text.contains(KEY) && !format!("{err:?}").contains(KEY));
}

#[tokio::test]
async fn the_timeout_aborts_the_request_in_flight_and_is_not_retried() {
    let fake = FakeProvider::scripted([FakeReply::Hang, ok()]).await;
    let provider = fake
        .openai(KEY)
        .timeout(Duration::from_millis(300))
        .backoff_base(Duration::from_millis(5))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = complete(&provider).await.unwrap_err();
    assert!(
        matches!(err, Error::ProviderTimeout(d) if d == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(err.is_timeout());
    assert_eq!(
        err.to_string(),
        "the provider did not answer within 300ms (the provider's own request timeout)"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.remaining(), 1, "no retry took the second reply");
}

#[tokio::test]
async fn a_timeout_mid_stream_aborts_it() {
    let fake = FakeProvider::scripted([FakeReply::sse(anthropic::stream_text(
        &["a", "b", "c", "d", "e", "f"],
        1,
        1,
    ))
    .with_delay(Duration::from_millis(200))])
    .await;
    let provider = fake
        .anthropic(KEY)
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let sink = |_: &str| {};
    let err = provider
        .complete(&request(), Some(&sink))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ProviderTimeout(_)), "{err:?}");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn cancellation_aborts_the_request_in_flight_and_is_not_retried() {
    let fake = FakeProvider::scripted([FakeReply::Hang, ok()]).await;
    let token = CancellationToken::new();
    let provider = fake
        .openai(KEY)
        .cancellation(token.clone())
        .backoff_base(Duration::from_millis(5))
        .build()
        .unwrap();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let started = Instant::now();
    let err = complete(&provider).await.unwrap_err();
    cancel.await.unwrap();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
    assert_eq!(err.to_string(), "the run was cancelled");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.remaining(), 1);
}

#[tokio::test]
async fn cancellation_also_ends_the_wait_before_a_retry() {
    let fake = FakeProvider::scripted([FakeReply::error(503, "busy"), ok()]).await;
    let token = CancellationToken::new();
    let provider = fake
        .openai(KEY)
        .cancellation(token.clone())
        .backoff_base(Duration::from_secs(30))
        .build()
        .unwrap();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let err = complete(&provider).await.unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn the_key_appears_nowhere_but_in_its_header() {
    for anthropic_style in [false, true] {
        let fake = FakeProvider::start().await;
        // a provider that echoes the key back in its error message
        fake.script([
            FakeReply::error(401, &format!("Incorrect API key provided: {KEY}.")),
            if anthropic_style {
                FakeReply::json(anthropic::text("fine", 1, 2))
            } else {
                ok()
            },
        ]);
        let builder = if anthropic_style {
            HttpProvider::anthropic(fake.url())
        } else {
            HttpProvider::openai(fake.url())
        };
        let builder = builder.api_key(KEY);
        assert!(!format!("{builder:?}").contains(KEY));
        let provider = builder.build().unwrap();
        let debug = format!("{provider:?} {provider:#?}");
        assert!(!debug.contains(KEY), "{debug}");
        assert!(
            debug.contains("api_key: Some(ApiKey([redacted]))"),
            "{debug}"
        );

        let err = complete(&provider).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "provider returned HTTP 401: Incorrect API key provided: [redacted]."
        );
        assert!(!format!("{err:?}").contains(KEY));
        assert_eq!(fake.requests().len(), 1, "401 is not retried");

        complete(&provider).await.unwrap();
        for sent in fake.requests() {
            let (name, expected) = if anthropic_style {
                ("x-api-key", KEY.to_owned())
            } else {
                ("authorization", format!("Bearer {KEY}"))
            };
            assert_eq!(sent.header(name), Some(expected.as_str()));
            let mut rest = sent.clone();
            rest.headers.retain(|(k, _)| k != name);
            assert!(!rest.wire_text().contains(KEY), "{}", rest.wire_text());
        }
    }
}
