//! The desk shows what is new since the person last looked: each look at the list (page or
//! JSON) leaves a `toolnexus_seen` cookie; the next look marks only the requests made after
//! it as new.

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::Value;
use toolnexus_tests::inbox_support::{Fixture, approval_args};
use tower::ServiceExt as _;

/// GETs `uri` as the fixture's admin with `cookie`; returns the status, the body and the
/// `toolnexus_seen` cookie the response sets.
async fn look(app: &axum::Router, uri: &str, cookie: Option<&str>) -> (StatusCode, String, String) {
    let mut req = HttpRequest::get(uri).header("x-admin", "yes");
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    let res = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let seen = res
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("toolnexus_seen="))
        .and_then(|v| v.split(';').next())
        .expect("the list sets the seen cookie")
        .to_owned();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap(), seen)
}

fn new_of(list: &str) -> Vec<(String, bool)> {
    let v: Value = serde_json::from_str(list).unwrap();
    v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["prompt"].as_str().unwrap().to_owned(),
                r["new"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_list_marks_what_is_new_since_the_person_last_looked() {
    let fx = Fixture::without_worker().await;
    let app = fx.inbox().router();
    fx.park(approval_args("Deploy build 42?")).await;
    // never looked: everything is new
    let (status, list, seen) = look(&app, "/api/requests", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(new_of(&list), [("Deploy build 42?".to_owned(), true)]);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    fx.park(approval_args("Restart the cache?")).await;
    // looked before the second: only it is new
    let (_, list, _) = look(&app, "/api/requests", Some(&seen)).await;
    assert_eq!(
        new_of(&list),
        [
            ("Restart the cache?".to_owned(), true),
            ("Deploy build 42?".to_owned(), false)
        ]
    );
    let (_, page, later) = look(&app, "/", Some(&seen)).await;
    assert!(
        page.contains(r#"<p id="new-count">1 new since you last looked</p>"#),
        "{page}"
    );
    assert_eq!(
        page.matches(r#"<span class="new">new</span>"#).count(),
        1,
        "{page}"
    );
    // and after this look, nothing is new
    let (_, page, _) = look(&app, "/", Some(&later)).await;
    assert!(!page.contains("new since you last looked"), "{page}");
    assert!(!page.contains(r#"<span class="new">"#), "{page}");
}
