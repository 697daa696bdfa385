//! The loop's other rules: a failing or panicking `wait_for`, an answer to another id, unknown
//! tools and unreadable arguments, concurrent calls in call order, `max_turns`, cancellation
//! and timeouts, a `before_tool` suspension that collects a password.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolnexus::{
    Answer, Error, FnTool, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
    client::BeforeTool,
};
use toolnexus_tests::fixtures::{cancelled_run, client_for, host_panic};
use toolnexus_tests::{asker, echo, tool_results};

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
