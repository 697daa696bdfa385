//! The inbox router without a browser: a credential field never rendered, an expired request,
//! a double submit.

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolnexus_tests::inbox_support::{Fixture, approval_args};

#[allow(clippy::wildcard_imports)]
use super::html::*;

/// Parks `args`'s request (an innocent form), then rewrites the parked record's request (every
/// copy of it: `pending` and the halted call's result, not the call's arguments, which the
/// fingerprint covers) with `edit`, as someone writing to the store past the loop could.
pub(super) async fn park_then_edit(
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
