//! A claimed run whose worker dies goes on from its last checkpoint in the worker that takes
//! it over.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use toolnexus::store::{RunState, StoreError};
use toolnexus::{
    Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role, RunStatus, ToolResult,
    Toolkit,
};

use super::{Make, make_subject};

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
