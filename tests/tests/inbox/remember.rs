//! Remembered decisions on the answer page (tower `oneshot` on the router): the approval form
//! offers what can be remembered, a posted choice becomes a rule that answers the run's next
//! matching call, the rules page lists and revokes (authorized, CSRF-checked), and choices
//! the page did not offer are refused next to the field.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::remember::{Effect, Scope, Within};
use toolnexus::store::{RunEventKind, RunState, RunStore};
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY, approval_args};
use tower::ServiceExt as _;

pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) cookie: Option<String>,
    pub(crate) body: String,
}

pub(crate) async fn send(app: &axum::Router, req: HttpRequest<Body>) -> Reply {
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

/// A request with the caller's name (`x-user`) and admin flag (`x-admin`), as the host's
/// proxy would set them.
pub(crate) fn as_user(
    b: axum::http::request::Builder,
    user: Option<&str>,
    admin: bool,
) -> axum::http::request::Builder {
    let b = match user {
        Some(u) => b.header("x-user", u),
        None => b,
    };
    if admin { b.header("x-admin", "yes") } else { b }
}

pub(crate) fn get(uri: &str, user: Option<&str>, admin: bool) -> HttpRequest<Body> {
    as_user(HttpRequest::get(uri), user, admin)
        .body(Body::empty())
        .expect("request")
}

pub(crate) fn post(
    uri: &str,
    user: Option<&str>,
    admin: bool,
    cookie: &str,
    body: &str,
) -> HttpRequest<Body> {
    as_user(HttpRequest::post(uri), user, admin)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, cookie)
        .body(Body::from(body.to_owned()))
        .expect("request")
}

/// The `csrf` value of the first form on `page` after `from`.
pub(crate) fn csrf_after(page: &str, from: usize) -> String {
    let key = r#"name="csrf" value=""#;
    let at = page[from..].find(key).expect("a csrf field") + from + key.len();
    page[at..].split('"').next().expect("value").to_owned()
}

/// An inbox over the fixture's store: signed links; the caller named by `x-user`; the rules
/// page for callers with `x-admin: yes`.
fn inbox(fx: &Fixture) -> Inbox {
    Inbox::builder(fx.store.clone())
        .signed_links(LINK_KEY.to_vec())
        .answered_by(|parts| {
            parts
                .headers
                .get("x-user")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
        .authorize(|parts, target| {
            parts.headers.get("x-admin").is_some_and(|v| v == "yes")
                && matches!(target, Target::List | Target::Rules)
        })
        .build()
        .expect("a valid inbox")
}

pub(crate) fn link(inbox: &Inbox, id: &str) -> String {
    inbox
        .link(id, Duration::from_secs(600))
        .expect("signed links are on")
}

/// Opens a request's page as `user`: (cookie, csrf token, page).
pub(crate) async fn open(
    app: &axum::Router,
    link: &str,
    user: Option<&str>,
) -> (String, String, String) {
    let page = send(app, get(link, user, false)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let set = page.cookie.expect("the form page sets the session cookie");
    let cookie = set.split(';').next().expect("pair").to_owned();
    (cookie, csrf_after(&page.body, 0), page.body)
}

pub(crate) async fn run_of(
    store: &Arc<dyn RunStore>,
    request_id: &str,
) -> toolnexus::store::StoredRun {
    store
        .get_by_request(request_id)
        .await
        .expect("store")
        .expect("the run")
}

/// An approval in a conversation, answered "every call of this tool, in this conversation":
/// the run's next approval is answered by the rule (the worker resumes it to the end); the
/// rules page shows the rule and revokes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
async fn a_remembered_approval_answers_the_runs_next_call_and_is_revoked_on_the_rules_page() {
    let fx = Fixture::new().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let mut args = approval_args("Deploy?");
    args["then"] = approval_args("Deploy again?");
    let request = fx.park_in("c1", args).await;

    // the form offers the conversation's reach (the run is a conversation's turn); the run
    // was started for nobody, so there is no principal's rule to offer
    let (cookie, csrf, page) = open(&app, &link(&inbox, &request.id), Some("ada")).await;
    for offered in [
        r#"<option value="" selected>No, just this once</option>"#,
        r#"<option value="tool:conversation">Yes: every call of this tool, in this conversation</option>"#,
    ] {
        assert!(page.contains(offered), "{offered} in {page}");
    }
    assert!(!page.contains("principal"), "{page}");
    let body = format!("csrf={csrf}&remember=tool%3Aconversation&remember_for=1d&action=accept");
    let recorded = send(
        &app,
        post(
            &link(&inbox, &request.id),
            Some("ada"),
            false,
            &cookie,
            &body,
        ),
    )
    .await;
    assert_eq!(recorded.status, StatusCode::OK, "{}", recorded.body);

    let run = run_of(&fx.store, &request.id).await;
    let done = fx.finished(&run.info.run_id).await;
    assert_eq!(done.info.state, RunState::Finished);
    assert_eq!(fx.retries(), 2, "both calls ran, the second without asking");
    let rules = toolnexus_tests::kept_rules(fx.store.as_ref()).await;
    assert_eq!(rules.len(), 1, "{rules:?}");
    let rule = &rules[0];
    assert_eq!(
        (
            rule.effect,
            rule.scope,
            rule.within,
            rule.holder.as_str(),
            rule.tool.as_str()
        ),
        (
            Effect::Allow,
            Scope::Tool,
            Within::Conversation,
            "c1",
            "ask"
        )
    );
    assert_eq!(rule.answered_by.as_deref(), Some("ada"));
    let until = rule.until.expect("for 1 day");
    let day = until.duration_since(rule.created_at).unwrap();
    assert!(
        day > Duration::from_secs(86_390) && day <= Duration::from_secs(86_400),
        "{day:?}"
    );
    let decided: Vec<_> = done
        .info
        .history
        .iter()
        .filter(|e| e.event == RunEventKind::Decided)
        .collect();
    assert_eq!(decided.len(), 1, "{:?}", done.info.history);
    assert_eq!(decided[0].rule.as_deref(), Some(rule.id.as_str()));

    // the list links to the rules page; the rules page: admins only; the JSON lists the rule
    let list = send(&app, get("/", None, true)).await;
    assert!(
        list.body.contains(r#"<a href="/rules" id="rules-link">"#),
        "{}",
        list.body
    );
    assert_eq!(
        send(&app, get("/rules", Some("ada"), false)).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(&app, get("/api/rules", None, false)).await.status,
        StatusCode::FORBIDDEN
    );
    let listed = send(&app, get("/api/rules", None, true)).await;
    let listed: Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(listed["rules"][0]["id"], json!(rule.id));
    assert_eq!(listed["rules"][0]["scope"], "tool");
    assert_eq!(listed["rules"][0]["within"], "conversation");
    assert_eq!(listed["rules"][0]["holder"], "c1");
    assert_eq!(listed["rules"][0]["answeredBy"], "ada");
    let page = send(&app, get("/rules", None, true)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains("Approve every call of Ask in conversation c1"),
        "{}",
        page.body
    );
    let at = page
        .body
        .find(&format!(r#"data-rule="{}""#, rule.id))
        .expect("the rule");
    let token = csrf_after(&page.body, at);
    let cookie = page
        .cookie
        .expect("the rules page sets the session cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let revoke = format!("/rules/{}/revoke", rule.id);
    // a revoke needs the page's token, bound to this rule, and the cookie
    let forged = send(&app, post(&revoke, None, true, &cookie, "csrf=00")).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    let other = send(
        &app,
        post(
            &revoke,
            None,
            true,
            "toolnexus_inbox=0",
            &format!("csrf={token}"),
        ),
    )
    .await;
    assert_eq!(other.status, StatusCode::FORBIDDEN, "{}", other.body);
    let not_admin = send(
        &app,
        post(
            &revoke,
            Some("ada"),
            false,
            &cookie,
            &format!("csrf={token}"),
        ),
    )
    .await;
    assert_eq!(
        not_admin.status,
        StatusCode::FORBIDDEN,
        "{}",
        not_admin.body
    );
    assert_eq!(
        toolnexus_tests::kept_rules(fx.store.as_ref()).await.len(),
        1
    );
    let revoked = send(
        &app,
        post(&revoke, None, true, &cookie, &format!("csrf={token}")),
    )
    .await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    assert!(revoked.body.contains("Revoked"), "{}", revoked.body);
    assert!(
        toolnexus_tests::kept_rules(fx.store.as_ref())
            .await
            .is_empty()
    );
    let again = send(
        &app,
        post(&revoke, None, true, &cookie, &format!("csrf={token}")),
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "{}", again.body);
    let empty = send(&app, get("/rules", None, true)).await;
    assert!(
        empty.body.contains("Nothing is remembered."),
        "{}",
        empty.body
    );
}

/// What the form does not offer is refused next to the field, and nothing is recorded: a
/// principal choice for a caller the host does not name, a conversation choice for a run
/// outside any conversation, an edited approval remembered for the whole tool. Other kinds
/// offer nothing to remember; the JSON API checks `data.remember` the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one door after another, read top to bottom
async fn choices_the_page_did_not_offer_are_refused() {
    let fx = Fixture::without_worker().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let request = fx.park_for("ada", approval_args("Deploy?")).await;
    let url = link(&inbox, &request.id);

    // nobody named (so not ada), no conversation: nothing to offer
    let (cookie, csrf, page) = open(&app, &url, None).await;
    assert!(!page.contains("Remember this decision?"), "{page}");
    let body = format!("csrf={csrf}&remember=tool%3Aprincipal&action=accept");
    let refused = send(&app, post(&url, None, false, &cookie, &body)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains(
            "You may not remember decisions for the runs of ada: only ada, or someone allowed to grant for ada, may."
        ),
        "{}",
        refused.body
    );
    // named: for the principal only (the run is no conversation's turn)
    let (cookie, csrf, page) = open(&app, &url, Some("ada")).await;
    assert!(
        page.contains("Yes: every call of this tool, for ada"),
        "{page}"
    );
    assert!(!page.contains("in this conversation"), "{page}");
    let body = format!("csrf={csrf}&remember=args%3Aconversation&action=accept");
    let refused = send(&app, post(&url, Some("ada"), false, &cookie, &body)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let body = format!("csrf={csrf}&remember=args%3Aprincipal&remember_for=forever&action=accept");
    let refused = send(&app, post(&url, Some("ada"), false, &cookie, &body)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        refused
            .body
            .contains("Choose one of the offered durations."),
        "{}",
        refused.body
    );
    assert_eq!(
        run_of(&fx.store, &request.id).await.info.state,
        RunState::Parked
    );

    // an edit remembered for the whole tool: refused; for its own arguments: recorded
    let pay = fx
        .park_for(
            "ada",
            json!({"tool": "pay", "args": {"amount": 5, "to": "Bo"}}),
        )
        .await;
    let url = link(&inbox, &pay.id);
    let (cookie, csrf, _) = open(&app, &url, Some("ada")).await;
    let edit = "args=%7B%22amount%22%3A4%2C%22to%22%3A%22Bo%22%7D";
    let body = format!("csrf={csrf}&{edit}&remember=tool%3Aprincipal&action=accept");
    let refused = send(&app, post(&url, Some("ada"), false, &cookie, &body)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        refused
            .body
            .contains("this decision can be remembered for this exact call only"),
        "{}",
        refused.body
    );
    assert_eq!(
        run_of(&fx.store, &pay.id).await.info.state,
        RunState::Parked
    );
    let body = format!("csrf={csrf}&{edit}&remember=args%3Aprincipal&action=accept");
    let recorded = send(&app, post(&url, Some("ada"), false, &cookie, &body)).await;
    assert_eq!(recorded.status, StatusCode::OK, "{}", recorded.body);
    let stored = run_of(&fx.store, &pay.id).await;
    assert_eq!(stored.info.state, RunState::Answered);
    assert_eq!(
        stored.answer.and_then(|a| a.data),
        Some(
            json!({"args": {"amount": 4, "to": "Bo"}, "remember": {"for": "ada", "scope": "args", "within": "principal"}})
        )
    );

    // an input request offers nothing to remember
    let input = fx.park(json!({"kind": "input", "prompt": "Name?"})).await;
    let (_, _, page) = open(&app, &link(&inbox, &input.id), Some("ada")).await;
    assert!(!page.contains("Remember this decision?"), "{page}");

    // the JSON API: checked the same way
    let other = fx.park_for("ada", approval_args("Ship?")).await;
    let api = format!(
        "/api/requests/{}/answer?{}",
        other.id,
        link(&inbox, &other.id).split('?').nth(1).unwrap()
    );
    let post_json = |body: Value, user: Option<&str>| {
        as_user(HttpRequest::post(&api), user, false)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .expect("request")
    };
    let wrong = send(
        &app,
        post_json(
            json!({"ok": true, "data": {"remember": {"scope": "tool", "within": "galaxy"}}}),
            Some("ada"),
        ),
    )
    .await;
    assert_eq!(
        wrong.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        wrong.body
    );
    let wrong: Value = serde_json::from_str(&wrong.body).unwrap();
    assert_eq!(wrong["field"], "remember");
    assert_eq!(
        wrong["error"],
        "`remember.within` must be \"conversation\" or \"principal\", not \"galaxy\""
    );
    let unnamed = send(
        &app,
        post_json(
            json!({"ok": false, "data": {"remember": {"scope": "tool", "within": "principal"}}}),
            None,
        ),
    )
    .await;
    assert_eq!(unnamed.status, StatusCode::FORBIDDEN, "{}", unnamed.body);
    let denied = send(
        &app,
        post_json(
            json!({"ok": false, "data": {"remember": {"scope": "tool", "within": "principal"}}}),
            Some("ada"),
        ),
    )
    .await;
    assert_eq!(denied.status, StatusCode::ACCEPTED, "{}", denied.body);
    let stored = run_of(&fx.store, &other.id).await;
    let answer = stored.answer.expect("recorded");
    assert!(!answer.ok);
    assert_eq!(
        answer.data,
        Some(json!({"remember": {"for": "ada", "scope": "tool", "within": "principal"}}))
    );
}
