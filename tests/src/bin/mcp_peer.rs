//! An MCP server over stdio for the MCP tests and benchmark:
//!
//! - `mcp_peer toolnexus`: the fixture toolkit served by `toolnexus::mcp::McpService`;
//! - `mcp_peer rmcp`: the rmcp `#[tool]` server `RmcpPeer` (no toolnexus in it).

use std::process::ExitCode;

use rmcp::ServiceExt;
use toolnexus::mcp::McpService;
use toolnexus_tests::mcp_fixtures::{RmcpPeer, toolkit};

#[tokio::main]
async fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("toolnexus") => match McpService::new(toolkit()).serve_stdio().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Some("rmcp") => {
            let Ok(running) = RmcpPeer.serve(rmcp::transport::stdio()).await else {
                return ExitCode::FAILURE;
            };
            let _ = running.waiting().await;
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: mcp_peer toolnexus|rmcp");
            ExitCode::from(2)
        }
    }
}
