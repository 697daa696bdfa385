//! A request that needs two approvals, with one given, in headless Chromium at a phone's
//! width and a desktop's: the page says 1 of 2, lists who approved and says one more is
//! needed. Screenshots `30-votes-one-of-two*`.

use std::sync::Arc;
use std::time::Duration;

use fantoccini::Locator;
use serde_json::json;
use toolnexus::inbox::Inbox;
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY, governed_args};

use super::{browser_tools, serve_inbox, shot, start_browser};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_one_of_two_approvals_lists_the_votes() {
    let Some((chromium, driver)) = browser_tools() else {
        return;
    };
    let fx = Fixture::without_worker().await;
    let request = fx
        .park_for("alice", governed_args("Pay 4,000 EUR to ACME Corp?", 2))
        .await;
    fx.store
        .submit(&request.accept(json!({})), "bob@example.com")
        .await
        .unwrap();
    let inbox = Inbox::builder(Arc::clone(&fx.store))
        .signed_links(LINK_KEY.to_vec())
        .build()
        .unwrap();
    let (base, server) = serve_inbox(&inbox).await;
    let (browser, _driver) = start_browser(&chromium, &driver).await;
    let link = inbox.link(&request.id, Duration::from_secs(600)).unwrap();

    let cases = async {
        let b = &browser;
        b.goto(&format!("{base}/inbox{link}")).await.unwrap();
        let section = b
            .find(Locator::Css("section#approvals"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(section.starts_with("Approvals: 1 of 2\n"), "{section}");
        assert!(section.contains("bob@example.com approved"), "{section}");
        assert!(section.contains("1 more approval needed"), "{section}");
        // the page still offers the approval to the next person
        assert!(
            b.find(Locator::Css("button[value='accept']")).await.is_ok(),
            "an Approve button"
        );
        shot(b, "30-votes-one-of-two").await;
        b.set_window_size(1280, 900).await.unwrap();
        shot(b, "30-votes-one-of-two-desktop").await;
        b.set_window_size(420, 900).await.unwrap();
    };
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(cases)).await;
    let _ = browser.close().await;
    server.abort();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
