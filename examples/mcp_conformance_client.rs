//! The client side of the official MCP conformance suite (`@modelcontextprotocol/conformance`):
//! a host that connects a server with [`McpServer::http`], puts its tools in a [`Toolkit`] and
//! calls each of them, answering every elicitation by accepting the form as offered.
//! `ci/mcp-conformance.sh` runs every client scenario of the pinned suite with it.
//!
//! ```text
//! mcp_conformance_client [--mrtr] <server-url>
//! ```
//!
//! The suite appends the URL and names the scenario in `MCP_CONFORMANCE_SCENARIO`; `--mrtr`
//! connects with multi-round-trip requests on ([`McpServerBuilder::multi_round_trip`]).
//!
//! [`McpServerBuilder::multi_round_trip`]: toolnexus::mcp::McpServerBuilder::multi_round_trip

use std::time::Duration;

use serde_json::{Map, Value};
use toolnexus::mcp::McpServer;
use toolnexus::{Context, Toolkit};

/// Arguments that fit `schema`: each required property gets a plain value of its type.
fn arguments_for(schema: &Value) -> Value {
    let mut args = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number" | "integer") => Value::from(2),
            Some("boolean") => Value::Bool(true),
            Some("array") => Value::Array(Vec::new()),
            Some("object") => Value::Object(Map::new()),
            _ => Value::String("conformance".to_owned()),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut mrtr = false;
    let mut url = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--mrtr" => mrtr = true,
            other => url = Some(other.to_owned()),
        }
    }
    let url = url.ok_or("usage: mcp_conformance_client [--mrtr] <server-url>")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("mcp_conformance_client: scenario {scenario:?} at {url}");

    let server = McpServer::http("conformance", url)
        .multi_round_trip(mrtr)
        .timeout(Duration::from_secs(20))
        // the person accepts each form as it is offered
        .on_elicitation(|request| async move {
            eprintln!("elicitation: {}", request.prompt);
            request.accept(Value::Object(Map::new()))
        })
        .connect()
        .await?;
    let toolkit = Toolkit::builder().tools(server.tools()).build()?;
    for tool in toolkit.tools() {
        let args = arguments_for(tool.input_schema());
        let result = toolkit.execute(tool.name(), args, &Context::new()).await;
        eprintln!(
            "{} -> {}{}",
            tool.name(),
            if result.is_error { "error: " } else { "" },
            result.output
        );
    }
    server.close().await;
    Ok(())
}
