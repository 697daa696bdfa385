//! Issue 35: what a tool says while it runs (`Context::log`, `Context::progress`): served over
//! MCP as `notifications/message` (honouring `logging/setLevel`) and `notifications/progress`
//! (only on the caller's progress token), all before the call's result; in the agent loop as
//! `Event::ToolLog` and `Event::ToolProgress`.

#![allow(deprecated)] // MCP logging: deprecated by SEP-2577 in rmcp, still in 2025-11-25

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientConfig, LoggingLevel, LoggingMessageNotificationParam,
    NumberOrString, ProgressNotificationParam, ProgressToken, RequestMetaObject,
    SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use toolnexus::mcp::{HttpServer, McpService};
use toolnexus::{Client, Event, LogLevel, Reply, ScriptedModel, Toolkit, tool};
use toolnexus_tests::mcp_fixtures::http_client;

/// Says three things while it works, then answers.
#[tool]
fn chatty(ctx: &toolnexus::Context) -> &'static str {
    ctx.log(LogLevel::Debug, "looking");
    ctx.progress(1.0, Some(2.0), Some("half way"));
    ctx.log(LogLevel::Warning, "it is late");
    ctx.progress(2.0, Some(2.0), None);
    "done"
}

/// What the client heard, in order: `log <level> <message>` and `progress <p>/<t>`.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Heard {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        self.0.lock().unwrap().push(format!(
            "log {} {} {}",
            level.as_str().unwrap(),
            params.logger.unwrap_or_default(),
            params.data.as_str().unwrap()
        ));
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(format!(
            "progress {}/{} {}",
            params.progress,
            params.total.unwrap_or(-1.0),
            params.message.unwrap_or_default()
        ));
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

async fn served(store: bool) -> HttpServer {
    let kit = Toolkit::builder().tool(Chatty).build().unwrap();
    let mut service = McpService::new(kit);
    if store {
        service = service.with_store(Arc::new(toolnexus::store::MemoryStore::new()));
    }
    service.serve_http("127.0.0.1:0").await.unwrap()
}

/// Calls `chatty` (with a progress token when `token`), after `logging/setLevel` to `level`
/// when given: what the client heard (waiting until `expect` notifications arrived, rmcp's
/// client handing them to its handler in tasks of their own), and the result's text.
async fn call(
    http: &HttpServer,
    token: bool,
    level: Option<LoggingLevel>,
    expect: usize,
) -> (Vec<String>, String) {
    let heard = Heard::default();
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(http.url()),
    );
    let client = heard.clone().serve(transport).await.unwrap();
    if let Some(level) = level {
        client
            .set_level(SetLevelRequestParams::new(level))
            .await
            .unwrap();
    }
    let mut params = CallToolRequestParams::new("chatty");
    if token {
        params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
            NumberOrString::String("p1".into()),
        )));
    }
    let result = client.call_tool(params).await.unwrap();
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    for _ in 0..200 {
        if heard.0.lock().unwrap().len() >= expect {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // a moment more: nothing beyond what was expected may arrive
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let seen = heard.0.lock().unwrap().clone();
    client.cancel().await.unwrap();
    (seen, text.as_str().unwrap().to_owned())
}

fn of_kind<'a>(heard: &'a [String], kind: &str) -> Vec<&'a str> {
    heard
        .iter()
        .filter(|h| h.starts_with(kind))
        .map(String::as_str)
        .collect()
}

#[tokio::test]
async fn a_tools_logs_and_progress_reach_the_client_in_order() {
    for store in [false, true] {
        let http = served(store).await;
        let (heard, text) = call(&http, true, None, 4).await;
        assert_eq!(text, "done");
        assert_eq!(
            of_kind(&heard, "log"),
            ["log debug chatty looking", "log warning chatty it is late"],
            "with a store: {store}"
        );
        assert_eq!(
            of_kind(&heard, "progress"),
            ["progress 1/2 half way", "progress 2/2 "],
            "with a store: {store}"
        );
        assert_eq!(heard.len(), 4);
        http.shutdown();
    }
}

#[tokio::test]
async fn set_level_filters_the_messages_below_it_for_its_session_only() {
    let http = served(false).await;
    let (heard, text) = call(&http, true, Some(LoggingLevel::Info), 3).await;
    assert_eq!(text, "done");
    assert_eq!(of_kind(&heard, "log"), ["log warning chatty it is late"]);
    let (heard, _) = call(&http, true, Some(LoggingLevel::Error), 2).await;
    assert!(of_kind(&heard, "log").is_empty(), "{heard:?}");
    // another session starts again from every level
    let (heard, _) = call(&http, true, None, 4).await;
    assert_eq!(
        of_kind(&heard, "log"),
        ["log debug chatty looking", "log warning chatty it is late"]
    );
    http.shutdown();
}

#[tokio::test]
async fn in_the_agent_loop_they_are_events_of_the_run() {
    let kit = Toolkit::builder().tool(Chatty).build().unwrap();
    let events: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&events);
    let client = Client::builder(ScriptedModel::new([
        Reply::default().with_call_id("c1", "chatty", json!({})),
        Reply::text("ok"),
    ]))
    .model_name("scripted")
    .on_event(move |e| {
        if matches!(e, Event::ToolLog { .. } | Event::ToolProgress { .. }) {
            seen.lock().unwrap().push(serde_json::to_value(e).unwrap());
        }
    })
    .build()
    .unwrap();
    client.run("go", &kit).await.unwrap();
    assert_eq!(
        *events.lock().unwrap(),
        [
            json!({"type": "tool_log", "id": "c1", "name": "chatty", "level": "debug", "message": "looking"}),
            json!({"type": "tool_progress", "id": "c1", "name": "chatty", "progress": 1.0, "total": 2.0, "message": "half way"}),
            json!({"type": "tool_log", "id": "c1", "name": "chatty", "level": "warning", "message": "it is late"}),
            json!({"type": "tool_progress", "id": "c1", "name": "chatty", "progress": 2.0, "total": 2.0}),
        ]
    );
}
