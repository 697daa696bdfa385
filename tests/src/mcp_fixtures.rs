//! Shared MCP fixtures: the toolkit the MCP tests serve, an rmcp `#[tool]` server that elicits
//! (for the consuming side), a scripted rmcp client, and the hyper glue to put an rmcp server
//! on 127.0.0.1.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientConfig, ContentBlock, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient, RoleServer};
use rmcp::{ClientHandler, ErrorData, tool, tool_router};
use serde_json::{Value, json};
use toolnexus::question::QuestionTool;
use toolnexus::{Answer, Form, Request, Suspension, Toolkit, ask, suspend, tool as tn_tool};

/// Where the traveller goes.
#[derive(Debug, Form, serde::Deserialize)]
pub struct Destination {
    /// The city to fly to.
    pub city: String,
}

/// A payment confirmation.
#[derive(Debug, Form, serde::Deserialize)]
pub struct Payment {
    /// Whether to pay.
    pub confirm: bool,
}

/// Echo the text back.
#[tn_tool(read_only, idempotent, open_world = false)]
pub fn echo(
    /// What to echo.
    text: String,
) -> String {
    text
}

/// Book a trip; asks where to.
#[tn_tool]
pub fn book_trip(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let dest = ask!(ctx, input "Which city?", schema = Destination, id = "r-city");
    Ok(format!("booked to {}", dest.city))
}

/// Take a note; asks for free text.
#[tn_tool]
pub fn take_note(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let text: String = ask!(ctx, input "Any note?", id = "r-note");
    Ok(format!("note: {text}"))
}

/// Delete a file, after the user approves.
#[tn_tool(destructive)]
pub fn delete_file(
    /// The file.
    path: &str,
    ctx: &toolnexus::Context,
) -> Result<String, Suspension> {
    let () = ask!(ctx, approval format!("Delete {path}?"), id = "r-delete");
    Ok(format!("deleted {path}"))
}

/// Log in, then read the inbox.
#[tn_tool]
pub fn read_inbox(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let () = ask!(
        ctx,
        authorization,
        url = "https://example.com/login",
        id = "r-login"
    );
    Ok("inbox: 3 messages".to_owned())
}

/// Pay, after a confirmation (a custom kind with a schema).
#[tn_tool]
pub fn pay(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let p = ask!(ctx, "payment" "Pay 5 EUR?", schema = Payment, id = "r-pay");
    Ok(format!("paid: {}", p.confirm))
}

/// Wire money (a custom kind without a schema: no MCP form exists for it).
#[tn_tool]
pub fn wire_money(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let () = ask!(ctx, "wire" "Wire 5 EUR?", id = "r-wire");
    Ok("wired".to_owned())
}

/// Always asks again, even when answered.
#[tn_tool]
pub fn insist() -> Result<String, Suspension> {
    Err(suspend!(input "Really?", id = "r-again"))
}

/// Panics.
///
/// # Panics
///
/// Always: a tool that panics, for the tests.
#[tn_tool]
pub fn boom() -> String {
    panic!("kaboom")
}

/// The toolkit the MCP serving tests serve: every mapping of CONTRACT section 8 has a tool.
///
/// # Panics
///
/// Never: the fixture's tools are valid.
pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(Echo)
        .tool(BookTrip)
        .tool(TakeNote)
        .tool(DeleteFile)
        .tool(ReadInbox)
        .tool(Pay)
        .tool(WireMoney)
        .tool(Insist)
        .tool(Boom)
        .tool(QuestionTool::new())
        .build()
        .expect("the fixture toolkit is valid")
}

/// What a scripted client saw and answered.
#[derive(Clone, Default)]
pub struct Script {
    /// Each elicitation received, as its wire JSON (without `_meta`).
    pub seen: Arc<Mutex<Vec<Value>>>,
    /// For each elicitation received, its `_meta["toolnexus/pending"]` (`null` when absent).
    pub pending: Arc<Mutex<Vec<Value>>>,
    /// The answers to give, in order (`None`: never answer).
    pub replies: Arc<Mutex<VecDeque<Option<ElicitResult>>>>,
    /// Which elicitation modes the client declares (`None`: no elicitation capability).
    pub modes: Option<(bool, bool)>,
    /// Notified when an elicitation arrives.
    pub arrived: Arc<tokio::sync::Notify>,
    /// How long the human thinks before each reply.
    pub thinks: Arc<Mutex<std::time::Duration>>,
    /// Whether the client declares the Tasks extension (`io.modelcontextprotocol/tasks`).
    pub tasks: bool,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Script")
            .field("modes", &self.modes)
            .finish_non_exhaustive()
    }
}

impl Script {
    /// A client declaring form and URL elicitation.
    pub fn new() -> Self {
        Self {
            modes: Some((true, true)),
            ..Self::default()
        }
    }

    /// This client, declaring the Tasks extension too.
    #[must_use]
    pub fn with_tasks(mut self) -> Self {
        self.tasks = true;
        self
    }

    /// A client declaring the given modes (`None`: no elicitation at all).
    pub fn with_modes(modes: Option<(bool, bool)>) -> Self {
        Self {
            modes,
            ..Self::default()
        }
    }

    /// Queues one reply.
    pub fn reply(&self, r: Option<ElicitResult>) {
        self.replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(r);
    }

    /// The elicitations seen so far.
    pub fn seen(&self) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The human takes `time` before each reply.
    pub fn think(&self, time: std::time::Duration) {
        *self.thinks.lock().unwrap_or_else(PoisonError::into_inner) = time;
    }

    /// The `_meta["toolnexus/pending"]` of each elicitation seen so far (`null` when absent).
    pub fn pending(&self) -> Vec<Value> {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets what was seen.
    pub fn clear(&self) {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// Accept with content.
pub fn accept(content: Value) -> Option<ElicitResult> {
    Some(ElicitResult::new(ElicitationAction::Accept).with_content(content))
}

/// Accept without content.
pub fn accept_empty() -> Option<ElicitResult> {
    Some(ElicitResult::new(ElicitationAction::Accept))
}

/// Decline.
pub fn decline() -> Option<ElicitResult> {
    Some(ElicitResult::new(ElicitationAction::Decline))
}

/// Cancel.
pub fn cancel() -> Option<ElicitResult> {
    Some(ElicitResult::new(ElicitationAction::Cancel))
}

impl ClientHandler for Script {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if let Some((form, url)) = self.modes {
            let mut e = ElicitationCapability::new();
            if form {
                e.form = Some(FormElicitationCapability::new());
            }
            if url {
                e.url = Some(UrlElicitationCapability::new());
            }
            caps.elicitation = Some(e);
        }
        if self.tasks {
            caps.extensions.get_or_insert_with(Default::default).insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                serde_json::Map::new(),
            );
        }
        ClientConfig::new(caps, Implementation::new("script", "1.0.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        // rmcp moves the wire `_meta` into the context
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(
                context
                    .meta
                    .get("toolnexus/pending")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(serde_json::to_value(&request).unwrap_or(Value::Null));
        self.arrived.notify_one();
        let reply = self
            .replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let thinks = *self.thinks.lock().unwrap_or_else(PoisonError::into_inner);
        tokio::time::sleep(thinks).await;
        match reply {
            Some(Some(r)) => Ok(r),
            // never answer
            Some(None) => std::future::pending().await,
            None => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        }
    }
}

/// The arguments of the rmcp server's `ask_after`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AskAfterArgs {
    /// The elicitation's message.
    pub message: String,
    /// How long to wait before asking, and again after the answer, in milliseconds.
    pub delay_ms: u64,
}

/// The arguments of the rmcp server's `echo`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// What to echo.
    pub text: String,
}

/// An rmcp `#[tool]` server (no toolnexus in it): `echo`, `ask_city` (a form elicitation),
/// `ask_password` (a form elicitation for a credential), `login` (a URL elicitation with id
/// `e-1`), `die` (exits the process, for stdio).
#[derive(Clone, Debug, Default)]
pub struct RmcpPeer;

#[tool_router(server_handler)]
impl RmcpPeer {
    /// Echo the text back.
    #[tool(
        description = "Echo the text back.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    pub fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// Asks which city, by a form elicitation.
    #[tool(description = "Ask the user which city.")]
    pub async fn ask_city(
        &self,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Which city?".into(),
            requested_schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city."}},
                "required": ["city"]
            }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
        };
        let text = match ctx.peer.create_elicitation(params).await {
            Ok(r) => match r.action {
                ElicitationAction::Accept => format!(
                    "city: {}",
                    r.content
                        .as_ref()
                        .and_then(|c| c.get("city"))
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                ),
                ElicitationAction::Decline => "declined".to_owned(),
                _ => "cancelled".to_owned(),
            },
            Err(e) => format!("elicitation failed: {e}"),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// Asks for the user's bank password by a form elicitation (which toolnexus declines);
    /// says what came back, with the decline's `_meta["toolnexus/refused"]`.
    #[tool(description = "Ask the user for their bank password.")]
    pub async fn ask_password(
        &self,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Sign in to your bank".into(),
            requested_schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {"password": {"type": "string", "description": "Your bank password."}},
                "required": ["password"]
            }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
        };
        let text = match ctx.peer.create_elicitation(params).await {
            Ok(r) => {
                let why = r
                    .meta
                    .as_ref()
                    .and_then(|m| m.0.get("toolnexus/refused"))
                    .and_then(Value::as_str)
                    .unwrap_or("no reason");
                format!("{:?}: {why}", r.action)
            }
            Err(e) => format!("elicitation failed: {e}"),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// Asks the user to log in, by a URL elicitation.
    #[tool(description = "Ask the user to log in.")]
    pub async fn login(
        &self,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: "Log in to Example".into(),
            url: "https://example.com/login".into(),
            elicitation_id: "e-1".into(),
        };
        let text = match ctx.peer.create_elicitation(params).await {
            Ok(r) => match r.action {
                ElicitationAction::Accept => "logged in".to_owned(),
                ElicitationAction::Decline => "declined".to_owned(),
                _ => "cancelled".to_owned(),
            },
            Err(e) => format!("elicitation failed: {e}"),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// Waits, asks `message` by a form elicitation (one string field `answer`), waits again,
    /// and says what came back: calls that overlap in time, for matching by id.
    #[tool(description = "Wait, ask, wait.")]
    pub async fn ask_after(
        &self,
        Parameters(AskAfterArgs { message, delay_ms }): Parameters<AskAfterArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let delay = std::time::Duration::from_millis(delay_ms);
        tokio::time::sleep(delay).await;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.clone(),
            requested_schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"]
            }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
        };
        let text = match ctx.peer.create_elicitation(params).await {
            Ok(r) => match r.action {
                ElicitationAction::Accept => format!(
                    "{message} -> {}",
                    r.content
                        .as_ref()
                        .and_then(|c| c.get("answer"))
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                ),
                ElicitationAction::Decline => format!("{message} -> declined"),
                _ => format!("{message} -> cancelled"),
            },
            Err(e) => format!("elicitation failed: {e}"),
        };
        tokio::time::sleep(delay).await;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// Exits the process (a server that dies mid-session).
    #[tool(description = "Exit the server process.")]
    pub fn die(&self) -> String {
        std::process::exit(3)
    }
}

/// Serves an rmcp server on 127.0.0.1 over streamable HTTP (sessions on); returns its URL and
/// a token that stops it.
///
/// # Panics
///
/// When 127.0.0.1 cannot be bound.
pub async fn serve_rmcp_http<S>(
    factory: impl Fn() -> S + Send + Sync + 'static,
) -> (String, tokio_util_token::CancellationToken)
where
    S: rmcp::ServerHandler,
{
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr: SocketAddr = listener.local_addr().expect("local addr");
    let stop = tokio_util_token::CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(factory()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let token = stop.clone();
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                () = token.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((s, _)) => {
                        let _ = s.set_nodelay(true);
                        s
                    }
                    Err(_) => continue,
                },
            };
            let service = service.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (format!("http://{addr}/mcp"), stop)
}

/// A plain reqwest client for 127.0.0.1 (rustls with the ring provider installed, as
/// reqwest's `rustls-no-provider` build needs).
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Cancellation tokens (toolnexus re-exports tokio-util's).
pub mod tokio_util_token {
    pub use toolnexus::CancellationToken;
}

/// The Requests an elicitation handler was given, in order.
pub type Seen = Arc<Mutex<Vec<Request>>>;

/// A handler that records each Request and answers with the next of `answers` (made from the
/// request).
///
/// # Panics
///
/// The handler panics when it is called more often than there are answers.
pub fn scripted_answers(
    answers: Vec<fn(&Request) -> Answer>,
) -> (
    Seen,
    impl Fn(Request) -> std::future::Ready<Answer> + Send + Sync + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let log = Arc::clone(&seen);
    let handler = move |r: Request| {
        let make = answers
            .lock()
            .unwrap()
            .next()
            .expect("an answer is scripted");
        let answer = make(&r);
        log.lock().unwrap().push(r);
        std::future::ready(answer)
    };
    (seen, handler)
}
