//! contract section 4, "Durable resume": a halted run persisted as JSON and resumed by a fresh
//! client with an answer.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use toolnexus::{
    Answer, Client, Error, FnTool, Message, PendingRun, Reply, Request, Role, RunResult, RunStatus,
    ScriptedModel, ToolResult, Toolkit, request::DeclineReason,
};
use toolnexus_tests::fixtures::{client_for, sys_client};
use toolnexus_tests::{Log, asker, echo, tool_results};

fn count(messages: &[Message], role: Role) -> usize {
    messages.iter().filter(|m| m.role == role).count()
}

fn tool_call_count(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.tool_calls.len()).sum()
}

/// Halts in "process 1" and returns the record as JSON text.
async fn halt(toolkit: &Toolkit, first: Reply) -> (RunResult, String) {
    let model = ScriptedModel::new([first]);
    let halted = sys_client(model.clone())
        .run("plan my trip", toolkit)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let json = PendingRun::try_from(&halted).unwrap().to_json();
    (halted, json)
}

/// [`halt`]'s record, read back from its JSON.
async fn halted_record(toolkit: &Toolkit, first: Reply) -> PendingRun {
    let (_, json) = halt(toolkit, first).await;
    PendingRun::from_json(&json).unwrap()
}

#[tokio::test]
async fn a_halted_run_resumes_in_a_fresh_client_from_its_json_record() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let record = halted_record(&toolkit, Reply::tool_call("ask", json!({"n": 1}))).await;
    assert_eq!(record.version(), 2);
    assert_eq!(record.pending().id, "ask-1");
    let model = ScriptedModel::new([Reply::text("Booked to Oslo.")]);
    let log = Log::default();
    let resumer = Client::builder(model.clone())
        .model_name("other-name")
        .on_event(log.sink())
        .build()
        .unwrap();
    let answer = record.pending().accept("Oslo");
    let done = resumer.resume(record, answer, &toolkit).await.unwrap();

    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Booked to Oslo.");
    assert_eq!(
        calls.get(),
        2,
        "the halted tool ran once more, with the answer"
    );
    assert_eq!(done.turns, 2);
    assert_eq!(done.model, "m", "the run keeps its model id");
    let sent = &model.requests()[0];
    assert_eq!(sent.model, "m");
    assert_eq!(
        count(&sent.messages, Role::User),
        1,
        "resume appends no user turn"
    );
    assert_eq!(count(&sent.messages, Role::System), 1);
    assert_eq!(
        count(&sent.messages, Role::Tool),
        tool_call_count(&sent.messages)
    );
    assert_eq!(
        tool_results(&sent.messages),
        [("call_1_0".to_owned(), "ask got \"Oslo\"".to_owned(), false)]
    );
    assert_eq!(done.tool_call_count, 1);
    assert_eq!(done.tool_calls[0].output, "ask got \"Oslo\"");
    assert_eq!(done.tool_calls[0].args, json!({"n": 1}));
    assert_eq!(log.types(), ["tool_result", "text", "done"]);
}

#[tokio::test]
async fn a_resume_with_a_wrong_id_errors_naming_both_and_changes_nothing() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let (_, json) = halt(&toolkit, Reply::tool_call("ask", json!({}))).await;
    let record = PendingRun::from_json(&json).unwrap();
    let model = ScriptedModel::new([Reply::text("never")]);
    let err = sys_client(model.clone())
        .resume(record, Answer::accept("sus-wrong", "Oslo"), &toolkit)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::AnswerMismatch { expected, got, .. } if expected == "ask-1" && got == "sus-wrong")
    );
    assert_eq!(
        err.to_string(),
        "answer id `sus-wrong` does not match the pending request `ask-1`; nothing was changed"
    );
    let record = err.into_pending_run().expect("the record is handed back");
    assert_eq!(record.to_json(), json, "the record is unchanged");
    assert_eq!(calls.get(), 1, "no tool ran");
    assert!(model.requests().is_empty(), "the model was not called");

    // the right answer still works afterwards
    let answer = record.pending().accept("Oslo");
    let done = sys_client(model.clone())
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
}

#[tokio::test]
async fn several_suspensions_of_one_turn_are_resolved_across_successive_resumes() {
    let (a, a_calls) = asker("a", "A?");
    let (b, b_calls) = asker("b", "B?");
    let (e, e_calls) = echo();
    let toolkit = Toolkit::builder().tool(a).tool(b).tool(e).build().unwrap();
    let (halted, json) = halt(
        &toolkit,
        Reply::tool_call("a", json!({}))
            .with_call("echo", json!({"text": "middle"}))
            .with_call("b", json!({})),
    )
    .await;
    assert_eq!(halted.pending.as_ref().unwrap().id, "a-1");
    let halted_json = serde_json::to_string(&halted.messages).unwrap();
    assert!(
        !halted_json.contains("\"tool_call_id\":\"call_2\""),
        "{halted_json}"
    );
    assert!(
        !halted_json.contains("\"tool_call_id\":\"call_1\""),
        "{halted_json}"
    );

    // first resume: a is answered; echo's finished result enters; b's suspension surfaces
    // with the request it was first made with, and b does not run again
    let record = PendingRun::from_json(&json).unwrap();
    let model = ScriptedModel::new([Reply::text("all set")]);
    let answer = record.pending().accept(1);
    let second = sys_client(model.clone())
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(second.status, RunStatus::Pending);
    assert_eq!(
        second.pending.as_ref().unwrap().id,
        "b-1",
        "the first request, kept"
    );
    assert_eq!(b_calls.get(), 1, "b ran once, before the first halt");
    assert_eq!(second.text, "B?");
    assert!(
        model.requests().is_empty(),
        "no model turn while the turn is unresolved"
    );
    assert_eq!(
        tool_results(&second.messages),
        [
            ("call_1_0".to_owned(), "a got 1".to_owned(), false),
            ("call_1_1".to_owned(), "middle".to_owned(), false),
            ("call_1_2".to_owned(), "B?".to_owned(), true),
        ]
    );

    // second resume: b is answered; the turn is complete and the model answers
    let record = PendingRun::from_json(&PendingRun::try_from(second).unwrap().to_json()).unwrap();
    let answer = record.pending().accept(2);
    let done = sys_client(model.clone())
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "all set");
    let sent = &model.requests()[0].messages;
    assert_eq!(count(sent, Role::Tool), tool_call_count(sent));
    assert_eq!(count(sent, Role::Tool), 3);
    assert_eq!(count(sent, Role::User), 1);
    assert_eq!(
        tool_results(sent),
        [
            ("call_1_0".to_owned(), "a got 1".to_owned(), false),
            ("call_1_1".to_owned(), "middle".to_owned(), false),
            ("call_1_2".to_owned(), "b got 2".to_owned(), false),
        ]
    );
    assert_eq!(done.tool_call_count, 3);
    let outputs: Vec<&str> = done.tool_calls.iter().map(|c| c.output.as_str()).collect();
    assert_eq!(outputs, ["a got 1", "middle", "b got 2"]);
    assert_eq!(
        (a_calls.get(), e_calls.get()),
        (2, 1),
        "echo ran once, not again on resume"
    );
    assert_eq!(
        b_calls.get(),
        2,
        "b: first run, then the retry with its own answer"
    );
}

#[tokio::test]
async fn a_declined_or_expired_resume_feeds_back_declined_and_does_not_retry() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let (_, json) = halt(&toolkit, Reply::tool_call("ask", json!({}))).await;
    let record = PendingRun::from_json(&json).unwrap();
    let model = ScriptedModel::new([Reply::text("ok, not booking")]);
    let answer = record.pending().decline(DeclineReason::Cancelled);
    let done = sys_client(model.clone())
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(calls.get(), 1);
    assert_eq!(
        tool_results(&done.messages),
        [(
            "call_1_0".to_owned(),
            "declined/expired: Which city?".to_owned(),
            true
        )]
    );

    let expiring = FnTool::builder("late")
        .description("Asks with a deadline long gone.")
        .handler(|_, ctx| async move {
            if ctx.accepted().is_some() {
                return ToolResult::success("retried");
            }
            ToolResult::suspended(
                Request::input("Still there?")
                    .with_id("r-late")
                    .with_expires_at(UNIX_EPOCH + Duration::from_secs(1_600_000_000)),
            )
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(expiring).build().unwrap();
    let record = halted_record(&toolkit, Reply::tool_call("late", json!({}))).await;
    assert_eq!(
        record.pending().expires_at.as_deref(),
        Some("2020-09-13T12:26:40Z")
    );
    let model = ScriptedModel::new([Reply::text("too late")]);
    let answer = record.pending().accept("yes");
    let done = sys_client(model.clone())
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(
        tool_results(&done.messages),
        [(
            "call_1_0".to_owned(),
            "declined/expired: Still there?".to_owned(),
            true
        )]
    );
}

#[tokio::test]
async fn a_resuming_client_with_wait_for_answers_later_suspensions_in_process() {
    let (a, _) = asker("a", "A?");
    let (b, _) = asker("b", "B?");
    let toolkit = Toolkit::builder().tool(a).tool(b).build().unwrap();
    let (_, json) = halt(
        &toolkit,
        Reply::tool_call("a", json!({})).with_call("b", json!({})),
    )
    .await;
    let record = PendingRun::from_json(&json).unwrap();
    let model = ScriptedModel::new([Reply::text("fine")]);
    let resumer = client_for(model.clone())
        .wait_for(|req: Request| async move { req.accept("in-process") })
        .build()
        .unwrap();
    let answer = record.pending().accept("durable");
    let done = resumer.resume(record, answer, &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(
        tool_results(&done.messages),
        [
            ("call_1_0".to_owned(), "a got \"durable\"".to_owned(), false),
            (
                "call_1_1".to_owned(),
                "b got \"in-process\"".to_owned(),
                false
            ),
        ]
    );
}

#[tokio::test]
async fn the_record_is_versioned_json_and_bad_records_are_persist_errors() {
    let ask = FnTool::builder("ask")
        .description("Asks.")
        .handler(|_, _| async {
            ToolResult::suspended(Request::input("Which city?").with_id("r1"))
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let (halted, json) = halt(&toolkit, Reply::tool_call("ask", json!({"x": 1}))).await;
    let record = PendingRun::from_json(&json).unwrap();
    assert!(record.run_id().starts_with("run-"), "{}", record.run_id());
    assert_eq!(record.run_id(), halted.run_id);
    assert_eq!(record.fingerprint().len(), 64);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json).unwrap(),
        json!({
            "version": 2,
            "runId": halted.run_id,
            "model": "m",
            "pending": {"id": "r1", "kind": "input", "prompt": "Which city?"},
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "plan my trip"},
                {"role": "assistant", "tool_calls": [{"id": "call_1_0", "name": "ask", "arguments": {"x": 1}}]},
                {"role": "tool", "content": "Which city?", "tool_call_id": "call_1_0", "isError": true}
            ],
            "toolCalls": [{"name": "ask", "args": {"x": 1}, "output": "Input required: Which city?", "isError": true,
                           "metadata": {"pending": {"id": "r1", "kind": "input", "prompt": "Which city?"}}}],
            "usage": {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0},
            "turns": 1,
            "halted": {"callIndex": 0, "fingerprint": record.fingerprint(), "deferred": []}
        })
    );

    let v3 = json.replacen("\"version\":2", "\"version\":3", 1);
    assert_eq!(
        PendingRun::from_json(&v3).unwrap_err().to_string(),
        "invalid persisted run: record version 3 is not supported: this release reads version 2"
    );
    assert_eq!(
        PendingRun::from_json("{}").unwrap_err().to_string(),
        "invalid persisted run: the record has no `version`: it was not written by `PendingRun::to_json`"
    );
    let broken = json.replacen("\"callIndex\":0", "\"callIndex\":3", 1);
    assert_eq!(
        PendingRun::from_json(&broken).unwrap_err().to_string(),
        "invalid persisted run: `halted.callIndex` is 3 but the halted turn (`messages[2]`) has 1 tool calls"
    );

    // a RunResult read back from JSON has no resume state
    let reread: RunResult = serde_json::from_str(&serde_json::to_string(&halted).unwrap()).unwrap();
    assert_eq!(reread, halted);
    assert!(matches!(
        PendingRun::try_from(&reread).map_err(Error::from),
        Err(Error::Persist(_))
    ));

    // a finished run is not pending
    let done = client_for(ScriptedModel::new([Reply::text("hi")]))
        .build()
        .unwrap()
        .run("hello", &toolkit)
        .await
        .unwrap();
    assert_eq!(
        PendingRun::try_from(done).unwrap_err().to_string(),
        "the run is not pending (status `done`): there is nothing to resume"
    );
}

#[tokio::test]
async fn a_streamed_resume_emits_the_rest_of_the_run_and_no_second_pending_event() {
    let (ask, _) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let record = halted_record(&toolkit, Reply::tool_call("ask", json!({}))).await;
    let model = ScriptedModel::new([Reply::text("Booked to Oslo.")]);
    let log = Log::default();
    let answer = record.pending().accept("Oslo");
    let done = sys_client(model.clone())
        .stream_resume(record, answer, &toolkit, log.sink())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    let events = log.all();
    assert_eq!(
        events[..4],
        [
            json!({"type":"tool_result","id":"call_1_0","name":"ask","output":"ask got \"Oslo\"","isError":false}),
            json!({"type":"text","delta":"Booked "}),
            json!({"type":"text","delta":"to "}),
            json!({"type":"text","delta":"Oslo."}),
        ]
    );
    assert_eq!(log.types()[4..], ["done"]);
}
