//! Shared fixtures: the wire styles and their fake-provider clients, one client helper for
//! in-process models, and collectors for what a run streams.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use toolnexus::{
    CancellationToken, Client, Error, Event, HttpProvider, Message, Model, ModelRequest, Toolkit,
    client::ClientBuilder, model::ModelTurn, providers::HttpProviderBuilder,
};

use crate::fake_provider::{FakeProvider, FakeReply, anthropic, openai};

/// The model id the per-style clients send.
pub const MODEL: &str = "vendor/Model-1:beta";
/// The system prompt of the per-style clients.
pub const SYSTEM: &str = "You book flights.";

/// Which wire format a test speaks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Style {
    /// OpenAI chat completions.
    OpenAi,
    /// Anthropic messages.
    Anthropic,
}

/// Both styles, for tests that run once per wire format.
pub const STYLES: [Style; 2] = [Style::OpenAi, Style::Anthropic];

impl Style {
    /// A provider of this style aimed at `fake` (OpenAI-style under `/v1`), with `key`.
    pub fn provider(self, fake: &FakeProvider, key: &str) -> HttpProviderBuilder {
        match self {
            Self::OpenAi => HttpProvider::openai(format!("{}/v1", fake.url())),
            Self::Anthropic => HttpProvider::anthropic(fake.url()),
        }
        .api_key(key)
    }

    /// A client of this style on `fake` (key `sk-e2e`, 5 ms backoff), sending [`MODEL`] with
    /// the system prompt [`SYSTEM`].
    ///
    /// # Panics
    ///
    /// Never (the fake's URL is valid).
    pub fn client(self, fake: &FakeProvider) -> ClientBuilder {
        let provider = self
            .provider(fake, "sk-e2e")
            .backoff_base(Duration::from_millis(5))
            .build()
            .expect("a valid provider");
        Client::builder(provider).model_name(MODEL).system(SYSTEM)
    }

    /// A whole reply calling tools `(id, name, arguments)`.
    pub fn calls(self, calls: &[(&str, &str, Value)], usage: (u64, u64)) -> FakeReply {
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

    /// A whole text reply.
    pub fn text(self, text: &str, usage: (u64, u64)) -> FakeReply {
        FakeReply::json(match self {
            Self::OpenAi => openai::text(text, usage.0, usage.1),
            Self::Anthropic => anthropic::text(text, usage.0, usage.1),
        })
    }

    /// The tool results of a recorded request body, as `(id, content, is_error)`; OpenAI does
    /// not send `is_error`, so it reads `None` there.
    ///
    /// # Panics
    ///
    /// When `body` is not a request of this style.
    pub fn tool_results(self, body: &Value) -> Vec<(String, String, Option<bool>)> {
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

    /// `is_error` as this style sends it (OpenAI does not).
    pub fn is_error(self, e: bool) -> Option<bool> {
        match self {
            Self::OpenAi => None,
            Self::Anthropic => Some(e),
        }
    }
}

/// A `(id, content, is_error)` triple as [`Style::tool_results`] reads them.
pub fn result(id: &str, content: &str, is_error: Option<bool>) -> (String, String, Option<bool>) {
    (id.to_owned(), content.to_owned(), is_error)
}

/// A client builder for an in-process `model`, sending the model name `m`.
pub fn client_for(model: impl Model + 'static) -> ClientBuilder {
    Client::builder(model).model_name("m")
}

/// A client for an in-process `model` ([`client_for`]) with the system prompt `sys`, built.
///
/// # Panics
///
/// Never (the options are valid).
pub fn sys_client(model: impl Model + 'static) -> Client {
    client_for(model)
        .system("sys")
        .build()
        .expect("a valid client")
}

/// A sink for `Client::stream` collecting the text deltas, and what it collected.
pub fn text_deltas() -> (Arc<Mutex<Vec<String>>>, impl Fn(&Event) + Send + Sync) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |e: &Event| {
            if let Event::Text { delta } = e {
                seen.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(delta.clone());
            }
        }
    };
    (seen, sink)
}

/// An error and its sources, `: `-separated: everything a reader of the error learns.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Asserts that `err` is the transport error of a connection that broke mid-stream: the
/// message says what failed, and the HTTP client's error is its source, not repeated in it.
///
/// # Panics
///
/// When it is not.
pub fn assert_broken_mid_stream(err: &toolnexus::Error) {
    assert!(matches!(err, toolnexus::Error::Transport { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "transport error: the connection broke mid-stream"
    );
    assert!(
        error_chain(err).starts_with("transport error: the connection broke mid-stream: "),
        "{err}"
    );
}

/// The run an [`Error::Interrupted`] carries, after checking
/// that the stream under it broke mid-stream (see [`assert_broken_mid_stream`]).
///
/// # Panics
///
/// When `err` is not such an error.
pub fn assert_interrupted(err: &toolnexus::Error) -> &toolnexus::RunResult {
    let toolnexus::Error::Interrupted { error, run } = err else {
        panic!("not an interrupted stream: {err:?}");
    };
    assert_broken_mid_stream(error);
    assert_eq!(
        err.to_string(),
        "the run was interrupted: transport error: the connection broke mid-stream"
    );
    assert!(
        err.halted_run()
            .is_some_and(|r| std::ptr::eq(r, std::ptr::from_ref(&**run)))
    );
    assert_eq!(run.status, toolnexus::RunStatus::Incomplete);
    run
}

/// A host function that panics (what a bug in host code looks like).
///
/// # Panics
///
/// Always, with `message`.
pub fn host_panic<T>(message: &str) -> T {
    panic!("{message}")
}

/// A request to model `m-1` saying `hi`, offering no tools.
#[must_use]
pub fn hi() -> ModelRequest {
    ModelRequest::new("m-1", vec![Message::user("hi")], vec![])
}

/// One streamed turn of `provider` on [`hi`]: its result and the text deltas it streamed, in
/// order.
pub async fn stream_hi(provider: &HttpProvider) -> (Result<ModelTurn, Error>, Vec<String>) {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink_seen = seen.clone();
    let sink = move |d: &str| {
        sink_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(d.to_owned());
    };
    let result = provider.complete(&hi(), Some(&sink)).await;
    let deltas = seen.lock().unwrap_or_else(PoisonError::into_inner).clone();
    (result, deltas)
}

/// Runs `go` on `model` with `toolkit` and cancels the run 20 ms in: the error it ends with.
///
/// # Panics
///
/// When the run ends without an error.
pub async fn cancelled_run(model: impl Model + 'static, toolkit: &Toolkit) -> Error {
    let token = CancellationToken::new();
    let client = client_for(model)
        .cancellation(token.clone())
        .build()
        .expect("a valid client");
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    let err = client.run("go", toolkit).await.expect_err("the run fails");
    cancel.await.expect("the canceller finishes");
    err
}
