//! Reading a server-sent event stream, chunk by chunk, into a dialect's [`EventParser`].

use futures_util::StreamExt;

use super::dialect::Dialect;
use crate::error::Error;
use crate::model::{DeltaSink, ModelTurn};

/// Reads a provider's server-sent event stream (`chunks` as they arrive) into a turn, text
/// deltas into `sink`; a transport error becomes `broken(e)`.
pub(super) async fn read_event_stream<S, B, E>(
    dialect: &dyn Dialect,
    chunks: S,
    sink: DeltaSink<'_>,
    broken: impl Fn(E) -> Error,
) -> Result<ModelTurn, Error>
where
    S: futures_util::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut events = std::pin::pin!(eventsource_stream::EventStream::new(chunks));
    let mut parser = dialect.event_parser();
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| match e {
            eventsource_stream::EventStreamError::Transport(e) => broken(e),
            other => Error::transport_from("the provider sent an invalid event stream", other),
        })?;
        parser.on_data(&event.data, sink)?;
    }
    parser.finish()
}
