//! Feeds arbitrary provider bytes to the HTTP providers' reply parsers, both wire styles:
//! as a server-sent event stream cut into chunks at arbitrary places, and as a whole body.
//! Never a panic; streamed text deltas add up to the turn's text.
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use toolnexus::{
    __private::parse_event_stream_chunks, __private::parse_reply_body, providers::ProviderStyle,
};

fuzz_target!(|data: &[u8]| {
    // first byte: the style and where to cut; the rest: the body
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let style = if head & 1 == 0 {
        ProviderStyle::OpenAi
    } else {
        ProviderStyle::Anthropic
    };
    let step = usize::from(head >> 1).max(1);
    let chunks: Vec<&[u8]> = body.chunks(step).collect();
    let streamed = Mutex::new(String::new());
    let sink = |delta: &str| streamed.lock().unwrap().push_str(delta);
    if let Ok(turn) = parse_event_stream_chunks(style, &chunks, &sink) {
        let streamed = streamed.lock().unwrap();
        if !streamed.is_empty() {
            assert_eq!(
                turn.text.as_deref(),
                Some(streamed.as_str()),
                "deltas and text differ"
            );
        }
    }
    // the same bytes in one chunk give the same outcome
    let whole = parse_event_stream_chunks(style, &[body], &|_| {});
    let cut = parse_event_stream_chunks(style, &chunks, &|_| {});
    assert_eq!(
        whole
            .as_ref()
            .map_err(ToString::to_string)
            .map(|t| unfilled(&format!("{t:?}"))),
        cut.as_ref()
            .map_err(ToString::to_string)
            .map(|t| unfilled(&format!("{t:?}"))),
        "the outcome depends on where the stream is cut"
    );
    let _ = parse_reply_body(style, body);
});

/// `text` with the per-reply part of every filled call id (`call_<16 hex>_<index>`, distinct
/// for every reply by design) replaced by `*`, so two parses of the same bytes compare equal.
fn unfilled(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("call_") {
        let (before, after) = rest.split_at(at + "call_".len());
        out.push_str(before);
        let hex = after.get(..16).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        match hex {
            Some(_) if after.as_bytes().get(16) == Some(&b'_') => {
                out.push('*');
                rest = &after[16..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}
