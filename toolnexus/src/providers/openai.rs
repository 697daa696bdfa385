//! The OpenAI chat-completions wire format (also OpenRouter, Ollama, vLLM, LM Studio, ...).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};

use super::dialect::{Dialect, EventParser};
use super::wire::{arguments_string, filled_call_id, parse_arguments, require_finished, usage};
use crate::adapters;
use crate::error::Error;
use crate::model::{DeltaSink, Message, ModelRequest, ModelTurn, Role, ToolCall, Usage};
use crate::result::{ContentPart, PART_AUDIO, PART_FILE, PART_IMAGE, PART_RESOURCE};

/// OpenAI chat completions: `POST {base}/chat/completions` with `Authorization: Bearer`.
pub(crate) struct OpenAiChat;

impl Dialect for OpenAiChat {
    fn endpoint(&self, base: &str) -> String {
        format!("{base}/chat/completions")
    }

    fn home_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("api.openai.com", "OPENAI_API_KEY"),
            ("openrouter.ai", "OPENROUTER_API_KEY"),
        ]
    }

    fn auth_header(&self, key: &str) -> (HeaderName, String) {
        (AUTHORIZATION, format!("Bearer {key}"))
    }

    fn fixed_headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        Vec::new()
    }

    /// `max_tokens` is not sent: an OpenAI-style limit is a `body_field`.
    fn body(
        &self,
        request: &ModelRequest,
        model: &str,
        _max_tokens: u32,
        stream: bool,
    ) -> Result<Map<String, Value>, Error> {
        body(request, model, stream)
    }

    fn parse_reply(&self, reply: &Value) -> Result<ModelTurn, Error> {
        parse(reply)
    }

    fn event_parser(&self) -> Box<dyn EventParser> {
        Box::<StreamState>::default()
    }
}

/// The request body: `{"model","messages","tools"?,"stream"?,"stream_options"?}`.
fn body(request: &ModelRequest, model: &str, stream: bool) -> Result<Map<String, Value>, Error> {
    let mut body = Map::new();
    body.insert("model".to_owned(), Value::String(model.to_owned()));
    body.insert(
        "messages".to_owned(),
        request.messages.iter().map(message).collect(),
    );
    if !request.tools.is_empty() {
        body.insert(
            "tools".to_owned(),
            adapters::openai(&request.tools)?.into_value(),
        );
    }
    if stream {
        body.insert("stream".to_owned(), Value::Bool(true));
        body.insert("stream_options".to_owned(), json!({"include_usage": true}));
    }
    Ok(body)
}

fn message(m: &Message) -> Value {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".to_owned(), Value::String(role.to_owned()));
    match m.role {
        Role::Tool => {
            let id = m.tool_call_id.clone().unwrap_or_default();
            out.insert("tool_call_id".to_owned(), Value::String(id));
            out.insert("content".to_owned(), tool_content(m));
        }
        Role::Assistant if !m.tool_calls.is_empty() => {
            out.insert(
                "content".to_owned(),
                m.content.clone().map_or(Value::Null, Value::String),
            );
            let calls = m
                .tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": arguments_string(&c.arguments)},
                    })
                })
                .collect();
            out.insert("tool_calls".to_owned(), calls);
        }
        _ => {
            out.insert("content".to_owned(), text(m));
        }
    }
    Value::Object(out)
}

/// A tool message's content: the text alone, or, with content parts, an array of content
/// parts (the text first, then each part: `image_url` for an image, `file` for a file,
/// `input_audio` for audio, `text` for an embedded text resource; a part that has no such form
/// becomes a text part naming it).
fn tool_content(m: &Message) -> Value {
    if m.parts.is_empty() {
        return text(m);
    }
    let mut blocks = vec![json!({"type": "text", "text": m.content.clone().unwrap_or_default()})];
    blocks.extend(m.parts.iter().map(part_block));
    Value::Array(blocks)
}

fn part_block(p: &ContentPart) -> Value {
    let data_url = || {
        p.data
            .as_ref()
            .map(|d| format!("data:{};base64,{d}", p.mime_type.as_deref().unwrap_or("")))
    };
    match p.kind.as_str() {
        PART_IMAGE => match p.url.clone().or_else(data_url) {
            Some(url) => json!({"type": "image_url", "image_url": {"url": url}}),
            None => unsupported_part(p),
        },
        PART_FILE => {
            let mut file = Map::new();
            if let Some(url) = data_url() {
                file.insert("file_data".to_owned(), Value::String(url));
            } else if let Some(id) = p.extra.get("fileId").and_then(Value::as_str) {
                file.insert("file_id".to_owned(), Value::String(id.to_owned()));
            } else {
                return unsupported_part(p);
            }
            if let Some(name) = p.extra.get("name").and_then(Value::as_str) {
                file.insert("filename".to_owned(), Value::String(name.to_owned()));
            }
            json!({"type": "file", "file": file})
        }
        PART_AUDIO => match (&p.data, audio_format(p.mime_type.as_deref())) {
            (Some(data), Some(format)) => {
                json!({"type": "input_audio", "input_audio": {"data": data, "format": format}})
            }
            _ => unsupported_part(p),
        },
        PART_RESOURCE => match p.embedded_text() {
            Some(text) => json!({"type": "text", "text": text}),
            None => unsupported_part(p),
        },
        _ => unsupported_part(p),
    }
}

/// OpenAI's `input_audio.format` for a media type (`wav` and `mp3` only).
fn audio_format(mime: Option<&str>) -> Option<&'static str> {
    match mime? {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// A part the dialect cannot send as content: a text part that says what it was.
fn unsupported_part(p: &ContentPart) -> Value {
    json!({"type": "text", "text": p.placeholder()})
}

fn text(m: &Message) -> Value {
    Value::String(m.content.clone().unwrap_or_default())
}

/// A whole (non-streamed) reply: `choices[0].message` and `usage`.
fn parse(reply: &Value) -> Result<ModelTurn, Error> {
    let message = reply
        .pointer("/choices/0/message")
        .ok_or_else(|| Error::transport("the provider's reply has no `choices[0].message`"))?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let stem = std::cell::OnceCell::new();
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let raw = c
                        .pointer("/function/arguments")
                        .map(|a| match a {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .unwrap_or_default();
                    ToolCall::new(
                        call_id(c.get("id"), &stem, i),
                        c.pointer("/function/name")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                        parse_arguments(&raw),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ModelTurn {
        text,
        tool_calls,
        usage: reply.get("usage").and_then(usage),
    })
}

/// The call's own id, or `<stem>_<index>` for a call that came without one (the stem made once
/// per reply, distinct for every reply: see [`filled_call_id`]).
fn call_id(id: Option<&Value>, stem: &std::cell::OnceCell<String>, index: usize) -> String {
    id.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map_or_else(|| filled_call_id(stem, index), str::to_owned)
}

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Assembles a streamed reply: text deltas in order, tool-call deltas by `index`, the usage
/// chunk that `stream_options.include_usage` adds, and the `[DONE]` sentinel.
#[derive(Default)]
struct StreamState {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    usage: Option<Usage>,
    finished: bool,
}

impl EventParser for StreamState {
    /// Takes one SSE `data` payload.
    fn on_data(&mut self, data: &str, sink: DeltaSink<'_>) -> Result<(), Error> {
        if data.trim() == "[DONE]" {
            self.finished = true;
            return Ok(());
        }
        let chunk: Value = crate::json_text::from_peer_str(data)
            .map_err(|e| Error::transport_from("the provider streamed an invalid JSON chunk", e))?;
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(Error::transport(format!(
                "the provider reported an error mid-stream: {message}"
            )));
        }
        if let Some(u) = chunk.get("usage").and_then(usage) {
            self.usage = Some(u);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if choice.get("finish_reason").is_some_and(Value::is_string) {
            self.finished = true;
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.text.push_str(text);
            sink(text);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let slot = self.calls.entry(index).or_default();
                if let Some(id) = call.get("id").and_then(Value::as_str)
                    && !id.is_empty()
                {
                    slot.id = Some(id.to_owned());
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    slot.name.push_str(name);
                }
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    slot.arguments.push_str(args);
                }
            }
        }
        Ok(())
    }

    /// The assembled turn.
    ///
    /// # Errors
    ///
    /// [`Error::Transport`] when the stream ended before `[DONE]` or a finish reason.
    fn finish(self: Box<Self>) -> Result<ModelTurn, Error> {
        let this = *self;
        require_finished(this.finished)?;
        let stem = std::cell::OnceCell::new();
        let tool_calls = this
            .calls
            .into_values()
            .enumerate()
            .map(|(i, c)| {
                let id = c.id.unwrap_or_else(|| filled_call_id(&stem, i));
                ToolCall::new(id, c.name, parse_arguments(&c.arguments))
            })
            .collect();
        Ok(ModelTurn {
            text: Some(this.text).filter(|t| !t.is_empty()),
            tool_calls,
            usage: this.usage,
        })
    }
}
