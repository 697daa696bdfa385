//! One tool of a consumed server as a [`Tool`]: a call (bounded by the builder's timeout,
//! which waits while a person answers), its multi-round-trip rounds, and the server's result
//! as a [`ToolResult`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, DEFAULT_MRTR_MAX_ROUNDS, ElicitRequest, ElicitResult, ElicitationAction,
    InputRequest, InputRequiredResult, InputResponses, RequestMetaObject, RequestParamsMeta,
    ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Map, Value};

use super::session::{CallWatch, answered, message_of};
use super::{Conn, ROUND_KEY, SOURCE_MCP};
use crate::context::Context;
use crate::mcp::elicit::{Incoming, incoming, refused_result};
use crate::request::Request;
use crate::result::ToolResult;
use crate::tool::{BoxFuture, Tool, ToolAnnotations};

/// One tool of an MCP server.
pub(super) struct McpTool {
    pub(super) name: String,
    pub(super) remote: String,
    pub(super) description: String,
    pub(super) schema: Value,
    /// The hints the server listed for it (its claims, not guarantees).
    pub(super) annotations: ToolAnnotations,
    pub(super) conn: Arc<Conn>,
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn source(&self) -> &str {
        SOURCE_MCP
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let conn = &*self.conn;
            let server = &conn.name;
            if conn.closed.load(Ordering::SeqCst) {
                return ToolResult::error(format!("MCP server \"{server}\" is closed"));
            }
            if conn.peer.is_transport_closed() {
                return ToolResult::error(format!(
                    "MCP server \"{server}\" is not running (its connection closed); tool `{}` cannot be called",
                    self.name
                ));
            }
            let mut params = CallToolRequestParams::new(self.remote.clone()).with_arguments(args);
            // the retry of an answered `input_required` round: the answer under its key, the
            // server's state echoed
            if let Some(retry) = retry_of(ctx) {
                match retry {
                    Ok((state, responses)) => {
                        params.request_state = state;
                        params.input_responses = Some(responses);
                    }
                    Err(e) => return ToolResult::error(e),
                }
            }
            let mut notes = Notes::default();
            for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
                let result = match self.send(params.clone(), ctx, &mut notes).await {
                    Ok(result) => result,
                    Err(failed) => return failed,
                };
                match result {
                    ServerResult::CallToolResult(result) => {
                        return notes.finish(server, from_mcp(&result));
                    }
                    ServerResult::InputRequiredResult(round) => {
                        match self.fulfil(round, ctx, &mut notes).await {
                            Round::Retry(state, responses) => {
                                params.request_state = state;
                                params.input_responses = Some(responses);
                            }
                            Round::Suspend(request) => return ToolResult::suspended(request),
                            Round::Failed(failed) => return failed,
                        }
                    }
                    ServerResult::CreateTaskResult(_) => {
                        return ToolResult::error(format!(
                            "MCP server \"{server}\" answered `{}` with a task, which this client did not ask for",
                            self.remote
                        ));
                    }
                    _ => {
                        return ToolResult::error(format!(
                            "MCP server \"{server}\" answered `{}` with something that is not a tool result",
                            self.remote
                        ));
                    }
                }
            }
            ToolResult::error(format!(
                "MCP server \"{server}\" still asked for input after {DEFAULT_MRTR_MAX_ROUNDS} rounds of `{}`",
                self.remote
            ))
        })
    }
}

/// The server's elicitations a call had declined or cancelled on its behalf.
#[derive(Default)]
struct Notes {
    unanswered: Vec<String>,
    refused: Vec<String>,
}

impl Notes {
    fn absorb(&mut self, watch: &CallWatch) {
        self.unanswered.extend(CallWatch::take(&watch.unanswered));
        self.refused.extend(CallWatch::take(&watch.refused));
    }

    /// The call's result, told what the model must know: a credential asked for and
    /// declined, a person needed and no one to ask.
    fn finish(self, server: &str, result: ToolResult) -> ToolResult {
        if !self.refused.is_empty() {
            return ToolResult::error(format!(
                "MCP server \"{server}\" asked for a credential, which is never collected through an elicitation, so it was declined ({}); the tool said: {}",
                self.refused.join("; "),
                result.output
            ));
        }
        if self.unanswered.is_empty() {
            return result;
        }
        ToolResult::error(format!(
            "MCP server \"{server}\" needed a human to answer \"{}\", but no one can answer here (no elicitation handler), so it was cancelled; the tool said: {}",
            self.unanswered.join("\", \""),
            result.output
        ))
    }
}

/// What an `input_required` round leads to.
enum Round {
    /// Retry with these responses and the echoed state.
    Retry(Option<String>, InputResponses),
    /// No handler: the call suspends with the server's question (the loop's `wait_for`, or a
    /// durable halt, answers it; the retry finds the round in `data.mcpRound`).
    Suspend(Request),
    Failed(ToolResult),
}

/// The `requestState` and `inputResponses` of the retry after an answered `input_required`
/// round: `None` for a first call.
fn retry_of(ctx: &Context) -> Option<Result<(Option<String>, InputResponses), String>> {
    let (request, answer) = (ctx.request()?, ctx.answer()?);
    let round = request.data.as_ref()?.get(ROUND_KEY)?;
    if answer.id != request.id {
        return Some(Err(format!(
            "the answer (id {}) does not answer the MCP server's request (id {})",
            answer.id, request.id
        )));
    }
    let Some(key) = round.get("inputKey").and_then(Value::as_str) else {
        return Some(Err(format!(
            "`data.{ROUND_KEY}` of the request names no inputKey"
        )));
    };
    let state = round
        .get("requestState")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut responses = InputResponses::new();
    responses.insert(
        key.to_owned(),
        serde_json::to_value(answered(request, answer)).unwrap_or(Value::Null),
    );
    Some(Ok((state, responses)))
}

/// The `_meta` of an input request inside an `input_required` result.
fn meta_of(request: &ElicitRequest) -> Option<Map<String, Value>> {
    request
        .extensions
        .get::<RequestMetaObject>()
        .or_else(|| request.params.meta())
        .map(|m| m.0.0.clone())
}

impl McpTool {
    /// Sends one `tools/call` and waits for its result: cancelled with the call, timed out
    /// after the timeout of silence (progress from the server, or a person answering one of
    /// its elicitations, restarts it).
    async fn send(
        &self,
        params: CallToolRequestParams,
        ctx: &Context,
        notes: &mut Notes,
    ) -> Result<ServerResult, ToolResult> {
        let conn = &*self.conn;
        let server = &conn.name;
        let timeout = match (ctx.timeout(), conn.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let failed = |e: &dyn fmt::Display| {
            ToolResult::error(format!(
                "MCP server \"{server}\" failed to run `{}`: {e}",
                self.remote
            ))
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = conn
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| failed(&e))?;
        let id = handle.id.clone();
        let watch = Arc::new(CallWatch {
            progress_token: Some(handle.progress_token.clone()),
            ..CallWatch::default()
        });
        conn.in_flight.insert(id.clone(), Arc::clone(&watch));
        let outcome = self
            .wait(handle.await_response(), ctx, timeout, &watch)
            .await;
        conn.in_flight.remove(&id);
        notes.absorb(&watch);
        let cancel = |reason: String| async {
            let _ = conn
                .peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id.clone()),
                    Some(reason),
                ))
                .await;
        };
        match outcome {
            Waited::Done(Ok(result)) => Ok(result),
            Waited::Done(Err(e)) => Err(failed(&e)),
            Waited::Cancelled => {
                cancel("cancelled".to_owned()).await;
                Err(ToolResult::error(format!("cancelled: {}", self.name)))
            }
            Waited::TimedOut(t) => {
                cancel("timeout".to_owned()).await;
                Err(ToolResult::error(format!(
                    "MCP server \"{server}\" did not answer `{}` within {t:?}",
                    self.remote
                )))
            }
        }
    }

    async fn wait<F: Future<Output = T>, T>(
        &self,
        response: F,
        ctx: &Context,
        timeout: Option<Duration>,
        watch: &CallWatch,
    ) -> Waited<T> {
        let mut response = std::pin::pin!(response);
        loop {
            let silence = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Waited::Cancelled,
                done = &mut response => return Waited::Done(done),
                () = watch.touched.notified() => {}
                () = silence => {
                    if watch.asking.load(Ordering::SeqCst) == 0 {
                        return Waited::TimedOut(timeout.unwrap_or_default());
                    }
                }
            }
        }
    }

    /// One `input_required` round: each elicitation passes the trust boundary, then goes to
    /// the host's handler; without one, a single elicitation suspends the call.
    async fn fulfil(&self, round: InputRequiredResult, ctx: &Context, notes: &mut Notes) -> Round {
        let server = &self.conn.name;
        let requests = round.input_requests.unwrap_or_default();
        let elicitations: Vec<(String, ElicitRequest)> = requests
            .into_iter()
            .filter_map(|(key, r)| match r {
                InputRequest::Elicitation(e) => Some((key, e)),
                _ => None,
            })
            .collect();
        let mut responses = InputResponses::new();
        let lone = elicitations.len() == 1;
        for (key, e) in elicitations {
            let meta = meta_of(&e);
            let result = match incoming(server, &e.params, meta.as_ref()) {
                Incoming::Refused(why) => {
                    notes.refused.push(why.to_string());
                    refused_result(&why)
                }
                Incoming::Ask(request) => match &self.conn.host {
                    Some(host) => {
                        let answer = tokio::select! {
                            biased;
                            () = ctx.cancellation().cancelled() => {
                                return Round::Failed(ToolResult::error(format!("cancelled: {}", self.name)));
                            }
                            answer = host(request.clone()) => answer,
                        };
                        answered(&request, &answer)
                    }
                    None if lone => {
                        let round = serde_json::json!({
                            "requestState": round.request_state,
                            "inputKey": key,
                        });
                        return Round::Suspend(request.with_data_entry(ROUND_KEY, round));
                    }
                    None => {
                        notes.unanswered.push(message_of(&e.params));
                        ElicitResult::new(ElicitationAction::Cancel)
                    }
                },
                Incoming::Unknown => ElicitResult::new(ElicitationAction::Cancel),
            };
            responses.insert(key, serde_json::to_value(result).unwrap_or(Value::Null));
        }
        Round::Retry(round.request_state, responses)
    }
}

enum Waited<T> {
    Done(T),
    Cancelled,
    TimedOut(Duration),
}

/// An MCP tool result as a [`ToolResult`]: text blocks joined by newlines (other blocks named
/// by kind), or the structured content as JSON when there is no content.
fn from_mcp(result: &CallToolResult) -> ToolResult {
    let (text, parts) = crate::mcp::content::from_mcp(&result.content);
    let output = text.unwrap_or_else(|| {
        result
            .structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    });
    let mut out = if result.is_error == Some(true) {
        ToolResult::error(output)
    } else {
        ToolResult::success(output)
    };
    out.parts = parts;
    out
}
