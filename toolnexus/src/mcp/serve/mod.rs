//! Serving a [`Toolkit`] as an MCP server: [`McpService`], its options and the dispatch of one
//! `tools/call` to its path.
//!
//! - `live.rs`: a call that suspends, without a run store: the multi-round-trip round with a
//!   sealed `RoundState`, or a live `elicitation/create`; the loop rule
//!   for the answer.
//! - `parked.rs`: with a run store: a one-call run parked in the store, its `requestState`
//!   naming the parked run, and the retry that claims and resumes it in any process.
//! - `handler.rs`: the `ServerHandler` impl, each MCP method to its path or to the handler
//!   the service wraps.
//! - `transport.rs`: stdin/stdout, streamable HTTP ([`HttpServer`]), any rmcp transport.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitResult, Implementation, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, MetaObject, ProtocolVersion, RequestStateCodec,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::context::Context;
use crate::mcp::McpError;
use crate::mcp::annotations::hints_to_mcp;
use crate::mcp::elicit::{Mode, PENDING_META_KEY, answer_from_result, checked_elicitation_for};
use crate::request::{Answer, DeclineReason, Request};
use crate::result::ToolResult;
use crate::store::RunStore;
use crate::toolkit::Toolkit;

mod handler;
mod live;
mod notices;
mod others;
mod parked;
mod tasks;
mod transport;

pub use transport::HttpServer;

use live::RoundState;
use notices::{NoticeFn, SessionLevel};
use parked::ParkedState;

/// The key of the one input request a multi-round-trip `input_required` result carries.
pub const INPUT_REQUEST_KEY: &str = "toolnexus";

/// How long an elicitation may wait for the human unless set otherwise: ten minutes.
pub const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a call parked in a run store ([`McpService::with_store`]) waits for its answer
/// when its request sets no `expiresAt`, unless set otherwise: a day.
pub const DEFAULT_PARK_TTL: Duration = Duration::from_secs(24 * 3600);

/// How often a call waiting for a person sends a progress notification, unless set otherwise:
/// every five seconds.
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// A [`Toolkit`] as an MCP server (an rmcp [`ServerHandler`]).
///
/// - `tools/list` lists the toolkit's tools in order, each with the input schema the provider
///   adapters emit and, when the tool states any, its [`ToolAnnotations`](crate::tool::ToolAnnotations)
///   as MCP `annotations` (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
///   `openWorldHint`; the unstated ones left out);
/// - `tools/call` runs [`Toolkit::execute`]: bad arguments, unknown tools and panics are tool
///   error results (`isError: true`) with the toolkit's text, never a protocol error;
/// - a call that **suspends** asks the client's human (CONTRACT section 8):
///   on a `2026-07-28` session as a multi-round-trip `input_required` result (the server keeps
///   no state: the request, tool and arguments travel sealed in `requestState`), on older
///   sessions as an `elicitation/create` request. Either way the answer runs the tool once
///   more with `ctx.answer` (a second suspension gives `unresolved: <prompt>`, a refusal or an
///   answer after `expiresAt` gives `declined/expired: <prompt>`).
/// - A client that cannot be asked gets the suspension's `output` as an error result with the
///   [`Request`] under `_meta["toolnexus/pending"]`; the call never hangs.
///
/// An elicitation waits at most [`with_timeout`](Self::with_timeout) (then the request reads
/// as expired); a client that disconnects or cancels mid-elicitation cancels the call (the
/// tool is not run again).
///
/// ```no_run
/// use toolnexus::Toolkit;
/// use toolnexus::mcp::McpService;
///
/// # async fn run(toolkit: Toolkit) -> Result<(), toolnexus::mcp::McpError> {
/// // a desktop host launches this binary and talks to it over stdin/stdout
/// McpService::new(toolkit).with_name("travel", "1.0.0").serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct McpService {
    inner: Arc<Inner>,
    /// Cancelled when the session's transport reached its end (stdin closed): every call
    /// still in flight ends at once.
    closed: CancellationToken,
    /// The session's `logging/setLevel`.
    level: SessionLevel,
}

struct Inner {
    toolkit: Toolkit,
    tools: Vec<rmcp::model::Tool>,
    info: Implementation,
    instructions: Option<String>,
    timeout: Duration,
    progress_interval: Duration,
    codec: RequestStateCodec,
    store: Option<Arc<dyn RunStore>>,
    park_ttl: Duration,
    principal: Option<PrincipalFn>,
    /// The host's handler of resources, prompts and completion ([`McpService::with_handler`]).
    others: Option<Arc<dyn others::Others>>,
}

/// Who the session's client is, for binding a parked call's `requestState` to it.
type PrincipalFn = Arc<dyn Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync>;

/// Either kind of sealed `requestState`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Sealed {
    Parked(ParkedState),
    Round(RoundState),
}

impl fmt::Debug for McpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpService")
            .field("tools", &self.inner.tools.len())
            .field("name", &self.inner.info.name)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

impl McpService {
    /// Serves `toolkit`, named `toolnexus` with this crate's version, elicitations bounded by
    /// [`DEFAULT_ELICITATION_TIMEOUT`], `requestState` sealed with a random per-process key.
    pub fn new(toolkit: Toolkit) -> Self {
        let tools = toolkit
            .tools()
            .iter()
            .map(|t| {
                let schema = match t.input_schema() {
                    Value::Object(o) => o.clone(),
                    _ => Map::new(),
                };
                let tool =
                    rmcp::model::Tool::new(t.name().to_owned(), t.description().to_owned(), schema);
                match hints_to_mcp(t.annotations()) {
                    Some(annotations) => tool.with_annotations(annotations),
                    None => tool,
                }
            })
            .collect();
        let mut key = [0u8; 32];
        // the OS's generator; should it fail, sealing still works, with a guessable key
        let _ = getrandom::fill(&mut key);
        Self {
            inner: Arc::new(Inner {
                toolkit,
                tools,
                info: Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")),
                instructions: None,
                timeout: DEFAULT_ELICITATION_TIMEOUT,
                progress_interval: DEFAULT_PROGRESS_INTERVAL,
                codec: RequestStateCodec::new_unchecked(key.to_vec()),
                store: None,
                park_ttl: DEFAULT_PARK_TTL,
                principal: None,
                others: None,
            }),
            closed: CancellationToken::new(),
            level: SessionLevel::default(),
        }
    }

    /// The same service for a new session (its own logging level).
    pub(super) fn for_session(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            closed: self.closed.clone(),
            level: SessionLevel::default(),
        }
    }

    fn inner_mut(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("McpService is configured before it is cloned")
    }

    /// The name and version the server reports in `initialize`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.inner_mut().info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, sent in `initialize`.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.inner_mut().instructions = Some(instructions.into());
        self
    }

    /// How long one elicitation may wait for its answer; after it the request reads as
    /// expired (`declined/expired: <prompt>`). Also passed to tools as [`Context::timeout`].
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.inner_mut().timeout = timeout;
        self
    }

    /// How often a call whose elicitation waits for a person sends a progress notification
    /// (`notifications/progress` on the call's `progressToken`, when the client gave one), so
    /// that a client which resets its request timeout on progress keeps waiting for the
    /// person ([`DEFAULT_PROGRESS_INTERVAL`] unless set). A person's time is bounded by
    /// [`with_timeout`](Self::with_timeout) alone, never by the client's per-request timeout.
    #[must_use]
    pub fn with_progress_interval(mut self, every: Duration) -> Self {
        self.inner_mut().progress_interval = every.max(Duration::from_millis(10));
        self
    }

    /// Parks every call in `store`: the call runs as a one-call run of the agent loop, and a
    /// call that suspends is a parked run ([`RunStore::park`]) that outlives this process.
    ///
    /// - On a `2026-07-28` session the `input_required` result's `requestState` names the
    ///   parked run, sealed (see [`with_request_state_key`](Self::with_request_state_key)) and
    ///   bound to the session's principal ([`with_principal`](Self::with_principal)), to the
    ///   call (tool and arguments) and to an expiry (the request's `expiresAt`, else
    ///   [`with_park_ttl`](Self::with_park_ttl)). The retry with the answer claims the run in
    ///   the store ([`RunStore::claim`]: once, whoever comes first) and resumes it, in this
    ///   process or any other serving the same store with the same key.
    /// - A client that declares the Tasks extension (`io.modelcontextprotocol/tasks`) gets a
    ///   task instead (the server then advertises the extension): the task id names the
    ///   parked run (sealed, bound to the principal), `tasks/get` reads the run from the store
    ///   (`input_required` with the request's elicitation, `working`, `completed` with the
    ///   call's result, `failed`), `tasks/update` claims it with the answer (once) and
    ///   resumes it, and `tasks/cancel` answers the request as cancelled. Tasks live in the
    ///   store: they outlive this process, and any process serving the same store with the
    ///   same key answers them. A run whose serving process died while resuming it is taken
    ///   over by a [`Worker`](crate::worker::Worker) on the store, like any claimed run.
    /// - On an older session the elicitation is asked live, and the answer resumes the
    ///   parked run the same way.
    /// - A client that cannot be asked gets the text fallback; the run stays parked, for an
    ///   answer through the store by other means.
    #[must_use]
    pub fn with_store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.inner_mut().store = Some(store);
        self
    }

    /// How long a parked call waits when its request sets no `expiresAt`
    /// ([`DEFAULT_PARK_TTL`] unless set).
    #[must_use]
    pub fn with_park_ttl(mut self, ttl: Duration) -> Self {
        self.inner_mut().park_ttl = ttl;
        self
    }

    /// Who the session's client is (an authenticated user, read from the request's
    /// extensions, such as the HTTP request's headers): a parked call's `requestState` is
    /// bound to it, and a retry from anyone else is refused. Without it every client is the
    /// same anonymous principal.
    #[must_use]
    pub fn with_principal<F>(mut self, principal: F) -> Self
    where
        F: Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync + 'static,
    {
        self.inner_mut().principal = Some(Arc::new(principal));
        self
    }

    /// The key sealing `requestState` (HMAC); set the same key on every instance when several
    /// serve one client statelessly. At least 32 bytes.
    pub fn with_request_state_key(mut self, key: impl Into<Vec<u8>>) -> Result<Self, McpError> {
        let codec = RequestStateCodec::try_new(key)
            .map_err(|e| McpError::Config(format!("invalid request state key: {e}")))?;
        self.inner_mut().codec = codec;
        Ok(self)
    }

    /// Serves resources, prompts and completion with `handler` next to the toolkit: the
    /// service hands `resources/*` (list, templates, read, subscribe, unsubscribe),
    /// `prompts/*` (list, get) and `completion/complete` to it and advertises the
    /// `resources`, `prompts` and `completions` capabilities its
    /// [`get_info`](ServerHandler::get_info) states; `tools/list`, `tools/call` and the rest
    /// stay the toolkit's (elicitations, durable calls, tasks, logging, progress), whatever
    /// the handler says about tools.
    ///
    /// ```no_run
    /// use toolnexus::Toolkit;
    /// use toolnexus::mcp::McpService;
    /// use toolnexus::mcp::rmcp::{ServerHandler, model::{ServerCapabilities, ServerConfig}};
    ///
    /// /// Resources and prompts, written with rmcp.
    /// struct Docs;
    ///
    /// impl ServerHandler for Docs {
    ///     fn get_info(&self) -> ServerConfig {
    ///         ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
    ///     }
    ///     // list_resources, read_resource, ...
    /// }
    ///
    /// # async fn run(toolkit: Toolkit) -> Result<(), toolnexus::mcp::McpError> {
    /// McpService::new(toolkit).with_handler(Docs).serve_stdio().await
    /// # }
    /// ```
    #[must_use]
    pub fn with_handler<H: ServerHandler>(mut self, handler: H) -> Self {
        self.inner_mut().others = Some(Arc::new(handler));
        self
    }

    /// The toolkit served.
    pub fn toolkit(&self) -> &Toolkit {
        &self.inner.toolkit
    }
    /// One `tools/call`: the retry round of a multi-round-trip call, or a first call; a first
    /// call that suspends asks the client's human, as an `input_required` result on a
    /// `2026-07-28` session, as an `elicitation/create` request on older ones.
    async fn call(
        &self,
        params: CallToolRequestParams,
        rc: &RequestContext<RoleServer>,
        notify: &NoticeFn,
    ) -> CallToolResponse {
        let inner = &*self.inner;
        let name = params.name.to_string();
        let args = Value::Object(params.arguments.unwrap_or_default());
        let to_client = Arc::clone(notify);
        let ctx = Context::new()
            .with_cancellation(rc.ct.child_token())
            .with_timeout(inner.timeout)
            .with_call_id(rc.id.to_string())
            .with_notifier(move |notice| to_client(notice));
        if let Some(state) = params.request_state {
            let responses = params.input_responses.as_ref();
            return match inner.codec.open_json::<Sealed>(&state) {
                Err(e) => {
                    tool_result(&ToolResult::error(format!("invalid requestState: {e}"))).into()
                }
                Ok(Sealed::Round(state)) => self
                    .round(&name, &args, &ctx, state, responses)
                    .await
                    .into(),
                Ok(Sealed::Parked(state)) => {
                    self.parked_round(&name, &args, rc, state, responses).await
                }
            };
        }
        if let Some(store) = &inner.store {
            return self.call_parked(&name, &args, rc, store, notify).await;
        }
        let first = inner.toolkit.execute(&name, args.clone(), &ctx).await;
        let Some(request) = first.pending() else {
            return tool_result(&first).into();
        };
        let elicitation = match elicitation_for_client(request, rc) {
            Err(refused) => return refused.into(),
            Ok(Some(elicitation)) => elicitation,
            Ok(None) => return fallback(&first).into(),
        };
        if speaks_mrtr(rc) {
            return self.input_required(name, args, request, elicitation);
        }
        self.elicit(&name, &args, &ctx, request, elicitation, rc)
            .await
            .into()
    }
}

/// The elicitation that asks the client's human for `request`: `Ok(None)` when the client
/// cannot be asked in a mode the request needs (the text fallback answers), `Err` when the
/// trust boundary refuses the request (the toolkit refused such a suspension already; this
/// door checks again, whatever produced the request, before anything leaves).
fn elicitation_for_client(
    request: &Request,
    rc: &RequestContext<RoleServer>,
) -> Result<Option<ElicitRequestParams>, CallToolResult> {
    let caps = rc.client_capabilities().and_then(|c| c.elicitation);
    let modes = supported_modes(caps.as_ref());
    let elicitation = checked_elicitation_for(request)
        .map_err(|refused| tool_result(&ToolResult::error(refused.to_string())))?;
    Ok(elicitation
        .filter(|(mode, _)| modes.contains(mode))
        .map(|(_, elicitation)| elicitation))
}

/// Whether the session speaks multi-round-trip requests (`2026-07-28` and later).
fn speaks_mrtr(rc: &RequestContext<RoleServer>) -> bool {
    rc.protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// An `input_required` result asking for `elicitation`, the call's state sealed in
/// `requestState`.
fn input_required_result(elicitation: ElicitRequestParams, sealed: String) -> CallToolResponse {
    let mut requests = InputRequests::new();
    requests.insert(
        INPUT_REQUEST_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(elicitation)),
    );
    InputRequiredResult::new(Some(requests), Some(sealed)).into()
}

/// The answer to `request` a retry round carries in `inputResponses`; none (or one that does
/// not read as an elicitation result) is a cancellation.
fn answer_in(responses: Option<&InputResponses>, request: &Request) -> Answer {
    match responses
        .and_then(|r| r.get(INPUT_REQUEST_KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
    {
        Some(result) => answer_from_result(request, &result),
        None => Answer::decline(request.id.clone(), DeclineReason::Cancelled),
    }
}

fn cancelled_result(name: &str) -> CallToolResult {
    tool_result(&ToolResult::error(format!("cancelled: {name}")))
}

fn supported_modes(caps: Option<&rmcp::model::ElicitationCapability>) -> Vec<Mode> {
    match caps {
        None => Vec::new(),
        // a capability that names no mode means form (the 2025-06-18 shape)
        Some(c) if c.form.is_none() && c.url.is_none() => vec![Mode::Form],
        Some(c) => {
            let mut modes = Vec::new();
            if c.form.is_some() {
                modes.push(Mode::Form);
            }
            if c.url.is_some() {
                modes.push(Mode::Url);
            }
            modes
        }
    }
}

/// A tool result as MCP's: the output as one text item, then each content part as its MCP
/// content item (`content.rs`), `isError`, and any metadata other than `pending` under
/// `_meta["toolnexus/metadata"]`.
fn tool_result(result: &ToolResult) -> CallToolResult {
    let content = crate::mcp::content::to_mcp(&result.output, &result.parts);
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Some(meta) = &result.metadata
        && !meta.extra.is_empty()
    {
        let mut m = Map::new();
        m.insert(
            "toolnexus/metadata".to_owned(),
            Value::Object(meta.extra.clone()),
        );
        out.meta = Some(MetaObject(m));
    }
    out
}

/// The text fallback: the suspension's output as an error, the request under
/// `_meta["toolnexus/pending"]`.
fn fallback(suspended: &ToolResult) -> CallToolResult {
    let mut out = CallToolResult::error(vec![ContentBlock::text(suspended.output.clone())]);
    if let Some(request) = suspended.pending() {
        let mut m = Map::new();
        m.insert(
            PENDING_META_KEY.to_owned(),
            serde_json::to_value(request).unwrap_or(Value::Null),
        );
        out.meta = Some(MetaObject(m));
    }
    out
}

/// The error of a method no [`McpService::with_handler`] handler serves.
fn no_handler(method: &'static str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("{method}: this server serves tools only"),
        None,
    )
}
