//! A reconcile request in headless Chromium, at a phone's width and a desktop's: the call that
//! was cut off in words, each choice saying what it does, what Decline does, the prompt
//! without Markdown's marks; then, with no worker on the store, the page says the answer is
//! recorded and no worker has taken it up. Screenshots `20-reconcile*`, `21-reconcile-*`.

use std::sync::Arc;
use std::time::Duration;

use fantoccini::Locator;
use toolnexus::inbox::Inbox;
use toolnexus::store::{RunStore, SqliteStore};
use toolnexus_tests::store_conformance::{CrashCut, assert_reconcile};

use super::{browser_tools, serve_inbox, shot, start_browser};

/// A SQLite store (its file) with a run whose `pay` call a crash cut, parked on its
/// reconcile request.
async fn parked_reconcile() -> (Arc<dyn RunStore>, toolnexus::Request, std::path::PathBuf) {
    let lease = Duration::from_millis(200);
    let path = std::env::temp_dir().join(format!(
        "toolnexus-inbox-browser-reconcile-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let store: Arc<dyn RunStore> =
        Arc::new(SqliteStore::open(&path).await.unwrap().with_lease(lease));
    let tools = CrashCut::new();
    let taken = tools.crash_inside_pay(&store, lease).await;
    let parked = CrashCut::client()
        .resume_claim(store.as_ref(), &taken, &tools.toolkit)
        .await
        .unwrap();
    let key = tools.keys.lock().unwrap()[0].clone();
    let request = assert_reconcile(&parked, &key);
    assert!(request.prompt.contains("`pay`"), "{}", request.prompt);
    (store, request, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_request_reads_in_plain_words() {
    let Some((chromium, driver)) = browser_tools() else {
        return;
    };
    let (store, request, path) = parked_reconcile().await;

    let inbox = Inbox::builder(Arc::clone(&store))
        .signed_links(toolnexus_tests::inbox_support::LINK_KEY.to_vec())
        .build()
        .unwrap();
    let (base, server) = serve_inbox(&inbox).await;
    let (browser, _driver) = start_browser(&chromium, &driver).await;
    let link = inbox.link(&request.id, Duration::from_secs(600)).unwrap();

    let cases = async {
        let b = &browser;
        let text = |css: &'static str| async move {
            b.find(Locator::Css(css))
                .await
                .unwrap_or_else(|e| panic!("{css}: {e}"))
                .text()
                .await
                .unwrap()
        };
        b.goto(&format!("{base}/inbox{link}")).await.unwrap();
        shot(b, "20-reconcile").await;
        assert_eq!(text("h1").await, "Needs a decision on an interrupted call");
        // the prompt: the tool's name as code, never a backtick on the page
        let prompt = text(".prompt").await;
        assert!(!prompt.contains('`'), "{prompt}");
        assert_eq!(text(".prompt code").await, "pay");
        // the call that was cut off, not "what will run"
        let section = text("section.run").await;
        assert!(
            section.starts_with("The call that was cut off: Pay pay\n"),
            "{section}"
        );
        assert!(
            section.contains("may or may not have taken effect"),
            "{section}"
        );
        assert!(!section.contains("What will run"), "{section}");
        // each choice in words, none chosen for the person
        let mut options = Vec::new();
        for o in b
            .find_all(Locator::Css("select[name='f.action'] option"))
            .await
            .unwrap()
        {
            options.push(o.text().await.unwrap());
        }
        assert_eq!(
            options,
            [
                "Choose…",
                "Run it again",
                "Record what happened",
                "Fail the call"
            ]
        );
        let help = text("[id='i-f.action-help']").await;
        assert!(
            help.starts_with("Run it again: the call runs once more"),
            "{help}"
        );
        assert!(
            help.contains("Fail the call: the call is not run again"),
            "{help}"
        );
        assert_eq!(
            text("#decline-help").await,
            "Decline: the call is not run again and fails as declined; the assistant reads that you declined."
        );
        b.set_window_size(1280, 900).await.unwrap();
        shot(b, "20-reconcile-desktop").await;
        b.set_window_size(420, 900).await.unwrap();

        record_with_no_worker(b).await;
    };
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(cases)).await;
    let _ = browser.close().await;
    server.abort();
    let _ = std::fs::remove_file(&path);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Records what happened: with no worker on this store, the page says so.
async fn record_with_no_worker(b: &fantoccini::Client) {
    let text = |css: &'static str| async move {
        b.find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .text()
            .await
            .unwrap()
    };
    {
        b.find(Locator::Css("select[name='f.action'] option[value=record]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        b.find(Locator::Css("[name='f.output']"))
            .await
            .unwrap()
            .send_keys("paid by hand")
            .await
            .unwrap();
        b.find(Locator::Css("button[value=accept]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        shot(b, "21-reconcile-no-worker").await;
        assert_eq!(
            text("#recorded").await,
            "Answered; no worker has taken it up. No worker has been seen."
        );
        b.set_window_size(1280, 900).await.unwrap();
        shot(b, "21-reconcile-no-worker-desktop").await;
        b.set_window_size(420, 900).await.unwrap();
    }
}
