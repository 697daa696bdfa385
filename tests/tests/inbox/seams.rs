//! Where the page meets the store and the trust boundary (issue 33): an answer that carries a
//! secret one level down is refused before it is recorded, and an `answered_by` over
//! `MAX_NAME_BYTES` is a clear 422, nothing recorded.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use toolnexus::inbox::Inbox;
use toolnexus::limits::MAX_NAME_BYTES;
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY};
use tower::ServiceExt as _;

/// Posts `body` to the JSON API's answer of request `id`, by its signed link.
async fn post_answer(inbox: &Inbox, id: &str, body: &Value) -> (StatusCode, Value) {
    let link = inbox.link(id, Duration::from_secs(600)).expect("signed");
    let (_, query) = link.split_once('?').expect("query");
    let req = HttpRequest::post(format!("/api/requests/{id}/answer?{query}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("request");
    let res = inbox.router().oneshot(req).await.expect("router answers");
    let status = res.status();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    (status, serde_json::from_slice(&bytes).expect("json"))
}

/// The run of request `id` as stored: its state and who answered.
async fn stored(fx: &Fixture, id: &str) -> (RunState, Option<String>) {
    let run = fx.store.get_by_request(id).await.unwrap().expect("run");
    (run.info.state, run.info.answered_by().map(str::to_owned))
}

#[tokio::test]
async fn the_page_refuses_an_answer_that_carries_a_secret_one_level_down() {
    let fx = Fixture::without_worker().await;
    // a reconcile request without a form takes its action as `data`: anything else in it
    // is read by the boundary's walk, at any depth
    let request = fx
        .park(json!({"kind": "reconcile", "prompt": "The call of `pay` was cut off."}))
        .await;
    let inbox = fx.inbox();
    let (status, body) = post_answer(
        &inbox,
        &request.id,
        &json!({"ok": true, "data": {"action": "record", "output": "paid", "receipt": {"PIN": "1234"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body,
        json!({
            "field": "data",
            "error": "invalid answer: `data.receipt.PIN` of the answer to the `reconcile` request has the name `PIN`, which reads as the credential word `pin`; secrets must never pass through answer data: use an `authorization` request with a `url` instead"
        })
    );
    assert_eq!(stored(&fx, &request.id).await, (RunState::Parked, None));
    // the same answer without it is recorded
    let (status, body) = post_answer(
        &inbox,
        &request.id,
        &json!({"ok": true, "data": {"action": "record", "output": "paid", "receipt": {"no": "7"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(stored(&fx, &request.id).await.0, RunState::Answered);
}

#[tokio::test]
async fn the_page_refuses_an_answered_by_over_the_limit() {
    let fx = Fixture::without_worker().await;
    let request = fx
        .park(json!({"kind": "approval", "prompt": "Deploy?"}))
        .await;
    let long = |len: usize| {
        Inbox::builder(fx.store.clone())
            .signed_links(LINK_KEY.to_vec())
            .answered_by(move |_| Some("w".repeat(len)))
            .build()
            .expect("a valid inbox")
    };
    let over = MAX_NAME_BYTES + 1;
    let (status, body) = post_answer(&long(over), &request.id, &json!({"ok": true})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["error"],
        format!(
            "The answer was not recorded: the answer to `{}` is refused: `answered_by` is {over} bytes, more than the {MAX_NAME_BYTES} allowed (`toolnexus::limits::MAX_NAME_BYTES`).",
            request.id
        )
    );
    assert_eq!(stored(&fx, &request.id).await, (RunState::Parked, None));

    let (status, body) =
        post_answer(&long(MAX_NAME_BYTES), &request.id, &json!({"ok": true})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(
        stored(&fx, &request.id).await,
        (RunState::Answered, Some("w".repeat(MAX_NAME_BYTES)))
    );
}
