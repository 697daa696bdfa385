//! The inbox in a real browser: headless Chromium, driven over WebDriver (chromedriver +
//! fantoccini), against the router served on 127.0.0.1. Screenshots of every page go to
//! `target/inbox-screenshots/`.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`scripts/chromium.sh` installs them; or set
//! `TOOLNEXUS_CHROMIUM` / `TOOLNEXUS_CHROMEDRIVER`). Without them the test prints a notice and
//! passes, except under `CI=true`, where it fails.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client as Browser, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Map, json};
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, approval_args, trip_args};

fn tool(var: &str, default: &str) -> Option<PathBuf> {
    let path = std::env::var_os(var).map_or_else(|| PathBuf::from(default), PathBuf::from);
    path.exists().then_some(path)
}

/// Chromium and chromedriver, or `None` (with a notice) when absent outside CI.
fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    let chromium = tool("TOOLNEXUS_CHROMIUM", "/usr/bin/chromium");
    let driver = tool("TOOLNEXUS_CHROMEDRIVER", "/usr/bin/chromedriver");
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            let msg = "inbox browser tests: /usr/bin/chromium or /usr/bin/chromedriver is missing \
                       (run scripts/chromium.sh, or set TOOLNEXUS_CHROMIUM / TOOLNEXUS_CHROMEDRIVER)";
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{msg}; CI=true needs them"
            );
            eprintln!("NOTICE: {msg}; skipping");
            None
        }
    }
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/inbox-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

async fn shot(b: &Browser, name: &str) {
    let png = b.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(shots().join(format!("{name}.png")), png).expect("write screenshot");
}

struct Driver {
    child: std::process::Child,
    profile: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

async fn start_browser(chromium: &Path, driver: &Path) -> (Browser, Driver) {
    let port = free_port();
    let child = std::process::Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let profile = std::env::temp_dir().join(format!(
        "toolnexus-inbox-chromium-{}-{port}",
        std::process::id()
    ));
    let driver = Driver {
        child,
        profile: profile.clone(),
    };
    // wait until chromedriver listens
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "chromedriver did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let args = [
        "--headless".to_owned(),
        "--no-sandbox".to_owned(),
        "--disable-gpu".to_owned(),
        "--disable-dev-shm-usage".to_owned(),
        "--disable-quic".to_owned(),
        "--no-first-run".to_owned(),
        "--disable-background-networking".to_owned(),
        "--disable-component-update".to_owned(),
        "--disable-sync".to_owned(),
        // a phone-sized window: the pages must read well on one
        "--window-size=420,900".to_owned(),
        format!("--user-data-dir={}", profile.display()),
    ];
    let mut caps = Map::new();
    caps.insert(
        "goog:chromeOptions".to_owned(),
        json!({"binary": chromium.to_string_lossy(), "args": args}),
    );
    let browser = ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a WebDriver session");
    (browser, driver)
}

async fn text(b: &Browser, css: &str) -> String {
    b.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .expect("text")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_in_headless_chromium() {
    let Some((chromium, driver)) = browser_tools() else {
        return;
    };
    let fx = Fixture::new().await;
    let expired = fx
        .park(json!({"kind": "approval", "prompt": "Restart the old cluster?", "expired": true}))
        .await;
    let approval = fx
        .park(approval_args("Deploy build 42 to production?"))
        .await;
    let input = fx.park(trip_args("Plan the trip to the conference")).await;
    let inbox = fx.inbox();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = axum::Router::new().nest("/inbox", inbox.router());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let (b, _driver) = start_browser(&chromium, &driver).await;
    let outcome = run_cases(&b, &fx, &inbox, &base, &input.id, &approval.id, &expired.id).await;
    let _ = b.close().await;
    server.abort();
    outcome.unwrap_or_else(|e| panic!("{e}"));
}

async fn run_cases(
    b: &Browser,
    fx: &Fixture,
    inbox: &toolnexus::inbox::Inbox,
    base: &str,
    input: &str,
    approval: &str,
    expired: &str,
) -> Result<(), String> {
    let e = |what: &str| {
        let what = what.to_owned();
        move |err: fantoccini::error::CmdError| format!("{what}: {err}")
    };
    // the list, newest first
    b.goto(&format!("{base}/inbox?admin=yes"))
        .await
        .map_err(e("open the list"))?;
    shot(b, "01-list").await;
    let rows = text(b, "tbody").await;
    let (i, a, x) = (
        rows.find("Plan the trip").ok_or("input listed")?,
        rows.find("Deploy build 42").ok_or("approval listed")?,
        rows.find("Restart the old cluster")
            .ok_or("expired listed")?,
    );
    if !(i < a && a < x) {
        return Err(format!("not newest first: {rows}"));
    }
    if !rows.contains("expired") {
        return Err(format!("the expired one is not marked: {rows}"));
    }

    // the input request, from its link on the list
    b.find(Locator::LinkText("Plan the trip to the conference"))
        .await
        .map_err(e("input link"))?
        .click()
        .await
        .map_err(e("click"))?;
    shot(b, "02-input").await;
    assert_eq!(text(b, ".prompt").await, "Plan the trip to the conference");
    assert_eq!(text(b, "#i-f\\.city-help").await, "Where to.");

    // a wrong value: the message, nothing resumed
    b.find(Locator::Css("#i-f\\.city"))
        .await
        .map_err(e("city"))?
        .send_keys("Oslo")
        .await
        .map_err(e("type"))?;
    b.find(Locator::Css("#i-f\\.nights"))
        .await
        .map_err(e("nights"))?
        .send_keys("three")
        .await
        .map_err(e("type"))?;
    b.find(Locator::Css("button[value=accept]"))
        .await
        .map_err(e("submit"))?
        .click()
        .await
        .map_err(e("click"))?;
    shot(b, "03-input-wrong-value").await;
    assert_eq!(
        text(b, ".error").await,
        "`nights` must be a whole number, not `three`"
    );
    assert_eq!(fx.retries(), 0);

    // the right value: the run's final text
    let nights = b
        .find(Locator::Css("#i-f\\.nights"))
        .await
        .map_err(e("nights"))?;
    nights.clear().await.map_err(e("clear"))?;
    nights.send_keys("3").await.map_err(e("type"))?;
    b.find(Locator::Css("#i-f\\.seat option[value=window]"))
        .await
        .map_err(e("seat"))?
        .click()
        .await
        .map_err(e("select"))?;
    b.find(Locator::Css("#i-f\\.bags"))
        .await
        .map_err(e("bags"))?
        .click()
        .await
        .map_err(e("check"))?;
    b.find(Locator::Css("button[value=accept]"))
        .await
        .map_err(e("submit"))?
        .click()
        .await
        .map_err(e("click"))?;
    shot(b, "04-input-done").await;
    assert_eq!(
        text(b, "#outcome").await,
        r#"final: answered: {"city":"Oslo","nights":3,"seat":"window","bags":true}"#
    );
    assert_eq!(fx.retries(), 1);

    // an approval: Approve
    b.goto(&format!(
        "{base}/inbox{}",
        inbox
            .link(approval, Duration::from_secs(600))
            .ok_or("link")?
    ))
    .await
    .map_err(e("open the approval"))?;
    shot(b, "05-approval").await;
    b.find(Locator::Css("button[value=accept]"))
        .await
        .map_err(e("approve"))?
        .click()
        .await
        .map_err(e("click"))?;
    shot(b, "06-approval-done").await;
    assert_eq!(text(b, "#outcome").await, "final: answered: null");
    let run = fx
        .store
        .get_by_request(approval)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("run")?;
    assert_eq!(run.info.state, RunState::Finished);

    // an expired one: shown as expired, no form
    b.goto(&format!(
        "{base}/inbox{}",
        inbox
            .link(expired, Duration::from_secs(600))
            .ok_or("link")?
    ))
    .await
    .map_err(e("open the expired one"))?;
    shot(b, "07-expired").await;
    assert_eq!(text(b, "h1").await, "Expired");
    assert_eq!(
        text(b, ".notice").await,
        "This request has expired; it can no longer be answered."
    );
    if b.find(Locator::Css("form")).await.is_ok() {
        return Err("the expired page has a form".to_owned());
    }

    // a forged link
    let good = inbox.link(input, Duration::from_secs(600)).ok_or("link")?;
    let forged = format!("{}0000", &good[..good.len() - 4]);
    b.goto(&format!("{base}/inbox{forged}"))
        .await
        .map_err(e("open the forged link"))?;
    shot(b, "08-forged-link").await;
    assert_eq!(
        text(b, ".error").await,
        "This link is not valid: its signature does not match."
    );
    if b.find(Locator::Css("form")).await.is_ok() {
        return Err("the forged page has a form".to_owned());
    }
    Ok(())
}
