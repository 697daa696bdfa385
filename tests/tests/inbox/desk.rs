//! The approval desk beyond one request, without a browser (tower `oneshot` on the router):
//! who is asking (the agent's name and the conversation) on the list and the request, and
//! the history of answered requests (page and JSON): who answered, when, what they decided,
//! how each run went on, newest first and paged.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{AGENT, Fixture, LINK_KEY, approval_args};
use tower::ServiceExt as _;

async fn send(app: &axum::Router, req: HttpRequest<Body>) -> (StatusCode, String) {
    let res = app.clone().oneshot(req).await.expect("router answers");
    let status = res.status();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8(bytes.to_vec()).expect("utf-8"))
}

fn get(uri: &str, admin: bool) -> HttpRequest<Body> {
    let mut b = HttpRequest::get(uri);
    if admin {
        b = b.header("x-admin", "yes");
    }
    b.body(Body::empty()).expect("request")
}

async fn json_of(app: &axum::Router, uri: &str) -> Value {
    let (status, body) = send(app, get(uri, true)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str(&body).expect("json")
}

/// Answers request `id` through the JSON API with `body`, by its signed link; waits until the
/// fixture's worker resumed the run.
async fn answer(fx: &Fixture, inbox: &Inbox, app: &axum::Router, id: &str, body: &Value) {
    let link = inbox.link(id, Duration::from_secs(600)).expect("signed");
    let (_, query) = link.split_once('?').expect("query");
    let req = HttpRequest::post(format!("/api/requests/{id}/answer?{query}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("request");
    let (status, text) = send(app, req).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    let run = fx
        .store
        .get_by_request(id)
        .await
        .expect("store")
        .expect("run");
    fx.store
        .wait_finished(&run.info.run_id, Duration::from_secs(10))
        .await
        .expect("store")
        .expect("the worker resumes the run");
}

/// A cursor (`<ms>:<run id>`, the run id of `[a-z0-9-]`) as a form-encoded query value.
fn form_encoded(cursor: &str) -> String {
    assert!(
        cursor
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b':'),
        "{cursor}"
    );
    cursor.replace(':', "%3A")
}

/// The text of the history's decision line that starts with `start`.
fn decision_line<'a>(page: &'a str, start: &str) -> &'a str {
    let open = format!(r#"<div class="decision">{start}"#);
    let at = page
        .find(&open)
        .unwrap_or_else(|| panic!("{open} in {page}"))
        + r#"<div class="decision">"#.len();
    let end = page[at..].find("</div>").expect("closed") + at;
    &page[at..end]
}

#[tokio::test]
async fn who_is_asking_shows_on_the_list_the_request_and_the_api() {
    let fx = Fixture::without_worker().await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let turn = fx.park_in("c-42", approval_args("Deploy build 42?")).await;
    let alone = fx.park(approval_args("Restart the cache?")).await;

    let (status, list) = send(&app, get("/", true)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        list.contains(r#"<span class="who">expense-bot · conversation c-42</span>"#),
        "{list}"
    );
    assert!(
        list.contains(r#"Restart the cache?</a><span class="who">expense-bot</span>"#),
        "{list}"
    );
    assert!(
        list.contains(r#"<a href="/history" id="history-link">"#),
        "{list}"
    );

    let link = inbox
        .link(&turn.id, Duration::from_secs(600))
        .expect("signed");
    let (status, page) = send(&app, get(&link, false)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(
            r#"<p class="who" id="who">Asked by <strong>expense-bot</strong>, in conversation <code>c-42</code>.</p>"#
        ),
        "{page}"
    );
    let link = inbox
        .link(&alone.id, Duration::from_secs(600))
        .expect("signed");
    let (_, page) = send(&app, get(&link, false)).await;
    assert!(
        page.contains(r#"<p class="who" id="who">Asked by <strong>expense-bot</strong>.</p>"#),
        "{page}"
    );

    let listed = json_of(&app, "/api/requests").await;
    let by_id = |id: &str| {
        listed["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .find(|r| r["id"] == id)
            .cloned()
            .expect("listed")
    };
    assert_eq!(by_id(&turn.id)["agent"], AGENT);
    assert_eq!(by_id(&turn.id)["conversationId"], "c-42");
    assert_eq!(by_id(&alone.id)["conversationId"], Value::Null);
    let (_, query) = inbox
        .link(&turn.id, Duration::from_secs(600))
        .expect("signed")
        .split_once('?')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .expect("query");
    let one = json_of(&app, &format!("/api/requests/{}?{query}", turn.id)).await;
    assert_eq!(one["agent"], AGENT);
    assert_eq!(one["conversationId"], "c-42");
}

#[tokio::test]
async fn the_history_lists_who_answered_what_when_and_how_each_run_went_on() {
    let fx = Fixture::new().await;
    let inbox = fx.inbox();
    let app = inbox.router();

    let approved = fx.park(approval_args("Deploy build 42?")).await;
    answer(&fx, &inbox, &app, &approved.id, &json!({"ok": true})).await;
    let edited = fx
        .park(json!({"tool": "pay", "args": {"amount": 40, "to": "Ada"}}))
        .await;
    answer(
        &fx,
        &inbox,
        &app,
        &edited.id,
        &json!({"ok": true, "data": {"args": {"amount": 35, "to": "Ada"}}}),
    )
    .await;
    let declined = fx
        .park_in("c-7", approval_args("Drop the old tables?"))
        .await;
    answer(&fx, &inbox, &app, &declined.id, &json!({"ok": false})).await;
    let waiting = fx.park(approval_args("Rotate the logs?")).await;

    // without the admin's check: not allowed
    let (status, _) = send(&app, get("/history", false)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = send(&app, get("/api/history", false)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let history = json_of(&app, "/api/history").await;
    let runs = history["runs"].as_array().expect("runs");
    let requests: Vec<&str> = runs
        .iter()
        .map(|r| r["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(
        requests,
        [&declined.id, &edited.id, &approved.id],
        "newest first; {} waits and is not listed",
        waiting.id
    );
    assert_eq!(history["next"], Value::Null);
    let decisions: Vec<(&str, &str, &str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["decision"].as_str().unwrap(),
                r["answeredBy"].as_str().unwrap(),
                r["state"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("declined", "signed link", "finished", "done"),
            ("approved-with-changes", "signed link", "finished", "done"),
            ("approved", "signed link", "finished", "done"),
        ]
    );
    assert_eq!(runs[0]["agent"], AGENT);
    assert_eq!(runs[0]["conversationId"], "c-7");
    assert_eq!(runs[1]["conversationId"], Value::Null);
    for run in runs {
        let at = run["answeredAt"].as_str().expect("when");
        assert!(at.len() == 20 && at.ends_with('Z'), "RFC 3339 UTC: {at}");
    }
    // the edited payment ran with the person's arguments
    let paid = fx
        .store
        .get_by_request(&edited.id)
        .await
        .expect("store")
        .expect("run");
    assert_eq!(paid.info.state, RunState::Finished);
    assert_eq!(
        paid.result.expect("result").text,
        "final: paid 35 EUR to Ada"
    );

    // the page says the same in words
    let (status, page) = send(&app, get("/history", true)).await;
    assert_eq!(status, StatusCode::OK);
    for who in [
        "Declined by signed link, ",
        "Approved with changes by signed link, ",
        "Approved by signed link, ",
    ] {
        let line = decision_line(&page, who);
        assert!(line.ends_with(" s ago."), "{line}");
    }
    for text in [
        r#"<div class="who">From expense-bot · conversation c-7</div>"#,
        r#"<div class="muted now">Finished.</div>"#,
        r#"<a href="/">← waiting requests</a>"#,
        r#"<a href="/rules" id="rules-link">Remembered decisions →</a>"#,
    ] {
        assert!(page.contains(text), "{text} in {page}");
    }
    assert!(!page.contains("Rotate the logs?"), "{page}");
}

#[tokio::test]
async fn the_history_pages_follow_each_other_and_keep_the_callers_query() {
    let fx = Fixture::without_worker().await;
    let inbox = Inbox::builder(fx.store.clone())
        .signed_links(LINK_KEY.to_vec())
        .authorize(|parts, target| {
            target == Target::History
                && parts
                    .uri
                    .query()
                    .is_some_and(|q| q.split('&').any(|p| p == "admin=yes"))
        })
        .page_size(2)
        .build()
        .expect("inbox");
    let app = inbox.router();
    let mut answered = Vec::new();
    for n in 0..3 {
        let req = fx.park(approval_args(&format!("Step {n}?"))).await;
        fx.store
            .submit(&req.accept(json!(null)), &format!("person-{n}"))
            .await
            .expect("recorded");
        answered.push(req.id);
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let first = json_of(&app, "/api/history?admin=yes").await;
    let ids = |v: &Value| -> Vec<String> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["requestId"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&first), [answered[2].clone(), answered[1].clone()]);
    assert_eq!(first["runs"][0]["answeredBy"], "person-2");
    assert_eq!(first["runs"][0]["state"], "answered");
    assert_eq!(first["runs"][0]["outcome"], Value::Null);
    let cursor = first["next"].as_str().expect("another page");
    let second = json_of(
        &app,
        &format!("/api/history?admin=yes&after={}", form_encoded(cursor)),
    )
    .await;
    assert_eq!(ids(&second), [answered[0].clone()]);
    assert_eq!(second["next"], Value::Null);

    // the page links the next one, keeping the caller's query
    let (status, page) = send(&app, get("/history?admin=yes", false)).await;
    assert_eq!(status, StatusCode::OK);
    let older = format!(
        r#"<a href="/history?after={}&amp;admin=yes" rel="next">older →</a>"#,
        form_encoded(cursor)
    );
    assert!(page.contains(&older), "{older} in {page}");
    assert!(
        page.contains(r#"<a href="/rules?admin=yes" id="rules-link">"#),
        "{page}"
    );
    assert!(
        page.contains("Recorded: the assistant continues shortly."),
        "{page}"
    );
    let (status, body) = send(&app, get("/api/history?admin=yes&after=nonsense", false)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        r#"{"error":"`nonsense` is not a cursor a history page returned"}"#
    );
}

/// A run whose row cannot be read never hides the others: one in an unknown state is counted
/// on the page (and named in the JSON), one whose record alone is damaged is listed from its
/// columns, without who asked or what was decided.
#[tokio::test]
async fn a_damaged_run_in_the_history_stays_local() {
    use toolnexus::store::{MemoryStore, RunStore};
    use toolnexus::{Client, Reply, ScriptedModel, Toolkit};

    let store = MemoryStore::new();
    let shared: std::sync::Arc<dyn RunStore> = std::sync::Arc::new(store.clone());
    let (ask, _) = toolnexus_tests::asker("ask", "Your name?");
    let kit = Toolkit::builder().tool(ask).build().expect("toolkit");
    let mut runs = Vec::new();
    for _ in 0..3 {
        let client = Client::builder(ScriptedModel::new([Reply::tool_call("ask", json!({}))]))
            .model_name("m")
            .agent_name(AGENT)
            .store(shared.clone())
            .build()
            .expect("client");
        let halted = client.run("hi", &kit).await.expect("halts");
        let request = halted.pending.expect("a request");
        store
            .submit(&request.accept("Ada"), "alice")
            .await
            .expect("recorded");
        runs.push(halted.run_id);
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    assert_eq!(
        store.write_raw_column(&runs[0], "state", Some("bogus")),
        Some(true)
    );
    assert!(store.write_raw_record(&runs[1], "not a record"));
    let inbox = Inbox::builder(shared)
        .allow_anonymous()
        .build()
        .expect("inbox");
    let app = inbox.router();

    let history = json_of(&app, "/api/history").await;
    let listed: Vec<(&str, &Value, &Value)> = history["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| (r["runId"].as_str().unwrap(), &r["agent"], &r["decision"]))
        .collect();
    assert_eq!(
        listed,
        [
            (runs[2].as_str(), &json!(AGENT), &json!("answered")),
            (runs[1].as_str(), &Value::Null, &Value::Null),
        ]
    );
    assert_eq!(history["runs"][1]["answeredBy"], "alice");
    assert_eq!(history["damaged"][0]["runId"], runs[0].as_str());
    let (status, page) = send(&app, get("/history", false)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("1 answered run(s) on this page cannot be read"),
        "{page}"
    );
    assert_eq!(
        page.matches(r#"<div class="decision">Answered by alice, "#)
            .count(),
        2,
        "{page}"
    );
}
