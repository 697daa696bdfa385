//! Using an MCP server's tools through a [`Toolkit`](crate::Toolkit).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientRequest, ContentBlock, DEFAULT_MRTR_MAX_ROUNDS,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    Extensions, FormElicitationCapability, Implementation, InputRequest, InputRequiredResult,
    InputResponses, ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestId,
    RequestMetaObject, RequestParamsMeta, ServerResult, UrlElicitationCapability,
};
use rmcp::service::{
    ClientLifecycleMode, InboundStreamOrigin, NotificationContext, PeerRequestOptions,
    RequestContext, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientServiceExt, ErrorData};
use serde_json::{Map, Value};

use super::McpError;
use super::annotations::hints_from_mcp;
use super::elicit::{Incoming, incoming, refused_result, result_from_answer};
use crate::context::Context;
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::tool::{BoxFuture, MAX_TOOL_NAME_LEN, SharedTool, Tool, ToolAnnotations, sanitize};

/// `source` of tools that come from an MCP server.
pub const SOURCE_MCP: &str = "mcp";

/// The `data` key of a [`Request`] made from a consumed server's `input_required` result: the
/// round to retry, `{"requestState": <the server's opaque state>, "inputKey": <the key of its
/// input request>}`. The retry (by the loop's `wait_for`, or by
/// [`Client::resume`](crate::Client::resume) in another process) sends the answer under that
/// key in `inputResponses` with the echoed `requestState`.
pub const ROUND_KEY: &str = "mcpRound";

/// The host's answer to a consumed server's elicitation: an async function `Request ->
/// Answer`, as [`McpServerBuilder::on_elicitation`] takes it.
pub type ElicitationHandler = Arc<dyn Fn(Request) -> BoxFuture<'static, Answer> + Send + Sync>;

/// How to reach a server.
#[derive(Clone, Debug)]
enum Target {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// Configures and connects an [`McpServer`]: [`McpServer::stdio`] or [`McpServer::http`].
#[derive(Clone)]
pub struct McpServerBuilder {
    name: String,
    target: Target,
    prefix: Option<String>,
    handler: Option<ElicitationHandler>,
    timeout: Option<Duration>,
    rounds: bool,
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .field("on_elicitation", &self.handler.is_some())
            .field("timeout", &self.timeout)
            .field("multi_round_trip", &self.rounds)
            .finish()
    }
}

impl McpServerBuilder {
    fn new(name: impl Into<String>, target: Target) -> Self {
        Self {
            name: name.into(),
            target,
            prefix: None,
            handler: None,
            timeout: None,
            rounds: false,
        }
    }

    /// One more argument of the stdio command (ignored for HTTP).
    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let Target::Stdio { args, .. } = &mut self.target {
            args.push(arg.into());
        }
        self
    }

    /// More arguments of the stdio command (ignored for HTTP).
    #[must_use]
    pub fn args<I, S>(mut self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Target::Stdio { args, .. } = &mut self.target {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// One environment variable of the stdio command, on top of this process's environment
    /// (ignored for HTTP).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Stdio { env, .. } = &mut self.target {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// One HTTP header sent with every request (ignored for stdio), e.g. `Authorization`.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Http { headers, .. } = &mut self.target {
            headers.insert(name.into(), value.into());
        }
        self
    }

    /// A prefix for the server's tool names (`github_` makes `search` into `github_search`);
    /// the whole name is then [`sanitize`]d and cut to 64 characters.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// How long one tool call may wait in silence (unless the call's [`Context`] sets a
    /// shorter timeout): each progress notification from the server starts it again, and it
    /// stands still while a person answers one of the call's elicitations, so a person's time
    /// never times a call out.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Asks for the `2026-07-28` protocol (`server/discover`, falling back to the `initialize`
    /// handshake for a server that does not know it). On it a server asks for input by
    /// returning `input_required` from the call itself (multi-round-trip requests, MRTR)
    /// instead of sending `elicitation/create`: the question then belongs to the call, so
    /// without an [`on_elicitation`](Self::on_elicitation) handler the call **suspends** like
    /// any tool (the agent loop's `wait_for` answers it, or the run halts durably and
    /// [`Client::resume`](crate::Client::resume) answers it later, even in another process),
    /// and the retry sends the answer with the server's echoed `requestState` (kept in the
    /// request's `data.mcpRound`, [`ROUND_KEY`]).
    ///
    /// Off by default: servers written for the older protocol may still send
    /// `elicitation/create`, which a `2026-07-28` session forbids.
    #[must_use]
    pub fn multi_round_trip(mut self, on: bool) -> Self {
        self.rounds = on;
        self
    }

    /// Who answers the server's elicitations: each becomes a [`Request`] (a form ->
    /// `input` with `data.schema` = `requestedSchema`; URL mode -> `authorization` with the
    /// `url` and the MCP elicitation id in `data.elicitationId`; `data.mcpServer` names the
    /// server), and the [`Answer`] goes back as the elicitation's result (accept, decline for
    /// reason `declined`, cancel otherwise).
    ///
    /// An `elicitation/create` is a live request inside the server's running `tools/call`, so
    /// it must be answered while the connection waits: a durable halt (park the run, answer
    /// tomorrow) cannot cover it. Without a handler such an elicitation is cancelled and the
    /// tool's result says, as an error the model reads, that the server needed a human. An
    /// `input_required` result ([`multi_round_trip`](Self::multi_round_trip)) goes to the
    /// handler too; without one, the call suspends instead.
    ///
    /// Elicitations are matched to the call that caused them by id, never by order: on
    /// streamable HTTP by the request whose response stream carried them, with
    /// multi-round-trip by the call whose result asked. (Over stdio with several calls in
    /// flight an `elicitation/create` cannot be told apart; the handler still answers it,
    /// and no call is labelled with it.) While the handler waits for a person, the call's
    /// [`timeout`](Self::timeout) waits too.
    ///
    /// Every elicitation passes the trust boundary
    /// ([`check_request`](crate::boundary::check_request)) before the handler sees it: one that
    /// asks for a credential (a `password` field, `format: password`, a "PIN" title...) is
    /// declined to the server with the reason under `_meta["toolnexus/refused"]`, and the
    /// tool's result says so, as an error the model reads.
    #[must_use]
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Answer> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |r| Box::pin(handler(r))));
        self
    }

    /// Starts (stdio) or reaches (HTTP) the server, and lists its tools.
    ///
    /// # Errors
    ///
    /// [`McpError::Connect`] naming the server when it cannot be started, does not complete
    /// `initialize`, or cannot list its tools.
    pub async fn connect(self) -> Result<McpServer, McpError> {
        let name = self.name.clone();
        let fail = |message: String| McpError::Connect {
            server: name.clone(),
            message,
        };
        let in_flight = Arc::new(InFlight::default());
        let handler = Handler {
            server: self.name.clone(),
            host: self.handler.clone(),
            in_flight: Arc::clone(&in_flight),
        };
        // with multi-round-trip on, the 2026-07-28 protocol where the server has it
        // (elicitations then come back in the call's own `input_required` result)
        let rounds = self.rounds;
        let lifecycle = move || {
            if rounds {
                ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    legacy_version: None,
                }
            } else {
                ClientLifecycleMode::Initialize
            }
        };
        let (running, pid) = match &self.target {
            Target::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env);
                let (child, _stderr) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| fail(format!("cannot start `{command}`: {e}")))?;
                let pid = child.id();
                let running = handler
                    .serve_with_lifecycle(child, lifecycle())
                    .await
                    .map_err(|e| fail(format!("`{command}` did not start an MCP session: {e}")))?;
                (running, pid)
            }
            Target::Http { url, headers } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                for (k, v) in headers {
                    let name = reqwest::header::HeaderName::try_from(k.as_str())
                        .map_err(|e| fail(format!("invalid header name `{k}`: {e}")))?;
                    let value = reqwest::header::HeaderValue::try_from(v.as_str())
                        .map_err(|e| fail(format!("invalid value of header `{k}`: {e}")))?;
                    config.custom_headers.insert(name, value);
                }
                let client = reqwest::Client::builder()
                    .tls_backend_preconfigured(crate::providers::tls_config().map_err(fail)?)
                    .build()
                    .map_err(|e| fail(format!("cannot build the HTTP client: {e}")))?;
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let running = handler
                    .serve_with_lifecycle(transport, lifecycle())
                    .await
                    .map_err(|e| fail(format!("{url} did not start an MCP session: {e}")))?;
                (running, None)
            }
        };
        let listed = running
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| fail(format!("cannot list its tools: {e}")))?;
        let conn = Arc::new(Conn {
            name: self.name.clone(),
            peer: running.peer().clone(),
            running: tokio::sync::Mutex::new(Some(running)),
            closed: AtomicBool::new(false),
            in_flight,
            host: self.handler.clone(),
            timeout: self.timeout,
            pid,
        });
        let prefix = self.prefix.unwrap_or_default();
        let tools = listed
            .into_iter()
            .map(|t| {
                let mut name = sanitize(&format!("{prefix}{}", t.name));
                if name.len() > MAX_TOOL_NAME_LEN {
                    name.truncate(MAX_TOOL_NAME_LEN);
                }
                Arc::new(McpTool {
                    name,
                    remote: t.name.to_string(),
                    description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                    schema: Value::Object((*t.input_schema).clone()),
                    annotations: hints_from_mcp(t.annotations.as_ref()),
                    conn: Arc::clone(&conn),
                }) as SharedTool
            })
            .collect();
        Ok(McpServer { conn, tools })
    }
}

/// A connected MCP server whose tools go into a [`Toolkit`](crate::Toolkit) like any other
/// (source `"mcp"`). Each tool's [`annotations`](crate::Tool::annotations) are the hints the
/// server listed for it: the server's claims, so a host that does not trust the server gates
/// its tools with an [`approval_policy`](crate::client::ClientBuilder::approval_policy) on
/// `tool.source() == SOURCE_MCP` rather than on their hints.
///
/// ```no_run
/// use toolnexus::Toolkit;
/// use toolnexus::mcp::McpServer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let files = McpServer::stdio("files", "npx")
///     .args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .prefix("fs_")
///     .connect()
///     .await?;
/// let toolkit = Toolkit::builder().tools(files.tools()).build()?;
/// # let _ = toolkit;
/// files.close().await;
/// # Ok(()) }
/// ```
///
/// A server that dies keeps its tools in the toolkit; each call then fails with a message
/// naming the server, and the other tools keep working. [`close`](Self::close) ends the
/// session and the child process (dropping the last handle and tool does too).
#[derive(Clone)]
pub struct McpServer {
    conn: Arc<Conn>,
    tools: Vec<SharedTool>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.conn.name)
            .field("tools", &self.tools.len())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl McpServer {
    /// A server started as a child process speaking MCP over its stdin and stdout.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder::new(
            name,
            Target::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
        )
    }

    /// A server reached over streamable HTTP at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder::new(
            name,
            Target::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        )
    }

    /// The name it was given (in error messages and `data.mcpServer`).
    pub fn name(&self) -> &str {
        &self.conn.name
    }

    /// Its tools, in the order the server lists them.
    pub fn tools(&self) -> Vec<SharedTool> {
        self.tools.clone()
    }

    /// The child process id of a stdio server.
    pub fn pid(&self) -> Option<u32> {
        self.conn.pid
    }

    /// Whether [`close`](Self::close) was called or the session ended.
    pub fn is_closed(&self) -> bool {
        self.conn.closed.load(Ordering::SeqCst) || self.conn.peer.is_transport_closed()
    }

    /// Ends the session; a stdio server's process is shut down (its stdin closed, then
    /// terminated if it does not exit) and waited for. Its tools then fail with
    /// `MCP server "<name>" is closed`.
    pub async fn close(&self) {
        self.conn.closed.store(true, Ordering::SeqCst);
        let running = self.conn.running.lock().await.take();
        if let Some(mut running) = running {
            let _ = running.close().await;
        }
    }
}

struct Conn {
    name: String,
    peer: rmcp::Peer<RoleClient>,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    closed: AtomicBool,
    /// The calls waiting for their result, to match the server's elicitations and progress
    /// notifications to them.
    in_flight: Arc<InFlight>,
    host: Option<ElicitationHandler>,
    timeout: Option<Duration>,
    pid: Option<u32>,
}

/// The client side of the session: declares form and URL elicitation, and answers them
/// through the host's handler.
struct Handler {
    server: String,
    host: Option<ElicitationHandler>,
    in_flight: Arc<InFlight>,
}

/// What one call in flight learned while it waited: the server's elicitations that were
/// declined or cancelled on its behalf, whether a person is being asked for it, its progress.
#[derive(Default)]
struct CallWatch {
    /// The messages of elicitations cancelled for want of a handler.
    unanswered: Mutex<Vec<String>>,
    /// Why each elicitation the trust boundary refused was declined.
    refused: Mutex<Vec<String>>,
    /// How many of its elicitations a person is answering right now (the call's timeout
    /// waits meanwhile: a person's time never times a call out).
    asking: AtomicUsize,
    /// Woken by progress and by a person starting or finishing an answer.
    touched: tokio::sync::Notify,
    progress_token: Option<ProgressToken>,
}

impl CallWatch {
    fn note(list: &Mutex<Vec<String>>, message: String) {
        list.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
    }

    fn take(list: &Mutex<Vec<String>>) -> Vec<String> {
        std::mem::take(&mut *list.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The calls of one session waiting for their result, by request id.
#[derive(Default)]
struct InFlight {
    calls: Mutex<HashMap<RequestId, Arc<CallWatch>>>,
}

impl InFlight {
    fn insert(&self, id: RequestId, watch: Arc<CallWatch>) {
        self.lock().insert(id, watch);
    }

    fn remove(&self, id: &RequestId) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Arc<CallWatch>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call a server's request belongs to, matched by id, never by order: the request id
    /// of the POST whose response stream carried it (streamable HTTP), or the one call in
    /// flight. With several calls in flight on a transport that cannot tell (stdio), `None`.
    fn owner(&self, extensions: &Extensions) -> Option<Arc<CallWatch>> {
        let calls = self.lock();
        match extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => calls.get(id).cloned(),
            _ if calls.len() == 1 => calls.values().next().cloned(),
            _ => None,
        }
    }

    /// The calls a person's time must not count against: the owner, or every call in flight
    /// when the owner cannot be told.
    fn waiting_for(&self, owner: Option<&Arc<CallWatch>>) -> Vec<Arc<CallWatch>> {
        match owner {
            Some(watch) => vec![Arc::clone(watch)],
            None => self.lock().values().cloned().collect(),
        }
    }
}

/// While alive, the calls' timeouts wait for a person.
struct Asking(Vec<Arc<CallWatch>>);

impl Asking {
    fn start(calls: Vec<Arc<CallWatch>>) -> Self {
        for c in &calls {
            c.asking.fetch_add(1, Ordering::SeqCst);
            c.touched.notify_one();
        }
        Self(calls)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        for c in &self.0 {
            c.asking.fetch_sub(1, Ordering::SeqCst);
            c.touched.notify_one();
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        elicitation.url = Some(UrlElicitationCapability::new());
        let mut caps = ClientCapabilities::default();
        caps.elicitation = Some(elicitation);
        ClientConfig::new(
            caps,
            Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let owner = self.in_flight.owner(&context.extensions);
        let req = match incoming(&self.server, &request, Some(&context.meta)) {
            Incoming::Ask(req) => Some(req),
            Incoming::Refused(why) => {
                if let Some(watch) = &owner {
                    CallWatch::note(&watch.refused, why.to_string());
                }
                return Ok(refused_result(&why));
            }
            Incoming::Unknown => None,
        };
        let (Some(host), Some(req)) = (&self.host, req) else {
            if let Some(watch) = &owner {
                CallWatch::note(&watch.unanswered, message_of(&request));
            }
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        let _asking = Asking::start(self.in_flight.waiting_for(owner.as_ref()));
        let answer = host(req.clone()).await;
        Ok(result_from_answer(&req, &answer))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let calls = self.in_flight.lock();
        if let Some(watch) = calls
            .values()
            .find(|w| w.progress_token.as_ref() == Some(&params.progress_token))
        {
            watch.touched.notify_one();
        }
    }
}

fn message_of(request: &ElicitRequestParams) -> String {
    match request {
        ElicitRequestParams::FormElicitationParams { message, .. }
        | ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
        _ => String::new(),
    }
}

/// One tool of an MCP server.
struct McpTool {
    name: String,
    remote: String,
    description: String,
    schema: Value,
    /// The hints the server listed for it (its claims, not guarantees).
    annotations: ToolAnnotations,
    conn: Arc<Conn>,
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn source(&self) -> &str {
        SOURCE_MCP
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let conn = &*self.conn;
            let server = &conn.name;
            if conn.closed.load(Ordering::SeqCst) {
                return ToolResult::error(format!("MCP server \"{server}\" is closed"));
            }
            if conn.peer.is_transport_closed() {
                return ToolResult::error(format!(
                    "MCP server \"{server}\" is not running (its connection closed); tool `{}` cannot be called",
                    self.name
                ));
            }
            let mut params = CallToolRequestParams::new(self.remote.clone()).with_arguments(args);
            // the retry of an answered `input_required` round: the answer under its key, the
            // server's state echoed
            if let Some(retry) = retry_of(ctx) {
                match retry {
                    Ok((state, responses)) => {
                        params.request_state = state;
                        params.input_responses = Some(responses);
                    }
                    Err(e) => return ToolResult::error(e),
                }
            }
            let mut notes = Notes::default();
            for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
                let result = match self.send(params.clone(), ctx, &mut notes).await {
                    Ok(result) => result,
                    Err(failed) => return failed,
                };
                match result {
                    ServerResult::CallToolResult(result) => {
                        return notes.finish(server, from_mcp(&result));
                    }
                    ServerResult::InputRequiredResult(round) => {
                        match self.fulfil(round, ctx, &mut notes).await {
                            Round::Retry(state, responses) => {
                                params.request_state = state;
                                params.input_responses = Some(responses);
                            }
                            Round::Suspend(request) => return ToolResult::suspended(request),
                            Round::Failed(failed) => return failed,
                        }
                    }
                    ServerResult::CreateTaskResult(_) => {
                        return ToolResult::error(format!(
                            "MCP server \"{server}\" answered `{}` with a task, which this client did not ask for",
                            self.remote
                        ));
                    }
                    _ => {
                        return ToolResult::error(format!(
                            "MCP server \"{server}\" answered `{}` with something that is not a tool result",
                            self.remote
                        ));
                    }
                }
            }
            ToolResult::error(format!(
                "MCP server \"{server}\" still asked for input after {DEFAULT_MRTR_MAX_ROUNDS} rounds of `{}`",
                self.remote
            ))
        })
    }
}

/// The server's elicitations a call had declined or cancelled on its behalf.
#[derive(Default)]
struct Notes {
    unanswered: Vec<String>,
    refused: Vec<String>,
}

impl Notes {
    fn absorb(&mut self, watch: &CallWatch) {
        self.unanswered.extend(CallWatch::take(&watch.unanswered));
        self.refused.extend(CallWatch::take(&watch.refused));
    }

    /// The call's result, told what the model must know: a credential asked for and
    /// declined, a person needed and no one to ask.
    fn finish(self, server: &str, result: ToolResult) -> ToolResult {
        if !self.refused.is_empty() {
            return ToolResult::error(format!(
                "MCP server \"{server}\" asked for a credential, which is never collected through an elicitation, so it was declined ({}); the tool said: {}",
                self.refused.join("; "),
                result.output
            ));
        }
        if self.unanswered.is_empty() {
            return result;
        }
        ToolResult::error(format!(
            "MCP server \"{server}\" needed a human to answer \"{}\", but no one can answer here (no elicitation handler), so it was cancelled; the tool said: {}",
            self.unanswered.join("\", \""),
            result.output
        ))
    }
}

/// What an `input_required` round leads to.
enum Round {
    /// Retry with these responses and the echoed state.
    Retry(Option<String>, InputResponses),
    /// No handler: the call suspends with the server's question (the loop's `wait_for`, or a
    /// durable halt, answers it; the retry finds the round in `data.mcpRound`).
    Suspend(Request),
    Failed(ToolResult),
}

/// The `requestState` and `inputResponses` of the retry after an answered `input_required`
/// round: `None` for a first call.
fn retry_of(ctx: &Context) -> Option<Result<(Option<String>, InputResponses), String>> {
    let (request, answer) = (ctx.request()?, ctx.answer()?);
    let round = request.data.as_ref()?.get(ROUND_KEY)?;
    if answer.id != request.id {
        return Some(Err(format!(
            "the answer (id {}) does not answer the MCP server's request (id {})",
            answer.id, request.id
        )));
    }
    let Some(key) = round.get("inputKey").and_then(Value::as_str) else {
        return Some(Err(format!(
            "`data.{ROUND_KEY}` of the request names no inputKey"
        )));
    };
    let state = round
        .get("requestState")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut responses = InputResponses::new();
    responses.insert(
        key.to_owned(),
        serde_json::to_value(result_from_answer(request, answer)).unwrap_or(Value::Null),
    );
    Some(Ok((state, responses)))
}

/// The `_meta` of an input request inside an `input_required` result.
fn meta_of(request: &ElicitRequest) -> Option<Map<String, Value>> {
    request
        .extensions
        .get::<RequestMetaObject>()
        .or_else(|| request.params.meta())
        .map(|m| m.0.0.clone())
}

impl McpTool {
    /// Sends one `tools/call` and waits for its result: cancelled with the call, timed out
    /// after the timeout of silence (progress from the server, or a person answering one of
    /// its elicitations, restarts it).
    async fn send(
        &self,
        params: CallToolRequestParams,
        ctx: &Context,
        notes: &mut Notes,
    ) -> Result<ServerResult, ToolResult> {
        let conn = &*self.conn;
        let server = &conn.name;
        let timeout = match (ctx.timeout(), conn.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let failed = |e: &dyn fmt::Display| {
            ToolResult::error(format!(
                "MCP server \"{server}\" failed to run `{}`: {e}",
                self.remote
            ))
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = conn
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| failed(&e))?;
        let id = handle.id.clone();
        let watch = Arc::new(CallWatch {
            progress_token: Some(handle.progress_token.clone()),
            ..CallWatch::default()
        });
        conn.in_flight.insert(id.clone(), Arc::clone(&watch));
        let outcome = self
            .wait(handle.await_response(), ctx, timeout, &watch)
            .await;
        conn.in_flight.remove(&id);
        notes.absorb(&watch);
        let cancel = |reason: String| async {
            let _ = conn
                .peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id.clone()),
                    Some(reason),
                ))
                .await;
        };
        match outcome {
            Waited::Done(Ok(result)) => Ok(result),
            Waited::Done(Err(e)) => Err(failed(&e)),
            Waited::Cancelled => {
                cancel("cancelled".to_owned()).await;
                Err(ToolResult::error(format!("cancelled: {}", self.name)))
            }
            Waited::TimedOut(t) => {
                cancel("timeout".to_owned()).await;
                Err(ToolResult::error(format!(
                    "MCP server \"{server}\" did not answer `{}` within {t:?}",
                    self.remote
                )))
            }
        }
    }

    async fn wait<F: Future<Output = T>, T>(
        &self,
        response: F,
        ctx: &Context,
        timeout: Option<Duration>,
        watch: &CallWatch,
    ) -> Waited<T> {
        let mut response = std::pin::pin!(response);
        loop {
            let silence = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Waited::Cancelled,
                done = &mut response => return Waited::Done(done),
                () = watch.touched.notified() => {}
                () = silence => {
                    if watch.asking.load(Ordering::SeqCst) == 0 {
                        return Waited::TimedOut(timeout.unwrap_or_default());
                    }
                }
            }
        }
    }

    /// One `input_required` round: each elicitation passes the trust boundary, then goes to
    /// the host's handler; without one, a single elicitation suspends the call.
    async fn fulfil(&self, round: InputRequiredResult, ctx: &Context, notes: &mut Notes) -> Round {
        let server = &self.conn.name;
        let requests = round.input_requests.unwrap_or_default();
        let elicitations: Vec<(String, ElicitRequest)> = requests
            .into_iter()
            .filter_map(|(key, r)| match r {
                InputRequest::Elicitation(e) => Some((key, e)),
                _ => None,
            })
            .collect();
        let mut responses = InputResponses::new();
        let lone = elicitations.len() == 1;
        for (key, e) in elicitations {
            let meta = meta_of(&e);
            let result = match incoming(server, &e.params, meta.as_ref()) {
                Incoming::Refused(why) => {
                    notes.refused.push(why.to_string());
                    refused_result(&why)
                }
                Incoming::Ask(request) => match &self.conn.host {
                    Some(host) => {
                        let answer = tokio::select! {
                            biased;
                            () = ctx.cancellation().cancelled() => {
                                return Round::Failed(ToolResult::error(format!("cancelled: {}", self.name)));
                            }
                            answer = host(request.clone()) => answer,
                        };
                        result_from_answer(&request, &answer)
                    }
                    None if lone => {
                        let round = serde_json::json!({
                            "requestState": round.request_state,
                            "inputKey": key,
                        });
                        return Round::Suspend(request.with_data_entry(ROUND_KEY, round));
                    }
                    None => {
                        notes.unanswered.push(message_of(&e.params));
                        ElicitResult::new(ElicitationAction::Cancel)
                    }
                },
                Incoming::Unknown => ElicitResult::new(ElicitationAction::Cancel),
            };
            responses.insert(key, serde_json::to_value(result).unwrap_or(Value::Null));
        }
        Round::Retry(round.request_state, responses)
    }
}

enum Waited<T> {
    Done(T),
    Cancelled,
    TimedOut(Duration),
}

/// An MCP tool result as a [`ToolResult`]: text blocks joined by newlines (other blocks named
/// by kind), or the structured content as JSON when there is no content.
fn from_mcp(result: &CallToolResult) -> ToolResult {
    let mut parts = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!("[image {}]", i.mime_type)),
            ContentBlock::Audio(a) => parts.push(format!("[audio {}]", a.mime_type)),
            ContentBlock::Resource(r) => parts.push(match &r.resource {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
                other => format!("[resource {}]", resource_uri(other)),
            }),
            ContentBlock::ResourceLink(l) => parts.push(format!("[resource {}]", l.uri)),
            _ => {}
        }
    }
    let output = if parts.is_empty() {
        result
            .structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    } else {
        parts.join("\n")
    };
    if result.is_error == Some(true) {
        ToolResult::error(output)
    } else {
        ToolResult::success(output)
    }
}

fn resource_uri(contents: &rmcp::model::ResourceContents) -> String {
    serde_json::to_value(contents)
        .ok()
        .and_then(|v| v.get("uri").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default()
}
