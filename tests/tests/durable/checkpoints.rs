//! CONTRACT section 4, checkpoints: once a tool result has entered a run's state, an error that
//! ends the run carries that state ([`Error::Interrupted`]); `resume_checkpoint` goes on from it
//! with the next model call and runs none of the recorded tools again. `ctx.idempotency_key()`
//! names a call the same way on every execution of it, in any process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolnexus::{
    Answer, CancellationToken, Client, Error, FnModel, FnTool, PendingRun, Reply, Role, RunResult,
    RunStatus, ScriptedModel, ToolResult, Toolkit,
};
use toolnexus_tests::{Calls, asker};

fn client(replies: Vec<Reply>) -> Client {
    Client::builder(ScriptedModel::new(replies))
        .model_name("m")
        .build()
        .unwrap()
}

/// A tool that counts its runs and answers `sent <n>`.
fn sender() -> (FnTool, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let tool = FnTool::builder("send")
        .description("Sends.")
        .handler(move |_args, _ctx| {
            let n = seen.bump();
            async move { ToolResult::success(format!("sent {n}")) }
        })
        .build()
        .unwrap();
    (tool, calls)
}

/// The checkpoint the error carries, through its JSON (what a host persists).
fn persisted(err: Error) -> RunResult {
    let run = err
        .into_halted_run()
        .expect("the error carries the checkpoint");
    serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap()
}

/// Why resuming `run` as a checkpoint is refused: the message of its [`Error::Persist`].
async fn refusal(run: RunResult, toolkit: &Toolkit) -> String {
    let err = client(vec![Reply::text("x")])
        .resume_checkpoint(run, toolkit)
        .await
        .unwrap_err();
    match err {
        Error::Persist(message) => message,
        other => panic!("expected Error::Persist, got {other:?}"),
    }
}

fn tool_results(run: &RunResult) -> Vec<(String, String)> {
    run.messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.clone().unwrap_or_default(),
                m.content.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_provider_failing_after_an_approved_tool_leaves_a_checkpoint_that_does_not_rerun_it() {
    let (ask, calls) = asker("ask", "Send it?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let halted = client(vec![Reply::tool_call("ask", json!({}))])
        .run("go", &toolkit)
        .await
        .unwrap();
    let record = PendingRun::try_from(&halted).unwrap();
    let answer = record.pending().accept("yes");
    assert_eq!(calls.get(), 1, "the suspension");

    // the approved tool runs, then the next model call fails (the script has nothing left)
    let err = client(vec![])
        .resume(record, answer, &toolkit)
        .await
        .unwrap_err();
    assert_eq!(calls.get(), 2, "the approved retry ran");
    let Error::Interrupted { error, .. } = &err else {
        panic!("expected the checkpoint, got {err:?}");
    };
    assert!(matches!(**error, Error::Model(_)), "{error:?}");
    let checkpoint = persisted(err);
    assert_eq!(checkpoint.status, RunStatus::Incomplete);
    assert_eq!(checkpoint.run_id, halted.run_id);
    assert_eq!(checkpoint.turns, 1);
    assert_eq!(
        tool_results(&checkpoint),
        [("call_1_0".to_owned(), "ask got \"yes\"".to_owned())]
    );
    assert_eq!(checkpoint.tool_calls.len(), 1);
    assert_eq!(checkpoint.tool_calls[0].output, "ask got \"yes\"");

    // another process: a fresh client, the same toolkit
    let done = client(vec![Reply::text("sent")])
        .resume_checkpoint(checkpoint.clone(), &toolkit)
        .await
        .unwrap();
    assert_eq!(calls.get(), 2, "the recorded tool did not run again");
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "sent");
    assert_eq!(done.run_id, halted.run_id);
    assert_eq!(done.turns, 2);
    assert_eq!(done.messages.len(), checkpoint.messages.len() + 1);
    assert_eq!(
        done.messages[..checkpoint.messages.len()],
        checkpoint.messages[..]
    );
    assert_eq!(done.tool_calls, checkpoint.tool_calls);
}

#[tokio::test]
async fn a_wait_for_run_whose_provider_fails_after_a_tool_ran_resumes_from_its_checkpoint() {
    let (ask, asked) = asker("ask", "Send it?");
    let (send, runs) = sender();
    let toolkit = Toolkit::builder().tool(ask).tool(send).build().unwrap();
    let answered = Arc::new(Mutex::new(Vec::new()));
    let log = answered.clone();
    let flaky = Client::builder(ScriptedModel::new([
        Reply::tool_call("ask", json!({})),
        Reply::tool_call("send", json!({})),
    ]))
    .model_name("m")
    .wait_for(move |request| {
        log.lock().unwrap().push(request.id.clone());
        async move { request.accept("yes") }
    })
    .build()
    .unwrap();
    let err = flaky.run("go", &toolkit).await.unwrap_err();
    assert_eq!(*answered.lock().unwrap(), ["ask-1"]);
    assert_eq!((asked.get(), runs.get()), (2, 1));
    let checkpoint = persisted(err);
    assert_eq!(checkpoint.turns, 2);
    assert_eq!(
        tool_results(&checkpoint),
        [
            ("call_1_0".to_owned(), "ask got \"yes\"".to_owned()),
            ("call_2_0".to_owned(), "sent 1".to_owned())
        ]
    );

    let done = client(vec![Reply::text("done")])
        .resume_checkpoint(checkpoint, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!((asked.get(), runs.get()), (2, 1), "nothing ran again");
    assert_eq!(
        *answered.lock().unwrap(),
        ["ask-1"],
        "nothing was asked again"
    );
    assert_eq!(done.tool_calls.len(), 2);
}

#[tokio::test]
async fn a_timeout_or_cancellation_after_a_tool_ran_carries_the_checkpoint() {
    let (send, runs) = sender();
    let toolkit = Toolkit::builder().tool(send).build().unwrap();
    // the first turn calls the tool; the second model call never returns
    let hanging = || {
        let turn = Calls::default();
        FnModel::new(move |_| {
            let n = turn.bump();
            async move {
                if n > 1 {
                    std::future::pending::<()>().await;
                }
                Reply::tool_call("send", json!({}))
            }
        })
    };
    let timed = Client::builder(hanging())
        .model_name("m")
        .timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let err = timed.run("go", &toolkit).await.unwrap_err();
    assert!(
        matches!(&err, Error::Interrupted { error, .. } if matches!(**error, Error::Timeout(_))),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the run was interrupted: the run timed out after 50ms"
    );
    let checkpoint = persisted(err);
    assert_eq!(
        tool_results(&checkpoint),
        [("call_1_0".to_owned(), "sent 1".to_owned())]
    );

    let token = CancellationToken::new();
    let cancelled = Client::builder(hanging())
        .model_name("m")
        .cancellation(token.clone())
        .build()
        .unwrap();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let err = cancelled.run("go", &toolkit).await.unwrap_err();
    cancel.await.unwrap();
    assert!(
        matches!(&err, Error::Interrupted { error, .. } if matches!(**error, Error::Cancelled)),
        "{err:?}"
    );
    assert_eq!(runs.get(), 2, "one run each");
    let second = persisted(err);
    let done = client(vec![Reply::text("ok")])
        .resume_checkpoint(second, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(runs.get(), 2);
}

#[tokio::test]
async fn an_error_before_any_tool_ran_carries_nothing() {
    let toolkit = Toolkit::new();
    let err = client(vec![]).run("go", &toolkit).await.unwrap_err();
    assert!(matches!(err, Error::Model(_)), "{err:?}");
    assert!(err.halted_run().is_none());
}

#[tokio::test]
async fn only_a_checkpoint_is_accepted_and_nothing_runs_otherwise() {
    let (send, runs) = sender();
    let (ask, _) = asker("ask", "Sure?");
    let toolkit = Toolkit::builder().tool(send).tool(ask).build().unwrap();

    let done = client(vec![Reply::text("hi")])
        .run("go", &toolkit)
        .await
        .unwrap();
    assert_eq!(
        refusal(done, &toolkit).await,
        "`status` is `done`: a checkpoint is `incomplete`"
    );

    let halted = client(vec![Reply::tool_call("ask", json!({}))])
        .run("go", &toolkit)
        .await
        .unwrap();
    assert_eq!(
        refusal(halted, &toolkit).await,
        "`status` is `pending`: a halted run resumes with its answer (`Client::resume`)"
    );

    let checkpoint = persisted(
        client(vec![Reply::tool_call("send", json!({}))])
            .run("go", &toolkit)
            .await
            .unwrap_err(),
    );
    assert_eq!(runs.get(), 1);

    // a result removed: the call has none
    let mut edited = checkpoint.clone();
    edited.messages.pop();
    assert_eq!(
        refusal(edited, &toolkit).await,
        "the last turn's call \"call_1_0\" has no result"
    );

    // a result duplicated
    let mut edited = checkpoint.clone();
    let last = edited.messages.last().unwrap().clone();
    edited.messages.push(last);
    assert_eq!(
        refusal(edited, &toolkit).await,
        "`messages[3]` is a second result for \"call_1_0\""
    );

    // a pending request slipped in
    let mut edited = checkpoint.clone();
    edited.pending = Some(Box::new(toolnexus::Request::input("?").with_id("r1")));
    assert_eq!(
        refusal(edited, &toolkit).await,
        "`pending` is \"r1\" in an incomplete run; a checkpoint has no pending request"
    );
    assert_eq!(runs.get(), 1, "nothing ran on a refused checkpoint");

    let done = client(vec![Reply::text("ok")])
        .resume_checkpoint(checkpoint, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(runs.get(), 1);
}

/// A tool that suspends once, then succeeds, logging its idempotency key each time.
fn keyed(name: &str, keys: Arc<Mutex<Vec<String>>>) -> FnTool {
    let tool = name.to_owned();
    FnTool::builder(name)
        .description("Keyed.")
        .handler(move |_args, ctx| {
            keys.lock()
                .unwrap()
                .push(ctx.idempotency_key().expect("set by the loop").to_owned());
            let reply = match ctx.accepted() {
                Some(_) => ToolResult::success(format!("{tool} done")),
                None => ToolResult::suspended(toolnexus::Request::input("Go?")),
            };
            async move { reply }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_idempotency_key_is_stable_per_call_across_answers_and_processes() {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let toolkit = Toolkit::builder()
        .tool(keyed("a", keys.clone()))
        .tool(keyed("b", keys.clone()))
        .build()
        .unwrap();

    // in-process: the retry after the answer sees the key of the first execution
    let waiting = Client::builder(ScriptedModel::new([
        Reply::tool_call("a", json!({})).with_call("b", json!({})),
        Reply::text("done"),
    ]))
    .model_name("m")
    .wait_for(|request| async move { request.accept(true) })
    .build()
    .unwrap();
    let done = waiting.run("go", &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    let seen = std::mem::take(&mut *keys.lock().unwrap());
    // a, b suspend (concurrently, in call order), then a's and b's retries
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(seen[0], seen[2], "a: the same key on its retry");
    assert_eq!(seen[1], seen[3], "b: the same key on its retry");
    assert_ne!(seen[0], seen[1], "two calls, two keys");
    for key in &seen {
        assert_eq!(key.len(), 64);
        assert!(
            key.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }

    // durable: the resume in another process (a fresh client, the record through JSON)
    let halted = client(vec![Reply::tool_call("a", json!({}))])
        .run("go", &toolkit)
        .await
        .unwrap();
    let json = PendingRun::try_from(&halted).unwrap().to_json();
    let record = PendingRun::from_json(&json).unwrap();
    let answer: Answer = record.pending().accept(true);
    let done = client(vec![Reply::text("done")])
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    let seen = std::mem::take(&mut *keys.lock().unwrap());
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1], "the same key after the resume");
    // a resume of a copy of the record (the crash window) runs the call with the same key
    let copy = PendingRun::from_json(&json).unwrap();
    let answer = copy.pending().accept(true);
    client(vec![Reply::text("done")])
        .resume(copy, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(*keys.lock().unwrap(), [seen[0].clone()]);

    // another run, the same call id: another key
    let other = client(vec![Reply::tool_call("a", json!({}))])
        .run("go", &toolkit)
        .await
        .unwrap();
    assert_ne!(other.run_id, halted.run_id);
    assert_ne!(keys.lock().unwrap()[1], seen[0]);
}
