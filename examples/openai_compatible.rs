//! The agent loop against any OpenAI-compatible endpoint: OpenAI, OpenRouter, a local Ollama
//! or vLLM server. Streams the answer and asks you on the terminal before booking.
//!
//! ```text
//! TOOLNEXUS_BASE_URL   the endpoint's base URL (default https://api.openai.com/v1)
//! TOOLNEXUS_MODEL      the model id, sent verbatim (default gpt-4o-mini)
//! TOOLNEXUS_API_KEY    the key (else OPENAI_API_KEY, or OPENROUTER_API_KEY for openrouter.ai;
//!                      a localhost URL needs none and is never sent the environment's keys)
//! ```
//!
//! Run with `cargo run -p toolnexus-examples --features http --example openai_compatible -- [--yes] [prompt]`;
//! `--yes` approves the booking without asking.

use std::io::Write;

use serde_json::json;
use toolnexus::{
    Client, Event, FnTool, HttpProvider, Request, ToolResult, Toolkit, request::DeclineReason,
};
use toolnexus_examples::terminal::{Typed, confirm};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let auto_approve = args.first().is_some_and(|a| a == "--yes");
    if auto_approve {
        args.remove(0);
    }
    let prompt = if args.is_empty() {
        "What is the weather in Oslo? If it is dry, book me a flight there.".to_owned()
    } else {
        args.join(" ")
    };

    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let base_url = env("TOOLNEXUS_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into());
    let model = env("TOOLNEXUS_MODEL").unwrap_or_else(|| "gpt-4o-mini".into());
    let mut provider = HttpProvider::openai(&base_url);
    if let Some(key) = env("TOOLNEXUS_API_KEY") {
        provider = provider.api_key(key);
    } else if ["://localhost", "://127.0.0.1", "://[::1]"]
        .iter()
        .any(|local| base_url.contains(local))
    {
        // a local server (Ollama, vLLM) needs no key: do not hand it your cloud key
        provider = provider.key_from_env(false);
    }
    let provider = provider.build()?;

    let toolkit = toolkit()?;

    let client = Client::builder(provider)
        .model_name(&model)
        .system("You are a travel assistant. Use the tools; keep answers short.")
        .wait_for(move |request: Request| async move {
            if auto_approve {
                println!("\n[approval] {} -> yes (--yes)", request.prompt);
                return request.accept(true);
            }
            println!("\n[approval]");
            let prompt = request.prompt.clone();
            let typed = tokio::task::spawn_blocking(move || {
                confirm(
                    &prompt,
                    &mut std::io::stdin().lock(),
                    &mut std::io::stdout(),
                )
            })
            .await;
            match typed {
                Ok(Ok(Typed::Answer(true))) => request.accept(true),
                _ => request.decline(DeclineReason::Declined),
            }
        })
        .build()?;

    println!("model {model} at {base_url}\n> {prompt}");
    let result = client.stream(prompt, &toolkit, print_event).await?;
    println!(
        "\n\nstatus {}, {} turns, {} tool calls, {} tokens",
        result.status.as_str(),
        result.turns,
        result.tool_call_count,
        result.usage.total_tokens
    );
    Ok(())
}

/// Two tools: `get_weather` answers at once; `book_flight` asks the traveller to approve.
fn toolkit() -> Result<Toolkit, toolnexus::Error> {
    Toolkit::builder()
        .tool(
            FnTool::builder("get_weather")
                .description("The current weather in a city.")
                .schema(json!({
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "The city."}},
                    "required": ["city"],
                }))
                .handler(|args, _ctx| async move {
                    let city = args["city"].as_str().unwrap_or("?").to_owned();
                    ToolResult::success(format!("12°C, cloudy and dry in {city}"))
                })
                .build()?,
        )
        .tool(
            FnTool::builder("book_flight")
                .description("Books a flight to a city; the traveller must approve it first.")
                .schema(json!({
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "The destination."}},
                    "required": ["city"],
                }))
                .handler(|args, ctx| async move {
                    let city = args["city"].as_str().unwrap_or("?").to_owned();
                    if ctx.accepted().is_some() {
                        ToolResult::success(format!("booked flight AI-503 to {city}"))
                    } else {
                        ToolResult::suspended(Request::approval(format!(
                            "Book a flight to {city}?"
                        )))
                    }
                })
                .build()?,
        )
        .build()
}

/// Prints the run as it happens: text deltas inline, tool calls and results on their lines.
fn print_event(event: &Event) {
    match event {
        Event::Text { delta } => {
            print!("{delta}");
            let _ = std::io::stdout().flush();
        }
        Event::ToolCall { name, args, .. } => println!("\n[tool call] {name} {args}"),
        Event::ToolResult {
            name,
            output,
            is_error,
            ..
        } => {
            let marker = if *is_error { " (error)" } else { "" };
            println!("[tool result] {name}: {output}{marker}");
        }
        _ => {}
    }
}
