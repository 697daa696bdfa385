//! Email notifications end to end, with a real SMTP server on 127.0.0.1 (`scripts/smtp.sh`:
//! aiosmtpd, writing each message it receives to a folder): a run parks; the worker's
//! deliverer emails the approver (plain text and HTML, the signed link in both); the test
//! reads the mail, follows its link to the answer page served on 127.0.0.1, answers through
//! it, and the worker resumes the run.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt as _;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;
use toolnexus::CancellationToken;
use toolnexus::inbox::Inbox;
use toolnexus::notify::{Deliverer, EmailNotifier};
use toolnexus::store::{NotificationState, RunStore, SqliteStore};
use toolnexus::worker::Worker;
use toolnexus_tests::inbox_support::LINK_KEY;
use toolnexus_tests::store_conformance::Agent;

/// The SMTP server's URL and mail folder, from `scripts/smtp.sh start`; `None` (skipped, with
/// a notice) without them, a failure under CI=true.
fn smtp() -> Option<(String, std::path::PathBuf)> {
    match (
        std::env::var("TOOLNEXUS_SMTP_URL"),
        std::env::var("TOOLNEXUS_SMTP_DIR"),
    ) {
        (Ok(url), Ok(dir)) if !url.is_empty() => Some((url, dir.into())),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => panic!(
            "TOOLNEXUS_SMTP_URL is not set, but CI=true: .ci/run starts the SMTP server with scripts/smtp.sh"
        ),
        _ => {
            toolnexus_tests::skip::skipped(
                "inbox::email",
                "an SMTP server",
                "TOOLNEXUS_SMTP_URL is not set; eval \"$(scripts/smtp.sh start)\" to run them",
            );
            None
        }
    }
}

/// Decodes a quoted-printable body (soft line breaks, `=XX` escapes).
fn unquote(text: &str) -> String {
    let joined = text.replace("=\r\n", "").replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'='
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&joined[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).expect("utf-8")
}

/// The mail whose `Message-ID` is the notification `id`'s, waiting up to 15 s for it.
async fn mail_of(dir: &std::path::Path, id: &str) -> String {
    let message_id = format!("Message-ID: <{id}@toolnexus>");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        for entry in std::fs::read_dir(dir).expect("the mail folder") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "eml") {
                let text = std::fs::read_to_string(&path).expect("a mail");
                if text.lines().any(|l| l.eq_ignore_ascii_case(&message_id)) {
                    return text;
                }
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no mail with {message_id} arrived"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The mail's checks (the subject, the recipient, plain text and HTML parts, the link in
/// both); returns the link of its plain part, which must open `request_id`'s page under
/// `base`.
fn link_in(mail: &str, base: &str, request_id: &str) -> String {
    assert!(
        mail.contains("Subject: Waiting for you: What is your name?"),
        "{mail}"
    );
    assert!(mail.contains("To: alice@example.com"), "{mail}");
    assert!(mail.contains("multipart/alternative"), "{mail}");
    assert!(mail.contains("Content-Type: text/plain"), "{mail}");
    assert!(mail.contains("Content-Type: text/html"), "{mail}");
    assert!(
        !mail.contains("Content-Transfer-Encoding: base64"),
        "{mail}"
    );
    let text = unquote(mail);
    let prefix = format!("Open the request: {base}/r/{request_id}?");
    let link = text
        .lines()
        .find_map(|l| l.strip_prefix("Open the request: "))
        .expect("the plain part has the link")
        .trim()
        .to_owned();
    assert!(
        format!("Open the request: {link}").starts_with(&prefix),
        "{link}"
    );
    assert!(
        text.contains(&format!(
            "<a href=\"{}\">Open the request</a>",
            link.replace('&', "&amp;")
        )),
        "the HTML part has the link: {text}"
    );

    link
}

/// Waits until the request's JSON says the email `id` went out (recorded once the server
/// took it), at most 10 s.
async fn delivered_per_api(
    http: &HttpClient<HttpConnector, Body>,
    base: &str,
    request_id: &str,
    query: &str,
    id: &str,
) {
    // the request's JSON says the email went out (recorded once the server took it)
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let uri = format!("{base}/api/requests/{request_id}?{query}");
        let res = http
            .get(uri.parse().unwrap())
            .await
            .expect("the API answers");
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let n = &v["notifications"][0];
        if n["state"] == "delivered" {
            assert_eq!(
                (n["id"].as_str(), n["notifier"].as_str()),
                (Some(id), Some("email"))
            );
            assert_eq!(n["attempts"], 1);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The parked approval's email arrives once (plain text and HTML, the link in both); its
/// link opens the request's page, the answer given through it resumes the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_email_link_opens_the_request_and_its_answer_resumes_the_run() {
    let Some((smtp_url, mail_dir)) = smtp() else {
        return;
    };
    let path = std::env::temp_dir().join(format!("toolnexus-email-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let store: Arc<dyn RunStore> = Arc::new(
        SqliteStore::open(&path)
            .await
            .unwrap()
            .with_notifiers(["email"])
            .unwrap(),
    );
    let inbox = Inbox::builder(store.clone())
        .signed_links(LINK_KEY.to_vec())
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/inbox", listener.local_addr().unwrap());
    let app = axum::Router::new().nest("/inbox", inbox.router());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let email = EmailNotifier::builder(smtp_url)
        .from("toolnexus <bot@example.com>")
        .to("alice@example.com")
        .build()
        .unwrap();
    let links = {
        let (inbox, base) = (inbox.clone(), base.clone());
        move |id: &str| {
            inbox
                .link(id, Duration::from_secs(3600))
                .map(|l| format!("{base}{l}"))
        }
    };
    let deliverer = Deliverer::builder(store.clone())
        .notifier("email", Arc::new(email))
        .links(links)
        .poll(Duration::from_millis(50))
        .build();
    let agent = Agent {
        kind: "approval".to_owned(),
        ..Agent::once()
    };
    let worker = Worker::builder(store.clone(), agent.client(), Agent::toolkit())
        .poll(Duration::from_millis(50))
        .deliverer(deliverer)
        .build();
    let stop = CancellationToken::new();
    let running = tokio::spawn({
        let (worker, stop) = (worker.clone(), stop.clone());
        async move { worker.run(stop.cancelled_owned()).await }
    });

    let info = store.park(agent.halt().await).await.unwrap();
    let id = format!("{}.parked.email", info.request_id);
    let link = link_in(&mail_of(&mail_dir, &id).await, &base, &info.request_id);

    // the link opens the page
    let http: HttpClient<HttpConnector, Body> =
        HttpClient::builder(TokioExecutor::new()).build(HttpConnector::new());
    let page = http
        .get(link.parse().unwrap())
        .await
        .expect("the page answers");
    assert_eq!(page.status(), 200);
    let html = page.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&html).contains("What is your name?"));
    let (_, query) = link.split_once('?').unwrap();
    delivered_per_api(&http, &base, &info.request_id, query, &id).await;
    // and answers the request, by its signature
    let answer = axum::http::Request::post(format!(
        "{base}/api/requests/{}/answer?{query}",
        info.request_id
    ))
    .header("content-type", "application/json")
    .body(Body::from(json!({"ok": true}).to_string()))
    .unwrap();
    let recorded = http.request(answer).await.expect("the answer is taken");
    assert_eq!(recorded.status(), 202);
    let done = store
        .wait_finished(&info.run_id, Duration::from_secs(15))
        .await
        .unwrap()
        .expect("the worker resumes the run");
    assert_eq!(done.result.unwrap().text, "done: hello null");
    let ns = store
        .outbox()
        .unwrap()
        .notifications(&info.run_id)
        .await
        .unwrap();
    assert_eq!((ns.len(), ns[0].state), (1, NotificationState::Delivered));
    stop.cancel();
    let _ = running.await;
    server.abort();
    let _ = std::fs::remove_file(&path);
}
