//! Durable halt and resume across processes: the first invocation halts on the tool's
//! question and writes the pending run to a file; a second invocation with the answer
//! resumes it (in a fresh process, with a fresh client) and finishes.
//!
//! ```sh
//! cargo run -p toolnexus-examples --example durable -- --state /tmp/run.json
//! cargo run -p toolnexus-examples --example durable -- --state /tmp/run.json --answer Oslo
//! ```

use serde_json::json;
use toolnexus::{
    Client, FnModel, Form, ModelRequest, PendingRun, Reply, Role, RunStatus, Suspension, Toolkit,
    ask, tool,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (state, answer) = parse_args()?;
    let toolkit = Toolkit::builder().tool(BookFlight).build()?;
    // no `wait_for`: a suspension halts the run instead of waiting in this process
    let client = Client::builder(FnModel::new(travel_agent))
        .model_name("in-process-travel-agent")
        .system("You book flights.")
        .build()?;

    let Some(city) = answer else {
        let result = client.run("Book flight AI-503 for me.", &toolkit).await?;
        if result.status != RunStatus::Pending {
            println!("finished without asking: {}", result.text);
            return Ok(());
        }
        let record = PendingRun::try_from(result)?;
        std::fs::write(&state, record.to_json())?;
        let request = record.pending();
        println!("halted: {} (request {})", request.prompt, request.id);
        println!("pending run written to {state}; resume with: --state {state} --answer <city>");
        return Ok(());
    };

    let json = std::fs::read_to_string(&state)
        .map_err(|e| format!("cannot read the pending run at {state}: {e}"))?;
    let record = PendingRun::from_json(&json)?;
    println!(
        "resuming request {} ({}) with {city:?}",
        record.pending().id,
        record.pending().prompt
    );
    let answer = record.pending().accept(Destination { city });
    let result = client.resume(record, answer, &toolkit).await?;
    if result.status == RunStatus::Pending {
        let record = PendingRun::try_from(result)?;
        std::fs::write(&state, record.to_json())?;
        println!("halted again: {}", record.pending().prompt);
    } else {
        std::fs::remove_file(&state)?;
        println!("status: {}, turns: {}", result.status, result.turns);
        println!("answer: {}", result.text);
    }
    Ok(())
}

/// The traveller's answer, saved with nothing else: the pending run carries the request
/// (with this form's schema) and the transcript, so a later process can resume it.
#[derive(Form, serde::Serialize, serde::Deserialize)]
struct Destination {
    /// The city to fly to.
    city: String,
}

/// Book a flight; asks the traveller for the destination city.
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

/// A stateless in-process "model": it decides from the transcript alone, so the resuming
/// process needs nothing but the record.
async fn travel_agent(request: ModelRequest) -> Reply {
    match request.messages.last() {
        Some(m) if m.role == Role::Tool => {
            Reply::text(format!("Done: {}.", m.content.clone().unwrap_or_default()))
        }
        _ => Reply::tool_call("book_flight", json!({"flight": "AI-503"})),
    }
}

fn parse_args() -> Result<(String, Option<String>), String> {
    let mut state = None;
    let mut answer = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--state" => state = args.next(),
            "--answer" => answer = args.next(),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: durable --state <file> [--answer <city>]"
                ));
            }
        }
    }
    let state = state.ok_or("usage: durable --state <file> [--answer <city>]")?;
    Ok((state, answer))
}
