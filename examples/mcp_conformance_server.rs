//! The "everything" server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written the way a user of this crate writes a server:
//! `#[tool]` functions, `ask!` for elicitations, [`McpService::serve_http`], and resources,
//! prompts and completion written with rmcp next to the toolkit ([`McpService::with_handler`]). `ci/mcp-conformance.sh`
//! runs every server scenario of the pinned suite against it, with and without a run store.
//!
//! ```text
//! cargo run -p toolnexus-examples --features mcp,sqlite --example mcp_conformance_server -- \
//!     [--addr 127.0.0.1:0] [--store runs.sqlite]
//! ```
//!
//! It prints the URL it serves on as its first line of stdout, then serves until killed.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolnexus::mcp::McpService;
use toolnexus::mcp::rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use toolnexus::mcp::rmcp::service::{RequestContext, RoleServer};
use toolnexus::mcp::rmcp::{ErrorData, ServerHandler};
use toolnexus::result::ContentPart;
use toolnexus::{
    BoxFuture, Context, Form, LogLevel, Suspension, Tool, ToolResult, Toolkit, ask, tool,
};

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A WAV file of one silent sample (8 kHz, 8-bit mono).
const SILENT_WAV: &str = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA";

/// Returns a simple text.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns an image.
#[tool(read_only)]
fn test_image_content() -> ToolResult {
    ToolResult::success("a red pixel").with_part(ContentPart::image(RED_PIXEL_PNG, "image/png"))
}

/// Returns audio.
#[tool(read_only)]
fn test_audio_content() -> ToolResult {
    ToolResult::success("a silent sample").with_part(ContentPart::audio(SILENT_WAV, "audio/wav"))
}

/// Returns an embedded resource.
#[tool(read_only)]
fn test_embedded_resource() -> ToolResult {
    ToolResult::success("an embedded resource").with_part(
        ContentPart::resource_text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    )
}

/// Returns text, an image and an embedded resource.
#[tool(read_only)]
fn test_multiple_content_types() -> ToolResult {
    ToolResult::success("Multiple content types test:")
        .with_part(ContentPart::image(RED_PIXEL_PNG, "image/png"))
        .with_part(
            ContentPart::resource_text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .with_mime_type("application/json"),
        )
}

/// Logs three messages while it runs.
#[tool(read_only)]
async fn test_tool_with_logging(ctx: &toolnexus::Context) -> &'static str {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully"
}

/// Reports progress while it runs.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: &toolnexus::Context) -> &'static str {
    ctx.progress(0.0, Some(100.0), None);
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.progress(50.0, Some(100.0), None);
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.progress(100.0, Some(100.0), None);
    "Tool with progress executed successfully"
}

/// Always fails.
#[tool(read_only)]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Asks the client's model (sampling).
#[tool(read_only)]
fn test_sampling(
    /// The prompt to send to the model.
    prompt: &str,
) -> Result<String, String> {
    Err(format!(
        "cannot sample \"{prompt}\": a toolnexus tool does not ask the client's model"
    ))
}

/// What the person tells us.
#[derive(Form, Serialize, Deserialize)]
struct Contact {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the user for their name and email.
#[tool(read_only)]
fn test_elicitation(
    /// The message to show the user.
    message: &str,
    ctx: &toolnexus::Context,
) -> Result<String, Suspension> {
    let contact = ask!(ctx, input message, schema = Contact);
    Ok(format!(
        "User response: action=accept, content={}",
        json!(contact)
    ))
}

/// A status.
#[derive(Form, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Form, Serialize, Deserialize)]
struct Defaults {
    #[form(default = "John Doe")]
    name: String,
    #[form(default = 30)]
    age: i64,
    #[form(default = 95.5)]
    score: f64,
    #[form(default = "active")]
    status: Status,
    #[form(default = true)]
    verified: bool,
}

/// Asks for a form with defaults.
#[tool(read_only)]
fn test_elicitation_sep1034_defaults(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let answer = ask!(ctx, input "Please review the defaults", schema = Defaults);
    Ok(format!(
        "Elicitation completed: action=accept, content={}",
        json!(answer)
    ))
}

/// An option, untitled.
#[derive(Form, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Choice {
    Option1,
    Option2,
    Option3,
}

/// An option, titled.
#[derive(Form, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Titled {
    #[form(title = "First Option")]
    Value1,
    #[form(title = "Second Option")]
    Value2,
    #[form(title = "Third Option")]
    Value3,
}

/// A form with the enums of SEP-1330 (not the deprecated `enumNames` one).
#[derive(Form, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Enums {
    untitled_single: Choice,
    titled_single: Titled,
    untitled_multi: Vec<Choice>,
    titled_multi: Vec<Titled>,
}

/// Asks for a form with every kind of enum.
#[tool(read_only)]
fn test_elicitation_sep1330_enums(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let answer = ask!(ctx, input "Please pick", schema = Enums);
    Ok(format!(
        "Elicitation completed: action=accept, content={}",
        json!(answer)
    ))
}

/// Answers after a while (the suite closes the SSE stream meanwhile, SEP-1699).
#[tool(read_only)]
async fn test_reconnection() -> &'static str {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed"
}

/// A tool whose input schema uses JSON Schema 2020-12 (`$schema`, `$defs`, `$ref`): written
/// by hand, so implemented as a [`Tool`] rather than with `#[tool]`.
struct JsonSchema2020 {
    schema: Value,
}

impl JsonSchema2020 {
    fn new() -> Self {
        Self {
            schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                    }
                },
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"}
                },
                "additionalProperties": false
            }),
        }
    }
}

impl Tool for JsonSchema2020 {
    fn name(&self) -> &'static str {
        "json_schema_2020_12_tool"
    }
    fn description(&self) -> &'static str {
        "Tool with JSON Schema 2020-12 features"
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        _ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { ToolResult::success(Value::Object(args).to_string()) })
    }
}

/// Resources, prompts and completion, written with rmcp and served next to the toolkit
/// ([`McpService::with_handler`]).
struct Library;

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl ServerHandler for Library {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_completions()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        from_json(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        from_json(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template", "description": "Data by id", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" | "test://watched-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
            }
            "test://static-binary" => {
                json!({"uri": uri, "mimeType": "image/png", "blob": RED_PIXEL_PNG})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|r| r.strip_suffix("/data"))
            {
                Some(id) => {
                    json!({"uri": uri, "mimeType": "application/json", "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()})
                }
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource {uri}"),
                        None,
                    ));
                }
            },
        };
        from_json::<ReadResourceResult>(json!({"contents": [contents]})).map(Into::into)
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        from_json(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}
            ]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}
            ]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let arg = |name: &str| {
            args.get(name)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let text = |t: &str| json!({"role": "user", "content": {"type": "text", "text": t}});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => json!([text("This is a simple prompt for testing.")]),
            "test_prompt_with_arguments" => json!([text(&format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1"),
                arg("arg2")
            ))]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {"uri": arg("resourceUri"), "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                text("Please process the embedded resource above.")
            ]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}},
                text("Please analyze the image above.")
            ]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt {other}"),
                    None,
                ));
            }
        };
        from_json::<GetPromptResult>(json!({"messages": messages})).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let typed = request.argument.value.to_lowercase();
        let values: Vec<&str> = ["paris", "park", "party"]
            .into_iter()
            .filter(|v| v.starts_with(&typed))
            .collect();
        from_json(
            json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}),
        )
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut addr = "127.0.0.1:0".to_owned();
    let mut store = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().ok_or("--addr needs an address")?,
            "--store" => store = Some(args.next().ok_or("--store needs a file")?),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let toolkit = Toolkit::builder()
        .tool(TestSimpleText)
        .tool(TestImageContent)
        .tool(TestAudioContent)
        .tool(TestEmbeddedResource)
        .tool(TestMultipleContentTypes)
        .tool(TestToolWithLogging)
        .tool(TestToolWithProgress)
        .tool(TestErrorHandling)
        .tool(TestSampling)
        .tool(TestElicitation)
        .tool(TestElicitationSep1034Defaults)
        .tool(TestElicitationSep1330Enums)
        .tool(TestReconnection)
        .tool(JsonSchema2020::new())
        .build()?;
    let mut service = McpService::new(toolkit)
        .with_name("toolnexus-conformance", "1.0.0")
        .with_handler(Library);
    if let Some(path) = store {
        service = service.with_store(Arc::new(toolnexus::store::SqliteStore::open(path).await?));
    }
    let server = service.serve_http(addr.as_str()).await?;
    println!("{}", server.url());
    eprintln!("mcp_conformance_server: serving on {}", server.url());
    std::future::pending::<()>().await;
    Ok(())
}
