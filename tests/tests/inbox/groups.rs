//! Who may answer: a request that names a group (`data.approvers`) is listed for, shown to and
//! answered by the members of that group only (the host's `groups_of`); everyone else does not
//! see it in the list, and its page and the JSON API refuse them (`403`), recording nothing.

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use serde_json::{Value, json};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY, approval_args};

use super::remember::{as_user, get, link, open, post, run_of, send};

/// An inbox whose people are named by `x-user`: ann is in finance, cathy in cfo and finance,
/// bob in none; everyone named may list.
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
        .authorize(|parts, target| {
            parts.headers.get("x-user").is_some() && matches!(target, Target::List)
        })
        .groups_of(|person| match person {
            "ann" => vec!["finance".to_owned()],
            "cathy" => vec!["cfo".to_owned(), "finance".to_owned()],
            _ => vec![],
        })
        .build()
        .expect("a valid inbox")
}

/// The finance request and an open one, parked.
pub(crate) async fn park_both(fx: &Fixture) -> (toolnexus::Request, toolnexus::Request) {
    let mut args = approval_args("Pay invoice 7 (1,200 EUR)?");
    args["approvers"] = json!("finance");
    let finance = fx.park(args).await;
    let anyone = fx.park(approval_args("Restart the build?")).await;
    (finance, anyone)
}

fn listed(body: &str) -> Vec<(String, Value)> {
    let v: Value = serde_json::from_str(body).expect("json");
    v["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["approvers"].clone()))
        .collect()
}

/// The JSON API lists a finance request for ann (with its group) and not for bob, who still
/// sees the open one; bob's answer to it is `403` and records nothing, ann's is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_lists_and_takes_a_groups_request_only_from_its_members() {
    let fx = Fixture::without_worker().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let (finance, open_req) = park_both(&fx).await;

    let for_ann = send(&app, get("/api/requests", Some("ann"), false)).await;
    assert_eq!(for_ann.status, StatusCode::OK, "{}", for_ann.body);
    let mut ann_sees = listed(&for_ann.body);
    ann_sees.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected = vec![
        (finance.id.clone(), json!("finance")),
        (open_req.id.clone(), Value::Null),
    ];
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(ann_sees, expected);
    let for_bob = send(&app, get("/api/requests", Some("bob"), false)).await;
    assert_eq!(
        listed(&for_bob.body),
        vec![(open_req.id.clone(), Value::Null)]
    );

    let url = link(&inbox, &finance.id);
    let signed = url.split('?').nth(1).unwrap().to_owned();
    let api = format!("/api/requests/{}/answer?{signed}", finance.id);
    let answer = |user: &str| {
        as_user(HttpRequest::post(&api), Some(user), false)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(json!({"ok": true}).to_string()))
            .expect("request")
    };
    // bob holds a valid link, and is still refused: the page, the API's read and its answer
    let seen = send(
        &app,
        get(
            &format!("/api/requests/{}?{signed}", finance.id),
            Some("bob"),
            false,
        ),
    )
    .await;
    assert_eq!(seen.status, StatusCode::FORBIDDEN, "{}", seen.body);
    let refused = send(&app, answer("bob")).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    let error: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(
        error["error"],
        "This request is for the finance group to answer; you are not in it, so it cannot be answered here."
    );
    let run = run_of(&fx.store, &finance.id).await;
    assert_eq!(run.info.state, RunState::Parked, "nothing recorded");
    assert!(run.answer.is_none());

    let recorded = send(&app, answer("ann")).await;
    assert_eq!(recorded.status, StatusCode::ACCEPTED, "{}", recorded.body);
    let run = run_of(&fx.store, &finance.id).await;
    assert_eq!(run.info.state, RunState::Answered);
    assert_eq!(run.info.answered_by(), Some("ann"));
}

/// The page: ann sees the finance request (saying whose it is) and answers it; bob's list
/// leaves it out and its page refuses him with a clear message, even when he posts the form
/// with a session and token of his own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_a_groups_request_to_its_members_and_refuses_the_rest() {
    let fx = Fixture::without_worker().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let (finance, open_req) = park_both(&fx).await;

    let bob_list = send(&app, get("/", Some("bob"), false)).await;
    assert_eq!(bob_list.status, StatusCode::OK);
    assert!(
        !bob_list.body.contains("Pay invoice 7"),
        "{}",
        bob_list.body
    );
    assert!(bob_list.body.contains("Restart the build?"));
    let ann_list = send(&app, get("/", Some("ann"), false)).await;
    assert!(ann_list.body.contains("Pay invoice 7"), "{}", ann_list.body);

    let url = link(&inbox, &finance.id);
    let page = send(&app, get(&url, Some("bob"), false)).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert!(page.body.contains("Not your group"), "{}", page.body);
    assert!(
        page.body
            .contains("This request is for the finance group to answer")
    );
    // bob's own session on the open request gives him a cookie; the finance form is refused
    let (cookie, _, _) = open(&app, &link(&inbox, &open_req.id), Some("bob")).await;
    let posted = send(
        &app,
        post(&url, Some("bob"), false, &cookie, "csrf=x&action=accept"),
    )
    .await;
    assert_eq!(posted.status, StatusCode::FORBIDDEN, "{}", posted.body);
    assert_eq!(
        run_of(&fx.store, &finance.id).await.info.state,
        RunState::Parked
    );

    let (cookie, csrf, page) = open(&app, &url, Some("ann")).await;
    assert!(
        page.contains("For the <strong>finance</strong> group to answer."),
        "{page}"
    );
    let done = send(
        &app,
        post(
            &url,
            Some("ann"),
            false,
            &cookie,
            &format!("csrf={csrf}&action=accept"),
        ),
    )
    .await;
    assert!(
        done.status.is_success() || done.status.is_redirection(),
        "{} {}",
        done.status,
        done.body
    );
    let run = run_of(&fx.store, &finance.id).await;
    assert_eq!(run.info.state, RunState::Answered);
    assert_eq!(run.info.answered_by(), Some("ann"));
}

/// An escalated request, past its own `expiresAt`: the page judges it by the run's current
/// deadline and group, so the CFO opens and answers it (the page saying whose it is now) and
/// finance, its first group, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalated_request_goes_to_its_new_group_on_the_page() {
    let fx = Fixture::without_worker().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let mut args = approval_args("Pay invoice 8?");
    args["approvers"] = json!("finance");
    args["expires_ms"] = json!(300);
    args["escalate_to"] = json!(["cfo", 60_000]);
    let request = fx.park(args).await;
    let expires = request.expires_at_time().unwrap();
    tokio::time::sleep(
        expires
            .duration_since(std::time::SystemTime::now())
            .unwrap_or_default()
            + std::time::Duration::from_millis(50),
    )
    .await;
    assert!(fx.store.expire().await.unwrap().is_empty(), "escalated");

    let url = link(&inbox, &request.id);
    let ann = send(&app, get(&url, Some("ann"), false)).await;
    assert_eq!(ann.status, StatusCode::FORBIDDEN, "{}", ann.body);
    assert!(
        ann.body
            .contains("This request is for the cfo group to answer")
    );
    let (cookie, csrf, page) = open(&app, &url, Some("cathy")).await;
    assert!(
        page.contains("For the <strong>cfo</strong> group to answer."),
        "{page}"
    );
    assert!(page.contains("Expires in"), "{page}");
    let done = send(
        &app,
        post(
            &url,
            Some("cathy"),
            false,
            &cookie,
            &format!("csrf={csrf}&action=accept"),
        ),
    )
    .await;
    assert!(
        done.status.is_success() || done.status.is_redirection(),
        "{}",
        done.body
    );
    let run = run_of(&fx.store, &request.id).await;
    assert_eq!(run.info.state, RunState::Answered);
    assert_eq!(run.info.answered_by(), Some("cathy"));
}
