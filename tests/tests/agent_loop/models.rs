//! The in-process model, the scripted model, streaming, events, usage, hooks on model turns.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{
    Client, Error, Event, FnModel, Message, ModelRequest, Reply, Request, Role, RunStatus,
    ScriptedModel, Toolkit, Usage,
};
use toolnexus_tests::fixtures::{client_for, host_panic, sys_client};
use toolnexus_tests::{Log, asker, echo};

#[tokio::test]
async fn the_in_process_model_sees_openai_shaped_messages_tools_and_the_model_name() {
    let (e, _) = echo();
    let toolkit = Toolkit::builder().tool(e).build().unwrap();
    let seen: Arc<Mutex<Vec<ModelRequest>>> = Arc::default();
    let record = Arc::clone(&seen);
    let model = FnModel::new(move |req: ModelRequest| {
        let turn = req
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        record.lock().unwrap().push(req);
        async move {
            match turn {
                0 => Reply::tool_call("echo", r#"{"text":"a"}"#)
                    .with_call("echo", json!({"text": "b"}))
                    .with_usage(Usage::new(10, 3)),
                _ => Reply::text("a and b").with_usage(Usage::new(20, 4)),
            }
        }
    });
    let client = Client::builder(model)
        .model_name("local-1")
        .system("Be brief.")
        .build()
        .unwrap();
    let result = client.run("echo twice", &toolkit).await.unwrap();
    assert_eq!(result.text, "a and b");
    assert_eq!(result.usage, Usage::new(30, 7));
    assert_eq!(result.usage.total_tokens, 37);
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].model, "local-1");
    assert_eq!(seen[0].tools.len(), 1);
    assert_eq!(seen[0].tools[0].name, "echo");
    assert_eq!(
        serde_json::to_value(&seen[1].messages).unwrap(),
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "echo twice"},
            {"role": "assistant", "tool_calls": [
                {"id": "call_1_0", "name": "echo", "arguments": {"text": "a"}},
                {"id": "call_1_1", "name": "echo", "arguments": {"text": "b"}}
            ]},
            {"role": "tool", "content": "a", "tool_call_id": "call_1_0"},
            {"role": "tool", "content": "b", "tool_call_id": "call_1_1"}
        ])
    );
}

#[tokio::test]
async fn in_process_model_failures_are_final() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let model = FnModel::new(move |_req| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Err::<Reply, _>("quota exhausted") }
    });
    let client = client_for(model).build().unwrap();
    let err = client.run("hi", &Toolkit::new()).await.unwrap_err();
    assert_eq!(err.to_string(), "model failed: quota exhausted");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "never retried");

    let model = FnModel::new(|_req| async { host_panic::<Reply>("bad model") });
    let client = client_for(model).build().unwrap();
    let err = client.run("hi", &Toolkit::new()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "model failed: the in-process model panicked: bad model"
    );
}

#[tokio::test]
async fn the_in_process_model_refuses_to_stream() {
    let client = client_for(FnModel::new(|_req| async { Reply::text("x") }))
        .build()
        .unwrap();
    let err = client
        .stream("hi", &Toolkit::new(), |_e| {})
        .await
        .unwrap_err();
    assert!(matches!(err, Error::StreamingUnsupported(_)));
    assert_eq!(
        err.to_string(),
        "the in-process model does not support streaming"
    );
}

#[tokio::test]
async fn streaming_yields_text_deltas_and_the_whole_event_sequence() {
    let (ask, _) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("ask", json!({})).with_usage(Usage::new(5, 1)),
        Reply::text("Booked to Oslo.").with_usage(Usage::new(7, 3)),
    ]);
    let client = client_for(model)
        .wait_for(|req: Request| async move { req.accept("Oslo") })
        .build()
        .unwrap();
    let log = Log::default();
    let result = client.stream("Book", &toolkit, log.sink()).await.unwrap();
    let events = log.all();
    let last = events.last().unwrap().clone();
    assert_eq!(
        events,
        vec![
            json!({"type":"usage","usage":{"promptTokens":5,"completionTokens":1,"totalTokens":6}}),
            json!({"type":"tool_call","id":"call_1_0","name":"ask","args":{}}),
            json!({"type":"pending","request":{"id":"ask-1","kind":"input","prompt":"Which city?"}}),
            json!({"type":"tool_result","id":"call_1_0","name":"ask","output":"ask got \"Oslo\"","isError":false}),
            json!({"type":"text","delta":"Booked "}),
            json!({"type":"text","delta":"to "}),
            json!({"type":"text","delta":"Oslo."}),
            json!({"type":"usage","usage":{"promptTokens":7,"completionTokens":3,"totalTokens":10}}),
            last.clone(),
        ]
    );
    assert_eq!(last["type"], "done");
    assert_eq!(last["result"], serde_json::to_value(&result).unwrap());
    assert_eq!(last["result"]["status"], "done");
}

#[tokio::test]
async fn the_scripted_model_says_when_it_runs_out_and_records_what_it_was_shown() {
    let model = ScriptedModel::new([Reply::text("one")]);
    let client = client_for(model.clone()).build().unwrap();
    client.run("first", &Toolkit::new()).await.unwrap();
    let err = client.run("second", &Toolkit::new()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "model failed: the scripted model has no reply left for request 2: it was given 1 reply; add one with `ScriptedModel::push`"
    );
    let seen = model.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].messages, [Message::user("second")]);
    model.push(Reply::text("three"));
    assert_eq!(
        client.run("third", &Toolkit::new()).await.unwrap().text,
        "three"
    );
}

#[tokio::test]
async fn before_llm_replaces_what_the_model_sees_and_after_llm_observes() {
    let (e, _) = echo();
    let toolkit = Toolkit::builder().tool(e).build().unwrap();
    let model = ScriptedModel::new([Reply::text("hi")]);
    let observed = Arc::new(Mutex::new(Vec::new()));
    let o = Arc::clone(&observed);
    let client = client_for(model.clone())
        .before_llm(|mut req| {
            req.tools.clear();
            req.messages.push(Message::user("(be polite)"));
            req
        })
        .after_llm(move |turn| o.lock().unwrap().push(turn.text.clone()))
        .build()
        .unwrap();
    let result = client.run("hello", &toolkit).await.unwrap();
    let sent = &model.requests()[0];
    assert!(sent.tools.is_empty());
    assert_eq!(
        sent.messages,
        [Message::user("hello"), Message::user("(be polite)")]
    );
    assert_eq!(
        result.messages,
        [Message::user("hello"), Message::assistant("hi")],
        "the run's own transcript is unchanged"
    );
    assert_eq!(*observed.lock().unwrap(), [Some("hi".to_owned())]);
}

#[tokio::test]
async fn run_with_history_continues_a_transcript_without_repeating_the_system_prompt() {
    let model = ScriptedModel::new([Reply::text("first answer"), Reply::text("second answer")]);
    let client = sys_client(model.clone());
    let first = client.run("one", &Toolkit::new()).await.unwrap();
    let second = client
        .run_with_history(first.messages, "two", &Toolkit::new())
        .await
        .unwrap();
    assert_eq!(second.status, RunStatus::Done);
    assert_eq!(
        model.requests()[1].messages,
        [
            Message::system("sys"),
            Message::user("one"),
            Message::assistant("first answer"),
            Message::user("two"),
        ]
    );
}

#[tokio::test]
async fn a_client_needs_a_model_name_and_at_least_one_turn() {
    let err = Client::builder(ScriptedModel::default())
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a client needs a model name: call `.model_name(..)` (any label for an in-process model), or build the provider with `.model(..)`"
    );
    let err = client_for(ScriptedModel::default())
        .max_turns(0)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "max_turns must be at least 1: a run needs one model turn"
    );
}

#[test]
fn events_serialize_to_the_contract_shapes() {
    let shapes = [
        (
            Event::Text { delta: "hi".into() },
            r#"{"type":"text","delta":"hi"}"#,
        ),
        (
            Event::ToolCall {
                id: "c1".into(),
                name: "t".into(),
                args: json!({"a": 1}),
            },
            r#"{"type":"tool_call","id":"c1","name":"t","args":{"a":1}}"#,
        ),
        (
            Event::ToolResult {
                id: "c1".into(),
                name: "t".into(),
                output: "o".into(),
                is_error: false,
            },
            r#"{"type":"tool_result","id":"c1","name":"t","output":"o","isError":false}"#,
        ),
        (
            Event::Usage {
                usage: Usage::new(1, 2),
            },
            r#"{"type":"usage","usage":{"promptTokens":1,"completionTokens":2,"totalTokens":3}}"#,
        ),
        (
            Event::Pending {
                request: Request::approval("Go?").with_id("r1"),
            },
            r#"{"type":"pending","request":{"id":"r1","kind":"approval","prompt":"Go?"}}"#,
        ),
    ];
    for (event, expected) in shapes {
        assert_eq!(serde_json::to_string(&event).unwrap(), expected);
    }
}

#[tokio::test]
async fn content_parts_of_a_tool_result_reach_the_model_and_the_run_record() {
    use toolnexus::{ContentPart, FnTool, ToolResult};

    let chart = FnTool::builder("chart")
        .description("Draws a chart.")
        .handler(|_args, _ctx| async {
            ToolResult::success("the chart").with_part(ContentPart::image("aGk=", "image/png"))
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(chart).build().unwrap();
    let seen: Arc<Mutex<Vec<ModelRequest>>> = Arc::default();
    let record = Arc::clone(&seen);
    let model = FnModel::new(move |req: ModelRequest| {
        let first = record.lock().unwrap().is_empty();
        record.lock().unwrap().push(req);
        async move {
            if first {
                Reply::tool_call("chart", json!({}))
            } else {
                Reply::text("drawn")
            }
        }
    });
    let result = client_for(model)
        .build()
        .unwrap()
        .run("draw", &toolkit)
        .await
        .unwrap();
    assert_eq!(result.text, "drawn");
    let part = json!({"type": "image", "data": "aGk=", "mimeType": "image/png"});
    let seen = seen.lock().unwrap();
    let tool_message = serde_json::to_value(seen[1].messages.last().unwrap()).unwrap();
    assert_eq!(tool_message["content"], json!("the chart"));
    assert_eq!(tool_message["parts"], json!([part]));
    assert_eq!(
        serde_json::to_value(&result.tool_calls[0]).unwrap(),
        json!({"name": "chart", "args": {}, "output": "the chart", "isError": false, "parts": [part]})
    );
}

#[tokio::test]
async fn in_process_call_ids_are_unique_per_run_across_turns() {
    let (e, _) = echo();
    let toolkit = Toolkit::builder().tool(e).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("echo", json!({"text": "a"})).with_call("echo", json!({"text": "b"})),
        Reply::tool_call("echo", json!({"text": "c"})),
        Reply::tool_call("echo", json!({"text": "d"})).with_call_id(
            "mine",
            "echo",
            json!({"text": "e"}),
        ),
        Reply::text("done"),
    ]);
    let result = client_for(model)
        .build()
        .unwrap()
        .run("go", &toolkit)
        .await
        .unwrap();
    let ids: Vec<&str> = result
        .messages
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(
        ids,
        ["call_1_0", "call_1_1", "call_2_0", "call_3_0", "mine"]
    );
}
