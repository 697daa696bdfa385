//! The answer page: runs parked in a SQLite store, answered from a browser.
//!
//! ```sh
//! cargo run -p toolnexus-examples --example inbox                  # serves until stopped
//! cargo run -p toolnexus-examples --example inbox -- --exit-after 2 # CI: checks itself, stops
//! ```
//!
//! Three runs halt on their requests (a trip form, an approval, a question) and park in a
//! SQLite file. The inbox router is mounted at `/inbox` in an axum app on 127.0.0.1; the
//! example prints the list's URL (with an admin token the host's check accepts) and a signed
//! link per request. Answer one in the browser: the run resumes and the page shows its final
//! text. Flags: `--addr <ip:port>` (default 127.0.0.1:3000), `--db <path>` (default a fresh
//! file in the temp dir), `--exit-after <seconds>`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus::{Client, FnModel, Form, ModelRequest, Reply, Role, Suspension, Toolkit, ask, tool};

/// The answer form of `plan_trip`.
#[derive(Form, serde::Deserialize)]
struct Trip {
    /// The city to fly to.
    city: String,
    /// How many nights to stay.
    nights: u8,
    /// A window seat?
    window_seat: Option<bool>,
}

/// Plans a trip: asks the traveller where to and for how long.
#[tool]
fn plan_trip(ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let trip = ask!(ctx, input "Where shall the team offsite be?", schema = Trip);
    let seat = if trip.window_seat == Some(true) {
        ", window seat"
    } else {
        ""
    };
    Ok(format!(
        "booked {} nights in {}{seat}",
        trip.nights, trip.city
    ))
}

/// Deploys a build, once a human approves.
#[tool]
fn deploy(
    /// The build number.
    build: u32,
    ctx: &toolnexus::Context,
) -> Result<String, Suspension> {
    let () = ask!(ctx, approval format!("Deploy build {build} to production?"));
    Ok(format!("build {build} deployed"))
}

/// The in-process model: calls the tool the prompt names, then reports the tool's output.
async fn model(req: ModelRequest) -> Reply {
    let last = req.messages.last().cloned();
    match last {
        Some(m) if m.role == Role::Tool => {
            Reply::text(format!("Done: {}", m.content.unwrap_or_default()))
        }
        Some(m) => match m.content.as_deref() {
            Some("plan") => Reply::tool_call("plan_trip", json!({})),
            Some("deploy") => Reply::tool_call("deploy", json!({"build": 42})),
            _ => Reply::tool_call(
                "question",
                json!({"questions": [
                    {"question": "Which lunch?", "options": ["pasta", "salad"]},
                    {"question": "Which drinks?", "options": ["water", "juice", "coffee"], "multiple": true}
                ]}),
            ),
        },
        None => Reply::text("nothing to do"),
    }
}

struct Args {
    addr: SocketAddr,
    db: PathBuf,
    exit_after: Option<Duration>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
        db: std::env::temp_dir().join(format!(
            "toolnexus-inbox-example-{}.sqlite",
            std::process::id()
        )),
        exit_after: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--addr" => args.addr = value()?.parse().map_err(|e| format!("--addr: {e}"))?,
            "--db" => args.db = PathBuf::from(value()?),
            "--exit-after" => {
                let secs: f64 = value()?.parse().map_err(|e| format!("--exit-after: {e}"))?;
                args.exit_after = Some(Duration::from_secs_f64(secs));
            }
            other => {
                return Err(format!(
                    "unknown flag `{other}` (flags: --addr, --db, --exit-after)"
                ));
            }
        }
    }
    Ok(args)
}

fn random_hex() -> Result<String, getrandom::Error> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)?;
    Ok(key.iter().fold(String::with_capacity(64), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(&args.db).await?);
    let toolkit = Toolkit::builder()
        .tool(PlanTrip)
        .tool(Deploy)
        .tool(toolnexus::question::QuestionTool::new())
        .build()?;
    let client = Client::builder(FnModel::new(model))
        .model_name("in-process")
        .store(store.clone())
        .build()?;

    // three runs halt and park themselves in the store
    let mut parked = Vec::new();
    for prompt in ["plan", "deploy", "lunch"] {
        let run = client.run(prompt, &toolkit).await?;
        parked.extend(run.pending);
    }

    // signed links for each request; the list for whoever brings the admin token
    let admin = random_hex()?;
    let admin_query = format!("token={admin}");
    let inbox = Inbox::builder(store.clone(), client.clone(), toolkit.clone())
        .signed_links(random_hex()?.into_bytes())
        .authorize(move |parts, target| {
            target == Target::List
                && parts
                    .uri
                    .query()
                    .is_some_and(|q| q.split('&').any(|p| p == admin_query))
        })
        .title("Team requests")
        .build();
    let app = axum::Router::new().nest("/inbox", inbox.router());

    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    let addr = listener.local_addr()?;
    println!(
        "inbox over {} ({} parked runs)",
        args.db.display(),
        parked.len()
    );
    println!("list:   http://{addr}/inbox?token={admin}");
    for request in &parked {
        if let Some(link) = inbox.link(&request.id, Duration::from_secs(24 * 3600)) {
            println!(
                "{:<7} http://{addr}/inbox{link}",
                format!("{}:", request.kind)
            );
        }
    }

    let server = axum::serve(listener, app);
    match args.exit_after {
        None => server.await?,
        Some(after) => {
            let serving = tokio::spawn(server.into_future());
            // a self-check for CI: the list answers 200 to the admin, 403 to anyone else
            let admin_status = status(addr, &format!("/inbox?token={admin}")).await?;
            let anonymous_status = status(addr, "/inbox").await?;
            println!(
                "self-check: GET /inbox?token=… -> {admin_status}, GET /inbox -> {anonymous_status}"
            );
            if admin_status != 200 || anonymous_status != 403 {
                return Err("the inbox did not answer as expected".into());
            }
            tokio::time::sleep(after).await;
            serving.abort();
            println!("stopped after {after:?}");
        }
    }
    let _ = std::fs::remove_file(&args.db);
    Ok(())
}

/// The status code of `GET path` (HTTP/1.1 over a plain socket).
async fn status(addr: SocketAddr, path: &str) -> std::io::Result<u16> {
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).await?;
    String::from_utf8_lossy(&head[9..12])
        .parse()
        .map_err(|_| std::io::Error::other("no status line"))
}
