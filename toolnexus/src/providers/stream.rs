//! Reading a server-sent event stream, chunk by chunk, into a dialect's [`EventParser`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;

use super::dialect::Dialect;
use crate::error::Error;
use crate::model::{DeltaSink, ModelTurn};

/// Why a streamed reply failed, and whether asking again is safe.
pub(super) struct StreamFailure {
    pub(super) error: Error,
    /// The stream broke (the connection, silence, an early end, an error the provider
    /// reported) before any text delta reached the caller (a tool call reaches it only with
    /// the whole turn): the request may be retried.
    pub(super) retryable: bool,
}

/// The limits of one streamed reply.
#[derive(Clone, Copy)]
pub(super) struct StreamLimits {
    /// The longest wait for the next event (SSE comments such as keep-alives do not count).
    pub(super) idle: Option<Duration>,
    /// The most bytes the whole stream may have.
    pub(super) max_bytes: usize,
}

impl StreamLimits {
    /// No limits (for the network-free parser).
    pub(super) const NONE: Self = Self {
        idle: None,
        max_bytes: usize::MAX,
    };
}

/// Reads a provider's server-sent event stream (`chunks` as they arrive) into a turn, text
/// deltas into `sink`; a transport error becomes `broken(e)`.
pub(super) async fn read_event_stream<S, B, E>(
    dialect: &dyn Dialect,
    chunks: S,
    sink: DeltaSink<'_>,
    limits: StreamLimits,
    broken: impl Fn(E) -> Error,
) -> Result<ModelTurn, StreamFailure>
where
    S: futures_util::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut chunks = std::pin::pin!(chunks);
    let mut decoder = super::sse::Decoder::default();
    let mut events = Vec::new();
    let mut total = 0usize;
    let max = limits.max_bytes;
    let mut parser = dialect.event_parser();
    // whether a text delta reached the caller (tool calls reach it only with the whole turn)
    let delivered = AtomicBool::new(false);
    let counting = |text: &str| {
        delivered.store(true, Ordering::Relaxed);
        sink(text);
    };
    let fail = |error, cut: bool| StreamFailure {
        error,
        retryable: cut && !delivered.load(Ordering::Relaxed),
    };
    // the idle limit runs from the last event (or the start): chunks that complete no event,
    // such as keep-alive comments, do not reset it
    let mut deadline = limits.idle.map(|idle| tokio::time::Instant::now() + idle);
    loop {
        let next = match (deadline, limits.idle) {
            (Some(at), Some(limit)) => {
                let Ok(next) = tokio::time::timeout_at(at, chunks.next()).await else {
                    let error = Error::ProviderIdle {
                        waiting_for: "the next stream event",
                        limit,
                    };
                    return Err(fail(error, true));
                };
                next
            }
            _ => chunks.next().await,
        };
        let Some(chunk) = next else { break };
        let bytes = match chunk {
            Ok(bytes) => bytes,
            Err(e) => return Err(fail(broken(e), true)),
        };
        let bytes = bytes.as_ref();
        total = total.saturating_add(bytes.len());
        if total > max {
            let error = Error::transport(format!(
                "the provider's reply exceeds {max} bytes (`max_reply_bytes`); not read further"
            ));
            return Err(StreamFailure {
                error,
                retryable: false,
            });
        }
        // the events before a broken line are read first, so the outcome does not depend on
        // where the stream was cut (an event's own error comes before a later line's)
        let fed = decoder.feed(bytes, &mut |event| events.push(event));
        if !events.is_empty()
            && let (Some(at), Some(limit)) = (&mut deadline, limits.idle)
        {
            *at = tokio::time::Instant::now() + limit;
        }
        for event in events.drain(..) {
            if let Err(error) = parser.on_data(&event.data, &counting) {
                // an error the provider reports mid-stream (overloaded, ...) or a corrupted
                // chunk may pass on a retry; a reply that breaks the protocol (two blocks with
                // one index, ...) will not
                let transient = matches!(&error, Error::Transport { message, .. }
                    if message.starts_with(REPORTED) || message.starts_with(CORRUPT));
                return Err(fail(error, transient));
            }
        }
        fed.map_err(|e| fail(not_utf8(e), true))?;
    }
    parser.finish().map_err(|error| fail(error, true))
}

/// A line of the stream that is not UTF-8: corrupted bytes, which another attempt may pass.
fn not_utf8(e: super::sse::NotUtf8) -> Error {
    Error::transport_from("the provider sent an invalid event stream", e)
}

/// How a parser's message for an error the provider streamed begins.
pub(super) const REPORTED: &str = "the provider reported an error mid-stream: ";

/// How a parser's message for an event that is not JSON begins.
pub(super) const CORRUPT: &str = "the provider streamed an invalid JSON";

#[cfg(test)]
mod tests {
    use crate::providers::{ProviderStyle, parse_event_stream_chunks};

    #[test]
    fn an_events_own_error_comes_before_a_later_broken_line_wherever_the_stream_is_cut() {
        // a bad event, then a line that is not UTF-8: in one piece and cut after the event,
        // the same error (the event's), as the bytes arrive in that order
        let body: &[u8] = b"data: {not json\n\ndata: \xff\n\n";
        let whole = parse_event_stream_chunks(ProviderStyle::OpenAi, &[body], &|_| {});
        let (head, tail) = body.split_at(17);
        let cut = parse_event_stream_chunks(ProviderStyle::OpenAi, &[head, tail], &|_| {});
        let whole = whole.unwrap_err().to_string();
        let corrupt = format!("transport error: {}", super::CORRUPT);
        assert!(whole.starts_with(&corrupt), "{whole}");
        assert_eq!(whole, cut.unwrap_err().to_string());
        // a broken line alone is the stream's error
        let broken =
            parse_event_stream_chunks(ProviderStyle::OpenAi, &[b"data: \xff\n\n"], &|_| {});
        assert_eq!(
            broken.unwrap_err().to_string(),
            "transport error: the provider sent an invalid event stream"
        );
    }
}
