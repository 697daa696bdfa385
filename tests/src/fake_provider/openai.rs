//! OpenAI chat-completions replies.

use serde_json::{Value, json};

use super::SseEvent;

/// A text reply with usage.
pub fn text(text: &str, prompt_tokens: u64, completion_tokens: u64) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    })
}

/// A reply calling tools: `(id, name, arguments as the JSON string the model sends)`.
pub fn tool_calls(
    calls: &[(&str, &str, &str)],
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    })
}

fn chunk(delta: &Value, finish: Option<&str>) -> SseEvent {
    SseEvent::data(
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string(),
    )
}

fn usage_chunk(prompt_tokens: u64, completion_tokens: u64) -> SseEvent {
    SseEvent::data(
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}})
            .to_string(),
    )
}

/// A streamed text reply: a role chunk, one chunk per delta, a finish chunk, the usage
/// chunk and `[DONE]`.
pub fn stream_text(deltas: &[&str], prompt_tokens: u64, completion_tokens: u64) -> Vec<SseEvent> {
    let mut events = vec![chunk(&json!({"role": "assistant", "content": ""}), None)];
    events.extend(deltas.iter().map(|d| chunk(&json!({"content": d}), None)));
    events.push(chunk(&json!({}), Some("stop")));
    events.push(usage_chunk(prompt_tokens, completion_tokens));
    events.push(SseEvent::data("[DONE]"));
    events
}

/// A streamed tool-calling reply: for each call `(id, name, argument pieces)`, a chunk
/// with id and name, then one chunk per piece; the calls interleaved by `index` (piece
/// `k` of every call before piece `k+1` of any), then finish, usage and `[DONE]`.
pub fn stream_tool_calls(
    calls: &[(&str, &str, &[&str])],
    prompt_tokens: u64,
    completion_tokens: u64,
) -> Vec<SseEvent> {
    let mut events = Vec::new();
    for (index, (id, name, _)) in calls.iter().enumerate() {
        events.push(chunk(
            &json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
    }
    let longest = calls.iter().map(|(_, _, p)| p.len()).max().unwrap_or(0);
    for k in 0..longest {
        for (index, (_, _, pieces)) in calls.iter().enumerate() {
            if let Some(piece) = pieces.get(k) {
                events.push(chunk(
                    &json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
        }
    }
    events.push(chunk(&json!({}), Some("tool_calls")));
    events.push(usage_chunk(prompt_tokens, completion_tokens));
    events.push(SseEvent::data("[DONE]"));
    events
}
