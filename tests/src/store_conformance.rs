//! One conformance suite for every [`RunStore`]: each store's test file calls
//! [`store_conformance!`](macro@crate::store_conformance) with a function that makes a fresh, empty
//! store (several handles onto the same data, so claims race across connections too).
//!
//! Every case and fixture here panics when the store misbehaves: that is how a test fails.

// the panics are the assertions of a test suite, documented once above
#![allow(clippy::missing_panics_doc)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::model::ToolCall;
use toolnexus::request::DeclineReason;
use toolnexus::store::{
    Conversation, ConversationStore, PendingQuery, RunState, RunStore, StoreError,
};
use toolnexus::{
    Answer, BoxFuture, Client, FnModel, FnTool, Message, ModelRequest, PendingRun, Reply, Request,
    Role, RunResult, RunStatus, ToolResult, Toolkit,
};

/// A store under test.
pub struct Subject {
    /// Handles onto one store's data (at least one; more for stores with connections, so
    /// concurrent claims come from different connections or processes' worth of state).
    pub handles: Vec<Arc<dyn RunStore>>,
    /// Replaces the stored record text of a run, as a damaged or older row would hold it.
    pub write_raw: Box<dyn Fn(String, String) -> BoxFuture<'static, ()> + Send + Sync>,
    /// Kept until the subject is dropped (temporary files, a schema to drop).
    pub guard: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subject")
            .field("handles", &self.handles)
            .finish_non_exhaustive()
    }
}

impl Subject {
    /// The first handle.
    pub fn store(&self) -> &dyn RunStore {
        self.handles[0].as_ref()
    }
}

/// How a store test file builds its subjects: `make(lease)` gives a fresh, empty store, or
/// `None` when the store is not available here (the test then skips, saying why).
pub type Make = fn(Duration) -> BoxFuture<'static, Option<Subject>>;

/// The lease the suite runs with, except where a case sets its own.
pub const LEASE: Duration = Duration::from_secs(30);

/// Generates one `#[tokio::test]` per conformance case for the store `make` builds.
#[macro_export]
macro_rules! store_conformance {
    ($make:path) => {
        $crate::store_conformance!(@cases $make;
            park_get_claim_finish, park_twice_is_a_conflict, concurrent_claims_one_winner,
            lease_expiry_and_takeover, renewed_lease_is_kept, expiry, paging_and_filters,
            halts_again_after_its_claim, corrupt_rows_stay_local, older_record_version,
            wait_change_wakes_on_claim, takeover_resumes_from_the_last_checkpoint,
            conversation_turn_halts_and_the_answer_completes_it, conversation_list_trim_delete,
            conversation_settles_a_run_finished_elsewhere);
    };
    (@cases $make:path; $($case:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                $crate::store_conformance::$case($make).await;
            }
        )*
    };
}

/// A scripted agent: the model calls `ask` until `halts` tool results are in the transcript,
/// then answers `done: <last tool result>`.
#[derive(Clone, Debug)]
pub struct Agent {
    /// How many times the run halts in all.
    pub halts: usize,
    /// The kind of the requests.
    pub kind: String,
    /// `expiresAt` relative to the halt, in ms (negative: already expired).
    pub expires_ms: Option<i64>,
}

impl Agent {
    /// An agent that halts once on an `input` request.
    pub fn once() -> Self {
        Self {
            halts: 1,
            kind: "input".to_owned(),
            expires_ms: None,
        }
    }

    /// The toolkit with the `ask` tool.
    pub fn toolkit() -> Toolkit {
        let ask = FnTool::builder("ask")
            .description("Asks the user a question.")
            .handler(|args, ctx| async move {
                if let Some(answer) = ctx.answer() {
                    let data = answer.data.clone().unwrap_or(json!(null));
                    return ToolResult::success(format!("hello {data}"));
                }
                let kind = args
                    .get("kind")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("input")
                    .to_owned();
                let mut request = Request::new(kind, "What is your name?");
                if let Some(ms) = args.get("expires_ms").and_then(serde_json::Value::as_i64) {
                    let now = SystemTime::now();
                    let delta = Duration::from_millis(ms.unsigned_abs());
                    let at = if ms < 0 { now - delta } else { now + delta };
                    request = request.with_expires_at(at);
                }
                ToolResult::suspended(request)
            })
            .build()
            .expect("the ask tool builds");
        Toolkit::builder()
            .tool(ask)
            .build()
            .expect("the toolkit builds")
    }

    /// A client for this agent (no `wait_for`: a suspension halts the run).
    pub fn client(&self) -> Client {
        Client::builder(self.model())
            .model_name("conformance")
            .build()
            .expect("the client builds")
    }

    /// The agent's model: stateless, it decides from the transcript alone.
    pub fn model(&self) -> FnModel {
        let (halts, kind, expires_ms) = (self.halts, self.kind.clone(), self.expires_ms);
        FnModel::new(move |req: ModelRequest| {
            let kind = kind.clone();
            async move {
                let results: Vec<_> = req
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::Tool)
                    .collect();
                if results.len() < halts {
                    Reply::tool_call("ask", json!({"kind": kind, "expires_ms": expires_ms}))
                } else {
                    let last = results
                        .last()
                        .and_then(|m| m.content.clone())
                        .unwrap_or_default();
                    Reply::text(format!("done: {last}"))
                }
            }
        })
    }

    /// Runs the agent until it halts; returns the parked record.
    pub async fn halt(&self) -> PendingRun {
        let result = self
            .client()
            .run("Greet me.", &Self::toolkit())
            .await
            .expect("the run halts");
        assert_eq!(result.status, RunStatus::Pending, "{result:?}");
        PendingRun::try_from(result).expect("a halted run makes a record")
    }

    /// Resumes a claimed record with its answer.
    pub async fn resume(&self, record: &PendingRun, answer: Answer) -> RunResult {
        self.client()
            .resume(record.clone(), answer, &Self::toolkit())
            .await
            .expect("the resume runs")
    }
}

async fn make_subject(make: Make, lease: Duration) -> Option<Subject> {
    make(lease).await
}

macro_rules! subject {
    ($make:expr) => {
        subject!($make, LEASE)
    };
    ($make:expr, $lease:expr) => {
        match make_subject($make, $lease).await {
            Some(s) => s,
            None => return,
        }
    };
}

/// Park, look up by run id and request id, claim, resume, finish, delete.
pub async fn park_get_claim_finish(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let request = record.pending().clone();
    let before = SystemTime::now() - Duration::from_millis(5);
    let parked = store.park(record.clone()).await.unwrap();
    assert_eq!(parked.request_id, request.id);
    assert_eq!(parked.kind, "input");
    assert_eq!(parked.prompt, "What is your name?");
    assert_eq!(parked.state, RunState::Parked);
    assert_eq!(parked.lease, None);
    assert_eq!(parked.expires_at, None);
    assert!(parked.created_at >= before, "{parked:?}");

    let by_id = store.get(&parked.run_id).await.unwrap().expect("stored");
    assert_eq!(by_id.info, parked);
    assert_eq!(by_id.record, record);
    assert_eq!(by_id.answer, None);
    assert!(by_id.result.is_none());
    let by_request = store
        .get_by_request(&request.id)
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(by_request.info, parked);
    assert!(store.get("run-nope").await.unwrap().is_none());
    assert!(store.get_by_request("sus-nope").await.unwrap().is_none());

    let answer = request.accept("Ada");
    let claim = store.claim(&answer, "worker-1").await.unwrap();
    assert_eq!(claim.run_id, parked.run_id);
    assert_eq!(claim.record, record);
    assert_eq!(claim.answer, answer);
    assert_eq!(claim.lease.owner, "worker-1");
    assert!(!claim.taken_over);
    assert_eq!(claim.checkpoint, None);
    assert_eq!(claim.token, 1);
    let claimed = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(claimed.info.state, RunState::Claimed);
    assert_eq!(claimed.info.lease.as_ref().unwrap().owner, "worker-1");
    assert!(claimed.info.version > parked.version);
    assert_eq!(claimed.answer, Some(answer.clone()));
    assert!(
        store
            .list_pending(&PendingQuery::new())
            .await
            .unwrap()
            .runs
            .is_empty()
    );

    store.checkpoint(&claim, json!({"step": 1})).await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.text, r#"done: hello "Ada""#);
    let finished = store.finish(&claim, result.clone()).await.unwrap();
    assert_eq!(finished.state, RunState::Finished);
    assert_eq!(finished.lease, None);
    let stored = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.result, Some(result.clone()));
    assert_eq!(stored.info.state, RunState::Finished);

    // the same answer again, or a finish by a stale claim, changes nothing
    match store.claim(&answer, "worker-2").await {
        Err(StoreError::AlreadyClaimed { run_id, state }) => {
            assert_eq!(run_id, parked.run_id);
            assert_eq!(state, RunState::Finished);
        }
        other => panic!("expected AlreadyClaimed, got {other:?}"),
    }
    assert_eq!(
        store.finish(&claim, result).await.unwrap_err(),
        StoreError::LeaseLost {
            run_id: parked.run_id.clone()
        }
    );
    assert_eq!(
        store.claim(&Answer::ok("sus-nope"), "w").await.unwrap_err(),
        StoreError::NotFound {
            key: "sus-nope".to_owned()
        }
    );
    assert!(
        store
            .wait_finished(&parked.run_id, Duration::ZERO)
            .await
            .unwrap()
            .is_some()
    );

    assert!(store.delete(&parked.run_id).await.unwrap());
    assert!(store.get(&parked.run_id).await.unwrap().is_none());
    assert!(!store.delete(&parked.run_id).await.unwrap());
}

/// A record is parked once; a second park is a conflict that changes nothing.
pub async fn park_twice_is_a_conflict(make: Make) {
    let s = subject!(make);
    let record = Agent::once().halt().await;
    let parked = s.store().park(record.clone()).await.unwrap();
    let err = s.store().park(record).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "run `{}` is already stored: a parked run is parked once",
            parked.run_id
        )
    );
    let stored = s.store().get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info, parked);
}

/// 100 concurrent claimants of one request, over every handle: exactly one wins.
pub async fn concurrent_claims_one_winner(make: Make) {
    let s = subject!(make);
    let record = Agent::once().halt().await;
    let answer = record.pending().accept("Ada");
    let parked = s.store().park(record).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..100 {
        let store = Arc::clone(&s.handles[i % s.handles.len()]);
        let answer = answer.clone();
        tasks.push(tokio::spawn(async move {
            store.claim(&answer, &format!("worker-{i}")).await
        }));
    }
    let mut winners = Vec::new();
    let mut refused = 0;
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(claim) => winners.push((i, claim)),
            Err(StoreError::AlreadyClaimed { run_id, state }) => {
                assert_eq!(run_id, parked.run_id);
                assert_eq!(state, RunState::Claimed);
                refused += 1;
            }
            Err(other) => panic!("claimant {i}: unexpected {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one claimant wins");
    assert_eq!(refused, 99);
    let (i, claim) = &winners[0];
    let stored = s.store().get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.lease.unwrap().owner, format!("worker-{i}"));
    assert_eq!(claim.token, 1);
}

/// A claim whose lease runs out is taken over, with its answer and last checkpoint; the old
/// worker's claim is then dead.
pub async fn lease_expiry_and_takeover(make: Make) {
    let s = subject!(make, Duration::from_millis(300));
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let answer = record.pending().accept("Ada");
    let parked = store.park(record).await.unwrap();
    let mut first = store.claim(&answer, "worker-1").await.unwrap();
    store.checkpoint(&first, json!({"step": 1})).await.unwrap();
    assert!(
        store.take_over("worker-2").await.unwrap().is_none(),
        "the lease holds"
    );

    tokio::time::sleep(Duration::from_millis(450)).await;
    let taken = s.handles[s.handles.len() - 1]
        .take_over("worker-2")
        .await
        .unwrap()
        .expect("the lease ran out");
    assert_eq!(taken.run_id, parked.run_id);
    assert!(taken.taken_over);
    assert_eq!(taken.answer, answer);
    assert_eq!(taken.checkpoint, Some(json!({"step": 1})));
    assert_eq!(taken.lease.owner, "worker-2");
    assert_eq!(taken.token, 2);
    assert!(store.take_over("worker-3").await.unwrap().is_none());

    let lost = StoreError::LeaseLost {
        run_id: parked.run_id.clone(),
    };
    assert_eq!(
        store
            .checkpoint(&first, json!({"step": 2}))
            .await
            .unwrap_err(),
        lost
    );
    assert_eq!(store.renew(&mut first).await.unwrap_err(), lost);
    let result = agent.resume(&taken.record, taken.answer.clone()).await;
    assert_eq!(
        store.finish(&first, result.clone()).await.unwrap_err(),
        lost
    );
    let stored = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(
        stored.checkpoint,
        Some(json!({"step": 1})),
        "the dead claim wrote nothing"
    );

    let done = store.finish(&taken, result).await.unwrap();
    assert_eq!(done.state, RunState::Finished);
}

/// A claim renewed before its lease runs out is not taken over.
pub async fn renewed_lease_is_kept(make: Make) {
    let s = subject!(make, Duration::from_millis(400));
    let store = s.store();
    let record = Agent::once().halt().await;
    let answer = record.pending().accept("Ada");
    store.park(record).await.unwrap();
    let mut claim = store.claim(&answer, "worker-1").await.unwrap();
    let first_until = claim.lease.until;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        store.renew(&mut claim).await.unwrap();
    }
    assert!(claim.lease.until > first_until);
    assert!(store.take_over("worker-2").await.unwrap().is_none());
}

/// A request past `expiresAt` refuses its answer; the run resumes with `declined/expired`.
pub async fn expiry(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let expired_agent = Agent {
        expires_ms: Some(-10_000),
        ..Agent::once()
    };
    let lasting = Agent {
        expires_ms: Some(3_600_000),
        ..Agent::once()
    };
    let late = expired_agent.halt().await;
    let swept = expired_agent.halt().await;
    let fine = lasting.halt().await;
    let late_answer = late.pending().accept("Ada");
    let late_info = store.park(late).await.unwrap();
    assert!(late_info.expires_at.unwrap() < SystemTime::now());
    let swept_info = store.park(swept).await.unwrap();
    let fine_info = store.park(fine).await.unwrap();

    assert_eq!(
        store.claim(&late_answer, "worker-1").await.unwrap_err(),
        StoreError::Expired {
            run_id: late_info.run_id.clone()
        }
    );
    let late_row = store.get(&late_info.run_id).await.unwrap().unwrap();
    assert_eq!(late_row.info.state, RunState::Expired);
    assert_eq!(
        late_row.answer,
        Some(Answer::decline(
            &late_info.request_id,
            DeclineReason::Expired
        ))
    );
    // a second answer to it is refused the same way
    assert!(matches!(
        store.claim(&late_answer, "worker-2").await,
        Err(StoreError::Expired { .. })
    ));

    assert_eq!(
        store.expire().await.unwrap(),
        vec![swept_info.run_id.clone()]
    );
    assert_eq!(store.expire().await.unwrap(), Vec::<String>::new());
    assert_eq!(
        store
            .get(&fine_info.run_id)
            .await
            .unwrap()
            .unwrap()
            .info
            .state,
        RunState::Parked
    );

    let mut resumed = BTreeSet::new();
    while let Some(claim) = store.take_over("sweeper").await.unwrap() {
        assert!(!claim.answer.ok);
        assert_eq!(claim.answer.reason, Some(DeclineReason::Expired));
        let result = expired_agent
            .resume(&claim.record, claim.answer.clone())
            .await;
        assert_eq!(result.text, "done: declined/expired: What is your name?");
        store.finish(&claim, result).await.unwrap();
        resumed.insert(claim.run_id);
    }
    assert_eq!(
        resumed,
        BTreeSet::from([late_info.run_id.clone(), swept_info.run_id.clone()])
    );
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(
        pending.runs.iter().map(|r| &r.run_id).collect::<Vec<_>>(),
        [&fine_info.run_id]
    );
}

/// Pages of `list_pending` cover every parked run once, in order; filters by kind, age and
/// expiry.
pub async fn paging_and_filters(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let mut approvals = BTreeSet::new();
    let mut expiring = BTreeSet::new();
    let mut all = Vec::new();
    for i in 0..25 {
        let agent = Agent {
            kind: if i % 3 == 0 { "approval" } else { "input" }.to_owned(),
            expires_ms: (i % 5 == 0).then_some(600_000),
            ..Agent::once()
        };
        let info = store.park(agent.halt().await).await.unwrap();
        if i % 3 == 0 {
            approvals.insert(info.run_id.clone());
        }
        if i % 5 == 0 {
            expiring.insert(info.run_id.clone());
        }
        all.push(info);
    }
    // one claimed run is not pending
    let claimed = all.remove(7);
    let answer = Answer::accept(&claimed.request_id, "x");
    store.claim(&answer, "w").await.unwrap();
    approvals.remove(&claimed.run_id);
    expiring.remove(&claimed.run_id);

    let mut seen = Vec::new();
    let mut query = PendingQuery::new().limit(10);
    let mut pages = 0;
    loop {
        let page = store.list_pending(&query).await.unwrap();
        pages += 1;
        assert!(page.runs.len() <= 10);
        seen.extend(page.runs);
        match page.next {
            Some(cursor) => query = PendingQuery::new().limit(10).after(cursor),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut expected = all.clone();
    expected.sort_by(|a, b| (a.created_at, &a.run_id).cmp(&(b.created_at, &b.run_id)));
    assert_eq!(seen, expected);

    let ids = |runs: Vec<toolnexus::store::RunInfo>| -> BTreeSet<String> {
        runs.into_iter().map(|r| r.run_id).collect()
    };
    let page = store
        .list_pending(&PendingQuery::new().kind("approval"))
        .await
        .unwrap();
    assert_eq!(ids(page.runs), approvals);
    let page = store
        .list_pending(
            &PendingQuery::new().expiring_before(SystemTime::now() + Duration::from_secs(3600)),
        )
        .await
        .unwrap();
    assert_eq!(ids(page.runs), expiring);
    let page = store
        .list_pending(&PendingQuery::new().older_than(Duration::from_secs(3600)))
        .await
        .unwrap();
    assert!(page.runs.is_empty());
    let page = store
        .list_pending(
            &PendingQuery::new().created_before(SystemTime::now() + Duration::from_secs(1)),
        )
        .await
        .unwrap();
    assert_eq!(page.runs.len(), 24);
    assert_eq!(page.next, None);
    let err = store
        .list_pending(&PendingQuery::new().after("garbage"))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "`garbage` is not a cursor a page returned");
}

/// A run that halts again after its claim parks again on its new request, same run id.
pub async fn halts_again_after_its_claim(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let agent = Agent {
        halts: 2,
        ..Agent::once()
    };
    let record = agent.halt().await;
    let first = record.pending().clone();
    let parked = store.park(record).await.unwrap();
    let claim = store.claim(&first.accept("Ada"), "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.status, RunStatus::Pending);
    let second = result.pending.clone().unwrap();
    assert_ne!(second.id, first.id);
    let again = store.finish(&claim, result).await.unwrap();
    assert_eq!(again.run_id, parked.run_id);
    assert_eq!(again.state, RunState::Parked);
    assert_eq!(again.request_id, second.id);
    assert_eq!(again.lease, None);
    assert!(again.version > parked.version);

    let stored = store.get_by_request(&second.id).await.unwrap().unwrap();
    assert_eq!(stored.info, again);
    assert_eq!(
        stored.answer, None,
        "the used answer is gone with its request"
    );
    assert_eq!(stored.checkpoint, None);
    assert!(store.get_by_request(&first.id).await.unwrap().is_none());
    assert_eq!(
        store.claim(&first.accept("Ada"), "w").await.unwrap_err(),
        StoreError::NotFound {
            key: first.id.clone()
        }
    );
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(pending.runs, vec![again]);

    let claim = store
        .claim(&second.accept("Bob"), "worker-2")
        .await
        .unwrap();
    assert_eq!(claim.token, 2);
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.text, r#"done: hello "Bob""#);
    assert_eq!(
        store.finish(&claim, result).await.unwrap().state,
        RunState::Finished
    );
}

/// A damaged row gives a clear error naming its run; the other runs are unaffected, and the
/// damaged run is neither claimed nor lost.
pub async fn corrupt_rows_stay_local(make: Make) {
    let s = subject!(make, Duration::from_millis(200));
    let store = s.store();
    let agent = Agent::once();
    let bad = agent.halt().await;
    let good = agent.halt().await;
    let bad_answer = bad.pending().accept("Ada");
    let good_answer = good.pending().accept("Bob");
    let bad_info = store.park(bad).await.unwrap();
    let good_info = store.park(good).await.unwrap();
    (s.write_raw)(
        bad_info.run_id.clone(),
        "{\"version\":1,\"model\":".to_owned(),
    )
    .await;

    match store.get(&bad_info.run_id).await {
        Err(StoreError::Corrupt { run_id, message }) => {
            assert_eq!(run_id, bad_info.run_id);
            assert!(
                message.starts_with("invalid persisted run: not a pending-run record"),
                "{message}"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(matches!(
        store.claim(&bad_answer, "worker-1").await,
        Err(StoreError::Corrupt { run_id, .. }) if run_id == bad_info.run_id
    ));
    // still parked, listed from its columns
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(
        pending
            .runs
            .iter()
            .map(|r| r.run_id.clone())
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([bad_info.run_id.clone(), good_info.run_id.clone()])
    );
    let claim = store.claim(&good_answer, "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    store.finish(&claim, result).await.unwrap();
    assert_eq!(
        store
            .get(&good_info.run_id)
            .await
            .unwrap()
            .unwrap()
            .info
            .state,
        RunState::Finished
    );
    // a damaged run never blocks takeovers of the others
    let third = agent.halt().await;
    let third_answer = third.pending().accept("Cy");
    let third_info = store.park(third).await.unwrap();
    let claim = store.claim(&third_answer, "worker-1").await.unwrap();
    (s.write_raw)(third_info.run_id.clone(), "[]".to_owned()).await;
    let fourth = agent.halt().await;
    let fourth_answer = fourth.pending().accept("Di");
    let fourth_info = store.park(fourth).await.unwrap();
    store.claim(&fourth_answer, "worker-1").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let taken = store
        .take_over("worker-2")
        .await
        .unwrap()
        .expect("the readable run");
    assert_eq!(taken.run_id, fourth_info.run_id);
    assert!(store.take_over("worker-2").await.unwrap().is_none());
    assert_eq!(claim.run_id, third_info.run_id);
}

/// A version-1 record, as the first release wrote it.
pub const RECORD_V1: &str = include_str!("../fixtures/pending_run_v1.json");

/// A record written by an older release is read, claimed and resumed.
pub async fn older_record_version(make: Make) {
    let s = subject!(make);
    let store = s.store();
    // a host migrates a version-1 record it trusts; the store migrates its own rows
    let record = PendingRun::migrate_v1(RECORD_V1).expect("a v1 record is migrated");
    let request = record.pending().clone();
    let parked = store.park(record).await.unwrap();
    assert_eq!(parked.request_id, request.id);
    // a row that holds the old text as written (not re-encoded) reads too
    (s.write_raw)(parked.run_id.clone(), RECORD_V1.to_owned()).await;
    let stored = store.get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.record.pending(), &request);
    let claim = store
        .claim(&request.accept("Ada"), "worker-1")
        .await
        .unwrap();
    let result = Agent::once()
        .resume(&claim.record, claim.answer.clone())
        .await;
    assert_eq!(result.text, r#"done: hello "Ada""#);
    store.finish(&claim, result).await.unwrap();
}

/// A host waiting on a run learns when an answer claims it.
pub async fn wait_change_wakes_on_claim(make: Make) {
    let s = subject!(make);
    let record = Agent::once().halt().await;
    let answer = record.pending().accept("Ada");
    let parked = s.store().park(record).await.unwrap();
    let waiter = Arc::clone(&s.handles[s.handles.len() - 1]);
    let run_id = parked.run_id.clone();
    let wait = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let info = waiter
            .wait_change(&run_id, parked.version, Duration::from_secs(10))
            .await;
        (info, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.store().claim(&answer, "worker-1").await.unwrap();
    let (info, elapsed) = wait.await.unwrap();
    let info = info.unwrap().expect("woken before the timeout");
    assert_eq!(info.state, RunState::Claimed);
    assert!(elapsed < Duration::from_secs(2), "waited {elapsed:?}");
    let none = s
        .store()
        .wait_change(&info.run_id, info.version, Duration::from_millis(100))
        .await
        .unwrap();
    assert_eq!(none, None);
    assert!(
        s.store()
            .wait_finished(&info.run_id, Duration::from_millis(50))
            .await
            .unwrap()
            .is_none()
    );
}

/// Three tools in three turns: `ask` (suspends, then greets), `two`, `three`; each counts its
/// runs (the answered `ask` only).
struct Counted {
    toolkit: Toolkit,
    runs: [Arc<AtomicU32>; 3],
}

impl Counted {
    fn new() -> Self {
        let runs: [Arc<AtomicU32>; 3] = Default::default();
        let ask_runs = Arc::clone(&runs[0]);
        let ask = FnTool::builder("ask")
            .description("Asks the user a question.")
            .handler(move |_, ctx| {
                let ask_runs = Arc::clone(&ask_runs);
                async move {
                    match ctx.answer_data::<String>() {
                        Ok(Some(name)) => {
                            ask_runs.fetch_add(1, Ordering::SeqCst);
                            ToolResult::success(format!("hello {name}"))
                        }
                        _ => ToolResult::suspended(Request::input("What is your name?")),
                    }
                }
            })
            .build()
            .expect("the ask tool builds");
        let mut builder = Toolkit::builder().tool(ask);
        for (name, counter) in [("two", &runs[1]), ("three", &runs[2])] {
            let counter = Arc::clone(counter);
            builder = builder.tool(
                FnTool::builder(name)
                    .description("Counts.")
                    .handler(move |_, _| {
                        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                        async move { ToolResult::success(format!("{name} #{n}")) }
                    })
                    .build()
                    .expect("the tool builds"),
            );
        }
        Self {
            toolkit: builder.build().expect("the toolkit builds"),
            runs,
        }
    }

    fn counts(&self) -> [u32; 3] {
        [0, 1, 2].map(|i| self.runs[i].load(Ordering::SeqCst))
    }

    /// A client whose model calls `ask`, `two`, `three` in turn, then answers `done`. With
    /// `stall`, its call after two tool results signals `stall` and never returns (a worker
    /// that dies there).
    fn client(stall: Option<Arc<tokio::sync::Notify>>) -> Client {
        let model = FnModel::new(move |req: ModelRequest| {
            let stall = stall.clone();
            async move {
                let results = req.messages.iter().filter(|m| m.role == Role::Tool).count();
                if results == 2
                    && let Some(stall) = stall
                {
                    stall.notify_one();
                    std::future::pending::<()>().await;
                }
                match results {
                    0 => Reply::tool_call("ask", json!({})),
                    1 => Reply::tool_call("two", json!({})),
                    2 => Reply::tool_call("three", json!({})),
                    _ => Reply::text("done"),
                }
            }
        });
        Client::builder(model)
            .model_name("conformance")
            .build()
            .expect("the client builds")
    }
}

/// A run with three tool calls, resumed by worker A (`Client::resume_claim`), which dies (its
/// future dropped) after the second tool result; once A's lease runs out worker B takes it
/// over and goes on from A's last checkpoint: `ask` and `two` ran once, `three` once, the
/// run finished once, by B.
pub async fn takeover_resumes_from_the_last_checkpoint(make: Make) {
    let s = subject!(make, Duration::from_millis(300));
    let tools = Arc::new(Counted::new());
    let halted = Counted::client(None)
        .run("Greet me, then count.", &tools.toolkit)
        .await
        .expect("the run halts");
    let request = halted.pending.clone().expect("halted on ask");
    let parked = s
        .store()
        .park(PendingRun::try_from(halted).expect("a record"))
        .await
        .unwrap();
    let claim = s
        .store()
        .claim(&request.accept("Ada"), "worker-a")
        .await
        .unwrap();

    let stalled = Arc::new(tokio::sync::Notify::new());
    let worker_a = {
        let (store, tools, claim) = (Arc::clone(&s.handles[0]), Arc::clone(&tools), claim.clone());
        let client = Counted::client(Some(Arc::clone(&stalled)));
        tokio::spawn(async move {
            client
                .resume_claim(store.as_ref(), &claim, &tools.toolkit)
                .await
        })
    };
    tokio::time::timeout(Duration::from_secs(10), stalled.notified())
        .await
        .expect("worker A reaches its third model call");
    worker_a.abort();
    assert!(worker_a.await.unwrap_err().is_cancelled(), "worker A died");
    assert_eq!(tools.counts(), [1, 1, 0]);
    let stored = s.store().get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Claimed);
    let checkpoint = stored.checkpoint.expect("A saved checkpoints");
    assert_eq!(checkpoint["toolnexus"], "checkpoint-v1");
    let outputs = |run: &serde_json::Value| -> Vec<String> {
        run["toolCalls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["output"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(outputs(&checkpoint["run"]), ["hello Ada", "two #1"]);

    assert!(
        s.store().take_over("worker-b").await.unwrap().is_none(),
        "A's lease still holds"
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    let taken = s.handles[s.handles.len() - 1]
        .take_over("worker-b")
        .await
        .unwrap()
        .expect("A's lease ran out");
    assert!(taken.taken_over);
    assert_eq!(taken.checkpoint.as_ref(), Some(&checkpoint));
    let result = Counted::client(None)
        .resume_claim(s.store(), &taken, &tools.toolkit)
        .await
        .expect("B finishes the run");
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "done");
    assert_eq!(result.run_id, parked.run_id);
    assert_eq!(
        result
            .tool_calls
            .iter()
            .map(|c| c.output.as_str())
            .collect::<Vec<_>>(),
        ["hello Ada", "two #1", "three #1"]
    );
    assert_eq!(tools.counts(), [1, 1, 1], "no recorded tool ran again");
    let stored = s.store().get(&parked.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Finished);
    assert_eq!(stored.result, Some(result.clone()));
    // A's claim is dead: it can record nothing
    assert_eq!(
        s.store().finish(&claim, result).await.unwrap_err(),
        StoreError::LeaseLost {
            run_id: parked.run_id.clone()
        }
    );
    // a claim whose checkpoint is not a run checkpoint resumes nothing
    let mut foreign = taken.clone();
    foreign.checkpoint = Some(json!({"step": 1}));
    let err = Counted::client(None)
        .resume_claim(s.store(), &foreign, &tools.toolkit)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid persisted run: the checkpoint of run `{}` is not a run checkpoint: no `\"toolnexus\":\"checkpoint-v1\"` tag",
            parked.run_id
        )
    );
    assert_eq!(tools.counts(), [1, 1, 1]);
}

/// A chat agent: `book ...` calls `confirm` (which asks for approval), its result makes the
/// model answer `booked`; any other prompt is echoed with the number of user turns it saw.
fn chat_client(store: Arc<dyn RunStore>) -> (Client, Toolkit) {
    let confirm = FnTool::builder("confirm")
        .description("Asks for approval.")
        .handler(|_, ctx| async move {
            match ctx.answer() {
                Some(_) => ToolResult::success("approved"),
                None => ToolResult::suspended(Request::approval("Book it?")),
            }
        })
        .build()
        .expect("the tool builds");
    let model = FnModel::new(|req: ModelRequest| async move {
        let last = req.messages.last().expect("a transcript");
        let users = req.messages.iter().filter(|m| m.role == Role::User).count();
        match (last.role, last.content.as_deref().unwrap_or_default()) {
            (Role::Tool, output) => Reply::text(format!("booked ({output})")),
            (_, prompt) if prompt.starts_with("book") => Reply::tool_call("confirm", json!({})),
            (_, prompt) => Reply::text(format!("echo {prompt} after {users} turns")),
        }
    });
    let client = Client::builder(model)
        .model_name("conformance")
        .system("be brief")
        .store(store)
        .build()
        .expect("the client builds");
    let toolkit = Toolkit::builder()
        .tool(confirm)
        .build()
        .expect("the toolkit builds");
    (client, toolkit)
}

fn conversations(s: &Subject) -> &dyn ConversationStore {
    s.store()
        .conversations()
        .expect("the store keeps conversations")
}

/// `ask` saves each ended turn; a turn that halts leaves the conversation waiting on its run,
/// its transcript unchanged; asking again meanwhile is refused; the answer completes the turn.
pub async fn conversation_turn_halts_and_the_answer_completes_it(make: Make) {
    let s = subject!(make);
    let (client, toolkit) = chat_client(Arc::clone(&s.handles[0]));
    let first = client.ask("chat-1", "hi", &toolkit).await.unwrap();
    assert_eq!(first.text, "echo hi after 1 turns");
    let chat = conversations(&s)
        .get_conversation("chat-1")
        .await
        .unwrap()
        .expect("saved");
    assert_eq!(chat.messages, first.messages);
    assert_eq!(chat.messages[0], Message::system("be brief"));
    assert_eq!(chat.turns(), 1);
    assert_eq!(chat.version, 1);

    let halted = client.ask("chat-1", "book Oslo", &toolkit).await.unwrap();
    let request = halted.pending.clone().expect("the turn halts");
    let chat = conversations(&s)
        .get_conversation("chat-1")
        .await
        .unwrap()
        .unwrap();
    let waiting = chat.waiting.clone().expect("waiting on the run");
    assert_eq!(waiting.run_id, halted.run_id);
    assert_eq!(waiting.request_id, request.id);
    assert_eq!(chat.messages, first.messages, "no half turn is saved");
    let parked = s
        .store()
        .get_by_request(&request.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parked.info.state, RunState::Parked);

    let err = client.ask("chat-1", "hello?", &toolkit).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "conversation `chat-1` waits on request `{}`: answer it (`Client::answer`) before the next turn",
            request.id
        )
    );
    assert!(matches!(
        conversations(&s).trim_conversation("chat-1", 1).await,
        Err(StoreError::Conflict(_))
    ));

    let done = client
        .answer(s.store(), request.accept(true), &toolkit)
        .await
        .unwrap();
    assert_eq!(done.text, "booked (approved)");
    let chat = conversations(&s)
        .get_conversation("chat-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(chat.waiting, None);
    assert_eq!(chat.messages, done.messages);
    assert_eq!(chat.turns(), 2);
    let roles: Vec<Role> = chat.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant
        ]
    );

    let third = client.ask("chat-1", "thanks", &toolkit).await.unwrap();
    assert_eq!(third.text, "echo thanks after 3 turns");
    assert_eq!(
        conversations(&s)
            .get_conversation("chat-1")
            .await
            .unwrap()
            .unwrap()
            .turns(),
        3
    );
    // another conversation is independent
    let other = client.ask("chat-2", "hi", &toolkit).await.unwrap();
    assert_eq!(other.text, "echo hi after 1 turns");
}

fn chat_of(id: &str, turns: usize) -> Conversation {
    let mut chat = Conversation::new(id);
    chat.messages.push(Message::system("s"));
    for t in 0..turns {
        chat.messages.push(Message::user(format!("u{t}")));
        let call = ToolCall::new(format!("c{t}"), "confirm", json!({}));
        chat.messages
            .push(Message::assistant_tool_calls(None, vec![call]));
        chat.messages
            .push(Message::tool_result(format!("c{t}"), "approved", false));
        chat.messages.push(Message::assistant(format!("a{t}")));
    }
    chat
}

/// Conversations are listed in id order a page at a time; saves are compare-and-set; trim
/// keeps whole turns; an unbalanced transcript is refused; delete.
pub async fn conversation_list_trim_delete(make: Make) {
    let s = subject!(make);
    let store = conversations(&s);
    for i in [3, 0, 4, 1, 2] {
        let info = store
            .put_conversation(&chat_of(&format!("c{i}"), i + 1))
            .await
            .unwrap();
        assert_eq!(info.version, 1);
        assert_eq!(info.turns, i + 1);
        assert_eq!(info.messages, 1 + 4 * (i + 1));
    }
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = store.list_conversations(after.as_deref(), 2).await.unwrap();
        pages += 1;
        seen.extend(page.conversations.iter().map(|c| (c.id.clone(), c.turns)));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        seen,
        [0, 1, 2, 3, 4].map(|i| (format!("c{i}"), i + 1)).to_vec()
    );

    // compare-and-set: a stale version, or a second new one, is refused
    let stored = store.get_conversation("c2").await.unwrap().unwrap();
    assert_eq!(stored.messages, chat_of("c2", 3).messages);
    let mut next = stored.clone();
    next.messages.push(Message::user("again"));
    next.messages.push(Message::assistant("ok"));
    assert_eq!(store.put_conversation(&next).await.unwrap().version, 2);
    assert_eq!(
        store.put_conversation(&next).await.unwrap_err().to_string(),
        "conversation `c2` changed since version 1 was read: another turn was saved first"
    );
    assert_eq!(
        store
            .put_conversation(&chat_of("c2", 1))
            .await
            .unwrap_err()
            .to_string(),
        "conversation `c2` is already stored: load it and save from its version"
    );
    let mut unbalanced = chat_of("c9", 1);
    unbalanced.messages.truncate(3);
    assert_eq!(
        store
            .put_conversation(&unbalanced)
            .await
            .unwrap_err()
            .to_string(),
        "conversation `c9`: the tool call `c0` has no result, the transcript would be unbalanced"
    );
    assert!(store.get_conversation("c9").await.unwrap().is_none());

    // trim keeps the system message and the last two turns, each with its tool results
    let trimmed = store.trim_conversation("c4", 2).await.unwrap();
    assert_eq!(
        (trimmed.turns, trimmed.messages, trimmed.version),
        (2, 9, 2)
    );
    let kept = store.get_conversation("c4").await.unwrap().unwrap();
    let mut expected = chat_of("c4", 5).messages;
    expected.drain(1..13);
    assert_eq!(kept.messages, expected);
    assert_eq!(kept.messages[1], Message::user("u3"));
    assert_eq!(
        store.trim_conversation("nope", 1).await.unwrap_err(),
        StoreError::NotFound {
            key: "nope".to_owned()
        }
    );

    assert!(store.delete_conversation("c4").await.unwrap());
    assert!(!store.delete_conversation("c4").await.unwrap());
    assert!(store.get_conversation("c4").await.unwrap().is_none());
    let page = store.list_conversations(None, 10).await.unwrap();
    assert_eq!(page.conversations.len(), 4);
    assert_eq!(page.next, None);
}

/// A worker that finished a conversation's run but died before saving the conversation: the
/// next `ask` takes the run's outcome first, so no turn is lost.
pub async fn conversation_settles_a_run_finished_elsewhere(make: Make) {
    let s = subject!(make);
    let (client, toolkit) = chat_client(Arc::clone(&s.handles[0]));
    let halted = client.ask("chat-3", "book Rome", &toolkit).await.unwrap();
    let request = halted.pending.clone().unwrap();
    // a bare worker: claims, resumes and finishes the run, never touching the conversation
    let claim = s
        .store()
        .claim(&request.accept(true), "worker-1")
        .await
        .unwrap();
    let (bare, _) = chat_client(Arc::new(toolnexus::store::MemoryStore::new()));
    let result = bare
        .resume(claim.record.clone(), claim.answer.clone(), &toolkit)
        .await
        .unwrap();
    s.store().finish(&claim, result.clone()).await.unwrap();
    let chat = conversations(&s)
        .get_conversation("chat-3")
        .await
        .unwrap()
        .unwrap();
    assert!(chat.waiting.is_some(), "not settled yet");

    let next = client.ask("chat-3", "thanks", &toolkit).await.unwrap();
    assert_eq!(next.text, "echo thanks after 2 turns");
    let chat = conversations(&s)
        .get_conversation("chat-3")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(chat.waiting, None);
    assert_eq!(chat.messages[..result.messages.len()], result.messages[..]);
    assert_eq!(chat.messages, next.messages);
}
