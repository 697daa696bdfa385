//! Which failures are retried (issue 15): 529 by default and the host's own statuses, and a
//! stream that breaks before any of its reply arrived; and what the Anthropic parser makes of
//! replies it cannot take as they are (issue 14).

use std::time::Duration;

use serde_json::json;
use toolnexus::{Client, HttpProvider, Model, RunResult, RunStatus, Toolkit};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, anthropic, openai};
use toolnexus_tests::fixtures::{hi as request, stream_hi as stream};
use toolnexus_tests::{echo, tool_results};

fn fast(builder: toolnexus::providers::HttpProviderBuilder) -> HttpProvider {
    builder
        .backoff_base(Duration::from_millis(1))
        .build()
        .unwrap()
}

#[tokio::test]
async fn anthropic_529_overloaded_is_retried_by_default() {
    let fake = FakeProvider::scripted([
        FakeReply::status(
            529,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        FakeReply::json(anthropic::text("fine", 1, 1)),
    ]).await;
    let turn = fast(fake.anthropic("k"))
        .complete(&request(), None)
        .await
        .unwrap();
    assert_eq!(turn.text.as_deref(), Some("fine"));
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn the_host_adds_statuses_to_retry() {
    let fake = FakeProvider::scripted([
        FakeReply::error(418, "brewing"),
        FakeReply::json(openai::text("tea", 1, 1)),
    ])
    .await;
    let turn = fast(fake.openai("k").retry_statuses([418]))
        .complete(&request(), None)
        .await
        .unwrap();
    assert_eq!(turn.text.as_deref(), Some("tea"));
    assert_eq!(fake.requests().len(), 2);

    // without it, 418 is final
    let fake = FakeProvider::scripted([FakeReply::error(418, "brewing")]).await;
    let err = fast(fake.openai("k"))
        .complete(&request(), None)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "provider returned HTTP 418: brewing");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_any_output_is_retried() {
    for anthropic_style in [false, true] {
        let fake = FakeProvider::start().await;
        let (events, builder) = if anthropic_style {
            // message_start, ping, an empty text block start: nothing of the reply yet
            (
                anthropic::stream_text(&["one ", "two"], 5, 5),
                fake.anthropic("k"),
            )
        } else {
            // the role chunk only
            (
                openai::stream_text(&["one ", "two"], 5, 5),
                fake.openai("k"),
            )
        };
        let keep = if anthropic_style { 3 } else { 1 };
        fake.script([
            FakeReply::sse(events.clone()).break_after(keep),
            FakeReply::sse(events),
        ]);
        let (result, deltas) = stream(&fast(builder)).await;
        assert_eq!(result.unwrap().text.as_deref(), Some("one two"));
        assert_eq!(deltas, ["one ", "two"], "nothing delivered twice");
        assert_eq!(fake.requests().len(), 2, "anthropic: {anthropic_style}");
    }
}

#[tokio::test]
async fn a_stream_cut_inside_a_tool_call_is_retried() {
    // a tool call reaches the caller only with the whole turn: nothing was shown yet
    let fake = FakeProvider::start().await;
    let events = openai::stream_tool_calls(&[("call_1", "echo", &["{\"te", "xt\":1}"])], 1, 1);
    fake.script([
        FakeReply::sse(events.clone()).break_after(2),
        FakeReply::sse(events),
    ]);
    let (result, deltas) = stream(&fast(fake.openai("k"))).await;
    let turn = result.unwrap();
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].arguments, json!({"text": 1}));
    assert!(deltas.is_empty());
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_after_a_text_delta_is_not_retried() {
    let fake =
        FakeProvider::scripted([
            FakeReply::sse(openai::stream_text(&["one ", "two"], 1, 1)).break_after(2)
        ])
        .await;
    let (result, deltas) = stream(&fast(fake.openai("k"))).await;
    toolnexus_tests::fixtures::assert_broken_mid_stream(&result.unwrap_err());
    assert_eq!(deltas, ["one "]);
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn two_anthropic_tool_use_blocks_sharing_an_index_are_a_protocol_error() {
    let fake = FakeProvider::start().await;
    let mut events = anthropic::stream_tool_uses(
        &[],
        &[("toolu_1", "echo", &["{}"]), ("toolu_2", "echo", &["{}"])],
        1,
        1,
    );
    // the second block claims index 0 as well
    for event in &mut events {
        if event.data.contains("toolu_2") {
            event.data = event.data.replace("\"index\":1", "\"index\":0");
        }
    }
    fake.push(FakeReply::sse(events));
    let (result, _) = stream(&fast(fake.anthropic("k"))).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "transport error: the provider streamed two content blocks with index 0"
    );
    assert_eq!(fake.requests().len(), 1, "a protocol error is not retried");
}

/// A whole Anthropic reply with one `tool_use` whose `input` is `raw_input` (raw JSON text).
fn raw_tool_use(raw_input: &str) -> FakeReply {
    let body = format!(
        r#"{{"id":"msg_1","type":"message","role":"assistant","model":"fake","content":[{{"type":"text","text":"calling"}},{{"type":"tool_use","id":"toolu_1","name":"echo","input":{raw_input}}}],"stop_reason":"tool_use","usage":{{"input_tokens":3,"output_tokens":2}}}}"#
    );
    FakeReply::Drip {
        status: 200,
        content_type: "application/json".to_owned(),
        start: body,
        piece: String::new(),
        times: Some(0),
        pause: Duration::ZERO,
    }
}

#[tokio::test]
async fn an_invalid_anthropic_tool_input_goes_back_to_the_model() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    // (the input, how the model is told: a prefix and a part of the parser's message)
    for (raw, prefix, why) in [
        (
            r#"{"text":"\ud800"}"#.to_owned(),
            "invalid arguments for echo: not valid JSON: ",
            "hex escape",
        ),
        (
            format!(r#"{{"text":{deep}}}"#),
            "invalid arguments for echo: nested more than 128 levels deep",
            "",
        ),
    ] {
        let fake = FakeProvider::scripted([
            raw_tool_use(&raw),
            FakeReply::json(anthropic::text("sorry", 1, 1)),
        ])
        .await;
        let (tool, calls) = echo();
        let toolkit = Toolkit::builder().tool(tool).build().unwrap();
        let client = Client::builder(fake.anthropic("k").build().unwrap())
            .model_name("m-1")
            .build()
            .unwrap();
        let result = client.run("echo this", &toolkit).await.unwrap();
        assert_eq!(result.status, RunStatus::Done);
        assert_eq!(result.text, "sorry");
        assert_eq!(calls.get(), 0, "the tool never ran");
        let content = assert_one_invalid_input(&result, prefix, why, "");
        // the model was told, in a tool_result block
        let sent = &fake.requests()[1].body;
        let blocks = sent["messages"].as_array().unwrap().last().unwrap()["content"].clone();
        assert_eq!(blocks[0]["type"], "tool_result");
        assert_eq!(blocks[0]["is_error"], true);
        assert_eq!(blocks[0]["content"].as_str(), Some(content.as_str()));
    }
}

#[tokio::test]
async fn a_reply_invalid_outside_tool_input_is_still_a_transport_error() {
    let fake = FakeProvider::scripted([FakeReply::text(
        200,
        r#"{"content":[{"type":"text","text":"\ud800"}]}"#,
    )])
    .await;
    let err = fast(fake.anthropic("k"))
        .complete(&request(), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "transport error: the provider's reply (HTTP 200) is not valid JSON"
    );
}

#[tokio::test]
async fn an_invalid_streamed_anthropic_tool_input_goes_back_to_the_model() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    // (the input_json_delta pieces, how the model is told: a prefix and a part of the
    // parser's message); the event stream itself is valid JSON throughout
    let pieces: [(Vec<String>, &str, &str); 4] = [
        (
            vec![r#"{"text":"\ud8"#.to_owned(), r#"00"}"#.to_owned()],
            "invalid arguments for echo: not valid JSON: ",
            "hex escape",
        ),
        (
            vec![r#"{"text":"#.to_owned(), deep.clone(), "}".to_owned()],
            "invalid arguments for echo: nested more than 128 levels deep",
            "",
        ),
        (
            vec![r#"{"text":"#.to_owned(), r#""a"#.to_owned()],
            "invalid arguments for echo: not valid JSON: ",
            "EOF",
        ),
        (
            vec!["[1,".to_owned(), "2]".to_owned()],
            "invalid arguments for echo: expected a JSON object, got an array",
            "",
        ),
    ];
    // the whole input in the block's start, invalid to serde_json there: the event itself
    // does not parse, yet only the tool input is wrong
    let starts = [
        (
            r#"{"text":"\ud800"}"#.to_owned(),
            "invalid arguments for echo: not valid JSON: ",
            "hex escape",
        ),
        (
            format!(r#"{{"text":{deep}}}"#),
            "invalid arguments for echo: nested more than 128 levels deep",
            "",
        ),
    ];
    let cases = pieces
        .into_iter()
        .map(|(pieces, prefix, why)| (pieces, None, prefix, why))
        .chain(
            starts
                .into_iter()
                .map(|(input, prefix, why)| (Vec::new(), Some(input), prefix, why)),
        );
    for (pieces, start_input, prefix, why) in cases {
        let case = format!("{pieces:?} {start_input:?}");
        let fake = FakeProvider::start().await;
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let mut events =
            anthropic::stream_tool_uses(&["calling"], &[("toolu_1", "echo", &refs)], 3, 2);
        if let Some(input) = &start_input {
            let start = events
                .iter_mut()
                .find(|e| e.data.contains("toolu_1"))
                .unwrap();
            assert!(start.data.contains(r#""input":{}"#));
            start.data = start
                .data
                .replace(r#""input":{}"#, &format!(r#""input":{input}"#));
        }
        fake.script([
            FakeReply::sse(events),
            FakeReply::sse(anthropic::stream_text(&["sorry"], 1, 1)),
        ]);
        let (tool, calls) = echo();
        let toolkit = Toolkit::builder().tool(tool).build().unwrap();
        let client = Client::builder(fake.anthropic("k").build().unwrap())
            .model_name("m-1")
            .build()
            .unwrap();
        let result = client.stream("echo this", &toolkit, |_| {}).await.unwrap();
        assert_eq!(result.status, RunStatus::Done, "{case}");
        assert_eq!(result.text, "sorry", "{case}");
        assert_eq!(calls.get(), 0, "{case}: the tool never ran");
        assert_eq!(
            fake.requests().len(),
            2,
            "{case}: no retry, the reply was read"
        );
        let content = assert_one_invalid_input(&result, prefix, why, &case);
        // the model was told, in a tool_result block, and its tool_use went back as `{}`
        let sent = &fake.requests()[1].body;
        let messages = sent["messages"].as_array().unwrap();
        let blocks = messages.last().unwrap()["content"].clone();
        assert_eq!(blocks[0]["type"], "tool_result");
        assert_eq!(blocks[0]["tool_use_id"], "toolu_1");
        assert_eq!(blocks[0]["is_error"], true);
        assert_eq!(blocks[0]["content"].as_str(), Some(content.as_str()));
        let assistant = &messages[messages.len() - 2]["content"];
        assert_eq!(assistant[1]["type"], "tool_use");
        assert_eq!(assistant[1]["input"], json!({}));
    }
}

/// The run's one tool result answers `toolu_1` as an error that starts with `prefix` and
/// says `why` (the invalid input went back to the model); returns its text.
#[track_caller]
fn assert_one_invalid_input(result: &RunResult, prefix: &str, why: &str, case: &str) -> String {
    let results = tool_results(&result.messages);
    assert_eq!(results.len(), 1, "{case}");
    let (id, content, is_error) = &results[0];
    assert_eq!(id, "toolu_1");
    assert!(is_error);
    assert!(
        content.starts_with(prefix) && content.contains(why),
        "{case}: {content}"
    );
    content.clone()
}
