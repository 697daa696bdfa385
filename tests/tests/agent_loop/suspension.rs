//! contract section 3, "Suspension, exactly": the loop with and without `wait_for`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use toolnexus::{
    Answer, Error, FnTool, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
    client::BeforeTool, client::Metric, request::DeclineReason,
};
use toolnexus_tests::fixtures::{cancelled_run, client_for, host_panic};
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

#[tokio::test]
async fn a_failing_wait_for_ends_with_wait_for_error_and_keeps_the_run_resumable() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let client = client_for(ScriptedModel::new([Reply::tool_call("ask", json!({}))]))
        .wait_for(|_req: Request| async { Err::<Answer, _>("the inbox is down") })
        .build()
        .unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "wait_for failed for request `ask-1`: the inbox is down"
    );
    let halted = err.into_halted_run().unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.pending.as_ref().unwrap().id, "ask-1");

    let record = toolnexus::PendingRun::try_from(&halted).unwrap();
    let resumer = client_for(ScriptedModel::new([Reply::text("Booked to Oslo.")]))
        .build()
        .unwrap();
    let answer = record.pending().accept("Oslo");
    let done = resumer.resume(record, answer, &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.tool_calls[0].output, "ask got \"Oslo\"");
    assert_eq!(calls.get(), 2);
}

#[tokio::test]
async fn a_panicking_wait_for_is_a_wait_for_error_too() {
    let (ask, _) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let client = client_for(ScriptedModel::new([Reply::tool_call("ask", json!({}))]))
        .wait_for(|_req: Request| async { host_panic::<Answer>("host bug") })
        .build()
        .unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    assert!(matches!(&err, Error::WaitFor { request_id, .. } if request_id == "ask-1"));
    assert_eq!(
        err.to_string(),
        "wait_for failed for request `ask-1`: wait_for panicked: host bug"
    );
    assert_eq!(err.halted_run().unwrap().text, "Which city?");
}

#[tokio::test]
async fn a_wait_for_answering_another_id_is_an_error_not_a_silent_continue() {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let client = client_for(ScriptedModel::new([Reply::tool_call("ask", json!({}))]))
        .wait_for(|_req: Request| async { Answer::accept("other", "Oslo") })
        .build()
        .unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "wait_for failed for request `ask-1`: it answered request `other`; an answer must echo the pending request's id"
    );
    assert_eq!(calls.get(), 1);
}

#[tokio::test]
async fn unknown_tools_and_unreadable_arguments_are_results_the_model_reads() {
    let (e, calls) = echo();
    let toolkit = Toolkit::builder().tool(e).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("nope", json!({}))
            .with_call("echo", "{\"text\": ")
            .with_call("echo", "[1, 2]")
            .with_call("echo", json!({"text": 5})),
        Reply::text("sorry"),
    ]);
    let client = client_for(model.clone()).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(
        calls.get(),
        1,
        "only the call with an object reached the tool"
    );
    assert_eq!(
        tool_results(&model.requests()[1].messages),
        [
            ("call_1_0".to_owned(), "Unknown tool: nope".to_owned(), true),
            (
                "call_1_1".to_owned(),
                "invalid arguments for echo: not valid JSON: EOF while parsing a value at line 1 column 9".to_owned(),
                true
            ),
            (
                "call_1_2".to_owned(),
                "invalid arguments for echo: expected a JSON object, got an array".to_owned(),
                true
            ),
            ("call_1_3".to_owned(), String::new(), false),
        ]
    );
    assert_eq!(result.tool_calls[1].args, json!("{\"text\": "));
}

#[tokio::test]
async fn tool_calls_of_one_turn_run_concurrently_and_are_recorded_in_call_order() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let make = |name: &'static str, delay: u64| {
        let barrier = Arc::clone(&barrier);
        FnTool::builder(name)
            .description("Waits for its sibling.")
            .handler(move |_, _| {
                let barrier = Arc::clone(&barrier);
                async move {
                    barrier.wait().await;
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    name
                }
            })
            .build()
            .unwrap()
    };
    let toolkit = Toolkit::builder()
        .tool(make("first", 40))
        .tool(make("second", 0))
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("first", json!({})).with_call("second", json!({})),
        Reply::text("both"),
    ]);
    let client = client_for(model)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    let outputs: Vec<&str> = result
        .tool_calls
        .iter()
        .map(|c| c.output.as_str())
        .collect();
    assert_eq!(outputs, ["first", "second"]);
}

#[tokio::test]
async fn max_turns_ends_incomplete_with_the_limit() {
    let (e, _) = echo();
    let toolkit = Toolkit::builder().tool(e).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("echo", json!({"text": "1"})).with_text("thinking"),
        Reply::tool_call("echo", json!({"text": "2"})),
    ]);
    let client = client_for(model.clone()).max_turns(2).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Incomplete);
    assert_eq!(result.turns, 2);
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["status"], "incomplete");
    assert_eq!(json["limit"], "maxTurns");
    assert!(json.get("pending").is_none());
    assert_eq!(model.remaining(), 0);
    let done = client_for(ScriptedModel::new([Reply::text("hi")]))
        .build()
        .unwrap();
    let json = serde_json::to_value(done.run("x", &toolkit).await.unwrap()).unwrap();
    assert!(json.get("limit").is_none() && json.get("pending").is_none());
    assert_eq!(json["status"], "done");
}

#[tokio::test]
async fn tool_calls_get_the_runs_cancellation_and_timeout() {
    let slow = FnTool::builder("slow")
        .description("Sleeps.")
        .handler(|_, _| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "woke"
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(slow).build().unwrap();
    let client = client_for(ScriptedModel::new([
        Reply::tool_call("slow", json!({})),
        Reply::text("gave up"),
    ]))
    .tool_timeout(Duration::from_millis(20))
    .build()
    .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(
        result.tool_calls[0].output,
        "tool slow timed out after 20ms"
    );

    let client = client_for(ScriptedModel::new([Reply::tool_call("slow", json!({}))]))
        .timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    assert_eq!(err.to_string(), "the run timed out after 30ms");

    let err = cancelled_run(
        ScriptedModel::new([Reply::tool_call("slow", json!({}))]),
        &toolkit,
    )
    .await;
    assert!(matches!(err, Error::Cancelled), "{err}");
}

#[tokio::test]
async fn with_cancellation_cancels_only_the_runs_of_that_client() {
    let slow = FnTool::builder("slow")
        .description("Sleeps a little.")
        .handler(|_, _| async {
            tokio::time::sleep(Duration::from_millis(80)).await;
            "woke"
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(slow).build().unwrap();
    let script = || ScriptedModel::new([Reply::tool_call("slow", json!({})), Reply::text("ok")]);
    let base = client_for(script()).build().unwrap();
    let token = toolnexus::CancellationToken::new();
    let cancellable = base.with_cancellation(token.clone());
    let other = client_for(script()).build().unwrap();
    token.cancel();
    let err = cancellable.run("go", &toolkit).await.unwrap_err();
    assert_eq!(err.to_string(), "the run was cancelled");
    let ok = other.run("go", &toolkit).await.unwrap();
    assert_eq!(ok.tool_calls[0].output, "woke");
}

#[tokio::test]
async fn a_before_tool_suspension_that_collects_a_password_is_refused_and_wait_for_never_asked() {
    let (tool, calls) = echo();
    let toolkit = Toolkit::builder().tool(tool).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("echo", json!({"text": "hi"})),
        Reply::text("ok"),
    ]);
    let asked = Arc::new(Mutex::new(0));
    let count = Arc::clone(&asked);
    let client = client_for(model.clone())
        .before_tool(|_call| async {
            // built field by field, past ToolResult::suspended's own check
            let mut r = ToolResult::suspended(Request::input("Log in").with_id("h1"));
            let pending = r.metadata.as_mut().unwrap().pending.as_mut().unwrap();
            pending.data = json!({"form": {"user": {"properties": {"pwd": {}}}}})
                .as_object()
                .cloned()
                .map(Box::new);
            BeforeTool::Return(r)
        })
        .wait_for(move |req: Request| {
            *count.lock().unwrap() += 1;
            async move { req.accept(json!({"pwd": "hunter2"})) }
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(
        *asked.lock().unwrap(),
        0,
        "wait_for is never asked for a password"
    );
    assert_eq!(calls.get(), 0, "the tool does not run");
    assert_eq!(
        tool_results(&model.requests()[1].messages),
        [(
            "call_1_0".to_owned(),
            "invalid suspension: `data.form.user.properties.pwd` of the `input` request has the name `pwd`, which reads as the credential word `pwd`; secrets must never pass through answer data: use an `authorization` request with a `url` instead".to_owned(),
            true
        )]
    );
}
