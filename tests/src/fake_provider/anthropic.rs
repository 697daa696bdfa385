//! Anthropic messages replies.

use serde_json::{Value, json};

use super::SseEvent;

/// A text reply with usage.
pub fn text(text: &str, input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    })
}

/// A reply calling tools: `(id, name, input)`, after an optional text block.
pub fn tool_uses(
    text: Option<&str>,
    calls: &[(&str, &str, Value)],
    input_tokens: u64,
    output_tokens: u64,
) -> Value {
    let mut content: Vec<Value> = text
        .map(|t| json!({"type": "text", "text": t}))
        .into_iter()
        .collect();
    content.extend(calls.iter().map(
        |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
    ));
    json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
        "content": content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    })
}

fn start(input_tokens: u64) -> Vec<SseEvent> {
    vec![
        SseEvent::named(
            "message_start",
            &json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message", "role": "assistant", "content": [], "model": "fake", "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        ),
        SseEvent::named("ping", &json!({"type": "ping"})),
    ]
}

fn stop(stop_reason: &str, output_tokens: u64) -> Vec<SseEvent> {
    vec![
        SseEvent::named(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}}),
        ),
        SseEvent::named("message_stop", &json!({"type": "message_stop"})),
    ]
}

fn text_block(index: usize, deltas: &[&str]) -> Vec<SseEvent> {
    let mut events = vec![SseEvent::named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    )];
    events.extend(deltas.iter().map(|d| {
        SseEvent::named("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": d}}))
    }));
    events.push(SseEvent::named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    ));
    events
}

/// A streamed text reply: `message_start`, `ping`, one text block with a delta each,
/// `message_delta` (usage) and `message_stop`.
pub fn stream_text(deltas: &[&str], input_tokens: u64, output_tokens: u64) -> Vec<SseEvent> {
    let mut events = start(input_tokens);
    events.extend(text_block(0, deltas));
    events.extend(stop("end_turn", output_tokens));
    events
}

/// A streamed tool-calling reply: an optional text block, then per call `(id, name,
/// input_json pieces)` a `tool_use` block fed by `input_json_delta`s.
pub fn stream_tool_uses(
    text: &[&str],
    calls: &[(&str, &str, &[&str])],
    input_tokens: u64,
    output_tokens: u64,
) -> Vec<SseEvent> {
    let mut events = start(input_tokens);
    let mut index = 0;
    if !text.is_empty() {
        events.extend(text_block(0, text));
        index = 1;
    }
    for (id, name, pieces) in calls {
        events.push(SseEvent::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ));
        for piece in *pieces {
            events.push(SseEvent::named(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        events.push(SseEvent::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    events.extend(stop("tool_use", output_tokens));
    events
}
