//! Against servers no one here wrote (issue 15): the third-party OpenAI-compatible mocks
//! `llmock` (offered tools called with arguments generated from their schema, injected faults,
//! a verdict on the client's resilience) and `fakellm` (replies driven by YAML rules), from
//! PyPI. `scripts/python-mocks.sh` installs them into `target/python-mocks/venv`; each test
//! starts its own server on 127.0.0.1 on a free port. Without the venv the tests print a
//! notice and pass, except under `CI=true`, where they fail.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolnexus::{
    Client, Event, FnTool, HttpProvider, Request, RunResult, RunStatus, ToolResult, Toolkit,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv's `bin` directory, or `None` (after a notice) when it is missing outside CI.
fn mocks_bin(test: &str) -> Option<PathBuf> {
    let bin = std::env::var_os("TOOLNEXUS_PYTHON_MOCKS").map_or_else(
        || repo().join("target/python-mocks/venv/bin"),
        PathBuf::from,
    );
    if bin.join("llmock").is_file() && bin.join("fakellm").is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: the third-party mock servers are missing at {}: run scripts/python-mocks.sh",
        bin.display()
    );
    toolnexus_tests::skip::skipped(
        test,
        "llmock and fakellm",
        &format!(
            "none at {}; scripts/python-mocks.sh installs them",
            bin.display()
        ),
    );
    None
}

/// A mock server process this test started; killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(program: &Path, args: &[&str], ready_path: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let port_text = port.to_string();
        let child = Command::new(program)
            .args(args)
            .args(["--host", "127.0.0.1", "--port", &port_text])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(reply) = http_blocking(port, "GET", ready_path, "")
                && reply.0 == 200
            {
                return server;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{} did not come up on port {port}", program.display());
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    async fn admin(&self, method: &str, path: &str, body: &Value) -> Value {
        let (status, text) = http(self.port, method, path, &body.to_string()).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {text}"
        );
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_blocking(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", port))?;
    socket.set_read_timeout(Some(Duration::from_secs(5)))?;
    socket.write_all(request_text(method, path, body).as_bytes())?;
    let mut reply = Vec::new();
    socket.read_to_end(&mut reply)?;
    Ok(parse_reply(&reply))
}

async fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect to the mock");
    socket
        .write_all(request_text(method, path, body).as_bytes())
        .await
        .unwrap();
    let mut reply = Vec::new();
    socket.read_to_end(&mut reply).await.unwrap();
    parse_reply(&reply)
}

fn request_text(method: &str, path: &str, body: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn parse_reply(reply: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(reply);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_owned())
}

/// The example's two tools: `get_weather` answers at once, `book_flight` asks for approval;
/// the counter counts the approvals asked.
fn toolkit() -> Toolkit {
    let city = |args: &serde_json::Map<String, Value>| {
        args.get("city")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    Toolkit::builder()
        .tool(
            FnTool::builder("get_weather")
                .description("The current weather in a city.")
                .schema(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}))
                .handler(move |args, _ctx| {
                    let city = city(&args);
                    async move { ToolResult::success(format!("12°C, cloudy and dry in {city}")) }
                })
                .build()
                .unwrap(),
        )
        .tool(
            FnTool::builder("book_flight")
                .description("Books a flight to a city; the traveller must approve it first.")
                .schema(json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}))
                .handler(move |args, ctx| {
                    let city = city(&args);
                    async move {
                        if ctx.accepted().is_some() {
                            ToolResult::success(format!("booked flight AI-503 to {city}"))
                        } else {
                            ToolResult::suspended(Request::approval(format!("Book a flight to {city}?")))
                        }
                    }
                })
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// A client approving every request, counting them.
fn approving_client(provider: HttpProvider, approvals: &Arc<AtomicUsize>) -> Client {
    let approvals = approvals.clone();
    Client::builder(provider)
        .model_name("gpt-4o-mini")
        .wait_for(move |request: Request| {
            approvals.fetch_add(1, Ordering::SeqCst);
            async move { request.accept(true) }
        })
        .build()
        .unwrap()
}

async fn run(client: &Client, prompt: &str, streamed: bool) -> toolnexus::Result<RunResult> {
    let toolkit = toolkit();
    if streamed {
        client.stream(prompt, &toolkit, |_: &Event| {}).await
    } else {
        client.run(prompt, &toolkit).await
    }
}

fn booking(result: &RunResult) -> Option<&str> {
    result
        .tool_calls
        .iter()
        .find(|c| c.name == "book_flight")
        .map(|c| c.output.as_str())
}

#[tokio::test]
async fn llmock_runs_the_approval_flow_streamed_and_not() {
    let Some(bin) = mocks_bin("llmock approval flow") else {
        return;
    };
    let server = Server::start(&bin.join("llmock"), &["serve"], "/health");
    for streamed in [false, true] {
        let approvals = Arc::new(AtomicUsize::new(0));
        let provider = HttpProvider::openai(format!("{}/v1", server.url()))
            .api_key("llmock-key-anything")
            .build()
            .unwrap();
        let client = approving_client(provider, &approvals);
        // the only tool that matches the prompt: llmock calls it with generated arguments
        let result = run(&client, "Book a flight to Oslo.", streamed)
            .await
            .unwrap();
        assert_eq!(result.status, RunStatus::Done, "streamed: {streamed}");
        assert_eq!(booking(&result), Some("booked flight AI-503 to mock-city"));
        assert_eq!(approvals.load(Ordering::SeqCst), 1);
        assert!(!result.text.is_empty());
        assert!(result.usage.total_tokens > 0);
    }
    let verdict = server.admin("GET", "/_llmock/verdict", &Value::Null).await;
    assert_eq!(verdict["passed"], true, "{verdict}");
}

#[tokio::test]
async fn llmock_faults_are_survived_and_judged() {
    let Some(bin) = mocks_bin("llmock faults") else {
        return;
    };
    let server = Server::start(&bin.join("llmock"), &["serve"], "/health");
    let provider = HttpProvider::openai(format!("{}/v1", server.url()))
        .api_key("llmock-key-anything")
        .backoff_base(Duration::from_millis(50))
        .max_retries(4)
        .idle_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let approvals = Arc::new(AtomicUsize::new(0));
    let client = approving_client(provider, &approvals);

    // retryable failures before any output: a 429 with Retry-After, an overloaded 529, a
    // stream dropped after its first chunk
    let scenario = json!({"behaviors": [
        {"type": "fail", "status": 429, "retry_after": 1, "times": 1},
        {"type": "fail", "status": 529, "times": 1},
        {"type": "stream_fault", "kind": "disconnect", "after_chunks": 1, "times": 1},
    ]});
    server.admin("POST", "/_llmock/scenario", &scenario).await;
    let result = run(&client, "Book a flight to Oslo.", true).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(booking(&result), Some("booked flight AI-503 to mock-city"));
    let verdict = server.admin("GET", "/_llmock/verdict", &Value::Null).await;
    eprintln!("llmock verdict on retries: {verdict}");
    assert_eq!(verdict["passed"], true, "{verdict}");
    assert_eq!(verdict["faults_injected"], 3, "{verdict}");
    assert_eq!(verdict["findings"], json!([]), "{verdict}");

    // a stream that ends early without a finish reason, or with a corrupted chunk, in the
    // middle of a tool call (nothing shown yet): retried, then the run goes on
    for kind in ["truncate", "malformed"] {
        let scenario = json!({"behaviors": [
            {"type": "stream_fault", "kind": kind, "after_chunks": 2, "times": 1},
        ]});
        server.admin("POST", "/_llmock/reset", &json!({})).await;
        server.admin("POST", "/_llmock/scenario", &scenario).await;
        let result = run(&client, "Book a flight to Oslo.", true).await;
        let journal = server.admin("GET", "/_llmock/requests", &Value::Null).await;
        let result = result.unwrap_or_else(|e| panic!("{kind} once: {e:?}\n{journal}"));
        assert_eq!(booking(&result), Some("booked flight AI-503 to mock-city"));
        let verdict = server.admin("GET", "/_llmock/verdict", &Value::Null).await;
        eprintln!("llmock verdict on {kind} once: {verdict}");
        // the faulted attempt and its retry: the same body again, and no fault on it
        let requests = journal["requests"]
            .as_array()
            .expect("the journal's requests");
        assert_eq!(
            requests[0]["fault"]
                .as_str()
                .map(|f| f.starts_with(&format!("stream:{kind}@"))),
            Some(true),
            "{journal}"
        );
        assert_eq!(
            requests[1]["fingerprint"], requests[0]["fingerprint"],
            "{journal}"
        );
        assert_eq!(requests[1]["fault"], Value::Null, "{journal}");
        // llmock groups a retry with the attempt before it only when that attempt failed in
        // its eyes; an attempt it finished sending (`completed`) counts as a success, so
        // when the whole corrupted stream was out before the client hung up (a race on a
        // fast loopback) it judges the retry a new call and the chunk ignored. The journal
        // above shows the retry; any other finding fails.
        let expected = if kind == "malformed" && requests[0]["completed"] == true {
            json!([{"code": "malformed_chunk_ignored", "requests": [1]}])
        } else {
            json!([])
        };
        let findings: Vec<Value> = verdict["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| json!({"code": f["code"], "requests": f["requests"]}))
            .collect();
        assert_eq!(Value::Array(findings), expected, "{verdict}\n{journal}");
    }

    // the same faults on every attempt: never taken as a reply
    for kind in ["truncate", "malformed"] {
        let scenario = json!({"behaviors": [
            {"type": "stream_fault", "kind": kind, "after_chunks": 2, "times": null},
        ]});
        server.admin("POST", "/_llmock/reset", &json!({})).await;
        server.admin("POST", "/_llmock/scenario", &scenario).await;
        let err = run(&client, "Book a flight to Oslo.", true)
            .await
            .unwrap_err();
        eprintln!("llmock {kind}: {err}");
        assert!(
            err.is_transport() || matches!(err, toolnexus::Error::Interrupted { .. }),
            "{kind}: {err:?}"
        );
        // every attempt was made (1 + 4 retries), then the client gave up with an error;
        // llmock's verdict counts the last attempt as accepted (it cannot see the error), so
        // it is printed for the record, not asserted
        let verdict = server.admin("GET", "/_llmock/verdict", &Value::Null).await;
        eprintln!("llmock verdict on {kind} forever: {verdict}");
        assert_eq!(verdict["attempts"], 5, "{verdict}");
    }
}

const FAKELLM_RULES: &str = r#"version: 1
rules:
  - name: confirm
    when:
      tool_result_contains: "booked flight"
    respond:
      content: "Your flight to Oslo is booked."
  - name: book
    when:
      tool_result_contains: "dry"
    respond:
      tool_calls:
        - name: book_flight
          arguments: {city: "Oslo"}
  - name: weather
    when:
      messages_contain: "weather"
    respond:
      tool_calls:
        - name: get_weather
          arguments: {city: "Oslo"}
"#;

fn fakellm(bin: &Path) -> (Server, RulesFile) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // next to the venv, one file per server
    let file = bin.join("..").join(format!(
        "fakellm-{}-{}.yaml",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::write(&file, FAKELLM_RULES).unwrap();
    let rules = RulesFile(file);
    let config = rules.0.to_string_lossy().into_owned();
    let server = Server::start(
        &bin.join("fakellm"),
        &["serve", "--config", &config],
        "/_fakellm/stats",
    );
    (server, rules)
}

const PROMPT: &str = "What is the weather in Oslo? If it is dry, book me a flight there.";

#[tokio::test]
async fn fakellm_runs_the_approval_flow_streamed_and_not() {
    let Some(bin) = mocks_bin("fakellm approval flow") else {
        return;
    };
    let (server, _dir) = fakellm(&bin);
    for streamed in [false, true] {
        let approvals = Arc::new(AtomicUsize::new(0));
        let provider = HttpProvider::openai(format!("{}/v1", server.url()))
            .header(
                "x-fakellm-conversation-id",
                if streamed {
                    "streamed-run"
                } else {
                    "whole-run"
                },
            )
            .build()
            .unwrap();
        let client = approving_client(provider, &approvals);
        let result = run(&client, PROMPT, streamed).await.unwrap();
        assert_eq!(result.status, RunStatus::Done, "streamed: {streamed}");
        assert_eq!(result.text, "Your flight to Oslo is booked.");
        let names: Vec<&str> = result.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "book_flight"]);
        assert_eq!(result.tool_calls[0].output, "12°C, cloudy and dry in Oslo");
        assert_eq!(booking(&result), Some("booked flight AI-503 to Oslo"));
        assert_eq!(approvals.load(Ordering::SeqCst), 1);
        assert_eq!(result.turns, 3);
    }
}

/// Runs the `openai_compatible` example (built by cargo) against `base_url`.
fn run_example(base_url: &str, prompt: &str) -> String {
    let output = Command::new(env!("CARGO"))
        .current_dir(repo())
        .args([
            "run",
            "-q",
            "-p",
            "toolnexus-examples",
            "--features",
            "http",
            "--example",
            "openai_compatible",
            "--",
            "--yes",
            prompt,
        ])
        .env("TOOLNEXUS_BASE_URL", base_url)
        .env("TOOLNEXUS_API_KEY", "mock-key-anything")
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the example failed against {base_url}:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_openai_compatible_example_runs_against_each_mock() {
    let Some(bin) = mocks_bin("openai_compatible example") else {
        return;
    };
    let llmock = Server::start(&bin.join("llmock"), &["serve"], "/health");
    let out = run_example(&format!("{}/v1", llmock.url()), "Book a flight to Oslo.");
    assert!(
        out.contains("[approval] Book a flight to mock-city? -> yes (--yes)"),
        "{out}"
    );
    assert!(
        out.contains("[tool result] book_flight: booked flight AI-503 to mock-city"),
        "{out}"
    );
    assert!(out.contains("status done"), "{out}");

    let (fakellm, _dir) = fakellm(&bin);
    let out = run_example(&format!("{}/v1", fakellm.url()), PROMPT);
    assert!(
        out.contains("[tool result] get_weather: 12°C, cloudy and dry in Oslo"),
        "{out}"
    );
    assert!(
        out.contains("[tool result] book_flight: booked flight AI-503 to Oslo"),
        "{out}"
    );
    assert!(out.contains("Your flight to Oslo is booked."), "{out}");
    assert!(out.contains("status done, 3 turns, 2 tool calls"), "{out}");
}

/// The rules file of one fakellm server, removed when dropped.
struct RulesFile(PathBuf);

impl Drop for RulesFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
