//! An MCP server over stdio for the MCP tests and benchmark:
//!
//! - `mcp_peer toolnexus`: the fixture toolkit served by `toolnexus::mcp::McpService`;
//! - `mcp_peer toolnexus-store <sqlite file>`: the same, parking suspended calls in a
//!   `SqliteStore` at that path, `requestState` sealed with `$TOOLNEXUS_MCP_KEY`;
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
        Some("toolnexus-store") => {
            let (Some(path), Ok(key)) =
                (std::env::args().nth(2), std::env::var("TOOLNEXUS_MCP_KEY"))
            else {
                eprintln!("usage: TOOLNEXUS_MCP_KEY=<key> mcp_peer toolnexus-store <sqlite file>");
                return ExitCode::from(2);
            };
            let served = async {
                let store = toolnexus::store::SqliteStore::open(&path)
                    .await
                    .map_err(|e| e.to_string())?;
                McpService::new(toolkit())
                    .with_store(std::sync::Arc::new(store))
                    .with_request_state_key(key.into_bytes())
                    .map_err(|e| e.to_string())?
                    .serve_stdio()
                    .await
                    .map_err(|e| e.to_string())
            };
            match served.await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("rmcp") => {
            let Ok(running) = RmcpPeer.serve(rmcp::transport::stdio()).await else {
                return ExitCode::FAILURE;
            };
            let _ = running.waiting().await;
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: mcp_peer toolnexus|toolnexus-store <file>|rmcp");
            ExitCode::from(2)
        }
    }
}
