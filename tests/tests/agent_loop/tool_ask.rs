//! End to end: a `#[tool]` fn that `ask!`s, run by the `Client` on a `ScriptedModel` with no
//! `wait_for`: the run halts, its `PendingRun` goes through JSON, and a fresh client resumes
//! it with the answer.

use serde_json::json;
use toolnexus::{
    Form, PendingRun, Reply, Role, RunStatus, ScriptedModel, Suspension, Toolkit, ask, tool,
};

#[derive(Form, serde::Deserialize)]
struct Destination {
    /// The city to fly to.
    city: String,
}

/// Book a flight; asks the traveller where to.
#[tool]
fn book_flight(flight: &str, ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let dest = ask!(ctx, input "Which city?", schema = Destination, id = "req-1");
    Ok(format!("booked {flight} to {}", dest.city))
}

use toolnexus_tests::fixtures::sys_client;

#[tokio::test]
async fn a_tool_fn_that_asks_halts_persists_and_resumes_from_a_fresh_client() {
    let toolkit = Toolkit::builder().tool(BookFlight).build().unwrap();

    // process 1: the model calls the tool, which asks; no wait_for, so the run halts
    let model = ScriptedModel::new([Reply::tool_call("book_flight", json!({"flight": "AI-503"}))]);
    let halted = sys_client(model.clone())
        .run("book AI-503", &toolkit)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let json = PendingRun::try_from(&halted).unwrap().to_json();

    // process 2: a fresh client and model, only the JSON record carried over
    let record = PendingRun::from_json(&json).unwrap();
    assert_eq!(record.pending().id, "req-1");
    let answer = record.pending().accept(json!({"city": "Oslo"}));
    let model = ScriptedModel::new([Reply::text("Booked: AI-503 to Oslo.")]);
    let done = sys_client(model.clone())
        .resume(record, answer, &toolkit)
        .await
        .unwrap();

    // the halted run: the model saw the prompt as the tool's placeholder result
    let halted_tool = halted.messages.last().unwrap();
    assert_eq!(
        (
            halted_tool.role,
            halted_tool.content.as_deref(),
            halted_tool.is_error
        ),
        (Role::Tool, Some("Which city?"), true)
    );

    // the resumed transcript: the placeholder replaced by the answered tool's result
    let transcript: Vec<_> = done
        .messages
        .iter()
        .map(|m| {
            (
                m.role,
                m.content.as_deref(),
                m.tool_call_id.as_deref(),
                m.is_error,
            )
        })
        .collect();
    assert_eq!(
        transcript,
        [
            (Role::System, Some("sys"), None, false),
            (Role::User, Some("book AI-503"), None, false),
            (Role::Assistant, None, None, false),
            (
                Role::Tool,
                Some("booked AI-503 to Oslo"),
                Some("call_1_0"),
                false
            ),
            (
                Role::Assistant,
                Some("Booked: AI-503 to Oslo."),
                None,
                false
            ),
        ]
    );
    assert_eq!(
        serde_json::to_value(&done).unwrap(),
        json!({
            "runId": done.run_id,
            "text": "Booked: AI-503 to Oslo.",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "book AI-503"},
                {"role": "assistant", "tool_calls": [
                    {"id": "call_1_0", "name": "book_flight", "arguments": {"flight": "AI-503"}}
                ]},
                {"role": "tool", "content": "booked AI-503 to Oslo", "tool_call_id": "call_1_0"},
                {"role": "assistant", "content": "Booked: AI-503 to Oslo."}
            ],
            "toolCalls": [{
                "name": "book_flight",
                "args": {"flight": "AI-503"},
                "output": "booked AI-503 to Oslo",
                "isError": false
            }],
            "toolCallCount": 1,
            "turns": 2,
            "usage": {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0},
            "model": "m",
            "status": "done"
        })
    );
}
