//! The inbox router without a browser: approval pages in words, required choices, edited
//! arguments, reconcile requests.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolnexus::inbox::Inbox;
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::approval_args;

#[allow(clippy::wildcard_imports)]
use super::html::*;

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
