//! MCP `tools/call` round trips, measured in the same run:
//!
//! - serving: the fixture toolkit's `echo` served by `toolnexus::mcp::McpService` against
//!   rmcp's own `#[tool]` server serving the same function, each over stdio (a child process,
//!   `mcp_peer`) and over streamable HTTP on 127.0.0.1, driven by rmcp's client;
//! - consuming: a call through the MCP-sourced tool (`Toolkit::execute` of an `McpServer`'s
//!   `echo`) against calling the same rmcp server with rmcp's client directly.
//!
//! - with the store on: the same served over stdio and HTTP by an `McpService` given a
//!   `SqliteStore` (each call a one-call run that would park if it suspended).
//!
//! `cargo bench -p toolnexus-tests --features mcp,bench --bench mcp_roundtrip`

use divan::Bencher;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::json;
use toolnexus::mcp::{McpServer, McpService};
use toolnexus::{Context, Toolkit};
use toolnexus_tests::mcp_fixtures::{RmcpPeer, http_client, serve_rmcp_http, toolkit};

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn params() -> CallToolRequestParams {
    let serde_json::Value::Object(args) = json!({"text": "hi"}) else {
        unreachable!()
    };
    CallToolRequestParams::new("echo").with_arguments(args)
}

const KEY: &str = "the benchmark's key for sealing requestState";

/// A fresh SQLite file for one benchmark.
fn store_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolnexus-mcp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join(format!("{name}.sqlite"));
    let _ = std::fs::remove_file(&file);
    file
}

async fn stored_service(name: &str) -> McpService {
    let store = toolnexus::store::SqliteStore::open(store_file(name))
        .await
        .expect("opens");
    McpService::new(toolkit())
        .with_store(std::sync::Arc::new(store))
        .with_request_state_key(KEY.as_bytes().to_vec())
        .expect("a valid key")
}

async fn stdio_client(mode: &str) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp_peer"));
    cmd.arg(mode);
    if mode == "toolnexus-store" {
        cmd.arg(store_file("stdio")).env("TOOLNEXUS_MCP_KEY", KEY);
    }
    ().serve(TokioChildProcess::new(cmd).expect("mcp_peer starts"))
        .await
        .expect("client starts")
}

async fn http_client_for(url: String) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    ().serve(transport).await.expect("client starts")
}

fn round_trips(
    bencher: Bencher<'_, '_>,
    rt: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, ()>,
) {
    bencher.bench_local(|| {
        let r = rt
            .block_on(client.peer().call_tool(params()))
            .expect("tools/call");
        divan::black_box(r);
    });
}

/// stdio: the toolkit served by toolnexus.
#[divan::bench]
fn serve_stdio_toolnexus(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let client = rt.block_on(stdio_client("toolnexus"));
    round_trips(bencher, &rt, &client);
}

/// stdio: rmcp's own `#[tool]` server (the baseline).
#[divan::bench]
fn serve_stdio_rmcp_baseline(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let client = rt.block_on(stdio_client("rmcp"));
    round_trips(bencher, &rt, &client);
}

/// streamable HTTP: the toolkit served by toolnexus.
#[divan::bench]
fn serve_http_toolnexus(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let (server, client) = rt.block_on(async {
        let server = McpService::new(toolkit())
            .serve_http("127.0.0.1:0")
            .await
            .expect("serves");
        let client = http_client_for(server.url()).await;
        (server, client)
    });
    round_trips(bencher, &rt, &client);
    server.shutdown();
}

/// streamable HTTP: rmcp's own `#[tool]` server (the baseline).
#[divan::bench]
fn serve_http_rmcp_baseline(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let (stop, client) = rt.block_on(async {
        let (url, stop) = serve_rmcp_http(|| RmcpPeer).await;
        (stop, http_client_for(url).await)
    });
    round_trips(bencher, &rt, &client);
    stop.cancel();
}

/// Consuming: the rmcp server's `echo` through an MCP-sourced tool of a toolkit.
#[divan::bench]
fn consume_through_toolkit(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let (server, kit) = rt.block_on(async {
        let server = McpServer::stdio("peer", env!("CARGO_BIN_EXE_mcp_peer"))
            .arg("rmcp")
            .connect()
            .await
            .expect("connects");
        let kit = Toolkit::builder()
            .tools(server.tools())
            .build()
            .expect("toolkit");
        (server, kit)
    });
    let ctx = Context::new();
    bencher.bench_local(|| {
        let r = rt.block_on(kit.execute("echo", json!({"text": "hi"}), &ctx));
        assert!(!r.is_error);
        divan::black_box(r);
    });
    rt.block_on(server.close());
}

/// Consuming, baseline: the same server called with rmcp's client directly.
#[divan::bench]
fn consume_rmcp_client_directly(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let client = rt.block_on(stdio_client("rmcp"));
    round_trips(bencher, &rt, &client);
}

/// stdio: the toolkit served by toolnexus with a `SqliteStore`.
#[divan::bench]
fn serve_stdio_toolnexus_store(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let client = rt.block_on(stdio_client("toolnexus-store"));
    round_trips(bencher, &rt, &client);
}

/// streamable HTTP: the toolkit served by toolnexus with a `SqliteStore`.
#[divan::bench]
fn serve_http_toolnexus_store(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let (server, client) = rt.block_on(async {
        let server = stored_service("http")
            .await
            .serve_http("127.0.0.1:0")
            .await
            .expect("serves");
        let client = http_client_for(server.url()).await;
        (server, client)
    });
    round_trips(bencher, &rt, &client);
    server.shutdown();
}
