//! The agent loop over HTTP, end to end: a [`Client`] driving an [`HttpProvider`] against the
//! fake provider in both wire formats. The suspension story (with and without `wait_for`, two
//! suspensions in one turn, durable resume) and streaming event order.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::{
    CancellationToken, Client, Error, HttpProvider, PendingRun, Request, RunStatus, Toolkit, Usage,
    request::DeclineReason,
};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, anthropic, openai};
use toolnexus_tests::{Log, asker};

const MODEL: &str = "vendor/Model-1:beta";
const SYSTEM: &str = "You book flights.";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Style {
    OpenAi,
    Anthropic,
}

const STYLES: [Style; 2] = [Style::OpenAi, Style::Anthropic];

impl Style {
    fn provider(self, fake: &FakeProvider) -> HttpProvider {
        match self {
            Self::OpenAi => HttpProvider::openai(format!("{}/v1", fake.url())),
            Self::Anthropic => HttpProvider::anthropic(fake.url()),
        }
        .api_key("sk-e2e")
        .backoff_base(Duration::from_millis(5))
        .build()
        .unwrap()
    }

    fn client(self, fake: &FakeProvider) -> toolnexus::client::ClientBuilder {
        Client::builder(self.provider(fake))
            .model_name(MODEL)
            .system(SYSTEM)
    }

    /// A whole reply calling tools `(id, name, arguments)`.
    fn calls(self, calls: &[(&str, &str, Value)], usage: (u64, u64)) -> FakeReply {
        FakeReply::json(match self {
            Self::OpenAi => {
                let raw: Vec<(String, String, String)> = calls
                    .iter()
                    .map(|(i, n, a)| ((*i).to_owned(), (*n).to_owned(), a.to_string()))
                    .collect();
                let refs: Vec<(&str, &str, &str)> = raw
                    .iter()
                    .map(|(i, n, a)| (i.as_str(), n.as_str(), a.as_str()))
                    .collect();
                openai::tool_calls(&refs, usage.0, usage.1)
            }
            Self::Anthropic => {
                let owned: Vec<(&str, &str, Value)> =
                    calls.iter().map(|(i, n, a)| (*i, *n, a.clone())).collect();
                anthropic::tool_uses(None, &owned, usage.0, usage.1)
            }
        })
    }

    fn text(self, text: &str, usage: (u64, u64)) -> FakeReply {
        FakeReply::json(match self {
            Self::OpenAi => openai::text(text, usage.0, usage.1),
            Self::Anthropic => anthropic::text(text, usage.0, usage.1),
        })
    }

    /// The tool results of a recorded request body, as `(id, content, is_error)`; OpenAI does
    /// not send `is_error`, so it reads `None` there.
    fn tool_results(self, body: &Value) -> Vec<(String, String, Option<bool>)> {
        let messages = body["messages"].as_array().unwrap();
        match self {
            Self::OpenAi => messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| {
                    (
                        m["tool_call_id"].as_str().unwrap().to_owned(),
                        m["content"].as_str().unwrap().to_owned(),
                        None,
                    )
                })
                .collect(),
            Self::Anthropic => messages
                .iter()
                .filter_map(|m| m["content"].as_array())
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| {
                    (
                        b["tool_use_id"].as_str().unwrap().to_owned(),
                        b["content"].as_str().unwrap().to_owned(),
                        b["is_error"].as_bool(),
                    )
                })
                .collect(),
        }
    }

    fn is_error(self, e: bool) -> Option<bool> {
        match self {
            Self::OpenAi => None,
            Self::Anthropic => Some(e),
        }
    }
}

fn result(id: &str, content: &str, is_error: Option<bool>) -> (String, String, Option<bool>) {
    (id.to_owned(), content.to_owned(), is_error)
}

fn book_flight_toolkit() -> Toolkit {
    let (tool, _) = asker("book_flight", "Which city?");
    Toolkit::builder().tool(tool).build().unwrap()
}

#[tokio::test]
async fn wait_for_answers_in_process_and_the_result_goes_back_in_each_wire_format() {
    for style in STYLES {
        let fake = FakeProvider::start().await;
        fake.script([
            style.calls(
                &[("call_1", "book_flight", json!({"flight": "AI-503"}))],
                (10, 2),
            ),
            style.text("Booked to Oslo.", (20, 3)),
        ]);
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
        let tools_openai = json!([{"type": "function", "function": {"name": "book_flight", "description": "Asks a human.", "parameters": {"type": "object", "properties": {}}}}]);
        let tools_anthropic = json!([{"name": "book_flight", "description": "Asks a human.", "input_schema": {"type": "object", "properties": {}}}]);
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
        let fake = FakeProvider::start().await;
        fake.script([
            style.calls(&[("call_1", "book_flight", json!({}))], (1, 1)),
            style.text("Maybe later.", (1, 1)),
        ]);
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
        let fake = FakeProvider::start().await;
        fake.script([
            style.calls(
                &[("call_1", "book_flight", json!({"flight": "AI-503"}))],
                (10, 2),
            ),
            style.text("Booked to Rome.", (20, 3)),
        ]);
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
            .resume(&record, pending.accept("Rome"), &toolkit)
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
        let fake = FakeProvider::start().await;
        fake.script([two_calls(style), style.text("Booked.", (5, 5))]);
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
        let fake = FakeProvider::start().await;
        fake.script([two_calls(style), style.text("Booked.", (5, 5))]);
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
            .resume(&record, asked.accept("Oslo"), &toolkit)
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
            .resume(&record, asked.accept("May 1"), &toolkit)
            .await
            .unwrap();
        assert_eq!(done.status, RunStatus::Done);
        assert_eq!(done.text, "Booked.");
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
        let fake = FakeProvider::start().await;
        fake.script([FakeReply::Hang, style.text("never read", (1, 1))]);
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

        let fake = FakeProvider::start().await;
        fake.script([FakeReply::Hang, style.text("never read", (1, 1))]);
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
        let fake = FakeProvider::start().await;
        fake.push(FakeReply::error(
            404,
            "model `vendor/Model-1:beta` not found",
        ));
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
