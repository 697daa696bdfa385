//! Consuming MCP servers through a toolkit (CONTRACT section 8), against rmcp's own `#[tool]`
//! server (no toolnexus in it): over stdio (a child process) and streamable HTTP on
//! 127.0.0.1; elicitations as Requests with exact values, answers back as results; a server
//! that dies or fails to start; `close()`; `mcp.json`.

use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::mcp::{McpConfig, McpError, McpServer, McpServerBuilder, SOURCE_MCP};
use toolnexus::request::DeclineReason;
use toolnexus::tool::ToolAnnotations;
use toolnexus::{Answer, Context, Toolkit, adapters};
use toolnexus_tests::mcp_fixtures::{Echo, RmcpPeer, scripted_answers, serve_rmcp_http};

fn peer_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp_peer")
}

fn stdio() -> McpServerBuilder {
    McpServer::stdio("peer", peer_bin()).arg("rmcp")
}

async fn run(toolkit: &Toolkit, name: &str, args: Value) -> (String, bool) {
    let r = toolkit.execute(name, args, &Context::new()).await;
    (r.output, r.is_error)
}

async fn elicitations_become_requests(builder: McpServerBuilder) {
    let (seen, handler) = scripted_answers(vec![
        |r| r.accept(json!({"city": "Oslo"})),
        |r| r.decline(DeclineReason::Declined),
        |r| r.decline(DeclineReason::Cancelled),
        |r| Answer::ok(r.id.clone()),
        |r| r.decline(DeclineReason::Declined),
        |r| r.decline(DeclineReason::Expired),
    ]);
    let server = builder
        .prefix("peer_")
        .on_elicitation(handler)
        .connect()
        .await
        .expect("connects");
    let toolkit = Toolkit::builder()
        .tools(server.tools())
        .build()
        .expect("valid toolkit");

    // names prefixed and sanitized, source mcp, schemas as the server lists them
    let names: Vec<&str> = toolkit.tools().iter().map(|t| t.name()).collect();
    // in the order the server lists them (rmcp's router lists by name)
    assert_eq!(
        names,
        [
            "peer_ask_after",
            "peer_ask_city",
            "peer_ask_password",
            "peer_die",
            "peer_echo",
            "peer_login"
        ]
    );
    assert!(toolkit.tools().iter().all(|t| t.source() == SOURCE_MCP));
    // the server's tool annotations, as listed; none stated for the others
    let hints = |name: &str| toolkit.get(name).unwrap().annotations();
    assert_eq!(
        hints("peer_echo"),
        ToolAnnotations::new().read_only(true).open_world(false)
    );
    assert_eq!(hints("peer_login"), ToolAnnotations::new());
    let spec = adapters::spec_of(&**toolkit.get("peer_echo").unwrap());
    assert_eq!(spec.description, "Echo the text back.");
    assert_eq!(spec.parameters["properties"]["text"]["type"], "string");
    assert_eq!(spec.parameters["required"], json!(["text"]));

    assert_eq!(
        run(&toolkit, "peer_echo", json!({"text": "hi"})).await,
        ("hi".into(), false)
    );

    // a form elicitation: an input Request, data.schema = requestedSchema
    let schema = json!({"type": "object", "properties": {"city": {"type": "string", "description": "The city."}}, "required": ["city"]});
    for expected in ["city: Oslo", "declined", "cancelled"] {
        assert_eq!(
            run(&toolkit, "peer_ask_city", json!({})).await,
            (expected.into(), false)
        );
    }
    // a URL elicitation: an authorization Request with the url and the MCP elicitation id
    for expected in ["logged in", "declined", "cancelled"] {
        assert_eq!(
            run(&toolkit, "peer_login", json!({})).await,
            (expected.into(), false)
        );
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 6);
    for r in &seen[..3] {
        assert_eq!(r.kind, "input");
        assert_eq!(r.prompt, "Which city?");
        assert_eq!(r.url, None);
        assert_eq!(
            serde_json::to_value(&r.data).unwrap(),
            json!({"schema": schema, "mcpServer": "peer"})
        );
        assert!(r.id.starts_with("sus-"), "{}", r.id);
    }
    for r in &seen[3..] {
        assert_eq!(r.kind, "authorization");
        assert_eq!(r.prompt, "Log in to Example");
        assert_eq!(r.url.as_deref(), Some("https://example.com/login"));
        assert_eq!(
            serde_json::to_string(&r.data).unwrap(),
            r#"{"elicitationId":"e-1","mcpServer":"peer"}"#
        );
    }
    server.close().await;
}

#[tokio::test]
async fn elicitations_become_requests_over_stdio() {
    elicitations_become_requests(stdio()).await;
}

#[tokio::test]
async fn elicitations_become_requests_over_streamable_http() {
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    elicitations_become_requests(McpServer::http("peer", url)).await;
    stop.cancel();
}

/// Issue 22: an incoming elicitation asking for a password went to `on_elicitation`
/// unchecked. It is declined to the server with the reason, the handler never sees it, and the
/// model reads why, with and without a handler.
async fn an_elicitation_asking_for_a_password_never_reaches_the_host(builder: McpServerBuilder) {
    let (seen, handler) = scripted_answers(vec![]);
    for builder in [builder.clone().on_elicitation(handler), builder] {
        let server = builder.prefix("peer_").connect().await.expect("connects");
        let toolkit = Toolkit::builder()
            .tools(server.tools())
            .build()
            .expect("valid toolkit");
        let why = "invalid suspension: `data.schema.properties.password` of the `input` request \
                   has the name `password`, which reads as the credential word `password`; secrets \
                   must never pass through answer data: use an `authorization` request with a \
                   `url` instead";
        assert_eq!(
            run(&toolkit, "peer_ask_password", json!({})).await,
            (
                format!(
                    "MCP server \"peer\" asked for a credential, which is never collected through \
                     an elicitation, so it was declined ({why}); the tool said: Decline: {why}"
                ),
                true
            )
        );
        // the session goes on
        assert_eq!(
            run(&toolkit, "peer_echo", json!({"text": "hi"})).await,
            ("hi".into(), false)
        );
        server.close().await;
    }
    assert!(seen.lock().unwrap().is_empty(), "the host saw it");
}

#[tokio::test]
async fn an_elicitation_asking_for_a_password_is_declined_over_stdio() {
    an_elicitation_asking_for_a_password_never_reaches_the_host(stdio()).await;
}

#[tokio::test]
async fn an_elicitation_asking_for_a_password_is_declined_over_streamable_http() {
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    an_elicitation_asking_for_a_password_never_reaches_the_host(McpServer::http("peer", url)).await;
    stop.cancel();
}

async fn without_a_handler(builder: McpServerBuilder) {
    let server = builder.connect().await.expect("connects");
    let toolkit = Toolkit::builder().tools(server.tools()).build().unwrap();
    assert_eq!(
        run(&toolkit, "ask_city", json!({})).await,
        (
            r#"MCP server "peer" needed a human to answer "Which city?", but no one can answer here (no elicitation handler), so it was cancelled; the tool said: cancelled"#.into(),
            true
        )
    );
    assert_eq!(
        run(&toolkit, "echo", json!({"text": "still"})).await,
        ("still".into(), false)
    );
    server.close().await;
}

#[tokio::test]
async fn without_a_handler_the_model_reads_that_a_human_was_needed() {
    without_a_handler(stdio()).await;
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    without_a_handler(McpServer::http("peer", url)).await;
    stop.cancel();
}

#[tokio::test]
async fn a_server_that_dies_fails_its_tools_and_the_rest_keeps_working() {
    let server = stdio().prefix("peer_").connect().await.expect("connects");
    let toolkit = Toolkit::builder()
        .tool(Echo)
        .tools(server.tools())
        .build()
        .unwrap();
    let (died, is_error) = run(&toolkit, "peer_die", json!({})).await;
    assert!(is_error, "{died}");
    assert!(
        died.starts_with(r#"MCP server "peer" failed to run `die`: "#),
        "{died}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        run(&toolkit, "peer_ask_city", json!({})).await,
        (
            r#"MCP server "peer" is not running (its connection closed); tool `peer_ask_city` cannot be called"#.into(),
            true
        )
    );
    assert_eq!(
        run(&toolkit, "echo", json!({"text": "native"})).await,
        ("native".into(), false)
    );
    assert!(server.is_closed());
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_an_error_naming_it() {
    let err = McpServer::stdio("ghost", "/nonexistent/mcp-server")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Connect { .. }));
    assert_eq!(
        err.to_string(),
        r#"MCP server "ghost": cannot start `/nonexistent/mcp-server`: No such file or directory (os error 2)"#
    );
    // a program that is no MCP server
    let err = McpServer::stdio("mute", "true")
        .connect()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(r#"MCP server "mute": `true` did not start an MCP session: "#),
        "{err}"
    );
    // nothing listening
    let err = McpServer::http("nobody", "http://127.0.0.1:9/mcp")
        .connect()
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            r#"MCP server "nobody": http://127.0.0.1:9/mcp did not start an MCP session: "#
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_prefix_is_sanitized_with_the_name() {
    let server = stdio()
        .prefix("my peer/")
        .connect()
        .await
        .expect("connects");
    let names: Vec<String> = server.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(
        names,
        [
            "my_peer_ask_after",
            "my_peer_ask_city",
            "my_peer_ask_password",
            "my_peer_die",
            "my_peer_echo",
            "my_peer_login"
        ]
    );
    server.close().await;
}

#[tokio::test]
async fn close_shuts_the_process_down() {
    let server = stdio().connect().await.expect("connects");
    let pid = server.pid().expect("a child process");
    let proc_dir = format!("/proc/{pid}");
    assert!(std::path::Path::new(&proc_dir).exists());
    let tools = server.tools();
    server.close().await;
    assert!(server.is_closed());
    let mut gone = false;
    for _ in 0..50 {
        if !std::path::Path::new(&proc_dir).exists() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        gone,
        "the child process {pid} is gone (no orphan, no zombie)"
    );
    let toolkit = Toolkit::builder().tools(tools).build().unwrap();
    assert_eq!(
        run(&toolkit, "echo", json!({"text": "x"})).await,
        (r#"MCP server "peer" is closed"#.into(), true)
    );
}

#[tokio::test]
async fn mcp_json_loads_several_servers() {
    let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
    // the file's own order (not alphabetical), kept whatever order serde_json's maps have
    let text = format!(
        r#"{{"mcpServers": {{
            "local": {{"command": {}, "args": ["rmcp"], "env": {{"RUST_LOG": "off"}}}},
            "remote": {{"url": {}, "headers": {{"X-Test": "1"}}}},
            "broken": {{"command": "/nonexistent/mcp-server"}},
            "off": {{"command": "/nonexistent/other", "disabled": true}}
        }}}}"#,
        json!(peer_bin()),
        json!(url)
    );
    let config = McpConfig::from_json(&text).expect("valid config");
    let names: Vec<&str> = config.servers().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["local", "remote", "broken", "off"]);
    let servers = config
        .connect(|b| {
            let prefix = format!("{}_", "x");
            b.prefix(prefix)
        })
        .await;
    let connected: Vec<&str> = servers.connected.iter().map(McpServer::name).collect();
    assert_eq!(connected, ["local", "remote"]);
    let failed: Vec<String> = servers.failed.iter().map(ToString::to_string).collect();
    assert_eq!(
        failed,
        [
            r#"MCP server "broken": cannot start `/nonexistent/mcp-server`: No such file or directory (os error 2)"#
        ]
    );
    // the two servers' tools clash by name unless prefixed differently: prefix per server
    let local = &servers.connected[0];
    let toolkit = Toolkit::builder().tools(local.tools()).build().unwrap();
    assert_eq!(
        run(&toolkit, "x_echo", json!({"text": "a"})).await,
        ("a".into(), false)
    );
    let remote = Toolkit::builder()
        .tools(servers.connected[1].tools())
        .build()
        .unwrap();
    assert_eq!(
        run(&remote, "x_echo", json!({"text": "b"})).await,
        ("b".into(), false)
    );
    servers.close().await;
    stop.cancel();

    for (bad, message) in [
        ("{}", "invalid MCP configuration: no `mcpServers` object"),
        (
            r#"{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}"#,
            r#"invalid MCP configuration: server "a" has both a `command` and a `url`; give one"#,
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": "-y"}}}"#,
            r#"invalid MCP configuration: server "a": args: invalid type: string "-y", expected a sequence"#,
        ),
    ] {
        assert_eq!(McpConfig::from_json(bad).unwrap_err().to_string(), message);
    }
}
