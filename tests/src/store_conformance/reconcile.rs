//! A call of a tool that is not idempotent, cut by a crash of its worker, goes to a person: the
//! worker that takes the run over from the started marker's checkpoint halts on a `reconcile`
//! request instead of running it again; an idempotent call of the same turn runs again.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolnexus::reconcile::Reconcile;
use toolnexus::store::{Claim, RunState, RunStore};
use toolnexus::{
    Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role, RunResult, RunStatus,
    ToolResult, Toolkit,
};

use super::{Make, make_subject};

/// `ask` (idempotent: suspends, then greets), then in one turn `pay` (not idempotent) and
/// `look` (idempotent); each counts its runs. `pay` with `stall` signals it and never returns
/// (a worker that dies inside it), and keeps the idempotency key it ran with.
pub struct CrashCut {
    /// The tools.
    pub toolkit: Toolkit,
    /// Runs of `pay` and `look`.
    pub runs: [Arc<AtomicU32>; 2],
    /// The idempotency keys `pay` ran with.
    pub keys: Arc<Mutex<Vec<String>>>,
    /// Set: `pay` signals it and stalls.
    pub stall: Arc<Mutex<Option<Arc<tokio::sync::Notify>>>>,
}

impl std::fmt::Debug for CrashCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrashCut")
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl Default for CrashCut {
    fn default() -> Self {
        Self::new()
    }
}

impl CrashCut {
    /// The tools, counting from zero.
    pub fn new() -> Self {
        let runs: [Arc<AtomicU32>; 2] = Default::default();
        let keys = Arc::new(Mutex::new(Vec::new()));
        let stall: Arc<Mutex<Option<Arc<tokio::sync::Notify>>>> = Arc::default();
        let ask = FnTool::builder("ask")
            .description("Asks the user a question.")
            .idempotent()
            .handler(|_, ctx| async move {
                match ctx.answer_data::<String>() {
                    Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
                    _ => ToolResult::suspended(Request::input("What is your name?")),
                }
            })
            .build()
            .expect("ask builds");
        let pay = {
            let (count, keys, stall) =
                (Arc::clone(&runs[0]), Arc::clone(&keys), Arc::clone(&stall));
            FnTool::builder("pay")
                .description("Pays.")
                .handler(move |args, ctx| {
                    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                    let key = ctx.idempotency_key().unwrap_or_default().to_owned();
                    keys.lock().unwrap().push(key);
                    let stall = stall.lock().unwrap().clone();
                    async move {
                        if let Some(stall) = stall {
                            stall.notify_one();
                            std::future::pending::<()>().await;
                        }
                        ToolResult::success(format!("paid {} #{n}", args["amount"]))
                    }
                })
                .build()
                .expect("pay builds")
        };
        let look = {
            let count = Arc::clone(&runs[1]);
            FnTool::builder("look")
                .description("Looks.")
                .idempotent()
                .handler(move |_, _| {
                    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                    async move { ToolResult::success(format!("looked #{n}")) }
                })
                .build()
                .expect("look builds")
        };
        let toolkit = Toolkit::builder()
            .tool(ask)
            .tool(pay)
            .tool(look)
            .build()
            .expect("the toolkit builds");
        Self {
            toolkit,
            runs,
            keys,
            stall,
        }
    }

    /// Runs of `pay` and `look`.
    pub fn counts(&self) -> [u32; 2] {
        [0, 1].map(|i| self.runs[i].load(Ordering::SeqCst))
    }

    /// A client whose model calls `ask`, then `pay` and `look` in one turn, then answers
    /// `done: <the results of that turn>`.
    pub fn client() -> Client {
        let model = FnModel::new(|req: ModelRequest| async move {
            let results: Vec<String> = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.content.clone().unwrap_or_default())
                .collect();
            match results.len() {
                0 => Reply::tool_call("ask", json!({})),
                1 => Reply::tool_call("pay", json!({"amount": 40})).with_call("look", json!({})),
                _ => Reply::text(format!("done: {}", results[1..].join(" | "))),
            }
        });
        Client::builder(model)
            .model_name("conformance")
            .build()
            .expect("the client builds")
    }

    /// Parks the run on `ask`, claims it with an answer as worker A, whose resume dies inside
    /// `pay`; once A's lease lapsed, worker B takes the run over. Returns B's claim.
    pub async fn crash_inside_pay(&self, store: &Arc<dyn RunStore>, lease: Duration) -> Claim {
        let halted = Self::client()
            .run("Greet me, then pay.", &self.toolkit)
            .await
            .expect("the run halts");
        let request = halted.pending.clone().expect("halted on ask");
        store
            .park(PendingRun::try_from(halted).expect("a record"))
            .await
            .unwrap();
        let claim = store
            .claim(&request.accept("Ada"), "worker-a")
            .await
            .unwrap();
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
        store
            .take_over("worker-b")
            .await
            .unwrap()
            .expect("A's lease ran out")
    }
}

/// Checks a run parked on the `reconcile` request of the cut `pay` call.
pub fn assert_reconcile(run: &RunResult, key: &str) -> Request {
    assert_eq!(run.status, RunStatus::Pending, "{run:?}");
    let request = run.pending.as_deref().expect("a pending request").clone();
    assert_eq!(request.kind, "reconcile");
    let data = request.data.as_deref().expect("data");
    assert_eq!(data["tool"], "pay");
    assert_eq!(data["args"], json!({"amount": 40}));
    assert_eq!(data["idempotencyKey"], key);
    let started = data["startedAt"].as_str().expect("startedAt");
    assert!(
        started.len() >= 20 && started.ends_with('Z') && started.as_bytes()[10] == b'T',
        "RFC 3339 UTC: {started}"
    );
    assert_eq!(
        data["schema"]["properties"]["action"]["enum"],
        json!(["rerun", "record", "fail"])
    );
    assert_eq!(data["schema"]["required"], json!(["action"]));
    assert_eq!(
        request.prompt,
        format!(
            "The call of `pay` started at {started} and was cut off by a crash before its result was recorded: it may or may not have taken effect. Run it again, record what it returned, or fail the call?"
        )
    );
    assert!(request.check_trust_boundary().is_ok());
    request
}

/// A worker dies inside `pay` (not idempotent) while `look` (idempotent) ran beside it: the
/// checkpoint holds `pay`'s started marker; the worker that takes the run over runs `look`
/// again but not `pay`, and parks the run on a `reconcile` request (the tool, its arguments,
/// its idempotency key, when it started). The answer, claimed through the store, records the
/// output the person gives as `pay`'s result; `pay` never ran again.
pub async fn a_crash_cut_call_goes_to_a_person(make: Make) {
    let lease = Duration::from_millis(300);
    let s = subject!(make, lease);
    let tools = CrashCut::new();
    let taken = tools.crash_inside_pay(&s.handles[0], lease).await;
    assert_eq!(tools.counts(), [1, 1]);
    let checkpoint = taken.checkpoint.clone().expect("A saved the marker");
    assert_eq!(checkpoint["inFlight"]["started"][0]["tool"], "pay");
    let key = tools.keys.lock().unwrap()[0].clone();

    let parked = CrashCut::client()
        .resume_claim(s.store(), &taken, &tools.toolkit)
        .await
        .expect("B parks the run");
    let request = assert_reconcile(&parked, &key);
    assert_eq!(tools.counts(), [1, 2], "pay did not run again; look did");
    let stored = s.store().get(&taken.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Parked);
    assert_eq!(stored.info.request_id, request.id);

    // the person records what the payment returned
    let answer = Reconcile::Record("paid 40 (receipt 7)".to_owned()).answer(&request);
    let claim = s.store().claim(&answer, "worker-c").await.unwrap();
    let done = CrashCut::client()
        .resume_claim(s.store(), &claim, &tools.toolkit)
        .await
        .expect("the run finishes");
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "done: paid 40 (receipt 7) | looked #2");
    assert_eq!(tools.counts(), [1, 2], "nothing ran again");
    let outputs: Vec<(&str, bool)> = done
        .tool_calls
        .iter()
        .map(|c| (c.output.as_str(), c.is_error))
        .collect();
    assert_eq!(
        outputs,
        [
            ("hello Ada", false),
            ("paid 40 (receipt 7)", false),
            ("looked #2", false)
        ]
    );
    let stored = s.store().get(&taken.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Finished);
}
