//! Issue 35: a toolkit and the rest of a server: a host's rmcp handler serves resources,
//! prompts and completion next to the toolkit (`McpService::with_handler`), and the toolkit
//! keeps the tools, whatever the handler says about them.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientConfig, ErrorCode, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::json;
use toolnexus::mcp::{HttpServer, McpService};
use toolnexus::{Toolkit, tool};
use toolnexus_tests::mcp_fixtures::http_client;

/// Says hello.
#[tool]
fn hello() -> &'static str {
    "hello from the toolkit"
}

/// Resources (and, to be ignored, tools of its own).
struct Docs;

impl ServerHandler for Docs {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_tools()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(
            serde_json::from_value(json!({"resources": [{"uri": "doc://a", "name": "a"}]}))
                .unwrap(),
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let result: rmcp::model::ReadResourceResult = serde_json::from_value(
            json!({"contents": [{"uri": request.uri, "text": "the text of a"}]}),
        )
        .unwrap();
        Ok(result.into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        panic!("the toolkit lists the tools")
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        panic!("the toolkit runs the tools")
    }
}

async fn serve(handler: bool) -> HttpServer {
    let kit = Toolkit::builder().tool(Hello).build().unwrap();
    let service = McpService::new(kit);
    let service = if handler {
        service.with_handler(Docs)
    } else {
        service
    };
    service.serve_http("127.0.0.1:0").await.unwrap()
}

async fn client(
    http: &HttpServer,
) -> rmcp::service::RunningService<rmcp::RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(http.url()),
    );
    ClientConfig::default().serve(transport).await.unwrap()
}

#[tokio::test]
async fn a_handler_serves_resources_next_to_the_toolkit_which_keeps_the_tools() {
    let http = serve(true).await;
    let c = client(&http).await;
    let caps = c.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_some() && caps.tools.is_some() && caps.logging.is_some());
    assert!(caps.prompts.is_none(), "the handler states no prompts");
    let resources = c.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0].uri, "doc://a");
    let read = c
        .read_resource(ReadResourceRequestParams::new("doc://a"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&read).unwrap()["contents"][0]["text"],
        "the text of a"
    );
    let tools = c.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "hello");
    let called = c
        .call_tool(CallToolRequestParams::new("hello"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&called.content).unwrap()[0]["text"],
        "hello from the toolkit"
    );
    c.cancel().await.unwrap();
    http.shutdown();
}

#[tokio::test]
async fn without_a_handler_the_server_serves_tools_only() {
    let http = serve(false).await;
    let c = client(&http).await;
    let caps = c.peer_info().unwrap().capabilities.clone();
    assert!(caps.resources.is_none() && caps.prompts.is_none() && caps.completions.is_none());
    let err = c
        .read_resource(ReadResourceRequestParams::new("doc://a"))
        .await
        .unwrap_err();
    match err {
        rmcp::ServiceError::McpError(e) => {
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(e.message, "resources/read: this server serves tools only");
        }
        other => panic!("{other:?}"),
    }
    c.cancel().await.unwrap();
    http.shutdown();
}
