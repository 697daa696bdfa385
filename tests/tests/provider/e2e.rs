//! The agent loop over HTTP, end to end: a [`Client`] driving an [`HttpProvider`] against the
//! fake provider in both wire formats. The suspension story (with and without `wait_for`, two
//! suspensions in one turn, durable resume) and streaming event order.

use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::{
    CancellationToken, Error, PendingRun, Request, RunStatus, Toolkit, Usage,
    request::DeclineReason,
};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, RecordedRequest, anthropic, openai};
use toolnexus_tests::fixtures::{MODEL, STYLES, SYSTEM, Style, result};
use toolnexus_tests::{Log, asker};

fn book_flight_toolkit() -> Toolkit {
    let (tool, _) = asker("book_flight", "Which city?");
    Toolkit::builder().tool(tool).build().unwrap()
}

/// What `fake` received: two requests, the second carrying both askers' answered results.
#[track_caller]
fn both_answered(style: Style, fake: &FakeProvider) -> Vec<RecordedRequest> {
    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        style.tool_results(&sent[1].body),
        [
            result("call_c", "ask_city got \"Oslo\"", style.is_error(false)),
            result("call_d", "ask_date got \"May 1\"", style.is_error(false)),
        ],
        "{style:?}"
    );
    sent
}

/// A fake of `style` that first calls `book_flight` for AI-503 (`call_1`, usage 10 + 2),
/// then says `text` (usage 20 + 3).
async fn booking(style: Style, text: &str) -> FakeProvider {
    FakeProvider::scripted([
        style.calls(
            &[("call_1", "book_flight", json!({"flight": "AI-503"}))],
            (10, 2),
        ),
        style.text(text, (20, 3)),
    ])
    .await
}

#[tokio::test]
async fn wait_for_answers_in_process_and_the_result_goes_back_in_each_wire_format() {
    for style in STYLES {
        let fake = booking(style, "Booked to Oslo.").await;
        let client = style
            .client(&fake)
            .wait_for(|req: Request| async move { req.accept("Oslo") })
            .build()
            .unwrap();
        let run = client
            .run("Book AI-503", &book_flight_toolkit())
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Done, "{style:?}");
        assert_eq!(run.text, "Booked to Oslo.");
        assert_eq!(run.turns, 2);
        assert_eq!(run.usage, Usage::new(30, 5));
        assert_eq!(run.model, MODEL);
        assert_eq!(run.tool_calls[0].output, "book_flight got \"Oslo\"");

        let sent = fake.requests();
        assert_eq!(sent.len(), 2);
        let tools_openai = json!([{"type": "function", "function": {"name": "book_flight", "description": "Asks a human.", "parameters": {"type": "object", "properties": {}, "additionalProperties": false}}}]);
        let tools_anthropic = json!([{"name": "book_flight", "description": "Asks a human.", "input_schema": {"type": "object", "properties": {}, "additionalProperties": false}}]);
        let expected = match style {
            Style::OpenAi => json!({
                "model": MODEL,
                "messages": [
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": "Book AI-503"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "book_flight", "arguments": "{\"flight\":\"AI-503\"}"}},
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "book_flight got \"Oslo\""},
                ],
                "tools": tools_openai,
            }),
            Style::Anthropic => json!({
                "model": MODEL,
                "max_tokens": 4096,
                "system": SYSTEM,
                "messages": [
                    {"role": "user", "content": "Book AI-503"},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "call_1", "name": "book_flight", "input": {"flight": "AI-503"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "content": "book_flight got \"Oslo\"", "is_error": false},
                    ]},
                ],
                "tools": tools_anthropic,
            }),
        };
        assert_eq!(sent[1].body, expected, "{style:?}");
        for r in &sent {
            assert_eq!(r.body["model"], MODEL, "the model id on every turn");
        }
    }
}

#[tokio::test]
async fn a_declined_answer_reaches_the_model_as_an_error_result() {
    for style in STYLES {
        let fake = FakeProvider::scripted([
            style.calls(&[("call_1", "book_flight", json!({}))], (1, 1)),
            style.text("Maybe later.", (1, 1)),
        ])
        .await;
        let client = style
            .client(&fake)
            .wait_for(|req: Request| async move { req.decline(DeclineReason::Declined) })
            .build()
            .unwrap();
        let run = client.run("Book", &book_flight_toolkit()).await.unwrap();
        assert_eq!(run.status, RunStatus::Done);
        assert_eq!(run.text, "Maybe later.");
        assert_eq!(
            style.tool_results(&fake.requests()[1].body),
            [result(
                "call_1",
                "declined/expired: Which city?",
                style.is_error(true)
            )],
            "{style:?}"
        );
    }
}

#[tokio::test]
async fn without_wait_for_the_run_halts_and_a_new_client_resumes_it() {
    for style in STYLES {
        let fake = booking(style, "Booked to Rome.").await;
        let toolkit = book_flight_toolkit();
        let halted = style
            .client(&fake)
            .build()
            .unwrap()
            .run("Book AI-503", &toolkit)
            .await
            .unwrap();
        assert_eq!(halted.status, RunStatus::Pending, "{style:?}");
        assert_eq!(halted.text, "Which city?");
        let pending = halted.pending.clone().unwrap();
        assert_eq!(pending.id, "book_flight-1");
        assert_eq!(
            fake.requests().len(),
            1,
            "halting does not call the model again"
        );

        // persist, then resume from the JSON with a fresh provider and client
        let json = PendingRun::try_from(&halted).unwrap().to_json();
        let record = PendingRun::from_json(&json).unwrap();
        let resumed = style
            .client(&fake)
            .build()
            .unwrap()
            .resume(record, pending.accept("Rome"), &toolkit)
            .await
            .unwrap();
        assert_eq!(resumed.status, RunStatus::Done);
        assert_eq!(resumed.text, "Booked to Rome.");
        assert_eq!(resumed.usage, Usage::new(30, 5));

        let sent = fake.requests();
        assert_eq!(sent.len(), 2);
        assert_eq!(
            style.tool_results(&sent[1].body),
            [result(
                "call_1",
                "book_flight got \"Rome\"",
                style.is_error(false)
            )],
            "{style:?}"
        );
        assert!(sent.iter().all(|r| r.body["model"] == MODEL));
    }
}

fn two_askers() -> Toolkit {
    let (city, _) = asker("ask_city", "Which city?");
    let (date, _) = asker("ask_date", "Which date?");
    Toolkit::builder().tool(city).tool(date).build().unwrap()
}

fn two_calls(style: Style) -> FakeReply {
    style.calls(
        &[
            ("call_c", "ask_city", json!({})),
            ("call_d", "ask_date", json!({})),
        ],
        (5, 5),
    )
}

#[tokio::test]
async fn two_suspensions_in_one_turn_with_wait_for() {
    for style in STYLES {
        let fake = FakeProvider::scripted([two_calls(style), style.text("Booked.", (5, 5))]).await;
        let client = style
            .client(&fake)
            .wait_for(|req: Request| async move {
                let answer = if req.prompt == "Which city?" {
                    "Oslo"
                } else {
                    "May 1"
                };
                req.accept(answer)
            })
            .build()
            .unwrap();
        let run = client.run("Book", &two_askers()).await.unwrap();
        assert_eq!(run.status, RunStatus::Done);
        let sent = both_answered(style, &fake);
        if style == Style::Anthropic {
            // both results in ONE user message
            let last = sent[1].body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            assert_eq!(last["role"], "user");
            assert_eq!(last["content"].as_array().unwrap().len(), 2);
        }
    }
}

#[tokio::test]
async fn two_suspensions_in_one_turn_without_wait_for_halt_in_call_order_and_resume_twice() {
    for style in STYLES {
        let fake = FakeProvider::scripted([two_calls(style), style.text("Booked.", (5, 5))]).await;
        let toolkit = two_askers();
        let client = style.client(&fake).build().unwrap();

        let first = client.run("Book", &toolkit).await.unwrap();
        assert_eq!(first.status, RunStatus::Pending, "{style:?}");
        let asked = first.pending.clone().unwrap();
        assert_eq!(
            (asked.id.as_str(), asked.prompt.as_str()),
            ("ask_city-1", "Which city?")
        );

        let record = PendingRun::try_from(&first).unwrap();
        let second = client
            .resume(record, asked.accept("Oslo"), &toolkit)
            .await
            .unwrap();
        assert_eq!(
            second.status,
            RunStatus::Pending,
            "the second call asks in turn"
        );
        let asked = second.pending.clone().unwrap();
        assert_eq!(asked.prompt, "Which date?");
        assert_eq!(
            fake.requests().len(),
            1,
            "no model call while the turn is unresolved"
        );

        let record = PendingRun::try_from(&second).unwrap();
        let done = client
            .resume(record, asked.accept("May 1"), &toolkit)
            .await
            .unwrap();
        assert_eq!(done.status, RunStatus::Done);
        assert_eq!(done.text, "Booked.");
        both_answered(style, &fake);
    }
}

#[tokio::test]
async fn streaming_yields_real_deltas_in_event_order_over_both_styles() {
    for style in STYLES {
        let fake = FakeProvider::start().await;
        let (first, second) = match style {
            Style::OpenAi => (
                openai::stream_tool_calls(
                    &[("call_1", "book_flight", &["{\"flight\":", "\"AI-503\"}"])],
                    10,
                    2,
                ),
                openai::stream_text(&["Booked ", "to ", "Oslo."], 20, 3),
            ),
            Style::Anthropic => (
                anthropic::stream_tool_uses(
                    &[],
                    &[("call_1", "book_flight", &["{\"flight\":", "\"AI-503\"}"])],
                    10,
                    2,
                ),
                anthropic::stream_text(&["Booked ", "to ", "Oslo."], 20, 3),
            ),
        };
        fake.script([FakeReply::sse(first), FakeReply::sse(second)]);
        let client = style
            .client(&fake)
            .wait_for(|req: Request| async move { req.accept("Oslo") })
            .build()
            .unwrap();
        let log = Log::default();
        let run = client
            .stream("Book AI-503", &book_flight_toolkit(), log.sink())
            .await
            .unwrap();
        let events = log.all();
        let last = events.last().unwrap().clone();
        assert_eq!(
            events,
            vec![
                json!({"type": "usage", "usage": {"promptTokens": 10, "completionTokens": 2, "totalTokens": 12}}),
                json!({"type": "tool_call", "id": "call_1", "name": "book_flight", "args": {"flight": "AI-503"}}),
                json!({"type": "pending", "request": {"id": "book_flight-1", "kind": "input", "prompt": "Which city?"}}),
                json!({"type": "tool_result", "id": "call_1", "name": "book_flight", "output": "book_flight got \"Oslo\"", "isError": false}),
                json!({"type": "text", "delta": "Booked "}),
                json!({"type": "text", "delta": "to "}),
                json!({"type": "text", "delta": "Oslo."}),
                json!({"type": "usage", "usage": {"promptTokens": 20, "completionTokens": 3, "totalTokens": 23}}),
                last.clone(),
            ],
            "{style:?}"
        );
        assert_eq!(last["type"], "done");
        assert_eq!(last["result"], serde_json::to_value(&run).unwrap());
        assert_eq!(run.text, "Booked to Oslo.");
        assert_eq!(run.usage, Usage::new(30, 5));
        assert!(fake.requests().iter().all(|r| r.body["stream"] == true));
    }
}

#[tokio::test]
async fn the_run_timeout_and_cancellation_abort_the_request_in_flight() {
    for style in STYLES {
        let fake =
            FakeProvider::scripted([FakeReply::Hang, style.text("never read", (1, 1))]).await;
        let client = style
            .client(&fake)
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap();
        let started = Instant::now();
        let err = client
            .run("Book", &book_flight_toolkit())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Timeout(_)), "{style:?}: {err:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(fake.requests().len(), 1);
        assert_eq!(fake.remaining(), 1, "not retried");

        let fake =
            FakeProvider::scripted([FakeReply::Hang, style.text("never read", (1, 1))]).await;
        let token = CancellationToken::new();
        let client = style
            .client(&fake)
            .cancellation(token.clone())
            .build()
            .unwrap();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            token.cancel();
        });
        let err = client
            .run("Book", &book_flight_toolkit())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Cancelled), "{style:?}: {err:?}");
        assert_eq!(fake.requests().len(), 1);
        assert_eq!(fake.remaining(), 1, "not retried");
    }
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_status_and_message() {
    for style in STYLES {
        let fake = FakeProvider::scripted([FakeReply::error(
            404,
            "model `vendor/Model-1:beta` not found",
        )])
        .await;
        let client = style.client(&fake).build().unwrap();
        let err = client
            .run("Book", &book_flight_toolkit())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "provider returned HTTP 404: model `vendor/Model-1:beta` not found",
            "{style:?}"
        );
    }
}

/// Whether `id` is an id a provider filled: `call_<16 lowercase hex digits>_<index>`.
fn filled(id: &str, index: usize) -> bool {
    id.strip_prefix("call_")
        .and_then(|rest| rest.strip_suffix(&format!("_{index}")))
        .is_some_and(|hex| {
            hex.len() == 16
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        })
}

#[tokio::test]
async fn calls_without_ids_get_ids_unique_across_turns_in_both_styles() {
    for style in STYLES {
        for streamed in [false, true] {
            let fake = FakeProvider::start().await;
            // two tool turns whose calls carry no id (an empty one reads as none), then text
            let turn = |text: &str| -> FakeReply {
                let args = format!("{{\"text\":\"{text}\"}}");
                match (style, streamed) {
                    (_, false) => style.calls(
                        &[
                            ("", "echo", json!({"text": text})),
                            ("", "echo", json!({"text": "z"})),
                        ],
                        (1, 1),
                    ),
                    (Style::OpenAi, true) => FakeReply::sse(openai::stream_tool_calls(
                        &[
                            ("", "echo", &[args.as_str()]),
                            ("", "echo", &["{\"text\":\"z\"}"]),
                        ],
                        1,
                        1,
                    )),
                    (Style::Anthropic, true) => FakeReply::sse(anthropic::stream_tool_uses(
                        &[],
                        &[
                            ("", "echo", &[args.as_str()]),
                            ("", "echo", &["{\"text\":\"z\"}"]),
                        ],
                        1,
                        1,
                    )),
                }
            };
            let last = if streamed {
                match style {
                    Style::OpenAi => FakeReply::sse(openai::stream_text(&["done"], 1, 1)),
                    Style::Anthropic => FakeReply::sse(anthropic::stream_text(&["done"], 1, 1)),
                }
            } else {
                style.text("done", (1, 1))
            };
            fake.script([turn("a"), turn("b"), last]);
            let (tool, calls) = toolnexus_tests::echo();
            let toolkit = Toolkit::builder().tool(tool).build().unwrap();
            let client = style.client(&fake).build().unwrap();
            let run = if streamed {
                client.stream("echo twice", &toolkit, |_| {}).await
            } else {
                client.run("echo twice", &toolkit).await
            }
            .unwrap();
            let case = format!("{style:?}, streamed: {streamed}");
            assert_eq!(run.status, RunStatus::Done, "{case}");
            assert_eq!(calls.get(), 4, "{case}");
            let ids: Vec<Vec<String>> = run
                .messages
                .iter()
                .filter(|m| !m.tool_calls.is_empty())
                .map(|m| m.tool_calls.iter().map(|c| c.id.clone()).collect())
                .collect();
            assert_eq!(ids.len(), 2, "{case}");
            for turn in &ids {
                assert!(
                    filled(&turn[0], 0) && filled(&turn[1], 1),
                    "{case}: {turn:?}"
                );
                // one stem per reply
                assert_eq!(
                    turn[0].rsplit_once('_').unwrap().0,
                    turn[1].rsplit_once('_').unwrap().0,
                    "{case}"
                );
            }
            let all: std::collections::HashSet<&String> = ids.iter().flatten().collect();
            assert_eq!(all.len(), 4, "{case}: ids repeat across turns: {ids:?}");
            // each result answers its own call, on the wire too
            let sent = style.tool_results(&fake.requests()[2].body);
            let expected = [
                result(&ids[0][0], "a", style.is_error(false)),
                result(&ids[0][1], "z", style.is_error(false)),
                result(&ids[1][0], "b", style.is_error(false)),
                result(&ids[1][1], "z", style.is_error(false)),
            ];
            assert_eq!(sent, expected, "{case}");
        }
    }
}
