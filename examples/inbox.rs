//! A small approval desk: an answer page and a worker over one SQLite file.
//!
//! ```sh
//! cargo run -p toolnexus-examples --features inbox --example inbox                  # serves until stopped
//! cargo run -p toolnexus-examples --features inbox --example inbox -- --exit-after 2 # CI: checks itself, stops
//! ```
//!
//! Three runs halt on their requests (a trip form, an approval, a question) and park in a
//! SQLite file. The inbox router is mounted at `/inbox` in an axum app on 127.0.0.1, and a
//! [`Worker`] runs beside it; the example prints the list's URL (with an admin token the
//! host's check accepts) and a signed link per request. Answer one in the browser: the page
//! records the answer and returns at once ("Recorded. The assistant is continuing."), the
//! worker resumes the run, and the status page shows its final text. The two halves only share
//! the file: the page could run on a web server and the worker on another machine (with
//! `PostgresStore` for many machines). Flags: `--addr <ip:port>` (default 127.0.0.1:3000),
//! `--db <path>` (default a fresh file in the temp dir), `--exit-after <seconds>` (answers the
//! approval through the JSON API, prints its outcome and the history's entry, stops). The
//! client names its agent (`offsite-planner`): the pages show who is asking, and the history
//! (`/inbox/history`) who answered what, when, and how each run went on.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus::worker::Worker;
use toolnexus::{
    CancellationToken, Client, FnModel, Form, ModelRequest, Reply, Role, Suspension, Toolkit, ask,
    tool,
};

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
        .agent_name("offsite-planner")
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
    // the web tier: records answers, never runs the model
    let inbox = Inbox::builder(store.clone())
        .signed_links(random_hex()?.into_bytes())
        .authorize(move |parts, target| {
            matches!(target, Target::List | Target::History)
                && parts
                    .uri
                    .query()
                    .is_some_and(|q| q.split('&').any(|p| p == admin_query))
        })
        .title("Team requests")
        .build()?;
    let app = axum::Router::new().nest("/inbox", inbox.router());

    // the worker: resumes answered runs, expires requests on time, takes over dead workers'
    let stop = CancellationToken::new();
    let worker = Worker::builder(store.clone(), client.clone(), toolkit.clone())
        .name("desk-worker")
        .build();
    let working = tokio::spawn({
        let stop = stop.clone();
        async move { worker.run(stop.cancelled_owned()).await }
    });

    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    let addr = listener.local_addr()?;
    println!(
        "inbox over {} ({} parked runs)",
        args.db.display(),
        parked.len()
    );
    println!("list:    http://{addr}/inbox?token={admin}");
    println!("history: http://{addr}/inbox/history?token={admin}");
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
            let deploy = parked
                .iter()
                .find(|r| r.kind == "approval")
                .ok_or("no approval parked")?;
            let link = inbox
                .link(&deploy.id, Duration::from_secs(600))
                .ok_or("no signed link")?;
            self_check(addr, &admin, &link).await?;
            tokio::time::sleep(after).await;
            serving.abort();
            println!("stopped after {after:?}");
        }
    }
    stop.cancel();
    let stats = working.await?;
    println!(
        "worker: {} runs resumed, {} failed, {} in flight at the end",
        stats.finished, stats.failed, stats.in_flight
    );
    let _ = std::fs::remove_file(&args.db);
    Ok(())
}

/// A self-check for CI: the list answers 200 to the admin and 403 to anyone else; the
/// approval at `link`, approved through the JSON API, is recorded at once (202) and its
/// status shows the outcome once the worker resumed the run.
async fn self_check(
    addr: SocketAddr,
    admin: &str,
    link: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let (admin_status, _) = http(addr, "GET", &format!("/inbox?token={admin}"), None).await?;
    let (anonymous_status, _) = http(addr, "GET", "/inbox", None).await?;
    println!("self-check: GET /inbox?token=… -> {admin_status}, GET /inbox -> {anonymous_status}");
    if admin_status != 200 || anonymous_status != 403 {
        return Err("the inbox did not answer as expected".into());
    }
    let (path, query) = link.split_once('?').ok_or("a signed link has a query")?;
    let id = path.trim_start_matches("/r/");
    let answer = format!("/inbox/api/requests/{id}/answer?{query}");
    let (code, body) = http(addr, "POST", &answer, Some(r#"{"ok":true}"#)).await?;
    let recorded: serde_json::Value = serde_json::from_str(&body)?;
    println!(
        "self-check: POST the approval -> {code} {}",
        recorded["status"]
    );
    // the status link follows the mount point (`/inbox/api/requests/…/status?run=…`)
    let status = recorded["statusLink"]
        .as_str()
        .ok_or("the answer names its status link")?;
    for _ in 0..200 {
        let (_, body) = http(addr, "GET", status, None).await?;
        let progress: serde_json::Value = serde_json::from_str(&body)?;
        if let Some(text) = progress["outcome"]["text"].as_str() {
            println!(
                "self-check: answered by {}, resumed by the worker: {text}",
                progress["answeredBy"]
            );
            // the history lists it, with who asked and who answered
            let (_, body) = http(
                addr,
                "GET",
                &format!("/inbox/api/history?token={admin}"),
                None,
            )
            .await?;
            let history: serde_json::Value = serde_json::from_str(&body)?;
            let run = &history["runs"][0];
            println!(
                "self-check: history: {} asked, {} {} it, the run is {}",
                run["agent"], run["answeredBy"], run["decision"], run["state"]
            );
            if run["decision"] != "approved" || run["agent"] != "offsite-planner" {
                return Err("the history does not show the approval".into());
            }
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err("the worker did not resume the approved run".into())
}

/// `method path` with an optional JSON body (HTTP/1.1 over a plain socket): the status code
/// and the body.
async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    json: Option<&str>,
) -> std::io::Result<(u16, String)> {
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let body = json.unwrap_or("");
    let content = if json.is_some() {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        )
    } else {
        String::new()
    };
    s.write_all(
        format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{content}Connection: close\r\n\r\n{body}"
        )
        .as_bytes(),
    )
    .await?;
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).await?;
    let reply = String::from_utf8_lossy(&reply);
    let code = reply
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let body = reply
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Ok((code, body))
}
