//! A bounded cost for any provider (issue 14): stall limits on the response head, a body and
//! each stream event (keep-alive comments do not count), and capped bodies read
//! incrementally.

use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::{Error, HttpProvider, Model};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, openai};
use toolnexus_tests::fixtures::{hi as request, stream_hi as stream};

const LIMIT: Duration = Duration::from_millis(300);

fn assert_idle(err: &Error, waiting_for: &str) {
    assert!(
        matches!(err, Error::ProviderIdle { waiting_for: w, limit } if *w == waiting_for && *limit == LIMIT),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("the provider sent nothing for 300ms while the client waited for {waiting_for}")
    );
    assert!(err.is_timeout());
}

#[tokio::test]
async fn a_provider_that_never_sends_a_head_times_out_and_is_retried() {
    let fake = FakeProvider::scripted([FakeReply::Hang, FakeReply::Hang]).await;
    let provider = fake
        .openai("k")
        .first_byte_timeout(LIMIT)
        .max_retries(1)
        .backoff_base(Duration::from_millis(1))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_idle(&err, "the response head");
    assert_eq!(
        fake.requests().len(),
        2,
        "a stall before the head is retried"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// A listener on 127.0.0.1 that never accepts, its accept queue (backlog 1) filled, so the
/// kernel drops any further SYN and a new connection never opens; or `None`, saying why, where
/// the kernel refuses instead (`tcp_abort_on_overflow`) or never fills the queue.
async fn unopenable() -> Option<(tokio::net::TcpListener, Vec<tokio::net::TcpStream>)> {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut held = Vec::new();
    while held.len() < 64 {
        let connect = tokio::net::TcpStream::connect(addr);
        match tokio::time::timeout(Duration::from_millis(200), connect).await {
            Ok(Ok(stream)) => held.push(stream),
            Ok(Err(e)) => {
                toolnexus_tests::skip::skipped(
                    "limits::a_connection_that_never_opens_times_out_and_is_retried",
                    "a kernel that drops connections past a full accept queue",
                    &format!("this one refuses them: {e}"),
                );
                return None;
            }
            // the queue is full: this SYN was dropped
            Err(_) => return Some((listener, held)),
        }
    }
    toolnexus_tests::skip::skipped(
        "limits::a_connection_that_never_opens_times_out_and_is_retried",
        "a kernel that drops connections past a full accept queue",
        "64 connections opened and the accept queue was not full",
    );
    None
}

#[tokio::test]
async fn a_connection_that_never_opens_times_out_and_is_retried() {
    let Some((listener, _held)) = unopenable().await else {
        return;
    };
    let addr = listener.local_addr().unwrap();
    let provider = HttpProvider::openai(format!("http://{addr}/v1"))
        .api_key("k")
        .connect_timeout(LIMIT)
        .first_byte_timeout(Duration::from_secs(30))
        .max_retries(1)
        .backoff_base(Duration::from_millis(1))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = provider.complete(&request(), None).await.unwrap_err();
    let took = started.elapsed();
    assert_idle(&err, "the connection");
    // two attempts, each cut at the limit (not at the 30 s first-byte limit)
    assert!(
        took >= 2 * LIMIT && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_trickled_body_times_out() {
    let fake = FakeProvider::start().await;
    // one byte every 20 ms, forever: each byte comes in time, the body never ends
    fake.push(FakeReply::drip(
        200,
        "application/json",
        " ",
        None,
        Duration::from_millis(20),
    ));
    let provider = fake
        .openai("k")
        .idle_timeout(LIMIT)
        .max_retries(0)
        .build()
        .unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_idle(&err, "the reply body");
}

#[tokio::test]
async fn keep_alive_comments_forever_time_out_a_stream() {
    let fake = FakeProvider::start().await;
    let mut events = openai::stream_text(&["Hel"], 1, 1);
    events.truncate(2);
    let mut start = String::new();
    for event in &events {
        start.push_str("data: ");
        start.push_str(&event.data);
        start.push_str("\n\n");
    }
    // a role chunk and a delta, then an SSE comment every 20 ms, forever
    fake.push(FakeReply::Drip {
        status: 200,
        content_type: "text/event-stream".to_owned(),
        start,
        piece: ": keep-alive\n\n".to_owned(),
        times: None,
        pause: Duration::from_millis(20),
    });
    let provider = fake.openai("k").idle_timeout(LIMIT).build().unwrap();
    let (result, deltas) = stream(&provider).await;
    let err = result.unwrap_err();
    assert_idle(&err, "the next stream event");
    assert_eq!(deltas, ["Hel"]);
    assert_eq!(
        fake.requests().len(),
        1,
        "part of the reply came: not retried"
    );
}

#[tokio::test]
async fn a_stream_silent_from_the_start_is_retried() {
    let fake = FakeProvider::scripted([FakeReply::drip(
        200,
        "text/event-stream",
        ": keep-alive\n\n",
        None,
        Duration::from_millis(20),
    )])
    .await;
    fake.push(FakeReply::sse(openai::stream_text(&["ok"], 1, 1)));
    let provider = fake
        .openai("k")
        .idle_timeout(LIMIT)
        .backoff_base(Duration::from_millis(1))
        .build()
        .unwrap();
    let (result, deltas) = stream(&provider).await;
    assert_eq!(result.unwrap().text.as_deref(), Some("ok"));
    assert_eq!(deltas, ["ok"]);
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn timeouts_can_be_turned_off() {
    let fake = FakeProvider::start().await;
    // a reply 600 ms after its head, slower than any limit above: fine with no idle limit
    let body = openai::text("late", 1, 1).to_string();
    fake.push(FakeReply::Drip {
        status: 200,
        content_type: "application/json".to_owned(),
        start: String::new(),
        piece: body,
        times: Some(1),
        pause: Duration::ZERO,
    });
    let provider = fake
        .openai("k")
        .idle_timeout(None)
        .first_byte_timeout(None)
        .connect_timeout(None)
        .build()
        .unwrap();
    let turn = provider.complete(&request(), None).await.unwrap();
    assert_eq!(turn.text.as_deref(), Some("late"));
}

const HUGE: u64 = 300 << 20;
const PIECE: usize = 64 << 10;

fn huge(status: u16, content_type: &str) -> FakeReply {
    FakeReply::drip(
        status,
        content_type,
        &"x".repeat(PIECE),
        Some(HUGE / PIECE as u64),
        Duration::ZERO,
    )
}

/// The client stopped reading long before 300 MB.
fn assert_not_read_whole(fake: &FakeProvider) {
    let sent = fake.bytes_dripped();
    assert!(sent < 64 << 20, "{sent} bytes were written");
}

#[tokio::test]
async fn a_300_mb_reply_fails_at_the_limit_without_being_read() {
    let fake = FakeProvider::scripted([huge(200, "application/json")]).await;
    let provider = fake.openai("k").max_reply_bytes(1 << 20).build().unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "transport error: the provider's reply exceeds 1048576 bytes (`max_reply_bytes`); not read further"
    );
    assert_eq!(fake.requests().len(), 1, "not retried");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_not_read_whole(&fake);
}

#[tokio::test]
async fn a_300_mb_stream_fails_at_the_limit() {
    let fake = FakeProvider::scripted([FakeReply::drip(
        200,
        "text/event-stream",
        &format!(": {}\n\n", "x".repeat(PIECE)),
        Some(HUGE / PIECE as u64),
        Duration::ZERO,
    )])
    .await;
    let provider = fake.openai("k").max_reply_bytes(1 << 20).build().unwrap();
    let (result, _) = stream(&provider).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "transport error: the provider's reply exceeds 1048576 bytes (`max_reply_bytes`); not read further"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_not_read_whole(&fake);
}

#[tokio::test]
async fn a_300_mb_error_body_is_read_to_its_limit_only() {
    let fake = FakeProvider::scripted([huge(500, "text/plain")]).await;
    let provider = fake.openai("k").max_retries(0).build().unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_eq!(err.provider_status(), Some(500));
    // the message quotes its first 500 bytes and says how long it was
    let lead = "the error body exceeds 65536 bytes (`max_error_bytes`) and was not read further; it starts: ";
    assert_eq!(
        err.to_string(),
        format!(
            "provider returned HTTP 500: {lead}{}... ({} bytes in all)",
            "x".repeat(500 - lead.len()),
            lead.len() + 65536
        )
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_not_read_whole(&fake);
}

#[tokio::test]
async fn an_unknown_json_shape_is_unaffected_by_the_limits() {
    let fake = FakeProvider::scripted([FakeReply::json(json!({"choices": []}))]).await;
    let provider = fake.openai("k").build().unwrap();
    let err = provider.complete(&request(), None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "transport error: the provider's reply has no `choices[0].message`"
    );
}
