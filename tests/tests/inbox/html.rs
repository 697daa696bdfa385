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
async fn status_of(app: &axum::Router, uri: &str) -> StatusCode {
    send(app, get(uri)).await.status
}

/// The status `req` gets.
async fn status(app: &axum::Router, req: HttpRequest<Body>) -> StatusCode {
    send(app, req).await.status
}

pub(super) fn get(uri: &str) -> HttpRequest<Body> {
    HttpRequest::get(uri).body(Body::empty()).expect("request")
}

fn get_admin(uri: &str) -> HttpRequest<Body> {
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
fn csrf_of(page: &str) -> String {
    let at =
        page.find(r#"name="csrf" value=""#).expect("a csrf field") + r#"name="csrf" value=""#.len();
    page[at..].split('"').next().expect("value").to_owned()
}

/// The `name=value` of a Set-Cookie header.
fn cookie_pair(set_cookie: &str) -> String {
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
async fn parked(args: Value) -> (Fixture, toolnexus::Request, axum::Router, String) {
    let fx = Fixture::new().await;
    let req = fx.park(args).await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let url = link(&fx, &inbox, &req.id);
    (fx, req, app, url)
}

/// The state of the run parked under request `id`.
async fn state_of(fx: &Fixture, id: &str) -> RunState {
    let run = fx.store.get_by_request(id).await.expect("store");
    run.expect("run").info.state
}

/// What the answer page says once it recorded an answer.
const RECORDED: &str = "Recorded. The assistant is continuing.";

/// The status page a recorded page links to ("See how it goes").
#[track_caller]
fn status_link(recorded: &Reply) -> String {
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
async fn moved_on(app: &axum::Router, status: &str) -> Reply {
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
async fn moved_on_json(app: &axum::Router, status: &str) -> Value {
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
async fn without_a_capability_everything_is_forbidden() {
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

/// Parks `args`'s request (an innocent form), then rewrites the parked record's request (every
/// copy of it: `pending` and the halted call's result, not the call's arguments, which the
/// fingerprint covers) with `edit`, as someone writing to the store past the loop could.
async fn park_then_edit(
    fx: &Fixture,
    args: Value,
    edit: impl Fn(&mut Value),
) -> toolnexus::Request {
    fn walk(v: &mut Value, id: &str, edit: &dyn Fn(&mut Value)) {
        match v {
            Value::Object(o) => {
                if o.get("id").and_then(Value::as_str) == Some(id) && o.contains_key("kind") {
                    edit(v);
                    return;
                }
                o.values_mut().for_each(|v| walk(v, id, edit));
            }
            Value::Array(a) => a.iter_mut().for_each(|v| walk(v, id, edit)),
            _ => {}
        }
    }
    let parked = fx.park(args).await;
    let run = fx
        .store
        .get_by_request(&parked.id)
        .await
        .expect("store")
        .expect("run");
    let mut record: Value = serde_json::from_str(&run.record.to_json()).expect("json");
    walk(&mut record, &parked.id, &edit);
    let record = toolnexus::PendingRun::from_json(&record.to_string())
        .expect("an edited record that still agrees with itself");
    assert!(fx.store.delete(&run.info.run_id).await.expect("delete"));
    fx.store.park(record.clone()).await.expect("park");
    record.pending().clone()
}

/// Issue 22: a `login` request whose form asks for the online-banking password, written past
/// the loop's own check, is refused by the page (as is an `input` asking for a password, and a
/// custom kind asking for an API key).
#[tokio::test]
async fn a_credential_field_is_never_rendered_whatever_the_kind() {
    let fx = Fixture::new().await;
    // the runtime refuses to suspend any request whose form asks for a credential (the tool
    // fails), so such a record comes from elsewhere: write them into the store by hand
    let form = json!({"type": "object", "properties": {"user": {"type": "string"}}});
    let add = |name: &'static str, prop: Value| {
        move |req: &mut Value| {
            req["data"]["schema"]["properties"][name] = prop.clone();
        }
    };
    let input = park_then_edit(
        &fx,
        json!({"kind": "input", "prompt": "Log in", "schema": form}),
        add("password", json!({"type": "string"})),
    )
    .await;
    let login = park_then_edit(
        &fx,
        json!({"kind": "login", "prompt": "Online banking", "schema": form}),
        add(
            "p",
            json!({"type": "string", "title": "Online-banking password"}),
        ),
    )
    .await;
    let deploy = park_then_edit(
        &fx,
        json!({"kind": "deploy", "prompt": "Deploy", "schema": form}),
        add("apiKey", json!({"type": "string"})),
    )
    .await;
    let inbox = fx.inbox();
    let app = inbox.router();
    for (req, why) in [
        (
            &input,
            "`data.schema.properties.password` of the `input` request has the name `password`, \
             which reads as the credential word `password`",
        ),
        (
            &login,
            "`data.schema.properties.p.title` of the `login` request has the text \
             `Online-banking password`, which mentions the credential word `password`",
        ),
        (
            &deploy,
            "`data.schema.properties.apiKey` of the `deploy` request has the name `apiKey`, \
             which reads as the credential word `apikey`",
        ),
    ] {
        let url = link(&fx, &inbox, &req.id);
        let page = send(&app, get(&url)).await;
        page.says(StatusCode::UNPROCESSABLE_ENTITY, why);
        assert!(!page.body.contains("<form"), "no form: {}", page.body);
        assert!(!page.body.contains("<input"));
        let post = send(&app, post_form(&url, None, "action=accept")).await;
        assert_eq!(post.status, StatusCode::UNPROCESSABLE_ENTITY);
        let api = url.replacen("/r/", "/api/requests/", 1);
        assert_eq!(
            status(&app, get(&api)).await,
            StatusCode::UNPROCESSABLE_ENTITY
        );
    }
    assert_eq!(fx.retries(), 0);
}

#[tokio::test]
async fn an_expired_request_shows_as_expired_and_cannot_be_answered() {
    // no worker: the expired request stays parked (a worker would resume it at once)
    let fx = Fixture::without_worker().await;
    let req = fx
        .park(json!({"kind": "approval", "prompt": "Too late?", "expired": true}))
        .await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let url = link(&fx, &inbox, &req.id);

    let list = send(&app, get_admin("/")).await;
    list.shows(r#"<td class="when">expired</td>"#);
    let page = send(&app, get(&url)).await;
    page.says(
        StatusCode::GONE,
        "This request has expired; it can no longer be answered.",
    );
    assert!(!page.body.contains("<form"));
    assert_eq!(
        status(&app, post_form(&url, None, "action=accept")).await,
        StatusCode::GONE
    );
    let api = url
        .replacen("/r/", "/api/requests/", 1)
        .replacen('?', "/answer?", 1);
    assert_eq!(
        status(&app, post_json(&api, &json!({"ok": true}))).await,
        StatusCode::GONE
    );
    assert_eq!(fx.retries(), 0);
}

#[tokio::test]
async fn a_double_submit_resumes_once() {
    let (fx, _, app, url) = parked(approval_args("Ship it?")).await;
    let (cookie, csrf, _) = open(&app, &url).await;
    let body = format!("csrf={csrf}&action=accept");
    let (a, b) = tokio::join!(
        send(&app, post_form(&url, Some(&cookie), &body)),
        send(&app, post_form(&url, Some(&cookie), &body))
    );
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::CONFLICT],
        "{} / {}",
        a.body,
        b.body
    );
    let loser = if a.status == StatusCode::CONFLICT {
        &a
    } else {
        &b
    };
    loser.shows("This request was already answered.");
    let third = send(&app, post_form(&url, Some(&cookie), &body)).await;
    assert_eq!(third.status, StatusCode::CONFLICT);
    let winner = if a.status == StatusCode::OK { &a } else { &b };
    moved_on(&app, &status_link(winner))
        .await
        .shows("final: answered: null");
    assert_eq!(fx.retries(), 1);
}

#[tokio::test]
async fn the_json_api_lists_gets_and_answers() {
    let (fx, req, app, url) = parked(trip_args("Plan the trip")).await;
    let (path, q) = url.split_once('?').expect("query");
    let one = format!("/api/requests/{}?{q}", &path[3..]);
    let got = send(&app, get(&one)).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    let v: Value = serde_json::from_str(&got.body).expect("json");
    assert_eq!(
        v["request"],
        serde_json::to_value(&req).expect("request json")
    );
    assert_eq!(v["state"], "parked");
    // the run's history: requested, with an RFC 3339 time
    assert_eq!(v["history"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["history"][0]["event"], "requested");
    assert_eq!(v["history"][0]["request"], json!(req.id));
    assert!(
        v["history"][0]["at"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z')),
        "{v}"
    );

    let answer = format!("/api/requests/{}/answer?{q}", &path[3..]);
    let form = HttpRequest::post(&answer)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("ok=true"))
        .expect("request");
    assert_eq!(status(&app, form).await, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let wrong = send(
        &app,
        post_json(
            &answer,
            &json!({"ok": true, "data": {"city": "Oslo", "nights": "3"}}),
        ),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        serde_json::from_str::<Value>(&wrong.body).expect("json"),
        json!({"error": "How many nights: must be a whole number", "field": "nights"})
    );
    assert_eq!(fx.retries(), 0);

    let done = send(
        &app,
        post_json(
            &answer,
            &json!({"ok": true, "data": {"city": "Oslo", "nights": 3}}),
        ),
    )
    .await;
    // recorded at once (202); its status link shows the outcome once the worker resumed it
    assert_eq!(done.status, StatusCode::ACCEPTED, "{}", done.body);
    let recorded: Value = serde_json::from_str(&done.body).expect("json");
    assert_eq!(recorded["status"], "recorded");
    assert_eq!(recorded["answeredBy"], "signed link");
    let run_id = recorded["runId"].as_str().expect("run id").to_owned();
    let status = recorded["statusLink"].as_str().expect("status link");
    assert!(
        status.starts_with(&format!(
            "/api/requests/{}/status?run={run_id}&exp=",
            req.id
        )),
        "{status}"
    );
    let v = moved_on_json(&app, status).await;
    assert_eq!(
        v["outcome"],
        json!({"status": "done", "text": r#"final: answered: {"city":"Oslo","nights":3}"#})
    );
    assert_eq!(v["state"], "finished");
    assert_eq!(v["answeredBy"], "signed link");
    let events: Vec<(&str, &str)> = v["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|e| (e["event"].as_str().unwrap(), e["by"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        events,
        [
            ("requested", ""),
            ("answered", "signed link"),
            ("claimed", "inbox-worker"),
            ("finished", "")
        ]
    );
    // a status link of another request's run finds nothing
    let forged = status.replace(&run_id, "run-of-someone-else");
    assert_eq!(status_of(&app, &forged).await, StatusCode::NOT_FOUND);
    let again = send(
        &app,
        post_json(
            &answer,
            &json!({"ok": true, "data": {"city": "Oslo", "nights": 3}}),
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(fx.retries(), 1);
}

#[tokio::test]
async fn declining_and_other_kinds() {
    let fx = Fixture::new().await;
    let approval = fx.park(approval_args("Deploy?")).await;
    let auth = fx.park(json!({"kind": "authorization", "prompt": "Log in to Git", "url": "https://git.example/login"})).await;
    let js = fx
        .park(json!({"kind": "authorization", "prompt": "Log in", "url": "javascript:alert(1)"}))
        .await;
    let question = fx
        .park(json!({"kind": "question", "prompt": "Seat?", "questions": [
            {"question": "Seat?", "options": ["aisle", "window"]},
            {"question": "Meals?", "options": ["veg", "fish"], "multiple": true}
        ]}))
        .await;
    let inbox = fx.inbox();
    let app = inbox.router();

    // approval: Decline feeds the model declined/expired
    let url = link(&fx, &inbox, &approval.id);
    let (cookie, csrf, page) = open(&app, &url).await;
    assert!(
        page.contains(r#"value="accept">Approve</button>"#)
            && page.contains(r#"value="decline">Decline</button>"#)
    );
    let r = send(
        &app,
        post_form(&url, Some(&cookie), &format!("csrf={csrf}&action=decline")),
    )
    .await;
    moved_on(&app, &status_link(&r))
        .await
        .shows("final: declined/expired: Deploy?");
    assert_eq!(fx.retries(), 0);

    // authorization: a link out and "done, continue"; a javascript: url is no link
    let (_, _, page) = open(&app, &link(&fx, &inbox, &auth.id)).await;
    assert!(page.contains(r#"<a class="button" href="https://git.example/login" target="_blank" rel="noopener noreferrer">"#), "{page}");
    assert!(page.contains("Done, continue"));
    let (_, _, page) = open(&app, &link(&fx, &inbox, &js.id)).await;
    assert!(!page.contains(r#"href="javascript"#), "{page}");
    assert!(page.contains("<code>javascript:alert(1)</code>"));

    // question: radio buttons, checkboxes when multiple; the answer is keyed by question
    let url = link(&fx, &inbox, &question.id);
    let (cookie, csrf, page) = open(&app, &url).await;
    assert!(
        page.contains(r#"<input type="radio" id="i-q.0-0" name="q.0" value="aisle" required>"#),
        "{page}"
    );
    assert!(
        page.contains(r#"<input type="checkbox" id="i-q.1-1" name="q.1" value="fish">"#),
        "{page}"
    );
    let r = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&q.0=window&q.1=veg&q.1=fish"),
        ),
    )
    .await;
    moved_on(&app, &status_link(&r)).await.shows("final: answered: {&quot;Meals?&quot;:[&quot;veg&quot;,&quot;fish&quot;],&quot;Seat?&quot;:&quot;window&quot;}");
}

#[tokio::test]
async fn mounted_under_a_prefix_links_follow_the_mount_point() {
    let fx = Fixture::new().await;
    let req = fx.park(approval_args("Deploy?")).await;
    let inbox = fx.inbox();
    let app = axum::Router::new().nest("/inbox", inbox.router());
    let list = send(&app, get_admin("/inbox")).await;
    list.says(
        StatusCode::OK,
        &format!(r#"href="/inbox/r/{}?exp="#, req.id),
    );
    let url = format!("/inbox{}", link(&fx, &inbox, &req.id));
    let page = send(&app, get(&url)).await;
    page.says(
        StatusCode::OK,
        &format!(
            r#"<form method="post" action="{}" novalidate>"#,
            url.replace('&', "&amp;")
        ),
    );
    page.shows(r#"<a href="/inbox">← all requests</a>"#);
    assert!(page.cookie.expect("cookie").contains("Path=/inbox;"));
}

#[tokio::test]
async fn mounted_with_mount_it_answers_with_and_without_a_trailing_slash() {
    let fx = Fixture::new().await;
    let req = fx.park(approval_args("Deploy?")).await;
    let inbox = fx.inbox();
    let app = axum::Router::new().merge(inbox.mount("/inbox/"));
    let list = send(&app, get_admin("/inbox")).await;
    list.says(
        StatusCode::OK,
        &format!(r#"href="/inbox/r/{}?exp="#, req.id),
    );
    let res = app
        .clone()
        .oneshot(get_admin("/inbox/"))
        .await
        .expect("router answers");
    assert_eq!(res.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(res.headers()[header::LOCATION], "/inbox");
    let url = format!("/inbox{}", link(&fx, &inbox, &req.id));
    send(&app, get(&url)).await.says(StatusCode::OK, "Deploy?");
    // plain `nest` answers only without the slash (axum's rule), which `mount` is for
    let nested = axum::Router::new().nest("/inbox", inbox.router());
    assert_eq!(
        send(&nested, get_admin("/inbox/")).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_run_that_asks_again_links_to_its_next_request() {
    let fx = Fixture::new().await;
    let first = fx
        .park(json!({"kind": "approval", "prompt": "Step one?", "then": {"kind": "approval", "prompt": "Step two?"}}))
        .await;
    let inbox = fx.inbox();
    let app = inbox.router();
    let url = link(&fx, &inbox, &first.id);
    let (cookie, csrf, _) = open(&app, &url).await;
    let r_first = send(
        &app,
        post_form(&url, Some(&cookie), &format!("csrf={csrf}&action=accept")),
    )
    .await;
    let r = moved_on(&app, &status_link(&r_first)).await;
    r.says(StatusCode::OK, "The run goes on and asks again:");
    r.shows("Step two?");
    let list = send(&app, get_admin("/api/requests")).await;
    let v: Value = serde_json::from_str(&list.body).expect("json");
    assert_eq!(v["requests"].as_array().expect("list").len(), 1);
    assert_eq!(v["requests"][0]["prompt"], "Step two?");
    // the listing shows the run's history: the first request, answered, resumed, asked again
    let events: Vec<&str> = v["requests"][0]["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["requested", "answered", "claimed", "requested"]);
    assert_eq!(v["requests"][0]["history"][1]["by"], "signed link");
    assert_eq!(v["requests"][0]["history"][2]["by"], "inbox-worker");
    let next_href = v["requests"][0]["link"].as_str().expect("link").to_owned();
    let next_path = next_href.split("?exp=").next().expect("path");
    r.shows(&format!(r#"href="{next_path}?exp="#));

    // the next one, answered through the JSON API
    let (path, q) = next_href.split_once('?').expect("query");
    let api = format!("/api/requests/{}/answer?{q}", &path[3..]);
    let done = send(&app, post_json(&api, &json!({"ok": true}))).await;
    assert_eq!(done.status, StatusCode::ACCEPTED, "{}", done.body);
    let recorded: Value = serde_json::from_str(&done.body).expect("json");
    let v = moved_on_json(&app, recorded["statusLink"].as_str().expect("link")).await;
    assert_eq!(
        v["outcome"],
        json!({"status": "done", "text": "final: answered: null"})
    );
    // the first request's status page follows the run to its end
    let first_status = moved_on(&app, &status_link(&r_first)).await;
    first_status.shows("final: answered: null");
    // the old link, once its run moved on and finished: answered already (not "not found")
    let old = send(&app, get(&url)).await;
    old.says(StatusCode::CONFLICT, "This request was already answered.");
    assert_eq!(fx.retries(), 2);
}

#[tokio::test]
async fn an_approval_page_says_in_words_what_will_run_and_who_asks() {
    let (fx, req, app, url) = parked(approval_args("Deploy build 42?")).await;
    let (_, _, page) = open(&app, &url).await;
    for part in [
        r#"<h1 data-kind="approval">Needs your approval</h1>"#,
        r#"<section class="run" aria-label="What will run"><h2>What will run: Ask <code class="muted">ask</code></h2>"#,
        r#"<tr><th scope="row">Kind</th><td>approval</td></tr>"#,
        r#"<tr><th scope="row">Prompt</th><td>Deploy build 42?</td></tr>"#,
        r#"<button type="submit" name="action" value="accept">Approve</button>"#,
    ] {
        assert!(page.contains(part), "missing {part} in {page}");
    }
    let run_id = fx
        .store
        .get_by_request(&req.id)
        .await
        .expect("store")
        .expect("the parked run")
        .info
        .run_id;
    assert!(
        page.contains(&format!("Run <code>{run_id}</code>.")),
        "{page}"
    );
    // the list says it in words too (the kind stays machine-readable)
    let list = send(&app, get_admin("/")).await;
    list.shows(r#"<span class="kind" data-kind="approval">Needs your approval</span>"#);
}

#[tokio::test]
async fn a_required_choice_starts_empty_and_submitting_it_empty_is_refused_next_to_it() {
    let (fx, req, app, url) = parked(json!({
        "kind": "expense", "prompt": "Book the taxi",
        "schema": {"type": "object", "properties": {
            "cost_center": {"type": "string", "enum": ["sales", "lab"]}
        }, "required": ["cost_center"]}
    }))
    .await;
    let (cookie, csrf, page) = open(&app, &url).await;
    for part in [
        r#"<label for="i-f.cost_center">Cost center<span class="req" title="required"> *</span></label>"#,
        r#"<select id="i-f.cost_center" name="f.cost_center" required aria-invalid="false"><option value="" selected>Choose…</option><option value="sales">sales</option><option value="lab">lab</option></select>"#,
        r#"<h1 data-kind="expense">Needs your answer</h1>"#,
        "novalidate",
    ] {
        assert!(page.contains(part), "missing {part} in {page}");
    }
    // what a browser sends when nothing was chosen: refused, next to the field; nothing runs
    let empty = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.cost_center="),
        ),
    )
    .await;
    empty.says(
        StatusCode::UNPROCESSABLE_ENTITY,
        r#"<select id="i-f.cost_center" name="f.cost_center" required aria-invalid="true"><option value="" selected>Choose…</option>"#,
    );
    empty.shows(
        r#"<p class="error field" id="i-f.cost_center-error" role="alert">Cost center: choose one</p>"#,
    );
    assert!(
        !empty.body.contains(r#"<p class="error" role="alert">"#),
        "the message is next to the field, not on top: {}",
        empty.body
    );
    assert_eq!(fx.retries(), 0);
    assert_eq!(state_of(&fx, &req.id).await, RunState::Parked);

    let chosen = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.cost_center=lab"),
        ),
    )
    .await;
    assert_eq!(chosen.status, StatusCode::OK, "{}", chosen.body);
    moved_on(&app, &status_link(&chosen))
        .await
        .shows("final: answered: {&quot;cost_center&quot;:&quot;lab&quot;}");
}

/// An editable approval whose tool's schema is a flat form: one typed field per argument (the
/// input forms' renderer), filled with the proposal; a wrong value is refused next to its
/// field and nothing is recorded; a fitting edit is what runs.
#[tokio::test]
async fn an_editable_approval_is_approved_with_edited_arguments_checked_at_the_door() {
    let (_fx, _req, app, url) =
        parked(json!({"tool": "pay", "args": {"amount": 40, "to": "Ada"}})).await;
    let (cookie, csrf, page) = open(&app, &url).await;
    for part in [
        r#"<h1 data-kind="approval">Needs your approval</h1>"#,
        r#"<tr><th scope="row">Amount</th><td>40</td></tr>"#,
        r#"<fieldset class="args" id="args" aria-describedby="args-help"><legend><strong>Arguments</strong></legend>"#,
        r#"<input type="text" inputmode="numeric" id="i-f.amount" name="f.amount" value="40" required aria-invalid="false">"#,
        r#"<input type="text" id="i-f.to" name="f.to" value="Ada" required aria-invalid="false">"#,
    ] {
        assert!(page.contains(part), "missing {part} in {page}");
    }
    assert!(!page.contains("<textarea"), "no JSON to write: {page}");
    let post = |fields: &str| {
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&{fields}"),
        )
    };
    // refused at the door, next to the field, and nothing is recorded
    for (fields, field, why) in [
        (
            "f.amount=forty&f.to=Ada",
            "amount",
            "Amount: must be a whole number, not `forty`",
        ),
        (
            "f.amount=0&f.to=Ada",
            "amount",
            "Amount: must be at least 1",
        ),
        ("f.amount=5&f.to=", "to", "To: required"),
    ] {
        let r = send(&app, post(fields)).await;
        r.says(
            StatusCode::UNPROCESSABLE_ENTITY,
            &format!(r#"<p class="error field" id="i-f.{field}-error" role="alert">{why}</p>"#),
        );
    }
    // an edit that fits: recorded, and the edited call is what runs
    let ok = send(&app, post("f.amount=30&f.to=Ada")).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    moved_on(&app, &status_link(&ok))
        .await
        .shows("final: paid 30 EUR to Ada");
}

/// The same approval sent back as proposed is a plain approval (no `data.args`), so the
/// history says "Approved", not "Approved with changes".
#[tokio::test]
async fn an_editable_approval_sent_back_unchanged_is_a_plain_approval() {
    let (fx, req, app, url) =
        parked(json!({"tool": "pay", "args": {"amount": 40, "to": "Ada"}})).await;
    let (cookie, csrf, _) = open(&app, &url).await;
    let ok = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.amount=40&f.to=Ada"),
        ),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    moved_on(&app, &status_link(&ok))
        .await
        .shows("final: paid 40 EUR to Ada");
    let run = fx.store.get_by_request(&req.id).await.unwrap().unwrap();
    let answer = run.answer.expect("the answer");
    assert!(answer.ok);
    assert_eq!(answer.data, None, "no edit recorded: {answer:?}");
}

/// A run whose `pay` call a crash cut, parked on its `reconcile` request: the page says so in
/// words, shows what ran (the tool and its arguments), offers the three actions as a required
/// choice that starts empty (submitting without one is refused next to it), and a recorded
/// answer resumes the run with the output the person gave; `pay` never ran again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_request_renders_as_a_form_and_its_answer_records_the_output() {
    use std::sync::Arc;
    use toolnexus::store::{RunStore, SqliteStore};
    use toolnexus_tests::store_conformance::{CrashCut, assert_reconcile};

    let lease = Duration::from_millis(200);
    let path = std::env::temp_dir().join(format!(
        "toolnexus-inbox-reconcile-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let store: Arc<dyn RunStore> =
        Arc::new(SqliteStore::open(&path).await.unwrap().with_lease(lease));
    let tools = CrashCut::new();
    let taken = tools.crash_inside_pay(&store, lease).await;
    let parked = CrashCut::client()
        .resume_claim(store.as_ref(), &taken, &tools.toolkit)
        .await
        .unwrap();
    let key = tools.keys.lock().unwrap()[0].clone();
    let request = assert_reconcile(&parked, &key);

    let inbox = Inbox::builder(Arc::clone(&store))
        .signed_links(toolnexus_tests::inbox_support::LINK_KEY.to_vec())
        .build()
        .unwrap();
    let app = inbox.router();
    let url = link_of(&inbox, &request.id);
    let (cookie, csrf, page) = open(&app, &url).await;
    for part in [
        r#"<h1 data-kind="reconcile">Needs a decision on an interrupted call</h1>"#,
        r#"<section class="run" aria-label="The call that was cut off"><h2>The call that was cut off: Pay <code class="muted">pay</code></h2>"#,
        "was cut off by a crash before its result was recorded",
        "so it may or may not have taken effect: check before you choose.",
        r#"<option value="rerun">Run it again</option><option value="record">Record what happened</option><option value="fail">Fail the call</option></select>"#,
        r#"<p class="help" id="decline-help">Decline: the call is not run again and fails as declined; the assistant reads that you declined.</p>"#,
        r"The call of <code>pay</code> started at",
    ] {
        assert!(page.contains(part), "missing {part} in {page}");
    }

    let unchosen = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.action=&f.output=x"),
        ),
    )
    .await;
    assert_eq!(
        unchosen.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        unchosen.body
    );
    assert!(
        unchosen.body.contains(r#"id="i-f.action-error""#),
        "{}",
        unchosen.body
    );

    // `record` without the output is refused next to the output, as the loop would refuse it
    let no_output = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.action=record&f.output="),
        ),
    )
    .await;
    no_output.says(
        StatusCode::UNPROCESSABLE_ENTITY,
        r#"<p class="error field" id="i-f.output-error" role="alert">Output: invalid reconcile answer: `record` needs the call's `output`</p>"#,
    );
    assert_eq!(
        store.claim_next("w").await.unwrap().map(|c| c.run_id),
        None,
        "nothing recorded"
    );

    let recorded = send(
        &app,
        post_form(
            &url,
            Some(&cookie),
            &format!("csrf={csrf}&action=accept&f.action=record&f.output=paid+by+hand"),
        ),
    )
    .await;
    // no worker runs on this store (the test claims the run itself): the page says so
    recorded.says(
        StatusCode::OK,
        "Answered; no worker has taken it up. No worker has been seen.",
    );
    let claim = store.claim_next("w").await.unwrap().expect("the answer");
    assert_eq!(
        claim.answer.data,
        Some(json!({"action": "record", "output": "paid by hand"}))
    );
    let done = CrashCut::client()
        .resume_claim(store.as_ref(), &claim, &tools.toolkit)
        .await
        .unwrap();
    assert_eq!(done.text, "done: paid by hand | looked #2");
    assert_eq!(tools.counts(), [1, 2], "pay never ran again");
    let _ = std::fs::remove_file(&path);
}

fn link_of(inbox: &Inbox, id: &str) -> String {
    inbox
        .link(id, Duration::from_secs(600))
        .expect("signed links are on")
}

/// A `reconcile` request without a form (as one whose arguments name a credential is made):
/// the page's Accept cannot say an action and is refused, never failing the call silently;
/// the JSON API takes the action as `data`, checks it as the loop does, and the recorded
/// output becomes the call's result without running the tool.
#[tokio::test]
async fn a_reconcile_request_without_a_form_takes_its_action_through_the_json_api() {
    let (fx, req, app, url) =
        parked(json!({"kind": "reconcile", "prompt": "Was the invoice sent?"})).await;
    let (cookie, csrf, _) = open(&app, &url).await;
    let accepted = send(
        &app,
        post_form(&url, Some(&cookie), &format!("csrf={csrf}&action=accept")),
    )
    .await;
    accepted.says(
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid reconcile answer: the answer carries no `action` (one of `rerun`, `record`, `fail`)",
    );
    assert_eq!(state_of(&fx, &req.id).await, RunState::Parked);

    let (path, q) = url.split_once('?').expect("query");
    let answer = format!("/api/requests/{}/answer?{q}", &path[3..]);
    let wrong = send(
        &app,
        post_json(&answer, &json!({"ok": true, "data": {"action": "record"}})),
    )
    .await;
    assert_eq!(
        wrong.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        wrong.body
    );
    assert_eq!(
        serde_json::from_str::<Value>(&wrong.body).expect("json"),
        json!({"error": "Output: invalid reconcile answer: `record` needs the call's `output`", "field": "data"})
    );
    let done = send(
        &app,
        post_json(
            &answer,
            &json!({"ok": true, "data": {"action": "record", "output": "sent on Monday"}}),
        ),
    )
    .await;
    assert_eq!(done.status, StatusCode::ACCEPTED, "{}", done.body);
    let recorded: Value = serde_json::from_str(&done.body).expect("json");
    let v = moved_on_json(&app, recorded["statusLink"].as_str().expect("link")).await;
    assert_eq!(
        v["outcome"],
        json!({"status": "done", "text": "final: sent on Monday"})
    );
    assert_eq!(fx.retries(), 0, "the tool did not run");
}
