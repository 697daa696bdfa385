//! Using an MCP server's tools through a [`Toolkit`](crate::Toolkit): [`McpServer`] and its
//! builder, the connection (stdio child process or streamable HTTP).
//!
//! - `session.rs`: the client side of the session: the server's elicitations (checked at the
//!   trust boundary, answered by the host's handler) and progress, matched to the call in
//!   flight they belong to;
//! - `tool.rs`: one server tool as a [`Tool`](crate::Tool): a call, its multi-round-trip rounds, and the
//!   server's result as a [`ToolResult`](crate::ToolResult).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ClientServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;

use crate::mcp::McpError;
use crate::mcp::annotations::hints_from_mcp;
use crate::request::{Answer, Request};
use crate::tool::{BoxFuture, MAX_TOOL_NAME_LEN, SharedTool, sanitize};

mod session;
mod tool;

use session::{Handler, InFlight};
use tool::McpTool;

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

    /// How long one tool call may wait in silence (unless the call's [`Context`](crate::Context) sets a
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
    /// reason `declined`, cancel otherwise). An accepted form's fields that the answer leaves
    /// out and the form gives a `default` (SEP-1034) go back with their default: a host that
    /// shows the form shows the defaults (they are in `data.schema`), and one that accepts
    /// without changing a field accepts its default.
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

    /// Starts (stdio) or reaches (HTTP) the server and starts a session with `lifecycle`: the
    /// session and a stdio server's process id, or what went wrong.
    async fn open(
        &self,
        handler: Handler,
        lifecycle: ClientLifecycleMode,
    ) -> Result<(RunningService<RoleClient, Handler>, Option<u32>), String> {
        match &self.target {
            Target::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env);
                let (child, _stderr) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                let pid = child.id();
                let running = handler
                    .serve_with_lifecycle(child, lifecycle)
                    .await
                    .map_err(|e| format!("`{command}` did not start an MCP session: {e}"))?;
                Ok((running, pid))
            }
            Target::Http { url, headers } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                for (k, v) in headers {
                    let name = reqwest::header::HeaderName::try_from(k.as_str())
                        .map_err(|e| format!("invalid header name `{k}`: {e}"))?;
                    let value = reqwest::header::HeaderValue::try_from(v.as_str())
                        .map_err(|e| format!("invalid value of header `{k}`: {e}"))?;
                    config.custom_headers.insert(name, value);
                }
                let client = reqwest::Client::builder()
                    .tls_backend_preconfigured(crate::providers::tls_config()?)
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let running = handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| format!("{url} did not start an MCP session: {e}"))?;
                Ok((running, None))
            }
        }
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
        // (elicitations then come back in the call's own `input_required` result); a server
        // that answers `server/discover` with anything but its versions (or fails it) is
        // connected again with `initialize`
        let (running, pid) = if self.rounds {
            let modern = ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            };
            match self.open(handler.clone(), modern).await {
                Ok(opened) => opened,
                Err(discover) => self
                    .open(handler, ClientLifecycleMode::Initialize)
                    .await
                    .map_err(|e| fail(format!("{discover}; then with `initialize`: {e}")))?,
            }
        } else {
            self.open(handler, ClientLifecycleMode::Initialize)
                .await
                .map_err(fail)?
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
