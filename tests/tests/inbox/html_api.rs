//! The inbox router without a browser: the JSON API, declining and the other kinds, mounting
//! under a prefix, a run that asks again.

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use serde_json::{Value, json};
use toolnexus_tests::inbox_support::{Fixture, approval_args, trip_args};
use tower::ServiceExt as _;

#[allow(clippy::wildcard_imports)]
use super::html::*;

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
