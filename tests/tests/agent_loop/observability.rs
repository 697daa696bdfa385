//! What a run tells `tracing`: GenAI-convention spans for the run, each model call and each
//! tool call, `pending` and `halted` events with the request's id and kind, and never an
//! argument, an output, a prompt, an answer or a key.

use toolnexus::{
    Client, Form, Reply, RunStatus, ScriptedModel, ToolResult, Toolkit, Usage, ask, json, tool,
};
use toolnexus_tests::recorder::Recorder;

#[derive(Form, serde::Deserialize)]
struct Trip {
    /// Where to.
    city: String,
}

/// Book a flight; asks where to.
#[tool]
fn book(
    /// The flight number.
    flight: &str,
    ctx: &toolnexus::Context,
) -> ToolResult {
    let trip = ask!(ctx, input "PROMPT-MARK-7 where to?", schema = Trip);
    ToolResult::success(format!("OUTPUT-MARK-7 {flight} to {}", trip.city))
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        Reply::text("")
            .with_call_id("c1", "book", json!({"flight": "ARG-MARK-7"}))
            .with_usage(Usage::new(11, 3)),
        Reply::text("booked").with_usage(Usage::new(20, 2)),
    ])
}

fn toolkit() -> Toolkit {
    Toolkit::builder().tool(Book).build().unwrap()
}

const MARKS: [&str; 4] = [
    "ARG-MARK-7",
    "OUTPUT-MARK-7",
    "PROMPT-MARK-7",
    "ANSWER-MARK-7",
];

fn assert_no_secret(lines: &[String]) {
    for line in lines {
        for mark in MARKS {
            assert!(!line.contains(mark), "{mark} leaked into tracing: {line}");
        }
    }
}

const RUN_SPAN: &str = "span invoke_agent: otel.name=\"invoke_agent toolnexus\" \
    gen_ai.operation.name=\"invoke_agent\" gen_ai.request.model=\"m-1\" toolnexus.run.resumed=false";
const CHAT_SPAN: &str =
    "span chat: otel.name=chat m-1 gen_ai.operation.name=\"chat\" gen_ai.request.model=\"m-1\"";
const TOOL_SPAN: &str = "span execute_tool: otel.name=execute_tool book \
    gen_ai.operation.name=\"execute_tool\" gen_ai.tool.name=\"book\" gen_ai.tool.call.id=\"c1\" \
    gen_ai.tool.type=\"function\"";

/// The lines of the first model turn and the suspending first execution.
fn first_turn(id: &str) -> Vec<String> {
    [
        RUN_SPAN,
        CHAT_SPAN,
        "record chat: gen_ai.usage.input_tokens=11",
        "record chat: gen_ai.usage.output_tokens=3",
        "record chat: toolnexus.tool_calls=1",
        TOOL_SPAN,
        "record execute_tool: toolnexus.tool.is_error=false",
        "record execute_tool: toolnexus.tool.pending=true",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([format!(
        "toolnexus: message=pending toolnexus.request.id={id:?} \
         toolnexus.request.kind=\"input\" gen_ai.tool.name=\"book\""
    )])
    .collect()
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| (*l).to_owned()).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn a_run_with_wait_for_has_genai_spans_and_a_pending_event_and_no_user_data() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let asked = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = std::sync::Arc::clone(&asked);
    let client = Client::builder(script())
        .model_name("m-1")
        .wait_for(move |request: toolnexus::Request| {
            seen.lock().unwrap().clone_from(&request.id);
            async move { request.accept(json!({"city": "ANSWER-MARK-7"})) }
        })
        .build()
        .unwrap();
    let run = client.run("hi", &toolkit()).await.unwrap();
    assert_eq!(run.status, RunStatus::Done);
    let id = asked.lock().unwrap().clone();
    assert!(id.starts_with("sus-"), "{id}");

    let mut expected = first_turn(&id);
    expected.extend(strings(&[
        // the retry with the answer
        TOOL_SPAN,
        "record execute_tool: toolnexus.tool.is_error=false",
        "record execute_tool: toolnexus.tool.pending=false",
        CHAT_SPAN,
        "record chat: gen_ai.usage.input_tokens=20",
        "record chat: gen_ai.usage.output_tokens=2",
        "record chat: toolnexus.tool_calls=0",
        "record invoke_agent: toolnexus.run.status=\"done\"",
        "record invoke_agent: toolnexus.run.turns=2",
        "record invoke_agent: gen_ai.usage.input_tokens=31",
        "record invoke_agent: gen_ai.usage.output_tokens=5",
    ]));
    let lines = recorder.lines();
    assert_eq!(lines, expected);
    assert_no_secret(&lines);
}

#[tokio::test(flavor = "current_thread")]
async fn a_halted_run_reports_the_halt_with_the_request_id() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let client = Client::builder(script()).model_name("m-1").build().unwrap();
    let run = client.run("hi", &toolkit()).await.unwrap();
    assert_eq!(run.status, RunStatus::Pending);
    let id = run.pending.as_ref().unwrap().id.clone();

    let mut expected = first_turn(&id);
    expected.push(format!(
        "toolnexus: message=halted toolnexus.request.id={id:?} toolnexus.request.kind=\"input\""
    ));
    expected.extend(strings(&[
        "record invoke_agent: toolnexus.run.status=\"pending\"",
        "record invoke_agent: toolnexus.run.turns=1",
        "record invoke_agent: gen_ai.usage.input_tokens=11",
        "record invoke_agent: gen_ai.usage.output_tokens=3",
    ]));
    let lines = recorder.lines();
    assert_eq!(lines, expected);
    assert_no_secret(&lines);
}
