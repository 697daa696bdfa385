//! Runs a command against the fake provider, scripted for the `openai_compatible` example, and
//! checks what the command sent and printed. CI uses it to run the example with no network:
//!
//! ```text
//! cargo run -p toolnexus-tests --bin helpers -- with_fake_provider \
//!     cargo run -p toolnexus-examples --features http --example openai_compatible -- --yes
//! ```
//!
//! The command gets `TOOLNEXUS_BASE_URL`, `TOOLNEXUS_MODEL` and `TOOLNEXUS_API_KEY` pointing
//! at the fake; its output is passed through. Exits non-zero when the command fails or the
//! conversation is not the expected one.

use std::process::{Command, ExitCode};

use serde_json::{Value, json};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, openai};

const MODEL: &str = "fake/model-1";
const KEY: &str = "sk-fake-ci-key";

#[tokio::main]
pub(crate) async fn main() -> ExitCode {
    let command: Vec<String> = std::env::args().skip(2).collect();
    let Some((program, args)) = command.split_first() else {
        eprintln!("usage: with_fake_provider <command> [args...]");
        return ExitCode::from(2);
    };

    let fake = FakeProvider::start().await;
    fake.script([
        FakeReply::sse(openai::stream_tool_calls(
            &[
                ("call_w", "get_weather", &["{\"city\":", "\"Oslo\"}"]),
                ("call_b", "book_flight", &["{\"city\":\"Oslo\"}"]),
            ],
            120,
            30,
        )),
        FakeReply::sse(openai::stream_text(
            &[
                "It is 12°C and dry in Oslo; ",
                "your flight AI-503 is booked.",
            ],
            210,
            18,
        )),
    ]);

    let mut child = Command::new(program);
    child
        .args(args)
        .env("TOOLNEXUS_BASE_URL", format!("{}/v1", fake.url()))
        .env("TOOLNEXUS_MODEL", MODEL)
        .env("TOOLNEXUS_API_KEY", KEY);
    let output = match tokio::task::spawn_blocking(move || child.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => {
            eprintln!("with_fake_provider: cannot run `{program}`: {e}");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("with_fake_provider: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        eprintln!("with_fake_provider: the command failed: {}", output.status);
        return ExitCode::FAILURE;
    }

    match check(&fake, &stdout) {
        Ok(()) => {
            println!("with_fake_provider: the conversation matched");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("with_fake_provider: {problem}");
            ExitCode::FAILURE
        }
    }
}

fn check(fake: &FakeProvider, stdout: &str) -> Result<(), String> {
    let requests = fake.requests();
    if requests.len() != 2 {
        return Err(format!("expected 2 model requests, got {}", requests.len()));
    }
    for (i, r) in requests.iter().enumerate() {
        let expect = |what: &str, got: Option<&Value>, want: &Value| {
            if got == Some(want) {
                Ok(())
            } else {
                Err(format!("request {i}: {what} is {got:?}, expected {want}"))
            }
        };
        if r.path != "/v1/chat/completions" {
            return Err(format!("request {i}: path {}", r.path));
        }
        if r.header("authorization") != Some(&format!("Bearer {KEY}")) {
            return Err(format!("request {i}: no bearer key"));
        }
        expect("model", r.body.get("model"), &json!(MODEL))?;
        expect("stream", r.body.get("stream"), &json!(true))?;
    }
    let tool_messages: Vec<&Value> = requests[1].body["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "tool").collect())
        .unwrap_or_default();
    let want = [
        json!({"role": "tool", "tool_call_id": "call_w", "content": "12°C, cloudy and dry in Oslo"}),
        json!({"role": "tool", "tool_call_id": "call_b", "content": "booked flight AI-503 to Oslo"}),
    ];
    if tool_messages != want.iter().collect::<Vec<_>>() {
        return Err(format!("the tool results sent back were {tool_messages:?}"));
    }
    let answer = "It is 12°C and dry in Oslo; your flight AI-503 is booked.";
    if !stdout.contains(answer) {
        return Err(format!("the streamed answer `{answer}` was not printed"));
    }
    Ok(())
}
