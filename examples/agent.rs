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
use toolnexus_examples::terminal::{Typed, ask_line};

/// The answer used when no terminal is attached and no `--answer` is given.
const DEFAULT_CITY: &str = "Oslo";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flag = match answer_flag() {
        Ok(flag) => flag,
        Err(message) => {
            eprintln!("agent: {message}");
            std::process::exit(2);
        }
    };
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
                    println!("  ? {}", request.prompt);
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

/// Asks the human on the terminal: a blank line asks again, Ctrl-D declines (and says so).
async fn ask_on_terminal(request: Request) -> Result<toolnexus::Answer, std::io::Error> {
    let prompt = request.prompt.clone();
    let typed = tokio::task::spawn_blocking(move || {
        ask_line(
            &prompt,
            &mut std::io::stdin().lock(),
            &mut std::io::stdout(),
        )
    })
    .await
    .map_err(std::io::Error::other)??;
    Ok(match typed {
        Typed::Answer(city) => request.accept(Destination { city }),
        Typed::EndOfInput => request.decline(DeclineReason::Declined),
    })
}

fn print_event(event: &Event) {
    match event {
        Event::ToolCall { name, args, .. } => println!("model calls {name}({args})"),
        // the prompt itself is printed once, by whoever answers it
        Event::Pending { request } => println!("tool suspended [{}]", request.kind),
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

/// `--answer <city>` or `--answer=<city>`; a blank or missing city is an error.
fn answer_flag() -> Result<Option<String>, String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let city = if arg == "--answer" {
            args.next().unwrap_or_default()
        } else if let Some(city) = arg.strip_prefix("--answer=") {
            city.to_owned()
        } else {
            continue;
        };
        let city = city.trim();
        if city.is_empty() {
            return Err("--answer needs a city, e.g. --answer Oslo".to_owned());
        }
        return Ok(Some(city.to_owned()));
    }
    Ok(None)
}
