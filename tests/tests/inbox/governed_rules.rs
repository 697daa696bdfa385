//! Where remembered decisions meet governed approvals (issue 34's seams, the outer side): a
//! rule one person made may never stand in for the people a request needs. An allow rule
//! answers a plain approval of its tool; an approval that needs several approvers, or refuses
//! its requester, is asked every time (a deny rule still declines it: refusing never widens).

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolnexus::inbox::Inbox;
use toolnexus::store::{RunEventKind, RunState};
use toolnexus_tests::inbox_support::{Fixture, approval_args, governed_args};

use super::remember::{link, run_of, send};
use super::votes::{api, inbox, post_json};

/// Posts `body` as `user` to the JSON API's answer of request `id`.
async fn answer(
    app: &axum::Router,
    inbox: &Inbox,
    id: &str,
    user: &str,
    body: &Value,
) -> StatusCode {
    let url = api(&link(inbox, id), id, "answer");
    let reply = send(app, post_json(&url, user, body)).await;
    assert!(
        reply.status.is_success() || reply.status.is_client_error(),
        "{}",
        reply.body
    );
    reply.status
}

/// Posts `body` as `user` to the answer of request `id`, which the API accepts.
async fn accepted(app: &axum::Router, inbox: &Inbox, id: &str, user: &str, body: &Value) {
    assert_eq!(
        answer(app, inbox, id, user, body).await,
        StatusCode::ACCEPTED
    );
}

/// Waits (10 s at most) until the run of request `id` is no longer answered or claimed: the
/// worker resumed it to its next stop.
async fn settled(fx: &Fixture, id: &str) -> toolnexus::store::StoredRun {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let run = run_of(&fx.store, id).await;
        if matches!(run.info.state, RunState::Finished | RunState::Failed)
            || (run.info.state == RunState::Parked && run.info.request_id != id)
        {
            return run;
        }
        assert!(std::time::Instant::now() < deadline, "not resumed in 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A fixture, its inbox and the inbox's router.
async fn desk() -> (Fixture, Inbox, axum::Router) {
    let fx = Fixture::new().await;
    let inbox = inbox(&fx);
    let app = inbox.router();
    (fx, inbox, app)
}

/// A plain `Deploy?` approval, then a governed one asking `prompt` of `approvals` people.
fn deploy_then(prompt: &str, approvals: u32) -> Value {
    let mut args = approval_args("Deploy?");
    args["then"] = governed_args(prompt, approvals);
    args
}

/// An approval asking to remember it for every call of the tool, `within` this scope.
fn remember_tool(within: &str) -> Value {
    json!({"ok": true, "data": {"remember": {"scope": "tool", "within": within}}})
}

/// Attack: ada approves a plain `ask` "for every call of this tool, in this conversation";
/// the conversation's next `ask` needs two approvers and not the requester. The rule must not
/// approve it: the run parks on the governed request with no vote, the tool has run once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_rule_does_not_approve_a_call_that_needs_two_approvers() {
    let (fx, inbox, app) = desk().await;
    let args = deploy_then("Pay 4000 EUR?", 2);
    let request = fx.park_in("c1", args).await;
    let remember = remember_tool("conversation");
    accepted(&app, &inbox, &request.id, "ada", &remember).await;
    let run = settled(&fx, &request.id).await;
    assert_eq!(run.info.state, RunState::Parked, "{:?}", run.info.history);
    assert_eq!(run.record.pending().required_approvals(), 2);
    assert!(run.votes.is_empty());
    assert_eq!(fx.retries(), 1, "the governed call did not run");
    assert!(
        !run.info
            .history
            .iter()
            .any(|e| e.event == RunEventKind::Decided),
        "{:?}",
        run.info.history
    );
    let rules = toolnexus_tests::kept_rules(fx.store.as_ref()).await;
    assert_eq!(rules.len(), 1, "the rule was kept: {rules:?}");

    // two people approve it: it runs once
    let governed = run.record.pending().id.clone();
    for who in ["bob", "carol"] {
        accepted(&app, &inbox, &governed, who, &json!({"ok": true})).await;
    }
    let done = fx.finished(&run.info.run_id).await;
    assert_eq!(done.info.state, RunState::Finished);
    assert_eq!(fx.retries(), 2);
}

/// Attack: the same with a request that refuses its requester (one approval): alice's own
/// rule for her runs must not approve what she may not approve herself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_requesters_own_rule_does_not_approve_a_call_she_may_not_answer() {
    let (fx, inbox, app) = desk().await;
    let args = deploy_then("Deploy to production?", 1);
    let request = fx.park_for("alice", args).await;
    let remember = remember_tool("principal");
    accepted(&app, &inbox, &request.id, "alice", &remember).await;
    let run = settled(&fx, &request.id).await;
    assert_eq!(run.info.state, RunState::Parked, "{:?}", run.info.history);
    assert!(run.record.pending().not_by_requester());
    assert_eq!(fx.retries(), 1, "the governed call did not run");
    // and alice still may not answer it
    let governed = run.record.pending().id.clone();
    assert_eq!(
        answer(&app, &inbox, &governed, "alice", &json!({"ok": true})).await,
        StatusCode::FORBIDDEN
    );
}

/// A deny rule still declines a governed call without asking (refusing never widens what a
/// person chose).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_still_declines_a_governed_call() {
    let (fx, inbox, app) = desk().await;
    let args = deploy_then("Pay 4000 EUR?", 2);
    let request = fx.park_in("c1", args).await;
    let never = json!({"ok": false, "reason": "declined", "data": {"remember": {"scope": "tool", "within": "conversation"}}});
    accepted(&app, &inbox, &request.id, "ada", &never).await;
    let run = settled(&fx, &request.id).await;
    assert_eq!(run.info.state, RunState::Finished, "{:?}", run.info.history);
    assert_eq!(fx.retries(), 0, "neither call ran");
    let decided: Vec<_> = run
        .info
        .history
        .iter()
        .filter(|e| e.event == RunEventKind::Decided)
        .collect();
    assert_eq!(decided.len(), 1, "{:?}", run.info.history);
    assert_eq!(decided[0].outcome.as_deref(), Some("denied"));
}

/// Attack: a vote below the count asks to remember. No rule is made by it (one person's
/// vote decided nothing), not even once the others' plain votes reach the count; the vote
/// that reaches the count is the answer, and its own remember is the one kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vote_below_the_count_makes_no_rule() {
    let (fx, inbox, app) = desk().await;
    let mut args = governed_args("Pay 4000 EUR?", 3);
    args["then"] = governed_args("Pay 5000 EUR?", 2);
    let request = fx.park_in("c1", args).await;
    let remember = remember_tool("conversation");
    accepted(&app, &inbox, &request.id, "ada", &remember).await;
    accepted(&app, &inbox, &request.id, "bob", &json!({"ok": true})).await;
    let rules = fx.store.rules().expect("rules");
    assert!(rules.list_rules(10).await.unwrap().is_empty());
    accepted(&app, &inbox, &request.id, "carol", &remember).await;
    let run = settled(&fx, &request.id).await;
    assert_eq!(run.info.state, RunState::Parked, "{:?}", run.info.history);
    let kept = rules.list_rules(10).await.unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].answered_by.as_deref(), Some("carol"));
    // and it does not approve the next governed call: that one asks again
    assert_eq!(run.record.pending().required_approvals(), 2);
    assert_eq!(fx.retries(), 1);
}
