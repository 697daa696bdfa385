//! Durable halt and resume across processes, through a run store: the first invocation halts
//! on the tool's question and the run parks itself in a SQLite file; a second invocation
//! answers the pending request by its id (in a fresh process, with a fresh client): the store
//! hands the run to exactly one resumer, which finishes it.
//!
//! ```sh
//! cargo run -p toolnexus-examples --features sqlite --example durable -- --state /tmp/runs.db
//! cargo run -p toolnexus-examples --features sqlite --example durable -- --state /tmp/runs.db --answer Oslo
//! ```
//!
//! `--request <id>` answers one request; without it the oldest pending one is answered. Once
//! no run is left waiting, the second invocation deletes the state file.

use std::sync::Arc;

use serde_json::json;
use toolnexus::store::{PendingQuery, RunStore, SqliteStore};
use toolnexus::{Client, FnModel, Form, ModelRequest, Reply, Role, Suspension, Toolkit, ask, tool};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let toolkit = Toolkit::builder().tool(BookFlight).build()?;
    let store = Arc::new(SqliteStore::open(&args.state).await?);
    // no `wait_for`: a suspension halts the run, and the store keeps it
    let client = Client::builder(FnModel::new(travel_agent))
        .model_name("in-process-travel-agent")
        .system("You book flights.")
        .store(store.clone())
        .build()?;

    let Some(city) = args.answer else {
        let result = client.run("Book flight AI-503 for me.", &toolkit).await?;
        let Some(request) = &result.pending else {
            println!("finished without asking: {}", result.text);
            return Ok(());
        };
        println!("halted: {} (request {})", request.prompt, request.id);
        println!(
            "the run is parked in {}; answer with: --state {} --answer <city>",
            args.state, args.state
        );
        return Ok(());
    };

    // the request a human answers: named, or the oldest one waiting
    let request_id = match args.request {
        Some(id) => id,
        None => {
            store
                .list_pending(&PendingQuery::new().limit(1))
                .await?
                .runs
                .into_iter()
                .next()
                .ok_or_else(|| format!("no run is waiting in {}", args.state))?
                .request_id
        }
    };
    let request = store
        .request(&request_id)
        .await?
        .ok_or_else(|| format!("no run waits on request {request_id}"))?;
    println!(
        "answering request {} ({}) with {city:?}",
        request.id, request.prompt
    );
    let answer = request.accept(Destination { city });
    let result = client.answer(answer, &toolkit).await?;
    if let Some(next) = &result.pending {
        println!("halted again: {} (request {})", next.prompt, next.id);
        return Ok(());
    }
    println!("status: {}, turns: {}", result.status, result.turns);
    println!("answer: {}", result.text);

    // done: the finished run is no longer needed, and neither is an empty state file
    store.delete(&result.run_id).await?;
    let waiting = store.list_pending(&PendingQuery::new().limit(1)).await?;
    drop(client);
    if waiting.runs.is_empty() && Arc::into_inner(store).is_some() {
        for suffix in ["", "-wal", "-shm"] {
            let file = format!("{}{suffix}", args.state);
            if std::path::Path::new(&file).exists() {
                std::fs::remove_file(&file)?;
            }
        }
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

struct Args {
    state: String,
    answer: Option<String>,
    request: Option<String>,
}

const USAGE: &str = "usage: durable --state <file> [--answer <city> [--request <id>]]";

fn parse_args() -> Result<Args, String> {
    let (mut state, mut answer, mut request) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--state" => state = args.next(),
            "--answer" => answer = args.next(),
            "--request" => request = args.next(),
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        }
    }
    let state = state.ok_or(USAGE)?;
    Ok(Args {
        state,
        answer,
        request,
    })
}
