//! The Anthropic messages wire format.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use reqwest::header::{HeaderName, HeaderValue};

use super::ANTHROPIC_VERSION;
use super::dialect::{Dialect, EventParser};
use super::wire::{filled_call_id, parse_arguments, require_finished, usage};
use crate::adapters;
use crate::error::Error;
use crate::json_text;
use crate::model::{DeltaSink, Message, ModelRequest, ModelTurn, Role, ToolCall, Usage};
use crate::result::{ContentPart, PART_FILE, PART_IMAGE, PART_RESOURCE};

/// Anthropic messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
pub(crate) struct AnthropicMessages;

impl Dialect for AnthropicMessages {
    /// `/v1` is added only when the base does not end with it.
    fn endpoint(&self, base: &str) -> String {
        if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        }
    }

    fn home_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[("api.anthropic.com", "ANTHROPIC_API_KEY")]
    }

    fn auth_header(&self, key: &str) -> (HeaderName, String) {
        (HeaderName::from_static("x-api-key"), key.to_owned())
    }

    fn fixed_headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        vec![(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        )]
    }

    fn body(
        &self,
        request: &ModelRequest,
        model: &str,
        max_tokens: u32,
        stream: bool,
    ) -> Result<Map<String, Value>, Error> {
        body(request, model, max_tokens, stream)
    }

    fn parse_reply(&self, reply: &Value) -> Result<ModelTurn, Error> {
        parse(reply)
    }

    /// A reply whose `tool_use.input` is invalid JSON to `serde_json` (a lone surrogate,
    /// nesting past its depth limit): that block's input is kept as its raw text, so the loop
    /// answers the model with an invalid-arguments tool result (as for an OpenAI-style
    /// argument string that does not parse) instead of failing the run.
    fn parse_lenient(&self, bytes: &[u8]) -> Option<ModelTurn> {
        parse_lenient(bytes)
    }

    fn event_parser(&self) -> Box<dyn EventParser> {
        Box::<StreamState>::default()
    }
}

/// The request body: `{"model","max_tokens","system"?,"messages","tools"?,"stream"?}`. System
/// messages go to the top-level `system` field (joined by a blank line when there are
/// several); consecutive tool results become one `user` message of `tool_result` blocks.
fn body(
    request: &ModelRequest,
    model: &str,
    max_tokens: u32,
    stream: bool,
) -> Result<Map<String, Value>, Error> {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .filter_map(|m| m.content.as_deref())
        .collect();
    let mut body = Map::new();
    body.insert("model".to_owned(), Value::String(model.to_owned()));
    body.insert("max_tokens".to_owned(), Value::from(max_tokens));
    if !system.is_empty() {
        body.insert("system".to_owned(), Value::String(system.join("\n\n")));
    }
    body.insert(
        "messages".to_owned(),
        Value::Array(messages(&request.messages)),
    );
    if !request.tools.is_empty() {
        body.insert(
            "tools".to_owned(),
            adapters::anthropic(&request.tools)?.into_value(),
        );
    }
    if stream {
        body.insert("stream".to_owned(), Value::Bool(true));
    }
    Ok(body)
}

/// A `tool_result` block's content: the text alone, or, with content parts, a list of blocks
/// (the text first, then `image` for an image, `document` for a file, `text` for an embedded
/// text resource; a part that has no such form, audio say, becomes a text block naming it).
fn tool_result_content(m: &Message) -> Value {
    let text = m.content.clone().unwrap_or_default();
    if m.parts.is_empty() {
        return Value::String(text);
    }
    let mut blocks = vec![json!({"type": "text", "text": text})];
    blocks.extend(m.parts.iter().map(part_block));
    Value::Array(blocks)
}

fn part_block(p: &ContentPart) -> Value {
    let block = match p.kind.as_str() {
        PART_IMAGE => "image",
        PART_FILE => "document",
        PART_RESOURCE if p.embedded_text().is_some() => {
            return json!({"type": "text", "text": p.embedded_text()});
        }
        _ => return json!({"type": "text", "text": p.placeholder()}),
    };
    let source = match (&p.data, &p.mime_type, &p.url) {
        (Some(data), Some(mime), _) => {
            json!({"type": "base64", "media_type": mime, "data": data})
        }
        (_, _, Some(url)) => json!({"type": "url", "url": url}),
        _ => return json!({"type": "text", "text": p.placeholder()}),
    };
    json!({"type": block, "source": source})
}

fn messages(transcript: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for m in transcript {
        if m.role == Role::Tool {
            results.push(json!({
                "type": "tool_result",
                "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                "content": tool_result_content(m),
                "is_error": m.is_error,
            }));
            continue;
        }
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        match m.role {
            Role::System | Role::Tool => {}
            Role::User => {
                out.push(json!({"role": "user", "content": m.content.clone().unwrap_or_default()}));
            }
            Role::Assistant if m.tool_calls.is_empty() => {
                out.push(json!({
                    "role": "assistant",
                    "content": m.content.clone().unwrap_or_default(),
                }));
            }
            Role::Assistant => {
                let mut blocks = Vec::new();
                if let Some(text) = m.content.as_deref().filter(|t| !t.is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in &m.tool_calls {
                    // Anthropic takes `input` as an object only; arguments that were not a JSON
                    // object are sent as `{}` (the tool result already told the model why).
                    let input = if c.arguments.is_object() {
                        c.arguments.clone()
                    } else {
                        Value::Object(Map::new())
                    };
                    blocks.push(json!({
                        "type": "tool_use", "id": c.id, "name": c.name, "input": input,
                    }));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
        }
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "content": results}));
    }
    out
}

/// A whole (non-streamed) reply: `content` blocks (`text`, `tool_use`) and `usage`.
fn parse(reply: &Value) -> Result<ModelTurn, Error> {
    let blocks = reply
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::transport("the provider's reply has no `content`"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let stem = std::cell::OnceCell::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map_or_else(|| filled_call_id(&stem, tool_calls.len()), str::to_owned);
                tool_calls.push(ToolCall::new(
                    id,
                    block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                    block
                        .get("input")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                ));
            }
            _ => {}
        }
    }
    Ok(ModelTurn {
        text: Some(text).filter(|t| !t.is_empty()),
        tool_calls,
        usage: reply.get("usage").and_then(usage),
    })
}

/// A `tool_use` block read with its `input` left raw: `(id, name, input)`.
fn raw_tool_use(block: &str) -> Option<(String, String, &str)> {
    let (mut kind, mut id, mut name, mut input) = (None, String::new(), String::new(), None);
    for (key, raw) in json_text::raw_members(block)? {
        match key.as_str() {
            "type" => kind = Some(serde_json::from_str::<String>(raw).ok()?),
            "id" => id = serde_json::from_str(raw).ok()?,
            "name" => name = serde_json::from_str(raw).ok()?,
            "input" => input = Some(raw),
            _ => {}
        }
    }
    (kind.as_deref() == Some("tool_use")).then_some(())?;
    Some((id, name, input?))
}

/// A reply `serde_json` cannot read whole, read with each content block left raw.
fn parse_lenient(bytes: &[u8]) -> Option<ModelTurn> {
    let mut content = None;
    let mut usage = None;
    for (key, raw) in json_text::raw_members(std::str::from_utf8(bytes).ok()?)? {
        match key.as_str() {
            "content" => content = Some(json_text::raw_elements(raw)?),
            "usage" => usage = Some(serde_json::from_str::<Value>(raw).ok()?),
            _ => {}
        }
    }
    let content = content?;
    let mut blocks = Vec::with_capacity(content.len());
    for raw in content {
        if let Ok(block) = json_text::from_peer_str(raw) {
            blocks.push(block);
            continue;
        }
        let (id, name, input) = raw_tool_use(raw)?;
        // the loop parses the raw text again and tells the model what is wrong
        blocks.push(json!({
            "type": "tool_use", "id": id, "name": name,
            "input": input,
        }));
    }
    let mut reply_value = Map::new();
    reply_value.insert("content".to_owned(), Value::Array(blocks));
    if let Some(usage) = usage {
        reply_value.insert("usage".to_owned(), usage);
    }
    parse(&Value::Object(reply_value)).ok()
}

enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        start_input: Value,
        json: String,
        /// The start's `input` as raw text, when `serde_json` cannot read it (a lone
        /// surrogate, nesting past its depth limit): the loop tells the model what is wrong.
        raw_input: Option<String>,
    },
    Other,
}

/// Assembles a streamed reply from `message_start`, `content_block_start/delta/stop`,
/// `message_delta` (usage) and `message_stop`.
#[derive(Default)]
struct StreamState {
    text: String,
    blocks: BTreeMap<u64, Block>,
    input_tokens: Option<Usage>,
    output_tokens: Option<Usage>,
    finished: bool,
}

impl EventParser for StreamState {
    /// Takes one SSE `data` payload (dispatching on its `type`, which repeats the event name).
    fn on_data(&mut self, data: &str, sink: DeltaSink<'_>) -> Result<(), Error> {
        let event: Value = match json_text::from_peer_str(data) {
            Ok(event) => event,
            Err(e) => {
                return self.raw_tool_use_start(data).unwrap_or_else(|| {
                    Err(Error::transport_from(
                        "the provider streamed an invalid JSON event",
                        e,
                    ))
                });
            }
        };
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                self.input_tokens = event.pointer("/message/usage").and_then(usage);
            }
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
                let new = match kind {
                    "text" => {
                        let initial = block.get("text").and_then(Value::as_str).unwrap_or("");
                        self.push_text(initial, sink);
                        Block::Text
                    }
                    "tool_use" => Block::ToolUse {
                        id: block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        name: block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        start_input: block.get("input").cloned().unwrap_or(Value::Null),
                        json: String::new(),
                        raw_input: None,
                    },
                    _ => Block::Other,
                };
                self.open_block(index, new)?;
            }
            "content_block_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_delta" => {
                        let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        self.push_text(text, sink);
                    }
                    "input_json_delta" => {
                        if let Some(Block::ToolUse { json, .. }) = self.blocks.get_mut(&index) {
                            json.push_str(
                                delta
                                    .get("partial_json")
                                    .and_then(Value::as_str)
                                    .unwrap_or(""),
                            );
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(u) = event.get("usage").and_then(usage) {
                    self.output_tokens = Some(u);
                }
            }
            "message_stop" => self.finished = true,
            "error" => {
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                return Err(Error::transport(format!(
                    "the provider reported an error mid-stream: {message}"
                )));
            }
            // `ping`, `content_block_stop`, and event types added later
            _ => {}
        }
        Ok(())
    }

    /// The assembled turn.
    ///
    /// # Errors
    ///
    /// [`Error::Transport`] when the stream ended before `message_stop`.
    fn finish(self: Box<Self>) -> Result<ModelTurn, Error> {
        let this = *self;
        require_finished(this.finished)?;
        let mut tool_calls = Vec::new();
        let stem = std::cell::OnceCell::new();
        for block in this.blocks.into_values() {
            if let Block::ToolUse {
                id,
                name,
                start_input,
                json,
                raw_input,
            } = block
            {
                let arguments = match raw_input {
                    // the loop parses the raw text again and tells the model what is wrong
                    Some(raw) if json.trim().is_empty() => Value::String(raw),
                    _ if json.trim().is_empty() && start_input.is_object() => start_input,
                    _ => parse_arguments(&json),
                };
                let id = if id.is_empty() {
                    filled_call_id(&stem, tool_calls.len())
                } else {
                    id
                };
                tool_calls.push(ToolCall::new(id, name, arguments));
            }
        }
        // message_start carries the input tokens, message_delta the (cumulative) output tokens
        let usage = match (this.input_tokens, this.output_tokens) {
            (None, None) => None,
            (i, o) => {
                let i = i.unwrap_or_default();
                let o = o.unwrap_or_default();
                Some(Usage::new(
                    i.prompt_tokens.max(o.prompt_tokens),
                    o.completion_tokens.max(i.completion_tokens),
                ))
            }
        };
        Ok(ModelTurn {
            text: Some(this.text).filter(|t| !t.is_empty()),
            tool_calls,
            usage,
        })
    }
}

/// A `content_block_start` event with its `tool_use` block's `input` left raw.
impl StreamState {
    fn open_block(&mut self, index: u64, block: Block) -> Result<(), Error> {
        if self.blocks.insert(index, block).is_some() {
            return Err(Error::transport(format!(
                "the provider streamed two content blocks with index {index}"
            )));
        }
        Ok(())
    }

    /// An event `serde_json` cannot read: a `tool_use` block's start whose `input` is invalid
    /// to it (a lone surrogate, nesting past its depth limit) opens the block with that input
    /// raw, as a whole reply's would be (`None` for anything else: the stream is corrupt).
    fn raw_tool_use_start(&mut self, data: &str) -> Option<Result<(), Error>> {
        let (mut kind, mut index, mut block) = (None, 0, None);
        for (key, raw) in json_text::raw_members(data)? {
            match key.as_str() {
                "type" => kind = Some(serde_json::from_str::<String>(raw).ok()?),
                "index" => index = serde_json::from_str(raw).ok()?,
                "content_block" => block = Some(raw_tool_use(raw)?),
                _ => {}
            }
        }
        if kind.as_deref() != Some("content_block_start") {
            return None;
        }
        let (id, name, input) = block?;
        Some(self.open_block(
            index,
            Block::ToolUse {
                id,
                name,
                start_input: Value::Null,
                json: String::new(),
                raw_input: Some(input.to_owned()),
            },
        ))
    }

    fn push_text(&mut self, text: &str, sink: DeltaSink<'_>) {
        if !text.is_empty() {
            self.text.push_str(text);
            sink(text);
        }
    }
}
