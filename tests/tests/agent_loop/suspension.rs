//! contract section 3, "Suspension, exactly": the loop with and without `wait_for`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use toolnexus::{
    Answer, FnTool, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
    client::BeforeTool, client::Metric, request::DeclineReason,
};
use toolnexus_tests::fixtures::client_for;
use toolnexus_tests::{Log, asker, echo, stubborn, tool_results};

#[tokio::test]
async fn pending_event_comes_before_wait_for_and_ok_retries_once_with_the_answer() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("ask", json!({"trip": 1})),
        Reply::text("Booked."),
    ]);
    let log = Log::default();
    let marker = log.clone();
    let hook_calls = Arc::new(Mutex::new(Vec::new()));
    let hook_seen = Arc::clone(&hook_calls);
    let client = client_for(model.clone())
        .on_event(log.sink())
        .before_tool(move |call| {
            hook_seen.lock().unwrap().push(call.name.clone());
            async { BeforeTool::Continue }
        })
        .wait_for(move |req: Request| {
            marker.push(json!(format!("wait_for {}", req.id)));
            async move { req.accept("Oslo") }
        })
        .build()
        .unwrap();

    let result = client.run("Book a trip", &toolkit).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "Booked.");
    assert_eq!(calls.get(), 2, "the tool runs once, then exactly once more");
    assert_eq!(
        *hook_calls.lock().unwrap(),
        ["ask"],
        "before_tool is not consulted on the retry"
    );
    assert_eq!(
        log.all(),
        vec![
            json!({"type":"tool_call","id":"call_1_0","name":"ask","args":{"trip":1}}),
            json!({"type":"pending","request":{"id":"ask-1","kind":"input","prompt":"Which city?"}}),
            json!("wait_for ask-1"),
            json!({"type":"tool_result","id":"call_1_0","name":"ask","output":"ask got \"Oslo\"","isError":false}),
            json!({"type":"text","delta":"Booked."}),
            log.all()[5].clone(),
        ]
    );
    assert_eq!(log.types()[5], "done");
    let seen = model.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        tool_results(&seen[1].messages),
        [("call_1_0".to_owned(), "ask got \"Oslo\"".to_owned(), false)]
    );
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tool_calls[0].args, json!({"trip": 1}));
}

#[tokio::test]
async fn a_retry_that_suspends_again_is_unresolved_and_never_loops() {
    let (tool, calls) = stubborn("approve", "Ship it?");
    let toolkit = Toolkit::builder().tool(tool).build().unwrap();
    let model = ScriptedModel::new([Reply::tool_call("approve", json!({})), Reply::text("ok")]);
    let asked = Arc::new(Mutex::new(0));
    let count = Arc::clone(&asked);
    let client = client_for(model.clone())
        .wait_for(move |req: Request| {
            *count.lock().unwrap() += 1;
            async move { req.accept(json!(true)) }
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(calls.get(), 2);
    assert_eq!(*asked.lock().unwrap(), 1);
    assert_eq!(
        tool_results(&result.messages),
        [(
            "call_1_0".to_owned(),
            "unresolved: Ship it?".to_owned(),
            true
        )]
    );
    assert_eq!(result.tool_calls[0].output, "unresolved: Ship it?");
    assert!(result.tool_calls[0].is_error);
}

#[tokio::test]
async fn a_declined_answer_feeds_back_declined_and_the_run_goes_on() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("ask", json!({})),
        Reply::text("Understood."),
    ]);
    let client = client_for(model.clone())
        .wait_for(|req: Request| async move { req.decline(DeclineReason::Declined) })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(calls.get(), 1, "a declined request is not retried");
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "Understood.");
    assert_eq!(
        tool_results(&model.requests()[1].messages),
        [(
            "call_1_0".to_owned(),
            "declined/expired: Which city?".to_owned(),
            true
        )]
    );
}

#[tokio::test]
async fn an_answer_arriving_after_expires_at_counts_as_declined() {
    let calls = toolnexus_tests::Calls::default();
    let seen = calls.clone();
    let tool = FnTool::builder("ask")
        .description("Asks with a deadline.")
        .handler(move |_, ctx| {
            let _ = seen.clone();
            async move {
                match ctx.accepted() {
                    Some(_) => ToolResult::success("retried"),
                    None => ToolResult::suspended(
                        Request::input("Quick, which city?")
                            .with_id("r-exp")
                            .with_expires_at(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
                    ),
                }
            }
        })
        .build()
        .unwrap();
    let executions = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&executions);
    let toolkit = Toolkit::builder()
        .tool(toolnexus::tool::wrap(tool, move |inner, args, ctx| {
            *counted.lock().unwrap() += 1;
            async move { inner.execute(args, &ctx).await }
        }))
        .build()
        .unwrap();
    let model = ScriptedModel::new([Reply::tool_call("ask", json!({})), Reply::text("late")]);
    let client = client_for(model.clone())
        .wait_for(|req: Request| async move { req.accept("Oslo") })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(
        *executions.lock().unwrap(),
        1,
        "an expired request is not retried"
    );
    assert_eq!(
        tool_results(&result.messages),
        [(
            "call_1_0".to_owned(),
            "declined/expired: Quick, which city?".to_owned(),
            true
        )]
    );
}

#[tokio::test]
async fn several_suspensions_in_one_turn_are_resolved_one_by_one_in_call_order() {
    let (a, a_calls) = asker("a", "A?");
    let (b, b_calls) = asker("b", "B?");
    let (e, e_calls) = echo();
    let toolkit = Toolkit::builder().tool(a).tool(b).tool(e).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("b", json!({}))
            .with_call("echo", json!({"text": "hi"}))
            .with_call("a", json!({})),
        Reply::text("done"),
    ]);
    let order = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&order);
    let client = client_for(model.clone())
        .wait_for(move |req: Request| {
            seen.lock().unwrap().push(req.id.clone());
            async move { req.accept(req.prompt.clone()) }
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(*order.lock().unwrap(), ["b-1", "a-1"]);
    assert_eq!((a_calls.get(), b_calls.get(), e_calls.get()), (2, 2, 1));
    assert_eq!(
        tool_results(&model.requests()[1].messages),
        [
            ("call_1_0".to_owned(), "b got \"B?\"".to_owned(), false),
            ("call_1_1".to_owned(), "hi".to_owned(), false),
            ("call_1_2".to_owned(), "a got \"A?\"".to_owned(), false),
        ]
    );
    assert_eq!(result.tool_call_count, 3);
}

#[tokio::test]
async fn without_wait_for_the_run_halts_on_the_first_suspension_in_call_order() {
    let (a, _) = asker("a", "First question?");
    let (b, _) = asker("b", "Second question?");
    let (e, echo_calls) = echo();
    let toolkit = Toolkit::builder().tool(a).tool(b).tool(e).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("echo", json!({"text": "before"}))
            .with_call_id("id-a", "a", json!({}))
            .with_call_id("id-b", "b", json!({}))
            .with_call_id("id-e", "echo", json!({"text": "after"})),
        Reply::text("never asked"),
    ]);
    let log = Log::default();
    let client = client_for(model.clone())
        .on_event(log.sink())
        .build()
        .unwrap();

    let result = client.run("go", &toolkit).await.unwrap();

    assert_eq!(
        model.requests().len(),
        1,
        "exactly one model round trip before the halt"
    );
    assert_eq!(result.status, RunStatus::Pending);
    assert_eq!(result.text, "First question?");
    let pending = result.pending.clone().unwrap();
    assert_eq!(
        (pending.id.as_str(), pending.kind.as_str()),
        ("a-1", "input")
    );
    assert_eq!(echo_calls.get(), 2, "calls of the turn ran concurrently");
    assert_eq!(
        tool_results(&result.messages),
        [
            ("call_1_0".to_owned(), "before".to_owned(), false),
            ("id-a".to_owned(), "First question?".to_owned(), true),
        ]
    );
    let json = serde_json::to_string(&result.messages).unwrap();
    assert!(!json.contains("\"tool_call_id\":\"id-b\""), "{json}");
    assert!(!json.contains("\"tool_call_id\":\"id-e\""), "{json}");
    assert_eq!(
        log.types(),
        [
            "tool_call",
            "tool_call",
            "tool_call",
            "tool_call",
            "tool_result",
            "pending",
            "done"
        ]
    );
    assert_eq!(
        log.all()[4],
        json!({"type":"tool_result","id":"call_1_0","name":"echo","output":"before","isError":false})
    );
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({
            "runId": result.run_id,
            "text": "First question?",
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "tool_calls": [
                    {"id": "call_1_0", "name": "echo", "arguments": {"text": "before"}},
                    {"id": "id-a", "name": "a", "arguments": {}},
                    {"id": "id-b", "name": "b", "arguments": {}},
                    {"id": "id-e", "name": "echo", "arguments": {"text": "after"}}
                ]},
                {"role": "tool", "content": "before", "tool_call_id": "call_1_0"},
                {"role": "tool", "content": "First question?", "tool_call_id": "id-a", "isError": true}
            ],
            "toolCalls": [
                {"name": "echo", "args": {"text": "before"}, "output": "before", "isError": false},
                {"name": "a", "args": {}, "output": "Input required: First question?", "isError": true,
                 "metadata": {"pending": {"id": "a-1", "kind": "input", "prompt": "First question?"}}}
            ],
            "toolCallCount": 2,
            "turns": 1,
            "usage": {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0},
            "model": "m",
            "status": "pending",
            "pending": {"id": "a-1", "kind": "input", "prompt": "First question?"}
        })
    );
}

#[tokio::test]
async fn the_halt_is_on_the_first_in_call_order_not_the_first_to_finish() {
    let slow = FnTool::builder("slow")
        .description("Asks, slowly.")
        .handler(|_, _| async {
            tokio::time::sleep(Duration::from_millis(60)).await;
            ToolResult::suspended(Request::input("Slow?").with_id("slow-1"))
        })
        .build()
        .unwrap();
    let (fast, _) = asker("fast", "Fast?");
    let toolkit = Toolkit::builder().tool(slow).tool(fast).build().unwrap();
    let model =
        ScriptedModel::new([Reply::tool_call("slow", json!({})).with_call("fast", json!({}))]);
    let client = client_for(model).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.pending.unwrap().id, "slow-1");
}

#[tokio::test]
async fn a_suspension_from_before_tool_is_handled_like_the_tools_and_ok_runs_the_real_tool() {
    let seen_answer = Arc::new(Mutex::new(None));
    let record = Arc::clone(&seen_answer);
    let delete = FnTool::builder("delete")
        .description("Deletes.")
        .handler(move |_, ctx| {
            *record.lock().unwrap() = ctx.answer().map(|a| a.id.clone());
            async { "deleted" }
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(delete).build().unwrap();
    let hook_runs = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&hook_runs);
    let guard = move |call: toolnexus::model::ToolCall| {
        *counted.lock().unwrap() += 1;
        async move {
            BeforeTool::Return(ToolResult::suspended(
                Request::approval(format!("Run {}?", call.name)).with_id("gate-1"),
            ))
        }
    };
    // with wait_for: approved, the real tool runs with the answer
    let model = ScriptedModel::new([Reply::tool_call("delete", json!({})), Reply::text("ok")]);
    let client = client_for(model)
        .before_tool(guard.clone())
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.tool_calls[0].output, "deleted");
    assert_eq!(seen_answer.lock().unwrap().as_deref(), Some("gate-1"));
    assert_eq!(*hook_runs.lock().unwrap(), 1);

    // without wait_for: the run halts on it, and the tool has not run
    *seen_answer.lock().unwrap() = None;
    let model = ScriptedModel::new([Reply::tool_call("delete", json!({}))]);
    let client = client_for(model).before_tool(guard).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Pending);
    assert_eq!(result.text, "Run delete?");
    assert_eq!(*seen_answer.lock().unwrap(), None);
}

#[tokio::test]
async fn a_suspended_call_reports_a_pending_metric_and_after_tool_sees_only_the_resolved_result() {
    let (ask, _) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let model = ScriptedModel::new([Reply::tool_call("ask", json!({})), Reply::text("ok")]);
    let metrics = Arc::new(Mutex::new(Vec::new()));
    let m = Arc::clone(&metrics);
    let after = Arc::new(Mutex::new(Vec::new()));
    let a = Arc::clone(&after);
    let client = client_for(model)
        .on_metric(move |metric| {
            if let Metric::Tool {
                name,
                is_error,
                pending,
                ..
            } = metric
            {
                m.lock().unwrap().push((name.clone(), *is_error, *pending));
            }
        })
        .after_tool(move |_call, result| {
            a.lock()
                .unwrap()
                .push((result.output.clone(), result.is_pending()));
            ToolResult {
                output: format!("[{}]", result.output),
                ..result
            }
        })
        .wait_for(|req: Request| async move { req.accept("Rome") })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(
        *metrics.lock().unwrap(),
        [
            ("ask".to_owned(), false, true),
            ("ask".to_owned(), false, false)
        ]
    );
    assert_eq!(
        *after.lock().unwrap(),
        [("ask got \"Rome\"".to_owned(), false)]
    );
    assert_eq!(result.tool_calls[0].output, "[ask got \"Rome\"]");

    // halted: after_tool is never called, the metric still says pending
    let metrics2 = Arc::new(Mutex::new(Vec::new()));
    let m2 = Arc::clone(&metrics2);
    let after2 = Arc::new(Mutex::new(0));
    let a2 = Arc::clone(&after2);
    let client = client_for(ScriptedModel::new([Reply::tool_call("ask", json!({}))]))
        .on_metric(move |metric| {
            if let Metric::Tool {
                is_error, pending, ..
            } = metric
            {
                m2.lock().unwrap().push((*is_error, *pending));
            }
        })
        .after_tool(move |_, r| {
            *a2.lock().unwrap() += 1;
            r
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Pending);
    assert_eq!(*metrics2.lock().unwrap(), [(false, true)]);
    assert_eq!(*after2.lock().unwrap(), 0);
}
