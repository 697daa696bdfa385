//! The main example: an agent whose tool suspends to ask a human, run end to end on an
//! in-process model (no key, no network).
//!
//! Run with `cargo run -p toolnexus-examples --example agent`. With a terminal attached, it
//! asks you the tool's question; without one (CI), it answers from `--answer <city>`, or
//! `Oslo` by default, and says so.

use std::io::IsTerminal;

use serde_json::json;
use toolnexus::{
    Client, Event, FnModel, Form, ModelRequest, Reply, Request, Role, Suspension, Toolkit, Usage,
    ask, request::DeclineReason, tool,
};

/// The answer used when no terminal is attached and no `--answer` is given.
const DEFAULT_CITY: &str = "Oslo";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flag = answer_flag();
    let toolkit = Toolkit::builder().tool(BookFlight).build()?;

    let interactive = std::io::stdin().is_terminal();
    let client = Client::builder(FnModel::new(travel_agent))
        .model_name("in-process-travel-agent")
        .system("You book flights. Ask the traveller when something is missing.")
        .on_event(print_event)
        .wait_for(move |request: Request| {
            let flag = flag.clone();
            async move {
                if interactive {
                    ask_on_terminal(request).await
                } else {
                    let (city, source) = match flag {
                        Some(city) => (city, "the --answer flag"),
                        None => (DEFAULT_CITY.to_owned(), "the default"),
                    };
                    println!("  (no terminal attached: answering {city:?} from {source})");
                    Ok(request.accept(Destination { city }))
                }
            }
        })
        .build()?;

    let result = client.run("Book flight AI-503 for me.", &toolkit).await?;
    println!(
        "status: {}, turns: {}, tool calls: {}, tokens: {}",
        result.status, result.turns, result.tool_call_count, result.usage.total_tokens
    );
    println!("answer: {}", result.text);
    Ok(())
}

/// The traveller's answer: `ask!` puts its schema on the request (`data.schema`) and reads
/// the accepted answer back as this type.
#[derive(Form, serde::Serialize, serde::Deserialize)]
struct Destination {
    /// The city to fly to.
    city: String,
}

/// Book a flight; asks the traveller for the destination city.
///
/// A tool that cannot finish without a human: the first call suspends with an `input`
/// request; the loop retries it with the answer in `ctx`, and `ask!` then yields it.
#[tool]
fn book_flight(
    /// The flight number.
    flight: &str,
    ctx: &toolnexus::Context,
) -> Result<String, Suspension> {
    let dest = ask!(
        ctx,
        input format!("Which city should {flight} take you to?"),
        schema = Destination,
    );
    Ok(format!("booked {flight} to {}", dest.city))
}

/// The in-process "model": calls `book_flight`, then reports what the tool said.
async fn travel_agent(request: ModelRequest) -> Reply {
    match request.messages.last() {
        Some(m) if m.role == Role::Tool => {
            let said = m.content.clone().unwrap_or_default();
            if m.is_error {
                Reply::text(format!("I could not book it: {said}.")).with_usage(Usage::new(42, 9))
            } else {
                Reply::text(format!("Done: {said}. Have a good trip!"))
                    .with_usage(Usage::new(42, 9))
            }
        }
        _ => Reply::tool_call("book_flight", json!({"flight": "AI-503"}))
            .with_usage(Usage::new(30, 12)),
    }
}

/// Asks the human on the terminal; an empty line declines.
async fn ask_on_terminal(request: Request) -> Result<toolnexus::Answer, std::io::Error> {
    println!("  ? {} (empty line to decline)", request.prompt);
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(std::io::Error::other)??;
    let city = line.trim();
    Ok(if city.is_empty() {
        request.decline(DeclineReason::Declined)
    } else {
        request.accept(Destination {
            city: city.to_owned(),
        })
    })
}

fn print_event(event: &Event) {
    match event {
        Event::ToolCall { name, args, .. } => println!("model calls {name}({args})"),
        Event::Pending { request } => {
            println!("tool suspended [{}]: {}", request.kind, request.prompt);
        }
        Event::ToolResult {
            name,
            output,
            is_error,
            ..
        } => println!(
            "{name} -> {output}{}",
            if *is_error { " (error)" } else { "" }
        ),
        Event::Text { delta } => println!("model says: {delta}"),
        _ => {}
    }
}

/// `--answer <city>` or `--answer=<city>`.
fn answer_flag() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--answer" {
            return args.next();
        }
        if let Some(city) = arg.strip_prefix("--answer=") {
            return Some(city.to_owned());
        }
    }
    None
}
