//! Resumes a persisted halted run with arbitrary answers and arbitrary (well-formed JSON)
//! record contents: the input is a JSON object whose keys replace those of a real record
//! (`messages`, `toolCalls`, `halted`, `pending`, ...) plus an optional `answer`. Never a
//! panic or a hang; a resumed run's halted turn is balanced (each call answered once, in call
//! order), and a run that halts again persists and reads back.
#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolnexus::{
    Answer, Client, FnTool, PendingRun, Reply, Request, Role, RunStatus, ScriptedModel, ToolResult,
    Toolkit,
};

fn asker(name: &'static str) -> FnTool {
    FnTool::builder(name)
        .description("Asks a human.")
        .handler(move |_args, ctx| {
            let reply = match ctx.accepted() {
                Some(answer) => ToolResult::success(format!("{name} got {:?}", answer.data)),
                None => {
                    ToolResult::suspended(Request::input("Where to?").with_id(format!("{name}-1")))
                }
            };
            async move { reply }
        })
        .build()
        .unwrap()
}

static TOOLKIT: LazyLock<Toolkit> = LazyLock::new(|| {
    let echo = FnTool::builder("echo")
        .description("Echoes its arguments.")
        .handler(|args, _ctx| async move { Value::Object(args).to_string() })
        .build()
        .unwrap();
    Toolkit::builder()
        .tool(asker("ask"))
        .tool(asker("ask2"))
        .tool(echo)
        .build()
        .unwrap()
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
});

/// A real record: `echo`, `ask` (halts), `ask2` (suspended too, asked again on resume).
static BASE: LazyLock<Value> = LazyLock::new(|| {
    let model = ScriptedModel::new([Reply::tool_call("echo", json!({"text": "hi"}))
        .with_call("ask", json!({}))
        .with_call("ask2", json!({"n": 1}))]);
    let client = Client::builder(model).model_name("m").build().unwrap();
    let halted = RUNTIME.block_on(client.run("go", &TOOLKIT)).unwrap();
    let json = PendingRun::try_from(&halted).unwrap().to_json();
    serde_json::from_str(&json).unwrap()
});

fn client() -> Client {
    let model = ScriptedModel::new([Reply::text("done"), Reply::text("done again")]);
    Client::builder(model)
        .model_name("m")
        .max_turns(4)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// The resumed turn: the last assistant message's calls are each answered exactly once, in
/// call order, before anything else.
fn check_balanced(messages: &[toolnexus::Message], at: usize) {
    let calls = &messages[at].tool_calls;
    let results: Vec<_> = messages[at + 1..]
        .iter()
        .take_while(|m| m.role == Role::Tool)
        .collect();
    assert!(results.len() <= calls.len(), "more results than calls");
    for (call, result) in calls.iter().zip(&results) {
        assert_eq!(
            result.tool_call_id.as_deref(),
            Some(call.id.as_str()),
            "result out of order"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(input)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Value::Object(mut record) = BASE.clone() else {
        unreachable!()
    };
    let mut answer = None;
    for (key, value) in input {
        if key == "answer" {
            answer = Some(value);
        } else {
            record.insert(key, value);
        }
    }
    let Ok(run) = PendingRun::from_json(&Value::Object(record).to_string()) else {
        return;
    };
    let answer = match answer.map(serde_json::from_value::<Answer>) {
        Some(Ok(answer)) => answer,
        Some(Err(_)) | None => run.pending().accept("Oslo"),
    };
    let at = run
        .messages()
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .expect("a record that reads has an assistant turn");
    let mismatched = answer.id != run.pending().id;
    let outcome = RUNTIME.block_on(client().resume(run.clone(), answer.clone(), &TOOLKIT));
    match outcome {
        Ok(result) => {
            assert!(!mismatched, "a mismatched answer was accepted");
            check_balanced(&result.messages, at);
            if result.status == RunStatus::Pending {
                let again = PendingRun::try_from(&result).expect("a halted run persists");
                PendingRun::from_json(&again.to_json()).expect("and reads back");
            }
        }
        Err(toolnexus::Error::AnswerMismatch { .. }) => assert!(mismatched),
        Err(_) => {}
    }
    // a copy of the record resumes again (single use is the host's or a store's duty)
    let _ = RUNTIME.block_on(client().resume(run, answer, &TOOLKIT));
});
