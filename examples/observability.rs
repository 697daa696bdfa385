//! A run seen through `tracing`: spans named after OpenTelemetry's GenAI conventions
//! (`invoke_agent`, `chat`, `execute_tool`) with `gen_ai.*` attributes, and a `pending` event
//! carrying the request's id and kind, printed by `tracing-subscriber`'s formatter as each
//! span closes. No key, argument, output, prompt or answer ever appears in a field.
//!
//! ```sh
//! cargo run -p toolnexus-examples --example observability
//! ```

use toolnexus::{
    Client, Reply, Request, ScriptedModel, ToolResult, Toolkit, Usage, ask, json, tool,
};
use tracing_subscriber::fmt::format::FmtSpan;

/// Delete a file, after the human approves.
#[tool]
fn delete_file(
    /// The path.
    path: &str,
    ctx: &toolnexus::Context,
) -> ToolResult {
    let () = ask!(ctx, approval format!("Delete {path}?"));
    ToolResult::success(format!("deleted {path}"))
}

#[tokio::main]
async fn main() -> Result<(), toolnexus::Error> {
    // an OpenTelemetry exporter (tracing-opentelemetry) would take these spans as they are
    tracing_subscriber::fmt()
        .with_span_events(FmtSpan::CLOSE)
        .with_target(false)
        .without_time()
        .init();

    let toolkit = Toolkit::builder().tool(DeleteFile).build()?;
    let model = ScriptedModel::new([
        Reply::tool_call("delete_file", json!({"path": "/tmp/x"})).with_usage(Usage::new(12, 4)),
        Reply::text("Deleted.").with_usage(Usage::new(20, 2)),
    ]);
    let client = Client::builder(model)
        .model_name("scripted")
        .wait_for(|request: Request| async move { request.accept(()) })
        .build()?;
    let run = client.run("Clean up /tmp/x", &toolkit).await?;
    println!("{}", run.text);
    Ok(())
}
