//! Attacks where the store's capabilities meet: a turn's questions together against the
//! run's expiry, votes against expiry and takeover, the history's attempts against release.
//! Each case is named after its attack.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use toolnexus::request::DeclineReason;
use toolnexus::store::{RunState, StoreError};
use toolnexus::{
    Answer, Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role, ToolResult,
    Toolkit,
};

use super::{
    LEASE, Make, ask_by_id, halt_together_expiring, halt_together_with_ids, make_subject,
    park_sharing_a_request, refused_expired, resumed_with_seat_expired,
};

/// Asserts that `result` is a refusal as [`StoreError::NotAllowed`].
fn refused<T: std::fmt::Debug>(result: &Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::NotAllowed(_))),
        "{result:?}"
    );
}

/// Sleeps until just past `at`.
async fn sleep_past(at: SystemTime) {
    if let Ok(left) = at.duration_since(SystemTime::now()) {
        tokio::time::sleep(left + Duration::from_millis(20)).await;
    }
}

/// A together run whose first request (its deadline the run's) is answered in time, the turn
/// left incomplete until the deadline expires the run: the first request's answer was
/// recorded in time and counts (as the others' do), with when it was recorded; only the
/// request nobody answered reads declined (`expired`).
pub async fn together_a_first_answer_recorded_before_the_run_expires_still_counts(make: Make) {
    let s = subject!(make, LEASE);
    let store = s.store();
    let ran = Arc::new(AtomicUsize::new(0));
    let record = halt_together_expiring(&ran, [Some(1_500), None, None]).await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record).await.unwrap();
    let deadline = parked.expires_at.expect("the first request's deadline");
    store
        .submit(&Answer::accept(&ids[0], "Oslo"), "alice")
        .await
        .unwrap();
    let recorded = SystemTime::now();
    store
        .submit(&Answer::accept(&ids[1], "May 1"), "bob")
        .await
        .unwrap();
    assert!(recorded < deadline, "the test answered in time");
    sleep_past(deadline).await;
    assert_eq!(store.expire().await.unwrap(), vec![parked.run_id.clone()]);
    refused_expired(store, &parked.run_id, (&ids[2], "12A"), "carol").await;

    let claim = store
        .claim_next("worker")
        .await
        .unwrap()
        .expect("the expired run is taken over");
    assert_eq!(claim.answer, Answer::accept(&ids[0], "Oslo"));
    let at = claim.answered_at.expect("when it was recorded");
    assert!(at <= recorded && at < deadline, "{at:?} vs {recorded:?}");
    assert_eq!(
        claim.other_answers,
        [
            Answer::accept(&ids[1], "May 1"),
            Answer::decline(&ids[2], DeclineReason::Expired),
        ]
    );
    resumed_with_seat_expired(store, &claim, &ran).await;
    let info = store.info(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(info.state, RunState::Finished);
}

/// A together park refused because another run holds one of its requests leaves no run
/// behind: its first request finds nothing, nothing is listed, and an answer to it is not
/// found (rather than a run parked without its turn, answerable on its own).
pub async fn together_a_refused_park_leaves_no_run_to_answer(make: Make) {
    let s = subject!(make, LEASE);
    let store = s.store();
    let (first, refused) = park_sharing_a_request(store).await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(_))),
        "{refused:?}"
    );
    assert!(store.get_by_request("b1").await.unwrap().is_none());
    let pending = store
        .list_pending(&toolnexus::store::PendingQuery::default())
        .await
        .unwrap();
    let listed: Vec<&str> = pending.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(listed, [first.run_id.as_str()]);
    let answer = store.submit(&Answer::accept("b1", 1), "bob").await;
    assert!(
        matches!(answer, Err(StoreError::NotFound { .. })),
        "{answer:?}"
    );
}

/// A run of `alice` halted together on two requests: `first?` (an input) and `second`, the
/// request the second call suspends with.
async fn halt_together_with(second: Request) -> PendingRun {
    halt_together_on(Request::input("first?"), second).await
}

/// A run of `alice` halted together on the requests `first` and `second`, as a release before
/// 0.4.3 (or another port) parked it: this release's loop parks a turn that asks a governed
/// approval one request at a time, so the turn is asked with the requests' governance taken
/// out of their `data`, and put back in the record (the fingerprint does not cover it). The
/// store must still guard such a record.
async fn halt_together_on(first: Request, second: Request) -> PendingRun {
    const GOVERNANCE: [&str; 4] = ["approvals", "notByRequester", "approvers", "escalate"];
    let plain = |request: &Request| {
        let mut json = serde_json::to_value(request).expect("a request is JSON");
        if let Some(data) = json.get_mut("data").and_then(Value::as_object_mut) {
            data.retain(|key, _| !GOVERNANCE.contains(&key.as_str()));
        }
        serde_json::from_value::<Request>(json).expect("a request")
    };
    let record = halt_plain_together(plain(&first), plain(&second)).await;
    let mut json: Value = serde_json::from_str(&record.to_json()).expect("a record is JSON");
    for request in [&first, &second] {
        let data = serde_json::to_value(request).expect("a request is JSON")["data"].clone();
        put_data(&mut json, &request.id, &data);
    }
    let record = PendingRun::from_json(&json.to_string()).expect("the record as parked before");
    assert!(record.is_together());
    record
}

/// Sets the `data` of every request object with id `id` in `json` (a record) to `data`.
fn put_data(json: &mut Value, id: &str, data: &Value) {
    match json {
        Value::Object(map) => {
            if map.get("id").and_then(Value::as_str) == Some(id) && map.contains_key("kind") {
                if data.is_null() {
                    map.remove("data");
                } else {
                    map.insert("data".to_owned(), data.clone());
                }
            }
            map.values_mut().for_each(|v| put_data(v, id, data));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| put_data(v, id, data)),
        _ => {}
    }
}

/// A run of `alice` halted together on the plain requests `first` and `second`.
async fn halt_plain_together(first: Request, second: Request) -> PendingRun {
    let model = FnModel::new(|req: ModelRequest| async move {
        if req.messages.iter().any(|m| m.role == Role::Tool) {
            return Reply::text("done");
        }
        Reply::tool_call("ask", serde_json::json!({"n": 0}))
            .with_call("ask", serde_json::json!({"n": 1}))
    });
    let ask = FnTool::builder("ask")
        .description("Asks.")
        .handler(move |args, _| {
            let (first, second) = (first.clone(), second.clone());
            async move {
                if args["n"] == 0 {
                    ToolResult::suspended(first)
                } else {
                    ToolResult::suspended(second)
                }
            }
        })
        .build()
        .expect("the tool builds");
    let client = Client::builder(model)
        .model_name("conformance")
        .questions_together(true)
        .build()
        .expect("the client builds")
        .for_principal("alice");
    let toolkit = Toolkit::builder().tool(ask).build().expect("the toolkit");
    let result = client.run("Ask.", &toolkit).await.expect("the run halts");
    let record = PendingRun::try_from(result).expect("a record");
    assert!(record.is_together());
    record
}

/// The answer to a later request of a together turn, checked for what the request governs
/// (attack: answer the governed approval through the turn rather than on its own).
async fn answer_later(make: Make, second: Request) -> Option<(super::Subject, Vec<String>)> {
    let s = make_subject(make, LEASE).await?;
    let record = halt_together_with(second).await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    s.store().park(record).await.unwrap();
    Some((s, ids))
}

/// A later request of a together turn that refuses its requester refuses the run's own
/// principal (nothing recorded), however it is answered; someone else's answer is kept.
pub async fn together_a_requesters_answer_to_a_governed_approval_in_the_turn_is_refused(
    make: Make,
) {
    let approval = Request::approval("Pay?").with_not_by_requester();
    let Some((s, ids)) = answer_later(make, approval).await else {
        return;
    };
    let store = s.store();
    let yes = Answer::accept(&ids[1], true);
    refused(&store.submit(&yes, "alice").await);
    refused(&store.claim_answered_by(&yes, "worker", "alice").await);
    // nothing was recorded: bob's answer is the request's first
    let info = store.submit(&yes, "bob").await.unwrap();
    assert_eq!(
        info.state,
        RunState::Parked,
        "the first request still waits"
    );
    let info = store
        .submit(&Answer::accept(&ids[0], "x"), "alice")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
}

/// A later request of a together turn that names a group is answered only by that group: a
/// plain `submit` (which cannot tell) and an answerer outside it are refused, nothing
/// recorded; a member's answer is kept.
pub async fn together_a_groups_request_in_the_turn_is_answered_only_by_the_group(make: Make) {
    use toolnexus::store::Answerer;
    let approval = Request::approval("Pay?").with_approvers("finance");
    let Some((s, ids)) = answer_later(make, approval).await else {
        return;
    };
    let store = s.store();
    let yes = Answer::accept(&ids[1], true);
    refused(&store.submit(&yes, "bob").await);
    refused(
        &store
            .submit_as(&yes, &Answerer::new("eve").in_groups(["sales"]))
            .await,
    );
    refused(&store.claim_answered_by(&yes, "worker", "bob").await);
    let info = store
        .submit_as(&yes, &Answerer::new("fay").in_groups(["finance"]))
        .await
        .unwrap();
    assert_eq!(
        info.state,
        RunState::Parked,
        "the first request still waits"
    );
    let history = store.get(&info.run_id).await.unwrap().unwrap().info.history;
    let answered: Vec<Option<&str>> = history
        .iter()
        .filter(|e| e.event == toolnexus::store::RunEventKind::Answered)
        .map(|e| e.by.as_deref())
        .collect();
    assert_eq!(answered, [Some("fay")], "only the member's answer was kept");
}

/// A later request of a together turn that needs two approvals is not answered by one
/// acceptance: refused (nothing recorded) rather than counted as both.
pub async fn together_one_acceptance_does_not_answer_an_approval_needing_two_in_the_turn(
    make: Make,
) {
    let approval = Request::approval("Pay?").with_approvals(2);
    let Some((s, ids)) = answer_later(make, approval).await else {
        return;
    };
    let store = s.store();
    refused(&store.submit(&Answer::accept(&ids[1], true), "bob").await);
    let info = store
        .submit(&Answer::accept(&ids[0], "x"), "carol")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Parked, "the approval still waits");
    // a decline needs no count: it declines
    let info = store
        .submit(&Answer::decline(&ids[1], DeclineReason::Declined), "bob")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
}

/// The first request of a together turn escalates at its deadline (the run's): the next
/// group's answer before the new deadline is recorded as given, not as late by the
/// request's original `expiresAt` (the record keeps the request as it was sealed), and the
/// run resumes with it.
pub async fn together_an_escalated_first_request_takes_the_next_groups_answer_in_time(make: Make) {
    use toolnexus::store::Answerer;
    let s = subject!(make, LEASE);
    let store = s.store();
    let pay = Request::approval("Pay?")
        .with_approvers("finance")
        .expires_in(Duration::from_millis(300))
        .escalate_to("cfo", Duration::from_secs(30));
    let original = pay.expires_at_time().unwrap();
    let record = halt_together_on(pay, Request::input("second?")).await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record).await.unwrap();
    sleep_past(original).await;
    assert_eq!(store.expire().await.unwrap(), Vec::<String>::new());
    let escalated = store.info(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(escalated.approvers.as_deref(), Some("cfo"));
    let cathy = Answerer::new("cathy").in_groups(["cfo"]);
    let info = store
        .submit_as(&Answer::accept(&ids[0], true), &cathy)
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Parked, "the second request waits");
    let info = store
        .submit(&Answer::accept(&ids[1], "two"), "bob")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    let claim = store.claim_next("worker").await.unwrap().expect("answered");
    assert_eq!(claim.answer, Answer::accept(&ids[0], true));
}

/// A deleted together run lets go of every request of its turn, as a deleted run lets go of
/// its request: they find nothing, and a new run may park on the same ids and take their
/// answers.
pub async fn together_a_deleted_runs_requests_are_free_again(make: Make) {
    let s = subject!(make, LEASE);
    let store = s.store();
    let gone = store
        .park(halt_together_with_ids(["d1", "d2", "d3"]).await)
        .await
        .unwrap();
    assert!(store.delete(&gone.run_id).await.unwrap());
    assert!(store.get_by_request("d2").await.unwrap().is_none());
    let again = store
        .park(halt_together_with_ids(["d1", "d2", "d3"]).await)
        .await
        .unwrap();
    assert_ne!(again.run_id, gone.run_id);
    for id in ["d3", "d2"] {
        let info = store.submit(&Answer::accept(id, 1), "sam").await.unwrap();
        assert_eq!(
            (info.run_id.as_str(), info.state),
            (again.run_id.as_str(), RunState::Parked)
        );
    }
    let info = store.submit(&Answer::accept("d1", 1), "sam").await.unwrap();
    assert_eq!(info.state, RunState::Answered);
}

/// A client and toolkit whose run asks `b0` alone, then, once answered, `y1`, `x2` and `y3`
/// together (each request's id is the `name` its call asks for).
fn asks_again_together() -> (Client, Toolkit) {
    let model = FnModel::new(|req: ModelRequest| async move {
        let ask = |id: &str| serde_json::json!({"name": id});
        match req.messages.iter().filter(|m| m.role == Role::Tool).count() {
            0 => Reply::tool_call("ask", ask("b0")),
            1 => Reply::tool_call("ask", ask("y1"))
                .with_call("ask", ask("x2"))
                .with_call("ask", ask("y3")),
            _ => Reply::text("done"),
        }
    });
    let client = Client::builder(model)
        .model_name("conformance")
        .questions_together(true)
        .build()
        .expect("the client builds");
    (client, ask_by_id())
}

/// A finish that parks a run again on a turn one of whose requests another run holds is
/// refused as a park is, before anything changes: the run is not left parked on its new first
/// request without its turn (answerable on its own), and the holder keeps its request.
pub async fn together_a_finish_parking_on_a_held_request_is_refused_and_changes_nothing(
    make: Make,
) {
    let s = subject!(make, LEASE);
    let store = s.store();
    let holder = store
        .park(halt_together_with_ids(["x1", "x2", "x3"]).await)
        .await
        .unwrap();
    let (client, toolkit) = asks_again_together();
    let halted = client.run("Ask.", &toolkit).await.expect("the run halts");
    let run = store
        .park(PendingRun::try_from(halted).expect("a record"))
        .await
        .unwrap();
    let claim = store.claim(&Answer::accept("b0", 1), "w").await.unwrap();
    let resumed = client.resume_claim(store, &claim, &toolkit).await;
    assert!(resumed.is_err(), "{resumed:?}");
    assert!(
        store.get_by_request("y1").await.unwrap().is_none(),
        "not parked on the refused turn"
    );
    let info = store.info(&run.run_id).await.unwrap().unwrap();
    assert_ne!(info.state, RunState::Parked, "{info:?}");
    assert_eq!(info.request_id, "b0");
    let held = store.get_by_request("x2").await.unwrap().expect("kept");
    assert_eq!(held.info.run_id, holder.run_id);
}
