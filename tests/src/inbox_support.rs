//! Fixtures of the inbox tests: runs parked in a store by a real client, an inbox over them,
//! and a worker that resumes the runs whose answers the inbox records.
//!
//! The one tool, `ask`, suspends with the request its arguments describe
//! (`{"kind","prompt","schema"?,"url"?,"expired"?}`); on the retry it returns
//! `answered: <answer data as JSON>` and counts the retry. The in-process model calls `ask`
//! with the run's prompt (a JSON object) as arguments, once more with its `then` (when there
//! is one) after the first answer, and ends the run with `final: <the last tool output>`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus::worker::Worker;
use toolnexus::{
    CancellationToken, Client, FnModel, FnTool, Reply, Request, Role, ToolResult, Toolkit,
};

/// The agent's name the fixtures' client is built with.
pub const AGENT: &str = "expense-bot";

/// The signing key of the fixtures' inbox.
pub const LINK_KEY: &[u8] = b"inbox-test-key-0123456789abcdef-0123456789";

/// A store with a client and toolkit that park runs in it.
#[derive(Debug)]
pub struct Fixture {
    /// The store the runs are parked in (SQLite, in a temporary file).
    pub store: Arc<dyn RunStore>,
    /// The client that parks and resumes.
    pub client: Client,
    /// The toolkit with `ask`.
    pub toolkit: Toolkit,
    /// How many times `ask` ran with an answer (the retries).
    pub retries: Arc<AtomicUsize>,
    /// The store's SQLite file (to damage a row as a test needs).
    pub path: std::path::PathBuf,
    /// Stops the fixture's worker.
    worker: CancellationToken,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.worker.cancel();
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Fixture {
    /// A fresh SQLite store in a temporary file (deleted on drop), a client parking in it, and
    /// a worker (`inbox-worker`, stopped on drop) resuming its answered runs (and expiring its
    /// requests on time).
    ///
    /// # Panics
    ///
    /// When the store cannot be opened (a fixture failure fails the test).
    pub async fn new() -> Self {
        Self::with_worker(true).await
    }

    /// As [`Fixture::new`] without the worker: answers are recorded and nothing resumes them,
    /// an expired request stays parked.
    ///
    /// # Panics
    ///
    /// When the store cannot be opened.
    pub async fn without_worker() -> Self {
        Self::with_worker(false).await
    }

    async fn with_worker(worker: bool) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "toolnexus-inbox-{}-{}.sqlite",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_file(&path);
        let store: Arc<dyn RunStore> =
            Arc::new(SqliteStore::open(&path).await.expect("sqlite store"));
        let retries = Arc::new(AtomicUsize::new(0));
        let counted = retries.clone();
        let ask = FnTool::builder("ask")
            .description("Asks a human.")
            .handler(move |args: Map<String, Value>, ctx: toolnexus::Context| {
                let counted = counted.clone();
                async move {
                    if let Some(answer) = ctx.answer() {
                        counted.fetch_add(1, Ordering::SeqCst);
                        let data = answer.data.clone().unwrap_or(Value::Null);
                        return ToolResult::success(format!("answered: {data}"));
                    }
                    ToolResult::suspended(request_of(&Value::Object(args)))
                }
            })
            .build()
            .expect("tool");
        let toolkit = Toolkit::builder()
            .tool(ask)
            .tool(pay())
            .build()
            .expect("toolkit");
        let model = FnModel::new(|req: toolnexus::ModelRequest| async move {
            let prompt = req
                .messages
                .iter()
                .find(|m| m.role == Role::User)
                .and_then(|m| m.content.clone());
            let args: Value =
                serde_json::from_str(&prompt.unwrap_or_default()).expect("json prompt");
            let done = req.messages.iter().filter(|m| m.role == Role::Tool).count();
            // `then`: the arguments of a second `ask` once the first is answered
            let next = match done {
                0 => Some(args.clone()),
                1 => args.get("then").cloned(),
                _ => None,
            };
            if let Some(next) = next {
                // `{"tool": "pay", "args": {..}}` calls another tool of the fixture
                if let Some(tool) = next.get("tool").and_then(Value::as_str) {
                    return Reply::tool_call(tool, next["args"].clone());
                }
                return Reply::tool_call("ask", next);
            }
            let last = req.messages.last().and_then(|m| m.content.clone());
            Reply::text(format!("final: {}", last.unwrap_or_default()))
        });
        let client = Client::builder(model)
            .model_name("inbox-test")
            .agent_name(AGENT)
            .store(store.clone())
            .build()
            .expect("client");
        let stop = CancellationToken::new();
        if worker {
            let running = Worker::builder(store.clone(), client.clone(), toolkit.clone())
                .name("inbox-worker")
                .poll(Duration::from_millis(100))
                .build();
            let stop = stop.clone();
            tokio::spawn(async move { running.run(stop.cancelled_owned()).await });
            // the worker is running once its first heartbeat is in the store: an answer
            // recorded from now on is said to be taken up ("The assistant is continuing.")
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while store
                .last_worker_seen()
                .await
                .expect("heartbeats")
                .is_none()
            {
                assert!(std::time::Instant::now() < deadline, "no heartbeat in 10 s");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        Self {
            store,
            client,
            toolkit,
            retries,
            path,
            worker: stop,
        }
    }

    /// Runs until `ask` suspends with the request `args` describe; the run is parked.
    ///
    /// # Panics
    ///
    /// When the run fails or does not halt.
    pub async fn park(&self, args: Value) -> Request {
        let result = self
            .client
            .run(args.to_string(), &self.toolkit)
            .await
            .expect("run");
        *result.pending.expect("the run halts on its request")
    }

    /// As [`Fixture::park`], for `principal` ([`Client::for_principal`]).
    ///
    /// # Panics
    ///
    /// When the run fails or does not halt.
    pub async fn park_for(&self, principal: &str, args: Value) -> Request {
        let result = self
            .client
            .for_principal(principal)
            .run(args.to_string(), &self.toolkit)
            .await
            .expect("run");
        *result.pending.expect("the run halts on its request")
    }

    /// Run `run_id` once the worker finished it (10 s at most).
    ///
    /// # Panics
    ///
    /// When the store fails or the run does not finish in time.
    pub async fn finished(&self, run_id: &str) -> toolnexus::store::StoredRun {
        self.store
            .wait_finished(run_id, Duration::from_secs(10))
            .await
            .expect("store")
            .expect("the worker finishes the run")
    }

    /// As [`Fixture::park`], as a turn of the conversation `conversation`.
    ///
    /// # Panics
    ///
    /// When the run fails or does not halt.
    pub async fn park_in(&self, conversation: &str, args: Value) -> Request {
        let result = self
            .client
            .ask(conversation, args.to_string(), &self.toolkit)
            .await
            .expect("run");
        *result.pending.expect("the run halts on its request")
    }

    /// An inbox over the store: signed links, and the list and the history for callers that
    /// send `x-admin: yes` or `?admin=yes`.
    ///
    /// # Panics
    ///
    /// Never: the link key is long enough.
    pub fn inbox(&self) -> Inbox {
        Inbox::builder(self.store.clone())
            .signed_links(LINK_KEY.to_vec())
            .authorize(|parts, target| {
                let admin = parts.headers.get("x-admin").is_some_and(|v| v == "yes")
                    || parts
                        .uri
                        .query()
                        .is_some_and(|q| q.split('&').any(|p| p == "admin=yes"));
                admin && matches!(target, Target::List | Target::History)
            })
            .build()
            .expect("a valid inbox")
    }

    /// How many times `ask` ran with an answer.
    pub fn retries(&self) -> usize {
        self.retries.load(Ordering::SeqCst)
    }
}

/// `pay`: a hand-made tool whose approval may be edited (it asks with
/// [`Request::editable_approval`]).
fn pay() -> FnTool {
    let schema = json!({"type": "object", "properties": {
        "amount": {"type": "integer", "minimum": 1},
        "to": {"type": "string"}
    }, "required": ["amount", "to"], "additionalProperties": false});
    let asked = schema.clone();
    FnTool::builder("pay")
        .description("Pays someone, once approved.")
        .destructive()
        .editable()
        .schema(schema)
        .handler(move |args: Map<String, Value>, ctx: toolnexus::Context| {
            let asked = asked.clone();
            async move {
                let amount = args.get("amount").cloned().unwrap_or(Value::Null);
                let to = args
                    .get("to")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if ctx.answer().is_none() {
                    let prompt = format!("Pay {amount} EUR to {to}?");
                    let request = Request::editable_approval(prompt, Value::Object(args), asked)
                        .expires_in(Duration::from_secs(3600));
                    return ToolResult::suspended(request);
                }
                ToolResult::success(format!("paid {amount} EUR to {to}"))
            }
        })
        .build()
        .expect("tool")
}

fn request_of(args: &Value) -> Request {
    let s = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut r = Request::new(s("kind"), s("prompt"));
    if let Some(url) = args.get("url").and_then(Value::as_str) {
        r = r.with_url(url);
    }
    let mut data = Map::new();
    for key in ["schema", "questions", "approvals", "notByRequester"] {
        if let Some(v) = args.get(key) {
            data.insert(key.to_owned(), v.clone());
        }
    }
    if !data.is_empty() {
        r = r.with_data(data);
    }
    if let Some(group) = args.get("approvers").and_then(Value::as_str) {
        r = r.with_approvers(group);
    }
    if args.get("expired").and_then(Value::as_bool) == Some(true) {
        r = r.with_expires_at(SystemTime::now() - Duration::from_secs(60));
    } else {
        r = r.expires_in(Duration::from_secs(3600));
    }
    // `expires_ms` and `escalate_to: [group, ms]`: a short deadline and one escalation step
    if let Some(ms) = args.get("expires_ms").and_then(Value::as_u64) {
        r = r.expires_in(Duration::from_millis(ms));
    }
    if let Some([group, ms]) = args
        .get("escalate_to")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        let ms = Duration::from_millis(ms.as_u64().unwrap_or(0));
        r = r.escalate_to(group.as_str().unwrap_or(""), ms);
    }
    r
}

/// The arguments of a trip `input` request: a form with every control.
pub fn trip_args(prompt: &str) -> Value {
    json!({
        "kind": "input",
        "prompt": prompt,
        "schema": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city you fly to; the airport nearest to it is booked for you."},
            "nights": {"type": "integer", "description": "How many nights.", "minimum": 1},
            "seat": {"type": "string", "title": "Seat preference", "enum": ["aisle", "window"]},
            "bags": {"type": "boolean", "description": "Checked luggage."}
        }, "required": ["city", "nights"]}
    })
}

/// The arguments of an `approval` request.
pub fn approval_args(prompt: &str) -> Value {
    json!({"kind": "approval", "prompt": prompt})
}

/// The arguments of an `approval` request that needs `approvals` distinct approvers, none of
/// them the run's principal.
pub fn governed_args(prompt: &str, approvals: u32) -> Value {
    json!({"kind": "approval", "prompt": prompt, "approvals": approvals, "notByRequester": true})
}
