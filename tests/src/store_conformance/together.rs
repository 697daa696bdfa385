//! A turn's questions together in a store: a run parked with every request of its turn takes
//! their answers in any order, each checked (an id no run made, a replay, a request past its
//! own `expiresAt`) and recorded on its own; it is found by any of its requests; it becomes
//! answered (claimable) only once every request has its answer; a worker resumes it once,
//! each call executed once with its own answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::request::DeclineReason;
use toolnexus::store::{RunEventKind, RunState, StoreError};
use toolnexus::{
    Answer, Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role, RunStatus,
    ToolResult, Toolkit,
};

use super::{LEASE, Make, make_subject};

/// `ask`, counting its executions: suspends (its `expires_ms` argument, when set, is the
/// request's deadline from now) until answered, then says `<name> is <answer>`.
pub fn together_toolkit(ran: &Arc<AtomicUsize>) -> Toolkit {
    let ran = Arc::clone(ran);
    let ask = FnTool::builder("ask")
        .description("Asks.")
        .handler(move |args, ctx| {
            ran.fetch_add(1, Ordering::SeqCst);
            async move {
                let name = args["name"].as_str().unwrap_or_default().to_owned();
                if let Some(answer) = ctx.answer() {
                    let data = answer.data.clone().unwrap_or(json!(null));
                    return ToolResult::success(format!("{name} is {data}"));
                }
                let mut request = Request::input(format!("{name}?"));
                if let Some(ms) = args.get("expires_ms").and_then(serde_json::Value::as_i64) {
                    let at = SystemTime::now() + Duration::from_millis(ms.unsigned_abs());
                    let at = if ms < 0 {
                        SystemTime::now() - Duration::from_millis(ms.unsigned_abs())
                    } else {
                        at
                    };
                    request = request.with_expires_at(at);
                }
                ToolResult::suspended(request)
            }
        })
        .build()
        .expect("the tool builds");
    Toolkit::builder()
        .tool(ask)
        .build()
        .expect("the toolkit builds")
}

/// One turn asking `city`, `date` and `seat` (`date` with `expires_ms`, when given), then the
/// tool results joined.
pub fn together_client(date_expires_ms: Option<i64>) -> Client {
    together_client_expiring([None, date_expires_ms, None])
}

/// [`together_client`], each of `city`, `date` and `seat` expiring `expires[k]` ms from when
/// it is asked, when given.
pub fn together_client_expiring(expires: [Option<i64>; 3]) -> Client {
    let model = FnModel::new(move |req: ModelRequest| async move {
        let results: Vec<String> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content.clone().unwrap_or_default())
            .collect();
        if results.is_empty() {
            Reply::tool_call("ask", json!({"name": "city", "expires_ms": expires[0]}))
                .with_call("ask", json!({"name": "date", "expires_ms": expires[1]}))
                .with_call("ask", json!({"name": "seat", "expires_ms": expires[2]}))
        } else {
            Reply::text(results.join("; "))
        }
    });
    Client::builder(model)
        .model_name("conformance")
        .questions_together(true)
        .build()
        .expect("the client builds")
}

/// A together run halted on three requests (`date` expiring `date_expires_ms` from now, when
/// given), its tool's executions counted in `ran`.
pub async fn halt_together(ran: &Arc<AtomicUsize>, date_expires_ms: Option<i64>) -> PendingRun {
    halt_together_expiring(ran, [None, date_expires_ms, None]).await
}

/// [`halt_together`] with [`together_client_expiring`]'s deadlines.
pub async fn halt_together_expiring(
    ran: &Arc<AtomicUsize>,
    expires: [Option<i64>; 3],
) -> PendingRun {
    let result = together_client_expiring(expires)
        .run("Book it.", &together_toolkit(ran))
        .await
        .expect("the run halts");
    assert_eq!(result.status, RunStatus::Pending);
    assert_eq!(result.pending_all.len(), 3);
    let record = PendingRun::try_from(result).expect("a record");
    assert!(record.is_together());
    record
}

/// Answers in reverse order, each recorded on its own: the run stays parked (not claimable)
/// until the last; any of its requests finds it; the history has one `answered` per request,
/// each with who gave it.
pub async fn together_answers_in_any_order_and_the_run_is_answered_only_when_all_are(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let ran = Arc::new(AtomicUsize::new(0));
    let record = halt_together(&ran, None).await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record.clone()).await.unwrap();
    for id in &ids {
        let found = store
            .get_by_request(id)
            .await
            .unwrap()
            .expect("found by any request");
        assert_eq!(found.info.run_id, parked.run_id);
    }

    // a host waiting on the run hears of each answer
    let (seat, changed) = tokio::join!(
        async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            store
                .submit(&Answer::accept(&ids[2], "12A"), "carol")
                .await
                .unwrap()
        },
        s.handles[s.handles.len() - 1].wait_change(
            &parked.run_id,
            parked.version,
            Duration::from_secs(10)
        )
    );
    assert_eq!(
        changed.unwrap().map(|i| i.version),
        Some(parked.version + 1)
    );
    assert_eq!(seat.state, RunState::Parked, "two requests still wait");
    assert!(
        store.claim_next("worker").await.unwrap().is_none(),
        "not claimable yet"
    );
    let date = store
        .submit(&Answer::accept(&ids[1], "May 1"), "bob")
        .await
        .unwrap();
    assert_eq!(date.state, RunState::Parked);
    assert!(store.claim_next("worker").await.unwrap().is_none());
    let city = store
        .submit(&Answer::accept(&ids[0], "Oslo"), "alice")
        .await
        .unwrap();
    assert_eq!(
        city.state,
        RunState::Answered,
        "the last answer completes the turn"
    );

    let history = store
        .get(&parked.run_id)
        .await
        .unwrap()
        .unwrap()
        .info
        .history;
    let answered: Vec<(Option<&str>, Option<&str>)> = history
        .iter()
        .filter(|e| e.event == RunEventKind::Answered)
        .map(|e| (e.request.as_deref(), e.by.as_deref()))
        .collect();
    assert_eq!(
        answered,
        [
            (Some(ids[2].as_str()), Some("carol")),
            (Some(ids[1].as_str()), Some("bob")),
            (Some(ids[0].as_str()), Some("alice")),
        ]
    );
}

/// Each answer is checked on its own: an id no run made is not found, a second answer to the
/// same request is refused like a replay (before and after the run is answered), an answer
/// after its request's own `expiresAt` is refused and the request reads declined.
pub async fn together_each_answer_is_checked_on_its_own(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let ran = Arc::new(AtomicUsize::new(0));
    let record = halt_together(&ran, Some(-60_000)).await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record).await.unwrap();

    let unknown = store
        .submit(&Answer::accept("no-such-request", 1), "eve")
        .await;
    assert!(
        matches!(unknown, Err(StoreError::NotFound { .. })),
        "{unknown:?}"
    );

    store
        .submit(&Answer::accept(&ids[2], "12A"), "carol")
        .await
        .unwrap();
    let replay = store
        .submit(&Answer::accept(&ids[2], "13B"), "mallory")
        .await;
    assert_eq!(
        replay.unwrap_err(),
        StoreError::AlreadyAnswered {
            run_id: parked.run_id.clone(),
            request_id: ids[2].clone(),
            state: RunState::Parked,
        }
    );
    let replay = store.claim(&Answer::accept(&ids[2], "13B"), "w").await;
    assert!(
        matches!(replay, Err(StoreError::AlreadyAnswered { .. })),
        "{replay:?}"
    );

    // the date's own deadline passed: refused, and recorded declined (expired)
    refused_expired(store, &parked.run_id, (&ids[1], "May 1"), "bob").await;
    let info = store
        .submit(&Answer::accept(&ids[0], "Oslo"), "alice")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    let again = store
        .submit(&Answer::accept(&ids[0], "Rome"), "alice")
        .await;
    assert!(
        matches!(again, Err(StoreError::AlreadyAnswered { .. })),
        "{again:?}"
    );

    let claim = store.claim_next("worker").await.unwrap().expect("answered");
    assert_eq!(claim.answer, Answer::accept(&ids[0], "Oslo"));
    assert_eq!(
        claim.other_answers,
        [
            Answer::decline(&ids[1], DeclineReason::Expired),
            Answer::accept(&ids[2], "12A"),
        ]
    );
}

/// A worker claims the answered run once and resumes it: each call runs once more with its
/// own answer (a declined one not at all), one result per call in call order, and the run
/// finishes; nobody claims it again.
pub async fn together_a_worker_resumes_it_once_with_every_answer(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let ran = Arc::new(AtomicUsize::new(0));
    let record = halt_together(&ran, None).await;
    assert_eq!(ran.load(Ordering::SeqCst), 3, "every call of the turn ran");
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record).await.unwrap();
    store
        .submit(&Answer::accept(&ids[1], "May 1"), "bob")
        .await
        .unwrap();
    store
        .submit(&Answer::decline(&ids[2], DeclineReason::Declined), "carol")
        .await
        .unwrap();
    // the answer that completes the turn may claim the run for its own worker
    let claim = s.handles[s.handles.len() - 1]
        .claim(&Answer::accept(&ids[0], "Oslo"), "worker-1")
        .await
        .unwrap();
    assert_eq!(claim.run_id, parked.run_id);
    assert_eq!(claim.other_answers.len(), 2);
    assert!(
        store.claim_next("worker-2").await.unwrap().is_none(),
        "claimed once"
    );

    resumed_with_seat_expired(store, &claim, &ran).await;
    assert_eq!(
        ran.load(Ordering::SeqCst),
        5,
        "city and date once more, seat not"
    );
    let info = store.info(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(info.state, RunState::Finished);
    assert!(store.claim_next("worker-2").await.unwrap().is_none());
    let late = store.submit(&Answer::accept(&ids[2], "12A"), "carol").await;
    assert!(
        matches!(late, Err(StoreError::AlreadyAnswered { .. })),
        "{late:?}"
    );
}

/// The claim of an answer that leaves requests unanswered records it and says so; nothing is
/// claimed until the turn is complete.
pub async fn together_a_claim_before_the_last_answer_records_it_and_claims_nothing(make: Make) {
    let s = subject!(make, LEASE);
    let store = s.store();
    let ran = Arc::new(AtomicUsize::new(0));
    let record = halt_together(&ran, None).await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record).await.unwrap();
    let early = store
        .claim(&Answer::accept(&ids[0], "Oslo"), "worker-1")
        .await;
    match early {
        Err(StoreError::Conflict(message)) => {
            assert!(message.contains("waits on 2 more request(s)"), "{message}");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let info = store.info(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(info.state, RunState::Parked);
    let replay = store.submit(&Answer::accept(&ids[0], "Rome"), "x").await;
    assert!(
        matches!(replay, Err(StoreError::AlreadyAnswered { .. })),
        "the answer was kept"
    );
}

/// Submits `by`'s acceptance (`data`) of request `id` once run `run_id` expired: refused as
/// expired.
pub(crate) async fn refused_expired(
    store: &dyn toolnexus::store::RunStore,
    run_id: &str,
    (id, data): (&str, &str),
    by: &str,
) {
    assert_eq!(
        store
            .submit(&Answer::accept(id, data), by)
            .await
            .unwrap_err(),
        StoreError::Expired {
            run_id: run_id.to_owned()
        }
    );
}

/// A run halted together on three requests (`city`, `date`, `seat`), for tests outside the
/// suite (a store's migration).
pub async fn halted_together() -> PendingRun {
    halt_together(&Arc::new(AtomicUsize::new(0)), None).await
}

/// Parks `record` (a [`halted_together`] run) in `store`, finds it by its last request and
/// answers its three requests in reverse order: answered only with the last.
pub async fn assert_together_answers(store: &dyn toolnexus::store::RunStore, record: PendingRun) {
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let parked = store.park(record).await.unwrap();
    let found = store.get_by_request(&ids[2]).await.unwrap().expect("found");
    assert_eq!(found.info.run_id, parked.run_id);
    for (k, id) in ids.iter().enumerate().rev() {
        let info = store.submit(&Answer::accept(id, k), "ann").await.unwrap();
        let want = if k == 0 {
            RunState::Answered
        } else {
            RunState::Parked
        };
        assert_eq!(info.state, want, "after the answer to {id}");
    }
}

/// The toolkit of `ask`, whose request's id is the `name` it asks for (`ok` once answered).
pub(crate) fn ask_by_id() -> Toolkit {
    let ask = FnTool::builder("ask")
        .description("Asks, the request's id its `name`.")
        .handler(|args, ctx| async move {
            if ctx.answer().is_some() {
                return ToolResult::success("ok");
            }
            let id = args["name"].as_str().unwrap_or_default().to_owned();
            ToolResult::suspended(Request::input(format!("{id}?")).with_id(id))
        })
        .build()
        .expect("the tool builds");
    Toolkit::builder().tool(ask).build().expect("the toolkit")
}

/// A together run halted on requests with the ids `ids` (its tool: [`ask_by_id`]).
pub(crate) async fn halt_together_with_ids(ids: [&'static str; 3]) -> PendingRun {
    let model = FnModel::new(move |req: ModelRequest| async move {
        if req.messages.iter().any(|m| m.role == Role::Tool) {
            return Reply::text("done");
        }
        let ask = |id: &str| json!({"name": id});
        Reply::tool_call("ask", ask(ids[0]))
            .with_call("ask", ask(ids[1]))
            .with_call("ask", ask(ids[2]))
    });
    let client = Client::builder(model)
        .model_name("conformance")
        .questions_together(true)
        .build()
        .expect("the client builds");
    let toolkit = ask_by_id();
    let result = client
        .run("Book it.", &toolkit)
        .await
        .expect("the run halts");
    let record = PendingRun::try_from(result).expect("a record");
    assert!(record.is_together());
    record
}

/// Resumes `claim` with the together client and toolkit (counting calls in `ran`): the run
/// ends done, with the city and date as answered and the seat declined (expired).
pub(crate) async fn resumed_with_seat_expired(
    store: &dyn toolnexus::store::RunStore,
    claim: &toolnexus::store::Claim,
    ran: &Arc<AtomicUsize>,
) {
    let done = together_client(None)
        .resume_claim(store, claim, &together_toolkit(ran))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(
        done.text,
        r#"city is "Oslo"; date is "May 1"; declined/expired: seat?"#
    );
}

/// Parks a together run asking `a1`, `shared` and `a3`, then tries to park another asking
/// `b1`, `b2` and `shared`: the first run's info and the second park's outcome.
pub(crate) async fn park_sharing_a_request(
    store: &dyn toolnexus::store::RunStore,
) -> (
    toolnexus::store::RunInfo,
    Result<toolnexus::store::RunInfo, StoreError>,
) {
    let first = store
        .park(halt_together_with_ids(["a1", "shared", "a3"]).await)
        .await
        .unwrap();
    let refused = store
        .park(halt_together_with_ids(["b1", "b2", "shared"]).await)
        .await;
    (first, refused)
}

/// A together park one of whose requests another together run holds is refused, naming it,
/// and keeps none of its turn: its other requests find no run, the holder keeps its own.
pub async fn together_a_request_another_run_holds_is_refused_and_nothing_of_the_turn_kept(
    make: Make,
) {
    let s = subject!(make);
    let store = s.store();
    let (first, refused) = park_sharing_a_request(store).await;
    assert_eq!(
        refused.unwrap_err(),
        StoreError::Conflict(
            "request `shared` is already the request of another run: request ids name one run"
                .to_owned()
        )
    );
    assert!(
        store.get_by_request("b2").await.unwrap().is_none(),
        "no turn row of the refused turn is kept"
    );
    let holder = store.get_by_request("shared").await.unwrap().expect("kept");
    assert_eq!(holder.info.run_id, first.run_id);
    // the holder's turn still takes its answers
    for (id, by) in [("a1", "ann"), ("shared", "sam")] {
        let info = store.submit(&Answer::accept(id, 1), by).await.unwrap();
        assert_eq!(info.state, RunState::Parked);
    }
    let info = store.submit(&Answer::accept("a3", 3), "al").await.unwrap();
    assert_eq!(info.state, RunState::Answered);
}
