//! Chromium and chromedriver for the browser tests: finding them, starting a session at a
//! phone's width, and screenshots into `target/inbox-screenshots/`.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client as Browser, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Map, json};

fn tool(var: &str, default: &str) -> Option<PathBuf> {
    let path = std::env::var_os(var).map_or_else(|| PathBuf::from(default), PathBuf::from);
    path.exists().then_some(path)
}

/// Chromium and chromedriver, or `None` (with a notice) when absent outside CI.
pub(super) fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    let chromium = tool("TOOLNEXUS_CHROMIUM", "/usr/bin/chromium");
    let driver = tool("TOOLNEXUS_CHROMEDRIVER", "/usr/bin/chromedriver");
    if let (Some(c), Some(d)) = (chromium, driver) {
        return Some((c, d));
    }
    let msg = "inbox browser tests: /usr/bin/chromium or /usr/bin/chromedriver is missing \
               (run scripts/chromium.sh, or set TOOLNEXUS_CHROMIUM / TOOLNEXUS_CHROMEDRIVER)";
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{msg}; CI=true needs them"
    );
    toolnexus_tests::skip::skipped(
        "browser::the_inbox_in_headless_chromium",
        "Chromium and chromedriver",
        "run scripts/chromium.sh, or set TOOLNEXUS_CHROMIUM / TOOLNEXUS_CHROMEDRIVER",
    );
    None
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

pub(super) async fn shot(b: &Browser, name: &str) {
    let png = b.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(shots().join(format!("{name}.png")), png).expect("write screenshot");
}

pub(super) struct Driver {
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

pub(super) async fn start_browser(chromium: &Path, driver: &Path) -> (Browser, Driver) {
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

/// `inbox` served at `/inbox` on a free port of 127.0.0.1: the base URL and the server's task.
pub(super) async fn serve_inbox(
    inbox: &toolnexus::inbox::Inbox,
) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().nest("/inbox", inbox.router());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    (base, server)
}
