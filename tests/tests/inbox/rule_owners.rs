//! Whose remembered decision it is, on the answer page and the JSON API: a rule covers the
//! runs of the answered run's principal, and the page offers it only to that principal or to
//! an answerer the host's `grants` check allows to grant for them, labelled with whose calls
//! it covers; anyone else asking for it is refused and nothing is recorded.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request as HttpRequest, StatusCode, header};
use serde_json::{Value, json};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::remember::Within;
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY, approval_args};

use super::remember::{as_user, get, link, open, post, run_of, send};

/// The remember test's inbox, and a grant for callers sent with `x-grants: yes`.
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
        .grants(|parts, _principal| parts.headers.get("x-grants").is_some_and(|v| v == "yes"))
        .build()
        .expect("a valid inbox")
}

/// The attack: bob may answer alice's request (he holds its link) and asks to remember "for
/// me". The page offers him nothing to remember, a posted choice is refused next to the
/// field, the JSON API answers `403`, and nothing is recorded (the run stays parked, no
/// rule). Alice is offered "for alice"; an operator the host's `grants` allows is offered
/// the same, and the rule it makes covers alice's runs and names the operator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one door after another, read top to bottom
async fn an_answerer_cannot_grant_a_standing_rule_for_another_principal() {
    let fx = Fixture::new().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    let mut args = approval_args("Deploy?");
    args["then"] = approval_args("Deploy again?");
    let request = fx.park_for("alice", args).await;
    let url = link(&inbox, &request.id);
    let rules = fx.store.rules().expect("rules");

    // bob: nothing offered; the posted choice refused; nothing recorded
    let (cookie, csrf, page) = open(&app, &url, Some("bob")).await;
    assert!(!page.contains("Remember this decision?"), "{page}");
    for choice in ["tool%3Aprincipal", "args%3Aprincipal"] {
        let body = format!("csrf={csrf}&remember={choice}&action=accept");
        let refused = send(&app, post(&url, Some("bob"), false, &cookie, &body)).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
        assert!(
            refused
                .body
                .contains("You may not remember decisions for the runs of alice"),
            "{}",
            refused.body
        );
    }
    // the JSON API: 403, whatever `for` bob writes
    let api = format!(
        "/api/requests/{}/answer?{}",
        request.id,
        url.split('?').nth(1).unwrap()
    );
    let post_json = |body: Value, user: &str, grants: bool| {
        let b = as_user(HttpRequest::post(&api), Some(user), false)
            .header(header::CONTENT_TYPE, "application/json");
        let b = if grants {
            b.header("x-grants", "yes")
        } else {
            b
        };
        b.body(Body::from(body.to_string())).expect("request")
    };
    for remember in [
        json!({"scope": "tool", "within": "principal"}),
        json!({"scope": "tool", "within": "principal", "for": "alice"}),
        json!({"scope": "tool", "within": "principal", "for": "bob"}),
    ] {
        let refused = send(
            &app,
            post_json(
                json!({"ok": true, "data": {"remember": remember}}),
                "bob",
                false,
            ),
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
        let refused: Value = serde_json::from_str(&refused.body).unwrap();
        assert_eq!(refused["field"], "remember");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("You may not remember decisions for the runs of alice"),
            "{refused}"
        );
    }
    let parked = run_of(&fx.store, &request.id).await;
    assert_eq!(parked.info.state, RunState::Parked);
    assert_eq!(parked.info.answered_by(), None);
    assert!(rules.list_rules(10).await.unwrap().is_empty());

    // alice: offered, labelled with whose calls it covers
    let (_, _, page) = open(&app, &url, Some("alice")).await;
    assert!(
        page.contains(
            r#"<option value="tool:principal">Yes: every call of this tool, for alice</option>"#
        ),
        "{page}"
    );

    // the operator the host lets grant: offered "for alice"; the rule names the operator
    let granted_page = send(
        &app,
        as_user(HttpRequest::get(&url), Some("ops"), false)
            .header("x-grants", "yes")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert!(
        granted_page
            .body
            .contains("Yes: every call of this tool, for alice"),
        "{}",
        granted_page.body
    );
    let recorded = send(
        &app,
        post_json(
            json!({"ok": true, "data": {"remember": {"scope": "tool", "within": "principal"}}}),
            "ops",
            true,
        ),
    )
    .await;
    assert_eq!(recorded.status, StatusCode::ACCEPTED, "{}", recorded.body);
    let run = run_of(&fx.store, &request.id).await;
    let done = fx.finished(&run.info.run_id).await;
    assert_eq!(done.info.state, RunState::Finished);
    assert_eq!(fx.retries(), 2, "both calls ran, the second without asking");
    let kept = rules.list_rules(10).await.unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (
            kept[0].within,
            kept[0].holder.as_str(),
            kept[0].answered_by.as_deref()
        ),
        (Within::Principal, "alice", Some("ops"))
    );
    let listed = send(&app, get("/api/rules", None, true)).await;
    let listed: Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(listed["rules"][0]["holder"], "alice");
    assert_eq!(listed["rules"][0]["answeredBy"], "ops");
    let page = send(&app, get("/rules", None, true)).await;
    assert!(
        page.body.contains("Approve every call of Ask for alice"),
        "{}",
        page.body
    );
    assert!(page.body.contains(", by ops"), "{}", page.body);
}

/// Rules at rest like runs, on the page and the API: 60 rules list newest first, 50 a page,
/// with a link (and a cursor) to the older ones; one damaged row (an unknown effect) is
/// reported by its rule id and the page and the API still answer `200`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_rule_row_never_breaks_the_rules_page_and_every_rule_is_reachable() {
    use std::time::UNIX_EPOCH;
    use toolnexus::remember::Scope;
    use toolnexus_tests::store_conformance::alices_rule;
    let fx = Fixture::without_worker().await;
    let app = inbox(&fx).router();
    let rules = fx.store.rules().expect("rules");
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let mut made = Vec::new();
    for n in 0..60u64 {
        let rule = alices_rule(n, Scope::Args, false, start + Duration::from_millis(n));
        rules.put_rule(&rule).await.unwrap();
        made.push(rule.id);
    }
    made.reverse();
    let damaged = made[3].clone();
    let conn = rusqlite::Connection::open(&fx.path).unwrap();
    conn.execute(
        "UPDATE rules SET effect = 'maybe', holder = 'bob' WHERE id = ?1",
        [&damaged],
    )
    .unwrap();
    drop(conn);

    let first = send(&app, get("/api/rules", None, true)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let first: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(
        first["damaged"],
        json!([{"id": damaged, "reason": "unknown effect `maybe`"}])
    );
    let ids = |page: &Value| -> Vec<String> {
        page["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut listed = ids(&first);
    assert_eq!(listed.len(), 49);
    let next = first["next"].as_str().expect("an older page").to_owned();
    let second = send(&app, get(&format!("/api/rules?after={next}"), None, true)).await;
    let second: Value = serde_json::from_str(&second.body).unwrap();
    assert_eq!(second["next"], Value::Null);
    listed.extend(ids(&second));
    let readable: Vec<String> = made.iter().filter(|id| **id != damaged).cloned().collect();
    assert_eq!(listed, readable, "newest first, every readable rule once");
    let wrong = send(&app, get("/api/rules?after=nonsense", None, true)).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.body);

    let page = send(&app, get("/rules", None, true)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains(&format!(r#"data-damaged-rule="{damaged}""#)),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(&format!(r#"data-rule="{}""#, made[0])),
        "{}",
        page.body
    );
    let at = page
        .body
        .find(r#"id="older-rules""#)
        .expect("a link to the older rules");
    let href_at = page.body[..at].rfind("href=\"").unwrap() + "href=\"".len();
    let href = page.body[href_at..]
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&");
    let older = send(&app, get(&href, None, true)).await;
    assert_eq!(older.status, StatusCode::OK, "{}", older.body);
    assert!(
        older.body.contains(&format!(r#"data-rule="{}""#, made[59])),
        "{}",
        older.body
    );
    assert!(!older.body.contains("older-rules"), "{}", older.body);
}
