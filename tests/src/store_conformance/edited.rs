//! An edited approval cut by a crash: a person approves a call of a tool that is not idempotent
//! with other arguments, and the worker dies inside the tool. The worker that takes the run
//! over asks a person (`reconcile`) about the arguments that ran, the edited ones, and the
//! record it parks is one the store takes (its fingerprint is over what the record holds).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::reconcile::Reconcile;
use toolnexus::store::{Claim, RunState, RunStore};
use toolnexus::{
    Answer, Client, Context, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role,
    RunStatus, ToolResult, Toolkit,
};

use super::{Make, make_subject};

/// The arguments the model proposes for `pay`.
pub fn proposed_pay() -> Value {
    json!({"amount": 40, "to": "Ada"})
}

/// The arguments the person approves instead.
pub fn edited_pay() -> Value {
    json!({"amount": 30, "to": "Bob"})
}

/// `pay`: destructive (a client built by [`EditedPay::client`] asks for its approval), its
/// approvals editable, not idempotent; its body is `body`.
pub fn editable_pay<F, Fut>(body: F) -> FnTool
where
    F: Fn(serde_json::Map<String, Value>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    FnTool::builder("pay")
        .description("Pays someone.")
        .schema(json!({
            "type": "object",
            "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}},
            "required": ["amount", "to"],
            "additionalProperties": false
        }))
        .destructive()
        .editable()
        .handler(body)
        .build()
        .expect("pay builds")
}

/// The tools of the case: [`editable_pay`] counting its runs and keeping the arguments it ran
/// with; with `stall` set it signals it and never returns (a worker that dies inside it).
pub struct EditedPay {
    /// The tools.
    pub toolkit: Toolkit,
    /// How many times `pay` started.
    pub runs: Arc<AtomicU32>,
    /// The arguments and idempotency key of each start of `pay`.
    pub ran: Arc<Mutex<Vec<(Value, String)>>>,
    /// Set: `pay` signals it and stalls.
    pub stall: Arc<Mutex<Option<Arc<tokio::sync::Notify>>>>,
}

impl std::fmt::Debug for EditedPay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditedPay")
            .field("runs", &self.runs)
            .finish_non_exhaustive()
    }
}

impl Default for EditedPay {
    fn default() -> Self {
        Self::new()
    }
}

impl EditedPay {
    /// The tools, counting from zero.
    pub fn new() -> Self {
        let runs = Arc::new(AtomicU32::new(0));
        let ran: Arc<Mutex<Vec<(Value, String)>>> = Arc::default();
        let stall: Arc<Mutex<Option<Arc<tokio::sync::Notify>>>> = Arc::default();
        let pay = {
            let (runs, ran, stall) = (Arc::clone(&runs), Arc::clone(&ran), Arc::clone(&stall));
            editable_pay(move |args, ctx: Context| {
                let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                let key = ctx.idempotency_key().unwrap_or_default().to_owned();
                ran.lock().unwrap().push((Value::Object(args.clone()), key));
                let stall = stall.lock().unwrap().clone();
                async move {
                    if let Some(stall) = stall {
                        stall.notify_one();
                        std::future::pending::<()>().await;
                    }
                    ToolResult::success(format!("paid {} to {} #{n}", args["amount"], args["to"]))
                }
            })
        };
        let toolkit = Toolkit::builder()
            .tool(pay)
            .build()
            .expect("the toolkit builds");
        Self {
            toolkit,
            runs,
            ran,
            stall,
        }
    }

    /// A client that asks a person to approve destructive calls, whose model calls `pay` with
    /// [`proposed_pay`], then answers `done: <pay's result>`.
    pub fn client() -> Client {
        let model = FnModel::new(|req: ModelRequest| async move {
            let results: Vec<String> = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.content.clone().unwrap_or_default())
                .collect();
            match results.last() {
                None => Reply::tool_call("pay", proposed_pay()),
                Some(last) => Reply::text(format!("done: {last}")),
            }
        });
        Client::builder(model)
            .model_name("conformance")
            .approve_destructive()
            .build()
            .expect("the client builds")
    }

    /// Parks the run on `pay`'s approval; claims it with the approval of [`edited_pay`] as
    /// worker A, whose resume dies inside `pay`; once A's lease lapsed, worker B takes the
    /// run over. Returns the approval request and B's claim.
    pub async fn crash_inside_pay(
        &self,
        store: &Arc<dyn RunStore>,
        lease: Duration,
    ) -> (Request, Claim) {
        let halted = Self::client()
            .run("Pay Ada.", &self.toolkit)
            .await
            .expect("the run halts");
        let request = halted.pending.clone().expect("halted on the approval");
        assert_eq!(request.proposed_args(), Some(&proposed_pay()));
        store
            .park(PendingRun::try_from(halted).expect("a record"))
            .await
            .unwrap();
        let approval: Answer = request.approve_with(edited_pay());
        let claim = store.claim(&approval, "worker-a").await.unwrap();
        let stalled = Arc::new(tokio::sync::Notify::new());
        *self.stall.lock().unwrap() = Some(Arc::clone(&stalled));
        let worker_a = {
            let (store, toolkit) = (Arc::clone(store), self.toolkit.clone());
            tokio::spawn(async move {
                Self::client()
                    .resume_claim(store.as_ref(), &claim, &toolkit)
                    .await
            })
        };
        tokio::time::timeout(Duration::from_secs(10), stalled.notified())
            .await
            .expect("worker A is inside pay");
        worker_a.abort();
        assert!(worker_a.await.unwrap_err().is_cancelled(), "worker A died");
        *self.stall.lock().unwrap() = None;
        tokio::time::sleep(lease + Duration::from_millis(150)).await;
        let taken = store
            .take_over("worker-b")
            .await
            .unwrap()
            .expect("A's lease ran out");
        (*request, taken)
    }
}

/// A person approves `pay` with edited arguments and the worker dies inside it: the worker
/// that takes the run over parks it on a `reconcile` request that shows the edited arguments
/// (what ran) and the idempotency key they ran with, the store takes that record (its
/// fingerprint binds what it holds), and the model's transcript shows the edit. `record`
/// ends the call with the person's output; `pay` never ran again.
pub async fn an_edited_approval_cut_by_a_crash_asks_a_person_with_the_edited_args(make: Make) {
    let lease = Duration::from_millis(300);
    let s = subject!(make, lease);
    let tools = EditedPay::new();
    let (approval, taken) = tools.crash_inside_pay(&s.handles[0], lease).await;
    let (ran_args, key) = tools.ran.lock().unwrap()[0].clone();
    assert_eq!(ran_args, edited_pay(), "the edit ran");
    assert_eq!(tools.runs.load(Ordering::SeqCst), 1);
    let marker = &taken.checkpoint.as_ref().expect("A saved the marker")["inFlight"]["started"][0];
    assert_eq!(
        (&marker["args"], &marker["edited"]),
        (&edited_pay(), &json!(true))
    );

    let parked = EditedPay::client()
        .resume_claim(s.store(), &taken, &tools.toolkit)
        .await
        .expect("B parks the run on a reconcile request");
    assert_eq!(parked.status, RunStatus::Pending, "{parked:?}");
    let request = parked.pending.as_deref().expect("pending").clone();
    assert_eq!(request.kind, "reconcile");
    let data = request.data.as_deref().expect("data");
    assert_eq!(data["tool"], "pay");
    assert_eq!(data["args"], edited_pay(), "the arguments that ran");
    assert_eq!(data["idempotencyKey"], key);
    assert_eq!(
        tools.runs.load(Ordering::SeqCst),
        1,
        "pay did not run again"
    );
    // the transcript shows what ran, as it does for an edit that was not cut
    let call = parked
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.name == "pay")
        .expect("the call");
    assert_eq!(call.arguments, edited_pay());

    // the store holds it, parked, readable, on the reconcile request
    let stored = s.store().get(&taken.run_id).await.unwrap().expect("stored");
    assert_eq!(stored.info.state, RunState::Parked);
    assert_eq!(stored.info.request_id, request.id);
    assert_ne!(stored.info.request_id, approval.id);
    assert!(stored.info.failures().is_empty(), "{:?}", stored.info);
    let record = PendingRun::try_from(parked.clone()).expect("the record checks");
    assert_eq!(record.pending().id, request.id);

    // a person records what the payment returned; the run finishes with it
    let answer = Reconcile::Record("paid 30 to Bob (receipt 9)".to_owned()).answer(&request);
    let claim = s.store().claim(&answer, "worker-c").await.unwrap();
    let done = EditedPay::client()
        .resume_claim(s.store(), &claim, &tools.toolkit)
        .await
        .expect("the run finishes");
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "done: paid 30 to Bob (receipt 9)");
    assert_eq!(done.tool_calls.len(), 1);
    assert_eq!(done.tool_calls[0].args, edited_pay());
    assert!(!done.tool_calls[0].is_error);
    assert_eq!(tools.runs.load(Ordering::SeqCst), 1, "nothing ran again");
    let stored = s.store().get(&taken.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Finished);
}

/// The same cut, answered `rerun`: `pay` runs again with the edited arguments it first ran
/// with (and the same idempotency key), never the model's.
pub async fn an_edited_approval_cut_by_a_crash_reruns_with_the_edited_args(make: Make) {
    let lease = Duration::from_millis(300);
    let s = subject!(make, lease);
    let tools = EditedPay::new();
    let (_, taken) = tools.crash_inside_pay(&s.handles[0], lease).await;
    let parked = EditedPay::client()
        .resume_claim(s.store(), &taken, &tools.toolkit)
        .await
        .expect("B parks the run on a reconcile request");
    let request = parked.pending.as_deref().expect("pending").clone();
    assert_eq!(request.kind, "reconcile");

    let claim = s
        .store()
        .claim(&Reconcile::Rerun.answer(&request), "worker-c")
        .await
        .unwrap();
    let done = EditedPay::client()
        .resume_claim(s.store(), &claim, &tools.toolkit)
        .await
        .expect("the run finishes");
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "done: paid 30 to \"Bob\" #2");
    let ran = tools.ran.lock().unwrap().clone();
    assert_eq!(ran.len(), 2, "pay ran once more");
    assert_eq!(ran[1].0, edited_pay(), "with the edited arguments");
    assert_eq!(ran[1].1, ran[0].1, "under the same idempotency key");
    assert_eq!(done.tool_calls[0].args, edited_pay());
}
