//! Who takes an answer up: with no worker running on the store, the page, its status page and
//! the JSON API say "Answered; no worker has taken it up" (with when a worker was last seen),
//! never "The assistant is continuing."

use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolnexus_tests::inbox_support::{Fixture, approval_args};

use super::html::{Reply, get, link, open, post_form, post_json, send};

const CONTINUING: &str = "Recorded. The assistant is continuing.";
const NO_WORKER: &str = "Answered; no worker has taken it up.";

/// The JSON at `uri`.
async fn json_at(app: &axum::Router, uri: &str) -> Value {
    let r = send(app, get(uri)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    serde_json::from_str(&r.body).expect("json")
}

/// Parks an approval on `fx` and accepts it on the page: the router and the recorded page.
async fn accept_on_the_page(fx: &Fixture) -> (axum::Router, Reply) {
    let req = fx.park(approval_args("Ship it?")).await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let url = link(fx, &inbox, &req.id);
    let (cookie, csrf, _) = open(&app, &url).await;
    let recorded = send(
        &app,
        post_form(&url, Some(&cookie), &format!("csrf={csrf}&action=accept")),
    )
    .await;
    (app, recorded)
}

/// The status page a recorded page links to.
fn status_link(page: &str) -> String {
    let end = page
        .find(r#"">See how it goes</a>"#)
        .expect("a status link");
    let start = page[..end].rfind(r#"href=""#).expect("href") + r#"href=""#.len();
    page[start..end].replace("&amp;", "&")
}

#[tokio::test]
async fn an_answer_on_a_store_no_worker_ever_ran_on_says_so() {
    let fx = Fixture::without_worker().await;
    let (app, recorded) = accept_on_the_page(&fx).await;
    recorded.says(
        StatusCode::OK,
        &format!("{NO_WORKER} No worker has been seen."),
    );
    assert!(!recorded.body.contains(CONTINUING), "{}", recorded.body);

    // the status page says it too, for as long as no worker runs
    let status = send(&app, get(&status_link(&recorded.body))).await;
    status.says(
        StatusCode::OK,
        &format!("{NO_WORKER} No worker has been seen."),
    );
    assert!(!status.body.contains(CONTINUING), "{}", status.body);

    // and the JSON status
    let api = status_link(&recorded.body).replacen("/r/", "/api/requests/", 1);
    let v = json_at(&app, &api).await;
    assert_eq!(v["state"], "answered");
    assert_eq!(
        v["pickup"],
        json!({
            "workerRunning": false,
            "workerLastSeen": null,
            "message": "Answered; no worker has taken it up. No worker has been seen.",
        })
    );
}

#[tokio::test]
async fn a_worker_gone_quiet_is_named_with_when_it_was_last_seen() {
    let fx = Fixture::without_worker().await;
    // a worker that stopped five minutes ago
    let seen = SystemTime::now() - Duration::from_secs(300);
    fx.store.heartbeat("gone-worker", seen).await.unwrap();
    let req = fx.park(approval_args("Ship it?")).await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let api = inbox
        .link(&req.id, Duration::from_secs(600))
        .unwrap()
        .replacen("/r/", "/api/requests/", 1)
        .replacen('?', "/answer?", 1);
    let r = send(&app, post_json(&api, &json!({"ok": true}))).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["pickup"]["workerRunning"], false);
    // `2026-12-06T13:01:02Z` (RFC 3339, whole seconds) in the API, in words on the page
    let rfc = v["pickup"]["workerLastSeen"].as_str().expect("a time");
    assert!(rfc.len() == 20 && rfc.ends_with('Z'), "{rfc}");
    let words = format!("{} {} UTC (5 minutes ago)", &rfc[..10], &rfc[11..19]);
    assert_eq!(
        v["pickup"]["message"],
        format!("{NO_WORKER} A worker was last seen at {words}.")
    );

    // the HTML status page says the same
    let status = v["statusLink"]
        .as_str()
        .unwrap()
        .replacen("/api/requests/", "/r/", 1);
    let page = send(&app, get(&status)).await;
    page.says(
        StatusCode::OK,
        &format!("{NO_WORKER} A worker was last seen at {words}."),
    );

    // a worker that beats now: the answer is being taken up
    fx.store
        .heartbeat("live-worker", SystemTime::now())
        .await
        .unwrap();
    let page = send(&app, get(&status)).await;
    page.says(StatusCode::OK, CONTINUING);
    assert!(!page.body.contains(NO_WORKER), "{}", page.body);
}

#[tokio::test]
async fn with_a_running_worker_the_page_says_it_continues() {
    let fx = Fixture::new().await;
    let (_, recorded) = accept_on_the_page(&fx).await;
    recorded.says(StatusCode::OK, CONTINUING);
    assert!(!recorded.body.contains(NO_WORKER), "{}", recorded.body);
}
