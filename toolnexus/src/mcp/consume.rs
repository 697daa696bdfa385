//! Using an MCP server's tools through a [`Toolkit`](crate::Toolkit).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
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
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .field("on_elicitation", &self.handler.is_some())
            .field("timeout", &self.timeout)
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

    /// How long one tool call may take (unless the call's [`Context`] sets a shorter timeout).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Who answers the server's elicitations: each becomes a [`Request`] (a form ->
    /// `input` with `data.schema` = `requestedSchema`; URL mode -> `authorization` with the
    /// `url` and the MCP elicitation id in `data.elicitationId`; `data.mcpServer` names the
    /// server), and the [`Answer`] goes back as the elicitation's result (accept, decline for
    /// reason `declined`, cancel otherwise).
    ///
    /// This is the MCP side of a client's `wait_for`: the elicitation is a live request inside
    /// the server's running `tools/call`, so it must be answered while the connection waits.
    /// A durable halt (park the run, answer tomorrow) cannot cover it: the server's call would
    /// have to outlive this process. Without a handler every elicitation is cancelled and the
    /// tool's result says, as an error the model reads, that the server needed a human.
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
        let unanswered = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(Mutex::new(Vec::new()));
        let handler = Handler {
            server: self.name.clone(),
            host: self.handler.clone(),
            unanswered: Arc::clone(&unanswered),
            refused: Arc::clone(&refused),
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
                    .serve(child)
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
                    .serve(transport)
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
            unanswered,
            refused,
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
    /// The messages of elicitations cancelled for want of a handler.
    unanswered: Arc<Mutex<Vec<String>>>,
    /// Why each elicitation the trust boundary refused was declined.
    refused: Arc<Mutex<Vec<String>>>,
    timeout: Option<Duration>,
    pid: Option<u32>,
}

/// The client side of the session: declares form and URL elicitation, and answers them
/// through the host's handler.
struct Handler {
    server: String,
    host: Option<ElicitationHandler>,
    unanswered: Arc<Mutex<Vec<String>>>,
    refused: Arc<Mutex<Vec<String>>>,
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
        let req = match incoming(&self.server, &request, Some(&context.meta)) {
            Incoming::Ask(req) => Some(req),
            Incoming::Refused(why) => {
                if let Ok(mut list) = self.refused.lock() {
                    list.push(why.to_string());
                }
                return Ok(refused_result(&why));
            }
            Incoming::Unknown => None,
        };
        let (Some(host), Some(req)) = (&self.host, req) else {
            let message = match &request {
                ElicitRequestParams::FormElicitationParams { message, .. }
                | ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
                _ => String::new(),
            };
            if let Ok(mut list) = self.unanswered.lock() {
                list.push(message);
            }
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        let answer = host(req.clone()).await;
        Ok(result_from_answer(&req, &answer))
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
            let seen = conn.unanswered.lock().map_or(0, |l| l.len());
            let seen_refused = conn.refused.lock().map_or(0, |l| l.len());
            let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(args);
            let call = conn.peer.call_tool(params);
            let timeout = match (ctx.timeout(), conn.timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let outcome = tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => {
                    return ToolResult::error(format!("cancelled: {}", self.name));
                }
                outcome = async {
                    match timeout {
                        Some(t) => tokio::time::timeout(t, call).await.ok(),
                        None => Some(call.await),
                    }
                } => outcome,
            };
            let result = match outcome {
                None => {
                    return ToolResult::error(format!(
                        "MCP server \"{server}\" did not answer `{}` within {:?}",
                        self.remote,
                        timeout.unwrap_or_default()
                    ));
                }
                Some(Err(e)) => {
                    return ToolResult::error(format!(
                        "MCP server \"{server}\" failed to run `{}`: {e}",
                        self.remote
                    ));
                }
                Some(Ok(result)) => from_mcp(&result),
            };
            let refused: Vec<String> = conn
                .refused
                .lock()
                .map(|l| l.iter().skip(seen_refused).cloned().collect())
                .unwrap_or_default();
            if !refused.is_empty() {
                return ToolResult::error(format!(
                    "MCP server \"{server}\" asked for a credential, which is never collected through an elicitation, so it was declined ({}); the tool said: {}",
                    refused.join("; "),
                    result.output
                ));
            }
            let unanswered: Vec<String> = conn
                .unanswered
                .lock()
                .map(|l| l.iter().skip(seen).cloned().collect())
                .unwrap_or_default();
            if unanswered.is_empty() {
                return result;
            }
            ToolResult::error(format!(
                "MCP server \"{server}\" needed a human to answer \"{}\", but no one can answer here (no elicitation handler), so it was cancelled; the tool said: {}",
                unanswered.join("\", \""),
                result.output
            ))
        })
    }
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
