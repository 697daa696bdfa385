//! Governed approvals (CONTRACT section 2): a request that needs several distinct approvers
//! (`data.approvals`) keeps each acceptance as a vote and waits until the count is reached;
//! one decline declines; the same person twice counts once; an edit is a new call the others
//! approve again; the run's own principal is refused at the door when the request says so;
//! racing votes all count; a sealed store refuses votes edited at rest.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolnexus::store::{RunEventKind, RunState, RunStore, StoreError};
use toolnexus::{
    Answer, Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role, RunStatus,
    ToolResult, Toolkit,
};

use super::{LEASE, Make, make_subject};

/// The arguments the model proposes for `pay`.
fn proposed() -> Value {
    json!({"amount": 4000, "to": "ACME"})
}

/// The arguments an approver edits them to.
fn edited() -> Value {
    json!({"amount": 3500, "to": "ACME"})
}

/// `pay`, whose calls need `approvals` distinct approvers, none of them the run's principal;
/// it counts its runs and keeps the arguments each ran with.
struct Pay {
    toolkit: Toolkit,
    runs: Arc<AtomicU32>,
    ran: Arc<Mutex<Vec<Value>>>,
}

impl Pay {
    fn new(approvals: u32) -> Self {
        let runs = Arc::new(AtomicU32::new(0));
        let ran: Arc<Mutex<Vec<Value>>> = Arc::default();
        let schema = json!({
            "type": "object",
            "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}},
            "required": ["amount", "to"]
        });
        let pay = {
            let (runs, ran, schema) = (Arc::clone(&runs), Arc::clone(&ran), schema.clone());
            FnTool::builder("pay")
                .description("Pays someone.")
                .schema(schema.clone())
                .editable()
                .handler(move |args, ctx| {
                    let (runs, ran, schema) = (Arc::clone(&runs), Arc::clone(&ran), schema.clone());
                    async move {
                        let Some(answer) = ctx.answer() else {
                            let request = Request::editable_approval(
                                "Pay 4000 to ACME?",
                                Value::Object(args),
                                schema,
                            )
                            .with_approvals(approvals)
                            .with_not_by_requester();
                            return ToolResult::suspended(request);
                        };
                        if !answer.ok {
                            return ToolResult::error("declined: Pay 4000 to ACME?");
                        }
                        let args = answer
                            .data
                            .as_ref()
                            .and_then(|d| d.get("args"))
                            .cloned()
                            .unwrap_or(Value::Object(args));
                        let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                        ran.lock().unwrap().push(args.clone());
                        ToolResult::success(format!("paid {args} #{n}"))
                    }
                })
                .build()
                .expect("pay builds")
        };
        let toolkit = Toolkit::builder()
            .tool(pay)
            .build()
            .expect("the toolkit builds");
        Self { toolkit, runs, ran }
    }

    /// A client whose model calls `pay` with [`proposed`], then answers `done: <result>`.
    fn client() -> Client {
        let model = FnModel::new(|req: ModelRequest| async move {
            let results: Vec<String> = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.content.clone().unwrap_or_default())
                .collect();
            match results.last() {
                None => Reply::tool_call("pay", proposed()),
                Some(last) => Reply::text(format!("done: {last}")),
            }
        });
        Client::builder(model)
            .model_name("conformance")
            .build()
            .expect("the client builds")
    }

    /// Runs the agent for `alice` until it parks on `pay`'s approval; parks the record.
    async fn park(&self, store: &dyn RunStore) -> (PendingRun, Request) {
        let result = Self::client()
            .for_principal("alice")
            .run("Pay ACME.", &self.toolkit)
            .await
            .expect("the run halts");
        assert_eq!(result.status, RunStatus::Pending, "{result:?}");
        let record = PendingRun::try_from(result).expect("a record");
        let request = record.pending().clone();
        store.park(record.clone()).await.unwrap();
        (record, request)
    }

    /// Claims the answered run and resumes it; the run's text.
    async fn resume(&self, store: &dyn RunStore) -> String {
        let claim = store
            .claim_next("worker")
            .await
            .unwrap()
            .expect("an answered run to claim");
        let run = Self::client()
            .for_principal("alice")
            .resume_claim(store, &claim, &self.toolkit)
            .await
            .expect("the resume runs");
        assert_eq!(run.status, RunStatus::Done, "{run:?}");
        run.text
    }
}

/// Who voted, in order.
async fn voters(store: &dyn RunStore, run_id: &str) -> Vec<String> {
    let run = store.get(run_id).await.unwrap().expect("stored");
    run.votes.iter().map(|v| v.by.clone()).collect()
}

/// Two of three: the first approval (given by a `claim`, which has no claim to hand out yet)
/// is kept as a vote and the run stays parked, with nothing for a worker; the second reaches
/// the count, the run is answered by its giver and resumed once: `pay` runs exactly once.
pub async fn a_second_approval_runs_the_call_once(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let pay = Pay::new(2);
    let (record, request) = pay.park(store).await;
    let run_id = record.run_id().to_owned();

    let first = store.claim(&request.accept(json!({})), "bob").await;
    assert_eq!(
        first.unwrap_err(),
        StoreError::Voted {
            run_id: run_id.clone(),
            given: 1,
            required: 2
        }
    );
    let waiting = store.get(&run_id).await.unwrap().unwrap();
    assert_eq!(waiting.info.state, RunState::Parked);
    assert_eq!(voters(store, &run_id).await, ["bob"]);
    assert_eq!(
        (
            waiting.approvals_required(),
            waiting.approvals_given(),
            waiting.approvals_missing()
        ),
        (2, 1, 1)
    );
    assert_eq!(waiting.info.answered_by(), None);
    let last = waiting.info.history.last().unwrap();
    assert_eq!(
        (last.event, last.by.as_deref()),
        (RunEventKind::Voted, Some("bob"))
    );
    assert!(store.claim_next("worker").await.unwrap().is_none());
    assert_eq!(pay.runs.load(Ordering::SeqCst), 0);
    // still listed as waiting
    let page = store
        .list_pending(&toolnexus::store::PendingQuery::new())
        .await
        .unwrap();
    assert_eq!(page.runs.len(), 1);

    let info = store
        .submit(&request.accept(json!({})), "carol")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    assert_eq!(info.answered_by(), Some("carol"));
    assert_eq!(voters(store, &run_id).await, ["bob", "carol"]);
    let text = pay.resume(store).await;
    assert!(text.starts_with("done: paid"), "{text}");
    assert_eq!(pay.runs.load(Ordering::SeqCst), 1);
    assert_eq!(*pay.ran.lock().unwrap(), [proposed()]);
    assert!(store.claim_next("worker").await.unwrap().is_none());
    // a third approval comes too late: the request was answered
    assert!(matches!(
        store.submit(&request.accept(json!({})), "dave").await,
        Err(StoreError::AlreadyAnswered { .. })
    ));
    assert_eq!(pay.runs.load(Ordering::SeqCst), 1);
}

/// The same person approving twice counts once: the second answer is not an error, changes
/// nothing (the row's version stays), and the run still waits.
pub async fn the_same_person_twice_counts_once(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let pay = Pay::new(2);
    let (record, request) = pay.park(store).await;
    let first = store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    assert_eq!(first.state, RunState::Parked);
    let again = store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    assert_eq!(again.state, RunState::Parked);
    assert_eq!(again.version, first.version);
    assert_eq!(voters(store, record.run_id()).await, ["bob"]);
    let run = store.get(record.run_id()).await.unwrap().unwrap();
    assert_eq!(run.approvals_missing(), 1);
    assert!(store.claim_next("worker").await.unwrap().is_none());
}

/// One decline declines, whatever approvals came before: the run is answered with the
/// decline and resumed without running `pay`.
pub async fn one_decline_declines(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let pay = Pay::new(3);
    let (record, request) = pay.park(store).await;
    store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    let info = store
        .submit(
            &request.decline(toolnexus::request::DeclineReason::Declined),
            "carol",
        )
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    assert_eq!(info.answered_by(), Some("carol"));
    let run = store.get(record.run_id()).await.unwrap().unwrap();
    assert!(!run.answer.unwrap().ok);
    let text = pay.resume(store).await;
    assert!(text.contains("declined"), "{text}");
    assert_eq!(pay.runs.load(Ordering::SeqCst), 0);
}

/// An acceptance with edited arguments is a new call: the vote given for the proposed
/// arguments does not count toward it, so the run waits; once a second person approves the
/// edited arguments the run goes on with them, and `pay` runs once with the edit.
pub async fn an_edit_is_a_new_call_the_others_approve_again(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let pay = Pay::new(2);
    let (record, request) = pay.park(store).await;
    let run_id = record.run_id();
    store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    let info = store
        .submit(&request.approve_with(edited()), "carol")
        .await
        .unwrap();
    assert_eq!(
        info.state,
        RunState::Parked,
        "one vote each: no count reached"
    );
    let run = store.get(run_id).await.unwrap().unwrap();
    assert_eq!(run.votes.len(), 2);
    assert_eq!(run.votes[0].args, "shown");
    assert_ne!(run.votes[1].args, "shown");
    assert_eq!(run.approvals_given(), 1);
    let info = store
        .submit(&request.approve_with(edited()), "bob")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    let text = pay.resume(store).await;
    assert!(text.contains("3500"), "{text}");
    assert_eq!(*pay.ran.lock().unwrap(), [edited()]);
}

/// The run's own principal may not approve when the request says so: refused at the door
/// with a message naming the rule, and nothing recorded (no vote, no event, same version),
/// for a vote (`submit`) and a `claim` alike.
pub async fn the_requester_is_refused_and_nothing_is_recorded(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let pay = Pay::new(2);
    let (record, request) = pay.park(store).await;
    let before = store.get(record.run_id()).await.unwrap().unwrap();
    for refused in [
        store
            .submit(&request.accept(json!({})), "alice")
            .await
            .map(drop),
        store
            .claim(&request.accept(json!({})), "alice")
            .await
            .map(drop),
    ] {
        match refused {
            Err(StoreError::NotAllowed(why)) => {
                assert!(why.contains("notByRequester"), "{why}");
                assert!(why.contains("`alice`"), "{why}");
            }
            other => panic!("expected NotAllowed, got {other:?}"),
        }
    }
    let after = store.get(record.run_id()).await.unwrap().unwrap();
    assert_eq!(after.info, before.info);
    assert!(after.votes.is_empty());
    // someone else may
    let info = store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Parked);
}

/// Votes given at once through different handles all count: of three approvers needed, two
/// racing votes leave two votes and the run parked; a third answers it.
pub async fn racing_votes_all_count(make: Make) {
    let s = subject!(make);
    let pay = Pay::new(3);
    let (record, request) = pay.park(s.store()).await;
    let mut tasks = Vec::new();
    for (k, name) in ["bob", "carol"].into_iter().enumerate() {
        let store = Arc::clone(&s.handles[k % s.handles.len()]);
        let answer: Answer = request.accept(json!({}));
        tasks.push(tokio::spawn(
            async move { store.submit(&answer, name).await },
        ));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap().state, RunState::Parked);
    }
    let mut who = voters(s.store(), record.run_id()).await;
    who.sort();
    assert_eq!(who, ["bob", "carol"]);
    let info = s
        .store()
        .submit(&request.accept(json!({})), "dave")
        .await
        .unwrap();
    assert_eq!(info.state, RunState::Answered);
    pay.resume(s.store()).await;
    assert_eq!(pay.runs.load(Ordering::SeqCst), 1);
}

/// In a sealed store the votes are sealed, bound to their request: votes written at rest
/// without the seal (a vote added by hand) are refused as corrupt for that run only.
pub async fn a_vote_edited_at_rest_is_refused(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let pay = Pay::new(2);
    let (record, request) = pay.park(store).await;
    store
        .submit(&request.accept(json!({})), "bob")
        .await
        .unwrap();
    assert_eq!(voters(store, record.run_id()).await, ["bob"]);
    let forged = r#"[{"by":"bob","at":1,"args":"shown"},{"by":"mallory","at":2,"args":"shown"}]"#;
    assert!((s.write_column)(record.run_id().to_owned(), "votes", Some(forged.to_owned())).await);
    match store.get(record.run_id()).await {
        Err(StoreError::Corrupt { run_id, message }) => {
            assert_eq!(run_id, record.run_id());
            assert!(message.starts_with("votes:"), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // and no vote is counted on top of it
    assert!(matches!(
        store.submit(&request.accept(json!({})), "carol").await,
        Err(StoreError::Corrupt { .. })
    ));
}
