//! The inbox router without a browser: every security rule, the forms, the JSON API
//! (tower `oneshot` on the router).

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use toolnexus::inbox::Inbox;
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, approval_args, trip_args};
use tower::ServiceExt as _;

pub(super) struct Reply {
    pub(super) status: StatusCode,
    pub(super) cookie: Option<String>,
    pub(super) body: String,
}

pub(super) async fn send(app: &axum::Router, req: HttpRequest<Body>) -> Reply {
    let res = app.clone().oneshot(req).await.expect("router answers");
    let status = res.status();
    let cookie = res
        .headers()
        .get(header::SET_COOKIE)
        .map(|v| v.to_str().expect("ascii cookie").to_owned());
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    Reply {
        status,
        cookie,
        body: String::from_utf8(bytes.to_vec()).expect("utf-8"),
    }
}

impl Reply {
    /// The reply has `status`, and its body contains `text`.
    #[track_caller]
    pub(super) fn says(&self, status: StatusCode, text: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        self.shows(text);
    }

    /// The body contains `text`.
    #[track_caller]
    pub(super) fn shows(&self, text: &str) {
        assert!(self.body.contains(text), "{}", self.body);
    }
}

/// The status a GET of `uri` gets.
pub(super) async fn status_of(app: &axum::Router, uri: &str) -> StatusCode {
    send(app, get(uri)).await.status
}

/// The status `req` gets.
pub(super) async fn status(app: &axum::Router, req: HttpRequest<Body>) -> StatusCode {
    send(app, req).await.status
}

pub(super) fn get(uri: &str) -> HttpRequest<Body> {
    HttpRequest::get(uri).body(Body::empty()).expect("request")
}

pub(super) fn get_admin(uri: &str) -> HttpRequest<Body> {
    HttpRequest::get(uri)
        .header("x-admin", "yes")
        .body(Body::empty())
        .expect("request")
}

pub(super) fn post_form(uri: &str, cookie: Option<&str>, body: &str) -> HttpRequest<Body> {
    let mut b =
        HttpRequest::post(uri).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(c) = cookie {
        b = b.header(header::COOKIE, c);
    }
    b.body(Body::from(body.to_owned())).expect("request")
}

pub(super) fn post_json(uri: &str, body: &Value) -> HttpRequest<Body> {
    HttpRequest::post(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("request")
}

/// The `csrf` hidden field's value on a form page.
pub(super) fn csrf_of(page: &str) -> String {
    let at =
        page.find(r#"name="csrf" value=""#).expect("a csrf field") + r#"name="csrf" value=""#.len();
    page[at..].split('"').next().expect("value").to_owned()
}

/// The `name=value` of a Set-Cookie header.
pub(super) fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().expect("pair").to_owned()
}

/// Opens a request's page and returns (cookie, csrf token, page).
pub(super) async fn open(app: &axum::Router, link: &str) -> (String, String, String) {
    let page = send(app, get(link)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let set = page.cookie.expect("the form page sets the session cookie");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    (cookie_pair(&set), csrf_of(&page.body), page.body)
}

/// A fixture with one run parked on a tool call with `args`, the run's request, the router of
/// an inbox over the fixture's store, and the request's signed link.
pub(super) async fn parked(args: Value) -> (Fixture, toolnexus::Request, axum::Router, String) {
    let fx = Fixture::new().await;
    let req = fx.park(args).await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let url = link(&fx, &inbox, &req.id);
    (fx, req, app, url)
}

/// The state of the run parked under request `id`.
pub(super) async fn state_of(fx: &Fixture, id: &str) -> RunState {
    let run = fx.store.get_by_request(id).await.expect("store");
    run.expect("run").info.state
}

/// What the answer page says once it recorded an answer.
pub(super) const RECORDED: &str = "Recorded. The assistant is continuing.";

/// The status page a recorded page links to ("See how it goes").
#[track_caller]
pub(super) fn status_link(recorded: &Reply) -> String {
    recorded.says(StatusCode::OK, RECORDED);
    let end = recorded
        .body
        .find(r#"">See how it goes</a>"#)
        .expect("a status link");
    let start = recorded.body[..end].rfind(r#"href=""#).expect("href") + r#"href=""#.len();
    recorded.body[start..end].replace("&amp;", "&")
}

/// The status page once the run has moved on (the worker resumed it), polled for at most
/// 10 s.
pub(super) async fn moved_on(app: &axum::Router, status: &str) -> Reply {
    for _ in 0..500 {
        let page = send(app, get(status)).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        if !page.body.contains(RECORDED) {
            return page;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the run did not move on: {status}");
}

/// The JSON status once the run has moved on (an outcome or a next request).
pub(super) async fn moved_on_json(app: &axum::Router, status: &str) -> Value {
    for _ in 0..500 {
        let r = send(app, get(status)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let v: Value = serde_json::from_str(&r.body).expect("json");
        if !v["outcome"].is_null() || !v["next"].is_null() {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the run did not move on: {status}");
}

pub(super) fn link(fx: &Fixture, inbox: &Inbox, id: &str) -> String {
    let _ = fx;
    inbox
        .link(id, Duration::from_secs(600))
        .expect("signed links are on")
}

#[tokio::test]
pub(super) async fn without_a_capability_everything_is_forbidden() {
    let fx = Fixture::new().await;
    let req = fx.park(trip_args("Plan the trip")).await;
    let inbox = fx.inbox();
    let app = inbox.router();

    assert_eq!(status(&app, get("/")).await, StatusCode::FORBIDDEN);
    assert_eq!(
        status(&app, get("/api/requests")).await,
        StatusCode::FORBIDDEN
    );
    let bare = format!("/r/{}", req.id);
    let page = send(&app, get(&bare)).await;
    page.says(
        StatusCode::FORBIDDEN,
        "You need a link or permission to see this.",
    );
    assert!(!page.body.contains("Plan the trip"));
    assert_eq!(
        status(&app, post_form(&bare, None, "f.city=Oslo&f.nights=2")).await,
        StatusCode::FORBIDDEN
    );
    let api = format!("/api/requests/{}/answer", req.id);
    assert_eq!(
        status(&app, post_json(&api, &json!({"ok": true}))).await,
        StatusCode::FORBIDDEN
    );

    // a link signed for another request, or with its expiry edited, is forged
    let other = link(&fx, &inbox, "sus-other");
    let forged = format!("/r/{}?{}", req.id, other.split_once('?').expect("query").1);
    let page = send(&app, get(&forged)).await;
    page.says(
        StatusCode::FORBIDDEN,
        "This link is not valid: its signature does not match.",
    );
    let good = link(&fx, &inbox, &req.id);
    let (path, q) = good.split_once('?').expect("query");
    let exp: u64 = q
        .split('&')
        .next()
        .and_then(|p| p.strip_prefix("exp="))
        .expect("exp")
        .parse()
        .expect("number");
    let sig = q.split_once("&sig=").expect("sig").1;
    let edited = format!("{path}?exp={}&sig={sig}", exp + 3600);
    assert_eq!(status(&app, get(&edited)).await, StatusCode::FORBIDDEN);
    // a link past its own expiry
    let stale = inbox.link(&req.id, Duration::ZERO).expect("link");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let page = send(&app, get(&stale)).await;
    page.says(StatusCode::FORBIDDEN, "This link has expired.");

    // an inbox with no capability configured grants nothing, not even with a signed link
    let closed = toolnexus::inbox::Inbox::builder(fx.store.clone())
        .build()
        .expect("a valid inbox");
    let closed_app = closed.router();
    assert_eq!(status(&closed_app, get(&good)).await, StatusCode::FORBIDDEN);
    assert_eq!(
        status(&closed_app, get_admin("/")).await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(closed.link(&req.id, Duration::from_secs(60)), None);

    assert_eq!(fx.retries(), 0);
    assert_eq!(state_of(&fx, &req.id).await, RunState::Parked);
}

/// Issue 22: the page accepted an empty or one-byte signing key, so anyone could mint links
/// and approve any request. `build` refuses a key under 32 bytes.
#[tokio::test]
async fn an_empty_or_one_byte_link_key_is_refused_so_no_one_can_mint_links() {
    let fx = Fixture::new().await;
    let builder = || toolnexus::inbox::Inbox::builder(fx.store.clone());
    for len in [0, 1, 16, 31] {
        let err = builder()
            .signed_links(vec![7u8; len])
            .build()
            .expect_err("a short key");
        assert!(matches!(err, toolnexus::Error::Config(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "the inbox's signed-link key needs at least 32 bytes, got {len}: use 32 or more random bytes"
            )
        );
    }
    assert_eq!(toolnexus::inbox::MIN_LINK_KEY_LEN, 32);
    let inbox = builder()
        .signed_links(vec![7u8; 32])
        .build()
        .expect("a 32-byte key");
    assert!(inbox.link("sus-1", Duration::from_secs(60)).is_some());
}

#[tokio::test]
async fn the_list_shows_pending_requests_newest_first_with_signed_links() {
    let fx = Fixture::new().await;
    let first = fx.park(trip_args("first trip")).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = fx.park(approval_args("second: deploy?")).await;
    let app = fx.inbox().router();

    let list = send(&app, get_admin("/")).await;
    assert_eq!(list.status, StatusCode::OK);
    let a = list.body.find("second: deploy?").expect("second listed");
    let b = list.body.find("first trip").expect("first listed");
    assert!(a < b, "newest first");
    assert!(
        list.body
            .contains(r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#)
    );
    assert!(list.body.contains(&format!("/r/{}?exp=", second.id)));
    assert!(
        list.body.contains("in 59 min") || list.body.contains("in 1 h"),
        "{}",
        list.body
    );

    let json = send(&app, get_admin("/api/requests")).await;
    assert_eq!(json.status, StatusCode::OK);
    let v: Value = serde_json::from_str(&json.body).expect("json");
    let ids: Vec<&str> = v["requests"]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [second.id.as_str(), first.id.as_str()]);
    assert_eq!(v["requests"][0]["kind"], "approval");
    assert_eq!(v["next"], Value::Null);

    // paged
    let paged = toolnexus::inbox::Inbox::builder(fx.store.clone())
        .allow_anonymous()
        .page_size(1)
        .build()
        .expect("a valid inbox")
        .router();
    let p1 = send(&paged, get("/")).await;
    assert!(p1.body.contains("second: deploy?") && !p1.body.contains("first trip"));
    p1.shows(r#"href="/?page=2""#);
    let p2 = send(&paged, get("/?page=2")).await;
    assert!(p2.body.contains("first trip") && !p2.body.contains("second: deploy?"));
}

#[tokio::test]
async fn an_input_request_renders_every_control_and_a_wrong_value_resumes_nothing() {
    let (fx, req, app, url) = parked(trip_args("Plan the trip")).await;
    let (cookie, csrf, page) = open(&app, &url).await;
    for part in [
        r#"<input type="text" id="i-f.city" name="f.city" value="" required aria-invalid="false">"#,
        // labels are words, never the code name: the code name in words (with the long
        // description as help), a short description, the title
        r#"<label for="i-f.city">City<span class="req" title="required"> *</span></label><p class="help" id="i-f.city-help">The city you fly to; the airport nearest to it is booked for you.</p>"#,
        r#"<label for="i-f.nights">How many nights<span class="req" title="required"> *</span></label>"#,
        r#"<label for="i-f.seat">Seat preference</label>"#,
        "<strong>Checked luggage</strong>",
        // the kind in plain words, and what will run
        r#"<h1 data-kind="input">Needs information</h1>"#,
        r#"<details class="run"><summary>What will run: Ask <code class="muted">ask</code></summary><table>"#,
        r#"inputmode="numeric" id="i-f.nights" name="f.nights""#,
        r#"<select id="i-f.seat" name="f.seat" aria-invalid="false"><option value="" selected>—</option><option value="aisle">aisle</option><option value="window">window</option></select>"#,
        r#"<input type="checkbox" id="i-f.bags" name="f.bags">"#,
        r#"<span class="req" title="required"> *</span>"#,
    ] {
        assert!(page.contains(part), "missing {part} in {page}");
    }

    let wrong = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.city=Oslo&f.nights=three"),
        ),
    )
    .await;
    wrong.says(
        StatusCode::UNPROCESSABLE_ENTITY,
        r#"<p class="error field" id="i-f.nights-error" role="alert">How many nights: must be a whole number, not `three`</p>"#,
    );
    assert!(
        wrong.body.contains(r#"value="Oslo""#),
        "the form keeps what was typed"
    );
    assert_eq!(fx.retries(), 0);
    assert_eq!(state_of(&fx, &req.id).await, RunState::Parked);

    let right = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.city=Oslo&f.nights=3&f.seat=aisle&f.bags=on"),
        ),
    )
    .await;
    // recorded at once; the worker resumes the run, and the status page shows how it ended
    right.shows("Answered by signed link.");
    let status = status_link(&right);
    let done = moved_on(&app, &status).await;
    done.shows(r#"<div class="done" id="outcome">final: answered: {&quot;bags&quot;:true,&quot;city&quot;:&quot;Oslo&quot;,&quot;nights&quot;:3,&quot;seat&quot;:&quot;aisle&quot;}</div>"#);
    assert_eq!(fx.retries(), 1);
    assert_eq!(state_of(&fx, &req.id).await, RunState::Finished);
}

#[tokio::test]
async fn csrf_needs_the_cookie_and_the_token_of_this_request() {
    let fx = Fixture::new().await;
    let req = fx.park(approval_args("Deploy?")).await;
    let other = fx.park(approval_args("Other?")).await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let url = link(&fx, &inbox, &req.id);
    let (cookie, csrf, _) = open(&app, &url).await;
    let (_, other_csrf, _) = open(&app, &link(&fx, &inbox, &other.id)).await;

    let cases = [
        (None, format!("csrf={csrf}&action=accept")),
        (Some(cookie.as_str()), "action=accept".to_owned()),
        (Some(cookie.as_str()), "csrf=00ff&action=accept".to_owned()),
        (
            Some(
                "toolnexus_inbox=0000000000000000000000000000000000000000000000000000000000000000",
            ),
            format!("csrf={csrf}&action=accept"),
        ),
        // a token of another request (from another session)
        (
            Some(cookie.as_str()),
            format!("csrf={other_csrf}&action=accept"),
        ),
    ];
    for (c, body) in cases {
        let r = send(&app, post_form(&url, c, &body)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{c:?} {body}");
        r.shows("its CSRF token does not match");
    }
    assert_eq!(fx.retries(), 0);

    let ok = send(
        &app,
        post_form(&url, Some(&cookie), &format!("csrf={csrf}&action=accept")),
    )
    .await;
    moved_on(&app, &status_link(&ok))
        .await
        .shows("final: answered: null");
}

#[tokio::test]
async fn prompts_and_values_are_escaped() {
    let fx = Fixture::new().await;
    let evil = r#"<script>alert("x")</script> & <b>bold</b>"#;
    let req = fx
        .park(json!({
            "kind": "input", "prompt": evil,
            "schema": {"type": "object", "properties": {
                "note": {"type": "string", "description": "<img src=x onerror=alert(1)>"},
                "pick": {"type": "string", "enum": ["\"><script>1</script>"]}
            }}
        }))
        .await;
    let inbox = fx.inbox();
    let app = inbox.router();

    let list = send(&app, get_admin("/")).await;
    assert!(!list.body.contains("<script>"), "{}", list.body);
    list.shows("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;");

    let url = link(&fx, &inbox, &req.id);
    let (cookie, csrf, page) = open(&app, &url).await;
    assert!(
        !page.contains("<script>") && !page.contains("<img"),
        "{page}"
    );
    assert!(page.contains(r#"<div class="prompt">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;</div>"#), "{page}");
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(
        page.contains(r#"<option value="&quot;&gt;&lt;script&gt;1&lt;/script&gt;">"#),
        "{page}"
    );

    // a submitted value comes back escaped beside the error
    let bad = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!(
                "csrf={csrf}&action=accept&f.note=%22%3E%3Cscript%3E2%3C%2Fscript%3E&f.pick=nope"
            ),
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(!bad.body.contains("<script>"), "{}", bad.body);
    bad.shows(r#"value="&quot;&gt;&lt;script&gt;2&lt;/script&gt;""#);
    bad.shows("Pick: must be one of: &quot;&gt;&lt;script&gt;1&lt;/script&gt;");
}
