//! A claimed run whose worker dies goes on from its last checkpoint in the worker that takes
//! it over; a run that crashes every worker that resumes it is given up after the worker's
//! `max_attempts`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use toolnexus::store::{Claim, RunEventKind, RunState, StoreError};
use toolnexus::worker::Worker;
use toolnexus::{
    CancellationToken, Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role,
    RunStatus, ToolResult, Toolkit,
};

use super::{Agent, Make, make_subject};

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

/// A run whose resume crashes its worker every time (claimed, then nothing: no outcome, no
/// failure, the lease runs out) is not taken over without end. Each claim of the answer is an
/// attempt (`Claim::attempt`, `Claim::crashes`), a takeover's history event carries its
/// number, a release hands an attempt back uncounted; and a worker with `max_attempts(3)`
/// that takes the run over after three crashes does not resume it: it ends `Failed`, with
/// the reason "crashed its worker 3 times". Claims come through `claim_next` and
/// `take_over`, from several handles.
#[allow(clippy::too_many_lines)] // one run's life, read top to bottom
pub async fn a_run_that_keeps_crashing_its_worker_is_given_up(make: Make) {
    use RunEventKind::{Answered, Claimed, Failed, Released, Requested, TakenOver};
    let lease = Duration::from_millis(200);
    let lapse = || tokio::time::sleep(lease + Duration::from_millis(150));
    let s = subject!(make, lease);
    let handle = |i: usize| Arc::clone(&s.handles[i % s.handles.len()]);
    let record = Agent::once().halt().await;
    let request = record.pending().clone();
    let run_id = s.store().park(record).await.unwrap().run_id;
    s.store()
        .submit(&request.accept("Ada"), "desk")
        .await
        .unwrap();
    let counts = |c: &Claim| (c.taken_over, c.attempt(), c.crashes, c.failures);

    // attempt 1 claims the answer, and its worker dies
    let first = handle(0).claim_next("crashing-1").await.unwrap().unwrap();
    assert_eq!(counts(&first), (false, 1, 0, 0));
    lapse().await;
    // attempt 2 takes it over, then hands it back at shutdown: not an attempt
    let second = handle(1).claim_next("crashing-2").await.unwrap().unwrap();
    assert_eq!(counts(&second), (true, 2, 1, 0));
    handle(1).release(&second).await.unwrap();
    let third = handle(2).claim_next("crashing-3").await.unwrap().unwrap();
    assert_eq!(counts(&third), (false, 2, 1, 0), "a release is no crash");
    lapse().await;
    // attempt 3: taken over after the second crash, and its worker dies too
    let fourth = handle(0).take_over("crashing-4").await.unwrap().unwrap();
    assert_eq!(counts(&fourth), (true, 3, 2, 0));
    lapse().await;

    // a worker allowing 3 attempts takes the run over after the third crash, and gives it up
    let calls = Arc::new(AtomicU32::new(0));
    let client = {
        let calls = Arc::clone(&calls);
        Client::builder(FnModel::new(move |_: ModelRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Reply::text("resumed") }
        }))
        .model_name("conformance")
        .build()
        .unwrap()
    };
    let worker = Worker::builder(handle(1), client, Agent::toolkit())
        .name("w-limit")
        .poll(Duration::from_millis(50))
        .max_attempts(3)
        .build();
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (worker, stop) = (worker.clone(), stop.clone());
        async move { worker.run(stop.cancelled_owned()).await }
    });
    let run = s
        .store()
        .wait_finished(&run_id, Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the run is given up");
    stop.cancel();
    let stats = running.await.unwrap();

    let reason = "the run crashed its worker 3 times (each resume ended with no outcome: the \
                  worker process died, or stalled past its lease); given up after 3 attempts";
    assert_eq!(run.info.state, RunState::Failed);
    assert_eq!(run.info.outcome(), Some("failed"));
    assert_eq!(run.info.failures(), [reason]);
    assert!(run.result.is_none());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the model was never called"
    );
    assert_eq!((stats.taken_over, stats.gave_up), (1, 1), "{stats:?}");
    assert_eq!((stats.finished, stats.failed), (0, 0), "{stats:?}");
    let events: Vec<_> = run
        .info
        .history
        .iter()
        .map(|e| (e.event, e.by.as_deref(), e.attempt))
        .collect();
    assert_eq!(
        events,
        [
            (Requested, None, None),
            (Answered, Some("desk"), None),
            (Claimed, Some("crashing-1"), None),
            (TakenOver, Some("crashing-2"), Some(2)),
            (Released, Some("crashing-2"), None),
            (Claimed, Some("crashing-3"), None),
            (TakenOver, Some("crashing-4"), Some(3)),
            (TakenOver, Some("w-limit"), Some(4)),
            // the takeover that gave it up is no attempt: 3 were made
            (Failed, Some("w-limit"), Some(3)),
        ]
    );
    assert_eq!(run.info.attempts, 3, "never more than the maximum");
    // nothing takes it over again
    lapse().await;
    assert!(s.store().claim_next("another").await.unwrap().is_none());
    assert!(s.store().take_over("another").await.unwrap().is_none());
    assert_eq!(s.store().waiting().await.unwrap(), 0);
}
