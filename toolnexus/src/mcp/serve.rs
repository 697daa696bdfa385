//! Serving a [`Toolkit`] as an MCP server.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DEFAULT_MRTR_MAX_ROUNDS,
    ElicitRequest, ElicitRequestParams, ElicitResult, Implementation, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ListToolsResult, MetaObject, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, RequestStateCodec, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer, RunningService};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::annotations::hints_to_mcp;
use super::elicit::{Mode, PENDING_META_KEY, answer_from_result, checked_elicitation_for};
use crate::client::{Client, FnModel, Reply};
use crate::context::Context;
use crate::model::{ModelRequest, Role};
use crate::request::{Answer, DeclineReason, Request};
use crate::result::ToolResult;
use crate::run::RunResult;
use crate::store::{RunStore, StoreError};
use crate::toolkit::Toolkit;

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
}

/// Who the session's client is, for binding a parked call's `requestState` to it.
type PrincipalFn = Arc<dyn Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync>;

/// What a parked call's `requestState` names (sealed): the run in the store, the request it
/// waits on, who may answer, which call it was, until when.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParkedState {
    run: String,
    request: String,
    principal: Option<String>,
    call: String,
    until: u64,
}

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

/// What travels in `requestState` between the rounds of a multi-round-trip call.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoundState {
    tool: String,
    args: Value,
    request: Request,
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
            }),
            closed: CancellationToken::new(),
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

    /// The toolkit served.
    pub fn toolkit(&self) -> &Toolkit {
        &self.inner.toolkit
    }

    /// Serves one client over any rmcp transport (a `(reader, writer)` pair, a stream, ...)
    /// and returns the running session once `initialize` is done.
    pub async fn serve<T, E, A>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleServer, Self>, McpError>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A> + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        ServiceExt::serve(self, transport)
            .await
            .map_err(|e| McpError::Serve(e.to_string()))
    }

    /// Serves one client over this process's stdin and stdout until it disconnects. When
    /// stdin closes, every call still in flight ends at once (one waiting for a person is
    /// cancelled; the tool is not run again), so the process exits without a drain delay.
    pub async fn serve_stdio(mut self) -> Result<(), McpError> {
        let closed = CancellationToken::new();
        self.closed = closed.clone();
        let stdin = EofSignal {
            inner: tokio::io::stdin(),
            closed,
        };
        let running = self.serve((stdin, tokio::io::stdout())).await?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        Ok(())
    }

    /// Serves streamable HTTP on `addr` (`127.0.0.1:0` picks a free port) in the background,
    /// each client in its own session. Only loopback `Host` headers are accepted (DNS
    /// rebinding protection).
    pub async fn serve_http(
        self,
        addr: impl tokio::net::ToSocketAddrs,
    ) -> Result<HttpServer, McpError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| McpError::Serve(format!("cannot bind the MCP HTTP server: {e}")))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| McpError::Serve(e.to_string()))?;
        let shutdown = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default();
        config.cancellation_token = shutdown.child_token();
        let service = TowerToHyperService::new(StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        ));
        let stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = stop.cancelled() => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            // small JSON-RPC messages: no Nagle delay
                            let _ = stream.set_nodelay(true);
                            stream
                        }
                        Err(_) => continue,
                    },
                };
                let service = service.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    let mut conn = std::pin::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        () = stop.cancelled() => conn.as_mut().graceful_shutdown(),
                    }
                });
            }
        });
        Ok(HttpServer {
            addr: local_addr,
            shutdown,
        })
    }

    /// One `tools/call`: the retry round of a multi-round-trip call, or a first call; a first
    /// call that suspends asks the client's human, as an `input_required` result on a
    /// `2026-07-28` session, as an `elicitation/create` request on older ones.
    async fn call(
        &self,
        params: CallToolRequestParams,
        rc: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let inner = &*self.inner;
        let name = params.name.to_string();
        let args = Value::Object(params.arguments.unwrap_or_default());
        let ctx = Context::new()
            .with_cancellation(rc.ct.child_token())
            .with_timeout(inner.timeout)
            .with_call_id(rc.id.to_string());
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
            return self.call_parked(&name, &args, rc, store).await;
        }
        let first = inner.toolkit.execute(&name, args.clone(), &ctx).await;
        let Some(request) = first.pending() else {
            return tool_result(&first).into();
        };
        let caps = rc.client_capabilities().and_then(|c| c.elicitation);
        let modes = supported_modes(caps.as_ref());
        // the toolkit refused such a suspension already; this door checks again, whatever
        // produced the request, before anything leaves
        let elicitation = match checked_elicitation_for(request) {
            Err(refused) => return tool_result(&ToolResult::error(refused.to_string())).into(),
            Ok(e) => e,
        };
        let Some((_, elicitation)) = elicitation.filter(|(m, _)| modes.contains(m)) else {
            return fallback(&first).into();
        };
        if rc
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
        {
            return self.input_required(name, args, &first, elicitation);
        }
        self.elicit(&name, &args, &ctx, &first, elicitation, rc)
            .await
            .into()
    }

    /// The retry round of a multi-round-trip call: the sealed `requestState` names the call
    /// and its request, `inputResponses` carries the answer.
    async fn round(
        &self,
        name: &str,
        args: &Value,
        ctx: &Context,
        state: RoundState,
        responses: Option<&InputResponses>,
    ) -> CallToolResult {
        if state.tool != name || &state.args != args {
            return tool_result(&ToolResult::error(
                "invalid requestState: it belongs to another tool call",
            ));
        }
        let response = responses
            .and_then(|r| r.get(INPUT_REQUEST_KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let answer = match response {
            Some(result) => answer_from_result(&state.request, &result),
            None => Answer::decline(state.request.id.clone(), DeclineReason::Cancelled),
        };
        tool_result(&self.resolve(name, args, ctx, &state.request, answer).await)
    }

    /// A suspended first call on a `2026-07-28` session: an `input_required` result asking
    /// for the elicitation, the call (tool, arguments, request) sealed in `requestState`.
    fn input_required(
        &self,
        tool: String,
        args: Value,
        first: &ToolResult,
        elicitation: ElicitRequestParams,
    ) -> CallToolResponse {
        let Some(request) = first.pending() else {
            return tool_result(first).into();
        };
        let state = RoundState {
            tool,
            args,
            request: request.clone(),
        };
        let Ok(sealed) = self.inner.codec.seal_json(&state) else {
            return fallback(first).into();
        };
        let mut requests = InputRequests::new();
        requests.insert(
            INPUT_REQUEST_KEY.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(elicitation)),
        );
        InputRequiredResult::new(Some(requests), Some(sealed)).into()
    }

    /// A suspended first call on an older session: an `elicitation/create` request to the
    /// client, waited for at most the elicitation timeout, then the loop rule.
    async fn elicit(
        &self,
        name: &str,
        args: &Value,
        ctx: &Context,
        first: &ToolResult,
        elicitation: ElicitRequestParams,
        rc: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Some(request) = first.pending() else {
            return tool_result(first);
        };
        let cancelled =
            || tool_result(&ToolResult::error(format!("cancelled: {}", request.prompt)));
        let asked = rc
            .peer
            .create_elicitation_with_timeout(elicitation, Some(self.inner.timeout));
        let progress = self.progress_while_waiting(request, rc);
        let answer = tokio::select! {
            biased;
            () = rc.ct.cancelled() => return cancelled(),
            never = progress => match never {},
            asked = asked => match asked {
                Ok(result) => answer_from_result(request, &result),
                Err(rmcp::ServiceError::Timeout { .. }) => {
                    Answer::decline(request.id.clone(), DeclineReason::Expired)
                }
                Err(e) => {
                    if rc.ct.is_cancelled() || rc.peer.is_transport_closed() {
                        return cancelled();
                    }
                    return tool_result(&ToolResult::error(format!(
                        "{} (the MCP client could not be asked: {e})",
                        first.output
                    )));
                }
            },
        };
        tool_result(&self.resolve(name, args, ctx, request, answer).await)
    }

    /// A first call with a run store: a one-call run that parks in the store if it suspends.
    async fn call_parked(
        &self,
        name: &str,
        args: &Value,
        rc: &RequestContext<RoleServer>,
        store: &Arc<dyn RunStore>,
    ) -> CallToolResponse {
        let client = match one_call_client(store, Some((name, args))) {
            Ok(client) => client,
            Err(e) => return tool_result(&ToolResult::error(e)).into(),
        };
        let ran = tokio::select! {
            biased;
            () = rc.ct.cancelled() => return cancelled_result(name).into(),
            ran = client.run(format!("tools/call {name}"), &self.inner.toolkit) => ran,
        };
        match ran {
            Ok(run) => self.parked_outcome(name, args, rc, store, run).await,
            Err(e) => tool_result(&ToolResult::error(format!(
                "{name} could not be run durably: {e}"
            )))
            .into(),
        }
    }

    /// What a one-call run gives the client: its tool result, or (parked on a request) the
    /// question, as `input_required` naming the parked run, as a live elicitation, or as the
    /// text fallback.
    async fn parked_outcome(
        &self,
        name: &str,
        args: &Value,
        rc: &RequestContext<RoleServer>,
        store: &Arc<dyn RunStore>,
        mut run: RunResult,
    ) -> CallToolResponse {
        // a live elicitation may be answered in this call; bounded like the loop's rounds
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let Some(request) = run.pending.as_deref().cloned() else {
                return tool_result(&last_call(&run)).into();
            };
            let suspended = ToolResult::suspended(request.clone());
            let caps = rc.client_capabilities().and_then(|c| c.elicitation);
            let modes = supported_modes(caps.as_ref());
            let elicitation = match checked_elicitation_for(&request) {
                Err(refused) => {
                    return tool_result(&ToolResult::error(refused.to_string())).into();
                }
                Ok(e) => e,
            };
            let Some((_, elicitation)) = elicitation.filter(|(m, _)| modes.contains(m)) else {
                return fallback(&suspended).into();
            };
            if rc
                .protocol_version()
                .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
            {
                let state = ParkedState {
                    run: run.run_id.clone(),
                    request: request.id.clone(),
                    principal: self.principal_of(rc),
                    call: call_fingerprint(name, args),
                    until: self.park_deadline(&request),
                };
                let Ok(sealed) = self.inner.codec.seal_json(&state) else {
                    return fallback(&suspended).into();
                };
                let mut requests = InputRequests::new();
                requests.insert(
                    INPUT_REQUEST_KEY.to_owned(),
                    InputRequest::Elicitation(ElicitRequest::new(elicitation)),
                );
                return InputRequiredResult::new(Some(requests), Some(sealed)).into();
            }
            let answer = match self.ask_live(&request, elicitation, rc).await {
                Ok(answer) => answer,
                Err(result) => return result.into(),
            };
            run = match resume_parked(store, &self.inner.toolkit, &answer).await {
                Ok(next) => next,
                Err(result) => return result.into(),
            };
        }
        tool_result(&ToolResult::error(format!(
            "{name} asked again after {DEFAULT_MRTR_MAX_ROUNDS} answers"
        )))
        .into()
    }

    /// The retry of a parked call: the sealed state checked against this session and call,
    /// the run claimed in the store (once) and resumed with the answer.
    async fn parked_round(
        &self,
        name: &str,
        args: &Value,
        rc: &RequestContext<RoleServer>,
        state: ParkedState,
        responses: Option<&InputResponses>,
    ) -> CallToolResponse {
        let refuse = |why: &str| {
            tool_result(&ToolResult::error(format!("invalid requestState: {why}"))).into()
        };
        let Some(store) = &self.inner.store else {
            return refuse("it names a parked run, and this server has no run store");
        };
        if state.call != call_fingerprint(name, args) {
            return refuse("it belongs to another tool call");
        }
        if state.principal != self.principal_of(rc) {
            return refuse("it belongs to another client");
        }
        if unix_now() > state.until {
            return tool_result(&ToolResult::error(format!(
                "declined/expired: the request of {name} expired before the answer arrived"
            )))
            .into();
        }
        let stored = match store.get_by_request(&state.request).await {
            Ok(Some(stored)) if stored.info.run_id == state.run => stored,
            Ok(_) => return refuse("no parked run waits on its request"),
            Err(e) => return tool_result(&ToolResult::error(e.to_string())).into(),
        };
        let request = stored.record.pending().clone();
        let response = responses
            .and_then(|r| r.get(INPUT_REQUEST_KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let answer = match response {
            Some(result) => answer_from_result(&request, &result),
            None => Answer::decline(request.id.clone(), DeclineReason::Cancelled),
        };
        match resume_parked(store, &self.inner.toolkit, &answer).await {
            Ok(run) => self.parked_outcome(name, args, rc, store, run).await,
            Err(result) => result.into(),
        }
    }

    fn principal_of(&self, rc: &RequestContext<RoleServer>) -> Option<String> {
        self.inner.principal.as_ref().and_then(|p| p(rc))
    }

    /// Until when (unix seconds) a parked request accepts its answer.
    fn park_deadline(&self, request: &Request) -> u64 {
        let at = request
            .expires_at_time()
            .unwrap_or_else(|| SystemTime::now() + self.inner.park_ttl);
        at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }

    /// An `elicitation/create` to the client, waited for (progress sent meanwhile) at most
    /// the elicitation timeout: the answer, or the call's result when there is none.
    async fn ask_live(
        &self,
        request: &Request,
        elicitation: ElicitRequestParams,
        rc: &RequestContext<RoleServer>,
    ) -> Result<Answer, CallToolResult> {
        let cancelled =
            || tool_result(&ToolResult::error(format!("cancelled: {}", request.prompt)));
        let asked = rc
            .peer
            .create_elicitation_with_timeout(elicitation, Some(self.inner.timeout));
        let progress = self.progress_while_waiting(request, rc);
        tokio::select! {
            biased;
            () = rc.ct.cancelled() => Err(cancelled()),
            never = progress => match never {},
            asked = asked => match asked {
                Ok(result) => Ok(answer_from_result(request, &result)),
                Err(rmcp::ServiceError::Timeout { .. }) => {
                    Ok(Answer::decline(request.id.clone(), DeclineReason::Expired))
                }
                Err(e) => {
                    if rc.ct.is_cancelled() || rc.peer.is_transport_closed() {
                        return Err(cancelled());
                    }
                    Err(tool_result(&ToolResult::error(format!(
                        "{} (the MCP client could not be asked: {e})",
                        request.display_output()
                    ))))
                }
            },
        }
    }

    /// Progress notifications on the call's progress token, one every progress interval,
    /// for as long as it is polled (while a person is asked): the client's request timeout,
    /// when it resets on progress, never runs out while the person thinks. Without a token
    /// (or once the client is gone) it waits forever.
    async fn progress_while_waiting(
        &self,
        request: &Request,
        rc: &RequestContext<RoleServer>,
    ) -> std::convert::Infallible {
        let Some(token) = rc.meta.get_progress_token() else {
            return std::future::pending().await;
        };
        let every = self.inner.progress_interval;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut count = 0u32;
        loop {
            ticks.tick().await;
            count += 1;
            let note = ProgressNotificationParam::new(token.clone(), f64::from(count))
                .with_message(format!("waiting for the user: {}", request.prompt));
            if rc.peer.notify_progress(note).await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// The loop rule ([`crate::suspend::resolve`], CONTRACT section 3) for one answered
    /// suspension: the retry runs the same tool with the answer in its context.
    async fn resolve(
        &self,
        name: &str,
        args: &Value,
        ctx: &Context,
        request: &Request,
        answer: Answer,
    ) -> ToolResult {
        crate::suspend::resolve(request, answer, |answer| {
            let ctx = ctx
                .clone()
                .with_request(request.clone())
                .with_answer(answer);
            async move { self.inner.toolkit.execute(name, args.clone(), &ctx).await }
        })
        .await
    }
}

/// The one-call run's model: it calls the tool (`call`) first, and once the transcript holds
/// the tool's result it ends the run. On resume only the second step happens, so any
/// process can resume the run without knowing the call.
fn one_call_client(
    store: &Arc<dyn RunStore>,
    call: Option<(&str, &Value)>,
) -> Result<Client, String> {
    let call = call.map(|(name, args)| (name.to_owned(), args.clone()));
    let model = FnModel::new(move |request: ModelRequest| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        let reply = match (&call, answered) {
            (Some((name, args)), false) => Reply::tool_call(name.clone(), args.clone()),
            _ => Reply::text(""),
        };
        async move { reply }
    });
    Client::builder(model)
        .model_name("mcp")
        .store(Arc::clone(store))
        .build()
        .map_err(|e| format!("the durable call could not be set up: {e}"))
}

/// Claims the parked run whose request `answer` echoes, and resumes it: the next run result,
/// or (claimed already, expired, gone) the call's result saying so.
async fn resume_parked(
    store: &Arc<dyn RunStore>,
    toolkit: &Toolkit,
    answer: &Answer,
) -> Result<RunResult, CallToolResult> {
    let owner = format!("mcp-{}", std::process::id());
    let claim = match store.claim(answer, &owner).await {
        Ok(claim) => claim,
        Err(StoreError::Expired { .. }) => {
            return Err(tool_result(&ToolResult::error(
                "declined/expired: the request expired before the answer arrived",
            )));
        }
        Err(e @ StoreError::AlreadyClaimed { .. }) => {
            return Err(tool_result(&ToolResult::error(format!(
                "this answer was not used: {e}"
            ))));
        }
        Err(e) => return Err(tool_result(&ToolResult::error(e.to_string()))),
    };
    let client = one_call_client(store, None).map_err(|e| tool_result(&ToolResult::error(e)))?;
    client
        .resume_claim(store.as_ref(), &claim, toolkit)
        .await
        .map_err(|e| tool_result(&ToolResult::error(format!("the parked call failed: {e}"))))
}

/// The result of a one-call run's call.
fn last_call(run: &RunResult) -> ToolResult {
    match run.tool_calls.last() {
        Some(call) => {
            let mut result = if call.is_error {
                ToolResult::error(call.output.clone())
            } else {
                ToolResult::success(call.output.clone())
            };
            result.metadata.clone_from(&call.metadata);
            result
        }
        None => ToolResult::error(run.text.clone()),
    }
}

/// A fingerprint of a call: SHA-256 of its tool name and arguments (compact JSON), hex.
fn call_fingerprint(name: &str, args: &Value) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(serde_json::json!([name, args]).to_string().as_bytes());
    crate::util::hex(&digest)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
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

/// A tool result as MCP's: the output as one text block, `isError`, and any metadata other
/// than `pending` under `_meta["toolnexus/metadata"]`.
fn tool_result(result: &ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.output.clone())];
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

impl ServerHandler for McpService {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        tokio::select! {
            biased;
            () = self.closed.cancelled() => Ok(tool_result(&ToolResult::error(format!(
                "cancelled: {name} (the MCP client closed the connection)"
            ))).into()),
            response = self.call(request, &context) => Ok(response),
        }
    }
}

/// A running streamable HTTP server (see [`McpService::serve_http`]). Dropping it leaves the
/// server running; [`shutdown`](Self::shutdown) stops it.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl HttpServer {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL a client connects to, `http://<addr>/mcp` (any path is served).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting connections and ends every session.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }
}

/// A reader that cancels `closed` when it reaches its end (or fails): how `serve_stdio` learns
/// at once that stdin closed, while rmcp would let in-flight calls drain for seconds.
struct EofSignal<R> {
    inner: R,
    closed: CancellationToken,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let had_room = buf.remaining() > 0;
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            std::task::Poll::Ready(Ok(())) if had_room && buf.filled().len() == before => {
                self.closed.cancel();
            }
            std::task::Poll::Ready(Err(_)) => self.closed.cancel(),
            _ => {}
        }
        polled
    }
}
