//! Faults in the agent loop: tools that panic or never return, a `wait_for` that panics,
//! fails, or is interrupted by the run's timeout or cancellation (the request is never lost),
//! and a model that sends malformed arguments or calls a tool that does not exist. Each test
//! asserts the exact text the model is shown on its next turn.

use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::{
    Answer, CancellationToken, Client, Error, FnTool, PendingRun, Reply, Request, Role, RunStatus,
    ScriptedModel, ToolResult, Toolkit, tool,
};
use toolnexus_tests::asker;
use toolnexus_tests::fixtures::{cancelled_run, client_for};

/// The tool results the model was shown on its last turn: (call id, content, isError).
fn shown(model: &ScriptedModel) -> Vec<(String, String, bool)> {
    let requests = model.requests();
    let last = requests.last().expect("the model was called");
    let at = last
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .expect("an assistant turn");
    toolnexus_tests::tool_results(&last.messages[at + 1..])
}

fn tool(name: &str, handler: fn() -> toolnexus::BoxFuture<'static, ToolResult>) -> FnTool {
    FnTool::builder(name)
        .description("A faulty tool.")
        .handler(move |_args, _ctx| handler())
        .build()
        .unwrap()
}

fn panics_first_poll() -> toolnexus::BoxFuture<'static, ToolResult> {
    Box::pin(async { panic!("broke on the first poll") })
}

fn panics_later() -> toolnexus::BoxFuture<'static, ToolResult> {
    Box::pin(async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        tokio::task::yield_now().await;
        panic!("broke after an await")
    })
}

fn never_returns() -> toolnexus::BoxFuture<'static, ToolResult> {
    Box::pin(std::future::pending())
}

/// A `wait_for` whose human never answers.
async fn never_answers(req: Request) -> Answer {
    std::future::pending::<()>().await;
    req.accept("never")
}

#[tokio::test]
async fn a_tool_panicking_in_its_first_or_a_later_poll_is_an_error_result_the_model_reads() {
    let toolkit = Toolkit::builder()
        .tool(tool("first", panics_first_poll))
        .tool(tool("later", panics_later))
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("first", json!({})).with_call("later", json!({})),
        Reply::text("sorry"),
    ]);
    let client = client_for(model.clone()).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "sorry");
    assert_eq!(
        shown(&model),
        [
            (
                "call_1_0".to_owned(),
                "tool first panicked: broke on the first poll".to_owned(),
                true
            ),
            (
                "call_1_1".to_owned(),
                "tool later panicked: broke after an await".to_owned(),
                true
            ),
        ]
    );
}

#[tokio::test]
async fn a_tool_that_never_returns_is_cut_by_the_tool_timeout_and_named() {
    let toolkit = Toolkit::builder()
        .tool(tool("hang", never_returns))
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("hang", json!({})),
        Reply::text("moving on"),
    ]);
    let client = client_for(model.clone())
        .tool_timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.text, "moving on");
    assert_eq!(
        shown(&model),
        [(
            "call_1_0".to_owned(),
            "tool hang timed out after 20ms".to_owned(),
            true
        )]
    );
}

#[tokio::test]
async fn a_tool_that_never_returns_is_cut_by_the_runs_timeout_and_cancellation() {
    let toolkit = Toolkit::builder()
        .tool(tool("hang", never_returns))
        .build()
        .unwrap();
    let client = client_for(ScriptedModel::new([Reply::tool_call("hang", json!({}))]))
        .timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    assert!(matches!(err, Error::Timeout(d) if d == Duration::from_millis(30)));
    assert_eq!(err.to_string(), "the run timed out after 30ms");

    let err = cancelled_run(
        ScriptedModel::new([Reply::tool_call("hang", json!({}))]),
        &toolkit,
    )
    .await;
    assert!(matches!(err, Error::Cancelled), "{err}");
}

/// Halts through a failing `wait_for`, checks the error, then resumes the carried run (via
/// its persisted record) and checks the tool ran with the answer.
async fn wait_for_failure_keeps_the_request(client: Client, expected: &str) {
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    assert_eq!(err.to_string(), expected);
    let Error::WaitFor { request_id, .. } = &err else {
        panic!("not a wait_for failure: {err:?}");
    };
    assert_eq!(request_id, "ask-1");
    let halted = err
        .halted_run()
        .expect("the halted run travels with the error");
    assert_eq!(halted.status, RunStatus::Pending);
    let pending = halted.pending.clone().expect("the pending request");
    assert_eq!(pending.id, "ask-1");
    assert_eq!(pending.prompt, "Which city?");
    assert_eq!(calls.get(), 1);

    let record = PendingRun::from_json(
        &PendingRun::try_from(err.into_halted_run().unwrap())
            .unwrap()
            .to_json(),
    )
    .unwrap();
    let model = ScriptedModel::new([Reply::text("booked")]);
    let answer = record.pending().accept("Oslo");
    let resumed = client_for(model.clone())
        .build()
        .unwrap()
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(resumed.status, RunStatus::Done);
    assert_eq!(resumed.text, "booked");
    assert_eq!(calls.get(), 2, "the tool ran once more, with the answer");
    assert_eq!(
        shown(&model),
        [("call_1_0".to_owned(), "ask got \"Oslo\"".to_owned(), false)]
    );
}

fn host_crash() -> Result<toolnexus::Answer, String> {
    panic!("the host crashed")
}

fn asking_model() -> ScriptedModel {
    ScriptedModel::new([Reply::tool_call("ask", json!({})), Reply::text("never")])
}

#[tokio::test]
async fn a_wait_for_that_panics_ends_the_run_with_the_request_still_pending() {
    let client = client_for(asking_model())
        .wait_for(|_req: Request| async move { host_crash() })
        .build()
        .unwrap();
    wait_for_failure_keeps_the_request(
        client,
        "wait_for failed for request `ask-1`: wait_for panicked: the host crashed",
    )
    .await;
}

#[tokio::test]
async fn a_wait_for_that_fails_ends_the_run_with_the_request_still_pending() {
    let client = client_for(asking_model())
        .wait_for(|_req: Request| async move { Err::<toolnexus::Answer, _>("no human is on call") })
        .build()
        .unwrap();
    wait_for_failure_keeps_the_request(
        client,
        "wait_for failed for request `ask-1`: no human is on call",
    )
    .await;
}

#[tokio::test]
async fn the_runs_timeout_while_wait_for_waits_keeps_the_request() {
    let client = client_for(asking_model())
        .timeout(Duration::from_millis(50))
        .wait_for(never_answers)
        .build()
        .unwrap();
    wait_for_failure_keeps_the_request(
        client,
        "wait_for failed for request `ask-1`: the run timed out after 50ms while waiting for the answer",
    )
    .await;
}

#[tokio::test]
async fn the_runs_cancellation_while_wait_for_waits_keeps_the_request() {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let client = client_for(asking_model())
        .cancellation(token)
        .wait_for(move |req: Request| {
            let cancel = cancel.clone();
            async move {
                // the host gives up while its human is still thinking
                cancel.cancel();
                std::future::pending::<()>().await;
                req.accept("never")
            }
        })
        .build()
        .unwrap();
    wait_for_failure_keeps_the_request(
        client,
        "wait_for failed for request `ask-1`: the run was cancelled while waiting for the answer",
    )
    .await;
}

#[tokio::test]
async fn a_client_cancelled_from_outside_while_waiting_keeps_the_request() {
    let token = CancellationToken::new();
    let client = client_for(asking_model())
        .wait_for(never_answers)
        .build()
        .unwrap()
        .with_cancellation(token.clone());
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    let (ask, _) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let err = client.run("go", &toolkit).await.unwrap_err();
    cancel.await.unwrap();
    assert_eq!(
        err.to_string(),
        "wait_for failed for request `ask-1`: the run was cancelled while waiting for the answer"
    );
    assert_eq!(
        err.halted_run()
            .and_then(|r| r.pending.as_ref())
            .map(|p| p.id.as_str()),
        Some("ask-1")
    );
}

/// Books a flight.
#[tool]
fn book_flight(
    /// The flight number.
    flight: &str,
    /// How many seats.
    seats: Option<u8>,
) -> String {
    format!("booked {} on {flight}", seats.unwrap_or(1))
}

#[tokio::test]
async fn malformed_arguments_become_an_error_result_the_model_can_act_on() {
    let toolkit = Toolkit::builder().tool(BookFlight).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call(
            "book_flight",
            Value::String(r#"{"flight": "AI-5"#.to_owned()),
        )
        .with_call("book_flight", Value::String("[1, 2]".to_owned()))
        .with_call("book_flight", json!(42))
        .with_call("book_flight", json!({"flight": "AI-5", "seats": "two"}))
        .with_call("book_flight", json!({"seats": 2}))
        .with_call("book_flight", json!({"flight": "AI-5", "sets": 2})),
        // the model reads the errors and fixes its call
        Reply::tool_call("book_flight", json!({"flight": "AI-5", "seats": 2})),
        Reply::text("booked"),
    ]);
    let client = client_for(model.clone()).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.text, "booked");
    let first_turn: Vec<(String, String, bool)> = {
        let requests = model.requests();
        let messages = &requests[1].messages;
        messages[messages.len() - 6..]
            .iter()
            .map(|m| {
                (
                    m.tool_call_id.clone().unwrap_or_default(),
                    m.content.clone().unwrap_or_default(),
                    m.is_error,
                )
            })
            .collect()
    };
    let err = |id: &str, text: &str| (id.to_owned(), text.to_owned(), true);
    assert_eq!(
        first_turn,
        [
            err(
                "call_1_0",
                "invalid arguments for book_flight: not valid JSON: EOF while parsing a string at line 1 column 16"
            ),
            err(
                "call_1_1",
                "invalid arguments for book_flight: expected a JSON object, got an array"
            ),
            err(
                "call_1_2",
                "invalid arguments for book_flight: expected a JSON object, got a number"
            ),
            err(
                "call_1_3",
                r#"invalid arguments for book_flight: seats: invalid type: string "two", expected u8"#
            ),
            err(
                "call_1_4",
                "invalid arguments for book_flight: missing field `flight`"
            ),
            err(
                "call_1_5",
                "invalid arguments for book_flight: unknown field `sets`, expected `flight` or `seats`"
            ),
        ]
    );
    assert_eq!(
        shown(&model),
        // the corrected call is the second turn's first: its own id
        [("call_2_0".to_owned(), "booked 2 on AI-5".to_owned(), false)]
    );
}

#[tokio::test]
async fn a_call_to_a_tool_that_does_not_exist_is_an_error_result() {
    let toolkit = Toolkit::builder().tool(BookFlight).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("book_hotel", json!({"city": "Oslo"}))
            .with_call("book_flight", json!({"flight": "X1"})),
        Reply::text("no hotels"),
    ]);
    let client = client_for(model.clone()).build().unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.text, "no hotels");
    assert_eq!(
        shown(&model),
        [
            (
                "call_1_0".to_owned(),
                "Unknown tool: book_hotel".to_owned(),
                true
            ),
            ("call_1_1".to_owned(), "booked 1 on X1".to_owned(), false),
        ]
    );
    assert_eq!(result.tool_calls[0].name, "book_hotel");
    assert!(result.tool_calls[0].is_error);
}

/// A turn of three calls: `first` (rewritten by `before_tool`) suspends with its own output and
/// metadata, `second` suspends plainly, `third` answers.
async fn halted_on_a_rich_suspension(wait_for: bool) -> toolnexus::RunResult {
    let first = FnTool::builder("first")
        .description("Suspends with extras.")
        .handler(|args, _ctx| async move {
            let mut result = ToolResult::suspended(Request::input("Which city?").with_id("r-1"));
            result.output = format!("waiting for a city, given {}", Value::Object(args));
            result.with_metadata("trace", json!("t-7"))
        })
        .build()
        .unwrap();
    let (second, _) = asker("second", "Which seat?");
    let third = FnTool::builder("third")
        .description("Answers.")
        .handler(|_, _| async { "three" })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder()
        .tools([first, second, third])
        .build()
        .unwrap();
    let model = ScriptedModel::new([Reply::tool_call("first", json!({"city": "?"}))
        .with_call("second", json!({}))
        .with_call("third", json!({}))]);
    let client = client_for(model).before_tool(|call| async move {
        if call.name == "first" {
            let mut args = serde_json::Map::new();
            args.insert("city".to_owned(), json!("rewritten"));
            toolnexus::client::BeforeTool::Rewrite(args)
        } else {
            toolnexus::client::BeforeTool::Continue
        }
    });
    if wait_for {
        let client = client
            .wait_for(|_req: Request| async { Err::<toolnexus::Answer, _>("the inbox is down") })
            .build()
            .unwrap();
        let err = client.run("go", &toolkit).await.unwrap_err();
        assert!(matches!(&err, Error::WaitFor { request_id, .. } if request_id == "r-1"));
        err.into_halted_run().unwrap()
    } else {
        client.build().unwrap().run("go", &toolkit).await.unwrap()
    }
}

#[tokio::test]
async fn a_failing_wait_for_halts_the_run_exactly_as_a_run_without_wait_for() {
    // the parked call keeps what it must: rewritten arguments, its own output and metadata,
    // the rest of its turn (a suspension and a result)
    let mut via_wait_for = halted_on_a_rich_suspension(true).await;
    let halted = halted_on_a_rich_suspension(false).await;
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.tool_calls[0].args, json!({"city": "rewritten"}));
    assert_eq!(
        halted.tool_calls[0].output,
        "waiting for a city, given {\"city\":\"rewritten\"}"
    );
    // the same records, but for how long the later calls took and the run's own id (which
    // the fingerprints bind: each is checked against its own run when the record is made)
    let record = |run: &toolnexus::RunResult| {
        let json = PendingRun::try_from(run).unwrap().to_json();
        let mut record: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(record["runId"], json!(run.run_id));
        record.as_object_mut().unwrap().remove("runId");
        let halted = record["halted"].as_object_mut().unwrap();
        assert_eq!(
            halted
                .remove("fingerprint")
                .unwrap()
                .as_str()
                .unwrap()
                .len(),
            64
        );
        let deferred = record["halted"]["deferred"].as_array_mut().unwrap();
        assert_eq!(deferred.len(), 2);
        for d in deferred {
            let d = d.as_object_mut().unwrap();
            d.remove("duration").unwrap();
            if let Some(fingerprint) = d.remove("fingerprint") {
                assert_eq!(fingerprint.as_str().unwrap().len(), 64);
            }
        }
        record
    };
    assert_eq!(record(&via_wait_for), record(&halted));
    via_wait_for.run_id.clone_from(&halted.run_id);
    assert_eq!(via_wait_for, halted);
}
