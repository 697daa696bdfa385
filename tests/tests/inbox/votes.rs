//! Governed approvals through the inbox: a request that needs two approvers shows who
//! approved so far and how many more are needed (page and JSON API); a vote below the count
//! keeps the run parked; the run's own principal is refused (403 from the JSON API, the page
//! says why) and nothing is recorded; the second person's approval resumes the run once.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use serde_json::{Value, json};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY, governed_args};

use super::remember::{as_user, get, link, open, post, run_of, send};

/// An inbox naming the caller by `x-user`.
pub(crate) fn inbox(fx: &Fixture) -> Inbox {
    Inbox::builder(fx.store.clone())
        .signed_links(LINK_KEY.to_vec())
        .answered_by(|parts| {
            parts
                .headers
                .get("x-user")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
        .authorize(|_, target| matches!(target, Target::List))
        .build()
        .expect("a valid inbox")
}

/// The API's address of `path` (`answer`, or empty: the request) for the signed `url`.
pub(crate) fn api(url: &str, id: &str, path: &str) -> String {
    let query = url.split('?').nth(1).unwrap();
    if path.is_empty() {
        format!("/api/requests/{id}?{query}")
    } else {
        format!("/api/requests/{id}/{path}?{query}")
    }
}

pub(crate) fn post_json(uri: &str, user: &str, body: &Value) -> HttpRequest<Body> {
    as_user(HttpRequest::post(uri), Some(user), false)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("request")
}

/// Two of two through the JSON API: alice (who asked) is refused with 403 naming the rule and
/// nothing is recorded; bob's approval is recorded as a vote (`approvals` says 1 of 2, 1
/// missing, by bob) and the run waits; bob again counts once; carol's approval answers the
/// run and the worker resumes it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approvals_through_the_json_api() {
    let fx = Fixture::new().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let request = fx
        .park_for("alice", governed_args("Pay 4000 EUR?", 2))
        .await;
    let url = link(&inbox, &request.id);
    let answer = api(&url, &request.id, "answer");

    let shown = send(&app, get(&api(&url, &request.id, ""), Some("bob"), false)).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    let shown: Value = serde_json::from_str(&shown.body).unwrap();
    assert_eq!(
        shown["approvals"],
        json!({"required": 2, "given": 0, "missing": 2, "votes": []})
    );
    assert_eq!(shown["request"]["data"]["approvals"], 2);
    assert_eq!(shown["request"]["data"]["notByRequester"], true);

    let refused = send(&app, post_json(&answer, "alice", &json!({"ok": true}))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.body.contains("notByRequester"), "{}", refused.body);
    let parked = run_of(&fx.store, &request.id).await;
    assert_eq!(parked.info.state, RunState::Parked);
    assert!(parked.votes.is_empty());
    assert_eq!(parked.info.history.len(), 1);

    for _ in 0..2 {
        let voted = send(&app, post_json(&answer, "bob", &json!({"ok": true}))).await;
        assert_eq!(voted.status, StatusCode::ACCEPTED, "{}", voted.body);
        let voted: Value = serde_json::from_str(&voted.body).unwrap();
        assert_eq!(voted["answeredBy"], Value::Null);
        assert_eq!(voted["approvals"]["given"], 1);
        assert_eq!(voted["approvals"]["missing"], 1);
        assert_eq!(voted["approvals"]["votes"][0]["by"], "bob");
        assert_eq!(voted["approvals"]["votes"].as_array().unwrap().len(), 1);
    }
    let status = send(
        &app,
        get(&api(&url, &request.id, "status"), Some("bob"), false),
    )
    .await;
    let status: Value = serde_json::from_str(&status.body).unwrap();
    assert_eq!(status["state"], "parked");
    assert_eq!(status["approvals"]["missing"], 1);
    assert_eq!(fx.retries(), 0);

    let done = send(&app, post_json(&answer, "carol", &json!({"ok": true}))).await;
    assert_eq!(done.status, StatusCode::ACCEPTED, "{}", done.body);
    let done: Value = serde_json::from_str(&done.body).unwrap();
    assert_eq!(done["answeredBy"], "carol");
    assert_eq!(done["approvals"]["given"], 2);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while run_of(&fx.store, &request.id).await.info.state != RunState::Finished {
        assert!(std::time::Instant::now() < deadline, "not resumed in 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fx.retries(), 1);
}

/// The page: the request lists who approved and how many more are needed; the requester's
/// approval is refused with the rule's message; bob's reads "Approval recorded; 1 more
/// approval needed"; the page then lists bob.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_lists_the_votes_and_refuses_the_requester() {
    let fx = Fixture::without_worker().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let request = fx
        .park_for("alice", governed_args("Deploy to production?", 2))
        .await;
    let url = link(&inbox, &request.id);

    let (cookie, csrf, page) = open(&app, &url, Some("alice")).await;
    assert!(page.contains("Approvals: 0 of 2"), "{page}");
    assert!(page.contains("No one has approved yet."), "{page}");
    assert!(page.contains("2 more approvals needed"), "{page}");
    let refused = send(
        &app,
        post(
            &url,
            Some("alice"),
            false,
            &cookie,
            &format!("csrf={csrf}&action=accept"),
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.body.contains("notByRequester"), "{}", refused.body);
    assert!(run_of(&fx.store, &request.id).await.votes.is_empty());

    let (cookie, csrf, _) = open(&app, &url, Some("bob")).await;
    let voted = send(
        &app,
        post(
            &url,
            Some("bob"),
            false,
            &cookie,
            &format!("csrf={csrf}&action=accept"),
        ),
    )
    .await;
    assert_eq!(voted.status, StatusCode::OK, "{}", voted.body);
    assert!(voted.body.contains("Approval recorded"), "{}", voted.body);
    assert!(
        voted.body.contains("1 more approval needed"),
        "{}",
        voted.body
    );

    let (_, _, page) = open(&app, &url, Some("carol")).await;
    assert!(page.contains("Approvals: 1 of 2"), "{page}");
    assert!(page.contains("<strong>bob</strong> approved"), "{page}");
    assert!(page.contains("1 more approval needed"), "{page}");
    assert_eq!(
        run_of(&fx.store, &request.id).await.info.state,
        RunState::Parked
    );
}
