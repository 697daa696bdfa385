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

    /// The hosts whose key lives in a well-known environment variable, with that variable
    /// (`api.openai.com` and `OPENAI_API_KEY`, ...). An environment key goes to its own host
    /// over `https` only.
    fn home_keys(&self) -> &'static [(&'static str, &'static str)];

    /// The environment variable for `endpoint`'s key: its host's, when it is one of
    /// [`home_keys`](Dialect::home_keys) reached over `https`.
    fn key_env(&self, endpoint: &Url) -> Option<&'static str> {
        let host = endpoint.host_str()?;
        self.home_keys()
            .iter()
            .find(|(home, _)| *home == host)
            .filter(|_| endpoint.scheme() == "https")
            .map(|(_, var)| *var)
    }

    /// The header that carries `key`, and its value.
    fn auth_header(&self, key: &str) -> (HeaderName, String);

    /// Headers sent on every request besides the key (a protocol version, ...).
    fn fixed_headers(&self) -> Vec<(HeaderName, HeaderValue)>;

    /// The request body for `model`, streamed or not.
    ///
    /// # Errors
    ///
    /// What the provider would refuse the request for, from the tools' adapter (a spec a
    /// `before_llm` hook renamed outside the provider's pattern, say).
    fn body(
        &self,
        request: &ModelRequest,
        model: &str,
        max_tokens: u32,
        stream: bool,
    ) -> Result<Map<String, Value>, Error>;

    /// A whole (not streamed) reply as a turn.
    ///
    /// # Errors
    ///
    /// [`Error::Transport`] for a reply that is not one of this format.
    fn parse_reply(&self, reply: &Value) -> Result<ModelTurn, Error>;

    /// A whole reply that is not valid JSON (as `serde_json` reads it: a lone surrogate, too
    /// deep) read leniently, when the format has a place where the model's own text may be
    /// invalid (a tool call's input): `None` when it has none or the reply is invalid
    /// elsewhere too.
    fn parse_lenient(&self, _bytes: &[u8]) -> Option<ModelTurn> {
        None
    }

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
