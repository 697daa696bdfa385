//! Issue 35: a tool result's content parts both ways (CONTRACT section 8): image, audio,
//! embedded resources and resource links served as MCP content items, bytes intact, and a
//! consumed server's items back into the same parts; the `output` is one text item among them.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use toolnexus::mcp::{McpServer, McpService};
use toolnexus::result::ContentPart;
use toolnexus::{Context, ToolResult, Toolkit, tool};
use toolnexus_tests::mcp_fixtures::http_client;

/// A 1x1 PNG and a tiny WAV, base64.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const WAV: &str = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA";

fn parts() -> Vec<ContentPart> {
    vec![
        ContentPart::image(PNG, "image/png"),
        ContentPart::audio(WAV, "audio/wav"),
        ContentPart::resource_text("test://notes/1", r#"{"test":"data"}"#)
            .with_mime_type("application/json"),
        ContentPart::resource_blob("test://blob", "AAECAw==", "application/octet-stream"),
        ContentPart::resource_link("test://big", "big.csv").with_mime_type("text/csv"),
    ]
}

/// Returns every kind of part.
#[tool]
fn every_part() -> ToolResult {
    let mut r = ToolResult::success("here is everything");
    r.parts = parts();
    r
}

/// Fails, with a picture of why.
#[tool]
fn failing_with_a_picture() -> ToolResult {
    ToolResult::error("it broke").with_part(ContentPart::image(PNG, "image/png"))
}

async fn served() -> toolnexus::mcp::HttpServer {
    let kit = Toolkit::builder()
        .tool(EveryPart)
        .tool(FailingWithAPicture)
        .build()
        .unwrap();
    McpService::new(kit)
        .serve_http("127.0.0.1:0")
        .await
        .unwrap()
}

#[tokio::test]
async fn parts_are_served_as_mcp_content_items_with_their_bytes() {
    let http = served().await;
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(http.url()),
    );
    let client = ClientConfig::default().serve(transport).await.unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("every_part"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([
            {"type": "text", "text": "here is everything"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "test://notes/1", "mimeType": "application/json", "text": "{\"test\":\"data\"}"}},
            {"type": "resource", "resource": {"uri": "test://blob", "mimeType": "application/octet-stream", "blob": "AAECAw=="}},
            {"type": "resource_link", "uri": "test://big", "name": "big.csv", "mimeType": "text/csv"}
        ])
    );
    assert_eq!(result.is_error, Some(false));
    client.cancel().await.unwrap();
    http.shutdown();
}

#[tokio::test]
async fn a_consumed_result_keeps_every_part_and_its_bytes() {
    let http = served().await;
    let server = McpServer::http("peer", http.url()).connect().await.unwrap();
    let kit = Toolkit::builder().tools(server.tools()).build().unwrap();
    let r = kit.execute("every_part", json!({}), &Context::new()).await;
    assert_eq!(r.output, "here is everything");
    assert!(!r.is_error);
    assert_eq!(r.parts, parts());

    let failed = kit
        .execute("failing_with_a_picture", json!({}), &Context::new())
        .await;
    assert!(failed.is_error);
    assert_eq!(failed.output, "it broke");
    assert_eq!(failed.parts, vec![ContentPart::image(PNG, "image/png")]);
    server.close().await;
    http.shutdown();
}
