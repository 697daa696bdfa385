//! One [`Dialect`] per wire format: where requests go, how they authenticate, the request
//! body, the reply and the streamed events. The transport (`transport.rs`) only moves bytes
//! and asks the dialect what they mean.

use reqwest::Url;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::ProviderStyle;
use super::anthropic::AnthropicMessages;
use super::openai::OpenAiChat;
use crate::error::Error;
use crate::model::{DeltaSink, ModelRequest, ModelTurn};

/// A provider wire format.
pub(crate) trait Dialect: Sync {
    /// The URL requests are posted to, from a base URL without its trailing `/`.
    fn endpoint(&self, base: &str) -> String;

    /// The environment variable the key is read from when none is given.
    fn key_env(&self, endpoint: &Url) -> &'static str;

    /// The header that carries `key`, and its value.
    fn auth_header(&self, key: &str) -> (HeaderName, String);

    /// Headers sent on every request besides the key (a protocol version, ...).
    fn fixed_headers(&self) -> Vec<(HeaderName, HeaderValue)>;

    /// The request body for `model`, streamed or not.
    fn body(
        &self,
        request: &ModelRequest,
        model: &str,
        max_tokens: u32,
        stream: bool,
    ) -> Map<String, Value>;

    /// A whole (not streamed) reply as a turn.
    ///
    /// # Errors
    ///
    /// [`Error::Transport`] for a reply that is not one of this format.
    fn parse_reply(&self, reply: &Value) -> Result<ModelTurn, Error>;

    /// A fresh parser for one streamed reply.
    fn event_parser(&self) -> Box<dyn EventParser>;
}

/// Assembles one streamed reply from its server-sent events' `data` payloads.
pub(crate) trait EventParser: Send {
    /// Takes one event's `data`, handing text deltas to `sink`.
    ///
    /// # Errors
    ///
    /// [`Error::Transport`] for an invalid event or an error the provider reports mid-stream.
    fn on_data(&mut self, data: &str, sink: DeltaSink<'_>) -> Result<(), Error>;

    /// The assembled turn.
    ///
    /// # Errors
    ///
    /// [`Error::Transport`] when the stream ended before the reply did.
    fn finish(self: Box<Self>) -> Result<ModelTurn, Error>;
}

impl ProviderStyle {
    /// The wire format this style speaks.
    pub(crate) fn dialect(self) -> &'static dyn Dialect {
        match self {
            Self::OpenAi => &OpenAiChat,
            Self::Anthropic => &AnthropicMessages,
        }
    }
}
